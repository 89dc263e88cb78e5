/* driver/model/onnx_attr.h -- reading a NodeProto's attributes.
 *
 * Each getter checks the attribute's type; failures are BAD_INPUT with a
 * bare message ("attribute 'strides': expected ints, got a float") that
 * the importer prefixes with the file and the node. */
#ifndef HETC_DRIVER_MODEL_ONNX_ATTR_H_
#define HETC_DRIVER_MODEL_ONNX_ATTR_H_

#include <stddef.h>
#include <stdint.h>

#include "common/status.h"
#include "onnx.pb-c.h"

/* The attribute `name` of node, or NULL. */
const Onnx__AttributeProto *hetc_onnx_attr(const Onnx__NodeProto *node, const char *name);

/* An INT attribute, or `fallback` when absent. */
hetc_status_t hetc_onnx_attr_int(const Onnx__NodeProto *node, const char *name, int64_t fallback, int64_t *out);
/* A FLOAT attribute, or `fallback` when absent. */
hetc_status_t hetc_onnx_attr_float(const Onnx__NodeProto *node, const char *name, float fallback, float *out);
/* An INTS attribute of at most `max` values into out; *out_count is -1 when
 * the attribute is absent. */
hetc_status_t hetc_onnx_attr_ints(const Onnx__NodeProto *node, const char *name, int32_t max, int64_t *out,
                                  int32_t *out_count);
/* A STRING attribute copied into out (size bytes, NUL-terminated), or
 * `fallback` when absent. */
hetc_status_t hetc_onnx_attr_string(const Onnx__NodeProto *node, const char *name, const char *fallback, char *out,
                                    size_t size);

#endif /* HETC_DRIVER_MODEL_ONNX_ATTR_H_ */
