/* driver/space/space.h -- knob spaces declared by templates.
 *
 * A template declares its knobs through the host's space_* services; the
 * space stores each knob's candidate entities and the constraints, and maps
 * a mixed-radix 64-bit index (first knob fastest) to a config and back.
 * hetc_plugin_space_t is the ABI's opaque name for this object.
 *
 * Valid points (those every constraint accepts) are counted, numbered,
 * sampled and walked without a bitmap over the product: knobs that share
 * constraints form components; each component's valid sub-assignments are
 * enumerated once, depth first, a constraint checked as soon as all its
 * knobs are assigned, and kept sorted; knobs in no constraint are free.
 * A valid point is then one digit per component or free knob.
 *
 * Threads: building a space (define_*, mark_optional, enable, add
 * candidates) is single-threaded; once built, every const call may run
 * from several threads at once. */
#ifndef HETC_DRIVER_SPACE_SPACE_H_
#define HETC_DRIVER_SPACE_SPACE_H_

#include <stdint.h>
#include <stdio.h>

#include "common/status.h"

#define HETC_SPACE_MAX_KNOBS 32
#define HETC_SPACE_MAX_PARTS 8
/* The largest product of knob sizes a constrained component may have: its
 * sub-assignments are enumerated (2^24). */
#define HETC_SPACE_MAX_COMPONENT_POINTS (INT64_C(1) << 24)

typedef enum hetc_knob_kind_t {
  HETC_KNOB_SPLIT,
  HETC_KNOB_OTHER,
  HETC_KNOB_REORDER,
  HETC_KNOB_ANNOTATE
} hetc_knob_kind_t;

/* A config materialised for a plugin call: the view points into this
 * struct, so keep the struct alive (and unmoved) while the view is used. */
typedef struct hetc_space_config_t {
  int64_t index;
  hetc_plugin_config_t view;
  hetc_plugin_knob_value_t knobs[HETC_SPACE_MAX_KNOBS];
} hetc_space_config_t;

/* An empty space; *out_space is released with hetc_space_free. */
hetc_status_t hetc_space_create(hetc_plugin_space_t **out_space);
void hetc_space_free(hetc_plugin_space_t *space);

int32_t hetc_space_knob_count(const hetc_plugin_space_t *space);
const char *hetc_space_knob_name(const hetc_plugin_space_t *space, int32_t knob);
hetc_knob_kind_t hetc_space_knob_kind(const hetc_plugin_space_t *space, int32_t knob);
int64_t hetc_space_knob_size(const hetc_plugin_space_t *space, int32_t knob);
/* Size of the full product (valid or not). */
int64_t hetc_space_size(const hetc_plugin_space_t *space);

/* Config at `index` (0 <= index < size). The values stay owned by the
 * space. */
hetc_status_t hetc_space_config_at(const hetc_plugin_space_t *space, int64_t index,
                                   hetc_space_config_t *out_config);
/* Index of a config given by knob values (any knob order); INVALID_ARGUMENT
 * with a reason when a knob is missing, unknown or has a value outside its
 * candidates. */
hetc_status_t hetc_space_index_of(const hetc_plugin_space_t *space,
                                  const hetc_plugin_config_t *config, int64_t *out_index);
/* 1 when the point satisfies every constraint. */
int hetc_space_is_valid(const hetc_plugin_space_t *space, int64_t index);
/* The template's default point (a failure when the template set none). */
hetc_status_t hetc_space_default(const hetc_plugin_space_t *space, int64_t *out_index);
/* A uniformly random valid point: hetc_space_valid_at of a uniform n,
 * drawn with the xorshift state *rng (0 is replaced by a fixed seed).
 * UNSUPPORTED when the space has no valid point; the index's failure when
 * it cannot be built (see hetc_space_build_index). */
hetc_status_t hetc_space_sample_valid(const hetc_plugin_space_t *space, uint64_t *rng,
                                      int64_t *out_index);

/* ---- Valid points ---- */

/* Enumerates the constrained components now (otherwise the first call
 * that needs them does). Fails with INVALID_ARGUMENT naming the knobs when
 * a component's product exceeds HETC_SPACE_MAX_COMPONENT_POINTS, or
 * OUT_OF_MEMORY. Idempotent and thread-safe; the failure is kept and
 * returned again until the space changes. */
hetc_status_t hetc_space_build_index(const hetc_plugin_space_t *space);

/* Number of valid points; -1 when the index cannot be built. */
int64_t hetc_space_valid_count(const hetc_plugin_space_t *space);

/* The n-th valid point (0 <= n < valid_count): a fixed bijection onto the
 * valid indices. n is a mixed-radix number with one digit per free knob
 * (its candidate) and one per component (the rank of the component's
 * sub-assignment among its valid ones, ordered by the component's own
 * mixed-radix sub-index), digits ordered by their lowest knob, first
 * fastest. Without constraints valid_at(n) == n; in general it is not
 * increasing in n. */
hetc_status_t hetc_space_valid_at(const hetc_plugin_space_t *space, int64_t n,
                                  int64_t *out_index);

/* Inverse of hetc_space_valid_at; INVALID_ARGUMENT (naming the knobs of a
 * violated constraint) for an invalid point or an index outside the
 * space. */
hetc_status_t hetc_space_valid_rank(const hetc_plugin_space_t *space, int64_t index,
                                    int64_t *out_n);

/* A valid point that differs from `index` in exactly one knob: the knobs
 * are tried in a random order and, for the first knob that has any, one of
 * its other candidates that makes the point valid is chosen uniformly.
 * `index` itself need not be valid (then only a knob of the one violated
 * component can help). UNSUPPORTED when no such point exists. */
hetc_status_t hetc_space_random_neighbor(const hetc_plugin_space_t *space, int64_t index,
                                         uint64_t *rng, int64_t *out_index);

/* Candidate number of `knob` in `index`; -1 when either is out of range. */
int32_t hetc_space_knob_choice(const hetc_plugin_space_t *space, int64_t index, int32_t knob);
/* Index of the point taking candidate choices[k] of every knob k
 * (hetc_space_knob_count entries); INVALID_ARGUMENT naming the knob when a
 * choice is outside its candidates. */
hetc_status_t hetc_space_index_from_choices(const hetc_plugin_space_t *space,
                                            const int64_t *choices, int64_t *out_index);

/* A uniform random integer in [0, bound) (bound >= 1) from the xorshift
 * state *rng, without modulo bias. The generator every space and tuner
 * call shares. */
uint64_t hetc_space_random_below(uint64_t *rng, uint64_t bound);

/* ---- Inspecting and enlarging a space ---- */

/* Knob number of `name`, or -1. */
int32_t hetc_space_find_knob(const hetc_plugin_space_t *space, const char *name);
/* Values per candidate (a split's parts; 1 for other kinds). */
int32_t hetc_space_knob_width(const hetc_plugin_space_t *space, int32_t knob);
/* Candidate `choice`'s knob_width values; borrowed from the space, valid
 * until the knob's candidates change. */
const int64_t *hetc_space_knob_values(const hetc_plugin_space_t *space, int32_t knob,
                                      int64_t choice);
/* A split knob's extent and hetc_plugin_split_policy_t; 0 and -1 for other
 * kinds. */
int64_t hetc_space_knob_extent(const hetc_plugin_space_t *space, int32_t knob);
int32_t hetc_space_knob_policy(const hetc_plugin_space_t *space, int32_t knob);
/* 1 when the template marked the knob optional; *out_pinned (may be NULL)
 * says whether it is still pinned to its default. */
int hetc_space_knob_is_optional(const hetc_plugin_space_t *space, int32_t knob,
                                int *out_pinned);
int32_t hetc_space_constraint_count(const hetc_plugin_space_t *space);
/* The knobs a constraint names, in its order: writes up to
 * HETC_SPACE_MAX_KNOBS knob numbers into out_knobs, returns how many. */
int32_t hetc_space_constraint_knobs(const hetc_plugin_space_t *space, int32_t constraint,
                                    int32_t *out_knobs);

/* Gives an optional knob its full candidate list back (candidates added
 * while it was pinned stay, after the full list). A no-op for a knob that
 * is not pinned. INVALID_ARGUMENT when the space would exceed 2^63
 * points. */
hetc_status_t hetc_space_enable_knob(hetc_plugin_space_t *space, int32_t knob);
/* Appends candidates to a knob: num_candidates of them, each knob_width
 * values in `values` (borrowed). Candidates the knob already has are
 * ignored; *out_added (may be NULL) says how many were new. Existing
 * candidates keep their numbers and the default stays the same config,
 * but indices change (later knobs' strides grow). INVALID_ARGUMENT when
 * the space would exceed 2^63 points. */
hetc_status_t hetc_space_add_candidates(hetc_plugin_space_t *space, int32_t knob,
                                        const int64_t *values, int32_t num_candidates,
                                        int32_t *out_added);

/* Lower-case name of a kind ("split", "other", "reorder", "annotate"). */
const char *hetc_knob_kind_name(hetc_knob_kind_t kind);
/* Prints one line per knob ("  <n> <name>: <kind> len=<count> [<up to
 * max_values candidates>, ...]") and one per constraint, each line
 * starting with `indent`. */
hetc_status_t hetc_space_print(const hetc_plugin_space_t *space, const char *indent,
                               int32_t max_values, FILE *out);

/* The host services that build spaces (plugged into hetc_plugin_host_t). */
hetc_plugin_status_t hetc_space_define_split(hetc_plugin_space_t *space, const char *name,
                                             int64_t extent, int32_t num_parts, int32_t policy,
                                             int64_t max_factor, const int64_t *candidates,
                                             int32_t num_candidates);
hetc_plugin_status_t hetc_space_define_knob(hetc_plugin_space_t *space, const char *name,
                                            const int64_t *values, int32_t num_values);
hetc_plugin_status_t hetc_space_define_reorder(hetc_plugin_space_t *space, const char *name,
                                               int32_t num_axes, const int32_t *permutations,
                                               int32_t num_permutations);
hetc_plugin_status_t hetc_space_define_annotate(hetc_plugin_space_t *space, const char *name,
                                                const int64_t *choices, int32_t num_choices);
hetc_plugin_status_t hetc_space_set_default(hetc_plugin_space_t *space,
                                            const hetc_plugin_config_t *config);
hetc_plugin_status_t hetc_space_add_constraint(hetc_plugin_space_t *space,
                                               const char *const *knob_names,
                                               int32_t num_knob_names,
                                               hetc_plugin_constraint_fn_t fn,
                                               const void *user_data);
/* Since ABI minor 3: the constraint's data copied into the space (see
 * hetc_plugin_host_t.space_add_constraint_copy). */
hetc_plugin_status_t hetc_space_add_constraint_copy(hetc_plugin_space_t *space, const char *const *knob_names,
                                                    int32_t num_knob_names, hetc_plugin_constraint_fn_t fn,
                                                    const void *data, size_t size);
/* Since ABI minor 1: pins a knob to its default until enabled (see
 * hetc_plugin_host_t.space_mark_optional). */
hetc_plugin_status_t hetc_space_mark_optional(hetc_plugin_space_t *space, const char *knob_name);
const hetc_plugin_knob_value_t *hetc_config_find(const hetc_plugin_config_t *config,
                                                 const char *name);

#endif /* HETC_DRIVER_SPACE_SPACE_H_ */
