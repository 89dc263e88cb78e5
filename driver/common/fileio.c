#include "common/fileio.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

hetc_status_t hetc_file_read_all(const char *path, size_t max_bytes, char **out_data,
                                 size_t *out_length) {
  FILE *file = fopen(path, "rb");
  if (!file)
    return hetc_status_new(HETC_STATUS_IO_ERROR, "%s: cannot open: %s", path, strerror(errno));
  struct stat info;
  if (fstat(fileno(file), &info) != 0 || !S_ISREG(info.st_mode)) {
    fclose(file);
    return hetc_status_new(HETC_STATUS_IO_ERROR, "%s: not a regular file", path);
  }
  if ((unsigned long long)info.st_size > max_bytes) {
    fclose(file);
    return hetc_status_new(HETC_STATUS_BAD_INPUT, "%s: file is %lld bytes, the limit is %zu",
                           path, (long long)info.st_size, max_bytes);
  }
  size_t length = (size_t)info.st_size;
  char *data = malloc(length + 1);
  if (!data) {
    fclose(file);
    return hetc_status_new(HETC_STATUS_OUT_OF_MEMORY, "%s: reading %zu bytes", path, length);
  }
  size_t got = fread(data, 1, length, file);
  int failed = ferror(file);
  fclose(file);
  if (failed || got != length) {
    free(data);
    return hetc_status_new(HETC_STATUS_IO_ERROR, "%s: read failed", path);
  }
  data[length] = 0;
  *out_data = data;
  *out_length = length;
  return NULL;
}

hetc_status_t hetc_file_write_all(const char *path, const void *data, size_t bytes) {
  FILE *file = fopen(path, "wb");
  if (!file)
    return hetc_status_new(HETC_STATUS_IO_ERROR, "%s: cannot create: %s", path, strerror(errno));
  size_t written = bytes ? fwrite(data, 1, bytes, file) : 0;
  int failed = written != bytes || ferror(file);
  failed |= fclose(file) != 0;
  if (failed) return hetc_status_new(HETC_STATUS_IO_ERROR, "%s: write failed: %s", path, strerror(errno));
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

hetc_status_t hetc_dir_create_temp_beside(const char *final_path, char **out_dir) {
  size_t length = strlen(final_path) + 16;
  char *dir = malloc(length);
  if (!dir) return hetc_status_new(HETC_STATUS_OUT_OF_MEMORY, "temporary directory");
  snprintf(dir, length, "%s.tmp-XXXXXX", final_path);
  if (!mkdtemp(dir)) {
    hetc_status_t status = hetc_status_new(HETC_STATUS_IO_ERROR, "%s: cannot create: %s", dir,
                                           strerror(errno));
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
    size_t length = strlen(final_path) + 16;
    char *old = malloc(length);
    if (!old) return hetc_status_new(HETC_STATUS_OUT_OF_MEMORY, "package commit");
    snprintf(old, length, "%s.old-XXXXXX", final_path);
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
