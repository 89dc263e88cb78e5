/* Building one kernel for a plan step: the template and config the
 * records choose (or the default), recorded in the step. Shared by the
 * compile stage and the placement costs, which build every candidate. */
#include "compile/kernel_build.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "space/space.h"
#include "tune/config_json.h"

static hetc_status_t record_config(hetc_plan_step_t *step, const hetc_plugin_config_t *config) {
  int32_t n = config->num_knobs;
  step->knob_names = calloc((size_t)n + 1, sizeof(char *));
  step->knob_counts = calloc((size_t)n + 1, sizeof(int32_t));
  step->knob_values = calloc((size_t)n + 1, sizeof(int64_t *));
  if (!step->knob_names || !step->knob_counts || !step->knob_values)
    return hetc_status_new(HETC_STATUS_OUT_OF_MEMORY, "compile");
  for (int32_t k = 0; k < n; ++k) {
    const hetc_plugin_knob_value_t *knob = &config->knobs[k];
    step->knob_names[k] = strdup(knob->name);
    step->knob_values[k] = malloc(sizeof(int64_t) * (size_t)(knob->count ? knob->count : 1));
    step->num_knobs = k + 1;
    if (!step->knob_names[k] || !step->knob_values[k])
      return hetc_status_new(HETC_STATUS_OUT_OF_MEMORY, "compile");
    step->knob_counts[k] = knob->count;
    memcpy(step->knob_values[k], knob->values, sizeof(int64_t) * (size_t)knob->count);
  }
  return NULL;
}

/* Builds `workload` with template `template_index` and the config given as
 * `tuned` (NULL: the template's default). *out_artifact is released by the
 * caller through the plugin. */
static hetc_status_t build_config(hetc_plugin_entry_t *entry, int32_t device_index,
                                  const hetc_plugin_workload_t *workload, int32_t template_index,
                                  const hetc_plugin_config_t *tuned, const char *what, hetc_plan_step_t *step,
                                  hetc_plugin_artifact_t **out_artifact) {
  const hetc_plugin_t *p = entry->plugin;
  if (p->template_count(entry->instance, device_index, workload) <= template_index)
    return hetc_status_new(HETC_STATUS_UNSUPPORTED, "%s: target '%s' offers no template", what, p->name);
  hetc_plugin_space_t *space = NULL;
  HETC_RETURN_IF_ERROR(hetc_space_create(&space));
  hetc_status_t status = p->template_define_space(entry->instance, device_index, workload, template_index, space);
  int64_t index = 0;
  hetc_space_config_t config;
  if (!status) status = tuned ? hetc_space_index_of(space, tuned, &index) : hetc_space_default(space, &index);
  if (!status) status = hetc_space_config_at(space, index, &config);
  if (!status) status = record_config(step, &config.view);
  if (!status) {
    const char *name = p->template_name(entry->instance, device_index, workload, template_index);
    step->template_name = strdup(name ? name : "?");
    step->template_index = template_index;
    status = p->build(entry->instance, device_index, workload, template_index, &config.view, out_artifact);
    if (!status && !*out_artifact) status = hetc_status_new(HETC_STATUS_INTERNAL, "build returned no artifact");
  }
  hetc_space_free(space);
  return status ? hetc_status_annotate(status, "%s on %s", what, p->name) : NULL;
}

hetc_status_t hetc_kernel_build_default(hetc_plugin_entry_t *entry, int32_t device_index,
                                   const hetc_plugin_workload_t *workload, const char *what,
                                   hetc_plan_step_t *step, hetc_plugin_artifact_t **out_artifact) {
  return build_config(entry, device_index, workload, 0, NULL, what, step, out_artifact);
}

hetc_status_t hetc_kernel_build_tuned(hetc_config_chooser_t *chooser, hetc_plugin_entry_t *entry, int32_t device_index,
                                 const hetc_plugin_workload_t *workload, const char *what, hetc_plan_step_t *step,
                                 hetc_plugin_artifact_t **out_artifact, hetc_config_source_t *out_source) {
  int32_t template_index = 0;
  hetc_config_json_t config;
  HETC_RETURN_IF_ERROR(hetc_config_choose(chooser, entry->plugin, entry->instance, device_index, workload,
                                          &template_index, &config, out_source));
  if (*out_source != HETC_CONFIG_DEFAULT) {
    hetc_status_t status =
        build_config(entry, device_index, workload, template_index, &config.config, what, step, out_artifact);
    hetc_config_json_free(&config);
    if (!status) return NULL;
    fprintf(stderr, "hetc: warning: %s: the %s config does not build (%s); using the default\n", what,
            hetc_config_source_name(*out_source), hetc_status_message(status));
    hetc_status_free(status);
    hetc_plan_step_release(step);
    memset(step, 0, sizeof(*step));
    *out_source = HETC_CONFIG_DEFAULT;
  }
  return hetc_kernel_build_default(entry, device_index, workload, what, step, out_artifact);
}

hetc_status_t hetc_kernel_build_template(hetc_plugin_entry_t *entry, int32_t device_index,
                                         const hetc_plugin_workload_t *workload, int32_t template_index,
                                         const hetc_plugin_config_t *config, const char *what,
                                         hetc_plan_step_t *step, hetc_plugin_artifact_t **out_artifact) {
  return build_config(entry, device_index, workload, template_index, config, what, step, out_artifact);
}

typedef struct build_pool_t {
  hetc_kernel_build_job_t *jobs;
  int32_t count;
  atomic_int next;
} build_pool_t;

static void build_job(hetc_kernel_build_job_t *job) {
  hetc_plan_step_t scratch;
  memset(&scratch, 0, sizeof(scratch));
  if (job->config_json) {
    hetc_config_json_t config;
    job->status = hetc_config_from_json(job->config_json, &config);
    if (!job->status)
      job->status = build_config(job->entry, job->device_index, job->workload, job->template_index, &config.config,
                                 job->what, &scratch, &job->artifact);
    hetc_config_json_free(&config);
  } else {
    job->status = build_config(job->entry, job->device_index, job->workload, job->template_index, NULL, job->what,
                               &scratch, &job->artifact);
  }
  hetc_plan_step_release(&scratch);
}

static void *build_worker(void *arg) {
  build_pool_t *pool = arg;
  for (int32_t i; (i = atomic_fetch_add(&pool->next, 1)) < pool->count;) build_job(&pool->jobs[i]);
  return NULL;
}

void hetc_kernel_build_all(hetc_kernel_build_job_t *jobs, int32_t count, int32_t threads) {
  build_pool_t pool = {jobs, count, 0};
  pthread_t helpers[16];
  int32_t started = 0;
  for (int32_t t = 1; t < threads && t < 16 && t < count; ++t)
    if (pthread_create(&helpers[started], NULL, build_worker, &pool) == 0) ++started;
  build_worker(&pool);
  for (int32_t t = 0; t < started; ++t) pthread_join(helpers[t], NULL);
}
