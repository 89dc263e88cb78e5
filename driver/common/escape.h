/* driver/common/escape.h -- text from an input, made safe to print.
 *
 * A model, a records file or a database can hold any byte in a name. Echoed
 * raw, a newline would fake another line of output and an escape sequence
 * would drive the terminal; escaped, every such byte shows as \xNN. */
#ifndef HETC_DRIVER_COMMON_ESCAPE_H_
#define HETC_DRIVER_COMMON_ESCAPE_H_

#include <stddef.h>

/* Whether `text` holds a byte that hetc_escape_controls would escape. */
int hetc_needs_escape(const char *text, const char *keep);

/* `text` with every control byte not in `keep` (C0 controls, DEL, and the
 * C1 controls U+0080..U+009F as UTF-8 writes them) written as \xNN (each
 * byte of a C1 control). Returns a new string the caller frees, or NULL
 * when out of memory. */
char *hetc_escape_controls(const char *text, const char *keep);

#endif /* HETC_DRIVER_COMMON_ESCAPE_H_ */
