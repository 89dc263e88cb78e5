/* Workload checks, params, descriptions and copies (hetc/kit/workload.h). */
#include "hetc/kit/workload.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "hetc/kit/host.h"
#include "hetc/kit/layout.h"

/* Below 2^31 elements every index product in a kernel fits int64. */
#define MAX_ELEMENTS ((int64_t)1 << 31)

#define INVALID(...) return hetc_kit_refuse(r, HETC_PLUGIN_STATUS_INVALID_ARGUMENT, __VA_ARGS__)
#define UNSUPPORTED(...) return hetc_kit_refuse(r, HETC_PLUGIN_STATUS_UNSUPPORTED, __VA_ARGS__)

const char *hetc_kit_op_name(int32_t op) {
  static const char *const names[] = {"?",           "conv2d",  "dense",  "max_pool2d",
                                      "avg_pool2d",  "global_avg_pool2d", "elementwise",
                                      "softmax",     "concat",  "layout_transform", "bias_add",
                                      "transpose",   "log_softmax", "resize", "normalize", "matmul"};
  if (op < 1 || op >= HETC_PLUGIN_OP_COUNT_) return "unknown op";
  return names[op];
}

static int32_t check_tensor(hetc_kit_reason_t *r, const hetc_plugin_tensor_t *t, const char *what) {
  if (t->dtype != HETC_PLUGIN_DTYPE_FLOAT32) UNSUPPORTED("%s: dtype %d is not float32", what, t->dtype);
  if (t->rank < 1 || t->rank > HETC_PLUGIN_MAX_RANK)
    INVALID("%s: rank %d outside 1..%d", what, t->rank, HETC_PLUGIN_MAX_RANK);
  int64_t count = 1;
  for (int32_t i = 0; i < t->rank; ++i) {
    if (t->shape[i] < 1 || t->shape[i] > MAX_ELEMENTS) INVALID("%s: dim %d is %lld", what, i, (long long)t->shape[i]);
    count *= t->shape[i];
    if (count > MAX_ELEMENTS) INVALID("%s: more than 2^31 elements", what);
  }
  switch (t->layout.kind) {
    case HETC_PLUGIN_LAYOUT_ROW_MAJOR: break;
    case HETC_PLUGIN_LAYOUT_NCHWC:
      if (t->layout.block < 1 || t->layout.block > 4096)
        INVALID("%s: NCHWC block %d outside 1..4096", what, t->layout.block);
      /* fall through */
    case HETC_PLUGIN_LAYOUT_NHWC:
      if (t->rank != 4)
        INVALID("%s: layout %s needs rank 4, got %d", what,
                t->layout.kind == HETC_PLUGIN_LAYOUT_NHWC ? "NHWC" : "NCHWC", t->rank);
      break;
    default: UNSUPPORTED("%s: unknown layout kind %d", what, t->layout.kind);
  }
  return 0;
}

static int64_t conv_extent(int64_t in, int64_t k, int64_t s, int64_t d, int64_t p0, int64_t p1) {
  const int64_t span = in + p0 + p1 - d * (k - 1) - 1;
  return span < 0 ? 0 : span / s + 1;
}

static int64_t pool_extent(int64_t in, int64_t k, int64_t s, int64_t p0, int64_t p1, int ceil_mode) {
  const int64_t span = in + p0 + p1 - k;
  if (span < 0) return 0;
  int64_t out = (ceil_mode ? (span + s - 1) / s : span / s) + 1;
  /* ceil_mode: a last window starting inside the end padding is dropped. */
  if (ceil_mode && (out - 1) * s >= in + p0) --out;
  return out;
}

static int32_t check_epilogue(hetc_kit_reason_t *r, const hetc_plugin_workload_t *wl, const char *op) {
  const hetc_plugin_epilogue_t *e = &wl->epilogue;
  if ((e->has_bias != 0 && e->has_bias != 1) || (e->has_residual != 0 && e->has_residual != 1))
    INVALID("%s: epilogue flags must be 0 or 1", op);
  if (!HETC_KIT_EPILOGUE_ACTIVATION(e->activation))
    UNSUPPORTED("%s: activation %d is not an epilogue's", op, e->activation);
  if (wl->num_inputs != 1 + e->has_residual)
    INVALID("%s: %d activation inputs, expected %d", op, wl->num_inputs, 1 + e->has_residual);
  if (e->has_residual && !hetc_kit_same_shape(&wl->inputs[1], &wl->output))
    INVALID("%s: residual shape differs from the output's", op);
  return 0;
}

static int32_t check_window(hetc_kit_reason_t *r, const hetc_plugin_workload_t *wl, const char *op) {
  if (wl->kernel[0] < 1 || wl->kernel[1] < 1 || wl->strides[0] < 1 || wl->strides[1] < 1)
    INVALID("%s: kernel %dx%d and strides %dx%d must be positive", op, wl->kernel[0], wl->kernel[1],
            wl->strides[0], wl->strides[1]);
  for (int i = 0; i < 4; ++i)
    if (wl->padding[i] < 0) INVALID("%s: negative padding", op);
  if (wl->inputs[0].rank != 4 || wl->output.rank != 4) INVALID("%s: input and output must be 4-d", op);
  if (wl->inputs[0].shape[0] != wl->output.shape[0]) INVALID("%s: batch differs between input and output", op);
  return 0;
}

static int32_t check_conv(hetc_kit_reason_t *r, const hetc_plugin_workload_t *wl) {
  int32_t s = check_window(r, wl, "conv2d");
  if (s || (s = check_epilogue(r, wl, "conv2d"))) return s;
  if (wl->dilation[0] < 1 || wl->dilation[1] < 1)
    INVALID("conv2d: dilation %dx%d must be positive", wl->dilation[0], wl->dilation[1]);
  const int64_t *in = wl->inputs[0].shape, *out = wl->output.shape;
  if (wl->groups < 1 || in[1] % wl->groups || out[1] % wl->groups)
    INVALID("conv2d: groups %d must divide channels %lld and %lld", wl->groups, (long long)in[1],
            (long long)out[1]);
  const int64_t oh = conv_extent(in[2], wl->kernel[0], wl->strides[0], wl->dilation[0], wl->padding[0], wl->padding[2]);
  const int64_t ow = conv_extent(in[3], wl->kernel[1], wl->strides[1], wl->dilation[1], wl->padding[1], wl->padding[3]);
  if (oh != out[2] || ow != out[3])
    INVALID("conv2d: output %lldx%lld, the arithmetic gives %lldx%lld", (long long)out[2], (long long)out[3],
            (long long)oh, (long long)ow);
  /* The weight is a tensor too: its size must fit the same arithmetic,
   * though no dimension of it is one of the workload's tensors. */
  const double weights = (double)out[1] * (double)(in[1] / wl->groups) * wl->kernel[0] * wl->kernel[1];
  if (weights > (double)MAX_ELEMENTS) UNSUPPORTED("conv2d: a weight of %.0f elements (at most 2^31)", weights);
  return 0;
}

static int32_t check_pool(hetc_kit_reason_t *r, const hetc_plugin_workload_t *wl) {
  int32_t s = check_window(r, wl, "pool2d");
  if (s) return s;
  if (wl->num_inputs != 1) INVALID("pool2d: expected one input");
  if (wl->dilation[0] > 1 || wl->dilation[1] > 1) UNSUPPORTED("pool2d: dilated pooling");
  if (wl->padding[0] >= wl->kernel[0] || wl->padding[2] >= wl->kernel[0] || wl->padding[1] >= wl->kernel[1] ||
      wl->padding[3] >= wl->kernel[1])
    INVALID("pool2d: padding must be smaller than the kernel");
  const int64_t *in = wl->inputs[0].shape, *out = wl->output.shape;
  if (in[1] != out[1]) INVALID("pool2d: channels differ");
  const int64_t oh = pool_extent(in[2], wl->kernel[0], wl->strides[0], wl->padding[0], wl->padding[2], wl->ceil_mode);
  const int64_t ow = pool_extent(in[3], wl->kernel[1], wl->strides[1], wl->padding[1], wl->padding[3], wl->ceil_mode);
  if (oh != out[2] || ow != out[3])
    INVALID("pool2d: output %lldx%lld, the arithmetic gives %lldx%lld", (long long)out[2], (long long)out[3],
            (long long)oh, (long long)ow);
  return 0;
}

static int32_t check_elementwise(hetc_kit_reason_t *r, const hetc_plugin_workload_t *wl) {
  const hetc_plugin_tensor_t *in = wl->inputs;
  if (!hetc_kit_same_shape(in, &wl->output)) INVALID("elementwise: output shape differs from the first input's");
  if (wl->binary == HETC_PLUGIN_BINARY_NONE) {
    if (wl->num_inputs != 1) INVALID("elementwise: unary takes one input");
    if (wl->activation < HETC_PLUGIN_ACT_NONE || wl->activation > HETC_KIT_LAST_ACTIVATION)
      UNSUPPORTED("elementwise: unknown activation %d", wl->activation);
    return 0;
  }
  if (wl->binary < HETC_PLUGIN_BINARY_ADD || wl->binary > HETC_KIT_LAST_BINARY)
    UNSUPPORTED("elementwise: unknown binary op %d", wl->binary);
  if (wl->activation != HETC_PLUGIN_ACT_NONE) INVALID("elementwise: both an activation and a binary op");
  if (wl->num_inputs != 2) INVALID("elementwise: binary takes two inputs");
  if (in[1].rank != in[0].rank) INVALID("elementwise: operands of different rank");
  for (int32_t i = 0; i < in[0].rank; ++i)
    if (in[1].shape[i] != in[0].shape[i] && in[1].shape[i] != 1)
      INVALID("elementwise: dim %d of the second operand neither equals the first's nor is 1", i);
  return 0;
}

static int32_t check_concat(hetc_kit_reason_t *r, const hetc_plugin_workload_t *wl) {
  const hetc_plugin_tensor_t *in = wl->inputs, *out = &wl->output;
  if (wl->axis < 0 || wl->axis >= out->rank) INVALID("concat: axis %d outside 0..%d", wl->axis, out->rank - 1);
  int64_t sum = 0;
  for (int32_t j = 0; j < wl->num_inputs; ++j) {
    if (in[j].rank != out->rank) INVALID("concat: ranks differ");
    for (int32_t i = 0; i < out->rank; ++i)
      if (i != wl->axis && in[j].shape[i] != out->shape[i])
        INVALID("concat: input %d differs from the output in dim %d", j, i);
    sum += in[j].shape[wl->axis];
  }
  if (sum != out->shape[wl->axis])
    INVALID("concat: inputs sum to %lld along the axis, output has %lld", (long long)sum,
            (long long)out->shape[wl->axis]);
  return 0;
}

#if HETC_KIT_ABI_AT_LEAST(1, 4)
static int32_t check_transpose(hetc_kit_reason_t *r, const hetc_plugin_workload_t *wl) {
  const hetc_plugin_tensor_t *in = wl->inputs, *out = &wl->output;
  if (wl->num_inputs != 1 || in->rank != out->rank) INVALID("transpose: one input of the output's rank expected");
  if (wl->axis < 0 || (wl->axis >> (3 * out->rank)) != 0) INVALID("transpose: axis packs more than %d dims", out->rank);
  int seen[HETC_PLUGIN_MAX_RANK] = {0};
  for (int32_t d = 0; d < out->rank; ++d) {
    const int32_t from = HETC_PLUGIN_PERM_AT(wl->axis, d);
    if (from < 0 || from >= in->rank || seen[from]++) INVALID("transpose: perm is not a permutation of 0..%d", in->rank - 1);
    if (out->shape[d] != in->shape[from])
      INVALID("transpose: output dim %d is %lld, input dim %d is %lld", d, (long long)out->shape[d], from,
              (long long)in->shape[from]);
  }
  return 0;
}
#endif

#if HETC_KIT_ABI_AT_LEAST(2, 0)
static int32_t check_resize(hetc_kit_reason_t *r, const hetc_plugin_workload_t *wl) {
  const hetc_plugin_tensor_t *in = wl->inputs, *out = &wl->output;
  const hetc_plugin_resize_params_t *p = &wl->params.resize;
  if (wl->num_inputs != 1 || in->rank != 4 || out->rank != 4 || in->shape[0] != out->shape[0] ||
      in->shape[1] != out->shape[1])
    INVALID("resize: one 4-d input of the output's N and C expected");
  if (p->mode != HETC_PLUGIN_RESIZE_NEAREST && p->mode != HETC_PLUGIN_RESIZE_LINEAR)
    UNSUPPORTED("resize: mode %d is not supported", p->mode);
  if (p->coordinates < HETC_PLUGIN_RESIZE_HALF_PIXEL || p->coordinates > HETC_PLUGIN_RESIZE_HALF_PIXEL_SYMMETRIC)
    UNSUPPORTED("resize: coordinate transform %d is not supported", p->coordinates);
  if (p->rounding < HETC_PLUGIN_RESIZE_ROUND_PREFER_FLOOR || p->rounding > HETC_PLUGIN_RESIZE_CEIL)
    UNSUPPORTED("resize: rounding %d is not supported", p->rounding);
  if (!(p->scales[0] > 0) || !(p->scales[1] > 0) || p->scales[0] > 1e9 || p->scales[1] > 1e9)
    INVALID("resize: scales %g, %g must be positive", p->scales[0], p->scales[1]);
  return 0;
}

static int32_t check_matmul(hetc_kit_reason_t *r, const hetc_plugin_workload_t *wl) {
  if (wl->num_inputs != 2) INVALID("matmul: two inputs expected, got %d", wl->num_inputs);
  const hetc_plugin_tensor_t *a = &wl->inputs[0], *b = &wl->inputs[1], *out = &wl->output;
  const int32_t rank = a->rank;
  if (rank < 2 || b->rank != rank || out->rank != rank) INVALID("matmul: inputs and output of one rank >= 2 expected");
  for (int32_t d = 0; d + 2 < rank; ++d)
    if (b->shape[d] != a->shape[d] || out->shape[d] != a->shape[d])
      INVALID("matmul: batch dim %d differs between the inputs and the output", d);
  if (b->shape[rank - 2] != a->shape[rank - 1] || out->shape[rank - 2] != a->shape[rank - 2] ||
      out->shape[rank - 1] != b->shape[rank - 1])
    INVALID("matmul: [M, K] x [K, N] -> [M, N] does not hold");
  return 0;
}

static int32_t check_normalize(hetc_kit_reason_t *r, const hetc_plugin_workload_t *wl) {
  const hetc_plugin_tensor_t *in = wl->inputs;
  const hetc_plugin_normalize_params_t *p = &wl->params.normalize;
  if (wl->num_inputs != 1 || !hetc_kit_same_shape(in, &wl->output) || in->rank < 2)
    INVALID("normalize: one input of rank >= 2 of the output's shape expected");
  if (p->axis < 0 || p->num_axes < 1 || p->axis + p->num_axes > in->rank)
    INVALID("normalize: axes %d .. %d outside rank %d", p->axis, p->axis + p->num_axes - 1, in->rank);
  if (p->groups < 1 || in->shape[p->axis] % p->groups != 0)
    INVALID("normalize: %d groups do not divide %lld", p->groups, (long long)in->shape[p->axis]);
  if ((p->affine != 0 && p->affine != 1) || !(p->epsilon > 0) || !(p->epsilon < 1e30))
    INVALID("normalize: affine %d or epsilon %g", p->affine, p->epsilon);
  return 0;
}
#endif

static int32_t check_op(hetc_kit_reason_t *r, const hetc_plugin_workload_t *wl) {
  const hetc_plugin_tensor_t *in = wl->inputs, *out = &wl->output;
  switch (wl->op) {
    case HETC_PLUGIN_OP_CONV2D: return check_conv(r, wl);
    case HETC_PLUGIN_OP_DENSE: {
      const int32_t s = check_epilogue(r, wl, "dense");
      if (s) return s;
      if (in->rank != 2 || out->rank != 2 || in->shape[0] != out->shape[0])
        INVALID("dense: input [N,K] and output [N,units] expected");
      return 0;
    }
    case HETC_PLUGIN_OP_MAX_POOL2D:
    case HETC_PLUGIN_OP_AVG_POOL2D: return check_pool(r, wl);
    case HETC_PLUGIN_OP_GLOBAL_AVG_POOL2D:
      if (wl->num_inputs != 1 || in->rank != 4 || out->rank != 4 || out->shape[0] != in->shape[0] ||
          out->shape[1] != in->shape[1] || out->shape[2] != 1 || out->shape[3] != 1)
        INVALID("global_avg_pool2d: input [N,C,H,W], output [N,C,1,1]");
      return 0;
    case HETC_PLUGIN_OP_ELEMENTWISE: return check_elementwise(r, wl);
    case HETC_PLUGIN_OP_SOFTMAX:
#if HETC_KIT_ABI_AT_LEAST(1, 5)
    case HETC_PLUGIN_OP_LOG_SOFTMAX:
#endif
      if (wl->num_inputs != 1 || !hetc_kit_same_shape(in, out))
        INVALID("%s: one input of the output's shape expected", hetc_kit_op_name(wl->op));
      if (wl->axis < 0 || wl->axis >= in->rank)
        INVALID("%s: axis %d outside 0..%d", hetc_kit_op_name(wl->op), wl->axis, in->rank - 1);
      return 0;
    case HETC_PLUGIN_OP_CONCAT: return check_concat(r, wl);
    case HETC_PLUGIN_OP_LAYOUT_TRANSFORM:
      if (wl->num_inputs != 1) INVALID("layout_transform: one input expected");
      if (hetc_kit_logical_count(in) != hetc_kit_logical_count(out)) INVALID("layout_transform: element counts differ");
      return 0;
    case HETC_PLUGIN_OP_BIAS_ADD:
      if (wl->num_inputs != 1 || !hetc_kit_same_shape(in, out) || in->rank < 2)
        INVALID("bias_add: one input of rank >= 2 of the output's shape");
      return 0;
#if HETC_KIT_ABI_AT_LEAST(1, 4)
    case HETC_PLUGIN_OP_TRANSPOSE: return check_transpose(r, wl);
#endif
#if HETC_KIT_ABI_AT_LEAST(2, 0)
    case HETC_PLUGIN_OP_RESIZE: return check_resize(r, wl);
    case HETC_PLUGIN_OP_NORMALIZE: return check_normalize(r, wl);
    case HETC_PLUGIN_OP_MATMUL: return check_matmul(r, wl);
#endif
    default: UNSUPPORTED("op %d is not supported", wl->op);
  }
}

int32_t hetc_kit_workload_check(const hetc_plugin_workload_t *wl, hetc_kit_reason_t *r) {
  if (r && r->size) r->text[0] = '\0';
  if (!wl) INVALID("null workload");
  if (wl->op < 1 || wl->op >= HETC_PLUGIN_OP_COUNT_) UNSUPPORTED("op %d is not supported", wl->op);
  if (wl->num_inputs < 1 || wl->num_inputs > HETC_KIT_MAX_INPUTS || !wl->inputs)
    INVALID("%s: %d activation inputs", hetc_kit_op_name(wl->op), wl->num_inputs);
  int32_t s;
  char what[32];
  for (int32_t i = 0; i < wl->num_inputs; ++i) {
    snprintf(what, sizeof(what), "input %d", i);
    if ((s = check_tensor(r, &wl->inputs[i], what))) return s;
  }
  if ((s = check_tensor(r, &wl->output, "output"))) return s;
  return check_op(r, wl);
}

int hetc_kit_conv_is_depthwise(const hetc_plugin_workload_t *wl) {
  return wl->op == HETC_PLUGIN_OP_CONV2D && wl->groups > 1 && wl->groups == wl->inputs[0].shape[1] &&
         wl->groups == wl->output.shape[1];
}

int32_t hetc_kit_param_count(const hetc_plugin_workload_t *wl) {
  if (wl->op == HETC_PLUGIN_OP_CONV2D || wl->op == HETC_PLUGIN_OP_DENSE) return 1 + wl->epilogue.has_bias;
#if HETC_KIT_ABI_AT_LEAST(2, 0)
  if (wl->op == HETC_PLUGIN_OP_NORMALIZE) return wl->params.normalize.affine ? 2 : 0;
#endif
  return wl->op == HETC_PLUGIN_OP_BIAS_ADD ? 1 : 0;
}

uint64_t hetc_kit_param_elements(const hetc_plugin_workload_t *wl, int32_t index) {
  const int64_t out_channels = wl->output.shape[1], in_channels = wl->inputs[0].shape[1];
  switch (wl->op) {
    case HETC_PLUGIN_OP_CONV2D:
      if (index == 0) return (uint64_t)(out_channels * (in_channels / wl->groups) * wl->kernel[0] * wl->kernel[1]);
      return index == 1 && wl->epilogue.has_bias ? (uint64_t)out_channels : 0;
    case HETC_PLUGIN_OP_DENSE:
      if (index == 0) return (uint64_t)(out_channels * in_channels);
      return index == 1 && wl->epilogue.has_bias ? (uint64_t)out_channels : 0;
    case HETC_PLUGIN_OP_BIAS_ADD: return index == 0 ? (uint64_t)in_channels : 0;
#if HETC_KIT_ABI_AT_LEAST(2, 0)
    case HETC_PLUGIN_OP_NORMALIZE:
      return index >= 0 && index < hetc_kit_param_count(wl) ? (uint64_t)wl->inputs[0].shape[wl->params.normalize.axis]
                                                             : 0;
#endif
    default: return 0;
  }
}

/* ------------------------------------------------------------------------ */
/* Descriptions                                                             */
/* ------------------------------------------------------------------------ */

/* Appends to a caller's buffer; once it is full, further text is dropped. */
typedef struct text_t {
  char *buf;
  size_t size, length;
} text_t;

static void append(text_t *t, const char *format, ...) HETC_PLUGIN_PRINTF(2, 3);
static void append(text_t *t, const char *format, ...) {
  if (t->length + 1 >= t->size) return;
  va_list args;
  va_start(args, format);
  const int n = vsnprintf(t->buf + t->length, t->size - t->length, format, args);
  va_end(args);
  if (n > 0) t->length = t->length + (size_t)n < t->size ? t->length + (size_t)n : t->size - 1;
}

static void describe_tensor(text_t *t, const hetc_plugin_tensor_t *x) {
  append(t, "[");
  for (int32_t i = 0; i < x->rank; ++i) append(t, "%s%lld", i ? "," : "", (long long)x->shape[i]);
  append(t, "]");
}

void hetc_kit_workload_describe(const hetc_plugin_workload_t *wl, char *buf, size_t size) {
  text_t t = {buf, size, 0};
  if (size) buf[0] = '\0';
  append(&t, "%s in ", hetc_kit_op_name(wl->op));
  for (int32_t i = 0; i < wl->num_inputs; ++i) {
    if (i) append(&t, ", ");
    describe_tensor(&t, &wl->inputs[i]);
  }
  append(&t, " out ");
  describe_tensor(&t, &wl->output);
  switch (wl->op) {
    case HETC_PLUGIN_OP_CONV2D:
    case HETC_PLUGIN_OP_MAX_POOL2D:
    case HETC_PLUGIN_OP_AVG_POOL2D:
      append(&t, " kernel %dx%d stride %dx%d pad %d,%d,%d,%d", wl->kernel[0], wl->kernel[1], wl->strides[0],
             wl->strides[1], wl->padding[0], wl->padding[1], wl->padding[2], wl->padding[3]);
      if (wl->op == HETC_PLUGIN_OP_CONV2D)
        append(&t, " dilation %dx%d groups %d", wl->dilation[0], wl->dilation[1], wl->groups);
      else
        append(&t, " ceil_mode %d count_include_pad %d", wl->ceil_mode, wl->count_include_pad);
      break;
    case HETC_PLUGIN_OP_ELEMENTWISE: append(&t, " activation %d binary %d", wl->activation, wl->binary); break;
    case HETC_PLUGIN_OP_SOFTMAX:
#if HETC_KIT_ABI_AT_LEAST(1, 5)
    case HETC_PLUGIN_OP_LOG_SOFTMAX:
#endif
    case HETC_PLUGIN_OP_CONCAT: append(&t, " axis %d", wl->axis); break;
#if HETC_KIT_ABI_AT_LEAST(1, 4)
    case HETC_PLUGIN_OP_TRANSPOSE:
      append(&t, " perm");
      for (int32_t d = 0; d < wl->output.rank; ++d) append(&t, "%s%d", d ? "," : " ", HETC_PLUGIN_PERM_AT(wl->axis, d));
      break;
#endif
#if HETC_KIT_ABI_AT_LEAST(2, 0)
    case HETC_PLUGIN_OP_RESIZE:
      append(&t, " mode %d coordinates %d rounding %d scales %.17g,%.17g", wl->params.resize.mode,
             wl->params.resize.coordinates, wl->params.resize.rounding, wl->params.resize.scales[0],
             wl->params.resize.scales[1]);
      break;
    case HETC_PLUGIN_OP_NORMALIZE:
      append(&t, " axis %d num_axes %d groups %d affine %d epsilon %.17g", wl->params.normalize.axis,
             wl->params.normalize.num_axes, wl->params.normalize.groups, wl->params.normalize.affine,
             wl->params.normalize.epsilon);
      break;
#endif
    default: break;
  }
  if (wl->op == HETC_PLUGIN_OP_CONV2D || wl->op == HETC_PLUGIN_OP_DENSE)
    append(&t, " epilogue bias %d residual %d activation %d", wl->epilogue.has_bias, wl->epilogue.has_residual,
           wl->epilogue.activation);
}

/* ------------------------------------------------------------------------ */
/* Copies                                                                   */
/* ------------------------------------------------------------------------ */

int hetc_kit_workload_copy(const hetc_plugin_workload_t *src, hetc_plugin_workload_t *dst) {
  *dst = *src;
  const size_t bytes = sizeof(*src->inputs) * (size_t)src->num_inputs;
  hetc_plugin_tensor_t *inputs = hetc_kit_host()->alloc(bytes ? bytes : 1);
  dst->inputs = inputs;
  if (!inputs) return -1;
  memcpy(inputs, src->inputs, bytes);
  return 0;
}

void hetc_kit_workload_release(hetc_plugin_workload_t *wl) {
  hetc_kit_host()->free((void *)wl->inputs);
  wl->inputs = NULL;
}
