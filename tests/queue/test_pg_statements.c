/* Statements on a connection to the tests' PostgreSQL server
 * (driver/common/pg.c; the server's folder is $HETC_PG_SERVER_DIR): a
 * statement run again is prepared once per connection and gives the right
 * rows for each run's parameters; BEGIN and tables made once are not kept
 * prepared; a statement that fails to prepare reports the server's own
 * message, inside a transaction too; a connection cut from the server is
 * made again and its statements prepared anew; statements past the
 * connection's HETC_PG_PREPARED_MAX still run. Exit 77 (skipped) without a
 * server. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <libpq-fe.h>

#include "common/pg.h"
#include "pg_test_server.h"

static char uri[512];

static hetc_pg_t connect_ok(void) {
  hetc_pg_t pg;
  hetc_status_t status = hetc_pg_connect(uri, NULL, &pg);
  if (status) fail_msg("%s", hetc_status_message(status));
  return pg;
}

/* The single value `sql` returns on `pg`, as an integer. */
static long long one_int(hetc_pg_t *pg, const char *sql, int count, const char *const *params) {
  PGresult *result = NULL;
  hetc_status_t status = hetc_pg_exec(pg, "testing", sql, count, params, &result);
  if (status) fail_msg("%s: %s", sql, hetc_status_message(status));
  assert_int_equal(PQntuples(result), 1);
  const long long value = hetc_pg_int(result, 0, 0);
  PQclear(result);
  return value;
}

/* How many statements the server holds prepared for `pg`'s session whose
 * text is `sql` (NULL: all of them). Asked through the unnamed statement
 * of libpq itself, so that the question is not one of them. */
static long long prepared_on_server(hetc_pg_t *pg, const char *sql) {
  const char *params[1] = {sql};
  PGresult *result = PQexecParams(pg->conn,
                                  "SELECT count(*) FROM pg_prepared_statements WHERE $1::text IS NULL OR statement = $1",
                                  1, NULL, params, NULL, NULL, 0);
  assert_int_equal(PQresultStatus(result), PGRES_TUPLES_OK);
  const long long count = hetc_pg_int(result, 0, 0);
  PQclear(result);
  return count;
}

static void test_prepared_once_per_connection(void **state) {
  (void)state;
  hetc_pg_t pg = connect_ok();
  static const char sum[] = "SELECT $1::integer + $2::integer";
  for (int k = 0; k < 5; ++k) {
    char a[16];
    snprintf(a, sizeof(a), "%d", k * 10);
    const char *params[2] = {a, "7"};
    assert_int_equal(one_int(&pg, sum, 2, params), k * 10 + 7);
  }
  assert_int_equal(prepared_on_server(&pg, sum), 1);
  assert_int_equal(pg.num_prepared, 1);
  assert_string_equal(pg.prepared[0], sum);
  /* Transaction control and tables made once are not kept. */
  assert_null(hetc_pg_exec(&pg, "testing", "BEGIN", 0, NULL, NULL));
  assert_null(hetc_pg_exec(&pg, "testing", "CREATE TEMPORARY TABLE t (x integer)", 0, NULL, NULL));
  const char *seven[1] = {"7"};
  assert_null(hetc_pg_exec(&pg, "testing", "INSERT INTO t VALUES ($1)", 1, seven, NULL));
  assert_int_equal(one_int(&pg, "SELECT sum(x) FROM t", 0, NULL), 7);
  assert_null(hetc_pg_exec(&pg, "testing", "COMMIT", 0, NULL, NULL));
  assert_int_equal(prepared_on_server(&pg, NULL), 3);
  assert_int_equal(prepared_on_server(&pg, "BEGIN"), 0);
  assert_int_equal(pg.num_prepared, 3);
  hetc_pg_close(&pg);
}

/* The message is the server's about the statement, not a later "current
 * transaction is aborted". */
static void test_failures_keep_their_message(void **state) {
  (void)state;
  hetc_pg_t pg = connect_ok();
  for (int in_transaction = 0; in_transaction <= 1; ++in_transaction) {
    if (in_transaction) assert_null(hetc_pg_exec(&pg, "testing", "BEGIN", 0, NULL, NULL));
    hetc_status_t status = hetc_pg_exec(&pg, "reading", "SELECT FROM nowhere_at_all WHERE", 0, NULL, NULL);
    assert_int_equal(hetc_status_code(status), HETC_STATUS_INTERNAL);
    char expected[700];
    snprintf(expected, sizeof(expected), "%s: reading: ERROR: syntax error at end of input LINE 1: ", pg.shown_uri);
    assert_memory_equal(hetc_status_message(status), expected, strlen(expected));
    hetc_status_free(status);
    status = hetc_pg_exec(&pg, "reading", "SELECT x FROM nowhere_at_all", 0, NULL, NULL);
    assert_non_null(strstr(hetc_status_message(status), in_transaction
                                                            ? "current transaction is aborted"
                                                            : "relation \"nowhere_at_all\" does not exist"));
    hetc_status_free(status);
    if (in_transaction) assert_null(hetc_pg_exec(&pg, "testing", "ROLLBACK", 0, NULL, NULL));
  }
  assert_int_equal(pg.num_prepared, 0);
  assert_int_equal(one_int(&pg, "SELECT 41 + 1", 0, NULL), 42);
  hetc_pg_close(&pg);
}

/* A backend terminated by the server: the next statement connects again
 * and prepares what it runs on the new session. */
static void test_prepared_again_after_a_lost_connection(void **state) {
  (void)state;
  hetc_pg_t pg = connect_ok();
  static const char twice[] = "SELECT 2 * $1::integer";
  const char *params[1] = {"21"};
  assert_int_equal(one_int(&pg, twice, 1, params), 42);
  const long long old_backend = one_int(&pg, "SELECT pg_backend_pid()", 0, NULL);
  hetc_pg_t other = connect_ok();
  char backend[32];
  snprintf(backend, sizeof(backend), "%lld", old_backend);
  const char *which[1] = {backend};
  assert_int_equal(one_int(&other, "SELECT pg_terminate_backend($1::integer)::integer", 1, which), 1);
  hetc_pg_close(&other);
  assert_int_equal(one_int(&pg, twice, 1, params), 42);
  assert_true(one_int(&pg, "SELECT pg_backend_pid()", 0, NULL) != old_backend);
  assert_int_equal(prepared_on_server(&pg, twice), 1);
  assert_int_equal(pg.num_prepared, 2);
  hetc_pg_close(&pg);
}

/* Statements past the limit run unprepared. */
static void test_past_the_limit(void **state) {
  (void)state;
  hetc_pg_t pg = connect_ok();
  for (int k = 0; k < HETC_PG_PREPARED_MAX + 10; ++k) {
    char sql[64];
    snprintf(sql, sizeof(sql), "SELECT %d + $1::integer", k);
    const char *params[1] = {"1"};
    assert_int_equal(one_int(&pg, sql, 1, params), k + 1);
  }
  assert_int_equal(pg.num_prepared, HETC_PG_PREPARED_MAX);
  assert_int_equal(prepared_on_server(&pg, NULL), HETC_PG_PREPARED_MAX);
  hetc_pg_close(&pg);
}

int main(void) {
  if (!pg_test_server_uri(uri, sizeof(uri))) return 77;
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_prepared_once_per_connection),
      cmocka_unit_test(test_failures_keep_their_message),
      cmocka_unit_test(test_prepared_again_after_a_lost_connection),
      cmocka_unit_test(test_past_the_limit),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
