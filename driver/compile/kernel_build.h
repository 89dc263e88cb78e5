/* driver/compile/kernel_build.h -- building one kernel of a plan step. */
#ifndef HETC_DRIVER_COMPILE_KERNEL_BUILD_H_
#define HETC_DRIVER_COMPILE_KERNEL_BUILD_H_

#include "compile/config_choice.h"
#include "package/plan.h"
#include "plugins/registry.h"

/* The default config of the plugin's first template, built; the template
 * and config are recorded in `step` (released with
 * hetc_plan_step_release). *out_artifact is released by the caller through
 * the plugin. `what` names the kernel in messages. */
hetc_status_t hetc_kernel_build_default(hetc_plugin_entry_t *entry, int32_t device_index,
                                        const hetc_plugin_workload_t *workload, const char *what,
                                        hetc_plan_step_t *step, hetc_plugin_artifact_t **out_artifact);

/* Template `template_index` built with `config` (NULL: the template's
 * default), recorded in `step` as above; no fallback. For `hetc compare`,
 * which times every template of a workload. */
hetc_status_t hetc_kernel_build_template(hetc_plugin_entry_t *entry, int32_t device_index,
                                         const hetc_plugin_workload_t *workload, int32_t template_index,
                                         const hetc_plugin_config_t *config, const char *what,
                                         hetc_plan_step_t *step, hetc_plugin_artifact_t **out_artifact);

/* As hetc_kernel_build_template, with the config given as JSON (NULL: the
 * template's default), as records and candidates hold it. */
hetc_status_t hetc_kernel_build_json(hetc_plugin_entry_t *entry, int32_t device_index,
                                     const hetc_plugin_workload_t *workload, int32_t template_index,
                                     const char *config_json, const char *what, hetc_plan_step_t *step,
                                     hetc_plugin_artifact_t **out_artifact);

/* What hetc_kernel_build_json records in `step` (the template and its
 * config), without building: for a kernel the compile has built already
 * (kernel/kernel_shelf.h). */
hetc_status_t hetc_kernel_describe_json(hetc_plugin_entry_t *entry, int32_t device_index,
                                        const hetc_plugin_workload_t *workload, int32_t template_index,
                                        const char *config_json, const char *what, hetc_plan_step_t *step);

/* One kernel to build: template `template_index` of the plugin's device
 * with `config_json` (NULL: the template's default). The workload (and the
 * tensors it points at) and strings are borrowed; the results are the
 * caller's: `artifact` (released through the plugin) or `status`. */
typedef struct hetc_kernel_build_job_t {
  hetc_plugin_entry_t *entry;
  int32_t device_index;
  const hetc_plugin_workload_t *workload;
  int32_t template_index;
  const char *config_json;
  const char *what;
  hetc_plugin_artifact_t *artifact; /* out */
  hetc_status_t status;             /* out */
} hetc_kernel_build_job_t;

/* Builds every job, `threads` at a time: the spaces are defined one job
 * after another, and only the plugins' `build` calls run concurrently on
 * one instance (plugin.h allows it for `build` alone). Each job's result
 * is in the job; a failure here means none was built. */
hetc_status_t hetc_kernel_build_all(hetc_kernel_build_job_t *jobs, int32_t count, int32_t threads);

#endif
