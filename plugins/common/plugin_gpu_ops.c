/* The ops without knobs for the GPU-style plugins, as kernel text against
 * the portability layer (plugin_gpu_dialect.c). The text must be valid both
 * as C++ (NVRTC) and as OpenCL C 1.2: so no OpenCL built-ins (the HK_
 * macros, or plain operators, stand for them), no `restrict`, no compound
 * literals.
 *
 * Shapes are static and baked into the text as constants; indices are
 * `long` since a padded tensor may pass 2^31 elements.
 *
 * Pooling, global pooling, unary elementwise, same-shape binary ops,
 * concat, bias_add, resize and normalize of a 4-d tensor's channels follow
 * the layout the producer delivers (row-major, NCHW[x]c or NHWC), so
 * nothing is transformed between NCHWc convolutions.
 * A 4-d layout is handled as a channel block b (hetc_kit_layout_block):
 * row-major is b = 1, NHWC is b = C, and the element (n, c, h, w) lies at
 * (((n*CB + c/b)*H + h)*W + w)*b + c%b. Kernels writing NCHWc write zeros
 * into the padding channels. */
#include "plugin_gpu_ops.h"

#include <stdarg.h>
#include <stdio.h>

#include "plugin_normalize.h"
#include "plugin_resize.h"
#include "plugin_workload.h"

#define L(ind, ...) hpc_strbuf_line(o->src, ind, __VA_ARGS__)

static long long ll(int64_t v) { return (long long)v; }

/* Formats `reason` and returns `code`, for the emitters' failures. */
static int32_t fail(char *reason, size_t size, int32_t code, const char *format, ...)
    __attribute__((format(printf, 4, 5)));
static int32_t fail(char *reason, size_t size, int32_t code, const char *format, ...) {
  va_list args;
  va_start(args, format);
  vsnprintf(reason, size, format, args);
  va_end(args);
  return code;
}

const char *hpc_gpu_act_expr(int32_t activation) {
  switch (activation) {
    case HETC_PLUGIN_ACT_RELU: return "HK_FMAX(v, 0.0f)";
    case HETC_PLUGIN_ACT_RELU6: return "HK_FMIN(HK_FMAX(v, 0.0f), 6.0f)";
    case HETC_PLUGIN_ACT_SIGMOID: return "1.0f / (1.0f + HK_EXP(-v))";
    case HETC_PLUGIN_ACT_TANH: return "HK_TANH(v)";
    case HETC_PLUGIN_ACT_ELU: return "(v > 0.0f ? v : HK_EXPM1(v))";
    case HETC_PLUGIN_ACT_SOFTPLUS: return "(HK_FMAX(v, 0.0f) + HK_LOG1P(HK_EXP(-HK_FABS(v))))";
    case HETC_PLUGIN_ACT_EXP: return "HK_EXP(v)";
    case HETC_PLUGIN_ACT_LOG: return "HK_LOG(v)";
    case HETC_PLUGIN_ACT_SILU: return HPC_SILU_EXPR("HK_EXP");
    case HETC_PLUGIN_ACT_HARDSWISH: return HPC_HARDSWISH_EXPR;
    case HETC_PLUGIN_ACT_HARDSIGMOID: return HPC_HARDSIGMOID_EXPR;
    case HETC_PLUGIN_ACT_GELU: return HPC_GELU_EXPR("HK_ERFC");
    case HETC_PLUGIN_ACT_GELU_TANH: return HPC_GELU_TANH_EXPR("HK_EXP");
    case HETC_PLUGIN_ACT_ERF: return "HK_ERF(v)";
    default: return "v";
  }
}

/* The layout an op without knobs works in: the input's when it is a 4-d
 * NCHWC or NHWC tensor, else row-major. */
static hetc_plugin_layout_t follow_hint(const hetc_plugin_tensor_t *t) {
  if (t->rank == 4 && t->layout.kind == HETC_PLUGIN_LAYOUT_NCHWC && t->layout.block >= 1)
    return hetc_kit_layout_nchwc(t->layout.block);
  if (t->rank == 4 && t->layout.kind == HETC_PLUGIN_LAYOUT_NHWC) {
    hetc_plugin_layout_t l = {HETC_PLUGIN_LAYOUT_NHWC, 0};
    return l;
  }
  return hetc_kit_layout_row_major();
}

static int same_dims(const hetc_plugin_tensor_t *a, const hetc_plugin_tensor_t *b) {
  if (a->rank != b->rank) return 0;
  for (int32_t i = 0; i < a->rank; ++i)
    if (a->shape[i] != b->shape[i]) return 0;
  return 1;
}

/* Fills the boundary: `num_inputs` inputs, all in layout `in`, no
 * workspace. */
static void set_boundary(const hpc_gpu_ops_t *o, int32_t num_inputs, hetc_plugin_layout_t in,
                         hetc_plugin_layout_t out, int32_t num_params) {
  *o->num_inputs = num_inputs;
  for (int32_t j = 0; j < num_inputs; ++j) o->input_layouts[j] = in;
  *o->output_layout = out;
  *o->num_params = num_params;
  *o->workspace_bytes = 0;
}

/* Starts kernel `name` with its thread index `i` and the guard for the
 * rounded-up range. */
static void open_kernel(const hpc_gpu_ops_t *o, const char *name, const char *params,
                        int64_t items) {
  L(0, "HK_KERNEL(%d, 1, 1) %s(%s) {", HPC_GPU_OPS_BLOCK, name, params);
  L(1, "const long i = HK_GID_X;");
  L(1, "if (i >= %lldL) return;", ll(items));
}

static void close_kernel(const hpc_gpu_ops_t *o) { L(0, "}\n"); }

/* Adds the 1-d launch of `items` threads with its buffer arguments. */
static int32_t add_launch(const hpc_gpu_ops_t *o, const char *kernel, int64_t items,
                          int32_t num_args, const int32_t *args, char *reason, size_t size) {
  if (o->add_launch(o->ctx, kernel, items, num_args, args) == 0) return 0;
  return fail(reason, size, HETC_PLUGIN_STATUS_INTERNAL,
              "%s: no room for launch %s of %lld threads and %d buffers", o->plugin_name, kernel,
              ll(items), num_args);
}

/* The common case: one input, the output, no params. */
static int32_t add_unary_launch(const hpc_gpu_ops_t *o, const char *kernel, int64_t items,
                                char *reason, size_t size) {
  const int32_t args[2] = {0, 1};
  return add_launch(o, kernel, items, 2, args, reason, size);
}

#define UNARY_PARAMS "HK_GLOBAL const float *HK_RESTRICT in, HK_GLOBAL float *HK_RESTRICT out"

/* The expression of the channel of physical index `index` in a tensor of
 * block `b`, CB blocks and `plane` elements per channel (H*W; for a
 * row-major tensor of any rank, the product of the dims after axis 1). */
static void channel_expr(char *buf, size_t size, const char *index, int64_t b, int64_t CB,
                         int64_t plane) {
  if (b == 1)
    snprintf(buf, size, "%s / %lldL %% %lldL", index, ll(plane), ll(CB));
  else if (CB == 1)
    snprintf(buf, size, "%s %% %lldL", index, ll(b));
  else
    snprintf(buf, size, "%s / %lldL %% %lldL * %lldL + %s %% %lldL", index, ll(b * plane),
             ll(CB), ll(b), index, ll(b));
}

/* Declares n, c, h, w (each prefixed with `prefix`) for physical index
 * `index` of a 4-d tensor of channel block `b`. */
static void emit_unflatten(const hpc_gpu_ops_t *o, const char *prefix, const char *index, int64_t b,
                           int64_t C, int64_t H, int64_t W) {
  const int64_t CB = hetc_kit_ceil_div(C, b);
  char c[160];
  channel_expr(c, sizeof(c), index, b, CB, H * W);
  if (b == 1)
    L(1, "const long %sw = %s %% %lldL, %sh = %s / %lldL %% %lldL;", prefix, index, ll(W), prefix,
      index, ll(W), ll(H));
  else
    L(1, "const long %sw = %s / %lldL %% %lldL, %sh = %s / %lldL %% %lldL;", prefix, index, ll(b),
      ll(W), prefix, index, ll(b * W), ll(H));
  L(1, "const long %sc = %s, %sn = %s / %lldL;", prefix, c, prefix, index, ll(b * W * H * CB));
}

/* The expression of the physical offset of (n, c, h, w) in a 4-d tensor of
 * channel block `b`, the variables named with prefix `p`. */
static void offset_expr(char *buf, size_t size, const char *p, int64_t b, int64_t C, int64_t H,
                        int64_t W) {
  const int64_t CB = hetc_kit_ceil_div(C, b);
  if (b == 1)
    snprintf(buf, size, "((%sn * %lldL + %sc) * %lldL + %sh) * %lldL + %sw", p, ll(C), p,
             ll(H), p, ll(W), p);
  else if (CB == 1)
    snprintf(buf, size, "((%sn * %lldL + %sh) * %lldL + %sw) * %lldL + %sc", p, ll(H), p,
             ll(W), p, ll(b), p);
  else
    snprintf(buf, size,
             "(((%sn * %lldL + %sc / %lldL) * %lldL + %sh) * %lldL + %sw) * %lldL + %sc %% %lldL",
             p, ll(CB), p, ll(b), ll(H), p, ll(W), p, ll(b), p, ll(b));
}

/* ------------------------------------------------------------------------ */

int32_t hpc_gpu_emit_pool(const hpc_gpu_ops_t *o, char *reason, size_t size) {
  const hetc_plugin_workload_t *wl = o->wl;
  const int is_max = wl->op == HETC_PLUGIN_OP_MAX_POOL2D;
  const int64_t *in = wl->inputs[0].shape, *out = wl->output.shape;
  const int64_t C = in[1], H = in[2], W = in[3], OH = out[2], OW = out[3];
  const hetc_plugin_layout_t layout = follow_hint(&wl->inputs[0]);
  const int64_t B = hetc_kit_layout_block(layout, C), CB = hetc_kit_ceil_div(C, B);
  const int64_t items = hetc_kit_physical_count(&wl->output, layout);
  set_boundary(o, 1, layout, layout, 0);

  open_kernel(o, "pool", UNARY_PARAMS, items);
  /* The thread's output pixel and lane of the channel block; `plane` is
   * n*CB + cb, which addresses the input's matching block plane. */
  L(1, "const long lane = i %% %lldL, ow = i / %lldL %% %lldL;", ll(B), ll(B), ll(OW));
  L(1, "const long oh = i / %lldL %% %lldL, plane = i / %lldL;", ll(B * OW), ll(OH),
    ll(B * OW * OH));
  if (C % B)
    L(1, "if (plane %% %lldL * %lldL + lane >= %lldL) { out[i] = 0.0f; return; }", ll(CB), ll(B),
      ll(C));
  L(1, "const long h0 = oh * %dL - %dL, w0 = ow * %dL - %dL;", wl->strides[0],
    wl->padding[0], wl->strides[1], wl->padding[1]);
  /* The window clipped to the input; conditionals rather than integer
   * max/min, which are built-ins in OpenCL C but not in C++. */
  L(1, "const long h_begin = h0 > 0L ? h0 : 0L, h_end = h0 + %dL < %lldL ? h0 + %dL : %lldL;",
    wl->kernel[0], ll(H), wl->kernel[0], ll(H));
  L(1, "const long w_begin = w0 > 0L ? w0 : 0L, w_end = w0 + %dL < %lldL ? w0 + %dL : %lldL;",
    wl->kernel[1], ll(W), wl->kernel[1], ll(W));
  L(1, "HK_GLOBAL const float *HK_RESTRICT x = in + plane * %lldL + lane;", ll(H * W * B));
  L(1, "float acc = %s;", is_max ? "HK_NEG_INF" : "0.0f");
  L(1, "for (long ih = h_begin; ih < h_end; ++ih)");
  L(2, "for (long iw = w_begin; iw < w_end; ++iw) {");
  L(3, "const float v = x[(ih * %lldL + iw) * %lldL];", ll(W), ll(B));
  /* NaN wins, as in PyTorch: a NaN input is never hidden by a max. `v != v`
   * is the NaN test both languages have without a built-in (no fast-math
   * in either plugin folds it away). */
  if (is_max)
    L(3, "if (v > acc || v != v) acc = v;");
  else
    L(3, "acc += v;");
  L(2, "}");
  if (is_max) {
    L(1, "out[i] = acc;");
  } else if (wl->count_include_pad) {
    /* The window clipped to the padded input: smaller than KH*KW only for
     * a ceil_mode window hanging past the bottom/right padding. */
    L(1, "const long h_pad = (h0 + %dL < %lldL ? h0 + %dL : %lldL) - h0;", wl->kernel[0],
      ll(H + wl->padding[2]), wl->kernel[0], ll(H + wl->padding[2]));
    L(1, "const long w_pad = (w0 + %dL < %lldL ? w0 + %dL : %lldL) - w0;", wl->kernel[1],
      ll(W + wl->padding[3]), wl->kernel[1], ll(W + wl->padding[3]));
    L(1, "out[i] = acc / (float)(h_pad * w_pad);");
  } else {
    L(1, "out[i] = acc / (float)((h_end - h_begin) * (w_end - w_begin));");
  }
  close_kernel(o);
  return add_unary_launch(o, "pool", items, reason, size);
}

/* ------------------------------------------------------------------------ */

int32_t hpc_gpu_emit_global_pool(const hpc_gpu_ops_t *o, char *reason, size_t size) {
  const hetc_plugin_workload_t *wl = o->wl;
  const int64_t *in = wl->inputs[0].shape;
  const int64_t C = in[1], P = in[2] * in[3];
  const hetc_plugin_layout_t layout = follow_hint(&wl->inputs[0]);
  const int64_t B = hetc_kit_layout_block(layout, C);
  /* [N, C, 1, 1] lies as N*CB*B elements in every layout. */
  const int64_t items = hetc_kit_physical_count(&wl->output, layout);
  set_boundary(o, 1, layout, layout, 0);

  open_kernel(o, "global_pool", UNARY_PARAMS, items);
  /* Neighbouring threads are neighbouring channels, so in a blocked layout
   * their loads are contiguous. */
  L(1, "const long lane = i %% %lldL, plane = i / %lldL;", ll(B), ll(B));
  L(1, "HK_GLOBAL const float *HK_RESTRICT x = in + plane * %lldL + lane;", ll(P * B));
  L(1, "float sum = 0.0f;");
  L(1, "for (long p = 0; p < %lldL; ++p) sum += x[p * %lldL];", ll(P), ll(B));
  /* Padding channels sum zeros: the output's padding stays zero. */
  L(1, "out[i] = sum / %lld.0f;", ll(P));
  close_kernel(o);
  return add_unary_launch(o, "global_pool", items, reason, size);
}

/* ------------------------------------------------------------------------ */

/* The activation is inlined, so the text needs no helper from the
 * plugin's header. */

static int32_t emit_unary(const hpc_gpu_ops_t *o, char *reason, size_t size) {
  const hetc_plugin_tensor_t *a = &o->wl->inputs[0];
  const hetc_plugin_layout_t layout = hpc_elementwise_row_major_only(o->wl) ? hetc_kit_layout_row_major() : follow_hint(a);
  const int64_t items = hetc_kit_physical_count(a, layout);
  set_boundary(o, 1, layout, layout, 0);
  open_kernel(o, "elementwise", UNARY_PARAMS, items);
  const int64_t B = hetc_kit_layout_block(layout, a->rank == 4 ? a->shape[1] : 1);
  if (layout.kind == HETC_PLUGIN_LAYOUT_NCHWC && a->shape[1] % B) {
    /* sigmoid(0) and hardsigmoid(0) are 0.5: the padding channels are
     * written as zeros rather than through the activation. */
    char c[160];
    channel_expr(c, sizeof(c), "i", B, hetc_kit_ceil_div(a->shape[1], B), a->shape[2] * a->shape[3]);
    L(1, "if (%s >= %lldL) { out[i] = 0.0f; return; }", c, ll(a->shape[1]));
  }
  L(1, "const float v = in[i];");
  L(1, "out[i] = %s;", hpc_gpu_act_expr(o->wl->activation));
  close_kernel(o);
  return add_unary_launch(o, "elementwise", items, reason, size);
}

int32_t hpc_gpu_emit_elementwise(const hpc_gpu_ops_t *o, char *reason, size_t size) {
  const hetc_plugin_workload_t *wl = o->wl;
  if (wl->binary == HETC_PLUGIN_BINARY_NONE) return emit_unary(o, reason, size);
  if (wl->num_inputs != 2)
    return fail(reason, size, HETC_PLUGIN_STATUS_INVALID_ARGUMENT,
                "%s: binary op needs two inputs", o->plugin_name);

  const hetc_plugin_tensor_t *a = &wl->inputs[0], *b = &wl->inputs[1];
  const char *op = hpc_binary_operator(wl->binary);
  const hetc_plugin_layout_t la = follow_hint(a), lb = follow_hint(b);
  const char *params =
      "HK_GLOBAL const float *HK_RESTRICT a, HK_GLOBAL const float *HK_RESTRICT b, "
      "HK_GLOBAL float *HK_RESTRICT out";
  const int32_t args[3] = {0, 1, 2};
  if (same_dims(a, b) && hetc_kit_layout_equal(la, lb) && !hpc_elementwise_row_major_only(wl)) {
    /* Same shape and layout: elementwise over the physical elements;
     * padding stays zero (0 + 0, 0 * 0). */
    const int64_t items = hetc_kit_physical_count(a, la);
    set_boundary(o, 2, la, la, 0);
    open_kernel(o, "elementwise", params, items);
    L(1, "out[i] = a[i] %s b[i];", op);
    close_kernel(o);
    return add_launch(o, "elementwise", items, 3, args, reason, size);
  }
  /* Broadcasting in row-major: the offset into b walks the output's index
   * with stride 0 along b's dims of extent 1. */
  const int64_t items = hetc_kit_logical_count(a);
  set_boundary(o, 2, hetc_kit_layout_row_major(), hetc_kit_layout_row_major(), 0);
  open_kernel(o, "elementwise", params, items);
  L(1, "long rest = i, b_at = 0;");
  int64_t b_stride = 1;
  for (int32_t d = a->rank - 1; d >= 0; --d) {
    if (a->shape[d] == 1) continue;
    if (b->shape[d] != 1) {
      L(1, "b_at += rest %% %lldL * %lldL;", ll(a->shape[d]), ll(b_stride));
      b_stride *= b->shape[d];
    }
    L(1, "rest /= %lldL;", ll(a->shape[d]));
  }
  L(1, "out[i] = a[i] %s b[b_at];", op);
  close_kernel(o);
  return add_launch(o, "elementwise", items, 3, args, reason, size);
}

/* ------------------------------------------------------------------------ */

int32_t hpc_gpu_emit_softmax(const hpc_gpu_ops_t *o, char *reason, size_t size) {
  const hetc_plugin_tensor_t *t = &o->wl->inputs[0];
  const int32_t axis = o->wl->axis;
  if (axis < 0 || axis >= t->rank)
    return fail(reason, size, HETC_PLUGIN_STATUS_INVALID_ARGUMENT, "%s: softmax axis %d",
                o->plugin_name, axis);
  int64_t outer = 1, inner = 1;
  const int64_t extent = t->shape[axis];
  for (int32_t d = 0; d < axis; ++d) outer *= t->shape[d];
  for (int32_t d = axis + 1; d < t->rank; ++d) inner *= t->shape[d];
  set_boundary(o, 1, hetc_kit_layout_row_major(), hetc_kit_layout_row_major(), 0);

  /* One thread per row along the axis; neighbouring threads take
   * neighbouring inner positions, so their loads are contiguous. */
  open_kernel(o, "softmax", UNARY_PARAMS, outer * inner);
  L(1, "const long start = i / %lldL * %lldL + i %% %lldL;", ll(inner), ll(extent * inner),
    ll(inner));
  L(1, "HK_GLOBAL const float *HK_RESTRICT x = in + start;");
  L(1, "HK_GLOBAL float *HK_RESTRICT y = out + start;");
  /* Subtracting the max keeps exp() from overflowing on large logits. */
  L(1, "float m = x[0];");
  L(1, "for (long k = 1; k < %lldL; ++k) m = HK_FMAX(m, x[k * %lldL]);", ll(extent), ll(inner));
  L(1, "float sum = 0.0f;");
  L(1, "for (long k = 0; k < %lldL; ++k) {", ll(extent));
  L(2, "const float v = HK_EXP(x[k * %lldL] - m);", ll(inner));
  L(2, "y[k * %lldL] = v;", ll(inner));
  L(2, "sum += v;");
  L(1, "}");
  if (o->wl->op == HETC_PLUGIN_OP_LOG_SOFTMAX) {
    /* x - m - log(sum), finite where the quotient would round to 0. */
    L(1, "const float log_sum = HK_LOG(sum);");
    L(1, "for (long k = 0; k < %lldL; ++k) y[k * %lldL] = (x[k * %lldL] - m) - log_sum;", ll(extent), ll(inner),
      ll(inner));
  } else {
    L(1, "const float scale = 1.0f / sum;");
    L(1, "for (long k = 0; k < %lldL; ++k) y[k * %lldL] *= scale;", ll(extent), ll(inner));
  }
  close_kernel(o);
  return add_unary_launch(o, "softmax", outer * inner, reason, size);
}

/* ------------------------------------------------------------------------ */

/* The dims of a tensor as they lie in memory in `layout`, and where the
 * logical `axis` is among them. Returns the number of physical dims. */
static int32_t physical_dims(const hetc_plugin_tensor_t *t, hetc_plugin_layout_t layout,
                             int32_t axis, int64_t *dims, int32_t *phys_axis) {
  const int64_t *s = t->shape;
  if (layout.kind == HETC_PLUGIN_LAYOUT_NHWC) {
    static const int32_t where[4] = {0, 3, 1, 2};
    dims[0] = s[0], dims[1] = s[2], dims[2] = s[3], dims[3] = s[1];
    *phys_axis = where[axis];
    return 4;
  }
  if (layout.kind == HETC_PLUGIN_LAYOUT_NCHWC) {
    /* The channel axis is the block count; the block stays innermost. */
    dims[0] = s[0], dims[1] = hetc_kit_ceil_div(s[1], layout.block), dims[2] = s[2];
    dims[3] = s[3], dims[4] = layout.block;
    *phys_axis = axis;
    return 5;
  }
  for (int32_t d = 0; d < t->rank; ++d) dims[d] = s[d];
  *phys_axis = axis;
  return t->rank;
}

/* The inputs' shared hint when concatenating in it is a chunked copy of
 * whole blocks: along channels in NCHWc that needs every input but the
 * last to fill its blocks (the last one's padding becomes the output's). */
static hetc_plugin_layout_t concat_layout(const hetc_plugin_workload_t *wl) {
  const hetc_plugin_layout_t first = follow_hint(&wl->inputs[0]);
  for (int32_t j = 0; j < wl->num_inputs; ++j) {
    const hetc_plugin_tensor_t *t = &wl->inputs[j];
    if (!hetc_kit_layout_equal(follow_hint(t), first)) return hetc_kit_layout_row_major();
    if (first.kind == HETC_PLUGIN_LAYOUT_NCHWC && wl->axis == 1 && j + 1 < wl->num_inputs &&
        t->shape[1] % first.block)
      return hetc_kit_layout_row_major();
  }
  return first;
}

int32_t hpc_gpu_emit_concat(const hpc_gpu_ops_t *o, char *reason, size_t size) {
  const hetc_plugin_workload_t *wl = o->wl;
  if (wl->num_inputs < 1 || wl->num_inputs > HETC_KIT_MAX_INPUTS || wl->axis < 0 ||
      wl->axis >= wl->output.rank)
    return fail(reason, size, HETC_PLUGIN_STATUS_INVALID_ARGUMENT,
                "%s: concat of %d inputs, axis %d", o->plugin_name, wl->num_inputs, wl->axis);
  const hetc_plugin_layout_t layout = concat_layout(wl);
  set_boundary(o, wl->num_inputs, layout, layout, 0);

  int64_t dims[HETC_PLUGIN_MAX_RANK + 1];
  int32_t axis = 0;
  const int32_t rank = physical_dims(&wl->output, layout, wl->axis, dims, &axis);
  int64_t outer = 1, inner = 1;
  for (int32_t d = 0; d < axis; ++d) outer *= dims[d];
  for (int32_t d = axis + 1; d < rank; ++d) inner *= dims[d];
  const int64_t row = dims[axis] * inner;

  /* One kernel per input, each copying it into its slice of every output
   * row: no kernel takes more than two buffers. */
  int64_t at = 0;
  char name[32];
  for (int32_t j = 0; j < wl->num_inputs; ++j) {
    int64_t in_dims[HETC_PLUGIN_MAX_RANK + 1];
    int32_t in_axis = 0;
    physical_dims(&wl->inputs[j], layout, wl->axis, in_dims, &in_axis);
    const int64_t chunk = in_dims[in_axis] * inner;
    snprintf(name, sizeof(name), "concat_%d", j);
    open_kernel(o, name, UNARY_PARAMS, outer * chunk);
    L(1, "out[i / %lldL * %lldL + %lldL + i %% %lldL] = in[i];", ll(chunk), ll(row), ll(at),
      ll(chunk));
    close_kernel(o);
    const int32_t args[2] = {j, wl->num_inputs};
    const int32_t code = add_launch(o, name, outer * chunk, 2, args, reason, size);
    if (code) return code;
    at += chunk;
  }
  return 0;
}

/* ------------------------------------------------------------------------ */

static hetc_plugin_layout_t as_reported(hetc_plugin_layout_t l) {
  if (l.kind != HETC_PLUGIN_LAYOUT_NCHWC) l.block = 0;
  return l;
}

/* Row-major of any rank, or NHWC / NCHWc (block >= 1) of a 4-d tensor. */
static int layout_usable(const hetc_plugin_tensor_t *t, hetc_plugin_layout_t l) {
  switch (l.kind) {
    case HETC_PLUGIN_LAYOUT_ROW_MAJOR: return 1;
    case HETC_PLUGIN_LAYOUT_NHWC: return t->rank == 4;
    case HETC_PLUGIN_LAYOUT_NCHWC: return t->rank == 4 && l.block >= 1;
    default: return 0;
  }
}

int32_t hpc_gpu_emit_layout(const hpc_gpu_ops_t *o, char *reason, size_t size) {
  const hetc_plugin_workload_t *wl = o->wl;
  const hetc_plugin_tensor_t *in = &wl->inputs[0], *out = &wl->output;
  const hetc_plugin_layout_t li = as_reported(in->layout), lo = as_reported(out->layout);
  const int in_rm = li.kind == HETC_PLUGIN_LAYOUT_ROW_MAJOR;
  const int out_rm = lo.kind == HETC_PLUGIN_LAYOUT_ROW_MAJOR;
  if (!layout_usable(in, li) || !layout_usable(out, lo))
    return fail(reason, size, HETC_PLUGIN_STATUS_UNSUPPORTED,
                "%s: layout_transform between layouts %d and %d of ranks %d and %d",
                o->plugin_name, li.kind, lo.kind, in->rank, out->rank);
  if (hetc_kit_logical_count(in) != hetc_kit_logical_count(out))
    return fail(reason, size, HETC_PLUGIN_STATUS_INVALID_ARGUMENT,
                "%s: layout_transform changes the element count", o->plugin_name);
  set_boundary(o, 1, li, lo, 0);
  const int same = same_dims(in, out);
  const int64_t items = hetc_kit_physical_count(out, lo);

  open_kernel(o, "layout", UNARY_PARAMS, items);
  if ((same && hetc_kit_layout_equal(li, lo)) || (in_rm && out_rm)) {
    /* Nothing moves: the identity, or a reshape between row-major tensors. */
    L(1, "out[i] = in[i];");
    close_kernel(o);
    return add_unary_launch(o, "layout", items, reason, size);
  }
  /* Each thread finds the logical element its output slot holds: `flat`,
   * its index in row-major logical order, which a reshape keeps. */
  if (out_rm) {
    L(1, "const long flat = i;");
  } else {
    const int64_t C = out->shape[1], H = out->shape[2], W = out->shape[3];
    const int64_t bo = hetc_kit_layout_block(lo, C);
    emit_unflatten(o, "o_", "i", bo, C, H, W);
    if (C % bo) L(1, "if (o_c >= %lldL) { out[i] = 0.0f; return; }", ll(C));
    if (!same || in_rm)
      L(1, "const long flat = ((o_n * %lldL + o_c) * %lldL + o_h) * %lldL + o_w;", ll(C), ll(H),
        ll(W));
  }
  if (in_rm) {
    L(1, "out[i] = in[flat];");
  } else {
    const int64_t C = in->shape[1], H = in->shape[2], W = in->shape[3];
    if (same && !out_rm) {
      L(1, "const long i_n = o_n, i_c = o_c, i_h = o_h, i_w = o_w;");
    } else {
      /* The row-major unflattening is the block-1 one. */
      emit_unflatten(o, "i_", "flat", 1, C, H, W);
    }
    char offset[256];
    offset_expr(offset, sizeof(offset), "i_", hetc_kit_layout_block(li, C), C, H, W);
    L(1, "out[i] = in[%s];", offset);
  }
  close_kernel(o);
  return add_unary_launch(o, "layout", items, reason, size);
}

/* ------------------------------------------------------------------------ */

int32_t hpc_gpu_emit_bias_add(const hpc_gpu_ops_t *o, char *reason, size_t size) {
  const hetc_plugin_tensor_t *t = &o->wl->inputs[0];
  if (t->rank < 2)
    return fail(reason, size, HETC_PLUGIN_STATUS_INVALID_ARGUMENT, "%s: bias_add of rank %d",
                o->plugin_name, t->rank);
  const hetc_plugin_layout_t layout = follow_hint(t);
  const int64_t C = t->shape[1];
  const int64_t B = t->rank == 4 ? hetc_kit_layout_block(layout, C) : 1, CB = hetc_kit_ceil_div(C, B);
  int64_t plane = 1;
  for (int32_t d = 2; d < t->rank; ++d) plane *= t->shape[d];
  const int64_t items = hetc_kit_physical_count(t, layout);
  set_boundary(o, 1, layout, layout, 1);
  /* The bias stays in its logical form, C floats, in every layout. */
  o->param_bytes[0] = (uint64_t)C * 4;

  open_kernel(o, "bias_add",
              "HK_GLOBAL const float *HK_RESTRICT in, HK_GLOBAL const float *HK_RESTRICT bias, "
              "HK_GLOBAL float *HK_RESTRICT out",
              items);
  char c[160];
  channel_expr(c, sizeof(c), "i", B, CB, plane);
  L(1, "const long c = %s;", c);
  /* The bias has no padding channels to read. */
  if (C % B)
    L(1, "out[i] = c < %lldL ? in[i] + bias[c] : 0.0f;", ll(C));
  else
    L(1, "out[i] = in[i] + bias[c];");
  close_kernel(o);
  const int32_t args[3] = {0, 1, 2};
  return add_launch(o, "bias_add", items, 3, args, reason, size);
}

/* ------------------------------------------------------------------------ */

int32_t hpc_gpu_emit_transpose(const hpc_gpu_ops_t *o, char *reason, size_t size) {
  const hetc_plugin_workload_t *wl = o->wl;
  const hetc_plugin_tensor_t *in = &wl->inputs[0], *out = &wl->output;
  const int32_t rank = out->rank;
  int64_t in_stride[HETC_PLUGIN_MAX_RANK], stride = 1;
  for (int32_t d = rank - 1; d >= 0; --d) in_stride[d] = stride, stride *= in->shape[d];
  const int64_t items = hetc_kit_logical_count(out);
  set_boundary(o, 1, hetc_kit_layout_row_major(), hetc_kit_layout_row_major(), 0);
  open_kernel(o, "transpose", UNARY_PARAMS, items);
  /* The output's coordinates, innermost first, each through the stride of
   * the input dim it comes from. */
  L(1, "long rest = i, from = 0;");
  for (int32_t d = rank - 1; d >= 0; --d)
    L(1, "from += (rest %% %lldL) * %lldL; rest /= %lldL;", ll(out->shape[d]), ll(in_stride[HETC_PLUGIN_PERM_AT(wl->axis, d)]),
      ll(out->shape[d]));
  L(1, "out[i] = in[from];");
  close_kernel(o);
  return add_unary_launch(o, "transpose", items, reason, size);
}

/* ------------------------------------------------------------------------ */

int32_t hpc_gpu_emit_resize(const hpc_gpu_ops_t *o, char *reason, size_t size) {
  const hetc_plugin_workload_t *wl = o->wl;
  const int64_t *in = wl->inputs[0].shape, *out = wl->output.shape;
  const int64_t C = in[1], H = in[2], W = in[3], OH = out[2], OW = out[3];
  const int linear = wl->params.resize.mode == HETC_PLUGIN_RESIZE_LINEAR;
  const hetc_plugin_layout_t layout = follow_hint(&wl->inputs[0]);
  const int64_t B = hetc_kit_layout_block(layout, C), CB = hetc_kit_ceil_div(C, B);
  const int64_t items = hetc_kit_physical_count(&wl->output, layout);
  set_boundary(o, 1, layout, layout, 0);

  /* The kit's taps, computed at build time (plugin_resize.h): the kernel
   * reads the reference's pixels and computes no coordinate itself. */
  hpc_resize_emit_tables(o->src, wl, "HK_TABLE");
  hpc_strbuf_printf(o->src, "\n");
  open_kernel(o, "resize", UNARY_PARAMS, items);
  /* As pooling: neighbouring threads take neighbouring lanes of a channel
   * block, then neighbouring output columns; `plane` is n*CB + cb. */
  L(1, "const long lane = i %% %lldL, ow = i / %lldL %% %lldL;", ll(B), ll(B), ll(OW));
  L(1, "const long oh = i / %lldL %% %lldL, plane = i / %lldL;", ll(B * OW), ll(OH), ll(B * OW * OH));
  if (C % B)
    L(1, "if (plane %% %lldL * %lldL + lane >= %lldL) { out[i] = 0.0f; return; }", ll(CB), ll(B), ll(C));
  L(1, "HK_GLOBAL const float *HK_RESTRICT x = in + plane * %lldL + lane;", ll(H * W * B));
  L(1, "const long y0 = resize_row_lo[oh], x0 = resize_col_lo[ow];");
  if (!linear) {
    L(1, "out[i] = x[(y0 * %lldL + x0) * %lldL];", ll(W), ll(B));
  } else {
    char y1[64], x1[64];
    hpc_resize_hi_expr(y1, sizeof(y1), "y0", H);
    hpc_resize_hi_expr(x1, sizeof(x1), "x0", W);
    L(1, "const long y1 = %s, x1 = %s;", y1, x1);
    L(1, "const float fy = resize_row_weight[oh], fx = resize_col_weight[ow];");
    L(1, "HK_GLOBAL const float *HK_RESTRICT top = x + y0 * %lldL;", ll(W * B));
    L(1, "HK_GLOBAL const float *HK_RESTRICT bottom = x + y1 * %lldL;", ll(W * B));
    L(1, "const float a = top[x0 * %lldL], b = top[x1 * %lldL];", ll(B), ll(B));
    L(1, "const float c = bottom[x0 * %lldL], d = bottom[x1 * %lldL];", ll(B), ll(B));
    /* Across the columns, then the rows, as the kit's reference kernel. */
    L(1, "const float upper = a + fx * (b - a), lower = c + fx * (d - c);");
    L(1, "out[i] = upper + fy * (lower - upper);");
  }
  close_kernel(o);
  return add_unary_launch(o, "resize", items, reason, size);
}

/* ------------------------------------------------------------------------ */

/* The expression of the offset of element (o, c, s) of a normalize's
 * tensor (plugin_normalize.h), s being r * inner + i. */
static void normalize_at(char *buf, size_t size, const hpc_normalize_t *g, const char *o, const char *c,
                         const char *s) {
  if (g->block == 1)
    snprintf(buf, size, "(%s * %lldL + %s) * %lldL + %s", o, ll(g->channels), c, ll(g->plane), s);
  else
    snprintf(buf, size, "((%s * %lldL + %s / %lldL) * %lldL + %s) * %lldL + %s %% %lldL", o, ll(g->blocks), c,
             ll(g->block), ll(g->plane), s, ll(g->block), c, ll(g->block));
}

/* The kernels are not called `normalize`, a built-in of OpenCL C.
 *
 * Float statistics that keep the digits of values far from 0 (1000 +
 * noise): every element is taken less the line's first one, `shift`,
 * which is exact for values within a factor 2 of it, and the mean stays
 * split as shift + mean of the differences, never rounded into one float
 * (which would be off by up to half an ulp of the offset). Then the
 * variance about that mean (two passes), as the reference computes it. */
int32_t hpc_gpu_emit_normalize(const hpc_gpu_ops_t *o, char *reason, size_t size) {
  const hetc_plugin_workload_t *wl = o->wl;
  const int affine = wl->params.normalize.affine;
  hpc_normalize_t g;
  hpc_normalize_geometry(wl, &g);
  set_boundary(o, 1, g.layout, g.layout, affine ? 2 : 0);
  if (affine) o->param_bytes[0] = o->param_bytes[1] = (uint64_t)g.channels * 4;
  const char *params = affine ? "HK_GLOBAL const float *HK_RESTRICT in, HK_GLOBAL const float *HK_RESTRICT scale, "
                                "HK_GLOBAL const float *HK_RESTRICT bias, HK_GLOBAL float *HK_RESTRICT out"
                              : UNARY_PARAMS;
  /* in, scale, bias, out; or in, out */
  const int32_t args[4] = {0, 1, 2, 3}, num_args = affine ? 4 : 2, out_arg = num_args - 1;
  const float eps = hpc_normalize_epsilon_float(wl);
  char at[256], first[256];
  int32_t code;
  if (g.inner == 1) {
    /* A block a line, its threads striding along it (contiguous in
     * row-major), the sums reduced through shared memory. Every thread
     * reaches every barrier: the launch is whole blocks, no guard. */
    L(0, "HK_KERNEL(%d, 1, 1) normalize_lines(%s) {", HPC_GPU_OPS_BLOCK, params);
    L(1, "HK_SHARED float partial[%d];", HPC_GPU_OPS_BLOCK);
    L(1, "const int t = HK_TX;");
    L(1, "const long line = HK_GID_X / %dL, grp = line %% %lldL, o = line / %lldL;", HPC_GPU_OPS_BLOCK, ll(g.groups),
      ll(g.groups));
    if (g.block == 1) {
      /* The group's channels follow one another: the line is contiguous. */
      L(1, "HK_GLOBAL const float *HK_RESTRICT x = in + line * %lldL;", ll(g.count));
      L(1, "HK_GLOBAL float *HK_RESTRICT y = out + line * %lldL;", ll(g.count));
      L(1, "(void)o;");
      snprintf(at, sizeof(at), "k");
      snprintf(first, sizeof(first), "0");
    } else {
      L(1, "HK_GLOBAL const float *HK_RESTRICT x = in;");
      L(1, "HK_GLOBAL float *HK_RESTRICT y = out;");
      normalize_at(at, sizeof(at), &g, "o", "c", "k % R");
      normalize_at(first, sizeof(first), &g, "o", "grp * PG", "0L");
    }
    L(1, "const long PG = %lldL, R = %lldL; (void)PG; (void)R;", ll(g.per_group), ll(g.rest));
    /* The element k of the line: channel grp * PG + k / R, row k % R. */
    const char *channel = "const long c = grp * PG + k / R; (void)c;";
    L(1, "const float shift = x[%s];", first);
    L(1, "float sum = 0.0f;");
    L(1, "for (long k = t; k < %lldL; k += %dL) {", ll(g.count), HPC_GPU_OPS_BLOCK);
    L(2, "%s", channel);
    L(2, "sum += x[%s] - shift;", at);
    L(1, "}");
    L(1, "partial[t] = sum;");
    L(1, "HK_BARRIER();");
    L(1, "for (int step = %d; step > 0; step >>= 1) {", HPC_GPU_OPS_BLOCK / 2);
    L(2, "if (t < step) partial[t] += partial[t + step];");
    L(2, "HK_BARRIER();");
    L(1, "}");
    L(1, "const float mean_diff = partial[0] / %lld.0f;", ll(g.count));
    /* Everyone has read the sum before partial is reused. */
    L(1, "HK_BARRIER();");
    L(1, "float squares = 0.0f;");
    L(1, "for (long k = t; k < %lldL; k += %dL) {", ll(g.count), HPC_GPU_OPS_BLOCK);
    L(2, "%s", channel);
    L(2, "const float d = (x[%s] - shift) - mean_diff;", at);
    L(2, "squares += d * d;");
    L(1, "}");
    L(1, "partial[t] = squares;");
    L(1, "HK_BARRIER();");
    L(1, "for (int step = %d; step > 0; step >>= 1) {", HPC_GPU_OPS_BLOCK / 2);
    L(2, "if (t < step) partial[t] += partial[t + step];");
    L(2, "HK_BARRIER();");
    L(1, "}");
    L(1, "const float inv = 1.0f / HK_SQRT(partial[0] / %lld.0f + %.9gf);", ll(g.count), (double)eps);
    L(1, "for (long k = t; k < %lldL; k += %dL) {", ll(g.count), HPC_GPU_OPS_BLOCK);
    L(2, "%s", channel);
    L(2, "y[%s] = ((x[%s] - shift) - mean_diff) * inv%s;", at, at, affine ? " * scale[c] + bias[c]" : "");
    L(1, "}");
    close_kernel(o);
    code = add_launch(o, "normalize_lines", g.lines * HPC_GPU_OPS_BLOCK, num_args, args, reason, size);
  } else {
    /* A thread a line: neighbouring threads take neighbouring inner
     * positions, so their loads are contiguous in row-major. */
    open_kernel(o, "normalize_lines", params, g.lines);
    L(1, "const long pos = i %% %lldL, grp = i / %lldL %% %lldL, o = i / %lldL / %lldL;", ll(g.inner), ll(g.inner),
      ll(g.groups), ll(g.inner), ll(g.groups));
    L(1, "const long PG = %lldL, R = %lldL, I = %lldL;", ll(g.per_group), ll(g.rest), ll(g.inner));
    normalize_at(first, sizeof(first), &g, "o", "grp * PG", "pos");
    normalize_at(at, sizeof(at), &g, "o", "c", "r * I + pos");
    const char *for_cr = "for (long c = grp * PG; c < grp * PG + PG; ++c)";
    L(1, "const float shift = in[%s];", first);
    L(1, "float sum = 0.0f;");
    L(1, "%s", for_cr);
    L(2, "for (long r = 0; r < R; ++r) sum += in[%s] - shift;", at);
    L(1, "const float mean_diff = sum / %lld.0f;", ll(g.count));
    L(1, "float squares = 0.0f;");
    L(1, "%s", for_cr);
    L(2, "for (long r = 0; r < R; ++r) {");
    L(3, "const float d = (in[%s] - shift) - mean_diff;", at);
    L(3, "squares += d * d;");
    L(2, "}");
    L(1, "const float inv = 1.0f / HK_SQRT(squares / %lld.0f + %.9gf);", ll(g.count), (double)eps);
    L(1, "%s {", for_cr);
    L(2, "const float a = %s, b = %s;", affine ? "inv * scale[c]" : "inv", affine ? "bias[c]" : "0.0f");
    L(2, "for (long r = 0; r < R; ++r) out[%s] = ((in[%s] - shift) - mean_diff) * a + b;", at, at);
    L(1, "}");
    close_kernel(o);
    code = add_launch(o, "normalize_lines", g.lines, num_args, args, reason, size);
  }
  if (code || !g.padding) return code;
  /* The last block's padding channels belong to no line. */
  const int64_t items = g.outer * g.plane * g.padding;
  open_kernel(o, "normalize_padding", "HK_GLOBAL float *HK_RESTRICT out", items);
  L(1, "const long lane = %lldL + i %% %lldL, s = i / %lldL %% %lldL, n = i / %lldL / %lldL;", ll(g.block - g.padding),
    ll(g.padding), ll(g.padding), ll(g.plane), ll(g.padding), ll(g.plane));
  L(1, "out[((n * %lldL + %lldL) * %lldL + s) * %lldL + lane] = 0.0f;", ll(g.blocks), ll(g.blocks - 1), ll(g.plane),
    ll(g.block));
  close_kernel(o);
  return add_launch(o, "normalize_padding", items, 1, &out_arg, reason, size);
}

/* ------------------------------------------------------------------------ */

/* A's tile is kept m-major with a row of tile_k + 1 floats: a warp's
 * threads of one ty read one word (a broadcast), those of different ty
 * words tile_k + 1 apart, an odd stride, so they fall in different banks
 * whatever the block's shape (with tile_k's own stride, 16, a warp of 8 x 4
 * threads would read 2 words a bank). B's tile is k-major and unpadded:
 * neighbouring threads read neighbouring words. */
int64_t hpc_gpu_matmul_shared_bytes(const hpc_gpu_matmul_tiles_t *t) {
  return 4 * (t->tile_m * (t->tile_k + 1) + t->tile_k * t->tile_n);
}

int hpc_gpu_matmul_tiles_check(const hpc_gpu_matmul_tiles_t *t, char *reason, size_t size) {
  if (t->tile_m < 1 || t->tile_n < 1 || t->tile_k < 1 || t->thread_m < 1 || t->thread_n < 1) {
    snprintf(reason, size, "matmul's tiles must be positive");
    return 1;
  }
  if (t->tile_m % t->thread_m != 0 || t->tile_n % t->thread_n != 0) {
    snprintf(reason, size, "matmul's per-thread tile %lldx%lld does not divide its block tile %lldx%lld",
             ll(t->thread_m), ll(t->thread_n), ll(t->tile_m), ll(t->tile_n));
    return 1;
  }
  return 0;
}

/* Emits the loop staging one operand's rows x cols tile (row-major in
 * global memory, `ld` floats a row, from `src`) into `dst` with rows
 * `dst_ld` floats apart. Neighbouring threads take neighbouring columns, so
 * their loads are contiguous. `row_guard` and `col_guard` are conditions on
 * the tile's r and c, or NULL where the shapes make them always true. */
static void emit_stage(const hpc_gpu_ops_t *o, const char *dst, int64_t dst_ld, const char *src, int64_t ld,
                       int64_t rows, int64_t cols, int64_t threads, const char *row_guard, const char *col_guard) {
  const int64_t total = rows * cols, steps = (total + threads - 1) / threads;
  L(2, "for (int s = 0; s < %lld; ++s) {", ll(steps));
  L(3, "const int e = t + s * %lld;", ll(threads));
  /* The last step's threads past the tile stage nothing. */
  if (total % threads) L(3, "if (e >= %lld) break;", ll(total));
  L(3, "const int r = e / %lld, c = e %% %lld;", ll(cols), ll(cols));
  char guard[160] = "";
  if (row_guard && col_guard)
    snprintf(guard, sizeof(guard), "%s && %s", row_guard, col_guard);
  else if (row_guard || col_guard)
    snprintf(guard, sizeof(guard), "%s", row_guard ? row_guard : col_guard);
  if (guard[0])
    L(3, "%s[r * %lld + c] = %s ? %s[(long)r * %lldL + c] : 0.0f;", dst, ll(dst_ld), guard, src, ll(ld));
  else
    L(3, "%s[r * %lld + c] = %s[(long)r * %lldL + c];", dst, ll(dst_ld), src, ll(ld));
  L(2, "}");
}

/* One text for every tile size: the tiles are constants in it, so the
 * compilers unroll the per-thread loops and keep acc[] in registers.
 * Edges are zero-filled when staged (a zero adds nothing to a sum of
 * finite products) and stores past them skipped, each guard emitted only
 * where the extent is not a multiple of its tile. Thread (tx, ty) owns rows
 * ty + i * TY and columns tx + j * TX: neighbouring threads store
 * neighbouring columns. */
int32_t hpc_gpu_emit_matmul(const hpc_gpu_ops_t *o, char *reason, size_t size) {
  const hetc_plugin_workload_t *wl = o->wl;
  const hpc_gpu_matmul_tiles_t *t = o->tiles;
  if (!t) return fail(reason, size, HETC_PLUGIN_STATUS_INTERNAL, "%s: matmul without tiles", o->plugin_name);
  char why[160];
  if (hpc_gpu_matmul_tiles_check(t, why, sizeof(why)))
    return fail(reason, size, HETC_PLUGIN_STATUS_INVALID_ARGUMENT, "%s: %s", o->plugin_name, why);
  const int32_t rank = wl->inputs[0].rank;
  const int64_t M = wl->inputs[0].shape[rank - 2], K = wl->inputs[0].shape[rank - 1];
  const int64_t N = wl->inputs[1].shape[rank - 1];
  int64_t batches = 1;
  for (int32_t d = 0; d + 2 < rank; ++d) batches *= wl->inputs[0].shape[d];
  const int64_t TM = t->tile_m, TN = t->tile_n, TK = t->tile_k, RM = t->thread_m, RN = t->thread_n;
  const int64_t TX = TN / RN, TY = TM / RM, threads = TX * TY;
  const int64_t tiles_m = hetc_kit_ceil_div(M, TM), tiles_n = hetc_kit_ceil_div(N, TN);
  const int64_t blocks = batches * tiles_m * tiles_n;
  set_boundary(o, 2, hetc_kit_layout_row_major(), hetc_kit_layout_row_major(), 0);
  const int edge_m = M % TM != 0, edge_n = N % TN != 0, edge_k = K % TK != 0;

  L(0, "HK_KERNEL(%lld, %lld, 1) matmul_tiled(HK_GLOBAL const float *HK_RESTRICT a, "
       "HK_GLOBAL const float *HK_RESTRICT b, HK_GLOBAL float *HK_RESTRICT out) {",
    ll(TX), ll(TY));
  L(1, "HK_SHARED float a_tile[%lld];", ll(TM * (TK + 1)));
  L(1, "HK_SHARED float b_tile[%lld];", ll(TK * TN));
  L(1, "const int tx = HK_TX, ty = HK_TY, t = ty * %lld + tx;", ll(TX));
  /* N's tiles fastest: the blocks running together share A's rows. */
  L(1, "const long tile = (long)HK_BX;");
  L(1, "const long n0 = tile %% %lldL * %lldL, m0 = tile / %lldL %% %lldL * %lldL, batch = tile / %lldL;",
    ll(tiles_n), ll(TN), ll(tiles_n), ll(tiles_m), ll(TM), ll(tiles_n * tiles_m));
  L(1, "HK_GLOBAL const float *HK_RESTRICT pa = a + batch * %lldL + m0 * %lldL;", ll(M * K), ll(K));
  L(1, "HK_GLOBAL const float *HK_RESTRICT pb = b + batch * %lldL + n0;", ll(K * N));
  L(1, "HK_GLOBAL float *HK_RESTRICT po = out + batch * %lldL + m0 * %lldL + n0;", ll(M * N), ll(N));
  if (edge_m) L(1, "const long m_left = %lldL - m0;", ll(M));
  if (edge_n) L(1, "const long n_left = %lldL - n0;", ll(N));
  L(1, "float acc[%lld];", ll(RM * RN));
  L(1, "for (int i = 0; i < %lld; ++i) acc[i] = 0.0f;", ll(RM * RN));
  L(1, "for (long k0 = 0; k0 < %lldL; k0 += %lldL) {", ll(K), ll(TK));
  if (edge_k) L(2, "const long k_left = %lldL - k0;", ll(K));
  L(2, "HK_GLOBAL const float *HK_RESTRICT sa = pa + k0;");
  L(2, "HK_GLOBAL const float *HK_RESTRICT sb = pb + k0 * %lldL;", ll(N));
  emit_stage(o, "a_tile", TK + 1, "sa", K, TM, TK, threads, edge_m ? "r < m_left" : NULL,
             edge_k ? "c < k_left" : NULL);
  emit_stage(o, "b_tile", TN, "sb", N, TK, TN, threads, edge_k ? "r < k_left" : NULL,
             edge_n ? "c < n_left" : NULL);
  L(2, "HK_BARRIER();");
  L(2, "for (int kk = 0; kk < %lld; ++kk) {", ll(TK));
  L(3, "float av[%lld], bv[%lld];", ll(RM), ll(RN));
  L(3, "for (int i = 0; i < %lld; ++i) av[i] = a_tile[(ty + i * %lld) * %lld + kk];", ll(RM), ll(TY), ll(TK + 1));
  L(3, "for (int j = 0; j < %lld; ++j) bv[j] = b_tile[kk * %lld + tx + j * %lld];", ll(RN), ll(TN), ll(TX));
  L(3, "for (int i = 0; i < %lld; ++i)", ll(RM));
  L(4, "for (int j = 0; j < %lld; ++j) acc[i * %lld + j] += av[i] * bv[j];", ll(RN), ll(RN));
  L(2, "}");
  /* Every thread is done reading the tiles before the next step overwrites
   * them. */
  L(2, "HK_BARRIER();");
  L(1, "}");
  L(1, "for (int i = 0; i < %lld; ++i) {", ll(RM));
  L(2, "const long m = ty + i * %lld;", ll(TY));
  if (edge_m) L(2, "if (m >= m_left) break;");
  L(2, "for (int j = 0; j < %lld; ++j) {", ll(RN));
  L(3, "const long n = tx + j * %lld;", ll(TX));
  if (edge_n) L(3, "if (n >= n_left) break;");
  L(3, "po[m * %lldL + n] = acc[i * %lld + j];", ll(N), ll(RN));
  L(2, "}");
  L(1, "}");
  close_kernel(o);
  const int64_t block[3] = {TX, TY, 1};
  const int32_t args[3] = {0, 1, 2};
  if (o->add_block_launch(o->ctx, "matmul_tiled", blocks, block, 3, args) == 0) return 0;
  return fail(reason, size, HETC_PLUGIN_STATUS_INTERNAL,
              "%s: no room for launch matmul_tiled of %lld blocks of %lldx%lld threads", o->plugin_name,
              ll(blocks), ll(TX), ll(TY));
}
