/* driver/tune/search.h -- what to measure next (README.md, "Tuning").
 *
 * A search walks an abstract space of valid points and proposes batches of
 * points to measure. Four strategies share one interface:
 *   random  -- uniform valid points without repetition;
 *   grid    -- valid points in order: the 0th, the 1st, ...;
 *   genetic -- AutoTVM's GA tuner: a population bred from measured fitness;
 *   model   -- simulated annealing on cost-model predictions, with chains
 *              that persist across batches, a plan picked for diversity and
 *              a few random points (epsilon-greedy). The main one.
 * No search proposes a point twice or proposes a point marked visited, and
 * every search is deterministic for a given seed (given the same space, the
 * same scores and the same updates in the same order).
 *
 * A search is used by one thread at a time. It keeps only the points it has
 * seen (an open-addressing hash set), never a bitmap over the space, so
 * spaces of 2^40 points and more are fine. */
#ifndef HETC_DRIVER_TUNE_SEARCH_H_
#define HETC_DRIVER_TUNE_SEARCH_H_

#include <stdint.h>

#include "common/status.h"

/* The most knobs decode() may report for one point. */
#define HETC_SEARCH_MAX_KNOBS 64

/* The space a search walks: global int64 indices (>= 0) of valid points.
 * Every callback returns NULL or a failure, which the search hands on to its
 * own caller; rng is xorshift64 state owned by the caller (never 0). The
 * struct is copied by hetc_search_create; `user` is borrowed and must outlive
 * the search. */
typedef struct hetc_search_space_t {
  void *user;
  /* How many valid points there are; a negative count is a failure. */
  int64_t (*valid_count)(void *user);
  /* The n-th valid point, a bijection on [0, valid_count). */
  hetc_status_t (*valid_at)(void *user, int64_t n, int64_t *out_index);
  /* A uniformly random valid point. UNSUPPORTED when the space cannot find
   * one by sampling; the search then draws valid_at(random n) instead. */
  hetc_status_t (*sample)(void *user, uint64_t *rng, int64_t *out_index);
  /* A valid point one knob away from `index`; UNSUPPORTED if none. */
  hetc_status_t (*neighbor)(void *user, int64_t index, uint64_t *rng, int64_t *out_index);
  /* Knob-level view for crossover and for diversity: the template (group)
   * of a point, its knob count and per-knob candidate numbers (capacity
   * HETC_SEARCH_MAX_KNOBS); returns the knob count. */
  int32_t (*decode)(void *user, int64_t index, int32_t *out_group, int64_t *out_choices);
  /* And back. INVALID_ARGUMENT or UNSUPPORTED for choices that name no point
   * (the genetic search rejects that child); any other failure is handed on.
   * The point it returns may still be invalid: check with is_valid. */
  hetc_status_t (*encode)(void *user, int32_t group, const int64_t *choices,
                          int64_t *out_index);
  /* 1 when `index` is a point of the space that satisfies every constraint,
   * 0 otherwise (also for indices outside the space). */
  int (*is_valid)(void *user, int64_t index);
} hetc_search_space_t;

/* Scores `count` candidates with the cost model, higher = predicted faster,
 * into out_scores[0..count). Called with many indices at once (a batch
 * prediction); the scores of one point must not change between calls unless
 * the caller retrained the model in between. NaN counts as the worst score.
 * NULL for searches that need none. */
typedef hetc_status_t (*hetc_search_score_fn_t)(void *user, const int64_t *indices,
                                                int32_t count, float *out_scores);

typedef enum hetc_search_kind_t {
  HETC_SEARCH_RANDOM,
  HETC_SEARCH_GRID,
  HETC_SEARCH_GENETIC,
  HETC_SEARCH_MODEL,
} hetc_search_kind_t;

/* "random", "grid", "genetic", "model"; "unknown" for any other value.
 * Static strings. */
const char *hetc_search_kind_name(hetc_search_kind_t kind);
/* Sets *out_kind and returns 1 when `name` is one of the names above;
 * returns 0 (and leaves *out_kind alone) otherwise. */
int hetc_search_kind_from_name(const char *name, hetc_search_kind_t *out_kind);

/* Knobs of the searches. A zero field means its default (listed beside it);
 * a negative epsilon or diversity turns that feature off. */
typedef struct hetc_search_options_t {
  uint64_t seed;     /* rng seed; 0: a fixed default seed */
  /* model: parallel annealing chains; default 64 (128 took twice the time
   * per batch for a few trials fewer to 95% in simulation) */
  int32_t sa_chains;
  int32_t sa_steps;  /* model: most annealing steps per batch; default 500
                      * (a batch stops early once 50 steps in a row found no
                      * better candidate) */
  double epsilon;    /* model: share of each batch drawn at random; default
                      * 0.05 (the fraction of epsilon x capacity is drawn as
                      * a coin so that small batches get it on average) */
  double diversity;  /* model: two candidates of one template that differ in
                      * fewer than diversity x knob-count knobs are too close
                      * to be in one batch while others remain; default 0.3 */
} hetc_search_options_t;

typedef struct hetc_search_t hetc_search_t;

/* A search of `kind` over `space`. `score` (with `score_user`, borrowed) is
 * required by HETC_SEARCH_MODEL and ignored by the others; `options` may be
 * NULL (all defaults). INVALID_ARGUMENT for a missing callback, a missing
 * score for the model search or an unknown kind. On success *out_search is
 * owned by the caller and released with hetc_search_free. */
hetc_status_t hetc_search_create(hetc_search_kind_t kind, const hetc_search_space_t *space,
                                 hetc_search_score_fn_t score, void *score_user,
                                 const hetc_search_options_t *options,
                                 hetc_search_t **out_search);
/* Releases the search; NULL is fine. */
void hetc_search_free(hetc_search_t *search);

/* Marks points already measured (e.g. found in the records store) so they
 * are never proposed. Indices that are not valid points are remembered but
 * do not count towards exhausting the space. INVALID_ARGUMENT for a negative
 * index (no point has one). */
hetc_status_t hetc_search_mark_visited(hetc_search_t *search, const int64_t *indices,
                                       int32_t count);

/* Next batch into out_indices[0..*out_count): up to `capacity` (>= 1)
 * distinct valid points never proposed or visited before. *out_count <
 * capacity only when the space is exhausted (0 = done). A failure of a
 * callback is handed on; the search stays usable, but the points of the
 * failed batch may count as proposed. */
hetc_status_t hetc_search_next_batch(hetc_search_t *search, int32_t capacity,
                                     int64_t *out_indices, int32_t *out_count);

/* Results of measured points: throughput (higher better; 0 for a failed
 * config; NaN and negatives count as 0). The points become visited. The
 * model-guided search expects the caller to retrain the model between
 * batches (it seeds restarted annealing chains from the best results); the
 * genetic search uses these as fitness; random and grid only mark them. */
hetc_status_t hetc_search_update(hetc_search_t *search, const int64_t *indices,
                                 const double *throughputs, int32_t count);

#endif /* HETC_DRIVER_TUNE_SEARCH_H_ */
