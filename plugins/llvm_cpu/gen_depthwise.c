/* cpu_depthwise_nchwc (version 2): groups == C == K on NCHW[b]c, one output
 * row of one channel block per parallel iteration. The row's interior
 * pixels (whose windows lie inside the input columns) go in blocks of
 * DW_PIXELS, each with b/L vector accumulators per pixel (L lanes: 16
 * where the ISA has them and b is a multiple of 16, else 8): per kernel tap
 * the block loads the tap's weight vectors once and FMAs them with each
 * pixel's input vectors, the taps unrolled without bounds tests; the
 * window's rows inside the input are a range per row. Border pixels clip
 * their columns at run time. Version 1 tested both bounds of every tap of
 * every pixel and loaded the weights per pixel. */
#include "gen_conv.h"

/* Pixels per register block: with b = 16 in two 8-lane vectors, 4 pixels
 * keep 8 accumulators, 2 weight vectors and an input vector in 16 ymm
 * registers. */
#define DW_PIXELS 4
#define DW_MAX_VECTORS 8

typedef struct dw_t {
  cpu_conv_t c;
  int64_t B, V, CB;
  LLVMValueRef plane;   /* the input channel block's first pixel: (n * CB + cb) * H * W */
  LLVMValueRef wbase;   /* the block's weights: cb * KH * KW * B */
  LLVMValueRef out_row; /* the output row's first element */
  LLVMValueRef c0;      /* the channel of lane 0 of the block */
  LLVMValueRef acc[DW_PIXELS * DW_MAX_VECTORS];
} dw_t;

/* `pixels` output columns from `ow0` (a value), window columns
 * [kw_lo, kw_hi) (values; NULL: all KW, unrolled), rows [kh_lo, kh_hi). */
static void dw_block(irb_t *r, const dw_t *q, LLVMValueRef ow0, int64_t pixels, LLVMValueRef h0,
                     LLVMValueRef kh_lo, LLVMValueRef kh_hi, LLVMValueRef kw_lo, LLVMValueRef kw_hi) {
  const cpu_conv_t *c = &q->c;
  for (int64_t i = 0; i < pixels * q->V; ++i) irb_store(r, irb_vconst(r, 0), q->acc[i]);
  irb_loop_t lkh, lkw;
  LLVMValueRef kh = irb_for(r, &lkh, kh_lo, kh_hi, 1);
  LLVMValueRef row = ADD(q->plane, MUL(ADD(h0, MUL(kh, C64(c->DH))), C64(c->W)));
  LLVMValueRef wrow = ADD(q->wbase, MUL(kh, C64(c->KW * q->B)));
  const int unrolled = kw_lo == NULL;
  const int64_t taps = unrolled ? c->KW : 1;
  for (int64_t t = 0; t < taps; ++t) {
    LLVMValueRef kw = unrolled ? C64(t) : irb_for(r, &lkw, kw_lo, kw_hi, 1);
    LLVMValueRef wv[DW_MAX_VECTORS];
    for (int64_t v = 0; v < q->V; ++v) wv[v] = irb_ldv(r, c->w, ADD(ADD(wrow, MUL(kw, C64(q->B))), C64(v * r->lanes)));
    for (int64_t p = 0; p < pixels; ++p) {
      LLVMValueRef iw = ADD(SUB(MUL(ADD(ow0, C64(p)), C64(c->SW)), C64(c->PL)), MUL(kw, C64(c->DW)));
      LLVMValueRef at = MUL(ADD(row, iw), C64(q->B));
      for (int64_t v = 0; v < q->V; ++v) {
        LLVMValueRef a = q->acc[p * q->V + v];
        irb_store(r, irb_fma(r, irb_ldv(r, c->x, ADD(at, C64(v * r->lanes))), wv[v], irb_load(r, r->vec, a)), a);
      }
    }
    if (!unrolled) irb_endfor(r, &lkw);
  }
  irb_endfor(r, &lkh);
  for (int64_t p = 0; p < pixels; ++p)
    for (int64_t v = 0; v < q->V; ++v) {
      LLVMValueRef oidx = ADD(ADD(q->out_row, MUL(ADD(ow0, C64(p)), C64(q->B))), C64(v * r->lanes));
      cpu_conv_epilogue(r, c, irb_load(r, r->vec, q->acc[p * q->V + v]), ADD(q->c0, C64(v * r->lanes)), oidx);
    }
}

/* Output columns [from, to), one pixel at a time, columns clipped. */
static void dw_border(irb_t *r, const dw_t *q, int64_t from, int64_t to, LLVMValueRef h0, LLVMValueRef kh_lo,
                      LLVMValueRef kh_hi) {
  const cpu_conv_t *c = &q->c;
  if (from >= to) return;
  irb_loop_t low;
  LLVMValueRef ow = irb_for(r, &low, C64(from), C64(to), 1);
  LLVMValueRef w0 = SUB(MUL(ow, C64(c->SW)), C64(c->PL));
  /* Taps kw with 0 <= w0 + kw * DW < W. */
  LLVMValueRef neg = SUB(C64(0), w0);
  LLVMValueRef lo = irb_smax(r, C64(0), DIV(ADD(neg, C64(c->DW - 1)), C64(c->DW)));
  LLVMValueRef room = SUB(C64(c->W - 1), w0);
  LLVMValueRef hi = irb_smin(r, C64(c->KW), ADD(DIV(irb_smax(r, room, C64(-1)), C64(c->DW)), C64(1)));
  hi = SEL(LT(room, C64(0)), C64(0), hi);
  dw_block(r, q, ow, 1, h0, kh_lo, kh_hi, lo, irb_smax(r, lo, hi));
  irb_endfor(r, &low);
}

void cpu_gen_depthwise(const cpu_gen_t *g, irb_t *r) {
  dw_t q;
  cpu_conv_init(&q.c, g, r);
  const cpu_conv_t *c = &q.c;
  q.B = c->OCBN;
  irb_set_lanes(r, cpu_isa_block_lanes(g->isa, q.B));
  q.V = q.B / r->lanes;
  q.CB = c->OCB;
  for (int64_t i = 0; i < DW_PIXELS * q.V; ++i) q.acc[i] = irb_alloca(r, r->vec);
  irb_loop_t lo, lb;
  LLVMValueRef o = irb_for(r, &lo, r->begin, r->end, 1); /* (n * CB + cb) * OH + oh */
  LLVMValueRef oh = REM(o, C64(c->OH)), plane = DIV(o, C64(c->OH));
  LLVMValueRef cb = REM(plane, C64(q.CB));
  q.plane = MUL(plane, C64(c->H * c->W));
  q.wbase = MUL(cb, C64(c->KH * c->KW * q.B));
  q.out_row = MUL(o, C64(c->OW * q.B));
  q.c0 = MUL(cb, C64(q.B));
  /* Kernel rows with 0 <= h0 + kh * DH < H. */
  LLVMValueRef h0 = SUB(MUL(oh, C64(c->SH)), C64(c->PT));
  LLVMValueRef neg = SUB(C64(0), h0);
  LLVMValueRef kh_lo = irb_smax(r, C64(0), DIV(ADD(neg, C64(c->DH - 1)), C64(c->DH)));
  LLVMValueRef room = SUB(C64(c->H - 1), h0);
  LLVMValueRef kh_hi = irb_smin(r, C64(c->KH), ADD(DIV(irb_smax(r, room, C64(-1)), C64(c->DH)), C64(1)));
  kh_hi = irb_smax(r, kh_lo, SEL(LT(room, C64(0)), C64(0), kh_hi));
  /* Interior columns: ow * SW - PL >= 0 and ow * SW - PL + (KW - 1) * DW < W. */
  int64_t first = (c->PL + c->SW - 1) / c->SW, last = c->W - 1 - (c->KW - 1) * c->DW + c->PL;
  int64_t end = last >= 0 ? last / c->SW + 1 : 0;
  if (first > c->OW) first = c->OW;
  if (end > c->OW) end = c->OW;
  if (end < first) end = first;
  const int64_t blocks = (end - first) / DW_PIXELS, rest_from = first + blocks * DW_PIXELS;
  dw_border(r, &q, 0, first, h0, kh_lo, kh_hi);
  if (blocks > 0) {
    LLVMValueRef ow0 = irb_for(r, &lb, C64(first), C64(rest_from), DW_PIXELS);
    dw_block(r, &q, ow0, DW_PIXELS, h0, kh_lo, kh_hi, NULL, NULL);
    irb_endfor(r, &lb);
  }
  for (int64_t ow = rest_from; ow < end; ++ow) dw_block(r, &q, C64(ow), 1, h0, kh_lo, kh_hi, NULL, NULL);
  dw_border(r, &q, end, c->OW, h0, kh_lo, kh_hi);
  irb_endfor(r, &lo);
}
