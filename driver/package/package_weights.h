/* driver/package/package_weights.h -- a package's weights.bin, written by
 * compile and read by the runtime (api/package-format.md).
 *
 * Every packed parameter is appended at the next multiple of 64 bytes (the
 * alignment the plugin ABI promises for host memory), zero-padded; the plan
 * records each one's offset and size, and the total in weights_bytes. */
#ifndef HETC_DRIVER_PACKAGE_PACKAGE_WEIGHTS_H_
#define HETC_DRIVER_PACKAGE_PACKAGE_WEIGHTS_H_

#include <stdint.h>

#include "package/plan.h"

typedef struct hetc_weights_writer_t hetc_weights_writer_t;

/* Creates weights.bin in package directory `dir` (borrowed; it must outlive
 * the writer). *out_writer is ended with hetc_weights_finish or
 * hetc_weights_abandon. */
hetc_status_t hetc_weights_create(const char *dir, hetc_weights_writer_t **out_writer);

/* Appends `bytes` of `data` at the next 64-byte boundary; *out_offset is
 * where they start. */
hetc_status_t hetc_weights_append(hetc_weights_writer_t *writer, const void *data, uint64_t bytes,
                                  uint64_t *out_offset);

/* The file's length so far (the plan's weights_bytes). */
uint64_t hetc_weights_length(const hetc_weights_writer_t *writer);

/* Closes the file, saying whether everything reached it, and frees the
 * writer. */
hetc_status_t hetc_weights_finish(hetc_weights_writer_t *writer);
/* Closes and frees without caring (the package is being abandoned). */
void hetc_weights_abandon(hetc_weights_writer_t *writer);

/* package_dir's weights.bin, which must be exactly plan->weights_bytes
 * long; *out_data (malloc'ed, the caller frees) is NULL when it is empty. */
hetc_status_t hetc_weights_read(const hetc_plan_t *plan, const char *package_dir, unsigned char **out_data);

#endif /* HETC_DRIVER_PACKAGE_PACKAGE_WEIGHTS_H_ */
