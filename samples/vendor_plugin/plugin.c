/* The example_c plugin's ABI table: negotiation (hetc_plugin_query), probe,
 * the instance and its one CPU device, template dispatch, artifacts (build,
 * info, pack, emit, load), buffers in host memory, run and time.
 *
 * Memory that outlives a call -- the instance, device strings, artifacts,
 * buffers -- comes from host->alloc and goes back through host->free, so
 * that the host can account for everything the plugin holds. */
#define _POSIX_C_SOURCE 200809L /* clock_gettime, sysconf, strerror_r */

#include <errno.h>
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

static const char *error_text(int error, char *buf, size_t size) {
  if (strerror_r(error, buf, size) != 0) snprintf(buf, size, "error %d", error);
  return buf;
}

/* ------------------------------------------------------------------------ */
/* A growing string in host memory (artifact descriptions and files)       */
/* ------------------------------------------------------------------------ */

typedef struct text_t {
  char *data; /* host->alloc'ed, NUL-terminated; the owner frees it */
  size_t length, capacity;
  int failed; /* an allocation failed: data is incomplete */
} text_t;

static void text_printf(text_t *t, const char *format, ...) HETC_PLUGIN_PRINTF(2, 3);
static void text_printf(text_t *t, const char *format, ...) {
  if (t->failed) return;
  va_list args, again;
  va_start(args, format);
  va_copy(again, args);
  const int n = vsnprintf(NULL, 0, format, args);
  va_end(args);
  if (n < 0) {
    t->failed = 1;
  } else {
    if (t->length + (size_t)n + 1 > t->capacity) {
      size_t capacity = t->capacity ? t->capacity * 2 : 256;
      while (capacity < t->length + (size_t)n + 1) capacity *= 2;
      /* The host allocator has no realloc: move to a new block. */
      char *grown = exc_host->alloc(capacity);
      if (!grown) {
        t->failed = 1;
      } else {
        if (t->data) memcpy(grown, t->data, t->length + 1);
        exc_host->free(t->data);
        t->data = grown;
        t->capacity = capacity;
      }
    }
    if (!t->failed) {
      vsnprintf(t->data + t->length, (size_t)n + 1, format, again);
      t->length += (size_t)n;
    }
  }
  va_end(again);
}

static void text_free(text_t *t) {
  exc_host->free(t->data);
  t->data = NULL;
}

/* ------------------------------------------------------------------------ */
/* Templates and workloads                                                  */
/* ------------------------------------------------------------------------ */

/* Names key tuning records: they never change for a template. Bump a
 * version when records made with the old code stop being meaningful. */
static const struct {
  const char *name;
  uint32_t version;
} templates[EXC_T_COUNT_] = {
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

static double now_seconds(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* A nominal fp32 peak: ~15 ms of scalar multiply-adds on this thread, in
 * four independent chains (one chain would time the add latency, not the
 * throughput), times the thread count. It is what this plain-C backend can
 * reach, not the hardware's vector peak. */
static double measure_peak_gflops(int32_t threads) {
  volatile float seed = 1.0f, sink;
  float a0 = seed, a1 = seed + 1, a2 = seed + 2, a3 = seed + 3;
  const float m = 0.999999f, c = 1e-7f;
  const int64_t block = 1 << 16;
  int64_t iterations = 0;
  const double start = now_seconds();
  double elapsed = 0;
  do {
    for (int64_t i = 0; i < block; ++i) {
      a0 = a0 * m + c;
      a1 = a1 * m + c;
      a2 = a2 * m + c;
      a3 = a3 * m + c;
    }
    iterations += block;
    elapsed = now_seconds() - start;
  } while (elapsed < 0.015);
  sink = a0 + a1 + a2 + a3; /* keeps the loop from being optimised away */
  (void)sink;
  return 8.0 * (double)iterations / elapsed * 1e-9 * threads;
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
  return templates[template_of(workload->op)].name;
}

static uint32_t exc_template_version(const hetc_plugin_instance_t *instance,
                                     int32_t device_index,
                                     const hetc_plugin_workload_t *workload,
                                     int32_t template_index) {
  if (template_index != 0 || !exc_template_count(instance, device_index, workload)) return 0;
  return templates[template_of(workload->op)].version;
}

/* The checks every call on a (device, workload, template) starts with;
 * returns the template kind. */
static hetc_plugin_status_t resolve(const hetc_plugin_instance_t *instance, int32_t device_index,
                                    const hetc_plugin_workload_t *workload,
                                    int32_t template_index, int *out_kind) {
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
  hetc_plugin_status_t s = resolve(instance, device_index, workload, template_index, &kind);
  if (s) return s;
  if (!space) return exc_status(HETC_PLUGIN_STATUS_INVALID_ARGUMENT, EXC_NAME ": null space");
  if (kind == EXC_T_DIRECT) return exc_direct_define_space(workload, space);
  /* No knobs: the default is the empty config. */
  const hetc_plugin_config_t empty = {0, NULL};
  return exc_host->space_set_default(space, &empty);
}

/* A knob-less template accepts NULL or a config without knobs. */
static hetc_plugin_status_t check_no_knobs(int kind, const hetc_plugin_config_t *config) {
  if (!config || config->num_knobs == 0) return NULL;
  const char *name = config->num_knobs > 0 && config->knobs && config->knobs[0].name
                         ? config->knobs[0].name
                         : "?";
  return exc_status(HETC_PLUGIN_STATUS_INVALID_ARGUMENT,
                    "%s: unknown knob '%s' (this template has no knobs)", templates[kind].name,
                    name);
}

/* ------------------------------------------------------------------------ */
/* Artifacts                                                                */
/* ------------------------------------------------------------------------ */

/* Everything below is host->alloc'ed and freed by artifact_free. */
struct hetc_plugin_artifact_t {
  int kind;
  hetc_plugin_workload_t wl;     /* a copy; wl.inputs points at inputs */
  hetc_plugin_tensor_t *inputs;  /* the workload's inputs, copied */
  exc_direct_config_t conv;      /* EXC_T_DIRECT only */
  hetc_plugin_artifact_info_t info;
  hetc_plugin_layout_t *input_layouts; /* all row-major */
  uint64_t param_bytes[2];
  int32_t num_args;    /* inputs + params + output */
  uint64_t *arg_bytes; /* the least bytes of each run() argument */
  char *description;
};

static void artifact_free(hetc_plugin_artifact_t *a) {
  if (!a) return;
  exc_host->free(a->inputs);
  exc_host->free(a->input_layouts);
  exc_host->free(a->arg_bytes);
  exc_host->free(a->description);
  exc_host->free(a);
}

/* Validates (instance, workload, template, config) and describes the
 * artifact: build() and artifact_load() share it so that both instantiate
 * the same kernel. On success *out is the caller's, released with
 * artifact_free. */
static hetc_plugin_status_t prepare(const hetc_plugin_instance_t *instance, int32_t device_index,
                                    const hetc_plugin_workload_t *workload,
                                    int32_t template_index, const hetc_plugin_config_t *config,
                                    hetc_plugin_artifact_t **out) {
  *out = NULL;
  int kind = -1;
  hetc_plugin_status_t s = resolve(instance, device_index, workload, template_index, &kind);
  if (s) return s;
  exc_direct_config_t conv;
  memset(&conv, 0, sizeof(conv));
  s = kind == EXC_T_DIRECT ? exc_direct_parse(workload, config, &conv)
                           : check_no_knobs(kind, config);
  if (s) return s;

  const int32_t n_in = workload->num_inputs;
  const int32_t n_params = kind == EXC_T_DIRECT ? 1 + workload->epilogue.has_bias
                                                : exc_ops_num_params(workload);
  hetc_plugin_artifact_t *a = exc_host->alloc(sizeof(*a));
  if (!a) return exc_status(HETC_PLUGIN_STATUS_OUT_OF_MEMORY, EXC_NAME ": out of memory");
  memset(a, 0, sizeof(*a));
  a->kind = kind;
  a->conv = conv;
  a->num_args = n_in + n_params + 1;
  a->inputs = exc_host->alloc(sizeof(*a->inputs) * (size_t)n_in);
  a->input_layouts = exc_host->alloc(sizeof(*a->input_layouts) * (size_t)n_in);
  a->arg_bytes = exc_host->alloc(sizeof(*a->arg_bytes) * (size_t)a->num_args);
  text_t d = {0};
  if (kind == EXC_T_DIRECT) {
    char config_text[160];
    exc_direct_config_text(&conv, config_text, sizeof(config_text));
    text_printf(&d, "%s %s", templates[kind].name, config_text);
  } else {
    text_printf(&d, "%s", templates[kind].name);
  }
  a->description = d.data;
  if (!a->inputs || !a->input_layouts || !a->arg_bytes || d.failed) {
    artifact_free(a);
    return exc_status(HETC_PLUGIN_STATUS_OUT_OF_MEMORY, EXC_NAME ": out of memory");
  }
  memcpy(a->inputs, workload->inputs, sizeof(*a->inputs) * (size_t)n_in);
  a->wl = *workload;
  a->wl.inputs = a->inputs;
  int32_t arg = 0;
  /* Every artifact reads and writes row-major, except a layout_transform
   * that keeps the shape: it converts between the layouts it is given. */
  const int converts = kind == EXC_T_LAYOUT && exc_same_shape(&workload->inputs[0], &workload->output);
  for (int32_t i = 0; i < n_in; ++i) {
    a->input_layouts[i] = converts ? workload->inputs[i].layout
                                   : (hetc_plugin_layout_t){HETC_PLUGIN_LAYOUT_ROW_MAJOR, 0};
    a->inputs[i].layout = a->input_layouts[i];
    a->arg_bytes[arg++] = (uint64_t)exc_stored_count(&a->inputs[i]) * sizeof(float);
  }
  if (!converts) a->wl.output.layout = (hetc_plugin_layout_t){HETC_PLUGIN_LAYOUT_ROW_MAJOR, 0};
  for (int32_t p = 0; p < n_params; ++p) {
    a->param_bytes[p] = kind == EXC_T_DIRECT ? exc_direct_param_bytes(workload, p)
                                             : exc_ops_param_bytes(workload, p);
    a->arg_bytes[arg++] = a->param_bytes[p];
  }
  a->arg_bytes[arg] = (uint64_t)exc_stored_count(&a->wl.output) * sizeof(float);
  hetc_plugin_artifact_info_t *info = &a->info;
  info->num_inputs = n_in;
  info->input_layouts = a->input_layouts;
  info->output_layout = a->wl.output.layout;
  info->num_params = n_params;
  info->param_bytes = a->param_bytes;
  info->workspace_bytes = 0;
  info->avg_inner_loop_length =
      kind == EXC_T_DIRECT ? (double)conv.tile_x[1] : exc_ops_inner_loop(workload, kind);
  info->description = a->description;
  *out = a;
  return NULL;
}

/* *out_artifact is the caller's, released with artifact_release. */
static hetc_plugin_status_t exc_build(hetc_plugin_instance_t *instance, int32_t device_index,
                                      const hetc_plugin_workload_t *workload,
                                      int32_t template_index, const hetc_plugin_config_t *config,
                                      hetc_plugin_artifact_t **out_artifact) {
  if (!out_artifact)
    return exc_status(HETC_PLUGIN_STATUS_INVALID_ARGUMENT, EXC_NAME ": null out_artifact");
  /* Nothing to compile: the kernels are in this library, and the artifact
   * is the validated (workload, template, config). */
  return prepare(instance, device_index, workload, template_index, config, out_artifact);
}

static void exc_artifact_release(hetc_plugin_instance_t *instance,
                                 hetc_plugin_artifact_t *artifact) {
  (void)instance;
  artifact_free(artifact);
}

/* Owned by the artifact: valid until artifact_release. */
static const hetc_plugin_artifact_info_t *exc_artifact_info(
    const hetc_plugin_artifact_t *artifact) {
  return artifact ? &artifact->info : NULL;
}

static hetc_plugin_status_t exc_pack_param(const hetc_plugin_artifact_t *artifact,
                                           int32_t param_index, const float *logical,
                                           uint64_t count, void *out_packed) {
  if (!artifact || !logical || !out_packed)
    return exc_status(HETC_PLUGIN_STATUS_INVALID_ARGUMENT, EXC_NAME ": pack_param: null argument");
  if (param_index < 0 || param_index >= artifact->info.num_params)
    return exc_status(HETC_PLUGIN_STATUS_INVALID_ARGUMENT,
                      "%s: param %d outside 0..%d", templates[artifact->kind].name, param_index,
                      artifact->info.num_params - 1);
  if (artifact->kind == EXC_T_DIRECT)
    return exc_direct_pack(&artifact->wl, &artifact->conv, param_index, logical, count,
                           out_packed);
  return exc_ops_pack(&artifact->wl, artifact->kind, param_index, logical, count, out_packed);
}

/* ------------------------------------------------------------------------ */
/* Buffers: plain host memory                                               */
/* ------------------------------------------------------------------------ */

struct hetc_plugin_buffer_t {
  uint64_t bytes;
  float *data; /* host->alloc'ed; 64-byte aligned */
};

/* *out_buffer is the caller's, freed with buffer_free. */
static hetc_plugin_status_t exc_buffer_alloc(hetc_plugin_instance_t *instance,
                                             int32_t device_index, uint64_t bytes,
                                             hetc_plugin_buffer_t **out_buffer) {
  if (!instance || !out_buffer || device_index != 0)
    return exc_status(HETC_PLUGIN_STATUS_INVALID_ARGUMENT,
                      EXC_NAME ": buffer_alloc: null instance or out_buffer, or device %d",
                      device_index);
  *out_buffer = NULL;
  if (bytes > (uint64_t)SIZE_MAX / 2)
    return exc_status(HETC_PLUGIN_STATUS_OUT_OF_MEMORY, EXC_NAME ": %llu bytes",
                      (unsigned long long)bytes);
  hetc_plugin_buffer_t *b = exc_host->alloc(sizeof(*b));
  /* One byte for an empty buffer: a host allocator may return NULL for 0. */
  float *data = exc_host->alloc(bytes ? (size_t)bytes : 1);
  if (!b || !data) {
    exc_host->free(b);
    exc_host->free(data);
    return exc_status(HETC_PLUGIN_STATUS_OUT_OF_MEMORY, EXC_NAME ": buffer of %llu bytes",
                      (unsigned long long)bytes);
  }
  b->bytes = bytes;
  b->data = data;
  *out_buffer = b;
  return NULL;
}

static void exc_buffer_free(hetc_plugin_instance_t *instance, hetc_plugin_buffer_t *buffer) {
  (void)instance;
  if (!buffer) return;
  exc_host->free(buffer->data);
  exc_host->free(buffer);
}

/* offset + bytes within size, without overflowing. */
static int in_range(uint64_t size, uint64_t offset, uint64_t bytes) {
  return offset <= size && bytes <= size - offset;
}

static hetc_plugin_status_t exc_buffer_write(hetc_plugin_instance_t *instance,
                                             hetc_plugin_buffer_t *buffer, uint64_t offset,
                                             const void *src, uint64_t bytes) {
  (void)instance;
  if (!buffer || (bytes && !src))
    return exc_status(HETC_PLUGIN_STATUS_INVALID_ARGUMENT, EXC_NAME ": buffer_write: null argument");
  if (!in_range(buffer->bytes, offset, bytes))
    return exc_status(HETC_PLUGIN_STATUS_INVALID_ARGUMENT,
                      EXC_NAME ": buffer_write of %llu bytes at %llu into a buffer of %llu",
                      (unsigned long long)bytes, (unsigned long long)offset,
                      (unsigned long long)buffer->bytes);
  if (bytes) memcpy((char *)buffer->data + offset, src, (size_t)bytes);
  return NULL;
}

static hetc_plugin_status_t exc_buffer_read(hetc_plugin_instance_t *instance,
                                            const hetc_plugin_buffer_t *buffer, uint64_t offset,
                                            void *dst, uint64_t bytes) {
  (void)instance;
  if (!buffer || (bytes && !dst))
    return exc_status(HETC_PLUGIN_STATUS_INVALID_ARGUMENT, EXC_NAME ": buffer_read: null argument");
  if (!in_range(buffer->bytes, offset, bytes))
    return exc_status(HETC_PLUGIN_STATUS_INVALID_ARGUMENT,
                      EXC_NAME ": buffer_read of %llu bytes at %llu from a buffer of %llu",
                      (unsigned long long)bytes, (unsigned long long)offset,
                      (unsigned long long)buffer->bytes);
  if (bytes) memcpy(dst, (const char *)buffer->data + offset, (size_t)bytes);
  return NULL;
}

static hetc_plugin_status_t exc_buffer_copy(hetc_plugin_instance_t *instance,
                                            hetc_plugin_buffer_t *dst, uint64_t dst_offset,
                                            const hetc_plugin_buffer_t *src, uint64_t src_offset,
                                            uint64_t bytes) {
  (void)instance;
  if (!dst || !src)
    return exc_status(HETC_PLUGIN_STATUS_INVALID_ARGUMENT, EXC_NAME ": buffer_copy: null buffer");
  if (!in_range(dst->bytes, dst_offset, bytes) || !in_range(src->bytes, src_offset, bytes))
    return exc_status(HETC_PLUGIN_STATUS_INVALID_ARGUMENT,
                      EXC_NAME ": buffer_copy of %llu bytes from %llu (of %llu) to %llu (of %llu)",
                      (unsigned long long)bytes, (unsigned long long)src_offset,
                      (unsigned long long)src->bytes, (unsigned long long)dst_offset,
                      (unsigned long long)dst->bytes);
  /* memmove: the two ranges may lie in one buffer. */
  if (bytes)
    memmove((char *)dst->data + dst_offset, (const char *)src->data + src_offset, (size_t)bytes);
  return NULL;
}

/* The buffer's own memory: valid until buffer_free, never freed by the
 * caller. */
static void *exc_buffer_host_pointer(hetc_plugin_instance_t *instance,
                                     hetc_plugin_buffer_t *buffer) {
  (void)instance;
  return buffer ? buffer->data : NULL;
}

/* ------------------------------------------------------------------------ */
/* Run and time                                                             */
/* ------------------------------------------------------------------------ */

static const char *arg_role(const hetc_plugin_artifact_t *a, int32_t i, char *buf, size_t size) {
  if (i < a->info.num_inputs) snprintf(buf, size, "input %d", i);
  else if (i < a->info.num_inputs + a->info.num_params)
    snprintf(buf, size, "param %d", i - a->info.num_inputs);
  else snprintf(buf, size, "the output");
  return buf;
}

/* Checks run()'s arguments and collects their data pointers. */
static hetc_plugin_status_t gather(const hetc_plugin_artifact_t *a,
                                   hetc_plugin_buffer_t *const *args, int32_t num_args,
                                   float **pointers) {
  if (!a) return exc_status(HETC_PLUGIN_STATUS_INVALID_ARGUMENT, EXC_NAME ": null artifact");
  const char *name = templates[a->kind].name;
  if (num_args != a->num_args || !args)
    return exc_status(HETC_PLUGIN_STATUS_INVALID_ARGUMENT,
                      "%s: expected %d arguments, got %d (inputs, params, output)", name,
                      a->num_args, num_args);
  char role[32];
  for (int32_t i = 0; i < num_args; ++i) {
    if (!args[i])
      return exc_status(HETC_PLUGIN_STATUS_INVALID_ARGUMENT, "%s: argument %d (%s) is null",
                        name, i, arg_role(a, i, role, sizeof(role)));
    if (args[i]->bytes < a->arg_bytes[i])
      return exc_status(HETC_PLUGIN_STATUS_INVALID_ARGUMENT,
                        "%s: argument %d (%s) has %llu bytes, the kernel needs %llu", name, i,
                        arg_role(a, i, role, sizeof(role)), (unsigned long long)args[i]->bytes,
                        (unsigned long long)a->arg_bytes[i]);
    pointers[i] = args[i]->data;
  }
  return NULL;
}

static void dispatch(const hetc_plugin_artifact_t *a, float *const *pointers) {
  if (a->kind == EXC_T_DIRECT) exc_direct_run(&a->wl, &a->conv, pointers);
  else exc_ops_run(&a->wl, a->kind, pointers);
}

static hetc_plugin_status_t exc_run(hetc_plugin_instance_t *instance,
                                    const hetc_plugin_artifact_t *artifact,
                                    hetc_plugin_buffer_t *const *args, int32_t num_args) {
  (void)instance;
  float *pointers[EXC_MAX_INPUTS + 3];
  hetc_plugin_status_t s = gather(artifact, args, num_args, pointers);
  if (s) return s;
  dispatch(artifact, pointers);
  return NULL;
}

static hetc_plugin_status_t exc_time(hetc_plugin_instance_t *instance,
                                     const hetc_plugin_artifact_t *artifact,
                                     hetc_plugin_buffer_t *const *args, int32_t num_args,
                                     int32_t number, int32_t repeat, double *out_seconds) {
  (void)instance;
  if (number < 1 || repeat < 1 || !out_seconds)
    return exc_status(HETC_PLUGIN_STATUS_INVALID_ARGUMENT,
                      EXC_NAME ": time: number %d and repeat %d must be positive, out_seconds "
                      "non-null",
                      number, repeat);
  float *pointers[EXC_MAX_INPUTS + 3];
  hetc_plugin_status_t s = gather(artifact, args, num_args, pointers);
  if (s) return s;
  dispatch(artifact, pointers); /* warm-up: caches, the host's pool */
  for (int32_t r = 0; r < repeat; ++r) {
    const double t0 = now_seconds();
    for (int32_t i = 0; i < number; ++i) dispatch(artifact, pointers);
    out_seconds[r] = (now_seconds() - t0) / number;
  }
  return NULL;
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
  hetc_plugin_status_t s = resolve(instance, device_index, workload, template_index, &kind);
  if (s) return s;
  if (kind != EXC_T_DIRECT)
    return exc_status(HETC_PLUGIN_STATUS_UNSUPPORTED,
                      "%s: no features (only example_c_direct has a loop nest to describe)",
                      templates[kind].name);
  exc_direct_config_t cfg;
  if ((s = exc_direct_parse(workload, config, &cfg))) return s;
  exc_direct_features(workload, &cfg, out_features, capacity);
  *out_count = capacity < HETC_FEATURE_COUNT ? capacity : HETC_FEATURE_COUNT;
  return NULL;
}
#endif

/* ------------------------------------------------------------------------ */
/* Emit and load                                                            */
/* ------------------------------------------------------------------------ */

/* The artifact file: four lines naming what the artifact was built from.
 * There is no code in it: this backend rebuilds an artifact in microseconds,
 * so the file only has to prove that the package asks for the same
 * kernel. Layout hints are left out: they do not change the kernel. */
#define FILE_FORMAT "example_c artifact 1"
#define FILE_SUFFIX ".example_c"
#define FILE_MAX_BYTES (64 * 1024)
static const char *const line_names[4] = {"format", "template", "config", "workload"};

static void describe_tensor(text_t *t, const hetc_plugin_tensor_t *x) {
  text_printf(t, "[");
  for (int32_t i = 0; i < x->rank; ++i)
    text_printf(t, "%s%lld", i ? "," : "", (long long)x->shape[i]);
  text_printf(t, "]");
}

static void artifact_text(const hetc_plugin_artifact_t *a, text_t *t) {
  const hetc_plugin_workload_t *w = &a->wl;
  text_printf(t, FILE_FORMAT "\ntemplate %s %u\nconfig ", templates[a->kind].name,
              templates[a->kind].version);
  if (a->kind == EXC_T_DIRECT) {
    char config_text[160];
    exc_direct_config_text(&a->conv, config_text, sizeof(config_text));
    text_printf(t, "%s\n", config_text);
  } else {
    text_printf(t, "(no knobs)\n");
  }
  text_printf(t, "workload op=%d inputs=", w->op);
  for (int32_t i = 0; i < w->num_inputs; ++i) {
    if (i) text_printf(t, ";");
    describe_tensor(t, &w->inputs[i]);
  }
  text_printf(t, " output=");
  describe_tensor(t, &w->output);
  text_printf(t,
              " kernel=%d,%d strides=%d,%d padding=%d,%d,%d,%d dilation=%d,%d groups=%d "
              "ceil_mode=%d count_include_pad=%d axis=%d activation=%d binary=%d "
              "epilogue=%d,%d,%d\n",
              w->kernel[0], w->kernel[1], w->strides[0], w->strides[1], w->padding[0],
              w->padding[1], w->padding[2], w->padding[3], w->dilation[0], w->dilation[1],
              w->groups, w->ceil_mode, w->count_include_pad, w->axis, w->activation, w->binary,
              w->epilogue.has_bias, w->epilogue.has_residual, w->epilogue.activation);
}

/* <dir>/<prefix>.example_c in host memory (the caller frees it), or NULL. */
static char *file_path(const char *dir, const char *prefix) {
  text_t t = {0};
  text_printf(&t, "%s/%s" FILE_SUFFIX, dir, prefix);
  if (t.failed) text_free(&t);
  return t.data;
}

static hetc_plugin_status_t exc_artifact_emit(hetc_plugin_instance_t *instance,
                                              const hetc_plugin_artifact_t *artifact,
                                              const char *dir, const char *prefix) {
  if (!instance || !artifact || !dir || !prefix)
    return exc_status(HETC_PLUGIN_STATUS_INVALID_ARGUMENT, EXC_NAME ": artifact_emit: null argument");
  char *path = file_path(dir, prefix);
  text_t t = {0};
  artifact_text(artifact, &t);
  hetc_plugin_status_t s = NULL;
  if (!path || t.failed) {
    s = exc_status(HETC_PLUGIN_STATUS_OUT_OF_MEMORY, EXC_NAME ": out of memory");
  } else {
    errno = 0;
    FILE *f = fopen(path, "wb");
    int error = f ? 0 : (errno ? errno : EIO);
    if (f && fwrite(t.data, 1, t.length, f) != t.length) error = errno ? errno : EIO;
    if (f && fclose(f) != 0 && !error) error = errno ? errno : EIO;
    if (error) {
      char e[128];
      s = exc_status(HETC_PLUGIN_STATUS_INTERNAL, EXC_NAME ": writing %s: %s", path,
                     error_text(error, e, sizeof(e)));
    }
  }
  text_free(&t);
  exc_host->free(path);
  return s;
}

/* A line of an artifact file fit for a message: at most 120 characters,
 * bytes outside printable ASCII shown as '?'. */
static void quote_line(const char *p, size_t n, char *buf, size_t size) {
  size_t o = 0;
  for (size_t i = 0; i < n && o + 4 < size; ++i) buf[o++] = p[i] >= 0x20 && p[i] < 0x7f ? p[i] : '?';
  if (o + 4 >= size && n > o) {
    memcpy(buf + o, "...", 3);
    o += 3;
  }
  buf[o] = '\0';
}

/* Compares the file's text with the expected one line by line, so that the
 * reason names what differs (config, workload, ...). NULL when equal. */
static hetc_plugin_status_t compare_text(const char *path, const char *got, size_t got_length,
                                         const char *want) {
  size_t g = 0, w = 0;
  for (int line = 0; line < 4; ++line) {
    const size_t wn = strcspn(want + w, "\n");
    size_t gn = 0;
    while (g + gn < got_length && got[g + gn] != '\n') ++gn;
    char have[128], need[128];
    if (g >= got_length)
      return exc_status(HETC_PLUGIN_STATUS_INVALID_ARGUMENT,
                        EXC_NAME ": %s ends before its %s line: truncated or not an example_c "
                        "artifact",
                        path, line_names[line]);
    if (gn != wn || memcmp(got + g, want + w, wn) != 0) {
      quote_line(got + g, gn, have, sizeof(have));
      quote_line(want + w, wn, need, sizeof(need));
      if (line == 0)
        return exc_status(HETC_PLUGIN_STATUS_INVALID_ARGUMENT,
                          EXC_NAME ": %s is not an example_c artifact of this format (first "
                          "line '%s', expected '%s')",
                          path, have, need);
      return exc_status(HETC_PLUGIN_STATUS_INVALID_ARGUMENT,
                        EXC_NAME ": %s was emitted for another %s: it has '%s', this load asks "
                        "for '%s'",
                        path, line_names[line], have, need);
    }
    if (g + gn >= got_length)
      return exc_status(HETC_PLUGIN_STATUS_INVALID_ARGUMENT,
                        EXC_NAME ": %s ends inside its %s line: truncated", path,
                        line_names[line]);
    g += gn + 1;
    w += wn + 1;
  }
  if (g != got_length)
    return exc_status(HETC_PLUGIN_STATUS_INVALID_ARGUMENT,
                      EXC_NAME ": %s has %llu bytes after its last line: corrupt", path,
                      (unsigned long long)(got_length - g));
  return NULL;
}

/* Reads the whole file at path into host memory (*out, NUL-terminated,
 * the caller frees it); files above FILE_MAX_BYTES are refused unread. */
static hetc_plugin_status_t read_file(const char *path, char **out, size_t *out_length) {
  *out = NULL;
  FILE *f = fopen(path, "rb");
  if (!f) {
    char e[128];
    return exc_status(HETC_PLUGIN_STATUS_INVALID_ARGUMENT, EXC_NAME ": cannot open %s: %s", path,
                      error_text(errno, e, sizeof(e)));
  }
  char *data = exc_host->alloc(FILE_MAX_BYTES + 2);
  if (!data) {
    fclose(f);
    return exc_status(HETC_PLUGIN_STATUS_OUT_OF_MEMORY, EXC_NAME ": out of memory");
  }
  const size_t n = fread(data, 1, FILE_MAX_BYTES + 1, f);
  const int failed = ferror(f);
  fclose(f);
  if (failed || n > FILE_MAX_BYTES) {
    exc_host->free(data);
    return exc_status(HETC_PLUGIN_STATUS_INVALID_ARGUMENT,
                      failed ? EXC_NAME ": reading %s failed"
                             : EXC_NAME ": %s is larger than any example_c artifact",
                      path);
  }
  data[n] = '\0';
  *out = data;
  *out_length = n;
  return NULL;
}

/* *out_artifact is the caller's, released with artifact_release. */
static hetc_plugin_status_t exc_artifact_load(hetc_plugin_instance_t *instance,
                                              int32_t device_index,
                                              const hetc_plugin_workload_t *workload,
                                              int32_t template_index,
                                              const hetc_plugin_config_t *config, const char *dir,
                                              const char *prefix,
                                              hetc_plugin_artifact_t **out_artifact) {
  if (!out_artifact || !dir || !prefix)
    return exc_status(HETC_PLUGIN_STATUS_INVALID_ARGUMENT, EXC_NAME ": artifact_load: null argument");
  *out_artifact = NULL;
  hetc_plugin_artifact_t *a = NULL;
  hetc_plugin_status_t s = prepare(instance, device_index, workload, template_index, config, &a);
  if (s) return s;
  char *path = file_path(dir, prefix), *got = NULL;
  size_t got_length = 0;
  text_t want = {0};
  artifact_text(a, &want);
  if (!path || want.failed) s = exc_status(HETC_PLUGIN_STATUS_OUT_OF_MEMORY, EXC_NAME ": out of memory");
  if (!s) s = read_file(path, &got, &got_length);
  if (!s) s = compare_text(path, got, got_length, want.data);
  exc_host->free(got);
  text_free(&want);
  exc_host->free(path);
  if (s) {
    artifact_free(a);
    return s;
  }
  *out_artifact = a;
  return NULL;
}

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
