#include "tune/records.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include <cjson/cJSON.h>
#include <sqlite3.h>

#include "common/fileio.h"
#include "hetc/hetc.h"
#include "tune/json_text.h"

struct hetc_records_t {
  sqlite3 *db;
  char *path; /* owned */
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

/* Every SELECT that reads whole records lists these columns in this order
 * (read_record's indexes follow it). */
#define RECORD_COLUMNS                                                                  \
  "target, plugin_version, device_kind, device_fingerprint, template_name,"            \
  " template_version, workload_key, config_index, config_json, costs_json, error,"     \
  " error_message, build_seconds, total_seconds, timestamp, hetc_version, id"

/* Insert and duplicate check share the parameter numbers ?1..?17 (bind_record). */
static const char insert_sql[] =
    "INSERT INTO records (target, plugin_version, device_kind, device_fingerprint,"
    " template_name, template_version, workload_key, config_index, config_json, costs_json,"
    " median_cost, error, error_message, build_seconds, total_seconds, timestamp, hetc_version)"
    " VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17)";
static const char exists_sql[] =
    "SELECT 1 FROM records WHERE device_fingerprint = ?4 AND workload_key = ?7"
    " AND template_name = ?5 AND template_version = ?6 AND target = ?1"
    " AND plugin_version = ?2 AND device_kind = ?3 AND config_index = ?8"
    " AND config_json = ?9 AND costs_json = ?10 AND median_cost IS ?11 AND error = ?12"
    " AND error_message IS ?13 AND build_seconds = ?14 AND total_seconds = ?15"
    " AND timestamp = ?16 AND hetc_version = ?17 LIMIT 1";

/* ------------------------------------------------------------------------ */
/* Errors                                                                   */
/* ------------------------------------------------------------------------ */

static hetc_status_code_t code_for_sqlite(int rc) {
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

/* "PATH: DOING: sqlite's message". */
static hetc_status_t sqlite_failure(const hetc_records_t *store, int rc, const char *doing) {
  const char *message = store->db ? sqlite3_errmsg(store->db) : sqlite3_errstr(rc);
  return hetc_status_new(code_for_sqlite(rc), "%s: %s: %s", store->path, doing, message);
}

static hetc_status_t out_of_memory(const char *doing) {
  return hetc_status_new(HETC_STATUS_OUT_OF_MEMORY, "records store: %s", doing);
}

static hetc_status_t exec(hetc_records_t *store, const char *sql, const char *doing) {
  int rc = sqlite3_exec(store->db, sql, NULL, NULL, NULL);
  return rc == SQLITE_OK ? NULL : sqlite_failure(store, rc, doing);
}

static hetc_status_t prepare(hetc_records_t *store, const char *sql, sqlite3_stmt **out_stmt) {
  int rc = sqlite3_prepare_v2(store->db, sql, -1, out_stmt, NULL);
  return rc == SQLITE_OK ? NULL : sqlite_failure(store, rc, "preparing a query");
}

/* Write transactions take the write lock up front (IMMEDIATE), so that a
 * waiting writer goes through the busy timeout instead of failing at once
 * when its read lock cannot be upgraded. */
static hetc_status_t begin_write(hetc_records_t *store) {
  return exec(store, "BEGIN IMMEDIATE", "starting a write");
}

static hetc_status_t end_write(hetc_records_t *store, hetc_status_t status) {
  if (!status) return exec(store, "COMMIT", "committing");
  sqlite3_exec(store->db, "ROLLBACK", NULL, NULL, NULL);
  return status;
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

typedef struct identity_t {
  int64_t application_id;
  int64_t user_version;
  int64_t objects; /* tables and indexes in the file */
} identity_t;

static int read_integer(sqlite3 *db, const char *sql, int64_t *out_value) {
  sqlite3_stmt *stmt = NULL;
  int rc = sqlite3_prepare_v2(db, sql, -1, &stmt, NULL);
  if (rc == SQLITE_OK) {
    rc = sqlite3_step(stmt);
    if (rc == SQLITE_ROW) {
      *out_value = sqlite3_column_int64(stmt, 0);
      rc = SQLITE_OK;
    }
  }
  sqlite3_finalize(stmt);
  return rc;
}

static int read_identity(sqlite3 *db, identity_t *out) {
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
  int rc = read_identity(store->db, out_identity);
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
    /* Older versions (1 to 3) are upgraded on open. */
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

static hetc_status_t create_schema(hetc_records_t *store) {
  HETC_RETURN_IF_ERROR(begin_write(store));
  /* Another process may have created it between our check and our lock. */
  identity_t identity;
  hetc_status_t status = check_identity(store, &identity);
  if (!status && is_fresh(&identity)) {
    char pragmas[128];
    snprintf(pragmas, sizeof(pragmas), "PRAGMA application_id = %d; PRAGMA user_version = %d;",
             HETC_RECORDS_APPLICATION_ID, HETC_RECORDS_SCHEMA_VERSION);
    status = exec(store, schema_sql, "creating the schema");
    if (!status) status = exec(store, transfers_sql, "creating the schema");
    if (!status) status = exec(store, peaks_sql, "creating the schema");
    if (!status) status = exec(store, selections_sql, "creating the schema");
    if (!status) status = exec(store, pragmas, "creating the schema");
  }
  return end_write(store, status);
}

/* Version 1 to 2: the transfers table; 2 to 3: the peaks table; 3 to 4:
 * the selections table. Records
 * are untouched, so a store upgraded by a newer hetc is still readable by
 * this one, not by older. */
static hetc_status_t upgrade_schema(hetc_records_t *store) {
  HETC_RETURN_IF_ERROR(begin_write(store));
  identity_t identity;
  hetc_status_t status = check_identity(store, &identity);
  if (!status && identity.user_version < HETC_RECORDS_SCHEMA_VERSION) {
    char doing[64], pragma[64];
    snprintf(doing, sizeof(doing), "upgrading the schema to version %d", HETC_RECORDS_SCHEMA_VERSION);
    snprintf(pragma, sizeof(pragma), "PRAGMA user_version = %d;", HETC_RECORDS_SCHEMA_VERSION);
    if (identity.user_version < 2) status = exec(store, transfers_sql, doing);
    if (!status && identity.user_version < 3) status = exec(store, peaks_sql, doing);
    if (!status && identity.user_version < 4) status = exec(store, selections_sql, doing);
    if (!status) status = exec(store, pragma, doing);
  }
  return end_write(store, status);
}

hetc_status_t hetc_records_open(const char *path, hetc_records_t **out_store) {
  *out_store = NULL;
  hetc_records_t *store = calloc(1, sizeof(*store));
  if (!store) return out_of_memory("opening");
  hetc_status_t status = NULL;
  if (path) {
    store->path = join3(path, "", "");
    if (!store->path) status = out_of_memory("opening");
  } else {
    store->path = hetc_records_default_path();
    if (!store->path) {
      status = hetc_status_new(HETC_STATUS_NOT_FOUND,
                               "no records store: set HETC_RECORDS, XDG_DATA_HOME or HOME, or "
                               "name one with --records");
    } else {
      status = create_parent_directories(store->path);
    }
  }
  if (status) goto fail;

  int rc = sqlite3_open_v2(store->path, &store->db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE,
                           NULL);
  if (rc != SQLITE_OK) {
    status = hetc_status_new(HETC_STATUS_IO_ERROR, "%s: cannot open the records store: %s",
                             store->path, store->db ? sqlite3_errmsg(store->db) : sqlite3_errstr(rc));
    goto fail;
  }
  sqlite3_busy_timeout(store->db, HETC_RECORDS_BUSY_TIMEOUT_MS);
  identity_t identity;
  status = check_identity(store, &identity);
  if (status) goto fail;
  /* WAL lets readers go on while one process writes; NORMAL syncs at
   * checkpoints only, which in WAL mode can lose the last commits on power
   * loss but never corrupts the file, and a killed tuner loses nothing. */
  status = exec(store, "PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL;",
                "setting the journal mode");
  if (!status && is_fresh(&identity)) status = create_schema(store);
  if (!status && !is_fresh(&identity) && identity.user_version < HETC_RECORDS_SCHEMA_VERSION)
    status = upgrade_schema(store);
  if (status) goto fail;
  *out_store = store;
  return NULL;
fail:
  hetc_records_close(store);
  return status;
}

void hetc_records_close(hetc_records_t *store) {
  if (!store) return;
  sqlite3_close(store->db); /* every statement is finalized where it was made */
  free(store->path);
  free(store);
}

const char *hetc_records_path(const hetc_records_t *store) { return store->path; }

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

/* Binds ?1..?17 of insert_sql / exists_sql. The texts are the caller's and
 * must outlive the statement's next step (SQLITE_STATIC). */
static int bind_record(sqlite3_stmt *stmt, const hetc_record_t *r, const char *config,
                       const char *costs) {
  int rc = SQLITE_OK;
#define BIND(call)                        \
  do {                                    \
    if (rc == SQLITE_OK) rc = (call);     \
  } while (0)
  BIND(sqlite3_bind_text(stmt, 1, r->target, -1, SQLITE_STATIC));
  BIND(sqlite3_bind_text(stmt, 2, r->plugin_version, -1, SQLITE_STATIC));
  BIND(sqlite3_bind_text(stmt, 3, r->device_kind, -1, SQLITE_STATIC));
  BIND(sqlite3_bind_text(stmt, 4, r->device_fingerprint, -1, SQLITE_STATIC));
  BIND(sqlite3_bind_text(stmt, 5, r->template_name, -1, SQLITE_STATIC));
  BIND(sqlite3_bind_int64(stmt, 6, r->template_version));
  BIND(sqlite3_bind_text(stmt, 7, r->workload_key, -1, SQLITE_STATIC));
  BIND(sqlite3_bind_int64(stmt, 8, r->config_index));
  BIND(sqlite3_bind_text(stmt, 9, config, -1, SQLITE_STATIC));
  BIND(sqlite3_bind_text(stmt, 10, costs, -1, SQLITE_STATIC));
  double median = hetc_record_median_cost(r);
  BIND(isfinite(median) ? sqlite3_bind_double(stmt, 11, median) : sqlite3_bind_null(stmt, 11));
  BIND(sqlite3_bind_int(stmt, 12, (int)r->error));
  BIND(r->error_message ? sqlite3_bind_text(stmt, 13, r->error_message, -1, SQLITE_STATIC)
                        : sqlite3_bind_null(stmt, 13));
  BIND(sqlite3_bind_double(stmt, 14, r->build_seconds));
  BIND(sqlite3_bind_double(stmt, 15, r->total_seconds));
  BIND(sqlite3_bind_int64(stmt, 16, r->timestamp));
  BIND(sqlite3_bind_text(stmt, 17, r->hetc_version, -1, SQLITE_STATIC));
#undef BIND
  return rc;
}

/* One record inside the open transaction: skipped (when skip_duplicates
 * and an identical one is stored) or inserted; *out_added is 0 or 1. */
static hetc_status_t add_one(hetc_records_t *store, sqlite3_stmt *insert, sqlite3_stmt *exists,
                             const hetc_record_t *record, int32_t index, int *out_added) {
  *out_added = 0;
  char *config = NULL, *costs = NULL;
  hetc_status_t status = hetc_record_validate(record);
  if (!status) status = hetc_record_config_canonical(record->config_json, &config);
  if (status) return hetc_status_annotate(status, "record %d", index);
  costs = costs_text(record);
  if (!costs) {
    status = out_of_memory("adding records");
    goto done;
  }
  int rc;
  if (exists) {
    rc = bind_record(exists, record, config, costs);
    if (rc == SQLITE_OK) rc = sqlite3_step(exists);
    int found = rc == SQLITE_ROW;
    sqlite3_reset(exists);
    if (rc != SQLITE_ROW && rc != SQLITE_DONE) {
      status = sqlite_failure(store, rc, "looking for a duplicate record");
      goto done;
    }
    if (found) goto done;
  }
  rc = bind_record(insert, record, config, costs);
  if (rc == SQLITE_OK) rc = sqlite3_step(insert);
  sqlite3_reset(insert);
  if (rc != SQLITE_DONE) {
    status = sqlite_failure(store, rc, "adding a record");
    goto done;
  }
  *out_added = 1;
done:
  free(config);
  free(costs);
  return status;
}

static hetc_status_t add_records(hetc_records_t *store, const hetc_record_t *records,
                                 int32_t count, int skip_duplicates, int32_t *out_added) {
  if (out_added) *out_added = 0;
  if (count < 0 || (count > 0 && !records)) {
    return hetc_status_new(HETC_STATUS_INVALID_ARGUMENT, "records store: bad record array");
  }
  sqlite3_stmt *insert = NULL, *exists = NULL;
  int32_t added = 0;
  HETC_RETURN_IF_ERROR(begin_write(store));
  hetc_status_t status = prepare(store, insert_sql, &insert);
  if (!status && skip_duplicates) status = prepare(store, exists_sql, &exists);
  for (int32_t i = 0; !status && i < count; ++i) {
    int one = 0;
    status = add_one(store, insert, exists, &records[i], i, &one);
    added += one;
  }
  sqlite3_finalize(insert);
  sqlite3_finalize(exists);
  status = end_write(store, status);
  if (!status && out_added) *out_added = added;
  return status;
}

hetc_status_t hetc_records_add(hetc_records_t *store, const hetc_record_t *records,
                               int32_t count) {
  return add_records(store, records, count, 0, NULL);
}

hetc_status_t hetc_records_add_new(hetc_records_t *store, const hetc_record_t *records,
                                   int32_t count, int32_t *out_added) {
  return add_records(store, records, count, 1, out_added);
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

/* Copies a text column; NULL stays NULL only where the column may be NULL
 * (`nullable`); otherwise a NULL means SQLite ran out of memory. */
static int column_string(sqlite3_stmt *stmt, int column, int nullable, char **out_text) {
  const unsigned char *text = sqlite3_column_text(stmt, column);
  *out_text = NULL;
  if (!text) return nullable && sqlite3_column_type(stmt, column) == SQLITE_NULL;
  size_t length = strlen((const char *)text);
  *out_text = malloc(length + 1);
  if (!*out_text) return 0;
  memcpy(*out_text, text, length + 1);
  return 1;
}

/* Parses the costs_json column of a row into the record. */
static int parse_costs(const char *costs, hetc_record_t *record) {
  cJSON *array = costs ? cJSON_Parse(costs) : NULL;
  int ok = cJSON_IsArray(array) && cJSON_GetArraySize(array) <= HETC_RECORD_MAX_COSTS;
  record->num_costs = 0;
  for (const cJSON *item = ok ? array->child : NULL; item; item = item->next) {
    if (!cJSON_IsNumber(item)) ok = 0;
    else record->costs[record->num_costs++] = item->valuedouble;
  }
  cJSON_Delete(array);
  return ok;
}

/* Fills *out from a row of RECORD_COLUMNS. A row that another writer (a
 * shared server, a hand edit) left inconsistent is BAD_INPUT naming its id. */
static hetc_status_t read_record(hetc_records_t *store, sqlite3_stmt *stmt, hetc_record_t *out) {
  memset(out, 0, sizeof(*out));
  char *costs = NULL;
  int ok = column_string(stmt, 0, 0, &out->target) &&
           column_string(stmt, 1, 0, &out->plugin_version) &&
           column_string(stmt, 2, 0, &out->device_kind) &&
           column_string(stmt, 3, 0, &out->device_fingerprint) &&
           column_string(stmt, 4, 0, &out->template_name) &&
           column_string(stmt, 6, 0, &out->workload_key) &&
           column_string(stmt, 8, 0, &out->config_json) && column_string(stmt, 9, 0, &costs) &&
           column_string(stmt, 11, 1, &out->error_message) &&
           column_string(stmt, 15, 0, &out->hetc_version);
  if (!ok) {
    free(costs);
    hetc_record_clear(out);
    return out_of_memory("reading records");
  }
  int64_t version = sqlite3_column_int64(stmt, 5);
  int64_t error = sqlite3_column_int64(stmt, 10);
  out->template_version = (uint32_t)version;
  out->config_index = sqlite3_column_int64(stmt, 7);
  out->error = (hetc_record_error_t)error;
  out->build_seconds = sqlite3_column_double(stmt, 12);
  out->total_seconds = sqlite3_column_double(stmt, 13);
  out->timestamp = sqlite3_column_int64(stmt, 14);
  int consistent = version >= 0 && version <= (int64_t)UINT32_MAX && error >= 0 &&
                   error < HETC_RECORD_ERROR_COUNT && parse_costs(costs, out);
  free(costs);
  if (!consistent) {
    long long id = (long long)sqlite3_column_int64(stmt, 16);
    hetc_record_clear(out);
    return hetc_status_new(HETC_STATUS_BAD_INPUT,
                           "%s: record id %lld is damaged (template_version, error or costs_json "
                           "out of range)",
                           store->path, id);
  }
  return NULL;
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

static int bind_filter(sqlite3_stmt *stmt, const hetc_record_filter_t *filter, int *index) {
  if (!filter) return SQLITE_OK;
  const char *texts[] = {filter->target, filter->device_fingerprint, filter->device_kind,
                         filter->workload_key, filter->template_name};
  int rc = SQLITE_OK;
  for (size_t t = 0; rc == SQLITE_OK && t < sizeof(texts) / sizeof(texts[0]); ++t) {
    if (texts[t]) rc = sqlite3_bind_text(stmt, (*index)++, texts[t], -1, SQLITE_STATIC);
  }
  if (rc == SQLITE_OK && filter->template_version >= 0) {
    rc = sqlite3_bind_int64(stmt, (*index)++, filter->template_version);
  }
  return rc;
}

/* Appends every row a prepared statement yields to *list. */
static hetc_status_t collect_rows(hetc_records_t *store, sqlite3_stmt *stmt,
                                  hetc_record_list_t *list) {
  int32_t capacity = 0;
  for (;;) {
    int rc = sqlite3_step(stmt);
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
  sqlite3_stmt *stmt = NULL;
  HETC_RETURN_IF_ERROR(prepare(store, sql, &stmt));
  int index = 1;
  int rc = bind_filter(stmt, filter, &index);
  if (rc == SQLITE_OK && bind_limit) rc = sqlite3_bind_int64(stmt, index++, limit);
  hetc_status_t status =
      rc == SQLITE_OK ? collect_rows(store, stmt, out_list) : sqlite_failure(store, rc, "binding");
  sqlite3_finalize(stmt);
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
  hetc_json_text_raw(&sql, "SELECT " RECORD_COLUMNS " FROM records WHERE 1");
  append_filter(&sql, filter);
  hetc_json_text_raw(&sql, " ORDER BY timestamp, id LIMIT ?");
  char *text = hetc_json_text_take(&sql);
  if (!text) return out_of_memory("querying");
  int64_t limit = filter && filter->limit > 0 ? filter->limit : -1; /* -1: no limit */
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
  hetc_json_text_raw(&sql, "SELECT " RECORD_COLUMNS " FROM records WHERE 1" OK_WITH_COSTS);
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
                     ") AS rank FROM records WHERE 1" OK_WITH_COSTS);
  append_filter(&sql, filter);
  hetc_json_text_raw(&sql, ") WHERE rank = 1 ORDER BY target, device_fingerprint, workload_key");
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
                     " config_json" BEST_ORDER ") AS rank FROM records WHERE 1" OK_WITH_COSTS);
  append_filter(&sql, filter);
  hetc_json_text_raw(&sql, ") WHERE rank = 1" BEST_ORDER " LIMIT ?");
  char *text = hetc_json_text_take(&sql);
  if (!text) return out_of_memory("querying");
  hetc_status_t status = run_list_query(store, text, filter, 1, count, out_list);
  free(text);
  return status;
}

hetc_status_t hetc_records_count(hetc_records_t *store, int64_t *out_count) {
  *out_count = 0;
  int rc = read_integer(store->db, "SELECT count(*) FROM records", out_count);
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

static int bind_templates(sqlite3_stmt *stmt, const hetc_template_id_t *templates,
                          int32_t num_templates, int *index) {
  int rc = SQLITE_OK;
  for (int32_t t = 0; rc == SQLITE_OK && t < num_templates; ++t) {
    rc = sqlite3_bind_text(stmt, (*index)++, templates[t].name, -1, SQLITE_STATIC);
    if (rc == SQLITE_OK) rc = sqlite3_bind_int64(stmt, (*index)++, templates[t].version);
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
                                           int32_t num_templates, sqlite3_stmt **out_stmt) {
  *out_stmt = NULL;
  hetc_json_text_t sql = {0};
  hetc_json_text_raw(&sql, head);
  append_templates(&sql, num_templates);
  hetc_json_text_raw(&sql, tail);
  char *text = hetc_json_text_take(&sql);
  if (!text) return out_of_memory("looking up records");
  sqlite3_stmt *stmt = NULL;
  hetc_status_t status = prepare(store, text, &stmt);
  free(text);
  if (status) return status;
  int index = 1;
  int rc = SQLITE_OK;
  for (size_t i = 0; rc == SQLITE_OK && i < num_texts; ++i)
    rc = sqlite3_bind_text(stmt, index++, texts[i], -1, SQLITE_STATIC);
  if (rc == SQLITE_OK) rc = bind_templates(stmt, templates, num_templates, &index);
  if (rc != SQLITE_OK) {
    status = sqlite_failure(store, rc, "binding");
    sqlite3_finalize(stmt);
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
  sqlite3_stmt *stmt = NULL;
  HETC_RETURN_IF_ERROR(prepare_for_templates(
      store,
      "SELECT " RECORD_COLUMNS " FROM records WHERE device_fingerprint = ?"
      " AND workload_key = ? AND target = ?" OK_WITH_COSTS,
      BEST_ORDER " LIMIT 1", texts, sizeof(texts) / sizeof(texts[0]), templates, num_templates,
      &stmt));
  hetc_record_list_t list = {0, NULL};
  hetc_status_t status = collect_rows(store, stmt, &list);
  sqlite3_finalize(stmt);
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
  sqlite3_stmt *stmt = NULL;
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
    rc = sqlite3_step(stmt);
    if (rc != SQLITE_ROW) break;
    rc = SQLITE_OK;
    const char *key = (const char *)sqlite3_column_text(stmt, 0);
    const char *device = (const char *)sqlite3_column_text(stmt, 1);
    if (!key || !device) {
      rc = SQLITE_NOMEM;
      break;
    }
    double distance = hetc_workload_key_distance(workload_key, key);
    if (distance < 0) continue;
    int other_device = strcmp(device, fingerprint) != 0;
    double cost = sqlite3_column_double(stmt, 2);
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
  sqlite3_finalize(stmt);
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
    " FROM records WHERE error = 0) WHERE rank > ?)";

hetc_status_t hetc_records_prune(hetc_records_t *store, int64_t keep, int64_t *out_removed) {
  if (out_removed) *out_removed = 0;
  if (keep < 0) {
    return hetc_status_new(HETC_STATUS_INVALID_ARGUMENT, "records prune: keep %lld < 0",
                           (long long)keep);
  }
  HETC_RETURN_IF_ERROR(begin_write(store));
  int64_t removed = 0;
  hetc_status_t status = exec(store, prune_failed_sql, "pruning failed records");
  if (!status) removed += sqlite3_changes(store->db);
  sqlite3_stmt *stmt = NULL;
  if (!status) status = prepare(store, prune_ok_sql, &stmt);
  if (!status) {
    int rc = sqlite3_bind_int64(stmt, 1, keep);
    if (rc == SQLITE_OK) rc = sqlite3_step(stmt);
    if (rc != SQLITE_DONE) status = sqlite_failure(store, rc, "pruning ok records");
    else removed += sqlite3_changes(store->db);
  }
  sqlite3_finalize(stmt);
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
  HETC_RETURN_IF_ERROR(begin_write(store));
  sqlite3_stmt *stmt = NULL;
  hetc_status_t status = prepare(store,
                                 "INSERT OR REPLACE INTO transfers (device_fingerprint, direction, latency_seconds,"
                                 " seconds_per_byte, timestamp, hetc_version) VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
                                 &stmt);
  if (!status) {
    sqlite3_bind_text(stmt, 1, device_fingerprint, -1, SQLITE_STATIC);
    sqlite3_bind_text(stmt, 2, direction_name(direction), -1, SQLITE_STATIC);
    sqlite3_bind_double(stmt, 3, cost->latency_seconds);
    sqlite3_bind_double(stmt, 4, cost->seconds_per_byte);
    sqlite3_bind_int64(stmt, 5, (sqlite3_int64)time(NULL));
    sqlite3_bind_text(stmt, 6, HETC_VERSION_STRING, -1, SQLITE_STATIC);
    int rc = sqlite3_step(stmt);
    if (rc != SQLITE_DONE) status = sqlite_failure(store, rc, "storing a transfer cost");
  }
  sqlite3_finalize(stmt);
  return end_write(store, status);
}

hetc_status_t hetc_records_get_transfer(hetc_records_t *store, const char *device_fingerprint,
                                        hetc_transfer_direction_t direction, hetc_transfer_cost_t *out_cost,
                                        int *out_found) {
  *out_found = 0;
  sqlite3_stmt *stmt = NULL;
  HETC_RETURN_IF_ERROR(prepare(store,
                               "SELECT latency_seconds, seconds_per_byte FROM transfers"
                               " WHERE device_fingerprint = ?1 AND direction = ?2",
                               &stmt));
  sqlite3_bind_text(stmt, 1, device_fingerprint, -1, SQLITE_STATIC);
  sqlite3_bind_text(stmt, 2, direction_name(direction), -1, SQLITE_STATIC);
  hetc_status_t status = NULL;
  int rc = sqlite3_step(stmt);
  if (rc == SQLITE_ROW) {
    out_cost->latency_seconds = sqlite3_column_double(stmt, 0);
    out_cost->seconds_per_byte = sqlite3_column_double(stmt, 1);
    *out_found = 1;
  } else if (rc != SQLITE_DONE) {
    status = sqlite_failure(store, rc, "reading a transfer cost");
  }
  sqlite3_finalize(stmt);
  return status;
}

/* ------------------------------------------------------------------------ */
/* Peaks                                                                    */
/* ------------------------------------------------------------------------ */

static hetc_status_t read_peak(hetc_records_t *store, const char *device_fingerprint, hetc_kept_peak_t *out_peak,
                               int *out_found) {
  *out_found = 0;
  sqlite3_stmt *stmt = NULL;
  HETC_RETURN_IF_ERROR(prepare(store,
                               "SELECT peak_gflops, runs, timestamp FROM peaks WHERE device_fingerprint = ?1",
                               &stmt));
  sqlite3_bind_text(stmt, 1, device_fingerprint, -1, SQLITE_STATIC);
  hetc_status_t status = NULL;
  int rc = sqlite3_step(stmt);
  if (rc == SQLITE_ROW) {
    out_peak->gflops = sqlite3_column_double(stmt, 0);
    out_peak->runs = sqlite3_column_int64(stmt, 1);
    out_peak->timestamp = sqlite3_column_int64(stmt, 2);
    *out_found = 1;
  } else if (rc != SQLITE_DONE) {
    status = sqlite_failure(store, rc, "reading a device peak");
  }
  sqlite3_finalize(stmt);
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
    " runs = runs + 1,"
    " timestamp = CASE WHEN excluded.peak_gflops > peak_gflops THEN excluded.timestamp ELSE timestamp END,"
    " hetc_version = CASE WHEN excluded.peak_gflops > peak_gflops THEN excluded.hetc_version ELSE hetc_version END,"
    " peak_gflops = max(peak_gflops, excluded.peak_gflops)";

hetc_status_t hetc_records_note_peak(hetc_records_t *store, const char *device_fingerprint, const char *target,
                                     double gflops, hetc_kept_peak_t *out_peak) {
  if (!device_fingerprint || !device_fingerprint[0])
    return hetc_status_new(HETC_STATUS_INVALID_ARGUMENT, "records store: a peak needs a device fingerprint");
  if (!(gflops > 0) || isinf(gflops))
    return hetc_status_new(HETC_STATUS_INVALID_ARGUMENT, "records store: peak %g GFLOPS of %s (expected a finite "
                           "number > 0)", gflops, device_fingerprint);
  HETC_RETURN_IF_ERROR(begin_write(store));
  sqlite3_stmt *stmt = NULL;
  hetc_status_t status = prepare(store, note_peak_sql, &stmt);
  if (!status) {
    sqlite3_bind_text(stmt, 1, device_fingerprint, -1, SQLITE_STATIC);
    sqlite3_bind_text(stmt, 2, target ? target : "", -1, SQLITE_STATIC);
    sqlite3_bind_double(stmt, 3, gflops);
    sqlite3_bind_int64(stmt, 4, (sqlite3_int64)time(NULL));
    sqlite3_bind_text(stmt, 5, HETC_VERSION_STRING, -1, SQLITE_STATIC);
    int rc = sqlite3_step(stmt);
    if (rc != SQLITE_DONE) status = sqlite_failure(store, rc, "keeping a device peak");
  }
  sqlite3_finalize(stmt);
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

hetc_status_t hetc_records_put_selection(hetc_records_t *store, const char *model_key, const char *targets,
                                         const hetc_selection_t *selection) {
  HETC_RETURN_IF_ERROR(begin_write(store));
  sqlite3_stmt *stmt = NULL;
  hetc_status_t status = prepare(store, "DELETE FROM selections WHERE model_key = ?1 AND targets = ?2", &stmt);
  if (!status) {
    sqlite3_bind_text(stmt, 1, model_key, -1, SQLITE_STATIC);
    sqlite3_bind_text(stmt, 2, targets, -1, SQLITE_STATIC);
    if (sqlite3_step(stmt) != SQLITE_DONE) status = sqlite_failure(store, sqlite3_errcode(store->db), "replacing a selection");
  }
  sqlite3_finalize(stmt);
  stmt = NULL;
  if (!status)
    status = prepare(store,
                     "INSERT INTO selections (model_key, targets, node, device, template_name, template_version,"
                     " config_json, source, predicted_seconds, records, timestamp, hetc_version)"
                     " VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12)",
                     &stmt);
  for (int32_t i = 0; !status && i < selection->count; ++i) {
    const hetc_selection_entry_t *e = &selection->entries[i];
    sqlite3_reset(stmt);
    sqlite3_bind_text(stmt, 1, model_key, -1, SQLITE_STATIC);
    sqlite3_bind_text(stmt, 2, targets, -1, SQLITE_STATIC);
    sqlite3_bind_text(stmt, 3, e->node, -1, SQLITE_STATIC);
    sqlite3_bind_int(stmt, 4, e->device);
    sqlite3_bind_text(stmt, 5, e->template_name, -1, SQLITE_STATIC);
    sqlite3_bind_int64(stmt, 6, e->template_version);
    if (e->config_json) sqlite3_bind_text(stmt, 7, e->config_json, -1, SQLITE_STATIC);
    else sqlite3_bind_null(stmt, 7);
    sqlite3_bind_text(stmt, 8, e->source, -1, SQLITE_STATIC);
    sqlite3_bind_double(stmt, 9, selection->predicted_seconds);
    sqlite3_bind_int64(stmt, 10, selection->records);
    sqlite3_bind_int64(stmt, 11, (sqlite3_int64)time(NULL));
    sqlite3_bind_text(stmt, 12, HETC_VERSION_STRING, -1, SQLITE_STATIC);
    int rc = sqlite3_step(stmt);
    if (rc != SQLITE_DONE) status = sqlite_failure(store, rc, "storing a selection");
  }
  sqlite3_finalize(stmt);
  return end_write(store, status);
}

static char *column_text_copy(sqlite3_stmt *stmt, int column) {
  const unsigned char *text = sqlite3_column_text(stmt, column);
  return text ? strdup((const char *)text) : NULL;
}

hetc_status_t hetc_records_get_selection(hetc_records_t *store, const char *model_key, const char *targets,
                                         hetc_selection_t *out_selection) {
  memset(out_selection, 0, sizeof(*out_selection));
  sqlite3_stmt *stmt = NULL;
  HETC_RETURN_IF_ERROR(prepare(store,
                               "SELECT node, device, template_name, template_version, config_json, source,"
                               " predicted_seconds, records FROM selections WHERE model_key = ?1 AND targets = ?2"
                               " ORDER BY rowid",
                               &stmt));
  sqlite3_bind_text(stmt, 1, model_key, -1, SQLITE_STATIC);
  sqlite3_bind_text(stmt, 2, targets, -1, SQLITE_STATIC);
  hetc_status_t status = NULL;
  int rc;
  int32_t capacity = 0;
  while (!status && (rc = sqlite3_step(stmt)) == SQLITE_ROW) {
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
    e->device = sqlite3_column_int(stmt, 1);
    e->template_name = column_text_copy(stmt, 2);
    e->template_version = (uint32_t)sqlite3_column_int64(stmt, 3);
    e->config_json = column_text_copy(stmt, 4);
    e->source = column_text_copy(stmt, 5);
    out_selection->predicted_seconds = sqlite3_column_double(stmt, 6);
    out_selection->records = sqlite3_column_int64(stmt, 7);
    if (!e->node || !e->template_name || !e->source) status = out_of_memory("reading a selection");
  }
  if (!status && rc != SQLITE_DONE) status = sqlite_failure(store, rc, "reading a selection");
  sqlite3_finalize(stmt);
  if (status) hetc_selection_free(out_selection);
  return status;
}
