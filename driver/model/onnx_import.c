/* ONNX import: the walk over a ModelProto (onnx_import.h). */
#include "model/onnx_import.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/escape.h"
#include "common/fileio.h"
#include "graph/infer.h"
#include "model/onnx_depth.h"
#include "model/onnx_fold.h"
#include "model/onnx_importer.h"
#include "model/onnx_schema.h"

#define BAD(...) hetc_status_new(HETC_STATUS_BAD_INPUT, __VA_ARGS__)
#define MIN_OPSET 6
/* Opsets 22 to 28 changed the ops hetc imports only by the types they
 * take (bfloat16, 4-bit and 8-bit floats, 2-bit integers), except Cast 28
 * (round_mode, for casts to 8-bit floats) and SpaceToDepth 28 (mode, as
 * DepthToSpace has): onnx_schema.c lists those forms. */
#define MAX_OPSET 28
#define MAX_GRAPH_IO 16
/* hetc nodes one ONNX node becomes, at most (a strided ConvTranspose: eleven). */
#define NODES_PER_ONNX_NODE 11

static hetc_status_t out_of_memory(void) { return hetc_status_new(HETC_STATUS_OUT_OF_MEMORY, "ONNX import"); }

/* ---- names ------------------------------------------------------------------ */

static int valid_name_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '.' ||
         c == ':' || c == '/' || c == '-';
}

hetc_status_t hetc_onnx_claim_name(hetc_onnx_importer_t *im, const char *hint, char **out_name) {
  char base[208], candidate[256];
  size_t length = 0;
  for (const char *p = hint ? hint : ""; *p && length < 200; ++p) base[length++] = valid_name_char(*p) ? *p : '_';
  base[length] = 0;
  if (!length) snprintf(base, sizeof(base), "node");
  snprintf(candidate, sizeof(candidate), "%s", base);
  for (int suffix = 1; hetc_name_map_get(im->hetc_names, candidate) >= 0; ++suffix)
    snprintf(candidate, sizeof(candidate), "%s.%d", base, suffix);
  char *name = strdup(candidate);
  if (!name) return out_of_memory();
  hetc_name_map_put(im->hetc_names, name, 0);
  *out_name = name;
  return NULL;
}

/* ---- values ------------------------------------------------------------------ */

onnx_value_t *hetc_onnx_lookup(hetc_onnx_importer_t *im, const char *name) {
  const int32_t index = hetc_name_map_get(im->value_index, name);
  return index < 0 ? NULL : &im->values[index];
}

int hetc_onnx_is_read(const hetc_onnx_importer_t *im, const char *name) {
  return name && name[0] && hetc_name_map_get(im->read_names, name) >= 0;
}

hetc_status_t hetc_onnx_define(hetc_onnx_importer_t *im, const char *name, onnx_value_t **out_value) {
  if (!name || !name[0]) return BAD("a value has no name");
  if (im->num_values == im->max_values) return BAD("more values than the model declares");
  const int32_t index = im->num_values;
  if (hetc_name_map_put(im->value_index, name, index) != index)
    return BAD("value '%s' is assigned twice (an ONNX value has one producer)", name);
  memset(&im->values[index], 0, sizeof(onnx_value_t));
  im->values[index].name = name;
  im->num_values++;
  *out_value = &im->values[index];
  return NULL;
}

/* ---- hetc's graph ----------------------------------------------------------- */

static hetc_status_t reserve_node(hetc_onnx_importer_t *im) {
  hetc_graph_t *g = im->graph;
  if (g->num_nodes < im->nodes_capacity) return NULL;
  const int32_t capacity = im->nodes_capacity ? 2 * im->nodes_capacity : 64;
  hetc_node_t *nodes = realloc(g->nodes, sizeof(hetc_node_t) * (size_t)capacity);
  if (!nodes) return out_of_memory();
  g->nodes = nodes;
  hetc_value_t *values = realloc(g->values, sizeof(hetc_value_t) * (size_t)(g->num_inputs + capacity));
  if (!values) return out_of_memory();
  g->values = values;
  im->nodes_capacity = capacity;
  return NULL;
}

hetc_status_t hetc_onnx_append_node(hetc_onnx_importer_t *im, hetc_op_t op, const char *name_hint,
                                    const int32_t *inputs, int32_t num_inputs, const hetc_node_attrs_t *attrs,
                                    int32_t *out_node) {
  hetc_graph_t *g = im->graph;
  HETC_RETURN_IF_ERROR(reserve_node(im));
  const int32_t k = g->num_nodes, v = g->num_inputs + k;
  hetc_node_t *node = &g->nodes[k];
  memset(node, 0, sizeof(*node));
  memset(&g->values[v], 0, sizeof(hetc_value_t));
  g->num_nodes++, g->num_values++;
  node->op = op;
  node->attrs = *attrs;
  node->output = v;
  node->num_inputs = num_inputs;
  node->inputs = malloc(sizeof(int32_t) * (size_t)num_inputs);
  HETC_RETURN_IF_ERROR(hetc_onnx_claim_name(im, name_hint, &node->name));
  g->values[v].name = strdup(node->name);
  g->values[v].producer = k;
  if (!node->inputs || !g->values[v].name) return out_of_memory();
  memcpy(node->inputs, inputs, sizeof(int32_t) * (size_t)num_inputs);
  char where[HETC_INFER_WHERE_SIZE];
  hetc_status_t status = hetc_graph_infer_node(g, k, where);
  if (status) status = hetc_status_annotate(status, "as hetc's %s", hetc_op_name(op));
  *out_node = k;
  return status;
}

/* ---- the model's inputs -------------------------------------------------------- */

typedef struct shape_option_t {
  char name[256];
  int32_t rank;
  int64_t dims[HETC_PLUGIN_MAX_RANK];
  int used;
} shape_option_t;

/* "NAME=1x3x224x224". */
static hetc_status_t parse_shape_option(const char *text, shape_option_t *out) {
  memset(out, 0, sizeof(*out));
  const char *equals = strrchr(text, '=');
  if (!equals || equals == text || (size_t)(equals - text) >= sizeof(out->name))
    return BAD("--input-shape: '%s' is not NAME=DIMS (e.g. input=1x3x224x224)", text);
  memcpy(out->name, text, (size_t)(equals - text));
  const char *p = equals + 1;
  while (1) {
    char *end = NULL;
    const long long dim = *p >= '0' && *p <= '9' ? strtoll(p, &end, 10) : -1;
    if (dim < 1 || dim > HETC_MAX_TENSOR_ELEMENTS || out->rank == HETC_PLUGIN_MAX_RANK)
      return BAD("--input-shape: '%s' is not NAME=DIMS with 1 to %d positive dims (e.g. input=1x3x224x224)", text,
                 HETC_PLUGIN_MAX_RANK);
    out->dims[out->rank++] = dim;
    if (!*end) return NULL;
    if (*end != 'x') return BAD("--input-shape: '%s' is not NAME=DIMS (e.g. input=1x3x224x224)", text);
    p = end + 1;
  }
}

/* A graph input that no initializer fills: one of the model's inputs. */
static hetc_status_t add_data_input(hetc_onnx_importer_t *im, const Onnx__ValueInfoProto *info,
                                    shape_option_t *options, int32_t num_options) {
  hetc_graph_t *g = im->graph;
  const char *name = info->name ? info->name : "";
  const Onnx__TypeProto__Tensor *tensor =
      info->type && info->type->value_case == ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE ? info->type->tensor_type : NULL;
  if (!tensor) return BAD("graph input '%s' is not a tensor", name);
  if (!tensor->has_elem_type || tensor->elem_type != 1)
    return BAD("graph input '%s' is %s; hetc models take float32 inputs", name,
               hetc_onnx_type_name(tensor->has_elem_type ? tensor->elem_type : 0));
  if (g->num_inputs == MAX_GRAPH_IO) return BAD("more than %d graph inputs", MAX_GRAPH_IO);
  hetc_plugin_tensor_t type;
  memset(&type, 0, sizeof(type));
  type.dtype = HETC_PLUGIN_DTYPE_FLOAT32;
  shape_option_t *option = NULL;
  for (int32_t o = 0; o < num_options && !option; ++o)
    if (!strcmp(options[o].name, name)) option = &options[o];
  if (option) {
    option->used = 1;
    type.rank = option->rank;
    memcpy(type.shape, option->dims, sizeof(int64_t) * (size_t)option->rank);
  } else {
    const Onnx__TensorShapeProto *shape = tensor->shape;
    if (!shape) return BAD("graph input '%s' has no shape; give it with --input-shape %s=1x3x224x224", name, name);
    if (shape->n_dim < 1 || shape->n_dim > HETC_PLUGIN_MAX_RANK)
      return BAD("graph input '%s' has rank %zu; hetc takes inputs of rank 1 to %d", name, shape->n_dim,
                 HETC_PLUGIN_MAX_RANK);
    type.rank = (int32_t)shape->n_dim;
    for (size_t d = 0; d < shape->n_dim; ++d) {
      const Onnx__TensorShapeProto__Dimension *dim = shape->dim[d];
      if (dim->value_case == ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE && dim->dim_value < 1)
        return BAD("graph input '%s': dimension %zu is %lld; a dimension is 1 or more", name, d,
                   (long long)dim->dim_value);
      if (dim->value_case != ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE) {
        const char *symbol = dim->value_case == ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_PARAM && dim->dim_param
                                 ? dim->dim_param : "?";
        return BAD("graph input '%s': dimension %zu is symbolic ('%s'); give the input's shape with --input-shape "
                   "%s=DIMS (e.g. %s=1x3x224x224)", name, d, symbol, name, name);
      }
      type.shape[d] = dim->dim_value;
    }
  }
  if (hetc_tensor_element_count(&type) > HETC_MAX_TENSOR_ELEMENTS || hetc_tensor_element_count(&type) < 1)
    return BAD("graph input '%s' has more than 2^31 elements", name);
  const int32_t v = g->num_inputs;
  g->inputs[v] = v;
  g->num_inputs++, g->num_values++;
  memset(&g->values[v], 0, sizeof(hetc_value_t));
  g->values[v].type = type;
  g->values[v].producer = -1;
  HETC_RETURN_IF_ERROR(hetc_onnx_claim_name(im, name, &g->values[v].name));
  onnx_value_t *value = NULL;
  HETC_RETURN_IF_ERROR(hetc_onnx_define(im, name, &value));
  value->kind = ONNX_VALUE_ACTIVATION;
  value->value = v;
  return NULL;
}

/* A graph input an initializer fills must declare the initializer's shape
 * where it declares one: a model whose two disagree was not written for the
 * weights it holds. */
static hetc_status_t check_initializer_declaration(const Onnx__ValueInfoProto *info, const hetc_onnx_const_t *value) {
  const Onnx__TypeProto__Tensor *tensor =
      info->type && info->type->value_case == ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE ? info->type->tensor_type : NULL;
  if (!tensor || !tensor->shape) return NULL;
  const Onnx__TensorShapeProto *shape = tensor->shape;
  int agrees = shape->n_dim == (size_t)value->rank;
  for (size_t d = 0; agrees && d < shape->n_dim; ++d)
    agrees = shape->dim[d]->value_case != ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE ||
             shape->dim[d]->dim_value == value->dims[d];
  if (agrees) return NULL;
  char declared[160] = "", held[160];
  size_t used = 0;
  for (size_t d = 0; d < shape->n_dim && used < sizeof(declared); ++d) {
    const Onnx__TensorShapeProto__Dimension *dim = shape->dim[d];
    if (dim->value_case == ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE)
      used += (size_t)snprintf(declared + used, sizeof(declared) - used, "%s%lld", d ? "," : "",
                               (long long)dim->dim_value);
    else
      used += (size_t)snprintf(declared + used, sizeof(declared) - used, "%s?", d ? "," : "");
  }
  hetc_onnx_const_dims_text(value, held, sizeof(held));
  return BAD("graph input '%s' declares shape [%s], but the initializer of that name holds [%s]",
             info->name ? info->name : "", declared, held);
}

/* ---- nodes ------------------------------------------------------------------------ */

static hetc_status_t fold_node(hetc_onnx_importer_t *im) {
  const Onnx__NodeProto *n = im->node;
  const hetc_onnx_const_t *inputs[HETC_MAX_NODE_INPUTS];
  hetc_onnx_const_t shape_view;
  const int32_t num_inputs = (int32_t)n->n_input;
  if (num_inputs > HETC_MAX_NODE_INPUTS) return BAD("%d inputs is more than hetc evaluates", (int)num_inputs);
  for (int32_t k = 0; k < num_inputs; ++k) {
    const onnx_value_t *v = n->input[k][0] ? hetc_onnx_lookup(im, n->input[k]) : NULL;
    inputs[k] = v ? &v->constant : NULL;
    if (v && v->kind == ONNX_VALUE_ACTIVATION) {
      /* Shape and Size read only the dims, which are known; CastLike the
       * type, float32 (is_int 0). */
      const hetc_plugin_tensor_t *t = &im->graph->values[v->value].type;
      memset(&shape_view, 0, sizeof(shape_view));
      shape_view.rank = t->rank;
      memcpy(shape_view.dims, t->shape, sizeof(int64_t) * (size_t)t->rank);
      shape_view.count = hetc_tensor_element_count(t);
      inputs[k] = &shape_view;
    }
  }
  if (n->n_output < 1) return BAD("the node has no output");
  hetc_onnx_const_t *outputs = calloc(n->n_output, sizeof(hetc_onnx_const_t));
  if (!outputs) return out_of_memory();
  hetc_status_t status = hetc_onnx_fold(n, im->opset, &im->file, inputs, num_inputs, outputs);
  for (size_t k = 0; !status && k < n->n_output; ++k) im->folded_elements += outputs[k].count;
  if (!status && im->folded_elements > HETC_ONNX_MAX_FOLDED_ELEMENTS)
    status = BAD("the constants computed at import hold more than 2^28 (268435456) values in all (api/limits.md)");
  for (size_t k = 0; k < n->n_output; ++k) {
    onnx_value_t *v = NULL;
    if (!status && n->output[k][0] && !(status = hetc_onnx_define(im, n->output[k], &v))) {
      v->kind = ONNX_VALUE_CONST;
      v->constant = outputs[k];
    } else {
      hetc_onnx_const_release(&outputs[k]);
    }
  }
  free(outputs);
  return status;
}

static hetc_status_t import_node(hetc_onnx_importer_t *im) {
  const Onnx__NodeProto *n = im->node;
  if (n->domain && n->domain[0] && strcmp(n->domain, "ai.onnx") != 0)
    return BAD("domain '%s' is not supported (hetc imports ONNX's default domain)", n->domain);
  if (!n->op_type || !n->op_type[0]) return BAD("the node has no op_type");
  HETC_RETURN_IF_ERROR(hetc_onnx_check_schema(n, im->opset));
  /* Shape and Size read only their input's dims, and CastLike only its
   * second input's type, which are known of a computed value too. */
  const int dims_only = !strcmp(n->op_type, "Shape") || !strcmp(n->op_type, "Size") ? 0
                        : !strcmp(n->op_type, "CastLike")                           ? 1
                                                                                    : -1;
  int all_constant = 1, all_folded_constant = 1;
  for (size_t k = 0; k < n->n_input; ++k) {
    if (!n->input[k][0]) continue; /* an omitted optional input */
    const onnx_value_t *v = hetc_onnx_lookup(im, n->input[k]);
    if (!v)
      return BAD("input %zu ('%s') is not produced by any node, graph input or initializer before this node", k,
                 n->input[k]);
    all_constant &= v->kind == ONNX_VALUE_CONST;
    all_folded_constant &= v->kind == ONNX_VALUE_CONST || (int)k == dims_only;
  }
  if (all_folded_constant && hetc_onnx_foldable(n->op_type)) return fold_node(im);
  if (all_constant && hetc_onnx_translatable(n->op_type))
    return BAD("every input is a constant, and hetc evaluates %s at import only on computed values", n->op_type);
  return hetc_onnx_translate_node(im);
}

/* The node that reads value `name`, when it is the one node that does,
 * reading it once, and the value is no graph output; else -1. */
static int64_t sole_reader(const hetc_onnx_importer_t *im, const char *name) {
  const int32_t slot = hetc_name_map_get(im->read_names, name);
  return slot < 0 ? -1 : im->sole_readers[slot];
}

static int is_op(const Onnx__NodeProto *n, const char *op, size_t inputs) {
  return n->op_type && !strcmp(n->op_type, op) && n->n_input == inputs && n->n_output == 1 && n->output[0][0] &&
         (!n->domain || !n->domain[0] || !strcmp(n->domain, "ai.onnx"));
}

/* The input of binary node n that is not `running`, when n reads `running`
 * where the op allows it (Div and Pow: first only); else NULL. */
static const char *other_operand(const Onnx__NodeProto *n, const char *running) {
  const int ordered = !strcmp(n->op_type, "Div") || !strcmp(n->op_type, "Pow");
  if (!strcmp(n->input[0], running)) return n->input[1];
  return !ordered && !strcmp(n->input[1], running) ? n->input[0] : NULL;
}

/* Whether node k starts chain c (hetc_onnx_gelu_chains), going by the ops
 * and their readers: each intermediate is read by the next step alone and
 * is no graph output. The constants may be defined only further on; the
 * chain's last node checks them. Fills nodes with the steps' node indices
 * and *x_name with the value the chain is of. */
static int gelu_chain_at(const hetc_onnx_importer_t *im, const Onnx__GraphProto *g, size_t k,
                         const hetc_onnx_chain_t *c, int64_t *nodes, const char **x_name) {
  if (!is_op(g->node[k], c->steps[0].op, c->steps[0].other ? 2 : 1)) return 0;
  nodes[0] = (int64_t)k;
  for (int32_t s = 1; s < c->length; ++s) {
    nodes[s] = sole_reader(im, g->node[nodes[s - 1]]->output[0]);
    /* Inputs are defined before their readers: a reader before the step
     * would be a graph the walk refuses anyway. */
    if (nodes[s] <= nodes[s - 1]) return 0;
    if (!is_op(g->node[nodes[s]], c->steps[s].op, c->steps[s].other ? 2 : 1)) return 0;
  }
  /* x: the other operand of the first step past the head that reads it. */
  const char *x = NULL;
  for (int32_t s = 1; s < c->length && !x; ++s)
    if (c->steps[s].other == 'x') x = other_operand(g->node[nodes[s]], g->node[nodes[s - 1]]->output[0]);
  const Onnx__NodeProto *head = g->node[k];
  if (!x || !is_op(head, c->steps[0].op, c->steps[0].other ? 2 : 1)) return 0;
  const char *head_other = c->steps[0].other ? other_operand(head, x) : NULL;
  if (c->steps[0].other && (!head_other || (c->steps[0].other == 'x') != !strcmp(head_other, x))) return 0;
  for (int32_t s = 1; s < c->length; ++s) {
    const Onnx__NodeProto *n = g->node[nodes[s]];
    if (!c->steps[s].other) continue;
    const char *other = other_operand(n, g->node[nodes[s - 1]]->output[0]);
    if (!other || (c->steps[s].other == 'x') != !strcmp(other, x)) return 0;
  }
  *x_name = x;
  return 1;
}

/* The chain of hetc_onnx_gelu_chains that node k starts, or NULL. */
static const hetc_onnx_chain_t *gelu_chain(const hetc_onnx_importer_t *im, const Onnx__GraphProto *g, size_t k,
                                           int64_t *nodes, const char **x_name) {
  for (int32_t c = 0; c < hetc_onnx_gelu_chain_count; ++c)
    if (gelu_chain_at(im, g, k, &hetc_onnx_gelu_chains[c], nodes, x_name)) return &hetc_onnx_gelu_chains[c];
  return NULL;
}

/* "node 'NAME' (index K, OP)", or by its output when it has no name. */
static void describe_node(const Onnx__NodeProto *n, int32_t index, char *out, size_t size) {
  const char *op = n->op_type && n->op_type[0] ? n->op_type : "no op_type";
  if (n->name && n->name[0]) snprintf(out, size, "node '%s' (index %d, %s)", n->name, (int)index, op);
  else if (n->n_output && n->output[0][0]) snprintf(out, size, "node %d (%s, output '%s')", (int)index, op, n->output[0]);
  else snprintf(out, size, "node %d (%s)", (int)index, op);
}

/* ---- outputs, dead nodes, the whole model ------------------------------------- */

static hetc_status_t set_outputs(hetc_onnx_importer_t *im, const Onnx__GraphProto *graph) {
  hetc_graph_t *g = im->graph;
  if (graph->n_output < 1 || graph->n_output > MAX_GRAPH_IO)
    return BAD("the graph has %zu outputs; hetc models have 1 to %d", graph->n_output, MAX_GRAPH_IO);
  g->outputs = calloc(graph->n_output, sizeof(int32_t));
  g->output_names = calloc(graph->n_output, sizeof(char *));
  if (!g->outputs || !g->output_names) return out_of_memory();
  for (size_t o = 0; o < graph->n_output; ++o) {
    const char *name = graph->output[o]->name ? graph->output[o]->name : "";
    const onnx_value_t *v = hetc_onnx_lookup(im, name);
    if (!v) return BAD("graph output '%s' is not produced by any node, graph input or initializer", name);
    if (v->kind != ONNX_VALUE_ACTIVATION)
      return BAD("graph output '%s' is a constant (computed without the model's input); hetc models compute their "
                 "outputs from their inputs", name);
    for (size_t p = 0; p < o; ++p)
      if (g->outputs[p] == v->value)
        return BAD("graph output '%s' is the same value as graph output '%s'", name, graph->output[p]->name);
    g->outputs[o] = v->value;
    g->output_names[g->num_outputs++] = strdup(g->values[v->value].name);
    if (!g->output_names[o]) return out_of_memory();
  }
  return NULL;
}

/* Drops the nodes no output reads (what folding left behind, unused
 * branches); value ids stay "inputs, then one per node in order". Returns
 * how many went through *out_dropped. */
static hetc_status_t drop_dead_nodes(hetc_graph_t *g, int32_t *out_dropped) {
  char *live = calloc((size_t)g->num_values + 1, 1);
  int32_t *renumber = calloc((size_t)g->num_values + 1, sizeof(int32_t));
  if (!live || !renumber) {
    free(live), free(renumber);
    return out_of_memory();
  }
  for (int32_t o = 0; o < g->num_outputs; ++o) live[g->outputs[o]] = 1;
  for (int32_t k = g->num_nodes - 1; k >= 0; --k)
    if (live[g->nodes[k].output])
      for (int32_t i = 0; i < g->nodes[k].num_inputs; ++i) live[g->nodes[k].inputs[i]] = 1;
  hetc_status_t status = NULL;
  for (int32_t i = 0; i < g->num_inputs && !status; ++i) {
    renumber[i] = i;
    if (!live[i]) status = BAD("graph input '%s' is not used to compute any graph output", g->values[i].name);
  }
  int32_t kept = 0;
  for (int32_t k = 0; k < g->num_nodes && !status; ++k) {
    hetc_node_t *node = &g->nodes[k];
    const int32_t v = g->num_inputs + k;
    if (!live[node->output]) {
      hetc_node_release(node);
      free(g->values[v].name);
      continue;
    }
    const int32_t new_v = g->num_inputs + kept;
    renumber[v] = new_v;
    for (int32_t i = 0; i < node->num_inputs; ++i) node->inputs[i] = renumber[node->inputs[i]];
    node->output = new_v;
    g->values[new_v] = g->values[v];
    g->values[new_v].producer = kept;
    g->nodes[kept++] = *node;
  }
  if (!status) {
    for (int32_t o = 0; o < g->num_outputs; ++o) g->outputs[o] = renumber[g->outputs[o]];
    *out_dropped = g->num_nodes - kept;
    g->num_nodes = kept;
    g->num_values = g->num_inputs + kept;
  }
  free(live);
  free(renumber);
  return status;
}

static int32_t default_domain_opset(const Onnx__ModelProto *model, int *out_found) {
  *out_found = 0;
  int64_t version = 0;
  for (size_t k = 0; k < model->n_opset_import; ++k) {
    const Onnx__OperatorSetIdProto *set = model->opset_import[k];
    if (!set->domain || !set->domain[0] || !strcmp(set->domain, "ai.onnx")) {
      *out_found = 1;
      version = set->has_version ? set->version : 0;
    }
  }
  return version < 0 || version > 1000000 ? -1 : (int32_t)version;
}

static void note(const hetc_model_load_options_t *options, const char *format, ...) HETC_PLUGIN_PRINTF(2, 3);
static void note(const hetc_model_load_options_t *options, const char *format, ...) {
  if (!options || !options->note) return;
  char message[1024];
  va_list args;
  va_start(args, format);
  vsnprintf(message, sizeof(message), format, args);
  va_end(args);
  options->note(options->note_user, message);
}

static hetc_status_t import_graph(hetc_onnx_importer_t *im, const Onnx__GraphProto *graph,
                                  const hetc_model_load_options_t *options) {
  hetc_graph_t *g = im->graph;
  shape_option_t shape_options[MAX_GRAPH_IO];
  const int32_t num_shape_options = options ? options->num_input_shapes : 0;
  if (num_shape_options > MAX_GRAPH_IO) return BAD("--input-shape is given more than %d times", MAX_GRAPH_IO);
  for (int32_t o = 0; o < num_shape_options; ++o)
    HETC_RETURN_IF_ERROR(parse_shape_option(options->input_shapes[o], &shape_options[o]));

  size_t max_values = graph->n_input + graph->n_initializer + 1;
  for (size_t k = 0; k < graph->n_node; ++k) max_values += graph->node[k]->n_output;
  if (max_values > (size_t)INT32_MAX / (2 * NODES_PER_ONNX_NODE)) return BAD("the graph has too many values");
  im->max_values = (int32_t)max_values;
  im->values = calloc(max_values, sizeof(onnx_value_t));
  im->value_index = hetc_name_map_create(im->max_values);
  /* Sum becomes one add per input past the first. */
  size_t max_names = graph->n_input + 1;
  for (size_t k = 0; k < graph->n_node; ++k) max_names += NODES_PER_ONNX_NODE + graph->node[k]->n_input;
  if (max_names > (size_t)INT32_MAX / 4) return BAD("the graph has too many nodes");
  im->hetc_names = hetc_name_map_create((int32_t)max_names);
  size_t max_reads = graph->n_output + 1;
  for (size_t k = 0; k < graph->n_node; ++k) max_reads += graph->node[k]->n_input;
  if (max_reads > (size_t)INT32_MAX / 4) return BAD("the graph has too many node inputs");
  im->read_names = hetc_name_map_create((int32_t)max_reads);
  im->sole_readers = malloc(sizeof(int64_t) * max_reads);
  g->inputs = calloc(MAX_GRAPH_IO, sizeof(int32_t));
  g->values = calloc(MAX_GRAPH_IO, sizeof(hetc_value_t));
  if (!im->values || !im->value_index || !im->hetc_names || !im->read_names || !im->sole_readers || !g->inputs ||
      !g->values)
    return out_of_memory();
  int32_t slots = 0;
  for (size_t k = 0; k < graph->n_node; ++k)
    for (size_t i = 0; i < graph->node[k]->n_input; ++i) {
      if (!graph->node[k]->input[i]) continue;
      const int32_t slot = hetc_name_map_put(im->read_names, graph->node[k]->input[i], slots);
      if (slot == slots) im->sole_readers[slots++] = (int64_t)k;
      else if (slot >= 0) im->sole_readers[slot] = -1;
    }
  for (size_t k = 0; k < graph->n_output; ++k) {
    if (!graph->output[k]->name) continue;
    const int32_t slot = hetc_name_map_put(im->read_names, graph->output[k]->name, slots);
    if (slot == slots) ++slots;
    if (slot >= 0) im->sole_readers[slot] = -1;
  }

  for (size_t k = 0; k < graph->n_initializer; ++k) {
    const Onnx__TensorProto *t = graph->initializer[k];
    const char *name = t->name ? t->name : "";
    onnx_value_t *v = NULL;
    const char *converted = NULL;
    hetc_status_t status = hetc_onnx_define(im, name, &v);
    if (!status) status = hetc_onnx_tensor_decode(t, &im->file, &v->constant, &converted);
    if (status) return hetc_status_annotate(status, "%s: initializer '%s'", im->file.display_name, name);
    v->kind = ONNX_VALUE_CONST;
    if (converted)
      note(options, "%s: initializer '%s' is %s; hetc converted it to float32", im->file.display_name, name, converted);
  }
  hetc_name_map_t *input_names = hetc_name_map_create((int32_t)graph->n_input + 1);
  if (!input_names) return out_of_memory();
  hetc_status_t input_status = NULL;
  for (size_t k = 0; k < graph->n_input && !input_status; ++k) {
    const char *name = graph->input[k]->name ? graph->input[k]->name : "";
    if (hetc_name_map_put(input_names, name, (int32_t)k) != (int32_t)k) {
      input_status = BAD("%s: graph input '%s' is declared twice", im->file.display_name, name);
      break;
    }
    const onnx_value_t *initializer = hetc_onnx_lookup(im, name);
    if (initializer) /* a weight, listed among the inputs (IR 3) */
      input_status = check_initializer_declaration(graph->input[k], &initializer->constant);
    else
      input_status = add_data_input(im, graph->input[k], shape_options, num_shape_options);
    if (input_status) input_status = hetc_status_annotate(input_status, "%s", im->file.display_name);
  }
  hetc_name_map_free(input_names);
  HETC_RETURN_IF_ERROR(input_status);
  if (!g->num_inputs) return BAD("%s: the graph has no input that an initializer does not fill", im->file.display_name);
  for (int32_t o = 0; o < num_shape_options; ++o)
    if (!shape_options[o].used)
      return BAD("--input-shape: %s has no graph input '%s'", im->file.display_name, shape_options[o].name);

  /* Nodes go after the inputs in the values array. */
  hetc_value_t *values = realloc(g->values, sizeof(hetc_value_t) * (size_t)g->num_inputs);
  if (values) g->values = values;
  /* A GELU chain's nodes but the last wait for it (head_of: the first's
   * index, at the last's), where they become one gelu, or, when x or a
   * constant is not the chain's, are imported one by one after all. */
  int64_t *head_of = malloc(sizeof(int64_t) * (graph->n_node + 1));
  uint8_t *deferred = calloc(graph->n_node + 1, 1);
  if (!head_of || !deferred) {
    free(head_of), free(deferred);
    return out_of_memory();
  }
  for (size_t k = 0; k < graph->n_node; ++k) head_of[k] = -1;
  for (size_t k = 0; k < graph->n_node; ++k) {
    if (deferred[k]) continue;
    int64_t chain[HETC_ONNX_CHAIN_MAX];
    const char *x_name = NULL;
    const hetc_onnx_chain_t *c = head_of[k] < 0 ? gelu_chain(im, graph, k, chain, &x_name) : NULL;
    hetc_status_t status = NULL;
    if (c) {
      for (int32_t s = 0; s + 1 < c->length; ++s) deferred[chain[s]] = 1;
      head_of[chain[c->length - 1]] = (int64_t)k;
      continue;
    }
    if (head_of[k] >= 0) {
      c = gelu_chain(im, graph, (size_t)head_of[k], chain, &x_name);
      const Onnx__NodeProto *nodes[HETC_ONNX_CHAIN_MAX] = {NULL};
      for (int32_t s = 0; s < c->length && !status; ++s) {
        im->node = nodes[s] = graph->node[chain[s]];
        im->node_index = (int32_t)chain[s];
        status = hetc_onnx_check_schema(im->node, im->opset);
      }
      int fused = 0;
      if (!status) status = hetc_onnx_translate_gelu_chain(im, c, nodes, x_name, &fused);
      for (int32_t s = 0; s < c->length && !status && !fused; ++s) {
        im->node = nodes[s];
        im->node_index = (int32_t)chain[s];
        status = import_node(im);
      }
    } else {
      im->node = graph->node[k];
      im->node_index = (int32_t)k;
      status = import_node(im);
    }
    if (status) {
      free(head_of), free(deferred);
      char where[600];
      describe_node(im->node, im->node_index, where, sizeof(where));
      return hetc_status_annotate(status, "%s: %s", im->file.display_name, where);
    }
  }
  free(head_of);
  free(deferred);
  hetc_status_t status = set_outputs(im, graph);
  if (status) return hetc_status_annotate(status, "%s", im->file.display_name);
  int32_t dropped = 0, cycle_node = -1;
  status = drop_dead_nodes(g, &dropped);
  /* In the loader's order, so that the model.json `hetc import` writes
   * fuses (and so compiles) exactly as this graph does. */
  if (!status) status = hetc_graph_sort_topologically(g, NULL, &cycle_node);
  if (status) return hetc_status_annotate(status, "%s", im->file.display_name);
  if (!g->num_nodes) return BAD("%s: no node computes the outputs (hetc models have at least one)", im->file.display_name);
  if (dropped) note(options, "%s: %d nodes that no graph output reads were left out", im->file.display_name, (int)dropped);
  return NULL;
}

/* The model's name: the file's, without folder or ".onnx", as a hetc
 * name. */
static char *model_name(const char *display_name) {
  const char *base = strrchr(display_name, '/');
  base = base ? base + 1 : display_name;
  size_t length = strlen(base);
  if (length > 5 && !strcmp(base + length - 5, ".onnx")) length -= 5;
  if (length > 200) length = 200;
  char *name = malloc(length + 8);
  if (!name) return NULL;
  for (size_t k = 0; k < length; ++k) name[k] = valid_name_char(base[k]) ? base[k] : '_';
  name[length] = 0;
  if (!length) strcpy(name, "model");
  return name;
}

/* ---- names from the file, as messages print them ------------------------------------ */

/* Replaces *text (allocated by protobuf-c's default allocator, malloc)
 * by its escaped copy when it holds a control byte; 0 when out of memory.
 * A field the file leaves out points at a constant default, which holds
 * none and so is never freed here. */
static int escape_field(char **text) {
  if (!*text || !hetc_needs_escape(*text, NULL)) return 1;
  char *escaped = hetc_escape_controls(*text, NULL);
  if (!escaped) return 0;
  free(*text);
  *text = escaped;
  return 1;
}

static int escape_value_infos(Onnx__ValueInfoProto **infos, size_t count) {
  int ok = 1;
  for (size_t k = 0; k < count; ++k) {
    ok &= escape_field(&infos[k]->name);
    const Onnx__TypeProto *type = infos[k]->type;
    if (!type || type->value_case != ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE || !type->tensor_type->shape) continue;
    const Onnx__TensorShapeProto *shape = type->tensor_type->shape;
    for (size_t d = 0; d < shape->n_dim; ++d)
      if (shape->dim[d]->value_case == ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_PARAM)
        ok &= escape_field(&shape->dim[d]->dim_param);
  }
  return ok;
}

/* Every name of the main graph that a message may quote, escaped (a
 * newline in an op type would fake another line of output). Names are
 * escaped alike wherever they appear, so lookups by name still match; two
 * names become one only when one spells the other's escape, and such a file
 * is refused for assigning a value twice or computes what it then says. */
static hetc_status_t escape_names(Onnx__ModelProto *model) {
  int ok = 1;
  for (size_t k = 0; k < model->n_opset_import; ++k) ok &= escape_field(&model->opset_import[k]->domain);
  Onnx__GraphProto *graph = model->graph;
  if (!graph) return ok ? NULL : out_of_memory();
  for (size_t k = 0; k < graph->n_node; ++k) {
    Onnx__NodeProto *n = graph->node[k];
    ok &= escape_field(&n->name) & escape_field(&n->op_type) & escape_field(&n->domain);
    for (size_t i = 0; i < n->n_input; ++i) ok &= escape_field(&n->input[i]);
    for (size_t i = 0; i < n->n_output; ++i) ok &= escape_field(&n->output[i]);
    for (size_t i = 0; i < n->n_attribute; ++i) ok &= escape_field(&n->attribute[i]->name);
  }
  for (size_t k = 0; k < graph->n_initializer; ++k) {
    Onnx__TensorProto *t = graph->initializer[k];
    ok &= escape_field(&t->name);
    for (size_t e = 0; e < t->n_external_data; ++e)
      ok &= escape_field(&t->external_data[e]->key) & escape_field(&t->external_data[e]->value);
  }
  ok &= escape_value_infos(graph->input, graph->n_input) & escape_value_infos(graph->output, graph->n_output);
  return ok ? NULL : out_of_memory();
}

hetc_status_t hetc_onnx_import_buffer(const uint8_t *data, size_t length, const char *display_name,
                                     const char *base_dir, const hetc_model_load_options_t *options,
                                     hetc_graph_t **out_graph) {
  size_t deep_at = 0;
  if (hetc_onnx_nests_deeper(&onnx__model_proto__descriptor, data, length, HETC_ONNX_MAX_DEPTH, &deep_at))
    return BAD("%s: byte %zu: messages nest more than %d levels deep (hetc reads at most %d; api/limits.md)",
               display_name, deep_at, HETC_ONNX_MAX_DEPTH, HETC_ONNX_MAX_DEPTH);
  Onnx__ModelProto *model = onnx__model_proto__unpack(NULL, length, data);
  if (!model)
    return BAD("%s: not an ONNX model (the file does not parse as an ONNX ModelProto: truncated, or another format)",
               display_name);
  hetc_status_t status = escape_names(model);
  int found = 0;
  const int32_t opset = default_domain_opset(model, &found);
  if (!status && (!model->graph || !model->has_ir_version))
    status = BAD("%s: not an ONNX model (no %s; is it another format?)", display_name,
                 !model->graph ? "graph" : "ir_version");
  else if (!status && !found)
    status = BAD("%s: the model imports no opset of the default ONNX domain", display_name);
  else if (!status && (opset < MIN_OPSET || opset > MAX_OPSET))
    status = BAD("%s: opset %d of the default domain is not supported (hetc imports opsets %d to %d)", display_name,
                 (int)opset, MIN_OPSET, MAX_OPSET);
  hetc_onnx_importer_t im;
  memset(&im, 0, sizeof(im));
  im.file.display_name = display_name;
  im.file.base_dir = base_dir;
  im.file.shapes_only = options && options->shapes_only;
  im.opset = opset;
  im.graph = calloc(1, sizeof(hetc_graph_t));
  if (!status && !im.graph) status = out_of_memory();
  if (!status) status = import_graph(&im, model->graph, options);
  if (!status) {
    im.graph->name = model_name(display_name);
    im.graph->source_path = strdup(display_name);
    if (!im.graph->name || !im.graph->source_path) status = out_of_memory();
  }
  for (int32_t k = 0; k < im.num_values; ++k) hetc_onnx_const_release(&im.values[k].constant);
  free(im.values);
  hetc_name_map_free(im.value_index);
  hetc_name_map_free(im.hetc_names);
  hetc_name_map_free(im.read_names);
  free(im.sole_readers);
  onnx__model_proto__free_unpacked(model, NULL);
  if (status) {
    hetc_graph_free(im.graph);
    return status;
  }
  *out_graph = im.graph;
  return NULL;
}

hetc_status_t hetc_onnx_import_file(const char *path, const hetc_model_load_options_t *options,
                                   hetc_graph_t **out_graph) {
  char *data = NULL;
  size_t length = 0;
  HETC_RETURN_IF_ERROR(hetc_file_read_all(path, HETC_ONNX_MAX_FILE_BYTES, &data, &length));
  char *base_dir = hetc_path_dirname(path);
  hetc_status_t status = base_dir ? hetc_onnx_import_buffer((const uint8_t *)data, length, path, base_dir, options,
                                                            out_graph)
                                  : out_of_memory();
  free(base_dir);
  free(data);
  return status;
}
