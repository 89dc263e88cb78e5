/* A package's weights.bin (package_weights.h). */
#include "package/package_weights.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include "common/fileio.h"

struct hetc_weights_writer_t {
  FILE *file;
  const char *dir;
  uint64_t length;
};

hetc_status_t hetc_weights_create(const char *dir, hetc_weights_writer_t **out_writer) {
  *out_writer = NULL;
  hetc_weights_writer_t *w = calloc(1, sizeof(*w));
  char *path = hetc_path_join(dir, HETC_PACKAGE_WEIGHTS);
  if (!w || !path) {
    free(w);
    free(path);
    return hetc_status_new(HETC_STATUS_OUT_OF_MEMORY, "compile");
  }
  w->dir = dir;
  w->file = fopen(path, "wb");
  const int error = errno;
  free(path);
  if (!w->file) {
    free(w);
    return hetc_file_write_failure(dir, "creating " HETC_PACKAGE_WEIGHTS, error);
  }
  *out_writer = w;
  return NULL;
}

hetc_status_t hetc_weights_append(hetc_weights_writer_t *w, const void *data, uint64_t bytes, uint64_t *out_offset) {
  static const char zeros[64];
  const uint64_t pad = (64 - w->length % 64) % 64;
  if ((pad && fwrite(zeros, 1, pad, w->file) != pad) || (bytes && fwrite(data, 1, bytes, w->file) != bytes))
    return hetc_file_write_failure(w->dir, "writing " HETC_PACKAGE_WEIGHTS, errno);
  *out_offset = w->length + pad;
  w->length += pad + bytes;
  return NULL;
}

uint64_t hetc_weights_length(const hetc_weights_writer_t *w) { return w->length; }

hetc_status_t hetc_weights_finish(hetc_weights_writer_t *w) {
  const int failed = fclose(w->file) != 0;
  const int error = errno;
  hetc_status_t status = failed ? hetc_file_write_failure(w->dir, "writing " HETC_PACKAGE_WEIGHTS, error) : NULL;
  free(w);
  return status;
}

void hetc_weights_abandon(hetc_weights_writer_t *w) {
  if (!w) return;
  fclose(w->file);
  free(w);
}

hetc_status_t hetc_weights_read(const hetc_plan_t *plan, const char *package_dir, unsigned char **out_data) {
  *out_data = NULL;
  char *path = hetc_path_join(package_dir, HETC_PACKAGE_WEIGHTS);
  if (!path) return hetc_status_new(HETC_STATUS_OUT_OF_MEMORY, "runtime");
  char *data = NULL;
  size_t size = 0;
  hetc_status_t status = hetc_file_read_all(path, (size_t)plan->weights_bytes, &data, &size);
  if (hetc_status_code(status) == HETC_STATUS_BAD_INPUT)
    status = hetc_status_annotate(status, "the manifest says %s has %llu bytes", HETC_PACKAGE_WEIGHTS,
                                  (unsigned long long)plan->weights_bytes);
  if (!status && size != plan->weights_bytes)
    status = hetc_status_new(HETC_STATUS_BAD_INPUT, "%s: %zu bytes, the manifest says %llu", path, size,
                             (unsigned long long)plan->weights_bytes);
  free(path);
  if (status) {
    free(data);
    return status;
  }
  *out_data = (unsigned char *)data;
  return NULL;
}
