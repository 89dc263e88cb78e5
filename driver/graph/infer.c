#include "graph/infer.h"

#include <stdio.h>
#include <string.h>

int64_t hetc_window_output_extent(int64_t input, int32_t kernel, int32_t stride,
                                  int32_t pad_begin, int32_t pad_end,
                                  int32_t dilation, int ceil_mode) {
  int64_t span = (int64_t)dilation * (kernel - 1) + 1;
  int64_t room = input + pad_begin + pad_end - span;
  if (room < 0) return 0;
  int64_t out = (ceil_mode ? (room + stride - 1) / stride : room / stride) + 1;
  /* With ceil_mode, a last window starting in the end padding is dropped,
   * as PyTorch does. */
  if (ceil_mode && (out - 1) * stride >= input + pad_begin) --out;
  return out;
}

static void format_shape(const hetc_plugin_tensor_t *t, char *buf, size_t size) {
  size_t used = (size_t)snprintf(buf, size, "[");
  for (int32_t i = 0; i < t->rank && used < size; ++i) {
    used += (size_t)snprintf(buf + used, size - used, i ? ",%lld" : "%lld",
                             (long long)t->shape[i]);
  }
  if (used < size) snprintf(buf + used, size - used, "]");
}

/* Whether a shape whose dims are each at most 2^31 has more than 2^31
 * elements; checking after each step keeps the product below 2^62. */
static int too_many_elements(const int64_t *dims, int32_t rank) {
  int64_t count = 1;
  for (int32_t i = 0; i < rank; ++i) {
    count *= dims[i];
    if (count > HETC_MAX_TENSOR_ELEMENTS) return 1;
  }
  return 0;
}

#define FAIL(where, ...)                                                       \
  do {                                                                         \
    snprintf(out_where, HETC_INFER_WHERE_SIZE, "%s", (where));                 \
    return hetc_status_new(HETC_STATUS_BAD_INPUT, __VA_ARGS__);                \
  } while (0)

static hetc_status_t expect_rank(const hetc_plugin_tensor_t *t, int32_t rank,
                                 const char *op, char *out_where) {
  if (t->rank == rank) return NULL;
  char shape[128];
  format_shape(t, shape, sizeof(shape));
  FAIL("inputs/0", "%s expects a %d-d input, got shape %s", op, rank, shape);
}

static hetc_status_t infer_window(hetc_graph_t *graph, hetc_node_t *node,
                                  hetc_plugin_tensor_t *out, char *out_where) {
  const hetc_plugin_tensor_t *in = &graph->values[node->inputs[0]].type;
  hetc_node_attrs_t *a = &node->attrs;
  const int is_conv = node->op == HETC_OP_CONV2D;
  HETC_RETURN_IF_ERROR(expect_rank(in, 4, hetc_op_name(node->op), out_where));
  if (is_conv) {
    if (in->shape[1] % a->groups != 0)
      FAIL("attrs/groups", "groups %d does not divide the %lld input channels",
           a->groups, (long long)in->shape[1]);
    if (a->channels % a->groups != 0)
      FAIL("attrs/groups", "groups %d does not divide the %lld output channels",
           a->groups, (long long)a->channels);
    /* The weight is a tensor too: [channels, C_in/groups, KH, KW]. */
    const int64_t weight[4] = {a->channels, in->shape[1] / a->groups, a->kernel[0], a->kernel[1]};
    if (too_many_elements(weight, 4))
      FAIL("", "weight of conv2d [%lld,%lld,%d,%d] has more than 2^31 elements",
           (long long)weight[0], (long long)weight[1], a->kernel[0], a->kernel[1]);
  } else {
    if (a->padding[0] >= a->kernel[0] || a->padding[2] >= a->kernel[0] ||
        a->padding[1] >= a->kernel[1] || a->padding[3] >= a->kernel[1])
      FAIL("attrs/padding", "pool padding must be smaller than the kernel [%d,%d]",
           a->kernel[0], a->kernel[1]);
  }
  int64_t oh = hetc_window_output_extent(in->shape[2], a->kernel[0], a->strides[0],
                                         a->padding[0], a->padding[2], a->dilation[0],
                                         a->ceil_mode);
  int64_t ow = hetc_window_output_extent(in->shape[3], a->kernel[1], a->strides[1],
                                         a->padding[1], a->padding[3], a->dilation[1],
                                         a->ceil_mode);
  if (oh < 1 || ow < 1) {
    char shape[128];
    format_shape(in, shape, sizeof(shape));
    FAIL("attrs/kernel",
         "kernel [%d,%d] (dilation [%d,%d]) does not fit the padded input %s",
         a->kernel[0], a->kernel[1], a->dilation[0], a->dilation[1], shape);
  }
  *out = *in;
  out->shape[1] = is_conv ? a->channels : in->shape[1];
  out->shape[2] = oh;
  out->shape[3] = ow;
  return NULL;
}

static hetc_status_t infer_binary(hetc_graph_t *graph, hetc_node_t *node,
                                  hetc_plugin_tensor_t *out, char *out_where) {
  const hetc_plugin_tensor_t *a = &graph->values[node->inputs[0]].type;
  const hetc_plugin_tensor_t *b = &graph->values[node->inputs[1]].type;
  int compatible = a->rank == b->rank;
  for (int32_t i = 0; compatible && i < a->rank; ++i) {
    compatible = b->shape[i] == a->shape[i] || b->shape[i] == 1;
  }
  if (!compatible) {
    char sa[128], sb[128];
    format_shape(a, sa, sizeof(sa));
    format_shape(b, sb, sizeof(sb));
    FAIL("inputs/1",
         "shape %s cannot broadcast to %s (same rank, each dim equal or 1)", sb, sa);
  }
  *out = *a;
  return NULL;
}

/* matmul: A [B..., M, K] and B [B..., K, N] of one rank, the batch dims
 * equal (no broadcasting: the importer expands what it must). */
static hetc_status_t infer_matmul(hetc_graph_t *graph, hetc_node_t *node, hetc_plugin_tensor_t *out,
                                  char *out_where) {
  const hetc_plugin_tensor_t *a = &graph->values[node->inputs[0]].type;
  const hetc_plugin_tensor_t *b = &graph->values[node->inputs[1]].type;
  char sa[128], sb[128];
  format_shape(a, sa, sizeof(sa));
  format_shape(b, sb, sizeof(sb));
  if (a->rank < 2) FAIL("inputs/0", "matmul expects inputs of rank 2 to 6, got %s", sa);
  if (b->rank != a->rank) FAIL("inputs/1", "matmul of %s and %s: the ranks differ", sa, sb);
  for (int32_t d = 0; d + 2 < a->rank; ++d)
    if (a->shape[d] != b->shape[d])
      FAIL("inputs/1", "matmul of %s and %s: batch dim %d differs (no broadcasting)", sa, sb, (int)d);
  if (a->shape[a->rank - 1] != b->shape[b->rank - 2])
    FAIL("inputs/1", "matmul of %s and %s: A's last dim is not B's next to last", sa, sb);
  *out = *a;
  out->shape[out->rank - 1] = b->shape[b->rank - 1];
  return NULL;
}

static hetc_status_t infer_concat(hetc_graph_t *graph, hetc_node_t *node,
                                  hetc_plugin_tensor_t *out, char *out_where) {
  const hetc_plugin_tensor_t *first = &graph->values[node->inputs[0]].type;
  int32_t axis = node->attrs.axis < 0 ? node->attrs.axis + first->rank : node->attrs.axis;
  if (axis < 0 || axis >= first->rank)
    FAIL("attrs/axis", "axis %d is out of range for rank %d", node->attrs.axis,
         first->rank);
  node->attrs.axis = axis;
  *out = *first;
  for (int32_t i = 1; i < node->num_inputs; ++i) {
    const hetc_plugin_tensor_t *t = &graph->values[node->inputs[i]].type;
    int ok = t->rank == first->rank;
    for (int32_t d = 0; ok && d < t->rank; ++d) ok = d == axis || t->shape[d] == first->shape[d];
    if (!ok) {
      char where[HETC_INFER_WHERE_SIZE];
      char s0[128], si[128];
      format_shape(first, s0, sizeof(s0));
      format_shape(t, si, sizeof(si));
      snprintf(where, sizeof(where), "inputs/%d", i);
      FAIL(where, "shape %s does not match %s outside axis %d", si, s0, axis);
    }
    out->shape[axis] += t->shape[axis];
  }
  return NULL;
}

static hetc_status_t infer_reshape(hetc_graph_t *graph, hetc_node_t *node,
                                   hetc_plugin_tensor_t *out, char *out_where) {
  const hetc_plugin_tensor_t *in = &graph->values[node->inputs[0]].type;
  int64_t total = hetc_tensor_element_count(in);
  *out = *in;
  if (node->op == HETC_OP_FLATTEN) {
    if (in->rank < 1) FAIL("inputs/0", "flatten needs a tensor of rank >= 1");
    out->rank = 2;
    out->shape[0] = in->shape[0];
    out->shape[1] = total / in->shape[0];
    return NULL;
  }
  const hetc_node_attrs_t *a = &node->attrs;
  int64_t known = 1;
  int32_t wildcard = -1;
  for (int32_t i = 0; i < a->reshape_rank; ++i) {
    if (a->reshape_shape[i] == -1) {
      wildcard = i;
    } else {
      known *= a->reshape_shape[i]; /* each entry <= 2^31: no overflow */
      if (known > HETC_MAX_TENSOR_ELEMENTS)
        FAIL("attrs/shape", "shape has more than 2^31 elements");
    }
  }
  out->rank = a->reshape_rank;
  memcpy(out->shape, a->reshape_shape, sizeof(out->shape));
  if (wildcard >= 0) {
    if (known == 0 || total % known != 0)
      FAIL("attrs/shape", "cannot infer -1: %lld elements are not a multiple of %lld",
           (long long)total, (long long)known);
    out->shape[wildcard] = total / known;
  } else if (known != total) {
    FAIL("attrs/shape", "shape has %lld elements, the input has %lld",
         (long long)known, (long long)total);
  }
  return NULL;
}

hetc_status_t hetc_graph_infer_node(hetc_graph_t *graph, int32_t node_index,
                                    char *out_where) {
  hetc_node_t *node = &graph->nodes[node_index];
  const hetc_plugin_tensor_t *in = &graph->values[node->inputs[0]].type;
  hetc_plugin_tensor_t out = *in;
  out_where[0] = 0;
  switch (node->op) {
    case HETC_OP_CONV2D:
    case HETC_OP_MAX_POOL2D:
    case HETC_OP_AVG_POOL2D:
      HETC_RETURN_IF_ERROR(infer_window(graph, node, &out, out_where));
      break;
    case HETC_OP_DENSE:
      HETC_RETURN_IF_ERROR(expect_rank(in, 2, "dense", out_where));
      out.shape[1] = node->attrs.channels;
      {
        const int64_t weight[2] = {node->attrs.channels, in->shape[1]};
        if (too_many_elements(weight, 2))
          FAIL("", "weight of dense [%lld,%lld] has more than 2^31 elements",
               (long long)weight[0], (long long)weight[1]);
      }
      break;
    case HETC_OP_BATCH_NORM:
    case HETC_OP_GLOBAL_AVG_POOL2D:
      HETC_RETURN_IF_ERROR(expect_rank(in, 4, hetc_op_name(node->op), out_where));
      if (node->op == HETC_OP_GLOBAL_AVG_POOL2D) out.shape[2] = out.shape[3] = 1;
      break;
    case HETC_OP_BIAS_ADD:
      if (in->rank != 2 && in->rank != 4)
        FAIL("inputs/0", "bias_add expects a 2-d or 4-d input, got rank %d", in->rank);
      break;
    case HETC_OP_RELU:
    case HETC_OP_RELU6:
    case HETC_OP_SIGMOID:
    case HETC_OP_TANH:
    case HETC_OP_ELU:
    case HETC_OP_SOFTPLUS:
    case HETC_OP_EXP:
    case HETC_OP_LOG:
    case HETC_OP_SILU:
    case HETC_OP_HARDSWISH:
    case HETC_OP_HARDSIGMOID:
    case HETC_OP_GELU:
    case HETC_OP_GELU_TANH:
    case HETC_OP_ERF: break;
    case HETC_OP_ADD:
    case HETC_OP_MULTIPLY:
    case HETC_OP_DIVIDE:
      HETC_RETURN_IF_ERROR(infer_binary(graph, node, &out, out_where));
      break;
    case HETC_OP_CONCAT:
      HETC_RETURN_IF_ERROR(infer_concat(graph, node, &out, out_where));
      break;
    case HETC_OP_FLATTEN:
    case HETC_OP_RESHAPE:
      HETC_RETURN_IF_ERROR(infer_reshape(graph, node, &out, out_where));
      break;
    case HETC_OP_SOFTMAX:
    case HETC_OP_LOG_SOFTMAX: {
      int32_t axis = node->attrs.axis < 0 ? node->attrs.axis + in->rank : node->attrs.axis;
      if (axis < 0 || axis >= in->rank)
        FAIL("attrs/axis", "axis %d is out of range for rank %d", node->attrs.axis,
             in->rank);
      node->attrs.axis = axis;
      break;
    }
    case HETC_OP_TRANSPOSE: {
      if (node->attrs.perm_rank != in->rank)
        FAIL("attrs/perm", "perm has %d entries, the input has rank %d", node->attrs.perm_rank, in->rank);
      int seen[HETC_PLUGIN_MAX_RANK] = {0};
      for (int32_t d = 0; d < in->rank; ++d) {
        const int32_t from = node->attrs.perm[d];
        if (from < 0 || from >= in->rank || seen[from]++)
          FAIL("attrs/perm", "perm is not a permutation of 0..%d", in->rank - 1);
        out.shape[d] = in->shape[from];
      }
      break;
    }
    case HETC_OP_RESIZE:
      HETC_RETURN_IF_ERROR(expect_rank(in, 4, "resize", out_where));
      out.shape[2] = node->attrs.resize_size[0];
      out.shape[3] = node->attrs.resize_size[1];
      /* Scales the model did not give are what the sizes make them. */
      for (int32_t k = 0; k < 2; ++k)
        if (!(node->attrs.resize.scales[k] > 0))
          node->attrs.resize.scales[k] = (double)out.shape[2 + k] / (double)in->shape[2 + k];
      break;
    case HETC_OP_MATMUL:
      HETC_RETURN_IF_ERROR(infer_matmul(graph, node, &out, out_where));
      break;
    case HETC_OP_NORMALIZE: {
      hetc_plugin_normalize_params_t *p = &node->attrs.normalize;
      if (in->rank < 2) FAIL("inputs/0", "normalize expects an input of rank 2 to 6, got rank %d", in->rank);
      const int32_t axis = p->axis < 0 ? p->axis + in->rank : p->axis;
      if (axis < 0 || axis >= in->rank) FAIL("attrs/axis", "axis %d is out of range for rank %d", p->axis, in->rank);
      p->axis = axis;
      if (p->num_axes == 0) p->num_axes = in->rank - p->axis;
      if (p->num_axes < 1 || p->axis + p->num_axes > in->rank)
        FAIL("attrs/num_axes", "%d axes from axis %d pass the last of rank %d", p->num_axes, p->axis, in->rank);
      if (in->shape[p->axis] % p->groups != 0)
        FAIL("attrs/groups", "%d groups do not divide dim %d (%lld)", p->groups, p->axis,
             (long long)in->shape[p->axis]);
      break;
    }
    case HETC_OP_COUNT: FAIL("op", "unknown op");
  }
  /* Each factor is below 2^31 (checked by the loader), so the running
   * product can be checked one step at a time without overflow. */
  int64_t count = 1;
  for (int32_t i = 0; i < out.rank; ++i) {
    count *= out.shape[i];
    if (count > HETC_MAX_TENSOR_ELEMENTS)
      FAIL("", "output of %s has more than 2^31 elements", hetc_op_name(node->op));
  }
  out.layout.kind = HETC_PLUGIN_LAYOUT_ROW_MAJOR;
  out.layout.block = 0;
  graph->values[node->output].type = out;
  return NULL;
}
