/* Every sample model: (1) the graph passes keep the function (reference on
 * the loaded graph vs reference on the optimized graph), (2) `hetc compile
 * --targets vec` then `hetc run --output` matches the reference on the
 * loaded graph within a max relative error of 1e-4, on every built-in
 * backend (vec, cpu). Some models are also
 * compiled for `vecconv,vec` (a conv2d-only build of vec first): two
 * devices, with copies and layout transforms between them.
 * HETC_E2E_TARGET=name runs (2) on that one target instead, and leaves (1)
 * to the run without it (a ctest of its own per slower backend, e.g.
 * opencl on PoCL);
 * HETC_E2E_QUICK=1 keeps the tiny models (with a target) or the tiny ones
 * and SqueezeNet (without): the sanitizer build; HETC_E2E_QUICK=2 (with a
 * target) every model but the two largest, ResNet-50 and VGG-19 (PoCL in
 * CI: their kernels are the ones ResNet-18 and the conformance tests run,
 * at sizes that took half of the suite's opencl time);
 * HETC_E2E_MODELS=a,b,... runs only the tests of those names from the set
 * chosen (a name not in it fails);
 * HETC_E2E_HETC=path runs that hetc instead of the build tree's (an
 * installed one, tests/sdk). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "common/fileio.h"
#include "e2e_util.h"
#include "graph/passes.h"
#include "model/model.h"
#include "reference/graph_exec.h"

#define TOLERANCE 1e-4

static void assert_ok(hetc_status_t status) {
  if (status) fail_msg("%s", hetc_status_message(status));
}

/* A way to compile a model: the --targets list, whether the plan must
 * move data between devices, more flags for `hetc compile`, and how many
 * concats must be laid out as views of their inputs and how many channel
 * slices read where they lie (0: not checked). */
typedef struct target_set_t {
  const char *targets;
  int expect_copies;
  const char *flags;
  int expect_concat_views;
  int expect_slice_views;
} target_set_t;

/* (1) of the header: the graph passes keep the model's function. */
static void check_passes(const char *path, const char *file) {
  hetc_graph_t *graph = NULL;
  assert_ok(hetc_model_load_file(path, &graph));
  const float *const *want = e2e_reference_outputs(path, graph, 7);
  float **inputs = e2e_make_inputs(graph, 7);
  hetc_graph_t *optimized = NULL;
  assert_ok(hetc_graph_clone(graph, &optimized));
  assert_ok(hetc_graph_optimize(optimized));
  float **fused = calloc((size_t)graph->num_outputs, sizeof(float *));
  assert_ok(hetc_reference_run_graph(optimized, (const float *const *)inputs, fused));
  for (int32_t o = 0; o < graph->num_outputs; ++o) {
    int64_t count = hetc_tensor_element_count(&graph->values[graph->outputs[o]].type);
    double error = e2e_max_relative_error(fused[o], want[o], count);
    printf("%-20s output %-10s passes: max rel error %.2e\n", file, graph->output_names[o], error);
    assert_true(error <= TOLERANCE);
  }
  e2e_free_arrays(fused, graph->num_outputs);
  e2e_free_arrays(inputs, graph->num_inputs);
  hetc_graph_free(optimized);
  hetc_graph_free(graph);
}

static void check_model(const char *path, const char *file, const target_set_t *sets, int num_sets) {
  /* The passes do not depend on the targets: the runs of this test for one
   * target (HETC_E2E_TARGET) leave them to the default run. */
  const char *target = getenv("HETC_E2E_TARGET");
  if (!(target && *target)) check_passes(path, file);

  /* (2) `hetc compile` then `hetc run --random-input 7 --output` vs the
   * reference on the same inputs, for each way of compiling. */
  for (int set = 0; set < num_sets; ++set) {
    const char *targets_arg = sets[set].targets;
    char printed[8192];
    const double error = e2e_compile_and_check(path, targets_arg, sets[set].flags, NULL, printed, sizeof(printed));
    int kernels = -1, transforms = -1, copies = -1, splits = 0, views = 0, slices = 0;
    for (char *save = NULL, *line = strtok_r(printed, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
      sscanf(line, "split: %d conv2d", &splits);
      sscanf(line, "concat: %d written in place", &views);
      sscanf(line, "slice: %d read where they lie", &slices);
      const char *summary = strstr(line, " kernels (");
      if (summary) {
        while (summary > line && summary[-1] != ' ') --summary;
        sscanf(summary, "%d kernels (%d layout transforms, %d copies)", &kernels, &transforms, &copies);
      }
    }
    printf("%-20s %s: max rel error %.2e (%d kernels, %d transforms, %d copies, %d splits, %d concat views, %d slice "
           "views)\n",
           file, targets_arg, error, kernels, transforms, copies, splits, views, slices);
    assert_true(kernels > 0);
    assert_true(error <= TOLERANCE);
    if (sets[set].expect_copies) assert_true(copies > 0);
    if (sets[set].expect_concat_views) assert_int_equal(views, sets[set].expect_concat_views);
    if (sets[set].expect_slice_views) assert_int_equal(slices, sets[set].expect_slice_views);
    /* Every model of the quick set has a conv2d that can be split. */
    if (sets[set].flags && strstr(sets[set].flags, "--split all")) assert_true(splits > 0);
  }
}

static void check_sample(const char *file, const target_set_t *sets, int num_sets) {
  check_model(e2e_sample_path(file), file, sets, num_sets);
}

/* Every built-in backend on its own (or HETC_E2E_TARGET's, which may list
 * several: cost-based placement); then vec split over two devices, each
 * conv2d on the first (placement by order), the rest on the second. */
static target_set_t each_backend[] = {{"vec", 0, NULL, 0, 0}, {"cpu", 0, NULL, 0, 0}};
static int num_each_backend = 2;
static const target_set_t two_devices[] = {{"vecconv,vec", 1, "--placement first", 0, 0}};
#define NUM_SETS(a) ((int)(sizeof(a) / sizeof((a)[0])))

#define SAMPLE_TEST(fn, file) \
  static void fn(void **state) { (void)state; check_sample(file, each_backend, num_each_backend); }

SAMPLE_TEST(tiny_conv, "tiny_conv.json")
SAMPLE_TEST(tiny_residual, "tiny_residual.json")
SAMPLE_TEST(tiny_depthwise, "tiny_depthwise.json")
SAMPLE_TEST(tiny_concat, "tiny_concat.json")
SAMPLE_TEST(tiny_allops, "tiny_allops.json")
SAMPLE_TEST(tiny_batch2, "tiny_batch2.json")
SAMPLE_TEST(tiny_weights, "tiny_weights.json")
SAMPLE_TEST(resnet18, "resnet18.json")
SAMPLE_TEST(resnet50, "resnet50.json")
SAMPLE_TEST(vgg19, "vgg19.json")
SAMPLE_TEST(mobilenet_v1, "mobilenet_v1.json")
SAMPLE_TEST(squeezenet, "squeezenet.json")

#define TWO_DEVICE_TEST(fn, file) \
  static void fn(void **state) { (void)state; check_sample(file, two_devices, NUM_SETS(two_devices)); }

TWO_DEVICE_TEST(tiny_allops_two_devices, "tiny_allops.json")
TWO_DEVICE_TEST(tiny_concat_two_devices, "tiny_concat.json")
TWO_DEVICE_TEST(resnet18_two_devices, "resnet18.json")

/* Concats laid out as views of their inputs (compile/channel_view.h): both
 * CPU backends can alias buffers, so of concat_views.json's three concats
 * the two of block-aligned conv outputs run no kernel (one whose second
 * input reads its first), and the one of a model input twice stays a
 * kernel; placed over both (and copies between them), as the plan falls. */
static void concat_views(void **state) {
  (void)state;
  char path[4096];
  snprintf(path, sizeof(path), "%s/tests/e2e/models/concat_views.json", getenv("HETC_SOURCE_DIR"));
  const target_set_t sets[] = {{"cpu", 0, NULL, 2, 0}, {"vec", 0, NULL, 2, 0}, {"vec,cpu", 0, NULL, 0, 0}};
  check_model(path, "concat_views.json", sets, NUM_SETS(sets));
}

/* Channel slices read where they lie in their input (compile/channel_view.h):
 * the ONNX corpus's split_channel_views, imported. On cpu the conv's output
 * is in blocks of 8 or 16 channels, so both halves of its Split are views
 * and the Slice of channels 4 to 12 runs; over both CPU backends, as the
 * plan falls, and every way the outputs match the reference. */
static void slice_views(void **state) {
  (void)state;
  char onnx[4096], json[4096], command[9000];
  snprintf(onnx, sizeof(onnx), "%s/tests/onnx/corpus/split_channel_views.onnx", getenv("HETC_SOURCE_DIR"));
  snprintf(json, sizeof(json), "%s/e2e-slice-views-%d.json", getenv("HETC_BINARY_DIR"), (int)getpid());
  snprintf(command, sizeof(command), "%s import %s -o %s > /dev/null", e2e_hetc(), onnx, json);
  assert_int_equal(system(command), 0);
  const target_set_t sets[] = {{"cpu", 0, NULL, 0, 2}, {"vec", 0, NULL, 0, 0}, {"vec,cpu", 0, NULL, 0, 0}};
  check_model(json, "split_channel_views", sets, NUM_SETS(sets));
  char weights[4200];
  snprintf(weights, sizeof(weights), "%.*s.weights", (int)(strlen(json) - 5), json);
  remove(json);
  remove(weights);
}

/* bias_add, batch_norm and activations that cannot be fused (their input
 * has two readers or is not a conv) run as kernels of their own. */
static void unfused_ops(void **state) {
  (void)state;
  char path[4096];
  snprintf(path, sizeof(path), "%s/tests/e2e/models/unfused.json", getenv("HETC_SOURCE_DIR"));
  check_model(path, "unfused.json", each_backend, num_each_backend);
}

/* Runs `tests`, or those of them HETC_E2E_MODELS names. */
static int run_named_tests(const char *group, const struct CMUnitTest *tests, size_t count) {
  const char *only = getenv("HETC_E2E_MODELS");
  if (!only || !*only) return _cmocka_run_group_tests(group, tests, count, NULL, NULL);
  struct CMUnitTest kept[64];
  size_t num_kept = 0;
  for (const char *name = only; *name;) {
    const size_t length = strcspn(name, ",");
    size_t t = 0;
    while (t < count && (strlen(tests[t].name) != length || strncmp(tests[t].name, name, length))) ++t;
    if (t == count || num_kept == sizeof(kept) / sizeof(kept[0])) {
      fprintf(stderr, "HETC_E2E_MODELS: '%.*s' is not a test of %s\n", (int)length, name, group);
      return 1;
    }
    kept[num_kept++] = tests[t];
    name += length + (name[length] == ',');
  }
  return _cmocka_run_group_tests(group, kept, num_kept, NULL, NULL);
}
#define RUN_TESTS(group) run_named_tests(#group, group, sizeof(group) / sizeof((group)[0]))

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(tiny_conv),    cmocka_unit_test(tiny_residual), cmocka_unit_test(tiny_depthwise),
      cmocka_unit_test(tiny_concat),  cmocka_unit_test(tiny_allops),   cmocka_unit_test(tiny_batch2),
      cmocka_unit_test(tiny_weights), cmocka_unit_test(resnet18),      cmocka_unit_test(resnet50),
      cmocka_unit_test(vgg19),        cmocka_unit_test(mobilenet_v1),  cmocka_unit_test(squeezenet),
      cmocka_unit_test(tiny_allops_two_devices), cmocka_unit_test(tiny_concat_two_devices),
      cmocka_unit_test(resnet18_two_devices), cmocka_unit_test(unfused_ops),
      cmocka_unit_test(concat_views), cmocka_unit_test(slice_views),
  };
  const char *target = getenv("HETC_E2E_TARGET");
  const char *quick_mode = getenv("HETC_E2E_QUICK");
  if (!(target && *target) && quick_mode && !strcmp(quick_mode, "1")) {
    /* The sanitizer build: every driver path on small graphs, and one
     * sample with concat views; the big models' time is in uninstrumented
     * kernels and would take the sanitizer pass past CI's bound. */
    const struct CMUnitTest quick_tests[] = {
        cmocka_unit_test(tiny_conv),    cmocka_unit_test(tiny_residual), cmocka_unit_test(tiny_depthwise),
        cmocka_unit_test(tiny_concat),  cmocka_unit_test(tiny_allops),   cmocka_unit_test(tiny_batch2),
        cmocka_unit_test(tiny_weights), cmocka_unit_test(squeezenet),    cmocka_unit_test(tiny_allops_two_devices),
        cmocka_unit_test(tiny_concat_two_devices), cmocka_unit_test(unfused_ops), cmocka_unit_test(concat_views),
        cmocka_unit_test(slice_views),
    };
    return RUN_TESTS(quick_tests);
  }
  if (target && *target) {
    /* HETC_E2E_FLAGS: more `hetc compile` flags (e.g. --split all). */
    each_backend[0] = (target_set_t){target, 0, getenv("HETC_E2E_FLAGS"), 0, 0};
    num_each_backend = 1;
    const struct CMUnitTest tiny_models[] = {
        cmocka_unit_test(tiny_conv),   cmocka_unit_test(tiny_residual), cmocka_unit_test(tiny_depthwise),
        cmocka_unit_test(tiny_concat), cmocka_unit_test(tiny_allops),   cmocka_unit_test(tiny_batch2),
        cmocka_unit_test(tiny_weights), cmocka_unit_test(unfused_ops),
    };
    const struct CMUnitTest every_model[] = {
        cmocka_unit_test(tiny_conv),    cmocka_unit_test(tiny_residual), cmocka_unit_test(tiny_depthwise),
        cmocka_unit_test(tiny_concat),  cmocka_unit_test(tiny_allops),   cmocka_unit_test(tiny_batch2),
        cmocka_unit_test(tiny_weights), cmocka_unit_test(resnet18),      cmocka_unit_test(resnet50),
        cmocka_unit_test(vgg19),        cmocka_unit_test(mobilenet_v1),  cmocka_unit_test(squeezenet),
        cmocka_unit_test(unfused_ops),
    };
    const struct CMUnitTest all_but_the_largest[] = {
        cmocka_unit_test(tiny_conv),    cmocka_unit_test(tiny_residual), cmocka_unit_test(tiny_depthwise),
        cmocka_unit_test(tiny_concat),  cmocka_unit_test(tiny_allops),   cmocka_unit_test(tiny_batch2),
        cmocka_unit_test(tiny_weights), cmocka_unit_test(resnet18),      cmocka_unit_test(mobilenet_v1),
        cmocka_unit_test(squeezenet),   cmocka_unit_test(unfused_ops),
    };
    const char *quick = getenv("HETC_E2E_QUICK");
    if (quick && !strcmp(quick, "1")) return RUN_TESTS(tiny_models);
    if (quick && !strcmp(quick, "2")) return RUN_TESTS(all_but_the_largest);
    return RUN_TESTS(every_model);
  }
  return RUN_TESTS(tests);
}
