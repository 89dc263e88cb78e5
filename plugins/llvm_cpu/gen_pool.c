/* max_pool2d and avg_pool2d on NCHW[b]c with b a multiple of 8, at memory
 * speed: one parallel iteration is an output row of one channel block,
 * each output pixel b/L <L x float> accumulators over its window (L = 16
 * where the ISA has it and b is a multiple of 16, else 8). The
 * window's rows inside the input are a runtime range per row; its columns
 * are split at compile time into the border pixels, whose windows are
 * clipped at run time, and the interior, whose windows lie inside the
 * input and are unrolled without bounds. (The generic walk in gen.c, one
 * scalar element at a time with a bounds test per tap, is kept for other
 * layouts.) */
#include <math.h>

#include "gen_conv.h"

#define POOL_MAX_VECTORS 8 /* blocks of up to 64 channels */
#define POOL_UNROLL_KW 8   /* interior windows up to this wide are unrolled */

int cpu_pool_vectorized(const hetc_plugin_workload_t *wl, hetc_plugin_layout_t layout) {
  return wl->inputs[0].rank == 4 && layout.kind == HETC_PLUGIN_LAYOUT_NCHWC && layout.block % 8 == 0 &&
         layout.block <= 8 * POOL_MAX_VECTORS;
}

/* A window: rows [kh_lo, kh_hi) and columns [kw_lo, kw_hi) of the kernel
 * that fall inside the input, the window's top-left input coordinate. */
typedef struct window_t {
  LLVMValueRef kh_lo, kh_hi, kw_lo, kw_hi;
  LLVMValueRef h0, w0;
  int64_t kw_fixed; /* > 0: columns are [0, kw_fixed), unrolled */
} window_t;

typedef struct pool_t {
  const hetc_plugin_workload_t *wl;
  int64_t H, W, OW, KH, KW, SH, SW, PT, PL, B, V;
  int is_max;
  LLVMValueRef x, y, acc[POOL_MAX_VECTORS];
  LLVMValueRef plane;   /* the input channel block's first pixel */
  LLVMValueRef out_row; /* the output row's first element */
} pool_t;

static LLVMValueRef combine(irb_t *r, const pool_t *p, LLVMValueRef acc, LLVMValueRef v) {
  if (!p->is_max) return FADD(acc, v);
  return SEL(LLVMBuildFCmp(r->b, LLVMRealOGT, v, acc, ""), v, acc);
}

static void accumulate_column(irb_t *r, const pool_t *p, LLVMValueRef row, LLVMValueRef iw) {
  LLVMValueRef at = MUL(ADD(row, iw), C64(p->B));
  for (int64_t v = 0; v < p->V; ++v) {
    LLVMValueRef x = irb_ldv(r, p->x, ADD(at, C64(v * r->lanes)));
    irb_store(r, combine(r, p, irb_load(r, r->vec, p->acc[v]), x), p->acc[v]);
  }
}

/* Output pixel ow (a value) over window `w`. */
static void pool_pixel(irb_t *r, const pool_t *p, LLVMValueRef ow, const window_t *w) {
  const hetc_plugin_workload_t *wl = p->wl;
  for (int64_t v = 0; v < p->V; ++v) irb_store(r, irb_vconst(r, p->is_max ? -INFINITY : 0), p->acc[v]);
  irb_loop_t lkh, lkw;
  LLVMValueRef kh = irb_for(r, &lkh, w->kh_lo, w->kh_hi, 1);
  LLVMValueRef row = ADD(p->plane, MUL(ADD(w->h0, kh), C64(p->W))); /* in pixels */
  if (w->kw_fixed > 0) {
    for (int64_t kw = 0; kw < w->kw_fixed; ++kw) accumulate_column(r, p, row, ADD(w->w0, C64(kw)));
  } else {
    LLVMValueRef kw = irb_for(r, &lkw, w->kw_lo, w->kw_hi, 1);
    accumulate_column(r, p, row, ADD(w->w0, kw));
    irb_endfor(r, &lkw);
  }
  irb_endfor(r, &lkh);
  LLVMValueRef scale = NULL;
  if (!p->is_max) {
    LLVMValueRef rows, cols;
    if (wl->count_include_pad) {
      /* The window clipped to the padded input only (ceil_mode may run it
       * past the padding). */
      rows = SUB(irb_smin(r, ADD(w->h0, C64(p->KH)), C64(p->H + wl->padding[2])), w->h0);
      cols = SUB(irb_smin(r, ADD(w->w0, C64(p->KW)), C64(p->W + wl->padding[3])), w->w0);
    } else {
      rows = SUB(w->kh_hi, w->kh_lo);
      cols = w->kw_fixed > 0 ? C64(w->kw_fixed) : SUB(w->kw_hi, w->kw_lo);
    }
    scale = irb_splat(r, FDIV(CF(1), LLVMBuildSIToFP(r->b, MUL(rows, cols), r->f32, "")));
  }
  LLVMValueRef at = ADD(p->out_row, MUL(ow, C64(p->B)));
  for (int64_t v = 0; v < p->V; ++v) {
    LLVMValueRef value = irb_load(r, r->vec, p->acc[v]);
    irb_stv(r, scale ? FMUL(value, scale) : value, p->y, ADD(at, C64(v * r->lanes)));
  }
}

/* Output columns [from, to) with windows clipped at run time. */
static void pool_border(irb_t *r, const pool_t *p, window_t w, int64_t from, int64_t to) {
  if (from >= to) return;
  irb_loop_t low;
  LLVMValueRef ow = irb_for(r, &low, C64(from), C64(to), 1);
  w.w0 = SUB(MUL(ow, C64(p->SW)), C64(p->PL));
  w.kw_lo = irb_smax(r, C64(0), SUB(C64(0), w.w0));
  w.kw_hi = irb_smin(r, C64(p->KW), SUB(C64(p->W), w.w0));
  w.kw_fixed = 0;
  pool_pixel(r, p, ow, &w);
  irb_endfor(r, &low);
}

/* Global average pooling: an iteration is one channel block of one image,
 * its plane summed in b/L vector accumulators, four pixels at a time. */
static void global_pool_nchwc(const cpu_gen_t *g, irb_t *r) {
  const hetc_plugin_workload_t *wl = g->wl;
  const int64_t B = g->output_layout.block;
  irb_set_lanes(r, cpu_isa_block_lanes(g->isa, B));
  const int64_t V = B / r->lanes;
  const int64_t P = wl->inputs[0].shape[2] * wl->inputs[0].shape[3];
  LLVMValueRef x = irb_arg(r, 0), y = irb_arg(r, 1);
  LLVMValueRef acc[4 * POOL_MAX_VECTORS];
  for (int64_t i = 0; i < 4 * V; ++i) acc[i] = irb_alloca(r, r->vec);
  irb_loop_t lo, lp;
  LLVMValueRef o = irb_for(r, &lo, r->begin, r->end, 1); /* n * CB + cb */
  LLVMValueRef plane = MUL(o, C64(P * B));
  for (int64_t i = 0; i < 4 * V; ++i) irb_store(r, irb_vconst(r, 0), acc[i]);
  const int64_t whole = P / 4 * 4;
  if (whole > 0) {
    LLVMValueRef p = irb_for(r, &lp, C64(0), C64(whole), 4);
    for (int64_t u = 0; u < 4; ++u)
      for (int64_t v = 0; v < V; ++v) {
        LLVMValueRef at = ADD(plane, ADD(MUL(ADD(p, C64(u)), C64(B)), C64(v * r->lanes)));
        irb_store(r, FADD(irb_load(r, r->vec, acc[u * V + v]), irb_ldv(r, x, at)), acc[u * V + v]);
      }
    irb_endfor(r, &lp);
  }
  for (int64_t p = whole; p < P; ++p)
    for (int64_t v = 0; v < V; ++v)
      irb_store(r, FADD(irb_load(r, r->vec, acc[v]), irb_ldv(r, x, ADD(plane, C64(p * B + v * r->lanes)))), acc[v]);
  for (int64_t v = 0; v < V; ++v) {
    LLVMValueRef sum = FADD(FADD(irb_load(r, r->vec, acc[v]), irb_load(r, r->vec, acc[V + v])),
                            FADD(irb_load(r, r->vec, acc[2 * V + v]), irb_load(r, r->vec, acc[3 * V + v])));
    irb_stv(r, FMUL(sum, irb_vconst(r, 1.0 / (double)P)), y, ADD(MUL(o, C64(B)), C64(v * r->lanes)));
  }
  irb_endfor(r, &lo);
}

void cpu_gen_pool_nchwc(const cpu_gen_t *g, irb_t *r) {
  const hetc_plugin_workload_t *wl = g->wl;
  if (wl->op == HETC_PLUGIN_OP_GLOBAL_AVG_POOL2D) {
    global_pool_nchwc(g, r);
    return;
  }
  pool_t p = {.wl = wl, .H = wl->inputs[0].shape[2], .W = wl->inputs[0].shape[3],
              .OW = wl->output.shape[3], .KH = wl->kernel[0], .KW = wl->kernel[1],
              .SH = wl->strides[0], .SW = wl->strides[1], .PT = wl->padding[0],
              .PL = wl->padding[1], .B = g->output_layout.block,
              .is_max = wl->op == HETC_PLUGIN_OP_MAX_POOL2D};
  irb_set_lanes(r, cpu_isa_block_lanes(g->isa, p.B));
  p.V = p.B / r->lanes;
  const int64_t OH = wl->output.shape[2];
  p.x = irb_arg(r, 0);
  p.y = irb_arg(r, 1);
  for (int64_t v = 0; v < p.V; ++v) p.acc[v] = irb_alloca(r, r->vec);
  irb_loop_t lo;
  LLVMValueRef o = irb_for(r, &lo, r->begin, r->end, 1);
  LLVMValueRef oh = REM(o, C64(OH)), plane = DIV(o, C64(OH)); /* plane: n * CB + cb */
  p.plane = MUL(plane, C64(p.H * p.W));
  p.out_row = MUL(o, C64(p.OW * p.B));
  window_t w = {0};
  w.h0 = SUB(MUL(oh, C64(p.SH)), C64(p.PT));
  w.kh_lo = irb_smax(r, C64(0), SUB(C64(0), w.h0));
  w.kh_hi = irb_smin(r, C64(p.KH), SUB(C64(p.H), w.h0));
  /* Interior columns: ow * SW - PL >= 0 and ow * SW - PL + KW <= W. */
  int64_t lo_ow = (p.PL + p.SW - 1) / p.SW, hi_ow = p.W >= p.KW ? (p.W - p.KW + p.PL) / p.SW + 1 : 0;
  if (lo_ow > p.OW) lo_ow = p.OW;
  if (hi_ow > p.OW) hi_ow = p.OW;
  if (hi_ow < lo_ow || p.KW > POOL_UNROLL_KW) hi_ow = lo_ow;
  pool_border(r, &p, w, 0, lo_ow);
  if (lo_ow < hi_ow) {
    irb_loop_t low;
    LLVMValueRef ow = irb_for(r, &low, C64(lo_ow), C64(hi_ow), 1);
    w.w0 = SUB(MUL(ow, C64(p.SW)), C64(p.PL));
    w.kw_fixed = p.KW;
    pool_pixel(r, &p, ow, &w);
    irb_endfor(r, &low);
  }
  pool_border(r, &p, w, hi_ow, p.OW);
  irb_endfor(r, &lo);
}
