/* Building knob spaces and mapping indices to configs and back. The
 * valid-point index (components, counting, sampling, neighbours) is in
 * space_valid.c. */
#include "space/space.h"

#include <stdlib.h>
#include <string.h>

#include "space/space_int.h"

hetc_status_t hetc_space_create(hetc_plugin_space_t **out_space) {
  hetc_plugin_space_t *space = calloc(1, sizeof(hetc_plugin_space_t));
  if (!space) return hetc_status_new(HETC_STATUS_OUT_OF_MEMORY, "knob space");
  if (pthread_mutex_init(&space->index_lock, NULL) != 0) {
    free(space);
    return hetc_status_new(HETC_STATUS_OUT_OF_MEMORY, "knob space lock");
  }
  atomic_init(&space->index_state, 0);
  *out_space = space;
  return NULL;
}

void hetc_space_free(hetc_plugin_space_t *space) {
  if (!space) return;
  hetc_space_drop_index(space);
  for (int32_t k = 0; k < space->num_knobs; ++k) {
    free(space->knobs[k].name);
    free(space->knobs[k].candidates);
    free(space->knobs[k].all);
  }
  for (int32_t i = 0; i < space->num_constraints; ++i) free(space->constraints[i].owned_data);
  pthread_mutex_destroy(&space->index_lock);
  free(space);
}

int32_t hetc_space_knob_count(const hetc_plugin_space_t *space) { return space->num_knobs; }
const char *hetc_space_knob_name(const hetc_plugin_space_t *space, int32_t knob) {
  return space->knobs[knob].name;
}
hetc_knob_kind_t hetc_space_knob_kind(const hetc_plugin_space_t *space, int32_t knob) {
  return space->knobs[knob].kind;
}
int64_t hetc_space_knob_size(const hetc_plugin_space_t *space, int32_t knob) {
  return space->knobs[knob].count;
}
int32_t hetc_space_knob_width(const hetc_plugin_space_t *space, int32_t knob) {
  return space->knobs[knob].width;
}
const int64_t *hetc_space_knob_values(const hetc_plugin_space_t *space, int32_t knob,
                                      int64_t choice) {
  const hetc_space_knob_t *k = &space->knobs[knob];
  return k->candidates + choice * k->width;
}
int64_t hetc_space_knob_extent(const hetc_plugin_space_t *space, int32_t knob) {
  return space->knobs[knob].kind == HETC_KNOB_SPLIT ? space->knobs[knob].extent : 0;
}
int32_t hetc_space_knob_policy(const hetc_plugin_space_t *space, int32_t knob) {
  return space->knobs[knob].kind == HETC_KNOB_SPLIT ? space->knobs[knob].policy : -1;
}
int hetc_space_knob_is_optional(const hetc_plugin_space_t *space, int32_t knob,
                                int *out_pinned) {
  if (out_pinned) *out_pinned = space->knobs[knob].all != NULL;
  return space->knobs[knob].optional;
}
int32_t hetc_space_constraint_count(const hetc_plugin_space_t *space) {
  return space->num_constraints;
}
int32_t hetc_space_constraint_knobs(const hetc_plugin_space_t *space, int32_t constraint,
                                    int32_t *out_knobs) {
  const hetc_space_constraint_t *c = &space->constraints[constraint];
  memcpy(out_knobs, c->knobs, sizeof(int32_t) * (size_t)c->num_knobs);
  return c->num_knobs;
}

const char *hetc_knob_kind_name(hetc_knob_kind_t kind) {
  switch (kind) {
    case HETC_KNOB_SPLIT: return "split";
    case HETC_KNOB_OTHER: return "other";
    case HETC_KNOB_REORDER: return "reorder";
    case HETC_KNOB_ANNOTATE: return "annotate";
  }
  return "?";
}

int64_t hetc_space_size(const hetc_plugin_space_t *space) {
  int64_t size = 1;
  for (int32_t k = 0; k < space->num_knobs; ++k) size *= space->knobs[k].count;
  return size;
}

int64_t hetc_space_stride(const hetc_plugin_space_t *space, int32_t knob) {
  int64_t stride = 1;
  for (int32_t k = 0; k < knob; ++k) stride *= space->knobs[k].count;
  return stride;
}

int32_t hetc_space_find_knob(const hetc_plugin_space_t *space, const char *name) {
  for (int32_t k = 0; name && k < space->num_knobs; ++k)
    if (!strcmp(space->knobs[k].name, name)) return k;
  return -1;
}

/* Size of the product if knob `knob` had `count` candidates; -1 when that
 * exceeds the 63-bit index. */
static int64_t size_with(const hetc_plugin_space_t *space, int32_t knob, int64_t count) {
  int64_t size = 1;
  for (int32_t k = 0; k < space->num_knobs; ++k) {
    int64_t n = k == knob ? count : space->knobs[k].count;
    if (size > INT64_MAX / n) return -1;
    size *= n;
  }
  return size;
}

/* Appends a knob after checking its name and that the product of all
 * knob sizes still fits the 63-bit index. Takes ownership of candidates. */
static hetc_plugin_status_t add_knob(hetc_plugin_space_t *space, const char *name,
                                     hetc_knob_kind_t kind, int32_t width, int64_t count,
                                     int64_t *candidates) {
  hetc_plugin_status_t status = NULL;
  if (!name || !name[0]) {
    status = hetc_status_new(HETC_STATUS_INVALID_ARGUMENT, "knob without a name");
  } else if (space->num_knobs == HETC_SPACE_MAX_KNOBS) {
    status = hetc_status_new(HETC_STATUS_INVALID_ARGUMENT, "knob '%s': more than %d knobs", name,
                             HETC_SPACE_MAX_KNOBS);
  } else if (hetc_space_find_knob(space, name) >= 0) {
    status = hetc_status_new(HETC_STATUS_INVALID_ARGUMENT, "knob '%s' defined twice", name);
  } else if (count < 1) {
    status = hetc_status_new(HETC_STATUS_INVALID_ARGUMENT, "knob '%s' has no candidates", name);
  } else if (hetc_space_size(space) > INT64_MAX / count) {
    status = hetc_status_new(HETC_STATUS_INVALID_ARGUMENT,
                             "knob '%s': the space would exceed 2^63 points", name);
  }
  hetc_space_knob_t *knob = &space->knobs[space->num_knobs];
  if (!status && !(knob->name = strdup(name)))
    status = hetc_status_new(HETC_STATUS_OUT_OF_MEMORY, "knob space");
  if (status) {
    free(candidates);
    return status;
  }
  hetc_space_drop_index(space);
  knob->kind = kind;
  knob->width = width;
  knob->count = count;
  knob->candidates = candidates;
  knob->extent = 0;
  knob->policy = -1;
  ++space->num_knobs;
  return NULL;
}

/* ---- Splits ---- */

/* The growing candidate list of a split knob. */
typedef struct split_builder_t {
  int32_t parts;
  int32_t policy;
  int64_t extent;
  int64_t max_factor;
  int64_t *values;
  int64_t count, capacity;
  int failed;
} split_builder_t;

static void split_emit(split_builder_t *b, const int64_t *tuple) {
  if (b->count == b->capacity) {
    int64_t capacity = b->capacity ? b->capacity * 2 : 64;
    int64_t *values = realloc(b->values, sizeof(int64_t) * (size_t)(capacity * b->parts));
    if (!values) {
      b->failed = 1;
      return;
    }
    b->values = values;
    b->capacity = capacity;
  }
  memcpy(b->values + b->count * b->parts, tuple, sizeof(int64_t) * (size_t)b->parts);
  ++b->count;
}

/* Appends every exact split of `remaining` into parts[0..part] (outermost
 * part 0 takes what is left); POWER2 keeps inner parts that are powers of
 * two. */
static void split_recurse(split_builder_t *b, int64_t *tuple, int32_t part, int64_t remaining) {
  if (b->failed) return;
  if (part == 0) {
    tuple[0] = remaining;
    split_emit(b, tuple);
    return;
  }
  for (int64_t f = 1; f <= remaining; ++f) {
    if (remaining % f) continue;
    if (b->max_factor > 0 && f > b->max_factor) break;
    if (b->policy == HETC_PLUGIN_SPLIT_POWER2 && (f & (f - 1))) continue;
    tuple[part] = f;
    split_recurse(b, tuple, part - 1, remaining / f);
  }
}

/* SPLIT_BOTH's addition to the exact splits: inner parts all powers of two
 * whose product (`inner`) does not divide the extent, the outer part
 * rounded up. Products that divide are exact splits, already listed. */
static void split_pow2_tails(split_builder_t *b, int64_t *tuple, int32_t part, int64_t inner) {
  if (b->failed) return;
  if (part == 0) {
    if (b->extent % inner == 0) return;
    tuple[0] = (b->extent + inner - 1) / inner;
    split_emit(b, tuple);
    return;
  }
  for (int64_t f = 1; f <= b->extent / inner; f *= 2) {
    if (b->max_factor > 0 && f > b->max_factor) break;
    tuple[part] = f;
    split_pow2_tails(b, tuple, part - 1, inner * f);
  }
}

hetc_plugin_status_t hetc_space_define_split(hetc_plugin_space_t *space, const char *name,
                                             int64_t extent, int32_t num_parts, int32_t policy,
                                             int64_t max_factor, const int64_t *candidates,
                                             int32_t num_candidates) {
  if (extent < 1 || num_parts < 1 || num_parts > HETC_SPACE_MAX_PARTS)
    return hetc_status_new(HETC_STATUS_INVALID_ARGUMENT,
                           "split '%s': extent %lld into %d parts is not a valid split",
                           name ? name : "", (long long)extent, num_parts);
  split_builder_t b = {num_parts, policy, extent, max_factor, NULL, 0, 0, 0};
  int64_t tuple[HETC_SPACE_MAX_PARTS] = {0};
  if (policy == HETC_PLUGIN_SPLIT_CANDIDATES) {
    if (!candidates || num_candidates < 1)
      return hetc_status_new(HETC_STATUS_INVALID_ARGUMENT, "split '%s': no candidates", name);
    for (int32_t i = 0; i < num_candidates; ++i) {
      int64_t inner = candidates[i];
      if (inner < 1 || (max_factor > 0 && inner > max_factor)) continue;
      for (int32_t p = 1; p < num_parts; ++p) tuple[p] = 1;
      tuple[num_parts - 1] = inner;
      /* The outer part rounds up: templates guard the tail. */
      tuple[0] = num_parts == 1 ? extent : (extent + inner - 1) / inner;
      if (num_parts == 1 && inner != extent) continue;
      split_emit(&b, tuple);
    }
  } else if (policy == HETC_PLUGIN_SPLIT_FACTORS || policy == HETC_PLUGIN_SPLIT_POWER2) {
    split_recurse(&b, tuple, num_parts - 1, extent);
  } else if (policy == HETC_PLUGIN_SPLIT_BOTH) {
    b.policy = HETC_PLUGIN_SPLIT_FACTORS;
    split_recurse(&b, tuple, num_parts - 1, extent);
    split_pow2_tails(&b, tuple, num_parts - 1, 1);
  } else {
    return hetc_status_new(HETC_STATUS_INVALID_ARGUMENT, "split '%s': unknown policy %d", name,
                           policy);
  }
  if (b.failed) {
    free(b.values);
    return hetc_status_new(HETC_STATUS_OUT_OF_MEMORY, "knob space");
  }
  HETC_RETURN_IF_ERROR(add_knob(space, name, HETC_KNOB_SPLIT, num_parts, b.count, b.values));
  space->knobs[space->num_knobs - 1].extent = extent;
  space->knobs[space->num_knobs - 1].policy = policy;
  return NULL;
}

/* ---- Lists, annotations, reorders ---- */

static hetc_plugin_status_t define_list(hetc_plugin_space_t *space, const char *name,
                                        hetc_knob_kind_t kind, const int64_t *values,
                                        int32_t num_values) {
  if (!values || num_values < 1)
    return hetc_status_new(HETC_STATUS_INVALID_ARGUMENT, "knob '%s' has no values",
                           name ? name : "");
  int64_t *copy = malloc(sizeof(int64_t) * (size_t)num_values);
  if (!copy) return hetc_status_new(HETC_STATUS_OUT_OF_MEMORY, "knob space");
  memcpy(copy, values, sizeof(int64_t) * (size_t)num_values);
  for (int32_t i = 0; i < num_values; ++i) {
    for (int32_t j = 0; j < i; ++j) {
      if (copy[i] == copy[j]) {
        free(copy);
        return hetc_status_new(HETC_STATUS_INVALID_ARGUMENT, "knob '%s' lists %lld twice", name,
                               (long long)values[i]);
      }
    }
  }
  return add_knob(space, name, kind, 1, num_values, copy);
}

hetc_plugin_status_t hetc_space_define_knob(hetc_plugin_space_t *space, const char *name,
                                            const int64_t *values, int32_t num_values) {
  return define_list(space, name, HETC_KNOB_OTHER, values, num_values);
}

hetc_plugin_status_t hetc_space_define_annotate(hetc_plugin_space_t *space, const char *name,
                                                const int64_t *choices, int32_t num_choices) {
  return define_list(space, name, HETC_KNOB_ANNOTATE, choices, num_choices);
}

hetc_plugin_status_t hetc_space_define_reorder(hetc_plugin_space_t *space, const char *name,
                                               int32_t num_axes, const int32_t *permutations,
                                               int32_t num_permutations) {
  if (!permutations || num_axes < 1 || num_permutations < 1)
    return hetc_status_new(HETC_STATUS_INVALID_ARGUMENT, "reorder '%s' has no permutations",
                           name ? name : "");
  for (int32_t p = 0; p < num_permutations; ++p) {
    uint64_t seen = 0;
    for (int32_t a = 0; a < num_axes; ++a) {
      int32_t axis = permutations[p * num_axes + a];
      if (axis < 0 || axis >= num_axes || axis >= 64 || (seen >> axis & 1))
        return hetc_status_new(HETC_STATUS_INVALID_ARGUMENT,
                               "reorder '%s': candidate %d is not a permutation of %d axes", name,
                               p, num_axes);
      seen |= UINT64_C(1) << axis;
    }
  }
  /* A reorder knob's value is the index of its permutation; the plugin
   * keeps the permutation table. */
  int64_t *indices = malloc(sizeof(int64_t) * (size_t)num_permutations);
  if (!indices) return hetc_status_new(HETC_STATUS_OUT_OF_MEMORY, "knob space");
  for (int32_t p = 0; p < num_permutations; ++p) indices[p] = p;
  return add_knob(space, name, HETC_KNOB_REORDER, 1, num_permutations, indices);
}

hetc_plugin_status_t hetc_space_add_constraint(hetc_plugin_space_t *space,
                                               const char *const *knob_names,
                                               int32_t num_knob_names,
                                               hetc_plugin_constraint_fn_t fn,
                                               const void *user_data) {
  if (!fn || num_knob_names < 1 || num_knob_names > HETC_SPACE_MAX_KNOBS)
    return hetc_status_new(HETC_STATUS_INVALID_ARGUMENT, "constraint needs a function and 1..%d knobs",
                           HETC_SPACE_MAX_KNOBS);
  if (space->num_constraints == HETC_SPACE_MAX_CONSTRAINTS)
    return hetc_status_new(HETC_STATUS_INVALID_ARGUMENT, "more than %d constraints",
                           HETC_SPACE_MAX_CONSTRAINTS);
  hetc_space_constraint_t *c = &space->constraints[space->num_constraints];
  for (int32_t i = 0; i < num_knob_names; ++i) {
    c->knobs[i] = hetc_space_find_knob(space, knob_names[i]);
    if (c->knobs[i] < 0)
      return hetc_status_new(HETC_STATUS_INVALID_ARGUMENT, "constraint names unknown knob '%s'",
                             knob_names[i]);
  }
  hetc_space_drop_index(space);
  c->num_knobs = num_knob_names;
  c->fn = fn;
  c->user_data = user_data;
  c->owned_data = NULL;
  ++space->num_constraints;
  return NULL;
}

hetc_plugin_status_t hetc_space_add_constraint_copy(hetc_plugin_space_t *space, const char *const *knob_names,
                                                    int32_t num_knob_names, hetc_plugin_constraint_fn_t fn,
                                                    const void *data, size_t size) {
  if (size > 0 && !data) return hetc_status_new(HETC_STATUS_INVALID_ARGUMENT, "constraint data of %zu bytes at NULL", size);
  void *copy = NULL;
  if (size > 0) {
    copy = aligned_alloc(64, (size + 63) & ~(size_t)63);
    if (!copy) return hetc_status_new(HETC_STATUS_OUT_OF_MEMORY, "knob space: constraint data of %zu bytes", size);
    memcpy(copy, data, size);
  }
  hetc_plugin_status_t status = hetc_space_add_constraint(space, knob_names, num_knob_names, fn, copy);
  if (status) free(copy);
  else space->constraints[space->num_constraints - 1].owned_data = copy;
  return status;
}

/* ---- Indices and configs ---- */

int64_t hetc_space_choice_of(const hetc_plugin_space_t *space, int64_t index, int32_t knob) {
  for (int32_t k = 0; k < knob; ++k) index /= space->knobs[k].count;
  return index % space->knobs[knob].count;
}

void hetc_space_fill_knob(const hetc_plugin_space_t *space, int32_t knob, int64_t choice,
                          hetc_plugin_knob_value_t *out) {
  const hetc_space_knob_t *k = &space->knobs[knob];
  out->name = k->name;
  out->count = k->width;
  out->values = k->candidates + choice * k->width;
}

hetc_status_t hetc_space_check_point(const hetc_plugin_space_t *space, int64_t point) {
  if (point < 0 || point >= hetc_space_size(space))
    return hetc_status_new(HETC_STATUS_INVALID_ARGUMENT, "config index %lld outside the space of %lld",
                           (long long)point, (long long)hetc_space_size(space));
  return NULL;
}

hetc_status_t hetc_space_config_at(const hetc_plugin_space_t *space, int64_t index,
                                   hetc_space_config_t *out_config) {
  HETC_RETURN_IF_ERROR(hetc_space_check_point(space, index));
  out_config->index = index;
  int64_t rest = index;
  for (int32_t k = 0; k < space->num_knobs; ++k) {
    hetc_space_fill_knob(space, k, rest % space->knobs[k].count, &out_config->knobs[k]);
    rest /= space->knobs[k].count;
  }
  out_config->view.num_knobs = space->num_knobs;
  out_config->view.knobs = out_config->knobs;
  return NULL;
}

/* Candidate number of `values` (width values) in a knob, or -1. */
static int64_t find_candidate(const hetc_space_knob_t *knob, const int64_t *values,
                              int32_t width) {
  if (width != knob->width) return -1;
  for (int64_t c = 0; c < knob->count; ++c)
    if (!memcmp(knob->candidates + c * knob->width, values, sizeof(int64_t) * (size_t)width))
      return c;
  return -1;
}

hetc_status_t hetc_space_index_of(const hetc_plugin_space_t *space,
                                  const hetc_plugin_config_t *config, int64_t *out_index) {
  if (!config || config->num_knobs != space->num_knobs)
    return hetc_status_new(HETC_STATUS_INVALID_ARGUMENT, "config has %d knobs, the space %d",
                           config ? config->num_knobs : 0, space->num_knobs);
  int64_t index = 0, stride = 1;
  for (int32_t k = 0; k < space->num_knobs; ++k) {
    const hetc_space_knob_t *knob = &space->knobs[k];
    const hetc_plugin_knob_value_t *value = hetc_config_find(config, knob->name);
    if (!value)
      return hetc_status_new(HETC_STATUS_INVALID_ARGUMENT, "config lacks knob '%s'", knob->name);
    int64_t choice = value->values ? find_candidate(knob, value->values, value->count) : -1;
    if (choice < 0)
      return hetc_status_new(HETC_STATUS_INVALID_ARGUMENT,
                             "knob '%s': value is not one of its %lld candidates", knob->name,
                             (long long)knob->count);
    index += choice * stride;
    stride *= knob->count;
  }
  *out_index = index;
  return NULL;
}

int32_t hetc_space_knob_choice(const hetc_plugin_space_t *space, int64_t index, int32_t knob) {
  if (knob < 0 || knob >= space->num_knobs || index < 0 || index >= hetc_space_size(space))
    return -1;
  return (int32_t)hetc_space_choice_of(space, index, knob);
}

hetc_status_t hetc_space_index_from_choices(const hetc_plugin_space_t *space,
                                            const int64_t *choices, int64_t *out_index) {
  int64_t index = 0, stride = 1;
  for (int32_t k = 0; k < space->num_knobs; ++k) {
    const hetc_space_knob_t *knob = &space->knobs[k];
    if (choices[k] < 0 || choices[k] >= knob->count)
      return hetc_status_new(HETC_STATUS_INVALID_ARGUMENT,
                             "knob '%s': choice %lld outside its %lld candidates", knob->name,
                             (long long)choices[k], (long long)knob->count);
    index += choices[k] * stride;
    stride *= knob->count;
  }
  *out_index = index;
  return NULL;
}

int hetc_space_is_valid(const hetc_plugin_space_t *space, int64_t index) {
  for (int32_t i = 0; i < space->num_constraints; ++i) {
    const hetc_space_constraint_t *c = &space->constraints[i];
    hetc_plugin_knob_value_t values[HETC_SPACE_MAX_KNOBS];
    for (int32_t k = 0; k < c->num_knobs; ++k)
      hetc_space_fill_knob(space, c->knobs[k], hetc_space_choice_of(space, index, c->knobs[k]),
                           &values[k]);
    hetc_plugin_config_t view = {c->num_knobs, values};
    if (!c->fn(&view, c->user_data)) return 0;
  }
  return 1;
}

/* ---- Defaults and optional knobs ---- */

hetc_plugin_status_t hetc_space_set_default(hetc_plugin_space_t *space,
                                            const hetc_plugin_config_t *config) {
  int64_t index;
  HETC_RETURN_IF_ERROR(hetc_space_index_of(space, config, &index));
  if (!hetc_space_is_valid(space, index))
    return hetc_status_new(HETC_STATUS_INVALID_ARGUMENT, "default config violates a constraint");
  for (int32_t k = 0; k < space->num_knobs; ++k)
    space->default_choice[k] = hetc_space_choice_of(space, index, k);
  space->has_default = 1;
  return NULL;
}

hetc_status_t hetc_space_default(const hetc_plugin_space_t *space, int64_t *out_index) {
  if (!space->has_default) {
    if (space->num_knobs == 0) {
      *out_index = 0;
      return NULL;
    }
    return hetc_status_new(HETC_STATUS_INTERNAL, "template set no default config");
  }
  /* A knob defined after set_default defaults to its first candidate. */
  return hetc_space_index_from_choices(space, space->default_choice, out_index);
}

hetc_plugin_status_t hetc_space_mark_optional(hetc_plugin_space_t *space, const char *knob_name) {
  int32_t k = hetc_space_find_knob(space, knob_name);
  if (k < 0)
    return hetc_status_new(HETC_STATUS_INVALID_ARGUMENT, "space_mark_optional: no knob '%s'",
                           knob_name ? knob_name : "(null)");
  if (!space->has_default)
    return hetc_status_new(HETC_STATUS_INVALID_ARGUMENT,
                           "space_mark_optional('%s'): call space_set_default first", knob_name);
  hetc_space_knob_t *knob = &space->knobs[k];
  if (knob->all) return NULL; /* already pinned */
  int64_t *pinned = malloc(sizeof(int64_t) * (size_t)knob->width);
  if (!pinned) return hetc_status_new(HETC_STATUS_OUT_OF_MEMORY, "knob space");
  memcpy(pinned, knob->candidates + space->default_choice[k] * knob->width,
         sizeof(int64_t) * (size_t)knob->width);
  hetc_space_drop_index(space);
  knob->optional = 1;
  knob->all = knob->candidates;
  knob->all_count = knob->count;
  knob->candidates = pinned;
  knob->count = 1;
  space->default_choice[k] = 0;
  return NULL;
}

hetc_status_t hetc_space_enable_knob(hetc_plugin_space_t *space, int32_t knob_number) {
  hetc_space_knob_t *knob = &space->knobs[knob_number];
  if (!knob->all) return NULL;
  /* The full list, then what was added while pinned (the pinned default
   * is in the full list). */
  const int32_t width = knob->width;
  int64_t *merged = malloc(sizeof(int64_t) * (size_t)((knob->all_count + knob->count) * width));
  if (!merged) return hetc_status_new(HETC_STATUS_OUT_OF_MEMORY, "knob space");
  memcpy(merged, knob->all, sizeof(int64_t) * (size_t)(knob->all_count * width));
  hetc_space_knob_t full = *knob;
  full.candidates = merged;
  full.count = knob->all_count;
  for (int64_t c = 0; c < knob->count; ++c) {
    const int64_t *values = knob->candidates + c * width;
    if (find_candidate(&full, values, width) < 0) {
      memcpy(merged + full.count * width, values, sizeof(int64_t) * (size_t)width);
      ++full.count;
    }
  }
  if (size_with(space, knob_number, full.count) < 0) {
    free(merged);
    return hetc_status_new(HETC_STATUS_INVALID_ARGUMENT,
                           "enabling knob '%s': the space would exceed 2^63 points", knob->name);
  }
  const int64_t default_choice =
      find_candidate(&full, knob->candidates + space->default_choice[knob_number] * width, width);
  hetc_space_drop_index(space);
  free(knob->candidates);
  free(knob->all);
  knob->candidates = merged;
  knob->count = full.count;
  knob->all = NULL;
  knob->all_count = 0;
  space->default_choice[knob_number] = default_choice;
  return NULL;
}

hetc_status_t hetc_space_add_candidates(hetc_plugin_space_t *space, int32_t knob_number,
                                        const int64_t *values, int32_t num_candidates,
                                        int32_t *out_added) {
  hetc_space_knob_t *knob = &space->knobs[knob_number];
  const int32_t width = knob->width;
  if (out_added) *out_added = 0;
  if (num_candidates < 1) return NULL;
  int64_t *grown = malloc(sizeof(int64_t) * (size_t)((knob->count + num_candidates) * width));
  if (!grown) return hetc_status_new(HETC_STATUS_OUT_OF_MEMORY, "knob space");
  memcpy(grown, knob->candidates, sizeof(int64_t) * (size_t)(knob->count * width));
  hetc_space_knob_t next = *knob;
  next.candidates = grown;
  for (int32_t i = 0; i < num_candidates; ++i) {
    if (find_candidate(&next, values + (int64_t)i * width, width) >= 0) continue;
    memcpy(grown + next.count * width, values + (int64_t)i * width,
           sizeof(int64_t) * (size_t)width);
    ++next.count;
  }
  if (size_with(space, knob_number, next.count) < 0) {
    free(grown);
    return hetc_status_new(HETC_STATUS_INVALID_ARGUMENT,
                           "adding candidates to knob '%s': the space would exceed 2^63 points",
                           knob->name);
  }
  if (out_added) *out_added = (int32_t)(next.count - knob->count);
  hetc_space_drop_index(space);
  free(knob->candidates);
  knob->candidates = grown;
  knob->count = next.count;
  return NULL;
}

/* ---- Printing ---- */

static void print_candidate(const hetc_space_knob_t *knob, int64_t c, FILE *out) {
  const int64_t *v = knob->candidates + c * knob->width;
  if (knob->kind != HETC_KNOB_SPLIT) {
    fprintf(out, "%lld", (long long)v[0]);
    return;
  }
  fputc('[', out);
  for (int32_t p = 0; p < knob->width; ++p) fprintf(out, "%s%lld", p ? ", " : "", (long long)v[p]);
  fputc(']', out);
}

static const char *policy_name(int32_t policy) {
  switch (policy) {
    case HETC_PLUGIN_SPLIT_FACTORS: return "factors";
    case HETC_PLUGIN_SPLIT_POWER2: return "power2";
    case HETC_PLUGIN_SPLIT_CANDIDATES: return "candidates";
    case HETC_PLUGIN_SPLIT_BOTH: return "both";
    default: return "?";
  }
}

hetc_status_t hetc_space_print(const hetc_plugin_space_t *space, const char *indent,
                               int32_t max_values, FILE *out) {
  for (int32_t k = 0; k < space->num_knobs; ++k) {
    const hetc_space_knob_t *knob = &space->knobs[k];
    fprintf(out, "%s%2d %s: %s", indent, k, knob->name, hetc_knob_kind_name(knob->kind));
    if (knob->kind == HETC_KNOB_SPLIT)
      fprintf(out, "(policy=%s, product=%lld, parts=%d)", policy_name(knob->policy),
              (long long)knob->extent, knob->width);
    fprintf(out, " len=%lld [", (long long)knob->count);
    for (int64_t c = 0; c < knob->count && c < max_values; ++c) {
      if (c) fputs(", ", out);
      print_candidate(knob, c, out);
    }
    fprintf(out, "%s]", knob->count > max_values ? ", ..." : "");
    if (knob->all)
      fprintf(out, " optional: pinned to its default (%lld candidates when enabled)",
              (long long)knob->all_count);
    else if (knob->optional)
      fputs(" optional: enabled", out);
    fputc('\n', out);
  }
  for (int32_t i = 0; i < space->num_constraints; ++i) {
    const hetc_space_constraint_t *c = &space->constraints[i];
    fprintf(out, "%sconstraint over", indent);
    for (int32_t k = 0; k < c->num_knobs; ++k)
      fprintf(out, "%s %s", k ? "," : "", space->knobs[c->knobs[k]].name);
    fputc('\n', out);
  }
  return ferror(out) ? hetc_status_new(HETC_STATUS_IO_ERROR, "writing the space failed") : NULL;
}

const hetc_plugin_knob_value_t *hetc_config_find(const hetc_plugin_config_t *config,
                                                 const char *name) {
  for (int32_t k = 0; config && k < config->num_knobs; ++k)
    if (config->knobs[k].name && !strcmp(config->knobs[k].name, name)) return &config->knobs[k];
  return NULL;
}
