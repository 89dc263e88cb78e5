#include "plugins/host.h"

#include <pthread.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/env.h"
#include "common/status.h"
#include "common/thread_pool.h"
#include "plugins/abi_level.h"
#include "space/space.h"

static atomic_int log_level = -1;

void hetc_host_set_log_level(int32_t level) { atomic_store(&log_level, level); }

static int32_t current_log_level(void) {
  int32_t level = atomic_load(&log_level);
  if (level >= 0) return level;
  /* A bad HETC_LOG_LEVEL was refused by hetc_env_check (common/env.h);
   * here it leaves the default. */
  hetc_status_free(hetc_env_log_level(&level));
  if (level < 0) level = HETC_PLUGIN_LOG_WARNING;
  atomic_store(&log_level, level);
  return level;
}

void *hetc_host_alloc(size_t size) {
  if (size > SIZE_MAX - 63) return NULL;
  size_t rounded = (size + 63) & ~(size_t)63;
  return aligned_alloc(64, rounded ? rounded : 64);
}

void hetc_host_free(void *ptr) { free(ptr); }

static void host_logv(int32_t level, const char *origin, const char *format, va_list args)
    HETC_PLUGIN_PRINTF(3, 0);
static void host_logv(int32_t level, const char *origin, const char *format, va_list args) {
  static const char *const names[] = {"error", "warning", "info", "debug"};
  if (level > current_log_level()) return;
  char message[2048];
  vsnprintf(message, sizeof(message), format, args);
  fprintf(stderr, "hetc [%s] %s: %s\n", origin ? origin : "?",
          level >= 0 && level <= 3 ? names[level] : "log", message);
}

static void host_log(int32_t level, const char *origin, const char *format, ...)
    HETC_PLUGIN_PRINTF(3, 4);
static void host_log(int32_t level, const char *origin, const char *format, ...) {
  va_list args;
  va_start(args, format);
  host_logv(level, origin, format, args);
  va_end(args);
}

static hetc_plugin_status_t host_status_newv(int32_t code, const char *format, va_list args)
    HETC_PLUGIN_PRINTF(2, 0);
static hetc_plugin_status_t host_status_newv(int32_t code, const char *format, va_list args) {
  /* A code this host does not know (a newer plugin's) is still a failure:
   * keep the plugin's message and say which code it was. */
  if (code > HETC_PLUGIN_STATUS_OK && code <= HETC_PLUGIN_STATUS_INTERNAL)
    return hetc_status_newv((hetc_status_code_t)code, format, args);
  char message[1024];
  vsnprintf(message, sizeof(message), format, args);
  return hetc_status_new(HETC_STATUS_INTERNAL, "%s (unknown status code %d)", message, code);
}

static hetc_plugin_status_t host_status_new(int32_t code, const char *format, ...)
    HETC_PLUGIN_PRINTF(2, 3);
static hetc_plugin_status_t host_status_new(int32_t code, const char *format, ...) {
  va_list args;
  va_start(args, format);
  hetc_status_t status = host_status_newv(code, format, args);
  va_end(args);
  return status;
}

static int32_t host_thread_count(void) { return hetc_thread_pool_threads(); }

static const hetc_plugin_host_t host_table = {
    .header = {HETC_PLUGIN_ABI_MAJOR, HETC_PLUGIN_ABI_MINOR, sizeof(hetc_plugin_host_t), 0},
    .alloc = hetc_host_alloc,
    .free = hetc_host_free,
    .log = host_log,
    .status_new = host_status_new,
    .status_message = hetc_status_message,
    .status_free = hetc_status_free,
    .space_define_split = hetc_space_define_split,
    .space_define_knob = hetc_space_define_knob,
    .space_define_reorder = hetc_space_define_reorder,
    .space_define_annotate = hetc_space_define_annotate,
    .space_set_default = hetc_space_set_default,
    .space_add_constraint = hetc_space_add_constraint,
    .config_find = hetc_config_find,
    .parallel_for = hetc_parallel_for,
    .thread_count = host_thread_count,
    .space_mark_optional = hetc_space_mark_optional,
    .logv = host_logv,
    .status_newv = host_status_newv,
    .space_add_constraint_copy = hetc_space_add_constraint_copy,
};

const hetc_plugin_host_t *hetc_host_services(void) { return &host_table; }

size_t hetc_host_table_size(uint32_t level) {
  /* One entry per version that appended: where the table ended before. */
  if (level == 0) return offsetof(hetc_plugin_host_t, space_mark_optional);
  if (level <= 2) return offsetof(hetc_plugin_host_t, logv);
  return sizeof(hetc_plugin_host_t);
}

typedef struct major1_copy_t {
  const hetc_plugin_host_t *source;
  hetc_plugin_host_t copy;
  struct major1_copy_t *next;
} major1_copy_t;

static pthread_mutex_t major1_lock = PTHREAD_MUTEX_INITIALIZER;
static major1_copy_t *major1_copies; /* never freed: see host.h */

const hetc_plugin_host_t *hetc_host_as_major1(const hetc_plugin_host_t *host) {
  pthread_mutex_lock(&major1_lock);
  major1_copy_t *c = major1_copies;
  while (c && c->source != host) c = c->next;
  if (!c && (c = malloc(sizeof(*c))) != NULL) {
    c->source = host;
    memcpy(&c->copy, host, sizeof(c->copy));
    c->copy.header.abi_major = 1;
    c->copy.header.abi_minor = HETC_ABI_MAJOR1_LAST_MINOR;
    c->copy.header.struct_size = (uint32_t)hetc_host_table_size(HETC_ABI_MAJOR1_LAST_MINOR);
    c->next = major1_copies;
    major1_copies = c;
  }
  pthread_mutex_unlock(&major1_lock);
  return c ? &c->copy : NULL;
}
