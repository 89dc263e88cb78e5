/* The valid points of a knob space without a bitmap over the product
 * (KTT's constraint tree, flattened): knobs joined by constraints form
 * components whose valid sub-assignments are enumerated once and kept
 * sorted; every other knob is free. Counting, numbering, ranking,
 * sampling and neighbours then take one digit per component or free knob
 * (space.h describes the numbering). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "space/space_int.h"

/* ---- Building the index ---- */

void hetc_space_drop_index(hetc_plugin_space_t *space) {
  if (space->index) {
    for (int32_t c = 0; c < space->index->num_components; ++c)
      free(space->index->components[c].valid);
    free(space->index);
    space->index = NULL;
  }
  free(space->index_error);
  space->index_error = NULL;
  atomic_store(&space->index_state, 0);
}

/* "'a', 'b', 'c'" for a list of knobs, cut short to fit `size`. */
static void knob_names(const hetc_plugin_space_t *space, const int32_t *knobs, int32_t count,
                       char *out, size_t size) {
  size_t used = 0;
  out[0] = 0;
  for (int32_t i = 0; i < count && used < size; ++i) {
    int written = snprintf(out + used, size - used, "%s'%s'", i ? ", " : "",
                           space->knobs[knobs[i]].name);
    if (written < 0) break;
    used += (size_t)written;
  }
}

static int32_t find_root(int32_t *parent, int32_t k) {
  while (parent[k] != k) k = parent[k] = parent[parent[k]];
  return k;
}

/* Depth-first enumeration of one component. Knobs are assigned from the
 * component's last (most significant) to its first, so sub-indices come
 * out ascending; a constraint is checked at the position of its
 * lowest-placed knob, the moment all its knobs have values. */
typedef struct enumeration_t {
  const hetc_plugin_space_t *space;
  const hetc_space_component_t *component;
  int64_t stride[HETC_SPACE_MAX_KNOBS];    /* per position */
  int64_t choice[HETC_SPACE_MAX_KNOBS];    /* per knob number */
  int32_t num_checks[HETC_SPACE_MAX_KNOBS]; /* per position */
  int32_t checks[HETC_SPACE_MAX_KNOBS][HETC_SPACE_MAX_CONSTRAINTS];
  uint32_t *valid;
  int64_t count, capacity;
  int failed;
} enumeration_t;

static int constraint_holds(const hetc_plugin_space_t *space, const hetc_space_constraint_t *c,
                            const int64_t *choice) {
  /* Exactly the constraint's knobs, in the order the plugin named them. */
  hetc_plugin_knob_value_t values[HETC_SPACE_MAX_KNOBS];
  for (int32_t i = 0; i < c->num_knobs; ++i)
    hetc_space_fill_knob(space, c->knobs[i], choice[c->knobs[i]], &values[i]);
  hetc_plugin_config_t view = {c->num_knobs, values};
  return c->fn(&view, c->user_data) != 0;
}

static void enumerate(enumeration_t *e, int32_t position, int64_t sub) {
  if (e->failed) return;
  if (position < 0) {
    if (e->count == e->capacity) {
      int64_t capacity = e->capacity ? e->capacity * 2 : 256;
      uint32_t *grown = realloc(e->valid, sizeof(uint32_t) * (size_t)capacity);
      if (!grown) {
        e->failed = 1;
        return;
      }
      e->valid = grown;
      e->capacity = capacity;
    }
    e->valid[e->count++] = (uint32_t)sub;
    return;
  }
  const int32_t knob = e->component->knobs[position];
  const int64_t count = e->space->knobs[knob].count;
  for (int64_t c = 0; c < count && !e->failed; ++c) {
    e->choice[knob] = c;
    int ok = 1;
    for (int32_t i = 0; i < e->num_checks[position] && ok; ++i)
      ok = constraint_holds(e->space, &e->space->constraints[e->checks[position][i]], e->choice);
    if (ok) enumerate(e, position - 1, sub + c * e->stride[position]);
  }
}

static hetc_status_t enumerate_component(const hetc_plugin_space_t *space,
                                         const hetc_space_index_t *index, int32_t number,
                                         hetc_space_component_t *component) {
  enumeration_t *e = calloc(1, sizeof(*e));
  if (!e) return hetc_status_new(HETC_STATUS_OUT_OF_MEMORY, "knob space index");
  e->space = space;
  e->component = component;
  int32_t position_of[HETC_SPACE_MAX_KNOBS];
  int64_t product = 1;
  for (int32_t p = 0; p < component->num_knobs; ++p) {
    const int32_t knob = component->knobs[p];
    position_of[knob] = p;
    e->stride[p] = product;
    const int64_t count = space->knobs[knob].count;
    product = product > HETC_SPACE_MAX_COMPONENT_POINTS / count
                  ? HETC_SPACE_MAX_COMPONENT_POINTS + 1
                  : product * count;
  }
  if (product > HETC_SPACE_MAX_COMPONENT_POINTS) {
    free(e);
    char names[1024];
    knob_names(space, component->knobs, component->num_knobs, names, sizeof(names));
    return hetc_status_new(HETC_STATUS_INVALID_ARGUMENT,
                           "knobs %s share constraints over more than %lld (2^24) points, too "
                           "many to enumerate",
                           names, (long long)HETC_SPACE_MAX_COMPONENT_POINTS);
  }
  for (int32_t i = 0; i < space->num_constraints; ++i) {
    const hetc_space_constraint_t *c = &space->constraints[i];
    if (index->knob_component[c->knobs[0]] != number) continue;
    int32_t lowest = component->num_knobs;
    for (int32_t k = 0; k < c->num_knobs; ++k)
      if (position_of[c->knobs[k]] < lowest) lowest = position_of[c->knobs[k]];
    e->checks[lowest][e->num_checks[lowest]++] = i;
  }
  enumerate(e, component->num_knobs - 1, 0);
  hetc_status_t status = NULL;
  if (e->failed) {
    free(e->valid);
    status = hetc_status_new(HETC_STATUS_OUT_OF_MEMORY, "knob space index");
  } else {
    component->valid = e->valid;
    component->num_valid = e->count;
  }
  free(e);
  return status;
}

static hetc_status_t build_index(const hetc_plugin_space_t *space, hetc_space_index_t **out) {
  hetc_space_index_t *index = calloc(1, sizeof(*index));
  if (!index) return hetc_status_new(HETC_STATUS_OUT_OF_MEMORY, "knob space index");
  int32_t parent[HETC_SPACE_MAX_KNOBS], component_of_root[HETC_SPACE_MAX_KNOBS];
  int constrained[HETC_SPACE_MAX_KNOBS] = {0};
  for (int32_t k = 0; k < space->num_knobs; ++k) {
    parent[k] = k;
    component_of_root[k] = -1;
  }
  for (int32_t i = 0; i < space->num_constraints; ++i) {
    const hetc_space_constraint_t *c = &space->constraints[i];
    for (int32_t k = 0; k < c->num_knobs; ++k) {
      constrained[c->knobs[k]] = 1;
      parent[find_root(parent, c->knobs[k])] = find_root(parent, c->knobs[0]);
    }
  }
  /* Components and units in order of their lowest knob. */
  for (int32_t k = 0; k < space->num_knobs; ++k) {
    index->knob_component[k] = -1;
    if (!constrained[k]) {
      index->units[index->num_units++] = (hetc_space_unit_t){-1, k, space->knobs[k].count};
      continue;
    }
    const int32_t root = find_root(parent, k);
    if (component_of_root[root] < 0) {
      component_of_root[root] = index->num_components++;
      index->units[index->num_units++] = (hetc_space_unit_t){component_of_root[root], k, 0};
    }
    hetc_space_component_t *component = &index->components[component_of_root[root]];
    component->knobs[component->num_knobs++] = k;
    index->knob_component[k] = component_of_root[root];
  }
  hetc_status_t status = NULL;
  for (int32_t c = 0; c < index->num_components && !status; ++c)
    status = enumerate_component(space, index, c, &index->components[c]);
  if (status) {
    for (int32_t c = 0; c < index->num_components; ++c) free(index->components[c].valid);
    free(index);
    return status;
  }
  /* The product of the radices is at most the space's size: no overflow. */
  index->valid_count = 1;
  for (int32_t u = 0; u < index->num_units; ++u) {
    hetc_space_unit_t *unit = &index->units[u];
    if (unit->component >= 0) unit->radix = index->components[unit->component].num_valid;
    index->valid_count *= unit->radix;
  }
  *out = index;
  return NULL;
}

/* The index, built on first use. Readers see the space as const; the
 * index is a cache that changes nothing they can observe, so it is written
 * through a cast, under the space's lock. */
static hetc_status_t ensure_index(const hetc_plugin_space_t *const_space,
                                  const hetc_space_index_t **out_index) {
  hetc_plugin_space_t *space = (hetc_plugin_space_t *)const_space;
  int state = atomic_load_explicit(&space->index_state, memory_order_acquire);
  if (state == 0) {
    pthread_mutex_lock(&space->index_lock);
    state = atomic_load_explicit(&space->index_state, memory_order_relaxed);
    if (state == 0) {
      hetc_space_index_t *index = NULL;
      hetc_status_t status = build_index(space, &index);
      if (status) {
        space->index_error_code = hetc_status_code(status);
        space->index_error = strdup(hetc_status_message(status));
        hetc_status_free(status);
        state = 2;
      } else {
        space->index = index;
        state = 1;
      }
      atomic_store_explicit(&space->index_state, state, memory_order_release);
    }
    pthread_mutex_unlock(&space->index_lock);
  }
  if (state == 2)
    return space->index_error
               ? hetc_status_new(space->index_error_code, "%s", space->index_error)
               : hetc_status_new(HETC_STATUS_OUT_OF_MEMORY, "knob space index");
  *out_index = space->index;
  return NULL;
}

hetc_status_t hetc_space_build_index(const hetc_plugin_space_t *space) {
  const hetc_space_index_t *index = NULL;
  return ensure_index(space, &index);
}

int64_t hetc_space_valid_count(const hetc_plugin_space_t *space) {
  const hetc_space_index_t *index = NULL;
  hetc_status_t status = ensure_index(space, &index);
  if (status) {
    hetc_status_free(status);
    return -1;
  }
  return index->valid_count;
}

/* ---- Digits ---- */

static void decode(const hetc_plugin_space_t *space, int64_t index, int64_t *choice) {
  for (int32_t k = 0; k < space->num_knobs; ++k) {
    choice[k] = index % space->knobs[k].count;
    index /= space->knobs[k].count;
  }
}

static int64_t sub_index(const hetc_plugin_space_t *space, const hetc_space_component_t *component,
                         const int64_t *choice) {
  int64_t sub = 0, stride = 1;
  for (int32_t p = 0; p < component->num_knobs; ++p) {
    sub += choice[component->knobs[p]] * stride;
    stride *= space->knobs[component->knobs[p]].count;
  }
  return sub;
}

static void decode_sub(const hetc_plugin_space_t *space, const hetc_space_component_t *component,
                       int64_t sub, int64_t *choice) {
  for (int32_t p = 0; p < component->num_knobs; ++p) {
    const int64_t count = space->knobs[component->knobs[p]].count;
    choice[component->knobs[p]] = sub % count;
    sub /= count;
  }
}

/* Rank of a sub-index among the component's valid ones, or -1. */
static int64_t find_valid(const hetc_space_component_t *component, int64_t sub) {
  int64_t low = 0, high = component->num_valid;
  while (low < high) {
    const int64_t middle = low + (high - low) / 2;
    if ((int64_t)component->valid[middle] < sub)
      low = middle + 1;
    else
      high = middle;
  }
  return low < component->num_valid && (int64_t)component->valid[low] == sub ? low : -1;
}

hetc_status_t hetc_space_valid_at(const hetc_plugin_space_t *space, int64_t n,
                                  int64_t *out_index) {
  const hetc_space_index_t *index = NULL;
  HETC_RETURN_IF_ERROR(ensure_index(space, &index));
  if (n < 0 || n >= index->valid_count)
    return hetc_status_new(HETC_STATUS_INVALID_ARGUMENT,
                           "valid point %lld outside the %lld valid points", (long long)n,
                           (long long)index->valid_count);
  int64_t choice[HETC_SPACE_MAX_KNOBS];
  for (int32_t u = 0; u < index->num_units; ++u) {
    const hetc_space_unit_t *unit = &index->units[u];
    const int64_t digit = n % unit->radix;
    n /= unit->radix;
    if (unit->component < 0) {
      choice[unit->knob] = digit;
    } else {
      const hetc_space_component_t *component = &index->components[unit->component];
      decode_sub(space, component, component->valid[digit], choice);
    }
  }
  return hetc_space_index_from_choices(space, choice, out_index);
}

/* INVALID_ARGUMENT naming the first constraint of `component` that the
 * choices violate. */
static hetc_status_t violation(const hetc_plugin_space_t *space, const hetc_space_index_t *index,
                               int32_t component, int64_t point, const int64_t *choice) {
  for (int32_t i = 0; i < space->num_constraints; ++i) {
    const hetc_space_constraint_t *c = &space->constraints[i];
    if (index->knob_component[c->knobs[0]] != component || constraint_holds(space, c, choice))
      continue;
    char names[1024];
    knob_names(space, c->knobs, c->num_knobs, names, sizeof(names));
    return hetc_status_new(HETC_STATUS_INVALID_ARGUMENT,
                           "config %lld is not valid: it violates the constraint over %s",
                           (long long)point, names);
  }
  return hetc_status_new(HETC_STATUS_INTERNAL, "config %lld: constraints disagree with the index",
                         (long long)point);
}

hetc_status_t hetc_space_valid_rank(const hetc_plugin_space_t *space, int64_t point,
                                    int64_t *out_n) {
  const hetc_space_index_t *index = NULL;
  HETC_RETURN_IF_ERROR(ensure_index(space, &index));
  HETC_RETURN_IF_ERROR(hetc_space_check_point(space, point));
  int64_t choice[HETC_SPACE_MAX_KNOBS];
  decode(space, point, choice);
  int64_t n = 0, weight = 1;
  for (int32_t u = 0; u < index->num_units; ++u) {
    const hetc_space_unit_t *unit = &index->units[u];
    int64_t digit = choice[unit->knob];
    if (unit->component >= 0) {
      digit = find_valid(&index->components[unit->component],
                         sub_index(space, &index->components[unit->component], choice));
      if (digit < 0) return violation(space, index, unit->component, point, choice);
    }
    n += digit * weight;
    weight *= unit->radix;
  }
  *out_n = n;
  return NULL;
}

/* ---- Random points ---- */

static uint64_t xorshift64(uint64_t *state) {
  uint64_t x = *state ? *state : UINT64_C(0x9E3779B97F4A7C15);
  x ^= x << 13;
  x ^= x >> 7;
  x ^= x << 17;
  return *state = x;
}

uint64_t hetc_space_random_below(uint64_t *rng, uint64_t bound) {
  /* xorshift64 yields 1 .. 2^64-1, so draw - 1 takes 2^64-1 values; draws
   * at or above the largest multiple of bound among them are redrawn. */
  const uint64_t span = UINT64_MAX;
  const uint64_t limit = span - span % bound;
  uint64_t draw;
  do {
    draw = xorshift64(rng) - 1;
  } while (draw >= limit);
  return draw % bound;
}

hetc_status_t hetc_space_sample_valid(const hetc_plugin_space_t *space, uint64_t *rng,
                                      int64_t *out_index) {
  const hetc_space_index_t *index = NULL;
  HETC_RETURN_IF_ERROR(ensure_index(space, &index));
  if (index->valid_count == 0)
    return hetc_status_new(HETC_STATUS_UNSUPPORTED,
                           "no valid config: the constraints reject all %lld points",
                           (long long)hetc_space_size(space));
  const int64_t n = (int64_t)hetc_space_random_below(rng, (uint64_t)index->valid_count);
  return hetc_space_valid_at(space, n, out_index);
}

hetc_status_t hetc_space_random_neighbor(const hetc_plugin_space_t *space, int64_t point,
                                         uint64_t *rng, int64_t *out_index) {
  const hetc_space_index_t *index = NULL;
  HETC_RETURN_IF_ERROR(ensure_index(space, &index));
  HETC_RETURN_IF_ERROR(hetc_space_check_point(space, point));
  int64_t choice[HETC_SPACE_MAX_KNOBS];
  decode(space, point, choice);
  /* Which components the point violates: one knob can mend at most one. */
  int32_t violated = 0, violated_component = -1;
  for (int32_t c = 0; c < index->num_components; ++c) {
    if (find_valid(&index->components[c], sub_index(space, &index->components[c], choice)) < 0) {
      ++violated;
      violated_component = c;
    }
  }
  int32_t order[HETC_SPACE_MAX_KNOBS];
  for (int32_t k = 0; k < space->num_knobs; ++k) order[k] = k;
  for (int32_t k = space->num_knobs - 1; k > 0; --k) {
    const int32_t j = (int32_t)hetc_space_random_below(rng, (uint64_t)k + 1);
    const int32_t swap = order[k];
    order[k] = order[j];
    order[j] = swap;
  }
  for (int32_t i = 0; i < space->num_knobs; ++i) {
    const int32_t knob = order[i];
    const int64_t count = space->knobs[knob].count, current = choice[knob];
    const int32_t component = index->knob_component[knob];
    if (count < 2 || violated > 1 || (violated == 1 && component != violated_component)) continue;
    if (component < 0) {
      const int64_t r = (int64_t)hetc_space_random_below(rng, (uint64_t)(count - 1));
      choice[knob] = r < current ? r : r + 1;
      return hetc_space_index_from_choices(space, choice, out_index);
    }
    /* Count the candidates that keep the component valid, then take the
     * r-th of them. */
    const hetc_space_component_t *comp = &index->components[component];
    int64_t stride = 1;
    for (int32_t p = 0; comp->knobs[p] != knob; ++p) stride *= space->knobs[comp->knobs[p]].count;
    const int64_t base = sub_index(space, comp, choice) - current * stride;
    int64_t options = 0;
    for (int64_t c = 0; c < count; ++c)
      options += c != current && find_valid(comp, base + c * stride) >= 0;
    if (options == 0) continue;
    int64_t r = (int64_t)hetc_space_random_below(rng, (uint64_t)options);
    for (int64_t c = 0; c < count; ++c) {
      if (c == current || find_valid(comp, base + c * stride) < 0) continue;
      if (r-- == 0) {
        choice[knob] = c;
        break;
      }
    }
    return hetc_space_index_from_choices(space, choice, out_index);
  }
  return hetc_status_new(HETC_STATUS_UNSUPPORTED,
                         "config %lld has no valid neighbour: no single knob can change",
                         (long long)point);
}
