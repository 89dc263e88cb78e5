/* driver/runtime/executor.c -- running a plan's steps.
 *
 * A plan on one device runs its steps in order on the caller's thread. A
 * plan on several devices runs each device's kernels on a worker thread of
 * that device, and every copy on a copy worker, each worker taking its
 * steps in plan order and starting one when the steps it depends on are
 * done. So copies start as soon as their value is written and overlap the
 * kernels that follow, and independent branches placed on different
 * devices run at the same time. The plugin ABI is synchronous, so this is
 * how hetc gets overlap without asynchronous queues in every plugin.
 *
 * Dependencies come from the plan: a step waits for the producers of the
 * values it reads (read after write) and, because the buffer plan reuses
 * slots, for the last writer of its output's slot and for every step that
 * read that slot since (write after write, write after read).
 *
 * Calls on one plugin instance are serialised (plugin.h): each instance has
 * a lock, held by its worker while a kernel runs and by the copy worker
 * while it reads or writes that instance's buffers. A copy between two
 * host-memory devices needs no plugin call (runtime.c maps those slots) and
 * takes no lock. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "common/clock.h"
#include "common/thread_pool.h"
#include "runtime/runtime_internal.h"
#include "kernel/plugin_calls.h"

typedef struct executor_worker_t {
  hetc_executor_t *executor;
  pthread_t thread;
  int started;
  int32_t num_steps;
  int32_t *steps; /* owned: plan order */
} executor_worker_t;

struct hetc_executor_t {
  hetc_runtime_t *rt;
  pthread_mutex_t *instance_locks; /* per plan device; devices of one instance share the first's */
  int32_t *lock_of;                /* per plan device: its lock */
  int32_t *dep_begin;              /* per step + 1: CSR offsets into deps */
  int32_t *deps;
  /* Several devices: the workers and their shared state, under `mutex`. */
  int32_t num_workers;
  executor_worker_t *workers;
  pthread_mutex_t mutex;
  pthread_cond_t changed;
  unsigned char *done; /* per step, this run */
  uint64_t generation; /* runs started */
  int32_t finished;    /* workers done with this run */
  int stopping;
  hetc_status_t error; /* the first failure of this run */
  double *step_seconds; /* the caller's, or NULL: not timed */
};

/* ------------------------------------------------------------------------ */
/* One step                                                                 */
/* ------------------------------------------------------------------------ */

static pthread_mutex_t *lock_of(const hetc_executor_t *ex, int32_t device) {
  return &ex->instance_locks[ex->lock_of[device]];
}

static hetc_status_t run_copy(hetc_executor_t *ex, const hetc_plan_step_t *step) {
  hetc_runtime_t *rt = ex->rt;
  const hetc_plan_value_t *src = &rt->plan->values[step->inputs[0]];
  const hetc_plan_value_t *dst = &rt->plan->values[step->output];
  void *src_host = value_host(rt, step->inputs[0]), *dst_host = value_host(rt, step->output);
  if (src_host && dst_host) {
    memcpy(dst_host, src_host, src->bytes);
    return NULL;
  }
  hetc_plugin_entry_t *from = entry_of(rt, src->device), *to = entry_of(rt, dst->device);
  const void *data = src_host;
  hetc_status_t status = NULL;
  if (!data) {
    void *landing = dst_host ? dst_host : rt->staging;
    pthread_mutex_lock(lock_of(ex, src->device));
    status = hetc_entry_buffer_read(from, value_buffer(rt, step->inputs[0]), 0, landing, src->bytes);
    pthread_mutex_unlock(lock_of(ex, src->device));
    if (status || dst_host) return status;
    data = landing;
  }
  pthread_mutex_lock(lock_of(ex, dst->device));
  status = hetc_entry_buffer_write(to, value_buffer(rt, step->output), 0, data, dst->bytes);
  pthread_mutex_unlock(lock_of(ex, dst->device));
  return status;
}

static hetc_status_t run_step(hetc_executor_t *ex, int32_t s) {
  hetc_runtime_t *rt = ex->rt;
  const hetc_plan_step_t *step = &rt->plan->steps[s];
  const double start = ex->step_seconds ? hetc_now_seconds() : 0;
  hetc_status_t status;
  if (step->kind == HETC_PLAN_STEP_COPY) {
    status = run_copy(ex, step);
  } else {
    hetc_plugin_entry_t *e = entry_of(rt, step->device);
    hetc_plugin_buffer_t *args[HETC_MAX_NODE_INPUTS + 8 + 2];
    int32_t n = 0;
    for (int32_t i = 0; i < step->num_inputs; ++i) args[n++] = value_buffer(rt, step->inputs[i]);
    for (int32_t p = 0; p < step->num_params; ++p) args[n++] = rt->params[s][p];
    args[n++] = value_buffer(rt, step->output);
    if (step->workspace_bytes) args[n++] = rt->workspaces[step->device];
    pthread_mutex_lock(lock_of(ex, step->device));
    status = hetc_entry_run(e, rt->artifacts[s], args, n);
    pthread_mutex_unlock(lock_of(ex, step->device));
  }
  if (ex->step_seconds) ex->step_seconds[s] = hetc_now_seconds() - start;
  return status ? hetc_status_annotate(status, "step %d (%s) on %s", s, step->name,
                                       hetc_entry_name(entry_of(rt, step->device)))
                : NULL;
}

/* ------------------------------------------------------------------------ */
/* Dependencies                                                             */
/* ------------------------------------------------------------------------ */

/* Appends step `dep` (none when < 0) to the list begun at `first`, once. */
static void add_dependency(int32_t *deps, int32_t first, int32_t *count, int32_t dep) {
  if (dep < 0) return;
  for (int32_t j = first; j < *count; ++j)
    if (deps[j] == dep) return;
  deps[(*count)++] = dep;
}

/* Builds the CSR lists. A step has at most 2 x inputs + 1 writers to wait
 * for (each input's producer and its slot's last writer, and its output
 * slot's) plus the readers of its output slot since its last write; the
 * bound below counts every read of the plan once per slot write, which
 * covers them all. */
static hetc_status_t find_dependencies(hetc_executor_t *ex) {
  const hetc_plan_t *plan = ex->rt->plan;
  int64_t reads = 0;
  for (int32_t s = 0; s < plan->num_steps; ++s) reads += plan->steps[s].num_inputs;
  int32_t *producer = malloc(sizeof(int32_t) * ((size_t)plan->num_values + 1));
  int32_t *last_writer = malloc(sizeof(int32_t) * ((size_t)plan->num_slots + 1));
  /* Readers of each slot since its last write, as linked lists over reads. */
  int32_t *reader_head = malloc(sizeof(int32_t) * ((size_t)plan->num_slots + 1));
  int32_t *reader_step = malloc(sizeof(int32_t) * ((size_t)reads + 1));
  int32_t *reader_next = malloc(sizeof(int32_t) * ((size_t)reads + 1));
  ex->dep_begin = calloc((size_t)plan->num_steps + 1, sizeof(int32_t));
  ex->deps = malloc(sizeof(int32_t) * ((size_t)(3 * reads + 2 * plan->num_steps) + 1));
  hetc_status_t status = NULL;
  if (!producer || !last_writer || !reader_head || !reader_step || !reader_next || !ex->dep_begin || !ex->deps)
    status = hetc_status_new(HETC_STATUS_OUT_OF_MEMORY, "runtime: step dependencies");
  int32_t used_reads = 0, count = 0;
  for (int32_t v = 0; !status && v < plan->num_values; ++v) producer[v] = -1;
  for (int32_t k = 0; !status && k < plan->num_slots; ++k) last_writer[k] = reader_head[k] = -1;
  for (int32_t s = 0; !status && s < plan->num_steps; ++s) {
    const hetc_plan_step_t *step = &plan->steps[s];
    const int32_t first = count;
    /* A value no step writes (a concat laid out as views) is complete once
     * the last writer of its slot has run. */
    for (int32_t i = 0; i < step->num_inputs; ++i) {
      add_dependency(ex->deps, first, &count, producer[step->inputs[i]]);
      add_dependency(ex->deps, first, &count, last_writer[plan->values[step->inputs[i]].slot]);
    }
    const int32_t slot = plan->values[step->output].slot;
    add_dependency(ex->deps, first, &count, last_writer[slot]);
    for (int32_t r = reader_head[slot]; r >= 0; r = reader_next[r])
      add_dependency(ex->deps, first, &count, reader_step[r]);
    ex->dep_begin[s + 1] = count;
    /* Reads are noted after the write bookkeeping: a step never reads the
     * slot it writes (plugin.h), and its own reads must not make it wait
     * for itself. */
    reader_head[slot] = -1;
    last_writer[slot] = s;
    producer[step->output] = s;
    for (int32_t i = 0; i < step->num_inputs; ++i) {
      const int32_t read_slot = plan->values[step->inputs[i]].slot;
      reader_step[used_reads] = s;
      reader_next[used_reads] = reader_head[read_slot];
      reader_head[read_slot] = used_reads++;
    }
  }
  free(producer);
  free(last_writer);
  free(reader_head);
  free(reader_step);
  free(reader_next);
  return status;
}

/* ------------------------------------------------------------------------ */
/* Workers                                                                  */
/* ------------------------------------------------------------------------ */

static int dependencies_done(const hetc_executor_t *ex, int32_t s) {
  for (int32_t j = ex->dep_begin[s]; j < ex->dep_begin[s + 1]; ++j)
    if (!ex->done[ex->deps[j]]) return 0;
  return 1;
}

static void *worker_main(void *arg) {
  executor_worker_t *w = arg;
  hetc_executor_t *ex = w->executor;
  uint64_t seen = 0;
  pthread_mutex_lock(&ex->mutex);
  for (;;) {
    while (!ex->stopping && ex->generation == seen) pthread_cond_wait(&ex->changed, &ex->mutex);
    if (ex->stopping) break;
    seen = ex->generation;
    for (int32_t i = 0; i < w->num_steps && !ex->error; ++i) {
      const int32_t s = w->steps[i];
      while (!ex->error && !dependencies_done(ex, s)) pthread_cond_wait(&ex->changed, &ex->mutex);
      if (ex->error) break;
      pthread_mutex_unlock(&ex->mutex);
      hetc_status_t status = run_step(ex, s);
      pthread_mutex_lock(&ex->mutex);
      if (status && !ex->error) ex->error = status;
      else hetc_status_free(status);
      ex->done[s] = 1;
      pthread_cond_broadcast(&ex->changed);
    }
    ++ex->finished;
    pthread_cond_broadcast(&ex->changed);
  }
  pthread_mutex_unlock(&ex->mutex);
  return NULL;
}

/* Worker 0 takes the copies; worker 1 + lock l takes the kernels of the
 * devices sharing instance lock l. */
static hetc_status_t start_workers(hetc_executor_t *ex) {
  const hetc_plan_t *plan = ex->rt->plan;
  ex->num_workers = 1 + plan->num_devices;
  ex->workers = calloc((size_t)ex->num_workers, sizeof(executor_worker_t));
  ex->done = calloc((size_t)plan->num_steps + 1, 1);
  if (!ex->workers || !ex->done) return hetc_status_new(HETC_STATUS_OUT_OF_MEMORY, "runtime: workers");
  for (int32_t w = 0; w < ex->num_workers; ++w) {
    ex->workers[w].executor = ex;
    if (!(ex->workers[w].steps = malloc(sizeof(int32_t) * ((size_t)plan->num_steps + 1))))
      return hetc_status_new(HETC_STATUS_OUT_OF_MEMORY, "runtime: workers");
  }
  for (int32_t s = 0; s < plan->num_steps; ++s) {
    const hetc_plan_step_t *step = &plan->steps[s];
    executor_worker_t *w = &ex->workers[step->kind == HETC_PLAN_STEP_COPY ? 0 : 1 + ex->lock_of[step->device]];
    w->steps[w->num_steps++] = s;
  }
  pthread_attr_t attr;
  pthread_attr_init(&attr);
  /* Kernels run on these threads: the stack hetc's pool threads have. */
  pthread_attr_setstacksize(&attr, HETC_THREAD_STACK_BYTES);
  hetc_status_t status = NULL;
  for (int32_t w = 0; !status && w < ex->num_workers; ++w) {
    if (!ex->workers[w].num_steps) continue;
    if (pthread_create(&ex->workers[w].thread, &attr, worker_main, &ex->workers[w]) != 0)
      status = hetc_status_new(HETC_STATUS_OUT_OF_MEMORY, "runtime: cannot start a worker thread");
    else ex->workers[w].started = 1;
  }
  pthread_attr_destroy(&attr);
  return status;
}

hetc_status_t hetc_executor_create(hetc_runtime_t *rt) {
  const hetc_plan_t *plan = rt->plan;
  hetc_executor_t *ex = calloc(1, sizeof(*ex));
  if (!ex) return hetc_status_new(HETC_STATUS_OUT_OF_MEMORY, "runtime");
  rt->executor = ex;
  ex->rt = rt;
  pthread_mutex_init(&ex->mutex, NULL);
  pthread_cond_init(&ex->changed, NULL);
  ex->instance_locks = calloc((size_t)plan->num_devices + 1, sizeof(pthread_mutex_t));
  ex->lock_of = calloc((size_t)plan->num_devices + 1, sizeof(int32_t));
  if (!ex->instance_locks || !ex->lock_of) return hetc_status_new(HETC_STATUS_OUT_OF_MEMORY, "runtime");
  for (int32_t d = 0; d < plan->num_devices; ++d) {
    pthread_mutex_init(&ex->instance_locks[d], NULL);
    ex->lock_of[d] = d;
    for (int32_t e = 0; e < d; ++e)
      if (rt->entries[e] == rt->entries[d]) {
        ex->lock_of[d] = ex->lock_of[e];
        break;
      }
  }
  HETC_RETURN_IF_ERROR(find_dependencies(ex));
  int several = 0;
  for (int32_t d = 1; d < plan->num_devices; ++d) several |= ex->lock_of[d] != ex->lock_of[0];
  return several ? start_workers(ex) : NULL;
}

void hetc_executor_destroy(hetc_executor_t *ex) {
  if (!ex) return;
  pthread_mutex_lock(&ex->mutex);
  ex->stopping = 1;
  pthread_cond_broadcast(&ex->changed);
  pthread_mutex_unlock(&ex->mutex);
  for (int32_t w = 0; w < ex->num_workers; ++w) {
    if (ex->workers[w].started) pthread_join(ex->workers[w].thread, NULL);
    free(ex->workers[w].steps);
  }
  for (int32_t d = 0; ex->instance_locks && d < ex->rt->plan->num_devices; ++d)
    pthread_mutex_destroy(&ex->instance_locks[d]);
  pthread_mutex_destroy(&ex->mutex);
  pthread_cond_destroy(&ex->changed);
  hetc_status_free(ex->error);
  free(ex->workers);
  free(ex->done);
  free(ex->instance_locks);
  free(ex->lock_of);
  free(ex->dep_begin);
  free(ex->deps);
  free(ex);
}

hetc_status_t hetc_runtime_execute(hetc_runtime_t *rt) {
  hetc_executor_t *ex = rt->executor;
  if (!ex->workers) {
    for (int32_t s = 0; s < rt->plan->num_steps; ++s) HETC_RETURN_IF_ERROR(run_step(ex, s));
    return NULL;
  }
  int32_t running = 0;
  for (int32_t w = 0; w < ex->num_workers; ++w) running += ex->workers[w].started;
  pthread_mutex_lock(&ex->mutex);
  memset(ex->done, 0, (size_t)rt->plan->num_steps);
  ex->finished = 0;
  ++ex->generation;
  pthread_cond_broadcast(&ex->changed);
  while (ex->finished < running) pthread_cond_wait(&ex->changed, &ex->mutex);
  hetc_status_t status = ex->error;
  ex->error = NULL;
  pthread_mutex_unlock(&ex->mutex);
  return status;
}

void hetc_runtime_time_steps(hetc_runtime_t *rt, double *step_seconds) { rt->executor->step_seconds = step_seconds; }
