/* plugins/common/plugin_features.h -- writing the plugin's part of a
 * feature row (schema in api/hetc/plugin.h, hetc_plugin_feature_t), shared
 * by the built-in plugins so that they compute the derived numbers (bytes,
 * reuse, intensity) by one formula. Pure functions; no allocation. */
#ifndef HETC_PLUGINS_COMMON_PLUGIN_FEATURES_H_
#define HETC_PLUGINS_COMMON_PLUGIN_FEATURES_H_

#include <math.h>
#include <stdint.h>

#include "hetc/plugin.h"

/* One tile of a tiling level, in elements (fp32) and multiply-adds. */
typedef struct hpc_feature_tile_t {
  double spatial;   /* output elements the tile computes */
  double reduction; /* multiply-add steps per output at this level */
  double in;        /* input elements moved (see the schema's BYTES_IN) */
  double weight;    /* weight elements moved */
  double out;       /* output elements moved (stores, partial-sum reloads) */
  double macs;      /* multiply-adds of the tile; 0: spatial x reduction */
} hpc_feature_tile_t;

/* A row under construction: out_features of `capacity` floats. Writes
 * beyond capacity are dropped (a host with an older, shorter schema). */
typedef struct hpc_features_t {
  float *out;
  int32_t capacity;
} hpc_features_t;

/* log2(1 + x), the schema's scale for magnitudes. */
float hpc_log2p(double x);

/* out[index] = value when index < capacity. */
void hpc_features_put(hpc_features_t *f, int32_t index, float value);
/* The eight features of `level` (hetc_plugin_feature_level_t) for `tile`. */
void hpc_features_put_level(hpc_features_t *f, int32_t level, const hpc_feature_tile_t *tile);
/* The algorithm one-hot: `algo` (a HETC_FEATURE_ALGO_* index) 1, the rest 0. */
void hpc_features_put_algo(hpc_features_t *f, int32_t algo);
/* The layout one-hot for a layout the kernel reads its input in. */
void hpc_features_put_layout(hpc_features_t *f, hetc_plugin_layout_t layout);
/* The template arithmetic both CPU plugins describe their loop nests with.
 * Everything is a double: extents are products of many dimensions, and the
 * features take log2 of them anyway. */

/* The smaller of a and b; b when either is NaN (unlike fmin). */
static inline double hpc_min2(double a, double b) { return a < b ? a : b; }

/* Blocks of `b` that cover `a`: a partial last block counts whole. The
 * double counterpart of hpc_ceil_div (plugin_workload.h). */
static inline double hpc_fceil_div(double a, double b) { return ceil(a / b); }

/* Input extent along one axis that `count` consecutive outputs read through
 * a window of `taps` taps, `stride` apart per output and `dilation` apart per
 * tap, at most `limit` (the input's extent: padding is not read). */
double hpc_window_span(double count, double stride, double taps, double dilation, double limit);

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
  hpc_feature_tile_t row, plane, grid;
} hpc_conv_nchw_tiles_t;

hpc_conv_nchw_tiles_t hpc_conv_nchw_tiles(const hpc_conv_shape_t *s, int32_t groups);

/* What every template reports besides its tiling levels (the features from
 * HETC_FEATURE_EXEC_FLOPS to the layout one-hot, api/hetc/plugin.h), as raw
 * counts: hpc_features_put_loop scales them. */
typedef struct hpc_loop_t {
  double exec_macs;            /* multiply-adds executed, padding included */
  double vector_width;         /* fp32 lanes of the innermost arithmetic */
  double unroll;               /* independent operations of the innermost body */
  double inner_loop;           /* trip count of the innermost loop */
  double parallel_units;       /* iterations of the parallel loop */
  int32_t algo;                /* a HETC_FEATURE_ALGO_* index */
  hetc_plugin_layout_t layout; /* the layout the kernel reads its input in */
} hpc_loop_t;

/* The loop features of `loop`. THREADS_PER_GROUP is always 1: both CPU
 * plugins run each parallel unit on one thread (a pool task in the cpu
 * plugin, an OpenMP iteration in the vec plugin). */
void hpc_features_put_loop(hpc_features_t *f, const hpc_loop_t *loop);

/* What the plugin reports as out_count: the schema it fills, cut to the
 * host's capacity. */
int32_t hpc_features_count(const hpc_features_t *f);

#endif /* HETC_PLUGINS_COMMON_PLUGIN_FEATURES_H_ */
