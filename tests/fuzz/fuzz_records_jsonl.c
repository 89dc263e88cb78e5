/* libFuzzer target for the JSON Lines records importer
 * (driver/records/records_jsonl.h, api/records-format.md, "JSON Lines"):
 * arbitrary bytes as a records file, read line by line as `hetc records
 * import` reads it, and the first line alone as hetc_record_from_jsonl
 * parses one.
 *
 * The reader must never crash, leak or read out of bounds; a rejection must
 * be INVALID_ARGUMENT starting with "fuzz.jsonl:" (the file and the line)
 * or out of memory. Every record accepted must be one the store takes
 * (hetc_record_validate) and must survive export: its line (what `hetc
 * records export` writes) is valid UTF-8 on one line, reads back, and that
 * record writes the same line again, field for field the same record. */
#define _GNU_SOURCE /* fmemopen */

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/json_input.h"
#include "records/json_text.h"
#include "records/record.h"
#include "records/records_jsonl.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check(int ok, const char *what, const char *detail) {
  if (ok) return;
  fprintf(stderr, "fuzz_records_jsonl: %s: %s\n", what, detail ? detail : "");
  abort();
}

static int same_string(const char *a, const char *b) { return (!a && !b) || (a && b && !strcmp(a, b)); }

/* Bit for bit: export must lose nothing. */
static int same_record(const hetc_record_t *a, const hetc_record_t *b) {
  int same = same_string(a->target, b->target) && same_string(a->plugin_version, b->plugin_version) &&
             same_string(a->device_kind, b->device_kind) &&
             same_string(a->device_fingerprint, b->device_fingerprint) &&
             same_string(a->template_name, b->template_name) && a->template_version == b->template_version &&
             same_string(a->workload_key, b->workload_key) && a->config_index == b->config_index &&
             same_string(a->config_json, b->config_json) && a->num_costs == b->num_costs && a->error == b->error &&
             same_string(a->error_message, b->error_message) &&
             !memcmp(&a->build_seconds, &b->build_seconds, sizeof(double)) &&
             !memcmp(&a->total_seconds, &b->total_seconds, sizeof(double)) && a->timestamp == b->timestamp &&
             same_string(a->hetc_version, b->hetc_version);
  for (int32_t c = 0; same && c < a->num_costs; ++c) same = !memcmp(&a->costs[c], &b->costs[c], sizeof(double));
  return same;
}

static void check_round_trip(const hetc_record_t *record) {
  hetc_status_t status = hetc_record_validate(record);
  check(!status, "an accepted record breaks the store's rules", hetc_status_message(status));
  char *line = NULL;
  status = hetc_record_to_jsonl(record, &line);
  check(!status, "an accepted record does not export", hetc_status_message(status));
  check(hetc_utf8_valid(line, strlen(line), NULL), "an exported line is not UTF-8", line);
  check(!strchr(line, '\n') && !strchr(line, '\r'), "an exported line spans lines", line);
  hetc_record_t back;
  status = hetc_record_from_jsonl(line, &back);
  check(!status, "an exported line does not import", hetc_status_message(status));
  char *again = NULL;
  status = hetc_record_to_jsonl(&back, &again);
  check(!status, "a re-imported record does not export", hetc_status_message(status));
  check(!strcmp(line, again), "export -> import -> export differs", again);
  /* The canonical config is the one spelling, so the imported record and
   * the one read back agree exactly once both are canonical. */
  char *canonical = NULL;
  status = hetc_record_config_canonical(record->config_json, &canonical);
  check(!status, "an accepted config is not canonical", hetc_status_message(status));
  hetc_record_t expected = *record;
  expected.config_json = canonical;
  check(same_record(&expected, &back), "a field changed on the way through export", line);
  free(canonical);
  hetc_record_clear(&back);
  free(line);
  free(again);
}

static hetc_status_t on_record(void *user, const hetc_record_t *record, int64_t line) {
  (void)line;
  ++*(int64_t *)user;
  check_round_trip(record);
  return NULL;
}

static void check_rejection(hetc_status_t status, const char *prefix) {
  if (!status) return;
  const hetc_status_code_t code = hetc_status_code(status);
  check(code == HETC_STATUS_OUT_OF_MEMORY ||
            (code == HETC_STATUS_INVALID_ARGUMENT && !strncmp(hetc_status_message(status), prefix, strlen(prefix))),
        "a rejection that does not say where", hetc_status_message(status));
  hetc_status_free(status);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size == 0) return 0;
  /* The whole input as a file. */
  FILE *file = fmemopen((void *)data, size, "r");
  check(file != NULL, "fmemopen failed", "");
  int64_t seen = 0, records = -1;
  hetc_status_t status = hetc_records_read_jsonl(file, "fuzz.jsonl", on_record, &seen, &records);
  fclose(file);
  check(status || records == seen, "a file accepted without its records handed over", "");
  check_rejection(status, "fuzz.jsonl:");

  /* Its first line alone, as one record. */
  size_t length = 0;
  while (length < size && data[length] != '\n') ++length;
  char *line = malloc(length + 1);
  check(line != NULL, "out of memory", "");
  memcpy(line, data, length);
  line[length] = '\0';
  hetc_record_t record;
  status = hetc_record_from_jsonl(line, &record);
  if (!status) {
    check_round_trip(&record);
    hetc_record_clear(&record);
  } else {
    const hetc_status_code_t code = hetc_status_code(status);
    check(code == HETC_STATUS_INVALID_ARGUMENT || code == HETC_STATUS_OUT_OF_MEMORY, "a line refused oddly",
          hetc_status_message(status));
    hetc_status_free(status);
  }
  free(line);
  return 0;
}
