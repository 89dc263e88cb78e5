/* The example_c plugin's front: negotiation (hetc_plugin_query) and the ABI
 * table, probe, the instance and its one CPU device, the template table and
 * the workload checks, template dispatch and features(). Everything a call
 * must decide before an artifact exists lives here, so that artifact.c and
 * buffers.c start from a (workload, template) that exc_resolve has already
 * accepted; the table points into those two files for the rest.
 *
 * Memory that outlives a call -- the instance, device strings, artifacts,
 * buffers -- comes from host->alloc and goes back through host->free, so
 * that the host can account for everything the plugin holds. */
#define _POSIX_C_SOURCE 200809L /* clock_gettime, sysconf */

#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "example_c.h"

const hetc_plugin_host_t *exc_host;

hetc_plugin_status_t exc_status(int32_t code, const char *format, ...) {
  char message[1024];
  va_list args;
  va_start(args, format);
  vsnprintf(message, sizeof(message), format, args);
  va_end(args);
  return exc_host->status_new(code, "%s", message);
}

int32_t exc_fail(exc_reason_t *r, int32_t code, const char *format, ...) {
  if (r && r->size) {
    va_list args;
    va_start(args, format);
    vsnprintf(r->text, r->size, format, args);
    va_end(args);
  }
  return code;
}

/* Returns a copy of s in host memory (the caller frees it with host->free),
 * or NULL when out of memory. */
static char *host_strdup(const char *s) {
  const size_t n = strlen(s) + 1;
  char *d = exc_host->alloc(n);
  if (d) memcpy(d, s, n);
  return d;
}

/* ------------------------------------------------------------------------ */
/* Templates and workloads                                                  */
/* ------------------------------------------------------------------------ */

/* Names key tuning records: they never change for a template. Bump a
 * version when records made with the old code stop being meaningful. */
const exc_template_info_t exc_templates[EXC_T_COUNT_] = {
    [EXC_T_DIRECT] = {"example_c_direct", 1},
    [EXC_T_DENSE] = {"example_c_dense", 1},
    [EXC_T_MAX_POOL] = {"example_c_max_pool2d", 1},
    [EXC_T_AVG_POOL] = {"example_c_avg_pool2d", 1},
    [EXC_T_GLOBAL_AVG_POOL] = {"example_c_global_avg_pool2d", 1},
    [EXC_T_ELEMENTWISE] = {"example_c_elementwise", 1},
    [EXC_T_SOFTMAX] = {"example_c_softmax", 1},
    [EXC_T_CONCAT] = {"example_c_concat", 1},
    [EXC_T_LAYOUT] = {"example_c_layout_transform", 1},
    [EXC_T_BIAS_ADD] = {"example_c_bias_add", 1},
};

static int template_of(int32_t op) {
  return op == HETC_PLUGIN_OP_CONV2D ? EXC_T_DIRECT : exc_ops_template(op);
}

static int32_t check_tensor(const hetc_plugin_tensor_t *t, const char *what,
                            exc_reason_t *r) {
  if (t->dtype != HETC_PLUGIN_DTYPE_FLOAT32)
    return exc_fail(r, HETC_PLUGIN_STATUS_UNSUPPORTED, "%s: dtype %d is not float32", what,
                    t->dtype);
  if (t->rank < 1 || t->rank > HETC_PLUGIN_MAX_RANK)
    return exc_fail(r, HETC_PLUGIN_STATUS_INVALID_ARGUMENT, "%s: rank %d outside 1..%d", what,
                    t->rank, HETC_PLUGIN_MAX_RANK);
  /* Below 2^31 elements every index product in the kernels fits int64. */
  int64_t count = 1;
  for (int32_t i = 0; i < t->rank; ++i) {
    if (t->shape[i] < 1 || t->shape[i] > ((int64_t)1 << 31))
      return exc_fail(r, HETC_PLUGIN_STATUS_INVALID_ARGUMENT, "%s: dim %d is %lld", what, i,
                      (long long)t->shape[i]);
    count *= t->shape[i];
    if (count > ((int64_t)1 << 31))
      return exc_fail(r, HETC_PLUGIN_STATUS_UNSUPPORTED, "%s: more than 2^31 elements", what);
  }
  /* Layouts other than row-major are read and written only by
   * layout_transform; elsewhere they are the producers' hints, and the
   * driver converts to the row-major layout the artifact reports. */
  const int kind = t->layout.kind;
  if (kind != HETC_PLUGIN_LAYOUT_ROW_MAJOR &&
      !(t->rank == 4 && (kind == HETC_PLUGIN_LAYOUT_NHWC ||
                         (kind == HETC_PLUGIN_LAYOUT_NCHWC && t->layout.block >= 1 &&
                          t->layout.block <= 256))))
    return exc_fail(r, HETC_PLUGIN_STATUS_UNSUPPORTED, "%s: layout kind %d (block %d) on rank %d",
                    what, kind, t->layout.block, t->rank);
  return 0;
}

static int32_t check_workload(const hetc_plugin_workload_t *wl, exc_reason_t *r) {
  if (!wl) return exc_fail(r, HETC_PLUGIN_STATUS_INVALID_ARGUMENT, "null workload");
  if (template_of(wl->op) < 0)
    return exc_fail(r, HETC_PLUGIN_STATUS_UNSUPPORTED, "op %d is not supported", wl->op);
  if (wl->num_inputs < 1 || wl->num_inputs > EXC_MAX_INPUTS || !wl->inputs)
    return exc_fail(r, HETC_PLUGIN_STATUS_INVALID_ARGUMENT, "%d activation inputs",
                    wl->num_inputs);
  char what[32];
  for (int32_t i = 0; i < wl->num_inputs; ++i) {
    snprintf(what, sizeof(what), "input %d", i);
    const int32_t code = check_tensor(&wl->inputs[i], what, r);
    if (code) return code;
  }
  const int32_t code = check_tensor(&wl->output, "output", r);
  if (code) return code;
  return wl->op == HETC_PLUGIN_OP_CONV2D ? exc_direct_check(wl, r) : exc_ops_check(wl, r);
}

/* ------------------------------------------------------------------------ */
/* Instance and device                                                      */
/* ------------------------------------------------------------------------ */

struct hetc_plugin_instance_t {
  hetc_plugin_device_t device;
  char *name;        /* host->alloc'ed, freed by instance_destroy */
  char *fingerprint; /* host->alloc'ed, freed by instance_destroy */
};

static hetc_plugin_status_t exc_probe(void) {
  return NULL; /* portable C runs wherever the plugin loaded */
}

/* The "model name" of /proc/cpuinfo (x86), else "unknown". */
static void cpu_model(char *buf, size_t size) {
  snprintf(buf, size, "unknown");
  FILE *f = fopen("/proc/cpuinfo", "r");
  if (!f) return;
  char line[512];
  while (fgets(line, sizeof(line), f)) {
    if (strncmp(line, "model name", 10) != 0) continue;
    const char *v = strchr(line, ':');
    if (!v) continue;
    ++v;
    while (*v == ' ' || *v == '\t') ++v;
    const size_t n = strcspn(v, "\r\n");
    if (n > 0) snprintf(buf, size, "%.*s", (int)n, v);
    break;
  }
  fclose(f);
  /* '|' separates the fingerprint's fields. */
  for (char *p = buf; *p; ++p)
    if (*p == '|') *p = '/';
}

double exc_now_seconds(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* A nominal fp32 peak: scalar multiply-adds on this thread in four
 * independent chains (one chain would time the add latency, not the
 * throughput), times the thread count. The best of five 3 ms samples: on a
 * shared machine a single sample mostly measures the neighbours. It is what
 * this plain-C backend can reach, not the hardware's vector peak. */
static double measure_peak_gflops(int32_t threads) {
  volatile float seed = 1.0f, sink;
  float a0 = seed, a1 = seed + 1, a2 = seed + 2, a3 = seed + 3;
  const float m = 0.999999f, c = 1e-7f;
  const int64_t block = 1 << 14;
  double best = 0;
  for (int sample = 0; sample < 5; ++sample) {
    int64_t iterations = 0;
    const double start = exc_now_seconds();
    double elapsed = 0;
    do {
      for (int64_t i = 0; i < block; ++i) {
        a0 = a0 * m + c;
        a1 = a1 * m + c;
        a2 = a2 * m + c;
        a3 = a3 * m + c;
      }
      iterations += block;
      elapsed = exc_now_seconds() - start;
    } while (elapsed < 0.003);
    const double rate = 8.0 * (double)iterations / elapsed;
    if (rate > best) best = rate;
  }
  sink = a0 + a1 + a2 + a3; /* keeps the loops from being optimised away */
  (void)sink;
  return best * 1e-9 * threads;
}

static uint64_t sysconf_bytes(int name) {
  const long v = sysconf(name);
  return v > 0 ? (uint64_t)v : 0;
}

static void instance_free(hetc_plugin_instance_t *inst) {
  if (!inst) return;
  exc_host->free(inst->name);
  exc_host->free(inst->fingerprint);
  exc_host->free(inst);
}

static void exc_instance_destroy(hetc_plugin_instance_t *instance) {
  instance_free(instance); /* no threads of our own to stop */
}

/* *out_instance is the caller's, destroyed with instance_destroy. */
static hetc_plugin_status_t exc_instance_create(hetc_plugin_instance_t **out_instance) {
  if (!out_instance)
    return exc_status(HETC_PLUGIN_STATUS_INVALID_ARGUMENT, EXC_NAME ": null out_instance");
  *out_instance = NULL;
  hetc_plugin_instance_t *inst = exc_host->alloc(sizeof(*inst));
  if (!inst) return exc_status(HETC_PLUGIN_STATUS_OUT_OF_MEMORY, EXC_NAME ": out of memory");
  memset(inst, 0, sizeof(*inst));
  const int32_t threads = exc_host->thread_count() > 0 ? exc_host->thread_count() : 1;
  char model[256], text[384];
  cpu_model(model, sizeof(model));
  snprintf(text, sizeof(text), "Portable C (%d thread%s)", threads, threads == 1 ? "" : "s");
  inst->name = host_strdup(text);
  /* No thread count and no timestamp: the same CPU gives the same records
   * key on every run. */
  snprintf(text, sizeof(text), EXC_NAME "|%s|v1", model);
  inst->fingerprint = host_strdup(text);
  if (!inst->name || !inst->fingerprint) {
    instance_free(inst);
    return exc_status(HETC_PLUGIN_STATUS_OUT_OF_MEMORY, EXC_NAME ": out of memory");
  }
  hetc_plugin_device_t *d = &inst->device;
  d->struct_size = sizeof(*d);
  d->kind = HETC_PLUGIN_DEVICE_CPU;
  d->name = inst->name;
  d->fingerprint = inst->fingerprint;
  d->compute_units = threads;
  d->simd_width_fp32 = 1; /* the kernels are scalar C */
  d->peak_gflops_fp32 = measure_peak_gflops(threads);
  d->memory_bandwidth_gbps = 0; /* unknown */
  d->memory_bytes = sysconf_bytes(_SC_PHYS_PAGES) * sysconf_bytes(_SC_PAGESIZE);
  d->max_threads_per_group = 1;
  d->local_memory_bytes = 0;
  /* sysconf gives one cache of each level. The descriptor wants totals over
   * the device: nominally private L1d and L2 per compute unit, one shared
   * L3 (a vendor who knows the topology fills in the real sums). */
#ifdef _SC_LEVEL1_DCACHE_SIZE
  d->cache_bytes[0] = sysconf_bytes(_SC_LEVEL1_DCACHE_SIZE) * (uint64_t)threads;
#endif
#ifdef _SC_LEVEL2_CACHE_SIZE
  d->cache_bytes[1] = sysconf_bytes(_SC_LEVEL2_CACHE_SIZE) * (uint64_t)threads;
#endif
#ifdef _SC_LEVEL3_CACHE_SIZE
  d->cache_bytes[2] = sysconf_bytes(_SC_LEVEL3_CACHE_SIZE);
#endif
  d->host_memory = 1;
  *out_instance = inst;
  return NULL;
}

static int32_t exc_device_count(const hetc_plugin_instance_t *instance) {
  return instance ? 1 : 0;
}

/* The descriptor and its strings belong to the instance. */
static const hetc_plugin_device_t *exc_device_get(const hetc_plugin_instance_t *instance,
                                                  int32_t device_index) {
  return instance && device_index == 0 ? &instance->device : NULL;
}

/* ------------------------------------------------------------------------ */
/* Templates                                                                */
/* ------------------------------------------------------------------------ */

static int32_t exc_supports(const hetc_plugin_instance_t *instance, int32_t device_index,
                            const hetc_plugin_workload_t *workload) {
  exc_reason_t none = {NULL, 0};
  return instance && device_index == 0 && check_workload(workload, &none) == 0;
}

#if HETC_PLUGIN_ABI_MINOR >= 3
/* supports() with the reason, for hetc's messages (ABI minor 3). */
static hetc_plugin_status_t exc_supports_why(const hetc_plugin_instance_t *instance, int32_t device_index,
                                             const hetc_plugin_workload_t *workload) {
  if (!instance || device_index != 0)
    return exc_status(HETC_PLUGIN_STATUS_UNSUPPORTED, "device %d does not exist (one device, index 0)",
                      device_index);
  char text[512];
  exc_reason_t reason = {text, sizeof(text)};
  return check_workload(workload, &reason) ? exc_status(HETC_PLUGIN_STATUS_UNSUPPORTED, "%s", text) : NULL;
}
#endif

static int32_t exc_template_count(const hetc_plugin_instance_t *instance, int32_t device_index,
                                  const hetc_plugin_workload_t *workload) {
  exc_reason_t none = {NULL, 0};
  return instance && device_index == 0 && check_workload(workload, &none) == 0 ? 1 : 0;
}

static const char *exc_template_name(const hetc_plugin_instance_t *instance,
                                     int32_t device_index,
                                     const hetc_plugin_workload_t *workload,
                                     int32_t template_index) {
  if (template_index != 0 || !exc_template_count(instance, device_index, workload)) return NULL;
  return exc_templates[template_of(workload->op)].name;
}

static uint32_t exc_template_version(const hetc_plugin_instance_t *instance,
                                     int32_t device_index,
                                     const hetc_plugin_workload_t *workload,
                                     int32_t template_index) {
  if (template_index != 0 || !exc_template_count(instance, device_index, workload)) return 0;
  return exc_templates[template_of(workload->op)].version;
}

/* Shared (example_c.h) so that artifact.c's prepare refuses exactly what
 * define_space and features() refuse. */
hetc_plugin_status_t exc_resolve(const hetc_plugin_instance_t *instance, int32_t device_index,
                                 const hetc_plugin_workload_t *workload, int32_t template_index,
                                 int *out_kind) {
  if (!instance)
    return exc_status(HETC_PLUGIN_STATUS_INVALID_ARGUMENT, EXC_NAME ": null instance");
  if (device_index != 0)
    return exc_status(HETC_PLUGIN_STATUS_INVALID_ARGUMENT,
                      EXC_NAME ": device %d does not exist (one device, index 0)", device_index);
  if (template_index != 0)
    return exc_status(HETC_PLUGIN_STATUS_INVALID_ARGUMENT,
                      EXC_NAME ": template %d outside 0..0 (one template per op)",
                      template_index);
  char text[512];
  exc_reason_t reason = {text, sizeof(text)};
  const int32_t code = check_workload(workload, &reason);
  if (code) return exc_status(code, EXC_NAME ": %s", text);
  *out_kind = template_of(workload->op);
  return NULL;
}

static hetc_plugin_status_t exc_template_define_space(const hetc_plugin_instance_t *instance,
                                                      int32_t device_index,
                                                      const hetc_plugin_workload_t *workload,
                                                      int32_t template_index,
                                                      hetc_plugin_space_t *space) {
  int kind = -1;
  hetc_plugin_status_t s = exc_resolve(instance, device_index, workload, template_index, &kind);
  if (s) return s;
  if (!space) return exc_status(HETC_PLUGIN_STATUS_INVALID_ARGUMENT, EXC_NAME ": null space");
  if (kind == EXC_T_DIRECT) return exc_direct_define_space(workload, space);
  /* No knobs: the default is the empty config. */
  const hetc_plugin_config_t empty = {0, NULL};
  return exc_host->space_set_default(space, &empty);
}


/* ------------------------------------------------------------------------ */
/* Features (schema 1): only built against minor >= 1                       */
/* ------------------------------------------------------------------------ */

#if HETC_PLUGIN_ABI_MINOR >= 1
/* Validates like build() and describes its loop nest; allocates nothing on
 * success and keeps no state, so it may run concurrently with anything. */
static hetc_plugin_status_t exc_features(const hetc_plugin_instance_t *instance,
                                         int32_t device_index,
                                         const hetc_plugin_workload_t *workload,
                                         int32_t template_index,
                                         const hetc_plugin_config_t *config, float *out_features,
                                         int32_t capacity, int32_t *out_count) {
  if (out_count) *out_count = 0;
  if (!out_count || capacity < 0 || (capacity > 0 && !out_features))
    return exc_status(HETC_PLUGIN_STATUS_INVALID_ARGUMENT,
                      EXC_NAME ": features: null out_count or out_features");
  int kind = -1;
  hetc_plugin_status_t s = exc_resolve(instance, device_index, workload, template_index, &kind);
  if (s) return s;
  if (kind != EXC_T_DIRECT)
    return exc_status(HETC_PLUGIN_STATUS_UNSUPPORTED,
                      "%s: no features (only example_c_direct has a loop nest to describe)",
                      exc_templates[kind].name);
  exc_direct_config_t cfg;
  if ((s = exc_direct_parse(workload, config, &cfg))) return s;
  exc_direct_features(workload, &cfg, out_features, capacity);
  *out_count = capacity < HETC_FEATURE_COUNT ? capacity : HETC_FEATURE_COUNT;
  return NULL;
}
#endif


/* ------------------------------------------------------------------------ */
/* The table and the entry point                                            */
/* ------------------------------------------------------------------------ */

/* The header records the ABI of the header this file is compiled against:
 * built with a minor-0 SDK the table is minor 0's size and says so. */
static const hetc_plugin_t exc_plugin = {
    .header = {HETC_PLUGIN_ABI_MAJOR, HETC_PLUGIN_ABI_MINOR, sizeof(hetc_plugin_t), 0},
    .name = EXC_NAME,
    .vendor = "Example Vendor",
    .version = EXC_VERSION,
    .description = "Sample out-of-tree backend: portable C kernels for every op (direct "
                   "conv2d with tunable register tiles), on the host's thread pool",
    .probe = exc_probe,
    .instance_create = exc_instance_create,
    .instance_destroy = exc_instance_destroy,
    .device_count = exc_device_count,
    .device_get = exc_device_get,
    .supports = exc_supports,
    .template_count = exc_template_count,
    .template_name = exc_template_name,
    .template_version = exc_template_version,
    .template_define_space = exc_template_define_space,
    .build = exc_build,
    .artifact_release = exc_artifact_release,
    .artifact_info = exc_artifact_info,
    .pack_param = exc_pack_param,
    .buffer_alloc = exc_buffer_alloc,
    .buffer_free = exc_buffer_free,
    .buffer_write = exc_buffer_write,
    .buffer_read = exc_buffer_read,
    .buffer_copy = exc_buffer_copy,
    .buffer_host_pointer = exc_buffer_host_pointer,
    .run = exc_run,
    .time = exc_time,
#if HETC_PLUGIN_ABI_MINOR >= 1
    .features = exc_features,
#else
    .features = NULL, /* the feature schema is minor 1's */
#endif
    .artifact_emit = exc_artifact_emit,
    .artifact_load = exc_artifact_load,
#if HETC_PLUGIN_ABI_MINOR >= 3
    .buffer_view = NULL, /* optional: concats run as kernels */
    .supports_why = exc_supports_why,
#endif
};

HETC_PLUGIN_EXPORT const hetc_plugin_t *hetc_plugin_query(uint32_t host_abi_major,
                                                          uint32_t host_abi_minor,
                                                          const hetc_plugin_host_t *host);

HETC_PLUGIN_EXPORT const hetc_plugin_t *hetc_plugin_query(uint32_t host_abi_major,
                                                          uint32_t host_abi_minor,
                                                          const hetc_plugin_host_t *host) {
  /* Any minor of our major: a newer host's tables only grow, and an older
   * one is served as long as its table holds every service used here --
   * all of them minor 0's, up to thread_count. This plugin reads no host
   * field added later (such as space_mark_optional); one that did would
   * check HETC_PLUGIN_HAS_FIELD before each use. */
  (void)host_abi_minor;
  if (host_abi_major != HETC_PLUGIN_ABI_MAJOR || !host ||
      host->header.abi_major != HETC_PLUGIN_ABI_MAJOR ||
      !HETC_PLUGIN_HAS_FIELD(host, hetc_plugin_host_t, thread_count))
    return NULL;
  if (!host->alloc || !host->free || !host->status_new || !host->space_define_split ||
      !host->space_define_knob || !host->space_set_default || !host->space_add_constraint ||
      !host->parallel_for || !host->thread_count)
    return NULL;
  exc_host = host;
  return &exc_plugin;
}
