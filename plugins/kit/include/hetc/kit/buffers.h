/* hetc/kit/buffers.h -- buffers in plain host memory, for plugins whose
 * devices compute on host memory (hetc_plugin_device_t.host_memory = 1).
 *
 * The functions have the ABI's signatures, so a table points at them
 * directly (.buffer_alloc = hetc_kit_buffer_alloc, ...). They ignore the
 * instance and device index: every device of such a plugin shares the
 * process's memory. Blocks come from the bound host's allocator, so the
 * host counts what the plugin holds. Defining struct hetc_plugin_buffer_t
 * here means a plugin using these buffers has no buffer type of its own. */
#ifndef HETC_KIT_BUFFERS_H_
#define HETC_KIT_BUFFERS_H_

#include <stdint.h>

#include <hetc/plugin.h>

#ifdef __cplusplus
extern "C" {
#endif

struct hetc_plugin_buffer_t {
  void *data;     /* 64-byte aligned, zeroed at allocation; or inside a parent's */
  uint64_t bytes; /* as requested */
  int owns_data;  /* 0 for a view: its parent frees the memory */
};

/* *out_buffer is the caller's, freed with hetc_kit_buffer_free. Zeroed, so
 * the padding channels of an NCHWc buffer nobody wrote read as zeros. */
hetc_plugin_status_t hetc_kit_buffer_alloc(hetc_plugin_instance_t *instance, int32_t device_index, uint64_t bytes,
                                           hetc_plugin_buffer_t **out_buffer);
/* Frees the buffer (and its memory unless it is a view); NULL is a no-op. */
void hetc_kit_buffer_free(hetc_plugin_instance_t *instance, hetc_plugin_buffer_t *buffer);
/* Ranges past the end are refused with INVALID_ARGUMENT. */
hetc_plugin_status_t hetc_kit_buffer_write(hetc_plugin_instance_t *instance, hetc_plugin_buffer_t *buffer,
                                           uint64_t offset, const void *src, uint64_t bytes);
hetc_plugin_status_t hetc_kit_buffer_read(hetc_plugin_instance_t *instance, const hetc_plugin_buffer_t *buffer,
                                          uint64_t offset, void *dst, uint64_t bytes);
/* The two ranges may overlap (one buffer, or a view and its parent). */
hetc_plugin_status_t hetc_kit_buffer_copy(hetc_plugin_instance_t *instance, hetc_plugin_buffer_t *dst,
                                          uint64_t dst_offset, const hetc_plugin_buffer_t *src,
                                          uint64_t src_offset, uint64_t bytes);
/* The buffer's memory: valid until buffer_free, never freed by the caller. */
void *hetc_kit_buffer_host_pointer(hetc_plugin_instance_t *instance, hetc_plugin_buffer_t *buffer);
/* A view of parent's bytes [offset, offset + bytes) (plugin.h, buffer_view,
 * since minor 2: point the table at it only when built against minor >= 2).
 * *out_view is the caller's, freed with hetc_kit_buffer_free before the
 * parent. */
hetc_plugin_status_t hetc_kit_buffer_view(hetc_plugin_instance_t *instance, hetc_plugin_buffer_t *parent,
                                          uint64_t offset, uint64_t bytes, hetc_plugin_buffer_t **out_view);

#ifdef __cplusplus
}
#endif

#endif /* HETC_KIT_BUFFERS_H_ */
