#include "tune/trial.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/clock.h"
#include "common/thread_pool.h"
#include "graph/graph.h"
#include "kernel/kernel_args.h"
#include "kernel/plugin_calls.h"
#include "reference/reference.h"

#define MAX_TENSORS 8  /* conv2d/dense: input, residual; weight, bias */
#define MAX_NUMBER (1 << 20)

hetc_trial_options_t hetc_trial_default_options(void) {
  hetc_trial_options_t options = {1, 3, 20.0, 1, 0, 1e-4, 1};
  return options;
}

void hetc_trial_result_clear(hetc_trial_result_t *result) {
  free(result->message);
  memset(result, 0, sizeof(*result));
}

hetc_record_error_t hetc_trial_build_error(int32_t code, int32_t device_kind) {
  switch (code) {
    case HETC_PLUGIN_STATUS_INVALID_ARGUMENT:
    case HETC_PLUGIN_STATUS_UNSUPPORTED: return HETC_RECORD_INSTANTIATION;
    case HETC_PLUGIN_STATUS_DEVICE_LIMITS: return HETC_RECORD_DEVICE_LIMITS;
    case HETC_PLUGIN_STATUS_BUILD_FAILED:
      return device_kind == HETC_PLUGIN_DEVICE_CPU ? HETC_RECORD_COMPILE_HOST
                                                   : HETC_RECORD_COMPILE_DEVICE;
    case HETC_PLUGIN_STATUS_TIMEOUT: return HETC_RECORD_BUILD_TIMEOUT;
    default: return HETC_RECORD_UNKNOWN;
  }
}

/* Uniform in [-1, 1), one independent stream per tensor so that the
 * reference and the trial see the same data whatever order they fill in. */
static void fill_random(float *data, int64_t count, uint64_t seed, int32_t tensor) {
  uint64_t state = (seed * UINT64_C(0x9E3779B97F4A7C15)) ^ ((uint64_t)(tensor + 1) << 32) ^ 0x5DEECE66DULL;
  for (int64_t i = 0; i < count; ++i) {
    state ^= state >> 12;
    state ^= state << 25;
    state ^= state >> 27;
    data[i] = (float)((double)((state * UINT64_C(0x2545F4914F6CDD1D)) >> 40) / 8388608.0 - 1.0);
  }
}

static int32_t param_count_of(const hetc_plugin_workload_t *w) {
  if (!hetc_workload_is_tunable(w)) return 0;
  return 1 + (w->epilogue.has_bias ? 1 : 0);
}

static hetc_plugin_tensor_t row_major(hetc_plugin_tensor_t t) {
  t.layout = (hetc_plugin_layout_t){HETC_PLUGIN_LAYOUT_ROW_MAJOR, 0};
  return t;
}

/* The logical random data of every activation input and param. */
typedef struct logical_data_t {
  int32_t num_inputs, num_params;
  float *inputs[MAX_TENSORS];
  float *params[MAX_TENSORS];
} logical_data_t;

static void logical_data_free(logical_data_t *d) {
  for (int32_t i = 0; i < MAX_TENSORS; ++i) {
    free(d->inputs[i]);
    free(d->params[i]);
  }
}

static hetc_status_t logical_data_make(const hetc_plugin_workload_t *w, uint64_t seed, logical_data_t *d) {
  memset(d, 0, sizeof(*d));
  if (w->num_inputs < 1 || w->num_inputs > MAX_TENSORS / 2)
    return hetc_status_new(HETC_STATUS_UNSUPPORTED, "trial: %d activation inputs", w->num_inputs);
  d->num_inputs = w->num_inputs;
  d->num_params = param_count_of(w);
  for (int32_t i = 0; i < d->num_inputs; ++i) {
    hetc_plugin_tensor_t t = row_major(w->inputs[i]);
    int64_t count = hetc_layout_element_count(&t);
    if (count < 1) return hetc_status_new(HETC_STATUS_INVALID_ARGUMENT, "trial: input %d is malformed", i);
    if (!(d->inputs[i] = malloc(sizeof(float) * (size_t)count)))
      return hetc_status_new(HETC_STATUS_OUT_OF_MEMORY, "trial inputs");
    fill_random(d->inputs[i], count, seed, i);
  }
  for (int32_t k = 0; k < d->num_params; ++k) {
    int64_t count = hetc_kernel_param_elements(w, k);
    if (!(d->params[k] = malloc(sizeof(float) * (size_t)count)))
      return hetc_status_new(HETC_STATUS_OUT_OF_MEMORY, "trial params");
    fill_random(d->params[k], count, seed, 100 + k);
  }
  return NULL;
}

static hetc_plugin_workload_t logical_workload(const hetc_plugin_workload_t *w, hetc_plugin_tensor_t *types) {
  hetc_plugin_workload_t logical = *w;
  for (int32_t i = 0; i < w->num_inputs; ++i) types[i] = row_major(w->inputs[i]);
  logical.inputs = types;
  logical.output = row_major(w->output);
  return logical;
}

hetc_status_t hetc_trial_reference(const hetc_plugin_workload_t *workload, uint64_t seed, float **out_output) {
  *out_output = NULL;
  logical_data_t data;
  hetc_status_t status = logical_data_make(workload, seed, &data);
  hetc_plugin_tensor_t types[MAX_TENSORS];
  hetc_plugin_workload_t logical = logical_workload(workload, types);
  float *output = NULL;
  if (!status) {
    int64_t count = hetc_layout_element_count(&logical.output);
    output = count > 0 ? malloc(sizeof(float) * (size_t)count) : NULL;
    if (!output) status = hetc_status_new(HETC_STATUS_OUT_OF_MEMORY, "trial reference");
  }
  if (!status)
    status = hetc_reference_run_op(&logical, (const float *const *)data.inputs,
                                   (const float *const *)data.params, output);
  logical_data_free(&data);
  if (status) {
    free(output);
    return hetc_status_annotate(status, "reference output");
  }
  *out_output = output;
  return NULL;
}

/* Candidate failures become the result's error and message; the status
 * is consumed. */
static void fail(hetc_trial_result_t *r, hetc_record_error_t error, const char *what, hetc_status_t status) {
  r->error = error;
  const char *message = status ? hetc_status_message(status) : "";
  size_t size = strlen(what) + strlen(message) + 3;
  r->message = malloc(size);
  if (r->message) snprintf(r->message, size, "%s%s%s", what, *message ? ": " : "", message);
  hetc_status_free(status);
}

static hetc_record_error_t run_error(hetc_status_t status) {
  switch (hetc_status_code(status)) {
    case HETC_STATUS_TIMEOUT: return HETC_RECORD_RUN_TIMEOUT;
    case HETC_STATUS_RUNTIME_FAILED: return HETC_RECORD_RUNTIME_DEVICE;
    default: return HETC_RECORD_UNKNOWN;
  }
}

/* Evicts `bytes` at `data` from every cache level (clflush on x86-64),
 * else sweeps a buffer twice the device's L2 and L3 through them. */
static void evict(const void *data, uint64_t bytes, const hetc_plugin_device_t *device) {
#if defined(__x86_64__)
  (void)device;
  const char *p = data;
  for (uint64_t at = 0; at < bytes; at += 64) __builtin_ia32_clflush(p + at);
  __builtin_ia32_mfence();
#else
  (void)data;
  uint64_t sweep = device ? device->cache_bytes[2] + device->cache_bytes[1] : 0;
  if (sweep < (8u << 20)) sweep = 8u << 20;
  (void)bytes;
  sweep *= 2;
  volatile unsigned char *buffer = malloc((size_t)sweep);
  if (!buffer) return;
  unsigned sum = 0;
  for (uint64_t i = 0; i < sweep; i += 64) buffer[i] = (unsigned char)i;
  for (uint64_t i = 0; i < sweep; i += 64) sum += buffer[i];
  (void)sum;
  free((void *)buffer);
#endif
}

static void stay_awake(int64_t begin, int64_t end, void *user_data) {
  (void)begin;
  (void)end;
  (void)user_data;
}

/* One run timed by the host's clock after the params (args[first_param],
 * num_params of them) are evicted from the caches: a kernel inside a model
 * finds its weights in memory, other layers' having passed through since
 * it last ran, and its input in cache, just written by the layer before.
 * Evicting megabytes outlasts the pool's hot spin, so an empty job wakes
 * its threads first: inside a package the layer before kept them awake. */
static hetc_status_t time_cold(const hetc_plugin_entry_t *entry, const hetc_plugin_device_t *device,
                               const hetc_plugin_artifact_t *artifact, const hetc_kernel_args_t *args,
                               double *out_seconds) {
  const hetc_plugin_artifact_info_t *info = hetc_entry_artifact_info(entry, artifact);
  for (int32_t k = 0; k < args->num_params; ++k) {
    void *data = hetc_entry_buffer_host_pointer(entry, args->buffers[args->first_param + k]);
    if (data) evict(data, info->param_bytes[k], device);
  }
  const int32_t threads = hetc_thread_pool_threads();
  hetc_parallel_for(threads, 1, stay_awake, NULL);
  const double start = hetc_now_seconds();
  hetc_status_t status = hetc_kernel_args_run(args, artifact);
  *out_seconds = hetc_now_seconds() - start;
  return status;
}

static hetc_status_t measure_with_args(const hetc_plugin_entry_t *entry, int32_t device_index,
                                       const hetc_plugin_artifact_t *artifact, const hetc_kernel_args_t *args,
                                       const hetc_trial_options_t *o, hetc_trial_result_t *r) {
  const hetc_plugin_device_t *device = hetc_entry_device(entry, device_index);
  /* One timed run (after the plugin's warm-up) sizes `number`. */
  double probe = 0;
  hetc_status_t status = hetc_entry_time(entry, artifact, args->buffers, args->count, 1, 1, &probe);
  if (status) {
    fail(r, run_error(status), "timing", status);
    return NULL;
  }
  int32_t number = o->number > 0 ? o->number : 1;
  if (probe > 0 && probe * 1e3 * number < o->min_repeat_ms) {
    double wanted = ceil(o->min_repeat_ms / (probe * 1e3));
    number = wanted > MAX_NUMBER ? MAX_NUMBER : (int32_t)wanted;
  }
  int32_t repeat = o->repeat < 1 ? 1 : o->repeat > HETC_RECORD_MAX_COSTS ? HETC_RECORD_MAX_COSTS : o->repeat;
  if (o->flush_cache && device && device->host_memory && hetc_entry_buffer_host_pointer(entry, args->buffers[0])) {
    /* Each repeat is one cold run. */
    number = 1;
    for (int32_t i = 0; i < repeat && !status; ++i) status = time_cold(entry, device, artifact, args, &r->costs[i]);
  } else {
    status = hetc_entry_time(entry, artifact, args->buffers, args->count, number, repeat, r->costs);
  }
  if (status) {
    fail(r, run_error(status), "timing", status);
    return NULL;
  }
  r->num_costs = repeat;
  r->number = number;
  return NULL;
}

hetc_status_t hetc_trial_measure(const hetc_plugin_entry_t *entry, int32_t device_index,
                                 const hetc_plugin_workload_t *w, const hetc_plugin_artifact_t *artifact,
                                 const hetc_trial_options_t *o, const float *reference,
                                 hetc_trial_result_t *r) {
  memset(r, 0, sizeof(*r));
  if (o->check && !reference)
    return hetc_status_new(HETC_STATUS_INVALID_ARGUMENT, "trial: checking needs the reference output");
  const hetc_plugin_artifact_info_t *info = hetc_entry_artifact_info(entry, artifact);
  logical_data_t data;
  hetc_kernel_args_t args;
  memset(&args, 0, sizeof(args));
  float *got = NULL;
  hetc_status_t status = logical_data_make(w, o->seed, &data);
  if (!status && (info->num_inputs != w->num_inputs || info->num_params != data.num_params))
    status = hetc_status_new(HETC_STATUS_INTERNAL, "trial: the artifact takes %d inputs and %d params, the workload %d and %d",
                             info->num_inputs, info->num_params, w->num_inputs, data.num_params);
  /* Activations in the layouts the kernel reads, params packed. */
  if (!status)
    status = hetc_kernel_args_create(entry, device_index, w, artifact, (const float *const *)data.inputs,
                                     (const float *const *)data.params, &args);
  if (status) goto done;

  if (o->check) {
    hetc_status_t run = hetc_kernel_args_run(&args, artifact);
    if (run) {
      fail(r, run_error(run), "run", run);
      goto done;
    }
    hetc_plugin_tensor_t logical_out = row_major(w->output);
    int64_t logical_count = hetc_layout_element_count(&logical_out);
    if (!(got = malloc(sizeof(float) * (size_t)logical_count))) {
      status = hetc_status_new(HETC_STATUS_OUT_OF_MEMORY, "trial output");
      goto done;
    }
    status = hetc_kernel_args_read_output(&args, w, got, NULL);
    if (status) goto done;
    double max_diff = 0, max_ref = 0;
    for (int64_t i = 0; i < logical_count; ++i) {
      double diff = fabs((double)got[i] - reference[i]);
      if (!(diff <= max_diff)) max_diff = diff; /* NaN counts as the largest */
      if (fabs(reference[i]) > max_ref) max_ref = fabs(reference[i]);
    }
    r->max_relative_error = max_ref > 0 ? max_diff / max_ref : max_diff;
    if (!(r->max_relative_error <= o->check_tolerance)) {
      char what[128];
      snprintf(what, sizeof(what), "max relative error %.3g exceeds %.3g", r->max_relative_error,
               o->check_tolerance);
      fail(r, HETC_RECORD_WRONG_ANSWER, what, NULL);
      goto done;
    }
  }
  status = measure_with_args(entry, device_index, artifact, &args, o, r);
done:
  hetc_kernel_args_release(&args);
  logical_data_free(&data);
  free(got);
  return status;
}
