/* The vec plugin's ABI table: query, probe, instances, the device, template
 * dispatch, build/load/emit of artifacts, buffers, run and time. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "hetc/kit/host.h"
#include "plugin_files.h"
#include "vec.h"
#include "hetc/kit/status.h"
#include "hetc/kit/cpu_info.h"
#include "hetc/kit/buffers.h"
#include "hetc/kit/run.h"

const hetc_plugin_host_t *vec_host;

hetc_plugin_status_t vec_status(int32_t code, const char *format, ...) {
  va_list args;
  va_start(args, format);
  hetc_plugin_status_t s = hetc_kit_status_va(vec_host, code, format, args);
  va_end(args);
  return s;
}

struct hetc_plugin_instance_t {
  vec_toolchain_t toolchain;
  vec_device_t device;
};


struct hetc_plugin_artifact_t {
  hetc_plugin_workload_t wl; /* deep copy */
  int kind;
  vec_config_t cfg;
  hetc_plugin_artifact_info_t info;
  hetc_plugin_layout_t input_layouts[VEC_MAX_INPUTS + 1];
  uint64_t param_bytes[2];
  char *description;
  char *source;
  size_t source_length;
  vec_object_t *object;
  vec_kernel_fn_t fn;
  hetc_kit_run_args_t run_args;
};

/* ------------------------------------------------------------------------ */

static hetc_plugin_status_t vec_probe(void) { return vec_toolchain_probe(); }

static void vec_instance_destroy(hetc_plugin_instance_t *instance) {
  if (!instance) return;
  vec_device_fini(&instance->device);
  vec_toolchain_fini(&instance->toolchain);
  free(instance);
}

static hetc_plugin_status_t vec_instance_create(hetc_plugin_instance_t **out_instance) {
  if (!out_instance)
    return vec_status(HETC_PLUGIN_STATUS_INVALID_ARGUMENT, "vec: null out_instance");
  *out_instance = NULL;
  hetc_plugin_instance_t *inst = calloc(1, sizeof(*inst));
  if (!inst) return vec_status(HETC_PLUGIN_STATUS_OUT_OF_MEMORY, "vec: out of memory");
  char model[256];
  hetc_kit_cpu_model(model, sizeof(model));
  hetc_plugin_status_t s = vec_toolchain_init(&inst->toolchain, model);
  if (s) {
    free(inst);
    return s;
  }
  /* Builds and runs the peak-FLOPS kernel: a compiler that cannot build
   * it with our flags fails here as UNAVAILABLE, with its log. */
  s = vec_device_init(&inst->device, &inst->toolchain);
  if (s) {
    vec_toolchain_fini(&inst->toolchain);
    free(inst);
    return s;
  }
  *out_instance = inst;
  return NULL;
}

static int32_t vec_device_count(const hetc_plugin_instance_t *instance) {
  return instance ? 1 : 0;
}

static const hetc_plugin_device_t *vec_device_get(const hetc_plugin_instance_t *instance,
                                                  int32_t device_index) {
  if (!instance || device_index != 0) return NULL;
  return &instance->device.desc;
}

/* ------------------------------------------------------------------------ */

static int32_t vec_supports(const hetc_plugin_instance_t *instance, int32_t device_index,
                            const hetc_plugin_workload_t *workload) {
#ifdef VEC_TEST_CONV_ONLY
  /* A test build (tests/e2e/multi_device) that takes only conv2d, so that a
   * model compiled for it and the full vec runs on two devices. */
  if (workload->op != HETC_PLUGIN_OP_CONV2D) return 0;
#endif
  return instance && device_index == 0 && vec_template_count(workload) > 0;
}

static int32_t vec_template_count_fn(const hetc_plugin_instance_t *instance,
                                     int32_t device_index,
                                     const hetc_plugin_workload_t *workload) {
  if (!instance || device_index != 0) return 0;
  return vec_template_count(workload);
}

static const char *vec_template_name_fn(const hetc_plugin_instance_t *instance,
                                        int32_t device_index,
                                        const hetc_plugin_workload_t *workload,
                                        int32_t template_index) {
  if (!instance || device_index != 0) return NULL;
  return vec_template_name(vec_template_kind(workload, template_index));
}

static uint32_t vec_template_version_fn(const hetc_plugin_instance_t *instance,
                                        int32_t device_index,
                                        const hetc_plugin_workload_t *workload,
                                        int32_t template_index) {
  if (!instance || device_index != 0) return 0;
  return vec_template_version(vec_template_kind(workload, template_index));
}

/* Checks device, workload and template; returns the template kind. */
static hetc_plugin_status_t resolve(const hetc_plugin_instance_t *instance,
                                    int32_t device_index,
                                    const hetc_plugin_workload_t *workload,
                                    int32_t template_index, int *out_kind) {
  if (!instance)
    return vec_status(HETC_PLUGIN_STATUS_INVALID_ARGUMENT, "vec: null instance");
  if (device_index != 0)
    return vec_status(HETC_PLUGIN_STATUS_INVALID_ARGUMENT,
                      "vec: device %d does not exist (one device)", device_index);
  char reason[512];
  int32_t code = hpc_workload_check(workload, reason, sizeof(reason));
  if (code) return vec_status(code, "vec: %s", reason);
  if (vec_template_count(workload) == 0)
    return vec_status(HETC_PLUGIN_STATUS_UNSUPPORTED, "vec: no template for op %s",
                      hetc_kit_op_name(workload->op));
  int kind = vec_template_kind(workload, template_index);
  if (kind < 0)
    return vec_status(HETC_PLUGIN_STATUS_INVALID_ARGUMENT,
                      "vec: template %d outside 0..%d for this workload", template_index,
                      vec_template_count(workload) - 1);
  *out_kind = kind;
  return NULL;
}

static hetc_plugin_status_t vec_template_define_space(const hetc_plugin_instance_t *instance,
                                                      int32_t device_index,
                                                      const hetc_plugin_workload_t *workload,
                                                      int32_t template_index,
                                                      hetc_plugin_space_t *space) {
  int kind = -1;
  hetc_plugin_status_t s = resolve(instance, device_index, workload, template_index, &kind);
  if (s) return s;
  vec_space_t desc;
  vec_space_describe(workload, kind, &desc);
  return vec_space_define(&desc, space);
}

/* ------------------------------------------------------------------------ */
/* Artifacts                                                                */
/* ------------------------------------------------------------------------ */

static void artifact_free(hetc_plugin_instance_t *instance, hetc_plugin_artifact_t *a) {
  if (!a) return;
  if (a->object) vec_toolchain_release(&instance->toolchain, a->object);
  hetc_kit_workload_release(&a->wl);
  free(a->description);
  free(a->source);
  free(a);
}

/* Validates and emits: everything build() and artifact_load() share, so
 * that both describe the same kernel. */
static hetc_plugin_status_t prepare(hetc_plugin_instance_t *instance, int32_t device_index,
                                    const hetc_plugin_workload_t *workload,
                                    int32_t template_index, const hetc_plugin_config_t *config,
                                    hetc_plugin_artifact_t **out) {
  int kind = -1;
  hetc_plugin_status_t s = resolve(instance, device_index, workload, template_index, &kind);
  if (s) return s;
  vec_space_t space;
  vec_space_describe(workload, kind, &space);
  vec_config_t cfg;
  if ((s = vec_config_parse(&space, config, &cfg))) return s;

  hetc_plugin_artifact_t *a = calloc(1, sizeof(*a));
  if (!a) return vec_status(HETC_PLUGIN_STATUS_OUT_OF_MEMORY, "vec: out of memory");
  if (hetc_kit_workload_copy(workload, &a->wl)) {
    free(a);
    return vec_status(HETC_PLUGIN_STATUS_OUT_OF_MEMORY, "vec: out of memory");
  }
  a->kind = kind;
  a->cfg = cfg;

  hpc_strbuf_t config_text;
  hpc_strbuf_init(&config_text);
  vec_config_describe(&space, &cfg, &config_text);
  vec_emit_t *e = calloc(1, sizeof(*e));
  if (!e || config_text.failed) {
    free(e);
    hpc_strbuf_free(&config_text);
    artifact_free(instance, a);
    return vec_status(HETC_PLUGIN_STATUS_OUT_OF_MEMORY, "vec: out of memory");
  }
  e->wl = &a->wl;
  e->kind = kind;
  e->cfg = cfg;
  e->config_text = config_text.data;
  hpc_strbuf_init(&e->src);
  s = vec_emit(e);
  if (!s) {
    a->source = hpc_strbuf_take(&e->src, &a->source_length);
    const double avg = e->inner_loops > 0 ? e->inner_iterations / e->inner_loops : 0;
    hpc_strbuf_t d;
    hpc_strbuf_init(&d);
    hpc_strbuf_printf(&d, "%s v%u [%s] avg inner loop %.1f: ", vec_template_name(kind),
                      vec_template_version(kind), config_text.data ? config_text.data : "",
                      avg);
    hpc_workload_describe(&a->wl, &d);
    char layout[32];
    for (int32_t i = 0; i < e->num_inputs; ++i) {
      hetc_kit_layout_text(e->input_layouts[i], a->wl.inputs[i].rank, layout, sizeof(layout));
      hpc_strbuf_printf(&d, "%s%s", i ? ", " : "; reads ", layout);
    }
    hetc_kit_layout_text(e->output_layout, a->wl.output.rank, layout, sizeof(layout));
    hpc_strbuf_printf(&d, ", writes %s", layout);
    a->description = hpc_strbuf_take(&d, NULL);
    memcpy(a->input_layouts, e->input_layouts, sizeof(a->input_layouts));
    memcpy(a->param_bytes, e->param_bytes, sizeof(a->param_bytes));
    hetc_plugin_artifact_info_t *info = &a->info;
    info->num_inputs = e->num_inputs;
    info->input_layouts = a->input_layouts;
    info->output_layout = e->output_layout;
    info->num_params = e->num_params;
    info->param_bytes = a->param_bytes;
    info->workspace_bytes = 0;
    info->avg_inner_loop_length = avg;
    info->description = a->description;
    hetc_kit_run_args_init(&a->run_args, &a->wl, info);
    if (!a->source || !a->description)
      s = vec_status(HETC_PLUGIN_STATUS_OUT_OF_MEMORY, "vec: out of memory");
  }
  hpc_strbuf_free(&e->src);
  free(e);
  hpc_strbuf_free(&config_text);
  if (s) {
    artifact_free(instance, a);
    return s;
  }
  *out = a;
  return NULL;
}

static hetc_plugin_status_t vec_build(hetc_plugin_instance_t *instance, int32_t device_index,
                                      const hetc_plugin_workload_t *workload,
                                      int32_t template_index,
                                      const hetc_plugin_config_t *config,
                                      hetc_plugin_artifact_t **out_artifact) {
  if (!out_artifact)
    return vec_status(HETC_PLUGIN_STATUS_INVALID_ARGUMENT, "vec: null out_artifact");
  *out_artifact = NULL;
  hetc_plugin_artifact_t *a = NULL;
  hetc_plugin_status_t s =
      prepare(instance, device_index, workload, template_index, config, &a);
  if (s) return s;
  s = vec_toolchain_get(&instance->toolchain, a->source, a->source_length, VEC_KERNEL_SYMBOL,
                        HETC_PLUGIN_STATUS_BUILD_FAILED, &a->object);
  if (s) {
    artifact_free(instance, a);
    return s;
  }
  memcpy(&a->fn, &a->object->symbol, sizeof(a->fn));
  *out_artifact = a;
  return NULL;
}

static void vec_artifact_release(hetc_plugin_instance_t *instance,
                                 hetc_plugin_artifact_t *artifact) {
  if (instance) artifact_free(instance, artifact);
}

static const hetc_plugin_artifact_info_t *vec_artifact_info(
    const hetc_plugin_artifact_t *artifact) {
  return artifact ? &artifact->info : NULL;
}

static hetc_plugin_status_t vec_pack_param_fn(const hetc_plugin_artifact_t *artifact,
                                              int32_t param_index, const float *logical,
                                              uint64_t count, void *out_packed) {
  if (!artifact)
    return vec_status(HETC_PLUGIN_STATUS_INVALID_ARGUMENT, "vec: null artifact");
  if (param_index < 0 || param_index >= artifact->info.num_params)
    return vec_status(HETC_PLUGIN_STATUS_INVALID_ARGUMENT,
                      "vec: param %d outside 0..%d", param_index,
                      artifact->info.num_params - 1);
  return vec_pack_param(&artifact->wl, artifact->kind, &artifact->cfg,
                        artifact->info.output_layout, param_index, logical, count,
                        out_packed, artifact->param_bytes[param_index]);
}

/* ------------------------------------------------------------------------ */
/* Buffers                                                                  */
/* ------------------------------------------------------------------------ */

static hetc_plugin_status_t vec_buffer_alloc(hetc_plugin_instance_t *instance,
                                             int32_t device_index, uint64_t bytes,
                                             hetc_plugin_buffer_t **out_buffer) {
  if (!instance || !out_buffer || device_index != 0)
    return vec_status(HETC_PLUGIN_STATUS_INVALID_ARGUMENT,
                      "vec: buffer_alloc: bad instance, device %d or null out", device_index);
  return hetc_kit_buffer_alloc(instance, device_index, bytes, out_buffer);
}

/* ------------------------------------------------------------------------ */
/* Run and time                                                             */
/* ------------------------------------------------------------------------ */

/* The runtime a kernel runs on: the host's pool (emit.c, vec.h). The
 * thread count is read at each call, so kernels follow the user's setting. */
static void launch(const hetc_plugin_artifact_t *a, float *const *args) {
  const vec_rt_t rt = {vec_host->parallel_for, vec_host->thread_count()};
  a->fn(args, &rt);
}

static hetc_plugin_status_t vec_run(hetc_plugin_instance_t *instance,
                                    const hetc_plugin_artifact_t *artifact,
                                    hetc_plugin_buffer_t *const *args, int32_t num_args) {
  (void)instance;
  if (!artifact || !artifact->fn)
    return vec_status(HETC_PLUGIN_STATUS_INVALID_ARGUMENT, "vec: artifact not runnable");
  return hetc_kit_run(&artifact->run_args, VEC_PLUGIN_NAME, launch, artifact, args, num_args);
}

static hetc_plugin_status_t vec_time(hetc_plugin_instance_t *instance,
                                     const hetc_plugin_artifact_t *artifact,
                                     hetc_plugin_buffer_t *const *args, int32_t num_args,
                                     int32_t number, int32_t repeat, double *out_seconds) {
  (void)instance;
  if (!artifact || !artifact->fn)
    return vec_status(HETC_PLUGIN_STATUS_INVALID_ARGUMENT, "vec: artifact not runnable");
  return hetc_kit_time(&artifact->run_args, VEC_PLUGIN_NAME, launch, artifact, args, num_args, number, repeat,
                       out_seconds);
}

/* Validates like build() and describes the kernel it would emit
 * (features.c). No allocation on success: the search calls this for
 * thousands of candidates a second, from several threads. */
static hetc_plugin_status_t vec_features(const hetc_plugin_instance_t *instance,
                                         int32_t device_index,
                                         const hetc_plugin_workload_t *workload,
                                         int32_t template_index,
                                         const hetc_plugin_config_t *config,
                                         float *out_features, int32_t capacity,
                                         int32_t *out_count) {
  if (out_count) *out_count = 0;
  if (!out_count || capacity < 0 || (capacity > 0 && !out_features))
    return vec_status(HETC_PLUGIN_STATUS_INVALID_ARGUMENT,
                      "vec: features: null out_count or out_features");
  int kind = -1;
  hetc_plugin_status_t s = resolve(instance, device_index, workload, template_index, &kind);
  if (s) return s;
  vec_space_t space;
  vec_space_describe(workload, kind, &space);
  vec_config_t cfg;
  if ((s = vec_config_parse(&space, config, &cfg))) return s;
  const int32_t count = vec_features_fill(workload, kind, &cfg,
                                          instance->device.desc.simd_width_fp32,
                                          out_features, capacity);
  if (count < 0)
    return vec_status(HETC_PLUGIN_STATUS_UNSUPPORTED,
                      "vec: %s has no features (only conv2d and dense templates do)",
                      vec_template_name(kind));
  *out_count = count;
  return NULL;
}

/* ------------------------------------------------------------------------ */
/* Emit and load                                                            */
/* ------------------------------------------------------------------------ */

static char *file_path(const char *dir, const char *prefix, const char *suffix) {
  size_t n = strlen(dir) + strlen(prefix) + strlen(suffix) + 2;
  char *p = malloc(n);
  if (p) snprintf(p, n, "%s/%s%s", dir, prefix, suffix);
  return p;
}

static hetc_plugin_status_t vec_artifact_emit(hetc_plugin_instance_t *instance,
                                              const hetc_plugin_artifact_t *artifact,
                                              const char *dir, const char *prefix) {
  if (!instance || !artifact || !dir || !prefix || !artifact->object)
    return vec_status(HETC_PLUGIN_STATUS_INVALID_ARGUMENT, "vec: artifact_emit: null argument");
  char *c_path = file_path(dir, prefix, ".c"), *so_path = file_path(dir, prefix, ".so");
  hetc_plugin_status_t s = NULL;
  if (!c_path || !so_path)
    s = vec_status(HETC_PLUGIN_STATUS_OUT_OF_MEMORY, "vec: out of memory");
  if (!s) s = hetc_kit_write_file(c_path, artifact->source, artifact->source_length);
  if (!s) {
    size_t length = 0;
    char *object = artifact->object->path ? hpc_read_file(artifact->object->path, &length) : NULL;
    if (object) {
      s = hetc_kit_write_file(so_path, object, length);
      free(object);
    } else {
      /* No file behind the loaded object (no disk cache, or the cache was
       * cleaned): build it again there. */
      s = vec_toolchain_compile_to(&instance->toolchain, artifact->source,
                                   artifact->source_length, so_path,
                                   HETC_PLUGIN_STATUS_BUILD_FAILED);
    }
  }
  free(c_path);
  free(so_path);
  return s;
}

/* Why a packaged source is not the one this plugin emits. A package made
 * before 0.2.0, whose kernels were OpenMP functions of a thread count, gets
 * its own message; the advice to recompile is the same for both. */
static hetc_plugin_status_t stale_source_status(const char *c_path, const char *packaged) {
  if (strstr(packaged, "HETC_VEC_KERNEL(float *const *args, int threads)"))
    return vec_status(HETC_PLUGIN_STATUS_INVALID_ARGUMENT,
                      "vec: %s was emitted by an older vec plugin (before 0.2.0: an OpenMP "
                      "kernel taking a thread count, not hetc's thread pool); "
                      "recompile the package with this hetc",
                      c_path);
  return vec_status(HETC_PLUGIN_STATUS_INVALID_ARGUMENT,
                    "vec: %s was emitted for another workload, template, config or plugin "
                    "version; recompile the package",
                    c_path);
}

static hetc_plugin_status_t vec_artifact_load(hetc_plugin_instance_t *instance,
                                              int32_t device_index,
                                              const hetc_plugin_workload_t *workload,
                                              int32_t template_index,
                                              const hetc_plugin_config_t *config,
                                              const char *dir, const char *prefix,
                                              hetc_plugin_artifact_t **out_artifact) {
  if (!out_artifact || !dir || !prefix)
    return vec_status(HETC_PLUGIN_STATUS_INVALID_ARGUMENT, "vec: artifact_load: null argument");
  *out_artifact = NULL;
  hetc_plugin_artifact_t *a = NULL;
  hetc_plugin_status_t s = prepare(instance, device_index, workload, template_index, config, &a);
  if (s) return s;
  char *c_path = file_path(dir, prefix, ".c"), *so_path = file_path(dir, prefix, ".so");
  if (!c_path || !so_path) s = vec_status(HETC_PLUGIN_STATUS_OUT_OF_MEMORY, "vec: out of memory");
  if (!s) {
    /* The packaged source must be the kernel this (workload, template,
     * config) gives now; otherwise the package is stale or mislabelled. */
    size_t length = 0;
    char *packaged = hpc_read_file(c_path, &length);
    if (!packaged)
      s = vec_status(HETC_PLUGIN_STATUS_INVALID_ARGUMENT, "vec: cannot read %s (missing from the package?)",
                     c_path);
    else if (length != a->source_length || memcmp(packaged, a->source, length) != 0)
      s = stale_source_status(c_path, packaged);
    free(packaged);
  }
  if (!s) {
    /* The packaged object when it loads, else the (identical) source is
     * compiled again, through the cache. */
    if (!vec_toolchain_try_open(&instance->toolchain, so_path, VEC_KERNEL_SYMBOL, &a->object))
      s = vec_toolchain_get(&instance->toolchain, a->source, a->source_length,
                            VEC_KERNEL_SYMBOL, HETC_PLUGIN_STATUS_BUILD_FAILED, &a->object);
  }
  free(c_path);
  free(so_path);
  if (s) {
    artifact_free(instance, a);
    return s;
  }
  memcpy(&a->fn, &a->object->symbol, sizeof(a->fn));
  *out_artifact = a;
  return NULL;
}

/* ------------------------------------------------------------------------ */

static const hetc_plugin_t vec_plugin = {
    .header = {HETC_PLUGIN_ABI_MAJOR, HETC_PLUGIN_ABI_MINOR, sizeof(hetc_plugin_t), 0},
    .name = VEC_PLUGIN_NAME,
    .vendor = "hetc",
    .version = VEC_PLUGIN_VERSION,
    .description = "C emitter for vector multicores: plain C with long NCHW[x]c "
                   "channel-block inner loops, built by the host C compiler, run on "
                   "the host's thread pool",
    .probe = vec_probe,
    .instance_create = vec_instance_create,
    .instance_destroy = vec_instance_destroy,
    .device_count = vec_device_count,
    .device_get = vec_device_get,
    .supports = vec_supports,
    .template_count = vec_template_count_fn,
    .template_name = vec_template_name_fn,
    .template_version = vec_template_version_fn,
    .template_define_space = vec_template_define_space,
    .build = vec_build,
    .artifact_release = vec_artifact_release,
    .artifact_info = vec_artifact_info,
    .pack_param = vec_pack_param_fn,
    .buffer_alloc = vec_buffer_alloc,
    .buffer_free = hetc_kit_buffer_free,
    .buffer_write = hetc_kit_buffer_write,
    .buffer_read = hetc_kit_buffer_read,
    .buffer_copy = hetc_kit_buffer_copy,
    .buffer_host_pointer = hetc_kit_buffer_host_pointer,
    .run = vec_run,
    .time = vec_time,
    .features = vec_features,
    .artifact_emit = vec_artifact_emit,
    .artifact_load = vec_artifact_load,
    .buffer_view = hetc_kit_buffer_view,
};

HETC_PLUGIN_EXPORT const hetc_plugin_t *hetc_plugin_query(uint32_t host_abi_major,
                                                          uint32_t host_abi_minor,
                                                          const hetc_plugin_host_t *host);

HETC_PLUGIN_EXPORT const hetc_plugin_t *hetc_plugin_query(uint32_t host_abi_major,
                                                          uint32_t host_abi_minor,
                                                          const hetc_plugin_host_t *host) {
  (void)host_abi_minor;
  /* Every service this plugin calls is in minor 0 (optional ones only
   * where HETC_PLUGIN_HAS_FIELD finds them): the kit refuses another major
   * and a shorter table, and keeps the host for its own calls. */
  if (!hetc_kit_bind(host_abi_major, host, VEC_PLUGIN_NAME)) return NULL;
  vec_host = host;
  return &vec_plugin;
}
