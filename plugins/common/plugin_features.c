/* Writing the plugin's part of a feature row (plugin_features.h). */
#include "plugin_features.h"

#include <math.h>

float hpc_log2p(double x) { return (float)log2(1.0 + (x > 0 ? x : 0)); }

void hpc_features_put(hpc_features_t *f, int32_t index, float value) {
  if (index >= 0 && index < f->capacity) f->out[index] = value;
}

/* a / b on the log scale; missing when nothing was moved. */
static float ratio(double a, double b) { return b > 0 ? hpc_log2p(a / b) : NAN; }

void hpc_features_put_level(hpc_features_t *f, int32_t level, const hpc_feature_tile_t *tile) {
  const double macs = tile->macs > 0 ? tile->macs : tile->spatial * tile->reduction;
  const double bytes = 4 * (tile->in + tile->weight + tile->out);
  const float values[HETC_FEATURE_FIELD_COUNT] = {
      [HETC_FEATURE_FIELD_SPATIAL] = hpc_log2p(tile->spatial),
      [HETC_FEATURE_FIELD_REDUCTION] = hpc_log2p(tile->reduction),
      [HETC_FEATURE_FIELD_BYTES_IN] = hpc_log2p(4 * tile->in),
      [HETC_FEATURE_FIELD_BYTES_WEIGHT] = hpc_log2p(4 * tile->weight),
      [HETC_FEATURE_FIELD_BYTES_OUT] = hpc_log2p(4 * tile->out),
      [HETC_FEATURE_FIELD_REUSE_IN] = ratio(macs, tile->in),
      [HETC_FEATURE_FIELD_REUSE_WEIGHT] = ratio(macs, tile->weight),
      [HETC_FEATURE_FIELD_INTENSITY] = ratio(2 * macs, bytes),
  };
  for (int32_t i = 0; i < HETC_FEATURE_FIELD_COUNT; ++i)
    hpc_features_put(f, HETC_FEATURE_AT_LEVEL(level, i), values[i]);
}

void hpc_features_put_algo(hpc_features_t *f, int32_t algo) {
  for (int32_t i = HETC_FEATURE_ALGO_DIRECT; i <= HETC_FEATURE_ALGO_OTHER; ++i)
    hpc_features_put(f, i, i == algo ? 1.0f : 0.0f);
}

void hpc_features_put_layout(hpc_features_t *f, hetc_plugin_layout_t layout) {
  const int32_t index = layout.kind == HETC_PLUGIN_LAYOUT_NCHWC  ? HETC_FEATURE_LAYOUT_NCHWC
                        : layout.kind == HETC_PLUGIN_LAYOUT_NHWC ? HETC_FEATURE_LAYOUT_NHWC
                                                                 : HETC_FEATURE_LAYOUT_NCHW;
  for (int32_t i = HETC_FEATURE_LAYOUT_NCHW; i <= HETC_FEATURE_LAYOUT_NCHWC; ++i)
    hpc_features_put(f, i, i == index ? 1.0f : 0.0f);
}

double hpc_window_span(double count, double stride, double taps, double dilation, double limit) {
  const double s = (count - 1) * stride + (taps - 1) * dilation + 1;
  return s < limit ? s : limit;
}

hpc_conv_shape_t hpc_conv_shape(const hetc_plugin_workload_t *wl) {
  return (hpc_conv_shape_t){.N = (double)wl->inputs[0].shape[0],
                            .C = (double)wl->inputs[0].shape[1],
                            .H = (double)wl->inputs[0].shape[2],
                            .W = (double)wl->inputs[0].shape[3],
                            .K = (double)wl->output.shape[1],
                            .OH = (double)wl->output.shape[2],
                            .OW = (double)wl->output.shape[3],
                            .KH = wl->kernel[0],
                            .KW = wl->kernel[1],
                            .SH = wl->strides[0],
                            .SW = wl->strides[1],
                            .DH = wl->dilation[0],
                            .DW = wl->dilation[1]};
}

hpc_conv_nchw_tiles_t hpc_conv_nchw_tiles(const hpc_conv_shape_t *s, int32_t groups) {
  const double cg = s->C / groups, reduction = cg * s->KH * s->KW;
  return (hpc_conv_nchw_tiles_t){
      .row = {.spatial = s->OW,
              .reduction = reduction,
              .in = cg * hpc_window_span(1, s->SH, s->KH, s->DH, s->H) * s->W,
              .weight = reduction,
              .out = s->OW},
      .plane = {.spatial = s->OH * s->OW,
                .reduction = reduction,
                .in = cg * s->H * s->W,
                .weight = reduction,
                .out = s->OH * s->OW},
      .grid = {.spatial = s->N * s->K * s->OH * s->OW,
               .reduction = reduction,
               .in = s->N * s->C * s->H * s->W,
               .weight = s->K * reduction,
               .out = s->N * s->K * s->OH * s->OW}};
}

void hpc_features_put_loop(hpc_features_t *f, const hpc_loop_t *loop) {
  hpc_features_put(f, HETC_FEATURE_EXEC_FLOPS, hpc_log2p(2 * loop->exec_macs));
  hpc_features_put(f, HETC_FEATURE_VECTOR_WIDTH, (float)loop->vector_width);
  hpc_features_put(f, HETC_FEATURE_UNROLL, hpc_log2p(loop->unroll));
  hpc_features_put(f, HETC_FEATURE_INNER_LOOP, hpc_log2p(loop->inner_loop));
  hpc_features_put(f, HETC_FEATURE_PARALLEL_UNITS, hpc_log2p(loop->parallel_units));
  hpc_features_put(f, HETC_FEATURE_THREADS_PER_GROUP, hpc_log2p(1));
  hpc_features_put_algo(f, loop->algo);
  hpc_features_put_layout(f, loop->layout);
}

int32_t hpc_features_count(const hpc_features_t *f) {
  return f->capacity < HETC_FEATURE_COUNT ? f->capacity : HETC_FEATURE_COUNT;
}
