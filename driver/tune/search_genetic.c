/* driver/tune/search_genetic.c -- the genetic search, after AutoTVM's GA
 * tuner: a first generation of random points, then children bred from the
 * fittest measured points.
 *
 * Parents come from an elitist archive -- the POPULATION best points
 * measured so far -- by tournament, so the best points always stay
 * available as parents (AutoTVM carries its elites over the same way) while
 * weaker ones still breed now and then. A child takes each knob from one
 * parent or the other (uniform crossover); the knobs of two templates mean
 * different things, so both parents come from one template. Each knob then
 * mutates with probability MUTATION_PROB, as a neighbor() step. A child that
 * names no valid point is rejected and redrawn; one already seen steps to a
 * neighbour, so a converged population keeps exploring around its best. */
#include <stdlib.h>

#include "tune/search_internal.h"

#define POPULATION 64      /* archive size and size of the first generation */
#define TOURNAMENT 3       /* contestants per parent */
#define MUTATION_PROB 0.1  /* per knob, as in AutoTVM */
#define BREED_TRIES 32     /* children tried per slot before a random point */

typedef struct member_t {
  int64_t index;
  double fitness;
  int32_t group;
} member_t;

struct hetc_search_genetic_t {
  member_t archive[POPULATION]; /* best first */
  int32_t archive_count;
  int32_t first_generation_left; /* random points still to propose */
};

hetc_status_t hetc_search_genetic_create(hetc_search_t *search) {
  hetc_search_genetic_t *genetic = calloc(1, sizeof(*genetic));
  if (!genetic) return hetc_status_new(HETC_STATUS_OUT_OF_MEMORY, "search: no memory");
  genetic->first_generation_left = POPULATION;
  search->genetic = genetic;
  return NULL;
}

void hetc_search_genetic_free(hetc_search_genetic_t *genetic) { free(genetic); }

hetc_status_t hetc_search_genetic_update(hetc_search_t *search, const int64_t *indices,
                                         const double *throughputs, int32_t count) {
  hetc_search_genetic_t *genetic = search->genetic;
  int64_t choices[HETC_SEARCH_MAX_KNOBS];
  for (int32_t i = 0; i < count; ++i) {
    double fitness = throughputs[i] > 0.0 ? throughputs[i] : 0.0; /* NaN too */
    if (!search->space.is_valid(search->space.user, indices[i])) continue;
    /* A point measured again replaces its old entry. */
    int32_t at = genetic->archive_count;
    for (int32_t j = 0; j < genetic->archive_count; ++j)
      if (genetic->archive[j].index == indices[i]) at = j;
    if (at == genetic->archive_count) {
      if (genetic->archive_count < POPULATION) {
        ++genetic->archive_count;
      } else {
        at = POPULATION - 1;
        if (fitness <= genetic->archive[at].fitness) continue;
      }
    }
    member_t member = {indices[i], fitness, 0};
    search->space.decode(search->space.user, indices[i], &member.group, choices);
    /* Insertion into the sorted archive: move `at` to its place. */
    while (at > 0 && genetic->archive[at - 1].fitness < fitness) {
      genetic->archive[at] = genetic->archive[at - 1];
      --at;
    }
    while (at + 1 < genetic->archive_count && genetic->archive[at + 1].fitness > fitness) {
      genetic->archive[at] = genetic->archive[at + 1];
      ++at;
    }
    genetic->archive[at] = member;
  }
  return NULL;
}

/* A tournament among archive positions: the archive is sorted, so the
 * winner of TOURNAMENT uniform draws is the smallest position drawn.
 * `positions` restricts the draw (NULL: the whole archive). */
static int32_t tournament(hetc_search_t *search, const int32_t *positions, int32_t count) {
  int32_t best = INT32_MAX;
  for (int t = 0; t < TOURNAMENT; ++t) {
    int32_t drawn = (int32_t)hetc_search_rng_below(&search->rng, (uint64_t)count);
    if (positions) drawn = positions[drawn];
    if (drawn < best) best = drawn;
  }
  return best;
}

/* encode()'s answer for choices that name no point: a rejection, not an
 * error. */
static int is_rejection(hetc_status_t status) {
  hetc_status_code_t code = hetc_status_code(status);
  return code == HETC_STATUS_INVALID_ARGUMENT || code == HETC_STATUS_UNSUPPORTED;
}

/* One neighbor() step from *index; *out_moved is 0 when the point has no
 * neighbour. */
static hetc_status_t step(hetc_search_t *search, int64_t *index, int *out_moved) {
  int64_t next;
  hetc_status_t status = search->space.neighbor(search->space.user, *index, &search->rng, &next);
  *out_moved = 0;
  if (status && hetc_status_code(status) == HETC_STATUS_UNSUPPORTED) {
    hetc_status_free(status);
    return NULL;
  }
  if (status) return status;
  *index = next;
  *out_moved = 1;
  return NULL;
}

/* Breeds one child: *out_found is 0 when BREED_TRIES children were all
 * rejected or seen. */
static hetc_status_t breed(hetc_search_t *search, int64_t *out_index, int *out_found) {
  hetc_search_genetic_t *genetic = search->genetic;
  const hetc_search_space_t *space = &search->space;
  int64_t mother[HETC_SEARCH_MAX_KNOBS], father[HETC_SEARCH_MAX_KNOBS];
  int64_t child[HETC_SEARCH_MAX_KNOBS];
  int32_t same_group[POPULATION];
  *out_found = 0;
  for (int attempt = 0; attempt < BREED_TRIES; ++attempt) {
    const member_t *first = &genetic->archive[tournament(search, NULL, genetic->archive_count)];
    int32_t mates = 0;
    for (int32_t j = 0; j < genetic->archive_count; ++j)
      if (genetic->archive[j].group == first->group) same_group[mates++] = j;
    const member_t *second = &genetic->archive[tournament(search, same_group, mates)];

    int32_t group, second_group;
    int32_t knobs = space->decode(space->user, first->index, &group, mother);
    int32_t second_knobs = space->decode(space->user, second->index, &second_group, father);
    if (knobs < 0 || knobs > HETC_SEARCH_MAX_KNOBS || second_knobs != knobs ||
        second_group != group)
      return hetc_status_new(HETC_STATUS_INTERNAL,
                             "search: decode() disagrees about points of one template");
    for (int32_t k = 0; k < knobs; ++k)
      child[k] = hetc_search_rng_unit(&search->rng) < 0.5 ? mother[k] : father[k];
    int64_t index;
    hetc_status_t status = space->encode(space->user, group, child, &index);
    if (status && !is_rejection(status)) return status;
    hetc_status_free(status);
    if (status || !space->is_valid(space->user, index)) continue;

    for (int32_t k = 0; k < knobs; ++k) {
      if (hetc_search_rng_unit(&search->rng) >= MUTATION_PROB) continue;
      int moved;
      HETC_RETURN_IF_ERROR(step(search, &index, &moved));
      if (!moved) break;
    }
    /* A seen child: the population has converged on it; look next door. */
    while (hetc_search_seen(search, index) && attempt + 1 < BREED_TRIES) {
      ++attempt;
      int moved;
      HETC_RETURN_IF_ERROR(step(search, &index, &moved));
      if (!moved) break;
    }
    if (!hetc_search_seen(search, index)) {
      *out_index = index;
      *out_found = 1;
      return NULL;
    }
  }
  return NULL;
}

hetc_status_t hetc_search_genetic_next(hetc_search_t *search, int32_t capacity,
                                       int64_t *out_indices, int32_t *out_count) {
  hetc_search_genetic_t *genetic = search->genetic;
  while (*out_count < capacity && !hetc_search_exhausted(search)) {
    int64_t index;
    int found = 0;
    /* Without two measured parents there is nothing to breed from yet. */
    if (genetic->first_generation_left > 0 || genetic->archive_count < 2) {
      if (genetic->first_generation_left > 0) --genetic->first_generation_left;
    } else {
      HETC_RETURN_IF_ERROR(breed(search, &index, &found));
    }
    if (!found) {
      HETC_RETURN_IF_ERROR(hetc_search_draw_unseen(search, &index, &found));
      if (!found) break;
    }
    HETC_RETURN_IF_ERROR(hetc_search_propose(search, index));
    out_indices[(*out_count)++] = index;
  }
  return NULL;
}
