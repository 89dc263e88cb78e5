/* driver/place/transfer.h -- what moving a tensor between a device and the
 * host costs, the copy half of placement's cost model. A copy between two
 * devices goes through the host (the runtime reads from one plugin and
 * writes to the other), so a device's two directions price every copy. */
#ifndef HETC_DRIVER_PLACE_TRANSFER_H_
#define HETC_DRIVER_PLACE_TRANSFER_H_

#include "plugins/registry.h"
#include "records/records.h"

/* Times buffer_write and buffer_read of a small and a large buffer on the
 * device (the median of several of each) and fits latency + bytes x rate
 * for each direction. */
hetc_status_t hetc_transfer_measure(hetc_plugin_entry_t *entry, int32_t device_index,
                                    hetc_transfer_cost_t *out_to_device, hetc_transfer_cost_t *out_to_host);

/* The device's costs from the records store when it has them, else
 * measured and stored there (store may be NULL: measured, not kept).
 * *out_measured (may be NULL) says which. */
hetc_status_t hetc_transfer_costs(hetc_records_t *store, hetc_plugin_entry_t *entry, int32_t device_index,
                                  hetc_transfer_cost_t *out_to_device, hetc_transfer_cost_t *out_to_host,
                                  int *out_measured);

/* Seconds to move `bytes` with a fitted cost. */
double hetc_transfer_seconds(const hetc_transfer_cost_t *cost, double bytes);

#endif
