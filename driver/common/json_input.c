#include "common/json_input.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>

const char *hetc_json_syntax_error(const char *text, size_t length, size_t offset) {
  /* cJSON refuses the array or object that would open one level too many
   * at its opening bracket, and says no more than it does for a missing
   * comma: count the levels open before it, outside strings. */
  if (offset >= length || (text[offset] != '[' && text[offset] != '{')) return "not valid JSON";
  size_t depth = 0;
  int in_string = 0;
  for (size_t i = 0; i < offset; ++i) {
    const char c = text[i];
    if (in_string) {
      if (c == '\\') ++i;
      else if (c == '"') in_string = 0;
    } else if (c == '"') {
      in_string = 1;
    } else if (c == '[' || c == '{') {
      ++depth;
    } else if ((c == ']' || c == '}') && depth > 0) {
      --depth;
    }
  }
  if (!in_string && depth >= HETC_JSON_MAX_DEPTH) return "arrays and objects nested deeper than 1000 levels";
  return "not valid JSON";
}

int hetc_json_find_escaped_nul(const char *text, size_t length, size_t *out_offset) {
  for (size_t i = 0; i + 1 < length; ++i) {
    if (text[i] != '\\') continue;
    if (text[i + 1] == 'u' && i + 5 < length && memcmp(text + i + 2, "0000", 4) == 0) {
      *out_offset = i;
      return 1;
    }
    ++i; /* the escaped character */
  }
  return 0;
}

int hetc_utf8_valid(const char *bytes, size_t length, size_t *out_bad_offset) {
  const unsigned char *s = (const unsigned char *)bytes;
  for (size_t i = 0; i < length;) {
    const unsigned char c = s[i];
    size_t extra;
    uint32_t lowest, code;
    if (c < 0x80) {
      ++i;
      continue;
    } else if ((c & 0xE0) == 0xC0) {
      extra = 1, lowest = 0x80, code = c & 0x1F;
    } else if ((c & 0xF0) == 0xE0) {
      extra = 2, lowest = 0x800, code = c & 0x0F;
    } else if ((c & 0xF8) == 0xF0) {
      extra = 3, lowest = 0x10000, code = c & 0x07;
    } else {
      if (out_bad_offset) *out_bad_offset = i;
      return 0;
    }
    int ok = i + extra < length;
    for (size_t k = 1; ok && k <= extra; ++k) {
      ok = (s[i + k] & 0xC0) == 0x80;
      code = (code << 6) | (s[i + k] & 0x3F);
    }
    /* Overlong forms, UTF-16 surrogates and code points past U+10FFFF are
     * not UTF-8 either. */
    if (!ok || code < lowest || (code >= 0xD800 && code <= 0xDFFF) || code > 0x10FFFF) {
      if (out_bad_offset) *out_bad_offset = i;
      return 0;
    }
    i += extra + 1;
  }
  return 1;
}

typedef struct path_t {
  hetc_json_path_style_t style;
  char *text;
  size_t size, length;
} path_t;

/* Appends to the path, clipped at its size (a clipped path still names the
 * start of the way). */
static void append(path_t *path, const char *bytes, size_t count) {
  if (path->length + 1 >= path->size) return;
  if (count > path->size - 1 - path->length) count = path->size - 1 - path->length;
  memcpy(path->text + path->length, bytes, count);
  path->length += count;
  path->text[path->length] = '\0';
}

static void append_member(path_t *path, const char *name) {
  if (path->style == HETC_JSON_PATH_POINTER) {
    append(path, "/", 1);
    for (const char *c = name; *c; ++c) {
      if (*c == '~') append(path, "~0", 2);
      else if (*c == '/') append(path, "~1", 2);
      else append(path, c, 1);
    }
  } else {
    if (path->length) append(path, ".", 1);
    append(path, name, strlen(name));
  }
}

static void append_index(path_t *path, int index) {
  char text[24];
  snprintf(text, sizeof(text), path->style == HETC_JSON_PATH_POINTER ? "/%d" : "[%d]", index);
  append(path, text, strlen(text));
}

static void truncate_to(path_t *path, size_t length) {
  if (length < path->length) {
    path->length = length;
    path->text[length] = '\0';
  }
}

/* Depth-first; cJSON's nesting limit bounds the recursion. */
static int find_invalid(const cJSON *item, path_t *path, int *out_is_name, size_t *out_bad_offset) {
  if (cJSON_IsString(item) && item->valuestring &&
      !hetc_utf8_valid(item->valuestring, strlen(item->valuestring), out_bad_offset)) {
    *out_is_name = 0;
    return 1;
  }
  const int is_object = cJSON_IsObject(item);
  if (!is_object && !cJSON_IsArray(item)) return 0;
  int index = 0;
  for (const cJSON *child = item->child; child; child = child->next, ++index) {
    const size_t mark = path->length;
    if (is_object) {
      const char *name = child->string ? child->string : "";
      if (!hetc_utf8_valid(name, strlen(name), out_bad_offset)) {
        *out_is_name = 1;
        return 1;
      }
      append_member(path, name);
    } else {
      append_index(path, index);
    }
    if (find_invalid(child, path, out_is_name, out_bad_offset)) return 1;
    truncate_to(path, mark);
  }
  return 0;
}

int hetc_json_find_invalid_utf8(const cJSON *root, hetc_json_path_style_t style, char *out_path,
                                size_t size, int *out_is_name, size_t *out_bad_offset) {
  if (size == 0) return 0;
  path_t path = {style, out_path, size, 0};
  out_path[0] = '\0';
  size_t bad_offset = 0;
  int is_name = 0;
  if (!find_invalid(root, &path, &is_name, &bad_offset)) return 0;
  if (path.length == 0) snprintf(out_path, size, "%s", style == HETC_JSON_PATH_POINTER ? "/" : "top level");
  if (out_is_name) *out_is_name = is_name;
  if (out_bad_offset) *out_bad_offset = bad_offset;
  return 1;
}
