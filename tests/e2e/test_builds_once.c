/* A compile builds each distinct kernel once (kernel/kernel_shelf.h):
 * placement's costing builds every candidate to time it, and the package
 * then takes the chosen ones from the compile's shelf, as do the repeated
 * layers of a model. The cpu and vec plugins are wrapped by
 * count_builds_plugin.c, which logs every build() call; the package is
 * checked against the reference executor. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "common/fileio.h"
#include "e2e_util.h"

static int compare_lines(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

static void each_kernel_built_once(void **state) {
  (void)state;
  char log[1024], env[2048], printed[16384];
  snprintf(log, sizeof(log), "%s/count-builds-%d.log", getenv("HETC_BINARY_DIR"), (int)getpid());
  remove(log);
  snprintf(env, sizeof(env), "HETC_PLUGIN_PATH='%s' HETC_COUNT_BUILDS='%s'", getenv("HETC_COUNT_BUILDS_DIR"), log);
  const double error =
      e2e_compile_and_check(e2e_sample_path("squeezenet.json"), "cpu,vec", "--explain", env, printed, sizeof(printed));
  printf("squeezenet on cpu,vec: max rel error %.2e\n", error);
  assert_true(error < 1e-4);
  assert_non_null(strstr(printed, "placement of squeezenet1_1 on cpu vec "));

  char *text = NULL;
  size_t length = 0;
  hetc_status_t status = hetc_file_read_all(log, (size_t)1 << 30, &text, &length);
  if (status) fail_msg("%s", hetc_status_message(status));
  char **lines = NULL;
  int32_t count = 0;
  for (char *line = text, *next; line && *line; line = next) {
    next = strchr(line, '\n');
    if (next) *next++ = 0;
    lines = realloc(lines, sizeof(char *) * (size_t)(count + 1));
    lines[count++] = line;
  }
  qsort(lines, (size_t)count, sizeof(char *), compare_lines);
  int32_t distinct = 0, on_cpu = 0, on_vec = 0;
  for (int32_t i = 0; i < count; ++i) {
    if (i > 0 && !strcmp(lines[i], lines[i - 1])) fail_msg("built twice: %.200s", lines[i]);
    ++distinct;
    on_cpu += !strncmp(lines[i], "cpu ", 4);
    on_vec += !strncmp(lines[i], "vec ", 4);
  }
  printf("build() calls: %d, distinct kernels: %d (cpu %d, vec %d)\n", count, distinct, on_cpu, on_vec);
  /* Both devices were costed, so both built kernels. */
  assert_true(on_cpu > 0 && on_vec > 0);
  free(lines);
  free(text);
  remove(log);
}

int main(void) {
  const struct CMUnitTest tests[] = {cmocka_unit_test(each_kernel_built_once)};
  return cmocka_run_group_tests(tests, NULL, NULL);
}
