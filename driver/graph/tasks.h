/* driver/graph/tasks.h -- tunable tasks: the distinct fused workloads. */
#ifndef HETC_DRIVER_GRAPH_TASKS_H_
#define HETC_DRIVER_GRAPH_TASKS_H_

#include "graph/graph.h"

#define HETC_TASK_KEY_SIZE 256

typedef struct hetc_task_t {
  /* Layout-free workload key, e.g.
   * "conv2d n1 c64 h56 w56 k64 r3x3 s1x1 p1,1,1,1 d1x1 g1 +bias+relu f32". */
  char key[HETC_TASK_KEY_SIZE];
  hetc_op_t op;
  int32_t first_node; /* a node of the graph with this workload */
  int32_t count;      /* nodes sharing the workload */
  double flops;       /* of one node */
} hetc_task_t;

typedef struct hetc_task_list_t {
  int32_t count;
  hetc_task_t *tasks; /* owned */
} hetc_task_list_t;

/* Extracts the tasks of an optimized graph (conv2d and dense nodes), in
 * order of first appearance. *out_tasks is released with
 * hetc_task_list_free. */
hetc_status_t hetc_graph_extract_tasks(const hetc_graph_t *graph, hetc_task_list_t **out_tasks);
void hetc_task_list_free(hetc_task_list_t *tasks);

/* Describes task `task` (0-based) of `tasks`, extracted from `graph`, as
 * the workload of its first node (hetc_graph_node_workload: layouts
 * ROW_MAJOR; inputs_storage holds HETC_MAX_NODE_INPUTS entries and
 * outlives the workload). NOT_FOUND when task is out of range. */
hetc_status_t hetc_graph_task_workload(const hetc_graph_t *graph, const hetc_task_list_t *tasks,
                                       int32_t task, hetc_plugin_tensor_t *inputs_storage,
                                       hetc_plugin_workload_t *out_workload);

/* The workload key of a conv2d or dense workload. */
void hetc_workload_key(const hetc_plugin_workload_t *workload, char *out_key, size_t size);

/* FLOPs of one conv2d or dense workload (two per multiply-add). */
double hetc_workload_flops(const hetc_plugin_workload_t *workload);

/* The workload a key names, the inverse of hetc_workload_key (layouts
 * row-major). out_inputs holds 2 tensors and outlives the workload. A key
 * that is not one gives INVALID_ARGUMENT quoting it: keys come from records
 * files, which users may edit. */
hetc_status_t hetc_workload_from_key(const char *key, hetc_plugin_workload_t *out_workload,
                                     hetc_plugin_tensor_t *out_inputs);

#endif /* HETC_DRIVER_GRAPH_TASKS_H_ */
