/* `hetc tasks model.json`: the tunable tasks of a model. */
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"
#include "graph/passes.h"
#include "graph/tasks.h"
#include "model/model.h"

int hetc_cli_tasks(int argc, char **argv) {
  if (argc != 1 || argv[0][0] == '-') {
    fprintf(stderr, "usage: hetc tasks MODEL.json\n");
    return HETC_EXIT_USAGE;
  }
  hetc_graph_t *graph = NULL;
  hetc_task_list_t *tasks = NULL;
  hetc_status_t status = hetc_model_load_file(argv[0], &graph);
  if (!status) status = hetc_graph_optimize(graph);
  if (!status) status = hetc_graph_extract_tasks(graph, &tasks);
  if (status) {
    hetc_graph_free(graph);
    return hetc_cli_report(status);
  }
  double total_flops = 0;
  int32_t total_nodes = 0;
  printf("%s: %d nodes after fusion, %d tasks\n", graph->name, graph->num_nodes, tasks->count);
  printf("%4s  %5s  %10s  %s\n", "task", "count", "MFLOP", "workload");
  for (int32_t t = 0; t < tasks->count; ++t) {
    const hetc_task_t *task = &tasks->tasks[t];
    printf("%4d  %5d  %10.2f  %s\n", t + 1, task->count, task->flops / 1e6, task->key);
    total_flops += task->flops * task->count;
    total_nodes += task->count;
  }
  printf("total: %d nodes in %d tasks, %.3f GFLOP per inference\n", total_nodes, tasks->count,
         total_flops / 1e9);
  hetc_task_list_free(tasks);
  hetc_graph_free(graph);
  return 0;
}
