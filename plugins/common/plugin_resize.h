/* plugins/common/plugin_resize.h -- a resize workload's sampling (ABI 2.0)
 * written into generated source as constant tables, for the emitters of
 * vec (C) and the GPU-style plugins (the dialect).
 *
 * The taps come from the kit (hetc_kit_resize_taps), computed at build time
 * in double precision exactly as plugin.h defines them, so every kernel
 * reads the input rows and columns the reference reads; no kernel computes
 * a source coordinate itself. The tables, for output rows (dim 2) and
 * columns (dim 3):
 *
 *   resize_row_lo[OH], resize_col_lo[OW]          the input row (column) lo
 *   resize_row_weight[OH], resize_col_weight[OW]  linear only: the weight
 *                                                 of hi
 *
 * hi is not tabulated: it is min(lo + 1, n - 1) as plugin.h defines it, one
 * compare in the kernel (hpc_resize_hi_expr), which keeps the tables small
 * enough for OpenCL's __constant memory (64 KiB on most GPUs). The index
 * type is `unsigned short` where the input extent allows (up to 65536),
 * else `int`; both spellings are valid C, C++ and OpenCL C. */
#ifndef HETC_PLUGINS_COMMON_PLUGIN_RESIZE_H_
#define HETC_PLUGINS_COMMON_PLUGIN_RESIZE_H_

#include <stddef.h>
#include <stdint.h>

#include "hetc/plugin.h"
#include "plugin_strbuf.h"

/* Bytes of the tables hpc_resize_emit_tables writes for the workload (a 4-d
 * resize that hetc_kit_workload_check accepts). */
uint64_t hpc_resize_table_bytes(const hetc_plugin_workload_t *wl);

/* Appends the four (nearest: two) table definitions, each preceded by
 * `qualifier` ("static const" in C, "HK_TABLE" in the dialect). */
void hpc_resize_emit_tables(hpc_strbuf_t *sb, const hetc_plugin_workload_t *wl, const char *qualifier);

/* Into buf: the expression of hi for an index variable `lo` of a dim whose
 * input extent is n. */
void hpc_resize_hi_expr(char *buf, size_t size, const char *lo, int64_t n);

#endif /* HETC_PLUGINS_COMMON_PLUGIN_RESIZE_H_ */
