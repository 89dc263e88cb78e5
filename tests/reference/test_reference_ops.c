/* Hand-checked cases for every op of the reference executor. Expected
 * numbers are worked out in the comments, so a failure here means the
 * oracle itself is wrong. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "reference/reference.h"

/* ------------------------------------------------------------------------ */
/* Helpers                                                                  */
/* ------------------------------------------------------------------------ */

static hetc_plugin_tensor_t tensor(int32_t rank, const int64_t *dims,
                                   int32_t kind, int32_t block) {
  hetc_plugin_tensor_t t;
  memset(&t, 0, sizeof(t));
  t.dtype = HETC_PLUGIN_DTYPE_FLOAT32;
  t.rank = rank;
  for (int32_t i = 0; i < rank; ++i) t.shape[i] = dims[i];
  t.layout.kind = kind;
  t.layout.block = block;
  return t;
}

static hetc_plugin_tensor_t t4(int64_t n, int64_t c, int64_t h, int64_t w) {
  int64_t d[4] = {n, c, h, w};
  return tensor(4, d, HETC_PLUGIN_LAYOUT_ROW_MAJOR, 0);
}

static hetc_plugin_tensor_t t2(int64_t a, int64_t b) {
  int64_t d[2] = {a, b};
  return tensor(2, d, HETC_PLUGIN_LAYOUT_ROW_MAJOR, 0);
}

static hetc_plugin_tensor_t with_layout(hetc_plugin_tensor_t t, int32_t kind,
                                        int32_t block) {
  t.layout.kind = kind;
  t.layout.block = block;
  return t;
}

static hetc_plugin_workload_t workload(int32_t op, int32_t num_inputs,
                                       const hetc_plugin_tensor_t *inputs,
                                       hetc_plugin_tensor_t output) {
  hetc_plugin_workload_t w;
  memset(&w, 0, sizeof(w));
  w.op = op;
  w.num_inputs = num_inputs;
  w.inputs = inputs;
  w.output = output;
  return w;
}

static hetc_plugin_workload_t conv_workload(const hetc_plugin_tensor_t *inputs,
                                            int32_t num_inputs,
                                            hetc_plugin_tensor_t output,
                                            int32_t kh, int32_t kw) {
  hetc_plugin_workload_t w =
      workload(HETC_PLUGIN_OP_CONV2D, num_inputs, inputs, output);
  w.kernel[0] = kh;
  w.kernel[1] = kw;
  w.strides[0] = w.strides[1] = 1;
  w.dilation[0] = w.dilation[1] = 1;
  w.groups = 1;
  return w;
}

static hetc_plugin_workload_t pool_workload(int32_t op,
                                            const hetc_plugin_tensor_t *input,
                                            hetc_plugin_tensor_t output,
                                            int32_t k, int32_t s, int32_t pad) {
  hetc_plugin_workload_t w = workload(op, 1, input, output);
  w.kernel[0] = w.kernel[1] = k;
  w.strides[0] = w.strides[1] = s;
  for (int i = 0; i < 4; ++i) w.padding[i] = pad;
  return w;
}

static void run_ok(const hetc_plugin_workload_t *w, const float *const *inputs,
                   const float *const *params, float *output) {
  hetc_status_t status = hetc_reference_run_op(w, inputs, params, output);
  if (status) {
    char message[512];
    snprintf(message, sizeof(message), "%s", hetc_status_message(status));
    hetc_status_free(status);
    fail_msg("reference failed: %s", message);
  }
}

static void run_fails(const hetc_plugin_workload_t *w,
                      const float *const *inputs, const float *const *params,
                      float *output, hetc_status_code_t code) {
  hetc_status_t status = hetc_reference_run_op(w, inputs, params, output);
  assert_non_null(status);
  hetc_status_code_t got = hetc_status_code(status);
  if (got != code) {
    char message[512];
    snprintf(message, sizeof(message), "%s", hetc_status_message(status));
    hetc_status_free(status);
    fail_msg("expected code %d, got %d (%s)", (int)code, (int)got, message);
  }
  hetc_status_free(status);
}

static void expect_close(const float *got, const float *want, int64_t count,
                         double tolerance) {
  for (int64_t i = 0; i < count; ++i) {
    double diff = fabs((double)got[i] - (double)want[i]);
    if (!(diff <= tolerance))
      fail_msg("element %lld: got %.9g, want %.9g", (long long)i,
               (double)got[i], (double)want[i]);
  }
}

static void expect_exact(const float *got, const float *want, int64_t count) {
  for (int64_t i = 0; i < count; ++i)
    if (memcmp(&got[i], &want[i], sizeof(float)) != 0)
      fail_msg("element %lld: got %.9g, want %.9g", (long long)i,
               (double)got[i], (double)want[i]);
}

static void fill_iota(float *x, int64_t count, float start) {
  for (int64_t i = 0; i < count; ++i) x[i] = start + (float)i;
}

/* Deterministic values with no structure a layout bug could hide behind. */
static void fill_pseudo(float *x, int64_t count, uint32_t seed) {
  uint32_t s = seed * 2654435761u + 1u;
  for (int64_t i = 0; i < count; ++i) {
    s = s * 1664525u + 1013904223u;
    x[i] = (float)((s >> 8) & 0xffff) / 32768.0f - 1.0f;
  }
}

/* ------------------------------------------------------------------------ */
/* conv2d                                                                   */
/* ------------------------------------------------------------------------ */

static void test_conv2d_diagonal_kernel(void **state) {
  (void)state;
  /* x = 1..9 as 3x3; the kernel [[1,0],[0,1]] sums each 2x2 window's
   * diagonal: 1+5, 2+6, 4+8, 5+9; bias 0.5 on top. */
  hetc_plugin_tensor_t in = t4(1, 1, 3, 3);
  hetc_plugin_workload_t w = conv_workload(&in, 1, t4(1, 1, 2, 2), 2, 2);
  w.epilogue.has_bias = 1;
  float x[9], weight[4] = {1, 0, 0, 1}, bias[1] = {0.5f}, y[4];
  fill_iota(x, 9, 1);
  const float *inputs[] = {x};
  const float *params[] = {weight, bias};
  run_ok(&w, inputs, params, y);
  const float want[4] = {6.5f, 8.5f, 12.5f, 14.5f};
  expect_exact(y, want, 4);
}

static void test_conv2d_asymmetric_padding_stride(void **state) {
  (void)state;
  /* 1x1 kernel of weight 2, stride 2, padding top 1, right 2:
   * OH = (3+1-1)/2+1 = 2 reading rows -1 (pad), 1;
   * OW = (3+2-1)/2+1 = 3 reading cols 0, 2, 4 (pad). x row 1 is 4,5,6. */
  hetc_plugin_tensor_t in = t4(1, 1, 3, 3);
  hetc_plugin_workload_t w = conv_workload(&in, 1, t4(1, 1, 2, 3), 1, 1);
  w.strides[0] = w.strides[1] = 2;
  w.padding[0] = 1;
  w.padding[3] = 2;
  float x[9], weight[1] = {2}, y[6];
  fill_iota(x, 9, 1);
  const float *inputs[] = {x};
  const float *params[] = {weight};
  run_ok(&w, inputs, params, y);
  const float want[6] = {0, 0, 0, 8, 12, 0};
  expect_exact(y, want, 6);
}

static void test_conv2d_dilation(void **state) {
  (void)state;
  /* x[r][c] = 5r+c on 5x5; a 2x2 kernel of ones dilated by 2 reads
   * x[i][j] + x[i][j+2] + x[i+2][j] + x[i+2][j+2] = 24 + 20i + 4j. */
  hetc_plugin_tensor_t in = t4(1, 1, 5, 5);
  hetc_plugin_workload_t w = conv_workload(&in, 1, t4(1, 1, 3, 3), 2, 2);
  w.dilation[0] = w.dilation[1] = 2;
  float x[25], weight[4] = {1, 1, 1, 1}, y[9], want[9];
  fill_iota(x, 25, 0);
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j) want[i * 3 + j] = (float)(24 + 20 * i + 4 * j);
  const float *inputs[] = {x};
  const float *params[] = {weight};
  run_ok(&w, inputs, params, y);
  expect_exact(y, want, 9);
}

static void test_conv2d_groups_and_depthwise(void **state) {
  (void)state;
  /* Two groups of two channels: out0 = 1*1 + 2*10, out1 = 3*100 + 4*1000. */
  hetc_plugin_tensor_t in = t4(1, 4, 1, 1);
  hetc_plugin_workload_t w = conv_workload(&in, 1, t4(1, 2, 1, 1), 1, 1);
  w.groups = 2;
  float x[4] = {1, 2, 3, 4}, weight[4] = {1, 10, 100, 1000}, y[2];
  const float *inputs[] = {x};
  const float *params[] = {weight};
  run_ok(&w, inputs, params, y);
  const float want[2] = {21, 4300};
  expect_exact(y, want, 2);

  /* Depthwise: each channel scaled by its own weight. */
  hetc_plugin_tensor_t din = t4(1, 3, 2, 2);
  hetc_plugin_workload_t dw = conv_workload(&din, 1, t4(1, 3, 2, 2), 1, 1);
  dw.groups = 3;
  float dx[12], dweight[3] = {1, 2, 3}, dy[12], dwant[12];
  fill_iota(dx, 12, 1);
  for (int i = 0; i < 12; ++i) dwant[i] = dx[i] * dweight[i / 4];
  const float *dinputs[] = {dx};
  const float *dparams[] = {dweight};
  run_ok(&dw, dinputs, dparams, dy);
  expect_exact(dy, dwant, 12);
}

static void test_conv2d_batch_and_channels(void **state) {
  (void)state;
  /* N=2, Cin=2, Cout=2, 1x1: out[n][o] = sum_i w[o][i] * x[n][i]. */
  hetc_plugin_tensor_t in = t4(2, 2, 1, 1);
  hetc_plugin_workload_t w = conv_workload(&in, 1, t4(2, 2, 1, 1), 1, 1);
  float x[4] = {1, 2, 3, 4}, weight[4] = {1, -1, 2, 3}, y[4];
  const float *inputs[] = {x};
  const float *params[] = {weight};
  run_ok(&w, inputs, params, y);
  const float want[4] = {-1, 8, -1, 18};
  expect_exact(y, want, 4);
}

static void test_conv2d_epilogue_order(void **state) {
  (void)state;
  /* out = act(acc + bias + residual). With acc -3, bias 1, residual 4:
   * relu(2) = 2 (relu before the residual would give 4). With acc 5,
   * bias 1, residual 3: relu6(9) = 6 (clamping before the residual gives
   * 9). */
  hetc_plugin_tensor_t ins[2] = {t4(1, 1, 1, 1), t4(1, 1, 1, 1)};
  hetc_plugin_workload_t w = conv_workload(ins, 2, t4(1, 1, 1, 1), 1, 1);
  w.epilogue.has_bias = 1;
  w.epilogue.has_residual = 1;
  w.epilogue.activation = HETC_PLUGIN_ACT_RELU;
  float x[1] = {-3}, r[1] = {4}, weight[1] = {1}, bias[1] = {1}, y[1];
  const float *inputs[] = {x, r};
  const float *params[] = {weight, bias};
  run_ok(&w, inputs, params, y);
  assert_true(y[0] == 2.0f);

  w.epilogue.activation = HETC_PLUGIN_ACT_RELU6;
  x[0] = 5;
  r[0] = 3;
  run_ok(&w, inputs, params, y);
  assert_true(y[0] == 6.0f);

  w.epilogue.activation = HETC_PLUGIN_ACT_SIGMOID;
  x[0] = -1;
  r[0] = 0;
  bias[0] = 1;
  run_ok(&w, inputs, params, y);
  assert_true(y[0] == 0.5f);
}

/* Both ways of computing conv2d (planes, register blocks) give the same
 * bits, on shapes that reach every edge of the blocks: rows not a multiple
 * of 8, channel counts not a multiple of 4, groups that end inside a
 * block, strides and dilations over paddings of every side, two images,
 * every epilogue. Weights that are not finite leave the blocks refused
 * (0 * inf in the padding would not be 0). */
/* Values whose sums depend on their order: a quarter of them +-2^40, the
 * rest with every mantissa bit used; with taps of +-1, +-1/2 and +-1/4,
 * where the large terms of a window cancel, what is left of the small ones
 * depends on how many were added beside a large one (double's unit at 2^40
 * is 2^-12), and shows in the float result. fill_pseudo's values would
 * add up exactly in any order. */
static void fill_cancelling(float *x, int64_t count, uint32_t seed) {
  uint32_t s = seed * 2654435761u + 7u;
  for (int64_t i = 0; i < count; ++i) {
    s = s * 1664525u + 1013904223u;
    const float sign = (s >> 31) ? -1.0f : 1.0f;
    x[i] = (s >> 29 & 3) == 0 ? sign * 0x1p40f : (float)(s >> 7 & 0xffffff) / 16777216.0f * sign;
  }
}

static void fill_taps(float *x, int64_t count, uint32_t seed) {
  uint32_t s = seed * 2654435761u + 9u;
  for (int64_t i = 0; i < count; ++i) {
    s = s * 1664525u + 1013904223u;
    x[i] = ((s >> 31) ? -1.0f : 1.0f) * ldexpf(1.0f, -(int)(s >> 28 & 1) - (int)(s >> 27 & 1));
  }
}

static void test_conv2d_ways_agree(void **state) {
  (void)state;
  {
    const hetc_plugin_tensor_t in = t4(1, 1, 1, 1);
    const hetc_plugin_workload_t w = conv_workload(&in, 1, t4(1, 1, 1, 1), 1, 1);
    const float one = 1.0f;
    float y;
    hetc_status_t status = hetc_reference_conv2d_by(HETC_REFERENCE_CONV_BLOCKED, &w, &one, &one, NULL, NULL, &y);
    if (status) {
      printf("SKIP %s (the register blocks need AVX2 on x86)\n", hetc_status_message(status));
      hetc_status_free(status);
      return;
    }
  }
  uint32_t seed = 11;
  for (int round = 0; round < 60; ++round) {
    seed = seed * 1103515245u + 12345u;
    const int64_t N = 1 + round % 2, G = (int64_t[]){1, 1, 2, 3, 6}[round % 5];
    const int64_t CI = G * (1 + (seed >> 4) % 3), CO = G * (1 + (seed >> 8) % 6);
    const int32_t KH = 1 + (seed >> 12) % 3, KW = 1 + (seed >> 14) % 5;
    const int32_t SH = 1 + (seed >> 17) % 2, SW = 1 + (seed >> 18) % 3;
    const int32_t DH = 1 + (seed >> 20) % 2, DW = 1 + (seed >> 21) % 3;
    const int32_t pads[4] = {(seed >> 23) % 3, (seed >> 25) % 4, (seed >> 27) % 2, (seed >> 28) % 4};
    const int64_t H = 1 + (seed >> 3) % 13, W = 1 + (seed >> 6) % 23;
    const int64_t OH = hetc_reference_conv_output_size(H, KH, SH, DH, pads[0], pads[2]);
    const int64_t OW = hetc_reference_conv_output_size(W, KW, SW, DW, pads[1], pads[3]);
    hetc_plugin_tensor_t ins[2] = {t4(N, CI, H, W), t4(N, CO, OH, OW)};
    hetc_plugin_workload_t w = conv_workload(ins, 1 + round % 2, t4(N, CO, OH, OW), KH, KW);
    w.strides[0] = SH;
    w.strides[1] = SW;
    w.dilation[0] = DH;
    w.dilation[1] = DW;
    w.groups = (int32_t)G;
    memcpy(w.padding, pads, sizeof(pads));
    w.epilogue.has_bias = round % 3 != 0;
    w.epilogue.has_residual = round % 2;
    w.epilogue.activation = round % 4 == 1 ? HETC_PLUGIN_ACT_RELU : round % 4 == 3 ? HETC_PLUGIN_ACT_TANH
                                                                                   : HETC_PLUGIN_ACT_NONE;
    const int64_t x_count = N * CI * H * W, w_count = CO * (CI / G) * KH * KW, y_count = N * CO * OH * OW;
    float *x = malloc(sizeof(float) * (size_t)x_count), *weight = malloc(sizeof(float) * (size_t)w_count);
    float *bias = malloc(sizeof(float) * (size_t)CO), *res = malloc(sizeof(float) * (size_t)(y_count + 1));
    float *planes = malloc(sizeof(float) * (size_t)(y_count + 1)),
          *blocked = malloc(sizeof(float) * (size_t)(y_count + 1));
    fill_cancelling(x, x_count, seed);
    fill_taps(weight, w_count, seed + 1);
    fill_pseudo(bias, CO, seed + 2);
    fill_pseudo(res, y_count, seed + 3);
    /* A zero weight and an exact cancellation: signed zeros too. */
    weight[0] = 0.0f;
    if (x_count > 1) x[1] = -x[0];
    assert_null(hetc_reference_conv2d_by(HETC_REFERENCE_CONV_PLANES, &w, x, weight, bias, res, planes));
    assert_null(hetc_reference_conv2d_by(HETC_REFERENCE_CONV_BLOCKED, &w, x, weight, bias, res, blocked));
    expect_exact(blocked, planes, y_count);
    weight[w_count - 1] = INFINITY;
    hetc_status_t status = hetc_reference_conv2d_by(HETC_REFERENCE_CONV_BLOCKED, &w, x, weight, bias, res, blocked);
    assert_int_equal(hetc_status_code(status), HETC_STATUS_UNSUPPORTED);
    hetc_status_free(status);
    assert_null(hetc_reference_conv2d_by(HETC_REFERENCE_CONV_PLANES, &w, x, weight, bias, res, planes));
    assert_null(hetc_reference_conv2d(&w, x, weight, bias, res, blocked));
    expect_exact(blocked, planes, y_count);
    free(x);
    free(weight);
    free(bias);
    free(res);
    free(planes);
    free(blocked);
  }
}

/* The same conv in every combination of layouts gives bit-identical results
 * to the row-major run, residual included. */
static void test_conv2d_every_layout(void **state) {
  (void)state;
  enum { N = 2, CI = 5, CO = 13, H = 6, W = 7 };
  int64_t oh = 3, ow = 4; /* 3x3 kernel, stride 2, pad 1 each side */
  float *x = malloc(sizeof(float) * N * CI * H * W);
  float *weight = malloc(sizeof(float) * CO * CI * 9);
  float bias[CO];
  float *res = malloc(sizeof(float) * N * CO * 12);
  float *want = malloc(sizeof(float) * N * CO * 12);
  float *got = malloc(sizeof(float) * N * 16 * 12);
  float *back = malloc(sizeof(float) * N * CO * 12);
  float *xl = malloc(sizeof(float) * N * 8 * H * W);
  float *rl = malloc(sizeof(float) * N * 16 * 12);
  fill_pseudo(x, N * CI * H * W, 1);
  fill_pseudo(weight, CO * CI * 9, 2);
  fill_pseudo(bias, CO, 3);
  fill_pseudo(res, N * CO * 12, 4);

  hetc_plugin_tensor_t ins[2] = {t4(N, CI, H, W), t4(N, CO, oh, ow)};
  hetc_plugin_workload_t w = conv_workload(ins, 2, t4(N, CO, oh, ow), 3, 3);
  w.strides[0] = w.strides[1] = 2;
  for (int i = 0; i < 4; ++i) w.padding[i] = 1;
  w.epilogue.has_bias = 1;
  w.epilogue.has_residual = 1;
  w.epilogue.activation = HETC_PLUGIN_ACT_TANH;
  const float *params[] = {weight, bias};
  const float *inputs[] = {x, res};
  run_ok(&w, inputs, params, want);

  const hetc_plugin_layout_t layouts[] = {
      {HETC_PLUGIN_LAYOUT_ROW_MAJOR, 0}, {HETC_PLUGIN_LAYOUT_NCHWC, 4},
      {HETC_PLUGIN_LAYOUT_NCHWC, 8}, {HETC_PLUGIN_LAYOUT_NHWC, 0}};
  for (int a = 0; a < 4; ++a)
    for (int b = 0; b < 4; ++b) {
      int c = (a + b) % 4; /* the residual's layout, independent of both */
      hetc_plugin_tensor_t lin[2] = {
          with_layout(ins[0], layouts[a].kind, layouts[a].block),
          with_layout(ins[1], layouts[c].kind, layouts[c].block)};
      hetc_plugin_tensor_t lout =
          with_layout(w.output, layouts[b].kind, layouts[b].block);
      hetc_plugin_workload_t lw = w;
      lw.inputs = lin;
      lw.output = lout;
      assert_null(hetc_layout_convert(&ins[0], x, &lin[0], xl));
      assert_null(hetc_layout_convert(&ins[1], res, &lin[1], rl));
      const float *linputs[] = {xl, rl};
      run_ok(&lw, linputs, params, got);
      assert_null(hetc_layout_convert(&lout, got, &w.output, back));
      expect_exact(back, want, N * CO * oh * ow);
    }
  free(x);
  free(weight);
  free(res);
  free(want);
  free(got);
  free(back);
  free(xl);
  free(rl);
}

/* ------------------------------------------------------------------------ */
/* dense                                                                    */
/* ------------------------------------------------------------------------ */

static void test_dense(void **state) {
  (void)state;
  /* x = [[1,2,3],[4,5,6]], weight = [[1,0,-1],[.5,.5,.5]], bias [10,20]:
   * row 0: 1-3+10 = 8, 3+20 = 23; row 1: 4-6+10 = 8, 7.5+20 = 27.5. */
  hetc_plugin_tensor_t in = t2(2, 3);
  hetc_plugin_workload_t w = workload(HETC_PLUGIN_OP_DENSE, 1, &in, t2(2, 2));
  w.epilogue.has_bias = 1;
  float x[6] = {1, 2, 3, 4, 5, 6}, weight[6] = {1, 0, -1, 0.5f, 0.5f, 0.5f};
  float bias[2] = {10, 20}, y[4];
  const float *inputs[] = {x};
  const float *params[] = {weight, bias};
  run_ok(&w, inputs, params, y);
  const float want[4] = {8, 23, 8, 27.5f};
  expect_exact(y, want, 4);

  /* Residual then relu6: 8-9 -> 0, 23-20 -> 3, 8+0 -> 6, 27.5-30 -> 0. */
  hetc_plugin_tensor_t ins[2] = {t2(2, 3), t2(2, 2)};
  w = workload(HETC_PLUGIN_OP_DENSE, 2, ins, t2(2, 2));
  w.epilogue.has_bias = 1;
  w.epilogue.has_residual = 1;
  w.epilogue.activation = HETC_PLUGIN_ACT_RELU6;
  float r[4] = {-9, -20, 0, -30};
  const float *inputs2[] = {x, r};
  run_ok(&w, inputs2, params, y);
  const float want2[4] = {0, 3, 6, 0};
  expect_exact(y, want2, 4);
}

/* ------------------------------------------------------------------------ */
/* pooling                                                                  */
/* ------------------------------------------------------------------------ */

static void test_max_pool_basic(void **state) {
  (void)state;
  /* 0..15 as 4x4, 2x2 windows, stride 2: the bottom-right of each. */
  hetc_plugin_tensor_t in = t4(1, 1, 4, 4);
  hetc_plugin_workload_t w =
      pool_workload(HETC_PLUGIN_OP_MAX_POOL2D, &in, t4(1, 1, 2, 2), 2, 2, 0);
  float x[16], y[4];
  fill_iota(x, 16, 0);
  const float *inputs[] = {x};
  run_ok(&w, inputs, NULL, y);
  const float want[4] = {5, 7, 13, 15};
  expect_exact(y, want, 4);

  /* Padding never wins a max: all -1 with pad 1 (k3 s2: (4+2-3)/2+1 = 2
   * windows per axis) stays -1, not 0. */
  hetc_plugin_workload_t pw =
      pool_workload(HETC_PLUGIN_OP_MAX_POOL2D, &in, t4(1, 1, 2, 2), 3, 2, 1);
  float neg[16], py[4];
  for (int i = 0; i < 16; ++i) neg[i] = -1;
  const float *ninputs[] = {neg};
  run_ok(&pw, ninputs, NULL, py);
  for (int i = 0; i < 4; ++i) assert_true(py[i] == -1.0f);
}

static void test_max_pool_ceil_mode(void **state) {
  (void)state;
  /* 5x5 of 5r+c, k2 s2, ceil: 3 windows per axis covering [0,1], [2,3],
   * [4]; floor would give 2. */
  assert_int_equal(hetc_reference_pool_output_size(5, 2, 2, 0, 0, 0), 2);
  assert_int_equal(hetc_reference_pool_output_size(5, 2, 2, 0, 0, 1), 3);
  hetc_plugin_tensor_t in = t4(1, 1, 5, 5);
  hetc_plugin_workload_t w =
      pool_workload(HETC_PLUGIN_OP_MAX_POOL2D, &in, t4(1, 1, 3, 3), 2, 2, 0);
  w.ceil_mode = 1;
  float x[25], y[9];
  fill_iota(x, 25, 0);
  const float *inputs[] = {x};
  run_ok(&w, inputs, NULL, y);
  const float want[9] = {6, 8, 9, 16, 18, 19, 21, 23, 24};
  expect_exact(y, want, 9);

  /* H=5, k2 s2 pad 1, ceil: (5+2-2)/2 rounds up to 3, +1 = 4 windows, but
   * the 4th starts at 6-1 = 5, in the bottom padding only: dropped, 3
   * remain (PyTorch gives 3). An output of 4 is inconsistent. */
  assert_int_equal(hetc_reference_pool_output_size(5, 2, 2, 1, 1, 1), 3);
  hetc_plugin_workload_t dw =
      pool_workload(HETC_PLUGIN_OP_MAX_POOL2D, &in, t4(1, 1, 3, 3), 2, 2, 1);
  dw.ceil_mode = 1;
  run_ok(&dw, inputs, NULL, y);
  /* Windows rows {0}, {1,2}, {3,4}; same for columns. */
  const float want_pad[9] = {0, 2, 4, 10, 12, 14, 20, 22, 24};
  expect_exact(y, want_pad, 9);
  float y16[16];
  dw.output = t4(1, 1, 4, 4);
  run_fails(&dw, inputs, NULL, y16, HETC_STATUS_INVALID_ARGUMENT);
  /* Asymmetric, H=4, k2 s2, ceil: (4+1-2)/2 rounds up to 2, +1 = 3.
   * With top 0 / bottom 1 the 3rd window starts at 4, bottom padding only:
   * dropped. With top 1 / bottom 0 it starts at 4-1 = 3, inside: kept,
   * though it reaches past the padded input. */
  assert_int_equal(hetc_reference_pool_output_size(4, 2, 2, 0, 1, 1), 2);
  assert_int_equal(hetc_reference_pool_output_size(4, 2, 2, 1, 0, 1), 3);
}

static void test_avg_pool_count_include_pad(void **state) {
  (void)state;
  /* 6x6, k3 s2 pad 1, ceil: (6+2-3)/2 rounds up to 3, +1 = 4, last window
   * starts at 5 (inside): kept. Row windows: [-1,1] (2 real of 3 padded),
   * [1,3] (3/3), [3,5] (3/3), [5,7] clipped to the padded input [5,6]
   * (1 real of 2 padded: PyTorch's divisor stops at H + pad). */
  hetc_plugin_tensor_t in = t4(1, 1, 6, 6);
  hetc_plugin_workload_t w =
      pool_workload(HETC_PLUGIN_OP_AVG_POOL2D, &in, t4(1, 1, 4, 4), 3, 2, 1);
  w.ceil_mode = 1;
  float ones[36], y[16];
  for (int i = 0; i < 36; ++i) ones[i] = 1;
  const float *inputs[] = {ones};

  w.count_include_pad = 1;
  run_ok(&w, inputs, NULL, y);
  const double real[4] = {2, 3, 3, 1}, padded[4] = {3, 3, 3, 2};
  for (int i = 0; i < 4; ++i)
    for (int j = 0; j < 4; ++j)
      assert_float_equal(y[i * 4 + j],
                         (real[i] * real[j]) / (padded[i] * padded[j]), 1e-7);

  w.count_include_pad = 0;
  run_ok(&w, inputs, NULL, y);
  for (int i = 0; i < 16; ++i) assert_true(y[i] == 1.0f);

  /* x = 6r+c. Corner (3,3) sees only x[5][5] = 35: 35 excluding padding,
   * 35/4 including it. (0,0) sees x[0..1][0..1] = 0,1,6,7: 14/4 and 14/9. */
  float x[36];
  fill_iota(x, 36, 0);
  const float *xin[] = {x};
  run_ok(&w, xin, NULL, y);
  assert_float_equal(y[15], 35.0, 0);
  assert_float_equal(y[0], 3.5, 0);
  w.count_include_pad = 1;
  run_ok(&w, xin, NULL, y);
  assert_float_equal(y[15], 8.75, 0);
  assert_float_equal(y[0], 14.0 / 9.0, 1e-6);
}

static void test_global_avg_pool(void **state) {
  (void)state;
  hetc_plugin_tensor_t in = t4(1, 2, 2, 2);
  hetc_plugin_workload_t w =
      workload(HETC_PLUGIN_OP_GLOBAL_AVG_POOL2D, 1, &in, t4(1, 2, 1, 1));
  float x[8], y[2];
  fill_iota(x, 8, 1);
  const float *inputs[] = {x};
  run_ok(&w, inputs, NULL, y);
  const float want[2] = {2.5f, 6.5f};
  expect_exact(y, want, 2);
}

/* ------------------------------------------------------------------------ */
/* elementwise, bias_add, batch_norm                                        */
/* ------------------------------------------------------------------------ */

static void test_unary(void **state) {
  (void)state;
  hetc_plugin_tensor_t in = t2(1, 5);
  hetc_plugin_workload_t w = workload(HETC_PLUGIN_OP_ELEMENTWISE, 1, &in, t2(1, 5));
  float x[5] = {-1, 0, 3, 7, -100}, y[5];
  const float *inputs[] = {x};

  w.activation = HETC_PLUGIN_ACT_RELU;
  run_ok(&w, inputs, NULL, y);
  const float relu[5] = {0, 0, 3, 7, 0};
  expect_exact(y, relu, 5);

  w.activation = HETC_PLUGIN_ACT_RELU6;
  run_ok(&w, inputs, NULL, y);
  const float relu6[5] = {0, 0, 3, 6, 0};
  expect_exact(y, relu6, 5);

  w.activation = HETC_PLUGIN_ACT_SIGMOID;
  run_ok(&w, inputs, NULL, y);
  const float sig[5] = {0.268941421f, 0.5f, 0.952574127f, 0.999088949f, 0};
  expect_close(y, sig, 5, 1e-7);

  w.activation = HETC_PLUGIN_ACT_TANH;
  run_ok(&w, inputs, NULL, y);
  const float th[5] = {-0.761594156f, 0, 0.995054754f, 0.999998337f, -1};
  expect_close(y, th, 5, 1e-7);

  w.activation = HETC_PLUGIN_ACT_ELU;
  run_ok(&w, inputs, NULL, y);
  const float elu[5] = {-0.632120559f, 0, 3, 7, -1};
  expect_close(y, elu, 5, 1e-7);

  /* softplus(-100) = log1p(e^-100) = 3.72e-44: kept, not flushed to 0. */
  w.activation = HETC_PLUGIN_ACT_SOFTPLUS;
  run_ok(&w, inputs, NULL, y);
  const float softplus[5] = {0.313261688f, 0.693147181f, 3.04858735f, 7.00091147f, 3.72007598e-44f};
  expect_close(y, softplus, 5, 1e-7);

  w.activation = HETC_PLUGIN_ACT_EXP;
  run_ok(&w, inputs, NULL, y);
  const float e[5] = {0.367879441f, 1, 20.0855369f, 1096.63316f, 3.72007598e-44f};
  expect_close(y, e, 5, 1e-7);

  /* log: NaN below 0, -inf at 0, as logf. */
  w.activation = HETC_PLUGIN_ACT_LOG;
  run_ok(&w, inputs, NULL, y);
  assert_true(isnan(y[0]) && isnan(y[4]));
  assert_true(isinf(y[1]) && y[1] < 0);
  const float logs[2] = {1.09861229f, 1.94591015f};
  expect_close(y + 2, logs, 2, 1e-7);
}

/* want's NaNs and infinities where it has them, its zeros with their sign,
 * every other value within `tolerance` relative. */
static void expect_torch(const float *got, const float *want, int64_t count, double tolerance) {
  for (int64_t i = 0; i < count; ++i) {
    const int ok = isnan(want[i])   ? isnan(got[i])
                   : isinf(want[i]) ? got[i] == want[i]
                   : want[i] == 0   ? got[i] == 0 && !signbit(got[i]) == !signbit(want[i])
                                    : fabs((double)got[i] - want[i]) <= tolerance * fabs((double)want[i]);
    if (!ok) fail_msg("element %lld: got %.9g, want %.9g", (long long)i, (double)got[i], (double)want[i]);
  }
}

/* Minor 6's activations at their edges, as torch computes them (and
 * onnxruntime's HardSwish, HardSigmoid with alpha 1/6 and beta 1/2, and
 * x * Sigmoid(x)): hardswish(-3) = -0, hardswish(3) = 3, hardsigmoid 0 and
 * 1 there; -inf times a gate of 0 is NaN (silu, hardswish); NaN stays NaN;
 * silu(-100) = -100 e^-100 is kept, not flushed to 0. */
static void test_torch_activations(void **state) {
  (void)state;
  hetc_plugin_tensor_t in = t2(1, 9);
  hetc_plugin_workload_t w = workload(HETC_PLUGIN_OP_ELEMENTWISE, 1, &in, t2(1, 9));
  float x[9] = {-INFINITY, -3, -1, 0, 3, INFINITY, NAN, 2.5f, -100}, y[9];
  const float *inputs[] = {x};

  w.activation = HETC_PLUGIN_ACT_SILU;
  run_ok(&w, inputs, NULL, y);
  const float silu[9] = {NAN, -0.142277613f, -0.268941432f, 0, 2.85772228f, INFINITY, NAN, 2.31035447f,
                         -3.72044742e-42f};
  expect_torch(y, silu, 9, 1e-6);

  w.activation = HETC_PLUGIN_ACT_HARDSWISH;
  run_ok(&w, inputs, NULL, y);
  const float hardswish[9] = {NAN, -0.0f, -0.333333343f, 0, 3, INFINITY, NAN, 2.29166675f, -0.0f};
  expect_torch(y, hardswish, 9, 1e-7);
  assert_true(y[4] == 3.0f);

  w.activation = HETC_PLUGIN_ACT_HARDSIGMOID;
  run_ok(&w, inputs, NULL, y);
  const float hardsigmoid[9] = {0, 0, 0.333333343f, 0.5f, 1, 1, NAN, 0.916666687f, 0};
  expect_torch(y, hardsigmoid, 9, 1e-7);
  assert_true(y[4] == 1.0f && y[5] == 1.0f);
}

/* They are epilogues too, applied after the residual: acc 1 + bias 1 +
 * residual -5 = -3, where hardswish gives -0 (1 + 1 through the gate
 * would give 2 * 5 / 6); elu and erf stay unary elementwise only. */
static void test_torch_activation_epilogues(void **state) {
  (void)state;
  hetc_plugin_tensor_t ins[2] = {t4(1, 1, 1, 1), t4(1, 1, 1, 1)};
  hetc_plugin_workload_t w = conv_workload(ins, 2, t4(1, 1, 1, 1), 1, 1);
  w.epilogue.has_bias = 1;
  w.epilogue.has_residual = 1;
  float x[1] = {1}, r[1] = {-5}, weight[1] = {1}, bias[1] = {1}, y[1];
  const float *inputs[] = {x, r};
  const float *params[] = {weight, bias};
  w.epilogue.activation = HETC_PLUGIN_ACT_HARDSWISH;
  run_ok(&w, inputs, params, y);
  assert_true(y[0] == 0 && signbit(y[0]));
  w.epilogue.activation = HETC_PLUGIN_ACT_HARDSIGMOID;
  run_ok(&w, inputs, params, y);
  assert_true(y[0] == 0);
  r[0] = 1; /* acc 3: silu(3) = 3 / (1 + e^-3) */
  w.epilogue.activation = HETC_PLUGIN_ACT_SILU;
  run_ok(&w, inputs, params, y);
  const float silu3[1] = {2.85772228f};
  expect_torch(y, silu3, 1, 1e-7);

  /* dense 1x2 -> 1: 2 * 1 + 1 * 1 + bias 0.5 = 3.5 -> hardswish 3.5. */
  hetc_plugin_tensor_t din = t2(1, 2);
  hetc_plugin_workload_t d = workload(HETC_PLUGIN_OP_DENSE, 1, &din, t2(1, 1));
  d.epilogue.has_bias = 1;
  d.epilogue.activation = HETC_PLUGIN_ACT_HARDSWISH;
  float dx[2] = {2, 1}, dw[2] = {1, 1}, db[1] = {0.5f};
  const float *dinputs[] = {dx};
  const float *dparams[] = {dw, db};
  run_ok(&d, dinputs, dparams, y);
  assert_true(y[0] == 3.5f);

  /* Minor 7's at acc 3: gelu(3) and gelu_tanh(3); erf is no epilogue's. */
  const float gelu3[1] = {2.99595022f}, gelu_tanh3[1] = {2.99636269f};
  w.epilogue.activation = HETC_PLUGIN_ACT_GELU;
  run_ok(&w, inputs, params, y);
  expect_torch(y, gelu3, 1, 1e-7);
  w.epilogue.activation = HETC_PLUGIN_ACT_GELU_TANH;
  run_ok(&w, inputs, params, y);
  expect_torch(y, gelu_tanh3, 1, 1e-7);
  w.epilogue.activation = HETC_PLUGIN_ACT_ERF;
  run_fails(&w, inputs, params, y, HETC_STATUS_UNSUPPORTED);

  w.epilogue.activation = HETC_PLUGIN_ACT_ELU;
  run_fails(&w, inputs, params, y, HETC_STATUS_UNSUPPORTED);
}

/* Minor 7's activations. At the edges: NaN at -inf for gelu and gelu_tanh
 * (x times a gate of 0, as torch's), inf at inf, signed zeros kept, erf
 * +-1 at +-inf; in the negative tail the values themselves, which
 * 0.5 x (1 + erf(x / sqrt 2)) in double rounds to -0 at -10 (1 + erf is
 * 1.5e-23 there; the constants are 0.5 x erfc(-x / sqrt 2) and
 * x / (1 + exp(-2 y))). Between -6 and 6 they agree with the textbook forms
 * in double (erf and tanh) within 1e-6. */
static void test_gelu_and_erf(void **state) {
  (void)state;
  enum { N = 13 };
  hetc_plugin_tensor_t in = t2(1, N);
  hetc_plugin_workload_t w = workload(HETC_PLUGIN_OP_ELEMENTWISE, 1, &in, t2(1, N));
  float x[N] = {-INFINITY, -10, -3, -1, -0.0f, 0, 0.5f, 1, 3, 10, INFINITY, NAN, 1e-30f}, y[N];
  const float *inputs[] = {x};

  w.activation = HETC_PLUGIN_ACT_GELU;
  run_ok(&w, inputs, NULL, y);
  const float gelu[N] = {NAN,         -7.61985298e-23f, -0.00404969417f, -0.158655256f, -0.0f, 0, 0.345731229f,
                         0.841344774f, 2.99595022f,      10,              INFINITY,      NAN,   5e-31f};
  expect_torch(y, gelu, N, 1e-6);

  w.activation = HETC_PLUGIN_ACT_GELU_TANH;
  run_ok(&w, inputs, NULL, y);
  const float gelu_tanh[N] = {NAN,         -1.20409239e-37f, -0.00363739207f, -0.158808008f, -0.0f, 0, 0.345714003f,
                              0.841192007f, 2.99636269f,      10,              INFINITY,      NAN,   5e-31f};
  expect_torch(y, gelu_tanh, N, 1e-6);

  w.activation = HETC_PLUGIN_ACT_ERF;
  run_ok(&w, inputs, NULL, y);
  const float erfs[N] = {-1,          -1,           -0.999977887f, -0.842700779f, -0.0f, 0, 0.520499885f,
                         0.842700779f, 0.999977887f, 1,             1,             NAN,   1.12837917e-30f};
  expect_torch(y, erfs, N, 1e-7);

  enum { SWEEP = 241 };
  hetc_plugin_tensor_t sin = t2(1, SWEEP);
  hetc_plugin_workload_t s = workload(HETC_PLUGIN_OP_ELEMENTWISE, 1, &sin, t2(1, SWEEP));
  float sx[SWEEP], sg[SWEEP], st[SWEEP], want_g[SWEEP], want_t[SWEEP];
  for (int i = 0; i < SWEEP; ++i) {
    const double v = sx[i] = -6.0f + 0.05f * (float)i;
    want_g[i] = (float)(0.5 * v * (1.0 + erf(v / sqrt(2.0))));
    want_t[i] = (float)(0.5 * v * (1.0 + tanh(sqrt(2.0 / 3.14159265358979323846) * (v + 0.044715 * v * v * v))));
  }
  const float *sweep[] = {sx};
  s.activation = HETC_PLUGIN_ACT_GELU;
  run_ok(&s, sweep, NULL, sg);
  s.activation = HETC_PLUGIN_ACT_GELU_TANH;
  run_ok(&s, sweep, NULL, st);
  expect_torch(sg, want_g, SWEEP, 1e-6);
  expect_torch(st, want_t, SWEEP, 1e-6);

  /* One past the last activation of this minor is unknown. */
  w.activation = HETC_PLUGIN_ACT_ERF + 1;
  run_fails(&w, inputs, NULL, y, HETC_STATUS_UNSUPPORTED);
}

static void test_divide(void **state) {
  (void)state;
  hetc_plugin_tensor_t in[2] = {t4(1, 2, 1, 2), t4(1, 2, 1, 1)};
  hetc_plugin_workload_t w = workload(HETC_PLUGIN_OP_ELEMENTWISE, 2, in, t4(1, 2, 1, 2));
  w.binary = HETC_PLUGIN_BINARY_DIV;
  float a[4] = {1, -3, 8, 2}, b[2] = {2, -4}, y[4];
  const float *inputs[] = {a, b};
  run_ok(&w, inputs, NULL, y);
  const float want[4] = {0.5f, -1.5f, -2, -0.5f};
  expect_exact(y, want, 4);
}

static void test_binary_broadcast(void **state) {
  (void)state;
  float a[6] = {1, 2, 3, 4, 5, 6}, y[6];
  /* b [1,3] broadcast over rows. */
  hetc_plugin_tensor_t ins[2] = {t2(2, 3), t2(1, 3)};
  hetc_plugin_workload_t w = workload(HETC_PLUGIN_OP_ELEMENTWISE, 2, ins, t2(2, 3));
  w.binary = HETC_PLUGIN_BINARY_ADD;
  float b_row[3] = {10, 20, 30};
  const float *inputs[] = {a, b_row};
  run_ok(&w, inputs, NULL, y);
  const float want_add[6] = {11, 22, 33, 14, 25, 36};
  expect_exact(y, want_add, 6);

  /* b [2,1] broadcast over columns. */
  ins[1] = t2(2, 1);
  w.binary = HETC_PLUGIN_BINARY_MUL;
  float b_col[2] = {2, 3};
  const float *inputs2[] = {a, b_col};
  run_ok(&w, inputs2, NULL, y);
  const float want_mul[6] = {2, 4, 6, 12, 15, 18};
  expect_exact(y, want_mul, 6);

  /* Same shapes, and [1,1] (a scalar). */
  ins[1] = t2(2, 3);
  float b_full[6] = {6, 5, 4, 3, 2, 1};
  const float *inputs3[] = {a, b_full};
  w.binary = HETC_PLUGIN_BINARY_ADD;
  run_ok(&w, inputs3, NULL, y);
  for (int i = 0; i < 6; ++i) assert_true(y[i] == 7.0f);
  ins[1] = t2(1, 1);
  float b_one[1] = {-1};
  const float *inputs4[] = {a, b_one};
  run_ok(&w, inputs4, NULL, y);
  for (int i = 0; i < 6; ++i) assert_true(y[i] == a[i] - 1);

  /* 4-d per-channel scale [1,C,1,1], first input NCHWC(4) with C = 5, the
   * output NHWC: y[n,c,h,w] = x * (c+1). */
  hetc_plugin_tensor_t a4 = t4(2, 5, 2, 3);
  hetc_plugin_tensor_t ins4[2] = {with_layout(a4, HETC_PLUGIN_LAYOUT_NCHWC, 4),
                                  t4(1, 5, 1, 1)};
  hetc_plugin_tensor_t out4 = with_layout(a4, HETC_PLUGIN_LAYOUT_NHWC, 0);
  hetc_plugin_workload_t w4 = workload(HETC_PLUGIN_OP_ELEMENTWISE, 2, ins4, out4);
  w4.binary = HETC_PLUGIN_BINARY_MUL;
  float x[60], xl[2 * 8 * 6], scale[5] = {1, 2, 3, 4, 5}, yl[60], yr[60];
  fill_iota(x, 60, 1);
  assert_null(hetc_layout_convert(&a4, x, &ins4[0], xl));
  const float *inputs5[] = {xl, scale};
  run_ok(&w4, inputs5, NULL, yl);
  assert_null(hetc_layout_convert(&out4, yl, &a4, yr));
  for (int i = 0; i < 60; ++i)
    assert_true(yr[i] == x[i] * (float)((i / 6) % 5 + 1));
}

static void test_bias_add(void **state) {
  (void)state;
  hetc_plugin_tensor_t in2 = t2(2, 3);
  hetc_plugin_workload_t w = workload(HETC_PLUGIN_OP_BIAS_ADD, 1, &in2, t2(2, 3));
  float x[6] = {1, 2, 3, 4, 5, 6}, bias[3] = {-1, 0, 1}, y[6];
  const float *inputs[] = {x};
  const float *params[] = {bias};
  run_ok(&w, inputs, params, y);
  const float want2[6] = {0, 2, 4, 3, 5, 7};
  expect_exact(y, want2, 6);

  hetc_plugin_tensor_t in4 = t4(1, 2, 1, 3);
  w = workload(HETC_PLUGIN_OP_BIAS_ADD, 1, &in4, t4(1, 2, 1, 3));
  float b4[2] = {100, 200};
  const float *params4[] = {b4};
  run_ok(&w, inputs, params4, y);
  const float want4[6] = {101, 102, 103, 204, 205, 206};
  expect_exact(y, want4, 6);
}

/* Transpose against hand-written permutations: NCHW to NHWC, and a 5-d
 * channel shuffle; a perm that is not a permutation, or whose packed bits
 * run past the rank, is refused. */
static void test_transpose(void **state) {
  (void)state;
  hetc_plugin_tensor_t in = t4(1, 2, 2, 3);
  hetc_plugin_workload_t w = workload(HETC_PLUGIN_OP_TRANSPOSE, 1, &in, t4(1, 2, 3, 2));
  const int32_t nhwc[4] = {0, 2, 3, 1};
  for (int32_t d = 0; d < 4; ++d) w.axis |= HETC_PLUGIN_PERM_PACK_ONE(nhwc[d], d);
  float x[12], y[12];
  for (int i = 0; i < 12; ++i) x[i] = (float)i; /* x[c][h][w] = c*6 + h*3 + w */
  const float *inputs[] = {x};
  run_ok(&w, inputs, NULL, y);
  const float want_nhwc[12] = {0, 6, 1, 7, 2, 8, 3, 9, 4, 10, 5, 11}; /* y[h][w][c] */
  expect_exact(y, want_nhwc, 12);

  /* [1, 2 groups, 3 per group, 1, 2] with the group dims swapped. */
  hetc_plugin_tensor_t in5 = t4(1, 2, 3, 1);
  in5.rank = 5, in5.shape[4] = 2;
  hetc_plugin_tensor_t out5 = in5;
  out5.shape[1] = 3, out5.shape[2] = 2;
  w = workload(HETC_PLUGIN_OP_TRANSPOSE, 1, &in5, out5);
  const int32_t shuffle[5] = {0, 2, 1, 3, 4};
  for (int32_t d = 0; d < 5; ++d) w.axis |= HETC_PLUGIN_PERM_PACK_ONE(shuffle[d], d);
  run_ok(&w, inputs, NULL, y);
  /* Channels (g, k) -> (k, g): channel order 0 3 1 4 2 5, two values each. */
  const float want_shuffle[12] = {0, 1, 6, 7, 2, 3, 8, 9, 4, 5, 10, 11};
  expect_exact(y, want_shuffle, 12);

  w.axis = HETC_PLUGIN_PERM_PACK_ONE(1, 0) | HETC_PLUGIN_PERM_PACK_ONE(1, 1); /* 1 twice */
  run_fails(&w, inputs, NULL, y, HETC_STATUS_INVALID_ARGUMENT);
  w.axis = 0;
  for (int32_t d = 0; d < 5; ++d) w.axis |= HETC_PLUGIN_PERM_PACK_ONE(shuffle[d], d);
  w.axis |= HETC_PLUGIN_PERM_PACK_ONE(1, 5); /* a sixth entry on a rank-5 workload */
  run_fails(&w, inputs, NULL, y, HETC_STATUS_INVALID_ARGUMENT);
}

/* Resize (ABI 2.0) against hand-computed samplings: nearest repeats,
 * half-pixel ties rounding either way, linear with the source clamped at
 * the edges, align_corners, and pytorch_half_pixel's single output. */
static hetc_plugin_workload_t resize(hetc_plugin_tensor_t *in, int64_t oh, int64_t ow, int32_t mode,
                                     int32_t coordinates, int32_t rounding) {
  hetc_plugin_workload_t w = workload(HETC_PLUGIN_OP_RESIZE, 1, in, t4(in->shape[0], in->shape[1], oh, ow));
  w.params.resize = (hetc_plugin_resize_params_t){
      mode, coordinates, rounding, 0, {(double)oh / (double)in->shape[2], (double)ow / (double)in->shape[3]}};
  return w;
}

static void test_resize(void **state) {
  (void)state;
  float y[16];
  hetc_plugin_tensor_t in = t4(1, 1, 2, 2);
  const float x[4] = {0, 1, 2, 3};
  const float *inputs[] = {x};
  hetc_plugin_workload_t w =
      resize(&in, 4, 4, HETC_PLUGIN_RESIZE_NEAREST, HETC_PLUGIN_RESIZE_ASYMMETRIC, HETC_PLUGIN_RESIZE_FLOOR);
  run_ok(&w, inputs, NULL, y);
  const float repeated[16] = {0, 0, 1, 1, 0, 0, 1, 1, 2, 2, 3, 3, 2, 2, 3, 3};
  expect_exact(y, repeated, 16);

  /* Four columns to two at half_pixel: sources 0.5 and 2.5, both ties. */
  hetc_plugin_tensor_t row4 = t4(1, 1, 1, 4);
  const float x4[4] = {10, 11, 12, 13};
  const float *inputs4[] = {x4};
  w = resize(&row4, 1, 2, HETC_PLUGIN_RESIZE_NEAREST, HETC_PLUGIN_RESIZE_HALF_PIXEL,
             HETC_PLUGIN_RESIZE_ROUND_PREFER_FLOOR);
  run_ok(&w, inputs4, NULL, y);
  const float floors[2] = {10, 12};
  expect_exact(y, floors, 2);
  w.params.resize.rounding = HETC_PLUGIN_RESIZE_ROUND_PREFER_CEIL;
  run_ok(&w, inputs4, NULL, y);
  const float ceils[2] = {11, 13};
  expect_exact(y, ceils, 2);

  /* Two columns to four, linear: sources -0.25, 0.25, 0.75, 1.25, the
   * outer two clamped onto the edges. */
  hetc_plugin_tensor_t row2 = t4(1, 1, 1, 2);
  const float x2[2] = {0, 4};
  const float *inputs2[] = {x2};
  w = resize(&row2, 1, 4, HETC_PLUGIN_RESIZE_LINEAR, HETC_PLUGIN_RESIZE_HALF_PIXEL, 0);
  run_ok(&w, inputs2, NULL, y);
  const float blended[4] = {0, 1, 3, 4};
  expect_exact(y, blended, 4);

  /* Three to five with aligned corners: sources 0, 0.5, 1, 1.5, 2. */
  hetc_plugin_tensor_t row3 = t4(1, 1, 1, 3);
  const float x3[3] = {0, 2, 4};
  const float *inputs3[] = {x3};
  w = resize(&row3, 1, 5, HETC_PLUGIN_RESIZE_LINEAR, HETC_PLUGIN_RESIZE_ALIGN_CORNERS, 0);
  run_ok(&w, inputs3, NULL, y);
  const float aligned[5] = {0, 1, 2, 3, 4};
  expect_exact(y, aligned, 5);

  /* One output column: pytorch_half_pixel reads column 0, half_pixel the
   * middle ((0.5) * 3 - 0.5 = 1). */
  w = resize(&row3, 1, 1, HETC_PLUGIN_RESIZE_LINEAR, HETC_PLUGIN_RESIZE_PYTORCH_HALF_PIXEL, 0);
  run_ok(&w, inputs3, NULL, y);
  assert_true(y[0] == 0);
  w.params.resize.coordinates = HETC_PLUGIN_RESIZE_HALF_PIXEL;
  run_ok(&w, inputs3, NULL, y);
  assert_true(y[0] == 2);

  w.params.resize.mode = 7;
  run_fails(&w, inputs3, NULL, y, HETC_STATUS_INVALID_ARGUMENT);
  w.params.resize.mode = HETC_PLUGIN_RESIZE_LINEAR;
  w.params.resize.scales[1] = 0;
  run_fails(&w, inputs3, NULL, y, HETC_STATUS_INVALID_ARGUMENT);
}

/* Normalize (ABI 2.0) against hand-computed values: a group of [1, 3, 5]
 * (mean 3, biased variance 8 / 3) with scale and bias, groups of two channels apart,
 * and ConvNeXt's per-pixel LayerNorm over channels (inner 2). */
static void test_normalize(void **state) {
  (void)state;
  float y[12];
  const double inv = 1.0 / sqrt(8.0 / 3.0 + 1e-5);
  hetc_plugin_tensor_t row = t4(1, 1, 1, 3);
  row.rank = 2, row.shape[1] = 3;
  hetc_plugin_workload_t w = workload(HETC_PLUGIN_OP_NORMALIZE, 1, &row, row);
  w.params.normalize = (hetc_plugin_normalize_params_t){1, 1, 1, 0, 1e-5};
  const float x3[3] = {1, 3, 5};
  const float *inputs3[] = {x3};
  run_ok(&w, inputs3, NULL, y);
  assert_float_equal(y[0], -2 * inv, 1e-6);
  assert_float_equal(y[1], 0, 1e-6);
  assert_float_equal(y[2], 2 * inv, 1e-6);
  w.params.normalize.affine = 1;
  const float scale[3] = {1, 2, 3}, bias[3] = {10, 20, 30};
  const float *params[] = {scale, bias};
  run_ok(&w, inputs3, params, y);
  assert_float_equal(y[0], 10 - 2 * inv, 1e-5);
  assert_float_equal(y[1], 20, 1e-5);
  assert_float_equal(y[2], 30 + 6 * inv, 1e-5);

  /* [1, 4, 1, 2] in two groups of two channels: each group holds 1 3 1 3
   * (mean 2, variance 1) or 5 5 5 5 (variance 0: all 0). */
  hetc_plugin_tensor_t in = t4(1, 4, 1, 2);
  w = workload(HETC_PLUGIN_OP_NORMALIZE, 1, &in, in);
  w.params.normalize = (hetc_plugin_normalize_params_t){1, 3, 2, 0, 1e-5};
  const float x8[8] = {1, 3, 1, 3, 5, 5, 5, 5};
  const float *inputs8[] = {x8};
  run_ok(&w, inputs8, NULL, y);
  const double unit = 1.0 / sqrt(1.0 + 1e-5);
  for (int i = 0; i < 4; ++i) assert_float_equal(y[i], (i % 2 ? 1 : -1) * unit, 1e-6);
  for (int i = 4; i < 8; ++i) assert_float_equal(y[i], 0, 1e-6);

  /* Over the channels only: pixel 0 sees 1 3 1 3, pixel 1 sees 3 1 3 1. */
  w.params.normalize = (hetc_plugin_normalize_params_t){1, 1, 1, 0, 1e-5};
  const float x8b[8] = {1, 3, 3, 1, 1, 3, 3, 1};
  const float *inputs8b[] = {x8b};
  run_ok(&w, inputs8b, NULL, y);
  const float want[8] = {-1, 1, 1, -1, -1, 1, 1, -1};
  for (int i = 0; i < 8; ++i) assert_float_equal(y[i], want[i] * unit, 1e-6);

  w.params.normalize.groups = 3; /* does not divide 4 */
  run_fails(&w, inputs8b, NULL, y, HETC_STATUS_INVALID_ARGUMENT);
  w.params.normalize.groups = 1;
  w.params.normalize.num_axes = 4; /* past rank 4 from axis 1 */
  run_fails(&w, inputs8b, NULL, y, HETC_STATUS_INVALID_ARGUMENT);
}

/* Matmul (ABI 2.0) against hand-computed products: two batches of
 * [2, 3] x [3, 2], the second batch's B the identity's first two columns
 * doubled; then shapes that do not multiply. */
static void test_matmul(void **state) {
  (void)state;
  int64_t da[3] = {2, 2, 3}, db[3] = {2, 3, 2}, dy[3] = {2, 2, 2};
  const hetc_plugin_tensor_t in[2] = {tensor(3, da, HETC_PLUGIN_LAYOUT_ROW_MAJOR, 0),
                                      tensor(3, db, HETC_PLUGIN_LAYOUT_ROW_MAJOR, 0)};
  hetc_plugin_workload_t w = workload(HETC_PLUGIN_OP_MATMUL, 2, in, tensor(3, dy, HETC_PLUGIN_LAYOUT_ROW_MAJOR, 0));
  const float a[12] = {1, 2, 3, 4, 5, 6, /* batch 1 */ 1, 2, 3, 4, 5, 6};
  const float b[12] = {1, 0, 0, 1, 1, 1, /* batch 1 */ 2, 0, 0, 2, 0, 0};
  const float *inputs[] = {a, b};
  float y[8];
  run_ok(&w, inputs, NULL, y);
  /* [1 2 3] x [[1 0] [0 1] [1 1]] = [4 5]; [4 5 6] -> [10 11]. */
  const float want[8] = {4, 5, 10, 11, 2, 4, 8, 10};
  for (int i = 0; i < 8; ++i) assert_float_equal(y[i], want[i], 0);

  hetc_plugin_tensor_t bad[2] = {in[0], in[1]};
  bad[1].shape[1] = 4; /* K differs */
  w.inputs = bad;
  run_fails(&w, inputs, NULL, y, HETC_STATUS_INVALID_ARGUMENT);
  bad[1] = in[1];
  bad[1].shape[0] = 1; /* batch dims differ */
  run_fails(&w, inputs, NULL, y, HETC_STATUS_INVALID_ARGUMENT);
  w.inputs = in;
  w.num_inputs = 1;
  run_fails(&w, inputs, NULL, y, HETC_STATUS_INVALID_ARGUMENT);
}

static void test_batch_norm(void **state) {
  (void)state;
  /* Channel 0: gamma 2, var 3, eps 1 -> scale 1; (x-1)+1 = x.
   * Channel 1: gamma 1, var 0, eps 0.25 -> scale 2; 2(x-0)-1. */
  float x[4] = {1, 2, 3, 4}, y[4];
  const float gamma[2] = {2, 1}, beta[2] = {1, -1}, mean[2] = {1, 0};
  const float var[2] = {3, 0};
  hetc_reference_batch_norm(1, 2, 2, x, gamma, beta, mean, var, 1.0f, y);
  assert_true(y[0] == 1 && y[1] == 2);
  hetc_reference_batch_norm(1, 2, 2, x, gamma, beta, mean, var, 0.25f, y);
  assert_true(y[2] == 5 && y[3] == 7);
}

/* ------------------------------------------------------------------------ */
/* softmax, log_softmax, concat, layout_transform                           */
/* ------------------------------------------------------------------------ */

/* log_softmax is x - max - log(sum exp(x - max)): finite where softmax
 * rounds to 0 (-2000 against 0 is e^-2000). */
static void test_log_softmax(void **state) {
  (void)state;
  hetc_plugin_tensor_t in = t2(2, 3);
  hetc_plugin_workload_t w = workload(HETC_PLUGIN_OP_LOG_SOFTMAX, 1, &in, t2(2, 3));
  w.axis = 1;
  float x[6] = {0, (float)log(2.0), (float)log(5.0), -2000, 0, 0}, y[6];
  const float *inputs[] = {x};
  run_ok(&w, inputs, NULL, y);
  const float want[6] = {(float)log(0.125), (float)log(0.25), (float)log(0.625), -2000 - (float)log(2.0),
                         -(float)log(2.0), -(float)log(2.0)};
  expect_close(y, want, 6, 1e-7);
  w.axis = 2;
  run_fails(&w, inputs, NULL, y, HETC_STATUS_INVALID_ARGUMENT);
}

static void test_softmax(void **state) {
  (void)state;
  hetc_plugin_tensor_t in = t2(2, 3);
  hetc_plugin_workload_t w = workload(HETC_PLUGIN_OP_SOFTMAX, 1, &in, t2(2, 3));
  w.axis = 1;
  /* Row 0 [0, ln 2, ln 5] -> [1, 2, 5] / 8. Row 1: huge logits overflow
   * exp() unless the row's max (not its first element) is subtracted. */
  float x[6] = {0, (float)log(2.0), (float)log(5.0), -1000, 1000, 1000}, y[6];
  const float *inputs[] = {x};
  run_ok(&w, inputs, NULL, y);
  const float want[6] = {0.125f, 0.25f, 0.625f, 0, 0.5f, 0.5f};
  expect_close(y, want, 6, 1e-7);

  /* Axis 0 pairs x[0][j] with x[1][j]. */
  float x0[6] = {0, 1, 2, 0, 1, 2 + (float)log(3.0)};
  const float *inputs0[] = {x0};
  w.axis = 0;
  run_ok(&w, inputs0, NULL, y);
  const float want0[6] = {0.5f, 0.5f, 0.25f, 0.5f, 0.5f, 0.75f};
  expect_close(y, want0, 6, 1e-7);

  /* 4-d over channels in NCHWC(4) with C = 5: each (n,h,w) sums to 1. */
  hetc_plugin_tensor_t r4 = t4(2, 5, 3, 2);
  hetc_plugin_tensor_t l4 = with_layout(r4, HETC_PLUGIN_LAYOUT_NCHWC, 4);
  hetc_plugin_workload_t w4 = workload(HETC_PLUGIN_OP_SOFTMAX, 1, &l4, l4);
  w4.axis = 1;
  float xr[60], xl[2 * 8 * 6], yl[2 * 8 * 6], yr[60];
  fill_pseudo(xr, 60, 9);
  for (int i = 0; i < 60; ++i) xr[i] *= 10;
  assert_null(hetc_layout_convert(&r4, xr, &l4, xl));
  const float *inputs4[] = {xl};
  run_ok(&w4, inputs4, NULL, yl);
  assert_null(hetc_layout_convert(&l4, yl, &r4, yr));
  for (int n = 0; n < 2; ++n)
    for (int s = 0; s < 6; ++s) {
      double sum = 0;
      for (int c = 0; c < 5; ++c) {
        float v = yr[(n * 5 + c) * 6 + s];
        assert_true(v >= 0 && v <= 1);
        sum += v;
      }
      assert_float_equal(sum, 1.0, 1e-6);
    }
  /* Padding channels of the NCHWC output are zero, not softmax mass. */
  for (int n = 0; n < 2; ++n)
    for (int s = 0; s < 6; ++s)
      for (int c = 5; c < 8; ++c)
        assert_true(yl[((n * 2 + 1) * 6 + s) * 4 + (c - 4)] == 0.0f);
}

static void test_concat(void **state) {
  (void)state;
  /* Channels: [1,2,1,2] + [1,1,1,2] -> [1,3,1,2]. */
  hetc_plugin_tensor_t ins[2] = {t4(1, 2, 1, 2), t4(1, 1, 1, 2)};
  hetc_plugin_workload_t w =
      workload(HETC_PLUGIN_OP_CONCAT, 2, ins, t4(1, 3, 1, 2));
  w.axis = 1;
  float a[4] = {1, 2, 3, 4}, b[2] = {5, 6}, y[6];
  const float *inputs[] = {a, b};
  run_ok(&w, inputs, NULL, y);
  const float want[6] = {1, 2, 3, 4, 5, 6};
  expect_exact(y, want, 6);

  /* Last axis of 2-d interleaves rows. */
  hetc_plugin_tensor_t ins2[2] = {t2(2, 2), t2(2, 1)};
  hetc_plugin_workload_t w2 = workload(HETC_PLUGIN_OP_CONCAT, 2, ins2, t2(2, 3));
  w2.axis = 1;
  run_ok(&w2, inputs, NULL, y);
  const float want2[6] = {1, 2, 5, 3, 4, 6};
  expect_exact(y, want2, 6);

  /* Channels in NCHWC(4) with C = 3 + 2 -> 5, output NCHWC(8). */
  hetc_plugin_tensor_t r[2] = {t4(1, 3, 1, 2), t4(1, 2, 1, 2)};
  hetc_plugin_tensor_t l[2] = {with_layout(r[0], HETC_PLUGIN_LAYOUT_NCHWC, 4),
                               with_layout(r[1], HETC_PLUGIN_LAYOUT_NCHWC, 4)};
  hetc_plugin_tensor_t ro = t4(1, 5, 1, 2);
  hetc_plugin_tensor_t lo = with_layout(ro, HETC_PLUGIN_LAYOUT_NCHWC, 8);
  hetc_plugin_workload_t w3 = workload(HETC_PLUGIN_OP_CONCAT, 2, l, lo);
  w3.axis = 1;
  float ra[6] = {1, 2, 3, 4, 5, 6}, rb[4] = {7, 8, 9, 10};
  float la[8], lb[8], lyo[16], yo[10];
  assert_null(hetc_layout_convert(&r[0], ra, &l[0], la));
  assert_null(hetc_layout_convert(&r[1], rb, &l[1], lb));
  const float *inputs3[] = {la, lb};
  run_ok(&w3, inputs3, NULL, lyo);
  assert_null(hetc_layout_convert(&lo, lyo, &ro, yo));
  const float want3[10] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10};
  expect_exact(yo, want3, 10);
}

static void test_layout_transform_and_reshape(void **state) {
  (void)state;
  /* NCHWC(4) -> NHWC of [1,5,2,1]: a pure layout change. */
  hetc_plugin_tensor_t r = t4(1, 5, 2, 1);
  hetc_plugin_tensor_t l = with_layout(r, HETC_PLUGIN_LAYOUT_NCHWC, 4);
  hetc_plugin_tensor_t nhwc = with_layout(r, HETC_PLUGIN_LAYOUT_NHWC, 0);
  float x[10], xl[16], y[10];
  fill_iota(x, 10, 0);
  assert_null(hetc_layout_convert(&r, x, &l, xl));
  hetc_plugin_workload_t w = workload(HETC_PLUGIN_OP_LAYOUT_TRANSFORM, 1, &l, nhwc);
  const float *inputs[] = {xl};
  run_ok(&w, inputs, NULL, y);
  /* NHWC: h=0 holds channels 0..4 at w=0: x[c*2+0]. */
  const float want[10] = {0, 2, 4, 6, 8, 1, 3, 5, 7, 9};
  expect_exact(y, want, 10);

  /* Flatten: NCHWC [1,5,2,1] -> [1,10] keeps row-major NCHW order. */
  hetc_plugin_workload_t f = workload(HETC_PLUGIN_OP_LAYOUT_TRANSFORM, 1, &l, t2(1, 10));
  run_ok(&f, inputs, NULL, y);
  expect_exact(y, x, 10);

  /* Reshape [1,10] -> [1,5,1,2] in NHWC: element k of the input is logical
   * (c = k/2, w = k%2), stored at w*5 + c. */
  hetc_plugin_tensor_t flat = t2(1, 10);
  hetc_plugin_tensor_t shaped = with_layout(t4(1, 5, 1, 2), HETC_PLUGIN_LAYOUT_NHWC, 0);
  hetc_plugin_workload_t u = workload(HETC_PLUGIN_OP_LAYOUT_TRANSFORM, 1, &flat, shaped);
  const float *flat_in[] = {x};
  run_ok(&u, flat_in, NULL, y);
  for (int k = 0; k < 10; ++k) assert_true(y[(k % 2) * 5 + k / 2] == x[k]);

  /* Different element counts are no reshape. */
  hetc_plugin_workload_t bad = workload(HETC_PLUGIN_OP_LAYOUT_TRANSFORM, 1, &flat, t2(1, 9));
  run_fails(&bad, flat_in, NULL, y, HETC_STATUS_INVALID_ARGUMENT);
}

/* ------------------------------------------------------------------------ */
/* Layout conversion                                                        */
/* ------------------------------------------------------------------------ */

static void round_trip(int64_t n, int64_t c, int64_t h, int64_t w) {
  hetc_plugin_tensor_t r = t4(n, c, h, w);
  hetc_plugin_tensor_t b8 = with_layout(r, HETC_PLUGIN_LAYOUT_NCHWC, 8);
  hetc_plugin_tensor_t nhwc = with_layout(r, HETC_PLUGIN_LAYOUT_NHWC, 0);
  int64_t count = n * c * h * w;
  int64_t cb = (c + 7) / 8;
  assert_int_equal(hetc_layout_element_count(&r), count);
  assert_int_equal(hetc_layout_element_count(&nhwc), count);
  assert_int_equal(hetc_layout_element_count(&b8), n * cb * 8 * h * w);
  float *x = malloc(sizeof(float) * (size_t)count);
  float *blocked = malloc(sizeof(float) * (size_t)(n * cb * 8 * h * w));
  float *hwc = malloc(sizeof(float) * (size_t)count);
  float *back = malloc(sizeof(float) * (size_t)count);
  fill_iota(x, count, 1);
  /* Garbage first, so zeroing the padding is the converter's doing. */
  for (int64_t i = 0; i < n * cb * 8 * h * w; ++i) blocked[i] = NAN;
  assert_null(hetc_layout_convert(&r, x, &b8, blocked));
  for (int64_t in = 0; in < n; ++in)
    for (int64_t ic = 0; ic < cb * 8; ++ic)
      for (int64_t ih = 0; ih < h; ++ih)
        for (int64_t iw = 0; iw < w; ++iw) {
          float v = blocked[(((in * cb + ic / 8) * h + ih) * w + iw) * 8 + ic % 8];
          float want = ic < c ? x[((in * c + ic) * h + ih) * w + iw] : 0.0f;
          assert_true(v == want);
        }
  assert_null(hetc_layout_convert(&b8, blocked, &nhwc, hwc));
  for (int64_t in = 0; in < n; ++in)
    for (int64_t ic = 0; ic < c; ++ic)
      for (int64_t ih = 0; ih < h; ++ih)
        for (int64_t iw = 0; iw < w; ++iw)
          assert_true(hwc[((in * h + ih) * w + iw) * c + ic] ==
                      x[((in * c + ic) * h + ih) * w + iw]);
  assert_null(hetc_layout_convert(&nhwc, hwc, &r, back));
  expect_exact(back, x, count);
  free(x);
  free(blocked);
  free(hwc);
  free(back);
}

static void test_layout_round_trips(void **state) {
  (void)state;
  round_trip(1, 5, 3, 4);
  round_trip(2, 13, 2, 3);
  round_trip(1, 8, 1, 1);
  round_trip(3, 1, 5, 2);
  round_trip(1, 16, 3, 3);
}

static void test_layout_element_count_and_errors(void **state) {
  (void)state;
  int64_t d3[3] = {2, 3, 4};
  hetc_plugin_tensor_t r3 = tensor(3, d3, HETC_PLUGIN_LAYOUT_ROW_MAJOR, 0);
  assert_int_equal(hetc_layout_element_count(&r3), 24);
  hetc_plugin_tensor_t bad = with_layout(r3, HETC_PLUGIN_LAYOUT_NCHWC, 8);
  assert_int_equal(hetc_layout_element_count(&bad), -1);
  hetc_plugin_tensor_t zero_block =
      with_layout(t4(1, 3, 1, 1), HETC_PLUGIN_LAYOUT_NCHWC, 0);
  assert_int_equal(hetc_layout_element_count(&zero_block), -1);
  hetc_plugin_tensor_t unknown = with_layout(t4(1, 3, 1, 1), 7, 0);
  assert_int_equal(hetc_layout_element_count(&unknown), -1);

  /* Any rank row-major -> row-major is a copy. */
  float x[24], y[24];
  fill_iota(x, 24, 0);
  assert_null(hetc_layout_convert(&r3, x, &r3, y));
  expect_exact(y, x, 24);

  hetc_status_t s = hetc_layout_convert(&r3, x, &bad, y);
  assert_int_equal(hetc_status_code(s), HETC_STATUS_INVALID_ARGUMENT);
  hetc_status_free(s);
  hetc_plugin_tensor_t other = t4(1, 3, 2, 4);
  hetc_plugin_tensor_t other_nhwc = with_layout(t4(1, 3, 4, 2), HETC_PLUGIN_LAYOUT_NHWC, 0);
  s = hetc_layout_convert(&other, x, &other_nhwc, y);
  assert_int_equal(hetc_status_code(s), HETC_STATUS_INVALID_ARGUMENT);
  hetc_status_free(s);
}

/* ------------------------------------------------------------------------ */
/* Rejections                                                               */
/* ------------------------------------------------------------------------ */

static void test_rejects_inconsistent_workloads(void **state) {
  (void)state;
  float buf[256] = {0}, out[256];
  const float *inputs[] = {buf, buf, buf};
  const float *params[] = {buf, buf};

  /* conv2d: output spatial size wrong (3x3 kernel on 5x5 gives 3x3). */
  hetc_plugin_tensor_t in = t4(1, 2, 5, 5);
  hetc_plugin_workload_t c = conv_workload(&in, 1, t4(1, 2, 4, 4), 3, 3);
  run_fails(&c, inputs, params, out, HETC_STATUS_INVALID_ARGUMENT);
  c.output = t4(1, 2, 3, 3);
  run_ok(&c, inputs, params, out);
  /* Groups that do not divide, zero stride, zero dilation, batch mismatch. */
  c.groups = 3;
  run_fails(&c, inputs, params, out, HETC_STATUS_INVALID_ARGUMENT);
  c.groups = 1;
  c.strides[0] = 0;
  run_fails(&c, inputs, params, out, HETC_STATUS_INVALID_ARGUMENT);
  c.strides[0] = 1;
  c.dilation[1] = 0;
  run_fails(&c, inputs, params, out, HETC_STATUS_INVALID_ARGUMENT);
  c.dilation[1] = 1;
  c.output = t4(2, 2, 3, 3);
  run_fails(&c, inputs, params, out, HETC_STATUS_INVALID_ARGUMENT);
  c.output = t4(1, 2, 3, 3);
  /* A residual flag with no residual input; a residual of the wrong shape. */
  c.epilogue.has_residual = 1;
  run_fails(&c, inputs, params, out, HETC_STATUS_INVALID_ARGUMENT);
  hetc_plugin_tensor_t ins_r[2] = {t4(1, 2, 5, 5), t4(1, 2, 3, 2)};
  c.inputs = ins_r;
  c.num_inputs = 2;
  run_fails(&c, inputs, params, out, HETC_STATUS_INVALID_ARGUMENT);
  ins_r[1] = t4(1, 2, 3, 3);
  run_ok(&c, inputs, params, out);
  /* A bias flag with no bias param. */
  c.epilogue.has_bias = 1;
  const float *one_param[] = {buf, NULL};
  run_fails(&c, inputs, one_param, out, HETC_STATUS_INVALID_ARGUMENT);
  c.epilogue.activation = 99;
  run_fails(&c, inputs, params, out, HETC_STATUS_UNSUPPORTED);

  /* dense: N mismatch. */
  hetc_plugin_tensor_t din = t2(2, 3);
  hetc_plugin_workload_t d = workload(HETC_PLUGIN_OP_DENSE, 1, &din, t2(3, 4));
  run_fails(&d, inputs, params, out, HETC_STATUS_INVALID_ARGUMENT);

  /* Binary: 2 does not broadcast to 3. */
  hetc_plugin_tensor_t bins[2] = {t2(2, 3), t2(1, 2)};
  hetc_plugin_workload_t b = workload(HETC_PLUGIN_OP_ELEMENTWISE, 2, bins, t2(2, 3));
  b.binary = HETC_PLUGIN_BINARY_ADD;
  run_fails(&b, inputs, NULL, out, HETC_STATUS_INVALID_ARGUMENT);
  bins[1] = t2(1, 3);
  run_ok(&b, inputs, NULL, out);
  b.output = t2(1, 3); /* the output has the first input's shape */
  run_fails(&b, inputs, NULL, out, HETC_STATUS_INVALID_ARGUMENT);
  /* Unary with nothing to do. */
  hetc_plugin_workload_t u = workload(HETC_PLUGIN_OP_ELEMENTWISE, 1, bins, t2(2, 3));
  run_fails(&u, inputs, NULL, out, HETC_STATUS_INVALID_ARGUMENT);

  /* Concat along channels whose sizes do not add up, or other dims differ. */
  hetc_plugin_tensor_t cins[2] = {t4(1, 2, 2, 2), t4(1, 3, 2, 2)};
  hetc_plugin_workload_t k = workload(HETC_PLUGIN_OP_CONCAT, 2, cins, t4(1, 4, 2, 2));
  k.axis = 1;
  run_fails(&k, inputs, NULL, out, HETC_STATUS_INVALID_ARGUMENT);
  k.output = t4(1, 5, 2, 2);
  run_ok(&k, inputs, NULL, out);
  cins[1] = t4(1, 3, 2, 1);
  k.output = t4(1, 5, 2, 2);
  run_fails(&k, inputs, NULL, out, HETC_STATUS_INVALID_ARGUMENT);

  /* Softmax axis out of range. */
  hetc_plugin_tensor_t sin = t2(2, 3);
  hetc_plugin_workload_t s = workload(HETC_PLUGIN_OP_SOFTMAX, 1, &sin, t2(2, 3));
  s.axis = 2;
  run_fails(&s, inputs, NULL, out, HETC_STATUS_INVALID_ARGUMENT);

  /* Pool: padding not below the kernel; output size wrong. */
  hetc_plugin_tensor_t pin = t4(1, 1, 4, 4);
  hetc_plugin_workload_t p =
      pool_workload(HETC_PLUGIN_OP_MAX_POOL2D, &pin, t4(1, 1, 3, 3), 2, 2, 2);
  run_fails(&p, inputs, NULL, out, HETC_STATUS_INVALID_ARGUMENT);
  p = pool_workload(HETC_PLUGIN_OP_AVG_POOL2D, &pin, t4(1, 1, 3, 3), 2, 2, 0);
  run_fails(&p, inputs, NULL, out, HETC_STATUS_INVALID_ARGUMENT);
  /* An epilogue on an op that has none. */
  p.output = t4(1, 1, 2, 2);
  p.epilogue.activation = HETC_PLUGIN_ACT_RELU;
  run_fails(&p, inputs, NULL, out, HETC_STATUS_UNSUPPORTED);

  /* NCHWC on a 2-d tensor, a dim of 0, another dtype, an unknown op. */
  hetc_plugin_tensor_t bad2 = with_layout(t2(2, 3), HETC_PLUGIN_LAYOUT_NCHWC, 4);
  hetc_plugin_workload_t r = workload(HETC_PLUGIN_OP_ELEMENTWISE, 1, &bad2, t2(2, 3));
  r.activation = HETC_PLUGIN_ACT_RELU;
  run_fails(&r, inputs, NULL, out, HETC_STATUS_INVALID_ARGUMENT);
  hetc_plugin_tensor_t zero = t2(2, 0);
  r.inputs = &zero;
  r.output = zero;
  run_fails(&r, inputs, NULL, out, HETC_STATUS_INVALID_ARGUMENT);
  hetc_plugin_tensor_t f16 = t2(2, 3);
  f16.dtype = 2;
  r.inputs = &f16;
  r.output = f16;
  run_fails(&r, inputs, NULL, out, HETC_STATUS_UNSUPPORTED);
  hetc_plugin_tensor_t ok = t2(2, 3);
  r.inputs = &ok;
  r.output = ok;
  run_ok(&r, inputs, NULL, out);
  r.op = HETC_PLUGIN_OP_COUNT_;
  run_fails(&r, inputs, NULL, out, HETC_STATUS_UNSUPPORTED);
  r.op = HETC_PLUGIN_OP_ELEMENTWISE;
  const float *null_input[] = {NULL};
  run_fails(&r, null_input, NULL, out, HETC_STATUS_INVALID_ARGUMENT);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_conv2d_diagonal_kernel),
      cmocka_unit_test(test_conv2d_asymmetric_padding_stride),
      cmocka_unit_test(test_conv2d_dilation),
      cmocka_unit_test(test_conv2d_groups_and_depthwise),
      cmocka_unit_test(test_conv2d_batch_and_channels),
      cmocka_unit_test(test_conv2d_epilogue_order),
      cmocka_unit_test(test_conv2d_every_layout),
      cmocka_unit_test(test_conv2d_ways_agree),
      cmocka_unit_test(test_dense),
      cmocka_unit_test(test_max_pool_basic),
      cmocka_unit_test(test_max_pool_ceil_mode),
      cmocka_unit_test(test_avg_pool_count_include_pad),
      cmocka_unit_test(test_global_avg_pool),
      cmocka_unit_test(test_unary),
      cmocka_unit_test(test_binary_broadcast),
      cmocka_unit_test(test_bias_add),
      cmocka_unit_test(test_batch_norm),
      cmocka_unit_test(test_softmax),
      cmocka_unit_test(test_log_softmax),
      cmocka_unit_test(test_concat),
      cmocka_unit_test(test_transpose),
      cmocka_unit_test(test_resize),
      cmocka_unit_test(test_normalize),
      cmocka_unit_test(test_matmul),
      cmocka_unit_test(test_divide),
      cmocka_unit_test(test_torch_activations),
      cmocka_unit_test(test_torch_activation_epilogues),
      cmocka_unit_test(test_gelu_and_erf),
      cmocka_unit_test(test_layout_transform_and_reshape),
      cmocka_unit_test(test_layout_round_trips),
      cmocka_unit_test(test_layout_element_count_and_errors),
      cmocka_unit_test(test_rejects_inconsistent_workloads),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
