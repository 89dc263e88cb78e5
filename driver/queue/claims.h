/* driver/queue/claims.h -- workers and their leases on tasks
 * (api/queue-format.md, "Workers and leases"). A worker registers, claims
 * one task at a time with a lease (FOR UPDATE SKIP LOCKED: two workers
 * never claim one task), renews its leases with every heartbeat, and
 * reports progress only while the task is still its own: a worker whose
 * lease expired and was claimed again learns it at its next report and
 * stops. Internal to libhetc; `hetc worker` runs on top. */
#ifndef HETC_DRIVER_QUEUE_CLAIMS_H_
#define HETC_DRIVER_QUEUE_CLAIMS_H_

#include <stdint.h>

#include "queue/queue.h"

/* How long a claim lasts past the worker's last heartbeat, unless the
 * worker says otherwise (`hetc worker --lease S`). */
#define HETC_QUEUE_LEASE_S 60

/* A task a worker claimed: what it needs to tune it. */
typedef struct hetc_queue_claim_t {
  int64_t task_id;
  int64_t job_id;
  int32_t model_index;
  int32_t task_number; /* 1-based, as `hetc tasks` numbers the model's tasks */
  char target[32];
  char workload_key[256];
  int32_t trials;      /* asked for */
  int32_t trials_done; /* by earlier claims of the task */
  int32_t attempts;    /* claims of the task, this one included */
} hetc_queue_claim_t;

/* Registers this process as a worker offering `targets` (names; devices:
 * free text, the devices' fingerprints). *out_worker_id identifies it. */
hetc_status_t hetc_queue_worker_register(hetc_queue_t *queue, const char *const *targets, int32_t num_targets,
                                         const char *devices, int64_t *out_worker_id);

/* Says the worker is alive and what it is doing; renews the lease of the
 * task it works on (task_id; 0: none) for lease_s seconds. Only that one:
 * a claim whose answer was lost with the connection (and claimed again
 * after it) is left to expire. */
hetc_status_t hetc_queue_worker_heartbeat(hetc_queue_t *queue, int64_t worker_id, int64_t task_id, int32_t lease_s,
                                          const char *doing);

/* Claims the next task for one of the worker's targets, leased for
 * lease_s seconds: of a job not cancelled, queued or with an expired
 * lease, highest priority first, then the job `loaded_job` (whose model
 * the worker has loaded; 0: none), then oldest job, then model and task
 * order. *out_claimed is 0 when there is none. */
hetc_status_t hetc_queue_claim(hetc_queue_t *queue, int64_t worker_id, int32_t lease_s, int64_t loaded_job,
                               hetc_queue_claim_t *out_claim, int *out_claimed);

/* Where a reported task stands. */
typedef enum hetc_queue_outcome_t {
  HETC_QUEUE_GOING = 0,  /* still being tuned */
  HETC_QUEUE_DONE = 1,   /* tuned to its trials */
  HETC_QUEUE_FAILED = 2, /* tuning failed: `message` says why */
} hetc_queue_outcome_t;

/* Records a claimed task's progress (trials done so far, best median in
 * seconds or 0) and its outcome. *out_still_ours is 0 when the task is no
 * longer the worker's (its lease expired and another worker claimed it)
 * or its job was cancelled: the worker stops the task then; nothing is
 * written. */
hetc_status_t hetc_queue_report(hetc_queue_t *queue, int64_t worker_id, int64_t task_id, int32_t trials_done,
                                double best_seconds, hetc_queue_outcome_t outcome, const char *message,
                                int *out_still_ours);

/* hetc_queue_workers (hetc.h) lists the registered workers. */

/* Gives the worker's claimed tasks back (queued again, their progress
 * kept) and removes the worker: a clean stop. */
hetc_status_t hetc_queue_worker_leave(hetc_queue_t *queue, int64_t worker_id);

#endif /* HETC_DRIVER_QUEUE_CLAIMS_H_ */
