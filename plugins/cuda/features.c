/* The plugin's part of a schema-1 feature row (api/feature-schema.md):
 * each template's levels of tiling -- the thread's register tile, the
 * shared-memory stage, the block, the grid -- from the config alone. */
#include "cu.h"
#include "plugin_features.h"

/* A GEMM of batch x M x N x K: thread tiles of RM x RN, block tiles of
 * TM x TN, stages of TK. */
static void gemm_rows(hetc_kit_features_t *f, double RM, double RN, double TM, double TN, double TK, double batch,
                      double M, double N, double K, int32_t algo) {
  const hetc_kit_feature_tile_t reg = {RM * RN, TK, RN * TK, RM * TK, RM * RN, 0};
  const hetc_kit_feature_tile_t step = {TM * TN, TK, TK * TN, TK * TM, 0, 0};
  const hetc_kit_feature_tile_t block = {TM * TN, K, K * TN, K * TM, TM * TN, 0};
  const hetc_kit_feature_tile_t grid = {batch * M * N, K, batch * K * N, batch * M * K, batch * M * N, 0};
  hetc_kit_features_put_level(f, HETC_FEATURE_LEVEL_REGISTER, &reg);
  hetc_kit_features_put_level(f, HETC_FEATURE_LEVEL_CACHE, &step);
  hetc_kit_features_put_level(f, HETC_FEATURE_LEVEL_BLOCK, &block);
  hetc_kit_features_put_level(f, HETC_FEATURE_LEVEL_GRID, &grid);
  const double blocks = batch * hpc_fceil_div(M, TM) * hpc_fceil_div(N, TN);
  const hetc_kit_loop_t loop = {
      .exec_macs = blocks * TM * TN * hpc_fceil_div(K, TK) * TK,
      .vector_width = 1,
      .unroll = RM * RN,
      .inner_loop = TK,
      .parallel_units = blocks,
      .algo = algo,
      .layout = hetc_kit_layout_row_major(),
  };
  hetc_kit_features_put_loop(f, &loop);
}

int32_t cu_features_fill(const hetc_plugin_workload_t *wl, int kind, const cu_config_t *c, float *out,
                         int32_t capacity) {
  hetc_kit_features_t f = {out, capacity};
  cu_demand_t d;
  cu_config_demand(wl, kind, c, &d);
  const double threads = (double)(d.block[0] * d.block[1] * d.block[2]);
  const hpc_conv_shape_t s = wl->op == HETC_PLUGIN_OP_CONV2D ? hpc_conv_shape(wl) : (hpc_conv_shape_t){0};
  const double pixels = s.N * s.OH * s.OW;
  switch (kind) {
    case CU_T_CONV_NCHW: {
      /* Registers: channels x pixels of one thread; block: of all threads. */
      const int64_t *tf = c->tile_f, *ty = c->tile_y, *tx = c->tile_x;
      const double RM = (double)(tf[1] * tf[3]), RN = (double)(ty[1] * ty[3] * tx[1] * tx[3]);
      const double TM = RM * (double)d.block[2], TN = RN * (double)(d.block[0] * d.block[1]);
      gemm_rows(&f, RM, RN, TM, TN, (double)(c->tile_rc[1] * c->tile_ry[1] * c->tile_rx[1]), 1, s.K, pixels,
                s.C / wl->groups * s.KH * s.KW, HETC_FEATURE_ALGO_DIRECT);
      break;
    }
    case CU_T_CONV_NHWC: {
      const double RN = (double)(c->tile_n * c->vthread_n), RC = (double)(c->tile_c * c->vthread_c);
      gemm_rows(&f, RC, RN, RC * (double)c->num_thread_c, RN * (double)c->num_thread_n, (double)c->step, 1, s.K,
                pixels, s.C * s.KH * s.KW, HETC_FEATURE_ALGO_DIRECT);
      break;
    }
    case CU_T_CONV_WINOGRAD:
      gemm_rows(&f, (double)c->thread_m, (double)c->thread_n, (double)c->block_m, (double)c->block_n,
                (double)c->block_k, 16, s.K, s.N * ceil(s.OH / 2) * ceil(s.OW / 2), s.C, HETC_FEATURE_ALGO_WINOGRAD);
      break;
    case CU_T_CONV_IGEMM_TC:
      gemm_rows(&f, (double)d.accumulators, 1, (double)c->block_m, (double)c->block_n, (double)c->block_k, 1, s.K,
                pixels, s.C * s.KH * s.KW, HETC_FEATURE_ALGO_IM2COL);
      break;
    case CU_T_CONV_DEPTHWISE:
      gemm_rows(&f, (double)c->thread_m, (double)c->thread_n, (double)(c->block_m * c->thread_m),
                (double)(c->block_n * c->thread_n), s.KH * s.KW, s.N * s.K, s.OH, s.OW, s.KH * s.KW,
                HETC_FEATURE_ALGO_DEPTHWISE);
      break;
    case CU_T_MATMUL: {
      const int32_t r = wl->output.rank;
      double batches = 1;
      for (int32_t dim = 0; dim + 2 < r; ++dim) batches *= (double)wl->output.shape[dim];
      gemm_rows(&f, (double)c->thread_m, (double)c->thread_n, (double)c->block_m, (double)c->block_n,
                (double)c->block_k, batches, (double)wl->output.shape[r - 2], (double)wl->output.shape[r - 1],
                (double)wl->inputs[0].shape[r - 1], HETC_FEATURE_ALGO_GEMM);
      break;
    }
    case CU_T_DENSE:
      gemm_rows(&f, (double)c->thread_m, (double)c->thread_n, (double)c->block_m, (double)c->block_n,
                (double)c->block_k, 1, (double)wl->inputs[0].shape[0], (double)wl->output.shape[1],
                (double)wl->inputs[0].shape[1], HETC_FEATURE_ALGO_GEMM);
      break;
    default: return -1;
  }
  hetc_kit_features_put(&f, HETC_FEATURE_THREADS_PER_GROUP, hetc_kit_log2p(threads));
  return hetc_kit_features_count(&f);
}
