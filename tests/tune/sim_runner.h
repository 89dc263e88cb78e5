/* tests/tune/sim_runner.h -- comparing searchers in simulation mode, shared
 * by test_simulation and tests/bench/bench_tuner. */
#ifndef HETC_TESTS_TUNE_SIM_RUNNER_H_
#define HETC_TESTS_TUNE_SIM_RUNNER_H_

#include "graph/tasks.h"
#include "tune/tuner.h"

#define SIM_MAX_TASKS 64

typedef struct sim_runner_t {
  char temp_dir[64];
  char replay_path[128];   /* the replayed store */
  char transfer_path[128]; /* records other tasks' models learn from; "" = the replay's other tasks */
  int32_t num_tasks;
  char keys[SIM_MAX_TASKS][HETC_TASK_KEY_SIZE];
  int32_t recorded[SIM_MAX_TASKS]; /* replayed records per task */
  double best_gflops[SIM_MAX_TASKS];
} sim_runner_t;

/* Imports `replay` (a .jsonl file or a records store) into a temporary
 * store and lists its tasks on target cpu. `transfer_from` (a .jsonl file
 * or a records store; NULL: the replay itself, without the task tuned)
 * names the records transfer learns from. */
hetc_status_t sim_runner_open(sim_runner_t *runner, const char *replay, const char *transfer_from);
void sim_runner_close(sim_runner_t *runner);

typedef struct sim_outcome_t {
  int32_t trials_to_95; /* trials + 1 when never reached */
  double overhead_seconds;
} sim_outcome_t;

/* Tunes task `task` in simulation with `search` (transfer on or off) until
 * it is within 95% of the recorded best or `trials` pass. */
hetc_status_t sim_runner_run(sim_runner_t *runner, int32_t task, hetc_search_kind_t search, int transfer,
                             uint64_t seed, int32_t trials, sim_outcome_t *out);

/* The median of `values` (sorted in place); 0 when n is 0. */
double sim_median(double *values, int32_t n);

#endif /* HETC_TESTS_TUNE_SIM_RUNNER_H_ */
