/* The tuning records store (driver/records/records.h), its JSON Lines
 * interchange (records_jsonl.h, api/records-format.md) and `hetc records`:
 * every field survives the store and a file round trip, best and lookup
 * pick what they document, malformed files give their exact messages and
 * import nothing, files that are not stores are refused by name, four
 * processes write one store at once, and prune keeps exactly its rule.
 *
 * Built with RECORDS_ON_SERVER (test_records_server), the tests that hold
 * for any store run again on the tests' PostgreSQL server
 * ($HETC_PG_SERVER_DIR, tests/queue/pg_server.sh): each store a test names
 * is a new database there. Exit 77 (skipped) without a server. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>
#include <libpq-fe.h>
#include <sqlite3.h>

#include "common/fileio.h"
#include "records/records.h"
#include "records/records_jsonl.h"
#ifdef RECORDS_ON_SERVER
#include "pg_test_server.h"
#endif

#define W_BIG "conv2d n1 c64 h56 w56 k64 r3x3 s1x1 p1,1,1,1 d1x1 g1 +bias+relu f32"
#define W_QUERY "conv2d n1 c64 h52 w52 k64 r3x3 s1x1 p1,1,1,1 d1x1 g1 +bias+relu f32"
#define W_DEEP "conv2d n1 c128 h28 w28 k128 r3x3 s1x1 p1,1,1,1 d1x1 g1 +bias+relu f32"
#define W_SMALL "conv2d n1 c64 h28 w28 k64 r3x3 s1x1 p1,1,1,1 d1x1 g1 +bias+relu f32"
#define W_1X1 "conv2d n1 c64 h56 w56 k64 r1x1 s1x1 p0,0,0,0 d1x1 g1 +bias+relu f32"

#ifdef RECORDS_ON_SERVER
static char server_uri[512]; /* the server's URI up to the database */
static int test_number;      /* databases are named after the test */

static void ignore_notice(void *arg, const char *message) {
  (void)arg;
  (void)message;
}

/* Runs `statement` in `database`; the first column of its first row (0
 * when it returns none). */
static int64_t server_sql(const char *database, const char *statement) {
  char uri[700];
  snprintf(uri, sizeof(uri), "%s/%s", server_uri, database);
  PGconn *conn = PQconnectdb(uri);
  assert_int_equal(PQstatus(conn), CONNECTION_OK);
  PQsetNoticeProcessor(conn, ignore_notice, NULL);
  PGresult *result = PQexec(conn, statement);
  if (PQresultStatus(result) != PGRES_COMMAND_OK && PQresultStatus(result) != PGRES_TUPLES_OK)
    fail_msg("%s: %s", statement, PQresultErrorMessage(result));
  int64_t value = PQntuples(result) > 0 ? strtoll(PQgetvalue(result, 0, 0), NULL, 10) : 0;
  PQclear(result);
  PQfinish(conn);
  return value;
}
#endif

/* A fresh directory per test under /tmp, removed afterwards. */
static char dir[256];

static int setup(void **state) {
  (void)state;
#ifdef RECORDS_ON_SERVER
  ++test_number;
#endif
  snprintf(dir, sizeof(dir), "/tmp/hetc-records-XXXXXX");
  return mkdtemp(dir) ? 0 : -1;
}

static int teardown(void **state) {
  (void)state;
  hetc_dir_remove_tree(dir);
  return 0;
}


/* A file in the test's directory; on the server, a store name (*.sqlite)
 * is a new database of this test's instead. */
static const char *in_dir(const char *name) {
  static char paths[4][700];
  static int next = 0;
  char *path = paths[next++ % 4];
#ifdef RECORDS_ON_SERVER
  const size_t length = strlen(name);
  if (length > 7 && !strcmp(name + length - 7, ".sqlite")) {
    char database[96], statement[160];
    int n = snprintf(database, sizeof(database), "t%d_", test_number);
    for (size_t k = 0; k + 7 < length && n + 1 < (int)sizeof(database); ++k)
      database[n++] = (name[k] >= 'a' && name[k] <= 'z') || (name[k] >= '0' && name[k] <= '9') ? name[k] : '_';
    database[n] = '\0';
    snprintf(statement, sizeof(statement), "SELECT count(*) FROM pg_database WHERE datname = '%s'", database);
    if (!server_sql("postgres", statement)) {
      snprintf(statement, sizeof(statement), "CREATE DATABASE %s", database);
      server_sql("postgres", statement);
    }
    snprintf(path, sizeof(paths[0]), "%s/%s", server_uri, database);
    return path;
  }
#endif
  snprintf(path, sizeof(paths[0]), "%s/%s", dir, name);
  return path;
}

static void assert_ok(hetc_status_t status) {
  if (status) fail_msg("%s", hetc_status_message(status));
}

/* Asserts a failure's code and exact message, and frees it. */
static void assert_failure(hetc_status_t status, hetc_status_code_t code, const char *message) {
  assert_non_null(status);
  assert_string_equal(hetc_status_message(status), message);
  assert_int_equal(hetc_status_code(status), code);
  hetc_status_free(status);
}

/* A record whose config_index identifies it in the assertions. cost > 0:
 * ok with costs {cost, 2 cost, cost / 2} (median cost); cost == 0: failed
 * with `error`. */
static hetc_record_t make_record(const char *fingerprint, const char *workload,
                                 const char *template_name, uint32_t version, int64_t index,
                                 hetc_record_error_t error, double cost, int64_t timestamp) {
  hetc_record_t r;
  memset(&r, 0, sizeof(r));
  char config[64];
  snprintf(config, sizeof(config), "{\"tile\":[%lld],\"unroll\":[1,2]}", (long long)index);
  r.target = strdup("cpu");
  r.plugin_version = strdup("0.1.0");
  r.device_kind = strdup(fingerprint[0] == 'g' ? "gpu" : "cpu");
  r.device_fingerprint = strdup(fingerprint);
  r.template_name = strdup(template_name);
  r.template_version = version;
  r.workload_key = strdup(workload);
  r.config_index = index;
  r.config_json = strdup(config);
  r.error = error;
  if (error == HETC_RECORD_OK) {
    r.num_costs = 3;
    r.costs[0] = cost;
    r.costs[1] = 2 * cost;
    r.costs[2] = cost / 2;
  } else {
    r.error_message = strdup("template refused it");
  }
  r.build_seconds = 0.25;
  r.total_seconds = 0.5;
  r.timestamp = timestamp;
  r.hetc_version = strdup("0.1.0");
  return r;
}

static void free_records(hetc_record_t *records, int32_t count) {
  for (int32_t i = 0; i < count; ++i) hetc_record_clear(&records[i]);
}

static void assert_same_string(const char *a, const char *b) {
  if (!a || !b) assert_ptr_equal(a, b);
  else assert_string_equal(a, b);
}

static void assert_record_equal(const hetc_record_t *a, const hetc_record_t *b) {
  assert_same_string(a->target, b->target);
  assert_same_string(a->plugin_version, b->plugin_version);
  assert_same_string(a->device_kind, b->device_kind);
  assert_same_string(a->device_fingerprint, b->device_fingerprint);
  assert_same_string(a->template_name, b->template_name);
  assert_int_equal(a->template_version, b->template_version);
  assert_same_string(a->workload_key, b->workload_key);
  assert_int_equal(a->config_index, b->config_index);
  assert_same_string(a->config_json, b->config_json);
  assert_int_equal(a->num_costs, b->num_costs);
  for (int32_t c = 0; c < a->num_costs; ++c) assert_true(a->costs[c] == b->costs[c]);
  assert_int_equal(a->error, b->error);
  assert_same_string(a->error_message, b->error_message);
  assert_true(a->build_seconds == b->build_seconds);
  assert_true(a->total_seconds == b->total_seconds);
  assert_int_equal(a->timestamp, b->timestamp);
  assert_same_string(a->hetc_version, b->hetc_version);
}

static int exists(const char *path) {
  struct stat st;
  return stat(path, &st) == 0;
}

static int64_t count_records(const char *path) {
  hetc_records_t *store = NULL;
  assert_ok(hetc_records_open(path, &store));
  int64_t count = -1;
  assert_ok(hetc_records_count(store, &count));
  hetc_records_close(store);
  return count;
}

static char *read_file(const char *path) {
  char *data = NULL;
  size_t length = 0;
  assert_ok(hetc_file_read_all(path, (size_t)1 << 26, &data, &length));
  return data;
}

static void write_file(const char *path, const char *text, size_t length) {
  assert_ok(hetc_file_write_all(path, text, length));
}

/* ------------------------------------------------------------------------ */

static void error_names(void **state) {
  (void)state;
  const char *names[] = {"ok",           "instantiation", "compile_host", "compile_device",
                         "device_limits", "runtime_device", "wrong_answer", "build_timeout",
                         "run_timeout",  "unknown"};
  for (int e = 0; e < HETC_RECORD_ERROR_COUNT; ++e) {
    assert_string_equal(hetc_record_error_name((hetc_record_error_t)e), names[e]);
    assert_int_equal(hetc_record_error_from_name(names[e]), e);
  }
  assert_int_equal(hetc_record_error_from_name("compile host"), -1);
  assert_int_equal(hetc_record_error_from_name(NULL), -1);
  hetc_record_t r = make_record("cpu:a", W_BIG, "t", 1, 0, HETC_RECORD_OK, 1.0, 0);
  assert_true(hetc_record_median_cost(&r) == 1.0);
  r.num_costs = 2; /* {1, 2}: the mean of the middle two */
  assert_true(hetc_record_median_cost(&r) == 1.5);
  r.num_costs = 0;
  assert_true(hetc_record_median_cost(&r) > 1e300);
  hetc_record_clear(&r);
}

/* Every field comes back exactly; configs come back in their canonical
 * spelling; the records the caller handed in stay the caller's. */
static void add_query_round_trip(void **state) {
  (void)state;
  hetc_records_t *store = NULL;
  assert_ok(hetc_records_open(in_dir("s.sqlite"), &store));
  hetc_record_t records[3];
  records[0] = make_record("cpu:Intel(R) Xeon(R) 100%:2c", W_BIG, "conv2d_nchwc", 4000000000u,
                           9007199254740991LL, HETC_RECORD_OK, 0.1 + 0.2, 1700000000);
  /* The extremes: a config value just below 2^53, an index of 2^53. */
  records[0].config_index = 9007199254740992LL;
  records[0].costs[1] = 1e-300;
  records[0].costs[2] = 123456.789;
  records[0].build_seconds = 1.0 / 3.0;
  records[1] = make_record("cpu:b", W_SMALL, "conv2d_direct", 0, -1,
                           HETC_RECORD_COMPILE_HOST, 0, 1600000000);
  free(records[1].error_message);
  records[1].error_message = strdup("cc: error: \"x\"\n\tsecond line \xc3\xa9");
  records[2] = make_record("cpu:b", W_SMALL, "conv2d_direct", 0, 5, HETC_RECORD_OK, 2e-3,
                           1600000000);
  free(records[2].config_json);
  records[2].config_json = strdup(" { \"tile\" : [ 4 , 8 ] ,\n \"u\": [-3] } ");
  free(records[2].plugin_version);
  records[2].plugin_version = strdup("");
  records[2].num_costs = HETC_RECORD_MAX_COSTS;
  for (int c = 0; c < HETC_RECORD_MAX_COSTS; ++c) records[2].costs[c] = 1e-3 * (c + 1);
  assert_ok(hetc_records_add(store, records, 3));

  hetc_record_list_t list;
  assert_ok(hetc_records_query(store, NULL, &list));
  assert_int_equal(list.count, 3);
  /* Oldest first: the two 1600000000 records in the order added. */
  assert_record_equal(&list.items[0], &records[1]);
  assert_string_equal(list.items[1].config_json, "{\"tile\":[4,8],\"u\":[-3]}");
  free(records[2].config_json);
  records[2].config_json = strdup("{\"tile\":[4,8],\"u\":[-3]}");
  assert_record_equal(&list.items[1], &records[2]);
  assert_record_equal(&list.items[2], &records[0]);
  hetc_record_list_free(&list);
  assert_int_equal(list.count, 0);

  /* Filters and limit. */
  hetc_record_filter_t filter = hetc_record_filter_any();
  filter.device_fingerprint = "cpu:b";
  filter.limit = 1;
  assert_ok(hetc_records_query(store, &filter, &list));
  assert_int_equal(list.count, 1);
  assert_int_equal(list.items[0].config_index, -1);
  hetc_record_list_free(&list);
  filter = hetc_record_filter_any();
  filter.only_ok = 1;
  filter.template_version = 0;
  assert_ok(hetc_records_query(store, &filter, &list));
  assert_int_equal(list.count, 1);
  assert_int_equal(list.items[0].config_index, 5);
  hetc_record_list_free(&list);

  /* hetc_record_copy is deep. */
  hetc_record_t copy;
  memset(&copy, 0, sizeof(copy));
  assert_ok(hetc_record_copy(&records[1], &copy));
  assert_record_equal(&copy, &records[1]);
  assert_ptr_not_equal(copy.error_message, records[1].error_message);
  hetc_record_clear(&copy);
  free_records(records, 3);
  hetc_records_close(store);
}

/* An invalid record fails the whole batch with a message naming it. */
static void add_rejects_invalid_records(void **state) {
  (void)state;
  hetc_records_t *store = NULL;
  assert_ok(hetc_records_open(in_dir("s.sqlite"), &store));
  hetc_record_t records[2];
  records[0] = make_record("cpu:a", W_BIG, "t", 1, 1, HETC_RECORD_OK, 1e-3, 1);
  records[1] = make_record("cpu:a", W_BIG, "t", 1, 2, HETC_RECORD_OK, 1e-3, 2);
  free(records[1].device_fingerprint);
  records[1].device_fingerprint = strdup("");
  assert_failure(hetc_records_add(store, records, 2), HETC_STATUS_INVALID_ARGUMENT,
                 "record 1: device_fingerprint is empty");
  hetc_record_clear(&records[1]);
  records[1] = make_record("cpu:a", W_BIG, "t", 1, 2, HETC_RECORD_WRONG_ANSWER, 0, 2);
  records[1].num_costs = 1;
  assert_failure(hetc_records_add(store, records, 2), HETC_STATUS_INVALID_ARGUMENT,
                 "record 1: a wrong_answer record has 1 costs (only ok records have costs)");
  records[1].num_costs = 0;
  free(records[1].config_json);
  records[1].config_json = strdup("{\"tile\":[1.5]}");
  assert_failure(hetc_records_add(store, records, 2), HETC_STATUS_INVALID_ARGUMENT,
                 "record 1: config_json: knob \"tile\": values must be integers below 2^53 in magnitude");
  free(records[1].config_json);
  records[1].config_json = strdup("{\"a\":[1],\"a\":[2]}");
  assert_failure(hetc_records_add(store, records, 2), HETC_STATUS_INVALID_ARGUMENT,
                 "record 1: config_json: knob \"a\" appears twice");
  int64_t count = -1;
  assert_ok(hetc_records_count(store, &count));
  assert_int_equal(count, 0);
  free_records(records, 2);
  hetc_records_close(store);
}

static void best_is_lowest_median(void **state) {
  (void)state;
  hetc_records_t *store = NULL;
  assert_ok(hetc_records_open(in_dir("s.sqlite"), &store));
  hetc_record_t records[5] = {
      make_record("cpu:a", W_BIG, "t", 1, 1, HETC_RECORD_OK, 3e-3, 10),
      make_record("cpu:a", W_BIG, "t", 1, 2, HETC_RECORD_OK, 1e-3, 11),
      make_record("cpu:a", W_BIG, "t", 1, 3, HETC_RECORD_RUN_TIMEOUT, 0, 12),
      make_record("cpu:a", W_BIG, "u", 1, 4, HETC_RECORD_OK, 2e-3, 13),
      make_record("cpu:a", W_BIG, "t", 1, 5, HETC_RECORD_OK, 1e-3, 14), /* a later tie */
  };
  records[1].costs[1] = 5; /* the median, not the mean, decides */
  assert_ok(hetc_records_add(store, records, 5));
  hetc_record_t best;
  memset(&best, 0, sizeof(best));
  int found = 0;
  assert_ok(hetc_records_best(store, NULL, &best, &found));
  assert_int_equal(found, 1);
  assert_int_equal(best.config_index, 2);
  hetc_record_clear(&best);
  hetc_record_filter_t filter = hetc_record_filter_any();
  filter.template_name = "u";
  assert_ok(hetc_records_best(store, &filter, &best, &found));
  assert_int_equal(found, 1);
  assert_int_equal(best.config_index, 4);
  hetc_record_clear(&best);
  filter.template_name = "none";
  assert_ok(hetc_records_best(store, &filter, &best, &found));
  assert_int_equal(found, 0);
  assert_null(best.target);

  hetc_record_list_t list;
  assert_ok(hetc_records_best_each(store, NULL, &list));
  assert_int_equal(list.count, 1);
  assert_int_equal(list.items[0].config_index, 2);
  hetc_record_list_free(&list);
  free_records(records, 5);
  hetc_records_close(store);
}

static void workload_distance(void **state) {
  (void)state;
  assert_true(hetc_workload_key_distance(W_BIG, W_BIG) == 0);
  double d = hetc_workload_key_distance(W_QUERY, W_BIG);
  assert_true(fabs(d - 2 * log(56.0 / 52.0)) < 1e-12);
  d = hetc_workload_key_distance(W_BIG, W_DEEP);
  assert_true(fabs(d - (2 * log(2.0) + 2 * log(2.0))) < 1e-12);
  assert_true(hetc_workload_key_distance(W_BIG, W_1X1) < 0); /* kernel differs */
  assert_true(hetc_workload_key_distance(W_BIG, "conv2d n1 c64 h56 w56 k64 r3x3 s2x2 p1,1,1,1 "
                                                "d1x1 g1 +bias+relu f32") < 0);
  assert_true(hetc_workload_key_distance(W_BIG, "conv2d n1 c64 h56 w56 k64 r3x3 s1x1 p1,1,1,1 "
                                                "d1x1 g1 +bias f32") < 0);
  /* Padding is not compared. */
  assert_true(hetc_workload_key_distance(W_BIG, "conv2d n1 c64 h56 w56 k64 r3x3 s1x1 p0,0,0,0 "
                                                "d1x1 g1 +bias+relu f32") == 0);
  d = hetc_workload_key_distance("dense n1 k2048 units1000 +bias f32",
                                 "dense n1 k1024 units1000 +bias f32");
  assert_true(fabs(d - log(2.0)) < 1e-12);
  assert_true(hetc_workload_key_distance("dense n1 k2048 units1000 f32", W_BIG) < 0);
  assert_true(hetc_workload_key_distance("pool n1 c3", "pool n1 c4") < 0);
}

static void lookup_exact_nearest_none(void **state) {
  (void)state;
  hetc_records_t *store = NULL;
  assert_ok(hetc_records_open(in_dir("s.sqlite"), &store));
  hetc_record_t records[] = {
      make_record("cpu:a", W_BIG, "t", 2, 1, HETC_RECORD_OK, 2.0e-3, 1),
      make_record("cpu:a", W_BIG, "u", 1, 2, HETC_RECORD_OK, 1.5e-3, 2),
      make_record("cpu:a", W_BIG, "t", 1, 3, HETC_RECORD_OK, 0.1e-3, 3),  /* old version */
      make_record("cpu:a", W_DEEP, "t", 2, 4, HETC_RECORD_OK, 1.0e-3, 4),
      make_record("cpu:b", W_SMALL, "t", 2, 5, HETC_RECORD_OK, 0.5e-3, 5),
      make_record("cpu:a", W_1X1, "t", 2, 6, HETC_RECORD_OK, 0.3e-3, 6),  /* other kernel */
      make_record("gpu:g", W_BIG, "t", 2, 7, HETC_RECORD_OK, 0.01e-3, 7), /* other kind */
      make_record("cpu:b", W_BIG, "t", 2, 8, HETC_RECORD_OK, 0.2e-3, 8),
      make_record("cpu:a", W_QUERY, "t", 2, 9, HETC_RECORD_COMPILE_HOST, 0, 9), /* failed */
  };
  const int32_t n = (int32_t)(sizeof(records) / sizeof(records[0]));
  assert_ok(hetc_records_add(store, records, n));
  const hetc_template_id_t both[] = {{"t", 2}, {"u", 1}}, only_t[] = {{"t", 2}},
                           future[] = {{"t", 3}};
  hetc_record_t found;
  memset(&found, 0, sizeof(found));
  hetc_lookup_kind_t kind;

  /* Exact: the best of the valid templates; t v1's faster record is ignored. */
  assert_ok(hetc_records_lookup(store, "cpu", "cpu:a", "cpu", W_BIG, both, 2, &found, &kind));
  assert_int_equal(kind, HETC_LOOKUP_EXACT);
  assert_int_equal(found.config_index, 2);
  hetc_record_clear(&found);
  assert_ok(hetc_records_lookup(store, "cpu", "cpu:a", "cpu", W_BIG, only_t, 1, &found, &kind));
  assert_int_equal(kind, HETC_LOOKUP_EXACT);
  assert_int_equal(found.config_index, 1);
  hetc_record_clear(&found);

  /* Nearest: W_BIG is closest; on this device even though cpu:b's is faster. */
  assert_ok(hetc_records_lookup(store, "cpu", "cpu:a", "cpu", W_QUERY, both, 2, &found, &kind));
  assert_int_equal(kind, HETC_LOOKUP_NEAREST);
  assert_int_equal(found.config_index, 2);
  assert_string_equal(found.workload_key, W_BIG);
  assert_string_equal(found.device_fingerprint, "cpu:a");
  hetc_record_clear(&found);
  /* From a device with no records: equal distances, the lowest cost wins,
   * and the gpu's even faster record is never considered. */
  assert_ok(hetc_records_lookup(store, "cpu", "cpu:c", "cpu", W_QUERY, both, 2, &found, &kind));
  assert_int_equal(kind, HETC_LOOKUP_NEAREST);
  assert_int_equal(found.config_index, 8);
  hetc_record_clear(&found);
  /* The same workload tuned on another device of the kind: distance 0. */
  assert_ok(hetc_records_lookup(store, "cpu", "cpu:a", "cpu", W_SMALL, only_t, 1, &found, &kind));
  assert_int_equal(kind, HETC_LOOKUP_NEAREST);
  assert_int_equal(found.config_index, 5);
  hetc_record_clear(&found);
  /* The gpu kind only sees its own. */
  assert_ok(hetc_records_lookup(store, "cpu", "gpu:h", "gpu", W_QUERY, only_t, 1, &found, &kind));
  assert_int_equal(kind, HETC_LOOKUP_NEAREST);
  assert_int_equal(found.config_index, 7);
  hetc_record_clear(&found);

  /* None: templates at versions nobody tuned, no templates, another
   * target, an op nobody tuned, a kind nobody has. */
  assert_ok(hetc_records_lookup(store, "cpu", "cpu:a", "cpu", W_BIG, future, 1, &found, &kind));
  assert_int_equal(kind, HETC_LOOKUP_NONE);
  assert_ok(hetc_records_lookup(store, "cpu", "cpu:a", "cpu", W_BIG, NULL, 0, &found, &kind));
  assert_int_equal(kind, HETC_LOOKUP_NONE);
  assert_ok(hetc_records_lookup(store, "vec", "cpu:a", "cpu", W_BIG, both, 2, &found, &kind));
  assert_int_equal(kind, HETC_LOOKUP_NONE);
  assert_ok(hetc_records_lookup(store, "cpu", "cpu:a", "cpu", "dense n1 k2048 units1000 f32",
                                both, 2, &found, &kind));
  assert_int_equal(kind, HETC_LOOKUP_NONE);
  assert_ok(hetc_records_lookup(store, "cpu", "acc:x", "accelerator", W_BIG, both, 2, &found,
                                &kind));
  assert_int_equal(kind, HETC_LOOKUP_NONE);
  assert_null(found.target);
  free_records(records, n);
  hetc_records_close(store);
}

/* ------------------------------------------------------------------------ */
/* JSON Lines                                                               */
/* ------------------------------------------------------------------------ */

static const char good_line[] =
    "{\"input\":[\"cpu -device_kind=cpu -fingerprint=cpu:Intel(R)%20Xeon(R)%20100%25:2c "
    "-plugin_version=0.1.0\",\"conv2d_nchwc\",[\"" W_BIG "\",3],{}],\"config\":{\"index\":17,"
    "\"code_hash\":null,\"entity\":[[\"tile_oc\",\"ot\",[8]],[\"split_w\",\"ot\",[2,7]]]},"
    "\"result\":[[0.00125,0.0012,0.0013],0,1.25,1700000000],\"version\":0.2,"
    "\"hetc_version\":\"0.1.0\",\"hetc_measure\":{\"build_seconds\":0.5,\"error_message\":null}}";

static const char failed_line[] =
    "{\"input\":[\"cpu -device_kind=cpu -fingerprint=cpu:b -plugin_version=\",\"direct\",[\"" W_SMALL
    "\",0],{}],\"config\":{\"index\":0,\"code_hash\":null,\"entity\":[]},"
    "\"result\":[[1000000000],2,0.5,1700000001],\"version\":0.2,\"hetc_version\":\"0.1.0\","
    "\"hetc_measure\":{\"build_seconds\":0.25,\"error_message\":\"cc: error: \\\"x\\\"\\n\\tline "
    "\xc3\xa9\"}}";

/* The two records good_line and failed_line stand for. */
static void documented_records(hetc_record_t out[2]) {
  out[0] = make_record("cpu:Intel(R) Xeon(R) 100%:2c", W_BIG, "conv2d_nchwc", 3, 17,
                       HETC_RECORD_OK, 0.00125, 1700000000);
  out[0].costs[1] = 0.0012;
  out[0].costs[2] = 0.0013;
  free(out[0].config_json);
  out[0].config_json = strdup("{\"tile_oc\":[8],\"split_w\":[2,7]}");
  out[0].build_seconds = 0.5;
  out[0].total_seconds = 1.25;
  out[1] = make_record("cpu:b", W_SMALL, "direct", 0, 0, HETC_RECORD_COMPILE_HOST, 0,
                       1700000001);
  free(out[1].config_json);
  out[1].config_json = strdup("{}");
  free(out[1].plugin_version);
  out[1].plugin_version = strdup("");
  free(out[1].error_message);
  out[1].error_message = strdup("cc: error: \"x\"\n\tline \xc3\xa9");
}

/* The line format is exactly what api/records-format.md shows. */
static void jsonl_line_format(void **state) {
  (void)state;
  hetc_record_t records[2];
  documented_records(records);
  char *line = NULL;
  assert_ok(hetc_record_to_jsonl(&records[0], &line));
  assert_string_equal(line, good_line);
  free(line);
  assert_ok(hetc_record_to_jsonl(&records[1], &line));
  assert_string_equal(line, failed_line);
  free(line);
  hetc_record_t parsed;
  assert_ok(hetc_record_from_jsonl(good_line, &parsed));
  assert_record_equal(&parsed, &records[0]);
  hetc_record_clear(&parsed);
  assert_ok(hetc_record_from_jsonl(failed_line, &parsed));
  assert_record_equal(&parsed, &records[1]);
  hetc_record_clear(&parsed);
  free_records(records, 2);
}

static void jsonl_round_trip_byte_identical(void **state) {
  (void)state;
  hetc_records_t *store = NULL;
  assert_ok(hetc_records_open(in_dir("a.sqlite"), &store));
  hetc_record_t records[2 + 40];
  documented_records(records);
  for (int i = 0; i < 40; ++i) {
    records[2 + i] = make_record(i % 2 ? "cpu:a" : "gpu:g", i % 3 ? W_BIG : W_DEEP, "t",
                                 (uint32_t)(i % 4), i, (hetc_record_error_t)(i % 10),
                                 (i + 1) * 1.1e-4, 1700000000 + i / 3);
    records[2 + i].total_seconds = i * 0.1;
  }
  assert_ok(hetc_records_add(store, records, 42));
  int64_t exported = 0;
  assert_ok(hetc_records_export_jsonl(store, NULL, in_dir("a.jsonl"), &exported));
  assert_int_equal(exported, 42);
  hetc_records_close(store);

  assert_ok(hetc_records_open(in_dir("b.sqlite"), &store));
  int32_t imported = 0, duplicates = 0;
  assert_ok(hetc_records_import_jsonl(store, in_dir("a.jsonl"), &imported, &duplicates));
  assert_int_equal(imported, 42);
  assert_int_equal(duplicates, 0);
  /* A second import of the same file adds nothing. */
  assert_ok(hetc_records_import_jsonl(store, in_dir("a.jsonl"), &imported, &duplicates));
  assert_int_equal(imported, 0);
  assert_int_equal(duplicates, 42);
  assert_ok(hetc_records_export_jsonl(store, NULL, in_dir("b.jsonl"), &exported));
  assert_int_equal(exported, 42);
  hetc_record_list_t list;
  assert_ok(hetc_records_query(store, NULL, &list));
  assert_int_equal(list.count, 42);
  for (int32_t i = 0; i < list.count; ++i) {
    int found = 0;
    for (int32_t j = 0; j < 42 && !found; ++j) {
      if (records[j].config_index == list.items[i].config_index &&
          !strcmp(records[j].workload_key, list.items[i].workload_key) &&
          records[j].timestamp == list.items[i].timestamp) {
        assert_record_equal(&list.items[i], &records[j]);
        found = 1;
      }
    }
    assert_true(found);
  }
  hetc_record_list_free(&list);

  /* A filtered export writes only what matches. */
  hetc_record_filter_t filter = hetc_record_filter_any();
  filter.device_kind = "gpu";
  filter.only_ok = 1;
  assert_ok(hetc_records_export_jsonl(store, &filter, in_dir("gpu.jsonl"), &exported));
  assert_int_equal(exported, 4); /* i = 0, 10, 20, 30: ok, and even i are gpu */
  hetc_records_close(store);

  char *a = read_file(in_dir("a.jsonl")), *b = read_file(in_dir("b.jsonl"));
  assert_string_equal(a, b);
  assert_non_null(strstr(a, good_line));
  free(a);
  free(b);
  free_records(records, 42);
}

/* Replaces the first `from` in good_line with `to`. */
static char *good_line_with(const char *from, const char *to) {
  const char *at = strstr(good_line, from);
  if (!at) fail_msg("'%s' is not in the good line", from);
  size_t size = sizeof(good_line) + strlen(to);
  char *line = malloc(size);
  snprintf(line, size, "%.*s%s%s", (int)(at - good_line), good_line, to, at + strlen(from));
  return line;
}

/* Each malformed line (line 2, after a good line 1) gives its exact
 * message, and nothing of the file is imported. */
static void jsonl_malformed_lines(void **state) {
  (void)state;
  static const struct {
    const char *from, *to; /* replaced in good_line; from NULL: `to` is the whole line */
    const char *message;   /* after "FILE:2: " */
  } cases[] = {
      {NULL, "{\"input\":", "not valid JSON (at column 10)"},
      {NULL, "{\"input\":[]} trailing", "not valid JSON (at column 14)"},
      {NULL, "[1,2]", "/: expected a JSON object, got [1,2]"},
      {",\"result\":[[0.00125,0.0012,0.0013],0,1.25,1700000000]", "",
       "/: missing required key \"result\""},
      {"\"hetc_version\"", "\"tvm_version\"",
       "/: unknown key \"tvm_version\" (expected one of: input, config, result, version, "
       "hetc_version, hetc_measure)"},
      {"\"version\":0.2,", "\"version\":0.2,\"version\":0.2,", "/: duplicate key \"version\""},
      {"\"version\":0.2", "\"version\":0.1",
       "/version: expected 0.2 (AutoTVM's record version), got 0.1"},
      {",{}]", "]",
       "/input: expected [target string, task name, args, kwargs], got [\"cpu -device_kind=cpu "
       "-fingerprint=cpu:Intel(R)%20Xeon(R)%2..."},
      {"\"cpu -device_kind", "[\"cpu\"],\"cpu -device_kind",
       "/input: expected [target string, task name, args, kwargs], got [[\"cpu\"],\"cpu "
       "-device_kind=cpu -fingerprint=cpu:Intel(R)%20X..."},
      {"\"cpu -device_kind=cpu", "7,\"cpu -device_kind=cpu", /* 5 items */
       "/input: expected [target string, task name, args, kwargs], got [7,\"cpu "
       "-device_kind=cpu -fingerprint=cpu:Intel(R)%20Xeon(R)..."},
      {"-plugin_version=0.1.0", "-plugin_version=0.1.0 -mcpu=x",
       "/input/0: unknown option \"-mcpu\" (expected -device_kind, -fingerprint, "
       "-plugin_version)"},
      {"-device_kind=cpu ", "", "/input/0: missing option \"-device_kind\""},
      {"-plugin_version=0.1.0", "-plugin_version=0.1.0 -plugin_version=2",
       "/input/0: option \"-plugin_version\" given twice"},
      {"%20Xeon", "%2",
       "/input/0: bad %-escape in \"-fingerprint=cpu:Intel(R)%2(R)%20100%25:2c\" (expected %XX, "
       "not %00)"},
      {"cpu -device_kind", "-device_kind", "/input/0: no target name before the options"},
      {"-plugin_version=0.1.0", "-plugin_version=0.1.0 bare",
       "/input/0: \"bare\" is not a -key=value option"},
      {"\"conv2d_nchwc\"", "\"\"",
       "/input/1: expected the template name (a non-empty string), got \"\""},
      {"f32\",3]", "f32\",-1]",
       "/input/2/1: expected the template version (an integer in 0..4294967295), got -1"},
      {"f32\",3]", "f32\"]",
       "/input/2: expected [workload key, template version], got [\"conv2d n1 c64 h56 w56 k64 "
       "r3x3 s1x1 p1,1,1,1 d1x1 g1 +bias..."},
      {"\"index\":17", "\"index\":1.5", "/config/index: expected an integer within 2^53, got 1.5"},
      {"\"index\":17,", "", "/config: missing required key \"index\""},
      {"[2,7]", "7",
       "/config/entity/1/2: expected an array of 1 to 8 integers below 2^53 in magnitude, got 7"},
      {"[\"split_w\",\"ot\",[2,7]]", "[\"split_w\",\"ot\"]",
       "/config/entity/1: expected [knob name, kind, [integers]], got [\"split_w\",\"ot\"]"},
      {"\"split_w\"", "\"tile_oc\"", "/config/entity/1/0: knob \"tile_oc\" appears twice"},
      {"],0,1.25", "],12,1.25", "/result/1: expected an error code (an integer in 0..9), got 12"},
      {"0.0012,", "-0.0012,",
       "/result/0/1: expected a cost in seconds (a finite number >= 0), got -0.0012"},
      {"1700000000]", "\"yesterday\"]",
       "/result/3: expected a Unix timestamp (an integer within 2^53), got \"yesterday\""},
      {"1.25,", "", "/result: expected [costs, error_no, all_cost, timestamp], got "
                    "[[0.00125,0.0012,0.0013],0,1700000000]"},
      {"\"error_message\":null", "\"error_message\":5",
       "/hetc_measure/error_message: expected a string or null, got 5"},
      {"-fingerprint=cpu:Intel(R)%20Xeon(R)%20100%25:2c", "-fingerprint=",
       "device_fingerprint is empty"},
      {"[0.00125,0.0012,0.0013]",
       "[1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1]",
       "/result/0: expected an array of at most 32 costs, got "
       "[1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1..."},
      /* What cJSON let through (issue 19, cases 13 and 15): a \u0000 that cut
       * a name short, bytes that are not UTF-8 (exported as lines no reader
       * takes), device kinds that do not exist, numbers beyond a double,
       * configs that no reader of the store could use. */
      {"\"conv2d_nchwc\"", "\"conv2d\\u0000nchwc\"",
       "/input/1: the string holds \\u0000 (column 111), which no name or text may contain"},
      {"\"error_message\":null", "\"error_message\":\"a\\u0000b\"",
       "/hetc_measure/error_message: the string holds \\u0000 (column 435), which no name or text may contain"},
      {",{}]", ",{\"k\\u0000\":1}]",
       "/input/3: a key holds \\u0000 (column 196), which no name or text may contain"},
      {"f32\",3]", "f32\xff\",3]", "/input/2/0: the string is not valid UTF-8 (byte 0xFF at column 188)"},
      {"\"hetc_version\"", "\"hetc_\xc3version\"", "/: a key is not valid UTF-8 (byte 0xC3 at column 364)"},
      {"\"hetc_version\":\"0.1.0\"", "\"hetc_version\":\"0.1\xed\xa0\x80\"", /* a surrogate */
       "/hetc_version: the string is not valid UTF-8 (byte 0xED at column 377)"},
      {"%20Xeon", "%FFXeon",
       "/input/0: -fingerprint is not valid UTF-8 once %-escapes are undone (byte 0xFF at offset 12)"},
      {"-device_kind=cpu ", "-device_kind=tpu ",
       "/input/0: -device_kind \"tpu\" is not one of cpu, gpu, accelerator"},
      {"[0.00125,", "[1e999,",
       "/result/0/0: expected a cost in seconds (a finite number >= 0), got a number beyond the range of a double"},
      {"1.25,", "-1e999,",
       "/result/2: expected the total seconds (a finite number >= 0), got a number beyond the range of a double"},
      {"\"build_seconds\":0.5", "\"build_seconds\":1e400",
       "/hetc_measure/build_seconds: expected a finite number >= 0, got a number beyond the range of a double"},
      {"[8]", "[9007199254740992]",
       "/config/entity/0/2: expected an array of 1 to 8 integers below 2^53 in magnitude, got [9007199254740992]"},
      {"[2,7]", "[1,1,1,1,1,1,1,1,1]",
       "/config/entity/1/2: expected an array of 1 to 8 integers below 2^53 in magnitude, got "
       "[1,1,1,1,1,1,1,1,1]"},
  };
  hetc_records_t *store = NULL;
  assert_ok(hetc_records_open(in_dir("s.sqlite"), &store));
  const char *file = in_dir("bad.jsonl");
  for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); ++c) {
    char *bad = cases[c].from ? good_line_with(cases[c].from, cases[c].to) : strdup(cases[c].to);
    size_t size = 2 * sizeof(good_line) + strlen(bad) + 8;
    char *text = malloc(size);
    snprintf(text, size, "%s\n%s\n\n%s\n", good_line, bad, good_line);
    write_file(file, text, strlen(text));
    char expected[1024];
    snprintf(expected, sizeof(expected), "%s:2: %s", file, cases[c].message);
    int32_t imported = -1;
    hetc_status_t status = hetc_records_import_jsonl(store, file, &imported, NULL);
    if (!status) fail_msg("case %zu was accepted: %s", c, bad);
    if (strcmp(hetc_status_message(status), expected) != 0) {
      fail_msg("case %zu: got\n  %s\nexpected\n  %s", c, hetc_status_message(status), expected);
    }
    assert_failure(status, HETC_STATUS_INVALID_ARGUMENT, expected);
    assert_int_equal(imported, 0);
    free(bad);
    free(text);
  }
  /* A NUL byte, and a count of the malformed lines after the first. */
  char text[4096];
  int length = snprintf(text, sizeof(text), "%s\nab", good_line);
  text[length - 1] = '\0';
  length += snprintf(text + length, sizeof(text) - (size_t)length, "c\n[]\n{}\n");
  write_file(file, text, (size_t)length);
  char expected[512];
  snprintf(expected, sizeof(expected), "%s:2: contains a NUL byte (and 2 more malformed lines)",
           file);
  assert_failure(hetc_records_import_jsonl(store, file, NULL, NULL),
                 HETC_STATUS_INVALID_ARGUMENT, expected);
  int64_t count = -1;
  assert_ok(hetc_records_count(store, &count));
  assert_int_equal(count, 0);
  /* A line longer than a line may be: refused by its length, never read
   * into memory whole. */
  const size_t long_length = HETC_RECORDS_JSONL_MAX_LINE + 10;
  char *huge = malloc(long_length + sizeof(good_line) + 4);
  assert_non_null(huge);
  length = snprintf(huge, sizeof(good_line) + 2, "%s\n", good_line);
  memset(huge + length, 'x', long_length);
  huge[length + (int)long_length] = '\n';
  write_file(file, huge, (size_t)length + long_length + 1);
  free(huge);
  snprintf(expected, sizeof(expected), "%s:2: %zu bytes, more than the %d a line may have", file, long_length,
           HETC_RECORDS_JSONL_MAX_LINE);
  assert_failure(hetc_records_import_jsonl(store, file, NULL, NULL), HETC_STATUS_INVALID_ARGUMENT, expected);
  assert_ok(hetc_records_count(store, &count));
  assert_int_equal(count, 0);
  /* A missing file. */
  snprintf(expected, sizeof(expected), "%s: cannot open: No such file or directory",
           in_dir("missing.jsonl"));
  assert_failure(hetc_records_import_jsonl(store, in_dir("missing.jsonl"), NULL, NULL),
                 HETC_STATUS_IO_ERROR, expected);
  hetc_records_close(store);
}

/* ------------------------------------------------------------------------ */
/* Files that are not stores                                                */
/* ------------------------------------------------------------------------ */

/* Runs `sql` on the store's own database (on the server, in its schema),
 * as another program would. */
static void sqlite_exec_file(const char *path, const char *sql) {
#ifdef RECORDS_ON_SERVER
  char statement[1024];
  snprintf(statement, sizeof(statement), "SET search_path = hetc_records; %s", sql);
  server_sql(strrchr(path, '/') + 1, statement);
  return;
#endif
  sqlite3 *db = NULL;
  assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
  assert_int_equal(sqlite3_exec(db, sql, NULL, NULL, NULL), SQLITE_OK);
  sqlite3_close(db);
}

static void not_a_records_database(void **state) {
  (void)state;
  hetc_records_t *store = NULL;
  char expected[512];
  const char *text_file = in_dir("notes.txt");
  const char notes[] = "these are not tuning records\n";
  write_file(text_file, notes, strlen(notes));
  snprintf(expected, sizeof(expected), "%s: not a hetc records database (not an SQLite file)",
           text_file);
  assert_failure(hetc_records_open(text_file, &store), HETC_STATUS_BAD_INPUT, expected);
  assert_null(store);
  char *after = read_file(text_file);
  assert_string_equal(after, notes); /* untouched */
  free(after);

  const char *foreign = in_dir("foreign.sqlite");
  sqlite_exec_file(foreign, "CREATE TABLE t (x INTEGER)");
  snprintf(expected, sizeof(expected),
           "%s: not a hetc records database (an SQLite database of another application)",
           foreign);
  assert_failure(hetc_records_open(foreign, &store), HETC_STATUS_BAD_INPUT, expected);

  const char *newer = in_dir("newer.sqlite");
  assert_ok(hetc_records_open(newer, &store));
  hetc_records_close(store);
  store = NULL;
  sqlite_exec_file(newer, "PRAGMA user_version = 6");
  snprintf(expected, sizeof(expected),
           "%s: records schema version 6, this hetc reads version 5 (written by a newer hetc)",
           newer);
  assert_failure(hetc_records_open(newer, &store), HETC_STATUS_BAD_INPUT, expected);

  snprintf(expected, sizeof(expected),
           "%s/no/such/dir/r.sqlite: cannot create the records store: No such file or directory",
           dir);
  assert_failure(hetc_records_open(in_dir("no/such/dir/r.sqlite"), &store), HETC_STATUS_IO_ERROR,
                 expected);
}

/* What versions 1 to 4 lacked. */
#define OLDER_THAN_5 "DROP TABLE claims; DROP INDEX records_by_config; "

static int64_t schema_version(const char *path) {
#ifdef RECORDS_ON_SERVER
  return server_sql(strrchr(path, '/') + 1,
                    "SELECT value::bigint FROM hetc_records.meta WHERE key = 'schema_version'");
#endif
  sqlite3 *db = NULL;
  assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
  sqlite3_stmt *stmt = NULL;
  assert_int_equal(sqlite3_prepare_v2(db, "PRAGMA user_version", -1, &stmt, NULL), SQLITE_OK);
  assert_int_equal(sqlite3_step(stmt), SQLITE_ROW);
  int64_t version = sqlite3_column_int64(stmt, 0);
  sqlite3_finalize(stmt);
  sqlite3_close(db);
  return version;
}

/* A version-1 store (records only) is upgraded on open: its records stay,
 * it gains the transfers, peaks and selections tables and the current
 * version. */
static void version_1_is_upgraded(void **state) {
  (void)state;
  const char *path = in_dir("v1.sqlite");
  hetc_records_t *store = NULL;
  assert_ok(hetc_records_open(path, &store));
  hetc_record_t r = make_record("cpu:a", W_BIG, "t", 1, 0, HETC_RECORD_OK, 2e-3, 0);
  assert_ok(hetc_records_add(store, &r, 1));
  hetc_record_clear(&r);
  hetc_records_close(store);
  /* Back to what version 1 wrote. */
  sqlite_exec_file(path, "DROP TABLE transfers; DROP TABLE peaks; DROP TABLE selections; " OLDER_THAN_5 "PRAGMA user_version = 1");
  assert_ok(hetc_records_open(path, &store));
  int64_t count = 0;
  assert_ok(hetc_records_count(store, &count));
  assert_int_equal(count, 1);
  hetc_transfer_cost_t cost = {1e-5, 1e-10}, back;
  int found = 0;
  assert_ok(hetc_records_get_transfer(store, "cpu:a", HETC_TRANSFER_TO_HOST, &back, &found));
  assert_int_equal(found, 0);
  assert_ok(hetc_records_put_transfer(store, "cpu:a", HETC_TRANSFER_TO_HOST, &cost));
  hetc_kept_peak_t peak;
  assert_ok(hetc_records_get_peak(store, "cpu:a", &peak, &found));
  assert_int_equal(found, 0);
  assert_ok(hetc_records_note_peak(store, "cpu:a", "cpu", 200, &peak));
  assert_true(peak.gflops == 200 && peak.runs == 1);
  hetc_records_close(store);
  assert_int_equal(schema_version(path), 5);
}

/* A version-2 store (records and transfers) is upgraded on open: both
 * stay as they were, and it gains the peaks and selections tables and
 * version 4. */
static void version_2_is_upgraded(void **state) {
  (void)state;
  const char *path = in_dir("v2.sqlite");
  hetc_records_t *store = NULL;
  assert_ok(hetc_records_open(path, &store));
  hetc_record_t r = make_record("cpu:a", W_BIG, "t", 1, 0, HETC_RECORD_OK, 2e-3, 0);
  assert_ok(hetc_records_add(store, &r, 1));
  hetc_record_clear(&r);
  hetc_transfer_cost_t cost = {2.5e-6, 1.25e-10}, back;
  assert_ok(hetc_records_put_transfer(store, "opencl|pocl", HETC_TRANSFER_TO_DEVICE, &cost));
  hetc_records_close(store);
  /* Back to what version 2 wrote. */
  sqlite_exec_file(path, "DROP TABLE peaks; DROP TABLE selections; " OLDER_THAN_5 "PRAGMA user_version = 2");
  assert_int_equal(schema_version(path), 2);
  assert_ok(hetc_records_open(path, &store));
  int64_t count = 0;
  assert_ok(hetc_records_count(store, &count));
  assert_int_equal(count, 1);
  int found = 0;
  assert_ok(hetc_records_get_transfer(store, "opencl|pocl", HETC_TRANSFER_TO_DEVICE, &back, &found));
  assert_int_equal(found, 1);
  assert_true(back.latency_seconds == 2.5e-6 && back.seconds_per_byte == 1.25e-10);
  hetc_kept_peak_t peak;
  assert_ok(hetc_records_get_peak(store, "opencl|pocl", &peak, &found));
  assert_int_equal(found, 0);
  assert_ok(hetc_records_note_peak(store, "opencl|pocl", "opencl", 233.5, &peak));
  assert_true(peak.gflops == 233.5 && peak.runs == 1);
  hetc_records_close(store);
  assert_int_equal(schema_version(path), 5);
  /* Opening an upgraded store again changes nothing. */
  assert_ok(hetc_records_open(path, &store));
  assert_ok(hetc_records_get_peak(store, "opencl|pocl", &peak, &found));
  assert_true(found && peak.gflops == 233.5 && peak.runs == 1);
  hetc_records_close(store);
}

/* A kept selection reads back entry for entry (a default config as NULL),
 * is replaced as a whole, and is kept apart per model and per targets; a
 * version-3 store gains the table on open. */
static void selections_round_trip(void **state) {
  (void)state;
  const char *path = in_dir("selections.sqlite");
  hetc_records_t *store = NULL;
  assert_ok(hetc_records_open(path, &store));
  hetc_records_close(store);
#ifndef RECORDS_ON_SERVER /* a file of version 3, which a server never held */
  sqlite_exec_file(path, "DROP TABLE selections; " OLDER_THAN_5 "PRAGMA user_version = 3");
#endif
  assert_ok(hetc_records_open(path, &store));
  hetc_selection_entry_t entries[2] = {
      {"conv1", 0, "cpu_conv2d_nchwc", 2, "{\"tile_ic\":[8]}", "tuned"},
      {"pool", 1, "vec_pool2d", 1, NULL, "default"}};
  hetc_selection_t kept = {2, entries, 1.5e-3, 17}, back;
  assert_ok(hetc_records_put_selection(store, "00ff", "cpu=a;vec=b", &kept));
  assert_ok(hetc_records_get_selection(store, "00ff", "cpu=a;vec=b", &back));
  assert_int_equal(back.count, 2);
  assert_true(back.predicted_seconds == 1.5e-3 && back.records == 17);
  assert_string_equal(back.entries[0].node, "conv1");
  assert_int_equal(back.entries[0].device, 0);
  assert_string_equal(back.entries[0].template_name, "cpu_conv2d_nchwc");
  assert_int_equal(back.entries[0].template_version, 2);
  assert_string_equal(back.entries[0].config_json, "{\"tile_ic\":[8]}");
  assert_string_equal(back.entries[0].source, "tuned");
  assert_string_equal(back.entries[1].node, "pool");
  assert_int_equal(back.entries[1].device, 1);
  assert_null(back.entries[1].config_json);
  hetc_selection_free(&back);
  /* Other targets or another model: nothing. */
  assert_ok(hetc_records_get_selection(store, "00ff", "cpu=a", &back));
  assert_int_equal(back.count, 0);
  assert_ok(hetc_records_get_selection(store, "0100", "cpu=a;vec=b", &back));
  assert_int_equal(back.count, 0);
  /* Replaced as a whole. */
  hetc_selection_t one = {1, entries + 1, 2e-3, 18};
  assert_ok(hetc_records_put_selection(store, "00ff", "cpu=a;vec=b", &one));
  assert_ok(hetc_records_get_selection(store, "00ff", "cpu=a;vec=b", &back));
  assert_int_equal(back.count, 1);
  assert_string_equal(back.entries[0].node, "pool");
  assert_true(back.predicted_seconds == 2e-3 && back.records == 18);
  hetc_selection_free(&back);
  hetc_records_close(store);
  assert_int_equal(schema_version(path), 5);
}

/* The kept peak of a fingerprint is the best measurement folded in, with
 * the number of measurements and the time of the best; fingerprints are
 * kept apart; nonsense is refused and changes nothing. */
static void peaks_keep_the_best(void **state) {
  (void)state;
  hetc_records_t *store = NULL;
  assert_ok(hetc_records_open(in_dir("p.sqlite"), &store));
  hetc_kept_peak_t peak = {0, 0, 0}, back = {0, 0, 0};
  int found = -1;
  assert_ok(hetc_records_get_peak(store, "cpu:a", &back, &found));
  assert_int_equal(found, 0);
  assert_ok(hetc_records_note_peak(store, "cpu:a", "cpu", 118.25, &peak));
  assert_true(peak.gflops == 118.25 && peak.runs == 1 && peak.timestamp > 1700000000);
  assert_ok(hetc_records_note_peak(store, "cpu:a", "cpu", 233.5, &peak));
  assert_true(peak.gflops == 233.5 && peak.runs == 2);
  /* A lower measurement counts as a run but never lowers the best. */
  sqlite_exec_file(in_dir("p.sqlite"), "UPDATE peaks SET timestamp = 1700000000");
  assert_ok(hetc_records_note_peak(store, "cpu:a", "cpu", 7.75, &peak));
  assert_true(peak.gflops == 233.5 && peak.runs == 3 && peak.timestamp == 1700000000);
  assert_ok(hetc_records_note_peak(store, "cpu:a", "cpu", 233.5, NULL));
  assert_ok(hetc_records_get_peak(store, "cpu:a", &back, &found));
  assert_true(found == 1 && back.gflops == 233.5 && back.runs == 4 && back.timestamp == 1700000000);
  /* Another fingerprint has its own. */
  assert_ok(hetc_records_note_peak(store, "vec:a", "vec", 50, &peak));
  assert_true(peak.gflops == 50 && peak.runs == 1);
  assert_ok(hetc_records_get_peak(store, "cpu:a", &back, &found));
  assert_true(back.gflops == 233.5 && back.runs == 4);
  assert_ok(hetc_records_get_peak(store, "cuda|x", &back, &found));
  assert_int_equal(found, 0);
  assert_failure(hetc_records_note_peak(store, "cpu:a", "cpu", 0, NULL), HETC_STATUS_INVALID_ARGUMENT,
                 "records store: peak 0 GFLOPS of cpu:a (expected a finite number > 0)");
  assert_failure(hetc_records_note_peak(store, "cpu:a", "cpu", INFINITY, NULL), HETC_STATUS_INVALID_ARGUMENT,
                 "records store: peak inf GFLOPS of cpu:a (expected a finite number > 0)");
  assert_failure(hetc_records_note_peak(store, "cpu:a", "cpu", NAN, NULL), HETC_STATUS_INVALID_ARGUMENT,
                 "records store: peak nan GFLOPS of cpu:a (expected a finite number > 0)");
  assert_failure(hetc_records_note_peak(store, "", "cpu", 1, NULL), HETC_STATUS_INVALID_ARGUMENT,
                 "records store: a peak needs a device fingerprint");
  assert_ok(hetc_records_get_peak(store, "cpu:a", &back, &found));
  assert_true(back.gflops == 233.5 && back.runs == 4);
  hetc_records_close(store);
}

/* Processes folding measurements into one store at once lose none: every
 * run is counted and the best is the best of all. */
#define PEAK_WRITERS 4
#define PEAK_NOTES 25
static void concurrent_peaks(void **state) {
  (void)state;
  const char *path = in_dir("peaks.sqlite");
  hetc_records_t *store = NULL;
  assert_ok(hetc_records_open(path, &store));
  hetc_records_close(store);
  pid_t children[PEAK_WRITERS];
  for (int c = 0; c < PEAK_WRITERS; ++c) {
    fflush(NULL);
    children[c] = fork();
    assert_true(children[c] >= 0);
    if (children[c] == 0) {
      hetc_records_t *own = NULL;
      hetc_status_t status = hetc_records_open(path, &own);
      for (int i = 0; !status && i < PEAK_NOTES; ++i)
        status = hetc_records_note_peak(own, "cpu:shared", "cpu", 100 + c * PEAK_NOTES + i, NULL);
      int failed = status != NULL;
      hetc_status_free(status);
      hetc_records_close(own);
      _exit(failed);
    }
  }
  for (int c = 0; c < PEAK_WRITERS; ++c) {
    int status = 0;
    assert_int_equal(waitpid(children[c], &status, 0), children[c]);
    assert_true(WIFEXITED(status));
    assert_int_equal(WEXITSTATUS(status), 0);
  }
  assert_ok(hetc_records_open(path, &store));
  hetc_kept_peak_t peak;
  int found = 0;
  assert_ok(hetc_records_get_peak(store, "cpu:shared", &peak, &found));
  assert_int_equal(found, 1);
  assert_int_equal(peak.runs, PEAK_WRITERS * PEAK_NOTES);
  assert_true(peak.gflops == 100 + PEAK_WRITERS * PEAK_NOTES - 1);
  hetc_records_close(store);
}

/* Transfer costs come back exactly, per device and direction; a second
 * measurement replaces the first; nonsense is refused. */
static void transfers_round_trip(void **state) {
  (void)state;
  hetc_records_t *store = NULL;
  assert_ok(hetc_records_open(in_dir("t.sqlite"), &store));
  hetc_transfer_cost_t to_device = {3.25e-6, 1.5e-10}, to_host = {4.5e-6, 2.75e-10}, back;
  int found = 0;
  assert_ok(hetc_records_put_transfer(store, "opencl|pocl", HETC_TRANSFER_TO_DEVICE, &to_device));
  assert_ok(hetc_records_put_transfer(store, "opencl|pocl", HETC_TRANSFER_TO_HOST, &to_host));
  assert_ok(hetc_records_get_transfer(store, "opencl|pocl", HETC_TRANSFER_TO_DEVICE, &back, &found));
  assert_int_equal(found, 1);
  assert_true(back.latency_seconds == 3.25e-6 && back.seconds_per_byte == 1.5e-10);
  assert_ok(hetc_records_get_transfer(store, "opencl|pocl", HETC_TRANSFER_TO_HOST, &back, &found));
  assert_true(back.latency_seconds == 4.5e-6 && back.seconds_per_byte == 2.75e-10);
  to_host.latency_seconds = 5e-6;
  assert_ok(hetc_records_put_transfer(store, "opencl|pocl", HETC_TRANSFER_TO_HOST, &to_host));
  assert_ok(hetc_records_get_transfer(store, "opencl|pocl", HETC_TRANSFER_TO_HOST, &back, &found));
  assert_true(back.latency_seconds == 5e-6);
  assert_ok(hetc_records_get_transfer(store, "cuda|x", HETC_TRANSFER_TO_HOST, &back, &found));
  assert_int_equal(found, 0);
  hetc_transfer_cost_t bad = {-1, 0};
  assert_failure(hetc_records_put_transfer(store, "x", HETC_TRANSFER_TO_HOST, &bad), HETC_STATUS_INVALID_ARGUMENT,
                 "records store: transfer cost -1 s + 0 s/byte");
  hetc_records_close(store);
}

/* ------------------------------------------------------------------------ */
/* Default location                                                         */
/* ------------------------------------------------------------------------ */

static void set_env(const char *name, const char *value) {
  if (value) setenv(name, value, 1);
  else unsetenv(name);
}

static void default_path(void **state) {
  (void)state;
  const char *names[] = {"HETC_RECORDS", "XDG_DATA_HOME", "HOME"};
  char *saved[3];
  for (int i = 0; i < 3; ++i) saved[i] = getenv(names[i]) ? strdup(getenv(names[i])) : NULL;
  struct {
    const char *records, *xdg, *home, *expected;
  } cases[] = {
      {"/x/r.sqlite", "/data", "/home/u", "/x/r.sqlite"},
      {"", "/data", "/home/u", "/data/hetc/records.sqlite"},
      {NULL, "relative", "/home/u", "/home/u/.local/share/hetc/records.sqlite"},
      {NULL, NULL, "/home/u", "/home/u/.local/share/hetc/records.sqlite"},
      {NULL, NULL, NULL, NULL},
  };
  for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); ++c) {
    set_env("HETC_RECORDS", cases[c].records);
    set_env("XDG_DATA_HOME", cases[c].xdg);
    set_env("HOME", cases[c].home);
    char *path = hetc_records_default_path();
    if (cases[c].expected) assert_string_equal(path, cases[c].expected);
    else assert_null(path);
    free(path);
  }
  hetc_records_t *store = NULL;
  assert_failure(hetc_records_open(NULL, &store), HETC_STATUS_NOT_FOUND,
                 "no records store: set HETC_RECORDS, XDG_DATA_HOME or HOME, or name one with "
                 "--records");
  /* Opening the default store creates its directories. */
  char xdg[512];
  snprintf(xdg, sizeof(xdg), "%s/xdg/data", dir);
  set_env("XDG_DATA_HOME", xdg);
  assert_ok(hetc_records_open(NULL, &store));
  char expected[600];
  snprintf(expected, sizeof(expected), "%s/hetc/records.sqlite", xdg);
  assert_string_equal(hetc_records_path(store), expected);
  hetc_records_close(store);
  struct stat info;
  assert_int_equal(stat(expected, &info), 0);
  for (int i = 0; i < 3; ++i) {
    set_env(names[i], saved[i]);
    free(saved[i]);
  }
}

/* ------------------------------------------------------------------------ */
/* Several writers                                                          */
/* ------------------------------------------------------------------------ */

#define WRITERS 4
#define PER_WRITER 200

static double child_cost(int child, int i) { return 1e-6 * (child * 1000 + i + 1); }

/* Runs in a child: adds PER_WRITER records in batches of 1 to 3. */
static int write_as_child(const char *path, int child) {
  hetc_records_t *store = NULL;
  hetc_status_t status = hetc_records_open(path, &store);
  char workload[64];
  snprintf(workload, sizeof(workload), "dense n1 k%d units10 f32", child + 1);
  for (int i = 0; i < PER_WRITER && !status;) {
    hetc_record_t batch[3];
    int n = 1 + (i % 3);
    if (n > PER_WRITER - i) n = PER_WRITER - i;
    for (int b = 0; b < n; ++b) {
      batch[b] = make_record("cpu:shared", workload, "t", 1, i + b, HETC_RECORD_OK,
                             child_cost(child, i + b), 1700000000 + i + b);
    }
    status = hetc_records_add(store, batch, n);
    free_records(batch, n);
    i += n;
  }
  if (status) fprintf(stderr, "writer %d: %s\n", child, hetc_status_message(status));
  int failed = status != NULL;
  hetc_status_free(status);
  hetc_records_close(store);
  return failed;
}

static void concurrent_writers(void **state) {
  (void)state;
  const char *path = in_dir("shared.sqlite");
  /* The parent creates the store, then closes it: no connection crosses fork. */
  assert_int_equal(count_records(path), 0);
  pid_t children[WRITERS];
  for (int c = 0; c < WRITERS; ++c) {
    fflush(NULL);
    children[c] = fork();
    assert_true(children[c] >= 0);
    if (children[c] == 0) _exit(write_as_child(path, c));
  }
  for (int c = 0; c < WRITERS; ++c) {
    int status = 0;
    assert_int_equal(waitpid(children[c], &status, 0), children[c]);
    assert_true(WIFEXITED(status));
    assert_int_equal(WEXITSTATUS(status), 0);
  }
  hetc_records_t *store = NULL;
  assert_ok(hetc_records_open(path, &store));
  hetc_record_list_t list;
  assert_ok(hetc_records_query(store, NULL, &list));
  assert_int_equal(list.count, WRITERS * PER_WRITER);
  int seen[WRITERS][PER_WRITER];
  memset(seen, 0, sizeof(seen));
  for (int32_t r = 0; r < list.count; ++r) {
    const hetc_record_t *rec = &list.items[r];
    int k = 0;
    assert_int_equal(sscanf(rec->workload_key, "dense n1 k%d", &k), 1);
    int child = k - 1, i = (int)rec->config_index;
    assert_true(child >= 0 && child < WRITERS && i >= 0 && i < PER_WRITER);
    ++seen[child][i];
    hetc_record_t want = make_record("cpu:shared", rec->workload_key, "t", 1, i, HETC_RECORD_OK,
                                     child_cost(child, i), 1700000000 + i);
    assert_record_equal(rec, &want);
    hetc_record_clear(&want);
  }
  for (int c = 0; c < WRITERS; ++c) {
    for (int i = 0; i < PER_WRITER; ++i) assert_int_equal(seen[c][i], 1);
  }
  hetc_record_list_free(&list);
  hetc_records_close(store);
}

/* ------------------------------------------------------------------------ */
/* Pruning                                                                  */
/* ------------------------------------------------------------------------ */

static void prune_keeps_its_rule(void **state) {
  (void)state;
  enum { MAX = 64 };
  hetc_record_t records[MAX];
  int32_t n = 0;
  /* (cpu:a, W, t, v2): 15 ok with costs 1..15 ms (index = cost in ms),
   * one ok without costs (index 99): the 10 cheapest stay. */
  for (int i = 15; i >= 1; --i) {
    records[n++] = make_record("cpu:a", W_BIG, "t", 2, i, HETC_RECORD_OK, i * 1e-3, 100 + i);
  }
  records[n] = make_record("cpu:a", W_BIG, "t", 2, 99, HETC_RECORD_OK, 1e-3, 50);
  records[n++].num_costs = 0;
  /* Failed records of the current t v2: all stay. */
  for (int i = 0; i < 4; ++i) {
    records[n++] = make_record("cpu:a", W_BIG, "t", 2, 200 + i, HETC_RECORD_BUILD_TIMEOUT, 0, 1);
  }
  /* t v1 is not current: its 3 ok records stay (fewer than 10), its 2
   * failed records go. */
  for (int i = 0; i < 3; ++i) {
    records[n++] = make_record("cpu:a", W_BIG, "t", 1, 300 + i, HETC_RECORD_OK, 1e-3, 1);
  }
  for (int i = 0; i < 2; ++i) {
    records[n++] = make_record("cpu:a", W_BIG, "t", 1, 400 + i, HETC_RECORD_WRONG_ANSWER, 0, 1);
  }
  /* Another device: 12 ok, 10 stay. Another template u v1 (current): its
   * failed record stays. */
  for (int i = 0; i < 12; ++i) {
    records[n++] = make_record("cpu:b", W_BIG, "t", 2, 500 + i, HETC_RECORD_OK, (i + 1) * 1e-3, 1);
  }
  records[n++] = make_record("cpu:a", W_BIG, "u", 1, 600, HETC_RECORD_INSTANTIATION, 0, 1);
  /* Template w: v2 has only ok records, v1 only failed ones. With keep 0
   * the v2 records go, and v1's failures go too: v2 was current. */
  records[n++] = make_record("cpu:a", W_BIG, "w", 2, 700, HETC_RECORD_OK, 1e-3, 1);
  records[n++] = make_record("cpu:a", W_BIG, "w", 1, 701, HETC_RECORD_RUNTIME_DEVICE, 0, 1);
  assert_true(n <= MAX);

  hetc_records_t *store = NULL;
  assert_ok(hetc_records_open(in_dir("s.sqlite"), &store));
  assert_ok(hetc_records_add(store, records, n));
  int64_t removed = -1;
  assert_ok(hetc_records_prune(store, 10, &removed));
  /* 6 of t v2 on cpu:a, 2 failed t v1, 2 on cpu:b, w v1's failure. */
  assert_int_equal(removed, 11);
  hetc_record_list_t list;
  assert_ok(hetc_records_query(store, NULL, &list));
  assert_int_equal(list.count, n - 11);
  int kept[800];
  memset(kept, 0, sizeof(kept));
  for (int32_t i = 0; i < list.count; ++i) kept[list.items[i].config_index] = 1;
  for (int i = 1; i <= 15; ++i) assert_int_equal(kept[i], i <= 10);
  assert_int_equal(kept[99], 0);
  for (int i = 0; i < 4; ++i) assert_int_equal(kept[200 + i], 1);
  for (int i = 0; i < 3; ++i) assert_int_equal(kept[300 + i], 1);
  for (int i = 0; i < 2; ++i) assert_int_equal(kept[400 + i], 0);
  for (int i = 0; i < 12; ++i) assert_int_equal(kept[500 + i], i < 10);
  assert_int_equal(kept[600], 1);
  assert_int_equal(kept[700], 1);
  assert_int_equal(kept[701], 0);
  hetc_record_list_free(&list);

  /* keep 0: only the failures of current versions remain. */
  assert_ok(hetc_records_prune(store, 0, &removed));
  assert_int_equal(removed, 10 + 3 + 10 + 1);
  assert_ok(hetc_records_query(store, NULL, &list));
  assert_int_equal(list.count, 5);
  for (int32_t i = 0; i < list.count; ++i) {
    assert_int_not_equal(list.items[i].error, HETC_RECORD_OK);
  }
  hetc_record_list_free(&list);
  assert_failure(hetc_records_prune(store, -1, NULL), HETC_STATUS_INVALID_ARGUMENT,
                 "records prune: keep -1 < 0");
  free_records(records, n);
  hetc_records_close(store);
}

/* ------------------------------------------------------------------------ */
/* hetc records                                                             */
/* ------------------------------------------------------------------------ */

static char hetc[1024];

/* Runs `hetc ARGS > out 2> err` in the test directory; the exit status. */
static int run_hetc(const char *args) {
  char command[4096];
  snprintf(command, sizeof(command), "cd '%s' && '%s' %s > out.txt 2> err.txt", dir, hetc, args);
  int status = system(command);
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

static void assert_output(const char *name, const char *expected) {
  char *text = read_file(in_dir(name));
  assert_string_equal(text, expected);
  free(text);
}

static void cli_records(void **state) {
  (void)state;
  const char *binary_dir = getenv("HETC_BINARY_DIR");
  if (!binary_dir) skip();
  snprintf(hetc, sizeof(hetc), "%s/bin/hetc", binary_dir);

  hetc_records_t *store = NULL;
  assert_ok(hetc_records_open(in_dir("a.sqlite"), &store));
  hetc_record_t records[6] = {
      make_record("cpu:a", W_BIG, "t", 2, 1, HETC_RECORD_OK, 2e-3, 1700000000),
      make_record("cpu:a", W_BIG, "u", 1, 2, HETC_RECORD_OK, 1.5e-3, 1700000001),
      make_record("cpu:a", W_DEEP, "t", 2, 3, HETC_RECORD_OK, 0.25e-3, 1700000002),
      make_record("cpu:a", W_DEEP, "t", 2, 4, HETC_RECORD_COMPILE_HOST, 0, 1700000003),
      make_record("cpu:b", W_BIG, "t", 2, 5, HETC_RECORD_OK, 1e-3, 1700000004),
      make_record("cpu:b", W_BIG, "t", 2, 6, HETC_RECORD_OK, 3e-3, 1700000005),
  };
  assert_ok(hetc_records_add(store, records, 6));
  hetc_records_close(store);
  free_records(records, 6);

  assert_int_equal(run_hetc("records export a.jsonl --records a.sqlite"), 0);
  assert_output("out.txt", "exported 6 records to a.jsonl\n");
  assert_int_equal(run_hetc("records export cpu-b.jsonl --records a.sqlite --device cpu:b --ok"),
                   0);
  assert_output("out.txt", "exported 2 records to cpu-b.jsonl\n");
  assert_int_equal(run_hetc("records import a.jsonl --records b.sqlite"), 0);
  assert_output("out.txt", "imported 6 records from a.jsonl into b.sqlite (0 already there)\n");
  assert_int_equal(run_hetc("records import a.jsonl --records b.sqlite"), 0);
  assert_output("out.txt", "imported 0 records from a.jsonl into b.sqlite (6 already there)\n");
  /* A pipe, which can be read only once, imports the same. */
  char piped[2048];
  snprintf(piped, sizeof(piped), "cd '%s' && cat a.jsonl | '%s' records import /dev/stdin --records c.sqlite > out.txt",
           dir, hetc);
  assert_int_equal(system(piped), 0);
  assert_output("out.txt", "imported 6 records from /dev/stdin into c.sqlite (0 already there)\n");
  assert_int_equal(run_hetc("records best --records b.sqlite"), 0);
  assert_output("out.txt",
                "cpu on cpu:a\n"
                "  " W_DEEP ": t v2, 0.2500 ms (3 runs), #3 {\"tile\":[3],\"unroll\":[1,2]}\n"
                "  " W_BIG ": u v1, 1.5000 ms (3 runs), #2 {\"tile\":[2],\"unroll\":[1,2]}\n"
                "cpu on cpu:b\n"
                "  " W_BIG ": t v2, 1.0000 ms (3 runs), #5 {\"tile\":[5],\"unroll\":[1,2]}\n"
                "3 tuned workloads in b.sqlite\n");
  assert_int_equal(run_hetc("records list --records b.sqlite --target cpu --limit 4"), 0);
  assert_output("out.txt",
                "2023-11-14T22:13:20Z  cpu  t v2  #1 {\"tile\":[1],\"unroll\":[1,2]}  2.0000 ms "
                "(3 runs)  | " W_BIG " | cpu:a\n"
                "2023-11-14T22:13:21Z  cpu  u v1  #2 {\"tile\":[2],\"unroll\":[1,2]}  1.5000 ms "
                "(3 runs)  | " W_BIG " | cpu:a\n"
                "2023-11-14T22:13:22Z  cpu  t v2  #3 {\"tile\":[3],\"unroll\":[1,2]}  0.2500 ms "
                "(3 runs)  | " W_DEEP " | cpu:a\n"
                "2023-11-14T22:13:23Z  cpu  t v2  #4 {\"tile\":[4],\"unroll\":[1,2]}  "
                "compile_host: template refused it  | " W_DEEP " | cpu:a\n"
                "4 records in b.sqlite\n");
  assert_int_equal(run_hetc("records prune --records b.sqlite --keep 1"), 0);
  assert_output("out.txt", "removed 1 record, 5 left in b.sqlite\n");

  /* A malformed file: exit 2, the message, nothing imported. */
  const char bad[] = "{\"input\":[]}\n";
  write_file(in_dir("bad.jsonl"), bad, strlen(bad));
  assert_int_equal(run_hetc("records import bad.jsonl --records b.sqlite"), 2);
  assert_output("out.txt", "");
  assert_output("err.txt", "hetc: bad.jsonl:1: /: missing required key \"config\"\n");
  assert_int_equal(count_records(in_dir("b.sqlite")), 5);

  /* Stores that do not exist are refused by the commands that only read
   * them (and prune), by name, and none is created; an empty path is no
   * store; a busy timeout that is not one is refused by its name. */
  const char *const refusing[] = {"records list --records nope.sqlite", "records best --records nope.sqlite",
                                  "records export n.jsonl --records nope.sqlite", "records prune --records nope.sqlite"};
  for (int k = 0; k < 4; ++k) {
    assert_int_equal(run_hetc(refusing[k]), 2);
    assert_output("out.txt", "");
    assert_output("err.txt", "hetc: nope.sqlite: no records store there (hetc tune and hetc records import create one)\n");
  }
  assert_false(exists(in_dir("nope.sqlite")));
  assert_false(exists(in_dir("n.jsonl")));
  assert_int_equal(run_hetc("records import a.jsonl --records ''"), 2);
  char *said = read_file(in_dir("err.txt"));
  const char *first_line = "hetc records import: --records: expected a path, got ''\n";
  if (strncmp(said, first_line, strlen(first_line))) fail_msg("stderr: %s", said);
  free(said);
  setenv("HETC_RECORDS_BUSY_TIMEOUT", "soon", 1);
  assert_int_equal(run_hetc("records list --records b.sqlite"), 2);
  unsetenv("HETC_RECORDS_BUSY_TIMEOUT");
  assert_output("err.txt", "hetc: HETC_RECORDS_BUSY_TIMEOUT: expected seconds from 0 to 86400, got 'soon'\n");

  /* Not a store, and usage errors. */
  assert_int_equal(run_hetc("records list --records bad.jsonl"), 2);
  assert_output("err.txt", "hetc: bad.jsonl: not a hetc records database (not an SQLite file)\n");
  assert_int_equal(run_hetc("records"), 2);
  assert_int_equal(run_hetc("records frobnicate"), 2);
  assert_int_equal(run_hetc("records list --keep 3 --records b.sqlite"), 2);
  assert_int_equal(run_hetc("records import --records b.sqlite"), 2);
  assert_int_equal(run_hetc("records prune --keep -1 --records b.sqlite"), 2);
  assert_int_equal(run_hetc("records list --limit x --records b.sqlite"), 2);
}

/* ------------------------------------------------------------------------ */
/* Opening: who creates, who only reads                                     */
/* ------------------------------------------------------------------------ */

/* Only CREATE makes a store; an empty path is no store for anyone; an
 * empty file is none except to CREATE; a directory is none. */
static void opening_modes(void **state) {
  (void)state;
  hetc_records_t *store = NULL;
  const hetc_records_mode_t modes[] = {HETC_RECORDS_READ, HETC_RECORDS_CACHE, HETC_RECORDS_WRITE,
                                       HETC_RECORDS_CREATE};
  for (size_t m = 0; m < 4; ++m) {
    assert_failure(hetc_records_open_as("", modes[m], &store), HETC_STATUS_BAD_INPUT,
                   "an empty path names no records store");
    assert_null(store);
  }
  char expected[1024];
  const char *missing = in_dir("missing.sqlite");
  snprintf(expected, sizeof(expected), "%s: no records store there (hetc tune and hetc records import create one)",
           missing);
  for (size_t m = 0; m < 3; ++m) {
    assert_failure(hetc_records_open_as(missing, modes[m], &store), HETC_STATUS_NOT_FOUND, expected);
    assert_false(exists(missing));
  }
  const char *empty = in_dir("empty.sqlite");
  write_file(empty, "", 0);
  snprintf(expected, sizeof(expected), "%s: an empty file, not a records store", empty);
  for (size_t m = 0; m < 3; ++m)
    assert_failure(hetc_records_open_as(empty, modes[m], &store), HETC_STATUS_BAD_INPUT, expected);
  struct stat st;
  assert_int_equal(stat(empty, &st), 0);
  assert_int_equal(st.st_size, 0);
  assert_ok(hetc_records_open_as(empty, HETC_RECORDS_CREATE, &store));
  hetc_records_close(store);
  assert_ok(hetc_records_open_as(empty, HETC_RECORDS_READ, &store));
  assert_false(hetc_records_writable(store));
  hetc_records_close(store);
  snprintf(expected, sizeof(expected), "%s: a directory, not a records store", dir);
  assert_failure(hetc_records_open_as(dir, HETC_RECORDS_CREATE, &store), HETC_STATUS_BAD_INPUT, expected);
  /* A store opened to read refuses writes by name; its caches are left
   * alone without a word. */
  assert_ok(hetc_records_open_as(empty, HETC_RECORDS_READ, &store));
  hetc_record_t r = make_record("cpu:a", W_BIG, "t", 1, 1, HETC_RECORD_OK, 1e-3, 1);
  snprintf(expected, sizeof(expected), "%s: adding records: the store was opened for reading", empty);
  assert_failure(hetc_records_add(store, &r, 1), HETC_STATUS_INTERNAL, expected);
  hetc_transfer_cost_t cost = {1e-6, 1e-9};
  assert_ok(hetc_records_put_transfer(store, "cpu:a", HETC_TRANSFER_TO_HOST, &cost));
  hetc_records_close(store);
  hetc_record_clear(&r);
  assert_int_equal(count_records(empty), 0);
}

/* Processes that start together on a store that does not exist yet all
 * open it and write (they raced on its journal mode before). */
static void concurrent_creation(void **state) {
  (void)state;
  enum { CREATORS = 6 };
  for (int round = 0; round < 4; ++round) {
    char name[64];
    snprintf(name, sizeof(name), "new-%d.sqlite", round);
    const char *path = in_dir(name);
    int go[2];
    assert_int_equal(pipe(go), 0);
    pid_t children[CREATORS];
    for (int c = 0; c < CREATORS; ++c) {
      fflush(NULL);
      children[c] = fork();
      assert_true(children[c] >= 0);
      if (children[c] == 0) {
        char byte;
        close(go[1]);
        if (read(go[0], &byte, 1) != 0) _exit(3); /* all start when the pipe closes */
        hetc_records_t *store = NULL;
        hetc_status_t status = hetc_records_open(path, &store);
        hetc_record_t r = make_record("cpu:a", W_BIG, "t", 1, c, HETC_RECORD_OK, 1e-3, c);
        if (!status) status = hetc_records_add(store, &r, 1);
        if (status) fprintf(stderr, "creator %d: %s\n", c, hetc_status_message(status));
        _exit(status ? 1 : 0);
      }
    }
    close(go[0]);
    close(go[1]);
    for (int c = 0; c < CREATORS; ++c) {
      int status = 0;
      assert_int_equal(waitpid(children[c], &status, 0), children[c]);
      assert_true(WIFEXITED(status));
      assert_int_equal(WEXITSTATUS(status), 0);
    }
    assert_int_equal(count_records(path), CREATORS);
  }
  /* No temporary is left beside them. */
  char command[700];
  snprintf(command, sizeof(command), "test -z \"$(ls '%s' | grep -v '^new-[0-9].sqlite')\"", dir);
  assert_int_equal(system(command), 0);
}

/* Reading a store writes nothing to it: an older schema stays older, a
 * rollback-journal store stays one, and the file's bytes are the same. */
static void reading_leaves_the_file_alone(void **state) {
  (void)state;
  const char *path = in_dir("old.sqlite");
  hetc_records_t *store = NULL;
  assert_ok(hetc_records_open(path, &store));
  hetc_record_t r = make_record("cpu:a", W_BIG, "t", 1, 1, HETC_RECORD_OK, 1e-3, 1);
  assert_ok(hetc_records_add(store, &r, 1));
  hetc_records_close(store);
  sqlite_exec_file(path, "PRAGMA journal_mode = DELETE; DROP TABLE selections; " OLDER_THAN_5
                         "PRAGMA user_version = 3");
  char *before = NULL;
  size_t before_length = 0, after_length = 0;
  assert_ok(hetc_file_read_all(path, (size_t)1 << 26, &before, &before_length));
  for (int m = HETC_RECORDS_READ; m <= HETC_RECORDS_CACHE; ++m) {
    assert_ok(hetc_records_open_as(path, (hetc_records_mode_t)m, &store));
    assert_false(hetc_records_writable(store));
    hetc_record_list_t list;
    assert_ok(hetc_records_query(store, NULL, &list));
    assert_int_equal(list.count, 1);
    assert_record_equal(&list.items[0], &r);
    hetc_record_list_free(&list);
    hetc_selection_t selection;
    assert_ok(hetc_records_get_selection(store, "m", "cpu", &selection));
    assert_int_equal(selection.count, 0);
    assert_ok(hetc_records_put_selection(store, "m", "cpu", &selection));
    hetc_records_close(store);
  }
  char *after = NULL;
  assert_ok(hetc_file_read_all(path, (size_t)1 << 26, &after, &after_length));
  assert_int_equal(after_length, before_length);
  assert_memory_equal(after, before, before_length);
  assert_int_equal(schema_version(path), 3);
  free(before);
  free(after);
  /* Writing upgrades it. */
  assert_ok(hetc_records_open_as(path, HETC_RECORDS_WRITE, &store));
  assert_true(hetc_records_writable(store));
  hetc_records_close(store);
  assert_int_equal(schema_version(path), 5);
  hetc_record_clear(&r);
}

/* A store this process may not write, in a directory it may not write
 * either, is listed, exported and looked up all the same (case 14: "reading
 * the schema version: attempt to write a readonly database"). As root the
 * readers run as nobody. */
static void a_read_only_store_is_read(void **state) {
  (void)state;
  const char *binary_dir = getenv("HETC_BINARY_DIR");
  if (!binary_dir) skip();
  char hetc_binary[1024], shelf[600], path[700], out[700], command[8192];
  snprintf(hetc_binary, sizeof(hetc_binary), "%s/bin/hetc", binary_dir);
  snprintf(shelf, sizeof(shelf), "%s/shelf", dir);
  snprintf(path, sizeof(path), "%s/r.sqlite", shelf);
  assert_int_equal(mkdir(shelf, 0755), 0);
  hetc_records_t *store = NULL;
  assert_ok(hetc_records_open(path, &store));
  hetc_record_t r = make_record("cpu:a", W_BIG, "t", 1, 1, HETC_RECORD_OK, 1e-3, 1700000000);
  assert_ok(hetc_records_add(store, &r, 1));
  hetc_record_clear(&r);
  hetc_records_close(store);
  /* The readers' output goes where they may write. */
  snprintf(out, sizeof(out), "%s/out", dir);
  assert_int_equal(mkdir(out, 0777), 0);
  assert_int_equal(chmod(out, 0777), 0);
  assert_int_equal(chmod(dir, 0755), 0);
  assert_int_equal(chmod(path, 0444), 0);
  assert_int_equal(chmod(shelf, 0555), 0);
  const char *const runs[] = {"records list --records '%s'", "records best --records '%s'",
                              "records export '%s/x.jsonl' --records '%s'"};
  const char *const want[] = {"1 record in ", "1 tuned workload in ", "exported 1 record to "};
  for (int k = 0; k < 3; ++k) {
    char args[2048];
    if (k == 2) snprintf(args, sizeof(args), runs[k], out, path);
    else snprintf(args, sizeof(args), runs[k], path);
    snprintf(command, sizeof(command), "%s'%s' %s > '%s/stdout' 2> '%s/stderr'",
             geteuid() == 0 ? "setpriv --reuid=65534 --regid=65534 --clear-groups " : "", hetc_binary, args, out,
             out);
    int status = system(command);
    char stdout_path[800], stderr_path[800];
    snprintf(stdout_path, sizeof(stdout_path), "%s/stdout", out);
    snprintf(stderr_path, sizeof(stderr_path), "%s/stderr", out);
    char *printed = read_file(stdout_path), *complaint = read_file(stderr_path);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0 || !strstr(printed, want[k]))
      fail_msg("%s: exit %d, stdout \"%s\", stderr \"%s\"", args, WEXITSTATUS(status), printed, complaint);
    assert_string_equal(complaint, "");
    free(printed);
    free(complaint);
  }
  assert_int_equal(chmod(shelf, 0755), 0);
  assert_int_equal(chmod(path, 0644), 0);
  assert_int_equal(schema_version(path), 5);
}

/* ------------------------------------------------------------------------ */
/* Damaged stores                                                           */
/* ------------------------------------------------------------------------ */

/* The records table as another tool might leave it: the same columns,
 * none NOT NULL. */
#define LOOSEN_RECORDS                                                                                         \
  "ALTER TABLE records RENAME TO strict; CREATE TABLE records (id INTEGER PRIMARY KEY, target, plugin_version," \
  " device_kind, device_fingerprint, template_name, template_version INTEGER, workload_key, config_index"     \
  " INTEGER, config_json, costs_json, median_cost REAL, error INTEGER, error_message, build_seconds REAL,"    \
  " total_seconds REAL, timestamp INTEGER, hetc_version); INSERT INTO records SELECT * FROM strict;"         \
  " DROP TABLE strict;"

/* A store with a table dropped, or a row no record can be made of, is the
 * user's to mend: BAD_INPUT (exit 2) naming the file and the row's id,
 * never "out of memory" or an SQLite error. */
static void damaged_stores(void **state) {
  (void)state;
  const char *binary_dir = getenv("HETC_BINARY_DIR");
  if (!binary_dir) skip();
  snprintf(hetc, sizeof(hetc), "%s/bin/hetc", binary_dir);
  static const struct {
    const char *sql;
    const char *message; /* after "PATH: " */
  } cases[] = {
      {"DROP TABLE peaks", "damaged records store: schema version 5 has a table 'peaks', this file has none"},
      {"DROP TABLE records", "damaged records store: schema version 5 has a table 'records', this file has none"},
      {"ALTER TABLE records DROP COLUMN error_message",
       "damaged records store: table 'records' has no column 'error_message'"},
      {LOOSEN_RECORDS "UPDATE records SET target = NULL WHERE id = 2",
       "record id 2 is damaged: column 'target' holds NULL, not text"},
      {LOOSEN_RECORDS "UPDATE records SET costs_json = NULL WHERE id = 2",
       "record id 2 is damaged: column 'costs_json' holds NULL, not text"},
      {LOOSEN_RECORDS "UPDATE records SET template_version = 'two' WHERE id = 2",
       "record id 2 is damaged: column 'template_version' holds text, not an integer"},
      {"UPDATE records SET config_json = '{\"tile\":[9007199254740992]}' WHERE id = 2",
       "record id 2 is damaged: config_json: knob \"tile\": values must be integers below 2^53 in magnitude"},
      {"UPDATE records SET device_kind = 'tpu' WHERE id = 2",
       "record id 2 is damaged: device_kind \"tpu\" is not one of cpu, gpu, accelerator"},
      {"UPDATE records SET costs_json = '[1,' WHERE id = 2",
       "record id 2 is damaged: costs_json is not an array of at most 32 numbers"},
      {"UPDATE records SET target = CAST(x'6300ff' AS TEXT) WHERE id = 2",
       "record id 2 is damaged: column 'target' holds a NUL byte"},
  };
  for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); ++c) {
    char name[64];
    snprintf(name, sizeof(name), "damaged-%zu.sqlite", c);
    const char *path = in_dir(name);
    hetc_records_t *store = NULL;
    assert_ok(hetc_records_open(path, &store));
    hetc_record_t records[2] = {make_record("cpu:a", W_BIG, "t", 1, 1, HETC_RECORD_OK, 1e-3, 1),
                                make_record("cpu:a", W_BIG, "t", 1, 2, HETC_RECORD_OK, 2e-3, 2)};
    assert_ok(hetc_records_add(store, records, 2));
    free_records(records, 2);
    hetc_records_close(store);
    sqlite_exec_file(path, cases[c].sql);
    char expected[1024], args[256];
    snprintf(expected, sizeof(expected), "%s: %s", path, cases[c].message);
    hetc_status_t status = hetc_records_open_as(path, HETC_RECORDS_READ, &store);
    hetc_record_list_t list = {0, NULL};
    if (!status) status = hetc_records_query(store, NULL, &list);
    hetc_records_close(store);
    if (!status) fail_msg("case %zu was read: %d records", c, list.count);
    if (strcmp(hetc_status_message(status), expected))
      fail_msg("case %zu: got\n  %s\nexpected\n  %s", c, hetc_status_message(status), expected);
    assert_failure(status, HETC_STATUS_BAD_INPUT, expected);
    /* The command line says the same and exits 2. */
    snprintf(args, sizeof(args), "records list --records %s", name);
    assert_int_equal(run_hetc(args), 2);
    snprintf(expected, sizeof(expected), "hetc: %s: %s\n", name, cases[c].message);
    assert_output("err.txt", expected);
  }
}

/* ------------------------------------------------------------------------ */
/* One record per config, and claims                                        */
/* ------------------------------------------------------------------------ */

/* The store holds each (target, device, workload, template, version,
 * config) once: a second record of it is skipped, by add, by import (where
 * it counts as already there) and by the upgrade of an older store, which
 * keeps the one a lookup would pick. */
static void one_record_per_config(void **state) {
  (void)state;
  const char *path = in_dir("once.sqlite");
  hetc_records_t *store = NULL;
  assert_ok(hetc_records_open(path, &store));
  hetc_record_t first = make_record("cpu:a", W_BIG, "t", 1, 7, HETC_RECORD_OK, 2e-3, 10);
  hetc_record_t again = make_record("cpu:a", W_BIG, "t", 1, 7, HETC_RECORD_OK, 1e-3, 20);
  free(again.config_json);
  again.config_json = strdup("{ \"tile\": [7], \"unroll\": [1, 2] }"); /* the same config, spelled otherwise */
  int32_t added = -1;
  assert_ok(hetc_records_add_new(store, &first, 1, &added));
  assert_int_equal(added, 1);
  assert_ok(hetc_records_add_new(store, &again, 1, &added));
  assert_int_equal(added, 0);
  hetc_record_t both[2] = {again, again}; /* shallow copies */
  both[0].workload_key = strdup(W_DEEP);  /* another workload: a config of its own */
  assert_ok(hetc_records_add_new(store, both, 2, &added));
  assert_int_equal(added, 1);
  free(both[0].workload_key);
  hetc_record_list_t list;
  assert_ok(hetc_records_query(store, NULL, &list));
  assert_int_equal(list.count, 2);
  assert_record_equal(&list.items[0], &first);
  hetc_record_list_free(&list);
  hetc_records_close(store);

  /* Import: another measurement of a stored config is already there. */
  char *line = NULL;
  assert_ok(hetc_record_to_jsonl(&again, &line));
  const char *file = in_dir("again.jsonl");
  write_file(file, line, strlen(line));
  free(line);
  assert_ok(hetc_records_open(path, &store));
  int32_t imported = -1, duplicates = -1;
  assert_ok(hetc_records_import_jsonl(store, file, &imported, &duplicates));
  assert_int_equal(imported, 0);
  assert_int_equal(duplicates, 1);
  hetc_records_close(store);

  /* A version-4 store holding a config three times keeps its best. */
  sqlite_exec_file(path, OLDER_THAN_5 "PRAGMA user_version = 4");
  char sql[1024];
  snprintf(sql, sizeof(sql),
           "INSERT INTO records (target, plugin_version, device_kind, device_fingerprint, template_name,"
           " template_version, workload_key, config_index, config_json, costs_json, median_cost, error,"
           " error_message, build_seconds, total_seconds, timestamp, hetc_version) SELECT target, plugin_version,"
           " device_kind, device_fingerprint, template_name, template_version, workload_key, config_index,"
           " config_json, '[0.0005]', 0.0005, 0, NULL, 0, 0, 30, hetc_version FROM records WHERE id = 1;"
           " INSERT INTO records (target, plugin_version, device_kind, device_fingerprint, template_name,"
           " template_version, workload_key, config_index, config_json, costs_json, median_cost, error,"
           " error_message, build_seconds, total_seconds, timestamp, hetc_version) SELECT target, plugin_version,"
           " device_kind, device_fingerprint, template_name, template_version, workload_key, config_index,"
           " config_json, '[]', NULL, 5, 'killed by signal 9', 0, 0, 5, hetc_version FROM records WHERE id = 1;");
  sqlite_exec_file(path, sql);
  assert_ok(hetc_records_open_as(path, HETC_RECORDS_READ, &store));
  assert_ok(hetc_records_query(store, NULL, &list));
  assert_int_equal(list.count, 4);
  hetc_record_list_free(&list);
  hetc_records_close(store);
  assert_ok(hetc_records_open_as(path, HETC_RECORDS_WRITE, &store));
  hetc_record_filter_t filter = hetc_record_filter_any();
  filter.workload_key = W_BIG;
  assert_ok(hetc_records_query(store, &filter, &list));
  assert_int_equal(list.count, 1);
  assert_int_equal(list.items[0].timestamp, 30);
  assert_true(list.items[0].costs[0] == 0.0005);
  hetc_record_list_free(&list);
  hetc_records_close(store);
  assert_int_equal(count_records(path), 2);
  hetc_record_clear(&first);
  hetc_record_clear(&again);
}

/* A child process that claims `index`'s config, tells the parent, then
 * waits for a byte: 'x' exits without closing the store (as a killed
 * tuner would), 'c' closes it first. */
static pid_t claiming_child(const char *path, int64_t index, int *out_to_child, int *out_from_child) {
  int down[2], up[2];
  assert_int_equal(pipe(down), 0);
  assert_int_equal(pipe(up), 0);
  fflush(NULL);
  pid_t pid = fork();
  assert_true(pid >= 0);
  if (pid == 0) {
    close(down[1]);
    close(up[0]);
    hetc_records_t *store = NULL;
    hetc_record_t r = make_record("cpu:a", W_BIG, "t", 1, index, HETC_RECORD_OK, 1e-3, 1);
    hetc_claim_t claim = HETC_CLAIM_BUSY;
    hetc_status_t status = hetc_records_open(path, &store);
    if (!status) status = hetc_records_claim(store, &r, 1, &claim);
    char answer = status ? 'e' : (char)('0' + claim), order = 0;
    if (write(up[1], &answer, 1) != 1 || read(down[0], &order, 1) != 1) _exit(2);
    if (order == 'c') hetc_records_close(store);
    _exit(0);
  }
  close(down[0]);
  close(up[1]);
  *out_to_child = down[1];
  *out_from_child = up[0];
  return pid;
}

/* Claims between processes: a config claimed by a live tuner is busy to
 * the others, taken over once its owner is gone (killed, nothing
 * released), free again once its owner closes the store, and "recorded"
 * once its record is in. */
static void claims_between_processes(void **state) {
  (void)state;
  const char *path = in_dir("claims.sqlite");
  hetc_records_t *store = NULL;
  assert_ok(hetc_records_open(path, &store));
  hetc_records_close(store);
  const char *const orders = "xc";
  for (int k = 0; k < 2; ++k) {
    int to_child = -1, from_child = -1;
    pid_t pid = claiming_child(path, 3 + k, &to_child, &from_child);
    char answer = 0;
    assert_int_equal(read(from_child, &answer, 1), 1);
    assert_int_equal(answer, '0' + HETC_CLAIM_TAKEN);
    assert_ok(hetc_records_open(path, &store));
    hetc_record_t r = make_record("cpu:a", W_BIG, "t", 1, 3 + k, HETC_RECORD_OK, 1e-3, 1);
    hetc_claim_t claim = HETC_CLAIM_TAKEN;
    assert_ok(hetc_records_claim(store, &r, 1, &claim));
    assert_int_equal(claim, HETC_CLAIM_BUSY);
    assert_int_equal(write(to_child, &orders[k], 1), 1);
    int status = 0;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    close(to_child);
    close(from_child);
    assert_ok(hetc_records_claim(store, &r, 1, &claim));
    assert_int_equal(claim, HETC_CLAIM_TAKEN);
    /* Ours now: claiming it again keeps it ours. */
    assert_ok(hetc_records_claim(store, &r, 1, &claim));
    assert_int_equal(claim, HETC_CLAIM_TAKEN);
    assert_ok(hetc_records_add(store, &r, 1));
    assert_ok(hetc_records_claim(store, &r, 1, &claim));
    assert_int_equal(claim, HETC_CLAIM_RECORDED);
    hetc_record_t found;
    memset(&found, 0, sizeof(found));
    int was_found = 0;
    assert_ok(hetc_records_find(store, &r, &found, &was_found));
    assert_int_equal(was_found, 1);
    assert_record_equal(&found, &r);
    hetc_record_clear(&found);
    hetc_record_clear(&r);
    hetc_records_close(store);
  }
  /* Nothing is left claimed: adding released them, closing the rest. */
#ifdef RECORDS_ON_SERVER
  assert_int_equal(server_sql(strrchr(path, '/') + 1, "SELECT count(*) FROM hetc_records.claims"), 0);
#else
  sqlite3 *db = NULL;
  assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
  sqlite3_stmt *stmt = NULL;
  assert_int_equal(sqlite3_prepare_v2(db, "SELECT count(*) FROM claims", -1, &stmt, NULL), SQLITE_OK);
  assert_int_equal(sqlite3_step(stmt), SQLITE_ROW);
  assert_int_equal(sqlite3_column_int(stmt, 0), 0);
  sqlite3_finalize(stmt);
  sqlite3_close(db);
#endif
}

/* ------------------------------------------------------------------------ */
/* Import at scale, and a full disk                                         */
/* ------------------------------------------------------------------------ */

/* A JSON Lines file of `count` ok records of one workload (distinct
 * configs), fingerprint `fingerprint`. */
static void write_one_workload(const char *file, const char *fingerprint, int count) {
  FILE *out = fopen(file, "w");
  assert_non_null(out);
  for (int i = 0; i < count; ++i) {
    hetc_record_t r = make_record(fingerprint, W_BIG, "t", 1, i, HETC_RECORD_OK, 1e-3 + 1e-9 * i, 1700000000 + i);
    char *line = NULL;
    assert_ok(hetc_record_to_jsonl(&r, &line));
    fprintf(out, "%s\n", line);
    free(line);
    hetc_record_clear(&r);
  }
  assert_int_equal(fclose(out), 0);
}

/* 20000 records of one workload import in a moment (93 s before: each
 * duplicate check scanned the workload's records), and twice as many take
 * about twice as long. */
static void import_is_linear(void **state) {
  (void)state;
  const char *file = in_dir("many.jsonl");
  double seconds[2];
  for (int k = 0; k < 2; ++k) {
#ifdef RECORDS_ON_SERVER
    const int count = 5000 * (k + 1); /* a round trip each */
#else
    const int count = 20000 * (k + 1);
#endif
    write_one_workload(file, k ? "cpu:b" : "cpu:a", count);
    hetc_records_t *store = NULL;
    assert_ok(hetc_records_open(in_dir(k ? "many-b.sqlite" : "many-a.sqlite"), &store));
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    int32_t imported = 0;
    assert_ok(hetc_records_import_jsonl(store, file, &imported, NULL));
    clock_gettime(CLOCK_MONOTONIC, &t1);
    assert_int_equal(imported, count);
    hetc_records_close(store);
    seconds[k] = (double)(t1.tv_sec - t0.tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0.tv_nsec);
    print_message("imported %d records of one workload in %.2f s\n", count, seconds[k]);
  }
  assert_true(seconds[0] < 10);
  /* Quadratic would be 4x; allow for a busy machine. */
  assert_true(seconds[1] < 3.5 * seconds[0] + 1.0);
}

/* A disk that fills up (here a file-size limit) is a failure of the
 * machine, exit 1, not bad input; nothing of the import is kept and the
 * store still reads. */
static void a_full_disk_is_not_bad_input(void **state) {
  (void)state;
  const char *binary_dir = getenv("HETC_BINARY_DIR");
  if (!binary_dir) skip();
  snprintf(hetc, sizeof(hetc), "%s/bin/hetc", binary_dir);
  write_one_workload(in_dir("base.jsonl"), "cpu:a", 2000);
  assert_int_equal(run_hetc("records import base.jsonl --records full.sqlite"), 0);
  write_one_workload(in_dir("more.jsonl"), "cpu:b", 500);
  /* SIGXFSZ ignored: the write fails with EFBIG, as with a full disk. */
  assert_int_equal(run_hetc("records list --records full.sqlite --limit 1"), 0);
  char command[4096];
  snprintf(command, sizeof(command),
           "cd '%s' && trap '' XFSZ && ulimit -f 64 && '%s' records import more.jsonl --records full.sqlite"
           " > out.txt 2> err.txt",
           dir, hetc);
  int status = system(command);
  assert_true(WIFEXITED(status));
  assert_int_equal(WEXITSTATUS(status), 1);
  char *complaint = read_file(in_dir("err.txt"));
  if (strncmp(complaint, "hetc: full.sqlite: ", 19) != 0 ||
      (!strstr(complaint, "disk I/O error") && !strstr(complaint, "database or disk is full")))
    fail_msg("stderr: %s", complaint);
  free(complaint);
  assert_output("out.txt", "");
  assert_int_equal(count_records(in_dir("full.sqlite")), 2000);
}

#ifdef RECORDS_ON_SERVER
/* What holds for any store, on the server: every field round-trips, the
 * queries, lookups, caches, claims between processes, four writers at
 * once, prune's rule, a linear import and six creators at once. */
int main(void) {
  if (!pg_test_server_uri(server_uri, sizeof(server_uri))) return 77;
  *strrchr(server_uri, '/') = '\0';
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(add_query_round_trip, setup, teardown),
      cmocka_unit_test_setup_teardown(add_rejects_invalid_records, setup, teardown),
      cmocka_unit_test_setup_teardown(best_is_lowest_median, setup, teardown),
      cmocka_unit_test_setup_teardown(lookup_exact_nearest_none, setup, teardown),
      cmocka_unit_test_setup_teardown(jsonl_round_trip_byte_identical, setup, teardown),
      cmocka_unit_test_setup_teardown(jsonl_malformed_lines, setup, teardown),
      cmocka_unit_test_setup_teardown(selections_round_trip, setup, teardown),
      cmocka_unit_test_setup_teardown(peaks_keep_the_best, setup, teardown),
      cmocka_unit_test_setup_teardown(concurrent_peaks, setup, teardown),
      cmocka_unit_test_setup_teardown(transfers_round_trip, setup, teardown),
      cmocka_unit_test_setup_teardown(concurrent_writers, setup, teardown),
      cmocka_unit_test_setup_teardown(prune_keeps_its_rule, setup, teardown),
      cmocka_unit_test_setup_teardown(claims_between_processes, setup, teardown),
      cmocka_unit_test_setup_teardown(import_is_linear, setup, teardown),
      cmocka_unit_test_setup_teardown(concurrent_creation, setup, teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
#else
int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(error_names),
      cmocka_unit_test(workload_distance),
      cmocka_unit_test_setup_teardown(add_query_round_trip, setup, teardown),
      cmocka_unit_test_setup_teardown(add_rejects_invalid_records, setup, teardown),
      cmocka_unit_test_setup_teardown(best_is_lowest_median, setup, teardown),
      cmocka_unit_test_setup_teardown(lookup_exact_nearest_none, setup, teardown),
      cmocka_unit_test(jsonl_line_format),
      cmocka_unit_test_setup_teardown(jsonl_round_trip_byte_identical, setup, teardown),
      cmocka_unit_test_setup_teardown(jsonl_malformed_lines, setup, teardown),
      cmocka_unit_test_setup_teardown(not_a_records_database, setup, teardown),
      cmocka_unit_test_setup_teardown(version_1_is_upgraded, setup, teardown),
      cmocka_unit_test_setup_teardown(selections_round_trip, setup, teardown),
      cmocka_unit_test_setup_teardown(version_2_is_upgraded, setup, teardown),
      cmocka_unit_test_setup_teardown(peaks_keep_the_best, setup, teardown),
      cmocka_unit_test_setup_teardown(concurrent_peaks, setup, teardown),
      cmocka_unit_test_setup_teardown(transfers_round_trip, setup, teardown),
      cmocka_unit_test_setup_teardown(default_path, setup, teardown),
      cmocka_unit_test_setup_teardown(concurrent_writers, setup, teardown),
      cmocka_unit_test_setup_teardown(prune_keeps_its_rule, setup, teardown),
      cmocka_unit_test_setup_teardown(cli_records, setup, teardown),
      cmocka_unit_test_setup_teardown(opening_modes, setup, teardown),
      cmocka_unit_test_setup_teardown(concurrent_creation, setup, teardown),
      cmocka_unit_test_setup_teardown(reading_leaves_the_file_alone, setup, teardown),
      cmocka_unit_test_setup_teardown(a_read_only_store_is_read, setup, teardown),
      cmocka_unit_test_setup_teardown(damaged_stores, setup, teardown),
      cmocka_unit_test_setup_teardown(one_record_per_config, setup, teardown),
      cmocka_unit_test_setup_teardown(claims_between_processes, setup, teardown),
      cmocka_unit_test_setup_teardown(import_is_linear, setup, teardown),
      cmocka_unit_test_setup_teardown(a_full_disk_is_not_bad_input, setup, teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
#endif
