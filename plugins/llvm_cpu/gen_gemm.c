/* The packed GEMM micro-kernel, and dense on it.
 *
 * The micro-kernel keeps an mr x nv block of <L x float> accumulators
 * (L = r->lanes) in registers across the reduction: per step it loads nv vectors of the
 * packed B row, broadcasts mr scalars of A and issues mr * nv FMAs. The
 * im2col and Winograd convolutions pack their A panels to feed it; dense
 * reads its input rows in place; matmul (gen_matmul.c) reads both operands
 * in place. */
#include "gen_conv.h"

void cpu_micro_alloc(irb_t *r, cpu_micro_t *m) {
  for (int64_t i = 0; i < m->mr * m->nv; ++i) m->acc[i] = irb_alloca(r, r->vec);
}

void cpu_micro_zero(irb_t *r, const cpu_micro_t *m) {
  for (int64_t i = 0; i < m->mr * m->nv; ++i) irb_store(r, irb_vconst(r, 0), m->acc[i]);
}

void cpu_micro_kernel(irb_t *r, const cpu_micro_t *m) {
  irb_loop_t lk;
  LLVMValueRef k = irb_for(r, &lk, C64(0), m->kc, 1);
  LLVMValueRef brow = ADD(m->b_off, MUL(k, C64(m->b_row)));
  LLVMValueRef bv[CPU_MICRO_MAX_ACC];
  for (int64_t v = 0; v < m->nv; ++v) {
    LLVMValueRef at = ADD(brow, C64(v * r->lanes));
    bv[v] = m->b_last_mask && v == m->nv - 1 ? irb_ldv_masked(r, m->b, at, m->b_last_mask) : irb_ldv(r, m->b, at);
  }
  LLVMValueRef acol = ADD(m->a_off, MUL(k, C64(m->a_col)));
  for (int64_t i = 0; i < m->mr; ++i) {
    LLVMValueRef ab = irb_splat(r, irb_ld(r, m->a, ADD(acol, C64(i * m->a_row))));
    for (int64_t v = 0; v < m->nv; ++v) {
      LLVMValueRef slot = m->acc[i * m->nv + v];
      irb_store(r, irb_fma(r, ab, bv[v], irb_load(r, r->vec, slot)), slot);
    }
  }
  irb_endfor(r, &lk);
}

/* y[n][u] = act(sum_c x[n][c] w[u][c] + bias[u] + res[n][u]), x row-major
 * [N][C], w packed (U/bn, C, bn). One parallel iteration is a block of mr
 * rows x one block of bn outputs; a block past the end of U is stored lane
 * by lane. */
static void dense_store(irb_t *r, const cpu_gen_t *g, LLVMValueRef acc, LLVMValueRef n,
                        LLVMValueRef u0, LLVMValueRef bias, LLVMValueRef res, LLVMValueRef y,
                        int partial) {
  const hetc_plugin_workload_t *wl = g->wl;
  const int64_t U = wl->output.shape[1];
  LLVMValueRef oidx = ADD(MUL(n, C64(U)), u0);
  if (bias) acc = FADD(acc, irb_ldv(r, bias, u0));
  if (!partial) {
    if (res) acc = FADD(acc, irb_ldv(r, res, oidx));
    irb_stv(r, irb_act(r, acc, wl->epilogue.activation), y, oidx);
    return;
  }
  for (int64_t l = 0; l < r->lanes; ++l) {
    irb_if_t f;
    irb_if(r, &f, LT(ADD(u0, C64(l)), C64(U)));
    LLVMValueRef v = LLVMBuildExtractElement(r->b, acc, LLVMConstInt(r->i32, (unsigned long long)l, 0), "");
    LLVMValueRef o = ADD(oidx, C64(l));
    if (res) v = FADD(v, irb_ld(r, res, o));
    irb_st(r, irb_act(r, v, wl->epilogue.activation), y, o);
    irb_endif(r, &f);
  }
}

void cpu_gen_dense(const cpu_gen_t *g, irb_t *r) {
  const hetc_plugin_workload_t *wl = g->wl;
  const int64_t N = wl->inputs[0].shape[0], C = wl->inputs[0].shape[1];
  const int64_t U = wl->output.shape[1], BN = g->cfg.tile_oc, UB = hetc_kit_ceil_div(U, BN);
  const int64_t MR = g->cfg.reg_n, NB = hetc_kit_ceil_div(N, MR);
  int arg = 0;
  LLVMValueRef x = irb_arg(r, arg++);
  LLVMValueRef res = wl->epilogue.has_residual ? irb_arg(r, arg++) : NULL;
  LLVMValueRef w = irb_arg(r, arg++);
  LLVMValueRef bias = wl->epilogue.has_bias ? irb_arg(r, arg++) : NULL;
  LLVMValueRef y = irb_arg(r, arg++);
  irb_set_lanes(r, cpu_isa_block_lanes(g->isa, BN));
  cpu_micro_t m = {.a = x, .a_row = C, .a_col = 1, .b = w, .b_row = BN, .kc = C64(C),
                   .nv = BN / r->lanes};
  irb_loop_t lo;
  LLVMValueRef o = irb_for(r, &lo, r->begin, r->end, 1);
  LLVMValueRef ub = REM(o, C64(UB)), nb = DIV(o, C64(UB));
  LLVMValueRef u0 = MUL(ub, C64(BN));
  m.b_off = MUL(ub, C64(C * BN));
  /* Full row blocks, then the last one of N % MR rows. */
  const int64_t rows[2] = {MR, N % MR};
  irb_if_t f;
  if (rows[1] != 0) irb_if(r, &f, LT(nb, C64(NB - 1)));
  for (int part = 0; part < 2; ++part) {
    if (part == 1) {
      if (rows[1] == 0) break;
      irb_else(r, &f);
    }
    m.mr = rows[part];
    cpu_micro_alloc(r, &m);
    cpu_micro_zero(r, &m);
    LLVMValueRef n0 = MUL(nb, C64(MR));
    m.a_off = MUL(n0, C64(C));
    cpu_micro_kernel(r, &m);
    /* The last output block may run past U. */
    irb_if_t fp;
    const int partial_exists = U % BN != 0;
    if (partial_exists) irb_if(r, &fp, LT(ub, C64(UB - 1)));
    for (int pass = 0; pass < 1 + partial_exists; ++pass) {
      if (pass == 1) irb_else(r, &fp);
      for (int64_t i = 0; i < m.mr; ++i)
        for (int64_t v = 0; v < m.nv; ++v)
          dense_store(r, g, irb_load(r, r->vec, m.acc[i * m.nv + v]), ADD(n0, C64(i)),
                      ADD(u0, C64(v * r->lanes)), bias, res, y, pass == 1);
    }
    if (partial_exists) irb_endif(r, &fp);
  }
  if (rows[1] != 0) irb_endif(r, &f);
  irb_endfor(r, &lo);
}
