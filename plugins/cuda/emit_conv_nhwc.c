/* cuda_conv2d_nhwc: AutoTVM's conv2d_nhwc.cuda schedule as a generator,
 * adapted to batch-1 inference.
 *
 * GEMM view: "n" is the output pixels fused in NHWC order (N*P*Q), "c" the
 * output channels K, the reduction runs over the kernel rows r, columns s
 * and the input channels. A block has num_thread_c (x: channels, fastest,
 * so that neighbouring threads store neighbouring NHWC outputs) by
 * num_thread_n (y) threads; each thread computes vthread_n*tile_n pixels
 * by vthread_c*tile_c channels, its virtual threads strided by the
 * threads' span (pixel vn*(num_thread_n*tile_n) + ty*tile_n + i of the
 * block, channel vc*(num_thread_c*tile_c) + tx*tile_c + j). A block covers
 * BN = vthread_n*num_thread_n*tile_n pixels by BC = vthread_c*
 * num_thread_c*tile_c channels.
 *
 * Per kernel position (r, s) and chunk of `step` input channels (at most
 * C: a smaller layer stages only what it has) the block stages in shared
 * memory the input patch (gathered im2col-style for (r, s); zero for the
 * padding and every tail) transposed as [step][BN] -- its rows padded so
 * that the transposing stores and the broadcast reads spread over the
 * banks -- and the weights [step][BC] from the packed [R][S][C][K] layout,
 * whose step rows are contiguous in K. Both loads are coalesced along the
 * channels. Each thread then takes, per reduction element, its pixels and
 * channels into registers and accumulates their outer product.
 *
 * A general convolution decodes each of the block's pixels once (image,
 * input row and column origin) into a small table in shared memory; a
 * 1x1, stride-1, unpadded one reads its pixels straight (input pixel =
 * output pixel). Staging loops are written per thread with the division
 * by the stage's width hoisted whenever the block's threads tile it.
 *
 * When a thread's share of a step's loads is small (at most PREFETCH_MAX
 * values), the loads are software-pipelined through registers: the next
 * step's values are fetched from global memory before the current step's
 * arithmetic and stored to shared memory after it, so their latency hides
 * behind the math even when a batch-1 layer gives each SM a single block.
 * The shared arrays are 16-byte aligned so that a thread's 4 consecutive
 * pixels or channels come in one vector load.
 *
 * Any positive knob values work: blocks are counted by rounding up, staged
 * tiles are zero outside the tensors and only outputs inside them are
 * stored; what the device cannot take is refused by the demand. */
#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "cu.h"

#define L(ind, ...) hpc_strbuf_line(&e->src, ind, __VA_ARGS__)

/* Loops of at most this many iterations are unrolled completely. */
#define UNROLL_STAGE_MAX 16
/* Reduction steps x accumulators below which the step loop unrolls fully. */
#define UNROLL_STEP_MAX 4096
/* Registers a thread may hold for the next step's loads. */
#define PREFETCH_MAX 24

typedef struct nhwc_shape_t {
  int64_t N, C, H, W, K, P, Q, R, S, SH, SW, DH, DW, PT, PL;
  int64_t NPQ;                  /* output pixels */
  int64_t ni, ci, tn, tc, vn, vc; /* per-thread tiles, threads, virtual threads */
  int64_t T, BN, BC, ES, CO;    /* threads, block tile, staged channels, chunks */
  int64_t BNP;                  /* padded row of the staged input */
  int64_t GX, GY;               /* pixel blocks, channel blocks */
  int direct;                   /* 1x1, stride 1, no padding: pixels read straight */
  int wide;                     /* input offsets need 64 bits */
  int prefetch;                 /* the next step's loads go to registers first */
} nhwc_shape_t;

static long long ll(int64_t v) { return (long long)v; }

/* The row of the transposed input stage: stores run down a column (a
 * warp's consecutive channels are consecutive rows), reads along a row. A
 * row that is a multiple of 4 floats keeps 16-byte alignment for vector
 * reads, and one of 4 mod 8 floats spreads a column's stores over eight
 * banks; an odd row is conflict-free. */
static int64_t padded_row(int64_t bn) {
  if (bn % 4 == 0) return bn % 8 == 0 ? bn + 4 : bn;
  return bn % 2 == 0 ? bn + 1 : bn;
}

static nhwc_shape_t nhwc_shape(const hetc_plugin_workload_t *wl, const cu_config_t *c) {
  nhwc_shape_t s;
  const hetc_plugin_tensor_t *in = &wl->inputs[0];
  s.N = in->shape[0], s.C = in->shape[1], s.H = in->shape[2], s.W = in->shape[3];
  s.K = wl->output.shape[1], s.P = wl->output.shape[2], s.Q = wl->output.shape[3];
  s.R = wl->kernel[0], s.S = wl->kernel[1], s.SH = wl->strides[0], s.SW = wl->strides[1];
  s.DH = wl->dilation[0], s.DW = wl->dilation[1], s.PT = wl->padding[0], s.PL = wl->padding[1];
  s.NPQ = s.N * s.P * s.Q;
  s.ni = c->tile_n, s.ci = c->tile_c, s.tn = c->num_thread_n, s.tc = c->num_thread_c;
  s.vn = c->vthread_n, s.vc = c->vthread_c;
  s.T = s.tn * s.tc;
  s.BN = s.vn * s.tn * s.ni, s.BC = s.vc * s.tc * s.ci;
  s.ES = c->step < s.C ? c->step : s.C;
  if (s.ES < 1) s.ES = 1;
  s.CO = hetc_kit_ceil_div(s.C, s.ES);
  s.BNP = padded_row(s.BN);
  s.GX = s.BN > 0 ? hetc_kit_ceil_div(s.NPQ, s.BN) : 0, s.GY = s.BC > 0 ? hetc_kit_ceil_div(s.K, s.BC) : 0;
  s.direct = s.R == 1 && s.S == 1 && s.SH == 1 && s.SW == 1 && s.PT == 0 && s.PL == 0 && wl->padding[2] == 0 &&
             wl->padding[3] == 0 && s.P == s.H && s.Q == s.W;
  s.wide = s.N * s.H * s.W * s.C >= INT_MAX || s.NPQ * s.K >= INT_MAX;
  const int64_t in_loads = hetc_kit_ceil_div(s.ES * s.BN, s.T), w_loads = hetc_kit_ceil_div(s.ES * s.BC, s.T);
  s.prefetch = s.R * s.S * s.CO > 1 && in_loads <= UNROLL_STAGE_MAX && w_loads <= UNROLL_STAGE_MAX &&
               in_loads + w_loads <= PREFETCH_MAX;
  return s;
}

/* Shared memory: both stages and, for a general convolution, the pixel
 * table (row origin, column origin: ints; offset: int or long). */
static int64_t round16(int64_t bytes) { return (bytes + 15) / 16 * 16; }

static int64_t nhwc_shared_bytes(const nhwc_shape_t *s) {
  /* Each array rounded up to 16 bytes: the compiler's placement. */
  int64_t bytes = round16(4 * s->ES * s->BNP) + round16(4 * s->ES * s->BC);
  if (!s->direct) bytes += 2 * round16(4 * s->BN) + round16((s->wide ? 8 : 4) * s->BN);
  return bytes;
}

void cu_demand_conv_nhwc(const hetc_plugin_workload_t *wl, const cu_config_t *cfg, cu_demand_t *out) {
  if (cfg->tile_n < 1 || cfg->tile_c < 1 || cfg->num_thread_n < 1 || cfg->num_thread_c < 1 || cfg->vthread_n < 1 ||
      cfg->vthread_c < 1 || cfg->step < 1) {
    snprintf(out->reason, sizeof(out->reason), "every knob of the NHWC template must be positive");
    return;
  }
  if (wl->groups != 1) {
    snprintf(out->reason, sizeof(out->reason), "the NHWC template computes groups == 1 only (got %d)", wl->groups);
    return;
  }
  const nhwc_shape_t s = nhwc_shape(wl, cfg);
  out->block[0] = s.tc, out->block[1] = s.tn, out->block[2] = 1;
  out->shared_bytes = nhwc_shared_bytes(&s);
  out->accumulators = s.ni * s.ci * s.vn * s.vc;
  /* A block tile much larger than the output only computes padding (the
   * larger candidates on a layer with few channels or pixels). */
  if (s.BN > 2 * s.NPQ + 64 || s.BC > 2 * s.K + 64)
    snprintf(out->reason, sizeof(out->reason),
             "a block tile of %lld pixels x %lld channels is far larger than the %lld x %lld output", ll(s.BN),
             ll(s.BC), ll(s.NPQ), ll(s.K));
  else if (s.NPQ + s.BN >= INT_MAX)
    snprintf(out->reason, sizeof(out->reason), "%lld output pixels are more than the kernel's 32-bit indices hold",
             ll(s.NPQ));
  else if (s.GY > 65535 || s.GX > INT_MAX)
    snprintf(out->reason, sizeof(out->reason), "a grid of %lld x %lld blocks is beyond the launch's extents",
             ll(s.GX), ll(s.GY));
}

void cu_pack_weight_rsck(const hetc_plugin_workload_t *wl, const float *logical, float *out) {
  const int64_t K = wl->output.shape[1], C = wl->inputs[0].shape[1], R = wl->kernel[0], S = wl->kernel[1];
  for (int64_t k = 0; k < K; ++k)
    for (int64_t c = 0; c < C; ++c)
      for (int64_t r = 0; r < R; ++r)
        for (int64_t q = 0; q < S; ++q) out[((r * S + q) * C + c) * K + k] = logical[((k * C + c) * R + r) * S + q];
}

/* Opens a per-thread loop over the elements of a rows x cols stage (row
 * major, cols fastest) that the block's T threads share: declares `row`
 * and `col` for the element, and skips elements past the stage. The
 * divisions by cols are hoisted when the threads tile a row or a row
 * tiles the threads. Closed with one "}" at `ind`. */
static void open_stage_loop(cu_emit_t *e, int ind, int64_t rows, int64_t cols, int64_t T, const char *tag) {
  const int64_t total = rows * cols, trips = hetc_kit_ceil_div(total, T);
  L(ind, "%s", trips <= UNROLL_STAGE_MAX ? "#pragma unroll" : "#pragma unroll 4");
  L(ind, "for (int j%s = 0; j%s < %lld; ++j%s) {", tag, tag, ll(trips), tag);
  if (T % cols == 0) {
    L(ind + 1, "const int row = j%s * %lld + %s_row, col = %s_col;", tag, ll(T / cols), tag, tag);
    if (total % T) L(ind + 1, "if (row >= %lld) break;", ll(rows));
  } else if (cols % T == 0) {
    L(ind + 1, "const int row = j%s * %lld / %lld, col = j%s * %lld %% %lld + tid;", tag, ll(T), ll(cols), tag,
      ll(T), ll(cols));
  } else {
    L(ind + 1, "const int i = j%s * %lld + tid;", tag, ll(T));
    if (total % T) L(ind + 1, "if (i >= %lld) break;", ll(total));
    L(ind + 1, "const int row = i / %lld, col = i %% %lld;", ll(cols), ll(cols));
  }
}

/* The per-thread parts of open_stage_loop's hoisted divisions. */
static void declare_stage_thread(cu_emit_t *e, int64_t cols, int64_t T, const char *tag) {
  if (T % cols == 0) L(1, "const int %s_row = tid / %lld, %s_col = tid %% %lld;", tag, ll(cols), tag, ll(cols));
}

/* How a stage loop moves its element: global to shared; global to the
 * thread's registers (the next step's, loaded while this one computes);
 * registers to shared. */
typedef enum stage_mode_t { STAGE_DIRECT, STAGE_LOAD, STAGE_STORE } stage_mode_t;

/* What a step's loads need from the kernel position (r, s) and the first
 * channel c0 of the chunk. */
static void emit_step_offsets(cu_emit_t *e, const nhwc_shape_t *s, int ind) {
  const char *idx = s->wide ? "long" : "int";
  if (!s->direct) {
    L(ind, "r_dy = r * %lld, s_dx = s * %lld;", ll(s->DH), ll(s->DW));
    L(ind, "rs_off = ((%s)r_dy * %lld + s_dx) * %lld;", idx, ll(s->W), ll(s->C));
  }
  L(ind, "w_off = ((long)(r * %lld + s) * %lld + c0) * %lld + cb;", ll(s->S), ll(s->C), ll(s->K));
}

/* Stages the input chunk: sin[k][p] for channel c0 + k of pixel pb + p at
 * kernel position (r, s). The stage loop runs along the channels (rows of
 * BN pixels x ES channels), so global reads are contiguous. */
static void emit_stage_input(cu_emit_t *e, const nhwc_shape_t *s, int ind, stage_mode_t mode) {
  const char *idx = s->wide ? "long" : "int";
  open_stage_loop(e, ind, s->BN, s->ES, s->T, "i");
  char dst[64];
  if (mode == STAGE_LOAD)
    snprintf(dst, sizeof(dst), "pin[ji]");
  else
    snprintf(dst, sizeof(dst), "sin[col * %lld + row]", ll(s->BNP));
  if (mode == STAGE_STORE) {
    L(ind + 1, "%s = pin[ji];", dst);
    L(ind, "}");
    return;
  }
  L(ind + 1, "const int c = c0 + col;");
  char cond[256];
  int n = 0;
  cond[0] = '\0';
  if (s->C % s->ES) n += snprintf(cond + n, sizeof(cond) - (size_t)n, "c < %lld", ll(s->C));
  if (s->direct) {
    if (s->NPQ % s->BN)
      n += snprintf(cond + n, sizeof(cond) - (size_t)n, "%spb + row < %lld", n ? " && " : "", ll(s->NPQ));
    L(ind + 1, "%s = %s%s%sin[(%s)(pb + row) * %lld + c]%s;", dst, n ? "(" : "", cond, n ? ") ? " : "", idx,
      ll(s->C), n ? " : 0.0f" : "");
  } else {
    L(ind + 1, "const int iy = pix_y[row] + r_dy, ix = pix_x[row] + s_dx;");
    n += snprintf(cond + n, sizeof(cond) - (size_t)n, "%s(unsigned)iy < %lldu && (unsigned)ix < %lldu",
                  n ? " && " : "", ll(s->H), ll(s->W));
    L(ind + 1, "%s = (%s) ? in[pix_off[row] + rs_off + c] : 0.0f;", dst, cond);
  }
  L(ind, "}");
}

/* Stages the weights: sw[k][f] = w[r][s][c0 + k][cb + f]. */
static void emit_stage_weight(cu_emit_t *e, const nhwc_shape_t *s, int ind, stage_mode_t mode) {
  open_stage_loop(e, ind, s->ES, s->BC, s->T, "w");
  char dst[64];
  if (mode == STAGE_LOAD)
    snprintf(dst, sizeof(dst), "pw[jw]");
  else
    snprintf(dst, sizeof(dst), "sw[row * %lld + col]", ll(s->BC));
  if (mode == STAGE_STORE) {
    L(ind + 1, "%s = pw[jw];", dst);
    L(ind, "}");
    return;
  }
  char cond[128];
  int n = 0;
  cond[0] = '\0';
  if (s->C % s->ES) n += snprintf(cond + n, sizeof(cond) - (size_t)n, "c0 + row < %lld", ll(s->C));
  if (s->K % s->BC)
    n += snprintf(cond + n, sizeof(cond) - (size_t)n, "%scb + col < %lld", n ? " && " : "", ll(s->K));
  L(ind + 1, "%s = %s%s%sw[w_off + (long)row * %lld + col]%s;", dst, n ? "(" : "", cond, n ? ") ? " : "", ll(s->K),
    n ? " : 0.0f" : "");
  L(ind, "}");
}

/* One chunk's arithmetic: per staged channel, the thread's pixels and
 * channels into registers, then their outer product. */
static void emit_compute(cu_emit_t *e, const nhwc_shape_t *s, int ind) {
  const int64_t an = s->vn * s->ni, bc = s->vc * s->ci;
  L(ind, "%s", s->ES * an * bc <= UNROLL_STEP_MAX ? "#pragma unroll" : "#pragma unroll 2");
  L(ind, "for (int k = 0; k < %lld; ++k) {", ll(s->ES));
  L(ind + 1, "float a[%lld], b[%lld];", ll(an), ll(bc));
  L(ind + 1, "#pragma unroll");
  L(ind + 1, "for (int v = 0; v < %lld; ++v)", ll(s->vn));
  L(ind + 1, "#pragma unroll");
  L(ind + 1, "for (int i = 0; i < %lld; ++i) a[v * %lld + i] = sin[k * %lld + v * %lld + ty_n + i];", ll(s->ni), ll(s->ni),
    ll(s->BNP), ll(s->tn * s->ni));
  L(ind + 1, "#pragma unroll");
  L(ind + 1, "for (int v = 0; v < %lld; ++v)", ll(s->vc));
  L(ind + 1, "#pragma unroll");
  L(ind + 1, "for (int j = 0; j < %lld; ++j) b[v * %lld + j] = sw[k * %lld + v * %lld + tx_c + j];", ll(s->ci), ll(s->ci),
    ll(s->BC), ll(s->tc * s->ci));
  L(ind + 1, "#pragma unroll");
  L(ind + 1, "for (int i = 0; i < %lld; ++i)", ll(an));
  L(ind + 1, "#pragma unroll");
  L(ind + 1, "for (int j = 0; j < %lld; ++j) acc[i * %lld + j] += a[i] * b[j];", ll(bc), ll(bc));
  L(ind, "}");
}

hetc_plugin_status_t cu_emit_conv_nhwc(cu_emit_t *e) {
  const hetc_plugin_workload_t *wl = e->wl;
  if (wl->groups != 1)
    return cu_status(HETC_PLUGIN_STATUS_UNSUPPORTED, "%s: %s computes groups == 1 only (got %d)", cu_plugin_name,
                     cu_template_name(e->kind), wl->groups);
  cu_demand_t demand;
  memset(&demand, 0, sizeof(demand));
  cu_demand_conv_nhwc(wl, &e->cfg, &demand);
  if (demand.reason[0])
    return cu_status(HETC_PLUGIN_STATUS_INVALID_ARGUMENT, "%s: %s", cu_plugin_name, demand.reason);
  const nhwc_shape_t s = nhwc_shape(wl, &e->cfg);
  const int64_t acc = s.vn * s.ni * s.vc * s.ci, an = s.vn * s.ni, bc = s.vc * s.ci;
  const char *idx = s.wide ? "long" : "int";

  const hetc_plugin_layout_t nhwc = {HETC_PLUGIN_LAYOUT_NHWC, 0};
  e->num_inputs = wl->num_inputs;
  for (int32_t i = 0; i < wl->num_inputs; ++i) e->input_layouts[i] = nhwc;
  e->output_layout = nhwc;
  e->num_params = wl->epilogue.has_bias ? 2 : 1;
  e->param_bytes[0] = (uint64_t)(s.K * s.C * s.R * s.S) * 4;
  e->param_bytes[1] = (uint64_t)s.K * 4;
  e->workspace_bytes = 0;

  cu_emit_preamble(e, wl->epilogue.activation);
  cu_launch_t *launch = cu_emit_launch(e, "conv2d_nhwc");
  if (!launch) return cu_status(HETC_PLUGIN_STATUS_INTERNAL, "%s: too many launches", cu_plugin_name);
  hpc_strbuf_t params;
  hpc_strbuf_init(&params);
  cu_emit_conv_params(e, launch, &params);
  L(0, "HK_KERNEL(%lld, %lld, 1) conv2d_nhwc(%s) {", ll(s.tc), ll(s.tn), params.data ? params.data : "");
  hpc_strbuf_free(&params);
  /* 16-byte alignment lets the compiler read a thread's 4 consecutive
   * pixels or channels with one vector load. */
  L(1, "HK_SHARED float sin[%lld] __attribute__((aligned(16)));", ll(s.ES * s.BNP));
  L(1, "HK_SHARED float sw[%lld] __attribute__((aligned(16)));", ll(s.ES * s.BC));
  if (!s.direct) {
    L(1, "HK_SHARED int pix_y[%lld];", ll(s.BN));
    L(1, "HK_SHARED int pix_x[%lld];", ll(s.BN));
    L(1, "HK_SHARED %s pix_off[%lld];", idx, ll(s.BN));
  }
  L(1, "const int tx = HK_TX, ty = HK_TY, tid = ty * %lld + tx;", ll(s.tc));
  L(1, "const int ty_n = ty * %lld, tx_c = tx * %lld;", ll(s.ni), ll(s.ci));
  L(1, "const int pb = HK_BX * %lld, cb = HK_BY * %lld;", ll(s.BN), ll(s.BC));
  declare_stage_thread(e, s.ES, s.T, "i");
  declare_stage_thread(e, s.BC, s.T, "w");
  if (!s.direct) {
    /* Each of the block's pixels once: the input row and column its
     * window starts at and the offset of that corner (the padding's
     * corners lie outside the tensor; only checked positions are read).
     * A pixel past the output starts far above the input. */
    L(1, "for (int p = tid; p < %lld; p += %lld) {", ll(s.BN), ll(s.T));
    L(2, "const int gp = pb + p;");
    L(2, "const int n = gp / %lld, oy = gp / %lld %% %lld, ox = gp %% %lld;", ll(s.P * s.Q), ll(s.Q), ll(s.P),
      ll(s.Q));
    L(2, "const int y0 = oy * %lld - %lld, x0 = ox * %lld - %lld;", ll(s.SH), ll(s.PT), ll(s.SW), ll(s.PL));
    L(2, "pix_y[p] = gp < %lld ? y0 : -%lld;", ll(s.NPQ), ll(s.H + (s.R - 1) * s.DH + 1));
    L(2, "pix_x[p] = x0;");
    L(2, "pix_off[p] = gp < %lld ? (((%s)n * %lld + y0) * %lld + x0) * %lld : 0;", ll(s.NPQ), idx, ll(s.H), ll(s.W),
      ll(s.C));
    L(1, "}");
    L(1, "HK_BARRIER();");
  }
  L(1, "float acc[%lld];", ll(acc));
  L(1, "#pragma unroll");
  L(1, "for (int a = 0; a < %lld; ++a) acc[a] = 0.0f;", ll(acc));
  /* The reduction: steps over (r, s, chunk of channels), in that order. */
  const int64_t steps = s.R * s.S * s.CO;
  L(1, "int r = 0, s = 0, c0 = 0;");
  if (!s.direct) {
    L(1, "int r_dy, s_dx;");
    L(1, "%s rs_off;", idx);
  }
  L(1, "long w_off;");
  if (s.prefetch) {
    L(1, "float pin[%lld], pw[%lld];", ll(hetc_kit_ceil_div(s.ES * s.BN, s.T)),
      ll(hetc_kit_ceil_div(s.ES * s.BC, s.T)));
    emit_step_offsets(e, &s, 1);
    emit_stage_input(e, &s, 1, STAGE_LOAD);
    emit_stage_weight(e, &s, 1, STAGE_LOAD);
  }
  L(1, "#pragma unroll 1");
  L(1, "for (int t = 0; t < %lld; ++t) {", ll(steps));
  if (!s.prefetch) emit_step_offsets(e, &s, 2);
  L(2, "HK_BARRIER();");
  emit_stage_input(e, &s, 2, s.prefetch ? STAGE_STORE : STAGE_DIRECT);
  emit_stage_weight(e, &s, 2, s.prefetch ? STAGE_STORE : STAGE_DIRECT);
  L(2, "HK_BARRIER();");
  /* The next step's position; with prefetching, its loads are issued
   * before this step's arithmetic and land in registers meanwhile. */
  int ind = 2;
  if (s.prefetch) {
    L(2, "if (t + 1 < %lld) {", ll(steps));
    ind = 3;
  }
  L(ind, "c0 += %lld;", ll(s.ES));
  L(ind, "if (c0 >= %lld) {", ll(s.C));
  L(ind + 1, "c0 = 0;");
  L(ind + 1, "if (++s == %lld) {", ll(s.S));
  L(ind + 2, "s = 0;");
  L(ind + 2, "++r;");
  L(ind + 1, "}");
  L(ind, "}");
  if (s.prefetch) {
    emit_step_offsets(e, &s, 3);
    emit_stage_input(e, &s, 3, STAGE_LOAD);
    emit_stage_weight(e, &s, 3, STAGE_LOAD);
    L(2, "}");
  }
  emit_compute(e, &s, 2);
  L(1, "}");
  /* The epilogue: NHWC output element (pixel, channel) is pixel * K +
   * channel; only those inside the tensor are stored. */
  L(1, "#pragma unroll");
  L(1, "for (int i = 0; i < %lld; ++i) {", ll(an));
  L(2, "const int gp = pb + i / %lld * %lld + ty_n + i %% %lld;", ll(s.ni), ll(s.tn * s.ni), ll(s.ni));
  if (s.NPQ % s.BN) L(2, "if (gp >= %lld) continue;", ll(s.NPQ));
  L(2, "#pragma unroll");
  L(2, "for (int j = 0; j < %lld; ++j) {", ll(bc));
  L(3, "const int f = cb + j / %lld * %lld + tx_c + j %% %lld;", ll(s.ci), ll(s.tc * s.ci), ll(s.ci));
  if (s.K % s.BC) L(3, "if (f >= %lld) continue;", ll(s.K));
  L(3, "const %s o = (%s)gp * %lld + f;", idx, idx, ll(s.K));
  L(3, "const float v = acc[i * %lld + j];", ll(bc));
  hpc_strbuf_printf(&e->src, "      ");
  cu_emit_epilogue_store(e, "out", "o", "f", "v");
  L(2, "}");
  L(1, "}");
  L(0, "}");
  launch->block[0] = (uint32_t)s.tc, launch->block[1] = (uint32_t)s.tn, launch->block[2] = 1;
  launch->grid[0] = (uint32_t)s.GX, launch->grid[1] = (uint32_t)s.GY, launch->grid[2] = 1;
  return NULL;
}
