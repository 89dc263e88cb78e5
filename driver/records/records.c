#include "records/records.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <cjson/cJSON.h>
#include <sqlite3.h>

#include "common/clock.h"
#include "common/env.h"
#include "common/fileio.h"
#include "hetc/hetc.h"
#include "common/interrupt.h"
#include "records/json_text.h"
#include "records/records_sql.h"

/* Who holds a claim (hetc_records_claim): this process, told apart from
 * any other that ever ran, on this machine or another sharing the file. */
typedef struct owner_t {
  char host[320]; /* host name and boot id: a pid means nothing across boots */
  int64_t pid;
  int64_t start;  /* the process's start time in clock ticks since boot */
} owner_t;

struct hetc_records_t {
  hetc_sql_t db;
  char *path; /* owned: the file, or the server's URI without its password */
  char *model_name; /* owned: how messages name the store's cost model */
  hetc_records_mode_t mode;
  int64_t version; /* the file's schema version */
  int writable;    /* opened read-write and holding the current schema */
  int holds_table; /* this handle made sure the measurements table exists */
  int claimed;     /* this handle made claims: closing releases them */
  double busy_timeout_s; /* HETC_RECORDS_BUSY_TIMEOUT_MS, or the variable's */
  double busy_since;
  owner_t owner;
};

/* The schema, in plain SQL so that another database server can hold the
 * same table. `id` gives "the order in which records were added";
 * median_cost is NULL unless the record is ok and has costs, so that "the
 * best" is a plain ORDER BY over non-NULL values. The indexes serve the
 * lookups: exact (fingerprint, workload, template, version, by cost),
 * nearest (device kind, target, template, version) and "oldest first". */
static const char schema_sql[] =
    "CREATE TABLE records ("
    " id INTEGER PRIMARY KEY,"
    " target TEXT NOT NULL,"
    " plugin_version TEXT NOT NULL,"
    " device_kind TEXT NOT NULL,"
    " device_fingerprint TEXT NOT NULL,"
    " template_name TEXT NOT NULL,"
    " template_version INTEGER NOT NULL,"
    " workload_key TEXT NOT NULL,"
    " config_index INTEGER NOT NULL,"
    " config_json TEXT NOT NULL,"
    " costs_json TEXT NOT NULL,"
    " median_cost REAL,"
    " error INTEGER NOT NULL,"
    " error_message TEXT,"
    " build_seconds REAL NOT NULL,"
    " total_seconds REAL NOT NULL,"
    " timestamp INTEGER NOT NULL,"
    " hetc_version TEXT NOT NULL);"
    "CREATE INDEX records_by_workload ON records"
    " (device_fingerprint, workload_key, template_name, template_version, median_cost);"
    "CREATE INDEX records_by_kind ON records"
    " (device_kind, target, template_name, template_version);"
    "CREATE INDEX records_by_time ON records (timestamp);";

/* Since version 2: how long moving a tensor between a device and the host
 * takes (hetc_transfer_cost_t), measured once per device and direction. */
static const char transfers_sql[] =
    "CREATE TABLE transfers ("
    " device_fingerprint TEXT NOT NULL,"
    " direction TEXT NOT NULL CHECK (direction IN ('to_device', 'to_host')),"
    " latency_seconds REAL NOT NULL,"
    " seconds_per_byte REAL NOT NULL,"
    " timestamp INTEGER NOT NULL,"
    " hetc_version TEXT NOT NULL,"
    " PRIMARY KEY (device_fingerprint, direction));";

/* Since version 3: the best fp32 peak measured for each device over every
 * run that measured it (hetc_kept_peak_t). A peak measured on a shared
 * machine only ever comes out low, so the maximum converges on the device's
 * real one and everything that shows or uses a peak agrees on it. */
static const char peaks_sql[] =
    "CREATE TABLE peaks ("
    " device_fingerprint TEXT PRIMARY KEY,"
    " target TEXT NOT NULL,"
    " peak_gflops REAL NOT NULL CHECK (peak_gflops > 0),"
    " runs INTEGER NOT NULL CHECK (runs >= 1),"
    " timestamp INTEGER NOT NULL,"
    " hetc_version TEXT NOT NULL);";

/* Since version 4: the plan graph-level selection chose for a model on a
 * list of targets (hetc_selection_t): a row per node. `targets` names each
 * target with its device's fingerprint, and `records` is how many records
 * the store held when the plan was chosen, so that a plan chosen before
 * newer measurements is chosen again. */
static const char selections_sql[] =
    "CREATE TABLE selections ("
    " model_key TEXT NOT NULL,"
    " targets TEXT NOT NULL,"
    " node TEXT NOT NULL,"
    " device INTEGER NOT NULL CHECK (device >= 0),"
    " template_name TEXT NOT NULL,"
    " template_version INTEGER NOT NULL,"
    " config_json TEXT,"
    " source TEXT NOT NULL,"
    " predicted_seconds REAL NOT NULL,"
    " records INTEGER NOT NULL,"
    " timestamp INTEGER NOT NULL,"
    " hetc_version TEXT NOT NULL,"
    " PRIMARY KEY (model_key, targets, node));";

/* Since version 5: one record per config of a workload on a device (two
 * tuners no longer measure a config twice, and an import that finds the
 * config measured keeps what is there), and the claims tuners make on the
 * configs they are about to measure, so that a tuner beside them leaves
 * those alone. The unique index also makes "is it there" one lookup, where
 * it was a scan of the workload's records. */
#define CONFIG_KEY_COLUMNS \
  "target, device_fingerprint, workload_key, template_name, template_version, config_json"
static const char one_per_config_sql[] =
    "CREATE UNIQUE INDEX IF NOT EXISTS records_by_config ON records (" CONFIG_KEY_COLUMNS ");";
static const char claims_sql[] =
    "CREATE TABLE IF NOT EXISTS claims ("
    " target TEXT NOT NULL,"
    " device_fingerprint TEXT NOT NULL,"
    " workload_key TEXT NOT NULL,"
    " template_name TEXT NOT NULL,"
    " template_version INTEGER NOT NULL,"
    " config_json TEXT NOT NULL,"
    " owner_host TEXT NOT NULL,"
    " owner_pid INTEGER NOT NULL,"
    " owner_start INTEGER NOT NULL,"
    " claimed_at INTEGER NOT NULL,"
    " PRIMARY KEY (" CONFIG_KEY_COLUMNS "));";
/* Stores of version 4 and older may hold a config several times: the
 * upgrade keeps the one lookups would pick (the fastest ok one, else the
 * oldest). */
static const char keep_one_per_config_sql[] =
    "DELETE FROM records WHERE id IN (SELECT id FROM (SELECT id, ROW_NUMBER() OVER ("
    " PARTITION BY " CONFIG_KEY_COLUMNS
    " ORDER BY error != 0, median_cost IS NULL, median_cost, timestamp, id) AS rank"
    " FROM records) WHERE rank > 1);";

/* The columns each table must have, by the version that brought it, for
 * the check that a file is whole (check_tables). */
typedef struct table_columns_t {
  const char *table;
  int64_t since;
  const char *columns[20];
} table_columns_t;

static const table_columns_t expected_tables[] = {
    {"records", 1, {"id", "target", "plugin_version", "device_kind", "device_fingerprint", "template_name",
                    "template_version", "workload_key", "config_index", "config_json", "costs_json",
                    "median_cost", "error", "error_message", "build_seconds", "total_seconds", "timestamp",
                    "hetc_version", NULL}},
    {"transfers", 2, {"device_fingerprint", "direction", "latency_seconds", "seconds_per_byte", "timestamp",
                      "hetc_version", NULL}},
    {"peaks", 3, {"device_fingerprint", "target", "peak_gflops", "runs", "timestamp", "hetc_version", NULL}},
    {"selections", 4, {"model_key", "targets", "node", "device", "template_name", "template_version",
                       "config_json", "source", "predicted_seconds", "records", "timestamp", "hetc_version",
                       NULL}},
    {"claims", 5, {"target", "device_fingerprint", "workload_key", "template_name", "template_version",
                   "config_json", "owner_host", "owner_pid", "owner_start", "claimed_at", NULL}},
};

/* Every SELECT that reads whole records lists these columns in this order
 * (read_record's indexes follow it). */
#define RECORD_COLUMNS                                                                  \
  "target, plugin_version, device_kind, device_fingerprint, template_name,"            \
  " template_version, workload_key, config_index, config_json, costs_json, error,"     \
  " error_message, build_seconds, total_seconds, timestamp, hetc_version, id"

/* Parameters ?1..?17 are bound by bind_record; a config that is stored
 * already is left as it is (the store holds each config once). */
static const char insert_sql[] =
    "INSERT INTO records (target, plugin_version, device_kind, device_fingerprint,"
    " template_name, template_version, workload_key, config_index, config_json, costs_json,"
    " median_cost, error, error_message, build_seconds, total_seconds, timestamp, hetc_version)"
    " VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17)"
    " ON CONFLICT DO NOTHING";

/* A config's key as parameters ?1..?6 (bind_key). */
#define KEY_WHERE                                                                               \
  " WHERE target = ?1 AND device_fingerprint = ?2 AND workload_key = ?3 AND template_name = ?4" \
  " AND template_version = ?5 AND config_json = ?6"

/* ------------------------------------------------------------------------ */
/* Errors                                                                   */
/* ------------------------------------------------------------------------ */

static hetc_status_code_t code_for_sqlite(int rc) {
  if (rc == HETC_SQL_LOST) return HETC_STATUS_UNAVAILABLE;
  switch (rc & 0xff) {
    case SQLITE_NOMEM: return HETC_STATUS_OUT_OF_MEMORY;
    case SQLITE_BUSY:
    case SQLITE_LOCKED: return HETC_STATUS_UNAVAILABLE;
    case SQLITE_IOERR:
    case SQLITE_FULL: return HETC_STATUS_STORAGE_FAILED;
    case SQLITE_CANTOPEN:
    case SQLITE_READONLY:
    case SQLITE_PERM: return HETC_STATUS_IO_ERROR;
    case SQLITE_CORRUPT:
    case SQLITE_NOTADB: return HETC_STATUS_BAD_INPUT;
    default: return HETC_STATUS_INTERNAL;
  }
}

/* "PATH: DOING: sqlite's message". A wait given up because the user
 * interrupted hetc says so, not "database is locked". */
static hetc_status_t sqlite_failure(const hetc_records_t *store, int rc, const char *doing) {
  if ((rc & 0xff) == SQLITE_BUSY && hetc_interrupt_signal())
    return hetc_status_new(HETC_STATUS_UNAVAILABLE, "%s: %s: interrupted while waiting for another writer",
                           store->path, doing);
  const char *message = store->db.lite || hetc_sql_is_pg(&store->db) ? hetc_sql_errmsg(&store->db) : sqlite3_errstr(rc);
  if (rc == HETC_SQL_LOST)
    return hetc_status_new(HETC_STATUS_UNAVAILABLE, "%s: %s: %s (the connection to the server is lost)", store->path,
                           doing, message);
  if ((rc & 0xff) == SQLITE_BUSY && !hetc_sql_is_pg(&store->db))
    return hetc_status_new(HETC_STATUS_UNAVAILABLE, "%s: %s: %s (another process held it for %g s)", store->path,
                           doing, message, store->busy_timeout_s);
  return hetc_status_new(code_for_sqlite(rc), "%s: %s: %s", store->path, doing, message);
}

/* A write whose connection to the server was lost (the server restarted,
 * the backend was terminated) took its transaction with it: none of it
 * happened, or (lost during COMMIT) all of it did, and every write here is
 * safe to make twice. It is made once more, on a new connection
 * (hetc_pg_query waits for the server to come back). */
#define WRITE_AGAIN_IF_LOST(store, call)                                       \
  do {                                                                         \
    (store)->db.lost = 0;                                                      \
    hetc_status_t once_ = (call);                                              \
    if (once_ && (store)->db.lost) {                                           \
      hetc_status_free(once_);                                                 \
      (store)->db.lost = 0;                                                    \
      once_ = (call);                                                          \
    }                                                                          \
    return once_;                                                              \
  } while (0)

static hetc_status_t out_of_memory(const char *doing) {
  return hetc_status_new(HETC_STATUS_OUT_OF_MEMORY, "records store: %s", doing);
}

static hetc_status_t exec(hetc_records_t *store, const char *sql, const char *doing) {
  int rc = hetc_sql_exec(&store->db, sql);
  return rc == SQLITE_OK ? NULL : sqlite_failure(store, rc, doing);
}

static hetc_status_t prepare(hetc_records_t *store, const char *sql, hetc_sql_stmt_t **out_stmt) {
  int rc = hetc_sql_prepare(&store->db, sql, out_stmt);
  return rc == SQLITE_OK ? NULL : sqlite_failure(store, rc, "preparing a query");
}

/* Writing through a handle opened for reading is the caller's mistake. */
static hetc_status_t require_writable(const hetc_records_t *store, const char *doing) {
  if (store->writable && store->mode >= HETC_RECORDS_WRITE) return NULL;
  return hetc_status_new(HETC_STATUS_INTERNAL, "%s: %s: the store was opened for reading", store->path, doing);
}

/* Write transactions take the write lock up front (IMMEDIATE), so that a
 * waiting writer goes through the busy handler instead of failing at once
 * when its read lock cannot be upgraded. */
static hetc_status_t begin_write(hetc_records_t *store) {
  int rc = hetc_sql_begin_write(&store->db);
  return rc == SQLITE_OK ? NULL : sqlite_failure(store, rc, "starting a write");
}

static hetc_status_t end_write(hetc_records_t *store, hetc_status_t status) {
  if (!status) {
    status = exec(store, "COMMIT", "committing");
    if (!status) return NULL;
  }
  hetc_sql_exec(&store->db, "ROLLBACK");
  return status;
}

/* Waits for another process's lock: up to the busy timeout in all,
 * sleeping 1 ms at first and up to 50 ms, and not at all once the user has
 * interrupted hetc (common/interrupt.h). */
static int busy_wait(void *user, int attempts) {
  hetc_records_t *store = user;
  double now = hetc_now_seconds();
  if (attempts == 0) store->busy_since = now;
  if (hetc_interrupt_signal() || now - store->busy_since >= store->busy_timeout_s) return 0;
  long milliseconds = attempts < 6 ? 1L << attempts : 50;
  struct timespec pause = {0, milliseconds * 1000000L};
  nanosleep(&pause, NULL);
  return 1;
}

/* ------------------------------------------------------------------------ */
/* Opening                                                                  */
/* ------------------------------------------------------------------------ */

static char *join3(const char *a, const char *b, const char *c) {
  size_t length = strlen(a) + strlen(b) + strlen(c);
  char *joined = malloc(length + 1);
  if (joined) snprintf(joined, length + 1, "%s%s%s", a, b, c);
  return joined;
}

char *hetc_records_default_path(void) {
  const char *explicit_path = getenv("HETC_RECORDS");
  if (explicit_path && explicit_path[0]) return join3(explicit_path, "", "");
  /* The XDG spec says a relative XDG_DATA_HOME is invalid and ignored. */
  const char *data_home = getenv("XDG_DATA_HOME");
  if (data_home && data_home[0] == '/') return join3(data_home, "/hetc/", "records.sqlite");
  const char *home = getenv("HOME");
  if (home && home[0]) return join3(home, "/.local/share/hetc/", "records.sqlite");
  return NULL;
}

/* mkdir -p for the directory part of `path`; 0700 as the XDG spec asks for
 * directories it creates. */
static hetc_status_t create_parent_directories(const char *path) {
  char *dir = hetc_path_dirname(path);
  if (!dir) return out_of_memory("creating the store's directory");
  hetc_status_t status = NULL;
  for (char *slash = dir + 1;; ++slash) {
    int at_end = *slash == '\0';
    if (!at_end && *slash != '/') continue;
    *slash = '\0';
    if (mkdir(dir, 0700) != 0 && errno != EEXIST) {
      status = hetc_status_new(HETC_STATUS_IO_ERROR, "%s: cannot create directory: %s", dir,
                               strerror(errno));
      break;
    }
    if (at_end) break;
    *slash = '/';
  }
  free(dir);
  return status;
}

/* A process's start time in clock ticks since boot (with the pid, what
 * tells it from a later process given the same pid); -1 when it is not
 * running. */
static int64_t process_start_ticks(int64_t pid) {
  char path[64], text[1024];
  snprintf(path, sizeof(path), "/proc/%lld/stat", (long long)pid);
  FILE *file = fopen(path, "r");
  if (!file) return -1;
  size_t length = fread(text, 1, sizeof(text) - 1, file);
  fclose(file);
  text[length] = '\0';
  /* Fields 3 (the state) and 22, counted after the command name, which may
   * hold spaces and parentheses itself: the last ')' ends it. A zombie has
   * ended, whether or not its parent has reaped it yet. */
  const char *p = strrchr(text, ')');
  if (!p || p[1] != ' ' || p[2] == 'Z' || p[2] == 'X') return -1;
  for (int field = 2; p && field < 22; ++field) p = strchr(p + 1, ' ');
  return p ? strtoll(p + 1, NULL, 10) : -1;
}

/* This process as a claim's owner. */
static void own_identity(owner_t *out) {
  char host[256] = "", boot[64] = "";
  gethostname(host, sizeof(host) - 1);
  FILE *file = fopen("/proc/sys/kernel/random/boot_id", "r");
  if (file) {
    if (!fgets(boot, sizeof(boot), file)) boot[0] = '\0';
    fclose(file);
    boot[strcspn(boot, "\n")] = '\0';
  }
  snprintf(out->host, sizeof(out->host), "%s/%s", host, boot);
  out->pid = (int64_t)getpid();
  out->start = process_start_ticks(out->pid);
}

typedef struct identity_t {
  int64_t application_id;
  int64_t user_version;
  int64_t objects; /* tables and indexes in the file */
} identity_t;

static int read_integer(hetc_sql_t *db, const char *sql, int64_t *out_value) {
  hetc_sql_stmt_t *stmt = NULL;
  int rc = hetc_sql_prepare(db, sql, &stmt);
  if (rc == SQLITE_OK) {
    rc = hetc_sql_step(stmt);
    if (rc == SQLITE_ROW) {
      *out_value = hetc_sql_column_int64(stmt, 0);
      rc = SQLITE_OK;
    }
  }
  hetc_sql_finalize(stmt);
  return rc;
}

static int read_identity(hetc_sql_t *db, identity_t *out) {
  int rc = read_integer(db, "PRAGMA application_id", &out->application_id);
  if (rc == SQLITE_OK) rc = read_integer(db, "PRAGMA user_version", &out->user_version);
  if (rc == SQLITE_OK) rc = read_integer(db, "SELECT count(*) FROM sqlite_master", &out->objects);
  return rc;
}

static int is_fresh(const identity_t *identity) {
  return identity->application_id == 0 && identity->objects == 0;
}

/* Refuses files that are not ours before anything is written to them (not
 * even the journal mode). */
static hetc_status_t check_identity(hetc_records_t *store, identity_t *out_identity) {
  int rc = read_identity(&store->db, out_identity);
  if ((rc & 0xff) == SQLITE_NOTADB) {
    return hetc_status_new(HETC_STATUS_BAD_INPUT,
                           "%s: not a hetc records database (not an SQLite file)", store->path);
  }
  if (rc != SQLITE_OK) return sqlite_failure(store, rc, "reading the schema version");
  if (is_fresh(out_identity)) return NULL;
  if (out_identity->application_id != HETC_RECORDS_APPLICATION_ID) {
    return hetc_status_new(HETC_STATUS_BAD_INPUT,
                           "%s: not a hetc records database (an SQLite database of another "
                           "application)",
                           store->path);
  }
  if (out_identity->user_version < 1 || out_identity->user_version > HETC_RECORDS_SCHEMA_VERSION) {
    /* Older versions are upgraded when opened for writing. */
    return hetc_status_new(HETC_STATUS_BAD_INPUT,
                           "%s: records schema version %lld, this hetc reads version %d%s",
                           store->path, (long long)out_identity->user_version,
                           HETC_RECORDS_SCHEMA_VERSION,
                           out_identity->user_version > HETC_RECORDS_SCHEMA_VERSION
                               ? " (written by a newer hetc)"
                               : "");
  }
  return NULL;
}

/* The first of `columns` (NULL-terminated) that `table` of the store
 * lacks, in *out_missing (NULL when it has them all); *out_exists: 0 when
 * there is no such table. */
static hetc_status_t find_missing_column(hetc_records_t *store, const char *table, const char *const *columns,
                                         const char **out_missing, int *out_exists) {
  hetc_sql_stmt_t *stmt = NULL;
  HETC_RETURN_IF_ERROR(prepare(store,
                               hetc_sql_is_pg(&store->db)
                                   ? "SELECT column_name FROM information_schema.columns"
                                     " WHERE table_schema = current_schema() AND table_name = ?1"
                                   : "SELECT name FROM pragma_table_info(?1)",
                               &stmt));
  hetc_sql_bind_text(stmt, 1, table);
  uint32_t present = 0; /* bit c: columns[c] is there */
  int rc, rows = 0;
  while ((rc = hetc_sql_step(stmt)) == SQLITE_ROW) {
    const char *name = (const char *)hetc_sql_column_text(stmt, 0);
    ++rows;
    for (int c = 0; name && columns[c]; ++c)
      if (!strcmp(name, columns[c])) present |= 1u << c;
  }
  hetc_sql_finalize(stmt);
  if (rc != SQLITE_DONE) return sqlite_failure(store, rc, "reading the schema");
  *out_exists = rows > 0;
  *out_missing = NULL;
  for (int c = 0; columns[c] && !*out_missing; ++c)
    if (!(present & (1u << c))) *out_missing = columns[c];
  return NULL;
}

/* A file whose tables or columns were dropped (a hand edit, another tool)
 * is refused by name when opened, instead of failing on some later query
 * with SQLite's "no such table". */
static hetc_status_t check_tables(hetc_records_t *store) {
  for (size_t t = 0; t < sizeof(expected_tables) / sizeof(expected_tables[0]); ++t) {
    const table_columns_t *expected = &expected_tables[t];
    if (expected->since > store->version) continue;
    const char *missing = NULL;
    int exists = 0;
    HETC_RETURN_IF_ERROR(find_missing_column(store, expected->table, expected->columns, &missing, &exists));
    if (!exists)
      return hetc_status_new(HETC_STATUS_BAD_INPUT,
                             "%s: damaged records store: schema version %lld has a table '%s', this file has none",
                             store->path, (long long)store->version, expected->table);
    if (missing)
      return hetc_status_new(HETC_STATUS_BAD_INPUT, "%s: damaged records store: table '%s' has no column '%s'",
                             store->path, expected->table, missing);
  }
  return NULL;
}

/* The tables of version 5 from nothing, inside the caller's transaction. */
static hetc_status_t create_tables(hetc_records_t *store) {
  char pragmas[128];
  snprintf(pragmas, sizeof(pragmas), "PRAGMA application_id = %d; PRAGMA user_version = %d;",
           HETC_RECORDS_APPLICATION_ID, HETC_RECORDS_SCHEMA_VERSION);
  const char *const steps[] = {schema_sql, transfers_sql, peaks_sql, selections_sql, one_per_config_sql,
                               claims_sql, pragmas};
  hetc_status_t status = NULL;
  for (size_t s = 0; !status && s < sizeof(steps) / sizeof(steps[0]); ++s)
    status = exec(store, steps[s], "creating the schema");
  return status;
}

/* WAL lets readers go on while one process writes; NORMAL syncs at
 * checkpoints only, which in WAL mode can lose the last commits on power
 * loss but never corrupts the file, and a killed tuner loses nothing. The
 * mode is kept in the file, so only a store made some other way needs it
 * set; the change needs every other connection to stand aside, and SQLite
 * may refuse it at once (SQLITE_BUSY) rather than wait: it is tried again
 * until the busy timeout. */
static hetc_status_t use_wal(hetc_records_t *store) {
  hetc_sql_stmt_t *stmt = NULL;
  HETC_RETURN_IF_ERROR(prepare(store, "PRAGMA journal_mode", &stmt));
  int rc = hetc_sql_step(stmt);
  int is_wal = rc == SQLITE_ROW && hetc_sql_column_text(stmt, 0) &&
               !strcmp((const char *)hetc_sql_column_text(stmt, 0), "wal");
  hetc_sql_finalize(stmt);
  if (rc != SQLITE_ROW) return sqlite_failure(store, rc, "reading the journal mode");
  for (int attempts = 0; !is_wal; ++attempts) {
    rc = hetc_sql_exec(&store->db, "PRAGMA journal_mode = WAL");
    if (rc == SQLITE_OK) break;
    if ((rc & 0xff) != SQLITE_BUSY || !busy_wait(store, attempts))
      return sqlite_failure(store, rc, "setting the journal mode");
  }
  return exec(store, "PRAGMA synchronous = NORMAL", "setting the journal mode");
}

/* Makes the schema in a fresh (empty) file, or brings an older one up to
 * this version, in one transaction; whoever gets the lock first does it,
 * and the others find it done. */
static hetc_status_t create_or_upgrade(hetc_records_t *store) {
  HETC_RETURN_IF_ERROR(begin_write(store));
  identity_t identity;
  hetc_status_t status = check_identity(store, &identity);
  char doing[64];
  snprintf(doing, sizeof(doing), "upgrading the schema to version %d", HETC_RECORDS_SCHEMA_VERSION);
  if (!status && is_fresh(&identity)) {
    status = create_tables(store);
  } else if (!status && identity.user_version < HETC_RECORDS_SCHEMA_VERSION) {
    /* Version 1 to 2: the transfers table; 2 to 3: peaks; 3 to 4:
     * selections; 4 to 5: one record per config and the claims. */
    int64_t v = identity.user_version;
    char pragma[64];
    snprintf(pragma, sizeof(pragma), "PRAGMA user_version = %d;", HETC_RECORDS_SCHEMA_VERSION);
    if (v < 2) status = exec(store, transfers_sql, doing);
    if (!status && v < 3) status = exec(store, peaks_sql, doing);
    if (!status && v < 4) status = exec(store, selections_sql, doing);
    if (!status && v < 5) status = exec(store, keep_one_per_config_sql, doing);
    if (!status && v < 5) status = exec(store, one_per_config_sql, doing);
    if (!status && v < 5) status = exec(store, claims_sql, doing);
    if (!status) status = exec(store, pragma, doing);
  }
  return end_write(store, status);
}

/* A new store, made whole under a temporary name beside `path` and linked
 * into place, so that no process ever opens a half-made one (two tuners
 * starting on a new store raced to set its journal mode). Whoever links
 * first wins; the others find a store there and use it. Returns 1 when
 * `path` now names a store, 0 when the filesystem cannot link (the caller
 * then makes it in place). */
static int create_store_file(hetc_records_t *store, hetc_status_t *out_status) {
  *out_status = NULL;
  char *temp = join3(store->path, ".new-", "XXXXXX");
  if (!temp) {
    *out_status = out_of_memory("creating the store");
    return 1;
  }
  int fd = mkstemp(temp);
  if (fd < 0) {
    *out_status = hetc_status_new(HETC_STATUS_IO_ERROR, "%s: cannot create the records store: %s", store->path,
                                  strerror(errno));
    free(temp);
    return 1;
  }
  mode_t mask = umask(0);
  umask(mask);
  fchmod(fd, 0666 & ~mask); /* as SQLite would have made it */
  close(fd);
  hetc_records_t maker;
  memset(&maker, 0, sizeof(maker));
  maker.path = store->path; /* messages name the store, not the temporary */
  maker.busy_timeout_s = store->busy_timeout_s;
  int rc = sqlite3_open_v2(temp, &maker.db.lite, SQLITE_OPEN_READWRITE, NULL);
  hetc_status_t status = rc == SQLITE_OK ? NULL : sqlite_failure(&maker, rc, "creating the records store");
  if (!status) status = exec(&maker, "PRAGMA journal_mode = WAL", "creating the records store");
  if (!status) status = exec(&maker, "BEGIN", "creating the records store");
  if (!status) status = end_write(&maker, create_tables(&maker));
  sqlite3_close(maker.db.lite); /* the last connection: the -wal and -shm go */
  int linked = 1;
  if (!status && link(temp, store->path) != 0 && errno != EEXIST) {
    if (errno == EPERM || errno == ENOTSUP || errno == EOPNOTSUPP || errno == ENOSYS) {
      linked = 0; /* no hard links here */
    } else {
      status = hetc_status_new(HETC_STATUS_IO_ERROR, "%s: cannot create the records store: %s", store->path,
                               strerror(errno));
    }
  }
  unlink(temp);
  free(temp);
  *out_status = status;
  return linked;
}

/* `file:PATH?immutable=1`: reading a store in WAL mode needs its -shm file,
 * which a reader without write access to the directory cannot make when
 * no writer has the store open. Immutable reads the file as it is (it has
 * no -wal to read either). */
static char *immutable_uri(const char *path) {
  hetc_json_text_t uri = {0};
  hetc_json_text_raw(&uri, "file:");
  for (const unsigned char *p = (const unsigned char *)path; *p; ++p) {
    char piece[4] = {(char)*p, 0, 0, 0};
    if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') ||
          strchr("/-._~", *p)))
      snprintf(piece, sizeof(piece), "%%%02X", *p);
    hetc_json_text_raw(&uri, piece);
  }
  hetc_json_text_raw(&uri, "?immutable=1");
  return hetc_json_text_take(&uri);
}

static hetc_status_t connect(hetc_records_t *store, const char *name, int flags) {
  int rc = sqlite3_open_v2(name, &store->db.lite, flags, NULL);
  if (rc != SQLITE_OK) {
    hetc_status_t status =
        hetc_status_new(HETC_STATUS_IO_ERROR, "%s: cannot open the records store: %s", store->path,
                        store->db.lite ? sqlite3_errmsg(store->db.lite) : sqlite3_errstr(rc));
    sqlite3_close(store->db.lite);
    store->db.lite = NULL;
    return status;
  }
  sqlite3_busy_handler(store->db.lite, busy_wait, store);
  return NULL;
}

/* ------------------------------------------------------------------------ */
/* A store on a PostgreSQL server                                           */
/* ------------------------------------------------------------------------ */

/* The store's tables on a server live in a schema of their own, beside
 * the queue's tables (api/queue-format.md) and whatever else the database
 * holds. Every connection has it as its search path, so the queries are
 * the same as on a file. */
#define SERVER_SCHEMA "hetc_records"
/* What a file keeps in its header (application id, user version), a server
 * keeps in a table. */
static const char server_meta_sql[] =
    "CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);"
    "INSERT INTO meta VALUES ('application', 'hetc records');";
/* The global cost model trained on the store (hetc_records_put_model),
 * which beside a file is the file PATH.model. */
static const char server_models_sql[] =
    "CREATE TABLE cost_models (name TEXT PRIMARY KEY, model TEXT NOT NULL, timestamp INTEGER NOT NULL,"
    " hetc_version TEXT NOT NULL);";
/* The order a selection's rows were written in, which SQLite keeps as
 * rowid. */
static const char server_selections_order_sql[] = "ALTER TABLE selections ADD COLUMN rowid BIGSERIAL;";

/* The schema's SQL in PostgreSQL's types: 64-bit integers and doubles,
 * where SQLite's INTEGER and REAL are both. The caller frees it. */
static char *server_types(const char *sql) {
  static const char *const from[] = {"INTEGER PRIMARY KEY", "INTEGER", "REAL"};
  static const char *const to[] = {"BIGSERIAL PRIMARY KEY", "BIGINT", "DOUBLE PRECISION"};
  hetc_json_text_t out = {0};
  char piece[2] = {0, 0};
  for (const char *p = sql; *p;) {
    size_t k = 0;
    while (k < 3 && strncmp(p, from[k], strlen(from[k])) != 0) ++k;
    if (k < 3 && p > sql && p[-1] == ' ') {
      hetc_json_text_raw(&out, to[k]);
      p += strlen(from[k]);
    } else {
      piece[0] = *p++;
      hetc_json_text_raw(&out, piece);
    }
  }
  return hetc_json_text_take(&out);
}

/* The value of `key` in the store's meta table, in out ("" when there is
 * none). */
static hetc_status_t read_server_meta(hetc_records_t *store, const char *key, char *out, size_t size) {
  hetc_sql_stmt_t *stmt = NULL;
  HETC_RETURN_IF_ERROR(prepare(store, "SELECT value FROM meta WHERE key = ?1", &stmt));
  hetc_sql_bind_text(stmt, 1, key);
  int rc = hetc_sql_step(stmt);
  const char *text = rc == SQLITE_ROW ? (const char *)hetc_sql_column_text(stmt, 0) : NULL;
  snprintf(out, size, "%s", text ? text : "");
  hetc_sql_finalize(stmt);
  return rc == SQLITE_ROW || rc == SQLITE_DONE ? NULL : sqlite_failure(store, rc, "reading the schema version");
}

/* Whether the server holds a store: the meta table of its schema. */
static int made_on_server(hetc_records_t *store, int64_t *out_made) {
  return read_integer(&store->db,
                      "SELECT count(*) FROM information_schema.tables WHERE table_schema = '" SERVER_SCHEMA
                      "' AND table_name = 'meta'",
                      out_made);
}

/* A schema of the store's name without the store's meta table is not
 * hetc's (hetc makes both in one transaction), unless it is empty (made
 * for hetc by someone who may create schemas): a relation in it is
 * refused, naming it, before hetc adds tables of its own beside it. The
 * meta table is looked for again in the same statement, as of the same
 * snapshot: another process may have made the store since the caller
 * found none. */
static hetc_status_t refuse_foreign_schema(hetc_records_t *store) {
  hetc_sql_stmt_t *stmt = NULL;
  HETC_RETURN_IF_ERROR(prepare(store,
                               "SELECT c.relname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace"
                               " WHERE n.nspname = '" SERVER_SCHEMA "' AND NOT EXISTS (SELECT 1 FROM "
                               "information_schema.tables WHERE table_schema = '" SERVER_SCHEMA
                               "' AND table_name = 'meta') ORDER BY c.relkind <> 'r', c.relname LIMIT 1",
                               &stmt));
  const int rc = hetc_sql_step(stmt);
  char table[160] = "";
  if (rc == SQLITE_ROW)
    snprintf(table, sizeof(table), SERVER_SCHEMA ".%s", (const char *)hetc_sql_column_text(stmt, 0));
  hetc_sql_finalize(stmt);
  if (rc != SQLITE_ROW && rc != SQLITE_DONE) return sqlite_failure(store, rc, "creating the records store");
  return table[0] ? hetc_pg_foreign_table(&store->db.pg, table, "schema " SERVER_SCHEMA " has no hetc meta table")
                  : NULL;
}

/* Makes the tables in one transaction under the write lock; whoever gets
 * it first makes them, and the others find them made. */
static hetc_status_t create_on_server(hetc_records_t *store) {
  char version_sql[96];
  snprintf(version_sql, sizeof(version_sql), "INSERT INTO meta VALUES ('schema_version', '%d');",
           HETC_RECORDS_SCHEMA_VERSION);
  const char *const steps[] = {schema_sql, transfers_sql, peaks_sql, selections_sql, one_per_config_sql,
                               claims_sql, server_selections_order_sql, server_models_sql, server_meta_sql,
                               version_sql};
  HETC_RETURN_IF_ERROR(begin_write(store));
  hetc_status_t status = exec(store, "CREATE SCHEMA IF NOT EXISTS " SERVER_SCHEMA, "creating the records store");
  int64_t made = 0;
  const int rc = status ? SQLITE_OK : made_on_server(store, &made);
  if (rc != SQLITE_OK) status = sqlite_failure(store, rc, "creating the records store");
  if (!status && !made) status = refuse_foreign_schema(store);
  for (size_t k = 0; !status && !made && k < sizeof(steps) / sizeof(steps[0]); ++k) {
    char *sql = server_types(steps[k]);
    status = sql ? exec(store, sql, "creating the records store") : out_of_memory("creating the records store");
    free(sql);
  }
  return end_write(store, status);
}

/* Opens the store the URI names (records.h's errors, with the URI, its
 * password left out, as the store's name). */
static hetc_status_t open_on_server(hetc_records_t *store, const char *uri) {
  HETC_RETURN_IF_ERROR(hetc_pg_connect(uri, "-c search_path=" SERVER_SCHEMA, &store->db.pg));
  char *shown = join3(store->db.pg.shown_uri, "", "");
  if (!shown) return out_of_memory("opening");
  free(store->path);
  store->path = shown;
  int64_t made = 0;
  int rc = made_on_server(store, &made);
  if (rc != SQLITE_OK) return sqlite_failure(store, rc, "opening the records store");
  if (!made) HETC_RETURN_IF_ERROR(refuse_foreign_schema(store));
  if (!made && store->mode != HETC_RECORDS_CREATE)
    return hetc_status_new(HETC_STATUS_NOT_FOUND,
                           "%s: no records store there (hetc tune and hetc records import create one)", store->path);
  if (!made) HETC_RETURN_IF_ERROR(create_on_server(store));
  static const char *const meta_columns[] = {"key", "value", NULL};
  const char *missing = NULL;
  int exists = 0;
  HETC_RETURN_IF_ERROR(find_missing_column(store, "meta", meta_columns, &missing, &exists));
  if (missing) {
    char why[64];
    snprintf(why, sizeof(why), "it has no column '%s'", missing);
    return hetc_pg_foreign_table(&store->db.pg, SERVER_SCHEMA ".meta", why);
  }
  char value[64];
  HETC_RETURN_IF_ERROR(read_server_meta(store, "application", value, sizeof(value)));
  if (strcmp(value, "hetc records") != 0)
    return hetc_status_new(HETC_STATUS_BAD_INPUT,
                           "%s: not a hetc records database (schema " SERVER_SCHEMA " belongs to another application)",
                           store->path);
  HETC_RETURN_IF_ERROR(read_server_meta(store, "schema_version", value, sizeof(value)));
  const int64_t version = strtoll(value, NULL, 10);
  if (version != HETC_RECORDS_SCHEMA_VERSION)
    return hetc_status_new(HETC_STATUS_BAD_INPUT, "%s: records schema version %lld, this hetc reads version %d%s",
                           store->path, (long long)version, HETC_RECORDS_SCHEMA_VERSION,
                           version > HETC_RECORDS_SCHEMA_VERSION ? " (written by a newer hetc)" : "");
  store->version = version;
  HETC_RETURN_IF_ERROR(check_tables(store));
  store->writable = store->mode != HETC_RECORDS_READ;
  return NULL;
}

hetc_status_t hetc_records_open(const char *path, hetc_records_t **out_store) {
  return hetc_records_open_as(path, HETC_RECORDS_CREATE, out_store);
}

hetc_status_t hetc_records_open_as(const char *path, hetc_records_mode_t mode, hetc_records_t **out_store) {
  *out_store = NULL;
  if (path && !path[0])
    return hetc_status_new(HETC_STATUS_BAD_INPUT, "an empty path names no records store");
  hetc_records_t *store = calloc(1, sizeof(*store));
  if (!store) return out_of_memory("opening");
  store->mode = mode;
  own_identity(&store->owner);
  hetc_status_t status =
      hetc_env_seconds("HETC_RECORDS_BUSY_TIMEOUT", HETC_RECORDS_BUSY_TIMEOUT_MS / 1000.0, &store->busy_timeout_s);
  if (status) goto fail;
  store->path = path ? join3(path, "", "") : hetc_records_default_path();
  if (!store->path) {
    status = path ? out_of_memory("opening")
                  : hetc_status_new(HETC_STATUS_NOT_FOUND,
                                    "no records store: set HETC_RECORDS, XDG_DATA_HOME or HOME, or "
                                    "name one with --records");
    goto fail;
  }
  if (hetc_pg_is_uri(store->path)) {
    status = open_on_server(store, store->path);
    if (!status && !(store->model_name = join3(store->path, " (cost model)", "")))
      status = out_of_memory("opening");
    if (status) goto fail;
    *out_store = store;
    return NULL;
  }
  if (!(store->model_name = join3(store->path, ".model", ""))) {
    status = out_of_memory("opening");
    goto fail;
  }

  struct stat st;
  if (stat(store->path, &st) != 0) {
    if (errno != ENOENT) {
      status = hetc_status_new(HETC_STATUS_IO_ERROR, "%s: cannot open the records store: %s", store->path,
                               strerror(errno));
      goto fail;
    }
    if (mode != HETC_RECORDS_CREATE) {
      status = hetc_status_new(HETC_STATUS_NOT_FOUND,
                               "%s: no records store there (hetc tune and hetc records import create one)",
                               store->path);
      goto fail;
    }
    if (!path) status = create_parent_directories(store->path);
    if (!status && !create_store_file(store, &status) && !status) {
      /* No hard links: an empty file, made into a store in place below. */
      int fd = open(store->path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
      if (fd >= 0) close(fd);
      else if (errno != EEXIST)
        status = hetc_status_new(HETC_STATUS_IO_ERROR, "%s: cannot create the records store: %s", store->path,
                                 strerror(errno));
    }
    if (status) goto fail;
  } else if (S_ISDIR(st.st_mode)) {
    status = hetc_status_new(HETC_STATUS_BAD_INPUT, "%s: a directory, not a records store", store->path);
    goto fail;
  }

  const int reading = mode <= HETC_RECORDS_CACHE;
  status = connect(store, store->path,
                   mode == HETC_RECORDS_READ ? SQLITE_OPEN_READONLY : SQLITE_OPEN_READWRITE);
  if (status) goto fail;
  if (!reading && sqlite3_db_readonly(store->db.lite, "main") == 1) {
    status = hetc_status_new(HETC_STATUS_IO_ERROR, "%s: cannot write the records store (no permission)",
                             store->path);
    goto fail;
  }
  identity_t identity;
  int rc = read_identity(&store->db, &identity);
  if (reading && ((rc & 0xff) == SQLITE_READONLY || (rc & 0xff) == SQLITE_CANTOPEN)) {
    char *uri = immutable_uri(store->path);
    sqlite3_close(store->db.lite);
    store->db.lite = NULL;
    status = uri ? connect(store, uri, SQLITE_OPEN_READONLY | SQLITE_OPEN_URI) : out_of_memory("opening");
    free(uri);
    if (status) goto fail;
  }
  status = check_identity(store, &identity);
  if (status) goto fail;
  if (is_fresh(&identity) && mode != HETC_RECORDS_CREATE) {
    status = hetc_status_new(HETC_STATUS_BAD_INPUT, "%s: an empty file, not a records store", store->path);
    goto fail;
  }
  if (!reading) {
    /* Only writers touch the file: the journal mode, then the schema. */
    status = use_wal(store);
    if (!status && (is_fresh(&identity) || identity.user_version < HETC_RECORDS_SCHEMA_VERSION))
      status = create_or_upgrade(store);
    if (!status) status = check_identity(store, &identity);
    if (status) goto fail;
  }
  store->version = identity.user_version;
  status = check_tables(store);
  if (status) goto fail;
  store->writable = store->version == HETC_RECORDS_SCHEMA_VERSION && mode != HETC_RECORDS_READ &&
                    sqlite3_db_readonly(store->db.lite, "main") == 0;
  *out_store = store;
  return NULL;
fail:
  hetc_records_close(store);
  return status;
}

static hetc_status_t release_claims(hetc_records_t *store);

void hetc_records_close(hetc_records_t *store) {
  if (!store) return;
  /* Claims left behind would expire with this process anyway. */
  if (store->claimed) hetc_status_free(release_claims(store));
  sqlite3_close(store->db.lite); /* every statement is finalized where it was made */
  hetc_pg_close(&store->db.pg);
  free(store->path);
  free(store->model_name);
  free(store);
}

const char *hetc_records_path(const hetc_records_t *store) { return store->path; }

int hetc_records_names_server(const char *path) { return hetc_pg_is_uri(path); }

int hetc_records_may_exist(const char *path) {
  struct stat st;
  return hetc_records_names_server(path) || stat(path, &st) == 0;
}

int hetc_records_writable(const hetc_records_t *store) { return store && store->writable; }

/* ------------------------------------------------------------------------ */
/* Adding                                                                   */
/* ------------------------------------------------------------------------ */

/* The costs as the JSON array the costs_json column holds. Caller frees. */
static char *costs_text(const hetc_record_t *record) {
  hetc_json_text_t text = {0};
  hetc_json_text_raw(&text, "[");
  for (int32_t c = 0; c < record->num_costs; ++c) {
    if (c) hetc_json_text_raw(&text, ",");
    hetc_json_text_double(&text, record->costs[c]);
  }
  hetc_json_text_raw(&text, "]");
  return hetc_json_text_take(&text);
}

/* Binds ?1..?17 of insert_sql. The texts are the caller's and must outlive
 * the statement's next step (SQLITE_STATIC). */
static int bind_record(hetc_sql_stmt_t *stmt, const hetc_record_t *r, const char *config,
                       const char *costs) {
  int rc = SQLITE_OK;
#define BIND(call)                        \
  do {                                    \
    if (rc == SQLITE_OK) rc = (call);     \
  } while (0)
  BIND(hetc_sql_bind_text(stmt, 1, r->target));
  BIND(hetc_sql_bind_text(stmt, 2, r->plugin_version));
  BIND(hetc_sql_bind_text(stmt, 3, r->device_kind));
  BIND(hetc_sql_bind_text(stmt, 4, r->device_fingerprint));
  BIND(hetc_sql_bind_text(stmt, 5, r->template_name));
  BIND(hetc_sql_bind_int64(stmt, 6, r->template_version));
  BIND(hetc_sql_bind_text(stmt, 7, r->workload_key));
  BIND(hetc_sql_bind_int64(stmt, 8, r->config_index));
  BIND(hetc_sql_bind_text(stmt, 9, config));
  BIND(hetc_sql_bind_text(stmt, 10, costs));
  double median = hetc_record_median_cost(r);
  BIND(isfinite(median) ? hetc_sql_bind_double(stmt, 11, median) : hetc_sql_bind_null(stmt, 11));
  BIND(hetc_sql_bind_int64(stmt, 12, (int)r->error));
  BIND(r->error_message ? hetc_sql_bind_text(stmt, 13, r->error_message)
                        : hetc_sql_bind_null(stmt, 13));
  BIND(hetc_sql_bind_double(stmt, 14, r->build_seconds));
  BIND(hetc_sql_bind_double(stmt, 15, r->total_seconds));
  BIND(hetc_sql_bind_int64(stmt, 16, r->timestamp));
  BIND(hetc_sql_bind_text(stmt, 17, r->hetc_version));
#undef BIND
  return rc;
}

/* Binds a config's key, ?1..?6 of KEY_WHERE, from a record's identity and
 * the canonical config text (the caller's, as in bind_record). */
static int bind_key(hetc_sql_stmt_t *stmt, const hetc_record_t *r, const char *config) {
  int rc = hetc_sql_bind_text(stmt, 1, r->target);
  if (rc == SQLITE_OK) rc = hetc_sql_bind_text(stmt, 2, r->device_fingerprint);
  if (rc == SQLITE_OK) rc = hetc_sql_bind_text(stmt, 3, r->workload_key);
  if (rc == SQLITE_OK) rc = hetc_sql_bind_text(stmt, 4, r->template_name);
  if (rc == SQLITE_OK) rc = hetc_sql_bind_int64(stmt, 5, r->template_version);
  if (rc == SQLITE_OK) rc = hetc_sql_bind_text(stmt, 6, config);
  return rc;
}

/* Runs a statement that returns no rows (after binding); SQLite's failure
 * as a status. */
static hetc_status_t step_done(hetc_records_t *store, hetc_sql_stmt_t *stmt, int rc, const char *doing) {
  if (rc == SQLITE_OK) rc = hetc_sql_step(stmt);
  hetc_sql_reset(stmt);
  hetc_sql_clear_bindings(stmt);
  return rc == SQLITE_DONE ? NULL : sqlite_failure(store, rc, doing);
}

/* The statements of one adding transaction. */
typedef struct adder_t {
  hetc_records_t *store;
  hetc_sql_stmt_t *insert;
  hetc_sql_stmt_t *unclaim; /* a recorded config needs no claim */
} adder_t;

static hetc_status_t adder_begin(hetc_records_t *store, adder_t *out) {
  memset(out, 0, sizeof(*out));
  out->store = store;
  HETC_RETURN_IF_ERROR(require_writable(store, "adding records"));
  HETC_RETURN_IF_ERROR(begin_write(store));
  hetc_status_t status = prepare(store, insert_sql, &out->insert);
  if (!status) status = prepare(store, "DELETE FROM claims" KEY_WHERE, &out->unclaim);
  if (status) {
    hetc_sql_finalize(out->insert);
    hetc_sql_finalize(out->unclaim);
    memset(out, 0, sizeof(*out));
    status = end_write(store, status);
  }
  return status;
}

/* Ends the transaction: commits when `status` is NULL, else rolls back and
 * returns it. */
static hetc_status_t adder_end(adder_t *adder, hetc_status_t status) {
  if (!adder->store) return status;
  hetc_sql_finalize(adder->insert);
  hetc_sql_finalize(adder->unclaim);
  status = end_write(adder->store, status);
  memset(adder, 0, sizeof(*adder));
  return status;
}

static void adder_abandon(adder_t *adder) {
  if (!adder->store) return;
  hetc_sql_finalize(adder->insert);
  hetc_sql_finalize(adder->unclaim);
  hetc_sql_exec(&adder->store->db, "ROLLBACK");
  memset(adder, 0, sizeof(*adder));
}

/* One record inside the open transaction: *out_added is 1 when it was
 * added, 0 when the store held its config already. A failure names the
 * record by `index`. */
static hetc_status_t adder_add(adder_t *adder, const hetc_record_t *record, int32_t index, int *out_added) {
  *out_added = 0;
  char *config = NULL, *costs = NULL;
  hetc_status_t status = hetc_record_validate(record);
  if (!status) status = hetc_record_config_canonical(record->config_json, &config);
  if (status) return hetc_status_annotate(status, "record %d", index);
  costs = costs_text(record);
  if (!costs) status = out_of_memory("adding records");
  if (!status) status = step_done(adder->store, adder->insert, bind_record(adder->insert, record, config, costs),
                                  "adding a record");
  if (!status) *out_added = hetc_sql_changes(&adder->store->db) > 0;
  if (!status) status = step_done(adder->store, adder->unclaim, bind_key(adder->unclaim, record, config),
                                  "releasing a claim");
  free(config);
  free(costs);
  return status;
}

static hetc_status_t add_records_once(hetc_records_t *store, const hetc_record_t *records, int32_t count,
                                      int32_t *out_added) {
  if (out_added) *out_added = 0;
  if (count < 0 || (count > 0 && !records)) {
    return hetc_status_new(HETC_STATUS_INVALID_ARGUMENT, "records store: bad record array");
  }
  adder_t adder;
  HETC_RETURN_IF_ERROR(adder_begin(store, &adder));
  int32_t added = 0;
  hetc_status_t status = NULL;
  for (int32_t i = 0; !status && i < count; ++i) {
    int one = 0;
    status = adder_add(&adder, &records[i], i, &one);
    added += one;
  }
  status = adder_end(&adder, status);
  if (!status && out_added) *out_added = added;
  return status;
}

static hetc_status_t add_records(hetc_records_t *store, const hetc_record_t *records, int32_t count,
                                 int32_t *out_added) {
  WRITE_AGAIN_IF_LOST(store, add_records_once(store, records, count, out_added));
}

hetc_status_t hetc_records_add(hetc_records_t *store, const hetc_record_t *records,
                               int32_t count) {
  return add_records(store, records, count, NULL);
}

hetc_status_t hetc_records_add_new(hetc_records_t *store, const hetc_record_t *records,
                                   int32_t count, int32_t *out_added) {
  return add_records(store, records, count, out_added);
}

/* A batch of records added as lines arrive (the JSON Lines importer), in
 * one transaction. */
struct hetc_records_batch_t {
  adder_t adder;
  int32_t added;
  int32_t offered;
};

hetc_status_t hetc_records_batch_begin(hetc_records_t *store, hetc_records_batch_t **out_batch) {
  *out_batch = calloc(1, sizeof(**out_batch));
  if (!*out_batch) return out_of_memory("adding records");
  hetc_status_t status = adder_begin(store, &(*out_batch)->adder);
  if (status) {
    free(*out_batch);
    *out_batch = NULL;
  }
  return status;
}

hetc_status_t hetc_records_batch_add(hetc_records_batch_t *batch, const hetc_record_t *record) {
  int added = 0;
  HETC_RETURN_IF_ERROR(adder_add(&batch->adder, record, batch->offered, &added));
  ++batch->offered;
  batch->added += added;
  return NULL;
}

hetc_status_t hetc_records_batch_commit(hetc_records_batch_t *batch, int32_t *out_added) {
  if (out_added) *out_added = 0;
  hetc_status_t status = adder_end(&batch->adder, NULL);
  if (!status && out_added) *out_added = batch->added;
  free(batch);
  return status;
}

void hetc_records_batch_abandon(hetc_records_batch_t *batch) {
  if (!batch) return;
  adder_abandon(&batch->adder);
  free(batch);
}

/* ------------------------------------------------------------------------ */
/* Claims                                                                   */
/* ------------------------------------------------------------------------ */

/* Whether the owner of a claim is still at work: on this machine, while
 * its process runs (the same pid with the same start time); elsewhere,
 * until HETC_RECORDS_CLAIM_LEASE_S have passed. */
/* 1: another owner still at work; 0: gone; 2: this process. */
static int owner_alive(const owner_t *self, const char *host, int64_t pid, int64_t start, int64_t claimed_at) {
  if (!host || strcmp(host, self->host) != 0)
    return (int64_t)time(NULL) - claimed_at < HETC_RECORDS_CLAIM_LEASE_S;
  if (pid == self->pid && start == self->start) return 2;
  int64_t running = process_start_ticks(pid);
  return running >= 0 && running == start;
}

static hetc_status_t claim_once(hetc_records_t *store, const hetc_record_t *candidates, int32_t count,
                                hetc_claim_t *out_claims) {
  for (int32_t i = 0; i < count; ++i) out_claims[i] = HETC_CLAIM_BUSY;
  if (count <= 0) return NULL;
  HETC_RETURN_IF_ERROR(require_writable(store, "claiming configs"));
  HETC_RETURN_IF_ERROR(begin_write(store));
  hetc_sql_stmt_t *recorded = NULL, *held = NULL, *take = NULL;
  hetc_status_t status = prepare(store, "SELECT 1 FROM records" KEY_WHERE, &recorded);
  if (!status)
    status = prepare(store, "SELECT owner_host, owner_pid, owner_start, claimed_at FROM claims" KEY_WHERE, &held);
  if (!status)
    status = prepare(store,
                     "INSERT INTO claims (" CONFIG_KEY_COLUMNS
                     ", owner_host, owner_pid, owner_start, claimed_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)"
                     " ON CONFLICT (" CONFIG_KEY_COLUMNS ") DO UPDATE SET owner_host = excluded.owner_host,"
                     " owner_pid = excluded.owner_pid, owner_start = excluded.owner_start,"
                     " claimed_at = excluded.claimed_at",
                     &take);
  int taken = 0;
  for (int32_t i = 0; !status && i < count; ++i) {
    char *config = NULL;
    status = hetc_record_config_canonical(candidates[i].config_json, &config);
    if (status) {
      status = hetc_status_annotate(status, "claiming candidate %d", i);
      break;
    }
    int rc = bind_key(recorded, &candidates[i], config);
    if (rc == SQLITE_OK) rc = hetc_sql_step(recorded);
    int is_recorded = rc == SQLITE_ROW;
    hetc_sql_reset(recorded);
    if (rc != SQLITE_ROW && rc != SQLITE_DONE) status = sqlite_failure(store, rc, "claiming configs");
    int busy = 0;
    if (!status && !is_recorded) {
      rc = bind_key(held, &candidates[i], config);
      if (rc == SQLITE_OK) rc = hetc_sql_step(held);
      /* A claim of ours (a batch given up and proposed again) is taken anew. */
      if (rc == SQLITE_ROW)
        busy = owner_alive(&store->owner, (const char *)hetc_sql_column_text(held, 0), hetc_sql_column_int64(held, 1),
                           hetc_sql_column_int64(held, 2), hetc_sql_column_int64(held, 3)) == 1;
      hetc_sql_reset(held);
      if (rc != SQLITE_ROW && rc != SQLITE_DONE) status = sqlite_failure(store, rc, "claiming configs");
    }
    if (!status && !is_recorded && !busy) {
      rc = bind_key(take, &candidates[i], config);
      if (rc == SQLITE_OK) rc = hetc_sql_bind_text(take, 7, store->owner.host);
      if (rc == SQLITE_OK) rc = hetc_sql_bind_int64(take, 8, store->owner.pid);
      if (rc == SQLITE_OK) rc = hetc_sql_bind_int64(take, 9, store->owner.start);
      if (rc == SQLITE_OK) rc = hetc_sql_bind_int64(take, 10, (int64_t)time(NULL));
      status = step_done(store, take, rc, "claiming configs");
      taken = 1;
    }
    if (!status) out_claims[i] = is_recorded ? HETC_CLAIM_RECORDED : busy ? HETC_CLAIM_BUSY : HETC_CLAIM_TAKEN;
    free(config);
  }
  hetc_sql_finalize(recorded);
  hetc_sql_finalize(held);
  hetc_sql_finalize(take);
  status = end_write(store, status);
  if (status) {
    for (int32_t i = 0; i < count; ++i) out_claims[i] = HETC_CLAIM_BUSY;
  } else if (taken) {
    store->claimed = 1;
  }
  return status;
}

hetc_status_t hetc_records_claim(hetc_records_t *store, const hetc_record_t *candidates, int32_t count,
                                 hetc_claim_t *out_claims) {
  WRITE_AGAIN_IF_LOST(store, claim_once(store, candidates, count, out_claims));
}

static hetc_status_t unclaim_once(hetc_records_t *store, const hetc_record_t *candidates, int32_t count) {
  if (count <= 0 || !store->claimed) return NULL;
  HETC_RETURN_IF_ERROR(require_writable(store, "releasing claims"));
  HETC_RETURN_IF_ERROR(begin_write(store));
  hetc_sql_stmt_t *drop = NULL;
  hetc_status_t status = prepare(store,
                                 "DELETE FROM claims" KEY_WHERE " AND owner_host = ?7 AND owner_pid = ?8"
                                 " AND owner_start = ?9",
                                 &drop);
  for (int32_t i = 0; !status && i < count; ++i) {
    char *config = NULL;
    status = hetc_record_config_canonical(candidates[i].config_json, &config);
    if (status) break;
    int rc = bind_key(drop, &candidates[i], config);
    if (rc == SQLITE_OK) rc = hetc_sql_bind_text(drop, 7, store->owner.host);
    if (rc == SQLITE_OK) rc = hetc_sql_bind_int64(drop, 8, store->owner.pid);
    if (rc == SQLITE_OK) rc = hetc_sql_bind_int64(drop, 9, store->owner.start);
    status = step_done(store, drop, rc, "releasing claims");
    free(config);
  }
  hetc_sql_finalize(drop);
  return end_write(store, status);
}

hetc_status_t hetc_records_unclaim(hetc_records_t *store, const hetc_record_t *candidates, int32_t count) {
  WRITE_AGAIN_IF_LOST(store, unclaim_once(store, candidates, count));
}

static hetc_status_t release_claims(hetc_records_t *store) {
  HETC_RETURN_IF_ERROR(begin_write(store));
  hetc_sql_stmt_t *drop = NULL;
  hetc_status_t status =
      prepare(store, "DELETE FROM claims WHERE owner_host = ?1 AND owner_pid = ?2 AND owner_start = ?3", &drop);
  if (!status) {
    int rc = hetc_sql_bind_text(drop, 1, store->owner.host);
    if (rc == SQLITE_OK) rc = hetc_sql_bind_int64(drop, 2, store->owner.pid);
    if (rc == SQLITE_OK) rc = hetc_sql_bind_int64(drop, 3, store->owner.start);
    status = step_done(store, drop, rc, "releasing claims");
  }
  hetc_sql_finalize(drop);
  status = end_write(store, status);
  if (!status) store->claimed = 0;
  return status;
}

/* ------------------------------------------------------------------------ */
/* Reading                                                                  */
/* ------------------------------------------------------------------------ */

hetc_record_filter_t hetc_record_filter_any(void) {
  hetc_record_filter_t filter;
  memset(&filter, 0, sizeof(filter));
  filter.template_version = -1;
  return filter;
}

/* What a row may hold in each column of RECORD_COLUMNS. */
typedef enum column_kind_t { TEXT, TEXT_OR_NULL, INTEGER, NUMBER } column_kind_t;
static const struct {
  const char *name;
  column_kind_t kind;
} record_columns[] = {
    {"target", TEXT},          {"plugin_version", TEXT}, {"device_kind", TEXT},    {"device_fingerprint", TEXT},
    {"template_name", TEXT},   {"template_version", INTEGER}, {"workload_key", TEXT}, {"config_index", INTEGER},
    {"config_json", TEXT},     {"costs_json", TEXT},     {"error", INTEGER},       {"error_message", TEXT_OR_NULL},
    {"build_seconds", NUMBER}, {"total_seconds", NUMBER}, {"timestamp", INTEGER},  {"hetc_version", TEXT},
};
#define NUM_RECORD_COLUMNS ((int)(sizeof(record_columns) / sizeof(record_columns[0])))
#define ID_COLUMN 16

/* "PATH: record id N is damaged: WHAT" (BAD_INPUT): a row that another
 * writer (a shared server, a hand edit, another tool) left so that no
 * record can be made of it. */
static hetc_status_t damaged(const hetc_records_t *store, hetc_sql_stmt_t *stmt, const char *what) {
  return hetc_status_new(HETC_STATUS_BAD_INPUT, "%s: record id %lld is damaged: %s", store->path,
                         (long long)hetc_sql_column_int64(stmt, ID_COLUMN), what);
}

/* Checks each column's type before anything is read: SQLite converts a
 * NULL or a text silently into 0 or "", which would make up a record. */
static hetc_status_t check_row_types(const hetc_records_t *store, hetc_sql_stmt_t *stmt) {
  static const char *const type_names[] = {"", "an integer", "a real", "text", "a blob", "NULL"};
  for (int c = 0; c < NUM_RECORD_COLUMNS; ++c) {
    int type = hetc_sql_column_type(stmt, c);
    column_kind_t kind = record_columns[c].kind;
    int fits = kind == TEXT           ? type == SQLITE_TEXT
               : kind == TEXT_OR_NULL ? type == SQLITE_TEXT || type == SQLITE_NULL
               : kind == INTEGER      ? type == SQLITE_INTEGER
                                      : type == SQLITE_INTEGER || type == SQLITE_FLOAT;
    if (!fits) {
      char what[128];
      snprintf(what, sizeof(what), "column '%s' holds %s, not %s", record_columns[c].name,
               type >= 1 && type <= 5 ? type_names[type] : "something else",
               kind == INTEGER ? "an integer" : kind == NUMBER ? "a number" : "text");
      return damaged(store, stmt, what);
    }
  }
  return NULL;
}

/* Copies a text column (the caller checked its type); NULL stays NULL. 0
 * when out of memory. */
static int column_string(hetc_sql_stmt_t *stmt, int column, char **out_text) {
  *out_text = NULL;
  if (hetc_sql_column_type(stmt, column) == SQLITE_NULL) return 1;
  const unsigned char *text = hetc_sql_column_text(stmt, column);
  if (!text) return 0;
  /* A text with a NUL inside would be cut short without a word. */
  size_t length = (size_t)hetc_sql_column_bytes(stmt, column);
  if (strlen((const char *)text) != length) return -1;
  *out_text = malloc(length + 1);
  if (!*out_text) return 0;
  memcpy(*out_text, text, length + 1);
  return 1;
}

/* Parses the costs_json column of a row into the record. */
static int parse_costs(const char *costs, hetc_record_t *record) {
  cJSON *array = costs ? cJSON_ParseWithOpts(costs, NULL, 1) : NULL;
  int ok = cJSON_IsArray(array) && cJSON_GetArraySize(array) <= HETC_RECORD_MAX_COSTS;
  record->num_costs = 0;
  for (const cJSON *item = ok ? array->child : NULL; item; item = item->next) {
    if (!cJSON_IsNumber(item)) ok = 0;
    else record->costs[record->num_costs++] = item->valuedouble;
  }
  cJSON_Delete(array);
  return ok;
}

/* Fills *out from a row of RECORD_COLUMNS. A row that breaks what every
 * stored record satisfies (hetc_record_validate) is BAD_INPUT naming the
 * file, the row's id and what is wrong. */
static hetc_status_t read_record(hetc_records_t *store, hetc_sql_stmt_t *stmt, hetc_record_t *out) {
  memset(out, 0, sizeof(*out));
  HETC_RETURN_IF_ERROR(check_row_types(store, stmt));
  char *costs = NULL;
  char **const strings[] = {&out->target,         &out->plugin_version, &out->device_kind,
                            &out->device_fingerprint, &out->template_name, &out->workload_key,
                            &out->config_json,    &costs,               &out->error_message,
                            &out->hetc_version};
  static const int string_columns[] = {0, 1, 2, 3, 4, 6, 8, 9, 11, 15};
  hetc_status_t status = NULL;
  for (size_t s = 0; !status && s < sizeof(string_columns) / sizeof(string_columns[0]); ++s) {
    int copied = column_string(stmt, string_columns[s], strings[s]);
    if (copied == 0) status = out_of_memory("reading records");
    if (copied < 0) {
      char what[96];
      snprintf(what, sizeof(what), "column '%s' holds a NUL byte", record_columns[string_columns[s]].name);
      status = damaged(store, stmt, what);
    }
  }
  int64_t version = hetc_sql_column_int64(stmt, 5);
  int64_t error = hetc_sql_column_int64(stmt, 10);
  out->template_version = (uint32_t)version;
  out->config_index = hetc_sql_column_int64(stmt, 7);
  out->error = (hetc_record_error_t)error;
  out->build_seconds = hetc_sql_column_double(stmt, 12);
  out->total_seconds = hetc_sql_column_double(stmt, 13);
  out->timestamp = hetc_sql_column_int64(stmt, 14);
  if (!status && (version < 0 || version > (int64_t)UINT32_MAX))
    status = damaged(store, stmt, "template_version is outside 0..4294967295");
  if (!status && (error < 0 || error >= HETC_RECORD_ERROR_COUNT))
    status = damaged(store, stmt, "error is not one of the codes 0..9");
  if (!status && !parse_costs(costs, out))
    status = damaged(store, stmt, "costs_json is not an array of at most 32 numbers");
  if (!status && out->error != HETC_RECORD_OK) out->num_costs = 0;
  if (!status) {
    hetc_status_t invalid = hetc_record_validate(out);
    if (invalid) {
      status = damaged(store, stmt, hetc_status_message(invalid));
      hetc_status_free(invalid);
    }
  }
  free(costs);
  if (status) hetc_record_clear(out);
  return status;
}

/* Appends " AND column = ?" for each constraint of the filter; bind_filter
 * binds them in the same order from parameter *index on. */
static void append_filter(hetc_json_text_t *sql, const hetc_record_filter_t *filter) {
  if (!filter) return;
  if (filter->target) hetc_json_text_raw(sql, " AND target = ?");
  if (filter->device_fingerprint) hetc_json_text_raw(sql, " AND device_fingerprint = ?");
  if (filter->device_kind) hetc_json_text_raw(sql, " AND device_kind = ?");
  if (filter->workload_key) hetc_json_text_raw(sql, " AND workload_key = ?");
  if (filter->template_name) hetc_json_text_raw(sql, " AND template_name = ?");
  if (filter->template_version >= 0) hetc_json_text_raw(sql, " AND template_version = ?");
  if (filter->only_ok) hetc_json_text_raw(sql, " AND error = 0");
}

static int bind_filter(hetc_sql_stmt_t *stmt, const hetc_record_filter_t *filter, int *index) {
  if (!filter) return SQLITE_OK;
  const char *texts[] = {filter->target, filter->device_fingerprint, filter->device_kind,
                         filter->workload_key, filter->template_name};
  int rc = SQLITE_OK;
  for (size_t t = 0; rc == SQLITE_OK && t < sizeof(texts) / sizeof(texts[0]); ++t) {
    if (texts[t]) rc = hetc_sql_bind_text(stmt, (*index)++, texts[t]);
  }
  if (rc == SQLITE_OK && filter->template_version >= 0) {
    rc = hetc_sql_bind_int64(stmt, (*index)++, filter->template_version);
  }
  return rc;
}

/* Appends every row a prepared statement yields to *list. */
static hetc_status_t collect_rows(hetc_records_t *store, hetc_sql_stmt_t *stmt,
                                  hetc_record_list_t *list) {
  int32_t capacity = 0;
  for (;;) {
    int rc = hetc_sql_step(stmt);
    if (rc == SQLITE_DONE) return NULL;
    if (rc != SQLITE_ROW) return sqlite_failure(store, rc, "reading records");
    if (list->count == capacity) {
      if (capacity > INT32_MAX / 2) return out_of_memory("more than 2^30 records in one list");
      capacity = capacity ? capacity * 2 : 16;
      hetc_record_t *grown = realloc(list->items, (size_t)capacity * sizeof(*grown));
      if (!grown) return out_of_memory("reading records");
      list->items = grown;
    }
    HETC_RETURN_IF_ERROR(read_record(store, stmt, &list->items[list->count]));
    ++list->count;
  }
}

/* Runs `sql` (whose parameters are the filter's, then `limit` when
 * bind_limit) and collects its records into *out_list. */
static hetc_status_t run_list_query(hetc_records_t *store, const char *sql,
                                    const hetc_record_filter_t *filter, int bind_limit,
                                    int64_t limit, hetc_record_list_t *out_list) {
  out_list->count = 0;
  out_list->items = NULL;
  hetc_sql_stmt_t *stmt = NULL;
  HETC_RETURN_IF_ERROR(prepare(store, sql, &stmt));
  int index = 1;
  int rc = bind_filter(stmt, filter, &index);
  if (rc == SQLITE_OK && bind_limit) rc = hetc_sql_bind_int64(stmt, index++, limit);
  hetc_status_t status =
      rc == SQLITE_OK ? collect_rows(store, stmt, out_list) : sqlite_failure(store, rc, "binding");
  hetc_sql_finalize(stmt);
  if (status) hetc_record_list_free(out_list);
  return status;
}

static hetc_status_t check_filter(const hetc_record_filter_t *filter) {
  if (filter && filter->limit < 0) {
    return hetc_status_new(HETC_STATUS_INVALID_ARGUMENT, "records filter: limit %lld < 0",
                           (long long)filter->limit);
  }
  return NULL;
}

hetc_status_t hetc_records_query(hetc_records_t *store, const hetc_record_filter_t *filter,
                                 hetc_record_list_t *out_list) {
  out_list->count = 0;
  out_list->items = NULL;
  HETC_RETURN_IF_ERROR(check_filter(filter));
  hetc_json_text_t sql = {0};
  hetc_json_text_raw(&sql, "SELECT " RECORD_COLUMNS " FROM records WHERE TRUE");
  append_filter(&sql, filter);
  hetc_json_text_raw(&sql, " ORDER BY timestamp, id LIMIT ?");
  char *text = hetc_json_text_take(&sql);
  if (!text) return out_of_memory("querying");
  int64_t limit = filter && filter->limit > 0 ? filter->limit : INT64_MAX;
  hetc_status_t status = run_list_query(store, text, filter, 1, limit, out_list);
  free(text);
  return status;
}

void hetc_record_list_free(hetc_record_list_t *list) {
  if (!list) return;
  for (int32_t i = 0; i < list->count; ++i) hetc_record_clear(&list->items[i]);
  free(list->items);
  list->items = NULL;
  list->count = 0;
}

/* Hands the first item of a one-row list to *out_record. */
static void take_first(hetc_record_list_t *list, hetc_record_t *out_record, int *out_found) {
  *out_found = list->count > 0;
  if (*out_found) {
    *out_record = list->items[0];
    memset(&list->items[0], 0, sizeof(list->items[0]));
  }
  hetc_record_list_free(list);
}

#define BEST_ORDER " ORDER BY median_cost, timestamp, id"
#define OK_WITH_COSTS " AND error = 0 AND median_cost IS NOT NULL"

hetc_status_t hetc_records_best(hetc_records_t *store, const hetc_record_filter_t *filter,
                                hetc_record_t *out_record, int *out_found) {
  *out_found = 0;
  HETC_RETURN_IF_ERROR(check_filter(filter));
  hetc_json_text_t sql = {0};
  hetc_json_text_raw(&sql, "SELECT " RECORD_COLUMNS " FROM records WHERE TRUE" OK_WITH_COSTS);
  append_filter(&sql, filter);
  hetc_json_text_raw(&sql, BEST_ORDER " LIMIT 1");
  char *text = hetc_json_text_take(&sql);
  if (!text) return out_of_memory("querying");
  hetc_record_list_t list;
  hetc_status_t status = run_list_query(store, text, filter, 0, 0, &list);
  free(text);
  if (!status) take_first(&list, out_record, out_found);
  return status;
}

hetc_status_t hetc_records_best_each(hetc_records_t *store, const hetc_record_filter_t *filter,
                                     hetc_record_list_t *out_list) {
  out_list->count = 0;
  out_list->items = NULL;
  hetc_json_text_t sql = {0};
  hetc_json_text_raw(&sql,
                     "SELECT " RECORD_COLUMNS " FROM (SELECT *, ROW_NUMBER() OVER (PARTITION BY"
                     " target, device_fingerprint, workload_key" BEST_ORDER
                     ") AS rank FROM records WHERE TRUE" OK_WITH_COSTS);
  append_filter(&sql, filter);
  hetc_json_text_raw(&sql, ") AS ranked WHERE rank = 1 ORDER BY target, device_fingerprint, workload_key");
  char *text = hetc_json_text_take(&sql);
  if (!text) return out_of_memory("querying");
  hetc_status_t status = run_list_query(store, text, filter, 0, 0, out_list);
  free(text);
  return status;
}

hetc_status_t hetc_records_best_configs(hetc_records_t *store, const hetc_record_filter_t *filter, int64_t count,
                                       hetc_record_list_t *out_list) {
  out_list->count = 0;
  out_list->items = NULL;
  HETC_RETURN_IF_ERROR(check_filter(filter));
  hetc_json_text_t sql = {0};
  hetc_json_text_raw(&sql,
                     "SELECT " RECORD_COLUMNS " FROM (SELECT *, ROW_NUMBER() OVER (PARTITION BY"
                     " config_json" BEST_ORDER ") AS rank FROM records WHERE TRUE" OK_WITH_COSTS);
  append_filter(&sql, filter);
  hetc_json_text_raw(&sql, ") AS ranked WHERE rank = 1" BEST_ORDER " LIMIT ?");
  char *text = hetc_json_text_take(&sql);
  if (!text) return out_of_memory("querying");
  hetc_status_t status = run_list_query(store, text, filter, 1, count, out_list);
  free(text);
  return status;
}

hetc_status_t hetc_records_find(hetc_records_t *store, const hetc_record_t *identity, hetc_record_t *out_record,
                               int *out_found) {
  *out_found = 0;
  char *config = NULL;
  HETC_RETURN_IF_ERROR(hetc_record_config_canonical(identity->config_json, &config));
  hetc_sql_stmt_t *stmt = NULL;
  hetc_status_t status = prepare(store, "SELECT " RECORD_COLUMNS " FROM records" KEY_WHERE, &stmt);
  hetc_record_list_t list = {0, NULL};
  if (!status) {
    int rc = bind_key(stmt, identity, config);
    status = rc == SQLITE_OK ? collect_rows(store, stmt, &list) : sqlite_failure(store, rc, "binding");
  }
  hetc_sql_finalize(stmt);
  free(config);
  if (status) {
    hetc_record_list_free(&list);
    return status;
  }
  take_first(&list, out_record, out_found);
  return NULL;
}

hetc_status_t hetc_records_count(hetc_records_t *store, int64_t *out_count) {
  *out_count = 0;
  int rc = read_integer(&store->db, "SELECT count(*) FROM records", out_count);
  return rc == SQLITE_OK ? NULL : sqlite_failure(store, rc, "counting records");
}

/* ------------------------------------------------------------------------ */
/* Lookup                                                                   */
/* ------------------------------------------------------------------------ */

#define MAX_KEY_FIELDS 32

/* A workload key split into what must match and what is measured. */
typedef struct parsed_key_t {
  char text[512];                       /* the key, tokens NUL-separated */
  const char *op;
  const char *fixed[MAX_KEY_FIELDS];    /* tokens that must be equal, in order */
  int32_t num_fixed;
  const char *shape_names[MAX_KEY_FIELDS]; /* prefix of each shape field ("n", "units") */
  size_t shape_name_lengths[MAX_KEY_FIELDS];
  double shape[MAX_KEY_FIELDS];
  int32_t num_shape;
} parsed_key_t;

/* The shape fields of each op's key (driver/graph/tasks.c) and, for
 * conv2d, the padding prefix, which is left out of the comparison. */
static int is_shape_field(const char *op, const char *name, size_t length) {
  static const char *const conv2d[] = {"n", "c", "h", "w", "k", NULL};
  static const char *const dense[] = {"n", "k", "units", NULL};
  const char *const *names = !strcmp(op, "conv2d") ? conv2d : !strcmp(op, "dense") ? dense : NULL;
  for (int i = 0; names && names[i]; ++i) {
    if (strlen(names[i]) == length && !strncmp(names[i], name, length)) return 1;
  }
  return 0;
}

static int is_ignored_field(const char *op, const char *token) {
  return !strcmp(op, "conv2d") && token[0] == 'p' && token[1] >= '0' && token[1] <= '9';
}

static int parse_key(const char *key, parsed_key_t *out) {
  memset(out, 0, sizeof(*out));
  if (strlen(key) >= sizeof(out->text)) return 0;
  strcpy(out->text, key);
  char *save = NULL;
  for (char *token = strtok_r(out->text, " ", &save); token; token = strtok_r(NULL, " ", &save)) {
    if (!out->op) {
      out->op = token;
      continue;
    }
    size_t prefix = 0;
    while (token[prefix] >= 'a' && token[prefix] <= 'z') ++prefix;
    const char *digits = token + prefix;
    int numeric = prefix > 0 && digits[0] != '\0' && strspn(digits, "0123456789") == strlen(digits);
    if (numeric && is_shape_field(out->op, token, prefix)) {
      if (out->num_shape == MAX_KEY_FIELDS) return 0;
      double value = strtod(digits, NULL);
      if (!(value > 0)) return 0; /* no log distance for empty dimensions */
      out->shape_names[out->num_shape] = token;
      out->shape_name_lengths[out->num_shape] = prefix;
      out->shape[out->num_shape++] = value;
    } else if (!is_ignored_field(out->op, token)) {
      if (out->num_fixed == MAX_KEY_FIELDS) return 0;
      out->fixed[out->num_fixed++] = token;
    }
  }
  return out->op != NULL;
}

double hetc_workload_key_distance(const char *key_a, const char *key_b) {
  if (!strcmp(key_a, key_b)) return 0;
  /* Two keys are large; keep them off the caller's stack. */
  parsed_key_t *a = malloc(2 * sizeof(parsed_key_t));
  if (!a) return -1;
  parsed_key_t *b = a + 1;
  double distance = -1;
  if (!parse_key(key_a, a) || !parse_key(key_b, b) || strcmp(a->op, b->op) != 0 ||
      !is_shape_field(a->op, "n", 1) || a->num_fixed != b->num_fixed ||
      a->num_shape != b->num_shape) {
    goto done;
  }
  for (int32_t f = 0; f < a->num_fixed; ++f) {
    if (strcmp(a->fixed[f], b->fixed[f]) != 0) goto done;
  }
  distance = 0;
  for (int32_t s = 0; s < a->num_shape; ++s) {
    if (a->shape_name_lengths[s] != b->shape_name_lengths[s] ||
        strncmp(a->shape_names[s], b->shape_names[s], a->shape_name_lengths[s]) != 0) {
      distance = -1;
      goto done;
    }
    distance += fabs(log(a->shape[s]) - log(b->shape[s]));
  }
done:
  free(a);
  return distance;
}

/* " AND ((template_name = ? AND template_version = ?) OR ...)". */
static void append_templates(hetc_json_text_t *sql, int32_t num_templates) {
  hetc_json_text_raw(sql, " AND (");
  for (int32_t t = 0; t < num_templates; ++t) {
    hetc_json_text_raw(sql, t ? " OR (template_name = ? AND template_version = ?)"
                              : "(template_name = ? AND template_version = ?)");
  }
  hetc_json_text_raw(sql, ")");
}

static int bind_templates(hetc_sql_stmt_t *stmt, const hetc_template_id_t *templates,
                          int32_t num_templates, int *index) {
  int rc = SQLITE_OK;
  for (int32_t t = 0; rc == SQLITE_OK && t < num_templates; ++t) {
    rc = hetc_sql_bind_text(stmt, (*index)++, templates[t].name);
    if (rc == SQLITE_OK) rc = hetc_sql_bind_int64(stmt, (*index)++, templates[t].version);
  }
  return rc;
}

/* Both template lookups filter on the same template list: this prepares
 * `head` (ending in its WHERE terms), the templates' terms, then `tail`, and
 * binds `texts` (head's parameters, in order) and the templates. On failure
 * *out_stmt is NULL and nothing is left to finalize. */
static hetc_status_t prepare_for_templates(hetc_records_t *store, const char *head,
                                           const char *tail, const char *const *texts,
                                           size_t num_texts, const hetc_template_id_t *templates,
                                           int32_t num_templates, hetc_sql_stmt_t **out_stmt) {
  *out_stmt = NULL;
  hetc_json_text_t sql = {0};
  hetc_json_text_raw(&sql, head);
  append_templates(&sql, num_templates);
  hetc_json_text_raw(&sql, tail);
  char *text = hetc_json_text_take(&sql);
  if (!text) return out_of_memory("looking up records");
  hetc_sql_stmt_t *stmt = NULL;
  hetc_status_t status = prepare(store, text, &stmt);
  free(text);
  if (status) return status;
  int index = 1;
  int rc = SQLITE_OK;
  for (size_t i = 0; rc == SQLITE_OK && i < num_texts; ++i)
    rc = hetc_sql_bind_text(stmt, index++, texts[i]);
  if (rc == SQLITE_OK) rc = bind_templates(stmt, templates, num_templates, &index);
  if (rc != SQLITE_OK) {
    status = sqlite_failure(store, rc, "binding");
    hetc_sql_finalize(stmt);
    return status;
  }
  *out_stmt = stmt;
  return NULL;
}

/* The best ok record of (target, fingerprint, workload) among the templates. */
static hetc_status_t best_for_templates(hetc_records_t *store, const char *target,
                                        const char *fingerprint, const char *workload_key,
                                        const hetc_template_id_t *templates,
                                        int32_t num_templates, hetc_record_t *out_record,
                                        int *out_found) {
  *out_found = 0;
  const char *const texts[] = {fingerprint, workload_key, target};
  hetc_sql_stmt_t *stmt = NULL;
  HETC_RETURN_IF_ERROR(prepare_for_templates(
      store,
      "SELECT " RECORD_COLUMNS " FROM records WHERE device_fingerprint = ?"
      " AND workload_key = ? AND target = ?" OK_WITH_COSTS,
      BEST_ORDER " LIMIT 1", texts, sizeof(texts) / sizeof(texts[0]), templates, num_templates,
      &stmt));
  hetc_record_list_t list = {0, NULL};
  hetc_status_t status = collect_rows(store, stmt, &list);
  hetc_sql_finalize(stmt);
  if (status) {
    hetc_record_list_free(&list);
    return status;
  }
  take_first(&list, out_record, out_found);
  return NULL;
}

/* The nearest tuned (workload, fingerprint) on the device kind; *out_found
 * is 0 when no comparable workload was tuned. The strings are the caller's
 * (free). */
static hetc_status_t nearest_workload(hetc_records_t *store, const char *target,
                                      const char *fingerprint, const char *device_kind,
                                      const char *workload_key,
                                      const hetc_template_id_t *templates, int32_t num_templates,
                                      char **out_workload, char **out_fingerprint,
                                      int *out_found) {
  *out_found = 0;
  *out_workload = *out_fingerprint = NULL;
  const char *const texts[] = {device_kind, target};
  hetc_sql_stmt_t *stmt = NULL;
  HETC_RETURN_IF_ERROR(prepare_for_templates(
      store,
      "SELECT workload_key, device_fingerprint, MIN(median_cost)"
      " FROM records WHERE device_kind = ? AND target = ?" OK_WITH_COSTS,
      " GROUP BY workload_key, device_fingerprint", texts, sizeof(texts) / sizeof(texts[0]),
      templates, num_templates, &stmt));
  hetc_status_t status = NULL;
  int rc = SQLITE_OK;
  /* Rank: distance, then this device before others, then cost. */
  double best_distance = 0, best_cost = 0;
  int best_other_device = 0;
  while (rc == SQLITE_OK) {
    rc = hetc_sql_step(stmt);
    if (rc != SQLITE_ROW) break;
    rc = SQLITE_OK;
    const char *key = (const char *)hetc_sql_column_text(stmt, 0);
    const char *device = (const char *)hetc_sql_column_text(stmt, 1);
    if (!key || !device) {
      rc = SQLITE_NOMEM;
      break;
    }
    double distance = hetc_workload_key_distance(workload_key, key);
    if (distance < 0) continue;
    int other_device = strcmp(device, fingerprint) != 0;
    double cost = hetc_sql_column_double(stmt, 2);
    int better = !*out_found || distance < best_distance ||
                 (distance == best_distance && other_device < best_other_device) ||
                 (distance == best_distance && other_device == best_other_device &&
                  cost < best_cost);
    if (!better) continue;
    free(*out_workload);
    free(*out_fingerprint);
    *out_workload = join3(key, "", "");
    *out_fingerprint = join3(device, "", "");
    if (!*out_workload || !*out_fingerprint) {
      rc = SQLITE_NOMEM;
      break;
    }
    *out_found = 1;
    best_distance = distance;
    best_other_device = other_device;
    best_cost = cost;
  }
  if (rc != SQLITE_DONE) {
    status = rc == SQLITE_NOMEM ? out_of_memory("looking up records")
                                : sqlite_failure(store, rc, "looking up records");
    free(*out_workload);
    free(*out_fingerprint);
    *out_workload = *out_fingerprint = NULL;
    *out_found = 0;
  }
  hetc_sql_finalize(stmt);
  return status;
}

hetc_status_t hetc_records_lookup(hetc_records_t *store, const char *target,
                                  const char *device_fingerprint, const char *device_kind,
                                  const char *workload_key, const hetc_template_id_t *templates,
                                  int32_t num_templates, hetc_record_t *out_record,
                                  hetc_lookup_kind_t *out_kind) {
  *out_kind = HETC_LOOKUP_NONE;
  if (!target || !device_fingerprint || !device_kind || !workload_key || num_templates < 0 ||
      (num_templates > 0 && !templates)) {
    return hetc_status_new(HETC_STATUS_INVALID_ARGUMENT,
                           "records lookup: target, device, workload and templates are required");
  }
  for (int32_t t = 0; t < num_templates; ++t) {
    if (!templates[t].name) {
      return hetc_status_new(HETC_STATUS_INVALID_ARGUMENT, "records lookup: template %d has no name",
                             t);
    }
  }
  if (num_templates == 0) return NULL; /* no template is valid: nothing applies */
  int found = 0;
  HETC_RETURN_IF_ERROR(best_for_templates(store, target, device_fingerprint, workload_key,
                                          templates, num_templates, out_record, &found));
  if (found) {
    *out_kind = HETC_LOOKUP_EXACT;
    return NULL;
  }
  char *near_workload = NULL, *near_device = NULL;
  HETC_RETURN_IF_ERROR(nearest_workload(store, target, device_fingerprint, device_kind,
                                        workload_key, templates, num_templates, &near_workload,
                                        &near_device, &found));
  hetc_status_t status = NULL;
  if (found) {
    status = best_for_templates(store, target, near_device, near_workload, templates,
                                num_templates, out_record, &found);
    if (!status && found) *out_kind = HETC_LOOKUP_NEAREST;
  }
  free(near_workload);
  free(near_device);
  return status;
}

/* ------------------------------------------------------------------------ */
/* Pruning                                                                  */
/* ------------------------------------------------------------------------ */

/* Failed records first: "current" is judged over everything stored, before
 * any ok record of a newer version is pruned away. */
static const char prune_failed_sql[] =
    "DELETE FROM records WHERE error != 0 AND template_version <"
    " (SELECT MAX(newer.template_version) FROM records AS newer"
    "  WHERE newer.target = records.target AND newer.template_name = records.template_name)";
static const char prune_ok_sql[] =
    "DELETE FROM records WHERE id IN (SELECT id FROM (SELECT id, ROW_NUMBER() OVER ("
    " PARTITION BY target, device_fingerprint, workload_key, template_name, template_version"
    " ORDER BY median_cost IS NULL, median_cost, timestamp, id) AS rank"
    " FROM records WHERE error = 0) AS ranked WHERE rank > ?)";

hetc_status_t hetc_records_prune(hetc_records_t *store, int64_t keep, int64_t *out_removed) {
  if (out_removed) *out_removed = 0;
  if (keep < 0) {
    return hetc_status_new(HETC_STATUS_INVALID_ARGUMENT, "records prune: keep %lld < 0",
                           (long long)keep);
  }
  HETC_RETURN_IF_ERROR(require_writable(store, "pruning"));
  HETC_RETURN_IF_ERROR(begin_write(store));
  int64_t removed = 0;
  hetc_status_t status = exec(store, prune_failed_sql, "pruning failed records");
  if (!status) removed += hetc_sql_changes(&store->db);
  hetc_sql_stmt_t *stmt = NULL;
  if (!status) status = prepare(store, prune_ok_sql, &stmt);
  if (!status) {
    int rc = hetc_sql_bind_int64(stmt, 1, keep);
    if (rc == SQLITE_OK) rc = hetc_sql_step(stmt);
    if (rc != SQLITE_DONE) status = sqlite_failure(store, rc, "pruning ok records");
    else removed += hetc_sql_changes(&store->db);
  }
  hetc_sql_finalize(stmt);
  status = end_write(store, status);
  if (!status && out_removed) *out_removed = removed;
  return status;
}

/* ------------------------------------------------------------------------ */
/* Transfers                                                                */
/* ------------------------------------------------------------------------ */

static const char *direction_name(hetc_transfer_direction_t direction) {
  return direction == HETC_TRANSFER_TO_HOST ? "to_host" : "to_device";
}

hetc_status_t hetc_records_put_transfer(hetc_records_t *store, const char *device_fingerprint,
                                        hetc_transfer_direction_t direction, const hetc_transfer_cost_t *cost) {
  if (!(cost->latency_seconds >= 0) || !(cost->seconds_per_byte >= 0) || isinf(cost->latency_seconds) ||
      isinf(cost->seconds_per_byte))
    return hetc_status_new(HETC_STATUS_INVALID_ARGUMENT, "records store: transfer cost %g s + %g s/byte",
                           cost->latency_seconds, cost->seconds_per_byte);
  if (!store->writable) return NULL; /* a cache: kept where the store can be written */
  HETC_RETURN_IF_ERROR(begin_write(store));
  hetc_sql_stmt_t *stmt = NULL;
  hetc_status_t status = prepare(store,
                                 "INSERT INTO transfers (device_fingerprint, direction, latency_seconds,"
                                 " seconds_per_byte, timestamp, hetc_version) VALUES (?1, ?2, ?3, ?4, ?5, ?6)"
                                 " ON CONFLICT (device_fingerprint, direction) DO UPDATE SET"
                                 " latency_seconds = excluded.latency_seconds,"
                                 " seconds_per_byte = excluded.seconds_per_byte, timestamp = excluded.timestamp,"
                                 " hetc_version = excluded.hetc_version",
                                 &stmt);
  if (!status) {
    hetc_sql_bind_text(stmt, 1, device_fingerprint);
    hetc_sql_bind_text(stmt, 2, direction_name(direction));
    hetc_sql_bind_double(stmt, 3, cost->latency_seconds);
    hetc_sql_bind_double(stmt, 4, cost->seconds_per_byte);
    hetc_sql_bind_int64(stmt, 5, (int64_t)time(NULL));
    hetc_sql_bind_text(stmt, 6, HETC_VERSION_STRING);
    int rc = hetc_sql_step(stmt);
    if (rc != SQLITE_DONE) status = sqlite_failure(store, rc, "storing a transfer cost");
  }
  hetc_sql_finalize(stmt);
  return end_write(store, status);
}

hetc_status_t hetc_records_get_transfer(hetc_records_t *store, const char *device_fingerprint,
                                        hetc_transfer_direction_t direction, hetc_transfer_cost_t *out_cost,
                                        int *out_found) {
  *out_found = 0;
  if (store->version < 2) return NULL; /* a store read as it is: no table yet */
  hetc_sql_stmt_t *stmt = NULL;
  HETC_RETURN_IF_ERROR(prepare(store,
                               "SELECT latency_seconds, seconds_per_byte FROM transfers"
                               " WHERE device_fingerprint = ?1 AND direction = ?2",
                               &stmt));
  hetc_sql_bind_text(stmt, 1, device_fingerprint);
  hetc_sql_bind_text(stmt, 2, direction_name(direction));
  hetc_status_t status = NULL;
  int rc = hetc_sql_step(stmt);
  if (rc == SQLITE_ROW) {
    out_cost->latency_seconds = hetc_sql_column_double(stmt, 0);
    out_cost->seconds_per_byte = hetc_sql_column_double(stmt, 1);
    *out_found = 1;
  } else if (rc != SQLITE_DONE) {
    status = sqlite_failure(store, rc, "reading a transfer cost");
  }
  hetc_sql_finalize(stmt);
  return status;
}

/* ------------------------------------------------------------------------ */
/* Peaks                                                                    */
/* ------------------------------------------------------------------------ */

static hetc_status_t read_peak(hetc_records_t *store, const char *device_fingerprint, hetc_kept_peak_t *out_peak,
                               int *out_found) {
  *out_found = 0;
  if (store->version < 3) return NULL; /* a store read as it is: no table yet */
  hetc_sql_stmt_t *stmt = NULL;
  HETC_RETURN_IF_ERROR(prepare(store,
                               "SELECT peak_gflops, runs, timestamp FROM peaks WHERE device_fingerprint = ?1",
                               &stmt));
  hetc_sql_bind_text(stmt, 1, device_fingerprint);
  hetc_status_t status = NULL;
  int rc = hetc_sql_step(stmt);
  if (rc == SQLITE_ROW) {
    out_peak->gflops = hetc_sql_column_double(stmt, 0);
    out_peak->runs = hetc_sql_column_int64(stmt, 1);
    out_peak->timestamp = hetc_sql_column_int64(stmt, 2);
    *out_found = 1;
  } else if (rc != SQLITE_DONE) {
    status = sqlite_failure(store, rc, "reading a device peak");
  }
  hetc_sql_finalize(stmt);
  return status;
}

/* One statement folds the measurement in: every expression of an upsert's
 * UPDATE reads the row as it was, so the best, its time and the hetc that
 * measured it change together, only when the new figure is higher. */
static const char note_peak_sql[] =
    "INSERT INTO peaks (device_fingerprint, target, peak_gflops, runs, timestamp, hetc_version)"
    " VALUES (?1, ?2, ?3, 1, ?4, ?5)"
    " ON CONFLICT (device_fingerprint) DO UPDATE SET"
    " target = excluded.target,"
    " runs = peaks.runs + 1,"
    " timestamp = CASE WHEN excluded.peak_gflops > peaks.peak_gflops THEN excluded.timestamp ELSE peaks.timestamp END,"
    " hetc_version = CASE WHEN excluded.peak_gflops > peaks.peak_gflops THEN excluded.hetc_version"
    " ELSE peaks.hetc_version END,"
    " peak_gflops = CASE WHEN excluded.peak_gflops > peaks.peak_gflops THEN excluded.peak_gflops"
    " ELSE peaks.peak_gflops END";

hetc_status_t hetc_records_note_peak(hetc_records_t *store, const char *device_fingerprint, const char *target,
                                     double gflops, hetc_kept_peak_t *out_peak) {
  if (!device_fingerprint || !device_fingerprint[0])
    return hetc_status_new(HETC_STATUS_INVALID_ARGUMENT, "records store: a peak needs a device fingerprint");
  if (!(gflops > 0) || isinf(gflops))
    return hetc_status_new(HETC_STATUS_INVALID_ARGUMENT, "records store: peak %g GFLOPS of %s (expected a finite "
                           "number > 0)", gflops, device_fingerprint);
  if (!store->writable) {
    /* A store opened for reading keeps nothing: what it would hold. */
    hetc_kept_peak_t kept = {0, 0, 0};
    int found = 0;
    HETC_RETURN_IF_ERROR(read_peak(store, device_fingerprint, &kept, &found));
    if (out_peak) {
      *out_peak = found ? kept : (hetc_kept_peak_t){gflops, 0, (int64_t)time(NULL)};
      out_peak->runs += 1;
      if (gflops > out_peak->gflops) {
        out_peak->gflops = gflops;
        out_peak->timestamp = (int64_t)time(NULL);
      }
    }
    return NULL;
  }
  HETC_RETURN_IF_ERROR(begin_write(store));
  hetc_sql_stmt_t *stmt = NULL;
  hetc_status_t status = prepare(store, note_peak_sql, &stmt);
  if (!status) {
    hetc_sql_bind_text(stmt, 1, device_fingerprint);
    hetc_sql_bind_text(stmt, 2, target ? target : "");
    hetc_sql_bind_double(stmt, 3, gflops);
    hetc_sql_bind_int64(stmt, 4, (int64_t)time(NULL));
    hetc_sql_bind_text(stmt, 5, HETC_VERSION_STRING);
    int rc = hetc_sql_step(stmt);
    if (rc != SQLITE_DONE) status = sqlite_failure(store, rc, "keeping a device peak");
  }
  hetc_sql_finalize(stmt);
  hetc_kept_peak_t kept = {0, 0, 0};
  int found = 0;
  if (!status) status = read_peak(store, device_fingerprint, &kept, &found);
  status = end_write(store, status);
  if (!status && out_peak) *out_peak = kept;
  return status;
}

hetc_status_t hetc_records_get_peak(hetc_records_t *store, const char *device_fingerprint,
                                    hetc_kept_peak_t *out_peak, int *out_found) {
  hetc_kept_peak_t kept = {0, 0, 0};
  hetc_status_t status = read_peak(store, device_fingerprint ? device_fingerprint : "", &kept, out_found);
  if (!status && *out_found) *out_peak = kept;
  return status;
}

/* ------------------------------------------------------------------------ */
/* Selections                                                               */
/* ------------------------------------------------------------------------ */

void hetc_selection_free(hetc_selection_t *selection) {
  for (int32_t i = 0; selection && i < selection->count; ++i) {
    free(selection->entries[i].node);
    free(selection->entries[i].template_name);
    free(selection->entries[i].config_json);
    free(selection->entries[i].source);
  }
  if (selection) {
    free(selection->entries);
    memset(selection, 0, sizeof(*selection));
  }
}

static hetc_status_t put_selection_once(hetc_records_t *store, const char *model_key, const char *targets,
                                        const hetc_selection_t *selection) {
  if (!store->writable) return NULL; /* a cache: kept where the store can be written */
  HETC_RETURN_IF_ERROR(begin_write(store));
  hetc_sql_stmt_t *stmt = NULL;
  hetc_status_t status = prepare(store, "DELETE FROM selections WHERE model_key = ?1 AND targets = ?2", &stmt);
  if (!status) {
    hetc_sql_bind_text(stmt, 1, model_key);
    hetc_sql_bind_text(stmt, 2, targets);
    if (hetc_sql_step(stmt) != SQLITE_DONE) status = sqlite_failure(store, SQLITE_ERROR, "replacing a selection");
  }
  hetc_sql_finalize(stmt);
  stmt = NULL;
  if (!status)
    status = prepare(store,
                     "INSERT INTO selections (model_key, targets, node, device, template_name, template_version,"
                     " config_json, source, predicted_seconds, records, timestamp, hetc_version)"
                     " VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12)",
                     &stmt);
  for (int32_t i = 0; !status && i < selection->count; ++i) {
    const hetc_selection_entry_t *e = &selection->entries[i];
    hetc_sql_reset(stmt);
    hetc_sql_bind_text(stmt, 1, model_key);
    hetc_sql_bind_text(stmt, 2, targets);
    hetc_sql_bind_text(stmt, 3, e->node);
    hetc_sql_bind_int64(stmt, 4, e->device);
    hetc_sql_bind_text(stmt, 5, e->template_name);
    hetc_sql_bind_int64(stmt, 6, e->template_version);
    if (e->config_json) hetc_sql_bind_text(stmt, 7, e->config_json);
    else hetc_sql_bind_null(stmt, 7);
    hetc_sql_bind_text(stmt, 8, e->source);
    hetc_sql_bind_double(stmt, 9, selection->predicted_seconds);
    hetc_sql_bind_int64(stmt, 10, selection->records);
    hetc_sql_bind_int64(stmt, 11, (int64_t)time(NULL));
    hetc_sql_bind_text(stmt, 12, HETC_VERSION_STRING);
    int rc = hetc_sql_step(stmt);
    if (rc != SQLITE_DONE) status = sqlite_failure(store, rc, "storing a selection");
  }
  hetc_sql_finalize(stmt);
  return end_write(store, status);
}

hetc_status_t hetc_records_put_selection(hetc_records_t *store, const char *model_key, const char *targets,
                                         const hetc_selection_t *selection) {
  WRITE_AGAIN_IF_LOST(store, put_selection_once(store, model_key, targets, selection));
}

static char *column_text_copy(hetc_sql_stmt_t *stmt, int column) {
  const unsigned char *text = hetc_sql_column_text(stmt, column);
  return text ? strdup((const char *)text) : NULL;
}

hetc_status_t hetc_records_get_selection(hetc_records_t *store, const char *model_key, const char *targets,
                                         hetc_selection_t *out_selection) {
  memset(out_selection, 0, sizeof(*out_selection));
  if (store->version < 4) return NULL; /* a store read as it is: no table yet */
  hetc_sql_stmt_t *stmt = NULL;
  HETC_RETURN_IF_ERROR(prepare(store,
                               "SELECT node, device, template_name, template_version, config_json, source,"
                               " predicted_seconds, records FROM selections WHERE model_key = ?1 AND targets = ?2"
                               " ORDER BY rowid",
                               &stmt));
  hetc_sql_bind_text(stmt, 1, model_key);
  hetc_sql_bind_text(stmt, 2, targets);
  hetc_status_t status = NULL;
  int rc;
  int32_t capacity = 0;
  while (!status && (rc = hetc_sql_step(stmt)) == SQLITE_ROW) {
    if (out_selection->count == capacity) {
      capacity = capacity ? 2 * capacity : 64;
      hetc_selection_entry_t *grown =
          realloc(out_selection->entries, sizeof(hetc_selection_entry_t) * (size_t)capacity);
      if (!grown) {
        status = out_of_memory("reading a selection");
        break;
      }
      out_selection->entries = grown;
    }
    hetc_selection_entry_t *e = &out_selection->entries[out_selection->count++];
    memset(e, 0, sizeof(*e));
    e->node = column_text_copy(stmt, 0);
    e->device = (int)hetc_sql_column_int64(stmt, 1);
    e->template_name = column_text_copy(stmt, 2);
    e->template_version = (uint32_t)hetc_sql_column_int64(stmt, 3);
    e->config_json = column_text_copy(stmt, 4);
    e->source = column_text_copy(stmt, 5);
    out_selection->predicted_seconds = hetc_sql_column_double(stmt, 6);
    out_selection->records = hetc_sql_column_int64(stmt, 7);
    if (!e->node || !e->template_name || !e->source) status = out_of_memory("reading a selection");
  }
  if (!status && rc != SQLITE_DONE) status = sqlite_failure(store, rc, "reading a selection");
  hetc_sql_finalize(stmt);
  if (status) hetc_selection_free(out_selection);
  return status;
}

/* ------------------------------------------------------------------------ */
/* The cost model                                                           */
/* ------------------------------------------------------------------------ */

/* A model larger than this is not one hetc wrote. */
#define MAX_MODEL_BYTES (512u << 20)

const char *hetc_records_model_name(const hetc_records_t *store) { return store->model_name; }

static hetc_status_t put_model_once(hetc_records_t *store, const char *bytes, size_t length) {
  if (!store->writable) return NULL; /* kept only where the store can be written */
  if (!hetc_sql_is_pg(&store->db)) return hetc_file_replace(store->model_name, bytes, length);
  if (memchr(bytes, '\0', length))
    return hetc_status_new(HETC_STATUS_INVALID_ARGUMENT, "%s: a model with a NUL byte", store->model_name);
  HETC_RETURN_IF_ERROR(begin_write(store));
  hetc_sql_stmt_t *stmt = NULL;
  hetc_status_t status = prepare(store,
                                 "INSERT INTO cost_models (name, model, timestamp, hetc_version)"
                                 " VALUES ('global', ?1, ?2, ?3) ON CONFLICT (name) DO UPDATE SET"
                                 " model = excluded.model, timestamp = excluded.timestamp,"
                                 " hetc_version = excluded.hetc_version",
                                 &stmt);
  if (!status) {
    char *text = strndup(bytes, length);
    int rc = text ? hetc_sql_bind_text(stmt, 1, text) : SQLITE_NOMEM;
    if (rc == SQLITE_OK) rc = hetc_sql_bind_int64(stmt, 2, (int64_t)time(NULL));
    if (rc == SQLITE_OK) rc = hetc_sql_bind_text(stmt, 3, HETC_VERSION_STRING);
    status = step_done(store, stmt, rc, "storing the cost model");
    free(text);
  }
  hetc_sql_finalize(stmt);
  return end_write(store, status);
}

hetc_status_t hetc_records_get_model(hetc_records_t *store, char **out_bytes, size_t *out_length, int *out_found) {
  *out_bytes = NULL;
  *out_length = 0;
  *out_found = 0;
  if (!hetc_sql_is_pg(&store->db)) {
    if (access(store->model_name, F_OK) != 0) return NULL;
    HETC_RETURN_IF_ERROR(hetc_file_read_all(store->model_name, MAX_MODEL_BYTES, out_bytes, out_length));
    *out_found = 1;
    return NULL;
  }
  hetc_sql_stmt_t *stmt = NULL;
  HETC_RETURN_IF_ERROR(prepare(store, "SELECT model FROM cost_models WHERE name = 'global'", &stmt));
  int rc = hetc_sql_step(stmt);
  hetc_status_t status = NULL;
  if (rc == SQLITE_ROW) {
    const char *text = (const char *)hetc_sql_column_text(stmt, 0);
    *out_length = (size_t)hetc_sql_column_bytes(stmt, 0);
    *out_bytes = text ? strndup(text, *out_length) : NULL;
    if (!*out_bytes) status = out_of_memory("reading the cost model");
    *out_found = !status;
  } else if (rc != SQLITE_DONE) {
    status = sqlite_failure(store, rc, "reading the cost model");
  }
  hetc_sql_finalize(stmt);
  return status;
}

hetc_status_t hetc_records_put_model(hetc_records_t *store, const char *bytes, size_t length) {
  WRITE_AGAIN_IF_LOST(store, put_model_once(store, bytes, length));
}

/* ------------------------------------------------------------------------ */
/* Measurement holds                                                        */
/* ------------------------------------------------------------------------ */

/* A log beside the records that no query of theirs reads, made by the
 * first writer that needs it: a store of this schema without it is whole. */
static const char holds_sql[] =
    "CREATE TABLE IF NOT EXISTS measurements ("
    " lock TEXT NOT NULL,"
    " device TEXT NOT NULL,"
    " host TEXT NOT NULL,"
    " pid INTEGER NOT NULL,"
    " started_us INTEGER NOT NULL,"
    " ended_us INTEGER NOT NULL)";

static hetc_status_t note_holds_once(hetc_records_t *store, const hetc_measure_hold_t *holds, int32_t count) {
  HETC_RETURN_IF_ERROR(begin_write(store));
  hetc_status_t status = NULL;
  if (!store->holds_table) {
    char *create = hetc_sql_is_pg(&store->db) ? server_types(holds_sql) : strdup(holds_sql);
    status = create ? exec(store, create, "keeping measurement holds") : out_of_memory("keeping holds");
    free(create);
  }
  hetc_sql_stmt_t *stmt = NULL;
  if (!status)
    status = prepare(store,
                     "INSERT INTO measurements (lock, device, host, pid, started_us, ended_us)"
                     " VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
                     &stmt);
  for (int32_t i = 0; !status && i < count; ++i) {
    int rc = hetc_sql_bind_text(stmt, 1, holds[i].lock);
    if (rc == SQLITE_OK) rc = hetc_sql_bind_text(stmt, 2, holds[i].device);
    if (rc == SQLITE_OK) rc = hetc_sql_bind_text(stmt, 3, store->owner.host);
    if (rc == SQLITE_OK) rc = hetc_sql_bind_int64(stmt, 4, store->owner.pid);
    if (rc == SQLITE_OK) rc = hetc_sql_bind_int64(stmt, 5, holds[i].started_us);
    if (rc == SQLITE_OK) rc = hetc_sql_bind_int64(stmt, 6, holds[i].ended_us);
    status = step_done(store, stmt, rc, "keeping measurement holds");
  }
  hetc_sql_finalize(stmt);
  status = end_write(store, status);
  if (!status) store->holds_table = 1;
  return status;
}

hetc_status_t hetc_records_note_holds(hetc_records_t *store, const hetc_measure_hold_t *holds, int32_t count) {
  if (count <= 0 || !store->writable) return NULL;
  WRITE_AGAIN_IF_LOST(store, note_holds_once(store, holds, count));
}
