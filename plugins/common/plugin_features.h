/* plugins/common/plugin_features.h -- the template arithmetic the built-in
 * CPU plugins describe their loop nests with, on top of the kit's feature
 * rows (hetc/kit/features.h). Everything is a double: extents are products
 * of many dimensions, and the features take log2 of them anyway. */
#ifndef HETC_PLUGINS_COMMON_PLUGIN_FEATURES_H_
#define HETC_PLUGINS_COMMON_PLUGIN_FEATURES_H_

#include <math.h>
#include <stdint.h>

#include "hetc/kit/features.h"
#include "hetc/plugin.h"

/* The smaller of a and b; b when either is NaN (unlike fmin). */
static inline double hpc_min2(double a, double b) { return a < b ? a : b; }

/* Blocks of `b` that cover `a`: a partial last block counts whole. The
 * double counterpart of hetc_kit_ceil_div (hetc/kit/layout.h). */
static inline double hpc_fceil_div(double a, double b) { return ceil(a / b); }

/* A conv2d workload's extents: input N x C x H x W, output N x K x OH x OW
 * (both NCHW, as in the workload), kernel KH x KW, strides SH, SW and
 * dilations DH, DW. */
typedef struct hpc_conv_shape_t {
  double N, C, H, W, K, OH, OW, KH, KW, SH, SW, DH, DW;
} hpc_conv_shape_t;

hpc_conv_shape_t hpc_conv_shape(const hetc_plugin_workload_t *wl);

/* The direct NCHW convolution's tiles above the register, for the loop
 * nest both plugins' NCHW templates share (n, k, oh, ow, then one group's
 * channels and the window): one output row of one channel with the input
 * rows its window reads, one output plane, and the whole grid. */
typedef struct hpc_conv_nchw_tiles_t {
  hetc_kit_feature_tile_t row, plane, grid;
} hpc_conv_nchw_tiles_t;

hpc_conv_nchw_tiles_t hpc_conv_nchw_tiles(const hpc_conv_shape_t *s, int32_t groups);

#endif /* HETC_PLUGINS_COMMON_PLUGIN_FEATURES_H_ */
