/* The records store's SQL on SQLite or PostgreSQL (records_sql.h). */
#include "records/records_sql.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Writers of a store on a server take turns on this transaction-wide lock
 * ("hetcrecs"); the queue's tables use another. */
#define RECORDS_WRITE_LOCK "7522533188136577907"

struct hetc_sql_stmt_t {
  hetc_sql_t *db;
  sqlite3_stmt *lite;
  /* PostgreSQL: the statement with $N parameters, the values bound as text
   * (owned; NULL is SQL NULL), and the result being read. */
  char *text;
  int num_params;
  char **values;
  PGresult *result;
  int next_row;
  int executed;
};

const char *hetc_sql_errmsg(const hetc_sql_t *db) {
  if (!hetc_sql_is_pg(db)) return db->lite ? sqlite3_errmsg(db->lite) : "not open";
  return db->message;
}

int64_t hetc_sql_changes(const hetc_sql_t *db) {
  return hetc_sql_is_pg(db) ? db->changes : (int64_t)sqlite3_changes(db->lite);
}

/* A failed PostgreSQL result as one of SQLite's codes, its message kept. */
static int pg_failure(hetc_sql_t *db, PGresult *result) {
  hetc_pg_failure_text(&db->pg, result, db->message, sizeof(db->message));
  const char *state = result ? PQresultErrorField(result, PG_DIAG_SQLSTATE) : NULL;
  if (PQstatus(db->pg.conn) != CONNECTION_OK || !state || !strncmp(state, "08", 2) || !strncmp(state, "57P", 3)) {
    db->lost = 1;
    return HETC_SQL_LOST;
  }
  if (!strncmp(state, "23", 2)) return SQLITE_CONSTRAINT;
  if (!strcmp(state, "53200")) return SQLITE_NOMEM;
  if (!strncmp(state, "53", 2)) return SQLITE_FULL;
  if (!strncmp(state, "40", 2) || !strcmp(state, "55P03")) return SQLITE_BUSY;
  if (!strcmp(state, "42501") || !strncmp(state, "28", 2)) return SQLITE_PERM;
  if (!strcmp(state, "25006")) return SQLITE_READONLY;
  return SQLITE_ERROR;
}

/* Runs one PostgreSQL statement without parameters. */
static int pg_run(hetc_sql_t *db, const char *sql) {
  PGresult *result = hetc_pg_query(&db->pg, sql, 0, NULL, NULL, NULL);
  int rc = hetc_pg_succeeded(result) ? SQLITE_OK : pg_failure(db, result);
  if (rc == SQLITE_OK && PQresultStatus(result) == PGRES_COMMAND_OK)
    db->changes = strtoll(PQcmdTuples(result), NULL, 10);
  PQclear(result);
  return rc;
}

int hetc_sql_exec(hetc_sql_t *db, const char *sql) {
  if (!hetc_sql_is_pg(db)) return sqlite3_exec(db->lite, sql, NULL, NULL, NULL);
  /* One statement at a time: PostgreSQL's extended protocol takes one. */
  char *copy = strdup(sql);
  if (!copy) return SQLITE_NOMEM;
  int rc = SQLITE_OK, quoted = 0;
  char *start = copy;
  for (char *p = copy; rc == SQLITE_OK; ++p) {
    if (*p == '\'') quoted = !quoted;
    if (*p && (*p != ';' || quoted)) continue;
    const int at_end = *p == '\0';
    *p = '\0';
    if (start[strspn(start, " \n\t")]) rc = pg_run(db, start);
    if (at_end) break;
    start = p + 1;
  }
  free(copy);
  return rc;
}

int hetc_sql_begin_write(hetc_sql_t *db) {
  if (!hetc_sql_is_pg(db)) return sqlite3_exec(db->lite, "BEGIN IMMEDIATE", NULL, NULL, NULL);
  int rc = pg_run(db, "BEGIN");
  if (rc == SQLITE_OK) rc = pg_run(db, "SELECT pg_advisory_xact_lock(" RECORDS_WRITE_LOCK ")");
  if (rc != SQLITE_OK && db->pg.in_transaction) pg_run(db, "ROLLBACK");
  return rc;
}

/* `sql` with ?N as $N and each bare ? as the next number after the
 * highest so far (SQLite's rule); *out_count: the highest. */
static char *pg_parameters(const char *sql, int *out_count) {
  char *out = malloc(strlen(sql) * 4 + 1);
  if (!out) return NULL;
  int highest = 0, quoted = 0;
  char *o = out;
  for (const char *p = sql; *p; ++p) {
    if (*p == '\'') quoted = !quoted;
    if (*p != '?' || quoted) {
      *o++ = *p;
      continue;
    }
    int number = 0;
    while (p[1] >= '0' && p[1] <= '9') number = number * 10 + (*++p - '0');
    if (!number) number = highest + 1;
    if (number > highest) highest = number;
    o += sprintf(o, "$%d", number);
  }
  *o = '\0';
  *out_count = highest;
  return out;
}

int hetc_sql_prepare(hetc_sql_t *db, const char *sql, hetc_sql_stmt_t **out_stmt) {
  *out_stmt = NULL;
  hetc_sql_stmt_t *stmt = calloc(1, sizeof(*stmt));
  if (!stmt) return SQLITE_NOMEM;
  stmt->db = db;
  if (!hetc_sql_is_pg(db)) {
    int rc = sqlite3_prepare_v2(db->lite, sql, -1, &stmt->lite, NULL);
    if (rc != SQLITE_OK) {
      free(stmt);
      return rc;
    }
  } else {
    stmt->text = pg_parameters(sql, &stmt->num_params);
    stmt->values = calloc((size_t)stmt->num_params + 1, sizeof(char *));
    if (!stmt->text || !stmt->values) {
      hetc_sql_finalize(stmt);
      return SQLITE_NOMEM;
    }
  }
  *out_stmt = stmt;
  return SQLITE_OK;
}

/* Keeps `text` (owned) as parameter `index`. */
static int pg_bind(hetc_sql_stmt_t *stmt, int index, char *text, int is_null) {
  if (index < 1 || index > stmt->num_params) {
    free(text);
    return SQLITE_RANGE;
  }
  if (!text && !is_null) return SQLITE_NOMEM;
  free(stmt->values[index - 1]);
  stmt->values[index - 1] = text;
  return SQLITE_OK;
}

int hetc_sql_bind_text(hetc_sql_stmt_t *stmt, int index, const char *text) {
  if (stmt->lite) return sqlite3_bind_text(stmt->lite, index, text, -1, SQLITE_STATIC);
  return text ? pg_bind(stmt, index, strdup(text), 0) : pg_bind(stmt, index, NULL, 1);
}

int hetc_sql_bind_int64(hetc_sql_stmt_t *stmt, int index, int64_t value) {
  if (stmt->lite) return sqlite3_bind_int64(stmt->lite, index, value);
  char text[32];
  snprintf(text, sizeof(text), "%lld", (long long)value);
  return pg_bind(stmt, index, strdup(text), 0);
}

int hetc_sql_bind_double(hetc_sql_stmt_t *stmt, int index, double value) {
  if (stmt->lite) return sqlite3_bind_double(stmt->lite, index, value);
  char text[40];
  snprintf(text, sizeof(text), "%.17g", value); /* round-trips every double */
  return pg_bind(stmt, index, strdup(text), 0);
}

int hetc_sql_bind_null(hetc_sql_stmt_t *stmt, int index) {
  if (stmt->lite) return sqlite3_bind_null(stmt->lite, index);
  return pg_bind(stmt, index, NULL, 1);
}

int hetc_sql_step(hetc_sql_stmt_t *stmt) {
  if (stmt->lite) return sqlite3_step(stmt->lite);
  hetc_sql_t *db = stmt->db;
  if (!stmt->executed) {
    PGresult *result = hetc_pg_query(&db->pg, stmt->text, stmt->num_params, (const char *const *)stmt->values,
                                     NULL, NULL);
    if (!hetc_pg_succeeded(result)) {
      int rc = pg_failure(db, result);
      PQclear(result);
      return rc;
    }
    stmt->result = result;
    stmt->executed = 1;
    stmt->next_row = 0;
    if (PQresultStatus(result) == PGRES_COMMAND_OK) db->changes = strtoll(PQcmdTuples(result), NULL, 10);
  }
  if (PQresultStatus(stmt->result) != PGRES_TUPLES_OK || stmt->next_row >= PQntuples(stmt->result))
    return SQLITE_DONE;
  ++stmt->next_row;
  return SQLITE_ROW;
}

void hetc_sql_reset(hetc_sql_stmt_t *stmt) {
  if (!stmt) return;
  if (stmt->lite) {
    sqlite3_reset(stmt->lite);
    return;
  }
  PQclear(stmt->result);
  stmt->result = NULL;
  stmt->executed = 0;
}

void hetc_sql_clear_bindings(hetc_sql_stmt_t *stmt) {
  if (stmt->lite) {
    sqlite3_clear_bindings(stmt->lite);
    return;
  }
  for (int i = 0; i < stmt->num_params; ++i) {
    free(stmt->values[i]);
    stmt->values[i] = NULL;
  }
}

void hetc_sql_finalize(hetc_sql_stmt_t *stmt) {
  if (!stmt) return;
  sqlite3_finalize(stmt->lite);
  if (stmt->values) hetc_sql_clear_bindings(stmt);
  PQclear(stmt->result);
  free(stmt->values);
  free(stmt->text);
  free(stmt);
}

/* PostgreSQL: the row the last step read. */
#define PG_ROW(stmt) ((stmt)->next_row - 1)

int hetc_sql_column_type(hetc_sql_stmt_t *stmt, int column) {
  if (stmt->lite) return sqlite3_column_type(stmt->lite, column);
  if (PQgetisnull(stmt->result, PG_ROW(stmt), column)) return SQLITE_NULL;
  switch (PQftype(stmt->result, column)) {
    case 20: /* int8 */
    case 21: /* int2 */
    case 23: /* int4 */
      return SQLITE_INTEGER;
    case 700:  /* float4 */
    case 701:  /* float8 */
    case 1700: /* numeric */
      return SQLITE_FLOAT;
    case 17: /* bytea */
      return SQLITE_BLOB;
    default:
      return SQLITE_TEXT;
  }
}

const unsigned char *hetc_sql_column_text(hetc_sql_stmt_t *stmt, int column) {
  if (stmt->lite) return sqlite3_column_text(stmt->lite, column);
  if (PQgetisnull(stmt->result, PG_ROW(stmt), column)) return NULL;
  return (const unsigned char *)PQgetvalue(stmt->result, PG_ROW(stmt), column);
}

int hetc_sql_column_bytes(hetc_sql_stmt_t *stmt, int column) {
  if (stmt->lite) return sqlite3_column_bytes(stmt->lite, column);
  return PQgetlength(stmt->result, PG_ROW(stmt), column);
}

int64_t hetc_sql_column_int64(hetc_sql_stmt_t *stmt, int column) {
  if (stmt->lite) return sqlite3_column_int64(stmt->lite, column);
  return hetc_pg_int(stmt->result, PG_ROW(stmt), column);
}

double hetc_sql_column_double(hetc_sql_stmt_t *stmt, int column) {
  if (stmt->lite) return sqlite3_column_double(stmt->lite, column);
  return hetc_pg_double(stmt->result, PG_ROW(stmt), column);
}
