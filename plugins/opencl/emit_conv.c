/* conv2d and dense templates. All read and write row-major (NCHW)
 * activations; conv weights stay in their logical OIHW form except
 * Winograd's, which pack.c transforms.
 *
 * - direct: a work-group computes (wg_m*tile_m) output channels x wg_h
 *   output rows x (wg_n*tile_n) output columns; each work-item a tile_m x
 *   tile_n register tile of one row. With `local`, each step of tile_k input
 *   channels stages the input rows and columns the work-group's window reads
 *   (its halo) and the matching weights in local memory.
 * - im2col GEMM: im2col into the workspace, then the shared tiled GEMM per
 *   group; a 1x1 stride-1 unpadded convolution reads its input directly.
 * - Winograd F(2x2, 3x3): input transform into the workspace, 16 batched
 *   GEMMs with the transformed weights, output transform with the epilogue.
 * - depthwise: one work-item per tile_n output columns of one channel's row;
 *   with `local`, the work-group's input halo is staged per channel.
 * - dense: the shared GEMM with out[n][m] = sum_k w[m][k] in[n][k]. */
#include <stdio.h>
#include <string.h>

#include "ocl.h"

#define L(ind, ...) hpc_strbuf_line(&e->src, ind, __VA_ARGS__)

static long long ll(int64_t v) { return (long long)v; }

typedef struct conv_dims_t {
  int64_t N, C, H, W, K, OH, OW, KH, KW, SH, SW, DH, DW, PT, PL, G, Cg, Kg;
} conv_dims_t;

static conv_dims_t conv_dims(const hetc_plugin_workload_t *wl) {
  conv_dims_t d;
  const hetc_plugin_tensor_t *in = &wl->inputs[0];
  d.N = in->shape[0], d.C = in->shape[1], d.H = in->shape[2], d.W = in->shape[3];
  d.K = wl->output.shape[1], d.OH = wl->output.shape[2], d.OW = wl->output.shape[3];
  d.KH = wl->kernel[0], d.KW = wl->kernel[1], d.SH = wl->strides[0], d.SW = wl->strides[1];
  d.DH = wl->dilation[0], d.DW = wl->dilation[1], d.PT = wl->padding[0], d.PL = wl->padding[1];
  d.G = wl->groups, d.Cg = d.C / d.G, d.Kg = d.K / d.G;
  return d;
}

/* Boundary, params and preamble shared by conv2d and dense: row-major
 * activations, weight (param_bytes given) then bias. */
static void begin(ocl_emit_t *e, uint64_t weight_bytes, uint64_t workspace_bytes) {
  const hetc_plugin_workload_t *wl = e->wl;
  e->num_inputs = wl->num_inputs;
  for (int32_t i = 0; i < wl->num_inputs; ++i) e->input_layouts[i] = hetc_kit_layout_row_major();
  e->output_layout = hetc_kit_layout_row_major();
  e->num_params = 1 + wl->epilogue.has_bias;
  e->param_bytes[0] = weight_bytes;
  e->param_bytes[1] = wl->epilogue.has_bias ? (uint64_t)wl->output.shape[1] * 4 : 0;
  e->workspace_bytes = workspace_bytes;
  ocl_emit_preamble(e, wl->epilogue.activation);
}

/* The kernel parameters of a conv2d or dense main kernel, in order: in,
 * [res], w, [bias], out, [ws]. */
static void main_params(const ocl_emit_t *e, int with_workspace, hpc_strbuf_t *params) {
  const hetc_plugin_workload_t *wl = e->wl;
  hpc_strbuf_printf(params, "__global const float *restrict in");
  if (wl->epilogue.has_residual) hpc_strbuf_printf(params, ", __global const float *restrict res");
  hpc_strbuf_printf(params, ", __global const float *restrict w");
  if (wl->epilogue.has_bias) hpc_strbuf_printf(params, ", __global const float *restrict bias");
  hpc_strbuf_printf(params, ", __global float *restrict out");
  if (with_workspace) hpc_strbuf_printf(params, ", __global float *restrict ws");
}

/* The run() argument indices main_params' parameters take. */
static void main_args(const ocl_emit_t *e, int with_workspace, ocl_launch_t *launch) {
  const hetc_plugin_workload_t *wl = e->wl;
  int32_t n = 0, index = 0;
  launch->args[n++] = index++;
  if (wl->epilogue.has_residual) launch->args[n++] = index++;
  launch->args[n++] = index++;
  if (wl->epilogue.has_bias) launch->args[n++] = index++;
  launch->args[n++] = index++;
  if (with_workspace) launch->args[n++] = OCL_ARG_WORKSPACE;
  launch->num_args = n;
}

/* The statement writing `v` to out[o] with the epilogue, for output channel
 * `channel` (OpenCL C expressions). It takes at most
 * 2 * strlen(o) + strlen(channel) + 33 bytes, NUL included; callers size buf
 * for their longest o and channel. */
static void epilogue_store(const hetc_plugin_workload_t *wl, const char *o, const char *channel, char *buf,
                           size_t size) {
  snprintf(buf, size, "out[%s] = act(v%s%s%s%s%s%s);", o, wl->epilogue.has_bias ? " + bias[" : "",
           wl->epilogue.has_bias ? channel : "", wl->epilogue.has_bias ? "]" : "",
           wl->epilogue.has_residual ? " + res[" : "", wl->epilogue.has_residual ? o : "",
           wl->epilogue.has_residual ? "]" : "");
}

static hetc_plugin_status_t no_launch(void) {
  return ocl_status(HETC_PLUGIN_STATUS_INTERNAL, "opencl: too many kernel launches");
}

/* Emits a GEMM whose params are the main ones and fills its arguments. */
static hetc_plugin_status_t main_gemm(ocl_emit_t *e, ocl_gemm_t *g, int with_workspace) {
  hpc_strbuf_t params;
  hpc_strbuf_init(&params);
  main_params(e, with_workspace, &params);
  if (params.failed) {
    hpc_strbuf_free(&params);
    return ocl_status(HETC_PLUGIN_STATUS_OUT_OF_MEMORY, "opencl: out of memory");
  }
  g->params = params.data;
  ocl_launch_t *launch = ocl_emit_gemm(e, g);
  if (launch) main_args(e, with_workspace, launch);
  hpc_strbuf_free(&params);
  return launch ? NULL : no_launch();
}

/* ------------------------------------------------------------------------ */

hetc_plugin_status_t ocl_emit_dense(ocl_emit_t *e) {
  const hetc_plugin_workload_t *wl = e->wl;
  const int64_t N = wl->inputs[0].shape[0], K = wl->inputs[0].shape[1], U = wl->output.shape[1];
  begin(e, (uint64_t)(U * K) * 4, 0);
  char store[256];
  epilogue_store(wl, "n * M + m", "m", store, sizeof(store));
  ocl_gemm_t g = {.kernel = "dense", .batch = 1, .M = U, .N = N, .K = K,
                  .load_a = "w[m * K + k]", .load_b = "in[n * K + k]", .store = store};
  return main_gemm(e, &g, 0);
}

hetc_plugin_status_t ocl_emit_conv_gemm(ocl_emit_t *e) {
  const conv_dims_t d = conv_dims(e->wl);
  const int64_t P = d.OH * d.OW, NP = d.N * P, KRED = d.Cg * d.KH * d.KW;
  const int direct_input = d.KH == 1 && d.KW == 1 && d.SH == 1 && d.SW == 1 && d.PT == 0 && d.PL == 0 &&
                           d.OH == d.H && d.OW == d.W;
  begin(e, (uint64_t)(d.K * KRED) * 4, direct_input ? 0 : (uint64_t)(d.G * KRED * NP) * 4);
  if (!direct_input) {
    /* col[g][k][n]: k runs over (c, r, s) of one group, n over (image,
     * output pixel). */
    L(0, "__kernel void im2col(__global const float *restrict in, __global float *restrict ws) {");
    L(1, "const long i = get_global_id(0);");
    L(1, "if (i >= %lld) return;", ll(d.G * KRED * NP));
    L(1, "const long n = i %% %lld, k = (i / %lld) %% %lld, g = i / %lld;", ll(NP), ll(NP), ll(KRED), ll(NP * KRED));
    L(1, "const long img = n / %lld, oh = (n / %lld) %% %lld, ow = n %% %lld;", ll(P), ll(d.OW), ll(d.OH), ll(d.OW));
    L(1, "const long c = k / %lld, r = (k / %lld) %% %lld, s = k %% %lld;", ll(d.KH * d.KW), ll(d.KW), ll(d.KH),
      ll(d.KW));
    L(1, "const long ih = oh * %lld - %lld + r * %lld, iw = ow * %lld - %lld + s * %lld;", ll(d.SH), ll(d.PT), ll(d.DH),
      ll(d.SW), ll(d.PL), ll(d.DW));
    L(1, "ws[i] = (ih >= 0 && ih < %lld && iw >= 0 && iw < %lld) ? in[((img * %lld + g * %lld + c) * %lld + ih) * %lld + iw] : 0.0f;",
      ll(d.H), ll(d.W), ll(d.C), ll(d.Cg), ll(d.H), ll(d.W));
    L(0, "}");
    L(0, "%s", "");
    ocl_launch_t *l = ocl_emit_launch(e, "im2col", 1);
    if (!l) return no_launch();
    l->global[0] = ocl_round_up((size_t)(d.G * KRED * NP), 64);
    l->local[0] = 64;
    l->num_args = 2;
    l->args[0] = 0;
    l->args[1] = OCL_ARG_WORKSPACE;
  }
  char load_b[160], store[512], o[160], channel[48];
  if (direct_input && d.N == 1)
    snprintf(load_b, sizeof(load_b), "in[(b * %lld + k) * %lld + n]", ll(d.Cg), ll(P));
  else if (direct_input)
    snprintf(load_b, sizeof(load_b), "in[((n / %lld) * %lld + b * %lld + k) * %lld + n %% %lld]", ll(P), ll(d.C),
             ll(d.Cg), ll(P), ll(P));
  else
    snprintf(load_b, sizeof(load_b), "ws[(b * K + k) * N + n]");
  snprintf(o, sizeof(o), "((n / %lld) * %lld + b * %lld + m) * %lld + n %% %lld", ll(P), ll(d.K), ll(d.Kg), ll(P),
           ll(P));
  snprintf(channel, sizeof(channel), "b * %lld + m", ll(d.Kg));
  epilogue_store(e->wl, o, channel, store, sizeof(store));
  ocl_gemm_t g = {.kernel = "conv_gemm", .batch = d.G, .M = d.Kg, .N = NP, .K = KRED,
                  .load_a = "w[(b * M + m) * K + k]", .load_b = load_b, .store = store};
  return main_gemm(e, &g, !direct_input);
}

/* ------------------------------------------------------------------------ */

hetc_plugin_status_t ocl_emit_conv_winograd(ocl_emit_t *e) {
  const conv_dims_t d = conv_dims(e->wl);
  const int64_t TH = hetc_kit_ceil_div(d.OH, 2), TW = hetc_kit_ceil_div(d.OW, 2), T = d.N * TH * TW;
  const int64_t VSIZE = 16 * d.C * T;
  begin(e, (uint64_t)(16 * d.K * d.C) * 4, (uint64_t)(VSIZE + 16 * d.K * T) * 4);
  /* V[xi][c][t] = (B^T d B)[xi] for the 4x4 input patch d of tile t. */
  L(0, "__kernel void winograd_input(__global const float *restrict in, __global float *restrict ws) {");
  L(1, "const long i = get_global_id(0);");
  L(1, "if (i >= %lld) return;", ll(d.C * T));
  L(1, "const long c = i / %lld, t = i %% %lld;", ll(T), ll(T));
  L(1, "const long img = t / %lld, th = (t / %lld) %% %lld, tw = t %% %lld;", ll(TH * TW), ll(TW), ll(TH), ll(TW));
  L(1, "const long y0 = th * 2 - %lld, x0 = tw * 2 - %lld;", ll(d.PT), ll(d.PL));
  L(1, "__global const float *plane = in + (img * %lld + c) * %lld;", ll(d.C), ll(d.H * d.W));
  L(1, "float p[4][4], q[4][4];");
  L(1, "for (int y = 0; y < 4; ++y)");
  L(2, "for (int x = 0; x < 4; ++x) {");
  L(3, "const long ih = y0 + y, iw = x0 + x;");
  L(3, "p[y][x] = (ih >= 0 && ih < %lld && iw >= 0 && iw < %lld) ? plane[ih * %lld + iw] : 0.0f;", ll(d.H), ll(d.W),
    ll(d.W));
  L(2, "}");
  L(1, "for (int x = 0; x < 4; ++x) {");
  L(2, "q[0][x] = p[0][x] - p[2][x]; q[1][x] = p[1][x] + p[2][x];");
  L(2, "q[2][x] = p[2][x] - p[1][x]; q[3][x] = p[1][x] - p[3][x];");
  L(1, "}");
  L(1, "for (int y = 0; y < 4; ++y) {");
  L(2, "const float v0 = q[y][0] - q[y][2], v1 = q[y][1] + q[y][2];");
  L(2, "const float v2 = q[y][2] - q[y][1], v3 = q[y][1] - q[y][3];");
  L(2, "ws[((y * 4 + 0) * %lld + c) * %lld + t] = v0;", ll(d.C), ll(T));
  L(2, "ws[((y * 4 + 1) * %lld + c) * %lld + t] = v1;", ll(d.C), ll(T));
  L(2, "ws[((y * 4 + 2) * %lld + c) * %lld + t] = v2;", ll(d.C), ll(T));
  L(2, "ws[((y * 4 + 3) * %lld + c) * %lld + t] = v3;", ll(d.C), ll(T));
  L(1, "}");
  L(0, "}");
  L(0, "%s", "");
  ocl_launch_t *l = ocl_emit_launch(e, "winograd_input", 1);
  if (!l) return no_launch();
  l->global[0] = ocl_round_up((size_t)(d.C * T), 64);
  l->local[0] = 64;
  l->num_args = 2;
  l->args[0] = 0;
  l->args[1] = OCL_ARG_WORKSPACE;

  /* M[xi][k][t] = sum_c U[xi][k][c] V[xi][c][t], after V in the workspace. */
  char load_b[64], store[96];
  snprintf(load_b, sizeof(load_b), "ws[(b * K + k) * N + n]");
  snprintf(store, sizeof(store), "ws[%lld + (b * M + m) * N + n] = v;", ll(VSIZE));
  ocl_gemm_t g = {.kernel = "winograd_product", .batch = 16, .M = d.K, .N = T, .K = d.C,
                  .params = "__global const float *restrict w, __global float *restrict ws",
                  .load_a = "w[(b * M + m) * K + k]", .load_b = load_b, .store = store};
  ocl_launch_t *product = ocl_emit_gemm(e, &g);
  if (!product) return no_launch();
  product->num_args = 2;
  product->args[0] = e->wl->num_inputs; /* the weight param */
  product->args[1] = OCL_ARG_WORKSPACE;

  /* Y = A^T M A, the epilogue, and the tile's valid outputs. */
  hpc_strbuf_t params;
  hpc_strbuf_init(&params);
  main_params(e, 1, &params);
  L(0, "__kernel void winograd_output(%s) {", params.data ? params.data : "");
  L(1, "const long i = get_global_id(0);");
  L(1, "if (i >= %lld) return;", ll(d.K * T));
  L(1, "const long k = i / %lld, t = i %% %lld;", ll(T), ll(T));
  L(1, "const long img = t / %lld, th = (t / %lld) %% %lld, tw = t %% %lld;", ll(TH * TW), ll(TW), ll(TH), ll(TW));
  L(1, "float m[4][4], r[2][4];");
  L(1, "for (int xi = 0; xi < 16; ++xi) m[xi / 4][xi %% 4] = ws[%lld + (xi * %lld + k) * %lld + t];", ll(VSIZE),
    ll(d.K), ll(T));
  L(1, "for (int x = 0; x < 4; ++x) {");
  L(2, "r[0][x] = m[0][x] + m[1][x] + m[2][x]; r[1][x] = m[1][x] - m[2][x] - m[3][x];");
  L(1, "}");
  L(1, "for (int y = 0; y < 2; ++y) {");
  L(2, "const long oh = th * 2 + y;");
  L(2, "if (oh >= %lld) break;", ll(d.OH));
  L(2, "const float y0 = r[y][0] + r[y][1] + r[y][2], y1 = r[y][1] - r[y][2] - r[y][3];");
  L(2, "for (int x = 0; x < 2; ++x) {");
  L(3, "const long ow = tw * 2 + x;");
  L(3, "if (ow >= %lld) break;", ll(d.OW));
  L(3, "const long o = ((img * %lld + k) * %lld + oh) * %lld + ow;", ll(d.K), ll(d.OH), ll(d.OW));
  char out_store[200];
  epilogue_store(e->wl, "o", "k", out_store, sizeof(out_store));
  L(3, "const float v = x ? y1 : y0;");
  L(3, "%s", out_store);
  L(2, "}");
  L(1, "}");
  L(0, "}");
  hpc_strbuf_free(&params);
  l = ocl_emit_launch(e, "winograd_output", 1);
  if (!l) return no_launch();
  l->global[0] = ocl_round_up((size_t)(d.K * T), 64);
  l->local[0] = 64;
  main_args(e, 1, l);
  return NULL;
}

/* ------------------------------------------------------------------------ */

/* The direct template's innermost step, for one input channel and kernel
 * row r: over the kernel columns s, the work-item's tile_m weights and
 * tile_n input values (from the local tiles, or from global memory with
 * the padding checks), then tile_m x tile_n multiply-adds. With stride 1
 * the input values are vector loads of `vector` columns. */
static void emit_direct_body(ocl_emit_t *e, const conv_dims_t *d, int local) {
  const ocl_config_t *c = &e->cfg;
  const int64_t RM = c->tile_m, RN = c->tile_n;
  if (c->unroll) L(3, "#pragma unroll");
  L(3, "for (int s = 0; s < %lld; ++s) {", ll(d->KW));
  L(4, "float wv[%lld], xv[%lld];", ll(RM), ll(RN));
  if (local) {
    L(4, "for (int i = 0; i < %lld; ++i) wv[i] = Ws[cc][r * %lld + s][lk * %lld + i];", ll(RM), ll(d->KW), ll(RM));
    L(4, "__local const float *row = &Is[cc][lh * %lld + r * %lld][0];", ll(d->SH), ll(d->DH));
    if (d->SW == 1 && c->vector > 1)
      L(4, "for (int j = 0; j < %lld; j += %lld) vstore%lld(vload%lld(0, row + lw * %lld + j + s * %lld), 0, xv + j);",
        ll(RN), ll(c->vector), ll(c->vector), ll(c->vector), ll(RN), ll(d->DW));
    else
      L(4, "for (int j = 0; j < %lld; ++j) xv[j] = row[(lw * %lld + j) * %lld + s * %lld];", ll(RN), ll(RN), ll(d->SW),
        ll(d->DW));
  } else {
    L(4, "for (int i = 0; i < %lld; ++i) {", ll(RM));
    L(5, "const long k = k0 + i;");
    L(5, "wv[i] = k < %lld ? w[((g * %lld + k) * %lld + c) * %lld + r * %lld + s] : 0.0f;", ll(d->Kg), ll(d->Kg),
      ll(d->Cg), ll(d->KH * d->KW), ll(d->KW));
    L(4, "}");
    L(4, "const long ih = oh * %lld - %lld + r * %lld;", ll(d->SH), ll(d->PT), ll(d->DH));
    L(4, "for (int j = 0; j < %lld; ++j) {", ll(RN));
    L(5, "const long iw = (ow0 + j) * %lld - %lld + s * %lld;", ll(d->SW), ll(d->PL), ll(d->DW));
    L(5, "xv[j] = (ih >= 0 && ih < %lld && iw >= 0 && iw < %lld) ? in[((img * %lld + g * %lld + c) * %lld + ih) * %lld + iw] : 0.0f;",
      ll(d->H), ll(d->W), ll(d->C), ll(d->Cg), ll(d->H), ll(d->W));
    L(4, "}");
  }
  L(4, "for (int i = 0; i < %lld; ++i)", ll(RM));
  L(5, "for (int j = 0; j < %lld; ++j) acc[i][j] = fma(wv[i], xv[j], acc[i][j]);", ll(RN));
  L(3, "}");
}

hetc_plugin_status_t ocl_emit_conv_direct(ocl_emit_t *e) {
  const conv_dims_t d = conv_dims(e->wl);
  const ocl_config_t *c = &e->cfg;
  const int64_t RM = c->tile_m, RN = c->tile_n, TC = c->tile_k;
  const int64_t TKO = c->wg_m * RM, TW = c->wg_n * RN, TH = c->wg_h;
  const int64_t KB = hetc_kit_ceil_div(d.Kg, TKO);
  const int64_t IH = (TH - 1) * d.SH + (d.KH - 1) * d.DH + 1, IW = (TW - 1) * d.SW + (d.KW - 1) * d.DW + 1;
  const int64_t TAPS = d.KH * d.KW, WG = c->wg_m * c->wg_n * c->wg_h;
  begin(e, (uint64_t)(d.K * d.Cg * TAPS) * 4, 0);
  hpc_strbuf_t params;
  hpc_strbuf_init(&params);
  main_params(e, 0, &params);
  L(0, "__kernel __attribute__((reqd_work_group_size(%lld, %lld, %lld)))", ll(c->wg_n), ll(c->wg_h), ll(c->wg_m));
  L(0, "void conv_direct(%s) {", params.data ? params.data : "");
  L(1, "const int lw = get_local_id(0), lh = get_local_id(1), lk = get_local_id(2);");
  L(1, "const long z = get_group_id(2);");
  L(1, "const long kb = z %% %lld, g = (z / %lld) %% %lld, img = z / %lld;", ll(KB), ll(KB), ll(d.G), ll(KB * d.G));
  L(1, "const long oh = get_group_id(1) * %lld + lh;", ll(TH));
  L(1, "const long ow0 = get_group_id(0) * %lld + lw * %lld;", ll(TW), ll(RN));
  L(1, "const long k0 = kb * %lld + lk * %lld;", ll(TKO), ll(RM));
  L(1, "float acc[%lld][%lld];", ll(RM), ll(RN));
  L(1, "for (int i = 0; i < %lld; ++i)", ll(RM));
  L(2, "for (int j = 0; j < %lld; ++j) acc[i][j] = 0.0f;", ll(RN));
  if (c->local) {
    L(1, "__local float Is[%lld][%lld][%lld];", ll(TC), ll(IH), ll(IW));
    L(1, "__local float Ws[%lld][%lld][%lld];", ll(TC), ll(TAPS), ll(TKO));
    L(1, "const int flat = (lk * %lld + lh) * %lld + lw;", ll(c->wg_h), ll(c->wg_n));
    L(1, "const long ih0 = get_group_id(1) * %lld - %lld, iw0 = get_group_id(0) * %lld - %lld;", ll(TH * d.SH),
      ll(d.PT), ll(TW * d.SW), ll(d.PL));
    L(1, "for (long c0 = 0; c0 < %lld; c0 += %lld) {", ll(d.Cg), ll(TC));
    L(2, "for (int t = flat; t < %lld; t += %lld) {", ll(TC * IH * IW), ll(WG));
    L(3, "const long c = c0 + t / %lld, ih = ih0 + (t / %lld) %% %lld, iw = iw0 + t %% %lld;", ll(IH * IW), ll(IW),
      ll(IH), ll(IW));
    L(3, "Is[t / %lld][(t / %lld) %% %lld][t %% %lld] = (c < %lld && ih >= 0 && ih < %lld && iw >= 0 && iw < %lld)",
      ll(IH * IW), ll(IW), ll(IH), ll(IW), ll(d.Cg), ll(d.H), ll(d.W));
    L(4, "? in[((img * %lld + g * %lld + c) * %lld + ih) * %lld + iw] : 0.0f;", ll(d.C), ll(d.Cg), ll(d.H), ll(d.W));
    L(2, "}");
    L(2, "for (int t = flat; t < %lld; t += %lld) {", ll(TC * TAPS * TKO), ll(WG));
    L(3, "const long c = c0 + t / %lld, rs = (t / %lld) %% %lld, k = kb * %lld + t %% %lld;", ll(TAPS * TKO),
      ll(TKO), ll(TAPS), ll(TKO), ll(TKO));
    L(3, "Ws[t / %lld][rs][t %% %lld] = (c < %lld && k < %lld) ? w[((g * %lld + k) * %lld + c) * %lld + rs] : 0.0f;",
      ll(TAPS * TKO), ll(TKO), ll(d.Cg), ll(d.Kg), ll(d.Kg), ll(d.Cg), ll(TAPS));
    L(2, "}");
    L(2, "barrier(CLK_LOCAL_MEM_FENCE);");
    L(2, "for (int cc = 0; cc < %lld; ++cc)", ll(TC));
    L(2, "for (int r = 0; r < %lld; ++r) {", ll(d.KH));
    emit_direct_body(e, &d, 1);
    L(2, "}");
    L(2, "barrier(CLK_LOCAL_MEM_FENCE);");
    L(1, "}");
  } else {
    L(1, "for (long c = 0; c < %lld; ++c)", ll(d.Cg));
    L(2, "for (int r = 0; r < %lld; ++r) {", ll(d.KH));
    emit_direct_body(e, &d, 0);
    L(2, "}");
  }
  char o[128], store[320];
  snprintf(o, sizeof(o), "((img * %lld + g * %lld + k) * %lld + oh) * %lld + ow", ll(d.K), ll(d.Kg), ll(d.OH),
           ll(d.OW));
  epilogue_store(e->wl, o, "g * KG + k", store, sizeof(store));
  L(1, "if (oh >= %lld) return;", ll(d.OH));
  L(1, "for (int i = 0; i < %lld; ++i) {", ll(RM));
  L(2, "const long k = k0 + i;");
  L(2, "if (k >= %lld) break;", ll(d.Kg));
  L(2, "for (int j = 0; j < %lld; ++j) {", ll(RN));
  L(3, "const long ow = ow0 + j;");
  L(3, "if (ow >= %lld) break;", ll(d.OW));
  L(3, "const long KG = %lld;", ll(d.Kg));
  L(3, "const float v = acc[i][j];");
  L(3, "%s", store);
  L(2, "}");
  L(1, "}");
  L(0, "}");
  ocl_launch_t *l = ocl_emit_launch(e, "conv_direct", 3);
  if (!l) {
    hpc_strbuf_free(&params);
    return no_launch();
  }
  l->global[0] = (size_t)(hetc_kit_ceil_div(d.OW, TW) * c->wg_n);
  l->global[1] = (size_t)(hetc_kit_ceil_div(d.OH, TH) * c->wg_h);
  l->global[2] = (size_t)(d.N * d.G * KB * c->wg_m);
  l->local[0] = (size_t)c->wg_n;
  l->local[1] = (size_t)c->wg_h;
  l->local[2] = (size_t)c->wg_m;
  main_args(e, 0, l);
  hpc_strbuf_free(&params);
  return NULL;
}

/* ------------------------------------------------------------------------ */

hetc_plugin_status_t ocl_emit_conv_depthwise(ocl_emit_t *e) {
  const conv_dims_t d = conv_dims(e->wl);
  const ocl_config_t *c = &e->cfg;
  const int64_t RN = c->tile_n, TW = c->wg_n * RN, TH = c->wg_h, CW = c->wg_m;
  const int64_t CP = hetc_kit_ceil_div(d.C, CW) * CW;
  const int64_t IH = (TH - 1) * d.SH + (d.KH - 1) * d.DH + 1, IW = (TW - 1) * d.SW + (d.KW - 1) * d.DW + 1;
  const int64_t TAPS = d.KH * d.KW, WG = c->wg_m * c->wg_n * c->wg_h;
  begin(e, (uint64_t)(d.C * TAPS) * 4, 0);
  hpc_strbuf_t params;
  hpc_strbuf_init(&params);
  main_params(e, 0, &params);
  L(0, "__kernel __attribute__((reqd_work_group_size(%lld, %lld, %lld)))", ll(c->wg_n), ll(c->wg_h), ll(c->wg_m));
  L(0, "void conv_depthwise(%s) {", params.data ? params.data : "");
  L(1, "const int lw = get_local_id(0), lh = get_local_id(1), lk = get_local_id(2);");
  L(1, "const long z = get_global_id(2), img = z / %lld, ch = z %% %lld;", ll(CP), ll(CP));
  L(1, "const long oh = get_group_id(1) * %lld + lh;", ll(TH));
  L(1, "const long ow0 = get_group_id(0) * %lld + lw * %lld;", ll(TW), ll(RN));
  L(1, "float acc[%lld];", ll(RN));
  L(1, "for (int j = 0; j < %lld; ++j) acc[j] = 0.0f;", ll(RN));
  if (c->local) {
    L(1, "__local float Is[%lld][%lld][%lld];", ll(CW), ll(IH), ll(IW));
    L(1, "__local float Ws[%lld][%lld];", ll(CW), ll(TAPS));
    L(1, "const int flat = (lk * %lld + lh) * %lld + lw;", ll(c->wg_h), ll(c->wg_n));
    L(1, "const long cbase = (get_group_id(2) * %lld) %% %lld;", ll(CW), ll(CP));
    L(1, "const long ih0 = get_group_id(1) * %lld - %lld, iw0 = get_group_id(0) * %lld - %lld;", ll(TH * d.SH),
      ll(d.PT), ll(TW * d.SW), ll(d.PL));
    L(1, "for (int t = flat; t < %lld; t += %lld) {", ll(CW * IH * IW), ll(WG));
    L(2, "const long cc = cbase + t / %lld, ih = ih0 + (t / %lld) %% %lld, iw = iw0 + t %% %lld;", ll(IH * IW),
      ll(IW), ll(IH), ll(IW));
    L(2, "Is[t / %lld][(t / %lld) %% %lld][t %% %lld] = (cc < %lld && ih >= 0 && ih < %lld && iw >= 0 && iw < %lld)",
      ll(IH * IW), ll(IW), ll(IH), ll(IW), ll(d.C), ll(d.H), ll(d.W));
    L(3, "? in[((img * %lld + cc) * %lld + ih) * %lld + iw] : 0.0f;", ll(d.C), ll(d.H), ll(d.W));
    L(1, "}");
    L(1, "for (int t = flat; t < %lld; t += %lld) {", ll(CW * TAPS), ll(WG));
    L(2, "const long cc = cbase + t / %lld;", ll(TAPS));
    L(2, "Ws[t / %lld][t %% %lld] = cc < %lld ? w[cc * %lld + t %% %lld] : 0.0f;", ll(TAPS), ll(TAPS), ll(d.C),
      ll(TAPS), ll(TAPS));
    L(1, "}");
    L(1, "barrier(CLK_LOCAL_MEM_FENCE);");
  }
  L(1, "if (ch >= %lld || oh >= %lld) return;", ll(d.C), ll(d.OH));
  L(1, "for (int r = 0; r < %lld; ++r) {", ll(d.KH));
  if (!c->local) {
    L(2, "const long ih = oh * %lld - %lld + r * %lld;", ll(d.SH), ll(d.PT), ll(d.DH));
    L(2, "if (ih < 0 || ih >= %lld) continue;", ll(d.H));
  }
  if (c->unroll) L(2, "#pragma unroll");
  L(2, "for (int s = 0; s < %lld; ++s) {", ll(d.KW));
  if (c->local) {
    L(3, "const float wv = Ws[lk][r * %lld + s];", ll(d.KW));
    L(3, "for (int j = 0; j < %lld; ++j)", ll(RN));
    L(4, "acc[j] = fma(wv, Is[lk][lh * %lld + r * %lld][(lw * %lld + j) * %lld + s * %lld], acc[j]);", ll(d.SH),
      ll(d.DH), ll(RN), ll(d.SW), ll(d.DW));
  } else {
    L(3, "const float wv = w[ch * %lld + r * %lld + s];", ll(TAPS), ll(d.KW));
    L(3, "for (int j = 0; j < %lld; ++j) {", ll(RN));
    L(4, "const long iw = (ow0 + j) * %lld - %lld + s * %lld;", ll(d.SW), ll(d.PL), ll(d.DW));
    L(4, "if (iw >= 0 && iw < %lld) acc[j] = fma(wv, in[((img * %lld + ch) * %lld + ih) * %lld + iw], acc[j]);",
      ll(d.W), ll(d.C), ll(d.H), ll(d.W));
    L(3, "}");
  }
  L(2, "}");
  L(1, "}");
  char o[128], store[320];
  snprintf(o, sizeof(o), "((img * %lld + ch) * %lld + oh) * %lld + ow", ll(d.C), ll(d.OH), ll(d.OW));
  epilogue_store(e->wl, o, "ch", store, sizeof(store));
  L(1, "for (int j = 0; j < %lld; ++j) {", ll(RN));
  L(2, "const long ow = ow0 + j;");
  L(2, "if (ow >= %lld) break;", ll(d.OW));
  L(2, "const float v = acc[j];");
  L(2, "%s", store);
  L(1, "}");
  L(0, "}");
  ocl_launch_t *l = ocl_emit_launch(e, "conv_depthwise", 3);
  if (!l) {
    hpc_strbuf_free(&params);
    return no_launch();
  }
  l->global[0] = (size_t)(hetc_kit_ceil_div(d.OW, TW) * c->wg_n);
  l->global[1] = (size_t)(hetc_kit_ceil_div(d.OH, TH) * c->wg_h);
  l->global[2] = (size_t)(d.N * CP);
  l->local[0] = (size_t)c->wg_n;
  l->local[1] = (size_t)c->wg_h;
  l->local[2] = (size_t)c->wg_m;
  main_args(e, 0, l);
  hpc_strbuf_free(&params);
  return NULL;
}
