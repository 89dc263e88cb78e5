/* plugins/common/plugin_files.h -- files and hashes the built-in plugins
 * need for their kernel caches and packages: a 64-bit FNV-1a hash for cache
 * keys, whole-file reads, writes that never leave a half-written file, and
 * the per-plugin cache directory. */
#ifndef HETC_PLUGINS_COMMON_PLUGIN_FILES_H_
#define HETC_PLUGINS_COMMON_PLUGIN_FILES_H_

#include <stddef.h>
#include <stdint.h>

#define HPC_FNV1A64_INIT 0xcbf29ce484222325ULL
/* Continues `hash` over `length` bytes (start from HPC_FNV1A64_INIT). */
uint64_t hpc_fnv1a64(const void *data, size_t length, uint64_t hash);

/* The whole file, NUL-terminated (malloc()ed: the caller frees); its length
 * without the NUL in *out_length when given. NULL when it cannot be read. */
char *hpc_read_file(const char *path, size_t *out_length);
/* Writes through a temporary name and rename(), so readers see the old
 * file or the new one. 0, or -1 with errno set. */
int hpc_write_file_atomic(const char *path, const void *data, size_t length);
/* "$XDG_CACHE_HOME/hetc/<name>" (else "$HOME/.cache/hetc/<name>"),
 * created when missing (malloc()ed: the caller frees). NULL when there is
 * no such directory and it cannot be made. */
char *hpc_cache_dir(const char *name);

#endif /* HETC_PLUGINS_COMMON_PLUGIN_FILES_H_ */
