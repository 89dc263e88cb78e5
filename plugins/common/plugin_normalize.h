/* plugins/common/plugin_normalize.h -- how the built-in emitters (vec's C,
 * the GPU-style plugins' dialect) see a normalize workload (ABI 2.0): its
 * statistics lines and the layout its kernel works in.
 *
 * plugin.h numbers the elements (outer index o, channel c along dim axis,
 * index r within the other normalized dims, inner index i); a line is one
 * (o, group, i) with its per_group * rest elements. The kernel follows the
 * producer's layout where dim axis is the channel dim of a 4-d tensor
 * (axis 1: row-major, NCHW[x]c or NHWC), else works in row-major. Either
 * way element (o, c, r, i) lies at
 *
 *   ((o * blocks + c / block) * plane + r * inner + i) * block + c % block
 *
 * with plane = rest * inner, the elements of one channel of one outer
 * index; row-major is block 1 (then blocks = channels), NHWC is block =
 * channels. An NCHWc output's padding channels, past `channels` in the
 * last block, belong to no line: the kernel writes their zeros apart. */
#ifndef HETC_PLUGINS_COMMON_PLUGIN_NORMALIZE_H_
#define HETC_PLUGINS_COMMON_PLUGIN_NORMALIZE_H_

#include <stdint.h>

#include "hetc/plugin.h"

typedef struct hpc_normalize_t {
  hetc_plugin_layout_t layout; /* read and written */
  int64_t outer, channels, groups, per_group, rest, inner;
  int64_t count;  /* elements of a line: per_group * rest */
  int64_t lines;  /* outer * groups * inner */
  int64_t plane;  /* rest * inner */
  int64_t block, blocks;
  int64_t padding; /* padding channels of the last block: blocks * block - channels */
} hpc_normalize_t;

/* The geometry of a normalize workload that hetc_kit_workload_check
 * accepts. */
void hpc_normalize_geometry(const hetc_plugin_workload_t *wl, hpc_normalize_t *out);

/* epsilon as the float the GPU kernels add to the variance: at least
 * FLT_MIN, so that a line of equal values (variance 0) divides 0 by a
 * finite square root, as the reference does in double, and never by 0
 * (an epsilon below the floats rounds to 0). */
float hpc_normalize_epsilon_float(const hetc_plugin_workload_t *wl);

#endif /* HETC_PLUGINS_COMMON_PLUGIN_NORMALIZE_H_ */
