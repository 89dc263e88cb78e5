/* driver/tune/search_model.c -- the model-guided search (README.md,
 * "Tuning"), the ideas of AutoTVM's ModelBasedTuner and its simulated
 * annealing optimizer.
 *
 * Each batch:
 *   1. Simulated annealing on the cost model's predictions: sa_chains chains
 *      each propose a neighbor() move per step; one score() call rates the
 *      step's proposals not rated earlier in the batch (a batch prediction;
 *      earlier ratings come from a cache); Metropolis acceptance
 *      with a temperature falling linearly to 0 over the batch's steps. The
 *      chains persist across batches, so each batch continues the walk from
 *      where the last one left it (with the retrained model) instead of
 *      starting cold.
 *   2. Every point the walk rates goes to a bounded heap of the best-rated
 *      points not seen yet (the plan).
 *   3. The batch is the plan's best, skipping a point too close to one
 *      already picked while alternatives remain, plus epsilon x capacity
 *      uniformly random points, which keep the model's training data from
 *      collapsing onto its own beliefs (epsilon-greedy).
 * The first batch of a task comes from the model as well: a transferred
 * model is a better guess than random points. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "tune/search_internal.h"

/* A batch's annealing stops after this many steps in a row that put no new
 * point in the plan (AutoTVM's early_stop): the chains have settled. */
#define EARLY_STOP_STEPS 50
/* The plan holds this many candidates per model-picked point, so that the
 * diversity filter has alternatives to pick from. */
#define PLAN_FACTOR 4
#define PLAN_MIN 16
/* Best measured points kept as restart points for collapsed chains. */
#define BEST_KEPT 16
/* Scores cached per batch (direct mapped, a power of two): the chains
 * revisit points often, and rating a point again costs its features and
 * two model predictions. */
#define SCORE_CACHE_SLOTS 16384

typedef struct candidate_t {
  int64_t index;
  float score;
} candidate_t;

struct hetc_search_model_t {
  int32_t chain_count;
  int started;           /* chains hold states */
  int64_t *chains;       /* chain_count states */
  float *chain_scores;   /* their scores under the current model */
  int64_t *proposals;    /* chain_count moves of one step */
  float *proposal_scores;
  hetc_search_set_t offered; /* points offered to the plan this batch */

  candidate_t *plan;     /* min-heap on score, plan_capacity slots */
  int32_t plan_count;
  int32_t plan_capacity;
  /* The plan's points decoded, for the diversity pick (plan_capacity rows
   * of HETC_SEARCH_MAX_KNOBS choices). */
  int64_t *choices;
  int32_t *groups;
  int32_t *knob_counts;
  unsigned char *picked;

  candidate_t best[BEST_KEPT]; /* best measured, best first */
  int32_t best_count;

  /* This batch's ratings: the model is retrained between batches only. */
  int64_t *cache_keys;   /* SCORE_CACHE_SLOTS points; -1: empty */
  float *cache_scores;
  int64_t *miss_points;  /* chain_count points a step must rate */
  int32_t *miss_at;      /* where each goes in the caller's array */
  float *miss_scores;
};

static hetc_status_t no_memory(void) {
  return hetc_status_new(HETC_STATUS_OUT_OF_MEMORY, "search: no memory for the model search");
}

hetc_status_t hetc_search_model_create(hetc_search_t *search) {
  hetc_search_model_t *model = calloc(1, sizeof(*model));
  if (!model) return no_memory();
  search->model = model;
  int32_t chains = search->options.sa_chains;
  model->chain_count = chains;
  model->chains = malloc((size_t)chains * sizeof(*model->chains));
  model->chain_scores = malloc((size_t)chains * sizeof(*model->chain_scores));
  model->proposals = malloc((size_t)chains * sizeof(*model->proposals));
  model->proposal_scores = malloc((size_t)chains * sizeof(*model->proposal_scores));
  model->cache_keys = malloc(SCORE_CACHE_SLOTS * sizeof(*model->cache_keys));
  model->cache_scores = malloc(SCORE_CACHE_SLOTS * sizeof(*model->cache_scores));
  model->miss_points = malloc((size_t)chains * sizeof(*model->miss_points));
  model->miss_at = malloc((size_t)chains * sizeof(*model->miss_at));
  model->miss_scores = malloc((size_t)chains * sizeof(*model->miss_scores));
  if (!model->chains || !model->chain_scores || !model->proposals || !model->proposal_scores ||
      !model->cache_keys || !model->cache_scores || !model->miss_points || !model->miss_at || !model->miss_scores)
    return no_memory(); /* the caller frees the half-made search */
  return hetc_search_set_init(&model->offered, 4096);
}

void hetc_search_model_free(hetc_search_model_t *model) {
  if (!model) return;
  free(model->chains);
  free(model->chain_scores);
  free(model->proposals);
  free(model->proposal_scores);
  hetc_search_set_release(&model->offered);
  free(model->plan);
  free(model->choices);
  free(model->groups);
  free(model->knob_counts);
  free(model->picked);
  free(model->cache_keys);
  free(model->cache_scores);
  free(model->miss_points);
  free(model->miss_at);
  free(model->miss_scores);
  free(model);
}

hetc_status_t hetc_search_model_update(hetc_search_t *search, const int64_t *indices,
                                       const double *throughputs, int32_t count) {
  hetc_search_model_t *model = search->model;
  for (int32_t i = 0; i < count; ++i) {
    float value = throughputs[i] > 0.0 ? (float)throughputs[i] : 0.0f; /* NaN too */
    if (value <= 0.0f) continue; /* a failed config is no place to restart */
    int32_t at = model->best_count;
    for (int32_t j = 0; j < model->best_count; ++j)
      if (model->best[j].index == indices[i]) at = j;
    if (at == model->best_count) {
      if (model->best_count < BEST_KEPT) {
        ++model->best_count;
      } else {
        at = BEST_KEPT - 1;
        if (value <= model->best[at].score) continue;
      }
    }
    while (at > 0 && model->best[at - 1].score < value) {
      model->best[at] = model->best[at - 1];
      --at;
    }
    while (at + 1 < model->best_count && model->best[at + 1].score > value) {
      model->best[at] = model->best[at + 1];
      ++at;
    }
    model->best[at] = (candidate_t){indices[i], value};
  }
  return NULL;
}

/* Sizes the plan and its decode rows for `capacity` candidates. */
static hetc_status_t reserve_plan(hetc_search_model_t *model, int32_t capacity) {
  if (capacity <= model->plan_capacity) return NULL;
  candidate_t *plan = realloc(model->plan, (size_t)capacity * sizeof(*plan));
  if (!plan) return no_memory();
  model->plan = plan;
  int64_t *choices =
      realloc(model->choices, (size_t)capacity * HETC_SEARCH_MAX_KNOBS * sizeof(*choices));
  if (!choices) return no_memory();
  model->choices = choices;
  int32_t *groups = realloc(model->groups, (size_t)capacity * sizeof(*groups));
  if (!groups) return no_memory();
  model->groups = groups;
  int32_t *knob_counts = realloc(model->knob_counts, (size_t)capacity * sizeof(*knob_counts));
  if (!knob_counts) return no_memory();
  model->knob_counts = knob_counts;
  unsigned char *picked = realloc(model->picked, (size_t)capacity);
  if (!picked) return no_memory();
  model->picked = picked;
  model->plan_capacity = capacity;
  return NULL;
}

/* ------------------------------------------------------------------------ */
/* The plan: a min-heap, so the worst kept candidate is the one to evict.    */
/* ------------------------------------------------------------------------ */

static void plan_sift_down(candidate_t *heap, int32_t count, int32_t at) {
  for (;;) {
    int32_t smallest = at, left = 2 * at + 1, right = left + 1;
    if (left < count && heap[left].score < heap[smallest].score) smallest = left;
    if (right < count && heap[right].score < heap[smallest].score) smallest = right;
    if (smallest == at) return;
    candidate_t swap = heap[at];
    heap[at] = heap[smallest];
    heap[smallest] = swap;
    at = smallest;
  }
}

/* Offers a rated point to the plan; *out_changed says whether it entered.
 * A point evicted from the plan is not offered again in the same batch,
 * which is right: the plan's worst score only rises during a batch. */
static hetc_status_t plan_offer(hetc_search_t *search, int32_t limit, int64_t index, float score,
                                int *out_changed) {
  hetc_search_model_t *model = search->model;
  *out_changed = 0;
  if (isnan(score) || hetc_search_seen(search, index)) return NULL;
  if (model->plan_count == limit && score <= model->plan[0].score) return NULL;
  int added;
  HETC_RETURN_IF_ERROR(hetc_search_set_add(&model->offered, index, &added));
  if (!added) return NULL;
  candidate_t *heap = model->plan;
  if (model->plan_count == limit) {
    heap[0] = (candidate_t){index, score};
    plan_sift_down(heap, model->plan_count, 0);
  } else {
    int32_t at = model->plan_count++;
    while (at > 0 && heap[(at - 1) / 2].score > score) {
      heap[at] = heap[(at - 1) / 2];
      at = (at - 1) / 2;
    }
    heap[at] = (candidate_t){index, score};
  }
  *out_changed = 1;
  return NULL;
}

/* ------------------------------------------------------------------------ */
/* Annealing                                                                */
/* ------------------------------------------------------------------------ */

static uint32_t cache_slot(int64_t index) {
  return (uint32_t)(((uint64_t)index * 0x9e3779b97f4a7c15ull) >> 32) & (SCORE_CACHE_SLOTS - 1);
}

/* Rates up to chain_count points, asking the model only for those this
 * batch has not rated yet. */
static hetc_status_t score_points(hetc_search_t *search, const int64_t *indices, int32_t count,
                                  float *out_scores) {
  hetc_search_model_t *model = search->model;
  int32_t misses = 0;
  for (int32_t i = 0; i < count; ++i) {
    uint32_t slot = cache_slot(indices[i]);
    if (model->cache_keys[slot] == indices[i]) {
      out_scores[i] = model->cache_scores[slot];
    } else {
      model->miss_points[misses] = indices[i];
      model->miss_at[misses++] = i;
    }
  }
  if (misses == 0) return NULL;
  HETC_RETURN_IF_ERROR(search->score(search->score_user, model->miss_points, misses, model->miss_scores));
  for (int32_t m = 0; m < misses; ++m) {
    /* NaN is the worst score: it loses every comparison below. */
    float score = isnan(model->miss_scores[m]) ? -INFINITY : model->miss_scores[m];
    out_scores[model->miss_at[m]] = score;
    uint32_t slot = cache_slot(model->miss_points[m]);
    model->cache_keys[slot] = model->miss_points[m];
    model->cache_scores[slot] = score;
  }
  return NULL;
}

/* Chains that sit on the same point as another chain add nothing to the
 * walk; each such duplicate restarts, first at a best measured point that
 * no chain holds (Ansor seeds its search from the best measured states),
 * then at a uniformly random point. */
static hetc_status_t restart_collapsed_chains(hetc_search_t *search) {
  hetc_search_model_t *model = search->model;
  /* `offered` is free between batches: here it holds the chains' points,
   * and `proposals` flags the duplicates (the first chain on a point keeps
   * it). */
  hetc_search_set_clear(&model->offered);
  for (int32_t c = 0; c < model->chain_count; ++c) {
    int added;
    HETC_RETURN_IF_ERROR(hetc_search_set_add(&model->offered, model->chains[c], &added));
    model->proposals[c] = !added;
  }
  int32_t next_best = 0;
  for (int32_t c = 0; c < model->chain_count; ++c) {
    if (!model->proposals[c]) continue;
    while (next_best < model->best_count &&
           hetc_search_set_contains(&model->offered, model->best[next_best].index))
      ++next_best;
    if (next_best < model->best_count) {
      model->chains[c] = model->best[next_best++].index;
      HETC_RETURN_IF_ERROR(hetc_search_set_add(&model->offered, model->chains[c], NULL));
    } else {
      HETC_RETURN_IF_ERROR(hetc_search_draw(search, &model->chains[c]));
    }
  }
  return NULL;
}

/* Spread of the chains' scores: the temperature's unit, so that annealing
 * behaves the same whatever scale the model predicts on. */
static double score_spread(const float *scores, int32_t count) {
  double sum = 0.0, sum_squares = 0.0;
  int32_t finite = 0;
  for (int32_t i = 0; i < count; ++i) {
    if (!isfinite(scores[i])) continue;
    sum += scores[i];
    sum_squares += (double)scores[i] * scores[i];
    ++finite;
  }
  if (finite < 2) return 1.0;
  double mean = sum / finite;
  double variance = sum_squares / finite - mean * mean;
  return variance > 1e-30 ? sqrt(variance) : 1.0;
}

/* Runs one batch's annealing, filling the plan with up to `limit` of the
 * best-rated unseen points. */
static hetc_status_t anneal(hetc_search_t *search, int32_t limit) {
  hetc_search_model_t *model = search->model;
  const hetc_search_space_t *space = &search->space;
  int32_t chains = model->chain_count;
  if (!model->started) {
    for (int32_t c = 0; c < chains; ++c)
      HETC_RETURN_IF_ERROR(hetc_search_draw(search, &model->chains[c]));
    model->started = 1;
  } else {
    HETC_RETURN_IF_ERROR(restart_collapsed_chains(search));
  }
  /* The model was retrained since the chains were last rated. */
  memset(model->cache_keys, 0xff, SCORE_CACHE_SLOTS * sizeof(*model->cache_keys));
  HETC_RETURN_IF_ERROR(score_points(search, model->chains, chains, model->chain_scores));

  hetc_search_set_clear(&model->offered);
  model->plan_count = 0;
  int changed;
  for (int32_t c = 0; c < chains; ++c)
    HETC_RETURN_IF_ERROR(
        plan_offer(search, limit, model->chains[c], model->chain_scores[c], &changed));

  double unit = score_spread(model->chain_scores, chains);
  int32_t steps = search->options.sa_steps;
  int32_t last_change = 0;
  for (int32_t s = 0; s < steps && s - last_change < EARLY_STOP_STEPS; ++s) {
    for (int32_t c = 0; c < chains; ++c) {
      hetc_status_t status =
          space->neighbor(space->user, model->chains[c], &search->rng, &model->proposals[c]);
      if (status && hetc_status_code(status) == HETC_STATUS_UNSUPPORTED) {
        /* A point without neighbours: the chain jumps instead. */
        hetc_status_free(status);
        status = hetc_search_draw(search, &model->proposals[c]);
      }
      if (status) return status;
    }
    HETC_RETURN_IF_ERROR(score_points(search, model->proposals, chains, model->proposal_scores));
    double temperature = unit * (1.0 - (double)s / steps);
    for (int32_t c = 0; c < chains; ++c) {
      double delta = (double)model->proposal_scores[c] - model->chain_scores[c];
      int accept = delta >= 0.0 || (temperature > 0.0 &&
                                    hetc_search_rng_unit(&search->rng) < exp(delta / temperature));
      if (accept) {
        model->chains[c] = model->proposals[c];
        model->chain_scores[c] = model->proposal_scores[c];
      }
      HETC_RETURN_IF_ERROR(
          plan_offer(search, limit, model->proposals[c], model->proposal_scores[c], &changed));
      if (changed) last_change = s;
    }
  }
  return NULL;
}

/* ------------------------------------------------------------------------ */
/* The batch                                                                */
/* ------------------------------------------------------------------------ */

static int by_score_descending(const void *a, const void *b) {
  const candidate_t *x = a, *y = b;
  if (x->score != y->score) return x->score < y->score ? 1 : -1;
  /* Equal scores: by index, so the order never depends on qsort. */
  return x->index < y->index ? -1 : x->index > y->index;
}

/* Whether plan entries i and j are in one neighbourhood: same template and
 * fewer than diversity x knobs knobs apart. */
static int too_close(const hetc_search_t *search, int32_t i, int32_t j) {
  const hetc_search_model_t *model = search->model;
  if (model->groups[i] != model->groups[j] || model->knob_counts[i] != model->knob_counts[j])
    return 0;
  const int64_t *a = &model->choices[(size_t)i * HETC_SEARCH_MAX_KNOBS];
  const int64_t *b = &model->choices[(size_t)j * HETC_SEARCH_MAX_KNOBS];
  int32_t apart = 0;
  for (int32_t k = 0; k < model->knob_counts[i]; ++k) apart += a[k] != b[k];
  return apart < search->options.diversity * model->knob_counts[i];
}

/* Proposes up to `wanted` plan entries, best first, skipping those too
 * close to one already picked; the skipped ones fill what is left. */
static hetc_status_t pick_diverse(hetc_search_t *search, int32_t wanted, int64_t *out_indices,
                                  int32_t *count) {
  hetc_search_model_t *model = search->model;
  const hetc_search_space_t *space = &search->space;
  int32_t n = model->plan_count;
  qsort(model->plan, (size_t)n, sizeof(*model->plan), by_score_descending);
  for (int32_t i = 0; i < n; ++i) {
    int32_t knobs = space->decode(space->user, model->plan[i].index, &model->groups[i],
                                  &model->choices[(size_t)i * HETC_SEARCH_MAX_KNOBS]);
    if (knobs < 0 || knobs > HETC_SEARCH_MAX_KNOBS)
      return hetc_status_new(HETC_STATUS_INTERNAL, "search: decode() reports %d knobs",
                             (int)knobs);
    model->knob_counts[i] = knobs;
    model->picked[i] = 0;
  }
  int32_t start = *count;
  for (int pass = 0; pass < 2; ++pass) {
    for (int32_t i = 0; i < n && *count - start < wanted; ++i) {
      if (model->picked[i]) continue;
      int close = 0;
      for (int32_t j = 0; pass == 0 && j < i && !close; ++j)
        close = model->picked[j] && too_close(search, i, j);
      if (close) continue;
      HETC_RETURN_IF_ERROR(hetc_search_propose(search, model->plan[i].index));
      model->picked[i] = 1;
      out_indices[(*count)++] = model->plan[i].index;
    }
  }
  return NULL;
}

hetc_status_t hetc_search_model_next(hetc_search_t *search, int32_t capacity,
                                     int64_t *out_indices, int32_t *out_count) {
  if (hetc_search_exhausted(search)) return NULL;
  /* epsilon x capacity random points; the fraction is a coin flip, so that
   * a batch of 8 with epsilon 0.05 still gets a random point 40% of the
   * time rather than never. */
  double random_share = search->options.epsilon * capacity;
  int32_t random_count = (int32_t)random_share;
  if (hetc_search_rng_unit(&search->rng) < random_share - random_count) ++random_count;
  int32_t model_count = capacity - random_count;

  if (model_count > 0) {
    int32_t limit = model_count * PLAN_FACTOR;
    if (limit < PLAN_MIN) limit = PLAN_MIN;
    HETC_RETURN_IF_ERROR(reserve_plan(search->model, limit));
    HETC_RETURN_IF_ERROR(anneal(search, limit));
    HETC_RETURN_IF_ERROR(pick_diverse(search, model_count, out_indices, out_count));
  }
  /* The random share, and whatever the plan could not supply. */
  return hetc_search_fill_random(search, capacity, out_indices, out_count);
}
