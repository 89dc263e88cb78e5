/* The cpu plugin through the real driver registry and host: the conv2d
 * spaces never offer a config that spills registers or overruns the stack
 * budget (the conv2d kernels themselves: test_template_conformance_cpu);
 * every other op on random shapes in every input layout hint, dense with
 * its default and a sampled config, each against the reference executor
 * within a max relative error of 1e-4; resize on a fixed list of cases in
 * every layout hint, tighter (nearest exact); normalize on a fixed list
 * in every layout hint within 1e-5, and on inputs of 1000 + noise;
 * matmul on random shapes and hints, its default and a sampled config;
 * emit/load round-trips an artifact.
 * HETC_KERNELS_TARGET=name runs only the other ops, on that target (the
 * ops test of another plugin, e.g. opencl), HETC_KERNELS_ROUNDS=n draws n
 * rounds of them instead of 40 (for backends whose kernels build slowly).
 * HETC_KERNELS_TIMES set prints the median times of typical normalize
 * workloads on the target (example_c: the plugin kit's reference kernel),
 * and on cpu those of attention's matmuls beside ViT-B's dense layers.
 * ctest runs it twice on the cpu target, with HETC_CPU_ISA=avx2 and =avx512;
 * the AVX-512 run skips (77), saying so, on a machine without AVX-512. */
#include <float.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "graph/infer.h"
#include "kernel/kernel_args.h"
#include "kernel_check.h"
#include "reference/reference.h"
#include "space/space.h"

#define TOLERANCE 1e-4
#define NUM_CONV 36
#define SAMPLES 2
#define MAX_NAMES 16

static uint64_t rng = 0xc0ffee;

static int64_t next(int64_t lo, int64_t hi) { return hetc_kernel_check_random(&rng, lo, hi); }

static hetc_registry_t *registry;
static hetc_plugin_entry_t *entry;

static const char *target_name(void) {
  const char *name = getenv("HETC_KERNELS_TARGET");
  return name && *name ? name : "cpu";
}

static int setup(void **state) {
  (void)state;
  if (hetc_registry_open(&registry)) return -1;
  hetc_status_t s = hetc_registry_target(registry, target_name(), &entry);
  if (s) {
    fprintf(stderr, "%s target: %s\n", target_name(), hetc_status_message(s));
    if (hetc_status_code(s) == HETC_STATUS_UNAVAILABLE && getenv("HETC_CPU_ISA")) {
      printf("skipped: this machine cannot run HETC_CPU_ISA=%s\n", getenv("HETC_CPU_ISA"));
      exit(77);
    }
    return -1;
  }
  return 0;
}

static int teardown(void **state) {
  (void)state;
  hetc_registry_free(registry);
  return 0;
}

static hetc_plugin_tensor_t tensor4(int64_t n, int64_t c, int64_t h, int64_t w) {
  return (hetc_plugin_tensor_t){HETC_PLUGIN_DTYPE_FLOAT32, 4, {n, c, h, w}, {0, 0}};
}

static void random_conv(hetc_plugin_workload_t *w, hetc_plugin_tensor_t *inputs, int index) {
  static const kernel_check_conv_limits_t limits = {40, 72, 40, 14, 20};
  hetc_kernel_check_random_conv(&rng, &limits, index, w, inputs);
}

static double check(const hetc_plugin_workload_t *w, int32_t t, const hetc_plugin_config_t *config,
                    uint64_t seed, const char *what) {
  kernel_check_result_t result;
  hetc_status_t s = hetc_kernel_check_run(entry, w, t, config, seed, 0, &result);
  if (s) fail_msg("%s: %s", what, hetc_status_message(s));
  if (!(result.max_relative_error <= TOLERANCE))
    fail_msg("%s: max relative error %.3e", what, result.max_relative_error);
  return result.max_relative_error;
}

/* check() with template t's default config and one sampled valid config. */
static double check_default_and_sampled(const hetc_plugin_workload_t *w, int32_t t, uint64_t seed,
                                        const char *what) {
  hetc_plugin_space_t *space = NULL;
  assert_null(hetc_space_create(&space));
  hetc_status_t s = entry->plugin->template_define_space(entry->instance, 0, w, t, space);
  if (s) fail_msg("%s: define_space: %s", what, hetc_status_message(s));
  int64_t indices[2];
  assert_null(hetc_space_default(space, &indices[0]));
  assert_null(hetc_space_sample_valid(space, &rng, &indices[1]));
  double worst = 0;
  for (int k = 0; k < 2; ++k) {
    hetc_space_config_t config;
    assert_null(hetc_space_config_at(space, indices[k], &config));
    double e = check(w, t, &config.view, seed + (uint64_t)k, what);
    worst = e > worst ? e : worst;
  }
  hetc_space_free(space);
  return worst;
}

/* The spaces never offer a register block that spills or a stack panel over
 * budget: every config sampled from every conv2d template of 200 random
 * workloads (and an exhaustive walk of the small ones) fits. The kernels
 * themselves are checked by test_template_conformance_cpu. */
static void spaces_respect_limits(void **state) {
  (void)state;
  const hetc_plugin_t *p = entry->plugin;
  /* AVX-512: 32 registers, 16-lane vectors where tile_oc is a multiple of
   * 16 (else 8-lane ones); AVX2: 16 registers of 8 lanes. */
  const int32_t width = p->device_get(entry->instance, 0)->simd_width_fp32;
  assert_true(width == 8 || width == 16);
  const int64_t registers = width == 16 ? 32 : 16;
  printf("vector width %d lanes, %lld registers\n", width, (long long)registers);
  int configs = 0;
  for (int i = 0; i < 200; ++i) {
    hetc_plugin_workload_t w;
    hetc_plugin_tensor_t inputs[2];
    random_conv(&w, inputs, i);
    if (i % 2) hetc_kernel_check_conv_3x3_stride1(&w, inputs);
    for (int32_t t = 0; t < p->template_count(entry->instance, 0, &w); ++t) {
      hetc_plugin_space_t *space = NULL;
      assert_null(hetc_space_create(&space));
      assert_null(p->template_define_space(entry->instance, 0, &w, t, space));
      const int64_t size = hetc_space_size(space);
      for (int k = 0; k < 64; ++k) {
        int64_t index = k;
        if (size > 64) assert_null(hetc_space_sample_valid(space, &rng, &index));
        else if (k >= size) break;
        hetc_space_config_t config;
        assert_null(hetc_space_config_at(space, index, &config));
        if (size <= 64 && !hetc_space_is_valid(space, index)) continue;
        const hetc_plugin_knob_value_t *reg = hetc_config_find(&config.view, "reg_n");
        const hetc_plugin_knob_value_t *oc = hetc_config_find(&config.view, "tile_oc");
        const hetc_plugin_knob_value_t *tiles = hetc_config_find(&config.view, "tiles");
        const hetc_plugin_knob_value_t *tk = hetc_config_find(&config.view, "tile_k");
        /* accumulators + B vectors + the broadcast input <= the registers */
        if (reg && oc) {
          const int64_t lanes = oc->values[0] % width == 0 ? width : 8;
          const int64_t vectors = oc->values[0] / lanes;
          assert_true(oc->values[0] % 8 == 0);
          assert_true(reg->values[0] * vectors + vectors + 1 <= registers);
        }
        /* stack buffers <= 512 KiB */
        if (tiles && tk && reg) assert_true(tiles->values[0] * reg->values[0] * tk->values[0] * 4 <= 512 * 1024);
        ++configs;
      }
      hetc_space_free(space);
    }
  }
  printf("%d configs within the register and stack limits\n", configs);
}

static const hetc_plugin_layout_t layouts[] = {
    {HETC_PLUGIN_LAYOUT_ROW_MAJOR, 0}, {HETC_PLUGIN_LAYOUT_NCHWC, 8}, {HETC_PLUGIN_LAYOUT_NCHWC, 16},
    {HETC_PLUGIN_LAYOUT_NHWC, 0},      {HETC_PLUGIN_LAYOUT_NCHWC, 3},
};
#define NUM_LAYOUTS (int)(sizeof(layouts) / sizeof(layouts[0]))

static void other_ops(void **state) {
  (void)state;
  double worst = 0;
  int checked = 0;
  char what[128];
  const int rounds = getenv("HETC_KERNELS_ROUNDS") ? atoi(getenv("HETC_KERNELS_ROUNDS")) : 40;
  assert_true(rounds >= 1);
  for (int i = 0; i < rounds; ++i) {
    hetc_plugin_layout_t hint = layouts[i % NUM_LAYOUTS];
    hetc_plugin_workload_t w;
    hetc_plugin_tensor_t in[4];
    /* pools */
    memset(&w, 0, sizeof(w));
    w.op = i % 2 ? HETC_PLUGIN_OP_MAX_POOL2D : HETC_PLUGIN_OP_AVG_POOL2D;
    for (;;) {
      w.kernel[0] = (int32_t)next(1, 4);
      w.kernel[1] = (int32_t)next(1, 4);
      w.strides[0] = (int32_t)next(1, 3);
      w.strides[1] = (int32_t)next(1, 3);
      w.padding[0] = (int32_t)next(0, w.kernel[0] - 1);
      w.padding[2] = (int32_t)next(0, w.kernel[0] - 1);
      w.padding[1] = (int32_t)next(0, w.kernel[1] - 1);
      w.padding[3] = (int32_t)next(0, w.kernel[1] - 1);
      w.ceil_mode = (int32_t)next(0, 1);
      w.count_include_pad = (int32_t)next(0, 1);
      w.dilation[0] = w.dilation[1] = 1;
      int64_t h = next(2, 12), wd = next(2, 12);
      int64_t oh = hetc_window_output_extent(h, w.kernel[0], w.strides[0], w.padding[0], w.padding[2], 1,
                                             w.ceil_mode);
      int64_t ow = hetc_window_output_extent(wd, w.kernel[1], w.strides[1], w.padding[1], w.padding[3], 1,
                                             w.ceil_mode);
      if (oh < 1 || ow < 1) continue;
      in[0] = tensor4(next(1, 2), next(1, 20), h, wd);
      w.output = tensor4(in[0].shape[0], in[0].shape[1], oh, ow);
      break;
    }
    in[0].layout = hint;
    w.num_inputs = 1;
    w.inputs = in;
    snprintf(what, sizeof(what), "pool %d", i);
    double e = check(&w, 0, NULL, (uint64_t)i, what);
    worst = e > worst ? e : worst;
    /* global average pool */
    w.op = HETC_PLUGIN_OP_GLOBAL_AVG_POOL2D;
    memset(w.kernel, 0, sizeof(w.kernel));
    w.output = tensor4(in[0].shape[0], in[0].shape[1], 1, 1);
    snprintf(what, sizeof(what), "global pool %d", i);
    e = check(&w, 0, NULL, (uint64_t)i, what);
    worst = e > worst ? e : worst;
    /* elementwise: unary, then binary with broadcast */
    memset(&w, 0, sizeof(w));
    w.op = HETC_PLUGIN_OP_ELEMENTWISE;
    in[0] = tensor4(next(1, 2), next(1, 20), next(1, 7), next(1, 7));
    in[0].layout = hint;
    w.output = in[0];
    w.output.layout = (hetc_plugin_layout_t){0, 0};
    w.inputs = in;
    w.num_inputs = 1;
    w.activation = (int32_t)next(1, 4);
    snprintf(what, sizeof(what), "unary %d", i);
    e = check(&w, 0, NULL, (uint64_t)i, what);
    worst = e > worst ? e : worst;
    w.activation = 0;
    w.binary = (int32_t)next(1, 2);
    w.num_inputs = 2;
    in[1] = in[0];
    for (int d = 0; d < 4; ++d)
      if (next(0, 2) == 0) in[1].shape[d] = 1;
    in[1].layout = layouts[(i + 1) % NUM_LAYOUTS];
    snprintf(what, sizeof(what), "binary %d", i);
    e = check(&w, 0, NULL, (uint64_t)i, what);
    worst = e > worst ? e : worst;
    /* A per-channel second operand ([N or 1, C, 1, 1]) of a blocked tensor,
     * as squeeze-and-excitation scales: its vector form (gen.c), padding
     * channels included (C not a multiple of the block). */
    in[0].layout = layouts[1 + i % (NUM_LAYOUTS - 1)];
    in[1] = tensor4(next(0, 1) ? in[0].shape[0] : 1, in[0].shape[1], 1, 1);
    in[1].layout = layouts[(i + 2) % NUM_LAYOUTS];
    w.binary = 1 + i % 3;
    snprintf(what, sizeof(what), "channel binary %d", i);
    e = check(&w, 0, NULL, (uint64_t)i, what);
    worst = e > worst ? e : worst;
    /* bias_add */
    memset(&w, 0, sizeof(w));
    w.op = HETC_PLUGIN_OP_BIAS_ADD;
    w.num_inputs = 1;
    w.inputs = in;
    w.output = in[0];
    snprintf(what, sizeof(what), "bias_add %d", i);
    e = check(&w, 0, NULL, (uint64_t)i, what);
    worst = e > worst ? e : worst;
    /* softmax over a random axis */
    memset(&w, 0, sizeof(w));
    w.op = HETC_PLUGIN_OP_SOFTMAX;
    w.num_inputs = 1;
    w.inputs = in;
    w.axis = (int32_t)next(0, 3);
    w.output = in[0];
    snprintf(what, sizeof(what), "softmax %d", i);
    e = check(&w, 0, NULL, (uint64_t)i, what);
    worst = e > worst ? e : worst;
    /* concat of 1..3 inputs along a random axis */
    memset(&w, 0, sizeof(w));
    w.op = HETC_PLUGIN_OP_CONCAT;
    w.axis = (int32_t)next(0, 3);
    w.num_inputs = (int32_t)next(1, 3);
    hetc_plugin_tensor_t base = tensor4(next(1, 2), next(1, 12), next(1, 6), next(1, 6));
    w.output = base;
    w.output.shape[w.axis] = 0;
    for (int j = 0; j < w.num_inputs; ++j) {
      in[j] = base;
      in[j].shape[w.axis] = next(1, 9);
      in[j].layout = layouts[(i + j) % NUM_LAYOUTS];
      w.output.shape[w.axis] += in[j].shape[w.axis];
    }
    w.inputs = in;
    snprintf(what, sizeof(what), "concat %d", i);
    e = check(&w, 0, NULL, (uint64_t)i, what);
    worst = e > worst ? e : worst;
    /* A channel concat of inputs in different blocks of 8k channels, each
     * with a multiple of 8 channels (the vector copy), padding included. */
    {
      static const int32_t blocks[] = {8, 16, 24};
      memset(&w, 0, sizeof(w));
      w.op = HETC_PLUGIN_OP_CONCAT;
      w.axis = 1;
      w.num_inputs = (int32_t)next(1, 3);
      hetc_plugin_tensor_t slice = tensor4(next(1, 2), 8, next(1, 5), next(1, 5));
      w.output = slice;
      w.output.shape[1] = 0;
      for (int j = 0; j < w.num_inputs; ++j) {
        in[j] = slice;
        in[j].shape[1] = 8 * next(1, 4);
        in[j].layout = (hetc_plugin_layout_t){HETC_PLUGIN_LAYOUT_NCHWC, blocks[(i + j) % 3]};
        w.output.shape[1] += in[j].shape[1];
      }
      w.inputs = in;
      snprintf(what, sizeof(what), "concat of %d blocked inputs %d", w.num_inputs, i);
      e = check(&w, 0, NULL, (uint64_t)i, what);
      worst = e > worst ? e : worst;
    }
    /* layout transform to every layout, and a flatten */
    memset(&w, 0, sizeof(w));
    w.op = HETC_PLUGIN_OP_LAYOUT_TRANSFORM;
    w.num_inputs = 1;
    in[0] = tensor4(next(1, 2), next(1, 20), next(1, 5), next(1, 5));
    in[0].layout = hint;
    w.inputs = in;
    w.output = in[0];
    w.output.layout = layouts[(i * 3 + 1) % NUM_LAYOUTS];
    snprintf(what, sizeof(what), "layout %d", i);
    e = check(&w, 0, NULL, (uint64_t)i, what);
    worst = e > worst ? e : worst;
    /* Between two blocks of 8k channels (the vector copy), padding
     * channels included. */
    {
      static const int32_t blocks[] = {8, 16, 24};
      hetc_plugin_tensor_t blocked = tensor4(next(1, 2), next(1, 40), next(1, 5), next(1, 5));
      blocked.layout = (hetc_plugin_layout_t){HETC_PLUGIN_LAYOUT_NCHWC, blocks[i % 3]};
      w.inputs = &blocked;
      w.output = blocked;
      w.output.layout.block = blocks[(i / 3 + 1 + i % 3) % 3];
      snprintf(what, sizeof(what), "layout NCHW%dc->NCHW%dc %d", blocked.layout.block, w.output.layout.block, i);
      e = check(&w, 0, NULL, (uint64_t)i, what);
      worst = e > worst ? e : worst;
      w.inputs = in;
    }
    w.output = (hetc_plugin_tensor_t){HETC_PLUGIN_DTYPE_FLOAT32, 2,
                                      {in[0].shape[0], in[0].shape[1] * in[0].shape[2] * in[0].shape[3]},
                                      {0, 0}};
    snprintf(what, sizeof(what), "flatten %d", i);
    e = check(&w, 0, NULL, (uint64_t)i, what);
    worst = e > worst ? e : worst;
    /* dense with every epilogue */
    memset(&w, 0, sizeof(w));
    w.op = HETC_PLUGIN_OP_DENSE;
    in[0] = (hetc_plugin_tensor_t){HETC_PLUGIN_DTYPE_FLOAT32, 2, {next(1, 9), next(1, 70)}, {0, 0}};
    w.output = (hetc_plugin_tensor_t){HETC_PLUGIN_DTYPE_FLOAT32, 2, {in[0].shape[0], next(1, 40)}, {0, 0}};
    w.epilogue.has_bias = (int32_t)next(0, 1);
    w.epilogue.has_residual = (int32_t)next(0, 1);
    w.epilogue.activation = (int32_t)next(0, 4);
    in[1] = w.output;
    w.num_inputs = 1 + w.epilogue.has_residual;
    w.inputs = in;
    snprintf(what, sizeof(what), "dense %d", i);
    e = check_default_and_sampled(&w, 0, (uint64_t)i, what);
    worst = e > worst ? e : worst;
    checked += 11;
  }
  printf("other ops: %d kernels checked, worst max relative error %.3e\n", checked, worst);
}

/* resize (ABI 2.0): every coordinate transform with the roundings and modes
 * ONNX models use, upscales by 2 and 8, non-integer up- and downscales
 * (7 -> 10, 13 -> 5), a scale that is not output / input (1.5 on 7 rows:
 * 10), one output row, batches of 2, channel counts that fill no block;
 * each in every layout hint (row-major: vectors over the row; NCHW8c,
 * NCHW16c: vectors over the block; NHWC, NCHW3c: other pixel widths, 72
 * channels a pixel: more vectors than the kernel unrolls; row-major rows
 * both permuted and gathered, see gen_resize.c). The kernel must
 * read and write the hinted layout. Nearest must pick exactly the
 * reference's pixels (error 0); linear is within 1e-5 of the reference,
 * which blends in double. */
typedef struct resize_case_t {
  int64_t n, c, h, w, oh, ow;
  int32_t mode, coordinates, rounding;
  double scale_h, scale_w; /* 0: output / input */
} resize_case_t;

#define NEAREST HETC_PLUGIN_RESIZE_NEAREST
#define LINEAR HETC_PLUGIN_RESIZE_LINEAR
static const resize_case_t resize_cases[] = {
    {1, 5, 6, 7, 12, 14, NEAREST, HETC_PLUGIN_RESIZE_ASYMMETRIC, HETC_PLUGIN_RESIZE_ROUND_PREFER_FLOOR, 0, 0},
    {1, 3, 7, 13, 10, 5, NEAREST, HETC_PLUGIN_RESIZE_ASYMMETRIC, HETC_PLUGIN_RESIZE_FLOOR, 0, 0},
    {2, 19, 7, 13, 10, 5, NEAREST, HETC_PLUGIN_RESIZE_HALF_PIXEL, HETC_PLUGIN_RESIZE_CEIL, 0, 0},
    {1, 21, 9, 11, 18, 22, NEAREST, HETC_PLUGIN_RESIZE_HALF_PIXEL, HETC_PLUGIN_RESIZE_ROUND_PREFER_FLOOR, 0, 0},
    {1, 10, 7, 13, 10, 5, NEAREST, HETC_PLUGIN_RESIZE_ALIGN_CORNERS, HETC_PLUGIN_RESIZE_ROUND_PREFER_CEIL, 0, 0},
    {1, 9, 13, 7, 5, 10, NEAREST, HETC_PLUGIN_RESIZE_ALIGN_CORNERS, HETC_PLUGIN_RESIZE_ROUND_PREFER_FLOOR, 0, 0},
    {2, 6, 5, 6, 15, 18, NEAREST, HETC_PLUGIN_RESIZE_TF_HALF_PIXEL_FOR_NN, HETC_PLUGIN_RESIZE_ROUND_PREFER_CEIL, 0, 0},
    {1, 72, 4, 5, 8, 10, NEAREST, HETC_PLUGIN_RESIZE_ASYMMETRIC, HETC_PLUGIN_RESIZE_FLOOR, 0, 0},
    {1, 4, 7, 7, 1, 3, NEAREST, HETC_PLUGIN_RESIZE_HALF_PIXEL, HETC_PLUGIN_RESIZE_ROUND_PREFER_FLOOR, 0, 0},
    {2, 21, 9, 11, 18, 22, LINEAR, HETC_PLUGIN_RESIZE_HALF_PIXEL, 0, 0, 0},
    {1, 21, 5, 6, 40, 48, LINEAR, HETC_PLUGIN_RESIZE_HALF_PIXEL, 0, 0, 0},
    {1, 13, 7, 13, 10, 5, LINEAR, HETC_PLUGIN_RESIZE_PYTORCH_HALF_PIXEL, 0, 0, 0},
    {2, 17, 13, 7, 5, 10, LINEAR, HETC_PLUGIN_RESIZE_HALF_PIXEL, 0, 0, 0},
    {1, 11, 7, 13, 10, 5, LINEAR, HETC_PLUGIN_RESIZE_ALIGN_CORNERS, 0, 0, 0},
    {1, 16, 6, 6, 12, 12, LINEAR, HETC_PLUGIN_RESIZE_ALIGN_CORNERS, 0, 0, 0},
    {1, 8, 6, 7, 12, 14, LINEAR, HETC_PLUGIN_RESIZE_ASYMMETRIC, 0, 0, 0},
    {1, 17, 7, 13, 1, 9, LINEAR, HETC_PLUGIN_RESIZE_HALF_PIXEL, 0, 0, 0},
    {1, 17, 7, 13, 1, 9, LINEAR, HETC_PLUGIN_RESIZE_PYTORCH_HALF_PIXEL, 0, 0, 0},
    {1, 72, 5, 4, 9, 7, LINEAR, HETC_PLUGIN_RESIZE_HALF_PIXEL_SYMMETRIC, 0, 0, 0},
    {1, 7, 7, 9, 10, 13, LINEAR, HETC_PLUGIN_RESIZE_HALF_PIXEL, 0, 1.5, 1.5},
    {2, 3, 7, 9, 10, 13, NEAREST, HETC_PLUGIN_RESIZE_ASYMMETRIC, HETC_PLUGIN_RESIZE_ROUND_PREFER_FLOOR, 1.5, 1.5},
    /* Rows downscaled by more than 2: an output vector's taps span more
     * columns than a vector holds (row-major: gathered, not permuted). */
    {1, 3, 5, 40, 4, 9, LINEAR, HETC_PLUGIN_RESIZE_HALF_PIXEL, 0, 0, 0},
    {2, 2, 6, 50, 3, 7, NEAREST, HETC_PLUGIN_RESIZE_ASYMMETRIC, HETC_PLUGIN_RESIZE_ROUND_PREFER_FLOOR, 0, 0},
    {1, 2, 4, 100, 9, 37, LINEAR, HETC_PLUGIN_RESIZE_ALIGN_CORNERS, 0, 0, 0},
};
#define NUM_RESIZE_CASES (int)(sizeof(resize_cases) / sizeof(resize_cases[0]))

static int same_layout(hetc_plugin_layout_t a, hetc_plugin_layout_t b) {
  return a.kind == b.kind && a.block == b.block;
}

static void resize_workload(const resize_case_t *k, hetc_plugin_tensor_t *in, hetc_plugin_layout_t hint,
                            hetc_plugin_workload_t *w) {
  memset(w, 0, sizeof(*w));
  *in = tensor4(k->n, k->c, k->h, k->w);
  in->layout = hint;
  w->op = HETC_PLUGIN_OP_RESIZE;
  w->num_inputs = 1;
  w->inputs = in;
  w->output = tensor4(k->n, k->c, k->oh, k->ow);
  w->params.resize.mode = k->mode;
  w->params.resize.coordinates = k->coordinates;
  w->params.resize.rounding = k->rounding;
  w->params.resize.scales[0] = k->scale_h > 0 ? k->scale_h : (double)k->oh / (double)k->h;
  w->params.resize.scales[1] = k->scale_w > 0 ? k->scale_w : (double)k->ow / (double)k->w;
}

static void resize_ops(void **state) {
  (void)state;
  const hetc_plugin_t *p = entry->plugin;
  double worst = 0;
  int checked = 0;
  char what[160];
  static const char *const kinds[] = {"row-major", "NCHWc block", "NHWC"};
  for (int i = 0; i < NUM_RESIZE_CASES; ++i) {
    const resize_case_t *k = &resize_cases[i];
    for (int l = 0; l < NUM_LAYOUTS; ++l) {
      hetc_plugin_tensor_t in;
      hetc_plugin_workload_t w;
      resize_workload(k, &in, layouts[l], &w);
      snprintf(what, sizeof(what), "resize %d (%s %lldx%lld -> %lldx%lld, C %lld) on %s %d", i,
               k->mode == LINEAR ? "linear" : "nearest", (long long)k->h, (long long)k->w, (long long)k->oh,
               (long long)k->ow, (long long)k->c, kinds[layouts[l].kind], layouts[l].block);
      assert_int_equal(p->template_count(entry->instance, 0, &w), 1);
      hetc_plugin_artifact_t *a = NULL;
      hetc_status_t s = (hetc_status_t)p->build(entry->instance, 0, &w, 0, NULL, &a);
      if (s) fail_msg("%s: build: %s", what, hetc_status_message(s));
      const hetc_plugin_artifact_info_t *info = p->artifact_info(a);
      if (!same_layout(info->input_layouts[0], layouts[l]) || !same_layout(info->output_layout, layouts[l]))
        fail_msg("%s: reads or writes another layout than the hint", what);
      kernel_check_result_t result;
      s = hetc_kernel_check_artifact(entry, 0, &w, 0, a, (uint64_t)(i * NUM_LAYOUTS + l), 0, &result);
      p->artifact_release(entry->instance, a);
      if (s) fail_msg("%s: %s", what, hetc_status_message(s));
      const double limit = k->mode == NEAREST ? 0 : 1e-5;
      if (!(result.max_relative_error <= limit))
        fail_msg("%s: max relative error %.3e, above %g", what, result.max_relative_error, limit);
      worst = result.max_relative_error > worst ? result.max_relative_error : worst;
      ++checked;
    }
  }
  printf("resize: %d kernels checked, worst max relative error %.3e\n", checked, worst);
}

/* A resize's taps are arrays in its module: an output wider than the
 * plugin's limit is refused, with a reason, not built. Two resizes that
 * differ only in their coordinate transform are different kernels: the
 * object of one is refused for the other. */
static void resize_limits_and_keys(void **state) {
  (void)state;
  const hetc_plugin_t *p = entry->plugin;
  hetc_plugin_tensor_t in;
  hetc_plugin_workload_t w;
  const resize_case_t wide = {1, 1, 1, 2, 1, 70000, NEAREST, HETC_PLUGIN_RESIZE_ASYMMETRIC, 0, 0, 0};
  resize_workload(&wide, &in, layouts[0], &w);
  assert_int_equal(p->template_count(entry->instance, 0, &w), 0);
  hetc_plugin_artifact_t *a = NULL;
  hetc_status_t s = (hetc_status_t)p->build(entry->instance, 0, &w, 0, NULL, &a);
  assert_non_null(s);
  assert_int_equal(hetc_status_code(s), HETC_STATUS_UNSUPPORTED);
  hetc_status_free(s);

  resize_workload(&resize_cases[9], &in, layouts[1], &w);
  assert_null(p->build(entry->instance, 0, &w, 0, NULL, &a));
  char dir[] = "/tmp/hetc-cpu-test-XXXXXX";
  assert_non_null(mkdtemp(dir));
  assert_null(p->artifact_emit(entry->instance, a, dir, "r0"));
  hetc_plugin_artifact_t *b = NULL;
  assert_null(p->artifact_load(entry->instance, 0, &w, 0, NULL, dir, "r0", &b));
  p->artifact_release(entry->instance, b);
  w.params.resize.coordinates = HETC_PLUGIN_RESIZE_PYTORCH_HALF_PIXEL;
  s = (hetc_status_t)p->artifact_load(entry->instance, 0, &w, 0, NULL, dir, "r0", &b);
  assert_non_null(s);
  hetc_status_free(s);
  p->artifact_release(entry->instance, a);
  char path[256];
  snprintf(path, sizeof(path), "%s/r0.o", dir);
  remove(path);
  snprintf(path, sizeof(path), "%s/r0.ir-hash", dir);
  remove(path);
  rmdir(dir);
}

/* normalize (ABI 2.0): instance norm, group norm with 1, 2, C and
 * in-between groups (2, 16 and 32 channels a group, and 3, which no
 * block of 8k holds whole), layer norm of the last dim and of NCHW's
 * channels (ConvNeXt: columns of H x W, tiles cut short at 33 columns),
 * groups of channels per pixel, ranks 2, 3, 5 and 6, the first dim
 * normalized, affine on and off, few long lines (split in parts); every 4-d case with axis 1 in every
 * layout hint and blocks of 24 and 32 (a block of 24 is no number of ISA
 * vectors). The kernel must read and write the producer's NCHW[b]c
 * (b a multiple of 8) where its blocked forms apply -- instance norm,
 * groups within a block or of whole blocks, layer norm of the channels
 * -- else row-major both; its output within 1e-5 of the reference, which
 * sums in double, padding channels zero. */
typedef struct normalize_case_t {
  int32_t rank;
  int64_t shape[HETC_PLUGIN_MAX_RANK];
  hetc_plugin_normalize_params_t params; /* axis, num_axes, groups, affine, epsilon */
} normalize_case_t;

static const normalize_case_t normalize_cases[] = {
    {4, {1, 6, 5, 7}, {1, 3, 6, 1, 1e-5}},      {4, {2, 20, 9, 11}, {1, 3, 20, 0, 1e-5}},
    {4, {1, 16, 8, 8}, {1, 3, 16, 1, 1e-5}},    {4, {2, 8, 3, 5}, {1, 3, 1, 1, 1e-5}},
    {4, {2, 8, 3, 5}, {1, 3, 2, 0, 1e-5}},      {4, {1, 64, 6, 6}, {1, 3, 32, 1, 1e-5}},
    {4, {1, 64, 4, 5}, {1, 3, 4, 1, 1e-6}},     {4, {1, 96, 3, 3}, {1, 3, 3, 0, 1e-5}},
    {4, {1, 12, 5, 5}, {1, 3, 4, 1, 1e-5}},     {3, {2, 7, 48}, {2, 1, 1, 1, 1e-6}},
    {3, {1, 5, 37}, {2, 1, 1, 0, 1e-5}},        {2, {3, 100}, {1, 1, 1, 1, 1e-5}},
    {4, {1, 2, 3, 40}, {3, 1, 1, 1, 1e-5}},     {4, {1, 24, 5, 7}, {1, 1, 1, 1, 1e-6}},
    {4, {2, 40, 3, 11}, {1, 1, 1, 0, 1e-6}},    {4, {1, 96, 8, 8}, {1, 1, 1, 1, 1e-6}},
    {4, {1, 10, 1, 1}, {1, 1, 1, 1, 1e-6}},     {4, {1, 20, 7, 9}, {1, 1, 2, 1, 1e-6}},
    {3, {2, 12, 10}, {1, 2, 3, 1, 1e-5}},       {3, {2, 12, 10}, {1, 1, 4, 1, 1e-5}},
    {5, {1, 8, 3, 4, 5}, {1, 4, 2, 1, 1e-5}},   {5, {2, 6, 3, 4, 5}, {1, 2, 3, 0, 1e-5}},
    {2, {33, 17}, {0, 1, 1, 1, 1e-5}},          {6, {1, 2, 3, 2, 2, 5}, {2, 3, 3, 1, 1e-5}},
    /* Few lines of many values, split in parts summed in a first phase:
     * GroupNorm(1, C) (parts cut channels short), two long last dims,
     * instance norm and 2 groups of whole blocks in NCHW[b]c (61 x 37
     * pixels: a part no number of vectors). */
    {4, {1, 16, 40, 41}, {1, 3, 1, 1, 1e-5}},   {2, {2, 20000}, {1, 1, 1, 1, 1e-5}},
    {4, {1, 32, 48, 40}, {1, 3, 32, 1, 1e-5}},  {4, {1, 16, 61, 37}, {1, 3, 16, 0, 1e-5}},
    {4, {1, 64, 24, 30}, {1, 3, 2, 1, 1e-5}},
    /* One pixel a channel: every variance 0. */
    {4, {2, 16, 1, 1}, {1, 3, 16, 1, 1e-5}},     {4, {1, 32, 1, 1}, {1, 3, 2, 0, 1e-5}},
};
#define NUM_NORMALIZE_CASES (int)(sizeof(normalize_cases) / sizeof(normalize_cases[0]))

static const hetc_plugin_layout_t normalize_layouts[] = {
    {HETC_PLUGIN_LAYOUT_ROW_MAJOR, 0}, {HETC_PLUGIN_LAYOUT_NCHWC, 8},  {HETC_PLUGIN_LAYOUT_NCHWC, 16},
    {HETC_PLUGIN_LAYOUT_NHWC, 0},      {HETC_PLUGIN_LAYOUT_NCHWC, 3},  {HETC_PLUGIN_LAYOUT_NCHWC, 24},
    {HETC_PLUGIN_LAYOUT_NCHWC, 32},
};
#define NUM_NORMALIZE_LAYOUTS (int)(sizeof(normalize_layouts) / sizeof(normalize_layouts[0]))

static void normalize_workload(const normalize_case_t *k, hetc_plugin_tensor_t *in, hetc_plugin_layout_t hint,
                               hetc_plugin_workload_t *w) {
  memset(w, 0, sizeof(*w));
  memset(in, 0, sizeof(*in));
  in->dtype = HETC_PLUGIN_DTYPE_FLOAT32;
  in->rank = k->rank;
  memcpy(in->shape, k->shape, sizeof(in->shape));
  w->op = HETC_PLUGIN_OP_NORMALIZE;
  w->num_inputs = 1;
  w->inputs = in;
  w->output = *in;
  in->layout = hint;
  w->params.normalize = k->params;
}

/* The layout the cpu kernel must take for `hint`: the hint itself where
 * a blocked form applies. */
static hetc_plugin_layout_t normalize_expected_layout(const normalize_case_t *k, hetc_plugin_layout_t hint) {
  const hetc_plugin_normalize_params_t *p = &k->params;
  const int64_t b = hint.block, per_group = k->shape[1] / p->groups;
  const int blocked = k->rank == 4 && p->axis == 1 && hint.kind == HETC_PLUGIN_LAYOUT_NCHWC && b % 8 == 0 &&
                      ((p->num_axes == 3 && (per_group % b == 0 || b % per_group == 0)) ||
                       (p->num_axes == 1 && p->groups == 1));
  return blocked ? hint : (hetc_plugin_layout_t){HETC_PLUGIN_LAYOUT_ROW_MAJOR, 0};
}

static hetc_plugin_artifact_t *normalize_build(const hetc_plugin_workload_t *w, hetc_plugin_layout_t expected,
                                               const char *what) {
  const hetc_plugin_t *p = entry->plugin;
  assert_int_equal(p->template_count(entry->instance, 0, w), 1);
  hetc_plugin_artifact_t *a = NULL;
  hetc_status_t s = (hetc_status_t)p->build(entry->instance, 0, w, 0, NULL, &a);
  if (s) fail_msg("%s: build: %s", what, hetc_status_message(s));
  const hetc_plugin_artifact_info_t *info = p->artifact_info(a);
  if (!same_layout(info->input_layouts[0], expected) || !same_layout(info->output_layout, expected))
    fail_msg("%s: reads kind %d block %d, writes kind %d block %d; kind %d block %d expected", what,
             info->input_layouts[0].kind, info->input_layouts[0].block, info->output_layout.kind,
             info->output_layout.block, expected.kind, expected.block);
  return a;
}

static void normalize_what(char *what, size_t size, const char *prefix, const normalize_case_t *k,
                           hetc_plugin_layout_t hint) {
  int n = snprintf(what, size, "%s [", prefix);
  for (int32_t d = 0; d < k->rank; ++d)
    n += snprintf(what + n, size - (size_t)n, "%s%lld", d ? "x" : "", (long long)k->shape[d]);
  snprintf(what + n, size - (size_t)n, "] axis %d axes %d groups %d affine %d, hint kind %d block %d", k->params.axis,
           k->params.num_axes, k->params.groups, k->params.affine, hint.kind, hint.block);
}

static void normalize_ops(void **state) {
  (void)state;
  const hetc_plugin_t *p = entry->plugin;
  double worst = 0;
  int checked = 0, blocked = 0;
  char what[256];
  for (int i = 0; i < NUM_NORMALIZE_CASES; ++i) {
    const normalize_case_t *k = &normalize_cases[i];
    const int hints = k->rank == 4 && k->params.axis == 1 ? NUM_NORMALIZE_LAYOUTS : 1;
    for (int l = 0; l < hints; ++l) {
      hetc_plugin_tensor_t in;
      hetc_plugin_workload_t w;
      normalize_workload(k, &in, normalize_layouts[l], &w);
      normalize_what(what, sizeof(what), "normalize", k, normalize_layouts[l]);
      const hetc_plugin_layout_t expected = normalize_expected_layout(k, normalize_layouts[l]);
      hetc_plugin_artifact_t *a = normalize_build(&w, expected, what);
      kernel_check_result_t result;
      hetc_status_t s = hetc_kernel_check_artifact(entry, 0, &w, 0, a, (uint64_t)(i * 16 + l), 0, &result);
      p->artifact_release(entry->instance, a);
      if (s) fail_msg("%s: %s", what, hetc_status_message(s));
      if (!(result.max_relative_error <= 1e-5))
        fail_msg("%s: max relative error %.3e, above 1e-5", what, result.max_relative_error);
      worst = result.max_relative_error > worst ? result.max_relative_error : worst;
      blocked += expected.kind == HETC_PLUGIN_LAYOUT_NCHWC;
      ++checked;
    }
  }
  printf("normalize: %d kernels checked (%d on NCHW[b]c), worst max relative error %.3e\n", checked, blocked, worst);
}

static uint64_t normalize_rng = 0x5eed;

/* U[-1, 1) in steps of 2^-23. */
static float uniform(void) {
  return (float)hetc_kernel_check_random(&normalize_rng, -(1 << 23), (1 << 23) - 1) / (float)(1 << 23);
}

/* Runs case k under `hint` on x (logical row-major; scale and bias when
 * affine) and returns the max relative error against
 * hetc_reference_normalize; fails on a nonzero padding channel. */
static double normalize_against_reference(const normalize_case_t *k, hetc_plugin_layout_t hint, const float *x,
                                          const float *scale, const float *bias, const char *what) {
  const hetc_plugin_t *p = entry->plugin;
  hetc_plugin_tensor_t in;
  hetc_plugin_workload_t w;
  normalize_workload(k, &in, hint, &w);
  hetc_plugin_artifact_t *a = normalize_build(&w, normalize_expected_layout(k, hint), what);
  hetc_plugin_tensor_t logical = in, physical = in;
  logical.layout = (hetc_plugin_layout_t){HETC_PLUGIN_LAYOUT_ROW_MAJOR, 0};
  physical.layout = p->artifact_info(a)->output_layout;
  const int64_t count = hetc_layout_element_count(&logical), padded = hetc_layout_element_count(&physical);
  float *got = malloc(sizeof(float) * (size_t)count), *want = malloc(sizeof(float) * (size_t)count);
  float *raw = malloc(sizeof(float) * (size_t)padded);
  assert_true(got && want && raw);
  const float *inputs[1] = {x}, *params[2] = {scale, bias};
  hetc_kernel_args_t args;
  memset(&args, 0, sizeof(args));
  hetc_status_t s = hetc_kernel_args_create(entry, 0, &w, a, inputs, k->params.affine ? params : NULL, &args);
  if (!s) s = hetc_kernel_args_run(&args, a);
  if (!s) s = hetc_kernel_args_read_output(&args, &w, got, raw);
  hetc_kernel_args_release(&args);
  p->artifact_release(entry->instance, a);
  if (s) fail_msg("%s: %s", what, hetc_status_message(s));
  w.inputs = &logical;
  w.output = logical;
  s = hetc_reference_normalize(&w, x, scale, bias, want);
  if (s) fail_msg("%s: reference: %s", what, hetc_status_message(s));
  double max_diff = 0, max_ref = 0;
  for (int64_t i = 0; i < count; ++i) {
    const double diff = fabs((double)got[i] - want[i]);
    if (!(diff <= max_diff)) max_diff = diff;
    max_ref = fabs(want[i]) > max_ref ? fabs(want[i]) : max_ref;
  }
  if (physical.layout.kind == HETC_PLUGIN_LAYOUT_NCHWC) {
    const int64_t b = physical.layout.block, blocks = (k->shape[1] + b - 1) / b, plane = k->shape[2] * k->shape[3];
    for (int64_t n = 0; n < k->shape[0]; ++n)
      for (int64_t c = k->shape[1]; c < blocks * b; ++c)
        for (int64_t q = 0; q < plane; ++q)
          if (raw[((n * blocks + c / b) * plane + q) * b + c % b] != 0.0f)
            fail_msg("%s: padding channel %lld is not zero", what, (long long)c);
  }
  free(got);
  free(want);
  free(raw);
  return max_diff / max_ref;
}

/* Values of 1000 + U[-1, 1) (and 10^4 +): a shared offset that float's
 * E[x^2] - E[x]^2 turns into garbage, and that a mean rounded to one float
 * (half an ulp of 1000 is 3e-5) would carry into every output. Each form
 * (row-major line and columns, NCHW[b]c groups and pixels, padded
 * blocks), with and without affine (scale and bias U[-1, 1)), within
 * 1e-5 of hetc_reference_normalize. */
static void normalize_large_offset(void **state) {
  (void)state;
  static const normalize_case_t cases[] = {
      {4, {1, 16, 28, 28}, {1, 3, 16, 1, 1e-5}}, {4, {1, 12, 9, 9}, {1, 3, 12, 0, 1e-5}},
      {4, {1, 64, 7, 9}, {1, 3, 32, 1, 1e-5}},   {4, {2, 64, 5, 5}, {1, 3, 2, 0, 1e-5}},
      {3, {2, 13, 768}, {2, 1, 1, 1, 1e-6}},     {3, {2, 13, 100}, {2, 1, 1, 0, 1e-6}},
      {4, {1, 96, 9, 9}, {1, 1, 1, 1, 1e-6}},    {4, {1, 20, 6, 7}, {1, 1, 1, 0, 1e-6}},
      {4, {1, 8, 64, 64}, {1, 3, 1, 1, 1e-5}},   {4, {1, 16, 48, 48}, {1, 3, 16, 1, 1e-5}},
  };
  static const hetc_plugin_layout_t hints[] = {
      {HETC_PLUGIN_LAYOUT_ROW_MAJOR, 0}, {HETC_PLUGIN_LAYOUT_NCHWC, 8}, {HETC_PLUGIN_LAYOUT_NCHWC, 16}};
  static const double offsets[] = {1000, 1e4};
  double worst = 0;
  char what[256];
  for (int i = 0; i < (int)(sizeof(cases) / sizeof(cases[0])); ++i) {
    const normalize_case_t *k = &cases[i];
    int64_t count = 1;
    for (int32_t d = 0; d < k->rank; ++d) count *= k->shape[d];
    const int64_t channels = k->shape[k->params.axis];
    float *x = malloc(sizeof(float) * (size_t)count), *scale = malloc(sizeof(float) * (size_t)channels);
    float *bias = malloc(sizeof(float) * (size_t)channels);
    assert_true(x && scale && bias);
    for (int64_t c = 0; c < channels; ++c) {
      scale[c] = uniform();
      bias[c] = uniform();
    }
    for (int o = 0; o < 2; ++o) {
      for (int64_t j = 0; j < count; ++j) x[j] = (float)(offsets[o] + uniform());
      const int nh = k->rank == 4 ? 3 : 1;
      for (int h = 0; h < nh; ++h) {
        normalize_what(what, sizeof(what), offsets[o] > 1000 ? "normalize of 1e4 + noise" : "normalize of 1000 + noise",
                       k, hints[h]);
        const double e = normalize_against_reference(k, hints[h], x, scale, bias, what);
        if (!(e <= 1e-5)) fail_msg("%s: max relative error %.3e, above 1e-5", what, e);
        worst = e > worst ? e : worst;
      }
    }
    free(x);
    free(scale);
    free(bias);
  }
  printf("normalize of offset inputs: worst max relative error %.3e\n", worst);
}

/* With HETC_KERNELS_TIMES set: the median time of the typical normalize
 * workloads on the target (HETC_KERNELS_TARGET=example_c: the plugin
 * kit's reference kernel), for comparing by hand; nothing is asserted. */
static void normalize_times(void **state) {
  (void)state;
  if (!getenv("HETC_KERNELS_TIMES")) return;
  const hetc_plugin_layout_t nchw16c = {HETC_PLUGIN_LAYOUT_NCHWC, 16};
  const struct {
    const char *name;
    normalize_case_t k;
    hetc_plugin_layout_t hint;
  } runs[] = {
      {"instance norm 1x64x56x56", {4, {1, 64, 56, 56}, {1, 3, 64, 1, 1e-5}}, {0, 0}},
      {"instance norm 1x64x56x56 NCHW16c", {4, {1, 64, 56, 56}, {1, 3, 64, 1, 1e-5}}, nchw16c},
      {"group norm 1x256x56x56 32 groups", {4, {1, 256, 56, 56}, {1, 3, 32, 1, 1e-5}}, {0, 0}},
      {"group norm 1x256x56x56 32 groups NCHW16c", {4, {1, 256, 56, 56}, {1, 3, 32, 1, 1e-5}}, nchw16c},
      {"layer norm 1x197x768 last dim", {3, {1, 197, 768}, {2, 1, 1, 1, 1e-6}}, {0, 0}},
      {"layer norm 1x96x56x56 channels", {4, {1, 96, 56, 56}, {1, 1, 1, 1, 1e-6}}, {0, 0}},
      {"layer norm 1x96x56x56 channels NCHW16c", {4, {1, 96, 56, 56}, {1, 1, 1, 1, 1e-6}}, nchw16c},
      {"layer norm 1x768x7x7 channels", {4, {1, 768, 7, 7}, {1, 1, 1, 1, 1e-6}}, {0, 0}},
  };
  for (size_t i = 0; i < sizeof(runs) / sizeof(runs[0]); ++i) {
    hetc_plugin_tensor_t in;
    hetc_plugin_workload_t w;
    normalize_workload(&runs[i].k, &in, runs[i].hint, &w);
    kernel_check_result_t result;
    hetc_status_t s = hetc_kernel_check_time(entry, &w, 0, NULL, 101, &result);
    if (s) fail_msg("%s: %s", runs[i].name, hetc_status_message(s));
    printf("%s on %s: median %.1f us\n", runs[i].name, target_name(), result.seconds * 1e6);
  }
}

/* matmul (ABI 2.0) on random shapes: ranks 2 to 5, extents from 1 (a dot
 * or an outer product) past two blocks of the widest default, so that row
 * and column tails of every size come up; a 4-d case takes every layout
 * hint in turn, which the kernel must not follow (it reads and writes
 * row-major). Each with its default config and a sampled one (other row
 * and column blocks), within TOLERANCE of the reference. */
static void matmul_workload(hetc_plugin_workload_t *w, hetc_plugin_tensor_t in[2], int32_t rank, const int64_t *batch,
                            int64_t m, int64_t k, int64_t n, hetc_plugin_layout_t hint) {
  memset(w, 0, sizeof(*w));
  for (int j = 0; j < 2; ++j) {
    in[j] = (hetc_plugin_tensor_t){HETC_PLUGIN_DTYPE_FLOAT32, rank, {0}, rank == 4 ? hint : (hetc_plugin_layout_t){0, 0}};
    for (int32_t d = 0; d + 2 < rank; ++d) in[j].shape[d] = batch[d];
    in[j].shape[rank - 2] = j ? k : m;
    in[j].shape[rank - 1] = j ? n : k;
  }
  w->op = HETC_PLUGIN_OP_MATMUL;
  w->num_inputs = 2;
  w->inputs = in;
  w->output = in[0];
  w->output.shape[rank - 1] = n;
  w->output.layout = (hetc_plugin_layout_t){HETC_PLUGIN_LAYOUT_ROW_MAJOR, 0};
}

static void matmul_ops(void **state) {
  (void)state;
  const hetc_plugin_t *p = entry->plugin;
  double worst = 0;
  int checked = 0;
  char what[160];
  for (int i = 0; i < 40; ++i) {
    const int32_t rank = (int32_t)next(2, 5);
    int64_t batch[3] = {next(1, 3), next(1, 3), next(1, 2)};
    const int64_t m = next(0, 3) ? next(1, 40) : 1, k = next(0, 3) ? next(1, 70) : 1, n = next(0, 3) ? next(1, 140) : 1;
    hetc_plugin_workload_t w;
    hetc_plugin_tensor_t in[2];
    matmul_workload(&w, in, rank, batch, m, k, n, layouts[i % NUM_LAYOUTS]);
    snprintf(what, sizeof(what), "matmul %d: rank %d, %lld x %lld x %lld, hint %d/%d", i, (int)rank, (long long)m,
             (long long)k, (long long)n, in[0].layout.kind, in[0].layout.block);
    assert_int_equal(p->template_count(entry->instance, 0, &w), 1);
    assert_string_equal(p->template_name(entry->instance, 0, &w, 0), "cpu_matmul");
    hetc_plugin_artifact_t *a = NULL;
    hetc_status_t s = (hetc_status_t)p->build(entry->instance, 0, &w, 0, NULL, &a);
    if (s) fail_msg("%s: build: %s", what, hetc_status_message(s));
    const hetc_plugin_artifact_info_t *info = p->artifact_info(a);
    const hetc_plugin_layout_t row_major = {HETC_PLUGIN_LAYOUT_ROW_MAJOR, 0};
    if (!same_layout(info->input_layouts[0], row_major) || !same_layout(info->input_layouts[1], row_major) ||
        !same_layout(info->output_layout, row_major))
      fail_msg("%s: reads or writes another layout than row-major", what);
    p->artifact_release(entry->instance, a);
    const double e = check_default_and_sampled(&w, 0, (uint64_t)i, what);
    worst = e > worst ? e : worst;
    checked += 2;
  }
  printf("matmul: %d kernels checked, worst max relative error %.3e\n", checked, worst);
}

/* With HETC_KERNELS_TIMES set: the median times of attention's matmuls
 * with the default config, and of dense layers of ViT-B (a projection and
 * the MLP's first layer) for comparison, in GFLOP/s. */
static void matmul_times(void **state) {
  (void)state;
  if (!getenv("HETC_KERNELS_TIMES")) return;
  const struct {
    const char *name;
    int64_t batch[2], m, k, n;
  } runs[] = {
      {"ViT-B scores [1,12,197,64] x [1,12,64,197]", {1, 12}, 197, 64, 197},
      {"ViT-B values [1,12,197,197] x [1,12,197,64]", {1, 12}, 197, 197, 64},
      {"Swin windows [64,3,49,32] x [64,3,32,49]", {64, 3}, 49, 32, 49},
  };
  for (size_t i = 0; i < sizeof(runs) / sizeof(runs[0]); ++i) {
    hetc_plugin_workload_t w;
    hetc_plugin_tensor_t in[2];
    matmul_workload(&w, in, 4, runs[i].batch, runs[i].m, runs[i].k, runs[i].n, (hetc_plugin_layout_t){0, 0});
    kernel_check_result_t result;
    hetc_status_t s = hetc_kernel_check_time(entry, &w, 0, NULL, 101, &result);
    if (s) fail_msg("%s: %s", runs[i].name, hetc_status_message(s));
    const double flops = 2.0 * (double)(runs[i].batch[0] * runs[i].batch[1] * runs[i].m * runs[i].k * runs[i].n);
    printf("%s on %s: median %.1f us, %.1f GFLOP/s\n", runs[i].name, target_name(), result.seconds * 1e6,
           flops / result.seconds * 1e-9);
  }
  const int64_t dense_runs[2][3] = {{197, 768, 768}, {197, 768, 3072}};
  for (int i = 0; i < 2; ++i) {
    hetc_plugin_workload_t w;
    memset(&w, 0, sizeof(w));
    hetc_plugin_tensor_t in = {HETC_PLUGIN_DTYPE_FLOAT32, 2, {dense_runs[i][0], dense_runs[i][1]}, {0, 0}};
    w.op = HETC_PLUGIN_OP_DENSE;
    w.num_inputs = 1;
    w.inputs = &in;
    w.output = (hetc_plugin_tensor_t){HETC_PLUGIN_DTYPE_FLOAT32, 2, {dense_runs[i][0], dense_runs[i][2]}, {0, 0}};
    kernel_check_result_t result;
    hetc_status_t s = hetc_kernel_check_time(entry, &w, 0, NULL, 101, &result);
    if (s) fail_msg("dense: %s", hetc_status_message(s));
    const double flops = 2.0 * (double)(dense_runs[i][0] * dense_runs[i][1] * dense_runs[i][2]);
    printf("dense %lldx%lld -> %lld on %s: median %.1f us, %.1f GFLOP/s\n", (long long)dense_runs[i][0],
           (long long)dense_runs[i][1], (long long)dense_runs[i][2], target_name(), result.seconds * 1e6,
           flops / result.seconds * 1e-9);
  }
}

/* Distance in units in the last place between two floats of one sign. */
static int64_t ulps(float a, float b) {
  int32_t ia, ib;
  memcpy(&ia, &a, 4);
  memcpy(&ib, &b, 4);
  if (ia < 0) ia = INT32_MIN - ia;
  if (ib < 0) ib = INT32_MIN - ib;
  return ia > ib ? (int64_t)ia - ib : (int64_t)ib - ia;
}

/* Runs the elementwise activation `act` over `values` on the cpu target. */
static void run_unary(int32_t act, const float *values, float *out, int64_t n) {
  const hetc_plugin_t *p = entry->plugin;
  hetc_plugin_tensor_t in = {HETC_PLUGIN_DTYPE_FLOAT32, 2, {1, n}, {0, 0}};
  hetc_plugin_workload_t w;
  memset(&w, 0, sizeof(w));
  w.op = HETC_PLUGIN_OP_ELEMENTWISE;
  w.inputs = &in;
  w.num_inputs = 1;
  w.output = in;
  w.activation = act;
  hetc_plugin_artifact_t *a = NULL;
  assert_null(p->build(entry->instance, 0, &w, 0, NULL, &a));
  hetc_plugin_buffer_t *buffers[2] = {NULL, NULL};
  for (int b = 0; b < 2; ++b) assert_null(p->buffer_alloc(entry->instance, 0, (uint64_t)n * 4, &buffers[b]));
  assert_null(p->buffer_write(entry->instance, buffers[0], 0, values, (uint64_t)n * 4));
  assert_null(p->run(entry->instance, a, buffers, 2));
  assert_null(p->buffer_read(entry->instance, buffers[1], 0, out, (uint64_t)n * 4));
  for (int b = 0; b < 2; ++b) p->buffer_free(entry->instance, buffers[b]);
  p->artifact_release(entry->instance, a);
}

static float libm_exp(float x) { return expf(x); }
static float double_sigmoid(float x) { return (float)(1.0 / (1.0 + exp(-(double)x))); }

/* The largest distance in ulps of y[i] from want(x[i]), printed; where want
 * is NaN, y must be NaN too. */
static int64_t worst_ulps(const char *what, const float *x, const float *y, int n, float (*want)(float)) {
  int64_t worst = 0;
  float worst_at = 0;
  for (int i = 0; i < n; ++i) {
    const float w = want(x[i]);
    if (isnan(w)) {
      if (!isnan(y[i])) fail_msg("%s(%a) = %a, not NaN", what, (double)x[i], (double)y[i]);
      continue;
    }
    const int64_t d = ulps(y[i], w);
    if (d > worst) worst = d, worst_at = x[i];
  }
  printf("%s: worst %lld ulp at %a\n", what, (long long)worst, (double)worst_at);
  return worst;
}

/* exp and sigmoid in vectors are computed inline (irb_exp), not by libm:
 * the unary kernel of a row-major tensor runs them so. Against
 * libm's expf (and 1 / (1 + expf(-x)) in double), within 2 and 3 ulp over a
 * sweep of [-110, 95] in steps of about 2e-4 and the special values (exp:
 * 0 below the subnormals, inf past FLT_MAX's log, NaN kept; subnormal
 * results within 2 ulp of theirs). */
static void exp_and_sigmoid_within_ulps(void **state) {
  (void)state;
  enum { SWEEP = 1 << 20, SPECIAL = 10, N = SWEEP + SPECIAL };
  float *x = malloc(sizeof(float) * N), *y = malloc(sizeof(float) * N);
  assert_non_null(x);
  assert_non_null(y);
  /* The special values first: the vector loop takes them (a scalar tail
   * of N % lanes elements goes through libm). */
  const float special[SPECIAL] = {0.0f, -0.0f, INFINITY, -INFINITY, NAN, 88.72f, 88.73f, -87.5f, -103.9f, 1e-30f};
  memcpy(x, special, sizeof(special));
  for (int i = 0; i < SWEEP; ++i) x[SPECIAL + i] = -110.0f + 205.0f * (float)i / (float)SWEEP;
  run_unary(HETC_PLUGIN_ACT_EXP, x, y, N);
  assert_true(worst_ulps("exp", x, y, N, libm_exp) <= 2);
  run_unary(HETC_PLUGIN_ACT_SIGMOID, x, y, N);
  assert_true(worst_ulps("sigmoid", x, y, N, double_sigmoid) <= 3);
  free(x);
  free(y);
}

static float double_erf(float x) { return (float)erf((double)x); }

/* The largest relative error of y[i] from want(x[i]) (a double), printed:
 * NaN and infinities must match exactly, and so must a 0 (its sign
 * aside); below FLT_MIN, where floats have fewer digits, the error is
 * taken relative to FLT_MIN. */
static double worst_relative(const char *what, const float *x, const float *y, int n, double (*want)(double)) {
  double worst = 0;
  float worst_at = 0;
  for (int i = 0; i < n; ++i) {
    const double w = want((double)x[i]);
    if (isnan(w) || isinf(w) || w == 0) {
      const int same = isnan(w) ? isnan(y[i]) : (double)y[i] == w;
      if (!same) fail_msg("%s(%a) = %a, want %a", what, (double)x[i], (double)y[i], w);
      continue;
    }
    const double e = fabs((double)y[i] - w) / fmax(fabs(w), FLT_MIN);
    if (e > worst || isnan(e)) worst = e, worst_at = x[i];
  }
  printf("%s: worst relative error %.3e at %a\n", what, worst, (double)worst_at);
  return worst;
}

static double exact_gelu(double x) { return 0.5 * x * erfc(-x / sqrt(2.0)); }
static double exact_gelu_tanh(double x) {
  const double y = sqrt(2.0 / 3.14159265358979323846) * (x + 0.044715 * x * x * x);
  return x / (1.0 + exp(-2.0 * y)); /* 0.5 x (1 + tanh(y)), exactly so */
}

/* erf in vectors is computed inline (irb_erf, a polynomial near 0 and
 * exp(-x^2) times a rational fit beyond 0.75): against erf in double,
 * within 3 ulp over every 61st float in [0, 4] (17 million; past 3.92 erf
 * rounds to 1) and
 * a sweep of [-12, 12], with its special values (erf(+-inf) = +-1, NaN
 * kept, erf(-0) = -0). gelu and gelu_tanh, built on irb_erf and sigmoid,
 * are within 1e-4 relative of the exact functions in double over the same
 * sweep, their negative tails included (gelu(-9) is -1e-18), NaN at -inf
 * and at NaN, inf at inf. */
static void erf_and_gelu_within_ulps(void **state) {
  (void)state;
  enum { SPECIAL = 10, SWEEP = 1 << 20 };
  const uint32_t four = 0x40800000u, stride = 61; /* the bits of 4.0f */
  const int n_all = (int)(four / stride) + 1, n = SPECIAL + SWEEP;
  float *x = malloc(sizeof(float) * (size_t)n_all), *y = malloc(sizeof(float) * (size_t)n_all);
  assert_non_null(x);
  assert_non_null(y);
  for (int i = 0; i < n_all; ++i) {
    const uint32_t b = (uint32_t)i * stride;
    memcpy(&x[i], &b, 4);
  }
  run_unary(HETC_PLUGIN_ACT_ERF, x, y, n_all);
  const int64_t all = worst_ulps("erf on [0, 4]", x, y, n_all, double_erf);
  const float special[SPECIAL] = {0.0f, -0.0f, INFINITY, -INFINITY, NAN, 0.75f, -0.75f, 3.92f, -1e-30f, 10.5f};
  memcpy(x, special, sizeof(special));
  for (int i = 0; i < SWEEP; ++i) x[SPECIAL + i] = -12.0f + 24.0f * (float)i / (float)SWEEP;
  run_unary(HETC_PLUGIN_ACT_ERF, x, y, n);
  const int64_t sweep = worst_ulps("erf", x, y, n, double_erf);
  assert_true(y[1] == 0 && signbit(y[1]) && y[2] == 1 && y[3] == -1);
  assert_true(all <= 3 && sweep <= 3);
  run_unary(HETC_PLUGIN_ACT_GELU, x, y, n);
  assert_true(worst_relative("gelu", x, y, n, exact_gelu) <= 1e-4);
  run_unary(HETC_PLUGIN_ACT_GELU_TANH, x, y, n);
  assert_true(worst_relative("gelu_tanh", x, y, n, exact_gelu_tanh) <= 1e-4);
  free(x);
  free(y);
}

/* artifact_emit writes <prefix>.o and <prefix>.ir-hash; artifact_load links
 * the object for the same (workload, template, config) and refuses another
 * config or a missing file with INVALID_ARGUMENT. */
static void emit_and_load(void **state) {
  (void)state;
  const hetc_plugin_t *p = entry->plugin;
  hetc_plugin_workload_t w;
  hetc_plugin_tensor_t inputs[2];
  random_conv(&w, inputs, 0);
  hetc_plugin_artifact_t *a = NULL;
  assert_null(p->build(entry->instance, 0, &w, 0, NULL, &a));
  char dir[] = "/tmp/hetc-cpu-test-XXXXXX";
  assert_non_null(mkdtemp(dir));
  assert_null(p->artifact_emit(entry->instance, a, dir, "k0"));
  hetc_plugin_artifact_t *b = NULL;
  assert_null(p->artifact_load(entry->instance, 0, &w, 0, NULL, dir, "k0", &b));
  assert_memory_equal(p->artifact_info(a)->param_bytes, p->artifact_info(b)->param_bytes,
                      sizeof(uint64_t) * (size_t)p->artifact_info(a)->num_params);
  p->artifact_release(entry->instance, b);
  /* Another config of the same template: refused. */
  hetc_plugin_space_t *space = NULL;
  assert_null(hetc_space_create(&space));
  assert_null(p->template_define_space(entry->instance, 0, &w, 0, space));
  int64_t def = 0;
  assert_null(hetc_space_default(space, &def));
  int refused = 0;
  for (int k = 0; k < 8 && !refused; ++k) {
    int64_t index = 0;
    assert_null(hetc_space_sample_valid(space, &rng, &index));
    if (index == def) continue;
    hetc_space_config_t config;
    assert_null(hetc_space_config_at(space, index, &config));
    hetc_status_t s = (hetc_status_t)p->artifact_load(entry->instance, 0, &w, 0, &config.view, dir, "k0", &b);
    assert_non_null(s);
    hetc_status_free(s);
    refused = 1;
  }
  hetc_space_free(space);
  hetc_status_t s = (hetc_status_t)p->artifact_load(entry->instance, 0, &w, 0, NULL, dir, "missing", &b);
  assert_non_null(s);
  hetc_status_free(s);
  p->artifact_release(entry->instance, a);
  char path[256];
  snprintf(path, sizeof(path), "%s/k0.o", dir);
  remove(path);
  snprintf(path, sizeof(path), "%s/k0.ir-hash", dir);
  remove(path);
  rmdir(dir);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(spaces_respect_limits),
      cmocka_unit_test(other_ops),
      cmocka_unit_test(resize_ops),
      cmocka_unit_test(resize_limits_and_keys),
      cmocka_unit_test(normalize_ops),
      cmocka_unit_test(normalize_large_offset),
      cmocka_unit_test(normalize_times),
      cmocka_unit_test(matmul_ops),
      cmocka_unit_test(matmul_times),
      cmocka_unit_test(emit_and_load),
      cmocka_unit_test(exp_and_sigmoid_within_ulps),
      cmocka_unit_test(erf_and_gelu_within_ulps),
  };
  if (strcmp(target_name(), "cpu") != 0) {
    const struct CMUnitTest ops_only[] = {cmocka_unit_test(other_ops), cmocka_unit_test(normalize_times)};
    return cmocka_run_group_tests(ops_only, setup, teardown);
  }
  return cmocka_run_group_tests(tests, setup, teardown);
}
