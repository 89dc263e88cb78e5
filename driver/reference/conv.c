#include <math.h>
#include <stdlib.h>
#include <string.h>

#if defined(__x86_64__) || defined(__i386__)
#define HAVE_BLOCKS 1
#include <immintrin.h>
#else
#define HAVE_BLOCKS 0
#endif

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

/* A conv2d's sizes, checked against each other by hetc_reference_conv2d. */
typedef struct conv_shape_t {
  int64_t N, CI, H, W, CO, OH, OW, G, KH, KW, SH, SW, DH, DW, PT, PL, PB, PR;
} conv_shape_t;

/* Output `o` (of channel co) from its sum of window terms. */
static inline void store_output(const hetc_plugin_workload_t *w, const float *bias, const float *residual,
                                float *y, int64_t co, int64_t o, double sum) {
  if (w->epilogue.has_bias) sum += bias[co];
  if (w->epilogue.has_residual) sum += residual[o];
  y[o] = (float)hetc_reference_activate(w->epilogue.activation, sum);
}

/* The exact order of the reference: every output is the double sum, from
 * 0.0, of its window's products x * tap in the order (ci, kh, kw), taps
 * that fall into the padding left out. Both ways below keep it, so they
 * give the same bits. */

/* One output channel's plane of sums at a time, each window tap added to
 * every output it reaches, along rows. The way for weights that are not
 * all finite (where a padding tap's 0 * tap would not be 0) and for
 * paddings too large to copy. */
static hetc_status_t conv_planes(const conv_shape_t *c, const hetc_plugin_workload_t *w, const float *x,
                                 const float *weight, const float *bias, const float *residual, float *y) {
  const int64_t plane_size = c->OH * c->OW;
  double *acc = malloc(sizeof(double) * (size_t)(plane_size > 0 ? plane_size : 1));
  if (!acc) return hetc_status_new(HETC_STATUS_OUT_OF_MEMORY, "reference: conv2d");
  const int64_t cig = c->CI / c->G, cog = c->CO / c->G;
  for (int64_t n = 0; n < c->N; ++n)
    for (int64_t co = 0; co < c->CO; ++co) {
      const int64_t g = co / cog;
      const float *wco = weight + co * cig * c->KH * c->KW;
      for (int64_t p = 0; p < plane_size; ++p) acc[p] = 0.0;
      for (int64_t ci = 0; ci < cig; ++ci) {
        const float *plane = x + ((n * c->CI + g * cig + ci) * c->H) * c->W;
        for (int64_t kh = 0; kh < c->KH; ++kh)
          for (int64_t kw = 0; kw < c->KW; ++kw) {
            const double tap = (double)wco[(ci * c->KH + kh) * c->KW + kw];
            /* The outputs whose column iw = ow * SW - PL + kw * DW lies in
             * [0, W): ow in [first, last). */
            const int64_t shift = kw * c->DW - c->PL;
            const int64_t first = shift >= 0 ? 0 : (-shift + c->SW - 1) / c->SW;
            int64_t last = c->W - 1 - shift < 0 ? 0 : (c->W - 1 - shift) / c->SW + 1;
            if (last > c->OW) last = c->OW;
            for (int64_t oh = 0; oh < c->OH; ++oh) {
              const int64_t ih = oh * c->SH - c->PT + kh * c->DH;
              if (ih < 0 || ih >= c->H) continue;
              const int64_t row = ih * c->W + shift;
              double *sums = acc + oh * c->OW;
              for (int64_t ow = first; ow < last; ++ow) {
                const double term = (double)plane[row + ow * c->SW] * tap;
                sums[ow] += term;
              }
            }
          }
      }
      for (int64_t p = 0; p < plane_size; ++p)
        store_output(w, bias, residual, y, co, (n * c->CO + co) * plane_size + p, acc[p]);
    }
  free(acc);
  return NULL;
}

/* Register blocks of BLOCK_CO output channels by BLOCK_OW outputs along a
 * row, their sums held in vectors over the whole window. The input is
 * copied with its padding written as zeros: with finite taps a padding
 * term is +-0, and adding it to a sum that started at +0.0 changes no bit
 * (round to nearest never makes -0.0 from a +0.0 or nonzero sum), so the
 * blocks need no bounds checks. Most of many tests' time is this
 * reference, on the sample models' large convs. */
#if HAVE_BLOCKS
enum { BLOCK_CO = 4, BLOCK_OW = 8 };

/* One image's output channels [co0, co0 + count) (count <= BLOCK_CO, in
 * one group) from its padded input planes `group_input` (the group's
 * first), PH x PW each. AVX2 (without FMA) so that the sums stay in
 * registers; the caller checks the CPU has it. */
__attribute__((target("avx2"))) static void conv_block_rows(const conv_shape_t *c, const hetc_plugin_workload_t *w,
                                                           const float *group_input, int64_t PH, int64_t PW,
                                                           const float *const *taps_of, int64_t n, int64_t co0,
                                                           int64_t count, const float *bias, const float *residual,
                                                           float *y) {
  const int64_t cig = c->CI / c->G, plane_size = c->OH * c->OW;
  for (int64_t oh = 0; oh < c->OH; ++oh)
    for (int64_t ow0 = 0; ow0 < c->OW; ow0 += BLOCK_OW) {
      /* Named, not an array: -O2 keeps them in registers. Sums of
       * outputs ow0..ow0+3 (lo) and ow0+4..ow0+7 (hi) of each channel. */
      __m256d lo0 = _mm256_setzero_pd(), hi0 = lo0, lo1 = lo0, hi1 = lo0, lo2 = lo0, hi2 = lo0, lo3 = lo0,
              hi3 = lo0;
      const float *corner = group_input + oh * c->SH * PW + ow0 * c->SW;
      for (int64_t ci = 0; ci < cig; ++ci)
        for (int64_t kh = 0; kh < c->KH; ++kh) {
          const float *row = corner + (ci * PH + kh * c->DH) * PW;
          const int64_t tap0 = (ci * c->KH + kh) * c->KW;
          for (int64_t kw = 0; kw < c->KW; ++kw) {
            const float *at = row + kw * c->DW;
            __m256d xlo, xhi;
            if (c->SW == 1) {
              xlo = _mm256_cvtps_pd(_mm_loadu_ps(at));
              xhi = _mm256_cvtps_pd(_mm_loadu_ps(at + 4));
            } else {
              const int64_t s = c->SW;
              xlo = _mm256_setr_pd(at[0], at[s], at[2 * s], at[3 * s]);
              xhi = _mm256_setr_pd(at[4 * s], at[5 * s], at[6 * s], at[7 * s]);
            }
            /* Products and sums apart (mul, then add), never a fused
             * multiply-add: the order and roundings of conv_planes. */
            const __m256d t0 = _mm256_set1_pd(taps_of[0][tap0 + kw]), t1 = _mm256_set1_pd(taps_of[1][tap0 + kw]),
                          t2 = _mm256_set1_pd(taps_of[2][tap0 + kw]), t3 = _mm256_set1_pd(taps_of[3][tap0 + kw]);
            lo0 = _mm256_add_pd(lo0, _mm256_mul_pd(xlo, t0));
            hi0 = _mm256_add_pd(hi0, _mm256_mul_pd(xhi, t0));
            lo1 = _mm256_add_pd(lo1, _mm256_mul_pd(xlo, t1));
            hi1 = _mm256_add_pd(hi1, _mm256_mul_pd(xhi, t1));
            lo2 = _mm256_add_pd(lo2, _mm256_mul_pd(xlo, t2));
            hi2 = _mm256_add_pd(hi2, _mm256_mul_pd(xhi, t2));
            lo3 = _mm256_add_pd(lo3, _mm256_mul_pd(xlo, t3));
            hi3 = _mm256_add_pd(hi3, _mm256_mul_pd(xhi, t3));
          }
        }
      double sums[BLOCK_CO][BLOCK_OW];
      _mm256_storeu_pd(sums[0], lo0);
      _mm256_storeu_pd(sums[0] + 4, hi0);
      _mm256_storeu_pd(sums[1], lo1);
      _mm256_storeu_pd(sums[1] + 4, hi1);
      _mm256_storeu_pd(sums[2], lo2);
      _mm256_storeu_pd(sums[2] + 4, hi2);
      _mm256_storeu_pd(sums[3], lo3);
      _mm256_storeu_pd(sums[3] + 4, hi3);
      const int64_t along = c->OW - ow0 < BLOCK_OW ? c->OW - ow0 : BLOCK_OW;
      for (int64_t b = 0; b < count; ++b) {
        const int64_t base = (n * c->CO + co0 + b) * plane_size + oh * c->OW + ow0;
        for (int64_t j = 0; j < along; ++j) store_output(w, bias, residual, y, co0 + b, base + j, sums[b][j]);
      }
    }
}

#endif

/* *out_done 0 (and nothing written) where conv_planes must do it. */
static hetc_status_t conv_blocked(const conv_shape_t *c, const hetc_plugin_workload_t *w, const float *x,
                                  const float *weight, const float *bias, const float *residual, float *y,
                                  int *out_done) {
  *out_done = 0;
#if !HAVE_BLOCKS
  (void)c, (void)w, (void)x, (void)weight, (void)bias, (void)residual, (void)y;
  return NULL;
#else
  if (!__builtin_cpu_supports("avx2")) return NULL;
  const int64_t cig = c->CI / c->G, cog = c->CO / c->G, window = cig * c->KH * c->KW;
  for (int64_t i = 0; i < c->CO * window; ++i)
    if (!isfinite(weight[i])) return NULL;
  const int64_t PH = c->H + c->PT + c->PB, PW = c->W + c->PL + c->PR;
  if (PH > 4 * c->H + 64 || PW > 4 * c->W + 64 || c->CI * PH * PW > ((int64_t)1 << 28)) return NULL;
  /* A block reads up to BLOCK_OW outputs past a row's last: into the next
   * row, or past the last plane into this zeroed slack. */
  const int64_t slack = BLOCK_OW * c->SW + c->KW * c->DW;
  float *padded = calloc((size_t)(c->CI * PH * PW + slack), sizeof(float));
  if (!padded) return hetc_status_new(HETC_STATUS_OUT_OF_MEMORY, "reference: conv2d");
  for (int64_t n = 0; n < c->N; ++n) {
    for (int64_t ci = 0; ci < c->CI; ++ci)
      for (int64_t ih = 0; ih < c->H; ++ih)
        memcpy(padded + (ci * PH + ih + c->PT) * PW + c->PL, x + ((n * c->CI + ci) * c->H + ih) * c->W,
               sizeof(float) * (size_t)c->W);
    for (int64_t co0 = 0; co0 < c->CO;) {
      /* A block stays within one group; its channels past the group's
       * last repeat the first one's taps and are not stored. */
      const int64_t g = co0 / cog;
      int64_t count = (g + 1) * cog - co0;
      if (count > BLOCK_CO) count = BLOCK_CO;
      const float *taps_of[BLOCK_CO];
      for (int64_t b = 0; b < BLOCK_CO; ++b) taps_of[b] = weight + (co0 + (b < count ? b : 0)) * window;
      conv_block_rows(c, w, padded + g * cig * PH * PW, PH, PW, taps_of, n, co0, count, bias, residual, y);
      co0 += count;
    }
  }
  free(padded);
  *out_done = 1;
  return NULL;
#endif
}

hetc_status_t hetc_reference_conv2d_by(hetc_reference_conv_way_t way, const hetc_plugin_workload_t *w,
                                       const float *x, const float *weight, const float *bias,
                                       const float *residual, float *y) {
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

  const conv_shape_t shape = {N, CI, H, W, CO, OH, OW, G, KH, KW, SH, SW, DH, DW, PT, PL,
                               w->padding[2], w->padding[3]};
  int done = 0;
  if (way != HETC_REFERENCE_CONV_PLANES) {
    HETC_RETURN_IF_ERROR(conv_blocked(&shape, w, x, weight, bias, residual, y, &done));
    if (!done && way == HETC_REFERENCE_CONV_BLOCKED)
      return hetc_status_new(HETC_STATUS_UNSUPPORTED,
                             "conv2d: register blocks need AVX2, finite weights and a padding that can be copied");
  }
  return done ? NULL : conv_planes(&shape, w, x, weight, bias, residual, y);
}

hetc_status_t hetc_reference_conv2d(const hetc_plugin_workload_t *w, const float *x, const float *weight,
                                    const float *bias, const float *residual, float *y) {
  return hetc_reference_conv2d_by(HETC_REFERENCE_CONV_EITHER, w, x, weight, bias, residual, y);
}
