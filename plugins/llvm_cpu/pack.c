/* Parameter packing: logical row-major float32 params into the layout the
 * template's kernel reads. Pure functions of (workload, template, config). */
#include <string.h>

#include "cpu.h"
#include "plugin_pack.h"


/* Templates whose weights are packed in output-channel blocks of tile_oc
 * (and whose bias is zero-padded to whole blocks). */
static int blocked(int kind) {
  return kind == CPU_T_CONV_NCHWC || kind == CPU_T_CONV_GROUPED || kind == CPU_T_CONV_DEPTHWISE || kind == CPU_T_CONV_IM2COL ||
         kind == CPU_T_CONV_WINOGRAD || kind == CPU_T_DENSE;
}

uint64_t cpu_param_packed_count(const hetc_plugin_workload_t *wl, int kind,
                                const cpu_config_t *cfg, int32_t index) {
  const uint64_t count = hetc_kit_param_elements(wl, index);
  if (count == 0) return 0;
  if (kind == CPU_T_NORMALIZE) return cpu_normalize_param_count(wl);
  if (!blocked(kind)) return count;
  const int64_t C = wl->inputs[0].shape[1], K = wl->output.shape[1];
  const int64_t OCP = hetc_kit_ceil_div(K, cfg->tile_oc) * cfg->tile_oc;
  if (index == 1) return (uint64_t)OCP;
  if (kind == CPU_T_DENSE) return (uint64_t)(OCP * C);
  if (kind == CPU_T_CONV_DEPTHWISE) return (uint64_t)(OCP * wl->kernel[0] * wl->kernel[1]);
  if (kind == CPU_T_CONV_GROUPED)
    return (uint64_t)(OCP * cpu_grouped_span(wl, cfg->tile_oc) * wl->kernel[0] * wl->kernel[1]);
  const int64_t ICP = hetc_kit_ceil_div(C, cfg->tile_ic) * cfg->tile_ic;
  if (kind == CPU_T_CONV_WINOGRAD) {
    const int64_t alpha = cfg->tile_m + 2;
    return (uint64_t)(alpha * alpha * OCP * ICP);
  }
  return (uint64_t)(OCP * ICP * wl->kernel[0] * wl->kernel[1]);
}

/* dense [U][C] -> (U/bn, C, bn), zero-padded. */
static void pack_dense_weight(const hetc_plugin_workload_t *wl, int64_t bn, const float *w,
                              float *out) {
  const int64_t C = wl->inputs[0].shape[1], U = wl->output.shape[1];
  const int64_t UB = hetc_kit_ceil_div(U, bn);
  for (int64_t ub = 0; ub < UB; ++ub)
    for (int64_t c = 0; c < C; ++c)
      for (int64_t j = 0; j < bn; ++j) {
        const int64_t u = ub * bn + j;
        *out++ = u < U ? w[u * C + c] : 0.0f;
      }
}

/* conv [K][C][3][3] -> U = G g GT as (K/ocbn, alpha^2, C/icbn * icbn,
 * ocbn), zero-padded: per output-channel block, one GEMM operand panel per
 * transformed position, rows over input channels. A block's weights are
 * contiguous, so the kernel streams each once (gen_winograd.c). */
static void pack_winograd_weight(const hetc_plugin_workload_t *wl, const cpu_config_t *cfg,
                                 const float *w, float *out) {
  const cpu_winograd_t *t = cpu_winograd(cfg->tile_m);
  const int64_t C = wl->inputs[0].shape[1], K = wl->output.shape[1], a = t->alpha;
  const int64_t OCBN = cfg->tile_oc, OCB = hetc_kit_ceil_div(K, OCBN);
  const int64_t CP = hetc_kit_ceil_div(C, cfg->tile_ic) * cfg->tile_ic;
  memset(out, 0, sizeof(float) * (size_t)(a * a * OCB * CP * OCBN));
  for (int64_t k = 0; k < K; ++k)
    for (int64_t c = 0; c < C; ++c) {
      const float *g = w + (k * C + c) * 9;
      double gg[6][3]; /* G g */
      for (int64_t i = 0; i < a; ++i)
        for (int64_t j = 0; j < 3; ++j) {
          double sum = 0;
          for (int64_t l = 0; l < 3; ++l) sum += t->g[i * 3 + l] * g[l * 3 + j];
          gg[i][j] = sum;
        }
      for (int64_t i = 0; i < a; ++i)
        for (int64_t j = 0; j < a; ++j) {
          double sum = 0;
          for (int64_t l = 0; l < 3; ++l) sum += gg[i][l] * t->g[j * 3 + l];
          const int64_t xi = i * a + j;
          out[(((k / OCBN) * a * a + xi) * CP + c) * OCBN + k % OCBN] = (float)sum;
        }
    }
}

/* grouped conv [K][C/G][KH][KW] -> (K/ocbn, span/icbn, KH, KW, icbn, ocbn):
 * each output block's weights over its span of input channels, zero where
 * an input channel belongs to another group than the output channel. */
static void pack_grouped_weight(const hetc_plugin_workload_t *wl, const cpu_config_t *cfg,
                                const float *w, float *out) {
  const int64_t K = wl->output.shape[1], G = wl->groups, CG = wl->inputs[0].shape[1] / G, KG = K / G;
  const int64_t KH = wl->kernel[0], KW = wl->kernel[1], ICBN = cfg->tile_ic, OCBN = cfg->tile_oc;
  const int64_t span = cpu_grouped_span(wl, OCBN), ICBG = span / ICBN;
  for (int64_t ocb = 0; ocb < K / OCBN; ++ocb) {
    const int64_t c_start = ocb * OCBN / KG * CG;
    for (int64_t icb = 0; icb < ICBG; ++icb)
      for (int64_t kh = 0; kh < KH; ++kh)
        for (int64_t kw = 0; kw < KW; ++kw)
          for (int64_t ic = 0; ic < ICBN; ++ic)
            for (int64_t oc = 0; oc < OCBN; ++oc) {
              const int64_t k = ocb * OCBN + oc, c = c_start + icb * ICBN + ic;
              *out++ = c / CG == k / KG ? w[((k * CG + c % CG) * KH + kh) * KW + kw] : 0.f;
            }
  }
}

hetc_plugin_status_t cpu_pack_param(const hetc_plugin_workload_t *wl, int kind,
                                    const cpu_config_t *cfg, int32_t index,
                                    const float *logical, uint64_t count, void *out,
                                    uint64_t out_bytes) {
  const uint64_t want = hetc_kit_param_elements(wl, index);
  if (want == 0)
    return cpu_status(HETC_PLUGIN_STATUS_INVALID_ARGUMENT,
                      "cpu: pack_param: the artifact has no param %d", index);
  if (!logical || !out)
    return cpu_status(HETC_PLUGIN_STATUS_INVALID_ARGUMENT, "cpu: pack_param: null pointer");
  if (count != want)
    return cpu_status(HETC_PLUGIN_STATUS_INVALID_ARGUMENT,
                      "cpu: pack_param: param %d has %llu elements, expected %llu", index,
                      (unsigned long long)count, (unsigned long long)want);
  const uint64_t packed = cpu_param_packed_count(wl, kind, cfg, index);
  if (packed * 4 != out_bytes)
    return cpu_status(HETC_PLUGIN_STATUS_INTERNAL,
                      "cpu: pack_param: param %d packs to %llu bytes, the artifact reports %llu",
                      index, (unsigned long long)packed * 4, (unsigned long long)out_bytes);
  float *dst = out;
  if (blocked(kind)) {
    const int64_t K = wl->output.shape[1];
    if (index == 1)
      hpc_pack_padded(logical, K, hetc_kit_ceil_div(K, cfg->tile_oc) * cfg->tile_oc, dst);
    else if (kind == CPU_T_CONV_DEPTHWISE)
      hpc_pack_depthwise_weight(wl, cfg->tile_oc, logical, dst);
    else if (kind == CPU_T_DENSE)
      pack_dense_weight(wl, cfg->tile_oc, logical, dst);
    else if (kind == CPU_T_CONV_WINOGRAD)
      pack_winograd_weight(wl, cfg, logical, dst);
    else if (kind == CPU_T_CONV_GROUPED)
      pack_grouped_weight(wl, cfg, logical, dst);
    else
      hpc_pack_nchwc_weight(wl, cfg->tile_ic, cfg->tile_oc, logical, dst);
  } else if (kind == CPU_T_NORMALIZE) {
    hpc_pack_padded(logical, (int64_t)count, (int64_t)packed, dst);
  } else {
    memcpy(dst, logical, sizeof(float) * (size_t)count);
  }
  return NULL;
}
