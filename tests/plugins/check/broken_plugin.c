/* Deliberately broken plugins for test_plugin_check: each wraps the
 * example_c sample (BASE_PLUGIN, loaded with dlopen) and breaks one rule,
 * picked by a compile definition:
 *   DEFECT_WRONG_MAJOR      its table says the ABI major after the host's
 *   DEFECT_BAD_DESCRIPTOR   its device has -4 compute units
 *   DEFECT_SPACE_DRIFT      conv2d spaces change from one definition to the next
 *   DEFECT_CRASH            building a conv2d kernel crashes
 *   DEFECT_WRONG_NUMBERS    conv2d kernels add 0.5 to their first output
 *   DEFECT_LEAK             conv2d artifacts are never freed
 *   DEFECT_COPY_TRANSFORM   a layout_transform to another layout is a plain
 *                           copy, whose artifact_info says so
 * The sample's own behaviour is correct (plugin-check passes it), so each
 * failure plugin-check reports comes from the defect alone. */
#include <dlfcn.h>
#include <signal.h>
#include <stddef.h>
#include <string.h>

#include "hetc/plugin.h"

static hetc_plugin_t table;
static const hetc_plugin_t *base;

#ifdef DEFECT_BAD_DESCRIPTOR
static hetc_plugin_device_t device;
static const hetc_plugin_device_t *broken_device_get(const hetc_plugin_instance_t *instance, int32_t index) {
  const hetc_plugin_device_t *real = base->device_get(instance, index);
  if (!real) return NULL;
  device = *real;
  device.compute_units = -4;
  return &device;
}
#endif

#ifdef DEFECT_SPACE_DRIFT
/* State that should not be there: every other definition sees twice the
 * output channels. */
static int definitions;
static hetc_plugin_status_t drifting_define_space(const hetc_plugin_instance_t *instance, int32_t device_index,
                                                  const hetc_plugin_workload_t *workload, int32_t template_index,
                                                  hetc_plugin_space_t *space) {
  hetc_plugin_workload_t drifted = *workload;
  if (workload->op == HETC_PLUGIN_OP_CONV2D && definitions++ % 2) {
    drifted.output.shape[1] *= 2;
    drifted.groups = 1;
  }
  return base->template_define_space(instance, device_index, &drifted, template_index, space);
}
#endif

#ifdef DEFECT_CRASH
static hetc_plugin_status_t crashing_build(hetc_plugin_instance_t *instance, int32_t device_index,
                                           const hetc_plugin_workload_t *workload, int32_t template_index,
                                           const hetc_plugin_config_t *config, hetc_plugin_artifact_t **out) {
  if (workload->op == HETC_PLUGIN_OP_CONV2D) raise(SIGSEGV);
  return base->build(instance, device_index, workload, template_index, config, out);
}
#endif

#ifdef DEFECT_COPY_TRANSFORM
static hetc_plugin_status_t copying_build(hetc_plugin_instance_t *instance, int32_t device_index,
                                          const hetc_plugin_workload_t *workload, int32_t template_index,
                                          const hetc_plugin_config_t *config, hetc_plugin_artifact_t **out) {
  hetc_plugin_workload_t copy = *workload;
  if (workload->op == HETC_PLUGIN_OP_LAYOUT_TRANSFORM) copy.output.layout = workload->inputs[0].layout;
  return base->build(instance, device_index, &copy, template_index, config, out);
}
#endif

#ifdef DEFECT_WRONG_NUMBERS
static hetc_plugin_status_t wrong_run(hetc_plugin_instance_t *instance, const hetc_plugin_artifact_t *artifact,
                                      hetc_plugin_buffer_t *const *args, int32_t num_args) {
  hetc_plugin_status_t status = base->run(instance, artifact, args, num_args);
  const hetc_plugin_artifact_info_t *info = base->artifact_info(artifact);
  /* Conv2d artifacts are the ones with a weight and 4-d outputs. */
  if (!status && info->num_params > 0 && num_args == info->num_inputs + info->num_params + 1 &&
      strstr(info->description, "direct")) {
    float *output = base->buffer_host_pointer(instance, args[num_args - 1]);
    output[0] += 0.5f;
  }
  return status;
}
#endif

#ifdef DEFECT_LEAK
static void leaking_release(hetc_plugin_instance_t *instance, hetc_plugin_artifact_t *artifact) {
  const hetc_plugin_artifact_info_t *info = base->artifact_info(artifact);
  if (info && strstr(info->description, "direct")) return;
  base->artifact_release(instance, artifact);
}
#endif

HETC_PLUGIN_EXPORT const hetc_plugin_t *hetc_plugin_query(uint32_t host_abi_major, uint32_t host_abi_minor,
                                                           const hetc_plugin_host_t *host) {
  void *handle = dlopen(BASE_PLUGIN, RTLD_NOW | RTLD_LOCAL);
  void *symbol = handle ? dlsym(handle, HETC_PLUGIN_QUERY_SYMBOL) : NULL;
  hetc_plugin_query_fn_t query;
  memcpy(&query, &symbol, sizeof(query));
  base = query ? query(host_abi_major, host_abi_minor, host) : NULL;
  if (!base) return NULL;
  memcpy(&table, base, sizeof(table));
#ifdef DEFECT_WRONG_MAJOR
  table.header.abi_major = HETC_PLUGIN_ABI_MAJOR + 1;
#endif
#ifdef DEFECT_BAD_DESCRIPTOR
  table.device_get = broken_device_get;
#endif
#ifdef DEFECT_SPACE_DRIFT
  table.template_define_space = drifting_define_space;
#endif
#ifdef DEFECT_CRASH
  table.build = crashing_build;
#endif
#ifdef DEFECT_COPY_TRANSFORM
  table.build = copying_build;
#endif
#ifdef DEFECT_WRONG_NUMBERS
  table.run = wrong_run;
#endif
#ifdef DEFECT_LEAK
  table.artifact_release = leaking_release;
#endif
  return &table;
}
