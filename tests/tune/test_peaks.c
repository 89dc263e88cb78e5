/* Device peaks kept per fingerprint (driver/plugins/peaks.h): the effective
 * peak is the higher of the plugin's fresh figure and the best the records
 * store keeps; a registry reads the store, and in the recording modes folds
 * each fresh figure into it, as instances are created; feature rows see the
 * effective peak; and two `hetc plugins` runs on one store report the same
 * peak for a device whose second measurement came out lower.
 *
 * The low and high measurements come from the "fault" test plugin, whose
 * peak is whatever HETC_FAULT_PEAK says, so no assertion depends on timing.
 * Every store lives under the build tree. */
#define _GNU_SOURCE
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "common/fileio.h"
#include "graph/tasks.h"
#include "plugins/peaks.h"
#include "plugins/registry.h"
#include "records/features.h"
#include "records/records.h"

#define FAULT_FINGERPRINT "fault:0"
#define FAULT_WORKLOAD "conv2d n1 c16 h10 w10 k16 r3x3 s1x1 p1,1,1,1 d1x1 g1+bias+relu f32"

static char dir[512], hetc_path[512];

static int setup(void **state) {
  (void)state;
  const char *bin = getenv("HETC_BINARY_DIR");
  if (!bin || !getenv("HETC_PLUGIN_PATH")) return -1;
  snprintf(hetc_path, sizeof(hetc_path), "%s/bin/hetc", bin);
  snprintf(dir, sizeof(dir), "%s/tests/tune/peaks-XXXXXX", bin);
  return mkdtemp(dir) ? 0 : -1;
}

static int teardown(void **state) {
  (void)state;
  hetc_dir_remove_tree(dir);
  return 0;
}

static const char *in_dir(const char *name) {
  static char paths[4][700];
  static int next = 0;
  char *path = paths[next++ % 4];
  snprintf(path, sizeof(paths[0]), "%s/%s", dir, name);
  return path;
}

static void assert_ok(hetc_status_t status) {
  if (status) fail_msg("%s", hetc_status_message(status));
}

static int exists(const char *path) {
  struct stat st;
  return stat(path, &st) == 0;
}

/* The store's kept peak of `fingerprint`; runs 0 when it has none. */
static hetc_kept_peak_t stored_peak(const char *path, const char *fingerprint) {
  hetc_records_t *store = NULL;
  hetc_kept_peak_t peak = {0, 0, 0};
  int found = 0;
  assert_ok(hetc_records_open_as(path, HETC_RECORDS_READ, &store));
  assert_ok(hetc_records_get_peak(store, fingerprint, &peak, &found));
  hetc_records_close(store);
  return peak;
}

static void seed_peak(const char *path, const char *fingerprint, double gflops) {
  hetc_records_t *store = NULL;
  assert_ok(hetc_records_open(path, &store));
  assert_ok(hetc_records_note_peak(store, fingerprint, "fault", gflops, NULL));
  hetc_records_close(store);
}

/* ------------------------------------------------------------------------ */
/* In this process                                                          */
/* ------------------------------------------------------------------------ */

static hetc_plugin_device_t device_of(const char *fingerprint, double peak) {
  hetc_plugin_device_t d;
  memset(&d, 0, sizeof(d));
  d.struct_size = sizeof(d);
  d.kind = HETC_PLUGIN_DEVICE_CPU;
  d.name = "test device";
  d.fingerprint = fingerprint;
  d.peak_gflops_fp32 = peak;
  return d;
}

static void effective_peak_is_the_higher(void **state) {
  (void)state;
  hetc_device_peak_t peak;
  hetc_plugin_device_t a = device_of("test:a", 100);
  hetc_device_peak(&a, &peak);
  assert_true(peak.gflops == 100 && peak.fresh_gflops == 100 && peak.kept_gflops == 0 && peak.runs == 0);
  assert_int_equal(peak.from_kept, 0);

  hetc_peaks_note_known("test:a", 150, 4);
  hetc_device_peak(&a, &peak);
  assert_true(peak.gflops == 150 && peak.fresh_gflops == 100 && peak.kept_gflops == 150 && peak.runs == 4);
  assert_int_equal(peak.from_kept, 1);
  assert_true(hetc_device_peak_gflops(&a) == 150);
  /* What the process knows only grows. */
  hetc_peaks_note_known("test:a", 120, 2);
  hetc_device_peak(&a, &peak);
  assert_true(peak.gflops == 150 && peak.runs == 4);
  /* Nonsense is not known. */
  hetc_peaks_note_known("test:a", INFINITY, 9);
  hetc_peaks_note_known("test:a", NAN, 9);
  hetc_peaks_note_known("test:a", -1, 9);
  hetc_peaks_note_known(NULL, 500, 9);
  hetc_peaks_note_known("", 500, 9);
  hetc_device_peak(&a, &peak);
  assert_true(peak.gflops == 150 && peak.runs == 4);

  /* A fresh figure above the kept one is the peak. */
  hetc_plugin_device_t faster = device_of("test:a", 200);
  hetc_device_peak(&faster, &peak);
  assert_true(peak.gflops == 200 && peak.kept_gflops == 150);
  assert_int_equal(peak.from_kept, 0);
  /* An unknown (0) or unusable fresh figure gives way to the kept one. */
  const double unusable[] = {0, -3, NAN, INFINITY};
  for (int i = 0; i < 4; ++i) {
    hetc_plugin_device_t d = device_of("test:a", unusable[i]);
    hetc_device_peak(&d, &peak);
    assert_true(peak.gflops == 150 && peak.fresh_gflops == 0);
    assert_int_equal(peak.from_kept, 1);
  }
  /* Fingerprints are kept apart; no fingerprint, no kept peak. */
  hetc_plugin_device_t b = device_of("test:b", 10);
  hetc_device_peak(&b, &peak);
  assert_true(peak.gflops == 10 && peak.runs == 0);
  hetc_plugin_device_t anonymous = device_of(NULL, 10);
  hetc_device_peak(&anonymous, &peak);
  assert_true(peak.gflops == 10 && peak.runs == 0);
  hetc_device_peak(NULL, &peak);
  assert_true(peak.gflops == 0);
}

/* The fault target's entry in a registry of its own; HETC_FAULT_PEAK is
 * what its instance reports. */
static hetc_plugin_entry_t *fault_entry(hetc_registry_t **out_registry, const char *fresh_peak) {
  setenv("HETC_FAULT_PEAK", fresh_peak, 1);
  assert_ok(hetc_registry_open(out_registry));
  hetc_plugin_entry_t *entry = NULL;
  assert_ok(hetc_registry_target(*out_registry, "fault", &entry));
  unsetenv("HETC_FAULT_PEAK");
  return entry;
}

static hetc_plugin_entry_t *fault_entry_keeping(hetc_registry_t **out_registry, const char *fresh_peak,
                                                const char *store, hetc_peaks_mode_t mode) {
  setenv("HETC_FAULT_PEAK", fresh_peak, 1);
  assert_ok(hetc_registry_open(out_registry));
  hetc_registry_keep_peaks(*out_registry, store, mode);
  hetc_plugin_entry_t *entry = NULL;
  assert_ok(hetc_registry_target(*out_registry, "fault", &entry));
  unsetenv("HETC_FAULT_PEAK");
  return entry;
}

static const hetc_plugin_device_t *device0(hetc_plugin_entry_t *entry) {
  return entry->plugin->device_get(entry->instance, 0);
}

/* READ reads and never writes; RECORD folds the fresh figure in; an
 * instance created before the registry was told about the store is
 * resolved when it is told; only RECORD_CREATE creates a store. Runs in
 * this process only ever raise what it knows of fault:0, so the figures
 * climb: 50 (kept), 60 (fresh), then the features test's. */
static void registry_reads_and_folds(void **state) {
  (void)state;
  const char *store = in_dir("registry.sqlite");
  seed_peak(store, FAULT_FINGERPRINT, 50);

  hetc_registry_t *registry = NULL;
  hetc_plugin_entry_t *entry = fault_entry_keeping(&registry, "20", store, HETC_PEAKS_READ);
  hetc_device_peak_t peak;
  hetc_device_peak(device0(entry), &peak);
  assert_true(peak.gflops == 50 && peak.fresh_gflops == 20 && peak.runs == 1);
  assert_int_equal(peak.from_kept, 1);
  hetc_registry_free(registry);
  hetc_kept_peak_t kept = stored_peak(store, FAULT_FINGERPRINT);
  assert_true(kept.gflops == 50 && kept.runs == 1);

  entry = fault_entry_keeping(&registry, "30", store, HETC_PEAKS_RECORD);
  hetc_device_peak(device0(entry), &peak);
  assert_true(peak.gflops == 50 && peak.fresh_gflops == 30 && peak.runs == 2);
  hetc_registry_free(registry);
  kept = stored_peak(store, FAULT_FINGERPRINT);
  assert_true(kept.gflops == 50 && kept.runs == 2);

  /* The instance exists first; telling the registry resolves it, and a
   * stronger mode later folds a figure only read before. */
  entry = fault_entry(&registry, "60");
  hetc_registry_keep_peaks(registry, store, HETC_PEAKS_READ);
  assert_true(stored_peak(store, FAULT_FINGERPRINT).runs == 2);
  hetc_registry_keep_peaks(registry, store, HETC_PEAKS_RECORD);
  hetc_registry_keep_peaks(registry, store, HETC_PEAKS_READ); /* no weaker */
  hetc_device_peak(device0(entry), &peak);
  assert_true(peak.gflops == 60 && peak.fresh_gflops == 60 && peak.kept_gflops == 60 && peak.runs == 3);
  assert_int_equal(peak.from_kept, 0);
  /* Resolved once: another target lookup folds nothing more. */
  assert_ok(hetc_registry_target(registry, "fault", &entry));
  hetc_registry_free(registry);
  kept = stored_peak(store, FAULT_FINGERPRINT);
  assert_true(kept.gflops == 60 && kept.runs == 3);

  /* A store that does not exist is created only by RECORD_CREATE. */
  const char *missing = in_dir("missing.sqlite");
  fault_entry_keeping(&registry, "5", missing, HETC_PEAKS_READ);
  hetc_registry_free(registry);
  fault_entry_keeping(&registry, "5", missing, HETC_PEAKS_RECORD);
  hetc_registry_free(registry);
  assert_false(exists(missing));
  fault_entry_keeping(&registry, "5", missing, HETC_PEAKS_RECORD_CREATE);
  hetc_registry_free(registry);
  assert_true(exists(missing));
  kept = stored_peak(missing, FAULT_FINGERPRINT);
  assert_true(kept.gflops == 5 && kept.runs == 1);
}

/* The cost model's dev_peak_gflops is the effective peak, also for a row
 * computed from the bare plugin and instance. */
static void features_use_the_effective_peak(void **state) {
  (void)state;
  hetc_registry_t *registry = NULL;
  hetc_plugin_entry_t *entry = fault_entry(&registry, "2");
  hetc_plugin_workload_t workload;
  hetc_plugin_tensor_t inputs[2];
  assert_ok(hetc_workload_from_key(FAULT_WORKLOAD, &workload, inputs));
  float row[HETC_FEATURE_COUNT];
  /* Known peaks only grow: 127 is above anything the tests before left. */
  hetc_peaks_note_known(FAULT_FINGERPRINT, 127, 3);
  assert_ok(hetc_features_extract(entry->plugin, entry->instance, 0, &workload, 0, NULL, row));
  assert_true(hetc_device_peak_gflops(device0(entry)) == 127);
  assert_true(row[HETC_FEATURE_DEV_PEAK_GFLOPS] == 7.0f);
  hetc_peaks_note_known(FAULT_FINGERPRINT, 255, 7);
  assert_ok(hetc_features_extract(entry->plugin, entry->instance, 0, &workload, 0, NULL, row));
  assert_true(row[HETC_FEATURE_DEV_PEAK_GFLOPS] == 8.0f);
  hetc_registry_free(registry);
}

/* ------------------------------------------------------------------------ */
/* `hetc plugins`                                                           */
/* ------------------------------------------------------------------------ */

typedef struct output_t {
  int status;
  char *out, *err; /* owned */
} output_t;

static char *slurp(const char *path) {
  FILE *f = fopen(path, "rb");
  if (!f) return strdup("");
  fseek(f, 0, SEEK_END);
  long n = ftell(f);
  fseek(f, 0, SEEK_SET);
  char *text = calloc(1, (size_t)n + 1);
  if (text && fread(text, 1, (size_t)n, f) != (size_t)n) text[0] = 0;
  fclose(f);
  return text;
}

/* `env ENV hetc ARGS` with its own caches under the test directory (ENV
 * may start with env's options). */
static output_t run_hetc(const char *env, const char *args) {
  char command[4096];
  const char *out = in_dir("stdout.txt"), *err = in_dir("stderr.txt");
  snprintf(command, sizeof(command), "env %s XDG_CACHE_HOME='%s/cache' '%s' %s >'%s' 2>'%s'", env, dir, hetc_path, args,
           out, err);
  int status = system(command);
  output_t o = {WIFEXITED(status) ? WEXITSTATUS(status) : -1, slurp(out), slurp(err)};
  return o;
}

static void output_free(output_t *o) {
  free(o->out);
  free(o->err);
}

#define MAX_DEVICES 16
typedef struct listed_t {
  int count;
  char fingerprint[MAX_DEVICES][512];
  char line[MAX_DEVICES][1024]; /* the device line */
  double peak[MAX_DEVICES];
} listed_t;

/* Every device line of `hetc plugins` with its peak and the fingerprint on
 * the line after it. */
static listed_t parse_devices(const char *out) {
  listed_t l;
  memset(&l, 0, sizeof(l));
  const char *p = out;
  while ((p = strstr(p, "\n  device ")) && l.count < MAX_DEVICES) {
    ++p;
    const char *end = strchr(p, '\n');
    assert_non_null(end);
    snprintf(l.line[l.count], sizeof(l.line[0]), "%.*s", (int)(end - p), p);
    const char *peak = strstr(l.line[l.count], ", peak ");
    assert_non_null(peak);
    assert_int_equal(sscanf(peak, ", peak %lf GFLOPS fp32", &l.peak[l.count]), 1);
    const char *fp = strstr(end, "fingerprint ");
    assert_non_null(fp);
    fp += strlen("fingerprint ");
    const char *fp_end = strchr(fp, '\n');
    snprintf(l.fingerprint[l.count], sizeof(l.fingerprint[0]), "%.*s", (int)(fp_end - fp), fp);
    ++l.count;
    p = end;
  }
  return l;
}

static int find_device(const listed_t *l, const char *fingerprint) {
  for (int i = 0; i < l->count; ++i)
    if (!strcmp(l->fingerprint[i], fingerprint)) return i;
  fail_msg("no device with fingerprint %s", fingerprint);
  return -1;
}

/* The fault device's line, exactly. */
static void assert_fault_line(const listed_t *l, const char *peak_text) {
  char want[512];
  snprintf(want, sizeof(want), "  device 0: fault device (cpu), 1 compute units, SIMD 1, %s", peak_text);
  assert_string_equal(l->line[find_device(l, FAULT_FINGERPRINT)], want);
}

/* A new, empty store, as hetc tune or hetc records import would make it. */
static void create_store(const char *path) {
  hetc_records_t *store = NULL;
  assert_ok(hetc_records_open_as(path, HETC_RECORDS_CREATE, &store));
  hetc_records_close(store);
}

/* The promise: the second run measures the fault device at a
 * quarter of the first and still reports the first run's peak, saying so;
 * every device's reported peak only ever grows and is the store's best; a
 * faster third run raises it. */
static void plugins_agree_run_after_run(void **state) {
  (void)state;
  char args[1024], store[700];
  snprintf(store, sizeof(store), "%s", in_dir("plugins.sqlite"));
  snprintf(args, sizeof(args), "plugins --records '%s'", store);
  create_store(store);

  output_t first = run_hetc("HETC_FAULT_PEAK=300", args);
  assert_int_equal(first.status, 0);
  listed_t one = parse_devices(first.out);
  assert_fault_line(&one, "peak 300.0 GFLOPS fp32");

  output_t second = run_hetc("HETC_FAULT_PEAK=75", args);
  assert_int_equal(second.status, 0);
  listed_t two = parse_devices(second.out);
  assert_fault_line(&two, "peak 300.0 GFLOPS fp32 (best of 2 runs; this run 75.0)");

  /* Every device of this machine: the same devices, a peak no lower than
   * the first run's, and what the store now keeps. */
  assert_int_equal(one.count, two.count);
  for (int i = 0; i < one.count; ++i) {
    int j = find_device(&two, one.fingerprint[i]);
    if (two.peak[j] < one.peak[i])
      fail_msg("%s: the second run reports %.1f after %.1f", one.fingerprint[i], two.peak[j], one.peak[i]);
    hetc_kept_peak_t kept = stored_peak(store, one.fingerprint[i]);
    if (kept.runs > 0) {
      char printed[32], stored[32];
      snprintf(printed, sizeof(printed), "%.1f", two.peak[j]);
      snprintf(stored, sizeof(stored), "%.1f", kept.gflops);
      assert_string_equal(printed, stored);
    }
  }

  output_t third = run_hetc("HETC_FAULT_PEAK=400", args);
  assert_int_equal(third.status, 0);
  listed_t three = parse_devices(third.out);
  assert_fault_line(&three, "peak 400.0 GFLOPS fp32");
  hetc_kept_peak_t kept = stored_peak(store, FAULT_FINGERPRINT);
  assert_true(kept.gflops == 400 && kept.runs == 3);
  output_free(&first);
  output_free(&second);
  output_free(&third);
}

/* Without --records the per-user store is used (HETC_RECORDS, else
 * XDG_DATA_HOME) when there is one; hetc plugins never creates one. */
static void plugins_keep_in_the_per_user_store(void **state) {
  (void)state;
  char env[2048];
  snprintf(env, sizeof(env), "-u HETC_RECORDS HOME='%s/home' XDG_DATA_HOME='%s/data' HETC_FAULT_PEAK=12", dir, dir);
  char store[700];
  snprintf(store, sizeof(store), "%s", in_dir("data/hetc/records.sqlite"));
  output_t o = run_hetc(env, "plugins");
  assert_int_equal(o.status, 0);
  assert_null(strstr(o.err, "warning"));
  output_free(&o);
  assert_false(exists(in_dir("data")));
  assert_false(exists(in_dir("home")));

  assert_int_equal(mkdir(in_dir("data"), 0700), 0);
  assert_int_equal(mkdir(in_dir("data/hetc"), 0700), 0);
  create_store(store);
  o = run_hetc(env, "plugins");
  assert_int_equal(o.status, 0);
  output_free(&o);
  hetc_kept_peak_t kept = stored_peak(store, FAULT_FINGERPRINT);
  assert_true(kept.gflops == 12 && kept.runs == 1);

  snprintf(env, sizeof(env), "HETC_RECORDS='%s/env.sqlite' HETC_FAULT_PEAK=3", dir);
  create_store(in_dir("env.sqlite"));
  o = run_hetc(env, "plugins");
  assert_int_equal(o.status, 0);
  listed_t l = parse_devices(o.out);
  assert_fault_line(&l, "peak 3.0 GFLOPS fp32");
  output_free(&o);
  kept = stored_peak(in_dir("env.sqlite"), FAULT_FINGERPRINT);
  assert_true(kept.gflops == 3 && kept.runs == 1);
}

/* A store named with --records must be one: a missing one or a file that
 * is none is refused by name (exit 2), and nothing is created. The
 * per-user store (HETC_RECORDS here) that cannot be used is a warning: the
 * plugins' own figures are listed and the command succeeds. A wrong
 * argument is a usage error. */
static void plugins_without_a_usable_store(void **state) {
  (void)state;
  char notes[700];
  snprintf(notes, sizeof(notes), "%s", in_dir("notes.txt"));
  FILE *f = fopen(notes, "w");
  assert_non_null(f);
  fputs("not a store\n", f);
  fclose(f);
  char args[1024], want[2048], env[1024];
  snprintf(args, sizeof(args), "plugins --records '%s'", notes);
  output_t o = run_hetc("HETC_FAULT_PEAK=9", args);
  assert_int_equal(o.status, 2);
  snprintf(want, sizeof(want), "hetc: %s: not a hetc records database (not an SQLite file)\n", notes);
  assert_string_equal(o.err, want);
  assert_string_equal(o.out, "");
  output_free(&o);
  snprintf(args, sizeof(args), "plugins --records '%s'", in_dir("missing.sqlite"));
  o = run_hetc("HETC_FAULT_PEAK=9", args);
  assert_int_equal(o.status, 2);
  snprintf(want, sizeof(want), "hetc: %s: no records store there (hetc tune and hetc records import create one)\n",
           in_dir("missing.sqlite"));
  assert_string_equal(o.err, want);
  assert_false(exists(in_dir("missing.sqlite")));
  output_free(&o);

  snprintf(env, sizeof(env), "HETC_RECORDS='%s' HETC_FAULT_PEAK=9", notes);
  o = run_hetc(env, "plugins");
  assert_int_equal(o.status, 0);
  listed_t l = parse_devices(o.out);
  assert_fault_line(&l, "peak 9.0 GFLOPS fp32");
  snprintf(want, sizeof(want),
           "hetc [hetc] warning: device peaks are not kept: %s: not a hetc records database (not an SQLite file)\n",
           notes);
  const char *warning = strstr(o.err, want);
  if (!warning) fail_msg("stderr lacks \"%s\":\n%s", want, o.err);
  /* Once, not once per plugin. */
  assert_null(strstr(warning + strlen(want), "device peaks are not kept"));
  output_free(&o);

  o = run_hetc("", "plugins --record x");
  assert_int_equal(o.status, 2);
  assert_string_equal(o.err, "hetc plugins: unexpected argument '--record'\nusage: hetc plugins [--records PATH]\n");
  output_free(&o);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(effective_peak_is_the_higher),
      cmocka_unit_test_setup_teardown(registry_reads_and_folds, setup, teardown),
      cmocka_unit_test(features_use_the_effective_peak),
      cmocka_unit_test_setup_teardown(plugins_agree_run_after_run, setup, teardown),
      cmocka_unit_test_setup_teardown(plugins_keep_in_the_per_user_store, setup, teardown),
      cmocka_unit_test_setup_teardown(plugins_without_a_usable_store, setup, teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
