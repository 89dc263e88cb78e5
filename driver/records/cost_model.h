/* driver/records/cost_model.h -- the tuner's cost model: gradient-boosted trees
 * (XGBoost's C API) that rank the candidate configs of a task by predicted
 * throughput (README.md, "Tuning").
 *
 * The model never predicts seconds. It is trained with a ranking objective
 * on rows grouped by task, so a score only orders configs of one task:
 * higher means faster, and scores of two different tasks are not
 * comparable. Rows are fixed-width float vectors (the shared feature
 * schema); NaN marks a missing feature.
 *
 * Threads: every call on one model is safe from several threads at once
 * except hetc_cost_model_free, which must be the last call. Predictions
 * and saves on one model are serialised by a lock inside it; training
 * builds the new trees without holding that lock, so predictions go on
 * with the previous trees until the new ones replace them in one step.
 * Each XGBoost call uses `threads` OpenMP threads (1 by default). The
 * module changes no process-wide XGBoost setting. */
#ifndef HETC_DRIVER_RECORDS_COST_MODEL_H_
#define HETC_DRIVER_RECORDS_COST_MODEL_H_

#include <stdint.h>

#include "common/status.h"

/* What a zero field in hetc_cost_model_options_t stands for. */
#define HETC_COST_MODEL_DEFAULT_ROUNDS 100
#define HETC_COST_MODEL_DEFAULT_MAX_DEPTH 6
#define HETC_COST_MODEL_DEFAULT_ETA 0.2
#define HETC_COST_MODEL_DEFAULT_THREADS 1

typedef struct hetc_cost_model_t hetc_cost_model_t;

/* Training settings; a zero field (or a NULL pointer for the whole struct)
 * takes the default above. Negative values are INVALID_ARGUMENT. */
typedef struct hetc_cost_model_options_t {
  int32_t rounds;    /* boosting rounds (trees) per training */
  int32_t max_depth; /* depth of each tree */
  double eta;        /* shrinkage of each tree, in (0, 1] */
  /* OpenMP threads per XGBoost call. The default is 1 because the pair
   * sampling of the ranking objective depends on the thread count: only
   * a fixed count gives bit-identical models across machines. */
  int32_t threads;
  /* Given to XGBoost as its `seed` (the top bit dropped: XGBoost takes an
   * int64). With the parameters chosen in cost_model.c XGBoost draws no
   * random numbers from it, so training is a function of the data alone;
   * the seed is kept so that a sampling parameter added later stays
   * reproducible. */
  uint64_t seed;
} hetc_cost_model_options_t;

/* An untrained model for rows of num_features (> 0) floats. *out_model is
 * owned by the caller and released with hetc_cost_model_free. */
hetc_status_t hetc_cost_model_create(int32_t num_features, const hetc_cost_model_options_t *options,
                                     hetc_cost_model_t **out_model);

/* Releases the model and its trees. NULL is a no-op. */
void hetc_cost_model_free(hetc_cost_model_t *model);

/* Trains from scratch on `rows` rows of num_features floats (row-major;
 * NaN = missing; infinities are INVALID_ARGUMENT).
 *   labels       per-task normalised throughput in [0, 1] (best cost /
 *                cost; a failed config is 0).
 *   base_margin  NULL, or one prior per row added to the model's margin:
 *                the global model's prediction when training a task's own
 *                model on top of it (transfer.h).
 *   group_sizes  rows are grouped contiguously by task, group g holding
 *                group_sizes[g] rows; the sizes must add up to `rows`.
 *                Empty groups are allowed and skipped.
 * Zero rows (with any groups summing to 0) make the model untrained again.
 * All inputs are borrowed for the call only. On failure the model keeps
 * the trees it had. */
hetc_status_t hetc_cost_model_train(hetc_cost_model_t *model, const float *features,
                                    const float *labels, const float *base_margin, int64_t rows,
                                    const uint32_t *group_sizes, int32_t num_groups);

/* Writes one score per row to out_scores (caller-owned, `rows` floats):
 * higher = predicted faster. base_margin is as in train (NULL: none); a
 * model trained with a prior must be given the same kind of prior here.
 * An untrained model returns base_margin (or zeros). out_scores may be
 * the same array as base_margin. */
hetc_status_t hetc_cost_model_predict(const hetc_cost_model_t *model, const float *features,
                                      const float *base_margin, int64_t rows, float *out_scores);

/* 1 when the model has trees, 0 when it is untrained (or NULL). */
int hetc_cost_model_trained(const hetc_cost_model_t *model);

/* Writes the model to `path` atomically: a temporary file beside it is
 * written, flushed and renamed over `path`, so a reader sees the old file
 * or the new one, never a torn one. An untrained model saves too (and
 * loads back untrained). The training options are not saved. */
hetc_status_t hetc_cost_model_save(const hetc_cost_model_t *model, const char *path);

/* Loads a model saved by hetc_cost_model_save into a new model with
 * default options; *out_model is owned by the caller. Every failure names
 * the file:
 *   IO_ERROR   "<path>: cannot open: No such file or directory" and the
 *              like (from hetc_file_read_all);
 *   BAD_INPUT  "<path>: not a hetc cost model",
 *              "<path>: cost model format version V, expected 1",
 *              "<path>: cost model has N features, expected M",
 *              "<path>: corrupt cost model: <what>" (truncated, checksum
 *              mismatch, or XGBoost refused the trees). */
hetc_status_t hetc_cost_model_load(const char *path, int32_t num_features,
                                   hetc_cost_model_t **out_model);

/* hetc_cost_model_load with options for the loaded model (NULL: defaults),
 * e.g. the thread count its predictions use. */
hetc_status_t hetc_cost_model_load_with_options(const char *path, int32_t num_features,
                                                const hetc_cost_model_options_t *options,
                                                hetc_cost_model_t **out_model);

/* The bytes hetc_cost_model_save writes (header and trees), in
 * *out_bytes (the caller frees them; NUL-terminated, the NUL not counted in
 * *out_length), for a store that keeps them elsewhere than in a file.
 * `path` names the model in messages. */
hetc_status_t hetc_cost_model_to_bytes(const hetc_cost_model_t *model, const char *path, char **out_bytes,
                                       size_t *out_length);
/* hetc_cost_model_load_with_options from those bytes (the caller's);
 * `path` names them in messages. */
hetc_status_t hetc_cost_model_from_bytes(const char *path, const char *data, size_t length, int32_t num_features,
                                         const hetc_cost_model_options_t *options, hetc_cost_model_t **out_model);

#endif /* HETC_DRIVER_RECORDS_COST_MODEL_H_ */
