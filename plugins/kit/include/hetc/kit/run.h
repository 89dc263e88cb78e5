/* hetc/kit/run.h -- run() and time() of an artifact over kit buffers
 * (buffers.h): the argument checks every kernel needs before it touches
 * memory, one run, and timing on the monotonic clock after a warm-up. */
#ifndef HETC_KIT_RUN_H_
#define HETC_KIT_RUN_H_

#include <stdint.h>

#include <hetc/plugin.h>

#include "hetc/kit/workload.h"

#ifdef __cplusplus
extern "C" {
#endif

/* run()'s arguments: the activation inputs, the params, the output, and
 * the workspace when there is one. */
#define HETC_KIT_MAX_ARGS (HETC_KIT_MAX_INPUTS + HETC_KIT_MAX_PARAMS + 2)

/* What an artifact expects of run()'s arguments. */
typedef struct hetc_kit_run_args_t {
  int32_t count;
  int32_t num_inputs, num_params; /* to name an argument in messages */
  uint64_t least_bytes[HETC_KIT_MAX_ARGS];
} hetc_kit_run_args_t;

/* The arguments of a kernel computing wl (logical shapes) with the
 * boundary `info` describes: each input in its layout, the packed params,
 * the output in its layout, the workspace. */
void hetc_kit_run_args_init(hetc_kit_run_args_t *expected, const hetc_plugin_workload_t *wl,
                            const hetc_plugin_artifact_info_t *info);

/* Runs the kernel once: given the buffers' data in run()'s order. */
typedef void (*hetc_kit_launch_fn_t)(const hetc_plugin_artifact_t *artifact, float *const *args);

/* run(): refuses a wrong argument count, a NULL buffer or one smaller than
 * the kernel needs (naming `kernel` and the argument), then launches. */
hetc_plugin_status_t hetc_kit_run(const hetc_kit_run_args_t *expected, const char *kernel,
                                  hetc_kit_launch_fn_t launch, const hetc_plugin_artifact_t *artifact,
                                  hetc_plugin_buffer_t *const *args, int32_t num_args);

/* time(): the checks of hetc_kit_run, one untimed launch (the host's pool
 * wakes, caches warm), then `repeat` samples into out_seconds (the
 * caller's), each the mean of `number` back-to-back launches. */
hetc_plugin_status_t hetc_kit_time(const hetc_kit_run_args_t *expected, const char *kernel,
                                   hetc_kit_launch_fn_t launch, const hetc_plugin_artifact_t *artifact,
                                   hetc_plugin_buffer_t *const *args, int32_t num_args, int32_t number,
                                   int32_t repeat, double *out_seconds);

/* CLOCK_MONOTONIC in seconds. */
double hetc_kit_now_seconds(void);

#ifdef __cplusplus
}
#endif

#endif /* HETC_KIT_RUN_H_ */
