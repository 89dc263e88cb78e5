/* driver/records/records_sql.h -- the records store's SQL, run on SQLite
 * (a file) or on PostgreSQL (a server, through libpq), behind one small
 * statement interface in SQLite's manner: prepare, bind, step, read the
 * columns, finalize. records.c writes its queries once, in the SQL both
 * engines speak, and this file is where they differ:
 *
 *  - parameters are written ?N or ? (SQLite's spelling); PostgreSQL gets
 *    them as $N, each bound value sent as text;
 *  - a write transaction is BEGIN IMMEDIATE on SQLite; on PostgreSQL it is
 *    BEGIN and a transaction-wide advisory lock, so that writers take
 *    turns there as they do on a file (a claim reads, then writes);
 *  - failures come back as SQLite's result codes: PostgreSQL's are mapped
 *    onto them by SQLSTATE class, and a lost connection is
 *    HETC_SQL_LOST. The message is hetc_sql_errmsg's.
 *
 * Internal to libhetc; one thread at a time per connection. */
#ifndef HETC_DRIVER_RECORDS_RECORDS_SQL_H_
#define HETC_DRIVER_RECORDS_RECORDS_SQL_H_

#include <stdint.h>

#include <sqlite3.h>

#include "common/pg.h"

/* The connection to the server was lost (it restarted, the backend was
 * terminated); whatever the transaction did is gone with it. Not one of
 * SQLite's codes. */
#define HETC_SQL_LOST 0x7f01

typedef struct hetc_sql_t {
  sqlite3 *lite;  /* one of the two is open */
  hetc_pg_t pg;   /* pg.conn is NULL on SQLite */
  int64_t changes; /* rows the last PostgreSQL command wrote */
  int lost;        /* set when a statement found the connection lost */
  char message[1024];
} hetc_sql_t;

typedef struct hetc_sql_stmt_t hetc_sql_stmt_t;

static inline int hetc_sql_is_pg(const hetc_sql_t *db) { return db->pg.conn != NULL; }

/* The engine's last failure message. */
const char *hetc_sql_errmsg(const hetc_sql_t *db);
/* Rows changed by the last INSERT, UPDATE or DELETE. */
int64_t hetc_sql_changes(const hetc_sql_t *db);
/* One or more statements separated by ';', without parameters. */
int hetc_sql_exec(hetc_sql_t *db, const char *sql);
/* Begins a write transaction that holds the store's write lock. */
int hetc_sql_begin_write(hetc_sql_t *db);

/* *out_stmt (freed with hetc_sql_finalize, NULL is fine) on SQLITE_OK. */
int hetc_sql_prepare(hetc_sql_t *db, const char *sql, hetc_sql_stmt_t **out_stmt);
/* Texts are copied on PostgreSQL; on SQLite they are the caller's until
 * the statement's next step (SQLITE_STATIC). */
int hetc_sql_bind_text(hetc_sql_stmt_t *stmt, int index, const char *text);
int hetc_sql_bind_int64(hetc_sql_stmt_t *stmt, int index, int64_t value);
int hetc_sql_bind_double(hetc_sql_stmt_t *stmt, int index, double value);
int hetc_sql_bind_null(hetc_sql_stmt_t *stmt, int index);
/* SQLITE_ROW with a row to read, SQLITE_DONE, or a failure. */
int hetc_sql_step(hetc_sql_stmt_t *stmt);
/* Back to before the first step, the bindings kept. */
void hetc_sql_reset(hetc_sql_stmt_t *stmt);
void hetc_sql_clear_bindings(hetc_sql_stmt_t *stmt);
void hetc_sql_finalize(hetc_sql_stmt_t *stmt);

/* The current row's columns, as SQLite's sqlite3_column_* read them:
 * the type is SQLITE_INTEGER, SQLITE_FLOAT, SQLITE_TEXT, SQLITE_BLOB or
 * SQLITE_NULL; texts are the statement's until its next step. */
int hetc_sql_column_type(hetc_sql_stmt_t *stmt, int column);
const unsigned char *hetc_sql_column_text(hetc_sql_stmt_t *stmt, int column);
int hetc_sql_column_bytes(hetc_sql_stmt_t *stmt, int column);
int64_t hetc_sql_column_int64(hetc_sql_stmt_t *stmt, int column);
double hetc_sql_column_double(hetc_sql_stmt_t *stmt, int column);

#endif /* HETC_DRIVER_RECORDS_RECORDS_SQL_H_ */
