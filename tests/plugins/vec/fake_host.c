#include "fake_host.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/status.h"
#include "common/thread_pool.h"

static void *fake_alloc(size_t size) {
  size_t rounded = (size + 63) / 64 * 64;
  return aligned_alloc(64, rounded ? rounded : 64);
}

static void fake_free(void *ptr) { free(ptr); }

static void fake_log(int32_t level, const char *origin, const char *format, ...) {
  if (level > HETC_PLUGIN_LOG_WARNING && !getenv("HETC_TEST_VERBOSE")) return;
  va_list args;
  va_start(args, format);
  fprintf(stderr, "[%s] ", origin);
  vfprintf(stderr, format, args);
  fprintf(stderr, "\n");
  va_end(args);
}

static hetc_plugin_status_t fake_status_new(int32_t code, const char *format, ...) {
  va_list args;
  va_start(args, format);
  hetc_status_t s = hetc_status_newv((hetc_status_code_t)code, format, args);
  va_end(args);
  return s;
}

static hetc_plugin_status_t add(hetc_plugin_space_t *space, const char *name,
                                fake_knob_kind_t kind, fake_knob_t **out) {
  if (!name || space->num_knobs >= FAKE_MAX_KNOBS)
    return hetc_status_new(HETC_STATUS_INVALID_ARGUMENT, "fake host: bad knob");
  if (fake_space_find(space, name) >= 0)
    return hetc_status_new(HETC_STATUS_INVALID_ARGUMENT, "fake host: duplicate knob %s",
                           name);
  fake_knob_t *k = &space->knobs[space->num_knobs++];
  memset(k, 0, sizeof(*k));
  snprintf(k->name, sizeof(k->name), "%s", name);
  k->kind = kind;
  *out = k;
  return NULL;
}

static hetc_plugin_status_t fake_define_split(hetc_plugin_space_t *space, const char *name,
                                              int64_t extent, int32_t num_parts,
                                              int32_t policy, int64_t max_factor,
                                              const int64_t *candidates,
                                              int32_t num_candidates) {
  (void)extent, (void)num_parts, (void)policy, (void)max_factor, (void)candidates,
      (void)num_candidates;
  fake_knob_t *k;
  return add(space, name, FAKE_KNOB_SPLIT, &k);
}

static hetc_plugin_status_t values_knob(hetc_plugin_space_t *space, const char *name,
                                        fake_knob_kind_t kind, const int64_t *values,
                                        int32_t num_values) {
  if (!values || num_values < 1 || num_values > FAKE_MAX_VALUES)
    return hetc_status_new(HETC_STATUS_INVALID_ARGUMENT, "fake host: knob %s: %d values",
                           name, num_values);
  fake_knob_t *k;
  hetc_status_t s = add(space, name, kind, &k);
  if (s) return s;
  memcpy(k->values, values, sizeof(int64_t) * (size_t)num_values);
  k->num_values = num_values;
  return NULL;
}

static hetc_plugin_status_t fake_define_knob(hetc_plugin_space_t *space, const char *name,
                                             const int64_t *values, int32_t num_values) {
  return values_knob(space, name, FAKE_KNOB_OPTION, values, num_values);
}

static hetc_plugin_status_t fake_define_annotate(hetc_plugin_space_t *space, const char *name,
                                                 const int64_t *choices, int32_t num_choices) {
  return values_knob(space, name, FAKE_KNOB_ANNOTATE, choices, num_choices);
}

static hetc_plugin_status_t fake_define_reorder(hetc_plugin_space_t *space, const char *name,
                                                int32_t num_axes, const int32_t *permutations,
                                                int32_t num_permutations) {
  if (num_axes < 1 || !permutations || num_permutations < 1 ||
      num_permutations > FAKE_MAX_VALUES)
    return hetc_status_new(HETC_STATUS_INVALID_ARGUMENT, "fake host: bad reorder %s", name);
  /* Each permutation must be one: every axis exactly once. */
  for (int32_t p = 0; p < num_permutations; ++p) {
    int seen[64] = {0};
    for (int32_t a = 0; a < num_axes; ++a) {
      int32_t v = permutations[p * num_axes + a];
      if (v < 0 || v >= num_axes || v >= 64 || seen[v]++)
        return hetc_status_new(HETC_STATUS_INVALID_ARGUMENT,
                               "fake host: reorder %s: row %d is not a permutation", name, p);
    }
  }
  fake_knob_t *k;
  hetc_status_t s = add(space, name, FAKE_KNOB_REORDER, &k);
  if (s) return s;
  k->num_axes = num_axes;
  k->num_values = num_permutations;
  for (int32_t p = 0; p < num_permutations; ++p) k->values[p] = p;
  return NULL;
}

int32_t fake_space_find(const hetc_plugin_space_t *space, const char *name) {
  for (int32_t i = 0; i < space->num_knobs; ++i)
    if (strcmp(space->knobs[i].name, name) == 0) return i;
  return -1;
}

static hetc_plugin_status_t fake_set_default(hetc_plugin_space_t *space,
                                             const hetc_plugin_config_t *config) {
  if (!config || config->num_knobs != space->num_knobs)
    return hetc_status_new(HETC_STATUS_INVALID_ARGUMENT,
                           "fake host: default gives %d knobs, space has %d",
                           config ? config->num_knobs : -1, space->num_knobs);
  for (int32_t j = 0; j < config->num_knobs; ++j) {
    const hetc_plugin_knob_value_t *kv = &config->knobs[j];
    int32_t i = fake_space_find(space, kv->name);
    if (i < 0 || kv->count != 1)
      return hetc_status_new(HETC_STATUS_INVALID_ARGUMENT, "fake host: default knob %s",
                             kv->name);
    int ok = 0;
    for (int32_t v = 0; v < space->knobs[i].num_values; ++v)
      ok |= space->knobs[i].values[v] == kv->values[0];
    if (!ok)
      return hetc_status_new(HETC_STATUS_INVALID_ARGUMENT,
                             "fake host: default %s = %lld outside the knob", kv->name,
                             (long long)kv->values[0]);
    space->defaults[i] = kv->values[0];
  }
  space->has_default = 1;
  return NULL;
}

static hetc_plugin_status_t fake_add_constraint(hetc_plugin_space_t *space,
                                                const char *const *knob_names,
                                                int32_t num_knob_names,
                                                hetc_plugin_constraint_fn_t fn,
                                                const void *user_data) {
  if (!fn || num_knob_names < 1 || num_knob_names > 4 || space->num_constraints)
    return hetc_status_new(HETC_STATUS_INVALID_ARGUMENT, "fake host: bad constraint");
  for (int32_t i = 0; i < num_knob_names; ++i) {
    if (fake_space_find(space, knob_names[i]) < 0)
      return hetc_status_new(HETC_STATUS_INVALID_ARGUMENT,
                             "fake host: constraint on unknown knob %s", knob_names[i]);
    snprintf(space->constraint_names[i], 64, "%s", knob_names[i]);
  }
  space->constraint_num_names = num_knob_names;
  space->constraint = fn;
  space->constraint_data = user_data;
  space->num_constraints = 1;
  return NULL;
}

static const hetc_plugin_knob_value_t *fake_config_find(const hetc_plugin_config_t *config,
                                                        const char *name) {
  for (int32_t i = 0; config && i < config->num_knobs; ++i)
    if (strcmp(config->knobs[i].name, name) == 0) return &config->knobs[i];
  return NULL;
}

static _Atomic int parallel_mode = FAKE_PARALLEL_POOL;

void fake_host_set_parallel(fake_parallel_t mode) { parallel_mode = (int)mode; }

/* Serial, in chunks of 1, 2 or 3 iterations from the last to the first:
 * a body that reads anything but its own range, or assumes chunks come in
 * order, gives wrong numbers. */
static void scattered(int64_t count, hetc_plugin_parallel_body_fn_t body, void *user_data) {
  int64_t end = count, k = 0;
  while (end > 0) {
    int64_t size = 1 + k++ % 3;
    int64_t begin = end > size ? end - size : 0;
    body(begin, end, user_data);
    end = begin;
  }
}

static void fake_parallel_for(int64_t count, int64_t grain, hetc_plugin_parallel_body_fn_t body,
                              void *user_data) {
  switch (parallel_mode) {
    case FAKE_PARALLEL_SERIAL:
      if (count > 0) body(0, count, user_data);
      break;
    case FAKE_PARALLEL_SCATTERED: scattered(count, body, user_data); break;
    default: hetc_parallel_for(count, grain, body, user_data); break;
  }
}

static int32_t fake_thread_count(void) {
  return parallel_mode == FAKE_PARALLEL_POOL ? hetc_thread_pool_threads() : 1;
}

static const hetc_plugin_host_t host = {
    .header = {HETC_PLUGIN_ABI_MAJOR, HETC_PLUGIN_ABI_MINOR, sizeof(hetc_plugin_host_t), 0},
    .alloc = fake_alloc,
    .free = fake_free,
    .log = fake_log,
    .status_new = fake_status_new,
    .space_define_split = fake_define_split,
    .space_define_knob = fake_define_knob,
    .space_define_reorder = fake_define_reorder,
    .space_define_annotate = fake_define_annotate,
    .space_set_default = fake_set_default,
    .space_add_constraint = fake_add_constraint,
    .config_find = fake_config_find,
    .parallel_for = fake_parallel_for,
    .thread_count = fake_thread_count,
};

const hetc_plugin_host_t *fake_host(void) { return &host; }

void fake_config_default(const hetc_plugin_space_t *space, fake_config_t *out) {
  memset(out, 0, sizeof(*out));
  for (int32_t i = 0; i < space->num_knobs; ++i) {
    out->values[i] = space->defaults[i];
    snprintf(out->names[i], sizeof(out->names[i]), "%s", space->knobs[i].name);
    out->knobs[i].name = out->names[i];
    out->knobs[i].count = 1;
    out->knobs[i].values = &out->values[i];
  }
  out->config.num_knobs = space->num_knobs;
  out->config.knobs = out->knobs;
}

void fake_config_set(fake_config_t *config, const char *name, int64_t value) {
  for (int32_t i = 0; i < config->config.num_knobs; ++i)
    if (strcmp(config->names[i], name) == 0) {
      config->values[i] = value;
      return;
    }
}

int fake_config_valid(const hetc_plugin_space_t *space, const fake_config_t *config) {
  if (!space->constraint) return 1;
  hetc_plugin_knob_value_t knobs[4];
  for (int32_t i = 0; i < space->constraint_num_names; ++i) {
    int32_t k = fake_space_find(space, space->constraint_names[i]);
    knobs[i] = config->knobs[k];
  }
  hetc_plugin_config_t sub = {space->constraint_num_names, knobs};
  return space->constraint(&sub, space->constraint_data);
}

const hetc_plugin_config_t *fake_config_get(fake_config_t *config) {
  for (int32_t i = 0; i < config->config.num_knobs; ++i) {
    config->knobs[i].values = &config->values[i];
    config->knobs[i].name = config->names[i];
  }
  config->config.knobs = config->knobs;
  return &config->config;
}
