/* `hetc tune MODEL.json --targets T[,T...]`: tunes every task of a model
 * and keeps the records (README.md, "Tuning"), ending with a summary table.
 * Several models are several jobs, run at once by child processes whose
 * builds, model updates and measurements take turns through the scheduler
 * of libhetc (hetc_tune_serve_turns). */
#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>

#include "cli/cli.h"

#define MAX_TARGETS 16
#define MAX_TASK_NUMBERS 4096
#define MAX_MODELS 64
#define MAX_JOBS 64 /* models x targets */

static const char usage_text[] =
    "usage: hetc tune MODEL.json|MODEL.onnx [MODEL...] --targets T[,T...] [--records PATH] [--trials N]\n"
    "           [--early-stopping N] [--budget SECONDS] [--search model|random|grid|genetic]\n"
    "           [--batch N] [--no-transfer] [--overrides FILE] [--simulate STORE]\n"
    "           [--check] [--workers N] [--build-timeout S] [--run-timeout S] [--seed N]\n"
    "           [--tasks LIST] [--jobs] [--quiet]\n"
    "  --targets T,...      1 to 16 targets, each once\n"
    "  --trials N           1 to 1000000 (default 200)\n"
    "  --early-stopping N   0 to 1000000 trials without improvement (default 0: never stop early)\n"
    "  --budget SECONDS     above 0, at most 31536000 (default: none)\n"
    "  --batch N            1 to 256 (default 16)\n"
    "  --workers N          1 to 64 parallel builds (default: the online cores)\n"
    "  --build-timeout S    above 0, at most 86400 (default 60)\n"
    "  --run-timeout S      above 0, at most 86400 (default 30)\n"
    "  --seed N             0 to 9223372036854775807 (default 1)\n"
    "  --tasks LIST         only these tasks, numbered as `hetc tasks` prints them: 1,3,5-8\n"
    "  --jobs               tune each model on each target as a job of its own, all at once, the jobs\n"
    "                       taking turns on the devices and cores (so with several models; at most 64)\n"
    HETC_CLI_INPUT_SHAPE_USAGE;

/* Reads "1,3,5-8" into `numbers`: digits only, each number 1 to 1000000
 * and once. The count, or -1 after printing why. */
static int32_t parse_task_list(hetc_cli_args_t *args, const char *text, int32_t *numbers, int32_t capacity) {
  int32_t count = 0;
  for (const char *p = text;;) {
    long first = 0, last = 0;
    const char *start = p;
    while (*p >= '0' && *p <= '9' && first <= 1000000) first = first * 10 + (*p++ - '0');
    last = first;
    if (p > start && *p == '-') {
      const char *range = ++p;
      last = 0;
      while (*p >= '0' && *p <= '9' && last <= 1000000) last = last * 10 + (*p++ - '0');
      if (p == range) last = 0;
    }
    if (p == start || first < 1 || first > 1000000 || last < first || last > 1000000 || (*p && *p != ',')) {
      hetc_cli_error(args, "--tasks: expected task numbers from 1 to 1000000 such as 1,3,5-8, got '%s'", text);
      return -1;
    }
    for (long n = first; n <= last; ++n) {
      for (int32_t k = 0; k < count; ++k) {
        if (numbers[k] == n) {
          hetc_cli_error(args, "--tasks: task %ld is listed twice in '%s'", n, text);
          return -1;
        }
      }
      if (count == capacity) {
        hetc_cli_error(args, "--tasks: at most %d tasks, got more in '%s'", capacity, text);
        return -1;
      }
      numbers[count++] = (int32_t)n;
    }
    if (!*p) return count;
    ++p;
  }
}

/* The tuning run ends with graph-level selection over what it measured:
 * the plan is kept in the store for `hetc compile`. */
static hetc_status_t select_plan(const hetc_model_t *model, const char *const *targets, int32_t num_targets,
                                 const hetc_tuner_options_t *tuning) {
  hetc_context_t *context = NULL;
  hetc_compile_report_t report;
  const hetc_compile_options_t options = {.targets = targets, .num_targets = num_targets,
                                          .progress = tuning->progress != NULL,
                                          .records_path = tuning->records_path};
  if (tuning->progress) fprintf(tuning->progress, "graph-level selection: costing every candidate in the model\n");
  hetc_status_t status = hetc_context_create(&context);
  if (!status) status = hetc_compile_select(context, model, &options, &report);
  if (!status) {
    printf("graph-level selection: expected latency %.3f ms", report.predicted_seconds * 1e3);
    if (report.default_seconds > 0)
      printf(" (with every kernel at its template's default: %.3f ms)", report.default_seconds * 1e3);
    printf("; %s (%.1f s)\n",
           report.selection_stored ? "kept in the records for hetc compile" : "not kept, hetc compile costs it again",
           report.build_seconds);
  }
  hetc_context_destroy(context);
  return status;
}

static void print_summary(const hetc_tune_task_result_t *results, int32_t count, double seconds, double overhead) {
  printf("\n%4s  %-6s  %-24s  %10s  %6s  %7s  %6s  %s\n", "task", "target", "template", "GFLOPS", "peak",
         "trials", "to 95%", "workload");
  double model_seconds = 0;
  for (int32_t i = 0; i < count; ++i) {
    const hetc_tune_task_result_t *r = &results[i];
    printf("%4d  %-6s  %-24s  %10.1f  %5.1f%%  %7d  %6d  %s\n", r->task_number, r->target,
           r->template_name[0] ? r->template_name : "-", r->best_gflops, 100 * r->peak_fraction, r->trials,
           r->trials_to_95, r->workload_key);
    model_seconds += r->best_seconds * r->count;
  }
  printf("tuned %d tasks in %.1f s (tuner overhead %.1f s, %.1f%%); tuned kernels sum to %.3f ms per inference\n",
         count, seconds, overhead, seconds > 0 ? 100 * overhead / seconds : 0, model_seconds * 1e3);
}

/* Says what an interrupted run kept. Every batch written before is in the
 * store: each is one transaction. */
static void report_interrupted(const hetc_tuner_t *tuner, hetc_status_t status, int signal_number) {
  hetc_status_free(status);
  const int64_t kept = hetc_tuner_records_written(tuner);
  const int32_t dropped = hetc_tuner_dropped(tuner);
  fprintf(stderr, "hetc: interrupted (%s): the %lld record%s this run measured %s kept in %s", strsignal(signal_number),
          (long long)kept, kept == 1 ? "" : "s", kept == 1 ? "is" : "are",
          tuner ? hetc_tuner_records_path(tuner) : "the store");
  if (dropped > 0)
    fprintf(stderr, "; the batch being measured (%d candidate%s) was dropped, none of it recorded", dropped,
            dropped == 1 ? "" : "s");
  fprintf(stderr, "; the same command resumes the run\n");
}

/* Tunes one model (model->path) and, when `select`, selects its plan: the
 * exit status. */
static int tune_model(hetc_cli_model_t *model_arg, hetc_tuner_options_t *options_in, const hetc_cli_targets_t *targets,
                      int select) {
  hetc_tuner_options_t options = *options_in;
  hetc_model_t *model = NULL;
  hetc_tuner_t *tuner = NULL;
  hetc_tune_task_result_t *results = NULL;
  int32_t count = 0;
  struct timespec t0, t1;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  /* Ctrl-C stops the run between batches or drops the batch in flight,
   * and says what was kept. */
  hetc_interrupt_watch();
  hetc_status_t status = hetc_cli_model_load(model_arg, &model);
  /* The targets and tasks first: a run refused for them opens no store. */
  if (!status) status = hetc_tune_check(model, targets->names, targets->count, &options);
  if (!status && !hetc_interrupt_signal()) status = hetc_tuner_open(&options, &tuner);
  if (!status && !hetc_interrupt_signal())
    status = hetc_tuner_tune_graph(tuner, model, targets->names, targets->count, &results, &count);
  const int signal_number = hetc_interrupt_signal();
  if (signal_number) {
    report_interrupted(tuner, status, signal_number);
    hetc_free(results);
    hetc_tuner_free(tuner); /* stops the workers, releases the claims */
    hetc_model_free(model);
    /* Ends as the signal would have: exit status 128 + its number (130
     * for Ctrl-C), as the shell and a parent's waitpid expect. */
    hetc_interrupt_unwatch();
    raise(signal_number);
    return 128 + signal_number;
  }
  clock_gettime(CLOCK_MONOTONIC, &t1);
  if (!status)
    print_summary(results, count, (double)(t1.tv_sec - t0.tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0.tv_nsec),
                  hetc_tuner_overhead_seconds(tuner));
  if (!status && !options.simulate_path && select) {
    /* Selection cannot stop half-way; its plan is one transaction, so a
     * signal now ends hetc at once with every record kept. */
    char last_words[1024];
    const int64_t kept = hetc_tuner_records_written(tuner);
    snprintf(last_words, sizeof(last_words),
             "\nhetc: interrupted during graph-level selection: the %lld record%s this run measured %s kept in %s; "
             "no plan was kept (hetc compile chooses one)\n",
             (long long)kept, kept == 1 ? "" : "s", kept == 1 ? "is" : "are", hetc_tuner_records_path(tuner));
    hetc_interrupt_set_last_words(last_words);
    status = select_plan(model, targets->names, targets->count, &options);
  }
  hetc_interrupt_unwatch();
  hetc_free(results);
  hetc_tuner_free(tuner);
  hetc_model_free(model);
  return hetc_cli_report(status);
}

/* A job's progress stream: each line whole on stderr, after "[NAME] ". */
typedef struct prefixed_t {
  char prefix[96];
  char line[4096];
  size_t length;
} prefixed_t;

static void prefixed_flush(prefixed_t *p) {
  if (!p->length) return;
  char out[4200];
  const int n = snprintf(out, sizeof(out), "%s%.*s", p->prefix, (int)p->length, p->line);
  if (write(2, out, (size_t)(n < (int)sizeof(out) ? n : (int)sizeof(out) - 1)) < 0) { /* stderr is gone */
  }
  p->length = 0;
}

static ssize_t prefixed_write(void *cookie, const char *data, size_t size) {
  prefixed_t *p = cookie;
  for (size_t k = 0; k < size; ++k) {
    if (p->length < sizeof(p->line)) p->line[p->length++] = data[k];
    if (data[k] == '\n') prefixed_flush(p);
  }
  return (ssize_t)size;
}

static int prefixed_close(void *cookie) {
  prefixed_flush(cookie);
  return 0;
}

static const char *file_name(const char *path) {
  const char *slash = strrchr(path, '/');
  return slash ? slash + 1 : path;
}

/* A job, in a child process: one model on one target. Its summary goes to
 * `out` (the parent prints it after every job), its progress to stderr
 * with "[MODEL TARGET] " before each line, its turns through `socket`. */
static int run_job(hetc_cli_model_t *model_arg, const char *path, hetc_tuner_options_t *options,
                   const char *target, FILE *out, int socket) {
  char fd_text[16];
  snprintf(fd_text, sizeof(fd_text), "%d", socket);
  setenv(HETC_TUNE_TURNS_FD, fd_text, 1);
  fflush(stdout);
  if (dup2(fileno(out), 1) < 0) return HETC_EXIT_FAILURE;
  static prefixed_t prefix;
  snprintf(prefix.prefix, sizeof(prefix.prefix), "[%s %s] ", file_name(path), target);
  const cookie_io_functions_t functions = {.write = prefixed_write, .close = prefixed_close};
  FILE *progress = options->progress ? fopencookie(&prefix, "w", functions) : NULL;
  if (progress) options->progress = progress;
  model_arg->path = path;
  static hetc_cli_targets_t one;
  one.names[0] = target;
  one.count = 1;
  const int code = tune_model(model_arg, options, &one, 0);
  fflush(stdout);
  if (progress) fclose(progress);
  return code;
}

/* Tunes every model on every target at once, each pair a job
 * (hetc_tune_serve_turns), prints each job's summary in the order given,
 * then selects each model's plan over all the targets. The exit status is
 * the first failed job's. */
static int tune_jobs(hetc_cli_model_t *model_arg, const char *const *paths, int32_t num_paths,
                     hetc_tuner_options_t *options, const hetc_cli_targets_t *targets) {
  const int32_t count = num_paths * targets->count;
  int sockets[MAX_JOBS], pids[MAX_JOBS], statuses[MAX_JOBS];
  FILE *outs[MAX_JOBS];
  struct timespec t0, t1;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  /* The targets, every job's, before any job starts: a run refused for
   * them starts none, nor creates the store. A model that does not load,
   * or lacks a task --tasks names, fails its own job (before it opens the
   * store) while the others go on. */
  hetc_status_t checked = hetc_tune_check(NULL, targets->names, targets->count, options);
  if (checked) return hetc_cli_report(checked);
  int32_t started = 0;
  for (; started < count; ++started) {
    const char *path = paths[started / targets->count], *target = targets->names[started % targets->count];
    int pair[2];
    outs[started] = tmpfile();
    if (!outs[started] || socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, pair) != 0) {
      fprintf(stderr, "hetc: cannot start the job of %s on %s: %s\n", path, target, strerror(errno));
      if (outs[started]) fclose(outs[started]);
      break;
    }
    fflush(NULL);
    const pid_t pid = fork();
    if (pid == 0) {
      close(pair[0]);
      for (int32_t k = 0; k < started; ++k) close(sockets[k]);
      _exit(run_job(model_arg, path, options, target, outs[started], pair[1]));
    }
    close(pair[1]);
    if (pid < 0) {
      fprintf(stderr, "hetc: cannot start the job of %s on %s: %s\n", path, target, strerror(errno));
      close(pair[0]);
      fclose(outs[started]);
      break;
    }
    sockets[started] = pair[0];
    pids[started] = (int)pid;
  }
  /* Ctrl-C reaches the jobs too: each stops and says what it kept, and
   * this process goes on until they have, to print their summaries. */
  hetc_interrupt_watch();
  hetc_status_t status = started ? hetc_tune_serve_turns(sockets, pids, started, statuses) : NULL;
  const int signal_number = hetc_interrupt_signal();
  hetc_interrupt_unwatch();
  clock_gettime(CLOCK_MONOTONIC, &t1);
  int code = started < count ? HETC_EXIT_FAILURE : 0;
  int failed[MAX_MODELS] = {0};
  for (int32_t k = 0; k < started; ++k) {
    printf("%s== %s on %s ==\n", k ? "\n" : "", paths[k / targets->count], targets->names[k % targets->count]);
    fflush(stdout);
    rewind(outs[k]);
    char buffer[8192];
    for (size_t n; (n = fread(buffer, 1, sizeof(buffer), outs[k])) > 0;) fwrite(buffer, 1, n, stdout);
    fclose(outs[k]);
    const int job_code = status                  ? HETC_EXIT_FAILURE
                         : WIFEXITED(statuses[k]) ? WEXITSTATUS(statuses[k])
                                                  : 128 + WTERMSIG(statuses[k]);
    if (job_code) failed[k / targets->count] = 1;
    if (job_code && !code) code = job_code;
  }
  printf("\ntuned %d model%s on %d target%s as %d jobs at once in %.1f s\n", (int)num_paths, num_paths == 1 ? "" : "s",
         (int)targets->count, targets->count == 1 ? "" : "s", (int)started,
         (double)(t1.tv_sec - t0.tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0.tv_nsec));
  if (status) return hetc_cli_report(status);
  if (signal_number) return 128 + signal_number;
  /* Each model's plan, over every target's records, once its jobs are done. */
  for (int32_t m = 0; m < num_paths && !options->simulate_path && started == count; ++m) {
    if (failed[m]) continue;
    printf("%s: ", file_name(paths[m]));
    fflush(stdout);
    model_arg->path = paths[m];
    hetc_model_t *model = NULL;
    hetc_status_t selected = hetc_cli_model_load(model_arg, &model);
    if (!selected) selected = select_plan(model, targets->names, targets->count, options);
    hetc_model_free(model);
    if (selected) {
      printf("no plan kept\n");
      const int select_code = hetc_cli_report(selected);
      if (!code) code = select_code;
    }
  }
  return code;
}

int hetc_cli_tune(int argc, char **argv) {
  hetc_tuner_options_t options = {.records_path = NULL}; /* 0: the library's defaults */
  const char *tasks_arg = NULL;
  static int32_t task_numbers[MAX_TASK_NUMBERS];
  long long trials = 0, early_stopping = 0, batch = 0, workers = 0, seed = 1;
  int search = -1, no_transfer = 0, check = 0, quiet = 0, jobs = 0;
  hetc_cli_targets_t targets = {.text = NULL};
  hetc_cli_model_t model_arg = {0};
  const char *paths[MAX_MODELS + 1] = {NULL};
  int32_t num_paths = 0;
  hetc_cli_args_t args;
  hetc_cli_args_init(&args, "tune", usage_text, argc, argv);
  while (hetc_cli_args_next(&args))
    (void)(hetc_cli_targets(&args, "--targets", MAX_TARGETS, &targets) ||
           hetc_cli_text(&args, "--records", "a path", &options.records_path) ||
           hetc_cli_text(&args, "--overrides", "a path", &options.overrides_path) ||
           hetc_cli_text(&args, "--simulate", "a path", &options.simulate_path) ||
           hetc_cli_count(&args, "--trials", 1, 1000000, &trials) ||
           hetc_cli_count(&args, "--early-stopping", 0, 1000000, &early_stopping) ||
           hetc_cli_count(&args, "--batch", 1, 256, &batch) || hetc_cli_count(&args, "--workers", 1, 64, &workers) ||
           hetc_cli_count(&args, "--seed", 0, INT64_MAX, &seed) ||
           hetc_cli_seconds(&args, "--build-timeout", 86400, &options.build_timeout_s) ||
           hetc_cli_seconds(&args, "--run-timeout", 86400, &options.run_timeout_s) ||
           hetc_cli_seconds(&args, "--budget", 31536000, &options.time_budget_s) ||
           hetc_cli_choice(&args, "--search", "model|random|grid|genetic", &search) ||
           hetc_cli_text(&args, "--tasks", "task numbers such as 1,3,5-8", &tasks_arg) ||
           hetc_cli_flag(&args, "--no-transfer", &no_transfer) || hetc_cli_flag(&args, "--check", &check) ||
           hetc_cli_flag(&args, "--quiet|-q", &quiet) || hetc_cli_flag(&args, "--jobs", &jobs) || hetc_cli_input_shape(&args, &model_arg) ||
           (num_paths <= MAX_MODELS && hetc_cli_positional(&args, "MODEL.json", &paths[num_paths]) && ++num_paths));
  if (tasks_arg && !args.failed) {
    options.num_task_numbers = parse_task_list(&args, tasks_arg, task_numbers, MAX_TASK_NUMBERS);
    options.task_numbers = task_numbers;
  }
  if (num_paths > MAX_MODELS) hetc_cli_error(&args, "at most %d models at once", MAX_MODELS);
  if (!num_paths && !args.failed) hetc_cli_error(&args, "no MODEL.json given");
  if (!args.failed && targets.text && (num_paths > 1 || jobs) && num_paths * targets.count > MAX_JOBS)
    hetc_cli_error(&args, "at most %d jobs (models x targets) at once, got %d", MAX_JOBS,
                   (int)(num_paths * targets.count));
  if (!targets.text) hetc_cli_error(&args, "--targets is required");
  if (args.failed) return HETC_EXIT_USAGE;
  static const char *const search_names[] = {"model", "random", "grid", "genetic"};
  options.search = search >= 0 ? search_names[search] : NULL;
  options.trials = (int32_t)trials;
  options.early_stopping = (int32_t)early_stopping;
  options.batch = (int32_t)batch;
  options.build_workers = (int32_t)workers;
  options.seed = (uint64_t)seed;
  options.no_transfer = no_transfer;
  options.check = check;
  options.progress = quiet ? NULL : stderr;
  if (num_paths > 1 || jobs) return tune_jobs(&model_arg, paths, num_paths, &options, &targets);
  model_arg.path = paths[0];
  return tune_model(&model_arg, &options, &targets, 1);
}
