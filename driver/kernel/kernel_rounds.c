/* Timing many built kernels in rounds (kernel_rounds.h). */
#include "kernel/kernel_rounds.h"

#include <stdlib.h>
#include <string.h>

#include "common/clock.h"
#include "common/interrupt.h"
#include "graph/graph.h"
#include "reference/reference.h"

#define MAX_ARGS (HETC_MAX_NODE_INPUTS + 8 + 2)

typedef struct round_job_t {
  hetc_plugin_entry_t *entry;
  hetc_plugin_artifact_t *artifact;
  hetc_plugin_buffer_t *args[MAX_ARGS];
  int32_t num_args;
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
  for (int32_t a = 0; a < job->num_args; ++a)
    if (job->args[a]) job->entry->plugin->buffer_free(job->entry->instance, job->args[a]);
  if (job->artifact) job->entry->plugin->artifact_release(job->entry->instance, job->artifact);
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

static hetc_status_t add_buffer(round_job_t *job, int32_t device_index, uint64_t bytes) {
  if (job->num_args == MAX_ARGS) return hetc_status_new(HETC_STATUS_INTERNAL, "timing kernels: too many arguments");
  const hetc_plugin_t *p = job->entry->plugin;
  if (!bytes) bytes = 64;
  hetc_plugin_buffer_t **buffer = &job->args[job->num_args];
  HETC_RETURN_IF_ERROR(p->buffer_alloc(job->entry->instance, device_index, bytes, buffer));
  ++job->num_args;
  /* Zeros: no NaNs or denormals to slow a kernel down, and a lazy
   * allocator's first touch happens here, not in a timed run. */
  void *zeros = calloc(1, bytes);
  if (!zeros) return hetc_status_new(HETC_STATUS_OUT_OF_MEMORY, "timing kernels");
  hetc_status_t status = p->buffer_write(job->entry->instance, *buffer, 0, zeros, bytes);
  free(zeros);
  return status;
}

static uint64_t bytes_in(hetc_plugin_tensor_t tensor, hetc_plugin_layout_t layout) {
  tensor.layout = layout;
  return (uint64_t)hetc_layout_element_count(&tensor) * sizeof(float);
}

hetc_status_t hetc_kernel_rounds_add(hetc_kernel_rounds_t *rounds, hetc_plugin_entry_t *entry, int32_t device_index,
                                     const hetc_plugin_workload_t *workload, hetc_plugin_artifact_t *artifact,
                                     int32_t *out_job) {
  round_job_t job;
  memset(&job, 0, sizeof(job));
  job.entry = entry;
  job.artifact = artifact;
  const hetc_plugin_artifact_info_t *info = entry->plugin->artifact_info(artifact);
  hetc_status_t status = NULL;
  if (info->num_inputs != workload->num_inputs)
    status = hetc_status_new(HETC_STATUS_INTERNAL, "timing kernels: the artifact reads %d inputs, the workload has %d",
                             info->num_inputs, workload->num_inputs);
  for (int32_t i = 0; !status && i < info->num_inputs; ++i)
    status = add_buffer(&job, device_index, bytes_in(workload->inputs[i], info->input_layouts[i]));
  for (int32_t p = 0; !status && p < info->num_params; ++p) status = add_buffer(&job, device_index, info->param_bytes[p]);
  if (!status) status = add_buffer(&job, device_index, bytes_in(workload->output, info->output_layout));
  if (!status && info->workspace_bytes) status = add_buffer(&job, device_index, info->workspace_bytes);
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

hetc_status_t hetc_kernel_rounds_run_one(hetc_kernel_rounds_t *rounds, int32_t job) {
  const round_job_t *j = &rounds->jobs[job];
  return j->entry->plugin->run(j->entry->instance, j->artifact, j->args, j->num_args);
}

hetc_status_t hetc_kernel_rounds_time(hetc_kernel_rounds_t *rounds, int32_t timed, double *out_seconds,
                                      hetc_status_t *out_errors) {
  const int32_t n = rounds->count;
  double *samples = malloc(sizeof(double) * ((size_t)n * (size_t)timed + 1));
  if (!samples) return hetc_status_new(HETC_STATUS_OUT_OF_MEMORY, "timing kernels");
  for (int32_t j = 0; j < n; ++j) out_errors[j] = NULL;
  for (int32_t r = -1; r < timed; ++r) {
    hetc_status_t stop = hetc_interrupt_status();
    if (stop) {
      free(samples);
      return stop;
    }
    for (int32_t j = 0; j < n; ++j) {
      if (out_errors[j]) continue;
      const double start = hetc_now_seconds();
      out_errors[j] = hetc_kernel_rounds_run_one(rounds, j);
      if (r >= 0) samples[(size_t)j * (size_t)timed + (size_t)r] = hetc_now_seconds() - start;
    }
  }
  for (int32_t j = 0; j < n; ++j) {
    double *mine = samples + (size_t)j * (size_t)timed;
    hetc_sort_doubles(mine, (size_t)timed);
    out_seconds[j] = out_errors[j] ? -1 : mine[timed / 2];
  }
  free(samples);
  return NULL;
}
