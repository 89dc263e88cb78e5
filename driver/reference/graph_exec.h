/* driver/reference/graph_exec.h -- runs a whole graph with the reference
 * ops (plain loops, row-major NCHW). The oracle of every end-to-end test. */
#ifndef HETC_DRIVER_REFERENCE_GRAPH_EXEC_H_
#define HETC_DRIVER_REFERENCE_GRAPH_EXEC_H_

#include "graph/graph.h"

/* inputs[i] holds graph input i (row-major, its element count). On success
 * out_outputs[o] (caller-provided array of num_outputs pointers) receives a
 * malloc'ed row-major copy of output o, owned by the caller (free). Works on
 * the graph as loaded (batch_norm included) and after the passes. */
hetc_status_t hetc_reference_run_graph(const hetc_graph_t *graph, const float *const *inputs,
                                       float **out_outputs);

#endif /* HETC_DRIVER_REFERENCE_GRAPH_EXEC_H_ */
