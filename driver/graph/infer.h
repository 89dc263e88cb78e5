/* driver/graph/infer.h -- shape and dtype inference for every op. */
#ifndef HETC_DRIVER_GRAPH_INFER_H_
#define HETC_DRIVER_GRAPH_INFER_H_

#include "graph/graph.h"

/* Largest tensor hetc accepts, in elements. */
#define HETC_MAX_TENSOR_ELEMENTS (INT64_C(1) << 31)

/* Sets the type of node `node_index`'s output value from its inputs (which
 * must be inferred already) and attributes; normalises negative axes. On
 * failure returns a HETC_STATUS_BAD_INPUT whose message says what is wrong,
 * and writes into out_where (HETC_INFER_WHERE_SIZE bytes) the JSON pointer suffix inside the node that is at
 * fault ("attrs/groups", "inputs/1", or "" for the node itself). */
#define HETC_INFER_WHERE_SIZE 64
hetc_status_t hetc_graph_infer_node(hetc_graph_t *graph, int32_t node_index,
                                    char *out_where);

/* Output extent of a sliding window (conv or pool) along one axis, or a
 * value < 1 when the window does not fit. */
int64_t hetc_window_output_extent(int64_t input, int32_t kernel, int32_t stride,
                                  int32_t pad_begin, int32_t pad_end,
                                  int32_t dilation, int ceil_mode);

#endif /* HETC_DRIVER_GRAPH_INFER_H_ */
