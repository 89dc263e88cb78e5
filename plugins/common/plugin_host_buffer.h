/* plugins/common/plugin_host_buffer.h -- buffers in host memory, for the
 * built-in CPU backends (devices with host_memory = 1). `plugin` names the
 * backend in messages; `host` is its host table (allocator and statuses). */
#ifndef HETC_PLUGINS_COMMON_PLUGIN_HOST_BUFFER_H_
#define HETC_PLUGINS_COMMON_PLUGIN_HOST_BUFFER_H_

#include <stdint.h>

#include "hetc/plugin.h"

struct hetc_plugin_buffer_t {
  void *data;     /* 64-byte aligned, from host->alloc (zeroed), or inside a parent's */
  uint64_t bytes; /* as requested */
  int owns_data;  /* 0 for a view: its parent frees the memory */
};

hetc_plugin_status_t hpc_buffer_alloc(const hetc_plugin_host_t *host, const char *plugin, uint64_t bytes,
                                      hetc_plugin_buffer_t **out_buffer);
void hpc_buffer_free(const hetc_plugin_host_t *host, hetc_plugin_buffer_t *buffer);
hetc_plugin_status_t hpc_buffer_write(const hetc_plugin_host_t *host, const char *plugin,
                                      hetc_plugin_buffer_t *buffer, uint64_t offset, const void *src,
                                      uint64_t bytes);
hetc_plugin_status_t hpc_buffer_read(const hetc_plugin_host_t *host, const char *plugin,
                                     const hetc_plugin_buffer_t *buffer, uint64_t offset, void *dst,
                                     uint64_t bytes);
/* A view of parent's bytes [offset, offset + bytes) (plugin.h, buffer_view). */
hetc_plugin_status_t hpc_buffer_view(const hetc_plugin_host_t *host, const char *plugin,
                                     hetc_plugin_buffer_t *parent, uint64_t offset, uint64_t bytes,
                                     hetc_plugin_buffer_t **out_view);
hetc_plugin_status_t hpc_buffer_copy(const hetc_plugin_host_t *host, const char *plugin,
                                     hetc_plugin_buffer_t *dst, uint64_t dst_offset,
                                     const hetc_plugin_buffer_t *src, uint64_t src_offset, uint64_t bytes);

#endif /* HETC_PLUGINS_COMMON_PLUGIN_HOST_BUFFER_H_ */
