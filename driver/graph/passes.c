#include "graph/passes.h"
#include "plugins/abi_level.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A node is removed by giving it op HETC_OP_COUNT; compaction drops it.
 * A fused node takes over its consumer's output value, so uses of that
 * value (and graph outputs naming it) need no rewriting. */
#define REMOVED HETC_OP_COUNT

/* Who reads each value, built once per pass so that finding a node's sole
 * consumer is O(1) instead of a scan of the graph. Graph outputs count as
 * readers that are not nodes. */
typedef struct readers_t {
  int32_t *count; /* per value: reading nodes + graph outputs */
  int32_t *node;  /* per value: one reading node, or -1 */
} readers_t;

static hetc_status_t readers_build(const hetc_graph_t *graph, readers_t *r) {
  r->count = calloc((size_t)graph->num_values + 1, sizeof(int32_t));
  r->node = malloc(sizeof(int32_t) * ((size_t)graph->num_values + 1));
  if (!r->count || !r->node) {
    free(r->count);
    free(r->node);
    return hetc_status_new(HETC_STATUS_OUT_OF_MEMORY, "graph passes");
  }
  for (int32_t v = 0; v < graph->num_values; ++v) r->node[v] = -1;
  for (int32_t o = 0; o < graph->num_outputs; ++o) ++r->count[graph->outputs[o]];
  for (int32_t n = 0; n < graph->num_nodes; ++n) {
    const hetc_node_t *node = &graph->nodes[n];
    for (int32_t i = 0; i < node->num_inputs; ++i) {
      ++r->count[node->inputs[i]];
      r->node[node->inputs[i]] = n;
    }
  }
  return NULL;
}

static void readers_free(readers_t *r) {
  free(r->count);
  free(r->node);
}

/* The only node reading `value`, or -1 when there are several readers or
 * the value is a graph output. */
static int32_t sole_consumer(const readers_t *r, int32_t value) {
  return r->count[value] == 1 ? r->node[value] : -1;
}

/* Appends from's name to into's fused names, after the names of the nodes
 * `from` had absorbed itself (a silu's sigmoid). */
static hetc_status_t note_fused(hetc_node_t *into, const hetc_node_t *from) {
  size_t old = into->fused_names ? strlen(into->fused_names) : 0;
  size_t length = old + (from->fused_names ? strlen(from->fused_names) + 1 : 0) + strlen(from->name) + 2;
  char *names = realloc(into->fused_names, length);
  if (!names) return hetc_status_new(HETC_STATUS_OUT_OF_MEMORY, "graph passes");
  snprintf(names + old, length - old, "%s%s%s%s", old ? "+" : "", from->fused_names ? from->fused_names : "",
           from->fused_names ? "+" : "", from->name);
  into->fused_names = names;
  return NULL;
}

/* `into` absorbs `from`: it produces from's value and from disappears.
 * Values `from` read besides into's output are read by `into` now. */
static hetc_status_t absorb(hetc_graph_t *graph, readers_t *r, int32_t into_index, int32_t from_index) {
  hetc_node_t *into = &graph->nodes[into_index];
  hetc_node_t *from = &graph->nodes[from_index];
  HETC_RETURN_IF_ERROR(note_fused(into, from));
  for (int32_t i = 0; i < from->num_inputs; ++i)
    if (r->node[from->inputs[i]] == from_index) r->node[from->inputs[i]] = into_index;
  into->output = from->output;
  from->op = REMOVED;
  return NULL;
}

/* Drops removed nodes and restores topological order (a fused residual may
 * be produced after the node that now reads it). Value ids are unchanged. */
static hetc_status_t compact_and_sort(hetc_graph_t *graph) {
  int32_t n = graph->num_nodes;
  hetc_node_t *sorted = calloc((size_t)n + 1, sizeof(hetc_node_t));
  char *placed = calloc((size_t)n + 1, 1);
  char *ready = calloc((size_t)graph->num_values + 1, 1);
  if (!sorted || !placed || !ready) {
    free(sorted);
    free(placed);
    free(ready);
    return hetc_status_new(HETC_STATUS_OUT_OF_MEMORY, "graph passes");
  }
  for (int32_t i = 0; i < graph->num_inputs; ++i) ready[graph->inputs[i]] = 1;
  int32_t count = 0, progress = 1;
  /* Graphs are nearly sorted already, so repeated sweeps finish in a few
   * passes. */
  while (progress) {
    progress = 0;
    for (int32_t k = 0; k < n; ++k) {
      hetc_node_t *node = &graph->nodes[k];
      if (placed[k]) continue;
      if (node->op == REMOVED) {
        placed[k] = 1;
        continue;
      }
      int can_run = 1;
      for (int32_t i = 0; can_run && i < node->num_inputs; ++i) can_run = ready[node->inputs[i]];
      if (!can_run) continue;
      sorted[count] = *node;
      graph->values[node->output].producer = count;
      ready[node->output] = 1;
      placed[k] = 1;
      ++count;
      progress = 1;
    }
  }
  int stuck = 0;
  for (int32_t k = 0; k < n; ++k) stuck |= !placed[k];
  free(placed);
  free(ready);
  if (stuck) {
    free(sorted);
    return hetc_status_new(HETC_STATUS_INTERNAL, "graph passes produced a cycle");
  }
  /* Only now are the removed nodes dropped: on failure the graph still
   * owns every node exactly once. */
  for (int32_t k = 0; k < n; ++k) {
    hetc_node_t *node = &graph->nodes[k];
    if (node->op == REMOVED) hetc_node_release(node);
  }
  free(graph->nodes);
  graph->nodes = sorted;
  graph->num_nodes = count;
  return NULL;
}

/* A rewrite of node k that may fuse or remove nodes (REMOVED), given who
 * reads each value. */
typedef hetc_status_t (*visit_fn)(hetc_graph_t *graph, readers_t *r, int32_t k, uint32_t abi_level);

/* Runs `visit` on each node in order, then drops the removed nodes and
 * sorts the rest. */
static hetc_status_t visit_nodes(hetc_graph_t *graph, visit_fn visit, uint32_t abi_level) {
  readers_t r;
  HETC_RETURN_IF_ERROR(readers_build(graph, &r));
  hetc_status_t status = NULL;
  for (int32_t k = 0; k < graph->num_nodes && !status; ++k) status = visit(graph, &r, k, abi_level);
  readers_free(&r);
  return status ? status : compact_and_sort(graph);
}

static void batch_norm_scale_shift(const hetc_node_t *bn, int64_t c, double *scale, double *shift) {
  double gamma = bn->params[HETC_PARAM_GAMMA].data[c], beta = bn->params[HETC_PARAM_BETA].data[c];
  double mean = bn->params[HETC_PARAM_MEAN].data[c], var = bn->params[HETC_PARAM_VAR].data[c];
  *scale = gamma / sqrt(var + bn->attrs.epsilon);
  *shift = beta - mean * *scale;
}

/* A graph of shapes only (graph->shapes_only) gets the bias's shape, no
 * data. */
static hetc_status_t ensure_bias(const hetc_graph_t *graph, hetc_node_t *node) {
  if (node->attrs.has_bias) return NULL;
  int64_t channels = node->attrs.channels;
  float *bias = graph->shapes_only ? NULL : calloc((size_t)channels, sizeof(float));
  if (!bias && !graph->shapes_only) return hetc_status_new(HETC_STATUS_OUT_OF_MEMORY, "graph passes");
  node->params[HETC_PARAM_BIAS] = (hetc_param_t){1, {channels}, channels, bias};
  node->attrs.has_bias = 1;
  return NULL;
}

/* Node b, a batch_norm, into the conv2d before it. */
static hetc_status_t fold_batch_norm(hetc_graph_t *graph, readers_t *r, int32_t b, uint32_t abi_level) {
  (void)abi_level;
  hetc_node_t *bn = &graph->nodes[b];
  if (bn->op != HETC_OP_BATCH_NORM) return NULL;
  int32_t producer = graph->values[bn->inputs[0]].producer;
  if (producer < 0) return NULL;
  hetc_node_t *conv = &graph->nodes[producer];
  if (conv->op != HETC_OP_CONV2D || conv->epilogue.activation || conv->epilogue.has_residual ||
      sole_consumer(r, conv->output) != b)
    return NULL;
  HETC_RETURN_IF_ERROR(ensure_bias(graph, conv));
  const hetc_param_t *weight = &conv->params[HETC_PARAM_WEIGHT];
  int64_t per_channel = weight->count / conv->attrs.channels;
  float *bias = conv->params[HETC_PARAM_BIAS].data;
  for (int64_t k = 0; !graph->shapes_only && k < conv->attrs.channels; ++k) {
    double scale, shift;
    batch_norm_scale_shift(bn, k, &scale, &shift);
    for (int64_t i = 0; i < per_channel; ++i)
      weight->data[k * per_channel + i] = (float)(weight->data[k * per_channel + i] * scale);
    bias[k] = (float)(bias[k] * scale + shift);
  }
  return absorb(graph, r, producer, b);
}

hetc_status_t hetc_graph_fold_batch_norm(hetc_graph_t *graph) {
  return visit_nodes(graph, fold_batch_norm, HETC_ABI_LEVEL_NOW);
}

hetc_status_t hetc_graph_lower_batch_norm(hetc_graph_t *graph) {
  for (int32_t b = 0; b < graph->num_nodes; ++b) {
    hetc_node_t *node = &graph->nodes[b];
    if (node->op != HETC_OP_BATCH_NORM) continue;
    int64_t channels = graph->values[node->inputs[0]].type.shape[1];
    float *weight = NULL, *bias = NULL;
    if (!graph->shapes_only) {
      weight = malloc(sizeof(float) * (size_t)channels);
      bias = malloc(sizeof(float) * (size_t)channels);
      if (!weight || !bias) {
        free(weight);
        free(bias);
        return hetc_status_new(HETC_STATUS_OUT_OF_MEMORY, "graph passes");
      }
    }
    for (int64_t c = 0; !graph->shapes_only && c < channels; ++c) {
      double scale, shift;
      batch_norm_scale_shift(node, c, &scale, &shift);
      weight[c] = (float)scale;
      bias[c] = (float)shift;
    }
    for (int p = 0; p < HETC_PARAM_SLOTS; ++p) {
      free(node->params[p].data);
      memset(&node->params[p], 0, sizeof(node->params[p]));
    }
    double epsilon = node->attrs.epsilon;
    memset(&node->attrs, 0, sizeof(node->attrs));
    node->op = HETC_OP_CONV2D;
    node->attrs = (hetc_node_attrs_t){.channels = channels, .kernel = {1, 1}, .strides = {1, 1},
                                      .dilation = {1, 1}, .groups = (int32_t)channels,
                                      .has_bias = 1, .epsilon = epsilon};
    node->params[HETC_PARAM_WEIGHT] = (hetc_param_t){4, {channels, 1, 1, 1}, channels, weight};
    node->params[HETC_PARAM_BIAS] = (hetc_param_t){1, {channels}, channels, bias};
  }
  return NULL;
}

static int same_shape(const hetc_plugin_tensor_t *a, const hetc_plugin_tensor_t *b) {
  if (a->rank != b->rank) return 0;
  for (int32_t i = 0; i < a->rank; ++i)
    if (a->shape[i] != b->shape[i]) return 0;
  return 1;
}

/* ---- channel shuffles and linear 1x1 convolutions ------------------------ */

static int shape_is(const hetc_plugin_tensor_t *t, int32_t rank, const int64_t *dims) {
  if (t->rank != rank) return 0;
  for (int32_t i = 0; i < rank; ++i)
    if (t->shape[i] != dims[i]) return 0;
  return 1;
}

/* Node k, a reshape of [N, C, H, W] into [N, g, C / g, H, W] whose only
 * reader swaps the two channel dims (transpose 0,2,1,3,4) and whose
 * reader's only reader reshapes back to [N, C, H, W]: ShuffleNet's channel
 * shuffle. The last reshape becomes a 1x1 conv2d whose one-hot weight
 * picks input channel j * (C / g) + i for output channel i * g + j, and the
 * other two go: three copies through row-major layouts become one kernel
 * that keeps the producer's layout, and that merge_linear_1x1 can fold
 * into the convs that read it. */
static hetc_status_t shuffle_to_pick(hetc_graph_t *graph, readers_t *r, int32_t k, uint32_t abi_level) {
  (void)abi_level;
  hetc_node_t *split = &graph->nodes[k];
  if (split->op != HETC_OP_RESHAPE) return NULL;
  const hetc_plugin_tensor_t *in = &graph->values[split->inputs[0]].type;
  const hetc_plugin_tensor_t *five = &graph->values[split->output].type;
  if (in->rank != 4 || five->rank != 5) return NULL;
  const int64_t N = in->shape[0], C = in->shape[1], H = in->shape[2], W = in->shape[3], g = five->shape[1];
  const int64_t grouped[5] = {N, g, g > 0 ? C / g : 0, H, W};
  if (g < 1 || C % g || !shape_is(five, 5, grouped)) return NULL;
  const int32_t t = sole_consumer(r, split->output);
  if (t < 0 || graph->nodes[t].op != HETC_OP_TRANSPOSE) return NULL;
  const hetc_node_t *swap = &graph->nodes[t];
  const int32_t perm[5] = {0, 2, 1, 3, 4};
  if (swap->attrs.perm_rank != 5 || memcmp(swap->attrs.perm, perm, sizeof(perm)) != 0) return NULL;
  const int32_t m = sole_consumer(r, swap->output);
  if (m < 0 || graph->nodes[m].op != HETC_OP_RESHAPE || !same_shape(&graph->values[graph->nodes[m].output].type, in))
    return NULL;
  float *weight = NULL;
  if (!graph->shapes_only) {
    weight = calloc((size_t)(C * C), sizeof(float));
    if (!weight) return hetc_status_new(HETC_STATUS_OUT_OF_MEMORY, "graph passes");
    const int64_t per_group = C / g;
    for (int64_t i = 0; i < per_group; ++i)
      for (int64_t j = 0; j < g; ++j) weight[(i * g + j) * C + j * per_group + i] = 1.0f;
  }
  hetc_node_t *merge = &graph->nodes[m];
  HETC_RETURN_IF_ERROR(note_fused(merge, split));
  HETC_RETURN_IF_ERROR(note_fused(merge, swap));
  merge->op = HETC_OP_CONV2D;
  merge->inputs[0] = split->inputs[0];
  r->node[split->inputs[0]] = m;
  merge->attrs = hetc_node_default_attrs(HETC_OP_CONV2D);
  merge->attrs.channels = C;
  merge->attrs.kernel[0] = merge->attrs.kernel[1] = 1;
  merge->params[HETC_PARAM_WEIGHT] = (hetc_param_t){4, {C, C, 1, 1}, C * C, weight};
  graph->nodes[t].op = REMOVED;
  split->op = REMOVED;
  return NULL;
}

/* A conv2d that is a linear map of channels: 1x1, stride 1, no padding,
 * one group, no bias and no epilogue. */
static int is_linear_1x1(const hetc_node_t *n) {
  const hetc_node_attrs_t *a = &n->attrs;
  return n->op == HETC_OP_CONV2D && a->kernel[0] == 1 && a->kernel[1] == 1 && a->strides[0] == 1 &&
         a->strides[1] == 1 && !a->padding[0] && !a->padding[1] && !a->padding[2] && !a->padding[3] &&
         a->groups == 1 && !a->has_bias && !n->epilogue.activation && !n->epilogue.has_residual &&
         n->num_inputs == 1;
}

/* Multiply-adds of conv2d node k with `in_channels` input channels. */
static double conv_macs(const hetc_graph_t *graph, int32_t k, int64_t in_channels) {
  const hetc_node_t *n = &graph->nodes[k];
  const hetc_plugin_tensor_t *out = &graph->values[n->output].type;
  return (double)out->shape[0] * (double)out->shape[1] * (double)out->shape[2] * (double)out->shape[3] *
         (double)(in_channels / n->attrs.groups) * n->attrs.kernel[0] * n->attrs.kernel[1];
}

/* Node p, a linear 1x1 conv2d (weight P [M, C]) whose every reader is a
 * conv2d of one group that reads it as its first input only: each reader's
 * weight R [O, M, KH, KW] becomes R P [O, C, KH, KW] and reads p's input,
 * and p goes, where that does not add multiply-adds. Zero padding commutes
 * with a map without bias, so every reader may pad. Channel picks (Slice,
 * Split, shuffles) end up inside the convs after them. */
static hetc_status_t merge_linear_1x1(hetc_graph_t *graph, readers_t *r, int32_t p, uint32_t abi_level) {
  (void)abi_level;
  hetc_node_t *pick = &graph->nodes[p];
  if (!is_linear_1x1(pick)) return NULL;
  const int32_t value = pick->output, x = pick->inputs[0];
  for (int32_t o = 0; o < graph->num_outputs; ++o)
    if (graph->outputs[o] == value) return NULL;
  const int64_t M = pick->attrs.channels, C = graph->values[x].type.shape[1];
  double before = conv_macs(graph, p, C), after = 0;
  int32_t readers = 0;
  for (int32_t k = p + 1; k < graph->num_nodes; ++k) {
    const hetc_node_t *n = &graph->nodes[k];
    if (n->op == REMOVED) continue;
    int reads = 0;
    for (int32_t i = 0; i < n->num_inputs; ++i) reads += n->inputs[i] == value;
    if (!reads) continue;
    if (n->op != HETC_OP_CONV2D || n->attrs.groups != 1 || n->inputs[0] != value || reads != 1) return NULL;
    before += conv_macs(graph, k, M);
    after += conv_macs(graph, k, C);
    ++readers;
  }
  if (readers == 0 || readers != r->count[value] || after > before) return NULL;
  for (int32_t k = p + 1; k < graph->num_nodes; ++k) {
    hetc_node_t *n = &graph->nodes[k];
    if (n->op == REMOVED || n->num_inputs < 1 || n->inputs[0] != value) continue;
    hetc_param_t *w = &n->params[HETC_PARAM_WEIGHT];
    const int64_t O = n->attrs.channels, taps = (int64_t)n->attrs.kernel[0] * n->attrs.kernel[1];
    float *merged = NULL;
    if (!graph->shapes_only) {
      merged = malloc(sizeof(float) * (size_t)(O * C * taps));
      if (!merged) return hetc_status_new(HETC_STATUS_OUT_OF_MEMORY, "graph passes");
      const float *P = pick->params[HETC_PARAM_WEIGHT].data;
      for (int64_t o = 0; o < O; ++o)
        for (int64_t c = 0; c < C; ++c)
          for (int64_t t = 0; t < taps; ++t) {
            double sum = 0;
            for (int64_t m = 0; m < M; ++m) sum += (double)w->data[(o * M + m) * taps + t] * P[m * C + c];
            merged[(o * C + c) * taps + t] = (float)sum;
          }
    }
    free(w->data);
    *w = (hetc_param_t){4, {O, C, n->attrs.kernel[0], n->attrs.kernel[1]}, O * C * taps, merged};
    n->inputs[0] = x;
    r->node[x] = k;
    HETC_RETURN_IF_ERROR(note_fused(n, pick));
  }
  r->count[x] += readers - 1;
  pick->op = REMOVED;
  return NULL;
}

/* Node k, a transpose to NHWC (0,2,3,1) whose only reader normalizes the
 * last dim alone (LayerNorm over channels) and whose reader's only reader
 * transposes back (0,3,1,2): ConvNeXt's LayerNorm2d. The normalize reads
 * the NCHW value over dim 1 (inner = H W) instead, and both transposes go. */
static hetc_status_t untranspose_normalize(hetc_graph_t *graph, readers_t *r, int32_t k, uint32_t abi_level) {
  (void)abi_level;
  static const int32_t to_nhwc[4] = {0, 2, 3, 1}, to_nchw[4] = {0, 3, 1, 2};
  hetc_node_t *in = &graph->nodes[k];
  if (in->op != HETC_OP_TRANSPOSE || in->attrs.perm_rank != 4 || memcmp(in->attrs.perm, to_nhwc, sizeof(to_nhwc)))
    return NULL;
  const int32_t n = sole_consumer(r, in->output);
  if (n < 0) return NULL;
  hetc_node_t *norm = &graph->nodes[n];
  if (norm->op != HETC_OP_NORMALIZE || norm->attrs.normalize.axis != 3 || norm->attrs.normalize.num_axes != 1 ||
      norm->attrs.normalize.groups != 1)
    return NULL;
  const int32_t out = sole_consumer(r, norm->output);
  if (out < 0) return NULL;
  const hetc_node_t *back = &graph->nodes[out];
  if (back->op != HETC_OP_TRANSPOSE || back->attrs.perm_rank != 4 || memcmp(back->attrs.perm, to_nchw, sizeof(to_nchw)))
    return NULL;
  HETC_RETURN_IF_ERROR(note_fused(norm, in));
  norm->inputs[0] = in->inputs[0];
  r->node[in->inputs[0]] = n;
  norm->attrs.normalize.axis = 1;
  in->op = REMOVED;
  return absorb(graph, r, n, out);
}

hetc_status_t hetc_graph_fold_channel_picks(hetc_graph_t *graph) {
  HETC_RETURN_IF_ERROR(visit_nodes(graph, shuffle_to_pick, HETC_ABI_LEVEL_NOW));
  return visit_nodes(graph, merge_linear_1x1, HETC_ABI_LEVEL_NOW);
}

hetc_status_t hetc_graph_untranspose_normalize(hetc_graph_t *graph) {
  return visit_nodes(graph, untranspose_normalize, HETC_ABI_LEVEL_NOW);
}

/* Fuses what follows node k, a conv2d or dense, in epilogue order:
 * bias_add, residual add, activation (silu, hardswish and hardsigmoid only
 * for plugins of minor 6 on, gelu and gelu_tanh of minor 7 on). Each step needs the current value to have one
 * reader. */
static hetc_status_t fuse_after(hetc_graph_t *graph, readers_t *r, int32_t k, uint32_t abi_level) {
  hetc_node_t *node = &graph->nodes[k];
  if (node->op != HETC_OP_CONV2D && node->op != HETC_OP_DENSE) return NULL;
  int32_t next = sole_consumer(r, node->output);
  if (next >= 0 && graph->nodes[next].op == HETC_OP_BIAS_ADD) {
    hetc_node_t *bias_add = &graph->nodes[next];
    HETC_RETURN_IF_ERROR(ensure_bias(graph, node));
    for (int64_t c = 0; !graph->shapes_only && c < node->attrs.channels; ++c)
      node->params[HETC_PARAM_BIAS].data[c] += bias_add->params[HETC_PARAM_BIAS].data[c];
    HETC_RETURN_IF_ERROR(absorb(graph, r, k, next));
    next = sole_consumer(r, node->output);
  }
  if (next >= 0 && graph->nodes[next].op == HETC_OP_ADD) {
    hetc_node_t *add = &graph->nodes[next];
    int32_t other = add->inputs[0] == node->output ? add->inputs[1] : add->inputs[0];
    const hetc_plugin_tensor_t *out = &graph->values[node->output].type;
    if (other != node->output && same_shape(&graph->values[other].type, out)) {
      int32_t *inputs = realloc(node->inputs, sizeof(int32_t) * (size_t)(node->num_inputs + 1));
      if (!inputs) return hetc_status_new(HETC_STATUS_OUT_OF_MEMORY, "graph passes");
      inputs[node->num_inputs++] = other;
      node->inputs = inputs;
      node->epilogue.has_residual = 1;
      HETC_RETURN_IF_ERROR(absorb(graph, r, k, next));
      next = sole_consumer(r, node->output);
    }
  }
  const int32_t activation = next >= 0 ? hetc_op_activation(graph->nodes[next].op) : HETC_PLUGIN_ACT_NONE;
  const int gated = activation >= HETC_PLUGIN_ACT_SILU && activation <= HETC_PLUGIN_ACT_HARDSIGMOID;
  const int gelu = activation == HETC_PLUGIN_ACT_GELU || activation == HETC_PLUGIN_ACT_GELU_TANH;
  const uint32_t needs = gelu ? HETC_GELU_ABI_MINOR : gated ? HETC_GATED_ACTIVATIONS_ABI_MINOR : 0;
  if (hetc_activation_fuses(activation) && abi_level >= needs) {
    node->epilogue.activation = activation;
    HETC_RETURN_IF_ERROR(absorb(graph, r, k, next));
  }
  return NULL;
}

/* The activation op whose gate `gate` is (silu's sigmoid, hardswish's
 * hardsigmoid), or HETC_OP_COUNT. */
static hetc_op_t gated_op(hetc_op_t gate) {
  return gate == HETC_OP_SIGMOID ? HETC_OP_SILU : gate == HETC_OP_HARDSIGMOID ? HETC_OP_HARDSWISH : HETC_OP_COUNT;
}

/* Node m, a multiply of x and its gate, into silu(x) or hardswish(x). */
static hetc_status_t fuse_gated(hetc_graph_t *graph, readers_t *r, int32_t m, uint32_t abi_level) {
  (void)abi_level;
  hetc_node_t *multiply = &graph->nodes[m];
  if (multiply->op != HETC_OP_MULTIPLY || multiply->num_inputs != 2) return NULL;
  for (int side = 0; side < 2; ++side) {
    const int32_t gate_value = multiply->inputs[side], x = multiply->inputs[1 - side];
    const int32_t g = graph->values[gate_value].producer;
    if (g < 0) continue;
    hetc_node_t *gate = &graph->nodes[g];
    const hetc_op_t op = gated_op(gate->op);
    /* The gate of x itself, read by this multiply alone (not by another
     * node, nor as a graph output). */
    if (op == HETC_OP_COUNT || gate->inputs[0] != x || sole_consumer(r, gate_value) != m) continue;
    HETC_RETURN_IF_ERROR(note_fused(multiply, gate));
    multiply->op = op;
    multiply->num_inputs = 1;
    multiply->inputs[0] = x;
    gate->op = REMOVED;
    return NULL;
  }
  return NULL;
}

hetc_status_t hetc_graph_fuse_gated_activations(hetc_graph_t *graph) {
  return visit_nodes(graph, fuse_gated, HETC_ABI_LEVEL_NOW);
}

/* Appends a node of `op` named `name` reading `inputs`, whose output is a
 * new value of `type`; compaction puts it in order. Pointers into the
 * graph's nodes and values are stale afterwards. */
static hetc_status_t append_node(hetc_graph_t *graph, hetc_op_t op, const char *name, const int32_t *inputs,
                                 int32_t num_inputs, const hetc_plugin_tensor_t *type, int32_t *out_node) {
  hetc_node_t *nodes = realloc(graph->nodes, sizeof(hetc_node_t) * (size_t)(graph->num_nodes + 1));
  if (nodes) graph->nodes = nodes;
  hetc_value_t *values = nodes ? realloc(graph->values, sizeof(hetc_value_t) * (size_t)(graph->num_values + 1)) : NULL;
  if (values) graph->values = values;
  hetc_node_t node;
  memset(&node, 0, sizeof(node));
  node.op = op;
  node.attrs = hetc_node_default_attrs(op);
  node.name = strdup(name);
  node.inputs = malloc(sizeof(int32_t) * (size_t)num_inputs);
  char *value_name = strdup(name);
  if (!nodes || !values || !node.name || !node.inputs || !value_name) {
    hetc_node_release(&node);
    free(value_name);
    return hetc_status_new(HETC_STATUS_OUT_OF_MEMORY, "graph passes");
  }
  memcpy(node.inputs, inputs, sizeof(int32_t) * (size_t)num_inputs);
  node.num_inputs = num_inputs;
  node.output = graph->num_values;
  graph->values[graph->num_values++] = (hetc_value_t){value_name, *type, graph->num_nodes};
  graph->nodes[graph->num_nodes] = node;
  *out_node = graph->num_nodes++;
  return NULL;
}

/* A step of node k's decomposition: a node of `op` named "<k's
 * name>.<step>" reading `inputs`, its output of x's type. */
static hetc_status_t append_step(hetc_graph_t *graph, int32_t k, const char *step, hetc_op_t op,
                                 const int32_t *inputs, int32_t num_inputs, int32_t x, int32_t *out_node) {
  char name[512];
  snprintf(name, sizeof(name), "%s.%s", graph->nodes[k].name, step);
  const hetc_plugin_tensor_t type = graph->values[x].type;
  return append_node(graph, op, name, inputs, num_inputs, &type, out_node);
}

/* An affine step (hetc_node_make_affine) of node k's decomposition. */
static hetc_status_t append_affine_step(hetc_graph_t *graph, int32_t k, const char *step, int32_t x, double scale,
                                       double shift, int32_t *out_value) {
  int32_t node;
  HETC_RETURN_IF_ERROR(append_step(graph, k, step, HETC_OP_BATCH_NORM, &x, 1, x, &node));
  *out_value = graph->nodes[node].output;
  return hetc_node_make_affine(&graph->nodes[node], graph->values[x].type.shape[1], &scale, &shift, 1,
                               graph->shapes_only);
}

/* Node k, a silu, hardswish or hardsigmoid of x, as ops of ABI minor 0. */
static hetc_status_t lower_gated(hetc_graph_t *graph, int32_t k) {
  const int32_t x = graph->nodes[k].inputs[0];
  int32_t gate, node;
  if (graph->nodes[k].op == HETC_OP_SILU) {
    HETC_RETURN_IF_ERROR(append_step(graph, k, "sigmoid", HETC_OP_SIGMOID, &x, 1, x, &node));
    gate = graph->nodes[node].output;
  } else {
    /* hardsigmoid(x) = relu6(x + 3) / 6, as hetc imported ONNX's
     * HardSigmoid before ABI minor 6; the affine maps fold into a conv2d
     * before them or become depthwise 1x1 ones, so only 4-d values. */
    if (graph->values[x].type.rank != 4) return NULL;
    const int swish = graph->nodes[k].op == HETC_OP_HARDSWISH;
    int32_t y;
    HETC_RETURN_IF_ERROR(append_affine_step(graph, k, "in", x, 1, 3, &y));
    HETC_RETURN_IF_ERROR(append_step(graph, k, "relu6", HETC_OP_RELU6, &y, 1, x, &node));
    y = graph->nodes[node].output;
    if (!swish) {
      const double scale = 1.0 / 6, shift = 0;
      graph->nodes[k].inputs[0] = y;
      return hetc_node_make_affine(&graph->nodes[k], graph->values[x].type.shape[1], &scale, &shift, 1,
                                   graph->shapes_only);
    }
    HETC_RETURN_IF_ERROR(append_affine_step(graph, k, "gate", y, 1.0 / 6, 0, &gate));
  }
  hetc_node_t *multiply = &graph->nodes[k];
  int32_t *inputs = realloc(multiply->inputs, 2 * sizeof(int32_t));
  if (!inputs) return hetc_status_new(HETC_STATUS_OUT_OF_MEMORY, "graph passes");
  inputs[0] = x;
  inputs[1] = gate;
  multiply->inputs = inputs;
  multiply->num_inputs = 2;
  multiply->op = HETC_OP_MULTIPLY;
  return NULL;
}

hetc_status_t hetc_graph_lower_gated_activations(hetc_graph_t *graph) {
  const int32_t count = graph->num_nodes;
  hetc_status_t status = NULL;
  for (int32_t k = 0; k < count && !status; ++k) {
    const hetc_op_t op = graph->nodes[k].op;
    if (op == HETC_OP_SILU || op == HETC_OP_HARDSWISH || op == HETC_OP_HARDSIGMOID) status = lower_gated(graph, k);
  }
  return status ? status : compact_and_sort(graph);
}

hetc_status_t hetc_graph_fuse_epilogues(hetc_graph_t *graph) {
  return visit_nodes(graph, fuse_after, HETC_ABI_LEVEL_NOW);
}

hetc_status_t hetc_graph_optimize_for(hetc_graph_t *graph, uint32_t abi_level) {
  const int gated = abi_level >= HETC_GATED_ACTIVATIONS_ABI_MINOR;
  if (!gated) HETC_RETURN_IF_ERROR(hetc_graph_lower_gated_activations(graph));
  HETC_RETURN_IF_ERROR(hetc_graph_fold_batch_norm(graph));
  HETC_RETURN_IF_ERROR(hetc_graph_lower_batch_norm(graph));
  HETC_RETURN_IF_ERROR(hetc_graph_fold_channel_picks(graph));
  HETC_RETURN_IF_ERROR(hetc_graph_untranspose_normalize(graph));
  if (gated) HETC_RETURN_IF_ERROR(hetc_graph_fuse_gated_activations(graph));
  return visit_nodes(graph, fuse_after, abi_level);
}

hetc_status_t hetc_graph_optimize(hetc_graph_t *graph) {
  return hetc_graph_optimize_for(graph, HETC_ABI_LEVEL_NOW);
}
