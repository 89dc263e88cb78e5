/* driver/records/config_json.h -- a config's explicit entities as the JSON
 * text records keep: {"knob": [v, ...], ...} in the space's knob order. */
#ifndef HETC_DRIVER_RECORDS_CONFIG_JSON_H_
#define HETC_DRIVER_RECORDS_CONFIG_JSON_H_

#include "common/status.h"
#include "hetc/plugin.h"

/* The same limits as the records store's (HETC_RECORD_MAX_KNOBS, ...). */
#define HETC_CONFIG_JSON_MAX_KNOBS 64
#define HETC_CONFIG_JSON_MAX_VALUES 8

/* The text for `config` (NULL or no knobs: "{}"); owned by the caller
 * (free()); NULL when out of memory. */
char *hetc_config_to_json(const hetc_plugin_config_t *config);

/* A config parsed from that text, with its own storage: `config` points
 * into the struct, so keep it alive (and unmoved) while the config is
 * used; release with hetc_config_json_free. */
typedef struct hetc_config_json_t {
  hetc_plugin_config_t config;
  hetc_plugin_knob_value_t knobs[HETC_CONFIG_JSON_MAX_KNOBS];
  char *names[HETC_CONFIG_JSON_MAX_KNOBS];
  int64_t values[HETC_CONFIG_JSON_MAX_KNOBS][HETC_CONFIG_JSON_MAX_VALUES];
} hetc_config_json_t;

/* INVALID_ARGUMENT saying what is wrong when the text is not such an
 * object of integer arrays. */
hetc_status_t hetc_config_from_json(const char *text, hetc_config_json_t *out_config);
void hetc_config_json_free(hetc_config_json_t *config);

#endif /* HETC_DRIVER_RECORDS_CONFIG_JSON_H_ */
