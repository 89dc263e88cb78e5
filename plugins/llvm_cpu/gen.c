/* Kernel boundaries and IR for every op except conv2d (gen_conv.c). */
#include <math.h>
#include <string.h>

#include "gen_conv.h"

/* The producer's layout when this kernel can read it (4-d), else row-major. */
static hetc_plugin_layout_t hint(const hetc_plugin_tensor_t *t) {
  if (t->rank != 4) return hetc_kit_layout_row_major();
  hetc_plugin_layout_t l = t->layout;
  if (l.kind == HETC_PLUGIN_LAYOUT_NCHWC && l.block >= 1) return l;
  if (l.kind == HETC_PLUGIN_LAYOUT_NHWC) return l;
  return hetc_kit_layout_row_major();
}

static int64_t walk_outer(const hetc_plugin_tensor_t *t, hetc_plugin_layout_t l) {
  if (t->rank == 4) return t->shape[0] * hetc_kit_ceil_div(t->shape[1], hetc_kit_layout_block(l, t->shape[1]));
  return t->shape[0];
}

static int64_t grain_for(int64_t outer, int64_t total_work) {
  int64_t per = outer > 0 ? total_work / outer : 1;
  if (per < 1) per = 1;
  int64_t g = 16384 / per;
  return g < 1 ? 1 : g;
}

hetc_plugin_status_t cpu_gen_boundary(cpu_gen_t *g) {
  const hetc_plugin_workload_t *wl = g->wl;
  g->num_inputs = wl->num_inputs;
  g->num_params = 0;
  for (int32_t i = 0; i < wl->num_inputs; ++i) g->input_layouts[i] = hetc_kit_layout_row_major();
  g->output_layout = hetc_kit_layout_row_major();
  for (int32_t i = 0; i < 2; ++i) {
    g->param_bytes[i] = cpu_param_packed_count(wl, g->kind, &g->cfg, i) * 4;
    if (g->param_bytes[i]) g->num_params = i + 1;
  }
  const hetc_plugin_tensor_t *in = wl->inputs, *out = &wl->output;
  const int64_t work = hetc_kit_logical_count(out);
  switch (g->kind) {
    case CPU_T_CONV_NCHWC:
    case CPU_T_CONV_GROUPED:
    case CPU_T_CONV_DEPTHWISE:
    case CPU_T_CONV_NCHW:
    case CPU_T_CONV_IM2COL:
    case CPU_T_CONV_WINOGRAD: return cpu_gen_conv_boundary(g);
    case CPU_T_DENSE:
      g->outer = hetc_kit_ceil_div(out->shape[0], g->cfg.reg_n) * hetc_kit_ceil_div(out->shape[1], g->cfg.tile_oc);
      g->grain = 1;
      g->avg_inner = (double)in->shape[1];
      return NULL;
    case CPU_T_POOL:
    case CPU_T_GLOBAL_POOL:
    case CPU_T_BIAS_ADD:
      g->input_layouts[0] = g->output_layout = hint(in);
      break;
    case CPU_T_TRANSPOSE: break; /* row-major in and out */
    case CPU_T_RESIZE: {
      /* Each output element blends up to 4 inputs; the padding channels of
       * NCHWc are written too. */
      g->input_layouts[0] = g->output_layout = hint(in);
      g->outer = cpu_resize_outer(wl, g->output_layout);
      const int64_t taps = wl->params.resize.mode == HETC_PLUGIN_RESIZE_LINEAR ? 4 : 1;
      g->grain = grain_for(g->outer, hetc_kit_physical_count(out, g->output_layout) * taps);
      const int64_t b = hetc_kit_layout_block(g->output_layout, out->shape[1]);
      g->avg_inner = (double)(b % 8 == 0 ? b : out->shape[3]);
      return NULL;
    }
    case CPU_T_NORMALIZE: cpu_normalize_boundary(g); return NULL;
    case CPU_T_MATMUL: cpu_matmul_boundary(g); return NULL;
    case CPU_T_ELEMENTWISE:
      if (hpc_elementwise_row_major_only(wl)) break;
      __attribute__((fallthrough));
    case CPU_T_CONCAT:
      for (int32_t i = 0; i < wl->num_inputs; ++i) g->input_layouts[i] = hint(&in[i]);
      g->output_layout = out->rank == 4 ? hint(in) : hetc_kit_layout_row_major();
      break;
    case CPU_T_LAYOUT:
      g->input_layouts[0] = hint(in);
      g->output_layout = hint(out);
      break;
    case CPU_T_SOFTMAX:
    case CPU_T_LOG_SOFTMAX: {
      int64_t outer = 1;
      for (int32_t i = 0; i < wl->axis; ++i) outer *= in->shape[i];
      g->outer = outer;
      g->grain = grain_for(outer, work);
      g->avg_inner = (double)in->shape[wl->axis];
      return NULL;
    }
    default: return cpu_status(HETC_PLUGIN_STATUS_INTERNAL, "cpu: template kind %d", g->kind);
  }
  g->outer = walk_outer(out, g->output_layout);
  if ((g->kind == CPU_T_POOL && cpu_pool_vectorized(wl, g->output_layout)) ||
      ((g->kind == CPU_T_LAYOUT || (g->kind == CPU_T_CONCAT && wl->axis == 1)) &&
       cpu_blocks_vectorized(wl, g->input_layouts, g->output_layout)))
    g->outer *= out->shape[2];
  g->grain = grain_for(g->outer, work * (g->kind == CPU_T_POOL ? wl->kernel[0] * wl->kernel[1] : 1));
  if (out->rank == 4) {
    int64_t b = hetc_kit_layout_block(g->output_layout, out->shape[1]);
    g->avg_inner = (double)(b > 1 ? b : out->shape[3]);
  } else {
    g->avg_inner = (double)out->shape[out->rank - 1];
  }
  return NULL;
}

/* ------------------------------------------------------------------------ */

typedef struct ctx_t {
  const hetc_plugin_workload_t *wl;
  irb_view_t in[CPU_MAX_INPUTS];
  LLVMValueRef bias;
  LLVMValueRef slot; /* f32 scratch */
} ctx_t;

static LLVMValueRef pool_elem(irb_t *r, LLVMValueRef *c, void *user) {
  ctx_t *x = user;
  const hetc_plugin_workload_t *wl = x->wl;
  const int is_max = wl->op == HETC_PLUGIN_OP_MAX_POOL2D;
  const int64_t H = wl->inputs[0].shape[2], W = wl->inputs[0].shape[3];
  LLVMValueRef h0 = SUB(MUL(c[2], C64(wl->strides[0])), C64(wl->padding[0]));
  LLVMValueRef w0 = SUB(MUL(c[3], C64(wl->strides[1])), C64(wl->padding[1]));
  irb_store(r, is_max ? CF(-INFINITY) : CF(0), x->slot);
  irb_loop_t lh, lw;
  irb_if_t fh, fw;
  LLVMValueRef kh = irb_for(r, &lh, C64(0), C64(wl->kernel[0]), 1);
  LLVMValueRef ih = ADD(h0, kh);
  irb_if(r, &fh, AND(GE(ih, C64(0)), LT(ih, C64(H))));
  LLVMValueRef kw = irb_for(r, &lw, C64(0), C64(wl->kernel[1]), 1);
  LLVMValueRef iw = ADD(w0, kw);
  irb_if(r, &fw, AND(GE(iw, C64(0)), LT(iw, C64(W))));
  LLVMValueRef co[4] = {c[0], c[1], ih, iw};
  LLVMValueRef v = irb_ld(r, x->in[0].base, irb_offset(r, &x->in[0], co, 0));
  LLVMValueRef acc = irb_load(r, r->f32, x->slot);
  if (is_max)
    acc = SEL(LLVMBuildFCmp(r->b, LLVMRealOGT, v, acc, ""), v, acc);
  else
    acc = FADD(acc, v);
  irb_store(r, acc, x->slot);
  irb_endif(r, &fw);
  irb_endfor(r, &lw);
  irb_endif(r, &fh);
  irb_endfor(r, &lh);
  LLVMValueRef sum = irb_load(r, r->f32, x->slot);
  if (is_max) return sum;
  LLVMValueRef hs, ws;
  LLVMValueRef h1 = ADD(h0, C64(wl->kernel[0])), w1 = ADD(w0, C64(wl->kernel[1]));
  if (wl->count_include_pad) {
    hs = SUB(irb_smin(r, h1, C64(H + wl->padding[2])), h0);
    ws = SUB(irb_smin(r, w1, C64(W + wl->padding[3])), w0);
  } else {
    hs = SUB(irb_smin(r, h1, C64(H)), irb_smax(r, h0, C64(0)));
    ws = SUB(irb_smin(r, w1, C64(W)), irb_smax(r, w0, C64(0)));
  }
  LLVMValueRef cnt = LLVMBuildSIToFP(r->b, MUL(hs, ws), r->f32, "");
  return FDIV(sum, cnt);
}

static LLVMValueRef global_pool_elem(irb_t *r, LLVMValueRef *c, void *user) {
  ctx_t *x = user;
  const int64_t H = x->in[0].shape[2], W = x->in[0].shape[3];
  irb_store(r, CF(0), x->slot);
  irb_loop_t lh, lw;
  LLVMValueRef h = irb_for(r, &lh, C64(0), C64(H), 1);
  LLVMValueRef w = irb_for(r, &lw, C64(0), C64(W), 1);
  LLVMValueRef co[4] = {c[0], c[1], h, w};
  LLVMValueRef v = irb_ld(r, x->in[0].base, irb_offset(r, &x->in[0], co, 0));
  irb_store(r, FADD(irb_load(r, r->f32, x->slot), v), x->slot);
  irb_endfor(r, &lw);
  irb_endfor(r, &lh);
  return FDIV(irb_load(r, r->f32, x->slot), CF((double)(H * W)));
}

/* a op b of two floats or vectors. */
static LLVMValueRef binary(irb_t *r, int32_t op, LLVMValueRef a, LLVMValueRef b) {
  if (op == HETC_PLUGIN_BINARY_DIV) return FDIV(a, b);
  return op == HETC_PLUGIN_BINARY_ADD ? FADD(a, b) : FMUL(a, b);
}

static LLVMValueRef eltwise_elem(irb_t *r, LLVMValueRef *c, void *user) {
  ctx_t *x = user;
  LLVMValueRef a = irb_ld(r, x->in[0].base, irb_offset(r, &x->in[0], c, 0));
  if (x->wl->binary == HETC_PLUGIN_BINARY_NONE) return irb_act(r, a, x->wl->activation);
  LLVMValueRef b = irb_ld(r, x->in[1].base, irb_offset(r, &x->in[1], c, 1));
  return binary(r, x->wl->binary, a, b);
}

/* Elementwise ops with a vector form, chosen at build time:
 *   FLAT     every input in the output's shape and layout: one flat range
 *            per parallel iteration, vectors of the ISA's width, then a
 *            scalar tail (a unary op's activation through irb_act's vector
 *            form). Padding channels must come out 0: a unary activation
 *            maps 0 elsewhere (sigmoid(0) is 0.5) and 0 / 0 is NaN, so those
 *            need a layout without them.
 *   CHANNEL  a binary op of a 4-d NCHW[b]c tensor and a per-channel second
 *            operand ([N or 1, C, 1, 1], in any layout): squeeze-and-
 *            excitation's scale. Per (n, channel block) the b factors are
 *            gathered into vectors once and applied over the plane.
 * Anything else walks element by element (irb_walk_output). */
enum { ELTWISE_WALK = 0, ELTWISE_FLAT, ELTWISE_CHANNEL };

static int padding_free(const hetc_plugin_tensor_t *t, hetc_plugin_layout_t layout) {
  return layout.kind == HETC_PLUGIN_LAYOUT_ROW_MAJOR ||
         (layout.kind == HETC_PLUGIN_LAYOUT_NCHWC && t->rank == 4 && t->shape[1] % layout.block == 0);
}

static int same_dims(const hetc_plugin_tensor_t *a, const hetc_plugin_tensor_t *b) {
  if (a->rank != b->rank) return 0;
  for (int32_t d = 0; d < a->rank; ++d)
    if (a->shape[d] != b->shape[d]) return 0;
  return 1;
}

/* Whether the op is CHANNEL: the first operand in the output's shape and
 * layout, the second per channel (an elementwise workload's output has its
 * first input's shape). */
static int channel_operand(const cpu_gen_t *g) {
  const hetc_plugin_workload_t *wl = g->wl;
  const hetc_plugin_tensor_t *o = &wl->output, *s = &wl->inputs[1];
  return wl->num_inputs == 2 && o->rank == 4 && g->output_layout.kind == HETC_PLUGIN_LAYOUT_NCHWC &&
         g->output_layout.block % 8 == 0 && same_dims(&wl->inputs[0], o) &&
         hetc_kit_layout_equal(g->input_layouts[0], g->output_layout) && s->rank == 4 &&
         s->shape[1] == o->shape[1] && s->shape[2] == 1 && s->shape[3] == 1 &&
         (s->shape[0] == 1 || s->shape[0] == o->shape[0]);
}

static int eltwise_form(const cpu_gen_t *g) {
  const hetc_plugin_workload_t *wl = g->wl;
  if (g->kind != CPU_T_ELEMENTWISE) return ELTWISE_WALK;
  int flat = 1;
  for (int32_t i = 0; i < wl->num_inputs; ++i)
    flat = flat && same_dims(&wl->inputs[i], &wl->output) &&
           hetc_kit_layout_equal(g->input_layouts[i], g->output_layout);
  const int zero_kept = wl->num_inputs == 2 && wl->binary != HETC_PLUGIN_BINARY_DIV;
  if (flat && (zero_kept || padding_free(&wl->output, g->output_layout))) return ELTWISE_FLAT;
  return channel_operand(g) ? ELTWISE_CHANNEL : ELTWISE_WALK;
}

/* out = the op of the loaded operands (vectors when `vector`). */
static LLVMValueRef flat_value(irb_t *r, const hetc_plugin_workload_t *wl, LLVMValueRef *in,
                               LLVMValueRef i, int vector) {
  LLVMValueRef a = vector ? irb_ldv(r, in[0], i) : irb_ld(r, in[0], i);
  if (wl->num_inputs == 1) return irb_act(r, a, wl->activation);
  LLVMValueRef b = vector ? irb_ldv(r, in[1], i) : irb_ld(r, in[1], i);
  return binary(r, wl->binary, a, b);
}

static void gen_eltwise_flat(const cpu_gen_t *g, irb_t *r) {
  const hetc_plugin_workload_t *wl = g->wl;
  const int64_t chunk = hetc_kit_physical_count(&wl->output, g->output_layout) / g->outer;
  LLVMValueRef in[2];
  for (int32_t k = 0; k < wl->num_inputs; ++k) in[k] = irb_arg(r, k);
  LLVMValueRef y = irb_arg(r, wl->num_inputs);
  irb_set_lanes(r, g->isa->lanes);
  LLVMValueRef first = MUL(r->begin, C64(chunk)), last = MUL(r->end, C64(chunk));
  LLVMValueRef vector_end = SUB(last, REM(SUB(last, first), C64(r->lanes)));
  irb_loop_t lv, ls;
  LLVMValueRef i = irb_for(r, &lv, first, vector_end, r->lanes);
  irb_stv(r, flat_value(r, wl, in, i, 1), y, i);
  irb_endfor(r, &lv);
  LLVMValueRef j = irb_for(r, &ls, vector_end, last, 1);
  irb_st(r, flat_value(r, wl, in, j, 0), y, j);
  irb_endfor(r, &ls);
}

/* Iteration o = n * CB + cb: the block's b factors (padding lanes 0, or 1
 * for a division), then the plane. */
static void gen_eltwise_channel(const cpu_gen_t *g, irb_t *r) {
  const hetc_plugin_workload_t *wl = g->wl;
  const hetc_plugin_tensor_t *o = &wl->output;
  const int64_t C = o->shape[1], B = g->output_layout.block, CB = hetc_kit_ceil_div(C, B);
  const int64_t plane = o->shape[2] * o->shape[3];
  irb_view_t sv;
  irb_view(&sv, &wl->inputs[1], g->input_layouts[1], irb_arg(r, 1));
  LLVMValueRef x = irb_arg(r, 0), y = irb_arg(r, 2);
  irb_set_lanes(r, cpu_isa_block_lanes(g->isa, B));
  const int64_t L = r->lanes, V = B / L;
  LLVMValueRef factors = irb_alloca_array(r, r->f32, B);
  irb_loop_t lo, lp;
  LLVMValueRef it = irb_for(r, &lo, r->begin, r->end, 1);
  LLVMValueRef cb = REM(it, C64(CB)), n = DIV(it, C64(CB));
  const double pad = wl->binary == HETC_PLUGIN_BINARY_DIV ? 1.0 : 0.0;
  for (int64_t l = 0; l < B; ++l) {
    LLVMValueRef c = ADD(MUL(cb, C64(B)), C64(l));
    LLVMValueRef ok = LT(c, C64(C));
    LLVMValueRef coords[4] = {wl->inputs[1].shape[0] == 1 ? C64(0) : n, SEL(ok, c, C64(0)), C64(0), C64(0)};
    LLVMValueRef f = irb_ld(r, sv.base, irb_offset(r, &sv, coords, 0));
    irb_st(r, SEL(ok, f, CF(pad)), factors, C64(l));
  }
  LLVMValueRef fv[8];
  for (int64_t v = 0; v < V; ++v) fv[v] = irb_ldv(r, factors, C64(v * L));
  LLVMValueRef base = MUL(it, C64(plane * B));
  LLVMValueRef p = irb_for(r, &lp, C64(0), C64(plane), 1);
  for (int64_t v = 0; v < V; ++v) {
    LLVMValueRef at = ADD(base, ADD(MUL(p, C64(B)), C64(v * L)));
    LLVMValueRef xv = irb_ldv(r, x, at);
    irb_stv(r, binary(r, wl->binary, xv, fv[v]), y, at);
  }
  irb_endfor(r, &lp);
  irb_endfor(r, &lo);
}

static LLVMValueRef bias_elem(irb_t *r, LLVMValueRef *c, void *user) {
  ctx_t *x = user;
  LLVMValueRef a = irb_ld(r, x->in[0].base, irb_offset(r, &x->in[0], c, 0));
  return FADD(a, irb_ld(r, x->bias, c[1]));
}

static LLVMValueRef concat_elem(irb_t *r, LLVMValueRef *c, void *user) {
  ctx_t *x = user;
  const hetc_plugin_workload_t *wl = x->wl;
  const int32_t axis = wl->axis, J = wl->num_inputs;
  irb_if_t ifs[CPU_MAX_INPUTS];
  int32_t nif = 0;
  int64_t start = 0;
  for (int32_t j = 0; j < J; ++j) {
    const int64_t len = wl->inputs[j].shape[axis];
    if (j < J - 1) irb_if(r, &ifs[nif], LT(c[axis], C64(start + len)));
    LLVMValueRef co[HETC_PLUGIN_MAX_RANK];
    for (int32_t i = 0; i < wl->output.rank; ++i) co[i] = c[i];
    co[axis] = SUB(c[axis], C64(start));
    irb_store(r, irb_ld(r, x->in[j].base, irb_offset(r, &x->in[j], co, 0)), x->slot);
    if (j < J - 1) irb_else(r, &ifs[nif++]);
    start += len;
  }
  while (nif > 0) irb_endif(r, &ifs[--nif]);
  return irb_load(r, r->f32, x->slot);
}

/* Output coordinate d is input coordinate perm[d]. */
static LLVMValueRef transpose_elem(irb_t *r, LLVMValueRef *c, void *user) {
  ctx_t *x = user;
  LLVMValueRef co[HETC_PLUGIN_MAX_RANK];
  for (int32_t d = 0; d < x->wl->output.rank; ++d) co[HETC_PLUGIN_PERM_AT(x->wl->axis, d)] = c[d];
  return irb_ld(r, x->in[0].base, irb_offset(r, &x->in[0], co, 0));
}

static LLVMValueRef layout_elem(irb_t *r, LLVMValueRef *c, void *user) {
  ctx_t *x = user;
  const hetc_plugin_tensor_t *in = &x->wl->inputs[0], *out = &x->wl->output;
  int same = in->rank == out->rank;
  for (int32_t i = 0; same && i < in->rank; ++i) same = in->shape[i] == out->shape[i];
  if (same) return irb_ld(r, x->in[0].base, irb_offset(r, &x->in[0], c, 0));
  /* Reshape: the row-major logical index carries over. */
  LLVMValueRef lin = c[0];
  for (int32_t i = 1; i < out->rank; ++i) lin = ADD(MUL(lin, C64(out->shape[i])), c[i]);
  LLVMValueRef co[HETC_PLUGIN_MAX_RANK];
  for (int32_t i = in->rank - 1; i >= 0; --i) {
    if (i == 0) {
      co[0] = lin;
    } else {
      co[i] = REM(lin, C64(in->shape[i]));
      lin = DIV(lin, C64(in->shape[i]));
    }
  }
  return irb_ld(r, x->in[0].base, irb_offset(r, &x->in[0], co, 0));
}

static void gen_softmax(cpu_gen_t *g, irb_t *r) {
  const hetc_plugin_tensor_t *t = &g->wl->inputs[0];
  const int32_t axis = g->wl->axis;
  int64_t inner = 1;
  for (int32_t i = axis + 1; i < t->rank; ++i) inner *= t->shape[i];
  const int64_t A = t->shape[axis];
  LLVMValueRef x = irb_arg(r, 0), y = irb_arg(r, 1);
  LLVMValueRef m = irb_alloca(r, r->f32), s = irb_alloca(r, r->f32);
  irb_loop_t lo, li, la;
  LLVMValueRef o = irb_for(r, &lo, r->begin, r->end, 1);
  LLVMValueRef i = irb_for(r, &li, C64(0), C64(inner), 1);
  LLVMValueRef base = ADD(MUL(o, C64(A * inner)), i);
  irb_store(r, CF(-INFINITY), m);
  LLVMValueRef a = irb_for(r, &la, C64(0), C64(A), 1);
  LLVMValueRef v = irb_ld(r, x, ADD(base, MUL(a, C64(inner))));
  LLVMValueRef cur = irb_load(r, r->f32, m);
  irb_store(r, SEL(LLVMBuildFCmp(r->b, LLVMRealOGT, v, cur, ""), v, cur), m);
  irb_endfor(r, &la);
  LLVMValueRef mx = irb_load(r, r->f32, m);
  irb_store(r, CF(0), s);
  a = irb_for(r, &la, C64(0), C64(A), 1);
  LLVMValueRef idx = ADD(base, MUL(a, C64(inner)));
  LLVMValueRef e = irb_libm(r, "expf", LLVMBuildFSub(r->b, irb_ld(r, x, idx), mx, ""));
  irb_st(r, e, y, idx);
  irb_store(r, FADD(irb_load(r, r->f32, s), e), s);
  irb_endfor(r, &la);
  LLVMValueRef sum = irb_load(r, r->f32, s);
  /* log_softmax: x - max - log(sum), finite where the quotient would round
   * to 0. */
  const int log_form = g->wl->op == HETC_PLUGIN_OP_LOG_SOFTMAX;
  LLVMValueRef log_sum = log_form ? irb_libm(r, "logf", sum) : NULL;
  a = irb_for(r, &la, C64(0), C64(A), 1);
  idx = ADD(base, MUL(a, C64(inner)));
  LLVMValueRef result = log_form ? LLVMBuildFSub(r->b, LLVMBuildFSub(r->b, irb_ld(r, x, idx), mx, ""), log_sum, "")
                                 : FDIV(irb_ld(r, y, idx), sum);
  irb_st(r, result, y, idx);
  irb_endfor(r, &la);
  irb_endfor(r, &li);
  irb_endfor(r, &lo);
}

hetc_plugin_status_t cpu_gen_module(cpu_gen_t *g) {
  g->ctx = LLVMContextCreate();
  g->mod = LLVMModuleCreateWithNameInContext("hetc_cpu", g->ctx);
  if (!g->ctx || !g->mod)
    return cpu_status(HETC_PLUGIN_STATUS_OUT_OF_MEMORY, "cpu: cannot create an LLVM module");
  irb_t rr, *r = &rr;
  irb_open(r, g->ctx, g->mod);
  const hetc_plugin_workload_t *wl = g->wl;
  ctx_t x;
  memset(&x, 0, sizeof(x));
  x.wl = wl;
  x.slot = irb_alloca(r, r->f32);
  irb_elem_fn fn = NULL;
  switch (g->kind) {
    case CPU_T_CONV_NCHWC:
    case CPU_T_CONV_GROUPED:
    case CPU_T_CONV_DEPTHWISE:
    case CPU_T_CONV_NCHW:
    case CPU_T_CONV_IM2COL:
    case CPU_T_CONV_WINOGRAD: cpu_gen_conv_ir(g, r); break;
    case CPU_T_DENSE: cpu_gen_dense(g, r); break;
    case CPU_T_SOFTMAX:
    case CPU_T_LOG_SOFTMAX: gen_softmax(g, r); break;
    case CPU_T_POOL:
      if (cpu_pool_vectorized(wl, g->output_layout)) cpu_gen_pool_nchwc(g, r);
      else fn = pool_elem;
      break;
    case CPU_T_GLOBAL_POOL:
      if (cpu_pool_vectorized(wl, g->output_layout)) cpu_gen_pool_nchwc(g, r);
      else fn = global_pool_elem;
      break;
    case CPU_T_ELEMENTWISE:
      switch (eltwise_form(g)) {
        case ELTWISE_FLAT: gen_eltwise_flat(g, r); break;
        case ELTWISE_CHANNEL: gen_eltwise_channel(g, r); break;
        default: fn = eltwise_elem; break;
      }
      break;
    case CPU_T_BIAS_ADD: fn = bias_elem; break;
    case CPU_T_TRANSPOSE: fn = transpose_elem; break;
    case CPU_T_RESIZE: {
      hetc_plugin_status_t s = cpu_gen_resize(g, r);
      if (s) {
        irb_close(r);
        return s;
      }
      break;
    }
    case CPU_T_NORMALIZE: cpu_gen_normalize(g, r); break;
    case CPU_T_MATMUL: cpu_gen_matmul(g, r); break;
    case CPU_T_CONCAT:
      if (wl->axis == 1 && cpu_blocks_vectorized(wl, g->input_layouts, g->output_layout)) cpu_gen_blocks(g, r);
      else fn = concat_elem;
      break;
    case CPU_T_LAYOUT:
      if (cpu_blocks_vectorized(wl, g->input_layouts, g->output_layout)) cpu_gen_blocks(g, r);
      else fn = layout_elem;
      break;
    default: break;
  }
  if (fn) {
    int arg = 0;
    for (int32_t i = 0; i < wl->num_inputs; ++i)
      irb_view(&x.in[i], &wl->inputs[i], g->input_layouts[i], irb_arg(r, arg++));
    if (g->kind == CPU_T_BIAS_ADD) x.bias = irb_arg(r, arg++);
    irb_view_t out;
    irb_view(&out, &wl->output, g->output_layout, irb_arg(r, arg++));
    int64_t outer;
    double inner;
    irb_walk_output(r, &out, fn, &x, &outer, &inner);
  }
  irb_close(r);
  return NULL;
}
