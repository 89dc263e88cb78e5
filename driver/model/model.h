/* driver/model/model.h -- model.json and weights in, a checked graph out.
 *
 * The loader treats its input as hostile: every rejection is a
 * HETC_STATUS_BAD_INPUT whose message starts with the file name and the JSON
 * pointer of the offending value and says what was expected (see
 * api/model-format.md). On success the graph has every shape inferred, nodes
 * in topological order and every parameter loaded. */
#ifndef HETC_DRIVER_MODEL_MODEL_H_
#define HETC_DRIVER_MODEL_MODEL_H_

#include <stddef.h>

#include "graph/graph.h"

/* Largest model file accepted, in bytes. */
#define HETC_MODEL_MAX_FILE_BYTES (64u << 20)

/* Loads `path`. *out_graph is owned by the caller (hetc_graph_free). */
hetc_status_t hetc_model_load_file(const char *path, hetc_graph_t **out_graph);
/* The same without weights: "weights" is checked for its form only, and
 * the graph is shapes_only (hetc_weights_shapes_only). */
hetc_status_t hetc_model_load_file_shapes_only(const char *path, hetc_graph_t **out_graph);

/* Loads a model from memory. display_name prefixes messages; a weights
 * file is looked up relative to base_dir. Used by the fuzz target. */
hetc_status_t hetc_model_load_buffer(const char *text, size_t length,
                                     const char *display_name,
                                     const char *base_dir,
                                     hetc_graph_t **out_graph);

/* Fills every node's params with the deterministic random init of
 * api/model-format.md. */
hetc_status_t hetc_weights_init_random(hetc_graph_t *graph, uint64_t seed);

/* Gives every node's params their shapes and no data (freeing what they
 * had): the graph becomes shapes_only. */
void hetc_weights_shapes_only(hetc_graph_t *graph);

/* Reads every node's params from a weights file (format in
 * api/model-format.md); `display_name` prefixes messages. */
hetc_status_t hetc_weights_load_file(hetc_graph_t *graph, const char *path,
                                     const char *display_name);

/* Logical shape of param `slot` of a node whose input shapes are inferred;
 * returns 0 when the node has no such param. */
int hetc_weights_param_shape(const hetc_graph_t *graph, const hetc_node_t *node,
                             int slot, hetc_param_t *out_shape);

/* Tensor name of a param in weights files ("<node>.weight", ...). */
const char *hetc_weights_param_suffix(hetc_op_t op, int slot);

#endif /* HETC_DRIVER_MODEL_MODEL_H_ */
