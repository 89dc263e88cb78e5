/* driver/compile/config_choice.h -- which config each tunable kernel gets.
 *
 * api/records-format.md: the best record for this workload on this device;
 * else the best record of the nearest tuned workload on a device of the
 * same kind (when its config fits this workload's space); else the config
 * the cost model saved beside the store predicts best; else the template's
 * default. Each kernel's source is reported. */
#ifndef HETC_DRIVER_COMPILE_CONFIG_CHOICE_H_
#define HETC_DRIVER_COMPILE_CONFIG_CHOICE_H_

#include "hetc/plugin.h"
#include "records/config_json.h"

typedef enum hetc_config_source_t {
  HETC_CONFIG_DEFAULT,
  HETC_CONFIG_TUNED,     /* a record of this workload and device */
  HETC_CONFIG_NEAREST,   /* a record of the nearest tuned workload */
  HETC_CONFIG_PREDICTED, /* the cost model's best guess */
} hetc_config_source_t;

/* "default", "tuned", "nearest", "predicted". */
const char *hetc_config_source_name(hetc_config_source_t source);

typedef struct hetc_config_chooser_t hetc_config_chooser_t;

/* Opens the records at `records_path`, else the per-user store when one
 * exists (compiling never creates a store); *out_chooser is NULL when there
 * is none, and every kernel then gets its default. Released with
 * hetc_config_chooser_free. */
hetc_status_t hetc_config_chooser_open(const char *records_path, hetc_config_chooser_t **out_chooser);
void hetc_config_chooser_free(hetc_config_chooser_t *chooser);
/* The store the chooser reads (borrowed), NULL for a NULL chooser. */
struct hetc_records_t *hetc_config_chooser_records(hetc_config_chooser_t *chooser);

/* The config for `workload` on the plugin's device: on success with a
 * source other than DEFAULT, *out_template and *out_config (released with
 * hetc_config_json_free) say what to build. A NULL chooser or an op without
 * knobs gives DEFAULT. */
hetc_status_t hetc_config_choose(hetc_config_chooser_t *chooser, const hetc_plugin_t *plugin,
                                 hetc_plugin_instance_t *instance, int32_t device_index,
                                 const hetc_plugin_workload_t *workload, int32_t *out_template,
                                 hetc_config_json_t *out_config, hetc_config_source_t *out_source);

/* As hetc_config_choose, restricted to template `template_index`: the
 * record tuned for this workload and device, else the nearest tuned
 * workload's that fits; never a prediction (the cost model ranks configs
 * across templates). A source other than DEFAULT leaves *out_config to be
 * released with hetc_config_json_free. Used by `hetc compare`, which times
 * every template. */
hetc_status_t hetc_config_choose_template(hetc_config_chooser_t *chooser, const hetc_plugin_t *plugin,
                                          hetc_plugin_instance_t *instance, int32_t device_index,
                                          const hetc_plugin_workload_t *workload, int32_t template_index,
                                          hetc_config_json_t *out_config, hetc_config_source_t *out_source);

/* One way to build a kernel: a template and a config of its space. */
typedef struct hetc_kernel_candidate_t {
  int32_t template_index;
  char *config_json;           /* owned; NULL: the template's default config */
  hetc_config_source_t source; /* where the config comes from */
  double recorded_seconds;     /* the record's median, 0 for others */
} hetc_kernel_candidate_t;

/* What graph-level selection weighs for `workload` on the plugin's device
 * (README.md, "Tuning"): every template's default config, and per template
 * the `per_template` best distinct configs tuned for this workload and
 * device (else the best of the nearest tuned workload, when it fits), and
 * the cost model's prediction; duplicates removed, defaults first. An op
 * without knobs has one candidate, template 0's default; with a NULL
 * chooser (no records) a tunable op has every template's default.
 * *out_candidates is freed with hetc_kernel_candidates_free. */
hetc_status_t hetc_config_candidates(hetc_config_chooser_t *chooser, const hetc_plugin_t *plugin,
                                     hetc_plugin_instance_t *instance, int32_t device_index,
                                     const hetc_plugin_workload_t *workload, int32_t per_template,
                                     hetc_kernel_candidate_t **out_candidates, int32_t *out_count);
void hetc_kernel_candidates_free(hetc_kernel_candidate_t *candidates, int32_t count);

#endif /* HETC_DRIVER_COMPILE_CONFIG_CHOICE_H_ */
