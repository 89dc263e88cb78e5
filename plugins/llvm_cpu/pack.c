/* Parameter packing: logical row-major float32 params into the layout the
 * template's kernel reads. Pure functions of (workload, template, config). */
#include <string.h>

#include "cpu.h"
#include "plugin_pack.h"


uint64_t cpu_param_packed_count(const hetc_plugin_workload_t *wl, int kind,
                                const cpu_config_t *cfg, int32_t index) {
  const uint64_t count = hpc_param_logical_count(wl, index);
  if (count == 0) return 0;
  if (kind != CPU_T_CONV_NCHWC && kind != CPU_T_CONV_DEPTHWISE) return count;
  const int64_t C = wl->inputs[0].shape[1], K = wl->output.shape[1];
  const int64_t OCP = hpc_ceil_div(K, cfg->tile_oc) * cfg->tile_oc;
  if (index == 1) return (uint64_t)OCP;
  if (kind == CPU_T_CONV_DEPTHWISE) return (uint64_t)(OCP * wl->kernel[0] * wl->kernel[1]);
  const int64_t ICP = hpc_ceil_div(C, cfg->tile_ic) * cfg->tile_ic;
  return (uint64_t)(OCP * ICP * wl->kernel[0] * wl->kernel[1]);
}

hetc_plugin_status_t cpu_pack_param(const hetc_plugin_workload_t *wl, int kind,
                                    const cpu_config_t *cfg, int32_t index,
                                    const float *logical, uint64_t count, void *out,
                                    uint64_t out_bytes) {
  const uint64_t want = hpc_param_logical_count(wl, index);
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
  if (kind == CPU_T_CONV_NCHWC || kind == CPU_T_CONV_DEPTHWISE) {
    const int64_t K = wl->output.shape[1];
    if (index == 1)
      hpc_pack_padded(logical, K, hpc_ceil_div(K, cfg->tile_oc) * cfg->tile_oc, dst);
    else if (kind == CPU_T_CONV_DEPTHWISE)
      hpc_pack_depthwise_weight(wl, cfg->tile_oc, logical, dst);
    else
      hpc_pack_nchwc_weight(wl, cfg->tile_ic, cfg->tile_oc, logical, dst);
  } else {
    memcpy(dst, logical, sizeof(float) * (size_t)count);
  }
  return NULL;
}
