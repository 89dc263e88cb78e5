/* A target's normalize template (ABI 2.0) against the reference executor,
 * through the real driver registry and host: HETC_NORMALIZE_TARGET names
 * the target (opencl on PoCL, cuda_on_opencl for the cuda plugin's kernel
 * text on PoCL, vec). Instance, group and layer normalization (over the
 * last dim, as ViT's [1,197,768], and over the channels of NCHW, as
 * ConvNeXt's), ranks 2 to 5, affine or not, lines of a few elements to
 * 4096, in every layout hint where a 4-d tensor's channels are normalized
 * (NCHWc with channels that fill no block and groups across blocks, NHWC;
 * the artifact must read and write the hint) and row-major elsewhere.
 * Inputs in [-1, 1), and some about 1000: statistics summed naively in
 * float would lose the noise's digits there. The output must be within
 * 1e-5 of the reference, relative to its largest value, and an NCHWc
 * output's padding channels exactly 0 (the output buffer starts as 777s).
 *
 * The data is this test's own, not plugin-check's (which draws inputs in
 * [-1, 1) only): it runs each artifact through kernel_args as
 * hetc_kernel_check_artifact does. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "kernel/kernel_args.h"
#include "kernel/plugin_calls.h"
#include "kernel_check.h"
#include "op_target.h"
#include "reference/reference.h"

#define TOLERANCE 1e-5

enum {
  RM = HETC_PLUGIN_LAYOUT_ROW_MAJOR,
  NC = HETC_PLUGIN_LAYOUT_NCHWC,
  NH = HETC_PLUGIN_LAYOUT_NHWC,
};

typedef struct normalize_case_t {
  const char *name;
  int32_t rank;
  int64_t dims[5];
  int32_t layout, block; /* the producer's hint */
  int32_t axis, num_axes, groups, affine;
  double epsilon;
  float offset; /* added to every input value */
} normalize_case_t;

static const normalize_case_t cases[] = {
    {"instance [1,6,4,5] affine rm", 4, {1, 6, 4, 5}, RM, 0, 1, 3, 6, 1, 1e-5, 0},
    {"instance [1,6,4,5] affine rm offset 1000", 4, {1, 6, 4, 5}, RM, 0, 1, 3, 6, 1, 1e-5, 1000},
    {"instance [1,6,4,5] rm", 4, {1, 6, 4, 5}, RM, 0, 1, 3, 6, 0, 1e-5, 0},
    {"instance [1,6,4,5] affine nchw8c", 4, {1, 6, 4, 5}, NC, 8, 1, 3, 6, 1, 1e-5, 0},
    {"instance [2,6,4,5] nchw4c offset 1000", 4, {2, 6, 4, 5}, NC, 4, 1, 3, 6, 0, 1e-5, 1000},
    {"instance [1,6,4,5] affine nhwc", 4, {1, 6, 4, 5}, NH, 0, 1, 3, 6, 1, 1e-5, 0},
    {"instance [1,32,64,64] affine rm offset 1000", 4, {1, 32, 64, 64}, RM, 0, 1, 3, 32, 1, 1e-5, 1000},
    {"group [2,8,3,3] 4 groups affine rm", 4, {2, 8, 3, 3}, RM, 0, 1, 3, 4, 1, 1e-3, 0},
    {"group [2,8,3,3] 4 groups affine rm offset 1000", 4, {2, 8, 3, 3}, RM, 0, 1, 3, 4, 1, 1e-3, 1000},
    {"group [2,8,3,3] 4 groups affine nchw8c", 4, {2, 8, 3, 3}, NC, 8, 1, 3, 4, 1, 1e-3, 0},
    {"group [2,9,3,5] 3 groups affine nchw4c offset 1000", 4, {2, 9, 3, 5}, NC, 4, 1, 3, 3, 1, 1e-5, 1000},
    {"group [1,12,3,5] 3 groups nhwc", 4, {1, 12, 3, 5}, NH, 0, 1, 3, 3, 0, 1e-5, 0},
    {"one group over C,H,W [2,4,3,5] affine rm", 4, {2, 4, 3, 5}, RM, 0, 1, 3, 1, 1, 1e-5, 0},
    {"layer last dim [2,5,12] affine", 3, {2, 5, 12}, RM, 0, 2, 1, 1, 1, 1e-6, 0},
    {"layer last dim [2,5,12]", 3, {2, 5, 12}, RM, 0, 2, 1, 1, 0, 1e-6, 0},
    {"layer last dim [1,197,768] affine", 3, {1, 197, 768}, RM, 0, 2, 1, 1, 1, 1e-6, 0},
    {"layer last dim [1,197,768] affine offset 1000", 3, {1, 197, 768}, RM, 0, 2, 1, 1, 1, 1e-6, 1000},
    {"layer last two dims [1,197,768] affine", 3, {1, 197, 768}, RM, 0, 1, 2, 1, 1, 1e-5, 0},
    {"layer channels [1,10,3,4] rm", 4, {1, 10, 3, 4}, RM, 0, 1, 1, 1, 0, 1e-6, 0},
    {"layer channels [1,10,3,4] rm offset 1000", 4, {1, 10, 3, 4}, RM, 0, 1, 1, 1, 0, 1e-6, 1000},
    {"layer channels [1,10,3,4] affine rm", 4, {1, 10, 3, 4}, RM, 0, 1, 1, 1, 1, 1e-6, 0},
    {"layer channels [1,10,3,4] affine nchw8c", 4, {1, 10, 3, 4}, NC, 8, 1, 1, 1, 1, 1e-6, 0},
    {"layer channels [2,10,3,4] nhwc offset 1000", 4, {2, 10, 3, 4}, NH, 0, 1, 1, 1, 0, 1e-6, 1000},
    {"layer channels [1,768,7,7] affine rm offset 1000", 4, {1, 768, 7, 7}, RM, 0, 1, 1, 1, 1, 1e-6, 1000},
    {"layer channels [1,20,10,15] affine nchw16c offset 1000", 4, {1, 20, 10, 15}, NC, 16, 1, 1, 1, 1, 1e-6, 1000},
    {"layer dim 2 [2,3,7,5] affine (nchw8c hint)", 4, {2, 3, 7, 5}, NC, 8, 2, 1, 1, 1, 1e-5, 0},
    {"layer rank 2 [4,33] affine", 2, {4, 33}, RM, 0, 1, 1, 1, 1, 1e-5, 0},
    {"layer rank 2 [4,33] affine offset 1000", 2, {4, 33}, RM, 0, 1, 1, 1, 1, 1e-5, 1000},
    {"dim 0 of rank 2 [6,10] 2 groups affine", 2, {6, 10}, RM, 0, 0, 1, 2, 1, 1e-5, 0},
    {"instance rank 5 [2,4,3,4,5] affine", 5, {2, 4, 3, 4, 5}, RM, 0, 1, 4, 4, 1, 1e-5, 0},
    {"group rank 5 [2,4,3,4,5] 2 groups offset 1000", 5, {2, 4, 3, 4, 5}, RM, 0, 1, 4, 2, 0, 1e-5, 1000},
    {"dims 2,3 of rank 5 [2,3,4,5,6] 2 groups affine", 5, {2, 3, 4, 5, 6}, RM, 0, 2, 2, 2, 1, 1e-5, 0},
};

static void workload_of(const normalize_case_t *c, hetc_plugin_tensor_t *input, hetc_plugin_workload_t *w) {
  memset(w, 0, sizeof(*w));
  memset(input, 0, sizeof(*input));
  input->dtype = HETC_PLUGIN_DTYPE_FLOAT32;
  input->rank = c->rank;
  for (int32_t d = 0; d < c->rank; ++d) input->shape[d] = c->dims[d];
  input->layout = (hetc_plugin_layout_t){c->layout, c->block};
  w->op = HETC_PLUGIN_OP_NORMALIZE;
  w->num_inputs = 1;
  w->inputs = input;
  w->output = *input;
  w->output.layout = (hetc_plugin_layout_t){RM, 0};
  w->params.normalize = (hetc_plugin_normalize_params_t){c->axis, c->num_axes, c->groups, c->affine, c->epsilon};
}

/* The layout the kernel must read and write: the hint where a 4-d
 * tensor's channels are normalized, else row-major. */
static int expected_layout(const normalize_case_t *c, hetc_plugin_layout_t got) {
  const int follows = c->rank == 4 && c->axis == 1;
  const int32_t kind = follows ? c->layout : RM;
  return got.kind == kind && (kind != NC || got.block == c->block);
}

/* The artifact on this case's data: the max relative error against the
 * reference, or -1 after printing why it could not be measured. */
static double run_case(const normalize_case_t *c, const hetc_plugin_workload_t *w, const hetc_plugin_artifact_t *a,
                       uint64_t seed) {
  const int64_t count = hetc_reference_logical_count(&w->inputs[0]);
  const int64_t channels = w->inputs[0].shape[c->axis];
  float *x = malloc(sizeof(float) * (size_t)count), *want = malloc(sizeof(float) * (size_t)count);
  float *got = malloc(sizeof(float) * (size_t)count), *scale = malloc(sizeof(float) * (size_t)channels);
  float *bias = malloc(sizeof(float) * (size_t)channels), *physical = NULL;
  assert_true(x && want && got && scale && bias);
  uint64_t state = seed | 1;
  for (int64_t k = 0; k < count; ++k) x[k] = op_target_next_value(&state) + c->offset;
  for (int64_t k = 0; k < channels; ++k) scale[k] = op_target_next_value(&state), bias[k] = op_target_next_value(&state);
  const float *inputs[1] = {x}, *params[2] = {scale, bias};
  hetc_kernel_args_t args;
  double error = -1;
  hetc_status_t s = hetc_kernel_args_create(op_target_entry, 0, w, a, inputs, c->affine ? params : NULL, &args);
  const int64_t out_count = hetc_layout_element_count(&args.output_type);
  if (!s) {
    /* Not zeros, which the padding channels must hold. */
    physical = malloc(sizeof(float) * (size_t)out_count);
    assert_non_null(physical);
    for (int64_t k = 0; k < out_count; ++k) physical[k] = 777.0f;
    s = hetc_entry_buffer_write(op_target_entry, args.buffers[args.output], 0, physical, (uint64_t)out_count * sizeof(float));
  }
  if (!s) s = hetc_kernel_args_run(&args, a);
  if (!s) s = hetc_kernel_args_read_output(&args, w, got, physical);
  hetc_plugin_workload_t logical = *w;
  hetc_plugin_tensor_t logical_input = w->inputs[0];
  logical_input.layout = (hetc_plugin_layout_t){RM, 0};
  logical.inputs = &logical_input;
  if (!s) s = hetc_reference_run_op(&logical, inputs, params, want);
  if (s) {
    printf("%s: %s\n", c->name, hetc_status_message(s));
    hetc_status_free(s);
  } else {
    double max_diff = 0, max_ref = 0;
    for (int64_t k = 0; k < count; ++k) {
      const double diff = fabs((double)got[k] - (double)want[k]);
      if (!(diff <= max_diff)) max_diff = diff;
      if (fabs((double)want[k]) > max_ref) max_ref = fabs((double)want[k]);
    }
    error = max_diff / max_ref;
    const hetc_plugin_tensor_t *t = &args.output_type;
    if (t->layout.kind == NC) {
      const int64_t block = t->layout.block, blocks = (t->shape[1] + block - 1) / block;
      const int64_t plane = t->shape[2] * t->shape[3];
      for (int64_t n = 0; n < t->shape[0]; ++n)
        for (int64_t ch = t->shape[1]; ch < blocks * block; ++ch)
          for (int64_t p = 0; p < plane; ++p) {
            const float v = physical[((n * blocks + ch / block) * plane + p) * block + ch % block];
            if (v != 0.0f && error >= 0) {
              printf("%s: padding channel %lld holds %g, not 0\n", c->name, (long long)ch, (double)v);
              error = -1;
            }
          }
    }
  }
  hetc_kernel_args_release(&args);
  free(x);
  free(want);
  free(got);
  free(scale);
  free(bias);
  free(physical);
  return error;
}

static void normalize_against_reference(void **state) {
  (void)state;
  const hetc_plugin_t *p = op_target_entry->plugin;
  char want_name[64];
  op_target_template_name("normalize", want_name, sizeof(want_name));
  int failures = 0;
  double worst = 0;
  const int count = (int)(sizeof(cases) / sizeof(cases[0]));
  for (int i = 0; i < count; ++i) {
    const normalize_case_t *c = &cases[i];
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
    if (!expected_layout(c, info->input_layouts[0]) || !expected_layout(c, info->output_layout)) {
      printf("%s: reads layout %d/%d and writes %d/%d\n", c->name, info->input_layouts[0].kind,
             info->input_layouts[0].block, info->output_layout.kind, info->output_layout.block);
      ++failures;
    }
    const double error = run_case(c, &w, a, 23 + (uint64_t)i);
    p->artifact_release(op_target_entry->instance, a);
    const int ok = error >= 0 && error <= TOLERANCE;
    printf("%-56s max relative error %.2e%s\n", c->name, error, ok ? "" : "  FAILED");
    failures += !ok;
    if (error > worst) worst = error;
  }
  printf("%s: %d normalize kernels, %d failed, worst max relative error %.2e\n", op_target_name(), count, failures,
         worst);
  assert_int_equal(failures, 0);
}

int main(void) {
  const struct CMUnitTest tests[] = {cmocka_unit_test(normalize_against_reference)};
  op_target_variable = "HETC_NORMALIZE_TARGET";
  return cmocka_run_group_tests(tests, op_target_setup, op_target_teardown);
}
