/* Building one kernel for a plan step: the template and config the
 * records choose (or the default), recorded in the step. Shared by the
 * compile stage and the placement costs, which build every candidate. */
#include "compile/kernel_build.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/interrupt.h"
#include "space/space.h"
#include "records/config_json.h"
#include "kernel/plugin_calls.h"

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

/* A kernel's template and config resolved against its space, and recorded
 * in a step. The plugin's template calls are made here, one thread at a
 * time (they are serialised per instance, plugin.h); only `build` may run
 * on several threads at once. */
typedef struct resolved_t {
  hetc_plugin_space_t *space; /* owned: config's knob values point into it */
  hetc_space_config_t config;
} resolved_t;

/* `tuned` NULL: the template's default. resolved->space is freed by the
 * caller, also on failure. */
static hetc_status_t resolve(hetc_plugin_entry_t *entry, int32_t device_index, const hetc_plugin_workload_t *workload,
                             int32_t template_index, const hetc_plugin_config_t *tuned, hetc_plan_step_t *step,
                             resolved_t *resolved) {
  const hetc_plugin_t *p = entry->plugin;
  resolved->space = NULL;
  if (p->template_count(entry->instance, device_index, workload) <= template_index)
    return hetc_status_new(HETC_STATUS_UNSUPPORTED, "target '%s' offers no template %d", p->name, template_index);
  HETC_RETURN_IF_ERROR(hetc_space_create(&resolved->space));
  hetc_status_t status =
      p->template_define_space(entry->instance, device_index, workload, template_index, resolved->space);
  int64_t index = 0;
  if (!status)
    status = tuned ? hetc_space_index_of(resolved->space, tuned, &index) : hetc_space_default(resolved->space, &index);
  if (!status) status = hetc_space_config_at(resolved->space, index, &resolved->config);
  if (!status) status = record_config(step, &resolved->config.view);
  if (!status) {
    const char *name = p->template_name(entry->instance, device_index, workload, template_index);
    step->template_index = template_index;
    if (!(step->template_name = strdup(name ? name : "?"))) status = hetc_status_new(HETC_STATUS_OUT_OF_MEMORY, "compile");
  }
  return status;
}

/* As resolve, with the config given as JSON when config_json is not NULL. */
static hetc_status_t resolve_json(hetc_plugin_entry_t *entry, int32_t device_index,
                                  const hetc_plugin_workload_t *workload, int32_t template_index,
                                  const hetc_plugin_config_t *tuned, const char *config_json, hetc_plan_step_t *step,
                                  resolved_t *resolved) {
  resolved->space = NULL;
  if (!config_json) return resolve(entry, device_index, workload, template_index, tuned, step, resolved);
  hetc_config_json_t config;
  HETC_RETURN_IF_ERROR(hetc_config_from_json(config_json, &config));
  hetc_status_t status = resolve(entry, device_index, workload, template_index, &config.config, step, resolved);
  hetc_config_json_free(&config);
  return status;
}

static hetc_status_t build_resolved(hetc_plugin_entry_t *entry, int32_t device_index,
                                    const hetc_plugin_workload_t *workload, int32_t template_index,
                                    const resolved_t *resolved, hetc_plugin_artifact_t **out_artifact) {
  hetc_status_t status = hetc_entry_build(entry, device_index, workload, template_index,
                                              &resolved->config.view, out_artifact);
  if (!status && !*out_artifact) status = hetc_status_new(HETC_STATUS_INTERNAL, "build returned no artifact");
  return status;
}

/* Builds `workload` with template `template_index` and the config given as
 * `tuned` or as `config_json` (both NULL: the template's default).
 * *out_artifact is released by the caller through the plugin. */
static hetc_status_t build_config(hetc_plugin_entry_t *entry, int32_t device_index,
                                  const hetc_plugin_workload_t *workload, int32_t template_index,
                                  const hetc_plugin_config_t *tuned, const char *config_json, const char *what,
                                  hetc_plan_step_t *step, hetc_plugin_artifact_t **out_artifact) {
  resolved_t resolved;
  hetc_status_t status =
      resolve_json(entry, device_index, workload, template_index, tuned, config_json, step, &resolved);
  if (!status) status = build_resolved(entry, device_index, workload, template_index, &resolved, out_artifact);
  hetc_space_free(resolved.space);
  return status ? hetc_status_annotate(status, "%s on %s", what, hetc_entry_name(entry)) : NULL;
}

hetc_status_t hetc_kernel_build_default(hetc_plugin_entry_t *entry, int32_t device_index,
                                   const hetc_plugin_workload_t *workload, const char *what,
                                   hetc_plan_step_t *step, hetc_plugin_artifact_t **out_artifact) {
  return build_config(entry, device_index, workload, 0, NULL, NULL, what, step, out_artifact);
}

hetc_status_t hetc_kernel_build_template(hetc_plugin_entry_t *entry, int32_t device_index,
                                         const hetc_plugin_workload_t *workload, int32_t template_index,
                                         const hetc_plugin_config_t *config, const char *what,
                                         hetc_plan_step_t *step, hetc_plugin_artifact_t **out_artifact) {
  return build_config(entry, device_index, workload, template_index, config, NULL, what, step, out_artifact);
}

hetc_status_t hetc_kernel_build_json(hetc_plugin_entry_t *entry, int32_t device_index,
                                     const hetc_plugin_workload_t *workload, int32_t template_index,
                                     const char *config_json, const char *what, hetc_plan_step_t *step,
                                     hetc_plugin_artifact_t **out_artifact) {
  return build_config(entry, device_index, workload, template_index, NULL, config_json, what, step, out_artifact);
}

hetc_status_t hetc_kernel_describe_json(hetc_plugin_entry_t *entry, int32_t device_index,
                                        const hetc_plugin_workload_t *workload, int32_t template_index,
                                        const char *config_json, const char *what, hetc_plan_step_t *step) {
  resolved_t resolved;
  hetc_status_t status = resolve_json(entry, device_index, workload, template_index, NULL, config_json, step, &resolved);
  hetc_space_free(resolved.space);
  return status ? hetc_status_annotate(status, "%s on %s", what, hetc_entry_name(entry)) : NULL;
}

typedef struct build_pool_t {
  hetc_kernel_build_job_t *jobs;
  const resolved_t *resolved;
  int32_t count;
  atomic_int next;
} build_pool_t;

static void *build_worker(void *arg) {
  build_pool_t *pool = arg;
  for (int32_t i; (i = atomic_fetch_add(&pool->next, 1)) < pool->count;) {
    hetc_kernel_build_job_t *job = &pool->jobs[i];
    if (job->status) continue; /* it did not resolve */
    if ((job->status = hetc_interrupt_status())) continue;
    job->status = build_resolved(job->entry, job->device_index, job->workload, job->template_index,
                                 &pool->resolved[i], &job->artifact);
    if (job->status) job->status = hetc_status_annotate(job->status, "%s on %s", job->what, hetc_entry_name(job->entry));
  }
  return NULL;
}

hetc_status_t hetc_kernel_build_all(hetc_kernel_build_job_t *jobs, int32_t count, int32_t threads) {
  resolved_t *resolved = calloc((size_t)count + 1, sizeof(resolved_t));
  if (!resolved) return hetc_status_new(HETC_STATUS_OUT_OF_MEMORY, "compile: building %d kernels", count);
  for (int32_t i = 0; i < count; ++i) {
    hetc_kernel_build_job_t *job = &jobs[i];
    hetc_plan_step_t scratch;
    memset(&scratch, 0, sizeof(scratch));
    job->status = resolve_json(job->entry, job->device_index, job->workload, job->template_index, NULL,
                               job->config_json, &scratch, &resolved[i]);
    if (job->status) job->status = hetc_status_annotate(job->status, "%s on %s", job->what, hetc_entry_name(job->entry));
    hetc_plan_step_release(&scratch);
  }
  build_pool_t pool = {jobs, resolved, count, 0};
  pthread_t helpers[16];
  int32_t started = 0;
  for (int32_t t = 1; t < threads && t < 16 && t < count; ++t)
    if (pthread_create(&helpers[started], NULL, build_worker, &pool) == 0) ++started;
  build_worker(&pool);
  for (int32_t t = 0; t < started; ++t) pthread_join(helpers[t], NULL);
  for (int32_t i = 0; i < count; ++i) hetc_space_free(resolved[i].space);
  free(resolved);
  return NULL;
}
