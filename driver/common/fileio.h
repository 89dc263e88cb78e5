/* driver/common/fileio.h -- files and paths, with errors that name them. */
#ifndef HETC_DRIVER_COMMON_FILEIO_H_
#define HETC_DRIVER_COMMON_FILEIO_H_

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "common/status.h"

/* Opens `path` for reading only when it is a regular file: a FIFO, device,
 * socket or directory is refused (BAD_INPUT, saying what it is) without
 * blocking, since opening a FIFO for reading waits for a writer forever.
 * Returns the descriptor (blocking, close-on-exec) in *out_fd; the caller
 * closes it. *out_bytes (may be NULL) is the file's size. */
hetc_status_t hetc_file_open_regular(const char *path, int *out_fd, uint64_t *out_bytes);

/* Opens `path` for reading without waiting for a FIFO's writer (a FIFO no
 * process writes then reads as empty), and makes the descriptor blocking
 * again; *out_info is what fstat says of it, for the caller to decide
 * which kinds it takes. The caller closes *out_fd. */
struct stat;
hetc_status_t hetc_file_open_input(const char *path, int *out_fd, struct stat *out_info);

/* What kind of file `mode` (st_mode) is, for messages: "a FIFO", "a
 * directory", ... */
const char *hetc_file_kind_name(unsigned mode);

/* The status for a failed write of `path` with errno `error`: STORAGE_FAILED
 * when the machine could not store it (disk full, quota, I/O error), else
 * IO_ERROR (the user named a place hetc cannot write). */
hetc_status_t hetc_file_write_failure(const char *path, const char *doing, int error);

/* Output files the user names (hetc_output_file_open, _write, _commit,
 * _abandon) are public: hetc/hetc.h. Inside hetc, the stream is the
 * caller's to write to until commit or abandon, which free the object. */
FILE *hetc_output_stream(hetc_output_file_t *output);

/* Reads a whole file (at most max_bytes) into *out_data, NUL-terminated;
 * *out_data is owned by the caller (free). Errors are IO_ERROR, or
 * BAD_INPUT when the file is too large. */
hetc_status_t hetc_file_read_all(const char *path, size_t max_bytes, char **out_data,
                                 size_t *out_length);

/* Line and column (both from 1) of byte `offset` in `text`, for messages
 * about JSON files cJSON refused. */
void hetc_text_position(const char *text, size_t length, size_t offset, int *out_line, int *out_column);

/* Writes `bytes` as the whole new content of `path`, replaced atomically
 * (hetc_output_file_t): a reader sees the old file or the new, never a
 * torn one. */
hetc_status_t hetc_file_replace(const char *path, const void *data, size_t bytes);

/* Writes `bytes` to `path` (created or truncated): for files inside a
 * directory hetc has just created, such as a package being written. */
hetc_status_t hetc_file_write_all(const char *path, const void *data, size_t bytes);

/* "dir/name", or name alone when it is absolute or dir is empty. Caller frees. */
char *hetc_path_join(const char *dir, const char *name);

/* Directory part of a path ("." when none). Caller frees. */
char *hetc_path_dirname(const char *path);

/* Creates a fresh directory with a unique name beside `final_path`
 * ("<final_path>.tmp-<pid>-XXXXXX"), after removing the temporaries of
 * processes that died before finishing theirs; *out_dir is owned by the
 * caller. */
hetc_status_t hetc_dir_create_temp_beside(const char *final_path, char **out_dir);

/* Removes "<final_path>.tmp-<pid>-*" and ".old-<pid>-*" directories whose
 * process no longer exists (a compile killed mid-way), saying so on
 * stderr; an ".old-" one is put back at final_path instead when nothing is
 * there (killed between moving the earlier output aside and renaming the
 * new one in). */
void hetc_dir_remove_stale_temporaries(const char *final_path);

/* Deletes a directory tree (files and subdirectories). Missing is fine. */
void hetc_dir_remove_tree(const char *path);

/* Renames a finished temporary directory into place. An existing
 * directory at final_path is replaced only when it holds a regular file
 * named `replaceable_marker` (an earlier output of the same kind); anything
 * else there is an error and is left alone. */
hetc_status_t hetc_dir_commit(const char *temp_dir, const char *final_path,
                              const char *replaceable_marker);

#endif /* HETC_DRIVER_COMMON_FILEIO_H_ */
