#define _GNU_SOURCE
#include "sim_runner.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "records/records.h"
#include "records/records_jsonl.h"

static int ends_with(const char *text, const char *suffix) {
  size_t n = strlen(text), m = strlen(suffix);
  return n >= m && !strcmp(text + n - m, suffix);
}

/* Copies every record of `from` matching `filter` into `to`. */
static hetc_status_t copy_records(const char *from_path, hetc_records_t *to, const hetc_record_filter_t *filter,
                                  const char *except_key) {
  hetc_records_t *from = NULL;
  hetc_record_list_t list = {0, NULL};
  hetc_status_t status = hetc_records_open(from_path, &from);
  if (!status) status = hetc_records_query(from, filter, &list);
  int32_t kept = 0;
  for (int32_t i = 0; !status && i < list.count; ++i) {
    if (except_key && !strcmp(list.items[i].workload_key, except_key)) {
      hetc_record_clear(&list.items[i]);
      continue;
    }
    list.items[kept++] = list.items[i];
  }
  if (!status && kept) status = hetc_records_add(to, list.items, kept);
  list.count = kept;
  hetc_record_list_free(&list);
  hetc_records_close(from);
  return status;
}

/* Copies the records of `source` (a .jsonl file or a records store) into
 * the store at `path`, created here. */
static hetc_status_t load_records(const char *source, const char *path, hetc_records_t **out_store) {
  hetc_status_t status = hetc_records_open(path, out_store);
  if (!status && ends_with(source, ".jsonl")) {
    int32_t imported = 0, duplicates = 0;
    status = hetc_records_import_jsonl(*out_store, source, &imported, &duplicates);
  } else if (!status) {
    hetc_record_filter_t all = hetc_record_filter_any();
    status = copy_records(source, *out_store, &all, NULL);
  }
  return status;
}

hetc_status_t sim_runner_open(sim_runner_t *r, const char *replay, const char *transfer_from) {
  memset(r, 0, sizeof(*r));
  snprintf(r->temp_dir, sizeof(r->temp_dir), "/tmp/hetc-sim-XXXXXX");
  if (!mkdtemp(r->temp_dir)) return hetc_status_new(HETC_STATUS_IO_ERROR, "cannot create a temporary directory");
  snprintf(r->replay_path, sizeof(r->replay_path), "%s/replay.sqlite", r->temp_dir);
  hetc_records_t *store = NULL;
  hetc_status_t status = NULL;
  if (transfer_from) {
    snprintf(r->transfer_path, sizeof(r->transfer_path), "%s/transfer.sqlite", r->temp_dir);
    status = load_records(transfer_from, r->transfer_path, &store);
    hetc_records_close(store);
    store = NULL;
  }
  if (!status) status = load_records(replay, r->replay_path, &store);
  hetc_record_list_t list = {0, NULL};
  hetc_record_filter_t cpu = hetc_record_filter_any();
  cpu.target = "cpu";
  if (!status) status = hetc_records_query(store, &cpu, &list);
  for (int32_t i = 0; !status && i < list.count; ++i) {
    const hetc_record_t *rec = &list.items[i];
    int32_t k = 0;
    while (k < r->num_tasks && strcmp(r->keys[k], rec->workload_key)) ++k;
    if (k == r->num_tasks) {
      if (k == SIM_MAX_TASKS) continue;
      snprintf(r->keys[r->num_tasks++], HETC_TASK_KEY_SIZE, "%s", rec->workload_key);
    }
    ++r->recorded[k];
    hetc_plugin_workload_t w;
    hetc_plugin_tensor_t inputs[2];
    double cost = rec->error == HETC_RECORD_OK ? hetc_record_median_cost(rec) : INFINITY;
    hetc_status_t bad = hetc_workload_from_key(rec->workload_key, &w, inputs);
    if (!bad && isfinite(cost) && cost > 0 && w.op == HETC_PLUGIN_OP_CONV2D) {
      double gflops = hetc_workload_flops(&w) / cost * 1e-9;
      if (gflops > r->best_gflops[k]) r->best_gflops[k] = gflops;
    }
    hetc_status_free(bad);
  }
  hetc_record_list_free(&list);
  hetc_records_close(store);
  return status;
}

void sim_runner_close(sim_runner_t *r) {
  char command[128];
  snprintf(command, sizeof(command), "rm -rf '%s'", r->temp_dir);
  if (r->temp_dir[0] && system(command) != 0) fprintf(stderr, "could not remove %s\n", r->temp_dir);
}

hetc_status_t sim_runner_run(sim_runner_t *r, int32_t task, hetc_search_kind_t search, int transfer, uint64_t seed,
                             int32_t trials, sim_outcome_t *out) {
  char path[192], model[208];
  snprintf(path, sizeof(path), "%s/store.sqlite", r->temp_dir);
  snprintf(model, sizeof(model), "%s.model", path);
  unlink(path);
  unlink(model);
  hetc_records_t *store = NULL;
  hetc_status_t status = hetc_records_open(path, &store);
  if (!status && transfer) {
    hetc_record_filter_t all = hetc_record_filter_any();
    status = copy_records(r->transfer_path[0] ? r->transfer_path : r->replay_path, store, &all, r->keys[task]);
  }
  hetc_records_close(store);
  if (status) return status;
  hetc_tune_options_t options = hetc_tune_default_options();
  options.records_path = path;
  options.simulate_path = r->replay_path;
  options.simulate_stop_fraction = 0.95;
  options.search = search;
  options.transfer = transfer;
  options.seed = seed;
  hetc_tuner_t *tuner = NULL;
  hetc_plugin_workload_t workload;
  hetc_plugin_tensor_t inputs[2];
  hetc_tune_task_result_t result;
  status = hetc_tuner_create(&options, &tuner);
  if (!status) status = hetc_workload_from_key(r->keys[task], &workload, inputs);
  if (!status) status = hetc_tuner_tune_task(tuner, "cpu", &workload, "[sim]", trials, 0, &result);
  if (!status) {
    out->trials_to_95 = result.trials_to_95 > 0 ? result.trials_to_95 : trials + 1;
    out->overhead_seconds = hetc_tuner_overhead_seconds(tuner);
  }
  hetc_tuner_free(tuner);
  return status;
}

static int compare_doubles(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

double sim_median(double *values, int32_t n) {
  qsort(values, (size_t)n, sizeof(double), compare_doubles);
  return n == 0 ? 0 : n % 2 ? values[n / 2] : 0.5 * (values[n / 2 - 1] + values[n / 2]);
}
