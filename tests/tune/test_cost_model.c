/* The XGBoost cost model and its transfer policy (driver/records/cost_model.h,
 * driver/records/transfer_learning.h) on synthetic tuning tasks.
 *
 * Each synthetic task is a tiled kernel with a hidden throughput function:
 * a bump around a task-specific best pair of tile sizes, a task-specific
 * gain from vectorising, a preferred unroll factor, a mild reduction-tile
 * effect, irrelevant knobs, 3% measurement noise, and a register limit past
 * which a config fails (throughput 0). The task's best tile sizes are also
 * visible as two "workload" features, as cache sizes and shapes are in the
 * real feature schema, so a model trained on several tasks can predict the
 * optimum of a task it has not measured. */
#define _POSIX_C_SOURCE 200809L /* mkdtemp */

#include <dirent.h>
#include <math.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "common/fileio.h"
#include "records/cost_model.h"
#include "records/transfer_learning.h"

#define NUM_FEATURES 16
#define NUM_TASKS 8
#define TRAIN_ROWS 64    /* per task */
#define HELD_OUT_ROWS 256 /* per task */

/* Feature columns. */
enum {
  F_TILE_X = 0,    /* log2 of the spatial tile, 0..6 */
  F_TILE_Y = 1,    /* log2 of the other spatial tile, 0..6 */
  F_VECTORIZE = 2, /* 0 or 1 */
  F_UNROLL = 3,    /* 0..3 */
  F_RTILE = 4,     /* log2 of the reduction tile, 0..4 */
  F_NOISE0 = 5,    /* 5..7: knobs that do not matter */
  F_TASK_X = 8,    /* the task's best log2 tile x (a workload feature) */
  F_TASK_Y = 9,
  F_TASK_FLOPS = 10, /* differs per task, irrelevant to the order */
  F_FOOTPRINT = 11,  /* tile_x + tile_y: what the register limit reads */
  F_DEVICE = 12,     /* 12..15: device features, missing (NaN) here */
};

typedef struct task_t {
  double best_x, best_y; /* log2 tile sizes of the optimum */
  double vector_gain;    /* throughput factor when vectorised */
  double best_unroll;
  double flops;
} task_t;

/* ------------------------------------------------------------------------ */
/* Deterministic random numbers (splitmix64), so the data never varies. */

static uint64_t rng_next(uint64_t *state) {
  uint64_t z = (*state += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

static double rng_uniform(uint64_t *state) { return (double)(rng_next(state) >> 11) * 0x1.0p-53; }

static int rng_int(uint64_t *state, int n) { return (int)(rng_next(state) % (uint64_t)n); }

static double rng_normal(uint64_t *state) {
  double u = rng_uniform(state), v = rng_uniform(state);
  return sqrt(-2.0 * log(u + 1e-300)) * cos(6.283185307179586 * v);
}

static task_t task_make(uint64_t *rng) {
  task_t task;
  task.best_x = 1.5 + 3.0 * rng_uniform(rng);
  task.best_y = 1.0 + 3.0 * rng_uniform(rng);
  task.vector_gain = 1.3 + 0.7 * rng_uniform(rng);
  task.best_unroll = (double)rng_int(rng, 4);
  task.flops = 20.0 + 10.0 * rng_uniform(rng);
  return task;
}

/* The hidden function: throughput of a config (0 for a failed one). The
 * true value (no noise) is what held-out rankings are judged against. */
static double task_throughput(const task_t *task, const float *row) {
  double x = row[F_TILE_X], y = row[F_TILE_Y];
  if (x + y > 9.0) return 0.0; /* out of registers: the build fails */
  double dx = x - task->best_x, dy = y - task->best_y;
  double unroll = row[F_UNROLL] - task->best_unroll;
  return exp(-(dx * dx + dy * dy) / 3.0) * (row[F_VECTORIZE] > 0.5 ? task->vector_gain : 1.0) *
         (1.0 - 0.06 * unroll * unroll) * (1.0 + 0.05 * row[F_RTILE]);
}

/* A random config of the task, its features written to row. */
static void task_sample(const task_t *task, uint64_t *rng, float *row) {
  row[F_TILE_X] = (float)rng_int(rng, 7);
  row[F_TILE_Y] = (float)rng_int(rng, 7);
  row[F_VECTORIZE] = (float)rng_int(rng, 2);
  row[F_UNROLL] = (float)rng_int(rng, 4);
  row[F_RTILE] = (float)rng_int(rng, 5);
  for (int f = F_NOISE0; f < F_TASK_X; f++) row[f] = (float)rng_int(rng, 8);
  row[F_TASK_X] = (float)task->best_x;
  row[F_TASK_Y] = (float)task->best_y;
  row[F_TASK_FLOPS] = (float)task->flops;
  row[F_FOOTPRINT] = row[F_TILE_X] + row[F_TILE_Y];
  for (int f = F_DEVICE; f < NUM_FEATURES; f++) row[f] = NAN;
}

/* `rows` random configs of a task: features, their true throughput and
 * the label the tuner would record (measured with 3% noise, normalised by
 * the best measurement of these rows: best cost / cost). */
static void task_rows(const task_t *task, uint64_t *rng, int rows, float *features,
                      double *true_throughput, float *labels) {
  double best = 0.0;
  double *measured = malloc((size_t)rows * sizeof(*measured));
  assert_non_null(measured);
  for (int r = 0; r < rows; r++) {
    float *row = features + (size_t)r * NUM_FEATURES;
    task_sample(task, rng, row);
    double t = task_throughput(task, row);
    if (true_throughput) true_throughput[r] = t;
    measured[r] = t * (1.0 + 0.03 * rng_normal(rng));
    if (measured[r] < 0.0) measured[r] = 0.0;
    if (measured[r] > best) best = measured[r];
  }
  for (int r = 0; r < rows && labels; r++) labels[r] = best > 0.0 ? (float)(measured[r] / best) : 0;
  free(measured);
}

/* ------------------------------------------------------------------------ */
/* Rank statistics. */

/* Ranks of values (average ranks for ties), 0-based. */
static void ranks_of(const double *values, int n, double *out_ranks) {
  int *order = malloc((size_t)n * sizeof(*order));
  assert_non_null(order);
  for (int i = 0; i < n; i++) order[i] = i;
  /* Insertion sort: n is a few hundred. */
  for (int i = 1; i < n; i++) {
    int key = order[i], j = i - 1;
    while (j >= 0 && values[order[j]] > values[key]) {
      order[j + 1] = order[j];
      j--;
    }
    order[j + 1] = key;
  }
  for (int i = 0; i < n;) {
    int j = i + 1;
    while (j < n && values[order[j]] == values[order[i]]) j++;
    double rank = 0.5 * (double)(i + j - 1);
    for (int k = i; k < j; k++) out_ranks[order[k]] = rank;
    i = j;
  }
  free(order);
}

/* Spearman's rank correlation (Pearson's on average ranks). */
static double spearman(const float *scores, const double *truth, int n) {
  double *a = malloc((size_t)n * sizeof(double)), *b = malloc((size_t)n * sizeof(double));
  double *ra = malloc((size_t)n * sizeof(double)), *rb = malloc((size_t)n * sizeof(double));
  assert_true(a && b && ra && rb);
  for (int i = 0; i < n; i++) {
    a[i] = scores[i];
    b[i] = truth[i];
  }
  ranks_of(a, n, ra);
  ranks_of(b, n, rb);
  double mean = 0.5 * (double)(n - 1), sab = 0, saa = 0, sbb = 0;
  for (int i = 0; i < n; i++) {
    sab += (ra[i] - mean) * (rb[i] - mean);
    saa += (ra[i] - mean) * (ra[i] - mean);
    sbb += (rb[i] - mean) * (rb[i] - mean);
  }
  free(a);
  free(b);
  free(ra);
  free(rb);
  return sab / sqrt(saa * sbb);
}

/* Best true throughput among the k rows with the highest scores, as a
 * fraction of the best true throughput of all n rows. */
static double top_k_quality(const float *scores, const double *truth, int n, int k) {
  double best = 0.0, best_in_top = 0.0;
  for (int i = 0; i < n; i++)
    if (truth[i] > best) best = truth[i];
  for (int i = 0; i < n; i++) {
    int higher = 0; /* rows scored above row i: it is in the top k if < k */
    for (int j = 0; j < n; j++) higher += scores[j] > scores[i];
    if (higher < k && truth[i] > best_in_top) best_in_top = truth[i];
  }
  return best_in_top / best;
}

/* ------------------------------------------------------------------------ */
/* Shared data: NUM_TASKS training tasks and one new task, built once. */

typedef struct data_t {
  task_t tasks[NUM_TASKS + 1]; /* the last one is the new task */
  float train_features[NUM_TASKS * TRAIN_ROWS * NUM_FEATURES];
  float train_labels[NUM_TASKS * TRAIN_ROWS];
  uint32_t group_sizes[NUM_TASKS];
  float held_features[NUM_TASKS + 1][HELD_OUT_ROWS * NUM_FEATURES];
  double held_truth[NUM_TASKS + 1][HELD_OUT_ROWS];
  /* The new task's own measurements (for transfer). */
  float own_features[TRAIN_ROWS * NUM_FEATURES];
  float own_labels[TRAIN_ROWS];
  char temp_dir[4096];
  /* A model with default options trained once on all training tasks (the
   * tests share it: training under ASan is slow), and its scores on the
   * held-out rows of those tasks. */
  hetc_cost_model_t *global;
  float global_held[NUM_TASKS * HELD_OUT_ROWS];
} data_t;

static data_t *data;

static int setup(void **state) {
  (void)state;
  data = calloc(1, sizeof(*data));
  if (!data) return -1;
  uint64_t rng = 20240601;
  for (int t = 0; t <= NUM_TASKS; t++) data->tasks[t] = task_make(&rng);
  /* The new task must resemble the others (its optimum inside their range)
   * for the prior to be useful: place it between two of them. */
  task_t *fresh = &data->tasks[NUM_TASKS];
  fresh->best_x = 0.5 * (data->tasks[0].best_x + data->tasks[1].best_x);
  fresh->best_y = 0.5 * (data->tasks[0].best_y + data->tasks[1].best_y);
  for (int t = 0; t < NUM_TASKS; t++) {
    task_rows(&data->tasks[t], &rng, TRAIN_ROWS,
              data->train_features + (size_t)t * TRAIN_ROWS * NUM_FEATURES, NULL,
              data->train_labels + (size_t)t * TRAIN_ROWS);
    data->group_sizes[t] = TRAIN_ROWS;
  }
  for (int t = 0; t <= NUM_TASKS; t++) {
    float *labels = malloc(HELD_OUT_ROWS * sizeof(float));
    if (!labels) return -1;
    task_rows(&data->tasks[t], &rng, HELD_OUT_ROWS, data->held_features[t], data->held_truth[t],
              labels);
    free(labels);
  }
  task_rows(fresh, &rng, TRAIN_ROWS, data->own_features, NULL, data->own_labels);

  const char *base = getenv("HETC_BINARY_DIR");
  snprintf(data->temp_dir, sizeof(data->temp_dir), "%s/test_cost_model-XXXXXX",
           base ? base : "/tmp");
  if (!mkdtemp(data->temp_dir)) return -1;

  hetc_status_t status = hetc_cost_model_create(NUM_FEATURES, NULL, &data->global);
  if (!status)
    status = hetc_cost_model_train(data->global, data->train_features, data->train_labels, NULL,
                                   NUM_TASKS * TRAIN_ROWS, data->group_sizes, NUM_TASKS);
  for (int t = 0; t < NUM_TASKS && !status; t++)
    status = hetc_cost_model_predict(data->global, data->held_features[t], NULL, HELD_OUT_ROWS,
                                     data->global_held + (size_t)t * HELD_OUT_ROWS);
  if (status) {
    fprintf(stderr, "training the shared model: %s\n", hetc_status_message(status));
    hetc_status_free(status);
    return -1;
  }
  return 0;
}

static int teardown(void **state) {
  (void)state;
  hetc_cost_model_free(data->global);
  hetc_dir_remove_tree(data->temp_dir);
  free(data);
  return 0;
}

static void assert_ok(hetc_status_t status) {
  if (status) {
    fprintf(stderr, "unexpected failure: %s\n", hetc_status_message(status));
    hetc_status_free(status);
    fail();
  }
}

/* Asserts a failure with exactly this code and message, and frees it. */
static void assert_error(hetc_status_t status, hetc_status_code_t code, const char *message) {
  assert_non_null(status);
  assert_string_equal(hetc_status_message(status), message);
  assert_int_equal(hetc_status_code(status), code);
  hetc_status_free(status);
}

static hetc_cost_model_t *train_global(const hetc_cost_model_options_t *options) {
  hetc_cost_model_t *model = NULL;
  assert_ok(hetc_cost_model_create(NUM_FEATURES, options, &model));
  assert_ok(hetc_cost_model_train(model, data->train_features, data->train_labels, NULL,
                                  NUM_TASKS * TRAIN_ROWS, data->group_sizes, NUM_TASKS));
  assert_true(hetc_cost_model_trained(model));
  return model;
}

/* Scores of every held-out row of the training tasks, task after task. */
static void predict_held_out(const hetc_cost_model_t *model, float *out /* NUM_TASKS*HELD */) {
  for (int t = 0; t < NUM_TASKS; t++)
    assert_ok(hetc_cost_model_predict(model, data->held_features[t], NULL, HELD_OUT_ROWS,
                                      out + (size_t)t * HELD_OUT_ROWS));
}

static char *temp_path(const char *name) {
  char *path = hetc_path_join(data->temp_dir, name);
  assert_non_null(path);
  return path;
}

/* ------------------------------------------------------------------------ */
/* (a) Ranking quality on held-out configs of the training tasks. */

#define MIN_SPEARMAN 0.8  /* per task */
#define TOP_K 10
#define TOP_K_QUALITY 0.95 /* a top-10 config within 95% of the best */

static void test_ranks_held_out_configs(void **state) {
  (void)state;
  for (int t = 0; t < NUM_TASKS; t++) {
    const float *scores = data->global_held + (size_t)t * HELD_OUT_ROWS;
    double rho = spearman(scores, data->held_truth[t], HELD_OUT_ROWS);
    double quality = top_k_quality(scores, data->held_truth[t], HELD_OUT_ROWS, TOP_K);
    printf("task %d: spearman %.3f, best of top %d = %.3f of the best\n", t, rho, TOP_K, quality);
    assert_true(rho > MIN_SPEARMAN);
    assert_true(quality >= TOP_K_QUALITY);
  }
}

/* (b) Same data, options and thread count: bit-identical predictions, for
 * the defaults (one thread) and for two threads (fewer rounds, to save
 * time). */
static void test_training_is_deterministic(void **state) {
  (void)state;
  static float first[NUM_TASKS * HELD_OUT_ROWS], second[NUM_TASKS * HELD_OUT_ROWS];
  hetc_cost_model_t *again = train_global(NULL);
  predict_held_out(again, first);
  assert_memory_equal(first, data->global_held, sizeof(first));
  hetc_cost_model_free(again);

  hetc_cost_model_options_t options = {.rounds = 20, .seed = 7, .threads = 2};
  hetc_cost_model_t *a = train_global(&options);
  hetc_cost_model_t *b = train_global(&options);
  predict_held_out(a, first);
  predict_held_out(b, second);
  assert_memory_equal(first, second, sizeof(first));
  hetc_cost_model_free(a);
  hetc_cost_model_free(b);
}

/* Predictions from several threads at once on one model equal the serial
 * ones (the model serialises them; under ASan this also checks races on
 * XGBoost's per-thread buffers). */
typedef struct predict_job_t {
  const hetc_cost_model_t *model;
  float scores[NUM_TASKS * HELD_OUT_ROWS];
} predict_job_t;

static void *predict_job_run(void *arg) {
  predict_job_t *job = arg;
  for (int t = 0; t < NUM_TASKS; t++) {
    hetc_status_t status = hetc_cost_model_predict(job->model, data->held_features[t], NULL,
                                                   HELD_OUT_ROWS,
                                                   job->scores + (size_t)t * HELD_OUT_ROWS);
    if (status) {
      hetc_status_free(status);
      return arg; /* non-NULL: failed */
    }
  }
  return NULL;
}

static void test_concurrent_predictions(void **state) {
  (void)state;
  const float *serial = data->global_held;
  enum { JOBS = 4 };
  predict_job_t *jobs = calloc(JOBS, sizeof(*jobs));
  pthread_t threads[JOBS];
  assert_non_null(jobs);
  for (int j = 0; j < JOBS; j++) {
    jobs[j].model = data->global;
    assert_int_equal(pthread_create(&threads[j], NULL, predict_job_run, &jobs[j]), 0);
  }
  for (int j = 0; j < JOBS; j++) {
    void *result = NULL;
    assert_int_equal(pthread_join(threads[j], &result), 0);
    assert_null(result);
    assert_memory_equal(jobs[j].scores, serial, sizeof(jobs[j].scores));
  }
  free(jobs);
}

/* ------------------------------------------------------------------------ */
/* (c) Saving and loading. */

static void test_save_load_round_trip(void **state) {
  (void)state;
  const hetc_cost_model_t *model = data->global;
  char *path = temp_path("global.model");
  assert_ok(hetc_cost_model_save(model, path));
  /* Saving over an existing file replaces it and leaves no temporary. */
  assert_ok(hetc_cost_model_save(model, path));
  DIR *dir = opendir(data->temp_dir);
  assert_non_null(dir);
  for (struct dirent *entry; (entry = readdir(dir));)
    assert_null(strstr(entry->d_name, ".tmp-"));
  closedir(dir);
  hetc_cost_model_t *loaded = NULL;
  assert_ok(hetc_cost_model_load(path, NUM_FEATURES, &loaded));
  assert_true(hetc_cost_model_trained(loaded));
  static float after[NUM_TASKS * HELD_OUT_ROWS];
  predict_held_out(loaded, after);
  assert_memory_equal(data->global_held, after, sizeof(after));

  /* An untrained model saves and loads back untrained. */
  hetc_cost_model_t *empty = NULL;
  assert_ok(hetc_cost_model_create(NUM_FEATURES, NULL, &empty));
  char *empty_path = temp_path("empty.model");
  assert_ok(hetc_cost_model_save(empty, empty_path));
  hetc_cost_model_t *empty_loaded = NULL;
  assert_ok(hetc_cost_model_load(empty_path, NUM_FEATURES, &empty_loaded));
  assert_false(hetc_cost_model_trained(empty_loaded));

  hetc_cost_model_free(empty_loaded);
  hetc_cost_model_free(empty);
  hetc_cost_model_free(loaded);
  free(empty_path);
  free(path);
}

static void write_bytes(const char *path, const char *bytes, size_t length) {
  assert_ok(hetc_file_write_all(path, bytes, length));
}

static void test_load_errors(void **state) {
  (void)state;
  char message[8192];
  const hetc_cost_model_t *model = data->global;
  hetc_cost_model_t *loaded = NULL;
  char *path = temp_path("errors.model");
  assert_ok(hetc_cost_model_save(model, path));
  char *good = NULL;
  size_t length = 0;
  assert_ok(hetc_file_read_all(path, (size_t)1 << 30, &good, &length));
  size_t header_end = (size_t)(strchr(good, '\n') - good) + 1;
  char *bad = malloc(length);
  assert_non_null(bad);

  /* Missing. */
  char *missing = temp_path("missing.model");
  snprintf(message, sizeof(message), "%s: cannot open: No such file or directory", missing);
  assert_error(hetc_cost_model_load(missing, NUM_FEATURES, &loaded), HETC_STATUS_IO_ERROR,
               message);

  /* Another width. */
  snprintf(message, sizeof(message), "%s: cost model has 16 features, expected 12", path);
  assert_error(hetc_cost_model_load(path, 12, &loaded), HETC_STATUS_BAD_INPUT, message);

  /* Not a cost model at all. */
  char *other = temp_path("other.model");
  write_bytes(other, "{\"learner\": {}}", 15);
  snprintf(message, sizeof(message), "%s: not a hetc cost model", other);
  assert_error(hetc_cost_model_load(other, NUM_FEATURES, &loaded), HETC_STATUS_BAD_INPUT,
               message);

  /* A format from the future. */
  write_bytes(other, "hetc-cost-model 2 features 16\n", 30);
  snprintf(message, sizeof(message), "%s: cost model format version 2, expected 1", other);
  assert_error(hetc_cost_model_load(other, NUM_FEATURES, &loaded), HETC_STATUS_BAD_INPUT,
               message);

  /* A damaged header. */
  write_bytes(other, "hetc-cost-model 1 features 16 trained\n", 38);
  snprintf(message, sizeof(message), "%s: corrupt cost model: bad header", other);
  assert_error(hetc_cost_model_load(other, NUM_FEATURES, &loaded), HETC_STATUS_BAD_INPUT,
               message);

  /* Truncated. */
  write_bytes(other, good, length - 100);
  snprintf(message, sizeof(message),
           "%s: corrupt cost model: the header promises %zu bytes of trees, the file has %zu",
           other, length - header_end, length - header_end - 100);
  assert_error(hetc_cost_model_load(other, NUM_FEATURES, &loaded), HETC_STATUS_BAD_INPUT,
               message);

  /* One flipped byte in the trees. */
  memcpy(bad, good, length);
  bad[header_end + (length - header_end) / 2] ^= 0x20;
  write_bytes(other, bad, length);
  snprintf(message, sizeof(message), "%s: corrupt cost model: checksum mismatch", other);
  assert_error(hetc_cost_model_load(other, NUM_FEATURES, &loaded), HETC_STATUS_BAD_INPUT,
               message);

  /* Trees XGBoost refuses behind a valid header (checksum recomputed):
   * XGBoost's own words follow the fixed prefix. */
  const char *junk = "{\"not\": \"a model\"";
  char header[200];
  uint64_t hash = 0xcbf29ce484222325ull;
  for (const char *p = junk; *p; p++) hash = (hash ^ (unsigned char)*p) * 0x100000001b3ull;
  int header_length =
      snprintf(header, sizeof(header),
               "hetc-cost-model 1 features 16 trained 1 bytes %zu fnv1a64 %016llx\n",
               strlen(junk), (unsigned long long)hash);
  memcpy(bad, header, (size_t)header_length);
  memcpy(bad + header_length, junk, strlen(junk));
  write_bytes(other, bad, (size_t)header_length + strlen(junk));
  hetc_status_t status = hetc_cost_model_load(other, NUM_FEATURES, &loaded);
  assert_non_null(status);
  snprintf(message, sizeof(message), "%s: corrupt cost model: xgboost: loading the trees: ", other);
  printf("xgboost's refusal: %s\n", hetc_status_message(status));
  assert_int_equal(strncmp(hetc_status_message(status), message, strlen(message)), 0);
  assert_int_equal(hetc_status_code(status), HETC_STATUS_BAD_INPUT);
  hetc_status_free(status);

  /* The good file still loads after all that. */
  assert_ok(hetc_cost_model_load(path, NUM_FEATURES, &loaded));
  hetc_cost_model_free(loaded);

  free(other);
  free(missing);
  free(bad);
  free(good);
  free(path);
}

/* ------------------------------------------------------------------------ */
/* (d) Transfer to a new task. */

#define MIN_PRIOR_SPEARMAN 0.5 /* global model alone on the new task */
#define MIN_OWN_SPEARMAN 0.8   /* with 64 of the task's own rows */

static void test_transfer_to_new_task(void **state) {
  (void)state;
  hetc_transfer_model_t *transfer = NULL;
  assert_ok(hetc_transfer_model_create(NUM_FEATURES, NULL, &transfer));
  const float *held = data->held_features[NUM_TASKS];
  const double *truth = data->held_truth[NUM_TASKS];
  static float untrained[HELD_OUT_ROWS], prior[HELD_OUT_ROWS], global_alone[HELD_OUT_ROWS];
  static float with_own[HELD_OUT_ROWS], with_none[HELD_OUT_ROWS];

  /* Nothing learnt yet: all zeros, no failure. */
  assert_ok(hetc_transfer_model_predict(transfer, held, HELD_OUT_ROWS, untrained));
  for (int r = 0; r < HELD_OUT_ROWS; r++) assert_true(untrained[r] == 0.0f);

  assert_ok(hetc_transfer_model_fit_global(transfer, data->train_features, data->train_labels,
                                           NUM_TASKS * TRAIN_ROWS, data->group_sizes,
                                           NUM_TASKS));
  /* Zero own rows: exactly the global model's predictions (the shared model
   * was trained on the same rows with the same options: equal bit for bit). */
  assert_ok(hetc_transfer_model_fit_task(transfer, NULL, NULL, 0));
  assert_ok(hetc_transfer_model_predict(transfer, held, HELD_OUT_ROWS, prior));
  assert_ok(hetc_cost_model_predict(data->global, held, NULL, HELD_OUT_ROWS, global_alone));
  assert_memory_equal(prior, global_alone, sizeof(prior));
  double rho_prior = spearman(prior, truth, HELD_OUT_ROWS);
  printf("new task, 0 own rows: spearman %.3f\n", rho_prior);
  assert_true(rho_prior > MIN_PRIOR_SPEARMAN);

  /* Own rows change the predictions, more with more rows. */
  int own_counts[] = {4, 16, TRAIN_ROWS};
  double rho_own = 0.0;
  for (size_t i = 0; i < sizeof(own_counts) / sizeof(own_counts[0]); i++) {
    int n = own_counts[i];
    assert_ok(hetc_transfer_model_fit_task(transfer, data->own_features, data->own_labels, n));
    assert_ok(hetc_transfer_model_predict(transfer, held, HELD_OUT_ROWS, with_own));
    assert_memory_not_equal(with_own, prior, sizeof(prior));
    rho_own = spearman(with_own, truth, HELD_OUT_ROWS);
    printf("new task, %d own rows: spearman %.3f\n", n, rho_own);
  }
  assert_true(rho_own > MIN_OWN_SPEARMAN);

  /* Dropping the own rows returns to the prior exactly. */
  assert_ok(hetc_transfer_model_fit_task(transfer, data->own_features, data->own_labels, 0));
  assert_ok(hetc_transfer_model_predict(transfer, held, HELD_OUT_ROWS, with_none));
  assert_memory_equal(with_none, prior, sizeof(prior));

  /* The global model saves and loads back; loading drops the task model. */
  char *path = temp_path("transfer.model");
  assert_ok(hetc_transfer_model_fit_task(transfer, data->own_features, data->own_labels, 16));
  assert_ok(hetc_transfer_model_save_global(transfer, path));
  assert_ok(hetc_transfer_model_load_global(transfer, path));
  assert_ok(hetc_transfer_model_predict(transfer, held, HELD_OUT_ROWS, with_none));
  assert_memory_equal(with_none, prior, sizeof(prior));
  char message[4200];
  snprintf(message, sizeof(message), "%s: cost model has 16 features, expected 8", path);
  hetc_transfer_model_t *narrow = NULL;
  assert_ok(hetc_transfer_model_create(8, NULL, &narrow));
  assert_error(hetc_transfer_model_load_global(narrow, path), HETC_STATUS_BAD_INPUT, message);

  hetc_transfer_model_free(narrow);
  free(path);
  hetc_transfer_model_free(transfer);
}

/* ------------------------------------------------------------------------ */
/* (e) Groups, and the argument checks. */

/* The groups reach XGBoost: one group over all tasks (pairs across tasks)
 * trains a different model from one group per task; empty groups are
 * skipped, giving bit-identical predictions; sizes that do not add up to
 * the rows are refused with a message saying so. */
static void test_groups(void **state) {
  (void)state;
  static float per_task[NUM_TASKS * HELD_OUT_ROWS], one_group[NUM_TASKS * HELD_OUT_ROWS];
  static float with_empty[NUM_TASKS * HELD_OUT_ROWS];
  const int64_t rows = NUM_TASKS * TRAIN_ROWS;
  hetc_cost_model_options_t options = {.rounds = 20}; /* enough to tell models apart */
  hetc_cost_model_t *model = train_global(&options);
  predict_held_out(model, per_task);

  uint32_t all = (uint32_t)rows;
  assert_ok(hetc_cost_model_train(model, data->train_features, data->train_labels, NULL, rows,
                                  &all, 1));
  predict_held_out(model, one_group);
  assert_memory_not_equal(per_task, one_group, sizeof(per_task));

  uint32_t sparse[2 * NUM_TASKS + 1] = {0};
  for (int t = 0; t < NUM_TASKS; t++) sparse[2 * t + 1] = TRAIN_ROWS;
  assert_ok(hetc_cost_model_train(model, data->train_features, data->train_labels, NULL, rows,
                                  sparse, 2 * NUM_TASKS + 1));
  predict_held_out(model, with_empty);
  assert_memory_equal(per_task, with_empty, sizeof(per_task));

  uint32_t short_sizes[NUM_TASKS];
  memcpy(short_sizes, data->group_sizes, sizeof(short_sizes));
  short_sizes[3] -= 12;
  assert_error(hetc_cost_model_train(model, data->train_features, data->train_labels, NULL, rows,
                                     short_sizes, NUM_TASKS),
               HETC_STATUS_INVALID_ARGUMENT,
               "cost model: the group sizes add up to 500 rows, but 512 rows were given");
  /* A refused training keeps the previous trees. */
  predict_held_out(model, one_group);
  assert_memory_equal(per_task, one_group, sizeof(per_task));

  /* Zero rows: untrained again, predicting the base margin. */
  assert_ok(hetc_cost_model_train(model, NULL, NULL, NULL, 0, NULL, 0));
  assert_false(hetc_cost_model_trained(model));
  float margin[3] = {0.5f, -1.0f, 2.0f}, scores[3];
  assert_ok(hetc_cost_model_predict(model, data->held_features[0], margin, 3, scores));
  assert_memory_equal(scores, margin, sizeof(margin));
  hetc_cost_model_free(model);
}

static void test_argument_checks(void **state) {
  (void)state;
  hetc_cost_model_t *model = NULL;
  hetc_cost_model_options_t negative = {.rounds = -1};
  assert_error(hetc_cost_model_create(NUM_FEATURES, &negative, &model),
               HETC_STATUS_INVALID_ARGUMENT,
               "cost model: rounds, max_depth and threads must not be negative");
  hetc_cost_model_options_t big_eta = {.eta = 1.5};
  assert_error(hetc_cost_model_create(NUM_FEATURES, &big_eta, &model),
               HETC_STATUS_INVALID_ARGUMENT, "cost model: eta is 1.5, expected a number in (0, 1]");
  assert_error(hetc_cost_model_create(0, NULL, &model), HETC_STATUS_INVALID_ARGUMENT,
               "cost model: 0 features, expected at least 1");

  assert_ok(hetc_cost_model_create(NUM_FEATURES, NULL, &model));
  float features[2 * NUM_FEATURES], labels[2] = {1.0f, 0.5f};
  memcpy(features, data->train_features, sizeof(features));
  uint32_t group = 2;
  labels[1] = 1.25f;
  assert_error(hetc_cost_model_train(model, features, labels, NULL, 2, &group, 1),
               HETC_STATUS_INVALID_ARGUMENT,
               "cost model: the label of row 1 is 1.25, expected a number in [0, 1]");
  labels[1] = 0.5f;
  features[NUM_FEATURES + 3] = INFINITY;
  assert_error(hetc_cost_model_train(model, features, labels, NULL, 2, &group, 1),
               HETC_STATUS_INVALID_ARGUMENT, "cost model: feature 3 of row 1 is infinite");
  features[NUM_FEATURES + 3] = 1.0f;
  /* Two rows, one group: trains (NaN features included). */
  assert_ok(hetc_cost_model_train(model, features, labels, NULL, 2, &group, 1));
  assert_true(hetc_cost_model_trained(model));
  hetc_cost_model_free(model);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_ranks_held_out_configs),
      cmocka_unit_test(test_training_is_deterministic),
      cmocka_unit_test(test_concurrent_predictions),
      cmocka_unit_test(test_save_load_round_trip),
      cmocka_unit_test(test_load_errors),
      cmocka_unit_test(test_transfer_to_new_task),
      cmocka_unit_test(test_groups),
      cmocka_unit_test(test_argument_checks),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
