/* tests/plugins/vec/fake_host.h -- a minimal host services table for
 * driving a plugin without the driver: libc allocation, stderr logging,
 * hetc_status_new statuses, a knob-space recorder, and parallel_for on
 * hetc's own thread pool (or serially, for checks of the kernels' ranges). */
#ifndef HETC_TESTS_PLUGINS_VEC_FAKE_HOST_H_
#define HETC_TESTS_PLUGINS_VEC_FAKE_HOST_H_

#include <stdint.h>

#include "hetc/plugin.h"

#define FAKE_MAX_KNOBS 16
#define FAKE_MAX_VALUES 64

typedef enum fake_knob_kind_t {
  FAKE_KNOB_SPLIT,
  FAKE_KNOB_OPTION,
  FAKE_KNOB_REORDER,
  FAKE_KNOB_ANNOTATE,
} fake_knob_kind_t;

typedef struct fake_knob_t {
  char name[64];
  fake_knob_kind_t kind;
  int32_t num_values; /* options; permutations for a reorder */
  int64_t values[FAKE_MAX_VALUES];
  int32_t num_axes;
} fake_knob_t;

/* What a plugin declared through the space_* services. */
struct hetc_plugin_space_t {
  int32_t num_knobs;
  fake_knob_t knobs[FAKE_MAX_KNOBS];
  int has_default;
  int64_t defaults[FAKE_MAX_KNOBS]; /* one value per knob, in knob order */
  int num_constraints;
  hetc_plugin_constraint_fn_t constraint;
  const void *constraint_data;
  char constraint_names[4][64];
  int32_t constraint_num_names;
};

const hetc_plugin_host_t *fake_host(void);

/* What the fake host's parallel_for does (process-wide; POOL by default). */
typedef enum fake_parallel_t {
  FAKE_PARALLEL_POOL = 0,  /* hetc_parallel_for, thread_count() = the pool's threads */
  FAKE_PARALLEL_SERIAL,    /* body(0, count) on the caller, thread_count() = 1 */
  FAKE_PARALLEL_SCATTERED, /* serial, chunks of 1-3 iterations, last chunk first */
} fake_parallel_t;
void fake_host_set_parallel(fake_parallel_t mode);
/* Index of a knob in the space, or -1. */
int32_t fake_space_find(const hetc_plugin_space_t *space, const char *name);

/* A config with one value per knob, owned by the struct. */
typedef struct fake_config_t {
  hetc_plugin_config_t config;
  hetc_plugin_knob_value_t knobs[FAKE_MAX_KNOBS];
  int64_t values[FAKE_MAX_KNOBS];
  char names[FAKE_MAX_KNOBS][64];
} fake_config_t;

/* The space's default point. The struct points into itself: after copying
 * one, call fake_config_get on the copy before use. */
void fake_config_default(const hetc_plugin_space_t *space, fake_config_t *out);
/* Sets knob `name` (which must exist) to value. */
void fake_config_set(fake_config_t *config, const char *name, int64_t value);
/* The config to hand to a plugin (re-points knob values into `config`). */
const hetc_plugin_config_t *fake_config_get(fake_config_t *config);
/* 1 when the config satisfies the recorded constraint (if any). */
int fake_config_valid(const hetc_plugin_space_t *space, const fake_config_t *config);

#endif /* HETC_TESTS_PLUGINS_VEC_FAKE_HOST_H_ */
