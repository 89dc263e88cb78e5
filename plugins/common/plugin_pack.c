/* Parameter packing shared by the CPU backends: logical row-major float32
 * params into blocked layouts. Pure functions. */
#include "plugin_pack.h"

#include <string.h>

#include "plugin_workload.h"

/* Copies a channel vector into `blocks` blocks of b, zero-padded. */
void hpc_pack_padded(const float *src, int64_t channels, int64_t padded,
                        float *dst) {
  memcpy(dst, src, sizeof(float) * (size_t)channels);
  if (padded > channels)
    memset(dst + channels, 0, sizeof(float) * (size_t)(padded - channels));
}

/* OIHW -> OIHW[ic_bn]i[oc_bn]o: (K/ocbn, C/icbn, KH, KW, icbn, ocbn). */
void hpc_pack_nchwc_weight(const hetc_plugin_workload_t *wl, int64_t icbn,
                              int64_t ocbn, const float *w, float *out) {
  const int64_t K = wl->output.shape[1], C = wl->inputs[0].shape[1];
  const int64_t KH = wl->kernel[0], KW = wl->kernel[1];
  const int64_t ICB = hetc_kit_ceil_div(C, icbn), OCB = hetc_kit_ceil_div(K, ocbn);
  for (int64_t ocb = 0; ocb < OCB; ++ocb)
    for (int64_t icb = 0; icb < ICB; ++icb)
      for (int64_t kh = 0; kh < KH; ++kh)
        for (int64_t kw = 0; kw < KW; ++kw) {
          float *dst = out + (((ocb * ICB + icb) * KH + kh) * KW + kw) * icbn * ocbn;
          for (int64_t ic = 0; ic < icbn; ++ic)
            for (int64_t oc = 0; oc < ocbn; ++oc) {
              const int64_t k = ocb * ocbn + oc, c = icb * icbn + ic;
              dst[ic * ocbn + oc] =
                  k < K && c < C ? w[((k * C + c) * KH + kh) * KW + kw] : 0.f;
            }
        }
}

/* Depthwise [C,1,KH,KW] -> (C/bn, KH, KW, bn). */
void hpc_pack_depthwise_weight(const hetc_plugin_workload_t *wl, int64_t bn,
                                  const float *w, float *out) {
  const int64_t C = wl->output.shape[1];
  const int64_t KH = wl->kernel[0], KW = wl->kernel[1];
  const int64_t CB = hetc_kit_ceil_div(C, bn);
  for (int64_t cb = 0; cb < CB; ++cb)
    for (int64_t kh = 0; kh < KH; ++kh)
      for (int64_t kw = 0; kw < KW; ++kw)
        for (int64_t c = 0; c < bn; ++c) {
          const int64_t k = cb * bn + c;
          out[((cb * KH + kh) * KW + kw) * bn + c] =
              k < C ? w[(k * KH + kh) * KW + kw] : 0.f;
        }
}

/* F(2x2, 3x3)'s filter transform G (4x3). */
static const float winograd_g[4][3] = {{1.f, 0.f, 0.f}, {.5f, .5f, .5f}, {.5f, -.5f, .5f}, {0.f, 0.f, 1.f}};

void hpc_pack_winograd_f2x3_weight(const hetc_plugin_workload_t *wl, const float *w, float *out) {
  const int64_t K = wl->output.shape[1], C = wl->inputs[0].shape[1];
  for (int64_t k = 0; k < K; ++k)
    for (int64_t c = 0; c < C; ++c) {
      const float *g = w + (k * C + c) * 9;
      float gg[4][3]; /* G g */
      for (int i = 0; i < 4; ++i)
        for (int j = 0; j < 3; ++j)
          gg[i][j] = winograd_g[i][0] * g[0 * 3 + j] + winograd_g[i][1] * g[1 * 3 + j] + winograd_g[i][2] * g[2 * 3 + j];
      for (int i = 0; i < 4; ++i)
        for (int j = 0; j < 4; ++j) {
          const float u = gg[i][0] * winograd_g[j][0] + gg[i][1] * winograd_g[j][1] + gg[i][2] * winograd_g[j][2];
          out[((int64_t)(i * 4 + j) * K + k) * C + c] = u;
        }
    }
}
