/* Measuring what it costs to switch devices between two kernels
 * (switch_cost.h). */
#include "place/switch_cost.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/clock.h"
#include "compile/kernel_build.h"
#include "kernel/kernel_rounds.h"
#include "kernel/plugin_calls.h"

#define PROBE_RUNS 7

/* A conv2d as ResNet's stages have them, long enough (about a millisecond
 * on a CPU core) that another device's threads still spinning from the
 * kernel before take their full toll of it. */
static void probe_workload(hetc_plugin_workload_t *w, hetc_plugin_tensor_t *input) {
  memset(w, 0, sizeof(*w));
  *input = (hetc_plugin_tensor_t){HETC_PLUGIN_DTYPE_FLOAT32, 4, {1, 64, 28, 28}, {HETC_PLUGIN_LAYOUT_ROW_MAJOR, 0}};
  w->op = HETC_PLUGIN_OP_CONV2D;
  w->num_inputs = 1;
  w->inputs = input;
  w->output = *input;
  w->kernel[0] = w->kernel[1] = 3;
  w->strides[0] = w->strides[1] = 1;
  w->padding[0] = w->padding[1] = w->padding[2] = w->padding[3] = 1;
  w->dilation[0] = w->dilation[1] = 1;
  w->groups = 1;
  w->epilogue.has_bias = 1;
  w->epilogue.activation = HETC_PLUGIN_ACT_RELU;
}

/* Builds device d's probe into `rounds` (*out_job). */
static hetc_status_t probe_build(hetc_kernel_rounds_t *rounds, hetc_plugin_entry_t *entry, int32_t device_index,
                                 int32_t *out_job) {
  hetc_plugin_workload_t workload;
  hetc_plugin_tensor_t input;
  probe_workload(&workload, &input);
  hetc_plan_step_t scratch;
  memset(&scratch, 0, sizeof(scratch));
  hetc_plugin_artifact_t *artifact = NULL;
  hetc_status_t status = hetc_kernel_build_default(entry, device_index, &workload, "the device-switch probe",
                                                   &scratch, &artifact);
  hetc_plan_step_release(&scratch);
  return status ? status : hetc_kernel_rounds_add(rounds, entry, device_index, &workload, artifact, out_job);
}

/* Median seconds of PROBE_RUNS runs of job `first` then (when >= 0) job
 * `second`, after one untimed round. */
static hetc_status_t time_rounds(hetc_kernel_rounds_t *rounds, int32_t first, int32_t second, double *out_seconds) {
  double samples[PROBE_RUNS];
  for (int32_t r = -1; r < PROBE_RUNS; ++r) {
    double start = hetc_now_seconds();
    HETC_RETURN_IF_ERROR(hetc_kernel_rounds_run_one(rounds, first));
    if (second >= 0) HETC_RETURN_IF_ERROR(hetc_kernel_rounds_run_one(rounds, second));
    if (r >= 0) samples[r] = hetc_now_seconds() - start;
  }
  hetc_sort_doubles(samples, PROBE_RUNS);
  *out_seconds = samples[PROBE_RUNS / 2];
  return NULL;
}

hetc_status_t hetc_switch_costs_measure(int32_t num_devices, hetc_plugin_entry_t *const *entries,
                                        const int32_t *device_indices, double *out_seconds) {
  memset(out_seconds, 0, sizeof(double) * (size_t)num_devices * (size_t)num_devices);
  if (num_devices > HETC_SWITCH_MAX_DEVICES)
    return hetc_status_new(HETC_STATUS_UNSUPPORTED, "switch costs: %d devices (at most %d)", num_devices,
                           HETC_SWITCH_MAX_DEVICES);
  hetc_kernel_rounds_t *rounds = NULL;
  HETC_RETURN_IF_ERROR(hetc_kernel_rounds_create(&rounds));
  double alone[HETC_SWITCH_MAX_DEVICES] = {0};
  int32_t job[HETC_SWITCH_MAX_DEVICES];
  for (int32_t d = 0; d < num_devices; ++d) {
    /* A device without the probe kernel gets no switch cost (a warning
     * says why): placement must not fail for want of a probe. */
    hetc_status_t probe = probe_build(rounds, entries[d], device_indices[d], &job[d]);
    if (!probe) probe = time_rounds(rounds, job[d], -1, &alone[d]);
    if (probe) {
      fprintf(stderr, "hetc: warning: no device-switch cost for %s: %s\n", hetc_entry_name(entries[d]),
              hetc_status_message(probe));
      hetc_status_free(probe);
      job[d] = -1;
    }
  }
  /* A round trip A -> B -> A pays both switches; each direction is taken
   * as half of what the pair costs beyond the two kernels alone. */
  hetc_status_t status = NULL;
  for (int32_t a = 0; !status && a < num_devices; ++a)
    for (int32_t b = a + 1; !status && b < num_devices; ++b) {
      if (job[a] < 0 || job[b] < 0) continue;
      double pair = 0;
      status = time_rounds(rounds, job[a], job[b], &pair);
      double each = (pair - alone[a] - alone[b]) / 2;
      out_seconds[a * num_devices + b] = out_seconds[b * num_devices + a] = each > 0 ? each : 0;
    }
  hetc_kernel_rounds_free(rounds);
  return status;
}
