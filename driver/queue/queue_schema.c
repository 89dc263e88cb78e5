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
    "CREATE TABLE hetc_meta (key text PRIMARY KEY, value text NOT NULL)",
    "CREATE TABLE hetc_jobs ("
    " id bigserial PRIMARY KEY,"
    " cancelled boolean NOT NULL DEFAULT false,"
    " priority integer NOT NULL DEFAULT 0 CHECK (priority BETWEEN -1000 AND 1000),"
    " submitted_at timestamptz NOT NULL DEFAULT now(),"
    " submitter text NOT NULL,"
    " targets text[] NOT NULL,"
    " trials integer NOT NULL CHECK (trials > 0),"
    " search text NOT NULL,"
    " seed bigint NOT NULL)",
    "CREATE TABLE hetc_job_models ("
    " job_id bigint NOT NULL REFERENCES hetc_jobs(id) ON DELETE CASCADE,"
    " model_index integer NOT NULL,"
    " file_name text NOT NULL,"
    " content bytea NOT NULL,"
    " input_shapes text,"
    " PRIMARY KEY (job_id, model_index))",
    "CREATE TABLE hetc_workers ("
    " id bigserial PRIMARY KEY,"
    " name text NOT NULL,"
    " targets text[] NOT NULL,"
    " devices text NOT NULL DEFAULT '',"
    " started_at timestamptz NOT NULL DEFAULT now(),"
    " heartbeat_at timestamptz NOT NULL DEFAULT now(),"
    " doing text NOT NULL DEFAULT '')",
    "CREATE TABLE hetc_tasks ("
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
    "CREATE INDEX hetc_tasks_by_state ON hetc_tasks (state, target)",
};

/* The names the queue takes, with the columns hetc reads or writes of
 * each table: a relation of one of these names that lacks them is another
 * program's. hetc_meta comes first. */
typedef struct queue_relation_t {
  const char *name;
  const char *columns[17];
} queue_relation_t;

static const queue_relation_t relations[] = {
    {"hetc_meta", {"key", "value"}},
    {"hetc_jobs", {"id", "cancelled", "priority", "submitted_at", "submitter", "targets", "trials", "search", "seed"}},
    {"hetc_job_models", {"job_id", "model_index", "file_name", "content", "input_shapes"}},
    {"hetc_workers", {"id", "name", "targets", "devices", "started_at", "heartbeat_at", "doing"}},
    {"hetc_tasks",
     {"id", "job_id", "model_index", "task_number", "target", "workload_key", "node_count", "flops", "trials",
      "trials_done", "best_seconds", "state", "message", "worker_id", "lease_until", "attempts"}},
    {"hetc_tasks_by_state", {NULL}},
};
#define NUM_RELATIONS (sizeof(relations) / sizeof(relations[0]))

/* "it has no column 'X'" in why for the first of relation k's columns
 * that row k of `found` (name, exists, columns) lacks; "" when none. */
static void missing_column(const PGresult *found, size_t k, char *why, size_t size) {
  why[0] = '\0';
  const char *columns = hetc_pg_text(found, (int)k, 2);
  for (int c = 0; relations[k].columns[c] && !why[0]; ++c) {
    const size_t length = strlen(relations[k].columns[c]);
    int present = 0;
    for (const char *p = columns; *p && !present; p += strcspn(p, ",") + (p[strcspn(p, ",")] ? 1 : 0))
      present = strcspn(p, ",") == length && !strncmp(p, relations[k].columns[c], length);
    if (!present) snprintf(why, size, "it has no column '%s'", relations[k].columns[c]);
  }
}

/* The schema version the database holds in *out_version: 0 when it has no
 * queue tables yet. BAD_INPUT for relations of the queue's names that are
 * not the queue's. Inside the caller's transaction. */
static hetc_status_t stored_version(hetc_pg_t *pg, long long *out_version) {
  *out_version = 0;
  char names[256];
  const char *list[NUM_RELATIONS];
  for (size_t k = 0; k < NUM_RELATIONS; ++k) list[k] = relations[k].name;
  HETC_RETURN_IF_ERROR(hetc_pg_name_array(list, (int32_t)NUM_RELATIONS, "table", names, sizeof(names)));
  const char *params[1] = {names};
  /* Resolved by the search path, as the queue's statements resolve them. */
  PGresult *found;
  HETC_RETURN_IF_ERROR(hetc_pg_exec(
      pg, "opening the queue",
      "SELECT n.name, to_regclass(n.name) IS NOT NULL, (SELECT string_agg(attname::text, ',') FROM pg_attribute "
      "WHERE attrelid = to_regclass(n.name) AND attnum > 0 AND NOT attisdropped) "
      "FROM unnest($1::text[]) WITH ORDINALITY AS n(name, k) ORDER BY n.k",
      1, params, &found));
  char why[96];
  hetc_status_t status = NULL;
  if (strcmp(hetc_pg_text(found, 0, 1), "t") != 0) {
    /* hetc makes hetc_meta with the tables, in one transaction: without
     * it, a relation of the queue's names is not hetc's. */
    for (size_t k = 1; k < NUM_RELATIONS && !status; ++k)
      if (!strcmp(hetc_pg_text(found, (int)k, 1), "t"))
        status = hetc_pg_foreign_table(pg, relations[k].name, "the database has no hetc_meta");
    PQclear(found);
    return status;
  }
  missing_column(found, 0, why, sizeof(why));
  if (why[0]) {
    PQclear(found);
    return hetc_pg_foreign_table(pg, relations[0].name, why);
  }
  PGresult *result;
  status = hetc_pg_exec(pg, "opening the queue", "SELECT value::text FROM hetc_meta WHERE key::text = 'queue_schema'",
                        0, NULL, &result);
  if (status) {
    PQclear(found);
    return status;
  }
  char value[32];
  const int rows = PQntuples(result);
  snprintf(value, sizeof(value), "%s", rows == 1 ? hetc_pg_text(result, 0, 0) : "");
  PQclear(result);
  /* Digits without a leading zero, as hetc writes it. */
  const size_t digits = strspn(value, "0123456789");
  if (rows != 1) {
    status = hetc_pg_foreign_table(pg, relations[0].name, "it holds no queue_schema");
  } else if (!value[0] || value[digits] || value[0] == '0' || digits > 9) {
    snprintf(why, sizeof(why), "its queue_schema is '%.20s', not a version", value);
    status = hetc_pg_foreign_table(pg, relations[0].name, why);
  } else {
    *out_version = strtoll(value, NULL, 10);
  }
  /* The index only speeds claims up: its absence is no damage. */
  for (size_t k = 1; !status && *out_version == HETC_QUEUE_SCHEMA_VERSION && relations[k].columns[0]; ++k) {
    missing_column(found, k, why, sizeof(why));
    if (strcmp(hetc_pg_text(found, (int)k, 1), "t") != 0)
      status = hetc_status_new(HETC_STATUS_BAD_INPUT,
                               "%s: damaged queue: schema %d has a table %s, this database has none",
                               pg->shown_uri, HETC_QUEUE_SCHEMA_VERSION, relations[k].name);
    else if (why[0])
      status = hetc_pg_foreign_table(pg, relations[k].name, why);
  }
  PQclear(found);
  return status;
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
