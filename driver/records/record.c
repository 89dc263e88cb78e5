#include "records/record.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "common/clock.h"
#include "common/json_input.h"
#include "records/json_text.h"

/* Indexed by hetc_record_error_t; the names are part of the records format
 * (api/records-format.md), so they never change. */
static const char *const error_names[HETC_RECORD_ERROR_COUNT] = {
    "ok",           "instantiation", "compile_host", "compile_device", "device_limits",
    "runtime_device", "wrong_answer", "build_timeout", "run_timeout",  "unknown",
};

const char *hetc_record_error_name(hetc_record_error_t error) {
  if ((int)error < 0 || (int)error >= HETC_RECORD_ERROR_COUNT) return "unknown";
  return error_names[error];
}

int32_t hetc_record_error_from_name(const char *name) {
  if (!name) return -1;
  for (int32_t e = 0; e < HETC_RECORD_ERROR_COUNT; ++e) {
    if (!strcmp(error_names[e], name)) return e;
  }
  return -1;
}

void hetc_record_clear(hetc_record_t *record) {
  if (!record) return;
  free(record->target);
  free(record->plugin_version);
  free(record->device_kind);
  free(record->device_fingerprint);
  free(record->template_name);
  free(record->workload_key);
  free(record->config_json);
  free(record->error_message);
  free(record->hetc_version);
  memset(record, 0, sizeof(*record));
}

/* strdup that keeps NULL as NULL; sets *failed when a copy is lost. */
static char *copy_string(const char *text, int *failed) {
  if (!text) return NULL;
  size_t length = strlen(text);
  char *copy = malloc(length + 1);
  if (!copy) {
    *failed = 1;
    return NULL;
  }
  memcpy(copy, text, length + 1);
  return copy;
}

hetc_status_t hetc_record_copy(const hetc_record_t *record, hetc_record_t *out) {
  int failed = 0;
  *out = *record; /* numbers and costs; every string is replaced below */
  out->target = copy_string(record->target, &failed);
  out->plugin_version = copy_string(record->plugin_version, &failed);
  out->device_kind = copy_string(record->device_kind, &failed);
  out->device_fingerprint = copy_string(record->device_fingerprint, &failed);
  out->template_name = copy_string(record->template_name, &failed);
  out->workload_key = copy_string(record->workload_key, &failed);
  out->config_json = copy_string(record->config_json, &failed);
  out->error_message = copy_string(record->error_message, &failed);
  out->hetc_version = copy_string(record->hetc_version, &failed);
  if (failed) {
    hetc_record_clear(out);
    return hetc_status_new(HETC_STATUS_OUT_OF_MEMORY, "copying a tuning record");
  }
  return NULL;
}

double hetc_record_median_cost(const hetc_record_t *record) {
  if (record->error != HETC_RECORD_OK || record->num_costs <= 0 ||
      record->num_costs > HETC_RECORD_MAX_COSTS) {
    return INFINITY;
  }
  double sorted[HETC_RECORD_MAX_COSTS];
  int32_t n = record->num_costs;
  memcpy(sorted, record->costs, (size_t)n * sizeof(double));
  hetc_sort_doubles(sorted, (size_t)n);
  return n % 2 ? sorted[n / 2] : 0.5 * (sorted[n / 2 - 1] + sorted[n / 2]);
}

static hetc_status_t invalid(const char *message) {
  return hetc_status_new(HETC_STATUS_INVALID_ARGUMENT, "%s", message);
}

static int finite_non_negative(double value) { return isfinite(value) && value >= 0; }

/* Records travel as JSON, which is UTF-8 throughout: a string that is not
 * would be exported as a line no reader accepts. */
static hetc_status_t check_utf8(const char *name, const char *value) {
  size_t offset = 0;
  if (hetc_utf8_valid(value, strlen(value), &offset)) return NULL;
  return hetc_status_new(HETC_STATUS_INVALID_ARGUMENT, "%s is not valid UTF-8 (byte 0x%02X at offset %zu)", name,
                         (unsigned)(unsigned char)value[offset], offset);
}

int hetc_record_device_kind_known(const char *kind) {
  return kind && (!strcmp(kind, "cpu") || !strcmp(kind, "gpu") || !strcmp(kind, "accelerator"));
}

hetc_status_t hetc_record_validate(const hetc_record_t *record) {
  const struct {
    const char *name;
    const char *value;
    int may_be_empty;
  } strings[] = {
      {"target", record->target, 0},
      {"plugin_version", record->plugin_version, 1},
      {"device_kind", record->device_kind, 1},
      {"device_fingerprint", record->device_fingerprint, 0},
      {"template_name", record->template_name, 0},
      {"workload_key", record->workload_key, 0},
      {"config_json", record->config_json, 1},
      {"hetc_version", record->hetc_version, 1},
  };
  for (size_t s = 0; s < sizeof(strings) / sizeof(strings[0]); ++s) {
    if (!strings[s].value) {
      return hetc_status_new(HETC_STATUS_INVALID_ARGUMENT, "%s is missing (NULL)", strings[s].name);
    }
    if (!strings[s].may_be_empty && !strings[s].value[0]) {
      return hetc_status_new(HETC_STATUS_INVALID_ARGUMENT, "%s is empty", strings[s].name);
    }
    HETC_RETURN_IF_ERROR(check_utf8(strings[s].name, strings[s].value));
  }
  if (record->error_message) HETC_RETURN_IF_ERROR(check_utf8("error_message", record->error_message));
  if (!hetc_record_device_kind_known(record->device_kind)) {
    return hetc_status_new(HETC_STATUS_INVALID_ARGUMENT,
                           "device_kind \"%.40s\" is not one of cpu, gpu, accelerator",
                           record->device_kind);
  }
  if ((int)record->error < 0 || (int)record->error >= HETC_RECORD_ERROR_COUNT) {
    return hetc_status_new(HETC_STATUS_INVALID_ARGUMENT, "error %d is not one of the codes 0..%d",
                           (int)record->error, HETC_RECORD_ERROR_COUNT - 1);
  }
  if (record->num_costs < 0 || record->num_costs > HETC_RECORD_MAX_COSTS) {
    return hetc_status_new(HETC_STATUS_INVALID_ARGUMENT, "num_costs %d is outside 0..%d",
                           record->num_costs, HETC_RECORD_MAX_COSTS);
  }
  if (record->error != HETC_RECORD_OK && record->num_costs != 0) {
    return hetc_status_new(HETC_STATUS_INVALID_ARGUMENT,
                           "a %s record has %d costs (only ok records have costs)",
                           hetc_record_error_name(record->error), record->num_costs);
  }
  for (int32_t c = 0; c < record->num_costs; ++c) {
    if (!finite_non_negative(record->costs[c])) {
      return hetc_status_new(HETC_STATUS_INVALID_ARGUMENT,
                             "costs[%d] is %g (seconds must be finite and >= 0)", c,
                             record->costs[c]);
    }
  }
  if (!finite_non_negative(record->build_seconds)) {
    return invalid("build_seconds must be finite and >= 0");
  }
  if (!finite_non_negative(record->total_seconds)) {
    return invalid("total_seconds must be finite and >= 0");
  }
  if (record->config_index > HETC_RECORD_MAX_JSON_INTEGER ||
      record->config_index < -HETC_RECORD_MAX_JSON_INTEGER) {
    return hetc_status_new(HETC_STATUS_INVALID_ARGUMENT,
                           "config_index %lld is beyond 2^53, which JSON cannot carry exactly",
                           (long long)record->config_index);
  }
  char *canonical = NULL;
  HETC_RETURN_IF_ERROR(hetc_record_config_canonical(record->config_json, &canonical));
  free(canonical);
  return NULL;
}

/* The integer a cJSON number holds, when it is one a config may hold. */
static int json_config_integer(const cJSON *item, int64_t *out_value) {
  if (!cJSON_IsNumber(item)) return 0;
  double value = item->valuedouble;
  if (value != floor(value) || fabs(value) > (double)HETC_RECORD_MAX_CONFIG_VALUE) return 0;
  *out_value = (int64_t)value;
  return 1;
}

hetc_status_t hetc_record_config_canonical(const char *config_json, char **out_canonical) {
  *out_canonical = NULL;
  cJSON *root = config_json ? cJSON_ParseWithOpts(config_json, NULL, 1) : NULL;
  hetc_status_t status = NULL;
  hetc_json_text_t text = {0};
  if (!cJSON_IsObject(root)) {
    status = invalid("config_json: expected a JSON object {\"knob\": [values], ...}");
    goto done;
  }
  if (cJSON_GetArraySize(root) > HETC_RECORD_MAX_KNOBS) {
    status = hetc_status_new(HETC_STATUS_INVALID_ARGUMENT, "config_json: %d knobs, more than the %d a config may have",
                             cJSON_GetArraySize(root), HETC_RECORD_MAX_KNOBS);
    goto done;
  }
  hetc_json_text_raw(&text, "{");
  for (const cJSON *knob = root->child; knob; knob = knob->next) {
    for (const cJSON *earlier = root->child; earlier != knob; earlier = earlier->next) {
      if (!strcmp(earlier->string, knob->string)) {
        status = hetc_status_new(HETC_STATUS_INVALID_ARGUMENT,
                                 "config_json: knob \"%s\" appears twice", knob->string);
        goto done;
      }
    }
    if (!cJSON_IsArray(knob) || !knob->child || cJSON_GetArraySize(knob) > HETC_RECORD_MAX_KNOB_VALUES) {
      status = hetc_status_new(HETC_STATUS_INVALID_ARGUMENT,
                               "config_json: knob \"%s\": expected an array of 1 to %d integers", knob->string,
                               HETC_RECORD_MAX_KNOB_VALUES);
      goto done;
    }
    if (knob != root->child) hetc_json_text_raw(&text, ",");
    hetc_json_text_string(&text, knob->string);
    hetc_json_text_raw(&text, ":[");
    for (const cJSON *value = knob->child; value; value = value->next) {
      int64_t integer = 0;
      if (!json_config_integer(value, &integer)) {
        status = hetc_status_new(HETC_STATUS_INVALID_ARGUMENT,
                                 "config_json: knob \"%s\": values must be integers below 2^53 in magnitude",
                                 knob->string);
        goto done;
      }
      if (value != knob->child) hetc_json_text_raw(&text, ",");
      hetc_json_text_int(&text, integer);
    }
    hetc_json_text_raw(&text, "]");
  }
  hetc_json_text_raw(&text, "}");
  *out_canonical = hetc_json_text_take(&text);
  if (!*out_canonical) status = hetc_status_new(HETC_STATUS_OUT_OF_MEMORY, "config_json");
done:
  hetc_json_text_free(&text);
  cJSON_Delete(root);
  return status;
}

const char *hetc_record_device_kind(const hetc_plugin_device_t *device) {
  if (!device) return "";
  switch (device->kind) {
    case HETC_PLUGIN_DEVICE_CPU: return "cpu";
    case HETC_PLUGIN_DEVICE_GPU: return "gpu";
    default: return "accelerator";
  }
}
