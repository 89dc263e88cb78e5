/* driver/runtime/runtime.h -- loads a package and executes it.
 *
 * Opening a package reads its manifest, finds each target's plugin, loads
 * every artifact the plugins emitted (no recompilation), allocates the
 * buffer slots and uploads the packed weights. A run writes the inputs,
 * executes the steps in order (kernels, and copies through the host between
 * devices) and reads the outputs. */
#ifndef HETC_DRIVER_RUNTIME_RUNTIME_H_
#define HETC_DRIVER_RUNTIME_RUNTIME_H_

#include "package/plan.h"
#include "plugins/registry.h"

typedef struct hetc_runtime_t hetc_runtime_t;

/* `registry` is borrowed and must outlive the runtime. *out_runtime is
 * released with hetc_runtime_close. */
hetc_status_t hetc_runtime_open(hetc_registry_t *registry, const char *package_dir,
                                hetc_runtime_t **out_runtime);
void hetc_runtime_close(hetc_runtime_t *runtime);

/* The plan (borrowed; lives as long as the runtime). */
const hetc_plan_t *hetc_runtime_plan(const hetc_runtime_t *runtime);

/* Element count of graph input/output `index` (row-major). */
int64_t hetc_runtime_input_count(const hetc_runtime_t *runtime, int32_t index);
int64_t hetc_runtime_output_count(const hetc_runtime_t *runtime, int32_t index);

/* Copies `count` floats (== the input's element count) into input `index`. */
hetc_status_t hetc_runtime_set_input(hetc_runtime_t *runtime, int32_t index, const float *data,
                                     int64_t count);
/* While step_seconds is set (the caller's, one entry per plan step), each
 * execute writes there how long each step took (wall clock around its
 * plugin calls: what a kernel costs inside the whole run). NULL: off. */
void hetc_runtime_time_steps(hetc_runtime_t *runtime, double *step_seconds);

/* Executes every step once. */
hetc_status_t hetc_runtime_execute(hetc_runtime_t *runtime);
/* Copies output `index` (count == its element count) into data. */
hetc_status_t hetc_runtime_get_output(hetc_runtime_t *runtime, int32_t index, float *data,
                                      int64_t count);

#endif /* HETC_DRIVER_RUNTIME_RUNTIME_H_ */
