/* A configurable fake plugin for the ABI tests. Compile definitions pick
 * how it misbehaves:
 *   FAKE_NAME           target name (string)
 *   FAKE_ABI_MAJOR      major written in its table
 *   FAKE_ABI_MINOR      minor written in its table
 *   FAKE_STRUCT_DELTA   bytes added to (or removed from) struct_size
 *   FAKE_PROBE_DECLINES probe answers UNAVAILABLE with a reason
 *   FAKE_NO_QUERY       exports no query symbol
 *   FAKE_DECLINE_HOST   the query returns NULL */
#include <stddef.h>
#include <string.h>

#include "hetc/plugin.h"

static const hetc_plugin_host_t *host;

static hetc_plugin_status_t probe(void) {
#ifdef FAKE_PROBE_DECLINES
  return host->status_new(HETC_PLUGIN_STATUS_UNAVAILABLE, "no FakeAccel device: /dev/fake0 is missing");
#else
  return NULL;
#endif
}

struct hetc_plugin_instance_t {
  hetc_plugin_device_t device;
};
static struct hetc_plugin_instance_t the_instance = {
    {sizeof(hetc_plugin_device_t), HETC_PLUGIN_DEVICE_ACCELERATOR, "fake device", "fake:0", 1, 1, 1.0, 0, 0, 0, 0, 0, {0, 0, 0}, 0, 0}};

static hetc_plugin_status_t instance_create(hetc_plugin_instance_t **out) {
  *out = &the_instance;
  return NULL;
}
static void instance_destroy(hetc_plugin_instance_t *instance) { (void)instance; }
static int32_t device_count(const hetc_plugin_instance_t *instance) {
  (void)instance;
  return 1;
}
static const hetc_plugin_device_t *device_get(const hetc_plugin_instance_t *instance, int32_t index) {
  return index == 0 ? &instance->device : NULL;
}

static const hetc_plugin_t table = {
    .header = {FAKE_ABI_MAJOR, FAKE_ABI_MINOR, (uint32_t)(sizeof(hetc_plugin_t) + FAKE_STRUCT_DELTA), 0},
    .name = FAKE_NAME,
    .vendor = "hetc tests",
    .version = "0.0.1",
    .description = "fake plugin for ABI negotiation tests",
    .probe = probe,
    .instance_create = instance_create,
    .instance_destroy = instance_destroy,
    .device_count = device_count,
    .device_get = device_get,
};

#ifndef FAKE_NO_QUERY
HETC_PLUGIN_EXPORT const hetc_plugin_t *hetc_plugin_query(uint32_t host_major, uint32_t host_minor,
                                                           const hetc_plugin_host_t *host_table) {
  (void)host_minor;
#ifdef FAKE_DECLINE_HOST
  (void)host_major;
  (void)host_table;
  return NULL;
#else
  host = host_table;
  /* A real plugin built for another major would decline here; this one
   * answers anyway so the host's own check is what gets tested. */
  (void)host_major;
  return &table;
#endif
}
#else
/* Something exported, but not the query symbol. */
HETC_PLUGIN_EXPORT int hetc_plugin_query_typo(void) { return (int)sizeof(table) + (probe() != NULL); }
#endif
