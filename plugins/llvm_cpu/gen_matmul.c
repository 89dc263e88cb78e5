/* matmul (ABI 2.0): out[b][m][n] = sum_k A[b][m][k] B[b][k][n], both
 * operands activations, everything row-major.
 *
 * It is the packed GEMM micro-kernel (gen_gemm.c) with B read in place:
 * N is contiguous in B and in the output, so a block of reg_n rows of M x
 * tile_oc columns of N keeps reg_n x (tile_oc / L) accumulators in
 * registers while k runs innermost, each step loading tile_oc / L vectors
 * of B's row k and broadcasting reg_n values of A's column k. Nothing is
 * packed: B's rows are N apart and the micro-kernel takes any row stride,
 * and packing would cost a pass over B per call (its values change every
 * call, unlike dense's weights) for blocks that already read whole cache
 * lines. A parallel iteration is one row block of one batch across all of
 * N: its A rows stay in L1 while B's panels stream from L2 (an attention
 * head's B is 50 KB). N past the last whole block is one narrower block,
 * its last vector masked, so no lane reads or writes past a row (the last
 * row of the last batch ends the buffer). */
#include "gen_conv.h"

void cpu_matmul_dims(const hetc_plugin_workload_t *wl, int64_t *batches, int64_t *m, int64_t *k, int64_t *n) {
  const hetc_plugin_tensor_t *a = &wl->inputs[0];
  const int32_t rank = a->rank;
  int64_t count = 1;
  for (int32_t d = 0; d + 2 < rank; ++d) count *= a->shape[d];
  *batches = count;
  *m = a->shape[rank - 2];
  *k = a->shape[rank - 1];
  *n = wl->inputs[1].shape[rank - 1];
}

void cpu_matmul_boundary(cpu_gen_t *g) {
  int64_t batches, M, K, N;
  cpu_matmul_dims(g->wl, &batches, &M, &K, &N);
  /* Row-major whatever the producers hint: a 4-d [B, H, M, K] hinted
   * NCHWc would block the heads, which the product never runs along. */
  g->input_layouts[0] = g->input_layouts[1] = g->output_layout = hetc_kit_layout_row_major();
  g->outer = batches * hetc_kit_ceil_div(M, g->cfg.reg_n);
  /* Small products (Swin's 49 x 32 x 49 heads) batch iterations into
   * about 64k multiply-adds a task, so that the pool's dispatch does not
   * cost more than the work. */
  const int64_t per = g->cfg.reg_n * N * K;
  g->grain = per >= 65536 ? 1 : 65536 / (per > 0 ? per : 1);
  g->avg_inner = (double)K;
}

typedef struct matmul_t {
  int64_t M, K, N, MB;
  LLVMValueRef a, b, y;
} matmul_t;

/* Rows [m0, m0 + rows) x the vectors of m->nv at column n0 (the last one
 * masked by `mask` where N ends in it): zero, reduce over K, store. The
 * accumulators are allocas of this block alone; mem2reg keeps them in
 * registers. */
static void block(irb_t *r, const matmul_t *x, cpu_micro_t *m, LLVMValueRef batch, LLVMValueRef m0,
                  LLVMValueRef n0, LLVMValueRef mask) {
  m->b_last_mask = mask;
  m->a_off = MUL(ADD(MUL(batch, C64(x->M)), m0), C64(x->K));
  m->b_off = ADD(MUL(batch, C64(x->K * x->N)), n0);
  cpu_micro_alloc(r, m);
  cpu_micro_zero(r, m);
  cpu_micro_kernel(r, m);
  LLVMValueRef y0 = ADD(MUL(ADD(MUL(batch, C64(x->M)), m0), C64(x->N)), n0);
  for (int64_t i = 0; i < m->mr; ++i)
    for (int64_t v = 0; v < m->nv; ++v) {
      LLVMValueRef at = ADD(y0, C64(i * x->N + v * r->lanes));
      LLVMValueRef acc = irb_load(r, r->vec, m->acc[i * m->nv + v]);
      if (mask && v == m->nv - 1) irb_stv_masked(r, acc, x->y, at, mask);
      else irb_stv(r, acc, x->y, at);
    }
}

/* A row block of `rows` rows across all of N: whole blocks of nv vectors,
 * then the rest of N in one block of fewer vectors, the last masked. */
static void row_block(irb_t *r, const matmul_t *x, int64_t rows, int64_t nv, LLVMValueRef batch, LLVMValueRef m0) {
  const int64_t L = r->lanes, W = nv * L, whole = x->N / W, rest = x->N % W;
  cpu_micro_t m = {.a = x->a, .a_row = x->K, .a_col = 1, .b = x->b, .b_row = x->N, .kc = C64(x->K), .mr = rows};
  if (whole > 0) {
    m.nv = nv;
    irb_loop_t ln;
    LLVMValueRef nb = irb_for(r, &ln, C64(0), C64(whole), 1);
    block(r, x, &m, batch, m0, MUL(nb, C64(W)), NULL);
    irb_endfor(r, &ln);
  }
  if (rest > 0) {
    m.nv = hetc_kit_ceil_div(rest, L);
    const int64_t last = rest - (m.nv - 1) * L;
    block(r, x, &m, batch, m0, C64(whole * W), last < L ? irb_lane_mask(r, last) : NULL);
  }
}

void cpu_gen_matmul(const cpu_gen_t *g, irb_t *r) {
  matmul_t x;
  int64_t batches;
  cpu_matmul_dims(g->wl, &batches, &x.M, &x.K, &x.N);
  x.a = irb_arg(r, 0);
  x.b = irb_arg(r, 1);
  x.y = irb_arg(r, 2);
  const int64_t MR = g->cfg.reg_n;
  x.MB = hetc_kit_ceil_div(x.M, MR);
  irb_set_lanes(r, cpu_isa_block_lanes(g->isa, g->cfg.tile_oc));
  const int64_t nv = g->cfg.tile_oc / r->lanes;
  irb_loop_t lo;
  LLVMValueRef o = irb_for(r, &lo, r->begin, r->end, 1);
  LLVMValueRef batch = DIV(o, C64(x.MB)), mb = REM(o, C64(x.MB));
  LLVMValueRef m0 = MUL(mb, C64(MR));
  /* The last row block holds M % MR rows: its own code, so that every
   * block's trip counts and accumulators are constants. */
  const int64_t rest = x.M % MR;
  if (rest == 0) {
    row_block(r, &x, MR, nv, batch, m0);
  } else {
    irb_if_t f;
    irb_if(r, &f, LT(mb, C64(x.MB - 1)));
    row_block(r, &x, MR, nv, batch, m0);
    irb_else(r, &f);
    row_block(r, &x, rest, nv, batch, m0);
    irb_endif(r, &f);
  }
  irb_endfor(r, &lo);
}
