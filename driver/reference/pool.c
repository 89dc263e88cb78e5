#include <math.h>

#include "reference/reference.h"

int64_t hetc_reference_pool_output_size(int64_t in, int64_t kernel,
                                        int64_t stride, int64_t pad_before,
                                        int64_t pad_after, int ceil_mode) {
  int64_t span = in + pad_before + pad_after - kernel;
  if (span < 0) return 0;
  int64_t out = (ceil_mode ? (span + stride - 1) / stride : span / stride) + 1;
  /* PyTorch: rounding up may add a window that starts past the input, in
   * the bottom/right padding only; it would see no element, so drop it. */
  if (ceil_mode && (out - 1) * stride >= in + pad_before) --out;
  return out;
}

static hetc_status_t check_pool_shapes(const hetc_plugin_workload_t *w,
                                       const char *op) {
  const hetc_plugin_tensor_t *in = &w->inputs[0], *out = &w->output;
  if (w->num_inputs != 1)
    return hetc_status_new(HETC_STATUS_INVALID_ARGUMENT,
                           "%s: %d inputs, expected 1", op, w->num_inputs);
  if (in->rank != 4 || out->rank != 4 || in->shape[0] != out->shape[0] ||
      in->shape[1] != out->shape[1])
    return hetc_status_new(HETC_STATUS_INVALID_ARGUMENT,
                           "%s: input and output must be 4-d with equal N and C",
                           op);
  return NULL;
}

hetc_status_t hetc_reference_pool2d(const hetc_plugin_workload_t *w,
                                    const float *x, float *y) {
  int is_max = w->op == HETC_PLUGIN_OP_MAX_POOL2D;
  const char *op = is_max ? "max_pool2d" : "avg_pool2d";
  if (!is_max && w->op != HETC_PLUGIN_OP_AVG_POOL2D)
    return hetc_status_new(HETC_STATUS_INVALID_ARGUMENT,
                           "pool2d called for op %d", w->op);
  HETC_RETURN_IF_ERROR(hetc_reference_check_window(w, op));
  HETC_RETURN_IF_ERROR(check_pool_shapes(w, op));
  /* Dilation is not a pooling field; zero (unused) and 1 mean the same. */
  for (int i = 0; i < 2; ++i)
    if (w->dilation[i] > 1)
      return hetc_status_new(HETC_STATUS_UNSUPPORTED,
                             "%s: dilated pooling is not supported", op);
  if (w->padding[0] >= w->kernel[0] || w->padding[2] >= w->kernel[0] ||
      w->padding[1] >= w->kernel[1] || w->padding[3] >= w->kernel[1])
    return hetc_status_new(HETC_STATUS_INVALID_ARGUMENT,
                           "%s: padding must be smaller than the kernel", op);
  const hetc_plugin_tensor_t *in = &w->inputs[0], *out = &w->output;
  int64_t N = in->shape[0], C = in->shape[1], H = in->shape[2], W = in->shape[3];
  int64_t OH = out->shape[2], OW = out->shape[3];
  int64_t KH = w->kernel[0], KW = w->kernel[1];
  int64_t SH = w->strides[0], SW = w->strides[1];
  int64_t PT = w->padding[0], PL = w->padding[1];
  int64_t PB = w->padding[2], PR = w->padding[3];
  int64_t want_oh = hetc_reference_pool_output_size(H, KH, SH, PT, PB, w->ceil_mode);
  int64_t want_ow = hetc_reference_pool_output_size(W, KW, SW, PL, PR, w->ceil_mode);
  if (OH != want_oh || OW != want_ow)
    return hetc_status_new(HETC_STATUS_INVALID_ARGUMENT,
                           "%s: output %lldx%lld, expected %lldx%lld", op,
                           (long long)OH, (long long)OW, (long long)want_oh,
                           (long long)want_ow);
  for (int64_t nc = 0; nc < N * C; ++nc) {
    const float *plane = x + nc * H * W;
    for (int64_t oh = 0; oh < OH; ++oh)
      for (int64_t ow = 0; ow < OW; ++ow) {
        int64_t h0 = oh * SH - PT, w0 = ow * SW - PL;
        /* PyTorch's include-pad divisor: the window clipped to the padded
         * input, which is smaller than KH*KW only for ceil_mode windows
         * hanging past the bottom/right padding. */
        int64_t h1 = h0 + KH < H + PB ? h0 + KH : H + PB;
        int64_t w1 = w0 + KW < W + PR ? w0 + KW : W + PR;
        int64_t padded_count = (h1 - h0) * (w1 - w0);
        if (h0 < 0) h0 = 0;
        if (w0 < 0) w0 = 0;
        if (h1 > H) h1 = H;
        if (w1 > W) w1 = W;
        double sum = 0.0;
        float best = -INFINITY;
        for (int64_t ih = h0; ih < h1; ++ih)
          for (int64_t iw = w0; iw < w1; ++iw) {
            float v = plane[ih * W + iw];
            sum += v;
            /* NaN wins, as in PyTorch, so a NaN in the input is never
             * hidden by a max. */
            if (v > best || isnan(v)) best = v;
          }
        int64_t real_count = (h1 - h0) * (w1 - w0);
        float *o = &y[(nc * OH + oh) * OW + ow];
        if (is_max)
          *o = best;
        else
          *o = (float)(sum / (double)(w->count_include_pad ? padded_count
                                                            : real_count));
      }
  }
  return NULL;
}

hetc_status_t hetc_reference_global_avg_pool2d(const hetc_plugin_workload_t *w,
                                               const float *x, float *y) {
  HETC_RETURN_IF_ERROR(check_pool_shapes(w, "global_avg_pool2d"));
  const hetc_plugin_tensor_t *in = &w->inputs[0], *out = &w->output;
  if (out->shape[2] != 1 || out->shape[3] != 1)
    return hetc_status_new(HETC_STATUS_INVALID_ARGUMENT,
                           "global_avg_pool2d: output must be [N, C, 1, 1]");
  int64_t plane = in->shape[2] * in->shape[3];
  for (int64_t nc = 0; nc < in->shape[0] * in->shape[1]; ++nc) {
    double sum = 0.0;
    for (int64_t i = 0; i < plane; ++i) sum += x[nc * plane + i];
    y[nc] = (float)(sum / (double)plane);
  }
  return NULL;
}
