/* Decoding ONNX TensorProtos (onnx_tensor.h). */
#include "model/onnx_tensor.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/fileio.h"
#include "graph/infer.h"

/* TensorProto.DataType values (onnx.proto). */
enum {
  T_FLOAT = 1, T_UINT8 = 2, T_INT8 = 3, T_UINT16 = 4, T_INT16 = 5, T_INT32 = 6, T_INT64 = 7, T_STRING = 8,
  T_BOOL = 9, T_FLOAT16 = 10, T_DOUBLE = 11, T_UINT32 = 12, T_UINT64 = 13, T_BFLOAT16 = 16
};

const char *hetc_onnx_type_name(int32_t data_type) {
  static const char *const names[] = {"UNDEFINED", "FLOAT",  "UINT8",     "INT8",      "UINT16", "INT16",
                                      "INT32",     "INT64",  "STRING",    "BOOL",      "FLOAT16", "DOUBLE",
                                      "UINT32",    "UINT64", "COMPLEX64", "COMPLEX128", "BFLOAT16"};
  if (data_type >= 0 && data_type < (int32_t)(sizeof(names) / sizeof(names[0]))) return names[data_type];
  return "an unknown type";
}

hetc_status_t hetc_onnx_const_alloc(hetc_onnx_const_t *c, int is_int, int32_t rank, const int64_t *dims) {
  memset(c, 0, sizeof(*c));
  if (rank < 0 || rank > HETC_ONNX_MAX_RANK)
    return hetc_status_new(HETC_STATUS_BAD_INPUT, "rank %d is above the %d hetc reads", (int)rank, HETC_ONNX_MAX_RANK);
  int64_t count = 1;
  for (int32_t d = 0; d < rank; ++d) {
    if (dims[d] < 0) return hetc_status_new(HETC_STATUS_BAD_INPUT, "dimension %d is negative (%lld)", (int)d, (long long)dims[d]);
    if (dims[d] && count > HETC_ONNX_MAX_CONST_ELEMENTS / dims[d])
      return hetc_status_new(HETC_STATUS_BAD_INPUT, "a constant of more than 2^27 (134217728) values (api/limits.md)");
    count *= dims[d];
    c->dims[d] = dims[d];
  }
#ifdef FUZZING_BUILD_MODE_UNSAFE_FOR_PRODUCTION
  /* Fuzz builds only (tests/fuzz): a constant may hold 2^31 values, which
   * no fuzzer memory limit allows. */
  if (count > (INT64_C(1) << 22)) return hetc_status_new(HETC_STATUS_OUT_OF_MEMORY, "fuzzing build: a constant above 2^22 values");
#endif
  c->is_int = is_int;
  c->rank = rank;
  c->count = count;
  if (is_int) c->i = calloc((size_t)count + 1, sizeof(int64_t));
  else c->f = calloc((size_t)count + 1, sizeof(float));
  if (!c->i && !c->f) return hetc_status_new(HETC_STATUS_OUT_OF_MEMORY, "a tensor of %lld values", (long long)count);
  return NULL;
}

void hetc_onnx_const_release(hetc_onnx_const_t *c) {
  free(c->f);
  free(c->i);
  memset(c, 0, sizeof(*c));
}

double hetc_onnx_const_get(const hetc_onnx_const_t *c, int64_t k) { return c->is_int ? (double)c->i[k] : c->f[k]; }

int64_t hetc_onnx_const_get_int(const hetc_onnx_const_t *c, int64_t k) {
  if (c->is_int) return c->i[k];
  const float v = c->f[k];
  return isfinite(v) && fabsf(v) < 9.2e18f ? (int64_t)v : 0;
}

/* IEEE half to float, subnormals and infinities included. */
static float half_to_float(uint16_t h) {
  const int sign = h >> 15, exponent = (h >> 10) & 31, mantissa = h & 1023;
  float value;
  if (exponent == 0) value = ldexpf((float)mantissa, -24);
  else if (exponent == 31) value = mantissa ? NAN : INFINITY;
  else value = ldexpf((float)(mantissa | 1024), exponent - 25);
  return sign ? -value : value;
}

static float bfloat16_to_float(uint16_t b) {
  const uint32_t bits = (uint32_t)b << 16;
  float value;
  memcpy(&value, &bits, sizeof(value));
  return value;
}

static size_t element_bytes(int32_t type) {
  switch (type) {
    case T_UINT8: case T_INT8: case T_BOOL: return 1;
    case T_UINT16: case T_INT16: case T_FLOAT16: case T_BFLOAT16: return 2;
    case T_FLOAT: case T_INT32: case T_UINT32: return 4;
    case T_INT64: case T_DOUBLE: case T_UINT64: return 8;
    default: return 0;
  }
}

/* Little-endian bytes, whatever the host. */
static uint64_t read_le(const uint8_t *p, size_t bytes) {
  uint64_t v = 0;
  for (size_t b = 0; b < bytes; ++b) v |= (uint64_t)p[b] << (8 * b);
  return v;
}

/* One raw element of `type` as a double (floats) or int64 (integers). */
static void store_raw(hetc_onnx_const_t *c, int64_t k, int32_t type, const uint8_t *p) {
  const uint64_t bits = read_le(p, element_bytes(type));
  switch (type) {
    case T_FLOAT: {
      const uint32_t b32 = (uint32_t)bits;
      memcpy(&c->f[k], &b32, 4);
      break;
    }
    case T_DOUBLE: {
      double d;
      memcpy(&d, &bits, 8);
      c->f[k] = (float)d;
      break;
    }
    case T_FLOAT16: c->f[k] = half_to_float((uint16_t)bits); break;
    case T_BFLOAT16: c->f[k] = bfloat16_to_float((uint16_t)bits); break;
    case T_INT8: c->i[k] = (int8_t)bits; break;
    case T_INT16: c->i[k] = (int16_t)bits; break;
    case T_INT32: c->i[k] = (int32_t)bits; break;
    default: c->i[k] = (int64_t)bits; break; /* unsigned types, INT64, BOOL */
  }
}

/* The bytes of an external tensor: location relative to the model's
 * folder and inside it (symbolic links included), offset and length inside
 * the file. *out_bytes is the caller's to free. */
static hetc_status_t read_external(const Onnx__TensorProto *t, const hetc_onnx_file_t *file, uint64_t expected,
                                   uint8_t **out_bytes) {
  const char *location = NULL;
  uint64_t offset = 0, length = expected;
  int has_length = 0;
  for (size_t e = 0; e < t->n_external_data; ++e) {
    const char *key = t->external_data[e]->key ? t->external_data[e]->key : "";
    const char *value = t->external_data[e]->value ? t->external_data[e]->value : "";
    char *end = NULL;
    if (!strcmp(key, "location")) {
      location = value;
    } else if (!strcmp(key, "offset") || !strcmp(key, "length")) {
      errno = 0;
      const unsigned long long number = strtoull(value, &end, 10);
      if (!value[0] || *end || errno || value[0] == '-')
        return hetc_status_new(HETC_STATUS_BAD_INPUT, "external data %s '%s' is not a byte count", key, value);
      if (key[0] == 'o') offset = number;
      else length = number, has_length = 1;
    }
  }
  if (!location || !location[0]) return hetc_status_new(HETC_STATUS_BAD_INPUT, "external data without a location");
  int escapes = location[0] == '/';
  for (const char *part = location; !escapes && part; part = strchr(part, '/') ? strchr(part, '/') + 1 : NULL)
    escapes = !strncmp(part, "..", 2) && (part[2] == '/' || part[2] == 0);
  char *path = hetc_path_join(file->base_dir, location);
  char *real_dir = realpath(file->base_dir, NULL);
  char *real_path = path ? realpath(path, NULL) : NULL;
  const int open_errno = errno;
  hetc_status_t status = NULL;
  if (!path || !real_dir) {
    status = hetc_status_new(HETC_STATUS_OUT_OF_MEMORY, "external data");
  } else if (escapes || (real_path && (strncmp(real_path, real_dir, strlen(real_dir)) != 0 ||
                                       (real_path[strlen(real_dir)] != '/' && strcmp(real_dir, "/") != 0)))) {
    status = hetc_status_new(HETC_STATUS_BAD_INPUT,
                             "external data location '%s' is outside the model's folder (it must be a relative "
                             "path to a file beside the model)", location);
  } else if (!real_path) {
    status = hetc_status_new(HETC_STATUS_BAD_INPUT, "external data file '%s' cannot be opened: %s", location,
                             strerror(open_errno));
  }
  int fd = -1;
  uint64_t file_bytes = 0;
  if (!status) {
    status = hetc_file_open_regular(real_path, &fd, &file_bytes);
    if (status) status = hetc_status_annotate(status, "external data file '%s'", location);
  }
  if (!status && has_length && length != expected)
    status = hetc_status_new(HETC_STATUS_BAD_INPUT, "external data length %llu does not match its dims (%llu bytes)",
                             (unsigned long long)length, (unsigned long long)expected);
  if (!status && (offset > file_bytes || file_bytes - offset < expected))
    status = hetc_status_new(HETC_STATUS_BAD_INPUT,
                             "external data file '%s' holds %llu bytes; offset %llu and length %llu reach past its end",
                             location, (unsigned long long)file_bytes, (unsigned long long)offset,
                             (unsigned long long)expected);
  uint8_t *bytes = NULL;
  if (!status && !(bytes = malloc((size_t)expected + 1))) status = hetc_status_new(HETC_STATUS_OUT_OF_MEMORY, "external data");
  for (uint64_t done = 0; !status && done < expected;) {
    const ssize_t got = pread(fd, bytes + done, (size_t)(expected - done), (off_t)(offset + done));
    if (got <= 0)
      status = hetc_status_new(HETC_STATUS_IO_ERROR, "external data file '%s': read failed: %s", location,
                               got < 0 ? strerror(errno) : "unexpected end of file");
    else done += (uint64_t)got;
  }
  if (fd >= 0) close(fd);
  free(path);
  free(real_dir);
  free(real_path);
  if (status) {
    free(bytes);
    return status;
  }
  *out_bytes = bytes;
  return NULL;
}

void hetc_onnx_const_dims_text(const hetc_onnx_const_t *c, char *out, size_t size) {
  size_t used = 0;
  out[0] = '\0';
  for (int32_t d = 0; d < c->rank && used < size; ++d)
    used += (size_t)snprintf(out + used, size - used, "%s%lld", d ? "," : "", (long long)c->dims[d]);
}

static hetc_status_t size_mismatch(const hetc_onnx_const_t *c, const char *field, uint64_t got, const char *unit) {
  char dims[160];
  hetc_onnx_const_dims_text(c, dims, sizeof(dims));
  return hetc_status_new(HETC_STATUS_BAD_INPUT, "%s holds %llu %s but dims [%s] need %lld", field,
                         (unsigned long long)got, unit, dims, (long long)c->count);
}

hetc_status_t hetc_onnx_tensor_decode(const Onnx__TensorProto *t, const hetc_onnx_file_t *file,
                                      hetc_onnx_const_t *out, const char **out_converted_from) {
  *out_converted_from = NULL;
  const int32_t type = t->has_data_type ? t->data_type : 0;
  const size_t bytes = element_bytes(type);
  if (!bytes)
    return hetc_status_new(HETC_STATUS_BAD_INPUT, "data type %s is not supported (hetc reads float and integer tensors)",
                           hetc_onnx_type_name(type));
  const int is_float = type == T_FLOAT || type == T_DOUBLE || type == T_FLOAT16 || type == T_BFLOAT16;
  if ((int64_t)t->n_dims > HETC_ONNX_MAX_RANK)
    return hetc_status_new(HETC_STATUS_BAD_INPUT, "rank %zu is above the %d hetc reads", t->n_dims, HETC_ONNX_MAX_RANK);
  HETC_RETURN_IF_ERROR(hetc_onnx_const_alloc(out, !is_float, (int32_t)t->n_dims, t->dims));
  if (type == T_DOUBLE || type == T_FLOAT16 || type == T_BFLOAT16) *out_converted_from = hetc_onnx_type_name(type);
  const uint64_t expected = (uint64_t)out->count * bytes;
  const int external = t->has_data_location && t->data_location == ONNX__TENSOR_PROTO__DATA_LOCATION__EXTERNAL;
  const size_t typed = t->n_float_data + t->n_int32_data + t->n_int64_data + t->n_double_data + t->n_uint64_data;
  hetc_status_t status = NULL;
  const uint8_t *raw = NULL;
  uint8_t *external_bytes = NULL;
  /* Left as zeros: the weights are dropped once the graph is imported. */
  const int unread = external && file->shapes_only && is_float && out->count > HETC_ONNX_MAX_RANK;
  if (external && !unread) {
    status = read_external(t, file, expected, &external_bytes);
    raw = external_bytes;
  } else if (!external && t->has_raw_data) {
    if (typed) status = hetc_status_new(HETC_STATUS_BAD_INPUT, "has both raw_data and typed values");
    else if (t->raw_data.len != expected) status = size_mismatch(out, "raw_data", t->raw_data.len, "bytes");
    else raw = t->raw_data.data;
  }
  if (!status && raw) {
    for (int64_t k = 0; k < out->count; ++k) store_raw(out, k, type, raw + (size_t)k * bytes);
  } else if (!status && !unread) {
    /* The typed field each type is stored in (onnx.proto's comments). */
    switch (type) {
      case T_FLOAT:
        if (t->n_float_data != (size_t)out->count) status = size_mismatch(out, "float_data", t->n_float_data, "values");
        else if (out->count) memcpy(out->f, t->float_data, sizeof(float) * (size_t)out->count);
        break;
      case T_DOUBLE:
        if (t->n_double_data != (size_t)out->count) status = size_mismatch(out, "double_data", t->n_double_data, "values");
        for (int64_t k = 0; !status && k < out->count; ++k) out->f[k] = (float)t->double_data[k];
        break;
      case T_INT64:
        if (t->n_int64_data != (size_t)out->count) status = size_mismatch(out, "int64_data", t->n_int64_data, "values");
        else if (out->count) memcpy(out->i, t->int64_data, sizeof(int64_t) * (size_t)out->count);
        break;
      case T_UINT32:
      case T_UINT64:
        if (t->n_uint64_data != (size_t)out->count) status = size_mismatch(out, "uint64_data", t->n_uint64_data, "values");
        for (int64_t k = 0; !status && k < out->count; ++k) out->i[k] = (int64_t)t->uint64_data[k];
        break;
      default: /* int32_data holds every narrower type, float16 as its bits */
        if (t->n_int32_data != (size_t)out->count) status = size_mismatch(out, "int32_data", t->n_int32_data, "values");
        for (int64_t k = 0; !status && k < out->count; ++k) {
          const int32_t v = t->int32_data[k];
          if (type == T_FLOAT16) out->f[k] = half_to_float((uint16_t)v);
          else if (type == T_BFLOAT16) out->f[k] = bfloat16_to_float((uint16_t)v);
          else out->i[k] = v;
        }
        break;
    }
  }
  free(external_bytes);
  if (status) hetc_onnx_const_release(out);
  return status;
}
