/* The search strategies (driver/tune/search.h) on a synthetic space: two
 * templates ("groups") of six knobs with a tile-size constraint that makes
 * about 30% of the points invalid, and an objective with structure (smooth
 * in the knob choices, a small ripple, one template clearly better). The
 * objective is the "measured" throughput; with deterministic per-point
 * noise it is also the cost model's score.
 *
 * Pinned down: no search repeats a point, proposes a visited or an invalid
 * point; grid and random (and the others) exhaust a 50-point space exactly;
 * every search is deterministic per seed; the model-guided search reaches
 * 95% of the optimum in far fewer trials than random, and the genetic
 * search in fewer; the annealing chains carry their progress from batch to
 * batch; a model batch is spread out, not one neighbourhood; and callback
 * failures come back to the caller. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "tune/search.h"

/* ------------------------------------------------------------------------ */
/* The synthetic space                                                      */
/* ------------------------------------------------------------------------ */

#define MAX_GROUPS 2
#define PI 3.14159265358979323846
#define MAX_KNOBS 6

/* One template: its knobs' candidate counts, the constraint (c0 + 1) x
 * (c1 + 1) <= limit (think threads per block), the objective's best choices
 * and the template's peak throughput. */
typedef struct group_def_t {
  int32_t knob_count;
  int64_t sizes[MAX_KNOBS];
  int64_t limit;
  int64_t best[MAX_KNOBS];
  double peak;
} group_def_t;

typedef struct test_space_t {
  int32_t group_count;
  group_def_t groups[MAX_GROUPS];
  int64_t size[MAX_GROUPS];        /* points of the group, valid or not */
  int64_t offset[MAX_GROUPS];      /* first global index of the group */
  int64_t *pairs[MAX_GROUPS];      /* valid c0 + s0 * c1, ascending */
  int64_t pair_count[MAX_GROUPS];
  int64_t valid_offset[MAX_GROUPS];
  int64_t valid_total;
  int64_t total;
  int no_neighbors;                /* neighbor() always UNSUPPORTED */
  int fail_sample_after;           /* > 0: sample() fails INTERNAL after so many calls */
  int sample_calls;
  double width;                    /* the objective's sharpness */
  double ripple;                   /* the objective's ripple on knob 1 */
  double noise;                    /* the score's relative noise */
  double noise_abs;                /* and absolute noise */
  int score_fail;                  /* score() fails INTERNAL */
  int64_t scored;                  /* points scored so far */
} test_space_t;

static uint64_t hash64(uint64_t x) {
  x ^= x >> 33;
  x *= UINT64_C(0xff51afd7ed558ccd);
  x ^= x >> 33;
  x *= UINT64_C(0xc4ceb9fe1a85ec53);
  x ^= x >> 33;
  return x;
}

static uint64_t test_rng(uint64_t *state) {
  uint64_t x = *state;
  x ^= x << 13;
  x ^= x >> 7;
  x ^= x << 17;
  return *state = x;
}

static void space_init(test_space_t *space, int32_t group_count, const group_def_t *groups) {
  memset(space, 0, sizeof(*space));
  space->group_count = group_count;
  space->width = 0.4;
  space->ripple = 0.1;
  space->noise = 0.2;
  space->noise_abs = 0.1;
  for (int32_t g = 0; g < group_count; ++g) {
    const group_def_t *def = &groups[g];
    space->groups[g] = *def;
    space->size[g] = 1;
    for (int32_t k = 0; k < def->knob_count; ++k) space->size[g] *= def->sizes[k];
    space->offset[g] = space->total;
    space->total += space->size[g];
    space->pairs[g] = malloc((size_t)(def->sizes[0] * def->sizes[1]) * sizeof(int64_t));
    assert_non_null(space->pairs[g]);
    for (int64_t c1 = 0; c1 < def->sizes[1]; ++c1)
      for (int64_t c0 = 0; c0 < def->sizes[0]; ++c0)
        if ((c0 + 1) * (c1 + 1) <= def->limit)
          space->pairs[g][space->pair_count[g]++] = c0 + def->sizes[0] * c1;
    space->valid_offset[g] = space->valid_total;
    space->valid_total +=
        space->pair_count[g] * (space->size[g] / (def->sizes[0] * def->sizes[1]));
  }
}

static void space_release(test_space_t *space) {
  for (int32_t g = 0; g < space->group_count; ++g) free(space->pairs[g]);
}

static int32_t space_decode(void *user, int64_t index, int32_t *out_group, int64_t *out_choices) {
  const test_space_t *space = user;
  int32_t g = space->group_count - 1;
  while (g > 0 && index < space->offset[g]) --g;
  int64_t local = index - space->offset[g];
  const group_def_t *def = &space->groups[g];
  for (int32_t k = 0; k < def->knob_count; ++k) {
    out_choices[k] = local % def->sizes[k];
    local /= def->sizes[k];
  }
  *out_group = g;
  return def->knob_count;
}

static int choices_valid(const group_def_t *def, const int64_t *choices) {
  return (choices[0] + 1) * (choices[1] + 1) <= def->limit;
}

static int space_is_valid(void *user, int64_t index) {
  const test_space_t *space = user;
  if (index < 0 || index >= space->total) return 0;
  int32_t group;
  int64_t choices[HETC_SEARCH_MAX_KNOBS];
  space_decode(user, index, &group, choices);
  return choices_valid(&space->groups[group], choices);
}

static int64_t space_valid_count(void *user) { return ((test_space_t *)user)->valid_total; }

static hetc_status_t space_valid_at(void *user, int64_t n, int64_t *out_index) {
  const test_space_t *space = user;
  if (n < 0 || n >= space->valid_total)
    return hetc_status_new(HETC_STATUS_INVALID_ARGUMENT, "valid_at(%lld) out of range",
                           (long long)n);
  int32_t g = space->group_count - 1;
  while (g > 0 && n < space->valid_offset[g]) --g;
  int64_t m = n - space->valid_offset[g];
  const group_def_t *def = &space->groups[g];
  int64_t rest = m / space->pair_count[g];
  int64_t pair = space->pairs[g][m % space->pair_count[g]];
  *out_index = space->offset[g] + pair + rest * def->sizes[0] * def->sizes[1];
  return NULL;
}

static hetc_status_t space_sample(void *user, uint64_t *rng, int64_t *out_index) {
  test_space_t *space = user;
  if (space->fail_sample_after > 0 && ++space->sample_calls > space->fail_sample_after)
    return hetc_status_new(HETC_STATUS_INTERNAL, "sample() broke");
  return space_valid_at(user, (int64_t)(test_rng(rng) % (uint64_t)space->valid_total),
                        out_index);
}

static hetc_status_t space_encode(void *user, int32_t group, const int64_t *choices,
                                  int64_t *out_index) {
  const test_space_t *space = user;
  if (group < 0 || group >= space->group_count)
    return hetc_status_new(HETC_STATUS_INVALID_ARGUMENT, "no group %d", (int)group);
  const group_def_t *def = &space->groups[group];
  int64_t local = 0;
  for (int32_t k = def->knob_count - 1; k >= 0; --k) {
    if (choices[k] < 0 || choices[k] >= def->sizes[k])
      return hetc_status_new(HETC_STATUS_INVALID_ARGUMENT, "knob %d out of range", (int)k);
    local = local * def->sizes[k] + choices[k];
  }
  *out_index = space->offset[group] + local;
  return NULL;
}

/* AutoTVM's random walk: a random knob gets a random other candidate. The
 * template counts as one more knob: switching it keeps the choices that
 * fit the other template. */
static hetc_status_t space_neighbor(void *user, int64_t index, uint64_t *rng,
                                    int64_t *out_index) {
  const test_space_t *space = user;
  if (space->no_neighbors) return hetc_status_new(HETC_STATUS_UNSUPPORTED, "no neighbours");
  int32_t group;
  int64_t choices[HETC_SEARCH_MAX_KNOBS];
  space_decode(user, index, &group, choices);
  for (int attempt = 0; attempt < 32; ++attempt) {
    int64_t moved[HETC_SEARCH_MAX_KNOBS];
    memcpy(moved, choices, sizeof(moved));
    int32_t moved_group = group;
    const group_def_t *def = &space->groups[group];
    int32_t knob = (int32_t)(test_rng(rng) % (uint64_t)(def->knob_count + 1));
    if (knob == def->knob_count) {
      if (space->group_count < 2) continue;
      moved_group = 1 - group;
      const group_def_t *other = &space->groups[moved_group];
      for (int32_t k = 0; k < other->knob_count; ++k)
        if (moved[k] >= other->sizes[k]) moved[k] = other->sizes[k] - 1;
    } else {
      int64_t shift = 1 + (int64_t)(test_rng(rng) % (uint64_t)(def->sizes[knob] - 1));
      moved[knob] = (moved[knob] + shift) % def->sizes[knob];
    }
    if (!choices_valid(&space->groups[moved_group], moved)) continue;
    return space_encode(user, moved_group, moved, out_index);
  }
  return hetc_status_new(HETC_STATUS_UNSUPPORTED, "no valid neighbour found");
}

static hetc_search_space_t search_space_of(test_space_t *space) {
  hetc_search_space_t view = {
      .user = space,
      .valid_count = space_valid_count,
      .valid_at = space_valid_at,
      .sample = space_sample,
      .neighbor = space_neighbor,
      .decode = space_decode,
      .encode = space_encode,
      .is_valid = space_is_valid,
  };
  return view;
}

/* The throughput of a point: the template's peak times a Gaussian bump
 * around its best choices times a ripple on knob 1 (local optima for the
 * annealing to get past). */
static double objective(const test_space_t *space, int64_t index) {
  int32_t group;
  int64_t choices[HETC_SEARCH_MAX_KNOBS];
  space_decode((void *)space, index, &group, choices);
  const group_def_t *def = &space->groups[group];
  double distance = 0.0;
  for (int32_t k = 0; k < def->knob_count; ++k) {
    double d = (double)(choices[k] - def->best[k]) / (double)(def->sizes[k] - 1);
    distance += d * d;
  }
  double phase = PI * (double)(choices[1] - def->best[1]) / 2.0;
  double ripple = (1.0 - space->ripple) + space->ripple * cos(phase);
  return def->peak * exp(-space->width * distance) * ripple;
}

/* The "cost model": the objective with deterministic per-point noise
 * (relative +-20% and absolute +-0.1), so that it ranks the top points only
 * roughly, as a trained model does. */
static hetc_status_t score_fn(void *user, const int64_t *indices, int32_t count,
                              float *out_scores) {
  test_space_t *space = user;
  if (space->score_fail) return hetc_status_new(HETC_STATUS_INTERNAL, "the model broke");
  for (int32_t i = 0; i < count; ++i) {
    double u = (double)(hash64((uint64_t)indices[i] ^ UINT64_C(0x5eed)) >> 11) * 0x1.0p-53;
    double v = (double)(hash64((uint64_t)indices[i] ^ UINT64_C(0xfeed)) >> 11) * 0x1.0p-53;
    double value = objective(space, indices[i]);
    out_scores[i] = (float)(value * (1.0 + space->noise * (2.0 * u - 1.0)) +
                            space->noise_abs * (2.0 * v - 1.0));
  }
  space->scored += count;
  return NULL;
}

/* The big space: 2.16 million points, 70.5% valid; template 1 is better. */
static const group_def_t big_groups[2] = {
    {6, {16, 12, 8, 16, 8, 6}, 70, {6, 8, 3, 9, 4, 2}, 0.75},
    {6, {16, 16, 12, 8, 10, 4}, 100, {6, 12, 5, 3, 6, 1}, 1.0},
};

/* The tiny space: 18 + 32 = 50 valid points of 68. */
static const group_def_t tiny_groups[2] = {
    {2, {5, 4}, 15, {2, 1}, 0.8},
    {2, {6, 8}, 18, {2, 4}, 1.0},
};

/* ------------------------------------------------------------------------ */
/* A set of indices for the checks (independent of the search's own)        */
/* ------------------------------------------------------------------------ */

typedef struct index_set_t {
  int64_t *slots;
  uint64_t mask;
  int64_t count;
} index_set_t;

static void set_init(index_set_t *set, int64_t expected) {
  uint64_t slots = 16;
  while ((int64_t)slots < expected * 2 + 2) slots *= 2;
  set->slots = malloc(slots * sizeof(int64_t));
  assert_non_null(set->slots);
  memset(set->slots, 0xff, slots * sizeof(int64_t));
  set->mask = slots - 1;
  set->count = 0;
}

static void set_release(index_set_t *set) { free(set->slots); }

/* Returns 1 when key was new. The set must have been sized for it. */
static int set_add(index_set_t *set, int64_t key) {
  uint64_t at = hash64((uint64_t)key) & set->mask;
  while (set->slots[at] != -1) {
    if (set->slots[at] == key) return 0;
    at = (at + 1) & set->mask;
  }
  assert_true((uint64_t)(set->count + 1) * 2 <= set->mask + 1);
  set->slots[at] = key;
  ++set->count;
  return 1;
}

static int set_has(const index_set_t *set, int64_t key) {
  uint64_t at = hash64((uint64_t)key) & set->mask;
  while (set->slots[at] != -1) {
    if (set->slots[at] == key) return 1;
    at = (at + 1) & set->mask;
  }
  return 0;
}

/* ------------------------------------------------------------------------ */
/* Helpers                                                                  */
/* ------------------------------------------------------------------------ */

#define BATCH 64
#define KIND_COUNT 4

static void assert_ok(hetc_status_t status) {
  if (status) fail_msg("unexpected failure: %s", hetc_status_message(status));
}

static void assert_code(hetc_status_t status, hetc_status_code_t code) {
  assert_non_null(status);
  assert_int_equal(hetc_status_code(status), code);
  hetc_status_free(status);
}

static hetc_search_t *make_search(hetc_search_kind_t kind, test_space_t *space,
                                  const hetc_search_options_t *options) {
  hetc_search_space_t view = search_space_of(space);
  hetc_search_t *search = NULL;
  assert_ok(hetc_search_create(kind, &view, score_fn, space, options, &search));
  assert_non_null(search);
  return search;
}

/* Feeds a batch's "measurements" back. */
static void measure(hetc_search_t *search, const test_space_t *space, const int64_t *indices,
                    int32_t count) {
  double throughputs[BATCH];
  for (int32_t i = 0; i < count; ++i) throughputs[i] = objective(space, indices[i]);
  assert_ok(hetc_search_update(search, indices, throughputs, count));
}

/* The best objective over all valid points (brute force). */
static double optimum(const test_space_t *space) {
  double best = 0.0;
  for (int64_t n = 0; n < space->valid_total; ++n) {
    int64_t index;
    assert_ok(space_valid_at((void *)space, n, &index));
    double value = objective(space, index);
    if (value > best) best = value;
  }
  return best;
}

/* Trials a search needs until it measures a point of at least `target`;
 * `cap` when it does not within cap trials. */
static int64_t trials_to_reach(hetc_search_kind_t kind, test_space_t *space, uint64_t seed,
                               double target, int64_t cap) {
  hetc_search_options_t options = {.seed = seed};
  hetc_search_t *search = make_search(kind, space, &options);
  int64_t trials = 0;
  while (trials < cap) {
    int64_t batch[BATCH];
    int32_t count;
    assert_ok(hetc_search_next_batch(search, BATCH, batch, &count));
    assert_int_equal(count, BATCH);
    for (int32_t i = 0; i < count; ++i) {
      if (objective(space, batch[i]) >= target) {
        hetc_search_free(search);
        return trials + i + 1;
      }
    }
    measure(search, space, batch, count);
    trials += count;
  }
  hetc_search_free(search);
  return cap;
}

/* ------------------------------------------------------------------------ */
/* Tests                                                                    */
/* ------------------------------------------------------------------------ */

static void test_kind_names(void **state) {
  (void)state;
  const char *names[KIND_COUNT] = {"random", "grid", "genetic", "model"};
  for (int kind = 0; kind < KIND_COUNT; ++kind) {
    assert_string_equal(hetc_search_kind_name((hetc_search_kind_t)kind), names[kind]);
    hetc_search_kind_t parsed = HETC_SEARCH_RANDOM;
    assert_int_equal(hetc_search_kind_from_name(names[kind], &parsed), 1);
    assert_int_equal(parsed, kind);
  }
  hetc_search_kind_t untouched = HETC_SEARCH_GRID;
  assert_int_equal(hetc_search_kind_from_name("annealing", &untouched), 0);
  assert_int_equal(hetc_search_kind_from_name(NULL, &untouched), 0);
  assert_int_equal(untouched, HETC_SEARCH_GRID);
  assert_string_equal(hetc_search_kind_name((hetc_search_kind_t)42), "unknown");
}

static void test_bad_arguments(void **state) {
  (void)state;
  test_space_t space;
  space_init(&space, 2, tiny_groups);
  hetc_search_space_t view = search_space_of(&space);
  hetc_search_t *search = (hetc_search_t *)&space; /* must be reset to NULL */
  assert_code(hetc_search_create(HETC_SEARCH_MODEL, &view, NULL, NULL, NULL, &search),
              HETC_STATUS_INVALID_ARGUMENT);
  assert_null(search);
  hetc_search_space_t partial = view;
  partial.encode = NULL;
  assert_code(hetc_search_create(HETC_SEARCH_RANDOM, &partial, NULL, NULL, NULL, &search),
              HETC_STATUS_INVALID_ARGUMENT);
  assert_code(hetc_search_create((hetc_search_kind_t)9, &view, NULL, NULL, NULL, &search),
              HETC_STATUS_INVALID_ARGUMENT);

  assert_ok(hetc_search_create(HETC_SEARCH_RANDOM, &view, NULL, NULL, NULL, &search));
  int64_t negative = -3, batch[4];
  int32_t count = 99;
  assert_code(hetc_search_mark_visited(search, &negative, 1), HETC_STATUS_INVALID_ARGUMENT);
  assert_code(hetc_search_next_batch(search, 0, batch, &count), HETC_STATUS_INVALID_ARGUMENT);
  assert_int_equal(count, 0);
  hetc_search_free(search);
  hetc_search_free(NULL);
  space_release(&space);
}

/* Every search, in batches of 7, proposes each of the 50 valid points
 * exactly once, with full batches until the space runs out; 5 points marked
 * visited beforehand (and 2 invalid ones) are never proposed. */
static void test_exhausts_tiny_space(void **state) {
  (void)state;
  test_space_t space;
  space_init(&space, 2, tiny_groups);
  assert_int_equal(space.valid_total, 50);
  for (int kind = 0; kind < KIND_COUNT; ++kind) {
    hetc_search_t *search = make_search((hetc_search_kind_t)kind, &space, NULL);
    index_set_t seen;
    set_init(&seen, 64);
    int64_t visited[7], invalid_count = 0;
    for (int32_t i = 0; i < 5; ++i) assert_ok(space_valid_at(&space, i * 9, &visited[i]));
    for (int64_t index = 0; index < space.total && invalid_count < 2; ++index)
      if (!space_is_valid(&space, index)) visited[5 + invalid_count++] = index;
    assert_ok(hetc_search_mark_visited(search, visited, 7));
    for (int32_t i = 0; i < 7; ++i) set_add(&seen, visited[i]);

    int32_t count, batches = 0;
    int short_batch = 0;
    do {
      int64_t batch[7];
      assert_ok(hetc_search_next_batch(search, 7, batch, &count));
      /* A short batch means the space is exhausted: the next one is empty. */
      assert_false(short_batch && count > 0);
      short_batch = count < 7;
      for (int32_t i = 0; i < count; ++i) {
        assert_true(space_is_valid(&space, batch[i]));
        if (!set_add(&seen, batch[i])) fail_msg("%s repeated %lld", hetc_search_kind_name(kind),
                                                (long long)batch[i]);
      }
      measure(search, &space, batch, count);
      assert_true(++batches < 20);
    } while (count > 0);
    /* 45 new points: 6 full batches and one of 3. */
    assert_int_equal(seen.count, 52);
    assert_int_equal(batches, 8);
    for (int64_t n = 0; n < space.valid_total; ++n) {
      int64_t index;
      assert_ok(space_valid_at(&space, n, &index));
      assert_true(set_has(&seen, index));
    }
    set_release(&seen);
    hetc_search_free(search);
  }
  space_release(&space);
}

/* Without neighbours (neighbor() always UNSUPPORTED) the genetic and model
 * searches still fill their batches and exhaust the space. */
static void test_space_without_neighbors(void **state) {
  (void)state;
  test_space_t space;
  space_init(&space, 2, tiny_groups);
  space.no_neighbors = 1;
  for (int kind = HETC_SEARCH_GENETIC; kind <= HETC_SEARCH_MODEL; ++kind) {
    hetc_search_t *search = make_search((hetc_search_kind_t)kind, &space, NULL);
    int64_t total = 0;
    int32_t count;
    do {
      int64_t batch[16];
      assert_ok(hetc_search_next_batch(search, 16, batch, &count));
      assert_true(count == 16 || total + count == 50);
      measure(search, &space, batch, count);
      total += count;
    } while (count > 0);
    assert_int_equal(total, 50);
    hetc_search_free(search);
  }
  space_release(&space);
}

/* On the big space, 30 batches of every search: all valid, none repeated,
 * none of the 500 visited points (from the "records store"). */
static void test_never_repeats(void **state) {
  (void)state;
  test_space_t space;
  space_init(&space, 2, big_groups);
  for (int kind = 0; kind < KIND_COUNT; ++kind) {
    hetc_search_options_t options = {.seed = 11};
    hetc_search_t *search = make_search((hetc_search_kind_t)kind, &space, &options);
    index_set_t visited, seen;
    set_init(&visited, 500);
    set_init(&seen, 30 * BATCH);
    uint64_t rng = 99;
    int64_t marks[500];
    for (int32_t i = 0; i < 500; ++i) {
      /* Grid's first points, and random ones, which the model and genetic
       * searches are likely to meet near the optimum. */
      int64_t n = i < 250 ? i : (int64_t)(test_rng(&rng) % (uint64_t)space.valid_total);
      assert_ok(space_valid_at(&space, n, &marks[i]));
      set_add(&visited, marks[i]);
    }
    assert_ok(hetc_search_mark_visited(search, marks, 500));
    for (int b = 0; b < 30; ++b) {
      int64_t batch[BATCH];
      int32_t count;
      assert_ok(hetc_search_next_batch(search, BATCH, batch, &count));
      assert_int_equal(count, BATCH);
      for (int32_t i = 0; i < count; ++i) {
        assert_true(space_is_valid(&space, batch[i]));
        assert_false(set_has(&visited, batch[i]));
        assert_true(set_add(&seen, batch[i]));
      }
      measure(search, &space, batch, count);
    }
    set_release(&visited);
    set_release(&seen);
    hetc_search_free(search);
  }
  space_release(&space);
}

/* Ten batches of a search with a seed, as one sequence. */
static void run_sequence(hetc_search_kind_t kind, test_space_t *space, uint64_t seed,
                         int64_t *out_sequence) {
  hetc_search_options_t options = {.seed = seed};
  hetc_search_t *search = make_search(kind, space, &options);
  for (int b = 0; b < 10; ++b) {
    int32_t count;
    assert_ok(hetc_search_next_batch(search, 32, &out_sequence[b * 32], &count));
    assert_int_equal(count, 32);
    measure(search, space, &out_sequence[b * 32], count);
  }
  hetc_search_free(search);
}

static void test_deterministic_per_seed(void **state) {
  (void)state;
  test_space_t space;
  space_init(&space, 2, big_groups);
  for (int kind = 0; kind < KIND_COUNT; ++kind) {
    int64_t first[320], again[320], other[320];
    run_sequence((hetc_search_kind_t)kind, &space, 5, first);
    run_sequence((hetc_search_kind_t)kind, &space, 5, again);
    run_sequence((hetc_search_kind_t)kind, &space, 6, other);
    assert_memory_equal(first, again, sizeof(first));
    /* Grid ignores the seed; the others must not. */
    if (kind == HETC_SEARCH_GRID)
      assert_memory_equal(first, other, sizeof(first));
    else
      assert_memory_not_equal(first, other, sizeof(first));
  }
  space_release(&space);
}

#define SEEDS 6
#define TRIAL_CAP 20000

/* Mean trials to 95% of the optimum over SEEDS seeds, printed per seed. */
static double mean_trials(hetc_search_kind_t kind, test_space_t *space, double target) {
  double sum = 0.0;
  printf("  %-8s trials to 95%%:", hetc_search_kind_name(kind));
  for (uint64_t seed = 1; seed <= SEEDS; ++seed) {
    int64_t trials = trials_to_reach(kind, space, seed, target, TRIAL_CAP);
    printf(" %lld", (long long)trials);
    sum += (double)trials;
  }
  printf("  mean %.0f\n", sum / SEEDS);
  fflush(stdout);
  return sum / SEEDS;
}

static double random_mean = -1.0; /* shared by the two comparisons */

static double random_baseline(test_space_t *space, double target) {
  if (random_mean < 0.0) random_mean = mean_trials(HETC_SEARCH_RANDOM, space, target);
  return random_mean;
}

static void test_model_beats_random(void **state) {
  (void)state;
  test_space_t space;
  space_init(&space, 2, big_groups);
  double target = 0.95 * optimum(&space);
  double random_trials = random_baseline(&space, target);
  space.scored = 0;
  double model_trials = mean_trials(HETC_SEARCH_MODEL, &space, target);
  printf("  model scored %lld points in all\n", (long long)space.scored);
  assert_true(model_trials * 3.0 < random_trials);
  space_release(&space);
}

static void test_genetic_beats_random(void **state) {
  (void)state;
  test_space_t space;
  space_init(&space, 2, big_groups);
  double target = 0.95 * optimum(&space);
  double random_trials = random_baseline(&space, target);
  double genetic_trials = mean_trials(HETC_SEARCH_GENETIC, &space, target);
  assert_true(genetic_trials * 2.0 < random_trials);
  space_release(&space);
}

/* The annealing chains persist across batches: with 16 chains of 4 steps
 * per batch, far too little to climb from random points in one batch, the
 * walk still reaches the optimum's neighbourhood within a few batches of 16
 * (random search needs ~140 such batches on average; restarting the chains
 * every batch took 23.5 on these seeds when this test was written). */
static void test_model_chains_persist(void **state) {
  (void)state;
  test_space_t space;
  space_init(&space, 2, big_groups);
  double target = 0.95 * optimum(&space);
  printf("  batches of 16 to 95%% with 16 chains x 4 steps:");
  double sum = 0.0;
  for (uint64_t seed = 1; seed <= SEEDS; ++seed) {
    hetc_search_options_t options = {.seed = seed, .sa_chains = 16, .sa_steps = 4};
    hetc_search_t *search = make_search(HETC_SEARCH_MODEL, &space, &options);
    int32_t batches = 0, reached = 0;
    while (!reached && batches < 400) {
      int64_t batch[16];
      int32_t count;
      assert_ok(hetc_search_next_batch(search, 16, batch, &count));
      ++batches;
      for (int32_t i = 0; i < count; ++i) reached |= objective(&space, batch[i]) >= target;
      measure(search, &space, batch, count);
    }
    printf(" %d", batches);
    sum += batches;
    hetc_search_free(search);
  }
  printf("  mean %.1f\n", sum / SEEDS);
  assert_true(sum / SEEDS < 16.0);
  space_release(&space);
}

/* Pairs of one batch in one neighbourhood: same template, one knob apart. */
static int32_t close_pairs(test_space_t *space, const int64_t *batch, int32_t count) {
  int32_t pairs = 0;
  for (int32_t i = 0; i < count; ++i) {
    for (int32_t j = i + 1; j < count; ++j) {
      int32_t gi, gj;
      int64_t ci[HETC_SEARCH_MAX_KNOBS], cj[HETC_SEARCH_MAX_KNOBS];
      int32_t knobs = space_decode(space, batch[i], &gi, ci);
      space_decode(space, batch[j], &gj, cj);
      if (gi != gj) continue;
      int32_t apart = 0;
      for (int32_t k = 0; k < knobs; ++k) apart += ci[k] != cj[k];
      pairs += apart <= 1;
    }
  }
  return pairs;
}

/* The model's first batch, picked for diversity, holds (next to) no two
 * points one knob apart; without the filter the best-rated points crowd
 * into the optimum's neighbourhood. */
static void test_model_batch_is_diverse(void **state) {
  (void)state;
  test_space_t space;
  space_init(&space, 2, big_groups);
  int32_t with_filter = 0, without_filter = 0;
  for (uint64_t seed = 1; seed <= 3; ++seed) {
    for (int filter = 0; filter < 2; ++filter) {
      hetc_search_options_t options = {.seed = seed, .diversity = filter ? 0.0 : -1.0};
      hetc_search_t *search = make_search(HETC_SEARCH_MODEL, &space, &options);
      int64_t batch[BATCH];
      int32_t count;
      for (int round = 0; round < 3; ++round) {
        assert_ok(hetc_search_next_batch(search, BATCH, batch, &count));
        assert_int_equal(count, BATCH);
        measure(search, &space, batch, count);
        *(filter ? &with_filter : &without_filter) += close_pairs(&space, batch, count);
      }
      hetc_search_free(search);
    }
  }
  printf("  pairs one knob apart in 9 model batches: %d with the filter, %d without\n",
         with_filter, without_filter);
  assert_true(with_filter * 10 <= without_filter);
  assert_true(with_filter <= 9);
  space_release(&space);
}

/* Failures of the score function and of the space come back to the caller;
 * the search stays usable. */
static void test_failures_propagate(void **state) {
  (void)state;
  test_space_t space;
  space_init(&space, 2, big_groups);
  hetc_search_t *search = make_search(HETC_SEARCH_MODEL, &space, NULL);
  int64_t batch[BATCH];
  int32_t count = 1;
  space.score_fail = 1;
  assert_code(hetc_search_next_batch(search, BATCH, batch, &count), HETC_STATUS_INTERNAL);
  assert_int_equal(count, 0);
  space.score_fail = 0;
  assert_ok(hetc_search_next_batch(search, BATCH, batch, &count));
  assert_int_equal(count, BATCH);
  hetc_search_free(search);

  space.fail_sample_after = 10;
  for (int kind = 0; kind < KIND_COUNT; ++kind) {
    if (kind == HETC_SEARCH_GRID) continue;
    space.sample_calls = 0;
    search = make_search((hetc_search_kind_t)kind, &space, NULL);
    assert_code(hetc_search_next_batch(search, BATCH, batch, &count), HETC_STATUS_INTERNAL);
    hetc_search_free(search);
  }
  space_release(&space);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_kind_names),
      cmocka_unit_test(test_bad_arguments),
      cmocka_unit_test(test_exhausts_tiny_space),
      cmocka_unit_test(test_space_without_neighbors),
      cmocka_unit_test(test_never_repeats),
      cmocka_unit_test(test_deterministic_per_seed),
      cmocka_unit_test(test_model_beats_random),
      cmocka_unit_test(test_genetic_beats_random),
      cmocka_unit_test(test_model_chains_persist),
      cmocka_unit_test(test_model_batch_is_diverse),
      cmocka_unit_test(test_failures_propagate),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
