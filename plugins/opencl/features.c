/* The plugin's part of a schema-1 feature row (api/feature-schema.md):
 * the levels of the generated kernels' tiling -- the work-item's register
 * tile, the local-memory step, the work-group, the grid -- from the config
 * alone, without generating code. */
#include "ocl.h"
#include "plugin_features.h"

/* A GEMM of batch x M x N x K in tiles of the config. */
static void gemm_rows(hetc_kit_features_t *f, const ocl_config_t *c, double batch, double M, double N, double K,
                      int32_t algo) {
  const double RM = (double)c->tile_m, RN = (double)c->tile_n, TK = (double)c->tile_k;
  const double TM = (double)c->wg_m * RM, TN = (double)c->wg_n * RN;
  const hetc_kit_feature_tile_t reg = {RM * RN, TK, RN * TK, RM * TK, RM * RN, 0};
  const hetc_kit_feature_tile_t step = {TM * TN, TK, TK * TN, TK * TM, 0, 0};
  const hetc_kit_feature_tile_t group = {TM * TN, K, K * TN, K * TM, TM * TN, 0};
  const hetc_kit_feature_tile_t grid = {batch * M * N, K, batch * K * N, batch * M * K, batch * M * N, 0};
  hetc_kit_features_put_level(f, HETC_FEATURE_LEVEL_REGISTER, &reg);
  hetc_kit_features_put_level(f, HETC_FEATURE_LEVEL_CACHE, &step);
  hetc_kit_features_put_level(f, HETC_FEATURE_LEVEL_BLOCK, &group);
  hetc_kit_features_put_level(f, HETC_FEATURE_LEVEL_GRID, &grid);
  const double groups = batch * hpc_fceil_div(M, TM) * hpc_fceil_div(N, TN);
  const hetc_kit_loop_t loop = {
      .exec_macs = groups * TM * TN * hpc_fceil_div(K, TK) * TK,
      .vector_width = (double)c->vector,
      .unroll = RM * RN / (double)c->vector * (c->unroll ? TK : 1),
      .inner_loop = c->unroll ? 1 : TK,
      .parallel_units = groups,
      .algo = algo,
      .layout = hetc_kit_layout_row_major(),
  };
  hetc_kit_features_put_loop(f, &loop);
}

/* The direct and depthwise templates: tile_k channels (1 for depthwise) of
 * a (wg_m*tile_m) x wg_h x (wg_n*tile_n) output block per step. */
static void direct_rows(hetc_kit_features_t *f, const hetc_plugin_workload_t *wl, const ocl_config_t *c,
                        int depthwise) {
  const hpc_conv_shape_t s = hpc_conv_shape(wl);
  const double G = wl->groups, Cg = s.C / G, Kg = s.K / G, taps = s.KH * s.KW;
  const double RM = depthwise ? 1 : (double)c->tile_m, RN = (double)c->tile_n;
  const double TKO = (double)c->wg_m * RM, TH = (double)c->wg_h, TW = (double)c->wg_n * RN;
  const double TC = depthwise ? 1 : (double)c->tile_k, reduction = depthwise ? taps : Cg * taps;
  const double in_h = hetc_kit_window_span(TH, s.SH, s.KH, s.DH, s.H);
  const double in_w = hetc_kit_window_span(TW, s.SW, s.KW, s.DW, s.W);
  const double out_block = TKO * TH * TW;
  const double channels_in = depthwise ? TKO : TC;
  const hetc_kit_feature_tile_t reg = {RM * RN, TC * taps, RN * TC * taps, RM * TC * taps, RM * RN, 0};
  const hetc_kit_feature_tile_t step = {out_block, TC * taps, channels_in * in_h * in_w,
                                   (depthwise ? TKO : TC * TKO) * taps, 0, 0};
  const hetc_kit_feature_tile_t group = {out_block, reduction, (depthwise ? TKO : Cg) * in_h * in_w,
                                    (depthwise ? TKO : Cg * TKO) * taps, out_block, 0};
  const hetc_kit_feature_tile_t grid = {s.N * s.K * s.OH * s.OW, reduction, s.N * s.C * s.H * s.W,
                                   s.K * (depthwise ? 1 : Cg) * taps, s.N * s.K * s.OH * s.OW, 0};
  hetc_kit_features_put_level(f, HETC_FEATURE_LEVEL_REGISTER, &reg);
  hetc_kit_features_put_level(f, HETC_FEATURE_LEVEL_CACHE, &step);
  hetc_kit_features_put_level(f, HETC_FEATURE_LEVEL_BLOCK, &group);
  hetc_kit_features_put_level(f, HETC_FEATURE_LEVEL_GRID, &grid);
  const double groups = s.N * (depthwise ? hpc_fceil_div(s.K, TKO) : G * hpc_fceil_div(Kg, TKO)) *
                        hpc_fceil_div(s.OH, TH) * hpc_fceil_div(s.OW, TW);
  const hetc_kit_loop_t loop = {
      .exec_macs = groups * out_block * (depthwise ? taps : hpc_fceil_div(Cg, TC) * TC * taps),
      .vector_width = depthwise ? 1 : (double)c->vector,
      .unroll = RM * RN * (c->unroll ? s.KW : 1),
      .inner_loop = c->unroll ? 1 : s.KW,
      .parallel_units = groups,
      .algo = depthwise ? HETC_FEATURE_ALGO_DEPTHWISE : HETC_FEATURE_ALGO_DIRECT,
      .layout = hetc_kit_layout_row_major(),
  };
  hetc_kit_features_put_loop(f, &loop);
}

int32_t ocl_features_fill(const hetc_plugin_workload_t *wl, int kind, const ocl_config_t *cfg, float *out,
                          int32_t capacity) {
  hetc_kit_features_t f = {out, capacity};
  const hetc_plugin_tensor_t *in = &wl->inputs[0];
  switch (kind) {
    case OCL_T_DENSE:
      gemm_rows(&f, cfg, 1, (double)wl->output.shape[1], (double)in->shape[0], (double)in->shape[1],
                HETC_FEATURE_ALGO_GEMM);
      break;
    case OCL_T_CONV_GEMM: {
      const hpc_conv_shape_t s = hpc_conv_shape(wl);
      const double G = wl->groups;
      gemm_rows(&f, cfg, G, s.K / G, s.N * s.OH * s.OW, s.C / G * s.KH * s.KW, HETC_FEATURE_ALGO_IM2COL);
      break;
    }
    case OCL_T_CONV_WINOGRAD: {
      const hpc_conv_shape_t s = hpc_conv_shape(wl);
      gemm_rows(&f, cfg, 16, s.K, s.N * ceil(s.OH / 2) * ceil(s.OW / 2), s.C, HETC_FEATURE_ALGO_WINOGRAD);
      break;
    }
    case OCL_T_MATMUL: {
      const int32_t r = wl->output.rank;
      double batches = 1;
      for (int32_t dim = 0; dim + 2 < r; ++dim) batches *= (double)wl->output.shape[dim];
      /* Scalar loads; the kernel's loops have constant trips, which the
       * compiler unrolls. */
      ocl_config_t m = *cfg;
      m.vector = m.unroll = 1;
      gemm_rows(&f, &m, batches, (double)wl->output.shape[r - 2], (double)wl->output.shape[r - 1],
                (double)in->shape[r - 1], HETC_FEATURE_ALGO_GEMM);
      break;
    }
    case OCL_T_CONV_DIRECT: direct_rows(&f, wl, cfg, 0); break;
    case OCL_T_CONV_DEPTHWISE: direct_rows(&f, wl, cfg, 1); break;
    default: return -1;
  }
  /* Work-items that share a work-group's local memory and barriers. */
  ocl_demand_t demand;
  ocl_config_demand(wl, kind, cfg, &demand);
  hetc_kit_features_put(&f, HETC_FEATURE_THREADS_PER_GROUP,
                   hetc_kit_log2p((double)(demand.work_group[0] * demand.work_group[1] * demand.work_group[2])));
  return hetc_kit_features_count(&f);
}
