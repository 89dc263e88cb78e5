/* Parameter packing: logical row-major float32 params into the layout the
 * template's kernel reads. Pure functions of (workload, template, config). */
#include <string.h>

#include "vec.h"
#include "plugin_pack.h"


hetc_plugin_status_t vec_pack_param(const hetc_plugin_workload_t *wl,
                                    int kind, const vec_config_t *cfg,
                                    hetc_plugin_layout_t output_layout,
                                    int32_t index, const float *logical,
                                    uint64_t count, void *out,
                                    uint64_t out_bytes) {
  const uint64_t want = hetc_kit_param_elements(wl, index);
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
    const int64_t OCP = hetc_kit_ceil_div(K, cfg->tile_oc) * cfg->tile_oc;
    const int64_t ICP = hetc_kit_ceil_div(C, cfg->tile_ic) * cfg->tile_ic;
    packed = index == 1 ? (uint64_t)OCP
                        : (uint64_t)(OCP * (hetc_kit_conv_is_depthwise(wl) ? 1 : ICP) * KH * KW);
  } else if (kind == VEC_T_BIAS_ADD) {
    const int64_t C = wl->inputs[0].shape[1], b = hetc_kit_layout_block(output_layout, C);
    packed = (uint64_t)(hetc_kit_ceil_div(C, b) * b);
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
      hpc_pack_padded(logical, K, hetc_kit_ceil_div(K, cfg->tile_oc) * cfg->tile_oc, dst);
    } else if (hetc_kit_conv_is_depthwise(wl)) {
      hpc_pack_depthwise_weight(wl, cfg->tile_oc, logical, dst);
    } else {
      hpc_pack_nchwc_weight(wl, cfg->tile_ic, cfg->tile_oc, logical, dst);
    }
  } else if (kind == VEC_T_BIAS_ADD) {
    const int64_t C = wl->inputs[0].shape[1];
    const int64_t b = hetc_kit_layout_block(output_layout, C);
    hpc_pack_padded(logical, C, hetc_kit_ceil_div(C, b) * b, dst);
  } else {
    /* OIHW conv weights, dense weights and plain biases are used as is. */
    memcpy(dst, logical, sizeof(float) * (size_t)count);
  }
  return NULL;
}
