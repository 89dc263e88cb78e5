/* driver/space/space_override.h -- users' JSON overrides of template
 * spaces (api/space-overrides.md): enable knobs a template marked optional
 * and add candidate values to knobs, without recompiling the plugin. */
#ifndef HETC_DRIVER_SPACE_SPACE_OVERRIDE_H_
#define HETC_DRIVER_SPACE_SPACE_OVERRIDE_H_

#include <stddef.h>
#include <stdint.h>

#include "common/status.h"

typedef struct hetc_space_overrides_t hetc_space_overrides_t;

/* Reads and checks an overrides file. A malformed file gives
 * INVALID_ARGUMENT naming the file and the place, e.g.
 * "overrides.json: templates.cpu_conv2d_nchwc.add.tile_oc[2]: expected an
 * integer"; an unreadable one IO_ERROR. *out_overrides is owned by the
 * caller and released with hetc_space_overrides_free; it is immutable and
 * may be shared by threads. */
hetc_status_t hetc_space_overrides_load(const char *path, hetc_space_overrides_t **out_overrides);
/* The same from text in memory (`length` bytes, borrowed); display_name
 * stands for the file in messages. */
hetc_status_t hetc_space_overrides_parse(const char *text, size_t length,
                                         const char *display_name,
                                         hetc_space_overrides_t **out_overrides);
void hetc_space_overrides_free(hetc_space_overrides_t *overrides);

/* Checks that every template the overrides name is among `names` (the
 * templates `backend` offers for a workload); INVALID_ARGUMENT naming the
 * first that is not. */
hetc_status_t hetc_space_overrides_check_templates(const hetc_space_overrides_t *overrides,
                                                   const char *backend,
                                                   const char *const *names, int32_t count);

/* Applies the overrides of `template_name` (none: nothing happens) to the
 * space its template_define_space just filled: first the enabled optional
 * knobs get their full candidate lists back (enabling a knob that is not
 * pinned does nothing), then the added candidates are appended (those the
 * knob has are ignored). Unknown knobs and values of the wrong shape give
 * INVALID_ARGUMENT naming the file and the place. */
hetc_status_t hetc_space_overrides_apply(const hetc_space_overrides_t *overrides,
                                         const char *template_name, hetc_plugin_space_t *space);

#endif /* HETC_DRIVER_SPACE_SPACE_OVERRIDE_H_ */
