/* Connections to a PostgreSQL server (pg.h). */
#include "common/pg.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

int hetc_pg_is_uri(const char *uri) {
  return uri && (!strncmp(uri, "postgresql://", 13) || !strncmp(uri, "postgres://", 11));
}

/* `uri` without the password of its user part and without a password=
 * parameter: what messages and `hetc jobs` print. The caller frees it. */
static char *shown_uri(const char *uri) {
  char *shown = strdup(uri);
  if (!shown) return NULL;
  char *rest = strstr(shown, "://");
  if (rest) {
    rest += 3;
    const size_t authority = strcspn(rest, "/?");
    char *at = memchr(rest, '@', authority);
    char *colon = at ? memchr(rest, ':', (size_t)(at - rest)) : NULL;
    if (colon) memmove(colon, at, strlen(at) + 1);
  }
  for (char *p = strstr(shown, "password="); p; p = strstr(p, "password=")) {
    char *value = p + 9, *end = value + strcspn(value, "&");
    memmove(value, end, strlen(end) + 1);
    p = value;
  }
  return shown;
}

/* libpq's message on one line: its newlines and tabs as spaces, the
 * trailing ones dropped. Written into out. */
static void one_line(const char *message, char *out, size_t size) {
  size_t n = 0;
  for (const char *p = message ? message : ""; *p && n + 1 < size; ++p) {
    const char c = (*p == '\n' || *p == '\t') ? ' ' : *p;
    if (c == ' ' && (n == 0 || out[n - 1] == ' ')) continue;
    out[n++] = c;
  }
  while (n > 0 && out[n - 1] == ' ') --n;
  out[n] = '\0';
}

hetc_status_t hetc_pg_connect(const char *uri, const char *options, hetc_pg_t *out) {
  memset(out, 0, sizeof(*out));
  if (!uri || !*uri) return hetc_status_new(HETC_STATUS_BAD_INPUT, "an empty queue URI");
  char *shown = shown_uri(uri);
  if (!shown) return hetc_status_new(HETC_STATUS_OUT_OF_MEMORY, "queue URI");
  if (!hetc_pg_is_uri(uri)) {
    hetc_status_t status = hetc_status_new(HETC_STATUS_BAD_INPUT,
                                           "%s: not a PostgreSQL URI (expected postgresql://USER@HOST:PORT/DATABASE)",
                                           shown);
    free(shown);
    return status;
  }
  char *parse_error = NULL, line[1024];
  PQconninfoOption *parsed = PQconninfoParse(uri, &parse_error);
  if (!parsed) {
    one_line(parse_error ? parse_error : "out of memory", line, sizeof(line));
    PQfreemem(parse_error);
    hetc_status_t status = hetc_status_new(HETC_STATUS_BAD_INPUT, "%s: not a valid PostgreSQL URI: %s", shown, line);
    free(shown);
    return status;
  }
  PQconninfoFree(parsed);
  /* The URI is expanded where dbname stands, so that what it says
   * overrides the defaults before it. */
  char timeout[16];
  snprintf(timeout, sizeof(timeout), "%d", HETC_PG_CONNECT_TIMEOUT_S);
  const char *const keywords[] = {"connect_timeout", "application_name", "client_encoding", "dbname",
                                  options ? "options" : NULL, NULL};
  const char *const values[] = {timeout, "hetc", "UTF8", uri, options, NULL};
  PGconn *conn = PQconnectdbParams(keywords, values, 1);
  if (!conn || PQstatus(conn) != CONNECTION_OK) {
    one_line(conn ? PQerrorMessage(conn) : "out of memory", line, sizeof(line));
    hetc_status_t status = hetc_status_new(HETC_STATUS_BAD_INPUT, "%s: cannot connect: %s", shown, line);
    PQfinish(conn);
    free(shown);
    return status;
  }
  /* Notices (a table that already exists) are not the user's business. */
  PQclear(PQexec(conn, "SET client_min_messages = warning"));
  out->in_transaction = 0;
  out->conn = conn;
  out->shown_uri = shown;
  return NULL;
}

/* Forgets the prepared statements: a new connection has none. */
static void forget_prepared(hetc_pg_t *pg) {
  for (int k = 0; k < pg->num_prepared; ++k) free(pg->prepared[k]);
  pg->num_prepared = 0;
}

void hetc_pg_close(hetc_pg_t *pg) {
  if (!pg) return;
  forget_prepared(pg);
  PQfinish(pg->conn);
  free(pg->shown_uri);
  memset(pg, 0, sizeof(*pg));
}

/* Connects again after a lost connection, trying for HETC_PG_RECONNECT_S
 * with waits that grow from 0.2 to 2 seconds; 1 when connected. */
static int reconnect(hetc_pg_t *pg) {
  struct timespec start, now;
  clock_gettime(CLOCK_MONOTONIC, &start);
  double wait = 0.2;
  forget_prepared(pg);
  for (;;) {
    PQreset(pg->conn);
    if (PQstatus(pg->conn) == CONNECTION_OK) {
      PQclear(PQexec(pg->conn, "SET client_min_messages = warning"));
      return 1;
    }
    clock_gettime(CLOCK_MONOTONIC, &now);
    if ((double)(now.tv_sec - start.tv_sec) + 1e-9 * (double)(now.tv_nsec - start.tv_nsec) > HETC_PG_RECONNECT_S)
      return 0;
    const struct timespec pause = {(time_t)wait, (long)((wait - (double)(time_t)wait) * 1e9)};
    nanosleep(&pause, NULL);
    if (wait < 2.0) wait *= 2;
  }
}

hetc_status_t hetc_pg_exec(hetc_pg_t *pg, const char *what, const char *sql, int count,
                           const char *const *params, PGresult **out_result) {
  return hetc_pg_exec_binary(pg, what, sql, count, params, NULL, NULL, out_result);
}

/* Whether `sql` is worth preparing: a query or a change of rows (not
 * BEGIN, not a table made once). */
static int worth_preparing(const char *sql) {
  static const char *const verbs[] = {"SELECT", "INSERT", "UPDATE", "DELETE", "WITH"};
  sql += strspn(sql, " \n\t");
  for (size_t k = 0; k < sizeof(verbs) / sizeof(verbs[0]); ++k)
    if (!strncasecmp(sql, verbs[k], strlen(verbs[k]))) return 1;
  return 0;
}

/* Runs `sql` once: as the statement prepared for it on this connection,
 * prepared now if it is new and worth it; else parsed anew. */
static PGresult *run_once(hetc_pg_t *pg, const char *sql, int count, const char *const *params, const int *lengths,
                          const int *formats) {
  int k = 0;
  while (k < pg->num_prepared && strcmp(pg->prepared[k], sql) != 0) ++k;
  char name[24];
  snprintf(name, sizeof(name), "hetc_%d", k);
  if (k == pg->num_prepared) {
    char *copy = k < HETC_PG_PREPARED_MAX && worth_preparing(sql) ? strdup(sql) : NULL;
    if (!copy) return PQexecParams(pg->conn, sql, count, NULL, params, lengths, formats, 0);
    PGresult *prepared = PQprepare(pg->conn, name, sql, count, NULL);
    if (!hetc_pg_succeeded(prepared)) {
      free(copy);
      return prepared; /* the statement's failure (a syntax error, a lost connection) */
    }
    PQclear(prepared);
    pg->prepared[pg->num_prepared++] = copy;
  }
  return PQexecPrepared(pg->conn, name, count, params, lengths, formats, 0);
}

PGresult *hetc_pg_query(hetc_pg_t *pg, const char *sql, int count, const char *const *params, const int *lengths,
                        const int *formats) {
  PGresult *result = run_once(pg, sql, count, params, lengths, formats);
  ExecStatusType kind = result ? PQresultStatus(result) : PGRES_FATAL_ERROR;
  if (kind != PGRES_COMMAND_OK && kind != PGRES_TUPLES_OK && PQstatus(pg->conn) != CONNECTION_OK &&
      !pg->in_transaction && reconnect(pg)) {
    PQclear(result);
    result = run_once(pg, sql, count, params, lengths, formats);
    kind = result ? PQresultStatus(result) : PGRES_FATAL_ERROR;
  }
  if (kind == PGRES_COMMAND_OK || kind == PGRES_TUPLES_OK) {
    if (!strcmp(sql, "BEGIN")) pg->in_transaction = 1;
    else if (!strcmp(sql, "COMMIT") || !strcmp(sql, "ROLLBACK")) pg->in_transaction = 0;
  } else if (PQstatus(pg->conn) != CONNECTION_OK) {
    pg->in_transaction = 0; /* a lost connection took its transaction with it */
  }
  return result;
}

int hetc_pg_succeeded(const PGresult *result) {
  const ExecStatusType kind = result ? PQresultStatus(result) : PGRES_FATAL_ERROR;
  return kind == PGRES_COMMAND_OK || kind == PGRES_TUPLES_OK;
}

void hetc_pg_failure_text(const hetc_pg_t *pg, const PGresult *result, char *out, size_t size) {
  one_line(result ? PQresultErrorMessage(result) : PQerrorMessage(pg->conn), out, size);
  if (!out[0]) one_line(PQerrorMessage(pg->conn), out, size);
}

hetc_status_t hetc_pg_exec_binary(hetc_pg_t *pg, const char *what, const char *sql, int count,
                                  const char *const *params, const int *lengths, const int *formats,
                                  PGresult **out_result) {
  if (out_result) *out_result = NULL;
  PGresult *result = hetc_pg_query(pg, sql, count, params, lengths, formats);
  if (hetc_pg_succeeded(result)) {
    if (out_result) *out_result = result;
    else PQclear(result);
    return NULL;
  }
  char line[1024];
  hetc_pg_failure_text(pg, result, line, sizeof(line));
  PQclear(result);
  const int gone = PQstatus(pg->conn) != CONNECTION_OK;
  return hetc_status_new(gone ? HETC_STATUS_UNAVAILABLE : HETC_STATUS_INTERNAL, "%s: %s: %s%s", pg->shown_uri, what,
                         line, gone ? " (the connection to the server is lost)" : "");
}

hetc_status_t hetc_pg_foreign_table(const hetc_pg_t *pg, const char *table, const char *why) {
  return hetc_status_new(HETC_STATUS_BAD_INPUT,
                         "%s: table %s belongs to another program (%s): hetc does not write into tables it did "
                         "not make",
                         pg->shown_uri, table, why);
}

hetc_status_t hetc_pg_name_array(const char *const *names, int32_t count, const char *what, char *out, size_t size) {
  size_t used = (size_t)snprintf(out, size, "{");
  for (int32_t k = 0; k < count; ++k) {
    if (!*names[k] || strpbrk(names[k], "\"\\{},"))
      return hetc_status_new(HETC_STATUS_BAD_INPUT, "'%s' is not a %s name", names[k], what);
    used += (size_t)snprintf(out + used, used < size ? size - used : 0, "%s\"%s\"", k ? "," : "", names[k]);
  }
  if (used + 2 > size) return hetc_status_new(HETC_STATUS_BAD_INPUT, "too many %s names", what);
  snprintf(out + used, size - used, "}");
  return NULL;
}

long long hetc_pg_int(const PGresult *result, int row, int column) {
  return PQgetisnull(result, row, column) ? 0 : strtoll(PQgetvalue(result, row, column), NULL, 10);
}

const char *hetc_pg_text(const PGresult *result, int row, int column) {
  return PQgetisnull(result, row, column) ? "" : PQgetvalue(result, row, column);
}

double hetc_pg_double(const PGresult *result, int row, int column) {
  return PQgetisnull(result, row, column) ? 0.0 : strtod(PQgetvalue(result, row, column), NULL);
}
