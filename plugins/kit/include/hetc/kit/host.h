/* hetc/kit/host.h -- binding the plugin kit to the host table.
 *
 * The kit is compiled into one plugin (a static library with hidden
 * visibility), so it keeps that plugin's host table and target name once,
 * from hetc_plugin_query, instead of taking them in every call. Everything
 * in the kit that allocates, creates a status, logs or runs on the host's
 * pool uses the bound host; only hetc_kit_status_va and hetc_kit_log_va
 * (status.h) take a host of their own. */
#ifndef HETC_KIT_HOST_H_
#define HETC_KIT_HOST_H_

#include <stddef.h>
#include <stdint.h>

#include <hetc/plugin.h>

#ifdef __cplusplus
extern "C" {
#endif

/* For hetc_plugin_query: 1 when this host can be served -- the major of the
 * header the plugin is built with, a table as long as minor 0's (the kit
 * reads later fields only after HETC_PLUGIN_HAS_FIELD) holding the services
 * the kit calls: alloc, free, log, status_new, space_define_split,
 * space_define_knob, parallel_for, thread_count -- and the kit is then
 * bound to `host`, naming the plugin `plugin_name` (a static string: the
 * target name) in messages and logs. 0, binding nothing, when the query
 * should return NULL. A plugin checks any other service it calls itself. */
int hetc_kit_bind(uint32_t host_abi_major, const hetc_plugin_host_t *host, const char *plugin_name);

/* The bound host and name; NULL before hetc_kit_bind succeeded. */
const hetc_plugin_host_t *hetc_kit_host(void);
const char *hetc_kit_plugin_name(void);

/* size zeroed bytes from host->alloc (64-byte aligned), NULL when out of
 * memory. The caller frees them with host->free, so that the host counts
 * them (plugin-check's release item). */
void *hetc_kit_host_calloc(size_t size);
/* A copy of s in host memory, freed by the caller with host->free; NULL
 * when out of memory. */
char *hetc_kit_host_strdup(const char *s);

#ifdef __cplusplus
}
#endif

#endif /* HETC_KIT_HOST_H_ */
