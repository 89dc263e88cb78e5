/* Every device of a plugin is a target (README.md, "Targets"): PoCL with two
 * devices (POCL_DEVICES="pthread pthread") is two devices of the opencl
 * target. `--targets opencl` places over both, splitting convs across them
 * with --split all; `opencl:1` is the second alone; each package's outputs
 * are checked against the reference executor. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "e2e_util.h"

#define TWO_DEVICES "POCL_DEVICES='pthread pthread'"

static const char *model(void) {
  static char path[4096];
  snprintf(path, sizeof(path), "%s/tests/e2e/models/selection.json", getenv("HETC_SOURCE_DIR"));
  return path;
}

/* Runs `hetc ARGS` with two PoCL devices: its exit status, what it printed
 * to stdout and stderr in `out`. */
static int hetc_two_devices(const char *args, char *out, size_t size) {
  char command[4096];
  const int length = snprintf(command, sizeof(command), "%s %s %s 2>&1", TWO_DEVICES, e2e_hetc(), args);
  assert_in_range(length, 0, sizeof(command) - 1); /* a cut command would run another one */
  FILE *pipe = popen(command, "r");
  assert_non_null(pipe);
  size_t used = fread(out, 1, size - 1, pipe);
  out[used] = 0;
  const int status = pclose(pipe);
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

static void plugins_lists_both_devices(void **state) {
  (void)state;
  char out[16384];
  assert_int_equal(hetc_two_devices("plugins", out, sizeof(out)), 0);
  /* One line per device under the opencl plugin, numbered from 0. */
  printf("%s", out);
  const char *opencl = strstr(out, "\n  target: opencl\n");
  assert_non_null(opencl);
  assert_non_null(strstr(opencl, "\n  device 1: "));
}

static void placement_splits_across_both(void **state) {
  (void)state;
  char printed[8192];
  const double error = e2e_compile_and_check(model(), "opencl", "--split all", TWO_DEVICES, printed, sizeof(printed));
  printf("opencl (two devices, --split all): max rel error %.2e\n", error);
  assert_true(error < 1e-4);
  assert_non_null(strstr(printed, " for opencl:0, opencl:1: "));
  int splits = 0;
  const char *line = strstr(printed, "\nsplit: ");
  assert_non_null(line);
  assert_int_equal(sscanf(line, "\nsplit: %d conv2d", &splits), 1);
  assert_true(splits > 0);
}

static void one_device_by_index(void **state) {
  (void)state;
  char printed[8192];
  const double error = e2e_compile_and_check(model(), "opencl:1", "", TWO_DEVICES, printed, sizeof(printed));
  printf("opencl:1: max rel error %.2e\n", error);
  assert_true(error < 1e-4);
  assert_non_null(strstr(printed, " for opencl:1: "));
}

static void bad_device_targets(void **state) {
  (void)state;
  char out[4096], args[8192];
  snprintf(args, sizeof(args), "compile %s --targets opencl:2 -o /nonexistent/never.hetc", model());
  assert_int_equal(hetc_two_devices(args, out, sizeof(out)), 2);
  assert_string_equal(out, "hetc: target 'opencl:2': opencl has 2 devices (opencl:0 to opencl:1)\n");
  snprintf(args, sizeof(args), "compile %s --targets opencl,opencl:1 -o /nonexistent/never.hetc", model());
  assert_int_equal(hetc_two_devices(args, out, sizeof(out)), 2);
  assert_string_equal(out, "hetc: target 'opencl:1' is listed twice (a target without ':INDEX' is every device of "
                           "its plugin)\n");
}

/* `hetc tune --targets opencl:1` tunes the second device: its measurement
 * workers open device 1, and the records are the opencl target's. */
static void tune_one_device(void **state) {
  (void)state;
  char out[1 << 16], args[8192], store[4096];
  snprintf(store, sizeof(store), "%s/devices-tune-%d.sqlite", getenv("HETC_BINARY_DIR"), (int)getpid());
  remove(store);
  snprintf(args, sizeof(args), "tune %s/samples/tiny_conv.json --targets opencl:1 --trials 3 --records %s",
           getenv("HETC_SOURCE_DIR"), store);
  assert_int_equal(hetc_two_devices(args, out, sizeof(out)), 0);
  printf("%s", out);
  assert_non_null(strstr(out, "   1  opencl:1  opencl_conv2d_"));
  snprintf(args, sizeof(args), "records best --records %s --target opencl", store);
  assert_int_equal(hetc_two_devices(args, out, sizeof(out)), 0);
  assert_non_null(strstr(out, "conv2d n1 c3 h16 w16 k5 r3x3"));
  char sidecar[4200];
  for (const char *suffix = ""; suffix; suffix = !suffix[0] ? "-wal" : !strcmp(suffix, "-wal") ? "-shm" : NULL) {
    snprintf(sidecar, sizeof(sidecar), "%s%s", store, suffix);
    remove(sidecar);
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(plugins_lists_both_devices),
      cmocka_unit_test(placement_splits_across_both),
      cmocka_unit_test(one_device_by_index),
      cmocka_unit_test(bad_device_targets),
      cmocka_unit_test(tune_one_device),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
