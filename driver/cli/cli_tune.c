/* `hetc tune MODEL.json --targets T[,T...]`: tunes every task of a model
 * and keeps the records (tuner.md), ending with a summary table. */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli/cli.h"
#include "compile/compile.h"
#include "tune/interrupt.h"
#include "tune/tuner.h"

#define MAX_TARGETS 16
#define MAX_TASK_NUMBERS 4096

static const char usage_text[] =
    "usage: hetc tune MODEL.json --targets T[,T...] [--records PATH] [--trials N]\n"
    "           [--early-stopping N] [--budget SECONDS] [--search model|random|grid|genetic]\n"
    "           [--batch N] [--no-transfer] [--overrides FILE] [--simulate STORE]\n"
    "           [--check] [--workers N] [--build-timeout S] [--run-timeout S] [--seed N]\n"
    "           [--tasks LIST] [--quiet]\n"
    "  --tasks LIST   only these tasks, numbered as `hetc tasks` prints them: 1,3,5-8\n";

/* Reads "1,3,5-8" into `numbers`; the count, or -1 when `text` is not such
 * a list or holds more than `capacity` numbers. */
static int32_t parse_task_list(const char *text, int32_t *numbers, int32_t capacity) {
  int32_t count = 0;
  const char *p = text;
  for (;;) {
    char *end = NULL;
    long first = strtol(p, &end, 10), last = first;
    if (end == p || first < 1 || first > 1000000) return -1;
    if (*end == '-') {
      p = end + 1;
      last = strtol(p, &end, 10);
      if (end == p || last < first || last > 1000000) return -1;
    }
    for (long n = first; n <= last; ++n) {
      if (count == capacity) return -1;
      numbers[count++] = (int32_t)n;
    }
    if (*end == 0) return count;
    if (*end != ',') return -1;
    p = end + 1;
  }
}

static int usage_error(const char *format, const char *arg) {
  fprintf(stderr, "hetc tune: ");
  fprintf(stderr, format, arg);
  fprintf(stderr, "\n%s", usage_text);
  return HETC_EXIT_USAGE;
}

/* The tuning run ends with graph-level selection over what it measured:
 * the plan is kept in the store for `hetc compile`. */
static hetc_status_t select_plan(const hetc_model_t *model, const char *const *targets, int32_t num_targets,
                                 const hetc_tune_options_t *tuning) {
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

int hetc_cli_tune(int argc, char **argv) {
  hetc_tune_options_t options = hetc_tune_default_options();
  options.progress = stderr;
  const char *model_path = NULL, *targets_arg = NULL;
  static int32_t task_numbers[MAX_TASK_NUMBERS];
  for (int i = 0; i < argc; ++i) {
    const char *arg = argv[i];
    const char *value = i + 1 < argc ? argv[i + 1] : NULL;
    long long n = value ? hetc_cli_parse_count(value) : -1;
    if (!strcmp(arg, "--targets") && value) {
      targets_arg = argv[++i];
    } else if (!strcmp(arg, "--records") && value) {
      options.records_path = argv[++i];
    } else if (!strcmp(arg, "--overrides") && value) {
      options.overrides_path = argv[++i];
    } else if (!strcmp(arg, "--simulate") && value) {
      options.simulate_path = argv[++i];
    } else if (!strcmp(arg, "--trials") && value) {
      if (n < 1 || n > 1000000) return usage_error("--trials wants a count from 1, not '%s'", value);
      options.trials = (int32_t)n;
      ++i;
    } else if (!strcmp(arg, "--early-stopping") && value) {
      if (n < 0 || n > 1000000) return usage_error("--early-stopping wants a count, not '%s'", value);
      options.early_stopping = (int32_t)n;
      ++i;
    } else if (!strcmp(arg, "--batch") && value) {
      if (n < 1 || n > 256) return usage_error("--batch wants 1 to 256, not '%s'", value);
      options.batch = (int32_t)n;
      ++i;
    } else if (!strcmp(arg, "--workers") && value) {
      if (n < 1 || n > 64) return usage_error("--workers wants 1 to 64, not '%s'", value);
      options.measure.build_workers = (int32_t)n;
      ++i;
    } else if (!strcmp(arg, "--seed") && value) {
      if (n < 0) return usage_error("--seed wants a number, not '%s'", value);
      options.seed = (uint64_t)n;
      ++i;
    } else if ((!strcmp(arg, "--build-timeout") || !strcmp(arg, "--run-timeout")) && value) {
      char *end = NULL;
      double seconds = strtod(value, &end);
      if (end == value || *end || !(seconds > 0) || seconds > 86400)
        return usage_error("timeouts want seconds, not '%s'", value);
      *(arg[2] == 'b' ? &options.measure.build_timeout_s : &options.measure.run_timeout_s) = seconds;
      ++i;
    } else if (!strcmp(arg, "--budget") && value) {
      char *end = NULL;
      double seconds = strtod(value, &end);
      if (end == value || *end || !(seconds > 0)) return usage_error("--budget wants seconds, not '%s'", value);
      options.time_budget_s = seconds;
      ++i;
    } else if (!strcmp(arg, "--search") && value) {
      if (!hetc_search_kind_from_name(value, &options.search))
        return usage_error("--search is model, random, grid or genetic, not '%s'", value);
      ++i;
    } else if (!strcmp(arg, "--tasks") && value) {
      options.num_task_numbers = parse_task_list(value, task_numbers, MAX_TASK_NUMBERS);
      if (options.num_task_numbers < 0)
        return usage_error("--tasks wants task numbers such as 1,3,5-8, not '%s'", value);
      options.task_numbers = task_numbers;
      ++i;
    } else if (!strcmp(arg, "--no-transfer")) {
      options.transfer = 0;
    } else if (!strcmp(arg, "--check")) {
      options.measure.trial.check = 1;
    } else if (!strcmp(arg, "--quiet") || !strcmp(arg, "-q")) {
      options.progress = NULL;
    } else if (arg[0] != '-' && !model_path) {
      model_path = arg;
    } else {
      return usage_error("unexpected argument '%s'", arg);
    }
  }
  if (!model_path || !targets_arg) {
    fprintf(stderr, "%s", usage_text);
    return HETC_EXIT_USAGE;
  }
  char *targets_copy = NULL;
  const char *targets[MAX_TARGETS];
  int32_t num_targets = hetc_cli_split_targets("tune", targets_arg, &targets_copy, targets, MAX_TARGETS);
  if (num_targets < 0) {
    free(targets_copy);
    return HETC_EXIT_USAGE;
  }
  hetc_model_t *model = NULL;
  hetc_tuner_t *tuner = NULL;
  hetc_tune_task_result_t *results = NULL;
  int32_t count = 0;
  struct timespec t0, t1;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  /* Ctrl-C stops the run between batches or drops the batch in flight,
   * and says what was kept (tune/interrupt.h). */
  hetc_interrupt_watch();
  hetc_status_t status = hetc_model_load(model_path, &model);
  if (!status && !hetc_interrupt_signal()) status = hetc_tuner_create(&options, &tuner);
  if (!status && !hetc_interrupt_signal())
    status = hetc_tuner_tune_graph(tuner, model, targets, num_targets, &results, &count);
  const int signal_number = hetc_interrupt_signal();
  if (signal_number) {
    report_interrupted(tuner, status, signal_number);
    free(results);
    hetc_tuner_free(tuner); /* stops the workers, releases the claims */
    hetc_model_free(model);
    free(targets_copy);
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
  if (!status && !options.simulate_path) {
    /* Selection cannot stop half-way; its plan is one transaction, so a
     * signal now ends hetc at once with every record kept. */
    char last_words[1024];
    const int64_t kept = hetc_tuner_records_written(tuner);
    snprintf(last_words, sizeof(last_words),
             "\nhetc: interrupted during graph-level selection: the %lld record%s this run measured %s kept in %s; "
             "no plan was kept (hetc compile chooses one)\n",
             (long long)kept, kept == 1 ? "" : "s", kept == 1 ? "is" : "are", hetc_tuner_records_path(tuner));
    hetc_interrupt_set_last_words(last_words);
    status = select_plan(model, targets, num_targets, &options);
  }
  hetc_interrupt_unwatch();
  free(results);
  hetc_tuner_free(tuner);
  hetc_model_free(model);
  free(targets_copy);
  return hetc_cli_report(status);
}
