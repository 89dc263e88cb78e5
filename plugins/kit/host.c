/* The host table and target name the kit works for (hetc/kit/host.h). */
#include "hetc/kit/host.h"

#include <string.h>

/* Set by hetc_kit_bind from the query, before any other call into the
 * plugin; the host's table is static and outlives the plugin's use. */
static const hetc_plugin_host_t *bound_host;
static const char *bound_plugin_name;

/* The minor-0 services the kit itself calls; a plugin checks any other it
 * calls (hetc's host has them all, a test's stand-in may not). */
static int has_kit_services(const hetc_plugin_host_t *h) {
  return h->alloc && h->free && h->log && h->status_new && h->space_define_split && h->space_define_knob &&
         h->parallel_for && h->thread_count;
}

int hetc_kit_bind(uint32_t host_abi_major, const hetc_plugin_host_t *host, const char *plugin_name) {
  /* Any minor of this major: a newer host's table only grows, and an older
   * one is served while it holds minor 0's services (up to thread_count),
   * the only ones used without a HETC_PLUGIN_HAS_FIELD test. */
  if (host_abi_major != HETC_PLUGIN_ABI_MAJOR || !host || host->header.abi_major != HETC_PLUGIN_ABI_MAJOR ||
      !HETC_PLUGIN_HAS_FIELD(host, hetc_plugin_host_t, thread_count) || !has_kit_services(host))
    return 0;
  bound_host = host;
  bound_plugin_name = plugin_name;
  return 1;
}

const hetc_plugin_host_t *hetc_kit_host(void) { return bound_host; }

const char *hetc_kit_plugin_name(void) { return bound_plugin_name; }

void *hetc_kit_host_calloc(size_t size) {
  void *p = bound_host->alloc(size);
  if (p) memset(p, 0, size);
  return p;
}

char *hetc_kit_host_strdup(const char *s) {
  const size_t n = strlen(s) + 1;
  char *d = bound_host->alloc(n);
  if (d) memcpy(d, s, n);
  return d;
}
