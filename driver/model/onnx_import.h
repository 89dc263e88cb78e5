/* driver/model/onnx_import.h -- ONNX models in, hetc's graph out.
 *
 * The importer reads a ModelProto with protobuf-c (C generated at build time
 * from Debian's onnx.proto), evaluates every node whose inputs are constant
 * (onnx_fold.h), translates the rest onto hetc's ops (onnx_ops.c) and
 * infers shapes as it goes, so that what comes out is the same checked graph
 * the model.json loader makes. Every rejection is a HETC_STATUS_BAD_INPUT
 * naming the file and the node (name, index and op), initializer or graph
 * input at fault. */
#ifndef HETC_DRIVER_MODEL_ONNX_IMPORT_H_
#define HETC_DRIVER_MODEL_ONNX_IMPORT_H_

#include <stddef.h>
#include <stdint.h>

#include "graph/graph.h"

/* Largest ONNX file read, in bytes: protobuf's own limit. */
#define HETC_ONNX_MAX_FILE_BYTES ((size_t)2 << 30)

/* Imports `path`. options may be NULL. *out_graph is owned by the caller
 * (hetc_graph_free). */
hetc_status_t hetc_onnx_import_file(const char *path, const hetc_model_load_options_t *options,
                                   hetc_graph_t **out_graph);

/* Imports a model from memory; display_name prefixes messages and external
 * data is looked up in base_dir. Used by the fuzz target. */
hetc_status_t hetc_onnx_import_buffer(const uint8_t *data, size_t length, const char *display_name,
                                     const char *base_dir, const hetc_model_load_options_t *options,
                                     hetc_graph_t **out_graph);

#endif /* HETC_DRIVER_MODEL_ONNX_IMPORT_H_ */
