/* plugins/common/plugin_files.h -- what the built-in plugins' kernel caches
 * need besides the kit's files (hetc/kit/files.h): a 64-bit FNV-1a hash for
 * cache keys and the per-plugin cache directory. */
#ifndef HETC_PLUGINS_COMMON_PLUGIN_FILES_H_
#define HETC_PLUGINS_COMMON_PLUGIN_FILES_H_

#include <stddef.h>
#include <stdint.h>

#include "hetc/kit/files.h"

#define HPC_FNV1A64_INIT 0xcbf29ce484222325ULL
/* Continues `hash` over `length` bytes (start from HPC_FNV1A64_INIT). */
uint64_t hpc_fnv1a64(const void *data, size_t length, uint64_t hash);

/* A whole file of the plugin's own (its cache, a package it wrote), of
 * any size: hetc_kit_read_file without a limit; the caller free()s it. */
static inline char *hpc_read_file(const char *path, size_t *out_length) {
  return hetc_kit_read_file(path, SIZE_MAX, out_length);
}

/* "$XDG_CACHE_HOME/hetc/<name>" (else "$HOME/.cache/hetc/<name>"; either
 * only when absolute), created when missing (malloc()ed: the caller
 * frees). NULL when there is no such directory, it cannot be made or it
 * cannot be written. */
char *hpc_cache_dir(const char *name);

#endif /* HETC_PLUGINS_COMMON_PLUGIN_FILES_H_ */
