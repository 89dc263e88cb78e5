/* `hetc space MODEL.json --task N --target T [--overrides FILE]`: prints
 * one task's space on a backend, every template's knobs with their kinds
 * and sizes (README.md, "Tuning"). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"

static const char usage[] =
    "usage: hetc space MODEL.json|MODEL.onnx --task N --target T [--overrides FILE]\n"
    "  --task N   the task's number as `hetc tasks` prints it, 1 or more\n" HETC_CLI_INPUT_SHAPE_USAGE;

int hetc_cli_space(int argc, char **argv) {
  const char *target = NULL, *overrides_path = NULL;
  long long task_number = 0;
  hetc_cli_model_t model_arg = {0};
  hetc_cli_args_t args;
  hetc_cli_args_init(&args, "space", usage, argc, argv);
  while (hetc_cli_args_next(&args))
    (void)(hetc_cli_count(&args, "--task", 1, INT32_MAX, &task_number) ||
           hetc_cli_text(&args, "--target", "a target name", &target) ||
           hetc_cli_text(&args, "--overrides", "a path", &overrides_path) ||
           hetc_cli_input_shape(&args, &model_arg) || hetc_cli_positional(&args, "MODEL.json", &model_arg.path));
  if (!model_arg.path) hetc_cli_error(&args, "no MODEL.json given");
  if (!task_number) hetc_cli_error(&args, "--task is required");
  if (!target) hetc_cli_error(&args, "--target is required");
  if (args.failed) return HETC_EXIT_USAGE;

  hetc_model_t *model = NULL;
  hetc_task_info_t *tasks = NULL;
  int32_t count = 0;
  hetc_context_t *context = NULL;
  hetc_task_space_t *space = NULL;
  int32_t plugin = -1;
  const int32_t task = (int32_t)task_number - 1;

  hetc_status_t status = hetc_cli_model_load(&model_arg, &model);
  if (!status) status = hetc_model_tasks(model, &tasks, &count, NULL);
  if (!status && task >= count)
    status = hetc_status_new(HETC_STATUS_BAD_INPUT, "--task %lld: %s has %d tasks (1..%d)", task_number, model_arg.path,
                             count, count);
  if (!status) status = hetc_context_create(&context);
  if (!status) status = hetc_model_task_space(context, model, task, target, overrides_path, &space);
  if (!status) status = hetc_context_target(context, target, &plugin);
  if (!status) {
    const hetc_plugin_device_t *device = hetc_context_plugin_device(context, plugin, 0);
    printf("%s task %d of %d: %s (%d node%s)\n", hetc_model_name(model), task + 1, count, tasks[task].key,
           tasks[task].count, tasks[task].count == 1 ? "" : "s");
    printf("target %s, device 0: %s\n", target, device && device->name ? device->name : "?");
    status = hetc_task_space_print(space, stdout);
  }
  hetc_task_space_free(space);
  hetc_context_destroy(context);
  hetc_free(tasks);
  hetc_model_free(model);
  return hetc_cli_report(status);
}
