/* driver/common/pg.h -- connections to the PostgreSQL server that holds the
 * tuning queue (api/queue-format.md), on libpq: a URI checked before it is
 * used, messages that name it without its password, and statements whose
 * failures become hetc statuses. Internal to libhetc. */
#ifndef HETC_DRIVER_QUEUE_PG_H_
#define HETC_DRIVER_QUEUE_PG_H_

#include <libpq-fe.h>

#include "common/status.h"

/* How long a connection attempt may take before the server counts as
 * unreachable. */
#define HETC_PG_CONNECT_TIMEOUT_S 10
/* How long a statement whose connection was lost (the server restarted,
 * the backend was terminated) keeps trying to connect again before it
 * fails. */
#define HETC_PG_RECONNECT_S 120

/* How many statements a connection keeps prepared. */
#define HETC_PG_PREPARED_MAX 128

typedef struct hetc_pg_t {
  PGconn *conn;
  char *shown_uri;    /* the URI as messages name it: no password */
  int in_transaction; /* between a BEGIN and its COMMIT or ROLLBACK */
  /* The texts of the statements prepared on this connection (owned),
   * statement k named "hetc_k": a statement run again is neither parsed
   * nor planned again, which at many workers is most of the server's
   * work. */
  char *prepared[HETC_PG_PREPARED_MAX];
  int num_prepared;
} hetc_pg_t;

/* Whether `uri` asks for PostgreSQL: postgresql:// or postgres://. */
int hetc_pg_is_uri(const char *uri);

/* Connects to `uri` (postgresql://... or postgres://...). BAD_INPUT naming
 * the URI: one libpq cannot parse, one of another scheme, a server that
 * cannot be reached in HETC_PG_CONNECT_TIMEOUT_S or that refuses the
 * login or the database. `options` (NULL: none) are the server settings
 * of libpq's `options` keyword ("-c search_path=x"), kept when the
 * connection is made again. *out (the caller's) is filled on success;
 * close it with hetc_pg_close. */
hetc_status_t hetc_pg_connect(const char *uri, const char *options, hetc_pg_t *out);
void hetc_pg_close(hetc_pg_t *pg);

/* Runs `sql` with `count` text parameters (NULL is SQL NULL). The result
 * (the caller's, freed with PQclear) is stored in *out_result when
 * out_result is not NULL, else cleared. When the connection is found lost
 * outside a transaction, the statement is run again once the server takes
 * a connection again (for up to HETC_PG_RECONNECT_S): statements run
 * outside transactions must therefore be safe to run twice (the first may
 * have been done before its answer was lost). A failure is UNAVAILABLE
 * when the connection is gone (inside a transaction, or for good), else
 * INTERNAL, both naming the URI and the server's message; `what` says what
 * was being done ("submitting a job"). */
hetc_status_t hetc_pg_exec(hetc_pg_t *pg, const char *what, const char *sql, int count,
                           const char *const *params, PGresult **out_result);
/* The same with binary parameters where formats[k] is 1 (lengths[k]
 * bytes; bytea columns). */
hetc_status_t hetc_pg_exec_binary(hetc_pg_t *pg, const char *what, const char *sql, int count,
                                  const char *const *params, const int *lengths, const int *formats,
                                  PGresult **out_result);

/* The statement of hetc_pg_exec_binary, connecting again as it does (and
 * prepared on the connection the first time: see hetc_pg_t), as
 * libpq's result (NULL when out of memory), failed or not: the caller
 * checks it with hetc_pg_succeeded and frees it with PQclear. */
PGresult *hetc_pg_query(hetc_pg_t *pg, const char *sql, int count, const char *const *params, const int *lengths,
                        const int *formats);
int hetc_pg_succeeded(const PGresult *result);
/* A failed result's message (or the connection's) on one line, in out. */
void hetc_pg_failure_text(const hetc_pg_t *pg, const PGresult *result, char *out, size_t size);

/* BAD_INPUT for a table of one of hetc's names that another program made
 * ("URI: table TABLE belongs to another program (WHY): ..."): hetc writes
 * into no table it did not make. */
hetc_status_t hetc_pg_foreign_table(const hetc_pg_t *pg, const char *table, const char *why);

/* `names` as a PostgreSQL text-array literal, {"a","b"}, in out. BAD_INPUT
 * for an empty name or one with a quote, backslash, brace or comma ("'x,y'
 * is not a WHAT name": the names are identifiers), or names that do not
 * fit `size`. */
hetc_status_t hetc_pg_name_array(const char *const *names, int32_t count, const char *what, char *out, size_t size);

/* The integer, text or double in row `row`, column `column` of a result
 * (0, "" or 0.0 for SQL NULL). Borrowed from the result for text. */
long long hetc_pg_int(const PGresult *result, int row, int column);
const char *hetc_pg_text(const PGresult *result, int row, int column);
double hetc_pg_double(const PGresult *result, int row, int column);

#endif /* HETC_DRIVER_COMMON_PG_H_ */
