/* driver/model/onnx_importer.h -- the state an ONNX import builds hetc's
 * graph in, shared by the walk over the model (onnx_import.c) and the
 * per-op translations (onnx_ops.c). Internal to driver/model. */
#ifndef HETC_DRIVER_MODEL_ONNX_IMPORTER_H_
#define HETC_DRIVER_MODEL_ONNX_IMPORTER_H_

#include "common/name_map.h"
#include "graph/graph.h"
#include "model/onnx_tensor.h"

/* What an ONNX value name stands for. */
typedef enum { ONNX_VALUE_NONE, ONNX_VALUE_CONST, ONNX_VALUE_ACTIVATION } onnx_value_kind_t;

typedef struct onnx_value_t {
  const char *name; /* borrowed from the ModelProto */
  onnx_value_kind_t kind;
  hetc_onnx_const_t constant; /* CONST */
  int32_t value;              /* ACTIVATION: hetc value id */
} onnx_value_t;

typedef struct hetc_onnx_importer_t {
  hetc_onnx_file_t file;
  int64_t opset; /* of the default domain */
  hetc_graph_t *graph;
  int32_t nodes_capacity, values_capacity;
  onnx_value_t *values; /* every ONNX value name seen, by index */
  int32_t num_values, max_values;
  hetc_name_map_t *value_index; /* ONNX name -> values[] */
  hetc_name_map_t *hetc_names;  /* hetc names taken (inputs and nodes) */
  hetc_name_map_t *read_names;  /* every name a node reads or the graph outputs, to a slot of: */
  int64_t *sole_readers;        /* the one node that reads the name, once; -1: several, or a graph output */
  int64_t folded_elements;      /* values of the constants computed so far */
  /* The node being translated, for messages. */
  const Onnx__NodeProto *node;
  int32_t node_index;
} hetc_onnx_importer_t;

/* Translates the current node (im->node), whose inputs are not all
 * constant, into hetc nodes. Failures are bare BAD_INPUT messages. */
hetc_status_t hetc_onnx_translate_node(hetc_onnx_importer_t *im);
/* A GELU as exporters write it op by op: each step reads the step before
 * (the first reads x) and, per `other`, nothing else (unary), x, or a
 * constant of one value near `value`. Div and Pow take the running value
 * first; Add and Mul either way round. */
enum { HETC_ONNX_CHAIN_MAX = 9 };
typedef struct hetc_onnx_chain_step_t {
  const char *op;
  char other; /* 0: unary; 'x': the chain's input; 'c': a constant */
  double value;
} hetc_onnx_chain_step_t;
typedef struct hetc_onnx_chain_t {
  hetc_op_t op; /* what the chain computes */
  int32_t length;
  hetc_onnx_chain_step_t steps[HETC_ONNX_CHAIN_MAX];
} hetc_onnx_chain_t;
/* torch's legacy exports of nn.GELU(): the exact form (Div(x, sqrt 2) or
 * Mul(x, 1 / sqrt 2), Erf, Add 1, Mul x, Mul 0.5) and the tanh form (x^3 as
 * Pow(x, 3) or Mul(x, Mul(x, x)), Mul 0.044715, Add x, Mul sqrt(2 / pi),
 * Tanh, Add 1, Mul x, Mul 0.5). */
extern const hetc_onnx_chain_t hetc_onnx_gelu_chains[];
extern const int32_t hetc_onnx_gelu_chain_count;
/* A chain the walk (onnx_import.c) found by its ops and readers, every
 * intermediate read once, with im->node its last node: when x is computed
 * and every constant the chain's, appends one node of the chain's op named
 * after the last output and sets *out_fused; else leaves the graph alone. */
hetc_status_t hetc_onnx_translate_gelu_chain(hetc_onnx_importer_t *im, const hetc_onnx_chain_t *chain,
                                             const Onnx__NodeProto *const *nodes, const char *x_name,
                                             int *out_fused);
/* Whether hetc_onnx_translate_node knows op_type. */
int hetc_onnx_translatable(const char *op_type);

/* The value an input name stands for, or NULL when no node, input or
 * initializer produces it. */
onnx_value_t *hetc_onnx_lookup(hetc_onnx_importer_t *im, const char *name);
/* Whether a node or the graph's outputs read value `name`: an output no
 * one reads (Dropout's mask, a statistic of training) is dropped, not
 * refused. */
int hetc_onnx_is_read(const hetc_onnx_importer_t *im, const char *name);
/* Registers a node's output `name` (the name must be new). */
hetc_status_t hetc_onnx_define(hetc_onnx_importer_t *im, const char *name, onnx_value_t **out_value);

/* Appends a hetc node of `op` reading `inputs`, named after `name_hint`
 * (made a valid, unused hetc name), with `attrs`; infers its output type.
 * *out_node is its index (valid until the next append). */
hetc_status_t hetc_onnx_append_node(hetc_onnx_importer_t *im, hetc_op_t op, const char *name_hint,
                                    const int32_t *inputs, int32_t num_inputs, const hetc_node_attrs_t *attrs,
                                    int32_t *out_node);

/* Makes a valid hetc name from `hint` into out (at most 256 bytes), unused
 * so far, and records it. */
hetc_status_t hetc_onnx_claim_name(hetc_onnx_importer_t *im, const char *hint, char **out_name);

#endif /* HETC_DRIVER_MODEL_ONNX_IMPORTER_H_ */
