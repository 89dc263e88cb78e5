/* ResNet-50's conv2d layers at batch 1: a hetc target's kernels against
 * oneDNN's fp32 convolution measured in the same run, per layer and for the
 * whole network, with GFLOPS and the fraction of the machine's measured
 * peak. Two hetc columns: template 0 with its default config (what `hetc
 * compile` uses untuned), and with --search N the best of a random search
 * -- every template's default and N - 1 sampled valid configs, timed with 3
 * runs each, the winner re-timed and checked against the reference; or,
 * with --records STORE, the config `hetc compile --records STORE` would
 * take (tuned by `hetc tune`, else the nearest workload's, the cost model's
 * prediction or the default).
 *
 * oneDNN gets the same fused operation (bias, residual as a sum post-op,
 * relu as an eltwise post-op) and picks the layouts of source, weights and
 * destination itself (format_tag any); its operands are made in those
 * layouts before the timed region (the reorders a framework does once).
 * Each row names the implementation oneDNN picked and its three layouts
 * (e.g. "brgconv:avx512_core acdb/Acdb64a/acdb"). oneDNN is timed the way
 * it is meant to run: 2 warm-up runs wake its OpenMP team, which sleeps
 * while hetc runs, then back-to-back runs with the team pinned one thread
 * a CPU; a run in which a team thread waited for a CPU measured another
 * process, not oneDNN, and is dropped and run again (at most 10 x R runs
 * or 3 s; "kept/runs" says how many were kept, "!" marks a layer with
 * fewer than half kept, whose median is then of every run). Without that,
 * on a small shared machine a layer read 8.0 ms instead of 0.9: see
 * onednn_team_t. Ratio = oneDNN time / hetc time (> 1: hetc is faster);
 * the summary gives the geometric mean over the distinct layers and the
 * ratio of whole-network conv times (layers weighted by how often they
 * occur). The last line says how much CPU other processes took during the
 * run: hetc's columns are not guarded against them.
 *
 * --onednn-only times the oneDNN column alone, with no hetc kernel in the
 * process (no plugin is loaded), to check the yardstick against oneDNN on
 * its own: its per-layer times should match the oneDNN column's.
 *
 * With --baseline B, a third hetc column times target B's kernels in the
 * same run (the configs --baseline-records STORE gives it, else its
 * defaults) and every hetc column gets its ratio to B: B time / hetc time
 * (> 1: the target is faster than B), e.g. opencl on PoCL against cpu.
 *
 * "% of peak": of the CPU's measured FMA peak, except for a target (or
 * baseline) whose device 0 is a GPU with a peak in its descriptor
 * (hetc_plugin_device_t.peak_gflops_fp32): its columns use that peak, and
 * the header says so. --no-onednn leaves oneDNN out (no oneDNN or ratio
 * columns; e.g. a GPU target, where oneDNN's CPU time says nothing).
 *
 * usage: bench_conv_vs_onednn [--target T] [--threads N] [--repeat R] [--model PATH]
 *                             [--search N | --records STORE]
 *                             [--baseline B [--baseline-records STORE]] [--no-onednn]
 *        bench_conv_vs_onednn --onednn-only [--threads N] [--repeat R] [--model PATH] */
#include <dnnl.h>
#include <fcntl.h>
#include <math.h>
#include <omp.h>
#include <pthread.h>
#include <sched.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "compile/config_choice.h"
#include "graph/passes.h"
#include "graph/tasks.h"
#include "kernel_check.h"
#include "machine_peak.h"
#include "model/model.h"
#include "space/space.h"

#define DNNL_OK(expr)                                                                   \
  do {                                                                                  \
    dnnl_status_t s_ = (expr);                                                          \
    if (s_ != dnnl_success) {                                                           \
      fprintf(stderr, "bench: %s failed with oneDNN status %d\n", #expr, (int)s_);      \
      exit(1);                                                                          \
    }                                                                                   \
  } while (0)

static dnnl_engine_t engine;
static dnnl_stream_t stream;

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static int compare_doubles(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

static dnnl_memory_t memory_for(const dnnl_memory_desc_t *md) {
  dnnl_memory_t memory;
  DNNL_OK(dnnl_memory_create(&memory, md, engine, DNNL_MEMORY_ALLOCATE));
  void *data;
  DNNL_OK(dnnl_memory_get_data_handle(memory, &data));
  memset(data, 0, dnnl_memory_desc_get_size(md));
  float *f = data;
  size_t n = dnnl_memory_desc_get_size(md) / sizeof(float);
  for (size_t i = 0; i < n; ++i) f[i] = (float)((i * 2654435761u) % 1000) / 1000.0f - 0.5f;
  return memory;
}

/* oneDNN's OpenMP team as its timing sees it. On a machine with few cores
 * that other processes share (here a 2-vCPU VM), libgomp's team is fragile:
 * a thread that waits at a barrier spins about 300,000 times (~8 ms here)
 * before it sleeps, so whenever two team threads end up on one CPU -- a
 * woken worker placed on its waker's CPU, or another process holding the
 * other CPU -- every parallel region costs a whole spin: the waiting thread
 * holds the CPU the late one needs. A 0.9 ms layer then reads 8.0 ms, on
 * every one of the back-to-back runs, for as long as the other process
 * runs; hetc's own pool (driver/common/thread_pool.c, 200 us spin) slows
 * down in proportion instead. So the timing (1) pins team thread i to the
 * i-th CPU the process may use while oneDNN is timed (what OMP_PROC_BIND
 * does; the caller's mask is restored afterwards, so hetc's threads run as
 * before), and (2) reads, around every timed run, how long the team's
 * threads waited runnable for a CPU (/proc/self/task/TID/schedstat, field
 * 2): a run in which they waited more than 1% of its time (10 us at least)
 * measured the other process, not oneDNN, and is dropped and run again.
 * Measured with other processes taking 130% of one CPU: ResNet-50's oneDNN
 * convs read 307 ms unpinned (13 of 27 layers with fewer than half their
 * runs clean) and 36 ms pinned, as on an idle machine; on an idle machine
 * pinning changes nothing (35-37 ms either way). */
#define TEAM_MAX 256

typedef struct onednn_team_t {
  int size;               /* threads in the team */
  int pinned;             /* the process may use at least `size` CPUs */
  int cpu[TEAM_MAX];      /* thread i's CPU when pinned */
  int schedstat[TEAM_MAX]; /* thread i's /proc schedstat file, -1 if none */
  cpu_set_t caller_mask;  /* the main thread's own mask */
} onednn_team_t;

static onednn_team_t team;

/* Starts oneDNN's team (omp_set_num_threads(threads) done), opens its
 * threads' schedstat files and pins its workers; the caller is pinned only
 * while oneDNN is timed (pin_caller). */
static void team_start(int threads) {
  team.size = threads < TEAM_MAX ? threads : TEAM_MAX;
  if (pthread_getaffinity_np(pthread_self(), sizeof(team.caller_mask), &team.caller_mask)) CPU_ZERO(&team.caller_mask);
  int n = 0;
  for (int c = 0; c < CPU_SETSIZE && n < team.size; ++c)
    if (CPU_ISSET(c, &team.caller_mask)) team.cpu[n++] = c;
  team.pinned = n == team.size;
  for (int i = 0; i < TEAM_MAX; ++i) team.schedstat[i] = -1;
#pragma omp parallel num_threads(team.size)
  {
    const int i = omp_get_thread_num();
    char path[64];
    snprintf(path, sizeof(path), "/proc/self/task/%ld/schedstat", (long)syscall(SYS_gettid));
    team.schedstat[i] = open(path, O_RDONLY | O_CLOEXEC);
    if (team.pinned && i > 0) {
      cpu_set_t one;
      CPU_ZERO(&one);
      CPU_SET(team.cpu[i], &one);
      pthread_setaffinity_np(pthread_self(), sizeof(one), &one);
    }
  }
}

static void team_stop(void) {
  for (int i = 0; i < TEAM_MAX; ++i)
    if (team.schedstat[i] >= 0) close(team.schedstat[i]);
}

/* pin: the caller (team thread 0) onto its CPU; else back to its own mask. */
static void pin_caller(int pin) {
  if (!team.pinned) return;
  cpu_set_t one;
  CPU_ZERO(&one);
  CPU_SET(team.cpu[0], &one);
  pthread_setaffinity_np(pthread_self(), sizeof(cpu_set_t), pin ? &one : &team.caller_mask);
}

/* Seconds the team's threads have spent runnable, waiting for a CPU. */
static double team_waited(void) {
  double total = 0;
  for (int i = 0; i < team.size; ++i) {
    char text[128];
    ssize_t n = team.schedstat[i] >= 0 ? pread(team.schedstat[i], text, sizeof(text) - 1, 0) : -1;
    unsigned long long ran, waited;
    if (n <= 0) continue;
    text[n] = 0;
    if (sscanf(text, "%llu %llu", &ran, &waited) == 2) total += 1e-9 * (double)waited;
  }
  return total;
}

/* A memory descriptor's layout in oneDNN's notation ("aBcd16b": dims
 * outermost first by stride, upper case where blocked, then the blocks). */
static void layout_text(const dnnl_memory_desc_t *md, char *text, size_t size) {
  if (md->format_kind != dnnl_blocked) {
    snprintf(text, size, "format_kind %d", (int)md->format_kind);
    return;
  }
  const dnnl_blocking_desc_t *b = &md->format_desc.blocking;
  int order[DNNL_MAX_NDIMS], blocked[DNNL_MAX_NDIMS] = {0};
  for (int i = 0; i < b->inner_nblks; ++i) blocked[b->inner_idxs[i]] = 1;
  for (int i = 0; i < md->ndims; ++i) order[i] = i;
  for (int i = 1; i < md->ndims; ++i) /* by stride, outermost first; stable */
    for (int j = i; j > 0 && b->strides[order[j]] > b->strides[order[j - 1]]; --j) {
      int t = order[j];
      order[j] = order[j - 1];
      order[j - 1] = t;
    }
  size_t used = 0;
  for (int i = 0; i < md->ndims && used + 1 < size; ++i)
    text[used++] = (char)((blocked[order[i]] ? 'A' : 'a') + order[i]);
  text[used] = 0;
  for (int i = 0; i < b->inner_nblks && used < size; ++i)
    used += (size_t)snprintf(text + used, size - used, "%lld%c", (long long)b->inner_blks[i],
                             (char)('a' + b->inner_idxs[i]));
}

typedef struct onednn_result_t {
  double seconds; /* median of the kept runs (of every run when too few were kept) */
  int kept, tried;
  char impl[64];     /* the implementation oneDNN picked */
  char layouts[128]; /* src/weights/dst layouts it picked */
} onednn_result_t;

#define ONEDNN_WARM_RUNS 2
#define ONEDNN_MAX_TRIES_PER_REPEAT 10
#define ONEDNN_BUDGET_SECONDS 3.0

static int dirty(double seconds, double waited) { return waited > 10e-6 && waited > 0.01 * seconds; }

/* oneDNN's time for the fused conv, run the way it is meant to run: the
 * primitive and its operands in the layouts it chose, made and reordered
 * once; the team warmed and pinned; then back-to-back runs, the median of
 * `repeat` that no other thread got in the way of (team_waited), trying at
 * most 10 * repeat runs or 3 s. */
static void time_onednn(const hetc_plugin_workload_t *w, int repeat, onednn_result_t *out) {
  const hetc_plugin_tensor_t *in = &w->inputs[0];
  const int g = w->groups;
  dnnl_dims_t src = {in->shape[0], in->shape[1], in->shape[2], in->shape[3]};
  dnnl_dims_t dst = {w->output.shape[0], w->output.shape[1], w->output.shape[2], w->output.shape[3]};
  dnnl_dims_t bias = {w->output.shape[1]};
  dnnl_dims_t strides = {w->strides[0], w->strides[1]};
  dnnl_dims_t dilates = {w->dilation[0] - 1, w->dilation[1] - 1};
  dnnl_dims_t pad_l = {w->padding[0], w->padding[1]}, pad_r = {w->padding[2], w->padding[3]};
  dnnl_memory_desc_t src_md, dst_md, bias_md, wei_md;
  DNNL_OK(dnnl_memory_desc_init_by_tag(&src_md, 4, src, dnnl_f32, dnnl_format_tag_any));
  DNNL_OK(dnnl_memory_desc_init_by_tag(&dst_md, 4, dst, dnnl_f32, dnnl_format_tag_any));
  DNNL_OK(dnnl_memory_desc_init_by_tag(&bias_md, 1, bias, dnnl_f32, dnnl_x));
  if (g == 1) {
    dnnl_dims_t wei = {dst[1], src[1], w->kernel[0], w->kernel[1]};
    DNNL_OK(dnnl_memory_desc_init_by_tag(&wei_md, 4, wei, dnnl_f32, dnnl_format_tag_any));
  } else {
    dnnl_dims_t wei = {g, dst[1] / g, src[1] / g, w->kernel[0], w->kernel[1]};
    DNNL_OK(dnnl_memory_desc_init_by_tag(&wei_md, 5, wei, dnnl_f32, dnnl_format_tag_any));
  }
  dnnl_convolution_desc_t desc;
  DNNL_OK(dnnl_dilated_convolution_forward_desc_init(&desc, dnnl_forward_inference, dnnl_convolution_direct,
                                                     &src_md, &wei_md, w->epilogue.has_bias ? &bias_md : NULL,
                                                     &dst_md, strides, dilates, pad_l, pad_r));
  dnnl_post_ops_t post_ops;
  DNNL_OK(dnnl_post_ops_create(&post_ops));
  if (w->epilogue.has_residual) DNNL_OK(dnnl_post_ops_append_sum(post_ops, 1.0f));
  if (w->epilogue.activation == HETC_PLUGIN_ACT_RELU)
    DNNL_OK(dnnl_post_ops_append_eltwise(post_ops, 1.0f, dnnl_eltwise_relu, 0.0f, 0.0f));
  if (w->epilogue.activation == HETC_PLUGIN_ACT_RELU6)
    DNNL_OK(dnnl_post_ops_append_eltwise(post_ops, 1.0f, dnnl_eltwise_clip, 0.0f, 6.0f));
  dnnl_primitive_attr_t attr;
  DNNL_OK(dnnl_primitive_attr_create(&attr));
  DNNL_OK(dnnl_primitive_attr_set_post_ops(attr, post_ops));
  dnnl_primitive_desc_t pd;
  DNNL_OK(dnnl_primitive_desc_create(&pd, &desc, attr, engine, NULL));
  dnnl_primitive_t conv;
  DNNL_OK(dnnl_primitive_create(&conv, pd));
  const char *impl = NULL;
  DNNL_OK(dnnl_primitive_desc_query(pd, dnnl_query_impl_info_str, 0, &impl));
  snprintf(out->impl, sizeof(out->impl), "%s", impl ? impl : "?");
  /* Every operand in the layout the primitive chose: the reorders a
   * framework would do once, outside the timed region. */
  const dnnl_memory_desc_t *mds[3] = {dnnl_primitive_desc_query_md(pd, dnnl_query_src_md, 0),
                                      dnnl_primitive_desc_query_md(pd, dnnl_query_weights_md, 0),
                                      dnnl_primitive_desc_query_md(pd, dnnl_query_dst_md, 0)};
  size_t used = 0;
  for (int i = 0; i < 3 && used < sizeof(out->layouts); ++i) {
    char text[40];
    layout_text(mds[i], text, sizeof(text));
    used += (size_t)snprintf(out->layouts + used, sizeof(out->layouts) - used, "%s%s", i ? "/" : "", text);
  }
  dnnl_memory_t src_mem = memory_for(mds[0]);
  dnnl_memory_t wei_mem = memory_for(mds[1]);
  dnnl_memory_t dst_mem = memory_for(mds[2]);
  dnnl_memory_t bias_mem = w->epilogue.has_bias ? memory_for(&bias_md) : NULL;
  dnnl_exec_arg_t args[4] = {{DNNL_ARG_SRC, src_mem}, {DNNL_ARG_WEIGHTS, wei_mem}, {DNNL_ARG_DST, dst_mem},
                             {DNNL_ARG_BIAS, bias_mem}};
  int nargs = w->epilogue.has_bias ? 4 : 3;
  pin_caller(1);
  /* The team slept while hetc ran: wake it and let the first runs pay
   * for the wake-up and the cold caches. */
  for (int r = 0; r < ONEDNN_WARM_RUNS; ++r) {
    DNNL_OK(dnnl_primitive_execute(conv, stream, nargs, args));
    DNNL_OK(dnnl_stream_wait(stream));
  }
  const int max_tries = repeat * ONEDNN_MAX_TRIES_PER_REPEAT;
  double *kept = calloc((size_t)max_tries, sizeof(double)), *all = calloc((size_t)max_tries, sizeof(double));
  const double deadline = now() + ONEDNN_BUDGET_SECONDS;
  out->kept = out->tried = 0;
  while (out->kept < repeat && out->tried < max_tries && (out->tried < repeat || now() < deadline)) {
    const double waited = team_waited(), start = now();
    DNNL_OK(dnnl_primitive_execute(conv, stream, nargs, args));
    DNNL_OK(dnnl_stream_wait(stream));
    const double seconds = now() - start;
    all[out->tried++] = seconds;
    if (!dirty(seconds, team_waited() - waited)) kept[out->kept++] = seconds;
  }
  pin_caller(0);
  double *samples = out->kept >= (repeat + 1) / 2 ? kept : all;
  const int count = samples == kept ? out->kept : out->tried;
  qsort(samples, (size_t)count, sizeof(double), compare_doubles);
  out->seconds = samples[count / 2];
  free(kept);
  free(all);
  dnnl_memory_destroy(src_mem);
  dnnl_memory_destroy(wei_mem);
  dnnl_memory_destroy(dst_mem);
  if (bias_mem) dnnl_memory_destroy(bias_mem);
  dnnl_primitive_destroy(conv);
  dnnl_primitive_desc_destroy(pd);
  dnnl_primitive_attr_destroy(attr);
  dnnl_post_ops_destroy(post_ops);
}

/* The CPU's measured FMA peak over `threads` threads, measured once. */
static double cpu_peak(int threads) {
  static double peak = 0;
  if (peak <= 0) peak = machine_peak_gflops(threads);
  return peak;
}

/* The peak that "% of peak" divides by for entry's kernels: device 0's
 * descriptor peak when that device is a GPU that gives one (sets *gpu),
 * else the CPU's measured peak. */
static double target_peak(const hetc_plugin_entry_t *entry, int threads, const hetc_plugin_device_t **gpu) {
  const hetc_plugin_device_t *device =
      entry->plugin->device_count(entry->instance) > 0 ? entry->plugin->device_get(entry->instance, 0) : NULL;
  *gpu = NULL;
  if (device && device->struct_size >= offsetof(hetc_plugin_device_t, peak_gflops_fp32) + sizeof(double) &&
      device->kind == HETC_PLUGIN_DEVICE_GPU && device->peak_gflops_fp32 > 0) {
    *gpu = device;
    return device->peak_gflops_fp32;
  }
  return cpu_peak(threads);
}

#define SEARCH_FINALISTS 3

typedef struct candidate_t {
  double seconds;
  int32_t template_index;
  int64_t config_index;
} candidate_t;

typedef struct search_result_t {
  candidate_t finalists[SEARCH_FINALISTS]; /* fastest first; seconds < 0: unused */
  int tried;
} search_result_t;

static void keep_if_faster(search_result_t *r, candidate_t c) {
  for (int i = 0; i < SEARCH_FINALISTS; ++i) {
    if (r->finalists[i].seconds >= 0 && r->finalists[i].seconds <= c.seconds) continue;
    for (int j = SEARCH_FINALISTS - 1; j > i; --j) r->finalists[j] = r->finalists[j - 1];
    r->finalists[i] = c;
    return;
  }
}

/* The fastest few of every template's default and n - 1 sampled configs,
 * timed with 3 runs each (the caller re-times the finalists: on a shared
 * machine a 3-run median alone picks noise). */
static hetc_status_t search(hetc_plugin_entry_t *entry, const hetc_plugin_workload_t *w, int n,
                            search_result_t *best) {
  const hetc_plugin_t *p = entry->plugin;
  uint64_t rng = 0x5ea4c4;
  memset(best, 0, sizeof(*best));
  for (int i = 0; i < SEARCH_FINALISTS; ++i) best->finalists[i].seconds = -1;
  for (int32_t t = 0; t < p->template_count(entry->instance, 0, w); ++t) {
    hetc_plugin_space_t *space = NULL;
    HETC_RETURN_IF_ERROR(hetc_space_create(&space));
    hetc_status_t status = p->template_define_space(entry->instance, 0, w, t, space);
    int64_t tried[256];
    int num_tried = 0;
    for (int k = 0; !status && k < n && k < 256; ++k) {
      int64_t index = 0;
      status = k == 0 ? hetc_space_default(space, &index) : hetc_space_sample_valid(space, &rng, &index);
      int seen = 0;
      for (int j = 0; j < num_tried; ++j) seen |= tried[j] == index;
      if (status || seen) continue;
      tried[num_tried++] = index;
      hetc_space_config_t config;
      kernel_check_result_t result;
      status = hetc_space_config_at(space, index, &config);
      if (!status) status = hetc_kernel_check_time(entry, w, t, &config.view, 3, &result);
      if (!status) keep_if_faster(best, (candidate_t){result.seconds, t, index});
      ++best->tried;
    }
    hetc_space_free(space);
    if (status) return status;
  }
  return NULL;
}

/* Re-times and checks config `index` of template t; `text` gets its knobs. */
static hetc_status_t run_config(hetc_plugin_entry_t *entry, const hetc_plugin_workload_t *w, int32_t t,
                                int64_t index, int repeat, kernel_check_result_t *out, char *text, size_t size) {
  hetc_plugin_space_t *space = NULL;
  hetc_space_config_t config;
  HETC_RETURN_IF_ERROR(hetc_space_create(&space));
  hetc_status_t status = entry->plugin->template_define_space(entry->instance, 0, w, t, space);
  if (!status) status = hetc_space_config_at(space, index, &config);
  if (!status) status = hetc_kernel_check_run(entry, w, t, &config.view, 1, repeat, out);
  size_t used = 0;
  text[0] = 0;
  for (int32_t k = 0; !status && k < config.view.num_knobs && used < size; ++k)
    used += (size_t)snprintf(text + used, size - used, "%s%s=%lld", k ? " " : "", config.view.knobs[k].name,
                             (long long)config.view.knobs[k].values[0]);
  hetc_space_free(space);
  return status;
}

/* Times (and checks) the config `hetc compile --records` would take for w
 * on entry's device: from the chooser, or template 0's default without
 * one. `knobs` gets "(source) knob=value ...". */
static hetc_status_t run_chosen(hetc_plugin_entry_t *entry, hetc_config_chooser_t *chooser,
                                const hetc_plugin_workload_t *w, int repeat, kernel_check_result_t *out,
                                int32_t *out_template, char *knobs, size_t size) {
  hetc_config_json_t config;
  hetc_config_source_t source = HETC_CONFIG_DEFAULT;
  *out_template = 0;
  hetc_status_t status =
      chooser ? hetc_config_choose(chooser, entry->plugin, entry->instance, 0, w, out_template, &config, &source)
              : NULL;
  if (!status && source != HETC_CONFIG_DEFAULT)
    status = hetc_kernel_check_run(entry, w, *out_template, &config.config, 1, repeat, out);
  else if (!status)
    status = hetc_kernel_check_run_default(entry, w, 0, 1, repeat, out);
  size_t used = (size_t)snprintf(knobs, size, "(%s)", hetc_config_source_name(source));
  for (int32_t k = 0; !status && source != HETC_CONFIG_DEFAULT && k < config.config.num_knobs && used < size; ++k)
    used += (size_t)snprintf(knobs + used, size - used, " %s=%lld", config.config.knobs[k].name,
                             (long long)config.config.knobs[k].values[0]);
  if (chooser && source != HETC_CONFIG_DEFAULT) hetc_config_json_free(&config);
  return status;
}

/* CPU seconds the machine spent busy over all CPUs and stolen by the host
 * (/proc/stat), and this process's own. */
typedef struct cpu_use_t {
  double busy, stolen, own, wall;
} cpu_use_t;

static cpu_use_t cpu_use(void) {
  cpu_use_t u = {0, 0, 0, now()};
  unsigned long long v[8];
  FILE *f = fopen("/proc/stat", "r");
  if (f && fscanf(f, "cpu %llu %llu %llu %llu %llu %llu %llu %llu", &v[0], &v[1], &v[2], &v[3], &v[4], &v[5],
                  &v[6], &v[7]) == 8) {
    const double hz = (double)sysconf(_SC_CLK_TCK);
    u.busy = (double)(v[0] + v[1] + v[2] + v[5] + v[6]) / hz; /* user nice system irq softirq */
    u.stolen = (double)v[7] / hz;
  }
  if (f) fclose(f);
  struct rusage r;
  if (!getrusage(RUSAGE_SELF, &r))
    u.own = (double)(r.ru_utime.tv_sec + r.ru_stime.tv_sec) + 1e-6 * (double)(r.ru_utime.tv_usec + r.ru_stime.tv_usec);
  return u;
}

/* What else ran while this did: the oneDNN column is guarded against it
 * (kept/tried), hetc's columns are not. */
static void print_other_load(cpu_use_t start, int hetc_columns) {
  const cpu_use_t end = cpu_use();
  const double others = end.busy - start.busy - (end.own - start.own), wall = end.wall - start.wall;
  printf("other processes used %.1f CPU-s in the %.1f s this ran (%.0f%% of one CPU), the host stole %.1f CPU-s%s\n",
         others > 0 ? others : 0, wall, others > 0 ? 100 * others / wall : 0, end.stolen - start.stolen,
         hetc_columns ? "; hetc's columns are not guarded against them: rerun if that is high" : "");
}

#define ONEDNN_HEADER " %9s %6s %6s %9s  %s"
#define ONEDNN_HEADER_ARGS "oneDNN", "GFLOPS", "%peak", "kept/runs", "oneDNN implementation, src/weights/dst layouts"

/* A layer's oneDNN cells; '!': fewer than half the runs were kept, the
 * time is the median of them all. */
static void print_onednn(const onednn_result_t *r, double flops, double peak, int repeat) {
  const double g = flops / r->seconds / 1e9;
  printf(" %8.3f%c %6.1f %5.1f%% %5d/%-3d  %s %s", r->seconds * 1e3, r->kept < (repeat + 1) / 2 ? '!' : ' ', g,
         100 * g / peak, r->kept, r->tried, r->impl, r->layouts);
}

static void print_onednn_footer(int runs_dropped, int layers_marked, int repeat) {
  printf("oneDNN: %d warm-up runs per layer, then back-to-back runs with its team %s; %d runs dropped because a "
         "team thread waited for a CPU, %d layers marked ! (fewer than %d of %d runs kept: their median is of every "
         "run)\n",
         ONEDNN_WARM_RUNS, team.pinned ? "pinned one thread a CPU" : "not pinned (fewer CPUs than threads)",
         runs_dropped, layers_marked, (repeat + 1) / 2, repeat);
}

/* --onednn-only: the oneDNN column alone, no hetc kernel in the process (no
 * plugin is loaded), to check the yardstick against oneDNN on its own. */
static int run_onednn_only(const hetc_graph_t *graph, const hetc_task_list_t *tasks, int threads, int repeat,
                           cpu_use_t start) {
  const dnnl_version_t *version = dnnl_version();
  const double peak = cpu_peak(threads);
  printf("machine peak (measured %s FMA loop, %d thread%s): %.1f GFLOPS fp32\n", machine_peak_isa(), threads,
         threads > 1 ? "s" : "", peak);
  printf("%s conv2d layers: oneDNN %d.%d.%d alone (no hetc kernel in the process), %d threads, median of %d runs\n\n",
         graph->name, version->major, version->minor, version->patch, threads, repeat);
  printf("%-3s %-3s %-46s %7s |" ONEDNN_HEADER "\n", "#", "x", "layer", "MFLOP", ONEDNN_HEADER_ARGS);
  double total = 0, total_flops = 0;
  int layers = 0, dropped = 0, marked = 0;
  for (int32_t t = 0; t < tasks->count; ++t) {
    const hetc_task_t *task = &tasks->tasks[t];
    if (task->op != HETC_OP_CONV2D) continue;
    hetc_plugin_tensor_t inputs[HETC_MAX_NODE_INPUTS];
    hetc_plugin_workload_t w;
    hetc_status_t status = hetc_graph_node_workload(graph, task->first_node, inputs, &w);
    if (status) {
      fprintf(stderr, "bench: task %d: %s\n", t + 1, hetc_status_message(status));
      return 1;
    }
    onednn_result_t r;
    time_onednn(&w, repeat, &r);
    printf("%-3d %-3d %-46.46s %7.1f |", t + 1, task->count, task->key + strlen("conv2d "), task->flops / 1e6);
    print_onednn(&r, task->flops, peak, repeat);
    printf("\n");
    dropped += r.tried - r.kept;
    marked += r.kept < (repeat + 1) / 2;
    layers += task->count;
    total += r.seconds * task->count;
    total_flops += task->flops * task->count;
  }
  printf("\nwhole network (%d conv layers, %.2f GFLOP): oneDNN %.1f ms (%.1f GFLOPS, %.1f%% of peak)\n", layers,
         total_flops / 1e9, total * 1e3, total_flops / total / 1e9, 100 * total_flops / total / 1e9 / peak);
  print_onednn_footer(dropped, marked, repeat);
  print_other_load(start, 0);
  return 0;
}

int main(int argc, char **argv) {
  const char *model_path = NULL, *target = "cpu";
  int repeat = 9, threads = (int)sysconf(_SC_NPROCESSORS_ONLN), search_n = 0;
  const char *records = NULL, *baseline = NULL, *baseline_records = NULL;
  int with_onednn = 1, onednn_only = 0;
  const cpu_use_t start = cpu_use();
  for (int i = 1; i < argc; ++i) {
    if (!strcmp(argv[i], "--threads") && i + 1 < argc) threads = atoi(argv[++i]);
    else if (!strcmp(argv[i], "--repeat") && i + 1 < argc) repeat = atoi(argv[++i]);
    else if (!strcmp(argv[i], "--model") && i + 1 < argc) model_path = argv[++i];
    else if (!strcmp(argv[i], "--target") && i + 1 < argc) target = argv[++i];
    else if (!strcmp(argv[i], "--search") && i + 1 < argc) search_n = atoi(argv[++i]);
    else if (!strcmp(argv[i], "--records") && i + 1 < argc) records = argv[++i];
    else if (!strcmp(argv[i], "--baseline") && i + 1 < argc) baseline = argv[++i];
    else if (!strcmp(argv[i], "--baseline-records") && i + 1 < argc) baseline_records = argv[++i];
    else if (!strcmp(argv[i], "--no-onednn")) with_onednn = 0;
    else if (!strcmp(argv[i], "--onednn-only")) onednn_only = 1;
    else search_n = -1;
  }
  if (search_n < 0 || (search_n > 0 && records) || (baseline_records && !baseline) || repeat < 1 ||
      (onednn_only && (!with_onednn || search_n || records || baseline))) {
    fprintf(stderr,
            "usage: %s [--target T] [--threads N] [--repeat R] [--model PATH] [--search N | --records STORE]\n"
            "          [--baseline B [--baseline-records STORE]] [--no-onednn]\n"
            "       %s --onednn-only [--threads N] [--repeat R] [--model PATH]\n",
            argv[0], argv[0]);
    return 2;
  }
  /* The second hetc column: searched here, or chosen from the records. */
  const char *second = search_n > 0 ? "searched" : records ? "tuned" : NULL;
  char default_model[4096];
  if (!model_path) {
    snprintf(default_model, sizeof(default_model), "%s/samples/resnet50.json", HETC_SOURCE_DIR_DEFAULT);
    model_path = default_model;
  }
  char threads_text[16];
  snprintf(threads_text, sizeof(threads_text), "%d", threads);
  setenv("HETC_NUM_THREADS", threads_text, 1);
  omp_set_num_threads(threads); /* oneDNN's OpenMP runtime */
  if (with_onednn) {
    DNNL_OK(dnnl_engine_create(&engine, dnnl_cpu, 0));
    DNNL_OK(dnnl_stream_create(&stream, engine, dnnl_stream_default_flags));
    team_start(threads);
  }
  const dnnl_version_t *version = dnnl_version();

  /* Without oneDNN the CPU's peak is measured only if a column needs it. */
  if (with_onednn) cpu_peak(threads);
  hetc_graph_t *graph = NULL;
  hetc_task_list_t *tasks = NULL;
  hetc_registry_t *registry = NULL;
  hetc_plugin_entry_t *entry = NULL;
  hetc_config_chooser_t *chooser = NULL, *baseline_chooser = NULL;
  hetc_plugin_entry_t *base = NULL;
  hetc_status_t status = hetc_model_load_file(model_path, &graph);
  if (!status && records) status = hetc_config_chooser_open(records, &chooser);
  if (!status) status = hetc_graph_optimize(graph);
  if (!status) status = hetc_graph_extract_tasks(graph, &tasks);
  if (!status && onednn_only) {
    int rc = run_onednn_only(graph, tasks, threads, repeat, start);
    hetc_task_list_free(tasks);
    hetc_graph_free(graph);
    team_stop();
    dnnl_stream_destroy(stream);
    dnnl_engine_destroy(engine);
    return rc;
  }
  if (!status) status = hetc_registry_open(&registry);
  if (!status) status = hetc_registry_target(registry, target, &entry);
  if (!status && baseline) status = hetc_registry_target(registry, baseline, &base);
  if (!status && baseline_records) status = hetc_config_chooser_open(baseline_records, &baseline_chooser);
  if (status) {
    fprintf(stderr, "bench: %s\n", hetc_status_message(status));
    return 1;
  }
  /* peak: the target's columns; base_peak: the baseline's; onednn_peak:
   * oneDNN's (the CPU). */
  const hetc_plugin_device_t *gpu = NULL, *base_gpu = NULL;
  const double peak = target_peak(entry, threads, &gpu);
  const double base_peak = base ? target_peak(base, threads, &base_gpu) : peak;
  const double onednn_peak = with_onednn ? cpu_peak(threads) : 0;
  if (with_onednn || !gpu || (base && !base_gpu))
    printf("machine peak (measured FMA loop, %d thread%s): %.1f GFLOPS fp32\n", threads, threads > 1 ? "s" : "",
           cpu_peak(threads));
  if (gpu)
    printf("device peak (target '%s' device 0 descriptor, %s): %.1f GFLOPS fp32; the %s columns' %%peak use it\n",
           target, gpu->name ? gpu->name : "GPU", peak, target);
  if (base_gpu)
    printf("device peak (baseline '%s' device 0 descriptor, %s): %.1f GFLOPS fp32; the %s columns' %%peak use it\n",
           baseline, base_gpu->name ? base_gpu->name : "GPU", base_peak, baseline);
  if (with_onednn)
    printf("%s conv2d layers: hetc target '%s' vs oneDNN %d.%d.%d, %d threads, median of %d runs\n", graph->name,
           target, version->major, version->minor, version->patch, threads, repeat);
  else
    printf("%s conv2d layers: hetc target '%s' (oneDNN left out), %d threads, median of %d runs\n", graph->name,
           target, threads, repeat);
  printf("default: template 0, default config");
  if (search_n > 0) printf("; searched: best of every template's default and %d sampled configs", search_n - 1);
  if (records) printf("; tuned: the config hetc compile --records %s takes", records);
  if (baseline)
    printf("; baseline: target '%s' with %s; vs %s: %s time / hetc time", baseline,
           baseline_records ? "the configs its records give" : "its defaults", baseline, baseline);
  printf(with_onednn ? "; ratio: oneDNN time / hetc time\n\n" : "\n\n");
  printf("%-3s %-3s %-46s %7s | %-18s %8s %6s %6s", "#", "x", "layer", "MFLOP", "default template", "ms", "GFLOPS",
         "%peak");
  printf(with_onednn ? " %6s |" : "%s |", with_onednn ? "ratio" : "");
  if (second) {
    printf(" %-20s %8s %6s %6s", search_n > 0 ? "searched template" : "tuned template", "ms", "GFLOPS", "%peak");
    printf(with_onednn ? " %6s |" : "%s |", with_onednn ? "ratio" : "");
  }
  if (baseline) printf(" %-18s %8s %6s |", baseline, "ms", "GFLOPS");
  for (int k = 0; baseline && k < 1 + (second != NULL); ++k) printf(" vs %-4.4s%s", baseline, k ? "" : "(dflt)");
  if (baseline) printf(" |");
  if (with_onednn) printf(ONEDNN_HEADER, ONEDNN_HEADER_ARGS);
  printf("\n");
  double log_ratio[2] = {0, 0}, total[2] = {0, 0}, total_onednn = 0, total_flops = 0, worst = 0;
  double total_base = 0, log_base_ratio[2] = {0, 0};
  int layers = 0, distinct = 0, tried = 0, onednn_dropped = 0, onednn_marked = 0;
  for (int32_t t = 0; t < tasks->count; ++t) {
    const hetc_task_t *task = &tasks->tasks[t];
    if (task->op != HETC_OP_CONV2D) continue;
    hetc_plugin_tensor_t inputs[HETC_MAX_NODE_INPUTS];
    hetc_plugin_workload_t w;
    kernel_check_result_t result[2];
    memset(result, 0, sizeof(result));
    search_result_t best;
    memset(&best, 0, sizeof(best));
    int32_t best_template = 0;
    char knobs[256] = "default", candidate_knobs[256];
    status = hetc_graph_node_workload(graph, task->first_node, inputs, &w);
    if (!status) status = hetc_kernel_check_run_default(entry, &w, 0, 1, repeat, &result[0]);
    if (!status && search_n > 0) status = search(entry, &w, search_n, &best);
    /* Searched: the finalists re-timed with every run, and the default. */
    if (!status && search_n > 0) result[1] = result[0];
    if (!status && records) status = run_chosen(entry, chooser, &w, repeat, &result[1], &best_template, knobs, sizeof(knobs));
    for (int f = 0; !status && search_n > 0 && f < SEARCH_FINALISTS; ++f) {
      const candidate_t *c = &best.finalists[f];
      kernel_check_result_t r;
      if (c->seconds < 0) break;
      status = run_config(entry, &w, c->template_index, c->config_index, repeat, &r, candidate_knobs,
                          sizeof(candidate_knobs));
      if (!status && r.seconds < result[1].seconds) {
        result[1] = r;
        best_template = c->template_index;
        snprintf(knobs, sizeof(knobs), "%s", candidate_knobs);
      }
    }
    if (status) {
      fprintf(stderr, "bench: task %d: %s\n", t + 1, hetc_status_message(status));
      return 1;
    }
    kernel_check_result_t base_result;
    int32_t base_template = 0;
    char base_knobs[256] = "";
    if (base) {
      status = run_chosen(base, baseline_chooser, &w, repeat, &base_result, &base_template, base_knobs,
                          sizeof(base_knobs));
      if (status) {
        fprintf(stderr, "bench: task %d on %s: %s\n", t + 1, baseline, hetc_status_message(status));
        return 1;
      }
      if (base_result.max_relative_error > worst) worst = base_result.max_relative_error;
    }
    tried += best.tried;
    onednn_result_t onednn_result;
    if (with_onednn) time_onednn(&w, repeat, &onednn_result);
    double onednn = with_onednn ? onednn_result.seconds : 0;
    printf("%-3d %-3d %-46.46s %7.1f |", t + 1, task->count, task->key + strlen("conv2d "), task->flops / 1e6);
    for (int k = 0; k < 1 + (second != NULL); ++k) {
      const char *name = entry->plugin->template_name(entry->instance, 0, &w, k ? best_template : 0);
      double g = task->flops / result[k].seconds / 1e9;
      printf(" %-*.*s %8.3f %6.1f %5.1f%%", k ? 20 : 18, k ? 20 : 18, name + (strncmp(name, "cpu_", 4) ? 0 : 4),
             result[k].seconds * 1e3, g, 100 * g / peak);
      if (with_onednn) printf(" %5.2fx |", onednn / result[k].seconds);
      else printf(" |");
      if (with_onednn) log_ratio[k] += log(onednn / result[k].seconds);
      total[k] += result[k].seconds * task->count;
      if (result[k].max_relative_error > worst) worst = result[k].max_relative_error;
    }
    if (base) {
      const char *name = base->plugin->template_name(base->instance, 0, &w, base_template);
      printf(" %-18.18s %8.3f %6.1f |", name, base_result.seconds * 1e3, task->flops / base_result.seconds / 1e9);
      for (int k = 0; k < 1 + (second != NULL); ++k) {
        printf(" %9.2fx", base_result.seconds / result[k].seconds);
        log_base_ratio[k] += log(base_result.seconds / result[k].seconds);
      }
      printf(" |");
      total_base += base_result.seconds * task->count;
    }
    if (with_onednn) {
      print_onednn(&onednn_result, task->flops, onednn_peak, repeat);
      onednn_dropped += onednn_result.tried - onednn_result.kept;
      onednn_marked += onednn_result.kept < (repeat + 1) / 2;
    }
    printf("\n");
    if (second) printf("    %s config: %s\n", second, knobs);
    if (base && baseline_records) printf("    %s config: %s\n", baseline, base_knobs);
    ++distinct;
    layers += task->count;
    total_onednn += onednn * task->count;
    total_flops += task->flops * task->count;
  }
  if (with_onednn)
    printf("\nwhole network (%d conv layers, %.2f GFLOP): oneDNN %.1f ms (%.1f GFLOPS, %.1f%% of peak)\n", layers,
           total_flops / 1e9, total_onednn * 1e3, total_flops / total_onednn / 1e9,
           100 * total_flops / total_onednn / 1e9 / onednn_peak);
  else
    printf("\nwhole network (%d conv layers, %.2f GFLOP)\n", layers, total_flops / 1e9);
  for (int k = 0; k < 1 + (second != NULL); ++k) {
    if (with_onednn)
      printf("hetc %-8s: %.1f ms (%.1f GFLOPS, %.1f%% of peak); ratio to oneDNN: geometric mean over %d layers %.3f, "
             "whole network %.3f\n",
             k ? second : "default", total[k] * 1e3, total_flops / total[k] / 1e9,
             100 * total_flops / total[k] / 1e9 / peak, distinct, exp(log_ratio[k] / distinct),
             total_onednn / total[k]);
    else
      printf("hetc %-8s: %.1f ms (%.1f GFLOPS, %.1f%% of peak)\n", k ? second : "default", total[k] * 1e3,
             total_flops / total[k] / 1e9, 100 * total_flops / total[k] / 1e9 / peak);
  }
  if (base) {
    printf("baseline %s: %.1f ms (%.1f GFLOPS, %.1f%% of peak)\n", baseline, total_base * 1e3,
           total_flops / total_base / 1e9, 100 * total_flops / total_base / 1e9 / base_peak);
    for (int k = 0; k < 1 + (second != NULL); ++k)
      printf("hetc %-8s vs %s (%s time / %s time): geometric mean over %d layers %.3f, whole network %.3f\n",
             k ? second : "default", baseline, baseline, target, distinct, exp(log_base_ratio[k] / distinct),
             total_base / total[k]);
  }
  if (search_n > 0) printf("search: %d configs timed\n", tried);
  printf("every hetc kernel checked against the reference: worst max relative error %.2e\n", worst);
  if (with_onednn) print_onednn_footer(onednn_dropped, onednn_marked, repeat);
  print_other_load(start, 1);
  hetc_config_chooser_free(chooser);
  hetc_config_chooser_free(baseline_chooser);
  hetc_task_list_free(tasks);
  hetc_registry_free(registry);
  hetc_graph_free(graph);
  if (with_onednn) {
    team_stop();
    dnnl_stream_destroy(stream);
    dnnl_engine_destroy(engine);
  }
  return 0;
}
