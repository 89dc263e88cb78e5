/* Jobs in the tuning queue (hetc.h's hetc_queue_*): opening the queue,
 * submitting, listing, showing and cancelling jobs. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/fileio.h"
#include "plugins/registry.h"
#include "queue/queue.h"
#include "tune/search.h"

#define MAX_JOB_MODELS 64
#define MAX_JOB_TARGETS 16
/* A model file stored with a job: an ONNX file carries its weights. */
#define MAX_MODEL_BYTES ((size_t)1 << 30)

hetc_status_t hetc_queue_open(const char *uri, hetc_queue_t **out_queue) {
  *out_queue = NULL;
  hetc_queue_t *queue = calloc(1, sizeof(*queue));
  if (!queue) return hetc_status_new(HETC_STATUS_OUT_OF_MEMORY, "opening the queue");
  hetc_status_t status = hetc_pg_connect(uri, NULL, &queue->pg);
  if (!status) status = hetc_queue_schema_ensure(&queue->pg);
  if (!status && !(queue->uri = strdup(uri))) status = hetc_status_new(HETC_STATUS_OUT_OF_MEMORY, "opening the queue");
  if (status) {
    hetc_queue_close(queue);
    return status;
  }
  *out_queue = queue;
  return NULL;
}

void hetc_queue_close(hetc_queue_t *queue) {
  if (!queue) return;
  hetc_pg_close(&queue->pg);
  free(queue->uri);
  free(queue);
}

const char *hetc_queue_uri(const hetc_queue_t *queue) { return queue->pg.shown_uri; }

void hetc_queue_process_name(char *out, size_t size) {
  char host[128] = "";
  if (gethostname(host, sizeof(host) - 1) != 0) snprintf(host, sizeof(host), "unknown-host");
  snprintf(out, size, "%s:%ld", host, (long)getpid());
}

/* ---- submitting ------------------------------------------------------------ */

static const char *file_name_of(const char *path) {
  const char *slash = strrchr(path, '/');
  return slash ? slash + 1 : path;
}

/* Adds `name` to the comma-separated list `known` unless it is there. */
static void note_name(char *known, size_t size, const char *name) {
  const size_t length = strlen(name), used = strlen(known);
  for (const char *p = known; *p; p += strcspn(p, ",") + (p[strcspn(p, ",")] ? 2 : 0))
    if (strcspn(p, ",") == length && !strncmp(p, name, length)) return;
  if (used + length + 3 < size) snprintf(known + used, size - used, "%s%s", used ? ", " : "", name);
}

/* Whether `target` (NAME, or NAME:INDEX) names a plugin of `registry` or
 * a target a worker of the queue registered; else BAD_INPUT listing the
 * targets there are. */
static hetc_status_t check_target(hetc_queue_t *queue, hetc_registry_t *registry, const char *target) {
  const size_t name_length = strcspn(target, ":");
  char known[1024] = "";
  for (int32_t k = 0; k < registry->count; ++k) {
    const hetc_plugin_t *plugin = registry->entries[k].plugin;
    if (!plugin || !plugin->name) continue;
    if (strlen(plugin->name) == name_length && !strncmp(plugin->name, target, name_length)) return NULL;
    note_name(known, sizeof(known), plugin->name);
  }
  PGresult *result;
  HETC_RETURN_IF_ERROR(hetc_pg_exec(&queue->pg, "reading the workers' targets",
                                    "SELECT DISTINCT unnest(targets) FROM hetc_workers ORDER BY 1", 0, NULL, &result));
  int found = 0;
  for (int row = 0; row < PQntuples(result) && !found; ++row) {
    const char *name = hetc_pg_text(result, row, 0);
    found = strlen(name) == name_length && !strncmp(name, target, name_length);
    note_name(known, sizeof(known), name);
  }
  PQclear(result);
  if (found) return NULL;
  return hetc_status_new(HETC_STATUS_BAD_INPUT,
                         "unknown target '%s': no plugin here and no worker of the queue offers it (targets: %s)",
                         target, *known ? known : "none");
}

static hetc_status_t check_spec(const hetc_job_spec_t *spec) {
  if (!spec || spec->struct_size < sizeof(hetc_job_spec_t))
    return hetc_status_new(HETC_STATUS_INVALID_ARGUMENT, "submitting a job: spec.struct_size must be sizeof(hetc_job_spec_t)");
  if (spec->num_models < 1 || spec->num_models > MAX_JOB_MODELS || !spec->model_paths || !spec->models)
    return hetc_status_new(HETC_STATUS_BAD_INPUT, "a job takes 1 to %d models", MAX_JOB_MODELS);
  if (spec->num_targets < 1 || spec->num_targets > MAX_JOB_TARGETS || !spec->targets)
    return hetc_status_new(HETC_STATUS_BAD_INPUT, "a job takes 1 to %d targets", MAX_JOB_TARGETS);
  if (spec->trials < 0 || spec->trials > 1000000)
    return hetc_status_new(HETC_STATUS_BAD_INPUT, "trials must be 1 to 1000000 (0: 200)");
  if (spec->priority < -1000 || spec->priority > 1000)
    return hetc_status_new(HETC_STATUS_BAD_INPUT, "a priority must be -1000 to 1000");
  const char *search = spec->search ? spec->search : "model";
  hetc_search_kind_t kind;
  if (!hetc_search_kind_from_name(search, &kind))
    return hetc_status_new(HETC_STATUS_BAD_INPUT, "unknown search '%s' (model, random, grid or genetic)", search);
  for (int32_t k = 0; k < spec->num_targets; ++k)
    for (int32_t j = 0; j < k; ++j)
      if (!strcmp(spec->targets[j], spec->targets[k]))
        return hetc_status_new(HETC_STATUS_BAD_INPUT, "target '%s' is named twice", spec->targets[k]);
  return NULL;
}

/* A model's file as it will be stored, read once so that what is checked
 * is what is stored. */
typedef struct model_file_t {
  char *content;
  size_t length;
} model_file_t;

/* Reads the file at `path` and loads it as a worker will; BAD_INPUT naming
 * it when a worker could not: what loads here may need a file beside it
 * (an ONNX shape kept as external data) that no worker will have. */
static hetc_status_t read_model(const char *path, const char *input_shapes, model_file_t *out) {
  HETC_RETURN_IF_ERROR(hetc_file_read_all(path, MAX_MODEL_BYTES, &out->content, &out->length));
  hetc_model_t *as_stored = NULL;
  hetc_status_t status = hetc_queue_load_model(file_name_of(path), out->content, out->length, input_shapes, &as_stored);
  hetc_model_free(as_stored);
  if (!status) return NULL;
  hetc_status_t refused = hetc_status_new(hetc_status_code(status),
                                          "%s: a worker could not load it: %s (a job keeps the model file alone, "
                                          "not the files beside it: submit the model.json that `hetc import` "
                                          "writes, or keep that data in the model file)",
                                          path, hetc_status_message(status));
  hetc_status_free(status);
  return refused;
}

static hetc_status_t insert_model(hetc_queue_t *queue, const char *job_id, int32_t index, const char *path,
                                  const model_file_t *file, const char *input_shapes) {
  char index_text[16];
  snprintf(index_text, sizeof(index_text), "%d", (int)index);
  const char *params[5] = {job_id, index_text, file_name_of(path), file->content, input_shapes};
  const int lengths[5] = {0, 0, 0, (int)file->length, 0}, formats[5] = {0, 0, 0, 1, 0};
  return hetc_pg_exec_binary(
      &queue->pg, "storing a job's model",
      "INSERT INTO hetc_job_models (job_id, model_index, file_name, content, input_shapes) VALUES ($1, $2, $3, $4, $5)",
      5, params, lengths, formats, NULL);
}

static hetc_status_t insert_tasks(hetc_queue_t *queue, const char *job_id, int32_t model_index,
                                  const hetc_model_t *model, const hetc_job_spec_t *spec, int32_t trials) {
  hetc_task_info_t *tasks = NULL;
  int32_t count = 0;
  HETC_RETURN_IF_ERROR(hetc_model_tasks(model, &tasks, &count, NULL));
  hetc_status_t status = NULL;
  for (int32_t k = 0; !status && k < count; ++k)
    for (int32_t t = 0; !status && t < spec->num_targets; ++t) {
      char index_text[16], number[16], nodes[16], flops[32], trials_text[16];
      snprintf(index_text, sizeof(index_text), "%d", (int)model_index);
      snprintf(number, sizeof(number), "%d", (int)(k + 1));
      snprintf(nodes, sizeof(nodes), "%d", (int)tasks[k].count);
      snprintf(flops, sizeof(flops), "%.17g", tasks[k].flops);
      snprintf(trials_text, sizeof(trials_text), "%d", (int)trials);
      const char *params[8] = {job_id, index_text, number, spec->targets[t], tasks[k].key, nodes, flops, trials_text};
      status = hetc_pg_exec(&queue->pg, "storing a job's tasks",
                            "INSERT INTO hetc_tasks (job_id, model_index, task_number, target, workload_key, "
                            "node_count, flops, trials) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)",
                            8, params, NULL);
    }
  hetc_free(tasks);
  return status;
}

hetc_status_t hetc_queue_submit(hetc_context_t *context, hetc_queue_t *queue, const hetc_job_spec_t *spec,
                                int64_t *out_job_id) {
  *out_job_id = 0;
  HETC_RETURN_IF_ERROR(check_spec(spec));
  char targets[4096];
  HETC_RETURN_IF_ERROR(hetc_pg_name_array(spec->targets, spec->num_targets, "target", targets, sizeof(targets)));
  for (int32_t k = 0; k < spec->num_targets; ++k) HETC_RETURN_IF_ERROR(check_target(queue, context, spec->targets[k]));
  const int32_t trials = spec->trials ? spec->trials : 200;
  char submitter[160], trials_text[16], priority[16], seed[32];
  hetc_queue_process_name(submitter, sizeof(submitter));
  snprintf(trials_text, sizeof(trials_text), "%d", (int)trials);
  snprintf(priority, sizeof(priority), "%d", (int)spec->priority);
  snprintf(seed, sizeof(seed), "%" PRIu64, spec->seed ? spec->seed : 1);
  const char *params[6] = {submitter, targets, trials_text, spec->search ? spec->search : "model", seed, priority};
  /* Every model is checked before the job takes a number. */
  model_file_t files[MAX_JOB_MODELS] = {{0}};
  hetc_status_t status = NULL;
  for (int32_t k = 0; !status && k < spec->num_models; ++k)
    status = read_model(spec->model_paths[k], spec->input_shapes ? spec->input_shapes[k] : NULL, &files[k]);
  PGresult *result = NULL;
  if (!status) status = hetc_pg_exec(&queue->pg, "submitting a job", "BEGIN", 0, NULL, NULL);
  if (!status)
    status = hetc_pg_exec(&queue->pg, "submitting a job",
                          "INSERT INTO hetc_jobs (submitter, targets, trials, search, seed, priority) "
                          "VALUES ($1, $2, $3, $4, $5, $6) RETURNING id",
                          6, params, &result);
  char job_id[32] = "";
  if (!status) snprintf(job_id, sizeof(job_id), "%s", hetc_pg_text(result, 0, 0));
  PQclear(result);
  for (int32_t k = 0; !status && k < spec->num_models; ++k) {
    status = insert_model(queue, job_id, k, spec->model_paths[k], &files[k],
                          spec->input_shapes ? spec->input_shapes[k] : NULL);
    if (!status) status = insert_tasks(queue, job_id, k, spec->models[k], spec, trials);
  }
  for (int32_t k = 0; k < spec->num_models; ++k) free(files[k].content);
  /* No transaction when a model was refused, or when the lost connection
   * took it with it. */
  if (!queue->pg.in_transaction) return status;
  hetc_status_t end = hetc_pg_exec(&queue->pg, "submitting a job", status ? "ROLLBACK" : "COMMIT", 0, NULL, NULL);
  if (status) {
    hetc_status_free(end);
    return status;
  }
  HETC_RETURN_IF_ERROR(end);
  *out_job_id = strtoll(job_id, NULL, 10);
  return NULL;
}

/* ---- reading ----------------------------------------------------------------- */

/* Columns: id, cancelled, priority, submitted_at, submitter, targets,
 * models, tasks, tasks_done (ended), trials, trials_done, tasks_started,
 * tasks_failed. */
#define JOB_COLUMNS                                                                                                  \
  "SELECT j.id, j.cancelled, j.priority, extract(epoch FROM j.submitted_at)::bigint, j.submitter, "                 \
  "array_to_string(j.targets, ','), "                                                                               \
  "(SELECT string_agg(m.file_name, ',' ORDER BY m.model_index) FROM hetc_job_models m WHERE m.job_id = j.id), "    \
  "count(t.id), count(t.id) FILTER (WHERE t.state IN ('done', 'failed')), coalesce(sum(t.trials), 0), "         \
  "coalesce(sum(t.trials_done), 0), count(t.id) FILTER (WHERE t.state <> 'queued' OR t.trials_done > 0), "        \
  "count(t.id) FILTER (WHERE t.state = 'failed') "                                                                  \
  "FROM hetc_jobs j LEFT JOIN hetc_tasks t ON t.job_id = j.id "

static void job_from_row(const PGresult *result, int row, hetc_job_info_t *job) {
  memset(job, 0, sizeof(*job));
  job->id = hetc_pg_int(result, row, 0);
  const int cancelled = !strcmp(hetc_pg_text(result, row, 1), "t");
  job->priority = (int32_t)hetc_pg_int(result, row, 2);
  job->submitted_at = hetc_pg_int(result, row, 3);
  snprintf(job->submitter, sizeof(job->submitter), "%s", hetc_pg_text(result, row, 4));
  snprintf(job->targets, sizeof(job->targets), "%s", hetc_pg_text(result, row, 5));
  snprintf(job->models, sizeof(job->models), "%s", hetc_pg_text(result, row, 6));
  job->tasks = (int32_t)hetc_pg_int(result, row, 7);
  job->tasks_done = (int32_t)hetc_pg_int(result, row, 8);
  job->trials = hetc_pg_int(result, row, 9);
  job->trials_done = hetc_pg_int(result, row, 10);
  const long long started = hetc_pg_int(result, row, 11);
  job->tasks_failed = (int32_t)hetc_pg_int(result, row, 12);
  job->state = cancelled                                   ? HETC_JOB_CANCELLED
               : job->tasks_done == job->tasks && job->tasks_failed ? HETC_JOB_FAILED
               : job->tasks_done == job->tasks                  ? HETC_JOB_DONE
               : started > 0                                    ? HETC_JOB_RUNNING
                                                                : HETC_JOB_QUEUED;
}

hetc_status_t hetc_queue_jobs(hetc_queue_t *queue, hetc_job_info_t **out_jobs, int32_t *out_count) {
  *out_jobs = NULL;
  *out_count = 0;
  PGresult *result;
  HETC_RETURN_IF_ERROR(hetc_pg_exec(&queue->pg, "listing jobs", JOB_COLUMNS "GROUP BY j.id ORDER BY j.id DESC", 0,
                                    NULL, &result));
  const int rows = PQntuples(result);
  hetc_job_info_t *jobs = calloc((size_t)rows + 1, sizeof(*jobs));
  if (!jobs) {
    PQclear(result);
    return hetc_status_new(HETC_STATUS_OUT_OF_MEMORY, "listing jobs");
  }
  for (int row = 0; row < rows; ++row) job_from_row(result, row, &jobs[row]);
  PQclear(result);
  *out_jobs = jobs;
  *out_count = rows;
  return NULL;
}

static hetc_status_t read_job(hetc_queue_t *queue, int64_t job_id, hetc_job_info_t *out_job) {
  char id[32];
  snprintf(id, sizeof(id), "%lld", (long long)job_id);
  const char *params[1] = {id};
  PGresult *result;
  HETC_RETURN_IF_ERROR(
      hetc_pg_exec(&queue->pg, "reading a job", JOB_COLUMNS "WHERE j.id = $1 GROUP BY j.id", 1, params, &result));
  const int found = PQntuples(result) == 1;
  if (found) job_from_row(result, 0, out_job);
  PQclear(result);
  return found ? NULL : hetc_status_new(HETC_STATUS_NOT_FOUND, "%s: no job %lld", queue->pg.shown_uri, (long long)job_id);
}

hetc_status_t hetc_queue_job(hetc_queue_t *queue, int64_t job_id, hetc_job_info_t *out_job,
                             hetc_job_task_t **out_tasks, int32_t *out_count) {
  if (out_tasks) *out_tasks = NULL;
  if (out_count) *out_count = 0;
  HETC_RETURN_IF_ERROR(read_job(queue, job_id, out_job));
  if (!out_tasks || !out_count) return NULL;
  char id[32];
  snprintf(id, sizeof(id), "%lld", (long long)job_id);
  const char *params[1] = {id};
  PGresult *result;
  HETC_RETURN_IF_ERROR(hetc_pg_exec(&queue->pg, "reading a job's tasks",
                                    "SELECT t.model_index, t.task_number, t.target, t.workload_key, t.node_count, "
                                    "t.flops, t.trials, t.trials_done, t.best_seconds, t.state, w.name, t.message "
                                    "FROM hetc_tasks t LEFT JOIN hetc_workers w ON w.id = t.worker_id "
                                    "WHERE t.job_id = $1 ORDER BY t.model_index, t.task_number, t.id",
                                    1, params, &result));
  const int rows = PQntuples(result);
  hetc_job_task_t *tasks = calloc((size_t)rows + 1, sizeof(*tasks));
  if (!tasks) {
    PQclear(result);
    return hetc_status_new(HETC_STATUS_OUT_OF_MEMORY, "reading a job's tasks");
  }
  for (int row = 0; row < rows; ++row) {
    hetc_job_task_t *t = &tasks[row];
    t->model_index = (int32_t)hetc_pg_int(result, row, 0);
    t->task_number = (int32_t)hetc_pg_int(result, row, 1);
    snprintf(t->target, sizeof(t->target), "%s", hetc_pg_text(result, row, 2));
    snprintf(t->workload_key, sizeof(t->workload_key), "%s", hetc_pg_text(result, row, 3));
    t->count = (int32_t)hetc_pg_int(result, row, 4);
    t->flops = hetc_pg_double(result, row, 5);
    t->trials = (int32_t)hetc_pg_int(result, row, 6);
    t->trials_done = (int32_t)hetc_pg_int(result, row, 7);
    t->best_seconds = hetc_pg_double(result, row, 8);
    const char *state = hetc_pg_text(result, row, 9);
    const int ended = !strcmp(state, "done") || !strcmp(state, "failed");
    t->state = out_job->state == HETC_JOB_CANCELLED && !ended ? HETC_JOB_CANCELLED
               : !strcmp(state, "done")                        ? HETC_JOB_DONE
               : !strcmp(state, "failed")                      ? HETC_JOB_FAILED
               : !strcmp(state, "claimed")                     ? HETC_JOB_RUNNING
                                                               : HETC_JOB_QUEUED;
    snprintf(t->worker, sizeof(t->worker), "%s", hetc_pg_text(result, row, 10));
    snprintf(t->message, sizeof(t->message), "%s", hetc_pg_text(result, row, 11));
  }
  PQclear(result);
  *out_tasks = tasks;
  *out_count = rows;
  return NULL;
}

hetc_status_t hetc_queue_cancel(hetc_queue_t *queue, int64_t job_id, int32_t *out_state) {
  hetc_job_info_t job;
  HETC_RETURN_IF_ERROR(read_job(queue, job_id, &job));
  if (out_state) *out_state = job.state;
  if (job.state == HETC_JOB_DONE || job.state == HETC_JOB_FAILED || job.state == HETC_JOB_CANCELLED) return NULL;
  char id[32];
  snprintf(id, sizeof(id), "%lld", (long long)job_id);
  const char *params[1] = {id};
  HETC_RETURN_IF_ERROR(
      hetc_pg_exec(&queue->pg, "cancelling a job", "UPDATE hetc_jobs SET cancelled = true WHERE id = $1", 1, params, NULL));
  if (out_state) *out_state = HETC_JOB_CANCELLED;
  return NULL;
}
