/* Models loaded with their shapes only (hetc_model_load_options_t's
 * shapes_only, what a tuning worker loads): the same tasks as the model
 * with its weights, no weight data at all, a weights file (or an ONNX
 * file's external data) neither needed nor read but "weights" still
 * checked for its form, and the exact refusal of everything that needs the
 * weights. */
#define _POSIX_C_SOURCE 200809L /* mkdtemp */

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "common/fileio.h"
#include "graph/graph.h"
#include "graph/passes.h"
#include "hetc/hetc.h"
#include "reference/graph_exec.h"

static char source_dir[4096];
static char work[4200];

static int setup(void **state) {
  (void)state;
  const char *source = getenv("HETC_SOURCE_DIR");
  const char *binary = getenv("HETC_BINARY_DIR");
  if (!source || !binary) {
    fprintf(stderr, "HETC_SOURCE_DIR or HETC_BINARY_DIR is not set (run through ctest)\n");
    return -1;
  }
  snprintf(source_dir, sizeof(source_dir), "%s", source);
  snprintf(work, sizeof(work), "%s/shapes-only-XXXXXX", binary);
  return mkdtemp(work) ? 0 : -1;
}

static int teardown(void **state) {
  (void)state;
  hetc_dir_remove_tree(work);
  return 0;
}

static hetc_status_t load(const char *path, int shapes_only, hetc_model_t **out_model) {
  const hetc_model_load_options_t options = {.struct_size = sizeof(options), .shapes_only = shapes_only};
  return hetc_model_load_with_options(path, &options, out_model);
}

static hetc_model_t *load_ok(const char *path, int shapes_only) {
  hetc_model_t *model = NULL;
  hetc_status_t status = load(path, shapes_only, &model);
  if (status) fail_msg("%s: %s", path, hetc_status_message(status));
  return model;
}

/* Every param of `shapes` has the shape the same param of `full` has, and
 * no data; returns how many params there are. */
static int check_params(const hetc_graph_t *shapes, const hetc_graph_t *full) {
  assert_int_equal(shapes->shapes_only, 1);
  assert_int_equal(full->shapes_only, 0);
  assert_int_equal(shapes->num_nodes, full->num_nodes);
  int params = 0;
  for (int32_t k = 0; k < full->num_nodes; ++k)
    for (int p = 0; p < HETC_PARAM_SLOTS; ++p) {
      const hetc_param_t *a = &shapes->nodes[k].params[p], *b = &full->nodes[k].params[p];
      assert_null(a->data);
      assert_int_equal(a->rank, b->rank);
      assert_int_equal(a->count, b->count);
      for (int32_t d = 0; d < b->rank; ++d) assert_int_equal(a->shape[d], b->shape[d]);
      params += b->count > 0;
      if (b->count > 0) assert_non_null(b->data);
    }
  return params;
}

/* The tasks of both models, equal key for key. */
static void check_same_tasks(const hetc_model_t *shapes, const hetc_model_t *full) {
  hetc_task_info_t *a = NULL, *b = NULL;
  int32_t count_a = 0, count_b = 0, fused_a = 0, fused_b = 0;
  hetc_status_t status = hetc_model_tasks(shapes, &a, &count_a, &fused_a);
  if (status) fail_msg("shapes only: %s", hetc_status_message(status));
  assert_null(hetc_model_tasks(full, &b, &count_b, &fused_b));
  assert_true(count_b > 0);
  assert_int_equal(count_a, count_b);
  assert_int_equal(fused_a, fused_b);
  for (int32_t t = 0; t < count_b; ++t) {
    assert_string_equal(a[t].key, b[t].key);
    assert_int_equal(a[t].count, b[t].count);
    assert_true(a[t].flops == b[t].flops);
  }
  hetc_free(a);
  hetc_free(b);
}

/* ResNet-18 (batch norms folded into convolutions, biases made where
 * there were none, residual epilogues) lists the same tasks without its
 * weights. */
static void test_same_tasks_as_with_weights(void **state) {
  (void)state;
  char path[4300];
  snprintf(path, sizeof(path), "%s/samples/resnet18.json", source_dir);
  hetc_model_t *shapes = load_ok(path, 1), *full = load_ok(path, 0);
  assert_true(check_params(shapes, full) > 40);
  check_same_tasks(shapes, full);
  /* A copy and the optimizing passes keep it without data. */
  hetc_graph_t *copy = NULL;
  assert_null(hetc_graph_clone(shapes, &copy));
  assert_int_equal(copy->shapes_only, 1);
  assert_null(hetc_graph_optimize(copy));
  for (int32_t k = 0; k < copy->num_nodes; ++k)
    for (int p = 0; p < HETC_PARAM_SLOTS; ++p) assert_null(copy->nodes[k].params[p].data);
  hetc_graph_free(copy);
  hetc_model_free(shapes);
  hetc_model_free(full);
}

/* An ONNX file's initializers are dropped once imported. */
static void test_onnx(void **state) {
  (void)state;
  char path[4300];
  snprintf(path, sizeof(path), "%s/tests/onnx/corpus/add_two_convs.onnx", source_dir);
  hetc_model_t *shapes = load_ok(path, 1), *full = load_ok(path, 0);
  assert_true(check_params(shapes, full) > 0);
  check_same_tasks(shapes, full);
  hetc_model_free(shapes);
  hetc_model_free(full);
}

/* A copy of `name` (under the source folder) in the work folder, alone;
 * its path in `to`. */
static void copy_alone(const char *name, char *to, size_t size) {
  char from[4300];
  snprintf(from, sizeof(from), "%s/%s", source_dir, name);
  const char *base = strrchr(name, '/');
  snprintf(to, size, "%s/%s", work, base ? base + 1 : name);
  char *text = NULL;
  size_t length = 0;
  assert_null(hetc_file_read_all(from, 1 << 24, &text, &length));
  assert_null(hetc_file_write_all(to, text, length));
  free(text);
}

/* An ONNX file whose weights are external data that stayed behind (a job
 * on a worker elsewhere) loads with its shapes only, and fails whole. */
static void test_onnx_external_data_not_read(void **state) {
  (void)state;
  char alone[4300], beside[4300];
  copy_alone("tests/onnx/corpus/conv_external_data.onnx", alone, sizeof(alone));
  snprintf(beside, sizeof(beside), "%s/tests/onnx/corpus/conv_external_data.onnx", source_dir);
  hetc_model_t *model = NULL;
  hetc_status_t status = load(alone, 0, &model);
  assert_int_equal(hetc_status_code(status), HETC_STATUS_BAD_INPUT);
  assert_non_null(strstr(hetc_status_message(status), "cannot be opened"));
  hetc_status_free(status);
  hetc_model_t *shapes = load_ok(alone, 1), *full = load_ok(beside, 0);
  assert_true(check_params(shapes, full) > 0);
  check_same_tasks(shapes, full);
  hetc_model_free(shapes);
  hetc_model_free(full);
}

/* A model.json whose weights file is not there loads with its shapes only
 * (the file is not read) and fails to load whole. */
static void test_weights_file_not_read(void **state) {
  (void)state;
  char from[4300], to[4300];
  snprintf(from, sizeof(from), "%s/samples/tiny_weights.json", source_dir);
  copy_alone("samples/tiny_weights.json", to, sizeof(to));
  hetc_model_t *model = NULL;
  hetc_status_t status = load(to, 0, &model);
  assert_int_equal(hetc_status_code(status), HETC_STATUS_IO_ERROR);
  assert_non_null(strstr(hetc_status_message(status), "/weights/file"));
  hetc_status_free(status);
  model = load_ok(to, 1);
  hetc_model_t *full = load_ok(from, 0);
  check_params(model, full);
  hetc_model_free(full);
  hetc_model_free(model);
}

/* "weights" is checked for its form as in a whole load: the same message. */
static void test_weights_form_checked(void **state) {
  (void)state;
  char from[4300], path[4300];
  snprintf(from, sizeof(from), "%s/samples/tiny_conv.json", source_dir);
  snprintf(path, sizeof(path), "%s/bad_init.json", work);
  char *text = NULL;
  size_t length = 0;
  assert_null(hetc_file_read_all(from, 1 << 20, &text, &length));
  char *init = strstr(text, "\"init\": \"random\"");
  assert_non_null(init);
  memcpy(init, "\"init\": \"zeros\" ", strlen("\"init\": \"random\""));
  assert_null(hetc_file_write_all(path, text, length));
  free(text);
  char expected[4400];
  snprintf(expected, sizeof(expected), "%s: /weights/init: expected \"random\", got \"zeros\"", path);
  for (int shapes_only = 0; shapes_only <= 1; ++shapes_only) {
    hetc_model_t *model = NULL;
    hetc_status_t status = load(path, shapes_only, &model);
    assert_null(model);
    assert_int_equal(hetc_status_code(status), HETC_STATUS_BAD_INPUT);
    assert_string_equal(hetc_status_message(status), expected);
    hetc_status_free(status);
  }
}

static void expect_refusal(hetc_status_t status, const char *path, const char *doing) {
  char expected[4600];
  snprintf(expected, sizeof(expected),
           "%s: loaded with its shapes only (no weights): its tasks can be listed and tuned, but it cannot be %s", path,
           doing);
  assert_int_equal(hetc_status_code(status), HETC_STATUS_INVALID_ARGUMENT);
  assert_string_equal(hetc_status_message(status), expected);
  hetc_status_free(status);
}

/* Compiling, comparing, saving and running the reference refuse it. */
static void test_refusals(void **state) {
  (void)state;
  char path[4300], out[4300];
  snprintf(path, sizeof(path), "%s/samples/tiny_conv.json", source_dir);
  hetc_model_t *model = load_ok(path, 1);
  hetc_context_t *context = NULL;
  assert_null(hetc_context_create(&context));
  const char *targets[] = {"vec"};
  hetc_compile_options_t options = {.targets = targets, .num_targets = 1, .placement = HETC_PLACEMENT_COST};
  snprintf(out, sizeof(out), "%s/tiny.hetc", work);
  expect_refusal(hetc_compile(context, model, &options, out, NULL), path, "compiled");
  assert_int_equal(access(out, F_OK), -1);
  hetc_compare_options_t compare = {.targets = targets, .num_targets = 1};
  hetc_compare_result_t *result = NULL;
  expect_refusal(hetc_compare_model(context, model, &compare, &result), path, "compared");
  assert_null(result);
  snprintf(out, sizeof(out), "%s/saved.json", work);
  expect_refusal(hetc_model_save(model, out), path, "saved");
  assert_int_equal(access(out, F_OK), -1);
  float *outputs[1] = {NULL};
  expect_refusal(hetc_reference_run_graph(model, NULL, outputs), path, "run");
  assert_null(outputs[0]);
  hetc_context_destroy(context);
  hetc_model_free(model);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_same_tasks_as_with_weights),
      cmocka_unit_test(test_onnx),
      cmocka_unit_test(test_onnx_external_data_not_read),
      cmocka_unit_test(test_weights_file_not_read),
      cmocka_unit_test(test_weights_form_checked),
      cmocka_unit_test(test_refusals),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
