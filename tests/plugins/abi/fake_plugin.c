/* A configurable fake plugin for the ABI tests. Compile definitions pick
 * how it misbehaves:
 *   FAKE_NAME           target name (string)
 *   FAKE_ABI_MAJOR      major written in its table
 *   FAKE_ABI_MINOR      minor written in its table
 *   FAKE_STRUCT_DELTA   bytes added to (or removed from) struct_size
 *   FAKE_PROBE_DECLINES probe answers UNAVAILABLE with a reason
 *   FAKE_NO_QUERY       exports no query symbol
 *   FAKE_DECLINE_HOST   the query returns NULL
 *   FAKE_MAJOR1_ONLY    the query declines any host but one of ABI 1.7
 *                       (a plugin built for major 1 meeting hetc 2.x)
 *   FAKE_NO_BUILD       its table lacks the required build call
 * The calls past the device list are stubs: the host never gets that far. */
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

static hetc_plugin_status_t unsupported(void) {
  return host->status_new(HETC_PLUGIN_STATUS_UNSUPPORTED, "fake plugin");
}
static int32_t supports(const hetc_plugin_instance_t *i, int32_t d, const hetc_plugin_workload_t *w) {
  (void)i, (void)d, (void)w;
  return 0;
}
static int32_t template_count(const hetc_plugin_instance_t *i, int32_t d, const hetc_plugin_workload_t *w) {
  return supports(i, d, w);
}
static const char *template_name(const hetc_plugin_instance_t *i, int32_t d, const hetc_plugin_workload_t *w,
                                 int32_t t) {
  (void)i, (void)d, (void)w, (void)t;
  return NULL;
}
static uint32_t template_version(const hetc_plugin_instance_t *i, int32_t d, const hetc_plugin_workload_t *w,
                                 int32_t t) {
  (void)i, (void)d, (void)w, (void)t;
  return 0;
}
static hetc_plugin_status_t define_space(const hetc_plugin_instance_t *i, int32_t d,
                                         const hetc_plugin_workload_t *w, int32_t t, hetc_plugin_space_t *s) {
  (void)i, (void)d, (void)w, (void)t, (void)s;
  return unsupported();
}
#ifndef FAKE_NO_BUILD
static hetc_plugin_status_t build(hetc_plugin_instance_t *i, int32_t d, const hetc_plugin_workload_t *w, int32_t t,
                                  const hetc_plugin_config_t *c, hetc_plugin_artifact_t **out) {
  (void)i, (void)d, (void)w, (void)t, (void)c, (void)out;
  return unsupported();
}
#endif
static void artifact_release(hetc_plugin_instance_t *i, hetc_plugin_artifact_t *a) { (void)i, (void)a; }
static const hetc_plugin_artifact_info_t *artifact_info(const hetc_plugin_artifact_t *a) {
  (void)a;
  return NULL;
}
static hetc_plugin_status_t pack_param(const hetc_plugin_artifact_t *a, int32_t p, const float *l, uint64_t n,
                                       void *out) {
  (void)a, (void)p, (void)l, (void)n, (void)out;
  return unsupported();
}
static hetc_plugin_status_t buffer_alloc(hetc_plugin_instance_t *i, int32_t d, uint64_t n,
                                         hetc_plugin_buffer_t **out) {
  (void)i, (void)d, (void)n, (void)out;
  return unsupported();
}
static void buffer_free(hetc_plugin_instance_t *i, hetc_plugin_buffer_t *b) { (void)i, (void)b; }
static hetc_plugin_status_t buffer_write(hetc_plugin_instance_t *i, hetc_plugin_buffer_t *b, uint64_t o,
                                         const void *src, uint64_t n) {
  (void)i, (void)b, (void)o, (void)src, (void)n;
  return unsupported();
}
static hetc_plugin_status_t buffer_read(hetc_plugin_instance_t *i, const hetc_plugin_buffer_t *b, uint64_t o,
                                        void *dst, uint64_t n) {
  (void)i, (void)b, (void)o, (void)dst, (void)n;
  return unsupported();
}
static hetc_plugin_status_t run(hetc_plugin_instance_t *i, const hetc_plugin_artifact_t *a,
                                hetc_plugin_buffer_t *const *args, int32_t n) {
  (void)i, (void)a, (void)args, (void)n;
  return unsupported();
}
static hetc_plugin_status_t time_artifact(hetc_plugin_instance_t *i, const hetc_plugin_artifact_t *a,
                                          hetc_plugin_buffer_t *const *args, int32_t n, int32_t number,
                                          int32_t repeat, double *out) {
  (void)i, (void)a, (void)args, (void)n, (void)number, (void)repeat, (void)out;
  return unsupported();
}
static hetc_plugin_status_t emit(hetc_plugin_instance_t *i, const hetc_plugin_artifact_t *a, const char *dir,
                                 const char *prefix) {
  (void)i, (void)a, (void)dir, (void)prefix;
  return unsupported();
}
static hetc_plugin_status_t load(hetc_plugin_instance_t *i, int32_t d, const hetc_plugin_workload_t *w, int32_t t,
                                 const hetc_plugin_config_t *c, const char *dir, const char *prefix,
                                 hetc_plugin_artifact_t **out) {
  (void)i, (void)d, (void)w, (void)t, (void)c, (void)dir, (void)prefix, (void)out;
  return unsupported();
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
    .supports = supports,
    .template_count = template_count,
    .template_name = template_name,
    .template_version = template_version,
    .template_define_space = define_space,
#ifndef FAKE_NO_BUILD
    .build = build,
#endif
    .artifact_release = artifact_release,
    .artifact_info = artifact_info,
    .pack_param = pack_param,
    .buffer_alloc = buffer_alloc,
    .buffer_free = buffer_free,
    .buffer_write = buffer_write,
    .buffer_read = buffer_read,
    .run = run,
    .time = time_artifact,
    .artifact_emit = emit,
    .artifact_load = load,
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
#ifdef FAKE_MAJOR1_ONLY
  if (host_major != 1 || host_table->header.abi_major != 1 || host_table->header.abi_minor != 7) return NULL;
#endif
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
