/* One-file artifacts: written, then read back and compared line by line
 * (hetc/kit/artifact_file.h). */
#include "hetc/kit/artifact_file.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hetc/kit/files.h"
#include "hetc/kit/host.h"
#include "hetc/kit/status.h"

/* <dir>/<prefix><suffix> into path; 0 when it does not fit. */
static int artifact_path(const char *dir, const char *prefix, const char *suffix, char *path, size_t size) {
  const int n = snprintf(path, size, "%s/%s%s", dir, prefix, suffix);
  return n > 0 && (size_t)n < size;
}

static hetc_plugin_status_t path_too_long(const char *dir) {
  return hetc_kit_status(HETC_PLUGIN_STATUS_INVALID_ARGUMENT, "%s: the artifact's path in %s is too long",
                         hetc_kit_plugin_name(), dir);
}

hetc_plugin_status_t hetc_kit_artifact_file_write(const char *dir, const char *prefix, const char *suffix,
                                                  const char *text) {
  char path[4096];
  if (!artifact_path(dir, prefix, suffix, path, sizeof(path))) return path_too_long(dir);
  return hetc_kit_write_file(path, text, strlen(text));
}

/* A line of an artifact file fit for a message: at most 120 characters,
 * bytes outside printable ASCII shown as '?'. */
static void quote_line(const char *p, size_t n, char *buf, size_t size) {
  size_t o = 0;
  for (size_t i = 0; i < n && o + 4 < size; ++i) buf[o++] = p[i] >= 0x20 && p[i] < 0x7f ? p[i] : '?';
  if (o + 4 >= size && n > o) {
    memcpy(buf + o, "...", 3);
    o += 3;
  }
  buf[o] = '\0';
}

/* Compares line by line, so that the reason names what differs. */
static hetc_plugin_status_t compare(const char *path, const char *got, size_t got_length, const char *want,
                                    const char *const *line_names, int32_t num_lines) {
  const char *plugin = hetc_kit_plugin_name();
  size_t g = 0, w = 0;
  for (int32_t line = 0; line < num_lines; ++line) {
    const size_t wn = strcspn(want + w, "\n");
    size_t gn = 0;
    while (g + gn < got_length && got[g + gn] != '\n') ++gn;
    if (g >= got_length)
      return hetc_kit_status(HETC_PLUGIN_STATUS_INVALID_ARGUMENT,
                             "%s: %s ends before its %s line: truncated or not a %s artifact", plugin, path,
                             line_names[line], plugin);
    if (gn != wn || memcmp(got + g, want + w, wn) != 0) {
      char have[128], need[128];
      quote_line(got + g, gn, have, sizeof(have));
      quote_line(want + w, wn, need, sizeof(need));
      if (line == 0)
        return hetc_kit_status(HETC_PLUGIN_STATUS_INVALID_ARGUMENT,
                               "%s: %s is not a %s artifact of this format (first line '%s', expected '%s')", plugin,
                               path, plugin, have, need);
      return hetc_kit_status(HETC_PLUGIN_STATUS_INVALID_ARGUMENT,
                             "%s: %s was emitted for another %s: it has '%s', this load asks for '%s'", plugin, path,
                             line_names[line], have, need);
    }
    if (g + gn >= got_length)
      return hetc_kit_status(HETC_PLUGIN_STATUS_INVALID_ARGUMENT, "%s: %s ends inside its %s line: truncated", plugin,
                             path, line_names[line]);
    g += gn + 1;
    w += wn + 1;
  }
  if (g != got_length)
    return hetc_kit_status(HETC_PLUGIN_STATUS_INVALID_ARGUMENT, "%s: %s has %llu bytes after its last line: corrupt",
                           plugin, path, (unsigned long long)(got_length - g));
  return NULL;
}

hetc_plugin_status_t hetc_kit_artifact_file_expect(const char *dir, const char *prefix, const char *suffix,
                                                   const char *expected, const char *const *line_names,
                                                   int32_t num_lines, size_t max_bytes) {
  const char *plugin = hetc_kit_plugin_name();
  char path[4096];
  if (!artifact_path(dir, prefix, suffix, path, sizeof(path))) return path_too_long(dir);
  size_t length = 0;
  char *got = hetc_kit_read_file(path, max_bytes, &length);
  if (!got && errno == EFBIG)
    return hetc_kit_status(HETC_PLUGIN_STATUS_INVALID_ARGUMENT, "%s: %s is larger than any %s artifact", plugin, path,
                           plugin);
  if (!got)
    return hetc_kit_status(HETC_PLUGIN_STATUS_INVALID_ARGUMENT, "%s: cannot read %s: %s", plugin, path,
                           strerror(errno));
  hetc_plugin_status_t s = compare(path, got, length, expected, line_names, num_lines);
  free(got);
  return s;
}
