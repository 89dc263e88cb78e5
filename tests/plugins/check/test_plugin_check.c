/* `hetc plugin-check` passes the example_c sample and catches each defect
 * of the broken plugins (broken_plugin.c) with its own message, exiting 1;
 * a crash is reported and the checks after it still run; the descriptor
 * line shows the device's kept peak without writing to the store. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include <cmocka.h>

#include "hetc/plugin.h"
#include "records/records.h"

/* Runs plugin-check on `plugin` (a path under HETC_CHECK_DIR) and returns
 * its output (static buffer) and exit status. */
static const char *check(const char *plugin, const char *flags, int *out_exit) {
  static char output[1 << 20];
  char command[2048];
  snprintf(command, sizeof(command), "%s/bin/hetc plugin-check %s/%s %s 2>&1", getenv("HETC_BINARY_DIR"),
           getenv("HETC_CHECK_DIR"), plugin, flags);
  FILE *pipe = popen(command, "r");
  assert_non_null(pipe);
  size_t length = fread(output, 1, sizeof(output) - 1, pipe);
  output[length] = 0;
  int status = pclose(pipe);
  *out_exit = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  printf("---- %s\n%s", command, output);
  return output;
}

/* plugin-check --quick on broken/libhetc_broken_<defect>.so, which must
 * fail (exit status 1). */
static const char *check_broken(const char *defect) {
  char plugin[256];
  int exit_status;
  snprintf(plugin, sizeof(plugin), "broken/libhetc_broken_%s.so", defect);
  const char *out = check(plugin, "--quick", &exit_status);
  assert_int_equal(exit_status, 1);
  return out;
}

static void expect_line(const char *output, const char *line_start) {
  for (const char *line = output; line && *line; line = strchr(line, '\n') ? strchr(line, '\n') + 1 : NULL)
    if (!strncmp(line, line_start, strlen(line_start))) return;
  fail_msg("no line starting with: %s", line_start);
}

static void expect_text(const char *output, const char *text) {
  if (!strstr(output, text)) fail_msg("the report lacks: %s", text);
}

static void sample_passes(void **state) {
  (void)state;
  int exit_status;
  const char *out = check("example_c/libhetc_test_plugin_example_c.so", "", &exit_status);
  assert_int_equal(exit_status, 0);
  expect_text(out, ", 0 failed, 0 skipped\n");
  /* Built for 2.0, the sample declines the hosts of major 1. */
  expect_line(out, "PASS  ABI 1.0: load and negotiate: declines a host of ABI 1.0 (it needs a newer one)");
  expect_line(out, "PASS  device 0: resize 1x6x5x7 -> 13x16 linear pytorch_half_pixel: template 0 (example_c_resize)");
  expect_line(out, "PASS  device 0: conv2d 1x8x12x12 -> 8 k3x3 s1 p1,1,1,1 depthwise bias relu6: template 0 (example_c_direct)");
  expect_line(out, "PASS  release: instance_destroy freed every block allocated with host->alloc");
}

static void wrong_major(void **state) {
  (void)state;
  const char *out = check_broken("wrong_major");
  char want[256];
  snprintf(want, sizeof(want),
           "FAIL  ABI %d.%d: load and negotiate: refused: the plugin speaks ABI %d.%d; this hetc speaks ABI %d.%d and "
           "loads plugins of majors 1 and %d\n",
           HETC_PLUGIN_ABI_MAJOR, HETC_PLUGIN_ABI_MINOR, HETC_PLUGIN_ABI_MAJOR + 1, HETC_PLUGIN_ABI_MINOR,
           HETC_PLUGIN_ABI_MAJOR, HETC_PLUGIN_ABI_MINOR, HETC_PLUGIN_ABI_MAJOR);
  expect_text(out, want);
  expect_text(out, "plugin-check: 0 passed, 1 failed, 0 skipped\n");
}

static void bad_descriptor(void **state) {
  (void)state;
  const char *out = check_broken("bad_descriptor");
  expect_text(out, "FAIL  device 0: descriptor: compute_units is -4 (0 means unknown)\n");
}

static void space_drift(void **state) {
  (void)state;
  const char *out = check_broken("space_drift");
  expect_line(out, "FAIL  device 0: conv2d 1x8x10x10 -> 16 k3x3 s1 p1,1,1,1 bias relu: template 0 (example_c_direct): "
                   "the space is not the same when defined twice: ");
  expect_text(out, "the space is not the same when defined twice: knob 0 is 'tile_k' (split) with 5 candidates, then "
                   "'tile_k' (split) with 5 of other values (template_define_space must depend only on the device "
                   "and the workload)\n");
}

static void crash(void **state) {
  (void)state;
  const char *out = check_broken("crash");
  /* The line names the call the plugin crashed in, after the item. */
  expect_line(out, "FAIL  device 0: conv2d 1x8x10x10 -> 16 k3x3 s1 p1,1,1,1 bias relu: template 0 (example_c_direct): "
                   "crashed (signal 11, Segmentation fault) in build of the default config {");
  expect_line(out, "FAIL  device 0: calls with wrong arguments: crashed (signal 11, Segmentation fault) in build with a "
                   "template index one past template_count(), on conv2d ");
  /* A new process went on after each crash. */
  expect_line(out, "PASS  device 0: dense 2x40 -> 10 bias relu: template 0 (example_c_dense):");
  expect_line(out, "PASS  release:");
}

static void wrong_numbers(void **state) {
  (void)state;
  const char *out = check_broken("wrong_numbers");
  expect_line(out, "FAIL  device 0: conv2d 1x8x10x10 -> 16 k3x3 s1 p1,1,1,1 bias relu: template 0 (example_c_direct): {");
  expect_text(out, "against the reference executor (tolerance 0.0001)\n");
  expect_line(out, "PASS  device 0: dense 2x40 -> 10 bias relu: template 0 (example_c_dense):");
}

static void leak(void **state) {
  (void)state;
  const char *out = check_broken("leak");
  expect_line(out, "FAIL  release: ");
  expect_text(out, "allocated with host->alloc are still live after instance_destroy\n");
}

static void copy_transform(void **state) {
  (void)state;
  const char *out = check_broken("copy_transform");
  expect_line(out, "FAIL  device 0: layout_transform 1x6x3x4 row-major -> NCHW4c: template 0 (");
  expect_text(out, "the layout_transform NCHW -> NCHW4c was requested; artifact_info describes NCHW -> NCHW\n");
}

static void missing_file_is_bad_input(void **state) {
  (void)state;
  int exit_status;
  const char *out = check("no_such_plugin.so", "", &exit_status);
  assert_int_equal(exit_status, 2);
  expect_text(out, "no_such_plugin.so: No such file or directory\n");
}

/* A bare file name is the file in the current folder, as for any other
 * command (dlopen alone would search the library path for it). */
static void bare_file_name_in_current_folder(void **state) {
  (void)state;
  char command[2048], output[1 << 16];
  snprintf(command, sizeof(command), "cd %s/example_c && %s/bin/hetc plugin-check libhetc_test_plugin_example_c.so "
           "--quick 2>&1", getenv("HETC_CHECK_DIR"), getenv("HETC_BINARY_DIR"));
  FILE *pipe = popen(command, "r");
  assert_non_null(pipe);
  size_t length = fread(output, 1, sizeof(output) - 1, pipe);
  output[length] = 0;
  int status = pclose(pipe);
  printf("---- %s\n%s", command, output);
  assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  expect_text(output, ", 0 failed, 0 skipped\n");
}

static void remove_store(const char *path) {
  const char *suffixes[] = {"", "-wal", "-shm"};
  for (int i = 0; i < 3; ++i) {
    char file[600];
    snprintf(file, sizeof(file), "%s%s", path, suffixes[i]);
    remove(file);
  }
}

/* The peak on the descriptor line is the effective one: with a store that
 * keeps a higher figure for the sample's fingerprint than it measures, the
 * line says so; plugin-check only reads the store. */
static void descriptor_shows_the_kept_peak(void **state) {
  (void)state;
  char store[512], fingerprint[512];
  snprintf(store, sizeof(store), "%s/kept-peak.sqlite", getenv("HETC_CHECK_DIR"));
  remove_store(store);
  setenv("HETC_RECORDS", store, 1);
  int exit_status;
  const char *out = check("example_c/libhetc_test_plugin_example_c.so", "--quick", &exit_status);
  assert_int_equal(exit_status, 0);
  const char *line = strstr(out, "PASS  device 0: descriptor: ");
  assert_non_null(line);
  const char *fp = strstr(line, ", fingerprint ");
  assert_non_null(fp);
  fp += strlen(", fingerprint ");
  snprintf(fingerprint, sizeof(fingerprint), "%.*s", (int)(strchr(fp, '\n') - fp), fp);
  assert_null(strstr(line, "best of"));

  hetc_records_t *records = NULL;
  assert_null(hetc_records_open(store, &records));
  assert_null(hetc_records_note_peak(records, fingerprint, "example_c", 1e6, NULL));
  hetc_records_close(records);
  out = check("example_c/libhetc_test_plugin_example_c.so", "--quick", &exit_status);
  assert_int_equal(exit_status, 0);
  expect_line(out, "PASS  device 0: descriptor: ");
  expect_text(out, ", peak 1000000.0 GFLOPS fp32 (best of 1 run; this run ");
  hetc_kept_peak_t kept;
  int found = 0;
  assert_null(hetc_records_open(store, &records));
  assert_null(hetc_records_get_peak(records, fingerprint, &kept, &found));
  hetc_records_close(records);
  assert_true(found && kept.gflops == 1e6 && kept.runs == 1);
  unsetenv("HETC_RECORDS");
  remove_store(store);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(sample_passes), cmocka_unit_test(wrong_major),   cmocka_unit_test(bad_descriptor),
      cmocka_unit_test(space_drift),   cmocka_unit_test(crash),         cmocka_unit_test(wrong_numbers),
      cmocka_unit_test(leak),          cmocka_unit_test(missing_file_is_bad_input),
      cmocka_unit_test(bare_file_name_in_current_folder), cmocka_unit_test(copy_transform),
      cmocka_unit_test(descriptor_shows_the_kept_peak),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
