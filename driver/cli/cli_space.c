/* `hetc space MODEL.json --task N --target T [--overrides FILE]`: prints
 * one task's space on a backend, every template's knobs with their kinds
 * and sizes (README.md, "Tuning"). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "graph/passes.h"
#include "graph/tasks.h"
#include "plugins/registry.h"
#include "space/space_override.h"
#include "space/task_space.h"
#include "kernel/plugin_calls.h"

static const char usage[] =
    "usage: hetc space MODEL.json --task N --target T [--overrides FILE]\n"
    "  --task N   the task's number as `hetc tasks` prints it, 1 or more\n";

/* The user's files are wrong, not hetc: exit status 2. */
static hetc_status_t as_bad_input(hetc_status_t status) {
  return status && hetc_status_code(status) == HETC_STATUS_INVALID_ARGUMENT
             ? hetc_status_recode(status, HETC_STATUS_BAD_INPUT)
             : status;
}

int hetc_cli_space(int argc, char **argv) {
  const char *model_path = NULL, *target = NULL, *overrides_path = NULL;
  long long task_number = 0;
  hetc_cli_args_t args;
  hetc_cli_args_init(&args, "space", usage, argc, argv);
  while (hetc_cli_args_next(&args))
    (void)(hetc_cli_count(&args, "--task", 1, INT32_MAX, &task_number) ||
           hetc_cli_text(&args, "--target", "a target name", &target) ||
           hetc_cli_text(&args, "--overrides", "a path", &overrides_path) ||
           hetc_cli_positional(&args, "MODEL.json", &model_path));
  if (!model_path) hetc_cli_error(&args, "no MODEL.json given");
  if (!task_number) hetc_cli_error(&args, "--task is required");
  if (!target) hetc_cli_error(&args, "--target is required");
  if (args.failed) return HETC_EXIT_USAGE;

  hetc_model_t *model = NULL;
  hetc_graph_t *graph = NULL;
  hetc_task_list_t *tasks = NULL;
  hetc_space_overrides_t *overrides = NULL;
  hetc_registry_t *registry = NULL;
  hetc_plugin_entry_t *entry = NULL;
  hetc_task_space_t *space = NULL;
  hetc_plugin_tensor_t inputs[HETC_MAX_NODE_INPUTS];
  hetc_plugin_workload_t workload;
  const int32_t task = (int32_t)task_number - 1;

  hetc_status_t status = hetc_model_load(model_path, &model);
  if (!status) status = hetc_graph_clone(model, &graph);
  if (!status) status = hetc_graph_optimize(graph);
  if (!status) status = hetc_graph_extract_tasks(graph, &tasks);
  if (!status && task >= tasks->count)
    status = hetc_status_new(HETC_STATUS_BAD_INPUT, "--task %lld: %s has %d tasks (1..%d)",
                             task_number, model_path, tasks->count, tasks->count);
  if (!status && overrides_path)
    status = as_bad_input(hetc_space_overrides_load(overrides_path, &overrides));
  if (!status) status = hetc_registry_open(&registry);
  if (!status) status = hetc_registry_target(registry, target, &entry);
  if (!status) status = hetc_graph_task_workload(graph, tasks, task, inputs, &workload);
  if (!status && !hetc_entry_supports(entry, 0, &workload))
    status = hetc_status_new(HETC_STATUS_UNSUPPORTED, "target '%s' does not support task %d (%s)",
                             target, task + 1, tasks->tasks[task].key);
  if (!status)
    status = as_bad_input(
        hetc_task_space_create(entry->plugin, entry->instance, 0, &workload, overrides, &space));
  if (!status && overrides) {
    /* One task: every template the overrides name must be one it offers. */
    const char *names[64];
    int32_t count = hetc_task_space_template_count(space);
    for (int32_t t = 0; t < count && t < 64; ++t) names[t] = hetc_task_space_template_name(space, t);
    status = as_bad_input(hetc_space_overrides_check_templates(overrides, target, names, count < 64 ? count : 64));
  }
  if (!status) {
    const hetc_plugin_device_t *device = hetc_entry_device(entry, 0);
    printf("%s task %d of %d: %s (%d node%s)\n", hetc_model_name(model), task + 1, tasks->count,
           tasks->tasks[task].key, tasks->tasks[task].count,
           tasks->tasks[task].count == 1 ? "" : "s");
    printf("target %s, device 0: %s\n", target, device && device->name ? device->name : "?");
    status = hetc_task_space_print(space, stdout);
  }
  hetc_task_space_free(space);
  hetc_registry_free(registry);
  hetc_space_overrides_free(overrides);
  hetc_task_list_free(tasks);
  hetc_graph_free(graph);
  hetc_model_free(model);
  return hetc_cli_report(status);
}
