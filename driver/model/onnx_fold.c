/* Constant evaluation of ONNX nodes at import (onnx_fold.h). */
#include "model/onnx_fold.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "graph/infer.h"
#include "model/onnx_attr.h"

#define BAD(...) hetc_status_new(HETC_STATUS_BAD_INPUT, __VA_ARGS__)

static const char *const foldable_ops[] = {
    /* shapes and data movement */
    "Constant", "Shape", "Size", "Gather", "Unsqueeze", "Squeeze", "Concat", "Cast", "CastLike", "ConstantOfShape",
    "Reshape", "Expand", "Tile", "ScatterND", "GatherND",
    "Flatten", "Identity", "Dropout", "Slice", "Transpose",
    /* arithmetic */
    "Add", "Sub", "Mul", "Div", "Mod", "Pow", "Max", "Min", "Sum", "Clip", "MatMul", "Range",
    /* comparisons and logic (booleans as integers 0 and 1): the masks exporters build */
    "Equal", "Less", "Greater", "LessOrEqual", "GreaterOrEqual", "And", "Or", "Xor", "Not", "Where",
    /* unary */
    "Neg", "Abs", "Sqrt", "Floor", "Ceil", "Reciprocal", "Relu", "Sigmoid", "Tanh", "Exp", "Log", "Softplus",
    "Softsign", "Mish", "Elu", "LeakyRelu", "HardSigmoid", "HardSwish", "Erf",
    /* reductions */
    "ReduceMean", "ReduceSum", "ReduceMax", "ReduceMin", "ReduceL2", "ReduceProd", "ReduceL1", "ReduceSumSquare",
    "ReduceLogSum", "ReduceLogSumExp", NULL};

int hetc_onnx_foldable(const char *op_type) {
  for (int k = 0; foldable_ops[k]; ++k)
    if (!strcmp(foldable_ops[k], op_type)) return 1;
  return 0;
}

/* Whether a double computed from integers converts to int64 without
 * undefined behaviour (the bounds are -2^63 and 2^63, the latter excluded). */
static int fits_int64(double v) { return v >= -0x1p63 && v < 0x1p63; }

static const hetc_onnx_const_t *need(const hetc_onnx_const_t *const *inputs, int32_t num_inputs, int32_t k) {
  return k < num_inputs ? inputs[k] : NULL;
}

/* Output value k of `out` set from value j of `in`, converting type. */
static void copy_value(hetc_onnx_const_t *out, int64_t k, const hetc_onnx_const_t *in, int64_t j) {
  if (out->is_int) out->i[k] = hetc_onnx_const_get_int(in, j);
  else out->f[k] = (float)hetc_onnx_const_get(in, j);
}

/* A 1-d int list (axes, shapes, starts) into out; at most max values. */
static hetc_status_t int_list(const hetc_onnx_const_t *c, const char *what, int32_t max, int64_t *out,
                              int32_t *out_count) {
  if (c->rank > 1 || c->count > max)
    return BAD("input '%s' must be a list of at most %d integers", what, (int)max);
  for (int64_t k = 0; k < c->count; ++k) out[k] = hetc_onnx_const_get_int(c, k);
  *out_count = (int32_t)c->count;
  return NULL;
}

hetc_status_t hetc_onnx_normalise_axis(int64_t *axis, int32_t rank) {
  if (*axis < -rank || *axis >= rank) return BAD("axis %lld is outside rank %d", (long long)*axis, (int)rank);
  if (*axis < 0) *axis += rank;
  return NULL;
}

/* Axes from the `axes` attribute (before opset 13/18) or input 1. */
static hetc_status_t axes_of(const Onnx__NodeProto *node, const hetc_onnx_const_t *const *inputs, int32_t num_inputs,
                             int64_t *axes, int32_t *count) {
  HETC_RETURN_IF_ERROR(hetc_onnx_attr_ints(node, "axes", HETC_ONNX_MAX_RANK, axes, count));
  const hetc_onnx_const_t *input = need(inputs, num_inputs, 1);
  if (input) HETC_RETURN_IF_ERROR(int_list(input, "axes", HETC_ONNX_MAX_RANK, axes, count));
  return NULL;
}

static void row_major_strides(const hetc_onnx_const_t *c, int64_t *strides) {
  int64_t stride = 1;
  for (int32_t d = c->rank - 1; d >= 0; --d) strides[d] = stride, stride *= c->dims[d];
}

/* ---- ops ------------------------------------------------------------------ */

static hetc_status_t fold_constant(const Onnx__NodeProto *node, const hetc_onnx_file_t *file, hetc_onnx_const_t *out) {
  const Onnx__AttributeProto *a = NULL;
  if ((a = hetc_onnx_attr(node, "value"))) {
    if (!a->t) return BAD("attribute 'value' holds no tensor");
    const char *converted = NULL;
    HETC_RETURN_IF_ERROR(hetc_onnx_tensor_decode(a->t, file, out, &converted));
    return NULL;
  }
  const int64_t one = 1;
  if ((a = hetc_onnx_attr(node, "value_float"))) {
    HETC_RETURN_IF_ERROR(hetc_onnx_const_alloc(out, 0, 0, &one));
    out->f[0] = a->f;
  } else if ((a = hetc_onnx_attr(node, "value_int"))) {
    HETC_RETURN_IF_ERROR(hetc_onnx_const_alloc(out, 1, 0, &one));
    out->i[0] = a->i;
  } else if ((a = hetc_onnx_attr(node, "value_floats"))) {
    const int64_t n = (int64_t)a->n_floats;
    HETC_RETURN_IF_ERROR(hetc_onnx_const_alloc(out, 0, 1, &n));
    if (n) memcpy(out->f, a->floats, sizeof(float) * (size_t)n);
  } else if ((a = hetc_onnx_attr(node, "value_ints"))) {
    const int64_t n = (int64_t)a->n_ints;
    HETC_RETURN_IF_ERROR(hetc_onnx_const_alloc(out, 1, 1, &n));
    if (n) memcpy(out->i, a->ints, sizeof(int64_t) * (size_t)n);
  } else {
    return BAD("no value hetc reads (value, value_float(s) or value_int(s))");
  }
  return NULL;
}

static hetc_status_t fold_shape(const Onnx__NodeProto *node, const hetc_onnx_const_t *in, hetc_onnx_const_t *out) {
  int64_t start = 0, end = in->rank;
  HETC_RETURN_IF_ERROR(hetc_onnx_attr_int(node, "start", 0, &start));
  HETC_RETURN_IF_ERROR(hetc_onnx_attr_int(node, "end", in->rank, &end));
  if (start < 0) start += in->rank;
  if (end < 0) end += in->rank;
  start = start < 0 ? 0 : start > in->rank ? in->rank : start;
  end = end < start ? start : end > in->rank ? in->rank : end;
  const int64_t n = end - start;
  HETC_RETURN_IF_ERROR(hetc_onnx_const_alloc(out, 1, 1, &n));
  for (int64_t k = 0; k < n; ++k) out->i[k] = in->dims[start + k];
  return NULL;
}

static hetc_status_t fold_gather(const Onnx__NodeProto *node, const hetc_onnx_const_t *data,
                                 const hetc_onnx_const_t *indices, hetc_onnx_const_t *out) {
  int64_t axis = 0;
  HETC_RETURN_IF_ERROR(hetc_onnx_attr_int(node, "axis", 0, &axis));
  HETC_RETURN_IF_ERROR(hetc_onnx_normalise_axis(&axis, data->rank));
  int64_t dims[HETC_ONNX_MAX_RANK];
  const int32_t rank = data->rank - 1 + indices->rank;
  if (rank > HETC_ONNX_MAX_RANK) return BAD("result rank %d is above %d", (int)rank, HETC_ONNX_MAX_RANK);
  int32_t r = 0;
  for (int32_t d = 0; d < axis; ++d) dims[r++] = data->dims[d];
  for (int32_t d = 0; d < indices->rank; ++d) dims[r++] = indices->dims[d];
  for (int32_t d = (int32_t)axis + 1; d < data->rank; ++d) dims[r++] = data->dims[d];
  HETC_RETURN_IF_ERROR(hetc_onnx_const_alloc(out, data->is_int, rank, dims));
  int64_t outer = 1, inner = 1;
  for (int32_t d = 0; d < axis; ++d) outer *= data->dims[d];
  for (int32_t d = (int32_t)axis + 1; d < data->rank; ++d) inner *= data->dims[d];
  const int64_t extent = data->dims[axis];
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t j = 0; j < indices->count; ++j) {
      int64_t index = hetc_onnx_const_get_int(indices, j);
      if (index < 0) index += extent;
      if (index < 0 || index >= extent)
        return BAD("index %lld is outside axis %lld of extent %lld", (long long)hetc_onnx_const_get_int(indices, j),
                   (long long)axis, (long long)extent);
      for (int64_t i = 0; i < inner; ++i)
        copy_value(out, (o * indices->count + j) * inner + i, data, (o * extent + index) * inner + i);
    }
  return NULL;
}

hetc_status_t hetc_onnx_broadcast_dims(const int64_t *in_dims, int32_t in_rank, const hetc_onnx_const_t *shape,
                                       int32_t max_rank, int64_t *out_dims, int32_t *out_rank) {
  int64_t wanted[HETC_ONNX_MAX_RANK];
  int32_t count = 0;
  HETC_RETURN_IF_ERROR(int_list(shape, "shape", HETC_ONNX_MAX_RANK, wanted, &count));
  const int32_t rank = count > in_rank ? count : in_rank;
  if (rank > max_rank) return BAD("the expanded value would have rank %d (at most %d)", (int)rank, (int)max_rank);
  for (int32_t d = 0; d < rank; ++d) {
    const int64_t a = d < rank - in_rank ? 1 : in_dims[d - (rank - in_rank)];
    const int64_t b = d < rank - count ? 1 : wanted[d - (rank - count)];
    if (a != b && a != 1 && b != 1)
      return BAD("shape entry %lld does not broadcast with the input's extent %lld (dim %d of the result)",
                 (long long)b, (long long)a, (int)d);
    out_dims[d] = a == 1 ? b : a;
    if (out_dims[d] < 1) return BAD("shape entry %lld would make an empty value", (long long)b);
  }
  *out_rank = rank;
  return NULL;
}

hetc_status_t hetc_onnx_tile_dims(const int64_t *in_dims, int32_t in_rank, const hetc_onnx_const_t *repeats,
                                  int64_t *out_dims) {
  int64_t counts[HETC_ONNX_MAX_RANK];
  int32_t count = 0;
  HETC_RETURN_IF_ERROR(int_list(repeats, "repeats", HETC_ONNX_MAX_RANK, counts, &count));
  if (count != in_rank) return BAD("input 1 (repeats) holds %d counts for rank %d", (int)count, (int)in_rank);
  for (int32_t d = 0; d < in_rank; ++d) {
    if (counts[d] < 1 || counts[d] > HETC_ONNX_MAX_CONST_ELEMENTS)
      return BAD("repeat count %lld of dim %d is not a positive count", (long long)counts[d], (int)d);
    out_dims[d] = in_dims[d] * counts[d];
  }
  return NULL;
}

/* Expand and Tile of a constant: each element of the result copies the
 * one its index maps to (index 0 along a broadcast dim, the index modulo
 * the extent along a tiled one). */
static hetc_status_t fold_repeat(const Onnx__NodeProto *node, const hetc_onnx_const_t *in,
                                 const hetc_onnx_const_t *how, hetc_onnx_const_t *out) {
  int64_t dims[HETC_ONNX_MAX_RANK], in_dims[HETC_ONNX_MAX_RANK], strides[HETC_ONNX_MAX_RANK];
  int32_t rank = in->rank;
  if (!strcmp(node->op_type, "Expand"))
    HETC_RETURN_IF_ERROR(hetc_onnx_broadcast_dims(in->dims, in->rank, how, HETC_ONNX_MAX_RANK, dims, &rank));
  else
    HETC_RETURN_IF_ERROR(hetc_onnx_tile_dims(in->dims, in->rank, how, dims));
  for (int64_t d = 0, total = 1; d < rank; ++d) {
    if (dims[d] > HETC_ONNX_MAX_CONST_ELEMENTS / total)
      return BAD("the result would hold more than %lld values", (long long)HETC_ONNX_MAX_CONST_ELEMENTS);
    total *= dims[d];
  }
  for (int32_t d = 0; d < rank; ++d) in_dims[d] = d < rank - in->rank ? 1 : in->dims[d - (rank - in->rank)];
  HETC_RETURN_IF_ERROR(hetc_onnx_const_alloc(out, in->is_int, rank, dims));
  int64_t stride = 1;
  for (int32_t d = rank - 1; d >= 0; --d) strides[d] = stride, stride *= in_dims[d];
  for (int64_t k = 0; k < out->count; ++k) {
    int64_t from = 0, rest = k;
    for (int32_t d = rank - 1; d >= 0; --d) {
      from += (rest % dims[d]) % in_dims[d] * strides[d];
      rest /= dims[d];
    }
    copy_value(out, k, in, from);
  }
  return NULL;
}

/* A copy of `in` with new dims (same count). */
static hetc_status_t reshaped(const hetc_onnx_const_t *in, int32_t rank, const int64_t *dims, hetc_onnx_const_t *out) {
  HETC_RETURN_IF_ERROR(hetc_onnx_const_alloc(out, in->is_int, rank, dims));
  if (out->count != in->count)
    return BAD("%lld values cannot take a shape of %lld", (long long)in->count, (long long)out->count);
  for (int64_t k = 0; k < in->count; ++k) copy_value(out, k, in, k);
  return NULL;
}

hetc_status_t hetc_onnx_squeeze_dims(const Onnx__NodeProto *node, const hetc_onnx_const_t *const *inputs,
                                     int32_t num_inputs, int32_t in_rank, const int64_t *in_dims, int64_t *dims,
                                     int32_t *out_rank) {
  int64_t axes[HETC_ONNX_MAX_RANK];
  int32_t count = -1, rank = 0;
  HETC_RETURN_IF_ERROR(axes_of(node, inputs, num_inputs, axes, &count));
  if (!strcmp(node->op_type, "Unsqueeze")) {
    if (count < 0) return BAD("no axes given");
    rank = in_rank + count;
    if (rank > HETC_ONNX_MAX_RANK) return BAD("result rank %d is above %d", (int)rank, HETC_ONNX_MAX_RANK);
    int inserted[HETC_ONNX_MAX_RANK] = {0};
    for (int32_t k = 0; k < count; ++k) {
      HETC_RETURN_IF_ERROR(hetc_onnx_normalise_axis(&axes[k], rank));
      if (inserted[axes[k]]) return BAD("axis %lld is given twice", (long long)axes[k]);
      inserted[axes[k]] = 1;
    }
    for (int32_t d = 0, from = 0; d < rank; ++d) dims[d] = inserted[d] ? 1 : in_dims[from++];
  } else {
    int removed[HETC_ONNX_MAX_RANK] = {0};
    for (int32_t k = 0; k < count; ++k) {
      HETC_RETURN_IF_ERROR(hetc_onnx_normalise_axis(&axes[k], in_rank));
      if (in_dims[axes[k]] != 1)
        return BAD("axis %lld has extent %lld, not 1", (long long)axes[k], (long long)in_dims[axes[k]]);
      removed[axes[k]] = 1;
    }
    for (int32_t d = 0; d < in_rank; ++d)
      if (!(count < 0 ? in_dims[d] == 1 : removed[d])) dims[rank++] = in_dims[d];
  }
  *out_rank = rank;
  return NULL;
}

static hetc_status_t fold_squeeze(const Onnx__NodeProto *node, const hetc_onnx_const_t *const *inputs,
                                  int32_t num_inputs, hetc_onnx_const_t *out) {
  int64_t dims[HETC_ONNX_MAX_RANK];
  int32_t rank = 0;
  HETC_RETURN_IF_ERROR(hetc_onnx_squeeze_dims(node, inputs, num_inputs, inputs[0]->rank, inputs[0]->dims, dims, &rank));
  return reshaped(inputs[0], rank, dims, out);
}

static hetc_status_t fold_concat(const Onnx__NodeProto *node, const hetc_onnx_const_t *const *inputs,
                                 int32_t num_inputs, hetc_onnx_const_t *out) {
  int64_t axis = 0;
  HETC_RETURN_IF_ERROR(hetc_onnx_attr_int(node, "axis", 0, &axis));
  const hetc_onnx_const_t *first = inputs[0];
  HETC_RETURN_IF_ERROR(hetc_onnx_normalise_axis(&axis, first->rank));
  int64_t dims[HETC_ONNX_MAX_RANK];
  memcpy(dims, first->dims, sizeof(dims));
  dims[axis] = 0;
  int is_int = 1;
  for (int32_t k = 0; k < num_inputs; ++k) {
    const hetc_onnx_const_t *in = inputs[k];
    if (!in || in->rank != first->rank) return BAD("input %d does not have rank %d", (int)k, (int)first->rank);
    for (int32_t d = 0; d < in->rank; ++d)
      if (d != axis && in->dims[d] != first->dims[d]) return BAD("input %d differs in dimension %d", (int)k, (int)d);
    dims[axis] += in->dims[axis];
    is_int &= in->is_int;
  }
  HETC_RETURN_IF_ERROR(hetc_onnx_const_alloc(out, is_int, first->rank, dims));
  int64_t outer = 1, inner = 1;
  for (int32_t d = 0; d < axis; ++d) outer *= dims[d];
  for (int32_t d = (int32_t)axis + 1; d < first->rank; ++d) inner *= dims[d];
  int64_t at = 0;
  for (int64_t o = 0; o < outer; ++o)
    for (int32_t k = 0; k < num_inputs; ++k) {
      const int64_t block = inputs[k]->dims[axis] * inner;
      for (int64_t j = 0; j < block; ++j) copy_value(out, at++, inputs[k], o * block + j);
    }
  return NULL;
}

static hetc_status_t cast_values(const hetc_onnx_const_t *in, int to_float, int to_bool, hetc_onnx_const_t *out) {
  HETC_RETURN_IF_ERROR(hetc_onnx_const_alloc(out, !to_float, in->rank, in->dims));
  for (int64_t k = 0; k < in->count; ++k) {
    copy_value(out, k, in, k);
    if (to_bool) out->i[k] = hetc_onnx_const_get(in, k) != 0;
  }
  return NULL;
}

static hetc_status_t fold_cast(const Onnx__NodeProto *node, const hetc_onnx_const_t *in, hetc_onnx_const_t *out) {
  int64_t to = 0;
  HETC_RETURN_IF_ERROR(hetc_onnx_attr_int(node, "to", 0, &to));
  const int to_float = to == 1 || to == 10 || to == 11 || to == 16;
  const int to_bool = to == 9;
  if (!to_float && !(to >= 2 && to <= 7) && !to_bool && to != 12 && to != 13)
    return BAD("cast to %s is not supported", hetc_onnx_type_name((int32_t)to));
  return cast_values(in, to_float, to_bool, out);
}

static hetc_status_t fold_constant_of_shape(const Onnx__NodeProto *node, const hetc_onnx_const_t *shape,
                                            const hetc_onnx_file_t *file, hetc_onnx_const_t *out) {
  int64_t dims[HETC_ONNX_MAX_RANK];
  int32_t rank = 0;
  HETC_RETURN_IF_ERROR(int_list(shape, "shape", HETC_ONNX_MAX_RANK, dims, &rank));
  hetc_onnx_const_t value = {0};
  const Onnx__AttributeProto *a = hetc_onnx_attr(node, "value");
  if (a) {
    const char *converted = NULL;
    if (!a->t) return BAD("attribute 'value' holds no tensor");
    HETC_RETURN_IF_ERROR(hetc_onnx_tensor_decode(a->t, file, &value, &converted));
    if (value.count != 1) {
      hetc_onnx_const_release(&value);
      return BAD("attribute 'value' must hold one value");
    }
  }
  hetc_status_t status = hetc_onnx_const_alloc(out, a ? value.is_int : 0, rank, dims);
  for (int64_t k = 0; !status && a && k < out->count; ++k) copy_value(out, k, &value, 0);
  hetc_onnx_const_release(&value);
  return status;
}

hetc_status_t hetc_onnx_reshape_dims(const Onnx__NodeProto *node, int32_t in_rank, const int64_t *in_dims,
                                     int64_t in_count, const hetc_onnx_const_t *shape, int64_t *dims, int32_t *out_rank) {
  int64_t allow_zero = 0;
  int32_t rank = 0;
  HETC_RETURN_IF_ERROR(hetc_onnx_attr_int(node, "allowzero", 0, &allow_zero));
  HETC_RETURN_IF_ERROR(int_list(shape, "shape", HETC_ONNX_MAX_RANK, dims, &rank));
  int32_t wildcard = -1;
  int64_t known = 1;
  for (int32_t d = 0; d < rank; ++d) {
    if (dims[d] == 0 && !allow_zero) {
      if (d >= in_rank) return BAD("shape entry %d is 0 but the input has rank %d", (int)d, (int)in_rank);
      dims[d] = in_dims[d];
    }
    if (dims[d] == -1) {
      if (wildcard >= 0) return BAD("shape has more than one -1");
      wildcard = d;
    } else if (dims[d] < 0 || dims[d] > HETC_MAX_TENSOR_ELEMENTS) {
      return BAD("shape entry %d is %lld", (int)d, (long long)dims[d]);
    } else if (known > HETC_MAX_TENSOR_ELEMENTS) {
      return BAD("the shape has more than 2^31 elements");
    } else {
      known *= dims[d];
    }
  }
  if (wildcard >= 0) {
    if (!known || in_count % known) return BAD("%lld values cannot be reshaped with a -1 here", (long long)in_count);
    dims[wildcard] = in_count / known;
  } else if (known != in_count) {
    return BAD("%lld values cannot take a shape of %lld", (long long)in_count, (long long)known);
  }
  *out_rank = rank;
  return NULL;
}

static hetc_status_t fold_reshape(const Onnx__NodeProto *node, const hetc_onnx_const_t *in,
                                  const hetc_onnx_const_t *shape, hetc_onnx_const_t *out) {
  int64_t dims[HETC_ONNX_MAX_RANK];
  int32_t rank = 0;
  HETC_RETURN_IF_ERROR(hetc_onnx_reshape_dims(node, in->rank, in->dims, in->count, shape, dims, &rank));
  return reshaped(in, rank, dims, out);
}

static hetc_status_t fold_flatten(const Onnx__NodeProto *node, const hetc_onnx_const_t *in, hetc_onnx_const_t *out) {
  int64_t axis = 1;
  HETC_RETURN_IF_ERROR(hetc_onnx_attr_int(node, "axis", 1, &axis));
  if (axis < 0) axis += in->rank;
  if (axis < 0 || axis > in->rank) return BAD("axis is outside rank %d", (int)in->rank);
  int64_t dims[2] = {1, 1};
  for (int32_t d = 0; d < in->rank; ++d) dims[d >= axis] *= in->dims[d];
  return reshaped(in, 2, dims, out);
}

hetc_status_t hetc_onnx_slice_ranges(const Onnx__NodeProto *node, int64_t opset, const hetc_onnx_const_t *const *inputs,
                                     int32_t num_inputs, int32_t rank, const int64_t *in_dims, int64_t *begin,
                                     int64_t *step, int64_t *dims) {
  int64_t starts[HETC_ONNX_MAX_RANK], ends[HETC_ONNX_MAX_RANK], axes[HETC_ONNX_MAX_RANK], steps[HETC_ONNX_MAX_RANK];
  int32_t n = -1, n_ends = -1, n_axes = -1, n_steps = -1;
  if (opset < 10) {
    HETC_RETURN_IF_ERROR(hetc_onnx_attr_ints(node, "starts", HETC_ONNX_MAX_RANK, starts, &n));
    HETC_RETURN_IF_ERROR(hetc_onnx_attr_ints(node, "ends", HETC_ONNX_MAX_RANK, ends, &n_ends));
    HETC_RETURN_IF_ERROR(hetc_onnx_attr_ints(node, "axes", HETC_ONNX_MAX_RANK, axes, &n_axes));
  } else {
    if (!need(inputs, num_inputs, 1) || !need(inputs, num_inputs, 2)) return BAD("starts and ends are required");
    HETC_RETURN_IF_ERROR(int_list(inputs[1], "starts", HETC_ONNX_MAX_RANK, starts, &n));
    HETC_RETURN_IF_ERROR(int_list(inputs[2], "ends", HETC_ONNX_MAX_RANK, ends, &n_ends));
    if (need(inputs, num_inputs, 3)) HETC_RETURN_IF_ERROR(int_list(inputs[3], "axes", HETC_ONNX_MAX_RANK, axes, &n_axes));
    if (need(inputs, num_inputs, 4)) HETC_RETURN_IF_ERROR(int_list(inputs[4], "steps", HETC_ONNX_MAX_RANK, steps, &n_steps));
  }
  if (n < 0 || n != n_ends || (n_axes >= 0 && n_axes != n) || (n_steps >= 0 && n_steps != n))
    return BAD("starts, ends, axes and steps differ in length");
  for (int32_t d = 0; d < rank; ++d) begin[d] = 0, step[d] = 1, dims[d] = in_dims[d];
  for (int32_t k = 0; k < n; ++k) {
    int64_t axis = n_axes >= 0 ? axes[k] : k;
    HETC_RETURN_IF_ERROR(hetc_onnx_normalise_axis(&axis, rank));
    const int64_t extent = in_dims[axis], s = n_steps >= 0 ? steps[k] : 1;
    if (s == 0) return BAD("step 0 along axis %lld: Slice's steps must not be 0", (long long)axis);
    if (s > (INT64_C(1) << 40) || s < -(INT64_C(1) << 40)) return BAD("step %lld is not supported", (long long)s);
    int64_t b = starts[k] < 0 ? starts[k] + extent : starts[k], e = ends[k] < 0 ? ends[k] + extent : ends[k];
    if (s > 0) {
      b = b < 0 ? 0 : b > extent ? extent : b;
      e = e < 0 ? 0 : e > extent ? extent : e;
      dims[axis] = e > b ? (e - b - 1) / s + 1 : 0;
    } else {
      b = b < 0 ? -1 : b > extent - 1 ? extent - 1 : b;
      e = e < -1 ? -1 : e > extent - 1 ? extent - 1 : e;
      dims[axis] = b > e ? (b - e - 1) / -s + 1 : 0;
    }
    begin[axis] = b, step[axis] = s;
  }
  return NULL;
}

static hetc_status_t fold_slice(const Onnx__NodeProto *node, int64_t opset, const hetc_onnx_const_t *const *inputs,
                                int32_t num_inputs, hetc_onnx_const_t *out) {
  const hetc_onnx_const_t *in = inputs[0];
  int64_t begin[HETC_ONNX_MAX_RANK], step[HETC_ONNX_MAX_RANK], dims[HETC_ONNX_MAX_RANK];
  HETC_RETURN_IF_ERROR(hetc_onnx_slice_ranges(node, opset, inputs, num_inputs, in->rank, in->dims, begin, step, dims));
  HETC_RETURN_IF_ERROR(hetc_onnx_const_alloc(out, in->is_int, in->rank, dims));
  int64_t strides[HETC_ONNX_MAX_RANK];
  row_major_strides(in, strides);
  for (int64_t k = 0; k < out->count; ++k) {
    int64_t rest = k, from = 0;
    for (int32_t d = in->rank - 1; d >= 0; --d) {
      const int64_t index = rest % dims[d];
      rest /= dims[d];
      from += (begin[d] + index * step[d]) * strides[d];
    }
    copy_value(out, k, in, from);
  }
  return NULL;
}

static hetc_status_t fold_transpose(const Onnx__NodeProto *node, const hetc_onnx_const_t *in, hetc_onnx_const_t *out) {
  int64_t perm[HETC_ONNX_MAX_RANK];
  int32_t count = -1;
  HETC_RETURN_IF_ERROR(hetc_onnx_attr_ints(node, "perm", HETC_ONNX_MAX_RANK, perm, &count));
  if (count < 0) {
    count = in->rank;
    for (int32_t d = 0; d < count; ++d) perm[d] = count - 1 - d;
  }
  if (count != in->rank) return BAD("perm has %d entries for rank %d", (int)count, (int)in->rank);
  int seen[HETC_ONNX_MAX_RANK] = {0};
  int64_t dims[HETC_ONNX_MAX_RANK];
  for (int32_t d = 0; d < count; ++d) {
    if (perm[d] < 0 || perm[d] >= count || seen[perm[d]]++) return BAD("perm is not a permutation");
    dims[d] = in->dims[perm[d]];
  }
  HETC_RETURN_IF_ERROR(hetc_onnx_const_alloc(out, in->is_int, in->rank, dims));
  int64_t strides[HETC_ONNX_MAX_RANK];
  row_major_strides(in, strides);
  for (int64_t k = 0; k < out->count; ++k) {
    int64_t rest = k, from = 0;
    for (int32_t d = count - 1; d >= 0; --d) {
      from += (rest % dims[d]) * strides[perm[d]];
      rest /= dims[d];
    }
    copy_value(out, k, in, from);
  }
  return NULL;
}

/* x op y, in double for floats. */
static double binary_value(const char *op, double x, double y) {
  if (!strcmp(op, "Add") || !strcmp(op, "Sum")) return x + y;
  if (!strcmp(op, "Sub")) return x - y;
  if (!strcmp(op, "Mul")) return x * y;
  if (!strcmp(op, "Div")) return x / y;
  if (!strcmp(op, "Pow")) return pow(x, y);
  if (!strcmp(op, "FMod")) return fmod(x, y); /* Mod with fmod=1: the dividend's sign */
  if (!strcmp(op, "Mod")) { /* fmod=0: the divisor's sign, as Python's % */
    const double r = fmod(x, y);
    return r != 0 && (r < 0) != (y < 0) ? r + y : r;
  }
  if (!strcmp(op, "Max")) return isnan(x) || isnan(y) ? NAN : fmax(x, y);
  return isnan(x) || isnan(y) ? NAN : fmin(x, y); /* Min */
}

/* The same on integers (shapes), wrapping as unsigned (defined) rather
 * than overflowing: shape arithmetic never comes near 2^63. */
static hetc_status_t binary_int(const char *op, int64_t x, int64_t y, int64_t *out) {
  const uint64_t ux = (uint64_t)x, uy = (uint64_t)y;
  if (!strcmp(op, "Add") || !strcmp(op, "Sum")) *out = (int64_t)(ux + uy);
  else if (!strcmp(op, "Sub")) *out = (int64_t)(ux - uy);
  else if (!strcmp(op, "Mul")) *out = (int64_t)(ux * uy);
  else if (!strcmp(op, "Max")) *out = x > y ? x : y;
  else if (!strcmp(op, "Min")) *out = x < y ? x : y;
  else if (!strcmp(op, "Div")) {
    if (y == 0 || (y == -1 && x == INT64_MIN)) return BAD("integer division by zero or overflow");
    *out = x / y;
  } else if (!strcmp(op, "Mod") || !strcmp(op, "FMod")) {
    if (y == 0) return BAD("an integer Mod by zero");
    const int64_t r = y == -1 ? 0 : x % y; /* INT64_MIN % -1 overflows in C */
    *out = op[0] == 'M' && r != 0 && (r < 0) != (y < 0) ? r + y : r;
  } else { /* Pow: exact while it fits */
    if (y < 0) return BAD("an integer to a negative power");
    double p = pow((double)x, (double)y);
    if (!(fabs(p) < 0x1p53)) return BAD("an integer power overflows");
    *out = (int64_t)p;
  }
  return NULL;
}

/* Comparisons and logic, 0 or 1: compared as integers when both are (exact
 * past 2^53), else in double; logic on "not 0". */
static int64_t compare_or_logic(const char *op, const hetc_onnx_const_t *a, int64_t ia, const hetc_onnx_const_t *b,
                                int64_t ib) {
  if (!strcmp(op, "And")) return hetc_onnx_const_get(a, ia) != 0 && hetc_onnx_const_get(b, ib) != 0;
  if (!strcmp(op, "Or")) return hetc_onnx_const_get(a, ia) != 0 || hetc_onnx_const_get(b, ib) != 0;
  if (!strcmp(op, "Xor")) return (hetc_onnx_const_get(a, ia) != 0) != (hetc_onnx_const_get(b, ib) != 0);
  int order;
  if (a->is_int && b->is_int) {
    order = (a->i[ia] > b->i[ib]) - (a->i[ia] < b->i[ib]);
  } else {
    const double x = hetc_onnx_const_get(a, ia), y = hetc_onnx_const_get(b, ib);
    if (isnan(x) || isnan(y)) return 0; /* unordered: every comparison false */
    order = (x > y) - (x < y);
  }
  if (!strcmp(op, "Equal")) return order == 0;
  if (!strcmp(op, "Less")) return order < 0;
  if (!strcmp(op, "Greater")) return order > 0;
  if (!strcmp(op, "LessOrEqual")) return order <= 0;
  return order >= 0; /* GreaterOrEqual */
}

static int is_compare_or_logic(const char *op) {
  static const char *const ops[] = {"Equal", "Less", "Greater", "LessOrEqual", "GreaterOrEqual", "And", "Or", "Xor",
                                    NULL};
  for (int k = 0; ops[k]; ++k)
    if (!strcmp(ops[k], op)) return 1;
  return 0;
}

/* The broadcast shape of `count` operands (numpy's rule) in dims, each
 * operand's dims padded to that rank in operand_dims. */
static hetc_status_t broadcast_operands(const hetc_onnx_const_t *const *operands, int32_t count, int64_t *dims,
                                        int64_t operand_dims[][HETC_ONNX_MAX_RANK], int32_t *out_rank) {
  int32_t rank = 0;
  for (int32_t k = 0; k < count; ++k) rank = operands[k]->rank > rank ? operands[k]->rank : rank;
  for (int32_t d = 0; d < rank; ++d) {
    dims[d] = 1;
    for (int32_t k = 0; k < count; ++k) {
      const hetc_onnx_const_t *c = operands[k];
      const int64_t extent = d < rank - c->rank ? 1 : c->dims[d - (rank - c->rank)];
      operand_dims[k][d] = extent;
      if (extent != dims[d] && extent != 1 && dims[d] != 1)
        return BAD("shapes do not broadcast (dimension %d: %lld and %lld)", (int)d, (long long)dims[d],
                   (long long)extent);
      if (extent != 1) dims[d] = extent;
    }
  }
  *out_rank = rank;
  return NULL;
}

/* The index into an operand of dims operand_dims of element k of a
 * result of dims `dims`. */
static int64_t broadcast_index(int64_t k, const int64_t *dims, const int64_t *operand_dims, int32_t rank) {
  int64_t index = 0, stride = 1;
  for (int32_t d = rank - 1; d >= 0; --d) {
    const int64_t i = k % dims[d];
    k /= dims[d];
    index += (operand_dims[d] == 1 ? 0 : i) * stride, stride *= operand_dims[d];
  }
  return index;
}

/* Elementwise ops with numpy-style broadcasting. */
static hetc_status_t fold_binary(const char *op, const hetc_onnx_const_t *a, const hetc_onnx_const_t *b,
                                 hetc_onnx_const_t *out) {
  const hetc_onnx_const_t *operands[2] = {a, b};
  int64_t dims[HETC_ONNX_MAX_RANK], operand_dims[2][HETC_ONNX_MAX_RANK];
  int32_t rank = 0;
  HETC_RETURN_IF_ERROR(broadcast_operands(operands, 2, dims, operand_dims, &rank));
  const int booleans = is_compare_or_logic(op);
  HETC_RETURN_IF_ERROR(hetc_onnx_const_alloc(out, booleans || (a->is_int && b->is_int), rank, dims));
  for (int64_t k = 0; k < out->count; ++k) {
    const int64_t ia = broadcast_index(k, dims, operand_dims[0], rank), ib = broadcast_index(k, dims, operand_dims[1], rank);
    if (booleans) out->i[k] = compare_or_logic(op, a, ia, b, ib);
    else if (out->is_int) HETC_RETURN_IF_ERROR(binary_int(op, a->i[ia], b->i[ib], &out->i[k]));
    else out->f[k] = (float)binary_value(op, hetc_onnx_const_get(a, ia), hetc_onnx_const_get(b, ib));
  }
  return NULL;
}

/* Where(condition, x, y), the three broadcast together. */
static hetc_status_t fold_where(const hetc_onnx_const_t *const *operands, hetc_onnx_const_t *out) {
  int64_t dims[HETC_ONNX_MAX_RANK], operand_dims[3][HETC_ONNX_MAX_RANK];
  int32_t rank = 0;
  HETC_RETURN_IF_ERROR(broadcast_operands(operands, 3, dims, operand_dims, &rank));
  HETC_RETURN_IF_ERROR(hetc_onnx_const_alloc(out, operands[1]->is_int && operands[2]->is_int, rank, dims));
  for (int64_t k = 0; k < out->count; ++k) {
    const int take_x = hetc_onnx_const_get(operands[0], broadcast_index(k, dims, operand_dims[0], rank)) != 0;
    copy_value(out, k, operands[take_x ? 1 : 2], broadcast_index(k, dims, operand_dims[take_x ? 1 : 2], rank));
  }
  return NULL;
}

/* ScatterND(data, indices, updates): data with the slices indices name
 * replaced by (or, with reduction, combined with) updates. Each of
 * indices' last-dim tuples of k values names a slice of data's dims k and
 * on, and updates holds those slices in the order of the tuples (torch's
 * masks: Swin's shifted-window regions written into a zero mask). */
static hetc_status_t fold_scatter_nd(const Onnx__NodeProto *node, const hetc_onnx_const_t *const *operands,
                                     hetc_onnx_const_t *out) {
  const hetc_onnx_const_t *data = operands[0], *indices = operands[1], *updates = operands[2];
  char reduction[8];
  HETC_RETURN_IF_ERROR(hetc_onnx_attr_string(node, "reduction", "none", reduction, sizeof(reduction)));
  const int op = !strcmp(reduction, "none") ? 0 : !strcmp(reduction, "add") ? 1 : !strcmp(reduction, "mul") ? 2
               : !strcmp(reduction, "max") ? 3 : !strcmp(reduction, "min") ? 4 : -1;
  if (op < 0) return BAD("reduction '%s' is not one of none, add, mul, max, min", reduction);
  if (!indices->is_int) return BAD("input 1 (indices) must hold integers");
  const int32_t k = indices->rank > 0 ? (int32_t)indices->dims[indices->rank - 1] : -1;
  if (indices->rank < 1 || k < 1 || k > data->rank)
    return BAD("input 1 (indices) must end in a dim of 1 to %d (data's rank)", (int)data->rank);
  /* updates: indices' dims but the last, then data's dims from k. */
  int ok = updates->rank == indices->rank - 1 + data->rank - k;
  for (int32_t d = 0; ok && d < indices->rank - 1; ++d) ok = updates->dims[d] == indices->dims[d];
  for (int32_t d = k; ok && d < data->rank; ++d) ok = updates->dims[indices->rank - 1 + d - k] == data->dims[d];
  if (!ok) return BAD("input 2 (updates) does not have indices' dims but the last, then data's from dim %d", (int)k);
  HETC_RETURN_IF_ERROR(hetc_onnx_const_alloc(out, data->is_int, data->rank, data->dims));
  for (int64_t j = 0; j < data->count; ++j) copy_value(out, j, data, j);
  int64_t slice = 1;
  for (int32_t d = k; d < data->rank; ++d) slice *= data->dims[d];
  const int64_t tuples = indices->count / k;
  for (int64_t t = 0; t < tuples; ++t) {
    int64_t offset = 0;
    for (int32_t d = 0; d < k; ++d) {
      int64_t index = indices->i[t * k + d];
      if (index < 0) index += data->dims[d];
      if (index < 0 || index >= data->dims[d]) {
        hetc_onnx_const_release(out);
        return BAD("index %lld is outside dim %d of extent %lld", (long long)indices->i[t * k + d], (int)d,
                   (long long)data->dims[d]);
      }
      offset = offset * data->dims[d] + index;
    }
    for (int64_t e = 0; e < slice; ++e) {
      const int64_t at = offset * slice + e, from = t * slice + e;
      if (out->is_int) {
        /* add and mul wrap (defined) as the folded integer Add and Mul do. */
        const int64_t old = out->i[at], u = hetc_onnx_const_get_int(updates, from);
        const uint64_t sum = (uint64_t)old + (uint64_t)u, product = (uint64_t)old * (uint64_t)u;
        const int64_t combined[5] = {u, (int64_t)sum, (int64_t)product, old > u ? old : u, old < u ? old : u};
        out->i[at] = combined[op];
      } else {
        const float old = out->f[at], u = (float)hetc_onnx_const_get(updates, from);
        const float combined[5] = {u, old + u, old * u, fmaxf(old, u), fminf(old, u)};
        out->f[at] = combined[op];
      }
    }
  }
  return NULL;
}

/* GatherND(data, indices): the slices of data that indices' last-dim
 * tuples name (after batch_dims leading dims both share), in the order of
 * the tuples (Swin V2's relative position bias, read from its folded
 * MLP's table). */
static hetc_status_t fold_gather_nd(const Onnx__NodeProto *node, const hetc_onnx_const_t *data,
                                    const hetc_onnx_const_t *indices, hetc_onnx_const_t *out) {
  int64_t batch_dims = 0;
  HETC_RETURN_IF_ERROR(hetc_onnx_attr_int(node, "batch_dims", 0, &batch_dims));
  if (!indices->is_int) return BAD("input 1 (indices) must hold integers");
  if (batch_dims < 0 || batch_dims >= indices->rank || batch_dims >= data->rank)
    return BAD("batch_dims %lld must be less than both inputs' ranks", (long long)batch_dims);
  const int32_t b = (int32_t)batch_dims, k = (int32_t)indices->dims[indices->rank - 1];
  if (k < 1 || b + k > data->rank)
    return BAD("input 1 (indices) ends in a dim of %d, and data has %d dims after the batch dims", (int)k,
               (int)(data->rank - b));
  for (int32_t d = 0; d < b; ++d)
    if (indices->dims[d] != data->dims[d]) return BAD("batch dim %d differs between data and indices", (int)d);
  int64_t dims[HETC_ONNX_MAX_RANK], batches = 1, tuples = 1, slice = 1, per_batch = 1;
  int32_t rank = 0;
  for (int32_t d = 0; d < indices->rank - 1; ++d) dims[rank++] = indices->dims[d];
  for (int32_t d = b + k; d < data->rank; ++d) dims[rank++] = data->dims[d], slice *= data->dims[d];
  if (rank > HETC_ONNX_MAX_RANK) return BAD("the result has rank %d", (int)rank);
  for (int32_t d = 0; d < b; ++d) batches *= data->dims[d];
  for (int32_t d = b; d < indices->rank - 1; ++d) tuples *= indices->dims[d];
  for (int32_t d = b; d < data->rank; ++d) per_batch *= data->dims[d];
  HETC_RETURN_IF_ERROR(hetc_onnx_const_alloc(out, data->is_int, rank, dims));
  for (int64_t bi = 0; bi < batches; ++bi)
    for (int64_t t = 0; t < tuples; ++t) {
      const int64_t *tuple = indices->i + (bi * tuples + t) * k;
      int64_t offset = 0;
      for (int32_t j = 0; j < k; ++j) {
        const int64_t extent = data->dims[b + j], index = tuple[j] < 0 ? tuple[j] + extent : tuple[j];
        if (index < 0 || index >= extent) {
          hetc_onnx_const_release(out);
          return BAD("index %lld is outside dim %d of extent %lld", (long long)tuple[j], (int)(b + j),
                     (long long)extent);
        }
        offset = offset * extent + index;
      }
      for (int64_t e = 0; e < slice; ++e)
        copy_value(out, (bi * tuples + t) * slice + e, data, bi * per_batch + offset * slice + e);
    }
  return NULL;
}

/* Range(start, limit, delta): max(ceil((limit - start) / delta), 0) values. */
static hetc_status_t fold_range(const hetc_onnx_const_t *const *operands, hetc_onnx_const_t *out) {
  for (int32_t k = 0; k < 3; ++k)
    if (operands[k]->count != 1) return BAD("input %d of Range must be one value", (int)k);
  const int ints = operands[0]->is_int && operands[1]->is_int && operands[2]->is_int;
  const double start = hetc_onnx_const_get(operands[0], 0), limit = hetc_onnx_const_get(operands[1], 0),
               delta = hetc_onnx_const_get(operands[2], 0);
  if (delta == 0 || !isfinite(start) || !isfinite(limit) || !isfinite(delta))
    return BAD("Range from %g to %g by %g has no finite length", start, limit, delta);
  const double length = ceil((limit - start) / delta);
  if (length > (double)HETC_ONNX_MAX_CONST_ELEMENTS) return BAD("Range would hold %g values", length);
  const int64_t count = length > 0 ? (int64_t)length : 0;
  HETC_RETURN_IF_ERROR(hetc_onnx_const_alloc(out, ints, 1, &count));
  for (int64_t k = 0; k < count; ++k) {
    /* Wrapping (defined) where double's length overshoots near 2^63. */
    if (ints) out->i[k] = (int64_t)((uint64_t)operands[0]->i[0] + (uint64_t)k * (uint64_t)operands[2]->i[0]);
    else out->f[k] = (float)(start + (double)k * delta);
  }
  return NULL;
}

/* MatMul of constants, as numpy's matmul: a 1-d operand is a row (a) or a
 * column (b) whose added dim is dropped again, batch dims broadcast. Sums
 * in double. */
static hetc_status_t fold_matmul(const hetc_onnx_const_t *a, const hetc_onnx_const_t *b, hetc_onnx_const_t *out) {
  if (a->rank < 1 || b->rank < 1) return BAD("MatMul of a scalar");
  const int64_t M = a->rank > 1 ? a->dims[a->rank - 2] : 1, K = a->dims[a->rank - 1];
  const int64_t KB = b->rank > 1 ? b->dims[b->rank - 2] : b->dims[0], N = b->rank > 1 ? b->dims[b->rank - 1] : 1;
  if (K != KB) return BAD("MatMul of [..., %lld, %lld] and [..., %lld, %lld]", (long long)M, (long long)K, (long long)KB,
                          (long long)N);
  const int32_t a_batch = a->rank > 2 ? a->rank - 2 : 0, b_batch = b->rank > 2 ? b->rank - 2 : 0;
  const int32_t batch = a_batch > b_batch ? a_batch : b_batch;
  int64_t dims[HETC_ONNX_MAX_RANK], a_dims[HETC_ONNX_MAX_RANK], b_dims[HETC_ONNX_MAX_RANK];
  for (int32_t d = 0; d < batch; ++d) {
    a_dims[d] = d < batch - a_batch ? 1 : a->dims[d - (batch - a_batch)];
    b_dims[d] = d < batch - b_batch ? 1 : b->dims[d - (batch - b_batch)];
    if (a_dims[d] != b_dims[d] && a_dims[d] != 1 && b_dims[d] != 1)
      return BAD("MatMul's batch dims do not broadcast (%lld and %lld)", (long long)a_dims[d], (long long)b_dims[d]);
    dims[d] = a_dims[d] == 1 ? b_dims[d] : a_dims[d];
  }
  int32_t rank = batch;
  if (a->rank > 1) dims[rank++] = M;
  if (b->rank > 1) dims[rank++] = N;
  HETC_RETURN_IF_ERROR(hetc_onnx_const_alloc(out, 0, rank, dims));
  const int64_t batches = batch ? out->count / ((a->rank > 1 ? M : 1) * (b->rank > 1 ? N : 1)) : 1;
  for (int64_t p = 0; p < batches; ++p) {
    int64_t rest = p, ia = 0, ib = 0, sa = 1, sb = 1;
    for (int32_t d = batch - 1; d >= 0; --d) {
      const int64_t index = rest % dims[d];
      rest /= dims[d];
      ia += (a_dims[d] == 1 ? 0 : index) * sa, sa *= a_dims[d];
      ib += (b_dims[d] == 1 ? 0 : index) * sb, sb *= b_dims[d];
    }
    for (int64_t m = 0; m < M; ++m)
      for (int64_t n = 0; n < N; ++n) {
        double sum = 0;
        for (int64_t k = 0; k < K; ++k)
          sum += hetc_onnx_const_get(a, (ia * M + m) * K + k) * hetc_onnx_const_get(b, (ib * K + k) * N + n);
        out->f[(p * M + m) * N + n] = (float)sum;
      }
  }
  return NULL;
}

/* ReduceMean, ReduceSum, ReduceMax, ReduceMin, ReduceL2, ReduceProd,
 * ReduceL1, ReduceSumSquare, ReduceLogSum and ReduceLogSumExp over the axes (attribute, or input 1 from ReduceSum-13 and the others' opset
 * 18; none: every axis, unless noop_with_empty_axes), keepdims. */
static hetc_status_t fold_reduce(const Onnx__NodeProto *node, const hetc_onnx_const_t *const *inputs,
                                 int32_t num_inputs, hetc_onnx_const_t *out) {
  const char *op = node->op_type + strlen("Reduce");
  const hetc_onnx_const_t *in = inputs[0];
  int64_t axes[HETC_ONNX_MAX_RANK], keepdims = 1, noop = 0;
  int32_t count = -1;
  HETC_RETURN_IF_ERROR(axes_of(node, inputs, num_inputs, axes, &count));
  HETC_RETURN_IF_ERROR(hetc_onnx_attr_int(node, "keepdims", 1, &keepdims));
  HETC_RETURN_IF_ERROR(hetc_onnx_attr_int(node, "noop_with_empty_axes", 0, &noop));
  if (count <= 0 && noop) return reshaped(in, in->rank, in->dims, out);
  int reduced[HETC_ONNX_MAX_RANK] = {0};
  for (int32_t k = 0; k < count; ++k) {
    HETC_RETURN_IF_ERROR(hetc_onnx_normalise_axis(&axes[k], in->rank));
    reduced[axes[k]] = 1;
  }
  int64_t dims[HETC_ONNX_MAX_RANK], kept_dims[HETC_ONNX_MAX_RANK], strides[HETC_ONNX_MAX_RANK];
  int32_t rank = 0;
  int64_t group = 1;
  for (int32_t d = 0; d < in->rank; ++d) {
    if (count <= 0) reduced[d] = 1;
    kept_dims[d] = reduced[d] ? 1 : in->dims[d];
    if (reduced[d]) group *= in->dims[d];
    if (!reduced[d] || keepdims) dims[rank++] = kept_dims[d];
  }
  if (group == 0 && (!strcmp(op, "Max") || !strcmp(op, "Min"))) return BAD("a %s over no values", node->op_type);
  const int keeps_int = in->is_int && strcmp(op, "Mean") != 0 && strcmp(op, "L2") != 0 && strncmp(op, "Log", 3) != 0;
  HETC_RETURN_IF_ERROR(hetc_onnx_const_alloc(out, keeps_int, rank, dims));
  row_major_strides(in, strides);
  double *acc = malloc(sizeof(double) * (size_t)(out->count ? out->count : 1));
  if (!acc) return hetc_status_new(HETC_STATUS_OUT_OF_MEMORY, "constant folding");
  const double start = !strcmp(op, "Max") ? -INFINITY : !strcmp(op, "Min") ? INFINITY : !strcmp(op, "Prod") ? 1 : 0;
  for (int64_t k = 0; k < out->count; ++k) acc[k] = start;
  for (int64_t k = 0; k < in->count; ++k) {
    int64_t o = 0;
    for (int32_t d = 0; d < in->rank; ++d) o = o * kept_dims[d] + (reduced[d] ? 0 : (k / strides[d]) % in->dims[d]);
    const double x = hetc_onnx_const_get(in, k);
    double *a = &acc[o];
    if (!strcmp(op, "Max")) *a = isnan(x) || isnan(*a) ? NAN : fmax(*a, x);
    else if (!strcmp(op, "Min")) *a = isnan(x) || isnan(*a) ? NAN : fmin(*a, x);
    else if (!strcmp(op, "Prod")) *a *= x;
    else if (!strcmp(op, "L2") || !strcmp(op, "SumSquare")) *a += x * x;
    else if (!strcmp(op, "L1")) *a += fabs(x);
    else if (!strcmp(op, "LogSumExp")) *a += exp(x);
    else *a += x;
  }
  for (int64_t k = 0; k < out->count; ++k) {
    const double v = !strcmp(op, "Mean")            ? acc[k] / (double)group
                     : !strcmp(op, "L2")            ? sqrt(acc[k])
                     : !strncmp(op, "LogSum", 6)    ? log(acc[k])
                                                    : acc[k];
    if (keeps_int && !fits_int64(v)) {
      free(acc);
      return BAD("the Reduce%s of integers is %g, past int64's range", op, v);
    }
    if (keeps_int) out->i[k] = (int64_t)v;
    else out->f[k] = (float)v;
  }
  free(acc);
  return NULL;
}

/* Clip: bounds as attributes (before opset 11) or inputs 1 and 2, each
 * omitted bound open. */
static hetc_status_t fold_clip(const Onnx__NodeProto *node, const hetc_onnx_const_t *const *inputs,
                               int32_t num_inputs, hetc_onnx_const_t *out) {
  const hetc_onnx_const_t *in = inputs[0], *lo_c = need(inputs, num_inputs, 1), *hi_c = need(inputs, num_inputs, 2);
  float lo_attr = -INFINITY, hi_attr = INFINITY;
  HETC_RETURN_IF_ERROR(hetc_onnx_attr_float(node, "min", -INFINITY, &lo_attr));
  HETC_RETURN_IF_ERROR(hetc_onnx_attr_float(node, "max", INFINITY, &hi_attr));
  if ((lo_c && lo_c->count != 1) || (hi_c && hi_c->count != 1)) return BAD("a bound must be one value");
  const double lo = lo_c ? hetc_onnx_const_get(lo_c, 0) : lo_attr, hi = hi_c ? hetc_onnx_const_get(hi_c, 0) : hi_attr;
  HETC_RETURN_IF_ERROR(hetc_onnx_const_alloc(out, in->is_int, in->rank, in->dims));
  for (int64_t k = 0; k < in->count; ++k) {
    const double x = hetc_onnx_const_get(in, k), raised = x < lo ? lo : x, y = isnan(x) ? x : raised > hi ? hi : raised;
    if (in->is_int && !fits_int64(y)) return BAD("a bound of %g is past int64's range", y);
    if (in->is_int) out->i[k] = (int64_t)y;
    else out->f[k] = (float)y;
  }
  return NULL;
}

/* A unary op of the importer's on one value, in double as the reference
 * executor computes, with the node's attributes. */
typedef struct unary_attrs_t {
  double alpha, beta;
} unary_attrs_t;

static double unary_value(const char *op, double x, const unary_attrs_t *a) {
  if (!strcmp(op, "Neg")) return -x;
  if (!strcmp(op, "Abs")) return fabs(x);
  if (!strcmp(op, "Sqrt")) return sqrt(x);
  if (!strcmp(op, "Floor")) return floor(x);
  if (!strcmp(op, "Ceil")) return ceil(x);
  if (!strcmp(op, "Sigmoid")) return 1 / (1 + exp(-x));
  if (!strcmp(op, "Tanh")) return tanh(x);
  if (!strcmp(op, "Exp")) return exp(x);
  if (!strcmp(op, "Log")) return log(x);
  if (!strcmp(op, "Softplus")) return x > 0 ? x + log1p(exp(-x)) : log1p(exp(x));
  if (!strcmp(op, "Softsign")) return x / (1 + fabs(x));
  if (!strcmp(op, "Mish")) return x * tanh(x > 0 ? x + log1p(exp(-x)) : log1p(exp(x)));
  if (!strcmp(op, "Elu")) return x > 0 ? x : a->alpha * expm1(x);
  if (!strcmp(op, "LeakyRelu")) return x >= 0 ? x : a->alpha * x;
  if (!strcmp(op, "HardSigmoid")) return fmax(0, fmin(1, a->alpha * x + a->beta));
  if (!strcmp(op, "HardSwish")) return x * fmax(0, fmin(1, x / 6 + 0.5));
  if (!strcmp(op, "Reciprocal")) return 1 / x;
  if (!strcmp(op, "Erf")) return erf(x);
  return x > 0 ? x : 0; /* Relu */
}

static hetc_status_t fold_unary(const Onnx__NodeProto *node, const hetc_onnx_const_t *in, hetc_onnx_const_t *out) {
  const char *op = node->op_type;
  /* Integer tensors stay integers where ONNX defines the op on them. */
  const int keeps_int = in->is_int && (!strcmp(op, "Neg") || !strcmp(op, "Abs") || !strcmp(op, "Relu") ||
                                       !strcmp(op, "Floor") || !strcmp(op, "Ceil"));
  float alpha = !strcmp(op, "LeakyRelu") ? 0.01f : !strcmp(op, "HardSigmoid") ? 0.2f : 1.0f, beta = 0.5f;
  if (!strcmp(op, "Elu") || !strcmp(op, "LeakyRelu") || !strcmp(op, "HardSigmoid"))
    HETC_RETURN_IF_ERROR(hetc_onnx_attr_float(node, "alpha", alpha, &alpha));
  if (!strcmp(op, "HardSigmoid")) HETC_RETURN_IF_ERROR(hetc_onnx_attr_float(node, "beta", beta, &beta));
  const unary_attrs_t attrs = {alpha, beta};
  HETC_RETURN_IF_ERROR(hetc_onnx_const_alloc(out, keeps_int, in->rank, in->dims));
  for (int64_t k = 0; k < in->count; ++k) {
    if (keeps_int) {
      const int64_t x = in->i[k];
      const int64_t negated = (int64_t)(0 - (uint64_t)x);
      out->i[k] = !strcmp(op, "Neg") ? negated : !strcmp(op, "Abs") ? (x < 0 ? negated : x)
                : !strcmp(op, "Relu") ? (x > 0 ? x : 0) : x;
    } else {
      out->f[k] = (float)unary_value(op, hetc_onnx_const_get(in, k), &attrs);
    }
  }
  return NULL;
}

hetc_status_t hetc_onnx_fold(const Onnx__NodeProto *node, int64_t opset, const hetc_onnx_file_t *file,
                             const hetc_onnx_const_t *const *inputs, int32_t num_inputs, hetc_onnx_const_t *outputs) {
  const char *op = node->op_type;
  const hetc_onnx_const_t *x = need(inputs, num_inputs, 0), *y = need(inputs, num_inputs, 1);
  if (strcmp(op, "Constant") != 0 && !x) return BAD("input 0 is missing");
  if (!strcmp(op, "Constant")) return fold_constant(node, file, &outputs[0]);
  if (!strcmp(op, "Shape")) return fold_shape(node, x, &outputs[0]);
  if (!strcmp(op, "Size")) {
    const int64_t one = 1;
    HETC_RETURN_IF_ERROR(hetc_onnx_const_alloc(&outputs[0], 1, 0, &one));
    outputs[0].i[0] = x->count;
    return NULL;
  }
  if (!strcmp(op, "Gather")) return y ? fold_gather(node, x, y, &outputs[0]) : BAD("input 1 is missing");
  if (!strcmp(op, "Expand") || !strcmp(op, "Tile"))
    return y ? fold_repeat(node, x, y, &outputs[0]) : BAD("input 1 is missing");
  if (!strcmp(op, "Unsqueeze") || !strcmp(op, "Squeeze")) return fold_squeeze(node, inputs, num_inputs, &outputs[0]);
  if (!strcmp(op, "Concat")) return fold_concat(node, inputs, num_inputs, &outputs[0]);
  if (!strcmp(op, "Cast")) return fold_cast(node, x, &outputs[0]);
  /* CastLike's second input gives the type only: float32 or int64 here
   * (a computed one is float32). */
  if (!strcmp(op, "CastLike"))
    return y ? cast_values(x, !y->is_int, 0, &outputs[0]) : BAD("input 1 is missing");
  if (!strcmp(op, "ConstantOfShape")) return fold_constant_of_shape(node, x, file, &outputs[0]);
  if (!strcmp(op, "Reshape")) return y ? fold_reshape(node, x, y, &outputs[0]) : BAD("input 1 is missing");
  if (!strcmp(op, "Flatten")) return fold_flatten(node, x, &outputs[0]);
  if (!strcmp(op, "Slice")) return fold_slice(node, opset, inputs, num_inputs, &outputs[0]);
  if (!strcmp(op, "Transpose")) return fold_transpose(node, x, &outputs[0]);
  if (!strcmp(op, "Identity") || !strcmp(op, "Dropout")) {
    HETC_RETURN_IF_ERROR(reshaped(x, x->rank, x->dims, &outputs[0]));
    if (node->n_output > 1) {
      HETC_RETURN_IF_ERROR(hetc_onnx_const_alloc(&outputs[1], 1, x->rank, x->dims));
      for (int64_t k = 0; k < x->count; ++k) outputs[1].i[k] = 1;
    }
    return NULL;
  }
  if (!strcmp(op, "Add") || !strcmp(op, "Sub") || !strcmp(op, "Mul") || !strcmp(op, "Div") || !strcmp(op, "Pow") ||
      is_compare_or_logic(op))
    return y ? fold_binary(op, x, y, &outputs[0]) : BAD("input 1 is missing");
  if (!strcmp(op, "Mod")) {
    int64_t c_fmod = 0;
    HETC_RETURN_IF_ERROR(hetc_onnx_attr_int(node, "fmod", 0, &c_fmod));
    if (c_fmod != 0 && c_fmod != 1) return BAD("attribute 'fmod' is %lld; it is 0 or 1", (long long)c_fmod);
    return y ? fold_binary(c_fmod ? "FMod" : "Mod", x, y, &outputs[0]) : BAD("input 1 is missing");
  }
  if (!strcmp(op, "Where") || !strcmp(op, "Range") || !strcmp(op, "ScatterND")) {
    if (num_inputs < 3 || !inputs[1] || !inputs[2]) return BAD("%s takes 3 inputs", op);
    if (!strcmp(op, "ScatterND")) return fold_scatter_nd(node, inputs, &outputs[0]);
    return !strcmp(op, "Where") ? fold_where(inputs, &outputs[0]) : fold_range(inputs, &outputs[0]);
  }
  if (!strcmp(op, "Not")) {
    HETC_RETURN_IF_ERROR(hetc_onnx_const_alloc(&outputs[0], 1, x->rank, x->dims));
    for (int64_t k = 0; k < x->count; ++k) outputs[0].i[k] = hetc_onnx_const_get(x, k) == 0;
    return NULL;
  }
  if (!strcmp(op, "Max") || !strcmp(op, "Min") || !strcmp(op, "Sum")) { /* variadic: left to right */
    HETC_RETURN_IF_ERROR(reshaped(x, x->rank, x->dims, &outputs[0]));
    for (int32_t k = 1; k < num_inputs; ++k) {
      if (!inputs[k]) return BAD("input %d is missing", (int)k);
      hetc_onnx_const_t next;
      hetc_status_t status = fold_binary(op, &outputs[0], inputs[k], &next);
      hetc_onnx_const_release(&outputs[0]);
      if (status) return status;
      outputs[0] = next;
    }
    return NULL;
  }
  if (!strncmp(op, "Reduce", 6)) return fold_reduce(node, inputs, num_inputs, &outputs[0]);
  if (!strcmp(op, "MatMul")) return y ? fold_matmul(x, y, &outputs[0]) : BAD("input 1 is missing");
  if (!strcmp(op, "GatherND")) return y ? fold_gather_nd(node, x, y, &outputs[0]) : BAD("input 1 is missing");
  if (!strcmp(op, "Clip")) return fold_clip(node, inputs, num_inputs, &outputs[0]);
  return fold_unary(node, x, &outputs[0]);
}
