/* Parameter packing. Every template reads its weights in their logical
 * form (OIHW, [units, K]) except Winograd, whose weights are transformed
 * once, at compile time (hpc_pack_winograd_f2x3_weight). */
#include <string.h>

#include "ocl.h"

hetc_plugin_status_t ocl_pack_param(const hetc_plugin_workload_t *wl, int kind, int32_t index, const float *logical,
                                    uint64_t count, void *out, uint64_t out_bytes) {
  const uint64_t expected = hetc_kit_param_elements(wl, index);
  if (!logical || !out || count != expected)
    return ocl_status(HETC_PLUGIN_STATUS_INVALID_ARGUMENT,
                      "opencl: param %d has %llu values, the workload's takes %llu", index,
                      (unsigned long long)count, (unsigned long long)expected);
  const int is_weight = index == 0 && (wl->op == HETC_PLUGIN_OP_CONV2D || wl->op == HETC_PLUGIN_OP_DENSE);
  if (kind == OCL_T_CONV_WINOGRAD && is_weight) {
    if (out_bytes != (uint64_t)wl->output.shape[1] * (uint64_t)wl->inputs[0].shape[1] * 16 * 4)
      return ocl_status(HETC_PLUGIN_STATUS_INTERNAL, "opencl: Winograd weight size mismatch");
    hpc_pack_winograd_f2x3_weight(wl, logical, out);
    return NULL;
  }
  if (out_bytes != count * 4)
    return ocl_status(HETC_PLUGIN_STATUS_INTERNAL, "opencl: param %d: %llu bytes for %llu values", index,
                      (unsigned long long)out_bytes, (unsigned long long)count);
  memcpy(out, logical, out_bytes);
  return NULL;
}
