/* Buffers in host memory (hetc/kit/buffers.h). */
#include "hetc/kit/buffers.h"

#include <string.h>

#include "hetc/kit/host.h"
#include "hetc/kit/status.h"

hetc_plugin_status_t hetc_kit_buffer_alloc(hetc_plugin_instance_t *instance, int32_t device_index, uint64_t bytes,
                                           hetc_plugin_buffer_t **out_buffer) {
  (void)instance;
  (void)device_index;
  const char *plugin = hetc_kit_plugin_name();
  if (!out_buffer)
    return hetc_kit_status(HETC_PLUGIN_STATUS_INVALID_ARGUMENT, "%s: buffer_alloc: null out_buffer", plugin);
  *out_buffer = NULL;
  if (bytes > ((uint64_t)1 << 40))
    return hetc_kit_status(HETC_PLUGIN_STATUS_OUT_OF_MEMORY, "%s: %llu bytes is too large", plugin,
                           (unsigned long long)bytes);
  /* Whole 64-byte lines, at least one: a kernel's vector loads may read to
   * the end of the last line, and an empty buffer still has an address. */
  size_t size = (size_t)((bytes + 63) / 64 * 64);
  if (size == 0) size = 64;
  hetc_plugin_buffer_t *b = hetc_kit_host_calloc(sizeof(*b));
  void *data = b ? hetc_kit_host_calloc(size) : NULL;
  if (!data) {
    hetc_kit_host()->free(b);
    return hetc_kit_status(HETC_PLUGIN_STATUS_OUT_OF_MEMORY, "%s: cannot allocate %llu bytes", plugin,
                           (unsigned long long)bytes);
  }
  b->data = data;
  b->bytes = bytes;
  b->owns_data = 1;
  *out_buffer = b;
  return NULL;
}

void hetc_kit_buffer_free(hetc_plugin_instance_t *instance, hetc_plugin_buffer_t *buffer) {
  (void)instance;
  if (!buffer) return;
  if (buffer->owns_data) hetc_kit_host()->free(buffer->data);
  hetc_kit_host()->free(buffer);
}

/* offset + bytes within the buffer, without overflowing. */
static hetc_plugin_status_t check_range(const hetc_plugin_buffer_t *b, uint64_t offset, uint64_t bytes,
                                        const char *what) {
  const char *plugin = hetc_kit_plugin_name();
  if (!b) return hetc_kit_status(HETC_PLUGIN_STATUS_INVALID_ARGUMENT, "%s: %s: null buffer", plugin, what);
  if (offset > b->bytes || bytes > b->bytes - offset)
    return hetc_kit_status(HETC_PLUGIN_STATUS_INVALID_ARGUMENT, "%s: %s: [%llu, +%llu) outside a buffer of %llu bytes",
                           plugin, what, (unsigned long long)offset, (unsigned long long)bytes,
                           (unsigned long long)b->bytes);
  return NULL;
}

hetc_plugin_status_t hetc_kit_buffer_write(hetc_plugin_instance_t *instance, hetc_plugin_buffer_t *buffer,
                                           uint64_t offset, const void *src, uint64_t bytes) {
  (void)instance;
  hetc_plugin_status_t s = check_range(buffer, offset, bytes, "buffer_write");
  if (s) return s;
  if (bytes && !src)
    return hetc_kit_status(HETC_PLUGIN_STATUS_INVALID_ARGUMENT, "%s: buffer_write: null source",
                           hetc_kit_plugin_name());
  if (bytes) memcpy((char *)buffer->data + offset, src, (size_t)bytes);
  return NULL;
}

hetc_plugin_status_t hetc_kit_buffer_read(hetc_plugin_instance_t *instance, const hetc_plugin_buffer_t *buffer,
                                          uint64_t offset, void *dst, uint64_t bytes) {
  (void)instance;
  hetc_plugin_status_t s = check_range(buffer, offset, bytes, "buffer_read");
  if (s) return s;
  if (bytes && !dst)
    return hetc_kit_status(HETC_PLUGIN_STATUS_INVALID_ARGUMENT, "%s: buffer_read: null target", hetc_kit_plugin_name());
  if (bytes) memcpy(dst, (const char *)buffer->data + offset, (size_t)bytes);
  return NULL;
}

hetc_plugin_status_t hetc_kit_buffer_copy(hetc_plugin_instance_t *instance, hetc_plugin_buffer_t *dst,
                                          uint64_t dst_offset, const hetc_plugin_buffer_t *src,
                                          uint64_t src_offset, uint64_t bytes) {
  (void)instance;
  hetc_plugin_status_t s = check_range(dst, dst_offset, bytes, "buffer_copy destination");
  if (!s) s = check_range(src, src_offset, bytes, "buffer_copy source");
  if (s) return s;
  if (bytes) memmove((char *)dst->data + dst_offset, (const char *)src->data + src_offset, (size_t)bytes);
  return NULL;
}

void *hetc_kit_buffer_host_pointer(hetc_plugin_instance_t *instance, hetc_plugin_buffer_t *buffer) {
  (void)instance;
  return buffer ? buffer->data : NULL;
}

hetc_plugin_status_t hetc_kit_buffer_view(hetc_plugin_instance_t *instance, hetc_plugin_buffer_t *parent,
                                          uint64_t offset, uint64_t bytes, hetc_plugin_buffer_t **out_view) {
  (void)instance;
  if (!out_view)
    return hetc_kit_status(HETC_PLUGIN_STATUS_INVALID_ARGUMENT, "%s: buffer_view: null out_view",
                           hetc_kit_plugin_name());
  *out_view = NULL;
  hetc_plugin_status_t s = check_range(parent, offset, bytes, "buffer_view");
  if (s) return s;
  hetc_plugin_buffer_t *view = hetc_kit_host_calloc(sizeof(*view));
  if (!view) return hetc_kit_status(HETC_PLUGIN_STATUS_OUT_OF_MEMORY, "%s: buffer_view", hetc_kit_plugin_name());
  view->data = (char *)parent->data + offset;
  view->bytes = bytes;
  *out_view = view;
  return NULL;
}
