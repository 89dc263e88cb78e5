/* driver/space/space_int.h -- the knob space's representation, shared by
 * the files of driver/space (space.c builds and indexes spaces,
 * space_valid.c counts and walks their valid points). Nothing outside
 * driver/space includes it: space.h is what the stage promises. */
#ifndef HETC_DRIVER_SPACE_SPACE_INT_H_
#define HETC_DRIVER_SPACE_SPACE_INT_H_

#include <pthread.h>
#include <stdatomic.h>

#include "space/space.h"

#define HETC_SPACE_MAX_CONSTRAINTS 32

typedef struct hetc_space_knob_t {
  char *name;             /* owned */
  hetc_knob_kind_t kind;
  int32_t width;          /* values per candidate (a split's parts) */
  int64_t count;          /* candidates now offered */
  int64_t *candidates;    /* owned: count * width values */
  /* Split knobs: how the candidates were made (for printing). */
  int64_t extent;
  int32_t policy;
  /* Optional knobs (space_mark_optional): while pinned, `candidates` holds
   * the default alone and `all` the full list (owned, all_count entries);
   * once enabled, `all` is NULL again. */
  int optional;
  int64_t *all;
  int64_t all_count;
} hetc_space_knob_t;

typedef struct hetc_space_constraint_t {
  int32_t num_knobs;
  int32_t knobs[HETC_SPACE_MAX_KNOBS]; /* in the order the plugin named them */
  hetc_plugin_constraint_fn_t fn;
  const void *user_data;
  void *owned_data; /* space_add_constraint_copy's copy (user_data), freed with the space; else NULL */
} hetc_space_constraint_t;

/* Knobs joined by constraints, with every assignment of them that passes
 * all their constraints. */
typedef struct hetc_space_component_t {
  int32_t num_knobs;
  int32_t knobs[HETC_SPACE_MAX_KNOBS]; /* ascending knob numbers */
  /* Valid sub-indices in ascending order. A sub-index is the mixed-radix
   * number of the component's own choices, its first knob fastest; the
   * product of the component's knob sizes is at most
   * HETC_SPACE_MAX_COMPONENT_POINTS, so it fits 32 bits. */
  int64_t num_valid;
  uint32_t *valid; /* owned */
} hetc_space_component_t;

/* One digit of a valid-point number: a constrained component (its valid
 * sub-assignments) or a free knob (its candidates). */
typedef struct hetc_space_unit_t {
  int32_t component; /* index into components, or -1 for a free knob */
  int32_t knob;      /* the free knob, or the component's first knob */
  int64_t radix;
} hetc_space_unit_t;

/* What hetc_space_build_index computes. */
typedef struct hetc_space_index_t {
  int32_t num_components;
  hetc_space_component_t components[HETC_SPACE_MAX_KNOBS];
  int32_t knob_component[HETC_SPACE_MAX_KNOBS]; /* -1 for a free knob */
  int32_t num_units;
  hetc_space_unit_t units[HETC_SPACE_MAX_KNOBS]; /* by first knob, fastest first */
  int64_t valid_count;
} hetc_space_index_t;

struct hetc_plugin_space_t {
  int32_t num_knobs;
  hetc_space_knob_t knobs[HETC_SPACE_MAX_KNOBS];
  int32_t num_constraints;
  hetc_space_constraint_t constraints[HETC_SPACE_MAX_CONSTRAINTS];
  int has_default;
  /* The default's candidate per knob: kept per knob rather than as an
   * index because pinning, enabling and adding candidates change the
   * radices. */
  int64_t default_choice[HETC_SPACE_MAX_KNOBS];

  /* The valid-point index, built on first use by readers that see the
   * space as const (a cache that changes nothing observable), hence the
   * lock: several threads may read one space. Any change to knobs or
   * constraints drops it. index_state: 0 not built, 1 built, 2 failed
   * (index_error holds why, index_error_code its code). */
  pthread_mutex_t index_lock;
  atomic_int index_state;
  hetc_space_index_t *index;
  char *index_error;
  hetc_status_code_t index_error_code;
};

/* Candidate `choice` of a knob in `index` (0 <= index < size). */
int64_t hetc_space_choice_of(const hetc_plugin_space_t *space, int64_t index, int32_t knob);

/* Stride of a knob in the mixed-radix index (product of earlier sizes). */
int64_t hetc_space_stride(const hetc_plugin_space_t *space, int32_t knob);

/* Points a knob value at candidate `choice` of knob `knob` (borrowed from
 * the space). */
void hetc_space_fill_knob(const hetc_plugin_space_t *space, int32_t knob, int64_t choice,
                          hetc_plugin_knob_value_t *out);

/* Forgets the valid-point index after the knobs or constraints changed. */
void hetc_space_drop_index(hetc_plugin_space_t *space);

/* INVALID_ARGUMENT unless 0 <= point < hetc_space_size(space). */
hetc_status_t hetc_space_check_point(const hetc_plugin_space_t *space, int64_t point);

#endif /* HETC_DRIVER_SPACE_SPACE_INT_H_ */
