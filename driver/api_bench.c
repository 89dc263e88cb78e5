/* The public API's per-step timing of a package (hetc/hetc.h,
 * hetc_package_bench_steps): what each step costs inside whole runs. */
#include <stdlib.h>

#include "common/clock.h"
#include "runtime/runtime.h"

hetc_status_t hetc_package_bench_steps(hetc_package_t *package, int32_t runs, hetc_step_time_t **out_steps,
                                       int32_t *out_count) {
  const hetc_plan_t *plan = hetc_runtime_plan(package);
  const int32_t n = plan->num_steps;
  if (runs < 1) return hetc_status_new(HETC_STATUS_INVALID_ARGUMENT, "bench: %d runs", runs);
  double *samples = malloc(sizeof(double) * (size_t)n * (size_t)runs + 1);
  double *column = malloc(sizeof(double) * (size_t)runs + 1);
  hetc_step_time_t *steps = calloc((size_t)n + 1, sizeof(*steps));
  hetc_status_t status = NULL;
  if (!samples || !column || !steps)
    status = hetc_status_new(HETC_STATUS_OUT_OF_MEMORY, "bench: %d steps x %d runs", n, runs);
  for (int32_t r = 0; !status && r < runs; ++r) {
    hetc_runtime_time_steps(package, samples + (size_t)r * (size_t)n);
    status = hetc_runtime_execute(package);
  }
  hetc_runtime_time_steps(package, NULL);
  for (int32_t s = 0; !status && s < n; ++s) {
    for (int32_t r = 0; r < runs; ++r) column[r] = samples[(size_t)r * (size_t)n + (size_t)s];
    hetc_sort_doubles(column, (size_t)runs);
    const hetc_plan_step_t *step = &plan->steps[s];
    steps[s] = (hetc_step_time_t){.name = step->name, .target = plan->devices[step->device].target,
                                  .copy = step->kind == HETC_PLAN_STEP_COPY, .seconds = column[runs / 2]};
  }
  free(samples);
  free(column);
  if (status) {
    free(steps);
    return status;
  }
  *out_steps = steps;
  *out_count = n;
  return NULL;
}
