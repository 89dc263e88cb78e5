/* Layout transforms between two channel-block layouts NCHW[b1]c ->
 * NCHW[b2]c, both blocks multiples of 8, as vector copies: every 8 lanes
 * of an output pixel are 8 contiguous lanes of one input block. One
 * parallel iteration is an output row of one channel block; padding
 * channels of the output are written as zeros. (Transforms from or to
 * row-major, and reshapes, stay on the generic walk in gen.c.) */
#include "gen_conv.h"

int cpu_layout_vectorized(const hetc_plugin_workload_t *wl, hetc_plugin_layout_t in,
                          hetc_plugin_layout_t out) {
  if (wl->inputs[0].rank != 4 || wl->output.rank != 4) return 0;
  for (int32_t i = 0; i < 4; ++i)
    if (wl->inputs[0].shape[i] != wl->output.shape[i]) return 0;
  return in.kind == HETC_PLUGIN_LAYOUT_NCHWC && out.kind == HETC_PLUGIN_LAYOUT_NCHWC && in.block % 8 == 0 &&
         out.block % 8 == 0 && in.block > 0 && out.block > 0;
}

void cpu_gen_layout_blocks(const cpu_gen_t *g, irb_t *r) {
  const hetc_plugin_tensor_t *t = &g->wl->output;
  const int64_t C = t->shape[1], H = t->shape[2], W = t->shape[3];
  const int64_t B1 = g->input_layouts[0].block, B2 = g->output_layout.block;
  const int64_t CB1 = hpc_ceil_div(C, B1), CB2 = hpc_ceil_div(C, B2);
  LLVMValueRef x = irb_arg(r, 0), y = irb_arg(r, 1);
  irb_loop_t lo, lw;
  LLVMValueRef o = irb_for(r, &lo, r->begin, r->end, 1); /* (n * CB2 + cb2) * H + h */
  LLVMValueRef h = REM(o, C64(H)), t2 = DIV(o, C64(H));
  LLVMValueRef cb2 = REM(t2, C64(CB2)), n = DIV(t2, C64(CB2));
  LLVMValueRef w = irb_for(r, &lw, C64(0), C64(W), 1);
  LLVMValueRef out_at = MUL(ADD(MUL(o, C64(W)), w), C64(B2));
  for (int64_t v = 0; v < B2 / 8; ++v) {
    /* Channels c .. c + 7 of the output pixel: past C only in the last
     * block, where they are padding. */
    LLVMValueRef c = ADD(MUL(cb2, C64(B2)), C64(v * 8));
    irb_if_t real;
    irb_if(r, &real, LT(c, C64(C)));
    LLVMValueRef plane = ADD(MUL(n, C64(CB1)), DIV(c, C64(B1)));
    LLVMValueRef in_at = ADD(MUL(ADD(MUL(ADD(MUL(plane, C64(H)), h), C64(W)), w), C64(B1)), REM(c, C64(B1)));
    irb_stv(r, irb_ldv(r, x, in_at), y, ADD(out_at, C64(v * 8)));
    irb_else(r, &real);
    irb_stv(r, irb_v8(r, 0), y, ADD(out_at, C64(v * 8)));
    irb_endif(r, &real);
  }
  irb_endfor(r, &lw);
  irb_endfor(r, &lo);
}
