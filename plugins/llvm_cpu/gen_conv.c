/* The direct conv2d kernels, the boundaries of every conv2d template and
 * the dispatch to the GEMM-based ones (gen_im2col.c, gen_winograd.c):
 *   cpu_conv2d_nchwc     NCHW[x]c direct convolution, register-blocked: for
 *                        each (n, ocb, oh, block of reg_n output columns),
 *                        reg_n x tile_oc/L <L x float> accumulators stay in
 *                        registers over icb, kh, kw, ic; each step broadcasts
 *                        one input scalar and FMAs it with the weight vectors
 *                        into every accumulator. Blocks whose window lies
 *                        inside the input skip the column bounds checks.
 *   cpu_conv2d_grouped_nchwc  the same kernel for 1 < groups < C: each output
 *                        block reduces over its groups' input-channel blocks
 *                        only (cpu_grouped_span), from the block of its first
 *                        group's first channel.
 *   cpu_depthwise_nchwc  groups == C == K: gen_depthwise.c.
 *   cpu_conv2d_nchw      plain direct convolution, any groups.
 * The epilogue (bias, residual, activation) is applied in registers before
 * the store; NCHWc padding channels are stored as zeros. L, the lanes of
 * the vectors, is the ISA's width where tile_oc is a multiple of it, else 8
 * (cpu_isa_block_lanes). */
#include <string.h>

#include "gen_conv.h"

/* A 1x1, stride-1, unpadded NCHWc conv reads and writes each (h, w) plane
 * contiguously, so its rows are merged into one: register blocks then run
 * across row ends instead of leaving a short remainder block per row (a
 * 7-wide row is otherwise 6 + 1 columns, the 1 latency-bound). The parallel
 * tasks are then the N x OCB planes only, so it is done where there are at
 * least 8 of them (measured: with 4 the row split balances better). */
int cpu_conv_nchwc_flat(const hetc_plugin_workload_t *wl, int64_t tile_oc) {
  if (tile_oc < 1) return 0;
  const int64_t planes = wl->inputs[0].shape[0] * hetc_kit_ceil_div(wl->output.shape[1], tile_oc);
  return planes >= 8 && wl->kernel[0] == 1 && wl->kernel[1] == 1 &&
         wl->strides[0] == 1 && wl->strides[1] == 1 && wl->padding[0] == 0 &&
         wl->padding[1] == 0 && wl->padding[2] == 0 && wl->padding[3] == 0 &&
         wl->inputs[0].shape[2] == wl->output.shape[2] &&
         wl->inputs[0].shape[3] == wl->output.shape[3];
}

static int nchwc_flat(const cpu_gen_t *g) {
  return g->kind == CPU_T_CONV_NCHWC && cpu_conv_nchwc_flat(g->wl, g->cfg.tile_oc);
}

hetc_plugin_status_t cpu_gen_conv_boundary(cpu_gen_t *g) {
  const hetc_plugin_workload_t *wl = g->wl;
  const int64_t N = wl->inputs[0].shape[0], K = wl->output.shape[1];
  const int64_t OH = nchwc_flat(g) ? 1 : wl->output.shape[2];
  g->grain = 1;
  if (g->kind == CPU_T_CONV_IM2COL || g->kind == CPU_T_CONV_WINOGRAD) {
    const int64_t OCB = hetc_kit_ceil_div(K, g->cfg.tile_oc), ICBN = g->cfg.tile_ic;
    g->input_layouts[0] = hetc_kit_layout_nchwc(ICBN);
    if (wl->epilogue.has_residual) g->input_layouts[1] = hetc_kit_layout_nchwc(g->cfg.tile_oc);
    g->output_layout = hetc_kit_layout_nchwc(g->cfg.tile_oc);
    const int64_t C = wl->inputs[0].shape[1], P = wl->output.shape[2] * wl->output.shape[3];
    if (g->kind == CPU_T_CONV_IM2COL) {
      /* The micro-kernel's reduction: one chunk of whole (icb, kh, kw) rows. */
      g->avg_inner = (double)(cpu_im2col_chunk_rows(wl, &g->cfg) * ICBN);
      g->outer = N * hetc_kit_ceil_div(P, g->cfg.reg_n * g->cfg.tiles) * (g->cfg.parallel ? OCB : 1);
    } else {
      g->avg_inner = (double)(hetc_kit_ceil_div(C, ICBN) * ICBN);
      cpu_winograd_boundary(g);
    }
  } else if (g->kind == CPU_T_CONV_NCHWC || g->kind == CPU_T_CONV_GROUPED ||
             g->kind == CPU_T_CONV_DEPTHWISE) {
    const int64_t OCB = hetc_kit_ceil_div(K, g->cfg.tile_oc);
    g->input_layouts[0] = hetc_kit_layout_nchwc(g->cfg.tile_ic);
    if (wl->epilogue.has_residual) g->input_layouts[1] = hetc_kit_layout_nchwc(g->cfg.tile_oc);
    g->output_layout = hetc_kit_layout_nchwc(g->cfg.tile_oc);
    g->outer = N * OCB * (g->kind == CPU_T_CONV_DEPTHWISE || g->cfg.parallel ? OH : 1);
    g->avg_inner = (double)g->cfg.tile_ic;
    if (g->kind == CPU_T_CONV_DEPTHWISE) g->avg_inner = (double)(wl->kernel[1]);
  } else {
    g->outer = N * K;
    g->avg_inner = (double)wl->kernel[1];
  }
  return NULL;
}

void cpu_conv_init(cpu_conv_t *c, const cpu_gen_t *g, irb_t *r) {
  const hetc_plugin_workload_t *wl = g->wl;
  memset(c, 0, sizeof(*c));
  c->wl = wl;
  int arg = 0;
  c->x = irb_arg(r, arg++);
  if (wl->epilogue.has_residual) c->res = irb_arg(r, arg++);
  c->w = irb_arg(r, arg++);
  if (wl->epilogue.has_bias) c->bias = irb_arg(r, arg++);
  c->y = irb_arg(r, arg++);
  c->C = wl->inputs[0].shape[1];
  c->H = wl->inputs[0].shape[2];
  c->W = wl->inputs[0].shape[3];
  c->K = wl->output.shape[1];
  c->OH = wl->output.shape[2];
  c->OW = wl->output.shape[3];
  c->KH = wl->kernel[0];
  c->KW = wl->kernel[1];
  c->SH = wl->strides[0];
  c->SW = wl->strides[1];
  c->DH = wl->dilation[0];
  c->DW = wl->dilation[1];
  c->PT = wl->padding[0];
  c->PL = wl->padding[1];
  if (nchwc_flat(g)) {
    c->W *= c->H;
    c->H = 1;
    c->OW *= c->OH;
    c->OH = 1;
  }
  c->ICBN = g->cfg.tile_ic;
  c->OCBN = g->cfg.tile_oc;
  if (c->ICBN > 0) c->ICB = hetc_kit_ceil_div(c->C, c->ICBN);
  if (c->OCBN > 0) c->OCB = hetc_kit_ceil_div(c->K, c->OCBN);
  c->ICBG = c->ICB;
  if (g->kind == CPU_T_CONV_GROUPED) {
    c->grouped = 1;
    c->CG = c->C / wl->groups;
    c->KG = c->K / wl->groups;
    c->ICBG = cpu_grouped_span(wl, c->OCBN) / c->ICBN;
  }
}

LLVMValueRef cpu_in_range(irb_t *r, LLVMValueRef v, int64_t limit) {
  return AND(GE(v, C64(0)), LT(v, C64(limit)));
}

void cpu_conv_epilogue(irb_t *r, const cpu_conv_t *c, LLVMValueRef acc, LLVMValueRef c0,
                        LLVMValueRef oidx) {
  const hetc_plugin_epilogue_t *e = &c->wl->epilogue;
  if (c->bias) acc = FADD(acc, irb_ldv(r, c->bias, c0));
  if (c->res) acc = FADD(acc, irb_ldv(r, c->res, oidx));
  acc = irb_act(r, acc, e->activation);
  if (c->K % c->OCBN != 0) {
    const unsigned L = (unsigned)r->lanes;
    LLVMTypeRef vi64 = LLVMVectorType(r->i64, L);
    LLVMValueRef lanes[16], kv[16];
    for (unsigned i = 0; i < L; ++i) {
      lanes[i] = C64(i);
      kv[i] = C64(c->K);
    }
    LLVMValueRef base = LLVMBuildInsertElement(r->b, LLVMGetUndef(vi64), c0,
                                               LLVMConstInt(r->i32, 0, 0), "");
    base = LLVMBuildShuffleVector(r->b, base, LLVMGetUndef(vi64),
                                  LLVMConstNull(LLVMVectorType(r->i32, L)), "");
    LLVMValueRef ch = ADD(base, LLVMConstVector(lanes, L));
    LLVMValueRef ok = LT(ch, LLVMConstVector(kv, L));
    acc = SEL(ok, acc, irb_vconst(r, 0));
  }
  irb_stv(r, acc, c->y, oidx);
}

/* One block of R output columns starting at ow0. */
static void nchwc_block(irb_t *r, const cpu_conv_t *c, int unroll_kw, LLVMValueRef n,
                        LLVMValueRef ocb, LLVMValueRef oh, LLVMValueRef ow0, int64_t R,
                        int checked) {
  const int64_t L = r->lanes, V = c->OCBN / L;
  LLVMValueRef acc[16 * 8];
  for (int64_t i = 0; i < R * V; ++i) {
    acc[i] = irb_alloca(r, r->vec);
    irb_store(r, irb_vconst(r, 0), acc[i]);
  }
  const int check_h = c->wl->padding[0] > 0 || c->wl->padding[2] > 0;
  LLVMValueRef ih0 = SUB(MUL(oh, C64(c->SH)), C64(c->PT));
  /* A grouped block's first input-channel block: its first group's first
   * channel, over ICBN (which divides a group's channels). */
  LLVMValueRef icb0 =
      c->grouped ? DIV(MUL(DIV(MUL(ocb, C64(c->OCBN)), C64(c->KG)), C64(c->CG)), C64(c->ICBN)) : C64(0);
  irb_loop_t licb, lkh, lkw, lic;
  LLVMValueRef icb = irb_for(r, &licb, C64(0), C64(c->ICBG), 1);
  LLVMValueRef kh = irb_for(r, &lkh, C64(0), C64(c->KH), 1);
  LLVMValueRef ih = ADD(ih0, MUL(kh, C64(c->DH)));
  irb_if_t fh;
  if (check_h) irb_if(r, &fh, cpu_in_range(r, ih, c->H));
  LLVMValueRef in_row =
      MUL(ADD(MUL(ADD(MUL(n, C64(c->ICB)), ADD(icb0, icb)), C64(c->H)), ih), C64(c->W));
  LLVMValueRef w_row = MUL(ADD(MUL(ADD(MUL(ocb, C64(c->ICBG)), icb), C64(c->KH)), kh), C64(c->KW));
  const int64_t nkw = unroll_kw ? c->KW : 1;
  for (int64_t ukw = 0; ukw < nkw; ++ukw) {
    LLVMValueRef kw = unroll_kw ? C64(ukw) : irb_for(r, &lkw, C64(0), C64(c->KW), 1);
    /* A block at the border skips a tap whose columns all lie in the
     * padding: with a large dilation (DeepLab's ASPP, 3x3 at 12-36 on
     * 14 x 14), most taps do. */
    irb_if_t ftap;
    if (checked) {
      LLVMValueRef first = ADD(SUB(MUL(ow0, C64(c->SW)), C64(c->PL)), MUL(kw, C64(c->DW)));
      LLVMValueRef last = ADD(first, C64((R - 1) * c->SW));
      irb_if(r, &ftap, AND(GE(last, C64(0)), LT(first, C64(c->W))));
    }
    LLVMValueRef ic = irb_for(r, &lic, C64(0), C64(c->ICBN), 1);
    LLVMValueRef widx = MUL(ADD(MUL(ADD(w_row, kw), C64(c->ICBN)), ic), C64(c->OCBN));
    LLVMValueRef wv[8];
    for (int64_t v = 0; v < V; ++v) wv[v] = irb_ldv(r, c->w, ADD(widx, C64(v * L)));
    for (int64_t i = 0; i < R; ++i) {
      LLVMValueRef iw = ADD(SUB(MUL(ADD(ow0, C64(i)), C64(c->SW)), C64(c->PL)),
                            MUL(kw, C64(c->DW)));
      LLVMValueRef idx = ADD(MUL(ADD(in_row, iw), C64(c->ICBN)), ic);
      LLVMValueRef xs;
      if (checked) {
        LLVMValueRef ok = cpu_in_range(r, iw, c->W);
        idx = SEL(ok, idx, MUL(in_row, C64(c->ICBN)));
        xs = SEL(ok, irb_ld(r, c->x, idx), CF(0));
      } else {
        xs = irb_ld(r, c->x, idx);
      }
      LLVMValueRef xb = irb_splat(r, xs);
      for (int64_t v = 0; v < V; ++v) {
        LLVMValueRef a = acc[i * V + v];
        irb_store(r, irb_fma(r, xb, wv[v], irb_load(r, r->vec, a)), a);
      }
    }
    irb_endfor(r, &lic);
    if (checked) irb_endif(r, &ftap);
    if (!unroll_kw) irb_endfor(r, &lkw);
  }
  if (check_h) irb_endif(r, &fh);
  irb_endfor(r, &lkh);
  irb_endfor(r, &licb);
  LLVMValueRef orow = MUL(ADD(MUL(ADD(MUL(n, C64(c->OCB)), ocb), C64(c->OH)), oh), C64(c->OW));
  for (int64_t i = 0; i < R; ++i)
    for (int64_t v = 0; v < V; ++v) {
      LLVMValueRef oidx = ADD(MUL(ADD(orow, ADD(ow0, C64(i))), C64(c->OCBN)), C64(v * L));
      LLVMValueRef c0 = ADD(MUL(ocb, C64(c->OCBN)), C64(v * L));
      cpu_conv_epilogue(r, c, irb_load(r, r->vec, acc[i * V + v]), c0, oidx);
    }
}

static void nchwc_block_dispatch(irb_t *r, const cpu_conv_t *c, int unroll_kw, LLVMValueRef n,
                                 LLVMValueRef ocb, LLVMValueRef oh, LLVMValueRef ow0,
                                 int64_t R) {
  if (c->wl->padding[1] == 0 && c->wl->padding[3] == 0) {
    nchwc_block(r, c, unroll_kw, n, ocb, oh, ow0, R, 0);
    return;
  }
  LLVMValueRef first = SUB(MUL(ow0, C64(c->SW)), C64(c->PL));
  LLVMValueRef last = ADD(SUB(MUL(ADD(ow0, C64(R - 1)), C64(c->SW)), C64(c->PL)),
                          C64((c->KW - 1) * c->DW));
  irb_if_t f;
  irb_if(r, &f, AND(GE(first, C64(0)), LT(last, C64(c->W))));
  nchwc_block(r, c, unroll_kw, n, ocb, oh, ow0, R, 0);
  irb_else(r, &f);
  nchwc_block(r, c, unroll_kw, n, ocb, oh, ow0, R, 1);
  irb_endif(r, &f);
}

static void gen_nchwc(const cpu_gen_t *g, irb_t *r) {
  cpu_conv_t c;
  cpu_conv_init(&c, g, r);
  irb_set_lanes(r, cpu_isa_block_lanes(g->isa, c.OCBN));
  const int64_t R = g->cfg.reg_n;
  irb_loop_t lo, loh, low;
  LLVMValueRef o = irb_for(r, &lo, r->begin, r->end, 1);
  LLVMValueRef oh = NULL, ocb, n, t;
  if (g->cfg.parallel == 2) {
    /* (n, oh, ocb): consecutive iterations share the input rows. */
    ocb = REM(o, C64(c.OCB));
    t = DIV(o, C64(c.OCB));
    oh = REM(t, C64(c.OH));
    n = DIV(t, C64(c.OH));
  } else {
    t = o;
    if (g->cfg.parallel) {
      oh = REM(o, C64(c.OH));
      t = DIV(o, C64(c.OH));
    }
    ocb = REM(t, C64(c.OCB));
    n = DIV(t, C64(c.OCB));
  }
  if (!g->cfg.parallel) oh = irb_for(r, &loh, C64(0), C64(c.OH), 1);
  const int64_t full = c.OW / R * R, rem = c.OW % R;
  if (full > 0) {
    LLVMValueRef ow0 = irb_for(r, &low, C64(0), C64(full), R);
    nchwc_block_dispatch(r, &c, (int)g->cfg.unroll_kw, n, ocb, oh, ow0, R);
    irb_endfor(r, &low);
  }
  if (rem > 0) nchwc_block_dispatch(r, &c, (int)g->cfg.unroll_kw, n, ocb, oh, C64(full), rem);
  if (!g->cfg.parallel) irb_endfor(r, &loh);
  irb_endfor(r, &lo);
}

static void gen_nchw(const cpu_gen_t *g, irb_t *r) {
  cpu_conv_t c;
  cpu_conv_init(&c, g, r);
  const int64_t G = g->wl->groups, CG = c.C / G, KG = c.K / G;
  LLVMValueRef acc = irb_alloca(r, r->f32);
  irb_loop_t lo, loh, low, lc, lkh, lkw;
  LLVMValueRef o = irb_for(r, &lo, r->begin, r->end, 1);
  LLVMValueRef k = REM(o, C64(c.K)), n = DIV(o, C64(c.K));
  LLVMValueRef cbase = MUL(DIV(k, C64(KG)), C64(CG));
  LLVMValueRef oh = irb_for(r, &loh, C64(0), C64(c.OH), 1);
  LLVMValueRef ow = irb_for(r, &low, C64(0), C64(c.OW), 1);
  irb_store(r, CF(0), acc);
  LLVMValueRef ci = irb_for(r, &lc, C64(0), C64(CG), 1);
  LLVMValueRef kh = irb_for(r, &lkh, C64(0), C64(c.KH), 1);
  LLVMValueRef ih = ADD(SUB(MUL(oh, C64(c.SH)), C64(c.PT)), MUL(kh, C64(c.DH)));
  irb_if_t fh, fw;
  irb_if(r, &fh, cpu_in_range(r, ih, c.H));
  LLVMValueRef kw = irb_for(r, &lkw, C64(0), C64(c.KW), 1);
  LLVMValueRef iw = ADD(SUB(MUL(ow, C64(c.SW)), C64(c.PL)), MUL(kw, C64(c.DW)));
  irb_if(r, &fw, cpu_in_range(r, iw, c.W));
  LLVMValueRef xi =
      ADD(MUL(ADD(MUL(ADD(MUL(n, C64(c.C)), ADD(cbase, ci)), C64(c.H)), ih), C64(c.W)), iw);
  LLVMValueRef wi = ADD(MUL(ADD(MUL(ADD(MUL(k, C64(CG)), ci), C64(c.KH)), kh), C64(c.KW)), kw);
  irb_store(r, irb_fma(r, irb_ld(r, c.x, xi), irb_ld(r, c.w, wi), irb_load(r, r->f32, acc)), acc);
  irb_endif(r, &fw);
  irb_endfor(r, &lkw);
  irb_endif(r, &fh);
  irb_endfor(r, &lkh);
  irb_endfor(r, &lc);
  LLVMValueRef val = irb_load(r, r->f32, acc);
  LLVMValueRef oidx = ADD(MUL(ADD(MUL(o, C64(c.OH)), oh), C64(c.OW)), ow);
  if (c.bias) val = FADD(val, irb_ld(r, c.bias, k));
  if (c.res) val = FADD(val, irb_ld(r, c.res, oidx));
  irb_st(r, irb_act(r, val, g->wl->epilogue.activation), c.y, oidx);
  irb_endfor(r, &low);
  irb_endfor(r, &loh);
  irb_endfor(r, &lo);
}

void cpu_gen_conv_ir(cpu_gen_t *g, irb_t *r) {
  switch (g->kind) {
    case CPU_T_CONV_NCHWC:
    case CPU_T_CONV_GROUPED: gen_nchwc(g, r); break;
    case CPU_T_CONV_DEPTHWISE: cpu_gen_depthwise(g, r); break;
    case CPU_T_CONV_IM2COL: cpu_gen_im2col(g, r); break;
    case CPU_T_CONV_WINOGRAD: cpu_gen_winograd(g, r); break;
    default: gen_nchw(g, r); break;
  }
}
