/* The reference resize, as plugin.h defines it (ONNX's Resize over H and
 * W): source coordinates in double precision per output row and column,
 * then nearest or bilinear sampling. Written apart from the plugin kit's
 * tables so that the two check each other. */
#include "reference/reference.h"

#include <math.h>
#include <stdlib.h>

/* Where output index j of a dim resized from n to m reads, in input
 * coordinates; NAN for a transform plugin.h does not define. */
static double source_coordinate(int32_t coordinates, int64_t j, int64_t n, int64_t m, double s) {
  const double centre = ((double)j + 0.5) / s;
  switch (coordinates) {
    case HETC_PLUGIN_RESIZE_HALF_PIXEL: return centre - 0.5;
    case HETC_PLUGIN_RESIZE_PYTORCH_HALF_PIXEL: return m > 1 ? centre - 0.5 : 0.0;
    case HETC_PLUGIN_RESIZE_ALIGN_CORNERS: return m > 1 ? (double)j * (double)(n - 1) / (double)(m - 1) : 0.0;
    case HETC_PLUGIN_RESIZE_ASYMMETRIC: return (double)j / s;
    case HETC_PLUGIN_RESIZE_TF_HALF_PIXEL_FOR_NN: return centre;
    case HETC_PLUGIN_RESIZE_HALF_PIXEL_SYMMETRIC: {
      const double adjustment = (double)m / (s * (double)n), middle = (double)n / 2.0;
      return middle * (1.0 - adjustment) + centre - 0.5;
    }
    default: return NAN;
  }
}

static int64_t clamp_index(double x, int64_t n) { return x < 0 ? 0 : x > (double)(n - 1) ? n - 1 : (int64_t)x; }

static int64_t nearest_index(int32_t rounding, double x, int64_t n) {
  const double below = floor(x);
  const int tie = x == below + 0.5;
  switch (rounding) {
    case HETC_PLUGIN_RESIZE_ROUND_PREFER_FLOOR: return clamp_index(tie ? below : floor(x + 0.5), n);
    case HETC_PLUGIN_RESIZE_ROUND_PREFER_CEIL: return clamp_index(tie ? below + 1 : floor(x + 0.5), n);
    case HETC_PLUGIN_RESIZE_FLOOR: return clamp_index(below, n);
    default: return clamp_index(ceil(x), n);
  }
}

/* One dim's sampling: rows lo and hi with weight 1 - f and f. */
typedef struct {
  int64_t lo, hi;
  double f;
} tap_t;

static void dim_taps(const hetc_plugin_resize_params_t *p, int32_t k, int64_t n, int64_t m, tap_t *taps) {
  for (int64_t j = 0; j < m; ++j) {
    const double x = source_coordinate(p->coordinates, j, n, m, p->scales[k]);
    if (p->mode == HETC_PLUGIN_RESIZE_NEAREST) {
      taps[j].lo = taps[j].hi = nearest_index(p->rounding, x, n);
      taps[j].f = 0;
      continue;
    }
    const double clamped = x < 0 ? 0 : x > (double)(n - 1) ? (double)(n - 1) : x;
    taps[j].lo = (int64_t)clamped;
    taps[j].hi = taps[j].lo + 1 < n ? taps[j].lo + 1 : taps[j].lo;
    taps[j].f = clamped - (double)taps[j].lo;
  }
}

hetc_status_t hetc_reference_resize(const hetc_plugin_workload_t *w, const float *x, float *y) {
  const hetc_plugin_tensor_t *in = &w->inputs[0], *out = &w->output;
  const hetc_plugin_resize_params_t *p = &w->params.resize;
  if (w->num_inputs != 1 || in->rank != 4 || out->rank != 4 || in->shape[0] != out->shape[0] ||
      in->shape[1] != out->shape[1])
    return hetc_status_new(HETC_STATUS_INVALID_ARGUMENT, "resize: one 4-d input of the output's N and C expected");
  if (p->mode < HETC_PLUGIN_RESIZE_NEAREST || p->mode > HETC_PLUGIN_RESIZE_LINEAR ||
      isnan(source_coordinate(p->coordinates, 0, 1, 1, 1.0)) || p->rounding < 0 || p->rounding > HETC_PLUGIN_RESIZE_CEIL ||
      !(p->scales[0] > 0) || !(p->scales[1] > 0))
    return hetc_status_new(HETC_STATUS_INVALID_ARGUMENT, "resize: mode %d, coordinates %d, rounding %d or scales %g, %g unknown",
                           p->mode, p->coordinates, p->rounding, p->scales[0], p->scales[1]);
  const int64_t planes = out->shape[0] * out->shape[1], H = in->shape[2], W = in->shape[3];
  const int64_t OH = out->shape[2], OW = out->shape[3];
  tap_t *rows = malloc(sizeof(tap_t) * (size_t)(OH + OW));
  if (!rows) return hetc_status_new(HETC_STATUS_OUT_OF_MEMORY, "resize: %lld taps", (long long)(OH + OW));
  tap_t *cols = rows + OH;
  dim_taps(p, 0, H, OH, rows);
  dim_taps(p, 1, W, OW, cols);
  for (int64_t plane = 0; plane < planes; ++plane) {
    const float *src = x + plane * H * W;
    float *dst = y + plane * OH * OW;
    for (int64_t i = 0; i < OH; ++i) {
      const float *top = src + rows[i].lo * W, *bottom = src + rows[i].hi * W;
      for (int64_t j = 0; j < OW; ++j) {
        if (p->mode == HETC_PLUGIN_RESIZE_NEAREST) { /* a copy: an infinity stays one */
          dst[i * OW + j] = top[cols[j].lo];
          continue;
        }
        const double fx = cols[j].f, fy = rows[i].f;
        const double upper = (1 - fx) * top[cols[j].lo] + fx * top[cols[j].hi];
        const double lower = (1 - fx) * bottom[cols[j].lo] + fx * bottom[cols[j].hi];
        dst[i * OW + j] = (float)((1 - fy) * upper + fy * lower);
      }
    }
  }
  free(rows);
  return NULL;
}
