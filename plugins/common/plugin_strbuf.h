/* plugins/common/plugin_strbuf.h -- a growable string for emitting source.
 *
 * Appends never fail loudly: an allocation failure sets `failed`, later
 * appends are ignored, and the owner checks `failed` once at the end. */
#ifndef HETC_PLUGINS_COMMON_PLUGIN_STRBUF_H_
#define HETC_PLUGINS_COMMON_PLUGIN_STRBUF_H_

#include <stdarg.h>
#include <stddef.h>

typedef struct hpc_strbuf_t {
  char *data;    /* NUL-terminated once anything was appended; owned */
  size_t length; /* bytes before the NUL */
  size_t capacity;
  int failed;    /* 1 after an allocation failure */
} hpc_strbuf_t;

void hpc_strbuf_init(hpc_strbuf_t *sb);
void hpc_strbuf_free(hpc_strbuf_t *sb);
/* Appends printf-formatted text. */
void hpc_strbuf_printf(hpc_strbuf_t *sb, const char *format, ...)
    __attribute__((format(printf, 2, 3)));
void hpc_strbuf_vprintf(hpc_strbuf_t *sb, const char *format, va_list args);
/* Appends `indent` levels of two spaces, the formatted text and a newline. */
void hpc_strbuf_line(hpc_strbuf_t *sb, int indent, const char *format, ...)
    __attribute__((format(printf, 3, 4)));
void hpc_strbuf_append(hpc_strbuf_t *sb, const char *text, size_t length);
/* Hands the string to the caller (free() it) and resets sb; NULL when an
 * append failed or nothing was appended. */
char *hpc_strbuf_take(hpc_strbuf_t *sb, size_t *out_length);

#endif /* HETC_PLUGINS_COMMON_PLUGIN_STRBUF_H_ */
