#include "plugin_host_buffer.h"

#include <stdlib.h>
#include <string.h>

hetc_plugin_status_t hpc_buffer_alloc(const hetc_plugin_host_t *host, const char *plugin, uint64_t bytes,
                                      hetc_plugin_buffer_t **out_buffer) {
  *out_buffer = NULL;
  if (bytes > ((uint64_t)1 << 40))
    return host->status_new(HETC_PLUGIN_STATUS_OUT_OF_MEMORY, "%s: %llu bytes is too large", plugin,
                            (unsigned long long)bytes);
  hetc_plugin_buffer_t *b = calloc(1, sizeof(*b));
  /* host->alloc aligns to 64 bytes; keep at least one line. */
  size_t size = (size_t)((bytes + 63) / 64 * 64);
  if (size == 0) size = 64;
  void *data = b ? host->alloc(size) : NULL;
  if (!data) {
    free(b);
    return host->status_new(HETC_PLUGIN_STATUS_OUT_OF_MEMORY, "%s: cannot allocate %llu bytes", plugin,
                            (unsigned long long)bytes);
  }
  /* Zeroed, so NCHWc padding channels of a buffer nobody wrote are zero. */
  memset(data, 0, size);
  b->data = data;
  b->bytes = bytes;
  b->owns_data = 1;
  *out_buffer = b;
  return NULL;
}

void hpc_buffer_free(const hetc_plugin_host_t *host, hetc_plugin_buffer_t *buffer) {
  if (!buffer) return;
  if (buffer->owns_data) host->free(buffer->data);
  free(buffer);
}

static hetc_plugin_status_t check_range(const hetc_plugin_host_t *host, const char *plugin,
                                        const hetc_plugin_buffer_t *b, uint64_t offset, uint64_t bytes,
                                        const char *what) {
  if (!b) return host->status_new(HETC_PLUGIN_STATUS_INVALID_ARGUMENT, "%s: %s: null buffer", plugin, what);
  if (offset > b->bytes || bytes > b->bytes - offset)
    return host->status_new(HETC_PLUGIN_STATUS_INVALID_ARGUMENT,
                            "%s: %s: [%llu, +%llu) outside a buffer of %llu bytes", plugin, what,
                            (unsigned long long)offset, (unsigned long long)bytes, (unsigned long long)b->bytes);
  return NULL;
}

hetc_plugin_status_t hpc_buffer_write(const hetc_plugin_host_t *host, const char *plugin,
                                      hetc_plugin_buffer_t *buffer, uint64_t offset, const void *src,
                                      uint64_t bytes) {
  hetc_plugin_status_t s = check_range(host, plugin, buffer, offset, bytes, "buffer_write");
  if (s) return s;
  if (bytes && !src)
    return host->status_new(HETC_PLUGIN_STATUS_INVALID_ARGUMENT, "%s: buffer_write: null source", plugin);
  if (bytes) memcpy((char *)buffer->data + offset, src, (size_t)bytes);
  return NULL;
}

hetc_plugin_status_t hpc_buffer_read(const hetc_plugin_host_t *host, const char *plugin,
                                     const hetc_plugin_buffer_t *buffer, uint64_t offset, void *dst,
                                     uint64_t bytes) {
  hetc_plugin_status_t s = check_range(host, plugin, buffer, offset, bytes, "buffer_read");
  if (s) return s;
  if (bytes && !dst)
    return host->status_new(HETC_PLUGIN_STATUS_INVALID_ARGUMENT, "%s: buffer_read: null target", plugin);
  if (bytes) memcpy(dst, (const char *)buffer->data + offset, (size_t)bytes);
  return NULL;
}

hetc_plugin_status_t hpc_buffer_copy(const hetc_plugin_host_t *host, const char *plugin,
                                     hetc_plugin_buffer_t *dst, uint64_t dst_offset,
                                     const hetc_plugin_buffer_t *src, uint64_t src_offset, uint64_t bytes) {
  hetc_plugin_status_t s = check_range(host, plugin, dst, dst_offset, bytes, "buffer_copy destination");
  if (!s) s = check_range(host, plugin, src, src_offset, bytes, "buffer_copy source");
  if (s) return s;
  if (bytes) memmove((char *)dst->data + dst_offset, (const char *)src->data + src_offset, (size_t)bytes);
  return NULL;
}

hetc_plugin_status_t hpc_buffer_view(const hetc_plugin_host_t *host, const char *plugin,
                                     hetc_plugin_buffer_t *parent, uint64_t offset, uint64_t bytes,
                                     hetc_plugin_buffer_t **out_view) {
  if (!out_view)
    return host->status_new(HETC_PLUGIN_STATUS_INVALID_ARGUMENT, "%s: buffer_view: null out_view", plugin);
  *out_view = NULL;
  hetc_plugin_status_t s = check_range(host, plugin, parent, offset, bytes, "buffer_view");
  if (s) return s;
  hetc_plugin_buffer_t *view = calloc(1, sizeof(*view));
  if (!view) return host->status_new(HETC_PLUGIN_STATUS_OUT_OF_MEMORY, "%s: buffer_view", plugin);
  view->data = (char *)parent->data + offset;
  view->bytes = bytes;
  *out_view = view;
  return NULL;
}
