/* driver/model/onnx_schema.h -- the inputs, outputs and attributes each ONNX
 * op hetc reads may have, by the opset the model declares.
 *
 * An op's form changes with the opset (Clip took its bounds as attributes
 * until opset 11, then as inputs): a node written for another opset would
 * otherwise be read as something else. Ops hetc does not know are left to
 * the importer, which refuses them by name. */
#ifndef HETC_DRIVER_MODEL_ONNX_SCHEMA_H_
#define HETC_DRIVER_MODEL_ONNX_SCHEMA_H_

#include <stdint.h>

#include "common/status.h"
#include "onnx.pb-c.h"

/* NULL when `node` has as many inputs and outputs as its op takes at
 * `opset`, and only attributes the op defines there; otherwise a bare
 * BAD_INPUT message (the caller names the node). */
hetc_status_t hetc_onnx_check_schema(const Onnx__NodeProto *node, int64_t opset);

#endif /* HETC_DRIVER_MODEL_ONNX_SCHEMA_H_ */
