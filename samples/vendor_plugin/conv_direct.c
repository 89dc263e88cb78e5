/* The conv2d template "example_c_direct": a direct convolution over
 * row-major NCHW tensors.
 *
 * Loop nest (one parallel task per (n, group, k_outer, output row)):
 *
 *   parallel for n, g, ko, oh:
 *     for xo in x_outer:                       acc[inner_k][inner_x] = 0
 *       reduce_order 0: for c, kh, kw  |  1: for kh, kw, c
 *         x[xx] = input under output column xo*inner_x + xx (0 in padding)
 *         for kk in inner_k: for xx in inner_x: acc[kk][xx] += w[kk] * x[xx]
 *       out = act(acc + bias + residual)
 *
 * The knobs shape the accumulator tile, which a compiler keeps in
 * registers: tile_k picks how many output channels share one input load,
 * tile_x how many output columns share one weight load. pack_param lays the
 * weight out so that the inner_k weights of one (c, kh, kw) tap are
 * adjacent: [g][k_outer][C/g][KH][KW][inner_k].
 *
 * One description of the knobs (describe_knobs) serves the space and the
 * parser (build, features, artifact_load), so that what the host offers
 * and what the kernel accepts cannot drift apart. */
#include <stdio.h>
#include <string.h>

#include "example_c.h"

#define TEMPLATE "example_c_direct"
#define TILE_K_MAX 16
#define TILE_X_MAX 8
#define TILE_K_DEFAULT 8
#define TILE_X_DEFAULT 4

static const int64_t reduce_orders[2] = {0, 1};

/* Sizes of a conv2d workload, by their usual letters. */
typedef struct shape_t {
  int64_t N, C, H, W, K, OH, OW, KH, KW, SH, SW, DH, DW, PT, PL, G, CG, KG;
} shape_t;

static shape_t shape_of(const hetc_plugin_workload_t *wl) {
  const int64_t *in = wl->inputs[0].shape, *out = wl->output.shape;
  shape_t s = {.N = in[0], .C = in[1], .H = in[2], .W = in[3], .K = out[1], .OH = out[2], .OW = out[3],
               .KH = wl->kernel[0], .KW = wl->kernel[1], .SH = wl->strides[0], .SW = wl->strides[1],
               .DH = wl->dilation[0], .DW = wl->dilation[1], .PT = wl->padding[0], .PL = wl->padding[1],
               .G = wl->groups};
  s.CG = s.C / s.G;
  s.KG = s.K / s.G;
  return s;
}

/* ------------------------------------------------------------------------ */
/* Space and configs                                                        */
/* ------------------------------------------------------------------------ */

static void describe_knobs(const shape_t *s, hetc_kit_knob_t knobs[3]) {
  knobs[0] = (hetc_kit_knob_t){.name = "tile_k", .kind = HETC_KIT_KNOB_SPLIT, .extent = s->KG, .parts = 2,
                               .policy = HETC_PLUGIN_SPLIT_FACTORS, .max_factor = TILE_K_MAX,
                               .extent_name = "the output channels per group"};
  knobs[1] = (hetc_kit_knob_t){.name = "tile_x", .kind = HETC_KIT_KNOB_SPLIT, .extent = s->OW, .parts = 2,
                               .policy = HETC_PLUGIN_SPLIT_FACTORS, .max_factor = TILE_X_MAX,
                               .extent_name = "the output width"};
  knobs[2] = (hetc_kit_knob_t){.name = "reduce_order", .kind = HETC_KIT_KNOB_CHOICE, .values = reduce_orders,
                               .num_values = 2};
}

/* cfg as a hetc config; its values point into cfg. */
static hetc_plugin_config_t as_config(const exc_direct_config_t *cfg, hetc_plugin_knob_value_t knobs[3]) {
  knobs[0] = (hetc_plugin_knob_value_t){"tile_k", 2, cfg->tile_k};
  knobs[1] = (hetc_plugin_knob_value_t){"tile_x", 2, cfg->tile_x};
  knobs[2] = (hetc_plugin_knob_value_t){"reduce_order", 1, &cfg->reduce_order};
  return (hetc_plugin_config_t){3, knobs};
}

/* The largest factor of n that is at most limit. */
static int64_t largest_factor(int64_t n, int64_t limit) {
  for (int64_t f = limit < n ? limit : n; f > 1; --f)
    if (n % f == 0) return f;
  return 1;
}

static int acc_fits(int64_t inner_k, int64_t inner_x) {
  return inner_k > 0 && inner_x > 0 && inner_k <= EXC_MAX_ACC / inner_x;
}

/* Register accumulators: inner_k x inner_x <= EXC_MAX_ACC. The host hands
 * exactly (tile_k, tile_x), in the order given to space_add_constraint. */
static int acc_constraint(const hetc_plugin_config_t *config, const void *user_data) {
  (void)user_data;
  if (!config || config->num_knobs != 2 || config->knobs[0].count != 2 || config->knobs[1].count != 2) return 0;
  return acc_fits(config->knobs[0].values[1], config->knobs[1].values[1]);
}

static void default_config(const shape_t *s, exc_direct_config_t *cfg) {
  const int64_t ik = largest_factor(s->KG, TILE_K_DEFAULT);
  const int64_t ix = largest_factor(s->OW, TILE_X_DEFAULT);
  *cfg = (exc_direct_config_t){{s->KG / ik, ik}, {s->OW / ix, ix}, 0};
}

hetc_plugin_status_t exc_direct_define_space(const hetc_plugin_workload_t *wl, hetc_plugin_space_t *space) {
  static const char *const constrained[2] = {"tile_k", "tile_x"};
  const shape_t s = shape_of(wl);
  hetc_kit_knob_t knobs[3];
  describe_knobs(&s, knobs);
  hetc_plugin_status_t st = hetc_kit_space_define_knobs(space, knobs, 3);
  if (!st) st = hetc_kit_host()->space_add_constraint(space, constrained, 2, acc_constraint, NULL);
  if (st) return st;
  exc_direct_config_t d;
  default_config(&s, &d);
  hetc_plugin_knob_value_t values[3];
  const hetc_plugin_config_t config = as_config(&d, values);
  return hetc_kit_host()->space_set_default(space, &config);
}

hetc_plugin_status_t exc_direct_parse(const hetc_plugin_workload_t *wl, const hetc_plugin_config_t *config,
                                      exc_direct_config_t *out) {
  const shape_t s = shape_of(wl);
  default_config(&s, out);
  hetc_kit_knob_t knobs[3];
  describe_knobs(&s, knobs);
  const hetc_plugin_knob_value_t *found[3];
  hetc_plugin_status_t st = hetc_kit_config_match(TEMPLATE, config, knobs, 3, found);
  if (st || !config) return st;
  const int64_t ik = found[0]->values[1], ix = found[1]->values[1];
  if (!acc_fits(ik, ix))
    return hetc_kit_status(HETC_PLUGIN_STATUS_INVALID_ARGUMENT,
                           TEMPLATE ": tile_k inner %lld x tile_x inner %lld = %lld accumulators, at most %d",
                           (long long)ik, (long long)ix, (long long)(ik * ix), EXC_MAX_ACC);
  memcpy(out->tile_k, found[0]->values, sizeof(out->tile_k));
  memcpy(out->tile_x, found[1]->values, sizeof(out->tile_x));
  out->reduce_order = found[2]->values[0];
  return NULL;
}

void exc_direct_config_text(const exc_direct_config_t *cfg, char *buf, size_t size) {
  hetc_plugin_knob_value_t values[3];
  const hetc_plugin_config_t config = as_config(cfg, values);
  hetc_kit_config_text(&config, buf, size);
}

/* ------------------------------------------------------------------------ */
/* Params                                                                   */
/* ------------------------------------------------------------------------ */

hetc_plugin_status_t exc_direct_pack(const hetc_plugin_workload_t *wl, const exc_direct_config_t *cfg, int32_t param,
                                     const float *logical, uint64_t count, void *out) {
  const shape_t s = shape_of(wl);
  /* k_outer x inner_k is exactly K / groups: the packed weight has no
   * padding lanes, so each param keeps its logical size. */
  const uint64_t want = hetc_kit_param_elements(wl, param);
  if (count != want)
    return hetc_kit_status(HETC_PLUGIN_STATUS_INVALID_ARGUMENT, TEMPLATE ": param %d has %llu values, expected %llu",
                           param, (unsigned long long)count, (unsigned long long)want);
  float *dst = out;
  if (param == 1) { /* bias: as is */
    memcpy(dst, logical, (size_t)count * sizeof(float));
    return NULL;
  }
  /* [K][C/g][KH][KW] -> [g][k_outer][C/g][KH][KW][inner_k]: the kernel
   * then reads one tap's inner_k weights with unit stride. */
  const int64_t KO = cfg->tile_k[0], IK = cfg->tile_k[1], taps = s.KH * s.KW;
  for (int64_t g = 0; g < s.G; ++g)
    for (int64_t ko = 0; ko < KO; ++ko)
      for (int64_t c = 0; c < s.CG; ++c)
        for (int64_t t = 0; t < taps; ++t)
          for (int64_t kk = 0; kk < IK; ++kk) {
            const int64_t k = g * s.KG + ko * IK + kk;
            dst[(((g * KO + ko) * s.CG + c) * taps + t) * IK + kk] = logical[(k * s.CG + c) * taps + t];
          }
  return NULL;
}

/* ------------------------------------------------------------------------ */
/* Kernel                                                                   */
/* ------------------------------------------------------------------------ */

typedef struct run_t {
  shape_t s;
  int64_t KO, IK, XO, IX, order;
  int32_t activation;
  const float *in, *residual, *weight, *bias;
  float *out;
} run_t;

/* One tap (c, kh, kw) of one accumulator tile: the input values under the
 * tile's inner_x columns (zero in the padding) times inner_k weights. */
static inline void tap(const run_t *r, const float *row, const float *w, int64_t ow0, int64_t kw, float *acc) {
  const shape_t *s = &r->s;
  float x[EXC_MAX_ACC];
  for (int64_t xx = 0; xx < r->IX; ++xx) {
    const int64_t iw = (ow0 + xx) * s->SW - s->PL + kw * s->DW;
    x[xx] = iw >= 0 && iw < s->W ? row[iw] : 0.0f;
  }
  for (int64_t kk = 0; kk < r->IK; ++kk) {
    const float wk = w[kk];
    float *a = acc + kk * r->IX;
    for (int64_t xx = 0; xx < r->IX; ++xx) a[xx] += wk * x[xx];
  }
}

/* Tasks [begin, end) of (n, g, ko, oh). */
static void conv_rows(int64_t begin, int64_t end, void *user_data) {
  const run_t *r = user_data;
  const shape_t *s = &r->s;
  const int64_t taps = s->KH * s->KW;
  for (int64_t t = begin; t < end; ++t) {
    const int64_t oh = t % s->OH;
    int64_t rest = t / s->OH;
    const int64_t ko = rest % r->KO;
    rest /= r->KO;
    const int64_t g = rest % s->G, n = rest / s->G;
    const int64_t k0 = g * s->KG + ko * r->IK;
    const float *in = r->in + (n * s->C + g * s->CG) * s->H * s->W;
    const float *panel = r->weight + (g * r->KO + ko) * s->CG * taps * r->IK;
    for (int64_t xo = 0; xo < r->XO; ++xo) {
      const int64_t ow0 = xo * r->IX;
      float acc[EXC_MAX_ACC];
      for (int64_t i = 0; i < r->IK * r->IX; ++i) acc[i] = 0.0f;
      if (r->order == 0) {
        for (int64_t c = 0; c < s->CG; ++c)
          for (int64_t kh = 0; kh < s->KH; ++kh) {
            const int64_t ih = oh * s->SH - s->PT + kh * s->DH;
            if (ih < 0 || ih >= s->H) continue; /* a padding row adds zeros */
            const float *row = in + (c * s->H + ih) * s->W;
            for (int64_t kw = 0; kw < s->KW; ++kw)
              tap(r, row, panel + ((c * s->KH + kh) * s->KW + kw) * r->IK, ow0, kw, acc);
          }
      } else {
        for (int64_t kh = 0; kh < s->KH; ++kh) {
          const int64_t ih = oh * s->SH - s->PT + kh * s->DH;
          if (ih < 0 || ih >= s->H) continue;
          for (int64_t kw = 0; kw < s->KW; ++kw)
            for (int64_t c = 0; c < s->CG; ++c)
              tap(r, in + (c * s->H + ih) * s->W, panel + ((c * s->KH + kh) * s->KW + kw) * r->IK, ow0, kw, acc);
        }
      }
      for (int64_t kk = 0; kk < r->IK; ++kk) {
        const int64_t k = k0 + kk;
        const float b = r->bias ? r->bias[k] : 0.0f;
        const int64_t o = ((n * s->K + k) * s->OH + oh) * s->OW + ow0;
        for (int64_t xx = 0; xx < r->IX; ++xx) {
          float v = acc[kk * r->IX + xx] + b;
          if (r->residual) v += r->residual[o + xx];
          r->out[o + xx] = hetc_kit_activate(r->activation, v);
        }
      }
    }
  }
}

void exc_direct_run(const hetc_plugin_workload_t *wl, const exc_direct_config_t *cfg, float *const *args) {
  const int has_res = wl->epilogue.has_residual, has_bias = wl->epilogue.has_bias;
  run_t r = {.s = shape_of(wl), .KO = cfg->tile_k[0], .IK = cfg->tile_k[1], .XO = cfg->tile_x[0],
             .IX = cfg->tile_x[1], .order = cfg->reduce_order, .activation = wl->epilogue.activation,
             .in = args[0], .residual = has_res ? args[1] : NULL, .weight = args[1 + has_res],
             .bias = has_bias ? args[2 + has_res] : NULL, .out = args[2 + has_res + has_bias]};
  hetc_kit_host()->parallel_for(r.s.N * r.s.G * r.KO * r.s.OH, 1, conv_rows, &r);
}

/* ------------------------------------------------------------------------ */
/* Features (schema 1, since ABI minor 1)                                   */
/* ------------------------------------------------------------------------ */

#if HETC_KIT_ABI_AT_LEAST(1, 1)
/* Levels of the nest above (element counts; the kit makes bytes of them):
 *   REGISTER: one accumulator tile, inner_k x inner_x outputs over the whole
 *             reduction; every load counted: inner_x inputs and inner_k
 *             weights per tap, one store per output.
 *   CACHE:    the unit one (k_outer, output row) task reuses from cache for
 *             each x tile: the k_outer block's packed weight panel (which
 *             every x tile of the row reads again) and the input window
 *             under inner_x columns.
 *   BLOCK:    one task: inner_k channels x one output row.
 *   GRID:     the whole kernel. */
void exc_direct_features(const hetc_plugin_workload_t *wl, const exc_direct_config_t *cfg, float *out,
                         int32_t capacity) {
  const shape_t s = shape_of(wl);
  const double IK = (double)cfg->tile_k[1], IX = (double)cfg->tile_x[1];
  const double R = (double)(s.CG * s.KH * s.KW); /* multiply-adds per output */
  const double rows_in = hetc_kit_window_span(1, (double)s.SH, (double)s.KH, (double)s.DH, (double)s.H);
  const double outputs = (double)(s.N * s.K * s.OH * s.OW);
  const hetc_kit_feature_tile_t levels[HETC_FEATURE_LEVEL_COUNT] = {
      [HETC_FEATURE_LEVEL_REGISTER] = {IK * IX, R, R * IX, R * IK, IK * IX, 0},
      [HETC_FEATURE_LEVEL_CACHE] = {IK * IX, R,
                                    (double)s.CG * rows_in *
                                        hetc_kit_window_span(IX, (double)s.SW, (double)s.KW, (double)s.DW, (double)s.W),
                                    R * IK, IK * IX, 0},
      [HETC_FEATURE_LEVEL_BLOCK] = {IK * (double)s.OW, R,
                                    (double)s.CG * rows_in *
                                        hetc_kit_window_span((double)s.OW, (double)s.SW, (double)s.KW, (double)s.DW,
                                                             (double)s.W),
                                    R * IK, IK * (double)s.OW, 0},
      [HETC_FEATURE_LEVEL_GRID] = {outputs, R, (double)(s.N * s.C * s.H * s.W), (double)s.K * R, outputs, 0},
  };
  /* Only the plugin's indices, whatever the host's capacity. */
  hetc_kit_features_t f = {out, capacity < HETC_FEATURE_PLUGIN_END ? capacity : HETC_FEATURE_PLUGIN_END};
  for (int32_t level = 0; level < HETC_FEATURE_LEVEL_COUNT; ++level)
    hetc_kit_features_put_level(&f, level, &levels[level]);
  const hetc_kit_loop_t loop = {
      .exec_macs = outputs * R,
      .vector_width = 1, /* scalar C */
      .unroll = IK * IX,
      .inner_loop = IX,
      .parallel_units = (double)(s.N * s.G * cfg->tile_k[0] * s.OH),
      .algo = hetc_kit_conv_is_depthwise(wl) ? HETC_FEATURE_ALGO_DEPTHWISE : HETC_FEATURE_ALGO_DIRECT,
      .layout = hetc_kit_layout_row_major(),
  };
  hetc_kit_features_put_loop(&f, &loop);
}
#endif
