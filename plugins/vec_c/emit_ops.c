/* Emitters for the ops without knobs: dense, pooling, global average
 * pooling, elementwise, softmax, concat, layout transforms, bias_add,
 * transpose, resize and normalize.
 *
 * Pooling, global pooling, unary elementwise, bias_add and resize follow the
 * layout the producer delivers (row-major, NCHW[x]c or NHWC), and so does
 * normalize where it normalizes a 4-d tensor's channel dim, so nothing
 * is transformed between NCHWc convolutions. A 4-d layout is handled as a
 * channel block b (hetc_kit_layout_block): row-major is b = 1, NHWC is b = C. */
#include <stdio.h>
#include <string.h>

#include "plugin_normalize.h"
#include "plugin_resize.h"
#include "vec.h"

#define L(ind, ...) hpc_strbuf_line(&e->src, ind, __VA_ARGS__)

static long long ll(int64_t v) { return (long long)v; }

/* The layout an op without knobs works in: the input's when it is a 4-d
 * NCHWC or NHWC tensor, else row-major. */
static hetc_plugin_layout_t follow_hint(const hetc_plugin_tensor_t *t) {
  if (t->rank == 4 && t->layout.kind == HETC_PLUGIN_LAYOUT_NCHWC &&
      t->layout.block >= 1)
    return hetc_kit_layout_nchwc(t->layout.block);
  if (t->rank == 4 && t->layout.kind == HETC_PLUGIN_LAYOUT_NHWC) {
    hetc_plugin_layout_t l = {HETC_PLUGIN_LAYOUT_NHWC, 0};
    return l;
  }
  return hetc_kit_layout_row_major();
}

static hetc_plugin_layout_t normalized(hetc_plugin_layout_t l) {
  if (l.kind != HETC_PLUGIN_LAYOUT_NCHWC) l.block = 0;
  return l;
}

/* The preamble and the kernel's first (usually only) parallel body. */
static void begin_kernel(vec_emit_t *e, int32_t activation) {
  vec_emit_preamble(e, activation);
  vec_emit_body_open(e);
}

/* Closes the body: its loop has `count` iterations of `work` element
 * operations each (emit.c sizes the grain by it). */
static void end_kernel(vec_emit_t *e, int64_t count, double work) {
  vec_emit_body_close(e, count, work);
}

/* ------------------------------------------------------------------------ */

hetc_plugin_status_t vec_emit_dense(vec_emit_t *e) {
  const hetc_plugin_workload_t *wl = e->wl;
  const hetc_plugin_epilogue_t *ep = &wl->epilogue;
  const int64_t N = wl->inputs[0].shape[0], K = wl->inputs[0].shape[1];
  const int64_t U = wl->output.shape[1];
  e->num_inputs = wl->num_inputs;
  for (int32_t i = 0; i < wl->num_inputs; ++i)
    e->input_layouts[i] = hetc_kit_layout_row_major();
  e->output_layout = hetc_kit_layout_row_major();
  e->num_params = 1 + ep->has_bias;
  e->param_bytes[0] = (uint64_t)(U * K) * 4;
  e->param_bytes[1] = ep->has_bias ? (uint64_t)U * 4 : 0;

  begin_kernel(e, ep->activation);
  int index = 0;
  vec_emit_arg(e, "in", index++, 0);
  if (ep->has_residual) vec_emit_arg(e, "res", index++, 0);
  vec_emit_arg(e, "wt", index++, 0);
  if (ep->has_bias) vec_emit_arg(e, "bias", index++, 0);
  vec_emit_arg(e, "out", index++, 1);
  L(1, "const long N = %lld, K = %lld, U = %lld; (void)N;", ll(N), ll(K), ll(U));
  L(1, "for (long t = t0; t < t1; ++t) {");
  L(2, "const long n = t / U, u = t %% U;");
  L(2, "const float *restrict x = in + n * K;");
  L(2, "const float *restrict w = wt + u * K;");
  L(2, "float acc = 0.f;");
  L(0, "#pragma omp simd reduction(+:acc)");
  L(2, "for (long k = 0; k < K; ++k) acc += x[k] * w[k];");
  L(2, "const float v = acc%s%s;", ep->has_bias ? " + bias[u]" : "",
    ep->has_residual ? " + res[t]" : "");
  L(2, "out[t] = %s;", ep->activation != HETC_PLUGIN_ACT_NONE ? "act(v)" : "v");
  L(1, "}");
  end_kernel(e, N * U, (double)K);
  vec_emit_stat(e, (double)K, (double)(N * U));
  return NULL;
}

/* ------------------------------------------------------------------------ */

hetc_plugin_status_t vec_emit_pool(vec_emit_t *e) {
  const hetc_plugin_workload_t *wl = e->wl;
  const int is_max = wl->op == HETC_PLUGIN_OP_MAX_POOL2D;
  const int64_t *in = wl->inputs[0].shape, *out = wl->output.shape;
  const int64_t N = in[0], C = in[1], H = in[2], W = in[3];
  const int64_t OH = out[2], OW = out[3];
  const int64_t KH = wl->kernel[0], KW = wl->kernel[1];
  const int64_t SH = wl->strides[0], SW = wl->strides[1];
  const int64_t PT = wl->padding[0], PL = wl->padding[1];
  const int64_t PB = wl->padding[2], PR = wl->padding[3];
  const hetc_plugin_layout_t layout = follow_hint(&wl->inputs[0]);
  const int64_t B = hetc_kit_layout_block(layout, C), CB = hetc_kit_ceil_div(C, B);
  e->num_inputs = 1;
  e->input_layouts[0] = layout;
  e->output_layout = layout;

  begin_kernel(e, HETC_PLUGIN_ACT_NONE);
  vec_emit_arg(e, "in", 0, 0);
  vec_emit_arg(e, "out", 1, 1);
  L(1, "const long N = %lld, C = %lld, H = %lld, W = %lld, OH = %lld, OW = %lld;",
    ll(N), ll(C), ll(H), ll(W), ll(OH), ll(OW));
  L(1, "const long KH = %lld, KW = %lld, SH = %lld, SW = %lld, PT = %lld, PL = %lld;",
    ll(KH), ll(KW), ll(SH), ll(SW), ll(PT), ll(PL));
  L(1, "const long B = %lld, CB = %lld; (void)N; (void)B; (void)C; (void)CB;", ll(B), ll(CB));
  if (!is_max) {
    /* PyTorch's divisor factorises into a row and a column count: the
     * window clipped to the padded input (count_include_pad) or to the
     * input. */
    hpc_strbuf_printf(&e->src, "  static const float DIVH[%lld] = {", ll(OH));
    for (int64_t oh = 0; oh < OH; ++oh) {
      int64_t h0 = oh * SH - PT, h1 = h0 + KH < H + PB ? h0 + KH : H + PB;
      int64_t count = h1 - h0;
      if (!wl->count_include_pad) count = (h1 < H ? h1 : H) - (h0 > 0 ? h0 : 0);
      hpc_strbuf_printf(&e->src, "%s%lld.f", oh ? ", " : "", ll(count));
    }
    hpc_strbuf_printf(&e->src, "};\n  static const float DIVW[%lld] = {", ll(OW));
    for (int64_t ow = 0; ow < OW; ++ow) {
      int64_t w0 = ow * SW - PL, w1 = w0 + KW < W + PR ? w0 + KW : W + PR;
      int64_t count = w1 - w0;
      if (!wl->count_include_pad) count = (w1 < W ? w1 : W) - (w0 > 0 ? w0 : 0);
      hpc_strbuf_printf(&e->src, "%s%lld.f", ow ? ", " : "", ll(count));
    }
    hpc_strbuf_printf(&e->src, "};\n");
  }
  /* Valid rows per output row, for the statistics. */
  double valid_rows = 0;
  for (int64_t oh = 0; oh < OH; ++oh)
    for (int64_t kh = 0; kh < KH; ++kh) {
      int64_t ih = oh * SH + kh - PT;
      valid_rows += ih >= 0 && ih < H;
    }
  const char *init = is_max ? "-__builtin_inff()" : "0.f";
  if (B == 1) {
    /* Row-major: whole output rows accumulate, innermost over ow. */
    int64_t lo[64], hi[64];
    if (KW > 64)
      return vec_status(HETC_PLUGIN_STATUS_UNSUPPORTED, "vec: pool kernel width above 64");
    hpc_strbuf_printf(&e->src, "  static const long OWLO[%lld] = {", ll(KW));
    for (int64_t kw = 0; kw < KW; ++kw) {
      /* 0 <= ow*SW + kw - PL < W */
      int64_t a = PL - kw, l = a <= 0 ? 0 : (a + SW - 1) / SW;
      int64_t b = W - 1 + PL - kw, h = b < 0 ? 0 : b / SW + 1;
      if (h > OW) h = OW;
      if (h < l) h = l;
      lo[kw] = l;
      hi[kw] = h;
      hpc_strbuf_printf(&e->src, "%s%lld", kw ? ", " : "", ll(l));
    }
    hpc_strbuf_printf(&e->src, "};\n  static const long OWHI[%lld] = {", ll(KW));
    for (int64_t kw = 0; kw < KW; ++kw)
      hpc_strbuf_printf(&e->src, "%s%lld", kw ? ", " : "", ll(hi[kw]));
    hpc_strbuf_printf(&e->src, "};\n");
    L(1, "for (long t = t0; t < t1; ++t) {");
    L(2, "const long nc = t / OH, oh = t %% OH;");
    L(2, "const float *restrict plane = in + nc * H * W;");
    L(2, "float *restrict orow = out + t * OW;");
    L(2, "for (long ow = 0; ow < OW; ++ow) orow[ow] = %s;", init);
    L(2, "for (long kh = 0; kh < KH; ++kh) {");
    L(3, "const long ih = oh * SH + kh - PT;");
    L(3, "if (ih < 0 || ih >= H) continue;");
    L(3, "const float *restrict irow = plane + ih * W;");
    L(3, "for (long kw = 0; kw < KW; ++kw) {");
    L(4, "const long base = kw - PL;");
    L(4, "for (long ow = OWLO[kw]; ow < OWHI[kw]; ++ow) {");
    L(5, "const float x = irow[base + ow * SW];");
    if (is_max)
      L(5, "orow[ow] = (x > orow[ow] || x != x) ? x : orow[ow];");
    else
      L(5, "orow[ow] += x;");
    L(4, "}");
    L(3, "}");
    L(2, "}");
    if (!is_max)
      L(2, "for (long ow = 0; ow < OW; ++ow) orow[ow] = orow[ow] / (DIVH[oh] * DIVW[ow]);");
    L(1, "}");
    end_kernel(e, N * C * OH, (double)(OW * KH * KW));
    double rows = (double)(N * C);
    vec_emit_stat(e, (double)OW, rows * (double)OH * (is_max ? 1 : 2));
    for (int64_t kw = 0; kw < KW; ++kw)
      vec_emit_stat(e, (double)(hi[kw] - lo[kw]), rows * valid_rows);
  } else {
    /* Blocked: innermost over the channel block. */
    L(1, "for (long t = t0; t < t1; ++t) {");
    L(2, "const long ncb = t / OH, oh = t %% OH;");
    L(2, "const float *restrict plane = in + ncb * H * W * B;");
    L(2, "float *restrict orow = out + t * OW * B;");
    L(2, "for (long ow = 0; ow < OW; ++ow) {");
    L(3, "float *restrict o = orow + ow * B;");
    L(0, "#pragma omp simd");
    L(3, "for (long c = 0; c < B; ++c) o[c] = %s;", init);
    L(3, "for (long kh = 0; kh < KH; ++kh) {");
    L(4, "const long ih = oh * SH + kh - PT;");
    L(4, "if (ih < 0 || ih >= H) continue;");
    L(4, "for (long kw = 0; kw < KW; ++kw) {");
    L(5, "const long iw = ow * SW + kw - PL;");
    L(5, "if (iw < 0 || iw >= W) continue;");
    L(5, "const float *restrict x = plane + (ih * W + iw) * B;");
    L(0, "#pragma omp simd");
    if (is_max)
      L(5, "for (long c = 0; c < B; ++c) o[c] = (x[c] > o[c] || x[c] != x[c]) ? x[c] : o[c];");
    else
      L(5, "for (long c = 0; c < B; ++c) o[c] += x[c];");
    L(4, "}");
    L(3, "}");
    if (!is_max) {
      L(3, "const float d = DIVH[oh] * DIVW[ow];");
      L(0, "#pragma omp simd");
      L(3, "for (long c = 0; c < B; ++c) o[c] = o[c] / d;");
    }
    L(2, "}");
    L(1, "}");
    end_kernel(e, N * CB * OH, (double)(OW * B * KH * KW));
    double pixels = (double)(N * CB * OH * OW);
    double valid_cols = 0;
    for (int64_t ow = 0; ow < OW; ++ow)
      for (int64_t kw = 0; kw < KW; ++kw) {
        int64_t iw = ow * SW + kw - PL;
        valid_cols += iw >= 0 && iw < W;
      }
    vec_emit_stat(e, (double)B, pixels * (is_max ? 1 : 2));
    vec_emit_stat(e, (double)B, (double)(N * CB) * valid_rows * valid_cols);
  }
  return NULL;
}

/* ------------------------------------------------------------------------ */

hetc_plugin_status_t vec_emit_global_pool(vec_emit_t *e) {
  const hetc_plugin_workload_t *wl = e->wl;
  const int64_t *in = wl->inputs[0].shape;
  const int64_t N = in[0], C = in[1], P = in[2] * in[3];
  const hetc_plugin_layout_t layout = follow_hint(&wl->inputs[0]);
  const int64_t B = hetc_kit_layout_block(layout, C), CB = hetc_kit_ceil_div(C, B);
  e->num_inputs = 1;
  e->input_layouts[0] = layout;
  e->output_layout = layout;
  begin_kernel(e, HETC_PLUGIN_ACT_NONE);
  vec_emit_arg(e, "in", 0, 0);
  vec_emit_arg(e, "out", 1, 1);
  L(1, "const long N = %lld, CB = %lld, B = %lld, P = %lld; (void)N; (void)CB;", ll(N), ll(CB),
    ll(B), ll(P));
  L(1, "for (long t = t0; t < t1; ++t) {");
  L(2, "const float *restrict x = in + t * P * B;");
  if (B == 1) {
    L(2, "float s = 0.f;");
    L(0, "#pragma omp simd reduction(+:s)");
    L(2, "for (long p = 0; p < P; ++p) s += x[p];");
    L(2, "out[t] = s / (float)P;");
    vec_emit_stat(e, (double)P, (double)(N * CB));
  } else {
    L(2, "float *restrict o = out + t * B;");
    L(0, "#pragma omp simd");
    L(2, "for (long c = 0; c < B; ++c) o[c] = 0.f;");
    L(2, "for (long p = 0; p < P; ++p)");
    L(0, "#pragma omp simd");
    L(3, "for (long c = 0; c < B; ++c) o[c] += x[p * B + c];");
    L(0, "#pragma omp simd");
    L(2, "for (long c = 0; c < B; ++c) o[c] = o[c] / (float)P;");
    vec_emit_stat(e, (double)B, (double)(N * CB) * (double)(P + 2));
  }
  L(1, "}");
  end_kernel(e, N * CB, (double)(P * B));
  return NULL;
}

/* ------------------------------------------------------------------------ */


static int same_dims(const hetc_plugin_tensor_t *a, const hetc_plugin_tensor_t *b) {
  if (a->rank != b->rank) return 0;
  for (int32_t i = 0; i < a->rank; ++i)
    if (a->shape[i] != b->shape[i]) return 0;
  return 1;
}

hetc_plugin_status_t vec_emit_elementwise(vec_emit_t *e) {
  const hetc_plugin_workload_t *wl = e->wl;
  const hetc_plugin_tensor_t *a = &wl->inputs[0];
  if (wl->binary == HETC_PLUGIN_BINARY_NONE) {
    const hetc_plugin_layout_t layout = hpc_elementwise_row_major_only(wl) ? hetc_kit_layout_row_major() : follow_hint(a);
    const int64_t P = hetc_kit_physical_count(a, layout);
    e->num_inputs = 1;
    e->input_layouts[0] = layout;
    e->output_layout = layout;
    begin_kernel(e, wl->activation);
    vec_emit_arg(e, "in", 0, 0);
    vec_emit_arg(e, "out", 1, 1);
    L(1, "const long P = %lld; (void)P;", ll(P));
    L(0, "#pragma omp simd");
    L(1, "for (long i = t0; i < t1; ++i) {");
    L(2, "const float v = in[i];");
    L(2, "out[i] = %s;", wl->activation != HETC_PLUGIN_ACT_NONE ? "act(v)" : "v");
    L(1, "}");
    end_kernel(e, P, 1);
    vec_emit_stat(e, (double)P, 1);
    if (layout.kind == HETC_PLUGIN_LAYOUT_NCHWC &&
        (wl->activation == HETC_PLUGIN_ACT_SIGMOID || wl->activation == HETC_PLUGIN_ACT_HARDSIGMOID) &&
        a->shape[1] % layout.block) {
      /* sigmoid(0) and hardsigmoid(0) are 0.5: put the padding channels
       * back to zero. */
      const int64_t B = layout.block, CB = hetc_kit_ceil_div(a->shape[1], B);
      const int64_t CL = a->shape[1] - (CB - 1) * B, HW = a->shape[2] * a->shape[3];
      /* A second body, after the first has written every element. */
      vec_emit_body_open(e);
      vec_emit_arg(e, "out", 1, 1);
      L(1, "const long NT = %lld, HW = %lld, CB = %lld, B = %lld; (void)NT;", ll(a->shape[0]),
        ll(HW), ll(CB), ll(B));
      L(1, "for (long t = t0; t < t1; ++t) {");
      L(2, "float *restrict o = out + (((t / HW) * CB + CB - 1) * HW + t %% HW) * B;");
      L(2, "for (long c = %lld; c < B; ++c) o[c] = 0.f;", ll(CL));
      L(1, "}");
      end_kernel(e, a->shape[0] * HW, (double)(B - CL));
      vec_emit_stat(e, (double)(B - CL), (double)(a->shape[0] * HW));
    }
    return NULL;
  }

  const hetc_plugin_tensor_t *b = &wl->inputs[1];
  const char *op = hpc_binary_operator(wl->binary);
  hetc_plugin_layout_t la = follow_hint(a), lb = follow_hint(b);
  e->num_inputs = 2;
  if (same_dims(a, b) && hetc_kit_layout_equal(la, lb) && !hpc_elementwise_row_major_only(wl)) {
    /* Same shape and layout: one flat loop in that layout (padding stays
     * zero: 0+0 and 0*0). */
    const int64_t P = hetc_kit_physical_count(a, la);
    e->input_layouts[0] = e->input_layouts[1] = e->output_layout = la;
    begin_kernel(e, HETC_PLUGIN_ACT_NONE);
    vec_emit_arg(e, "a", 0, 0);
    vec_emit_arg(e, "b", 1, 0);
    vec_emit_arg(e, "out", 2, 1);
    L(1, "const long P = %lld; (void)P;", ll(P));
    L(0, "#pragma omp simd");
    L(1, "for (long i = t0; i < t1; ++i) out[i] = a[i] %s b[i];", op);
    end_kernel(e, P, 1);
    vec_emit_stat(e, (double)P, 1);
    return NULL;
  }
  /* Row-major with broadcast: coalesce adjacent dims that broadcast alike;
   * the last group is the inner loop. */
  e->input_layouts[0] = e->input_layouts[1] = e->output_layout = hetc_kit_layout_row_major();
  int64_t ext[HETC_PLUGIN_MAX_RANK];
  int bc[HETC_PLUGIN_MAX_RANK];
  int32_t groups = 0;
  for (int32_t i = 0; i < a->rank; ++i) {
    if (a->shape[i] == 1) continue;
    int is_bc = b->shape[i] == 1;
    if (groups > 0 && bc[groups - 1] == is_bc) {
      ext[groups - 1] *= a->shape[i];
    } else {
      ext[groups] = a->shape[i];
      bc[groups] = is_bc;
      ++groups;
    }
  }
  int64_t inner = 1, inner_bc = 0, outer = 1;
  if (groups > 0) {
    inner = ext[groups - 1];
    inner_bc = bc[groups - 1];
    --groups;
  }
  int64_t bstride[HETC_PLUGIN_MAX_RANK];
  int64_t stride = inner_bc ? 1 : inner;
  for (int32_t j = groups - 1; j >= 0; --j) {
    bstride[j] = bc[j] ? 0 : stride;
    if (!bc[j]) stride *= ext[j];
  }
  for (int32_t j = 0; j < groups; ++j) outer *= ext[j];
  begin_kernel(e, HETC_PLUGIN_ACT_NONE);
  vec_emit_arg(e, "a", 0, 0);
  vec_emit_arg(e, "b", 1, 0);
  vec_emit_arg(e, "out", 2, 1);
  L(1, "const long OUTER = %lld, INNER = %lld; (void)OUTER;", ll(outer), ll(inner));
  L(1, "for (long t = t0; t < t1; ++t) {");
  L(2, "long r = t, boff = 0;");
  for (int32_t j = groups - 1; j >= 0; --j) {
    if (bstride[j]) L(2, "boff += (r %% %lld) * %lld;", ll(ext[j]), ll(bstride[j]));
    L(2, "r /= %lld;", ll(ext[j]));
  }
  L(2, "(void)r;");
  L(2, "const float *restrict pa = a + t * INNER;");
  L(2, "float *restrict po = out + t * INNER;");
  if (inner_bc) {
    L(2, "const float bv = b[boff];");
    L(0, "#pragma omp simd");
    L(2, "for (long i = 0; i < INNER; ++i) po[i] = pa[i] %s bv;", op);
  } else {
    L(2, "const float *restrict pb = b + boff;");
    L(0, "#pragma omp simd");
    L(2, "for (long i = 0; i < INNER; ++i) po[i] = pa[i] %s pb[i];", op);
  }
  L(1, "}");
  end_kernel(e, outer, (double)inner);
  vec_emit_stat(e, (double)inner, (double)outer);
  return NULL;
}

/* ------------------------------------------------------------------------ */

hetc_plugin_status_t vec_emit_softmax(vec_emit_t *e) {
  const hetc_plugin_tensor_t *t = &e->wl->inputs[0];
  int64_t outer = 1, inner = 1, extent = t->shape[e->wl->axis];
  for (int32_t i = 0; i < e->wl->axis; ++i) outer *= t->shape[i];
  for (int32_t i = e->wl->axis + 1; i < t->rank; ++i) inner *= t->shape[i];
  e->num_inputs = 1;
  e->input_layouts[0] = e->output_layout = hetc_kit_layout_row_major();
  begin_kernel(e, HETC_PLUGIN_ACT_NONE);
  vec_emit_arg(e, "in", 0, 0);
  vec_emit_arg(e, "out", 1, 1);
  L(1, "const long O = %lld, A = %lld, I = %lld; (void)O;", ll(outer), ll(extent), ll(inner));
  L(1, "for (long t = t0; t < t1; ++t) {");
  L(2, "const long o = t / I, i = t %% I;");
  L(2, "const float *restrict x = in + o * A * I + i;");
  L(2, "float *restrict y = out + o * A * I + i;");
  L(2, "float m = x[0];");
  L(2, "for (long a = 1; a < A; ++a) m = x[a * I] > m ? x[a * I] : m;");
  L(2, "float s = 0.f;");
  L(2, "for (long a = 0; a < A; ++a) {");
  L(3, "const float ev = expf(x[a * I] - m);");
  L(3, "y[a * I] = ev;");
  L(3, "s += ev;");
  L(2, "}");
  if (e->wl->op == HETC_PLUGIN_OP_LOG_SOFTMAX) {
    /* x - m - log(s), not log of softmax's quotient: finite where the
     * quotient would round to 0. */
    L(2, "const float ls = logf(s);");
    L(0, "#pragma omp simd");
    L(2, "for (long a = 0; a < A; ++a) y[a * I] = (x[a * I] - m) - ls;");
  } else {
    L(2, "const float r = 1.f / s;");
    L(0, "#pragma omp simd");
    L(2, "for (long a = 0; a < A; ++a) y[a * I] *= r;");
  }
  L(1, "}");
  end_kernel(e, outer * inner, 3.0 * (double)extent);
  vec_emit_stat(e, (double)extent, 3.0 * (double)(outer * inner));
  return NULL;
}

/* ------------------------------------------------------------------------ */

hetc_plugin_status_t vec_emit_concat(vec_emit_t *e) {
  const hetc_plugin_workload_t *wl = e->wl;
  const hetc_plugin_tensor_t *out = &wl->output;
  /* NCHW[x]c along channels when every input shares a block dividing its
   * channels: the same chunked copy as row-major (C_j*H*W elements per
   * image), only the layouts differ. */
  int blocked = out->rank == 4 && wl->axis == 1 &&
                wl->inputs[0].layout.kind == HETC_PLUGIN_LAYOUT_NCHWC;
  const int32_t block = wl->inputs[0].layout.block;
  for (int32_t j = 0; j < wl->num_inputs && blocked; ++j) {
    const hetc_plugin_tensor_t *t = &wl->inputs[j];
    if (t->layout.kind != HETC_PLUGIN_LAYOUT_NCHWC || t->layout.block != block ||
        block < 1 || t->shape[1] % block)
      blocked = 0;
  }
  hetc_plugin_layout_t layout = blocked ? hetc_kit_layout_nchwc(block) : hetc_kit_layout_row_major();
  e->num_inputs = wl->num_inputs;
  for (int32_t j = 0; j < wl->num_inputs; ++j) e->input_layouts[j] = layout;
  e->output_layout = layout;
  int64_t outer = 1, inner = 1;
  for (int32_t i = 0; i < wl->axis; ++i) outer *= out->shape[i];
  for (int32_t i = wl->axis + 1; i < out->rank; ++i) inner *= out->shape[i];
  const int64_t row = out->shape[wl->axis] * inner;
  if (outer >= 16) {
    /* One parallel loop over the outer rows, each copying every input's
     * chunk. */
    begin_kernel(e, HETC_PLUGIN_ACT_NONE);
    char name[16];
    for (int32_t j = 0; j < wl->num_inputs; ++j) {
      snprintf(name, sizeof(name), "in%d", j);
      vec_emit_arg(e, name, j, 0);
    }
    vec_emit_arg(e, "out", wl->num_inputs, 1);
    L(1, "const long OUTER = %lld, ROW = %lld; (void)OUTER;", ll(outer), ll(row));
    L(1, "for (long o = t0; o < t1; ++o) {");
    L(2, "float *restrict po = out + o * ROW;");
    int64_t at = 0;
    for (int32_t j = 0; j < wl->num_inputs; ++j) {
      const int64_t chunk = wl->inputs[j].shape[wl->axis] * inner;
      L(2, "{ const float *restrict p = in%d + o * %lld;", j, ll(chunk));
      L(0, "#pragma omp simd");
      L(3, "for (long i = 0; i < %lld; ++i) po[%lld + i] = p[i]; }", ll(chunk), ll(at));
      vec_emit_stat(e, (double)chunk, (double)outer);
      at += chunk;
    }
    L(1, "}");
    end_kernel(e, outer, (double)row);
    return NULL;
  }
  /* Few outer rows: each input's copy is a parallel loop of its own over
   * its OUTER x CHUNK elements, one body per input, run one after the
   * other. */
  vec_emit_preamble(e, HETC_PLUGIN_ACT_NONE);
  int64_t at = 0;
  for (int32_t j = 0; j < wl->num_inputs; ++j) {
    const int64_t chunk = wl->inputs[j].shape[wl->axis] * inner;
    vec_emit_body_open(e);
    vec_emit_arg(e, "in", j, 0);
    vec_emit_arg(e, "out", wl->num_inputs, 1);
    L(1, "const long ROW = %lld, CHUNK = %lld, AT = %lld; /* input %d */", ll(row), ll(chunk),
      ll(at), (int)j);
    L(1, "for (long t = t0; t < t1;) {");
    L(2, "const long o = t / CHUNK, i0 = t %% CHUNK;");
    L(2, "const long n = CHUNK - i0 < t1 - t ? CHUNK - i0 : t1 - t;");
    L(2, "const float *restrict p = in + o * CHUNK + i0;");
    L(2, "float *restrict po = out + o * ROW + AT + i0;");
    L(0, "#pragma omp simd");
    L(2, "for (long i = 0; i < n; ++i) po[i] = p[i];");
    L(2, "t += n;");
    L(1, "}");
    end_kernel(e, outer * chunk, 1);
    vec_emit_stat(e, (double)chunk, (double)outer);
    at += chunk;
  }
  return NULL;
}

/* ------------------------------------------------------------------------ */

hetc_plugin_status_t vec_emit_bias_add(vec_emit_t *e) {
  const hetc_plugin_tensor_t *t = &e->wl->inputs[0];
  const hetc_plugin_layout_t layout = follow_hint(t);
  const int64_t C = t->shape[1];
  const int64_t B = t->rank == 4 ? hetc_kit_layout_block(layout, C) : 1;
  e->num_inputs = 1;
  e->input_layouts[0] = e->output_layout = layout;
  e->num_params = 1;
  e->param_bytes[0] = (uint64_t)(hetc_kit_ceil_div(C, B) * B) * 4;
  begin_kernel(e, HETC_PLUGIN_ACT_NONE);
  vec_emit_arg(e, "in", 0, 0);
  vec_emit_arg(e, "bias", 1, 0);
  vec_emit_arg(e, "out", 2, 1);
  if (B == 1) {
    int64_t outer = t->shape[0], inner = 1;
    for (int32_t i = 2; i < t->rank; ++i) inner *= t->shape[i];
    L(1, "const long O = %lld, C = %lld, I = %lld; (void)O; (void)I;", ll(outer), ll(C),
      ll(inner));
    if (inner == 1) {
      L(1, "for (long o = t0; o < t1; ++o) {");
      L(0, "#pragma omp simd");
      L(2, "for (long c = 0; c < C; ++c) out[o * C + c] = in[o * C + c] + bias[c];");
      L(1, "}");
      end_kernel(e, outer, (double)C);
      vec_emit_stat(e, (double)C, (double)outer);
    } else {
      L(1, "for (long t = t0; t < t1; ++t) {");
      L(2, "const float bv = bias[t %% C];");
      L(0, "#pragma omp simd");
      L(2, "for (long i = 0; i < I; ++i) out[t * I + i] = in[t * I + i] + bv;");
      L(1, "}");
      end_kernel(e, outer * C, (double)inner);
      vec_emit_stat(e, (double)inner, (double)(outer * C));
    }
  } else {
    const int64_t CB = hetc_kit_ceil_div(C, B), P = t->shape[2] * t->shape[3];
    L(1, "const long N = %lld, CB = %lld, B = %lld, P = %lld; (void)N;", ll(t->shape[0]), ll(CB),
      ll(B), ll(P));
    L(1, "for (long t = t0; t < t1; ++t) {");
    L(2, "const float *restrict bp = bias + (t %% CB) * B;");
    L(2, "const float *restrict x = in + t * P * B;");
    L(2, "float *restrict y = out + t * P * B;");
    L(2, "for (long p = 0; p < P; ++p)");
    L(0, "#pragma omp simd");
    L(3, "for (long c = 0; c < B; ++c) y[p * B + c] = x[p * B + c] + bp[c];");
    L(1, "}");
    end_kernel(e, t->shape[0] * CB, (double)(P * B));
    vec_emit_stat(e, (double)B, (double)(t->shape[0] * CB * P));
  }
  return NULL;
}

/* ------------------------------------------------------------------------ */

/* Physical offset in a 4-d tensor of layout block `b` (channels C, CB
 * blocks) of element (n, c, h, w) given as expressions. */
static void offset_expr(char *buf, size_t size, int64_t b, int64_t C, int64_t H,
                        int64_t W, const char *n, const char *c, const char *h,
                        const char *w) {
  if (b == 1)
    snprintf(buf, size, "((%s * %lld + %s) * %lld + %s) * %lld + %s", n, ll(C), c, ll(H),
             h, ll(W), w);
  else
    snprintf(buf, size,
             "(((%s * %lld + (%s) / %lld) * %lld + %s) * %lld + %s) * %lld + (%s) %% %lld", n,
             ll(hetc_kit_ceil_div(C, b)), c, ll(b), ll(H), h, ll(W), w, ll(b), c, ll(b));
}

hetc_plugin_status_t vec_emit_layout(vec_emit_t *e) {
  const hetc_plugin_workload_t *wl = e->wl;
  const hetc_plugin_tensor_t *in = &wl->inputs[0], *out = &wl->output;
  const hetc_plugin_layout_t li = normalized(in->layout), lo = normalized(out->layout);
  e->num_inputs = 1;
  e->input_layouts[0] = li;
  e->output_layout = lo;
  begin_kernel(e, HETC_PLUGIN_ACT_NONE);
  vec_emit_arg(e, "in", 0, 0);
  vec_emit_arg(e, "out", 1, 1);
  const int same = same_dims(in, out);
  const int in_rm = li.kind == HETC_PLUGIN_LAYOUT_ROW_MAJOR;
  const int out_rm = lo.kind == HETC_PLUGIN_LAYOUT_ROW_MAJOR;
  /* Room for offset_expr's longest output: five operand strings of up to
   * 95 characters (ni..wi below, c twice), eight 20-character numbers and
   * 40 of text, 676 bytes in all. */
  char src[1024];
  if ((same && hetc_kit_layout_equal(li, lo)) || (in_rm && out_rm)) {
    /* Nothing moves: a reshape between row-major tensors or the identity. */
    const int64_t P = hetc_kit_physical_count(in, li);
    L(1, "const long P = %lld; (void)P;", ll(P));
    L(0, "#pragma omp simd");
    L(1, "for (long i = t0; i < t1; ++i) out[i] = in[i];");
    end_kernel(e, P, 1);
    vec_emit_stat(e, (double)P, 1);
  } else if (out_rm) {
    /* Input is 4-d blocked; walk it in logical order, which is the
     * row-major order of the output whatever its shape. */
    const int64_t N = in->shape[0], C = in->shape[1], H = in->shape[2], W = in->shape[3];
    const int64_t bi = hetc_kit_layout_block(li, C);
    offset_expr(src, sizeof(src), bi, C, H, W, "n", "c", "h", "w");
    L(1, "for (long t = t0; t < t1; ++t) {");
    L(2, "const long n = t / %lld, c = (t / %lld) %% %lld, h = t %% %lld;", ll(C * H), ll(H),
      ll(C), ll(H));
    L(2, "float *restrict y = out + t * %lld;", ll(W));
    L(0, "#pragma omp simd");
    L(2, "for (long w = 0; w < %lld; ++w) y[w] = in[%s];", ll(W), src);
    L(1, "}");
    end_kernel(e, N * C * H, (double)W);
    vec_emit_stat(e, (double)W, (double)(N * C * H));
  } else {
    /* Output is 4-d blocked: innermost over its channel block. */
    const int64_t N = out->shape[0], C = out->shape[1], H = out->shape[2], W = out->shape[3];
    const int64_t bo = hetc_kit_layout_block(lo, C), CBo = hetc_kit_ceil_div(C, bo);
    if (same) {
      offset_expr(src, sizeof(src), hetc_kit_layout_block(li, C), C, H, W, "n", "c", "h", "w");
    } else if (in_rm) {
      snprintf(src, sizeof(src), "((n * %lld + c) * %lld + h) * %lld + w", ll(C), ll(H), ll(W));
    } else {
      /* Reshape between 4-d tensors, input blocked: the output's logical
       * row-major index, decomposed in the input's shape. */
      const int64_t Ci = in->shape[1], Hi = in->shape[2], Wi = in->shape[3];
      L(1, "#define FLAT(n, c, h, w) ((((n) * %lld + (c)) * %lld + (h)) * %lld + (w))", ll(C),
        ll(H), ll(W));
      char ni[96], ci[96], hi[96], wi[96];
      snprintf(ni, sizeof(ni), "FLAT(n, c, h, w) / %lld", ll(Ci * Hi * Wi));
      snprintf(ci, sizeof(ci), "FLAT(n, c, h, w) / %lld %% %lld", ll(Hi * Wi), ll(Ci));
      snprintf(hi, sizeof(hi), "FLAT(n, c, h, w) / %lld %% %lld", ll(Wi), ll(Hi));
      snprintf(wi, sizeof(wi), "FLAT(n, c, h, w) %% %lld", ll(Wi));
      offset_expr(src, sizeof(src), hetc_kit_layout_block(li, Ci), Ci, Hi, Wi, ni, ci, hi, wi);
    }
    L(1, "for (long t = t0; t < t1; ++t) {");
    L(2, "const long n = t / %lld, cb = (t / %lld) %% %lld, h = t %% %lld;", ll(CBo * H),
      ll(H), ll(CBo), ll(H));
    L(2, "float *restrict y = out + t * %lld;", ll(W * bo));
    L(2, "for (long w = 0; w < %lld; ++w) {", ll(W));
    L(0, "#pragma omp simd");
    L(3, "for (long cc = 0; cc < %lld; ++cc) {", ll(bo));
    L(4, "const long c = cb * %lld + cc;", ll(bo));
    if (C % bo)
      L(4, "y[w * %lld + cc] = c < %lld ? in[%s] : 0.f;", ll(bo), ll(C), src);
    else
      L(4, "y[w * %lld + cc] = in[%s];", ll(bo), src);
    L(3, "}");
    L(2, "}");
    L(1, "}");
    end_kernel(e, N * CBo * H, (double)(W * bo));
    vec_emit_stat(e, (double)bo, (double)(N * CBo * H * W));
  }
  return NULL;
}

/* ------------------------------------------------------------------------ */

/* Row-major in and out: each parallel item is one row of the output (its
 * last dim), read from the input with that dim's stride there; the row's
 * start is the output's other coordinates through the input's strides. */
hetc_plugin_status_t vec_emit_transpose(vec_emit_t *e) {
  const hetc_plugin_workload_t *wl = e->wl;
  const hetc_plugin_tensor_t *in = &wl->inputs[0], *out = &wl->output;
  const int32_t rank = out->rank;
  int64_t in_stride[HETC_PLUGIN_MAX_RANK], stride = 1, rows = 1;
  for (int32_t d = rank - 1; d >= 0; --d) in_stride[d] = stride, stride *= in->shape[d];
  for (int32_t d = 0; d + 1 < rank; ++d) rows *= out->shape[d];
  const int64_t last = out->shape[rank - 1], step = in_stride[HETC_PLUGIN_PERM_AT(wl->axis, rank - 1)];
  e->num_inputs = 1;
  e->input_layouts[0] = e->output_layout = hetc_kit_layout_row_major();
  begin_kernel(e, HETC_PLUGIN_ACT_NONE);
  vec_emit_arg(e, "in", 0, 0);
  vec_emit_arg(e, "out", 1, 1);
  L(1, "for (long t = t0; t < t1; ++t) {");
  L(2, "long rest = t, base = 0;");
  for (int32_t d = rank - 2; d >= 0; --d)
    L(2, "base += (rest %% %lld) * %lld, rest /= %lld;", ll(out->shape[d]), ll(in_stride[HETC_PLUGIN_PERM_AT(wl->axis, d)]),
      ll(out->shape[d]));
  L(2, "(void)rest;");
  L(2, "const float *restrict x = in + base;");
  L(2, "float *restrict y = out + t * %lld;", ll(last));
  L(0, "#pragma omp simd");
  L(2, "for (long i = 0; i < %lld; ++i) y[i] = x[i * %lld];", ll(last), ll(step));
  L(1, "}");
  end_kernel(e, rows, (double)last);
  vec_emit_stat(e, (double)last, (double)rows);
  return NULL;
}

/* ------------------------------------------------------------------------ */

/* In the producer's layout, as pooling: one parallel item per output row
 * of a channel block plane, (n * CB + cb) * OH + oh. The taps are the
 * kit's, tabulated at build time (plugin_resize.h), so the kernel reads
 * the reference's pixels; linear blends as the kit's reference kernel
 * does, across the columns first, then the rows. The padding channels of
 * an NCHWc output blend the input's zeros into zeros. */
hetc_plugin_status_t vec_emit_resize(vec_emit_t *e) {
  const hetc_plugin_workload_t *wl = e->wl;
  const int64_t *in = wl->inputs[0].shape, *out = wl->output.shape;
  const int64_t N = in[0], C = in[1], H = in[2], W = in[3], OH = out[2], OW = out[3];
  const int linear = wl->params.resize.mode == HETC_PLUGIN_RESIZE_LINEAR;
  const hetc_plugin_layout_t layout = follow_hint(&wl->inputs[0]);
  const int64_t B = hetc_kit_layout_block(layout, C), CB = hetc_kit_ceil_div(C, B);
  e->num_inputs = 1;
  e->input_layouts[0] = layout;
  e->output_layout = layout;

  vec_emit_preamble(e, HETC_PLUGIN_ACT_NONE);
  hpc_resize_emit_tables(&e->src, wl, "static const");
  hpc_strbuf_printf(&e->src, "\n");
  vec_emit_body_open(e);
  vec_emit_arg(e, "in", 0, 0);
  vec_emit_arg(e, "out", 1, 1);
  L(1, "const long H = %lld, W = %lld, OH = %lld, OW = %lld, B = %lld; (void)B;", ll(H), ll(W), ll(OH),
    ll(OW), ll(B));
  char y1[64], x1[64];
  hpc_resize_hi_expr(y1, sizeof(y1), "y0", H);
  hpc_resize_hi_expr(x1, sizeof(x1), "x0", W);
  L(1, "for (long t = t0; t < t1; ++t) {");
  L(2, "const long plane = t / OH, oh = t %% OH;");
  L(2, "const long y0 = resize_row_lo[oh];");
  L(2, "const float *restrict top = in + (plane * H + y0) * W * B;");
  if (linear) {
    L(2, "const long y1 = %s;", y1);
    L(2, "const float *restrict bottom = in + (plane * H + y1) * W * B;");
    L(2, "const float fy = resize_row_weight[oh];");
  }
  L(2, "float *restrict y = out + t * OW * B;");
  if (B == 1) {
    /* Row-major: a gather along the output row. */
    L(0, "#pragma omp simd");
    L(2, "for (long ow = 0; ow < OW; ++ow) {");
    L(3, "const long x0 = resize_col_lo[ow];");
    if (linear) {
      L(3, "const long x1 = %s;", x1);
      L(3, "const float fx = resize_col_weight[ow];");
      L(3, "const float upper = top[x0] + fx * (top[x1] - top[x0]);");
      L(3, "const float lower = bottom[x0] + fx * (bottom[x1] - bottom[x0]);");
      L(3, "y[ow] = upper + fy * (lower - upper);");
    } else {
      L(3, "y[ow] = top[x0];");
    }
    L(2, "}");
    vec_emit_stat(e, (double)OW, (double)(N * CB * OH));
  } else {
    /* Blocked: the channel block is the inner, contiguous loop. */
    L(2, "for (long ow = 0; ow < OW; ++ow) {");
    L(3, "const long x0 = resize_col_lo[ow];");
    L(3, "float *restrict o = y + ow * B;");
    if (linear) {
      L(3, "const long x1 = %s;", x1);
      L(3, "const float fx = resize_col_weight[ow];");
      L(3, "const float *restrict a = top + x0 * B, *restrict b = top + x1 * B;");
      L(3, "const float *restrict c = bottom + x0 * B, *restrict d = bottom + x1 * B;");
      L(0, "#pragma omp simd");
      L(3, "for (long k = 0; k < B; ++k) {");
      L(4, "const float upper = a[k] + fx * (b[k] - a[k]);");
      L(4, "const float lower = c[k] + fx * (d[k] - c[k]);");
      L(4, "o[k] = upper + fy * (lower - upper);");
      L(3, "}");
    } else {
      L(3, "const float *restrict a = top + x0 * B;");
      L(0, "#pragma omp simd");
      L(3, "for (long k = 0; k < B; ++k) o[k] = a[k];");
    }
    L(2, "}");
    vec_emit_stat(e, (double)B, (double)(N * CB * OH * OW));
  }
  L(1, "}");
  end_kernel(e, N * CB * OH, (double)(OW * B * (linear ? 6 : 1)));
  return NULL;
}

/* ------------------------------------------------------------------------ */

/* The tile of inner positions whose statistics one parallel item keeps
 * side by side (plugin_normalize.h's lines with neighbouring i), so that
 * the loads along i are contiguous and vectorise: 64 floats, four cache
 * lines of a row-major row. */
#define NORMALIZE_TILE 64

/* Normalize in the layout plugin_normalize.h picks. The statistics are
 * summed in double, the variance about the mean (two passes), as the
 * reference has them: a float sum of values with a large common offset
 * (1000 + noise) would lose the noise's digits. The output is computed in
 * float from the mean split into a float and its float remainder, so that
 * x - mean keeps its digits too (x - (float)mean would be off by up to half
 * an ulp of the offset). */
hetc_plugin_status_t vec_emit_normalize(vec_emit_t *e) {
  const hetc_plugin_workload_t *wl = e->wl;
  const int affine = wl->params.normalize.affine;
  hpc_normalize_t g;
  hpc_normalize_geometry(wl, &g);
  e->num_inputs = 1;
  e->input_layouts[0] = e->output_layout = normalized(g.layout);
  e->num_params = affine ? 2 : 0;
  e->param_bytes[0] = e->param_bytes[1] = affine ? (uint64_t)g.channels * 4 : 0;

  begin_kernel(e, HETC_PLUGIN_ACT_NONE);
  vec_emit_arg(e, "in", 0, 0);
  if (affine) {
    vec_emit_arg(e, "scale", 1, 0);
    vec_emit_arg(e, "bias", 2, 0);
  }
  vec_emit_arg(e, "out", affine ? 3 : 1, 1);
  L(1, "const long G = %lld, PG = %lld, R = %lld, I = %lld, CB = %lld, B = %lld;", ll(g.groups),
    ll(g.per_group), ll(g.rest), ll(g.inner), ll(g.blocks), ll(g.block));
  L(1, "const double count = %lld.0, eps = %.17g;", ll(g.count), wl->params.normalize.epsilon);
  L(1, "(void)G; (void)PG; (void)R; (void)I; (void)CB; (void)B;");
  if (g.block == 1 && g.inner == 1) {
    /* A line is count contiguous elements, channel after channel: the
     * reductions vectorise along it. */
    L(1, "for (long t = t0; t < t1; ++t) {");
    L(2, "const float *restrict x = in + t * %lldL;", ll(g.count));
    L(2, "float *restrict y = out + t * %lldL;", ll(g.count));
    L(2, "double sum = 0.0, squares = 0.0;");
    L(0, "#pragma omp simd reduction(+:sum)");
    L(2, "for (long k = 0; k < %lldL; ++k) sum += x[k];", ll(g.count));
    L(2, "const double mean = sum / count;");
    L(0, "#pragma omp simd reduction(+:squares)");
    L(2, "for (long k = 0; k < %lldL; ++k) {", ll(g.count));
    L(3, "const double d = (double)x[k] - mean;");
    L(3, "squares += d * d;");
    L(2, "}");
    L(2, "const float inv = (float)(1.0 / sqrt(squares / count + eps));");
    L(2, "const float m_hi = (float)mean, m_lo = (float)(mean - (double)m_hi);");
    if (!affine) {
      L(0, "#pragma omp simd");
      L(2, "for (long k = 0; k < %lldL; ++k) y[k] = ((x[k] - m_hi) - m_lo) * inv;", ll(g.count));
      vec_emit_stat(e, (double)g.count, 3.0 * (double)g.lines);
    } else if (g.rest == 1) {
      /* LayerNorm over the last dim: the channels are the line. */
      L(2, "const float *restrict s = scale + t %% G * PG, *restrict b = bias + t %% G * PG;");
      L(0, "#pragma omp simd");
      L(2, "for (long c = 0; c < PG; ++c) y[c] = ((x[c] - m_hi) - m_lo) * inv * s[c] + b[c];");
      vec_emit_stat(e, (double)g.count, 3.0 * (double)g.lines);
    } else {
      L(2, "for (long c = 0; c < PG; ++c) {");
      L(3, "const long ch = t %% G * PG + c;");
      L(3, "const float a = inv * scale[ch], b = bias[ch];");
      L(3, "const float *restrict xc = x + c * R;");
      L(3, "float *restrict yc = y + c * R;");
      L(0, "#pragma omp simd");
      L(3, "for (long r = 0; r < R; ++r) yc[r] = ((xc[r] - m_hi) - m_lo) * a + b;");
      L(2, "}");
      vec_emit_stat(e, (double)g.count, 2.0 * (double)g.lines);
      vec_emit_stat(e, (double)g.rest, (double)(g.lines * g.per_group));
    }
    L(1, "}");
    end_kernel(e, g.lines, 3.0 * (double)g.count);
  } else {
    /* Neighbouring lines side by side: one item is a tile of inner
     * positions of one (outer index, group), each channel's rows read at
     * the tile's positions (contiguous in row-major; a block's stride
     * apart otherwise). */
    const int64_t T = g.inner < NORMALIZE_TILE ? g.inner : NORMALIZE_TILE;
    const int64_t tiles = hetc_kit_ceil_div(g.inner, T);
    L(1, "for (long t = t0; t < t1; ++t) {");
    L(2, "const long tile = t %% %lldL, grp = t / %lldL %% G, o = t / %lldL / G;", ll(tiles), ll(tiles),
      ll(tiles));
    L(2, "const long i0 = tile * %lldL, len = I - i0 < %lldL ? I - i0 : %lldL;", ll(T), ll(T), ll(T));
    L(2, "double acc[%lld], mean[%lld];", ll(T), ll(T));
    L(2, "float inv[%lld], m_hi[%lld], m_lo[%lld];", ll(T), ll(T), ll(T));
    /* The pass over a line's elements: channel c's rows, then the tile's
     * positions along a row (`at` is the position's offset). */
    const char *open_c = "for (long c = grp * PG; c < grp * PG + PG; ++c) {";
    const char *row = "const long at = ((o * CB + c / B) * R * I + r * I + i0) * B + c % B;";
    L(2, "for (long j = 0; j < len; ++j) acc[j] = 0.0;");
    L(2, "%s", open_c);
    L(3, "for (long r = 0; r < R; ++r) {");
    L(4, "%s", row);
    L(0, "#pragma omp simd");
    L(4, "for (long j = 0; j < len; ++j) acc[j] += in[at + j * B];");
    L(3, "}");
    L(2, "}");
    L(2, "for (long j = 0; j < len; ++j) {");
    L(3, "mean[j] = acc[j] / count;");
    L(3, "acc[j] = 0.0;");
    L(2, "}");
    L(2, "%s", open_c);
    L(3, "for (long r = 0; r < R; ++r) {");
    L(4, "%s", row);
    L(0, "#pragma omp simd");
    L(4, "for (long j = 0; j < len; ++j) {");
    L(5, "const double d = (double)in[at + j * B] - mean[j];");
    L(5, "acc[j] += d * d;");
    L(4, "}");
    L(3, "}");
    L(2, "}");
    L(2, "for (long j = 0; j < len; ++j) {");
    L(3, "inv[j] = (float)(1.0 / sqrt(acc[j] / count + eps));");
    L(3, "m_hi[j] = (float)mean[j];");
    L(3, "m_lo[j] = (float)(mean[j] - (double)m_hi[j]);");
    L(2, "}");
    L(2, "%s", open_c);
    L(3, "const float a = %s, b = %s;", affine ? "scale[c]" : "1.0f", affine ? "bias[c]" : "0.0f");
    L(3, "for (long r = 0; r < R; ++r) {");
    L(4, "%s", row);
    L(0, "#pragma omp simd");
    L(4, "for (long j = 0; j < len; ++j) out[at + j * B] = ((in[at + j * B] - m_hi[j]) - m_lo[j]) * inv[j] * a + b;");
    L(3, "}");
    L(2, "}");
    L(1, "}");
    const int64_t items = g.outer * g.groups * tiles;
    end_kernel(e, items, 3.0 * (double)(g.count * T));
    vec_emit_stat(e, (double)T, 3.0 * (double)(items * g.count));
  }
  if (g.padding) {
    /* The last block's padding channels, at every pixel of every image. */
    vec_emit_body_open(e);
    vec_emit_arg(e, "out", affine ? 3 : 1, 1);
    L(1, "for (long t = t0; t < t1; ++t) {");
    L(2, "float *restrict y = out + ((t / %lldL * %lldL + %lldL) * %lldL + t %% %lldL) * %lldL;", ll(g.plane),
      ll(g.blocks), ll(g.blocks - 1), ll(g.plane), ll(g.plane), ll(g.block));
    L(2, "for (long k = %lldL; k < %lldL; ++k) y[k] = 0.0f;", ll(g.block - g.padding), ll(g.block));
    L(1, "}");
    end_kernel(e, g.outer * g.plane, (double)g.padding);
    vec_emit_stat(e, (double)g.padding, (double)(g.outer * g.plane));
  }
  return NULL;
}
