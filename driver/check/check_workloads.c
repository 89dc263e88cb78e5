#include "check/check_workloads.h"

#include <stdio.h>
#include <string.h>

#include "graph/infer.h"

/* " relu", ... for a label; "" for none. */
static const char *epilogue_name(int32_t activation) {
  switch (activation) {
    case HETC_PLUGIN_ACT_RELU: return " relu";
    case HETC_PLUGIN_ACT_RELU6: return " relu6";
    case HETC_PLUGIN_ACT_SIGMOID: return " sigmoid";
    case HETC_PLUGIN_ACT_TANH: return " tanh";
    case HETC_PLUGIN_ACT_SILU: return " silu";
    case HETC_PLUGIN_ACT_HARDSWISH: return " hardswish";
    case HETC_PLUGIN_ACT_HARDSIGMOID: return " hardsigmoid";
    case HETC_PLUGIN_ACT_GELU: return " gelu";
    case HETC_PLUGIN_ACT_GELU_TANH: return " gelu_tanh";
    default: return "";
  }
}

typedef struct conv_spec_t {
  int64_t n, c, h, w, k;
  int32_t kh, kw, stride, dilation, groups;
  int32_t pad[4];
  int32_t bias, residual, activation;
  int quick;
} conv_spec_t;

/* Direct, 1x1, strided with asymmetric padding, depthwise, grouped with a
 * residual, batched and dilated; then minor 6's epilogues: a 1x1 with silu,
 * a strided depthwise with hardswish (MobileNetV3's), and hardsigmoid after
 * a residual on 10 channels, which fill no block of 4 or 8 (hardsigmoid(0)
 * is 0.5: padding channels must stay 0); then minor 7's gelu after a
 * residual on 10 channels (ViT's and ConvNeXt's). */
static const conv_spec_t conv_specs[] = {
    {1, 8, 10, 10, 16, 3, 3, 1, 1, 1, {1, 1, 1, 1}, 1, 0, HETC_PLUGIN_ACT_RELU, 1},
    {1, 16, 9, 9, 8, 1, 1, 1, 1, 1, {0, 0, 0, 0}, 0, 0, HETC_PLUGIN_ACT_NONE, 0},
    {1, 6, 11, 13, 12, 3, 3, 2, 1, 1, {1, 0, 1, 1}, 1, 0, HETC_PLUGIN_ACT_SIGMOID, 0},
    {1, 8, 12, 12, 8, 3, 3, 1, 1, 8, {1, 1, 1, 1}, 1, 0, HETC_PLUGIN_ACT_RELU6, 1},
    {1, 8, 7, 7, 8, 3, 3, 1, 1, 2, {1, 1, 1, 1}, 0, 1, HETC_PLUGIN_ACT_RELU, 1},
    {2, 4, 9, 8, 6, 5, 3, 1, 2, 1, {2, 1, 2, 1}, 1, 0, HETC_PLUGIN_ACT_TANH, 0},
    {1, 8, 9, 9, 12, 1, 1, 1, 1, 1, {0, 0, 0, 0}, 1, 0, HETC_PLUGIN_ACT_SILU, 1},
    {1, 12, 10, 10, 12, 3, 3, 2, 1, 12, {1, 1, 1, 1}, 1, 0, HETC_PLUGIN_ACT_HARDSWISH, 0},
    {1, 6, 7, 7, 10, 3, 3, 1, 1, 1, {1, 1, 1, 1}, 1, 1, HETC_PLUGIN_ACT_HARDSIGMOID, 0},
    {1, 6, 8, 8, 10, 3, 3, 1, 1, 1, {1, 1, 1, 1}, 1, 1, HETC_PLUGIN_ACT_GELU, 1},
};
#define NUM_CONV ((int32_t)(sizeof(conv_specs) / sizeof(conv_specs[0])))

/* The other ops, one builder each; `quick` marks the ones --quick keeps. */
typedef void (*op_builder_t)(check_workload_t *out);

static hetc_plugin_tensor_t tensor(int32_t rank, int64_t d0, int64_t d1, int64_t d2, int64_t d3) {
  hetc_plugin_tensor_t t = {HETC_PLUGIN_DTYPE_FLOAT32, rank, {d0, d1, d2, d3}, {HETC_PLUGIN_LAYOUT_ROW_MAJOR, 0}};
  return t;
}

static void set_inputs(check_workload_t *out, int32_t count) {
  out->workload.num_inputs = count;
  out->workload.inputs = out->inputs;
}

static void dense(check_workload_t *out) {
  out->workload.op = HETC_PLUGIN_OP_DENSE;
  out->inputs[0] = tensor(2, 2, 40, 0, 0);
  out->workload.output = tensor(2, 2, 10, 0, 0);
  out->workload.epilogue = (hetc_plugin_epilogue_t){1, 0, HETC_PLUGIN_ACT_RELU, 0};
  set_inputs(out, 1);
  snprintf(out->label, sizeof(out->label), "dense 2x40 -> 10 bias relu");
}

/* Minor 6: silu in a dense's epilogue. */
static void dense_silu(check_workload_t *out) {
  dense(out);
  out->workload.epilogue.activation = HETC_PLUGIN_ACT_SILU;
  snprintf(out->label, sizeof(out->label), "dense 2x40 -> 10 bias silu");
}

/* Minor 7: gelu_tanh in a dense's epilogue (as GPT-style MLPs have it). */
static void dense_gelu_tanh(check_workload_t *out) {
  dense(out);
  out->workload.epilogue.activation = HETC_PLUGIN_ACT_GELU_TANH;
  snprintf(out->label, sizeof(out->label), "dense 2x40 -> 10 bias gelu_tanh");
}

static void dense_residual(check_workload_t *out) {
  out->workload.op = HETC_PLUGIN_OP_DENSE;
  out->inputs[0] = tensor(2, 1, 33, 0, 0);
  out->inputs[1] = tensor(2, 1, 7, 0, 0);
  out->workload.output = tensor(2, 1, 7, 0, 0);
  out->workload.epilogue = (hetc_plugin_epilogue_t){0, 1, HETC_PLUGIN_ACT_NONE, 0};
  set_inputs(out, 2);
  snprintf(out->label, sizeof(out->label), "dense 1x33 -> 7 residual");
}

static void pool(check_workload_t *out, int32_t op, int32_t ceil_mode, int32_t include_pad) {
  out->workload.op = op;
  out->inputs[0] = tensor(4, 1, 4, 9, 10);
  out->workload.kernel[0] = out->workload.kernel[1] = 3;
  out->workload.strides[0] = out->workload.strides[1] = 2;
  out->workload.dilation[0] = out->workload.dilation[1] = 1;
  for (int p = 0; p < 4; ++p) out->workload.padding[p] = 1;
  out->workload.ceil_mode = ceil_mode;
  out->workload.count_include_pad = include_pad;
  int64_t oh = hetc_window_output_extent(9, 3, 2, 1, 1, 1, ceil_mode);
  int64_t ow = hetc_window_output_extent(10, 3, 2, 1, 1, 1, ceil_mode);
  out->workload.output = tensor(4, 1, 4, oh, ow);
  set_inputs(out, 1);
  snprintf(out->label, sizeof(out->label), "%s 1x4x9x10 k3 s2 p1%s%s", op == HETC_PLUGIN_OP_MAX_POOL2D ? "max_pool2d" : "avg_pool2d",
           ceil_mode ? " ceil_mode" : "", include_pad ? " count_include_pad" : "");
}
static void max_pool(check_workload_t *out) { pool(out, HETC_PLUGIN_OP_MAX_POOL2D, 0, 0); }
static void max_pool_ceil(check_workload_t *out) { pool(out, HETC_PLUGIN_OP_MAX_POOL2D, 1, 0); }
static void avg_pool(check_workload_t *out) { pool(out, HETC_PLUGIN_OP_AVG_POOL2D, 0, 0); }
static void avg_pool_include_pad(check_workload_t *out) { pool(out, HETC_PLUGIN_OP_AVG_POOL2D, 1, 1); }

static void global_avg_pool(check_workload_t *out) {
  out->workload.op = HETC_PLUGIN_OP_GLOBAL_AVG_POOL2D;
  out->inputs[0] = tensor(4, 1, 8, 5, 6);
  out->workload.output = tensor(4, 1, 8, 1, 1);
  set_inputs(out, 1);
  snprintf(out->label, sizeof(out->label), "global_avg_pool2d 1x8x5x6");
}

static void relu(check_workload_t *out) {
  out->workload.op = HETC_PLUGIN_OP_ELEMENTWISE;
  out->workload.activation = HETC_PLUGIN_ACT_RELU;
  out->inputs[0] = tensor(4, 1, 4, 5, 5);
  out->workload.output = out->inputs[0];
  set_inputs(out, 1);
  snprintf(out->label, sizeof(out->label), "elementwise relu 1x4x5x5");
}

/* Minor 4's to 7's activations, on a shape whose channels do not fill
 * a block of 4 or 8 (most are not 0 at 0, so padding channels must stay
 * out or be put back to 0). */
static void unary(check_workload_t *out, int32_t activation, const char *name) {
  out->workload.op = HETC_PLUGIN_OP_ELEMENTWISE;
  out->workload.activation = activation;
  out->inputs[0] = tensor(4, 1, 5, 3, 3);
  out->workload.output = out->inputs[0];
  set_inputs(out, 1);
  snprintf(out->label, sizeof(out->label), "elementwise %s 1x5x3x3", name);
}

static void elu(check_workload_t *out) { unary(out, HETC_PLUGIN_ACT_ELU, "elu"); }
static void softplus(check_workload_t *out) { unary(out, HETC_PLUGIN_ACT_SOFTPLUS, "softplus"); }
static void exp_unary(check_workload_t *out) { unary(out, HETC_PLUGIN_ACT_EXP, "exp"); }
static void log_unary(check_workload_t *out) { unary(out, HETC_PLUGIN_ACT_LOG, "log"); }
static void silu_unary(check_workload_t *out) { unary(out, HETC_PLUGIN_ACT_SILU, "silu"); }
static void hardswish_unary(check_workload_t *out) { unary(out, HETC_PLUGIN_ACT_HARDSWISH, "hardswish"); }
static void hardsigmoid_unary(check_workload_t *out) { unary(out, HETC_PLUGIN_ACT_HARDSIGMOID, "hardsigmoid"); }
static void gelu_unary(check_workload_t *out) { unary(out, HETC_PLUGIN_ACT_GELU, "gelu"); }
static void gelu_tanh_unary(check_workload_t *out) { unary(out, HETC_PLUGIN_ACT_GELU_TANH, "gelu_tanh"); }
static void erf_unary(check_workload_t *out) { unary(out, HETC_PLUGIN_ACT_ERF, "erf"); }

/* A binary op whose second input broadcasts over H and W. */
static void binary_broadcast(check_workload_t *out, int32_t binary, const char *name, const char *symbol) {
  out->workload.op = HETC_PLUGIN_OP_ELEMENTWISE;
  out->workload.binary = binary;
  out->inputs[0] = tensor(4, 1, 6, 3, 3);
  out->inputs[1] = tensor(4, 1, 6, 1, 1);
  out->workload.output = out->inputs[0];
  set_inputs(out, 2);
  snprintf(out->label, sizeof(out->label), "elementwise %s 1x6x3x3 %s 1x6x1x1 (broadcast)", name, symbol);
}

static void div_broadcast(check_workload_t *out) { binary_broadcast(out, HETC_PLUGIN_BINARY_DIV, "div", "/"); }

static void add(check_workload_t *out) {
  out->workload.op = HETC_PLUGIN_OP_ELEMENTWISE;
  out->workload.binary = HETC_PLUGIN_BINARY_ADD;
  out->inputs[0] = out->inputs[1] = tensor(4, 1, 3, 4, 5);
  out->workload.output = out->inputs[0];
  set_inputs(out, 2);
  snprintf(out->label, sizeof(out->label), "elementwise add 1x3x4x5 + 1x3x4x5");
}

static void mul_broadcast(check_workload_t *out) { binary_broadcast(out, HETC_PLUGIN_BINARY_MUL, "mul", "*"); }

static void softmax(check_workload_t *out) {
  out->workload.op = HETC_PLUGIN_OP_SOFTMAX;
  out->workload.axis = 1;
  out->inputs[0] = tensor(2, 2, 10, 0, 0);
  out->workload.output = out->inputs[0];
  set_inputs(out, 1);
  snprintf(out->label, sizeof(out->label), "softmax 2x10 axis 1");
}

/* Over channels of a 4-d value: the axis is not the last. */
static void log_softmax(check_workload_t *out) {
  out->workload.op = HETC_PLUGIN_OP_LOG_SOFTMAX;
  out->workload.axis = 1;
  out->inputs[0] = tensor(4, 1, 7, 2, 3);
  out->workload.output = out->inputs[0];
  set_inputs(out, 1);
  snprintf(out->label, sizeof(out->label), "log_softmax 1x7x2x3 axis 1");
}

static void concat(check_workload_t *out) {
  out->workload.op = HETC_PLUGIN_OP_CONCAT;
  out->workload.axis = 1;
  out->inputs[0] = tensor(4, 1, 3, 4, 4);
  out->inputs[1] = tensor(4, 1, 5, 4, 4);
  out->workload.output = tensor(4, 1, 8, 4, 4);
  set_inputs(out, 2);
  snprintf(out->label, sizeof(out->label), "concat 1x3x4x4 + 1x5x4x4 axis 1");
}

static void flatten(check_workload_t *out) {
  out->workload.op = HETC_PLUGIN_OP_LAYOUT_TRANSFORM;
  out->inputs[0] = tensor(4, 1, 4, 2, 3);
  out->workload.output = tensor(2, 1, 24, 0, 0);
  set_inputs(out, 1);
  snprintf(out->label, sizeof(out->label), "layout_transform 1x4x2x3 -> 1x24 (flatten)");
}

/* A change of layout: row-major to NCHW4c (6 channels: two padding
 * channels in the last block), and NCHW4c to NHWC. */
static void to_nchwc(check_workload_t *out) {
  out->workload.op = HETC_PLUGIN_OP_LAYOUT_TRANSFORM;
  out->inputs[0] = tensor(4, 1, 6, 3, 4);
  out->workload.output = out->inputs[0];
  out->workload.output.layout = (hetc_plugin_layout_t){HETC_PLUGIN_LAYOUT_NCHWC, 4};
  set_inputs(out, 1);
  snprintf(out->label, sizeof(out->label), "layout_transform 1x6x3x4 row-major -> NCHW4c");
}

static void nchwc_to_nhwc(check_workload_t *out) {
  to_nchwc(out);
  out->inputs[0].layout = out->workload.output.layout;
  out->workload.output.layout = (hetc_plugin_layout_t){HETC_PLUGIN_LAYOUT_NHWC, 0};
  snprintf(out->label, sizeof(out->label), "layout_transform 1x6x3x4 NCHW4c -> NHWC");
}

static void bias_add(check_workload_t *out) {
  out->workload.op = HETC_PLUGIN_OP_BIAS_ADD;
  out->inputs[0] = tensor(4, 1, 6, 3, 3);
  out->workload.output = out->inputs[0];
  set_inputs(out, 1);
  snprintf(out->label, sizeof(out->label), "bias_add 1x6x3x3");
}

/* NCHW to NHWC, and ShuffleNet's channel shuffle: [N, groups, C/groups,
 * H, W] with the two group dims swapped. */
static void transpose_nhwc(check_workload_t *out) {
  out->workload.op = HETC_PLUGIN_OP_TRANSPOSE;
  out->inputs[0] = tensor(4, 1, 5, 3, 4);
  out->workload.output = tensor(4, 1, 3, 4, 5);
  const int32_t perm[4] = {0, 2, 3, 1};
  for (int32_t d = 0; d < 4; ++d) out->workload.axis |= HETC_PLUGIN_PERM_PACK_ONE(perm[d], d);
  set_inputs(out, 1);
  snprintf(out->label, sizeof(out->label), "transpose 1x5x3x4 perm 0,2,3,1");
}

static void transpose_shuffle(check_workload_t *out) {
  out->workload.op = HETC_PLUGIN_OP_TRANSPOSE;
  out->inputs[0] = (hetc_plugin_tensor_t){HETC_PLUGIN_DTYPE_FLOAT32, 5, {1, 2, 3, 4, 5}, {HETC_PLUGIN_LAYOUT_ROW_MAJOR, 0}};
  out->workload.output = out->inputs[0];
  out->workload.output.shape[1] = 3;
  out->workload.output.shape[2] = 2;
  const int32_t perm[5] = {0, 2, 1, 3, 4};
  for (int32_t d = 0; d < 5; ++d) out->workload.axis |= HETC_PLUGIN_PERM_PACK_ONE(perm[d], d);
  set_inputs(out, 1);
  snprintf(out->label, sizeof(out->label), "transpose 1x2x3x4x5 perm 0,2,1,3,4 (channel shuffle)");
}

/* ABI 2.0's resize: DeepLab's bilinear upsampling by a factor that is
 * not whole (torch's align_corners=False), and a nearest downscale with
 * ties (7 to 3 columns at half_pixel) on 10 channels. */
static void resize_linear(check_workload_t *out) {
  out->workload.op = HETC_PLUGIN_OP_RESIZE;
  out->inputs[0] = tensor(4, 1, 6, 5, 7);
  out->workload.output = tensor(4, 1, 6, 13, 16);
  out->workload.params.resize = (hetc_plugin_resize_params_t){
      HETC_PLUGIN_RESIZE_LINEAR, HETC_PLUGIN_RESIZE_PYTORCH_HALF_PIXEL, 0, 0, {13.0 / 5.0, 16.0 / 7.0}};
  set_inputs(out, 1);
  snprintf(out->label, sizeof(out->label), "resize 1x6x5x7 -> 13x16 linear pytorch_half_pixel");
}

static void resize_nearest(check_workload_t *out) {
  out->workload.op = HETC_PLUGIN_OP_RESIZE;
  out->inputs[0] = tensor(4, 2, 10, 4, 7);
  out->workload.output = tensor(4, 2, 10, 8, 3);
  out->workload.params.resize = (hetc_plugin_resize_params_t){
      HETC_PLUGIN_RESIZE_NEAREST, HETC_PLUGIN_RESIZE_HALF_PIXEL, HETC_PLUGIN_RESIZE_ROUND_PREFER_CEIL, 0, {2.0, 3.0 / 7.0}};
  set_inputs(out, 1);
  snprintf(out->label, sizeof(out->label), "resize 2x10x4x7 -> 8x3 nearest half_pixel round_prefer_ceil");
}

/* ABI 2.0's normalize: InstanceNorm, GroupNorm over a batch of 2, a
 * LayerNorm over the last dim of a rank-3 value, and ConvNeXt's LayerNorm
 * over the channels of NCHW (inner H W), without affine. */
static void normalize_with(check_workload_t *out, hetc_plugin_tensor_t t, hetc_plugin_normalize_params_t p,
                           const char *what) {
  out->workload.op = HETC_PLUGIN_OP_NORMALIZE;
  out->inputs[0] = t;
  out->workload.output = t;
  out->workload.params.normalize = p;
  set_inputs(out, 1);
  snprintf(out->label, sizeof(out->label), "normalize %s", what);
}

static void instance_norm(check_workload_t *out) {
  normalize_with(out, tensor(4, 1, 6, 4, 5), (hetc_plugin_normalize_params_t){1, 3, 6, 1, 1e-5},
                 "1x6x4x5 instance (6 groups) affine");
}

static void group_norm(check_workload_t *out) {
  normalize_with(out, tensor(4, 2, 8, 3, 3), (hetc_plugin_normalize_params_t){1, 3, 4, 1, 1e-3},
                 "2x8x3x3 4 groups affine");
}

static void layer_norm_last(check_workload_t *out) {
  normalize_with(out, tensor(3, 2, 5, 12, 0), (hetc_plugin_normalize_params_t){2, 1, 1, 1, 1e-6},
                 "2x5x12 over the last dim affine");
}

static void layer_norm_channels(check_workload_t *out) {
  normalize_with(out, tensor(4, 1, 10, 3, 4), (hetc_plugin_normalize_params_t){1, 1, 1, 0, 1e-6},
                 "1x10x3x4 over the channels");
}

/* ABI 2.0's matmul: a plain 2-d product, and attention's scores (batch 1,
 * 3 heads, 17 tokens of 8 features, against 20 keys). */
static void matmul_with(check_workload_t *out, hetc_plugin_tensor_t a, hetc_plugin_tensor_t b, const char *what) {
  out->workload.op = HETC_PLUGIN_OP_MATMUL;
  out->inputs[0] = a;
  out->inputs[1] = b;
  out->workload.output = a;
  out->workload.output.shape[a.rank - 1] = b.shape[b.rank - 1];
  set_inputs(out, 2);
  snprintf(out->label, sizeof(out->label), "matmul %s", what);
}

static void matmul_2d(check_workload_t *out) {
  matmul_with(out, tensor(2, 5, 7, 0, 0), tensor(2, 7, 9, 0, 0), "5x7 x 7x9");
}

static void matmul_heads(check_workload_t *out) {
  matmul_with(out, tensor(4, 1, 3, 17, 8), tensor(4, 1, 3, 8, 20), "1x3x17x8 x 1x3x8x20");
}

static const struct {
  op_builder_t build;
  int quick;
} op_specs[] = {
    {dense, 1},   {dense_residual, 0}, {max_pool, 1}, {max_pool_ceil, 0}, {avg_pool, 1},
    {avg_pool_include_pad, 0}, {global_avg_pool, 1}, {relu, 1}, {add, 1}, {mul_broadcast, 0},
    {softmax, 1}, {concat, 1}, {flatten, 1}, {to_nchwc, 1}, {nchwc_to_nhwc, 0}, {bias_add, 1},
    {transpose_nhwc, 1}, {transpose_shuffle, 0}, {elu, 1}, {softplus, 0}, {div_broadcast, 1},
    {exp_unary, 1}, {log_unary, 0}, {log_softmax, 1}, {silu_unary, 1}, {hardswish_unary, 0},
    {hardsigmoid_unary, 1}, {dense_silu, 0}, {gelu_unary, 1}, {gelu_tanh_unary, 0}, {erf_unary, 1},
    {dense_gelu_tanh, 0}, {resize_linear, 1}, {resize_nearest, 0}, {instance_norm, 1}, {group_norm, 0},
    {layer_norm_last, 1}, {layer_norm_channels, 0}, {matmul_heads, 1}, {matmul_2d, 0},
};
#define NUM_OPS ((int32_t)(sizeof(op_specs) / sizeof(op_specs[0])))

static void conv(const conv_spec_t *s, check_workload_t *out) {
  hetc_plugin_workload_t *w = &out->workload;
  w->op = HETC_PLUGIN_OP_CONV2D;
  w->kernel[0] = s->kh;
  w->kernel[1] = s->kw;
  w->strides[0] = w->strides[1] = s->stride;
  w->dilation[0] = w->dilation[1] = s->dilation;
  memcpy(w->padding, s->pad, sizeof(w->padding));
  w->groups = s->groups;
  w->epilogue = (hetc_plugin_epilogue_t){s->bias, s->residual, s->activation, 0};
  int64_t oh = hetc_window_output_extent(s->h, s->kh, s->stride, s->pad[0], s->pad[2], s->dilation, 0);
  int64_t ow = hetc_window_output_extent(s->w, s->kw, s->stride, s->pad[1], s->pad[3], s->dilation, 0);
  out->inputs[0] = tensor(4, s->n, s->c, s->h, s->w);
  w->output = tensor(4, s->n, s->k, oh, ow);
  out->inputs[1] = w->output;
  set_inputs(out, 1 + s->residual);
  snprintf(out->label, sizeof(out->label), "conv2d %lldx%lldx%lldx%lld -> %lld k%dx%d s%d p%d,%d,%d,%d%s%s%s%s%s",
           (long long)s->n, (long long)s->c, (long long)s->h, (long long)s->w, (long long)s->k, s->kh, s->kw,
           s->stride, s->pad[0], s->pad[1], s->pad[2], s->pad[3], s->dilation > 1 ? " dilation 2" : "",
           s->groups == s->c && s->groups == s->k ? " depthwise" : s->groups > 1 ? " grouped" : "",
           s->bias ? " bias" : "", s->residual ? " residual" : "", epilogue_name(s->activation));
}

int32_t hetc_check_workload_count(int quick) {
  int32_t count = 0;
  for (int32_t i = 0; i < NUM_CONV; ++i) count += !quick || conv_specs[i].quick;
  for (int32_t i = 0; i < NUM_OPS; ++i) count += !quick || op_specs[i].quick;
  return count;
}

void hetc_check_workload_at(int32_t i, int quick, check_workload_t *out) {
  memset(out, 0, sizeof(*out));
  for (int32_t c = 0; c < NUM_CONV; ++c) {
    if (quick && !conv_specs[c].quick) continue;
    if (i-- == 0) {
      conv(&conv_specs[c], out);
      return;
    }
  }
  for (int32_t o = 0; o < NUM_OPS; ++o) {
    if (quick && !op_specs[o].quick) continue;
    if (i-- == 0) {
      op_specs[o].build(out);
      return;
    }
  }
}
