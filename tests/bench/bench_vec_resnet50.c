/* ResNet-50's conv2d layers on the vec backend: the plain NCHW template
 * against the NCHW[x]c template, each with its default config, per layer
 * and for the whole network (layers weighted by how often they occur), as
 * GFLOPS and as a fraction of the machine's measured FMA peak. Every kernel
 * is also checked against the reference before it is timed.
 *
 * usage: bench_vec_resnet50 [--threads N] [--repeat R] [--model PATH]
 * (--threads sets HETC_NUM_THREADS, the threads of hetc's pool that the
 * emitted kernels run on; default: all cores). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "graph/passes.h"
#include "graph/tasks.h"
#include "kernel_check.h"
#include "machine_peak.h"
#include "model/model.h"

/* Times the default config of the template named `wanted`. */
static hetc_status_t time_template(hetc_plugin_entry_t *entry, const hetc_plugin_workload_t *w,
                                   const char *wanted, int repeat, kernel_check_result_t *out) {
  const hetc_plugin_t *p = entry->plugin;
  int32_t templates = p->template_count(entry->instance, 0, w);
  for (int32_t t = 0; t < templates; ++t)
    if (!strcmp(p->template_name(entry->instance, 0, w, t), wanted))
      return hetc_kernel_check_run_default(entry, w, t, 1, repeat, out);
  return hetc_status_new(HETC_STATUS_NOT_FOUND, "template %s not offered", wanted);
}

int main(int argc, char **argv) {
  const char *model_path = NULL;
  int repeat = 9, threads = (int)sysconf(_SC_NPROCESSORS_ONLN);
  for (int i = 1; i < argc; ++i) {
    if (!strcmp(argv[i], "--threads") && i + 1 < argc) threads = atoi(argv[++i]);
    else if (!strcmp(argv[i], "--repeat") && i + 1 < argc) repeat = atoi(argv[++i]);
    else if (!strcmp(argv[i], "--model") && i + 1 < argc) model_path = argv[++i];
    else {
      fprintf(stderr, "usage: %s [--threads N] [--repeat R] [--model PATH]\n", argv[0]);
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

  double peak = machine_peak_gflops(threads);
  printf("machine peak (measured %s FMA loop, %d thread%s): %.1f GFLOPS fp32\n", machine_peak_isa(), threads,
         threads > 1 ? "s" : "", peak);

  hetc_graph_t *graph = NULL;
  hetc_task_list_t *tasks = NULL;
  hetc_registry_t *registry = NULL;
  hetc_plugin_entry_t *entry = NULL;
  hetc_status_t status = hetc_model_load_file(model_path, &graph);
  if (!status) status = hetc_graph_optimize(graph);
  if (!status) status = hetc_graph_extract_tasks(graph, &tasks);
  if (!status) status = hetc_registry_open(&registry);
  if (!status) status = hetc_registry_target(registry, "vec", &entry);
  if (status) {
    fprintf(stderr, "bench: %s\n", hetc_status_message(status));
    return 1;
  }
  printf("%s conv2d layers on vec (%s), %d threads, median of %d runs, default configs\n\n", graph->name,
         entry->plugin->device_get(entry->instance, 0)->name, threads, repeat);
  printf("%-3s %-3s %-52s %8s | %9s %6s %6s | %9s %6s %6s | %7s\n", "#", "x", "layer", "MFLOP", "NCHW ms",
         "GFLOPS", "%peak", "NCHWc ms", "GFLOPS", "%peak", "speedup");
  double total_flops = 0, total_nchw = 0, total_nchwc = 0, vl_nchw = 0, vl_nchwc = 0, worst_error = 0;
  int layers = 0;
  for (int32_t t = 0; t < tasks->count; ++t) {
    const hetc_task_t *task = &tasks->tasks[t];
    if (task->op != HETC_OP_CONV2D) continue;
    hetc_plugin_tensor_t inputs[HETC_MAX_NODE_INPUTS];
    hetc_plugin_workload_t w;
    status = hetc_graph_node_workload(graph, task->first_node, inputs, &w);
    kernel_check_result_t nchw = {0}, nchwc = {0};
    if (!status) status = time_template(entry, &w, "vec_conv2d_nchw", repeat, &nchw);
    if (!status) status = time_template(entry, &w, "vec_conv2d_nchwc", repeat, &nchwc);
    if (status) {
      fprintf(stderr, "bench: task %d: %s\n", t + 1, hetc_status_message(status));
      return 1;
    }
    double g1 = task->flops / nchw.seconds / 1e9, g2 = task->flops / nchwc.seconds / 1e9;
    const char *key = task->key + strlen("conv2d ");
    printf("%-3d %-3d %-52.52s %8.1f | %9.3f %6.1f %5.1f%% | %9.3f %6.1f %5.1f%% | %6.2fx\n", t + 1, task->count, key,
           task->flops / 1e6, nchw.seconds * 1e3, g1, 100 * g1 / peak, nchwc.seconds * 1e3, g2, 100 * g2 / peak,
           nchw.seconds / nchwc.seconds);
    total_flops += task->flops * task->count;
    total_nchw += nchw.seconds * task->count;
    total_nchwc += nchwc.seconds * task->count;
    vl_nchw += nchw.avg_inner_loop_length * task->count;
    vl_nchwc += nchwc.avg_inner_loop_length * task->count;
    layers += task->count;
    if (nchw.max_relative_error > worst_error) worst_error = nchw.max_relative_error;
    if (nchwc.max_relative_error > worst_error) worst_error = nchwc.max_relative_error;
  }
  double g1 = total_flops / total_nchw / 1e9, g2 = total_flops / total_nchwc / 1e9;
  printf("\nwhole network (%d conv layers, %.2f GFLOP):\n", layers, total_flops / 1e9);
  printf("  NCHW : %8.1f ms  %6.1f GFLOPS  %5.1f%% of peak  avg inner loop length %.1f\n", total_nchw * 1e3, g1,
         100 * g1 / peak, vl_nchw / layers);
  printf("  NCHWc: %8.1f ms  %6.1f GFLOPS  %5.1f%% of peak  avg inner loop length %.1f\n", total_nchwc * 1e3, g2,
         100 * g2 / peak, vl_nchwc / layers);
  printf("  NCHWc speedup over NCHW: %.2fx   (every kernel checked: worst max relative error %.2e)\n",
         total_nchw / total_nchwc, worst_error);
  hetc_task_list_free(tasks);
  hetc_registry_free(registry);
  hetc_graph_free(graph);
  return 0;
}
