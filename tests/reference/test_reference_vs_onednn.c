/* Cross-checks the reference executor against oneDNN, an independent
 * implementation, on many random shapes. Hand-checked cases cannot cover
 * every combination of stride, asymmetric padding, dilation and groups; a
 * second library that agrees on hundreds of them can.
 *
 * Only plain formats (nchw, oihw/goihw, x, nc, oi) are used so that oneDNN
 * reads our row-major buffers directly, without reorders. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <dnnl.h>

#include "reference/reference.h"

/* max|a-b| / max|ref| per shape: oneDNN accumulates in fp32, the reference
 * in double, so the gap is fp32 rounding of sums of at most a few thousand
 * terms, well below this. */
#define MAX_RELATIVE_ERROR 1e-5

static dnnl_engine_t engine;
static dnnl_stream_t stream;

#define CHECK_DNNL(expr)                                                       \
  do {                                                                         \
    dnnl_status_t s_ = (expr);                                                 \
    if (s_ != dnnl_success) fail_msg("%s failed: status %d", #expr, (int)s_);  \
  } while (0)

/* SplitMix64: a fixed seed makes every run check the same shapes. */
static uint64_t rng_state;

static uint64_t rng_next(void) {
  uint64_t z = (rng_state += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

/* Uniform integer in [lo, hi]. */
static int64_t rng_range(int64_t lo, int64_t hi) {
  return lo + (int64_t)(rng_next() % (uint64_t)(hi - lo + 1));
}

static void fill_uniform(float *x, int64_t count) {
  for (int64_t i = 0; i < count; ++i)
    x[i] = (float)((double)(rng_next() >> 40) / (double)(1ull << 24)) * 2.0f - 1.0f;
}

static float *alloc_floats(int64_t count) {
  float *p = malloc((size_t)count * sizeof(float));
  assert_non_null(p);
  return p;
}

static double relative_error(const float *got, const float *ref, int64_t count) {
  double max_diff = 0.0, max_ref = 0.0;
  for (int64_t i = 0; i < count; ++i) {
    double diff = fabs((double)got[i] - (double)ref[i]);
    /* NaN anywhere must fail, and NaN compares false with everything. */
    if (isnan(diff)) return INFINITY;
    if (diff > max_diff) max_diff = diff;
    if (fabs((double)ref[i]) > max_ref) max_ref = fabs((double)ref[i]);
  }
  return max_ref > 0.0 ? max_diff / max_ref : max_diff;
}

static hetc_plugin_tensor_t row_major(int32_t rank, const int64_t *dims) {
  hetc_plugin_tensor_t t;
  memset(&t, 0, sizeof(t));
  t.dtype = HETC_PLUGIN_DTYPE_FLOAT32;
  t.rank = rank;
  for (int32_t i = 0; i < rank; ++i) t.shape[i] = dims[i];
  return t;
}

static void run_reference(const hetc_plugin_workload_t *w, const float *x,
                          const float *const *params, float *y) {
  const float *inputs[] = {x};
  hetc_status_t status = hetc_reference_run_op(w, inputs, params, y);
  if (status) {
    char message[512];
    snprintf(message, sizeof(message), "%s", hetc_status_message(status));
    hetc_status_free(status);
    fail_msg("reference failed: %s", message);
  }
}

static dnnl_memory_desc_t plain_md(int ndims, const dnnl_dims_t dims,
                                   dnnl_format_tag_t tag) {
  dnnl_memory_desc_t md;
  CHECK_DNNL(dnnl_memory_desc_init_by_tag(&md, ndims, dims, dnnl_f32, tag));
  return md;
}

/* Creates the primitive for op_desc, wraps the user buffers and runs it
 * once. mds/ptrs/arg_ids describe num_args arguments. */
static void run_onednn(const_dnnl_op_desc_t op_desc, int num_args,
                       const int *arg_ids, const dnnl_memory_desc_t *mds,
                       void *const *ptrs) {
  dnnl_primitive_desc_t pd;
  CHECK_DNNL(dnnl_primitive_desc_create(&pd, op_desc, NULL, engine, NULL));
  dnnl_primitive_t prim;
  CHECK_DNNL(dnnl_primitive_create(&prim, pd));
  dnnl_exec_arg_t args[8];
  dnnl_memory_t mems[8];
  for (int i = 0; i < num_args; ++i) {
    CHECK_DNNL(dnnl_memory_create(&mems[i], &mds[i], engine, ptrs[i]));
    args[i].arg = arg_ids[i];
    args[i].memory = mems[i];
  }
  CHECK_DNNL(dnnl_primitive_execute(prim, stream, num_args, args));
  CHECK_DNNL(dnnl_stream_wait(stream));
  for (int i = 0; i < num_args; ++i) CHECK_DNNL(dnnl_memory_destroy(mems[i]));
  CHECK_DNNL(dnnl_primitive_destroy(prim));
  CHECK_DNNL(dnnl_primitive_desc_destroy(pd));
}

/* ------------------------------------------------------------------------ */
/* conv2d                                                                   */
/* ------------------------------------------------------------------------ */

typedef struct conv_case_t {
  int64_t n, ci, h, w, co, kh, kw, sh, sw, dh, dw, groups;
  int64_t pad[4]; /* top, left, bottom, right */
  int has_bias;
  int64_t oh, ow;
} conv_case_t;

/* Draws shapes until one is valid and small enough for a fast suite. */
static conv_case_t random_conv_case(void) {
  for (;;) {
    conv_case_t c;
    memset(&c, 0, sizeof(c));
    c.n = rng_range(1, 2);
    int kind = (int)rng_range(0, 3); /* 0,1: dense; 2: grouped; 3: depthwise */
    if (kind <= 1) {
      c.groups = 1;
      c.ci = rng_range(1, 17);
      c.co = rng_range(1, 17);
    } else if (kind == 2) {
      c.groups = rng_range(2, 4);
      c.ci = c.groups * rng_range(1, 5);
      c.co = c.groups * rng_range(1, 5);
    } else {
      c.groups = rng_range(2, 19);
      c.ci = c.co = c.groups;
    }
    c.kh = rng_range(1, 7);
    c.kw = rng_range(1, 7);
    c.sh = rng_range(1, 3);
    c.sw = rng_range(1, 3);
    c.dh = rng_range(0, 2) == 0 ? rng_range(2, 3) : 1;
    c.dw = rng_range(0, 2) == 0 ? rng_range(2, 3) : 1;
    for (int i = 0; i < 4; ++i) c.pad[i] = rng_range(0, 3);
    c.h = rng_range(1, 19);
    c.w = rng_range(1, 19);
    c.has_bias = rng_range(0, 4) != 0;
    c.oh = hetc_reference_conv_output_size(c.h, c.kh, c.sh, c.dh, c.pad[0], c.pad[2]);
    c.ow = hetc_reference_conv_output_size(c.w, c.kw, c.sw, c.dw, c.pad[1], c.pad[3]);
    if (c.oh < 1 || c.ow < 1) continue;
    int64_t macs = c.n * c.co * c.oh * c.ow * (c.ci / c.groups) * c.kh * c.kw;
    if (macs > 1500000) continue;
    return c;
  }
}

static double check_conv_case(const conv_case_t *c) {
  int64_t x_count = c->n * c->ci * c->h * c->w;
  int64_t w_count = c->co * (c->ci / c->groups) * c->kh * c->kw;
  int64_t y_count = c->n * c->co * c->oh * c->ow;
  float *x = alloc_floats(x_count), *weight = alloc_floats(w_count);
  float *bias = alloc_floats(c->co), *ref = alloc_floats(y_count);
  float *dnn = alloc_floats(y_count);
  fill_uniform(x, x_count);
  fill_uniform(weight, w_count);
  fill_uniform(bias, c->co);

  int64_t in_dims[4] = {c->n, c->ci, c->h, c->w};
  int64_t out_dims[4] = {c->n, c->co, c->oh, c->ow};
  hetc_plugin_tensor_t in = row_major(4, in_dims);
  hetc_plugin_workload_t wl;
  memset(&wl, 0, sizeof(wl));
  wl.op = HETC_PLUGIN_OP_CONV2D;
  wl.num_inputs = 1;
  wl.inputs = &in;
  wl.output = row_major(4, out_dims);
  wl.kernel[0] = (int32_t)c->kh;
  wl.kernel[1] = (int32_t)c->kw;
  wl.strides[0] = (int32_t)c->sh;
  wl.strides[1] = (int32_t)c->sw;
  wl.dilation[0] = (int32_t)c->dh;
  wl.dilation[1] = (int32_t)c->dw;
  for (int i = 0; i < 4; ++i) wl.padding[i] = (int32_t)c->pad[i];
  wl.groups = (int32_t)c->groups;
  wl.epilogue.has_bias = c->has_bias;
  const float *params[] = {weight, bias};
  run_reference(&wl, x, params, ref);

  dnnl_dims_t src_dims = {c->n, c->ci, c->h, c->w};
  dnnl_dims_t dst_dims = {c->n, c->co, c->oh, c->ow};
  dnnl_dims_t bias_dims = {c->co};
  dnnl_memory_desc_t src_md = plain_md(4, src_dims, dnnl_nchw);
  dnnl_memory_desc_t dst_md = plain_md(4, dst_dims, dnnl_nchw);
  dnnl_memory_desc_t bias_md = plain_md(1, bias_dims, dnnl_x);
  dnnl_memory_desc_t w_md;
  if (c->groups == 1) {
    dnnl_dims_t w_dims = {c->co, c->ci, c->kh, c->kw};
    w_md = plain_md(4, w_dims, dnnl_oihw);
  } else {
    /* goihw is [G, Cout/G, Cin/G, KH, KW]: the same bytes as our
     * [Cout, Cin/G, KH, KW]. */
    dnnl_dims_t w_dims = {c->groups, c->co / c->groups, c->ci / c->groups,
                          c->kh, c->kw};
    w_md = plain_md(5, w_dims, dnnl_goihw);
  }
  dnnl_dims_t strides = {c->sh, c->sw};
  /* oneDNN counts dilation from 0: 0 is a dense kernel. */
  dnnl_dims_t dilates = {c->dh - 1, c->dw - 1};
  dnnl_dims_t pad_l = {c->pad[0], c->pad[1]};
  dnnl_dims_t pad_r = {c->pad[2], c->pad[3]};
  dnnl_convolution_desc_t desc;
  CHECK_DNNL(dnnl_dilated_convolution_forward_desc_init(
      &desc, dnnl_forward_inference, dnnl_convolution_direct, &src_md, &w_md,
      c->has_bias ? &bias_md : NULL, &dst_md, strides, dilates, pad_l, pad_r));
  int ids[4] = {DNNL_ARG_SRC, DNNL_ARG_WEIGHTS, DNNL_ARG_DST, DNNL_ARG_BIAS};
  dnnl_memory_desc_t mds[4] = {src_md, w_md, dst_md, bias_md};
  void *ptrs[4] = {x, weight, dnn, bias};
  run_onednn(&desc, c->has_bias ? 4 : 3, ids, mds, ptrs);

  double err = relative_error(dnn, ref, y_count);
  free(x);
  free(weight);
  free(bias);
  free(ref);
  free(dnn);
  return err;
}

static void test_conv2d_vs_onednn(void **state) {
  (void)state;
  enum { SHAPES = 240 };
  rng_state = 0x6865746333323164ull;
  double worst = 0.0;
  conv_case_t worst_case;
  memset(&worst_case, 0, sizeof(worst_case));
  /* Coverage counters: the generator must keep producing every feature. */
  int strided = 0, asym = 0, dilated = 0, grouped = 0, depthwise = 0;
  int nonsquare_kernel = 0, big_kernel = 0, batched = 0, no_bias = 0;
  int odd_channels = 0, nonsquare_input = 0;
  for (int i = 0; i < SHAPES; ++i) {
    conv_case_t c = random_conv_case();
    double err = check_conv_case(&c);
    if (!(err <= MAX_RELATIVE_ERROR))
      fail_msg("conv2d shape %d: N%lld C%lld H%lld W%lld -> C%lld, kernel "
               "%lldx%lld stride %lldx%lld dilation %lldx%lld pad "
               "%lld,%lld,%lld,%lld groups %lld bias %d: relative error %.3g",
               i, (long long)c.n, (long long)c.ci, (long long)c.h,
               (long long)c.w, (long long)c.co, (long long)c.kh,
               (long long)c.kw, (long long)c.sh, (long long)c.sw,
               (long long)c.dh, (long long)c.dw, (long long)c.pad[0],
               (long long)c.pad[1], (long long)c.pad[2], (long long)c.pad[3],
               (long long)c.groups, c.has_bias, err);
    if (err > worst) {
      worst = err;
      worst_case = c;
    }
    strided += c.sh > 1 || c.sw > 1;
    asym += c.pad[0] != c.pad[2] || c.pad[1] != c.pad[3];
    dilated += c.dh > 1 || c.dw > 1;
    grouped += c.groups > 1 && c.groups != c.ci;
    depthwise += c.groups > 1 && c.groups == c.ci && c.groups == c.co;
    nonsquare_kernel += c.kh != c.kw;
    big_kernel += c.kh == 7 || c.kw == 7;
    batched += c.n > 1;
    no_bias += !c.has_bias;
    odd_channels += (c.ci % 2) && (c.co % 2);
    nonsquare_input += c.h != c.w;
  }
  printf("conv2d vs oneDNN %d.%d.%d: %d shapes, worst relative error %.3g "
         "(N%lld C%lld %lldx%lld -> C%lld k%lldx%lld s%lldx%lld d%lldx%lld "
         "g%lld); strided %d, asymmetric pad %d, dilated %d, grouped %d, "
         "depthwise %d, non-square kernel %d, 7-wide kernel %d, batch 2 %d, "
         "no bias %d, odd channels %d, non-square input %d\n",
         dnnl_version()->major, dnnl_version()->minor, dnnl_version()->patch,
         SHAPES, worst, (long long)worst_case.n, (long long)worst_case.ci,
         (long long)worst_case.h, (long long)worst_case.w,
         (long long)worst_case.co, (long long)worst_case.kh,
         (long long)worst_case.kw, (long long)worst_case.sh,
         (long long)worst_case.sw, (long long)worst_case.dh,
         (long long)worst_case.dw, (long long)worst_case.groups, strided, asym,
         dilated, grouped, depthwise, nonsquare_kernel, big_kernel, batched,
         no_bias, odd_channels, nonsquare_input);
  const int *counts[] = {&strided, &asym, &dilated, &grouped, &depthwise,
                         &nonsquare_kernel, &big_kernel, &batched, &no_bias,
                         &odd_channels, &nonsquare_input};
  for (size_t i = 0; i < sizeof(counts) / sizeof(counts[0]); ++i)
    assert_true(*counts[i] >= 10);
  /* A comparison that is exactly 0 everywhere would hint that both sides
   * read the same buffer rather than compute. */
  assert_true(worst > 0.0);
}

/* ------------------------------------------------------------------------ */
/* dense                                                                    */
/* ------------------------------------------------------------------------ */

static void test_dense_vs_onednn(void **state) {
  (void)state;
  enum { SHAPES = 24 };
  rng_state = 0x64656e7365ull;
  double worst = 0.0;
  for (int i = 0; i < SHAPES; ++i) {
    int64_t n = rng_range(1, 4), k = rng_range(1, 600), u = rng_range(1, 130);
    int has_bias = i % 4 != 3;
    float *x = alloc_floats(n * k), *weight = alloc_floats(u * k);
    float *bias = alloc_floats(u), *ref = alloc_floats(n * u);
    float *dnn = alloc_floats(n * u);
    fill_uniform(x, n * k);
    fill_uniform(weight, u * k);
    fill_uniform(bias, u);

    int64_t in_dims[2] = {n, k}, out_dims[2] = {n, u};
    hetc_plugin_tensor_t in = row_major(2, in_dims);
    hetc_plugin_workload_t wl;
    memset(&wl, 0, sizeof(wl));
    wl.op = HETC_PLUGIN_OP_DENSE;
    wl.num_inputs = 1;
    wl.inputs = &in;
    wl.output = row_major(2, out_dims);
    wl.epilogue.has_bias = has_bias;
    const float *params[] = {weight, bias};
    run_reference(&wl, x, params, ref);

    dnnl_dims_t src_dims = {n, k}, w_dims = {u, k}, b_dims = {u}, dst_dims = {n, u};
    dnnl_memory_desc_t src_md = plain_md(2, src_dims, dnnl_nc);
    dnnl_memory_desc_t w_md = plain_md(2, w_dims, dnnl_oi);
    dnnl_memory_desc_t b_md = plain_md(1, b_dims, dnnl_x);
    dnnl_memory_desc_t dst_md = plain_md(2, dst_dims, dnnl_nc);
    dnnl_inner_product_desc_t desc;
    CHECK_DNNL(dnnl_inner_product_forward_desc_init(
        &desc, dnnl_forward_inference, &src_md, &w_md, has_bias ? &b_md : NULL,
        &dst_md));
    int ids[4] = {DNNL_ARG_SRC, DNNL_ARG_WEIGHTS, DNNL_ARG_DST, DNNL_ARG_BIAS};
    dnnl_memory_desc_t mds[4] = {src_md, w_md, dst_md, b_md};
    void *ptrs[4] = {x, weight, dnn, bias};
    run_onednn(&desc, has_bias ? 4 : 3, ids, mds, ptrs);

    double err = relative_error(dnn, ref, n * u);
    if (!(err <= MAX_RELATIVE_ERROR))
      fail_msg("dense shape %d: N%lld K%lld units %lld bias %d: relative "
               "error %.3g",
               i, (long long)n, (long long)k, (long long)u, has_bias, err);
    if (err > worst) worst = err;
    free(x);
    free(weight);
    free(bias);
    free(ref);
    free(dnn);
  }
  printf("dense vs oneDNN inner_product: %d shapes, worst relative error %.3g\n",
         SHAPES, worst);
}

/* ------------------------------------------------------------------------ */
/* pooling                                                                  */
/* ------------------------------------------------------------------------ */

static void test_pool_vs_onednn(void **state) {
  (void)state;
  enum { SHAPES = 45 };
  rng_state = 0x706f6f6cull;
  double worst = 0.0;
  int ceil_cases = 0, include_pad_cases = 0, padded_cases = 0;
  for (int i = 0; i < SHAPES; ++i) {
    /* 0: max, 1: avg counting padding, 2: avg over real elements. */
    int alg = i % 3;
    int64_t n = rng_range(1, 2), c = rng_range(1, 9);
    int64_t kh = rng_range(1, 5), kw = rng_range(1, 5);
    int64_t sh = rng_range(1, 3), sw = rng_range(1, 3);
    int64_t pad[4] = {rng_range(0, kh - 1), rng_range(0, kw - 1),
                      rng_range(0, kh - 1), rng_range(0, kw - 1)};
    int64_t h = rng_range(kh, 17), w = rng_range(kw, 17);
    /* oneDNN divides by the whole kernel when it counts padding, PyTorch by
     * the window clipped to the padded input; they differ only for windows
     * that ceil_mode hangs past the padding, so that pair is left out. */
    int ceil_mode = alg != 1 && rng_range(0, 1);
    int64_t oh = hetc_reference_pool_output_size(h, kh, sh, pad[0], pad[2], ceil_mode);
    int64_t ow = hetc_reference_pool_output_size(w, kw, sw, pad[1], pad[3], ceil_mode);
    ceil_cases += ceil_mode;
    include_pad_cases += alg == 1 && (pad[0] || pad[1] || pad[2] || pad[3]);
    padded_cases += pad[0] != pad[2] || pad[1] != pad[3];

    int64_t x_count = n * c * h * w, y_count = n * c * oh * ow;
    float *x = alloc_floats(x_count), *ref = alloc_floats(y_count);
    float *dnn = alloc_floats(y_count);
    fill_uniform(x, x_count);

    int64_t in_dims[4] = {n, c, h, w}, out_dims[4] = {n, c, oh, ow};
    hetc_plugin_tensor_t in = row_major(4, in_dims);
    hetc_plugin_workload_t wl;
    memset(&wl, 0, sizeof(wl));
    wl.op = alg == 0 ? HETC_PLUGIN_OP_MAX_POOL2D : HETC_PLUGIN_OP_AVG_POOL2D;
    wl.num_inputs = 1;
    wl.inputs = &in;
    wl.output = row_major(4, out_dims);
    wl.kernel[0] = (int32_t)kh;
    wl.kernel[1] = (int32_t)kw;
    wl.strides[0] = (int32_t)sh;
    wl.strides[1] = (int32_t)sw;
    for (int j = 0; j < 4; ++j) wl.padding[j] = (int32_t)pad[j];
    wl.ceil_mode = ceil_mode;
    wl.count_include_pad = alg == 1;
    run_reference(&wl, x, NULL, ref);

    /* oneDNN has no ceil_mode: the extra windows become extra right/bottom
     * padding, exactly enough for the output size the reference chose. */
    int64_t pb = (oh - 1) * sh + kh - h - pad[0];
    int64_t pr = (ow - 1) * sw + kw - w - pad[1];
    if (pb < pad[2]) pb = pad[2];
    if (pr < pad[3]) pr = pad[3];
    dnnl_dims_t src_dims = {n, c, h, w}, dst_dims = {n, c, oh, ow};
    dnnl_memory_desc_t src_md = plain_md(4, src_dims, dnnl_nchw);
    dnnl_memory_desc_t dst_md = plain_md(4, dst_dims, dnnl_nchw);
    dnnl_dims_t strides = {sh, sw}, kernel = {kh, kw};
    dnnl_dims_t pad_l = {pad[0], pad[1]}, pad_r = {pb, pr};
    const dnnl_alg_kind_t algs[3] = {dnnl_pooling_max,
                                     dnnl_pooling_avg_include_padding,
                                     dnnl_pooling_avg_exclude_padding};
    dnnl_pooling_desc_t desc;
    CHECK_DNNL(dnnl_pooling_forward_desc_init(&desc, dnnl_forward_inference,
                                              algs[alg], &src_md, &dst_md,
                                              strides, kernel, pad_l, pad_r));
    int ids[2] = {DNNL_ARG_SRC, DNNL_ARG_DST};
    dnnl_memory_desc_t mds[2] = {src_md, dst_md};
    void *ptrs[2] = {x, dnn};
    run_onednn(&desc, 2, ids, mds, ptrs);

    double err = relative_error(dnn, ref, y_count);
    if (!(err <= MAX_RELATIVE_ERROR))
      fail_msg("pool shape %d (alg %d): N%lld C%lld %lldx%lld kernel %lldx%lld "
               "stride %lldx%lld pad %lld,%lld,%lld,%lld ceil %d: relative "
               "error %.3g",
               i, alg, (long long)n, (long long)c, (long long)h, (long long)w,
               (long long)kh, (long long)kw, (long long)sh, (long long)sw,
               (long long)pad[0], (long long)pad[1], (long long)pad[2],
               (long long)pad[3], ceil_mode, err);
    if (err > worst) worst = err;
    free(x);
    free(ref);
    free(dnn);
  }
  printf("pooling vs oneDNN: %d shapes (%d ceil_mode, %d avg counting "
         "padding with padding, %d asymmetric padding), worst relative error "
         "%.3g\n",
         SHAPES, ceil_cases, include_pad_cases, padded_cases, worst);
  assert_true(ceil_cases >= 5);
  assert_true(include_pad_cases >= 5);
}

static int setup(void **state) {
  (void)state;
  if (dnnl_engine_create(&engine, dnnl_cpu, 0) != dnnl_success) return -1;
  if (dnnl_stream_create(&stream, engine, dnnl_stream_default_flags) !=
      dnnl_success)
    return -1;
  return 0;
}

static int teardown(void **state) {
  (void)state;
  dnnl_stream_destroy(stream);
  dnnl_engine_destroy(engine);
  return 0;
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_conv2d_vs_onednn),
      cmocka_unit_test(test_dense_vs_onednn),
      cmocka_unit_test(test_pool_vs_onednn),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
