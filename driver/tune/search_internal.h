/* driver/tune/search_internal.h -- what the search strategies share: the
 * search object, the set of seen points and the helpers that propose a
 * point. Private to driver/tune/search*.c. */
#ifndef HETC_DRIVER_TUNE_SEARCH_INTERNAL_H_
#define HETC_DRIVER_TUNE_SEARCH_INTERNAL_H_

#include <stdint.h>

#include "tune/search.h"

/* ------------------------------------------------------------------------ */
/* A set of point indices (open addressing, linear probing)                 */
/* ------------------------------------------------------------------------ */

/* Keys are >= 0; -1 marks an empty slot. Kept at most half full, so a probe
 * ends quickly. Owns `slots` (released by hetc_search_set_release). */
typedef struct hetc_search_set_t {
  int64_t *slots;
  uint64_t mask; /* slot count - 1; the slot count is a power of two */
  int64_t count;
} hetc_search_set_t;

hetc_status_t hetc_search_set_init(hetc_search_set_t *set, int64_t expected);
void hetc_search_set_release(hetc_search_set_t *set);
/* Empties the set, keeping its slots. */
void hetc_search_set_clear(hetc_search_set_t *set);
int hetc_search_set_contains(const hetc_search_set_t *set, int64_t key);
/* Adds key (>= 0); *out_added (may be NULL) says whether it was new. */
hetc_status_t hetc_search_set_add(hetc_search_set_t *set, int64_t key, int *out_added);

/* ------------------------------------------------------------------------ */
/* Random numbers (xorshift64; the state is never 0)                        */
/* ------------------------------------------------------------------------ */

uint64_t hetc_search_rng_next(uint64_t *state);
/* Uniform in [0, 1). */
double hetc_search_rng_unit(uint64_t *state);
/* Uniform in [0, bound) for bound >= 1. */
uint64_t hetc_search_rng_below(uint64_t *state, uint64_t bound);

/* ------------------------------------------------------------------------ */
/* The search object                                                        */
/* ------------------------------------------------------------------------ */

typedef struct hetc_search_genetic_t hetc_search_genetic_t;
typedef struct hetc_search_model_t hetc_search_model_t;

struct hetc_search_t {
  hetc_search_kind_t kind;
  hetc_search_space_t space;
  hetc_search_score_fn_t score;
  void *score_user;
  hetc_search_options_t options; /* defaults filled in */
  uint64_t rng;
  int64_t valid_count;           /* read once at creation */
  hetc_search_set_t seen;        /* proposed or visited */
  int64_t seen_valid;            /* how many of `seen` are valid points */
  int64_t grid_cursor;           /* grid: the next n to try */
  hetc_search_genetic_t *genetic; /* owned; NULL unless kind is genetic */
  hetc_search_model_t *model;     /* owned; NULL unless kind is model */
};

/* 1 once every valid point has been seen. */
int hetc_search_exhausted(const hetc_search_t *search);
int hetc_search_seen(const hetc_search_t *search, int64_t index);
/* Records `index` (a valid, unseen point) as proposed. INTERNAL when the
 * space handed out an invalid point: the search will not propose it. */
hetc_status_t hetc_search_propose(hetc_search_t *search, int64_t index);
/* A uniformly random valid point, seen or not (sample(), or valid_at of a
 * random n where the space cannot sample). */
hetc_status_t hetc_search_draw(hetc_search_t *search, int64_t *out_index);
/* A uniformly random valid point not seen yet: a few draws, then a walk of
 * valid_at from a random start once draws keep hitting seen points (near
 * exhaustion). *out_found is 0 when every valid point has been seen. */
hetc_status_t hetc_search_draw_unseen(hetc_search_t *search, int64_t *out_index,
                                      int *out_found);
/* Proposes random unseen points into out_indices[*count..capacity), so that
 * a batch is short only when the space is exhausted. */
hetc_status_t hetc_search_fill_random(hetc_search_t *search, int32_t capacity,
                                      int64_t *out_indices, int32_t *count);

/* ------------------------------------------------------------------------ */
/* The strategies with state of their own (search_genetic.c, search_model.c) */
/* ------------------------------------------------------------------------ */

hetc_status_t hetc_search_genetic_create(hetc_search_t *search);
void hetc_search_genetic_free(hetc_search_genetic_t *genetic);
hetc_status_t hetc_search_genetic_next(hetc_search_t *search, int32_t capacity,
                                       int64_t *out_indices, int32_t *out_count);
hetc_status_t hetc_search_genetic_update(hetc_search_t *search, const int64_t *indices,
                                         const double *throughputs, int32_t count);

hetc_status_t hetc_search_model_create(hetc_search_t *search);
void hetc_search_model_free(hetc_search_model_t *model);
hetc_status_t hetc_search_model_next(hetc_search_t *search, int32_t capacity,
                                     int64_t *out_indices, int32_t *out_count);
hetc_status_t hetc_search_model_update(hetc_search_t *search, const int64_t *indices,
                                       const double *throughputs, int32_t count);

#endif /* HETC_DRIVER_TUNE_SEARCH_INTERNAL_H_ */
