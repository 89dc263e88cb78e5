#include "e2e_util.h"

#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "common/fileio.h"
#include "model/model.h"
#include "reference/graph_exec.h"

double e2e_max_relative_error(const float *got, const float *want, int64_t count) {
  double max_diff = 0, max_ref = 0;
  for (int64_t i = 0; i < count; ++i) {
    double diff = fabs((double)got[i] - (double)want[i]);
    if (!(diff <= max_diff)) max_diff = diff; /* NaN propagates */
    if (fabs(want[i]) > max_ref) max_ref = fabs(want[i]);
  }
  return max_ref > 0 ? max_diff / max_ref : max_diff;
}

const char *e2e_sample_path(const char *name) {
  static char path[4096];
  const char *root = getenv("HETC_SOURCE_DIR");
  snprintf(path, sizeof(path), "%s/samples/%s", root ? root : ".", name);
  return path;
}

float **e2e_make_inputs(const hetc_graph_t *graph, uint64_t seed) {
  float **inputs = calloc((size_t)graph->num_inputs, sizeof(float *));
  for (int32_t i = 0; inputs && i < graph->num_inputs; ++i) {
    int64_t count = hetc_tensor_element_count(&graph->values[graph->inputs[i]].type);
    inputs[i] = malloc(sizeof(float) * (size_t)count);
    if (inputs[i]) hetc_fill_random_input(inputs[i], count, seed, i);
  }
  return inputs;
}

void e2e_free_arrays(float **arrays, int32_t count) {
  for (int32_t i = 0; arrays && i < count; ++i) free(arrays[i]);
  free(arrays);
}

const char *e2e_hetc(void) {
  static char path[512];
  const char *installed = getenv("HETC_E2E_HETC");
  const char *bin = getenv("HETC_BINARY_DIR") ? getenv("HETC_BINARY_DIR") : ".";
  if (installed && *installed) return installed;
  snprintf(path, sizeof(path), "%s/bin/hetc", bin);
  return path;
}

/* The last model e2e_reference_outputs ran: its path, seed and outputs. */
static struct {
  char *model_path;
  uint64_t seed;
  int32_t num_outputs;
  float **outputs;
} reference_memo;

const float *const *e2e_reference_outputs(const char *model_path, const hetc_graph_t *graph, uint64_t seed) {
  if (reference_memo.model_path && !strcmp(reference_memo.model_path, model_path) && reference_memo.seed == seed &&
      reference_memo.num_outputs == graph->num_outputs)
    return (const float *const *)reference_memo.outputs;
  e2e_free_arrays(reference_memo.outputs, reference_memo.num_outputs);
  free(reference_memo.model_path);
  memset(&reference_memo, 0, sizeof(reference_memo));
  float **inputs = e2e_make_inputs(graph, seed);
  float **outputs = calloc((size_t)graph->num_outputs, sizeof(float *));
  hetc_status_t status = hetc_reference_run_graph(graph, (const float *const *)inputs, outputs);
  e2e_free_arrays(inputs, graph->num_inputs);
  if (status) {
    e2e_free_arrays(outputs, graph->num_outputs);
    fail_msg("%s", hetc_status_message(status));
  }
  reference_memo.model_path = strdup(model_path);
  reference_memo.seed = seed;
  reference_memo.num_outputs = graph->num_outputs;
  reference_memo.outputs = outputs;
  return (const float *const *)outputs;
}

double e2e_compile_and_check(const char *model_path, const char *targets, const char *flags, const char *env,
                             char *printed, size_t size) {
  hetc_graph_t *graph = NULL;
  hetc_status_t status = hetc_model_load_file(model_path, &graph);
  if (status) fail_msg("%s", hetc_status_message(status));
  const float *const *want = e2e_reference_outputs(model_path, graph, 7);
  const char *bin = getenv("HETC_BINARY_DIR") ? getenv("HETC_BINARY_DIR") : ".";
  char package[512], output[600], command[4096];
  snprintf(package, sizeof(package), "%s/e2e-check-%d.hetc", bin, (int)getpid());
  snprintf(output, sizeof(output), "%s.out", package);
  snprintf(command, sizeof(command), "%s %s compile %s --targets %s -o %s --quiet %s", env ? env : "", e2e_hetc(),
           model_path, targets, package, flags ? flags : "");
  FILE *pipe = popen(command, "r");
  assert_non_null(pipe);
  size_t used = 0;
  if (printed && size) printed[0] = 0;
  char line[1024];
  while (fgets(line, sizeof(line), pipe)) {
    fputs(line, stdout);
    if (printed && used + strlen(line) < size) {
      memcpy(printed + used, line, strlen(line) + 1);
      used += strlen(line);
    }
  }
  if (pclose(pipe) != 0) fail_msg("failed: %s", command);
  snprintf(command, sizeof(command), "%s %s run %s --random-input 7 --repeat 1 --output %s > /dev/null",
           env ? env : "", e2e_hetc(), package, output);
  assert_int_equal(system(command), 0);
  char *bytes = NULL;
  size_t length = 0, offset = 0;
  status = hetc_file_read_all(output, (size_t)1 << 31, &bytes, &length);
  if (status) fail_msg("%s", hetc_status_message(status));
  double worst = 0;
  for (int32_t o = 0; o < graph->num_outputs; ++o) {
    const int64_t count = hetc_tensor_element_count(&graph->values[graph->outputs[o]].type);
    assert_true(offset + (size_t)count * sizeof(float) <= length);
    const double error = e2e_max_relative_error((const float *)(bytes + offset), want[o], count);
    worst = error > worst ? error : worst;
    offset += (size_t)count * sizeof(float);
  }
  assert_int_equal(offset, length);
  free(bytes);
  remove(output);
  hetc_dir_remove_tree(package);
  hetc_graph_free(graph);
  return worst;
}
