/* A worker of the tuning queue (hetc.h's hetc_queue_work): claims tasks,
 * tunes each with the tuner into the worker's records store, reports
 * progress after every batch and renews its leases from a thread of its
 * own. */
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "common/clock.h"
#include "common/fileio.h"
#include "common/interrupt.h"
#include "plugins/peaks.h"
#include "plugins/registry.h"
#include "records/records.h"
#include "queue/claims.h"
#include "tune/search.h"
#include "tune/tuner.h"

#define MAX_WORKER_TARGETS 16

/* ---- the heartbeat thread ------------------------------------------------- */

typedef struct heartbeat_t {
  hetc_queue_t *queue; /* its own connection */
  int64_t worker_id;
  int32_t lease_s;
  pthread_mutex_t lock;
  pthread_cond_t wake;
  int stop;
  int64_t task_id; /* the task worked on, whose lease it renews; 0: none */
  char doing[256];
  hetc_status_t failure; /* the last heartbeat's, for the log */
} heartbeat_t;

static void *beat(void *arg) {
  heartbeat_t *h = arg;
  pthread_mutex_lock(&h->lock);
  while (!h->stop) {
    char doing[256];
    snprintf(doing, sizeof(doing), "%s", h->doing);
    const int64_t task_id = h->task_id;
    pthread_mutex_unlock(&h->lock);
    hetc_status_t status = hetc_queue_worker_heartbeat(h->queue, h->worker_id, task_id, h->lease_s, doing);
    pthread_mutex_lock(&h->lock);
    hetc_status_free(h->failure);
    h->failure = status;
    /* A few beats a lease: one missed (a slow server) loses nothing. */
    struct timespec until;
    clock_gettime(CLOCK_REALTIME, &until);
    const double interval = h->lease_s / 4.0 < 10.0 ? h->lease_s / 4.0 : 10.0;
    until.tv_sec += (time_t)interval;
    until.tv_nsec += (long)((interval - floor(interval)) * 1e9);
    if (until.tv_nsec >= 1000000000L) until.tv_sec += 1, until.tv_nsec -= 1000000000L;
    if (!h->stop) pthread_cond_timedwait(&h->wake, &h->lock, &until);
  }
  pthread_mutex_unlock(&h->lock);
  return NULL;
}

static void say_doing(heartbeat_t *h, int64_t task_id, const char *doing) {
  pthread_mutex_lock(&h->lock);
  h->task_id = task_id;
  snprintf(h->doing, sizeof(h->doing), "%s", doing);
  pthread_mutex_unlock(&h->lock);
}

/* ---- a job's model ---------------------------------------------------------- */

hetc_status_t hetc_queue_load_model(const char *file_name, const void *content, size_t length,
                                    const char *input_shapes, hetc_model_t **out_model) {
  *out_model = NULL;
  const size_t name_length = strlen(file_name);
  const int is_json = name_length > 5 && !strcmp(file_name + name_length - 5, ".json");
  /* The loader reads files: the model goes through a folder of its own,
   * named as it was submitted (the extension says JSON or ONNX). */
  const char *tmp = getenv("TMPDIR");
  char dir[1024];
  snprintf(dir, sizeof(dir), "%s/hetc-worker-model-XXXXXX", tmp && *tmp ? tmp : "/tmp");
  if (!mkdtemp(dir)) return hetc_status_new(HETC_STATUS_IO_ERROR, "a worker's model folder in %s", dir);
  /* A name that could leave the folder (a row written by hand) becomes
   * model.json or model.onnx. */
  const int plain_name = file_name[0] && file_name[0] != '.' && !strchr(file_name, '/');
  const char *name = plain_name ? file_name : is_json ? "model.json" : "model.onnx";
  char *path = hetc_path_join(dir, name);
  hetc_status_t status = path ? hetc_file_write_all(path, content, length)
                              : hetc_status_new(HETC_STATUS_OUT_OF_MEMORY, "loading a job's model");
  char shapes_text[1024];
  snprintf(shapes_text, sizeof(shapes_text), "%s", input_shapes ? input_shapes : "");
  const char *shapes[16];
  int32_t num_shapes = 0;
  char *position = NULL;
  for (char *entry = strtok_r(shapes_text, ",", &position); entry && num_shapes < 16;
       entry = strtok_r(NULL, ",", &position))
    shapes[num_shapes++] = entry;
  const hetc_model_load_options_t options = {.struct_size = sizeof(options), .input_shapes = shapes,
                                             .num_input_shapes = num_shapes, .shapes_only = 1};
  if (!status) status = hetc_model_load_with_options(path, &options, out_model);
  if (path) remove(path);
  rmdir(dir);
  free(path);
  /* The loader names the file by its path, in a folder that is gone. */
  const char *message = status ? hetc_status_message(status) : "";
  const size_t dir_length = strlen(dir);
  if (!strncmp(message, dir, dir_length) && message[dir_length] == '/') {
    hetc_status_t renamed = hetc_status_new(hetc_status_code(status), "%s", message + dir_length + 1);
    hetc_status_free(status);
    status = renamed;
  }
  return status;
}

/* Model `model_index` of job `job_id` from the queue, with the job's search
 * and seed, loaded as hetc_queue_load_model does. */
static hetc_status_t load_job_model(hetc_queue_t *queue, int64_t job_id, int32_t model_index, hetc_model_t **out_model,
                                    char *search, size_t search_size, uint64_t *out_seed) {
  *out_model = NULL;
  char job[32], index[16];
  snprintf(job, sizeof(job), "%lld", (long long)job_id);
  snprintf(index, sizeof(index), "%d", (int)model_index);
  const char *params[2] = {job, index};
  PGresult *result;
  HETC_RETURN_IF_ERROR(hetc_pg_exec(&queue->pg, "reading a job's model",
                                    "SELECT m.file_name, m.content, m.input_shapes, j.search, j.seed "
                                    "FROM hetc_job_models m JOIN hetc_jobs j ON j.id = m.job_id "
                                    "WHERE m.job_id = $1 AND m.model_index = $2",
                                    2, params, &result));
  if (PQntuples(result) != 1) {
    PQclear(result);
    return hetc_status_new(HETC_STATUS_NOT_FOUND, "%s: job %s has no model %s", queue->pg.shown_uri, job, index);
  }
  size_t length = 0;
  unsigned char *content = PQunescapeBytea((const unsigned char *)PQgetvalue(result, 0, 1), &length);
  hetc_status_t status = content ? hetc_queue_load_model(hetc_pg_text(result, 0, 0), content, length,
                                                         hetc_pg_text(result, 0, 2), out_model)
                                 : hetc_status_new(HETC_STATUS_OUT_OF_MEMORY, "reading a job's model");
  snprintf(search, search_size, "%s", hetc_pg_text(result, 0, 3));
  *out_seed = (uint64_t)hetc_pg_int(result, 0, 4);
  PQclear(result);
  PQfreemem(content);
  return status ? hetc_status_annotate(status, "job %lld, model %d", (long long)job_id, (int)model_index) : NULL;
}

/* ---- tuning one claimed task --------------------------------------------------- */

typedef struct task_run_t {
  hetc_queue_t *queue;
  int64_t worker_id;
  int32_t lease_s;
  const hetc_queue_claim_t *claim;
  heartbeat_t *heartbeat;
  int lost; /* the task stopped being ours */
} task_run_t;

static int after_batch(void *user_data, int32_t trials_done, double best_seconds) {
  task_run_t *run = user_data;
  int ours = 0;
  hetc_status_t status = hetc_queue_report(run->queue, run->worker_id, run->claim->task_id, trials_done, best_seconds,
                                           HETC_QUEUE_GOING, NULL, &ours);
  if (status) {
    /* The server is away: keep tuning (a store on it waits for it to come
     * back); the report at the end tries again. */
    hetc_status_free(status);
    return 0;
  }
  char doing[256];
  snprintf(doing, sizeof(doing), "job %lld, model %d, task %d on %s: %d/%d trials", (long long)run->claim->job_id,
           (int)run->claim->model_index, (int)run->claim->task_number, run->claim->target, (int)trials_done,
           (int)run->claim->trials);
  say_doing(run->heartbeat, run->claim->task_id, doing);
  /* Said at once, not at the next beat: `hetc jobs show` follows it. */
  if (ours) hetc_status_free(hetc_queue_worker_heartbeat(run->queue, run->worker_id, run->claim->task_id,
                                                         run->lease_s, doing));
  run->lost = !ours;
  return run->lost;
}

typedef struct worker_state_t {
  hetc_context_t *context;
  hetc_queue_t *queue;
  const hetc_worker_options_t *options;
  int64_t worker_id;
  heartbeat_t heartbeat;
  /* The last job model loaded, kept for the job's next task. */
  hetc_model_t *model;
  int64_t model_job;
  int32_t model_index;
  char search[16];
  uint64_t seed;
  /* The plugins, opened once: opening them measures every device's peak;
   * and the records store, one connection for every task. */
  hetc_registry_t *registry;
  hetc_records_t *store;
  hetc_worker_summary_t summary;
} worker_state_t;

static hetc_status_t tune_claim(worker_state_t *w, const hetc_queue_claim_t *claim) {
  hetc_status_t status = NULL;
  if (!w->model || w->model_job != claim->job_id || w->model_index != claim->model_index) {
    hetc_model_free(w->model);
    w->model = NULL;
    status = load_job_model(w->queue, claim->job_id, claim->model_index, &w->model, w->search, sizeof(w->search),
                            &w->seed);
    w->model_job = claim->job_id;
    w->model_index = claim->model_index;
  }
  task_run_t run = {w->queue, w->worker_id, w->heartbeat.lease_s, claim, &w->heartbeat, 0};
  hetc_tune_options_t tune = hetc_tune_default_options();
  if (!status && !hetc_search_kind_from_name(w->search, &tune.search))
    status = hetc_status_new(HETC_STATUS_BAD_INPUT, "job %lld: search '%s' is not built in", (long long)claim->job_id,
                             w->search);
  /* By default every worker tunes into the queue's own database, so that
   * a task claimed again goes on from what any machine measured, and the
   * cost model trained there serves them all. */
  tune.records_path = w->options->records_path ? w->options->records_path : w->queue->uri;
  char simulated[64];
  if (w->options->simulate_path) {
    snprintf(simulated, sizeof(simulated), "simulated:job %lld", (long long)claim->job_id);
    tune.simulate_path = w->options->simulate_path;
    tune.simulate_in_time = 1;
    tune.simulate_fingerprint = simulated;
    /* Simulated records teach a cost model nothing worth its fits. */
    tune.transfer = 0;
  }
  tune.trials = claim->trials;
  tune.seed = w->seed;
  if (w->options->batch) tune.batch = w->options->batch;
  if (w->options->build_workers) tune.measure.build_workers = w->options->build_workers;
  tune.task_numbers = &claim->task_number;
  tune.num_task_numbers = 1;
  tune.after_batch = after_batch;
  tune.after_batch_data = &run;
  tune.registry = w->registry;
  tune.store = w->store;
  hetc_tuner_t *tuner = NULL;
  if (!status) status = hetc_tuner_create(&tune, &tuner);
  hetc_tune_task_result_t *results = NULL;
  int32_t count = 0;
  const char *target = claim->target;
  if (!status) status = hetc_tuner_tune_graph(tuner, w->model, &target, 1, &results, &count);
  hetc_tuner_free(tuner);
  /* Interrupted, or the machine's tuning lock held by a process that is
   * stopped (device_lock.h): the worker's trouble, not the job's. The
   * worker leaves; the task goes back to the queue. */
  if (status && (hetc_interrupt_signal() || hetc_status_code(status) == HETC_STATUS_TIMEOUT)) {
    hetc_free(results);
    return status;
  }
  int32_t trials_done = 0;
  double best = 0;
  if (!status && count == 1) {
    trials_done = results[0].trials + results[0].from_store;
    if (trials_done > claim->trials) trials_done = claim->trials;
    best = results[0].best_seconds;
    w->summary.trials += results[0].trials;
  }
  hetc_free(results);
  int ours = 0;
  const hetc_queue_outcome_t outcome = status ? HETC_QUEUE_FAILED : HETC_QUEUE_DONE;
  if (!run.lost) {
    hetc_status_t report = hetc_queue_report(w->queue, w->worker_id, claim->task_id, trials_done, best, outcome,
                                             status ? hetc_status_message(status) : NULL, &ours);
    if (report) {
      hetc_status_free(status);
      return report;
    }
  }
  const char *said = run.lost || !ours ? "stopped (its lease was lost or its job cancelled)"
                     : status          ? "failed"
                                       : "done";
  if (run.lost || !ours) ++w->summary.tasks_stopped;
  else if (status) ++w->summary.tasks_failed;
  else ++w->summary.tasks_done;
  if (w->options->progress) {
    fprintf(w->options->progress, "job %lld, model %d, task %d on %s: %s, %d/%d trials%s%s\n",
            (long long)claim->job_id, (int)claim->model_index, (int)claim->task_number, claim->target, said,
            (int)trials_done, (int)claim->trials, status ? ": " : "", status ? hetc_status_message(status) : "");
    fflush(w->options->progress);
  }
  hetc_status_free(status); /* a bad job is the job's, not the worker's */
  return NULL;
}

/* ---- the loop ------------------------------------------------------------------ */

static int compare_seconds(const void *a, const void *b) {
  const double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

/* The worker's targets: the options', else every ready plugin with a
 * device. Names point into the context or the options. */
static hetc_status_t worker_targets(worker_state_t *w, const char **names, int32_t *out_count) {
  *out_count = 0;
  if (w->options->targets) {
    if (w->options->num_targets < 1 || w->options->num_targets > MAX_WORKER_TARGETS)
      return hetc_status_new(HETC_STATUS_BAD_INPUT, "a worker takes 1 to %d targets", MAX_WORKER_TARGETS);
    for (int32_t k = 0; k < w->options->num_targets; ++k) {
      int32_t index;
      HETC_RETURN_IF_ERROR(hetc_context_target(w->context, w->options->targets[k], &index));
      names[(*out_count)++] = w->options->targets[k];
    }
    return NULL;
  }
  for (int32_t k = 0; k < hetc_context_plugin_count(w->context) && *out_count < MAX_WORKER_TARGETS; ++k) {
    hetc_plugin_info_t info;
    hetc_status_t status = hetc_context_plugin_info(w->context, k, &info);
    if (status) {
      hetc_status_free(status);
      continue;
    }
    if (info.state == HETC_PLUGIN_STATE_READY && info.device_count > 0) names[(*out_count)++] = info.plugin->name;
  }
  return *out_count ? NULL : hetc_status_new(HETC_STATUS_UNAVAILABLE, "a worker with no ready plugin has nothing to offer");
}

hetc_status_t hetc_queue_work(hetc_context_t *context, hetc_queue_t *queue, const hetc_worker_options_t *options,
                              hetc_worker_summary_t *out_summary) {
  memset(out_summary, 0, sizeof(*out_summary));
  if (!options || options->struct_size < sizeof(hetc_worker_options_t))
    return hetc_status_new(HETC_STATUS_INVALID_ARGUMENT, "worker options: struct_size must be sizeof(hetc_worker_options_t)");
  if (options->lease_s < 0 || options->lease_s > 86400 || options->idle_exit_s < 0)
    return hetc_status_new(HETC_STATUS_BAD_INPUT, "a lease must be 1 to 86400 seconds");
  worker_state_t w;
  memset(&w, 0, sizeof(w));
  w.context = context;
  w.queue = queue;
  w.options = options;
  const char *targets[MAX_WORKER_TARGETS];
  int32_t num_targets = 0;
  HETC_RETURN_IF_ERROR(worker_targets(&w, targets, &num_targets));
  const char *records_path = options->records_path ? options->records_path : queue->uri;
  HETC_RETURN_IF_ERROR(hetc_records_open(records_path, &w.store));
  hetc_status_t opened = hetc_registry_open(&w.registry);
  if (opened) {
    hetc_records_close(w.store);
    return opened;
  }
  hetc_registry_keep_peaks(w.registry, records_path, HETC_PEAKS_RECORD);
  const int32_t lease_s = options->lease_s ? options->lease_s : HETC_QUEUE_LEASE_S;
  hetc_status_t registered = hetc_queue_worker_register(queue, targets, num_targets, "", &w.worker_id);
  if (registered) {
    hetc_registry_free(w.registry);
    hetc_records_close(w.store);
    return registered;
  }
  w.heartbeat.worker_id = w.worker_id;
  w.heartbeat.lease_s = lease_s;
  snprintf(w.heartbeat.doing, sizeof(w.heartbeat.doing), "idle");
  pthread_mutex_init(&w.heartbeat.lock, NULL);
  pthread_cond_init(&w.heartbeat.wake, NULL);
  hetc_status_t status = hetc_queue_open(queue->uri, &w.heartbeat.queue);
  pthread_t thread;
  const int beating = !status && pthread_create(&thread, NULL, beat, &w.heartbeat) == 0;
  if (!status && !beating) status = hetc_status_new(HETC_STATUS_INTERNAL, "starting a worker's heartbeat");
  if (!status && options->progress) {
    fprintf(options->progress, "worker %lld (", (long long)w.worker_id);
    for (int32_t k = 0; k < num_targets; ++k) fprintf(options->progress, "%s%s", k ? ", " : "", targets[k]);
    fprintf(options->progress, ") on %s\n", hetc_queue_uri(queue));
    fflush(options->progress);
  }
  time_t idle_since = time(NULL);
  double *claim_seconds = NULL;
  int32_t claim_capacity = 0;
  while (!status && !hetc_interrupt_signal()) {
    hetc_queue_claim_t claim;
    int claimed = 0;
    const double asked = hetc_now_seconds();
    status = hetc_queue_claim(queue, w.worker_id, lease_s, w.model ? w.model_job : 0, &claim, &claimed);
    if (status) break;
    if (claimed && w.summary.claims == claim_capacity) {
      claim_capacity = claim_capacity ? 2 * claim_capacity : 64;
      double *grown = realloc(claim_seconds, sizeof(double) * (size_t)claim_capacity);
      if (!grown) {
        status = hetc_status_new(HETC_STATUS_OUT_OF_MEMORY, "worker");
        break;
      }
      claim_seconds = grown;
    }
    if (claimed) claim_seconds[w.summary.claims++] = hetc_now_seconds() - asked;
    if (!claimed) {
      if (options->idle_exit_s > 0 && difftime(time(NULL), idle_since) >= options->idle_exit_s) break;
      say_doing(&w.heartbeat, 0, "idle");
      sleep(1);
      continue;
    }
    if (options->progress) {
      fprintf(options->progress, "job %lld, model %d, task %d on %s: claimed (attempt %d), %d/%d trials done before\n",
              (long long)claim.job_id, (int)claim.model_index, (int)claim.task_number, claim.target,
              (int)claim.attempts, (int)claim.trials_done, (int)claim.trials);
      fflush(options->progress);
    }
    char doing[256];
    snprintf(doing, sizeof(doing), "job %lld, model %d, task %d on %s: starting", (long long)claim.job_id,
             (int)claim.model_index, (int)claim.task_number, claim.target);
    say_doing(&w.heartbeat, claim.task_id, doing);
    hetc_status_free(hetc_queue_worker_heartbeat(queue, w.worker_id, claim.task_id, lease_s, doing));
    status = tune_claim(&w, &claim);
    say_doing(&w.heartbeat, 0, "idle");
    idle_since = time(NULL);
  }
  if (beating) {
    pthread_mutex_lock(&w.heartbeat.lock);
    w.heartbeat.stop = 1;
    pthread_cond_signal(&w.heartbeat.wake);
    pthread_mutex_unlock(&w.heartbeat.lock);
    pthread_join(thread, NULL);
  }
  hetc_status_free(w.heartbeat.failure);
  hetc_queue_close(w.heartbeat.queue);
  pthread_cond_destroy(&w.heartbeat.wake);
  pthread_mutex_destroy(&w.heartbeat.lock);
  hetc_model_free(w.model);
  hetc_registry_free(w.registry);
  hetc_records_close(w.store);
  hetc_status_t left = hetc_queue_worker_leave(queue, w.worker_id);
  if (!status) status = left;
  else hetc_status_free(left);
  if (!status && hetc_interrupt_signal()) status = hetc_interrupt_status();
  if (w.summary.claims > 0) {
    qsort(claim_seconds, (size_t)w.summary.claims, sizeof(double), compare_seconds);
    w.summary.claim_p50_s = claim_seconds[(w.summary.claims - 1) / 2];
    w.summary.claim_p95_s = claim_seconds[(int32_t)(0.95 * (w.summary.claims - 1))];
    w.summary.claim_max_s = claim_seconds[w.summary.claims - 1];
  }
  free(claim_seconds);
  *out_summary = w.summary;
  return status;
}
