/* driver/check/check_workloads.h -- the small workloads `hetc plugin-check`
 * puts every plugin through: each op of the ABI in its common variants
 * (padding, strides, groups, epilogues, broadcasting, ceil mode), sized so
 * that a slow backend still checks them in seconds. */
#ifndef HETC_DRIVER_CHECK_CHECK_WORKLOADS_H_
#define HETC_DRIVER_CHECK_CHECK_WORKLOADS_H_

#include "hetc/plugin.h"

#define CHECK_WORKLOAD_MAX_INPUTS 3

typedef struct check_workload_t {
  char label[160];                /* e.g. "conv2d 1x8x10x10 -> 16 k3x3 s1 p1 bias relu" */
  hetc_plugin_workload_t workload; /* inputs points into `inputs` */
  hetc_plugin_tensor_t inputs[CHECK_WORKLOAD_MAX_INPUTS];
} check_workload_t;

/* Number of workloads in the suite; `quick` keeps one or two per op. */
int32_t hetc_check_workload_count(int quick);

/* The i-th workload of the suite (0 <= i < hetc_check_workload_count(quick)).
 * The struct points into itself: keep it unmoved while the workload is
 * used. */
void hetc_check_workload_at(int32_t i, int quick, check_workload_t *out);

#endif
