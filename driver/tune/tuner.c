#include "tune/tuner.h"
#include "plugins/abi_level.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "common/clock.h"
#include "graph/passes.h"
#include "hetc/hetc.h"
#include "graph/tasks.h"
#include "plugins/peaks.h"
#include "plugins/registry.h"
#include "space/space_override.h"
#include "space/task_space.h"
#include "tune/device_lock.h"
#include "records/config_json.h"
#include "records/features.h"
#include "common/interrupt.h"
#include "records/records.h"
#include "records/records_jsonl.h"
#include "records/transfer_learning.h"
#include "kernel/plugin_calls.h"

#define MAX_MEASURERS 8
#define HETC_TUNER_MAX_DEFAULTS 16
#define MAX_BATCH 256

typedef struct measurer_slot_t {
  char target[32];
  int32_t device_index;
  hetc_measurer_t *measurer;
} measurer_slot_t;

struct hetc_tuner_t {
  hetc_tune_options_t options;
  char *records_path;
  hetc_records_t *store;
  hetc_records_t *replay; /* simulation */
  hetc_registry_t *registry;
  hetc_space_overrides_t *overrides;
  hetc_transfer_model_t *model;
  measurer_slot_t measurers[MAX_MEASURERS];
  double created;          /* CLOCK_MONOTONIC seconds */
  double measure_seconds;  /* waiting for builds and measurements */
  int64_t global_records;  /* store records the global model was last fitted on */
  int global_unsaved;      /* fitted since STORE.model was last written */
  int64_t records_written; /* added to the store by this run */
  int32_t dropped;         /* candidates of the batch given up when interrupted */
};

/* The global model is refitted once the store holds this many times the
 * records it was fitted on. */
#define GLOBAL_REFIT_GROWTH 1.25

hetc_tune_options_t hetc_tune_default_options(void) {
  hetc_tune_options_t o;
  memset(&o, 0, sizeof(o));
  o.search = HETC_SEARCH_MODEL;
  o.trials = 200;
  o.batch = 16;
  o.transfer = 1;
  o.measure = hetc_measure_default_options();
  o.seed = 1;
  return o;
}

/* ------------------------------------------------------------------------ */
/* Rows for the cost model                                                  */
/* ------------------------------------------------------------------------ */

/* A growing feature matrix with per-row costs (+inf for failures) and the
 * group (task) each row belongs to. */
typedef struct rows_t {
  int64_t count, capacity;
  float *features;  /* count x HETC_FEATURE_COUNT */
  double *costs;
  int32_t *groups;
} rows_t;

static void rows_free(rows_t *r) {
  free(r->features);
  free(r->costs);
  free(r->groups);
  memset(r, 0, sizeof(*r));
}

static float *rows_append(rows_t *r, double cost, int32_t group) {
  if (r->count == r->capacity) {
    int64_t capacity = r->capacity ? 2 * r->capacity : 256;
    float *f = realloc(r->features, sizeof(float) * (size_t)(capacity * HETC_FEATURE_COUNT));
    if (f) r->features = f;
    double *c = realloc(r->costs, sizeof(double) * (size_t)capacity);
    if (c) r->costs = c;
    int32_t *g = realloc(r->groups, sizeof(int32_t) * (size_t)capacity);
    if (g) r->groups = g;
    if (!f || !c || !g) return NULL;
    r->capacity = capacity;
  }
  r->costs[r->count] = cost;
  r->groups[r->count] = group;
  return r->features + (r->count++) * HETC_FEATURE_COUNT;
}

/* Labels: per group, best cost / cost (0 for failures). Rows must be
 * grouped contiguously. */
static void rows_labels(const rows_t *r, float *labels) {
  int64_t start = 0;
  while (start < r->count) {
    int64_t end = start;
    double best = INFINITY;
    while (end < r->count && r->groups[end] == r->groups[start]) {
      if (r->costs[end] < best) best = r->costs[end];
      ++end;
    }
    for (int64_t i = start; i < end; ++i)
      labels[i] = isfinite(r->costs[i]) && isfinite(best) ? (float)(best / r->costs[i]) : 0.0f;
    start = end;
  }
}

/* The template of `workload` on `entry` named `name` at `version`; -1. */
static int32_t find_template(hetc_plugin_entry_t *entry, int32_t device, const hetc_plugin_workload_t *workload,
                             const char *name, uint32_t version) {
  const hetc_plugin_t *p = entry->plugin;
  int32_t n = p->template_count(entry->instance, device, workload);
  for (int32_t t = 0; t < n; ++t) {
    const char *tname = p->template_name(entry->instance, device, workload, t);
    if (tname && !strcmp(tname, name) && p->template_version(entry->instance, device, workload, t) == version)
      return t;
  }
  return -1;
}

/* The features of a stored record; 0 when it cannot be placed (its target
 * is not loaded here, its template changed, its key or config is not
 * readable any more): such records are skipped, not errors. */
static int record_features(hetc_tuner_t *tuner, const hetc_record_t *rec, float *out) {
  hetc_plugin_entry_t *entry = NULL;
  hetc_status_t status = hetc_registry_target(tuner->registry, rec->target, &entry);
  hetc_plugin_workload_t workload;
  hetc_plugin_tensor_t inputs[2];
  if (!status) status = hetc_workload_from_key(rec->workload_key, &workload, inputs);
  if (status) {
    hetc_status_free(status);
    return 0;
  }
  int32_t device = tuner->options.device_index;
  int32_t t = find_template(entry, device, &workload, rec->template_name, rec->template_version);
  hetc_config_json_t config;
  if (t < 0 || (status = hetc_config_from_json(rec->config_json, &config))) {
    hetc_status_free(status);
    return 0;
  }
  status = hetc_features_extract(entry->plugin, entry->instance, device, &workload, t, &config.config, out);
  hetc_config_json_free(&config);
  int ok = status == NULL;
  hetc_status_free(status);
  return ok;
}

/* Orders record indices by (target, device, workload): one group each. */
static int compare_groups(const void *a, const void *b, void *records) {
  const hetc_record_t *x = (const hetc_record_t *)records + *(const int32_t *)a;
  const hetc_record_t *y = (const hetc_record_t *)records + *(const int32_t *)b;
  int c = strcmp(x->target, y->target);
  if (!c) c = strcmp(x->device_fingerprint, y->device_fingerprint);
  if (!c) c = strcmp(x->workload_key, y->workload_key);
  return c ? c : (*(const int32_t *)a > *(const int32_t *)b) - (*(const int32_t *)a < *(const int32_t *)b);
}

static int same_group(const hetc_record_t *x, const hetc_record_t *y) {
  return !strcmp(x->target, y->target) && !strcmp(x->device_fingerprint, y->device_fingerprint) &&
         !strcmp(x->workload_key, y->workload_key);
}

/* Fits the global model on every record of the store that can be placed,
 * grouped by (target, device, workload): labels are normalised within a
 * group, and the ranking objective only compares rows of one group. */
static hetc_status_t fit_global(hetc_tuner_t *tuner) {
  hetc_record_list_t list = {0, NULL};
  HETC_RETURN_IF_ERROR(hetc_records_query(tuner->store, NULL, &list));
  tuner->global_records = list.count;
  tuner->global_unsaved = 1;
  int32_t *order = malloc(sizeof(int32_t) * (size_t)(list.count + 1));
  uint32_t *group_sizes = calloc((size_t)list.count + 1, sizeof(uint32_t));
  rows_t rows = {0};
  int32_t num_groups = 0;
  hetc_status_t status = order && group_sizes ? NULL : hetc_status_new(HETC_STATUS_OUT_OF_MEMORY, "cost model");
  for (int32_t i = 0; !status && i < list.count; ++i) order[i] = i;
  if (!status) qsort_r(order, (size_t)list.count, sizeof(int32_t), compare_groups, list.items);
  for (int32_t i = 0; !status && i < list.count; ++i) {
    const hetc_record_t *r = &list.items[order[i]];
    if (i > 0 && !same_group(r, &list.items[order[i - 1]]) && group_sizes[num_groups]) ++num_groups;
    double cost = r->error == HETC_RECORD_OK ? hetc_record_median_cost(r) : INFINITY;
    float *row = rows_append(&rows, cost, num_groups);
    if (!row) status = hetc_status_new(HETC_STATUS_OUT_OF_MEMORY, "cost model");
    else if (!record_features(tuner, r, row)) --rows.count;
    else ++group_sizes[num_groups];
  }
  if (group_sizes && group_sizes[num_groups]) ++num_groups;
  float *labels = status ? NULL : malloc(sizeof(float) * (size_t)(rows.count + 1));
  if (!status && !labels) status = hetc_status_new(HETC_STATUS_OUT_OF_MEMORY, "cost model");
  if (!status && rows.count > 0) {
    rows_labels(&rows, labels);
    status = hetc_transfer_model_fit_global(tuner->model, rows.features, labels, rows.count, group_sizes,
                                            num_groups);
  }
  free(labels);
  free(order);
  free(group_sizes);
  rows_free(&rows);
  hetc_record_list_free(&list);
  return status;
}

/* The global model the store keeps (hetc_records_put_model); NOT_FOUND
 * when it keeps none. */
static hetc_status_t load_kept_model(hetc_tuner_t *tuner) {
  char *bytes = NULL;
  size_t length = 0;
  int found = 0;
  hetc_status_t status = hetc_records_get_model(tuner->store, &bytes, &length, &found);
  if (!status && !found) status = hetc_status_new(HETC_STATUS_NOT_FOUND, "no model");
  if (!status)
    status = hetc_transfer_model_load_global_bytes(tuner->model, hetc_records_model_name(tuner->store), bytes, length);
  free(bytes);
  return status;
}

/* ------------------------------------------------------------------------ */
/* The tuner                                                                */
/* ------------------------------------------------------------------------ */

hetc_status_t hetc_tuner_create(const hetc_tune_options_t *options, hetc_tuner_t **out_tuner) {
  *out_tuner = NULL;
  hetc_tuner_t *t = calloc(1, sizeof(*t));
  if (!t) return hetc_status_new(HETC_STATUS_OUT_OF_MEMORY, "tuner");
  t->created = hetc_now_seconds();
  t->options = options ? *options : hetc_tune_default_options();
  if (t->options.trials <= 0) t->options.trials = 200;
  if (t->options.batch <= 0) t->options.batch = 16;
  if (t->options.batch > MAX_BATCH) t->options.batch = MAX_BATCH;
  hetc_status_t status = NULL;
  /* The user's other inputs first, so that a run refused for one of them
   * creates no store. */
  if (t->options.overrides_path) {
    status = hetc_space_overrides_load(t->options.overrides_path, &t->overrides);
    /* A malformed overrides file is the user's input: exit status 2. */
    if (status && hetc_status_code(status) == HETC_STATUS_INVALID_ARGUMENT)
      status = hetc_status_recode(status, HETC_STATUS_BAD_INPUT);
  }
  /* The replayed store is only read, left exactly as it is. */
  if (!status && t->options.simulate_path) {
    status = hetc_records_open_as(t->options.simulate_path, HETC_RECORDS_READ, &t->replay);
    if (status && !t->options.simulate_path[0]) status = hetc_status_annotate(status, "--simulate");
  }
  /* With no path the store opens the per-user one, creating its directory. */
  if (!status) {
    if (t->options.store) t->store = t->options.store;
    else status = hetc_records_open(t->options.records_path, &t->store);
    if (status && t->options.records_path && !t->options.records_path[0])
      status = hetc_status_annotate(status, "--records");
  }
  if (!status && !(t->records_path = strdup(hetc_records_path(t->store))))
    status = hetc_status_new(HETC_STATUS_OUT_OF_MEMORY, "tuner");
  if (!status && t->options.registry) t->registry = t->options.registry;
  else if (!status) status = hetc_registry_open(&t->registry);
  /* Device peaks (the dev_peak_gflops feature, the end table's fraction of
   * peak) are the best the store keeps for each device, this run's
   * measurement folded in, before any feature row is computed. */
  /* The path as given, not the store's name: a server's URI keeps its
   * password there. */
  if (!status && !t->options.registry) hetc_registry_keep_peaks(t->registry, t->options.records_path, HETC_PEAKS_RECORD);
  if (!status) status = hetc_transfer_model_create(HETC_FEATURE_COUNT, NULL, &t->model);
  if (!status && t->options.transfer) {
    /* A saved global model spares a new process the retraining; without
     * one, the store trains it now. */
    hetc_status_t loaded = load_kept_model(t);
    if (loaded) {
      hetc_status_free(loaded);
      status = fit_global(t);
    } else {
      /* Saved after its fit, so it stands for the store as it is now. */
      status = hetc_records_count(t->store, &t->global_records);
    }
  }
  if (status) {
    hetc_tuner_free(t);
    return status;
  }
  *out_tuner = t;
  return NULL;
}

void hetc_tuner_free(hetc_tuner_t *t) {
  if (!t) return;
  for (int32_t i = 0; i < MAX_MEASURERS; ++i) hetc_measurer_free(t->measurers[i].measurer);
  hetc_transfer_model_free(t->model);
  hetc_space_overrides_free(t->overrides);
  if (t->registry != t->options.registry) hetc_registry_free(t->registry);
  hetc_records_close(t->replay);
  if (t->store != t->options.store) hetc_records_close(t->store);
  free(t->records_path);
  free(t);
}

int64_t hetc_tuner_records_written(const hetc_tuner_t *t) { return t ? t->records_written : 0; }

int32_t hetc_tuner_dropped(const hetc_tuner_t *t) { return t ? t->dropped : 0; }

const char *hetc_tuner_records_path(const hetc_tuner_t *t) { return t ? t->records_path : NULL; }

double hetc_tuner_overhead_seconds(const hetc_tuner_t *t) {
  return hetc_now_seconds() - t->created - t->measure_seconds;
}

static hetc_status_t measurer_for(hetc_tuner_t *t, const char *target, int32_t device_index,
                                  const hetc_plugin_device_t *device, hetc_measurer_t **out) {
  int32_t free_slot = -1;
  for (int32_t i = 0; i < MAX_MEASURERS; ++i) {
    if (t->measurers[i].measurer && !strcmp(t->measurers[i].target, target) &&
        t->measurers[i].device_index == device_index) {
      *out = t->measurers[i].measurer;
      return NULL;
    }
    if (!t->measurers[i].measurer && free_slot < 0) free_slot = i;
  }
  if (free_slot < 0) return hetc_status_new(HETC_STATUS_UNSUPPORTED, "more than %d targets", MAX_MEASURERS);
  HETC_RETURN_IF_ERROR(hetc_measurer_create(target, device_index, &t->options.measure,
                                            &t->measurers[free_slot].measurer));
  if (device)
    HETC_RETURN_IF_ERROR(hetc_measurer_set_device(t->measurers[free_slot].measurer, device->fingerprint,
                                                  device->kind == HETC_PLUGIN_DEVICE_CPU));
  snprintf(t->measurers[free_slot].target, sizeof(t->measurers[free_slot].target), "%s", target);
  t->measurers[free_slot].device_index = device_index;
  *out = t->measurers[free_slot].measurer;
  return NULL;
}

/* ------------------------------------------------------------------------ */
/* One task                                                                 */
/* ------------------------------------------------------------------------ */

typedef struct task_t {
  hetc_tuner_t *tuner;
  hetc_plugin_entry_t *entry;
  int32_t device;
  const hetc_plugin_device_t *descriptor;
  const char *fingerprint;
  const hetc_plugin_workload_t *workload;
  char key[HETC_TASK_KEY_SIZE];
  double flops;
  hetc_task_space_t *space;
  /* Simulation: the replayed points, sorted, and the record of each. */
  int32_t num_replay;
  int64_t *replay_points;
  const hetc_record_t **replay_records;
  hetc_record_list_t replay_list;
  /* The task's own rows for its model. */
  rows_t own;
  float *scores_features; /* scratch for scoring */
  int64_t scores_capacity;
} task_t;

static int compare_i64(const void *a, const void *b) {
  int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
  return (x > y) - (x < y);
}

static int32_t replay_find(const task_t *task, int64_t point) {
  int32_t lo = 0, hi = task->num_replay - 1;
  while (lo <= hi) {
    int32_t mid = lo + (hi - lo) / 2;
    if (task->replay_points[mid] == point) return mid;
    if (task->replay_points[mid] < point) lo = mid + 1;
    else hi = mid - 1;
  }
  return -1;
}

/* The global index of a stored record in this task's space; -1 when the
 * record's template or config is not part of it (any more). */
static int64_t record_point(const task_t *task, const hetc_record_t *rec) {
  int32_t n = hetc_task_space_template_count(task->space);
  for (int32_t t = 0; t < n; ++t) {
    if (strcmp(hetc_task_space_template_name(task->space, t), rec->template_name) ||
        hetc_task_space_template_version(task->space, t) != rec->template_version)
      continue;
    hetc_config_json_t config;
    hetc_status_t status = hetc_config_from_json(rec->config_json, &config);
    int64_t local = -1;
    if (!status) status = hetc_space_index_of(hetc_task_space_template_space(task->space, t), &config.config, &local);
    hetc_config_json_free(&config);
    if (status) {
      hetc_status_free(status);
      return -1;
    }
    return hetc_task_space_global(task->space, t, local);
  }
  return -1;
}

/* The search's view of the task space (in simulation, of the replayed
 * points only: the replay can answer nothing else). */
static int64_t adapter_valid_count(void *user) {
  task_t *task = user;
  return task->replay_points ? task->num_replay : hetc_task_space_valid_count(task->space);
}
static hetc_status_t adapter_valid_at(void *user, int64_t n, int64_t *out) {
  task_t *task = user;
  if (!task->replay_points) return hetc_task_space_valid_at(task->space, n, out);
  if (n < 0 || n >= task->num_replay) return hetc_status_new(HETC_STATUS_INVALID_ARGUMENT, "point %lld", (long long)n);
  *out = task->replay_points[n];
  return NULL;
}
static hetc_status_t adapter_sample(void *user, uint64_t *rng, int64_t *out) {
  task_t *task = user;
  if (!task->replay_points) return hetc_task_space_sample_valid(task->space, rng, out);
  if (task->num_replay == 0) return hetc_status_new(HETC_STATUS_UNSUPPORTED, "nothing replayed");
  *out = task->replay_points[hetc_space_random_below(rng, (uint64_t)task->num_replay)];
  return NULL;
}
static hetc_status_t adapter_neighbor(void *user, int64_t index, uint64_t *rng, int64_t *out) {
  task_t *task = user;
  for (int tries = 0; tries < (task->replay_points ? 16 : 1); ++tries) {
    HETC_RETURN_IF_ERROR(hetc_task_space_random_neighbor(task->space, index, rng, out));
    if (!task->replay_points || replay_find(task, *out) >= 0) return NULL;
  }
  return hetc_status_new(HETC_STATUS_UNSUPPORTED, "no replayed neighbour");
}
static int32_t adapter_decode(void *user, int64_t index, int32_t *out_group, int64_t *out_choices) {
  task_t *task = user;
  int64_t local = 0;
  hetc_status_t status = hetc_task_space_locate(task->space, index, out_group, &local);
  if (status) {
    hetc_status_free(status);
    return 0;
  }
  const hetc_plugin_space_t *space = hetc_task_space_template_space(task->space, *out_group);
  int32_t knobs = hetc_space_knob_count(space);
  if (knobs > HETC_SEARCH_MAX_KNOBS) knobs = HETC_SEARCH_MAX_KNOBS;
  for (int32_t k = 0; k < knobs; ++k) out_choices[k] = hetc_space_knob_choice(space, local, k);
  return knobs;
}
static hetc_status_t adapter_encode(void *user, int32_t group, const int64_t *choices, int64_t *out) {
  task_t *task = user;
  if (group < 0 || group >= hetc_task_space_template_count(task->space))
    return hetc_status_new(HETC_STATUS_INVALID_ARGUMENT, "template %d", group);
  int64_t local = 0;
  HETC_RETURN_IF_ERROR(
      hetc_space_index_from_choices(hetc_task_space_template_space(task->space, group), choices, &local));
  *out = hetc_task_space_global(task->space, group, local);
  return NULL;
}
static int adapter_is_valid(void *user, int64_t index) {
  task_t *task = user;
  if (task->replay_points) return replay_find(task, index) >= 0;
  return hetc_task_space_is_valid(task->space, index);
}

/* Features of one point of the task space (NaN where unknown). */
static void point_features(task_t *task, int64_t point, float *row) {
  int32_t t = 0;
  hetc_space_config_t config;
  hetc_status_t status = hetc_task_space_config(task->space, point, &t, &config);
  if (!status)
    status = hetc_features_extract(task->entry->plugin, task->entry->instance, task->device, task->workload, t,
                                   &config.view, row);
  if (status) {
    for (int32_t f = 0; f < HETC_FEATURE_COUNT; ++f) row[f] = NAN;
    hetc_status_free(status);
  }
}

static hetc_status_t score_points(void *user, const int64_t *points, int32_t count, float *out_scores) {
  task_t *task = user;
  if (count > task->scores_capacity) {
    float *f = realloc(task->scores_features, sizeof(float) * (size_t)count * HETC_FEATURE_COUNT);
    if (!f) return hetc_status_new(HETC_STATUS_OUT_OF_MEMORY, "scoring");
    task->scores_features = f;
    task->scores_capacity = count;
  }
  for (int32_t i = 0; i < count; ++i) point_features(task, points[i], task->scores_features + (size_t)i * HETC_FEATURE_COUNT);
  return hetc_transfer_model_predict(task->tuner->model, task->scores_features, count, out_scores);
}

static void task_free(task_t *task) {
  hetc_task_space_free(task->space);
  free(task->replay_points);
  free(task->replay_records);
  hetc_record_list_free(&task->replay_list);
  rows_free(&task->own);
  free(task->scores_features);
}

/* Loads the replayed records of this workload and their points. */
static hetc_status_t load_replay(task_t *task) {
  hetc_record_filter_t filter = hetc_record_filter_any();
  filter.target = hetc_entry_name(task->entry);
  filter.workload_key = task->key;
  HETC_RETURN_IF_ERROR(hetc_records_query(task->tuner->replay, &filter, &task->replay_list));
  int32_t n = task->replay_list.count;
  task->replay_points = malloc(sizeof(int64_t) * (size_t)(n + 1));
  task->replay_records = malloc(sizeof(hetc_record_t *) * (size_t)(n + 1));
  if (!task->replay_points || !task->replay_records) return hetc_status_new(HETC_STATUS_OUT_OF_MEMORY, "replay");
  /* Sort (point, record) pairs by point; keep the first record of each. */
  int64_t *pairs = malloc(sizeof(int64_t) * 2 * (size_t)(n + 1));
  if (!pairs) return hetc_status_new(HETC_STATUS_OUT_OF_MEMORY, "replay");
  int32_t m = 0;
  for (int32_t i = 0; i < n; ++i) {
    int64_t point = record_point(task, &task->replay_list.items[i]);
    if (point < 0) continue;
    pairs[2 * m] = point;
    pairs[2 * m + 1] = i;
    ++m;
  }
  qsort(pairs, (size_t)m, 2 * sizeof(int64_t), compare_i64);
  task->num_replay = 0;
  for (int32_t i = 0; i < m; ++i) {
    if (task->num_replay && task->replay_points[task->num_replay - 1] == pairs[2 * i]) continue;
    task->replay_points[task->num_replay] = pairs[2 * i];
    task->replay_records[task->num_replay++] = &task->replay_list.items[pairs[2 * i + 1]];
  }
  free(pairs);
  if (task->num_replay == 0)
    return hetc_status_new(HETC_STATUS_NOT_FOUND, "%s: the replayed records hold nothing for %s on '%s'",
                           task->tuner->options.simulate_path, task->key, hetc_entry_name(task->entry));
  task->fingerprint = task->tuner->options.simulate_fingerprint ? task->tuner->options.simulate_fingerprint
                                                                 : task->replay_records[0]->device_fingerprint;
  return NULL;
}

/* Fills a fresh record's identity for template t's `config`. */
static hetc_status_t record_identity(task_t *task, int32_t t, const hetc_space_config_t *config,
                                     hetc_record_t *rec) {
  const hetc_plugin_t *p = task->entry->plugin;
  rec->target = strdup(p->name);
  rec->plugin_version = strdup(p->version ? p->version : "");
  rec->device_kind = strdup(hetc_record_device_kind(task->descriptor));
  rec->device_fingerprint = strdup(task->fingerprint);
  rec->template_name = strdup(hetc_task_space_template_name(task->space, t));
  rec->template_version = hetc_task_space_template_version(task->space, t);
  rec->workload_key = strdup(task->key);
  rec->config_index = config->index; /* the template's own index */
  rec->config_json = hetc_config_to_json(&config->view);
  rec->timestamp = (int64_t)time(NULL);
  rec->hetc_version = strdup(HETC_VERSION_STRING);
  if (!rec->target || !rec->plugin_version || !rec->device_kind || !rec->device_fingerprint ||
      !rec->template_name || !rec->workload_key || !rec->config_json || !rec->hetc_version)
    return hetc_status_new(HETC_STATUS_OUT_OF_MEMORY, "record");
  return NULL;
}

/* Sleeps `seconds`, waking early for a signal (common/interrupt.h). */
static void wait_as_measured(double seconds) {
  const double until = hetc_now_seconds() + seconds;
  for (double left = seconds; left > 0 && !hetc_interrupt_signal(); left = until - hetc_now_seconds()) {
    const double step = left < 0.1 ? left : 0.1;
    const struct timespec pause = {(time_t)step, (long)((step - (double)(time_t)step) * 1e9)};
    nanosleep(&pause, NULL);
  }
}

/* Answers a batch from the replayed records instead of measuring. */
static void replay_batch(const task_t *task, const int64_t *points, int32_t count, hetc_record_t *records) {
  double longest_build = 0, measuring = 0;
  for (int32_t i = 0; i < count; ++i) {
    const hetc_record_t *from = task->replay_records[replay_find(task, points[i])];
    hetc_record_t *rec = &records[i];
    rec->error = from->error;
    rec->num_costs = from->num_costs;
    memcpy(rec->costs, from->costs, sizeof(rec->costs));
    rec->error_message = from->error_message ? strdup(from->error_message) : NULL;
    rec->build_seconds = from->build_seconds;
    rec->total_seconds = from->total_seconds;
    if (from->build_seconds > longest_build) longest_build = from->build_seconds;
    if (from->total_seconds > from->build_seconds) measuring += from->total_seconds - from->build_seconds;
  }
  if (task->tuner->options.simulate_in_time) wait_as_measured(longest_build + measuring);
}

static void print_progress(const task_t *task, const char *label, double current, double best, int32_t done,
                           int32_t total, double seconds, int final) {
  FILE *out = task->tuner->options.progress;
  if (!out) return;
  int tty = isatty(fileno(out));
  char shape[64] = "";
  const hetc_plugin_workload_t *w = task->workload;
  if (w->op == HETC_PLUGIN_OP_CONV2D)
    snprintf(shape, sizeof(shape), "conv2d %lldx%lldx%lld k%d", (long long)w->output.shape[1],
             (long long)w->output.shape[2], (long long)w->output.shape[3], w->kernel[0]);
  else
    snprintf(shape, sizeof(shape), "dense %lldx%lld", (long long)w->inputs[0].shape[1],
             (long long)w->output.shape[1]);
  fprintf(out, "%s%s %s on %s | Current/Best: %7.1f/%7.1f GFLOPS | Progress: (%d/%d) | %.1f s%s",
          tty ? "\r\033[K" : "", label, shape, hetc_entry_name(task->entry), current, best, done, total, seconds,
          tty && !final ? "" : "\n");
  fflush(out);
}

/* What became of each candidate of a batch. */
typedef enum batch_state_t {
  BATCH_TAKEN,    /* claimed: this tuner measures it */
  BATCH_MEASURED, /* measured (or its own failure): records[i] holds it, to be kept */
  BATCH_RECORDED, /* recorded by another tuner meanwhile: records[i] is that record */
  BATCH_BUSY,     /* another tuner is measuring it */
  BATCH_DROPPED,  /* not measured, not its fault: no record (measure.h) */
} batch_state_t;

static hetc_status_t claim_batch(hetc_tuner_t *tuner, hetc_record_t *records, int32_t count, batch_state_t *state) {
  hetc_claim_t claims[MAX_BATCH];
  HETC_RETURN_IF_ERROR(hetc_records_claim(tuner->store, records, count, claims));
  for (int32_t i = 0; i < count; ++i) {
    state[i] = claims[i] == HETC_CLAIM_TAKEN ? BATCH_TAKEN : claims[i] == HETC_CLAIM_BUSY ? BATCH_BUSY : BATCH_RECORDED;
    if (state[i] != BATCH_RECORDED) continue;
    hetc_record_t stored;
    memset(&stored, 0, sizeof(stored));
    int found = 0;
    HETC_RETURN_IF_ERROR(hetc_records_find(tuner->store, &records[i], &stored, &found));
    if (!found) {
      state[i] = BATCH_BUSY; /* pruned since: nothing to learn */
      continue;
    }
    hetc_record_clear(&records[i]);
    records[i] = stored;
  }
  return NULL;
}

/* Measures (or, in simulation, replays) the candidates this tuner claimed;
 * each becomes MEASURED or DROPPED. On failure (interrupted included) the
 * whole batch is dropped. */
static hetc_status_t measure_batch(task_t *task, hetc_measurer_t *measurer, const hetc_plugin_workload_t *workload,
                                   const int64_t *points, const hetc_measure_input_t *inputs, hetc_record_t *records,
                                   int32_t count, batch_state_t *state) {
  int32_t slot[MAX_BATCH], n = 0;
  int64_t claimed_points[MAX_BATCH];
  hetc_measure_input_t claimed_inputs[MAX_BATCH];
  for (int32_t i = 0; i < count; ++i) {
    if (state[i] != BATCH_TAKEN) continue;
    claimed_points[n] = points[i];
    claimed_inputs[n] = inputs[i];
    slot[n++] = i;
  }
  hetc_record_t *measured = calloc((size_t)n + 1, sizeof(hetc_record_t));
  uint8_t kept[MAX_BATCH];
  if (!measured) return hetc_status_new(HETC_STATUS_OUT_OF_MEMORY, "tuner");
  hetc_status_t status = NULL;
  if (task->tuner->replay) {
    replay_batch(task, claimed_points, n, measured);
    memset(kept, 1, sizeof(kept));
  } else if (n > 0) {
    status = hetc_measurer_run(measurer, workload, claimed_inputs, n, measured, kept);
  }
  for (int32_t k = 0; k < n; ++k) {
    hetc_record_t *to = &records[slot[k]];
    state[slot[k]] = !status && kept[k] ? BATCH_MEASURED : BATCH_DROPPED;
    to->error = measured[k].error;
    to->num_costs = measured[k].num_costs;
    memcpy(to->costs, measured[k].costs, sizeof(to->costs));
    free(to->error_message);
    to->error_message = measured[k].error_message; /* moved */
    measured[k].error_message = NULL;
    to->build_seconds = measured[k].build_seconds;
    to->total_seconds = measured[k].total_seconds;
    hetc_record_clear(&measured[k]);
  }
  free(measured);
  if (status) task->tuner->dropped = n;
  return status;
}

/* The records of `count` candidates in `state` that `want`, as a compact
 * array of shallow copies (the strings stay the batch's). */
static int32_t gather(const hetc_record_t *records, int32_t count, const batch_state_t *state, batch_state_t want,
                      hetc_record_t *out) {
  int32_t n = 0;
  for (int32_t i = 0; i < count; ++i)
    if (state[i] == want) out[n++] = records[i];
  return n;
}

/* A batch the store would not take (still locked after the busy timeout,
 * a full disk) is written beside it as JSON Lines, so that no measurement
 * is lost: `hetc records import` adds it later. Returns what to tell. */
static hetc_status_t rescue_batch(const hetc_tuner_t *tuner, const hetc_record_t *records, int32_t count,
                                  hetc_status_t failure) {
  char path[4096];
  /* Beside a file; for a store on a server, in the working directory. */
  snprintf(path, sizeof(path), "%s.unsaved-%lld.jsonl",
           hetc_records_names_server(tuner->records_path) ? "hetc-records" : tuner->records_path,
           (long long)getpid());
  FILE *file = fopen(path, "a");
  int written = file != NULL;
  for (int32_t i = 0; written && i < count; ++i) {
    char *line = NULL;
    hetc_status_t status = hetc_record_to_jsonl(&records[i], &line);
    written = !status && fprintf(file, "%s\n", line) >= 0;
    hetc_status_free(status);
    free(line);
  }
  if (file && fclose(file) != 0) written = 0;
  hetc_status_t told =
      written ? hetc_status_new(hetc_status_code(failure),
                                "%s; the %d records measured in this batch are kept in %s instead (hetc records "
                                "import %s adds them)",
                                hetc_status_message(failure), count, path, path)
              : hetc_status_new(hetc_status_code(failure),
                                "%s; the %d records measured in this batch are lost (%s could not be written either)",
                                hetc_status_message(failure), count, path);
  hetc_status_free(failure);
  return told;
}

/* Writes the measurement holds of the batch (tune/device_lock.h) to the
 * store beside its records. */
static hetc_status_t keep_holds(hetc_tuner_t *tuner) {
  enum { AT_ONCE = 256 };
  hetc_measure_hold_t *holds = malloc(AT_ONCE * sizeof(*holds));
  if (!holds) return hetc_status_new(HETC_STATUS_OUT_OF_MEMORY, "tuner");
  hetc_status_t status = NULL;
  for (int32_t n; !status && (n = hetc_device_lock_take_holds(holds, AT_ONCE)) > 0;)
    status = hetc_records_note_holds(tuner->store, holds, n);
  free(holds);
  return status;
}

/* Adds what this batch measured to the store (releasing those claims) and
 * gives back the claims on what it dropped. */
static hetc_status_t keep_batch(hetc_tuner_t *tuner, const hetc_record_t *records, int32_t count,
                                const batch_state_t *state) {
  hetc_record_t *subset = calloc(MAX_BATCH, sizeof(hetc_record_t)); /* shallow copies */
  if (!subset) return hetc_status_new(HETC_STATUS_OUT_OF_MEMORY, "tuner");
  int32_t n = gather(records, count, state, BATCH_MEASURED, subset), added = 0;
  hetc_status_t status = n > 0 ? hetc_records_add_new(tuner->store, subset, n, &added) : NULL;
  if (status && hetc_status_code(status) != HETC_STATUS_INVALID_ARGUMENT && !hetc_interrupt_signal())
    status = rescue_batch(tuner, subset, n, status);
  if (!status) {
    tuner->records_written += added;
    n = gather(records, count, state, BATCH_DROPPED, subset);
    status = hetc_records_unclaim(tuner->store, subset, n);
  }
  free(subset);
  if (!status) status = keep_holds(tuner);
  return status;
}

hetc_status_t hetc_tuner_tune_task(hetc_tuner_t *tuner, const char *target, const hetc_plugin_workload_t *workload,
                                   const char *label, int32_t trials, double deadline_s,
                                   hetc_tune_task_result_t *result) {
  double start = hetc_now_seconds(), measuring = 0;
  memset(result, 0, sizeof(*result));
  task_t task;
  memset(&task, 0, sizeof(task));
  task.tuner = tuner;
  task.workload = workload;
  hetc_workload_key(workload, task.key, sizeof(task.key));
  /* `target` as the user named it: NAME (the options' device) or NAME:INDEX. */
  hetc_status_t status = hetc_registry_target_spec(tuner->registry, target, &task.entry, &task.device);
  if (!status && task.device < 0) task.device = tuner->options.device_index;
  const char *name = status ? target : hetc_entry_name(task.entry);
  if (!status) {
    task.descriptor = hetc_entry_device(task.entry, task.device);
    if (!task.descriptor)
      status = hetc_status_new(HETC_STATUS_INVALID_ARGUMENT, "target '%s' has no device %d", target, task.device);
  }
  if (!status) {
    task.fingerprint = task.descriptor->fingerprint ? task.descriptor->fingerprint : "";
    status = hetc_task_space_create(task.entry->plugin, task.entry->instance, task.device, workload,
                                    tuner->overrides, &task.space);
  }
  if (!status && tuner->replay) status = load_replay(&task);
  hetc_search_t *search = NULL;
  hetc_measurer_t *measurer = NULL;
  if (!status && !tuner->replay) status = measurer_for(tuner, name, task.device, task.descriptor, &measurer);

  snprintf(result->workload_key, sizeof(result->workload_key), "%s", task.key);
  snprintf(result->target, sizeof(result->target), "%s", target);
  task.flops = result->flops = hetc_workload_flops(workload);
  double peak = task.descriptor ? hetc_device_peak_gflops(task.descriptor) : 0;
  double best_gflops = 0;
  int64_t best_point = -1;

  /* What the store already holds for this task: never measured again,
   * and the model's first rows. */
  hetc_record_list_t stored = {0, NULL};
  if (!status) {
    hetc_record_filter_t filter = hetc_record_filter_any();
    filter.target = name;
    filter.device_fingerprint = task.fingerprint;
    filter.workload_key = task.key;
    status = hetc_records_query(tuner->store, &filter, &stored);
  }
  hetc_search_space_t view = {&task, adapter_valid_count, adapter_valid_at, adapter_sample, adapter_neighbor,
                              adapter_decode, adapter_encode, adapter_is_valid};
  hetc_search_options_t search_options;
  memset(&search_options, 0, sizeof(search_options));
  search_options.seed = tuner->options.seed;
  if (!status)
    status = hetc_search_create(tuner->options.search, &view,
                                tuner->options.search == HETC_SEARCH_MODEL ? score_points : NULL, &task,
                                &search_options, &search);
  for (int32_t i = 0; !status && i < stored.count; ++i) {
    const hetc_record_t *rec = &stored.items[i];
    int64_t point = record_point(&task, rec);
    if (point < 0) continue;
    double cost = rec->error == HETC_RECORD_OK ? hetc_record_median_cost(rec) : INFINITY;
    double gflops = isfinite(cost) && cost > 0 ? task.flops / cost * 1e-9 : 0;
    status = hetc_search_mark_visited(search, &point, 1);
    if (!status) status = hetc_search_update(search, &point, &gflops, 1);
    float *row = status ? NULL : rows_append(&task.own, cost, 0);
    if (!status && !row) status = hetc_status_new(HETC_STATUS_OUT_OF_MEMORY, "tuner");
    if (!status) point_features(&task, point, row);
    ++result->from_store;
    if (gflops > best_gflops) {
      best_gflops = gflops;
      best_point = point;
      result->best_seconds = cost;
    }
  }
  /* Every template's default config is measured first (unless stored):
   * graph-level selection weighs it against the tuned ones, and a search
   * that never tried it could keep a config slower than the default. */
  int64_t defaults[HETC_TUNER_MAX_DEFAULTS];
  int32_t num_defaults = 0;
  for (int32_t t = 0; !status && task.space && t < hetc_task_space_template_count(task.space) &&
                      num_defaults < HETC_TUNER_MAX_DEFAULTS;
       ++t) {
    const hetc_plugin_space_t *ts = hetc_task_space_template_space(task.space, t);
    int64_t local = 0;
    hetc_status_t none = ts ? hetc_space_default(ts, &local) : NULL;
    const int64_t point = ts && !none ? hetc_task_space_global(task.space, t, local) : -1;
    hetc_status_free(none);
    int stored_already = 0;
    for (int32_t i = 0; i < stored.count && !stored_already; ++i) stored_already = record_point(&task, &stored.items[i]) == point;
    if (point >= 0 && !stored_already && adapter_is_valid(&task, point)) {
      defaults[num_defaults++] = point;
      status = hetc_search_mark_visited(search, &point, 1);
    }
  }
  hetc_record_list_free(&stored);

  double replay_best = 0;
  for (int32_t i = 0; i < task.num_replay; ++i) {
    double cost = task.replay_records[i]->error == HETC_RECORD_OK ? hetc_record_median_cost(task.replay_records[i]) : INFINITY;
    if (isfinite(cost) && cost > 0 && task.flops / cost * 1e-9 > replay_best) replay_best = task.flops / cost * 1e-9;
  }
  result->replay_best_gflops = replay_best;
  double stop_at = tuner->options.simulate_stop_fraction * replay_best;

  /* Rounds: propose, measure, record, learn. Stored records count
   * towards the trials, so a rerun resumes where an interrupted one
   * stopped instead of starting over. */
  /* done: trials of the task this run has learned from, towards `wanted`;
   * measured: those it measured itself (another tuner's records count
   * towards the first, not the second). */
  int32_t done = 0, measured = 0, since_best = 0;
  int32_t wanted = trials > result->from_store ? trials - result->from_store : 0;
  double run_best = 0;
  double *best_after = calloc((size_t)trials + 1, sizeof(double));
  hetc_record_t *records = calloc(MAX_BATCH, sizeof(hetc_record_t));
  hetc_space_config_t *configs = calloc(MAX_BATCH, sizeof(hetc_space_config_t));
  hetc_measure_input_t *inputs = calloc(MAX_BATCH, sizeof(hetc_measure_input_t));
  float *labels = NULL;
  if (!status && (!best_after || !records || !configs || !inputs))
    status = hetc_status_new(HETC_STATUS_OUT_OF_MEMORY, "tuner");
  while (!status && done < wanted) {
    if (hetc_interrupt_signal()) {
      status = hetc_status_new(HETC_STATUS_UNAVAILABLE, "interrupted");
      break;
    }
    if (deadline_s > 0 && hetc_now_seconds() >= deadline_s) break;
    int stopping = tuner->options.early_stopping;
    if (stopping > 0 && since_best >= stopping) break;
    if (stop_at > 0 && run_best >= stop_at) break;
    /* The model's fit and the search's proposals are CPU work: they take
     * the cores as builds do, never beside a CPU measurement. */
    const int working = !tuner->replay;
    if (working) status = hetc_device_lock_cpu_work_begin();
    if (status) break;
    if (tuner->options.search == HETC_SEARCH_MODEL) {
      float *grown = realloc(labels, sizeof(float) * (size_t)(task.own.count + 1));
      if (grown) {
        labels = grown;
        rows_labels(&task.own, labels);
        status = hetc_transfer_model_fit_task(tuner->model, task.own.features, labels, task.own.count);
      } else {
        status = hetc_status_new(HETC_STATUS_OUT_OF_MEMORY, "tuner");
      }
    }
    int32_t want = tuner->options.batch < wanted - done ? tuner->options.batch : wanted - done;
    int64_t points[MAX_BATCH];
    int32_t got = 0;
    while (!status && num_defaults > 0 && got < want) points[got++] = defaults[--num_defaults];
    int32_t searched = 0;
    if (!status && got < want) status = hetc_search_next_batch(search, want - got, points + got, &searched);
    got += searched;
    if (working) hetc_device_lock_cpu_work_end();
    if (status || got == 0) break;
    for (int32_t i = 0; i < got && !status; ++i) {
      hetc_record_clear(&records[i]);
      status = hetc_task_space_config(task.space, points[i], &inputs[i].template_index, &configs[i]);
      if (!status) status = record_identity(&task, inputs[i].template_index, &configs[i], &records[i]);
      inputs[i].config = &configs[i].view;
    }
    if (status) break;
    /* Claims first: what another tuner on this store is measuring, or has
     * recorded since this task began, is not measured again. */
    batch_state_t state[MAX_BATCH];
    status = claim_batch(tuner, records, got, state);
    if (status) break;
    double before = hetc_now_seconds();
    status = measure_batch(&task, measurer, workload, points, inputs, records, got, state);
    measuring += tuner->replay ? 0 : hetc_now_seconds() - before;
    if (status) break;
    status = keep_batch(tuner, records, got, state);
    if (status) break;
    /* Learn from what was measured here and what another tuner recorded;
     * the others' claims are theirs to measure. */
    int32_t learned = 0;
    for (int32_t i = 0; i < got; ++i) {
      if (state[i] != BATCH_MEASURED && state[i] != BATCH_RECORDED) continue;
      if (i != learned) {
        hetc_record_t moved = records[learned];
        records[learned] = records[i];
        records[i] = moved;
        points[learned] = points[i];
      }
      if (state[i] == BATCH_RECORDED) ++result->from_store;
      if (state[i] == BATCH_MEASURED) {
        ++measured;
        if (records[i].error != HETC_RECORD_OK) ++result->failed;
      }
      ++learned;
    }
    got = learned;
    double gflops[MAX_BATCH];
    double current = 0;
    for (int32_t i = 0; i < got && !status; ++i) {
      double cost = records[i].error == HETC_RECORD_OK ? hetc_record_median_cost(&records[i]) : INFINITY;
      gflops[i] = isfinite(cost) && cost > 0 ? task.flops / cost * 1e-9 : 0;
      if (gflops[i] > current) current = gflops[i];
      float *row = rows_append(&task.own, cost, 0);
      if (!row) status = hetc_status_new(HETC_STATUS_OUT_OF_MEMORY, "tuner");
      else point_features(&task, points[i], row);
      ++since_best;
      if (gflops[i] > run_best) run_best = gflops[i];
      if (gflops[i] > best_gflops) {
        best_gflops = gflops[i];
        best_point = points[i];
        result->best_seconds = cost;
        since_best = 0;
      }
      best_after[done + i] = run_best;
    }
    if (!status) status = hetc_search_update(search, points, gflops, got);
    done += got;
    print_progress(&task, label, current, best_gflops, result->from_store + done, trials, hetc_now_seconds() - start, 0);
    if (!status && tuner->options.after_batch &&
        tuner->options.after_batch(tuner->options.after_batch_data, result->from_store + done, result->best_seconds))
      break;
  }
  if (!status && tuner->options.progress && isatty(fileno(tuner->options.progress)))
    print_progress(&task, label, 0, best_gflops, result->from_store + done, trials, hetc_now_seconds() - start, 1);
  double reference = replay_best > run_best ? replay_best : run_best;
  for (int32_t i = 0; i < done; ++i) {
    if (reference > 0 && best_after[i] >= 0.95 * reference) {
      result->trials_to_95 = i + 1;
      break;
    }
  }
  for (int32_t i = 0; records && i < MAX_BATCH; ++i) hetc_record_clear(&records[i]);
  if (best_point >= 0) {
    int32_t t = 0;
    int64_t local = 0;
    if (!hetc_task_space_locate(task.space, best_point, &t, &local))
      snprintf(result->template_name, sizeof(result->template_name), "%s",
               hetc_task_space_template_name(task.space, t));
  }
  result->trials = measured;
  result->best_gflops = best_gflops;
  result->peak_fraction = peak > 0 ? best_gflops / peak : 0;
  result->seconds = hetc_now_seconds() - start;
  result->measure_seconds = measuring;
  tuner->measure_seconds += measuring;
  free(labels);
  free(best_after);
  free(records);
  free(configs);
  free(inputs);
  hetc_search_free(search);
  task_free(&task);
  return status ? hetc_status_annotate(status, "tuning %s on %s", result->workload_key, target) : NULL;
}

/* Retrains the global model on the store (now holding the task just
 * tuned) once the store has grown by a quarter since the model was fitted
 * or loaded, and saves a model not saved yet beside the store for the next
 * process. A fit costs time in proportion to the store, so refitting after
 * every task of a large model made the fits alone a few percent of the
 * run; refitting on a quarter's growth keeps their sum in proportion to the
 * records. */
static hetc_status_t refresh_global(hetc_tuner_t *tuner) {
  int64_t count = 0;
  HETC_RETURN_IF_ERROR(hetc_records_count(tuner->store, &count));
  if (count > tuner->global_records && (double)count >= GLOBAL_REFIT_GROWTH * (double)tuner->global_records) {
    /* CPU work, as the per-task fits (hetc_tuner_tune_task). */
    if (!tuner->replay) HETC_RETURN_IF_ERROR(hetc_device_lock_cpu_work_begin());
    hetc_status_t fitted = fit_global(tuner);
    if (!tuner->replay) hetc_device_lock_cpu_work_end();
    HETC_RETURN_IF_ERROR(fitted);
  }
  if (!tuner->global_unsaved) return NULL;
  char *bytes = NULL;
  size_t length = 0;
  hetc_status_t status =
      hetc_transfer_model_global_bytes(tuner->model, hetc_records_model_name(tuner->store), &bytes, &length);
  if (!status) status = hetc_records_put_model(tuner->store, bytes, length);
  free(bytes);
  if (!status) tuner->global_unsaved = 0;
  return status;
}

/* Every template the overrides name must be offered for some task of the
 * model on some target (one overrides file serves the whole model, so a
 * single task need not offer them all); a typo is caught before tuning. */
static hetc_status_t check_override_templates(hetc_tuner_t *tuner, const hetc_graph_t *graph,
                                              const hetc_task_list_t *tasks, const char *const *targets,
                                              int32_t num_targets) {
  enum { MAX_NAMES = 512 };
  const char *names[MAX_NAMES];
  int32_t count = 0;
  for (int32_t d = 0; d < num_targets; ++d) {
    hetc_plugin_entry_t *entry = NULL;
    int32_t device = -1;
    HETC_RETURN_IF_ERROR(hetc_registry_target_spec(tuner->registry, targets[d], &entry, &device));
    if (device < 0) device = tuner->options.device_index;
    for (int32_t i = 0; i < tasks->count; ++i) {
      hetc_plugin_tensor_t inputs[HETC_MAX_NODE_INPUTS];
      hetc_plugin_workload_t workload;
      HETC_RETURN_IF_ERROR(hetc_graph_node_workload(graph, tasks->tasks[i].first_node, inputs, &workload));
      int32_t n = hetc_entry_template_count(entry, device, &workload);
      for (int32_t t = 0; t < n; ++t) {
        const char *name = hetc_entry_template_name(entry, device, &workload, t);
        int32_t seen = 0;
        while (name && seen < count && strcmp(names[seen], name)) ++seen;
        if (name && seen == count && count < MAX_NAMES) names[count++] = name;
      }
    }
  }
  hetc_status_t status = hetc_space_overrides_check_templates(tuner->overrides, targets[0], names, count);
  return status ? hetc_status_recode(status, HETC_STATUS_BAD_INPUT) : NULL;
}

/* Marks the tasks `task_numbers` names (all when it is NULL) and refuses
 * a number beyond the model's tasks. */
/* The graph as compile optimises it for these targets: for the oldest ABI
 * minor among their plugins (a target that does not resolve counts as
 * this hetc's; hetc_registry_target_spec reports it where it is used). */
static hetc_status_t optimize_for_targets(hetc_registry_t *registry, const char *const *targets, int32_t num_targets,
                                          hetc_graph_t *graph) {
  uint32_t level = HETC_ABI_LEVEL_NOW;
  for (int32_t d = 0; d < num_targets; ++d) {
    hetc_plugin_entry_t *entry = NULL;
    int32_t device = -1;
    hetc_status_t status = hetc_registry_target_spec(registry, targets[d], &entry, &device);
    if (!status && hetc_entry_abi_level(entry) < level) level = hetc_entry_abi_level(entry);
    hetc_status_free(status);
  }
  return hetc_graph_optimize_for(graph, level);
}

static hetc_status_t select_tasks(const int32_t *task_numbers, int32_t num_task_numbers, int32_t task_count,
                                  uint8_t *selected) {
  if (!task_numbers) {
    memset(selected, 1, (size_t)task_count);
    return NULL;
  }
  for (int32_t k = 0; k < num_task_numbers; ++k) {
    int32_t number = task_numbers[k];
    if (number < 1 || number > task_count)
      return hetc_status_new(HETC_STATUS_BAD_INPUT, "--tasks: the model has tasks 1 to %d, not %d", task_count,
                             number);
    selected[number - 1] = 1;
  }
  return NULL;
}

hetc_status_t hetc_tune_check_arguments(hetc_registry_t *registry, const hetc_graph_t *model,
                                        const char *const *targets, int32_t num_targets,
                                        const int32_t *task_numbers, int32_t num_task_numbers) {
  for (int32_t d = 0; d < num_targets; ++d) {
    hetc_plugin_entry_t *entry = NULL;
    int32_t device = -1;
    HETC_RETURN_IF_ERROR(hetc_registry_target_spec(registry, targets[d], &entry, &device));
  }
  if (!model || !task_numbers) return NULL;
  hetc_graph_t *graph = NULL;
  hetc_task_list_t *tasks = NULL;
  HETC_RETURN_IF_ERROR(hetc_graph_clone(model, &graph));
  hetc_status_t status = optimize_for_targets(registry, targets, num_targets, graph);
  if (!status) status = hetc_graph_extract_tasks(graph, &tasks);
  uint8_t *selected = status ? NULL : calloc((size_t)tasks->count + 1, 1);
  if (!status && !selected) status = hetc_status_new(HETC_STATUS_OUT_OF_MEMORY, "tuner");
  if (!status) status = select_tasks(task_numbers, num_task_numbers, tasks->count, selected);
  free(selected);
  hetc_task_list_free(tasks);
  hetc_graph_free(graph);
  return status;
}

hetc_status_t hetc_tuner_tune_graph(hetc_tuner_t *tuner, const hetc_graph_t *model, const char *const *targets,
                                    int32_t num_targets, hetc_tune_task_result_t **out_results,
                                    int32_t *out_count) {
  *out_results = NULL;
  *out_count = 0;
  hetc_graph_t *graph = NULL;
  hetc_task_list_t *tasks = NULL;
  HETC_RETURN_IF_ERROR(hetc_graph_clone(model, &graph));
  hetc_status_t status = optimize_for_targets(tuner->registry, targets, num_targets, graph);
  if (!status) status = hetc_graph_extract_tasks(graph, &tasks);
  int32_t total = tasks ? tasks->count * num_targets : 0;
  hetc_tune_task_result_t *results = status ? NULL : calloc((size_t)total + 1, sizeof(*results));
  if (!status && !results) status = hetc_status_new(HETC_STATUS_OUT_OF_MEMORY, "tuner");
  /* The budget follows each task's share of the model's time, estimated
   * by its FLOPs times its node count before anything is measured. */
  uint8_t *selected = status ? NULL : calloc((size_t)tasks->count + 1, 1);
  if (!status && !selected) status = hetc_status_new(HETC_STATUS_OUT_OF_MEMORY, "tuner");
  if (!status)
    status = select_tasks(tuner->options.task_numbers, tuner->options.num_task_numbers, tasks->count, selected);
  double weight_left = 0;
  for (int32_t i = 0; !status && i < tasks->count; ++i)
    if (selected[i]) weight_left += tasks->tasks[i].flops * tasks->tasks[i].count;
  weight_left *= num_targets;
  if (!status && tuner->overrides) status = check_override_templates(tuner, graph, tasks, targets, num_targets);
  double budget_end = tuner->options.time_budget_s > 0 ? hetc_now_seconds() + tuner->options.time_budget_s : 0;
  int32_t n = 0;
  for (int32_t i = 0; !status && i < tasks->count; ++i) {
    if (!selected[i]) continue;
    hetc_plugin_tensor_t inputs[HETC_MAX_NODE_INPUTS];
    hetc_plugin_workload_t workload;
    status = hetc_graph_node_workload(graph, tasks->tasks[i].first_node, inputs, &workload);
    for (int32_t d = 0; !status && d < num_targets; ++d) {
      hetc_plugin_entry_t *entry = NULL;
      int32_t device = -1;
      status = hetc_registry_target_spec(tuner->registry, targets[d], &entry, &device);
      if (status) break;
      if (device < 0) device = tuner->options.device_index;
      double weight = tasks->tasks[i].flops * tasks->tasks[i].count;
      double deadline = 0;
      if (budget_end > 0) {
        double left = budget_end - hetc_now_seconds();
        deadline = hetc_now_seconds() + (left > 0 ? left : 0) * (weight_left > 0 ? weight / weight_left : 1);
      }
      weight_left -= weight;
      if (!hetc_entry_supports(entry, device, &workload)) continue;
      char label[64];
      snprintf(label, sizeof(label), "[Task %2d/%2d]", i + 1, tasks->count);
      status = hetc_tuner_tune_task(tuner, targets[d], &workload, label, tuner->options.trials, deadline,
                                    &results[n]);
      if (!status) {
        results[n].task_number = i + 1;
        results[n++].count = tasks->tasks[i].count;
      }
      if (!status && tuner->options.transfer && !tuner->replay && !hetc_interrupt_signal())
        status = refresh_global(tuner);
    }
  }
  free(selected);
  hetc_task_list_free(tasks);
  hetc_graph_free(graph);
  if (status) {
    free(results);
    return status;
  }
  *out_results = results;
  *out_count = n;
  return NULL;
}
