/* hetc/kit/features.h -- writing the plugin's part of a feature row
 * (schema 1, api/feature-schema.md), so that every plugin derives bytes,
 * reuse and intensity by one formula. Pure functions; no allocation (the
 * search calls features() thousands of times a second).
 *
 * The schema is ABI minor 1's: built against a minor-0 header this file
 * declares nothing, and the plugin's table has no features(). */
#ifndef HETC_KIT_FEATURES_H_
#define HETC_KIT_FEATURES_H_

#include <stdint.h>

#include <hetc/plugin.h>

#include "hetc/kit/abi.h"

#if HETC_KIT_ABI_AT_LEAST(1, 1)

#ifdef __cplusplus
extern "C" {
#endif

/* One tile of a tiling level, in elements (fp32) and multiply-adds. */
typedef struct hetc_kit_feature_tile_t {
  double spatial;   /* output elements the tile computes */
  double reduction; /* multiply-add steps per output at this level */
  double in;        /* input elements moved (see the schema's BYTES_IN) */
  double weight;    /* weight elements moved */
  double out;       /* output elements moved (stores, partial-sum reloads) */
  double macs;      /* multiply-adds of the tile; 0: spatial x reduction */
} hetc_kit_feature_tile_t;

/* A row under construction: out_features of `capacity` floats (the
 * caller's). Writes beyond capacity are dropped: a host of an older,
 * shorter schema. */
typedef struct hetc_kit_features_t {
  float *out;
  int32_t capacity;
} hetc_kit_features_t;

/* log2(1 + x), the schema's scale for magnitudes (x < 0 counts as 0). */
float hetc_kit_log2p(double x);

/* out[index] = value when 0 <= index < capacity. */
void hetc_kit_features_put(hetc_kit_features_t *f, int32_t index, float value);
/* The eight features of `level` (hetc_plugin_feature_level_t). */
void hetc_kit_features_put_level(hetc_kit_features_t *f, int32_t level, const hetc_kit_feature_tile_t *tile);
/* The algorithm one-hot: `algo` (a HETC_FEATURE_ALGO_* index) 1, the rest 0. */
void hetc_kit_features_put_algo(hetc_kit_features_t *f, int32_t algo);
/* The layout one-hot for the layout the kernel reads its input in. */
void hetc_kit_features_put_layout(hetc_kit_features_t *f, hetc_plugin_layout_t layout);

/* What every template reports besides its tiling levels (the features from
 * HETC_FEATURE_EXEC_FLOPS to the layout one-hot), as raw counts. */
typedef struct hetc_kit_loop_t {
  double exec_macs;            /* multiply-adds executed, padding included */
  double vector_width;         /* fp32 lanes of the innermost arithmetic */
  double unroll;               /* independent operations of the innermost body */
  double inner_loop;           /* trip count of the innermost loop */
  double parallel_units;       /* iterations of the parallel loop */
  int32_t algo;                /* a HETC_FEATURE_ALGO_* index */
  hetc_plugin_layout_t layout; /* the layout the kernel reads its input in */
} hetc_kit_loop_t;

/* The loop features of `loop`, THREADS_PER_GROUP 1 (one thread per
 * parallel unit, as on a CPU; a GPU plugin writes its own after). */
void hetc_kit_features_put_loop(hetc_kit_features_t *f, const hetc_kit_loop_t *loop);

/* features()' *out_count: the schema the plugin fills, cut to the host's
 * capacity. */
int32_t hetc_kit_features_count(const hetc_kit_features_t *f);

/* Input extent along one axis that `count` consecutive outputs read through
 * a window of `taps` taps, `stride` apart per output and `dilation` apart
 * per tap, at most `limit` (the input's extent: padding is not read). */
double hetc_kit_window_span(double count, double stride, double taps, double dilation, double limit);

#ifdef __cplusplus
}
#endif

#endif /* HETC_KIT_ABI_AT_LEAST(1, 1) */

#endif /* HETC_KIT_FEATURES_H_ */
