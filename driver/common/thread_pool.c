#include "common/thread_pool.h"

#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "common/env.h"

/* One job at a time: a parallel_for posts it, workers and the caller take
 * chunks from a shared counter, the caller waits for the stragglers. Calls
 * from different threads are serialised by job_lock.
 *
 * The team stays hot between jobs: after a job a worker spins on the job
 * generation for HOT_SPIN_NS before it sleeps on the condition variable,
 * so the steps of a package, which follow each other within microseconds,
 * find every worker awake on its own core. Woken from sleep, a worker
 * arrives 20 to 100 us (on a virtual machine whose idle vCPU must be
 * scheduled again, up to milliseconds) after the caller posted the job,
 * which on a small kernel means the caller has done most chunks alone.
 * The caller waits for stragglers hot only when no worker slept (every
 * worker is then running on a core of its own); otherwise it sleeps, so
 * that a woken worker placed on its core can run.
 *
 * A worker the scheduler put on the caller's CPU moves itself off it
 * (step_aside): the two would take turns on one core, each spinning
 * through the other's time slices, while another core idles, and on a
 * virtual machine the scheduler's balancing takes longer than a small
 * model's run to notice (measured: SqueezeNet batches 2.4x slower while
 * the caller and the worker shared a vCPU). */
#define HOT_SPIN_NS 200000

typedef struct job_t {
  hetc_plugin_parallel_body_fn_t body;
  void *user_data;
  int64_t count, chunk;
  atomic_llong next;
  atomic_int active;
} job_t;

static pthread_mutex_t job_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t state_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t work_ready = PTHREAD_COND_INITIALIZER;
static pthread_cond_t work_done = PTHREAD_COND_INITIALIZER;
static pthread_t *workers;
static int32_t worker_count;   /* threads started, excluding callers */
static atomic_int wanted_threads; /* 0: decide from the machine */
static job_t *current;
static atomic_ullong generation; /* written under state_lock, read anywhere */
static int sleepers;             /* workers waiting on work_ready */
static atomic_int stopping;
static _Thread_local int inside_body;
static atomic_int caller_cpu = -1; /* where the last job's caller ran */

/* HETC_NUM_THREADS (capped, common/env.h), else the online cores: read
 * once, since every job and every kernel asks and sysconf() costs
 * microseconds on a virtual machine. A bad value was reported by
 * hetc_env_check (the CLI and hetc_context_create refuse it); here it
 * leaves the default. */
static atomic_int default_count;

static int32_t default_threads(void) {
  int32_t known = atomic_load_explicit(&default_count, memory_order_relaxed);
  if (known > 0) return known;
  int32_t from_env = 0;
  hetc_status_free(hetc_env_num_threads(&from_env));
  long count = from_env > 0 ? from_env : sysconf(_SC_NPROCESSORS_ONLN);
  known = count > 0 ? (int32_t)count : 1;
  atomic_store_explicit(&default_count, known, memory_order_relaxed);
  return known;
}

int32_t hetc_thread_pool_threads(void) {
  int32_t wanted = atomic_load(&wanted_threads);
  return wanted > 0 ? wanted : default_threads();
}

/* Stops and joins the workers; the caller holds job_lock. */
static void stop_workers(void) {
  pthread_mutex_lock(&state_lock);
  atomic_store(&stopping, 1);
  pthread_cond_broadcast(&work_ready);
  pthread_mutex_unlock(&state_lock);
  for (int32_t i = 0; i < worker_count; ++i) pthread_join(workers[i], NULL);
  free(workers);
  workers = NULL;
  worker_count = 0;
  atomic_store(&stopping, 0);
}

static void run_chunks(job_t *job) {
  inside_body = 1;
  for (;;) {
    int64_t begin = atomic_fetch_add(&job->next, job->chunk);
    if (begin >= job->count) break;
    int64_t end = begin + job->chunk < job->count ? begin + job->chunk : job->count;
    job->body(begin, end, job->user_data);
  }
  inside_body = 0;
}

static int64_t monotonic_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* Moves the calling worker to another CPU it may run on when it is on the
 * caller's; its own affinity is restored at once, so the scheduler stays
 * free to place it later. */
static void step_aside(void) {
  const int mine = sched_getcpu();
  if (mine < 0 || mine != atomic_load_explicit(&caller_cpu, memory_order_relaxed)) return;
  cpu_set_t allowed;
  if (pthread_getaffinity_np(pthread_self(), sizeof(allowed), &allowed) != 0 || CPU_COUNT(&allowed) < 2) return;
  cpu_set_t others = allowed;
  CPU_CLR(mine, &others);
  if (CPU_COUNT(&others) > 0 && pthread_setaffinity_np(pthread_self(), sizeof(others), &others) == 0)
    pthread_setaffinity_np(pthread_self(), sizeof(allowed), &allowed);
}

/* Spins until the generation moves past `seen` or HOT_SPIN_NS pass. */
static void spin_for_work(uint64_t seen) {
  const int64_t deadline = monotonic_ns() + HOT_SPIN_NS;
  for (;;) {
    step_aside();
    for (int i = 0; i < 64; ++i) {
      if (atomic_load_explicit(&generation, memory_order_acquire) != seen ||
          atomic_load_explicit(&stopping, memory_order_relaxed))
        return;
#if defined(__x86_64__) || defined(__i386__)
      __builtin_ia32_pause();
#endif
    }
    if (monotonic_ns() > deadline) return;
  }
}

/* Spins while workers still run chunks of `job`, at most HOT_SPIN_NS. */
static void spin_while_active(job_t *job) {
  const int64_t deadline = monotonic_ns() + HOT_SPIN_NS;
  for (;;) {
    for (int i = 0; i < 64; ++i) {
      if (atomic_load_explicit(&job->active, memory_order_acquire) == 0) return;
#if defined(__x86_64__) || defined(__i386__)
      __builtin_ia32_pause();
#endif
    }
    if (monotonic_ns() > deadline) return;
  }
}

static void *worker_main(void *unused) {
  (void)unused;
  uint64_t seen = 0;
  for (;;) {
    spin_for_work(seen);
    pthread_mutex_lock(&state_lock);
    while (!atomic_load(&stopping) && (atomic_load(&generation) == seen || !current)) {
      seen = atomic_load(&generation); /* a job that ended unseen is skipped */
      ++sleepers;
      pthread_cond_wait(&work_ready, &state_lock);
      --sleepers;
    }
    if (atomic_load(&stopping)) break;
    seen = atomic_load(&generation);
    job_t *job = current;
    atomic_fetch_add(&job->active, 1);
    pthread_mutex_unlock(&state_lock);
    step_aside();
    run_chunks(job);
    pthread_mutex_lock(&state_lock);
    if (atomic_fetch_sub(&job->active, 1) == 1) pthread_cond_broadcast(&work_done);
    pthread_mutex_unlock(&state_lock);
  }
  pthread_mutex_unlock(&state_lock);
  return NULL;
}

/* Called with job_lock held. */
static void ensure_workers(void) {
  int32_t want = hetc_thread_pool_threads() - 1;
  if (want == worker_count) return;
  stop_workers();
  if (want <= 0) return;
  workers = calloc((size_t)want, sizeof(pthread_t));
  if (!workers) return;
  /* Kernels keep scratch panels on the stack (plugin.h, parallel_for): the
   * size is set rather than inherited from RLIMIT_STACK. */
  pthread_attr_t attr;
  const int have_attr = pthread_attr_init(&attr) == 0;
  if (have_attr) pthread_attr_setstacksize(&attr, HETC_THREAD_STACK_BYTES);
  for (int32_t i = 0; i < want; ++i) {
    if (pthread_create(&workers[i], have_attr ? &attr : NULL, worker_main, NULL) != 0) break;
    ++worker_count;
  }
  if (have_attr) pthread_attr_destroy(&attr);
}

void hetc_thread_pool_set_threads(int32_t threads) {
  const int32_t most = hetc_env_max_threads();
  atomic_store(&wanted_threads, threads > most ? most : threads > 0 ? threads : 0);
}

void hetc_thread_pool_shutdown(void) {
  pthread_mutex_lock(&job_lock);
  stop_workers();
  pthread_mutex_unlock(&job_lock);
}

void hetc_parallel_for(int64_t count, int64_t grain, hetc_plugin_parallel_body_fn_t body,
                       void *user_data) {
  if (count <= 0) return;
  if (grain < 1) grain = 1;
  if (inside_body || count <= grain || hetc_thread_pool_threads() == 1) {
    body(0, count, user_data);
    return;
  }
  pthread_mutex_lock(&job_lock);
  ensure_workers();
  int32_t threads = worker_count + 1;
  int64_t chunk = (count + threads * 4 - 1) / (threads * 4);
  job_t job = {body, user_data, count, chunk < grain ? grain : chunk, 0, 0};
  atomic_store_explicit(&caller_cpu, sched_getcpu(), memory_order_relaxed);
  pthread_mutex_lock(&state_lock);
  current = &job;
  atomic_fetch_add_explicit(&generation, 1, memory_order_release);
  const int woke_sleepers = sleepers > 0;
  if (woke_sleepers) pthread_cond_broadcast(&work_ready);
  pthread_mutex_unlock(&state_lock);
  run_chunks(&job);
  /* Every worker was spinning on a core of its own: the stragglers finish
   * within a chunk, so wait for them hot too. */
  if (!woke_sleepers) spin_while_active(&job);
  pthread_mutex_lock(&state_lock);
  while (atomic_load(&job.active) > 0) pthread_cond_wait(&work_done, &state_lock);
  current = NULL;
  pthread_mutex_unlock(&state_lock);
  pthread_mutex_unlock(&job_lock);
}
