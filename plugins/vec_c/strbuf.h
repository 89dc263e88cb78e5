/* plugins/vec_c/strbuf.h -- a growable string for emitting C source.
 *
 * Appends never fail loudly: an allocation failure sets `failed`, later
 * appends are ignored, and the owner checks `failed` once at the end. */
#ifndef HETC_PLUGINS_VEC_C_STRBUF_H_
#define HETC_PLUGINS_VEC_C_STRBUF_H_

#include <stdarg.h>
#include <stddef.h>

typedef struct vec_strbuf_t {
  char *data;    /* NUL-terminated once anything was appended; owned */
  size_t length; /* bytes before the NUL */
  size_t capacity;
  int failed;    /* 1 after an allocation failure */
} vec_strbuf_t;

void vec_strbuf_init(vec_strbuf_t *sb);
void vec_strbuf_free(vec_strbuf_t *sb);
/* Appends printf-formatted text. */
void vec_strbuf_printf(vec_strbuf_t *sb, const char *format, ...)
    __attribute__((format(printf, 2, 3)));
void vec_strbuf_vprintf(vec_strbuf_t *sb, const char *format, va_list args);
/* Appends `indent` levels of two spaces, the formatted text and a newline. */
void vec_strbuf_line(vec_strbuf_t *sb, int indent, const char *format, ...)
    __attribute__((format(printf, 3, 4)));
void vec_strbuf_append(vec_strbuf_t *sb, const char *text, size_t length);
/* Hands the string to the caller (free() it) and resets sb; NULL when an
 * append failed or nothing was appended. */
char *vec_strbuf_take(vec_strbuf_t *sb, size_t *out_length);

#endif /* HETC_PLUGINS_VEC_C_STRBUF_H_ */
