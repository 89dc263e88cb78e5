/* Workers and their leases on tasks (claims.h). */
#include "queue/claims.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>


static void id_text(int64_t id, char *out, size_t size) { snprintf(out, size, "%lld", (long long)id); }

hetc_status_t hetc_queue_worker_register(hetc_queue_t *queue, const char *const *targets, int32_t num_targets,
                                         const char *devices, int64_t *out_worker_id) {
  *out_worker_id = 0;
  char name[160], array[1024];
  hetc_queue_process_name(name, sizeof(name));
  HETC_RETURN_IF_ERROR(hetc_pg_name_array(targets, num_targets, "target", array, sizeof(array)));
  const char *params[3] = {name, array, devices ? devices : ""};
  PGresult *result;
  HETC_RETURN_IF_ERROR(hetc_pg_exec(&queue->pg, "registering a worker",
                                    "INSERT INTO hetc_workers (name, targets, devices) VALUES ($1, $2, $3) RETURNING id",
                                    3, params, &result));
  *out_worker_id = hetc_pg_int(result, 0, 0);
  PQclear(result);
  return NULL;
}

hetc_status_t hetc_queue_worker_heartbeat(hetc_queue_t *queue, int64_t worker_id, int64_t task_id, int32_t lease_s,
                                          const char *doing) {
  char id[32], lease[16], task[32];
  id_text(worker_id, id, sizeof(id));
  id_text(task_id, task, sizeof(task));
  snprintf(lease, sizeof(lease), "%d", (int)lease_s);
  const char *params[3] = {id, doing ? doing : "", lease};
  HETC_RETURN_IF_ERROR(hetc_pg_exec(&queue->pg, "a worker's heartbeat",
                                    "UPDATE hetc_workers SET heartbeat_at = now(), doing = $2 WHERE id = $1", 2,
                                    params, NULL));
  if (!task_id) return NULL;
  const char *renew[3] = {id, lease, task};
  return hetc_pg_exec(&queue->pg, "renewing a worker's lease",
                      "UPDATE hetc_tasks SET lease_until = now() + make_interval(secs => $2::integer) "
                      "WHERE worker_id = $1 AND id = $3 AND state = 'claimed'",
                      3, renew, NULL);
}

hetc_status_t hetc_queue_claim(hetc_queue_t *queue, int64_t worker_id, int32_t lease_s, int64_t loaded_job,
                               hetc_queue_claim_t *out_claim, int *out_claimed) {
  memset(out_claim, 0, sizeof(*out_claim));
  *out_claimed = 0;
  char id[32], lease[16], loaded[32];
  id_text(worker_id, id, sizeof(id));
  id_text(loaded_job, loaded, sizeof(loaded));
  snprintf(lease, sizeof(lease), "%d", (int)lease_s);
  const char *params[3] = {id, lease, loaded};
  /* SKIP LOCKED: a row another worker is claiming is passed over, not
   * waited for, so claims do not queue behind each other. */
  static const char sql[] =
           "UPDATE hetc_tasks SET state = 'claimed', worker_id = $1, "
           "lease_until = now() + make_interval(secs => $2::integer), attempts = attempts + 1 "
           "WHERE id = (SELECT t.id FROM hetc_tasks t JOIN hetc_jobs j ON j.id = t.job_id "
           "            WHERE NOT j.cancelled "
           "              AND t.target = ANY (SELECT unnest(targets) FROM hetc_workers WHERE id = $1) "
           "              AND (t.state = 'queued' OR (t.state = 'claimed' AND t.lease_until < now())) "
           "            ORDER BY j.priority DESC, j.id = $3::bigint DESC, j.id, t.model_index, t.task_number, t.id "
           "            LIMIT 1 FOR UPDATE OF t SKIP LOCKED) "
           "RETURNING id, job_id, model_index, task_number, target, workload_key, trials, trials_done, attempts";
  PGresult *result;
  HETC_RETURN_IF_ERROR(hetc_pg_exec(&queue->pg, "claiming a task", sql, 3, params, &result));
  if (PQntuples(result) == 1) {
    out_claim->task_id = hetc_pg_int(result, 0, 0);
    out_claim->job_id = hetc_pg_int(result, 0, 1);
    out_claim->model_index = (int32_t)hetc_pg_int(result, 0, 2);
    out_claim->task_number = (int32_t)hetc_pg_int(result, 0, 3);
    snprintf(out_claim->target, sizeof(out_claim->target), "%s", hetc_pg_text(result, 0, 4));
    snprintf(out_claim->workload_key, sizeof(out_claim->workload_key), "%s", hetc_pg_text(result, 0, 5));
    out_claim->trials = (int32_t)hetc_pg_int(result, 0, 6);
    out_claim->trials_done = (int32_t)hetc_pg_int(result, 0, 7);
    out_claim->attempts = (int32_t)hetc_pg_int(result, 0, 8);
    *out_claimed = 1;
  }
  PQclear(result);
  return NULL;
}

hetc_status_t hetc_queue_report(hetc_queue_t *queue, int64_t worker_id, int64_t task_id, int32_t trials_done,
                                double best_seconds, hetc_queue_outcome_t outcome, const char *message,
                                int *out_still_ours) {
  static const char *const states[] = {"claimed", "done", "failed"};
  *out_still_ours = 0;
  char worker[32], task[32], trials[16], best[40];
  id_text(worker_id, worker, sizeof(worker));
  id_text(task_id, task, sizeof(task));
  snprintf(trials, sizeof(trials), "%d", (int)trials_done);
  snprintf(best, sizeof(best), "%.17g", best_seconds);
  const char *params[6] = {worker, task, trials, best_seconds > 0 ? best : NULL, states[outcome],
                           outcome == HETC_QUEUE_FAILED ? message : NULL};
  /* The best only improves, and trials only grow: a report of an older
   * state (a slow worker's) takes nothing back. */
  PGresult *result;
  HETC_RETURN_IF_ERROR(hetc_pg_exec(
      &queue->pg, "reporting a task's progress",
      "UPDATE hetc_tasks t SET trials_done = greatest(t.trials_done, $3::integer), "
      "best_seconds = CASE WHEN $4::double precision IS NULL THEN t.best_seconds "
      "                    ELSE least(coalesce(t.best_seconds, $4::double precision), $4::double precision) END, "
      "state = $5, worker_id = CASE WHEN $5 = 'claimed' THEN t.worker_id END, message = $6 "
      "FROM hetc_jobs j WHERE t.id = $2 AND t.worker_id = $1 AND t.state = 'claimed' AND j.id = t.job_id "
      "AND NOT j.cancelled RETURNING t.id",
      6, params, &result));
  *out_still_ours = PQntuples(result) == 1;
  PQclear(result);
  return NULL;
}

hetc_status_t hetc_queue_workers(hetc_queue_t *queue, hetc_queue_worker_t **out_workers, int32_t *out_count) {
  *out_workers = NULL;
  *out_count = 0;
  PGresult *result;
  HETC_RETURN_IF_ERROR(hetc_pg_exec(&queue->pg, "listing workers",
                                    "SELECT id, name, array_to_string(targets, ','), "
                                    "extract(epoch FROM now() - heartbeat_at), doing FROM hetc_workers ORDER BY id",
                                    0, NULL, &result));
  const int rows = PQntuples(result);
  hetc_queue_worker_t *workers = calloc((size_t)rows + 1, sizeof(*workers));
  if (!workers) {
    PQclear(result);
    return hetc_status_new(HETC_STATUS_OUT_OF_MEMORY, "listing workers");
  }
  for (int row = 0; row < rows; ++row) {
    hetc_queue_worker_t *w = &workers[row];
    w->id = hetc_pg_int(result, row, 0);
    snprintf(w->name, sizeof(w->name), "%s", hetc_pg_text(result, row, 1));
    snprintf(w->targets, sizeof(w->targets), "%s", hetc_pg_text(result, row, 2));
    w->heartbeat_age_s = hetc_pg_double(result, row, 3);
    snprintf(w->doing, sizeof(w->doing), "%s", hetc_pg_text(result, row, 4));
  }
  PQclear(result);
  *out_workers = workers;
  *out_count = rows;
  return NULL;
}

hetc_status_t hetc_queue_worker_leave(hetc_queue_t *queue, int64_t worker_id) {
  char id[32];
  id_text(worker_id, id, sizeof(id));
  const char *params[1] = {id};
  HETC_RETURN_IF_ERROR(hetc_pg_exec(&queue->pg, "a worker leaving",
                                    "UPDATE hetc_tasks SET state = 'queued', worker_id = NULL, lease_until = NULL "
                                    "WHERE worker_id = $1 AND state = 'claimed'",
                                    1, params, NULL));
  return hetc_pg_exec(&queue->pg, "a worker leaving", "DELETE FROM hetc_workers WHERE id = $1", 1, params, NULL);
}
