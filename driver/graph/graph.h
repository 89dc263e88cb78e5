/* driver/graph/graph.h -- the graph every later stage consumes.
 *
 * The model loader produces a hetc_graph_t with every value's shape
 * inferred and nodes in topological order; the passes (passes.h) rewrite it
 * in place; task extraction (tasks.h) and compilation read it. A graph owns
 * everything it points to and is released with hetc_graph_free. */
#ifndef HETC_DRIVER_GRAPH_GRAPH_H_
#define HETC_DRIVER_GRAPH_GRAPH_H_

#include <stdint.h>

#include "common/status.h"
#include "hetc/plugin.h"

/* Largest output H or W of a resize. */
#define HETC_MAX_RESIZE_EXTENT 16384

/* Most activation inputs a node can have (concat's limit plus a fused
 * residual). */
#define HETC_MAX_NODE_INPUTS 65

/* Operators of model.json, in the order of the format's table. */
typedef enum hetc_op_t {
  HETC_OP_CONV2D,
  HETC_OP_DENSE,
  HETC_OP_BATCH_NORM,
  HETC_OP_BIAS_ADD,
  HETC_OP_RELU,
  HETC_OP_RELU6,
  HETC_OP_SIGMOID,
  HETC_OP_TANH,
  HETC_OP_ADD,
  HETC_OP_MULTIPLY,
  HETC_OP_MAX_POOL2D,
  HETC_OP_AVG_POOL2D,
  HETC_OP_GLOBAL_AVG_POOL2D,
  HETC_OP_CONCAT,
  HETC_OP_FLATTEN,
  HETC_OP_RESHAPE,
  HETC_OP_SOFTMAX,
  HETC_OP_TRANSPOSE,
  HETC_OP_ELU,
  HETC_OP_SOFTPLUS,
  HETC_OP_DIVIDE,
  HETC_OP_EXP,
  HETC_OP_LOG,
  HETC_OP_LOG_SOFTMAX,
  HETC_OP_SILU,        /* x * sigmoid(x) */
  HETC_OP_HARDSWISH,   /* x * hardsigmoid(x) */
  HETC_OP_HARDSIGMOID, /* torch's: clamp(x / 6 + 1 / 2, 0, 1) */
  HETC_OP_GELU,        /* 0.5 x (1 + erf(x / sqrt 2)) */
  HETC_OP_GELU_TANH,   /* 0.5 x (1 + tanh(sqrt(2 / pi) (x + 0.044715 x^3))) */
  HETC_OP_ERF,
  HETC_OP_RESIZE, /* H and W of a 4-d value (hetc_plugin_resize_params_t) */
  HETC_OP_NORMALIZE, /* instance, group, layer norm (hetc_plugin_normalize_params_t) */
  HETC_OP_MATMUL,    /* [B..., M, K] x [B..., K, N], both computed */
  HETC_OP_COUNT
} hetc_op_t;

/* model.json spelling of an op, or NULL. */
const char *hetc_op_name(hetc_op_t op);

/* model.json's names (ONNX's) of resize's modes, coordinate transforms and
 * roundings: entry v names the hetc_plugin_resize_* value v; NULL-terminated. */
extern const char *const hetc_resize_mode_names[];
extern const char *const hetc_resize_coordinates_names[];
extern const char *const hetc_resize_rounding_names[];
/* The index of `name` in a NULL-terminated list, or -1. */
int32_t hetc_name_index(const char *const *names, const char *name);
/* Ops whose kernels have knobs, so that records, the tuner and graph-level
 * selection have configs to choose among (README.md, "Tuning"). */
static inline int hetc_op_is_tunable(hetc_op_t op) { return op == HETC_OP_CONV2D || op == HETC_OP_DENSE; }
static inline int hetc_workload_is_tunable(const hetc_plugin_workload_t *workload) {
  return workload->op == HETC_PLUGIN_OP_CONV2D || workload->op == HETC_PLUGIN_OP_DENSE;
}
/* The activation an op applies (relu, relu6, sigmoid, tanh, elu,
 * softplus, exp, log, silu, hardswish, hardsigmoid, gelu, gelu_tanh, erf),
 * or HETC_PLUGIN_ACT_NONE for every other op. */
int32_t hetc_op_activation(hetc_op_t op);
/* Whether an activation may be a conv2d's or dense's epilogue: the four of
 * ABI minor 0, silu, hardswish and hardsigmoid, gelu and gelu_tanh
 * (plugin.h's HETC_PLUGIN_ACT_IS_EPILOGUE). */
static inline int hetc_activation_fuses(int32_t activation) {
  return activation != HETC_PLUGIN_ACT_NONE && HETC_PLUGIN_ACT_IS_EPILOGUE(activation);
}

/* Parses a model.json op name; returns HETC_OP_COUNT when unknown. */
hetc_op_t hetc_op_from_name(const char *name);

/* A float32 parameter tensor (weights, bias, batch-norm statistics). */
typedef struct hetc_param_t {
  int32_t rank;
  int64_t shape[HETC_PLUGIN_MAX_RANK];
  int64_t count; /* product of shape */
  float *data;   /* owned by the node; count values, row-major */
} hetc_param_t;

/* Parameter slots by op: conv2d/dense: WEIGHT, BIAS; bias_add: BIAS;
 * batch_norm: GAMMA, BETA, MEAN, VAR; normalize with affine: WEIGHT (the
 * scale), BIAS. */
enum {
  HETC_PARAM_WEIGHT = 0,
  HETC_PARAM_BIAS = 1,
  HETC_PARAM_GAMMA = 0,
  HETC_PARAM_BETA = 1,
  HETC_PARAM_MEAN = 2,
  HETC_PARAM_VAR = 3,
  HETC_PARAM_SLOTS = 4
};

typedef struct hetc_node_attrs_t {
  int64_t channels; /* conv2d output channels; dense units */
  int32_t kernel[2];
  int32_t strides[2];
  int32_t padding[4]; /* top, left, bottom, right */
  int32_t dilation[2];
  int32_t groups;
  int32_t has_bias; /* conv2d, dense */
  int32_t ceil_mode;
  int32_t count_include_pad;
  int32_t axis;      /* concat, softmax: normalised to >= 0 by inference */
  double epsilon;    /* batch_norm */
  int32_t reshape_rank;
  int64_t reshape_shape[HETC_PLUGIN_MAX_RANK]; /* as written, -1 allowed */
  int32_t perm_rank;                           /* transpose: entries of perm */
  int32_t perm[HETC_PLUGIN_MAX_RANK];          /* transpose: output dim d is input dim perm[d] */
  int64_t resize_size[2];                      /* resize: output H and W */
  hetc_plugin_resize_params_t resize;          /* resize */
  hetc_plugin_normalize_params_t normalize;    /* normalize; num_axes 0: to the last dim */
} hetc_node_attrs_t;

/* The attributes a model.json node of `op` has when it names none:
 * strides and dilation 1, groups 1, epsilon 1e-5, axis 1 for concat and -1
 * for softmax. */
hetc_node_attrs_t hetc_node_default_attrs(hetc_op_t op);

typedef struct hetc_node_t {
  char *name; /* owned */
  hetc_op_t op;
  int32_t num_inputs;
  int32_t *inputs; /* owned; value ids; a fused residual is the last one */
  int32_t output;  /* value id */
  hetc_node_attrs_t attrs;
  /* Fused epilogue of conv2d/dense (graph passes). The bias of the
   * epilogue is attrs.has_bias; has_residual adds inputs[num_inputs-1]. */
  hetc_plugin_epilogue_t epilogue;
  hetc_param_t params[HETC_PARAM_SLOTS];
  /* Names of the model nodes folded into this one, for reports; owned. */
  char *fused_names;
} hetc_node_t;

typedef struct hetc_value_t {
  char *name; /* owned; the producing node's or the graph input's name */
  hetc_plugin_tensor_t type; /* logical shape; ROW_MAJOR layout */
  int32_t producer;          /* node index, or -1 for a graph input */
} hetc_value_t;

typedef struct hetc_graph_t {
  char *name;        /* owned: the model's name */
  char *source_path; /* owned: the model file, for messages */
  int32_t num_values;
  hetc_value_t *values; /* owned */
  int32_t num_nodes;
  hetc_node_t *nodes;   /* owned; topological order */
  int32_t num_inputs;
  int32_t *inputs;      /* owned; value ids */
  int32_t num_outputs;
  int32_t *outputs;     /* owned; value ids */
  char **output_names;  /* owned; names as the model wrote them */
  /* Loaded without weights (hetc_model_load_options_t's shapes_only):
   * every param has its shape and NULL data. */
  int shapes_only;
} hetc_graph_t;

void hetc_graph_free(hetc_graph_t *graph);

/* Frees what a node owns (not the node itself). */
void hetc_node_release(hetc_node_t *node);

/* NULL when `graph` has its weights; else INVALID_ARGUMENT saying that a
 * model loaded with shapes only cannot be `doing` ("compiled"). */
hetc_status_t hetc_graph_require_weights(const hetc_graph_t *graph, const char *doing);

/* Deep copy. *out_graph is owned by the caller. */
hetc_status_t hetc_graph_clone(const hetc_graph_t *graph,
                               hetc_graph_t **out_graph);

/* Element count of a value's logical shape. */
int64_t hetc_tensor_element_count(const hetc_plugin_tensor_t *tensor);

/* Number of nodes reading `value` plus one per graph output naming it. */
int32_t hetc_graph_value_use_count(const hetc_graph_t *graph, int32_t value);

/* Describes node `node_index` as an ABI workload. `inputs_storage` must hold
 * HETC_MAX_NODE_INPUTS entries and outlives the workload (the workload
 * points into it). Layouts are ROW_MAJOR. batch_norm has no ABI op:
 * returns UNSUPPORTED for it (passes lower it before compilation). */
hetc_status_t hetc_graph_node_workload(const hetc_graph_t *graph,
                                       int32_t node_index,
                                       hetc_plugin_tensor_t *inputs_storage,
                                       hetc_plugin_workload_t *out_workload);

/* The LAYOUT_TRANSFORM workload that converts `*input` (borrowed: the
 * workload points at it) into `layout`. */
hetc_plugin_workload_t hetc_layout_transform_workload(const hetc_plugin_tensor_t *input, hetc_plugin_layout_t layout);

/* Orders nodes so that producers come first (Kahn's algorithm, ready
 * nodes first in, first out), renumbering values so that value
 * num_inputs + k is node k's output. `carried` (num_nodes entries, may be
 * NULL) is permuted along with the nodes. A graph with a cycle gives
 * BAD_INPUT ("node "X" is part of a cycle") and *out_cycle_node the cycle's
 * node that comes first by `carried` (by index when NULL). Both the model
 * loader and the ONNX importer order their graphs with it, so that a model
 * and its model.json form fuse alike. */
hetc_status_t hetc_graph_sort_topologically(hetc_graph_t *graph, int32_t *carried, int32_t *out_cycle_node);

/* The epsilon of a batch_norm that computes an affine map. */
#define HETC_AFFINE_EPSILON 1e-5

/* Makes `node` a batch_norm computing scale * x + shift on each of
 * `channels` channels of a 4-d value (scale and shift: one value per
 * channel, or one for all when `count` is 1): mean 0, variance 1, gamma
 * scale * sqrt(1 + epsilon) so that the normalisation divides it back out.
 * Like any batch_norm it folds into a preceding conv2d, so after a
 * convolution it costs nothing. The node's params are replaced; with
 * `shapes_only` they get their shapes and no data. */
hetc_status_t hetc_node_make_affine(hetc_node_t *node, int64_t channels, const double *scale, const double *shift,
                                    int64_t count, int shapes_only);

/* Number of logical params a node's workload takes (weights then bias). */
int32_t hetc_graph_node_param_count(const hetc_node_t *node);

/* The node's logical param `index` in workload order (plugin.h: conv2d and
 * dense take weight then bias, bias_add its bias), or NULL. */
const hetc_param_t *hetc_graph_node_param(const hetc_node_t *node, int32_t index);

/* FLOPs of one execution of a node (2 per multiply-add for conv2d/dense;
 * one per output element otherwise). */
double hetc_graph_node_flops(const hetc_graph_t *graph, int32_t node_index);

#endif /* HETC_DRIVER_GRAPH_GRAPH_H_ */
