#include <stdlib.h>

#include "reference/reference.h"

int64_t hetc_reference_conv_output_size(int64_t in, int64_t kernel,
                                        int64_t stride, int64_t dilation,
                                        int64_t pad_before, int64_t pad_after) {
  int64_t span = in + pad_before + pad_after - dilation * (kernel - 1) - 1;
  /* A negative span means not even one window fits; C division would round
   * it toward zero and claim one output. */
  if (span < 0) return 0;
  return span / stride + 1;
}

hetc_status_t hetc_reference_check_window(const hetc_plugin_workload_t *w,
                                          const char *op) {
  for (int i = 0; i < 2; ++i) {
    if (w->kernel[i] < 1 || w->strides[i] < 1)
      return hetc_status_new(HETC_STATUS_INVALID_ARGUMENT,
                             "%s: kernel %dx%d and strides %dx%d must be positive",
                             op, w->kernel[0], w->kernel[1], w->strides[0],
                             w->strides[1]);
  }
  for (int i = 0; i < 4; ++i)
    if (w->padding[i] < 0)
      return hetc_status_new(HETC_STATUS_INVALID_ARGUMENT,
                             "%s: negative padding %d", op, w->padding[i]);
  return NULL;
}

hetc_status_t hetc_reference_conv2d(const hetc_plugin_workload_t *w,
                                    const float *x, const float *weight,
                                    const float *bias, const float *residual,
                                    float *y) {
  HETC_RETURN_IF_ERROR(hetc_reference_check_window(w, "conv2d"));
  HETC_RETURN_IF_ERROR(hetc_reference_check_epilogue(w, "conv2d"));
  if (w->dilation[0] < 1 || w->dilation[1] < 1)
    return hetc_status_new(HETC_STATUS_INVALID_ARGUMENT,
                           "conv2d: dilation %dx%d must be positive",
                           w->dilation[0], w->dilation[1]);
  const hetc_plugin_tensor_t *in = &w->inputs[0], *out = &w->output;
  if (in->rank != 4 || out->rank != 4)
    return hetc_status_new(HETC_STATUS_INVALID_ARGUMENT,
                           "conv2d: input rank %d and output rank %d must be 4",
                           in->rank, out->rank);
  int64_t N = in->shape[0], CI = in->shape[1], H = in->shape[2], W = in->shape[3];
  int64_t CO = out->shape[1], OH = out->shape[2], OW = out->shape[3];
  int64_t G = w->groups;
  if (G < 1 || CI % G != 0 || CO % G != 0)
    return hetc_status_new(HETC_STATUS_INVALID_ARGUMENT,
                           "conv2d: groups %d must divide input channels %lld "
                           "and output channels %lld",
                           w->groups, (long long)CI, (long long)CO);
  int64_t KH = w->kernel[0], KW = w->kernel[1];
  int64_t SH = w->strides[0], SW = w->strides[1];
  int64_t DH = w->dilation[0], DW = w->dilation[1];
  int64_t PT = w->padding[0], PL = w->padding[1];
  int64_t want_oh = hetc_reference_conv_output_size(H, KH, SH, DH, PT, w->padding[2]);
  int64_t want_ow = hetc_reference_conv_output_size(W, KW, SW, DW, PL, w->padding[3]);
  if (out->shape[0] != N || OH != want_oh || OW != want_ow)
    return hetc_status_new(HETC_STATUS_INVALID_ARGUMENT,
                           "conv2d: output [%lld,%lld,%lld,%lld] inconsistent "
                           "with input [%lld,%lld,%lld,%lld] (expected "
                           "[%lld,%lld,%lld,%lld])",
                           (long long)out->shape[0], (long long)CO,
                           (long long)OH, (long long)OW, (long long)N,
                           (long long)CI, (long long)H, (long long)W,
                           (long long)N, (long long)CO, (long long)want_oh,
                           (long long)want_ow);
  if (w->epilogue.has_residual &&
      !hetc_reference_same_shape(&w->inputs[w->num_inputs - 1], out))
    return hetc_status_new(HETC_STATUS_INVALID_ARGUMENT,
                           "conv2d: residual shape differs from the output's");

  /* One output channel's plane of sums at a time, each window tap added
   * to every output it reaches: each output receives its terms in the same
   * order (ci, kh, kw) as a sum taken output by output, so the results are
   * the same to the bit, and the innermost loop runs along a row, which the
   * compiler vectorizes (the reference is most of many tests' time). */
  const int64_t plane_size = OH * OW;
  double *acc = malloc(sizeof(double) * (size_t)(plane_size > 0 ? plane_size : 1));
  if (!acc) return hetc_status_new(HETC_STATUS_OUT_OF_MEMORY, "reference: conv2d");
  int64_t cig = CI / G, cog = CO / G;
  for (int64_t n = 0; n < N; ++n)
    for (int64_t co = 0; co < CO; ++co) {
      int64_t g = co / cog;
      const float *wco = weight + co * cig * KH * KW;
      for (int64_t p = 0; p < plane_size; ++p) acc[p] = 0.0;
      for (int64_t ci = 0; ci < cig; ++ci) {
        const float *plane = x + ((n * CI + g * cig + ci) * H) * W;
        for (int64_t kh = 0; kh < KH; ++kh)
          for (int64_t kw = 0; kw < KW; ++kw) {
            const double tap = (double)wco[(ci * KH + kh) * KW + kw];
            /* The outputs whose column iw = ow * SW - PL + kw * DW lies in
             * [0, W): ow in [first, last). */
            const int64_t shift = kw * DW - PL;
            int64_t first = shift >= 0 ? 0 : (-shift + SW - 1) / SW;
            int64_t last = W - 1 - shift < 0 ? 0 : (W - 1 - shift) / SW + 1;
            if (last > OW) last = OW;
            for (int64_t oh = 0; oh < OH; ++oh) {
              int64_t ih = oh * SH - PT + kh * DH;
              if (ih < 0 || ih >= H) continue;
              const int64_t row = ih * W + shift;
              double *sums = acc + oh * OW;
              for (int64_t ow = first; ow < last; ++ow) sums[ow] += (double)plane[row + ow * SW] * tap;
            }
          }
      }
      for (int64_t p = 0; p < plane_size; ++p) {
        int64_t o = (n * CO + co) * plane_size + p;
        double sum = acc[p];
        if (w->epilogue.has_bias) sum += bias[co];
        if (w->epilogue.has_residual) sum += residual[o];
        y[o] = (float)hetc_reference_activate(w->epilogue.activation, sum);
      }
    }
  free(acc);
  return NULL;
}
