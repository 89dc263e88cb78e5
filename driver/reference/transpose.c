/* The reference transpose: output dim d is input dim perm[d]. Written
 * apart from the plugin kit's (a plain loop over output coordinates) so
 * that the two check each other. */
#include "reference/reference.h"

hetc_status_t hetc_reference_transpose(const hetc_plugin_workload_t *w, const float *x, float *y) {
  const hetc_plugin_tensor_t *in = &w->inputs[0], *out = &w->output;
  if (w->num_inputs != 1 || in->rank != out->rank)
    return hetc_status_new(HETC_STATUS_INVALID_ARGUMENT, "transpose: one input of the output's rank expected");
  if (w->axis < 0 || (w->axis >> (3 * out->rank)) != 0)
    return hetc_status_new(HETC_STATUS_INVALID_ARGUMENT, "transpose: axis packs more than %d dims", out->rank);
  int seen[HETC_PLUGIN_MAX_RANK] = {0};
  for (int32_t d = 0; d < out->rank; ++d) {
    const int32_t from = HETC_PLUGIN_PERM_AT(w->axis, d);
    if (from < 0 || from >= in->rank || seen[from]++)
      return hetc_status_new(HETC_STATUS_INVALID_ARGUMENT, "transpose: perm is not a permutation of 0..%d",
                             in->rank - 1);
    if (out->shape[d] != in->shape[from])
      return hetc_status_new(HETC_STATUS_INVALID_ARGUMENT, "transpose: output dim %d is %lld, input dim %d is %lld", d,
                             (long long)out->shape[d], from, (long long)in->shape[from]);
  }
  int64_t in_stride[HETC_PLUGIN_MAX_RANK];
  int64_t stride = 1;
  for (int32_t d = in->rank - 1; d >= 0; --d) {
    in_stride[d] = stride;
    stride *= in->shape[d];
  }
  const int64_t count = hetc_reference_logical_count(out);
  for (int64_t i = 0; i < count; ++i) {
    int64_t rest = i, from = 0;
    for (int32_t d = out->rank - 1; d >= 0; --d) {
      from += (rest % out->shape[d]) * in_stride[HETC_PLUGIN_PERM_AT(w->axis, d)];
      rest /= out->shape[d];
    }
    y[i] = x[from];
  }
  return NULL;
}
