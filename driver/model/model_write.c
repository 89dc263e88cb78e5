/* A graph as model.json and a weights file (api/model-format.md): what
 * `hetc import` writes, and what hetc_model_load reads back as the same
 * graph. */
#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/fileio.h"
#include "common/json_number.h"
#include "model/model.h"

static cJSON *int_array(const int32_t *values, int count) {
  cJSON *array = cJSON_CreateArray();
  for (int k = 0; array && k < count; ++k) cJSON_AddItemToArray(array, cJSON_CreateNumber(values[k]));
  return array;
}

static cJSON *int64_array(const int64_t *values, int count) {
  cJSON *array = cJSON_CreateArray();
  for (int k = 0; array && k < count; ++k) cJSON_AddItemToArray(array, cJSON_CreateNumber((double)values[k]));
  return array;
}

static cJSON *node_attrs(const hetc_node_t *node) {
  const hetc_node_attrs_t *a = &node->attrs;
  cJSON *attrs = cJSON_CreateObject();
  switch (node->op) {
    case HETC_OP_CONV2D:
      cJSON_AddNumberToObject(attrs, "channels", (double)a->channels);
      __attribute__((fallthrough)); /* then the window */
    case HETC_OP_MAX_POOL2D:
    case HETC_OP_AVG_POOL2D:
      cJSON_AddItemToObject(attrs, "kernel", int_array(a->kernel, 2));
      cJSON_AddItemToObject(attrs, "strides", int_array(a->strides, 2));
      cJSON_AddItemToObject(attrs, "padding", int_array(a->padding, 4));
      if (node->op == HETC_OP_CONV2D) {
        cJSON_AddItemToObject(attrs, "dilation", int_array(a->dilation, 2));
        cJSON_AddNumberToObject(attrs, "groups", a->groups);
        cJSON_AddBoolToObject(attrs, "bias", a->has_bias);
      } else {
        cJSON_AddBoolToObject(attrs, "ceil_mode", a->ceil_mode);
        if (node->op == HETC_OP_AVG_POOL2D) cJSON_AddBoolToObject(attrs, "count_include_pad", a->count_include_pad);
      }
      break;
    case HETC_OP_DENSE:
      cJSON_AddNumberToObject(attrs, "units", (double)a->channels);
      cJSON_AddBoolToObject(attrs, "bias", a->has_bias);
      break;
    case HETC_OP_BATCH_NORM: cJSON_AddNumberToObject(attrs, "epsilon", a->epsilon); break;
    case HETC_OP_CONCAT:
    case HETC_OP_SOFTMAX:
    case HETC_OP_LOG_SOFTMAX: cJSON_AddNumberToObject(attrs, "axis", a->axis); break;
    case HETC_OP_RESHAPE: cJSON_AddItemToObject(attrs, "shape", int64_array(a->reshape_shape, a->reshape_rank)); break;
    case HETC_OP_TRANSPOSE: cJSON_AddItemToObject(attrs, "perm", int_array(a->perm, a->perm_rank)); break;
    case HETC_OP_NORMALIZE: {
      const hetc_plugin_normalize_params_t *p = &a->normalize;
      cJSON_AddNumberToObject(attrs, "axis", p->axis);
      cJSON_AddNumberToObject(attrs, "num_axes", p->num_axes);
      cJSON_AddNumberToObject(attrs, "groups", p->groups);
      cJSON_AddItemToObject(attrs, "epsilon", hetc_json_exact_number(p->epsilon));
      cJSON_AddBoolToObject(attrs, "affine", p->affine);
      break;
    }
    case HETC_OP_RESIZE: {
      cJSON_AddItemToObject(attrs, "size", int64_array(a->resize_size, 2));
      cJSON_AddItemToObject(attrs, "scales", hetc_json_exact_numbers(a->resize.scales, 2));
      cJSON_AddStringToObject(attrs, "mode", hetc_resize_mode_names[a->resize.mode]);
      cJSON_AddStringToObject(attrs, "coordinates", hetc_resize_coordinates_names[a->resize.coordinates]);
      if (a->resize.mode == HETC_PLUGIN_RESIZE_NEAREST)
        cJSON_AddStringToObject(attrs, "rounding", hetc_resize_rounding_names[a->resize.rounding]);
      break;
    }
    default: break;
  }
  return attrs;
}

static cJSON *model_document(const hetc_graph_t *g, const char *weights_name) {
  cJSON *root = cJSON_CreateObject();
  cJSON_AddStringToObject(root, "format", "hetc-model");
  cJSON_AddNumberToObject(root, "version", 1);
  cJSON_AddStringToObject(root, "name", g->name);
  cJSON *inputs = cJSON_AddArrayToObject(root, "inputs");
  for (int32_t i = 0; i < g->num_inputs; ++i) {
    const hetc_value_t *v = &g->values[g->inputs[i]];
    cJSON *input = cJSON_CreateObject();
    cJSON_AddStringToObject(input, "name", v->name);
    cJSON_AddItemToObject(input, "shape", int64_array(v->type.shape, v->type.rank));
    cJSON_AddStringToObject(input, "dtype", "float32");
    if (v->type.rank == 4) cJSON_AddStringToObject(input, "layout", "NCHW");
    cJSON_AddItemToArray(inputs, input);
  }
  cJSON *weights = cJSON_AddObjectToObject(root, "weights");
  cJSON_AddStringToObject(weights, "file", weights_name);
  cJSON *nodes = cJSON_AddArrayToObject(root, "nodes");
  for (int32_t k = 0; k < g->num_nodes; ++k) {
    const hetc_node_t *node = &g->nodes[k];
    cJSON *item = cJSON_CreateObject();
    cJSON_AddStringToObject(item, "name", node->name);
    cJSON_AddStringToObject(item, "op", hetc_op_name(node->op));
    cJSON *names = cJSON_AddArrayToObject(item, "inputs");
    for (int32_t i = 0; i < node->num_inputs; ++i)
      cJSON_AddItemToArray(names, cJSON_CreateString(g->values[node->inputs[i]].name));
    cJSON_AddItemToObject(item, "attrs", node_attrs(node));
    cJSON_AddItemToArray(nodes, item);
  }
  cJSON *outputs = cJSON_AddArrayToObject(root, "outputs");
  for (int32_t o = 0; o < g->num_outputs; ++o)
    cJSON_AddItemToArray(outputs, cJSON_CreateString(g->values[g->outputs[o]].name));
  return root;
}

/* ---- the weights file ------------------------------------------------------ */

typedef struct bytes_t {
  unsigned char *data;
  size_t size, capacity;
  int failed;
} bytes_t;

static void put(bytes_t *b, const void *data, size_t size) {
  if (b->failed) return;
  if (b->size + size > b->capacity) {
    size_t capacity = b->capacity ? b->capacity : 4096;
    while (capacity < b->size + size) capacity *= 2;
    unsigned char *grown = realloc(b->data, capacity);
    if (!grown) {
      b->failed = 1;
      return;
    }
    b->data = grown, b->capacity = capacity;
  }
  memcpy(b->data + b->size, data, size);
  b->size += size;
}

static void put_u32(bytes_t *b, uint32_t v) {
  const unsigned char le[4] = {(unsigned char)v, (unsigned char)(v >> 8), (unsigned char)(v >> 16), (unsigned char)(v >> 24)};
  put(b, le, 4);
}

static void put_u64(bytes_t *b, uint64_t v) {
  put_u32(b, (uint32_t)v);
  put_u32(b, (uint32_t)(v >> 32));
}

/* The header entry of every param, in node order, with data offsets
 * counted from data_start; returns how many there are. */
static uint32_t put_entries(const hetc_graph_t *g, bytes_t *out, uint64_t data_start) {
  uint32_t count = 0;
  uint64_t offset = data_start;
  for (int32_t k = 0; k < g->num_nodes; ++k)
    for (int slot = 0; slot < HETC_PARAM_SLOTS; ++slot) {
      const hetc_param_t *p = &g->nodes[k].params[slot];
      if (!p->data) continue;
      char name[300];
      snprintf(name, sizeof(name), "%s.%s", g->nodes[k].name, hetc_weights_param_suffix(g->nodes[k].op, slot));
      put_u32(out, (uint32_t)strlen(name));
      put(out, name, strlen(name));
      put_u32(out, 1);
      put_u32(out, (uint32_t)p->rank);
      for (int d = 0; d < p->rank; ++d) put_u64(out, (uint64_t)p->shape[d]);
      put_u64(out, offset);
      put_u64(out, 4 * (uint64_t)p->count);
      offset += 4 * (uint64_t)p->count;
      ++count;
    }
  return count;
}

/* The weights file's bytes: a header naming every param, then the data
 * (float32, little-endian), in node order. */
static int weights_image(const hetc_graph_t *g, bytes_t *out) {
  bytes_t sizing = {0}; /* the entries once, to learn where the data starts */
  const uint32_t count = put_entries(g, &sizing, 0);
  const uint64_t header = 16 + sizing.size;
  const int sized = !sizing.failed;
  free(sizing.data);
  if (!sized) return 0;
  put(out, "HETCWTS1", 8);
  put_u32(out, 1);
  put_u32(out, count);
  put_entries(g, out, header);
  for (int32_t k = 0; k < g->num_nodes; ++k)
    for (int slot = 0; slot < HETC_PARAM_SLOTS; ++slot) {
      const hetc_param_t *p = &g->nodes[k].params[slot];
      for (int64_t i = 0; p->data && i < p->count; ++i) {
        uint32_t bits;
        memcpy(&bits, &p->data[i], 4);
        put_u32(out, bits);
      }
    }
  return !out->failed;
}

/* json_path with ".json" replaced by ".weights" (or ".weights" added). */
static char *weights_path_for(const char *json_path) {
  const size_t length = strlen(json_path);
  const size_t stem = length > 5 && !strcmp(json_path + length - 5, ".json") ? length - 5 : length;
  char *path = malloc(stem + 9);
  if (!path) return NULL;
  memcpy(path, json_path, stem);
  strcpy(path + stem, ".weights");
  return path;
}

static hetc_status_t write_file(const char *path, const void *data, size_t size, hetc_output_file_t **out_file) {
  HETC_RETURN_IF_ERROR(hetc_output_file_open(path, out_file));
  hetc_status_t status = hetc_output_file_write(*out_file, data, size);
  if (status) {
    hetc_output_file_abandon(*out_file);
    *out_file = NULL;
  }
  return status;
}

hetc_status_t hetc_model_save(const hetc_graph_t *g, const char *json_path) {
  HETC_RETURN_IF_ERROR(hetc_graph_require_weights(g, "saved"));
  for (int32_t k = 0; k < g->num_nodes; ++k)
    if (g->nodes[k].epilogue.activation || g->nodes[k].epilogue.has_residual || g->nodes[k].fused_names)
      return hetc_status_new(HETC_STATUS_INVALID_ARGUMENT, "%s: a graph after fusion has no model.json form", json_path);
  char *weights_path = weights_path_for(json_path);
  const char *weights_name = weights_path ? strrchr(weights_path, '/') : NULL;
  weights_name = weights_name ? weights_name + 1 : weights_path;
  cJSON *root = weights_path ? model_document(g, weights_name) : NULL;
  char *text = root ? cJSON_Print(root) : NULL;
  bytes_t weights = {0};
  hetc_status_t status = NULL;
  if (!text || !weights_image(g, &weights)) status = hetc_status_new(HETC_STATUS_OUT_OF_MEMORY, "writing %s", json_path);
  /* Both files are written to temporaries first and renamed into place
   * only when both are complete. */
  hetc_output_file_t *weights_file = NULL, *json_file = NULL;
  if (!status) status = write_file(weights_path, weights.data, weights.size, &weights_file);
  if (!status) status = write_file(json_path, text, strlen(text), &json_file);
  if (!status) status = hetc_output_file_write(json_file, "\n", 1);
  if (status) {
    if (weights_file) hetc_output_file_abandon(weights_file);
    if (json_file) hetc_output_file_abandon(json_file);
  } else {
    status = hetc_output_file_commit(weights_file);
    if (!status) status = hetc_output_file_commit(json_file);
    else hetc_output_file_abandon(json_file);
  }
  free(weights.data);
  free(text);
  cJSON_Delete(root);
  free(weights_path);
  return status;
}
