/* Files and hashes for the plugins' kernel caches and packages. */
#define _POSIX_C_SOURCE 200809L
#include "plugin_files.h"

#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

uint64_t hpc_fnv1a64(const void *data, size_t length, uint64_t hash) {
  const unsigned char *p = data;
  for (size_t i = 0; i < length; ++i) {
    hash ^= p[i];
    hash *= 0x100000001b3ULL;
  }
  return hash;
}

char *hpc_read_file(const char *path, size_t *out_length) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  char *data = NULL;
  long size = -1;
  if (fseek(f, 0, SEEK_END) == 0) size = ftell(f);
  if (size >= 0 && fseek(f, 0, SEEK_SET) == 0) {
    data = malloc((size_t)size + 1);
    if (data && fread(data, 1, (size_t)size, f) != (size_t)size) {
      free(data);
      data = NULL;
    }
  }
  fclose(f);
  if (!data) return NULL;
  data[size] = 0;
  if (out_length) *out_length = (size_t)size;
  return data;
}

int hpc_write_file_atomic(const char *path, const void *data, size_t length) {
  /* Unique per process and per call: threads of one process may write the
   * same cache entry at once. */
  static atomic_uint_fast64_t serial;
  size_t n = strlen(path) + 48;
  char *tmp = malloc(n);
  if (!tmp) return -1;
  snprintf(tmp, n, "%s.tmp.%ld.%llu", path, (long)getpid(), (unsigned long long)atomic_fetch_add(&serial, 1));
  FILE *f = fopen(tmp, "wb");
  int ok = f && fwrite(data, 1, length, f) == length;
  if (f && fclose(f) != 0) ok = 0;
  if (ok && rename(tmp, path) != 0) ok = 0;
  if (!ok) {
    const int saved = errno;
    remove(tmp);
    errno = saved;
  }
  free(tmp);
  return ok ? 0 : -1;
}

static int make_dirs(char *path) {
  for (char *p = path + 1; *p; ++p) {
    if (*p != '/') continue;
    *p = 0;
    int ok = mkdir(path, 0755) == 0 || errno == EEXIST;
    *p = '/';
    if (!ok) return 0;
  }
  return mkdir(path, 0755) == 0 || errno == EEXIST;
}

char *hpc_cache_dir(const char *name) {
  const char *xdg = getenv("XDG_CACHE_HOME");
  const char *home = getenv("HOME");
  char path[4096];
  int n;
  if (xdg && *xdg)
    n = snprintf(path, sizeof(path), "%s/hetc/%s", xdg, name);
  else if (home && *home)
    n = snprintf(path, sizeof(path), "%s/.cache/hetc/%s", home, name);
  else
    return NULL;
  if (n <= 0 || (size_t)n >= sizeof(path) || !make_dirs(path)) return NULL;
  return strdup(path);
}
