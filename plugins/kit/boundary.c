/* An artifact's boundary (hetc/kit/boundary.h). */
#include "hetc/kit/boundary.h"

#include <string.h>

#include "hetc/kit/host.h"
#include "hetc/kit/layout.h"
#include "hetc/kit/status.h"

hetc_plugin_status_t hetc_kit_boundary_init(hetc_kit_boundary_t *b, const hetc_plugin_workload_t *wl,
                                            const hetc_plugin_layout_t *input_layouts,
                                            hetc_plugin_layout_t output_layout, const uint64_t *param_bytes,
                                            uint64_t workspace_bytes) {
  memset(b, 0, sizeof(*b));
  if (hetc_kit_workload_copy(wl, &b->workload))
    return hetc_kit_status(HETC_PLUGIN_STATUS_OUT_OF_MEMORY, "%s: out of memory", hetc_kit_plugin_name());
  hetc_plugin_tensor_t *inputs = (hetc_plugin_tensor_t *)b->workload.inputs;
  for (int32_t i = 0; i < wl->num_inputs; ++i) {
    b->input_layouts[i] = input_layouts ? input_layouts[i] : hetc_kit_layout_row_major();
    inputs[i].layout = b->input_layouts[i];
  }
  b->workload.output.layout = output_layout;
  hetc_plugin_artifact_info_t *info = &b->info;
  info->num_inputs = wl->num_inputs;
  info->input_layouts = b->input_layouts;
  info->output_layout = output_layout;
  info->num_params = hetc_kit_param_count(wl);
  for (int32_t p = 0; p < info->num_params; ++p)
    b->param_bytes[p] = param_bytes ? param_bytes[p] : hetc_kit_param_elements(wl, p) * sizeof(float);
  info->param_bytes = b->param_bytes;
  info->workspace_bytes = workspace_bytes;
  info->description = b->description;
  hetc_kit_run_args_init(&b->run_args, &b->workload, info);
  return NULL;
}

void hetc_kit_boundary_release(hetc_kit_boundary_t *b) { hetc_kit_workload_release(&b->workload); }
