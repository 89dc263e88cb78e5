#include "reference/reference.h"

hetc_status_t hetc_reference_dense(const hetc_plugin_workload_t *w,
                                   const float *x, const float *weight,
                                   const float *bias, const float *residual,
                                   float *y) {
  HETC_RETURN_IF_ERROR(hetc_reference_check_epilogue(w, "dense"));
  const hetc_plugin_tensor_t *in = &w->inputs[0], *out = &w->output;
  if (in->rank != 2 || out->rank != 2 || in->shape[0] != out->shape[0])
    return hetc_status_new(HETC_STATUS_INVALID_ARGUMENT,
                           "dense: input [N,K] and output [N,units] must be 2-d "
                           "with the same N");
  if (w->epilogue.has_residual &&
      !hetc_reference_same_shape(&w->inputs[w->num_inputs - 1], out))
    return hetc_status_new(HETC_STATUS_INVALID_ARGUMENT,
                           "dense: residual shape differs from the output's");
  int64_t N = in->shape[0], K = in->shape[1], U = out->shape[1];
  for (int64_t n = 0; n < N; ++n)
    for (int64_t u = 0; u < U; ++u) {
      double acc = 0.0;
      for (int64_t k = 0; k < K; ++k)
        acc += (double)x[n * K + k] * (double)weight[u * K + k];
      if (w->epilogue.has_bias) acc += bias[u];
      if (w->epilogue.has_residual) acc += residual[n * U + u];
      y[n * U + u] = (float)hetc_reference_activate(w->epilogue.activation, acc);
    }
  return NULL;
}
