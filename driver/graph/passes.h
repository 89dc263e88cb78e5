/* driver/graph/passes.h -- graph rewrites before compilation. */
#ifndef HETC_DRIVER_GRAPH_PASSES_H_
#define HETC_DRIVER_GRAPH_PASSES_H_

#include "graph/graph.h"

/* Runs every pass in order: batch_norm folding into conv2d, lowering of the
 * remaining batch_norms to depthwise 1x1 conv2d, epilogue fusion into
 * conv2d and dense (bias_add, residual add, activation). The graph computes
 * the same function afterwards (up to float rounding); value ids are
 * stable, nodes stay topologically sorted. */
hetc_status_t hetc_graph_optimize(hetc_graph_t *graph);

/* The individual passes, for tests. */
hetc_status_t hetc_graph_fold_batch_norm(hetc_graph_t *graph);
hetc_status_t hetc_graph_lower_batch_norm(hetc_graph_t *graph);
hetc_status_t hetc_graph_fuse_epilogues(hetc_graph_t *graph);

#endif /* HETC_DRIVER_GRAPH_PASSES_H_ */
