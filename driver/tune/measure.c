#include "tune/measure.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "common/clock.h"
#include "common/interrupt.h"
#include "records/json_text.h"
#include "tune/device_lock.h"
#include "tune/wire.h"
#include "tune/worker_protocol.h"

#define MAX_WORKERS 64
#define MAX_PIDS 4096
/* A candidate whose workers keep dying under other candidates, or keep
 * being killed from outside under it, is given up (not measured, no
 * record) after this many rebuilds. */
#define MAX_REQUEUES 3
/* Loading every plugin (LLVM's among them) may take seconds on a busy
 * machine; that is not the candidate's build time. A worker killed from
 * outside while it starts is started again within the same time: a count
 * of attempts gave up after four kills, and a sanitizer build starts slower
 * than something that kills every few hundred milliseconds. */
#define WORKER_START_TIMEOUT_S 120.0

typedef struct worker_t {
  pid_t pid;       /* 0: not running */
  int fd;          /* the tuner's end of the worker's socket pair */
  int32_t run_id;  /* the run() whose workload it holds; -1: none */
} worker_t;

/* DONE: its record holds a measurement (or the candidate's own failure);
 * DROPPED: not measured, for reasons that are not the candidate's. */
typedef enum candidate_state_t { PENDING, BUILDING, BUILT, DONE, DROPPED } candidate_state_t;

typedef struct candidate_t {
  candidate_state_t state;
  int32_t worker;
  int32_t requeues;
  double build_seconds;
} candidate_t;

struct hetc_measurer_t {
  char *target;
  int32_t device_index;
  hetc_measure_options_t options;
  char worker_path[PATH_MAX];
  int32_t num_workers;
  worker_t workers[MAX_WORKERS];
  int32_t run_id;
  int32_t num_pids;
  pid_t pids[MAX_PIDS];
  hetc_wire_writer_t message;
  /* The machine-wide turns on the device and the cores (device_lock.h),
   * opened on the first batch. */
  char *device_fingerprint; /* NULL until hetc_measurer_set_device: the target's name */
  int device_is_cpu;
  hetc_device_lock_t lock;
  int lock_open;
};

hetc_measure_options_t hetc_measure_default_options(void) {
  hetc_measure_options_t o;
  o.trial = hetc_trial_default_options();
  o.build_workers = 0;
  o.build_timeout_s = 60;
  o.run_timeout_s = 30;
  return o;
}

static hetc_status_t find_worker_program(char *out, size_t size) {
  const char *env = getenv("HETC_MEASURE_WORKER");
  if (env && *env) {
    snprintf(out, size, "%s", env);
  } else {
    Dl_info info;
    if (!dladdr((void *)&hetc_measurer_create, &info) || !info.dli_fname)
      return hetc_status_new(HETC_STATUS_UNAVAILABLE, "cannot locate libhetc to find hetc-measure-worker");
    const char *slash = strrchr(info.dli_fname, '/');
    int dir = slash ? (int)(slash - info.dli_fname) : 1;
    snprintf(out, size, "%.*s/hetc/hetc-measure-worker", dir, slash ? info.dli_fname : ".");
  }
  if (access(out, X_OK))
    return hetc_status_new(HETC_STATUS_UNAVAILABLE, "measurement worker %s: %s", out, strerror(errno));
  return NULL;
}

hetc_status_t hetc_measurer_create(const char *target, int32_t device_index, const hetc_measure_options_t *options,
                                   hetc_measurer_t **out_measurer) {
  *out_measurer = NULL;
  hetc_measurer_t *m = calloc(1, sizeof(*m));
  if (!m || !(m->target = strdup(target))) {
    free(m);
    return hetc_status_new(HETC_STATUS_OUT_OF_MEMORY, "measurer");
  }
  m->device_index = device_index;
  m->device_is_cpu = 1; /* until told otherwise: the cautious guess */
  m->options = options ? *options : hetc_measure_default_options();
  int32_t workers = m->options.build_workers;
  if (workers <= 0) {
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    workers = cores > 0 ? (int32_t)cores : 1;
  }
  m->num_workers = workers > MAX_WORKERS ? MAX_WORKERS : workers;
  hetc_status_t status = find_worker_program(m->worker_path, sizeof(m->worker_path));
  if (status) {
    hetc_measurer_free(m);
    return status;
  }
  *out_measurer = m;
  return NULL;
}

/* Kills (when asked) and reaps a worker; returns its wait status. */
static int stop_worker(worker_t *w, int kill_it) {
  int wstatus = 0;
  if (!w->pid) return 0;
  if (kill_it) kill(w->pid, SIGKILL);
  close(w->fd);
  while (waitpid(w->pid, &wstatus, 0) < 0 && errno == EINTR) {
  }
  w->pid = 0;
  w->run_id = -1;
  return wstatus;
}

/* Whether a worker's death is the candidate's doing: a crash signal it
 * raised itself (worker_main.c tells those from the same signals sent by
 * another process), or an exit in the middle of its work. A worker killed
 * from outside -- SIGKILL, SIGTERM, the OOM killer, a crash signal sent by
 * kill(1) -- says nothing about the candidate, which is measured again. */
static int died_of_candidate(int wstatus) {
  if (WIFSIGNALED(wstatus)) {
    switch (WTERMSIG(wstatus)) {
      case SIGSEGV:
      case SIGBUS:
      case SIGILL:
      case SIGFPE:
      case SIGABRT:
      case SIGTRAP:
      case SIGSYS: return 1;
      default: return 0;
    }
  }
  if (WIFEXITED(wstatus)) {
    const int code = WEXITSTATUS(wstatus);
    return !(code > HETC_WORKER_EXIT_KILLED && code < HETC_WORKER_EXIT_KILLED + 65);
  }
  return 1;
}

void hetc_measurer_free(hetc_measurer_t *m) {
  if (!m) return;
  for (int32_t i = 0; i < m->num_workers; ++i) {
    worker_t *w = &m->workers[i];
    if (!w->pid) continue;
    hetc_wire_begin(&m->message, HETC_WORKER_EXIT);
    int asked = hetc_wire_send(w->fd, &m->message) == 0;
    /* A worker stuck in a plugin never reads the request: give it a
     * moment, then kill it. */
    for (int tries = 0; asked && tries < 200; ++tries) {
      int wstatus;
      pid_t done = waitpid(w->pid, &wstatus, WNOHANG);
      if (done == w->pid) {
        close(w->fd);
        w->pid = 0;
        break;
      }
      struct timespec pause = {0, 5000000};
      nanosleep(&pause, NULL);
    }
    stop_worker(w, 1);
  }
  hetc_wire_writer_free(&m->message);
  if (m->lock_open) hetc_device_lock_close(&m->lock);
  free(m->device_fingerprint);
  free(m->target);
  free(m);
}

hetc_status_t hetc_measurer_set_device(hetc_measurer_t *m, const char *fingerprint, int is_cpu) {
  char *copy = strdup(fingerprint ? fingerprint : "");
  if (!copy) return hetc_status_new(HETC_STATUS_OUT_OF_MEMORY, "measurer");
  free(m->device_fingerprint);
  m->device_fingerprint = copy;
  m->device_is_cpu = is_cpu;
  return NULL;
}

int32_t hetc_measurer_worker_pids(const hetc_measurer_t *m, pid_t *out, int32_t capacity) {
  int32_t n = m->num_pids < capacity ? m->num_pids : capacity;
  memcpy(out, m->pids, sizeof(pid_t) * (size_t)n);
  return n;
}

/* Waits up to `timeout_s` for a message from the worker. Returns 0 with
 * the message (owned), 1 on timeout, -1 when the worker is gone, 2 when
 * the user interrupted hetc (tune/interrupt.h). */
static int await(worker_t *w, double timeout_s, uint8_t **out_data, size_t *out_size) {
  double deadline = hetc_now_seconds() + timeout_s;
  for (;;) {
    if (hetc_interrupt_signal()) return 2;
    double left = deadline - hetc_now_seconds();
    if (left <= 0) return 1;
    struct pollfd p = {w->fd, POLLIN, 0};
    int ready = poll(&p, 1, (int)(left * 1000) + 1);
    if (ready < 0 && errno == EINTR) continue;
    if (ready < 0) return -1;
    if (ready == 0) continue;
    return hetc_wire_receive(w->fd, out_data, out_size) == 0 ? 0 : -1;
  }
}

static hetc_status_t start_worker_once(hetc_measurer_t *m, worker_t *w, double timeout_s, int *out_killed) {
  *out_killed = 0;
  /* One socket pair per worker: sends to a worker that died fail with
   * EPIPE (MSG_NOSIGNAL) instead of killing the tuner with SIGPIPE. */
  int fds[2];
  if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds))
    return hetc_status_new(HETC_STATUS_UNAVAILABLE, "socketpair: %s", strerror(errno));
  char fd_arg[16];
  snprintf(fd_arg, sizeof(fd_arg), "%d", fds[1]);
  char *argv[] = {m->worker_path, fd_arg, NULL};
  pid_t parent = getpid();
  pid_t pid = fork();
  if (pid == 0) {
    /* Only async-signal-safe calls between fork and exec. The worker dies
     * with the tuner, even when it is stuck in a kernel. */
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != parent) _exit(127);
    fcntl(fds[1], F_SETFD, 0);
    execv(argv[0], argv);
    _exit(127);
  }
  close(fds[1]);
  if (pid < 0) {
    close(fds[0]);
    return hetc_status_new(HETC_STATUS_UNAVAILABLE, "fork: %s", strerror(errno));
  }
  w->pid = pid;
  w->fd = fds[0];
  w->run_id = -1;
  if (m->num_pids < MAX_PIDS) m->pids[m->num_pids++] = pid;

  hetc_wire_begin(&m->message, HETC_WORKER_INIT);
  hetc_wire_put_string(&m->message, m->target);
  hetc_wire_put_i64(&m->message, m->device_index);
  uint8_t *reply = NULL;
  size_t size = 0;
  int got = hetc_wire_send(w->fd, &m->message) ? -1 : await(w, timeout_s, &reply, &size);
  hetc_status_t status = NULL;
  if (got == 2) {
    status = hetc_status_new(HETC_STATUS_UNAVAILABLE, "measurement interrupted");
  } else if (got != 0) {
    status = hetc_status_new(HETC_STATUS_UNAVAILABLE, "measurement worker %s did not start", m->worker_path);
    if (got < 0) {
      int wstatus = stop_worker(w, 1);
      *out_killed = !died_of_candidate(wstatus);
    }
  } else {
    hetc_wire_reader_t r = {reply, size, 1, 0};
    int ok = reply[0] == HETC_WORKER_READY && hetc_wire_get_i64(&r) == 1;
    const char *message = hetc_wire_get_string(&r);
    if (!ok) status = hetc_status_new(HETC_STATUS_UNAVAILABLE, "measurement worker: %s", message);
  }
  free(reply);
  if (status) stop_worker(w, 1);
  return status;
}

/* A worker killed from outside as it starts is started again. */
static hetc_status_t start_worker(hetc_measurer_t *m, worker_t *w) {
  const double deadline = hetc_now_seconds() + WORKER_START_TIMEOUT_S;
  for (;;) {
    int killed = 0;
    hetc_status_t status = start_worker_once(m, w, deadline - hetc_now_seconds(), &killed);
    if (!status || !killed || hetc_now_seconds() >= deadline) return status;
    hetc_status_free(status);
  }
}

static void set_message(hetc_record_t *record, const char *format, ...) __attribute__((format(printf, 2, 3)));
static void set_message(hetc_record_t *record, const char *format, ...) {
  char text[1024];
  va_list args;
  va_start(args, format);
  vsnprintf(text, sizeof(text), format, args);
  va_end(args);
  free(record->error_message);
  /* Compilers and plugins may print in any encoding; records are UTF-8,
   * and a cut at 1023 bytes may split a character. */
  record->error_message = hetc_utf8_sanitized(text);
}

/* How a dead worker died, for messages. */
static void describe_death(int wstatus, char *out, size_t size) {
  if (WIFSIGNALED(wstatus))
    snprintf(out, size, "killed by signal %d (%s)", WTERMSIG(wstatus), strsignal(WTERMSIG(wstatus)));
  else if (WIFEXITED(wstatus))
    snprintf(out, size, "exited with status %d", WEXITSTATUS(wstatus));
  else
    snprintf(out, size, "stopped");
}

/* Candidate i goes back to be built again; after MAX_REQUEUES times it is
 * dropped: never measured here, and no record says anything of it. */
static void requeue(candidate_t *c, int32_t i) {
  c[i].state = ++c[i].requeues > MAX_REQUEUES ? DROPPED : PENDING;
}

/* The worker is gone (or killed): its built candidates go back to be
 * built again elsewhere. That is not held against them (no count): every
 * death ends or counts against the candidate it happened under, so the
 * batch still ends. */
static void requeue_from(candidate_t *c, int32_t count, int32_t worker) {
  for (int32_t i = 0; i < count; ++i)
    if (c[i].worker == worker && c[i].state == BUILT) c[i].state = PENDING;
}

static void fail_candidate(candidate_t *c, hetc_record_t *record, hetc_record_error_t error) {
  c->state = DONE;
  record->error = error;
  record->num_costs = 0;
}

static hetc_status_t send_build(hetc_measurer_t *m, int32_t wi, const hetc_plugin_workload_t *workload,
                                const hetc_measure_input_t *input, int32_t id) {
  worker_t *w = &m->workers[wi];
  if (!w->pid) HETC_RETURN_IF_ERROR(start_worker(m, w));
  if (w->run_id != m->run_id) {
    hetc_wire_begin(&m->message, HETC_WORKER_WORKLOAD);
    hetc_wire_put_workload(&m->message, workload);
    if (hetc_wire_send(w->fd, &m->message)) return NULL; /* seen as a death when awaited */
    w->run_id = m->run_id;
  }
  hetc_wire_begin(&m->message, HETC_WORKER_BUILD);
  hetc_wire_put_i64(&m->message, id);
  hetc_wire_put_i64(&m->message, input->template_index);
  hetc_wire_put_config(&m->message, input->config);
  hetc_wire_send(w->fd, &m->message);
  return NULL;
}

/* Builds every PENDING candidate, one per worker at a time. */
static hetc_status_t build_phase(hetc_measurer_t *m, const hetc_plugin_workload_t *workload,
                                 const hetc_measure_input_t *inputs, candidate_t *c, int32_t count,
                                 hetc_record_t *records) {
  int32_t busy[MAX_WORKERS];
  double deadline[MAX_WORKERS], started[MAX_WORKERS];
  for (int32_t i = 0; i < m->num_workers; ++i) busy[i] = -1;
  int32_t next = 0;
  for (;;) {
    int32_t active = 0;
    for (int32_t wi = 0; wi < m->num_workers; ++wi) {
      while (busy[wi] < 0 && next < count) {
        if (c[next].state != PENDING) {
          ++next;
          continue;
        }
        HETC_RETURN_IF_ERROR(send_build(m, wi, workload, &inputs[next], next));
        busy[wi] = next;
        c[next].state = BUILDING;
        c[next].worker = wi;
        started[wi] = hetc_now_seconds();
        deadline[wi] = started[wi] + m->options.build_timeout_s;
        ++next;
      }
      if (busy[wi] >= 0) ++active;
    }
    if (!active) return NULL;
    struct pollfd fds[MAX_WORKERS];
    int32_t who[MAX_WORKERS], n = 0;
    double soonest = 1e30, now = hetc_now_seconds();
    for (int32_t wi = 0; wi < m->num_workers; ++wi) {
      if (busy[wi] < 0) continue;
      fds[n] = (struct pollfd){m->workers[wi].fd, POLLIN, 0};
      who[n++] = wi;
      if (deadline[wi] < soonest) soonest = deadline[wi];
    }
    int wait_ms = soonest <= now ? 0 : (int)((soonest - now) * 1000) + 1;
    int ready = poll(fds, (nfds_t)n, wait_ms);
    if (ready < 0 && errno != EINTR) return hetc_status_new(HETC_STATUS_INTERNAL, "poll: %s", strerror(errno));
    if (hetc_interrupt_signal()) return hetc_status_new(HETC_STATUS_UNAVAILABLE, "measurement interrupted");
    now = hetc_now_seconds();
    for (int32_t k = 0; k < n; ++k) {
      int32_t wi = who[k], i = busy[wi];
      worker_t *w = &m->workers[wi];
      if (ready > 0 && fds[k].revents) {
        uint8_t *reply = NULL;
        size_t size = 0;
        int got = hetc_wire_receive(w->fd, &reply, &size);
        hetc_wire_reader_t r = {reply, size, 1, 0};
        int64_t id = got == 0 && reply[0] == HETC_WORKER_BUILT ? hetc_wire_get_i64(&r) : -1;
        if (id == i) {
          hetc_record_error_t error = (hetc_record_error_t)hetc_wire_get_i64(&r);
          const char *message = hetc_wire_get_string(&r);
          c[i].build_seconds = hetc_wire_get_f64(&r);
          records[i].build_seconds = c[i].build_seconds;
          if (error != HETC_RECORD_OK) {
            fail_candidate(&c[i], &records[i], error);
            set_message(&records[i], "%s", message);
          } else {
            c[i].state = BUILT;
          }
        } else {
          const int wstatus = stop_worker(w, 1);
          if (died_of_candidate(wstatus)) {
            char death[128];
            describe_death(wstatus, death, sizeof(death));
            records[i].build_seconds = now - started[wi];
            fail_candidate(&c[i], &records[i], HETC_RECORD_COMPILE_HOST);
            set_message(&records[i], "the measurement worker %s while building", death);
          } else {
            requeue(c, i);
          }
          requeue_from(c, count, wi);
          if (next > 0) next = 0; /* requeued candidates sit before `next` */
        }
        free(reply);
        if (c[i].state == DONE) records[i].total_seconds = records[i].build_seconds;
        busy[wi] = -1;
      } else if (now >= deadline[wi]) {
        stop_worker(w, 1);
        fail_candidate(&c[i], &records[i], HETC_RECORD_BUILD_TIMEOUT);
        records[i].build_seconds = records[i].total_seconds = now - started[wi];
        set_message(&records[i], "build did not finish in %.0f s", m->options.build_timeout_s);
        requeue_from(c, count, wi);
        next = 0;
        busy[wi] = -1;
      }
    }
  }
}

/* Measures candidate i on the worker that built it, then releases it. */
static void measure_one(hetc_measurer_t *m, candidate_t *c, int32_t count, int32_t i, hetc_record_t *records) {
  int32_t wi = c[i].worker;
  worker_t *w = &m->workers[wi];
  const hetc_trial_options_t *o = &m->options.trial;
  hetc_wire_begin(&m->message, HETC_WORKER_MEASURE);
  hetc_wire_put_i64(&m->message, i);
  hetc_wire_put_i64(&m->message, o->number);
  hetc_wire_put_i64(&m->message, o->repeat);
  hetc_wire_put_f64(&m->message, o->min_repeat_ms);
  hetc_wire_put_i64(&m->message, o->flush_cache);
  hetc_wire_put_i64(&m->message, o->check);
  hetc_wire_put_f64(&m->message, o->check_tolerance);
  hetc_wire_put_i64(&m->message, (int64_t)o->seed);
  double start = hetc_now_seconds();
  uint8_t *reply = NULL;
  size_t size = 0;
  int got = hetc_wire_send(w->fd, &m->message) ? -1 : await(w, m->options.run_timeout_s, &reply, &size);
  hetc_wire_reader_t r = {reply, size, 1, 0};
  int64_t id = got == 0 && reply[0] == HETC_WORKER_MEASURED ? hetc_wire_get_i64(&r) : -1;
  hetc_record_t *record = &records[i];
  if (got == 2) {
    /* Interrupted: the batch is dropped (hetc_measurer_run). */
    stop_worker(w, 1);
    c[i].state = DROPPED;
    requeue_from(c, count, wi);
  } else if (got == 1) {
    stop_worker(w, 1);
    fail_candidate(&c[i], record, HETC_RECORD_RUN_TIMEOUT);
    set_message(record, "run did not finish in %.0f s", m->options.run_timeout_s);
    requeue_from(c, count, wi);
  } else if (id != i) {
    const int wstatus = stop_worker(w, 1);
    if (died_of_candidate(wstatus)) {
      char death[128];
      describe_death(wstatus, death, sizeof(death));
      fail_candidate(&c[i], record, HETC_RECORD_RUNTIME_DEVICE);
      set_message(record, "the measurement worker %s while running the kernel", death);
    } else {
      requeue(c, i);
    }
    requeue_from(c, count, wi);
  } else {
    record->error = (hetc_record_error_t)hetc_wire_get_i64(&r);
    const char *message = hetc_wire_get_string(&r);
    (void)hetc_wire_get_i64(&r); /* number: the worker's business */
    int64_t costs = hetc_wire_get_i64(&r);
    record->num_costs = 0;
    for (int64_t k = 0; k < costs && k < HETC_RECORD_MAX_COSTS; ++k)
      record->costs[record->num_costs++] = hetc_wire_get_f64(&r);
    if (r.failed) {
      record->error = HETC_RECORD_UNKNOWN;
      record->num_costs = 0;
      set_message(record, "malformed answer from the measurement worker");
    } else if (record->error != HETC_RECORD_OK) {
      record->num_costs = 0;
      set_message(record, "%s", message);
    }
    c[i].state = DONE;
    hetc_wire_begin(&m->message, HETC_WORKER_RELEASE);
    hetc_wire_put_i64(&m->message, i);
    hetc_wire_send(w->fd, &m->message);
  }
  free(reply);
  record->total_seconds = c[i].build_seconds + (hetc_now_seconds() - start);
}

hetc_status_t hetc_measurer_run(hetc_measurer_t *m, const hetc_plugin_workload_t *workload,
                                const hetc_measure_input_t *inputs, int32_t count, hetc_record_t *records,
                                uint8_t *out_measured) {
  for (int32_t i = 0; i < count; ++i) out_measured[i] = 0;
  if (count <= 0) return NULL;
  candidate_t *c = calloc((size_t)count, sizeof(candidate_t));
  if (!c) return hetc_status_new(HETC_STATUS_OUT_OF_MEMORY, "measurement batch");
  ++m->run_id;
  for (int32_t i = 0; i < count; ++i) {
    free(records[i].error_message);
    records[i].error_message = NULL;
    records[i].error = HETC_RECORD_OK;
    records[i].num_costs = 0;
    records[i].build_seconds = records[i].total_seconds = 0;
  }
  hetc_status_t status = NULL;
  if (!m->lock_open) {
    status = hetc_device_lock_open(m->device_fingerprint && *m->device_fingerprint ? m->device_fingerprint : m->target,
                                   m->device_is_cpu, &m->lock);
    m->lock_open = !status;
  }
  while (!status) {
    int pending = 0;
    for (int32_t i = 0; i < count; ++i) pending |= c[i].state == PENDING;
    if (!pending) break;
    /* Builds share the cores with other processes' builds; measurements
     * hold the device (and on a CPU, the cores) alone. */
    status = hetc_device_lock_build(&m->lock);
    if (status) break;
    status = build_phase(m, workload, inputs, c, count, records);
    hetc_device_lock_release(&m->lock, "build");
    if (status) break;
    int built = 0;
    for (int32_t i = 0; i < count; ++i) built |= c[i].state == BUILT;
    if (built && (status = hetc_device_lock_measure(&m->lock))) break;
    for (int32_t i = 0; i < count && !hetc_interrupt_signal(); ++i)
      if (c[i].state == BUILT) measure_one(m, c, count, i, records);
    if (built) hetc_device_lock_release(&m->lock, "measure");
    if (hetc_interrupt_signal()) {
      status = hetc_status_new(HETC_STATUS_UNAVAILABLE, "measurement interrupted");
      break;
    }
  }
  /* Interrupted, the workers may be anywhere in their work: stop them. */
  if (status && hetc_interrupt_signal())
    for (int32_t wi = 0; wi < m->num_workers; ++wi) stop_worker(&m->workers[wi], 1);
  for (int32_t i = 0; i < count; ++i) {
    out_measured[i] = !status && c[i].state == DONE;
    if (!out_measured[i]) {
      free(records[i].error_message);
      records[i].error_message = NULL;
      records[i].error = HETC_RECORD_OK;
      records[i].num_costs = 0;
    }
  }
  free(c);
  return status;
}
