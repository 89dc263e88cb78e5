/* driver/space/space.h -- knob spaces declared by templates.
 *
 * A template declares its knobs through the host's space_* services; the
 * space stores each knob's candidate entities and the constraints, and maps
 * a mixed-radix 64-bit index (first knob fastest) to a config and back.
 * hetc_plugin_space_t is the ABI's opaque name for this object. */
#ifndef HETC_DRIVER_SPACE_SPACE_H_
#define HETC_DRIVER_SPACE_SPACE_H_

#include <stdint.h>

#include "common/status.h"

#define HETC_SPACE_MAX_KNOBS 32
#define HETC_SPACE_MAX_PARTS 8

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
/* A uniformly random valid point, drawn with the xorshift state *rng;
 * UNSUPPORTED when no valid point was found in a bounded number of draws. */
hetc_status_t hetc_space_sample_valid(const hetc_plugin_space_t *space, uint64_t *rng,
                                      int64_t *out_index);

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
const hetc_plugin_knob_value_t *hetc_config_find(const hetc_plugin_config_t *config,
                                                 const char *name);

#endif /* HETC_DRIVER_SPACE_SPACE_H_ */
