/* hetc-measure-worker: builds and measures candidates for the tuner.
 *
 * Started by measure.c with its end of a socket pair as the argument; loads
 * the plugins itself, so a candidate that hangs or crashes takes down only
 * this process. Anything a plugin prints goes to stderr: stdout is
 * redirected there so that it cannot corrupt the protocol. */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/clock.h"
#include "plugins/registry.h"
#include "tune/trial.h"
#include "tune/wire.h"
#include "tune/worker_protocol.h"
#include "kernel/plugin_calls.h"

/* In a sanitizer build, a candidate that crashes must still kill the
 * worker with its signal, which the tuner reports, rather than have the
 * sanitizer's handler turn it into exit status 1. The sanitizer runtime
 * reads these defaults (ASAN_OPTIONS still overrides them); other builds
 * never call this. */
const char *__asan_default_options(void);
const char *__asan_default_options(void) {
  return "handle_segv=0:handle_sigbus=0:handle_sigfpe=0:handle_sigill=0:handle_abort=0";
}

/* The signals a candidate's crash raises. Each is handled once: the worker
 * tells a crash of its own (raised by a fault, abort() or raise(), si_pid
 * this process) from the same signal sent by someone else (kill(1), a
 * test), and dies of its own crash as before, which the tuner records
 * against the candidate, but exits with HETC_WORKER_EXIT_KILLED + signal
 * when it was killed, which the tuner does not hold against it. Every
 * other signal that ends a worker is one it cannot raise through a crash
 * and is never the candidate's. */
static const int crash_signals[] = {SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT, SIGTRAP, SIGSYS};

static void on_crash_signal(int signal_number, siginfo_t *info, void *context) {
  (void)context;
  const int sent_by_another = info->si_code <= 0 && info->si_pid != getpid();
  if (sent_by_another) _exit(HETC_WORKER_EXIT_KILLED + signal_number);
  /* SA_RESETHAND restored the default action; the signal is blocked while
   * this runs, so it ends the process as soon as this returns (a fault
   * would be raised again by the instruction anyway). */
  raise(signal_number);
}

static void handle_crash_signals(void) {
  /* A stack overflow still reaches the handler. */
  static char alternate_stack[64 * 1024];
  stack_t stack = {.ss_sp = alternate_stack, .ss_size = sizeof(alternate_stack), .ss_flags = 0};
  sigaltstack(&stack, NULL);
  struct sigaction action;
  memset(&action, 0, sizeof(action));
  action.sa_sigaction = on_crash_signal;
  action.sa_flags = SA_SIGINFO | SA_RESETHAND | SA_ONSTACK;
  sigemptyset(&action.sa_mask);
  for (size_t s = 0; s < sizeof(crash_signals) / sizeof(crash_signals[0]); ++s)
    sigaction(crash_signals[s], &action, NULL);
  /* Ctrl-C reaches the whole process group: the tuner decides what becomes
   * of the batch (tune/interrupt.h) and stops its workers itself. */
  signal(SIGINT, SIG_IGN);
}

typedef struct held_artifact_t {
  int64_t id;
  hetc_plugin_artifact_t *artifact;
} held_artifact_t;

typedef struct worker_t {
  int fd; /* the worker's end of its socket pair with the tuner */
  hetc_registry_t *registry;
  hetc_plugin_entry_t *entry;
  int32_t device_index, device_kind;
  uint8_t *workload_message; /* keeps the decoded workload's bytes */
  hetc_wire_workload_t workload;
  int has_workload;
  float *reference; /* for (workload, reference_seed) */
  uint64_t reference_seed;
  held_artifact_t *held;
  int32_t num_held, held_capacity;
} worker_t;

static int reply(worker_t *w, hetc_wire_writer_t *message) {
  if (hetc_wire_send(w->fd, message)) {
    fprintf(stderr, "hetc-measure-worker: cannot answer the tuner\n");
    return -1;
  }
  return 0;
}

static int handle_init(worker_t *w, hetc_wire_reader_t *r, hetc_wire_writer_t *out) {
  const char *target = hetc_wire_get_string(r);
  w->device_index = (int32_t)hetc_wire_get_i64(r);
  hetc_status_t status = r->failed ? hetc_status_new(HETC_STATUS_INVALID_ARGUMENT, "malformed init") : NULL;
  if (!status) status = hetc_registry_open(&w->registry);
  if (!status) status = hetc_registry_target(w->registry, target, &w->entry);
  const hetc_plugin_device_t *device = NULL;
  if (!status) {
    if (w->device_index < 0 || w->device_index >= hetc_entry_device_count(w->entry))
      status = hetc_status_new(HETC_STATUS_INVALID_ARGUMENT, "target '%s' has no device %d", target, w->device_index);
    else
      device = hetc_entry_device(w->entry, w->device_index);
  }
  w->device_kind = device ? device->kind : 0;
  hetc_wire_begin(out, HETC_WORKER_READY);
  hetc_wire_put_i64(out, status ? 0 : 1);
  hetc_wire_put_string(out, status ? hetc_status_message(status) : "");
  hetc_wire_put_i64(out, w->device_kind);
  int failed = status != NULL;
  hetc_status_free(status);
  return reply(w, out) || failed ? -1 : 0;
}

static int handle_workload(worker_t *w, uint8_t *message, hetc_wire_reader_t *r) {
  hetc_wire_get_workload(r, &w->workload);
  if (r->failed) return -1;
  free(w->workload_message);
  w->workload_message = message; /* now owned here */
  free(w->reference);
  w->reference = NULL;
  w->has_workload = 1;
  return 0;
}

static int handle_build(worker_t *w, hetc_wire_reader_t *r, hetc_wire_writer_t *out) {
  int64_t id = hetc_wire_get_i64(r);
  int32_t template_index = (int32_t)hetc_wire_get_i64(r);
  hetc_wire_config_t config;
  hetc_wire_get_config(r, &config);
  if (r->failed || !w->entry || !w->has_workload) return -1;
  if (w->num_held == w->held_capacity) {
    int32_t capacity = w->held_capacity ? 2 * w->held_capacity : 16;
    held_artifact_t *held = realloc(w->held, sizeof(*held) * (size_t)capacity);
    if (!held) return -1;
    w->held = held;
    w->held_capacity = capacity;
  }
  const hetc_plugin_t *p = w->entry->plugin;
  hetc_plugin_artifact_t *artifact = NULL;
  double start = hetc_now_seconds();
  hetc_status_t status = p->build(w->entry->instance, w->device_index, &w->workload.workload, template_index,
                                  &config.config, &artifact);
  double seconds = hetc_now_seconds() - start;
  if (!status && !artifact) status = hetc_status_new(HETC_STATUS_INTERNAL, "build returned no artifact");
  hetc_record_error_t error = HETC_RECORD_OK;
  if (status) error = hetc_trial_build_error(hetc_status_code(status), w->device_kind);
  else w->held[w->num_held++] = (held_artifact_t){id, artifact};
  hetc_wire_begin(out, HETC_WORKER_BUILT);
  hetc_wire_put_i64(out, id);
  hetc_wire_put_i64(out, error);
  hetc_wire_put_string(out, status ? hetc_status_message(status) : "");
  hetc_wire_put_f64(out, seconds);
  hetc_status_free(status);
  return reply(w, out);
}

static int32_t find_held(const worker_t *w, int64_t id) {
  for (int32_t i = 0; i < w->num_held; ++i)
    if (w->held[i].id == id) return i;
  return -1;
}

static int handle_measure(worker_t *w, hetc_wire_reader_t *r, hetc_wire_writer_t *out) {
  int64_t id = hetc_wire_get_i64(r);
  hetc_trial_options_t o;
  o.number = (int32_t)hetc_wire_get_i64(r);
  o.repeat = (int32_t)hetc_wire_get_i64(r);
  o.min_repeat_ms = hetc_wire_get_f64(r);
  o.flush_cache = (int32_t)hetc_wire_get_i64(r);
  o.check = (int32_t)hetc_wire_get_i64(r);
  o.check_tolerance = hetc_wire_get_f64(r);
  o.seed = (uint64_t)hetc_wire_get_i64(r);
  int32_t at = find_held(w, id);
  if (r->failed || at < 0) return -1;
  hetc_status_t status = NULL;
  if (o.check && (!w->reference || w->reference_seed != o.seed)) {
    free(w->reference);
    w->reference = NULL;
    status = hetc_trial_reference(&w->workload.workload, o.seed, &w->reference);
    w->reference_seed = o.seed;
  }
  hetc_trial_result_t result;
  memset(&result, 0, sizeof(result));
  if (!status)
    status = hetc_trial_measure(w->entry, w->device_index, &w->workload.workload,
                                w->held[at].artifact, &o, w->reference, &result);
  if (status) {
    result.error = HETC_RECORD_UNKNOWN;
    result.num_costs = 0;
  }
  hetc_wire_begin(out, HETC_WORKER_MEASURED);
  hetc_wire_put_i64(out, id);
  hetc_wire_put_i64(out, result.error);
  hetc_wire_put_string(out, status ? hetc_status_message(status) : result.message);
  hetc_wire_put_i64(out, result.number);
  hetc_wire_put_i64(out, result.num_costs);
  for (int32_t i = 0; i < result.num_costs; ++i) hetc_wire_put_f64(out, result.costs[i]);
  hetc_wire_put_f64(out, result.max_relative_error);
  hetc_status_free(status);
  hetc_trial_result_clear(&result);
  return reply(w, out);
}

static void release_held(worker_t *w, int32_t at) {
  hetc_entry_artifact_release(w->entry, w->held[at].artifact);
  w->held[at] = w->held[--w->num_held];
}

int main(int argc, char **argv) {
  worker_t w;
  memset(&w, 0, sizeof(w));
  if (argc != 2 || (w.fd = atoi(argv[1])) < 3) {
    fprintf(stderr, "hetc-measure-worker is started by hetc tune, not by hand\n");
    return 2;
  }
  dup2(STDERR_FILENO, STDOUT_FILENO);
  handle_crash_signals();
  hetc_wire_writer_t out = {0};
  int rc = 0;
  for (;;) {
    uint8_t *message = NULL;
    size_t size = 0;
    int got = hetc_wire_receive(w.fd, &message, &size);
    if (got != 0) {
      rc = got == 1 ? 0 : 1; /* the tuner went away */
      break;
    }
    hetc_wire_reader_t r = {message, size, 1, 0};
    int failed = 0;
    uint8_t kind = message[0];
    switch (kind) {
      case HETC_WORKER_INIT: failed = handle_init(&w, &r, &out); break;
      case HETC_WORKER_WORKLOAD:
        failed = handle_workload(&w, message, &r);
        if (!failed) message = NULL;
        break;
      case HETC_WORKER_BUILD: failed = handle_build(&w, &r, &out); break;
      case HETC_WORKER_MEASURE: failed = handle_measure(&w, &r, &out); break;
      case HETC_WORKER_RELEASE: {
        int32_t at = find_held(&w, hetc_wire_get_i64(&r));
        if (at >= 0) release_held(&w, at);
        break;
      }
      case HETC_WORKER_EXIT: free(message); goto done;
      default: failed = 1;
    }
    free(message);
    if (failed) {
      fprintf(stderr, "hetc-measure-worker: cannot carry out a '%c' message\n", kind);
      rc = 1;
      break;
    }
  }
done:
  while (w.num_held > 0) release_held(&w, w.num_held - 1);
  free(w.held);
  free(w.reference);
  free(w.workload_message);
  hetc_wire_writer_free(&out);
  hetc_registry_free(w.registry);
  return rc;
}
