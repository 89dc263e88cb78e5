#include "graph/graph.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static const char *const op_names[HETC_OP_COUNT] = {
    [HETC_OP_CONV2D] = "conv2d",
    [HETC_OP_DENSE] = "dense",
    [HETC_OP_BATCH_NORM] = "batch_norm",
    [HETC_OP_BIAS_ADD] = "bias_add",
    [HETC_OP_RELU] = "relu",
    [HETC_OP_RELU6] = "relu6",
    [HETC_OP_SIGMOID] = "sigmoid",
    [HETC_OP_TANH] = "tanh",
    [HETC_OP_ADD] = "add",
    [HETC_OP_MULTIPLY] = "multiply",
    [HETC_OP_MAX_POOL2D] = "max_pool2d",
    [HETC_OP_AVG_POOL2D] = "avg_pool2d",
    [HETC_OP_GLOBAL_AVG_POOL2D] = "global_avg_pool2d",
    [HETC_OP_CONCAT] = "concat",
    [HETC_OP_FLATTEN] = "flatten",
    [HETC_OP_RESHAPE] = "reshape",
    [HETC_OP_SOFTMAX] = "softmax",
    [HETC_OP_TRANSPOSE] = "transpose",
    [HETC_OP_ELU] = "elu",
    [HETC_OP_SOFTPLUS] = "softplus",
    [HETC_OP_DIVIDE] = "divide",
    [HETC_OP_EXP] = "exp",
    [HETC_OP_LOG] = "log",
    [HETC_OP_LOG_SOFTMAX] = "log_softmax",
    [HETC_OP_SILU] = "silu",
    [HETC_OP_HARDSWISH] = "hardswish",
    [HETC_OP_HARDSIGMOID] = "hardsigmoid",
    [HETC_OP_GELU] = "gelu",
    [HETC_OP_GELU_TANH] = "gelu_tanh",
    [HETC_OP_ERF] = "erf",
    [HETC_OP_RESIZE] = "resize",
    [HETC_OP_NORMALIZE] = "normalize",
    [HETC_OP_MATMUL] = "matmul",
};

const char *const hetc_resize_mode_names[] = {"nearest", "linear", NULL};
const char *const hetc_resize_coordinates_names[] = {
    "half_pixel", "pytorch_half_pixel", "align_corners", "asymmetric", "tf_half_pixel_for_nn", "half_pixel_symmetric",
    NULL};
const char *const hetc_resize_rounding_names[] = {"round_prefer_floor", "round_prefer_ceil", "floor", "ceil", NULL};

int32_t hetc_name_index(const char *const *names, const char *name) {
  for (int32_t i = 0; names[i]; ++i)
    if (!strcmp(names[i], name)) return i;
  return -1;
}

hetc_node_attrs_t hetc_node_default_attrs(hetc_op_t op) {
  hetc_node_attrs_t a;
  memset(&a, 0, sizeof(a));
  a.strides[0] = a.strides[1] = 1;
  a.dilation[0] = a.dilation[1] = 1;
  a.groups = 1;
  a.epsilon = 1e-5;
  a.axis = op == HETC_OP_CONCAT ? 1 : -1;
  a.normalize = (hetc_plugin_normalize_params_t){1, 0, 1, 1, 1e-5};
  return a;
}

const char *hetc_op_name(hetc_op_t op) {
  return (op >= 0 && op < HETC_OP_COUNT) ? op_names[op] : NULL;
}

hetc_op_t hetc_op_from_name(const char *name) {
  for (int op = 0; op < HETC_OP_COUNT; ++op) {
    if (strcmp(op_names[op], name) == 0) return (hetc_op_t)op;
  }
  return HETC_OP_COUNT;
}

void hetc_node_release(hetc_node_t *node) {
  free(node->name);
  free(node->inputs);
  free(node->fused_names);
  for (int i = 0; i < HETC_PARAM_SLOTS; ++i) free(node->params[i].data);
}

void hetc_graph_free(hetc_graph_t *graph) {
  if (!graph) return;
  for (int32_t i = 0; i < graph->num_nodes; ++i) hetc_node_release(&graph->nodes[i]);
  for (int32_t i = 0; i < graph->num_values; ++i) free(graph->values[i].name);
  for (int32_t i = 0; i < graph->num_outputs; ++i) free(graph->output_names[i]);
  free(graph->nodes);
  free(graph->values);
  free(graph->inputs);
  free(graph->outputs);
  free(graph->output_names);
  free(graph->name);
  free(graph->source_path);
  free(graph);
}

static char *dup_or_null(const char *s, int *failed) {
  if (!s) return NULL;
  char *copy = strdup(s);
  if (!copy) *failed = 1;
  return copy;
}

static void *dup_bytes(const void *src, size_t bytes, int *failed) {
  if (!src || bytes == 0) return NULL;
  void *copy = malloc(bytes);
  if (!copy) {
    *failed = 1;
    return NULL;
  }
  memcpy(copy, src, bytes);
  return copy;
}

hetc_status_t hetc_graph_require_weights(const hetc_graph_t *graph, const char *doing) {
  if (!graph->shapes_only) return NULL;
  return hetc_status_new(HETC_STATUS_INVALID_ARGUMENT,
                         "%s: loaded with its shapes only (no weights): its tasks can be listed and tuned, but it "
                         "cannot be %s", graph->source_path ? graph->source_path : graph->name, doing);
}

hetc_status_t hetc_graph_clone(const hetc_graph_t *graph,
                               hetc_graph_t **out_graph) {
  int failed = 0;
  hetc_graph_t *copy = calloc(1, sizeof(*copy));
  if (!copy) return hetc_status_new(HETC_STATUS_OUT_OF_MEMORY, "graph clone");
  *copy = *graph;
  copy->name = dup_or_null(graph->name, &failed);
  copy->source_path = dup_or_null(graph->source_path, &failed);
  copy->values = calloc((size_t)graph->num_values + 1, sizeof(hetc_value_t));
  copy->nodes = calloc((size_t)graph->num_nodes + 1, sizeof(hetc_node_t));
  copy->output_names = calloc((size_t)graph->num_outputs + 1, sizeof(char *));
  copy->inputs = dup_bytes(graph->inputs, sizeof(int32_t) * (size_t)graph->num_inputs, &failed);
  copy->outputs = dup_bytes(graph->outputs, sizeof(int32_t) * (size_t)graph->num_outputs, &failed);
  if (!copy->values || !copy->nodes || !copy->output_names) {
    failed = 1;
    copy->num_values = copy->num_nodes = copy->num_outputs = 0;
  }
  for (int32_t i = 0; !failed && i < graph->num_values; ++i) {
    copy->values[i] = graph->values[i];
    copy->values[i].name = dup_or_null(graph->values[i].name, &failed);
  }
  for (int32_t i = 0; !failed && i < graph->num_outputs; ++i) {
    copy->output_names[i] = dup_or_null(graph->output_names[i], &failed);
  }
  for (int32_t i = 0; !failed && i < graph->num_nodes; ++i) {
    const hetc_node_t *src = &graph->nodes[i];
    hetc_node_t *dst = &copy->nodes[i];
    *dst = *src;
    dst->name = dup_or_null(src->name, &failed);
    dst->fused_names = dup_or_null(src->fused_names, &failed);
    dst->inputs = dup_bytes(src->inputs, sizeof(int32_t) * (size_t)src->num_inputs, &failed);
    for (int p = 0; p < HETC_PARAM_SLOTS; ++p) {
      dst->params[p].data = dup_bytes(src->params[p].data,
                                      sizeof(float) * (size_t)src->params[p].count, &failed);
    }
  }
  if (failed) {
    hetc_graph_free(copy);
    return hetc_status_new(HETC_STATUS_OUT_OF_MEMORY, "graph clone");
  }
  *out_graph = copy;
  return NULL;
}

int64_t hetc_tensor_element_count(const hetc_plugin_tensor_t *tensor) {
  int64_t count = 1;
  for (int32_t i = 0; i < tensor->rank; ++i) count *= tensor->shape[i];
  return count;
}

int32_t hetc_graph_value_use_count(const hetc_graph_t *graph, int32_t value) {
  int32_t uses = 0;
  for (int32_t n = 0; n < graph->num_nodes; ++n) {
    const hetc_node_t *node = &graph->nodes[n];
    for (int32_t i = 0; i < node->num_inputs; ++i) uses += node->inputs[i] == value;
  }
  for (int32_t o = 0; o < graph->num_outputs; ++o) uses += graph->outputs[o] == value;
  return uses;
}

int32_t hetc_graph_node_param_count(const hetc_node_t *node) {
  switch (node->op) {
    case HETC_OP_CONV2D:
    case HETC_OP_DENSE: return node->attrs.has_bias ? 2 : 1;
    case HETC_OP_BIAS_ADD: return 1;
    case HETC_OP_BATCH_NORM: return 4;
    case HETC_OP_NORMALIZE: return node->attrs.normalize.affine ? 2 : 0;
    default: return 0;
  }
}

const hetc_param_t *hetc_graph_node_param(const hetc_node_t *node, int32_t index) {
  if (index < 0 || index >= hetc_graph_node_param_count(node) || node->op == HETC_OP_BATCH_NORM)
    return NULL;
  /* bias_add's only param lives in the bias slot. */
  return &node->params[node->op == HETC_OP_BIAS_ADD ? HETC_PARAM_BIAS : index];
}

hetc_status_t hetc_node_make_affine(hetc_node_t *node, int64_t channels, const double *scale, const double *shift,
                                    int64_t count, int shapes_only) {
  float *params[4] = {NULL, NULL, NULL, NULL};
  for (int k = 0; k < 4 && !shapes_only; ++k) {
    if (!(params[k] = malloc(sizeof(float) * (size_t)channels))) {
      for (int j = 0; j < k; ++j) free(params[j]);
      return hetc_status_new(HETC_STATUS_OUT_OF_MEMORY, "an affine map of %lld channels", (long long)channels);
    }
  }
  for (int64_t i = 0; !shapes_only && i < channels; ++i) {
    params[HETC_PARAM_GAMMA][i] = (float)(scale[count == 1 ? 0 : i] * sqrt(1.0 + HETC_AFFINE_EPSILON));
    params[HETC_PARAM_BETA][i] = (float)shift[count == 1 ? 0 : i];
    params[HETC_PARAM_MEAN][i] = 0.0f;
    params[HETC_PARAM_VAR][i] = 1.0f;
  }
  for (int k = 0; k < HETC_PARAM_SLOTS; ++k) {
    free(node->params[k].data);
    node->params[k] = (hetc_param_t){1, {channels}, channels, params[k]};
  }
  node->op = HETC_OP_BATCH_NORM;
  node->attrs = hetc_node_default_attrs(HETC_OP_BATCH_NORM);
  node->attrs.epsilon = HETC_AFFINE_EPSILON;
  return NULL;
}

int32_t hetc_op_activation(hetc_op_t op) {
  switch (op) {
    case HETC_OP_RELU: return HETC_PLUGIN_ACT_RELU;
    case HETC_OP_RELU6: return HETC_PLUGIN_ACT_RELU6;
    case HETC_OP_SIGMOID: return HETC_PLUGIN_ACT_SIGMOID;
    case HETC_OP_TANH: return HETC_PLUGIN_ACT_TANH;
    case HETC_OP_ELU: return HETC_PLUGIN_ACT_ELU;
    case HETC_OP_SOFTPLUS: return HETC_PLUGIN_ACT_SOFTPLUS;
    case HETC_OP_EXP: return HETC_PLUGIN_ACT_EXP;
    case HETC_OP_LOG: return HETC_PLUGIN_ACT_LOG;
    case HETC_OP_SILU: return HETC_PLUGIN_ACT_SILU;
    case HETC_OP_HARDSWISH: return HETC_PLUGIN_ACT_HARDSWISH;
    case HETC_OP_HARDSIGMOID: return HETC_PLUGIN_ACT_HARDSIGMOID;
    case HETC_OP_GELU: return HETC_PLUGIN_ACT_GELU;
    case HETC_OP_GELU_TANH: return HETC_PLUGIN_ACT_GELU_TANH;
    case HETC_OP_ERF: return HETC_PLUGIN_ACT_ERF;
    default: return HETC_PLUGIN_ACT_NONE;
  }
}

hetc_plugin_workload_t hetc_layout_transform_workload(const hetc_plugin_tensor_t *input, hetc_plugin_layout_t layout) {
  hetc_plugin_workload_t workload;
  memset(&workload, 0, sizeof(workload));
  workload.op = HETC_PLUGIN_OP_LAYOUT_TRANSFORM;
  workload.num_inputs = 1;
  workload.inputs = input;
  workload.output = *input;
  workload.output.layout = layout;
  return workload;
}

hetc_status_t hetc_graph_node_workload(const hetc_graph_t *graph,
                                       int32_t node_index,
                                       hetc_plugin_tensor_t *inputs_storage,
                                       hetc_plugin_workload_t *out_workload) {
  const hetc_node_t *node = &graph->nodes[node_index];
  hetc_plugin_workload_t w;
  memset(&w, 0, sizeof(w));
  for (int32_t i = 0; i < node->num_inputs; ++i) {
    inputs_storage[i] = graph->values[node->inputs[i]].type;
  }
  w.num_inputs = node->num_inputs;
  w.inputs = inputs_storage;
  w.output = graph->values[node->output].type;
  const hetc_node_attrs_t *a = &node->attrs;
  switch (node->op) {
    case HETC_OP_CONV2D:
    case HETC_OP_MAX_POOL2D:
    case HETC_OP_AVG_POOL2D:
      w.op = node->op == HETC_OP_CONV2D       ? HETC_PLUGIN_OP_CONV2D
             : node->op == HETC_OP_MAX_POOL2D ? HETC_PLUGIN_OP_MAX_POOL2D
                                              : HETC_PLUGIN_OP_AVG_POOL2D;
      memcpy(w.kernel, a->kernel, sizeof(w.kernel));
      memcpy(w.strides, a->strides, sizeof(w.strides));
      memcpy(w.padding, a->padding, sizeof(w.padding));
      memcpy(w.dilation, a->dilation, sizeof(w.dilation));
      w.groups = a->groups;
      w.ceil_mode = a->ceil_mode;
      w.count_include_pad = a->count_include_pad;
      w.epilogue = node->epilogue;
      w.epilogue.has_bias = node->op == HETC_OP_CONV2D && a->has_bias;
      break;
    case HETC_OP_DENSE:
      w.op = HETC_PLUGIN_OP_DENSE;
      w.epilogue = node->epilogue;
      w.epilogue.has_bias = a->has_bias;
      break;
    case HETC_OP_BIAS_ADD: w.op = HETC_PLUGIN_OP_BIAS_ADD; break;
    case HETC_OP_RELU:
    case HETC_OP_RELU6:
    case HETC_OP_SIGMOID:
    case HETC_OP_TANH:
    case HETC_OP_ELU:
    case HETC_OP_SOFTPLUS:
    case HETC_OP_EXP:
    case HETC_OP_LOG:
    case HETC_OP_SILU:
    case HETC_OP_HARDSWISH:
    case HETC_OP_HARDSIGMOID:
    case HETC_OP_GELU:
    case HETC_OP_GELU_TANH:
    case HETC_OP_ERF:
      w.op = HETC_PLUGIN_OP_ELEMENTWISE;
      w.activation = hetc_op_activation(node->op);
      break;
    case HETC_OP_ADD:
    case HETC_OP_MULTIPLY:
    case HETC_OP_DIVIDE:
      w.op = HETC_PLUGIN_OP_ELEMENTWISE;
      w.binary = node->op == HETC_OP_ADD        ? HETC_PLUGIN_BINARY_ADD
                 : node->op == HETC_OP_MULTIPLY ? HETC_PLUGIN_BINARY_MUL
                                                : HETC_PLUGIN_BINARY_DIV;
      break;
    case HETC_OP_GLOBAL_AVG_POOL2D: w.op = HETC_PLUGIN_OP_GLOBAL_AVG_POOL2D; break;
    case HETC_OP_CONCAT:
      w.op = HETC_PLUGIN_OP_CONCAT;
      w.axis = a->axis;
      break;
    case HETC_OP_FLATTEN:
    case HETC_OP_RESHAPE: w.op = HETC_PLUGIN_OP_LAYOUT_TRANSFORM; break;
    case HETC_OP_SOFTMAX:
    case HETC_OP_LOG_SOFTMAX:
      w.op = node->op == HETC_OP_SOFTMAX ? HETC_PLUGIN_OP_SOFTMAX : HETC_PLUGIN_OP_LOG_SOFTMAX;
      w.axis = a->axis;
      break;
    case HETC_OP_RESIZE:
      w.op = HETC_PLUGIN_OP_RESIZE;
      w.params.resize = a->resize;
      break;
    case HETC_OP_NORMALIZE:
      w.op = HETC_PLUGIN_OP_NORMALIZE;
      w.params.normalize = a->normalize;
      break;
    case HETC_OP_MATMUL: w.op = HETC_PLUGIN_OP_MATMUL; break;
    case HETC_OP_TRANSPOSE:
      w.op = HETC_PLUGIN_OP_TRANSPOSE;
      for (int32_t d = 0; d < a->perm_rank; ++d) w.axis |= HETC_PLUGIN_PERM_PACK_ONE(a->perm[d], d);
      break;
    case HETC_OP_BATCH_NORM:
    case HETC_OP_COUNT:
      return hetc_status_new(HETC_STATUS_UNSUPPORTED,
                             "node '%s': op %s has no kernel workload", node->name,
                             hetc_op_name(node->op));
  }
  *out_workload = w;
  return NULL;
}

double hetc_graph_node_flops(const hetc_graph_t *graph, int32_t node_index) {
  const hetc_node_t *node = &graph->nodes[node_index];
  double outputs = (double)hetc_tensor_element_count(&graph->values[node->output].type);
  if (node->op == HETC_OP_CONV2D) {
    const hetc_plugin_tensor_t *in = &graph->values[node->inputs[0]].type;
    double reduction = (double)(in->shape[1] / node->attrs.groups) *
                       node->attrs.kernel[0] * node->attrs.kernel[1];
    return 2.0 * outputs * reduction;
  }
  if (node->op == HETC_OP_DENSE) {
    const hetc_plugin_tensor_t *in = &graph->values[node->inputs[0]].type;
    return 2.0 * outputs * (double)in->shape[1];
  }
  return outputs;
}

hetc_status_t hetc_graph_sort_topologically(hetc_graph_t *g, int32_t *carried, int32_t *out_cycle_node) {
  const int32_t n = g->num_nodes, ni = g->num_inputs;
  int32_t *pending = calloc((size_t)n + 1, sizeof(int32_t));
  int32_t *order = calloc((size_t)n + 1, sizeof(int32_t));
  int32_t *position = calloc((size_t)n + 1, sizeof(int32_t));
  hetc_status_t status = NULL;
  if (!pending || !order || !position) {
    status = hetc_status_new(HETC_STATUS_OUT_OF_MEMORY, "sorting the graph");
    goto done;
  }
  /* Count each node's inputs that come from other nodes; a node is ready
   * when that count reaches zero. O(n * fan-in) per pass over consumers
   * would be quadratic, so consumers are found through a CSR index. */
  int32_t *consumer_start = calloc((size_t)n + 2, sizeof(int32_t));
  int64_t edges = 0;
  for (int32_t i = 0; i < n; ++i) edges += g->nodes[i].num_inputs;
  int32_t *consumers = calloc((size_t)edges + 1, sizeof(int32_t));
  if (!consumer_start || !consumers) {
    free(consumer_start);
    free(consumers);
    status = hetc_status_new(HETC_STATUS_OUT_OF_MEMORY, "sorting the graph");
    goto done;
  }
  for (int32_t i = 0; i < n; ++i) {
    for (int32_t k = 0; k < g->nodes[i].num_inputs; ++k) {
      int32_t v = g->nodes[i].inputs[k];
      if (v >= ni) {
        ++pending[i];
        ++consumer_start[v - ni + 1];
      }
    }
  }
  for (int32_t i = 0; i < n; ++i) consumer_start[i + 1] += consumer_start[i];
  {
    int32_t *fill = calloc((size_t)n + 1, sizeof(int32_t));
    if (!fill) {
      free(consumer_start);
      free(consumers);
      status = hetc_status_new(HETC_STATUS_OUT_OF_MEMORY, "sorting the graph");
      goto done;
    }
    for (int32_t i = 0; i < n; ++i) {
      for (int32_t k = 0; k < g->nodes[i].num_inputs; ++k) {
        int32_t v = g->nodes[i].inputs[k];
        if (v >= ni) consumers[consumer_start[v - ni] + fill[v - ni]++] = i;
      }
    }
    free(fill);
  }
  int32_t head = 0, tail = 0;
  for (int32_t i = 0; i < n; ++i)
    if (pending[i] == 0) order[tail++] = i;
  while (head < tail) {
    int32_t producer = order[head++];
    for (int32_t c = consumer_start[producer]; c < consumer_start[producer + 1]; ++c) {
      if (--pending[consumers[c]] == 0) order[tail++] = consumers[c];
    }
  }
  free(consumer_start);
  free(consumers);
  if (tail < n) {
    /* Every node left has an input from another node left, so walking back
     * along such inputs n times from any of them ends on a cycle; report
     * the cycle's node that comes first in /nodes (not a node that merely
     * reads from the cycle). */
    int32_t at = 0;
    while (pending[at] == 0) ++at;
    for (int32_t step = 0; step < n; ++step) {
      int32_t next = -1;
      for (int32_t k = 0; next < 0 && k < g->nodes[at].num_inputs; ++k) {
        int32_t v = g->nodes[at].inputs[k];
        if (v >= ni && pending[v - ni] > 0) next = v - ni;
      }
      if (next < 0) break; /* cannot happen: a node left has such an input */
      at = next;
    }
    int32_t first = at;
    for (int32_t walk = at, step = 0; step < n; ++step) {
      int32_t next = -1;
      for (int32_t k = 0; next < 0 && k < g->nodes[walk].num_inputs; ++k) {
        int32_t v = g->nodes[walk].inputs[k];
        if (v >= ni && pending[v - ni] > 0) next = v - ni;
      }
      if (next < 0 || next == at) break;
      walk = next;
      if ((carried ? carried[walk] : walk) < (carried ? carried[first] : first)) first = walk;
    }
    *out_cycle_node = first;
    status = hetc_status_new(HETC_STATUS_BAD_INPUT, "node \"%s\" is part of a cycle", g->nodes[first].name);
    goto done;
  }
  /* Permute nodes and renumber their values: value ni + k is node k. */
  hetc_node_t *sorted = calloc((size_t)n + 1, sizeof(hetc_node_t));
  hetc_value_t *values = calloc((size_t)g->num_values + 1, sizeof(hetc_value_t));
  int32_t *carried_sorted = calloc((size_t)n + 1, sizeof(int32_t));
  if (!sorted || !values || !carried_sorted) {
    free(sorted);
    free(values);
    free(carried_sorted);
    status = hetc_status_new(HETC_STATUS_OUT_OF_MEMORY, "sorting the graph");
    goto done;
  }
  for (int32_t k = 0; k < n; ++k) position[order[k]] = k;
  memcpy(values, g->values, sizeof(hetc_value_t) * (size_t)ni);
  for (int32_t k = 0; k < n; ++k) {
    sorted[k] = g->nodes[order[k]];
    if (carried) carried_sorted[k] = carried[order[k]];
    values[ni + k] = g->values[ni + order[k]];
    values[ni + k].producer = k;
    sorted[k].output = ni + k;
    for (int32_t i = 0; i < sorted[k].num_inputs; ++i) {
      int32_t v = sorted[k].inputs[i];
      if (v >= ni) sorted[k].inputs[i] = ni + position[v - ni];
    }
  }
  for (int32_t o = 0; o < g->num_outputs; ++o) {
    int32_t v = g->outputs[o];
    if (v >= ni) g->outputs[o] = ni + position[v - ni];
  }
  free(g->nodes);
  free(g->values);
  if (carried) memcpy(carried, carried_sorted, sizeof(int32_t) * (size_t)n);
  free(carried_sorted);
  g->nodes = sorted;
  g->values = values;
done:
  free(pending);
  free(order);
  free(position);
  return status;
}
