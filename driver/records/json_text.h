/* driver/records/json_text.h -- a growing text buffer that writes JSON values
 * byte for byte the same way every time (private to driver/tune).
 *
 * Records files and the store keep JSON text that must round-trip exactly
 * (export -> import -> export is byte-identical), so the records code writes
 * JSON itself instead of through cJSON's printer: integers are printed as
 * integers at any magnitude (cJSON switches to %g above 2^31), doubles in
 * their shortest form that reads back to the same bits. Parsing still goes
 * through cJSON. */
#ifndef HETC_DRIVER_RECORDS_JSON_TEXT_H_
#define HETC_DRIVER_RECORDS_JSON_TEXT_H_

#include <stddef.h>
#include <stdint.h>

/* Zero-initialise ({0}) before use. After any allocation failure `failed`
 * is set and later appends do nothing, so callers check once at the end.
 * `data` is NUL-terminated whenever it is non-NULL and owned by the buffer
 * until taken with hetc_json_text_take or released with hetc_json_text_free. */
typedef struct hetc_json_text_t {
  char *data;
  size_t length;
  size_t capacity;
  int failed;
} hetc_json_text_t;

void hetc_json_text_raw(hetc_json_text_t *text, const char *raw);
/* A JSON string literal: quotes, and escapes for '"', '\\' and control
 * characters; other bytes (UTF-8) are copied unchanged. */
void hetc_json_text_string(hetc_json_text_t *text, const char *value);
void hetc_json_text_int(hetc_json_text_t *text, int64_t value);
/* The shortest of %.15g, %.16g, %.17g that strtod reads back exactly.
 * The caller guarantees a finite value (JSON has no inf or nan). */
void hetc_json_text_double(hetc_json_text_t *text, double value);

/* The length (1 to 4) of the well-formed UTF-8 sequence at `p`, 0 when
 * the bytes there are not one (a NUL ends the text: never read past it). */
size_t hetc_utf8_sequence_length(const char *p);
/* A copy of `text` with each byte that is not part of well-formed UTF-8
 * replaced by U+FFFD, for messages from plugins and compilers that may
 * print in another encoding. Owned by the caller (free); NULL when out of
 * memory. */
char *hetc_utf8_sanitized(const char *text);

/* Hands the text to the caller (free), or NULL after an allocation
 * failure (the buffer is then released). Resets the buffer. */
char *hetc_json_text_take(hetc_json_text_t *text);
void hetc_json_text_free(hetc_json_text_t *text);

#endif /* HETC_DRIVER_RECORDS_JSON_TEXT_H_ */
