#include <string.h>

#include "reference/reference.h"

hetc_status_t hetc_reference_concat(const hetc_plugin_workload_t *w,
                                    const float *const *inputs, float *y) {
  const hetc_plugin_tensor_t *out = &w->output;
  if (w->num_inputs < 1)
    return hetc_status_new(HETC_STATUS_INVALID_ARGUMENT,
                           "concat: no inputs");
  if (w->axis < 0 || w->axis >= out->rank)
    return hetc_status_new(HETC_STATUS_INVALID_ARGUMENT,
                           "concat: axis %d outside 0..%d", w->axis,
                           out->rank - 1);
  int64_t total = 0;
  for (int32_t k = 0; k < w->num_inputs; ++k) {
    const hetc_plugin_tensor_t *in = &w->inputs[k];
    if (in->rank != out->rank)
      return hetc_status_new(HETC_STATUS_INVALID_ARGUMENT,
                             "concat: input %d has rank %d, output %d", k,
                             in->rank, out->rank);
    for (int32_t d = 0; d < out->rank; ++d)
      if (d != w->axis && in->shape[d] != out->shape[d])
        return hetc_status_new(HETC_STATUS_INVALID_ARGUMENT,
                               "concat: input %d dim %d is %lld, output's %lld",
                               k, d, (long long)in->shape[d],
                               (long long)out->shape[d]);
    total += in->shape[w->axis];
  }
  if (total != out->shape[w->axis])
    return hetc_status_new(HETC_STATUS_INVALID_ARGUMENT,
                           "concat: inputs sum to %lld along axis %d, output "
                           "has %lld",
                           (long long)total, w->axis,
                           (long long)out->shape[w->axis]);
  int64_t outer = 1, inner = 1;
  for (int32_t d = 0; d < w->axis; ++d) outer *= out->shape[d];
  for (int32_t d = w->axis + 1; d < out->rank; ++d) inner *= out->shape[d];
  int64_t out_row = out->shape[w->axis] * inner;
  int64_t at = 0;
  for (int32_t k = 0; k < w->num_inputs; ++k) {
    int64_t row = w->inputs[k].shape[w->axis] * inner;
    for (int64_t o = 0; o < outer; ++o)
      memcpy(y + o * out_row + at, inputs[k] + o * row,
             (size_t)row * sizeof(float));
    at += row;
  }
  return NULL;
}
