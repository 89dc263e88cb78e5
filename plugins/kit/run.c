/* run() and time() over kit buffers (hetc/kit/run.h). */
#define _POSIX_C_SOURCE 200809L /* clock_gettime */
#include "hetc/kit/run.h"

#include <stdio.h>
#include <time.h>

#include "hetc/kit/buffers.h"
#include "hetc/kit/host.h"
#include "hetc/kit/layout.h"
#include "hetc/kit/status.h"

void hetc_kit_run_args_init(hetc_kit_run_args_t *expected, const hetc_plugin_workload_t *wl,
                            const hetc_plugin_artifact_info_t *info) {
  int32_t n = 0;
  for (int32_t i = 0; i < info->num_inputs; ++i)
    expected->least_bytes[n++] = (uint64_t)hetc_kit_physical_count(&wl->inputs[i], info->input_layouts[i]) * 4;
  for (int32_t i = 0; i < info->num_params; ++i) expected->least_bytes[n++] = info->param_bytes[i];
  expected->least_bytes[n++] = (uint64_t)hetc_kit_physical_count(&wl->output, info->output_layout) * 4;
  if (info->workspace_bytes) expected->least_bytes[n++] = info->workspace_bytes;
  expected->count = n;
  expected->num_inputs = info->num_inputs;
  expected->num_params = info->num_params;
}

static const char *role(const hetc_kit_run_args_t *e, int32_t i, char *buf, size_t size) {
  if (i < e->num_inputs) snprintf(buf, size, "input %d", i);
  else if (i < e->num_inputs + e->num_params) snprintf(buf, size, "param %d", i - e->num_inputs);
  else if (i == e->num_inputs + e->num_params) snprintf(buf, size, "the output");
  else snprintf(buf, size, "the workspace");
  return buf;
}

/* Checks the arguments and collects their data pointers into `data`. */
static hetc_plugin_status_t gather(const hetc_kit_run_args_t *e, const char *kernel,
                                   hetc_plugin_buffer_t *const *args, int32_t num_args, float **data) {
  if (num_args != e->count || (num_args > 0 && !args))
    return hetc_kit_status(HETC_PLUGIN_STATUS_INVALID_ARGUMENT,
                           "%s: expected %d arguments, got %d (inputs, params, output%s)", kernel, e->count,
                           num_args, e->count > e->num_inputs + e->num_params + 1 ? ", workspace" : "");
  char what[32];
  for (int32_t i = 0; i < num_args; ++i) {
    if (!args[i])
      return hetc_kit_status(HETC_PLUGIN_STATUS_INVALID_ARGUMENT, "%s: argument %d (%s) is null", kernel, i,
                             role(e, i, what, sizeof(what)));
    if (args[i]->bytes < e->least_bytes[i])
      return hetc_kit_status(HETC_PLUGIN_STATUS_INVALID_ARGUMENT,
                             "%s: argument %d (%s) has %llu bytes, the kernel needs %llu", kernel, i,
                             role(e, i, what, sizeof(what)), (unsigned long long)args[i]->bytes,
                             (unsigned long long)e->least_bytes[i]);
    data[i] = args[i]->data;
  }
  return NULL;
}

hetc_plugin_status_t hetc_kit_run(const hetc_kit_run_args_t *expected, const char *kernel,
                                  hetc_kit_launch_fn_t launch, const hetc_plugin_artifact_t *artifact,
                                  hetc_plugin_buffer_t *const *args, int32_t num_args) {
  float *data[HETC_KIT_MAX_ARGS];
  hetc_plugin_status_t s = gather(expected, kernel, args, num_args, data);
  if (s) return s;
  launch(artifact, data);
  return NULL;
}

double hetc_kit_now_seconds(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

hetc_plugin_status_t hetc_kit_time(const hetc_kit_run_args_t *expected, const char *kernel,
                                   hetc_kit_launch_fn_t launch, const hetc_plugin_artifact_t *artifact,
                                   hetc_plugin_buffer_t *const *args, int32_t num_args, int32_t number,
                                   int32_t repeat, double *out_seconds) {
  if (number < 1 || repeat < 1 || !out_seconds)
    return hetc_kit_status(HETC_PLUGIN_STATUS_INVALID_ARGUMENT,
                           "%s: time: number %d and repeat %d must be positive, out_seconds non-null", kernel,
                           number, repeat);
  float *data[HETC_KIT_MAX_ARGS];
  hetc_plugin_status_t s = gather(expected, kernel, args, num_args, data);
  if (s) return s;
  launch(artifact, data);
  for (int32_t r = 0; r < repeat; ++r) {
    const double t0 = hetc_kit_now_seconds();
    for (int32_t i = 0; i < number; ++i) launch(artifact, data);
    out_seconds[r] = (hetc_kit_now_seconds() - t0) / number;
  }
  return NULL;
}
