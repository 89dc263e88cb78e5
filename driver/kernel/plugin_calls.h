/* driver/kernel/plugin_calls.h -- the calls hetc makes into a loaded
 * plugin, one wrapper each.
 *
 * The driver's stages reach a plugin through these, never through its table
 * (the registry, which loads and negotiates, and plugin-check, which tests
 * the table itself, are the exceptions): so the ABI's optional calls are
 * checked in one place, and one place can count, trace or lock them. Each
 * takes the registry entry of a ready plugin whose instance exists, and
 * has the semantics and ownership of the call it wraps (hetc/plugin.h). */
#ifndef HETC_DRIVER_KERNEL_PLUGIN_CALLS_H_
#define HETC_DRIVER_KERNEL_PLUGIN_CALLS_H_

#include "plugins/registry.h"

/* The target name and version the plugin's table gives (static strings). */
const char *hetc_entry_name(const hetc_plugin_entry_t *entry);
const char *hetc_entry_version(const hetc_plugin_entry_t *entry);

int32_t hetc_entry_device_count(const hetc_plugin_entry_t *entry);
const hetc_plugin_device_t *hetc_entry_device(const hetc_plugin_entry_t *entry, int32_t device_index);

/* 0 without asking a plugin of an ABI version older than the workload's
 * (hetc_workload_abi_level). */
int32_t hetc_entry_supports(const hetc_plugin_entry_t *entry, int32_t device_index,
                            const hetc_plugin_workload_t *workload);
/* The ABI level of the plugin's table (plugins/abi_level.h): graphs for it
 * are optimised with hetc_graph_optimize_for. */
uint32_t hetc_entry_abi_level(const hetc_plugin_entry_t *entry);
int32_t hetc_entry_template_count(const hetc_plugin_entry_t *entry, int32_t device_index,
                                  const hetc_plugin_workload_t *workload);
const char *hetc_entry_template_name(const hetc_plugin_entry_t *entry, int32_t device_index,
                                     const hetc_plugin_workload_t *workload, int32_t template_index);

hetc_status_t hetc_entry_build(const hetc_plugin_entry_t *entry, int32_t device_index,
                               const hetc_plugin_workload_t *workload, int32_t template_index,
                               const hetc_plugin_config_t *config, hetc_plugin_artifact_t **out_artifact);
const hetc_plugin_artifact_info_t *hetc_entry_artifact_info(const hetc_plugin_entry_t *entry,
                                                            const hetc_plugin_artifact_t *artifact);
hetc_status_t hetc_entry_pack_param(const hetc_plugin_entry_t *entry, const hetc_plugin_artifact_t *artifact,
                                    int32_t param_index, const float *data, uint64_t count, void *out_packed);
hetc_status_t hetc_entry_artifact_emit(const hetc_plugin_entry_t *entry, const hetc_plugin_artifact_t *artifact,
                                       const char *dir, const char *prefix);
hetc_status_t hetc_entry_artifact_load(const hetc_plugin_entry_t *entry, int32_t device_index,
                                       const hetc_plugin_workload_t *workload, int32_t template_index,
                                       const hetc_plugin_config_t *config, const char *dir, const char *prefix,
                                       hetc_plugin_artifact_t **out_artifact);
void hetc_entry_artifact_release(const hetc_plugin_entry_t *entry, hetc_plugin_artifact_t *artifact);

hetc_status_t hetc_entry_buffer_alloc(const hetc_plugin_entry_t *entry, int32_t device_index, uint64_t bytes,
                                      hetc_plugin_buffer_t **out_buffer);
void hetc_entry_buffer_free(const hetc_plugin_entry_t *entry, hetc_plugin_buffer_t *buffer);
hetc_status_t hetc_entry_buffer_write(const hetc_plugin_entry_t *entry, hetc_plugin_buffer_t *buffer,
                                      uint64_t offset, const void *src, uint64_t bytes);
hetc_status_t hetc_entry_buffer_read(const hetc_plugin_entry_t *entry, const hetc_plugin_buffer_t *buffer,
                                     uint64_t offset, void *dst, uint64_t bytes);
/* NULL also when the plugin has no buffer_host_pointer (it is optional). */
void *hetc_entry_buffer_host_pointer(const hetc_plugin_entry_t *entry, hetc_plugin_buffer_t *buffer);

hetc_status_t hetc_entry_run(const hetc_plugin_entry_t *entry, const hetc_plugin_artifact_t *artifact,
                             hetc_plugin_buffer_t *const *args, int32_t num_args);
hetc_status_t hetc_entry_time(const hetc_plugin_entry_t *entry, const hetc_plugin_artifact_t *artifact,
                              hetc_plugin_buffer_t *const *args, int32_t num_args, int32_t number, int32_t repeat,
                              double *out_seconds);

#endif /* HETC_DRIVER_KERNEL_PLUGIN_CALLS_H_ */
