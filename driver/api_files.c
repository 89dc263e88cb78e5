/* The public API's input files (hetc/hetc.h): a package's inputs read from
 * the files the user names. Output files are common/fileio's. */
#include <stdlib.h>

#include "common/fileio.h"

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
