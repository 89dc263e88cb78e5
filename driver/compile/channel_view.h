/* driver/compile/channel_view.h -- concats and channel slices that cost
 * nothing.
 *
 * With batch 1, a concat on the channel axis of tensors in one layout
 * whose channel blocks do not straddle inputs (row-major NCHW, or NCHW[b]c
 * with every input's channels a multiple of b) is the inputs laid end to
 * end. When the device's plugin can alias buffers (plugin.h, buffer_view),
 * the producers of the inputs write straight into the slices of the
 * concat's output and no concat kernel runs: compile.c plans it that way,
 * and placement (placement_costs.c) prices such a concat at zero. */
#ifndef HETC_DRIVER_COMPILE_CHANNEL_VIEW_H_
#define HETC_DRIVER_COMPILE_CHANNEL_VIEW_H_

#include "graph/graph.h"
#include "plugins/registry.h"

/* 1 when node `node_index` is a concat that can be laid out as views in
 * `layout`, with each input's byte offset in the output written to
 * out_offsets (HETC_MAX_NODE_INPUTS entries; every one a multiple of 64,
 * as buffer_view requires); else 0. The graph's conditions only (shapes,
 * inputs made by nodes, no model output among them), which placement
 * prices by: whether the inputs are really written by kernels on the
 * concat's device, in that layout, is the compile's business. */
int hetc_concat_view_offsets(const hetc_graph_t *graph, int32_t node_index, hetc_plugin_layout_t layout,
                             uint64_t *out_offsets);

/* The inverse: a channel slice of such a tensor, channels [first, first +
 * count) with first and count multiples of b, is a part of it, so its
 * readers can read it where it lies. The importer writes ONNX's Slice and
 * Split of channels as a 1x1 conv2d whose weight picks one input channel
 * per output channel (and nothing else: no bias, no fused epilogue); such
 * a conv is that slice. 1 when node `node_index` is one with its input
 * laid out in `layout`, with the slice's byte offset in its input written
 * to *out_offset (a multiple of 64); else 0. As above, the graph's
 * conditions only (the input made by a node, neither value a model
 * output); placement prices such a slice at zero. */
int hetc_slice_view_offset(const hetc_graph_t *graph, int32_t node_index, hetc_plugin_layout_t layout,
                           uint64_t *out_offset);

/* The plugin's buffer_view, or NULL when it has none (older ABI minor). */
typedef hetc_plugin_status_t (*hetc_buffer_view_fn_t)(hetc_plugin_instance_t *, hetc_plugin_buffer_t *,
                                                      uint64_t, uint64_t, hetc_plugin_buffer_t **);
hetc_buffer_view_fn_t hetc_plugin_buffer_view_call(const hetc_plugin_t *plugin);

#endif /* HETC_DRIVER_COMPILE_CHANNEL_VIEW_H_ */
