/* Simulation mode (README.md, "Tuning"): the reference run of the tuner
 * benchmark (tests/tune/data: 1000 random trials on each of seven ResNet-18
 * cpu tasks -- the first layer, 3x3, strided 3x3 and strided 1x1 convs) is
 * replayed as the device, so searchers and the cost model are compared
 * deterministically. The model-guided tuner must reach 95% of the recorded
 * best in fewer trials than random search on a clear majority of the tasks,
 * and transfer from the other tasks' records must cut that further; the
 * medians over tasks must meet the benchmark's goals (<= 200 trials
 * without transfer, <= 64 with). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>

#include <cmocka.h>

#include "sim_runner.h"

#define TRIALS 1000
#define SEEDS 3

static sim_runner_t runner;

static int setup(void **state) {
  (void)state;
  const char *bin = getenv("HETC_BINARY_DIR");
  if (!bin) return -1;
  char data[1024];
  snprintf(data, sizeof(data), "%s/tests/tune/data/resnet18_cpu_reference.jsonl", bin);
  hetc_status_t status = sim_runner_open(&runner, data, NULL);
  if (status) fprintf(stderr, "%s\n", hetc_status_message(status));
  int failed = status != NULL;
  hetc_status_free(status);
  return failed ? -1 : 0;
}

static int teardown(void **state) {
  (void)state;
  sim_runner_close(&runner);
  return 0;
}

static double mean_trials(int32_t task, hetc_search_kind_t search, int transfer) {
  double sum = 0;
  for (uint64_t seed = 1; seed <= SEEDS; ++seed) {
    sim_outcome_t outcome;
    hetc_status_t status = sim_runner_run(&runner, task, search, transfer, seed, TRIALS, &outcome);
    if (status) fail_msg("%s", hetc_status_message(status));
    sum += outcome.trials_to_95;
  }
  return sum / SEEDS;
}

static void model_guided_search_beats_random_and_transfer_helps(void **state) {
  (void)state;
  assert_int_equal(runner.num_tasks, 7);
  int32_t model_wins = 0;
  double sum_model = 0, sum_transfer = 0, models[SIM_MAX_TASKS], transfers[SIM_MAX_TASKS];
  printf("mean trials to 95%% of the recorded best, %d seeds\n%-70s %7s %7s %8s\n", SEEDS, "task", "random",
         "model", "transfer");
  for (int32_t k = 0; k < runner.num_tasks; ++k) {
    double random = mean_trials(k, HETC_SEARCH_RANDOM, 0);
    double model = mean_trials(k, HETC_SEARCH_MODEL, 0);
    double transfer = mean_trials(k, HETC_SEARCH_MODEL, 1);
    printf("%-70s %7.1f %7.1f %8.1f\n", runner.keys[k], random, model, transfer);
    model_wins += model < random;
    models[k] = model;
    transfers[k] = transfer;
    sum_model += model;
    sum_transfer += transfer;
  }
  double median_model = sim_median(models, runner.num_tasks);
  double median_transfer = sim_median(transfers, runner.num_tasks);
  printf("model-guided beats random on %d of %d tasks; trials summed: %.1f without transfer, %.1f with; "
         "medians %.1f and %.1f\n",
         model_wins, runner.num_tasks, sum_model, sum_transfer, median_model, median_transfer);
  assert_true(model_wins >= 5); /* a clear majority of 7 */
  assert_true(sum_transfer < sum_model);
  assert_true(median_model <= 200);
  assert_true(median_transfer <= 64);
}

/* The benchmark's third column: the same tasks with transfer from
 * ResNet-50's records (tests/tune/data/resnet50_cpu_tuned: a budgeted
 * `hetc tune samples/resnet50.json --targets cpu` run). */
static void transfer_from_resnet50_meets_the_goal(void **state) {
  (void)state;
  char reference[1024], resnet50[1024];
  const char *bin = getenv("HETC_BINARY_DIR");
  snprintf(reference, sizeof(reference), "%s/tests/tune/data/resnet18_cpu_reference.jsonl", bin);
  snprintf(resnet50, sizeof(resnet50), "%s/tests/tune/data/resnet50_cpu_tuned.jsonl", bin);
  sim_runner_t from_resnet50;
  hetc_status_t status = sim_runner_open(&from_resnet50, reference, resnet50);
  if (status) fail_msg("%s", hetc_status_message(status));
  double trials[SIM_MAX_TASKS];
  for (int32_t k = 0; k < from_resnet50.num_tasks; ++k) {
    sim_outcome_t outcome;
    status = sim_runner_run(&from_resnet50, k, HETC_SEARCH_MODEL, 1, 1, TRIALS, &outcome);
    if (status) fail_msg("%s", hetc_status_message(status));
    trials[k] = outcome.trials_to_95;
    printf("%-70s %8d\n", from_resnet50.keys[k], outcome.trials_to_95);
  }
  double median = sim_median(trials, from_resnet50.num_tasks);
  printf("with transfer from ResNet-50's records: median %.1f trials to 95%%\n", median);
  sim_runner_close(&from_resnet50);
  assert_true(median <= 64);
}

int main(void) {
  /* HETC_SIMULATION_ONLY=name: that test alone (the sanitizer build's). */
  if (getenv("HETC_SIMULATION_ONLY")) cmocka_set_test_filter(getenv("HETC_SIMULATION_ONLY"));
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(model_guided_search_beats_random_and_transfer_helps),
      cmocka_unit_test(transfer_from_resnet50_meets_the_goal),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
