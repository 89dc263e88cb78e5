/* A target's resize template (ABI 2.0) against the reference executor,
 * through the real driver registry and host: HETC_RESIZE_TARGET names the
 * target (opencl on PoCL, cuda_on_opencl for the cuda plugin's kernel text
 * on PoCL, vec). Nearest with each rounding and coordinate transform (ties
 * included: asymmetric x2 samples x = k + 0.5), linear with half_pixel,
 * pytorch_half_pixel and align_corners; x2 upscales, 7 -> 10 and 13 -> 5
 * (with a floored scale's coordinates too), one output row and pixel,
 * N = 2, 16384 output columns, an input 70000 wide, in every layout hint with channel counts that fill no block (the
 * check requires the padding channels to be zero). The artifact must read
 * and write the hinted layout, as pooling does. Nearest copies pixels, so
 * it must match exactly (any other pixel would differ); linear within
 * 1e-5 relative. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "kernel_check.h"
#include "op_target.h"

#define TOLERANCE 1e-5

static hetc_plugin_tensor_t tensor4(int64_t n, int64_t c, int64_t h, int64_t w, int32_t kind, int32_t block) {
  return (hetc_plugin_tensor_t){HETC_PLUGIN_DTYPE_FLOAT32, 4, {n, c, h, w}, {kind, block}};
}

typedef struct resize_case_t {
  const char *name;
  int64_t n, c, h, w, oh, ow;
  int32_t layout, block;
  int32_t mode, coordinates, rounding;
  double scales[2]; /* 0: output / input */
} resize_case_t;

enum {
  RM = HETC_PLUGIN_LAYOUT_ROW_MAJOR,
  NC = HETC_PLUGIN_LAYOUT_NCHWC,
  NH = HETC_PLUGIN_LAYOUT_NHWC,
  NEAREST = HETC_PLUGIN_RESIZE_NEAREST,
  LINEAR = HETC_PLUGIN_RESIZE_LINEAR,
  HALF = HETC_PLUGIN_RESIZE_HALF_PIXEL,
  PYTORCH = HETC_PLUGIN_RESIZE_PYTORCH_HALF_PIXEL,
  CORNERS = HETC_PLUGIN_RESIZE_ALIGN_CORNERS,
  ASYM = HETC_PLUGIN_RESIZE_ASYMMETRIC,
  PREFER_FLOOR = HETC_PLUGIN_RESIZE_ROUND_PREFER_FLOOR,
  PREFER_CEIL = HETC_PLUGIN_RESIZE_ROUND_PREFER_CEIL,
  FLOOR = HETC_PLUGIN_RESIZE_FLOOR,
  CEIL = HETC_PLUGIN_RESIZE_CEIL,
};

static const resize_case_t cases[] = {
    {"nearest x2 asymmetric round_prefer_floor rm", 2, 3, 5, 7, 10, 14, RM, 0, NEAREST, ASYM, PREFER_FLOOR, {0, 0}},
    {"nearest x2 asymmetric round_prefer_ceil nchw16c", 1, 3, 5, 7, 10, 14, NC, 16, NEAREST, ASYM, PREFER_CEIL, {0, 0}},
    {"nearest x2 half_pixel floor rm", 2, 3, 5, 7, 10, 14, RM, 0, NEAREST, HALF, FLOOR, {0, 0}},
    {"nearest x2 align_corners ceil nhwc", 2, 5, 5, 7, 10, 14, NH, 0, NEAREST, CORNERS, CEIL, {0, 0}},
    {"nearest 7x13 -> 10x5 half_pixel round_prefer_floor nchw8c", 2, 13, 7, 13, 10, 5, NC, 8, NEAREST, HALF,
     PREFER_FLOOR, {0, 0}},
    {"nearest 7x13 -> 10x5 asymmetric floor floored scale nchw3c", 1, 7, 7, 13, 10, 5, NC, 3, NEAREST, ASYM, FLOOR,
     {10.0 / 7.0, 0.4}},
    {"nearest 13x7 -> 5x10 align_corners ceil rm", 1, 6, 13, 7, 5, 10, RM, 0, NEAREST, CORNERS, CEIL, {0, 0}},
    {"nearest 13x7 -> 5x10 asymmetric round_prefer_floor nhwc", 2, 3, 13, 7, 5, 10, NH, 0, NEAREST, ASYM,
     PREFER_FLOOR, {0, 0}},
    {"nearest one output row half_pixel nchw8c", 2, 5, 4, 6, 1, 9, NC, 8, NEAREST, HALF, PREFER_FLOOR, {0, 0}},
    {"linear x2 half_pixel rm", 2, 3, 5, 7, 10, 14, RM, 0, LINEAR, HALF, 0, {0, 0}},
    {"linear x2 pytorch_half_pixel nchw8c", 2, 11, 5, 7, 10, 14, NC, 8, LINEAR, PYTORCH, 0, {0, 0}},
    {"linear x2 align_corners nhwc", 1, 6, 5, 7, 10, 14, NH, 0, LINEAR, CORNERS, 0, {0, 0}},
    {"linear 7x13 -> 10x5 half_pixel nchw16c", 2, 13, 7, 13, 10, 5, NC, 16, LINEAR, HALF, 0, {0, 0}},
    {"linear 7x13 -> 10x5 pytorch_half_pixel floored scale rm", 1, 4, 7, 13, 10, 5, RM, 0, LINEAR, PYTORCH, 0,
     {0, 0.4}},
    {"linear 13x7 -> 5x10 align_corners nchw4c", 2, 5, 13, 7, 5, 10, NC, 4, LINEAR, CORNERS, 0, {0, 0}},
    {"linear 13x7 -> 5x10 half_pixel rm", 2, 3, 13, 7, 5, 10, RM, 0, LINEAR, HALF, 0, {0, 0}},
    {"linear one output row pytorch_half_pixel rm", 2, 3, 4, 6, 1, 9, RM, 0, LINEAR, PYTORCH, 0, {0, 0}},
    {"linear one output row half_pixel nchw8c", 1, 9, 4, 6, 1, 9, NC, 8, LINEAR, HALF, 0, {0, 0}},
    {"linear one output pixel align_corners nhwc", 2, 3, 4, 6, 1, 1, NH, 0, LINEAR, CORNERS, 0, {0, 0}},
    /* The largest table a model can ask for, and 32-bit indices (an input
     * past 65536 columns). */
    {"linear 2x8 -> 3x16384 half_pixel rm", 1, 2, 2, 8, 3, 16384, RM, 0, LINEAR, HALF, 0, {0, 0}},
    {"linear 2x70000 -> 3x5 align_corners rm", 1, 1, 2, 70000, 3, 5, RM, 0, LINEAR, CORNERS, 0, {0, 0}},
    {"nearest 2x70000 -> 3x7 asymmetric floor nchw8c", 1, 3, 2, 70000, 3, 7, NC, 8, NEAREST, ASYM, FLOOR, {0, 0}},
};

static void workload_of(const resize_case_t *c, hetc_plugin_tensor_t *input, hetc_plugin_workload_t *w) {
  memset(w, 0, sizeof(*w));
  *input = tensor4(c->n, c->c, c->h, c->w, c->layout, c->block);
  w->op = HETC_PLUGIN_OP_RESIZE;
  w->num_inputs = 1;
  w->inputs = input;
  w->output = tensor4(c->n, c->c, c->oh, c->ow, RM, 0);
  w->params.resize.mode = c->mode;
  w->params.resize.coordinates = c->coordinates;
  w->params.resize.rounding = c->rounding;
  w->params.resize.scales[0] = c->scales[0] > 0 ? c->scales[0] : (double)c->oh / (double)c->h;
  w->params.resize.scales[1] = c->scales[1] > 0 ? c->scales[1] : (double)c->ow / (double)c->w;
}

static int same_layout(hetc_plugin_layout_t a, int32_t kind, int32_t block) {
  return a.kind == kind && (kind != NC || a.block == block);
}

static void resize_against_reference(void **state) {
  (void)state;
  const hetc_plugin_t *p = op_target_entry->plugin;
  char want_name[64];
  op_target_template_name("resize", want_name, sizeof(want_name));
  int failures = 0;
  double worst = 0;
  const int count = (int)(sizeof(cases) / sizeof(cases[0]));
  for (int i = 0; i < count; ++i) {
    const resize_case_t *c = &cases[i];
    hetc_plugin_tensor_t input;
    hetc_plugin_workload_t w;
    workload_of(c, &input, &w);
    assert_int_equal(p->supports(op_target_entry->instance, 0, &w), 1);
    assert_int_equal(p->template_count(op_target_entry->instance, 0, &w), 1);
    assert_string_equal(p->template_name(op_target_entry->instance, 0, &w, 0), want_name);
    hetc_plugin_artifact_t *a = NULL;
    hetc_status_t s = (hetc_status_t)p->build(op_target_entry->instance, 0, &w, 0, NULL, &a);
    if (s) fail_msg("%s: build: %s", c->name, hetc_status_message(s));
    const hetc_plugin_artifact_info_t *info = p->artifact_info(a);
    if (!same_layout(info->input_layouts[0], c->layout, c->block) ||
        !same_layout(info->output_layout, c->layout, c->block)) {
      printf("%s: reads layout %d/%d and writes %d/%d, not the hint's %d/%d\n", c->name, info->input_layouts[0].kind,
             info->input_layouts[0].block, info->output_layout.kind, info->output_layout.block, c->layout, c->block);
      ++failures;
    }
    kernel_check_result_t result;
    s = hetc_kernel_check_artifact(op_target_entry, 0, &w, 0, a, 11 + (uint64_t)i, 0, &result);
    p->artifact_release(op_target_entry->instance, a);
    if (s) fail_msg("%s: %s", c->name, hetc_status_message(s));
    const double error = result.max_relative_error;
    const int ok = c->mode == NEAREST ? error == 0 : error <= TOLERANCE;
    printf("%-64s max relative error %.2e%s\n", c->name, error, ok ? "" : "  FAILED");
    failures += !ok;
    if (c->mode == LINEAR && error > worst) worst = error;
  }
  printf("%s: %d resize kernels, %d failed, linear's worst max relative error %.2e\n", op_target_name(), count, failures,
         worst);
  assert_int_equal(failures, 0);
}

int main(void) {
  const struct CMUnitTest tests[] = {cmocka_unit_test(resize_against_reference)};
  op_target_variable = "HETC_RESIZE_TARGET";
  return cmocka_run_group_tests(tests, op_target_setup, op_target_teardown);
}
