/* driver/reference/reference.h -- the reference executor.
 *
 * Plain loops, one per op, that every kernel of every plugin is judged
 * against. Speed is not a goal; being obviously right is. Convolution and
 * dense accumulate in double so that the oracle is more accurate than the
 * fp32 kernels it judges.
 *
 * Two levels:
 * - hetc_reference_run_op takes tensors in any layout the ABI names. It
 *   converts non-row-major inputs to row-major scratch, runs the row-major
 *   kernel and converts the result to the output's layout, so every op is
 *   right in every layout by construction.
 * - hetc_reference_<op> are the row-major kernels. They read shapes from the
 *   workload, ignore its layouts (all data is row-major of the logical
 *   shape), check that the shapes are consistent and compute.
 */
#ifndef HETC_DRIVER_REFERENCE_REFERENCE_H_
#define HETC_DRIVER_REFERENCE_REFERENCE_H_

#include <stdint.h>

#include "common/status.h"
#include "hetc/plugin.h"

/* Runs one op of `workload` on host memory. inputs[i] are the activation
 * inputs laid out as workload->inputs[i].layout says (ROW_MAJOR, NCHWC with
 * block, or NHWC for 4-d tensors); params are logical row-major float32
 * (conv weight [Cout, Cin/groups, KH, KW], dense weight [units, K], bias
 * [C]); output is written in workload->output.layout, NCHWC padding channels
 * zeroed.
 * Applies the epilogue of conv2d/dense: out = act(acc + bias[c] + residual)
 * where the residual is the extra activation input inputs[num_inputs-1]
 * (has_residual), read in its own tensor's layout.
 * Returns NULL or a failure status (UNSUPPORTED for a combination not
 * handled, INVALID_ARGUMENT for inconsistent shapes, OUT_OF_MEMORY). */
hetc_status_t hetc_reference_run_op(const hetc_plugin_workload_t *workload,
                                    const float *const *inputs,
                                    const float *const *params, float *output);

/* batch_norm (not an ABI op): y = gamma*(x-mean)/sqrt(var+eps)+beta per
 * channel of a row-major NCHW tensor; spatial is H*W. */
void hetc_reference_batch_norm(int64_t n, int64_t c, int64_t spatial,
                               const float *x, const float *gamma,
                               const float *beta, const float *mean,
                               const float *var, float epsilon, float *y);

/* Element count a tensor occupies in its layout (NCHWC pads C up to a
 * multiple of block). -1 when the tensor is malformed (rank outside
 * 1..HETC_PLUGIN_MAX_RANK, a dim below 1, NCHWC/NHWC on a rank other than 4,
 * NCHWC with block < 1, an unknown layout kind, overflow). */
int64_t hetc_layout_element_count(const hetc_plugin_tensor_t *tensor);

/* Converts between layouts of the same logical 4-d shape (or any rank when
 * both are ROW_MAJOR), zero-filling NCHWC padding channels. src and dst must
 * not overlap. */
hetc_status_t hetc_layout_convert(const hetc_plugin_tensor_t *src_type,
                                  const float *src,
                                  const hetc_plugin_tensor_t *dst_type,
                                  float *dst);

/* Checks one tensor descriptor: float32, rank 1..6, dims >= 1, at most
 * 2^31 logical elements, a known layout valid for its rank. `what` names
 * the tensor in the message. */
hetc_status_t hetc_reference_check_tensor(const hetc_plugin_tensor_t *tensor,
                                          const char *what);

/* Logical (unpadded) element count; assumes a checked tensor. */
int64_t hetc_reference_logical_count(const hetc_plugin_tensor_t *tensor);

/* 1 when both tensors have the same rank and logical dims. */
int hetc_reference_same_shape(const hetc_plugin_tensor_t *a,
                              const hetc_plugin_tensor_t *b);

/* Output extent of a convolution along one axis (floor), or a value below 1
 * when the window does not fit. */
int64_t hetc_reference_conv_output_size(int64_t in, int64_t kernel,
                                        int64_t stride, int64_t dilation,
                                        int64_t pad_before, int64_t pad_after);

/* Output extent of a pooling along one axis with PyTorch's rounding: with
 * ceil_mode the extent rounds up, then drops a last window that would start
 * in the bottom/right padding. */
int64_t hetc_reference_pool_output_size(int64_t in, int64_t kernel,
                                        int64_t stride, int64_t pad_before,
                                        int64_t pad_after, int ceil_mode);

/* Checks kernel and strides positive, padding non-negative. */
hetc_status_t hetc_reference_check_window(const hetc_plugin_workload_t *workload,
                                          const char *op);

/* Checks the epilogue fields of conv2d/dense: flags 0 or 1, a known
 * activation, and num_inputs == 1 + has_residual. */
hetc_status_t hetc_reference_check_epilogue(
    const hetc_plugin_workload_t *workload, const char *op);

/* act(x) for a hetc_plugin_activation_t, computed in double. NONE is the
 * identity. */
double hetc_reference_activate(int32_t activation, double x);

/* ------------------------------------------------------------------------ */
/* Row-major kernels. Each checks the workload's shapes (INVALID_ARGUMENT)   */
/* and op fields (UNSUPPORTED for values it does not know) and computes.     */
/* ------------------------------------------------------------------------ */

/* bias is read when epilogue.has_bias, residual when has_residual. */
hetc_status_t hetc_reference_conv2d(const hetc_plugin_workload_t *workload,
                                    const float *x, const float *weight,
                                    const float *bias, const float *residual,
                                    float *y);
/* The two ways hetc_reference_conv2d computes, which give the same bits:
 * planes (any CPU, any weights) and register blocks (AVX2, finite
 * weights, a padding small enough to copy; UNSUPPORTED otherwise). EITHER
 * is hetc_reference_conv2d's choice, blocks where they can run. The
 * choice is for the test that holds the two to the bit. */
typedef enum hetc_reference_conv_way_t {
  HETC_REFERENCE_CONV_EITHER,
  HETC_REFERENCE_CONV_PLANES,
  HETC_REFERENCE_CONV_BLOCKED,
} hetc_reference_conv_way_t;
hetc_status_t hetc_reference_conv2d_by(hetc_reference_conv_way_t way, const hetc_plugin_workload_t *workload,
                                       const float *x, const float *weight, const float *bias,
                                       const float *residual, float *y);
hetc_status_t hetc_reference_dense(const hetc_plugin_workload_t *workload,
                                   const float *x, const float *weight,
                                   const float *bias, const float *residual,
                                   float *y);
/* max_pool2d and avg_pool2d. */
hetc_status_t hetc_reference_pool2d(const hetc_plugin_workload_t *workload,
                                    const float *x, float *y);
hetc_status_t hetc_reference_global_avg_pool2d(
    const hetc_plugin_workload_t *workload, const float *x, float *y);
/* Unary (b unused) or binary with b broadcast. */
hetc_status_t hetc_reference_elementwise(const hetc_plugin_workload_t *workload,
                                         const float *a, const float *b,
                                         float *y);
hetc_status_t hetc_reference_softmax(const hetc_plugin_workload_t *workload,
                                     const float *x, float *y);
hetc_status_t hetc_reference_concat(const hetc_plugin_workload_t *workload,
                                    const float *const *inputs, float *y);
hetc_status_t hetc_reference_transpose(const hetc_plugin_workload_t *workload, const float *x, float *y);
hetc_status_t hetc_reference_resize(const hetc_plugin_workload_t *workload, const float *x, float *y);
/* scale and bias: shape[axis] values each, read only with params.normalize.affine. */
hetc_status_t hetc_reference_normalize(const hetc_plugin_workload_t *workload, const float *x, const float *scale,
                                       const float *bias, float *y);
/* a [B..., M, K] and b [B..., K, N], row-major, into y [B..., M, N]. */
hetc_status_t hetc_reference_matmul(const hetc_plugin_workload_t *workload, const float *a, const float *b, float *y);
hetc_status_t hetc_reference_bias_add(const hetc_plugin_workload_t *workload,
                                      const float *x, const float *bias,
                                      float *y);

#endif /* HETC_DRIVER_REFERENCE_REFERENCE_H_ */
