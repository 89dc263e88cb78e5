/* driver/plugins/host.h -- the services table hetc hands every plugin. */
#ifndef HETC_DRIVER_PLUGINS_HOST_H_
#define HETC_DRIVER_PLUGINS_HOST_H_

#include "hetc/plugin.h"

/* The static host table (thread-safe; lives for the process). */
const hetc_plugin_host_t *hetc_host_services(void);

/* struct_size of the host table as ABI minor `minor` defined it (minors
 * above this host's give its own size): what a host of that minor would
 * hand a plugin. Updated with every minor that appends to the table. */
size_t hetc_host_table_size(uint32_t minor);

/* Messages at or below this level are printed to stderr (default WARNING;
 * HETC_LOG_LEVEL=error|warning|info|debug overrides). */
void hetc_host_set_log_level(int32_t level);

/* An aligned allocation as plugins get it; freed with hetc_host_free. */
void *hetc_host_alloc(size_t size);
void hetc_host_free(void *ptr);

#endif /* HETC_DRIVER_PLUGINS_HOST_H_ */
