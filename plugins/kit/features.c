/* Writing the plugin's part of a feature row (hetc/kit/features.h). */
#include "hetc/kit/features.h"

#if HETC_KIT_ABI_AT_LEAST(1, 1)

#include <math.h>

float hetc_kit_log2p(double x) { return (float)log2(1.0 + (x > 0 ? x : 0)); }

void hetc_kit_features_put(hetc_kit_features_t *f, int32_t index, float value) {
  if (index >= 0 && index < f->capacity) f->out[index] = value;
}

/* a / b on the log scale; missing when nothing was moved. */
static float ratio(double a, double b) { return b > 0 ? hetc_kit_log2p(a / b) : NAN; }

void hetc_kit_features_put_level(hetc_kit_features_t *f, int32_t level, const hetc_kit_feature_tile_t *tile) {
  const double macs = tile->macs > 0 ? tile->macs : tile->spatial * tile->reduction;
  const double bytes = 4 * (tile->in + tile->weight + tile->out);
  const float values[HETC_FEATURE_FIELD_COUNT] = {
      [HETC_FEATURE_FIELD_SPATIAL] = hetc_kit_log2p(tile->spatial),
      [HETC_FEATURE_FIELD_REDUCTION] = hetc_kit_log2p(tile->reduction),
      [HETC_FEATURE_FIELD_BYTES_IN] = hetc_kit_log2p(4 * tile->in),
      [HETC_FEATURE_FIELD_BYTES_WEIGHT] = hetc_kit_log2p(4 * tile->weight),
      [HETC_FEATURE_FIELD_BYTES_OUT] = hetc_kit_log2p(4 * tile->out),
      [HETC_FEATURE_FIELD_REUSE_IN] = ratio(macs, tile->in),
      [HETC_FEATURE_FIELD_REUSE_WEIGHT] = ratio(macs, tile->weight),
      [HETC_FEATURE_FIELD_INTENSITY] = ratio(2 * macs, bytes),
  };
  for (int32_t i = 0; i < HETC_FEATURE_FIELD_COUNT; ++i)
    hetc_kit_features_put(f, HETC_FEATURE_AT_LEVEL(level, i), values[i]);
}

void hetc_kit_features_put_algo(hetc_kit_features_t *f, int32_t algo) {
  for (int32_t i = HETC_FEATURE_ALGO_DIRECT; i <= HETC_FEATURE_ALGO_OTHER; ++i)
    hetc_kit_features_put(f, i, i == algo ? 1.0f : 0.0f);
}

void hetc_kit_features_put_layout(hetc_kit_features_t *f, hetc_plugin_layout_t layout) {
  const int32_t index = layout.kind == HETC_PLUGIN_LAYOUT_NCHWC  ? HETC_FEATURE_LAYOUT_NCHWC
                        : layout.kind == HETC_PLUGIN_LAYOUT_NHWC ? HETC_FEATURE_LAYOUT_NHWC
                                                                 : HETC_FEATURE_LAYOUT_NCHW;
  for (int32_t i = HETC_FEATURE_LAYOUT_NCHW; i <= HETC_FEATURE_LAYOUT_NCHWC; ++i)
    hetc_kit_features_put(f, i, i == index ? 1.0f : 0.0f);
}

void hetc_kit_features_put_loop(hetc_kit_features_t *f, const hetc_kit_loop_t *loop) {
  hetc_kit_features_put(f, HETC_FEATURE_EXEC_FLOPS, hetc_kit_log2p(2 * loop->exec_macs));
  hetc_kit_features_put(f, HETC_FEATURE_VECTOR_WIDTH, (float)loop->vector_width);
  hetc_kit_features_put(f, HETC_FEATURE_UNROLL, hetc_kit_log2p(loop->unroll));
  hetc_kit_features_put(f, HETC_FEATURE_INNER_LOOP, hetc_kit_log2p(loop->inner_loop));
  hetc_kit_features_put(f, HETC_FEATURE_PARALLEL_UNITS, hetc_kit_log2p(loop->parallel_units));
  hetc_kit_features_put(f, HETC_FEATURE_THREADS_PER_GROUP, hetc_kit_log2p(1));
  hetc_kit_features_put_algo(f, loop->algo);
  hetc_kit_features_put_layout(f, loop->layout);
}

int32_t hetc_kit_features_count(const hetc_kit_features_t *f) {
  return f->capacity < HETC_FEATURE_COUNT ? f->capacity : HETC_FEATURE_COUNT;
}

double hetc_kit_window_span(double count, double stride, double taps, double dilation, double limit) {
  const double s = (count - 1) * stride + (taps - 1) * dilation + 1;
  return s < limit ? s : limit;
}

#endif /* HETC_KIT_ABI_AT_LEAST(1, 1) */
