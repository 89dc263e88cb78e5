#include "compile/channel_view.h"

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

/* The channel block of `layout`, or 0 when views cannot be cut from it. */
static int64_t channel_block(hetc_plugin_layout_t layout) {
  if (layout.kind == HETC_PLUGIN_LAYOUT_ROW_MAJOR) return 1;
  if (layout.kind == HETC_PLUGIN_LAYOUT_NCHWC && layout.block >= 1) return layout.block;
  return 0;
}

int hetc_concat_view_offsets(const hetc_graph_t *graph, int32_t node_index, hetc_plugin_layout_t layout,
                             uint64_t *out_offsets) {
  const hetc_node_t *node = &graph->nodes[node_index];
  const hetc_plugin_tensor_t *out = &graph->values[node->output].type;
  if (node->op != HETC_OP_CONCAT || node->attrs.axis != 1 || out->rank != 4 || out->shape[0] != 1 ||
      node->num_inputs > HETC_MAX_NODE_INPUTS || is_model_output(graph, node->output))
    return 0;
  const int64_t block = channel_block(layout);
  if (!block) return 0;
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

/* The first input channel the conv2d `node` (one input) reads, or -1 when
 * it is not a contiguous pick: every weight row one 1 at column first +
 * row. */
static int64_t picked_channels_first(const hetc_graph_t *graph, const hetc_node_t *node) {
  const hetc_node_attrs_t *a = &node->attrs;
  const hetc_param_t *weight = &node->params[HETC_PARAM_WEIGHT];
  const int64_t in_channels = graph->values[node->inputs[0]].type.shape[1], count = a->channels;
  if (a->has_bias || a->groups != 1 || a->kernel[0] != 1 || a->kernel[1] != 1 || a->strides[0] != 1 ||
      a->strides[1] != 1 || a->dilation[0] != 1 || a->dilation[1] != 1 || a->padding[0] || a->padding[1] ||
      a->padding[2] || a->padding[3] || node->epilogue.has_bias || node->epilogue.has_residual ||
      node->epilogue.activation != HETC_PLUGIN_ACT_NONE || !weight->data || weight->count != count * in_channels)
    return -1;
  int64_t first = -1;
  for (int64_t k = 0; k < in_channels && first < 0; ++k)
    if (weight->data[k] != 0.0f) first = k;
  if (first < 0 || first + count > in_channels) return -1;
  for (int64_t o = 0; o < count; ++o)
    for (int64_t k = 0; k < in_channels; ++k)
      if (weight->data[o * in_channels + k] != (k == first + o ? 1.0f : 0.0f)) return -1;
  return first;
}

int hetc_slice_view_offset(const hetc_graph_t *graph, int32_t node_index, hetc_plugin_layout_t layout,
                           uint64_t *out_offset) {
  const hetc_node_t *node = &graph->nodes[node_index];
  if (node->op != HETC_OP_CONV2D || node->num_inputs != 1) return 0;
  const hetc_plugin_tensor_t *in = &graph->values[node->inputs[0]].type;
  const int64_t block = channel_block(layout);
  if (!block || in->rank != 4 || in->shape[0] != 1 || is_model_output(graph, node->output) ||
      is_model_output(graph, node->inputs[0]) || !has_producer(graph, node->inputs[0]))
    return 0;
  const int64_t first = picked_channels_first(graph, node);
  if (first < 0 || first % block != 0 || node->attrs.channels % block != 0) return 0;
  const uint64_t offset = (uint64_t)first * (uint64_t)in->shape[2] * (uint64_t)in->shape[3] * sizeof(float);
  if (offset % 64 != 0) return 0;
  *out_offset = offset;
  return 1;
}

hetc_buffer_view_fn_t hetc_plugin_buffer_view_call(const hetc_plugin_t *plugin) {
  return HETC_PLUGIN_HAS_FIELD(plugin, hetc_plugin_t, buffer_view) ? plugin->buffer_view : NULL;
}
