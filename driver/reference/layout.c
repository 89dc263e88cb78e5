#include <string.h>

#include "reference/reference.h"

/* The model format rejects larger tensors, so anything above this is a
 * corrupt descriptor rather than a real workload. */
#define MAX_ELEMENTS ((int64_t)1 << 31)

static int layout_is_4d_only(int32_t kind) {
  return kind == HETC_PLUGIN_LAYOUT_NCHWC || kind == HETC_PLUGIN_LAYOUT_NHWC;
}

static int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

int64_t hetc_layout_element_count(const hetc_plugin_tensor_t *tensor) {
  if (!tensor || tensor->rank < 1 || tensor->rank > HETC_PLUGIN_MAX_RANK)
    return -1;
  int32_t kind = tensor->layout.kind;
  if (kind != HETC_PLUGIN_LAYOUT_ROW_MAJOR && !layout_is_4d_only(kind))
    return -1;
  if (layout_is_4d_only(kind) && tensor->rank != 4) return -1;
  if (kind == HETC_PLUGIN_LAYOUT_NCHWC && tensor->layout.block < 1) return -1;
  int64_t count = 1;
  for (int32_t i = 0; i < tensor->rank; ++i) {
    int64_t dim = tensor->shape[i];
    if (dim < 1 || dim > MAX_ELEMENTS) return -1;
    if (kind == HETC_PLUGIN_LAYOUT_NCHWC && i == 1)
      dim = ceil_div(dim, tensor->layout.block) * tensor->layout.block;
    count *= dim;
    /* Checked per step so the product never overflows int64. */
    if (count > 2 * MAX_ELEMENTS) return -1;
  }
  return count;
}

hetc_status_t hetc_reference_check_tensor(const hetc_plugin_tensor_t *tensor,
                                          const char *what) {
  if (tensor->dtype != HETC_PLUGIN_DTYPE_FLOAT32)
    return hetc_status_new(HETC_STATUS_UNSUPPORTED,
                           "%s: dtype %d is not float32", what, tensor->dtype);
  if (tensor->rank < 1 || tensor->rank > HETC_PLUGIN_MAX_RANK)
    return hetc_status_new(HETC_STATUS_INVALID_ARGUMENT,
                           "%s: rank %d outside 1..%d", what, tensor->rank,
                           HETC_PLUGIN_MAX_RANK);
  int64_t count = 1;
  for (int32_t i = 0; i < tensor->rank; ++i) {
    if (tensor->shape[i] < 1)
      return hetc_status_new(HETC_STATUS_INVALID_ARGUMENT,
                             "%s: dim %d is %lld, not positive", what, i,
                             (long long)tensor->shape[i]);
    if (tensor->shape[i] > MAX_ELEMENTS || count * tensor->shape[i] > MAX_ELEMENTS)
      return hetc_status_new(HETC_STATUS_INVALID_ARGUMENT,
                             "%s: more than 2^31 elements", what);
    count *= tensor->shape[i];
  }
  int32_t kind = tensor->layout.kind;
  if (kind != HETC_PLUGIN_LAYOUT_ROW_MAJOR && !layout_is_4d_only(kind))
    return hetc_status_new(HETC_STATUS_UNSUPPORTED, "%s: unknown layout kind %d",
                           what, kind);
  if (layout_is_4d_only(kind) && tensor->rank != 4)
    return hetc_status_new(HETC_STATUS_INVALID_ARGUMENT,
                           "%s: layout %s needs rank 4, got rank %d", what,
                           kind == HETC_PLUGIN_LAYOUT_NCHWC ? "NCHWC" : "NHWC",
                           tensor->rank);
  if (kind == HETC_PLUGIN_LAYOUT_NCHWC && tensor->layout.block < 1)
    return hetc_status_new(HETC_STATUS_INVALID_ARGUMENT,
                           "%s: NCHWC block %d is not positive", what,
                           tensor->layout.block);
  if (hetc_layout_element_count(tensor) < 0)
    return hetc_status_new(HETC_STATUS_INVALID_ARGUMENT,
                           "%s: padded size overflows", what);
  return NULL;
}

int64_t hetc_reference_logical_count(const hetc_plugin_tensor_t *tensor) {
  int64_t count = 1;
  for (int32_t i = 0; i < tensor->rank; ++i) count *= tensor->shape[i];
  return count;
}

int hetc_reference_same_shape(const hetc_plugin_tensor_t *a,
                              const hetc_plugin_tensor_t *b) {
  if (a->rank != b->rank) return 0;
  for (int32_t i = 0; i < a->rank; ++i)
    if (a->shape[i] != b->shape[i]) return 0;
  return 1;
}

/* Offset of logical element (n, c, h, w) of a checked 4-d tensor. */
static int64_t offset_4d(const hetc_plugin_tensor_t *t, int64_t n, int64_t c,
                         int64_t h, int64_t w) {
  int64_t C = t->shape[1], H = t->shape[2], W = t->shape[3];
  switch (t->layout.kind) {
    case HETC_PLUGIN_LAYOUT_NCHWC: {
      int64_t b = t->layout.block;
      int64_t cb = ceil_div(C, b);
      return (((n * cb + c / b) * H + h) * W + w) * b + c % b;
    }
    case HETC_PLUGIN_LAYOUT_NHWC:
      return ((n * H + h) * W + w) * C + c;
    default:
      return ((n * C + c) * H + h) * W + w;
  }
}

hetc_status_t hetc_layout_convert(const hetc_plugin_tensor_t *src_type,
                                  const float *src,
                                  const hetc_plugin_tensor_t *dst_type,
                                  float *dst) {
  if (!src_type || !dst_type || !src || !dst)
    return hetc_status_new(HETC_STATUS_INVALID_ARGUMENT,
                           "layout conversion: null argument");
  HETC_RETURN_IF_ERROR(hetc_reference_check_tensor(src_type, "source tensor"));
  HETC_RETURN_IF_ERROR(
      hetc_reference_check_tensor(dst_type, "destination tensor"));
  if (!hetc_reference_same_shape(src_type, dst_type))
    return hetc_status_new(HETC_STATUS_INVALID_ARGUMENT,
                           "layout conversion between different logical shapes");
  if (src_type->layout.kind == HETC_PLUGIN_LAYOUT_ROW_MAJOR &&
      dst_type->layout.kind == HETC_PLUGIN_LAYOUT_ROW_MAJOR) {
    memcpy(dst, src, (size_t)hetc_reference_logical_count(src_type) * sizeof(float));
    return NULL;
  }
  /* Non-row-major layouts exist only for rank 4 (checked above). Padding
   * channels must read as zero so that kernels may run over whole blocks. */
  if (dst_type->layout.kind == HETC_PLUGIN_LAYOUT_NCHWC)
    memset(dst, 0, (size_t)hetc_layout_element_count(dst_type) * sizeof(float));
  int64_t N = src_type->shape[0], C = src_type->shape[1];
  int64_t H = src_type->shape[2], W = src_type->shape[3];
  for (int64_t n = 0; n < N; ++n)
    for (int64_t c = 0; c < C; ++c)
      for (int64_t h = 0; h < H; ++h)
        for (int64_t w = 0; w < W; ++w)
          dst[offset_4d(dst_type, n, c, h, w)] =
              src[offset_4d(src_type, n, c, h, w)];
  return NULL;
}
