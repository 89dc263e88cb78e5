/* cuda_conv2d_implicit_gemm_tf32: conv2d (groups == 1) as an implicit GEMM
 * on the tensor cores, TF32 operands, fp32 accumulation (sm_80 and newer).
 *
 * GEMM view: M = output channels, N = output pixels (images x rows x
 * columns), Kred = C x R x S. A is the weight, whose logical [K][C][R][S]
 * layout already is the row-major M x Kred matrix (no packing); B is the
 * im2col of the NCHW input, gathered on the fly (zero for the padding and
 * for the tails of every dimension).
 *
 * A block of thread_m x thread_n warps (1-d, 32 lanes each) computes a
 * block_m x block_n tile of the output; each warp a (block_m / thread_m) x
 * (block_n / thread_n) tile of 16x8 mma steps (PTX m16n8k8, TF32). Per
 * step of block_k reduction elements the block stages A [block_m][block_k]
 * and B [block_k][block_n] in shared memory, rounded to TF32 as they are
 * stored, then every warp loads its fragments per 8-wide slice and issues
 * its mma steps. The next step's global loads go to registers before the
 * current step's math, and when two stages fit the 48 KiB of static shared
 * memory they alternate (one barrier per step), else one stage is reused
 * (two barriers). The leading dimensions are padded (and A's columns
 * swizzled) so that fragment loads and stage stores hit distinct banks.
 *
 * Global loads are coalesced: the B stage's threads run along the pixels
 * (consecutive output columns are consecutive input columns at stride 1),
 * the A stage's along Kred (a weight row). Each thread decomposes its
 * pixels once (image, input row and column origin) and each Kred element
 * once per step (channel, kernel row and column): shapes are constants, so
 * the divisions are multiplications.
 *
 * The epilogue writes the accumulators straight from the fragment layout
 * (c0 = C[g][2t], c1 = C[g][2t+1], c2 = C[g+8][2t], c3 = C[g+8][2t+1])
 * to the NCHW output with bias, residual and activation fused; rows and
 * columns past the tensor are not stored. Every thread of the block runs
 * the same loops (the OpenCL emulation of the mma step is block-wide).
 *
 * Known limits: no split of Kred across blocks, so a small output (batch
 * 1, 7x7) fills few multiprocessors; mma.sync, not Hopper's wgmma. */
#include <stdio.h>

#include "cu.h"

#define L(ind, ...) hpc_strbuf_line(&e->src, ind, __VA_ARGS__)

/* Static shared memory a kernel may declare; two stages only below it. */
#define STATIC_SHARED_MAX 49152

typedef struct igemm_shape_t {
  int64_t N, C, H, W, K, P, Q, R, S, SH, SW, DH, DW, PT, PL;
  int64_t M, NPIX, KRED, KT;        /* GEMM extents, reduction steps */
  int64_t BM, BN, BK, WM, WN;       /* knobs */
  int64_t T, TM, TN, MT, NT;        /* threads, warp tile, its mma tiles */
  int64_t LDA, LDB;                 /* padded leading dimensions in shared memory */
  int64_t ASZ, BSZ, STAGES;         /* stage sizes (elements), stages */
  /* The A stage: VA floats per load (4 when rows allow float4), a thread
   * grid of AKT (along Kred, in loads) x AMT (along M), per-thread counts. */
  int64_t VA, AKT, AMT, AKX, AMY;
  /* The B stage: BNT threads along the pixels x BKT along Kred. */
  int64_t BNT, BKT, BNX, BKY;
  int padded;                       /* some window reaches past the input */
  const char *idx;                  /* "int", or "long" for tensors past 2^31 elements */
} igemm_shape_t;

static long long ll(int64_t v) { return (long long)v; }

/* The largest divisor of t that is at most limit (at least 1). */
static int64_t divisor_at_most(int64_t t, int64_t limit) {
  for (int64_t d = limit < t ? limit : t; d > 1; --d)
    if (t % d == 0) return d;
  return 1;
}

/* Padded leading dimensions. A fragment loads read A[g][t] (g = lane / 4,
 * t = lane % 4): a row stride of 4 (mod 8) words puts the 8 rows x 4
 * columns on 32 banks. B fragment loads read B[t][g]: a row stride of 8 or
 * 24 (mod 32) words does. A is also swizzled: element (m, k) lies at
 * m * LDA + (k ^ (m & 3)), which keeps the fragment loads on 32 banks (the
 * xor permutes t within its row) and spreads the stage's stores, where a
 * warp writes the same component of 8 rows x 4 float4 (without it, 4 lanes
 * a bank). */
static int64_t pad_a(int64_t bk) {
  int64_t ld = bk;
  while (ld % 8 != 4) ++ld;
  return ld;
}

static int64_t pad_b(int64_t bn) {
  int64_t ld = bn;
  while (ld % 32 != 8 && ld % 32 != 24) ++ld;
  return ld;
}

/* What the config alone decides (the demand needs no workload). */
static void config_shape(const cu_config_t *c, igemm_shape_t *s) {
  s->BM = c->block_m > 0 ? c->block_m : 16, s->BN = c->block_n > 0 ? c->block_n : 8;
  s->BK = c->block_k > 0 ? c->block_k : 8;
  s->WM = c->thread_m > 0 ? c->thread_m : 1, s->WN = c->thread_n > 0 ? c->thread_n : 1;
  s->T = 32 * s->WM * s->WN;
  s->TM = s->BM / s->WM, s->TN = s->BN / s->WN;
  s->MT = s->TM / 16, s->NT = s->TN / 8;
  s->LDA = pad_a(s->BK), s->LDB = pad_b(s->BN);
  s->ASZ = s->BM * s->LDA, s->BSZ = s->BK * s->LDB;
  s->STAGES = 2 * 4 * (s->ASZ + s->BSZ) <= STATIC_SHARED_MAX ? 2 : 1;
}

static igemm_shape_t igemm_shape(const hetc_plugin_workload_t *wl, const cu_config_t *c) {
  igemm_shape_t s;
  const hetc_plugin_tensor_t *in = &wl->inputs[0];
  s.N = in->shape[0], s.C = in->shape[1], s.H = in->shape[2], s.W = in->shape[3];
  s.K = wl->output.shape[1], s.P = wl->output.shape[2], s.Q = wl->output.shape[3];
  s.R = wl->kernel[0], s.S = wl->kernel[1], s.SH = wl->strides[0], s.SW = wl->strides[1];
  s.DH = wl->dilation[0], s.DW = wl->dilation[1], s.PT = wl->padding[0], s.PL = wl->padding[1];
  s.M = s.K, s.NPIX = s.N * s.P * s.Q, s.KRED = s.C * s.R * s.S;
  config_shape(c, &s);
  s.KT = hetc_kit_ceil_div(s.KRED, s.BK);
  /* Weight rows start 16-byte aligned when Kred is a multiple of 4; block_k
   * is a multiple of 8, so every float4 lies inside one row and one step. */
  s.VA = s.KRED % 4 == 0 ? 4 : 1;
  s.AKT = divisor_at_most(s.T, s.BK / s.VA), s.AMT = s.T / s.AKT;
  s.AKX = hetc_kit_ceil_div(s.BK / s.VA, s.AKT), s.AMY = hetc_kit_ceil_div(s.BM, s.AMT);
  /* A warp reads up to 32 consecutive pixels of a Kred row (consecutive
   * addresses at stride 1); a thread's further pixels reuse its Kred
   * decomposition. */
  s.BNT = divisor_at_most(s.T, s.BN < 32 ? s.BN : 32), s.BKT = s.T / s.BNT;
  s.BNX = hetc_kit_ceil_div(s.BN, s.BNT), s.BKY = hetc_kit_ceil_div(s.BK, s.BKT);
  s.padded = s.PT > 0 || s.PL > 0 || (s.P - 1) * s.SH + (s.R - 1) * s.DH >= s.H ||
             (s.Q - 1) * s.SW + (s.S - 1) * s.DW >= s.W;
  const int64_t big = INT64_C(1) << 31;
  s.idx = s.N * s.C * s.H * s.W >= big || s.N * s.K * s.P * s.Q >= big || s.K * s.KRED >= big ? "long" : "int";
  return s;
}

void cu_demand_igemm_tc(const cu_config_t *cfg, cu_demand_t *out) {
  igemm_shape_t s;
  config_shape(cfg, &s);
  out->block[0] = s.T, out->block[1] = 1, out->block[2] = 1;
  out->shared_bytes = 4 * s.STAGES * (s.ASZ + s.BSZ);
  out->accumulators = 4 * s.MT * s.NT;
  if (cfg->block_k % 8 != 0 || cfg->block_k < 8)
    snprintf(out->reason, sizeof(out->reason), "block_k = %lld is not a multiple of the mma step's 8",
             ll(cfg->block_k));
  else if (s.WM < 1 || s.WN < 1 || cfg->block_m % (16 * s.WM) != 0 || cfg->block_n % (8 * s.WN) != 0)
    snprintf(out->reason, sizeof(out->reason),
             "a block of %lldx%lld split over %lldx%lld warps is not made of 16x8 mma tiles", ll(cfg->block_m),
             ll(cfg->block_n), ll(cfg->thread_m), ll(cfg->thread_n));
}

/* Global loads of reduction step `kt` (a C expression) into registers. */
static void emit_loads(cu_emit_t *e, const igemm_shape_t *s, int ind, const char *kt) {
  L(ind, "{");
  L(ind + 1, "const int k0 = (%s) * %lld;", kt, ll(s->BK));
  /* A: rows of the weight, threads along Kred. */
  L(ind + 1, "HK_UNROLL_MMA");
  L(ind + 1, "for (int x = 0; x < %lld; ++x) {", ll(s->AKX));
  L(ind + 2, "const int kk = k0 + (ak + x * %lld) * %lld;", ll(s->AKT), ll(s->VA));
  L(ind + 2, "HK_UNROLL_MMA");
  L(ind + 2, "for (int y = 0; y < %lld; ++y) {", ll(s->AMY));
  L(ind + 3, "const int ok = kk < %lld && am_ok[y];", ll(s->KRED));
  L(ind + 3, "const %s at = a_off + (%s)y * %lld + kk;", s->idx, s->idx, ll(s->AMT * s->KRED));
  if (s->VA == 4) {
    L(ind + 3, "const float4 v = ok ? *(HK_GLOBAL const float4 *)(w + at) : make4();");
    L(ind + 3, "ra[(y * %lld + x) * 4 + 0] = v.x, ra[(y * %lld + x) * 4 + 1] = v.y;", ll(s->AKX), ll(s->AKX));
    L(ind + 3, "ra[(y * %lld + x) * 4 + 2] = v.z, ra[(y * %lld + x) * 4 + 3] = v.w;", ll(s->AKX), ll(s->AKX));
  } else {
    L(ind + 3, "ra[y * %lld + x] = ok ? w[at] : 0.0f;", ll(s->AKX));
  }
  L(ind + 2, "}");
  L(ind + 1, "}");
  /* B: the im2col gather, threads along the pixels. */
  L(ind + 1, "HK_UNROLL_MMA");
  L(ind + 1, "for (int y = 0; y < %lld; ++y) {", ll(s->BKY));
  L(ind + 2, "const int kk = k0 + bk + y * %lld;", ll(s->BKT));
  L(ind + 2, "const int c = kk / %lld, rs = kk %% %lld;", ll(s->R * s->S), ll(s->R * s->S));
  L(ind + 2, "const int dy = rs / %lld * %lld, dx = rs %% %lld * %lld;", ll(s->S), ll(s->DH), ll(s->S), ll(s->DW));
  L(ind + 2, "const %s koff = (%s)c * %lld + dy * %lld + dx;", s->idx, s->idx, ll(s->H * s->W), ll(s->W));
  L(ind + 2, "const int kok = c < %lld;", ll(s->C));
  L(ind + 2, "HK_UNROLL_MMA");
  L(ind + 2, "for (int x = 0; x < %lld; ++x) {", ll(s->BNX));
  if (s->padded)
    L(ind + 3, "const int ok = kok && (unsigned)(iy0[x] + dy) < %lluu && (unsigned)(ix0[x] + dx) < %lluu;",
      (unsigned long long)s->H, (unsigned long long)s->W);
  else
    L(ind + 3, "const int ok = kok && pok[x];");
  L(ind + 3, "rb[y * %lld + x] = ok ? in[pb[x] + koff] : 0.0f;", ll(s->BNX));
  L(ind + 2, "}");
  L(ind + 1, "}");
  L(ind, "}");
}

/* The registers of a step into stage `stage` (a C expression), as TF32. */
static void emit_stores(cu_emit_t *e, const igemm_shape_t *s, int ind, const char *stage) {
  L(ind, "{");
  L(ind + 1, "const int sa_w = (%s) * %lld, sb_w = (%s) * %lld;", stage, ll(s->ASZ), stage, ll(s->BSZ));
  L(ind + 1, "HK_UNROLL_MMA");
  L(ind + 1, "for (int y = 0; y < %lld; ++y)", ll(s->AMY));
  L(ind + 2, "HK_UNROLL_MMA");
  L(ind + 2, "for (int x = 0; x < %lld; ++x) {", ll(s->AKX));
  L(ind + 3, "const int m = am + y * %lld, k = (ak + x * %lld) * %lld;", ll(s->AMT), ll(s->AKT), ll(s->VA));
  if (s->BM % s->AMT != 0 || (s->BK / s->VA) % s->AKT != 0)
    L(ind + 3, "if (m < %lld && k < %lld)", ll(s->BM), ll(s->BK));
  if (s->VA == 4) {
    L(ind + 3, "{");
    L(ind + 4, "HK_UNROLL_MMA");
    L(ind + 4, "for (int v = 0; v < 4; ++v)");
    L(ind + 5, "sa[sa_w + m * %lld + k + (v ^ (m & 3))] = hk_tf32(ra[(y * %lld + x) * 4 + v]);", ll(s->LDA),
      ll(s->AKX));
    L(ind + 3, "}");
  } else {
    L(ind + 3, "sa[sa_w + m * %lld + (k ^ (m & 3))] = hk_tf32(ra[y * %lld + x]);", ll(s->LDA), ll(s->AKX));
  }
  L(ind + 2, "}");
  L(ind + 1, "HK_UNROLL_MMA");
  L(ind + 1, "for (int y = 0; y < %lld; ++y)", ll(s->BKY));
  L(ind + 2, "HK_UNROLL_MMA");
  L(ind + 2, "for (int x = 0; x < %lld; ++x) {", ll(s->BNX));
  L(ind + 3, "const int k = bk + y * %lld, n = bn + x * %lld;", ll(s->BKT), ll(s->BNT));
  if (s->BK % s->BKT != 0 || s->BN % s->BNT != 0)
    L(ind + 3, "if (k < %lld && n < %lld)", ll(s->BK), ll(s->BN));
  L(ind + 3, "sb[sb_w + k * %lld + n] = hk_tf32(rb[y * %lld + x]);", ll(s->LDB), ll(s->BNX));
  L(ind + 2, "}");
  L(ind, "}");
}

/* The mma steps of one stage (`stage` a C expression). */
static void emit_math(cu_emit_t *e, const igemm_shape_t *s, int ind, const char *stage) {
  L(ind, "{");
  L(ind + 1, "const int sa_r = (%s) * %lld + (wm * %lld + g) * %lld + (t ^ (g & 3));", stage, ll(s->ASZ), ll(s->TM),
    ll(s->LDA));
  L(ind + 1, "const int sb_r = (%s) * %lld + t * %lld + wn * %lld + g;", stage, ll(s->BSZ), ll(s->LDB), ll(s->TN));
  L(ind + 1, "HK_UNROLL_MMA");
  L(ind + 1, "for (int ks = 0; ks < %lld; ks += 8) {", ll(s->BK));
  L(ind + 2, "unsigned fa[%lld][4], fb[%lld][2];", ll(s->MT), ll(s->NT));
  L(ind + 2, "HK_UNROLL_MMA");
  L(ind + 2, "for (int i = 0; i < %lld; ++i) {", ll(s->MT));
  L(ind + 3, "const int p = sa_r + i * %lld + ks;", ll(16 * s->LDA));
  L(ind + 3, "fa[i][0] = sa[p];");
  L(ind + 3, "fa[i][1] = sa[p + %lld];", ll(8 * s->LDA));
  L(ind + 3, "fa[i][2] = sa[p + 4];");
  L(ind + 3, "fa[i][3] = sa[p + %lld];", ll(8 * s->LDA + 4));
  L(ind + 2, "}");
  L(ind + 2, "HK_UNROLL_MMA");
  L(ind + 2, "for (int j = 0; j < %lld; ++j) {", ll(s->NT));
  L(ind + 3, "const int p = sb_r + ks * %lld + j * 8;", ll(s->LDB));
  L(ind + 3, "fb[j][0] = sb[p];");
  L(ind + 3, "fb[j][1] = sb[p + %lld];", ll(4 * s->LDB));
  L(ind + 2, "}");
  L(ind + 2, "HK_UNROLL_MMA");
  L(ind + 2, "for (int i = 0; i < %lld; ++i)", ll(s->MT));
  L(ind + 3, "HK_UNROLL_MMA");
  L(ind + 3, "for (int j = 0; j < %lld; ++j)", ll(s->NT));
  L(ind + 4, "HK_MMA_TF32(acc + (i * %lld + j) * 4, fa[i], fb[j], mma_s);", ll(s->NT));
  L(ind + 1, "}");
  L(ind, "}");
}

hetc_plugin_status_t cu_emit_conv_igemm_tc(cu_emit_t *e) {
  const hetc_plugin_workload_t *wl = e->wl;
  const igemm_shape_t s = igemm_shape(wl, &e->cfg);
  cu_demand_t demand = {{1, 1, 1}, 0, 0, {0}};
  cu_demand_igemm_tc(&e->cfg, &demand);
  if (demand.reason[0])
    return cu_status(HETC_PLUGIN_STATUS_INVALID_ARGUMENT, "%s: %s", cu_plugin_name, demand.reason);
  const int64_t PQ = s.P * s.Q, CHW = s.C * s.H * s.W;

  e->num_inputs = wl->num_inputs;
  for (int32_t i = 0; i < wl->num_inputs; ++i) e->input_layouts[i] = hetc_kit_layout_row_major();
  e->output_layout = hetc_kit_layout_row_major();
  e->num_params = wl->epilogue.has_bias ? 2 : 1;
  e->param_bytes[0] = (uint64_t)(s.K * s.KRED) * 4;
  e->param_bytes[1] = (uint64_t)s.K * 4;

  cu_emit_preamble(e, wl->epilogue.activation);
  if (s.VA == 4)
    hpc_strbuf_printf(&e->src, "HK_FN float4 make4(void) { float4 v; v.x = v.y = v.z = v.w = 0.0f; return v; }\n\n");
  cu_launch_t *launch = cu_emit_launch(e, "conv2d_igemm_tf32");
  hpc_strbuf_t params;
  hpc_strbuf_init(&params);
  cu_emit_conv_params(e, launch, &params);
  L(0, "HK_KERNEL(%lld, 1, 1) conv2d_igemm_tf32(%s) {", ll(s.T), params.data ? params.data : "");
  hpc_strbuf_free(&params);
  L(1, "HK_SHARED unsigned sa[%lld];", ll(s.STAGES * s.ASZ));
  L(1, "HK_SHARED unsigned sb[%lld];", ll(s.STAGES * s.BSZ));
  L(1, "HK_MMA_SCRATCH(mma_s, %lld);", ll(s.WM * s.WN));
  L(1, "const int tid = HK_TX, lane = HK_LANE, warp = HK_WARP;");
  L(1, "const int g = lane >> 2, t = lane & 3;");
  L(1, "const int wm = warp / %lld, wn = warp %% %lld;", ll(s.WN), ll(s.WN));
  L(1, "const int n0 = HK_BX * %lld, m0 = HK_BY * %lld;", ll(s.BN), ll(s.BM));
  /* The A stage's threads: ak along Kred (in loads of VA), am along M. */
  L(1, "const int ak = tid %% %lld, am = tid / %lld;", ll(s.AKT), ll(s.AKT));
  L(1, "const %s a_off = (%s)(m0 + am) * %lld;", s.idx, s.idx, ll(s.KRED));
  L(1, "int am_ok[%lld];", ll(s.AMY));
  L(1, "HK_UNROLL_MMA");
  L(1, "for (int y = 0; y < %lld; ++y) am_ok[y] = m0 + am + y * %lld < %lld && am + y * %lld < %lld;", ll(s.AMY),
    ll(s.AMT), ll(s.M), ll(s.AMT), ll(s.BM));
  /* The B stage's threads: bn along the pixels, bk along Kred. Each of a
   * thread's pixels: the offset of its window's origin, once. With padding,
   * the origin's row and column for the bounds check (a pixel past the
   * tensor gets a row no window reaches); without, a flag. */
  L(1, "const int bn = tid %% %lld, bk = tid / %lld;", ll(s.BNT), ll(s.BNT));
  L(1, "%s pb[%lld];", s.idx, ll(s.BNX));
  if (s.padded)
    L(1, "int iy0[%lld], ix0[%lld];", ll(s.BNX), ll(s.BNX));
  else
    L(1, "int pok[%lld];", ll(s.BNX));
  L(1, "HK_UNROLL_MMA");
  L(1, "for (int x = 0; x < %lld; ++x) {", ll(s.BNX));
  L(2, "const int nn = bn + x * %lld, pix = n0 + nn;", ll(s.BNT));
  L(2, "const int ok = pix < %lld && nn < %lld;", ll(s.NPIX), ll(s.BN));
  L(2, "const int img = ok ? pix / %lld : 0, pq = ok ? pix %% %lld : 0;", ll(PQ), ll(PQ));
  L(2, "const int y0 = pq / %lld * %lld - %lld, x0 = pq %% %lld * %lld - %lld;", ll(s.Q), ll(s.SH), ll(s.PT), ll(s.Q),
    ll(s.SW), ll(s.PL));
  L(2, "pb[x] = (%s)img * %lld + y0 * %lld + x0;", s.idx, ll(CHW), ll(s.W));
  if (s.padded) {
    L(2, "iy0[x] = ok ? y0 : -0x40000000;");
    L(2, "ix0[x] = x0;");
  } else {
    L(2, "pok[x] = ok;");
  }
  L(1, "}");
  L(1, "float acc[%lld];", ll(s.MT * s.NT * 4));
  L(1, "HK_UNROLL_MMA");
  L(1, "for (int i = 0; i < %lld; ++i) acc[i] = 0.0f;", ll(s.MT * s.NT * 4));
  L(1, "float ra[%lld], rb[%lld];", ll(s.AMY * s.AKX * s.VA), ll(s.BKY * s.BNX));
  emit_loads(e, &s, 1, "0");
  emit_stores(e, &s, 1, "0");
  L(1, "HK_BARRIER();");
  L(1, "for (int kt = 0; kt < %lld; ++kt) {", ll(s.KT));
  L(2, "const int more = kt + 1 < %lld;", ll(s.KT));
  L(2, "if (more)");
  emit_loads(e, &s, 3, "kt + 1");
  if (s.STAGES == 2) {
    emit_math(e, &s, 2, "(kt & 1)");
    L(2, "if (more)");
    emit_stores(e, &s, 3, "((kt + 1) & 1)");
  } else {
    emit_math(e, &s, 2, "0");
    L(2, "HK_BARRIER();");
    L(2, "if (more)");
    emit_stores(e, &s, 3, "0");
  }
  L(2, "HK_BARRIER();");
  L(1, "}");
  /* The epilogue, from the accumulator fragments: c[2h + v] is row g + 8h,
   * column 2t + v of the mma tile. */
  L(1, "HK_UNROLL_MMA");
  L(1, "for (int j = 0; j < %lld; ++j)", ll(s.NT));
  L(2, "HK_UNROLL_MMA");
  L(2, "for (int v = 0; v < 2; ++v) {");
  L(3, "const int pix = n0 + wn * %lld + j * 8 + 2 * t + v;", ll(s.TN));
  L(3, "if (pix < %lld) {", ll(s.NPIX));
  L(4, "const %s base = (%s)(pix / %lld) * %lld + pix %% %lld;", s.idx, s.idx, ll(PQ), ll(s.K * PQ), ll(PQ));
  L(4, "HK_UNROLL_MMA");
  L(4, "for (int i = 0; i < %lld; ++i)", ll(s.MT));
  L(5, "HK_UNROLL_MMA");
  L(5, "for (int h = 0; h < 2; ++h) {");
  L(6, "const int ch = m0 + wm * %lld + i * 16 + h * 8 + g;", ll(s.TM));
  L(6, "if (ch < %lld) {", ll(s.M));
  L(7, "const %s o = base + (%s)ch * %lld;", s.idx, s.idx, ll(PQ));
  char value[64];
  snprintf(value, sizeof(value), "acc[(i * %lld + j) * 4 + h * 2 + v]", ll(s.NT));
  hpc_strbuf_printf(&e->src, "              ");
  cu_emit_epilogue_store(e, "out", "o", "ch", value);
  L(6, "}");
  L(5, "}");
  L(3, "}");
  L(2, "}");
  L(0, "}");
  launch->block[0] = (uint32_t)s.T, launch->block[1] = 1, launch->block[2] = 1;
  launch->grid[0] = (uint32_t)hetc_kit_ceil_div(s.NPIX, s.BN);
  launch->grid[1] = (uint32_t)hetc_kit_ceil_div(s.M, s.BM);
  launch->grid[2] = 1;
  return NULL;
}
