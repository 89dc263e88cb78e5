/* The built-in plugins' workload limits and descriptions (plugin_workload.h). */
#include "plugin_workload.h"

#include <stdio.h>

int32_t hpc_workload_check(const hetc_plugin_workload_t *wl, char *reason, size_t reason_size) {
  hetc_kit_reason_t r = {reason, reason_size};
  const int32_t code = hetc_kit_workload_check(wl, &r);
  if (code) return code;
  const int windowed = wl->op == HETC_PLUGIN_OP_CONV2D || wl->op == HETC_PLUGIN_OP_MAX_POOL2D ||
                       wl->op == HETC_PLUGIN_OP_AVG_POOL2D;
  if (windowed && wl->kernel[1] > 64)
    return hetc_kit_refuse(&r, HETC_PLUGIN_STATUS_UNSUPPORTED, "%s: kernel width %d above 64",
                           wl->op == HETC_PLUGIN_OP_CONV2D ? "conv2d" : "pool2d", wl->kernel[1]);
  return 0;
}

int hpc_conv_nchwc_applicable(const hetc_plugin_workload_t *wl) {
  return wl->op == HETC_PLUGIN_OP_CONV2D && (wl->groups == 1 || hetc_kit_conv_is_depthwise(wl));
}

int hpc_elementwise_row_major_only(const hetc_plugin_workload_t *wl) {
  return wl->op == HETC_PLUGIN_OP_ELEMENTWISE &&
         ((wl->activation >= HETC_PLUGIN_ACT_ELU && wl->activation <= HETC_PLUGIN_ACT_LOG) ||
          wl->binary == HETC_PLUGIN_BINARY_DIV);
}

const char *hpc_binary_operator(int32_t binary) {
  return binary == HETC_PLUGIN_BINARY_MUL ? "*" : binary == HETC_PLUGIN_BINARY_DIV ? "/" : "+";
}

void hpc_workload_describe(const hetc_plugin_workload_t *wl, hpc_strbuf_t *sb) {
  char text[HETC_KIT_WORKLOAD_TEXT_MAX];
  hetc_kit_workload_describe(wl, text, sizeof(text));
  hpc_strbuf_printf(sb, "%s", text);
}
