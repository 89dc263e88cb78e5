/* driver/records/features.h -- one candidate as the cost model sees it
 * (README.md, "Tuning").
 *
 * A row is HETC_FEATURE_COUNT floats in the shared schema of
 * api/hetc/plugin.h (hetc_plugin_feature_t; api/feature-schema.md lists
 * them). The plugin describes its loop nest (indices below
 * HETC_FEATURE_PLUGIN_END); this module adds the workload, device and
 * derived indices itself, so that rows of every plugin agree on them and
 * one model can learn across plugins and devices. NaN marks a missing
 * feature; rows are never padded or shortened. */
#ifndef HETC_DRIVER_RECORDS_FEATURES_H_
#define HETC_DRIVER_RECORDS_FEATURES_H_

#include <stdint.h>

#include "common/status.h"

/* Stable name of feature `index` ("reg_spatial", "wl_flops", ...): a
 * static string, unique, lower case, usable as a column name. NULL outside
 * [0, HETC_FEATURE_COUNT). */
const char *hetc_feature_name(int32_t index);

/* 1 when the plugin writes feature `index`, 0 when the driver does. */
int hetc_feature_is_plugin_owned(int32_t index);

/* Fills out[0 .. HETC_FEATURE_COUNT) for one candidate: the plugin's
 * indices through plugin->features (NaN where it says nothing, returns
 * UNSUPPORTED, or is a minor-0 plugin that predates the schema), then the
 * workload, device and derived indices by the driver. config NULL means the
 * template's default. Cheap (no code generation: the search calls it for
 * thousands of candidates a second) and thread-safe as far as the plugin's
 * features() is (the ABI requires it to be).
 *
 * Returns NULL, or the plugin's failure other than UNSUPPORTED (e.g.
 * INVALID_ARGUMENT for a config outside the space), or INVALID_ARGUMENT for
 * a null argument or a device the plugin does not have. Whenever out is
 * non-NULL it holds a complete row afterwards, with the plugin's indices
 * NaN on failure. */
hetc_status_t hetc_features_extract(const hetc_plugin_t *plugin,
                                    const hetc_plugin_instance_t *instance,
                                    int32_t device_index,
                                    const hetc_plugin_workload_t *workload,
                                    int32_t template_index,
                                    const hetc_plugin_config_t *config, float *out);

#endif /* HETC_DRIVER_RECORDS_FEATURES_H_ */
