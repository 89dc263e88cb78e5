/* export_onnx MODEL.json OUT.onnx: writes a model.json (and its weights,
 * random or from a file) as an ONNX model (opset 13), node for node, with
 * the protobuf-c code hetc's importer reads with. A test tool: it lets
 * test_samples_round_trip.sh take every sample model through ONNX and back
 * without committing hundreds of megabytes of exported weights. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/model.h"
#include "onnx.pb-c.h"

/* Everything the ModelProto points to, freed together at the end. */
static void **arena;
static size_t arena_count, arena_capacity;

static void *grab(size_t size) {
  void *memory = calloc(1, size ? size : 1);
  if (!memory) {
    fprintf(stderr, "export_onnx: out of memory\n");
    exit(1);
  }
  if (arena_count == arena_capacity) {
    arena_capacity = arena_capacity ? 2 * arena_capacity : 1024;
    arena = realloc(arena, sizeof(void *) * arena_capacity);
    if (!arena) exit(1);
  }
  arena[arena_count++] = memory;
  return memory;
}

static char *text(const char *format, const char *a, const char *b) {
  const size_t size = strlen(format) + strlen(a) + strlen(b) + 1;
  char *out = grab(size);
  snprintf(out, size, format, a, b);
  return out;
}

/* The graph being written. */
static Onnx__GraphProto graph = ONNX__GRAPH_PROTO__INIT;
static size_t node_capacity, initializer_capacity;

static Onnx__TensorProto *add_initializer(const char *name, int32_t rank, const int64_t *dims, int32_t type) {
  if (graph.n_initializer == initializer_capacity) {
    initializer_capacity = initializer_capacity ? 2 * initializer_capacity : 256;
    Onnx__TensorProto **grown = grab(sizeof(*grown) * initializer_capacity);
    if (graph.n_initializer) memcpy(grown, graph.initializer, sizeof(*grown) * graph.n_initializer);
    graph.initializer = grown;
  }
  Onnx__TensorProto *t = grab(sizeof(*t));
  onnx__tensor_proto__init(t);
  t->name = (char *)name;
  t->n_dims = (size_t)rank;
  t->dims = grab(sizeof(int64_t) * (size_t)(rank + 1));
  memcpy(t->dims, dims, sizeof(int64_t) * (size_t)rank);
  t->has_data_type = 1;
  t->data_type = type;
  graph.initializer[graph.n_initializer++] = t;
  return t;
}

static void float_initializer(const char *name, int32_t rank, const int64_t *dims, const float *data, int64_t count) {
  Onnx__TensorProto *t = add_initializer(name, rank, dims, 1);
  t->has_raw_data = 1;
  t->raw_data.len = sizeof(float) * (size_t)count;
  t->raw_data.data = grab(t->raw_data.len);
  memcpy(t->raw_data.data, data, t->raw_data.len);
}

static void int_initializer(const char *name, int32_t rank, const int64_t *data) {
  const int64_t dims[1] = {rank};
  Onnx__TensorProto *t = add_initializer(name, 1, dims, 7);
  t->n_int64_data = (size_t)rank;
  t->int64_data = grab(sizeof(int64_t) * (size_t)rank);
  memcpy(t->int64_data, data, sizeof(int64_t) * (size_t)rank);
}

static Onnx__NodeProto *add_node(const char *op, const char *output, int num_inputs) {
  if (graph.n_node == node_capacity) {
    node_capacity = node_capacity ? 2 * node_capacity : 256;
    Onnx__NodeProto **grown = grab(sizeof(*grown) * node_capacity);
    if (graph.n_node) memcpy(grown, graph.node, sizeof(*grown) * graph.n_node);
    graph.node = grown;
  }
  Onnx__NodeProto *n = grab(sizeof(*n));
  onnx__node_proto__init(n);
  n->op_type = (char *)op;
  n->name = text("%s%s", output, "");
  n->n_output = 1;
  n->output = grab(sizeof(char *));
  n->output[0] = (char *)output;
  n->n_input = (size_t)num_inputs;
  n->input = grab(sizeof(char *) * (size_t)(num_inputs + 1));
  graph.node[graph.n_node++] = n;
  return n;
}

static Onnx__AttributeProto *attribute(Onnx__NodeProto *n, const char *name, Onnx__AttributeProto__AttributeType type) {
  Onnx__AttributeProto **grown = grab(sizeof(*grown) * (n->n_attribute + 1));
  if (n->n_attribute) memcpy(grown, n->attribute, sizeof(*grown) * n->n_attribute);
  n->attribute = grown;
  Onnx__AttributeProto *a = grab(sizeof(*a));
  onnx__attribute_proto__init(a);
  a->name = (char *)name;
  a->has_type = 1;
  a->type = type;
  n->attribute[n->n_attribute++] = a;
  return a;
}

static void int_attribute(Onnx__NodeProto *n, const char *name, int64_t value) {
  Onnx__AttributeProto *a = attribute(n, name, ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INT);
  a->has_i = 1;
  a->i = value;
}

static void ints_attribute(Onnx__NodeProto *n, const char *name, const int32_t *values, int count) {
  Onnx__AttributeProto *a = attribute(n, name, ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INTS);
  a->n_ints = (size_t)count;
  a->ints = grab(sizeof(int64_t) * (size_t)count);
  for (int k = 0; k < count; ++k) a->ints[k] = values[k];
}

static void window(Onnx__NodeProto *n, const hetc_node_attrs_t *a) {
  ints_attribute(n, "kernel_shape", a->kernel, 2);
  ints_attribute(n, "strides", a->strides, 2);
  ints_attribute(n, "pads", a->padding, 4);
}

static Onnx__ValueInfoProto *value_info(const hetc_value_t *v) {
  Onnx__ValueInfoProto *info = grab(sizeof(*info));
  onnx__value_info_proto__init(info);
  info->name = v->name;
  info->type = grab(sizeof(Onnx__TypeProto));
  onnx__type_proto__init(info->type);
  info->type->value_case = ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE;
  info->type->tensor_type = grab(sizeof(Onnx__TypeProto__Tensor));
  onnx__type_proto__tensor__init(info->type->tensor_type);
  info->type->tensor_type->has_elem_type = 1;
  info->type->tensor_type->elem_type = 1;
  Onnx__TensorShapeProto *shape = grab(sizeof(*shape));
  onnx__tensor_shape_proto__init(shape);
  shape->n_dim = (size_t)v->type.rank;
  shape->dim = grab(sizeof(*shape->dim) * (size_t)v->type.rank);
  for (int32_t d = 0; d < v->type.rank; ++d) {
    shape->dim[d] = grab(sizeof(Onnx__TensorShapeProto__Dimension));
    onnx__tensor_shape_proto__dimension__init(shape->dim[d]);
    shape->dim[d]->value_case = ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE;
    shape->dim[d]->dim_value = v->type.shape[d];
  }
  info->type->tensor_type->shape = shape;
  return info;
}

/* One hetc node as ONNX nodes and initializers. */
static void export_node(const hetc_graph_t *g, const hetc_node_t *node) {
  const char *out = g->values[node->output].name;
  const char *in = g->values[node->inputs[0]].name;
  const hetc_node_attrs_t *a = &node->attrs;
  const hetc_param_t *p = node->params;
  Onnx__NodeProto *n = NULL;
  switch (node->op) {
    case HETC_OP_CONV2D:
      n = add_node("Conv", out, 2 + a->has_bias);
      n->input[1] = text("%s%s", node->name, ".weight");
      float_initializer(n->input[1], 4, p[HETC_PARAM_WEIGHT].shape, p[HETC_PARAM_WEIGHT].data, p[HETC_PARAM_WEIGHT].count);
      if (a->has_bias) {
        n->input[2] = text("%s%s", node->name, ".bias");
        float_initializer(n->input[2], 1, p[HETC_PARAM_BIAS].shape, p[HETC_PARAM_BIAS].data, p[HETC_PARAM_BIAS].count);
      }
      window(n, a);
      ints_attribute(n, "dilations", a->dilation, 2);
      int_attribute(n, "group", a->groups);
      break;
    case HETC_OP_DENSE:
      n = add_node("Gemm", out, 2 + a->has_bias);
      n->input[1] = text("%s%s", node->name, ".weight");
      float_initializer(n->input[1], 2, p[HETC_PARAM_WEIGHT].shape, p[HETC_PARAM_WEIGHT].data, p[HETC_PARAM_WEIGHT].count);
      if (a->has_bias) {
        n->input[2] = text("%s%s", node->name, ".bias");
        float_initializer(n->input[2], 1, p[HETC_PARAM_BIAS].shape, p[HETC_PARAM_BIAS].data, p[HETC_PARAM_BIAS].count);
      }
      int_attribute(n, "transB", 1);
      break;
    case HETC_OP_BATCH_NORM: {
      static const char *const suffixes[4] = {".gamma", ".beta", ".mean", ".var"};
      n = add_node("BatchNormalization", out, 5);
      for (int k = 0; k < 4; ++k) {
        n->input[1 + k] = text("%s%s", node->name, suffixes[k]);
        float_initializer(n->input[1 + k], 1, p[k].shape, p[k].data, p[k].count);
      }
      Onnx__AttributeProto *epsilon = attribute(n, "epsilon", ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOAT);
      epsilon->has_f = 1;
      epsilon->f = (float)a->epsilon;
      break;
    }
    case HETC_OP_BIAS_ADD: {
      /* [C,1,1] broadcasts over a 4-d value's channels, [C] over a 2-d one's. */
      const int64_t channels = p[HETC_PARAM_BIAS].count, dims[3] = {channels, 1, 1};
      n = add_node("Add", out, 2);
      n->input[1] = text("%s%s", node->name, ".bias");
      float_initializer(n->input[1], g->values[node->inputs[0]].type.rank == 4 ? 3 : 1, dims, p[HETC_PARAM_BIAS].data,
                        channels);
      break;
    }
    case HETC_OP_RELU: n = add_node("Relu", out, 1); break;
    case HETC_OP_SIGMOID: n = add_node("Sigmoid", out, 1); break;
    case HETC_OP_TANH: n = add_node("Tanh", out, 1); break;
    case HETC_OP_ELU: n = add_node("Elu", out, 1); break;
    case HETC_OP_SOFTPLUS: n = add_node("Softplus", out, 1); break;
    case HETC_OP_EXP: n = add_node("Exp", out, 1); break;
    case HETC_OP_LOG: n = add_node("Log", out, 1); break;
    case HETC_OP_RELU6: {
      const int64_t none[1] = {0};
      const float zero = 0, six = 6;
      n = add_node("Clip", out, 3);
      n->input[1] = text("%s%s", node->name, ".min");
      n->input[2] = text("%s%s", node->name, ".max");
      float_initializer(n->input[1], 0, none, &zero, 1);
      float_initializer(n->input[2], 0, none, &six, 1);
      break;
    }
    case HETC_OP_ADD: n = add_node("Add", out, 2); break;
    case HETC_OP_MULTIPLY: n = add_node("Mul", out, 2); break;
    case HETC_OP_DIVIDE: n = add_node("Div", out, 2); break;
    case HETC_OP_MAX_POOL2D:
    case HETC_OP_AVG_POOL2D:
      n = add_node(node->op == HETC_OP_MAX_POOL2D ? "MaxPool" : "AveragePool", out, 1);
      window(n, a);
      int_attribute(n, "ceil_mode", a->ceil_mode);
      if (node->op == HETC_OP_AVG_POOL2D) int_attribute(n, "count_include_pad", a->count_include_pad);
      break;
    case HETC_OP_GLOBAL_AVG_POOL2D: n = add_node("GlobalAveragePool", out, 1); break;
    case HETC_OP_CONCAT:
      n = add_node("Concat", out, node->num_inputs);
      int_attribute(n, "axis", a->axis);
      break;
    case HETC_OP_FLATTEN: n = add_node("Flatten", out, 1); break;
    case HETC_OP_RESHAPE:
      n = add_node("Reshape", out, 2);
      n->input[1] = text("%s%s", node->name, ".shape");
      int_initializer(n->input[1], a->reshape_rank, a->reshape_shape);
      break;
    case HETC_OP_SOFTMAX:
    case HETC_OP_LOG_SOFTMAX:
      n = add_node(node->op == HETC_OP_SOFTMAX ? "Softmax" : "LogSoftmax", out, 1);
      int_attribute(n, "axis", a->axis);
      break;
    case HETC_OP_TRANSPOSE:
      n = add_node("Transpose", out, 1);
      ints_attribute(n, "perm", a->perm, a->perm_rank);
      break;
    default:
      fprintf(stderr, "export_onnx: op %s has no ONNX form here\n", hetc_op_name(node->op));
      exit(1);
  }
  n->input[0] = (char *)in;
  if (node->op == HETC_OP_ADD || node->op == HETC_OP_MULTIPLY || node->op == HETC_OP_DIVIDE || node->op == HETC_OP_CONCAT)
    for (int32_t i = 1; i < node->num_inputs; ++i) n->input[i] = g->values[node->inputs[i]].name;
}

int main(int argc, char **argv) {
  if (argc != 3) {
    fprintf(stderr, "usage: export_onnx MODEL.json OUT.onnx\n");
    return 2;
  }
  hetc_graph_t *g = NULL;
  hetc_status_t status = hetc_model_load_file(argv[1], &g);
  if (status) {
    fprintf(stderr, "export_onnx: %s\n", hetc_status_message(status));
    return 1;
  }
  graph.name = g->name;
  graph.n_input = (size_t)g->num_inputs;
  graph.input = grab(sizeof(*graph.input) * (size_t)g->num_inputs);
  for (int32_t i = 0; i < g->num_inputs; ++i) graph.input[i] = value_info(&g->values[g->inputs[i]]);
  for (int32_t k = 0; k < g->num_nodes; ++k) export_node(g, &g->nodes[k]);
  graph.n_output = (size_t)g->num_outputs;
  graph.output = grab(sizeof(*graph.output) * (size_t)g->num_outputs);
  for (int32_t o = 0; o < g->num_outputs; ++o) graph.output[o] = value_info(&g->values[g->outputs[o]]);
  Onnx__OperatorSetIdProto opset = ONNX__OPERATOR_SET_ID_PROTO__INIT;
  opset.domain = "";
  opset.has_version = 1;
  opset.version = 13;
  Onnx__OperatorSetIdProto *opsets[1] = {&opset};
  Onnx__ModelProto model = ONNX__MODEL_PROTO__INIT;
  model.has_ir_version = 1;
  model.ir_version = 7;
  model.producer_name = "hetc export_onnx (tests)";
  model.n_opset_import = 1;
  model.opset_import = opsets;
  model.graph = &graph;
  const size_t size = onnx__model_proto__get_packed_size(&model);
  uint8_t *bytes = grab(size);
  onnx__model_proto__pack(&model, bytes);
  FILE *f = fopen(argv[2], "wb");
  const int ok = f && fwrite(bytes, 1, size, f) == size;
  if (f && fclose(f) != 0) return 1;
  for (size_t k = 0; k < arena_count; ++k) free(arena[k]);
  free(arena);
  hetc_graph_free(g);
  if (!ok) fprintf(stderr, "export_onnx: cannot write %s\n", argv[2]);
  return ok ? 0 : 1;
}
