/* Measuring a model on several devices side by side (compare.h). */
#include "compare/compare.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check/kernel_check.h"
#include "common/fileio.h"
#include "common/interrupt.h"
#include "compile/config_choice.h"
#include "compile/kernel_build.h"
#include "graph/passes.h"
#include "graph/tasks.h"
#include "package/plan.h"
#include "plugins/peaks.h"
#include "runtime/runtime.h"
#include "kernel/plugin_calls.h"

/* As placement times kernels: the median of 5 runs on random data. */
#define TIMED_REPEATS 5
#define HETERO_NAME "hetero"

typedef struct comparison_t {
  hetc_registry_t *registry;
  const hetc_graph_t *model;         /* as loaded: what packages compile */
  hetc_graph_t *graph;               /* optimized copy, owned: where tasks come from */
  hetc_task_list_t *tasks;           /* owned */
  hetc_config_chooser_t *chooser;    /* owned; NULL: defaults only */
  hetc_plugin_entry_t *entries[HETC_COMPARE_MAX_DEVICES]; /* NULL for skipped targets */
  const hetc_compare_options_t *options;
  hetc_compare_result_t *result;
} comparison_t;

const char *hetc_compare_state_name(hetc_compare_state_t state) {
  switch (state) {
    case HETC_COMPARE_OK: return "ok";
    case HETC_COMPARE_SKIPPED: return "skipped";
    case HETC_COMPARE_UNSUPPORTED: return "unsupported";
    default: return "failed";
  }
}

const hetc_compare_template_t *hetc_compare_best(const hetc_compare_entry_t *entry) {
  return entry->best >= 0 && entry->best < entry->num_templates ? &entry->templates[entry->best] : NULL;
}

void hetc_compare_result_free(hetc_compare_result_t *result) {
  for (int32_t d = 0; d < result->num_devices; ++d) free(result->devices[d].skipped_reason);
  for (int32_t i = 0; result->tasks && i < result->num_tasks; ++i) {
    hetc_compare_task_t *task = &result->tasks[i];
    for (int32_t d = 0; task->entries && d < result->num_devices; ++d) {
      hetc_compare_entry_t *entry = &task->entries[d];
      for (int32_t t = 0; t < entry->num_templates; ++t) free(entry->templates[t].error);
      free(entry->templates);
      free(entry->error);
    }
    free(task->entries);
  }
  free(result->tasks);
  for (int32_t p = 0; result->packages && p < result->num_packages; ++p) free(result->packages[p].error);
  free(result->packages);
  memset(result, 0, sizeof(*result));
}

static void copy_text(char *to, size_t size, const char *text) {
  snprintf(to, size, "%s", text ? text : "");
}

/* Moves a failure's message into *out_message (owned by the caller). */
static hetc_status_t keep_message(hetc_status_t status, char **out_message) {
  *out_message = strdup(hetc_status_message(status));
  hetc_status_free(status);
  return *out_message ? NULL : hetc_status_new(HETC_STATUS_OUT_OF_MEMORY, "compare");
}

static hetc_status_t add_devices(comparison_t *c) {
  const hetc_compare_options_t *o = c->options;
  hetc_compare_result_t *r = c->result;
  if (o->num_targets < 1) return hetc_status_new(HETC_STATUS_INVALID_ARGUMENT, "compare: no targets given");
  if (o->num_targets > HETC_COMPARE_MAX_DEVICES)
    return hetc_status_new(HETC_STATUS_BAD_INPUT, "compare: at most %d targets, got %d", HETC_COMPARE_MAX_DEVICES,
                           o->num_targets);
  int32_t available = 0;
  for (int32_t t = 0; t < o->num_targets; ++t) {
    for (int32_t u = 0; u < t; ++u)
      if (!strcmp(o->targets[u], o->targets[t]))
        return hetc_status_new(HETC_STATUS_BAD_INPUT, "target '%s' is listed twice", o->targets[t]);
    hetc_compare_device_t *device = &r->devices[r->num_devices++];
    copy_text(device->target, sizeof(device->target), o->targets[t]);
    hetc_plugin_entry_t *entry = NULL;
    hetc_status_t status = hetc_registry_target(c->registry, o->targets[t], &entry);
    if (!status && hetc_entry_device_count(entry) < 1)
      status = hetc_status_new(HETC_STATUS_UNAVAILABLE, "target '%s' has no device", o->targets[t]);
    /* A device this machine lacks (cuda without a GPU) is part of the
     * answer, not a reason to give none. */
    if (status && hetc_status_code(status) == HETC_STATUS_UNAVAILABLE) {
      HETC_RETURN_IF_ERROR(keep_message(status, &device->skipped_reason));
      continue;
    }
    HETC_RETURN_IF_ERROR(status);
    const hetc_plugin_device_t *descriptor = hetc_entry_device(entry, 0);
    copy_text(device->name, sizeof(device->name), descriptor ? descriptor->name : hetc_entry_name(entry));
    device->peak_gflops = descriptor ? hetc_device_peak_gflops(descriptor) : 0;
    c->entries[t] = entry;
    ++available;
  }
  if (available == 0) {
    char reasons[1024] = "";
    for (int32_t d = 0; d < r->num_devices; ++d)
      snprintf(reasons + strlen(reasons), sizeof(reasons) - strlen(reasons), "%s%s", d ? "; " : "",
               r->devices[d].skipped_reason);
    return hetc_status_new(HETC_STATUS_UNAVAILABLE, "compare: no target can run here (%s)", reasons);
  }
  return NULL;
}

/* Builds template t with `config` (NULL: its default) and times it. */
static hetc_status_t time_template(hetc_plugin_entry_t *entry, const hetc_plugin_workload_t *workload, int32_t t,
                                   const hetc_plugin_config_t *config, const char *what, double *out_seconds) {
  hetc_plan_step_t scratch;
  memset(&scratch, 0, sizeof(scratch));
  hetc_plugin_artifact_t *artifact = NULL;
  hetc_status_t status = hetc_kernel_build_template(entry, 0, workload, t, config, what, &scratch, &artifact);
  kernel_check_result_t timing;
  if (!status) status = hetc_kernel_check_time_artifact(entry, 0, workload, t, artifact, TIMED_REPEATS, &timing);
  if (!status) *out_seconds = timing.seconds;
  if (artifact) hetc_entry_artifact_release(entry, artifact);
  hetc_plan_step_release(&scratch);
  return status;
}

/* Every template of task i on device d, each with the config the records
 * choose for it, else its default. */
static hetc_status_t measure_entry(comparison_t *c, int32_t i, int32_t d) {
  hetc_compare_task_t *task = &c->result->tasks[i];
  hetc_compare_entry_t *out = &task->entries[d];
  out->best = -1;
  hetc_plugin_entry_t *entry = c->entries[d];
  if (!entry) {
    out->state = HETC_COMPARE_SKIPPED;
    return NULL;
  }
  const hetc_plugin_t *p = entry->plugin;
  hetc_plugin_tensor_t inputs[HETC_MAX_NODE_INPUTS];
  hetc_plugin_workload_t workload;
  HETC_RETURN_IF_ERROR(hetc_graph_task_workload(c->graph, c->tasks, i, inputs, &workload));
  int32_t n = p->supports(entry->instance, 0, &workload) ? p->template_count(entry->instance, 0, &workload) : 0;
  if (n < 1) {
    out->state = HETC_COMPARE_UNSUPPORTED;
    out->error = strdup("the target does not support this workload");
    return out->error ? NULL : hetc_status_new(HETC_STATUS_OUT_OF_MEMORY, "compare");
  }
  /* The cost model's prediction ranks configs across templates, so it is
   * asked once; it stands for its template only. */
  int32_t predicted_template = -1;
  hetc_config_json_t predicted;
  hetc_config_source_t source = HETC_CONFIG_DEFAULT;
  HETC_RETURN_IF_ERROR(
      hetc_config_choose(c->chooser, p, entry->instance, 0, &workload, &predicted_template, &predicted, &source));
  if (source == HETC_CONFIG_DEFAULT) predicted_template = -1;
  if (!(out->templates = calloc((size_t)n, sizeof(hetc_compare_template_t)))) {
    if (predicted_template >= 0) hetc_config_json_free(&predicted);
    return hetc_status_new(HETC_STATUS_OUT_OF_MEMORY, "compare");
  }
  out->num_templates = n;
  hetc_status_t fatal = NULL;
  for (int32_t t = 0; t < n && !fatal; ++t) {
    hetc_compare_template_t *result = &out->templates[t];
    copy_text(result->name, sizeof(result->name), p->template_name(entry->instance, 0, &workload, t));
    hetc_config_json_t chosen;
    hetc_config_source_t chosen_source = HETC_CONFIG_DEFAULT;
    const hetc_plugin_config_t *config = NULL;
    hetc_status_t status = NULL;
    if (t == predicted_template) {
      chosen_source = source;
      config = &predicted.config;
    } else {
      status = hetc_config_choose_template(c->chooser, p, entry->instance, 0, &workload, t, &chosen, &chosen_source);
      if (!status && chosen_source != HETC_CONFIG_DEFAULT) config = &chosen.config;
    }
    char what[HETC_COMPARE_KEY_SIZE + 64];
    snprintf(what, sizeof(what), "task %d, template %s", i + 1, result->name);
    if (!status) status = time_template(entry, &workload, t, config, what, &result->seconds);
    /* A stored config that no longer builds must not hide the template:
     * its default stands in, as compile does. */
    if (status && config) {
      hetc_status_free(status);
      chosen_source = HETC_CONFIG_DEFAULT;
      status = time_template(entry, &workload, t, NULL, what, &result->seconds);
    }
    if (config && t != predicted_template) hetc_config_json_free(&chosen);
    copy_text(result->config_source, sizeof(result->config_source), hetc_config_source_name(chosen_source));
    if (status) {
      result->seconds = 0;
      fatal = keep_message(status, &result->error);
      continue;
    }
    result->gflops = result->seconds > 0 ? task->flops / result->seconds / 1e9 : 0;
    if (out->best < 0 || result->seconds < out->templates[out->best].seconds) out->best = t;
  }
  if (predicted_template >= 0) hetc_config_json_free(&predicted);
  HETC_RETURN_IF_ERROR(fatal);
  const hetc_compare_template_t *best = hetc_compare_best(out);
  const double peak = c->result->devices[d].peak_gflops;
  out->state = best ? HETC_COMPARE_OK : HETC_COMPARE_FAILED;
  out->peak_fraction = best && peak > 0 ? best->gflops / peak : 0;
  if (c->options->progress) {
    if (best)
      fprintf(c->options->progress, "[task %d/%d] %-8s %-40.40s best %s: %.3f ms, %.1f GFLOPS\n", i + 1,
              c->result->num_tasks, c->result->devices[d].target, task->key, best->name, best->seconds * 1e3,
              best->gflops);
    else
      fprintf(c->options->progress, "[task %d/%d] %-8s %-40.40s no template built\n", i + 1, c->result->num_tasks,
              c->result->devices[d].target, task->key);
  }
  return NULL;
}

static hetc_status_t measure_tasks(comparison_t *c) {
  hetc_compare_result_t *r = c->result;
  HETC_RETURN_IF_ERROR(hetc_graph_require_weights(c->model, "compared"));
  HETC_RETURN_IF_ERROR(hetc_graph_clone(c->model, &c->graph));
  HETC_RETURN_IF_ERROR(hetc_graph_optimize(c->graph));
  HETC_RETURN_IF_ERROR(hetc_graph_extract_tasks(c->graph, &c->tasks));
  if (c->tasks->count > 0 && !(r->tasks = calloc((size_t)c->tasks->count, sizeof(hetc_compare_task_t))))
    return hetc_status_new(HETC_STATUS_OUT_OF_MEMORY, "compare");
  for (int32_t i = 0; i < c->tasks->count; ++i) {
    const hetc_task_t *source = &c->tasks->tasks[i];
    hetc_compare_task_t *task = &r->tasks[r->num_tasks++];
    copy_text(task->key, sizeof(task->key), source->key);
    copy_text(task->node_name, sizeof(task->node_name), c->graph->nodes[source->first_node].name);
    task->count = source->count;
    task->flops = source->flops;
    if (!(task->entries = calloc((size_t)r->num_devices, sizeof(hetc_compare_entry_t))))
      return hetc_status_new(HETC_STATUS_OUT_OF_MEMORY, "compare");
  }
  /* Device by device, so that two plugins' worker threads (hetc's pool, a
   * device runtime's) take turns on shared cores once per device rather
   * than once per task. */
  for (int32_t d = 0; d < r->num_devices; ++d)
    for (int32_t i = 0; i < r->num_tasks; ++i) {
      HETC_RETURN_IF_ERROR(hetc_interrupt_status());
      HETC_RETURN_IF_ERROR(measure_entry(c, i, d));
    }
  return NULL;
}

/* Random inputs (seed 0, as `hetc bench` feeds by default). */
static hetc_status_t set_random_inputs(hetc_package_t *package) {
  for (int32_t i = 0; i < hetc_package_input_count(package); ++i) {
    int64_t count = hetc_package_input_elements(package, i);
    float *data = malloc(sizeof(float) * (size_t)(count > 0 ? count : 1));
    if (!data) return hetc_status_new(HETC_STATUS_OUT_OF_MEMORY, "compare");
    hetc_fill_random_input(data, count, 0, i);
    hetc_status_t status = hetc_package_set_input(package, i, data, count);
    free(data);
    HETC_RETURN_IF_ERROR(status);
  }
  return NULL;
}

static int is_graph_node(const hetc_graph_t *graph, const char *name) {
  for (int32_t k = 0; k < graph->num_nodes; ++k)
    if (!strcmp(graph->nodes[k].name, name)) return 1;
  return 0;
}

/* Where each fused node of the package runs. A node's step carries its
 * name; the inserted transforms and copies do not (and a flatten is a
 * layout transform kernel, so the op cannot tell them apart). */
static void count_placement(const comparison_t *c, const hetc_plan_t *plan, hetc_compare_package_t *out) {
  for (int32_t s = 0; s < plan->num_steps; ++s) {
    const hetc_plan_step_t *step = &plan->steps[s];
    if (step->kind == HETC_PLAN_STEP_COPY) {
      ++out->copies;
      continue;
    }
    if (!is_graph_node(c->graph, step->name)) continue;
    for (int32_t d = 0; d < c->result->num_devices; ++d)
      if (!strcmp(c->result->devices[d].target, plan->devices[step->device].target)) ++out->nodes_on_device[d];
  }
}

/* Compiles, opens and benchmarks one package; a failure is recorded in
 * it, not returned (only running out of memory is). */
static hetc_status_t measure_package(comparison_t *c, const char *dir, const char *const *targets,
                                     int32_t num_targets, hetc_compare_package_t *out) {
  char file_name[HETC_COMPARE_NAME_SIZE + 8];
  snprintf(file_name, sizeof(file_name), "%s.hetc", out->name);
  char *path = hetc_path_join(dir, file_name);
  if (!path) return hetc_status_new(HETC_STATUS_OUT_OF_MEMORY, "compare");
  const hetc_compile_options_t options = {
      .targets = targets,
      .num_targets = num_targets,
      .records_path = c->options->records_path,
      .placement = num_targets > 1 ? HETC_PLACEMENT_COST : HETC_PLACEMENT_FIRST,
      .predict = 1,
  };
  hetc_compile_report_t report;
  hetc_package_t *package = NULL;
  hetc_bench_result_t bench;
  const hetc_bench_options_t bench_options = {.warmup_runs = c->options->warmup_runs, .runs = c->options->runs};
  hetc_status_t status = hetc_compile(c->registry, c->model, &options, path, &report);
  if (!status) status = hetc_package_open(c->registry, path, &package);
  if (!status) status = set_random_inputs(package);
  if (!status) status = hetc_package_bench(package, &bench_options, &bench);
  if (!status) {
    out->state = HETC_COMPARE_OK;
    out->predicted_seconds = report.predicted_seconds;
    out->p50 = bench.p50;
    out->p90 = bench.p90;
    out->p99 = bench.p99;
    count_placement(c, hetc_runtime_plan(package), out);
  }
  hetc_package_close(package);
  free(path);
  if (c->options->progress) {
    if (status)
      fprintf(c->options->progress, "[package] %-8s failed: %s\n", out->name, hetc_status_message(status));
    else
      fprintf(c->options->progress, "[package] %-8s p50 %.3f ms (predicted %.3f ms)\n", out->name, out->p50 * 1e3,
              out->predicted_seconds * 1e3);
  }
  if (!status) return NULL;
  if (hetc_status_code(status) == HETC_STATUS_INTERRUPTED) return status; /* stops the comparison */
  out->state = HETC_COMPARE_FAILED;
  return keep_message(status, &out->error);
}

static hetc_status_t package_dir(const hetc_compare_options_t *o, char **out_dir) {
  if (o->keep_dir) {
    if (mkdir(o->keep_dir, 0755) != 0 && errno != EEXIST)
      return hetc_status_new(HETC_STATUS_IO_ERROR, "%s: cannot create: %s", o->keep_dir, strerror(errno));
    *out_dir = strdup(o->keep_dir);
  } else {
    const char *tmp = getenv("TMPDIR");
    char *base = hetc_path_join(tmp && *tmp ? tmp : "/tmp", "hetc-compare");
    if (!base) return hetc_status_new(HETC_STATUS_OUT_OF_MEMORY, "compare");
    hetc_status_t status = hetc_dir_create_temp_beside(base, out_dir);
    free(base);
    return status;
  }
  return *out_dir ? NULL : hetc_status_new(HETC_STATUS_OUT_OF_MEMORY, "compare");
}

static hetc_status_t measure_packages(comparison_t *c) {
  hetc_compare_result_t *r = c->result;
  if (!(r->packages = calloc((size_t)r->num_devices + 1, sizeof(hetc_compare_package_t))))
    return hetc_status_new(HETC_STATUS_OUT_OF_MEMORY, "compare");
  char *dir = NULL;
  HETC_RETURN_IF_ERROR(package_dir(c->options, &dir));
  const char *available[HETC_COMPARE_MAX_DEVICES];
  int32_t num_available = 0;
  hetc_status_t status = NULL;
  for (int32_t d = 0; d < r->num_devices && !status; ++d) {
    hetc_compare_package_t *package = &r->packages[r->num_packages++];
    copy_text(package->name, sizeof(package->name), r->devices[d].target);
    if (!c->entries[d]) {
      package->state = HETC_COMPARE_SKIPPED;
      if (!(package->error = strdup(r->devices[d].skipped_reason)))
        status = hetc_status_new(HETC_STATUS_OUT_OF_MEMORY, "compare");
      continue;
    }
    available[num_available++] = r->devices[d].target;
    status = measure_package(c, dir, &available[num_available - 1], 1, package);
  }
  hetc_compare_package_t *hetero = status ? NULL : &r->packages[r->num_packages++];
  if (hetero) {
    copy_text(hetero->name, sizeof(hetero->name), HETERO_NAME);
    if (num_available > 1) {
      status = measure_package(c, dir, available, num_available, hetero);
    } else {
      hetero->state = HETC_COMPARE_SKIPPED;
      if (!(hetero->error = strdup("placement needs two available targets")))
        status = hetc_status_new(HETC_STATUS_OUT_OF_MEMORY, "compare");
    }
  }
  /* A signal noted after the last package's runs still stops the
   * comparison: no report of a run the user asked to stop. */
  if (!status) status = hetc_interrupt_status();
  if (!c->options->keep_dir) hetc_dir_remove_tree(dir);
  free(dir);
  return status;
}

hetc_status_t hetc_compare_run(hetc_registry_t *registry, const hetc_graph_t *graph,
                               const hetc_compare_options_t *options, hetc_compare_result_t *out_result) {
  memset(out_result, 0, sizeof(*out_result));
  copy_text(out_result->model, sizeof(out_result->model), graph->name);
  out_result->runs = options->runs;
  out_result->warmup_runs = options->warmup_runs;
  comparison_t c;
  memset(&c, 0, sizeof(c));
  c.registry = registry;
  c.model = graph;
  c.options = options;
  c.result = out_result;
  /* Fractions of peak divide by each device's kept peak (plugins/peaks.h),
   * this run's measurement folded into the store the configs come from
   * (a named one is created, as the config chooser would; the per-user one
   * only counts when it exists). */
  /* Peaks are folded into a store that exists; compare creates none (a
   * --records that names none is refused by the chooser below). */
  hetc_registry_keep_peaks(registry, options->records_path, HETC_PEAKS_RECORD);
  hetc_status_t status = add_devices(&c);
  if (!status) status = hetc_config_chooser_open(options->records_path, &c.chooser);
  if (!status) status = measure_tasks(&c);
  if (!status) status = measure_packages(&c);
  hetc_config_chooser_free(c.chooser);
  hetc_task_list_free(c.tasks);
  hetc_graph_free(c.graph);
  return status;
}

hetc_status_t hetc_compare_save(const hetc_compare_result_t *result,
                                hetc_status_t (*write)(const hetc_compare_result_t *, FILE *), const char *path) {
  hetc_output_file_t *output = NULL;
  HETC_RETURN_IF_ERROR(hetc_output_file_open(path, &output));
  hetc_status_t status = write(result, hetc_output_stream(output));
  if (status) {
    hetc_output_file_abandon(output);
    return status;
  }
  return hetc_output_file_commit(output);
}
