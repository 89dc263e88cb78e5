#include "records/config_json.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "records/json_text.h"
#include "records/record.h"

_Static_assert(HETC_CONFIG_JSON_MAX_KNOBS == HETC_RECORD_MAX_KNOBS &&
                   HETC_CONFIG_JSON_MAX_VALUES == HETC_RECORD_MAX_KNOB_VALUES,
               "a config the records store keeps must read back");

char *hetc_config_to_json(const hetc_plugin_config_t *config) {
  hetc_json_text_t text = {0};
  hetc_json_text_raw(&text, "{");
  for (int32_t k = 0; config && k < config->num_knobs; ++k) {
    const hetc_plugin_knob_value_t *knob = &config->knobs[k];
    if (k) hetc_json_text_raw(&text, ", ");
    hetc_json_text_string(&text, knob->name);
    hetc_json_text_raw(&text, ": [");
    for (int32_t v = 0; v < knob->count; ++v) {
      if (v) hetc_json_text_raw(&text, ", ");
      hetc_json_text_int(&text, knob->values[v]);
    }
    hetc_json_text_raw(&text, "]");
  }
  hetc_json_text_raw(&text, "}");
  return hetc_json_text_take(&text);
}

void hetc_config_json_free(hetc_config_json_t *c) {
  for (int32_t k = 0; k < HETC_CONFIG_JSON_MAX_KNOBS; ++k) free(c->names[k]);
  memset(c, 0, sizeof(*c));
}

hetc_status_t hetc_config_from_json(const char *text, hetc_config_json_t *out) {
  memset(out, 0, sizeof(*out));
  out->config.knobs = out->knobs;
  cJSON *root = cJSON_Parse(text ? text : "");
  hetc_status_t status = NULL;
  if (!cJSON_IsObject(root)) {
    status = hetc_status_new(HETC_STATUS_INVALID_ARGUMENT, "config %s is not a JSON object", text ? text : "(none)");
  }
  const cJSON *knob = NULL;
  const cJSON *object = status ? NULL : root;
  int32_t n = 0;
  cJSON_ArrayForEach(knob, object) {
    int32_t count = cJSON_GetArraySize(knob);
    if (n == HETC_CONFIG_JSON_MAX_KNOBS || !cJSON_IsArray(knob) || count < 1 ||
        count > HETC_CONFIG_JSON_MAX_VALUES) {
      status = hetc_status_new(HETC_STATUS_INVALID_ARGUMENT,
                               "config knob \"%s\": expected an array of 1 to %d integers", knob->string,
                               HETC_CONFIG_JSON_MAX_VALUES);
      break;
    }
    for (int32_t v = 0; v < count && !status; ++v) {
      const cJSON *value = cJSON_GetArrayItem(knob, v);
      double d = cJSON_IsNumber(value) ? value->valuedouble : NAN;
      /* The store's bound (record.h), so that every config it keeps reads back. */
      if (!(d == floor(d) && fabs(d) <= (double)HETC_RECORD_MAX_CONFIG_VALUE))
        status = hetc_status_new(HETC_STATUS_INVALID_ARGUMENT,
                                 "config knob \"%s\"[%d]: expected an integer below 2^53 in magnitude", knob->string, v);
      else
        out->values[n][v] = (int64_t)d;
    }
    if (status) break;
    if (!(out->names[n] = strdup(knob->string))) {
      status = hetc_status_new(HETC_STATUS_OUT_OF_MEMORY, "config");
      break;
    }
    out->knobs[n] = (hetc_plugin_knob_value_t){out->names[n], count, out->values[n]};
    out->config.num_knobs = ++n;
  }
  cJSON_Delete(root);
  if (status) hetc_config_json_free(out);
  return status;
}
