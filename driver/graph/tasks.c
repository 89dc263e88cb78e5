#include "graph/tasks.h"

#include "graph/infer.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The key's suffix of each activation an epilogue may apply. */
static const struct {
  int32_t activation;
  const char *suffix;
} epilogue_suffixes[] = {
    {HETC_PLUGIN_ACT_RELU, "+relu"},
    {HETC_PLUGIN_ACT_RELU6, "+relu6"},
    {HETC_PLUGIN_ACT_SIGMOID, "+sigmoid"},
    {HETC_PLUGIN_ACT_TANH, "+tanh"},
    {HETC_PLUGIN_ACT_SILU, "+silu"},
    {HETC_PLUGIN_ACT_HARDSWISH, "+hardswish"},
    {HETC_PLUGIN_ACT_HARDSIGMOID, "+hardsigmoid"},
    {HETC_PLUGIN_ACT_GELU, "+gelu"},
    {HETC_PLUGIN_ACT_GELU_TANH, "+gelu_tanh"},
};
#define NUM_EPILOGUE_SUFFIXES ((int32_t)(sizeof(epilogue_suffixes) / sizeof(epilogue_suffixes[0])))

static const char *activation_suffix(int32_t activation) {
  for (int32_t a = 0; a < NUM_EPILOGUE_SUFFIXES; ++a)
    if (epilogue_suffixes[a].activation == activation) return epilogue_suffixes[a].suffix;
  return "";
}

void hetc_workload_key(const hetc_plugin_workload_t *w, char *out_key, size_t size) {
  const hetc_plugin_tensor_t *in = &w->inputs[0];
  const char *bias = w->epilogue.has_bias ? "+bias" : "";
  const char *residual = w->epilogue.has_residual ? "+residual" : "";
  const char *act = activation_suffix(w->epilogue.activation);
  if (w->op == HETC_PLUGIN_OP_CONV2D) {
    snprintf(out_key, size,
             "conv2d n%lld c%lld h%lld w%lld k%lld r%dx%d s%dx%d p%d,%d,%d,%d d%dx%d g%d%s%s%s f32",
             (long long)in->shape[0], (long long)in->shape[1], (long long)in->shape[2],
             (long long)in->shape[3], (long long)w->output.shape[1], w->kernel[0], w->kernel[1],
             w->strides[0], w->strides[1], w->padding[0], w->padding[1], w->padding[2],
             w->padding[3], w->dilation[0], w->dilation[1], w->groups, bias, residual, act);
  } else {
    snprintf(out_key, size, "dense n%lld k%lld units%lld%s%s%s f32", (long long)in->shape[0],
             (long long)in->shape[1], (long long)w->output.shape[1], bias, residual, act);
  }
}

double hetc_workload_flops(const hetc_plugin_workload_t *w) {
  const hetc_plugin_tensor_t *in = &w->inputs[0];
  if (w->op == HETC_PLUGIN_OP_CONV2D)
    return 2.0 * (double)w->output.shape[0] * (double)w->output.shape[1] * (double)w->output.shape[2] *
           (double)w->output.shape[3] * (double)(in->shape[1] / (w->groups ? w->groups : 1)) * w->kernel[0] *
           w->kernel[1];
  return 2.0 * (double)in->shape[0] * (double)in->shape[1] * (double)w->output.shape[1];
}

/* Reads the "+bias", "+residual" and "+<activation>" suffixes and the
 * closing " f32"; returns 0 unless exactly those follow. */
static int parse_epilogue(const char *rest, hetc_plugin_epilogue_t *e) {
  if (!strncmp(rest, "+bias", 5)) {
    e->has_bias = 1;
    rest += 5;
  }
  if (!strncmp(rest, "+residual", 9)) {
    e->has_residual = 1;
    rest += 9;
  }
  for (int32_t a = 0; a < NUM_EPILOGUE_SUFFIXES; ++a) {
    const size_t n = strlen(epilogue_suffixes[a].suffix);
    if (!strncmp(rest, epilogue_suffixes[a].suffix, n) && rest[n] == ' ') {
      e->activation = epilogue_suffixes[a].activation;
      rest += n;
      break;
    }
  }
  return !strcmp(rest, " f32");
}

hetc_status_t hetc_workload_from_key(const char *key, hetc_plugin_workload_t *w, hetc_plugin_tensor_t *inputs) {
  memset(w, 0, sizeof(*w));
  memset(inputs, 0, 2 * sizeof(*inputs));
  long long n, c, h, wd, k, units;
  int consumed = 0, ok = 0;
  const hetc_plugin_tensor_t tensor = {HETC_PLUGIN_DTYPE_FLOAT32, 4, {0}, {HETC_PLUGIN_LAYOUT_ROW_MAJOR, 0}};
  if (sscanf(key, "conv2d n%lld c%lld h%lld w%lld k%lld r%dx%d s%dx%d p%d,%d,%d,%d d%dx%d g%d%n", &n, &c, &h,
             &wd, &k, &w->kernel[0], &w->kernel[1], &w->strides[0], &w->strides[1], &w->padding[0],
             &w->padding[1], &w->padding[2], &w->padding[3], &w->dilation[0], &w->dilation[1], &w->groups,
             &consumed) == 16 && consumed > 0 && parse_epilogue(key + consumed, &w->epilogue)) {
    w->op = HETC_PLUGIN_OP_CONV2D;
    inputs[0] = tensor;
    inputs[0].shape[0] = n, inputs[0].shape[1] = c, inputs[0].shape[2] = h, inputs[0].shape[3] = wd;
    int64_t oh = hetc_window_output_extent(h, w->kernel[0], w->strides[0], w->padding[0], w->padding[2],
                                           w->dilation[0], 0);
    int64_t ow = hetc_window_output_extent(wd, w->kernel[1], w->strides[1], w->padding[1], w->padding[3],
                                           w->dilation[1], 0);
    w->output = tensor;
    w->output.shape[0] = n, w->output.shape[1] = k, w->output.shape[2] = oh, w->output.shape[3] = ow;
    ok = n > 0 && c > 0 && k > 0 && oh > 0 && ow > 0 && w->groups > 0 && c % w->groups == 0 &&
         k % w->groups == 0 && w->strides[0] > 0 && w->strides[1] > 0 && w->dilation[0] > 0 &&
         w->dilation[1] > 0 && w->padding[0] >= 0 && w->padding[1] >= 0 && w->padding[2] >= 0 &&
         w->padding[3] >= 0;
  } else if (sscanf(key, "dense n%lld k%lld units%lld%n", &n, &k, &units, &consumed) == 3 && consumed > 0 &&
             parse_epilogue(key + consumed, &w->epilogue)) {
    w->op = HETC_PLUGIN_OP_DENSE;
    inputs[0] = (hetc_plugin_tensor_t){HETC_PLUGIN_DTYPE_FLOAT32, 2, {n, k}, {HETC_PLUGIN_LAYOUT_ROW_MAJOR, 0}};
    w->output = (hetc_plugin_tensor_t){HETC_PLUGIN_DTYPE_FLOAT32, 2, {n, units}, {HETC_PLUGIN_LAYOUT_ROW_MAJOR, 0}};
    ok = n > 0 && k > 0 && units > 0;
  }
  if (!ok) return hetc_status_new(HETC_STATUS_INVALID_ARGUMENT, "'%s' is not a workload key", key);
  w->num_inputs = 1 + w->epilogue.has_residual;
  inputs[1] = w->output;
  w->inputs = inputs;
  char again[HETC_TASK_KEY_SIZE];
  hetc_workload_key(w, again, sizeof(again));
  if (strcmp(again, key))
    return hetc_status_new(HETC_STATUS_INVALID_ARGUMENT, "'%s' is not a workload key (read back as '%s')", key, again);
  return NULL;
}

hetc_status_t hetc_graph_extract_tasks(const hetc_graph_t *graph, hetc_task_list_t **out_tasks) {
  hetc_task_list_t *list = calloc(1, sizeof(*list));
  if (list) list->tasks = calloc((size_t)graph->num_nodes + 1, sizeof(hetc_task_t));
  if (!list || !list->tasks) {
    hetc_task_list_free(list);
    return hetc_status_new(HETC_STATUS_OUT_OF_MEMORY, "task extraction");
  }
  for (int32_t k = 0; k < graph->num_nodes; ++k) {
    const hetc_node_t *node = &graph->nodes[k];
    if (!hetc_op_is_tunable(node->op)) continue;
    hetc_plugin_tensor_t inputs[HETC_MAX_NODE_INPUTS];
    hetc_plugin_workload_t workload;
    hetc_status_t status = hetc_graph_node_workload(graph, k, inputs, &workload);
    if (status) {
      hetc_task_list_free(list);
      return status;
    }
    char key[HETC_TASK_KEY_SIZE];
    hetc_workload_key(&workload, key, sizeof(key));
    int32_t t = 0;
    while (t < list->count && strcmp(list->tasks[t].key, key) != 0) ++t;
    if (t == list->count) {
      hetc_task_t *task = &list->tasks[list->count++];
      memcpy(task->key, key, sizeof(key));
      task->op = node->op;
      task->first_node = k;
      task->flops = hetc_graph_node_flops(graph, k);
    }
    ++list->tasks[t].count;
  }
  *out_tasks = list;
  return NULL;
}

void hetc_task_list_free(hetc_task_list_t *tasks) {
  if (!tasks) return;
  free(tasks->tasks);
  free(tasks);
}

hetc_status_t hetc_graph_task_workload(const hetc_graph_t *graph, const hetc_task_list_t *tasks,
                                       int32_t task, hetc_plugin_tensor_t *inputs_storage,
                                       hetc_plugin_workload_t *out_workload) {
  if (task < 0 || task >= tasks->count)
    return hetc_status_new(HETC_STATUS_NOT_FOUND, "task %d outside the %d tasks", task,
                           tasks->count);
  return hetc_graph_node_workload(graph, tasks->tasks[task].first_node, inputs_storage,
                                  out_workload);
}
