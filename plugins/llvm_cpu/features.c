/* The cpu plugin's part of a feature row (schema 1, api/hetc/plugin.h):
 * the loop nest each tunable template generates for a config, read off the
 * same numbers the generators use (gen_conv.c, gen_im2col.c,
 * gen_winograd.c, gen_gemm.c), so that configs which run differently look
 * different to the cost model. Nothing is generated or compiled here.
 *
 * The levels, per template (R = reg_n, V = tile_oc / L vectors of L lanes,
 * cpu_isa_block_lanes):
 *   conv2d_nchwc   register: R columns x tile_oc accumulators over the
 *                  whole reduction; cache: one input-channel block of that
 *                  register block (its input window and weights); block:
 *                  one (n, ocb) plane or, with parallel 1 or 2, one output
 *                  row (2: the row's blocks run one after another and
 *                  share its input).
 *   depthwise      register: one pixel's channel block over the window;
 *                  cache and block: one output row of one channel block.
 *   conv2d_nchw    register: one scalar accumulator; cache: one output row
 *                  (its weights stay hot); block: one (n, k) plane.
 *   im2col         register: the micro-kernel's R pixels x tile_oc over one
 *                  reduction chunk; cache: the packed panel (tiles x R
 *                  pixels) against one output-channel block's weights;
 *                  block: tiles x R pixels of one image, all channel blocks
 *                  or (parallel 1) one.
 *   winograd       register: R tiles x tile_oc per transformed position;
 *                  cache: one position's chunk of transformed tiles
 *                  against one channel block's panel; block: a main
 *                  iteration, every position of a chunk of tiles for one
 *                  output-channel block.
 *   dense          register, cache and block: R rows x tile_oc outputs over
 *                  the whole reduction (rows are read in place). */
#include "cpu.h"
#include "plugin_features.h"

/* The templates that read NCHWc input in tile_ic blocks (conv2d_nchwc,
 * im2col, Winograd) share their micro-kernels' vectors. */
static void put_nchwc_loop(hetc_kit_features_t *f, const cpu_config_t *cfg, int lanes,
                           hetc_kit_loop_t loop) {
  loop.vector_width = lanes;
  loop.layout = hetc_kit_layout_nchwc(cfg->tile_ic);
  hetc_kit_features_put_loop(f, &loop);
}

/* The whole NCHWc convolution: padded channel blocks are computed. */
static void put_grid_nchwc(hetc_kit_features_t *f, const hpc_conv_shape_t *s, double cp, double kp,
                           double reduction, double weight, double macs) {
  const hetc_kit_feature_tile_t grid = {.spatial = s->N * kp * s->OH * s->OW,
                                   .reduction = reduction,
                                   .in = s->N * cp * s->H * s->W,
                                   .weight = weight,
                                   .out = s->N * kp * s->OH * s->OW,
                                   .macs = macs};
  hetc_kit_features_put_level(f, HETC_FEATURE_LEVEL_GRID, &grid);
}

/* Also the grouped template, whose blocks reduce over their span only. */
static void conv_nchwc(const hetc_plugin_workload_t *wl, const cpu_config_t *cfg, int lanes,
                       int grouped, hetc_kit_features_t *f) {
  const hpc_conv_shape_t s = hpc_conv_shape(wl);
  const double ic = (double)cfg->tile_ic, oc = (double)cfg->tile_oc;
  const double cp = hpc_fceil_div(s.C, ic) * ic, kp = hpc_fceil_div(s.K, oc) * oc;
  const double reduction =
      (grouped ? (double)cpu_grouped_span(wl, cfg->tile_oc) : cp) * s.KH * s.KW;
  /* Merged rows (gen_conv.c): one row of OH x OW columns, one input row.
   * A register block longer than the row is the row (reg_n reaches a
   * merged row's length whether or not this config merges). */
  const int flat = cpu_conv_nchwc_flat(wl, cfg->tile_oc);
  const double oh = flat ? 1 : s.OH, ow = flat ? s.OH * s.OW : s.OW;
  const double r = hpc_min2((double)cfg->reg_n, ow);
  const double h = flat ? 1 : s.H, w = flat ? s.H * s.W : s.W;
  const double window_rows = flat ? 1 : hetc_kit_window_span(1, s.SH, s.KH, s.DH, s.H);
  const hetc_kit_feature_tile_t reg = {.spatial = r * oc,
                                  .reduction = reduction,
                                  .in = r * reduction,
                                  .weight = oc * reduction,
                                  .out = r * oc};
  const hetc_kit_feature_tile_t cache = {
      .spatial = r * oc,
      .reduction = ic * s.KH * s.KW,
      .in = ic * window_rows * hetc_kit_window_span(r, s.SW, s.KW, s.DW, w),
      .weight = s.KH * s.KW * ic * oc,
      .out = r * oc};
  const double rows = cfg->parallel ? 1 : oh;
  const hetc_kit_feature_tile_t block = {.spatial = rows * ow * oc,
                                    .reduction = reduction,
                                    /* parallel 2: the blocks of a row share its input */
                                    .in = cp * (cfg->parallel ? window_rows : h) * w /
                                          (cfg->parallel == 2 ? hpc_fceil_div(s.K, oc) : 1),
                                    .weight = reduction * oc,
                                    .out = rows * ow * oc};
  hetc_kit_features_put_level(f, HETC_FEATURE_LEVEL_REGISTER, &reg);
  hetc_kit_features_put_level(f, HETC_FEATURE_LEVEL_CACHE, &cache);
  hetc_kit_features_put_level(f, HETC_FEATURE_LEVEL_BLOCK, &block);
  const double macs = s.N * kp * s.OH * s.OW * reduction;
  put_grid_nchwc(f, &s, cp, kp, reduction, kp * reduction, macs);
  put_nchwc_loop(
      f, cfg, lanes,
      (hetc_kit_loop_t){.exec_macs = macs,
                   .unroll = r * (oc / lanes) * (cfg->unroll_kw ? s.KW : 1),
                   .inner_loop = ic,
                   .parallel_units = s.N * hpc_fceil_div(s.K, oc) * (cfg->parallel ? oh : 1),
                   .algo = HETC_FEATURE_ALGO_DIRECT});
}

static void conv_depthwise(const hetc_plugin_workload_t *wl, const cpu_config_t *cfg, int lanes,
                           hetc_kit_features_t *f) {
  const hpc_conv_shape_t s = hpc_conv_shape(wl);
  const double bn = (double)cfg->tile_oc, kp = hpc_fceil_div(s.K, bn) * bn, taps = s.KH * s.KW;
  const double window_rows = hetc_kit_window_span(1, s.SH, s.KH, s.DH, s.H);
  const hetc_kit_feature_tile_t reg = {
      .spatial = bn, .reduction = taps, .in = taps * bn, .weight = taps * bn, .out = bn};
  /* A task is one output row of one channel block: cache and block agree. */
  const hetc_kit_feature_tile_t row = {.spatial = s.OW * bn,
                                  .reduction = taps,
                                  .in = window_rows * s.W * bn,
                                  .weight = taps * bn,
                                  .out = s.OW * bn};
  hetc_kit_features_put_level(f, HETC_FEATURE_LEVEL_REGISTER, &reg);
  hetc_kit_features_put_level(f, HETC_FEATURE_LEVEL_CACHE, &row);
  hetc_kit_features_put_level(f, HETC_FEATURE_LEVEL_BLOCK, &row);
  const double macs = s.N * kp * s.OH * s.OW * taps;
  put_grid_nchwc(f, &s, kp, kp, taps, kp * taps, macs);
  const hetc_kit_loop_t loop = {.exec_macs = macs,
                           .vector_width = lanes,
                           .unroll = bn / lanes,
                           .inner_loop = s.KW,
                           .parallel_units = s.N * hpc_fceil_div(s.K, bn) * s.OH,
                           .algo = HETC_FEATURE_ALGO_DEPTHWISE,
                           .layout = hetc_kit_layout_nchwc(cfg->tile_oc)};
  hetc_kit_features_put_loop(f, &loop);
}

static void conv_nchw(const hetc_plugin_workload_t *wl, hetc_kit_features_t *f) {
  const hpc_conv_shape_t s = hpc_conv_shape(wl);
  const double cg = s.C / wl->groups, reduction = cg * s.KH * s.KW;
  const hetc_kit_feature_tile_t reg = {
      .spatial = 1, .reduction = reduction, .in = reduction, .weight = reduction, .out = 1};
  const hpc_conv_nchw_tiles_t t = hpc_conv_nchw_tiles(&s, wl->groups);
  const double macs = s.N * s.K * s.OH * s.OW * reduction;
  hetc_kit_features_put_level(f, HETC_FEATURE_LEVEL_REGISTER, &reg);
  hetc_kit_features_put_level(f, HETC_FEATURE_LEVEL_CACHE, &t.row);
  hetc_kit_features_put_level(f, HETC_FEATURE_LEVEL_BLOCK, &t.plane);
  hetc_kit_features_put_level(f, HETC_FEATURE_LEVEL_GRID, &t.grid);
  /* Scalar code: the kw loop is short and guarded, LLVM leaves it scalar. */
  const hetc_kit_loop_t loop = {.exec_macs = macs,
                           .vector_width = 1,
                           .unroll = 1,
                           .inner_loop = s.KW,
                           .parallel_units = s.N * s.K,
                           .algo = HETC_FEATURE_ALGO_DIRECT,
                           .layout = hetc_kit_layout_row_major()};
  hetc_kit_features_put_loop(f, &loop);
}

static void conv_im2col(const hetc_plugin_workload_t *wl, const cpu_config_t *cfg, int lanes,
                        hetc_kit_features_t *f) {
  const hpc_conv_shape_t s = hpc_conv_shape(wl);
  const double ic = (double)cfg->tile_ic, oc = (double)cfg->tile_oc;
  const double mr = (double)cfg->reg_n, pb = mr * (double)cfg->tiles;
  const double cp = hpc_fceil_div(s.C, ic) * ic, kp = hpc_fceil_div(s.K, oc) * oc;
  const double p = s.OH * s.OW, reduction = cp * s.KH * s.KW;
  /* One packed chunk of whole (icb, kh, kw) rows; partial sums of earlier
   * chunks go through y, so a chunked reduction stores and reloads them. */
  const double kc = (double)cpu_im2col_chunk_rows(wl, cfg) * ic;
  const double sums = kc < reduction ? 2 : 1;
  const hetc_kit_feature_tile_t reg = {
      .spatial = mr * oc, .reduction = kc, .in = mr * kc, .weight = oc * kc, .out = sums * mr * oc};
  const hetc_kit_feature_tile_t panel = {
      .spatial = pb * oc, .reduction = kc, .in = pb * kc, .weight = kc * oc, .out = sums * pb * oc};
  /* The task's pixels run across row ends: their input rows, estimated
   * from the output rows they touch. */
  const double pixel_rows = pb >= p ? s.OH : hpc_min2(s.OH, hpc_fceil_div(pb, s.OW) + 1);
  const double channels = cfg->parallel ? oc : kp;
  const hetc_kit_feature_tile_t block = {
      .spatial = hpc_min2(pb, p) * channels,
      .reduction = reduction,
      .in = cp * hetc_kit_window_span(pixel_rows, s.SH, s.KH, s.DH, s.H) * s.W,
      .weight = channels * reduction,
      .out = hpc_min2(pb, p) * channels};
  hetc_kit_features_put_level(f, HETC_FEATURE_LEVEL_REGISTER, &reg);
  hetc_kit_features_put_level(f, HETC_FEATURE_LEVEL_CACHE, &panel);
  hetc_kit_features_put_level(f, HETC_FEATURE_LEVEL_BLOCK, &block);
  /* Every register block that starts inside the plane runs in full. */
  const double macs = s.N * kp * hpc_fceil_div(p, mr) * mr * reduction;
  put_grid_nchwc(f, &s, cp, kp, reduction, kp * reduction, macs);
  put_nchwc_loop(f, cfg, lanes,
                 (hetc_kit_loop_t){.exec_macs = macs,
                              .unroll = mr * (oc / lanes),
                              .inner_loop = kc,
                              .parallel_units = s.N * hpc_fceil_div(p, pb) *
                                                (cfg->parallel ? hpc_fceil_div(s.K, oc) : 1),
                              .algo = HETC_FEATURE_ALGO_IM2COL});
}

static void conv_winograd(const hetc_plugin_workload_t *wl, const cpu_config_t *cfg, int lanes,
                          hetc_kit_features_t *f) {
  const hpc_conv_shape_t s = hpc_conv_shape(wl);
  const double ic = (double)cfg->tile_ic, oc = (double)cfg->tile_oc, t = (double)cfg->reg_n;
  const double m = (double)cfg->tile_m, a2 = (m + 2) * (m + 2);
  const double cp = hpc_fceil_div(s.C, ic) * ic, kp = hpc_fceil_div(s.K, oc) * oc;
  const double padded = (double)cpu_winograd_padded_tiles(wl, cfg);
  const double chunk = (double)cpu_winograd_chunk_tiles(wl, cfg);
  /* The GEMM per transformed position reduces over the padded channels. */
  const hetc_kit_feature_tile_t reg = {
      .spatial = t * oc, .reduction = cp, .in = t * cp, .weight = oc * cp, .out = t * oc};
  const hetc_kit_feature_tile_t cache = {
      .spatial = chunk * oc, .reduction = cp, .in = chunk * cp, .weight = cp * oc, .out = chunk * oc};
  /* A main iteration: one output-channel block over a chunk of tiles, every
   * transformed position. */
  const hetc_kit_feature_tile_t block = {.spatial = chunk * m * m * oc,
                                    .reduction = cp,
                                    .in = a2 * chunk * cp,
                                    .weight = a2 * cp * oc,
                                    .out = a2 * chunk * oc,
                                    .macs = a2 * chunk * cp * oc};
  hetc_kit_features_put_level(f, HETC_FEATURE_LEVEL_REGISTER, &reg);
  hetc_kit_features_put_level(f, HETC_FEATURE_LEVEL_CACHE, &cache);
  hetc_kit_features_put_level(f, HETC_FEATURE_LEVEL_BLOCK, &block);
  const double macs = s.N * padded * a2 * cp * kp;
  put_grid_nchwc(f, &s, cp, kp, cp, a2 * cp * kp, macs);
  put_nchwc_loop(f, cfg, lanes,
                 (hetc_kit_loop_t){.exec_macs = macs,
                              .unroll = t * (oc / lanes),
                              .inner_loop = cp,
                              .parallel_units = s.N * hpc_fceil_div(s.K, oc) * hpc_fceil_div(padded, chunk),
                              .algo = HETC_FEATURE_ALGO_WINOGRAD});
}

static void dense(const hetc_plugin_workload_t *wl, const cpu_config_t *cfg, int lanes,
                  hetc_kit_features_t *f) {
  const double n = (double)wl->inputs[0].shape[0], c = (double)wl->inputs[0].shape[1];
  const double u = (double)wl->output.shape[1];
  const double bn = (double)cfg->tile_oc, mr = hpc_min2((double)cfg->reg_n, n);
  const double up = hpc_fceil_div(u, bn) * bn;
  /* No cache blocking: a task's rows and weights are its register tile's.
   * A block past the last unit computes whole vectors but stores only the
   * units that exist. */
  const hetc_kit_feature_tile_t tile = {.spatial = mr * bn,
                                   .reduction = c,
                                   .in = mr * c,
                                   .weight = bn * c,
                                   .out = mr * hpc_min2(bn, u)};
  hetc_kit_features_put_level(f, HETC_FEATURE_LEVEL_REGISTER, &tile);
  hetc_kit_features_put_level(f, HETC_FEATURE_LEVEL_CACHE, &tile);
  hetc_kit_features_put_level(f, HETC_FEATURE_LEVEL_BLOCK, &tile);
  /* The last channel block computes whole vectors and stores lane by lane. */
  const double macs = n * up * c;
  const hetc_kit_feature_tile_t grid = {
      .spatial = n * up, .reduction = c, .in = n * c, .weight = up * c, .out = n * u};
  hetc_kit_features_put_level(f, HETC_FEATURE_LEVEL_GRID, &grid);
  const hetc_kit_loop_t loop = {
      .exec_macs = macs,
      .vector_width = lanes,
      .unroll = mr * (bn / lanes),
      .inner_loop = c,
      .parallel_units = hpc_fceil_div(n, (double)cfg->reg_n) * hpc_fceil_div(u, bn),
      .algo = HETC_FEATURE_ALGO_GEMM,
      .layout = hetc_kit_layout_row_major()};
  hetc_kit_features_put_loop(f, &loop);
}

int32_t cpu_features_fill(const cpu_isa_t *isa, const hetc_plugin_workload_t *wl, int kind,
                          const cpu_config_t *cfg, float *out, int32_t capacity) {
  hetc_kit_features_t f = {out, capacity};
  const int lanes = cpu_isa_block_lanes(isa, cfg->tile_oc);
  switch (kind) {
    case CPU_T_CONV_NCHWC: conv_nchwc(wl, cfg, lanes, 0, &f); break;
    case CPU_T_CONV_GROUPED: conv_nchwc(wl, cfg, lanes, 1, &f); break;
    case CPU_T_CONV_DEPTHWISE: conv_depthwise(wl, cfg, lanes, &f); break;
    case CPU_T_CONV_NCHW: conv_nchw(wl, &f); break;
    case CPU_T_CONV_IM2COL: conv_im2col(wl, cfg, lanes, &f); break;
    case CPU_T_CONV_WINOGRAD: conv_winograd(wl, cfg, lanes, &f); break;
    case CPU_T_DENSE: dense(wl, cfg, lanes, &f); break;
    default: return -1; /* ops other than conv2d and dense: nothing to tune */
  }
  return hetc_kit_features_count(&f);
}
