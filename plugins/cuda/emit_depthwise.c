/* cuda_conv2d_depthwise: depthwise conv2d (groups == C == K, any kernel,
 * stride, padding and dilation), NCHW in and out, weight [C][1][R][S].
 *
 * A block of block_n (x: columns) by block_m (y: rows) threads computes a
 * (block_m*thread_m) x (block_n*thread_n) tile of one channel's output
 * plane (grid z: image x channel); each thread thread_m consecutive rows
 * by thread_n consecutive columns. The block first stages its input
 * window (with the halo; zero for the padding and past the tensor) in
 * shared memory, where each element is reused up to R*S times.
 *
 * With a kernel of moderate size the channel's R*S weights live in
 * registers and each thread walks the input rows its outputs touch once:
 * it takes the row's window of its columns into registers, then every
 * (output row, kernel row) pair that reads it accumulates from there, so
 * the overlapping windows of neighbouring outputs are loaded once
 * (stride 1: (thread_n + S - 1) loads for thread_n * S products per row).
 * Larger kernels keep the weights in shared memory and accumulate tap by
 * tap.
 *
 * Any positive knob values work: blocks are counted by rounding up and
 * only outputs inside the tensor are stored; what the device cannot take
 * is refused by the demand. */
#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "cu.h"

#define L(ind, ...) hpc_strbuf_line(&e->src, ind, __VA_ARGS__)

/* Loops of at most this many iterations are unrolled completely. */
#define UNROLL_STAGE_MAX 16
/* The register path: weights, a row window and the unrolled products
 * must stay small enough to keep in registers and compile quickly. */
#define REG_WEIGHTS_MAX 64
#define REG_WINDOW_MAX 40
#define REG_PRODUCTS_MAX 4096

typedef struct dw_shape_t {
  int64_t N, C, H, W, P, Q, R, S, SH, SW, DH, DW, PT, PL;
  int64_t bm, bn, tm, tn; /* threads (rows, columns), outputs per thread */
  int64_t T, OTH, OTW;    /* threads, block tile */
  int64_t IH, IW, IWP;    /* staged window, its padded row */
  int64_t TIH, TIW;       /* a thread's input rows and row window */
  int64_t GX, GY, GZ;
  int regs;               /* the register path */
  int wide;               /* offsets need 64 bits */
} dw_shape_t;

static long long ll(int64_t v) { return (long long)v; }

static dw_shape_t dw_shape(const hetc_plugin_workload_t *wl, const cu_config_t *c) {
  dw_shape_t s;
  const hetc_plugin_tensor_t *in = &wl->inputs[0];
  s.N = in->shape[0], s.C = in->shape[1], s.H = in->shape[2], s.W = in->shape[3];
  s.P = wl->output.shape[2], s.Q = wl->output.shape[3];
  s.R = wl->kernel[0], s.S = wl->kernel[1], s.SH = wl->strides[0], s.SW = wl->strides[1];
  s.DH = wl->dilation[0], s.DW = wl->dilation[1], s.PT = wl->padding[0], s.PL = wl->padding[1];
  s.bm = c->block_m, s.bn = c->block_n, s.tm = c->thread_m, s.tn = c->thread_n;
  s.T = s.bm * s.bn, s.OTH = s.bm * s.tm, s.OTW = s.bn * s.tn;
  s.IH = (s.OTH - 1) * s.SH + (s.R - 1) * s.DH + 1;
  s.IW = (s.OTW - 1) * s.SW + (s.S - 1) * s.DW + 1;
  /* Rows of the window start in different banks: threads of a warp on
   * neighbouring rows read at a row's distance. */
  s.IWP = s.IW % 2 ? s.IW : s.IW + 1;
  s.TIH = (s.tm - 1) * s.SH + (s.R - 1) * s.DH + 1;
  s.TIW = (s.tn - 1) * s.SW + (s.S - 1) * s.DW + 1;
  s.GX = s.OTW > 0 ? hetc_kit_ceil_div(s.Q, s.OTW) : 0, s.GY = s.OTH > 0 ? hetc_kit_ceil_div(s.P, s.OTH) : 0;
  s.GZ = s.N * s.C;
  s.regs = s.R * s.S <= REG_WEIGHTS_MAX && s.TIW <= REG_WINDOW_MAX &&
           s.tm * s.tn * s.R * s.S <= REG_PRODUCTS_MAX;
  s.wide = s.N * s.C * s.H * s.W >= INT_MAX || s.N * s.C * s.P * s.Q >= INT_MAX;
  return s;
}

void cu_demand_depthwise(const hetc_plugin_workload_t *wl, const cu_config_t *cfg, cu_demand_t *out) {
  if (cfg->block_m < 1 || cfg->block_n < 1 || cfg->thread_m < 1 || cfg->thread_n < 1) {
    snprintf(out->reason, sizeof(out->reason), "every knob of the depthwise template must be positive");
    return;
  }
  if (!hetc_kit_conv_is_depthwise(wl)) {
    snprintf(out->reason, sizeof(out->reason), "the depthwise template computes groups == C_in == C_out only");
    return;
  }
  const dw_shape_t s = dw_shape(wl, cfg);
  out->block[0] = s.bn, out->block[1] = s.bm, out->block[2] = 1;
  /* Each array rounded up to 16 bytes: the compiler's placement. */
  out->shared_bytes = (4 * s.IH * s.IWP + 15) / 16 * 16 + (s.regs ? 0 : (4 * s.R * s.S + 15) / 16 * 16);
  out->accumulators = s.tm * s.tn;
  if (s.OTH > 2 * s.P + 64 || s.OTW > 2 * s.Q + 64)
    snprintf(out->reason, sizeof(out->reason), "a block tile of %lldx%lld is far larger than the %lldx%lld output",
             ll(s.OTH), ll(s.OTW), ll(s.P), ll(s.Q));
  else if (s.GZ > 65535 || s.GY > 65535 || s.GX > INT_MAX)
    snprintf(out->reason, sizeof(out->reason),
             "a grid of %lld x %lld x %lld blocks (columns, rows, images x channels) is beyond the launch's extents",
             ll(s.GX), ll(s.GY), ll(s.GZ));
}

/* The register path: per input row the thread's outputs touch, the row's
 * window into registers, then the products of every (output row, kernel
 * row) pair that reads it. Loops are unrolled completely, so the pairs'
 * conditions are resolved by the compiler. */
static void emit_compute_registers(cu_emit_t *e, const dw_shape_t *s) {
  L(1, "#pragma unroll");
  L(1, "for (int ii = 0; ii < %lld; ++ii) {", ll(s->TIH));
  L(2, "float x[%lld];", ll(s->TIW));
  L(2, "#pragma unroll");
  L(2, "for (int t = 0; t < %lld; ++t) x[t] = sin[(ry + ii) * %lld + rx + t];", ll(s->TIW), ll(s->IWP));
  L(2, "#pragma unroll");
  L(2, "for (int i = 0; i < %lld; ++i) {", ll(s->tm));
  L(3, "const int dr = ii - i * %lld;", ll(s->SH));
  L(3, "if (dr < 0 || dr > %lld || dr %% %lld != 0) continue;", ll((s->R - 1) * s->DH), ll(s->DH));
  L(3, "const int r = dr / %lld;", ll(s->DH));
  L(3, "#pragma unroll");
  L(3, "for (int q = 0; q < %lld; ++q)", ll(s->S));
  L(3, "#pragma unroll");
  L(3, "for (int j = 0; j < %lld; ++j) acc[i * %lld + j] += x[j * %lld + q * %lld] * wk[r * %lld + q];", ll(s->tn),
    ll(s->tn), ll(s->SW), ll(s->DW), ll(s->S));
  L(2, "}");
  L(1, "}");
}

/* Large kernels: tap by tap, the weight from shared memory. */
static void emit_compute_taps(cu_emit_t *e, const dw_shape_t *s) {
  L(1, "#pragma unroll 1");
  L(1, "for (int r = 0; r < %lld; ++r) {", ll(s->R));
  L(2, "%s", s->S <= UNROLL_STAGE_MAX ? "#pragma unroll" : "#pragma unroll 1");
  L(2, "for (int q = 0; q < %lld; ++q) {", ll(s->S));
  L(3, "const float wv = sw[r * %lld + q];", ll(s->S));
  L(3, "#pragma unroll");
  L(3, "for (int i = 0; i < %lld; ++i)", ll(s->tm));
  L(3, "#pragma unroll");
  L(3, "for (int j = 0; j < %lld; ++j)", ll(s->tn));
  L(4, "acc[i * %lld + j] += sin[(ry + i * %lld + r * %lld) * %lld + rx + j * %lld + q * %lld] * wv;", ll(s->tn),
    ll(s->SH), ll(s->DH), ll(s->IWP), ll(s->SW), ll(s->DW));
  L(2, "}");
  L(1, "}");
}

hetc_plugin_status_t cu_emit_conv_depthwise(cu_emit_t *e) {
  const hetc_plugin_workload_t *wl = e->wl;
  cu_demand_t demand;
  memset(&demand, 0, sizeof(demand));
  cu_demand_depthwise(wl, &e->cfg, &demand);
  if (demand.reason[0])
    return cu_status(HETC_PLUGIN_STATUS_INVALID_ARGUMENT, "%s: %s", cu_plugin_name, demand.reason);
  const dw_shape_t s = dw_shape(wl, &e->cfg);
  const char *idx = s.wide ? "long" : "int";
  const int64_t RS = s.R * s.S;

  e->num_inputs = wl->num_inputs;
  for (int32_t i = 0; i < wl->num_inputs; ++i) e->input_layouts[i] = hetc_kit_layout_row_major();
  e->output_layout = hetc_kit_layout_row_major();
  e->num_params = wl->epilogue.has_bias ? 2 : 1;
  e->param_bytes[0] = (uint64_t)(s.C * RS) * 4;
  e->param_bytes[1] = (uint64_t)s.C * 4;
  e->workspace_bytes = 0;

  cu_emit_preamble(e, wl->epilogue.activation);
  cu_launch_t *launch = cu_emit_launch(e, "conv2d_depthwise");
  if (!launch) return cu_status(HETC_PLUGIN_STATUS_INTERNAL, "%s: too many launches", cu_plugin_name);
  hpc_strbuf_t params;
  hpc_strbuf_init(&params);
  cu_emit_conv_params(e, launch, &params);
  L(0, "HK_KERNEL(%lld, %lld, 1) conv2d_depthwise(%s) {", ll(s.bn), ll(s.bm), params.data ? params.data : "");
  hpc_strbuf_free(&params);
  L(1, "HK_SHARED float sin[%lld];", ll(s.IH * s.IWP));
  if (!s.regs) L(1, "HK_SHARED float sw[%lld];", ll(RS));
  L(1, "const int tx = HK_TX, ty = HK_TY, tid = ty * %lld + tx;", ll(s.bn));
  L(1, "const int nc = HK_BZ, c = nc %% %lld;", ll(s.C));
  L(1, "const int oy0 = HK_BY * %lld, ox0 = HK_BX * %lld;", ll(s.OTH), ll(s.OTW));
  L(1, "const int iy0 = oy0 * %lld - %lld, ix0 = ox0 * %lld - %lld;", ll(s.SH), ll(s.PT), ll(s.SW), ll(s.PL));
  L(1, "HK_GLOBAL const float *in_c = in + (%s)nc * %lld;", idx, ll(s.H * s.W));
  L(1, "HK_GLOBAL const float *w_c = w + c * %lld;", ll(RS));
  /* The channel's weights first, so their loads overlap the window's. */
  if (s.regs) {
    L(1, "float wk[%lld];", ll(RS));
    L(1, "#pragma unroll");
    L(1, "for (int t = 0; t < %lld; ++t) wk[t] = w_c[t];", ll(RS));
  } else {
    L(1, "for (int t = tid; t < %lld; t += %lld) sw[t] = w_c[t];", ll(RS), ll(s.T));
  }
  /* The window, row by row: a row's threads read consecutive columns. */
  const int64_t row_trips = hetc_kit_ceil_div(s.IH, s.bm), col_trips = hetc_kit_ceil_div(s.IW, s.bn);
  L(1, "%s", row_trips <= UNROLL_STAGE_MAX ? "#pragma unroll" : "#pragma unroll 1");
  L(1, "for (int yy = 0; yy < %lld; ++yy) {", ll(row_trips));
  L(2, "const int iy = yy * %lld + ty, gy = iy0 + iy;", ll(s.bm));
  if (s.IH % s.bm) L(2, "if (iy >= %lld) break;", ll(s.IH));
  L(2, "%s", col_trips <= UNROLL_STAGE_MAX ? "#pragma unroll" : "#pragma unroll 4");
  L(2, "for (int xx = 0; xx < %lld; ++xx) {", ll(col_trips));
  L(3, "const int ix = xx * %lld + tx, gx = ix0 + ix;", ll(s.bn));
  if (s.IW % s.bn) L(3, "if (ix >= %lld) break;", ll(s.IW));
  L(3, "sin[iy * %lld + ix] = (unsigned)gy < %lldu && (unsigned)gx < %lldu ? in_c[gy * %lld + gx] : 0.0f;",
    ll(s.IWP), ll(s.H), ll(s.W), ll(s.W));
  L(2, "}");
  L(1, "}");
  L(1, "HK_BARRIER();");
  /* The thread's first input row and column inside the window. */
  L(1, "const int ry = ty * %lld, rx = tx * %lld;", ll(s.tm * s.SH), ll(s.tn * s.SW));
  L(1, "float acc[%lld];", ll(s.tm * s.tn));
  L(1, "#pragma unroll");
  L(1, "for (int a = 0; a < %lld; ++a) acc[a] = 0.0f;", ll(s.tm * s.tn));
  if (s.regs)
    emit_compute_registers(e, &s);
  else
    emit_compute_taps(e, &s);
  /* The epilogue: only outputs inside the plane are stored. */
  L(1, "#pragma unroll");
  L(1, "for (int i = 0; i < %lld; ++i) {", ll(s.tm));
  L(2, "const int oy = oy0 + ty * %lld + i;", ll(s.tm));
  if (s.P % s.OTH) L(2, "if (oy >= %lld) break;", ll(s.P));
  L(2, "#pragma unroll");
  L(2, "for (int j = 0; j < %lld; ++j) {", ll(s.tn));
  L(3, "const int ox = ox0 + tx * %lld + j;", ll(s.tn));
  if (s.Q % s.OTW) L(3, "if (ox >= %lld) break;", ll(s.Q));
  L(3, "const %s o = ((%s)nc * %lld + oy) * %lld + ox;", idx, idx, ll(s.P), ll(s.Q));
  L(3, "const float v = acc[i * %lld + j];", ll(s.tn));
  hpc_strbuf_printf(&e->src, "      ");
  cu_emit_epilogue_store(e, "out", "o", "c", "v");
  L(2, "}");
  L(1, "}");
  L(0, "}");
  launch->block[0] = (uint32_t)s.bn, launch->block[1] = (uint32_t)s.bm, launch->block[2] = 1;
  launch->grid[0] = (uint32_t)s.GX, launch->grid[1] = (uint32_t)s.GY, launch->grid[2] = (uint32_t)s.GZ;
  return NULL;
}
