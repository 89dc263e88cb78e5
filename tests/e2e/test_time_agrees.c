/* A kernel's time() agrees with its time inside a package, on every
 * built-in target this machine has.
 *
 * tests/e2e/models/time_agrees.json (three convs of 0.3 to 2 MB of weights,
 * which the caches hold either way) is compiled for one target; the package
 * runs 40 times with every step timed (hetc_runtime_time_steps, what `hetc
 * bench --steps` prints), and each conv step's kernel is built again from
 * the manifest's template and config and timed alone with the plugin's
 * time() (hetc_kernel_check_time_artifact). The median inside the package must
 * be within a factor of FACTOR of time()'s, or within SLACK_MS of it
 * (a kernel of 30 us pays a thread wake-up of the same size in either
 * measurement); where they disagree, both are measured again, up to
 * ATTEMPTS times, as a busy machine can slow either side for a whole
 * measurement. What this catches are measurements that have nothing to do
 * with the kernel: the 8 ms wake-up floor vec's kernels had under OpenMP,
 * a time() that skips a kernel's prologue phase, a package step that waits
 * on something else.
 * A target that cannot run here (cuda without a GPU) is skipped with the
 * reason. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "check/kernel_check.h"
#include "common/clock.h"
#include "common/fileio.h"
#include "e2e_util.h"
#include "runtime/runtime.h"

#define FACTOR 3.0
#define SLACK_MS 0.25
#define RUNS 40
#define ATTEMPTS 3

static int agree(double inside, double alone) {
  const double ratio = inside / alone;
  return (ratio <= FACTOR && ratio >= 1 / FACTOR) || fabs(inside - alone) * 1e3 <= SLACK_MS;
}

static void assert_ok(hetc_status_t status) {
  if (status) fail_msg("%s", hetc_status_message(status));
}

/* Each step's median seconds over RUNS runs inside the package. */
static void time_steps(hetc_runtime_t *rt, double *medians) {
  const hetc_plan_t *plan = hetc_runtime_plan(rt);
  const int32_t n = plan->num_steps;
  double *samples = calloc((size_t)n * RUNS + 1, sizeof(double)), column[RUNS];
  assert_non_null(samples);
  for (int r = 0; r < 5; ++r) assert_ok(hetc_runtime_execute(rt)); /* warm-up */
  for (int r = 0; r < RUNS; ++r) {
    hetc_runtime_time_steps(rt, samples + (size_t)r * (size_t)n);
    assert_ok(hetc_runtime_execute(rt));
  }
  hetc_runtime_time_steps(rt, NULL);
  for (int32_t s = 0; s < n; ++s) {
    for (int r = 0; r < RUNS; ++r) column[r] = samples[(size_t)r * (size_t)n + (size_t)s];
    hetc_sort_doubles(column, RUNS);
    medians[s] = column[RUNS / 2];
  }
  free(samples);
}

/* The kernel of `step` built again and timed alone by the plugin. */
static double time_alone(hetc_plugin_entry_t *entry, int32_t device_index, const hetc_plan_step_t *step) {
  hetc_plugin_knob_value_t knobs[64];
  for (int32_t k = 0; k < step->num_knobs; ++k)
    knobs[k] = (hetc_plugin_knob_value_t){step->knob_names[k], step->knob_counts[k], step->knob_values[k]};
  const hetc_plugin_config_t config = {step->num_knobs, knobs};
  hetc_plugin_artifact_t *artifact = NULL;
  assert_ok(entry->plugin->build(entry->instance, device_index, &step->workload, step->template_index, &config,
                                 &artifact));
  kernel_check_result_t result;
  assert_ok(hetc_kernel_check_time_artifact(entry, device_index, &step->workload, step->template_index, artifact, 9,
                                       &result));
  entry->plugin->artifact_release(entry->instance, artifact);
  return result.seconds;
}

static void check_target(const char *target) {
  hetc_registry_t *registry = NULL;
  assert_ok(hetc_registry_open(&registry));
  hetc_plugin_entry_t *entry = NULL;
  hetc_status_t status = hetc_registry_target(registry, target, &entry);
  if (status) {
    printf("%s: skipped: %s\n", target, hetc_status_message(status));
    hetc_status_free(status);
    hetc_registry_free(registry);
    skip();
  }
  char model[4096], package[1024], command[8192];
  snprintf(model, sizeof(model), "%s/tests/e2e/models/time_agrees.json", getenv("HETC_SOURCE_DIR"));
  snprintf(package, sizeof(package), "%s/time-agrees-%s-%d.hetc", getenv("HETC_BINARY_DIR"), target, (int)getpid());
  snprintf(command, sizeof(command), "%s compile %s --targets %s -o %s --quiet > /dev/null", e2e_hetc(), model, target,
           package);
  assert_int_equal(system(command), 0);
  hetc_runtime_t *rt = NULL;
  assert_ok(hetc_runtime_open(registry, package, &rt));
  const hetc_plan_t *plan = hetc_runtime_plan(rt);
  float *input = malloc(sizeof(float) * (size_t)hetc_runtime_input_count(rt, 0));
  hetc_fill_random_input(input, hetc_runtime_input_count(rt, 0), 3, 0);
  assert_ok(hetc_runtime_set_input(rt, 0, input, hetc_runtime_input_count(rt, 0)));
  free(input);
  double medians[256];
  assert_true(plan->num_steps <= 256);
  time_steps(rt, medians);
  int checked = 0;
  for (int32_t s = 0; s < plan->num_steps; ++s) {
    const hetc_plan_step_t *step = &plan->steps[s];
    if (step->kind != HETC_PLAN_STEP_KERNEL || step->workload.op != HETC_PLUGIN_OP_CONV2D) continue;
    double alone = time_alone(entry, plan->devices[step->device].device_index, step);
    double inside = medians[s];
    /* Another process on the machine can slow one side for the whole of a
     * measurement; a real disagreement survives measuring both again (the
     * fastest of the attempts counts on each side). */
    int agrees = 0;
    for (int attempt = 0; !(agrees = agree(inside, alone)) && attempt < ATTEMPTS - 1; ++attempt) {
      double again[256];
      time_steps(rt, again);
      inside = fmin(inside, again[s]);
      alone = fmin(alone, time_alone(entry, plan->devices[step->device].device_index, step));
    }
    const double ratio = inside / alone;
    printf("%-7s %-4s %-22s time() %8.4f ms, in the package %8.4f ms, ratio %5.2f%s\n", target, step->name,
           step->template_name, alone * 1e3, inside * 1e3, ratio, agrees ? "" : "  <- disagrees");
    if (!agrees)
      fail_msg("%s: %s: time() says %.4f ms, the package %.4f ms (more than %gx apart, and by more than %g ms)",
               target, step->name, alone * 1e3, inside * 1e3, FACTOR, SLACK_MS);
    ++checked;
  }
  assert_int_equal(checked, 3);
  hetc_runtime_close(rt);
  hetc_dir_remove_tree(package);
  hetc_registry_free(registry);
}

static void cpu(void **state) {
  (void)state;
  check_target("cpu");
}
static void vec(void **state) {
  (void)state;
  check_target("vec");
}
static void opencl(void **state) {
  (void)state;
  check_target("opencl");
}
static void cuda(void **state) {
  (void)state;
  check_target("cuda");
}

int main(void) {
  const struct CMUnitTest tests[] = {cmocka_unit_test(cpu), cmocka_unit_test(vec), cmocka_unit_test(opencl),
                                     cmocka_unit_test(cuda)};
  return cmocka_run_group_tests(tests, NULL, NULL);
}
