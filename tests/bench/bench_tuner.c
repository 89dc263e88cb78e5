/* bench_tuner: how many trials each searcher needs to get within 95% of the
 * best config a long reference run found, replaying the reference run's
 * records (simulation mode, so the numbers are the searchers' and not the
 * machine's noise).
 *
 *   bench_tuner --reference REFERENCE.jsonl|STORE [--transfer-from RECORDS]
 *               [--seeds 3] [--trials 1000]
 *
 * Per task of the reference: random search, model-guided without transfer,
 * and model-guided with transfer from --transfer-from (e.g. ResNet-50's
 * records; default: the reference's other tasks). Prints the mean over
 * seeds per task, the medians over tasks against the goals (200 without
 * transfer, 64 with), and the tuner's overhead per trial. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim_runner.h"

int main(int argc, char **argv) {
  const char *reference = NULL, *transfer_from = NULL;
  int32_t seeds = 3, trials = 1000;
  for (int i = 1; i < argc; ++i) {
    if (!strcmp(argv[i], "--reference") && i + 1 < argc) reference = argv[++i];
    else if (!strcmp(argv[i], "--transfer-from") && i + 1 < argc) transfer_from = argv[++i];
    else if (!strcmp(argv[i], "--seeds") && i + 1 < argc) seeds = atoi(argv[++i]);
    else if (!strcmp(argv[i], "--trials") && i + 1 < argc) trials = atoi(argv[++i]);
    else {
      fprintf(stderr, "usage: bench_tuner --reference RECORDS [--transfer-from RECORDS] [--seeds N] [--trials N]\n");
      return 2;
    }
  }
  if (!reference || seeds < 1 || trials < 1) {
    fprintf(stderr, "usage: bench_tuner --reference RECORDS [--transfer-from RECORDS] [--seeds N] [--trials N]\n");
    return 2;
  }
  sim_runner_t runner;
  hetc_status_t status = sim_runner_open(&runner, reference, transfer_from);
  if (status) {
    fprintf(stderr, "bench_tuner: %s\n", hetc_status_message(status));
    hetc_status_free(status);
    return 1;
  }
  static const struct {
    const char *name;
    hetc_search_kind_t search;
    int transfer;
  } runs[3] = {{"random", HETC_SEARCH_RANDOM, 0}, {"model", HETC_SEARCH_MODEL, 0}, {"transfer", HETC_SEARCH_MODEL, 1}};
  double means[3][SIM_MAX_TASKS], overhead = 0;
  int64_t overhead_trials = 0;
  printf("trials to reach 95%% of the reference run's best (mean of %d seeds; %d = never within %d)\n", seeds,
         trials + 1, trials);
  printf("%-70s %6s %7s %7s %7s %8s\n", "task", "ref", "GFLOPS", "random", "model", "transfer");
  for (int32_t k = 0; k < runner.num_tasks && !status; ++k) {
    for (int32_t r = 0; r < 3 && !status; ++r) {
      means[r][k] = 0;
      for (int32_t seed = 1; seed <= seeds && !status; ++seed) {
        sim_outcome_t outcome;
        status = sim_runner_run(&runner, k, runs[r].search, runs[r].transfer, (uint64_t)seed, trials, &outcome);
        if (status) break;
        means[r][k] += (double)outcome.trials_to_95 / seeds;
        if (runs[r].search == HETC_SEARCH_MODEL) {
          overhead += outcome.overhead_seconds;
          overhead_trials += outcome.trials_to_95;
        }
      }
    }
    if (!status)
      printf("%-70s %6d %7.1f %7.1f %7.1f %8.1f\n", runner.keys[k], runner.recorded[k], runner.best_gflops[k],
             means[0][k], means[1][k], means[2][k]);
  }
  if (!status) {
    double m[3];
    for (int32_t r = 0; r < 3; ++r) m[r] = sim_median(means[r], runner.num_tasks);
    printf("%-70s %6s %7s %7.1f %7.1f %8.1f\n", "median over tasks", "", "", m[0], m[1], m[2]);
    /* A median past --trials is "never": a short run cannot meet a goal. */
    printf("goals: model-guided median <= 200 (%s), with transfer <= 64 (%s)\n",
           m[1] > trials ? "not reached" : m[1] <= 200 ? "met" : "missed",
           m[2] > trials ? "not reached" : m[2] <= 64 ? "met" : "missed");
    printf("model-guided tuner overhead: %.1f ms per trial (search, model, features, store)\n",
           overhead_trials ? 1e3 * overhead / (double)overhead_trials : 0);
  }
  sim_runner_close(&runner);
  if (status) {
    fprintf(stderr, "bench_tuner: %s\n", hetc_status_message(status));
    hetc_status_free(status);
    return 1;
  }
  return 0;
}
