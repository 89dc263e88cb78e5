/* The command line end to end: `hetc compile` then `hetc run --output`
 * (random input, and the same input from a file with --input) must give
 * the reference executor's outputs within a max relative error of 1e-4;
 * usage errors and bad packages exit with status 2. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "common/fileio.h"
#include "e2e_util.h"
#include "model/model.h"
#include "reference/graph_exec.h"

static char hetc[4096], work[4096];

static int run(const char *format, ...) {
  char command[16384];
  va_list args;
  va_start(args, format);
  vsnprintf(command, sizeof(command), format, args);
  va_end(args);
  int status = system(command);
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

static void compare_file_with_reference(const char *model_file, const char *output_path, uint64_t seed) {
  hetc_graph_t *graph = NULL;
  hetc_status_t status = hetc_model_load_file(e2e_sample_path(model_file), &graph);
  if (status) fail_msg("%s", hetc_status_message(status));
  float **inputs = e2e_make_inputs(graph, seed);
  float *want[16];
  assert_null(hetc_reference_run_graph(graph, (const float *const *)inputs, want));
  char *bytes = NULL;
  size_t length = 0;
  assert_null(hetc_file_read_all(output_path, (size_t)1 << 30, &bytes, &length));
  size_t offset = 0;
  for (int32_t o = 0; o < graph->num_outputs; ++o) {
    int64_t count = hetc_tensor_element_count(&graph->values[graph->outputs[o]].type);
    assert_true(offset + (size_t)count * 4 <= length);
    double error = e2e_max_relative_error((const float *)(bytes + offset), want[o], count);
    printf("%s output %s via the CLI: max rel error %.2e\n", model_file, graph->output_names[o], error);
    assert_true(error <= 1e-4);
    offset += (size_t)count * 4;
  }
  assert_int_equal(offset, length);
  free(bytes);
  e2e_free_arrays(inputs, graph->num_inputs);
  for (int32_t o = 0; o < graph->num_outputs; ++o) free(want[o]);
  hetc_graph_free(graph);
}

static void compile_and_run(const char *model_file) {
  char package[4200], output[4200];
  snprintf(package, sizeof(package), "%s/%s.hetc", work, model_file);
  snprintf(output, sizeof(output), "%s/%s.out", work, model_file);
  assert_int_equal(run("%s compile %s --targets vec -o %s --quiet > /dev/null", hetc, e2e_sample_path(model_file),
                       package), 0);
  assert_int_equal(run("%s run %s --random-input 5 --repeat 2 --output %s > /dev/null", hetc, package, output), 0);
  compare_file_with_reference(model_file, output, 5);
}

static void resnet18_via_cli(void **state) {
  (void)state;
  compile_and_run("resnet18.json");
}

static void two_outputs_via_cli(void **state) {
  (void)state;
  compile_and_run("tiny_allops.json");
}

static void input_file_matches_random_input(void **state) {
  (void)state;
  /* The same values written to a file give the same outputs. */
  hetc_graph_t *graph = NULL;
  assert_null(hetc_model_load_file(e2e_sample_path("tiny_conv.json"), &graph));
  float **inputs = e2e_make_inputs(graph, 5);
  char input_path[4200], package[4200], output[4200];
  snprintf(input_path, sizeof(input_path), "%s/tiny_conv.in", work);
  snprintf(package, sizeof(package), "%s/tiny_conv.hetc", work);
  snprintf(output, sizeof(output), "%s/tiny_conv.out", work);
  int64_t count = hetc_tensor_element_count(&graph->values[graph->inputs[0]].type);
  assert_null(hetc_file_write_all(input_path, inputs[0], (size_t)count * 4));
  assert_int_equal(run("%s compile %s --targets vec -o %s --quiet > /dev/null", hetc,
                       e2e_sample_path("tiny_conv.json"), package), 0);
  assert_int_equal(run("%s run %s --input %s --output %s > /dev/null", hetc, package, input_path, output), 0);
  compare_file_with_reference("tiny_conv.json", output, 5);
  /* A short input file is bad input: exit 2, no output file left. */
  assert_null(hetc_file_write_all(input_path, inputs[0], (size_t)count * 4 - 4));
  remove(output);
  assert_int_equal(run("%s run %s --input %s --output %s 2> /dev/null", hetc, package, input_path, output), 2);
  assert_int_not_equal(access(output, F_OK), 0);
  e2e_free_arrays(inputs, graph->num_inputs);
  hetc_graph_free(graph);
}

static void failures_exit_with_status_two(void **state) {
  (void)state;
  char package[4200];
  snprintf(package, sizeof(package), "%s/never.hetc", work);
  /* Unknown target: nothing written. */
  assert_int_equal(run("%s compile %s --targets nosuch -o %s 2> /dev/null", hetc, e2e_sample_path("tiny_conv.json"),
                       package), 2);
  assert_int_not_equal(access(package, F_OK), 0);
  /* A directory that is not a package: not runnable, and never replaced by
   * a compile. */
  assert_int_equal(run("%s run %s 2> /dev/null", hetc, work), 2);
  char keep[4300];
  snprintf(keep, sizeof(keep), "%s/precious", work);
  assert_int_equal(run("mkdir -p %s && touch %s/file.txt", keep, keep), 0);
  assert_int_equal(run("%s compile %s --targets vec -o %s --quiet 2> /dev/null", hetc,
                       e2e_sample_path("tiny_conv.json"), keep), 2);
  assert_int_equal(run("test -f %s/file.txt && test ! -e %s/manifest.json", keep, keep), 0);
  /* Usage errors. */
  assert_int_equal(run("%s compile 2> /dev/null", hetc), 2);
  assert_int_equal(run("%s run 2> /dev/null", hetc), 2);
  assert_int_equal(run("%s frobnicate 2> /dev/null", hetc), 2);
}

static void trailing_slash_names_the_same_package(void **state) {
  (void)state;
  char package[4200];
  snprintf(package, sizeof(package), "%s/slash.hetc/", work);
  for (int i = 0; i < 2; ++i)  /* create, then replace */
    assert_int_equal(run("%s compile %s --targets vec -o %s --quiet > /dev/null", hetc,
                         e2e_sample_path("tiny_conv.json"), package), 0);
  assert_int_equal(run("%s run %s --repeat 1 > /dev/null", hetc, package), 0);
  assert_int_equal(run("ls -d %s/slash.hetc.* 2> /dev/null", work), 2);  /* no temporaries left */
}

static void damaged_manifest_is_bad_input(void **state) {
  (void)state;
  char package[4200], manifest[4300];
  snprintf(package, sizeof(package), "%s/tiny_conv.hetc", work);
  snprintf(manifest, sizeof(manifest), "%s/manifest.json", package);
  assert_int_equal(run("%s compile %s --targets vec -o %s --quiet > /dev/null", hetc,
                       e2e_sample_path("tiny_conv.json"), package), 0);
  /* Point a step at a value that does not exist. */
  assert_int_equal(run("sed -i '0,/\"output\":/s/\"output\":\\t*[0-9]*/\"output\": 99999/' %s", manifest), 0);
  char err[4400];
  snprintf(err, sizeof(err), "%s/err.txt", work);
  assert_int_equal(run("%s run %s 2> %s", hetc, package, err), 2);
  char *text = NULL;
  size_t length = 0;
  assert_null(hetc_file_read_all(err, 1 << 20, &text, &length));
  printf("%s", text);
  assert_non_null(strstr(text, "manifest.json: /steps/0/output: expected an integer in [0, "));
  free(text);
}

/* `hetc bench`: nearest-rank percentiles of the timed runs, in order; with
 * 40 runs p99 is the slowest run. */
static void bench_reports_percentiles(void **state) {
  (void)state;
  char package[4200], report[4300];
  snprintf(package, sizeof(package), "%s/bench.hetc", work);
  snprintf(report, sizeof(report), "%s/bench.txt", work);
  assert_int_equal(run("%s compile %s --targets vec -o %s --quiet > /dev/null", hetc,
                       e2e_sample_path("tiny_conv.json"), package), 0);
  assert_int_equal(run("%s bench %s --runs 40 --warmup 3 --random-input 2 > %s", hetc, package, report), 0);
  char *text = NULL;
  size_t length = 0;
  assert_null(hetc_file_read_all(report, 1 << 20, &text, &length));
  printf("%s", text);
  const char *at = strstr(text, ": 40 runs after 3 warm-up runs: ");
  assert_non_null(at);
  double p50, p90, p99, lo, mean, hi;
  assert_int_equal(sscanf(at, ": 40 runs after 3 warm-up runs: p50 %lf ms, p90 %lf ms, p99 %lf ms (min %lf ms, "
                              "mean %lf ms, max %lf ms)",
                          &p50, &p90, &p99, &lo, &mean, &hi),
                   6);
  assert_true(lo > 0 && lo <= p50 && p50 <= p90 && p90 <= p99 && p99 <= hi);
  assert_true(p99 == hi && lo <= mean && mean <= hi);
  free(text);
  assert_int_equal(run("%s bench %s --runs 0 2> /dev/null", hetc, package), 2);
  assert_int_equal(run("%s bench %s --input x.bin --random-input 1 2> /dev/null", hetc, package), 2);
}

static int setup(void **state) {
  (void)state;
  const char *bin = getenv("HETC_BINARY_DIR");
  snprintf(hetc, sizeof(hetc), "%s/bin/hetc", bin ? bin : ".");
  snprintf(work, sizeof(work), "%s/e2e-cli-%d", bin ? bin : ".", (int)getpid());
  return run("mkdir -p %s", work);
}

static int teardown(void **state) {
  (void)state;
  hetc_dir_remove_tree(work);
  return 0;
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(resnet18_via_cli),
      cmocka_unit_test(two_outputs_via_cli),
      cmocka_unit_test(input_file_matches_random_input),
      cmocka_unit_test(failures_exit_with_status_two),
      cmocka_unit_test(damaged_manifest_is_bad_input),
      cmocka_unit_test(trailing_slash_names_the_same_package),
      cmocka_unit_test(bench_reports_percentiles),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
