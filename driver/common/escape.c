/* Control bytes as \xNN (escape.h). */
#include "common/escape.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* How many bytes at p form one control to escape (0: none). */
static size_t control_at(const unsigned char *p, const char *keep) {
  if (p[0] < 0x20 || p[0] == 0x7f) return keep && strchr(keep, p[0]) ? 0 : 1;
  if (p[0] == 0xc2 && p[1] >= 0x80 && p[1] <= 0x9f) return 2;
  return 0;
}

int hetc_needs_escape(const char *text, const char *keep) {
  for (const unsigned char *p = (const unsigned char *)text; *p; ++p)
    if (control_at(p, keep)) return 1;
  return 0;
}

char *hetc_escape_controls(const char *text, const char *keep) {
  size_t length = 0;
  for (const unsigned char *p = (const unsigned char *)text; *p;) {
    const size_t bytes = control_at(p, keep);
    length += bytes ? 4 * bytes : 1;
    p += bytes ? bytes : 1;
  }
  char *out = malloc(length + 1), *o = out;
  if (!out) return NULL;
  for (const unsigned char *p = (const unsigned char *)text; *p;) {
    size_t bytes = control_at(p, keep);
    if (!bytes) {
      *o++ = (char)*p++;
      continue;
    }
    for (; bytes; --bytes, ++p) o += sprintf(o, "\\x%02x", *p);
  }
  *o = 0;
  return out;
}
