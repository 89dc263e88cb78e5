/* Turns on the devices and the cores for the machine's tuning processes
 * (device_lock.h). */
#include "tune/device_lock.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <time.h>
#include <unistd.h>

#include "common/clock.h"
#include "common/env.h"
#include "common/interrupt.h"
#include "tune/turns.h"

/* The folder of the machine's tuning locks; a folder that does not fit a
 * path is refused rather than cut, since a cut path would name another
 * folder. */
static hetc_status_t lock_folder(char *out, size_t size) {
  const char *dir = getenv("HETC_LOCK_DIR");
  const char *runtime = getenv("XDG_RUNTIME_DIR");
  int length;
  if (dir && *dir) length = snprintf(out, size, "%s", dir);
  else if (runtime && runtime[0] == '/') length = snprintf(out, size, "%s/hetc-locks", runtime);
  else length = snprintf(out, size, "/tmp/hetc-locks-%ld", (long)getuid());
  if (length < 0 || (size_t)length >= size)
    return hetc_status_new(HETC_STATUS_BAD_INPUT,
                           "the tuning locks' folder (HETC_LOCK_DIR or XDG_RUNTIME_DIR) is longer than %zu bytes",
                           size - 1);
  return NULL;
}

/* The lock file `name` in the folder, opened close-on-exec so that the
 * measurement workers started from this process do not hold it. */
static hetc_status_t open_lock_file(const char *folder, const char *name, int *out_fd) {
  char path[1024];
  const int length = snprintf(path, sizeof(path), "%s/%s", folder, name);
  if (length < 0 || (size_t)length >= sizeof(path))
    return hetc_status_new(HETC_STATUS_BAD_INPUT, "%s: the tuning lock's path is longer than %zu bytes", folder,
                           sizeof(path) - 1);
  const int fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
  if (fd < 0)
    return hetc_status_new(HETC_STATUS_IO_ERROR, "%s: cannot open the tuning lock: %s", path, strerror(errno));
  *out_fd = fd;
  return NULL;
}

hetc_status_t hetc_device_lock_open(const char *fingerprint, int is_cpu, hetc_device_lock_t *out) {
  memset(out, 0, sizeof(*out));
  out->device_fd = out->cores_fd = -1;
  out->is_cpu = is_cpu;
  /* The fingerprint as a file name: letters, digits, '-' and '.' kept. */
  size_t n = 0;
  for (const char *p = fingerprint && *fingerprint ? fingerprint : "unnamed"; *p && n + 1 < sizeof(out->device_name);
       ++p)
    out->device_name[n++] = (char)((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') ||
                                           *p == '-' || *p == '.'
                                       ? *p
                                       : '_');
  out->device_name[n] = '\0';
  char *folder = out->folder;
  HETC_RETURN_IF_ERROR(hetc_env_seconds("HETC_LOCK_TIMEOUT", HETC_LOCK_TIMEOUT_S, &out->timeout_s));
  HETC_RETURN_IF_ERROR(lock_folder(folder, sizeof(out->folder)));
  if (mkdir(folder, 0700) != 0 && errno != EEXIST)
    return hetc_status_new(HETC_STATUS_IO_ERROR, "%s: cannot make the tuning locks' folder: %s", folder,
                           strerror(errno));
  snprintf(out->device_file, sizeof(out->device_file), "device-%s.lock", out->device_name);
  HETC_RETURN_IF_ERROR(open_lock_file(folder, out->device_file, &out->device_fd));
  hetc_status_t status = open_lock_file(folder, "cores.lock", &out->cores_fd);
  if (status) hetc_device_lock_close(out);
  return status;
}

void hetc_device_lock_close(hetc_device_lock_t *lock) {
  if (lock->device_fd >= 0) close(lock->device_fd);
  if (lock->cores_fd >= 0) close(lock->cores_fd);
  lock->device_fd = lock->cores_fd = -1;
}

static int64_t realtime_ns(void) {
  struct timespec now;
  clock_gettime(CLOCK_REALTIME, &now);
  return (int64_t)now.tv_sec * 1000000000 + now.tv_nsec;
}

/* The first holder of a flock(2) lock on the file open as `fd` that
 * /proc/locks names, described in `out` when every holder is stopped or
 * gone: "process PID (WHAT), which is stopped". 0 when some holder runs,
 * or none is named (another filesystem's view, a lock just let go). */
static int stalled_holder(int fd, char *out, size_t size) {
  struct stat st;
  FILE *locks = fstat(fd, &st) == 0 ? fopen("/proc/locks", "re") : NULL;
  if (!locks) return 0;
  char file[64], line[256];
  snprintf(file, sizeof(file), "%02x:%02x:%llu", major(st.st_dev), minor(st.st_dev), (unsigned long long)st.st_ino);
  int holders = 0, running = 0;
  out[0] = '\0';
  while (!running && fgets(line, sizeof(line), locks)) {
    char kind[16], where[64];
    long pid = 0;
    /* "1: FLOCK  ADVISORY  WRITE 1234 fe:00:5360699 0 EOF"; a waiter's
     * line has "->" after the number. */
    if (sscanf(line, "%*s %15s %*s %*s %ld %63s", kind, &pid, where) != 3 || strcmp(kind, "FLOCK") ||
        strcmp(where, file))
      continue;
    ++holders;
    char path[64], text[512] = "";
    snprintf(path, sizeof(path), "/proc/%ld/stat", pid);
    FILE *stat_file = pid > 0 ? fopen(path, "re") : NULL;
    const size_t n = stat_file ? fread(text, 1, sizeof(text) - 1, stat_file) : 0;
    if (stat_file) fclose(stat_file);
    text[n] = '\0';
    /* The state follows the command's name, which may hold ')' itself. */
    const char *paren = strrchr(text, ')');
    const char state = paren && paren[1] == ' ' ? paren[2] : '\0';
    const int stopped = state == 'T' || state == 't', gone = pid > 0 && !stat_file;
    running = !stopped && !gone;
    if (running || out[0]) continue;
    /* What it is: its program and first argument ("hetc worker"), not
     * the rest, which may hold a queue's password. */
    char what[256] = "";
    snprintf(path, sizeof(path), "/proc/%ld/cmdline", pid);
    FILE *cmdline = stopped ? fopen(path, "re") : NULL;
    const size_t length = cmdline ? fread(what, 1, sizeof(what) - 1, cmdline) : 0;
    if (cmdline) fclose(cmdline);
    what[length] = '\0';
    const size_t first = strlen(what);
    if (first + 1 < length && what[first + 1] != '-') what[first] = ' ';
    if (stopped) snprintf(out, size, "process %ld (%s), which is stopped", pid, what);
    else snprintf(out, size, "process %ld, which is gone (a process it started may have the file open still)", pid);
  }
  fclose(locks);
  return holders > 0 && !running;
}

/* flock without blocking, retried every 5 ms: a blocked flock would not
 * notice a Ctrl-C. Once a second, the holders are looked at: stopped or
 * gone for the lock's timeout, the wait ends (device_lock.h). */
static hetc_status_t take(const hetc_device_lock_t *lock, int fd, int operation) {
  double stalled_since = -1, next_look = 0;
  for (;;) {
    if (flock(fd, operation | LOCK_NB) == 0) return NULL;
    if (errno != EWOULDBLOCK && errno != EINTR)
      return hetc_status_new(HETC_STATUS_IO_ERROR, "taking a tuning lock: %s", strerror(errno));
    HETC_RETURN_IF_ERROR(hetc_interrupt_status());
    const double now = hetc_now_seconds();
    if (now >= next_look) {
      next_look = now + 1;
      char holder[400];
      if (!stalled_holder(fd, holder, sizeof(holder))) stalled_since = -1;
      else if (stalled_since < 0) stalled_since = now;
      if (stalled_since >= 0 && now - stalled_since >= lock->timeout_s)
        return hetc_status_new(HETC_STATUS_TIMEOUT,
                               "%s/%s: the tuning lock is held by %s; gave up after %g s (HETC_LOCK_TIMEOUT)",
                               lock->folder, fd == lock->cores_fd ? "cores.lock" : lock->device_file, holder,
                               lock->timeout_s);
    }
    const struct timespec pause = {0, 5000000};
    nanosleep(&pause, NULL);
  }
}

/* Gives the scheduler's turn back, if one is held (turns.h). */
static void end_turn(hetc_device_lock_t *lock) {
  if (lock->turn == 'm') hetc_turn_end('m', lock->is_cpu, lock->device_name);
  if (lock->turn == 'c') hetc_turn_end('c', 0, "cores");
  lock->turn = 0;
}

hetc_status_t hetc_device_lock_measure(hetc_device_lock_t *lock) {
  /* The scheduler's turn first (a job of `hetc tune a.json b.json`), then
   * the machine's locks: cores first, then the device, in this order in
   * every process, so two never wait on each other. */
  lock->turn = hetc_turn_ask('m', lock->is_cpu, lock->device_name) ? 'm' : 0;
  hetc_status_t status = lock->is_cpu ? take(lock, lock->cores_fd, LOCK_EX) : NULL;
  if (!status) {
    status = take(lock, lock->device_fd, LOCK_EX);
    if (status && lock->is_cpu) flock(lock->cores_fd, LOCK_UN);
  }
  if (status) {
    end_turn(lock);
    return status;
  }
  lock->held_since_ns = realtime_ns();
  return NULL;
}

hetc_status_t hetc_device_lock_build(hetc_device_lock_t *lock) {
  lock->turn = hetc_turn_ask('c', 0, "cores") ? 'c' : 0;
  hetc_status_t status = take(lock, lock->cores_fd, LOCK_SH);
  if (status) {
    end_turn(lock);
    return status;
  }
  lock->held_since_ns = realtime_ns();
  return NULL;
}

/* The measurement holds this process ended and no tuner has written yet
 * (the tuner takes them after every batch, one hold each). */
#define MAX_KEPT_HOLDS 4096
static pthread_mutex_t kept_mutex = PTHREAD_MUTEX_INITIALIZER;
static hetc_measure_hold_t kept[MAX_KEPT_HOLDS];
static int32_t kept_count;

static void keep_hold(const char *lock_name, const char *device, int64_t started_us, int64_t ended_us) {
  pthread_mutex_lock(&kept_mutex);
  if (kept_count < MAX_KEPT_HOLDS) {
    hetc_measure_hold_t *hold = &kept[kept_count++];
    snprintf(hold->lock, sizeof(hold->lock), "%s", lock_name);
    snprintf(hold->device, sizeof(hold->device), "%s", device);
    hold->started_us = started_us;
    hold->ended_us = ended_us;
  }
  pthread_mutex_unlock(&kept_mutex);
}

int32_t hetc_device_lock_take_holds(hetc_measure_hold_t *out, int32_t max) {
  pthread_mutex_lock(&kept_mutex);
  const int32_t n = kept_count < max ? kept_count : max;
  memcpy(out, kept, (size_t)n * sizeof(*out));
  memmove(kept, kept + n, (size_t)(kept_count - n) * sizeof(*kept));
  kept_count -= n;
  pthread_mutex_unlock(&kept_mutex);
  return n;
}

void hetc_device_lock_release(hetc_device_lock_t *lock, const char *what) {
  const char *held = strcmp(what, "build") && !lock->is_cpu ? lock->device_name : "cores";
  const int64_t ended_us = realtime_ns() / 1000;
  if (lock->held_since_ns && strcmp(what, "build"))
    keep_hold(held, lock->device_name, lock->held_since_ns / 1000, ended_us);
  const char *log = getenv("HETC_MEASURE_LOG");
  if (log && *log && lock->held_since_ns) {
    char line[256];
    const int n = snprintf(line, sizeof(line), "%s %s %lld %lld %ld %s\n", what, held,
                           (long long)(lock->held_since_ns / 1000), (long long)ended_us, (long)getpid(),
                           lock->device_name);
    /* Microseconds: exact in the doubles of tools that read the log. One
     * write of a short line to an O_APPEND file: lines of several
     * processes do not interleave. */
    const int fd = open(log, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0600);
    if (fd >= 0) {
      if (write(fd, line, (size_t)n) != n) { /* a diagnostic: nothing to do */
      }
      close(fd);
    }
  }
  lock->held_since_ns = 0;
  flock(lock->device_fd, LOCK_UN);
  flock(lock->cores_fd, LOCK_UN);
  end_turn(lock);
}

/* The model's work holds the cores as a build does, through a lock of
 * its own (one tuner per process works at a time). */
static hetc_device_lock_t cpu_work_lock = {.device_fd = -1, .cores_fd = -1};

hetc_status_t hetc_device_lock_cpu_work_begin(void) {
  if (cpu_work_lock.cores_fd < 0) HETC_RETURN_IF_ERROR(hetc_device_lock_open("cores", 1, &cpu_work_lock));
  return hetc_device_lock_build(&cpu_work_lock);
}

void hetc_device_lock_cpu_work_end(void) {
  if (cpu_work_lock.cores_fd >= 0) hetc_device_lock_release(&cpu_work_lock, "build");
}
