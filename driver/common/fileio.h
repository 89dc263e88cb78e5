/* driver/common/fileio.h -- files and paths, with errors that name them. */
#ifndef HETC_DRIVER_COMMON_FILEIO_H_
#define HETC_DRIVER_COMMON_FILEIO_H_

#include <stddef.h>

#include "common/status.h"

/* Reads a whole file (at most max_bytes) into *out_data, NUL-terminated;
 * *out_data is owned by the caller (free). Errors are IO_ERROR, or
 * BAD_INPUT when the file is too large. */
hetc_status_t hetc_file_read_all(const char *path, size_t max_bytes, char **out_data,
                                 size_t *out_length);

/* Writes `bytes` to `path` (created or truncated). */
/* Line and column (both from 1) of byte `offset` in `text`, for messages
 * about JSON files cJSON refused. */
void hetc_text_position(const char *text, size_t length, size_t offset, int *out_line, int *out_column);

hetc_status_t hetc_file_write_all(const char *path, const void *data, size_t bytes);

/* "dir/name", or name alone when it is absolute or dir is empty. Caller frees. */
char *hetc_path_join(const char *dir, const char *name);

/* Directory part of a path ("." when none). Caller frees. */
char *hetc_path_dirname(const char *path);

/* Creates a fresh directory with a unique name beside `final_path`
 * ("<final_path>.tmp-XXXXXX"); *out_dir is owned by the caller. */
hetc_status_t hetc_dir_create_temp_beside(const char *final_path, char **out_dir);

/* Deletes a directory tree (files and subdirectories). Missing is fine. */
void hetc_dir_remove_tree(const char *path);

/* Renames a finished temporary directory into place. An existing
 * directory at final_path is replaced only when it holds a regular file
 * named `replaceable_marker` (an earlier output of the same kind); anything
 * else there is an error and is left alone. */
hetc_status_t hetc_dir_commit(const char *temp_dir, const char *final_path,
                              const char *replaceable_marker);

#endif /* HETC_DRIVER_COMMON_FILEIO_H_ */
