/* Workers' claims and leases (driver/queue/claims.h) against the tests'
 * PostgreSQL server (pg_server.sh; its folder is $HETC_PG_SERVER_DIR):
 * claims from two threads at once never share a task, a worker claims only
 * its targets' tasks, an expired lease passes the task on and the old
 * worker's reports are refused, cancelled jobs are not claimed and higher
 * priorities go first, a heartbeat renews leases, a worker that leaves
 * gives its tasks back with their progress. Each test has a database of its
 * own. Exit 77 (skipped) without a server. */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <libpq-fe.h>

#include "pg_test_server.h"
#include "queue/claims.h"

static char base_uri[512]; /* the server's URI up to the database */
static hetc_context_t *context;

static void ignore_notice(void *arg, const char *message) {
  (void)arg;
  (void)message;
}

static void sql(const char *database, const char *statement) {
  char uri[600];
  snprintf(uri, sizeof(uri), "%s/%s", base_uri, database);
  PGconn *conn = PQconnectdb(uri);
  assert_int_equal(PQstatus(conn), CONNECTION_OK);
  PQsetNoticeProcessor(conn, ignore_notice, NULL); /* "does not exist, skipping" */
  PGresult *result = PQexec(conn, statement);
  if (PQresultStatus(result) != PGRES_COMMAND_OK && PQresultStatus(result) != PGRES_TUPLES_OK)
    fail_msg("%s: %s", statement, PQresultErrorMessage(result));
  PQclear(result);
  PQfinish(conn);
}

/* A queue in a new, empty database `name`. */
static hetc_queue_t *fresh_queue(const char *name) {
  char statement[256], uri[600];
  snprintf(statement, sizeof(statement), "DROP DATABASE IF EXISTS %s", name);
  sql("postgres", statement);
  snprintf(statement, sizeof(statement), "CREATE DATABASE %s", name);
  sql("postgres", statement);
  snprintf(uri, sizeof(uri), "%s/%s", base_uri, name);
  hetc_queue_t *queue = NULL;
  assert_null(hetc_queue_open(uri, &queue));
  return queue;
}

static hetc_queue_t *another_handle(const char *name) {
  char uri[600];
  snprintf(uri, sizeof(uri), "%s/%s", base_uri, name);
  hetc_queue_t *queue = NULL;
  assert_null(hetc_queue_open(uri, &queue));
  return queue;
}

/* Submits samples/tiny_conv.json (3 tasks) for `targets`. */
static int64_t submit(hetc_queue_t *queue, const char *targets_csv, int32_t priority) {
  char path[1024], storage[64];
  snprintf(path, sizeof(path), "%s/samples/tiny_conv.json", getenv("HETC_SOURCE_DIR"));
  hetc_model_t *model = NULL;
  assert_null(hetc_model_load(path, &model));
  const char *targets[4];
  int32_t count = 0;
  snprintf(storage, sizeof(storage), "%s", targets_csv);
  for (char *t = strtok(storage, ","); t; t = strtok(NULL, ",")) targets[count++] = t;
  const char *paths[1] = {path};
  const hetc_model_t *models[1] = {model};
  const hetc_job_spec_t spec = {.struct_size = sizeof(spec), .model_paths = paths, .models = models,
                                .num_models = 1, .targets = targets, .num_targets = count, .trials = 4,
                                .priority = priority};
  int64_t job = 0;
  assert_null(hetc_queue_submit(context, queue, &spec, &job));
  hetc_model_free(model);
  return job;
}

static int64_t worker(hetc_queue_t *queue, const char *targets_csv) {
  char storage[64];
  const char *targets[4];
  int32_t count = 0;
  snprintf(storage, sizeof(storage), "%s", targets_csv);
  for (char *t = strtok(storage, ","); t; t = strtok(NULL, ",")) targets[count++] = t;
  int64_t id = 0;
  assert_null(hetc_queue_worker_register(queue, targets, count, "test devices", &id));
  return id;
}

static int claim(hetc_queue_t *queue, int64_t worker_id, hetc_queue_claim_t *out) {
  int claimed = 0;
  assert_null(hetc_queue_claim(queue, worker_id, HETC_QUEUE_LEASE_S, 0, out, &claimed));
  return claimed;
}

/* ---- exclusive claims ---------------------------------------------------------- */

typedef struct claimer_t {
  hetc_queue_t *queue;
  int64_t worker_id;
  int64_t tasks[64];
  int count;
} claimer_t;

static void *claim_all(void *arg) {
  claimer_t *c = arg;
  hetc_queue_claim_t claim_data;
  int claimed = 1;
  while (claimed && c->count < 64) {
    hetc_status_t status = hetc_queue_claim(c->queue, c->worker_id, HETC_QUEUE_LEASE_S, 0, &claim_data, &claimed);
    if (status) {
      hetc_status_free(status);
      break;
    }
    if (claimed) c->tasks[c->count++] = claim_data.task_id;
  }
  return NULL;
}

static void test_claims_are_exclusive(void **state) {
  (void)state;
  hetc_queue_t *queue = fresh_queue("claims_exclusive");
  for (int k = 0; k < 4; ++k) submit(queue, "vec,cpu", 0); /* 24 tasks */
  claimer_t claimers[2] = {{another_handle("claims_exclusive"), 0, {0}, 0},
                           {another_handle("claims_exclusive"), 0, {0}, 0}};
  claimers[0].worker_id = worker(claimers[0].queue, "vec,cpu");
  claimers[1].worker_id = worker(claimers[1].queue, "vec,cpu");
  pthread_t threads[2];
  for (int k = 0; k < 2; ++k) assert_int_equal(pthread_create(&threads[k], NULL, claim_all, &claimers[k]), 0);
  for (int k = 0; k < 2; ++k) pthread_join(threads[k], NULL);
  assert_int_equal(claimers[0].count + claimers[1].count, 24);
  for (int a = 0; a < 2; ++a)
    for (int i = 0; i < claimers[a].count; ++i)
      for (int b = 0; b < 2; ++b)
        for (int j = 0; j < claimers[b].count; ++j)
          if (a != b || i != j) assert_true(claimers[a].tasks[i] != claimers[b].tasks[j]);
  for (int k = 0; k < 2; ++k) hetc_queue_close(claimers[k].queue);
  hetc_queue_close(queue);
}

/* ---- targets ------------------------------------------------------------------- */

static void test_claims_only_the_workers_targets(void **state) {
  (void)state;
  hetc_queue_t *queue = fresh_queue("claims_targets");
  submit(queue, "vec,cpu", 0);
  const int64_t cpu_worker = worker(queue, "cpu"), idle_worker = worker(queue, "tpu");
  hetc_queue_claim_t c;
  int cpu_claims = 0;
  while (claim(queue, cpu_worker, &c)) {
    assert_string_equal(c.target, "cpu");
    assert_int_equal(c.trials, 4);
    assert_int_equal(c.attempts, 1);
    ++cpu_claims;
  }
  assert_int_equal(cpu_claims, 3);
  assert_int_equal(claim(queue, idle_worker, &c), 0);
  hetc_queue_close(queue);
}

/* ---- leases -------------------------------------------------------------------- */

static void test_expired_lease_passes_the_task_on(void **state) {
  (void)state;
  hetc_queue_t *queue = fresh_queue("claims_lease");
  submit(queue, "vec", 0);
  const int64_t first = worker(queue, "vec"), second = worker(queue, "vec");
  hetc_queue_claim_t a, b;
  assert_true(claim(queue, first, &a));
  int ours = 0;
  assert_null(hetc_queue_report(queue, first, a.task_id, 2, 0.5e-3, HETC_QUEUE_GOING, NULL, &ours));
  assert_true(ours);
  /* The first worker stops heartbeating (killed): its lease runs out. */
  sql("claims_lease", "UPDATE hetc_tasks SET lease_until = now() - interval '1 second' WHERE state = 'claimed'");
  assert_true(claim(queue, second, &b));
  assert_int_equal(b.task_id, a.task_id);
  assert_int_equal(b.attempts, 2);
  assert_int_equal(b.trials_done, 2); /* the progress is kept */
  /* The first worker comes back: its report is refused, nothing written. */
  assert_null(hetc_queue_report(queue, first, a.task_id, 4, 0.1e-3, HETC_QUEUE_DONE, NULL, &ours));
  assert_false(ours);
  assert_null(hetc_queue_report(queue, second, b.task_id, 4, 0.4e-3, HETC_QUEUE_DONE, NULL, &ours));
  assert_true(ours);
  hetc_job_info_t job;
  hetc_job_task_t *tasks = NULL;
  int32_t count = 0;
  assert_null(hetc_queue_job(queue, b.job_id, &job, &tasks, &count));
  for (int32_t k = 0; k < count; ++k)
    if (tasks[k].task_number == b.task_number) {
      assert_int_equal(tasks[k].state, HETC_JOB_DONE);
      assert_int_equal(tasks[k].trials_done, 4);
      assert_true(tasks[k].best_seconds == 0.4e-3); /* the refused 0.1 ms is not there */
    }
  hetc_free(tasks);
  hetc_queue_close(queue);
}

static void test_heartbeat_renews_leases(void **state) {
  (void)state;
  hetc_queue_t *queue = fresh_queue("claims_heartbeat");
  submit(queue, "vec", 0);
  const int64_t w = worker(queue, "vec"), other = worker(queue, "vec");
  hetc_queue_claim_t c;
  assert_true(claim(queue, w, &c));
  sql("claims_heartbeat", "UPDATE hetc_tasks SET lease_until = now() - interval '1 second' WHERE state = 'claimed'");
  assert_null(hetc_queue_worker_heartbeat(queue, w, c.task_id, HETC_QUEUE_LEASE_S, "tuning"));
  /* Renewed: the other worker gets the next task, not this one. */
  hetc_queue_claim_t d;
  assert_true(claim(queue, other, &d));
  assert_true(d.task_id != c.task_id);
  hetc_queue_close(queue);
}

/* ---- cancel, priority, leave ------------------------------------------------------ */

static void test_priority_and_cancel(void **state) {
  (void)state;
  hetc_queue_t *queue = fresh_queue("claims_priority");
  const int64_t low = submit(queue, "vec", 0), high = submit(queue, "vec", 5);
  const int64_t w = worker(queue, "vec");
  hetc_queue_claim_t c;
  assert_true(claim(queue, w, &c));
  assert_int_equal(c.job_id, high);
  int32_t state_after = -1;
  assert_null(hetc_queue_cancel(queue, high, &state_after));
  assert_int_equal(state_after, HETC_JOB_CANCELLED);
  int ours = 1;
  assert_null(hetc_queue_report(queue, w, c.task_id, 1, 1e-3, HETC_QUEUE_GOING, NULL, &ours));
  assert_false(ours); /* the worker stops the cancelled job's task */
  while (claim(queue, w, &c)) assert_int_equal(c.job_id, low);
  hetc_queue_close(queue);
}

/* Among jobs of one priority, a worker goes on with the job whose model it
 * has loaded before it takes an older job's task; a higher priority still
 * comes first. */
static void test_loaded_job_goes_first(void **state) {
  (void)state;
  hetc_queue_t *queue = fresh_queue("claims_loaded");
  const int64_t older = submit(queue, "vec", 0), newer = submit(queue, "vec", 0);
  const int64_t w = worker(queue, "vec");
  hetc_queue_claim_t c;
  int claimed = 0;
  assert_null(hetc_queue_claim(queue, w, HETC_QUEUE_LEASE_S, newer, &c, &claimed));
  assert_true(claimed);
  assert_int_equal(c.job_id, newer);
  assert_true(claim(queue, w, &c));
  assert_int_equal(c.job_id, older);
  const int64_t urgent = submit(queue, "vec", 9);
  assert_null(hetc_queue_claim(queue, w, HETC_QUEUE_LEASE_S, newer, &c, &claimed));
  assert_true(claimed);
  assert_int_equal(c.job_id, urgent);
  hetc_queue_close(queue);
}

static void test_leave_gives_tasks_back(void **state) {
  (void)state;
  hetc_queue_t *queue = fresh_queue("claims_leave");
  submit(queue, "vec", 0);
  const int64_t w = worker(queue, "vec");
  hetc_queue_claim_t c, again;
  assert_true(claim(queue, w, &c));
  int ours = 0;
  assert_null(hetc_queue_report(queue, w, c.task_id, 3, 2e-3, HETC_QUEUE_GOING, NULL, &ours));
  assert_null(hetc_queue_worker_leave(queue, w));
  const int64_t next = worker(queue, "vec");
  assert_true(claim(queue, next, &again));
  assert_int_equal(again.task_id, c.task_id);
  assert_int_equal(again.trials_done, 3);
  hetc_queue_close(queue);
}

int main(void) {
  if (!pg_test_server_uri(base_uri, sizeof(base_uri))) return 77;
  char *last_slash = strrchr(base_uri, '/');
  if (last_slash) *last_slash = '\0';
  hetc_status_t status = hetc_context_create(&context);
  if (status) {
    printf("context: %s\n", hetc_status_message(status));
    return 1;
  }
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_claims_are_exclusive),     cmocka_unit_test(test_claims_only_the_workers_targets),
      cmocka_unit_test(test_expired_lease_passes_the_task_on), cmocka_unit_test(test_heartbeat_renews_leases),
      cmocka_unit_test(test_priority_and_cancel),      cmocka_unit_test(test_leave_gives_tasks_back),
      cmocka_unit_test(test_loaded_job_goes_first),
  };
  const int failed = cmocka_run_group_tests(tests, NULL, NULL);
  hetc_context_destroy(context);
  return failed;
}
