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
 * One description of the space (define_space) and one parser (build,
 * features, artifact_load) keep what the host offers and what the kernel
 * accepts from drifting apart. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "example_c.h"

#define TEMPLATE "example_c_direct"
#define TILE_K_MAX 16
#define TILE_X_MAX 8
#define TILE_K_DEFAULT 8
#define TILE_X_DEFAULT 4

static const char *const knob_names[3] = {"tile_k", "tile_x", "reduce_order"};
static const int64_t reduce_orders[2] = {0, 1};

/* Sizes of a conv2d workload, by their usual letters. */
typedef struct shape_t {
  int64_t N, C, H, W, K, OH, OW, KH, KW, SH, SW, DH, DW, PT, PL, G, CG, KG;
} shape_t;

static shape_t shape_of(const hetc_plugin_workload_t *wl) {
  const int64_t *in = wl->inputs[0].shape, *out = wl->output.shape;
  shape_t s = {.N = in[0], .C = in[1], .H = in[2], .W = in[3],
               .K = out[1], .OH = out[2], .OW = out[3],
               .KH = wl->kernel[0], .KW = wl->kernel[1],
               .SH = wl->strides[0], .SW = wl->strides[1],
               .DH = wl->dilation[0], .DW = wl->dilation[1],
               .PT = wl->padding[0], .PL = wl->padding[1], .G = wl->groups};
  s.CG = s.C / s.G;
  s.KG = s.K / s.G;
  return s;
}

static int64_t conv_extent(int64_t in, int64_t pad, int64_t kernel, int64_t stride,
                           int64_t dilation) {
  const int64_t span = in + pad - dilation * (kernel - 1) - 1;
  return span < 0 ? 0 : span / stride + 1;
}

int32_t exc_direct_check(const hetc_plugin_workload_t *wl, exc_reason_t *r) {
  const hetc_plugin_epilogue_t *e = &wl->epilogue;
  if ((e->has_bias != 0 && e->has_bias != 1) || (e->has_residual != 0 && e->has_residual != 1))
    return exc_fail(r, HETC_PLUGIN_STATUS_INVALID_ARGUMENT,
                    "conv2d: epilogue flags must be 0 or 1");
  if (e->activation < HETC_PLUGIN_ACT_NONE || e->activation > HETC_PLUGIN_ACT_TANH)
    return exc_fail(r, HETC_PLUGIN_STATUS_UNSUPPORTED, "conv2d: unknown activation %d",
                    e->activation);
  if (wl->num_inputs != 1 + e->has_residual)
    return exc_fail(r, HETC_PLUGIN_STATUS_INVALID_ARGUMENT,
                    "conv2d: %d activation inputs, expected %d", wl->num_inputs,
                    1 + e->has_residual);
  const hetc_plugin_tensor_t *in = &wl->inputs[0], *out = &wl->output;
  if (in->rank != 4 || out->rank != 4 || in->shape[0] != out->shape[0])
    return exc_fail(r, HETC_PLUGIN_STATUS_INVALID_ARGUMENT,
                    "conv2d: input and output must be 4-d with the same batch");
  if (wl->kernel[0] < 1 || wl->kernel[1] < 1 || wl->strides[0] < 1 || wl->strides[1] < 1 ||
      wl->dilation[0] < 1 || wl->dilation[1] < 1)
    return exc_fail(r, HETC_PLUGIN_STATUS_INVALID_ARGUMENT,
                    "conv2d: kernel %dx%d, strides %dx%d and dilation %dx%d must be positive",
                    wl->kernel[0], wl->kernel[1], wl->strides[0], wl->strides[1],
                    wl->dilation[0], wl->dilation[1]);
  for (int i = 0; i < 4; ++i)
    if (wl->padding[i] < 0)
      return exc_fail(r, HETC_PLUGIN_STATUS_INVALID_ARGUMENT, "conv2d: negative padding");
  if (wl->groups < 1 || in->shape[1] % wl->groups || out->shape[1] % wl->groups)
    return exc_fail(r, HETC_PLUGIN_STATUS_INVALID_ARGUMENT,
                    "conv2d: groups %d must divide the channels %lld and %lld", wl->groups,
                    (long long)in->shape[1], (long long)out->shape[1]);
  const int64_t oh = conv_extent(in->shape[2], (int64_t)wl->padding[0] + wl->padding[2],
                                 wl->kernel[0], wl->strides[0], wl->dilation[0]);
  const int64_t ow = conv_extent(in->shape[3], (int64_t)wl->padding[1] + wl->padding[3],
                                 wl->kernel[1], wl->strides[1], wl->dilation[1]);
  if (oh != out->shape[2] || ow != out->shape[3])
    return exc_fail(r, HETC_PLUGIN_STATUS_INVALID_ARGUMENT,
                    "conv2d: output %lldx%lld, the arithmetic gives %lldx%lld",
                    (long long)out->shape[2], (long long)out->shape[3], (long long)oh,
                    (long long)ow);
  if (e->has_residual && !exc_same_shape(&wl->inputs[1], out))
    return exc_fail(r, HETC_PLUGIN_STATUS_INVALID_ARGUMENT,
                    "conv2d: the residual's shape differs from the output's");
  /* The weight's size in int64 arithmetic (pack, param_bytes) must not
   * overflow; tensors are below 2^31 elements, the kernel window is not. */
  const double weights = (double)out->shape[1] * (double)(in->shape[1] / wl->groups) *
                         wl->kernel[0] * wl->kernel[1];
  if (weights > (double)((int64_t)1 << 31))
    return exc_fail(r, HETC_PLUGIN_STATUS_UNSUPPORTED,
                    "conv2d: a weight of %.0f elements (at most 2^31)", weights);
  return 0;
}

/* ------------------------------------------------------------------------ */
/* Space and configs                                                        */
/* ------------------------------------------------------------------------ */

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
  if (!config || config->num_knobs != 2 || config->knobs[0].count != 2 ||
      config->knobs[1].count != 2)
    return 0;
  return acc_fits(config->knobs[0].values[1], config->knobs[1].values[1]);
}

static void default_config(const shape_t *s, exc_direct_config_t *cfg) {
  const int64_t ik = largest_factor(s->KG, TILE_K_DEFAULT);
  const int64_t ix = largest_factor(s->OW, TILE_X_DEFAULT);
  cfg->tile_k[0] = s->KG / ik;
  cfg->tile_k[1] = ik;
  cfg->tile_x[0] = s->OW / ix;
  cfg->tile_x[1] = ix;
  cfg->reduce_order = 0;
}

hetc_plugin_status_t exc_direct_define_space(const hetc_plugin_workload_t *wl,
                                             hetc_plugin_space_t *space) {
  const hetc_plugin_host_t *h = exc_host;
  const shape_t s = shape_of(wl);
  hetc_plugin_status_t st =
      h->space_define_split(space, "tile_k", s.KG, 2, HETC_PLUGIN_SPLIT_FACTORS, TILE_K_MAX,
                            NULL, 0);
  if (!st)
    st = h->space_define_split(space, "tile_x", s.OW, 2, HETC_PLUGIN_SPLIT_FACTORS, TILE_X_MAX,
                               NULL, 0);
  if (!st) st = h->space_define_knob(space, "reduce_order", reduce_orders, 2);
  if (!st) st = h->space_add_constraint(space, knob_names, 2, acc_constraint, NULL);
  if (st) return st;
  exc_direct_config_t d;
  default_config(&s, &d);
  const hetc_plugin_knob_value_t knobs[3] = {
      {"tile_k", 2, d.tile_k}, {"tile_x", 2, d.tile_x}, {"reduce_order", 1, &d.reduce_order}};
  const hetc_plugin_config_t config = {3, knobs};
  return h->space_set_default(space, &config);
}

/* A split knob: two positive parts whose product is the extent. Override
 * files may add splits past the declared max_factor; the kernel runs any
 * exact split whose accumulators fit, so only that is checked (below). */
static hetc_plugin_status_t check_split(const hetc_plugin_knob_value_t *kv, int64_t extent,
                                        const char *what) {
  if (kv->count != 2 || !kv->values)
    return exc_status(HETC_PLUGIN_STATUS_INVALID_ARGUMENT,
                      TEMPLATE ": knob '%s' has %d values, expected 2", kv->name, kv->count);
  const int64_t outer = kv->values[0], inner = kv->values[1];
  if (outer < 1 || inner < 1)
    return exc_status(HETC_PLUGIN_STATUS_INVALID_ARGUMENT,
                      TEMPLATE ": knob '%s' = [%lld,%lld]: parts must be positive", kv->name,
                      (long long)outer, (long long)inner);
  if (outer > extent || inner > extent || outer * inner != extent)
    return exc_status(HETC_PLUGIN_STATUS_INVALID_ARGUMENT,
                      TEMPLATE ": knob '%s' = [%lld,%lld]: the parts must multiply to %s %lld",
                      kv->name, (long long)outer, (long long)inner, what, (long long)extent);
  return NULL;
}

hetc_plugin_status_t exc_direct_parse(const hetc_plugin_workload_t *wl,
                                      const hetc_plugin_config_t *config,
                                      exc_direct_config_t *out) {
  const shape_t s = shape_of(wl);
  default_config(&s, out);
  if (!config) return NULL;
  if (config->num_knobs < 0 || (config->num_knobs > 0 && !config->knobs))
    return exc_status(HETC_PLUGIN_STATUS_INVALID_ARGUMENT,
                      TEMPLATE ": malformed config (%d knobs)", config->num_knobs);
  const hetc_plugin_knob_value_t *found[3] = {NULL, NULL, NULL};
  for (int32_t j = 0; j < config->num_knobs; ++j) {
    const hetc_plugin_knob_value_t *kv = &config->knobs[j];
    if (!kv->name)
      return exc_status(HETC_PLUGIN_STATUS_INVALID_ARGUMENT,
                        TEMPLATE ": config knob %d has no name", j);
    int k = 0;
    while (k < 3 && strcmp(kv->name, knob_names[k]) != 0) ++k;
    if (k == 3)
      return exc_status(HETC_PLUGIN_STATUS_INVALID_ARGUMENT,
                        TEMPLATE ": unknown knob '%s' (knobs: tile_k, tile_x, reduce_order)",
                        kv->name);
    if (found[k])
      return exc_status(HETC_PLUGIN_STATUS_INVALID_ARGUMENT,
                        TEMPLATE ": knob '%s' given twice", kv->name);
    found[k] = kv;
  }
  for (int k = 0; k < 3; ++k)
    if (!found[k])
      return exc_status(HETC_PLUGIN_STATUS_INVALID_ARGUMENT,
                        TEMPLATE ": config lacks knob '%s'", knob_names[k]);
  hetc_plugin_status_t st = check_split(found[0], s.KG, "the output channels per group");
  if (!st) st = check_split(found[1], s.OW, "the output width");
  if (st) return st;
  const hetc_plugin_knob_value_t *order = found[2];
  if (order->count != 1 || !order->values)
    return exc_status(HETC_PLUGIN_STATUS_INVALID_ARGUMENT,
                      TEMPLATE ": knob 'reduce_order' has %d values, expected 1", order->count);
  if (order->values[0] != 0 && order->values[0] != 1)
    return exc_status(HETC_PLUGIN_STATUS_INVALID_ARGUMENT,
                      TEMPLATE ": knob 'reduce_order' = %lld, expected one of {0,1}",
                      (long long)order->values[0]);
  const int64_t ik = found[0]->values[1], ix = found[1]->values[1];
  if (!acc_fits(ik, ix))
    return exc_status(HETC_PLUGIN_STATUS_INVALID_ARGUMENT,
                      TEMPLATE ": tile_k inner %lld x tile_x inner %lld = %lld accumulators, "
                      "at most %d",
                      (long long)ik, (long long)ix, (long long)(ik * ix), EXC_MAX_ACC);
  memcpy(out->tile_k, found[0]->values, sizeof(out->tile_k));
  memcpy(out->tile_x, found[1]->values, sizeof(out->tile_x));
  out->reduce_order = order->values[0];
  return NULL;
}

void exc_direct_config_text(const exc_direct_config_t *cfg, char *buf, size_t size) {
  snprintf(buf, size, "tile_k=[%lld,%lld] tile_x=[%lld,%lld] reduce_order=%lld",
           (long long)cfg->tile_k[0], (long long)cfg->tile_k[1], (long long)cfg->tile_x[0],
           (long long)cfg->tile_x[1], (long long)cfg->reduce_order);
}

/* ------------------------------------------------------------------------ */
/* Params                                                                   */
/* ------------------------------------------------------------------------ */

uint64_t exc_direct_param_bytes(const hetc_plugin_workload_t *wl, int32_t param) {
  const shape_t s = shape_of(wl);
  /* k_outer x inner_k is exactly K / groups: the packed weight has no
   * padding lanes. */
  if (param == 0) return (uint64_t)(s.K * s.CG * s.KH * s.KW) * sizeof(float);
  return (uint64_t)s.K * sizeof(float);
}

hetc_plugin_status_t exc_direct_pack(const hetc_plugin_workload_t *wl,
                                     const exc_direct_config_t *cfg, int32_t param,
                                     const float *logical, uint64_t count, void *out) {
  const shape_t s = shape_of(wl);
  const uint64_t want = exc_direct_param_bytes(wl, param) / sizeof(float);
  if (count != want)
    return exc_status(HETC_PLUGIN_STATUS_INVALID_ARGUMENT,
                      TEMPLATE ": param %d has %llu values, expected %llu", param,
                      (unsigned long long)count, (unsigned long long)want);
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
            dst[(((g * KO + ko) * s.CG + c) * taps + t) * IK + kk] =
                logical[(k * s.CG + c) * taps + t];
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
static inline void tap(const run_t *r, const float *row, const float *w, int64_t ow0, int64_t kw,
                       float *acc) {
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
              tap(r, in + (c * s->H + ih) * s->W,
                  panel + ((c * s->KH + kh) * s->KW + kw) * r->IK, ow0, kw, acc);
        }
      }
      for (int64_t kk = 0; kk < r->IK; ++kk) {
        const int64_t k = k0 + kk;
        const float b = r->bias ? r->bias[k] : 0.0f;
        const int64_t o = ((n * s->K + k) * s->OH + oh) * s->OW + ow0;
        for (int64_t xx = 0; xx < r->IX; ++xx) {
          float v = acc[kk * r->IX + xx] + b;
          if (r->residual) v += r->residual[o + xx];
          r->out[o + xx] = exc_activate(r->activation, v);
        }
      }
    }
  }
}

void exc_direct_run(const hetc_plugin_workload_t *wl, const exc_direct_config_t *cfg,
                    float *const *args) {
  const int has_res = wl->epilogue.has_residual, has_bias = wl->epilogue.has_bias;
  run_t r = {.s = shape_of(wl),
             .KO = cfg->tile_k[0], .IK = cfg->tile_k[1],
             .XO = cfg->tile_x[0], .IX = cfg->tile_x[1],
             .order = cfg->reduce_order,
             .activation = wl->epilogue.activation,
             .in = args[0],
             .residual = has_res ? args[1] : NULL,
             .weight = args[1 + has_res],
             .bias = has_bias ? args[2 + has_res] : NULL,
             .out = args[2 + has_res + has_bias]};
  const int64_t tasks = r.s.N * r.s.G * r.KO * r.s.OH;
  exc_host->parallel_for(tasks, 1, conv_rows, &r);
}

/* ------------------------------------------------------------------------ */
/* Features (schema 1, since ABI minor 1)                                   */
/* ------------------------------------------------------------------------ */

#if HETC_PLUGIN_ABI_MINOR >= 1
/* Levels of the nest above (element counts; bytes are 4 per element):
 *   REGISTER: one accumulator tile, inner_k x inner_x outputs over the whole
 *             reduction; every load counted: inner_x inputs and inner_k
 *             weights per tap, one store per output.
 *   CACHE:    the unit one (k_outer, output row) task reuses from cache for
 *             each x tile: the k_outer block's packed weight panel (which
 *             every x tile of the row reads again) and the input window
 *             under inner_x columns.
 *   BLOCK:    one task: inner_k channels x one output row.
 *   GRID:     the whole kernel. */
typedef struct tile_t {
  double spatial, reduction, in, weight, out;
} tile_t;

static float log2p(double x) { return (float)log2(1.0 + (x > 0 ? x : 0)); }

static void put(float *out, int32_t capacity, int32_t index, float value) {
  if (index < capacity && index < HETC_FEATURE_PLUGIN_END) out[index] = value;
}

static void put_level(float *out, int32_t capacity, int32_t level, const tile_t *t) {
  const double macs = t->spatial * t->reduction;
  const double bytes = 4 * (t->in + t->weight + t->out);
  const float v[HETC_FEATURE_FIELD_COUNT] = {
      [HETC_FEATURE_FIELD_SPATIAL] = log2p(t->spatial),
      [HETC_FEATURE_FIELD_REDUCTION] = log2p(t->reduction),
      [HETC_FEATURE_FIELD_BYTES_IN] = log2p(4 * t->in),
      [HETC_FEATURE_FIELD_BYTES_WEIGHT] = log2p(4 * t->weight),
      [HETC_FEATURE_FIELD_BYTES_OUT] = log2p(4 * t->out),
      [HETC_FEATURE_FIELD_REUSE_IN] = t->in > 0 ? log2p(macs / t->in) : NAN,
      [HETC_FEATURE_FIELD_REUSE_WEIGHT] = t->weight > 0 ? log2p(macs / t->weight) : NAN,
      [HETC_FEATURE_FIELD_INTENSITY] = bytes > 0 ? log2p(2 * macs / bytes) : NAN,
  };
  for (int32_t f = 0; f < HETC_FEATURE_FIELD_COUNT; ++f)
    put(out, capacity, HETC_FEATURE_AT_LEVEL(level, f), v[f]);
}

/* Input extent a window of `count` outputs reads along one axis. */
static double span(double count, double stride, double taps, double dilation, double limit) {
  const double s = (count - 1) * stride + (taps - 1) * dilation + 1;
  return s < limit ? s : limit;
}

void exc_direct_features(const hetc_plugin_workload_t *wl, const exc_direct_config_t *cfg,
                         float *out, int32_t capacity) {
  const shape_t s = shape_of(wl);
  const double IK = (double)cfg->tile_k[1], IX = (double)cfg->tile_x[1];
  const double R = (double)(s.CG * s.KH * s.KW); /* multiply-adds per output */
  const double rows_in = span(1, (double)s.SH, (double)s.KH, (double)s.DH, (double)s.H);
  const tile_t reg = {IK * IX, R, R * IX, R * IK, IK * IX};
  const tile_t cache = {IK * IX, R,
                        (double)s.CG * rows_in *
                            span(IX, (double)s.SW, (double)s.KW, (double)s.DW, (double)s.W),
                        R * IK, IK * IX};
  const tile_t block = {IK * (double)s.OW, R,
                        (double)s.CG * rows_in *
                            span((double)s.OW, (double)s.SW, (double)s.KW, (double)s.DW,
                                 (double)s.W),
                        R * IK, IK * (double)s.OW};
  const double outputs = (double)(s.N * s.K * s.OH * s.OW);
  const tile_t grid = {outputs, R, (double)(s.N * s.C * s.H * s.W), (double)s.K * R, outputs};
  put_level(out, capacity, HETC_FEATURE_LEVEL_REGISTER, &reg);
  put_level(out, capacity, HETC_FEATURE_LEVEL_CACHE, &cache);
  put_level(out, capacity, HETC_FEATURE_LEVEL_BLOCK, &block);
  put_level(out, capacity, HETC_FEATURE_LEVEL_GRID, &grid);
  put(out, capacity, HETC_FEATURE_EXEC_FLOPS, log2p(2 * outputs * R));
  put(out, capacity, HETC_FEATURE_VECTOR_WIDTH, 1.0f); /* scalar C */
  put(out, capacity, HETC_FEATURE_UNROLL, log2p(IK * IX));
  put(out, capacity, HETC_FEATURE_INNER_LOOP, log2p(IX));
  put(out, capacity, HETC_FEATURE_PARALLEL_UNITS,
      log2p((double)(s.N * s.G * cfg->tile_k[0] * s.OH)));
  put(out, capacity, HETC_FEATURE_THREADS_PER_GROUP, log2p(1));
  const int depthwise = s.G > 1 && s.G == s.C && s.G == s.K;
  for (int32_t i = HETC_FEATURE_ALGO_DIRECT; i <= HETC_FEATURE_ALGO_OTHER; ++i)
    put(out, capacity, i,
        i == (depthwise ? HETC_FEATURE_ALGO_DEPTHWISE : HETC_FEATURE_ALGO_DIRECT) ? 1.0f : 0.0f);
  put(out, capacity, HETC_FEATURE_LAYOUT_NCHW, 1.0f);
  put(out, capacity, HETC_FEATURE_LAYOUT_NHWC, 0.0f);
  put(out, capacity, HETC_FEATURE_LAYOUT_NCHWC, 0.0f);
}
#endif
