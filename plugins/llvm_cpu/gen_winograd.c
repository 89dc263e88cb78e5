/* cpu_conv2d_winograd: Winograd F(m x m, 3 x 3) for stride 1, dilation 1.
 *
 * Weights are transformed at compile time (pack.c: U = G g GT, one GEMM B
 * panel per transformed position and output-channel block). A parallel
 * iteration owns reg_n output tiles of one image: it transforms their
 * (m + 2)^2 input patches (V = BT d B, eight input channels per vector) into
 * a stack buffer laid out as alpha^2 GEMM A panels [tile][channel], runs the
 * micro-kernel once per transformed position and output-channel block, and
 * transforms the products back (Y = AT M A) through the fused epilogue. */
#include "gen_conv.h"

#define WINO_MAX_ALPHA 6

/* sum_j coef[j * stride] * vals[j] over nonzero coefficients. */
static LLVMValueRef lincomb(irb_t *r, const double *coef, int64_t stride, LLVMValueRef *vals,
                            int64_t n) {
  LLVMValueRef sum = NULL;
  for (int64_t j = 0; j < n; ++j) {
    const double k = coef[j * stride];
    if (k == 0) continue;
    LLVMValueRef v = vals[j];
    if (!sum) {
      sum = k == 1 ? v : FMUL(v, irb_v8(r, k));
    } else if (k == 1) {
      sum = FADD(sum, v);
    } else if (k == -1) {
      sum = LLVMBuildFSub(r->b, sum, v, "");
    } else {
      sum = irb_fma(r, v, irb_v8(r, k), sum);
    }
  }
  return sum ? sum : irb_v8(r, 0);
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

void cpu_gen_winograd(const cpu_gen_t *g, irb_t *r) {
  cpu_conv_t c;
  cpu_conv_init(&c, g, r);
  const cpu_winograd_t *w = cpu_winograd(g->cfg.tile_m);
  const int64_t M = w->m, A = w->alpha, A2 = A * A;
  const int64_t T = g->cfg.reg_n, OCBN = c.OCBN, CP = c.ICB * c.ICBN;
  const int64_t TW = hpc_ceil_div(c.OW, M), NTILE = cpu_winograd_tiles(g->wl, M);
  const int64_t NB = hpc_ceil_div(NTILE, T);
  LLVMValueRef vbuf = irb_alloca_array(r, r->f32, A2 * T * CP);
  LLVMValueRef mbuf = irb_alloca_array(r, r->f32, A2 * T * OCBN);
  cpu_micro_t m = {.a = vbuf, .a_row = CP, .a_col = 1, .b = c.w, .b_row = OCBN,
                   .kc = C64(CP), .mr = T, .nv = OCBN / 8};
  cpu_micro_alloc(r, &m);

  irb_loop_t lo, li, licb, lg, locb, lxi, lt;
  LLVMValueRef o = irb_for(r, &lo, r->begin, r->end, 1);
  LLVMValueRef t = o, ocb = NULL;
  if (g->cfg.parallel) {
    ocb = REM(o, C64(c.OCB));
    t = DIV(o, C64(c.OCB));
  }
  LLVMValueRef n = DIV(t, C64(NB)), tile0 = MUL(REM(t, C64(NB)), C64(T));

  /* Input transform; tiles past the end repeat the last (never stored). */
  LLVMValueRef i = irb_for(r, &li, C64(0), C64(T), 1);
  LLVMValueRef ti = irb_smin(r, ADD(tile0, i), C64(NTILE - 1));
  LLVMValueRef ih0 = SUB(MUL(DIV(ti, C64(TW)), C64(M)), C64(c.PT));
  LLVMValueRef iw0 = SUB(MUL(REM(ti, C64(TW)), C64(M)), C64(c.PL));
  LLVMValueRef icb = irb_for(r, &licb, C64(0), C64(c.ICB), 1);
  LLVMValueRef lane0 = irb_for(r, &lg, C64(0), C64(c.ICBN), 8);
  LLVMValueRef plane = MUL(ADD(MUL(n, C64(c.ICB)), icb), C64(c.H));
  LLVMValueRef d[WINO_MAX_ALPHA][WINO_MAX_ALPHA], v[WINO_MAX_ALPHA][WINO_MAX_ALPHA];
  for (int64_t y = 0; y < A; ++y) {
    LLVMValueRef ih = ADD(ih0, C64(y));
    for (int64_t x = 0; x < A; ++x) {
      LLVMValueRef iw = ADD(iw0, C64(x));
      LLVMValueRef ok = AND(cpu_in_range(r, ih, c.H), cpu_in_range(r, iw, c.W));
      LLVMValueRef idx = ADD(MUL(ADD(MUL(ADD(plane, ih), C64(c.W)), iw), C64(c.ICBN)), lane0);
      d[y][x] = SEL(ok, irb_ldv(r, c.x, SEL(ok, idx, C64(0))), irb_v8(r, 0));
    }
  }
  transform(r, w->bt, A, A, d, v);
  LLVMValueRef vcol = ADD(MUL(icb, C64(c.ICBN)), lane0);
  for (int64_t y = 0; y < A; ++y)
    for (int64_t x = 0; x < A; ++x)
      irb_stv(r, v[y][x], vbuf, ADD(MUL(ADD(C64((y * A + x) * T), i), C64(CP)), vcol));
  irb_endfor(r, &lg);
  irb_endfor(r, &licb);
  irb_endfor(r, &li);

  /* One GEMM per transformed position, into mbuf[xi][tile][OCBN]. */
  if (!g->cfg.parallel) ocb = irb_for(r, &locb, C64(0), C64(c.OCB), 1);
  LLVMValueRef xi = irb_for(r, &lxi, C64(0), C64(A2), 1);
  m.a_off = MUL(xi, C64(T * CP));
  m.b_off = MUL(ADD(MUL(xi, C64(c.OCB)), ocb), C64(CP * OCBN));
  cpu_micro_zero(r, &m);
  cpu_micro_kernel(r, &m);
  for (int64_t k = 0; k < T; ++k)
    for (int64_t vv = 0; vv < m.nv; ++vv)
      irb_stv(r, irb_load(r, r->v8, m.acc[k * m.nv + vv]), mbuf,
              ADD(MUL(xi, C64(T * OCBN)), C64(k * OCBN + vv * 8)));
  irb_endfor(r, &lxi);

  /* Output transform and epilogue. */
  LLVMValueRef k = irb_for(r, &lt, C64(0), C64(T), 1);
  LLVMValueRef tk = ADD(tile0, k);
  irb_if_t ftile;
  irb_if(r, &ftile, LT(tk, C64(NTILE)));
  LLVMValueRef oh0 = MUL(DIV(tk, C64(TW)), C64(M)), ow0 = MUL(REM(tk, C64(TW)), C64(M));
  LLVMValueRef oplane = MUL(ADD(MUL(n, C64(c.OCB)), ocb), C64(c.OH));
  const int ragged = c.OH % M != 0 || c.OW % M != 0;
  for (int64_t vv = 0; vv < m.nv; ++vv) {
    LLVMValueRef mm[WINO_MAX_ALPHA][WINO_MAX_ALPHA], y[WINO_MAX_ALPHA][WINO_MAX_ALPHA];
    for (int64_t a = 0; a < A; ++a)
      for (int64_t b = 0; b < A; ++b)
        mm[a][b] = irb_ldv(r, mbuf, ADD(MUL(k, C64(OCBN)), C64((a * A + b) * T * OCBN + vv * 8)));
    transform(r, w->at, M, A, mm, y);
    LLVMValueRef c0 = ADD(MUL(ocb, C64(OCBN)), C64(vv * 8));
    for (int64_t a = 0; a < M; ++a)
      for (int64_t b = 0; b < M; ++b) {
        LLVMValueRef oh = ADD(oh0, C64(a)), ow = ADD(ow0, C64(b));
        irb_if_t fin;
        if (ragged) irb_if(r, &fin, AND(LT(oh, C64(c.OH)), LT(ow, C64(c.OW))));
        LLVMValueRef oidx = MUL(ADD(MUL(ADD(oplane, oh), C64(c.OW)), ow), C64(OCBN));
        cpu_conv_epilogue_v8(r, &c, y[a][b], c0, ADD(oidx, C64(vv * 8)));
        if (ragged) irb_endif(r, &fin);
      }
  }
  irb_endif(r, &ftile);
  irb_endfor(r, &lt);
  if (!g->cfg.parallel) irb_endfor(r, &locb);
  irb_endfor(r, &lo);
}
