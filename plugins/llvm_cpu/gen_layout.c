/* Copies between channel-block layouts NCHW[b1]c -> NCHW[b2]c, both blocks
 * multiples of 8, as vector copies: every L lanes of an output pixel are L
 * contiguous lanes of one input block (L = 16 where the ISA has it and
 * every block and concatenated channel count is a multiple of 16, else 8). A layout transform is one input; a
 * concat on the channel axis is several, each at its channel offset (its
 * channels a multiple of 8, so that no 8 lanes straddle two inputs), each
 * in its own block size: the concats placement could not lay out as views
 * because their inputs arrive in different layouts. One parallel iteration
 * is an output row of one channel block; padding channels of the output
 * are written as zeros. (Copies from or to row-major, and reshapes, stay
 * on the generic walk in gen.c.) */
#include "gen_conv.h"

static int blocked8(hetc_plugin_layout_t layout) {
  return layout.kind == HETC_PLUGIN_LAYOUT_NCHWC && layout.block > 0 && layout.block % 8 == 0;
}

int cpu_blocks_vectorized(const hetc_plugin_workload_t *wl, const hetc_plugin_layout_t *in,
                          hetc_plugin_layout_t out) {
  const hetc_plugin_tensor_t *o = &wl->output;
  if (o->rank != 4 || !blocked8(out) || wl->num_inputs < 1 || wl->num_inputs > CPU_MAX_INPUTS) return 0;
  int64_t channels = 0;
  for (int32_t j = 0; j < wl->num_inputs; ++j) {
    const hetc_plugin_tensor_t *t = &wl->inputs[j];
    if (t->rank != 4 || !blocked8(in[j]) || t->shape[0] != o->shape[0] || t->shape[2] != o->shape[2] ||
        t->shape[3] != o->shape[3] || (wl->num_inputs > 1 && t->shape[1] % 8 != 0))
      return 0;
    channels += t->shape[1];
  }
  return channels == o->shape[1];
}

void cpu_gen_blocks(const cpu_gen_t *g, irb_t *r) {
  const hetc_plugin_tensor_t *t = &g->wl->output;
  const int32_t J = g->wl->num_inputs;
  const int64_t C = t->shape[1], H = t->shape[2], W = t->shape[3];
  const int64_t B2 = g->output_layout.block, CB2 = hetc_kit_ceil_div(C, B2);
  LLVMValueRef y = irb_arg(r, J);
  irb_loop_t lo, lw;
  LLVMValueRef o = irb_for(r, &lo, r->begin, r->end, 1); /* (n * CB2 + cb2) * H + h */
  LLVMValueRef h = REM(o, C64(H)), t2 = DIV(o, C64(H));
  LLVMValueRef cb2 = REM(t2, C64(CB2)), n = DIV(t2, C64(CB2));
  LLVMValueRef w = irb_for(r, &lw, C64(0), C64(W), 1);
  LLVMValueRef out_at = MUL(ADD(MUL(o, C64(W)), w), C64(B2));
  int lanes = cpu_isa_block_lanes(g->isa, B2);
  for (int32_t j = 0; j < J; ++j)
    if (cpu_isa_block_lanes(g->isa, g->input_layouts[j].block) != lanes ||
        (J > 1 && g->wl->inputs[j].shape[1] % lanes != 0))
      lanes = 8;
  irb_set_lanes(r, lanes);
  for (int64_t v = 0; v < B2 / lanes; ++v) {
    /* Channels c .. c + L - 1 of the output pixel: past C only in the last
     * block, where they are padding. They come from the input whose
     * channels hold c (selected, not branched on: it is the same for the
     * whole row). */
    LLVMValueRef c = ADD(MUL(cb2, C64(B2)), C64(v * lanes));
    LLVMValueRef x = irb_arg(r, J - 1);
    int64_t start = C - g->wl->inputs[J - 1].shape[1];
    LLVMValueRef first = C64(start), block = C64(g->input_layouts[J - 1].block);
    LLVMValueRef blocks = C64(hetc_kit_ceil_div(g->wl->inputs[J - 1].shape[1], g->input_layouts[J - 1].block));
    for (int32_t j = J - 2; j >= 0; --j) {
      start -= g->wl->inputs[j].shape[1];
      const int64_t B1 = g->input_layouts[j].block;
      LLVMValueRef here = LT(c, C64(start + g->wl->inputs[j].shape[1]));
      x = SEL(here, irb_arg(r, j), x);
      first = SEL(here, C64(start), first);
      block = SEL(here, C64(B1), block);
      blocks = SEL(here, C64(hetc_kit_ceil_div(g->wl->inputs[j].shape[1], B1)), blocks);
    }
    irb_if_t real;
    irb_if(r, &real, LT(c, C64(C)));
    LLVMValueRef cj = SUB(c, first);
    LLVMValueRef plane = ADD(MUL(n, blocks), DIV(cj, block));
    LLVMValueRef in_at = ADD(MUL(ADD(MUL(ADD(MUL(plane, C64(H)), h), C64(W)), w), block), REM(cj, block));
    irb_stv(r, irb_ldv(r, x, in_at), y, ADD(out_at, C64(v * lanes)));
    irb_else(r, &real);
    irb_stv(r, irb_vconst(r, 0), y, ADD(out_at, C64(v * lanes)));
    irb_endif(r, &real);
  }
  irb_endfor(r, &lw);
  irb_endfor(r, &lo);
}
