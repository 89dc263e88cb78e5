/* The public API's files the user names (hetc/hetc.h): a package's inputs
 * read from them, and outputs written whole or not at all through
 * common/fileio's output files. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "common/fileio.h"

/* The path is kept for messages: common/fileio's output keeps its own
 * private. */
struct hetc_output_file_t {
  hetc_output_t *output;
  char *path;
};

hetc_status_t hetc_output_file_open(const char *path, hetc_output_file_t **out_file) {
  hetc_output_file_t *file = calloc(1, sizeof(*file));
  if (!file || !(file->path = strdup(path ? path : ""))) {
    free(file);
    return hetc_status_new(HETC_STATUS_OUT_OF_MEMORY, "%s", path ? path : "output");
  }
  hetc_status_t status = hetc_output_open(path, &file->output);
  if (status) {
    free(file->path);
    free(file);
    return status;
  }
  *out_file = file;
  return NULL;
}

hetc_status_t hetc_output_file_write(hetc_output_file_t *file, const void *data, size_t bytes) {
  if (bytes && fwrite(data, 1, bytes, hetc_output_stream(file->output)) != bytes)
    return hetc_file_write_failure(file->path, "write failed", errno);
  return NULL;
}

hetc_status_t hetc_output_file_commit(hetc_output_file_t *file) {
  hetc_status_t status = hetc_output_commit(file->output);
  free(file->path);
  free(file);
  return status;
}

void hetc_output_file_abandon(hetc_output_file_t *file) {
  if (!file) return;
  hetc_output_abandon(file->output);
  free(file->path);
  free(file);
}

/* The largest input file read: 16 GiB of float32. */
#define MAX_INPUT_BYTES ((size_t)1 << 34)

hetc_status_t hetc_package_set_input_file(hetc_package_t *package, int32_t index, const char *path) {
  const int64_t count = hetc_package_input_elements(package, index);
  char *bytes = NULL;
  size_t length = 0;
  HETC_RETURN_IF_ERROR(hetc_file_read_all(path, MAX_INPUT_BYTES, &bytes, &length));
  hetc_status_t status = NULL;
  /* hetc_file_read_all's buffer comes from malloc, aligned for floats. */
  if (length != (size_t)count * sizeof(float))
    status = hetc_status_new(HETC_STATUS_BAD_INPUT, "%s: %zu bytes, expected %lld float32 values (%lld bytes)",
                             path, length, (long long)count, (long long)count * 4);
  else
    status = hetc_package_set_input(package, index, (const float *)bytes, count);
  free(bytes);
  return status;
}
