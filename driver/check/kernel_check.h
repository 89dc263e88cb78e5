/* Builds one kernel of a plugin for (workload, template, config), runs it
 * on random data and compares with the reference executor. Used by `hetc
 * plugin-check`, the conformance tests and the benchmarks. Device 0 unless
 * a call takes a device. */
#ifndef HETC_DRIVER_CHECK_KERNEL_CHECK_H_
#define HETC_DRIVER_CHECK_KERNEL_CHECK_H_

#include "plugins/registry.h"

typedef struct kernel_check_result_t {
  double max_relative_error;
  double avg_inner_loop_length;
  double seconds; /* median of the timed runs, 0 when not timed */
} kernel_check_result_t;

/* Runs the check; `timed_repeats` > 0 also times the kernel with the
 * plugin's time() call. Returns NULL or the first failure. */
hetc_status_t hetc_kernel_check_run(hetc_plugin_entry_t *entry, const hetc_plugin_workload_t *workload,
                               int32_t template_index, const hetc_plugin_config_t *config,
                               uint64_t seed, int32_t timed_repeats, kernel_check_result_t *out);

/* Runs an artifact the caller built (or loaded) for (workload, template) on
 * `device` and compares with the reference (and times it, as
 * hetc_kernel_check_run); the artifact stays the caller's. */
hetc_status_t hetc_kernel_check_artifact(hetc_plugin_entry_t *entry, int32_t device, const hetc_plugin_workload_t *workload,
                                    int32_t template_index, const hetc_plugin_artifact_t *artifact, uint64_t seed,
                                    int32_t timed_repeats, kernel_check_result_t *out);

/* Times an artifact the caller built on `device` (random data, no
 * reference run): out->seconds is the median of `timed_repeats` samples. */
hetc_status_t hetc_kernel_check_time_artifact(hetc_plugin_entry_t *entry, int32_t device,
                                        const hetc_plugin_workload_t *workload, int32_t template_index,
                                        const hetc_plugin_artifact_t *artifact, int32_t timed_repeats,
                                        kernel_check_result_t *out);

/* hetc_kernel_check_run without the reference comparison (max_relative_error
 * 0): for searches that check only the winner. */
hetc_status_t hetc_kernel_check_time(hetc_plugin_entry_t *entry, const hetc_plugin_workload_t *workload,
                                int32_t template_index, const hetc_plugin_config_t *config,
                                int32_t timed_repeats, kernel_check_result_t *out);

/* hetc_kernel_check_run with template `template_index`'s default config, taken
 * from the space the template declares through the host. */
hetc_status_t hetc_kernel_check_run_default(hetc_plugin_entry_t *entry, const hetc_plugin_workload_t *workload,
                                       int32_t template_index, uint64_t seed, int32_t timed_repeats,
                                       kernel_check_result_t *out);

/* xorshift64: the next value of *rng in [lo, hi]. */
int64_t hetc_kernel_check_random(uint64_t *rng, int64_t lo, int64_t hi);

/* Upper limits of the channel and spatial sizes hetc_kernel_check_random_conv
 * draws. */
typedef struct kernel_check_conv_limits_t {
  int64_t dense_in_channels, dense_out_channels; /* groups == 1 */
  int64_t depthwise_channels;
  int64_t height, width;
} kernel_check_conv_limits_t;

/* A random valid conv2d workload: index % 3 picks dense, depthwise or
 * grouped (every other grouped draw with 4, 8 or 16 channels a group, as
 * ResNeXt and RegNet have them); strides 1-3, dilation 1-2, asymmetric
 * padding 0-2, kernels 1-5, every epilogue, a residual when index % 4 == 3. `inputs` (2 entries)
 * holds the input tensors the workload points at. */
void hetc_kernel_check_random_conv(uint64_t *rng, const kernel_check_conv_limits_t *limits, int index,
                              hetc_plugin_workload_t *out_workload, hetc_plugin_tensor_t *inputs);

/* Makes a hetc_kernel_check_random_conv workload (and `inputs`, the array it
 * points at) 3x3, stride 1, dilation 1 -- the Winograd shape -- keeping its
 * input, padding and channels. */
void hetc_kernel_check_conv_3x3_stride1(hetc_plugin_workload_t *workload, hetc_plugin_tensor_t *inputs);

#endif
