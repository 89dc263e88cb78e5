/* Simulation mode (tuner.md, "Search"): recorded measurements of six cpu
 * tasks (tests/tune/data: a random-search reference run of 400 trials per
 * task of tests/tune/models/sim_tasks.json) are replayed as the device, so
 * searchers and the cost model are compared deterministically. The
 * model-guided tuner must reach 95% of the recorded best in fewer trials
 * than random search on a clear majority of the tasks, and transfer from
 * the other tasks' records must cut that further. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>

#include <cmocka.h>

#include "sim_runner.h"

#define TRIALS 400
#define SEEDS 3

static sim_runner_t runner;

static int setup(void **state) {
  (void)state;
  const char *bin = getenv("HETC_BINARY_DIR");
  if (!bin) return -1;
  char data[1024];
  snprintf(data, sizeof(data), "%s/tests/tune/data/sim_records.jsonl", bin);
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
  assert_int_equal(runner.num_tasks, 6);
  int32_t model_wins = 0;
  double sum_model = 0, sum_transfer = 0;
  printf("mean trials to 95%% of the recorded best, %d seeds\n%-70s %7s %7s %8s\n", SEEDS, "task", "random",
         "model", "transfer");
  for (int32_t k = 0; k < runner.num_tasks; ++k) {
    double random = mean_trials(k, HETC_SEARCH_RANDOM, 0);
    double model = mean_trials(k, HETC_SEARCH_MODEL, 0);
    double transfer = mean_trials(k, HETC_SEARCH_MODEL, 1);
    printf("%-70s %7.1f %7.1f %8.1f\n", runner.keys[k], random, model, transfer);
    model_wins += model < random;
    sum_model += model;
    sum_transfer += transfer;
  }
  printf("model-guided beats random on %d of %d tasks; trials summed: %.1f without transfer, %.1f with\n",
         model_wins, runner.num_tasks, sum_model, sum_transfer);
  assert_true(model_wins >= 4); /* a clear majority of 6 */
  assert_true(sum_transfer < sum_model);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(model_guided_search_beats_random_and_transfer_helps),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
