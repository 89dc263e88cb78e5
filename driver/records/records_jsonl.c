#include "records/records_jsonl.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "common/fileio.h"
#include "common/json_input.h"
#include "records/json_text.h"

/* AutoTVM writes this cost for every failed measurement; so do we, and the
 * importer ignores a failed record's costs. */
#define FAILED_COST_TEXT "1000000000"

/* Names of the target-string options, in the order they are written. */
static const char *const option_names[] = {"device_kind", "fingerprint", "plugin_version"};
#define NUM_OPTIONS 3

/* ------------------------------------------------------------------------ */
/* Writing                                                                  */
/* ------------------------------------------------------------------------ */

/* Target-string values are separated by spaces, so a space (and anything
 * at or below it, DEL, and '%' itself) is written as %XX: a CPU
 * fingerprint such as "cpu:Intel(R) Xeon(R) ...:16c" stays one option. */
static void percent_escape(hetc_json_text_t *out, const char *value) {
  for (const unsigned char *p = (const unsigned char *)value; *p; ++p) {
    char piece[4];
    if (*p <= 0x20 || *p == '%' || *p == 0x7f) {
      snprintf(piece, sizeof(piece), "%%%02X", *p);
    } else {
      piece[0] = (char)*p;
      piece[1] = '\0';
    }
    hetc_json_text_raw(out, piece);
  }
}

static char *target_string(const hetc_record_t *r) {
  hetc_json_text_t text = {0};
  const char *values[NUM_OPTIONS] = {r->device_kind, r->device_fingerprint, r->plugin_version};
  percent_escape(&text, r->target);
  for (int o = 0; o < NUM_OPTIONS; ++o) {
    hetc_json_text_raw(&text, " -");
    hetc_json_text_raw(&text, option_names[o]);
    hetc_json_text_raw(&text, "=");
    percent_escape(&text, values[o]);
  }
  return hetc_json_text_take(&text);
}

/* [[knob, "ot", [values]], ...] from a canonical config text. hetc records
 * do not carry knob kinds, so every entity is AutoTVM's "ot" (other
 * option) holding the knob's value list verbatim. */
static int write_entities(hetc_json_text_t *line, const char *config) {
  cJSON *knobs = cJSON_Parse(config);
  if (!knobs) return 0;
  hetc_json_text_raw(line, "[");
  for (const cJSON *knob = knobs->child; knob; knob = knob->next) {
    if (knob != knobs->child) hetc_json_text_raw(line, ",");
    hetc_json_text_raw(line, "[");
    hetc_json_text_string(line, knob->string);
    hetc_json_text_raw(line, ",\"ot\",[");
    for (const cJSON *value = knob->child; value; value = value->next) {
      if (value != knob->child) hetc_json_text_raw(line, ",");
      /* Canonical configs hold integers within 2^53: exact in a double. */
      hetc_json_text_int(line, (int64_t)value->valuedouble);
    }
    hetc_json_text_raw(line, "]]");
  }
  hetc_json_text_raw(line, "]");
  cJSON_Delete(knobs);
  return 1;
}

hetc_status_t hetc_record_to_jsonl(const hetc_record_t *r, char **out_line) {
  *out_line = NULL;
  HETC_RETURN_IF_ERROR(hetc_record_validate(r));
  char *config = NULL;
  HETC_RETURN_IF_ERROR(hetc_record_config_canonical(r->config_json, &config));
  char *target = target_string(r);
  hetc_json_text_t line = {0};
  hetc_json_text_raw(&line, "{\"input\":[");
  hetc_json_text_string(&line, target ? target : "");
  hetc_json_text_raw(&line, ",");
  hetc_json_text_string(&line, r->template_name);
  hetc_json_text_raw(&line, ",[");
  hetc_json_text_string(&line, r->workload_key);
  hetc_json_text_raw(&line, ",");
  hetc_json_text_int(&line, r->template_version);
  hetc_json_text_raw(&line, "],{}],\"config\":{\"index\":");
  hetc_json_text_int(&line, r->config_index);
  hetc_json_text_raw(&line, ",\"code_hash\":null,\"entity\":");
  int entities_ok = write_entities(&line, config);
  hetc_json_text_raw(&line, "},\"result\":[[");
  if (r->error == HETC_RECORD_OK) {
    for (int32_t c = 0; c < r->num_costs; ++c) {
      if (c) hetc_json_text_raw(&line, ",");
      hetc_json_text_double(&line, r->costs[c]);
    }
  } else {
    hetc_json_text_raw(&line, FAILED_COST_TEXT);
  }
  hetc_json_text_raw(&line, "],");
  hetc_json_text_int(&line, r->error);
  hetc_json_text_raw(&line, ",");
  hetc_json_text_double(&line, r->total_seconds);
  hetc_json_text_raw(&line, ",");
  hetc_json_text_int(&line, r->timestamp);
  hetc_json_text_raw(&line, "],\"version\":" HETC_RECORDS_JSONL_VERSION ",\"hetc_version\":");
  hetc_json_text_string(&line, r->hetc_version);
  hetc_json_text_raw(&line, ",\"hetc_measure\":{\"build_seconds\":");
  hetc_json_text_double(&line, r->build_seconds);
  hetc_json_text_raw(&line, ",\"error_message\":");
  if (r->error_message) hetc_json_text_string(&line, r->error_message);
  else hetc_json_text_raw(&line, "null");
  hetc_json_text_raw(&line, "}}");
  *out_line = hetc_json_text_take(&line);
  int failed = !target || !entities_ok || !*out_line;
  free(target);
  free(config);
  if (failed) {
    free(*out_line);
    *out_line = NULL;
    return hetc_status_new(HETC_STATUS_OUT_OF_MEMORY, "writing a records line");
  }
  return NULL;
}

/* ------------------------------------------------------------------------ */
/* What cJSON lets through                                                  */
/* ------------------------------------------------------------------------ */

/* cJSON keeps strings as C strings and copies their bytes as they come, so
 * "\u0000" would silently cut a name short and bytes that are not UTF-8
 * would pass into the store (and out of it as lines no reader accepts).
 * This walks the raw text of a line cJSON has parsed, tracking the JSON
 * pointer, and refuses either, saying where. */
#define SCAN_MAX_DEPTH 64
#define SCAN_KEY_BYTES 40

typedef struct scan_level_t {
  int is_object;
  int64_t index;             /* arrays: the element's index */
  char key[SCAN_KEY_BYTES + 4]; /* objects: the member's key as written, cut */
  int at_key;                /* objects: the next string is a key */
} scan_level_t;

static void scan_pointer(const scan_level_t *levels, int depth, char *out, size_t size) {
  size_t used = 0;
  out[0] = '\0';
  for (int d = 0; d < depth && used < size; ++d) {
    if (levels[d].is_object)
      used += (size_t)snprintf(out + used, size - used, "/%s", levels[d].key);
    else
      used += (size_t)snprintf(out + used, size - used, "/%lld", (long long)levels[d].index);
  }
  if (!out[0]) snprintf(out, size, "/");
}

/* Checks the string literal starting at line[*at] (its opening quote) and
 * moves *at past it; copies its raw bytes (cut) into `key` when not NULL. */
static hetc_status_t scan_string(const char *line, size_t *at, const scan_level_t *levels, int depth,
                                 int is_key, char *key) {
  size_t start = *at + 1, p = start;
  char where[512];
  while (line[p] && line[p] != '"') {
    const unsigned char c = (unsigned char)line[p];
    if (c == '\\') {
      if (line[p + 1] == 'u' && !strncmp(line + p + 2, "0000", 4)) {
        scan_pointer(levels, depth, where, sizeof(where));
        return hetc_status_new(HETC_STATUS_INVALID_ARGUMENT,
                               "%s: %s holds \\u0000 (column %zu), which no name or text may contain", where,
                               is_key ? "a key" : "the string", p + 1);
      }
      p += line[p + 1] ? 2 : 1;
      continue;
    }
    size_t length = c < 0x80 ? 1 : hetc_utf8_sequence_length(line + p);
    if (!length) {
      scan_pointer(levels, depth, where, sizeof(where));
      return hetc_status_new(HETC_STATUS_INVALID_ARGUMENT, "%s: %s is not valid UTF-8 (byte 0x%02X at column %zu)",
                             where, is_key ? "a key" : "the string", c, p + 1);
    }
    p += length;
  }
  if (key) {
    size_t length = p - start > SCAN_KEY_BYTES ? SCAN_KEY_BYTES : p - start;
    memcpy(key, line + start, length);
    key[length] = '\0';
    if (p - start > length) strcpy(key + length, "...");
  }
  *at = line[p] ? p + 1 : p;
  return NULL;
}

static hetc_status_t scan_strings(const char *line) {
  scan_level_t levels[SCAN_MAX_DEPTH];
  int depth = 0;
  size_t at = 0;
  while (line[at]) {
    const char c = line[at];
    scan_level_t *top = depth > 0 && depth <= SCAN_MAX_DEPTH ? &levels[depth - 1] : NULL;
    if (c == '{' || c == '[') {
      if (depth < SCAN_MAX_DEPTH) {
        memset(&levels[depth], 0, sizeof(levels[depth]));
        levels[depth].is_object = c == '{';
        levels[depth].at_key = c == '{';
      }
      ++depth;
      ++at;
    } else if (c == '}' || c == ']') {
      --depth;
      ++at;
    } else if (c == ',') {
      if (top && top->is_object) top->at_key = 1;
      else if (top) ++top->index;
      ++at;
    } else if (c == '"') {
      int is_key = top && top->is_object && top->at_key;
      /* Deeper than the pointer is kept: the deepest kept level names it. */
      int shown = depth <= SCAN_MAX_DEPTH ? depth : SCAN_MAX_DEPTH;
      HETC_RETURN_IF_ERROR(scan_string(line, &at, levels, is_key ? shown - 1 : shown, is_key, is_key ? top->key : NULL));
      if (is_key) top->at_key = 0;
    } else {
      ++at; /* ':', whitespace, numbers, literals */
    }
  }
  return NULL;
}

/* ------------------------------------------------------------------------ */
/* Reading one line                                                         */
/* ------------------------------------------------------------------------ */

/* "PATH: expected WHAT, got VALUE" with the value as compact JSON, cut at
 * 60 bytes; VALUE is left out when the item is absent. A number beyond a
 * double's range (1e999) reads as infinity, which JSON cannot print: it is
 * named for what it is. */
/* Compact JSON for a message, stopping once past `limit` bytes. cJSON's
 * own printer rounds numbers to 15 digits, so 2^53 would show as
 * 9.00719925474099e+15: numbers are printed exactly here. */
static void print_compact(hetc_json_text_t *out, const cJSON *item, size_t limit) {
  if (out->length > limit) return;
  if (cJSON_IsNumber(item)) {
    double value = item->valuedouble;
    if (!isfinite(value)) hetc_json_text_raw(out, value > 0 ? "1e999" : "-1e999");
    else if (value == floor(value) && fabs(value) <= (double)HETC_RECORD_MAX_JSON_INTEGER)
      hetc_json_text_int(out, (int64_t)value);
    else hetc_json_text_double(out, value);
  } else if (cJSON_IsString(item)) {
    hetc_json_text_string(out, item->valuestring);
  } else if (cJSON_IsArray(item) || cJSON_IsObject(item)) {
    const int object = cJSON_IsObject(item);
    hetc_json_text_raw(out, object ? "{" : "[");
    for (const cJSON *child = item->child; child && out->length <= limit; child = child->next) {
      if (child != item->child) hetc_json_text_raw(out, ",");
      if (object) {
        hetc_json_text_string(out, child->string);
        hetc_json_text_raw(out, ":");
      }
      print_compact(out, child, limit);
    }
    hetc_json_text_raw(out, object ? "}" : "]");
  } else {
    hetc_json_text_raw(out, cJSON_IsTrue(item) ? "true" : cJSON_IsFalse(item) ? "false" : "null");
  }
}

static hetc_status_t expected(const char *path, const char *what, const cJSON *got) {
  if (cJSON_IsNumber(got) && !isfinite(got->valuedouble))
    return hetc_status_new(HETC_STATUS_INVALID_ARGUMENT, "%s: expected %s, got a number beyond the range of a double",
                           path, what);
  char *printed = NULL;
  if (got) {
    hetc_json_text_t text = {0};
    print_compact(&text, got, 64);
    printed = hetc_json_text_take(&text);
  }
  if (got && !printed) return hetc_status_new(HETC_STATUS_OUT_OF_MEMORY, "reading a records line");
  hetc_status_t status;
  if (!printed) {
    status = hetc_status_new(HETC_STATUS_INVALID_ARGUMENT, "%s: expected %s", path, what);
  } else {
    int cut = strlen(printed) > 60;
    status = hetc_status_new(HETC_STATUS_INVALID_ARGUMENT, "%s: expected %s, got %.60s%s", path,
                             what, printed, cut ? "..." : "");
  }
  free(printed);
  return status;
}

/* Rejects duplicate and unknown keys and checks the first num_required of
 * `known` are present. */
static hetc_status_t check_keys(const cJSON *object, const char *path, const char *const *known,
                                int num_known, int num_required) {
  for (const cJSON *item = object->child; item; item = item->next) {
    int is_known = 0;
    for (int k = 0; k < num_known; ++k) is_known |= !strcmp(item->string, known[k]);
    if (!is_known) {
      char list[256] = "";
      for (int k = 0; k < num_known; ++k) {
        strncat(list, k ? ", " : "", sizeof(list) - strlen(list) - 1);
        strncat(list, known[k], sizeof(list) - strlen(list) - 1);
      }
      return hetc_status_new(HETC_STATUS_INVALID_ARGUMENT,
                             "%s: unknown key \"%s\" (expected one of: %s)", path, item->string,
                             list);
    }
    for (const cJSON *earlier = object->child; earlier != item; earlier = earlier->next) {
      if (!strcmp(earlier->string, item->string)) {
        return hetc_status_new(HETC_STATUS_INVALID_ARGUMENT, "%s: duplicate key \"%s\"", path,
                               item->string);
      }
    }
  }
  for (int k = 0; k < num_required; ++k) {
    if (!cJSON_GetObjectItemCaseSensitive(object, known[k])) {
      return hetc_status_new(HETC_STATUS_INVALID_ARGUMENT, "%s: missing required key \"%s\"",
                             path, known[k]);
    }
  }
  return NULL;
}

static int json_integer(const cJSON *item, int64_t min, int64_t max, int64_t *out_value) {
  if (!cJSON_IsNumber(item)) return 0;
  double value = item->valuedouble;
  if (value != floor(value) || value < (double)min || value > (double)max) return 0;
  *out_value = (int64_t)value;
  return 1;
}

static int json_seconds(const cJSON *item, double *out_value) {
  if (!cJSON_IsNumber(item) || !isfinite(item->valuedouble) || item->valuedouble < 0) return 0;
  *out_value = item->valuedouble;
  return 1;
}

static char *copy_text(const char *text) {
  size_t length = strlen(text);
  char *copy = malloc(length + 1);
  if (copy) memcpy(copy, text, length + 1);
  return copy;
}

static hetc_status_t no_memory(void) {
  return hetc_status_new(HETC_STATUS_OUT_OF_MEMORY, "reading a records line");
}

/* Undoes percent_escape; 0 on a malformed escape or an escaped NUL. */
static int percent_unescape(const char *text, size_t length, char **out_value) {
  char *value = malloc(length + 1);
  if (!value) return -1;
  size_t n = 0;
  for (size_t i = 0; i < length; ++i) {
    if (text[i] != '%') {
      value[n++] = text[i];
      continue;
    }
    unsigned byte = 0;
    for (int h = 1; h <= 2; ++h) {
      char c = i + (size_t)h < length ? text[i + (size_t)h] : '\0';
      int digit = c >= '0' && c <= '9' ? c - '0'
                  : c >= 'A' && c <= 'F' ? c - 'A' + 10
                  : c >= 'a' && c <= 'f' ? c - 'a' + 10
                                         : -1;
      if (digit < 0) {
        free(value);
        return 0;
      }
      byte = byte * 16 + (unsigned)digit;
    }
    if (byte == 0) {
      free(value);
      return 0;
    }
    value[n++] = (char)byte;
    i += 2;
  }
  value[n] = '\0';
  *out_value = value;
  return 1;
}

#define TARGET_PATH "/input/0"

/* "TARGET -device_kind=K -fingerprint=F -plugin_version=V", each option
 * exactly once, in any order. */
static hetc_status_t parse_target_string(const char *text, hetc_record_t *out) {
  char **slots[NUM_OPTIONS] = {&out->device_kind, &out->device_fingerprint,
                               &out->plugin_version};
  const char *p = text;
  int have_target = 0;
  while (*p) {
    if (*p == ' ') {
      ++p;
      continue;
    }
    size_t length = strcspn(p, " ");
    const char *token = p;
    p += length;
    char *value = NULL;
    int unescaped;
    if (!have_target) {
      if (token[0] == '-') {
        return hetc_status_new(HETC_STATUS_INVALID_ARGUMENT,
                               TARGET_PATH ": no target name before the options");
      }
      unescaped = percent_unescape(token, length, &value);
      if (unescaped > 0) out->target = value;
      have_target = 1;
    } else {
      const char *equals = memchr(token, '=', length);
      if (token[0] != '-' || !equals) {
        return hetc_status_new(HETC_STATUS_INVALID_ARGUMENT,
                               TARGET_PATH ": \"%.*s\" is not a -key=value option", (int)length,
                               token);
      }
      int option = -1;
      size_t name_length = (size_t)(equals - token) - 1;
      for (int o = 0; o < NUM_OPTIONS; ++o) {
        if (strlen(option_names[o]) == name_length &&
            !strncmp(option_names[o], token + 1, name_length)) {
          option = o;
        }
      }
      if (option < 0) {
        return hetc_status_new(HETC_STATUS_INVALID_ARGUMENT,
                               TARGET_PATH ": unknown option \"%.*s\" (expected -device_kind, "
                               "-fingerprint, -plugin_version)",
                               (int)(equals - token), token);
      }
      if (*slots[option]) {
        return hetc_status_new(HETC_STATUS_INVALID_ARGUMENT,
                               TARGET_PATH ": option \"-%s\" given twice", option_names[option]);
      }
      unescaped = percent_unescape(equals + 1, length - (size_t)(equals + 1 - token), &value);
      if (unescaped > 0) *slots[option] = value;
    }
    if (unescaped < 0) return no_memory();
    if (unescaped == 0) {
      return hetc_status_new(HETC_STATUS_INVALID_ARGUMENT,
                             TARGET_PATH ": bad %%-escape in \"%.*s\" (expected %%XX, not %%00)",
                             (int)length, token);
    }
  }
  if (!have_target) {
    return hetc_status_new(HETC_STATUS_INVALID_ARGUMENT, TARGET_PATH ": no target name");
  }
  for (int o = 0; o < NUM_OPTIONS; ++o) {
    if (!*slots[o]) {
      return hetc_status_new(HETC_STATUS_INVALID_ARGUMENT, TARGET_PATH ": missing option \"-%s\"",
                             option_names[o]);
    }
  }
  /* %XX may spell any byte: what it spells must still be UTF-8, or the
   * export would write it as a line no JSON reader accepts. */
  const char *const names[NUM_OPTIONS + 1] = {"the target name", "-device_kind", "-fingerprint", "-plugin_version"};
  const char *const values[NUM_OPTIONS + 1] = {out->target, out->device_kind, out->device_fingerprint,
                                               out->plugin_version};
  for (int v = 0; v <= NUM_OPTIONS; ++v) {
    size_t offset = 0;
    if (!hetc_utf8_valid(values[v], strlen(values[v]), &offset))
      return hetc_status_new(HETC_STATUS_INVALID_ARGUMENT,
                             TARGET_PATH ": %s is not valid UTF-8 once %%-escapes are undone (byte 0x%02X at offset %zu)",
                             names[v], (unsigned)(unsigned char)values[v][offset], offset);
  }
  if (!hetc_record_device_kind_known(out->device_kind))
    return hetc_status_new(HETC_STATUS_INVALID_ARGUMENT,
                           TARGET_PATH ": -device_kind \"%.40s\" is not one of cpu, gpu, accelerator", out->device_kind);
  return NULL;
}

static hetc_status_t parse_input(const cJSON *input, hetc_record_t *out) {
  if (!cJSON_IsArray(input) || cJSON_GetArraySize(input) != 4) {
    return expected("/input", "[target string, task name, args, kwargs]", input);
  }
  const cJSON *target = cJSON_GetArrayItem(input, 0), *task = cJSON_GetArrayItem(input, 1),
              *args = cJSON_GetArrayItem(input, 2), *kwargs = cJSON_GetArrayItem(input, 3);
  if (!cJSON_IsString(target)) {
    return expected(TARGET_PATH,
                    "a target string \"TARGET -device_kind=K -fingerprint=F -plugin_version=V\"",
                    target);
  }
  HETC_RETURN_IF_ERROR(parse_target_string(target->valuestring, out));
  if (!cJSON_IsString(task) || !task->valuestring[0]) {
    return expected("/input/1", "the template name (a non-empty string)", task);
  }
  if (!cJSON_IsArray(args) || cJSON_GetArraySize(args) != 2) {
    return expected("/input/2", "[workload key, template version]", args);
  }
  const cJSON *workload = cJSON_GetArrayItem(args, 0), *version = cJSON_GetArrayItem(args, 1);
  if (!cJSON_IsString(workload) || !workload->valuestring[0]) {
    return expected("/input/2/0", "the workload key (a non-empty string)", workload);
  }
  int64_t version_value = 0;
  if (!json_integer(version, 0, UINT32_MAX, &version_value)) {
    return expected("/input/2/1", "the template version (an integer in 0..4294967295)", version);
  }
  if (!cJSON_IsObject(kwargs)) return expected("/input/3", "kwargs (an object)", kwargs);
  out->template_name = copy_text(task->valuestring);
  out->workload_key = copy_text(workload->valuestring);
  out->template_version = (uint32_t)version_value;
  if (!out->template_name || !out->workload_key) return no_memory();
  return NULL;
}

static hetc_status_t parse_config(const cJSON *config, hetc_record_t *out) {
  static const char *const keys[] = {"index", "entity", "code_hash"};
  if (!cJSON_IsObject(config)) return expected("/config", "an object", config);
  HETC_RETURN_IF_ERROR(check_keys(config, "/config", keys, 3, 2));
  const cJSON *index = cJSON_GetObjectItemCaseSensitive(config, "index");
  const cJSON *entities = cJSON_GetObjectItemCaseSensitive(config, "entity");
  if (!json_integer(index, -HETC_RECORD_MAX_JSON_INTEGER, HETC_RECORD_MAX_JSON_INTEGER,
                    &out->config_index)) {
    return expected("/config/index", "an integer within 2^53", index);
  }
  if (!cJSON_IsArray(entities)) {
    return expected("/config/entity", "an array of [knob, kind, values]", entities);
  }
  if (cJSON_GetArraySize(entities) > HETC_RECORD_MAX_KNOBS) {
    return hetc_status_new(HETC_STATUS_INVALID_ARGUMENT, "/config/entity: %d knobs, more than the %d a config may have",
                           cJSON_GetArraySize(entities), HETC_RECORD_MAX_KNOBS);
  }
  hetc_json_text_t text = {0};
  hetc_status_t status = NULL;
  char path[64];
  int e = 0;
  hetc_json_text_raw(&text, "{");
  for (const cJSON *entity = entities->child; entity && !status; entity = entity->next, ++e) {
    const cJSON *name = cJSON_GetArrayItem(entity, 0), *kind = cJSON_GetArrayItem(entity, 1),
                *values = cJSON_GetArrayItem(entity, 2);
    if (!cJSON_IsArray(entity) || cJSON_GetArraySize(entity) != 3 || !cJSON_IsString(name) ||
        !cJSON_IsString(kind)) {
      snprintf(path, sizeof(path), "/config/entity/%d", e);
      status = expected(path, "[knob name, kind, [integers]]", entity);
      break;
    }
    for (const cJSON *earlier = entities->child; earlier != entity; earlier = earlier->next) {
      if (!strcmp(cJSON_GetArrayItem(earlier, 0)->valuestring, name->valuestring)) {
        status = hetc_status_new(HETC_STATUS_INVALID_ARGUMENT,
                                 "/config/entity/%d/0: knob \"%s\" appears twice", e,
                                 name->valuestring);
        break;
      }
    }
    if (status) break;
    int values_ok =
        cJSON_IsArray(values) && values->child && cJSON_GetArraySize(values) <= HETC_RECORD_MAX_KNOB_VALUES;
    if (entity != entities->child) hetc_json_text_raw(&text, ",");
    hetc_json_text_string(&text, name->valuestring);
    hetc_json_text_raw(&text, ":[");
    for (const cJSON *value = values_ok ? values->child : NULL; value; value = value->next) {
      int64_t integer = 0;
      if (!json_integer(value, -HETC_RECORD_MAX_CONFIG_VALUE, HETC_RECORD_MAX_CONFIG_VALUE, &integer)) {
        values_ok = 0;
        break;
      }
      if (value != values->child) hetc_json_text_raw(&text, ",");
      hetc_json_text_int(&text, integer);
    }
    if (!values_ok) {
      snprintf(path, sizeof(path), "/config/entity/%d/2", e);
      status = expected(path, "an array of 1 to 8 integers below 2^53 in magnitude", values);
    }
    hetc_json_text_raw(&text, "]");
  }
  hetc_json_text_raw(&text, "}");
  if (status) {
    hetc_json_text_free(&text);
    return status;
  }
  out->config_json = hetc_json_text_take(&text);
  return out->config_json ? NULL : no_memory();
}

static hetc_status_t parse_result(const cJSON *result, hetc_record_t *out) {
  if (!cJSON_IsArray(result) || cJSON_GetArraySize(result) != 4) {
    return expected("/result", "[costs, error_no, all_cost, timestamp]", result);
  }
  const cJSON *costs = cJSON_GetArrayItem(result, 0), *error = cJSON_GetArrayItem(result, 1),
              *all_cost = cJSON_GetArrayItem(result, 2), *stamp = cJSON_GetArrayItem(result, 3);
  int64_t error_value = 0;
  if (!json_integer(error, 0, HETC_RECORD_ERROR_COUNT - 1, &error_value)) {
    return expected("/result/1", "an error code (an integer in 0..9)", error);
  }
  out->error = (hetc_record_error_t)error_value;
  if (!cJSON_IsArray(costs) ||
      (error_value == HETC_RECORD_OK && cJSON_GetArraySize(costs) > HETC_RECORD_MAX_COSTS)) {
    return expected("/result/0", "an array of at most 32 costs", costs);
  }
  /* A failed record's costs are AutoTVM's placeholder: ignored. */
  int c = 0;
  for (const cJSON *cost = error_value == HETC_RECORD_OK ? costs->child : NULL; cost;
       cost = cost->next, ++c) {
    if (!json_seconds(cost, &out->costs[c])) {
      char path[32];
      snprintf(path, sizeof(path), "/result/0/%d", c);
      return expected(path, "a cost in seconds (a finite number >= 0)", cost);
    }
  }
  out->num_costs = c;
  if (!json_seconds(all_cost, &out->total_seconds)) {
    return expected("/result/2", "the total seconds (a finite number >= 0)", all_cost);
  }
  if (!json_integer(stamp, -HETC_RECORD_MAX_JSON_INTEGER, HETC_RECORD_MAX_JSON_INTEGER,
                    &out->timestamp)) {
    return expected("/result/3", "a Unix timestamp (an integer within 2^53)", stamp);
  }
  return NULL;
}

static hetc_status_t parse_measure(const cJSON *measure, hetc_record_t *out) {
  static const char *const keys[] = {"build_seconds", "error_message"};
  if (!measure) return NULL; /* optional: build_seconds 0, no message */
  if (!cJSON_IsObject(measure)) return expected("/hetc_measure", "an object", measure);
  HETC_RETURN_IF_ERROR(check_keys(measure, "/hetc_measure", keys, 2, 2));
  const cJSON *build = cJSON_GetObjectItemCaseSensitive(measure, "build_seconds");
  const cJSON *message = cJSON_GetObjectItemCaseSensitive(measure, "error_message");
  if (!json_seconds(build, &out->build_seconds)) {
    return expected("/hetc_measure/build_seconds", "a finite number >= 0", build);
  }
  if (cJSON_IsString(message)) {
    out->error_message = copy_text(message->valuestring);
    if (!out->error_message) return no_memory();
  } else if (!cJSON_IsNull(message)) {
    return expected("/hetc_measure/error_message", "a string or null", message);
  }
  return NULL;
}

static hetc_status_t parse_line(const char *line, hetc_record_t *out) {
  static const char *const keys[] = {"input",        "config",      "result",
                                     "version",      "hetc_version", "hetc_measure"};
  const char *end = NULL;
  cJSON *root = cJSON_ParseWithOpts(line, &end, 1);
  if (!root) {
    if (!end) return no_memory();
    return hetc_status_new(HETC_STATUS_INVALID_ARGUMENT, "not valid JSON (at column %lld)",
                           (long long)(end - line) + 1);
  }
  hetc_status_t status = scan_strings(line);
  if (status) goto done;
  if (!cJSON_IsObject(root)) {
    status = expected("/", "a JSON object", root);
    goto done;
  }
  status = check_keys(root, "/", keys, 6, 5);
  if (status) goto done;
  const cJSON *version = cJSON_GetObjectItemCaseSensitive(root, "version");
  if (!cJSON_IsNumber(version) || version->valuedouble != strtod(HETC_RECORDS_JSONL_VERSION, NULL)) {
    status = expected("/version", HETC_RECORDS_JSONL_VERSION " (AutoTVM's record version)", version);
    goto done;
  }
  status = parse_input(cJSON_GetObjectItemCaseSensitive(root, "input"), out);
  if (!status) status = parse_config(cJSON_GetObjectItemCaseSensitive(root, "config"), out);
  if (!status) status = parse_result(cJSON_GetObjectItemCaseSensitive(root, "result"), out);
  if (status) goto done;
  const cJSON *hetc_version = cJSON_GetObjectItemCaseSensitive(root, "hetc_version");
  if (!cJSON_IsString(hetc_version)) {
    status = expected("/hetc_version", "a string", hetc_version);
    goto done;
  }
  out->hetc_version = copy_text(hetc_version->valuestring);
  if (!out->hetc_version) status = no_memory();
  if (!status) status = parse_measure(cJSON_GetObjectItemCaseSensitive(root, "hetc_measure"), out);
  /* The store's own rules (hetc_record_validate: an empty fingerprint, a
   * config the store would refuse) are checked here too, so that a line
   * either imports or is reported with its line number. */
  if (!status) status = hetc_record_validate(out);
done:
  cJSON_Delete(root);
  return status;
}

hetc_status_t hetc_record_from_jsonl(const char *line, hetc_record_t *out_record) {
  memset(out_record, 0, sizeof(*out_record));
  hetc_status_t status = parse_line(line, out_record);
  if (status) hetc_record_clear(out_record);
  return status;
}

/* ------------------------------------------------------------------------ */
/* Files                                                                    */
/* ------------------------------------------------------------------------ */

hetc_status_t hetc_records_export_jsonl(hetc_records_t *store, const hetc_record_filter_t *filter,
                                        const char *path, int64_t *out_count) {
  if (out_count) *out_count = 0;
  hetc_record_list_t list;
  HETC_RETURN_IF_ERROR(hetc_records_query(store, filter, &list));
  hetc_output_file_t *output = NULL;
  hetc_status_t status = hetc_output_file_open(path, &output);
  for (int32_t i = 0; i < list.count && !status; ++i) {
    char *line = NULL;
    status = hetc_record_to_jsonl(&list.items[i], &line);
    if (status) {
      status = hetc_status_annotate(status, "%s: record %d", hetc_records_path(store), i);
    } else if (fputs(line, hetc_output_stream(output)) < 0 || fputc('\n', hetc_output_stream(output)) < 0) {
      status = hetc_file_write_failure(path, "cannot write", errno);
    }
    free(line);
  }
  if (output && status) hetc_output_file_abandon(output);
  else if (output) status = hetc_output_file_commit(output);
  if (!status && out_count) *out_count = list.count;
  hetc_record_list_free(&list);
  return status;
}

/* Reads the next line of `file` into *line (growing it), at most
 * HETC_RECORDS_JSONL_MAX_LINE bytes of it: *out_length is the line's whole
 * length without the '\n' (bytes beyond the limit are read and dropped).
 * Returns 0 at the end of the file, 1 for a line. */
static int read_line(FILE *file, char **line, size_t *capacity, size_t *out_length) {
  size_t length = 0;
  int c = EOF;
  while ((c = getc_unlocked(file)) != EOF && c != '\n') {
    if (length < HETC_RECORDS_JSONL_MAX_LINE) {
      if (length + 2 > *capacity) {
        size_t grown_capacity = *capacity ? 2 * *capacity : 4096;
        char *grown = realloc(*line, grown_capacity);
        if (!grown) return -1;
        *line = grown;
        *capacity = grown_capacity;
      }
      (*line)[length] = (char)c;
    }
    ++length;
  }
  if (c == EOF && length == 0) return 0;
  if (!*line) {
    *line = malloc(1);
    if (!*line) return -1;
    *capacity = 1;
  }
  (*line)[length < HETC_RECORDS_JSONL_MAX_LINE ? length : HETC_RECORDS_JSONL_MAX_LINE] = '\0';
  *out_length = length;
  return 1;
}

static int is_blank(const char *line) { return line[strspn(line, " \t")] == '\0'; }

hetc_status_t hetc_records_read_jsonl(FILE *file, const char *path, hetc_jsonl_record_fn_t on_record, void *user,
                                      int64_t *out_records) {
  if (out_records) *out_records = 0;
  hetc_status_t first_error = NULL, status = NULL;
  int64_t more_errors = 0, line_number = 0, records = 0;
  char *line = NULL;
  size_t capacity = 0, length = 0;
  int got;
  while ((got = read_line(file, &line, &capacity, &length)) > 0) {
    ++line_number;
    hetc_status_t line_status = NULL;
    hetc_record_t record;
    memset(&record, 0, sizeof(record));
    if (length > HETC_RECORDS_JSONL_MAX_LINE) {
      line_status = hetc_status_new(HETC_STATUS_INVALID_ARGUMENT, "%zu bytes, more than the %d a line may have",
                                    length, HETC_RECORDS_JSONL_MAX_LINE);
    } else {
      if (length > 0 && line[length - 1] == '\r') line[--length] = '\0';
      if (strlen(line) != length) {
        line_status = hetc_status_new(HETC_STATUS_INVALID_ARGUMENT, "contains a NUL byte");
      } else if (is_blank(line)) {
        continue;
      } else if (records == HETC_RECORDS_JSONL_MAX_RECORDS) {
        line_status = hetc_status_new(HETC_STATUS_INVALID_ARGUMENT,
                                      "more than the %d records a file may hold (split it)",
                                      HETC_RECORDS_JSONL_MAX_RECORDS);
      } else {
        line_status = hetc_record_from_jsonl(line, &record);
      }
    }
    if (line_status && hetc_status_code(line_status) == HETC_STATUS_OUT_OF_MEMORY) {
      status = line_status;
      break;
    }
    if (line_status) {
      if (first_error) {
        ++more_errors;
        hetc_status_free(line_status);
      } else {
        first_error = hetc_status_annotate(line_status, "%s:%lld", path, (long long)line_number);
      }
      continue;
    }
    ++records;
    /* After a malformed line nothing will be imported: the rest is only
     * read for the count of malformed lines. */
    if (!first_error && on_record) status = on_record(user, &record, line_number);
    hetc_record_clear(&record);
    if (status) break;
  }
  if (!status && got < 0) status = no_memory();
  if (!status && ferror(file)) {
    status = hetc_status_new(HETC_STATUS_IO_ERROR, "%s: cannot read: %s", path, strerror(errno));
  }
  free(line);
  if (!status && first_error) {
    if (more_errors == 0) {
      status = first_error;
      first_error = NULL;
    } else {
      status = hetc_status_new(HETC_STATUS_INVALID_ARGUMENT, "%s (and %lld more malformed line%s)",
                               hetc_status_message(first_error), (long long)more_errors,
                               more_errors == 1 ? "" : "s");
    }
  }
  hetc_status_free(first_error);
  if (!status && out_records) *out_records = records;
  return status;
}

static hetc_status_t add_to_batch(void *user, const hetc_record_t *record, int64_t line) {
  (void)line;
  return hetc_records_batch_add(user, record);
}

/* A regular file, or a pipe (/dev/stdin, a FIFO) read as it comes:
 * *out_seekable says which. Opened without blocking, so a FIFO that no
 * process writes reads as empty rather than waiting forever; a directory,
 * socket or block device is refused. */
static hetc_status_t open_jsonl(const char *path, FILE **out_file, int *out_seekable) {
  *out_file = NULL;
  int fd;
  struct stat info;
  HETC_RETURN_IF_ERROR(hetc_file_open_input(path, &fd, &info));
  hetc_status_t status = NULL;
  if (!S_ISREG(info.st_mode) && !S_ISFIFO(info.st_mode) && !S_ISCHR(info.st_mode))
    status = hetc_status_new(HETC_STATUS_BAD_INPUT, "%s: is %s, not a file of records", path,
                             hetc_file_kind_name(info.st_mode));
  if (!status && !(*out_file = fdopen(fd, "r")))
    status = hetc_status_new(HETC_STATUS_IO_ERROR, "%s: cannot open: %s", path, strerror(errno));
  if (status) {
    close(fd);
    return status;
  }
  *out_seekable = S_ISREG(info.st_mode);
  return NULL;
}

hetc_status_t hetc_records_check_jsonl(const char *path, int64_t *out_records) {
  if (out_records) *out_records = -1;
  FILE *file = NULL;
  int seekable = 0;
  HETC_RETURN_IF_ERROR(open_jsonl(path, &file, &seekable));
  hetc_status_t status = seekable ? hetc_records_read_jsonl(file, path, NULL, NULL, out_records) : NULL;
  fclose(file);
  return status;
}

hetc_status_t hetc_records_import_jsonl(hetc_records_t *store, const char *path,
                                        int32_t *out_imported, int32_t *out_duplicates) {
  if (out_imported) *out_imported = 0;
  if (out_duplicates) *out_duplicates = 0;
  FILE *file = NULL;
  int seekable = 0;
  HETC_RETURN_IF_ERROR(open_jsonl(path, &file, &seekable));
  /* A file is read once to find malformed lines before the store is
   * locked, so that a bad file never keeps a tuner waiting; then again,
   * adding. A pipe (/dev/stdin) cannot be read twice: it is read once,
   * adding as it goes. */
  int64_t records = -1, added_records = 0;
  hetc_status_t status = seekable ? hetc_records_read_jsonl(file, path, NULL, NULL, &records) : NULL;
  hetc_records_batch_t *batch = NULL;
  if (!status && seekable && fseeko(file, 0, SEEK_SET) != 0)
    status = hetc_status_new(HETC_STATUS_IO_ERROR, "%s: cannot read: %s", path, strerror(errno));
  if (!status) status = hetc_records_batch_begin(store, &batch);
  if (!status) status = hetc_records_read_jsonl(file, path, add_to_batch, batch, &added_records);
  if (!status && seekable && added_records != records)
    status = hetc_status_new(HETC_STATUS_INVALID_ARGUMENT, "%s: changed while it was imported", path);
  if (!seekable) records = added_records;
  fclose(file);
  int32_t added = 0;
  if (status) hetc_records_batch_abandon(batch);
  else status = hetc_records_batch_commit(batch, &added);
  if (!status) {
    if (out_imported) *out_imported = added;
    if (out_duplicates) *out_duplicates = (int32_t)records - added;
  }
  return status;
}
