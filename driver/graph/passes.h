/* driver/graph/passes.h -- graph rewrites before compilation. */
#ifndef HETC_DRIVER_GRAPH_PASSES_H_
#define HETC_DRIVER_GRAPH_PASSES_H_

#include "graph/graph.h"

/* The ABI minor whose plugins take silu, hardswish and hardsigmoid, as
 * unary elementwise ops and as epilogues. */
#define HETC_GATED_ACTIVATIONS_ABI_MINOR 6
/* The ABI minor whose plugins take gelu and gelu_tanh (as unary
 * elementwise ops and as epilogues) and erf (elementwise). No older op
 * computes erf exactly, so below it they are not lowered: a node no target
 * takes then names the minor it needs. */
#define HETC_GELU_ABI_MINOR 7

/* Runs every pass in order, for plugins of ABI level `abi_level` (the
 * oldest among the targets): batch_norm folding into conv2d, lowering of
 * the remaining batch_norms to depthwise 1x1 conv2d, multiply(x,
 * sigmoid(x)) into silu and multiply(x, hardsigmoid(x)) into hardswish,
 * channel shuffles into picks and picks into the convs after them,
 * LayerNorms over channels between transposes to and from NHWC into one
 * normalize,
 * epilogue fusion into conv2d and dense (bias_add, residual add,
 * activation). Below minor 6 silu, hardswish and hardsigmoid are lowered
 * to ops older plugins know first, and not made; below minor 7 gelu and
 * gelu_tanh stay unfused elementwise ops. The graph computes the
 * same function afterwards (up to float rounding); value ids of the
 * model's values are stable, nodes stay topologically sorted. */
hetc_status_t hetc_graph_optimize_for(hetc_graph_t *graph, uint32_t abi_level);
/* The same for plugins of this hetc's ABI version. */
hetc_status_t hetc_graph_optimize(hetc_graph_t *graph);

/* The individual passes, for tests. */
hetc_status_t hetc_graph_fold_batch_norm(hetc_graph_t *graph);
hetc_status_t hetc_graph_lower_batch_norm(hetc_graph_t *graph);
/* multiply(x, sigmoid(x)) -> silu(x), multiply(x, hardsigmoid(x)) ->
 * hardswish(x), either operand order, when the gate's value has no other
 * reader and is no graph output. */
hetc_status_t hetc_graph_fuse_gated_activations(hetc_graph_t *graph);
/* silu -> sigmoid, multiply; hardsigmoid of a 4-d value -> affine (x + 3),
 * relu6, affine (/ 6); hardswish of a 4-d value -> those, then multiply
 * (hetc's ONNX import before ABI minor 6). hardswish and hardsigmoid of
 * other ranks stay. */
hetc_status_t hetc_graph_lower_gated_activations(hetc_graph_t *graph);
hetc_status_t hetc_graph_fuse_epilogues(hetc_graph_t *graph);
/* ShuffleNet's channel shuffle (reshape to [N, g, C / g, H, W], transpose
 * 0,2,1,3,4, reshape back) -> one 1x1 conv2d picking channels; then every
 * 1x1 conv2d that is a linear map of channels (no bias, no epilogue) into
 * the one-group conv2ds reading it, where that adds no multiply-adds. */
hetc_status_t hetc_graph_fold_channel_picks(hetc_graph_t *graph);
/* transpose to NHWC, normalize of the last dim alone, transpose back
 * (ConvNeXt's LayerNorm2d) -> normalize of dim 1 of the NCHW value. */
hetc_status_t hetc_graph_untranspose_normalize(hetc_graph_t *graph);

#endif /* HETC_DRIVER_GRAPH_PASSES_H_ */
