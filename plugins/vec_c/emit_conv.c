/* conv2d templates: plain NCHW direct convolution and NCHW[x]c direct
 * convolution with the innermost loop over the output channel block.
 *
 * Both emit one body over fixed shapes (every extent is a constant the
 * compiler sees) for a range of the fused coarse axis, which the entry
 * runs through the caller's parallel_for (emit.c), the epilogue (bias,
 * residual, activation) applied while the output is written. Padding never
 * appears as a test in the innermost loop: the valid output column range
 * of each kernel column is precomputed (OWLO/OWHI), rows are skipped at the
 * kh level. */
#include <stdio.h>
#include <string.h>

#include "vec.h"

typedef struct conv_geom_t {
  int64_t N, C, H, W, K, OH, OW, KH, KW, SH, SW, PT, PL, DH, DW, G;
  int64_t lo[64], hi[64]; /* valid ow range per kw (KW <= 64 here) */
  int64_t *lo_big, *hi_big;
} conv_geom_t;

static int64_t floor_div(int64_t a, int64_t b) {
  return a >= 0 ? a / b : -((-a + b - 1) / b);
}

static int64_t ceil_div_signed(int64_t a, int64_t b) { return -floor_div(-a, b); }

/* Output columns ow with 0 <= ow*SW + kw*DW - PL < W. */
static void ow_range(const conv_geom_t *g, int64_t kw, int64_t *lo,
                     int64_t *hi) {
  int64_t l = ceil_div_signed(g->PL - kw * g->DW, g->SW);
  int64_t h = floor_div(g->W - 1 + g->PL - kw * g->DW, g->SW) + 1;
  if (l < 0) l = 0;
  if (h > g->OW) h = g->OW;
  if (h < l) h = l;
  *lo = l;
  *hi = h;
}

/* Kernel rows with a valid input row for output row oh. */
static int64_t valid_rows(const conv_geom_t *g, int64_t oh) {
  int64_t count = 0;
  for (int64_t kh = 0; kh < g->KH; ++kh) {
    int64_t ih = oh * g->SH + kh * g->DH - g->PT;
    count += ih >= 0 && ih < g->H;
  }
  return count;
}

static hetc_plugin_status_t geom_init(const hetc_plugin_workload_t *wl,
                                      conv_geom_t *g) {
  memset(g, 0, sizeof(*g));
  const int64_t *in = wl->inputs[0].shape, *out = wl->output.shape;
  g->N = in[0];
  g->C = in[1];
  g->H = in[2];
  g->W = in[3];
  g->K = out[1];
  g->OH = out[2];
  g->OW = out[3];
  g->KH = wl->kernel[0];
  g->KW = wl->kernel[1];
  g->SH = wl->strides[0];
  g->SW = wl->strides[1];
  g->PT = wl->padding[0];
  g->PL = wl->padding[1];
  g->DH = wl->dilation[0];
  g->DW = wl->dilation[1];
  g->G = wl->groups;
  if (g->KW > 64)
    return vec_status(HETC_PLUGIN_STATUS_UNSUPPORTED,
                      "vec: conv2d kernel width %lld above 64", (long long)g->KW);
  for (int64_t kw = 0; kw < g->KW; ++kw) ow_range(g, kw, &g->lo[kw], &g->hi[kw]);
  return NULL;
}

/* Sum over output rows of valid kernel rows, and over kw of valid columns. */
static double sum_valid_rows(const conv_geom_t *g) {
  double total = 0;
  for (int64_t oh = 0; oh < g->OH; ++oh) total += (double)valid_rows(g, oh);
  return total;
}

/* Multiply-adds of the whole convolution, each output reading `per_output`
 * channels (for the grain of the parallel loop). */
static double conv_macs(const conv_geom_t *g, int64_t per_output) {
  return (double)g->N * (double)g->K * (double)g->OH * (double)g->OW * (double)per_output *
         (double)g->KH * (double)g->KW;
}

static void emit_consts(hpc_strbuf_t *s, const conv_geom_t *g) {
  hpc_strbuf_line(s, 1,
                  "const long N = %lld, C = %lld, H = %lld, W = %lld, K = %lld,"
                  " OH = %lld, OW = %lld;",
                  (long long)g->N, (long long)g->C, (long long)g->H,
                  (long long)g->W, (long long)g->K, (long long)g->OH,
                  (long long)g->OW);
  hpc_strbuf_line(s, 1,
                  "const long KH = %lld, KW = %lld, SH = %lld, SW = %lld,"
                  " DH = %lld, DW = %lld, PT = %lld, PL = %lld;",
                  (long long)g->KH, (long long)g->KW, (long long)g->SH,
                  (long long)g->SW, (long long)g->DH, (long long)g->DW,
                  (long long)g->PT, (long long)g->PL);
}

static void emit_ow_tables(hpc_strbuf_t *s, const conv_geom_t *g) {
  hpc_strbuf_printf(s, "  /* valid output columns [OWLO[kw], OWHI[kw]) per "
                       "kernel column */\n  static const long OWLO[%lld] = {",
                    (long long)g->KW);
  for (int64_t kw = 0; kw < g->KW; ++kw)
    hpc_strbuf_printf(s, "%s%lld", kw ? ", " : "", (long long)g->lo[kw]);
  hpc_strbuf_printf(s, "};\n  static const long OWHI[%lld] = {", (long long)g->KW);
  for (int64_t kw = 0; kw < g->KW; ++kw)
    hpc_strbuf_printf(s, "%s%lld", kw ? ", " : "", (long long)g->hi[kw]);
  hpc_strbuf_printf(s, "};\n");
  hpc_strbuf_line(s, 1, "(void)OWLO; (void)OWHI;");
}

/* The parallel loop head: t over the body's range [t0, t1) of N*OUTER
 * (parallel 0) or N*OUTER*OH (parallel 1), decomposed into n, `outer` and
 * (for 1) oh. Returns the indent of the body. */
static int emit_parallel_head(hpc_strbuf_t *s, int64_t parallel,
                              const char *outer, const char *outer_count) {
  if (parallel) {
    hpc_strbuf_line(s, 1, "for (long t = t0; t < t1; ++t) {");
    hpc_strbuf_line(s, 2, "const long n = t / (%s * OH), %s = (t / OH) %% %s, oh = t %% OH;",
                    outer_count, outer, outer_count);
    return 2;
  }
  hpc_strbuf_line(s, 1, "for (long t = t0; t < t1; ++t) {");
  hpc_strbuf_line(s, 2, "const long n = t / %s, %s = t %% %s;", outer_count, outer,
                  outer_count);
  return 2;
}

static int has_epilogue(const hetc_plugin_workload_t *wl) {
  return wl->epilogue.has_bias || wl->epilogue.has_residual ||
         wl->epilogue.activation != HETC_PLUGIN_ACT_NONE;
}

/* Argument names and indices: in, [res], wt, [bias], out. */
static void emit_conv_args(vec_emit_t *e) {
  const hetc_plugin_epilogue_t *ep = &e->wl->epilogue;
  int index = 0;
  vec_emit_arg(e, "in", index++, 0);
  if (ep->has_residual) vec_emit_arg(e, "res", index++, 0);
  vec_emit_arg(e, "wt", index++, 0);
  if (ep->has_bias) vec_emit_arg(e, "bias", index++, 0);
  vec_emit_arg(e, "out", index++, 1);
}

/* ------------------------------------------------------------------------ */
/* NCHW                                                                     */
/* ------------------------------------------------------------------------ */

/* One kernel column (kw given, or "kw" for the rolled loop) of the row
 * nest: orow[ow] += irow[ow*SW + kw*DW - PL] * w. */
static void emit_nchw_row_tap(hpc_strbuf_t *s, int ind, const conv_geom_t *g,
                              int64_t kw) {
  if (kw < 0) {
    hpc_strbuf_line(s, ind, "for (long kw = 0; kw < KW; ++kw) {");
    hpc_strbuf_line(s, ind + 1, "const float wv = wr[kw];");
    hpc_strbuf_line(s, ind + 1, "const long base = kw * DW - PL;");
    hpc_strbuf_line(s, ind + 1, "for (long ow = OWLO[kw]; ow < OWHI[kw]; ++ow)");
    hpc_strbuf_line(s, ind + 2, "orow[ow] += irow[base + ow * SW] * wv;");
    hpc_strbuf_line(s, ind, "}");
    return;
  }
  if (g->lo[kw] >= g->hi[kw]) return; /* this column never meets the input */
  hpc_strbuf_line(s, ind, "{ /* kw = %lld */", (long long)kw);
  hpc_strbuf_line(s, ind + 1, "const float wv = wr[%lld];", (long long)kw);
  hpc_strbuf_line(s, ind + 1, "for (long ow = %lld; ow < %lld; ++ow)",
                  (long long)g->lo[kw], (long long)g->hi[kw]);
  hpc_strbuf_line(s, ind + 2, "orow[ow] += irow[%lld + ow * SW] * wv;",
                  (long long)(kw * g->DW - g->PL));
  hpc_strbuf_line(s, ind, "}");
}

hetc_plugin_status_t vec_emit_conv_nchw(vec_emit_t *e) {
  const hetc_plugin_workload_t *wl = e->wl;
  const hetc_plugin_epilogue_t *ep = &wl->epilogue;
  conv_geom_t g;
  hetc_plugin_status_t st = geom_init(wl, &g);
  if (st) return st;
  const int64_t CG = g.C / g.G, KG = g.K / g.G;
  const int unroll = e->cfg.unroll_kw != 0;
  const int row = e->cfg.reorder == 0;

  e->num_inputs = wl->num_inputs;
  for (int32_t i = 0; i < wl->num_inputs; ++i)
    e->input_layouts[i] = hetc_kit_layout_row_major();
  e->output_layout = hetc_kit_layout_row_major();
  e->num_params = 1 + ep->has_bias;
  e->param_bytes[0] = (uint64_t)(g.K * CG * g.KH * g.KW) * 4;
  e->param_bytes[1] = ep->has_bias ? (uint64_t)g.K * 4 : 0;

  hpc_strbuf_t *s = &e->src;
  vec_emit_preamble(e, ep->activation);
  vec_emit_body_open(e);
  emit_conv_args(e);
  emit_consts(s, &g);
  hpc_strbuf_line(s, 1, "const long CG = %lld, KG = %lld; /* per group */",
                  (long long)CG, (long long)KG);
  hpc_strbuf_line(s, 1, "(void)N; (void)DW; (void)PL;");
  if (row && !unroll) emit_ow_tables(s, &g);
  int ind = emit_parallel_head(s, e->cfg.parallel, "k", "K");
  hpc_strbuf_line(s, ind, "const long g = k / KG;");
  hpc_strbuf_line(s, ind, "const float *restrict wk = wt + k * CG * KH * KW;");
  if (!e->cfg.parallel) {
    hpc_strbuf_line(s, ind, "for (long oh = 0; oh < OH; ++oh) {");
    ++ind;
  }
  hpc_strbuf_line(s, ind, "float *restrict orow = out + ((n * K + k) * OH + oh) * OW;");
  if (ep->has_residual)
    hpc_strbuf_line(s, ind,
                    "const float *restrict rrow = res + ((n * K + k) * OH + oh) * OW;");
  char value[160];
  snprintf(value, sizeof(value), "%s%s%s", row ? "orow[ow]" : "acc",
           ep->has_bias ? " + bias[k]" : "", ep->has_residual ? " + rrow[ow]" : "");
  const char *act = ep->activation != HETC_PLUGIN_ACT_NONE ? "act(v)" : "v";

  const double rows = (double)g.N * (double)g.K;
  const double taps_rows = sum_valid_rows(&g); /* sum over oh of valid kh */
  if (row) {
    /* c, kh, kw, ow: the whole output row accumulates in place. */
    hpc_strbuf_line(s, ind, "for (long ow = 0; ow < OW; ++ow) orow[ow] = 0.f;");
    hpc_strbuf_line(s, ind, "for (long c = 0; c < CG; ++c) {");
    hpc_strbuf_line(s, ind + 1,
                    "const float *restrict ic = in + (n * C + g * CG + c) * H * W;");
    hpc_strbuf_line(s, ind + 1, "for (long kh = 0; kh < KH; ++kh) {");
    hpc_strbuf_line(s, ind + 2, "const long ih = oh * SH + kh * DH - PT;");
    hpc_strbuf_line(s, ind + 2, "if (ih < 0 || ih >= H) continue;");
    hpc_strbuf_line(s, ind + 2, "const float *restrict irow = ic + ih * W;");
    hpc_strbuf_line(s, ind + 2, "const float *restrict wr = wk + (c * KH + kh) * KW;");
    if (unroll)
      for (int64_t kw = 0; kw < g.KW; ++kw) emit_nchw_row_tap(s, ind + 2, &g, kw);
    else
      emit_nchw_row_tap(s, ind + 2, &g, -1);
    hpc_strbuf_line(s, ind + 1, "}");
    hpc_strbuf_line(s, ind, "}");
    if (has_epilogue(wl)) {
      hpc_strbuf_line(s, ind, "for (long ow = 0; ow < OW; ++ow) {");
      hpc_strbuf_line(s, ind + 1, "const float v = %s;", value);
      hpc_strbuf_line(s, ind + 1, "orow[ow] = %s;", act);
      hpc_strbuf_line(s, ind, "}");
    }
    vec_emit_stat(e, (double)g.OW, rows * (double)g.OH * (has_epilogue(wl) ? 2 : 1));
    for (int64_t kw = 0; kw < g.KW; ++kw)
      vec_emit_stat(e, (double)(g.hi[kw] - g.lo[kw]), rows * (double)CG * taps_rows);
  } else {
    /* ow, c, kh, kw: the canonical seven-loop nest, one accumulator. */
    hpc_strbuf_line(s, ind, "for (long ow = 0; ow < OW; ++ow) {");
    hpc_strbuf_line(s, ind + 1, "float acc = 0.f;");
    hpc_strbuf_line(s, ind + 1, "for (long c = 0; c < CG; ++c) {");
    hpc_strbuf_line(s, ind + 2,
                    "const float *restrict ic = in + (n * C + g * CG + c) * H * W;");
    hpc_strbuf_line(s, ind + 2, "for (long kh = 0; kh < KH; ++kh) {");
    hpc_strbuf_line(s, ind + 3, "const long ih = oh * SH + kh * DH - PT;");
    hpc_strbuf_line(s, ind + 3, "if (ih < 0 || ih >= H) continue;");
    hpc_strbuf_line(s, ind + 3, "const float *restrict irow = ic + ih * W;");
    hpc_strbuf_line(s, ind + 3, "const float *restrict wr = wk + (c * KH + kh) * KW;");
    if (unroll) {
      for (int64_t kw = 0; kw < g.KW; ++kw) {
        hpc_strbuf_line(s, ind + 3, "{ const long iw = ow * SW + %lld;",
                        (long long)(kw * g.DW - g.PL));
        hpc_strbuf_line(s, ind + 4, "if (iw >= 0 && iw < W) acc += irow[iw] * wr[%lld]; }",
                        (long long)kw);
      }
    } else {
      hpc_strbuf_line(s, ind + 3, "for (long kw = 0; kw < KW; ++kw) {");
      hpc_strbuf_line(s, ind + 4, "const long iw = ow * SW + kw * DW - PL;");
      hpc_strbuf_line(s, ind + 4, "if (iw >= 0 && iw < W) acc += irow[iw] * wr[kw];");
      hpc_strbuf_line(s, ind + 3, "}");
    }
    hpc_strbuf_line(s, ind + 2, "}");
    hpc_strbuf_line(s, ind + 1, "}");
    hpc_strbuf_line(s, ind + 1, "const float v = %s;", value);
    hpc_strbuf_line(s, ind + 1, "orow[ow] = %s;", act);
    hpc_strbuf_line(s, ind, "}");
    /* Innermost loop: kw, or kh once kw is unrolled. */
    double execs = rows * (double)g.OW * (double)CG;
    if (unroll)
      vec_emit_stat(e, (double)g.KH, execs * (double)g.OH);
    else
      vec_emit_stat(e, (double)g.KW, execs * taps_rows);
  }
  if (!e->cfg.parallel) hpc_strbuf_line(s, --ind, "}");
  hpc_strbuf_line(s, 1, "}");
  const int64_t count = g.N * g.K * (e->cfg.parallel ? g.OH : 1);
  vec_emit_body_close(e, count, conv_macs(&g, CG) / (double)count);
  return NULL;
}

/* ------------------------------------------------------------------------ */
/* NCHW[x]c                                                                 */
/* ------------------------------------------------------------------------ */

/* Output columns per accumulator tile: at most 2048 floats (8 KiB) of
 * accumulators, tiles balanced over OW. */
int64_t vec_conv_ow_tile(int64_t OW, int64_t block) {
  int64_t max_tile = 2048 / block;
  if (max_tile < 1) max_tile = 1;
  int64_t tiles = hetc_kit_ceil_div(OW, max_tile);
  return hetc_kit_ceil_div(OW, tiles);
}

/* Loop orders of the NCHWc reduction nest (groups == 1): permutations of
 * the axes icb (input channel block), kh, kw, ic (channel within the block)
 * and ow (output column in the accumulator tile); the loop over the output
 * channel block, oc, is always innermost. Index = the "reorder" knob. */
enum { AX_ICB = 0, AX_KH, AX_KW, AX_IC, AX_OW, NUM_AXES };
static const int32_t nchwc_orders[][NUM_AXES] = {
    {AX_ICB, AX_KH, AX_KW, AX_IC, AX_OW}, /* 0: channel blocks outermost */
    {AX_KH, AX_KW, AX_ICB, AX_IC, AX_OW}, /* 1: kernel taps outermost */
    {AX_KH, AX_ICB, AX_KW, AX_IC, AX_OW}, /* 2: kh, blocks, kw */
    {AX_ICB, AX_KH, AX_KW, AX_OW, AX_IC}, /* 3: a pixel's accumulators stay
                                             hot over the block's ic */
    {AX_OW, AX_ICB, AX_KH, AX_KW, AX_IC}, /* 4: output stationary: one
                                             pixel's whole reduction */
};
#define NUM_NCHWC_ORDERS ((int32_t)(sizeof(nchwc_orders) / sizeof(nchwc_orders[0])))

int32_t vec_conv_nchwc_orders(int32_t *out_perms, int32_t capacity_rows) {
  for (int32_t p = 0; p < NUM_NCHWC_ORDERS && p < capacity_rows; ++p)
    memcpy(out_perms + p * NUM_AXES, nchwc_orders[p], sizeof(nchwc_orders[p]));
  return NUM_NCHWC_ORDERS;
}

typedef struct nest_t {
  hpc_strbuf_t *s;
  const conv_geom_t *g;
  const int32_t *order;
  int unroll;      /* kw loop unrolled */
  int partial_ic;  /* the last input channel block is partial (icn) */
  int placed[NUM_AXES];
  int64_t kw;      /* the unrolled kw value, or -1 */
} nest_t;

static void kw_text(const nest_t *t, char *buf, size_t size) {
  if (t->kw >= 0)
    snprintf(buf, size, "%lld", (long long)t->kw);
  else
    snprintf(buf, size, "kw");
}

static void emit_nest(nest_t *t, int level, int ind);

/* Opens the loop of one axis, recurses, closes it. */
static void emit_nest(nest_t *t, int level, int ind) {
  hpc_strbuf_t *s = t->s;
  const conv_geom_t *g = t->g;
  char kw[32];
  if (level == NUM_AXES) {
    kw_text(t, kw, sizeof(kw));
    hpc_strbuf_line(s, ind,
                    "const float x = in[(((n * ICB + icb) * H + ih) * W + ow * SW + %s * DW - PL)"
                    " * ICBN + ic];",
                    kw);
    hpc_strbuf_line(s, ind,
                    "const float *restrict wv = wt + ((((ocb * ICB + icb) * KH + kh) * KW + %s)"
                    " * ICBN + ic) * OCBN;",
                    kw);
    hpc_strbuf_line(s, 0, "#pragma omp simd");
    hpc_strbuf_line(s, ind, "for (long oc = 0; oc < OCBN; ++oc) a[oc] += x * wv[oc];");
    return;
  }
  const int axis = t->order[level];
  switch (axis) {
    case AX_ICB:
      hpc_strbuf_line(s, ind, "for (long icb = 0; icb < ICB; ++icb) {");
      if (t->partial_ic)
        hpc_strbuf_line(s, ind + 1, "const long icn = icb == ICB - 1 ? ICL : ICBN;");
      break;
    case AX_KH:
      hpc_strbuf_line(s, ind, "for (long kh = 0; kh < KH; ++kh) {");
      hpc_strbuf_line(s, ind + 1, "const long ih = oh * SH + kh * DH - PT;");
      hpc_strbuf_line(s, ind + 1, "if (ih < 0 || ih >= H) continue;");
      break;
    case AX_IC:
      hpc_strbuf_line(s, ind, "for (long ic = 0; ic < %s; ++ic) {",
                      t->partial_ic ? "icn" : "ICBN");
      break;
    case AX_KW:
      if (t->unroll) {
        t->placed[AX_KW] = 1;
        for (int64_t k = 0; k < g->KW; ++k) {
          /* A column no output of this row ever reads is left out. */
          if (g->lo[k] >= g->hi[k]) continue;
          t->kw = k;
          hpc_strbuf_line(s, ind, "{ /* kw = %lld */", (long long)k);
          if (t->placed[AX_OW]) {
            hpc_strbuf_line(s, ind + 1, "const long iw = ow * SW + %lld;",
                            (long long)(k * g->DW - g->PL));
            hpc_strbuf_line(s, ind + 1, "if (iw >= 0 && iw < W) {");
            emit_nest(t, level + 1, ind + 2);
            hpc_strbuf_line(s, ind + 1, "}");
          } else {
            emit_nest(t, level + 1, ind + 1);
          }
          hpc_strbuf_line(s, ind, "}");
        }
        t->kw = -1;
        t->placed[AX_KW] = 0;
        return;
      }
      hpc_strbuf_line(s, ind, "for (long kw = 0; kw < KW; ++kw) {");
      if (t->placed[AX_OW]) {
        hpc_strbuf_line(s, ind + 1, "const long iw = ow * SW + kw * DW - PL;");
        hpc_strbuf_line(s, ind + 1, "if (iw < 0 || iw >= W) continue;");
      }
      break;
    case AX_OW:
      if (t->placed[AX_KW]) {
        /* Only the columns whose input exists for this kw. */
        kw_text(t, kw, sizeof(kw));
        if (t->kw >= 0)
          hpc_strbuf_line(s, ind, "for (long ow = %lld > ow0 ? %lld : ow0, owh = %lld < owe ? %lld : owe;"
                          " ow < owh; ++ow) {",
                          (long long)g->lo[t->kw], (long long)g->lo[t->kw],
                          (long long)g->hi[t->kw], (long long)g->hi[t->kw]);
        else
          hpc_strbuf_line(s, ind,
                          "for (long ow = OWLO[kw] > ow0 ? OWLO[kw] : ow0, owh = OWHI[kw] < owe ? "
                          "OWHI[kw] : owe; ow < owh; ++ow) {");
      } else {
        hpc_strbuf_line(s, ind, "for (long ow = ow0; ow < owe; ++ow) {");
      }
      hpc_strbuf_line(s, ind + 1, "float *restrict a = acc + (ow - ow0) * OCBN;");
      break;
    default: return;
  }
  t->placed[axis] = 1;
  emit_nest(t, level + 1, ind + 1);
  t->placed[axis] = 0;
  hpc_strbuf_line(s, ind, "}");
}

/* Depthwise, taps outside pixels (order 0): for one (kh, kw). */
static void emit_dw_tap(hpc_strbuf_t *s, int ind, const conv_geom_t *g,
                        int64_t kw) {
  char kws[32];
  if (kw < 0) {
    snprintf(kws, sizeof(kws), "kw");
  } else {
    if (g->lo[kw] >= g->hi[kw]) return;
    snprintf(kws, sizeof(kws), "%lld", (long long)kw);
  }
  hpc_strbuf_line(s, ind, "{ /* kw = %s */", kws);
  ++ind;
  if (kw < 0) {
    hpc_strbuf_line(s, ind, "const long lo = OWLO[kw] > ow0 ? OWLO[kw] : ow0;");
    hpc_strbuf_line(s, ind, "const long hi = OWHI[kw] < owe ? OWHI[kw] : owe;");
  } else {
    hpc_strbuf_line(s, ind, "const long lo = %lld > ow0 ? %lld : ow0;",
                    (long long)g->lo[kw], (long long)g->lo[kw]);
    hpc_strbuf_line(s, ind, "const long hi = %lld < owe ? %lld : owe;",
                    (long long)g->hi[kw], (long long)g->hi[kw]);
  }
  hpc_strbuf_line(s, ind, "const float *restrict wv = wt + ((cb * KH + kh) * KW + %s) * BN;",
                  kws);
  hpc_strbuf_line(s, ind, "for (long ow = lo; ow < hi; ++ow) {");
  hpc_strbuf_line(s, ind + 1,
                  "const float *restrict x = in + (rbase + ow * SW + %s * DW - PL) * BN;",
                  kws);
  hpc_strbuf_line(s, ind + 1, "float *restrict a = acc + (ow - ow0) * BN;");
  hpc_strbuf_line(s, 0, "#pragma omp simd");
  hpc_strbuf_line(s, ind + 1, "for (long c = 0; c < BN; ++c) a[c] += x[c] * wv[c];");
  hpc_strbuf_line(s, ind, "}");
  hpc_strbuf_line(s, ind - 1, "}");
}

/* Depthwise, pixels outside taps (order 1): one (kh, kw) for pixel ow. */
static void emit_dw_pixel_tap(hpc_strbuf_t *s, int ind, const conv_geom_t *g,
                              int64_t kw) {
  char kws[32];
  if (kw < 0)
    snprintf(kws, sizeof(kws), "kw");
  else
    snprintf(kws, sizeof(kws), "%lld", (long long)kw);
  hpc_strbuf_line(s, ind, "{ /* kw = %s */", kws);
  hpc_strbuf_line(s, ind + 1, "const long iw = ow * SW + %s * DW - PL;", kws);
  hpc_strbuf_line(s, ind + 1, "if (iw >= 0 && iw < W) {");
  hpc_strbuf_line(s, ind + 2, "const float *restrict x = in + (rbase + iw) * BN;");
  hpc_strbuf_line(s, ind + 2,
                  "const float *restrict wv = wt + ((cb * KH + kh) * KW + %s) * BN;", kws);
  hpc_strbuf_line(s, 0, "#pragma omp simd");
  hpc_strbuf_line(s, ind + 2, "for (long c = 0; c < BN; ++c) a[c] += x[c] * wv[c];");
  hpc_strbuf_line(s, ind + 1, "}");
  hpc_strbuf_line(s, ind, "}");
  (void)g;
}

/* Writes the accumulator tile through the epilogue; zeroes padding lanes
 * of the last channel block. */
static void emit_nchwc_epilogue(vec_emit_t *e, int ind, const char *block,
                                const char *outer, const char *blocks,
                                int64_t channels, int64_t bn) {
  hpc_strbuf_t *s = &e->src;
  const hetc_plugin_epilogue_t *ep = &e->wl->epilogue;
  hpc_strbuf_line(s, ind, "{");
  ++ind;
  hpc_strbuf_line(s, ind, "const long obase = ((n * %s + %s) * OH + oh) * OW * %s;",
                  blocks, outer, block);
  hpc_strbuf_line(s, ind, "float *restrict op = out + obase;");
  if (ep->has_residual) hpc_strbuf_line(s, ind, "const float *restrict rp = res + obase;");
  if (ep->has_bias)
    hpc_strbuf_line(s, ind, "const float *restrict bp = bias + %s * %s;", outer, block);
  hpc_strbuf_line(s, ind, "for (long ow = ow0; ow < owe; ++ow) {");
  hpc_strbuf_line(s, ind + 1, "const float *restrict a = acc + (ow - ow0) * %s;", block);
  hpc_strbuf_line(s, 0, "#pragma omp simd");
  hpc_strbuf_line(s, ind + 1, "for (long oc = 0; oc < %s; ++oc) {", block);
  hpc_strbuf_line(s, ind + 2, "const float v = a[oc]%s%s;", ep->has_bias ? " + bp[oc]" : "",
                  ep->has_residual ? " + rp[ow * OCBN + oc]" : "");
  hpc_strbuf_line(s, ind + 2, "op[ow * %s + oc] = %s;", block,
                  ep->activation != HETC_PLUGIN_ACT_NONE ? "act(v)" : "v");
  hpc_strbuf_line(s, ind + 1, "}");
  int64_t last = channels - (hetc_kit_ceil_div(channels, bn) - 1) * bn;
  if (last != bn) {
    hpc_strbuf_line(s, ind + 1, "if (%s == %s - 1) /* padding channels stay zero */",
                    outer, blocks);
    hpc_strbuf_line(s, ind + 2, "for (long oc = %lld; oc < %s; ++oc) op[ow * %s + oc] = 0.f;",
                    (long long)last, block, block);
  }
  hpc_strbuf_line(s, ind, "}");
  hpc_strbuf_line(s, ind - 1, "}");
  double pixels = (double)e->wl->output.shape[0] * (double)e->wl->output.shape[2] *
                  (double)e->wl->output.shape[3];
  vec_emit_stat(e, (double)bn, pixels * (double)hetc_kit_ceil_div(channels, bn));
  if (last != bn) vec_emit_stat(e, (double)(bn - last), pixels);
}

static void emit_acc_tile_head(hpc_strbuf_t *s, int ind, const char *block) {
  hpc_strbuf_line(s, ind, "for (long ow0 = 0; ow0 < OW; ow0 += OWT) {");
  hpc_strbuf_line(s, ind + 1, "const long owe = ow0 + OWT < OW ? ow0 + OWT : OW;");
  hpc_strbuf_line(s, ind + 1, "for (long ow = 0; ow < owe - ow0; ++ow)");
  hpc_strbuf_line(s, 0, "#pragma omp simd");
  hpc_strbuf_line(s, ind + 2, "for (long oc = 0; oc < %s; ++oc) acc[ow * %s + oc] = 0.f;",
                  block, block);
}

hetc_plugin_status_t vec_emit_conv_nchwc(vec_emit_t *e) {
  const hetc_plugin_workload_t *wl = e->wl;
  const hetc_plugin_epilogue_t *ep = &wl->epilogue;
  conv_geom_t g;
  hetc_plugin_status_t st = geom_init(wl, &g);
  if (st) return st;
  const int depthwise = hetc_kit_conv_is_depthwise(wl);
  if (!hpc_conv_nchwc_applicable(wl))
    return vec_status(HETC_PLUGIN_STATUS_UNSUPPORTED,
                      "vec: vec_conv2d_nchwc needs groups == 1 or depthwise");
  const int64_t ICBN = e->cfg.tile_ic, OCBN = e->cfg.tile_oc;
  const int64_t ICB = hetc_kit_ceil_div(g.C, ICBN), OCB = hetc_kit_ceil_div(g.K, OCBN);
  const int64_t ICL = g.C - (ICB - 1) * ICBN;
  const int64_t OWT = vec_conv_ow_tile(g.OW, OCBN);
  const int unroll = e->cfg.unroll_kw != 0;

  e->num_inputs = wl->num_inputs;
  e->input_layouts[0] = hetc_kit_layout_nchwc(ICBN);
  if (ep->has_residual) e->input_layouts[1] = hetc_kit_layout_nchwc(OCBN);
  e->output_layout = hetc_kit_layout_nchwc(OCBN);
  e->num_params = 1 + ep->has_bias;
  e->param_bytes[0] =
      depthwise ? (uint64_t)(OCB * g.KH * g.KW * OCBN) * 4
                : (uint64_t)(OCB * ICB * g.KH * g.KW * ICBN * OCBN) * 4;
  e->param_bytes[1] = ep->has_bias ? (uint64_t)(OCB * OCBN) * 4 : 0;

  hpc_strbuf_t *s = &e->src;
  vec_emit_preamble(e, ep->activation);
  vec_emit_body_open(e);
  emit_conv_args(e);
  emit_consts(s, &g);
  hpc_strbuf_line(s, 1,
                  "const long ICBN = %lld, OCBN = %lld, ICB = %lld, OCB = %lld, ICL = %lld,"
                  " OWT = %lld;",
                  (long long)ICBN, (long long)OCBN, (long long)ICB, (long long)OCB,
                  (long long)ICL, (long long)OWT);
  hpc_strbuf_line(s, 1, "(void)N; (void)ICB; (void)ICL; (void)ICBN; (void)C; (void)K;");
  if (!unroll) emit_ow_tables(s, &g);
  const double pixels_rows = (double)g.N * (double)OCB; /* per output row */
  const double taps_rows = sum_valid_rows(&g);
  double valid_cols = 0;
  for (int64_t kw = 0; kw < g.KW; ++kw) valid_cols += (double)(g.hi[kw] - g.lo[kw]);

  if (depthwise) {
    hpc_strbuf_line(s, 1, "const long CB = OCB, BN = OCBN;");
    int ind = emit_parallel_head(s, e->cfg.parallel, "cb", "CB");
    hpc_strbuf_line(s, ind, "const long ocb = cb; (void)ocb;");
    hpc_strbuf_line(s, ind, "float acc[%lld];", (long long)(OWT * OCBN));
    if (!e->cfg.parallel) {
      hpc_strbuf_line(s, ind, "for (long oh = 0; oh < OH; ++oh) {");
      ++ind;
    }
    emit_acc_tile_head(s, ind, "BN");
    ++ind;
    if (e->cfg.reorder == 0) {
      hpc_strbuf_line(s, ind, "for (long kh = 0; kh < KH; ++kh) {");
      hpc_strbuf_line(s, ind + 1, "const long ih = oh * SH + kh * DH - PT;");
      hpc_strbuf_line(s, ind + 1, "if (ih < 0 || ih >= H) continue;");
      hpc_strbuf_line(s, ind + 1, "const long rbase = (n * CB + cb) * H * W + ih * W;");
      if (unroll) {
        for (int64_t kw = 0; kw < g.KW; ++kw) emit_dw_tap(s, ind + 1, &g, kw);
      } else {
        hpc_strbuf_line(s, ind + 1, "for (long kw = 0; kw < KW; ++kw)");
        emit_dw_tap(s, ind + 2, &g, -1);
      }
      hpc_strbuf_line(s, ind, "}");
    } else {
      hpc_strbuf_line(s, ind, "for (long ow = ow0; ow < owe; ++ow) {");
      hpc_strbuf_line(s, ind + 1, "float *restrict a = acc + (ow - ow0) * BN;");
      hpc_strbuf_line(s, ind + 1, "for (long kh = 0; kh < KH; ++kh) {");
      hpc_strbuf_line(s, ind + 2, "const long ih = oh * SH + kh * DH - PT;");
      hpc_strbuf_line(s, ind + 2, "if (ih < 0 || ih >= H) continue;");
      hpc_strbuf_line(s, ind + 2, "const long rbase = (n * CB + cb) * H * W + ih * W;");
      if (unroll) {
        for (int64_t kw = 0; kw < g.KW; ++kw) emit_dw_pixel_tap(s, ind + 2, &g, kw);
      } else {
        hpc_strbuf_line(s, ind + 2, "for (long kw = 0; kw < KW; ++kw)");
        emit_dw_pixel_tap(s, ind + 3, &g, -1);
      }
      hpc_strbuf_line(s, ind + 1, "}");
      hpc_strbuf_line(s, ind, "}");
    }
    vec_emit_stat(e, (double)OCBN, pixels_rows * taps_rows * valid_cols);
    vec_emit_stat(e, (double)OCBN, pixels_rows * (double)g.OH * (double)g.OW); /* zeroing */
    emit_nchwc_epilogue(e, ind, "BN", "cb", "CB", g.K, OCBN);
  } else {
    int ind = emit_parallel_head(s, e->cfg.parallel, "ocb", "OCB");
    hpc_strbuf_line(s, ind, "float acc[%lld];", (long long)(OWT * OCBN));
    if (!e->cfg.parallel) {
      hpc_strbuf_line(s, ind, "for (long oh = 0; oh < OH; ++oh) {");
      ++ind;
    }
    emit_acc_tile_head(s, ind, "OCBN");
    ++ind;
    nest_t nest;
    memset(&nest, 0, sizeof(nest));
    nest.s = s;
    nest.g = &g;
    nest.order = nchwc_orders[e->cfg.reorder >= 0 && e->cfg.reorder < NUM_NCHWC_ORDERS
                                  ? e->cfg.reorder
                                  : 0];
    nest.unroll = unroll;
    nest.partial_ic = ICL != ICBN;
    nest.kw = -1;
    emit_nest(&nest, 0, ind);
    vec_emit_stat(e, (double)OCBN, pixels_rows * taps_rows * valid_cols * (double)g.C);
    vec_emit_stat(e, (double)OCBN, pixels_rows * (double)g.OH * (double)g.OW); /* zeroing */
    emit_nchwc_epilogue(e, ind, "OCBN", "ocb", "OCB", g.K, OCBN);
  }
  /* Close: the ow0 tile loop, the oh loop (parallel 0), the t loop. */
  hpc_strbuf_line(s, e->cfg.parallel ? 2 : 3, "}");
  if (!e->cfg.parallel) hpc_strbuf_line(s, 2, "}");
  hpc_strbuf_line(s, 1, "}");
  const int64_t count = g.N * OCB * (e->cfg.parallel ? g.OH : 1);
  vec_emit_body_close(e, count, conv_macs(&g, depthwise ? 1 : g.C) / (double)count);
  return NULL;
}
