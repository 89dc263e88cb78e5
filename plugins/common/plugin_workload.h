/* plugins/common/plugin_workload.h -- workload and layout helpers shared by
 * the built-in plugins (compiled into each, never exported): validation of
 * what a plugin can compute, logical and physical sizes, layout arithmetic
 * and descriptions. The prefix hpc_ is "hetc plugin common". */
#ifndef HETC_PLUGINS_COMMON_PLUGIN_WORKLOAD_H_
#define HETC_PLUGINS_COMMON_PLUGIN_WORKLOAD_H_

#include <stddef.h>
#include <stdint.h>

#include "hetc/plugin.h"
#include "plugin_strbuf.h"

/* Most activation inputs a workload may have (concat takes up to 64). */
#define HPC_MAX_INPUTS 64

/* 0 when the plugin can compute the workload (by some template), else
 * HETC_PLUGIN_STATUS_UNSUPPORTED or _INVALID_ARGUMENT with the reason in
 * `reason` (without a plugin name: the caller prefixes its own). Creates
 * no status (supports() must not leak one). */
int32_t hpc_workload_check(const hetc_plugin_workload_t *wl, char *reason,
                           size_t reason_size);
/* conv2d with groups == C_in == C_out. */
int hpc_conv_is_depthwise(const hetc_plugin_workload_t *wl);
/* conv2d that the NCHWc template covers: groups == 1 or depthwise. */
int hpc_conv_nchwc_applicable(const hetc_plugin_workload_t *wl);

int64_t hpc_ceil_div(int64_t a, int64_t b);
int64_t hpc_logical_count(const hetc_plugin_tensor_t *t);
/* Elements a tensor of t's logical shape occupies in `layout`. */
int64_t hpc_physical_count(const hetc_plugin_tensor_t *t,
                           hetc_plugin_layout_t layout);
/* A 4-d layout as a channel block b: the element (n, c, h, w) lies at
 * (((n*ceil(C/b) + c/b)*H + h)*W + w)*b + c%b. ROW_MAJOR is b = 1, NHWC is
 * b = C, NCHWC is its block. */
int64_t hpc_layout_block(hetc_plugin_layout_t layout, int64_t channels);
int hpc_layout_equal(hetc_plugin_layout_t a, hetc_plugin_layout_t b);
hetc_plugin_layout_t hpc_layout_row_major(void);
hetc_plugin_layout_t hpc_layout_nchwc(int64_t block);
/* "NCHW"/"row-major", "NCHW16c", "NHWC" into buf. */
void hpc_layout_text(hetc_plugin_layout_t layout, int32_t rank, char *buf,
                     size_t size);
/* One-line description of a workload (op, logical shapes, attributes;
 * not the layout hints). */
void hpc_workload_describe(const hetc_plugin_workload_t *wl, hpc_strbuf_t *sb);

/* Deep copy of a workload (its inputs array); free with
 * hpc_workload_release. Returns 0, or -1 when out of memory. */
int hpc_workload_copy(const hetc_plugin_workload_t *src, hetc_plugin_workload_t *dst);
void hpc_workload_release(hetc_plugin_workload_t *wl);

#endif /* HETC_PLUGINS_COMMON_PLUGIN_WORKLOAD_H_ */
