/* Parameter packing: logical row-major float32 params into the layout the
 * template's kernel reads. Pure functions of (workload, template, config). */
#include <string.h>

#include "vec.h"

uint64_t vec_param_logical_count(const hetc_plugin_workload_t *wl,
                                 int32_t index) {
  switch (wl->op) {
    case HETC_PLUGIN_OP_CONV2D: {
      const int64_t K = wl->output.shape[1], C = wl->inputs[0].shape[1];
      if (index == 0)
        return (uint64_t)(K * (C / wl->groups) * wl->kernel[0] * wl->kernel[1]);
      return index == 1 && wl->epilogue.has_bias ? (uint64_t)K : 0;
    }
    case HETC_PLUGIN_OP_DENSE: {
      const int64_t U = wl->output.shape[1], K = wl->inputs[0].shape[1];
      if (index == 0) return (uint64_t)(U * K);
      return index == 1 && wl->epilogue.has_bias ? (uint64_t)U : 0;
    }
    case HETC_PLUGIN_OP_BIAS_ADD:
      return index == 0 ? (uint64_t)wl->inputs[0].shape[1] : 0;
    default: return 0;
  }
}

/* Copies a channel vector into `blocks` blocks of b, zero-padded. */
static void pack_padded(const float *src, int64_t channels, int64_t padded,
                        float *dst) {
  memcpy(dst, src, sizeof(float) * (size_t)channels);
  if (padded > channels)
    memset(dst + channels, 0, sizeof(float) * (size_t)(padded - channels));
}

/* OIHW -> OIHW[ic_bn]i[oc_bn]o: (K/ocbn, C/icbn, KH, KW, icbn, ocbn). */
static void pack_nchwc_weight(const hetc_plugin_workload_t *wl, int64_t icbn,
                              int64_t ocbn, const float *w, float *out) {
  const int64_t K = wl->output.shape[1], C = wl->inputs[0].shape[1];
  const int64_t KH = wl->kernel[0], KW = wl->kernel[1];
  const int64_t ICB = hpc_ceil_div(C, icbn), OCB = hpc_ceil_div(K, ocbn);
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
static void pack_depthwise_weight(const hetc_plugin_workload_t *wl, int64_t bn,
                                  const float *w, float *out) {
  const int64_t C = wl->output.shape[1];
  const int64_t KH = wl->kernel[0], KW = wl->kernel[1];
  const int64_t CB = hpc_ceil_div(C, bn);
  for (int64_t cb = 0; cb < CB; ++cb)
    for (int64_t kh = 0; kh < KH; ++kh)
      for (int64_t kw = 0; kw < KW; ++kw)
        for (int64_t c = 0; c < bn; ++c) {
          const int64_t k = cb * bn + c;
          out[((cb * KH + kh) * KW + kw) * bn + c] =
              k < C ? w[(k * KH + kh) * KW + kw] : 0.f;
        }
}

hetc_plugin_status_t vec_pack_param(const hetc_plugin_workload_t *wl,
                                    int kind, const vec_config_t *cfg,
                                    hetc_plugin_layout_t output_layout,
                                    int32_t index, const float *logical,
                                    uint64_t count, void *out,
                                    uint64_t out_bytes) {
  const uint64_t want = vec_param_logical_count(wl, index);
  if (want == 0)
    return vec_status(HETC_PLUGIN_STATUS_INVALID_ARGUMENT,
                      "vec: pack_param: the artifact has no param %d", index);
  if (!logical || !out)
    return vec_status(HETC_PLUGIN_STATUS_INVALID_ARGUMENT,
                      "vec: pack_param: null pointer");
  if (count != want)
    return vec_status(HETC_PLUGIN_STATUS_INVALID_ARGUMENT,
                      "vec: pack_param: param %d has %llu elements, expected %llu",
                      index, (unsigned long long)count, (unsigned long long)want);
  /* Size of the packed form, as the emitter reported it. */
  uint64_t packed = count;
  if (kind == VEC_T_CONV_NCHWC) {
    const int64_t C = wl->inputs[0].shape[1], K = wl->output.shape[1];
    const int64_t KH = wl->kernel[0], KW = wl->kernel[1];
    const int64_t OCP = hpc_ceil_div(K, cfg->tile_oc) * cfg->tile_oc;
    const int64_t ICP = hpc_ceil_div(C, cfg->tile_ic) * cfg->tile_ic;
    packed = index == 1 ? (uint64_t)OCP
                        : (uint64_t)(OCP * (hpc_conv_is_depthwise(wl) ? 1 : ICP) * KH * KW);
  } else if (kind == VEC_T_BIAS_ADD) {
    const int64_t C = wl->inputs[0].shape[1], b = hpc_layout_block(output_layout, C);
    packed = (uint64_t)(hpc_ceil_div(C, b) * b);
  }
  if (packed * 4 != out_bytes)
    return vec_status(HETC_PLUGIN_STATUS_INTERNAL,
                      "vec: pack_param: param %d packs to %llu bytes, the artifact "
                      "reports %llu",
                      index, (unsigned long long)packed * 4, (unsigned long long)out_bytes);
  float *dst = out;
  if (kind == VEC_T_CONV_NCHWC) {
    const int64_t K = wl->output.shape[1];
    if (index == 1) {
      pack_padded(logical, K, hpc_ceil_div(K, cfg->tile_oc) * cfg->tile_oc, dst);
    } else if (hpc_conv_is_depthwise(wl)) {
      pack_depthwise_weight(wl, cfg->tile_oc, logical, dst);
    } else {
      pack_nchwc_weight(wl, cfg->tile_ic, cfg->tile_oc, logical, dst);
    }
  } else if (kind == VEC_T_BIAS_ADD) {
    const int64_t C = wl->inputs[0].shape[1];
    const int64_t b = hpc_layout_block(output_layout, C);
    pack_padded(logical, C, hpc_ceil_div(C, b) * b, dst);
  } else {
    /* OIHW conv weights, dense weights and plain biases are used as is. */
    memcpy(dst, logical, sizeof(float) * (size_t)count);
  }
  return NULL;
}
