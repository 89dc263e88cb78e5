/* driver/model/onnx_tensor.h -- ONNX tensors as the importer holds them.
 *
 * Every constant the importer sees (initializers, Constant nodes, and the
 * values of folded subgraphs) is a hetc_onnx_const_t: float32 or int64,
 * whatever ONNX type it was stored as, since those are the two types a CNN's
 * weights and shape arithmetic need. */
#ifndef HETC_DRIVER_MODEL_ONNX_TENSOR_H_
#define HETC_DRIVER_MODEL_ONNX_TENSOR_H_

#include <stddef.h>
#include <stdint.h>

#include "common/status.h"
#include "onnx.pb-c.h"

/* ONNX allows any rank; shape arithmetic and exported pixel shuffles stay
 * well inside this. */
#define HETC_ONNX_MAX_RANK 8

typedef struct hetc_onnx_const_t {
  int32_t is_int; /* 1: values in i (int64), 0: in f (float32) */
  int32_t rank;   /* 0 for a scalar */
  int64_t dims[HETC_ONNX_MAX_RANK];
  int64_t count; /* product of dims */
  float *f;      /* owned, count values, row-major */
  int64_t *i;    /* owned, count values, row-major */
} hetc_onnx_const_t;

/* Values one constant holds at most, an initializer or one computed at
 * import (api/limits.md): a CNN's largest weight (VGG's first classifier
 * layer) holds 102760448. A tiny file can ask for a huge constant
 * (ConstantOfShape of 40000x40000), so the bound is checked before the
 * memory is taken. */
#define HETC_ONNX_MAX_CONST_ELEMENTS (INT64_C(1) << 27)
/* Values all the constants computed at import hold together, at most. */
#define HETC_ONNX_MAX_FOLDED_ELEMENTS (INT64_C(1) << 28)

/* Allocates count zeroed values for a tensor of `rank` dims. Fails
 * (BAD_INPUT) on a negative dim, a rank above HETC_ONNX_MAX_RANK or more
 * than HETC_ONNX_MAX_CONST_ELEMENTS values. */
hetc_status_t hetc_onnx_const_alloc(hetc_onnx_const_t *c, int is_int, int32_t rank, const int64_t *dims);
void hetc_onnx_const_release(hetc_onnx_const_t *c);
/* c's dims as messages print them ("8,3,3,3"), cut to fit `size`. */
void hetc_onnx_const_dims_text(const hetc_onnx_const_t *c, char *out, size_t size);
/* Value k as a double / as an int64 (floats truncated toward zero). */
double hetc_onnx_const_get(const hetc_onnx_const_t *c, int64_t k);
int64_t hetc_onnx_const_get_int(const hetc_onnx_const_t *c, int64_t k);

/* Where a tensor's external data files are looked up. */
typedef struct hetc_onnx_file_t {
  const char *display_name; /* the model file, as messages name it */
  const char *base_dir;     /* its folder; external data must stay inside */
  /* Loading the shapes only: external float tensors of more than
   * HETC_ONNX_MAX_RANK values are left as zeros, unread. They are weights:
   * the float values the import's structure depends on are one value (a
   * clip bound, a pad value) or one per axis (resize scales). */
  int shapes_only;
} hetc_onnx_file_t;

/* Decodes a TensorProto: typed fields, raw_data (little-endian) or external
 * data in a file beside the model. Failures are BAD_INPUT with a bare
 * message (the caller prefixes the file and the tensor). *out_converted_from
 * is the ONNX type name when the values were converted to float32 with a
 * loss of range or precision the user should know of (float64), or widened
 * from float16/bfloat16; else NULL. */
hetc_status_t hetc_onnx_tensor_decode(const Onnx__TensorProto *tensor, const hetc_onnx_file_t *file,
                                      hetc_onnx_const_t *out, const char **out_converted_from);

/* ONNX's name of a TensorProto data type ("FLOAT", "INT64", ...). */
const char *hetc_onnx_type_name(int32_t data_type);

#endif /* HETC_DRIVER_MODEL_ONNX_TENSOR_H_ */
