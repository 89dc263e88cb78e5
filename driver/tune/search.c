/* driver/tune/search.c -- the search object, its set of seen points, and the
 * two strategies without state of their own (random and grid). */
#include "tune/search_internal.h"

#include <assert.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Random draws of an unseen point before hetc_search_draw_unseen walks
 * valid_at instead. While at least 1/8 of the space is unseen, 32 draws all
 * hit seen points with probability below 2e-2; past that the walk is cheap
 * anyway, because so few points remain. */
#define DRAW_TRIES 32

/* Stands in for a zero seed: xorshift64 must not start at 0. */
#define DEFAULT_SEED UINT64_C(0x9e3779b97f4a7c15)

/* ------------------------------------------------------------------------ */
/* Random numbers                                                           */
/* ------------------------------------------------------------------------ */

/* splitmix64's finaliser: spreads nearby integers (seeds, indices) over all
 * 64 bits. */
static uint64_t mix64(uint64_t x) {
  x ^= x >> 30;
  x *= UINT64_C(0xbf58476d1ce4e5b9);
  x ^= x >> 27;
  x *= UINT64_C(0x94d049bb133111eb);
  x ^= x >> 31;
  return x;
}

uint64_t hetc_search_rng_next(uint64_t *state) {
  uint64_t x = *state;
  x ^= x << 13;
  x ^= x >> 7;
  x ^= x << 17;
  *state = x;
  return x;
}

double hetc_search_rng_unit(uint64_t *state) {
  return (double)(hetc_search_rng_next(state) >> 11) * 0x1.0p-53;
}

uint64_t hetc_search_rng_below(uint64_t *state, uint64_t bound) {
  assert(bound >= 1);
  /* The modulo bias is below bound / 2^64: irrelevant for any space. */
  return hetc_search_rng_next(state) % bound;
}

/* ------------------------------------------------------------------------ */
/* Set of indices                                                           */
/* ------------------------------------------------------------------------ */

#define SET_EMPTY INT64_C(-1)

static hetc_status_t set_alloc_slots(hetc_search_set_t *set, uint64_t slot_count) {
  int64_t *slots = malloc(slot_count * sizeof(*slots));
  if (!slots)
    return hetc_status_new(HETC_STATUS_OUT_OF_MEMORY, "search: no memory for %llu set slots",
                           (unsigned long long)slot_count);
  /* All bytes 0xff is -1, the empty marker. */
  memset(slots, 0xff, slot_count * sizeof(*slots));
  set->slots = slots;
  set->mask = slot_count - 1;
  set->count = 0;
  return NULL;
}

hetc_status_t hetc_search_set_init(hetc_search_set_t *set, int64_t expected) {
  uint64_t slot_count = 64;
  while ((int64_t)slot_count < expected * 2 + 2) slot_count *= 2;
  return set_alloc_slots(set, slot_count);
}

void hetc_search_set_release(hetc_search_set_t *set) {
  free(set->slots);
  memset(set, 0, sizeof(*set));
}

void hetc_search_set_clear(hetc_search_set_t *set) {
  memset(set->slots, 0xff, (set->mask + 1) * sizeof(*set->slots));
  set->count = 0;
}

static uint64_t set_find(const hetc_search_set_t *set, int64_t key) {
  uint64_t at = mix64((uint64_t)key) & set->mask;
  while (set->slots[at] != SET_EMPTY && set->slots[at] != key) at = (at + 1) & set->mask;
  return at;
}

int hetc_search_set_contains(const hetc_search_set_t *set, int64_t key) {
  return set->slots[set_find(set, key)] == key;
}

hetc_status_t hetc_search_set_add(hetc_search_set_t *set, int64_t key, int *out_added) {
  assert(key >= 0);
  if (out_added) *out_added = 0;
  uint64_t at = set_find(set, key);
  if (set->slots[at] == key) return NULL;
  if ((uint64_t)(set->count + 1) * 2 > set->mask + 1) {
    hetc_search_set_t grown;
    HETC_RETURN_IF_ERROR(set_alloc_slots(&grown, (set->mask + 1) * 2));
    for (uint64_t i = 0; i <= set->mask; ++i) {
      if (set->slots[i] == SET_EMPTY) continue;
      grown.slots[set_find(&grown, set->slots[i])] = set->slots[i];
      ++grown.count;
    }
    free(set->slots);
    *set = grown;
    at = set_find(set, key);
  }
  set->slots[at] = key;
  ++set->count;
  if (out_added) *out_added = 1;
  return NULL;
}

/* ------------------------------------------------------------------------ */
/* Names                                                                    */
/* ------------------------------------------------------------------------ */

static const char *const kind_names[] = {"random", "grid", "genetic", "model"};
#define KIND_COUNT ((int)(sizeof(kind_names) / sizeof(kind_names[0])))

const char *hetc_search_kind_name(hetc_search_kind_t kind) {
  if ((int)kind < 0 || (int)kind >= KIND_COUNT) return "unknown";
  return kind_names[kind];
}

int hetc_search_kind_from_name(const char *name, hetc_search_kind_t *out_kind) {
  for (int i = 0; name && i < KIND_COUNT; ++i) {
    if (strcmp(name, kind_names[i]) == 0) {
      *out_kind = (hetc_search_kind_t)i;
      return 1;
    }
  }
  return 0;
}

/* ------------------------------------------------------------------------ */
/* Shared helpers                                                           */
/* ------------------------------------------------------------------------ */

int hetc_search_exhausted(const hetc_search_t *search) {
  return search->seen_valid >= search->valid_count;
}

int hetc_search_seen(const hetc_search_t *search, int64_t index) {
  return hetc_search_set_contains(&search->seen, index);
}

hetc_status_t hetc_search_propose(hetc_search_t *search, int64_t index) {
  assert(!hetc_search_seen(search, index));
  if (index < 0 || !search->space.is_valid(search->space.user, index))
    return hetc_status_new(HETC_STATUS_INTERNAL,
                           "search: the space handed out %lld, which is not a valid point",
                           (long long)index);
  HETC_RETURN_IF_ERROR(hetc_search_set_add(&search->seen, index, NULL));
  ++search->seen_valid;
  return NULL;
}

hetc_status_t hetc_search_draw(hetc_search_t *search, int64_t *out_index) {
  const hetc_search_space_t *space = &search->space;
  hetc_status_t status = space->sample(space->user, &search->rng, out_index);
  if (!status || hetc_status_code(status) != HETC_STATUS_UNSUPPORTED) return status;
  /* A space whose valid points are too sparse to hit by rejection sampling
   * still enumerates them, and a random n is just as uniform. */
  hetc_status_free(status);
  if (search->valid_count <= 0)
    return hetc_status_new(HETC_STATUS_UNSUPPORTED, "search: the space has no valid point");
  int64_t n = (int64_t)hetc_search_rng_below(&search->rng, (uint64_t)search->valid_count);
  return space->valid_at(space->user, n, out_index);
}

hetc_status_t hetc_search_draw_unseen(hetc_search_t *search, int64_t *out_index,
                                      int *out_found) {
  *out_found = 0;
  if (hetc_search_exhausted(search)) return NULL;
  for (int attempt = 0; attempt < DRAW_TRIES; ++attempt) {
    int64_t index;
    HETC_RETURN_IF_ERROR(hetc_search_draw(search, &index));
    if (!hetc_search_seen(search, index)) {
      *out_index = index;
      *out_found = 1;
      return NULL;
    }
  }
  const hetc_search_space_t *space = &search->space;
  int64_t count = search->valid_count;
  int64_t start = (int64_t)hetc_search_rng_below(&search->rng, (uint64_t)count);
  for (int64_t step = 0; step < count; ++step) {
    int64_t n = start + step < count ? start + step : start + step - count;
    int64_t index;
    HETC_RETURN_IF_ERROR(space->valid_at(space->user, n, &index));
    if (!hetc_search_seen(search, index)) {
      *out_index = index;
      *out_found = 1;
      return NULL;
    }
  }
  /* seen_valid says some valid point is unseen, but valid_at cannot find
   * one: the space's count and its enumeration disagree. */
  return hetc_status_new(HETC_STATUS_INTERNAL,
                         "search: valid_count says %lld valid points, valid_at enumerates "
                         "fewer unseen ones",
                         (long long)count);
}

hetc_status_t hetc_search_fill_random(hetc_search_t *search, int32_t capacity,
                                      int64_t *out_indices, int32_t *count) {
  while (*count < capacity) {
    int64_t index;
    int found;
    HETC_RETURN_IF_ERROR(hetc_search_draw_unseen(search, &index, &found));
    if (!found) break;
    HETC_RETURN_IF_ERROR(hetc_search_propose(search, index));
    out_indices[(*count)++] = index;
  }
  return NULL;
}

/* ------------------------------------------------------------------------ */
/* Grid                                                                     */
/* ------------------------------------------------------------------------ */

static hetc_status_t grid_next(hetc_search_t *search, int32_t capacity, int64_t *out_indices,
                               int32_t *out_count) {
  const hetc_search_space_t *space = &search->space;
  while (*out_count < capacity && search->grid_cursor < search->valid_count) {
    int64_t index;
    HETC_RETURN_IF_ERROR(space->valid_at(space->user, search->grid_cursor, &index));
    ++search->grid_cursor;
    if (hetc_search_seen(search, index)) continue;
    HETC_RETURN_IF_ERROR(hetc_search_propose(search, index));
    out_indices[(*out_count)++] = index;
  }
  return NULL;
}

/* ------------------------------------------------------------------------ */
/* The object                                                               */
/* ------------------------------------------------------------------------ */

hetc_status_t hetc_search_create(hetc_search_kind_t kind, const hetc_search_space_t *space,
                                 hetc_search_score_fn_t score, void *score_user,
                                 const hetc_search_options_t *options,
                                 hetc_search_t **out_search) {
  *out_search = NULL;
  if ((int)kind < 0 || (int)kind >= KIND_COUNT)
    return hetc_status_new(HETC_STATUS_INVALID_ARGUMENT, "search: unknown kind %d", (int)kind);
  if (!space || !space->valid_count || !space->valid_at || !space->sample ||
      !space->neighbor || !space->decode || !space->encode || !space->is_valid)
    return hetc_status_new(HETC_STATUS_INVALID_ARGUMENT,
                           "search: the space lacks a callback");
  if (kind == HETC_SEARCH_MODEL && !score)
    return hetc_status_new(HETC_STATUS_INVALID_ARGUMENT,
                           "search: the model-guided search needs a score function");
  int64_t valid_count = space->valid_count(space->user);
  if (valid_count < 0)
    return hetc_status_new(HETC_STATUS_INVALID_ARGUMENT,
                           "search: the space reports %lld valid points", (long long)valid_count);

  hetc_search_t *search = calloc(1, sizeof(*search));
  if (!search) return hetc_status_new(HETC_STATUS_OUT_OF_MEMORY, "search: no memory");
  search->kind = kind;
  search->space = *space;
  search->score = score;
  search->score_user = score_user;
  search->valid_count = valid_count;
  if (options) search->options = *options;
  hetc_search_options_t *o = &search->options;
  if (o->sa_chains <= 0) o->sa_chains = 64;
  if (o->sa_steps <= 0) o->sa_steps = 500;
  if (o->epsilon == 0.0 || isnan(o->epsilon)) o->epsilon = 0.05;
  if (o->epsilon < 0.0) o->epsilon = 0.0;
  if (o->epsilon > 1.0) o->epsilon = 1.0;
  if (o->diversity == 0.0 || isnan(o->diversity)) o->diversity = 0.3;
  if (o->diversity < 0.0) o->diversity = 0.0;
  /* Seeds 1, 2, 3 would start xorshift in nearly-zero states whose first
   * outputs are small and alike; mixing spreads them. */
  search->rng = mix64(o->seed ? o->seed : DEFAULT_SEED);
  if (!search->rng) search->rng = DEFAULT_SEED;

  hetc_status_t status = hetc_search_set_init(&search->seen, 1024);
  if (!status && kind == HETC_SEARCH_GENETIC) status = hetc_search_genetic_create(search);
  if (!status && kind == HETC_SEARCH_MODEL) status = hetc_search_model_create(search);
  if (status) {
    hetc_search_free(search);
    return status;
  }
  *out_search = search;
  return NULL;
}

void hetc_search_free(hetc_search_t *search) {
  if (!search) return;
  hetc_search_genetic_free(search->genetic);
  hetc_search_model_free(search->model);
  hetc_search_set_release(&search->seen);
  free(search);
}

/* Adds points to the seen set, counting those that are valid towards
 * exhaustion. */
static hetc_status_t mark_seen(hetc_search_t *search, const int64_t *indices, int32_t count) {
  for (int32_t i = 0; i < count; ++i)
    if (indices[i] < 0)
      return hetc_status_new(HETC_STATUS_INVALID_ARGUMENT,
                             "search: negative point index %lld", (long long)indices[i]);
  for (int32_t i = 0; i < count; ++i) {
    int added;
    HETC_RETURN_IF_ERROR(hetc_search_set_add(&search->seen, indices[i], &added));
    if (added && search->space.is_valid(search->space.user, indices[i])) ++search->seen_valid;
  }
  return NULL;
}

hetc_status_t hetc_search_mark_visited(hetc_search_t *search, const int64_t *indices,
                                       int32_t count) {
  if (count < 0 || (count > 0 && !indices))
    return hetc_status_new(HETC_STATUS_INVALID_ARGUMENT, "search: bad visited list");
  return mark_seen(search, indices, count);
}

hetc_status_t hetc_search_next_batch(hetc_search_t *search, int32_t capacity,
                                     int64_t *out_indices, int32_t *out_count) {
  *out_count = 0;
  if (capacity < 1 || !out_indices)
    return hetc_status_new(HETC_STATUS_INVALID_ARGUMENT,
                           "search: a batch needs room for at least one point");
  switch (search->kind) {
    case HETC_SEARCH_RANDOM:
      return hetc_search_fill_random(search, capacity, out_indices, out_count);
    case HETC_SEARCH_GRID: return grid_next(search, capacity, out_indices, out_count);
    case HETC_SEARCH_GENETIC:
      return hetc_search_genetic_next(search, capacity, out_indices, out_count);
    case HETC_SEARCH_MODEL:
      return hetc_search_model_next(search, capacity, out_indices, out_count);
  }
  return hetc_status_new(HETC_STATUS_INTERNAL, "search: unknown kind");
}

hetc_status_t hetc_search_update(hetc_search_t *search, const int64_t *indices,
                                 const double *throughputs, int32_t count) {
  if (count < 0 || (count > 0 && (!indices || !throughputs)))
    return hetc_status_new(HETC_STATUS_INVALID_ARGUMENT, "search: bad update list");
  HETC_RETURN_IF_ERROR(mark_seen(search, indices, count));
  if (search->kind == HETC_SEARCH_GENETIC)
    return hetc_search_genetic_update(search, indices, throughputs, count);
  if (search->kind == HETC_SEARCH_MODEL)
    return hetc_search_model_update(search, indices, throughputs, count);
  return NULL;
}
