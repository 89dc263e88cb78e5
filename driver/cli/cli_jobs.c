/* `hetc jobs submit|list|show|cancel|wait`: tuning jobs in a PostgreSQL
 * queue (hetc.h's hetc_queue_*; README.md, "Tuning many models on many
 * machines"). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli/cli.h"

#define MAX_MODELS 64

static const char usage[] =
    "usage: hetc jobs submit MODEL... --targets T[,T...] [--queue URI] [--trials N] [--priority P]\n"
    "                        [--search model|random|grid|genetic] [--seed N] [--input-shape NAME=DIMS[,...]]\n"
    "       hetc jobs list   [--queue URI]\n"
    "       hetc jobs show   JOB [--queue URI]\n"
    "       hetc jobs cancel JOB [--queue URI]\n"
    "       hetc jobs wait   JOB [--queue URI] [--timeout S]\n"
    "The queue is --queue URI (postgresql://USER@HOST:PORT/DATABASE), else $HETC_QUEUE.\n"
    "--trials N: per task and target, 1 to 1000000 (default 200)\n"
    "--priority P: -1000 to 1000, higher first (default 0)\n"
    "--timeout S: give up waiting after S seconds (exit 1; default: wait as long as it takes)\n";

static const char *const state_names[] = {"queued", "running", "done", "cancelled", "failed"};

typedef struct arguments_t {
  const char *queue;
  const char *job; /* show, cancel, wait */
  const char *models[MAX_MODELS];
  int32_t num_models;
  hetc_cli_model_t shapes; /* --input-shape, for every ONNX model */
  hetc_cli_targets_t targets;
  long long trials, priority, seed;
  int search;
  double timeout;
  int64_t job_id;
} arguments_t;

/* 1 when parsed, 0 after printing the error. */
static int parse_arguments(const char *subcommand, int argc, char **argv, arguments_t *out) {
  const int is_submit = !strcmp(subcommand, "submit"), is_wait = !strcmp(subcommand, "wait");
  const int takes_job = !strcmp(subcommand, "show") || !strcmp(subcommand, "cancel") || is_wait;
  memset(out, 0, sizeof(*out));
  out->search = -1;
  char command[32];
  snprintf(command, sizeof(command), "jobs %s", subcommand);
  hetc_cli_args_t args;
  hetc_cli_args_init(&args, command, usage, argc, argv);
  while (hetc_cli_args_next(&args))
    (void)(hetc_cli_text(&args, "--queue", "a PostgreSQL URI", &out->queue) ||
           (is_submit && hetc_cli_targets(&args, "--targets", 16, &out->targets)) ||
           (is_submit && hetc_cli_count(&args, "--trials", 1, 1000000, &out->trials)) ||
           (is_submit && hetc_cli_count(&args, "--priority", -1000, 1000, &out->priority)) ||
           (is_submit && hetc_cli_count(&args, "--seed", 0, INT64_MAX, &out->seed)) ||
           (is_submit && hetc_cli_choice(&args, "--search", "model|random|grid|genetic", &out->search)) ||
           (is_submit && hetc_cli_input_shape(&args, &out->shapes)) ||
           (is_wait && hetc_cli_seconds(&args, "--timeout", 31536000, &out->timeout)) ||
           (takes_job && hetc_cli_positional(&args, "JOB", &out->job)) ||
           (is_submit && out->num_models < MAX_MODELS &&
            hetc_cli_positional(&args, "MODEL", &out->models[out->num_models]) && ++out->num_models));
  if (args.failed) return 0;
  if (is_submit && !out->num_models) hetc_cli_error(&args, "no MODEL given");
  else if (is_submit && !out->targets.count) hetc_cli_error(&args, "no --targets given");
  else if (takes_job && !out->job) hetc_cli_error(&args, "no JOB given");
  long long id = 0;
  if (!args.failed && takes_job && !hetc_cli_parse_whole(out->job, 1, INT64_MAX, &id))
    hetc_cli_error(&args, "JOB: expected a job number from 1 to %lld, got '%s'", (long long)INT64_MAX, out->job);
  out->job_id = id;
  if (!args.failed && !out->queue) {
    out->queue = getenv("HETC_QUEUE");
    if (!out->queue || !*out->queue) hetc_cli_error(&args, "no queue: give --queue URI or set HETC_QUEUE");
  }
  return !args.failed;
}

static int submit(hetc_queue_t *queue, arguments_t *a) {
  hetc_model_t *models[MAX_MODELS] = {0};
  const char *shapes[MAX_MODELS];
  hetc_status_t status = NULL;
  for (int32_t k = 0; !status && k < a->num_models; ++k) {
    a->shapes.path = a->models[k];
    status = hetc_cli_model_load(&a->shapes, &models[k]);
    shapes[k] = a->shapes.input_shape;
  }
  hetc_context_t *context = NULL;
  if (!status) status = hetc_context_create(&context);
  static const char *const searches[] = {"model", "random", "grid", "genetic"};
  const hetc_job_spec_t spec = {
      .struct_size = sizeof(spec),
      .model_paths = a->models,
      .models = (const hetc_model_t *const *)models,
      .input_shapes = shapes,
      .num_models = a->num_models,
      .targets = a->targets.names,
      .num_targets = a->targets.count,
      .trials = (int32_t)a->trials,
      .priority = (int32_t)a->priority,
      .search = a->search >= 0 ? searches[a->search] : NULL,
      .seed = (uint64_t)a->seed,
  };
  int64_t job_id = 0;
  if (!status) status = hetc_queue_submit(context, queue, &spec, &job_id);
  hetc_context_destroy(context);
  for (int32_t k = 0; k < a->num_models; ++k) hetc_model_free(models[k]);
  if (status) return hetc_cli_report(status);
  hetc_job_info_t job;
  status = hetc_queue_job(queue, job_id, &job, NULL, NULL);
  if (status) return hetc_cli_report(status);
  printf("job %lld: %d tasks (task and target pairs), %lld trials, in %s\n", (long long)job_id, (int)job.tasks,
         (long long)job.trials, hetc_queue_uri(queue));
  return HETC_EXIT_OK;
}

static int list(hetc_queue_t *queue) {
  hetc_job_info_t *jobs = NULL;
  int32_t count = 0;
  hetc_status_t status = hetc_queue_jobs(queue, &jobs, &count);
  if (status) return hetc_cli_report(status);
  printf("%6s  %-9s  %-20s  %9s  %15s  %-24s  %s\n", "job", "state", "submitted (UTC)", "tasks", "trials", "models",
         "targets");
  for (int32_t k = 0; k < count; ++k) {
    const hetc_job_info_t *j = &jobs[k];
    char when[32], tasks[32], trials[48];
    hetc_cli_format_time(j->submitted_at, when, sizeof(when));
    snprintf(tasks, sizeof(tasks), "%d/%d", (int)j->tasks_done, (int)j->tasks);
    snprintf(trials, sizeof(trials), "%lld/%lld", (long long)j->trials_done, (long long)j->trials);
    printf("%6lld  %-9s  %-20s  %9s  %15s  %-24s  %s\n", (long long)j->id, state_names[j->state], when, tasks, trials,
           j->models, j->targets);
  }
  if (!count) printf("(no jobs in %s)\n", hetc_queue_uri(queue));
  hetc_free(jobs);
  return HETC_EXIT_OK;
}

/* "D of N tasks done", and ", F failed" when some did: a failed task
 * ended, but is not done. */
static void progress(const hetc_job_info_t *job, char *out, size_t size) {
  const int n =
      snprintf(out, size, "%d of %d tasks done", (int)(job->tasks_done - job->tasks_failed), (int)job->tasks);
  if (job->tasks_failed && n > 0 && (size_t)n < size)
    snprintf(out + n, size - (size_t)n, ", %d failed", (int)job->tasks_failed);
}

static int show(hetc_queue_t *queue, int64_t job_id) {
  hetc_job_info_t job;
  hetc_job_task_t *tasks = NULL;
  int32_t count = 0;
  hetc_status_t status = hetc_queue_job(queue, job_id, &job, &tasks, &count);
  if (status) return hetc_cli_report(status);
  char when[32];
  hetc_cli_format_time(job.submitted_at, when, sizeof(when));
  printf("job %lld: %s, priority %d, submitted %s by %s\n", (long long)job.id, state_names[job.state],
         (int)job.priority, when, job.submitter);
  char tasks_text[64];
  progress(&job, tasks_text, sizeof(tasks_text));
  printf("models: %s; targets: %s; %s; trials %lld/%lld\n", job.models, job.targets, tasks_text,
         (long long)job.trials_done, (long long)job.trials);
  printf("%5s %5s  %-10s %13s %12s %9s  %-9s  %-24s  %s\n", "model", "task", "target", "trials", "best (ms)",
         "GFLOPS", "state", "worker", "workload");
  for (int32_t k = 0; k < count; ++k) {
    const hetc_job_task_t *t = &tasks[k];
    char trials[32], best[32] = "-", gflops[32] = "-";
    snprintf(trials, sizeof(trials), "%d/%d", (int)t->trials_done, (int)t->trials);
    if (t->best_seconds > 0) {
      snprintf(best, sizeof(best), "%.4f", t->best_seconds * 1e3);
      snprintf(gflops, sizeof(gflops), "%.1f", t->flops / t->best_seconds * 1e-9);
    }
    printf("%5d %5d  %-10s %13s %12s %9s  %-9s  %-24s  %s\n", (int)t->model_index, (int)t->task_number, t->target,
           trials, best, gflops, state_names[t->state], *t->worker ? t->worker : "-", t->workload_key);
    if (*t->message) printf("             %s\n", t->message);
  }
  hetc_free(tasks);
  hetc_queue_worker_t *workers = NULL;
  status = hetc_queue_workers(queue, &workers, &count);
  if (status) return hetc_cli_report(status);
  printf("workers: %d\n", (int)count);
  for (int32_t k = 0; k < count; ++k)
    printf("  %-24s  %-20s  heartbeat %5.1f s ago  %s\n", workers[k].name, workers[k].targets,
           workers[k].heartbeat_age_s, workers[k].doing);
  hetc_free(workers);
  return HETC_EXIT_OK;
}

static int cancel(hetc_queue_t *queue, int64_t job_id) {
  int32_t state = HETC_JOB_QUEUED;
  hetc_status_t status = hetc_queue_cancel(queue, job_id, &state);
  if (status) return hetc_cli_report(status);
  if (state == HETC_JOB_DONE) printf("job %lld is done already: nothing to cancel\n", (long long)job_id);
  else if (state == HETC_JOB_FAILED) printf("job %lld failed already: nothing to cancel\n", (long long)job_id);
  else printf("job %lld cancelled\n", (long long)job_id);
  return HETC_EXIT_OK;
}

/* Polls once a second until the job is done (exit 0), failed, cancelled
 * or past the timeout (exit 1). */
static int wait_for(hetc_queue_t *queue, int64_t job_id, double timeout) {
  const time_t start = time(NULL);
  for (;;) {
    hetc_job_info_t job;
    hetc_status_t status = hetc_queue_job(queue, job_id, &job, NULL, NULL);
    if (status) return hetc_cli_report(status);
    if (job.state == HETC_JOB_DONE) {
      printf("job %lld done: %d tasks, %lld trials\n", (long long)job_id, (int)job.tasks, (long long)job.trials_done);
      return HETC_EXIT_OK;
    }
    char tasks_text[64];
    progress(&job, tasks_text, sizeof(tasks_text));
    if (job.state == HETC_JOB_FAILED) {
      fprintf(stderr, "hetc: job %lld failed (%s; hetc jobs show %lld says why)\n", (long long)job_id, tasks_text,
              (long long)job_id);
      return HETC_EXIT_FAILURE;
    }
    if (job.state == HETC_JOB_CANCELLED) {
      fprintf(stderr, "hetc: job %lld was cancelled (%s)\n", (long long)job_id, tasks_text);
      return HETC_EXIT_FAILURE;
    }
    if (timeout > 0 && difftime(time(NULL), start) >= timeout) {
      fprintf(stderr, "hetc: job %lld is still %s after %g s (%s)\n", (long long)job_id, state_names[job.state],
              timeout, tasks_text);
      return HETC_EXIT_FAILURE;
    }
    sleep(1);
  }
}

int hetc_cli_jobs(int argc, char **argv) {
  const char *subcommand = argc > 0 ? argv[0] : "";
  static const char *const known[] = {"submit", "list", "show", "cancel", "wait"};
  int found = 0;
  for (size_t k = 0; k < sizeof(known) / sizeof(known[0]); ++k) found |= !strcmp(subcommand, known[k]);
  if (!found) {
    if (*subcommand) fprintf(stderr, "hetc jobs: unknown subcommand '%s'\n", subcommand);
    else fprintf(stderr, "hetc jobs: no subcommand given\n");
    fputs(usage, stderr);
    return HETC_EXIT_USAGE;
  }
  arguments_t a;
  if (!parse_arguments(subcommand, argc - 1, argv + 1, &a)) return HETC_EXIT_USAGE;
  hetc_queue_t *queue = NULL;
  hetc_status_t status = hetc_queue_open(a.queue, &queue);
  if (status) return hetc_cli_report(status);
  int exit_status;
  if (!strcmp(subcommand, "submit")) exit_status = submit(queue, &a);
  else if (!strcmp(subcommand, "list")) exit_status = list(queue);
  else if (!strcmp(subcommand, "show")) exit_status = show(queue, a.job_id);
  else if (!strcmp(subcommand, "cancel")) exit_status = cancel(queue, a.job_id);
  else exit_status = wait_for(queue, a.job_id, a.timeout);
  hetc_queue_close(queue);
  return exit_status;
}
