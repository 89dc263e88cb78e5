/* The public API's tuner (hetc/hetc.h, hetc_tuner_open): the public
 * options, where 0 is the default, made into the tuner's own. */
#include "plugins/registry.h"
#include "tune/tuner.h"

hetc_status_t hetc_tune_check(const hetc_model_t *model, const char *const *targets, int32_t num_targets,
                              const hetc_tuner_options_t *options) {
  hetc_registry_t *registry = NULL;
  HETC_RETURN_IF_ERROR(hetc_registry_open(&registry));
  hetc_status_t status = hetc_tune_check_arguments(registry, model, targets, num_targets, options->task_numbers,
                                                   options->num_task_numbers);
  hetc_registry_free(registry);
  return status;
}

hetc_status_t hetc_tuner_open(const hetc_tuner_options_t *options, hetc_tuner_t **out_tuner) {
  hetc_tune_options_t tune = hetc_tune_default_options();
  if (options->search && !hetc_search_kind_from_name(options->search, &tune.search))
    return hetc_status_new(HETC_STATUS_INVALID_ARGUMENT, "search '%s' is not built in", options->search);
  tune.records_path = options->records_path;
  tune.overrides_path = options->overrides_path;
  tune.simulate_path = options->simulate_path;
  if (options->trials) tune.trials = options->trials;
  tune.early_stopping = options->early_stopping;
  tune.time_budget_s = options->time_budget_s;
  if (options->batch) tune.batch = options->batch;
  tune.transfer = !options->no_transfer;
  if (options->build_workers) tune.measure.build_workers = options->build_workers;
  if (options->build_timeout_s > 0) tune.measure.build_timeout_s = options->build_timeout_s;
  if (options->run_timeout_s > 0) tune.measure.run_timeout_s = options->run_timeout_s;
  tune.seed = options->seed;
  tune.measure.trial.check = options->check;
  tune.task_numbers = options->task_numbers;
  tune.num_task_numbers = options->num_task_numbers;
  tune.progress = options->progress;
  return hetc_tuner_create(&tune, out_tuner);
}
