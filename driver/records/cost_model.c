/* driver/records/cost_model.c -- the ranking cost model on XGBoost's C API.
 *
 * XGBoost parameters (set in booster_configure) and why:
 *   objective rank:pairwise   README.md, "Tuning": labels are throughputs normalised
 *                             per task, so only the order inside a task
 *                             means anything; a pairwise logistic loss on
 *                             pairs drawn inside each "group" (= task)
 *                             learns exactly that order and never compares
 *                             rows of unrelated tasks.
 *   tree_method hist          the records store grows to 1e5+ rows; hist is
 *                             the fast CPU method, deterministic for a
 *                             fixed thread count, and its 256 bins per
 *                             feature lose little on tuning features
 *                             (knob values come from small candidate
 *                             lists).
 *   max_depth (6), eta (0.2)  options; depth 6 lets a tree capture the
 *                             interactions that matter (tile x tile x
 *                             vector width), eta 0.2 with 100 rounds is the
 *                             usual trade between fit and smoothness.
 *   min_child_weight 0        a pairwise hessian is p(1 - p) of the pair's
 *                             predicted order, near zero once the pair is
 *                             ordered, so XGBoost's default of 1 would stop
 *                             splits on a few hundred rows after a few
 *                             rounds (Ansor's model uses 0 too).
 *   gamma 1e-4                with min_child_weight 0, refuses splits that
 *                             gain nothing, which keeps trees from growing
 *                             on rows whose pairs are already ordered.
 *   num_pairsample 4          the objective draws this many partners per
 *                             row per round; 1 (the default) leaves the
 *                             gradient of a 64-row group noisy.
 *   base_score 0              a prediction is then the trees' margin plus
 *                             the caller's base_margin and nothing else,
 *                             so "untrained = base_margin or zeros" holds
 *                             and a task model adds to the global prior
 *                             without a hidden constant.
 *   nthread, seed             options (see cost_model.h).
 *   disable_default_eval_metric 1   no evaluation set is ever attached.
 *
 * Determinism: a new booster is built for every training (no state carries
 * over), rows are fed in the caller's order, and XGBoost 1.7 seeds the
 * pair sampling of rank:pairwise from the round number, one stream per
 * OpenMP thread. The same data, options and thread count therefore give
 * bit-identical trees.
 *
 * File format (version 1): one ASCII header line
 *   "hetc-cost-model 1 features N trained T bytes B fnv1a64 HHHH...\n"
 * followed by B bytes of XGBoost's JSON model (none when T is 0). The
 * checksum (FNV-1a, 64 bit, 16 hex digits) covers those B bytes; the
 * header carries the width so that a model of another feature schema is
 * refused with a clear message before XGBoost sees it. */
#include "records/cost_model.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <xgboost/c_api.h>

#include "common/fileio.h"
#include "common/name_map.h"

#define COST_MODEL_MAGIC "hetc-cost-model"
#define COST_MODEL_FORMAT_VERSION 1
/* Larger than any model of sane size (100 trees of depth 6 take about
 * 0.6 MB as JSON), small enough that a wrong path cannot exhaust memory. */
#define COST_MODEL_MAX_FILE_BYTES ((size_t)1 << 30)
#define COST_MODEL_NUM_PAIRSAMPLE "4"

struct hetc_cost_model_t {
  int32_t num_features;
  hetc_cost_model_options_t options; /* resolved: no zero fields */
  /* Guards `booster`. It is the one part of a const model that changes
   * (locking), hence model_lock's cast. */
  pthread_mutex_t lock;
  BoosterHandle booster; /* NULL while untrained; owned */
};

static void model_lock(const hetc_cost_model_t *model) {
  pthread_mutex_lock((pthread_mutex_t *)&model->lock);
}

static void model_unlock(const hetc_cost_model_t *model) {
  pthread_mutex_unlock((pthread_mutex_t *)&model->lock);
}

/* XGBoost's last error (per thread) as a one-line status. Its messages
 * read "[hh:mm:ss] ./src/file.cc:123: text", where further lines may show
 * the spot in a JSON document or a stack trace. The clock and the extra
 * lines say nothing to a hetc user and would break the one-line messages
 * the CLI prints; the source position helps a maintainer and stays. */
static hetc_status_t xgboost_error(hetc_status_code_t code, const char *what) {
  const char *message = XGBGetLastError();
  if (!message) message = "";
  if (message[0] == '[') {
    const char *close = strchr(message, ']');
    if (close && close[1] == ' ') message = close + 2;
  }
  size_t length = strcspn(message, "\n");
  while (length > 0 && message[length - 1] == ' ') length--;
  return hetc_status_new(code, "xgboost: %s: %.*s", what, (int)length, message);
}

static hetc_status_t options_resolve(const hetc_cost_model_options_t *options,
                                     hetc_cost_model_options_t *out) {
  hetc_cost_model_options_t resolved = {0};
  if (options) resolved = *options;
  if (resolved.rounds < 0 || resolved.max_depth < 0 || resolved.threads < 0)
    return hetc_status_new(HETC_STATUS_INVALID_ARGUMENT,
                           "cost model: rounds, max_depth and threads must not be negative");
  if (!(resolved.eta >= 0.0 && resolved.eta <= 1.0))
    return hetc_status_new(HETC_STATUS_INVALID_ARGUMENT,
                           "cost model: eta is %g, expected a number in (0, 1]", resolved.eta);
  if (resolved.rounds == 0) resolved.rounds = HETC_COST_MODEL_DEFAULT_ROUNDS;
  if (resolved.max_depth == 0) resolved.max_depth = HETC_COST_MODEL_DEFAULT_MAX_DEPTH;
  if (resolved.eta == 0.0) resolved.eta = HETC_COST_MODEL_DEFAULT_ETA;
  if (resolved.threads == 0) resolved.threads = HETC_COST_MODEL_DEFAULT_THREADS;
  *out = resolved;
  return NULL;
}

hetc_status_t hetc_cost_model_create(int32_t num_features, const hetc_cost_model_options_t *options,
                                     hetc_cost_model_t **out_model) {
  if (!out_model)
    return hetc_status_new(HETC_STATUS_INVALID_ARGUMENT, "cost model: no output pointer");
  if (num_features <= 0)
    return hetc_status_new(HETC_STATUS_INVALID_ARGUMENT,
                           "cost model: %d features, expected at least 1", num_features);
  hetc_cost_model_options_t resolved;
  HETC_RETURN_IF_ERROR(options_resolve(options, &resolved));
  hetc_cost_model_t *model = calloc(1, sizeof(*model));
  if (!model) return hetc_status_new(HETC_STATUS_OUT_OF_MEMORY, "cost model");
  if (pthread_mutex_init(&model->lock, NULL) != 0) {
    free(model);
    return hetc_status_new(HETC_STATUS_INTERNAL, "cost model: cannot create its lock");
  }
  model->num_features = num_features;
  model->options = resolved;
  *out_model = model;
  return NULL;
}

void hetc_cost_model_free(hetc_cost_model_t *model) {
  if (!model) return;
  if (model->booster) XGBoosterFree(model->booster);
  pthread_mutex_destroy(&model->lock);
  free(model);
}

int hetc_cost_model_trained(const hetc_cost_model_t *model) {
  if (!model) return 0;
  model_lock(model);
  int trained = model->booster != NULL;
  model_unlock(model);
  return trained;
}

/* Replaces the model's trees with `booster` (NULL: untrained) and frees
 * the old ones after the lock is released. */
static void model_swap_booster(hetc_cost_model_t *model, BoosterHandle booster) {
  model_lock(model);
  BoosterHandle old = model->booster;
  model->booster = booster;
  model_unlock(model);
  if (old) XGBoosterFree(old);
}

/* ------------------------------------------------------------------------ */
/* Input checks: XGBoost's own checks abort a call deep inside with a message
 * about adapters and batches; these name the row. */

static hetc_status_t check_rows(const hetc_cost_model_t *model, const float *features,
                                const float *base_margin, int64_t rows) {
  if (rows < 0)
    return hetc_status_new(HETC_STATUS_INVALID_ARGUMENT, "cost model: %" PRId64 " rows", rows);
  if (rows > 0 && !features)
    return hetc_status_new(HETC_STATUS_INVALID_ARGUMENT, "cost model: no features");
  if ((uint64_t)rows > SIZE_MAX / sizeof(float) / (uint64_t)model->num_features)
    return hetc_status_new(HETC_STATUS_INVALID_ARGUMENT,
                           "cost model: %" PRId64 " rows do not fit in memory", rows);
  size_t count = (size_t)rows * (size_t)model->num_features;
  for (size_t i = 0; i < count; i++) {
    if (isinf(features[i]))
      return hetc_status_new(HETC_STATUS_INVALID_ARGUMENT,
                             "cost model: feature %d of row %zu is infinite",
                             (int)(i % (size_t)model->num_features),
                             i / (size_t)model->num_features);
  }
  if (base_margin) {
    for (int64_t row = 0; row < rows; row++) {
      if (!isfinite(base_margin[row]))
        return hetc_status_new(HETC_STATUS_INVALID_ARGUMENT,
                               "cost model: base margin of row %" PRId64 " is not finite", row);
    }
  }
  return NULL;
}

/* A DMatrix over the rows (XGBoost copies them), NaN marking missing
 * values, with the base margin attached when given. *out_matrix is freed
 * with XGDMatrixFree by the caller. */
static hetc_status_t matrix_create(const hetc_cost_model_t *model, const float *features,
                                   const float *base_margin, int64_t rows,
                                   DMatrixHandle *out_matrix) {
  DMatrixHandle matrix = NULL;
  if (XGDMatrixCreateFromMat_omp(features, (bst_ulong)rows, (bst_ulong)model->num_features, NAN,
                                 &matrix, model->options.threads) != 0)
    return xgboost_error(HETC_STATUS_INTERNAL, "creating the feature matrix");
  if (base_margin &&
      XGDMatrixSetFloatInfo(matrix, "base_margin", base_margin, (bst_ulong)rows) != 0) {
    hetc_status_t status = xgboost_error(HETC_STATUS_INTERNAL, "setting the base margin");
    XGDMatrixFree(matrix);
    return status;
  }
  *out_matrix = matrix;
  return NULL;
}

/* The parameters explained at the top of this file, plus nthread (which a
 * loaded booster needs too: XGBoost's saved model does not carry it). */
static hetc_status_t booster_set_threads(const hetc_cost_model_t *model, BoosterHandle booster) {
  char value[32];
  snprintf(value, sizeof(value), "%d", model->options.threads);
  if (XGBoosterSetParam(booster, "nthread", value) != 0)
    return xgboost_error(HETC_STATUS_INTERNAL, "setting nthread");
  return NULL;
}

static hetc_status_t booster_configure(const hetc_cost_model_t *model, BoosterHandle booster) {
  char depth[32], eta[64], seed[32];
  snprintf(depth, sizeof(depth), "%d", model->options.max_depth);
  snprintf(eta, sizeof(eta), "%.17g", model->options.eta);
  snprintf(seed, sizeof(seed), "%" PRId64, (int64_t)(model->options.seed & (uint64_t)INT64_MAX));
  const char *params[][2] = {
      {"objective", "rank:pairwise"},
      {"tree_method", "hist"},
      {"max_depth", depth},
      {"eta", eta},
      {"min_child_weight", "0"},
      {"gamma", "0.0001"},
      {"num_pairsample", COST_MODEL_NUM_PAIRSAMPLE},
      {"base_score", "0"},
      {"seed", seed},
      {"disable_default_eval_metric", "1"},
  };
  for (size_t i = 0; i < sizeof(params) / sizeof(params[0]); i++) {
    if (XGBoosterSetParam(booster, params[i][0], params[i][1]) != 0)
      return xgboost_error(HETC_STATUS_INTERNAL, params[i][0]);
  }
  return booster_set_threads(model, booster);
}

hetc_status_t hetc_cost_model_train(hetc_cost_model_t *model, const float *features,
                                    const float *labels, const float *base_margin, int64_t rows,
                                    const uint32_t *group_sizes, int32_t num_groups) {
  if (!model) return hetc_status_new(HETC_STATUS_INVALID_ARGUMENT, "cost model: no model");
  if (num_groups < 0 || (num_groups > 0 && !group_sizes))
    return hetc_status_new(HETC_STATUS_INVALID_ARGUMENT, "cost model: %d groups without sizes",
                           num_groups);
  HETC_RETURN_IF_ERROR(check_rows(model, features, base_margin, rows));
  uint64_t grouped_rows = 0;
  int32_t nonempty_groups = 0;
  for (int32_t g = 0; g < num_groups; g++) {
    grouped_rows += group_sizes[g];
    nonempty_groups += group_sizes[g] > 0;
  }
  if (grouped_rows != (uint64_t)rows)
    return hetc_status_new(HETC_STATUS_INVALID_ARGUMENT,
                           "cost model: the group sizes add up to %" PRIu64
                           " rows, but %" PRId64 " rows were given",
                           grouped_rows, rows);
  if (rows == 0) {
    model_swap_booster(model, NULL);
    return NULL;
  }
  if (!labels) return hetc_status_new(HETC_STATUS_INVALID_ARGUMENT, "cost model: no labels");
  for (int64_t row = 0; row < rows; row++) {
    if (!(labels[row] >= 0.0f && labels[row] <= 1.0f))
      return hetc_status_new(HETC_STATUS_INVALID_ARGUMENT,
                             "cost model: the label of row %" PRId64
                             " is %g, expected a number in [0, 1]",
                             row, (double)labels[row]);
  }

  hetc_status_t status = NULL;
  DMatrixHandle matrix = NULL;
  BoosterHandle booster = NULL;
  /* Empty groups dropped: XGBoost takes them, but they only cost it a
   * pass, and callers naturally pass one size per task known. */
  uint32_t *groups = malloc((size_t)nonempty_groups * sizeof(*groups));
  if (!groups) return hetc_status_new(HETC_STATUS_OUT_OF_MEMORY, "cost model: group sizes");
  for (int32_t g = 0, k = 0; g < num_groups; g++) {
    if (group_sizes[g] > 0) groups[k++] = group_sizes[g];
  }

  status = matrix_create(model, features, base_margin, rows, &matrix);
  if (status) goto cleanup;
  if (XGDMatrixSetFloatInfo(matrix, "label", labels, (bst_ulong)rows) != 0) {
    status = xgboost_error(HETC_STATUS_INTERNAL, "setting the labels");
    goto cleanup;
  }
  if (XGDMatrixSetUIntInfo(matrix, "group", groups, (bst_ulong)nonempty_groups) != 0) {
    status = xgboost_error(HETC_STATUS_INTERNAL, "setting the groups");
    goto cleanup;
  }
  if (XGBoosterCreate(&matrix, 1, &booster) != 0) {
    booster = NULL;
    status = xgboost_error(HETC_STATUS_INTERNAL, "creating a booster");
    goto cleanup;
  }
  status = booster_configure(model, booster);
  if (status) goto cleanup;
  for (int32_t round = 0; round < model->options.rounds; round++) {
    if (XGBoosterUpdateOneIter(booster, round, matrix) != 0) {
      status = xgboost_error(HETC_STATUS_INTERNAL, "boosting");
      goto cleanup;
    }
  }
  model_swap_booster(model, booster);
  booster = NULL;

cleanup:
  if (booster) XGBoosterFree(booster);
  if (matrix) XGDMatrixFree(matrix);
  free(groups);
  return status;
}

hetc_status_t hetc_cost_model_predict(const hetc_cost_model_t *model, const float *features,
                                      const float *base_margin, int64_t rows, float *out_scores) {
  if (!model) return hetc_status_new(HETC_STATUS_INVALID_ARGUMENT, "cost model: no model");
  HETC_RETURN_IF_ERROR(check_rows(model, features, base_margin, rows));
  if (rows == 0) return NULL;
  if (!out_scores)
    return hetc_status_new(HETC_STATUS_INVALID_ARGUMENT, "cost model: no output array");

  hetc_status_t status = NULL;
  DMatrixHandle matrix = NULL;
  model_lock(model);
  if (!model->booster) {
    if (base_margin)
      memmove(out_scores, base_margin, (size_t)rows * sizeof(float));
    else
      memset(out_scores, 0, (size_t)rows * sizeof(float));
    goto cleanup;
  }
  /* The base margin is copied into the matrix here, before out_scores is
   * written, which is what lets the two arrays alias. */
  status = matrix_create(model, features, base_margin, rows, &matrix);
  if (status) goto cleanup;
  /* type 1: the raw margin. rank:pairwise applies no transform anyway;
   * asking for the margin says that a score is a margin. */
  static const char predict_config[] =
      "{\"type\": 1, \"training\": false, \"iteration_begin\": 0, \"iteration_end\": 0, "
      "\"strict_shape\": false}";
  const bst_ulong *shape = NULL;
  bst_ulong dims = 0;
  const float *result = NULL;
  if (XGBoosterPredictFromDMatrix(model->booster, matrix, predict_config, &shape, &dims,
                                  &result) != 0) {
    status = xgboost_error(HETC_STATUS_INTERNAL, "predicting");
    goto cleanup;
  }
  bst_ulong count = 1;
  for (bst_ulong d = 0; d < dims; d++) count *= shape[d];
  if (count != (bst_ulong)rows) {
    status = hetc_status_new(HETC_STATUS_INTERNAL,
                             "xgboost: predicting: %" PRIu64 " scores for %" PRId64 " rows",
                             (uint64_t)count, rows);
    goto cleanup;
  }
  /* result lives in XGBoost's per-thread buffer until its next call on
   * this booster: copied while the lock is held. */
  memcpy(out_scores, result, (size_t)rows * sizeof(float));

cleanup:
  model_unlock(model);
  if (matrix) XGDMatrixFree(matrix);
  return status;
}

/* ------------------------------------------------------------------------ */
/* Saving and loading. */

hetc_status_t hetc_cost_model_to_bytes(const hetc_cost_model_t *model, const char *path, char **out_bytes,
                                       size_t *out_length) {
  *out_bytes = NULL;
  *out_length = 0;
  if (!model || !path)
    return hetc_status_new(HETC_STATUS_INVALID_ARGUMENT, "cost model: nothing to save");
  char *payload = NULL;
  size_t payload_bytes = 0;
  hetc_status_t status = NULL;
  model_lock(model);
  if (model->booster) {
    bst_ulong length = 0;
    const char *buffer = NULL;
    if (XGBoosterSaveModelToBuffer(model->booster, "{\"format\": \"json\"}", &length, &buffer) !=
        0) {
      status = xgboost_error(HETC_STATUS_INTERNAL, "saving the trees");
    } else if (!(payload = malloc(length ? (size_t)length : 1))) {
      status = hetc_status_new(HETC_STATUS_OUT_OF_MEMORY, "%s: %" PRIu64 " bytes of trees", path,
                               (uint64_t)length);
    } else {
      /* The buffer is XGBoost's until its next call on this booster. */
      memcpy(payload, buffer, (size_t)length);
      payload_bytes = (size_t)length;
    }
  }
  int trained = model->booster != NULL;
  model_unlock(model);
  if (status) return hetc_status_annotate(status, "%s", path);

  char header[160];
  int header_bytes =
      snprintf(header, sizeof(header),
               COST_MODEL_MAGIC " %d features %d trained %d bytes %zu fnv1a64 %016" PRIx64 "\n",
               COST_MODEL_FORMAT_VERSION, model->num_features, trained, payload_bytes,
               hetc_fnv1a64(payload, payload_bytes, HETC_FNV1A64_OFFSET));
  char *bytes = malloc((size_t)header_bytes + payload_bytes + 1);
  if (!bytes) status = hetc_status_new(HETC_STATUS_OUT_OF_MEMORY, "%s: saving the cost model", path);
  if (bytes) {
    memcpy(bytes, header, (size_t)header_bytes);
    if (payload_bytes) memcpy(bytes + header_bytes, payload, payload_bytes);
    bytes[(size_t)header_bytes + payload_bytes] = '\0';
    *out_bytes = bytes;
    *out_length = (size_t)header_bytes + payload_bytes;
  }
  free(payload);
  return status;
}

hetc_status_t hetc_cost_model_save(const hetc_cost_model_t *model, const char *path) {
  char *bytes = NULL;
  size_t length = 0;
  HETC_RETURN_IF_ERROR(hetc_cost_model_to_bytes(model, path, &bytes, &length));
  /* Replaced atomically: a tuner reading the model while another saves it
   * sees the old model or the new. */
  hetc_status_t status = hetc_file_replace(path, bytes, length);
  free(bytes);
  return status;
}

/* The parsed header line; `end` is the offset of the payload. */
typedef struct model_header_t {
  int features;
  int trained;
  unsigned long long bytes;
  unsigned long long checksum;
  size_t end;
} model_header_t;

static hetc_status_t header_parse(const char *path, const char *data, size_t length,
                                  model_header_t *out) {
  const size_t magic_length = strlen(COST_MODEL_MAGIC);
  if (length <= magic_length || memcmp(data, COST_MODEL_MAGIC " ", magic_length + 1) != 0)
    return hetc_status_new(HETC_STATUS_BAD_INPUT, "%s: not a hetc cost model", path);
  /* The header is short; copying its first line makes sscanf safe on a
   * file without a NUL before the payload. */
  const char *newline = memchr(data, '\n', length < 256 ? length : 256);
  if (!newline)
    return hetc_status_new(HETC_STATUS_BAD_INPUT, "%s: corrupt cost model: no header line", path);
  char line[257];
  size_t line_length = (size_t)(newline - data);
  memcpy(line, data, line_length);
  line[line_length] = 0;

  int version = 0;
  if (sscanf(line + magic_length, " %d", &version) != 1)
    return hetc_status_new(HETC_STATUS_BAD_INPUT, "%s: corrupt cost model: bad header", path);
  if (version != COST_MODEL_FORMAT_VERSION)
    return hetc_status_new(HETC_STATUS_BAD_INPUT, "%s: cost model format version %d, expected %d",
                           path, version, COST_MODEL_FORMAT_VERSION);
  model_header_t header = {0};
  int consumed = 0;
  if (sscanf(line + magic_length, " %*d features %d trained %d bytes %llu fnv1a64 %16llx%n",
             &header.features, &header.trained, &header.bytes, &header.checksum,
             &consumed) != 4 ||
      line[magic_length + (size_t)consumed] != 0 || (header.trained != 0 && header.trained != 1))
    return hetc_status_new(HETC_STATUS_BAD_INPUT, "%s: corrupt cost model: bad header", path);
  header.end = line_length + 1;
  *out = header;
  return NULL;
}

hetc_status_t hetc_cost_model_load(const char *path, int32_t num_features,
                                   hetc_cost_model_t **out_model) {
  return hetc_cost_model_load_with_options(path, num_features, NULL, out_model);
}

hetc_status_t hetc_cost_model_load_with_options(const char *path, int32_t num_features,
                                                const hetc_cost_model_options_t *options,
                                                hetc_cost_model_t **out_model) {
  if (!path || !out_model)
    return hetc_status_new(HETC_STATUS_INVALID_ARGUMENT, "cost model: nothing to load");
  char *data = NULL;
  size_t length = 0;
  HETC_RETURN_IF_ERROR(hetc_file_read_all(path, COST_MODEL_MAX_FILE_BYTES, &data, &length));
  hetc_status_t status = hetc_cost_model_from_bytes(path, data, length, num_features, options, out_model);
  free(data);
  return status;
}

hetc_status_t hetc_cost_model_from_bytes(const char *path, const char *data, size_t length, int32_t num_features,
                                         const hetc_cost_model_options_t *options, hetc_cost_model_t **out_model) {
  *out_model = NULL;
  hetc_status_t status = NULL;
  hetc_cost_model_t *model = NULL;
  BoosterHandle booster = NULL;
  model_header_t header = {0};
  status = header_parse(path, data, length, &header);
  if (status) goto cleanup;
  if (header.features != num_features) {
    status = hetc_status_new(HETC_STATUS_BAD_INPUT, "%s: cost model has %d features, expected %d",
                             path, header.features, num_features);
    goto cleanup;
  }
  size_t payload_bytes = length - header.end;
  if (header.bytes != payload_bytes || (!header.trained && header.bytes != 0)) {
    status = hetc_status_new(HETC_STATUS_BAD_INPUT,
                             "%s: corrupt cost model: the header promises %llu bytes of trees, "
                             "the file has %zu",
                             path, header.bytes, payload_bytes);
    goto cleanup;
  }
  const char *payload = data + header.end;
  if (hetc_fnv1a64(payload, payload_bytes, HETC_FNV1A64_OFFSET) != header.checksum) {
    status = hetc_status_new(HETC_STATUS_BAD_INPUT, "%s: corrupt cost model: checksum mismatch",
                             path);
    goto cleanup;
  }
  status = hetc_cost_model_create(num_features, options, &model);
  if (status) goto cleanup;
  if (header.trained) {
    if (XGBoosterCreate(NULL, 0, &booster) != 0) {
      booster = NULL;
      status = xgboost_error(HETC_STATUS_INTERNAL, "creating a booster");
      goto cleanup;
    }
    if (XGBoosterLoadModelFromBuffer(booster, payload, (bst_ulong)payload_bytes) != 0) {
      status = hetc_status_annotate(xgboost_error(HETC_STATUS_BAD_INPUT, "loading the trees"),
                                    "%s: corrupt cost model", path);
      goto cleanup;
    }
    bst_ulong tree_features = 0;
    if (XGBoosterGetNumFeature(booster, &tree_features) != 0) {
      status = hetc_status_annotate(xgboost_error(HETC_STATUS_BAD_INPUT, "reading the width"),
                                    "%s: corrupt cost model", path);
      goto cleanup;
    }
    if (tree_features != (bst_ulong)num_features) {
      status = hetc_status_new(HETC_STATUS_BAD_INPUT,
                               "%s: corrupt cost model: the trees use %" PRIu64
                               " features, the header says %d",
                               path, (uint64_t)tree_features, num_features);
      goto cleanup;
    }
    status = booster_set_threads(model, booster);
    if (status) goto cleanup;
    model->booster = booster;
    booster = NULL;
  }
  *out_model = model;
  model = NULL;

cleanup:
  if (booster) XGBoosterFree(booster);
  hetc_cost_model_free(model);
  return status;
}
