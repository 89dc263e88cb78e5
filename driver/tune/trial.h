/* driver/tune/trial.h -- one candidate on its device, in this process.
 *
 * What a measurement worker does with a built artifact: random inputs and
 * params in the kernel's own layouts, an optional comparison with the
 * reference executor, and timing by the device's clock through the plugin
 * (README.md, "Tuning"). The worker process around it is the
 * watchdog's business (measure.h). */
#ifndef HETC_DRIVER_TUNE_TRIAL_H_
#define HETC_DRIVER_TUNE_TRIAL_H_

#include "hetc/plugin.h"
#include "plugins/registry.h"
#include "records/record.h"

typedef struct hetc_trial_options_t {
  int32_t number;         /* runs per repeat to start from (>= 1) */
  int32_t repeat;         /* timed repeats, 1..HETC_RECORD_MAX_COSTS */
  double min_repeat_ms;   /* number is raised until a repeat lasts this long */
  /* Host-memory devices: each repeat is one run timed by the host's clock
   * after the params are evicted from the caches, as a kernel finds its
   * weights inside a model. */
  int32_t flush_cache;
  int32_t check;          /* compare the output with the reference executor */
  double check_tolerance; /* largest max-relative error accepted */
  uint64_t seed;          /* of the random inputs and params */
} hetc_trial_options_t;

/* number 1, repeat 3, min_repeat_ms 20, flush, no check (tolerance 1e-4),
 * seed 1. */
hetc_trial_options_t hetc_trial_default_options(void);

typedef struct hetc_trial_result_t {
  hetc_record_error_t error;
  char *message;          /* owned (free()); NULL when ok */
  int32_t num_costs;
  double costs[HETC_RECORD_MAX_COSTS]; /* seconds per run, per repeat */
  int32_t number;         /* runs per repeat actually used */
  double max_relative_error; /* when checked */
} hetc_trial_result_t;

void hetc_trial_result_clear(hetc_trial_result_t *result);

/* The record error for a failed build: the plugin's status code mapped onto
 * AutoTVM's taxonomy (a refused config is an instantiation error; a
 * compiler failure is compile_host on a CPU and compile_device elsewhere). */
hetc_record_error_t hetc_trial_build_error(int32_t plugin_status_code, int32_t device_kind);

/* The reference output (logical row-major, workload->output's logical
 * element count; *out_output owned by the caller, free()) for the random
 * inputs and params that hetc_trial_measure uses with the same seed. */
hetc_status_t hetc_trial_reference(const hetc_plugin_workload_t *workload, uint64_t seed,
                                   float **out_output);

/* Runs and times `artifact` (built for `workload` on device_index). A
 * failure of the candidate itself (launch failed, wrong answer) is reported
 * in out_result->error with the message; the returned status is non-NULL
 * only when the trial could not be carried out (out of memory, a reference
 * that failed). `reference` is hetc_trial_reference's output for the same
 * seed; it is required when options->check is set. */
hetc_status_t hetc_trial_measure(const hetc_plugin_entry_t *entry, int32_t device_index,
                                 const hetc_plugin_workload_t *workload,
                                 const hetc_plugin_artifact_t *artifact,
                                 const hetc_trial_options_t *options, const float *reference,
                                 hetc_trial_result_t *out_result);

#endif /* HETC_DRIVER_TUNE_TRIAL_H_ */
