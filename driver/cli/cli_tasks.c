/* `hetc tasks model.json`: the tunable tasks of a model. */
#include <stdio.h>

#include "cli/cli.h"

int hetc_cli_tasks(int argc, char **argv) {
  hetc_cli_model_t model_arg = {0};
  hetc_cli_args_t args;
  hetc_cli_args_init(&args, "tasks", "usage: hetc tasks MODEL.json|MODEL.onnx [--input-shape NAME=DIMS[,...]]\n", argc, argv);
  while (hetc_cli_args_next(&args))
    (void)(hetc_cli_input_shape(&args, &model_arg) || hetc_cli_positional(&args, "MODEL.json", &model_arg.path));
  if (!model_arg.path) hetc_cli_error(&args, "no MODEL.json given");
  if (args.failed) return HETC_EXIT_USAGE;
  hetc_model_t *model = NULL;
  hetc_task_info_t *tasks = NULL;
  int32_t count = 0, fused_nodes = 0;
  hetc_status_t status = hetc_cli_model_load(&model_arg, &model);
  if (!status) status = hetc_model_tasks(model, &tasks, &count, &fused_nodes);
  if (status) {
    hetc_model_free(model);
    return hetc_cli_report(status);
  }
  double total_flops = 0;
  int32_t total_nodes = 0;
  printf("%s: %d nodes after fusion, %d tasks\n", hetc_model_name(model), fused_nodes, count);
  printf("%4s  %5s  %10s  %s\n", "task", "count", "MFLOP", "workload");
  for (int32_t t = 0; t < count; ++t) {
    printf("%4d  %5d  %10.2f  %s\n", t + 1, tasks[t].count, tasks[t].flops / 1e6, tasks[t].key);
    total_flops += tasks[t].flops * tasks[t].count;
    total_nodes += tasks[t].count;
  }
  printf("total: %d nodes in %d tasks, %.3f GFLOP per inference\n", total_nodes, count,
         total_flops / 1e9);
  hetc_free(tasks);
  hetc_model_free(model);
  return 0;
}
