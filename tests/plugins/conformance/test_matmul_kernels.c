/* A target's matmul templates (ABI 2.0) against the reference executor,
 * through the real driver registry and host: HETC_MATMUL_TARGET names the
 * target (vec, cpu, opencl on PoCL, cuda_on_opencl for the cuda plugin's
 * kernel text on PoCL). Every template the target offers is built with its
 * default config and run on the shapes attention takes (ViT-B's scores
 * [1,12,197,64] x [1,12,64,197] and weighted values, Swin's windows of 49
 * tokens in a batch of 64 windows) and on edges: extents of 1, extents
 * that fill no vector or tile (3, 17, 33, 65), ranks 2 to 5, and inputs
 * about 100 (whose products cancel). Inputs are read and the output
 * written row-major whatever the hint (a 4-d producer may hint NCHWc); the
 * output must be within 1e-5 of the reference relative to the largest sum
 * of |a| |b| products an output element takes (the accumulation's own
 * rounding scale), so cancellation does not fail a correct kernel.
 *
 * The data is this test's own, not plugin-check's: it runs each artifact
 * through kernel_args as hetc_kernel_check_artifact does. */
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

typedef struct matmul_case_t {
  const char *name;
  int32_t rank;
  int64_t batch[3]; /* the rank - 2 batch dims */
  int64_t m, k, n;
  int32_t nchwc_hint; /* a 4-d producer's NCHW8c hint, which matmul must not follow */
  float offset;       /* added to every input value */
} matmul_case_t;

static const matmul_case_t cases[] = {
    {"[5,7] x [7,9]", 2, {0}, 5, 7, 9, 0, 0},
    {"[1,1] x [1,1]", 2, {0}, 1, 1, 1, 0, 0},
    {"[1,64] x [64,1] (a dot product)", 2, {0}, 1, 64, 1, 0, 0},
    {"[33,1] x [1,65] (an outer product)", 2, {0}, 33, 1, 65, 0, 0},
    {"[17,3] x [3,33]", 2, {0}, 17, 3, 33, 0, 0},
    {"[65,33] x [33,17] offset 100", 2, {0}, 65, 33, 17, 0, 100},
    {"[128,256] x [256,96]", 2, {0}, 128, 256, 96, 0, 0},
    {"rank 3 [4,9,16] x [4,16,5]", 3, {4}, 9, 16, 5, 0, 0},
    {"rank 3 [3,1,40] x [3,40,7]", 3, {3}, 1, 40, 7, 0, 0},
    {"heads [1,3,17,8] x [1,3,8,20]", 4, {1, 3}, 17, 8, 20, 0, 0},
    {"heads [1,3,17,8] x [1,3,8,20] nchw8c hint", 4, {1, 3}, 17, 8, 20, 1, 0},
    {"heads [2,2,33,65] x [2,2,65,3] offset 100", 4, {2, 2}, 33, 65, 3, 0, 100},
    {"ViT-B scores [1,12,197,64] x [1,12,64,197]", 4, {1, 12}, 197, 64, 197, 0, 0},
    {"ViT-B values [1,12,197,197] x [1,12,197,64]", 4, {1, 12}, 197, 197, 64, 0, 0},
    {"Swin windows [64,3,49,32] x [64,3,32,49]", 4, {64, 3}, 49, 32, 49, 0, 0},
    {"rank 5 [2,3,2,5,4] x [2,3,2,4,6]", 5, {2, 3, 2}, 5, 4, 6, 0, 0},
};

static void workload_of(const matmul_case_t *c, hetc_plugin_tensor_t inputs[2], hetc_plugin_workload_t *w) {
  memset(w, 0, sizeof(*w));
  memset(inputs, 0, 2 * sizeof(*inputs));
  for (int k = 0; k < 2; ++k) {
    hetc_plugin_tensor_t *t = &inputs[k];
    t->dtype = HETC_PLUGIN_DTYPE_FLOAT32;
    t->rank = c->rank;
    for (int32_t d = 0; d + 2 < c->rank; ++d) t->shape[d] = c->batch[d];
    t->shape[c->rank - 2] = k ? c->k : c->m;
    t->shape[c->rank - 1] = k ? c->n : c->k;
    t->layout = (hetc_plugin_layout_t){c->nchwc_hint ? HETC_PLUGIN_LAYOUT_NCHWC : HETC_PLUGIN_LAYOUT_ROW_MAJOR,
                                       c->nchwc_hint ? 8 : 0};
  }
  w->op = HETC_PLUGIN_OP_MATMUL;
  w->num_inputs = 2;
  w->inputs = inputs;
  w->output = inputs[0];
  w->output.shape[c->rank - 1] = c->n;
  w->output.layout = (hetc_plugin_layout_t){HETC_PLUGIN_LAYOUT_ROW_MAJOR, 0};
}

/* The largest sum over k of |a[m][k]| |b[k][n]| of any output element. */
static double magnitude(const matmul_case_t *c, int64_t batches, const float *a, const float *b) {
  double largest = 0;
  for (int64_t bi = 0; bi < batches; ++bi)
    for (int64_t m = 0; m < c->m; ++m)
      for (int64_t n = 0; n < c->n; ++n) {
        double sum = 0;
        for (int64_t k = 0; k < c->k; ++k)
          sum += fabs((double)a[(bi * c->m + m) * c->k + k]) * fabs((double)b[(bi * c->k + k) * c->n + n]);
        if (sum > largest) largest = sum;
      }
  return largest;
}

/* The artifact on this case's data: the max error relative to
 * magnitude(), or -1 after printing why it could not be measured. */
static double run_case(const matmul_case_t *c, const hetc_plugin_workload_t *w, const hetc_plugin_artifact_t *a,
                       uint64_t seed) {
  int64_t batches = 1;
  for (int32_t d = 0; d + 2 < c->rank; ++d) batches *= c->batch[d];
  const int64_t count_a = batches * c->m * c->k, count_b = batches * c->k * c->n, count_y = batches * c->m * c->n;
  float *x = malloc(sizeof(float) * (size_t)count_a), *y = malloc(sizeof(float) * (size_t)count_b);
  float *want = malloc(sizeof(float) * (size_t)count_y), *got = malloc(sizeof(float) * (size_t)count_y);
  assert_true(x && y && want && got);
  uint64_t state = seed | 1;
  for (int64_t k = 0; k < count_a; ++k) x[k] = op_target_next_value(&state) + c->offset;
  for (int64_t k = 0; k < count_b; ++k) y[k] = op_target_next_value(&state) + (k % 2 ? c->offset : -c->offset);
  const float *inputs[2] = {x, y};
  hetc_kernel_args_t args;
  double error = -1;
  hetc_status_t s = hetc_kernel_args_create(op_target_entry, 0, w, a, inputs, NULL, &args);
  if (!s) s = hetc_kernel_args_run(&args, a);
  if (!s) s = hetc_kernel_args_read_output(&args, w, got, NULL);
  hetc_plugin_workload_t logical = *w;
  hetc_plugin_tensor_t logical_inputs[2] = {w->inputs[0], w->inputs[1]};
  for (int k = 0; k < 2; ++k) logical_inputs[k].layout = (hetc_plugin_layout_t){HETC_PLUGIN_LAYOUT_ROW_MAJOR, 0};
  logical.inputs = logical_inputs;
  if (!s) s = hetc_reference_run_op(&logical, inputs, NULL, want);
  if (s) {
    printf("%s: %s\n", c->name, hetc_status_message(s));
    hetc_status_free(s);
  } else {
    double max_diff = 0;
    for (int64_t k = 0; k < count_y; ++k) {
      const double diff = fabs((double)got[k] - (double)want[k]);
      if (!(diff <= max_diff)) max_diff = diff;
    }
    error = max_diff / magnitude(c, batches, x, y);
  }
  hetc_kernel_args_release(&args);
  free(x);
  free(y);
  free(want);
  free(got);
  return error;
}

static int row_major(hetc_plugin_layout_t l) { return l.kind == HETC_PLUGIN_LAYOUT_ROW_MAJOR; }

static void matmul_against_reference(void **state) {
  (void)state;
  const hetc_plugin_t *p = op_target_entry->plugin;
  char want_prefix[64];
  op_target_template_name("matmul", want_prefix, sizeof(want_prefix));
  int failures = 0, kernels = 0;
  double worst = 0;
  const int count = (int)(sizeof(cases) / sizeof(cases[0]));
  for (int i = 0; i < count; ++i) {
    const matmul_case_t *c = &cases[i];
    hetc_plugin_tensor_t inputs[2];
    hetc_plugin_workload_t w;
    workload_of(c, inputs, &w);
    assert_int_equal(p->supports(op_target_entry->instance, 0, &w), 1);
    const int32_t templates = p->template_count(op_target_entry->instance, 0, &w);
    assert_true(templates >= 1);
    for (int32_t t = 0; t < templates; ++t) {
      const char *name = p->template_name(op_target_entry->instance, 0, &w, t);
      assert_non_null(name);
      if (strncmp(name, want_prefix, strlen(want_prefix)) != 0)
        fail_msg("%s: template %d is %s, not a %s one", c->name, (int)t, name, want_prefix);
      hetc_plugin_artifact_t *a = NULL;
      hetc_status_t s = (hetc_status_t)p->build(op_target_entry->instance, 0, &w, t, NULL, &a);
      if (s) fail_msg("%s: %s: build: %s", c->name, name, hetc_status_message(s));
      const hetc_plugin_artifact_info_t *info = p->artifact_info(a);
      if (!row_major(info->input_layouts[0]) || !row_major(info->input_layouts[1]) || !row_major(info->output_layout)) {
        printf("%s: %s reads layouts %d, %d and writes %d, not row-major\n", c->name, name,
               info->input_layouts[0].kind, info->input_layouts[1].kind, info->output_layout.kind);
        ++failures;
      }
      const double error = run_case(c, &w, a, 41 + (uint64_t)i);
      p->artifact_release(op_target_entry->instance, a);
      const int ok = error >= 0 && error <= TOLERANCE;
      printf("%-48s %-24s max relative error %.2e%s\n", c->name, name, error, ok ? "" : "  FAILED");
      failures += !ok;
      ++kernels;
      if (error > worst) worst = error;
    }
  }
  printf("%s: %d matmul kernels, %d failed, worst max relative error %.2e\n", op_target_name(), kernels, failures,
         worst);
  assert_int_equal(failures, 0);
}

int main(void) {
  const struct CMUnitTest tests[] = {cmocka_unit_test(matmul_against_reference)};
  op_target_variable = "HETC_MATMUL_TARGET";
  return cmocka_run_group_tests(tests, op_target_setup, op_target_teardown);
}
