/* Builds one kernel of a plugin for (workload, template, config), runs it
 * on random data and compares with the reference executor. Shared by the
 * conformance tests and the benchmarks. */
#ifndef HETC_TESTS_KERNEL_CHECK_H_
#define HETC_TESTS_KERNEL_CHECK_H_

#include "plugins/registry.h"

typedef struct kernel_check_result_t {
  double max_relative_error;
  double avg_inner_loop_length;
  double seconds; /* median of the timed runs, 0 when not timed */
} kernel_check_result_t;

/* Runs the check; `timed_repeats` > 0 also times the kernel with the
 * plugin's time() call. Returns NULL or the first failure. */
hetc_status_t kernel_check_run(hetc_plugin_entry_t *entry, const hetc_plugin_workload_t *workload,
                               int32_t template_index, const hetc_plugin_config_t *config,
                               uint64_t seed, int32_t timed_repeats, kernel_check_result_t *out);

#endif
