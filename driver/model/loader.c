/* The model.json reader: structure, types, ranges, names, wiring, cycles,
 * dead nodes, then shape inference and weights. Every check reports the file
 * and the JSON pointer of the value at fault. */
#include <cjson/cJSON.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/fileio.h"
#include "common/json_input.h"
#include "common/name_map.h"
#include "graph/infer.h"
#include "model/model.h"

#define MAX_NAME_BYTES 255
#define MAX_GRAPH_IO 16
#define MAX_NODES 100000
#define MAX_CONCAT_INPUTS 64
#define MAX_WINDOW 1024
#define MAX_CHANNELS (1 << 20)

typedef struct loader_t {
  const char *file; /* display name for messages */
  const char *base_dir;
  hetc_graph_t *graph;
  int32_t *json_index; /* node (topological order) -> index in /nodes */
  int shapes_only;     /* the weights are checked for their form, not loaded */
} loader_t;

static hetc_status_t fail(const loader_t *L, const char *path, const char *format, ...)
    HETC_PLUGIN_PRINTF(3, 4);

static hetc_status_t fail(const loader_t *L, const char *path, const char *format, ...) {
  char message[768];
  va_list args;
  va_start(args, format);
  vsnprintf(message, sizeof(message), format, args);
  va_end(args);
  return hetc_status_new(HETC_STATUS_BAD_INPUT, "%s: %s: %s", L->file,
                         path[0] ? path : "/", message);
}

/* Short rendering of a JSON value for "got ..." in messages. */
static void describe(const cJSON *item, char *buf, size_t size) {
  if (!item) {
    snprintf(buf, size, "nothing");
    return;
  }
  if (cJSON_IsNumber(item) && isfinite(item->valuedouble)) {
    /* cJSON prints with 15 significant digits when that round-trips only
     * approximately (2^53 comes out as 9.00719925474099e+15, which reads as
     * a smaller number); print the shortest exact form instead. */
    for (int digits = 15; digits <= 17; ++digits) {
      snprintf(buf, size, "%.*g", digits, item->valuedouble);
      if (strtod(buf, NULL) == item->valuedouble) break;
    }
    return;
  }
  if (cJSON_IsNumber(item)) { /* 1e400: cJSON would print null */
    snprintf(buf, size, "a number too large for a double");
    return;
  }
  char *text = cJSON_PrintUnformatted(item);
  if (!text) {
    snprintf(buf, size, "a value");
    return;
  }
  if (strlen(text) > 60) {
    snprintf(buf, size, "%.57s...", text);
  } else {
    snprintf(buf, size, "%s", text);
  }
  cJSON_free(text);
}

#define GOT(item) (describe((item), got, sizeof(got)), got)

/* Rejects keys of `object` that are not in the NULL-terminated `allowed`. */
static hetc_status_t check_keys(const loader_t *L, const cJSON *object,
                                const char *path, const char *const *allowed) {
  const cJSON *entry;
  cJSON_ArrayForEach(entry, object) {
    int known = 0;
    for (const char *const *k = allowed; *k; ++k) known |= strcmp(*k, entry->string) == 0;
    if (!known) {
      char list[256] = "";
      size_t used = 0;
      for (const char *const *k = allowed; *k && used < sizeof(list); ++k) {
        used += (size_t)snprintf(list + used, sizeof(list) - used, "%s%s",
                                 k == allowed ? "" : ", ", *k);
      }
      return fail(L, path, "unknown key \"%s\" (expected %s%s)", entry->string,
                  allowed[0] ? "one of: " : "no keys", list);
    }
    /* cJSON keeps duplicate keys; a second one would be silently ignored. */
    for (const cJSON *later = entry->next; later; later = later->next) {
      if (strcmp(later->string, entry->string) == 0)
        return fail(L, path, "duplicate key \"%s\"", entry->string);
    }
  }
  return NULL;
}

static hetc_status_t require(const loader_t *L, const cJSON *object, const char *path,
                             const char *key, const cJSON **out) {
  *out = cJSON_GetObjectItemCaseSensitive(object, key);
  if (!*out) return fail(L, path, "missing required key \"%s\"", key);
  return NULL;
}

static int is_integer(const cJSON *item, double lo, double hi) {
  return cJSON_IsNumber(item) && isfinite(item->valuedouble) &&
         floor(item->valuedouble) == item->valuedouble && item->valuedouble >= lo &&
         item->valuedouble <= hi;
}

static hetc_status_t get_int(const loader_t *L, const cJSON *item, const char *path,
                             int64_t lo, int64_t hi, int64_t *out) {
  char got[80];
  if (!is_integer(item, (double)lo, (double)hi))
    return fail(L, path, "expected an integer in [%lld, %lld], got %s", (long long)lo,
                (long long)hi, GOT(item));
  *out = (int64_t)item->valuedouble;
  return NULL;
}

static hetc_status_t get_bool(const loader_t *L, const cJSON *item, const char *path,
                              int32_t *out) {
  char got[80];
  if (!cJSON_IsBool(item)) return fail(L, path, "expected true or false, got %s", GOT(item));
  *out = cJSON_IsTrue(item);
  return NULL;
}

/* An array of exactly `count` integers in [lo, hi]. */
static hetc_status_t get_int_array(const loader_t *L, const cJSON *item, const char *path,
                                   int count, int64_t lo, int64_t hi, const char *what,
                                   int32_t *out) {
  char got[80];
  int ok = cJSON_IsArray(item) && cJSON_GetArraySize(item) == count;
  for (int i = 0; ok && i < count; ++i) ok = is_integer(cJSON_GetArrayItem(item, i), (double)lo, (double)hi);
  if (!ok) return fail(L, path, "expected %d %s, got %s", count, what, GOT(item));
  for (int i = 0; i < count; ++i) out[i] = (int32_t)cJSON_GetArrayItem(item, i)->valuedouble;
  return NULL;
}

static int valid_name(const char *name) {
  size_t length = strlen(name);
  if (length == 0 || length > MAX_NAME_BYTES) return 0;
  for (const char *c = name; *c; ++c) {
    if (!(('a' <= *c && *c <= 'z') || ('A' <= *c && *c <= 'Z') || ('0' <= *c && *c <= '9') ||
          strchr("_.:/-", *c)))
      return 0;
  }
  return 1;
}

static hetc_status_t get_name(const loader_t *L, const cJSON *item, const char *path,
                              const char **out) {
  char got[80];
  if (!cJSON_IsString(item) || !valid_name(item->valuestring))
    return fail(L, path,
                "expected a name (1-%d characters from A-Z a-z 0-9 _ . : / -), got %s",
                MAX_NAME_BYTES, GOT(item));
  *out = item->valuestring;
  return NULL;
}

static hetc_status_t get_array(const loader_t *L, const cJSON *item, const char *path,
                               int lo, int hi, const char *what) {
  char got[80];
  if (!cJSON_IsArray(item) || cJSON_GetArraySize(item) < lo || cJSON_GetArraySize(item) > hi) {
    if (lo == hi) return fail(L, path, "expected an array of %d %s, got %s", lo, what, GOT(item));
    return fail(L, path, "expected an array of %d to %d %s, got %s", lo, hi, what, GOT(item));
  }
  return NULL;
}

/* ---- graph inputs -------------------------------------------------------- */

static hetc_status_t parse_input(loader_t *L, const cJSON *item, const char *path,
                                 hetc_value_t *value) {
  static const char *const keys[] = {"name", "shape", "dtype", "layout", NULL};
  char sub[96], got[80];
  if (!cJSON_IsObject(item)) return fail(L, path, "expected an object, got %s", GOT(item));
  HETC_RETURN_IF_ERROR(check_keys(L, item, path, keys));
  const cJSON *name, *shape, *dtype;
  HETC_RETURN_IF_ERROR(require(L, item, path, "name", &name));
  HETC_RETURN_IF_ERROR(require(L, item, path, "shape", &shape));
  HETC_RETURN_IF_ERROR(require(L, item, path, "dtype", &dtype));
  snprintf(sub, sizeof(sub), "%s/name", path);
  const char *name_text;
  HETC_RETURN_IF_ERROR(get_name(L, name, sub, &name_text));
  snprintf(sub, sizeof(sub), "%s/shape", path);
  int rank = cJSON_IsArray(shape) ? cJSON_GetArraySize(shape) : 0;
  int ok = rank >= 1 && rank <= HETC_PLUGIN_MAX_RANK;
  for (int i = 0; ok && i < rank; ++i) ok = is_integer(cJSON_GetArrayItem(shape, i), 1, (double)HETC_MAX_TENSOR_ELEMENTS);
  if (!ok)
    return fail(L, sub, "expected 1 to %d positive integers, got %s", HETC_PLUGIN_MAX_RANK,
                GOT(shape));
  memset(&value->type, 0, sizeof(value->type));
  value->type.rank = rank;
  value->type.dtype = HETC_PLUGIN_DTYPE_FLOAT32;
  int64_t count = 1;
  for (int i = 0; i < rank; ++i) {
    value->type.shape[i] = (int64_t)cJSON_GetArrayItem(shape, i)->valuedouble;
    count *= value->type.shape[i];
    if (count > HETC_MAX_TENSOR_ELEMENTS)
      return fail(L, sub, "tensor has more than 2^31 elements");
  }
  snprintf(sub, sizeof(sub), "%s/dtype", path);
  if (!cJSON_IsString(dtype) || strcmp(dtype->valuestring, "float32") != 0)
    return fail(L, sub, "expected \"float32\", got %s", GOT(dtype));
  const cJSON *layout = cJSON_GetObjectItemCaseSensitive(item, "layout");
  snprintf(sub, sizeof(sub), "%s/layout", path);
  if (layout && rank == 4 && !(cJSON_IsString(layout) && strcmp(layout->valuestring, "NCHW") == 0))
    return fail(L, sub, "expected \"NCHW\" for a 4-d input, got %s", GOT(layout));
  if (layout && rank != 4)
    return fail(L, sub, "only 4-d inputs take a layout (this one has rank %d)", rank);
  value->name = strdup(name_text);
  value->producer = -1;
  return value->name ? NULL : hetc_status_new(HETC_STATUS_OUT_OF_MEMORY, "model loader");
}

/* ---- node attributes ----------------------------------------------------- */

typedef struct op_rule_t {
  int min_inputs, max_inputs;
  const char *const *attrs; /* allowed keys, NULL-terminated */
} op_rule_t;

static const char *const no_attrs[] = {NULL};
static const char *const conv_attrs[] = {"channels", "kernel", "strides", "padding",
                                         "dilation", "groups", "bias", NULL};
static const char *const dense_attrs[] = {"units", "bias", NULL};
static const char *const bn_attrs[] = {"epsilon", NULL};
static const char *const max_pool_attrs[] = {"kernel", "strides", "padding", "ceil_mode", NULL};
static const char *const avg_pool_attrs[] = {"kernel", "strides", "padding", "ceil_mode",
                                             "count_include_pad", NULL};
static const char *const axis_attrs[] = {"axis", NULL};
static const char *const reshape_attrs[] = {"shape", NULL};
static const char *const transpose_attrs[] = {"perm", NULL};
static const char *const resize_attrs[] = {"size", "scales", "mode", "coordinates", "rounding", NULL};
static const char *const normalize_attrs[] = {"axis", "num_axes", "groups", "epsilon", "affine", NULL};

static const op_rule_t op_rules[HETC_OP_COUNT] = {
    [HETC_OP_CONV2D] = {1, 1, conv_attrs},
    [HETC_OP_DENSE] = {1, 1, dense_attrs},
    [HETC_OP_BATCH_NORM] = {1, 1, bn_attrs},
    [HETC_OP_BIAS_ADD] = {1, 1, no_attrs},
    [HETC_OP_RELU] = {1, 1, no_attrs},
    [HETC_OP_RELU6] = {1, 1, no_attrs},
    [HETC_OP_SIGMOID] = {1, 1, no_attrs},
    [HETC_OP_TANH] = {1, 1, no_attrs},
    [HETC_OP_ADD] = {2, 2, no_attrs},
    [HETC_OP_MULTIPLY] = {2, 2, no_attrs},
    [HETC_OP_MAX_POOL2D] = {1, 1, max_pool_attrs},
    [HETC_OP_AVG_POOL2D] = {1, 1, avg_pool_attrs},
    [HETC_OP_GLOBAL_AVG_POOL2D] = {1, 1, no_attrs},
    [HETC_OP_CONCAT] = {1, MAX_CONCAT_INPUTS, axis_attrs},
    [HETC_OP_FLATTEN] = {1, 1, no_attrs},
    [HETC_OP_RESHAPE] = {1, 1, reshape_attrs},
    [HETC_OP_SOFTMAX] = {1, 1, axis_attrs},
    [HETC_OP_TRANSPOSE] = {1, 1, transpose_attrs},
    [HETC_OP_ELU] = {1, 1, no_attrs},
    [HETC_OP_SOFTPLUS] = {1, 1, no_attrs},
    [HETC_OP_DIVIDE] = {2, 2, no_attrs},
    [HETC_OP_EXP] = {1, 1, no_attrs},
    [HETC_OP_LOG] = {1, 1, no_attrs},
    [HETC_OP_LOG_SOFTMAX] = {1, 1, axis_attrs},
    [HETC_OP_SILU] = {1, 1, no_attrs},
    [HETC_OP_HARDSWISH] = {1, 1, no_attrs},
    [HETC_OP_HARDSIGMOID] = {1, 1, no_attrs},
    [HETC_OP_GELU] = {1, 1, no_attrs},
    [HETC_OP_GELU_TANH] = {1, 1, no_attrs},
    [HETC_OP_ERF] = {1, 1, no_attrs},
    [HETC_OP_RESIZE] = {1, 1, resize_attrs},
    [HETC_OP_NORMALIZE] = {1, 1, normalize_attrs},
    [HETC_OP_MATMUL] = {2, 2, no_attrs},
};

/* An optional string attribute that must be one of `names` (NULL-terminated);
 * *out keeps its default when the key is absent. */
static hetc_status_t get_choice(const loader_t *L, const cJSON *attrs, const char *path, const char *key,
                                const char *const *names, int32_t *out) {
  const cJSON *item = cJSON_GetObjectItemCaseSensitive(attrs, key);
  if (!item) return NULL;
  char sub[128], got[80], list[256] = "";
  snprintf(sub, sizeof(sub), "%s/%s", path, key);
  const int32_t index = cJSON_IsString(item) ? hetc_name_index(names, item->valuestring) : -1;
  if (index >= 0) {
    *out = index;
    return NULL;
  }
  for (int32_t i = 0; names[i]; ++i)
    snprintf(list + strlen(list), sizeof(list) - strlen(list), "%s\"%s\"", i ? ", " : "", names[i]);
  return fail(L, sub, "expected one of %s, got %s", list, GOT(item));
}

static hetc_status_t parse_resize_attrs(const loader_t *L, const cJSON *attrs, const char *path,
                                        hetc_node_attrs_t *a) {
  char sub[128], got[80];
  const cJSON *item;
  int32_t size[2];
  HETC_RETURN_IF_ERROR(require(L, attrs, path, "size", &item));
  snprintf(sub, sizeof(sub), "%s/size", path);
  HETC_RETURN_IF_ERROR(get_int_array(L, item, sub, 2, 1, HETC_MAX_RESIZE_EXTENT, "integers from 1 to 16384", size));
  a->resize_size[0] = size[0], a->resize_size[1] = size[1];
  if ((item = cJSON_GetObjectItemCaseSensitive(attrs, "scales"))) {
    snprintf(sub, sizeof(sub), "%s/scales", path);
    int ok = cJSON_IsArray(item) && cJSON_GetArraySize(item) == 2;
    for (int i = 0; ok && i < 2; ++i) {
      const cJSON *scale = cJSON_GetArrayItem(item, i);
      ok = cJSON_IsNumber(scale) && isfinite(scale->valuedouble) && scale->valuedouble > 0;
      if (ok) a->resize.scales[i] = scale->valuedouble;
    }
    if (!ok) return fail(L, sub, "expected 2 positive numbers, got %s", GOT(item));
  }
  HETC_RETURN_IF_ERROR(get_choice(L, attrs, path, "mode", hetc_resize_mode_names, &a->resize.mode));
  HETC_RETURN_IF_ERROR(get_choice(L, attrs, path, "coordinates", hetc_resize_coordinates_names, &a->resize.coordinates));
  HETC_RETURN_IF_ERROR(get_choice(L, attrs, path, "rounding", hetc_resize_rounding_names, &a->resize.rounding));
  if (a->resize.mode != HETC_PLUGIN_RESIZE_NEAREST) a->resize.rounding = 0;
  return NULL;
}

static hetc_status_t parse_window_attrs(const loader_t *L, const cJSON *attrs,
                                        const char *path, hetc_node_attrs_t *a) {
  char sub[128];
  const cJSON *item;
  HETC_RETURN_IF_ERROR(require(L, attrs, path, "kernel", &item));
  snprintf(sub, sizeof(sub), "%s/kernel", path);
  HETC_RETURN_IF_ERROR(get_int_array(L, item, sub, 2, 1, MAX_WINDOW, "positive integers", a->kernel));
  if ((item = cJSON_GetObjectItemCaseSensitive(attrs, "strides"))) {
    snprintf(sub, sizeof(sub), "%s/strides", path);
    HETC_RETURN_IF_ERROR(get_int_array(L, item, sub, 2, 1, MAX_WINDOW, "positive integers", a->strides));
  }
  if ((item = cJSON_GetObjectItemCaseSensitive(attrs, "padding"))) {
    snprintf(sub, sizeof(sub), "%s/padding", path);
    if (cJSON_IsArray(item) && cJSON_GetArraySize(item) == 2) {
      int32_t hw[2];
      HETC_RETURN_IF_ERROR(get_int_array(L, item, sub, 2, 0, MAX_WINDOW, "non-negative integers", hw));
      a->padding[0] = a->padding[2] = hw[0];
      a->padding[1] = a->padding[3] = hw[1];
    } else {
      HETC_RETURN_IF_ERROR(get_int_array(L, item, sub, 4, 0, MAX_WINDOW,
                                         "non-negative integers (top, left, bottom, right)",
                                         a->padding));
    }
  }
  if ((item = cJSON_GetObjectItemCaseSensitive(attrs, "dilation"))) {
    snprintf(sub, sizeof(sub), "%s/dilation", path);
    HETC_RETURN_IF_ERROR(get_int_array(L, item, sub, 2, 1, MAX_WINDOW, "positive integers", a->dilation));
  }
  if ((item = cJSON_GetObjectItemCaseSensitive(attrs, "ceil_mode"))) {
    snprintf(sub, sizeof(sub), "%s/ceil_mode", path);
    HETC_RETURN_IF_ERROR(get_bool(L, item, sub, &a->ceil_mode));
  }
  if ((item = cJSON_GetObjectItemCaseSensitive(attrs, "count_include_pad"))) {
    snprintf(sub, sizeof(sub), "%s/count_include_pad", path);
    HETC_RETURN_IF_ERROR(get_bool(L, item, sub, &a->count_include_pad));
  }
  return NULL;
}

static hetc_status_t parse_normalize_attrs(const loader_t *L, const cJSON *attrs, const char *path,
                                           hetc_plugin_normalize_params_t *p) {
  char sub[128], got[80];
  const cJSON *item;
  int64_t value = 0;
  if ((item = cJSON_GetObjectItemCaseSensitive(attrs, "axis"))) {
    snprintf(sub, sizeof(sub), "%s/axis", path);
    HETC_RETURN_IF_ERROR(get_int(L, item, sub, -HETC_PLUGIN_MAX_RANK, HETC_PLUGIN_MAX_RANK - 1, &value));
    p->axis = (int32_t)value;
  }
  if ((item = cJSON_GetObjectItemCaseSensitive(attrs, "num_axes"))) {
    snprintf(sub, sizeof(sub), "%s/num_axes", path);
    HETC_RETURN_IF_ERROR(get_int(L, item, sub, 1, HETC_PLUGIN_MAX_RANK, &value));
    p->num_axes = (int32_t)value;
  }
  if ((item = cJSON_GetObjectItemCaseSensitive(attrs, "groups"))) {
    snprintf(sub, sizeof(sub), "%s/groups", path);
    HETC_RETURN_IF_ERROR(get_int(L, item, sub, 1, MAX_CHANNELS, &value));
    p->groups = (int32_t)value;
  }
  if ((item = cJSON_GetObjectItemCaseSensitive(attrs, "epsilon"))) {
    snprintf(sub, sizeof(sub), "%s/epsilon", path);
    if (!cJSON_IsNumber(item) || !(item->valuedouble > 0) || !isfinite(item->valuedouble))
      return fail(L, sub, "expected a positive number, got %s", GOT(item));
    p->epsilon = item->valuedouble;
  }
  if ((item = cJSON_GetObjectItemCaseSensitive(attrs, "affine"))) {
    snprintf(sub, sizeof(sub), "%s/affine", path);
    HETC_RETURN_IF_ERROR(get_bool(L, item, sub, &p->affine));
  }
  return NULL;
}

static hetc_status_t parse_attrs(const loader_t *L, hetc_op_t op, const cJSON *attrs,
                                 const char *path, hetc_node_attrs_t *a) {
  char sub[128], got[80];
  const cJSON *item;
  int64_t value = 0;
  *a = hetc_node_default_attrs(op);
  switch (op) {
    case HETC_OP_CONV2D:
      HETC_RETURN_IF_ERROR(require(L, attrs, path, "channels", &item));
      snprintf(sub, sizeof(sub), "%s/channels", path);
      HETC_RETURN_IF_ERROR(get_int(L, item, sub, 1, MAX_CHANNELS, &a->channels));
      HETC_RETURN_IF_ERROR(parse_window_attrs(L, attrs, path, a));
      if ((item = cJSON_GetObjectItemCaseSensitive(attrs, "groups"))) {
        snprintf(sub, sizeof(sub), "%s/groups", path);
        HETC_RETURN_IF_ERROR(get_int(L, item, sub, 1, MAX_CHANNELS, &value));
        a->groups = (int32_t)value;
      }
      break;
    case HETC_OP_DENSE:
      HETC_RETURN_IF_ERROR(require(L, attrs, path, "units", &item));
      snprintf(sub, sizeof(sub), "%s/units", path);
      HETC_RETURN_IF_ERROR(get_int(L, item, sub, 1, MAX_CHANNELS, &a->channels));
      break;
    case HETC_OP_BATCH_NORM:
      if ((item = cJSON_GetObjectItemCaseSensitive(attrs, "epsilon"))) {
        snprintf(sub, sizeof(sub), "%s/epsilon", path);
        if (!cJSON_IsNumber(item) || !(item->valuedouble > 0) || !isfinite(item->valuedouble))
          return fail(L, sub, "expected a positive number, got %s", GOT(item));
        a->epsilon = item->valuedouble;
      }
      break;
    case HETC_OP_MAX_POOL2D:
    case HETC_OP_AVG_POOL2D:
      HETC_RETURN_IF_ERROR(parse_window_attrs(L, attrs, path, a));
      break;
    case HETC_OP_CONCAT:
    case HETC_OP_SOFTMAX:
    case HETC_OP_LOG_SOFTMAX:
      if ((item = cJSON_GetObjectItemCaseSensitive(attrs, "axis"))) {
        snprintf(sub, sizeof(sub), "%s/axis", path);
        HETC_RETURN_IF_ERROR(get_int(L, item, sub, -HETC_PLUGIN_MAX_RANK,
                                     HETC_PLUGIN_MAX_RANK - 1, &value));
        a->axis = (int32_t)value;
      }
      break;
    case HETC_OP_RESHAPE: {
      HETC_RETURN_IF_ERROR(require(L, attrs, path, "shape", &item));
      snprintf(sub, sizeof(sub), "%s/shape", path);
      int rank = cJSON_IsArray(item) ? cJSON_GetArraySize(item) : 0;
      int wildcards = 0, ok = rank >= 1 && rank <= HETC_PLUGIN_MAX_RANK;
      for (int i = 0; ok && i < rank; ++i) {
        const cJSON *dim = cJSON_GetArrayItem(item, i);
        ok = is_integer(dim, -1, (double)HETC_MAX_TENSOR_ELEMENTS) && dim->valuedouble != 0;
        wildcards += ok && dim->valuedouble == -1;
        if (ok) a->reshape_shape[i] = (int64_t)dim->valuedouble;
      }
      if (!ok || wildcards > 1)
        return fail(L, sub, "expected 1 to %d positive integers with at most one -1, got %s",
                    HETC_PLUGIN_MAX_RANK, GOT(item));
      a->reshape_rank = rank;
      break;
    }
    case HETC_OP_RESIZE: HETC_RETURN_IF_ERROR(parse_resize_attrs(L, attrs, path, a)); break;
    case HETC_OP_NORMALIZE: HETC_RETURN_IF_ERROR(parse_normalize_attrs(L, attrs, path, &a->normalize)); break;
    case HETC_OP_TRANSPOSE: {
      HETC_RETURN_IF_ERROR(require(L, attrs, path, "perm", &item));
      snprintf(sub, sizeof(sub), "%s/perm", path);
      const int rank = cJSON_IsArray(item) ? cJSON_GetArraySize(item) : 0;
      int ok = rank >= 1 && rank <= HETC_PLUGIN_MAX_RANK;
      for (int i = 0; ok && i < rank; ++i) {
        const cJSON *dim = cJSON_GetArrayItem(item, i);
        ok = is_integer(dim, 0, HETC_PLUGIN_MAX_RANK - 1);
        if (ok) a->perm[i] = (int32_t)dim->valuedouble;
      }
      if (!ok)
        return fail(L, sub, "expected 1 to %d integers from 0 to %d, got %s", HETC_PLUGIN_MAX_RANK,
                    HETC_PLUGIN_MAX_RANK - 1, GOT(item));
      a->perm_rank = rank;
      break;
    }
    default: break;
  }
  if ((op == HETC_OP_CONV2D || op == HETC_OP_DENSE) &&
      (item = cJSON_GetObjectItemCaseSensitive(attrs, "bias"))) {
    snprintf(sub, sizeof(sub), "%s/bias", path);
    HETC_RETURN_IF_ERROR(get_bool(L, item, sub, &a->has_bias));
  }
  return NULL;
}

static hetc_status_t parse_node(loader_t *L, const cJSON *item, const char *path,
                                hetc_node_t *node, const cJSON **out_inputs) {
  static const char *const keys[] = {"name", "op", "inputs", "attrs", NULL};
  char sub[96], got[80];
  if (!cJSON_IsObject(item)) return fail(L, path, "expected an object, got %s", GOT(item));
  HETC_RETURN_IF_ERROR(check_keys(L, item, path, keys));
  const cJSON *name, *op, *inputs;
  HETC_RETURN_IF_ERROR(require(L, item, path, "name", &name));
  HETC_RETURN_IF_ERROR(require(L, item, path, "op", &op));
  HETC_RETURN_IF_ERROR(require(L, item, path, "inputs", &inputs));
  const char *name_text;
  snprintf(sub, sizeof(sub), "%s/name", path);
  HETC_RETURN_IF_ERROR(get_name(L, name, sub, &name_text));
  snprintf(sub, sizeof(sub), "%s/op", path);
  node->op = cJSON_IsString(op) ? hetc_op_from_name(op->valuestring) : HETC_OP_COUNT;
  if (node->op == HETC_OP_COUNT) {
    char list[400] = "";
    size_t used = 0;
    for (int k = 0; k < HETC_OP_COUNT; ++k)
      used += (size_t)snprintf(list + used, sizeof(list) - used, "%s%s", k ? ", " : "",
                               hetc_op_name((hetc_op_t)k));
    return fail(L, sub, "unknown op %s (expected one of: %s)", GOT(op), list);
  }
  const op_rule_t *rule = &op_rules[node->op];
  snprintf(sub, sizeof(sub), "%s/inputs", path);
  char what[64];
  snprintf(what, sizeof(what), "input name%s for %s", rule->max_inputs == 1 ? "" : "s",
           hetc_op_name(node->op));
  HETC_RETURN_IF_ERROR(get_array(L, inputs, sub, rule->min_inputs, rule->max_inputs, what));
  for (int i = 0; i < cJSON_GetArraySize(inputs); ++i) {
    snprintf(sub, sizeof(sub), "%s/inputs/%d", path, i);
    const char *ignored;
    HETC_RETURN_IF_ERROR(get_name(L, cJSON_GetArrayItem(inputs, i), sub, &ignored));
  }
  const cJSON *attrs = cJSON_GetObjectItemCaseSensitive(item, "attrs");
  cJSON empty = {0};
  empty.type = cJSON_Object;
  snprintf(sub, sizeof(sub), "%s/attrs", path);
  if (attrs && !cJSON_IsObject(attrs)) return fail(L, sub, "expected an object, got %s", GOT(attrs));
  if (!attrs) attrs = &empty;
  HETC_RETURN_IF_ERROR(check_keys(L, attrs, sub, rule->attrs));
  HETC_RETURN_IF_ERROR(parse_attrs(L, node->op, attrs, sub, &node->attrs));
  node->name = strdup(name_text);
  node->num_inputs = cJSON_GetArraySize(inputs);
  node->inputs = calloc((size_t)node->num_inputs, sizeof(int32_t));
  *out_inputs = inputs;
  if (!node->name || !node->inputs) return hetc_status_new(HETC_STATUS_OUT_OF_MEMORY, "model loader");
  return NULL;
}

/* ---- wiring: names, topological order, liveness -------------------------- */

/* hetc_graph_sort_topologically, with a cycle reported at its /nodes path
 * (L->json_index follows the nodes). */
static hetc_status_t sort_topologically(loader_t *L) {
  int32_t cycle_node = -1;
  hetc_status_t status = hetc_graph_sort_topologically(L->graph, L->json_index, &cycle_node);
  if (status && cycle_node >= 0) {
    char path[32];
    snprintf(path, sizeof(path), "/nodes/%d", L->json_index[cycle_node]);
    hetc_status_t cycle = fail(L, path, "%s", hetc_status_message(status));
    hetc_status_free(status);
    return cycle;
  }
  return status;
}

/* Every node must feed an output: walk back from the outputs. */
static hetc_status_t check_liveness(loader_t *L) {
  hetc_graph_t *g = L->graph;
  char *live = calloc((size_t)g->num_values + 1, 1);
  if (!live) return hetc_status_new(HETC_STATUS_OUT_OF_MEMORY, "model loader");
  for (int32_t o = 0; o < g->num_outputs; ++o) live[g->outputs[o]] = 1;
  for (int32_t k = g->num_nodes - 1; k >= 0; --k) {
    if (!live[g->nodes[k].output]) continue;
    for (int32_t i = 0; i < g->nodes[k].num_inputs; ++i) live[g->nodes[k].inputs[i]] = 1;
  }
  hetc_status_t status = NULL;
  for (int32_t k = 0; k < g->num_nodes && !status; ++k) {
    if (!live[g->nodes[k].output]) {
      char path[32];
      snprintf(path, sizeof(path), "/nodes/%d", L->json_index[k]);
      status = fail(L, path, "node \"%s\" does not contribute to any output", g->nodes[k].name);
    }
  }
  for (int32_t i = 0; i < g->num_inputs && !status; ++i) {
    if (!live[g->inputs[i]]) {
      char path[32];
      snprintf(path, sizeof(path), "/inputs/%d", i);
      status = fail(L, path, "input \"%s\" is not used by any node or output",
                    g->values[g->inputs[i]].name);
    }
  }
  free(live);
  return status;
}

/* ---- weights source ------------------------------------------------------- */

/* The form of "weights": *out_file is the file's name, or NULL for the
 * random init with *out_seed. */
static hetc_status_t weights_source(loader_t *L, const cJSON *weights, const char **out_file, int64_t *out_seed) {
  static const char *const keys[] = {"file", "init", "seed", NULL};
  char got[80];
  if (!cJSON_IsObject(weights)) return fail(L, "/weights", "expected an object, got %s", GOT(weights));
  HETC_RETURN_IF_ERROR(check_keys(L, weights, "/weights", keys));
  const cJSON *file = cJSON_GetObjectItemCaseSensitive(weights, "file");
  const cJSON *init = cJSON_GetObjectItemCaseSensitive(weights, "init");
  const cJSON *seed = cJSON_GetObjectItemCaseSensitive(weights, "seed");
  if (file && (init || seed))
    return fail(L, "/weights", "give either \"file\" or \"init\" with \"seed\", not both");
  if (file) {
    if (!cJSON_IsString(file) || file->valuestring[0] == 0 || strlen(file->valuestring) > 4096)
      return fail(L, "/weights/file", "expected a file name, got %s", GOT(file));
    *out_file = file->valuestring;
    return NULL;
  }
  if (!init) return fail(L, "/weights", "missing required key \"file\" or \"init\"");
  if (!cJSON_IsString(init) || strcmp(init->valuestring, "random") != 0)
    return fail(L, "/weights/init", "expected \"random\", got %s", GOT(init));
  if (!seed) return fail(L, "/weights", "missing required key \"seed\"");
  return get_int(L, seed, "/weights/seed", 0, (INT64_C(1) << 53) - 1, out_seed);
}

static hetc_status_t load_weights(loader_t *L, const cJSON *weights) {
  const char *file = NULL;
  int64_t seed = 0;
  HETC_RETURN_IF_ERROR(weights_source(L, weights, &file, &seed));
  if (L->shapes_only) {
    hetc_weights_shapes_only(L->graph);
    return NULL;
  }
  if (!file) return hetc_weights_init_random(L->graph, (uint64_t)seed);
  char *path = hetc_path_join(L->base_dir, file);
  if (!path) return hetc_status_new(HETC_STATUS_OUT_OF_MEMORY, "model loader");
  /* A file that cannot be opened (missing, a directory, a FIFO) is the
   * fault of the /weights/file value; name it like every other
   * rejection. What is wrong inside the file names the file. */
  int fd = -1;
  hetc_status_t status = hetc_file_open_regular(path, &fd, NULL);
  if (status) {
    free(path);
    return hetc_status_annotate(status, "%s: /weights/file", L->file);
  }
  close(fd);
  status = hetc_weights_load_file(L->graph, path, path);
  free(path);
  return status;
}

/* ---- the whole document --------------------------------------------------- */

static hetc_status_t load_document(loader_t *L, const cJSON *root) {
  static const char *const keys[] = {"format", "version", "name", "inputs",
                                     "weights", "nodes",  "outputs", NULL};
  char path[64], got[80];
  hetc_graph_t *g = L->graph;
  if (!cJSON_IsObject(root)) return fail(L, "", "expected a JSON object, got %s", GOT(root));
  HETC_RETURN_IF_ERROR(check_keys(L, root, "", keys));
  const cJSON *format, *version, *name, *inputs, *weights, *nodes, *outputs;
  HETC_RETURN_IF_ERROR(require(L, root, "", "format", &format));
  if (!cJSON_IsString(format) || strcmp(format->valuestring, "hetc-model") != 0)
    return fail(L, "/format", "expected \"hetc-model\", got %s", GOT(format));
  HETC_RETURN_IF_ERROR(require(L, root, "", "version", &version));
  if (!is_integer(version, 1, 1))
    return fail(L, "/version", "expected 1 (the only version this hetc reads), got %s", GOT(version));
  HETC_RETURN_IF_ERROR(require(L, root, "", "name", &name));
  if (!cJSON_IsString(name) || name->valuestring[0] == 0 || strlen(name->valuestring) > MAX_NAME_BYTES)
    return fail(L, "/name", "expected a non-empty string of at most %d bytes, got %s",
                MAX_NAME_BYTES, GOT(name));
  HETC_RETURN_IF_ERROR(require(L, root, "", "inputs", &inputs));
  HETC_RETURN_IF_ERROR(require(L, root, "", "weights", &weights));
  HETC_RETURN_IF_ERROR(require(L, root, "", "nodes", &nodes));
  HETC_RETURN_IF_ERROR(require(L, root, "", "outputs", &outputs));
  HETC_RETURN_IF_ERROR(get_array(L, inputs, "/inputs", 1, MAX_GRAPH_IO, "input objects"));
  HETC_RETURN_IF_ERROR(get_array(L, nodes, "/nodes", 1, MAX_NODES, "node objects"));
  HETC_RETURN_IF_ERROR(get_array(L, outputs, "/outputs", 1, MAX_GRAPH_IO, "output names"));

  g->name = strdup(name->valuestring);
  g->num_inputs = cJSON_GetArraySize(inputs);
  g->num_nodes = cJSON_GetArraySize(nodes);
  g->num_values = g->num_inputs + g->num_nodes;
  g->num_outputs = cJSON_GetArraySize(outputs);
  g->inputs = calloc((size_t)g->num_inputs, sizeof(int32_t));
  g->nodes = calloc((size_t)g->num_nodes, sizeof(hetc_node_t));
  g->values = calloc((size_t)g->num_values, sizeof(hetc_value_t));
  g->outputs = calloc((size_t)g->num_outputs, sizeof(int32_t));
  g->output_names = calloc((size_t)g->num_outputs, sizeof(char *));
  L->json_index = calloc((size_t)g->num_nodes, sizeof(int32_t));
  if (!g->name || !g->inputs || !g->nodes || !g->values || !g->outputs || !g->output_names ||
      !L->json_index)
    return hetc_status_new(HETC_STATUS_OUT_OF_MEMORY, "model loader");

  hetc_name_map_t *names = hetc_name_map_create(g->num_values);
  if (!names) return hetc_status_new(HETC_STATUS_OUT_OF_MEMORY, "model loader");
  hetc_status_t status = NULL;
  const cJSON **node_inputs = calloc((size_t)g->num_nodes, sizeof(cJSON *));
  if (!node_inputs) status = hetc_status_new(HETC_STATUS_OUT_OF_MEMORY, "model loader");

  for (int32_t i = 0; !status && i < g->num_inputs; ++i) {
    snprintf(path, sizeof(path), "/inputs/%d", i);
    g->inputs[i] = i;
    status = parse_input(L, cJSON_GetArrayItem(inputs, i), path, &g->values[i]);
    if (!status && hetc_name_map_put(names, g->values[i].name, i) != i) {
      int32_t first = hetc_name_map_get(names, g->values[i].name);
      status = fail(L, path, "duplicate name \"%s\" (first used at /inputs/%d)",
                    g->values[i].name, first);
    }
  }
  /* cJSON arrays are linked lists: walk /nodes once, never by index. */
  const cJSON *node_item = nodes->child;
  for (int32_t k = 0; !status && k < g->num_nodes; ++k, node_item = node_item->next) {
    snprintf(path, sizeof(path), "/nodes/%d", k);
    hetc_node_t *node = &g->nodes[k];
    L->json_index[k] = k;
    status = parse_node(L, node_item, path, node, &node_inputs[k]);
    if (status) break;
    int32_t v = g->num_inputs + k;
    node->output = v;
    g->values[v].name = strdup(node->name);
    g->values[v].producer = k;
    if (!g->values[v].name) {
      status = hetc_status_new(HETC_STATUS_OUT_OF_MEMORY, "model loader");
    } else if (hetc_name_map_put(names, node->name, v) != v) {
      int32_t first = hetc_name_map_get(names, node->name);
      char first_path[32];
      if (first < g->num_inputs) {
        snprintf(first_path, sizeof(first_path), "/inputs/%d", first);
      } else {
        snprintf(first_path, sizeof(first_path), "/nodes/%d", first - g->num_inputs);
      }
      snprintf(path, sizeof(path), "/nodes/%d/name", k);
      status = fail(L, path, "duplicate name \"%s\" (first used at %s)", node->name, first_path);
    }
  }
  for (int32_t k = 0; !status && k < g->num_nodes; ++k) {
    hetc_node_t *node = &g->nodes[k];
    for (int32_t i = 0; !status && i < node->num_inputs; ++i) {
      const char *input_name = cJSON_GetArrayItem(node_inputs[k], i)->valuestring;
      int32_t v = hetc_name_map_get(names, input_name);
      if (v < 0) {
        snprintf(path, sizeof(path), "/nodes/%d/inputs/%d", k, i);
        status = fail(L, path, "no input or node is named \"%s\"", input_name);
      } else if (v == node->output) {
        snprintf(path, sizeof(path), "/nodes/%d/inputs/%d", k, i);
        status = fail(L, path, "node \"%s\" reads its own output", node->name);
      }
      if (!status) node->inputs[i] = v;
    }
  }
  for (int32_t o = 0; !status && o < g->num_outputs; ++o) {
    snprintf(path, sizeof(path), "/outputs/%d", o);
    const cJSON *item = cJSON_GetArrayItem(outputs, o);
    const char *output_name;
    status = get_name(L, item, path, &output_name);
    if (status) break;
    int32_t v = hetc_name_map_get(names, output_name);
    if (v < 0) {
      status = fail(L, path, "no input or node is named \"%s\"", output_name);
      break;
    }
    for (int32_t p = 0; p < o && !status; ++p) {
      if (g->outputs[p] == v)
        status = fail(L, path, "\"%s\" is already output %d", output_name, p);
    }
    g->outputs[o] = v;
    g->output_names[o] = strdup(output_name);
    if (!status && !g->output_names[o])
      status = hetc_status_new(HETC_STATUS_OUT_OF_MEMORY, "model loader");
  }
  free(node_inputs);
  hetc_name_map_free(names);
  if (status) return status;

  HETC_RETURN_IF_ERROR(sort_topologically(L));
  HETC_RETURN_IF_ERROR(check_liveness(L));
  for (int32_t k = 0; k < g->num_nodes; ++k) {
    char where[HETC_INFER_WHERE_SIZE], node_path[HETC_INFER_WHERE_SIZE + 32];
    hetc_status_t infer = hetc_graph_infer_node(g, k, where);
    if (infer) {
      snprintf(node_path, sizeof(node_path), "/nodes/%d%s%s", L->json_index[k],
               where[0] ? "/" : "", where);
      status = fail(L, node_path, "%s", hetc_status_message(infer));
      hetc_status_free(infer);
      return status;
    }
  }
  return load_weights(L, weights);
}

/* A syntax-level rejection at byte `offset`, reported as line:column. */
static hetc_status_t fail_at(const loader_t *L, const char *text, size_t length, size_t offset,
                             const char *what) {
  int line, column;
  hetc_text_position(text, length, offset, &line, &column);
  return hetc_status_new(HETC_STATUS_BAD_INPUT, "%s: line %d, column %d: %s", L->file, line,
                         column, what);
}

static hetc_status_t parse_and_load(const char *text, size_t length, loader_t *L) {
  const char *end = NULL;
  cJSON *root = cJSON_ParseWithLengthOpts(text, length, &end, 0);
  if (!root) {
    /* Report where parsing stopped, and whether it was the nesting. */
    size_t offset = end && end >= text ? (size_t)(end - text) : 0;
    const char *error_at = cJSON_GetErrorPtr();
    if (error_at && error_at >= text && error_at <= text + length) offset = (size_t)(error_at - text);
    return fail_at(L, text, length, offset, hetc_json_syntax_error(text, length, offset));
  }
  /* cJSON stops after the first value; anything but whitespace after it
   * means the file is not one JSON text. */
  size_t offset = end && end >= text && end <= text + length ? (size_t)(end - text) : length;
  while (offset < length && (text[offset] == ' ' || text[offset] == '\t' ||
                             text[offset] == '\r' || text[offset] == '\n'))
    ++offset;
  if (offset < length) {
    cJSON_Delete(root);
    return fail_at(L, text, length, offset, "not valid JSON (text after the top-level value)");
  }
  if (hetc_json_find_escaped_nul(text, length, &offset)) {
    cJSON_Delete(root);
    return fail_at(L, text, length, offset, "\\u0000 (a NUL character) is not allowed in a string");
  }
  /* Strings reach the JSON hetc writes (the name goes into manifest.json):
   * bytes that are not UTF-8 would make that unreadable. */
  char path[256];
  int is_name = 0;
  size_t bad = 0;
  if (hetc_json_find_invalid_utf8(root, HETC_JSON_PATH_POINTER, path, sizeof(path), &is_name, &bad)) {
    cJSON_Delete(root);
    if (is_name) return fail(L, path, "a member name is not valid UTF-8 (at byte %zu of the name)", bad + 1);
    return fail(L, path, "not valid UTF-8 (at byte %zu of the string)", bad + 1);
  }
  hetc_status_t status = load_document(L, root);
  cJSON_Delete(root);
  return status;
}

static hetc_status_t load_buffer(const char *text, size_t length, const char *display_name, const char *base_dir,
                                 int shapes_only, hetc_graph_t **out_graph) {
  loader_t L = {display_name, base_dir, calloc(1, sizeof(hetc_graph_t)), NULL, shapes_only};
  if (!L.graph) return hetc_status_new(HETC_STATUS_OUT_OF_MEMORY, "model loader");
  if (memchr(text, 0, length)) {
    hetc_graph_free(L.graph);
    return hetc_status_new(HETC_STATUS_BAD_INPUT, "%s: contains a NUL byte; not a JSON text",
                           display_name);
  }
  hetc_status_t status = parse_and_load(text, length, &L);
  if (!status) {
    L.graph->source_path = strdup(display_name);
    if (!L.graph->source_path) status = hetc_status_new(HETC_STATUS_OUT_OF_MEMORY, "model loader");
  }
  free(L.json_index);
  if (status) {
    hetc_graph_free(L.graph);
    return status;
  }
  *out_graph = L.graph;
  return NULL;
}

hetc_status_t hetc_model_load_buffer(const char *text, size_t length, const char *display_name,
                                     const char *base_dir, hetc_graph_t **out_graph) {
  return load_buffer(text, length, display_name, base_dir, 0, out_graph);
}

static hetc_status_t load_file(const char *path, int shapes_only, hetc_graph_t **out_graph) {
  char *text = NULL;
  size_t length = 0;
  hetc_status_t status = hetc_file_read_all(path, HETC_MODEL_MAX_FILE_BYTES, &text, &length);
  if (status) return status;
  char *base_dir = hetc_path_dirname(path);
  if (!base_dir) {
    free(text);
    return hetc_status_new(HETC_STATUS_OUT_OF_MEMORY, "model loader");
  }
  status = load_buffer(text, length, path, base_dir, shapes_only, out_graph);
  free(base_dir);
  free(text);
  return status;
}

hetc_status_t hetc_model_load_file(const char *path, hetc_graph_t **out_graph) {
  return load_file(path, 0, out_graph);
}

hetc_status_t hetc_model_load_file_shapes_only(const char *path, hetc_graph_t **out_graph) {
  return load_file(path, 1, out_graph);
}
