/* driver/records/record.h -- one tuning measurement, as the records store,
 * the measurer and the tuners all see it (api/records-format.md). */
#ifndef HETC_DRIVER_RECORDS_RECORD_H_
#define HETC_DRIVER_RECORDS_RECORD_H_

#include <stdint.h>

#include "common/status.h"
#include "hetc/plugin.h"

/* hetc_record_error_t, hetc_record_error_name, hetc_record_t and
 * hetc_record_median_cost are public (hetc/hetc.h). */
#define HETC_RECORD_ERROR_COUNT 10

/* The code for a name; -1 when the name is not one of them. */
int32_t hetc_record_error_from_name(const char *name);

/* Frees the strings and zeroes the record. */
void hetc_record_clear(hetc_record_t *record);
/* Deep copy into *out (cleared first by the caller or zeroed). */
hetc_status_t hetc_record_copy(const hetc_record_t *record, hetc_record_t *out);

/* The device_kind a record keeps for `device`: "cpu", "gpu" or
 * "accelerator" ("" for NULL). Static string. */
const char *hetc_record_device_kind(const hetc_plugin_device_t *device);

/* ---- Helpers shared by the store and the JSON Lines importer. ---- */

/* Integers in records files and config texts must be exactly representable
 * as JSON numbers read into doubles, as every common JSON library reads
 * them: |value| <= 2^53. */
#define HETC_RECORD_MAX_JSON_INTEGER ((int64_t)1 << 53)
/* A config's values are below 2^53 (|value| <= 2^53 - 1), the range
 * hetc_config_from_json reads back, and a config has at most
 * HETC_RECORD_MAX_KNOBS knobs of 1 to HETC_RECORD_MAX_KNOB_VALUES values
 * each: a config the store keeps is one every reader of it can use. */
#define HETC_RECORD_MAX_CONFIG_VALUE (((int64_t)1 << 53) - 1)
#define HETC_RECORD_MAX_KNOBS 64
#define HETC_RECORD_MAX_KNOB_VALUES 8

/* 1 when `kind` is one of the device kinds a record may name ("cpu", "gpu",
 * "accelerator"). */
int hetc_record_device_kind_known(const char *kind);

/* Checks what every stored record satisfies; INVALID_ARGUMENT with a
 * message naming the field otherwise:
 *  - target, device_fingerprint, template_name and workload_key are
 *    non-empty; plugin_version, config_json and hetc_version are non-NULL
 *    (may be empty); error_message may be NULL; every string is
 *    well-formed UTF-8 (hetc_utf8_valid);
 *  - device_kind is "cpu", "gpu" or "accelerator";
 *  - error is one of the codes; 0 <= num_costs <= HETC_RECORD_MAX_COSTS,
 *    and num_costs is 0 unless ok;
 *  - costs, build_seconds and total_seconds are finite and >= 0;
 *  - |config_index| <= HETC_RECORD_MAX_JSON_INTEGER;
 *  - config_json is accepted by hetc_record_config_canonical. */
hetc_status_t hetc_record_validate(const hetc_record_t *record);

/* The one spelling of a config that the store keeps (so that two equal
 * configs are equal texts): `{"knob":[v,v],"other":[v]}` with no
 * whitespace, members in their given order, integers in decimal. The input
 * must be a JSON object of at most HETC_RECORD_MAX_KNOBS members with
 * distinct names, each an array of 1 to HETC_RECORD_MAX_KNOB_VALUES
 * integers within HETC_RECORD_MAX_CONFIG_VALUE.
 * *out_canonical is owned by the caller (free). INVALID_ARGUMENT with a
 * message starting "config_json: " otherwise. */
hetc_status_t hetc_record_config_canonical(const char *config_json, char **out_canonical);

#endif /* HETC_DRIVER_RECORDS_RECORD_H_ */
