/* `hetc tune` end to end: faulty candidates give typed records and the run
 * finishes; a run killed with SIGKILL leaves no worker behind and resumes
 * without measuring anything twice; `hetc compile` then takes the tuned
 * configs; the end table's fraction of peak uses the device's kept peak.
 * And issue 19's cases: the commands that only read a store refuse one
 * that does not exist and create nothing; four tunes (two on one task) and
 * an import start together on a new store and all succeed, every config
 * recorded once and none measured twice; workers killed from outside mark
 * no config bad; Ctrl-C says what was kept; a batch the store will not
 * take is kept beside it. */
#define _GNU_SOURCE
#include <errno.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>
#include <sqlite3.h>

#include "records/records.h"

static char hetc_path[1024], model_path[1024], temp_dir[256];

static int setup(void **state) {
  (void)state;
  const char *bin = getenv("HETC_BINARY_DIR"), *src = getenv("HETC_SOURCE_DIR");
  if (!bin || !src) return -1;
  snprintf(hetc_path, sizeof(hetc_path), "%s/bin/hetc", bin);
  snprintf(model_path, sizeof(model_path), "%s/tests/tune/models/one_conv.json", src);
  snprintf(temp_dir, sizeof(temp_dir), "/tmp/hetc-tune-cli-XXXXXX");
  /* Workers orphaned by a killed tuner come back to this process, so the
   * test can see whether any is left. */
  prctl(PR_SET_CHILD_SUBREAPER, 1);
  return mkdtemp(temp_dir) ? 0 : -1;
}

static int teardown(void **state) {
  (void)state;
  char command[512];
  snprintf(command, sizeof(command), "rm -rf '%s'", temp_dir);
  return system(command) == 0 ? 0 : -1;
}

/* Starts `hetc` with the NULL-terminated arguments, output to /dev/null. */
static pid_t start_hetc(const char *const *args) {
  pid_t pid = fork();
  if (pid == 0) {
    const char *argv[32] = {hetc_path};
    int n = 1;
    while (args[n - 1] && n < 31) {
      argv[n] = args[n - 1];
      ++n;
    }
    argv[n] = NULL;
    if (!getenv("HETC_TEST_VERBOSE")) {
      /* stderr is kept for run_hetc's failure message. */
      char err_path[600];
      snprintf(err_path, sizeof(err_path), "%s/stderr-%d.txt", temp_dir, (int)getpid());
      freopen("/dev/null", "w", stdout);
      freopen(err_path, "w", stderr);
    }
    execv(hetc_path, (char *const *)argv);
    _exit(127);
  }
  return pid;
}

static int wait_exit(pid_t pid) {
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

static char *slurp(const char *path);

/* Runs hetc to its end; another exit status than `expected` fails the test
 * with what hetc said on stderr. */
static void run_hetc(const char *const *args, int expected) {
  const pid_t pid = start_hetc(args);
  const int status = wait_exit(pid);
  char err_path[600];
  snprintf(err_path, sizeof(err_path), "%s/stderr-%d.txt", temp_dir, (int)pid);
  char *said = slurp(err_path);
  remove(err_path);
  if (status != expected)
    fail_msg("hetc %s exited %d, expected %d; it said:\n%s", args[0], status, expected, said ? said : "(nothing)");
  free(said);
}

static int64_t count_records(const char *path) {
  hetc_records_t *store = NULL;
  int64_t count = -1;
  hetc_status_t status = hetc_records_open_as(path, HETC_RECORDS_READ, &store);
  if (!status) status = hetc_records_count(store, &count);
  hetc_status_free(status);
  hetc_records_close(store);
  return count;
}

/* Every record in the store at `path` (the caller frees the list). */
static hetc_record_list_t stored_records(const char *path) {
  hetc_records_t *store = NULL;
  hetc_record_list_t list = {0, NULL};
  assert_null(hetc_records_open_as(path, HETC_RECORDS_READ, &store));
  assert_null(hetc_records_query(store, NULL, &list));
  hetc_records_close(store);
  return list;
}

/* Compiles with the records (--explain, so the candidates are costed even
 * where `hetc tune` kept a plan), checks that graph-level selection weighed
 * candidates from each source in `sources` (space-separated names as the
 * placement problem writes them, e.g. "tuned nearest"), then runs the
 * package. Which candidate wins is measured, so it is not asserted. */
/* Compiles `model` on cpu from `records` with --explain, checks that the
 * problem placement solved offered a candidate from each of `sources`
 * ("tuned default"), and runs the package; fails the test saying what
 * was missing. */
static void compile_and_check(const char *model, const char *records, const char *sources) {
  char package[512], dump[600], command[8192];
  snprintf(package, sizeof(package), "%s/package.hetc", temp_dir);
  snprintf(dump, sizeof(dump), "%s/problem.json", temp_dir);
  snprintf(command, sizeof(command),
           "rm -rf '%s' '%s' && HETC_PLACEMENT_PROBLEM='%s' '%s' compile '%s' --targets cpu --records '%s' "
           "-o '%s' --explain | grep -q '^configs: ' && '%s' run '%s' --random-input 1 > /dev/null",
           package, dump, dump, hetc_path, model, records, package, hetc_path, package);
  if (system(command) != 0) fail_msg("compiling or running %s from %s failed", model, records);
  char *problem = slurp(dump);
  char copy[256];
  snprintf(copy, sizeof(copy), "%s", sources);
  for (char *save = NULL, *source = strtok_r(copy, " ", &save); source; source = strtok_r(NULL, " ", &save)) {
    char quoted[64];
    snprintf(quoted, sizeof(quoted), "\"source\": \"%s\"", source);
    if (!problem || !strstr(problem, quoted)) {
      free(problem);
      fail_msg("%s from %s: no candidate of source '%s' in the placement problem %s", model, records, source, dump);
    }
  }
  free(problem);
}

static void faults_give_typed_records_and_the_run_finishes(void **state) {
  (void)state;
  char records[512];
  snprintf(records, sizeof(records), "%s/faults.sqlite", temp_dir);
  const char *args[] = {"tune", model_path, "--targets", "fault", "--records", records, "--search", "grid", "--trials",
                        "27", "--build-timeout", "1", "--run-timeout", "1", "--check", "--no-transfer", "-q",
                        NULL};
  run_hetc(args, 0);

  hetc_record_list_t list = stored_records(records);
  assert_int_equal(list.count, 27);
  int32_t by_error[HETC_RECORD_ERROR_COUNT] = {0};
  for (int32_t i = 0; i < list.count; ++i) {
    const hetc_record_t *r = &list.items[i];
    ++by_error[r->error];
    assert_string_equal(r->target, "fault");
    assert_string_equal(r->template_name, "fault_conv2d");
    assert_string_equal(r->workload_key, "conv2d n1 c16 h10 w10 k16 r3x3 s1x1 p1,1,1,1 d1x1 g1+bias+relu f32");
  }
  /* Three tiles per behaviour: ok, build hang, build crash, compiler
   * failure, refusal, run hang, run crash, wrong answer, device limits. */
  assert_int_equal(by_error[HETC_RECORD_OK], 3);
  assert_int_equal(by_error[HETC_RECORD_BUILD_TIMEOUT], 3);
  assert_int_equal(by_error[HETC_RECORD_COMPILE_HOST], 6);
  assert_int_equal(by_error[HETC_RECORD_INSTANTIATION], 3);
  assert_int_equal(by_error[HETC_RECORD_RUN_TIMEOUT], 3);
  assert_int_equal(by_error[HETC_RECORD_RUNTIME_DEVICE], 3);
  assert_int_equal(by_error[HETC_RECORD_WRONG_ANSWER], 3);
  assert_int_equal(by_error[HETC_RECORD_DEVICE_LIMITS], 3);
  hetc_record_list_free(&list);

  /* Failed configs are never measured again: a rerun adds nothing. */
  run_hetc(args, 0);
  assert_int_equal(count_records(records), 27);
  /* Every worker of both runs has been reaped. */
  assert_int_equal(waitpid(-1, NULL, WNOHANG), -1);
  assert_int_equal(errno, ECHILD);
}

static void a_killed_run_resumes_without_measuring_twice(void **state) {
  (void)state;
  char records[512];
  snprintf(records, sizeof(records), "%s/resume.sqlite", temp_dir);
  const char *args[] = {"tune", model_path, "--targets", "cpu", "--records", records, "--search", "random", "--trials",
                        "48", "--batch", "8", "--no-transfer", "-q", NULL};
  pid_t pid = start_hetc(args);
  /* Kill it in the middle: after at least two batches are stored. */
  int64_t stored = 0;
  for (int waited = 0; waited < 1200 && stored < 16; ++waited) {
    struct timespec pause = {0, 50000000};
    nanosleep(&pause, NULL);
    stored = count_records(records);
  }
  assert_true(stored >= 16);
  kill(pid, SIGKILL);
  assert_int_equal(wait_exit(pid), 128 + SIGKILL);
  /* Its workers die with it (they come back here to be reaped). */
  for (int waited = 0; waited < 100; ++waited) {
    pid_t reaped = waitpid(-1, NULL, WNOHANG);
    if (reaped < 0 && errno == ECHILD) break;
    struct timespec pause = {0, 50000000};
    nanosleep(&pause, NULL);
  }
  assert_int_equal(waitpid(-1, NULL, WNOHANG), -1);
  assert_int_equal(errno, ECHILD);
  int64_t after_kill = count_records(records);
  assert_true(after_kill >= 16 && after_kill < 48);

  run_hetc(args, 0);
  hetc_record_list_t list = stored_records(records);
  assert_int_equal(list.count, 48);
  for (int32_t i = 0; i < list.count; ++i)
    for (int32_t j = 0; j < i; ++j)
      if (!strcmp(list.items[i].template_name, list.items[j].template_name) &&
          !strcmp(list.items[i].config_json, list.items[j].config_json))
        fail_msg("measured twice: %s %s", list.items[i].template_name, list.items[i].config_json);
  hetc_record_list_free(&list);

  /* The resumed run ended with graph-level selection, and compile builds
   * the plan it kept; costed again, the tuned configs are weighed against
   * the defaults. */
  char command[4096];
  snprintf(command, sizeof(command),
           "'%s' compile '%s' --targets cpu --records '%s' -o '%s/kept.hetc' > '%s/kept.out' 2>&1; grep -q "
           "'^placement: expected latency .* (kept in the records by an earlier tune or compile)$' '%s/kept.out'",
           hetc_path, model_path, records, temp_dir, temp_dir, temp_dir);
  if (system(command) != 0) {
    /* Seen twice under ctest -j2 and never alone: say what compile said. */
    char out_path[1100];
    snprintf(out_path, sizeof(out_path), "%s/kept.out", temp_dir);
    char *said = slurp(out_path);
    fail_msg("compile did not use the plan the resumed tune kept; it printed:\n%s", said ? said : "(nothing)");
  }
  /* Plans are kept per targets and split policy: cpu,vec under `--split
   * never` is costed (its first time), then kept; under the default split
   * policy it is costed again. */
  const char *split_runs[][2] = {{"--split never", "lowest under the cost model"},
                                 {"--split never", "kept in the records by an earlier tune or compile"},
                                 {"", "lowest under the cost model"}};
  for (int i = 0; i < 3; ++i) {
    snprintf(command, sizeof(command),
             "'%s' compile '%s' --targets cpu,vec %s --records '%s' -o '%s/kept2.hetc' | grep -q "
             "'^placement: expected latency .* (%s)$'",
             hetc_path, model_path, split_runs[i][0], records, temp_dir, split_runs[i][1]);
    if (system(command) != 0) fail_msg("compile %d (%s) did not say '%s'", i, split_runs[i][0], split_runs[i][1]);
  }
  compile_and_check(model_path, records, "tuned default");
  /* A run with transfer saves the cost model beside the store (all 48
   * trials are there already, so it measures nothing); then for a 3x3 conv
   * on another plane compile weighs the nearest tuned workload's config,
   * and for a 1x1 conv, which nothing tuned resembles, the model's best
   * prediction. */
  const char *transfer_args[] = {"tune", model_path, "--targets", "cpu", "--records", records, "--trials", "48", "-q",
                                 NULL};
  run_hetc(transfer_args, 0);
  assert_int_equal(count_records(records), 48);
  char two_convs[1100];
  snprintf(two_convs, sizeof(two_convs), "%s/tests/tune/models/two_convs.json", getenv("HETC_SOURCE_DIR"));
  compile_and_check(two_convs, records, "nearest predicted default");
}

static void tasks_selects_what_is_tuned(void **state) {
  (void)state;
  char records[512], two_convs[1100], command[4096];
  snprintf(records, sizeof(records), "%s/tasks.sqlite", temp_dir);
  snprintf(two_convs, sizeof(two_convs), "%s/tests/tune/models/two_convs.json", getenv("HETC_SOURCE_DIR"));
  /* A task the model lacks is refused before anything is measured. */
  snprintf(command, sizeof(command),
           "'%s' tune '%s' --targets cpu --records '%s' --tasks 1,3 2>&1 >/dev/null | "
           "grep -qx 'hetc: --tasks: the model has tasks 1 to 2, not 3'",
           hetc_path, two_convs, records);
  assert_int_equal(system(command), 0);
  const char *bad_args[] = {"tune", two_convs, "--targets", "cpu", "--records", records, "--tasks", "3", "-q", NULL};
  run_hetc(bad_args, 2);
  assert_int_not_equal(access(records, F_OK), 0); /* and no store made */

  const char *args[] = {"tune", two_convs, "--targets", "cpu", "--records", records, "--search", "random",
                        "--trials", "4", "--batch", "4", "--no-transfer", "--tasks", "2", "-q", NULL};
  run_hetc(args, 0);
  hetc_record_list_t list = stored_records(records);
  assert_int_equal(list.count, 4);
  for (int32_t i = 0; i < list.count; ++i)
    assert_string_equal(list.items[i].workload_key,
                        "conv2d n1 c16 h12 w12 k24 r1x1 s1x1 p0,0,0,0 d1x1 g1+bias f32");
  hetc_record_list_free(&list);
}

/* The end table's line of the one task of `hetc tune` on the fault target,
 * whose device reports `fresh_peak` GFLOPS this run, up to its fraction of
 * peak. */
static void tune_table_line(const char *fresh_peak, const char *records, char *line, size_t size) {
  char command[4096];
  snprintf(command, sizeof(command),
           "HETC_FAULT_PEAK=%s '%s' tune '%s' --targets fault --records '%s' --search grid --trials 1 "
           "--no-transfer -q 2>/dev/null",
           fresh_peak, hetc_path, model_path, records);
  FILE *pipe = popen(command, "r");
  assert_non_null(pipe);
  char text[1024];
  line[0] = 0;
  /* Up to the peak column: trials and "to 95%" are this run's own. */
  while (fgets(text, sizeof(text), pipe)) {
    const char *percent = strchr(text, '%');
    if (!strncmp(text, "   1  fault ", 12) && percent) snprintf(line, size, "%.*s", (int)(percent - text + 1), text);
  }
  assert_int_equal(pclose(pipe), 0);
  if (!line[0]) fail_msg("no table line for task 1 on fault");
}

/* The fraction of peak divides by the device's kept peak: a rerun that
 * measures nothing new but whose device measured a lower peak prints the
 * same best GFLOPS and fraction, and `hetc plugins` on the store says
 * where its figure is from. */
static void the_end_table_uses_the_kept_peak(void **state) {
  (void)state;
  char records[512], first[1024], second[1024], command[4096];
  snprintf(records, sizeof(records), "%s/peaks.sqlite", temp_dir);
  tune_table_line("4", records, first, sizeof(first));
  assert_int_equal(count_records(records), 1);
  tune_table_line("0.5", records, second, sizeof(second));
  assert_int_equal(count_records(records), 1);
  assert_string_equal(first, second);
  double gflops = 0, percent = 0;
  assert_int_equal(sscanf(first, "   1  fault   fault_conv2d %lf %lf%%", &gflops, &percent), 2);
  assert_true(gflops > 0 && percent > 0);
  snprintf(command, sizeof(command),
           "HETC_FAULT_PEAK=0.5 '%s' plugins --records '%s' 2>/dev/null | grep -qx '  device 0: fault device (cpu), 1 "
           "compute units, SIMD 1, peak 4.0 GFLOPS fp32 (best of 3 runs; this run 0.5)'",
           hetc_path, records);
  assert_int_equal(system(command), 0);
}

/* A store whose only record is one template's default config (a tune of
 * one trial measures the first template's) still gets graph-level
 * selection on one target: alone, that record picked its template over
 * faster ones nobody measured (cpu_conv2d_nchw, 0.057 ms, over NCHWc's
 * default, 0.003 ms). The record goes into a new store through export and
 * import, so that no plan the tune kept makes the choice instead. */
static void a_lone_default_record_is_weighed_against_the_other_templates(void **state) {
  (void)state;
  char tuned[512], fresh[512], jsonl[512], package[512], command[8192];
  snprintf(tuned, sizeof(tuned), "%s/one-default.sqlite", temp_dir);
  snprintf(fresh, sizeof(fresh), "%s/one-default-imported.sqlite", temp_dir);
  snprintf(jsonl, sizeof(jsonl), "%s/one-default.jsonl", temp_dir);
  snprintf(package, sizeof(package), "%s/one-default.hetc", temp_dir);
  const char *tune_args[] = {"tune", model_path, "--targets", "cpu", "--records", tuned, "--trials", "1",
                             "--no-transfer", "-q", NULL};
  run_hetc(tune_args, 0);
  const char *export_args[] = {"records", "export", jsonl, "--records", tuned, NULL};
  run_hetc(export_args, 0);
  const char *import_args[] = {"records", "import", jsonl, "--records", fresh, NULL};
  run_hetc(import_args, 0);
  assert_int_equal(count_records(fresh), 1);
  snprintf(command, sizeof(command),
           "'%s' compile '%s' --targets cpu --records '%s' -o '%s' > '%s.out' 2>&1 && grep -q "
           "'^placement: expected latency .* (lowest under the cost model)$' '%s.out' && '%s' run '%s' "
           "--random-input 1 > /dev/null",
           hetc_path, model_path, fresh, package, package, package, hetc_path, package);
  if (system(command) != 0) {
    char out_path[600];
    snprintf(out_path, sizeof(out_path), "%s.out", package);
    char *said = slurp(out_path);
    fail_msg("compile did not weigh the lone default record against the other templates; it printed:\n%s",
             said ? said : "(nothing)");
  }
}

/* Starts `hetc` with the NULL-terminated arguments in `cwd` (NULL: here),
 * stdout and stderr to the files named (NULL: /dev/null). */
static pid_t start_hetc_in(const char *cwd, const char *const *args, const char *out_path, const char *err_path) {
  pid_t pid = fork();
  if (pid == 0) {
    const char *argv[40] = {hetc_path};
    int n = 1;
    while (args[n - 1] && n < 39) {
      argv[n] = args[n - 1];
      ++n;
    }
    argv[n] = NULL;
    if (cwd && chdir(cwd) != 0) _exit(126);
    if (!freopen(out_path ? out_path : "/dev/null", "w", stdout) ||
        !freopen(err_path ? err_path : "/dev/null", "w", stderr))
      _exit(125);
    execv(hetc_path, (char *const *)argv);
    _exit(127);
  }
  return pid;
}

static char *slurp(const char *path) {
  FILE *file = fopen(path, "r");
  if (!file) return strdup("");
  char *text = calloc(1, 1 << 20);
  size_t length = fread(text, 1, (1 << 20) - 1, file);
  text[length] = 0;
  fclose(file);
  return text;
}

static int exists(const char *path) { return access(path, F_OK) == 0; }

static void in_temp(const char *name, char *out, size_t size) { snprintf(out, size, "%s/%s", temp_dir, name); }

static void sample_path(const char *name, char *out, size_t size) {
  snprintf(out, size, "%s/samples/%s", getenv("HETC_SOURCE_DIR"), name);
}

/* Case 2 of issue 19: only the commands that make records create a store.
 * An empty --records is refused (it tuned into a private temporary file
 * and wrote ./.model), --simulate and compile refuse a store that does
 * not exist (they created it), and nothing is created on the way out. */
static void reading_commands_refuse_a_missing_store(void **state) {
  (void)state;
  char cwd[512], tiny[1100], out[600], err[600], missing[600], fresh[600], package[600];
  in_temp("refusals", cwd, sizeof(cwd));
  assert_int_equal(mkdir(cwd, 0755), 0);
  sample_path("tiny_conv.json", tiny, sizeof(tiny));
  in_temp("out.txt", out, sizeof(out));
  in_temp("err.txt", err, sizeof(err));
  snprintf(missing, sizeof(missing), "%s/missing.sqlite", cwd);
  snprintf(fresh, sizeof(fresh), "%s/fresh.sqlite", cwd);
  snprintf(package, sizeof(package), "%s/p.hetc", cwd);
  const struct {
    const char *args[16];
    const char *message; /* stderr, %s: missing */
  } runs[] = {
      {{"tune", tiny, "--targets", "cpu", "--trials", "3", "--tasks", "1", "--records", "", "-q", NULL},
       "hetc tune: --records: expected a path, got ''\n"},
      {{"tune", tiny, "--targets", "cpu", "--trials", "3", "--tasks", "1", "--records", fresh, "--simulate",
        missing, "-q", NULL},
       "hetc: %s: no records store there (hetc tune and hetc records import create one)\n"},
      {{"tune", tiny, "--targets", "cpu", "--trials", "3", "--tasks", "1", "--records", fresh, "--simulate", "",
        "-q", NULL},
       "hetc tune: --simulate: expected a path, got ''\n"},
      /* The targets and tasks are checked before the store is opened. */
      {{"tune", tiny, "--targets", "nonesuch", "--trials", "3", "--records", fresh, "-q", NULL},
       "hetc: no plugin serves target 'nonesuch' (available: "},
      {{"tune", tiny, "--targets", "cpu", "--trials", "3", "--tasks", "9", "--records", fresh, "-q", NULL},
       "hetc: --tasks: the model has tasks 1 to 3, not 9\n"},
      {{"tune", tiny, tiny, "--targets", "cpu,nonesuch", "--trials", "3", "--records", fresh, "-q", NULL},
       "hetc: no plugin serves target 'nonesuch' (available: "},
      {{"tune", tiny, tiny, "--targets", "cpu", "--trials", "3", "--tasks", "4", "--records", fresh, "-q", NULL},
       "hetc: --tasks: the model has tasks 1 to 3, not 4\n"},
      {{"compile", tiny, "--targets", "cpu", "--records", missing, "-o", package, NULL},
       "hetc: tuning records: %s: no records store there (hetc tune and hetc records import create one)\n"},
      {{"compile", tiny, "--targets", "cpu", "--records", "", "-o", package, NULL},
       "hetc compile: --records: expected a path, got ''\n"},
      {{"records", "list", "--records", missing, NULL},
       "hetc: %s: no records store there (hetc tune and hetc records import create one)\n"},
      {{"records", "best", "--records", missing, NULL},
       "hetc: %s: no records store there (hetc tune and hetc records import create one)\n"},
      {{"records", "export", "x.jsonl", "--records", missing, NULL},
       "hetc: %s: no records store there (hetc tune and hetc records import create one)\n"},
      {{"records", "prune", "--records", missing, NULL},
       "hetc: %s: no records store there (hetc tune and hetc records import create one)\n"},
      {{"records", "list", "--records", "", NULL}, "hetc records list: --records: expected a path, got ''\n"},
      {{"plugins", "--records", missing, NULL},
       "hetc: %s: no records store there (hetc tune and hetc records import create one)\n"},
      {{"compare", tiny, "--targets", "cpu", "--records", missing, "--runs", "1", "--warmup", "0", NULL},
       "hetc: tuning records: %s: no records store there (hetc tune and hetc records import create one)\n"},
  };
  for (size_t r = 0; r < sizeof(runs) / sizeof(runs[0]); ++r) {
    assert_int_equal(wait_exit(start_hetc_in(cwd, runs[r].args, out, err)), 2);
    char want[1024];
    snprintf(want, sizeof(want), runs[r].message, missing);
    char *said = slurp(err);
    /* The first line: a usage error is followed by the command's usage. */
    if (strncmp(said, want, strlen(want))) fail_msg("run %zu (%s %s): stderr\n  %s\nwant\n  %s", r, runs[r].args[0],
                                     runs[r].args[1], said, want);
    free(said);
    /* Nothing made: no store, no model beside an empty path, no package. */
    char listing[1024];
    snprintf(listing, sizeof(listing), "test -z \"$(ls -A '%s')\"", cwd);
    if (system(listing) != 0) {
      snprintf(listing, sizeof(listing), "ls -lA '%s' >&2", cwd);
      (void)system(listing);
      fail_msg("run %zu left files behind", r);
    }
  }
  /* Without --records, compile uses the per-user store when there is one,
   * and creates none (placement created it, and its directories, to keep
   * transfer costs). */
  char command[8192], home[600];
  snprintf(home, sizeof(home), "%s/home", cwd);
  snprintf(command, sizeof(command),
           "env -u HETC_RECORDS -u XDG_DATA_HOME HOME='%s' XDG_CACHE_HOME='%s/cache' '%s' compile '%s' --targets cpu,vec"
           " -o '%s' > /dev/null",
           home, cwd, hetc_path, tiny, package);
  assert_int_equal(mkdir(home, 0755), 0);
  assert_int_equal(system(command), 0);
  snprintf(command, sizeof(command), "test -z \"$(ls -A '%s')\"", home);
  assert_int_equal(system(command), 0);
}

/* Every record of a store, by (target, device, workload, template,
 * version, config), must be there once. */
static void assert_each_config_once(const hetc_record_list_t *list) {
  for (int32_t i = 0; i < list->count; ++i)
    for (int32_t j = 0; j < i; ++j) {
      const hetc_record_t *a = &list->items[i], *b = &list->items[j];
      if (!strcmp(a->target, b->target) && !strcmp(a->device_fingerprint, b->device_fingerprint) &&
          !strcmp(a->workload_key, b->workload_key) && !strcmp(a->template_name, b->template_name) &&
          a->template_version == b->template_version && !strcmp(a->config_json, b->config_json))
        fail_msg("twice: %s %s %s", a->workload_key, a->template_name, a->config_json);
    }
}

/* The "trials" column of a task's line in a `hetc tune` end table. */
static int table_trials(const char *table, int task) {
  char head[16];
  snprintf(head, sizeof(head), "%4d  cpu ", task);
  const char *line = strstr(table, head);
  if (!line) fail_msg("no line for task %d in:\n%s", task, table);
  char target[32], template_name[64];
  double gflops = 0, peak = 0;
  int trials = -1, to95 = -1;
  if (sscanf(line, "%*d %31s %63s %lf %lf%% %d %d", target, template_name, &gflops, &peak, &trials, &to95) != 6)
    fail_msg("unreadable table line: %.200s", line);
  return trials;
}

/* Case 3 and 4 of issue 19: four tuners (two on the same task) and an
 * import of 20000 records of one workload, all started together on a
 * store that does not exist yet, all end with exit 0; the store holds
 * every config once, and the two on one task measured no config twice:
 * what they say they measured is what the store holds for the task. */
static void four_tunes_and_an_import_on_a_new_store(void **state) {
  (void)state;
  char records[600], jsonl[600], conv[1100], depthwise[1100], residual[1100];
  in_temp("together.sqlite", records, sizeof(records));
  in_temp("import.jsonl", jsonl, sizeof(jsonl));
  sample_path("tiny_conv.json", conv, sizeof(conv));
  sample_path("tiny_depthwise.json", depthwise, sizeof(depthwise));
  sample_path("tiny_residual.json", residual, sizeof(residual));
  FILE *file = fopen(jsonl, "w");
  assert_non_null(file);
  for (int i = 0; i < 20000; ++i)
    fprintf(file,
            "{\"input\":[\"cpu -device_kind=cpu -fingerprint=cpu:imported -plugin_version=0.1.0\",\"t\",[\"conv2d n1 "
            "c3 h16 w16 k5 r3x3 s1x1 p1,1,1,1 d1x1 g1+bias+relu f32\",1],{}],\"config\":{\"index\":%d,\"entity\":[["
            "\"tile\",\"ot\",[%d]]]},\"result\":[[0.001],0,0.5,1700000000],\"version\":0.2,\"hetc_version\":\"0.1.0\"}\n",
            i, i);
  assert_int_equal(fclose(file), 0);
  const char *tunes[4][20] = {
      {"tune", conv, "--targets", "cpu", "--records", records, "--tasks", "1", "--trials", "8", "--batch", "4",
       "--workers", "1", "--search", "random", NULL},
      {"tune", conv, "--targets", "cpu", "--records", records, "--tasks", "1", "--trials", "8", "--batch", "4",
       "--workers", "1", "--search", "random", NULL},
      {"tune", depthwise, "--targets", "cpu", "--records", records, "--tasks", "1", "--trials", "6", "--batch", "3",
       "--workers", "1", NULL},
      {"tune", residual, "--targets", "cpu", "--records", records, "--tasks", "1", "--trials", "6", "--batch", "3",
       "--workers", "1", NULL},
  };
  const char *import[] = {"records", "import", jsonl, "--records", records, NULL};
  char outs[5][600], errs[5][600];
  pid_t pids[5];
  for (int k = 0; k < 5; ++k) {
    char name[32];
    snprintf(name, sizeof(name), "together-%d.out", k);
    in_temp(name, outs[k], sizeof(outs[k]));
    snprintf(name, sizeof(name), "together-%d.err", k);
    in_temp(name, errs[k], sizeof(errs[k]));
    pids[k] = start_hetc_in(NULL, k < 4 ? tunes[k] : import, outs[k], errs[k]);
  }
  char *tables[5];
  for (int k = 0; k < 5; ++k) {
    int status = wait_exit(pids[k]);
    tables[k] = slurp(outs[k]);
    char *said = slurp(errs[k]);
    if (status != 0) fail_msg("process %d: exit %d\n%s", k, status, said);
    free(said);
  }
  char imported_line[2048];
  snprintf(imported_line, sizeof(imported_line), "imported 20000 records from %s into %s (0 already there)\n", jsonl,
           records);
  assert_string_equal(tables[4], imported_line);
  hetc_record_list_t list = stored_records(records);
  assert_each_config_once(&list);
  int32_t imported = 0, shared_task = 0;
  for (int32_t i = 0; i < list.count; ++i) {
    if (!strcmp(list.items[i].device_fingerprint, "cpu:imported")) ++imported;
    else if (!strcmp(list.items[i].workload_key, "conv2d n1 c3 h16 w16 k5 r3x3 s1x1 p1,1,1,1 d1x1 g1+bias+relu f32"))
      ++shared_task;
  }
  assert_int_equal(imported, 20000);
  const int first = table_trials(tables[0], 1), second = table_trials(tables[1], 1);
  print_message("the two tuners of one task measured %d and %d configs; the store holds %d\n", first, second,
                shared_task);
  assert_int_equal(first + second, shared_task);
  assert_true(shared_task >= 8);
  assert_int_equal(list.count, 20000 + shared_task + table_trials(tables[2], 1) + table_trials(tables[3], 1));
  hetc_record_list_free(&list);
  for (int k = 0; k < 5; ++k) free(tables[k]);
}

/* The measurement workers (hetc-measure-worker) the tuner `tuner` runs. */
static int32_t worker_pids(pid_t tuner, pid_t *out, int32_t capacity) {
  char path[64];
  snprintf(path, sizeof(path), "/proc/%d/task/%d/children", (int)tuner, (int)tuner);
  FILE *file = fopen(path, "r");
  int32_t n = 0;
  int pid = 0;
  while (file && n < capacity && fscanf(file, "%d", &pid) == 1) {
    char comm_path[64], comm[64] = "";
    snprintf(comm_path, sizeof(comm_path), "/proc/%d/comm", pid);
    FILE *comm_file = fopen(comm_path, "r");
    if (comm_file && fgets(comm, sizeof(comm), comm_file) && !strncmp(comm, "hetc-measure-wo", 15))
      out[n++] = (pid_t)pid;
    if (comm_file) fclose(comm_file);
  }
  if (file) fclose(file);
  return n;
}

/* Case 4 of issue 19: measurement workers killed from outside (SIGKILL
 * at random points of a tune: while starting, building, measuring or
 * idle) mark no config bad -- before, each left a permanent runtime_device
 * record "killed by signal 9" -- and the run completes with every trial. */
static void workers_killed_from_outside_mark_nothing_bad(void **state) {
  (void)state;
  char records[600], tiny[1100], err[600];
  in_temp("killed.sqlite", records, sizeof(records));
  in_temp("killed.err", err, sizeof(err));
  sample_path("tiny_conv.json", tiny, sizeof(tiny));
  const char *args[] = {"tune", tiny, "--targets", "cpu", "--records", records, "--trials", "20", "--batch", "4",
                        "--workers", "2", "--search", "random", "--no-transfer", "-q", NULL};
  /* An empty kernel cache of its own: every trial builds, as on a first
   * run, so that kills land while building too and the tune lasts long
   * enough for them (with the suite's cache warm it took 0.4 s, and the
   * kills every 50 to 300 ms were too few). 20 trials a conv: under the
   * sanitizers LLVM builds slowly. */
  char cache[600];
  in_temp("killed-cache", cache, sizeof(cache));
  const char *suite_cache = getenv("XDG_CACHE_HOME");
  char *kept_cache = suite_cache ? strdup(suite_cache) : NULL;
  setenv("XDG_CACHE_HOME", cache, 1);
  pid_t tuner = start_hetc_in(NULL, args, NULL, err);
  if (kept_cache) setenv("XDG_CACHE_HOME", kept_cache, 1);
  else unsetenv("XDG_CACHE_HOME");
  free(kept_cache);
  unsigned seed = 12345;
  int kills = 0, status = 0;
  for (;;) {
    pid_t done = waitpid(tuner, &status, WNOHANG);
    if (done == tuner) break;
    struct timespec pause = {0, (long)(50 + rand_r(&seed) % 250) * 1000000L};
    nanosleep(&pause, NULL);
    pid_t workers[64];
    int32_t n = worker_pids(tuner, workers, 64);
    if (n > 0 && kill(workers[rand_r(&seed) % (unsigned)n], SIGKILL) == 0) ++kills;
  }
  char *said = slurp(err);
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) fail_msg("hetc tune: status %d\n%s", status, said);
  free(said);
  print_message("killed %d workers during the tune\n", kills);
  assert_true(kills >= 5);
  /* The workers it left were reaped (they come back here when orphaned). */
  for (int waited = 0; waited < 100 && waitpid(-1, NULL, WNOHANG) >= 0; ++waited) {
    struct timespec pause = {0, 20000000};
    nanosleep(&pause, NULL);
  }
  hetc_record_list_t list = stored_records(records);
  assert_each_config_once(&list);
  int32_t per_workload[3] = {0, 0, 0};
  for (int32_t i = 0; i < list.count; ++i) {
    const hetc_record_t *r = &list.items[i];
    if (r->error != HETC_RECORD_OK)
      fail_msg("%s %s: %s (%s)", r->workload_key, r->config_json, hetc_record_error_name(r->error),
               r->error_message ? r->error_message : "");
    per_workload[r->workload_key[0] == 'd' ? 2 : strstr(r->workload_key, " c3 ") ? 0 : 1]++;
  }
  /* Every trial of the two convolutions, both configs of the dense layer. */
  assert_int_equal(per_workload[0], 20);
  assert_int_equal(per_workload[1], 20);
  assert_int_equal(per_workload[2], 2);
  hetc_record_list_free(&list);
}

/* Case 16 of issue 19: Ctrl-C during a tune ended it with no word. Now it
 * says how many records were kept (all those written: each batch is one
 * transaction) and whether the batch in flight was dropped, ends as SIGINT
 * would (130), leaves no worker behind, and the same command resumes. */
static void an_interrupted_tune_says_what_it_kept(void **state) {
  (void)state;
  char records[600], tiny[1100], err[600];
  in_temp("interrupted.sqlite", records, sizeof(records));
  in_temp("interrupted.err", err, sizeof(err));
  sample_path("tiny_conv.json", tiny, sizeof(tiny));
  const char *args[] = {"tune", tiny, "--targets", "cpu", "--records", records, "--tasks", "1", "--trials", "400",
                        "--batch", "4", "--workers", "2", "--search", "random", "--no-transfer", "-q", NULL};
  pid_t tuner = start_hetc_in(NULL, args, NULL, err);
  int64_t stored = 0;
  for (int waited = 0; waited < 1200 && stored < 12; ++waited) {
    struct timespec pause = {0, 25000000};
    nanosleep(&pause, NULL);
    stored = exists(records) ? count_records(records) : 0;
  }
  assert_true(stored >= 12);
  kill(tuner, SIGINT);
  assert_int_equal(wait_exit(tuner), 128 + SIGINT);
  for (int waited = 0; waited < 100; ++waited) {
    pid_t reaped = waitpid(-1, NULL, WNOHANG);
    if (reaped < 0 && errno == ECHILD) break;
    struct timespec pause = {0, 20000000};
    nanosleep(&pause, NULL);
  }
  assert_int_equal(waitpid(-1, NULL, WNOHANG), -1);
  const int64_t kept = count_records(records);
  assert_true(kept >= 12 && kept < 400);
  char *said = slurp(err), want[2048];
  snprintf(want, sizeof(want), "hetc: interrupted (Interrupt): the %lld records this run measured are kept in %s",
           (long long)kept, records);
  if (strncmp(said, want, strlen(want)) != 0) fail_msg("stderr:\n%s\nwant it to start with\n%s", said, want);
  const char *rest = said + strlen(want);
  int dropped = 0, consumed = 0;
  if (sscanf(rest, "; the batch being measured (%d candidates) was dropped, none of it recorded%n", &dropped,
             &consumed) == 1 && consumed > 0)
    rest += consumed;
  assert_string_equal(rest, "; the same command resumes the run\n");
  assert_true(dropped >= 0 && dropped <= 4);
  free(said);
  /* Resumed, it ends with every trial, none measured twice. */
  const char *resume[] = {"tune", tiny, "--targets", "cpu", "--records", records, "--tasks", "1", "--trials", "40",
                          "--batch", "4", "--no-transfer", "-q", NULL};
  assert_int_equal(wait_exit(start_hetc_in(NULL, resume, NULL, NULL)), 0);
  hetc_record_list_t list = stored_records(records);
  assert_each_config_once(&list);
  assert_int_equal(list.count, kept > 40 ? kept : 40);
  hetc_record_list_free(&list);
}

/* The rows in the store's claims table (-1 before the store exists). */
static int claims_count(sqlite3 *db) {
  sqlite3_stmt *stmt = NULL;
  int count = -1;
  if (sqlite3_prepare_v2(db, "SELECT count(*) FROM claims", -1, &stmt, NULL) == SQLITE_OK &&
      sqlite3_step(stmt) == SQLITE_ROW)
    count = sqlite3_column_int(stmt, 0);
  sqlite3_finalize(stmt);
  return count;
}

/* Case 3 of issue 19: a tune that found the store locked lost its batch
 * ("starting a write: database is locked", exit 1). Now a writer waits
 * (HETC_RECORDS_BUSY_TIMEOUT, 1 s here, 5 minutes by default), and a batch
 * the store still will not take is kept beside it for `hetc records import`:
 * here the lock is held while the tuner measures a batch it has claimed. */
static void a_batch_the_store_will_not_take_is_kept_beside_it(void **state) {
  (void)state;
  char records[600], tiny[1100], err[600];
  in_temp("locked.sqlite", records, sizeof(records));
  in_temp("locked.err", err, sizeof(err));
  sample_path("tiny_conv.json", tiny, sizeof(tiny));
  const char *args[] = {"tune", tiny, "--targets", "cpu", "--records", records, "--tasks", "1", "--trials", "64",
                        "--batch", "16", "--workers", "1", "--search", "random", "--no-transfer", "-q", NULL};
  setenv("HETC_RECORDS_BUSY_TIMEOUT", "1", 1);
  pid_t tuner = start_hetc_in(NULL, args, NULL, err);
  unsetenv("HETC_RECORDS_BUSY_TIMEOUT");
  /* Once a batch is claimed (and not yet recorded), lock the store for
   * longer than the tuner waits. */
  sqlite3 *db = NULL;
  int locked = 0;
  for (int waited = 0; waited < 4000 && !locked; ++waited) {
    struct timespec pause = {0, 2000000};
    nanosleep(&pause, NULL);
    if (!db && exists(records) && sqlite3_open_v2(records, &db, SQLITE_OPEN_READWRITE, NULL) != SQLITE_OK) {
      sqlite3_close(db);
      db = NULL;
    }
    if (db && claims_count(db) > 0) locked = sqlite3_exec(db, "BEGIN IMMEDIATE", NULL, NULL, NULL) == SQLITE_OK;
  }
  assert_true(locked);
  const int status = wait_exit(tuner);
  assert_int_equal(sqlite3_exec(db, "ROLLBACK", NULL, NULL, NULL), SQLITE_OK);
  sqlite3_close(db);
  char *said = slurp(err);
  if (status != 1) fail_msg("exit %d: %s", status, said);
  print_message("%s", said);
  const char *kept = strstr(said, "the 16 records measured in this batch are kept in ");
  if (!kept || !strstr(said, "database is locked (another process held it for 1 s)"))
    fail_msg("stderr: %s", said);
  char rescue[700];
  assert_int_equal(sscanf(kept, "the 16 records measured in this batch are kept in %699s", rescue), 1);
  char want[800];
  snprintf(want, sizeof(want), "%s.unsaved-%d.jsonl", records, (int)tuner);
  assert_string_equal(rescue, want);
  free(said);
  const int64_t before = count_records(records);
  assert_int_equal(before % 16, 0);
  const char *import[] = {"records", "import", rescue, "--records", records, NULL};
  assert_int_equal(wait_exit(start_hetc_in(NULL, import, NULL, NULL)), 0);
  assert_int_equal(count_records(records), before + 16);
  hetc_record_list_t list = stored_records(records);
  assert_each_config_once(&list);
  hetc_record_list_free(&list);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(faults_give_typed_records_and_the_run_finishes),
      cmocka_unit_test(a_killed_run_resumes_without_measuring_twice),
      cmocka_unit_test(tasks_selects_what_is_tuned),
      cmocka_unit_test(the_end_table_uses_the_kept_peak),
      cmocka_unit_test(a_lone_default_record_is_weighed_against_the_other_templates),
      cmocka_unit_test(reading_commands_refuse_a_missing_store),
      cmocka_unit_test(four_tunes_and_an_import_on_a_new_store),
      cmocka_unit_test(workers_killed_from_outside_mark_nothing_bad),
      cmocka_unit_test(an_interrupted_tune_says_what_it_kept),
      cmocka_unit_test(a_batch_the_store_will_not_take_is_kept_beside_it),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
