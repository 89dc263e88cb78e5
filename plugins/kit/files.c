/* Whole files, written atomically and read back bounded (hetc/kit/files.h). */
#define _POSIX_C_SOURCE 200809L /* getpid */
#include "hetc/kit/files.h"

#include <errno.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "hetc/kit/host.h"
#include "hetc/kit/status.h"

int hetc_kit_write_file_atomic(const char *path, const void *data, size_t length) {
  /* Unique per process and per call: threads of one process may write the
   * same cache entry at once. */
  static atomic_uint_fast64_t serial;
  const size_t n = strlen(path) + 48;
  char *tmp = malloc(n);
  if (!tmp) return -1;
  snprintf(tmp, n, "%s.tmp.%ld.%llu", path, (long)getpid(), (unsigned long long)atomic_fetch_add(&serial, 1));
  FILE *f = fopen(tmp, "wb");
  int ok = f && fwrite(data, 1, length, f) == length;
  if (f && fclose(f) != 0) ok = 0;
  if (ok && rename(tmp, path) != 0) ok = 0;
  if (!ok) {
    const int saved = errno ? errno : EIO;
    remove(tmp);
    errno = saved;
  }
  free(tmp);
  return ok ? 0 : -1;
}

hetc_plugin_status_t hetc_kit_write_file(const char *path, const void *data, size_t length) {
  if (hetc_kit_write_file_atomic(path, data, length) == 0) return NULL;
  return hetc_kit_status(HETC_PLUGIN_STATUS_INTERNAL, "%s: cannot write %s: %s", hetc_kit_plugin_name(), path,
                         strerror(errno));
}

char *hetc_kit_read_file(const char *path, size_t max_bytes, size_t *out_length) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  char *data = NULL;
  long size = -1;
  if (fseek(f, 0, SEEK_END) == 0) size = ftell(f);
  int error = size < 0 ? errno : 0;
  if (!error && (uintmax_t)size > max_bytes) error = EFBIG;
  if (!error && fseek(f, 0, SEEK_SET) != 0) error = errno;
  if (!error && !(data = malloc((size_t)size + 1))) error = ENOMEM;
  if (!error && fread(data, 1, (size_t)size, f) != (size_t)size) error = EIO;
  fclose(f);
  if (error) {
    free(data);
    errno = error;
    return NULL;
  }
  data[size] = '\0';
  if (out_length) *out_length = (size_t)size;
  return data;
}
