/* cpu_conv2d_winograd (version 2): Winograd F(m x m, 3 x 3) for stride 1,
 * dilation 1, in two phases.
 *
 * Weights are transformed at compile time (pack.c: U = G g GT, laid out per
 * output-channel block, then per transformed position, a GEMM B panel of
 * input channels x tile_oc).
 *
 * The prologue transforms every input tile once (V = BT d B, 8 or 16 input
 * channels per vector) into the workspace, laid out per image and
 * transformed position as GEMM A panels [tile][channel]; tiles are padded
 * to a multiple of reg_n with zeros. Each main iteration then owns one
 * output-channel block and a chunk of tiles: for each transformed position
 * it runs the micro-kernel over the chunk's tiles, reg_n at a time, with
 * that position's weight panel, and finally transforms the products back
 * (Y = AT M A) through the fused epilogue.
 *
 * Version 1 transformed the input inside every iteration, so each one
 * needed all input channels of its tiles and read every output-channel
 * block's weights: inside a model, where the weights come from memory, the
 * kernel streamed its (alpha/3)^2-times inflated weights several times per
 * run. Now a block's weights are read once from memory and stay in cache
 * across its chunks, and consecutive iterations of a thread share the
 * block (chunks are the innermost index of the parallel axis). */
#include "gen_conv.h"

#define WINO_MAX_ALPHA 6
/* The stack buffer of products one main iteration transforms back. */
#define WINO_PRODUCT_BYTES (64 * 1024)

/* sum_j coef[j * stride] * vals[j] over nonzero coefficients. */
static LLVMValueRef lincomb(irb_t *r, const double *coef, int64_t stride, LLVMValueRef *vals,
                            int64_t n) {
  LLVMValueRef sum = NULL;
  for (int64_t j = 0; j < n; ++j) {
    const double k = coef[j * stride];
    if (k == 0) continue;
    LLVMValueRef v = vals[j];
    if (!sum) {
      sum = k == 1 ? v : FMUL(v, irb_vconst(r, k));
    } else if (k == 1) {
      sum = FADD(sum, v);
    } else if (k == -1) {
      sum = LLVMBuildFSub(r->b, sum, v, "");
    } else {
      sum = irb_fma(r, v, irb_vconst(r, k), sum);
    }
  }
  return sum ? sum : irb_vconst(r, 0);
}

/* out[a][b] = L x in x RT for an (rows_in x rows_in) block of vectors; L is
 * rows_out x rows_in, both row-major. */
static void transform(irb_t *r, const double *l, int64_t rows_out, int64_t rows_in,
                      LLVMValueRef in[WINO_MAX_ALPHA][WINO_MAX_ALPHA],
                      LLVMValueRef out[WINO_MAX_ALPHA][WINO_MAX_ALPHA]) {
  LLVMValueRef tmp[WINO_MAX_ALPHA][WINO_MAX_ALPHA], col[WINO_MAX_ALPHA];
  for (int64_t a = 0; a < rows_out; ++a)
    for (int64_t x = 0; x < rows_in; ++x) {
      for (int64_t j = 0; j < rows_in; ++j) col[j] = in[j][x];
      tmp[a][x] = lincomb(r, l + a * rows_in, 1, col, rows_in);
    }
  for (int64_t a = 0; a < rows_out; ++a)
    for (int64_t b = 0; b < rows_out; ++b) out[a][b] = lincomb(r, l + b * rows_in, 1, tmp[a], rows_in);
}

/* Tiles (padded to a multiple of reg_n) and tiles per main iteration. */
int64_t cpu_winograd_padded_tiles(const hetc_plugin_workload_t *wl, const cpu_config_t *cfg) {
  return hetc_kit_ceil_div(cpu_winograd_tiles(wl, cfg->tile_m), cfg->reg_n) * cfg->reg_n;
}

int64_t cpu_winograd_chunk_tiles(const hetc_plugin_workload_t *wl, const cpu_config_t *cfg) {
  const int64_t alpha = cfg->tile_m + 2, padded = cpu_winograd_padded_tiles(wl, cfg);
  if (cfg->parallel) return cfg->reg_n;
  int64_t chunk = WINO_PRODUCT_BYTES / (alpha * alpha * cfg->tile_oc * 4) / cfg->reg_n * cfg->reg_n;
  if (chunk < cfg->reg_n) chunk = cfg->reg_n;
  return chunk < padded ? chunk : padded;
}

uint64_t cpu_winograd_workspace_bytes(const hetc_plugin_workload_t *wl, const cpu_config_t *cfg) {
  const int64_t alpha = cfg->tile_m + 2;
  const int64_t cp = hetc_kit_ceil_div(wl->inputs[0].shape[1], cfg->tile_ic) * cfg->tile_ic;
  return (uint64_t)(wl->inputs[0].shape[0] * alpha * alpha * cpu_winograd_padded_tiles(wl, cfg) * cp) * 4;
}

typedef struct wino_t {
  cpu_conv_t c;
  const cpu_winograd_t *w;
  int64_t M, A, A2, T, CP, TW, NTILE, NTP, CH, NCH;
  LLVMValueRef ws; /* the workspace: V[n][xi][tile][channel] */
} wino_t;

/* Phase 0: iteration (n, tile) transforms one tile's patch for every input
 * channel, or writes zeros for a padding tile. */
static void input_transform(const cpu_gen_t *g, irb_t *r, const wino_t *q) {
  const cpu_conv_t *c = &q->c;
  irb_set_lanes(r, cpu_isa_block_lanes(g->isa, c->ICBN));
  irb_loop_t lo, licb, lg, lz;
  LLVMValueRef o = irb_for(r, &lo, r->begin, r->end, 1);
  LLVMValueRef n = DIV(o, C64(q->NTP)), ti = REM(o, C64(q->NTP));
  /* V[n][xi][ti][ch] for xi = 0 */
  LLVMValueRef v0 = MUL(ADD(MUL(MUL(n, C64(q->A2)), C64(q->NTP)), ti), C64(q->CP));
  const int64_t xi_stride = q->NTP * q->CP;
  irb_if_t real;
  irb_if(r, &real, LT(ti, C64(q->NTILE)));
  LLVMValueRef ih0 = SUB(MUL(DIV(ti, C64(q->TW)), C64(q->M)), C64(c->PT));
  LLVMValueRef iw0 = SUB(MUL(REM(ti, C64(q->TW)), C64(q->M)), C64(c->PL));
  LLVMValueRef icb = irb_for(r, &licb, C64(0), C64(c->ICB), 1);
  LLVMValueRef lane0 = irb_for(r, &lg, C64(0), C64(c->ICBN), r->lanes);
  LLVMValueRef plane = MUL(ADD(MUL(n, C64(c->ICB)), icb), C64(c->H));
  LLVMValueRef d[WINO_MAX_ALPHA][WINO_MAX_ALPHA], v[WINO_MAX_ALPHA][WINO_MAX_ALPHA];
  for (int64_t y = 0; y < q->A; ++y) {
    LLVMValueRef ih = ADD(ih0, C64(y));
    for (int64_t x = 0; x < q->A; ++x) {
      LLVMValueRef iw = ADD(iw0, C64(x));
      LLVMValueRef ok = AND(cpu_in_range(r, ih, c->H), cpu_in_range(r, iw, c->W));
      LLVMValueRef idx = ADD(MUL(ADD(MUL(ADD(plane, ih), C64(c->W)), iw), C64(c->ICBN)), lane0);
      d[y][x] = SEL(ok, irb_ldv(r, c->x, SEL(ok, idx, C64(0))), irb_vconst(r, 0));
    }
  }
  transform(r, q->w->bt, q->A, q->A, d, v);
  LLVMValueRef ch = ADD(MUL(icb, C64(c->ICBN)), lane0);
  for (int64_t y = 0; y < q->A; ++y)
    for (int64_t x = 0; x < q->A; ++x)
      irb_stv(r, v[y][x], q->ws, ADD(ADD(v0, C64((y * q->A + x) * xi_stride)), ch));
  irb_endfor(r, &lg);
  irb_endfor(r, &licb);
  irb_else(r, &real);
  LLVMValueRef z = irb_for(r, &lz, C64(0), C64(q->CP), r->lanes);
  for (int64_t xi = 0; xi < q->A2; ++xi) irb_stv(r, irb_vconst(r, 0), q->ws, ADD(ADD(v0, C64(xi * xi_stride)), z));
  irb_endfor(r, &lz);
  irb_endif(r, &real);
  irb_endfor(r, &lo);
}

/* Phase 1: iteration (n, ocb, chunk). */
static void multiply_and_output(const cpu_gen_t *g, irb_t *r, const wino_t *q) {
  const cpu_conv_t *c = &q->c;
  const int64_t OCBN = c->OCBN;
  LLVMValueRef mbuf = irb_alloca_array(r, r->f32, q->A2 * q->CH * OCBN); /* [xi][tile][OCBN] */
  irb_set_lanes(r, cpu_isa_block_lanes(g->isa, OCBN));
  const int64_t L = r->lanes;
  cpu_micro_t m = {.a = q->ws, .a_row = q->CP, .a_col = 1, .b = c->w, .b_row = OCBN,
                   .kc = C64(q->CP), .mr = q->T, .nv = OCBN / L};
  cpu_micro_alloc(r, &m);
  irb_loop_t lo, lxi, lb, lt;
  LLVMValueRef o = irb_for(r, &lo, r->begin, r->end, 1);
  LLVMValueRef chunk = REM(o, C64(q->NCH)), t = DIV(o, C64(q->NCH));
  LLVMValueRef ocb = REM(t, C64(c->OCB)), n = DIV(t, C64(c->OCB));
  LLVMValueRef tile0 = MUL(chunk, C64(q->CH));
  LLVMValueRef tiles = irb_smin(r, C64(q->CH), SUB(C64(q->NTP), tile0)); /* a multiple of T */
  LLVMValueRef xi = irb_for(r, &lxi, C64(0), C64(q->A2), 1);
  LLVMValueRef a_xi = MUL(ADD(MUL(MUL(n, C64(q->A2)), C64(q->NTP)), MUL(xi, C64(q->NTP))), C64(q->CP));
  m.b_off = MUL(ADD(MUL(ocb, C64(q->A2)), xi), C64(q->CP * OCBN));
  LLVMValueRef b = irb_for(r, &lb, C64(0), tiles, q->T);
  m.a_off = ADD(a_xi, MUL(ADD(tile0, b), C64(q->CP)));
  cpu_micro_zero(r, &m);
  cpu_micro_kernel(r, &m);
  LLVMValueRef row0 = MUL(ADD(MUL(xi, C64(q->CH)), b), C64(OCBN));
  for (int64_t k = 0; k < q->T; ++k)
    for (int64_t vv = 0; vv < m.nv; ++vv)
      irb_stv(r, irb_load(r, r->vec, m.acc[k * m.nv + vv]), mbuf, ADD(row0, C64(k * OCBN + vv * L)));
  irb_endfor(r, &lb);
  irb_endfor(r, &lxi);

  /* Output transform and epilogue of the chunk's real tiles. */
  LLVMValueRef k = irb_for(r, &lt, C64(0), tiles, 1);
  LLVMValueRef tk = ADD(tile0, k);
  irb_if_t ftile;
  irb_if(r, &ftile, LT(tk, C64(q->NTILE)));
  LLVMValueRef oh0 = MUL(DIV(tk, C64(q->TW)), C64(q->M)), ow0 = MUL(REM(tk, C64(q->TW)), C64(q->M));
  LLVMValueRef oplane = MUL(ADD(MUL(n, C64(c->OCB)), ocb), C64(c->OH));
  const int ragged = c->OH % q->M != 0 || c->OW % q->M != 0;
  for (int64_t vv = 0; vv < m.nv; ++vv) {
    LLVMValueRef mm[WINO_MAX_ALPHA][WINO_MAX_ALPHA], y[WINO_MAX_ALPHA][WINO_MAX_ALPHA];
    for (int64_t a = 0; a < q->A; ++a)
      for (int64_t bb = 0; bb < q->A; ++bb)
        mm[a][bb] = irb_ldv(r, mbuf, ADD(MUL(k, C64(OCBN)), C64((a * q->A + bb) * q->CH * OCBN + vv * L)));
    transform(r, q->w->at, q->M, q->A, mm, y);
    LLVMValueRef c0 = ADD(MUL(ocb, C64(OCBN)), C64(vv * L));
    for (int64_t a = 0; a < q->M; ++a)
      for (int64_t bb = 0; bb < q->M; ++bb) {
        LLVMValueRef oh = ADD(oh0, C64(a)), ow = ADD(ow0, C64(bb));
        irb_if_t fin;
        if (ragged) irb_if(r, &fin, AND(LT(oh, C64(c->OH)), LT(ow, C64(c->OW))));
        LLVMValueRef oidx = MUL(ADD(MUL(ADD(oplane, oh), C64(c->OW)), ow), C64(OCBN));
        cpu_conv_epilogue(r, c, y[a][bb], c0, ADD(oidx, C64(vv * L)));
        if (ragged) irb_endif(r, &fin);
      }
  }
  irb_endif(r, &ftile);
  irb_endfor(r, &lt);
  irb_endfor(r, &lo);
}

void cpu_winograd_boundary(cpu_gen_t *g) {
  const hetc_plugin_workload_t *wl = g->wl;
  const int64_t N = wl->inputs[0].shape[0], K = wl->output.shape[1];
  const int64_t padded = cpu_winograd_padded_tiles(wl, &g->cfg);
  g->prologue_outer = N * padded;
  g->prologue_grain = 1;
  g->outer = N * hetc_kit_ceil_div(K, g->cfg.tile_oc) *
             hetc_kit_ceil_div(padded, cpu_winograd_chunk_tiles(wl, &g->cfg));
  g->grain = 1;
  g->workspace_bytes = cpu_winograd_workspace_bytes(wl, &g->cfg);
}

void cpu_gen_winograd(const cpu_gen_t *g, irb_t *r) {
  wino_t q;
  cpu_conv_init(&q.c, g, r);
  const hetc_plugin_workload_t *wl = g->wl;
  q.w = cpu_winograd(g->cfg.tile_m);
  q.M = q.w->m;
  q.A = q.w->alpha;
  q.A2 = q.A * q.A;
  q.T = g->cfg.reg_n;
  q.CP = q.c.ICB * q.c.ICBN;
  q.TW = hetc_kit_ceil_div(q.c.OW, q.M);
  q.NTILE = cpu_winograd_tiles(wl, q.M);
  q.NTP = cpu_winograd_padded_tiles(wl, &g->cfg);
  q.CH = cpu_winograd_chunk_tiles(wl, &g->cfg);
  q.NCH = hetc_kit_ceil_div(q.NTP, q.CH);
  /* The workspace follows the output: inputs (x, residual), params
   * (weights, bias), output. */
  q.ws = irb_arg(r, 3 + wl->epilogue.has_residual + wl->epilogue.has_bias);
  irb_if_t phase;
  irb_if(r, &phase, LLVMBuildICmp(r->b, LLVMIntEQ, r->phase, C64(CPU_PHASE_PROLOGUE), ""));
  input_transform(g, r, &q);
  irb_else(r, &phase);
  multiply_and_output(g, r, &q);
  irb_endif(r, &phase);
}
