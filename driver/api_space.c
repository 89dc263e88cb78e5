/* The public API's task spaces (hetc/hetc.h, hetc_model_task_space): one
 * task of a model, as `hetc tasks` numbers them, on a target's device 0. */
#include "graph/passes.h"
#include "graph/tasks.h"
#include "kernel/plugin_calls.h"
#include "plugins/registry.h"
#include "space/space_override.h"
#include "space/task_space.h"

/* A malformed overrides file is the user's input (hetc.h: BAD_INPUT). */
static hetc_status_t as_bad_input(hetc_status_t status) {
  return status && hetc_status_code(status) == HETC_STATUS_INVALID_ARGUMENT
             ? hetc_status_recode(status, HETC_STATUS_BAD_INPUT)
             : status;
}

/* The overrides must name templates this task offers: one file serves
 * every task of a model, but one task is asked for here. */
static hetc_status_t check_templates(const hetc_task_space_t *space, const hetc_space_overrides_t *overrides,
                                     const char *target) {
  const char *names[64];
  const int32_t count = hetc_task_space_template_count(space);
  for (int32_t t = 0; t < count && t < 64; ++t) names[t] = hetc_task_space_template_name(space, t);
  return hetc_space_overrides_check_templates(overrides, target, names, count < 64 ? count : 64);
}

hetc_status_t hetc_model_task_space(hetc_context_t *context, const hetc_model_t *model, int32_t task,
                                    const char *target, const char *overrides_path, hetc_task_space_t **out_space) {
  hetc_graph_t *graph = NULL;
  hetc_task_list_t *tasks = NULL;
  hetc_space_overrides_t *overrides = NULL;
  hetc_plugin_entry_t *entry = NULL;
  hetc_task_space_t *space = NULL;
  hetc_plugin_tensor_t inputs[HETC_MAX_NODE_INPUTS];
  hetc_plugin_workload_t workload;
  hetc_status_t status = hetc_graph_clone(model, &graph);
  if (!status) status = hetc_graph_optimize(graph);
  if (!status) status = hetc_graph_extract_tasks(graph, &tasks);
  if (!status && (task < 0 || task >= tasks->count))
    status = hetc_status_new(HETC_STATUS_NOT_FOUND, "task %d: %s has %d tasks", task, model->name, tasks->count);
  if (!status && overrides_path) status = as_bad_input(hetc_space_overrides_load(overrides_path, &overrides));
  if (!status) status = hetc_registry_target(context, target, &entry);
  if (!status) status = hetc_graph_task_workload(graph, tasks, task, inputs, &workload);
  if (!status && !hetc_entry_supports(entry, 0, &workload))
    status = hetc_status_new(HETC_STATUS_UNSUPPORTED, "target '%s' does not support task %d (%s)", target,
                             task + 1, tasks->tasks[task].key);
  if (!status)
    status = as_bad_input(hetc_task_space_create(entry->plugin, entry->instance, 0, &workload, overrides, &space));
  if (!status && overrides) status = as_bad_input(check_templates(space, overrides, target));
  hetc_space_overrides_free(overrides);
  hetc_task_list_free(tasks);
  hetc_graph_free(graph);
  if (status) {
    hetc_task_space_free(space);
    return status;
  }
  *out_space = space;
  return NULL;
}
