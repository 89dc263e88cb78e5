/* driver/graph/split.h -- splitting a conv2d by output channels, so that
 * two devices can each compute a share of one layer at the same time. */
#ifndef HETC_DRIVER_GRAPH_SPLIT_H_
#define HETC_DRIVER_GRAPH_SPLIT_H_

#include "graph/graph.h"

/* Shares of a layer with `channels` output channels are multiples of this
 * (8 where there are 32 or more, so blocked layouts' blocks stay whole). */
int64_t hetc_split_channel_step(int64_t channels);

/* 1 when node_index is a conv2d that can be split: one group (a grouped
 * conv's shares would need input slices too), no fused residual (the
 * residual would need slicing), at least two output channels. */
int hetc_graph_can_split_conv2d(const hetc_graph_t *graph, int32_t node_index);

/* Replaces conv2d node_index by "<name>.part0" (output channels
 * [0, first_channels)), "<name>.part1" (the rest), both reading the same
 * inputs, and a concat on the channel axis named "<name>" that writes the
 * node's original value. Nodes after node_index move two places on. On
 * failure the graph is unchanged. */
hetc_status_t hetc_graph_split_conv2d(hetc_graph_t *graph, int32_t node_index, int64_t first_channels);

#endif /* HETC_DRIVER_GRAPH_SPLIT_H_ */
