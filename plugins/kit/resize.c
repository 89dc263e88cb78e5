/* Resize taps (hetc/kit/resize.h): ONNX's coordinate transforms and
 * roundings in double precision, then clamped into the input. */
#include "hetc/kit/resize.h"

#if HETC_KIT_ABI_AT_LEAST(2, 0)

#include <math.h>

static double source_of(const hetc_plugin_resize_params_t *p, double s, int64_t j, int64_t n, int64_t m) {
  const double centre = ((double)j + 0.5) / s;
  switch (p->coordinates) {
    case HETC_PLUGIN_RESIZE_PYTORCH_HALF_PIXEL: return m > 1 ? centre - 0.5 : 0.0;
    case HETC_PLUGIN_RESIZE_ALIGN_CORNERS: return m > 1 ? (double)j * (double)(n - 1) / (double)(m - 1) : 0.0;
    case HETC_PLUGIN_RESIZE_ASYMMETRIC: return (double)j / s;
    case HETC_PLUGIN_RESIZE_TF_HALF_PIXEL_FOR_NN: return centre;
    case HETC_PLUGIN_RESIZE_HALF_PIXEL_SYMMETRIC:
      return (double)n / 2.0 * (1.0 - (double)m / (s * (double)n)) + centre - 0.5;
    default: return centre - 0.5; /* half_pixel */
  }
}

static double rounded(int32_t rounding, double x) {
  const double below = floor(x);
  const int tie = x - below == 0.5;
  switch (rounding) {
    case HETC_PLUGIN_RESIZE_ROUND_PREFER_CEIL: return tie ? below + 1 : floor(x + 0.5);
    case HETC_PLUGIN_RESIZE_FLOOR: return below;
    case HETC_PLUGIN_RESIZE_CEIL: return ceil(x);
    default: return tie ? below : floor(x + 0.5); /* round_prefer_floor */
  }
}

static int32_t clamped(double x, int64_t n) { return x <= 0 ? 0 : x >= (double)(n - 1) ? (int32_t)(n - 1) : (int32_t)x; }

void hetc_kit_resize_taps(const hetc_plugin_workload_t *wl, int32_t dim, int64_t first, int64_t count,
                          hetc_kit_resize_tap_t *taps) {
  const hetc_plugin_resize_params_t *p = &wl->params.resize;
  const int64_t n = wl->inputs[0].shape[dim], m = wl->output.shape[dim];
  const double s = p->scales[dim - 2];
  for (int64_t k = 0; k < count; ++k) {
    const double x = source_of(p, s, first + k, n, m);
    hetc_kit_resize_tap_t *t = &taps[k];
    if (p->mode == HETC_PLUGIN_RESIZE_NEAREST) {
      t->lo = t->hi = clamped(rounded(p->rounding, x), n);
      t->weight = 0;
    } else {
      const double inside = x < 0 ? 0 : x > (double)(n - 1) ? (double)(n - 1) : x;
      t->lo = (int32_t)inside;
      t->hi = t->lo + 1 < n ? t->lo + 1 : t->lo;
      t->weight = (float)(inside - (double)t->lo);
    }
  }
}

#endif /* HETC_KIT_ABI_AT_LEAST(2, 0) */
