/* ONNX ops onto hetc's graph ops (onnx_importer.h; the mapping is
 * documented in api/model-format.md, "ONNX import"). */
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "graph/infer.h"
#include "model/model.h"
#include "model/onnx_attr.h"
#include "model/onnx_fold.h"
#include "model/onnx_importer.h"

#define BAD(...) hetc_status_new(HETC_STATUS_BAD_INPUT, __VA_ARGS__)

/* ---- inputs and outputs of the current node ------------------------------- */

static const char *input_name(const hetc_onnx_importer_t *im, int32_t k) {
  const Onnx__NodeProto *n = im->node;
  return (size_t)k < n->n_input && n->input[k] && n->input[k][0] ? n->input[k] : NULL;
}

static hetc_status_t activation_input(hetc_onnx_importer_t *im, int32_t k, int32_t *out_value) {
  const char *name = input_name(im, k);
  if (!name) return BAD("input %d is missing", (int)k);
  const onnx_value_t *v = hetc_onnx_lookup(im, name);
  if (v->kind != ONNX_VALUE_ACTIVATION)
    return BAD("input %d ('%s') is a constant; hetc imports %s on a value computed from the model's input only",
               (int)k, name, im->node->op_type);
  *out_value = v->value;
  return NULL;
}

/* A constant input; *out is NULL when the input is optional and omitted. */
static hetc_status_t const_input(hetc_onnx_importer_t *im, int32_t k, int required, const hetc_onnx_const_t **out) {
  const char *name = input_name(im, k);
  *out = NULL;
  if (!name) return required ? BAD("input %d is missing", (int)k) : NULL;
  const onnx_value_t *v = hetc_onnx_lookup(im, name);
  if (v->kind != ONNX_VALUE_CONST)
    return BAD("input %d ('%s') must be a constant (an initializer, or computed from constants only)", (int)k, name);
  *out = &v->constant;
  return NULL;
}

/* Valid until the next node is appended (the values array grows). */
static const hetc_plugin_tensor_t *type_of(const hetc_onnx_importer_t *im, int32_t value) {
  return &im->graph->values[value].type;
}

/* Output 0 of the node is hetc value `value`. */
static hetc_status_t define_output_at(hetc_onnx_importer_t *im, size_t k, int32_t value) {
  onnx_value_t *v = NULL;
  HETC_RETURN_IF_ERROR(hetc_onnx_define(im, im->node->output[k], &v));
  v->kind = ONNX_VALUE_ACTIVATION;
  v->value = value;
  return NULL;
}

static hetc_status_t define_output(hetc_onnx_importer_t *im, int32_t value) { return define_output_at(im, 0, value); }

/* Outputs past the first (training statistics, indices, masks) must not be
 * read: inference graphs do not use them. Listed but unread (old exports
 * list Dropout's mask), they are dropped. */
static hetc_status_t only_first_output(const hetc_onnx_importer_t *im, const char *what) {
  for (size_t k = 1; k < im->node->n_output; ++k)
    if (hetc_onnx_is_read(im, im->node->output[k]))
      return BAD("output %zu ('%s', %s) is read, which hetc does not support; hetc imports inference graphs", k, im->node->output[k], what);
  return NULL;
}

/* Appends a node whose name comes from the node's first output. */
static hetc_status_t append(hetc_onnx_importer_t *im, hetc_op_t op, const int32_t *inputs, int32_t num_inputs,
                            const hetc_node_attrs_t *attrs, int32_t *out_node) {
  return hetc_onnx_append_node(im, op, im->node->output[0], inputs, num_inputs, attrs, out_node);
}

/* Gives node `node`'s param `slot` the values (taken), checked against the
 * shape hetc expects. */
static hetc_status_t set_param(hetc_onnx_importer_t *im, int32_t node, int slot, float *data, int64_t count) {
  hetc_node_t *n = &im->graph->nodes[node];
  hetc_param_t shape;
  if (!hetc_weights_param_shape(im->graph, n, slot, &shape) || shape.count != count) {
    free(data);
    return BAD("a %s %s of %lld values does not fit (hetc's %s needs %lld)", hetc_op_name(n->op),
               hetc_weights_param_suffix(n->op, slot), (long long)count, hetc_op_name(n->op), (long long)shape.count);
  }
  shape.data = data;
  n->params[slot] = shape;
  return NULL;
}

/* A conv2d node over x with `weight` and optional `bias` (both taken, also
 * on failure; each count is what its array holds), named after `hint`. */
static hetc_status_t append_conv(hetc_onnx_importer_t *im, int32_t x, const char *hint, const hetc_node_attrs_t *attrs,
                                 float *weight, int64_t weight_count, float *bias, int64_t bias_count,
                                 int32_t *out_value) {
  int32_t node;
  hetc_status_t status = hetc_onnx_append_node(im, HETC_OP_CONV2D, hint, &x, 1, attrs, &node);
  if (!status) status = set_param(im, node, HETC_PARAM_WEIGHT, weight, weight_count), weight = NULL;
  if (!status && bias) status = set_param(im, node, HETC_PARAM_BIAS, bias, bias_count), bias = NULL;
  free(weight);
  free(bias);
  if (!status) *out_value = im->graph->nodes[node].output;
  return status;
}

static float *float_values(const hetc_onnx_const_t *c, double scale) {
  float *data = malloc(sizeof(float) * ((size_t)c->count + 1));
  for (int64_t k = 0; data && k < c->count; ++k) data[k] = (float)(hetc_onnx_const_get(c, k) * scale);
  return data;
}

static hetc_status_t out_of_memory(void) { return hetc_status_new(HETC_STATUS_OUT_OF_MEMORY, "ONNX import"); }

static hetc_status_t append_reshape(hetc_onnx_importer_t *im, int32_t x, const char *name_hint, int32_t rank,
                                    const int64_t *dims, int32_t *out_value);
static const char *step_name(const hetc_onnx_importer_t *im, const char *step, char *buffer, size_t size);

static hetc_status_t need_rank(const hetc_onnx_importer_t *im, int32_t value, int32_t rank, const char *what) {
  const int32_t got = type_of(im, value)->rank;
  if (got != rank)
    return BAD("%s of a rank-%d input is not supported yet (hetc imports it on %s)", im->node->op_type, (int)got, what);
  return NULL;
}

/* ---- windows: Conv and pools ---------------------------------------------- */

/* kernel_shape, strides, dilations, pads and auto_pad of a 2-d window over
 * `input` (NCHW). */
static hetc_status_t window_attrs(hetc_onnx_importer_t *im, const hetc_plugin_tensor_t *input,
                                  const int64_t *weight_kernel, hetc_node_attrs_t *a) {
  const Onnx__NodeProto *n = im->node;
  int64_t values[4];
  int32_t count = 0;
  HETC_RETURN_IF_ERROR(hetc_onnx_attr_ints(n, "kernel_shape", 2, values, &count));
  if (count >= 0 && count != 2) return BAD("attribute 'kernel_shape': expected 2 values, got %d", (int)count);
  if (count < 0 && !weight_kernel) return BAD("attribute 'kernel_shape' is missing");
  for (int d = 0; d < 2; ++d) {
    const int64_t k = count == 2 ? values[d] : weight_kernel[d];
    if (weight_kernel && k != weight_kernel[d])
      return BAD("attribute 'kernel_shape' (%lld) differs from the weight's (%lld)", (long long)k, (long long)weight_kernel[d]);
    if (k < 1 || k > 4096) return BAD("attribute 'kernel_shape': %lld is not a kernel extent", (long long)k);
    a->kernel[d] = (int32_t)k;
  }
  const char *names[2] = {"strides", "dilations"};
  int32_t *targets[2] = {a->strides, a->dilation};
  for (int w = 0; w < 2; ++w) {
    HETC_RETURN_IF_ERROR(hetc_onnx_attr_ints(n, names[w], 2, values, &count));
    if (count >= 0 && count != 2) return BAD("attribute '%s': expected 2 values, got %d", names[w], (int)count);
    for (int d = 0; d < 2 && count == 2; ++d) {
      if (values[d] < 1 || values[d] > 4096) return BAD("attribute '%s': %lld is not positive", names[w], (long long)values[d]);
      targets[w][d] = (int32_t)values[d];
    }
  }
  HETC_RETURN_IF_ERROR(hetc_onnx_attr_ints(n, "pads", 4, values, &count));
  if (count >= 0 && count != 4) return BAD("attribute 'pads': expected 4 values, got %d", (int)count);
  for (int d = 0; d < 4 && count == 4; ++d) {
    if (values[d] < 0 || values[d] > 4096) return BAD("attribute 'pads': %lld is not a padding", (long long)values[d]);
    a->padding[d] = (int32_t)values[d]; /* ONNX's order is hetc's: top, left, bottom, right */
  }
  char auto_pad[32];
  HETC_RETURN_IF_ERROR(hetc_onnx_attr_string(n, "auto_pad", "NOTSET", auto_pad, sizeof(auto_pad)));
  if (!strcmp(auto_pad, "VALID")) {
    memset(a->padding, 0, sizeof(a->padding));
  } else if (!strcmp(auto_pad, "SAME_UPPER") || !strcmp(auto_pad, "SAME_LOWER")) {
    for (int d = 0; d < 2; ++d) {
      const int64_t extent = input->shape[2 + d], stride = a->strides[d];
      const int64_t out = (extent + stride - 1) / stride;
      const int64_t span = (int64_t)(a->kernel[d] - 1) * a->dilation[d] + 1;
      int64_t total = (out - 1) * stride + span - extent;
      if (total < 0) total = 0;
      const int64_t small = total / 2, large = total - small;
      const int upper = auto_pad[5] == 'U';
      a->padding[d] = (int32_t)(upper ? small : large);
      a->padding[d + 2] = (int32_t)(upper ? large : small);
    }
  } else if (strcmp(auto_pad, "NOTSET") != 0) {
    return BAD("attribute 'auto_pad': '%s' is not NOTSET, SAME_UPPER, SAME_LOWER or VALID", auto_pad);
  }
  return NULL;
}

static hetc_status_t translate_conv(hetc_onnx_importer_t *im) {
  int32_t x;
  const hetc_onnx_const_t *w, *b;
  HETC_RETURN_IF_ERROR(activation_input(im, 0, &x));
  HETC_RETURN_IF_ERROR(need_rank(im, x, 4, "4-d inputs (2-d convolutions)"));
  HETC_RETURN_IF_ERROR(const_input(im, 1, 1, &w));
  HETC_RETURN_IF_ERROR(const_input(im, 2, 0, &b));
  if (w->rank != 4) return BAD("input 1 (the weight) has rank %d, not 4", (int)w->rank);
  if (w->count < 1) {
    char dims[160];
    hetc_onnx_const_dims_text(w, dims, sizeof(dims));
    return BAD("input 1 (the weight) of shape [%s] holds no values", dims);
  }
  if (b && b->count != w->dims[0])
    return BAD("input 2 (the bias) holds %lld values for %lld output channels", (long long)b->count,
               (long long)w->dims[0]);
  hetc_node_attrs_t a = hetc_node_default_attrs(HETC_OP_CONV2D);
  int64_t group = 1;
  HETC_RETURN_IF_ERROR(hetc_onnx_attr_int(im->node, "group", 1, &group));
  if (group < 1 || group > w->dims[0] || w->dims[0] % group)
    return BAD("attribute 'group': %lld does not divide the weight's %lld output channels", (long long)group,
               (long long)w->dims[0]);
  a.groups = (int32_t)group;
  a.channels = w->dims[0];
  a.has_bias = b != NULL;
  HETC_RETURN_IF_ERROR(window_attrs(im, type_of(im, x), &w->dims[2], &a));
  float *weight = float_values(w, 1.0), *bias = b ? float_values(b, 1.0) : NULL;
  if (!weight || (b && !bias)) {
    free(weight), free(bias);
    return out_of_memory();
  }
  int32_t value;
  HETC_RETURN_IF_ERROR(append_conv(im, x, im->node->output[0], &a, weight, w->count, bias, b ? b->count : 0, &value));
  return define_output(im, value);
}

static hetc_status_t translate_pool(hetc_onnx_importer_t *im) {
  const int is_max = !strcmp(im->node->op_type, "MaxPool");
  int32_t x;
  HETC_RETURN_IF_ERROR(activation_input(im, 0, &x));
  HETC_RETURN_IF_ERROR(need_rank(im, x, 4, "4-d inputs"));
  HETC_RETURN_IF_ERROR(only_first_output(im, "indices"));
  hetc_node_attrs_t a = hetc_node_default_attrs(is_max ? HETC_OP_MAX_POOL2D : HETC_OP_AVG_POOL2D);
  HETC_RETURN_IF_ERROR(window_attrs(im, type_of(im, x), NULL, &a));
  if (a.dilation[0] != 1 || a.dilation[1] != 1) return BAD("attribute 'dilations': hetc pools without dilation");
  int64_t ceil_mode = 0, include_pad = 0, storage_order = 0;
  HETC_RETURN_IF_ERROR(hetc_onnx_attr_int(im->node, "ceil_mode", 0, &ceil_mode));
  HETC_RETURN_IF_ERROR(hetc_onnx_attr_int(im->node, "count_include_pad", 0, &include_pad));
  HETC_RETURN_IF_ERROR(hetc_onnx_attr_int(im->node, "storage_order", 0, &storage_order));
  if (storage_order) return BAD("attribute 'storage_order': only 0 (row major) is supported");
  a.ceil_mode = ceil_mode != 0;
  a.count_include_pad = include_pad != 0;
  int32_t node;
  HETC_RETURN_IF_ERROR(append(im, is_max ? HETC_OP_MAX_POOL2D : HETC_OP_AVG_POOL2D, &x, 1, &a, &node));
  return define_output(im, im->graph->nodes[node].output);
}

/* ---- dense: Gemm and MatMul ----------------------------------------------- */

/* A dense node over 2-d x with weight [units, K] (taken) and optional bias
 * (taken). */
static hetc_status_t append_dense(hetc_onnx_importer_t *im, int32_t x, const char *hint, float *weight, int64_t units,
                                  float *bias, int32_t *out_value) {
  hetc_node_attrs_t a = hetc_node_default_attrs(HETC_OP_DENSE);
  a.channels = units;
  a.has_bias = bias != NULL;
  const int64_t k = type_of(im, x)->shape[1];
  int32_t node;
  hetc_status_t status = hetc_onnx_append_node(im, HETC_OP_DENSE, hint, &x, 1, &a, &node);
  if (!status) status = set_param(im, node, HETC_PARAM_WEIGHT, weight, units * k), weight = NULL;
  if (!status && bias) status = set_param(im, node, HETC_PARAM_BIAS, bias, units), bias = NULL;
  free(weight);
  free(bias);
  if (!status) *out_value = im->graph->nodes[node].output;
  return status;
}

/* B ([K, units] unless transposed) as hetc's [units, K] weight, scaled. */
static float *dense_weight(const hetc_onnx_const_t *b, int transposed, double scale) {
  if (transposed) return float_values(b, scale);
  const int64_t k_extent = b->dims[0], units = b->dims[1];
  float *weight = malloc(sizeof(float) * ((size_t)b->count + 1));
  for (int64_t u = 0; weight && u < units; ++u)
    for (int64_t k = 0; k < k_extent; ++k) weight[u * k_extent + k] = (float)(hetc_onnx_const_get(b, k * units + u) * scale);
  return weight;
}

static hetc_status_t translate_gemm(hetc_onnx_importer_t *im) {
  const int is_gemm = !strcmp(im->node->op_type, "Gemm");
  int32_t x;
  const hetc_onnx_const_t *b, *c = NULL;
  HETC_RETURN_IF_ERROR(activation_input(im, 0, &x));
  /* MatMul multiplies the last dim of a value of any rank: as rows of a
   * 2-d value, reshaped there and back. */
  const hetc_plugin_tensor_t t = *type_of(im, x);
  if (is_gemm || t.rank < 2) HETC_RETURN_IF_ERROR(need_rank(im, x, 2, "2-d inputs ([batch, features])"));
  char names[2][320];
  if (t.rank > 2) {
    const int64_t rows[2] = {hetc_tensor_element_count(&t) / t.shape[t.rank - 1], t.shape[t.rank - 1]};
    HETC_RETURN_IF_ERROR(append_reshape(im, x, step_name(im, "rows", names[0], 320), 2, rows, &x));
  }
  HETC_RETURN_IF_ERROR(const_input(im, 1, 1, &b));
  if (is_gemm) HETC_RETURN_IF_ERROR(const_input(im, 2, 0, &c));
  int64_t trans_a = 0, trans_b = 0;
  float alpha = 1, beta = 1;
  if (is_gemm) {
    HETC_RETURN_IF_ERROR(hetc_onnx_attr_int(im->node, "transA", 0, &trans_a));
    HETC_RETURN_IF_ERROR(hetc_onnx_attr_int(im->node, "transB", 0, &trans_b));
    HETC_RETURN_IF_ERROR(hetc_onnx_attr_float(im->node, "alpha", 1, &alpha));
    HETC_RETURN_IF_ERROR(hetc_onnx_attr_float(im->node, "beta", 1, &beta));
  }
  if (trans_a) return BAD("attribute 'transA' = 1 is not supported (the activation must be [batch, features])");
  if (b->rank != 2) return BAD("input 1 (the weight) has rank %d, not 2", (int)b->rank);
  const int64_t k = type_of(im, x)->shape[1], units = b->dims[trans_b ? 0 : 1];
  if (b->dims[trans_b ? 1 : 0] != k)
    return BAD("the weight's [%lld, %lld] does not multiply an input of %lld features", (long long)b->dims[0],
               (long long)b->dims[1], (long long)k);
  float *bias = NULL;
  if (c && beta != 0) {
    const int per_unit = c->count == units && (c->rank == 1 || (c->rank == 2 && c->dims[0] == 1));
    if (!per_unit && c->count != 1)
      return BAD("input 2 (C) must hold 1 or %lld values (one per output feature)", (long long)units);
    if (!(bias = malloc(sizeof(float) * (size_t)units))) return out_of_memory();
    for (int64_t u = 0; u < units; ++u) bias[u] = (float)(beta * hetc_onnx_const_get(c, per_unit ? u : 0));
  }
  float *weight = dense_weight(b, trans_b != 0, alpha);
  if (!weight) {
    free(bias);
    return out_of_memory();
  }
  int32_t value;
  HETC_RETURN_IF_ERROR(append_dense(im, x, t.rank > 2 ? step_name(im, "dense", names[1], 320) : im->node->output[0],
                                    weight, units, bias, &value));
  if (t.rank > 2) {
    int64_t dims[HETC_PLUGIN_MAX_RANK];
    memcpy(dims, t.shape, sizeof(dims));
    dims[t.rank - 1] = units;
    HETC_RETURN_IF_ERROR(append_reshape(im, value, im->node->output[0], t.rank, dims, &value));
  }
  return define_output(im, value);
}

/* ---- normalisation and elementwise ops ------------------------------------ */

/* Whether constant c applies one value per channel of activation type t
 * (axis 1), or one value to all: [C], [C,1,1], [1,C,1,1] on a 4-d value,
 * [C] or [1,C] on a 2-d one, or a single value. */
static int per_channel(const hetc_onnx_const_t *c, const hetc_plugin_tensor_t *t) {
  if (c->count == 1) return 1;
  if (t->rank < 2 || c->count != t->shape[1] || c->rank > t->rank) return 0;
  /* Aligned from the right, the channel dim must land on axis 1. */
  for (int32_t d = 0; d < c->rank; ++d) {
    const int32_t axis = t->rank - c->rank + d;
    if (c->dims[d] != (axis == 1 ? t->shape[1] : 1)) return 0;
  }
  return 1;
}

/* hetc's batch_norm works on 4-d values. A value of another rank is
 * reshaped to [N, C, rest, 1] (rank 1: [1, 1, L, 1]), which keeps axis 1
 * the channels; `*hint` becomes the 4-d step's name (in `buffer`), and
 * finish_4d reshapes its output back under the original hint. */
static hetc_status_t as_4d(hetc_onnx_importer_t *im, int32_t *x, const char **hint, char *buffer, size_t size) {
  const hetc_plugin_tensor_t t = *type_of(im, *x);
  if (t.rank == 4) return NULL;
  int64_t dims[4] = {1, 1, 1, 1};
  const int32_t first_rest = t.rank == 1 ? 0 : 2;
  if (t.rank > 1) dims[0] = t.shape[0], dims[1] = t.shape[1];
  for (int32_t d = first_rest; d < t.rank; ++d) dims[2] *= t.shape[d];
  snprintf(buffer, size, "%s.as_4d", *hint);
  HETC_RETURN_IF_ERROR(append_reshape(im, *x, buffer, 4, dims, x));
  snprintf(buffer, size, "%s.4d", *hint);
  *hint = buffer;
  return NULL;
}

/* The batch_norm's output `y` back to x's shape (`t`), named `hint`. */
static hetc_status_t finish_4d(hetc_onnx_importer_t *im, int32_t y, const hetc_plugin_tensor_t *t, const char *hint,
                               int32_t *out_value) {
  if (t->rank == 4) {
    *out_value = y;
    return NULL;
  }
  return append_reshape(im, y, hint, t->rank, t->shape, out_value);
}

/* A batch_norm node over x (any rank: as_4d) with per-channel gamma, beta,
 * mean, var (taken). */
static hetc_status_t append_batch_norm(hetc_onnx_importer_t *im, int32_t x, const char *hint, double epsilon,
                                       float *params[4], int32_t *out_value) {
  const hetc_plugin_tensor_t t = *type_of(im, x);
  const int64_t channels = t.rank >= 2 ? t.shape[1] : 1;
  const char *node_name = hint;
  char buffer[320];
  hetc_status_t status = as_4d(im, &x, &node_name, buffer, sizeof(buffer));
  hetc_node_attrs_t a = hetc_node_default_attrs(HETC_OP_BATCH_NORM);
  a.epsilon = epsilon;
  int32_t node = -1;
  if (!status) status = hetc_onnx_append_node(im, HETC_OP_BATCH_NORM, node_name, &x, 1, &a, &node);
  for (int slot = 0; slot < 4; ++slot) {
    if (!status) status = set_param(im, node, slot, params[slot], channels);
    else free(params[slot]);
  }
  if (status) return status;
  return finish_4d(im, im->graph->nodes[node].output, &t, hint, out_value);
}

/* scale * x + shift per channel (axis 1) of x, of any rank (as_4d; scale
 * and shift: one value per channel, or one for all when `count` is 1):
 * hetc_node_make_affine's batch_norm. */
static hetc_status_t append_affine(hetc_onnx_importer_t *im, int32_t x, const char *hint, const double *scale,
                                   const double *shift, int64_t count, int32_t *out_value) {
  const hetc_plugin_tensor_t t = *type_of(im, x);
  const char *node_name = hint;
  char buffer[320];
  HETC_RETURN_IF_ERROR(as_4d(im, &x, &node_name, buffer, sizeof(buffer)));
  hetc_node_attrs_t a = hetc_node_default_attrs(HETC_OP_BATCH_NORM);
  a.epsilon = HETC_AFFINE_EPSILON;
  int32_t node;
  HETC_RETURN_IF_ERROR(hetc_onnx_append_node(im, HETC_OP_BATCH_NORM, node_name, &x, 1, &a, &node));
  HETC_RETURN_IF_ERROR(hetc_node_make_affine(&im->graph->nodes[node], type_of(im, x)->shape[1], scale, shift, count, 0));
  return finish_4d(im, im->graph->nodes[node].output, &t, hint, out_value);
}

/* The same with one scale and one shift for every channel. */
static hetc_status_t append_uniform_affine(hetc_onnx_importer_t *im, int32_t x, const char *hint, double scale,
                                           double shift, int32_t *out_value) {
  return append_affine(im, x, hint, &scale, &shift, 1, out_value);
}

static hetc_status_t translate_batch_norm(hetc_onnx_importer_t *im) {
  int32_t x;
  const hetc_onnx_const_t *c[4];
  HETC_RETURN_IF_ERROR(activation_input(im, 0, &x));
  HETC_RETURN_IF_ERROR(only_first_output(im, "a training statistic"));
  if (type_of(im, x)->rank < 2) return BAD("input 0 has rank 1; BatchNormalization needs [N, C, ...]");
  const int64_t channels = type_of(im, x)->shape[1];
  static const char *const names[4] = {"scale", "B", "mean", "var"};
  for (int k = 0; k < 4; ++k) {
    HETC_RETURN_IF_ERROR(const_input(im, 1 + k, 1, &c[k]));
    if (c[k]->count != channels)
      return BAD("input %d (%s) holds %lld values for %lld channels", 1 + k, names[k], (long long)c[k]->count,
                 (long long)channels);
  }
  for (int64_t i = 0; i < channels; ++i)
    if (!(hetc_onnx_const_get(c[3], i) >= 0)) return BAD("input 4 (var) has a negative or NaN value at %lld", (long long)i);
  float epsilon = 1e-5f;
  int64_t training = 0, spatial = 1;
  HETC_RETURN_IF_ERROR(hetc_onnx_attr_float(im->node, "epsilon", 1e-5f, &epsilon));
  HETC_RETURN_IF_ERROR(hetc_onnx_attr_int(im->node, "training_mode", 0, &training));
  HETC_RETURN_IF_ERROR(hetc_onnx_attr_int(im->node, "spatial", 1, &spatial));
  if (training) return BAD("attribute 'training_mode' = 1 is not supported; hetc imports inference graphs");
  if (!spatial) return BAD("attribute 'spatial' = 0 (per-pixel statistics) is not supported");
  if (!(epsilon > 0)) return BAD("attribute 'epsilon' must be positive");
  float *params[4];
  for (int k = 0; k < 4; ++k) params[k] = float_values(c[k], 1.0);
  if (!params[0] || !params[1] || !params[2] || !params[3]) {
    for (int k = 0; k < 4; ++k) free(params[k]);
    return out_of_memory();
  }
  int32_t value;
  HETC_RETURN_IF_ERROR(append_batch_norm(im, x, im->node->output[0], epsilon, params, &value));
  return define_output(im, value);
}

/* A normalize node over x with the parameters `p` (axis non-negative; its
 * affine set here), with scale and bias of shape[axis] values each (taken;
 * a NULL scale: no affine). */
static hetc_status_t append_normalize(hetc_onnx_importer_t *im, int32_t x, hetc_plugin_normalize_params_t p,
                                      float *scale, float *bias, int32_t *out_value) {
  hetc_node_attrs_t a = hetc_node_default_attrs(HETC_OP_NORMALIZE);
  p.affine = scale != NULL;
  a.normalize = p;
  const int64_t count = type_of(im, x)->shape[p.axis];
  int32_t node;
  hetc_status_t status = append(im, HETC_OP_NORMALIZE, &x, 1, &a, &node);
  if (!status && scale) status = set_param(im, node, HETC_PARAM_WEIGHT, scale, count), scale = NULL;
  if (!status && bias) status = set_param(im, node, HETC_PARAM_BIAS, bias, count), bias = NULL;
  free(scale);
  free(bias);
  if (!status) *out_value = im->graph->nodes[node].output;
  return status;
}

/* Input k's values, one per index of dim `axis` (count of them) of a
 * normalization whose constant holds `held` values laid out over the
 * normalized dims; each must be the same along the other dims. NULL with
 * *out_status set when they are not. `repeat` > 1 spreads one value over
 * that many consecutive indices (GroupNormalization-18's per-group scale). */
static float *per_index_values(hetc_onnx_importer_t *im, int32_t k, const char *what, int64_t count, int64_t repeat,
                               int64_t inner, hetc_status_t *out_status) {
  const hetc_onnx_const_t *c = NULL;
  *out_status = const_input(im, k, 1, &c);
  if (*out_status) return NULL;
  const int64_t want = count / repeat * inner;
  if (c->count != want && !(c->count == 1 && want > 0)) {
    *out_status = BAD("input %d (%s) holds %lld values, not %lld (%s)", (int)k, what, (long long)c->count,
                      (long long)want, repeat > 1 ? "one per group" : inner > 1 ? "the normalized shape's" : "one per channel");
    return NULL;
  }
  float *values = malloc(sizeof(float) * (size_t)count);
  if (!values) {
    *out_status = out_of_memory();
    return NULL;
  }
  for (int64_t i = 0; i < count; ++i) {
    const int64_t at = c->count == 1 ? 0 : i / repeat * inner;
    values[i] = (float)hetc_onnx_const_get(c, at);
    for (int64_t r = 1; c->count > 1 && r < inner; ++r)
      if (hetc_onnx_const_get(c, at + r) != hetc_onnx_const_get(c, at)) {
        free(values);
        *out_status = BAD("input %d (%s) varies within the normalized dims after the first; hetc applies one %s per "
                          "index of the first", (int)k, what, what);
        return NULL;
      }
  }
  return values;
}

/* InstanceNormalization, GroupNormalization (opset 18: scale and bias a
 * group; 21: a channel) and LayerNormalization, each as one normalize with
 * its affine. LayerNormalization over several dims takes a scale and bias
 * that vary along the first of them only. */
static hetc_status_t append_layer_statistics(hetc_onnx_importer_t *im, int32_t x, int32_t axis, double epsilon);

static hetc_status_t translate_normalization(hetc_onnx_importer_t *im) {
  const char *op = im->node->op_type;
  const int layer = !strcmp(op, "LayerNormalization"), group = !strcmp(op, "GroupNormalization");
  int32_t x;
  HETC_RETURN_IF_ERROR(activation_input(im, 0, &x));
  if (!layer) HETC_RETURN_IF_ERROR(only_first_output(im, "a training statistic"));
  const hetc_plugin_tensor_t t = *type_of(im, x);
  if (t.rank < (layer ? 2 : 3)) return BAD("input 0 has rank %d; %s needs rank %d to 6", t.rank, op, layer ? 2 : 3);
  float epsilon = 1e-5f;
  int64_t axis = -1, groups = 1;
  HETC_RETURN_IF_ERROR(hetc_onnx_attr_float(im->node, "epsilon", 1e-5f, &epsilon));
  if (!(epsilon > 0)) return BAD("attribute 'epsilon' must be positive");
  hetc_plugin_normalize_params_t p = {1, t.rank - 1, 1, 1, epsilon};
  if (layer) {
    HETC_RETURN_IF_ERROR(hetc_onnx_attr_int(im->node, "axis", -1, &axis));
    if (axis < -t.rank || axis >= t.rank) return BAD("attribute 'axis': %lld is outside rank %d", (long long)axis, t.rank);
    p.axis = (int32_t)(axis < 0 ? axis + t.rank : axis);
    p.num_axes = t.rank - p.axis;
  } else if (group) {
    HETC_RETURN_IF_ERROR(hetc_onnx_attr_int(im->node, "num_groups", 0, &groups));
    if (groups < 1 || t.shape[1] % groups != 0)
      return BAD("attribute 'num_groups' = %lld does not divide the %lld channels", (long long)groups,
                 (long long)t.shape[1]);
    p.groups = (int32_t)groups;
  } else {
    p.groups = (int32_t)t.shape[1];
  }
  const int64_t count = t.shape[p.axis];
  int64_t inner = 1;
  for (int32_t d = p.axis + 1; d < t.rank; ++d) inner *= t.shape[d];
  if (!layer) inner = 1; /* instance and group norms scale channels */
  const int64_t repeat = group && im->opset < 21 ? count / p.groups : 1;
  hetc_status_t status = NULL;
  float *scale = per_index_values(im, 1, "scale", count, repeat, inner, &status), *bias = NULL;
  if (!status && (!layer || input_name(im, 2))) bias = per_index_values(im, 2, "bias", count, repeat, inner, &status);
  if (!status && !bias && !(bias = calloc((size_t)count, sizeof(float)))) status = out_of_memory();
  if (status) {
    free(scale);
    return status;
  }
  int32_t value;
  HETC_RETURN_IF_ERROR(append_normalize(im, x, p, scale, bias, &value));
  HETC_RETURN_IF_ERROR(define_output(im, value));
  return layer ? append_layer_statistics(im, x, p.axis, epsilon) : NULL;
}

static hetc_status_t append_unary(hetc_onnx_importer_t *im, hetc_op_t op, int32_t x, const char *hint,
                                  int32_t *out_value) {
  const hetc_node_attrs_t a = hetc_node_default_attrs(op);
  int32_t node;
  HETC_RETURN_IF_ERROR(hetc_onnx_append_node(im, op, hint, &x, 1, &a, &node));
  *out_value = im->graph->nodes[node].output;
  return NULL;
}

/* A name for step `step` of the current node's decomposition. */
static const char *step_name(const hetc_onnx_importer_t *im, const char *step, char *buffer, size_t size) {
  snprintf(buffer, size, "%s.%s", im->node->output[0], step);
  return buffer;
}

/* x at `rank` (at least its own) with leading dims of 1, numpy's rule for
 * operands of lower rank: a reshape named after step "ranked", or x itself
 * when its rank is that already. */
static hetc_status_t append_ranked(hetc_onnx_importer_t *im, int32_t x, int32_t rank, int32_t *out_value) {
  const hetc_plugin_tensor_t t = *type_of(im, x);
  *out_value = x;
  if (t.rank == rank) return NULL;
  int64_t dims[HETC_PLUGIN_MAX_RANK];
  for (int32_t d = 0; d < rank; ++d) dims[d] = d < rank - t.rank ? 1 : t.shape[d - (rank - t.rank)];
  char name[320];
  return append_reshape(im, x, step_name(im, "ranked", name, 320), rank, dims, out_value);
}

/* Two activations through hetc's add or multiply: the second operand may
 * broadcast (each dim equal or 1), so the full-shaped one goes first; an
 * operand of lower rank is ranked first (append_ranked). */
static hetc_status_t append_binary(hetc_onnx_importer_t *im, hetc_op_t op, int32_t left, int32_t right,
                                   const char *name_hint, int32_t *out_value) {
  const int32_t rank = type_of(im, left)->rank > type_of(im, right)->rank ? type_of(im, left)->rank
                                                                           : type_of(im, right)->rank;
  HETC_RETURN_IF_ERROR(append_ranked(im, left, rank, &left));
  HETC_RETURN_IF_ERROR(append_ranked(im, right, rank, &right));
  const hetc_plugin_tensor_t *l = type_of(im, left), *r = type_of(im, right);
  int32_t inputs[2] = {left, right};
  if (l->rank == r->rank) {
    int left_covers = 1;
    for (int32_t d = 0; d < l->rank; ++d) left_covers &= l->shape[d] == r->shape[d] || r->shape[d] == 1;
    if (!left_covers) inputs[0] = right, inputs[1] = left;
  }
  hetc_node_attrs_t a = hetc_node_default_attrs(op);
  int32_t node;
  HETC_RETURN_IF_ERROR(hetc_onnx_append_node(im, op, name_hint, inputs, 2, &a, &node));
  *out_value = im->graph->nodes[node].output;
  return NULL;
}

static hetc_status_t translate_activation(hetc_onnx_importer_t *im) {
  static const struct {
    const char *op_type;
    hetc_op_t op;
  } activations[] = {{"Relu", HETC_OP_RELU}, {"Sigmoid", HETC_OP_SIGMOID}, {"Tanh", HETC_OP_TANH},
                     {"Softplus", HETC_OP_SOFTPLUS}, {"Elu", HETC_OP_ELU},   {"Exp", HETC_OP_EXP},
                     {"Log", HETC_OP_LOG},   {"Erf", HETC_OP_ERF}};
  int32_t x, value;
  HETC_RETURN_IF_ERROR(activation_input(im, 0, &x));
  hetc_op_t op = HETC_OP_RELU;
  for (size_t k = 0; k < sizeof(activations) / sizeof(activations[0]); ++k)
    if (!strcmp(im->node->op_type, activations[k].op_type)) op = activations[k].op;
  float alpha = 1;
  if (op == HETC_OP_ELU) HETC_RETURN_IF_ERROR(hetc_onnx_attr_float(im->node, "alpha", 1, &alpha));
  if (alpha == 1) {
    HETC_RETURN_IF_ERROR(append_unary(im, op, x, im->node->output[0], &value));
    return define_output(im, value);
  }
  /* Elu with alpha a: relu(x) - a relu(-elu(x)), the positive part and a
   * times the negative part (exp(x) - 1) of elu. Each is exactly 0 where
   * the other is not, so a far from 1 costs x none of its digits. */
  char names[5][320];
  int32_t positive, negative;
  HETC_RETURN_IF_ERROR(append_unary(im, HETC_OP_RELU, x, step_name(im, "positive", names[0], 320), &positive));
  HETC_RETURN_IF_ERROR(append_unary(im, HETC_OP_ELU, x, step_name(im, "elu", names[1], 320), &negative));
  HETC_RETURN_IF_ERROR(append_uniform_affine(im, negative, step_name(im, "flipped", names[2], 320), -1, 0, &negative));
  HETC_RETURN_IF_ERROR(append_unary(im, HETC_OP_RELU, negative, step_name(im, "negative", names[3], 320), &negative));
  HETC_RETURN_IF_ERROR(append_uniform_affine(im, negative, step_name(im, "scaled", names[4], 320), -alpha, 0, &negative));
  HETC_RETURN_IF_ERROR(append_binary(im, HETC_OP_ADD, positive, negative, im->node->output[0], &value));
  return define_output(im, value);
}

/* Gelu (opset 20): approximate "none" is gelu, "tanh" gelu_tanh. */
static hetc_status_t translate_gelu(hetc_onnx_importer_t *im) {
  char approximate[16];
  int32_t x, value;
  HETC_RETURN_IF_ERROR(activation_input(im, 0, &x));
  HETC_RETURN_IF_ERROR(hetc_onnx_attr_string(im->node, "approximate", "none", approximate, sizeof(approximate)));
  const int tanh_form = !strcmp(approximate, "tanh");
  if (!tanh_form && strcmp(approximate, "none") != 0)
    return BAD("attribute 'approximate' is '%s'; expected 'none' or 'tanh'", approximate);
  HETC_RETURN_IF_ERROR(append_unary(im, tanh_form ? HETC_OP_GELU_TANH : HETC_OP_GELU, x, im->node->output[0], &value));
  return define_output(im, value);
}

#define SQRT_2 1.4142135623730951
#define SQRT_2_OVER_PI 0.79788456080286536
const hetc_onnx_chain_t hetc_onnx_gelu_chains[] = {
    {HETC_OP_GELU, 5, {{"Div", 'c', SQRT_2}, {"Erf", 0, 0}, {"Add", 'c', 1}, {"Mul", 'x', 0}, {"Mul", 'c', 0.5}}},
    {HETC_OP_GELU, 5, {{"Mul", 'c', 1 / SQRT_2}, {"Erf", 0, 0}, {"Add", 'c', 1}, {"Mul", 'x', 0}, {"Mul", 'c', 0.5}}},
    {HETC_OP_GELU_TANH, 8,
     {{"Pow", 'c', 3}, {"Mul", 'c', 0.044715}, {"Add", 'x', 0}, {"Mul", 'c', SQRT_2_OVER_PI}, {"Tanh", 0, 0},
      {"Add", 'c', 1}, {"Mul", 'x', 0}, {"Mul", 'c', 0.5}}},
    {HETC_OP_GELU_TANH, 9,
     {{"Mul", 'x', 0}, {"Mul", 'x', 0}, {"Mul", 'c', 0.044715}, {"Add", 'x', 0}, {"Mul", 'c', SQRT_2_OVER_PI},
      {"Tanh", 0, 0}, {"Add", 'c', 1}, {"Mul", 'x', 0}, {"Mul", 'c', 0.5}}},
};
const int32_t hetc_onnx_gelu_chain_count = (int32_t)(sizeof(hetc_onnx_gelu_chains) / sizeof(hetc_onnx_gelu_chains[0]));

/* Whether the value named `name` is a constant of one value within 1e-6
 * relative of `want` (the exporters write float32 roundings of sqrt 2 and
 * the like). */
static int constant_near(hetc_onnx_importer_t *im, const char *name, double want) {
  const onnx_value_t *v = hetc_onnx_lookup(im, name);
  return v && v->kind == ONNX_VALUE_CONST && v->constant.count == 1 &&
         fabs(hetc_onnx_const_get(&v->constant, 0) - want) <= 1e-6 * want;
}

hetc_status_t hetc_onnx_translate_gelu_chain(hetc_onnx_importer_t *im, const hetc_onnx_chain_t *chain,
                                             const Onnx__NodeProto *const *nodes, const char *x_name,
                                             int *out_fused) {
  *out_fused = 0;
  const onnx_value_t *x = hetc_onnx_lookup(im, x_name);
  if (!x || x->kind != ONNX_VALUE_ACTIVATION) return NULL;
  for (int32_t s = 0; s < chain->length; ++s) {
    if (chain->steps[s].other != 'c') continue;
    /* The operand that is not the running value (x for the first step). */
    const char *running = s ? nodes[s - 1]->output[0] : x_name;
    const Onnx__NodeProto *n = nodes[s];
    const char *other = !strcmp(n->input[0], running) ? n->input[1] : n->input[0];
    if (!constant_near(im, other, chain->steps[s].value)) return NULL;
  }
  int32_t value;
  const char *name = nodes[chain->length - 1]->output[0];
  HETC_RETURN_IF_ERROR(append_unary(im, chain->op, x->value, name, &value));
  *out_fused = 1;
  return define_output(im, value);
}

/* Neg: an affine map by -1. Abs: relu(x) + relu(-x), each exactly 0 where
 * the other is not. Softsign: x / (1 + abs(x)). Mish: x * tanh(softplus(x)). */
static hetc_status_t translate_composed_unary(hetc_onnx_importer_t *im) {
  const char *op = im->node->op_type;
  const char *out = im->node->output[0];
  int32_t x, value, part;
  char names[4][320];
  HETC_RETURN_IF_ERROR(activation_input(im, 0, &x));
  if (!strcmp(op, "Neg")) {
    HETC_RETURN_IF_ERROR(append_uniform_affine(im, x, out, -1, 0, &value));
    return define_output(im, value);
  }
  if (!strcmp(op, "Mish")) {
    HETC_RETURN_IF_ERROR(append_unary(im, HETC_OP_SOFTPLUS, x, step_name(im, "softplus", names[0], 320), &part));
    HETC_RETURN_IF_ERROR(append_unary(im, HETC_OP_TANH, part, step_name(im, "tanh", names[1], 320), &part));
    HETC_RETURN_IF_ERROR(append_binary(im, HETC_OP_MULTIPLY, x, part, out, &value));
    return define_output(im, value);
  }
  const int is_abs = !strcmp(op, "Abs");
  HETC_RETURN_IF_ERROR(append_unary(im, HETC_OP_RELU, x, step_name(im, "positive", names[0], 320), &value));
  HETC_RETURN_IF_ERROR(append_uniform_affine(im, x, step_name(im, "flipped", names[1], 320), -1, 0, &part));
  HETC_RETURN_IF_ERROR(append_unary(im, HETC_OP_RELU, part, step_name(im, "negative", names[2], 320), &part));
  HETC_RETURN_IF_ERROR(append_binary(im, HETC_OP_ADD, value, part, is_abs ? out : step_name(im, "abs", names[3], 320), &value));
  if (is_abs) return define_output(im, value);
  HETC_RETURN_IF_ERROR(append_uniform_affine(im, value, step_name(im, "divisor", names[0], 320), 1, 1, &part));
  HETC_RETURN_IF_ERROR(append_binary(im, HETC_OP_DIVIDE, x, part, out, &value));
  return define_output(im, value);
}

/* Reciprocal of a computed value: ones shaped like x, 0 relu6(x) + 1
 * (relu6 keeps x's infinities out of the product by 0, as the constant
 * pad's ones do, so 1 / inf is 0), divided by x (LayerNormalization's
 * expanded form: the reciprocal of the deviation). */
static hetc_status_t translate_reciprocal(hetc_onnx_importer_t *im) {
  int32_t x, ones, value;
  HETC_RETURN_IF_ERROR(activation_input(im, 0, &x));
  char names[2][320];
  HETC_RETURN_IF_ERROR(append_unary(im, HETC_OP_RELU6, x, step_name(im, "bounded", names[0], 320), &ones));
  HETC_RETURN_IF_ERROR(append_uniform_affine(im, ones, step_name(im, "ones", names[1], 320), 0, 1, &ones));
  HETC_RETURN_IF_ERROR(append_binary(im, HETC_OP_DIVIDE, ones, x, im->node->output[0], &value));
  return define_output(im, value);
}

/* Sqrt, and Pow of a computed value by one constant exponent: x itself
 * for 1, products of x for 2, 3 and 4, and exp(c log x) for an exponent
 * that is no integer (0.5 for Sqrt), which is NaN for x < 0 as the power
 * is, 0 or infinity at x = 0 as it is, and within a few ulp elsewhere
 * (hetc has no power op). Other integer exponents would be wrong for
 * negative x that way: not supported. */
static hetc_status_t translate_power(hetc_onnx_importer_t *im) {
  int32_t x, value, square;
  HETC_RETURN_IF_ERROR(activation_input(im, 0, &x));
  double exponent = 0.5;
  if (!strcmp(im->node->op_type, "Pow")) {
    const hetc_onnx_const_t *c;
    HETC_RETURN_IF_ERROR(const_input(im, 1, 1, &c));
    if (c->count != 1) return BAD("input 1 (the exponent) must be one value for a computed base");
    exponent = hetc_onnx_const_get(c, 0);
  }
  const char *out = im->node->output[0];
  char names[2][320];
  if (exponent == 1) return define_output(im, x);
  if (exponent == 2 || exponent == 3 || exponent == 4) {
    HETC_RETURN_IF_ERROR(append_binary(im, HETC_OP_MULTIPLY, x, x, exponent == 2 ? out : step_name(im, "square", names[0], 320), &square));
    if (exponent == 2) return define_output(im, square);
    HETC_RETURN_IF_ERROR(append_binary(im, HETC_OP_MULTIPLY, square, exponent == 3 ? x : square, out, &value));
    return define_output(im, value);
  }
  if (!isfinite(exponent) || exponent == floor(exponent))
    return BAD("Pow of a computed value to the power %g is not supported yet (1, 2, 3, 4 and non-integers are)",
               exponent);
  HETC_RETURN_IF_ERROR(append_unary(im, HETC_OP_LOG, x, step_name(im, "log", names[0], 320), &value));
  HETC_RETURN_IF_ERROR(append_uniform_affine(im, value, step_name(im, "scaled_log", names[1], 320), exponent, 0, &value));
  HETC_RETURN_IF_ERROR(append_unary(im, HETC_OP_EXP, value, out, &value));
  return define_output(im, value);
}

/* add_back + y clamped between 0 and `bound` (either side of 0; an
 * infinite bound clamps one side only), where y = x - shift: (bound / 6)
 * relu6((6 / bound) y) scales y but never adds to it, so a bound far from y
 * costs y none of its digits. */
static hetc_status_t append_scaled_clamp(hetc_onnx_importer_t *im, int32_t x, double shift, double bound,
                                         double add_back, const char *hint, int32_t *out_value) {
  char names[2][320];
  int32_t y;
  if (isinf(bound)) { /* relu(y) or -relu(-y) */
    const double sign = bound > 0 ? 1 : -1;
    if (sign > 0 && shift == 0 && add_back == 0) return append_unary(im, HETC_OP_RELU, x, hint, out_value);
    if (sign > 0 && shift == 0) y = x;
    else HETC_RETURN_IF_ERROR(append_uniform_affine(im, x, step_name(im, "clip_in", names[0], 320), sign, -sign * shift, &y));
    HETC_RETURN_IF_ERROR(append_unary(im, HETC_OP_RELU, y, step_name(im, "clip", names[1], 320), &y));
    return append_uniform_affine(im, y, hint, sign, add_back, out_value);
  }
  HETC_RETURN_IF_ERROR(
      append_uniform_affine(im, x, step_name(im, "clip_in", names[0], 320), 6 / bound, -6 * shift / bound, &y));
  HETC_RETURN_IF_ERROR(append_unary(im, HETC_OP_RELU6, y, step_name(im, "clip", names[1], 320), &y));
  return append_uniform_affine(im, y, hint, bound / 6, add_back, out_value);
}

/* The same, for any bound. Past 2^64 the scaled y would fall into
 * subnormals, where it loses digits or flushes to zero: the clamp splits
 * there, as clamp(y, C) + clamp(y - C, bound - C). The second part is 0
 * unless y passes C, and then y - C is a multiple of y's last digit, at
 * least 2^41: scaled, still a normal float. */
#define CLAMP_SPLIT 18446744073709551616.0 /* 2^64 */
static hetc_status_t append_clamp(hetc_onnx_importer_t *im, int32_t x, double shift, double bound, double add_back,
                                  const char *hint, int32_t *out_value) {
  if (!(fabs(bound) > CLAMP_SPLIT) || isinf(bound))
    return append_scaled_clamp(im, x, shift, bound, add_back, hint, out_value);
  char names[2][320];
  const double split = bound > 0 ? CLAMP_SPLIT : -CLAMP_SPLIT;
  int32_t near, far;
  snprintf(names[0], 320, "%s.near", hint);
  snprintf(names[1], 320, "%s.far", hint);
  HETC_RETURN_IF_ERROR(append_scaled_clamp(im, x, shift, split, add_back, names[0], &near));
  HETC_RETURN_IF_ERROR(append_scaled_clamp(im, x, shift + split, bound - split, 0, names[1], &far));
  return append_binary(im, HETC_OP_ADD, near, far, hint, out_value);
}

/* x clipped to [low, high] (either may be infinite; low <= high). [0, 6]
 * is relu6 and [0, inf) relu themselves. Otherwise x is shifted by a bound
 * only when both bounds lie on one side of 0, where x, when kept, is
 * farther from 0 than the shift and loses no more than its last digit;
 * around 0 the clip is the sum of a clamp above 0 and one below. */
static hetc_status_t append_clip(hetc_onnx_importer_t *im, int32_t x, double low, double high, const char *hint,
                                 int32_t *out_value) {
  char names[3][320];
  if (low == 0 && high == 6) return append_unary(im, HETC_OP_RELU6, x, hint, out_value);
  if (low == 0 && isinf(high)) return append_unary(im, HETC_OP_RELU, x, hint, out_value);
  if (isinf(low) && isinf(high)) {
    *out_value = x;
    return NULL;
  }
  if (low == high) { /* low wherever x is a number: relu6 keeps infinities out of the product by 0 */
    int32_t y;
    HETC_RETURN_IF_ERROR(append_unary(im, HETC_OP_RELU6, x, step_name(im, "bounded", names[0], 320), &y));
    return append_uniform_affine(im, y, hint, 0, low, out_value);
  }
  const double shift = low > 0 ? low : high < 0 ? high : 0;
  if (shift != 0) /* one bound is the shift itself */
    return append_clamp(im, x, shift, shift == low ? high - low : low - high, shift, hint, out_value);
  if (low == 0 || high == 0) return append_clamp(im, x, 0, low == 0 ? high : low, 0, hint, out_value);
  int32_t above, below;
  HETC_RETURN_IF_ERROR(append_clamp(im, x, 0, high, 0, step_name(im, "above", names[1], 320), &above));
  HETC_RETURN_IF_ERROR(append_clamp(im, x, 0, low, 0, step_name(im, "below", names[2], 320), &below));
  return append_binary(im, HETC_OP_ADD, above, below, hint, out_value);
}

static hetc_status_t translate_clip(hetc_onnx_importer_t *im) {
  int32_t x, value;
  HETC_RETURN_IF_ERROR(activation_input(im, 0, &x));
  /* An omitted bound is the lowest or the largest float (not an
   * infinity: an infinite x is clipped to it). */
  float low = -FLT_MAX, high = FLT_MAX;
  if (im->opset < 11) {
    HETC_RETURN_IF_ERROR(hetc_onnx_attr_float(im->node, "min", -FLT_MAX, &low));
    HETC_RETURN_IF_ERROR(hetc_onnx_attr_float(im->node, "max", FLT_MAX, &high));
  } else {
    const hetc_onnx_const_t *bound;
    HETC_RETURN_IF_ERROR(const_input(im, 1, 0, &bound));
    if (bound && bound->count != 1) return BAD("input 1 (min) must hold one value");
    if (bound) low = (float)hetc_onnx_const_get(bound, 0);
    HETC_RETURN_IF_ERROR(const_input(im, 2, 0, &bound));
    if (bound && bound->count != 1) return BAD("input 2 (max) must hold one value");
    if (bound) high = (float)hetc_onnx_const_get(bound, 0);
  }
  if (isnan(low) || isnan(high) || low > high || (isinf(low) && low > 0) || (isinf(high) && high < 0))
    return BAD("Clip to [%g, %g] is not a range", low, high);
  HETC_RETURN_IF_ERROR(append_clip(im, x, low, high, im->node->output[0], &value));
  return define_output(im, value);
}

/* HardSwish, and HardSigmoid with torch's alpha 1/6 and beta 1/2: hetc's
 * hardswish and hardsigmoid, which fuse into a conv2d's or dense's
 * epilogue. HardSigmoid with another alpha or beta: clip(alpha * x + beta,
 * 0, 1) = relu6(6 alpha x + 6 beta) / 6, as affine, relu6, affine. */
static hetc_status_t translate_hard_sigmoid(hetc_onnx_importer_t *im) {
  const int is_swish = !strcmp(im->node->op_type, "HardSwish");
  int32_t x, y;
  char names[2][320];
  HETC_RETURN_IF_ERROR(activation_input(im, 0, &x));
  float alpha = 1.0f / 6, beta = 0.5f;
  if (!is_swish) {
    HETC_RETURN_IF_ERROR(hetc_onnx_attr_float(im->node, "alpha", 0.2f, &alpha));
    HETC_RETURN_IF_ERROR(hetc_onnx_attr_float(im->node, "beta", 0.5f, &beta));
  }
  if (alpha == 1.0f / 6 && beta == 0.5f) {
    HETC_RETURN_IF_ERROR(append_unary(im, is_swish ? HETC_OP_HARDSWISH : HETC_OP_HARDSIGMOID, x, im->node->output[0], &y));
    return define_output(im, y);
  }
  HETC_RETURN_IF_ERROR(append_uniform_affine(im, x, step_name(im, "in", names[0], 320), 6.0 * alpha, 6.0 * beta, &y));
  HETC_RETURN_IF_ERROR(append_unary(im, HETC_OP_RELU6, y, step_name(im, "relu6", names[1], 320), &y));
  HETC_RETURN_IF_ERROR(append_uniform_affine(im, y, im->node->output[0], 1.0 / 6, 0, &y));
  return define_output(im, y);
}

/* c broadcast to t's shape (right-aligned, each of c's dims t's or 1), in
 * *out as floats (the caller frees them); BAD when it does not broadcast so
 * (a constant that would broadcast the computed value). */
static hetc_status_t const_to_shape(const hetc_onnx_const_t *c, const hetc_plugin_tensor_t *t, const char *what,
                                    float **out) {
  *out = NULL;
  if (c->rank > t->rank)
    return BAD("%s has rank %d, above the computed value's %d (broadcasting it is not supported yet)", what,
               (int)c->rank, (int)t->rank);
  int64_t c_dims[HETC_PLUGIN_MAX_RANK];
  for (int32_t d = 0; d < t->rank; ++d) {
    c_dims[d] = d < t->rank - c->rank ? 1 : c->dims[d - (t->rank - c->rank)];
    if (c_dims[d] != 1 && c_dims[d] != t->shape[d])
      return BAD("%s of dim %d extent %lld does not broadcast to the computed value's %lld%s", what, (int)d,
                 (long long)c_dims[d], (long long)t->shape[d],
                 t->shape[d] == 1 ? " (broadcasting the computed value is not supported yet)" : "");
  }
  const int64_t count = hetc_tensor_element_count(t);
  float *full = malloc(sizeof(float) * (size_t)count);
  if (!full) return out_of_memory();
  for (int64_t k = 0; k < count; ++k) {
    int64_t rest = k, from = 0, stride = 1;
    for (int32_t d = t->rank - 1; d >= 0; --d) {
      const int64_t i = rest % t->shape[d];
      rest /= t->shape[d];
      from += (c_dims[d] == 1 ? 0 : i) * stride, stride *= c_dims[d];
    }
    full[k] = (float)hetc_onnx_const_get(c, from);
  }
  *out = full;
  return NULL;
}

/* scale[k] x[k] + shift[k] for every element k of x (scale NULL: x[k] +
 * shift[k], a bias_add, exact), named hint: x viewed as [1, elements, 1,
 * 1], each element a channel of its own. shift is taken, also on failure. */
static hetc_status_t append_per_element(hetc_onnx_importer_t *im, int32_t x, const float *scale, float *shift,
                                        const char *hint, int32_t *out_value) {
  const hetc_plugin_tensor_t t = *type_of(im, x);
  const int64_t count = hetc_tensor_element_count(&t), view[4] = {1, count, 1, 1};
  char names[2][320];
  hetc_status_t status = append_reshape(im, x, step_name(im, "elements", names[0], 320), 4, view, &x);
  int32_t value = -1;
  if (!status && !scale) {
    hetc_node_attrs_t a = hetc_node_default_attrs(HETC_OP_BIAS_ADD);
    int32_t node;
    status = hetc_onnx_append_node(im, HETC_OP_BIAS_ADD, step_name(im, "per_element", names[1], 320), &x, 1, &a, &node);
    if (!status) {
      status = set_param(im, node, HETC_PARAM_BIAS, shift, count);
      shift = NULL;
      value = im->graph->nodes[node].output;
    }
  } else if (!status) {
    double *s = malloc(sizeof(double) * (size_t)count), *b = malloc(sizeof(double) * (size_t)count);
    status = s && b ? NULL : out_of_memory();
    for (int64_t k = 0; !status && k < count; ++k) s[k] = scale[k], b[k] = shift ? shift[k] : 0;
    if (!status) status = append_affine(im, x, step_name(im, "per_element", names[1], 320), s, b, count, &value);
    free(s);
    free(b);
  }
  free(shift);
  if (status) return status;
  return append_reshape(im, value, hint, t.rank, t.shape, out_value);
}

/* LeakyRelu and PRelu: relu(x) - slope * relu(-x), slope one value or one
 * per channel (an affine map), or of any shape that broadcasts to x's (per
 * element, append_per_element). */
static hetc_status_t translate_leaky_relu(hetc_onnx_importer_t *im) {
  int32_t x, positive, negative, value;
  char names[3][320];
  HETC_RETURN_IF_ERROR(activation_input(im, 0, &x));
  const hetc_plugin_tensor_t *t = type_of(im, x);
  const int64_t channels = t->rank >= 2 ? t->shape[1] : 1;
  double *slope = malloc(sizeof(double) * (size_t)channels), *zero = calloc((size_t)channels, sizeof(double));
  if (!slope || !zero) {
    free(slope), free(zero);
    return out_of_memory();
  }
  hetc_status_t status = NULL;
  if (!strcmp(im->node->op_type, "LeakyRelu")) {
    float alpha = 0.01f;
    status = hetc_onnx_attr_float(im->node, "alpha", 0.01f, &alpha);
    for (int64_t i = 0; i < channels; ++i) slope[i] = -alpha;
  } else {
    const hetc_onnx_const_t *c = NULL;
    status = const_input(im, 1, 1, &c);
    if (!status && !per_channel(c, t)) {
      free(slope);
      free(zero);
      float *leak = NULL;
      HETC_RETURN_IF_ERROR(const_to_shape(c, t, "input 1 (slope)", &leak));
      for (int64_t k = 0; k < hetc_tensor_element_count(t); ++k) leak[k] = -leak[k];
      status = append_unary(im, HETC_OP_RELU, x, step_name(im, "positive", names[0], 320), &positive);
      if (!status) status = append_uniform_affine(im, x, step_name(im, "flipped", names[1], 320), -1, 0, &negative);
      if (!status) status = append_unary(im, HETC_OP_RELU, negative, step_name(im, "negative", names[2], 320), &negative);
      if (!status) status = append_per_element(im, negative, leak, NULL, step_name(im, "leak", names[2], 320), &negative);
      if (!status) status = append_binary(im, HETC_OP_ADD, positive, negative, im->node->output[0], &value);
      free(leak);
      return status ? status : define_output(im, value);
    }
    for (int64_t i = 0; !status && i < channels; ++i) slope[i] = -hetc_onnx_const_get(c, c->count == 1 ? 0 : i);
  }
  const double minus_one = -1;
  if (!status) status = append_unary(im, HETC_OP_RELU, x, step_name(im, "positive", names[0], 320), &positive);
  if (!status) status = append_affine(im, x, step_name(im, "flipped", names[1], 320), &minus_one, zero, 1, &negative);
  if (!status) status = append_unary(im, HETC_OP_RELU, negative, step_name(im, "negative", names[2], 320), &negative);
  if (!status) status = append_affine(im, negative, step_name(im, "leak", names[2], 320), slope, zero, channels, &negative);
  if (!status) status = append_binary(im, HETC_OP_ADD, positive, negative, im->node->output[0], &value);
  free(slope);
  free(zero);
  return status ? status : define_output(im, value);
}

/* Whether constant c holds one value per element of t's last axis ([L],
 * [1,L], [1,1,L], ...), as a MatMul's bias does. */
static int per_last_axis(const hetc_onnx_const_t *c, const hetc_plugin_tensor_t *t) {
  if (c->rank < 1 || c->rank > t->rank || c->count != t->shape[t->rank - 1]) return 0;
  for (int32_t d = 0; d + 1 < c->rank; ++d)
    if (c->dims[d] != 1) return 0;
  return 1;
}

/* x + c, x - c: bias_add, over axis 1 (per channel), or over the last axis
 * of a value of rank 3 or more through a reshape to [rows, last] and
 * back. */
static hetc_status_t append_bias(hetc_onnx_importer_t *im, int32_t x, const hetc_onnx_const_t *c, double sign,
                                 int32_t *out_value) {
  const hetc_plugin_tensor_t t = *type_of(im, x);
  const int over_last = t.rank > 2 && !per_channel(c, &t) && per_last_axis(c, &t);
  if (!over_last && !per_channel(c, &t)) { /* any other shape: per element */
    float *shift = NULL;
    HETC_RETURN_IF_ERROR(const_to_shape(c, &t, "the constant operand", &shift));
    for (int64_t k = 0; k < hetc_tensor_element_count(&t); ++k) shift[k] = (float)(sign * shift[k]);
    return append_per_element(im, x, NULL, shift, im->node->output[0], out_value);
  }
  if (!over_last && t.rank != 4 && t.rank != 2) { /* bias_add is 2-d or 4-d: an affine map by 1 */
    const int64_t count = c->count;
    double *scale = malloc(sizeof(double) * (size_t)count), *shift = malloc(sizeof(double) * (size_t)count);
    hetc_status_t status = scale && shift ? NULL : out_of_memory();
    for (int64_t i = 0; !status && i < count; ++i) scale[i] = 1, shift[i] = sign * hetc_onnx_const_get(c, i);
    if (!status) status = append_affine(im, x, im->node->output[0], scale, shift, count, out_value);
    free(scale);
    free(shift);
    return status;
  }
  char names[2][320];
  if (over_last) {
    const int64_t rows[2] = {hetc_tensor_element_count(&t) / t.shape[t.rank - 1], t.shape[t.rank - 1]};
    HETC_RETURN_IF_ERROR(append_reshape(im, x, step_name(im, "rows", names[0], 320), 2, rows, &x));
  }
  const int64_t channels = type_of(im, x)->shape[1];
  float *bias = malloc(sizeof(float) * (size_t)channels);
  if (!bias) return out_of_memory();
  for (int64_t i = 0; i < channels; ++i) bias[i] = (float)(sign * hetc_onnx_const_get(c, c->count == 1 ? 0 : i));
  hetc_node_attrs_t a = hetc_node_default_attrs(HETC_OP_BIAS_ADD);
  int32_t node;
  hetc_status_t status = hetc_onnx_append_node(im, HETC_OP_BIAS_ADD,
                                               over_last ? step_name(im, "bias", names[1], 320) : im->node->output[0],
                                               &x, 1, &a, &node);
  if (status) free(bias);
  else status = set_param(im, node, HETC_PARAM_BIAS, bias, channels);
  if (status) return status;
  *out_value = im->graph->nodes[node].output;
  if (over_last) return append_reshape(im, *out_value, im->node->output[0], t.rank, t.shape, out_value);
  return NULL;
}

/* x * c, x / c (as_scale, reciprocal) or c - x (sign -1): an affine map
 * with c one value or one per channel, else per element. */
static hetc_status_t append_const_affine(hetc_onnx_importer_t *im, int32_t x, const hetc_onnx_const_t *c,
                                         int as_scale, int reciprocal, double sign, int32_t *out_value) {
  const hetc_plugin_tensor_t *t = type_of(im, x);
  if (!per_channel(c, t)) {
    float *full = NULL;
    HETC_RETURN_IF_ERROR(const_to_shape(c, t, "the constant operand", &full));
    const int64_t count = hetc_tensor_element_count(t);
    float *other = malloc(sizeof(float) * (size_t)count);
    if (!other) {
      free(full);
      return out_of_memory();
    }
    for (int64_t k = 0; k < count; ++k) {
      other[k] = as_scale ? 0.0f : full[k];                                           /* the shift */
      full[k] = as_scale ? (reciprocal ? (float)(1.0 / full[k]) : full[k]) : (float)sign; /* the scale */
    }
    hetc_status_t status = append_per_element(im, x, full, other, im->node->output[0], out_value);
    free(full);
    return status;
  }
  const int64_t channels = c->count == 1 ? 1 : t->shape[1];
  double *scale = malloc(sizeof(double) * (size_t)channels), *shift = malloc(sizeof(double) * (size_t)channels);
  if (!scale || !shift) {
    free(scale), free(shift);
    return out_of_memory();
  }
  for (int64_t i = 0; i < channels; ++i) {
    const double v = hetc_onnx_const_get(c, c->count == 1 ? 0 : i);
    scale[i] = as_scale ? (reciprocal ? 1.0 / v : v) : sign;
    shift[i] = as_scale ? 0 : v;
  }
  hetc_status_t status = append_affine(im, x, im->node->output[0], scale, shift, channels, out_value);
  free(scale);
  free(shift);
  return status;
}

static hetc_status_t translate_binary(hetc_onnx_importer_t *im) {
  const char *op = im->node->op_type;
  const char *left_name = input_name(im, 0), *right_name = input_name(im, 1);
  if (!left_name || !right_name) return BAD("an input is missing");
  const onnx_value_t *left = hetc_onnx_lookup(im, left_name), *right = hetc_onnx_lookup(im, right_name);
  const int is_add = !strcmp(op, "Add"), is_sub = !strcmp(op, "Sub"), is_mul = !strcmp(op, "Mul");
  int32_t value = -1;
  char name[320];
  if (left->kind == ONNX_VALUE_ACTIVATION && right->kind == ONNX_VALUE_ACTIVATION) {
    if (is_add || is_mul) {
      HETC_RETURN_IF_ERROR(append_binary(im, is_add ? HETC_OP_ADD : HETC_OP_MULTIPLY, left->value, right->value,
                                         im->node->output[0], &value));
    } else if (is_sub) { /* a + (-1) b */
      const int32_t a = left->value;
      HETC_RETURN_IF_ERROR(append_uniform_affine(im, right->value, step_name(im, "negated", name, sizeof(name)), -1, 0, &value));
      HETC_RETURN_IF_ERROR(append_binary(im, HETC_OP_ADD, a, value, im->node->output[0], &value));
    } else { /* Div: the divisor may broadcast, the dividend not (not commutative) */
      const hetc_plugin_tensor_t *l = type_of(im, left->value), *r = type_of(im, right->value);
      int right_broadcasts = l->rank == r->rank;
      for (int32_t d = 0; right_broadcasts && d < l->rank; ++d)
        right_broadcasts = l->shape[d] == r->shape[d] || r->shape[d] == 1;
      if (!right_broadcasts) return BAD("Div of a value that broadcasts over the divisor is not supported yet");
      HETC_RETURN_IF_ERROR(append_binary(im, HETC_OP_DIVIDE, left->value, right->value, im->node->output[0], &value));
    }
    return define_output(im, value);
  }
  /* One side is constant (both constant was folded). */
  const int constant_first = left->kind == ONNX_VALUE_CONST;
  const int32_t x = constant_first ? right->value : left->value;
  const hetc_onnx_const_t *c = constant_first ? &left->constant : &right->constant;
  if (constant_first && !strcmp(op, "Div")) return BAD("a constant over a computed value is not supported yet");
  if (constant_first && is_sub) HETC_RETURN_IF_ERROR(append_const_affine(im, x, c, 0, 0, -1.0, &value)); /* c - x */
  else if (is_add || is_sub) HETC_RETURN_IF_ERROR(append_bias(im, x, c, is_sub ? -1.0 : 1.0, &value));
  else HETC_RETURN_IF_ERROR(append_const_affine(im, x, c, 1, !is_mul, 1.0, &value));
  return define_output(im, value);
}

static hetc_status_t translate_sum(hetc_onnx_importer_t *im) {
  int32_t total;
  HETC_RETURN_IF_ERROR(activation_input(im, 0, &total));
  const int32_t count = (int32_t)im->node->n_input;
  for (int32_t k = 1; k < count; ++k) {
    int32_t next;
    HETC_RETURN_IF_ERROR(activation_input(im, k, &next));
    char hint[300];
    snprintf(hint, sizeof(hint), "%s%s%d", im->node->output[0], k + 1 < count ? ".sum" : "", k);
    HETC_RETURN_IF_ERROR(append_binary(im, HETC_OP_ADD, total, next, k + 1 < count ? hint : im->node->output[0], &total));
  }
  return define_output(im, total);
}

/* ---- shapes: reductions, concat, flatten, reshape, softmax ---------------- */

/* A transpose node over x with perm (rank entries). */
static hetc_status_t append_transpose(hetc_onnx_importer_t *im, int32_t x, const char *hint, const int64_t *perm,
                                      int32_t rank, int32_t *out_value) {
  hetc_node_attrs_t a = hetc_node_default_attrs(HETC_OP_TRANSPOSE);
  a.perm_rank = rank;
  for (int32_t d = 0; d < rank; ++d) a.perm[d] = (int32_t)perm[d];
  int32_t node;
  HETC_RETURN_IF_ERROR(hetc_onnx_append_node(im, HETC_OP_TRANSPOSE, hint, &x, 1, &a, &node));
  *out_value = im->graph->nodes[node].output;
  return NULL;
}

/* A reshape node over x to `dims`. */
static hetc_status_t append_reshape(hetc_onnx_importer_t *im, int32_t x, const char *name_hint, int32_t rank,
                                    const int64_t *dims, int32_t *out_value) {
  if (rank < 1 || rank > HETC_PLUGIN_MAX_RANK)
    return BAD("a reshape to rank %d is not supported (hetc's activations have rank 1 to %d)", (int)rank,
               HETC_PLUGIN_MAX_RANK);
  hetc_node_attrs_t a = hetc_node_default_attrs(HETC_OP_RESHAPE);
  a.reshape_rank = rank;
  memcpy(a.reshape_shape, dims, sizeof(int64_t) * (size_t)rank);
  int32_t node;
  HETC_RETURN_IF_ERROR(hetc_onnx_append_node(im, HETC_OP_RESHAPE, name_hint, &x, 1, &a, &node));
  *out_value = im->graph->nodes[node].output;
  return NULL;
}

/* ReduceMean's axes (attribute, or input from opset 18), normalised and
 * sorted into reduced[]; all axes when none are given. */
static hetc_status_t reduced_axes(hetc_onnx_importer_t *im, int32_t rank, int reduced[HETC_PLUGIN_MAX_RANK]) {
  int64_t axes[HETC_ONNX_MAX_RANK];
  int32_t count = -1;
  HETC_RETURN_IF_ERROR(hetc_onnx_attr_ints(im->node, "axes", HETC_ONNX_MAX_RANK, axes, &count));
  const hetc_onnx_const_t *axes_input;
  HETC_RETURN_IF_ERROR(const_input(im, 1, 0, &axes_input));
  if (axes_input) {
    if (axes_input->count > HETC_ONNX_MAX_RANK) return BAD("input 1 (axes) holds more axes than the input has");
    count = (int32_t)axes_input->count;
    for (int32_t k = 0; k < count; ++k) axes[k] = hetc_onnx_const_get_int(axes_input, k);
  }
  int64_t no_op = 0;
  HETC_RETURN_IF_ERROR(hetc_onnx_attr_int(im->node, "noop_with_empty_axes", 0, &no_op));
  if (count == 0 && no_op) return BAD("noop_with_empty_axes with no axes (an identity) is not supported yet");
  for (int32_t d = 0; d < rank; ++d) reduced[d] = count <= 0;
  for (int32_t k = 0; k < count; ++k) {
    const int64_t axis = axes[k] < 0 ? axes[k] + rank : axes[k];
    if (axis < 0 || axis >= rank) return BAD("axis %lld is outside rank %d", (long long)axes[k], (int)rank);
    reduced[axis] = 1;
  }
  return NULL;
}

/* GlobalAveragePool: a global_avg_pool2d. */
static hetc_status_t translate_global_pool(hetc_onnx_importer_t *im) {
  int32_t x;
  HETC_RETURN_IF_ERROR(activation_input(im, 0, &x));
  HETC_RETURN_IF_ERROR(need_rank(im, x, 4, "4-d inputs"));
  hetc_node_attrs_t a = hetc_node_default_attrs(HETC_OP_GLOBAL_AVG_POOL2D);
  int32_t node;
  HETC_RETURN_IF_ERROR(append(im, HETC_OP_GLOBAL_AVG_POOL2D, &x, 1, &a, &node));
  return define_output(im, im->graph->nodes[node].output);
}

/* The largest window side a max_pool2d takes (the model format's). */
#define REDUCE_MAX_WINDOW 1024

/* The mean (global_avg_pool2d) or the largest value (max_pool2d over the
 * whole plane) of each of `kept` runs of `reduced` consecutive values of
 * x, as [kept, 1, 1, 1]: x is viewed as [kept, 1, reduced, 1], or for a
 * max of more values than one window side as [kept, 1, a, b] with a b =
 * reduced. */
static hetc_status_t append_run_reduction(hetc_onnx_importer_t *im, int32_t x, int64_t kept, int64_t reduced,
                                          int is_max, const char *hint, int32_t *out_value) {
  int64_t rows = reduced, columns = 1;
  if (is_max && reduced > REDUCE_MAX_WINDOW) {
    for (columns = (reduced + REDUCE_MAX_WINDOW - 1) / REDUCE_MAX_WINDOW; columns <= REDUCE_MAX_WINDOW; ++columns)
      if (reduced % columns == 0 && reduced / columns <= REDUCE_MAX_WINDOW) break;
    if (columns > REDUCE_MAX_WINDOW)
      return BAD("%s over %lld values, which do not factor into a window of at most %d x %d, is not supported yet",
                 im->node->op_type, (long long)reduced, REDUCE_MAX_WINDOW, REDUCE_MAX_WINDOW);
    rows = reduced / columns;
  }
  const hetc_plugin_tensor_t *t = type_of(im, x);
  char name[320];
  if (!(t->rank == 4 && t->shape[0] == kept && t->shape[1] == 1 && t->shape[2] == rows && t->shape[3] == columns)) {
    const int64_t as_plane[4] = {kept, 1, rows, columns};
    HETC_RETURN_IF_ERROR(append_reshape(im, x, step_name(im, "plane", name, 320), 4, as_plane, &x));
  }
  const hetc_op_t op = is_max ? HETC_OP_MAX_POOL2D : HETC_OP_GLOBAL_AVG_POOL2D;
  hetc_node_attrs_t a = hetc_node_default_attrs(op);
  if (is_max) a.kernel[0] = (int32_t)rows, a.kernel[1] = (int32_t)columns;
  int32_t node;
  HETC_RETURN_IF_ERROR(hetc_onnx_append_node(im, op, hint, &x, 1, &a, &node));
  *out_value = im->graph->nodes[node].output;
  return NULL;
}

/* LayerNormalization's Mean and InvStdDev outputs, where the graph reads
 * them: x as [kept, count] runs over the normalized dims, their means
 * (append_run_reduction), and 1 / sqrt(var + epsilon) as exp(-log(var +
 * epsilon) / 2) of the runs' centred squares' means; each reshaped to x's
 * dims with the normalized ones 1, as ONNX shapes them. */
static hetc_status_t append_layer_statistics(hetc_onnx_importer_t *im, int32_t x, int32_t axis, double epsilon) {
  const int want_mean = im->node->n_output > 1 && hetc_onnx_is_read(im, im->node->output[1]);
  const int want_inverse = im->node->n_output > 2 && hetc_onnx_is_read(im, im->node->output[2]);
  if (!want_mean && !want_inverse) return NULL;
  const hetc_plugin_tensor_t t = *type_of(im, x);
  int64_t kept = 1, dims[HETC_PLUGIN_MAX_RANK];
  for (int32_t d = 0; d < t.rank; ++d) dims[d] = d < axis ? t.shape[d] : 1, kept *= dims[d];
  const int64_t count = hetc_tensor_element_count(&t) / kept, runs[2] = {kept, count}, column[2] = {kept, 1};
  char names[9][320];
  int32_t rows, mean, value;
  HETC_RETURN_IF_ERROR(append_reshape(im, x, step_name(im, "runs", names[0], 320), 2, runs, &rows));
  HETC_RETURN_IF_ERROR(append_run_reduction(im, rows, kept, count, 0, step_name(im, "mean", names[1], 320), &mean));
  if (want_mean) {
    HETC_RETURN_IF_ERROR(append_reshape(im, mean, im->node->output[1], t.rank, dims, &value));
    HETC_RETURN_IF_ERROR(define_output_at(im, 1, value));
  }
  if (!want_inverse) return NULL;
  HETC_RETURN_IF_ERROR(append_reshape(im, mean, step_name(im, "mean_column", names[2], 320), 2, column, &value));
  HETC_RETURN_IF_ERROR(append_uniform_affine(im, value, step_name(im, "minus_mean", names[3], 320), -1, 0, &value));
  HETC_RETURN_IF_ERROR(append_binary(im, HETC_OP_ADD, rows, value, step_name(im, "centred", names[4], 320), &value));
  HETC_RETURN_IF_ERROR(append_binary(im, HETC_OP_MULTIPLY, value, value, step_name(im, "squared", names[5], 320), &value));
  HETC_RETURN_IF_ERROR(append_run_reduction(im, value, kept, count, 0, step_name(im, "variance", names[6], 320), &value));
  HETC_RETURN_IF_ERROR(append_uniform_affine(im, value, step_name(im, "variance_eps", names[7], 320), 1, epsilon, &value));
  HETC_RETURN_IF_ERROR(append_unary(im, HETC_OP_LOG, value, step_name(im, "log_variance", names[8], 320), &value));
  HETC_RETURN_IF_ERROR(append_uniform_affine(im, value, step_name(im, "minus_half_log", names[0], 320), -0.5, 0, &value));
  HETC_RETURN_IF_ERROR(append_unary(im, HETC_OP_EXP, value, step_name(im, "inverse", names[1], 320), &value));
  HETC_RETURN_IF_ERROR(append_reshape(im, value, im->node->output[2], t.rank, dims, &value));
  return define_output_at(im, 2, value);
}

/* The Reduce ops on a computed value, over any axes: the reduced axes
 * moved last (a transpose, when they are not), each run of them reduced by
 * a mean or a max (append_run_reduction), and the result reshaped to the
 * reduction's shape. Sums are means times the count (so log-sums add its
 * log); squares, absolute values (relu(x) + relu(-x)), exponentials and
 * negations (Min is -max(-x)) come before, logs after; LogSumExp subtracts
 * the max first, as onnxruntime does, so that exp cannot overflow; the L2
 * norm's square root is exp(log(sum) / 2), within a few ulp (hetc has no
 * square root op). ReduceProd is not imported on computed values. */
static hetc_status_t translate_reduce(hetc_onnx_importer_t *im) {
  int32_t x;
  HETC_RETURN_IF_ERROR(activation_input(im, 0, &x));
  const char *kind = im->node->op_type + strlen("Reduce");
  if (!strcmp(kind, "Prod")) return BAD("ReduceProd of a computed value is not supported yet");
  const hetc_plugin_tensor_t t = *type_of(im, x);
  int reduced[HETC_PLUGIN_MAX_RANK] = {0};
  int64_t keep_dims = 1;
  HETC_RETURN_IF_ERROR(reduced_axes(im, t.rank, reduced));
  HETC_RETURN_IF_ERROR(hetc_onnx_attr_int(im->node, "keepdims", 1, &keep_dims));
  int64_t perm[HETC_PLUGIN_MAX_RANK], kept = 1, count = 1, dims[HETC_PLUGIN_MAX_RANK];
  int32_t num_kept = 0, rank = 0, moved = 0;
  for (int32_t d = 0; d < t.rank; ++d)
    if (!reduced[d]) perm[num_kept++] = d, kept *= t.shape[d];
  for (int32_t d = 0, k = num_kept; d < t.rank; ++d)
    if (reduced[d]) moved |= d != k, perm[k++] = d, count *= t.shape[d];
  for (int32_t d = 0; d < t.rank; ++d)
    if (!reduced[d] || keep_dims) dims[rank++] = reduced[d] ? 1 : t.shape[d];
  if (num_kept == t.rank) return BAD("%s over no axis is not supported yet", im->node->op_type);
  if (rank == 0) return BAD("a %s over every axis without keepdims (a scalar) is not supported yet", im->node->op_type);
  char names[8][320];
  const int is_max = !strcmp(kind, "Max") || !strcmp(kind, "Min");
  if (moved) HETC_RETURN_IF_ERROR(append_transpose(im, x, step_name(im, "moved", names[0], 320), perm, t.rank, &x));
  int32_t value = x, part;
  if (!strcmp(kind, "Min")) {
    HETC_RETURN_IF_ERROR(append_uniform_affine(im, x, step_name(im, "negated", names[1], 320), -1, 0, &value));
  } else if (!strcmp(kind, "L2") || !strcmp(kind, "SumSquare")) {
    HETC_RETURN_IF_ERROR(append_binary(im, HETC_OP_MULTIPLY, x, x, step_name(im, "squared", names[1], 320), &value));
  } else if (!strcmp(kind, "L1")) {
    HETC_RETURN_IF_ERROR(append_unary(im, HETC_OP_RELU, x, step_name(im, "positive", names[1], 320), &value));
    HETC_RETURN_IF_ERROR(append_uniform_affine(im, x, step_name(im, "flipped", names[2], 320), -1, 0, &part));
    HETC_RETURN_IF_ERROR(append_unary(im, HETC_OP_RELU, part, step_name(im, "negative", names[3], 320), &part));
    HETC_RETURN_IF_ERROR(append_binary(im, HETC_OP_ADD, value, part, step_name(im, "abs", names[4], 320), &value));
  } else if (!strcmp(kind, "LogSumExp")) {
    /* x - max, the max broadcast over the run: [kept, count] - [kept, 1]. */
    const int64_t runs[2] = {kept, count}, one_each[2] = {kept, 1};
    int32_t rows, largest;
    HETC_RETURN_IF_ERROR(append_reshape(im, x, step_name(im, "runs", names[1], 320), 2, runs, &rows));
    HETC_RETURN_IF_ERROR(
        append_run_reduction(im, rows, kept, count, 1, step_name(im, "max", names[2], 320), &largest));
    HETC_RETURN_IF_ERROR(append_reshape(im, largest, step_name(im, "max_column", names[3], 320), 2, one_each, &largest));
    HETC_RETURN_IF_ERROR(
        append_uniform_affine(im, largest, step_name(im, "minus_max", names[4], 320), -1, 0, &part));
    HETC_RETURN_IF_ERROR(append_binary(im, HETC_OP_ADD, rows, part, step_name(im, "shifted", names[5], 320), &value));
    HETC_RETURN_IF_ERROR(append_unary(im, HETC_OP_EXP, value, step_name(im, "exp", names[6], 320), &value));
    x = largest;
  }
  HETC_RETURN_IF_ERROR(append_run_reduction(im, value, kept, count, is_max, step_name(im, "runs_reduced", names[7], 320), &value));
  const double n = (double)count;
  if (!strcmp(kind, "Min")) {
    HETC_RETURN_IF_ERROR(append_uniform_affine(im, value, step_name(im, "min", names[1], 320), -1, 0, &value));
  } else if (!strcmp(kind, "Sum") || !strcmp(kind, "SumSquare") || !strcmp(kind, "L1")) {
    HETC_RETURN_IF_ERROR(append_uniform_affine(im, value, step_name(im, "sum", names[1], 320), n, 0, &value));
  } else if (!strcmp(kind, "L2") || !strncmp(kind, "LogSum", 6)) {
    HETC_RETURN_IF_ERROR(append_unary(im, HETC_OP_LOG, value, step_name(im, "log", names[1], 320), &value));
    if (!strcmp(kind, "L2")) {
      HETC_RETURN_IF_ERROR(append_uniform_affine(im, value, step_name(im, "half_log", names[2], 320), 0.5,
                                                 0.5 * log(n), &value));
      HETC_RETURN_IF_ERROR(append_unary(im, HETC_OP_EXP, value, step_name(im, "norm", names[3], 320), &value));
    } else {
      HETC_RETURN_IF_ERROR(append_uniform_affine(im, value, step_name(im, "log_sum", names[2], 320), 1, log(n), &value));
      if (!strcmp(kind, "LogSumExp")) {
        const int64_t column[4] = {kept, 1, 1, 1};
        HETC_RETURN_IF_ERROR(append_reshape(im, x, step_name(im, "max_back", names[3], 320), 4, column, &x));
        HETC_RETURN_IF_ERROR(append_binary(im, HETC_OP_ADD, value, x, step_name(im, "plus_max", names[4], 320), &value));
      }
    }
  }
  HETC_RETURN_IF_ERROR(append_reshape(im, value, im->node->output[0], rank, dims, &value));
  return define_output(im, value);
}

/* GlobalMaxPool: a max_pool2d whose window is the whole plane. */
static hetc_status_t translate_global_max_pool(hetc_onnx_importer_t *im) {
  int32_t x;
  HETC_RETURN_IF_ERROR(activation_input(im, 0, &x));
  HETC_RETURN_IF_ERROR(need_rank(im, x, 4, "4-d inputs"));
  const hetc_plugin_tensor_t *t = type_of(im, x);
  if (t->shape[2] > 4096 || t->shape[3] > 4096) return BAD("a plane above 4096 x 4096 is not supported");
  hetc_node_attrs_t a = hetc_node_default_attrs(HETC_OP_MAX_POOL2D);
  a.kernel[0] = (int32_t)t->shape[2];
  a.kernel[1] = (int32_t)t->shape[3];
  int32_t node;
  HETC_RETURN_IF_ERROR(append(im, HETC_OP_MAX_POOL2D, &x, 1, &a, &node));
  return define_output(im, im->graph->nodes[node].output);
}

static hetc_status_t append_pick_along(hetc_onnx_importer_t *im, int32_t x, int32_t axis, const int64_t *indices,
                                       int64_t count, const char *hint, int32_t *out_value);

/* Concat of constants and computed values (ViT's class token before its
 * patches): the computed ones concatenated, a pick along the axis that
 * puts each in its place and zeros where the constants go (a NaN or
 * infinity in the computed values spreads into those zeros), and the
 * constants added there (per element, 0 elsewhere). */
static hetc_status_t translate_concat_with_constants(hetc_onnx_importer_t *im, int64_t axis) {
  const int32_t count = (int32_t)im->node->n_input;
  int32_t computed[64], num_computed = 0;
  const onnx_value_t *v[64];
  for (int32_t k = 0; k < count; ++k) {
    const char *name = input_name(im, k);
    if (!name) return BAD("input %d is missing", (int)k);
    v[k] = hetc_onnx_lookup(im, name);
    if (v[k]->kind == ONNX_VALUE_ACTIVATION) computed[num_computed++] = v[k]->value;
  }
  hetc_plugin_tensor_t t = *type_of(im, computed[0]);
  HETC_RETURN_IF_ERROR(hetc_onnx_normalise_axis(&axis, t.rank));
  int64_t total = 0;
  for (int32_t k = 0; k < count; ++k) {
    const int32_t rank = v[k]->kind == ONNX_VALUE_CONST ? v[k]->constant.rank : type_of(im, v[k]->value)->rank;
    if (rank != t.rank) return BAD("input %d has rank %d, input 0's value %d", (int)k, (int)rank, (int)t.rank);
    for (int32_t d = 0; d < t.rank; ++d) {
      const int64_t extent =
          v[k]->kind == ONNX_VALUE_CONST ? v[k]->constant.dims[d] : type_of(im, v[k]->value)->shape[d];
      if (d == axis) total += extent;
      else if (extent != t.shape[d])
        return BAD("input %d has extent %lld in dim %d, the others %lld", (int)k, (long long)extent, (int)d,
                   (long long)t.shape[d]);
    }
  }
  char names[2][320];
  int32_t y = computed[0];
  if (num_computed > 1) {
    hetc_node_attrs_t a = hetc_node_default_attrs(HETC_OP_CONCAT);
    a.axis = (int32_t)axis;
    int32_t node;
    HETC_RETURN_IF_ERROR(hetc_onnx_append_node(im, HETC_OP_CONCAT, step_name(im, "computed", names[0], 320), computed,
                                               num_computed, &a, &node));
    y = im->graph->nodes[node].output;
  }
  t.shape[axis] = total;
  const int64_t elements = hetc_tensor_element_count(&t);
  if (elements > HETC_MAX_TENSOR_ELEMENTS)
    return BAD("the result would hold more than %lld values (api/limits.md)", (long long)HETC_MAX_TENSOR_ELEMENTS);
  int64_t *places = malloc(sizeof(int64_t) * (size_t)total);
  float *constants = calloc((size_t)elements, sizeof(float));
  if (!places || !constants) {
    free(places), free(constants);
    return out_of_memory();
  }
  int64_t before = 1, after = 1;
  for (int32_t d = 0; d < axis; ++d) before *= t.shape[d];
  for (int32_t d = (int32_t)axis + 1; d < t.rank; ++d) after *= t.shape[d];
  int64_t at = 0, from = 0;
  for (int32_t k = 0; k < count; ++k) {
    const int is_const = v[k]->kind == ONNX_VALUE_CONST;
    const int64_t extent = is_const ? v[k]->constant.dims[axis] : type_of(im, v[k]->value)->shape[axis];
    for (int64_t e = 0; e < extent; ++e) places[at + e] = is_const ? -1 : from + e;
    if (is_const)
      for (int64_t b = 0; b < before; ++b)
        for (int64_t e = 0; e < extent; ++e)
          for (int64_t a = 0; a < after; ++a)
            constants[(b * total + at + e) * after + a] =
                (float)hetc_onnx_const_get(&v[k]->constant, (b * extent + e) * after + a);
    else from += extent;
    at += extent;
  }
  hetc_status_t status = append_pick_along(im, y, (int32_t)axis, places, total, step_name(im, "placed", names[1], 320), &y);
  free(places);
  if (status) {
    free(constants);
    return status;
  }
  HETC_RETURN_IF_ERROR(append_per_element(im, y, NULL, constants, im->node->output[0], &y));
  return define_output(im, y);
}

static hetc_status_t translate_concat(hetc_onnx_importer_t *im) {
  const int32_t count = (int32_t)im->node->n_input;
  if (count < 1 || count > 64) return BAD("%d inputs; hetc concatenates 1 to 64", (int)count);
  int32_t inputs[64];
  int64_t axis = 0;
  HETC_RETURN_IF_ERROR(hetc_onnx_attr_int(im->node, "axis", 1, &axis));
  for (int32_t k = 0; k < count; ++k) {
    const char *name = input_name(im, k);
    if (name && hetc_onnx_lookup(im, name)->kind == ONNX_VALUE_CONST)
      return translate_concat_with_constants(im, axis);
  }
  for (int32_t k = 0; k < count; ++k) HETC_RETURN_IF_ERROR(activation_input(im, k, &inputs[k]));
  hetc_node_attrs_t a = hetc_node_default_attrs(HETC_OP_CONCAT);
  a.axis = (int32_t)axis;
  int32_t node;
  HETC_RETURN_IF_ERROR(append(im, HETC_OP_CONCAT, inputs, count, &a, &node));
  return define_output(im, im->graph->nodes[node].output);
}

/* x viewed as [product of dims before axis, product of the rest]. */
static void flattened_dims(const hetc_plugin_tensor_t *t, int64_t axis, int64_t dims[2]) {
  dims[0] = dims[1] = 1;
  for (int32_t d = 0; d < t->rank; ++d) dims[d >= axis] *= t->shape[d];
}

static hetc_status_t translate_flatten(hetc_onnx_importer_t *im) {
  int32_t x;
  HETC_RETURN_IF_ERROR(activation_input(im, 0, &x));
  const hetc_plugin_tensor_t *t = type_of(im, x);
  int64_t axis = 1;
  HETC_RETURN_IF_ERROR(hetc_onnx_attr_int(im->node, "axis", 1, &axis));
  if (axis < 0) axis += t->rank;
  if (axis < 0 || axis > t->rank) return BAD("attribute 'axis' is outside rank %d", (int)t->rank);
  int32_t value;
  if (axis == 1) {
    HETC_RETURN_IF_ERROR(append_unary(im, HETC_OP_FLATTEN, x, im->node->output[0], &value));
    return define_output(im, value);
  }
  int64_t dims[2];
  flattened_dims(t, axis, dims);
  HETC_RETURN_IF_ERROR(append_reshape(im, x, im->node->output[0], 2, dims, &value));
  return define_output(im, value);
}

static hetc_status_t translate_reshape(hetc_onnx_importer_t *im) {
  int32_t x;
  const hetc_onnx_const_t *shape;
  HETC_RETURN_IF_ERROR(activation_input(im, 0, &x));
  HETC_RETURN_IF_ERROR(const_input(im, 1, 1, &shape));
  const hetc_plugin_tensor_t *t = type_of(im, x);
  int64_t dims[HETC_ONNX_MAX_RANK];
  int32_t rank = 0;
  HETC_RETURN_IF_ERROR(hetc_onnx_reshape_dims(im->node, t->rank, t->shape, hetc_tensor_element_count(t), shape, dims, &rank));
  int32_t value;
  HETC_RETURN_IF_ERROR(append_reshape(im, x, im->node->output[0], rank, dims, &value));
  return define_output(im, value);
}

/* Softmax and LogSoftmax. */
static hetc_status_t translate_softmax(hetc_onnx_importer_t *im) {
  const hetc_op_t op = !strcmp(im->node->op_type, "Softmax") ? HETC_OP_SOFTMAX : HETC_OP_LOG_SOFTMAX;
  int32_t x;
  HETC_RETURN_IF_ERROR(activation_input(im, 0, &x));
  const hetc_plugin_tensor_t t = *type_of(im, x);
  /* Before opset 13, (Log)Softmax normalises over every dim from `axis` on
   * (default 1) as one; from 13, over `axis` alone (default -1). */
  const int coerced = im->opset < 13;
  int64_t axis = 0;
  HETC_RETURN_IF_ERROR(hetc_onnx_attr_int(im->node, "axis", coerced ? 1 : -1, &axis));
  if (axis < 0) axis += t.rank;
  if (axis < 0 || axis >= t.rank) return BAD("attribute 'axis' is outside rank %d", (int)t.rank);
  hetc_node_attrs_t a = hetc_node_default_attrs(op);
  int64_t trailing = 1;
  for (int32_t d = (int32_t)axis + 1; d < t.rank; ++d) trailing *= t.shape[d];
  if (!coerced || trailing == 1) {
    a.axis = (int32_t)axis;
    int32_t node;
    HETC_RETURN_IF_ERROR(append(im, op, &x, 1, &a, &node));
    return define_output(im, im->graph->nodes[node].output);
  }
  int64_t dims[2];
  flattened_dims(&t, axis, dims);
  char hint[300];
  snprintf(hint, sizeof(hint), "%s.rows", im->node->output[0]);
  int32_t rows, node;
  HETC_RETURN_IF_ERROR(append_reshape(im, x, hint, 2, dims, &rows));
  snprintf(hint, sizeof(hint), "%s.%s", im->node->output[0], hetc_op_name(op));
  a.axis = 1;
  HETC_RETURN_IF_ERROR(hetc_onnx_append_node(im, op, hint, &rows, 1, &a, &node));
  int32_t value;
  HETC_RETURN_IF_ERROR(append_reshape(im, im->graph->nodes[node].output, im->node->output[0], t.rank, t.shape, &value));
  return define_output(im, value);
}

static hetc_status_t translate_transpose(hetc_onnx_importer_t *im) {
  int32_t x, value;
  HETC_RETURN_IF_ERROR(activation_input(im, 0, &x));
  const int32_t rank = type_of(im, x)->rank;
  int64_t perm[HETC_ONNX_MAX_RANK];
  int32_t count = -1;
  HETC_RETURN_IF_ERROR(hetc_onnx_attr_ints(im->node, "perm", HETC_ONNX_MAX_RANK, perm, &count));
  if (count < 0) /* reverse the dims */
    for (count = 0; count < rank; ++count) perm[count] = rank - 1 - count;
  if (count != rank) return BAD("attribute 'perm' has %d entries for rank %d", (int)count, (int)rank);
  HETC_RETURN_IF_ERROR(append_transpose(im, x, im->node->output[0], perm, rank, &value));
  return define_output(im, value);
}

/* DepthToSpace and SpaceToDepth: a 6-d reshape, a transpose, a reshape
 * back to 4-d (ONNX's own definitions of the two ops). */
static hetc_status_t translate_depth_to_space(hetc_onnx_importer_t *im) {
  const int to_space = !strcmp(im->node->op_type, "DepthToSpace");
  int32_t x;
  HETC_RETURN_IF_ERROR(activation_input(im, 0, &x));
  HETC_RETURN_IF_ERROR(need_rank(im, x, 4, "4-d inputs"));
  const hetc_plugin_tensor_t t = *type_of(im, x);
  int64_t block = 0;
  char mode[16];
  HETC_RETURN_IF_ERROR(hetc_onnx_attr_int(im->node, "blocksize", 0, &block));
  HETC_RETURN_IF_ERROR(hetc_onnx_attr_string(im->node, "mode", "DCR", mode, sizeof(mode)));
  const int64_t n = t.shape[0], c = t.shape[1], h = t.shape[2], w = t.shape[3], b = block;
  if (b < 1 || b > 4096) return BAD("attribute 'blocksize' must be a positive block size");
  const int crd = !strcmp(mode, "CRD");
  if (!crd && strcmp(mode, "DCR") != 0) return BAD("attribute 'mode': '%s' is not DCR or CRD", mode);
  int64_t split[6], perm[6], joined[4];
  if (to_space) {
    if (c % (b * b)) return BAD("%lld channels do not divide into blocks of %lld x %lld", (long long)c, (long long)b,
                               (long long)b);
    const int64_t dcr_split[6] = {n, b, b, c / (b * b), h, w}, dcr_perm[6] = {0, 3, 4, 1, 5, 2};
    const int64_t crd_split[6] = {n, c / (b * b), b, b, h, w}, crd_perm[6] = {0, 1, 4, 2, 5, 3};
    memcpy(split, crd ? crd_split : dcr_split, sizeof(split));
    memcpy(perm, crd ? crd_perm : dcr_perm, sizeof(perm));
    const int64_t out[4] = {n, c / (b * b), h * b, w * b};
    memcpy(joined, out, sizeof(joined));
  } else {
    if (h % b || w % b)
      return BAD("a %lld x %lld plane does not divide into blocks of %lld", (long long)h, (long long)w, (long long)b);
    /* Before opset 28 SpaceToDepth has no mode: it is DCR's. */
    const int64_t s2d_split[6] = {n, c, h / b, b, w / b, b}, dcr_perm[6] = {0, 3, 5, 1, 2, 4},
                  crd_perm[6] = {0, 1, 3, 5, 2, 4};
    memcpy(split, s2d_split, sizeof(split));
    memcpy(perm, crd ? crd_perm : dcr_perm, sizeof(perm));
    const int64_t out[4] = {n, c * b * b, h / b, w / b};
    memcpy(joined, out, sizeof(joined));
  }
  char names[2][320];
  int32_t value;
  HETC_RETURN_IF_ERROR(append_reshape(im, x, step_name(im, "blocks", names[0], 320), 6, split, &value));
  HETC_RETURN_IF_ERROR(append_transpose(im, value, step_name(im, "moved", names[1], 320), perm, 6, &value));
  HETC_RETURN_IF_ERROR(append_reshape(im, value, im->node->output[0], 4, joined, &value));
  return define_output(im, value);
}

/* ---- resampling along H and W: Pad and Resize ------------------------------ */

/* The linear map out[j] = sum over i of matrix[j * in + i] * x[i] along
 * `axis` (2: H, 3: W) of 4-d x: a dense node over x's rows, or over the
 * rows of x with H and W swapped. Pad's and Resize's matrices are mostly
 * zeros, so the dense node spends an input row's length of multiply-adds on
 * each output element; the sums are exact for finite inputs (a NaN or an
 * infinity in a row spreads along its output row). matrix is taken, also
 * on failure. */
static hetc_status_t append_axis_map(hetc_onnx_importer_t *im, int32_t x, int32_t axis, float *matrix,
                                     int64_t out_extent, const char *hint, int32_t *out_value) {
  static const int64_t swap_hw[4] = {0, 1, 3, 2};
  const hetc_plugin_tensor_t t = *type_of(im, x);
  const char *dim = axis == 3 ? "w" : "h";
  const int64_t in_extent = t.shape[axis];
  const int64_t lead[4] = {t.shape[0], t.shape[1], t.shape[axis == 3 ? 2 : 3], out_extent};
  const int64_t rows[2] = {lead[0] * lead[1] * lead[2], in_extent};
  char names[4][320], step[32];
  int32_t value = x;
  hetc_status_t status = NULL;
  if (axis == 2) status = append_transpose(im, value, step_name(im, "h_last", names[0], 320), swap_hw, 4, &value);
  snprintf(step, sizeof(step), "%s_rows", dim);
  if (!status) status = append_reshape(im, value, step_name(im, step, names[1], 320), 2, rows, &value);
  snprintf(step, sizeof(step), "%s_mapped", dim);
  if (!status) status = append_dense(im, value, step_name(im, step, names[2], 320), matrix, out_extent, NULL, &value);
  else free(matrix);
  if (!status)
    status = append_reshape(im, value, axis == 3 ? hint : step_name(im, "h_mapped_4d", names[3], 320), 4, lead, &value);
  if (!status && axis == 2) status = append_transpose(im, value, hint, swap_hw, 4, &value);
  if (!status) *out_value = value;
  return status;
}

/* Maps along H then W (each when its matrix is not NULL; both taken), the
 * last step named `hint`. */
static hetc_status_t append_plane_map(hetc_onnx_importer_t *im, int32_t x, float *h_matrix, int64_t h_out,
                                      float *w_matrix, int64_t w_out, const char *hint, int32_t *out_value) {
  char name[320];
  hetc_status_t status = NULL;
  int32_t value = x;
  if (h_matrix)
    status = append_axis_map(im, value, 2, h_matrix, h_out, w_matrix ? step_name(im, "h_done", name, 320) : hint,
                             &value);
  if (w_matrix && !status) status = append_axis_map(im, value, 3, w_matrix, w_out, hint, &value);
  else free(w_matrix);
  if (!status) *out_value = value;
  return status;
}

/* A zeroed [out, in] matrix for append_axis_map, refused above 2^24
 * entries: the dense node's weight, and its work per row, grow with it. */
#define MAX_MAP_ENTRIES (INT64_C(1) << 24)
static hetc_status_t new_map_matrix(const hetc_onnx_importer_t *im, int64_t out, int64_t in, float **matrix) {
  if (out * in > MAX_MAP_ENTRIES)
    return BAD("%s from %lld to %lld along one axis is not supported (its %lld x %lld resampling matrix exceeds "
               "%lld entries)", im->node->op_type, (long long)in, (long long)out, (long long)out, (long long)in,
               (long long)MAX_MAP_ENTRIES);
  *matrix = calloc((size_t)(out * in), sizeof(float));
  return *matrix ? NULL : out_of_memory();
}

/* The one-hot matrix that pads a dim of n by `begin` and `end` in reflect
 * or edge mode; NULL when both are 0. */
static hetc_status_t pad_matrix(const hetc_onnx_importer_t *im, int64_t n, int64_t begin, int64_t end, int reflect,
                                float **out_matrix) {
  *out_matrix = NULL;
  if (!begin && !end) return NULL;
  const int64_t out = n + begin + end;
  float *m;
  HETC_RETURN_IF_ERROR(new_map_matrix(im, out, n, &m));
  for (int64_t j = 0; j < out; ++j) {
    int64_t from = j - begin;
    if (reflect) from = from < 0 ? -from : from >= n ? 2 * (n - 1) - from : from;
    else from = from < 0 ? 0 : from >= n ? n - 1 : from;
    m[j * n + from] = 1.0f;
  }
  *out_matrix = m;
  return NULL;
}

/* Pad over H and W of a 4-d value. Constant mode: a depthwise 1x1
 * convolution of weight 1 whose padding is the pad, and whose bias is the
 * pad value (the input shifted by minus the value first, when it is not
 * 0). Reflect and edge modes: one-hot maps along H and W
 * (append_axis_map). */
static hetc_status_t append_constant_pad(hetc_onnx_importer_t *im, int32_t x, const int64_t pads[8], float value,
                                         const char *hint, int32_t *out_value);

/* Pad over H and W (pads of N and C are 0), the last step named `hint`. */
static hetc_status_t append_hw_pad(hetc_onnx_importer_t *im, int32_t x, const int64_t pads[8], int reflect, int edge,
                                   float value, const char *hint, int32_t *out_value) {
  const hetc_plugin_tensor_t t = *type_of(im, x);
  if (!reflect && !edge) return append_constant_pad(im, x, pads, value, hint, out_value);
  for (int d = 2; d < 4; ++d)
    if (reflect && (pads[d] >= t.shape[d] || pads[4 + d] >= t.shape[d]))
      return BAD("reflect pads of %lld and %lld along dim %d must be less than its extent %lld", (long long)pads[d],
                 (long long)pads[4 + d], d, (long long)t.shape[d]);
  float *h, *w;
  HETC_RETURN_IF_ERROR(pad_matrix(im, t.shape[2], pads[2], pads[6], reflect, &h));
  hetc_status_t status = pad_matrix(im, t.shape[3], pads[3], pads[7], reflect, &w);
  if (status) {
    free(h);
    return status;
  }
  return append_plane_map(im, x, h, t.shape[2] + pads[2] + pads[6], w, t.shape[3] + pads[3] + pads[7], hint,
                          out_value);
}

static hetc_status_t translate_pad(hetc_onnx_importer_t *im) {
  int32_t x;
  HETC_RETURN_IF_ERROR(activation_input(im, 0, &x));
  HETC_RETURN_IF_ERROR(need_rank(im, x, 4, "4-d inputs (padding H and W)"));
  char mode[32];
  HETC_RETURN_IF_ERROR(hetc_onnx_attr_string(im->node, "mode", "constant", mode, sizeof(mode)));
  const int reflect = !strcmp(mode, "reflect"), edge = !strcmp(mode, "edge");
  if (!reflect && !edge && strcmp(mode, "constant") != 0)
    return BAD("Pad mode '%s' is not supported (hetc imports constant, reflect and edge)", mode);
  int64_t pads[2 * HETC_ONNX_MAX_RANK] = {0}, listed[2 * HETC_ONNX_MAX_RANK];
  int32_t count = -1;
  float value = 0;
  if (im->opset < 11) {
    HETC_RETURN_IF_ERROR(hetc_onnx_attr_ints(im->node, "pads", 2 * HETC_ONNX_MAX_RANK, listed, &count));
    HETC_RETURN_IF_ERROR(hetc_onnx_attr_float(im->node, "value", 0, &value));
  } else {
    const hetc_onnx_const_t *c;
    HETC_RETURN_IF_ERROR(const_input(im, 1, 1, &c));
    if (c->count > 2 * HETC_ONNX_MAX_RANK) return BAD("input 1 (pads) holds %lld values", (long long)c->count);
    count = (int32_t)c->count;
    for (int32_t k = 0; k < count; ++k) listed[k] = hetc_onnx_const_get_int(c, k);
    HETC_RETURN_IF_ERROR(const_input(im, 2, 0, &c));
    if (c && c->count != 1) return BAD("input 2 (constant_value) must hold one value");
    if (c) value = (float)hetc_onnx_const_get(c, 0);
  }
  /* Without axes the pads are [every dim's begin..., every dim's end...];
   * with axes (opset 18), the same for the axes listed. */
  int32_t axes[HETC_ONNX_MAX_RANK] = {0, 1, 2, 3}, num_axes = 4;
  const hetc_onnx_const_t *axes_input = NULL;
  if (im->opset >= 18) HETC_RETURN_IF_ERROR(const_input(im, 3, 0, &axes_input));
  if (axes_input) {
    if (axes_input->count > 4) return BAD("input 3 (axes) lists more axes than the input has");
    num_axes = (int32_t)axes_input->count;
    for (int32_t k = 0; k < num_axes; ++k) {
      const int64_t axis = hetc_onnx_const_get_int(axes_input, k);
      if (axis < -4 || axis > 3) return BAD("input 3 (axes): axis %lld is outside rank 4", (long long)axis);
      axes[k] = (int32_t)(axis < 0 ? axis + 4 : axis);
    }
  }
  if (count != 2 * num_axes) return BAD("the pads hold %d values for %d axes", (int)count, (int)num_axes);
  for (int32_t k = 0; k < num_axes; ++k) pads[axes[k]] = listed[k], pads[4 + axes[k]] = listed[num_axes + k];
  int32_t padded_dims[4], num_padded = 0;
  for (int32_t k = 0; k < 8; ++k)
    if (pads[k] < 0 || pads[k] > 4096) return BAD("a pad of %lld is not supported yet (hetc pads by 0 to 4096)",
                                                 (long long)pads[k]);
  for (int32_t d = 0; d < 4; ++d)
    if (pads[d] || pads[4 + d]) padded_dims[num_padded++] = d;
  if (num_padded == 0) return define_output(im, x); /* torch's Swin pads by 0 where its windows fit */
  int32_t value_out;
  if (!pads[0] && !pads[1] && !pads[4] && !pads[5]) {
    HETC_RETURN_IF_ERROR(append_hw_pad(im, x, pads, reflect, edge, value, im->node->output[0], &value_out));
    return define_output(im, value_out);
  }
  /* N or C padded (Swin pads H and W of its [N, H, W, C] values): the
   * padded dims transposed to H and W, padded there, and back. */
  if (num_padded > 2) return BAD("Pad of more than two dims is not supported yet (hetc pads H and W)");
  int64_t perm[4], inverse[4], moved[8];
  int32_t next = 0;
  for (int32_t d = 0; d < 4; ++d)
    if (!pads[d] && !pads[4 + d]) perm[next++] = d;
  for (int32_t k = 0; k < num_padded; ++k) perm[next++] = padded_dims[k];
  for (int32_t d = 0; d < 4; ++d) {
    inverse[perm[d]] = d;
    moved[d] = pads[perm[d]], moved[4 + d] = pads[4 + perm[d]];
  }
  char names[2][320];
  HETC_RETURN_IF_ERROR(append_transpose(im, x, step_name(im, "padded_dims_last", names[0], 320), perm, 4, &value_out));
  HETC_RETURN_IF_ERROR(
      append_hw_pad(im, value_out, moved, reflect, edge, value, step_name(im, "padded", names[1], 320), &value_out));
  HETC_RETURN_IF_ERROR(append_transpose(im, value_out, im->node->output[0], inverse, 4, &value_out));
  return define_output(im, value_out);
}

/* A depthwise 1x1 conv over 4-d x by `weight` plus `bias` (0: none) in
 * every channel, padded by `pads` (hetc's top, left, bottom, right): inside,
 * weight * x + bias; around, bias alone. */
static hetc_status_t append_uniform_conv(hetc_onnx_importer_t *im, int32_t x, const int32_t padding[4], float weight,
                                         float bias, const char *hint, int32_t *out_value) {
  const int64_t channels = type_of(im, x)->shape[1];
  hetc_node_attrs_t a = hetc_node_default_attrs(HETC_OP_CONV2D);
  a.channels = channels;
  a.groups = (int32_t)channels;
  a.kernel[0] = a.kernel[1] = 1;
  memcpy(a.padding, padding, sizeof(a.padding));
  a.has_bias = bias != 0;
  float *weights = malloc(sizeof(float) * (size_t)channels), *biases = a.has_bias ? malloc(sizeof(float) * (size_t)channels) : NULL;
  if (!weights || (a.has_bias && !biases)) {
    free(weights), free(biases);
    return out_of_memory();
  }
  for (int64_t c = 0; c < channels; ++c) {
    weights[c] = weight;
    if (biases) biases[c] = bias;
  }
  return append_conv(im, x, hint, &a, weights, channels, biases, biases ? channels : 0, out_value);
}

/* x padded with `value` (pads: begin of each of 4 dims, then end). x is
 * padded with zeros, and the value added around it from a second padded
 * plane that is exactly 0 inside: shifting x by the value and back would
 * cost x its digits when the value is far larger. That plane is a plane of
 * ones (relu6 keeps x's infinities out of the product by 0) padded by
 * weight -value and bias value. An infinite value is the largest float
 * added twice, which overflows to it. */
static hetc_status_t append_constant_pad(hetc_onnx_importer_t *im, int32_t x, const int64_t pads[8], float value,
                                         const char *hint, int32_t *out_value) {
  char names[5][320];
  const int32_t padding[4] = {(int32_t)pads[2], (int32_t)pads[3], (int32_t)pads[6], (int32_t)pads[7]};
  int32_t padded, ones, border;
  HETC_RETURN_IF_ERROR(
      append_uniform_conv(im, x, padding, 1, 0, value == 0 ? hint : step_name(im, "zero_padded", names[0], 320), &padded));
  if (value == 0) {
    *out_value = padded;
    return NULL;
  }
  const float around = isinf(value) ? copysignf(FLT_MAX, value) : value;
  HETC_RETURN_IF_ERROR(append_unary(im, HETC_OP_RELU6, x, step_name(im, "bounded", names[1], 320), &ones));
  HETC_RETURN_IF_ERROR(append_uniform_affine(im, ones, step_name(im, "ones", names[2], 320), 0, 1, &ones));
  HETC_RETURN_IF_ERROR(append_uniform_conv(im, ones, padding, -around, around, step_name(im, "border", names[3], 320),
                                           &border));
  int32_t sum;
  HETC_RETURN_IF_ERROR(append_binary(im, HETC_OP_ADD, padded, border,
                                     isinf(value) ? step_name(im, "finite", names[4], 320) : hint, &sum));
  if (isinf(value)) HETC_RETURN_IF_ERROR(append_binary(im, HETC_OP_ADD, sum, border, hint, &sum));
  *out_value = sum;
  return NULL;
}

/* x along `axis` (2 or 3 of a 4-d value) with times - 1 elements of
 * `filler` (a value of x's shape) after each of its elements: x and the
 * filler reshaped with a 1 inserted after `axis`, concatenated along it (x
 * first, then the filler's copies), reshaped back with that dim
 * multiplied. With x as its own filler, each element is repeated in place
 * (nearest upsampling); with zeros, stride - 1 zeros follow each
 * (ConvTranspose). */
static hetc_status_t append_interleave(hetc_onnx_importer_t *im, int32_t x, int32_t filler, int32_t axis,
                                       int64_t times, const char *hint, int32_t *out_value) {
  if (times == 1) {
    *out_value = x;
    return NULL;
  }
  const hetc_plugin_tensor_t t = *type_of(im, x);
  int64_t split[HETC_PLUGIN_MAX_RANK], joined[HETC_PLUGIN_MAX_RANK];
  int32_t rank = 0;
  for (int32_t d = 0; d < t.rank; ++d) {
    split[rank++] = t.shape[d];
    if (d == axis) split[rank++] = 1;
    joined[d] = t.shape[d] * (d == axis ? times : 1);
  }
  const char *dim = axis == 3 ? "w" : "h";
  char names[3][320], step[32];
  int32_t x_split, filler_split, parts[64];
  snprintf(step, sizeof(step), "%s_split", dim);
  HETC_RETURN_IF_ERROR(append_reshape(im, x, step_name(im, step, names[0], 320), rank, split, &x_split));
  filler_split = x_split;
  snprintf(step, sizeof(step), "%s_filler_split", dim);
  if (filler != x)
    HETC_RETURN_IF_ERROR(append_reshape(im, filler, step_name(im, step, names[1], 320), rank, split, &filler_split));
  parts[0] = x_split;
  for (int64_t k = 1; k < times; ++k) parts[k] = filler_split;
  hetc_node_attrs_t a = hetc_node_default_attrs(HETC_OP_CONCAT);
  a.axis = axis + 1;
  int32_t node;
  snprintf(step, sizeof(step), "%s_interleaved", dim);
  HETC_RETURN_IF_ERROR(hetc_onnx_append_node(im, HETC_OP_CONCAT, step_name(im, step, names[2], 320), parts,
                                             (int32_t)times, &a, &node));
  return append_reshape(im, im->graph->nodes[node].output, hint, t.rank, joined, out_value);
}

/* ConvTranspose as the convolution it is the gradient of: the input with
 * stride - 1 zeros inserted after each element (append_interleave),
 * padded by dilation * (kernel - 1) minus the pads (output_padding added
 * at the end, the zeros inserted after the last element taken off), and
 * convolved at stride 1 with the kernel flipped and its two channel dims
 * swapped within each group. Correct, but the convolution multiplies the
 * inserted zeros too: stride^2 times the arithmetic of a native kernel. */
static hetc_status_t translate_conv_transpose(hetc_onnx_importer_t *im) {
  int32_t x;
  const hetc_onnx_const_t *w, *b;
  HETC_RETURN_IF_ERROR(activation_input(im, 0, &x));
  HETC_RETURN_IF_ERROR(need_rank(im, x, 4, "4-d inputs (2-d convolutions)"));
  HETC_RETURN_IF_ERROR(const_input(im, 1, 1, &w));
  HETC_RETURN_IF_ERROR(const_input(im, 2, 0, &b));
  const hetc_plugin_tensor_t t = *type_of(im, x);
  if (w->rank != 4) return BAD("input 1 (the weight) has rank %d, not 4", (int)w->rank);
  int64_t group = 1, values[4];
  int32_t count;
  HETC_RETURN_IF_ERROR(hetc_onnx_attr_int(im->node, "group", 1, &group));
  const int64_t c_in = t.shape[1], kh = w->dims[2], kw = w->dims[3];
  if (group < 1 || c_in % group || w->dims[0] != c_in)
    return BAD("the weight's %lld input channels and group %lld do not fit an input of %lld channels",
               (long long)w->dims[0], (long long)group, (long long)c_in);
  const int64_t c_out = w->dims[1] * group, in_per_group = c_in / group, out_per_group = w->dims[1];
  if (b && b->count != c_out) return BAD("input 2 (the bias) holds %lld values for %lld channels", (long long)b->count,
                                         (long long)c_out);
  int64_t strides[2] = {1, 1}, dilations[2] = {1, 1}, pads[4] = {0, 0, 0, 0}, output_padding[2] = {0, 0};
  HETC_RETURN_IF_ERROR(hetc_onnx_attr_ints(im->node, "strides", 2, values, &count));
  if (count == 2) strides[0] = values[0], strides[1] = values[1];
  HETC_RETURN_IF_ERROR(hetc_onnx_attr_ints(im->node, "dilations", 2, values, &count));
  if (count == 2) dilations[0] = values[0], dilations[1] = values[1];
  HETC_RETURN_IF_ERROR(hetc_onnx_attr_ints(im->node, "pads", 4, values, &count));
  if (count == 4) memcpy(pads, values, sizeof(pads));
  HETC_RETURN_IF_ERROR(hetc_onnx_attr_ints(im->node, "output_padding", 2, values, &count));
  if (count == 2) output_padding[0] = values[0], output_padding[1] = values[1];
  for (int d = 0; d < 2; ++d)
    if (output_padding[d] < 0 || (output_padding[d] >= strides[d] && output_padding[d] >= dilations[d]))
      return BAD("attribute 'output_padding': %lld along dim %d must be 0 or more and less than the stride (%lld) or "
                 "the dilation (%lld)", (long long)output_padding[d], d + 2, (long long)strides[d],
                 (long long)dilations[d]);
  char auto_pad[32];
  HETC_RETURN_IF_ERROR(hetc_onnx_attr_string(im->node, "auto_pad", "NOTSET", auto_pad, sizeof(auto_pad)));
  if (strcmp(auto_pad, "NOTSET") != 0 || hetc_onnx_attr(im->node, "output_shape"))
    return BAD("ConvTranspose with auto_pad or output_shape is not supported yet (give pads)");
  int32_t padding[4];
  for (int d = 0; d < 2; ++d) {
    const int64_t k = d ? kw : kh;
    if (strides[d] < 1 || strides[d] > 64 || dilations[d] < 1 || dilations[d] > 64)
      return BAD("strides of 1 to 64 and dilations of 1 to 64 are supported");
    const int64_t span = dilations[d] * (k - 1);
    const int64_t begin = span - pads[d], end = span - pads[d + 2] + output_padding[d] - (strides[d] - 1);
    if (begin < 0 || end < 0 || begin > 4096 || end > 4096)
      return BAD("ConvTranspose pads larger than dilation * (kernel - 1) are not supported yet (the output would "
                 "need cropping)");
    padding[d] = (int32_t)begin, padding[d + 2] = (int32_t)end;
  }
  /* stride - 1 zeros (an affine map by 0) after each element, along W
   * then H. */
  int32_t value = x;
  for (int32_t axis = 3; axis >= 2; --axis) {
    if (strides[axis - 2] == 1) continue;
    char names[2][320], step[32];
    int32_t zeros;
    snprintf(step, sizeof(step), "%s_zeros", axis == 3 ? "w" : "h");
    HETC_RETURN_IF_ERROR(append_uniform_affine(im, value, step_name(im, step, names[0], 320), 0, 0, &zeros));
    snprintf(step, sizeof(step), "%s_inserted", axis == 3 ? "w" : "h");
    HETC_RETURN_IF_ERROR(append_interleave(im, value, zeros, axis, strides[axis - 2],
                                           step_name(im, step, names[1], 320), &value));
  }
  hetc_node_attrs_t a = hetc_node_default_attrs(HETC_OP_CONV2D);
  a.channels = c_out;
  a.groups = (int32_t)group;
  a.kernel[0] = (int32_t)kh, a.kernel[1] = (int32_t)kw;
  a.dilation[0] = (int32_t)dilations[0], a.dilation[1] = (int32_t)dilations[1];
  memcpy(a.padding, padding, sizeof(padding));
  a.has_bias = b != NULL;
  float *weight = malloc(sizeof(float) * (size_t)w->count), *bias = b ? float_values(b, 1.0) : NULL;
  if (!weight || (b && !bias)) {
    free(weight), free(bias);
    return out_of_memory();
  }
  /* conv weight [o][i][y][x] = transposed weight [g * in_per_group + i][oo][kh-1-y][kw-1-x], o = g * out_per_group + oo */
  for (int64_t o = 0; o < c_out; ++o)
    for (int64_t i = 0; i < in_per_group; ++i)
      for (int64_t y = 0; y < kh; ++y)
        for (int64_t xx = 0; xx < kw; ++xx) {
          const int64_t g = o / out_per_group, oo = o % out_per_group;
          const int64_t from = (((g * in_per_group + i) * out_per_group + oo) * kh + (kh - 1 - y)) * kw + (kw - 1 - xx);
          weight[((o * in_per_group + i) * kh + y) * kw + xx] = (float)hetc_onnx_const_get(w, from);
        }
  HETC_RETURN_IF_ERROR(append_conv(im, value, im->node->output[0], &a, weight, w->count, bias, b ? b->count : 0, &value));
  return define_output(im, value);
}

/* Upsample and Resize over H and W, in nearest and linear modes, with every
 * coordinate_transformation_mode but tf_crop_and_resize: one resize node
 * (its parameters as ONNX names them). */
static hetc_status_t translate_resize(hetc_onnx_importer_t *im) {
  const int is_upsample = !strcmp(im->node->op_type, "Upsample");
  int32_t x;
  HETC_RETURN_IF_ERROR(activation_input(im, 0, &x));
  HETC_RETURN_IF_ERROR(need_rank(im, x, 4, "4-d inputs"));
  const hetc_plugin_tensor_t t = *type_of(im, x);
  char mode[32], coordinates[48], rounding[48], aspect[32];
  HETC_RETURN_IF_ERROR(hetc_onnx_attr_string(im->node, "mode", "nearest", mode, sizeof(mode)));
  const int modern = !is_upsample && im->opset >= 11;
  HETC_RETURN_IF_ERROR(hetc_onnx_attr_string(im->node, "coordinate_transformation_mode",
                                             modern ? "half_pixel" : "asymmetric", coordinates, sizeof(coordinates)));
  HETC_RETURN_IF_ERROR(hetc_onnx_attr_string(im->node, "nearest_mode", modern ? "round_prefer_floor" : "floor",
                                             rounding, sizeof(rounding)));
  HETC_RETURN_IF_ERROR(
      hetc_onnx_attr_string(im->node, "keep_aspect_ratio_policy", "stretch", aspect, sizeof(aspect)));
  int64_t antialias = 0;
  HETC_RETURN_IF_ERROR(hetc_onnx_attr_int(im->node, "antialias", 0, &antialias));
  const int linear = !strcmp(mode, "linear") || !strcmp(mode, "bilinear");
  if (!linear && strcmp(mode, "nearest") != 0)
    return BAD("%s mode '%s' is not supported (hetc imports nearest and linear)", im->node->op_type, mode);
  hetc_node_attrs_t a = hetc_node_default_attrs(HETC_OP_RESIZE);
  a.resize.mode = linear ? HETC_PLUGIN_RESIZE_LINEAR : HETC_PLUGIN_RESIZE_NEAREST;
  a.resize.coordinates = hetc_name_index(hetc_resize_coordinates_names, coordinates);
  if (a.resize.coordinates < 0) return BAD("coordinate_transformation_mode '%s' is not supported", coordinates);
  a.resize.rounding = linear ? 0 : hetc_name_index(hetc_resize_rounding_names, rounding);
  if (a.resize.rounding < 0) return BAD("nearest_mode '%s' is not supported", rounding);
  if (strcmp(aspect, "stretch") != 0) return BAD("keep_aspect_ratio_policy '%s' is not supported (hetc imports stretch)",
                                                 aspect);
  int64_t axes[4] = {0, 1, 2, 3};
  int32_t num_axes = -1;
  HETC_RETURN_IF_ERROR(hetc_onnx_attr_ints(im->node, "axes", 4, axes, &num_axes));
  if (num_axes < 0) num_axes = 4;
  for (int32_t k = 0; k < num_axes; ++k) {
    if (axes[k] < -4 || axes[k] > 3) return BAD("attribute 'axes': axis %lld is outside rank 4", (long long)axes[k]);
    if (axes[k] < 0) axes[k] += 4;
  }
  double scales[4] = {1, 1, 1, 1};
  int64_t sizes[4] = {0};
  int by_size = 0;
  const hetc_onnx_const_t *c = NULL;
  if (is_upsample && im->opset < 9) {
    const Onnx__AttributeProto *attr = hetc_onnx_attr(im->node, "scales");
    if (!attr || attr->n_floats != 4) return BAD("attribute 'scales' must hold 4 values");
    for (int k = 0; k < 4; ++k) scales[k] = attr->floats[k];
  } else {
    /* Upsample 9 and Resize 10: scales is input 1; Resize 11+: roi,
     * scales, sizes are inputs 1 to 3. */
    HETC_RETURN_IF_ERROR(const_input(im, modern ? 2 : 1, 0, &c));
    if (c && c->count && c->count != num_axes)
      return BAD("the scales hold %lld values for %d axes", (long long)c->count, (int)num_axes);
    for (int32_t k = 0; c && k < c->count; ++k) scales[axes[k]] = hetc_onnx_const_get(c, k);
    const hetc_onnx_const_t *size_input = NULL;
    if (modern) HETC_RETURN_IF_ERROR(const_input(im, 3, 0, &size_input));
    if (size_input && size_input->count != num_axes)
      return BAD("the sizes hold %lld values for %d axes", (long long)size_input->count, (int)num_axes);
    by_size = size_input != NULL;
    for (int k = 0; k < 4; ++k) sizes[k] = t.shape[k];
    for (int32_t k = 0; size_input && k < num_axes; ++k) sizes[axes[k]] = hetc_onnx_const_get_int(size_input, k);
    if ((!c || !c->count) && !size_input) return BAD("neither scales nor sizes is given");
  }
  int64_t out[4];
  for (int k = 0; k < 4; ++k) {
    const double scaled = floor((double)t.shape[k] * scales[k]);
    if (!by_size && !(scaled >= 1 && scaled <= (double)HETC_MAX_TENSOR_ELEMENTS))
      return BAD("scale %g of dim %d is not supported", scales[k], k);
    out[k] = by_size ? sizes[k] : (int64_t)scaled;
    if (by_size) scales[k] = (double)out[k] / (double)t.shape[k];
    if (k < 2 && out[k] != t.shape[k])
      return BAD("%s of dim %d (%lld to %lld) is not supported (hetc resizes H and W)", im->node->op_type, k,
                 (long long)t.shape[k], (long long)out[k]);
    if (k >= 2 && (out[k] < 1 || out[k] > 16384))
      return BAD("%s of dim %d to %lld is not supported (hetc resizes to 1 to 16384)", im->node->op_type, k,
                 (long long)out[k]);
  }
  if (antialias && (scales[2] < 1 || scales[3] < 1))
    return BAD("antialiased downscaling is not supported yet");
  if (out[2] == t.shape[2] && out[3] == t.shape[3] && scales[2] == 1.0 && scales[3] == 1.0) return define_output(im, x);
  for (int k = 0; k < 2; ++k) {
    a.resize_size[k] = out[2 + k];
    a.resize.scales[k] = scales[2 + k];
  }
  int32_t node;
  HETC_RETURN_IF_ERROR(hetc_onnx_append_node(im, HETC_OP_RESIZE, im->node->output[0], &x, 1, &a, &node));
  return define_output(im, im->graph->nodes[node].output);
}

/* LRN (across channels, ONNX's only kind): x / (bias + alpha / size * the
 * sum of x^2 over the size channels around each) ^ beta, as `multiply`
 * (x^2), a 1x1 `conv2d` whose [C, C] weight is alpha / size inside each
 * channel's window and whose bias is the LRN bias, `log`, an affine map by
 * -beta, `exp`, and `multiply` with x. The power goes through log and exp,
 * so it rounds differently from a pow(); the window sum costs C
 * multiply-adds an element where a native kernel would spend size. */
static hetc_status_t translate_lrn(hetc_onnx_importer_t *im) {
  int32_t x;
  HETC_RETURN_IF_ERROR(activation_input(im, 0, &x));
  HETC_RETURN_IF_ERROR(need_rank(im, x, 4, "4-d inputs"));
  const int64_t channels = type_of(im, x)->shape[1];
  int64_t size = 0;
  float alpha, beta, bias;
  HETC_RETURN_IF_ERROR(hetc_onnx_attr_int(im->node, "size", 0, &size));
  HETC_RETURN_IF_ERROR(hetc_onnx_attr_float(im->node, "alpha", 1e-4f, &alpha));
  HETC_RETURN_IF_ERROR(hetc_onnx_attr_float(im->node, "beta", 0.75f, &beta));
  HETC_RETURN_IF_ERROR(hetc_onnx_attr_float(im->node, "bias", 1.0f, &bias));
  if (size < 1 || size > 4096) return BAD("attribute 'size' must be a window of 1 to 4096 channels");
  if (channels * channels > MAX_MAP_ENTRIES)
    return BAD("LRN over %lld channels is not supported (its window sum's weight exceeds %lld entries)",
               (long long)channels, (long long)MAX_MAP_ENTRIES);
  hetc_node_attrs_t a = hetc_node_default_attrs(HETC_OP_CONV2D);
  a.channels = channels;
  a.kernel[0] = a.kernel[1] = 1;
  a.has_bias = 1;
  float *weight = calloc((size_t)(channels * channels), sizeof(float)), *shift = malloc(sizeof(float) * (size_t)channels);
  if (!weight || !shift) {
    free(weight), free(shift);
    return out_of_memory();
  }
  const int64_t before = (size - 1) / 2, after = size - 1 - before;
  for (int64_t o = 0; o < channels; ++o) {
    for (int64_t i = o - before; i <= o + after; ++i)
      if (i >= 0 && i < channels) weight[o * channels + i] = alpha / (float)size;
    shift[o] = bias;
  }
  char names[5][320];
  int32_t squared, value, node;
  hetc_status_t status =
      append_binary(im, HETC_OP_MULTIPLY, x, x, step_name(im, "squared", names[0], 320), &squared);
  if (!status) status = hetc_onnx_append_node(im, HETC_OP_CONV2D, step_name(im, "window_sum", names[1], 320),
                                              &squared, 1, &a, &node);
  if (!status) status = set_param(im, node, HETC_PARAM_WEIGHT, weight, channels * channels), weight = NULL;
  if (!status) status = set_param(im, node, HETC_PARAM_BIAS, shift, channels), shift = NULL;
  free(weight);
  free(shift);
  HETC_RETURN_IF_ERROR(status);
  value = im->graph->nodes[node].output;
  HETC_RETURN_IF_ERROR(append_unary(im, HETC_OP_LOG, value, step_name(im, "log", names[2], 320), &value));
  HETC_RETURN_IF_ERROR(append_uniform_affine(im, value, step_name(im, "power", names[3], 320), -beta, 0, &value));
  HETC_RETURN_IF_ERROR(append_unary(im, HETC_OP_EXP, value, step_name(im, "factor", names[4], 320), &value));
  HETC_RETURN_IF_ERROR(append_binary(im, HETC_OP_MULTIPLY, x, value, im->node->output[0], &value));
  return define_output(im, value);
}

/* ---- Slice and Split of computed values ------------------------------------ */

/* x's elements from `begin` by `step` (`extent` of them) along axis 1, 2 or
 * 3 of a 4-d x, named `hint`: channels by a 1x1 conv2d whose weight picks
 * one input channel per output channel, H and W by a plane map's one-hot
 * matrix. Exact for finite values (x times 1 plus zeros); a NaN or
 * infinity in a channel or row left out spreads into the kept ones, as in
 * every plane map. */
static hetc_status_t append_pick_indices(hetc_onnx_importer_t *im, int32_t x, int32_t axis, const int64_t *indices,
                                         int64_t extent, const char *hint, int32_t *out_value) {
  const int64_t in_extent = type_of(im, x)->shape[axis];
  if (extent > HETC_ONNX_MAX_CONST_ELEMENTS / in_extent)
    return BAD("picking %lld of the %lld elements of an axis takes a matrix of more than %lld values (api/limits.md)",
               (long long)extent, (long long)in_extent, (long long)HETC_ONNX_MAX_CONST_ELEMENTS);
  float *pick = calloc((size_t)(extent * in_extent), sizeof(float));
  if (!pick) return out_of_memory();
  for (int64_t o = 0; o < extent; ++o)
    if (indices[o] >= 0) pick[o * in_extent + indices[o]] = 1.0f; /* -1: a row of zeros */
  if (axis != 1) return append_axis_map(im, x, axis, pick, extent, hint, out_value);
  hetc_node_attrs_t a = hetc_node_default_attrs(HETC_OP_CONV2D);
  a.channels = extent;
  a.kernel[0] = a.kernel[1] = 1;
  return append_conv(im, x, hint, &a, pick, extent * in_extent, NULL, 0, out_value);
}

/* The elements from `begin` by `step` (extent of them). */
static hetc_status_t append_pick(hetc_onnx_importer_t *im, int32_t x, int32_t axis, int64_t begin, int64_t step,
                                 int64_t extent, const char *hint, int32_t *out_value) {
  if (extent < 1) return BAD("the slice of axis %d is empty (hetc's values have no zero extent)", (int)axis);
  int64_t *indices = malloc(sizeof(int64_t) * (size_t)extent);
  if (!indices) return out_of_memory();
  for (int64_t o = 0; o < extent; ++o) indices[o] = begin + o * step;
  hetc_status_t status = append_pick_indices(im, x, axis, indices, extent, hint, out_value);
  free(indices);
  return status;
}

/* The part of 4-d x from begin[d] by step[d] (dims[d] of them) on every
 * axis, named `hint`: a pick per axis that changes, the batch axis never. */
static hetc_status_t append_slice(hetc_onnx_importer_t *im, int32_t x, const int64_t begin[4], const int64_t step[4],
                                  const int64_t dims[4], const char *hint, int32_t *out_value) {
  int32_t last = 0;
  for (int32_t d = 0; d < 4; ++d)
    if (dims[d] != type_of(im, x)->shape[d] || begin[d] != 0 || step[d] != 1) last = d + 1;
  if (last == 0) { /* the whole value, as Identity */
    *out_value = x;
    return NULL;
  }
  if (dims[0] != type_of(im, x)->shape[0] || begin[0] != 0 || step[0] != 1)
    return BAD("%s of the batch axis (0) is not supported yet", im->node->op_type);
  char names[3][320];
  for (int32_t d = 1; d + 1 < last; ++d) {
    if (dims[d] == type_of(im, x)->shape[d] && begin[d] == 0 && step[d] == 1) continue;
    char step_hint[32];
    snprintf(step_hint, sizeof(step_hint), "axis%d", (int)d);
    HETC_RETURN_IF_ERROR(append_pick(im, x, d, begin[d], step[d], dims[d],
                                     step_name(im, step_hint, names[d - 1], 320), &x));
  }
  return append_pick(im, x, last - 1, begin[last - 1], step[last - 1], dims[last - 1], hint, out_value);
}

/* x (any rank) with axis `axis` replaced by the elements `indices` of it
 * (count of them, repeats allowed), named `hint`: x viewed as [before,
 * extent, after, 1] (the dims before and after the axis merged), the
 * channel pick of append_pick_indices, and the view undone. A pick from
 * an axis of extent 1 copies exactly. */
static hetc_status_t append_pick_along(hetc_onnx_importer_t *im, int32_t x, int32_t axis, const int64_t *indices,
                                       int64_t count, const char *hint, int32_t *out_value) {
  hetc_plugin_tensor_t t = *type_of(im, x);
  int64_t view[4] = {1, t.shape[axis], 1, 1};
  for (int32_t e = 0; e < t.rank; ++e)
    if (e != axis) view[e < axis ? 0 : 2] *= t.shape[e];
  char names[2][320], hints[2][32];
  snprintf(hints[0], sizeof(hints[0]), "axis%d_view", (int)axis);
  snprintf(hints[1], sizeof(hints[1]), "axis%d_pick", (int)axis);
  HETC_RETURN_IF_ERROR(append_reshape(im, x, step_name(im, hints[0], names[0], 320), 4, view, &x));
  HETC_RETURN_IF_ERROR(append_pick_indices(im, x, 1, indices, count, step_name(im, hints[1], names[1], 320), &x));
  t.shape[axis] = count;
  return append_reshape(im, x, hint, t.rank, t.shape, out_value);
}

/* append_pick_along for each axis d with a pick_of(d, k) for each of the
 * `extents[d]` elements it keeps (an axis whose extent and picks are its
 * own is left alone); the last pick is named `hint`. */
typedef int64_t (*pick_of_t)(const void *context, int32_t axis, int64_t k);
static hetc_status_t append_picks(hetc_onnx_importer_t *im, int32_t x, const int64_t *extents, pick_of_t pick_of,
                                  const void *context, const char *hint, int32_t *out_value) {
  const hetc_plugin_tensor_t t = *type_of(im, x);
  int32_t last = -1;
  for (int32_t d = 0; d < t.rank; ++d) {
    int same = extents[d] == t.shape[d];
    for (int64_t k = 0; same && k < extents[d]; ++k) same = pick_of(context, d, k) == k;
    if (!same) last = d;
  }
  *out_value = x;
  for (int32_t d = 0; d <= last; ++d) {
    int same = extents[d] == t.shape[d];
    for (int64_t k = 0; same && k < extents[d]; ++k) same = pick_of(context, d, k) == k;
    if (same) continue;
    if (extents[d] < 1) return BAD("axis %d would be empty (hetc's values have no zero extent)", (int)d);
    int64_t *indices = malloc(sizeof(int64_t) * (size_t)extents[d]);
    if (!indices) return out_of_memory();
    for (int64_t k = 0; k < extents[d]; ++k) indices[k] = pick_of(context, d, k);
    char name[320], step_hint[32];
    snprintf(step_hint, sizeof(step_hint), "axis%d", (int)d);
    hetc_status_t status = append_pick_along(im, *out_value, d, indices, extents[d],
                                             d == last ? hint : step_name(im, step_hint, name, 320), out_value);
    free(indices);
    HETC_RETURN_IF_ERROR(status);
  }
  return NULL;
}

typedef struct slice_picks_t {
  const int64_t *begin, *step;
} slice_picks_t;

static int64_t slice_pick(const void *context, int32_t axis, int64_t k) {
  const slice_picks_t *s = context;
  return s->begin[axis] + k * s->step[axis];
}

/* The slice of x (any rank) from begin by step to dims: append_slice for a
 * 4-d x whose batch stays whole (H and W by plane maps); else a channel
 * pick of a view per axis that changes (append_picks). */
static hetc_status_t append_slice_any_rank(hetc_onnx_importer_t *im, int32_t x, const int64_t *begin,
                                           const int64_t *step, const int64_t *dims, const char *hint,
                                           int32_t *out_value) {
  const hetc_plugin_tensor_t *t = type_of(im, x);
  if (t->rank == 4 && dims[0] == t->shape[0] && begin[0] == 0 && step[0] == 1)
    return append_slice(im, x, begin, step, dims, hint, out_value);
  const slice_picks_t picks = {begin, step};
  return append_picks(im, x, dims, slice_pick, &picks, hint, out_value);
}

/* Slice of a computed value: constant starts, ends, axes and steps (any
 * step, negative too). */
static hetc_status_t translate_slice(hetc_onnx_importer_t *im) {
  int32_t x, value;
  HETC_RETURN_IF_ERROR(activation_input(im, 0, &x));
  const hetc_onnx_const_t *ranges[5] = {NULL};
  for (int32_t k = 1; k < 5 && im->opset >= 10; ++k) HETC_RETURN_IF_ERROR(const_input(im, k, k < 3, &ranges[k]));
  const hetc_plugin_tensor_t t = *type_of(im, x);
  int64_t begin[HETC_PLUGIN_MAX_RANK], step[HETC_PLUGIN_MAX_RANK], dims[HETC_PLUGIN_MAX_RANK];
  HETC_RETURN_IF_ERROR(hetc_onnx_slice_ranges(im->node, im->opset, ranges, 5, t.rank, t.shape, begin, step, dims));
  HETC_RETURN_IF_ERROR(append_slice_any_rank(im, x, begin, step, dims, im->node->output[0], &value));
  return define_output(im, value);
}

/* Split of a computed value along `axis` into consecutive parts: the
 * sizes from input 1 (opset 13 on) or the attribute `split` (before), else
 * num_outputs parts (opset 18) or one per output, equal but the last
 * smaller when the extent does not divide. */
static hetc_status_t translate_split(hetc_onnx_importer_t *im) {
  int32_t x;
  HETC_RETURN_IF_ERROR(activation_input(im, 0, &x));
  const hetc_plugin_tensor_t t = *type_of(im, x);
  int64_t axis = 0;
  HETC_RETURN_IF_ERROR(hetc_onnx_attr_int(im->node, "axis", 0, &axis));
  HETC_RETURN_IF_ERROR(hetc_onnx_normalise_axis(&axis, t.rank));
  const int32_t parts = (int32_t)im->node->n_output;
  if (parts > 64) return BAD("a Split into %d outputs is not supported (at most 64)", (int)parts);
  int64_t sizes[64];
  int32_t count = -1;
  const hetc_onnx_const_t *split = NULL;
  if (im->opset >= 13) HETC_RETURN_IF_ERROR(const_input(im, 1, 0, &split));
  if (split) {
    if (split->rank > 1 || split->count != parts)
      return BAD("input 1 (split) holds %lld sizes for %d outputs", (long long)split->count, (int)parts);
    for (int32_t k = 0; k < parts; ++k) sizes[k] = hetc_onnx_const_get_int(split, k);
    count = parts;
  } else if (im->opset < 13) {
    HETC_RETURN_IF_ERROR(hetc_onnx_attr_ints(im->node, "split", 64, sizes, &count));
    if (count >= 0 && count != parts)
      return BAD("attribute 'split' holds %d sizes for %d outputs", (int)count, (int)parts);
  }
  const int64_t extent = t.shape[axis];
  if (count < 0) {
    int64_t num_outputs = parts;
    if (im->opset >= 18) HETC_RETURN_IF_ERROR(hetc_onnx_attr_int(im->node, "num_outputs", parts, &num_outputs));
    if (num_outputs != parts) return BAD("num_outputs is %lld for %d outputs", (long long)num_outputs, (int)parts);
    const int64_t each = (extent + parts - 1) / parts;
    for (int32_t k = 0; k < parts; ++k) sizes[k] = k + 1 < parts ? each : extent - each * (parts - 1);
  }
  int64_t total = 0;
  for (int32_t k = 0; k < parts; ++k) {
    if (sizes[k] < 1) return BAD("part %d has size %lld (hetc's values have no zero extent)", (int)k, (long long)sizes[k]);
    if (sizes[k] > extent)
      return BAD("part %d has size %lld, and axis %lld has extent %lld", (int)k, (long long)sizes[k], (long long)axis,
                 (long long)extent);
    total += sizes[k];
  }
  if (total != extent)
    return BAD("the parts add up to %lld, and axis %lld has extent %lld", (long long)total, (long long)axis,
               (long long)extent);
  int64_t begin[HETC_PLUGIN_MAX_RANK] = {0}, step[HETC_PLUGIN_MAX_RANK], dims[HETC_PLUGIN_MAX_RANK];
  for (int32_t d = 0; d < t.rank; ++d) step[d] = 1;
  for (int32_t k = 0; k < parts; ++k) {
    memcpy(dims, t.shape, sizeof(int64_t) * (size_t)t.rank);
    dims[axis] = sizes[k];
    int32_t value;
    HETC_RETURN_IF_ERROR(append_slice_any_rank(im, x, begin, step, dims, im->node->output[k], &value));
    HETC_RETURN_IF_ERROR(define_output_at(im, (size_t)k, value));
    begin[axis] += sizes[k];
  }
  return NULL;
}

/* Gather of a computed value by constant indices along one axis (Swin's
 * and ViT's picks of a window or a token): a pick of the indices along the
 * axis (append_pick_along), and a reshape to the gather's shape, the axis
 * replaced by the indices' dims. */
static hetc_status_t translate_gather(hetc_onnx_importer_t *im) {
  int32_t x, value;
  const hetc_onnx_const_t *indices;
  HETC_RETURN_IF_ERROR(activation_input(im, 0, &x));
  HETC_RETURN_IF_ERROR(const_input(im, 1, 1, &indices));
  const hetc_plugin_tensor_t t = *type_of(im, x);
  int64_t axis = 0;
  HETC_RETURN_IF_ERROR(hetc_onnx_attr_int(im->node, "axis", 0, &axis));
  HETC_RETURN_IF_ERROR(hetc_onnx_normalise_axis(&axis, t.rank));
  const int32_t rank = t.rank - 1 + indices->rank;
  if (rank < 1 || rank > HETC_PLUGIN_MAX_RANK)
    return BAD("a Gather to rank %d is not supported (hetc's activations have rank 1 to %d)", (int)rank,
               HETC_PLUGIN_MAX_RANK);
  if (indices->count < 1) return BAD("input 1 (indices) holds no index (hetc's values have no zero extent)");
  const int64_t extent = t.shape[axis];
  int64_t dims[HETC_PLUGIN_MAX_RANK];
  int32_t r = 0;
  for (int32_t d = 0; d < axis; ++d) dims[r++] = t.shape[d];
  for (int32_t d = 0; d < indices->rank; ++d) dims[r++] = indices->dims[d];
  for (int32_t d = (int32_t)axis + 1; d < t.rank; ++d) dims[r++] = t.shape[d];
  int64_t *picked = malloc(sizeof(int64_t) * (size_t)indices->count);
  if (!picked) return out_of_memory();
  int identity = indices->count == extent;
  for (int64_t k = 0; k < indices->count; ++k) {
    const int64_t index = hetc_onnx_const_get_int(indices, k);
    picked[k] = index < 0 ? index + extent : index;
    if (picked[k] < 0 || picked[k] >= extent) {
      free(picked);
      return BAD("index %lld is outside axis %lld of extent %lld", (long long)index, (long long)axis,
                 (long long)extent);
    }
    identity &= picked[k] == k;
  }
  char name[320];
  hetc_status_t status = NULL;
  value = x;
  if (!identity)
    status = append_pick_along(im, x, (int32_t)axis, picked, indices->count, step_name(im, "picked", name, 320),
                               &value);
  free(picked);
  if (!status) status = append_reshape(im, value, im->node->output[0], rank, dims, &value);
  return status ? status : define_output(im, value);
}

typedef struct repeat_picks_t {
  const int64_t *in_dims;
} repeat_picks_t;

/* Expand's pick: the one element of an axis of extent 1, else itself;
 * Tile's: the element it repeats. */
static int64_t repeat_pick(const void *context, int32_t axis, int64_t k) {
  const repeat_picks_t *r = context;
  return k % r->in_dims[axis];
}

/* Expand and Tile of a computed value (shape and repeats constant): the
 * value reshaped to the result's rank (Expand: ones in front), then per
 * axis that grows a pick of each element it repeats (append_picks); an
 * axis of extent 1 is copied exactly, other axes of Tile as a pick does. */
static hetc_status_t translate_repeat(hetc_onnx_importer_t *im) {
  int32_t x, value;
  const hetc_onnx_const_t *c;
  HETC_RETURN_IF_ERROR(activation_input(im, 0, &x));
  HETC_RETURN_IF_ERROR(const_input(im, 1, 1, &c));
  const hetc_plugin_tensor_t t = *type_of(im, x);
  int64_t in_dims[HETC_PLUGIN_MAX_RANK], out_dims[HETC_PLUGIN_MAX_RANK];
  int32_t rank = 0;
  if (!strcmp(im->node->op_type, "Expand")) {
    HETC_RETURN_IF_ERROR(hetc_onnx_broadcast_dims(t.shape, t.rank, c, HETC_PLUGIN_MAX_RANK, out_dims, &rank));
  } else {
    HETC_RETURN_IF_ERROR(hetc_onnx_tile_dims(t.shape, t.rank, c, out_dims));
    rank = t.rank;
  }
  for (int64_t d = 0, total = 1; d < rank; ++d) {
    if (out_dims[d] > HETC_MAX_TENSOR_ELEMENTS / total)
      return BAD("the result would hold more than %lld values (api/limits.md)", (long long)HETC_MAX_TENSOR_ELEMENTS);
    total *= out_dims[d];
  }
  HETC_RETURN_IF_ERROR(append_ranked(im, x, rank, &value));
  memcpy(in_dims, type_of(im, value)->shape, sizeof(int64_t) * (size_t)rank);
  const repeat_picks_t picks = {in_dims};
  HETC_RETURN_IF_ERROR(append_picks(im, value, out_dims, repeat_pick, &picks, im->node->output[0], &value));
  return define_output(im, value);
}

/* MatMul of two computed values (attention's scores and its weighted
 * values): numpy's matmul as one matmul node. A 1-d operand gains a dim of
 * 1 (in front for A, behind for B) that the result drops; both operands
 * are reshaped to one rank, and an operand whose batch dims are 1 where
 * the other's are not is expanded by picks (as Expand is). A MatMul by a
 * constant B is a dense node (translate_gemm). */
static hetc_status_t translate_matmul(hetc_onnx_importer_t *im) {
  const char *b_name = input_name(im, 1);
  if (!b_name || hetc_onnx_lookup(im, b_name)->kind != ONNX_VALUE_ACTIVATION) return translate_gemm(im);
  int32_t operand[2];
  HETC_RETURN_IF_ERROR(activation_input(im, 0, &operand[0]));
  HETC_RETURN_IF_ERROR(activation_input(im, 1, &operand[1]));
  hetc_plugin_tensor_t t[2] = {*type_of(im, operand[0]), *type_of(im, operand[1])};
  if (t[0].rank == 1 && t[1].rank == 1) return BAD("a MatMul of two 1-d values (a scalar) is not supported yet");
  int64_t dims[2][HETC_PLUGIN_MAX_RANK];
  int32_t rank = 2;
  for (int k = 0; k < 2; ++k) rank = t[k].rank > rank ? t[k].rank : rank;
  /* Each operand's dims at the common rank: ones in front, and a 1-d A as
   * [1, K], a 1-d B as [K, 1]. */
  for (int k = 0; k < 2; ++k) {
    const int32_t pad = rank - (t[k].rank == 1 ? 2 : t[k].rank);
    for (int32_t d = 0; d < rank; ++d) dims[k][d] = 1;
    if (t[k].rank == 1) dims[k][rank - 1 - k] = t[k].shape[0];
    else
      for (int32_t d = 0; d < t[k].rank; ++d) dims[k][pad + d] = t[k].shape[d];
  }
  if (dims[0][rank - 1] != dims[1][rank - 2])
    return BAD("A's last dim (%lld) is not B's next to last (%lld)", (long long)dims[0][rank - 1],
               (long long)dims[1][rank - 2]);
  /* Zeroed: gcc -O3 cannot see that only d + 2 < rank is read. */
  int64_t batch[HETC_PLUGIN_MAX_RANK] = {0};
  for (int32_t d = 0; d + 2 < rank; ++d) {
    if (dims[0][d] != dims[1][d] && dims[0][d] != 1 && dims[1][d] != 1)
      return BAD("batch dim %d is %lld in A and %lld in B, which do not broadcast", (int)d, (long long)dims[0][d],
                 (long long)dims[1][d]);
    batch[d] = dims[0][d] > dims[1][d] ? dims[0][d] : dims[1][d];
  }
  char name[320];
  for (int k = 0; k < 2; ++k) {
    const char *which = k ? "b" : "a";
    char step[16];
    if (t[k].rank != rank) {
      snprintf(step, sizeof(step), "%s_ranked", which);
      HETC_RETURN_IF_ERROR(append_reshape(im, operand[k], step_name(im, step, name, 320), rank, dims[k], &operand[k]));
    }
    int64_t expanded[HETC_PLUGIN_MAX_RANK], total = 1;
    int grows = 0;
    for (int32_t d = 0; d < rank; ++d) {
      expanded[d] = d + 2 < rank ? batch[d] : dims[k][d];
      grows |= expanded[d] != dims[k][d];
      if (expanded[d] > HETC_MAX_TENSOR_ELEMENTS / total)
        return BAD("operand %d broadcast holds more than %lld values (api/limits.md)", k,
                   (long long)HETC_MAX_TENSOR_ELEMENTS);
      total *= expanded[d];
    }
    if (!grows) continue;
    snprintf(step, sizeof(step), "%s_expanded", which);
    const repeat_picks_t picks = {dims[k]};
    HETC_RETURN_IF_ERROR(
        append_picks(im, operand[k], expanded, repeat_pick, &picks, step_name(im, step, name, 320), &operand[k]));
  }
  int64_t out_dims[HETC_PLUGIN_MAX_RANK], total = 1;
  for (int32_t d = 0; d < rank; ++d) {
    out_dims[d] = d + 2 < rank ? batch[d] : d == rank - 2 ? dims[0][d] : dims[1][d];
    if (out_dims[d] > HETC_MAX_TENSOR_ELEMENTS / total)
      return BAD("the result would hold more than %lld values (api/limits.md)", (long long)HETC_MAX_TENSOR_ELEMENTS);
    total *= out_dims[d];
  }
  /* The result's own dims: a 1-d operand's added dim dropped. */
  int64_t result[HETC_PLUGIN_MAX_RANK];
  int32_t result_rank = 0;
  for (int32_t d = 0; d < rank; ++d)
    if (!((d == rank - 2 && t[0].rank == 1) || (d == rank - 1 && t[1].rank == 1))) result[result_rank++] = out_dims[d];
  const int reshaped = result_rank != rank;
  hetc_node_attrs_t a = hetc_node_default_attrs(HETC_OP_MATMUL);
  int32_t node, value;
  HETC_RETURN_IF_ERROR(hetc_onnx_append_node(
      im, HETC_OP_MATMUL, reshaped ? step_name(im, "matmul", name, 320) : im->node->output[0], operand, 2, &a, &node));
  value = im->graph->nodes[node].output;
  if (reshaped) HETC_RETURN_IF_ERROR(append_reshape(im, value, im->node->output[0], result_rank, result, &value));
  return define_output(im, value);
}

/* The letters of one Einsum term (spaces skipped) into out (at most
 * HETC_PLUGIN_MAX_RANK); NULL or a message. */
static hetc_status_t einsum_term(hetc_onnx_importer_t *im, const char *begin, const char *end, char *out,
                                 int32_t *out_count) {
  int32_t count = 0;
  for (const char *c = begin; c < end; ++c) {
    if (*c == ' ') continue;
    if (*c == '.') return BAD("an Einsum with an ellipsis ('...') is not supported yet");
    if (!((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z'))) return BAD("'%c' is not an Einsum letter", *c);
    if (memchr(out, *c, (size_t)count)) return BAD("letter '%c' appears twice in one term (a diagonal)", *c);
    if (count == HETC_PLUGIN_MAX_RANK) return BAD("an Einsum term has more than %d letters", HETC_PLUGIN_MAX_RANK);
    out[count++] = *c;
  }
  *out_count = count;
  return NULL;
}

/* Where letter c is in term[0..count), or -1. */
static int32_t letter_at(const char *term, int32_t count, char c) {
  const char *at = memchr(term, c, (size_t)count);
  return at ? (int32_t)(at - term) : -1;
}

/* x transposed by perm (when it moves anything), then reshaped to dims
 * (when they differ), steps named after `step`. */
static hetc_status_t append_arranged(hetc_onnx_importer_t *im, int32_t x, const int64_t *perm, int32_t rank,
                                     const int64_t *dims, int32_t dims_rank, const char *step, int32_t *out_value) {
  char names[2][320], name[48];
  int moves = 0;
  for (int32_t d = 0; d < rank; ++d) moves |= perm[d] != d;
  const hetc_plugin_tensor_t t = *type_of(im, x);
  int reshapes = dims_rank != rank;
  for (int32_t d = 0; !reshapes && d < rank; ++d) reshapes = dims[d] != t.shape[perm[d]];
  *out_value = x;
  if (moves) {
    snprintf(name, sizeof(name), "%s_transposed", step);
    HETC_RETURN_IF_ERROR(append_transpose(im, x, step_name(im, name, names[0], 320), perm, rank, out_value));
  }
  if (reshapes) {
    snprintf(name, sizeof(name), "%s_reshaped", step);
    HETC_RETURN_IF_ERROR(append_reshape(im, *out_value, step_name(im, name, names[1], 320), dims_rank, dims, out_value));
  }
  return NULL;
}

/* Einsum of two computed values whose equation is a batched matrix
 * product (MaxViT's attention: "BGHID,BGHJD->BGHIJ"): each letter of the
 * output is a batch letter (in both operands), an M letter (in the first
 * only) or an N letter (in the second only); the other letters, in both
 * operands, are summed. The operands are arranged as [batch, M, K] and
 * [batch, K, N], one matmul node multiplies them, and the product is
 * arranged as the output's letters. */
static hetc_status_t translate_einsum(hetc_onnx_importer_t *im) {
  char equation[256];
  HETC_RETURN_IF_ERROR(hetc_onnx_attr_string(im->node, "equation", "", equation, sizeof(equation)));
  if (im->node->n_input != 2) return BAD("an Einsum of %d operands is not supported yet (hetc imports products of two)",
                                         (int)im->node->n_input);
  int32_t operand[2];
  for (int k = 0; k < 2; ++k) {
    const char *name = input_name(im, k);
    if (name && hetc_onnx_lookup(im, name)->kind != ONNX_VALUE_ACTIVATION)
      return BAD("input %d ('%s') is a constant; an Einsum with a constant operand is not supported yet", k, name);
    HETC_RETURN_IF_ERROR(activation_input(im, k, &operand[k]));
  }
  const char *arrow = strstr(equation, "->");
  const char *inputs_end = arrow ? arrow : equation + strlen(equation);
  const char *comma = memchr(equation, ',', (size_t)(inputs_end - equation));
  if (!comma || memchr(comma + 1, ',', (size_t)(inputs_end - comma - 1)))
    return BAD("equation '%s' is not two terms", equation);
  char term[3][HETC_PLUGIN_MAX_RANK];
  int32_t count[3] = {0, 0, 0};
  HETC_RETURN_IF_ERROR(einsum_term(im, equation, comma, term[0], &count[0]));
  HETC_RETURN_IF_ERROR(einsum_term(im, comma + 1, inputs_end, term[1], &count[1]));
  if (arrow) {
    HETC_RETURN_IF_ERROR(einsum_term(im, arrow + 2, equation + strlen(equation), term[2], &count[2]));
  } else {
    /* Implicit output: the letters in one operand only, alphabetically. */
    for (char c = 'A'; c <= 'z'; ++c) {
      const int in_a = letter_at(term[0], count[0], c) >= 0, in_b = letter_at(term[1], count[1], c) >= 0;
      if (in_a != in_b && count[2] < HETC_PLUGIN_MAX_RANK) term[2][count[2]++] = c;
    }
  }
  hetc_plugin_tensor_t t[2] = {*type_of(im, operand[0]), *type_of(im, operand[1])};
  for (int k = 0; k < 2; ++k)
    if (t[k].rank != count[k])
      return BAD("term %d has %d letters for an input of rank %d", k, (int)count[k], (int)t[k].rank);
  /* Letters by role, in the output's order (K in the first operand's). */
  char batch[HETC_PLUGIN_MAX_RANK], rows[HETC_PLUGIN_MAX_RANK], columns[HETC_PLUGIN_MAX_RANK], summed[HETC_PLUGIN_MAX_RANK];
  int32_t nb = 0, nm = 0, nn = 0, nk = 0;
  int64_t extent[128] = {0}, size_b = 1, size_m = 1, size_n = 1, size_k = 1;
  for (int k = 0; k < 2; ++k)
    for (int32_t d = 0; d < count[k]; ++d) {
      const unsigned char c = (unsigned char)term[k][d];
      if (extent[c] && extent[c] != t[k].shape[d])
        return BAD("letter '%c' has extent %lld in one operand and %lld in the other", c, (long long)extent[c],
                   (long long)t[k].shape[d]);
      extent[c] = t[k].shape[d];
    }
  for (int32_t d = 0; d < count[2]; ++d) {
    const char c = term[2][d];
    const int in_a = letter_at(term[0], count[0], c) >= 0, in_b = letter_at(term[1], count[1], c) >= 0;
    if (!in_a && !in_b) return BAD("output letter '%c' is in neither operand", c);
    if (letter_at(term[2], d, c) >= 0) return BAD("letter '%c' appears twice in the output", c);
    if (in_a && in_b) batch[nb++] = c, size_b *= extent[(unsigned char)c];
    else if (in_a) rows[nm++] = c, size_m *= extent[(unsigned char)c];
    else columns[nn++] = c, size_n *= extent[(unsigned char)c];
  }
  for (int k = 0; k < 2; ++k)
    for (int32_t d = 0; d < count[k]; ++d) {
      const char c = term[k][d];
      if (letter_at(term[2], count[2], c) >= 0) continue;
      if (letter_at(term[1 - k], count[1 - k], c) < 0)
        return BAD("letter '%c' is summed over one operand only, which is not supported yet", c);
      if (k == 0) summed[nk++] = c, size_k *= extent[(unsigned char)c];
    }
  /* A as [batch, M, K], B as [batch, K, N]. */
  int64_t perm[HETC_PLUGIN_MAX_RANK];
  int32_t at = 0;
  const char *const order_a[3] = {batch, rows, summed}, *const order_b[3] = {batch, summed, columns};
  const int32_t sizes_a[3] = {nb, nm, nk}, sizes_b[3] = {nb, nk, nn};
  const int64_t dims_a[3] = {size_b, size_m, size_k}, dims_b[3] = {size_b, size_k, size_n};
  for (int g = 0; g < 3; ++g)
    for (int32_t j = 0; j < sizes_a[g]; ++j) perm[at++] = letter_at(term[0], count[0], order_a[g][j]);
  HETC_RETURN_IF_ERROR(append_arranged(im, operand[0], perm, count[0], dims_a, 3, "a", &operand[0]));
  at = 0;
  for (int g = 0; g < 3; ++g)
    for (int32_t j = 0; j < sizes_b[g]; ++j) perm[at++] = letter_at(term[1], count[1], order_b[g][j]);
  HETC_RETURN_IF_ERROR(append_arranged(im, operand[1], perm, count[1], dims_b, 3, "b", &operand[1]));
  if (size_b * size_m > HETC_MAX_TENSOR_ELEMENTS / size_n)
    return BAD("the result would hold more than %lld values (api/limits.md)", (long long)HETC_MAX_TENSOR_ELEMENTS);
  /* The product [batch, M, N] as the output's letters: its dims split,
   * then transposed into the output's order; the last step named after
   * the node's output. */
  if (count[2] == 0) return BAD("an Einsum to a scalar is not supported yet");
  char product[HETC_PLUGIN_MAX_RANK];
  int64_t split[HETC_PLUGIN_MAX_RANK];
  at = 0;
  const char *const order_out[3] = {batch, rows, columns};
  const int32_t sizes_out[3] = {nb, nm, nn};
  for (int g = 0; g < 3; ++g)
    for (int32_t j = 0; j < sizes_out[g]; ++j)
      product[at] = order_out[g][j], split[at++] = extent[(unsigned char)order_out[g][j]];
  const int splits = count[2] != 3 || split[0] != size_b || split[1] != size_m || split[2] != size_n;
  int moves = 0;
  for (int32_t d = 0; d < count[2]; ++d) {
    perm[d] = letter_at(product, count[2], term[2][d]);
    moves |= perm[d] != d;
  }
  hetc_node_attrs_t a = hetc_node_default_attrs(HETC_OP_MATMUL);
  char names[2][320];
  int32_t node, value;
  HETC_RETURN_IF_ERROR(hetc_onnx_append_node(
      im, HETC_OP_MATMUL, splits || moves ? step_name(im, "matmul", names[0], 320) : im->node->output[0], operand, 2,
      &a, &node));
  value = im->graph->nodes[node].output;
  if (splits)
    HETC_RETURN_IF_ERROR(append_reshape(im, value, moves ? step_name(im, "split", names[1], 320) : im->node->output[0],
                                        count[2], split, &value));
  if (moves) HETC_RETURN_IF_ERROR(append_transpose(im, value, im->node->output[0], perm, count[2], &value));
  return define_output(im, value);
}

/* Attention's GQA pick: each of the key/value heads serves `repeats`
 * consecutive query heads ([h0, h0, h1, h1, ...]), on axis 1 only. */
typedef struct head_picks_t {
  int64_t repeats;
} head_picks_t;

static int64_t head_pick(const void *context, int32_t axis, int64_t k) {
  return axis == 1 ? k / ((const head_picks_t *)context)->repeats : k;
}

/* What masks an Attention's scores before its softmax, besides a computed
 * mask: all constant. */
typedef struct attention_masking_t {
  const hetc_onnx_const_t *mask;    /* attn_mask, or NULL */
  const hetc_onnx_const_t *nonpad;  /* nonpad_kv_seqlen ([B] valid keys), or NULL */
  int causal;
  int64_t past;                     /* past_key's sequence length */
  int64_t left, right;              /* the sliding window's sides (-1: unbounded) */
  float masked;                     /* a masked key's bias: -FLT_MAX, or -inf where the bias is an output */
} attention_masking_t;

/* The attention bias as [B, H, S, L] floats (*out_bias, the caller frees
 * it; NULL when nothing masks): a float mask's values, and m->masked for
 * a masked key (-FLT_MAX gives a weight of 0 as -inf does, in a weights
 * file that stays finite): a float mask's -inf, a bool mask's False, a key
 * past the mask's last dim (it may stop short of L), after a query's
 * causal frontier or outside its window (both at the query's position
 * i + offset: offset is the past, or per batch nonpad - S), and at keys
 * past nonpad. The mask broadcasts from the right. A query whose
 * every key is masked gets a bias of 0 and a 0 in *out_keep ([B, H, S, L],
 * else 1; NULL when no row is), by which the caller zeroes its weights, as
 * the spec's fully masked rows are. */
static hetc_status_t attention_bias(hetc_onnx_importer_t *im, const attention_masking_t *m, const int64_t dims[4],
                                    float **out_bias, float **out_keep) {
  *out_bias = *out_keep = NULL;
  const hetc_onnx_const_t *mask = m->mask;
  if (!mask && !m->nonpad && !m->causal && m->left < 0 && m->right < 0) return NULL;
  if (mask && (mask->rank < 1 || mask->rank > 4))
    return BAD("input 3 (attn_mask) has rank %d; Attention takes rank 1 to 4", (int)mask->rank);
  if (m->nonpad && (m->nonpad->count != dims[0] || !m->nonpad->is_int))
    return BAD("input 6 (nonpad_kv_seqlen) must hold %lld integers, one per batch", (long long)dims[0]);
  int64_t mask_dims[4] = {1, 1, 1, 1};
  if (mask) {
    for (int32_t d = 0; d < mask->rank; ++d) mask_dims[4 - mask->rank + d] = mask->dims[d];
    for (int32_t d = 0; d < 4; ++d)
      if (d < 3 ? mask_dims[d] != 1 && mask_dims[d] != dims[d] : mask_dims[d] > dims[d])
        return BAD("input 3 (attn_mask) of dims %lld x %lld x %lld x %lld does not broadcast to the scores' %lld x "
                   "%lld x %lld x %lld",
                   (long long)mask_dims[0], (long long)mask_dims[1], (long long)mask_dims[2], (long long)mask_dims[3],
                   (long long)dims[0], (long long)dims[1], (long long)dims[2], (long long)dims[3]);
  }
  const int64_t count = dims[0] * dims[1] * dims[2] * dims[3];
  if (count > HETC_ONNX_MAX_CONST_ELEMENTS)
    return BAD("the attention bias would hold %lld values, more than %lld (api/limits.md)", (long long)count,
               (long long)HETC_ONNX_MAX_CONST_ELEMENTS);
  float *bias = malloc(sizeof(float) * (size_t)count), *keep = NULL;
  if (!bias) return out_of_memory();
  const int is_bool = mask && mask->is_int; /* bool tensors are read as integers */
  int64_t at = 0;
  for (int64_t b = 0; b < dims[0]; ++b) {
    const int64_t valid = m->nonpad ? hetc_onnx_const_get_int(m->nonpad, b) : dims[3];
    const int64_t offset = m->nonpad ? valid - dims[2] : m->past;
    for (int64_t h = 0; h < dims[1]; ++h)
      for (int64_t i = 0; i < dims[2]; ++i) {
        int reachable = 0;
        const int64_t row = at;
        for (int64_t j = 0; j < dims[3]; ++j, ++at) {
          float v = 0.0f;
          if (mask && j < mask_dims[3]) {
            const int64_t mb = mask_dims[0] > 1 ? b : 0, mh = mask_dims[1] > 1 ? h : 0, mi = mask_dims[2] > 1 ? i : 0;
            const double value = hetc_onnx_const_get(mask, ((mb * mask_dims[1] + mh) * mask_dims[2] + mi) * mask_dims[3] + j);
            v = is_bool ? (value != 0 ? 0.0f : -INFINITY) : (float)value;
          }
          const int64_t ahead = j - (i + offset); /* keys after the query's position */
          const int masked = v == -INFINITY || (mask && j >= mask_dims[3]) || (m->causal && ahead > 0) ||
                             (m->left >= 0 && -ahead > m->left) || (m->right >= 0 && ahead > m->right) || j >= valid;
          bias[row + j] = masked ? m->masked : v;
          reachable |= !masked;
        }
        if (reachable) continue;
        if (!keep) {
          keep = malloc(sizeof(float) * (size_t)count);
          if (!keep) {
            free(bias);
            return out_of_memory();
          }
          for (int64_t k = 0; k < count; ++k) keep[k] = 1.0f;
        }
        for (int64_t j = 0; j < dims[3]; ++j) bias[row + j] = 0.0f, keep[row + j] = 0.0f;
      }
  }
  *out_bias = bias;
  *out_keep = keep;
  return NULL;
}

/* Q, K or V of a 3-d Attention, [B, S, heads x size], as [B, heads, S,
 * size]; a 4-d one as it is. */
static hetc_status_t attention_heads(hetc_onnx_importer_t *im, int32_t x, int64_t heads, const char *which,
                                     int32_t *out_value) {
  const hetc_plugin_tensor_t t = *type_of(im, x);
  *out_value = x;
  if (t.rank == 4) return NULL;
  if (t.shape[2] % heads)
    return BAD("input %s's hidden size %lld is not a multiple of its %lld heads", which, (long long)t.shape[2],
               (long long)heads);
  const int64_t split[4] = {t.shape[0], t.shape[1], heads, t.shape[2] / heads}, perm[4] = {0, 2, 1, 3};
  char step[32], name[320];
  snprintf(step, sizeof(step), "%s_heads", which);
  HETC_RETURN_IF_ERROR(append_reshape(im, x, step_name(im, step, name, 320), 4, split, out_value));
  snprintf(step, sizeof(step), "%s_by_head", which);
  return append_transpose(im, *out_value, step_name(im, step, name, 320), perm, 4, out_value);
}

/* ONNX Attention (opset 23 on): softmax(Q K^T scale + bias) V per head, as
 * hetc's matmul, softmax and elementwise nodes: Q scaled (by the whole
 * scale, where the spec scales Q and K by its root each: the same product
 * but for rounding), K transposed, the cache (past_key, past_value)
 * concatenated in front of K and V (outputs present_key, present_value),
 * grouped-query heads repeated, softcap as softcap tanh(x / softcap), the
 * bias (attention_bias, or a computed float mask added) and the optional
 * fourth output at the stage qk_matmul_output_mode names. */
static hetc_status_t translate_attention(hetc_onnx_importer_t *im) {
  int32_t q, k, v;
  HETC_RETURN_IF_ERROR(activation_input(im, 0, &q));
  HETC_RETURN_IF_ERROR(activation_input(im, 1, &k));
  HETC_RETURN_IF_ERROR(activation_input(im, 2, &v));
  const int32_t rank = type_of(im, q)->rank;
  if ((rank != 3 && rank != 4) || type_of(im, k)->rank != rank || type_of(im, v)->rank != rank)
    return BAD("Q, K and V must all be 3-d or all 4-d (ranks %d, %d, %d)", (int)rank, (int)type_of(im, k)->rank,
               (int)type_of(im, v)->rank);
  int64_t q_heads = 0, kv_heads = 0, causal = 0, mode = 0, precision = 1, left = -1, right = -1;
  float scale = NAN, softcap = 0;
  HETC_RETURN_IF_ERROR(hetc_onnx_attr_int(im->node, "q_num_heads", 0, &q_heads));
  HETC_RETURN_IF_ERROR(hetc_onnx_attr_int(im->node, "kv_num_heads", 0, &kv_heads));
  HETC_RETURN_IF_ERROR(hetc_onnx_attr_int(im->node, "is_causal", 0, &causal));
  HETC_RETURN_IF_ERROR(hetc_onnx_attr_int(im->node, "qk_matmul_output_mode", 0, &mode));
  HETC_RETURN_IF_ERROR(hetc_onnx_attr_int(im->node, "softmax_precision", 1, &precision));
  HETC_RETURN_IF_ERROR(hetc_onnx_attr_int(im->node, "left_window_size", -1, &left));
  HETC_RETURN_IF_ERROR(hetc_onnx_attr_int(im->node, "right_window_size", -1, &right));
  HETC_RETURN_IF_ERROR(hetc_onnx_attr_float(im->node, "scale", NAN, &scale));
  HETC_RETURN_IF_ERROR(hetc_onnx_attr_float(im->node, "softcap", 0, &softcap));
  if (left < -1 || right < -1) return BAD("a window side of %lld is not -1 or more", (long long)(left < right ? left : right));
  /* Float or double: hetc's float softmax is within rounding of the latter
   * once its result is cast back to float; the 16-bit types would round
   * more than hetc does. */
  if (precision != 1 && precision != 11)
    return BAD("softmax_precision %lld is not supported (hetc computes the softmax in float)", (long long)precision);
  if (mode < 0 || mode > 3) return BAD("qk_matmul_output_mode %lld is not 0 to 3", (long long)mode);
  if (rank == 4 && (q_heads || kv_heads)) return BAD("q_num_heads and kv_num_heads are for 3-d inputs only");
  if (rank == 3 && (q_heads < 1 || kv_heads < 1))
    return BAD("3-d inputs need q_num_heads and kv_num_heads (each at least 1)");
  char names[8][320];
  HETC_RETURN_IF_ERROR(attention_heads(im, q, q_heads, "Q", &q));
  HETC_RETURN_IF_ERROR(attention_heads(im, k, kv_heads, "K", &k));
  HETC_RETURN_IF_ERROR(attention_heads(im, v, kv_heads, "V", &v));
  const hetc_plugin_tensor_t tq = *type_of(im, q), tk0 = *type_of(im, k), tv0 = *type_of(im, v);
  if (tk0.shape[0] != tq.shape[0] || tv0.shape[0] != tq.shape[0] || tk0.shape[1] != tv0.shape[1] ||
      tk0.shape[2] != tv0.shape[2] || tk0.shape[3] != tq.shape[3])
    return BAD("Q [%lld, %lld, %lld, %lld], K [%lld, %lld, %lld, %lld] and V [%lld, %lld, %lld, %lld] (batch, heads, "
               "sequence, head size) do not fit together",
               (long long)tq.shape[0], (long long)tq.shape[1], (long long)tq.shape[2], (long long)tq.shape[3],
               (long long)tk0.shape[0], (long long)tk0.shape[1], (long long)tk0.shape[2], (long long)tk0.shape[3],
               (long long)tv0.shape[0], (long long)tv0.shape[1], (long long)tv0.shape[2], (long long)tv0.shape[3]);
  if (tq.shape[1] % tk0.shape[1])
    return BAD("%lld query heads are not a multiple of %lld key/value heads", (long long)tq.shape[1],
               (long long)tk0.shape[1]);
  const int biased_output = mode == 2 && im->node->n_output > 3 && im->node->output[3][0];
  attention_masking_t masking = {NULL, NULL, causal != 0, 0, left, right, biased_output ? -INFINITY : -FLT_MAX};
  HETC_RETURN_IF_ERROR(const_input(im, 6, 0, &masking.nonpad));
  /* The cache: past_key and past_value in front of K and V. */
  if (input_name(im, 4) || input_name(im, 5)) {
    if (masking.nonpad) return BAD("input 6 (nonpad_kv_seqlen) and a past cache (inputs 4 and 5) exclude each other");
    int32_t cache[2][2];
    HETC_RETURN_IF_ERROR(activation_input(im, 4, &cache[0][0]));
    HETC_RETURN_IF_ERROR(activation_input(im, 5, &cache[1][0]));
    cache[0][1] = k, cache[1][1] = v;
    masking.past = type_of(im, cache[0][0])->shape[2];
    for (int c = 0; c < 2; ++c) {
      hetc_node_attrs_t a = hetc_node_default_attrs(HETC_OP_CONCAT);
      a.axis = 2;
      int32_t node;
      const char *hint = (size_t)(1 + c) < im->node->n_output && im->node->output[1 + c][0]
                             ? im->node->output[1 + c]
                             : step_name(im, c ? "present_value" : "present_key", names[c], 320);
      HETC_RETURN_IF_ERROR(hetc_onnx_append_node(im, HETC_OP_CONCAT, hint, cache[c], 2, &a, &node));
      *(c ? &v : &k) = im->graph->nodes[node].output;
    }
  }
  for (size_t c = 1; c < 3 && c < im->node->n_output; ++c)
    if (im->node->output[c][0]) HETC_RETURN_IF_ERROR(define_output_at(im, c, c == 1 ? k : v));
  /* Grouped-query heads: each key/value head repeated for its queries. */
  const int64_t repeats = tq.shape[1] / type_of(im, k)->shape[1];
  if (repeats > 1) {
    const head_picks_t picks = {repeats};
    for (int c = 0; c < 2; ++c) {
      int32_t *x = c ? &v : &k;
      int64_t extents[4];
      memcpy(extents, type_of(im, *x)->shape, sizeof(extents));
      extents[1] = tq.shape[1];
      HETC_RETURN_IF_ERROR(append_picks(im, *x, extents, head_pick, &picks,
                                        step_name(im, c ? "V_repeated" : "K_repeated", names[2 + c], 320), x));
    }
  }
  /* The scores: (Q scale) K^T, [B, H, S, L]. */
  const double factor = isnan(scale) ? 1.0 / sqrt((double)tq.shape[3]) : (double)scale;
  const int64_t to_rows[4] = {0, 1, 3, 2};
  int32_t scores;
  HETC_RETURN_IF_ERROR(append_uniform_affine(im, q, step_name(im, "Q_scaled", names[0], 320), factor, 0, &q));
  HETC_RETURN_IF_ERROR(append_transpose(im, k, step_name(im, "K_transposed", names[1], 320), to_rows, 4, &k));
  const int32_t product[2] = {q, k};
  hetc_node_attrs_t a = hetc_node_default_attrs(HETC_OP_MATMUL);
  int32_t node;
  HETC_RETURN_IF_ERROR(
      hetc_onnx_append_node(im, HETC_OP_MATMUL, step_name(im, "scores", names[2], 320), product, 2, &a, &node));
  scores = im->graph->nodes[node].output;
  int32_t stage[4] = {scores, scores, scores, scores}; /* the fourth output by mode */
  if (softcap > 0) {
    HETC_RETURN_IF_ERROR(append_uniform_affine(im, scores, step_name(im, "capped_in", names[3], 320), 1.0 / softcap, 0,
                                               &scores));
    HETC_RETURN_IF_ERROR(append_unary(im, HETC_OP_TANH, scores, step_name(im, "capped_tanh", names[3], 320), &scores));
    HETC_RETURN_IF_ERROR(
        append_uniform_affine(im, scores, step_name(im, "capped", names[3], 320), softcap, 0, &scores));
  }
  stage[1] = stage[2] = scores;
  /* The bias: a constant mask and the causal cut as one per-element add; a
   * computed (float) mask added as it broadcasts. */
  const int64_t dims[4] = {tq.shape[0], tq.shape[1], tq.shape[2], type_of(im, k)->shape[3]};
  const char *mask_name = input_name(im, 3);
  const onnx_value_t *mask = mask_name ? hetc_onnx_lookup(im, mask_name) : NULL;
  if (mask && mask->kind == ONNX_VALUE_ACTIVATION) {
    int64_t ranked[4] = {1, 1, 1, 1}; /* its dims at rank 4 */
    const hetc_plugin_tensor_t *tm = type_of(im, mask->value);
    if (tm->rank > 4) return BAD("input 3 (attn_mask) has rank %d; Attention takes rank 1 to 4", (int)tm->rank);
    for (int32_t d = 0; d < tm->rank; ++d) ranked[4 - tm->rank + d] = tm->shape[d];
    if (ranked[3] < dims[3])
      return BAD("input 3 (attn_mask) is computed and covers %lld of the %lld keys, which is not supported yet "
                 "(hetc pads constant masks only)",
                 (long long)ranked[3], (long long)dims[3]);
    int fits = 1;
    for (int32_t d = 0; fits && d < 4; ++d) fits = ranked[d] == dims[d] || (d < 3 && ranked[d] == 1);
    if (!fits)
      return BAD("input 3 (attn_mask), computed, does not broadcast to the scores' %lld x %lld x %lld x %lld",
                 (long long)dims[0], (long long)dims[1], (long long)dims[2], (long long)dims[3]);
  }
  float *bias = NULL, *keep = NULL;
  if (mask && mask->kind == ONNX_VALUE_CONST) masking.mask = &mask->constant;
  HETC_RETURN_IF_ERROR(attention_bias(im, &masking, dims, &bias, &keep));
  if (bias) {
    const hetc_status_t status =
        append_per_element(im, scores, NULL, bias, step_name(im, "biased", names[4], 320), &scores);
    if (status) free(keep);
    HETC_RETURN_IF_ERROR(status);
  }
  if (mask && mask->kind == ONNX_VALUE_ACTIVATION) { /* append_binary ranks it */
    const hetc_status_t status =
        append_binary(im, HETC_OP_ADD, scores, mask->value, step_name(im, "masked", names[5], 320), &scores);
    if (status) free(keep);
    HETC_RETURN_IF_ERROR(status);
  }
  stage[2] = scores;
  a = hetc_node_default_attrs(HETC_OP_SOFTMAX);
  a.axis = 3;
  hetc_status_t status =
      hetc_onnx_append_node(im, HETC_OP_SOFTMAX, step_name(im, keep ? "softmax" : "weights", names[6], 320), &scores,
                            1, &a, &node);
  stage[3] = status ? -1 : im->graph->nodes[node].output;
  /* Fully masked rows: their weights zeroed (their bias was 0). */
  if (!status && keep)
    status = append_per_element(im, stage[3], keep, NULL, step_name(im, "weights", names[6], 320), &stage[3]);
  free(keep);
  HETC_RETURN_IF_ERROR(status);
  if (im->node->n_output > 3 && im->node->output[3][0]) HETC_RETURN_IF_ERROR(define_output_at(im, 3, stage[mode]));
  /* Y = weights V, back to [B, S, H x size] for 3-d inputs. */
  const int32_t weighted[2] = {stage[3], v};
  a = hetc_node_default_attrs(HETC_OP_MATMUL);
  HETC_RETURN_IF_ERROR(hetc_onnx_append_node(im, HETC_OP_MATMUL,
                                             rank == 4 ? im->node->output[0] : step_name(im, "by_head", names[7], 320),
                                             weighted, 2, &a, &node));
  int32_t y = im->graph->nodes[node].output;
  if (rank == 3) {
    const hetc_plugin_tensor_t ty = *type_of(im, y);
    const int64_t perm[4] = {0, 2, 1, 3}, merged[3] = {ty.shape[0], ty.shape[2], ty.shape[1] * ty.shape[3]};
    HETC_RETURN_IF_ERROR(append_transpose(im, y, step_name(im, "by_position", names[7], 320), perm, 4, &y));
    HETC_RETURN_IF_ERROR(append_reshape(im, y, im->node->output[0], 3, merged, &y));
  }
  return define_output(im, y);
}

/* Unsqueeze and Squeeze of a computed value: a reshape. */
static hetc_status_t translate_squeeze(hetc_onnx_importer_t *im) {
  int32_t x, value;
  HETC_RETURN_IF_ERROR(activation_input(im, 0, &x));
  const hetc_onnx_const_t *axes = NULL;
  if (im->node->n_input > 1) HETC_RETURN_IF_ERROR(const_input(im, 1, 0, &axes));
  const hetc_onnx_const_t *inputs[2] = {NULL, axes};
  const hetc_plugin_tensor_t t = *type_of(im, x);
  int64_t dims[HETC_ONNX_MAX_RANK];
  int32_t rank = 0;
  HETC_RETURN_IF_ERROR(hetc_onnx_squeeze_dims(im->node, inputs, 2, t.rank, t.shape, dims, &rank));
  HETC_RETURN_IF_ERROR(append_reshape(im, x, im->node->output[0], rank, dims, &value));
  return define_output(im, value);
}

/* Dropout and Identity pass their input on: nothing to compute. */
static hetc_status_t translate_identity(hetc_onnx_importer_t *im) {
  int32_t x;
  HETC_RETURN_IF_ERROR(activation_input(im, 0, &x));
  HETC_RETURN_IF_ERROR(only_first_output(im, "the dropout mask"));
  return define_output(im, x);
}

/* Cast and CastLike of a computed value, which is float32: to float32 it
 * is the value itself (the expanded functions of LayerNormalization,
 * GroupNormalization and Gelu cast their input so); to another type hetc
 * cannot compute. */
static hetc_status_t translate_cast(hetc_onnx_importer_t *im) {
  int32_t x;
  HETC_RETURN_IF_ERROR(activation_input(im, 0, &x));
  int64_t to = 1;
  if (!strcmp(im->node->op_type, "Cast")) {
    HETC_RETURN_IF_ERROR(hetc_onnx_attr_int(im->node, "to", 0, &to));
  } else {
    const char *like = input_name(im, 1);
    if (!like) return BAD("input 1 is missing");
    const onnx_value_t *v = hetc_onnx_lookup(im, like);
    if (v->kind == ONNX_VALUE_CONST && v->constant.is_int) to = 7;
  }
  if (to != 1)
    return BAD("a cast of a computed value to %s is not supported (hetc computes in float32)",
               hetc_onnx_type_name((int32_t)to));
  return define_output(im, x);
}

/* ---- the table ------------------------------------------------------------ */

typedef struct translation_t {
  const char *op_type;
  hetc_status_t (*translate)(hetc_onnx_importer_t *im);
} translation_t;

static const translation_t translations[] = {
    {"Conv", translate_conv},
    {"MaxPool", translate_pool},
    {"AveragePool", translate_pool},
    {"GlobalAveragePool", translate_global_pool},
    {"ReduceMean", translate_reduce},
    {"ReduceSum", translate_reduce},
    {"ReduceMax", translate_reduce},
    {"ReduceMin", translate_reduce},
    {"ReduceL1", translate_reduce},
    {"ReduceL2", translate_reduce},
    {"ReduceSumSquare", translate_reduce},
    {"ReduceLogSum", translate_reduce},
    {"ReduceLogSumExp", translate_reduce},
    {"ReduceProd", translate_reduce},
    {"Gemm", translate_gemm},
    {"MatMul", translate_matmul},
    {"BatchNormalization", translate_batch_norm},
    {"InstanceNormalization", translate_normalization},
    {"GroupNormalization", translate_normalization},
    {"LayerNormalization", translate_normalization},
    {"GlobalMaxPool", translate_global_max_pool},
    {"Relu", translate_activation},
    {"LeakyRelu", translate_leaky_relu},
    {"PRelu", translate_leaky_relu},
    {"HardSigmoid", translate_hard_sigmoid},
    {"HardSwish", translate_hard_sigmoid},
    {"Sigmoid", translate_activation},
    {"Tanh", translate_activation},
    {"Elu", translate_activation},
    {"Softplus", translate_activation},
    {"Neg", translate_composed_unary},
    {"Abs", translate_composed_unary},
    {"Sqrt", translate_power},
    {"Reciprocal", translate_reciprocal},
    {"Gather", translate_gather},
    {"Expand", translate_repeat},
    {"Unsqueeze", translate_squeeze},
    {"Squeeze", translate_squeeze},
    {"Tile", translate_repeat},
    {"Pow", translate_power},
    {"Softsign", translate_composed_unary},
    {"Mish", translate_composed_unary},
    {"Clip", translate_clip},
    {"Add", translate_binary},
    {"Sub", translate_binary},
    {"Mul", translate_binary},
    {"Div", translate_binary},
    {"Sum", translate_sum},
    {"Concat", translate_concat},
    {"Flatten", translate_flatten},
    {"Reshape", translate_reshape},
    {"Softmax", translate_softmax},
    {"LogSoftmax", translate_softmax},
    {"LRN", translate_lrn},
    {"Exp", translate_activation},
    {"Log", translate_activation},
    {"Einsum", translate_einsum},
    {"Attention", translate_attention},
    {"Erf", translate_activation},
    {"Gelu", translate_gelu},
    {"Transpose", translate_transpose},
    {"Slice", translate_slice},
    {"Split", translate_split},
    {"DepthToSpace", translate_depth_to_space},
    {"SpaceToDepth", translate_depth_to_space},
    {"ConvTranspose", translate_conv_transpose},
    {"Pad", translate_pad},
    {"Upsample", translate_resize},
    {"Resize", translate_resize},
    {"Dropout", translate_identity},
    {"Identity", translate_identity},
    {"Cast", translate_cast},
    {"CastLike", translate_cast},
};

static const translation_t *find(const char *op_type) {
  for (size_t k = 0; k < sizeof(translations) / sizeof(translations[0]); ++k)
    if (!strcmp(translations[k].op_type, op_type)) return &translations[k];
  return NULL;
}

int hetc_onnx_translatable(const char *op_type) { return find(op_type) != NULL; }

hetc_status_t hetc_onnx_translate_node(hetc_onnx_importer_t *im) {
  const translation_t *t = find(im->node->op_type);
  if (!t) return BAD("op %s is not supported (api/model-format.md lists the ONNX ops hetc imports)", im->node->op_type);
  if (im->node->n_output < 1 || !im->node->output[0] || !im->node->output[0][0]) return BAD("the node has no output");
  return t->translate(im);
}
