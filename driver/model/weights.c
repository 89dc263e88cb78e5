/* Parameters of a graph: their logical shapes, the deterministic random
 * init, and the weights side-file reader (formats in api/model-format.md). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/fileio.h"
#include "common/name_map.h"
#include "model/model.h"

#define WEIGHTS_MAGIC "HETCWTS1"
#define WEIGHTS_MAX_TENSORS 1000000u
#define WEIGHTS_MAX_FILE_BYTES (UINT64_C(16) << 30)

const char *hetc_weights_param_suffix(hetc_op_t op, int slot) {
  if (op == HETC_OP_BATCH_NORM) {
    static const char *const bn[] = {"gamma", "beta", "mean", "var"};
    return slot >= 0 && slot < 4 ? bn[slot] : NULL;
  }
  if (op == HETC_OP_CONV2D || op == HETC_OP_DENSE) {
    return slot == HETC_PARAM_WEIGHT ? "weight" : slot == HETC_PARAM_BIAS ? "bias" : NULL;
  }
  if (op == HETC_OP_BIAS_ADD) return slot == HETC_PARAM_BIAS ? "bias" : NULL;
  if (op == HETC_OP_NORMALIZE) return slot == HETC_PARAM_WEIGHT ? "scale" : slot == HETC_PARAM_BIAS ? "bias" : NULL;
  return NULL;
}

int hetc_weights_param_shape(const hetc_graph_t *graph, const hetc_node_t *node, int slot,
                             hetc_param_t *out_shape) {
  memset(out_shape, 0, sizeof(*out_shape));
  const hetc_plugin_tensor_t *in = &graph->values[node->inputs[0]].type;
  const hetc_node_attrs_t *a = &node->attrs;
  switch (node->op) {
    case HETC_OP_CONV2D:
      if (slot == HETC_PARAM_WEIGHT) {
        *out_shape = (hetc_param_t){4, {a->channels, in->shape[1] / a->groups, a->kernel[0], a->kernel[1]}, 0, NULL};
      } else if (slot == HETC_PARAM_BIAS && a->has_bias) {
        *out_shape = (hetc_param_t){1, {a->channels}, 0, NULL};
      } else {
        return 0;
      }
      break;
    case HETC_OP_DENSE:
      if (slot == HETC_PARAM_WEIGHT) {
        *out_shape = (hetc_param_t){2, {a->channels, in->shape[1]}, 0, NULL};
      } else if (slot == HETC_PARAM_BIAS && a->has_bias) {
        *out_shape = (hetc_param_t){1, {a->channels}, 0, NULL};
      } else {
        return 0;
      }
      break;
    case HETC_OP_BIAS_ADD:
      if (slot != HETC_PARAM_BIAS) return 0;
      *out_shape = (hetc_param_t){1, {in->shape[1]}, 0, NULL};
      break;
    case HETC_OP_BATCH_NORM:
      if (slot < 0 || slot > HETC_PARAM_VAR) return 0;
      *out_shape = (hetc_param_t){1, {in->shape[1]}, 0, NULL};
      break;
    case HETC_OP_NORMALIZE:
    {
      /* The axis as the model wrote it, in case inference has not made it
       * non-negative yet (and checked it: out of range, no params). */
      const int32_t axis = a->normalize.axis < 0 ? a->normalize.axis + in->rank : a->normalize.axis;
      if (!a->normalize.affine || (slot != HETC_PARAM_WEIGHT && slot != HETC_PARAM_BIAS) || axis < 0 ||
          axis >= in->rank)
        return 0;
      *out_shape = (hetc_param_t){1, {in->shape[axis]}, 0, NULL};
      break;
    }
    default: return 0;
  }
  out_shape->count = 1;
  for (int i = 0; i < out_shape->rank; ++i) out_shape->count *= out_shape->shape[i];
  return 1;
}

/* Walks every (node, slot) that takes a param. */
#define FOR_EACH_PARAM(graph, node, slot, shape)                               \
  for (int32_t node_i_ = 0; node_i_ < (graph)->num_nodes; ++node_i_)           \
    for (int slot = 0; slot < HETC_PARAM_SLOTS; ++slot)                        \
      if ((node = &(graph)->nodes[node_i_]),                                   \
          hetc_weights_param_shape((graph), node, slot, &(shape)))

static void param_name(const hetc_node_t *node, int slot, char *buf, size_t size) {
  snprintf(buf, size, "%s.%s", node->name, hetc_weights_param_suffix(node->op, slot));
}

static uint64_t splitmix64_next(uint64_t *state) {
  uint64_t z = (*state += UINT64_C(0x9E3779B97F4A7C15));
  z = (z ^ (z >> 30)) * UINT64_C(0xBF58476D1CE4E5B9);
  z = (z ^ (z >> 27)) * UINT64_C(0x94D049BB133111EB);
  return z ^ (z >> 31);
}

hetc_status_t hetc_weights_init_random(hetc_graph_t *graph, uint64_t seed) {
  hetc_node_t *node;
  hetc_param_t shape;
#ifdef FUZZING_BUILD_MODE_UNSAFE_FOR_PRODUCTION
  /* Fuzz builds only (tests/fuzz): a valid model may ask for up to 2^31
   * values per tensor, which no fuzzer memory limit allows. */
  int64_t fuzz_total = 0;
#endif
  FOR_EACH_PARAM(graph, node, slot, shape) {
    char name[300];
    param_name(node, slot, name, sizeof(name));
#ifdef FUZZING_BUILD_MODE_UNSAFE_FOR_PRODUCTION
    if ((fuzz_total += shape.count) > (INT64_C(1) << 22))
      return hetc_status_new(HETC_STATUS_OUT_OF_MEMORY,
                             "fuzzing build: random init above 2^22 values (at %s)", name);
#endif
    float *data = malloc(sizeof(float) * (size_t)shape.count);
    if (!data) return hetc_status_new(HETC_STATUS_OUT_OF_MEMORY, "weights for %s", name);
    uint64_t state = seed ^ hetc_fnv1a64(name, strlen(name), HETC_FNV1A64_OFFSET);
    const int is_weight = node->op != HETC_OP_BATCH_NORM && slot == HETC_PARAM_WEIGHT &&
                          node->op != HETC_OP_BIAS_ADD && node->op != HETC_OP_NORMALIZE;
    const int is_positive = (node->op == HETC_OP_BATCH_NORM && (slot == HETC_PARAM_GAMMA || slot == HETC_PARAM_VAR)) ||
                            (node->op == HETC_OP_NORMALIZE && slot == HETC_PARAM_WEIGHT);
    double fan_in = (double)shape.count / (double)shape.shape[0];
    double scale = is_weight ? sqrt(3.0 / fan_in) : 0.1;
    for (int64_t i = 0; i < shape.count; ++i) {
      double u = (double)(splitmix64_next(&state) >> 40) * (1.0 / 16777216.0);
      data[i] = (float)(is_positive ? 0.5 + u : (2.0 * u - 1.0) * scale);
    }
    free(node->params[slot].data);
    shape.data = data;
    node->params[slot] = shape;
  }
  return NULL;
}

void hetc_weights_shapes_only(hetc_graph_t *graph) {
  for (int32_t k = 0; k < graph->num_nodes; ++k)
    for (int slot = 0; slot < HETC_PARAM_SLOTS; ++slot) {
      free(graph->nodes[k].params[slot].data);
      graph->nodes[k].params[slot].data = NULL;
    }
  hetc_node_t *node;
  hetc_param_t shape;
  FOR_EACH_PARAM(graph, node, slot, shape) node->params[slot] = shape;
  graph->shapes_only = 1;
}

/* ---- weights file ---------------------------------------------------------- */

typedef struct reader_t {
  const unsigned char *data;
  uint64_t size, at;
} reader_t;

static int read_u32(reader_t *r, uint32_t *out) {
  if (r->size - r->at < 4) return 0;
  const unsigned char *p = r->data + r->at;
  *out = (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
  r->at += 4;
  return 1;
}

static int read_u64(reader_t *r, uint64_t *out) {
  uint32_t lo, hi;
  if (!read_u32(r, &lo) || !read_u32(r, &hi)) return 0;
  *out = (uint64_t)hi << 32 | lo;
  return 1;
}

typedef struct entry_t {
  char name[256];
  int32_t rank;
  int64_t dims[HETC_PLUGIN_MAX_RANK];
  uint64_t offset, nbytes;
  int used;
} entry_t;

static hetc_status_t parse_entries(const char *file, reader_t *r, entry_t **out_entries,
                                   uint32_t *out_count) {
#define TRUNCATED(what)                                                                  \
  hetc_status_new(HETC_STATUS_BAD_INPUT, "%s: offset %llu: truncated while reading %s", \
                  file, (unsigned long long)r->at, what)
  if (r->size < 8 || memcmp(r->data, WEIGHTS_MAGIC, 8) != 0)
    return hetc_status_new(HETC_STATUS_BAD_INPUT,
                           "%s: offset 0: not a hetc weights file (expected magic \"%s\")", file,
                           WEIGHTS_MAGIC);
  r->at = 8;
  if (r->size < 16) return TRUNCATED("the header");
  uint32_t version, count;
  read_u32(r, &version);
  read_u32(r, &count);
  if (version != 1)
    return hetc_status_new(HETC_STATUS_BAD_INPUT, "%s: offset 8: version %u, expected 1", file,
                           version);
  if (count > WEIGHTS_MAX_TENSORS || count > r->size / 32)
    return hetc_status_new(HETC_STATUS_BAD_INPUT,
                           "%s: offset 12: tensor count %u is larger than the file can hold", file,
                           count);
  entry_t *entries = calloc((size_t)count + 1, sizeof(entry_t));
  if (!entries) return hetc_status_new(HETC_STATUS_OUT_OF_MEMORY, "%s", file);
  hetc_status_t status = NULL;
  for (uint32_t i = 0; i < count && !status; ++i) {
    entry_t *e = &entries[i];
    uint64_t entry_at = r->at;
    uint32_t name_len, dtype, rank;
    if (!read_u32(r, &name_len)) { status = TRUNCATED("a tensor entry"); break; }
    if (name_len < 1 || name_len > 255) {
      status = hetc_status_new(HETC_STATUS_BAD_INPUT,
                               "%s: offset %llu: tensor %u: name length %u, expected 1..255", file,
                               (unsigned long long)entry_at, i, name_len);
      break;
    }
    if (r->size - r->at < name_len) { status = TRUNCATED("a tensor name"); break; }
    memcpy(e->name, r->data + r->at, name_len);
    e->name[name_len] = 0;
    r->at += name_len;
    if (strlen(e->name) != name_len) {
      status = hetc_status_new(HETC_STATUS_BAD_INPUT, "%s: offset %llu: tensor %u: name contains a NUL byte",
                               file, (unsigned long long)entry_at, i);
      break;
    }
    if (!read_u32(r, &dtype) || !read_u32(r, &rank)) { status = TRUNCATED(e->name); break; }
    if (dtype != 1) {
      status = hetc_status_new(HETC_STATUS_BAD_INPUT, "%s: tensor \"%s\": dtype %u, expected 1 (float32)",
                               file, e->name, dtype);
      break;
    }
    if (rank < 1 || rank > HETC_PLUGIN_MAX_RANK) {
      status = hetc_status_new(HETC_STATUS_BAD_INPUT, "%s: tensor \"%s\": rank %u, expected 1..%d", file,
                               e->name, rank, HETC_PLUGIN_MAX_RANK);
      break;
    }
    e->rank = (int32_t)rank;
    uint64_t elements = 1;
    for (uint32_t d = 0; d < rank && !status; ++d) {
      uint64_t dim;
      if (!read_u64(r, &dim)) { status = TRUNCATED(e->name); break; }
      if (dim < 1 || dim > (UINT64_C(1) << 31))
        status = hetc_status_new(HETC_STATUS_BAD_INPUT, "%s: tensor \"%s\": dimension %u is %lld, out of range",
                                 file, e->name, d, (long long)dim);
      else if ((elements *= dim) > (UINT64_C(1) << 31))
        status = hetc_status_new(HETC_STATUS_BAD_INPUT, "%s: tensor \"%s\": more than 2^31 elements",
                                 file, e->name);
      e->dims[d] = (int64_t)dim;
    }
    if (status) break;
    if (!read_u64(r, &e->offset) || !read_u64(r, &e->nbytes)) { status = TRUNCATED(e->name); break; }
    if (e->nbytes != elements * 4)
      status = hetc_status_new(HETC_STATUS_BAD_INPUT, "%s: tensor \"%s\": nbytes %llu, expected %llu for its shape",
                               file, e->name, (unsigned long long)e->nbytes,
                               (unsigned long long)(elements * 4));
  }
  for (uint32_t i = 0; i < count && !status; ++i) {
    entry_t *e = &entries[i];
    if (e->offset < r->at)
      status = hetc_status_new(HETC_STATUS_BAD_INPUT,
                               "%s: tensor \"%s\": data at offset %llu overlaps the header, which "
                               "ends at offset %llu",
                               file, e->name, (unsigned long long)e->offset,
                               (unsigned long long)r->at);
    else if (e->offset > r->size || r->size - e->offset < e->nbytes)
      status = hetc_status_new(HETC_STATUS_BAD_INPUT,
                               "%s: tensor \"%s\": data at offset %llu (%llu bytes) runs past the "
                               "end of the file (%llu bytes; truncated file?)",
                               file, e->name, (unsigned long long)e->offset,
                               (unsigned long long)e->nbytes, (unsigned long long)r->size);
  }
  if (status) {
    free(entries);
    return status;
  }
  *out_entries = entries;
  *out_count = count;
  return NULL;
#undef TRUNCATED
}

hetc_status_t hetc_weights_load_file(hetc_graph_t *graph, const char *path,
                                     const char *display_name) {
  char *bytes = NULL;
  size_t size = 0;
  HETC_RETURN_IF_ERROR(hetc_file_read_all(path, (size_t)WEIGHTS_MAX_FILE_BYTES, &bytes, &size));
  reader_t r = {(const unsigned char *)bytes, size, 0};
  entry_t *entries = NULL;
  uint32_t count = 0;
  hetc_status_t status = parse_entries(display_name, &r, &entries, &count);
  hetc_name_map_t *by_name = status ? NULL : hetc_name_map_create((int32_t)count);
  if (!status && !by_name) status = hetc_status_new(HETC_STATUS_OUT_OF_MEMORY, "%s", display_name);
  for (uint32_t i = 0; !status && i < count; ++i) {
    if (hetc_name_map_put(by_name, entries[i].name, (int32_t)i) != (int32_t)i)
      status = hetc_status_new(HETC_STATUS_BAD_INPUT, "%s: tensor \"%s\" appears twice", display_name,
                               entries[i].name);
  }
  hetc_node_t *node;
  hetc_param_t shape;
  if (!status) {
    /* FOR_EACH_PARAM is two nested loops: a failure leaves both with goto
     * (a break would go on with the next node, and a second failure would
     * leak the first status and report the wrong tensor). */
    FOR_EACH_PARAM(graph, node, slot, shape) {
      char name[300];
      param_name(node, slot, name, sizeof(name));
      int32_t index = hetc_name_map_get(by_name, name);
      if (index < 0) {
        status = hetc_status_new(HETC_STATUS_BAD_INPUT, "%s: missing tensor \"%s\" for node \"%s\"",
                                 display_name, name, node->name);
        goto params_done;
      }
      entry_t *e = &entries[index];
      int same = e->rank == shape.rank;
      for (int d = 0; same && d < shape.rank; ++d) same = e->dims[d] == shape.shape[d];
      if (!same) {
        char want[128] = "[", have[128] = "[";
        for (int d = 0; d < shape.rank; ++d)
          snprintf(want + strlen(want), sizeof(want) - strlen(want), "%s%lld", d ? "," : "",
                   (long long)shape.shape[d]);
        for (int d = 0; d < e->rank; ++d)
          snprintf(have + strlen(have), sizeof(have) - strlen(have), "%s%lld", d ? "," : "",
                   (long long)e->dims[d]);
        status = hetc_status_new(HETC_STATUS_BAD_INPUT, "%s: tensor \"%s\": shape %s], expected %s]",
                                 display_name, name, have, want);
        goto params_done;
      }
      float *data = malloc((size_t)e->nbytes);
      if (!data) {
        status = hetc_status_new(HETC_STATUS_OUT_OF_MEMORY, "%s: tensor \"%s\"", display_name, name);
        goto params_done;
      }
      memcpy(data, bytes + e->offset, (size_t)e->nbytes);
      int finite = 1;
      for (int64_t k = 0; finite && k < shape.count; ++k) finite = isfinite(data[k]);
      if (!finite || (node->op == HETC_OP_BATCH_NORM && slot == HETC_PARAM_VAR)) {
        for (int64_t k = 0; finite && k < shape.count; ++k) finite = data[k] >= 0;
      }
      if (!finite) {
        free(data);
        status = hetc_status_new(HETC_STATUS_BAD_INPUT,
                                 "%s: tensor \"%s\": holds %s", display_name, name,
                                 slot == HETC_PARAM_VAR && node->op == HETC_OP_BATCH_NORM
                                     ? "a negative or non-finite variance"
                                     : "a NaN or infinite value");
        goto params_done;
      }
      free(node->params[slot].data);
      shape.data = data;
      node->params[slot] = shape;
      e->used = 1;
    }
  params_done:;
  }
  for (uint32_t i = 0; !status && i < count; ++i) {
    if (!entries[i].used)
      status = hetc_status_new(HETC_STATUS_BAD_INPUT,
                               "%s: tensor \"%s\" is not a parameter of any node (renamed node?)",
                               display_name, entries[i].name);
  }
  hetc_name_map_free(by_name);
  free(entries);
  free(bytes);
  return status;
}
