#include "compile/concat_view.h"

#include <stddef.h>

static int is_model_output(const hetc_graph_t *graph, int32_t value) {
  for (int32_t o = 0; o < graph->num_outputs; ++o)
    if (graph->outputs[o] == value) return 1;
  return 0;
}

static int has_producer(const hetc_graph_t *graph, int32_t value) {
  for (int32_t k = 0; k < graph->num_nodes; ++k)
    if (graph->nodes[k].output == value) return 1;
  return 0;
}

int hetc_concat_view_offsets(const hetc_graph_t *graph, int32_t node_index, hetc_plugin_layout_t layout,
                             uint64_t *out_offsets) {
  const hetc_node_t *node = &graph->nodes[node_index];
  const hetc_plugin_tensor_t *out = &graph->values[node->output].type;
  if (node->op != HETC_OP_CONCAT || node->attrs.axis != 1 || out->rank != 4 || out->shape[0] != 1 ||
      node->num_inputs > HETC_MAX_NODE_INPUTS || is_model_output(graph, node->output))
    return 0;
  int64_t block = 1;
  if (layout.kind == HETC_PLUGIN_LAYOUT_NCHWC) block = layout.block;
  else if (layout.kind != HETC_PLUGIN_LAYOUT_ROW_MAJOR) return 0;
  if (block < 1) return 0;
  const uint64_t plane_bytes = (uint64_t)out->shape[2] * (uint64_t)out->shape[3] * sizeof(float);
  uint64_t offset = 0;
  for (int32_t i = 0; i < node->num_inputs; ++i) {
    const int64_t channels = graph->values[node->inputs[i]].type.shape[1];
    /* A model's inputs and outputs are buffers of their own. */
    if (channels % block != 0 || offset % 64 != 0 || is_model_output(graph, node->inputs[i]) ||
        !has_producer(graph, node->inputs[i]))
      return 0;
    for (int32_t j = 0; j < i; ++j)
      if (node->inputs[j] == node->inputs[i]) return 0; /* one value cannot live in two slices */
    out_offsets[i] = offset;
    offset += (uint64_t)channels * plane_bytes;
  }
  return 1;
}

hetc_buffer_view_fn_t hetc_plugin_buffer_view_call(const hetc_plugin_t *plugin) {
  return HETC_PLUGIN_HAS_FIELD(plugin, hetc_plugin_t, buffer_view) ? plugin->buffer_view : NULL;
}
