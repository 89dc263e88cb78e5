/* Reading NodeProto attributes (onnx_attr.h). */
#include "model/onnx_attr.h"

#include "common/escape.h"

#include <stdio.h>
#include <string.h>

static const char *type_name(const Onnx__AttributeProto *a) {
  switch (a->has_type ? (int)a->type : 0) {
    case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOAT: return "a float";
    case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INT: return "an int";
    case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__STRING: return "a string";
    case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__TENSOR: return "a tensor";
    case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__GRAPH: return "a graph";
    case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOATS: return "floats";
    case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INTS: return "ints";
    case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__STRINGS: return "strings";
    default: return "an attribute of no type hetc reads";
  }
}

static hetc_status_t wrong_type(const Onnx__AttributeProto *a, const char *expected) {
  return hetc_status_new(HETC_STATUS_BAD_INPUT, "attribute '%s': expected %s, got %s", a->name, expected,
                         type_name(a));
}

/* Models from before IR version 3 may leave `type` out; the field that is
 * set tells then. */
static int is_type(const Onnx__AttributeProto *a, Onnx__AttributeProto__AttributeType type, int present) {
  return a->has_type ? a->type == type : present;
}

const Onnx__AttributeProto *hetc_onnx_attr(const Onnx__NodeProto *node, const char *name) {
  for (size_t k = 0; k < node->n_attribute; ++k)
    if (node->attribute[k]->name && !strcmp(node->attribute[k]->name, name)) return node->attribute[k];
  return NULL;
}

hetc_status_t hetc_onnx_attr_int(const Onnx__NodeProto *node, const char *name, int64_t fallback, int64_t *out) {
  const Onnx__AttributeProto *a = hetc_onnx_attr(node, name);
  *out = fallback;
  if (!a) return NULL;
  if (!is_type(a, ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INT, a->has_i)) return wrong_type(a, "an int");
  *out = a->i;
  return NULL;
}

hetc_status_t hetc_onnx_attr_float(const Onnx__NodeProto *node, const char *name, float fallback, float *out) {
  const Onnx__AttributeProto *a = hetc_onnx_attr(node, name);
  *out = fallback;
  if (!a) return NULL;
  if (!is_type(a, ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOAT, a->has_f)) return wrong_type(a, "a float");
  *out = a->f;
  return NULL;
}

hetc_status_t hetc_onnx_attr_ints(const Onnx__NodeProto *node, const char *name, int32_t max, int64_t *out,
                                  int32_t *out_count) {
  const Onnx__AttributeProto *a = hetc_onnx_attr(node, name);
  *out_count = -1;
  if (!a) return NULL;
  if (!is_type(a, ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INTS, 1)) return wrong_type(a, "ints");
  if (a->n_ints > (size_t)max)
    return hetc_status_new(HETC_STATUS_BAD_INPUT, "attribute '%s': %zu values, at most %d expected", name, a->n_ints,
                           (int)max);
  if (a->n_ints) memcpy(out, a->ints, sizeof(int64_t) * a->n_ints);
  *out_count = (int32_t)a->n_ints;
  return NULL;
}

hetc_status_t hetc_onnx_attr_string(const Onnx__NodeProto *node, const char *name, const char *fallback, char *out,
                                    size_t size) {
  const Onnx__AttributeProto *a = hetc_onnx_attr(node, name);
  snprintf(out, size, "%s", fallback);
  if (!a) return NULL;
  if (!is_type(a, ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__STRING, a->has_s)) return wrong_type(a, "a string");
  const size_t length = a->s.len < size - 1 ? a->s.len : size - 1;
  if (length) memcpy(out, a->s.data, length);
  out[length] = 0;
  /* Every string hetc knows is printable: another would reach a message. */
  if (strlen(out) != a->s.len || hetc_needs_escape(out, NULL))
    return hetc_status_new(HETC_STATUS_BAD_INPUT, "attribute '%s': not a string hetc knows", name);
  return NULL;
}
