#include "runtime/runtime.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/fileio.h"
#include "common/nonfinite.h"
#include "compile/channel_view.h"
#include "graph/graph.h"
#include "package/package_files.h"
#include "package/package_weights.h"
#include "plugins/host.h"
#include "runtime/runtime_internal.h"
#include "kernel/plugin_calls.h"

const hetc_plan_t *hetc_runtime_plan(const hetc_runtime_t *runtime) { return runtime->plan; }


static hetc_status_t alloc_buffer(hetc_runtime_t *rt, int32_t device, uint64_t bytes,
                                  hetc_plugin_buffer_t **out) {
  hetc_plugin_entry_t *e = entry_of(rt, device);
  hetc_status_t status = hetc_entry_buffer_alloc(e, rt->plan->devices[device].device_index,
                                                 bytes ? bytes : 64, out);
  if (!status && !*out) status = hetc_status_new(HETC_STATUS_INTERNAL, "buffer_alloc returned no buffer");
  return status ? hetc_status_annotate(status, "allocating %llu bytes on %s", (unsigned long long)bytes,
                                       hetc_entry_name(e))
                : NULL;
}

static hetc_status_t resolve_devices(hetc_runtime_t *rt, hetc_registry_t *registry) {
  hetc_plan_t *plan = rt->plan;
  rt->entries = calloc((size_t)plan->num_devices, sizeof(hetc_plugin_entry_t *));
  if (!rt->entries) return hetc_status_new(HETC_STATUS_OUT_OF_MEMORY, "runtime");
  for (int32_t d = 0; d < plan->num_devices; ++d) {
    hetc_plan_device_t *device = &plan->devices[d];
    HETC_RETURN_IF_ERROR(hetc_registry_target(registry, device->target, &rt->entries[d]));
    const hetc_plugin_t *p = rt->entries[d]->plugin;
    if (device->device_index >= p->device_count(rt->entries[d]->instance))
      return hetc_status_new(HETC_STATUS_UNAVAILABLE, "package needs device %d of target '%s', which has %d",
                             device->device_index, device->target, p->device_count(rt->entries[d]->instance));
    const hetc_plugin_device_t *info = p->device_get(rt->entries[d]->instance, device->device_index);
    if (info && info->fingerprint && strcmp(info->fingerprint, device->fingerprint) != 0)
      hetc_host_services()->log(HETC_PLUGIN_LOG_WARNING, "runtime",
                                "package was compiled for '%s' but target '%s' now reports '%s'; "
                                "it runs, but its tuning may not fit this device",
                                device->fingerprint, device->target, info->fingerprint);
  }
  return NULL;
}

static hetc_status_t load_step(hetc_runtime_t *rt, int32_t s, const unsigned char *weights) {
  hetc_plan_step_t *step = &rt->plan->steps[s];
  if (step->kind != HETC_PLAN_STEP_KERNEL) return NULL;
  hetc_plugin_entry_t *e = entry_of(rt, step->device);
  int32_t device_index = rt->plan->devices[step->device].device_index;
  hetc_plugin_knob_value_t knobs[64];
  for (int32_t k = 0; k < step->num_knobs; ++k)
    knobs[k] = (hetc_plugin_knob_value_t){step->knob_names[k], step->knob_counts[k], step->knob_values[k]};
  hetc_plugin_config_t config = {step->num_knobs, knobs};
  int32_t templates = hetc_entry_template_count(e, device_index, &step->workload);
  const char *name = step->template_index < templates
                         ? hetc_entry_template_name(e, device_index, &step->workload, step->template_index)
                         : NULL;
  if (!name || strcmp(name, step->template_name) != 0)
    return hetc_status_new(HETC_STATUS_BAD_INPUT,
                           "step %d (%s): target '%s' no longer has template '%s' at index %d; recompile "
                           "the package",
                           s, step->name, hetc_entry_name(e), step->template_name, step->template_index);
  hetc_status_t status = hetc_entry_artifact_load(e, device_index, &step->workload,
                                                  step->template_index, &config, rt->kernel_dir,
                                                  step->artifact_prefix, &rt->artifacts[s]);
  /* A plugin says INVALID_ARGUMENT when the package's files are missing,
   * corrupt or made for something else: a defect of the package. */
  if (hetc_status_code(status) == HETC_STATUS_INVALID_ARGUMENT) status = hetc_status_recode(status, HETC_STATUS_BAD_INPUT);
  if (status) return hetc_status_annotate(status, "step %d (%s): loading artifact %s", s, step->name, step->artifact_prefix);
  const hetc_plugin_artifact_info_t *info = hetc_entry_artifact_info(e, rt->artifacts[s]);
  /* The buffers are sized for the plan values' layouts: a kernel that reads
   * or writes any other layout would run past them. */
  int layouts_match = info->num_inputs == step->num_inputs &&
                      hetc_layout_equal(info->output_layout, rt->plan->values[step->output].type.layout);
  for (int32_t i = 0; layouts_match && i < step->num_inputs; ++i)
    layouts_match = hetc_layout_equal(info->input_layouts[i], rt->plan->values[step->inputs[i]].type.layout);
  if (!layouts_match || info->num_params != step->num_params || info->workspace_bytes != step->workspace_bytes)
    return hetc_status_new(HETC_STATUS_BAD_INPUT,
                           "step %d (%s): the artifact's inputs, layouts, params or workspace do not "
                           "match the manifest",
                           s, step->name);
  for (int32_t p = 0; p < step->num_params; ++p) {
    if (info->param_bytes[p] != step->params[p].bytes)
      return hetc_status_new(HETC_STATUS_BAD_INPUT, "step %d (%s): param %d has %llu bytes, the kernel expects %llu",
                             s, step->name, p, (unsigned long long)step->params[p].bytes,
                             (unsigned long long)info->param_bytes[p]);
  }
  for (int32_t p = 0; p < step->num_params; ++p) {
    const int64_t nonfinite = hetc_count_nonfinite(weights + step->params[p].offset, step->params[p].bytes);
    if (nonfinite)
      hetc_host_services()->log(HETC_PLUGIN_LOG_WARNING, "runtime",
                                "%s: step %d (%s): param %d holds %lld NaN or infinite values; the outputs will too",
                                HETC_PACKAGE_WEIGHTS, s, step->name, p, (long long)nonfinite);
  }
  rt->params[s] = calloc((size_t)step->num_params + 1, sizeof(hetc_plugin_buffer_t *));
  if (!rt->params[s]) return hetc_status_new(HETC_STATUS_OUT_OF_MEMORY, "runtime");
  for (int32_t p = 0; p < step->num_params; ++p) {
    HETC_RETURN_IF_ERROR(alloc_buffer(rt, step->device, step->params[p].bytes, &rt->params[s][p]));
    HETC_RETURN_IF_ERROR(hetc_entry_buffer_write(e, rt->params[s][p], 0,
                                                 weights + step->params[p].offset, step->params[p].bytes));
  }
  return NULL;
}

/* Values at an offset in their slot (a concat's inputs, channel slices)
 * get a view of it (plugin.h, buffer_view); a plugin without views cannot
 * run such a package. In a
 * slot that holds such values, the one at offset 0 that is smaller than
 * the slot gets a view too: concat(a, f(a)) must not hand f the whole slot
 * as its input a and a view inside that slot as its output, since plugins
 * are promised that a run's output never overlaps its inputs. */
static hetc_status_t make_views(hetc_runtime_t *rt) {
  const hetc_plan_t *plan = rt->plan;
  uint8_t *slot_has_views = calloc((size_t)plan->num_slots + 1, 1);
  if (!slot_has_views) return hetc_status_new(HETC_STATUS_OUT_OF_MEMORY, "runtime");
  for (int32_t v = 0; v < plan->num_values; ++v)
    if (plan->values[v].offset != 0) slot_has_views[plan->values[v].slot] = 1;
  hetc_status_t status = NULL;
  for (int32_t v = 0; v < plan->num_values && !status; ++v) {
    const hetc_plan_value_t *value = &plan->values[v];
    if (value->offset == 0 && (!slot_has_views[value->slot] || value->bytes == plan->slots[value->slot].bytes))
      continue;
    hetc_plugin_entry_t *e = entry_of(rt, value->device);
    hetc_buffer_view_fn_t view = hetc_plugin_buffer_view_call(e->plugin);
    if (!view) {
      status = hetc_status_new(HETC_STATUS_BAD_INPUT,
                               "value %d (%s) lies inside another value's buffer (a concat's input or a channel slice), "
                               "and target '%s' cannot make views of buffers (ABI minor 2); recompile the package",
                               v, value->name, hetc_entry_name(e));
      break;
    }
    status = view(e->instance, rt->slots[value->slot], value->offset, value->bytes, &rt->views[v]);
    if (!status && !rt->views[v]) status = hetc_status_new(HETC_STATUS_INTERNAL, "buffer_view returned no buffer");
    if (status) status = hetc_status_annotate(status, "value %d (%s): a view of slot %d", v, value->name, value->slot);
  }
  free(slot_has_views);
  return status;
}

/* Slots of host-memory devices are read and written by address: a copy
 * between two of them is one memcpy that needs neither plugin (so it may
 * overlap both devices' kernels). A copy with device memory on both ends
 * goes through a staging buffer. */
static hetc_status_t map_host_slots(hetc_runtime_t *rt) {
  const hetc_plan_t *plan = rt->plan;
  for (int32_t k = 0; k < plan->num_slots; ++k) {
    hetc_plugin_entry_t *e = entry_of(rt, plan->slots[k].device);
    const hetc_plugin_device_t *info =
        hetc_entry_device(e, plan->devices[plan->slots[k].device].device_index);
    if (info && info->host_memory)
      rt->slot_host[k] = hetc_entry_buffer_host_pointer(e, rt->slots[k]);
  }
  for (int32_t s = 0; s < plan->num_steps; ++s) {
    const hetc_plan_step_t *step = &plan->steps[s];
    if (step->kind != HETC_PLAN_STEP_COPY) continue;
    const hetc_plan_value_t *src = &plan->values[step->inputs[0]];
    if (!value_host(rt, step->inputs[0]) && !value_host(rt, step->output) && src->bytes > rt->staging_bytes)
      rt->staging_bytes = src->bytes;
  }
  if (rt->staging_bytes && !(rt->staging = malloc(rt->staging_bytes)))
    return hetc_status_new(HETC_STATUS_OUT_OF_MEMORY, "runtime: %llu bytes of staging",
                           (unsigned long long)rt->staging_bytes);
  return NULL;
}

hetc_status_t hetc_runtime_open(hetc_registry_t *registry, const char *package_dir,
                                hetc_runtime_t **out_runtime) {
  hetc_runtime_t *rt = calloc(1, sizeof(*rt));
  if (!rt) return hetc_status_new(HETC_STATUS_OUT_OF_MEMORY, "runtime");
  unsigned char *weights = NULL;
  hetc_status_t status = hetc_plan_read_manifest(package_dir, &rt->plan);
  /* Before any plugin sees a file: a damaged kernel must not reach dlopen. */
  if (!status) status = hetc_package_files_check(rt->plan, package_dir, 0);
  if (!status) {
    rt->kernel_dir = hetc_path_join(package_dir, HETC_PACKAGE_KERNEL_DIR);
    status = rt->kernel_dir ? hetc_weights_read(rt->plan, package_dir, &weights)
                            : hetc_status_new(HETC_STATUS_OUT_OF_MEMORY, "runtime");
  }
  if (!status) status = resolve_devices(rt, registry);
  if (!status) {
    hetc_plan_t *plan = rt->plan;
    rt->slots = calloc((size_t)plan->num_slots + 1, sizeof(hetc_plugin_buffer_t *));
    rt->slot_host = calloc((size_t)plan->num_slots + 1, sizeof(void *));
    rt->views = calloc((size_t)plan->num_values + 1, sizeof(hetc_plugin_buffer_t *));
    rt->artifacts = calloc((size_t)plan->num_steps + 1, sizeof(hetc_plugin_artifact_t *));
    rt->params = calloc((size_t)plan->num_steps + 1, sizeof(hetc_plugin_buffer_t **));
    rt->workspaces = calloc((size_t)plan->num_devices, sizeof(hetc_plugin_buffer_t *));
    if (!rt->slots || !rt->slot_host || !rt->views || !rt->artifacts || !rt->params || !rt->workspaces || !rt->kernel_dir)
      status = hetc_status_new(HETC_STATUS_OUT_OF_MEMORY, "runtime");
    for (int32_t s = 0; !status && s < plan->num_steps; ++s) {
      status = load_step(rt, s, weights);
      if (hetc_status_code(status) == HETC_STATUS_BAD_INPUT) status = hetc_status_annotate(status, "%s", package_dir);
    }
    for (int32_t k = 0; !status && k < plan->num_slots; ++k)
      status = alloc_buffer(rt, plan->slots[k].device, plan->slots[k].bytes, &rt->slots[k]);
    for (int32_t d = 0; !status && d < plan->num_devices; ++d) {
      uint64_t need = 0;
      for (int32_t s = 0; s < plan->num_steps; ++s)
        if (plan->steps[s].device == d && plan->steps[s].workspace_bytes > need) need = plan->steps[s].workspace_bytes;
      if (need) status = alloc_buffer(rt, d, need, &rt->workspaces[d]);
    }
    if (!status) status = make_views(rt);
    if (!status) status = map_host_slots(rt);
    if (!status) status = hetc_executor_create(rt);
  }
  free(weights);
  if (status) {
    hetc_runtime_close(rt);
    return status;
  }
  *out_runtime = rt;
  return NULL;
}

void hetc_runtime_close(hetc_runtime_t *rt) {
  if (!rt) return;
  /* The workers go first: they may hold the plugins' attention. */
  hetc_executor_destroy(rt->executor);
  hetc_plan_t *plan = rt->plan;
  for (int32_t s = 0; plan && s < plan->num_steps; ++s) {
    hetc_plugin_entry_t *e = rt->entries ? rt->entries[plan->steps[s].device] : NULL;
    if (!e) continue;
    if (rt->params && rt->params[s]) {
      for (int32_t p = 0; p < plan->steps[s].num_params; ++p)
        if (rt->params[s][p]) hetc_entry_buffer_free(e, rt->params[s][p]);
      free(rt->params[s]);
    }
    if (rt->artifacts && rt->artifacts[s]) hetc_entry_artifact_release(e, rt->artifacts[s]);
  }
  for (int32_t v = 0; plan && rt->views && rt->entries && v < plan->num_values; ++v)
    if (rt->views[v]) hetc_entry_buffer_free(entry_of(rt, plan->values[v].device), rt->views[v]);
  for (int32_t k = 0; plan && rt->slots && rt->entries && k < plan->num_slots; ++k) {
    if (rt->slots[k]) hetc_entry_buffer_free(entry_of(rt, plan->slots[k].device), rt->slots[k]);
  }
  for (int32_t d = 0; plan && rt->workspaces && rt->entries && d < plan->num_devices; ++d)
    if (rt->workspaces[d]) hetc_entry_buffer_free(rt->entries[d], rt->workspaces[d]);
  free(rt->entries);
  free(rt->slots);
  free(rt->slot_host);
  free(rt->views);
  free(rt->artifacts);
  free(rt->params);
  free(rt->workspaces);
  free(rt->staging);
  free(rt->kernel_dir);
  hetc_plan_free(plan);
  free(rt);
}

static int64_t value_count(const hetc_runtime_t *rt, int32_t value) {
  return hetc_tensor_element_count(&rt->plan->values[value].type);
}

int64_t hetc_runtime_input_count(const hetc_runtime_t *rt, int32_t index) {
  return value_count(rt, rt->plan->inputs[index].value);
}

int64_t hetc_runtime_output_count(const hetc_runtime_t *rt, int32_t index) {
  return value_count(rt, rt->plan->outputs[index].value);
}

static hetc_status_t transfer(hetc_runtime_t *rt, int32_t value, void *data, int64_t count, int write) {
  const hetc_plan_value_t *v = &rt->plan->values[value];
  if (count != hetc_tensor_element_count(&v->type))
    return hetc_status_new(HETC_STATUS_INVALID_ARGUMENT, "'%s' has %lld elements, got %lld", v->name,
                           (long long)hetc_tensor_element_count(&v->type), (long long)count);
  hetc_plugin_entry_t *e = entry_of(rt, v->device);
  return write ? hetc_entry_buffer_write(e, value_buffer(rt, value), 0, data, v->bytes)
               : hetc_entry_buffer_read(e, value_buffer(rt, value), 0, data, v->bytes);
}

hetc_status_t hetc_runtime_set_input(hetc_runtime_t *rt, int32_t index, const float *data, int64_t count) {
  if (index < 0 || index >= rt->plan->num_inputs)
    return hetc_status_new(HETC_STATUS_INVALID_ARGUMENT, "no input %d", index);
  return transfer(rt, rt->plan->inputs[index].value, (void *)data, count, 1);
}

hetc_status_t hetc_runtime_get_output(hetc_runtime_t *rt, int32_t index, float *data, int64_t count) {
  if (index < 0 || index >= rt->plan->num_outputs)
    return hetc_status_new(HETC_STATUS_INVALID_ARGUMENT, "no output %d", index);
  return transfer(rt, rt->plan->outputs[index].value, data, count, 0);
}
