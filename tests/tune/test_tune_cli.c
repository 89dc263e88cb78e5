/* `hetc tune` end to end: faulty candidates give typed records and the run
 * finishes; a run killed with SIGKILL leaves no worker behind and resumes
 * without measuring anything twice; `hetc compile` then takes the tuned
 * configs; the end table's fraction of peak uses the device's kept peak. */
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
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "tune/records.h"

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
      freopen("/dev/null", "w", stdout);
      freopen("/dev/null", "w", stderr);
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

static int64_t count_records(const char *path) {
  hetc_records_t *store = NULL;
  int64_t count = -1;
  hetc_status_t status = hetc_records_open(path, &store);
  if (!status) status = hetc_records_count(store, &count);
  hetc_status_free(status);
  hetc_records_close(store);
  return count;
}

/* Every record in the store at `path` (the caller frees the list). */
static hetc_record_list_t stored_records(const char *path) {
  hetc_records_t *store = NULL;
  hetc_record_list_t list = {0, NULL};
  assert_null(hetc_records_open(path, &store));
  assert_null(hetc_records_query(store, NULL, &list));
  hetc_records_close(store);
  return list;
}

/* Compiles with the records (--explain, so the candidates are costed even
 * where `hetc tune` kept a plan), checks that graph-level selection weighed
 * candidates from each source in `sources` (space-separated names as the
 * placement problem writes them, e.g. "tuned nearest"), then runs the
 * package. Which candidate wins is measured, so it is not asserted. */
static int compile_and_check(const char *model, const char *records, const char *sources) {
  char package[512], dump[600], command[8192];
  snprintf(package, sizeof(package), "%s/package.hetc", temp_dir);
  snprintf(dump, sizeof(dump), "%s/problem.json", temp_dir);
  int used = snprintf(command, sizeof(command),
                      "rm -rf '%s' '%s' && HETC_PLACEMENT_PROBLEM='%s' '%s' compile '%s' --targets cpu --records '%s' "
                      "-o '%s' --explain | grep -q '^configs: '",
                      package, dump, dump, hetc_path, model, records, package);
  char copy[256];
  snprintf(copy, sizeof(copy), "%s", sources);
  for (char *save = NULL, *source = strtok_r(copy, " ", &save); source; source = strtok_r(NULL, " ", &save))
    used += snprintf(command + used, sizeof(command) - (size_t)used, " && grep -q '\"source\": \"%s\"' '%s'",
                     source, dump);
  snprintf(command + used, sizeof(command) - (size_t)used, " && '%s' run '%s' --random-input 1 > /dev/null",
           hetc_path, package);
  return system(command);
}

static void faults_give_typed_records_and_the_run_finishes(void **state) {
  (void)state;
  char records[512];
  snprintf(records, sizeof(records), "%s/faults.sqlite", temp_dir);
  const char *args[] = {"tune", model_path, "--targets", "fault", "--records", records, "--search", "grid", "--trials",
                        "27", "--build-timeout", "1", "--run-timeout", "1", "--check", "--no-transfer", "-q",
                        NULL};
  assert_int_equal(wait_exit(start_hetc(args)), 0);

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
  assert_int_equal(wait_exit(start_hetc(args)), 0);
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

  assert_int_equal(wait_exit(start_hetc(args)), 0);
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
           "'%s' compile '%s' --targets cpu --records '%s' -o '%s/kept.hetc' | grep -q "
           "'^placement: expected latency .* (kept in the records by an earlier tune or compile)$'",
           hetc_path, model_path, records, temp_dir);
  assert_int_equal(system(command), 0);
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
  assert_int_equal(compile_and_check(model_path, records, "tuned default"), 0);
  /* A run with transfer saves the cost model beside the store (all 48
   * trials are there already, so it measures nothing); then for a 3x3 conv
   * on another plane compile weighs the nearest tuned workload's config,
   * and for a 1x1 conv, which nothing tuned resembles, the model's best
   * prediction. */
  const char *transfer_args[] = {"tune", model_path, "--targets", "cpu", "--records", records, "--trials", "48", "-q",
                                 NULL};
  assert_int_equal(wait_exit(start_hetc(transfer_args)), 0);
  assert_int_equal(count_records(records), 48);
  char two_convs[1100];
  snprintf(two_convs, sizeof(two_convs), "%s/tests/tune/models/two_convs.json", getenv("HETC_SOURCE_DIR"));
  assert_int_equal(compile_and_check(two_convs, records, "nearest predicted default"), 0);
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
  assert_int_equal(wait_exit(start_hetc(bad_args)), 2);
  assert_int_equal(count_records(records), 0);

  const char *args[] = {"tune", two_convs, "--targets", "cpu", "--records", records, "--search", "random",
                        "--trials", "4", "--batch", "4", "--no-transfer", "--tasks", "2", "-q", NULL};
  assert_int_equal(wait_exit(start_hetc(args)), 0);
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

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(faults_give_typed_records_and_the_run_finishes),
      cmocka_unit_test(a_killed_run_resumes_without_measuring_twice),
      cmocka_unit_test(tasks_selects_what_is_tuned),
      cmocka_unit_test(the_end_table_uses_the_kept_peak),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
