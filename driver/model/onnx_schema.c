/* The forms of the ONNX ops hetc reads, by opset (onnx_schema.h). The
 * versions and forms are ONNX's operator changelog's; only the versions
 * that changed an input, output or attribute are listed. */
#include "model/onnx_schema.h"

#include <limits.h>
#include <stdio.h>
#include <string.h>

#define BAD(...) hetc_status_new(HETC_STATUS_BAD_INPUT, __VA_ARGS__)
#define MANY INT_MAX

typedef struct op_form_t {
  const char *op_type;
  int since;                 /* the opset this form came with */
  int min_inputs, max_inputs; /* counted to the last input named */
  int max_outputs;
  const char *attributes; /* space-separated */
} op_form_t;

static const op_form_t forms[] = {
    {"Conv", 1, 2, 3, 1, "auto_pad dilations group kernel_shape pads strides"},
    {"ConvTranspose", 1, 2, 3, 1, "auto_pad dilations group kernel_shape output_padding output_shape pads strides"},
    {"MaxPool", 1, 1, 1, 1, "auto_pad kernel_shape pads strides"},
    {"MaxPool", 8, 1, 1, 2, "auto_pad kernel_shape pads storage_order strides"},
    {"MaxPool", 10, 1, 1, 2, "auto_pad ceil_mode dilations kernel_shape pads storage_order strides"},
    {"AveragePool", 1, 1, 1, 1, "auto_pad kernel_shape pads strides"},
    {"AveragePool", 7, 1, 1, 1, "auto_pad count_include_pad kernel_shape pads strides"},
    {"AveragePool", 10, 1, 1, 1, "auto_pad ceil_mode count_include_pad kernel_shape pads strides"},
    {"AveragePool", 19, 1, 1, 1, "auto_pad ceil_mode count_include_pad dilations kernel_shape pads strides"},
    {"GlobalAveragePool", 1, 1, 1, 1, ""},
    {"GlobalMaxPool", 1, 1, 1, 1, ""},
    {"ReduceMean", 1, 1, 1, 1, "axes keepdims"},
    {"ReduceMean", 18, 1, 2, 1, "keepdims noop_with_empty_axes"},
    {"ReduceSum", 1, 1, 1, 1, "axes keepdims"},
    {"ReduceSum", 13, 1, 2, 1, "keepdims noop_with_empty_axes"},
    {"ReduceMax", 1, 1, 1, 1, "axes keepdims"},
    {"ReduceMax", 18, 1, 2, 1, "keepdims noop_with_empty_axes"},
    {"ReduceMin", 1, 1, 1, 1, "axes keepdims"},
    {"ReduceMin", 18, 1, 2, 1, "keepdims noop_with_empty_axes"},
    {"ReduceL2", 1, 1, 1, 1, "axes keepdims"},
    {"ReduceL2", 18, 1, 2, 1, "keepdims noop_with_empty_axes"},
    {"ReduceProd", 1, 1, 1, 1, "axes keepdims"},
    {"ReduceProd", 18, 1, 2, 1, "keepdims noop_with_empty_axes"},
    {"ReduceL1", 1, 1, 1, 1, "axes keepdims"},
    {"ReduceL1", 18, 1, 2, 1, "keepdims noop_with_empty_axes"},
    {"ReduceSumSquare", 1, 1, 1, 1, "axes keepdims"},
    {"ReduceSumSquare", 18, 1, 2, 1, "keepdims noop_with_empty_axes"},
    {"ReduceLogSum", 1, 1, 1, 1, "axes keepdims"},
    {"ReduceLogSum", 18, 1, 2, 1, "keepdims noop_with_empty_axes"},
    {"ReduceLogSumExp", 1, 1, 1, 1, "axes keepdims"},
    {"ReduceLogSumExp", 18, 1, 2, 1, "keepdims noop_with_empty_axes"},
    {"Gemm", 1, 3, 3, 1, "alpha beta broadcast transA transB"},
    {"Gemm", 7, 3, 3, 1, "alpha beta transA transB"},
    {"Gemm", 11, 2, 3, 1, "alpha beta transA transB"},
    {"MatMul", 1, 2, 2, 1, ""},
    {"BatchNormalization", 6, 5, 5, 5, "epsilon is_test momentum spatial"},
    {"BatchNormalization", 7, 5, 5, 5, "epsilon momentum spatial"},
    {"BatchNormalization", 9, 5, 5, 5, "epsilon momentum"},
    {"BatchNormalization", 14, 5, 5, 3, "epsilon momentum training_mode"},
    {"InstanceNormalization", 1, 3, 3, 1, "consumed_inputs epsilon"},
    {"InstanceNormalization", 6, 3, 3, 1, "epsilon"},
    {"LayerNormalization", 17, 2, 3, 3, "axis epsilon stash_type"},
    {"GroupNormalization", 18, 3, 3, 1, "epsilon num_groups"},
    {"GroupNormalization", 21, 3, 3, 1, "epsilon num_groups stash_type"},
    {"Relu", 6, 1, 1, 1, ""},
    {"Sigmoid", 6, 1, 1, 1, ""},
    {"Tanh", 6, 1, 1, 1, ""},
    {"Exp", 6, 1, 1, 1, ""},
    {"Log", 6, 1, 1, 1, ""},
    {"Softplus", 1, 1, 1, 1, ""},
    {"Elu", 6, 1, 1, 1, "alpha"},
    {"LeakyRelu", 6, 1, 1, 1, "alpha"},
    {"PRelu", 7, 2, 2, 1, ""},
    {"HardSigmoid", 6, 1, 1, 1, "alpha beta"},
    {"HardSwish", 14, 1, 1, 1, ""},
    {"Clip", 6, 1, 1, 1, "max min"},
    {"Clip", 11, 1, 3, 1, ""},
    {"Add", 6, 2, 2, 1, "axis broadcast"},
    {"Add", 7, 2, 2, 1, ""},
    {"Sub", 6, 2, 2, 1, "axis broadcast"},
    {"Sub", 7, 2, 2, 1, ""},
    {"Mul", 6, 2, 2, 1, "axis broadcast"},
    {"Mul", 7, 2, 2, 1, ""},
    {"Div", 6, 2, 2, 1, "axis broadcast"},
    {"Div", 7, 2, 2, 1, ""},
    {"Sum", 6, 1, MANY, 1, ""},
    {"Max", 6, 1, MANY, 1, ""},
    {"Min", 6, 1, MANY, 1, ""},
    {"Pow", 7, 2, 2, 1, ""},
    {"Mod", 10, 2, 2, 1, "fmod"},
    {"Concat", 4, 1, MANY, 1, "axis"},
    {"Flatten", 1, 1, 1, 1, "axis"},
    {"Reshape", 5, 2, 2, 1, ""},
    {"Reshape", 14, 2, 2, 1, "allowzero"},
    {"Softmax", 1, 1, 1, 1, "axis"},
    {"LogSoftmax", 1, 1, 1, 1, "axis"},
    {"LRN", 1, 1, 1, 1, "alpha beta bias size"},
    {"Transpose", 1, 1, 1, 1, "perm"},
    {"DepthToSpace", 1, 1, 1, 1, "blocksize"},
    {"DepthToSpace", 11, 1, 1, 1, "blocksize mode"},
    {"SpaceToDepth", 1, 1, 1, 1, "blocksize"},
    {"SpaceToDepth", 28, 1, 1, 1, "blocksize mode"},
    {"Pad", 2, 1, 1, 1, "mode pads value"},
    {"Pad", 11, 2, 3, 1, "mode"},
    {"Pad", 18, 2, 4, 1, "mode"},
    {"Upsample", 7, 1, 1, 1, "mode scales"},
    {"Upsample", 9, 2, 2, 1, "mode"},
    {"Resize", 10, 2, 2, 1, "mode"},
    {"Resize", 11, 1, 4, 1,
     "coordinate_transformation_mode cubic_coeff_a exclude_outside extrapolation_value mode nearest_mode"},
    {"Resize", 18, 1, 4, 1,
     "antialias axes coordinate_transformation_mode cubic_coeff_a exclude_outside extrapolation_value "
     "keep_aspect_ratio_policy mode nearest_mode"},
    {"Dropout", 6, 1, 1, 2, "is_test ratio"},
    {"Dropout", 7, 1, 1, 2, "ratio"},
    {"Dropout", 12, 1, 3, 2, "seed"},
    {"Identity", 1, 1, 1, 1, ""},
    /* Evaluated at import (onnx_fold.c). */
    {"Constant", 1, 0, 0, 1, "value"},
    {"Constant", 11, 0, 0, 1, "sparse_value value"},
    {"Constant", 12, 0, 0, 1,
     "sparse_value value value_float value_floats value_int value_ints value_string value_strings"},
    {"Shape", 1, 1, 1, 1, ""},
    {"Shape", 15, 1, 1, 1, "end start"},
    {"Size", 1, 1, 1, 1, ""},
    {"Gather", 1, 2, 2, 1, "axis"},
    {"Equal", 1, 2, 2, 1, ""},
    {"Less", 1, 2, 2, 1, ""},
    {"Greater", 1, 2, 2, 1, ""},
    {"LessOrEqual", 12, 2, 2, 1, ""},
    {"GreaterOrEqual", 12, 2, 2, 1, ""},
    {"And", 1, 2, 2, 1, ""},
    {"Or", 1, 2, 2, 1, ""},
    {"Xor", 1, 2, 2, 1, ""},
    {"Not", 1, 1, 1, 1, ""},
    {"Where", 9, 3, 3, 1, ""},
    {"Range", 11, 3, 3, 1, ""},
    {"GatherND", 11, 2, 2, 1, ""},
    {"GatherND", 12, 2, 2, 1, "batch_dims"},
    {"ScatterND", 11, 3, 3, 1, ""},
    {"ScatterND", 16, 3, 3, 1, "reduction"},
    {"Expand", 8, 2, 2, 1, ""},
    {"Tile", 6, 2, 2, 1, ""},
    {"Unsqueeze", 1, 1, 1, 1, "axes"},
    {"Unsqueeze", 13, 2, 2, 1, ""},
    {"Squeeze", 1, 1, 1, 1, "axes"},
    {"Squeeze", 13, 1, 2, 1, ""},
    {"Cast", 6, 1, 1, 1, "to"},
    {"Cast", 19, 1, 1, 1, "saturate to"},
    {"Cast", 28, 1, 1, 1, "round_mode saturate to"},
    {"CastLike", 15, 2, 2, 1, ""},
    {"CastLike", 19, 2, 2, 1, "saturate"},
    {"CastLike", 28, 2, 2, 1, "round_mode saturate"},
    {"ConstantOfShape", 9, 1, 1, 1, "value"},
    {"Slice", 1, 1, 1, 1, "axes ends starts"},
    {"Slice", 10, 3, 5, 1, ""},
    {"Split", 2, 1, 1, MANY, "axis split"},
    {"Split", 13, 1, 2, MANY, "axis"},
    {"Split", 18, 1, 2, MANY, "axis num_outputs"},
    {"Neg", 6, 1, 1, 1, ""},
    {"Sqrt", 6, 1, 1, 1, ""},
    {"Floor", 6, 1, 1, 1, ""},
    {"Ceil", 6, 1, 1, 1, ""},
    {"Abs", 6, 1, 1, 1, ""},
    {"Reciprocal", 6, 1, 1, 1, ""},
    {"Einsum", 12, 1, MANY, 1, "equation"},
    {"Attention", 23, 3, 6, 4, "is_causal kv_num_heads q_num_heads qk_matmul_output_mode scale softcap softmax_precision"},
    {"Attention", 24, 3, 7, 4, "is_causal kv_num_heads q_num_heads qk_matmul_output_mode scale softcap softmax_precision"},
    {"Attention", 25, 3, 7, 4,
     "is_causal kv_num_heads left_window_size q_num_heads qk_matmul_output_mode right_window_size scale softcap "
     "softmax_precision"},
    {"Erf", 9, 1, 1, 1, ""},
    {"Softsign", 1, 1, 1, 1, ""},
    {"Mish", 18, 1, 1, 1, ""},
    {"Gelu", 20, 1, 1, 1, "approximate"},
};

/* Whether `name` is one of the space-separated words of `list`. */
static int listed(const char *list, const char *name) {
  const size_t length = strlen(name);
  for (const char *p = list; length && (p = strstr(p, name)); p += length)
    if ((p == list || p[-1] == ' ') && (p[length] == ' ' || !p[length])) return 1;
  return 0;
}

static const char *plural(int count, const char *word, char *buffer, size_t size) {
  snprintf(buffer, size, "%d %s%s", count, word, count == 1 ? "" : "s");
  return buffer;
}

hetc_status_t hetc_onnx_check_schema(const Onnx__NodeProto *node, int64_t opset) {
  const op_form_t *form = NULL;
  for (size_t k = 0; k < sizeof(forms) / sizeof(forms[0]); ++k)
    if (!strcmp(forms[k].op_type, node->op_type) && forms[k].since <= opset) form = &forms[k];
  if (!form) return NULL;
  int inputs = 0, outputs = 0;
  for (size_t k = 0; k < node->n_input; ++k)
    if (node->input[k] && node->input[k][0]) inputs = (int)k + 1;
  for (size_t k = 0; k < node->n_output; ++k)
    if (node->output[k] && node->output[k][0]) outputs = (int)k + 1;
  char takes[64], has[64];
  if (inputs < form->min_inputs || inputs > form->max_inputs) {
    if (form->min_inputs == form->max_inputs) plural(form->min_inputs, "input", takes, sizeof(takes));
    else if (form->max_inputs == MANY) snprintf(takes, sizeof(takes), "%d or more inputs", form->min_inputs);
    else snprintf(takes, sizeof(takes), "%d to %d inputs", form->min_inputs, form->max_inputs);
    return BAD("%s-%d (the form of opset %lld) takes %s; the node has %s", form->op_type, form->since,
               (long long)opset, takes, plural(inputs, "input", has, sizeof(has)));
  }
  if (outputs > form->max_outputs)
    return BAD("%s-%d (the form of opset %lld) has %s; the node names %s", form->op_type, form->since,
               (long long)opset, plural(form->max_outputs, "output", takes, sizeof(takes)),
               plural(outputs, "output", has, sizeof(has)));
  for (size_t k = 0; k < node->n_attribute; ++k) {
    const char *name = node->attribute[k]->name ? node->attribute[k]->name : "";
    if (!listed(form->attributes, name))
      return BAD("attribute '%s' is not one of %s-%d (the form of opset %lld), whose attributes are: %s", name,
                 form->op_type, form->since, (long long)opset, form->attributes[0] ? form->attributes : "none");
  }
  return NULL;
}
