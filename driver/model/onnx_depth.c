/* The nesting of an ONNX file's messages, from its wire format
 * (onnx_depth.h). */
#include "model/onnx_depth.h"

#include <stdlib.h>

/* A varint at data[*pos, end); 0 when it does not parse. */
static int read_varint(const uint8_t *data, size_t end, size_t *pos, uint64_t *out) {
  uint64_t value = 0;
  for (int shift = 0; shift < 64 && *pos < end; shift += 7) {
    const uint8_t byte = data[(*pos)++];
    value |= (uint64_t)(byte & 0x7f) << shift;
    if (!(byte & 0x80)) {
      *out = value;
      return 1;
    }
  }
  return 0;
}

typedef struct level_t {
  const ProtobufCMessageDescriptor *descriptor;
  size_t end;
} level_t;

int hetc_onnx_nests_deeper(const ProtobufCMessageDescriptor *descriptor, const uint8_t *data, size_t length,
                           int max_depth, size_t *out_offset) {
  /* One slot past the bound: entering it is the answer. */
  level_t *stack = malloc(sizeof(level_t) * (size_t)(max_depth + 1));
  if (!stack) return 0;
  int depth = 1;
  stack[0] = (level_t){descriptor, length};
  size_t pos = 0;
  int deeper = 0;
  while (depth > 0 && !deeper) {
    level_t *top = &stack[depth - 1];
    if (pos == top->end) {
      --depth;
      continue;
    }
    uint64_t tag, size;
    if (!read_varint(data, top->end, &pos, &tag)) break;
    const uint32_t wire_type = (uint32_t)(tag & 7);
    if (wire_type == 0) {
      if (!read_varint(data, top->end, &pos, &size)) break;
    } else if (wire_type == 1 || wire_type == 5) {
      const size_t bytes = wire_type == 1 ? 8 : 4;
      if (top->end - pos < bytes) break;
      pos += bytes;
    } else if (wire_type == 2) {
      if (!read_varint(data, top->end, &pos, &size) || size > top->end - pos) break;
      const ProtobufCFieldDescriptor *field =
          tag >> 3 <= UINT32_MAX && top->descriptor
              ? protobuf_c_message_descriptor_get_field(top->descriptor, (unsigned)(tag >> 3))
              : NULL;
      if (field && field->type == PROTOBUF_C_TYPE_MESSAGE) {
        if (depth == max_depth) {
          deeper = 1;
          *out_offset = pos;
          break;
        }
        stack[depth++] = (level_t){field->descriptor, pos + (size_t)size};
      } else {
        pos += (size_t)size;
      }
    } else {
      break; /* groups (wire types 3 and 4) and the invalid 6 and 7 */
    }
  }
  free(stack);
  return deeper;
}
