/* The reference normalize (instance, group and layer normalization), as
 * plugin.h defines it: statistics in double precision, two passes (mean,
 * then the variance about it). Written apart from the plugin kit's kernel
 * so that the two check each other. */
#include "reference/reference.h"

#include <math.h>

hetc_status_t hetc_reference_normalize(const hetc_plugin_workload_t *w, const float *x, const float *scale,
                                       const float *bias, float *y) {
  const hetc_plugin_tensor_t *in = &w->inputs[0];
  const hetc_plugin_normalize_params_t *p = &w->params.normalize;
  if (w->num_inputs != 1 || in->rank != w->output.rank || hetc_reference_logical_count(in) !=
                                                             hetc_reference_logical_count(&w->output))
    return hetc_status_new(HETC_STATUS_INVALID_ARGUMENT, "normalize: one input of the output's shape expected");
  if (p->axis < 0 || p->num_axes < 1 || p->axis + p->num_axes > in->rank || p->groups < 1 ||
      in->shape[p->axis] % p->groups != 0 || !(p->epsilon > 0) || (p->affine && (!scale || !bias)))
    return hetc_status_new(HETC_STATUS_INVALID_ARGUMENT,
                           "normalize: axis %d, %d axes, %d groups or epsilon %g do not fit shape of rank %d",
                           p->axis, p->num_axes, p->groups, p->epsilon, in->rank);
  int64_t outer = 1, rest = 1, inner = 1;
  for (int32_t d = 0; d < p->axis; ++d) outer *= in->shape[d];
  for (int32_t d = p->axis + 1; d < p->axis + p->num_axes; ++d) rest *= in->shape[d];
  for (int32_t d = p->axis + p->num_axes; d < in->rank; ++d) inner *= in->shape[d];
  const int64_t channels = in->shape[p->axis], per_group = channels / p->groups;
  /* Element (o, c, r, i) lies at ((o * channels + c) * rest + r) * inner + i. */
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t g = 0; g < p->groups; ++g)
      for (int64_t i = 0; i < inner; ++i) {
        const int64_t first = ((o * channels + g * per_group) * rest) * inner + i, count = per_group * rest;
        double sum = 0, squares = 0;
        for (int64_t k = 0; k < count; ++k) sum += x[first + k * inner];
        const double mean = sum / (double)count;
        for (int64_t k = 0; k < count; ++k) {
          const double d = x[first + k * inner] - mean;
          squares += d * d;
        }
        const double inv = 1.0 / sqrt(squares / (double)count + p->epsilon);
        for (int64_t k = 0; k < count; ++k) {
          const int64_t c = g * per_group + k / rest;
          const double v = (x[first + k * inner] - mean) * inv;
          y[first + k * inner] = (float)(p->affine ? v * scale[c] + bias[c] : v);
        }
      }
  return NULL;
}
