/* OpenCL C for the ops without knobs: pooling, global average pooling,
 * elementwise, softmax, concat, layout transforms and bias_add.
 *
 * Every kernel is one work-item per output element (per row for softmax,
 * per (n, c) plane for global pooling) over a 1-d range rounded up to a
 * multiple of 64, so each kernel starts with a bounds guard. Shapes are
 * static and baked into the text as constants; indices are `long` since a
 * padded tensor may pass 2^31 elements.
 *
 * Pooling, global pooling, unary elementwise, same-shape binary ops,
 * concat and bias_add follow the layout the producer delivers (row-major,
 * NCHW[x]c or NHWC), so nothing is transformed between NCHWc convolutions.
 * A 4-d layout is handled as a channel block b (hpc_layout_block):
 * row-major is b = 1, NHWC is b = C, and the element (n, c, h, w) lies at
 * (((n*CB + c/b)*H + h)*W + w)*b + c%b. Kernels writing NCHWc write zeros
 * into the padding channels. */
#include <stdio.h>
#include <string.h>

#include "ocl.h"

#define L(ind, ...) hpc_strbuf_line(&e->src, ind, __VA_ARGS__)

/* Work-items per step of the rounded-up global size. */
#define ITEM_GRAIN 64

static long long ll(int64_t v) { return (long long)v; }

/* The layout an op without knobs works in: the input's when it is a 4-d
 * NCHWC or NHWC tensor, else row-major. */
static hetc_plugin_layout_t follow_hint(const hetc_plugin_tensor_t *t) {
  if (t->rank == 4 && t->layout.kind == HETC_PLUGIN_LAYOUT_NCHWC && t->layout.block >= 1)
    return hpc_layout_nchwc(t->layout.block);
  if (t->rank == 4 && t->layout.kind == HETC_PLUGIN_LAYOUT_NHWC) {
    hetc_plugin_layout_t l = {HETC_PLUGIN_LAYOUT_NHWC, 0};
    return l;
  }
  return hpc_layout_row_major();
}

static int same_dims(const hetc_plugin_tensor_t *a, const hetc_plugin_tensor_t *b) {
  if (a->rank != b->rank) return 0;
  for (int32_t i = 0; i < a->rank; ++i)
    if (a->shape[i] != b->shape[i]) return 0;
  return 1;
}

/* Starts `__kernel void name(params)` with its work-item index `i` and the
 * guard for the rounded-up range. */
static void open_kernel(ocl_emit_t *e, const char *name, const char *params, int64_t items) {
  L(0, "__kernel void %s(%s) {", name, params);
  L(1, "const long i = (long)get_global_id(0);");
  L(1, "if (i >= %lldL) return;", ll(items));
}

static void close_kernel(ocl_emit_t *e) { L(0, "}\n"); }

/* Appends the 1-d launch of `items` work-items with its buffer arguments. */
static hetc_plugin_status_t add_launch(ocl_emit_t *e, const char *kernel, int64_t items,
                                       int32_t num_args, const int32_t *args) {
  ocl_launch_t *l = ocl_emit_launch(e, kernel, 1);
  if (!l || num_args > OCL_MAX_LAUNCH_ARGS)
    return ocl_status(HETC_PLUGIN_STATUS_INTERNAL, "opencl: too many launches or arguments");
  l->global[0] = ocl_round_up((size_t)items, ITEM_GRAIN);
  l->local[0] = 0;
  l->num_args = num_args;
  for (int32_t a = 0; a < num_args; ++a) l->args[a] = args[a];
  return NULL;
}

/* The common case: one input, the output, no params. */
static hetc_plugin_status_t add_unary_launch(ocl_emit_t *e, const char *kernel,
                                             int64_t items) {
  const int32_t args[2] = {0, 1};
  return add_launch(e, kernel, items, 2, args);
}

#define UNARY_PARAMS "__global const float *restrict in, __global float *restrict out"

/* OpenCL C for the channel of physical index `index` in a tensor of block
 * `b`, CB blocks and `plane` elements per channel (H*W; for a row-major
 * tensor of any rank, the product of the dims after axis 1). */
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
static void emit_unflatten(ocl_emit_t *e, const char *prefix, const char *index, int64_t b,
                           int64_t C, int64_t H, int64_t W) {
  const int64_t CB = hpc_ceil_div(C, b);
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

/* OpenCL C for the physical offset of (n, c, h, w) in a 4-d tensor of
 * channel block `b`, the variables named with prefix `p`. */
static void offset_expr(char *buf, size_t size, const char *p, int64_t b, int64_t C, int64_t H,
                        int64_t W) {
  const int64_t CB = hpc_ceil_div(C, b);
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

hetc_plugin_status_t ocl_emit_pool(ocl_emit_t *e) {
  const hetc_plugin_workload_t *wl = e->wl;
  const int is_max = wl->op == HETC_PLUGIN_OP_MAX_POOL2D;
  const int64_t *in = wl->inputs[0].shape, *out = wl->output.shape;
  const int64_t C = in[1], H = in[2], W = in[3], OH = out[2], OW = out[3];
  const hetc_plugin_layout_t layout = follow_hint(&wl->inputs[0]);
  const int64_t B = hpc_layout_block(layout, C), CB = hpc_ceil_div(C, B);
  const int64_t items = hpc_physical_count(&wl->output, layout);
  e->num_inputs = 1;
  e->input_layouts[0] = e->output_layout = layout;
  e->num_params = 0;
  e->workspace_bytes = 0;

  ocl_emit_preamble(e, HETC_PLUGIN_ACT_NONE);
  open_kernel(e, "pool", UNARY_PARAMS, items);
  /* The work-item's output pixel and lane of the channel block; `plane` is
   * n*CB + cb, which addresses the input's matching block plane. */
  L(1, "const long lane = i %% %lldL, ow = i / %lldL %% %lldL;", ll(B), ll(B), ll(OW));
  L(1, "const long oh = i / %lldL %% %lldL, plane = i / %lldL;", ll(B * OW), ll(OH),
    ll(B * OW * OH));
  if (C % B)
    L(1, "if (plane %% %lldL * %lldL + lane >= %lldL) { out[i] = 0.0f; return; }", ll(CB), ll(B),
      ll(C));
  L(1, "const long h0 = oh * %dL - %dL, w0 = ow * %dL - %dL;", wl->strides[0],
    wl->padding[0], wl->strides[1], wl->padding[1]);
  L(1, "const long h_begin = max(h0, 0L), h_end = min(h0 + %dL, %lldL);", wl->kernel[0], ll(H));
  L(1, "const long w_begin = max(w0, 0L), w_end = min(w0 + %dL, %lldL);", wl->kernel[1], ll(W));
  L(1, "__global const float *restrict x = in + plane * %lldL + lane;", ll(H * W * B));
  L(1, "float acc = %s;", is_max ? "-INFINITY" : "0.0f");
  L(1, "for (long ih = h_begin; ih < h_end; ++ih)");
  L(2, "for (long iw = w_begin; iw < w_end; ++iw) {");
  L(3, "const float v = x[(ih * %lldL + iw) * %lldL];", ll(W), ll(B));
  /* NaN wins, as in PyTorch: a NaN input is never hidden by a max. */
  if (is_max)
    L(3, "if (v > acc || isnan(v)) acc = v;");
  else
    L(3, "acc += v;");
  L(2, "}");
  if (is_max) {
    L(1, "out[i] = acc;");
  } else if (wl->count_include_pad) {
    /* The window clipped to the padded input: smaller than KH*KW only for
     * a ceil_mode window hanging past the bottom/right padding. */
    L(1, "const long h_pad = min(h0 + %dL, %lldL) - h0, w_pad = min(w0 + %dL, %lldL) - w0;",
      wl->kernel[0], ll(H + wl->padding[2]), wl->kernel[1], ll(W + wl->padding[3]));
    L(1, "out[i] = acc / (float)(h_pad * w_pad);");
  } else {
    L(1, "out[i] = acc / (float)((h_end - h_begin) * (w_end - w_begin));");
  }
  close_kernel(e);
  return add_unary_launch(e, "pool", items);
}

/* ------------------------------------------------------------------------ */

hetc_plugin_status_t ocl_emit_global_pool(ocl_emit_t *e) {
  const hetc_plugin_workload_t *wl = e->wl;
  const int64_t *in = wl->inputs[0].shape;
  const int64_t C = in[1], P = in[2] * in[3];
  const hetc_plugin_layout_t layout = follow_hint(&wl->inputs[0]);
  const int64_t B = hpc_layout_block(layout, C);
  /* [N, C, 1, 1] lies as N*CB*B elements in every layout. */
  const int64_t items = hpc_physical_count(&wl->output, layout);
  e->num_inputs = 1;
  e->input_layouts[0] = e->output_layout = layout;
  e->num_params = 0;
  e->workspace_bytes = 0;

  ocl_emit_preamble(e, HETC_PLUGIN_ACT_NONE);
  open_kernel(e, "global_pool", UNARY_PARAMS, items);
  /* Neighbouring work-items are neighbouring channels, so in a blocked
   * layout their loads are contiguous. */
  L(1, "const long lane = i %% %lldL, plane = i / %lldL;", ll(B), ll(B));
  L(1, "__global const float *restrict x = in + plane * %lldL + lane;", ll(P * B));
  L(1, "float sum = 0.0f;");
  L(1, "for (long p = 0; p < %lldL; ++p) sum += x[p * %lldL];", ll(P), ll(B));
  /* Padding channels sum zeros: the output's padding stays zero. */
  L(1, "out[i] = sum / %lld.0f;", ll(P));
  close_kernel(e);
  return add_unary_launch(e, "global_pool", items);
}

/* ------------------------------------------------------------------------ */

static hetc_plugin_status_t emit_unary(ocl_emit_t *e) {
  const hetc_plugin_tensor_t *a = &e->wl->inputs[0];
  const hetc_plugin_layout_t layout = follow_hint(a);
  const int64_t items = hpc_physical_count(a, layout);
  e->input_layouts[0] = e->output_layout = layout;
  ocl_emit_preamble(e, e->wl->activation);
  open_kernel(e, "elementwise", UNARY_PARAMS, items);
  const int64_t B = hpc_layout_block(layout, a->rank == 4 ? a->shape[1] : 1);
  if (layout.kind == HETC_PLUGIN_LAYOUT_NCHWC && a->shape[1] % B) {
    /* sigmoid(0) is 0.5: the padding channels are written as zeros rather
     * than through the activation. */
    char c[160];
    channel_expr(c, sizeof(c), "i", B, hpc_ceil_div(a->shape[1], B), a->shape[2] * a->shape[3]);
    L(1, "if (%s >= %lldL) { out[i] = 0.0f; return; }", c, ll(a->shape[1]));
  }
  L(1, "out[i] = act(in[i]);");
  close_kernel(e);
  return add_unary_launch(e, "elementwise", items);
}

hetc_plugin_status_t ocl_emit_elementwise(ocl_emit_t *e) {
  const hetc_plugin_workload_t *wl = e->wl;
  e->num_inputs = wl->num_inputs;
  e->num_params = 0;
  e->workspace_bytes = 0;
  if (wl->binary == HETC_PLUGIN_BINARY_NONE) return emit_unary(e);
  if (wl->num_inputs != 2)
    return ocl_status(HETC_PLUGIN_STATUS_INVALID_ARGUMENT, "opencl: binary op needs two inputs");

  const hetc_plugin_tensor_t *a = &wl->inputs[0], *b = &wl->inputs[1];
  const char *op = wl->binary == HETC_PLUGIN_BINARY_MUL ? "*" : "+";
  const hetc_plugin_layout_t la = follow_hint(a), lb = follow_hint(b);
  ocl_emit_preamble(e, HETC_PLUGIN_ACT_NONE);
  const char *params =
      "__global const float *restrict a, __global const float *restrict b, "
      "__global float *restrict out";
  const int32_t args[3] = {0, 1, 2};
  if (same_dims(a, b) && hpc_layout_equal(la, lb)) {
    /* Same shape and layout: elementwise over the physical elements;
     * padding stays zero (0 + 0, 0 * 0). */
    const int64_t items = hpc_physical_count(a, la);
    e->input_layouts[0] = e->input_layouts[1] = e->output_layout = la;
    open_kernel(e, "elementwise", params, items);
    L(1, "out[i] = a[i] %s b[i];", op);
    close_kernel(e);
    return add_launch(e, "elementwise", items, 3, args);
  }
  /* Broadcasting in row-major: the offset into b walks the output's index
   * with stride 0 along b's dims of extent 1. */
  const int64_t items = hpc_logical_count(a);
  e->input_layouts[0] = e->input_layouts[1] = e->output_layout = hpc_layout_row_major();
  open_kernel(e, "elementwise", params, items);
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
  close_kernel(e);
  return add_launch(e, "elementwise", items, 3, args);
}

/* ------------------------------------------------------------------------ */

hetc_plugin_status_t ocl_emit_softmax(ocl_emit_t *e) {
  const hetc_plugin_tensor_t *t = &e->wl->inputs[0];
  const int32_t axis = e->wl->axis;
  if (axis < 0 || axis >= t->rank)
    return ocl_status(HETC_PLUGIN_STATUS_INVALID_ARGUMENT, "opencl: softmax axis %d", axis);
  int64_t outer = 1, inner = 1;
  const int64_t extent = t->shape[axis];
  for (int32_t d = 0; d < axis; ++d) outer *= t->shape[d];
  for (int32_t d = axis + 1; d < t->rank; ++d) inner *= t->shape[d];
  e->num_inputs = 1;
  e->input_layouts[0] = e->output_layout = hpc_layout_row_major();
  e->num_params = 0;
  e->workspace_bytes = 0;

  ocl_emit_preamble(e, HETC_PLUGIN_ACT_NONE);
  /* One work-item per row along the axis; neighbouring work-items take
   * neighbouring inner positions, so their loads are contiguous. */
  open_kernel(e, "softmax", UNARY_PARAMS, outer * inner);
  L(1, "const long start = i / %lldL * %lldL + i %% %lldL;", ll(inner), ll(extent * inner),
    ll(inner));
  L(1, "__global const float *restrict x = in + start;");
  L(1, "__global float *restrict y = out + start;");
  /* Subtracting the max keeps exp() from overflowing on large logits. */
  L(1, "float m = x[0];");
  L(1, "for (long k = 1; k < %lldL; ++k) m = fmax(m, x[k * %lldL]);", ll(extent), ll(inner));
  L(1, "float sum = 0.0f;");
  L(1, "for (long k = 0; k < %lldL; ++k) {", ll(extent));
  L(2, "const float v = exp(x[k * %lldL] - m);", ll(inner));
  L(2, "y[k * %lldL] = v;", ll(inner));
  L(2, "sum += v;");
  L(1, "}");
  L(1, "const float scale = 1.0f / sum;");
  L(1, "for (long k = 0; k < %lldL; ++k) y[k * %lldL] *= scale;", ll(extent), ll(inner));
  close_kernel(e);
  return add_unary_launch(e, "softmax", outer * inner);
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
    dims[0] = s[0], dims[1] = hpc_ceil_div(s[1], layout.block), dims[2] = s[2];
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
    if (!hpc_layout_equal(follow_hint(t), first)) return hpc_layout_row_major();
    if (first.kind == HETC_PLUGIN_LAYOUT_NCHWC && wl->axis == 1 && j + 1 < wl->num_inputs &&
        t->shape[1] % first.block)
      return hpc_layout_row_major();
  }
  return first;
}

hetc_plugin_status_t ocl_emit_concat(ocl_emit_t *e) {
  const hetc_plugin_workload_t *wl = e->wl;
  if (wl->num_inputs < 1 || wl->num_inputs > OCL_MAX_INPUTS || wl->axis < 0 ||
      wl->axis >= wl->output.rank)
    return ocl_status(HETC_PLUGIN_STATUS_INVALID_ARGUMENT, "opencl: concat of %d inputs, axis %d",
                      wl->num_inputs, wl->axis);
  const hetc_plugin_layout_t layout = concat_layout(wl);
  e->num_inputs = wl->num_inputs;
  for (int32_t j = 0; j < wl->num_inputs; ++j) e->input_layouts[j] = layout;
  e->output_layout = layout;
  e->num_params = 0;
  e->workspace_bytes = 0;

  int64_t dims[HETC_PLUGIN_MAX_RANK + 1];
  int32_t axis = 0;
  const int32_t rank = physical_dims(&wl->output, layout, wl->axis, dims, &axis);
  int64_t outer = 1, inner = 1;
  for (int32_t d = 0; d < axis; ++d) outer *= dims[d];
  for (int32_t d = axis + 1; d < rank; ++d) inner *= dims[d];
  const int64_t row = dims[axis] * inner;

  ocl_emit_preamble(e, HETC_PLUGIN_ACT_NONE);
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
    open_kernel(e, name, UNARY_PARAMS, outer * chunk);
    L(1, "out[i / %lldL * %lldL + %lldL + i %% %lldL] = in[i];", ll(chunk), ll(row), ll(at),
      ll(chunk));
    close_kernel(e);
    const int32_t args[2] = {j, wl->num_inputs};
    hetc_plugin_status_t s = add_launch(e, name, outer * chunk, 2, args);
    if (s) return s;
    at += chunk;
  }
  return NULL;
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

hetc_plugin_status_t ocl_emit_layout(ocl_emit_t *e) {
  const hetc_plugin_workload_t *wl = e->wl;
  const hetc_plugin_tensor_t *in = &wl->inputs[0], *out = &wl->output;
  const hetc_plugin_layout_t li = as_reported(in->layout), lo = as_reported(out->layout);
  const int in_rm = li.kind == HETC_PLUGIN_LAYOUT_ROW_MAJOR;
  const int out_rm = lo.kind == HETC_PLUGIN_LAYOUT_ROW_MAJOR;
  if (!layout_usable(in, li) || !layout_usable(out, lo))
    return ocl_status(HETC_PLUGIN_STATUS_UNSUPPORTED,
                      "opencl: layout_transform between layouts %d and %d of ranks %d and %d",
                      li.kind, lo.kind, in->rank, out->rank);
  if (hpc_logical_count(in) != hpc_logical_count(out))
    return ocl_status(HETC_PLUGIN_STATUS_INVALID_ARGUMENT,
                      "opencl: layout_transform changes the element count");
  e->num_inputs = 1;
  e->input_layouts[0] = li;
  e->output_layout = lo;
  e->num_params = 0;
  e->workspace_bytes = 0;
  const int same = same_dims(in, out);
  const int64_t items = hpc_physical_count(out, lo);

  ocl_emit_preamble(e, HETC_PLUGIN_ACT_NONE);
  open_kernel(e, "layout", UNARY_PARAMS, items);
  if ((same && hpc_layout_equal(li, lo)) || (in_rm && out_rm)) {
    /* Nothing moves: the identity, or a reshape between row-major tensors. */
    L(1, "out[i] = in[i];");
    close_kernel(e);
    return add_unary_launch(e, "layout", items);
  }
  /* Each work-item finds the logical element its output slot holds:
   * `flat`, its index in row-major logical order, which a reshape keeps. */
  if (out_rm) {
    L(1, "const long flat = i;");
  } else {
    const int64_t C = out->shape[1], H = out->shape[2], W = out->shape[3];
    const int64_t bo = hpc_layout_block(lo, C);
    emit_unflatten(e, "o_", "i", bo, C, H, W);
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
      emit_unflatten(e, "i_", "flat", 1, C, H, W);
    }
    char offset[256];
    offset_expr(offset, sizeof(offset), "i_", hpc_layout_block(li, C), C, H, W);
    L(1, "out[i] = in[%s];", offset);
  }
  close_kernel(e);
  return add_unary_launch(e, "layout", items);
}

/* ------------------------------------------------------------------------ */

hetc_plugin_status_t ocl_emit_bias_add(ocl_emit_t *e) {
  const hetc_plugin_tensor_t *t = &e->wl->inputs[0];
  if (t->rank < 2)
    return ocl_status(HETC_PLUGIN_STATUS_INVALID_ARGUMENT, "opencl: bias_add of rank %d",
                      t->rank);
  const hetc_plugin_layout_t layout = follow_hint(t);
  const int64_t C = t->shape[1];
  const int64_t B = t->rank == 4 ? hpc_layout_block(layout, C) : 1, CB = hpc_ceil_div(C, B);
  int64_t plane = 1;
  for (int32_t d = 2; d < t->rank; ++d) plane *= t->shape[d];
  const int64_t items = hpc_physical_count(t, layout);
  e->num_inputs = 1;
  e->input_layouts[0] = e->output_layout = layout;
  /* The bias stays in its logical form, C floats, in every layout. */
  e->num_params = 1;
  e->param_bytes[0] = (uint64_t)C * 4;
  e->workspace_bytes = 0;

  ocl_emit_preamble(e, HETC_PLUGIN_ACT_NONE);
  open_kernel(e,
              "bias_add",
              "__global const float *restrict in, __global const float *restrict bias, "
              "__global float *restrict out",
              items);
  char c[160];
  channel_expr(c, sizeof(c), "i", B, CB, plane);
  L(1, "const long c = %s;", c);
  /* The bias has no padding channels to read. */
  if (C % B)
    L(1, "out[i] = c < %lldL ? in[i] + bias[c] : 0.0f;", ll(C));
  else
    L(1, "out[i] = in[i] + bias[c];");
  close_kernel(e);
  const int32_t args[3] = {0, 1, 2};
  return add_launch(e, "bias_add", items, 3, args);
}
