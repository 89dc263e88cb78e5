/* driver/tune/measure.h -- measuring candidates in worker processes.
 *
 * README.md, "Tuning": candidates are built in parallel by worker
 * processes (hetc-measure-worker), then measured one at a time, with no
 * build running, since a CPU measurement shares the cores with builds and
 * a device is never given two measurements at once. A watchdog turns a
 * hang into a build or run timeout and a crash into a record; the dead
 * worker is replaced and the batch goes on. A worker killed from outside
 * (SIGKILL, SIGTERM, the OOM killer) is replaced too, and its candidate
 * measured again: only a crash of its own is held against a candidate. */
#ifndef HETC_DRIVER_TUNE_MEASURE_H_
#define HETC_DRIVER_TUNE_MEASURE_H_

#include <stdint.h>
#include <sys/types.h>

#include "records/record.h"
#include "tune/trial.h"

typedef struct hetc_measure_options_t {
  hetc_trial_options_t trial;
  int32_t build_workers;  /* parallel builds; 0: the online cores */
  double build_timeout_s; /* per candidate's build */
  double run_timeout_s;   /* per candidate's check and timing */
} hetc_measure_options_t;

/* hetc_trial_default_options(), workers 0, build timeout 60 s, run
 * timeout 30 s. */
hetc_measure_options_t hetc_measure_default_options(void);

typedef struct hetc_measurer_t hetc_measurer_t;

/* A measurer for one device of one target. Workers start on first use;
 * the path of the worker program is $HETC_MEASURE_WORKER, else
 * hetc/hetc-measure-worker beside libhetc. *out_measurer is released with
 * hetc_measurer_free. Not thread-safe: one batch at a time. */
hetc_status_t hetc_measurer_create(const char *target, int32_t device_index,
                                   const hetc_measure_options_t *options,
                                   hetc_measurer_t **out_measurer);
/* The device the measurer measures on: its fingerprint names its turn in
 * the machine's tuning locks (device_lock.h), and a CPU device's
 * measurements also hold the cores alone. Before it is said, the target's
 * name stands for the device, taken for a CPU. */
hetc_status_t hetc_measurer_set_device(hetc_measurer_t *m, const char *fingerprint, int is_cpu);
/* Stops every worker and waits for it, so none is left behind. */
void hetc_measurer_free(hetc_measurer_t *measurer);

typedef struct hetc_measure_input_t {
  int32_t template_index;
  const hetc_plugin_config_t *config; /* borrowed for the call */
} hetc_measure_input_t;

/* Builds and measures `count` candidates for `workload`. Fills in each
 * out_records[i] only what measuring knows: error, error_message (owned by
 * the record), costs, num_costs, build_seconds and total_seconds; the
 * caller fills the identity fields. out_measured[i] is 1 when the record
 * holds the candidate's measurement or its own failure, 0 when it was not
 * measured for reasons that are not its own -- its worker was killed from
 * outside (not by a crash of its own: measured again on another worker,
 * given up after a few such deaths), or its workers kept dying under other
 * candidates -- and must not be recorded. A candidate's failure is its
 * record's error, not the call's: the call fails only when workers cannot
 * be started at all (UNAVAILABLE, with the worker's reason), memory runs
 * out, or the user interrupted hetc (UNAVAILABLE, tune/interrupt.h; the
 * workers are stopped and nothing of the batch is measured). */
hetc_status_t hetc_measurer_run(hetc_measurer_t *measurer, const hetc_plugin_workload_t *workload,
                                const hetc_measure_input_t *inputs, int32_t count,
                                hetc_record_t *out_records, uint8_t *out_measured);

/* The process ids of the workers started so far, live or not (for tests
 * that check none is left behind); returns how many were written. */
int32_t hetc_measurer_worker_pids(const hetc_measurer_t *measurer, pid_t *out_pids, int32_t capacity);

#endif /* HETC_DRIVER_TUNE_MEASURE_H_ */
