/* ResNet-50's conv2d layers at batch 1: a hetc target's kernels (template
 * 0, default config; tuned configs once the tuner exists) against oneDNN's
 * fp32 convolution measured in the same run, per layer and for the whole
 * network, with GFLOPS and the fraction of the machine's measured peak.
 *
 * oneDNN gets the same fused operation (bias, residual as a sum post-op,
 * relu as an eltwise post-op), its preferred layouts (format_tag any), and
 * its weights and input reordered outside the timed region. Ratio =
 * oneDNN time / hetc time (> 1: hetc is faster); the summary gives the
 * geometric mean over the distinct layers and the ratio of whole-network
 * conv times (layers weighted by how often they occur).
 *
 * usage: bench_conv_vs_onednn [--target T] [--threads N] [--repeat R] [--model PATH] */
#include <dnnl.h>
#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "graph/passes.h"
#include "graph/tasks.h"
#include "kernel_check.h"
#include "machine_peak.h"
#include "model/model.h"

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

/* Median seconds of one oneDNN execution of the fused conv. */
static double time_onednn(const hetc_plugin_workload_t *w, int repeat) {
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
  /* Every operand in the layout the primitive chose: the reorders a
   * framework would do once, outside the timed region. */
  dnnl_memory_t src_mem = memory_for(dnnl_primitive_desc_query_md(pd, dnnl_query_src_md, 0));
  dnnl_memory_t wei_mem = memory_for(dnnl_primitive_desc_query_md(pd, dnnl_query_weights_md, 0));
  dnnl_memory_t dst_mem = memory_for(dnnl_primitive_desc_query_md(pd, dnnl_query_dst_md, 0));
  dnnl_memory_t bias_mem = w->epilogue.has_bias ? memory_for(&bias_md) : NULL;
  dnnl_exec_arg_t args[4] = {{DNNL_ARG_SRC, src_mem}, {DNNL_ARG_WEIGHTS, wei_mem}, {DNNL_ARG_DST, dst_mem},
                             {DNNL_ARG_BIAS, bias_mem}};
  int nargs = w->epilogue.has_bias ? 4 : 3;
  DNNL_OK(dnnl_primitive_execute(conv, stream, nargs, args));
  DNNL_OK(dnnl_stream_wait(stream));
  double *samples = calloc((size_t)repeat, sizeof(double));
  for (int r = 0; r < repeat; ++r) {
    double start = now();
    DNNL_OK(dnnl_primitive_execute(conv, stream, nargs, args));
    DNNL_OK(dnnl_stream_wait(stream));
    samples[r] = now() - start;
  }
  qsort(samples, (size_t)repeat, sizeof(double), compare_doubles);
  double median = samples[repeat / 2];
  free(samples);
  dnnl_memory_destroy(src_mem);
  dnnl_memory_destroy(wei_mem);
  dnnl_memory_destroy(dst_mem);
  if (bias_mem) dnnl_memory_destroy(bias_mem);
  dnnl_primitive_destroy(conv);
  dnnl_primitive_desc_destroy(pd);
  dnnl_primitive_attr_destroy(attr);
  dnnl_post_ops_destroy(post_ops);
  return median;
}

int main(int argc, char **argv) {
  const char *model_path = NULL, *target = "cpu";
  int repeat = 9, threads = (int)sysconf(_SC_NPROCESSORS_ONLN);
  for (int i = 1; i < argc; ++i) {
    if (!strcmp(argv[i], "--threads") && i + 1 < argc) threads = atoi(argv[++i]);
    else if (!strcmp(argv[i], "--repeat") && i + 1 < argc) repeat = atoi(argv[++i]);
    else if (!strcmp(argv[i], "--model") && i + 1 < argc) model_path = argv[++i];
    else if (!strcmp(argv[i], "--target") && i + 1 < argc) target = argv[++i];
    else {
      fprintf(stderr, "usage: %s [--target T] [--threads N] [--repeat R] [--model PATH]\n", argv[0]);
      return 2;
    }
  }
  char default_model[4096];
  if (!model_path) {
    snprintf(default_model, sizeof(default_model), "%s/samples/resnet50.json", HETC_SOURCE_DIR_DEFAULT);
    model_path = default_model;
  }
  char threads_text[16];
  snprintf(threads_text, sizeof(threads_text), "%d", threads);
  setenv("HETC_NUM_THREADS", threads_text, 1);
  omp_set_num_threads(threads); /* oneDNN's OpenMP runtime */
  DNNL_OK(dnnl_engine_create(&engine, dnnl_cpu, 0));
  DNNL_OK(dnnl_stream_create(&stream, engine, dnnl_stream_default_flags));
  const dnnl_version_t *version = dnnl_version();

  double peak = machine_peak_gflops(threads);
  hetc_graph_t *graph = NULL;
  hetc_task_list_t *tasks = NULL;
  hetc_registry_t *registry = NULL;
  hetc_plugin_entry_t *entry = NULL;
  hetc_status_t status = hetc_model_load_file(model_path, &graph);
  if (!status) status = hetc_graph_optimize(graph);
  if (!status) status = hetc_graph_extract_tasks(graph, &tasks);
  if (!status) status = hetc_registry_open(&registry);
  if (!status) status = hetc_registry_target(registry, target, &entry);
  if (status) {
    fprintf(stderr, "bench: %s\n", hetc_status_message(status));
    return 1;
  }
  printf("machine peak (measured FMA loop, %d thread%s): %.1f GFLOPS fp32\n", threads, threads > 1 ? "s" : "", peak);
  printf("%s conv2d layers: hetc target '%s' (template 0, default config) vs oneDNN %d.%d.%d, %d threads, "
         "median of %d runs\n\n",
         graph->name, target, version->major, version->minor, version->patch, threads, repeat);
  printf("%-3s %-3s %-50s %7s | %-20s %8s %6s %6s | %8s %6s %6s | %6s\n", "#", "x", "layer", "MFLOP", "hetc template",
         "ms", "GFLOPS", "%peak", "oneDNN", "GFLOPS", "%peak", "ratio");
  double log_ratio_sum = 0, total_hetc = 0, total_onednn = 0, total_flops = 0, worst = 0;
  int layers = 0, distinct = 0;
  for (int32_t t = 0; t < tasks->count; ++t) {
    const hetc_task_t *task = &tasks->tasks[t];
    if (task->op != HETC_OP_CONV2D) continue;
    hetc_plugin_tensor_t inputs[HETC_MAX_NODE_INPUTS];
    hetc_plugin_workload_t w;
    kernel_check_result_t result = {0};
    status = hetc_graph_node_workload(graph, task->first_node, inputs, &w);
    const char *template_name = status ? "" : entry->plugin->template_name(entry->instance, 0, &w, 0);
    if (!status) status = kernel_check_run_default(entry, &w, 0, 1, repeat, &result);
    if (status) {
      fprintf(stderr, "bench: task %d: %s\n", t + 1, hetc_status_message(status));
      return 1;
    }
    double onednn = time_onednn(&w, repeat);
    double g_hetc = task->flops / result.seconds / 1e9, g_onednn = task->flops / onednn / 1e9;
    double ratio = onednn / result.seconds;
    printf("%-3d %-3d %-50.50s %7.1f | %-20.20s %8.3f %6.1f %5.1f%% | %8.3f %6.1f %5.1f%% | %5.2fx\n", t + 1,
           task->count, task->key + strlen("conv2d "), task->flops / 1e6, template_name, result.seconds * 1e3, g_hetc,
           100 * g_hetc / peak, onednn * 1e3, g_onednn, 100 * g_onednn / peak, ratio);
    log_ratio_sum += log(ratio);
    ++distinct;
    layers += task->count;
    total_hetc += result.seconds * task->count;
    total_onednn += onednn * task->count;
    total_flops += task->flops * task->count;
    if (result.max_relative_error > worst) worst = result.max_relative_error;
  }
  printf("\nwhole network (%d conv layers, %.2f GFLOP): hetc %.1f ms (%.1f GFLOPS, %.1f%% of peak), oneDNN %.1f ms "
         "(%.1f GFLOPS, %.1f%% of peak)\n",
         layers, total_flops / 1e9, total_hetc * 1e3, total_flops / total_hetc / 1e9,
         100 * total_flops / total_hetc / 1e9 / peak, total_onednn * 1e3, total_flops / total_onednn / 1e9,
         100 * total_flops / total_onednn / 1e9 / peak);
  printf("ratio to oneDNN (oneDNN time / hetc time): geometric mean over %d layers %.3f, whole network %.3f\n",
         distinct, exp(log_ratio_sum / distinct), total_onednn / total_hetc);
  printf("every hetc kernel checked against the reference: worst max relative error %.2e\n", worst);
  hetc_task_list_free(tasks);
  hetc_registry_free(registry);
  hetc_graph_free(graph);
  dnnl_stream_destroy(stream);
  dnnl_engine_destroy(engine);
  return 0;
}
