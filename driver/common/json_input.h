/* driver/common/json_input.h -- checks shared by every reader of a JSON
 * file a user hands hetc (models, space overrides, and whoever else parses
 * with cJSON): why cJSON refused a text, NUL escapes it would silently cut
 * strings at, and strings that are not UTF-8 (which hetc would otherwise
 * copy into the JSON it writes, such as a package's manifest.json, for
 * JSON readers to refuse later). */
#ifndef HETC_DRIVER_COMMON_JSON_INPUT_H_
#define HETC_DRIVER_COMMON_JSON_INPUT_H_

#include <cjson/cJSON.h>
#include <stddef.h>

/* How deep arrays and objects may nest: cJSON's own limit, which it reports
 * as an ordinary syntax error. */
#define HETC_JSON_MAX_DEPTH CJSON_NESTING_LIMIT

/* Why cJSON stopped at byte `offset` of `text`: "arrays and objects nested
 * deeper than 1000 levels" when an array or object opens there with
 * HETC_JSON_MAX_DEPTH levels already open, else "not valid JSON". The
 * string is static. */
const char *hetc_json_syntax_error(const char *text, size_t length, size_t offset);

/* 1 and the offset of the backslash when `text` (which cJSON accepted, so
 * every backslash starts an escape) holds \u0000: cJSON decodes it into a
 * NUL that cuts the string short ("conv\u0000x" reads as "conv"). */
int hetc_json_find_escaped_nul(const char *text, size_t length, size_t *out_offset);

/* 1 when `bytes` is well-formed UTF-8 (RFC 3629: no overlong forms, no
 * surrogates, nothing above U+10FFFF); else 0 with the offset of the first
 * byte of the bad sequence in *out_bad_offset (may be NULL). */
int hetc_utf8_valid(const char *bytes, size_t length, size_t *out_bad_offset);

typedef enum hetc_json_path_style_t {
  HETC_JSON_PATH_POINTER, /* RFC 6901: /nodes/3/name ("/" for the root) */
  HETC_JSON_PATH_DOTTED   /* templates.conv.add.k[2] ("top level" for the root) */
} hetc_json_path_style_t;

/* Looks for the first member name or string value under `root` that is not
 * UTF-8 (member names before their values, in document order). Returns 1
 * when one is found, with where it is in `out_path` (`size` bytes; the path
 * of the string value, or of the object whose member name is bad, with
 * *out_is_name set) and the offset of the bad byte inside the string. */
int hetc_json_find_invalid_utf8(const cJSON *root, hetc_json_path_style_t style, char *out_path,
                                size_t size, int *out_is_name, size_t *out_bad_offset);

#endif /* HETC_DRIVER_COMMON_JSON_INPUT_H_ */
