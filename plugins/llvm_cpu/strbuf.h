/* plugins/cpu_c/strbuf.h -- a growable string for emitting C source.
 *
 * Appends never fail loudly: an allocation failure sets `failed`, later
 * appends are ignored, and the owner checks `failed` once at the end. */
#ifndef HETC_PLUGINS_LLVM_CPU_STRBUF_H_
#define HETC_PLUGINS_LLVM_CPU_STRBUF_H_

#include <stdarg.h>
#include <stddef.h>

typedef struct cpu_strbuf_t {
  char *data;    /* NUL-terminated once anything was appended; owned */
  size_t length; /* bytes before the NUL */
  size_t capacity;
  int failed;    /* 1 after an allocation failure */
} cpu_strbuf_t;

void cpu_strbuf_init(cpu_strbuf_t *sb);
void cpu_strbuf_free(cpu_strbuf_t *sb);
/* Appends printf-formatted text. */
void cpu_strbuf_printf(cpu_strbuf_t *sb, const char *format, ...)
    __attribute__((format(printf, 2, 3)));
void cpu_strbuf_vprintf(cpu_strbuf_t *sb, const char *format, va_list args);
/* Appends `indent` levels of two spaces, the formatted text and a newline. */
void cpu_strbuf_line(cpu_strbuf_t *sb, int indent, const char *format, ...)
    __attribute__((format(printf, 3, 4)));
void cpu_strbuf_append(cpu_strbuf_t *sb, const char *text, size_t length);
/* Hands the string to the caller (free() it) and resets sb; NULL when an
 * append failed or nothing was appended. */
char *cpu_strbuf_take(cpu_strbuf_t *sb, size_t *out_length);

#endif /* HETC_PLUGINS_LLVM_CPU_STRBUF_H_ */
