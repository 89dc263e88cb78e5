/* `hetc bench`: whole runs of an opened package, timed by the host's
 * clock, summarised as percentiles (hetc_package_bench) or step by step
 * (hetc_package_bench_steps). */
#include <math.h>
#include <stdlib.h>

#include "common/clock.h"
#include "common/interrupt.h"
#include "hetc/hetc.h"
#include "runtime/runtime.h"

/* Nearest rank: the ceil(q * n)-th smallest of n sorted samples. */
static double percentile(const double *sorted, int32_t n, double q) {
  int32_t rank = (int32_t)ceil(q * n - 1e-9);
  return sorted[rank < 1 ? 0 : rank - 1];
}

hetc_status_t hetc_package_bench(hetc_package_t *package, const hetc_bench_options_t *options,
                                 hetc_bench_result_t *out_result) {
  if (options->runs < 1 || options->warmup_runs < 0)
    return hetc_status_new(HETC_STATUS_INVALID_ARGUMENT, "bench: %d runs after %d warm-up runs", options->runs,
                           options->warmup_runs);
  double *seconds = malloc(sizeof(double) * (size_t)options->runs);
  if (!seconds) return hetc_status_new(HETC_STATUS_OUT_OF_MEMORY, "bench: %d runs", options->runs);
  hetc_status_t status = NULL;
  /* A signal noted while interrupts are watched (hetc compare's packages,
   * a long bench) stops the runs between two of them. */
  for (int32_t r = 0; !status && r < options->warmup_runs; ++r)
    if (!(status = hetc_interrupt_status())) status = hetc_runtime_execute(package);
  for (int32_t r = 0; !status && r < options->runs; ++r) {
    if ((status = hetc_interrupt_status())) break;
    double start = hetc_now_seconds();
    status = hetc_runtime_execute(package);
    seconds[r] = hetc_now_seconds() - start;
  }
  if (!status) {
    hetc_sort_doubles(seconds, (size_t)options->runs);
    hetc_bench_result_t *r = out_result;
    r->runs = options->runs;
    r->min = seconds[0];
    r->max = seconds[options->runs - 1];
    r->p50 = percentile(seconds, options->runs, 0.50);
    r->p90 = percentile(seconds, options->runs, 0.90);
    r->p99 = percentile(seconds, options->runs, 0.99);
    r->mean = 0;
    for (int32_t i = 0; i < options->runs; ++i) r->mean += seconds[i] / options->runs;
  }
  free(seconds);
  return status;
}

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
    if ((status = hetc_interrupt_status())) break;
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
