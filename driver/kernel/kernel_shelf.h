/* driver/kernel/kernel_shelf.h -- the kernels a compile has built, kept
 * for the package.
 *
 * Placement builds every candidate kernel of every node on every device to
 * time it; the package writer then needs the chosen ones. The shelf keeps
 * each kernel placement built under what identifies it (its plan device,
 * its workload with the input tensors and their layout hints, its template
 * and config), so that the writer takes it instead of building it again:
 * a kernel is built once per compile. */
#ifndef HETC_DRIVER_KERNEL_KERNEL_SHELF_H_
#define HETC_DRIVER_KERNEL_KERNEL_SHELF_H_

#include <stddef.h>

#include "plugins/registry.h"

/* The bytes that identify a kernel: its workload (the input pointer
 * replaced by the tensors it points at), and for a tunable op its template
 * and config (template_index -1 and config_json NULL for an op built with
 * template 0's default and no choice, as ops without knobs are). Returns
 * the length; *out_key (NULL when out of memory) is the caller's to free. */
size_t hetc_kernel_key(const hetc_plugin_workload_t *workload, int32_t template_index, const char *config_json,
                       unsigned char **out_key);

typedef struct hetc_kernel_shelf_t hetc_kernel_shelf_t;

/* *out_shelf is released with hetc_kernel_shelf_free, which releases the
 * artifacts still on it through their plugins. */
hetc_status_t hetc_kernel_shelf_create(hetc_kernel_shelf_t **out_shelf);
void hetc_kernel_shelf_free(hetc_kernel_shelf_t *shelf);

/* Keeps `artifact`, built by `entry` for plan device `device`, under `key`
 * (hetc_kernel_key's): the shelf takes both. Out of memory it takes
 * neither and says so. */
hetc_status_t hetc_kernel_shelf_put(hetc_kernel_shelf_t *shelf, int32_t device, hetc_plugin_entry_t *entry,
                                    unsigned char *key, size_t key_bytes, hetc_plugin_artifact_t *artifact);

/* The artifact kept for plan device `device` under `key`, or NULL. It stays
 * the shelf's (borrowed until hetc_kernel_shelf_free). */
hetc_plugin_artifact_t *hetc_kernel_shelf_find(hetc_kernel_shelf_t *shelf, int32_t device, const unsigned char *key,
                                               size_t key_bytes);

/* Kernels put on the shelf, and found on it, so far. */
void hetc_kernel_shelf_counts(const hetc_kernel_shelf_t *shelf, int64_t *out_put, int64_t *out_found);

#endif /* HETC_DRIVER_KERNEL_KERNEL_SHELF_H_ */
