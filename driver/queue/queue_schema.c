/* The queue's tables (api/queue-format.md): created on first use, their
 * version checked on every open. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "queue/queue.h"

/* An arbitrary key for the advisory lock that orders concurrent first
 * users ("hetcqueu" in ASCII). */
#define SCHEMA_LOCK_KEY "7521680232399173493"

static const char *const create_statements[] = {
    "CREATE TABLE IF NOT EXISTS hetc_meta (key text PRIMARY KEY, value text NOT NULL)",
    "CREATE TABLE IF NOT EXISTS hetc_jobs ("
    " id bigserial PRIMARY KEY,"
    " cancelled boolean NOT NULL DEFAULT false,"
    " priority integer NOT NULL DEFAULT 0 CHECK (priority BETWEEN -1000 AND 1000),"
    " submitted_at timestamptz NOT NULL DEFAULT now(),"
    " submitter text NOT NULL,"
    " targets text[] NOT NULL,"
    " trials integer NOT NULL CHECK (trials > 0),"
    " search text NOT NULL,"
    " seed bigint NOT NULL)",
    "CREATE TABLE IF NOT EXISTS hetc_job_models ("
    " job_id bigint NOT NULL REFERENCES hetc_jobs(id) ON DELETE CASCADE,"
    " model_index integer NOT NULL,"
    " file_name text NOT NULL,"
    " content bytea NOT NULL,"
    " input_shapes text,"
    " PRIMARY KEY (job_id, model_index))",
    "CREATE TABLE IF NOT EXISTS hetc_workers ("
    " id bigserial PRIMARY KEY,"
    " name text NOT NULL,"
    " targets text[] NOT NULL,"
    " devices text NOT NULL DEFAULT '',"
    " started_at timestamptz NOT NULL DEFAULT now(),"
    " heartbeat_at timestamptz NOT NULL DEFAULT now(),"
    " doing text NOT NULL DEFAULT '')",
    "CREATE TABLE IF NOT EXISTS hetc_tasks ("
    " id bigserial PRIMARY KEY,"
    " job_id bigint NOT NULL REFERENCES hetc_jobs(id) ON DELETE CASCADE,"
    " model_index integer NOT NULL,"
    " task_number integer NOT NULL CHECK (task_number > 0),"
    " target text NOT NULL,"
    " workload_key text NOT NULL,"
    " node_count integer NOT NULL,"
    " flops double precision NOT NULL,"
    " trials integer NOT NULL,"
    " trials_done integer NOT NULL DEFAULT 0,"
    " best_seconds double precision,"
    " state text NOT NULL DEFAULT 'queued' CHECK (state IN ('queued', 'claimed', 'done', 'failed')),"
    " message text,"
    " worker_id bigint REFERENCES hetc_workers(id) ON DELETE SET NULL,"
    " lease_until timestamptz,"
    " attempts integer NOT NULL DEFAULT 0,"
    " UNIQUE (job_id, model_index, task_number, target))",
    "CREATE INDEX IF NOT EXISTS hetc_tasks_by_state ON hetc_tasks (state, target)",
};

/* The schema version the database holds in *out_version: 0 when it has no
 * queue tables yet. Inside the caller's transaction. */
static hetc_status_t stored_version(hetc_pg_t *pg, long long *out_version) {
  PGresult *result;
  *out_version = 0;
  HETC_RETURN_IF_ERROR(
      hetc_pg_exec(pg, "opening the queue", "SELECT to_regclass('hetc_meta') IS NOT NULL", 0, NULL, &result));
  const int has_meta = !strcmp(hetc_pg_text(result, 0, 0), "t");
  PQclear(result);
  if (!has_meta) return NULL;
  HETC_RETURN_IF_ERROR(hetc_pg_exec(pg, "opening the queue",
                                    "SELECT value FROM hetc_meta WHERE key = 'queue_schema'", 0, NULL, &result));
  if (PQntuples(result) == 1) *out_version = hetc_pg_int(result, 0, 0);
  PQclear(result);
  return NULL;
}

static hetc_status_t create_tables(hetc_pg_t *pg) {
  for (size_t k = 0; k < sizeof(create_statements) / sizeof(create_statements[0]); ++k)
    HETC_RETURN_IF_ERROR(hetc_pg_exec(pg, "creating the queue's tables", create_statements[k], 0, NULL, NULL));
  char version[16];
  snprintf(version, sizeof(version), "%d", HETC_QUEUE_SCHEMA_VERSION);
  const char *params[1] = {version};
  return hetc_pg_exec(pg, "creating the queue's tables",
                      "INSERT INTO hetc_meta (key, value) VALUES ('queue_schema', $1)", 1, params, NULL);
}

hetc_status_t hetc_queue_schema_ensure(hetc_pg_t *pg) {
  HETC_RETURN_IF_ERROR(hetc_pg_exec(pg, "opening the queue", "BEGIN", 0, NULL, NULL));
  long long version = 0;
  hetc_status_t status =
      hetc_pg_exec(pg, "opening the queue", "SELECT pg_advisory_xact_lock(" SCHEMA_LOCK_KEY ")", 0, NULL, NULL);
  if (!status) status = stored_version(pg, &version);
  if (!status && version == 0) status = create_tables(pg);
  else if (!status && version != HETC_QUEUE_SCHEMA_VERSION)
    status = hetc_status_new(HETC_STATUS_BAD_INPUT,
                             "%s: the database holds hetc queue tables of schema %lld; this hetc reads schema %d",
                             pg->shown_uri, version, HETC_QUEUE_SCHEMA_VERSION);
  hetc_status_t end = hetc_pg_exec(pg, "opening the queue", status ? "ROLLBACK" : "COMMIT", 0, NULL, NULL);
  if (!status) return end;
  hetc_status_free(end);
  return status;
}
