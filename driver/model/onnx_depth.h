/* driver/model/onnx_depth.h -- how deeply an ONNX file nests its messages,
 * measured before protobuf-c unpacks it: protobuf-c recurses once per
 * level, so a small file nesting thousands of levels (attributes holding
 * graphs holding attributes ...) would overflow the stack. */
#ifndef HETC_DRIVER_MODEL_ONNX_DEPTH_H_
#define HETC_DRIVER_MODEL_ONNX_DEPTH_H_

#include <protobuf-c/protobuf-c.h>
#include <stddef.h>
#include <stdint.h>

/* Messages a model may nest (a ModelProto is level 1; api/limits.md). Real
 * models nest about 10 (a graph in an If's branch adds 3 a level). */
#define HETC_ONNX_MAX_DEPTH 100

/* 1 when the message of type `descriptor` in data[0, length) nests more
 * than max_depth levels of messages; *out_offset is then the byte where
 * the level past the bound starts. Without recursion. Bytes that do not
 * parse are left to protobuf-c to refuse: the walk stops there with 0. */
int hetc_onnx_nests_deeper(const ProtobufCMessageDescriptor *descriptor, const uint8_t *data, size_t length,
                           int max_depth, size_t *out_offset);

#endif /* HETC_DRIVER_MODEL_ONNX_DEPTH_H_ */
