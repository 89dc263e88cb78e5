/* Tensor sizes and layouts (hetc/kit/layout.h). */
#include "hetc/kit/layout.h"

#include <stdio.h>

int64_t hetc_kit_ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

int64_t hetc_kit_logical_count(const hetc_plugin_tensor_t *t) {
  int64_t count = 1;
  for (int32_t i = 0; i < t->rank; ++i) count *= t->shape[i];
  return count;
}

int64_t hetc_kit_physical_count(const hetc_plugin_tensor_t *t, hetc_plugin_layout_t layout) {
  if (layout.kind != HETC_PLUGIN_LAYOUT_NCHWC || t->rank != 4) return hetc_kit_logical_count(t);
  const int64_t b = layout.block;
  return t->shape[0] * hetc_kit_ceil_div(t->shape[1], b) * b * t->shape[2] * t->shape[3];
}

int64_t hetc_kit_layout_block(hetc_plugin_layout_t layout, int64_t channels) {
  switch (layout.kind) {
    case HETC_PLUGIN_LAYOUT_NCHWC: return layout.block;
    case HETC_PLUGIN_LAYOUT_NHWC: return channels;
    default: return 1;
  }
}

int64_t hetc_kit_element_offset(const hetc_plugin_tensor_t *t, int64_t logical_index) {
  if (t->layout.kind == HETC_PLUGIN_LAYOUT_ROW_MAJOR || t->rank != 4) return logical_index;
  const int64_t C = t->shape[1], H = t->shape[2], W = t->shape[3];
  const int64_t w = logical_index % W, h = logical_index / W % H, c = logical_index / (W * H) % C;
  const int64_t n = logical_index / (W * H * C);
  const int64_t b = hetc_kit_layout_block(t->layout, C);
  return (((n * hetc_kit_ceil_div(C, b) + c / b) * H + h) * W + w) * b + c % b;
}

int hetc_kit_layout_equal(hetc_plugin_layout_t a, hetc_plugin_layout_t b) {
  if (a.kind != b.kind) return 0;
  return a.kind != HETC_PLUGIN_LAYOUT_NCHWC || a.block == b.block;
}

hetc_plugin_layout_t hetc_kit_layout_row_major(void) {
  hetc_plugin_layout_t l = {HETC_PLUGIN_LAYOUT_ROW_MAJOR, 0};
  return l;
}

hetc_plugin_layout_t hetc_kit_layout_nchwc(int64_t block) {
  hetc_plugin_layout_t l = {HETC_PLUGIN_LAYOUT_NCHWC, (int32_t)block};
  return l;
}

void hetc_kit_layout_text(hetc_plugin_layout_t layout, int32_t rank, char *buf, size_t size) {
  switch (layout.kind) {
    case HETC_PLUGIN_LAYOUT_NCHWC: snprintf(buf, size, "NCHW%dc", layout.block); break;
    case HETC_PLUGIN_LAYOUT_NHWC: snprintf(buf, size, "NHWC"); break;
    default: snprintf(buf, size, rank == 4 ? "NCHW" : "row-major"); break;
  }
}

int hetc_kit_same_shape(const hetc_plugin_tensor_t *a, const hetc_plugin_tensor_t *b) {
  if (a->rank != b->rank) return 0;
  for (int32_t i = 0; i < a->rank; ++i)
    if (a->shape[i] != b->shape[i]) return 0;
  return 1;
}
