/* The cuda plugin's ABI table: query, probe, instances and devices,
 * template dispatch, build/load/emit of artifacts, buffers, run and time.
 * Everything device-specific goes through the runtime interface (cu.h), so
 * that the test build runs this same file over OpenCL. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hetc/kit/host.h"
#include "cu.h"
#include "plugin_files.h"
#include "hetc/kit/status.h"

#ifndef CU_PLUGIN_NAME
#define CU_PLUGIN_NAME "cuda"
#endif

const hetc_plugin_host_t *cu_host;
const char *const cu_plugin_name = CU_PLUGIN_NAME;

hetc_plugin_status_t cu_status(int32_t code, const char *format, ...) {
  va_list args;
  va_start(args, format);
  hetc_plugin_status_t s = hetc_kit_status_va(cu_host, code, format, args);
  va_end(args);
  return s;
}

#define NAME cu_plugin_name

struct hetc_plugin_instance_t {
  cu_device_t *devices;
  int32_t num_devices;
};

struct hetc_plugin_buffer_t {
  cu_mem_t *mem;
  uint64_t bytes;
  int32_t device;
};

struct hetc_plugin_artifact_t {
  hetc_plugin_workload_t wl; /* deep copy */
  int kind;
  int32_t device;
  hetc_plugin_artifact_info_t info;
  hetc_plugin_layout_t input_layouts[CU_MAX_INPUTS + 1];
  uint64_t param_bytes[2];
  char *description;
  char *source; /* the kernel text, without the runtime's prelude */
  size_t source_length;
  cu_module_t *module;
  int32_t num_launches;
  cu_launch_t *launches;
  cu_function_t **functions;
  int32_t num_args;
  uint64_t arg_bytes[CU_MAX_INPUTS + 4]; /* minimum buffer size per arg */
};

/* ------------------------------------------------------------------------ */

static hetc_plugin_status_t cu_probe(void) { return cu_rt_probe(); }

static void cu_instance_destroy(hetc_plugin_instance_t *instance) {
  if (!instance) return;
  cu_rt_devices_close(instance->devices, instance->num_devices);
  free(instance);
}

static hetc_plugin_status_t cu_instance_create(hetc_plugin_instance_t **out_instance) {
  if (!out_instance) return cu_status(HETC_PLUGIN_STATUS_INVALID_ARGUMENT, "%s: null out_instance", NAME);
  *out_instance = NULL;
  hetc_plugin_instance_t *inst = calloc(1, sizeof(*inst));
  if (!inst) return cu_status(HETC_PLUGIN_STATUS_OUT_OF_MEMORY, "%s: out of memory", NAME);
  hetc_plugin_status_t s = cu_rt_devices_open(&inst->devices, &inst->num_devices);
  if (s) {
    free(inst);
    return s;
  }
  *out_instance = inst;
  return NULL;
}

static int32_t cu_device_count(const hetc_plugin_instance_t *instance) { return instance ? instance->num_devices : 0; }

static int valid_device(const hetc_plugin_instance_t *instance, int32_t device_index) {
  return instance && device_index >= 0 && device_index < instance->num_devices;
}

static const hetc_plugin_device_t *cu_device_get(const hetc_plugin_instance_t *instance, int32_t device_index) {
  return valid_device(instance, device_index) ? &instance->devices[device_index].desc : NULL;
}

static const cu_limits_t *limits_of(const hetc_plugin_instance_t *instance, int32_t device_index) {
  return &instance->devices[device_index].limits;
}

static int32_t cu_supports(const hetc_plugin_instance_t *instance, int32_t device_index,
                           const hetc_plugin_workload_t *workload) {
  return valid_device(instance, device_index) && workload &&
         cu_template_count(workload, limits_of(instance, device_index)) > 0;
}

static int32_t cu_template_count_fn(const hetc_plugin_instance_t *instance, int32_t device_index,
                                    const hetc_plugin_workload_t *workload) {
  return valid_device(instance, device_index) && workload
             ? cu_template_count(workload, limits_of(instance, device_index))
             : 0;
}

static const char *cu_template_name_fn(const hetc_plugin_instance_t *instance, int32_t device_index,
                                       const hetc_plugin_workload_t *workload, int32_t template_index) {
  if (!valid_device(instance, device_index) || !workload) return NULL;
  return cu_template_name(cu_template_kind(workload, limits_of(instance, device_index), template_index));
}

static uint32_t cu_template_version_fn(const hetc_plugin_instance_t *instance, int32_t device_index,
                                       const hetc_plugin_workload_t *workload, int32_t template_index) {
  if (!valid_device(instance, device_index) || !workload) return 0;
  return cu_template_version(cu_template_kind(workload, limits_of(instance, device_index), template_index));
}

/* Checks device, workload and template; returns the template kind. */
static hetc_plugin_status_t resolve(const hetc_plugin_instance_t *instance, int32_t device_index,
                                    const hetc_plugin_workload_t *workload, int32_t template_index, int *out_kind) {
  if (!instance || !workload) return cu_status(HETC_PLUGIN_STATUS_INVALID_ARGUMENT, "%s: null instance or workload", NAME);
  if (!valid_device(instance, device_index))
    return cu_status(HETC_PLUGIN_STATUS_INVALID_ARGUMENT, "%s: device %d does not exist (%d devices)", NAME,
                     device_index, instance->num_devices);
  char reason[512];
  int32_t code = hpc_workload_check(workload, reason, sizeof(reason));
  if (code) return cu_status(code, "%s: %s", NAME, reason);
  const cu_limits_t *limits = limits_of(instance, device_index);
  int kind = cu_template_kind(workload, limits, template_index);
  if (kind < 0)
    return cu_status(HETC_PLUGIN_STATUS_INVALID_ARGUMENT, "%s: template %d outside 0..%d for this workload", NAME,
                     template_index, cu_template_count(workload, limits) - 1);
  *out_kind = kind;
  return NULL;
}

static hetc_plugin_status_t cu_template_define_space(const hetc_plugin_instance_t *instance, int32_t device_index,
                                                     const hetc_plugin_workload_t *workload, int32_t template_index,
                                                     hetc_plugin_space_t *space) {
  int kind = -1;
  hetc_plugin_status_t s = resolve(instance, device_index, workload, template_index, &kind);
  if (s) return s;
  cu_space_t desc;
  cu_space_describe(workload, kind, &desc);
  return cu_space_define(&desc, workload, limits_of(instance, device_index), space);
}

/* ------------------------------------------------------------------------ */
/* Artifacts                                                                */
/* ------------------------------------------------------------------------ */

static void artifact_free(hetc_plugin_instance_t *instance, hetc_plugin_artifact_t *a) {
  if (!a) return;
  free(a->functions);
  free(a->launches);
  if (a->module) cu_rt_module_release(&instance->devices[a->device], a->module);
  hetc_kit_workload_release(&a->wl);
  free(a->description);
  free(a->source);
  free(a);
}

static void describe_artifact(hetc_plugin_artifact_t *a, const cu_emit_t *e, const char *config_text) {
  hpc_strbuf_t d;
  hpc_strbuf_init(&d);
  hpc_strbuf_printf(&d, "%s v%u [%s]: ", cu_template_name(a->kind), cu_template_version(a->kind),
                    config_text ? config_text : "");
  hpc_workload_describe(&a->wl, &d);
  char layout[32];
  for (int32_t i = 0; i < e->num_inputs; ++i) {
    hetc_kit_layout_text(e->input_layouts[i], a->wl.inputs[i].rank, layout, sizeof(layout));
    hpc_strbuf_printf(&d, "%s%s", i ? ", " : "; reads ", layout);
  }
  hetc_kit_layout_text(e->output_layout, a->wl.output.rank, layout, sizeof(layout));
  hpc_strbuf_printf(&d, ", writes %s", layout);
  a->description = hpc_strbuf_take(&d, NULL);
}

/* Fills the artifact from a finished emission. */
static hetc_plugin_status_t adopt_emission(hetc_plugin_artifact_t *a, cu_emit_t *e, const char *config_text) {
  a->source = hpc_strbuf_take(&e->src, &a->source_length);
  describe_artifact(a, e, config_text);
  a->num_launches = e->num_launches;
  a->launches = malloc(sizeof(*a->launches) * (size_t)e->num_launches);
  a->functions = calloc((size_t)e->num_launches, sizeof(*a->functions));
  if (a->launches) memcpy(a->launches, e->launches, sizeof(*a->launches) * (size_t)e->num_launches);
  memcpy(a->input_layouts, e->input_layouts, sizeof(a->input_layouts));
  memcpy(a->param_bytes, e->param_bytes, sizeof(a->param_bytes));
  hetc_plugin_artifact_info_t *info = &a->info;
  info->num_inputs = e->num_inputs;
  info->input_layouts = a->input_layouts;
  info->output_layout = e->output_layout;
  info->num_params = e->num_params;
  info->param_bytes = a->param_bytes;
  info->workspace_bytes = e->workspace_bytes;
  info->description = a->description;
  /* Minimum buffer sizes, in run()'s argument order. */
  int32_t n = 0;
  for (int32_t i = 0; i < e->num_inputs; ++i)
    a->arg_bytes[n++] = (uint64_t)hetc_kit_physical_count(&a->wl.inputs[i], a->input_layouts[i]) * 4;
  for (int32_t i = 0; i < e->num_params; ++i) a->arg_bytes[n++] = a->param_bytes[i];
  a->arg_bytes[n++] = (uint64_t)hetc_kit_physical_count(&a->wl.output, e->output_layout) * 4;
  if (e->workspace_bytes) a->arg_bytes[n++] = e->workspace_bytes;
  a->num_args = n;
  if (!a->source || !a->description || !a->launches || !a->functions)
    return cu_status(HETC_PLUGIN_STATUS_OUT_OF_MEMORY, "%s: out of memory", NAME);
  return NULL;
}

/* Validates (config against the space, its demand against the device) and
 * emits: everything build() and artifact_load() share. */
static hetc_plugin_status_t prepare(hetc_plugin_instance_t *instance, int32_t device_index,
                                    const hetc_plugin_workload_t *workload, int32_t template_index,
                                    const hetc_plugin_config_t *config, hetc_plugin_artifact_t **out) {
  int kind = -1;
  hetc_plugin_status_t s = resolve(instance, device_index, workload, template_index, &kind);
  if (s) return s;
  cu_space_t space;
  cu_space_describe(workload, kind, &space);
  cu_config_t cfg;
  if ((s = cu_config_parse(&space, config, &cfg))) return s;
  cu_demand_t demand;
  cu_config_demand(workload, kind, &cfg, &demand);
  if ((s = cu_check_limits(&demand, limits_of(instance, device_index)))) return s;

  hetc_plugin_artifact_t *a = calloc(1, sizeof(*a));
  cu_emit_t *e = calloc(1, sizeof(*e));
  hpc_strbuf_t config_text;
  hpc_strbuf_init(&config_text);
  cu_config_describe(&space, &cfg, &config_text);
  if (!a || !e || config_text.failed || hetc_kit_workload_copy(workload, &a->wl)) {
    free(a);
    free(e);
    hpc_strbuf_free(&config_text);
    return cu_status(HETC_PLUGIN_STATUS_OUT_OF_MEMORY, "%s: out of memory", NAME);
  }
  a->kind = kind;
  a->device = device_index;
  e->wl = &a->wl;
  e->kind = kind;
  e->cfg = cfg;
  e->config_text = config_text.data;
  hpc_strbuf_init(&e->src);
  s = cu_emit(e);
  if (!s) s = adopt_emission(a, e, config_text.data);
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

/* Compiles (or takes from the caches) the module, looks its kernels up and
 * checks what the compiler made of them against the device. */
static hetc_plugin_status_t finish(hetc_plugin_instance_t *instance, hetc_plugin_artifact_t *a, const void *image,
                                   size_t image_length) {
  cu_device_t *dev = &instance->devices[a->device];
  hetc_plugin_status_t s = cu_rt_module_get(dev, a->source, a->source_length, image, image_length, &a->module);
  for (int32_t i = 0; i < a->num_launches && !s; ++i) {
    cu_function_attrs_t attrs;
    s = cu_rt_function(a->module, a->launches[i].kernel, &a->functions[i], &attrs);
    if (!s) s = cu_check_function(a->launches[i].kernel, &attrs, a->launches[i].block, &dev->limits);
  }
  return s;
}

static hetc_plugin_status_t cu_build(hetc_plugin_instance_t *instance, int32_t device_index,
                                     const hetc_plugin_workload_t *workload, int32_t template_index,
                                     const hetc_plugin_config_t *config, hetc_plugin_artifact_t **out_artifact) {
  if (!out_artifact) return cu_status(HETC_PLUGIN_STATUS_INVALID_ARGUMENT, "%s: null out_artifact", NAME);
  *out_artifact = NULL;
  hetc_plugin_artifact_t *a = NULL;
  hetc_plugin_status_t s = prepare(instance, device_index, workload, template_index, config, &a);
  if (!s) s = finish(instance, a, NULL, 0);
  if (s) {
    artifact_free(instance, a);
    return s;
  }
  *out_artifact = a;
  return NULL;
}

static void cu_artifact_release(hetc_plugin_instance_t *instance, hetc_plugin_artifact_t *artifact) {
  if (instance) artifact_free(instance, artifact);
}

static const hetc_plugin_artifact_info_t *cu_artifact_info(const hetc_plugin_artifact_t *artifact) {
  return artifact ? &artifact->info : NULL;
}

static hetc_plugin_status_t cu_pack_param_fn(const hetc_plugin_artifact_t *artifact, int32_t param_index,
                                             const float *logical, uint64_t count, void *out_packed) {
  if (!artifact) return cu_status(HETC_PLUGIN_STATUS_INVALID_ARGUMENT, "%s: null artifact", NAME);
  if (param_index < 0 || param_index >= artifact->info.num_params)
    return cu_status(HETC_PLUGIN_STATUS_INVALID_ARGUMENT, "%s: param %d outside 0..%d", NAME, param_index,
                     artifact->info.num_params - 1);
  return cu_pack_param(&artifact->wl, artifact->kind, param_index, logical, count, out_packed,
                       artifact->param_bytes[param_index]);
}

/* ------------------------------------------------------------------------ */
/* Buffers                                                                  */
/* ------------------------------------------------------------------------ */

static hetc_plugin_status_t cu_buffer_alloc(hetc_plugin_instance_t *instance, int32_t device_index, uint64_t bytes,
                                            hetc_plugin_buffer_t **out_buffer) {
  if (!out_buffer || !valid_device(instance, device_index))
    return cu_status(HETC_PLUGIN_STATUS_INVALID_ARGUMENT, "%s: buffer_alloc: bad instance, device %d or null out",
                     NAME, device_index);
  *out_buffer = NULL;
  hetc_plugin_buffer_t *b = calloc(1, sizeof(*b));
  if (!b) return cu_status(HETC_PLUGIN_STATUS_OUT_OF_MEMORY, "%s: out of memory", NAME);
  hetc_plugin_status_t s = cu_rt_alloc(&instance->devices[device_index], bytes, &b->mem);
  if (s) {
    free(b);
    return s;
  }
  b->bytes = bytes;
  b->device = device_index;
  *out_buffer = b;
  return NULL;
}

static void cu_buffer_free(hetc_plugin_instance_t *instance, hetc_plugin_buffer_t *buffer) {
  if (!buffer || !instance) return;
  cu_rt_free(&instance->devices[buffer->device], buffer->mem);
  free(buffer);
}

static hetc_plugin_status_t check_range(const hetc_plugin_buffer_t *buffer, uint64_t offset, uint64_t bytes,
                                        const char *what) {
  if (!buffer) return cu_status(HETC_PLUGIN_STATUS_INVALID_ARGUMENT, "%s: %s: null buffer", NAME, what);
  if (offset > buffer->bytes || bytes > buffer->bytes - offset)
    return cu_status(HETC_PLUGIN_STATUS_INVALID_ARGUMENT, "%s: %s of %llu bytes at offset %llu outside a buffer of %llu bytes",
                     NAME, what, (unsigned long long)bytes, (unsigned long long)offset,
                     (unsigned long long)buffer->bytes);
  return NULL;
}

static hetc_plugin_status_t cu_buffer_write(hetc_plugin_instance_t *instance, hetc_plugin_buffer_t *buffer,
                                            uint64_t offset, const void *src, uint64_t bytes) {
  hetc_plugin_status_t s = check_range(buffer, offset, bytes, "buffer_write");
  if (s || bytes == 0) return s;
  if (!src) return cu_status(HETC_PLUGIN_STATUS_INVALID_ARGUMENT, "%s: buffer_write: null source", NAME);
  return cu_rt_write(&instance->devices[buffer->device], buffer->mem, offset, src, bytes);
}

static hetc_plugin_status_t cu_buffer_read(hetc_plugin_instance_t *instance, const hetc_plugin_buffer_t *buffer,
                                           uint64_t offset, void *dst, uint64_t bytes) {
  hetc_plugin_status_t s = check_range(buffer, offset, bytes, "buffer_read");
  if (s || bytes == 0) return s;
  if (!dst) return cu_status(HETC_PLUGIN_STATUS_INVALID_ARGUMENT, "%s: buffer_read: null destination", NAME);
  return cu_rt_read(&instance->devices[buffer->device], buffer->mem, offset, dst, bytes);
}

static hetc_plugin_status_t cu_buffer_copy(hetc_plugin_instance_t *instance, hetc_plugin_buffer_t *dst,
                                           uint64_t dst_offset, const hetc_plugin_buffer_t *src, uint64_t src_offset,
                                           uint64_t bytes) {
  hetc_plugin_status_t s = check_range(dst, dst_offset, bytes, "buffer_copy");
  if (!s) s = check_range(src, src_offset, bytes, "buffer_copy");
  if (s || bytes == 0) return s;
  if (dst->device != src->device)
    return cu_status(HETC_PLUGIN_STATUS_INVALID_ARGUMENT, "%s: buffer_copy between devices %d and %d", NAME,
                     src->device, dst->device);
  return cu_rt_copy(&instance->devices[dst->device], dst->mem, dst_offset, src->mem, src_offset, bytes);
}

static void *cu_buffer_host_pointer(hetc_plugin_instance_t *instance, hetc_plugin_buffer_t *buffer) {
  (void)instance;
  (void)buffer;
  return NULL;
}

/* ------------------------------------------------------------------------ */
/* Run and time                                                             */
/* ------------------------------------------------------------------------ */

static hetc_plugin_status_t check_args(const hetc_plugin_artifact_t *a, hetc_plugin_buffer_t *const *args,
                                       int32_t num_args) {
  if (!a || !a->module) return cu_status(HETC_PLUGIN_STATUS_INVALID_ARGUMENT, "%s: artifact not runnable", NAME);
  if (num_args != a->num_args || (num_args > 0 && !args))
    return cu_status(HETC_PLUGIN_STATUS_INVALID_ARGUMENT, "%s: %d arguments, the kernel takes %d (inputs, params, output%s)",
                     NAME, num_args, a->num_args, a->info.workspace_bytes ? ", workspace" : "");
  for (int32_t i = 0; i < num_args; ++i) {
    if (!args[i]) return cu_status(HETC_PLUGIN_STATUS_INVALID_ARGUMENT, "%s: argument %d is null", NAME, i);
    if (args[i]->device != a->device)
      return cu_status(HETC_PLUGIN_STATUS_INVALID_ARGUMENT, "%s: argument %d lives on device %d, the kernel on %d", NAME,
                       i, args[i]->device, a->device);
    if (args[i]->bytes < a->arg_bytes[i])
      return cu_status(HETC_PLUGIN_STATUS_INVALID_ARGUMENT, "%s: argument %d has %llu bytes, the kernel needs %llu",
                       NAME, i, (unsigned long long)args[i]->bytes, (unsigned long long)a->arg_bytes[i]);
  }
  return NULL;
}

/* Launches every kernel of the artifact once, in order, on the stream. */
static hetc_plugin_status_t enqueue(cu_device_t *dev, const hetc_plugin_artifact_t *a,
                                    hetc_plugin_buffer_t *const *args, int32_t num_args) {
  for (int32_t l = 0; l < a->num_launches; ++l) {
    const cu_launch_t *launch = &a->launches[l];
    cu_mem_t *mems[CU_MAX_LAUNCH_ARGS];
    for (int32_t j = 0; j < launch->num_args; ++j)
      mems[j] = args[launch->args[j] == CU_ARG_WORKSPACE ? num_args - 1 : launch->args[j]]->mem;
    hetc_plugin_status_t s = cu_rt_launch(dev, a->functions[l], launch->grid, launch->block, mems, launch->num_args);
    if (s) return s;
  }
  return NULL;
}

static hetc_plugin_status_t cu_run(hetc_plugin_instance_t *instance, const hetc_plugin_artifact_t *artifact,
                                   hetc_plugin_buffer_t *const *args, int32_t num_args) {
  hetc_plugin_status_t s = check_args(artifact, args, num_args);
  if (s) return s;
  cu_device_t *dev = &instance->devices[artifact->device];
  s = enqueue(dev, artifact, args, num_args);
  hetc_plugin_status_t done = cu_rt_sync(dev);
  if (s) {
    if (done) cu_host->status_free(done);
    return s;
  }
  return done;
}

static hetc_plugin_status_t cu_time(hetc_plugin_instance_t *instance, const hetc_plugin_artifact_t *artifact,
                                    hetc_plugin_buffer_t *const *args, int32_t num_args, int32_t number,
                                    int32_t repeat, double *out_seconds) {
  if (number < 1 || repeat < 1 || !out_seconds)
    return cu_status(HETC_PLUGIN_STATUS_INVALID_ARGUMENT, "%s: time: number %d and repeat %d must be positive", NAME,
                     number, repeat);
  hetc_plugin_status_t s = cu_run(instance, artifact, args, num_args); /* the untimed warm-up */
  cu_device_t *dev = s ? NULL : &instance->devices[artifact->device];
  /* Events around `number` back-to-back runs: the gaps between an
   * artifact's kernels are part of its cost, the host's latency is not. */
  for (int32_t r = 0; r < repeat && !s; ++r) {
    double seconds = 0;
    s = cu_rt_mark(dev, 0);
    for (int32_t i = 0; i < number && !s; ++i) s = enqueue(dev, artifact, args, num_args);
    if (!s) s = cu_rt_mark(dev, 1);
    if (!s) s = cu_rt_elapsed(dev, &seconds);
    out_seconds[r] = seconds / number;
  }
  if (s && dev) {
    hetc_plugin_status_t drained = cu_rt_sync(dev);
    if (drained) cu_host->status_free(drained);
  }
  return s;
}

static hetc_plugin_status_t cu_features(const hetc_plugin_instance_t *instance, int32_t device_index,
                                        const hetc_plugin_workload_t *workload, int32_t template_index,
                                        const hetc_plugin_config_t *config, float *out_features, int32_t capacity,
                                        int32_t *out_count) {
  if (out_count) *out_count = 0;
  if (!out_count || capacity < 0 || (capacity > 0 && !out_features))
    return cu_status(HETC_PLUGIN_STATUS_INVALID_ARGUMENT, "%s: features: null out_count or out_features", NAME);
  int kind = -1;
  hetc_plugin_status_t s = resolve(instance, device_index, workload, template_index, &kind);
  if (s) return s;
  cu_space_t space;
  cu_space_describe(workload, kind, &space);
  cu_config_t cfg;
  if ((s = cu_config_parse(&space, config, &cfg))) return s;
  const int32_t count = cu_features_fill(workload, kind, &cfg, out_features, capacity);
  if (count < 0)
    return cu_status(HETC_PLUGIN_STATUS_UNSUPPORTED, "%s: %s has no features (only conv2d, dense and matmul do)",
                     NAME, cu_template_name(kind));
  *out_count = count;
  return NULL;
}

/* ------------------------------------------------------------------------ */
/* Emit and load: the kernel text (.cu), its PTX (.ptx, any GPU of the      */
/* architecture or newer) and the device binary (.cubin), so that `hetc    */
/* run` compiles nothing on the GPU it was tuned on.                        */
/* ------------------------------------------------------------------------ */

static char *file_path(const char *dir, const char *prefix, const char *suffix) {
  size_t n = strlen(dir) + strlen(prefix) + strlen(suffix) + 2;
  char *p = malloc(n);
  if (p) snprintf(p, n, "%s/%s%s", dir, prefix, suffix);
  return p;
}

static const char *const package_suffixes[3] = {".cu", ".ptx", ".cubin"};

static hetc_plugin_status_t cu_artifact_emit(hetc_plugin_instance_t *instance, const hetc_plugin_artifact_t *artifact,
                                             const char *dir, const char *prefix) {
  if (!instance || !artifact || !dir || !prefix || !artifact->module)
    return cu_status(HETC_PLUGIN_STATUS_INVALID_ARGUMENT, "%s: artifact_emit: null argument", NAME);
  void *images[3] = {NULL, NULL, NULL};
  size_t lengths[3] = {artifact->source_length, 0, 0};
  cu_rt_module_images(artifact->module, &images[1], &lengths[1], &images[2], &lengths[2]);
  hetc_plugin_status_t s = NULL;
  for (int i = 0; i < 3 && !s; ++i) {
    const void *data = i == 0 ? artifact->source : images[i];
    if (!data) continue;
    char *path = file_path(dir, prefix, package_suffixes[i]);
    s = path ? hetc_kit_write_file(path, data, lengths[i]) : cu_status(HETC_PLUGIN_STATUS_OUT_OF_MEMORY, "%s: out of memory", NAME);
    free(path);
  }
  free(images[1]);
  free(images[2]);
  return s;
}

static hetc_plugin_status_t cu_artifact_load(hetc_plugin_instance_t *instance, int32_t device_index,
                                             const hetc_plugin_workload_t *workload, int32_t template_index,
                                             const hetc_plugin_config_t *config, const char *dir, const char *prefix,
                                             hetc_plugin_artifact_t **out_artifact) {
  if (!out_artifact || !dir || !prefix)
    return cu_status(HETC_PLUGIN_STATUS_INVALID_ARGUMENT, "%s: artifact_load: null argument", NAME);
  *out_artifact = NULL;
  hetc_plugin_artifact_t *a = NULL;
  hetc_plugin_status_t s = prepare(instance, device_index, workload, template_index, config, &a);
  if (s) return s;
  char *paths[3];
  for (int i = 0; i < 3; ++i) paths[i] = file_path(dir, prefix, package_suffixes[i]);
  char *image = NULL;
  size_t image_length = 0;
  if (!paths[0] || !paths[1] || !paths[2]) s = cu_status(HETC_PLUGIN_STATUS_OUT_OF_MEMORY, "%s: out of memory", NAME);
  if (!s) {
    /* The packaged text must be the kernel this (workload, template,
     * config) gives now; otherwise the package is stale or mislabelled. */
    size_t length = 0;
    char *packaged = hpc_read_file(paths[0], &length);
    if (!packaged)
      s = cu_status(HETC_PLUGIN_STATUS_INVALID_ARGUMENT, "%s: %s is missing or unreadable", NAME, paths[0]);
    else if (length != a->source_length || memcmp(packaged, a->source, length) != 0)
      s = cu_status(HETC_PLUGIN_STATUS_INVALID_ARGUMENT,
                    "%s: %s was emitted for another workload, template, config or plugin version", NAME, paths[0]);
    free(packaged);
  }
  /* The device binary when this GPU takes it, else the PTX (the driver
   * compiles it for this GPU), else the text is compiled again. */
  if (!s && !(image = hpc_read_file(paths[2], &image_length))) image = hpc_read_file(paths[1], &image_length);
  if (!s) s = finish(instance, a, image, image_length);
  free(image);
  for (int i = 0; i < 3; ++i) free(paths[i]);
  if (s) {
    artifact_free(instance, a);
    return s;
  }
  *out_artifact = a;
  return NULL;
}

/* ------------------------------------------------------------------------ */

static const hetc_plugin_t cu_plugin = {
    .header = {HETC_PLUGIN_ABI_MAJOR, HETC_PLUGIN_ABI_MINOR, sizeof(hetc_plugin_t), 0},
    .name = CU_PLUGIN_NAME,
    .vendor = "hetc",
    .version = CU_PLUGIN_VERSION,
    .description = "NVIDIA GPUs through NVRTC and the CUDA Driver API (both opened at run time): AutoTVM's "
                   "NCHW and NHWC direct schedules, Winograd, implicit GEMM on TF32 tensor cores (sm_80+)",
    .probe = cu_probe,
    .instance_create = cu_instance_create,
    .instance_destroy = cu_instance_destroy,
    .device_count = cu_device_count,
    .device_get = cu_device_get,
    .supports = cu_supports,
    .template_count = cu_template_count_fn,
    .template_name = cu_template_name_fn,
    .template_version = cu_template_version_fn,
    .template_define_space = cu_template_define_space,
    .build = cu_build,
    .artifact_release = cu_artifact_release,
    .artifact_info = cu_artifact_info,
    .pack_param = cu_pack_param_fn,
    .buffer_alloc = cu_buffer_alloc,
    .buffer_free = cu_buffer_free,
    .buffer_write = cu_buffer_write,
    .buffer_read = cu_buffer_read,
    .buffer_copy = cu_buffer_copy,
    .buffer_host_pointer = cu_buffer_host_pointer,
    .run = cu_run,
    .time = cu_time,
    .features = cu_features,
    .artifact_emit = cu_artifact_emit,
    .artifact_load = cu_artifact_load,
};

HETC_PLUGIN_EXPORT const hetc_plugin_t *hetc_plugin_query(uint32_t host_abi_major, uint32_t host_abi_minor,
                                                          const hetc_plugin_host_t *host);

HETC_PLUGIN_EXPORT const hetc_plugin_t *hetc_plugin_query(uint32_t host_abi_major, uint32_t host_abi_minor,
                                                          const hetc_plugin_host_t *host) {
  (void)host_abi_minor;
  /* Every service this plugin calls is in minor 0 (optional ones only
   * where HETC_PLUGIN_HAS_FIELD finds them): the kit refuses another major
   * and a shorter table, and keeps the host for its own calls. */
  if (!hetc_kit_bind(host_abi_major, host, CU_PLUGIN_NAME)) return NULL;
  cu_host = host;
  return &cu_plugin;
}
