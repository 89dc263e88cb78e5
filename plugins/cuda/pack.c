/* Parameter packing: the NCHW, depthwise, tensor-core and dense templates
 * read their weights in the logical form ([K][C/groups][R][S], [units][K]);
 * the NHWC template reads [R][S][C][K] and Winograd its transformed U. */
#include <string.h>

#include "cu.h"

uint64_t cu_weight_bytes(const hetc_plugin_workload_t *wl, int kind) {
  if (kind == CU_T_CONV_WINOGRAD) return (uint64_t)wl->output.shape[1] * (uint64_t)wl->inputs[0].shape[1] * 16 * 4;
  return hetc_kit_param_elements(wl, 0) * 4;
}

hetc_plugin_status_t cu_pack_param(const hetc_plugin_workload_t *wl, int kind, int32_t index, const float *logical,
                                   uint64_t count, void *out, uint64_t out_bytes) {
  const uint64_t expected = hetc_kit_param_elements(wl, index);
  if (!logical || !out || count != expected)
    return cu_status(HETC_PLUGIN_STATUS_INVALID_ARGUMENT, "%s: param %d has %llu values, the workload's takes %llu",
                     cu_plugin_name, index, (unsigned long long)count, (unsigned long long)expected);
  const int is_weight = index == 0 && (wl->op == HETC_PLUGIN_OP_CONV2D || wl->op == HETC_PLUGIN_OP_DENSE);
  const uint64_t bytes = is_weight ? cu_weight_bytes(wl, kind) : count * 4;
  if (out_bytes != bytes)
    return cu_status(HETC_PLUGIN_STATUS_INTERNAL, "%s: param %d of %s: %llu bytes given, %llu packed", cu_plugin_name,
                     index, cu_template_name(kind), (unsigned long long)out_bytes, (unsigned long long)bytes);
  if (is_weight && kind == CU_T_CONV_WINOGRAD)
    hpc_pack_winograd_f2x3_weight(wl, logical, out);
  else if (is_weight && kind == CU_T_CONV_NHWC)
    cu_pack_weight_rsck(wl, logical, out);
  else
    memcpy(out, logical, out_bytes);
  return NULL;
}
