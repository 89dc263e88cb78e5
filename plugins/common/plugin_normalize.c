/* A normalize workload's lines and layout (plugin_normalize.h). */
#include "plugin_normalize.h"

#include <float.h>

#include "hetc/kit/layout.h"

void hpc_normalize_geometry(const hetc_plugin_workload_t *wl, hpc_normalize_t *out) {
  const hetc_plugin_tensor_t *t = &wl->inputs[0];
  const hetc_plugin_normalize_params_t *p = &wl->params.normalize;
  out->layout = hetc_kit_layout_row_major();
  if (t->rank == 4 && p->axis == 1) {
    if (t->layout.kind == HETC_PLUGIN_LAYOUT_NCHWC && t->layout.block >= 1)
      out->layout = hetc_kit_layout_nchwc(t->layout.block);
    else if (t->layout.kind == HETC_PLUGIN_LAYOUT_NHWC)
      out->layout = (hetc_plugin_layout_t){HETC_PLUGIN_LAYOUT_NHWC, 0};
  }
  out->outer = out->rest = out->inner = 1;
  for (int32_t d = 0; d < p->axis; ++d) out->outer *= t->shape[d];
  for (int32_t d = p->axis + 1; d < p->axis + p->num_axes; ++d) out->rest *= t->shape[d];
  for (int32_t d = p->axis + p->num_axes; d < t->rank; ++d) out->inner *= t->shape[d];
  out->channels = t->shape[p->axis];
  out->groups = p->groups;
  out->per_group = out->channels / p->groups;
  out->count = out->per_group * out->rest;
  out->lines = out->outer * out->groups * out->inner;
  out->plane = out->rest * out->inner;
  out->block = hetc_kit_layout_block(out->layout, out->channels);
  out->blocks = hetc_kit_ceil_div(out->channels, out->block);
  out->padding = out->blocks * out->block - out->channels;
}

float hpc_normalize_epsilon_float(const hetc_plugin_workload_t *wl) {
  const double eps = wl->params.normalize.epsilon;
  return eps < (double)FLT_MIN ? FLT_MIN : (float)eps;
}
