#include "graph/tasks.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *activation_suffix(int32_t activation) {
  switch (activation) {
    case HETC_PLUGIN_ACT_RELU: return "+relu";
    case HETC_PLUGIN_ACT_RELU6: return "+relu6";
    case HETC_PLUGIN_ACT_SIGMOID: return "+sigmoid";
    case HETC_PLUGIN_ACT_TANH: return "+tanh";
    default: return "";
  }
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

hetc_status_t hetc_graph_extract_tasks(const hetc_graph_t *graph, hetc_task_list_t **out_tasks) {
  hetc_task_list_t *list = calloc(1, sizeof(*list));
  if (list) list->tasks = calloc((size_t)graph->num_nodes + 1, sizeof(hetc_task_t));
  if (!list || !list->tasks) {
    hetc_task_list_free(list);
    return hetc_status_new(HETC_STATUS_OUT_OF_MEMORY, "task extraction");
  }
  for (int32_t k = 0; k < graph->num_nodes; ++k) {
    const hetc_node_t *node = &graph->nodes[k];
    if (node->op != HETC_OP_CONV2D && node->op != HETC_OP_DENSE) continue;
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
