/* driver/model/onnx_fold.h -- evaluating ONNX nodes whose inputs are all
 * constant, at import.
 *
 * Exporters compute Reshape's and Flatten's target shapes at run time from
 * the shape of an activation (Shape -> Gather -> Unsqueeze -> Concat), and
 * store some weights behind Cast or Transpose nodes. Activation shapes are
 * fixed once the input's is, so all of that is a constant by import time:
 * the importer evaluates it here and hands hetc's graph the results. */
#ifndef HETC_DRIVER_MODEL_ONNX_FOLD_H_
#define HETC_DRIVER_MODEL_ONNX_FOLD_H_

#include "model/onnx_tensor.h"

/* Whether hetc can evaluate op_type (default domain) on constant inputs. */
int hetc_onnx_foldable(const char *op_type);

/* Evaluates `node` (opset `opset`) on `inputs` (num_inputs entries; NULL for
 * an omitted optional input), writing node->n_output constants into
 * `outputs` (the caller's; released with hetc_onnx_const_release, also on
 * failure). `file` is for the tensors of Constant nodes. Failures are
 * BAD_INPUT with a bare message. */
hetc_status_t hetc_onnx_fold(const Onnx__NodeProto *node, int64_t opset, const hetc_onnx_file_t *file,
                             const hetc_onnx_const_t *const *inputs, int32_t num_inputs, hetc_onnx_const_t *outputs);

/* Reshape's target shape for an input of `in_rank` dims `in_dims`
 * (in_count values) and the constant `shape`: 0 copies the input's extent
 * (unless the node's allowzero is set), one -1 takes what is left. */
hetc_status_t hetc_onnx_reshape_dims(const Onnx__NodeProto *node, int32_t in_rank, const int64_t *in_dims,
                                     int64_t in_count, const hetc_onnx_const_t *shape, int64_t *out_dims,
                                     int32_t *out_rank);

/* Slice's ranges over a value of `rank` dims `in_dims`: from the node's
 * starts, ends, axes and steps (attributes before opset 10, else constant
 * inputs 1 to 4, NULL where omitted; inputs[0] is not read), each axis'
 * first index, step and extent (the caller's arrays of `rank` entries). */
hetc_status_t hetc_onnx_slice_ranges(const Onnx__NodeProto *node, int64_t opset, const hetc_onnx_const_t *const *inputs,
                                     int32_t num_inputs, int32_t rank, const int64_t *in_dims, int64_t *begin,
                                     int64_t *step, int64_t *dims);

/* axis in -rank .. rank - 1, made 0 .. rank - 1; BAD_INPUT ("axis A is
 * outside rank R") otherwise. */
hetc_status_t hetc_onnx_normalise_axis(int64_t *axis, int32_t rank);

/* Unsqueeze's or Squeeze's (node's op) result dims from in_dims, the axes
 * as the node gives them (attribute, or input 1 in inputs). */
hetc_status_t hetc_onnx_squeeze_dims(const Onnx__NodeProto *node, const hetc_onnx_const_t *const *inputs,
                                     int32_t num_inputs, int32_t in_rank, const int64_t *in_dims, int64_t *dims,
                                     int32_t *out_rank);

/* Expand's result dims: in_dims (in_rank of them) broadcast with the
 * shape `shape` holds (right-aligned, each pair equal or one of them 1),
 * at most max_rank; BAD_INPUT naming both otherwise. */
hetc_status_t hetc_onnx_broadcast_dims(const int64_t *in_dims, int32_t in_rank, const hetc_onnx_const_t *shape,
                                       int32_t max_rank, int64_t *out_dims, int32_t *out_rank);

/* Tile's result dims: in_dims times the repeats `repeats` holds (one
 * positive count per dim; BAD_INPUT otherwise). */
hetc_status_t hetc_onnx_tile_dims(const int64_t *in_dims, int32_t in_rank, const hetc_onnx_const_t *repeats,
                                  int64_t *out_dims);

#endif /* HETC_DRIVER_MODEL_ONNX_FOLD_H_ */
