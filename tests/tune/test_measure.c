/* Measurement in worker processes (driver/tune/measure.c) against the
 * "fault" target, whose `behaviour` knob makes a candidate hang, crash,
 * fail to build or answer wrongly: each must give its typed record, the
 * batch must finish, and no worker may outlive the measurer. A worker
 * killed from outside (HETC_FAULT_KILL) is not held against its
 * candidate: measured again, or given up without a record. */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "tune/measure.h"

static const hetc_plugin_tensor_t conv_input = {HETC_PLUGIN_DTYPE_FLOAT32, 4, {1, 4, 8, 8}, {0, 0}};

static hetc_plugin_workload_t conv_workload(void) {
  hetc_plugin_workload_t w;
  memset(&w, 0, sizeof(w));
  w.op = HETC_PLUGIN_OP_CONV2D;
  w.num_inputs = 1;
  w.inputs = &conv_input;
  w.output = (hetc_plugin_tensor_t){HETC_PLUGIN_DTYPE_FLOAT32, 4, {1, 6, 8, 8}, {0, 0}};
  w.kernel[0] = w.kernel[1] = 3;
  w.strides[0] = w.strides[1] = 1;
  w.padding[0] = w.padding[1] = w.padding[2] = w.padding[3] = 1;
  w.dilation[0] = w.dilation[1] = 1;
  w.groups = 1;
  w.epilogue.has_bias = 1;
  w.epilogue.activation = HETC_PLUGIN_ACT_RELU;
  return w;
}

typedef struct candidate_config_t {
  int64_t behaviour, tile;
  hetc_plugin_knob_value_t knobs[2];
  hetc_plugin_config_t config;
} candidate_config_t;

static void make_config(candidate_config_t *c, int64_t behaviour, int64_t tile) {
  c->behaviour = behaviour;
  c->tile = tile;
  c->knobs[0] = (hetc_plugin_knob_value_t){"behaviour", 1, &c->behaviour};
  c->knobs[1] = (hetc_plugin_knob_value_t){"tile", 1, &c->tile};
  c->config = (hetc_plugin_config_t){2, c->knobs};
}

static void assert_no_worker_left(const pid_t *pids, int32_t count) {
  assert_true(count > 0);
  for (int32_t i = 0; i < count; ++i) {
    errno = 0;
    assert_int_equal(kill(pids[i], 0), -1);
    assert_int_equal(errno, ESRCH);
  }
}

static void every_fault_gives_its_record(void **state) {
  (void)state;
  hetc_measure_options_t options = hetc_measure_default_options();
  options.build_workers = 2;
  options.build_timeout_s = 3;
  options.run_timeout_s = 3;
  options.trial.check = 1;
  options.trial.min_repeat_ms = 1;
  hetc_measurer_t *m = NULL;
  hetc_status_t status = hetc_measurer_create("fault", 0, &options, &m);
  assert_null(status);

  /* Good configs around every fault, so that requeued builds are seen. */
  enum { COUNT = 12 };
  const int64_t behaviours[COUNT] = {0, 1, 2, 0, 3, 4, 5, 0, 6, 7, 8, 0};
  const int64_t tiles[COUNT] = {1, 1, 1, 2, 1, 1, 1, 4, 1, 1, 1, 2};
  candidate_config_t configs[COUNT];
  hetc_measure_input_t inputs[COUNT];
  hetc_record_t records[COUNT];
  memset(records, 0, sizeof(records));
  for (int32_t i = 0; i < COUNT; ++i) {
    make_config(&configs[i], behaviours[i], tiles[i]);
    inputs[i] = (hetc_measure_input_t){0, &configs[i].config};
  }
  hetc_plugin_workload_t w = conv_workload();
  uint8_t measured[COUNT];
  status = hetc_measurer_run(m, &w, inputs, COUNT, records, measured);
  assert_null(status);
  for (int32_t i = 0; i < COUNT; ++i) assert_int_equal(measured[i], 1);

  static const struct {
    hetc_record_error_t error;
    const char *message;
  } want[] = {
      {HETC_RECORD_OK, NULL},
      {HETC_RECORD_BUILD_TIMEOUT, "build did not finish in 3 s"},
      {HETC_RECORD_COMPILE_HOST,
       "the measurement worker killed by signal 11 (Segmentation fault) while building"},
      {HETC_RECORD_COMPILE_HOST, "fault: the compiler said no"},
      {HETC_RECORD_INSTANTIATION, "fault: this config is refused"},
      {HETC_RECORD_RUN_TIMEOUT, "run did not finish in 3 s"},
      {HETC_RECORD_RUNTIME_DEVICE,
       "the measurement worker killed by signal 11 (Segmentation fault) while running the kernel"},
      {HETC_RECORD_WRONG_ANSWER, NULL},
      {HETC_RECORD_DEVICE_LIMITS, "fault: 4096 threads per group"},
  };
  for (int32_t i = 0; i < COUNT; ++i) {
    hetc_record_t *r = &records[i];
    hetc_record_error_t expected = want[behaviours[i]].error;
    if (r->error != expected)
      fail_msg("candidate %d (behaviour %lld): error %d (%s), want %d", i, (long long)behaviours[i], r->error,
               r->error_message ? r->error_message : "", expected);
    if (expected == HETC_RECORD_OK) {
      assert_int_equal(r->num_costs, options.trial.repeat);
      for (int32_t k = 0; k < r->num_costs; ++k) assert_true(r->costs[k] > 0 && r->costs[k] < 0.1);
      assert_null(r->error_message);
    } else {
      assert_int_equal(r->num_costs, 0);
      assert_non_null(r->error_message);
      if (want[behaviours[i]].message) assert_string_equal(r->error_message, want[behaviours[i]].message);
    }
    assert_true(r->total_seconds >= r->build_seconds);
  }
  assert_true(!strncmp(records[9].error_message, "max relative error 0.", 21));
  assert_non_null(strstr(records[9].error_message, "exceeds 0.0001"));

  /* The measurer goes on after faults: a second batch of good configs. */
  hetc_measure_input_t good[2] = {{0, &configs[0].config}, {0, &configs[3].config}};
  hetc_record_t again[2];
  memset(again, 0, sizeof(again));
  assert_null(hetc_measurer_run(m, &w, good, 2, again, measured));
  assert_int_equal(again[0].error, HETC_RECORD_OK);
  assert_int_equal(again[1].error, HETC_RECORD_OK);

  pid_t pids[64];
  int32_t num_pids = hetc_measurer_worker_pids(m, pids, 64);
  hetc_measurer_free(m);
  assert_no_worker_left(pids, num_pids);
  for (int32_t i = 0; i < COUNT; ++i) free(records[i].error_message);
}

static void a_missing_target_is_reported(void **state) {
  (void)state;
  hetc_measurer_t *m = NULL;
  assert_null(hetc_measurer_create("no-such-target", 0, NULL, &m));
  hetc_plugin_workload_t w = conv_workload();
  candidate_config_t config;
  make_config(&config, 0, 1);
  hetc_measure_input_t input = {0, &config.config};
  hetc_record_t record;
  memset(&record, 0, sizeof(record));
  uint8_t measured = 1;
  hetc_status_t status = hetc_measurer_run(m, &w, &input, 1, &record, &measured);
  assert_int_equal(measured, 0);
  assert_non_null(status);
  assert_int_equal(hetc_status_code(status), HETC_STATUS_UNAVAILABLE);
  assert_non_null(strstr(hetc_status_message(status), "no-such-target"));
  hetc_status_free(status);
  pid_t pids[8];
  int32_t n = hetc_measurer_worker_pids(m, pids, 8);
  hetc_measurer_free(m);
  assert_no_worker_left(pids, n);
  free(record.error_message);
}

/* Measures two good candidates and a crashing one with the fault target's
 * workers killed from outside as HETC_FAULT_KILL says; `kill_spec` gets
 * "%s" replaced by a fresh marker file. Returns the good ones' results. */
static void measure_with_kills(const char *kill_spec, hetc_record_t *records, uint8_t *measured) {
  char marker[64] = "/tmp/hetc-fault-kill-XXXXXX", spec[160];
  int fd = mkstemp(marker);
  assert_true(fd >= 0);
  close(fd);
  unlink(marker); /* the first candidate killed creates it again */
  snprintf(spec, sizeof(spec), kill_spec, marker);
  setenv("HETC_FAULT_KILL", spec, 1);
  hetc_measure_options_t options = hetc_measure_default_options();
  options.build_workers = 2;
  options.trial.min_repeat_ms = 1;
  hetc_measurer_t *m = NULL;
  assert_null(hetc_measurer_create("fault", 0, &options, &m));
  candidate_config_t configs[3];
  make_config(&configs[0], 0, 1);
  make_config(&configs[1], 0, 2);
  make_config(&configs[2], 6, 1); /* the run crashes: its own fault */
  hetc_measure_input_t inputs[3] = {{0, &configs[0].config}, {0, &configs[1].config}, {0, &configs[2].config}};
  hetc_plugin_workload_t w = conv_workload();
  memset(records, 0, 3 * sizeof(hetc_record_t));
  assert_null(hetc_measurer_run(m, &w, inputs, 3, records, measured));
  /* The crash is the candidate's, killed workers or not. */
  assert_int_equal(measured[2], 1);
  assert_int_equal(records[2].error, HETC_RECORD_RUNTIME_DEVICE);
  assert_string_equal(records[2].error_message,
                      "the measurement worker killed by signal 11 (Segmentation fault) while running the kernel");
  pid_t pids[64];
  int32_t num_pids = hetc_measurer_worker_pids(m, pids, 64);
  hetc_measurer_free(m);
  assert_no_worker_left(pids, num_pids);
  unsetenv("HETC_FAULT_KILL");
  unlink(marker);
  free(records[2].error_message);
  records[2].error_message = NULL;
}

/* Killed once from outside -- SIGKILL while building or running, SIGTERM,
 * a SIGSEGV that another process sent -- a candidate is measured again on
 * a new worker and comes out ok. */
static void a_worker_killed_from_outside_is_measured_again(void **state) {
  (void)state;
  const char *const specs[] = {"build:9:%s", "run:9:%s", "run:15:%s", "build:11:%s", "run:11:%s", "run:6:%s"};
  for (size_t s = 0; s < sizeof(specs) / sizeof(specs[0]); ++s) {
    hetc_record_t records[3];
    uint8_t measured[3];
    measure_with_kills(specs[s], records, measured);
    for (int32_t i = 0; i < 2; ++i) {
      if (!measured[i] || records[i].error != HETC_RECORD_OK)
        fail_msg("%s: candidate %d: measured %d, error %d (%s)", specs[s], i, measured[i], records[i].error,
                 records[i].error_message ? records[i].error_message : "");
      assert_true(records[i].num_costs > 0);
      assert_null(records[i].error_message);
    }
  }
}

/* Killed from outside every time, a candidate is given up after a few
 * attempts with no record at all, never a failed one. */
static void a_worker_killed_every_time_gives_no_record(void **state) {
  (void)state;
  hetc_record_t records[3];
  uint8_t measured[3];
  measure_with_kills("run:9", records, measured); /* no marker: every time */
  for (int32_t i = 0; i < 2; ++i) {
    assert_int_equal(measured[i], 0);
    assert_int_equal(records[i].error, HETC_RECORD_OK);
    assert_int_equal(records[i].num_costs, 0);
    assert_null(records[i].error_message);
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(every_fault_gives_its_record),
      cmocka_unit_test(a_missing_target_is_reported),
      cmocka_unit_test(a_worker_killed_from_outside_is_measured_again),
      cmocka_unit_test(a_worker_killed_every_time_gives_no_record),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
