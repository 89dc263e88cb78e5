/* driver/kernel/kernel_rounds.h -- timing many built kernels in rounds.
 *
 * A kernel timed alone, back to back with itself, finds its weights and
 * activations in cache and sees a few milliseconds of the machine's
 * weather; inside a model it reads what other kernels left behind. So
 * placement times the kernels of a model the way the model runs them:
 * every kernel once per round, in the order added (device by device, node
 * by node), one warm-up round then N timed ones, each kernel's time the
 * median over the rounds. A burst of load on a shared machine then spoils
 * one sample of many kernels rather than every sample of a few.
 *
 * Kernels that compete for one choice (placement: the options of one node)
 * may share a group. One that takes more than HETC_KERNEL_ROUNDS_SLOW times
 * the fastest of its group in the warm-up round, and again in one more run
 * (a single run may be a hiccup's), is run no more, its time the faster of
 * those two: it loses that choice by far whatever the weather, and rounds
 * of a model's row-major kernels (a second each for VGG-19's convolutions
 * on cpu, 50 times the blocked ones) took most of a compile. */
#ifndef HETC_DRIVER_KERNEL_KERNEL_ROUNDS_H_
#define HETC_DRIVER_KERNEL_KERNEL_ROUNDS_H_

#include "plugins/registry.h"

typedef struct hetc_kernel_rounds_t hetc_kernel_rounds_t;

/* *out_rounds is released with hetc_kernel_rounds_free. */
hetc_status_t hetc_kernel_rounds_create(hetc_kernel_rounds_t **out_rounds);

/* Adds a kernel built for `workload` on the plugin's device `device_index`,
 * with zeroed buffers sized from its artifact info. The rounds take
 * `artifact` (released with them, also on failure); *out_job numbers the
 * kernel from 0 in the order added. */
hetc_status_t hetc_kernel_rounds_add(hetc_kernel_rounds_t *rounds, hetc_plugin_entry_t *entry, int32_t device_index,
                                     const hetc_plugin_workload_t *workload, hetc_plugin_artifact_t *artifact,
                                     int32_t *out_job);

#define HETC_KERNEL_ROUNDS_SLOW 4.0

int32_t hetc_kernel_rounds_count(const hetc_kernel_rounds_t *rounds);

/* Puts kernel `job` in group `group` (>= 0; a kernel added is in none, and
 * is timed every round). */
void hetc_kernel_rounds_set_group(hetc_kernel_rounds_t *rounds, int32_t job, int32_t group);

/* Runs kernel `job` once and waits for it. */
hetc_status_t hetc_kernel_rounds_run_one(hetc_kernel_rounds_t *rounds, int32_t job);

/* One warm-up round, then `timed` rounds; out_seconds (the caller's, one per
 * kernel) gets each kernel's median seconds over the timed rounds (for a
 * kernel far slower than its group's fastest, its warm-up run's). A kernel
 * whose run fails is run no more: its seconds are -1 and out_errors (the
 * caller's, one per kernel; the statuses it gets are the caller's to free)
 * says why, NULL for the others. Fails only when out of memory or
 * interrupted (SIGINT, SIGTERM). */
hetc_status_t hetc_kernel_rounds_time(hetc_kernel_rounds_t *rounds, int32_t timed, double *out_seconds,
                                      hetc_status_t *out_errors);

/* Kernel `job`'s artifact, handed to the caller (who releases it through
 * its plugin); the rounds keep only its buffers. */
hetc_plugin_artifact_t *hetc_kernel_rounds_take_artifact(hetc_kernel_rounds_t *rounds, int32_t job);

void hetc_kernel_rounds_free(hetc_kernel_rounds_t *rounds);

#endif /* HETC_DRIVER_KERNEL_KERNEL_ROUNDS_H_ */
