#include "graph/split.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>


int64_t hetc_split_channel_step(int64_t channels) { return channels >= 32 ? 8 : 1; }

int hetc_graph_can_split_conv2d(const hetc_graph_t *graph, int32_t node_index) {
  const hetc_node_t *node = &graph->nodes[node_index];
  return node->op == HETC_OP_CONV2D && node->attrs.groups == 1 && !node->epilogue.has_residual &&
         graph->values[node->output].type.rank == 4 && node->attrs.channels >= 2;
}

/* Rows [begin, end) of a param whose first axis is the output channels. */
static hetc_status_t slice_param(const hetc_param_t *whole, int64_t begin, int64_t end, hetc_param_t *out) {
  *out = *whole;
  out->data = NULL;
  if (!whole->data || whole->count == 0) return NULL;
  const int64_t row = whole->count / whole->shape[0];
  out->shape[0] = end - begin;
  out->count = row * (end - begin);
  if (!(out->data = malloc(sizeof(float) * (size_t)out->count)))
    return hetc_status_new(HETC_STATUS_OUT_OF_MEMORY, "splitting a conv2d");
  memcpy(out->data, whole->data + begin * row, sizeof(float) * (size_t)out->count);
  return NULL;
}

/* A conv2d computing output channels [begin, end) of `whole`, writing
 * value `output`; its strings and params are new. */
static hetc_status_t make_part(const hetc_node_t *whole, int64_t begin, int64_t end, const char *name,
                               int32_t output, hetc_node_t *out) {
  memset(out, 0, sizeof(*out));
  *out = *whole;
  out->name = strdup(name);
  out->fused_names = whole->fused_names ? strdup(whole->fused_names) : NULL;
  out->inputs = malloc(sizeof(int32_t) * (size_t)whole->num_inputs);
  memset(out->params, 0, sizeof(out->params));
  out->output = output;
  out->attrs.channels = end - begin;
  hetc_status_t status = NULL;
  if (!out->name || !out->inputs || (whole->fused_names && !out->fused_names))
    status = hetc_status_new(HETC_STATUS_OUT_OF_MEMORY, "splitting a conv2d");
  else memcpy(out->inputs, whole->inputs, sizeof(int32_t) * (size_t)whole->num_inputs);
  for (int p = 0; !status && p < HETC_PARAM_SLOTS; ++p)
    status = slice_param(&whole->params[p], begin, end, &out->params[p]);
  return status;
}

hetc_status_t hetc_graph_split_conv2d(hetc_graph_t *graph, int32_t node_index, int64_t first_channels) {
  if (node_index < 0 || node_index >= graph->num_nodes || !hetc_graph_can_split_conv2d(graph, node_index))
    return hetc_status_new(HETC_STATUS_INVALID_ARGUMENT, "node %d is not a conv2d hetc can split", node_index);
  const hetc_node_t *whole = &graph->nodes[node_index];
  const int64_t channels = whole->attrs.channels;
  if (first_channels < 1 || first_channels >= channels)
    return hetc_status_new(HETC_STATUS_INVALID_ARGUMENT, "'%s': cannot split %lld channels at %lld", whole->name,
                           (long long)channels, (long long)first_channels);
  /* Everything new is built first, so a failure leaves the graph as it was. */
  hetc_node_t parts[2], concat;
  memset(parts, 0, sizeof(parts));
  memset(&concat, 0, sizeof(concat));
  hetc_value_t part_values[2];
  memset(part_values, 0, sizeof(part_values));
  const int32_t first_value = graph->num_values;
  char name[512];
  hetc_status_t status = NULL;
  for (int part = 0; part < 2 && !status; ++part) {
    snprintf(name, sizeof(name), "%s.part%d", whole->name, part);
    hetc_value_t *v = &part_values[part];
    v->type = graph->values[whole->output].type;
    v->type.shape[1] = part ? channels - first_channels : first_channels;
    v->producer = node_index + part;
    v->name = strdup(name);
    if (!v->name) status = hetc_status_new(HETC_STATUS_OUT_OF_MEMORY, "splitting a conv2d");
    if (!status)
      status = make_part(whole, part ? first_channels : 0, part ? channels : first_channels, name,
                         first_value + part, &parts[part]);
  }
  if (!status) {
    concat.name = strdup(whole->name);
    concat.op = HETC_OP_CONCAT;
    concat.num_inputs = 2;
    concat.inputs = malloc(2 * sizeof(int32_t));
    concat.output = whole->output;
    concat.attrs.axis = 1;
    if (!concat.name || !concat.inputs) status = hetc_status_new(HETC_STATUS_OUT_OF_MEMORY, "splitting a conv2d");
    else concat.inputs[0] = first_value, concat.inputs[1] = first_value + 1;
  }
  hetc_value_t *values = status ? NULL : realloc(graph->values, sizeof(hetc_value_t) * (size_t)(graph->num_values + 2));
  if (values) graph->values = values;
  hetc_node_t *nodes = status || !values ? NULL : realloc(graph->nodes, sizeof(hetc_node_t) * (size_t)(graph->num_nodes + 2));
  if (nodes) graph->nodes = nodes;
  if (!status && (!values || !nodes)) status = hetc_status_new(HETC_STATUS_OUT_OF_MEMORY, "splitting a conv2d");
  if (status) {
    hetc_node_release(&parts[0]);
    hetc_node_release(&parts[1]);
    hetc_node_release(&concat);
    free(part_values[0].name);
    free(part_values[1].name);
    return status;
  }
  /* The whole node's slot takes part 0; part 1 and the concat follow it,
   * so the order stays topological (the concat writes the value the
   * whole node wrote, read only by later nodes). */
  hetc_node_release(&graph->nodes[node_index]);
  memmove(&graph->nodes[node_index + 3], &graph->nodes[node_index + 1],
          sizeof(hetc_node_t) * (size_t)(graph->num_nodes - node_index - 1));
  graph->nodes[node_index] = parts[0];
  graph->nodes[node_index + 1] = parts[1];
  graph->nodes[node_index + 2] = concat;
  graph->num_nodes += 2;
  for (int32_t v = 0; v < graph->num_values; ++v)
    if (graph->values[v].producer > node_index) graph->values[v].producer += 2;
  graph->values[concat.output].producer = node_index + 2;
  graph->values[graph->num_values++] = part_values[0];
  graph->values[graph->num_values++] = part_values[1];
  return NULL;
}
