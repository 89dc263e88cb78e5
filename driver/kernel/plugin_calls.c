/* The calls hetc makes into a loaded plugin (plugin_calls.h). */
#include "kernel/plugin_calls.h"
#include "plugins/abi_level.h"

const char *hetc_entry_name(const hetc_plugin_entry_t *entry) { return entry->plugin->name; }
const char *hetc_entry_version(const hetc_plugin_entry_t *entry) { return entry->plugin->version; }

int32_t hetc_entry_device_count(const hetc_plugin_entry_t *entry) {
  return entry->plugin->device_count(entry->instance);
}

const hetc_plugin_device_t *hetc_entry_device(const hetc_plugin_entry_t *entry, int32_t device_index) {
  return entry->plugin->device_get(entry->instance, device_index);
}

int32_t hetc_entry_supports(const hetc_plugin_entry_t *entry, int32_t device_index,
                            const hetc_plugin_workload_t *workload) {
  /* A plugin's supports is not asked about what its ABI version did not
   * define. */
  return hetc_plugin_abi_level(entry->plugin) >= hetc_workload_abi_level(workload) &&
         entry->plugin->supports(entry->instance, device_index, workload);
}

uint32_t hetc_entry_abi_level(const hetc_plugin_entry_t *entry) { return hetc_plugin_abi_level(entry->plugin); }

int32_t hetc_entry_template_count(const hetc_plugin_entry_t *entry, int32_t device_index,
                                  const hetc_plugin_workload_t *workload) {
  return entry->plugin->template_count(entry->instance, device_index, workload);
}

const char *hetc_entry_template_name(const hetc_plugin_entry_t *entry, int32_t device_index,
                                     const hetc_plugin_workload_t *workload, int32_t template_index) {
  return entry->plugin->template_name(entry->instance, device_index, workload, template_index);
}

hetc_status_t hetc_entry_build(const hetc_plugin_entry_t *entry, int32_t device_index,
                               const hetc_plugin_workload_t *workload, int32_t template_index,
                               const hetc_plugin_config_t *config, hetc_plugin_artifact_t **out_artifact) {
  return entry->plugin->build(entry->instance, device_index, workload, template_index, config, out_artifact);
}

const hetc_plugin_artifact_info_t *hetc_entry_artifact_info(const hetc_plugin_entry_t *entry,
                                                            const hetc_plugin_artifact_t *artifact) {
  return entry->plugin->artifact_info(artifact);
}

hetc_status_t hetc_entry_pack_param(const hetc_plugin_entry_t *entry, const hetc_plugin_artifact_t *artifact,
                                    int32_t param_index, const float *data, uint64_t count, void *out_packed) {
  return entry->plugin->pack_param(artifact, param_index, data, count, out_packed);
}

hetc_status_t hetc_entry_artifact_emit(const hetc_plugin_entry_t *entry, const hetc_plugin_artifact_t *artifact,
                                       const char *dir, const char *prefix) {
  return entry->plugin->artifact_emit(entry->instance, artifact, dir, prefix);
}

hetc_status_t hetc_entry_artifact_load(const hetc_plugin_entry_t *entry, int32_t device_index,
                                       const hetc_plugin_workload_t *workload, int32_t template_index,
                                       const hetc_plugin_config_t *config, const char *dir, const char *prefix,
                                       hetc_plugin_artifact_t **out_artifact) {
  return entry->plugin->artifact_load(entry->instance, device_index, workload, template_index, config, dir, prefix,
                                      out_artifact);
}

void hetc_entry_artifact_release(const hetc_plugin_entry_t *entry, hetc_plugin_artifact_t *artifact) {
  entry->plugin->artifact_release(entry->instance, artifact);
}

hetc_status_t hetc_entry_buffer_alloc(const hetc_plugin_entry_t *entry, int32_t device_index, uint64_t bytes,
                                      hetc_plugin_buffer_t **out_buffer) {
  return entry->plugin->buffer_alloc(entry->instance, device_index, bytes, out_buffer);
}

void hetc_entry_buffer_free(const hetc_plugin_entry_t *entry, hetc_plugin_buffer_t *buffer) {
  entry->plugin->buffer_free(entry->instance, buffer);
}

hetc_status_t hetc_entry_buffer_write(const hetc_plugin_entry_t *entry, hetc_plugin_buffer_t *buffer,
                                      uint64_t offset, const void *src, uint64_t bytes) {
  return entry->plugin->buffer_write(entry->instance, buffer, offset, src, bytes);
}

hetc_status_t hetc_entry_buffer_read(const hetc_plugin_entry_t *entry, const hetc_plugin_buffer_t *buffer,
                                     uint64_t offset, void *dst, uint64_t bytes) {
  return entry->plugin->buffer_read(entry->instance, buffer, offset, dst, bytes);
}

void *hetc_entry_buffer_host_pointer(const hetc_plugin_entry_t *entry, hetc_plugin_buffer_t *buffer) {
  return entry->plugin->buffer_host_pointer ? entry->plugin->buffer_host_pointer(entry->instance, buffer) : NULL;
}

hetc_status_t hetc_entry_run(const hetc_plugin_entry_t *entry, const hetc_plugin_artifact_t *artifact,
                             hetc_plugin_buffer_t *const *args, int32_t num_args) {
  return entry->plugin->run(entry->instance, artifact, args, num_args);
}

hetc_status_t hetc_entry_time(const hetc_plugin_entry_t *entry, const hetc_plugin_artifact_t *artifact,
                              hetc_plugin_buffer_t *const *args, int32_t num_args, int32_t number, int32_t repeat,
                              double *out_seconds) {
  return entry->plugin->time(entry->instance, artifact, args, num_args, number, repeat, out_seconds);
}
