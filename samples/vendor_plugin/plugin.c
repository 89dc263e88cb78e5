/* The example_c plugin's front: negotiation (hetc_plugin_query) and the ABI
 * table, probe, the instance and its one CPU device, the template names,
 * the workload checks, template dispatch and features(). Everything a call
 * must decide before an artifact exists lives here; artifact.c starts from
 * a (workload, template) exc_resolve has accepted. Buffers are the kit's
 * (host memory), and so are the kernels of every op but conv2d.
 *
 * Memory that outlives a call -- the instance, device strings, artifacts,
 * buffers -- comes from host->alloc and goes back through host->free, so
 * that the host can account for everything the plugin holds. */
#include <stdio.h>
#include <string.h>

#include "example_c.h"

/* ------------------------------------------------------------------------ */
/* Templates and workloads                                                  */
/* ------------------------------------------------------------------------ */

const char *exc_template_name(int32_t op) {
  static const char *const names[HETC_PLUGIN_OP_COUNT_] = {
      [HETC_PLUGIN_OP_CONV2D] = "example_c_direct",
      [HETC_PLUGIN_OP_DENSE] = "example_c_dense",
      [HETC_PLUGIN_OP_MAX_POOL2D] = "example_c_max_pool2d",
      [HETC_PLUGIN_OP_AVG_POOL2D] = "example_c_avg_pool2d",
      [HETC_PLUGIN_OP_GLOBAL_AVG_POOL2D] = "example_c_global_avg_pool2d",
      [HETC_PLUGIN_OP_ELEMENTWISE] = "example_c_elementwise",
      [HETC_PLUGIN_OP_SOFTMAX] = "example_c_softmax",
      [HETC_PLUGIN_OP_CONCAT] = "example_c_concat",
      [HETC_PLUGIN_OP_LAYOUT_TRANSFORM] = "example_c_layout_transform",
      [HETC_PLUGIN_OP_BIAS_ADD] = "example_c_bias_add",
#if HETC_KIT_ABI_AT_LEAST(1, 4)
      [HETC_PLUGIN_OP_TRANSPOSE] = "example_c_transpose",
#endif
#if HETC_KIT_ABI_AT_LEAST(1, 5)
      [HETC_PLUGIN_OP_LOG_SOFTMAX] = "example_c_log_softmax",
#endif
#if HETC_KIT_ABI_AT_LEAST(2, 0)
      [HETC_PLUGIN_OP_RESIZE] = "example_c_resize",
      [HETC_PLUGIN_OP_NORMALIZE] = "example_c_normalize",
      [HETC_PLUGIN_OP_MATMUL] = "example_c_matmul",
#endif
  };
  return op > 0 && op < HETC_PLUGIN_OP_COUNT_ ? names[op] : NULL;
}

/* conv2d is this plugin's own (conv_direct.c); every other op is the kit's
 * reference kernel. Both read row-major, whatever layout a producer hints:
 * the driver converts to what artifact_info reports. */
static int32_t check_workload(const hetc_plugin_workload_t *wl, hetc_kit_reason_t *reason) {
  if (wl && wl->op == HETC_PLUGIN_OP_CONV2D) return hetc_kit_workload_check(wl, reason);
  return hetc_kit_reference_check(wl, reason);
}

static int serves(const hetc_plugin_instance_t *instance, int32_t device_index, const hetc_plugin_workload_t *wl) {
  return instance && device_index == 0 && check_workload(wl, NULL) == 0;
}

hetc_plugin_status_t exc_resolve(const hetc_plugin_instance_t *instance, int32_t device_index,
                                 const hetc_plugin_workload_t *workload, int32_t template_index) {
  if (!instance) return hetc_kit_status(HETC_PLUGIN_STATUS_INVALID_ARGUMENT, EXC_NAME ": null instance");
  if (device_index != 0)
    return hetc_kit_status(HETC_PLUGIN_STATUS_INVALID_ARGUMENT,
                           EXC_NAME ": device %d does not exist (one device, index 0)", device_index);
  if (template_index != 0)
    return hetc_kit_status(HETC_PLUGIN_STATUS_INVALID_ARGUMENT,
                           EXC_NAME ": template %d outside 0..0 (one template per op)", template_index);
  char text[512];
  hetc_kit_reason_t reason = {text, sizeof(text)};
  const int32_t code = check_workload(workload, &reason);
  return code ? hetc_kit_status(code, EXC_NAME ": %s", text) : NULL;
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

/* Four independent multiply-add chains (one chain would time the add
 * latency, not the throughput), as the scalar kernels run: what this
 * plain-C backend reaches, not the hardware's vector peak. */
static float scalar_fma_chains(long iters) {
  float a0 = 1.0f, a1 = 2.0f, a2 = 3.0f, a3 = 4.0f;
  for (long i = 0; i < iters; ++i) {
    a0 = a0 * 0.999999f + 1e-7f;
    a1 = a1 * 0.999999f + 1e-7f;
    a2 = a2 * 0.999999f + 1e-7f;
    a3 = a3 * 0.999999f + 1e-7f;
  }
  return a0 + a1 + a2 + a3;
}

static void exc_instance_destroy(hetc_plugin_instance_t *instance) {
  if (!instance) return; /* no threads of our own to stop */
  const hetc_plugin_host_t *host = hetc_kit_host();
  host->free(instance->name);
  host->free(instance->fingerprint);
  host->free(instance);
}

/* *out_instance is the caller's, destroyed with instance_destroy. */
static hetc_plugin_status_t exc_instance_create(hetc_plugin_instance_t **out_instance) {
  if (!out_instance) return hetc_kit_status(HETC_PLUGIN_STATUS_INVALID_ARGUMENT, EXC_NAME ": null out_instance");
  hetc_plugin_instance_t *inst = *out_instance = hetc_kit_host_calloc(sizeof(*inst));
  if (!inst) return hetc_kit_status(HETC_PLUGIN_STATUS_OUT_OF_MEMORY, EXC_NAME ": out of memory");
  const int32_t threads = hetc_kit_host()->thread_count() > 0 ? hetc_kit_host()->thread_count() : 1;
  char model[256], text[384];
  hetc_kit_cpu_model(model, sizeof(model));
  for (char *p = model; *p; ++p) /* '|' separates the fingerprint's fields */
    if (*p == '|') *p = '/';
  snprintf(text, sizeof(text), "Portable C (%d thread%s)", threads, threads == 1 ? "" : "s");
  inst->name = hetc_kit_host_strdup(text);
  /* No thread count and no timestamp: the same CPU gives the same records
   * key on every run. */
  snprintf(text, sizeof(text), EXC_NAME "|%s|v1", model);
  inst->fingerprint = hetc_kit_host_strdup(text);
  if (!inst->name || !inst->fingerprint) {
    exc_instance_destroy(inst);
    *out_instance = NULL;
    return hetc_kit_status(HETC_PLUGIN_STATUS_OUT_OF_MEMORY, EXC_NAME ": out of memory");
  }
  hetc_plugin_device_t *d = &inst->device;
  d->struct_size = sizeof(*d);
  d->kind = HETC_PLUGIN_DEVICE_CPU;
  d->name = inst->name;
  d->fingerprint = inst->fingerprint;
  d->compute_units = threads;
  d->simd_width_fp32 = 1; /* the kernels are scalar C */
  d->peak_gflops_fp32 = hetc_kit_measure_peak_gflops(scalar_fma_chains, 8.0);
  d->memory_bytes = hetc_kit_memory_bytes();
  d->max_threads_per_group = 1;
  hetc_kit_cpu_caches(d->cache_bytes);
  d->host_memory = 1;
  return NULL;
}

static int32_t exc_device_count(const hetc_plugin_instance_t *instance) { return instance ? 1 : 0; }

/* The descriptor and its strings belong to the instance. */
static const hetc_plugin_device_t *exc_device_get(const hetc_plugin_instance_t *instance, int32_t device_index) {
  return instance && device_index == 0 ? &instance->device : NULL;
}

/* ------------------------------------------------------------------------ */
/* Templates                                                                */
/* ------------------------------------------------------------------------ */

static int32_t exc_supports(const hetc_plugin_instance_t *instance, int32_t device_index,
                            const hetc_plugin_workload_t *workload) {
  return serves(instance, device_index, workload);
}

#if HETC_KIT_ABI_AT_LEAST(1, 3)
/* supports() with the reason, for hetc's messages (ABI minor 3). */
static hetc_plugin_status_t exc_supports_why(const hetc_plugin_instance_t *instance, int32_t device_index,
                                             const hetc_plugin_workload_t *workload) {
  if (!instance || device_index != 0)
    return hetc_kit_status(HETC_PLUGIN_STATUS_UNSUPPORTED, "device %d does not exist (one device, index 0)",
                           device_index);
  char text[512];
  hetc_kit_reason_t reason = {text, sizeof(text)};
  return check_workload(workload, &reason) ? hetc_kit_status(HETC_PLUGIN_STATUS_UNSUPPORTED, "%s", text) : NULL;
}
#endif

static int32_t exc_template_count(const hetc_plugin_instance_t *instance, int32_t device_index,
                                  const hetc_plugin_workload_t *workload) {
  return serves(instance, device_index, workload);
}

static const char *exc_template_name_fn(const hetc_plugin_instance_t *instance, int32_t device_index,
                                        const hetc_plugin_workload_t *workload, int32_t template_index) {
  if (template_index != 0 || !serves(instance, device_index, workload)) return NULL;
  return exc_template_name(workload->op);
}

static uint32_t exc_template_version(const hetc_plugin_instance_t *instance, int32_t device_index,
                                     const hetc_plugin_workload_t *workload, int32_t template_index) {
  return template_index == 0 && serves(instance, device_index, workload) ? EXC_TEMPLATE_VERSION : 0;
}

static hetc_plugin_status_t exc_template_define_space(const hetc_plugin_instance_t *instance, int32_t device_index,
                                                      const hetc_plugin_workload_t *workload,
                                                      int32_t template_index, hetc_plugin_space_t *space) {
  hetc_plugin_status_t s = exc_resolve(instance, device_index, workload, template_index);
  if (s) return s;
  if (!space) return hetc_kit_status(HETC_PLUGIN_STATUS_INVALID_ARGUMENT, EXC_NAME ": null space");
  if (workload->op == HETC_PLUGIN_OP_CONV2D) return exc_direct_define_space(workload, space);
  /* No knobs: the default is the empty config. */
  const hetc_plugin_config_t empty = {0, NULL};
  return hetc_kit_host()->space_set_default(space, &empty);
}

/* ------------------------------------------------------------------------ */
/* Features (schema 1): only built against minor >= 1                       */
/* ------------------------------------------------------------------------ */

#if HETC_KIT_ABI_AT_LEAST(1, 1)
/* Validates like build() and describes its loop nest; allocates nothing on
 * success and keeps no state, so it may run concurrently with anything. */
static hetc_plugin_status_t exc_features(const hetc_plugin_instance_t *instance, int32_t device_index,
                                         const hetc_plugin_workload_t *workload, int32_t template_index,
                                         const hetc_plugin_config_t *config, float *out_features, int32_t capacity,
                                         int32_t *out_count) {
  if (out_count) *out_count = 0;
  if (!out_count || capacity < 0 || (capacity > 0 && !out_features))
    return hetc_kit_status(HETC_PLUGIN_STATUS_INVALID_ARGUMENT, EXC_NAME ": features: null out_count or out_features");
  hetc_plugin_status_t s = exc_resolve(instance, device_index, workload, template_index);
  if (s) return s;
  if (workload->op != HETC_PLUGIN_OP_CONV2D)
    return hetc_kit_status(HETC_PLUGIN_STATUS_UNSUPPORTED,
                           "%s: no features (only example_c_direct has a loop nest to describe)",
                           exc_template_name(workload->op));
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
    .template_name = exc_template_name_fn,
    .template_version = exc_template_version,
    .template_define_space = exc_template_define_space,
    .build = exc_build,
    .artifact_release = exc_artifact_release,
    .artifact_info = exc_artifact_info,
    .pack_param = exc_pack_param,
    .buffer_alloc = hetc_kit_buffer_alloc,
    .buffer_free = hetc_kit_buffer_free,
    .buffer_write = hetc_kit_buffer_write,
    .buffer_read = hetc_kit_buffer_read,
    .buffer_copy = hetc_kit_buffer_copy,
    .buffer_host_pointer = hetc_kit_buffer_host_pointer,
    .run = exc_run,
    .time = exc_time,
#if HETC_KIT_ABI_AT_LEAST(1, 1)
    .features = exc_features,
#else
    .features = NULL, /* the feature schema is minor 1's */
#endif
    .artifact_emit = exc_artifact_emit,
    .artifact_load = exc_artifact_load,
#if HETC_KIT_ABI_AT_LEAST(1, 3)
    .buffer_view = NULL, /* optional: concats run as kernels */
    .supports_why = exc_supports_why,
#endif
};

HETC_PLUGIN_EXPORT const hetc_plugin_t *hetc_plugin_query(uint32_t host_abi_major, uint32_t host_abi_minor,
                                                          const hetc_plugin_host_t *host);

HETC_PLUGIN_EXPORT const hetc_plugin_t *hetc_plugin_query(uint32_t host_abi_major, uint32_t host_abi_minor,
                                                          const hetc_plugin_host_t *host) {
  /* Any minor of our major, as long as the host's table holds every service
   * used here -- all of them minor 0's: hetc_kit_bind checks the major and
   * the kit's services and keeps the host, and the sample calls two more
   * itself. A plugin that read a later host field (such as
   * space_mark_optional) would check HETC_PLUGIN_HAS_FIELD first. */
  (void)host_abi_minor;
  const int served = hetc_kit_bind(host_abi_major, host, EXC_NAME) && host->space_set_default &&
                     host->space_add_constraint;
  return served ? &exc_plugin : NULL;
}
