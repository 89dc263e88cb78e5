#include "reference/graph_exec.h"

#include <stdlib.h>
#include <string.h>

#include "reference/reference.h"

static hetc_status_t run_node(const hetc_graph_t *graph, int32_t k, float **values) {
  const hetc_node_t *node = &graph->nodes[k];
  const hetc_plugin_tensor_t *out_type = &graph->values[node->output].type;
  float *out = malloc(sizeof(float) * (size_t)hetc_tensor_element_count(out_type));
  if (!out) return hetc_status_new(HETC_STATUS_OUT_OF_MEMORY, "reference: node '%s'", node->name);
  values[node->output] = out;
  if (node->op == HETC_OP_BATCH_NORM) {
    const hetc_plugin_tensor_t *in = &graph->values[node->inputs[0]].type;
    hetc_reference_batch_norm(in->shape[0], in->shape[1], in->shape[2] * in->shape[3],
                              values[node->inputs[0]], node->params[HETC_PARAM_GAMMA].data,
                              node->params[HETC_PARAM_BETA].data, node->params[HETC_PARAM_MEAN].data,
                              node->params[HETC_PARAM_VAR].data, (float)node->attrs.epsilon, out);
    return NULL;
  }
  hetc_plugin_tensor_t inputs[HETC_MAX_NODE_INPUTS];
  hetc_plugin_workload_t workload;
  HETC_RETURN_IF_ERROR(hetc_graph_node_workload(graph, k, inputs, &workload));
  const float *input_data[HETC_MAX_NODE_INPUTS];
  for (int32_t i = 0; i < node->num_inputs; ++i) input_data[i] = values[node->inputs[i]];
  const float *params[2] = {NULL, NULL};
  for (int32_t p = 0; p < hetc_graph_node_param_count(node); ++p)
    params[p] = hetc_graph_node_param(node, p)->data;
  hetc_status_t status = hetc_reference_run_op(&workload, input_data, params, out);
  return status ? hetc_status_annotate(status, "reference: node '%s'", node->name) : NULL;
}

hetc_status_t hetc_reference_run_graph(const hetc_graph_t *graph, const float *const *inputs,
                                       float **out_outputs) {
  HETC_RETURN_IF_ERROR(hetc_graph_require_weights(graph, "run"));
  float **values = calloc((size_t)graph->num_values, sizeof(float *));
  int32_t *remaining = calloc((size_t)graph->num_values, sizeof(int32_t));
  if (!values || !remaining) {
    free(values);
    free(remaining);
    return hetc_status_new(HETC_STATUS_OUT_OF_MEMORY, "reference");
  }
  /* Free each intermediate after its last reader so big nets fit. */
  for (int32_t k = 0; k < graph->num_nodes; ++k)
    for (int32_t i = 0; i < graph->nodes[k].num_inputs; ++i) ++remaining[graph->nodes[k].inputs[i]];
  hetc_status_t status = NULL;
  for (int32_t i = 0; i < graph->num_inputs; ++i) values[graph->inputs[i]] = (float *)inputs[i];
  for (int32_t k = 0; !status && k < graph->num_nodes; ++k) {
    status = run_node(graph, k, values);
    const hetc_node_t *node = &graph->nodes[k];
    for (int32_t i = 0; !status && i < node->num_inputs; ++i) {
      int32_t v = node->inputs[i];
      int is_output = 0;
      for (int32_t o = 0; o < graph->num_outputs; ++o) is_output |= graph->outputs[o] == v;
      if (--remaining[v] == 0 && !is_output && graph->values[v].producer >= 0) {
        free(values[v]);
        values[v] = NULL;
      }
    }
  }
  for (int32_t o = 0; !status && o < graph->num_outputs; ++o) {
    int32_t v = graph->outputs[o];
    size_t bytes = sizeof(float) * (size_t)hetc_tensor_element_count(&graph->values[v].type);
    out_outputs[o] = malloc(bytes);
    if (!out_outputs[o]) {
      status = hetc_status_new(HETC_STATUS_OUT_OF_MEMORY, "reference outputs");
      for (int32_t p = 0; p < o; ++p) free(out_outputs[p]);
      break;
    }
    memcpy(out_outputs[o], values[v], bytes);
  }
  for (int32_t v = 0; v < graph->num_values; ++v)
    if (graph->values[v].producer >= 0) free(values[v]);
  free(values);
  free(remaining);
  return status;
}
