/* driver/tune/tuner.h -- tuning tasks: search, measure, learn, record.
 *
 * README.md, "Tuning", end to end: a task's space is the union of its templates; each
 * round the search proposes a batch (the model-guided one on the transfer
 * cost model's predictions), the measurer builds and times it in workers
 * (or the replayed records answer, in simulation mode), every result goes
 * to the records store, and the model learns from it. Records already in
 * the store are never measured again, so an interrupted run resumes; the
 * configs of each batch are claimed in the store first
 * (hetc_records_claim), so tuners sharing a store never measure one twice. */
#ifndef HETC_DRIVER_TUNE_TUNER_H_
#define HETC_DRIVER_TUNE_TUNER_H_

#include <stdio.h>

#include "graph/graph.h"
#include "tune/measure.h"
#include "tune/search.h"

typedef struct hetc_tune_options_t {
  const char *records_path;   /* store; NULL: the per-user one */
  const char *overrides_path; /* space overrides (api/space-overrides.md); NULL: none */
  /* Simulation: a records store (or .jsonl file) replayed as the device;
   * candidates it does not hold are not proposed. NULL: measure for real. */
  const char *simulate_path;
  /* Simulation: stop a task once its best is within this fraction of the
   * replayed records' best (0: run all trials). Searchers are compared by
   * the trials this takes. */
  double simulate_stop_fraction;
  /* Simulation: a replayed batch takes the time it took when it was
   * measured (its longest build, then each candidate's measurement in
   * turn), spent asleep, as a machine waiting on its device would. */
  int32_t simulate_in_time;
  /* Simulation: the device fingerprint the records written are kept
   * under (NULL: the replayed records'), so that simulated devices do not
   * share records. */
  const char *simulate_fingerprint;
  hetc_search_kind_t search;  /* default HETC_SEARCH_MODEL */
  int32_t trials;             /* per task; default 200 */
  int32_t early_stopping;     /* stop a task after this many trials without improvement; 0: never */
  double time_budget_s;       /* the whole run, spread over tasks by their share of the time; 0: none */
  int32_t batch;              /* candidates per round; 0: 16 */
  int32_t transfer;           /* 1: the model also learns from other tasks' records */
  int32_t device_index;       /* of each target; default 0 */
  /* Tune only these tasks, by the 1-based numbers `hetc tasks` prints
   * (borrowed); NULL: every task. */
  const int32_t *task_numbers;
  int32_t num_task_numbers;
  hetc_measure_options_t measure;
  uint64_t seed;
  FILE *progress;             /* progress lines; NULL: quiet */
  /* Called after each batch with the task's trials so far (the store's
   * included) and its best median in seconds (0 before a success); a
   * nonzero return ends the task there, as its trials being reached would.
   * The queue's workers report progress with it and stop a task whose
   * lease was lost or whose job was cancelled. NULL: never called. */
  int (*after_batch)(void *user_data, int32_t trials_done, double best_seconds);
  void *after_batch_data;
  /* The plugins to tune with, borrowed, their peaks already kept by their
   * owner (a worker that tunes task after task opens them once: opening
   * them measures every device's peak); NULL: the tuner opens its own. */
  struct hetc_registry_t *registry;
  /* The records store, borrowed and opened for writing by the owner (a
   * worker keeps one connection for all its tasks); NULL: the tuner opens
   * records_path. */
  struct hetc_records_t *store;
} hetc_tune_options_t;

/* Defaults as documented above, transfer on, quiet. */
hetc_tune_options_t hetc_tune_default_options(void);

/* hetc_tune_task_result_t (task_number is 0 from hetc_tuner_tune_task),
 * hetc_tuner_t, hetc_tuner_free, hetc_tuner_tune_graph (optimises the
 * graph inside), hetc_tuner_records_written, hetc_tuner_dropped,
 * hetc_tuner_records_path and hetc_tuner_overhead_seconds are public
 * (hetc/hetc.h); hetc_tuner_open is hetc_tuner_create from public options. */

/* Opens the records store, the plugins and (with transfer) the global cost
 * model. *out_tuner is released with hetc_tuner_free. */
hetc_status_t hetc_tuner_create(const hetc_tune_options_t *options, hetc_tuner_t **out_tuner);

/* What hetc_tuner_tune_graph would refuse of its arguments, without a
 * tuner: a target the registry serves no plugin for, a task number beyond
 * the model's tasks (model NULL: the targets only; task_numbers NULL:
 * every task). */
hetc_status_t hetc_tune_check_arguments(struct hetc_registry_t *registry, const hetc_graph_t *model,
                                        const char *const *targets, int32_t num_targets,
                                        const int32_t *task_numbers, int32_t num_task_numbers);

/* Tunes one workload on `target` until the store holds `trials` trials of
 * it for this device (records found there count: a rerun resumes), the
 * options' early stopping says stop, the space is exhausted, or
 * `deadline_s` passes (a CLOCK_MONOTONIC time; 0: none). `label` heads the
 * progress lines ("[Task 3/12]"). */
hetc_status_t hetc_tuner_tune_task(hetc_tuner_t *tuner, const char *target,
                                   const hetc_plugin_workload_t *workload, const char *label,
                                   int32_t trials, double deadline_s,
                                   hetc_tune_task_result_t *out_result);

#endif /* HETC_DRIVER_TUNE_TUNER_H_ */
