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
} hetc_tune_options_t;

/* Defaults as documented above, transfer on, quiet. */
hetc_tune_options_t hetc_tune_default_options(void);

typedef struct hetc_tune_task_result_t {
  int32_t task_number;     /* 1-based, as `hetc tasks` prints it; 0 from hetc_tuner_tune_task */
  char workload_key[256];
  char target[32];
  char template_name[64];  /* of the best config; "" when none succeeded */
  double flops;            /* of one run */
  int32_t count;           /* nodes of the model with this workload */
  double best_seconds;     /* median of the best record; 0 when none */
  double best_gflops;
  double peak_fraction;    /* best_gflops / the device's peak */
  int32_t trials;          /* measured (or replayed) by this run */
  int32_t failed;          /* of those, with an error */
  int32_t from_store;      /* records found in the store before the run */
  /* Trials (1-based, counting this run's only) after which the best was
   * within 95% of this run's final best throughput (in simulation, of the
   * replayed best); 0 when it never was. */
  int32_t trials_to_95;
  /* Simulation: the best throughput among the replayed records, which
   * trials_to_95 is then measured against. */
  double replay_best_gflops;
  double seconds;          /* wall time spent on the task */
  double measure_seconds;  /* of which waiting for builds and measurements */
} hetc_tune_task_result_t;

typedef struct hetc_tuner_t hetc_tuner_t;

/* Opens the records store, the plugins and (with transfer) the global cost
 * model. *out_tuner is released with hetc_tuner_free. */
hetc_status_t hetc_tuner_create(const hetc_tune_options_t *options, hetc_tuner_t **out_tuner);
void hetc_tuner_free(hetc_tuner_t *tuner);

/* Tunes one workload on `target` until the store holds `trials` trials of
 * it for this device (records found there count: a rerun resumes), the
 * options' early stopping says stop, the space is exhausted, or
 * `deadline_s` passes (a CLOCK_MONOTONIC time; 0: none). `label` heads the
 * progress lines ("[Task 3/12]"). */
hetc_status_t hetc_tuner_tune_task(hetc_tuner_t *tuner, const char *target,
                                   const hetc_plugin_workload_t *workload, const char *label,
                                   int32_t trials, double deadline_s,
                                   hetc_tune_task_result_t *out_result);

/* Every task of `graph` (optimised inside) on every target, spending the
 * time budget across tasks by their share of the model's time. out_results
 * (owned by the caller, free()) gets one entry per task and target. */
hetc_status_t hetc_tuner_tune_graph(hetc_tuner_t *tuner, const hetc_graph_t *graph,
                                    const char *const *targets, int32_t num_targets,
                                    hetc_tune_task_result_t **out_results, int32_t *out_count);

/* Records this tuner added to its store so far. */
int64_t hetc_tuner_records_written(const hetc_tuner_t *tuner);
/* Candidates of the batch in flight when the user interrupted hetc
 * (tune/interrupt.h): dropped, nothing of them recorded; 0 otherwise. */
int32_t hetc_tuner_dropped(const hetc_tuner_t *tuner);
/* The store's path (borrowed). */
const char *hetc_tuner_records_path(const hetc_tuner_t *tuner);

/* Seconds since hetc_tuner_create not spent waiting for builds and
 * measurements (loading plugins, spaces, search, model, features, store):
 * the tuner's overhead. */
double hetc_tuner_overhead_seconds(const hetc_tuner_t *tuner);

#endif /* HETC_DRIVER_TUNE_TUNER_H_ */
