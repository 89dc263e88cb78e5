/* Timing many built kernels in rounds (kernel_rounds.h). */
#include "kernel/kernel_rounds.h"

#include <stdlib.h>
#include <string.h>

#include "common/clock.h"
#include "common/interrupt.h"
#include "graph/graph.h"
#include "kernel/kernel_args.h"
#include "kernel/plugin_calls.h"

typedef struct round_job_t {
  hetc_plugin_entry_t *entry;
  hetc_plugin_artifact_t *artifact;
  hetc_kernel_args_t args; /* zeros: no NaNs or denormals to slow a kernel down */
  int32_t group;           /* -1: none */
} round_job_t;

struct hetc_kernel_rounds_t {
  int32_t count, capacity;
  round_job_t *jobs;
};

hetc_status_t hetc_kernel_rounds_create(hetc_kernel_rounds_t **out_rounds) {
  *out_rounds = calloc(1, sizeof(hetc_kernel_rounds_t));
  return *out_rounds ? NULL : hetc_status_new(HETC_STATUS_OUT_OF_MEMORY, "timing kernels");
}

static void job_release(round_job_t *job) {
  hetc_kernel_args_release(&job->args);
  if (job->artifact) hetc_entry_artifact_release(job->entry, job->artifact);
}

void hetc_kernel_rounds_free(hetc_kernel_rounds_t *rounds) {
  if (!rounds) return;
  for (int32_t j = 0; j < rounds->count; ++j) job_release(&rounds->jobs[j]);
  free(rounds->jobs);
  free(rounds);
}

int32_t hetc_kernel_rounds_count(const hetc_kernel_rounds_t *rounds) { return rounds->count; }

hetc_plugin_artifact_t *hetc_kernel_rounds_take_artifact(hetc_kernel_rounds_t *rounds, int32_t job) {
  hetc_plugin_artifact_t *artifact = rounds->jobs[job].artifact;
  rounds->jobs[job].artifact = NULL;
  return artifact;
}

hetc_status_t hetc_kernel_rounds_add(hetc_kernel_rounds_t *rounds, hetc_plugin_entry_t *entry, int32_t device_index,
                                     const hetc_plugin_workload_t *workload, hetc_plugin_artifact_t *artifact,
                                     int32_t *out_job) {
  round_job_t job;
  memset(&job, 0, sizeof(job));
  job.entry = entry;
  job.artifact = artifact;
  job.group = -1;
  hetc_status_t status = hetc_kernel_args_create(entry, device_index, workload, artifact, NULL, NULL, &job.args);
  if (status) status = hetc_status_annotate(status, "timing kernels");
  if (!status && rounds->count == rounds->capacity) {
    int32_t capacity = rounds->capacity ? 2 * rounds->capacity : 64;
    round_job_t *jobs = realloc(rounds->jobs, sizeof(round_job_t) * (size_t)capacity);
    if (!jobs) status = hetc_status_new(HETC_STATUS_OUT_OF_MEMORY, "timing kernels");
    else rounds->jobs = jobs, rounds->capacity = capacity;
  }
  if (status) {
    job_release(&job);
    return status;
  }
  rounds->jobs[rounds->count] = job;
  *out_job = rounds->count++;
  return NULL;
}

void hetc_kernel_rounds_set_group(hetc_kernel_rounds_t *rounds, int32_t job, int32_t group) {
  rounds->jobs[job].group = group;
}

/* Whether kernel j took more than HETC_KERNEL_ROUNDS_SLOW times the fastest
 * of its group in the warm-up round. */
static int slower_than_its_group(const hetc_kernel_rounds_t *rounds, int32_t j, const double *warm_up,
                                 const hetc_status_t *errors) {
  const int32_t group = rounds->jobs[j].group;
  if (group < 0 || errors[j]) return 0;
  for (int32_t other = 0; other < rounds->count; ++other)
    if (rounds->jobs[other].group == group && !errors[other] && warm_up[j] > HETC_KERNEL_ROUNDS_SLOW * warm_up[other])
      return 1;
  return 0;
}

/* After the warm-up round: marks done every kernel still slower than its
 * group allows after a second run. One run can be a page fault's or a
 * scheduler's hiccup (a group's fastest once took 6 ms in warm-up and 1.2
 * after), and retiring the fastest by mistake loses the choice the rounds
 * are for; the second run costs only the kernels about to be dropped. */
static void retire_slow_kernels(hetc_kernel_rounds_t *rounds, double *warm_up, hetc_status_t *errors,
                                unsigned char *done) {
  for (int32_t j = 0; j < rounds->count; ++j) {
    if (!slower_than_its_group(rounds, j, warm_up, errors)) continue;
    const double start = hetc_now_seconds();
    errors[j] = hetc_kernel_rounds_run_one(rounds, j);
    const double again = hetc_now_seconds() - start;
    if (again < warm_up[j]) warm_up[j] = again;
  }
  for (int32_t j = 0; j < rounds->count; ++j) done[j] = slower_than_its_group(rounds, j, warm_up, errors);
}

hetc_status_t hetc_kernel_rounds_run_one(hetc_kernel_rounds_t *rounds, int32_t job) {
  const round_job_t *j = &rounds->jobs[job];
  return hetc_kernel_args_run(&j->args, j->artifact);
}

hetc_status_t hetc_kernel_rounds_time(hetc_kernel_rounds_t *rounds, int32_t timed, double *out_seconds,
                                      hetc_status_t *out_errors) {
  const int32_t n = rounds->count;
  double *samples = malloc(sizeof(double) * ((size_t)n * (size_t)timed + 1));
  double *warm_up = malloc(sizeof(double) * ((size_t)n + 1));
  unsigned char *done = calloc((size_t)n + 1, 1);
  int32_t *taken = calloc((size_t)n + 1, sizeof(int32_t));
  hetc_status_t status = NULL;
  if (!samples || !warm_up || !done || !taken) status = hetc_status_new(HETC_STATUS_OUT_OF_MEMORY, "timing kernels");
  for (int32_t j = 0; j < n; ++j) out_errors[j] = NULL;
  for (int32_t r = -1; !status && r < timed; ++r) {
    status = hetc_interrupt_status();
    for (int32_t j = 0; !status && j < n; ++j) {
      if (out_errors[j] || done[j]) continue;
      const double start = hetc_now_seconds();
      out_errors[j] = hetc_kernel_rounds_run_one(rounds, j);
      const double seconds = hetc_now_seconds() - start;
      if (r < 0) warm_up[j] = seconds;
      else samples[(size_t)j * (size_t)timed + (size_t)taken[j]++] = seconds;
    }
    if (!status && r < 0) retire_slow_kernels(rounds, warm_up, out_errors, done);
  }
  for (int32_t j = 0; !status && j < n; ++j)
    if (done[j]) samples[(size_t)j * (size_t)timed + (size_t)taken[j]++] = warm_up[j];
  for (int32_t j = 0; !status && j < n; ++j) {
    double *mine = samples + (size_t)j * (size_t)timed;
    hetc_sort_doubles(mine, (size_t)taken[j]);
    out_seconds[j] = out_errors[j] || !taken[j] ? -1 : mine[taken[j] / 2];
  }
  free(samples);
  free(warm_up);
  free(done);
  free(taken);
  return status;
}
