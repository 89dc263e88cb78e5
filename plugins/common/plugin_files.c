/* Cache keys and cache directories for the built-in plugins. */
#define _POSIX_C_SOURCE 200809L
#include "plugin_files.h"

#include <errno.h>
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
  /* The XDG rule: a relative path in the variable is ignored. */
  const char *xdg = getenv("XDG_CACHE_HOME");
  const char *home = getenv("HOME");
  char path[4096];
  int n;
  if (xdg && xdg[0] == '/')
    n = snprintf(path, sizeof(path), "%s/hetc/%s", xdg, name);
  else if (home && home[0] == '/')
    n = snprintf(path, sizeof(path), "%s/.cache/hetc/%s", home, name);
  else
    return NULL;
  if (n <= 0 || (size_t)n >= sizeof(path) || !make_dirs(path) || access(path, W_OK) != 0) return NULL;
  return strdup(path);
}
