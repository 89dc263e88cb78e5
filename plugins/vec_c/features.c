/* The vec plugin's part of a feature row (schema 1, api/hetc/plugin.h):
 * the loop nest emit_conv.c and emit_ops.c would write for a config, from
 * the same numbers (channel blocks, the accumulator tile's columns, the
 * loop order), without emitting or compiling anything.
 *
 * The emitted C has no explicit register blocking: the compiler
 * vectorises the innermost loop and keeps what it can in registers. So the
 * levels describe the source as written:
 *   register: the accumulators consecutive iterations of the innermost
 *             statement update (conv2d_nchwc: one channel block's
 *             `a[oc] += x * w[oc]`, for ICBN steps when ic is the innermost
 *             reorderable loop, else one; nchw canonical order: one scalar
 *             accumulator over the whole reduction).
 *   cache:    one iteration of the outermost reorderable loop inside one
 *             accumulator tile (OWT columns x a channel block): one input
 *             channel block, one kernel row, or one pixel, by loop order;
 *             nchw and dense: one output row / one output.
 *   block:    one parallel iteration: an (n, channel block) plane or, with
 *             parallel 1, one output row. */
#include "plugin_features.h"
#include "vec.h"

/* Axes of the NCHWc reduction nest, in the numbering of
 * vec_conv_nchwc_orders (vec.h). */
enum { AXIS_ICB = 0, AXIS_KH, AXIS_KW, AXIS_IC, AXIS_OW, NUM_AXES };
#define MAX_ORDERS 8

/* A channel block of `block` lanes on a device of `simd` lanes. */
static double lanes(double block, int32_t simd) { return hpc_min2(block, simd > 0 ? simd : 1); }

/* conv2d_nchwc and depthwise both vectorise over one output channel block
 * and split the same loops; only the algorithm and the input's channel
 * block differ. */
static void put_nchwc_loop(hetc_kit_features_t *f, const hpc_conv_shape_t *s, const vec_config_t *cfg,
                           int32_t simd, double macs, int32_t algo, int64_t input_block) {
  const double block = (double)cfg->tile_oc;
  const hetc_kit_loop_t loop = {
      .exec_macs = macs,
      .vector_width = lanes(block, simd),
      .unroll = cfg->unroll_kw ? s->KW : 1,
      .inner_loop = block,
      .parallel_units = s->N * hpc_fceil_div(s->K, block) * (cfg->parallel ? s->OH : 1),
      .algo = algo,
      .layout = hetc_kit_layout_nchwc(input_block)};
  hetc_kit_features_put_loop(f, &loop);
}

static void conv_nchwc(const hetc_plugin_workload_t *wl, const vec_config_t *cfg, int32_t simd,
                       hetc_kit_features_t *f) {
  const hpc_conv_shape_t s = hpc_conv_shape(wl);
  const double icbn = (double)cfg->tile_ic, ocbn = (double)cfg->tile_oc;
  const double cp = hpc_fceil_div(s.C, icbn) * icbn, kp = hpc_fceil_div(s.K, ocbn) * ocbn;
  const double owt = (double)vec_conv_ow_tile(wl->output.shape[3], cfg->tile_oc);
  const double reduction = s.C * s.KH * s.KW; /* a partial last block runs its real channels */
  int32_t orders[MAX_ORDERS * NUM_AXES];
  const int32_t num_orders = vec_conv_nchwc_orders(orders, MAX_ORDERS);
  const int32_t order = cfg->reorder >= 0 && cfg->reorder < num_orders ? (int32_t)cfg->reorder : 0;
  const int32_t outermost = orders[order * NUM_AXES];
  /* Innermost ic: one pixel's accumulators take the block's ICBN steps in
   * a row; innermost ow: every step updates another pixel's. */
  const double steps = orders[order * NUM_AXES + NUM_AXES - 1] == AXIS_IC ? icbn : 1;
  const hetc_kit_feature_tile_t reg = {.spatial = ocbn,
                                  .reduction = steps,
                                  .in = steps,
                                  .weight = steps * ocbn,
                                  .out = 2 * ocbn};
  hetc_kit_feature_tile_t cache;
  if (outermost == AXIS_OW) { /* one pixel's whole reduction */
    cache = (hetc_kit_feature_tile_t){.spatial = ocbn,
                                 .reduction = reduction,
                                 .in = cp * hetc_kit_window_span(1, s.SH, s.KH, s.DH, s.H) *
                                       hetc_kit_window_span(1, s.SW, s.KW, s.DW, s.W),
                                 .weight = cp * s.KH * s.KW * ocbn,
                                 .out = ocbn};
  } else if (outermost == AXIS_KH) { /* one kernel row over every channel */
    cache = (hetc_kit_feature_tile_t){.spatial = owt * ocbn,
                                 .reduction = s.C * s.KW,
                                 .in = cp * hetc_kit_window_span(owt, s.SW, s.KW, s.DW, s.W),
                                 .weight = cp * s.KW * ocbn,
                                 .out = owt * ocbn};
  } else { /* one input-channel block */
    cache = (hetc_kit_feature_tile_t){.spatial = owt * ocbn,
                                 .reduction = icbn * s.KH * s.KW,
                                 .in = icbn * hetc_kit_window_span(1, s.SH, s.KH, s.DH, s.H) *
                                       hetc_kit_window_span(owt, s.SW, s.KW, s.DW, s.W),
                                 .weight = s.KH * s.KW * icbn * ocbn,
                                 .out = owt * ocbn};
  }
  const double rows = cfg->parallel ? 1 : s.OH;
  const hetc_kit_feature_tile_t block = {
      .spatial = rows * s.OW * ocbn,
      .reduction = reduction,
      .in = cp * (cfg->parallel ? hetc_kit_window_span(1, s.SH, s.KH, s.DH, s.H) : s.H) * s.W,
      .weight = cp * s.KH * s.KW * ocbn,
      .out = rows * s.OW * ocbn};
  const double macs = s.N * kp * s.OH * s.OW * reduction;
  const hetc_kit_feature_tile_t grid = {.spatial = s.N * kp * s.OH * s.OW,
                                   .reduction = reduction,
                                   .in = s.N * cp * s.H * s.W,
                                   .weight = kp * cp * s.KH * s.KW,
                                   .out = s.N * kp * s.OH * s.OW,
                                   .macs = macs};
  hetc_kit_features_put_level(f, HETC_FEATURE_LEVEL_REGISTER, &reg);
  hetc_kit_features_put_level(f, HETC_FEATURE_LEVEL_CACHE, &cache);
  hetc_kit_features_put_level(f, HETC_FEATURE_LEVEL_BLOCK, &block);
  hetc_kit_features_put_level(f, HETC_FEATURE_LEVEL_GRID, &grid);
  put_nchwc_loop(f, &s, cfg, simd, macs, HETC_FEATURE_ALGO_DIRECT, cfg->tile_ic);
}

static void conv_depthwise(const hetc_plugin_workload_t *wl, const vec_config_t *cfg,
                           int32_t simd, hetc_kit_features_t *f) {
  const hpc_conv_shape_t s = hpc_conv_shape(wl);
  const double bn = (double)cfg->tile_oc, kp = hpc_fceil_div(s.K, bn) * bn, taps = s.KH * s.KW;
  const double owt = (double)vec_conv_ow_tile(wl->output.shape[3], cfg->tile_oc);
  /* Order 0: taps outside pixels (one kernel row over the tile; each step
   * updates another pixel's accumulators); 1: one pixel's whole window
   * (its accumulators take every tap in a row). */
  const double steps = cfg->reorder == 0 ? 1 : taps;
  const hetc_kit_feature_tile_t reg = {.spatial = bn,
                                  .reduction = steps,
                                  .in = steps * bn,
                                  .weight = steps * bn,
                                  .out = 2 * bn};
  const hetc_kit_feature_tile_t cache =
      cfg->reorder == 0
          ? (hetc_kit_feature_tile_t){.spatial = owt * bn,
                                 .reduction = s.KW,
                                 .in = hetc_kit_window_span(owt, s.SW, s.KW, s.DW, s.W) * bn,
                                 .weight = s.KW * bn,
                                 .out = owt * bn}
          : (hetc_kit_feature_tile_t){.spatial = bn,
                                 .reduction = taps,
                                 .in = hetc_kit_window_span(1, s.SH, s.KH, s.DH, s.H) *
                                       hetc_kit_window_span(1, s.SW, s.KW, s.DW, s.W) * bn,
                                 .weight = taps * bn,
                                 .out = bn};
  const double rows = cfg->parallel ? 1 : s.OH;
  const hetc_kit_feature_tile_t block = {
      .spatial = rows * s.OW * bn,
      .reduction = taps,
      .in = (cfg->parallel ? hetc_kit_window_span(1, s.SH, s.KH, s.DH, s.H) : s.H) * s.W * bn,
      .weight = taps * bn,
      .out = rows * s.OW * bn};
  const double macs = s.N * kp * s.OH * s.OW * taps;
  const hetc_kit_feature_tile_t grid = {.spatial = s.N * kp * s.OH * s.OW,
                                   .reduction = taps,
                                   .in = s.N * kp * s.H * s.W,
                                   .weight = kp * taps,
                                   .out = s.N * kp * s.OH * s.OW};
  hetc_kit_features_put_level(f, HETC_FEATURE_LEVEL_REGISTER, &reg);
  hetc_kit_features_put_level(f, HETC_FEATURE_LEVEL_CACHE, &cache);
  hetc_kit_features_put_level(f, HETC_FEATURE_LEVEL_BLOCK, &block);
  hetc_kit_features_put_level(f, HETC_FEATURE_LEVEL_GRID, &grid);
  put_nchwc_loop(f, &s, cfg, simd, macs, HETC_FEATURE_ALGO_DEPTHWISE, cfg->tile_oc);
}

static void conv_nchw(const hetc_plugin_workload_t *wl, const vec_config_t *cfg, int32_t simd,
                      hetc_kit_features_t *f) {
  const hpc_conv_shape_t s = hpc_conv_shape(wl);
  const double cg = s.C / wl->groups, reduction = cg * s.KH * s.KW;
  /* Order 0 accumulates a whole output row in place, one kernel tap at a
   * time (the tap's weight held in a register across the row); order 1 is
   * the canonical nest with one scalar accumulator per output. */
  const int row_order = cfg->reorder == 0;
  const hetc_kit_feature_tile_t reg =
      row_order ? (hetc_kit_feature_tile_t){.spatial = 1,
                                       .reduction = 1,
                                       .in = 1,
                                       .weight = 1 / s.OW,
                                       .out = 2}
                : (hetc_kit_feature_tile_t){.spatial = 1,
                                       .reduction = reduction,
                                       .in = reduction,
                                       .weight = reduction,
                                       .out = 1};
  const hpc_conv_nchw_tiles_t t = hpc_conv_nchw_tiles(&s, wl->groups);
  const double macs = s.N * s.K * s.OH * s.OW * reduction;
  hetc_kit_features_put_level(f, HETC_FEATURE_LEVEL_REGISTER, &reg);
  hetc_kit_features_put_level(f, HETC_FEATURE_LEVEL_CACHE, &t.row);
  hetc_kit_features_put_level(f, HETC_FEATURE_LEVEL_BLOCK, cfg->parallel ? &t.row : &t.plane);
  hetc_kit_features_put_level(f, HETC_FEATURE_LEVEL_GRID, &t.grid);
  /* The row sweep is contiguous only at stride 1; the canonical nest's
   * innermost loop is the guarded kw (kh once kw is unrolled). */
  const double inner = row_order ? s.OW : cfg->unroll_kw ? s.KH : s.KW;
  const hetc_kit_loop_t loop = {.exec_macs = macs,
                           .vector_width = row_order && s.SW == 1 ? lanes(s.OW, simd) : 1,
                           .unroll = cfg->unroll_kw ? s.KW : 1,
                           .inner_loop = inner,
                           .parallel_units = s.N * s.K * (cfg->parallel ? s.OH : 1),
                           .algo = HETC_FEATURE_ALGO_DIRECT,
                           .layout = hetc_kit_layout_row_major()};
  hetc_kit_features_put_loop(f, &loop);
}

static void dense(const hetc_plugin_workload_t *wl, int32_t simd, hetc_kit_features_t *f) {
  const double n = (double)wl->inputs[0].shape[0], k = (double)wl->inputs[0].shape[1];
  const double u = (double)wl->output.shape[1];
  /* One output per parallel iteration, a vectorised dot product. */
  const hetc_kit_feature_tile_t one = {.spatial = 1, .reduction = k, .in = k, .weight = k, .out = 1};
  const hetc_kit_feature_tile_t grid = {
      .spatial = n * u, .reduction = k, .in = n * k, .weight = u * k, .out = n * u};
  hetc_kit_features_put_level(f, HETC_FEATURE_LEVEL_REGISTER, &one);
  hetc_kit_features_put_level(f, HETC_FEATURE_LEVEL_CACHE, &one);
  hetc_kit_features_put_level(f, HETC_FEATURE_LEVEL_BLOCK, &one);
  hetc_kit_features_put_level(f, HETC_FEATURE_LEVEL_GRID, &grid);
  const hetc_kit_loop_t loop = {.exec_macs = n * u * k,
                           .vector_width = lanes(k, simd),
                           .unroll = 1,
                           .inner_loop = k,
                           .parallel_units = n * u,
                           .algo = HETC_FEATURE_ALGO_GEMM,
                           .layout = hetc_kit_layout_row_major()};
  hetc_kit_features_put_loop(f, &loop);
}

int32_t vec_features_fill(const hetc_plugin_workload_t *wl, int kind, const vec_config_t *cfg,
                          int32_t simd_width, float *out, int32_t capacity) {
  hetc_kit_features_t f = {out, capacity};
  switch (kind) {
    case VEC_T_CONV_NCHWC:
      if (hetc_kit_conv_is_depthwise(wl))
        conv_depthwise(wl, cfg, simd_width, &f);
      else
        conv_nchwc(wl, cfg, simd_width, &f);
      break;
    case VEC_T_CONV_NCHW: conv_nchw(wl, cfg, simd_width, &f); break;
    case VEC_T_DENSE: dense(wl, simd_width, &f); break;
    default: return -1; /* ops other than conv2d and dense: nothing to tune */
  }
  return hetc_kit_features_count(&f);
}
