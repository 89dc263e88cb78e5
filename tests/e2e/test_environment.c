/* The environment variables libhetc reads (common/env.h), in process: a
 * HETC_NUM_THREADS above the cap reaches the plugins capped (their
 * thread_count() and the pool their kernels run on), and a bad
 * HETC_NUM_THREADS, HETC_LOG_LEVEL or HETC_PLUGIN_PATH makes
 * hetc_context_create fail with BAD_INPUT naming the variable, so that an
 * embedding program hears of it as the hetc command does
 * (tests/e2e/test_cli_errors.sh covers the command). */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "common/env.h"
#include "common/thread_pool.h"
#include "hetc/hetc.h"
#include "plugins/host.h"

#define MAX_SEEN 4096

typedef struct seen_threads_t {
  pthread_mutex_t lock;
  pthread_t ids[MAX_SEEN];
  int count;
  long long items;
} seen_threads_t;

static void note_thread(int64_t begin, int64_t end, void *user_data) {
  seen_threads_t *seen = user_data;
  pthread_mutex_lock(&seen->lock);
  seen->items += end - begin;
  int known = 0;
  for (int i = 0; i < seen->count && !known; ++i) known = pthread_equal(seen->ids[i], pthread_self());
  if (!known && seen->count < MAX_SEEN) seen->ids[seen->count++] = pthread_self();
  pthread_mutex_unlock(&seen->lock);
  usleep(100); /* long enough for every worker to take some */
}

/* Must run first: the pool reads HETC_NUM_THREADS once per process. */
static void threads_above_the_cap_reach_plugins_capped(void **state) {
  (void)state;
  const int32_t cap = hetc_env_max_threads();
  assert_int_equal(cap, sysconf(_SC_NPROCESSORS_ONLN) * HETC_MAX_THREADS_PER_CORE);
  setenv("HETC_NUM_THREADS", "100000", 1);
  const hetc_plugin_host_t *host = hetc_host_services();
  assert_int_equal(host->thread_count(), cap);
  assert_int_equal(hetc_thread_pool_threads(), cap);
  seen_threads_t seen = {.lock = PTHREAD_MUTEX_INITIALIZER};
  host->parallel_for(20000, 1, note_thread, &seen);
  assert_int_equal(seen.items, 20000);
  printf("HETC_NUM_THREADS=100000: thread_count() %d, %d threads ran bodies\n", host->thread_count(), seen.count);
  assert_true(seen.count >= 1 && seen.count <= cap);
  /* The driver's own setting is capped the same way. */
  hetc_thread_pool_set_threads(1 << 30);
  assert_int_equal(hetc_thread_pool_threads(), cap);
  hetc_thread_pool_set_threads(0);
  hetc_thread_pool_shutdown();
  /* A value at the cap stands as it is. */
  char text[16];
  snprintf(text, sizeof(text), "%d", cap);
  setenv("HETC_NUM_THREADS", text, 1);
  int32_t threads = 0;
  assert_null(hetc_env_num_threads(&threads));
  assert_int_equal(threads, cap);
  unsetenv("HETC_NUM_THREADS");
}

static void expect_refused(const char *name, const char *value, const char *message) {
  setenv(name, value, 1);
  hetc_context_t *context = NULL;
  hetc_status_t status = hetc_context_create(&context);
  if (!status) fail_msg("%s='%s' was accepted", name, value);
  assert_null(context);
  assert_int_equal(hetc_status_code(status), HETC_STATUS_BAD_INPUT);
  assert_string_equal(hetc_status_message(status), message);
  hetc_status_free(status);
  unsetenv(name);
}

static void bad_values_fail_context_create(void **state) {
  (void)state;
  static const char *const bad_threads[] = {"0", "-1", "abc", "1.5", " 4", "4 ", "+4", "4x", "0x10"};
  for (size_t i = 0; i < sizeof(bad_threads) / sizeof(bad_threads[0]); ++i) {
    char want[128];
    snprintf(want, sizeof(want), "HETC_NUM_THREADS: expected a whole number of threads, 1 or more, got '%s'",
             bad_threads[i]);
    expect_refused("HETC_NUM_THREADS", bad_threads[i], want);
  }
  static const char *const bad_levels[] = {"verbose", "Warning", "3", "warn", "debug "};
  for (size_t i = 0; i < sizeof(bad_levels) / sizeof(bad_levels[0]); ++i) {
    char want[128];
    snprintf(want, sizeof(want), "HETC_LOG_LEVEL: expected one of error|warning|info|debug, got '%s'",
             bad_levels[i]);
    expect_refused("HETC_LOG_LEVEL", bad_levels[i], want);
  }
  expect_refused("HETC_PLUGIN_PATH", "/nonexistent/hetc-plugins",
                 "HETC_PLUGIN_PATH: '/nonexistent/hetc-plugins': cannot open the directory: No such file or "
                 "directory");
  expect_refused("HETC_PLUGIN_PATH", "/tmp:/dev/null",
                 "HETC_PLUGIN_PATH: '/dev/null': cannot open the directory: Not a directory");
}

static void good_values_are_read(void **state) {
  (void)state;
  static const struct {
    const char *value;
    int32_t level;
  } levels[] = {{"error", HETC_PLUGIN_LOG_ERROR},
                {"warning", HETC_PLUGIN_LOG_WARNING},
                {"info", HETC_PLUGIN_LOG_INFO},
                {"debug", HETC_PLUGIN_LOG_DEBUG},
                {"", -1}};
  for (size_t i = 0; i < sizeof(levels) / sizeof(levels[0]); ++i) {
    setenv("HETC_LOG_LEVEL", levels[i].value, 1);
    int32_t level = 99;
    assert_null(hetc_env_log_level(&level));
    assert_int_equal(level, levels[i].level);
  }
  unsetenv("HETC_LOG_LEVEL");
  int32_t threads = 99;
  setenv("HETC_NUM_THREADS", "", 1); /* empty: unset */
  assert_null(hetc_env_num_threads(&threads));
  assert_int_equal(threads, 0);
  setenv("HETC_NUM_THREADS", "001", 1);
  assert_null(hetc_env_num_threads(&threads));
  assert_int_equal(threads, 1);
  unsetenv("HETC_NUM_THREADS");
  setenv("HETC_PLUGIN_PATH", "::/tmp:", 1); /* empty entries are skipped */
  assert_null(hetc_env_check_plugin_path());
  unsetenv("HETC_PLUGIN_PATH");
  assert_null(hetc_env_check());
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(threads_above_the_cap_reach_plugins_capped),
      cmocka_unit_test(bad_values_fail_context_create),
      cmocka_unit_test(good_values_are_read),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
