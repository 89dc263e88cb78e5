/* Shared helpers of the end-to-end tests: deterministic inputs, the
 * reference run of a model, and the error metric every numerical test uses:
 * max|got - want| / max|want| over a tensor. */
#ifndef HETC_TESTS_E2E_UTIL_H_
#define HETC_TESTS_E2E_UTIL_H_

#include <stdint.h>

#include "graph/graph.h"

double e2e_max_relative_error(const float *got, const float *want, int64_t count);
/* Path of a sample model (HETC_SOURCE_DIR/samples/NAME); static buffer. */
const char *e2e_sample_path(const char *name);

/* The inputs `hetc run --random-input SEED` feeds (malloc'ed, caller
 * frees each). */
float **e2e_make_inputs(const hetc_graph_t *graph, uint64_t seed);
void e2e_free_arrays(float **arrays, int32_t count);

#endif
