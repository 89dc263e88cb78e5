/* driver/space/task_space.h -- a task's whole space: the union over every
 * template a backend offers for a workload (README.md, "Tuning").
 *
 * The template is the most significant "knob": template t's points occupy
 * [offset_t, offset_t + size_t) of one global int64 index, and the local
 * index within is the template space's own. t is the plugin's template
 * index, so a tuner builds global point g with
 * build(..., template_index = t, config of local). A template whose
 * template_define_space fails (or whose space cannot be indexed) is kept
 * with size 0, a NULL space and its reason, so indices still match.
 *
 * A task space is immutable once created; every call but free may run
 * from several threads at once. */
#ifndef HETC_DRIVER_SPACE_TASK_SPACE_H_
#define HETC_DRIVER_SPACE_TASK_SPACE_H_

#include <stdint.h>
#include <stdio.h>

#include "common/status.h"
#include "space/space.h"
#include "space/space_override.h"

/* hetc_task_space_t, hetc_task_space_free and hetc_task_space_print are
 * public (hetc/hetc.h). */

/* Defines every template's space for `workload` on the device (workload
 * and overrides are borrowed for the call only; the instance must outlive
 * the task space, whose constraints call into the plugin), applies the
 * overrides (NULL: none) to the templates they name and indexes each
 * space. Fails with UNSUPPORTED when the backend has no template for the
 * workload or none of them could define a space, and with INVALID_ARGUMENT
 * when the overrides name a knob a template does not have (the message
 * names the file and the place). Templates the overrides name that this
 * workload does not offer are the caller's to check
 * (hetc_space_overrides_check_templates): one overrides file serves every
 * task of a model. *out_space is owned by the caller, released with
 * hetc_task_space_free. */
hetc_status_t hetc_task_space_create(const hetc_plugin_t *plugin, hetc_plugin_instance_t *instance,
                                     int32_t device_index, const hetc_plugin_workload_t *workload,
                                     const hetc_space_overrides_t *overrides /* NULL: none */,
                                     hetc_task_space_t **out_space);

/* Templates, skipped ones included (0 <= t < template_count). */
int32_t hetc_task_space_template_count(const hetc_task_space_t *space);
/* Borrowed; lives as long as the task space. */
const char *hetc_task_space_template_name(const hetc_task_space_t *space, int32_t t);
uint32_t hetc_task_space_template_version(const hetc_task_space_t *space, int32_t t);
/* Template t's space (borrowed, owned by the task space), or NULL when it
 * was skipped. */
const hetc_plugin_space_t *hetc_task_space_template_space(const hetc_task_space_t *space,
                                                          int32_t t);
/* Why template t was skipped (borrowed), or NULL. */
const char *hetc_task_space_template_error(const hetc_task_space_t *space, int32_t t);

/* All points of all templates, valid or not. */
int64_t hetc_task_space_size(const hetc_task_space_t *space);
int64_t hetc_task_space_valid_count(const hetc_task_space_t *space);

/* Template and local index of a global index; INVALID_ARGUMENT outside
 * [0, size). */
hetc_status_t hetc_task_space_locate(const hetc_task_space_t *space, int64_t global,
                                     int32_t *out_template, int64_t *out_local);
/* Global index of template t's local point; -1 when t or local is out of
 * range. */
int64_t hetc_task_space_global(const hetc_task_space_t *space, int32_t t, int64_t local);
/* Template 0's default point (the backend's untuned choice); the first
 * template that has a space when template 0 was skipped. */
hetc_status_t hetc_task_space_default(const hetc_task_space_t *space, int64_t *out_global);
/* 1 when the global point is inside the space and satisfies its
 * template's constraints. */
int hetc_task_space_is_valid(const hetc_task_space_t *space, int64_t global);
/* The n-th valid point (0 <= n < valid_count): template by template in
 * template order, within each by hetc_space_valid_at. */
hetc_status_t hetc_task_space_valid_at(const hetc_task_space_t *space, int64_t n,
                                       int64_t *out_global);
/* Uniform over all valid points of all templates, with the xorshift state
 * *rng; UNSUPPORTED when there are none. */
hetc_status_t hetc_task_space_sample_valid(const hetc_task_space_t *space, uint64_t *rng,
                                           int64_t *out_global);
/* A neighbour: with probability 1/(k+1), k the number of the template's
 * knobs that have more than one candidate, the template "knob" changes
 * instead, landing on another (uniformly chosen) template's default;
 * otherwise one knob changes within the template
 * (hetc_space_random_neighbor). Either falls back to the other when it has
 * nothing to offer; UNSUPPORTED when neither has. */
hetc_status_t hetc_task_space_random_neighbor(const hetc_task_space_t *space, int64_t global,
                                              uint64_t *rng, int64_t *out_global);
/* Template and config of a global point. out_config's view points into
 * itself and into the template space (see hetc_space_config_t). */
hetc_status_t hetc_task_space_config(const hetc_task_space_t *space, int64_t global,
                                     int32_t *out_template, hetc_space_config_t *out_config);

#endif /* HETC_DRIVER_SPACE_TASK_SPACE_H_ */
