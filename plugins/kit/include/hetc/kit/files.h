/* hetc/kit/files.h -- whole files: written so that a reader never sees
 * half of one, read back whole with a size limit. */
#ifndef HETC_KIT_FILES_H_
#define HETC_KIT_FILES_H_

#include <stddef.h>

#include <hetc/plugin.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Writes through a temporary name beside `path` and rename(), so readers
 * see the old file or the new one, never a part. Threads and processes may
 * write the same path at once. 0, or -1 with errno set. */
int hetc_kit_write_file_atomic(const char *path, const void *data, size_t length);

/* hetc_kit_write_file_atomic with a failure status (bound host) naming the
 * plugin, the file and the system's reason. */
hetc_plugin_status_t hetc_kit_write_file(const char *path, const void *data, size_t length);

/* The whole file, NUL-terminated, malloc()ed: the caller free()s it; its
 * length without the NUL in *out_length when given. NULL with errno set
 * when it cannot be read, EFBIG when it is larger than max_bytes (pass
 * SIZE_MAX for no limit). */
char *hetc_kit_read_file(const char *path, size_t max_bytes, size_t *out_length);

#ifdef __cplusplus
}
#endif

#endif /* HETC_KIT_FILES_H_ */
