#include "common/env.h"

#include <dirent.h>
#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <unistd.h>

#include "hetc/plugin.h"

/* The variable's value, NULL when unset or empty. */
static const char *value_of(const char *name) {
  const char *value = getenv(name);
  return value && value[0] ? value : NULL;
}

static long online_cores(void) {
  const long cores = sysconf(_SC_NPROCESSORS_ONLN);
  return cores > 0 ? cores : 1;
}

int32_t hetc_env_max_threads(void) {
  const long most = online_cores() * HETC_MAX_THREADS_PER_CORE;
  return most < INT32_MAX ? (int32_t)most : INT32_MAX;
}

static atomic_int warned_threads_capped;

hetc_status_t hetc_env_num_threads(int32_t *out_threads) {
  *out_threads = 0;
  const char *text = value_of("HETC_NUM_THREADS");
  if (!text) return NULL;
  /* Digits only: strtol would take " 4", "+4", "4abc" (as 4) and "1.5"
   * (as 1), and atoi silently made "abc" and "-1" mean "unset". */
  const int32_t most = hetc_env_max_threads();
  long long value = 0;
  for (const char *c = text; *c; ++c) {
    if (*c < '0' || *c > '9') {
      value = 0;
      break;
    }
    value = value > most ? value : value * 10 + (*c - '0'); /* past the cap is capped */
  }
  if (value < 1)
    return hetc_status_new(HETC_STATUS_BAD_INPUT,
                           "HETC_NUM_THREADS: expected a whole number of threads, 1 or more, got '%s'", text);
  if (value > most) {
    if (!atomic_exchange(&warned_threads_capped, 1))
      fprintf(stderr,
              "hetc: warning: HETC_NUM_THREADS=%s is more than %d (%d threads for each of the %ld online "
              "cores); using %d\n",
              text, most, HETC_MAX_THREADS_PER_CORE, online_cores(), most);
    value = most;
  }
  *out_threads = (int32_t)value;
  return NULL;
}

hetc_status_t hetc_env_log_level(int32_t *out_level) {
  static const char *const names[] = {"error", "warning", "info", "debug"};
  *out_level = -1;
  const char *text = value_of("HETC_LOG_LEVEL");
  if (!text) return NULL;
  for (int32_t level = HETC_PLUGIN_LOG_ERROR; level <= HETC_PLUGIN_LOG_DEBUG; ++level) {
    if (!strcmp(text, names[level])) {
      *out_level = level;
      return NULL;
    }
  }
  return hetc_status_new(HETC_STATUS_BAD_INPUT,
                         "HETC_LOG_LEVEL: expected one of error|warning|info|debug, got '%s'", text);
}

hetc_status_t hetc_env_check_plugin_path(void) {
  const char *text = getauxval(AT_SECURE) ? NULL : value_of("HETC_PLUGIN_PATH");
  if (!text) return NULL;
  for (const char *entry = text; *entry;) {
    const size_t length = strcspn(entry, ":");
    if (length > 0) {
      char *dir = strndup(entry, length);
      if (!dir) return hetc_status_new(HETC_STATUS_OUT_OF_MEMORY, "HETC_PLUGIN_PATH");
      DIR *handle = opendir(dir);
      const int error = errno;
      hetc_status_t status = NULL;
      if (handle) {
        closedir(handle);
      } else {
        status = hetc_status_new(HETC_STATUS_BAD_INPUT, "HETC_PLUGIN_PATH: '%s': cannot open the directory: %s", dir,
                                 strerror(error));
      }
      free(dir);
      if (status) return status;
    }
    entry += length;
    if (*entry == ':') ++entry;
  }
  return NULL;
}

hetc_status_t hetc_env_seconds(const char *name, double fallback, double *out_seconds) {
  *out_seconds = fallback;
  const char *text = value_of(name);
  if (!text) return NULL;
  char *end = NULL;
  errno = 0;
  const double seconds = strtod(text, &end);
  /* Decimal only: strtod also reads hex, "inf" and leading blanks. */
  const int decimal = ((text[0] >= '0' && text[0] <= '9') || text[0] == '.') &&
                      strspn(text, "0123456789.eE+-") == strlen(text);
  if (!decimal || errno || end == text || *end || !(seconds >= 0 && seconds <= 86400))
    return hetc_status_new(HETC_STATUS_BAD_INPUT, "%s: expected seconds from 0 to 86400, got '%.40s'", name, text);
  *out_seconds = seconds;
  return NULL;
}

hetc_status_t hetc_env_check(void) {
  int32_t threads = 0, level = -1;
  HETC_RETURN_IF_ERROR(hetc_env_num_threads(&threads));
  HETC_RETURN_IF_ERROR(hetc_env_log_level(&level));
  HETC_RETURN_IF_ERROR(hetc_env_check_plugin_path());
  /* Read when a tuner first waits for a lock, which may be an hour in. */
  double seconds = 0;
  return hetc_env_seconds("HETC_LOCK_TIMEOUT", 0, &seconds);
}
