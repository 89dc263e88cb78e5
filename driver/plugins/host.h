/* driver/plugins/host.h -- the services table hetc hands every plugin. */
#ifndef HETC_DRIVER_PLUGINS_HOST_H_
#define HETC_DRIVER_PLUGINS_HOST_H_

#include "hetc/plugin.h"

/* The static host table (thread-safe; lives for the process). */
const hetc_plugin_host_t *hetc_host_services(void);

/* struct_size of the host table at ABI level `level` (plugins/abi_level.h;
 * levels above this host's give its own size): what a host of that version
 * would hand a plugin. Updated with every minor that appends to the table. */
size_t hetc_host_table_size(uint32_t level);

/* `host` as a host of ABI 1.7 shows itself to a plugin of major 1: the same
 * services under a header saying 1.7 (2.0 appended nothing to the table).
 * The copy is made once per distinct `host` and lives for the process,
 * since a plugin may keep the pointer as long as its code is mapped. NULL
 * when out of memory. */
const hetc_plugin_host_t *hetc_host_as_major1(const hetc_plugin_host_t *host);

/* Messages at or below this level are printed to stderr (default WARNING;
 * HETC_LOG_LEVEL=error|warning|info|debug overrides). */
void hetc_host_set_log_level(int32_t level);

/* An aligned allocation as plugins get it; freed with hetc_host_free. */
void *hetc_host_alloc(size_t size);
void hetc_host_free(void *ptr);

#endif /* HETC_DRIVER_PLUGINS_HOST_H_ */
