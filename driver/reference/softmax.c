#include <math.h>

#include "reference/reference.h"

hetc_status_t hetc_reference_softmax(const hetc_plugin_workload_t *w,
                                     const float *x, float *y) {
  const hetc_plugin_tensor_t *in = &w->inputs[0];
  const int log_softmax = w->op == HETC_PLUGIN_OP_LOG_SOFTMAX;
  const char *op = log_softmax ? "log_softmax" : "softmax";
  if (w->num_inputs != 1 || !hetc_reference_same_shape(in, &w->output))
    return hetc_status_new(HETC_STATUS_INVALID_ARGUMENT,
                           "%s: one input and an output of its shape "
                           "expected", op);
  if (w->axis < 0 || w->axis >= in->rank)
    return hetc_status_new(HETC_STATUS_INVALID_ARGUMENT,
                           "%s: axis %d outside 0..%d", op, w->axis,
                           in->rank - 1);
  int64_t outer = 1, inner = 1, extent = in->shape[w->axis];
  for (int32_t i = 0; i < w->axis; ++i) outer *= in->shape[i];
  for (int32_t i = w->axis + 1; i < in->rank; ++i) inner *= in->shape[i];
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t i = 0; i < inner; ++i) {
      const float *xs = x + o * extent * inner + i;
      float *ys = y + o * extent * inner + i;
      /* Subtracting the max keeps exp() from overflowing on large logits. */
      double max = xs[0];
      for (int64_t k = 1; k < extent; ++k)
        if (xs[k * inner] > max) max = xs[k * inner];
      double sum = 0.0;
      for (int64_t k = 0; k < extent; ++k) sum += exp((double)xs[k * inner] - max);
      for (int64_t k = 0; k < extent; ++k)
        ys[k * inner] = log_softmax ? (float)((double)xs[k * inner] - max - log(sum))
                                    : (float)(exp((double)xs[k * inner] - max) / sum);
    }
  return NULL;
}
