/* Space overrides: parsing the JSON file and applying it to template
 * spaces. The format is api/space-overrides.md. */
#include "space/space_override.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/fileio.h"
#include "common/json_input.h"
#include "space/space.h"

/* Overrides files are small; anything larger is a mistake. */
#define MAX_OVERRIDES_FILE_BYTES (16u << 20)
/* Integers beyond 2^53 do not survive JSON's doubles. */
#define MAX_EXACT_INTEGER 9007199254740992.0

/* One "add" entry: a knob and the values to append. A value is a bare
 * integer (width 0) or an array of `width` split parts. */
typedef struct override_add_t {
  char *knob;       /* owned */
  int32_t count;    /* values */
  int32_t *widths;  /* owned, count entries */
  int64_t *flat;    /* owned: the values' integers in order (a bare one takes 1) */
} override_add_t;

typedef struct override_template_t {
  char *name;          /* owned */
  int32_t num_enable;
  char **enable;       /* owned, num_enable owned strings */
  int32_t num_add;
  override_add_t *add; /* owned */
} override_template_t;

struct hetc_space_overrides_t {
  char *file; /* owned: the name messages use */
  int32_t num_templates;
  override_template_t *templates; /* owned */
};

void hetc_space_overrides_free(hetc_space_overrides_t *overrides) {
  if (!overrides) return;
  for (int32_t t = 0; t < overrides->num_templates; ++t) {
    override_template_t *entry = &overrides->templates[t];
    for (int32_t i = 0; i < entry->num_enable; ++i) free(entry->enable[i]);
    free(entry->enable);
    for (int32_t i = 0; i < entry->num_add; ++i) {
      free(entry->add[i].knob);
      free(entry->add[i].widths);
      free(entry->add[i].flat);
    }
    free(entry->add);
    free(entry->name);
  }
  free(overrides->templates);
  free(overrides->file);
  free(overrides);
}

/* ---- Parsing ---- */

static hetc_status_t fail(const char *file, const char *place, const char *what) {
  return hetc_status_new(HETC_STATUS_INVALID_ARGUMENT, "%s: %s: %s", file, place, what);
}

static hetc_status_t out_of_memory(void) {
  return hetc_status_new(HETC_STATUS_OUT_OF_MEMORY, "space overrides");
}

/* The integer a JSON number holds exactly, or 0 when it holds none. */
static int exact_integer(const cJSON *item, int64_t *out) {
  if (!cJSON_IsNumber(item)) return 0;
  const double value = item->valuedouble;
  if (!isfinite(value) || value != floor(value) || fabs(value) > MAX_EXACT_INTEGER) return 0;
  *out = (int64_t)value;
  return 1;
}

/* Two members of one object with the same key: cJSON keeps both. */
static const cJSON *duplicate_key(const cJSON *object) {
  for (const cJSON *a = object->child; a; a = a->next)
    for (const cJSON *b = a->next; b; b = b->next)
      if (!strcmp(a->string, b->string)) return b;
  return NULL;
}

static hetc_status_t parse_add(const char *file, const char *place, const cJSON *list,
                               override_add_t *out) {
  if (!cJSON_IsArray(list)) return fail(file, place, "expected an array of values");
  const int32_t count = cJSON_GetArraySize(list);
  int64_t total = 0;
  for (const cJSON *item = list->child; item; item = item->next)
    total += cJSON_IsArray(item) ? cJSON_GetArraySize(item) : 1;
  out->count = count;
  out->widths = calloc((size_t)count + 1, sizeof(int32_t));
  out->flat = calloc((size_t)total + 1, sizeof(int64_t));
  if (!out->widths || !out->flat) return out_of_memory();
  int32_t i = 0;
  int64_t used = 0;
  for (const cJSON *item = list->child; item; item = item->next, ++i) {
    if (!cJSON_IsArray(item)) {
      if (!exact_integer(item, &out->flat[used++]))
        return hetc_status_new(HETC_STATUS_INVALID_ARGUMENT, "%s: %s[%d]: expected an integer",
                               file, place, i);
      out->widths[i] = 0;
      continue;
    }
    const int32_t parts = cJSON_GetArraySize(item);
    if (parts < 1 || parts > HETC_SPACE_MAX_PARTS)
      return hetc_status_new(HETC_STATUS_INVALID_ARGUMENT,
                             "%s: %s[%d]: expected an array of 1 to %d split parts", file, place, i,
                             HETC_SPACE_MAX_PARTS);
    int32_t j = 0;
    for (const cJSON *part = item->child; part; part = part->next, ++j) {
      if (!exact_integer(part, &out->flat[used++]))
        return hetc_status_new(HETC_STATUS_INVALID_ARGUMENT, "%s: %s[%d][%d]: expected an integer",
                               file, place, i, j);
    }
    out->widths[i] = parts;
  }
  return NULL;
}

static hetc_status_t parse_template(const char *file, const cJSON *body,
                                    override_template_t *out) {
  char place[1024];
  snprintf(place, sizeof(place), "templates.%s", out->name);
  if (!cJSON_IsObject(body)) return fail(file, place, "expected an object");
  const cJSON *twice = duplicate_key(body);
  if (twice) {
    snprintf(place, sizeof(place), "templates.%s.%s", out->name, twice->string);
    return fail(file, place, "given twice");
  }
  for (const cJSON *member = body->child; member; member = member->next) {
    snprintf(place, sizeof(place), "templates.%s.%s", out->name, member->string);
    if (!strcmp(member->string, "enable")) {
      if (!cJSON_IsArray(member)) return fail(file, place, "expected an array of knob names");
      out->num_enable = cJSON_GetArraySize(member);
      out->enable = calloc((size_t)out->num_enable + 1, sizeof(char *));
      if (!out->enable) return out_of_memory();
      int32_t i = 0;
      for (const cJSON *name = member->child; name; name = name->next, ++i) {
        if (!cJSON_IsString(name))
          return hetc_status_new(HETC_STATUS_INVALID_ARGUMENT,
                                 "%s: %s[%d]: expected a knob name (a string)", file, place, i);
        if (!(out->enable[i] = strdup(name->valuestring))) return out_of_memory();
      }
    } else if (!strcmp(member->string, "add")) {
      if (!cJSON_IsObject(member))
        return fail(file, place, "expected an object mapping knob names to arrays of values");
      if ((twice = duplicate_key(member))) {
        snprintf(place, sizeof(place), "templates.%s.add.%s", out->name, twice->string);
        return fail(file, place, "given twice");
      }
      out->add = calloc((size_t)cJSON_GetArraySize(member) + 1, sizeof(override_add_t));
      if (!out->add) return out_of_memory();
      for (const cJSON *knob = member->child; knob; knob = knob->next) {
        override_add_t *add = &out->add[out->num_add++];
        if (!(add->knob = strdup(knob->string))) return out_of_memory();
        snprintf(place, sizeof(place), "templates.%s.add.%s", out->name, knob->string);
        HETC_RETURN_IF_ERROR(parse_add(file, place, knob, add));
      }
    } else {
      return fail(file, place, "unknown key (expected \"enable\" or \"add\")");
    }
  }
  return NULL;
}

static hetc_status_t parse_document(const char *file, const cJSON *root,
                                    hetc_space_overrides_t *out) {
  if (!cJSON_IsObject(root))
    return hetc_status_new(HETC_STATUS_INVALID_ARGUMENT,
                           "%s: expected a JSON object {\"templates\": {...}}", file);
  const cJSON *twice = duplicate_key(root);
  if (twice) return fail(file, twice->string, "given twice");
  const cJSON *templates = NULL;
  for (const cJSON *member = root->child; member; member = member->next) {
    if (strcmp(member->string, "templates") != 0)
      return fail(file, member->string, "unknown key (expected \"templates\")");
    templates = member;
  }
  if (!templates) return fail(file, "templates", "missing");
  if (!cJSON_IsObject(templates)) return fail(file, "templates", "expected an object");
  if ((twice = duplicate_key(templates))) {
    char place[1024];
    snprintf(place, sizeof(place), "templates.%s", twice->string);
    return fail(file, place, "given twice");
  }
  out->templates = calloc((size_t)cJSON_GetArraySize(templates) + 1, sizeof(override_template_t));
  if (!out->templates) return out_of_memory();
  for (const cJSON *body = templates->child; body; body = body->next) {
    override_template_t *entry = &out->templates[out->num_templates++];
    if (!(entry->name = strdup(body->string))) return out_of_memory();
    HETC_RETURN_IF_ERROR(parse_template(file, body, entry));
  }
  return NULL;
}

/* A syntax error at byte `offset`, as line and column. */
static hetc_status_t fail_at(const char *file, const char *text, size_t length, size_t offset,
                             const char *what) {
  int line, column;
  hetc_text_position(text, length, offset, &line, &column);
  return hetc_status_new(HETC_STATUS_INVALID_ARGUMENT, "%s: line %d, column %d: %s", file, line,
                         column, what);
}

hetc_status_t hetc_space_overrides_parse(const char *text, size_t length,
                                         const char *display_name,
                                         hetc_space_overrides_t **out_overrides) {
  if (memchr(text, 0, length))
    return hetc_status_new(HETC_STATUS_INVALID_ARGUMENT, "%s: contains a NUL byte; not a JSON text",
                           display_name);
  const char *end = NULL;
  cJSON *root = cJSON_ParseWithLengthOpts(text, length, &end, 0);
  if (!root) {
    size_t offset = end && end >= text ? (size_t)(end - text) : 0;
    const char *error_at = cJSON_GetErrorPtr();
    if (error_at && error_at >= text && error_at <= text + length)
      offset = (size_t)(error_at - text);
    return fail_at(display_name, text, length, offset, hetc_json_syntax_error(text, length, offset));
  }
  /* cJSON stops after the first value; more than whitespace after it is
   * not one JSON text. */
  size_t offset = end && end >= text && end <= text + length ? (size_t)(end - text) : length;
  while (offset < length && strchr(" \t\r\n", text[offset])) ++offset;
  if (offset < length) {
    cJSON_Delete(root);
    return fail_at(display_name, text, length, offset,
                   "not valid JSON (text after the top-level value)");
  }
  /* As the model loader: a NUL escape would cut a template or knob name
   * short, and names that are not UTF-8 would reach messages and records. */
  if (hetc_json_find_escaped_nul(text, length, &offset)) {
    cJSON_Delete(root);
    return fail_at(display_name, text, length, offset,
                   "\\u0000 (a NUL character) is not allowed in a string");
  }
  char place[256];
  int is_name = 0;
  size_t bad = 0;
  if (hetc_json_find_invalid_utf8(root, HETC_JSON_PATH_DOTTED, place, sizeof(place), &is_name, &bad)) {
    cJSON_Delete(root);
    if (is_name)
      return hetc_status_new(HETC_STATUS_INVALID_ARGUMENT,
                             "%s: %s: a member name is not valid UTF-8 (at byte %zu of the name)", display_name,
                             place, bad + 1);
    return hetc_status_new(HETC_STATUS_INVALID_ARGUMENT, "%s: %s: not valid UTF-8 (at byte %zu of the string)",
                           display_name, place, bad + 1);
  }
  hetc_space_overrides_t *overrides = calloc(1, sizeof(*overrides));
  hetc_status_t status = NULL;
  if (!overrides || !(overrides->file = strdup(display_name)))
    status = out_of_memory();
  if (!status) status = parse_document(display_name, root, overrides);
  cJSON_Delete(root);
  if (status) {
    hetc_space_overrides_free(overrides);
    return status;
  }
  *out_overrides = overrides;
  return NULL;
}

hetc_status_t hetc_space_overrides_load(const char *path, hetc_space_overrides_t **out_overrides) {
  char *text = NULL;
  size_t length = 0;
  HETC_RETURN_IF_ERROR(hetc_file_read_all(path, MAX_OVERRIDES_FILE_BYTES, &text, &length));
  hetc_status_t status = hetc_space_overrides_parse(text, length, path, out_overrides);
  free(text);
  return status;
}

/* ---- Applying ---- */

hetc_status_t hetc_space_overrides_check_templates(const hetc_space_overrides_t *overrides,
                                                   const char *backend,
                                                   const char *const *names, int32_t count) {
  for (int32_t t = 0; t < overrides->num_templates; ++t) {
    const char *name = overrides->templates[t].name;
    int32_t found = 0;
    for (int32_t i = 0; i < count && !found; ++i) found = names[i] && !strcmp(names[i], name);
    if (found) continue;
    char offered[1024] = "";
    size_t used = 0;
    for (int32_t i = 0; i < count && used < sizeof(offered); ++i) {
      int written = snprintf(offered + used, sizeof(offered) - used, "%s%s", i ? ", " : "",
                             names[i] ? names[i] : "?");
      if (written < 0) break;
      used += (size_t)written;
    }
    return hetc_status_new(HETC_STATUS_INVALID_ARGUMENT,
                           "%s: templates.%s: backend '%s' has no template '%s' for this "
                           "workload (it has %s)",
                           overrides->file, name, backend, name, count ? offered : "none");
  }
  return NULL;
}

/* "template 'T' has no knob 'K' (its knobs: a, b)". */
static hetc_status_t unknown_knob(const hetc_space_overrides_t *overrides, const char *place,
                                  const char *template_name, const char *knob,
                                  const hetc_plugin_space_t *space) {
  char knobs[1024] = "";
  size_t used = 0;
  for (int32_t k = 0; k < hetc_space_knob_count(space) && used < sizeof(knobs); ++k) {
    int written = snprintf(knobs + used, sizeof(knobs) - used, "%s%s", k ? ", " : "",
                           hetc_space_knob_name(space, k));
    if (written < 0) break;
    used += (size_t)written;
  }
  return hetc_status_new(HETC_STATUS_INVALID_ARGUMENT,
                         "%s: %s: template '%s' has no knob '%s' (its knobs: %s)",
                         overrides->file, place, template_name, knob,
                         hetc_space_knob_count(space) ? knobs : "none");
}

static hetc_status_t apply_add(const hetc_space_overrides_t *overrides,
                               const override_template_t *entry, const override_add_t *add,
                               hetc_plugin_space_t *space) {
  char place[1024];
  snprintf(place, sizeof(place), "templates.%s.add.%s", entry->name, add->knob);
  const int32_t knob = hetc_space_find_knob(space, add->knob);
  if (knob < 0) return unknown_knob(overrides, place, entry->name, add->knob, space);
  const int is_split = hetc_space_knob_kind(space, knob) == HETC_KNOB_SPLIT;
  const int32_t width = hetc_space_knob_width(space, knob);
  /* Every value must have the knob's shape: a split's parts, or one bare
   * integer. */
  for (int32_t i = 0; i < add->count; ++i) {
    if (is_split ? add->widths[i] == width : add->widths[i] == 0) continue;
    if (is_split)
      return hetc_status_new(HETC_STATUS_INVALID_ARGUMENT,
                             "%s: %s[%d]: knob '%s' is a split into %d parts: expected an array "
                             "of %d integers",
                             overrides->file, place, i, add->knob, width, width);
    return hetc_status_new(HETC_STATUS_INVALID_ARGUMENT,
                           "%s: %s[%d]: knob '%s' takes one integer per candidate: expected an "
                           "integer",
                           overrides->file, place, i, add->knob);
  }
  return hetc_status_annotate(hetc_space_add_candidates(space, knob, add->flat, add->count, NULL),
                              "%s: %s", overrides->file, place);
}

hetc_status_t hetc_space_overrides_apply(const hetc_space_overrides_t *overrides,
                                         const char *template_name, hetc_plugin_space_t *space) {
  for (int32_t t = 0; overrides && t < overrides->num_templates; ++t) {
    const override_template_t *entry = &overrides->templates[t];
    if (strcmp(entry->name, template_name) != 0) continue;
    for (int32_t i = 0; i < entry->num_enable; ++i) {
      char place[1024];
      snprintf(place, sizeof(place), "templates.%.900s.enable[%d]", entry->name, i);
      const int32_t knob = hetc_space_find_knob(space, entry->enable[i]);
      if (knob < 0) return unknown_knob(overrides, place, entry->name, entry->enable[i], space);
      HETC_RETURN_IF_ERROR(hetc_status_annotate(hetc_space_enable_knob(space, knob), "%s: %s",
                                                overrides->file, place));
    }
    for (int32_t i = 0; i < entry->num_add; ++i)
      HETC_RETURN_IF_ERROR(apply_add(overrides, entry, &entry->add[i], space));
  }
  return NULL;
}
