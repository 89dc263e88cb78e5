/* cpu_conv2d_im2col: convolution as GEMM on packed im2col panels.
 *
 * The reduction runs over rows (icb, kh, kw) of tile_ic channels -- the
 * order of the NCHWc weight packing, so each output-channel block's weights
 * are one B panel [rows * tile_ic][tile_oc]. A parallel iteration owns
 * tiles x reg_n output pixels (the (oh, ow) plane flattened, so blocks run
 * across row ends) of one image. Per reduction chunk of tile_k elements it
 * packs those pixels' input windows into a stack panel (zeros for padding
 * and for pixels past the end), then runs the micro-kernel over every
 * output-channel block and pixel block; partial sums of earlier chunks are
 * kept in y and the epilogue runs after the last chunk. */
#include "gen_conv.h"

/* Packs rows [r0, r0 + rows) of the windows of pixels p0 .. p0 + count - 1
 * into panel[q][rr * ICBN + ic] (row stride kc_max). */
static void pack_panel(irb_t *r, const cpu_conv_t *c, LLVMValueRef panel, int64_t kc_max,
                       LLVMValueRef n, LLVMValueRef p0, int64_t count, LLVMValueRef r0,
                       LLVMValueRef rows) {
  const int64_t P = c->OH * c->OW, KHW = c->KH * c->KW, ICBN = c->ICBN;
  irb_loop_t lq, lr;
  LLVMValueRef q = irb_for(r, &lq, C64(0), C64(count), 1);
  LLVMValueRef p = ADD(p0, q);
  LLVMValueRef pok = LT(p, C64(P));
  LLVMValueRef pc = SEL(pok, p, C64(0));
  LLVMValueRef ihb = SUB(MUL(DIV(pc, C64(c->OW)), C64(c->SH)), C64(c->PT));
  LLVMValueRef iwb = SUB(MUL(REM(pc, C64(c->OW)), C64(c->SW)), C64(c->PL));
  LLVMValueRef rr = irb_for(r, &lr, C64(0), rows, 1);
  LLVMValueRef row = ADD(r0, rr);
  LLVMValueRef icb = DIV(row, C64(KHW)), kk = REM(row, C64(KHW));
  LLVMValueRef ih = ADD(ihb, MUL(DIV(kk, C64(c->KW)), C64(c->DH)));
  LLVMValueRef iw = ADD(iwb, MUL(REM(kk, C64(c->KW)), C64(c->DW)));
  LLVMValueRef ok = AND(pok, AND(cpu_in_range(r, ih, c->H), cpu_in_range(r, iw, c->W)));
  LLVMValueRef src =
      MUL(ADD(MUL(ADD(MUL(ADD(MUL(n, C64(c->ICB)), icb), C64(c->H)), ih), C64(c->W)), iw),
          C64(ICBN));
  src = SEL(ok, src, C64(0));
  LLVMValueRef dst = ADD(MUL(q, C64(kc_max)), MUL(rr, C64(ICBN)));
  /* Whole vectors of the kernel's width, then of 8 lanes, then scalars. */
  const int64_t kernel_lanes = r->lanes;
  int64_t ic = 0;
  for (int64_t lanes = kernel_lanes; lanes >= 8; lanes /= 2) {
    irb_set_lanes(r, lanes);
    for (; ic + lanes <= ICBN; ic += lanes)
      irb_stv(r, SEL(ok, irb_ldv(r, c->x, ADD(src, C64(ic))), irb_vconst(r, 0)), panel,
              ADD(dst, C64(ic)));
  }
  irb_set_lanes(r, kernel_lanes);
  for (; ic < ICBN; ++ic)
    irb_st(r, SEL(ok, irb_ld(r, c->x, ADD(src, C64(ic))), CF(0)), panel, ADD(dst, C64(ic)));
  irb_endfor(r, &lr);
  irb_endfor(r, &lq);
}

/* y offset of pixel pt0 + i, vector v; pixels past P are clamped to the
 * last (their accumulators are never stored). */
static LLVMValueRef out_index(irb_t *r, LLVMValueRef orow, LLVMValueRef pt0, int64_t i,
                              int64_t v, int64_t P, int64_t OCBN) {
  LLVMValueRef p = irb_smin(r, ADD(pt0, C64(i)), C64(P - 1));
  return ADD(MUL(ADD(orow, p), C64(OCBN)), C64(v * r->lanes));
}

void cpu_gen_im2col(const cpu_gen_t *g, irb_t *r) {
  cpu_conv_t c;
  cpu_conv_init(&c, g, r);
  const int64_t MR = g->cfg.reg_n, NT = g->cfg.tiles, OCBN = c.OCBN;
  const int64_t P = c.OH * c.OW, PB = MR * NT, NPB = hetc_kit_ceil_div(P, PB);
  const int64_t RT = c.ICB * c.KH * c.KW;
  const int64_t TR = cpu_im2col_chunk_rows(g->wl, &g->cfg);
  const int64_t KC_MAX = TR * c.ICBN;
  const int chunked = TR < RT;
  LLVMValueRef panel = irb_alloca_array(r, r->f32, PB * KC_MAX);
  irb_set_lanes(r, cpu_isa_block_lanes(g->isa, OCBN));
  cpu_micro_t m = {.a = panel, .a_row = KC_MAX, .a_col = 1, .b = c.w, .b_row = OCBN, .mr = MR,
                   .nv = OCBN / r->lanes};
  cpu_micro_alloc(r, &m);

  irb_loop_t lo, lchunk, locb, lt;
  LLVMValueRef o = irb_for(r, &lo, r->begin, r->end, 1);
  LLVMValueRef t = o, ocb = NULL;
  if (g->cfg.parallel) {
    ocb = REM(o, C64(c.OCB));
    t = DIV(o, C64(c.OCB));
  }
  LLVMValueRef n = DIV(t, C64(NPB)), p0 = MUL(REM(t, C64(NPB)), C64(PB));
  LLVMValueRef r0 = irb_for(r, &lchunk, C64(0), C64(RT), TR);
  LLVMValueRef rows = irb_smin(r, C64(TR), SUB(C64(RT), r0));
  m.kc = MUL(rows, C64(c.ICBN));
  pack_panel(r, &c, panel, KC_MAX, n, p0, PB, r0, rows);
  if (!g->cfg.parallel) ocb = irb_for(r, &locb, C64(0), C64(c.OCB), 1);
  LLVMValueRef tt = irb_for(r, &lt, C64(0), C64(NT), 1);
  LLVMValueRef pt0 = ADD(p0, MUL(tt, C64(MR)));
  irb_if_t fany;
  irb_if(r, &fany, LT(pt0, C64(P)));
  m.a_off = MUL(tt, C64(MR * KC_MAX));
  m.b_off = MUL(ADD(MUL(ocb, C64(RT)), r0), C64(c.ICBN * OCBN));
  LLVMValueRef orow = MUL(ADD(MUL(n, C64(c.OCB)), ocb), C64(P));
  irb_if_t ffirst;
  if (chunked) {
    irb_if(r, &ffirst, LLVMBuildICmp(r->b, LLVMIntEQ, r0, C64(0), ""));
    cpu_micro_zero(r, &m);
    irb_else(r, &ffirst);
    for (int64_t i = 0; i < MR; ++i)
      for (int64_t v = 0; v < m.nv; ++v)
        irb_store(r, irb_ldv(r, c.y, out_index(r, orow, pt0, i, v, P, OCBN)), m.acc[i * m.nv + v]);
    irb_endif(r, &ffirst);
  } else {
    cpu_micro_zero(r, &m);
  }
  cpu_micro_kernel(r, &m);
  irb_if_t flast;
  if (chunked) irb_if(r, &flast, GE(ADD(r0, C64(TR)), C64(RT)));
  for (int pass = 0; pass < 1 + chunked; ++pass) {
    if (pass == 1) irb_else(r, &flast);
    for (int64_t i = 0; i < MR; ++i) {
      irb_if_t fp;
      if (P % MR != 0 || PB * NPB != P) irb_if(r, &fp, LT(ADD(pt0, C64(i)), C64(P)));
      for (int64_t v = 0; v < m.nv; ++v) {
        LLVMValueRef acc = irb_load(r, r->vec, m.acc[i * m.nv + v]);
        LLVMValueRef oidx = out_index(r, orow, pt0, i, v, P, OCBN);
        if (pass == 0)
          cpu_conv_epilogue(r, &c, acc, ADD(MUL(ocb, C64(OCBN)), C64(v * r->lanes)), oidx);
        else
          irb_stv(r, acc, c.y, oidx);
      }
      if (P % MR != 0 || PB * NPB != P) irb_endif(r, &fp);
    }
  }
  if (chunked) irb_endif(r, &flast);
  irb_endif(r, &fany);
  irb_endfor(r, &lt);
  if (!g->cfg.parallel) irb_endfor(r, &locb);
  irb_endfor(r, &lchunk);
  irb_endfor(r, &lo);
}
