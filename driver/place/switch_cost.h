/* driver/place/switch_cost.h -- what switching devices between two
 * kernels costs, for placement.
 *
 * Each kernel is timed alone, back to back with itself. When a kernel on
 * one device follows one on another, there is more: the first device's
 * threads may still spin on shared cores (hetc's pool does for a while
 * after each job, as OpenMP teams do after a parallel region, and a device
 * runtime may too) and the second's must wake. Two targets of
 * one host pay this on every switch; a plan that alternates between them
 * runs slower than the sum of its kernels unless placement prices it. */
#ifndef HETC_DRIVER_PLACE_SWITCH_COST_H_
#define HETC_DRIVER_PLACE_SWITCH_COST_H_

#include "plugins/registry.h"

#define HETC_SWITCH_MAX_DEVICES 8

/* Times a probe conv2d (64 channels, 28x28, 3x3) on every device alone and
 * on every pair of devices in turn; out_seconds (num_devices x num_devices,
 * the caller's) gets, for each ordered pair, half of what a round trip
 * costs beyond the two kernels (0 on the diagonal, and for a device whose
 * probe does not build, with a warning). */
hetc_status_t hetc_switch_costs_measure(int32_t num_devices, hetc_plugin_entry_t *const *entries,
                                        const int32_t *device_indices, double *out_seconds);

#endif /* HETC_DRIVER_PLACE_SWITCH_COST_H_ */
