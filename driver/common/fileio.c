#include "common/fileio.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

const char *hetc_file_kind_name(unsigned mode) {
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISSOCK(mode)) return "a socket";
  if (S_ISLNK(mode)) return "a symbolic link";
  return "a regular file";
}

hetc_status_t hetc_file_open_input(const char *path, int *out_fd, struct stat *out_info) {
  *out_fd = -1;
  int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0)
    return hetc_status_new(HETC_STATUS_IO_ERROR, "%s: cannot open: %s", path, strerror(errno));
  if (fstat(fd, out_info) != 0) {
    hetc_status_t status = hetc_status_new(HETC_STATUS_IO_ERROR, "%s: %s", path, strerror(errno));
    close(fd);
    return status;
  }
  int flags = fcntl(fd, F_GETFL);
  if (flags >= 0) fcntl(fd, F_SETFL, flags & ~O_NONBLOCK);
  *out_fd = fd;
  return NULL;
}

hetc_status_t hetc_file_open_regular(const char *path, int *out_fd, uint64_t *out_bytes) {
  *out_fd = -1;
  if (!path || !path[0]) return hetc_status_new(HETC_STATUS_BAD_INPUT, "an empty path names no file");
  int fd;
  struct stat info;
  HETC_RETURN_IF_ERROR(hetc_file_open_input(path, &fd, &info));
  if (!S_ISREG(info.st_mode)) {
    close(fd);
    return hetc_status_new(HETC_STATUS_BAD_INPUT, "%s: is %s, not a regular file", path,
                           hetc_file_kind_name(info.st_mode));
  }
  *out_fd = fd;
  if (out_bytes) *out_bytes = (uint64_t)info.st_size;
  return NULL;
}

hetc_status_t hetc_file_read_all(const char *path, size_t max_bytes, char **out_data,
                                 size_t *out_length) {
  int fd;
  uint64_t size;
  HETC_RETURN_IF_ERROR(hetc_file_open_regular(path, &fd, &size));
  if (size > max_bytes) {
    close(fd);
    return hetc_status_new(HETC_STATUS_BAD_INPUT, "%s: file is %llu bytes, the limit is %zu", path,
                           (unsigned long long)size, max_bytes);
  }
  size_t length = (size_t)size;
  char *data = malloc(length + 1);
  if (!data) {
    close(fd);
    return hetc_status_new(HETC_STATUS_OUT_OF_MEMORY, "%s: reading %zu bytes", path, length);
  }
  size_t got = 0;
  int error = 0;
  while (got < length) {
    ssize_t n = read(fd, data + got, length - got);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) error = errno;
    if (n <= 0) break;
    got += (size_t)n;
  }
  close(fd);
  if (got != length) {
    free(data);
    /* A file that shrank while read is as bad as one that fails. */
    return hetc_status_new(HETC_STATUS_IO_ERROR, "%s: read failed: %s", path,
                           error ? strerror(error) : "the file got shorter while read");
  }
  data[length] = 0;
  *out_data = data;
  *out_length = length;
  return NULL;
}

hetc_status_t hetc_file_write_failure(const char *path, const char *doing, int error) {
  const int machine = error == ENOSPC || error == EDQUOT || error == EIO || error == EFBIG;
  return hetc_status_new(machine ? HETC_STATUS_STORAGE_FAILED : HETC_STATUS_IO_ERROR, "%s: %s: %s",
                         path, doing, strerror(error));
}

hetc_status_t hetc_file_write_all(const char *path, const void *data, size_t bytes) {
  FILE *file = fopen(path, "wb");
  if (!file) return hetc_file_write_failure(path, "cannot create", errno);
  size_t written = bytes ? fwrite(data, 1, bytes, file) : 0;
  int failed = written != bytes || ferror(file);
  int error = errno;
  if (fclose(file) != 0 && !failed) failed = 1, error = errno;
  if (failed) return hetc_file_write_failure(path, "write failed", error);
  return NULL;
}

char *hetc_path_join(const char *dir, const char *name) {
  if (name[0] == '/' || !dir || !dir[0]) return strdup(name);
  size_t length = strlen(dir) + strlen(name) + 2;
  char *path = malloc(length);
  if (path) snprintf(path, length, "%s/%s", dir, name);
  return path;
}

char *hetc_path_dirname(const char *path) {
  const char *slash = strrchr(path, '/');
  if (!slash) return strdup(".");
  if (slash == path) return strdup("/");
  return strndup(path, (size_t)(slash - path));
}

/* "<final>.<kind>-<pid>-": the prefix of a temporary a process makes beside
 * final_path; the pid lets a later process tell a dead one's leftovers. */
static char *temp_name(const char *final_path, const char *kind, long pid) {
  size_t length = strlen(final_path) + strlen(kind) + 40;
  char *name = malloc(length);
  if (name) snprintf(name, length, "%s.%s-%ld-XXXXXX", final_path, kind, pid);
  return name;
}

/* The pid in "<base>.<kind>-<pid>-XXXXXX", or 0 when `entry` is not such a
 * name. */
static long temp_owner(const char *entry, const char *base, const char *kind) {
  size_t base_length = strlen(base), kind_length = strlen(kind);
  if (strncmp(entry, base, base_length) != 0 || entry[base_length] != '.' ||
      strncmp(entry + base_length + 1, kind, kind_length) != 0 || entry[base_length + 1 + kind_length] != '-')
    return 0;
  char *end = NULL;
  long pid = strtol(entry + base_length + kind_length + 2, &end, 10);
  return pid > 0 && *end == '-' && strlen(end + 1) == 6 ? pid : 0;
}

static int process_is_gone(long pid) { return kill((pid_t)pid, 0) != 0 && errno == ESRCH; }

void hetc_dir_remove_stale_temporaries(const char *final_path) {
  char *dir_path = hetc_path_dirname(final_path);
  const char *slash = strrchr(final_path, '/');
  const char *base = slash ? slash + 1 : final_path;
  DIR *dir = dir_path ? opendir(dir_path) : NULL;
  struct dirent *entry;
  while (dir && (entry = readdir(dir))) {
    const long temp_pid = temp_owner(entry->d_name, base, "tmp");
    const long old_pid = temp_owner(entry->d_name, base, "old");
    if (!(temp_pid && process_is_gone(temp_pid)) && !(old_pid && process_is_gone(old_pid))) continue;
    char *path = hetc_path_join(dir_path, entry->d_name);
    struct stat info;
    if (path && old_pid && lstat(final_path, &info) != 0 && errno == ENOENT) {
      /* Killed while replacing: the earlier output was moved aside and the
       * new one never arrived. Put the earlier one back. */
      if (rename(path, final_path) == 0)
        fprintf(stderr, "hetc: restored %s, which an interrupted run had moved aside\n", final_path);
    } else if (path) {
      hetc_dir_remove_tree(path);
      fprintf(stderr, "hetc: removed %s, left behind by an interrupted run (process %ld)\n", path,
              temp_pid ? temp_pid : old_pid);
    }
    free(path);
  }
  if (dir) closedir(dir);
  free(dir_path);
}

hetc_status_t hetc_dir_create_temp_beside(const char *final_path, char **out_dir) {
  if (!final_path[0]) return hetc_status_new(HETC_STATUS_BAD_INPUT, "the output path is empty");
  hetc_dir_remove_stale_temporaries(final_path);
  char *dir = temp_name(final_path, "tmp", (long)getpid());
  if (!dir) return hetc_status_new(HETC_STATUS_OUT_OF_MEMORY, "temporary directory");
  if (!mkdtemp(dir)) {
    hetc_status_t status = hetc_file_write_failure(dir, "cannot create", errno);
    free(dir);
    return status;
  }
  *out_dir = dir;
  return NULL;
}

void hetc_dir_remove_tree(const char *path) {
  DIR *dir = opendir(path);
  if (!dir) {
    unlink(path);
    return;
  }
  struct dirent *entry;
  while ((entry = readdir(dir))) {
    if (!strcmp(entry->d_name, ".") || !strcmp(entry->d_name, "..")) continue;
    char *child = hetc_path_join(path, entry->d_name);
    if (!child) continue;
    struct stat info;
    if (lstat(child, &info) == 0 && S_ISDIR(info.st_mode)) {
      hetc_dir_remove_tree(child);
    } else {
      unlink(child);
    }
    free(child);
  }
  closedir(dir);
  rmdir(path);
}

hetc_status_t hetc_dir_commit(const char *temp_dir, const char *final_path,
                              const char *replaceable_marker) {
  struct stat info;
  if (lstat(final_path, &info) == 0) {
    /* Only an earlier package is replaced: never a directory that merely
     * happens to be at the output path. */
    char *marker = hetc_path_join(final_path, replaceable_marker);
    struct stat marker_info;
    int is_package = marker && lstat(marker, &marker_info) == 0 && S_ISREG(marker_info.st_mode);
    free(marker);
    if (!S_ISDIR(info.st_mode) || !is_package)
      return hetc_status_new(HETC_STATUS_IO_ERROR,
                             "%s: exists and is not a package directory; not replacing it",
                             final_path);
    /* Move the old package aside first so a failure leaves one of the two
     * complete packages in place. */
    char *old = temp_name(final_path, "old", (long)getpid());
    if (!old) return hetc_status_new(HETC_STATUS_OUT_OF_MEMORY, "package commit");
    if (!mkdtemp(old) || rename(final_path, old) != 0) {
      hetc_status_t status = hetc_status_new(HETC_STATUS_IO_ERROR, "%s: cannot replace: %s",
                                             final_path, strerror(errno));
      rmdir(old);
      free(old);
      return status;
    }
    if (rename(temp_dir, final_path) != 0) {
      hetc_status_t status = hetc_status_new(HETC_STATUS_IO_ERROR, "%s: cannot rename into place: %s",
                                             final_path, strerror(errno));
      rename(old, final_path);
      free(old);
      return status;
    }
    hetc_dir_remove_tree(old);
    free(old);
    return NULL;
  }
  if (rename(temp_dir, final_path) != 0)
    return hetc_status_new(HETC_STATUS_IO_ERROR, "%s: cannot rename into place: %s", final_path,
                           strerror(errno));
  return NULL;
}

void hetc_text_position(const char *text, size_t length, size_t offset, int *out_line, int *out_column) {
  int line = 1, column = 1;
  for (size_t i = 0; i < offset && i < length; ++i) {
    if (text[i] == '\n') {
      ++line;
      column = 1;
    } else {
      ++column;
    }
  }
  *out_line = line;
  *out_column = column;
}

/* ------------------------------------------------------------------------ */
/* Output files                                                             */
/* ------------------------------------------------------------------------ */

struct hetc_output_file_t {
  char *path;      /* as the user named it, for messages */
  char *target;    /* the file renamed over (a symlink's target), or NULL when written through */
  char *temp;      /* the temporary beside target */
  FILE *stream;
};

static void output_free(hetc_output_file_t *output) {
  free(output->path);
  free(output->target);
  free(output->temp);
  free(output);
}

hetc_status_t hetc_output_file_open(const char *path, hetc_output_file_t **out_output) {
  *out_output = NULL;
  if (!path || !path[0]) return hetc_status_new(HETC_STATUS_BAD_INPUT, "the output path is empty");
  hetc_output_file_t *output = calloc(1, sizeof(*output));
  if (!output || !(output->path = strdup(path))) {
    free(output);
    return hetc_status_new(HETC_STATUS_OUT_OF_MEMORY, "%s: opening", path);
  }
  struct stat info;
  int exists = stat(path, &info) == 0; /* follows a symlink to what it names */
  if (exists && (S_ISCHR(info.st_mode) || S_ISFIFO(info.st_mode))) {
    /* Written through: renaming a file over /dev/stdout or a pipe would
     * replace the node, not write to it. */
    output->stream = fopen(path, "w");
    if (!output->stream) {
      hetc_status_t status = hetc_file_write_failure(path, "cannot open", errno);
      output_free(output);
      return status;
    }
    *out_output = output;
    return NULL;
  }
  if (exists && !S_ISREG(info.st_mode)) {
    output_free(output);
    return hetc_status_new(HETC_STATUS_BAD_INPUT, "%s: is %s; not writing over it", path,
                           hetc_file_kind_name(info.st_mode));
  }
  struct stat link_info;
  if (lstat(path, &link_info) == 0 && S_ISLNK(link_info.st_mode)) {
    if (!exists) {
      output_free(output);
      return hetc_status_new(HETC_STATUS_BAD_INPUT, "%s: is a symbolic link to nothing; not writing over it",
                             path);
    }
    output->target = realpath(path, NULL);
  } else {
    output->target = strdup(path);
  }
  size_t temp_length = output->target ? strlen(output->target) + 48 : 0;
  if (!output->target || !(output->temp = malloc(temp_length))) {
    output_free(output);
    return hetc_status_new(HETC_STATUS_OUT_OF_MEMORY, "%s: opening", path);
  }
  /* Not mkstemp: its mode 0600 is not what a file shared with others wants;
   * the umask decides, or the replaced file's own mode. */
  static atomic_uint counter;
  int fd = -1;
  for (int attempt = 0; attempt < 16 && fd < 0; ++attempt) {
    snprintf(output->temp, temp_length, "%s.tmp-%ld-%u", output->target, (long)getpid(),
             atomic_fetch_add(&counter, 1u));
    fd = open(output->temp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    if (fd < 0 && errno != EEXIST) break;
  }
  if (fd >= 0 && exists) (void)fchmod(fd, info.st_mode & 07777);
  if (fd < 0 || !(output->stream = fdopen(fd, "w"))) {
    hetc_status_t status = hetc_file_write_failure(path, "cannot create", errno);
    if (fd >= 0) {
      close(fd);
      unlink(output->temp);
    }
    output_free(output);
    return status;
  }
  *out_output = output;
  return NULL;
}

FILE *hetc_output_stream(hetc_output_file_t *output) { return output->stream; }

hetc_status_t hetc_output_file_write(hetc_output_file_t *output, const void *data, size_t bytes) {
  if (bytes && fwrite(data, 1, bytes, output->stream) != bytes)
    return hetc_file_write_failure(output->path, "write failed", errno);
  return NULL;
}

hetc_status_t hetc_output_file_commit(hetc_output_file_t *output) {
  hetc_status_t status = NULL;
  int failed = fflush(output->stream) != 0 || ferror(output->stream);
  int error = errno;
  /* A device's fsync may say EINVAL: only files are synced. */
  if (!failed && output->target && fsync(fileno(output->stream)) != 0) failed = 1, error = errno;
  if (fclose(output->stream) != 0 && !failed) failed = 1, error = errno;
  if (failed) status = hetc_file_write_failure(output->path, "write failed", error);
  if (!status && output->target && rename(output->temp, output->target) != 0)
    status = hetc_file_write_failure(output->path, "cannot rename into place", errno);
  if (status && output->target) unlink(output->temp);
  output_free(output);
  return status;
}

hetc_status_t hetc_file_replace(const char *path, const void *data, size_t bytes) {
  hetc_output_file_t *output = NULL;
  HETC_RETURN_IF_ERROR(hetc_output_file_open(path, &output));
  hetc_status_t status = hetc_output_file_write(output, data, bytes);
  if (status) {
    hetc_output_file_abandon(output);
    return status;
  }
  return hetc_output_file_commit(output);
}

void hetc_output_file_abandon(hetc_output_file_t *output) {
  if (!output) return;
  fclose(output->stream);
  if (output->target) unlink(output->temp);
  output_free(output);
}
