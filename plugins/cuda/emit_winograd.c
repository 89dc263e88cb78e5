/* cuda_conv2d_winograd: F(2x2, 3x3) for 3x3 convolutions of stride 1,
 * dilation 1 and one group (any padding), in three kernels:
 *
 *   winograd_input    V[xi][c][t] = (B^T d B)[xi] for the 4x4 input patch
 *                     d of tile t (tiles of 2x2 outputs, t over images,
 *                     tile rows, tile columns), zero outside the input;
 *   winograd_product  M[xi][k][t] = sum_c U[xi][k][c] V[xi][c][t], the
 *                     shared tiled GEMM (emit_gemm.c) batched over the 16
 *                     xi, with the config's block and thread tiles;
 *   winograd_output   Y = A^T M A per tile and output channel, the fused
 *                     epilogue, NCHW stores of the outputs inside P x Q.
 *
 * V and M live in the workspace (V first). U = G g G^T is computed once at
 * pack time (hpc_pack_winograd_f2x3_weight) as U[16][K][C]. One thread per
 * (channel, tile) in the transforms, neighbouring threads on neighbouring
 * tiles, so that the workspace is read and written in whole lines. */
#include <stdio.h>

#include "cu.h"

#define L(ind, ...) hpc_strbuf_line(&e->src, ind, __VA_ARGS__)

/* Threads per block of the transforms. */
#define TRANSFORM_BLOCK 256

static long long ll(int64_t v) { return (long long)v; }

typedef struct wino_shape_t {
  int64_t N, C, H, W, K, P, Q, PT, PL;
  int64_t TH, TW, T;  /* tile rows, columns, tiles of all images */
  int64_t VSIZE, MSIZE; /* floats of V and M */
} wino_shape_t;

static wino_shape_t wino_shape(const hetc_plugin_workload_t *wl) {
  wino_shape_t s;
  const hetc_plugin_tensor_t *in = &wl->inputs[0];
  s.N = in->shape[0], s.C = in->shape[1], s.H = in->shape[2], s.W = in->shape[3];
  s.K = wl->output.shape[1], s.P = wl->output.shape[2], s.Q = wl->output.shape[3];
  s.PT = wl->padding[0], s.PL = wl->padding[1];
  s.TH = hetc_kit_ceil_div(s.P, 2), s.TW = hetc_kit_ceil_div(s.Q, 2), s.T = s.N * s.TH * s.TW;
  s.VSIZE = 16 * s.C * s.T, s.MSIZE = 16 * s.K * s.T;
  return s;
}

/* The tile t's image and position: img, th, tw. */
static void emit_tile_position(cu_emit_t *e, const wino_shape_t *s) {
  L(1, "const int img = t / %lld, th = t / %lld %% %lld, tw = t %% %lld;", ll(s->TH * s->TW), ll(s->TW), ll(s->TH),
    ll(s->TW));
}

static void emit_input_transform(cu_emit_t *e, const wino_shape_t *s, const char *cast) {
  L(0, "HK_KERNEL(%d, 1, 1) winograd_input(HK_GLOBAL const float *HK_RESTRICT in, HK_GLOBAL float *HK_RESTRICT ws) {",
    TRANSFORM_BLOCK);
  L(1, "const long gid = HK_GID_X;");
  L(1, "if (gid >= %lld) return;", ll(s->C * s->T));
  L(1, "const int c = (int)(gid / %lld), t = (int)(gid %% %lld);", ll(s->T), ll(s->T));
  emit_tile_position(e, s);
  L(1, "const int y0 = th * 2 - %lld, x0 = tw * 2 - %lld;", ll(s->PT), ll(s->PL));
  L(1, "HK_GLOBAL const float *plane = in + (%simg * %lld + c) * %lld;", cast, ll(s->C), ll(s->H * s->W));
  L(1, "float d[4][4];");
  L(1, "#pragma unroll");
  L(1, "for (int y = 0; y < 4; ++y) {");
  L(2, "const int iy = y0 + y;");
  L(2, "#pragma unroll");
  L(2, "for (int x = 0; x < 4; ++x) {");
  L(3, "const int jx = x0 + x;");
  L(3, "d[y][x] = iy >= 0 && iy < %lld && jx >= 0 && jx < %lld ? plane[iy * %lld + jx] : 0.0f;", ll(s->H), ll(s->W),
    ll(s->W));
  L(2, "}");
  L(1, "}");
  /* B^T d: rows (d0 - d2, d1 + d2, d2 - d1, d1 - d3); then (B^T d) B on columns. */
  L(1, "float q[4][4];");
  L(1, "#pragma unroll");
  L(1, "for (int x = 0; x < 4; ++x) {");
  L(2, "q[0][x] = d[0][x] - d[2][x];");
  L(2, "q[1][x] = d[1][x] + d[2][x];");
  L(2, "q[2][x] = d[2][x] - d[1][x];");
  L(2, "q[3][x] = d[1][x] - d[3][x];");
  L(1, "}");
  L(1, "HK_GLOBAL float *v = ws + %sc * %lld + t;", cast, ll(s->T));
  L(1, "#pragma unroll");
  L(1, "for (int y = 0; y < 4; ++y) {");
  L(2, "v[%s(y * 4 + 0) * %lld] = q[y][0] - q[y][2];", cast, ll(s->C * s->T));
  L(2, "v[%s(y * 4 + 1) * %lld] = q[y][1] + q[y][2];", cast, ll(s->C * s->T));
  L(2, "v[%s(y * 4 + 2) * %lld] = q[y][2] - q[y][1];", cast, ll(s->C * s->T));
  L(2, "v[%s(y * 4 + 3) * %lld] = q[y][1] - q[y][3];", cast, ll(s->C * s->T));
  L(1, "}");
  L(0, "}");
  L(0, "%s", "");
}

/* The parameter list of the output transform (workspace, bias, residual,
 * output) and its launch's arguments. */
static void output_params(cu_emit_t *e, cu_launch_t *l, hpc_strbuf_t *params) {
  const hetc_plugin_epilogue_t *ep = &e->wl->epilogue;
  const int32_t weight = e->wl->num_inputs;
  hpc_strbuf_printf(params, "HK_GLOBAL const float *HK_RESTRICT ws");
  l->args[l->num_args++] = CU_ARG_WORKSPACE;
  if (ep->has_bias) {
    hpc_strbuf_printf(params, ", HK_GLOBAL const float *HK_RESTRICT bias");
    l->args[l->num_args++] = weight + 1;
  }
  if (ep->has_residual) {
    hpc_strbuf_printf(params, ", HK_GLOBAL const float *HK_RESTRICT res");
    l->args[l->num_args++] = 1;
  }
  hpc_strbuf_printf(params, ", HK_GLOBAL float *HK_RESTRICT out");
  l->args[l->num_args++] = weight + (ep->has_bias ? 2 : 1);
}

static void emit_output_transform(cu_emit_t *e, const wino_shape_t *s, const char *ix, const char *cast,
                                  cu_launch_t *l) {
  hpc_strbuf_t params;
  hpc_strbuf_init(&params);
  output_params(e, l, &params);
  L(0, "HK_KERNEL(%d, 1, 1) winograd_output(%s) {", TRANSFORM_BLOCK, params.data ? params.data : "");
  hpc_strbuf_free(&params);
  L(1, "const long gid = HK_GID_X;");
  L(1, "if (gid >= %lld) return;", ll(s->K * s->T));
  L(1, "const int k = (int)(gid / %lld), t = (int)(gid %% %lld);", ll(s->T), ll(s->T));
  emit_tile_position(e, s);
  L(1, "HK_GLOBAL const float *mp = ws + %lld + %sk * %lld + t;", ll(s->VSIZE), cast, ll(s->T));
  L(1, "float mv[4][4];");
  L(1, "#pragma unroll");
  L(1, "for (int xi = 0; xi < 16; ++xi) mv[xi / 4][xi %% 4] = mp[%sxi * %lld];", cast, ll(s->K * s->T));
  /* A^T M: rows (m0 + m1 + m2, m1 - m2 - m3); then (A^T M) A on columns. */
  L(1, "float r[2][4];");
  L(1, "#pragma unroll");
  L(1, "for (int x = 0; x < 4; ++x) {");
  L(2, "r[0][x] = mv[0][x] + mv[1][x] + mv[2][x];");
  L(2, "r[1][x] = mv[1][x] - mv[2][x] - mv[3][x];");
  L(1, "}");
  L(1, "const float y00 = r[0][0] + r[0][1] + r[0][2], y01 = r[0][1] - r[0][2] - r[0][3];");
  L(1, "const float y10 = r[1][0] + r[1][1] + r[1][2], y11 = r[1][1] - r[1][2] - r[1][3];");
  L(1, "const int oy = th * 2, ox = tw * 2;");
  L(1, "const %s o = ((%simg * %lld + k) * %lld + oy) * %lld + ox;", ix, cast, ll(s->K), ll(s->P), ll(s->Q));
  /* Tiles past the bottom (right) edge hold one row (column) of outputs:
   * the guards exist only when P (Q) is odd. */
  for (int dy = 0; dy < 2; ++dy)
    for (int dx = 0; dx < 2; ++dx) {
      char index[48], value[8];
      snprintf(index, sizeof(index), dy == 0 && dx == 0 ? "o" : "o + %lld", ll(dy * s->Q + dx));
      snprintf(value, sizeof(value), "y%d%d", dy, dx);
      const int guard_y = dy && s->P % 2, guard_x = dx && s->Q % 2;
      if (guard_y && guard_x)
        L(1, "if (oy + 1 < %lld && ox + 1 < %lld)", ll(s->P), ll(s->Q));
      else if (guard_y)
        L(1, "if (oy + 1 < %lld)", ll(s->P));
      else if (guard_x)
        L(1, "if (ox + 1 < %lld)", ll(s->Q));
      hpc_strbuf_printf(&e->src, guard_y || guard_x ? "    " : "  ");
      cu_emit_epilogue_store(e, "out", index, "k", value);
    }
  L(0, "}");
}

hetc_plugin_status_t cu_emit_conv_winograd(cu_emit_t *e) {
  const hetc_plugin_workload_t *wl = e->wl;
  if (wl->groups != 1 || wl->kernel[0] != 3 || wl->kernel[1] != 3 || wl->strides[0] != 1 || wl->strides[1] != 1 ||
      wl->dilation[0] != 1 || wl->dilation[1] != 1)
    return cu_status(HETC_PLUGIN_STATUS_UNSUPPORTED,
                     "%s: Winograd F(2x2, 3x3) takes 3x3 kernels of stride 1, dilation 1 and one group",
                     cu_plugin_name);
  const wino_shape_t s = wino_shape(wl);
  /* 32-bit index arithmetic where every index fits. */
  const int64_t largest = s.VSIZE + s.MSIZE;
  const int wide = largest > INT32_MAX || s.N * s.C * s.H * s.W > INT32_MAX || s.N * s.K * s.P * s.Q > INT32_MAX;
  const char *ix = wide ? "long" : "int", *cast = wide ? "(long)" : "";

  e->num_inputs = wl->num_inputs;
  for (int32_t i = 0; i < wl->num_inputs; ++i) e->input_layouts[i] = hetc_kit_layout_row_major();
  e->output_layout = hetc_kit_layout_row_major();
  e->num_params = wl->epilogue.has_bias ? 2 : 1;
  e->param_bytes[0] = (uint64_t)(16 * s.K * s.C) * 4;
  e->param_bytes[1] = (uint64_t)s.K * 4;
  e->workspace_bytes = (uint64_t)(s.VSIZE + s.MSIZE) * 4;

  cu_emit_preamble(e, wl->epilogue.activation);
  const int64_t transform_blocks[2] = {hetc_kit_ceil_div(s.C * s.T, TRANSFORM_BLOCK),
                                       hetc_kit_ceil_div(s.K * s.T, TRANSFORM_BLOCK)};
  if (transform_blocks[0] > INT32_MAX || transform_blocks[1] > INT32_MAX)
    return cu_status(HETC_PLUGIN_STATUS_UNSUPPORTED, "%s: %lld Winograd tiles exceed what a launch takes",
                     cu_plugin_name, ll(s.T));

  /* (a) the input transform. */
  emit_input_transform(e, &s, cast);
  cu_launch_t *l = cu_emit_launch(e, "winograd_input");
  if (!l) return cu_status(HETC_PLUGIN_STATUS_INTERNAL, "%s: too many launches", cu_plugin_name);
  l->grid[0] = (uint32_t)transform_blocks[0];
  l->block[0] = TRANSFORM_BLOCK;
  l->num_args = 2;
  l->args[0] = 0;
  l->args[1] = CU_ARG_WORKSPACE;

  /* (b) the 16 products, M after V in the workspace. */
  char load_a[96], load_b[96], store[128];
  snprintf(load_a, sizeof(load_a), "w[(%sb * %lld + m) * %lld + k]", cast, ll(s.K), ll(s.C));
  snprintf(load_b, sizeof(load_b), "ws[(%sb * %lld + k) * %lld + n]", cast, ll(s.C), ll(s.T));
  snprintf(store, sizeof(store), "ws[%lld + (%sb * %lld + m) * %lld + n] = v;", ll(s.VSIZE), cast, ll(s.K), ll(s.T));
  const cu_gemm_t g = {.kernel = "winograd_product",
                       .params = "HK_GLOBAL const float *HK_RESTRICT w, HK_GLOBAL float *HK_RESTRICT ws",
                       .batch = 16, .M = s.K, .N = s.T, .K = s.C, .load_a = load_a, .load_b = load_b,
                       .a_k_contiguous = 1, .b_k_contiguous = 0, .store = store};
  hetc_plugin_status_t st = cu_emit_gemm(e, &g, &l);
  if (st) return st;
  l->num_args = 2;
  l->args[0] = wl->num_inputs; /* the weight param, U */
  l->args[1] = CU_ARG_WORKSPACE;

  /* (c) the output transform with the epilogue. */
  l = cu_emit_launch(e, "winograd_output");
  if (!l) return cu_status(HETC_PLUGIN_STATUS_INTERNAL, "%s: too many launches", cu_plugin_name);
  l->grid[0] = (uint32_t)transform_blocks[1];
  l->block[0] = TRANSFORM_BLOCK;
  emit_output_transform(e, &s, ix, cast, l);
  return NULL;
}
