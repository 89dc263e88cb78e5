#include "plugin_strbuf.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void hpc_strbuf_init(hpc_strbuf_t *sb) { memset(sb, 0, sizeof(*sb)); }

void hpc_strbuf_free(hpc_strbuf_t *sb) {
  free(sb->data);
  memset(sb, 0, sizeof(*sb));
}

static int reserve(hpc_strbuf_t *sb, size_t extra) {
  if (sb->failed) return 0;
  size_t need = sb->length + extra + 1;
  if (need <= sb->capacity) return 1;
  size_t capacity = sb->capacity ? sb->capacity : 256;
  while (capacity < need) capacity *= 2;
  char *data = realloc(sb->data, capacity);
  if (!data) {
    sb->failed = 1;
    return 0;
  }
  sb->data = data;
  sb->capacity = capacity;
  return 1;
}

void hpc_strbuf_append(hpc_strbuf_t *sb, const char *text, size_t length) {
  if (!reserve(sb, length)) return;
  memcpy(sb->data + sb->length, text, length);
  sb->length += length;
  sb->data[sb->length] = '\0';
}

void hpc_strbuf_vprintf(hpc_strbuf_t *sb, const char *format, va_list args) {
  va_list copy;
  va_copy(copy, args);
  int length = vsnprintf(NULL, 0, format, copy);
  va_end(copy);
  if (length < 0) {
    sb->failed = 1;
    return;
  }
  if (!reserve(sb, (size_t)length)) return;
  vsnprintf(sb->data + sb->length, (size_t)length + 1, format, args);
  sb->length += (size_t)length;
}

void hpc_strbuf_printf(hpc_strbuf_t *sb, const char *format, ...) {
  va_list args;
  va_start(args, format);
  hpc_strbuf_vprintf(sb, format, args);
  va_end(args);
}

void hpc_strbuf_line(hpc_strbuf_t *sb, int indent, const char *format, ...) {
  static const char spaces[] = "                                        ";
  while (indent > 0) {
    int n = indent > 20 ? 20 : indent;
    hpc_strbuf_append(sb, spaces, (size_t)n * 2);
    indent -= n;
  }
  va_list args;
  va_start(args, format);
  hpc_strbuf_vprintf(sb, format, args);
  va_end(args);
  hpc_strbuf_append(sb, "\n", 1);
}

char *hpc_strbuf_take(hpc_strbuf_t *sb, size_t *out_length) {
  char *data = sb->failed ? NULL : sb->data;
  if (sb->failed) free(sb->data);
  if (out_length) *out_length = data ? sb->length : 0;
  memset(sb, 0, sizeof(*sb));
  return data;
}
