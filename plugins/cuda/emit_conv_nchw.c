/* cuda_conv2d_nchw: AutoTVM's conv2d_nchw.cuda schedule as a generator.
 *
 * Output channels (f), rows (y) and columns (x) are each split four ways:
 * block, virtual thread, thread, inner. A block of tf x ty x tx threads
 * computes F_T x Y_T x X_T outputs (F_T = vf*tf*fi, ...); each thread
 * keeps vf*fi x vy*yi x vx*xi accumulators, its virtual threads strided by
 * the threads' span so that neighbouring threads touch neighbouring
 * outputs. The reduction over input channels and the kernel window is
 * split two ways (outer, inner): per outer step the block stages the inner
 * part of the input (with its halo) and of the weights in shared memory,
 * then every thread accumulates from there.
 *
 * The NHWC template's optional thread knobs, when set, replace the thread
 * and virtual-thread parts (c: channels, n: columns). Every part may be
 * one that does not divide its extent: blocks are counted by rounding up,
 * staged tiles are zero-filled outside the tensors and only outputs inside
 * them are stored. A group's channels never share a block with another
 * group's, so grouped convolutions take the same kernel. */
#include <stdio.h>

#include "cu.h"

#define L(ind, ...) hpc_strbuf_line(&e->src, ind, __VA_ARGS__)

/* The reduction steps written out by the emitter at most (beyond, the
 * text would grow past what compilers take in reasonable time and the
 * template falls back to #pragma unroll). */
#define EXPLICIT_UNROLL_MAX 256

typedef struct nchw_shape_t {
  int64_t N, C, H, W, K, P, Q, R, S, SH, SW, DH, DW, PT, PL, G, Cg, Kg;
  int64_t vf, tf, fi, vy, ty, yi, vx, tx, xi; /* effective parts */
  int64_t FT, YT, XT;                         /* block tile */
  int64_t rci, ryi, rxi, RCO, RYO, RXO;       /* reduction split */
  int64_t IH, IW;                             /* staged input tile */
  int64_t BFG, BY, BX;                        /* blocks per group, rows, columns */
} nchw_shape_t;

static nchw_shape_t nchw_shape(const hetc_plugin_workload_t *wl, const cu_config_t *c) {
  nchw_shape_t s;
  const hetc_plugin_tensor_t *in = &wl->inputs[0];
  s.N = in->shape[0], s.C = in->shape[1], s.H = in->shape[2], s.W = in->shape[3];
  s.K = wl->output.shape[1], s.P = wl->output.shape[2], s.Q = wl->output.shape[3];
  s.R = wl->kernel[0], s.S = wl->kernel[1], s.SH = wl->strides[0], s.SW = wl->strides[1];
  s.DH = wl->dilation[0], s.DW = wl->dilation[1], s.PT = wl->padding[0], s.PL = wl->padding[1];
  s.G = wl->groups, s.Cg = s.C / s.G, s.Kg = s.K / s.G;
  s.vf = c->vthread_c ? c->vthread_c : c->tile_f[1];
  s.tf = c->num_thread_c ? c->num_thread_c : c->tile_f[2];
  s.fi = c->tile_f[3];
  s.vy = c->tile_y[1], s.ty = c->tile_y[2], s.yi = c->tile_y[3];
  s.vx = c->vthread_n ? c->vthread_n : c->tile_x[1];
  s.tx = c->num_thread_n ? c->num_thread_n : c->tile_x[2];
  s.xi = c->tile_x[3];
  s.FT = s.vf * s.tf * s.fi, s.YT = s.vy * s.ty * s.yi, s.XT = s.vx * s.tx * s.xi;
  s.rci = c->tile_rc[1], s.ryi = c->tile_ry[1], s.rxi = c->tile_rx[1];
  s.RCO = hetc_kit_ceil_div(s.Cg, s.rci), s.RYO = hetc_kit_ceil_div(s.R, s.ryi), s.RXO = hetc_kit_ceil_div(s.S, s.rxi);
  s.IH = (s.YT - 1) * s.SH + (s.ryi - 1) * s.DH + 1;
  s.IW = (s.XT - 1) * s.SW + (s.rxi - 1) * s.DW + 1;
  s.BFG = hetc_kit_ceil_div(s.Kg, s.FT), s.BY = hetc_kit_ceil_div(s.P, s.YT), s.BX = hetc_kit_ceil_div(s.Q, s.XT);
  return s;
}

void cu_demand_conv_nchw(const hetc_plugin_workload_t *wl, const cu_config_t *cfg, cu_demand_t *out) {
  const nchw_shape_t s = nchw_shape(wl, cfg);
  out->block[0] = s.tx, out->block[1] = s.ty, out->block[2] = s.tf;
  out->shared_bytes = 4 * (s.rci * s.IH * s.IW + s.FT * s.rci * s.ryi * s.rxi);
  out->accumulators = s.vf * s.fi * s.vy * s.yi * s.vx * s.xi;
  /* A block tile much larger than the output only computes padding: the
   * space's factor splits never ask for it, an override might. */
  if (s.N * s.G * s.BFG > 65535 || s.BY > 65535)
    snprintf(out->reason, sizeof(out->reason), "a grid of %lldx%lld blocks in y and z exceeds CUDA's 65535",
             (long long)s.BY, (long long)(s.N * s.G * s.BFG));
  else if (s.FT > 2 * s.Kg + 64 || s.YT > 2 * s.P + 64 || s.XT > 2 * s.Q + 64)
    snprintf(out->reason, sizeof(out->reason),
             "a block tile of %lldx%lldx%lld is far larger than the %lldx%lldx%lld output of a group",
             (long long)s.FT, (long long)s.YT, (long long)s.XT, (long long)s.Kg, (long long)s.P, (long long)s.Q);
}

static long long ll(int64_t v) { return (long long)v; }

/* Opens the loops over the thread's register tile: f, then y, then x. */
static void open_tile_loops(cu_emit_t *e, const nchw_shape_t *s, int ind) {
  L(ind, "#pragma unroll");
  L(ind, "for (int vf = 0; vf < %lld; ++vf)", ll(s->vf));
  L(ind, "#pragma unroll");
  L(ind, "for (int fi = 0; fi < %lld; ++fi)", ll(s->fi));
  L(ind, "#pragma unroll");
  L(ind, "for (int vy = 0; vy < %lld; ++vy)", ll(s->vy));
  L(ind, "#pragma unroll");
  L(ind, "for (int yi = 0; yi < %lld; ++yi)", ll(s->yi));
  L(ind, "#pragma unroll");
  L(ind, "for (int vx = 0; vx < %lld; ++vx)", ll(s->vx));
  L(ind, "#pragma unroll");
  L(ind, "for (int xi = 0; xi < %lld; ++xi) {", ll(s->xi));
  L(ind + 1, "const int a = ((((vf * %lld + fi) * %lld + vy) * %lld + yi) * %lld + vx) * %lld + xi;", ll(s->fi),
    ll(s->vy), ll(s->yi), ll(s->vx), ll(s->xi));
  /* Positions inside the block tile. */
  L(ind + 1, "const int lf = vf * %lld + tz * %lld + fi;", ll(s->tf * s->fi), ll(s->fi));
  L(ind + 1, "const int ly = vy * %lld + ty * %lld + yi;", ll(s->ty * s->yi), ll(s->yi));
  L(ind + 1, "const int lx = vx * %lld + tx * %lld + xi;", ll(s->tx * s->xi), ll(s->xi));
}

/* One reduction step (rc, ry, rx inside the staged tiles): every
 * accumulator takes one product. */
static void emit_step(cu_emit_t *e, const nchw_shape_t *s, int ind, const char *rc, const char *ry,
                      const char *rx) {
  open_tile_loops(e, s, ind);
  L(ind + 1, "acc[a] += sw[((lf * %lld + %s) * %lld + %s) * %lld + %s] *", ll(s->rci), rc, ll(s->ryi), ry,
    ll(s->rxi), rx);
  L(ind + 1, "          sin[(%s * %lld + ly * %lld + %s * %lld) * %lld + lx * %lld + %s * %lld];", rc, ll(s->IH),
    ll(s->SH), ry, ll(s->DH), ll(s->IW), ll(s->SW), rx, ll(s->DW));
  L(ind, "}");
}

static void emit_reduction(cu_emit_t *e, const nchw_shape_t *s) {
  const int64_t steps = s->rci * s->ryi * s->rxi;
  const int64_t max_step = e->cfg.auto_unroll_max_step;
  const int unroll = max_step > 0 && steps <= max_step;
  if (unroll && e->cfg.unroll_explicit && steps <= EXPLICIT_UNROLL_MAX) {
    char rc[24], ry[24], rx[24];
    for (int64_t c = 0; c < s->rci; ++c)
      for (int64_t y = 0; y < s->ryi; ++y)
        for (int64_t x = 0; x < s->rxi; ++x) {
          snprintf(rc, sizeof(rc), "%lld", ll(c));
          snprintf(ry, sizeof(ry), "%lld", ll(y));
          snprintf(rx, sizeof(rx), "%lld", ll(x));
          emit_step(e, s, 3, rc, ry, rx);
        }
    return;
  }
  const char *pragma = unroll ? "#pragma unroll" : "#pragma unroll 1";
  L(3, "%s", pragma);
  L(3, "for (int rc = 0; rc < %lld; ++rc) {", ll(s->rci));
  L(4, "%s", pragma);
  L(4, "for (int ry = 0; ry < %lld; ++ry) {", ll(s->ryi));
  L(5, "%s", pragma);
  L(5, "for (int rx = 0; rx < %lld; ++rx) {", ll(s->rxi));
  emit_step(e, s, 6, "rc", "ry", "rx");
  L(5, "}");
  L(4, "}");
  L(3, "}");
}

hetc_plugin_status_t cu_emit_conv_nchw(cu_emit_t *e) {
  const hetc_plugin_workload_t *wl = e->wl;
  const nchw_shape_t s = nchw_shape(wl, &e->cfg);
  const int64_t threads = s.tf * s.ty * s.tx, acc = s.vf * s.fi * s.vy * s.yi * s.vx * s.xi;
  const int64_t in_tile = s.rci * s.IH * s.IW, w_tile = s.FT * s.rci * s.ryi * s.rxi;

  e->num_inputs = wl->num_inputs;
  for (int32_t i = 0; i < wl->num_inputs; ++i) e->input_layouts[i] = hetc_kit_layout_row_major();
  e->output_layout = hetc_kit_layout_row_major();
  e->num_params = wl->epilogue.has_bias ? 2 : 1;
  e->param_bytes[0] = (uint64_t)(s.K * s.Cg * s.R * s.S) * 4;
  e->param_bytes[1] = (uint64_t)s.K * 4;

  cu_emit_preamble(e, wl->epilogue.activation);
  cu_launch_t *launch = cu_emit_launch(e, "conv2d_nchw");
  hpc_strbuf_t params;
  hpc_strbuf_init(&params);
  cu_emit_conv_params(e, launch, &params);
  L(0, "HK_KERNEL(%lld, %lld, %lld) conv2d_nchw(%s) {", ll(s.tx), ll(s.ty), ll(s.tf), params.data ? params.data : "");
  hpc_strbuf_free(&params);
  L(1, "HK_SHARED float sin[%lld];", ll(in_tile));
  L(1, "HK_SHARED float sw[%lld];", ll(w_tile));
  L(1, "const int tx = HK_TX, ty = HK_TY, tz = HK_TZ;");
  L(1, "const int tid = (tz * %lld + ty) * %lld + tx;", ll(s.ty), ll(s.tx));
  L(1, "const int n = HK_BZ / %lld, g = HK_BZ / %lld %% %lld, fb = HK_BZ %% %lld * %lld;", ll(s.G * s.BFG),
    ll(s.BFG), ll(s.G), ll(s.BFG), ll(s.FT));
  L(1, "const int oy0 = HK_BY * %lld, ox0 = HK_BX * %lld;", ll(s.YT), ll(s.XT));
  L(1, "HK_GLOBAL const float *in_g = in + ((long)n * %lld + (long)g * %lld) * %lld;", ll(s.C), ll(s.Cg),
    ll(s.H * s.W));
  L(1, "HK_GLOBAL const float *w_g = w + ((long)g * %lld + fb) * %lld;", ll(s.Kg), ll(s.Cg * s.R * s.S));
  L(1, "float acc[%lld];", ll(acc));
  L(1, "#pragma unroll");
  L(1, "for (int a = 0; a < %lld; ++a) acc[a] = 0.0f;", ll(acc));
  L(1, "for (int rco = 0; rco < %lld; ++rco) {", ll(s.RCO));
  L(2, "for (int ryo = 0; ryo < %lld; ++ryo) {", ll(s.RYO));
  L(3, "for (int rxo = 0; rxo < %lld; ++rxo) {", ll(s.RXO));
  /* Stage the inner reduction's input (with halo) and weights; what lies
   * outside the tensors (padding, a rounded-up split's tail) is zero. */
  L(4, "HK_BARRIER();");
  L(4, "for (int i = tid; i < %lld; i += %lld) {", ll(in_tile), ll(threads));
  L(5, "const int c = i / %lld, iy = i / %lld %% %lld, ix = i %% %lld;", ll(s.IH * s.IW), ll(s.IW), ll(s.IH),
    ll(s.IW));
  L(5, "const int cc = rco * %lld + c;", ll(s.rci));
  L(5, "const int gy = oy0 * %lld - %lld + ryo * %lld + iy;", ll(s.SH), ll(s.PT), ll(s.ryi * s.DH));
  L(5, "const int gx = ox0 * %lld - %lld + rxo * %lld + ix;", ll(s.SW), ll(s.PL), ll(s.rxi * s.DW));
  L(5, "sin[i] = cc < %lld && gy >= 0 && gy < %lld && gx >= 0 && gx < %lld ? in_g[((long)cc * %lld + gy) * %lld + gx] "
       ": 0.0f;",
    ll(s.Cg), ll(s.H), ll(s.W), ll(s.H), ll(s.W));
  L(4, "}");
  L(4, "for (int i = tid; i < %lld; i += %lld) {", ll(w_tile), ll(threads));
  L(5, "const int f = i / %lld, c = i / %lld %% %lld, ky = i / %lld %% %lld, kx = i %% %lld;",
    ll(s.rci * s.ryi * s.rxi), ll(s.ryi * s.rxi), ll(s.rci), ll(s.rxi), ll(s.ryi), ll(s.rxi));
  L(5, "const int cc = rco * %lld + c, kyy = ryo * %lld + ky, kxx = rxo * %lld + kx;", ll(s.rci), ll(s.ryi),
    ll(s.rxi));
  L(5, "sw[i] = fb + f < %lld && cc < %lld && kyy < %lld && kxx < %lld ? w_g[(((long)f * %lld + cc) * %lld + kyy) * "
       "%lld + kxx] : 0.0f;",
    ll(s.Kg), ll(s.Cg), ll(s.R), ll(s.S), ll(s.Cg), ll(s.R), ll(s.S));
  L(4, "}");
  L(4, "HK_BARRIER();");
  emit_reduction(e, &s);
  L(3, "}");
  L(2, "}");
  L(1, "}");
  /* The epilogue: only outputs inside the tensor are stored. */
  open_tile_loops(e, &s, 1);
  L(2, "const int f = fb + lf, oy = oy0 + ly, ox = ox0 + lx;");
  L(2, "if (f < %lld && oy < %lld && ox < %lld) {", ll(s.Kg), ll(s.P), ll(s.Q));
  L(3, "const int ch = g * %lld + f;", ll(s.Kg));
  L(3, "const long o = (((long)n * %lld + ch) * %lld + oy) * %lld + ox;", ll(s.K), ll(s.P), ll(s.Q));
  hpc_strbuf_printf(&e->src, "      ");
  cu_emit_epilogue_store(e, "out", "o", "ch", "acc[a]");
  L(2, "}");
  L(1, "}");
  L(0, "}");
  launch->block[0] = (uint32_t)s.tx, launch->block[1] = (uint32_t)s.ty, launch->block[2] = (uint32_t)s.tf;
  launch->grid[0] = (uint32_t)s.BX, launch->grid[1] = (uint32_t)s.BY, launch->grid[2] = (uint32_t)(s.N * s.G * s.BFG);
  return NULL;
}
