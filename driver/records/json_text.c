#include "records/json_text.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void append(hetc_json_text_t *text, const char *bytes, size_t count) {
  if (text->failed) return;
  if (text->length + count + 1 > text->capacity) {
    size_t capacity = text->capacity ? text->capacity : 256;
    while (text->length + count + 1 > capacity) capacity *= 2;
    char *grown = realloc(text->data, capacity);
    if (!grown) {
      text->failed = 1;
      return;
    }
    text->data = grown;
    text->capacity = capacity;
  }
  memcpy(text->data + text->length, bytes, count);
  text->length += count;
  text->data[text->length] = '\0';
}

void hetc_json_text_raw(hetc_json_text_t *text, const char *raw) {
  append(text, raw, strlen(raw));
}

void hetc_json_text_string(hetc_json_text_t *text, const char *value) {
  append(text, "\"", 1);
  const char *run = value; /* start of the bytes not yet copied */
  for (const char *p = value;; ++p) {
    unsigned char c = (unsigned char)*p;
    if (c != '\0' && c != '"' && c != '\\' && c >= 0x20) continue;
    append(text, run, (size_t)(p - run));
    if (c == '\0') break;
    char escape[8];
    switch (c) {
      case '"': strcpy(escape, "\\\""); break;
      case '\\': strcpy(escape, "\\\\"); break;
      case '\b': strcpy(escape, "\\b"); break;
      case '\f': strcpy(escape, "\\f"); break;
      case '\n': strcpy(escape, "\\n"); break;
      case '\r': strcpy(escape, "\\r"); break;
      case '\t': strcpy(escape, "\\t"); break;
      default: snprintf(escape, sizeof(escape), "\\u%04x", c); break;
    }
    append(text, escape, strlen(escape));
    run = p + 1;
  }
  append(text, "\"", 1);
}

void hetc_json_text_int(hetc_json_text_t *text, int64_t value) {
  char digits[32];
  snprintf(digits, sizeof(digits), "%lld", (long long)value);
  hetc_json_text_raw(text, digits);
}

void hetc_json_text_double(hetc_json_text_t *text, double value) {
  char digits[40];
  for (int precision = 15; precision <= 17; ++precision) {
    snprintf(digits, sizeof(digits), "%.*g", precision, value);
    if (strtod(digits, NULL) == value) break;
  }
  hetc_json_text_raw(text, digits);
}

/* The length of the well-formed UTF-8 sequence at `p`, or 0 (RFC 3629
 * table 3-7: the second byte's range depends on the first). */
static size_t utf8_sequence(const unsigned char *p) {
  unsigned char c = p[0];
  if (c < 0x80) return 1;
  unsigned char low = 0x80, high = 0xBF;
  size_t length;
  if (c >= 0xC2 && c <= 0xDF) {
    length = 2;
  } else if (c >= 0xE0 && c <= 0xEF) {
    length = 3;
    if (c == 0xE0) low = 0xA0;
    if (c == 0xED) high = 0x9F; /* no surrogates */
  } else if (c >= 0xF0 && c <= 0xF4) {
    length = 4;
    if (c == 0xF0) low = 0x90;
    if (c == 0xF4) high = 0x8F; /* nothing above U+10FFFF */
  } else {
    return 0;
  }
  if (p[1] < low || p[1] > high) return 0;
  for (size_t i = 2; i < length; ++i)
    if (p[i] < 0x80 || p[i] > 0xBF) return 0;
  return length;
}

size_t hetc_utf8_sequence_length(const char *p) { return *p ? utf8_sequence((const unsigned char *)p) : 0; }

char *hetc_utf8_sanitized(const char *text) {
  hetc_json_text_t out = {0};
  const unsigned char *p = (const unsigned char *)text;
  while (*p) {
    size_t length = utf8_sequence(p);
    if (length) {
      append(&out, (const char *)p, length);
      p += length;
    } else {
      append(&out, "\xEF\xBF\xBD", 3);
      ++p;
    }
  }
  return hetc_json_text_take(&out);
}

char *hetc_json_text_take(hetc_json_text_t *text) {
  char *data = text->failed ? NULL : text->data;
  if (text->failed) free(text->data);
  /* An empty buffer still hands back an empty string. */
  if (!text->failed && !data) data = calloc(1, 1);
  memset(text, 0, sizeof(*text));
  return data;
}

void hetc_json_text_free(hetc_json_text_t *text) {
  free(text->data);
  memset(text, 0, sizeof(*text));
}
