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

/* The reference executor's outputs on e2e_make_inputs(graph, seed), where
 * `graph` is the model at `model_path` as loaded. Computed once for the
 * model last asked: tests check one model several ways in a row, and
 * VGG-19's reference run takes about 18 s. Borrowed: valid until a call
 * for another model or seed. */
const float *const *e2e_reference_outputs(const char *model_path, const hetc_graph_t *graph, uint64_t seed);

/* The hetc under test: HETC_E2E_HETC, else HETC_BINARY_DIR/bin/hetc; static. */
const char *e2e_hetc(void);

/* `[env] hetc compile MODEL --targets TARGETS -o PKG --quiet FLAGS`, then
 * `[env] hetc run PKG --random-input 7 --output OUT`, against the reference
 * executor on the model as loaded: returns the largest max relative error
 * over its outputs (fails the test when hetc fails). What compile printed
 * goes to `printed` (size bytes; may be NULL). The package is removed. */
double e2e_compile_and_check(const char *model_path, const char *targets, const char *flags, const char *env,
                             char *printed, size_t size);

#endif
