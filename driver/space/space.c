#include "space/space.h"

#include <stdlib.h>
#include <string.h>

#define MAX_CONSTRAINTS 32
/* Rejection sampling gives up after this many draws (the constraint tree of
 * the tuner replaces it for very sparse spaces). */
#define MAX_SAMPLE_DRAWS 100000

typedef struct knob_t {
  char *name;
  hetc_knob_kind_t kind;
  int32_t width;       /* values per candidate */
  int64_t count;       /* candidates */
  int64_t *candidates; /* count * width values */
} knob_t;

typedef struct constraint_t {
  int32_t num_knobs;
  int32_t knobs[HETC_SPACE_MAX_KNOBS];
  hetc_plugin_constraint_fn_t fn;
  const void *user_data;
} constraint_t;

struct hetc_plugin_space_t {
  int32_t num_knobs;
  knob_t knobs[HETC_SPACE_MAX_KNOBS];
  int32_t num_constraints;
  constraint_t constraints[MAX_CONSTRAINTS];
  int has_default;
  int64_t default_index;
};

hetc_status_t hetc_space_create(hetc_plugin_space_t **out_space) {
  *out_space = calloc(1, sizeof(hetc_plugin_space_t));
  return *out_space ? NULL : hetc_status_new(HETC_STATUS_OUT_OF_MEMORY, "knob space");
}

void hetc_space_free(hetc_plugin_space_t *space) {
  if (!space) return;
  for (int32_t k = 0; k < space->num_knobs; ++k) {
    free(space->knobs[k].name);
    free(space->knobs[k].candidates);
  }
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

int64_t hetc_space_size(const hetc_plugin_space_t *space) {
  int64_t size = 1;
  for (int32_t k = 0; k < space->num_knobs; ++k) size *= space->knobs[k].count;
  return size;
}

static int32_t find_knob(const hetc_plugin_space_t *space, const char *name) {
  for (int32_t k = 0; k < space->num_knobs; ++k)
    if (!strcmp(space->knobs[k].name, name)) return k;
  return -1;
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
  } else if (find_knob(space, name) >= 0) {
    status = hetc_status_new(HETC_STATUS_INVALID_ARGUMENT, "knob '%s' defined twice", name);
  } else if (count < 1) {
    status = hetc_status_new(HETC_STATUS_INVALID_ARGUMENT, "knob '%s' has no candidates", name);
  } else if (hetc_space_size(space) > INT64_MAX / count) {
    status = hetc_status_new(HETC_STATUS_INVALID_ARGUMENT,
                             "knob '%s': the space would exceed 2^63 points", name);
  }
  knob_t *knob = &space->knobs[space->num_knobs];
  if (!status && !(knob->name = strdup(name)))
    status = hetc_status_new(HETC_STATUS_OUT_OF_MEMORY, "knob space");
  if (status) {
    free(candidates);
    return status;
  }
  knob->kind = kind;
  knob->width = width;
  knob->count = count;
  knob->candidates = candidates;
  ++space->num_knobs;
  return NULL;
}

/* Appends every split of `remaining` into parts[from..] (outermost part 0
 * takes what is left) to the growing candidate list. */
typedef struct split_builder_t {
  int32_t parts;
  int32_t policy;
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

hetc_plugin_status_t hetc_space_define_split(hetc_plugin_space_t *space, const char *name,
                                             int64_t extent, int32_t num_parts, int32_t policy,
                                             int64_t max_factor, const int64_t *candidates,
                                             int32_t num_candidates) {
  if (extent < 1 || num_parts < 1 || num_parts > HETC_SPACE_MAX_PARTS)
    return hetc_status_new(HETC_STATUS_INVALID_ARGUMENT,
                           "split '%s': extent %lld into %d parts is not a valid split",
                           name ? name : "", (long long)extent, num_parts);
  split_builder_t b = {num_parts, policy, max_factor, NULL, 0, 0, 0};
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
  } else {
    return hetc_status_new(HETC_STATUS_INVALID_ARGUMENT, "split '%s': unknown policy %d", name,
                           policy);
  }
  if (b.failed) {
    free(b.values);
    return hetc_status_new(HETC_STATUS_OUT_OF_MEMORY, "knob space");
  }
  return add_knob(space, name, HETC_KNOB_SPLIT, num_parts, b.count, b.values);
}

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
  if (space->num_constraints == MAX_CONSTRAINTS)
    return hetc_status_new(HETC_STATUS_INVALID_ARGUMENT, "more than %d constraints", MAX_CONSTRAINTS);
  constraint_t *c = &space->constraints[space->num_constraints];
  for (int32_t i = 0; i < num_knob_names; ++i) {
    c->knobs[i] = find_knob(space, knob_names[i]);
    if (c->knobs[i] < 0)
      return hetc_status_new(HETC_STATUS_INVALID_ARGUMENT, "constraint names unknown knob '%s'",
                             knob_names[i]);
  }
  c->num_knobs = num_knob_names;
  c->fn = fn;
  c->user_data = user_data;
  ++space->num_constraints;
  return NULL;
}

static int64_t choice_of(const hetc_plugin_space_t *space, int64_t index, int32_t knob) {
  for (int32_t k = 0; k < knob; ++k) index /= space->knobs[k].count;
  return index % space->knobs[knob].count;
}

static void fill_knob(const hetc_plugin_space_t *space, int32_t knob, int64_t choice,
                      hetc_plugin_knob_value_t *out) {
  const knob_t *k = &space->knobs[knob];
  out->name = k->name;
  out->count = k->width;
  out->values = k->candidates + choice * k->width;
}

hetc_status_t hetc_space_config_at(const hetc_plugin_space_t *space, int64_t index,
                                   hetc_space_config_t *out_config) {
  if (index < 0 || index >= hetc_space_size(space))
    return hetc_status_new(HETC_STATUS_INVALID_ARGUMENT, "config index %lld outside the space of %lld",
                           (long long)index, (long long)hetc_space_size(space));
  out_config->index = index;
  int64_t rest = index;
  for (int32_t k = 0; k < space->num_knobs; ++k) {
    fill_knob(space, k, rest % space->knobs[k].count, &out_config->knobs[k]);
    rest /= space->knobs[k].count;
  }
  out_config->view.num_knobs = space->num_knobs;
  out_config->view.knobs = out_config->knobs;
  return NULL;
}

hetc_status_t hetc_space_index_of(const hetc_plugin_space_t *space,
                                  const hetc_plugin_config_t *config, int64_t *out_index) {
  if (!config || config->num_knobs != space->num_knobs)
    return hetc_status_new(HETC_STATUS_INVALID_ARGUMENT, "config has %d knobs, the space %d",
                           config ? config->num_knobs : 0, space->num_knobs);
  int64_t index = 0, stride = 1;
  for (int32_t k = 0; k < space->num_knobs; ++k) {
    const knob_t *knob = &space->knobs[k];
    const hetc_plugin_knob_value_t *value = hetc_config_find(config, knob->name);
    if (!value)
      return hetc_status_new(HETC_STATUS_INVALID_ARGUMENT, "config lacks knob '%s'", knob->name);
    int64_t choice = -1;
    for (int64_t c = 0; value->count == knob->width && c < knob->count && choice < 0; ++c) {
      if (!memcmp(knob->candidates + c * knob->width, value->values,
                  sizeof(int64_t) * (size_t)knob->width))
        choice = c;
    }
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

int hetc_space_is_valid(const hetc_plugin_space_t *space, int64_t index) {
  for (int32_t i = 0; i < space->num_constraints; ++i) {
    const constraint_t *c = &space->constraints[i];
    hetc_plugin_knob_value_t values[HETC_SPACE_MAX_KNOBS];
    for (int32_t k = 0; k < c->num_knobs; ++k)
      fill_knob(space, c->knobs[k], choice_of(space, index, c->knobs[k]), &values[k]);
    hetc_plugin_config_t view = {c->num_knobs, values};
    if (!c->fn(&view, c->user_data)) return 0;
  }
  return 1;
}

hetc_plugin_status_t hetc_space_set_default(hetc_plugin_space_t *space,
                                            const hetc_plugin_config_t *config) {
  int64_t index;
  HETC_RETURN_IF_ERROR(hetc_space_index_of(space, config, &index));
  if (!hetc_space_is_valid(space, index))
    return hetc_status_new(HETC_STATUS_INVALID_ARGUMENT, "default config violates a constraint");
  space->default_index = index;
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
  *out_index = space->default_index;
  return NULL;
}

static uint64_t xorshift64(uint64_t *state) {
  uint64_t x = *state ? *state : UINT64_C(0x9E3779B97F4A7C15);
  x ^= x << 13;
  x ^= x >> 7;
  x ^= x << 17;
  return *state = x;
}

hetc_status_t hetc_space_sample_valid(const hetc_plugin_space_t *space, uint64_t *rng,
                                      int64_t *out_index) {
  int64_t size = hetc_space_size(space);
  for (int draw = 0; draw < MAX_SAMPLE_DRAWS; ++draw) {
    int64_t index = (int64_t)(xorshift64(rng) % (uint64_t)size);
    if (hetc_space_is_valid(space, index)) {
      *out_index = index;
      return NULL;
    }
  }
  return hetc_status_new(HETC_STATUS_UNSUPPORTED, "no valid config found in %d random draws",
                         MAX_SAMPLE_DRAWS);
}

const hetc_plugin_knob_value_t *hetc_config_find(const hetc_plugin_config_t *config,
                                                 const char *name) {
  for (int32_t k = 0; config && k < config->num_knobs; ++k)
    if (config->knobs[k].name && !strcmp(config->knobs[k].name, name)) return &config->knobs[k];
  return NULL;
}
