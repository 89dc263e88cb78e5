/* The public API's view of a context's plugins and devices (hetc/hetc.h):
 * the registry's entries, read through accessors so that the registry
 * keeps its own layout. */
#include <stdlib.h>

#include "kernel/plugin_calls.h"
#include "plugins/peaks.h"
#include "plugins/registry.h"

hetc_status_t hetc_plugins_search_path(char **out_path) {
  char *path = hetc_registry_search_path();
  if (!path) return hetc_status_new(HETC_STATUS_OUT_OF_MEMORY, "plugin search path");
  *out_path = path;
  return NULL;
}

int32_t hetc_context_plugin_count(const hetc_context_t *context) { return context->count; }

hetc_status_t hetc_context_plugin_info(hetc_context_t *context, int32_t index, hetc_plugin_info_t *out_info) {
  if (index < 0 || index >= context->count)
    return hetc_status_new(HETC_STATUS_NOT_FOUND, "plugin %d of %d", index, context->count);
  hetc_plugin_entry_t *entry = &context->entries[index];
  /* An instance that fails marks the entry unavailable with the reason,
   * which is what the info then says. */
  if (entry->state == HETC_PLUGIN_STATE_READY) hetc_status_free(hetc_registry_instance(entry));
  *out_info = (hetc_plugin_info_t){.path = entry->path, .state = entry->state, .reason = entry->reason,
                                   .plugin = entry->plugin,
                                   .device_count = entry->instance ? hetc_entry_device_count(entry) : 0};
  return NULL;
}

const hetc_plugin_device_t *hetc_context_plugin_device(const hetc_context_t *context, int32_t index,
                                                       int32_t device_index) {
  if (index < 0 || index >= context->count || !context->entries[index].instance) return NULL;
  const hetc_plugin_entry_t *entry = &context->entries[index];
  if (device_index < 0 || device_index >= hetc_entry_device_count(entry)) return NULL;
  return hetc_entry_device(entry, device_index);
}

hetc_status_t hetc_context_target(hetc_context_t *context, const char *target, int32_t *out_index) {
  hetc_plugin_entry_t *entry = NULL;
  HETC_RETURN_IF_ERROR(hetc_registry_target(context, target, &entry));
  *out_index = (int32_t)(entry - context->entries);
  return NULL;
}

void hetc_context_keep_peaks(hetc_context_t *context, const char *records_path, hetc_peaks_mode_t mode) {
  hetc_registry_keep_peaks(context, records_path, mode);
}
