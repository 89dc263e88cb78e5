/* The "fault" target: a deliberately faulty conv2d template for the tuner's
 * fault tests. Its knob `behaviour` picks what a candidate does:
 *   0 ok               1 the build hangs      2 the build crashes
 *   3 the compiler fails  4 the template refuses the config
 *   5 the run hangs    6 the run crashes      7 a wrong answer
 *   8 exceeds device limits
 * and `tile` (1, 2, 4) changes nothing but the config, so that several
 * configs are good. Kernels are plain row-major loops on host memory. The
 * device's peak is HETC_FAULT_PEAK GFLOPS (default 1).
 *
 * HETC_FAULT_KILL=PHASE:SIGNAL[:MARKER] has a good candidate's build
 * (PHASE "build") or run ("run") killed from outside: another process
 * sends SIGNAL to the worker, as kill(1) or the OOM killer would. With
 * MARKER (a file path) only the first such candidate is killed: the one
 * that creates the marker. */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <signal.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "hetc/plugin.h"

static const hetc_plugin_host_t *host;

enum { OK, BUILD_HANGS, BUILD_CRASHES, BUILD_FAILS, REFUSES, RUN_HANGS, RUN_CRASHES, WRONG, LIMITS };

struct hetc_plugin_instance_t {
  hetc_plugin_device_t device;
};

struct hetc_plugin_artifact_t {
  hetc_plugin_workload_t workload;
  hetc_plugin_tensor_t inputs[2];
  hetc_plugin_layout_t input_layouts[2];
  uint64_t param_bytes[2];
  hetc_plugin_artifact_info_t info;
  int64_t behaviour;
};

struct hetc_plugin_buffer_t {
  uint64_t bytes;
  float *data;
};

/* HETC_FAULT_KILL (above): dies here, of a signal another process sends,
 * when the variable names this phase. */
static void maybe_killed_from_outside(const char *phase) {
  const char *spec = getenv("HETC_FAULT_KILL");
  size_t length = strlen(phase);
  if (!spec || strncmp(spec, phase, length) != 0 || spec[length] != ':') return;
  char *end = NULL;
  int signal_number = (int)strtol(spec + length + 1, &end, 10);
  if (end && *end == ':') {
    int fd = open(end + 1, O_WRONLY | O_CREAT | O_EXCL, 0600);
    if (fd < 0) return; /* somebody was killed already */
    close(fd);
  }
  pid_t victim = getpid();
  if (fork() == 0) {
    kill(victim, signal_number);
    _exit(0);
  }
  for (;;) pause();
}

static hetc_plugin_status_t probe(void) { return NULL; }

static hetc_plugin_status_t instance_create(hetc_plugin_instance_t **out) {
  hetc_plugin_instance_t *inst = host->alloc(sizeof(*inst));
  if (!inst) return host->status_new(HETC_PLUGIN_STATUS_OUT_OF_MEMORY, "fault instance");
  memset(inst, 0, sizeof(*inst));
  inst->device = (hetc_plugin_device_t){sizeof(hetc_plugin_device_t), HETC_PLUGIN_DEVICE_CPU, "fault device",
                                        "fault:0", 1, 1, 1.0, 1.0, 0, 0, 0, 0, {0, 0, 0}, 1, 0};
  /* The peak it "measured" (HETC_FAULT_PEAK GFLOPS, default 1): the kept
   * peak's tests give one run a high figure and the next a low one. */
  const char *peak = getenv("HETC_FAULT_PEAK");
  if (peak && *peak) inst->device.peak_gflops_fp32 = strtod(peak, NULL);
  *out = inst;
  return NULL;
}
static void instance_destroy(hetc_plugin_instance_t *inst) { host->free(inst); }
static int32_t device_count(const hetc_plugin_instance_t *inst) {
  (void)inst;
  return 1;
}
static const hetc_plugin_device_t *device_get(const hetc_plugin_instance_t *inst, int32_t index) {
  return index == 0 ? &inst->device : NULL;
}
static int32_t supports(const hetc_plugin_instance_t *inst, int32_t device, const hetc_plugin_workload_t *w) {
  (void)inst, (void)device;
  return w->op == HETC_PLUGIN_OP_CONV2D;
}
static int32_t template_count(const hetc_plugin_instance_t *inst, int32_t device, const hetc_plugin_workload_t *w) {
  return supports(inst, device, w);
}
static const char *template_name(const hetc_plugin_instance_t *inst, int32_t device, const hetc_plugin_workload_t *w,
                                 int32_t t) {
  (void)inst, (void)device, (void)w;
  return t == 0 ? "fault_conv2d" : NULL;
}
static uint32_t template_version(const hetc_plugin_instance_t *inst, int32_t device, const hetc_plugin_workload_t *w,
                                 int32_t t) {
  (void)inst, (void)device, (void)w, (void)t;
  return 1;
}

static hetc_plugin_status_t define_space(const hetc_plugin_instance_t *inst, int32_t device,
                                         const hetc_plugin_workload_t *w, int32_t t, hetc_plugin_space_t *space) {
  (void)inst, (void)device, (void)w, (void)t;
  static const int64_t behaviours[] = {OK, BUILD_HANGS, BUILD_CRASHES, BUILD_FAILS, REFUSES,
                                       RUN_HANGS, RUN_CRASHES, WRONG, LIMITS};
  static const int64_t tiles[] = {1, 2, 4};
  hetc_plugin_status_t s = host->space_define_knob(space, "behaviour", behaviours, 9);
  if (!s) s = host->space_define_knob(space, "tile", tiles, 3);
  if (s) return s;
  const int64_t zero = 0, one = 1;
  hetc_plugin_knob_value_t defaults[2] = {{"behaviour", 1, &zero}, {"tile", 1, &one}};
  hetc_plugin_config_t config = {2, defaults};
  return host->space_set_default(space, &config);
}

static hetc_plugin_status_t build(hetc_plugin_instance_t *inst, int32_t device, const hetc_plugin_workload_t *w,
                                  int32_t t, const hetc_plugin_config_t *config, hetc_plugin_artifact_t **out) {
  (void)inst, (void)device, (void)t;
  const hetc_plugin_knob_value_t *knob = config ? host->config_find(config, "behaviour") : NULL;
  int64_t behaviour = knob && knob->count == 1 ? knob->values[0] : OK;
  if (behaviour == OK) maybe_killed_from_outside("build");
  switch (behaviour) {
    case BUILD_HANGS:
      for (;;) pause();
    case BUILD_CRASHES: raise(SIGSEGV); break;
    case BUILD_FAILS: return host->status_new(HETC_PLUGIN_STATUS_BUILD_FAILED, "fault: the compiler said no");
    case REFUSES: return host->status_new(HETC_PLUGIN_STATUS_INVALID_ARGUMENT, "fault: this config is refused");
    case LIMITS: return host->status_new(HETC_PLUGIN_STATUS_DEVICE_LIMITS, "fault: 4096 threads per group");
    default: break;
  }
  if (w->op != HETC_PLUGIN_OP_CONV2D || w->num_inputs > 2)
    return host->status_new(HETC_PLUGIN_STATUS_UNSUPPORTED, "fault: conv2d only");
  hetc_plugin_artifact_t *a = host->alloc(sizeof(*a));
  if (!a) return host->status_new(HETC_PLUGIN_STATUS_OUT_OF_MEMORY, "fault artifact");
  memset(a, 0, sizeof(*a));
  a->workload = *w;
  memcpy(a->inputs, w->inputs, sizeof(hetc_plugin_tensor_t) * (size_t)w->num_inputs);
  a->workload.inputs = a->inputs;
  a->behaviour = behaviour;
  int64_t cout = w->output.shape[1];
  a->param_bytes[0] = sizeof(float) * (uint64_t)(cout * (w->inputs[0].shape[1] / w->groups) * w->kernel[0] * w->kernel[1]);
  a->param_bytes[1] = sizeof(float) * (uint64_t)cout;
  a->info.num_inputs = w->num_inputs;
  a->info.input_layouts = a->input_layouts; /* zeros: row-major */
  a->info.num_params = 1 + w->epilogue.has_bias;
  a->info.param_bytes = a->param_bytes;
  a->info.description = "fault_conv2d";
  *out = a;
  return NULL;
}
static void artifact_release(hetc_plugin_instance_t *inst, hetc_plugin_artifact_t *a) {
  (void)inst;
  host->free(a);
}
static const hetc_plugin_artifact_info_t *artifact_info(const hetc_plugin_artifact_t *a) { return &a->info; }
static hetc_plugin_status_t pack_param(const hetc_plugin_artifact_t *a, int32_t p, const float *logical,
                                       uint64_t count, void *out) {
  if (count * sizeof(float) != a->param_bytes[p])
    return host->status_new(HETC_PLUGIN_STATUS_INVALID_ARGUMENT, "fault: param %d size", p);
  memcpy(out, logical, count * sizeof(float));
  return NULL;
}

static hetc_plugin_status_t buffer_alloc(hetc_plugin_instance_t *inst, int32_t device, uint64_t bytes,
                                         hetc_plugin_buffer_t **out) {
  (void)inst, (void)device;
  hetc_plugin_buffer_t *b = host->alloc(sizeof(*b));
  if (b) b->data = host->alloc(bytes ? bytes : 1);
  if (!b || !b->data) {
    if (b) host->free(b);
    return host->status_new(HETC_PLUGIN_STATUS_OUT_OF_MEMORY, "fault buffer");
  }
  b->bytes = bytes;
  *out = b;
  return NULL;
}
static void buffer_free(hetc_plugin_instance_t *inst, hetc_plugin_buffer_t *b) {
  (void)inst;
  if (!b) return;
  host->free(b->data);
  host->free(b);
}
static hetc_plugin_status_t buffer_write(hetc_plugin_instance_t *inst, hetc_plugin_buffer_t *b, uint64_t offset,
                                         const void *src, uint64_t bytes) {
  (void)inst;
  memcpy((char *)b->data + offset, src, bytes);
  return NULL;
}
static hetc_plugin_status_t buffer_read(hetc_plugin_instance_t *inst, const hetc_plugin_buffer_t *b,
                                        uint64_t offset, void *dst, uint64_t bytes) {
  (void)inst;
  memcpy(dst, (const char *)b->data + offset, bytes);
  return NULL;
}
static void *buffer_host_pointer(hetc_plugin_instance_t *inst, hetc_plugin_buffer_t *b) {
  (void)inst;
  return b->data;
}

static double activate(int32_t act, double x) {
  switch (act) {
    case HETC_PLUGIN_ACT_RELU: return x > 0 ? x : 0;
    case HETC_PLUGIN_ACT_RELU6: return x < 0 ? 0 : x > 6 ? 6 : x;
    case HETC_PLUGIN_ACT_SIGMOID: return 1 / (1 + exp(-x));
    case HETC_PLUGIN_ACT_TANH: return tanh(x);
    default: return x;
  }
}

static hetc_plugin_status_t run(hetc_plugin_instance_t *inst, const hetc_plugin_artifact_t *a,
                                hetc_plugin_buffer_t *const *args, int32_t nargs) {
  (void)inst, (void)nargs;
  if (a->behaviour == RUN_HANGS)
    for (;;) pause();
  if (a->behaviour == RUN_CRASHES) raise(SIGSEGV);
  if (a->behaviour == OK) maybe_killed_from_outside("run");
  const hetc_plugin_workload_t *w = &a->workload;
  const hetc_plugin_tensor_t *in = &w->inputs[0];
  int32_t n_in = w->num_inputs;
  const float *x = args[0]->data, *residual = w->epilogue.has_residual ? args[1]->data : NULL;
  const float *weight = args[n_in]->data, *bias = w->epilogue.has_bias ? args[n_in + 1]->data : NULL;
  float *y = args[n_in + a->info.num_params]->data;
  int64_t N = in->shape[0], C = in->shape[1], H = in->shape[2], W = in->shape[3];
  int64_t K = w->output.shape[1], OH = w->output.shape[2], OW = w->output.shape[3];
  int64_t cg = C / w->groups, kg = K / w->groups;
  for (int64_t n = 0; n < N; ++n)
    for (int64_t k = 0; k < K; ++k)
      for (int64_t oh = 0; oh < OH; ++oh)
        for (int64_t ow = 0; ow < OW; ++ow) {
          double acc = bias ? bias[k] : 0;
          int64_t g = k / kg;
          for (int64_t c = 0; c < cg; ++c)
            for (int64_t r = 0; r < w->kernel[0]; ++r)
              for (int64_t s = 0; s < w->kernel[1]; ++s) {
                int64_t ih = oh * w->strides[0] - w->padding[0] + r * w->dilation[0];
                int64_t iw = ow * w->strides[1] - w->padding[1] + s * w->dilation[1];
                if (ih < 0 || ih >= H || iw < 0 || iw >= W) continue;
                acc += (double)x[((n * C + g * cg + c) * H + ih) * W + iw] *
                       weight[((k * cg + c) * w->kernel[0] + r) * w->kernel[1] + s];
              }
          int64_t at = ((n * K + k) * OH + oh) * OW + ow;
          if (residual) acc += residual[at];
          y[at] = (float)activate(w->epilogue.activation, acc) + (a->behaviour == WRONG ? 1.0f : 0.0f);
        }
  return NULL;
}

static hetc_plugin_status_t time_runs(hetc_plugin_instance_t *inst, const hetc_plugin_artifact_t *a,
                                      hetc_plugin_buffer_t *const *args, int32_t nargs, int32_t number,
                                      int32_t repeat, double *out_seconds) {
  hetc_plugin_status_t s = run(inst, a, args, nargs);
  for (int32_t r = 0; r < repeat && !s; ++r) {
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (int32_t i = 0; i < number && !s; ++i) s = run(inst, a, args, nargs);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    out_seconds[r] = ((double)(t1.tv_sec - t0.tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0.tv_nsec)) / number;
  }
  return s;
}

static hetc_plugin_status_t features(const hetc_plugin_instance_t *inst, int32_t device,
                                     const hetc_plugin_workload_t *w, int32_t t, const hetc_plugin_config_t *config,
                                     float *out, int32_t capacity, int32_t *out_count) {
  (void)inst, (void)device, (void)w, (void)t, (void)config, (void)out, (void)capacity;
  *out_count = 0;
  return host->status_new(HETC_PLUGIN_STATUS_UNSUPPORTED, "fault: no features");
}
static hetc_plugin_status_t artifact_emit(hetc_plugin_instance_t *inst, const hetc_plugin_artifact_t *a,
                                          const char *dir, const char *prefix) {
  (void)inst, (void)a, (void)dir, (void)prefix;
  return NULL; /* nothing to write: load rebuilds */
}
static hetc_plugin_status_t artifact_load(hetc_plugin_instance_t *inst, int32_t device,
                                          const hetc_plugin_workload_t *w, int32_t t,
                                          const hetc_plugin_config_t *config, const char *dir, const char *prefix,
                                          hetc_plugin_artifact_t **out) {
  (void)dir, (void)prefix;
  return build(inst, device, w, t, config, out);
}

static const hetc_plugin_t table = {
    .header = {HETC_PLUGIN_ABI_MAJOR, HETC_PLUGIN_ABI_MINOR, sizeof(hetc_plugin_t), 0},
    .name = "fault",
    .vendor = "hetc tests",
    .version = "1.0.0",
    .description = "a conv2d template that fails on purpose, for the tuner's fault tests",
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
    .build = build,
    .artifact_release = artifact_release,
    .artifact_info = artifact_info,
    .pack_param = pack_param,
    .buffer_alloc = buffer_alloc,
    .buffer_free = buffer_free,
    .buffer_write = buffer_write,
    .buffer_read = buffer_read,
    .buffer_copy = NULL,
    .buffer_host_pointer = buffer_host_pointer,
    .run = run,
    .time = time_runs,
    .features = features,
    .artifact_emit = artifact_emit,
    .artifact_load = artifact_load,
};

HETC_PLUGIN_EXPORT const hetc_plugin_t *hetc_plugin_query(uint32_t host_major, uint32_t host_minor,
                                                           const hetc_plugin_host_t *host_table) {
  (void)host_minor;
  if (host_major != HETC_PLUGIN_ABI_MAJOR) return NULL;
  host = host_table;
  return &table;
}
