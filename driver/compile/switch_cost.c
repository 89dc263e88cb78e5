/* Measuring what it costs to switch devices between two kernels
 * (switch_cost.h). */
#include "compile/switch_cost.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/clock.h"
#include "compile/kernel_build.h"
#include "reference/reference.h"

#define PROBE_RUNS 7
#define PROBE_MAX_ARGS 8

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

/* One device's probe kernel, built, with zeroed buffers. */
typedef struct probe_t {
  hetc_plugin_entry_t *entry;
  hetc_plugin_artifact_t *artifact;
  hetc_plugin_buffer_t *args[PROBE_MAX_ARGS];
  int32_t num_args;
} probe_t;

static void probe_release(probe_t *p) {
  for (int32_t a = 0; a < p->num_args; ++a)
    if (p->args[a]) p->entry->plugin->buffer_free(p->entry->instance, p->args[a]);
  if (p->artifact) p->entry->plugin->artifact_release(p->entry->instance, p->artifact);
  memset(p, 0, sizeof(*p));
}

static hetc_status_t probe_add_buffer(probe_t *p, int32_t device_index, uint64_t bytes) {
  if (p->num_args == PROBE_MAX_ARGS) return hetc_status_new(HETC_STATUS_INTERNAL, "switch probe: too many arguments");
  const hetc_plugin_t *plugin = p->entry->plugin;
  hetc_plugin_buffer_t **buffer = &p->args[p->num_args++];
  HETC_RETURN_IF_ERROR(plugin->buffer_alloc(p->entry->instance, device_index, bytes ? bytes : 64, buffer));
  void *zeros = calloc(1, bytes ? bytes : 64);
  if (!zeros) return hetc_status_new(HETC_STATUS_OUT_OF_MEMORY, "switch probe");
  hetc_status_t status = plugin->buffer_write(p->entry->instance, *buffer, 0, zeros, bytes ? bytes : 64);
  free(zeros);
  return status;
}

static uint64_t layout_bytes(hetc_plugin_tensor_t tensor, hetc_plugin_layout_t layout) {
  tensor.layout = layout;
  return (uint64_t)hetc_layout_element_count(&tensor) * sizeof(float);
}

static hetc_status_t probe_build(hetc_plugin_entry_t *entry, int32_t device_index, probe_t *out) {
  memset(out, 0, sizeof(*out));
  out->entry = entry;
  hetc_plugin_workload_t workload;
  hetc_plugin_tensor_t input;
  probe_workload(&workload, &input);
  hetc_plan_step_t scratch;
  memset(&scratch, 0, sizeof(scratch));
  hetc_status_t status = hetc_kernel_build_default(entry, device_index, &workload, "the device-switch probe",
                                                   &scratch, &out->artifact);
  hetc_plan_step_release(&scratch);
  const hetc_plugin_artifact_info_t *info = status ? NULL : entry->plugin->artifact_info(out->artifact);
  if (info && info->num_inputs != 1) status = hetc_status_new(HETC_STATUS_INTERNAL, "switch probe: %d inputs", info->num_inputs);
  if (!status) status = probe_add_buffer(out, device_index, layout_bytes(input, info->input_layouts[0]));
  for (int32_t p = 0; !status && info && p < info->num_params; ++p)
    status = probe_add_buffer(out, device_index, info->param_bytes[p]);
  if (!status) status = probe_add_buffer(out, device_index, layout_bytes(workload.output, info->output_layout));
  if (!status && info->workspace_bytes) status = probe_add_buffer(out, device_index, info->workspace_bytes);
  return status;
}

static hetc_status_t probe_run(const probe_t *p) {
  return p->entry->plugin->run(p->entry->instance, p->artifact, p->args, p->num_args);
}

/* Median seconds of PROBE_RUNS runs of `first` then (when not NULL)
 * `second`, after one untimed round. */
static hetc_status_t time_rounds(const probe_t *first, const probe_t *second, double *out_seconds) {
  double samples[PROBE_RUNS];
  for (int32_t r = -1; r < PROBE_RUNS; ++r) {
    double start = hetc_now_seconds();
    HETC_RETURN_IF_ERROR(probe_run(first));
    if (second) HETC_RETURN_IF_ERROR(probe_run(second));
    if (r >= 0) samples[r] = hetc_now_seconds() - start;
  }
  hetc_sort_doubles(samples, PROBE_RUNS);
  *out_seconds = samples[PROBE_RUNS / 2];
  return NULL;
}

hetc_status_t hetc_switch_costs_measure(int32_t num_devices, hetc_plugin_entry_t *const *entries,
                                        const int32_t *device_indices, double *out_seconds) {
  probe_t probes[HETC_SWITCH_MAX_DEVICES];
  memset(probes, 0, sizeof(probes));
  memset(out_seconds, 0, sizeof(double) * (size_t)num_devices * (size_t)num_devices);
  if (num_devices > HETC_SWITCH_MAX_DEVICES)
    return hetc_status_new(HETC_STATUS_UNSUPPORTED, "switch costs: %d devices (at most %d)", num_devices,
                           HETC_SWITCH_MAX_DEVICES);
  hetc_status_t status = NULL;
  double alone[HETC_SWITCH_MAX_DEVICES] = {0};
  int built[HETC_SWITCH_MAX_DEVICES] = {0};
  for (int32_t d = 0; d < num_devices; ++d) {
    /* A device without the probe kernel gets no switch cost (a warning
     * says why): placement must not fail for want of a probe. */
    hetc_status_t probe = probe_build(entries[d], device_indices[d], &probes[d]);
    if (!probe) probe = time_rounds(&probes[d], NULL, &alone[d]);
    if (probe) {
      fprintf(stderr, "hetc: warning: no device-switch cost for %s: %s\n", entries[d]->plugin->name,
              hetc_status_message(probe));
      hetc_status_free(probe);
      continue;
    }
    built[d] = 1;
  }
  /* A round trip A -> B -> A pays both switches; each direction is taken
   * as half of what the pair costs beyond the two kernels alone. */
  for (int32_t a = 0; !status && a < num_devices; ++a)
    for (int32_t b = a + 1; !status && b < num_devices; ++b) {
      if (!built[a] || !built[b]) continue;
      double pair = 0;
      status = time_rounds(&probes[a], &probes[b], &pair);
      double each = (pair - alone[a] - alone[b]) / 2;
      out_seconds[a * num_devices + b] = out_seconds[b * num_devices + a] = each > 0 ? each : 0;
    }
  for (int32_t d = 0; d < num_devices; ++d) probe_release(&probes[d]);
  return status;
}
