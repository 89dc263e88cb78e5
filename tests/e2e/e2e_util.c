#include "e2e_util.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

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
