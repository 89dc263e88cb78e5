/* The opencl plugin's ABI table: query, probe, instances and devices,
 * template dispatch, build/load/emit of artifacts, buffers, run and time. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hetc/kit/host.h"
#include "ocl.h"
#include "plugin_files.h"
#include "hetc/kit/status.h"

const hetc_plugin_host_t *ocl_host;

hetc_plugin_status_t ocl_status(int32_t code, const char *format, ...) {
  va_list args;
  va_start(args, format);
  hetc_plugin_status_t s = hetc_kit_status_va(ocl_host, code, format, args);
  va_end(args);
  return s;
}

struct hetc_plugin_instance_t {
  ocl_program_cache_t programs;
  ocl_device_t *devices;
  int32_t num_devices;
};

struct hetc_plugin_buffer_t {
  cl_mem mem;
  uint64_t bytes;
  int32_t device;
};

struct hetc_plugin_artifact_t {
  hetc_plugin_workload_t wl; /* deep copy */
  int kind;
  int32_t device;
  hetc_plugin_artifact_info_t info;
  hetc_plugin_layout_t input_layouts[OCL_MAX_INPUTS + 1];
  uint64_t param_bytes[2];
  char *description;
  char *source;
  size_t source_length;
  ocl_program_t *program;
  int32_t num_launches;
  ocl_launch_t *launches;
  cl_kernel *kernels;
  int32_t num_args;
  uint64_t arg_bytes[OCL_MAX_INPUTS + 4]; /* minimum buffer size per arg */
};

/* ------------------------------------------------------------------------ */

static hetc_plugin_status_t ocl_probe(void) { return ocl_devices_probe(); }

static void ocl_instance_destroy(hetc_plugin_instance_t *instance) {
  if (!instance) return;
  ocl_devices_free(instance->devices, instance->num_devices);
  ocl_program_cache_fini(&instance->programs);
  free(instance);
}

static hetc_plugin_status_t ocl_instance_create(hetc_plugin_instance_t **out_instance) {
  if (!out_instance) return ocl_status(HETC_PLUGIN_STATUS_INVALID_ARGUMENT, "opencl: null out_instance");
  *out_instance = NULL;
  hetc_plugin_instance_t *inst = calloc(1, sizeof(*inst));
  if (!inst) return ocl_status(HETC_PLUGIN_STATUS_OUT_OF_MEMORY, "opencl: out of memory");
  ocl_program_cache_init(&inst->programs);
  hetc_plugin_status_t s = ocl_devices_open(&inst->programs, &inst->devices, &inst->num_devices);
  if (s) {
    ocl_program_cache_fini(&inst->programs);
    free(inst);
    return s;
  }
  *out_instance = inst;
  return NULL;
}

static int32_t ocl_device_count(const hetc_plugin_instance_t *instance) {
  return instance ? instance->num_devices : 0;
}

static int valid_device(const hetc_plugin_instance_t *instance, int32_t device_index) {
  return instance && device_index >= 0 && device_index < instance->num_devices;
}

static const hetc_plugin_device_t *ocl_device_get(const hetc_plugin_instance_t *instance, int32_t device_index) {
  return valid_device(instance, device_index) ? &instance->devices[device_index].desc : NULL;
}

static int32_t ocl_supports(const hetc_plugin_instance_t *instance, int32_t device_index,
                            const hetc_plugin_workload_t *workload) {
  if (!valid_device(instance, device_index) || !workload || ocl_template_count(workload) == 0) return 0;
  /* An op without knobs has one config: where its demand does not fit
   * (resize's tables past the device's __constant memory), build() would
   * refuse it, so the device does not take the workload at all. */
  const int kind = ocl_template_kind(workload, 0);
  /* A template with knobs has configs that fit: its space's constraint
   * keeps the tuner to them. */
  if (kind <= OCL_T_DENSE || kind == OCL_T_MATMUL) return 1;
  ocl_config_t cfg;
  memset(&cfg, 0, sizeof(cfg));
  ocl_demand_t demand;
  ocl_config_demand(workload, kind, &cfg, &demand);
  return ocl_demand_fits(&demand, &instance->devices[device_index].limits);
}

static int32_t ocl_template_count_fn(const hetc_plugin_instance_t *instance, int32_t device_index,
                                     const hetc_plugin_workload_t *workload) {
  return valid_device(instance, device_index) && workload ? ocl_template_count(workload) : 0;
}

static const char *ocl_template_name_fn(const hetc_plugin_instance_t *instance, int32_t device_index,
                                        const hetc_plugin_workload_t *workload, int32_t template_index) {
  if (!valid_device(instance, device_index) || !workload) return NULL;
  return ocl_template_name(ocl_template_kind(workload, template_index));
}

static uint32_t ocl_template_version_fn(const hetc_plugin_instance_t *instance, int32_t device_index,
                                        const hetc_plugin_workload_t *workload, int32_t template_index) {
  if (!valid_device(instance, device_index) || !workload) return 0;
  return ocl_template_version(ocl_template_kind(workload, template_index));
}

/* Checks device, workload and template; returns the template kind. */
static hetc_plugin_status_t resolve(const hetc_plugin_instance_t *instance, int32_t device_index,
                                    const hetc_plugin_workload_t *workload, int32_t template_index, int *out_kind) {
  if (!instance || !workload)
    return ocl_status(HETC_PLUGIN_STATUS_INVALID_ARGUMENT, "opencl: null instance or workload");
  if (!valid_device(instance, device_index))
    return ocl_status(HETC_PLUGIN_STATUS_INVALID_ARGUMENT, "opencl: device %d does not exist (%d devices)",
                      device_index, instance->num_devices);
  char reason[512];
  int32_t code = hpc_workload_check(workload, reason, sizeof(reason));
  if (code) return ocl_status(code, "opencl: %s", reason);
  int kind = ocl_template_kind(workload, template_index);
  if (kind < 0)
    return ocl_status(HETC_PLUGIN_STATUS_INVALID_ARGUMENT, "opencl: template %d outside 0..%d for this workload",
                      template_index, ocl_template_count(workload) - 1);
  *out_kind = kind;
  return NULL;
}

static hetc_plugin_status_t ocl_template_define_space(const hetc_plugin_instance_t *instance, int32_t device_index,
                                                      const hetc_plugin_workload_t *workload,
                                                      int32_t template_index, hetc_plugin_space_t *space) {
  int kind = -1;
  hetc_plugin_status_t s = resolve(instance, device_index, workload, template_index, &kind);
  if (s) return s;
  ocl_space_t desc;
  ocl_space_describe(workload, kind, &desc);
  return ocl_space_define(&desc, workload, &instance->devices[device_index].limits, space);
}

/* ------------------------------------------------------------------------ */
/* Artifacts                                                                */
/* ------------------------------------------------------------------------ */

static void artifact_free(hetc_plugin_instance_t *instance, hetc_plugin_artifact_t *a) {
  if (!a) return;
  if (a->kernels)
    for (int32_t i = 0; i < a->num_launches; ++i)
      if (a->kernels[i]) clReleaseKernel(a->kernels[i]);
  free(a->kernels);
  free(a->launches);
  if (a->program) ocl_program_release(&instance->programs, a->program);
  hetc_kit_workload_release(&a->wl);
  free(a->description);
  free(a->source);
  free(a);
}

static void describe_artifact(hetc_plugin_artifact_t *a, const ocl_emit_t *e, const char *config_text) {
  hpc_strbuf_t d;
  hpc_strbuf_init(&d);
  hpc_strbuf_printf(&d, "%s v%u [%s]: ", ocl_template_name(a->kind), ocl_template_version(a->kind),
                    config_text ? config_text : "");
  hpc_workload_describe(&a->wl, &d);
  char layout[32];
  for (int32_t i = 0; i < e->num_inputs; ++i) {
    hetc_kit_layout_text(e->input_layouts[i], a->wl.inputs[i].rank, layout, sizeof(layout));
    hpc_strbuf_printf(&d, "%s%s", i ? ", " : "; reads ", layout);
  }
  hetc_kit_layout_text(e->output_layout, a->wl.output.rank, layout, sizeof(layout));
  hpc_strbuf_printf(&d, ", writes %s", layout);
  a->description = hpc_strbuf_take(&d, NULL);
}

/* Validates (config against the space, its demand against the device) and
 * emits: everything build() and artifact_load() share. */
static hetc_plugin_status_t prepare(hetc_plugin_instance_t *instance, int32_t device_index,
                                    const hetc_plugin_workload_t *workload, int32_t template_index,
                                    const hetc_plugin_config_t *config, hetc_plugin_artifact_t **out) {
  int kind = -1;
  hetc_plugin_status_t s = resolve(instance, device_index, workload, template_index, &kind);
  if (s) return s;
  ocl_space_t space;
  ocl_space_describe(workload, kind, &space);
  ocl_config_t cfg;
  if ((s = ocl_config_parse(&space, config, &cfg))) return s;
  ocl_demand_t demand;
  ocl_config_demand(workload, kind, &cfg, &demand);
  if ((s = ocl_check_limits(&demand, &instance->devices[device_index].limits))) return s;

  hetc_plugin_artifact_t *a = calloc(1, sizeof(*a));
  ocl_emit_t *e = calloc(1, sizeof(*e));
  hpc_strbuf_t config_text;
  hpc_strbuf_init(&config_text);
  ocl_config_describe(&space, &cfg, &config_text);
  if (!a || !e || config_text.failed || hetc_kit_workload_copy(workload, &a->wl)) {
    free(a);
    free(e);
    hpc_strbuf_free(&config_text);
    return ocl_status(HETC_PLUGIN_STATUS_OUT_OF_MEMORY, "opencl: out of memory");
  }
  a->kind = kind;
  a->device = device_index;
  e->wl = &a->wl;
  e->kind = kind;
  e->cfg = cfg;
  e->config_text = config_text.data;
  hpc_strbuf_init(&e->src);
  s = ocl_emit(e);
  if (!s) {
    a->source = hpc_strbuf_take(&e->src, &a->source_length);
    describe_artifact(a, e, config_text.data);
    a->num_launches = e->num_launches;
    a->launches = malloc(sizeof(*a->launches) * (size_t)e->num_launches);
    if (a->launches) memcpy(a->launches, e->launches, sizeof(*a->launches) * (size_t)e->num_launches);
    memcpy(a->input_layouts, e->input_layouts, sizeof(a->input_layouts));
    memcpy(a->param_bytes, e->param_bytes, sizeof(a->param_bytes));
    hetc_plugin_artifact_info_t *info = &a->info;
    info->num_inputs = e->num_inputs;
    info->input_layouts = a->input_layouts;
    info->output_layout = e->output_layout;
    info->num_params = e->num_params;
    info->param_bytes = a->param_bytes;
    info->workspace_bytes = e->workspace_bytes;
    info->description = a->description;
    /* Minimum buffer sizes, in run()'s argument order. */
    int32_t n = 0;
    for (int32_t i = 0; i < e->num_inputs; ++i)
      a->arg_bytes[n++] = (uint64_t)hetc_kit_physical_count(&a->wl.inputs[i], a->input_layouts[i]) * 4;
    for (int32_t i = 0; i < e->num_params; ++i) a->arg_bytes[n++] = a->param_bytes[i];
    a->arg_bytes[n++] = (uint64_t)hetc_kit_physical_count(&a->wl.output, e->output_layout) * 4;
    if (e->workspace_bytes) a->arg_bytes[n++] = e->workspace_bytes;
    a->num_args = n;
    if (!a->source || !a->description || !a->launches)
      s = ocl_status(HETC_PLUGIN_STATUS_OUT_OF_MEMORY, "opencl: out of memory");
  }
  hpc_strbuf_free(&e->src);
  free(e);
  hpc_strbuf_free(&config_text);
  if (s) {
    artifact_free(instance, a);
    return s;
  }
  *out = a;
  return NULL;
}

/* Builds (or takes from the caches) the program and creates its kernels. */
static hetc_plugin_status_t finish(hetc_plugin_instance_t *instance, hetc_plugin_artifact_t *a,
                                   const unsigned char *binary, size_t binary_length) {
  ocl_device_t *dev = &instance->devices[a->device];
  hetc_plugin_status_t s =
      ocl_program_get(&instance->programs, dev, a->source, a->source_length, binary, binary_length, &a->program);
  if (s) return s;
  a->kernels = calloc((size_t)a->num_launches, sizeof(cl_kernel));
  if (!a->kernels) return ocl_status(HETC_PLUGIN_STATUS_OUT_OF_MEMORY, "opencl: out of memory");
  for (int32_t i = 0; i < a->num_launches; ++i) {
    cl_int err;
    a->kernels[i] = clCreateKernel(a->program->program, a->launches[i].kernel, &err);
    if (err != CL_SUCCESS)
      return ocl_status(HETC_PLUGIN_STATUS_INTERNAL, "opencl: kernel %s of %s: %s (%d)", a->launches[i].kernel,
                        ocl_template_name(a->kind), ocl_error_name(err), err);
  }
  return NULL;
}

static hetc_plugin_status_t ocl_build(hetc_plugin_instance_t *instance, int32_t device_index,
                                      const hetc_plugin_workload_t *workload, int32_t template_index,
                                      const hetc_plugin_config_t *config, hetc_plugin_artifact_t **out_artifact) {
  if (!out_artifact) return ocl_status(HETC_PLUGIN_STATUS_INVALID_ARGUMENT, "opencl: null out_artifact");
  *out_artifact = NULL;
  hetc_plugin_artifact_t *a = NULL;
  hetc_plugin_status_t s = prepare(instance, device_index, workload, template_index, config, &a);
  if (!s) s = finish(instance, a, NULL, 0);
  if (s) {
    artifact_free(instance, a);
    return s;
  }
  *out_artifact = a;
  return NULL;
}

static void ocl_artifact_release(hetc_plugin_instance_t *instance, hetc_plugin_artifact_t *artifact) {
  if (instance) artifact_free(instance, artifact);
}

static const hetc_plugin_artifact_info_t *ocl_artifact_info(const hetc_plugin_artifact_t *artifact) {
  return artifact ? &artifact->info : NULL;
}

static hetc_plugin_status_t ocl_pack_param_fn(const hetc_plugin_artifact_t *artifact, int32_t param_index,
                                              const float *logical, uint64_t count, void *out_packed) {
  if (!artifact) return ocl_status(HETC_PLUGIN_STATUS_INVALID_ARGUMENT, "opencl: null artifact");
  if (param_index < 0 || param_index >= artifact->info.num_params)
    return ocl_status(HETC_PLUGIN_STATUS_INVALID_ARGUMENT, "opencl: param %d outside 0..%d", param_index,
                      artifact->info.num_params - 1);
  return ocl_pack_param(&artifact->wl, artifact->kind, param_index, logical, count, out_packed,
                        artifact->param_bytes[param_index]);
}

/* ------------------------------------------------------------------------ */
/* Buffers                                                                  */
/* ------------------------------------------------------------------------ */

static hetc_plugin_status_t ocl_buffer_alloc(hetc_plugin_instance_t *instance, int32_t device_index, uint64_t bytes,
                                             hetc_plugin_buffer_t **out_buffer) {
  if (!out_buffer || !valid_device(instance, device_index))
    return ocl_status(HETC_PLUGIN_STATUS_INVALID_ARGUMENT, "opencl: buffer_alloc: bad instance, device %d or null out",
                      device_index);
  *out_buffer = NULL;
  ocl_device_t *dev = &instance->devices[device_index];
  if (bytes > dev->limits.max_mem_alloc_bytes)
    return ocl_status(HETC_PLUGIN_STATUS_OUT_OF_MEMORY,
                      "opencl: a buffer of %llu bytes exceeds the device's CL_DEVICE_MAX_MEM_ALLOC_SIZE of %llu",
                      (unsigned long long)bytes, (unsigned long long)dev->limits.max_mem_alloc_bytes);
  hetc_plugin_buffer_t *b = calloc(1, sizeof(*b));
  if (!b) return ocl_status(HETC_PLUGIN_STATUS_OUT_OF_MEMORY, "opencl: out of memory");
  cl_int err;
  /* OpenCL has no empty buffers; a zero-byte one is never read. */
  b->mem = clCreateBuffer(dev->context, CL_MEM_READ_WRITE, bytes ? (size_t)bytes : 4, NULL, &err);
  if (err != CL_SUCCESS) {
    free(b);
    return ocl_status(HETC_PLUGIN_STATUS_OUT_OF_MEMORY, "opencl: clCreateBuffer(%llu bytes): %s (%d)",
                      (unsigned long long)bytes, ocl_error_name(err), err);
  }
  b->bytes = bytes;
  b->device = device_index;
  *out_buffer = b;
  return NULL;
}

static void ocl_buffer_free(hetc_plugin_instance_t *instance, hetc_plugin_buffer_t *buffer) {
  (void)instance;
  if (!buffer) return;
  clReleaseMemObject(buffer->mem);
  free(buffer);
}

static hetc_plugin_status_t check_range(const hetc_plugin_buffer_t *buffer, uint64_t offset, uint64_t bytes,
                                        const char *what) {
  if (!buffer) return ocl_status(HETC_PLUGIN_STATUS_INVALID_ARGUMENT, "opencl: %s: null buffer", what);
  if (offset > buffer->bytes || bytes > buffer->bytes - offset)
    return ocl_status(HETC_PLUGIN_STATUS_INVALID_ARGUMENT,
                      "opencl: %s of %llu bytes at offset %llu outside a buffer of %llu bytes", what,
                      (unsigned long long)bytes, (unsigned long long)offset, (unsigned long long)buffer->bytes);
  return NULL;
}

static hetc_plugin_status_t transfer_failed(const char *what, cl_int err) {
  return ocl_status(HETC_PLUGIN_STATUS_RUNTIME_FAILED, "opencl: %s: %s (%d)", what, ocl_error_name(err), err);
}

static hetc_plugin_status_t ocl_buffer_write(hetc_plugin_instance_t *instance, hetc_plugin_buffer_t *buffer,
                                             uint64_t offset, const void *src, uint64_t bytes) {
  hetc_plugin_status_t s = check_range(buffer, offset, bytes, "buffer_write");
  if (s || bytes == 0) return s;
  if (!src) return ocl_status(HETC_PLUGIN_STATUS_INVALID_ARGUMENT, "opencl: buffer_write: null source");
  ocl_device_t *dev = &instance->devices[buffer->device];
  cl_int err = clEnqueueWriteBuffer(dev->queue, buffer->mem, CL_TRUE, (size_t)offset, (size_t)bytes, src, 0, NULL, NULL);
  return err == CL_SUCCESS ? NULL : transfer_failed("clEnqueueWriteBuffer", err);
}

static hetc_plugin_status_t ocl_buffer_read(hetc_plugin_instance_t *instance, const hetc_plugin_buffer_t *buffer,
                                            uint64_t offset, void *dst, uint64_t bytes) {
  hetc_plugin_status_t s = check_range(buffer, offset, bytes, "buffer_read");
  if (s || bytes == 0) return s;
  if (!dst) return ocl_status(HETC_PLUGIN_STATUS_INVALID_ARGUMENT, "opencl: buffer_read: null destination");
  ocl_device_t *dev = &instance->devices[buffer->device];
  cl_int err = clEnqueueReadBuffer(dev->queue, buffer->mem, CL_TRUE, (size_t)offset, (size_t)bytes, dst, 0, NULL, NULL);
  return err == CL_SUCCESS ? NULL : transfer_failed("clEnqueueReadBuffer", err);
}

static hetc_plugin_status_t ocl_buffer_copy(hetc_plugin_instance_t *instance, hetc_plugin_buffer_t *dst,
                                            uint64_t dst_offset, const hetc_plugin_buffer_t *src, uint64_t src_offset,
                                            uint64_t bytes) {
  hetc_plugin_status_t s = check_range(dst, dst_offset, bytes, "buffer_copy");
  if (!s) s = check_range(src, src_offset, bytes, "buffer_copy");
  if (s || bytes == 0) return s;
  if (dst->device != src->device)
    return ocl_status(HETC_PLUGIN_STATUS_INVALID_ARGUMENT, "opencl: buffer_copy between devices %d and %d",
                      src->device, dst->device);
  ocl_device_t *dev = &instance->devices[dst->device];
  cl_int err = clEnqueueCopyBuffer(dev->queue, src->mem, dst->mem, (size_t)src_offset, (size_t)dst_offset,
                                   (size_t)bytes, 0, NULL, NULL);
  if (err == CL_SUCCESS) err = clFinish(dev->queue);
  return err == CL_SUCCESS ? NULL : transfer_failed("clEnqueueCopyBuffer", err);
}

static void *ocl_buffer_host_pointer(hetc_plugin_instance_t *instance, hetc_plugin_buffer_t *buffer) {
  (void)instance;
  (void)buffer;
  return NULL;
}

/* ------------------------------------------------------------------------ */
/* Run and time                                                             */
/* ------------------------------------------------------------------------ */

/* Checks run()'s arguments and binds them to every kernel. */
static hetc_plugin_status_t bind_args(const hetc_plugin_artifact_t *a, hetc_plugin_buffer_t *const *args,
                                      int32_t num_args) {
  if (!a || !a->kernels) return ocl_status(HETC_PLUGIN_STATUS_INVALID_ARGUMENT, "opencl: artifact not runnable");
  if (num_args != a->num_args || (num_args > 0 && !args))
    return ocl_status(HETC_PLUGIN_STATUS_INVALID_ARGUMENT,
                      "opencl: %d arguments, the kernel takes %d (inputs, params, output%s)", num_args, a->num_args,
                      a->info.workspace_bytes ? ", workspace" : "");
  for (int32_t i = 0; i < num_args; ++i) {
    if (!args[i]) return ocl_status(HETC_PLUGIN_STATUS_INVALID_ARGUMENT, "opencl: argument %d is null", i);
    if (args[i]->device != a->device)
      return ocl_status(HETC_PLUGIN_STATUS_INVALID_ARGUMENT, "opencl: argument %d lives on device %d, the kernel on %d",
                        i, args[i]->device, a->device);
    if (args[i]->bytes < a->arg_bytes[i])
      return ocl_status(HETC_PLUGIN_STATUS_INVALID_ARGUMENT, "opencl: argument %d has %llu bytes, the kernel needs %llu",
                        i, (unsigned long long)args[i]->bytes, (unsigned long long)a->arg_bytes[i]);
  }
  for (int32_t l = 0; l < a->num_launches; ++l) {
    const ocl_launch_t *launch = &a->launches[l];
    for (int32_t j = 0; j < launch->num_args; ++j) {
      const int32_t index = launch->args[j] == OCL_ARG_WORKSPACE ? num_args - 1 : launch->args[j];
      cl_int err = clSetKernelArg(a->kernels[l], (cl_uint)j, sizeof(cl_mem), &args[index]->mem);
      if (err != CL_SUCCESS)
        return ocl_status(HETC_PLUGIN_STATUS_INTERNAL, "opencl: clSetKernelArg(%s, %d): %s (%d)", launch->kernel, j,
                          ocl_error_name(err), err);
    }
  }
  return NULL;
}

/* Enqueues every launch once; the first and last launches' events when
 * asked for (the caller releases them). */
static hetc_plugin_status_t enqueue(ocl_device_t *dev, const hetc_plugin_artifact_t *a, cl_event *out_first,
                                    cl_event *out_last) {
  for (int32_t l = 0; l < a->num_launches; ++l) {
    const ocl_launch_t *launch = &a->launches[l];
    cl_event *event = NULL;
    if (out_first && l == 0) event = out_first;
    if (out_last && l == a->num_launches - 1) event = a->num_launches == 1 ? out_first : out_last;
    cl_int err = clEnqueueNDRangeKernel(dev->queue, a->kernels[l], (cl_uint)launch->dims, NULL, launch->global,
                                        launch->local[0] ? launch->local : NULL, 0, NULL, event);
    if (err != CL_SUCCESS)
      return ocl_status(HETC_PLUGIN_STATUS_RUNTIME_FAILED, "opencl: launching %s (%s) failed: %s (%d)", launch->kernel,
                        a->description, ocl_error_name(err), err);
  }
  if (out_last && a->num_launches == 1) *out_last = NULL;
  return NULL;
}

static hetc_plugin_status_t finish_queue(ocl_device_t *dev, const hetc_plugin_artifact_t *a) {
  cl_int err = clFinish(dev->queue);
  return err == CL_SUCCESS ? NULL
                           : ocl_status(HETC_PLUGIN_STATUS_RUNTIME_FAILED, "opencl: running %s failed: %s (%d)",
                                        a->description, ocl_error_name(err), err);
}

static hetc_plugin_status_t ocl_run(hetc_plugin_instance_t *instance, const hetc_plugin_artifact_t *artifact,
                                    hetc_plugin_buffer_t *const *args, int32_t num_args) {
  hetc_plugin_status_t s = bind_args(artifact, args, num_args);
  if (s) return s;
  ocl_device_t *dev = &instance->devices[artifact->device];
  s = enqueue(dev, artifact, NULL, NULL);
  hetc_plugin_status_t done = finish_queue(dev, artifact);
  if (s) {
    if (done) ocl_host->status_free(done);
    return s;
  }
  return done;
}

static double event_span(cl_event first, cl_event last) {
  cl_ulong start = 0, end = 0;
  clGetEventProfilingInfo(first, CL_PROFILING_COMMAND_START, sizeof(start), &start, NULL);
  clGetEventProfilingInfo(last ? last : first, CL_PROFILING_COMMAND_END, sizeof(end), &end, NULL);
  return end > start ? (double)(end - start) * 1e-9 : 0;
}

static hetc_plugin_status_t ocl_time(hetc_plugin_instance_t *instance, const hetc_plugin_artifact_t *artifact,
                                     hetc_plugin_buffer_t *const *args, int32_t num_args, int32_t number,
                                     int32_t repeat, double *out_seconds) {
  if (number < 1 || repeat < 1 || !out_seconds)
    return ocl_status(HETC_PLUGIN_STATUS_INVALID_ARGUMENT, "opencl: time: number %d and repeat %d must be positive",
                      number, repeat);
  hetc_plugin_status_t s = ocl_run(instance, artifact, args, num_args); /* the untimed warm-up */
  if (s) return s;
  ocl_device_t *dev = &instance->devices[artifact->device];
  /* The device's clock from the first launch's start to the last one's
   * end: the gaps between an artifact's kernels are part of its cost. */
  for (int32_t r = 0; r < repeat && !s; ++r) {
    double total = 0;
    for (int32_t i = 0; i < number && !s; ++i) {
      cl_event first = NULL, last = NULL;
      s = enqueue(dev, artifact, &first, &last);
      if (!s) s = finish_queue(dev, artifact);
      if (!s) total += event_span(first, last);
      if (first) clReleaseEvent(first);
      if (last) clReleaseEvent(last);
    }
    out_seconds[r] = total / number;
  }
  return s;
}

static hetc_plugin_status_t ocl_features(const hetc_plugin_instance_t *instance, int32_t device_index,
                                         const hetc_plugin_workload_t *workload, int32_t template_index,
                                         const hetc_plugin_config_t *config, float *out_features, int32_t capacity,
                                         int32_t *out_count) {
  if (out_count) *out_count = 0;
  if (!out_count || capacity < 0 || (capacity > 0 && !out_features))
    return ocl_status(HETC_PLUGIN_STATUS_INVALID_ARGUMENT, "opencl: features: null out_count or out_features");
  int kind = -1;
  hetc_plugin_status_t s = resolve(instance, device_index, workload, template_index, &kind);
  if (s) return s;
  ocl_space_t space;
  ocl_space_describe(workload, kind, &space);
  ocl_config_t cfg;
  if ((s = ocl_config_parse(&space, config, &cfg))) return s;
  const int32_t count = ocl_features_fill(workload, kind, &cfg, out_features, capacity);
  if (count < 0)
    return ocl_status(HETC_PLUGIN_STATUS_UNSUPPORTED,
                      "opencl: %s has no features (only conv2d, dense and matmul do)", ocl_template_name(kind));
  *out_count = count;
  return NULL;
}

/* ------------------------------------------------------------------------ */
/* Emit and load: the kernel source (.cl) and, where the device gives one,  */
/* its binary (.bin), so that `hetc run` does not rebuild.                  */
/* ------------------------------------------------------------------------ */

static char *file_path(const char *dir, const char *prefix, const char *suffix) {
  size_t n = strlen(dir) + strlen(prefix) + strlen(suffix) + 2;
  char *p = malloc(n);
  if (p) snprintf(p, n, "%s/%s%s", dir, prefix, suffix);
  return p;
}

static hetc_plugin_status_t ocl_artifact_emit(hetc_plugin_instance_t *instance, const hetc_plugin_artifact_t *artifact,
                                              const char *dir, const char *prefix) {
  if (!instance || !artifact || !dir || !prefix || !artifact->program)
    return ocl_status(HETC_PLUGIN_STATUS_INVALID_ARGUMENT, "opencl: artifact_emit: null argument");
  char *cl_path = file_path(dir, prefix, ".cl"), *bin_path = file_path(dir, prefix, ".bin");
  hetc_plugin_status_t s = NULL;
  if (!cl_path || !bin_path) s = ocl_status(HETC_PLUGIN_STATUS_OUT_OF_MEMORY, "opencl: out of memory");
  if (!s) s = hetc_kit_write_file(cl_path, artifact->source, artifact->source_length);
  /* No binary from a driver that keeps its builds (PoCL): asking for it
   * builds every kernel again for any work-group size, and a launch from
   * it still builds the kernel for its own size, so the binary saves
   * `hetc run` little of what it costs `hetc compile`. */
  if (!s && !instance->devices[artifact->device].driver_keeps_builds) {
    size_t length = 0;
    unsigned char *binary = ocl_program_binary(artifact->program, &length);
    if (binary) s = hetc_kit_write_file(bin_path, binary, length);
    free(binary);
  }
  free(cl_path);
  free(bin_path);
  return s;
}

static hetc_plugin_status_t ocl_artifact_load(hetc_plugin_instance_t *instance, int32_t device_index,
                                              const hetc_plugin_workload_t *workload, int32_t template_index,
                                              const hetc_plugin_config_t *config, const char *dir, const char *prefix,
                                              hetc_plugin_artifact_t **out_artifact) {
  if (!out_artifact || !dir || !prefix)
    return ocl_status(HETC_PLUGIN_STATUS_INVALID_ARGUMENT, "opencl: artifact_load: null argument");
  *out_artifact = NULL;
  hetc_plugin_artifact_t *a = NULL;
  hetc_plugin_status_t s = prepare(instance, device_index, workload, template_index, config, &a);
  if (s) return s;
  char *cl_path = file_path(dir, prefix, ".cl"), *bin_path = file_path(dir, prefix, ".bin");
  unsigned char *binary = NULL;
  size_t binary_length = 0;
  if (!cl_path || !bin_path) s = ocl_status(HETC_PLUGIN_STATUS_OUT_OF_MEMORY, "opencl: out of memory");
  if (!s) {
    /* The packaged source must be the kernel this (workload, template,
     * config) gives now; otherwise the package is stale or mislabelled. */
    size_t length = 0;
    char *packaged = hpc_read_file(cl_path, &length);
    if (!packaged)
      s = ocl_status(HETC_PLUGIN_STATUS_INVALID_ARGUMENT, "opencl: %s is missing or unreadable", cl_path);
    else if (length != a->source_length || memcmp(packaged, a->source, length) != 0)
      s = ocl_status(HETC_PLUGIN_STATUS_INVALID_ARGUMENT,
                     "opencl: %s was emitted for another workload, template, config or plugin version", cl_path);
    free(packaged);
  }
  /* The packaged binary when the device takes it; else the (identical)
   * source is built again, through the caches. */
  if (!s) binary = (unsigned char *)hpc_read_file(bin_path, &binary_length);
  if (!s) s = finish(instance, a, binary, binary_length);
  free(binary);
  free(cl_path);
  free(bin_path);
  if (s) {
    artifact_free(instance, a);
    return s;
  }
  *out_artifact = a;
  return NULL;
}

/* ------------------------------------------------------------------------ */

static const hetc_plugin_t ocl_plugin = {
    .header = {HETC_PLUGIN_ABI_MAJOR, HETC_PLUGIN_ABI_MINOR, sizeof(hetc_plugin_t), 0},
    .name = OCL_PLUGIN_NAME,
    .vendor = "hetc",
    .version = OCL_PLUGIN_VERSION,
    .description = "OpenCL through the ICD loader: GPU-style kernels (local-memory tiles, register tiles, "
                   "im2col GEMM, Winograd) for every platform and device",
    .probe = ocl_probe,
    .instance_create = ocl_instance_create,
    .instance_destroy = ocl_instance_destroy,
    .device_count = ocl_device_count,
    .device_get = ocl_device_get,
    .supports = ocl_supports,
    .template_count = ocl_template_count_fn,
    .template_name = ocl_template_name_fn,
    .template_version = ocl_template_version_fn,
    .template_define_space = ocl_template_define_space,
    .build = ocl_build,
    .artifact_release = ocl_artifact_release,
    .artifact_info = ocl_artifact_info,
    .pack_param = ocl_pack_param_fn,
    .buffer_alloc = ocl_buffer_alloc,
    .buffer_free = ocl_buffer_free,
    .buffer_write = ocl_buffer_write,
    .buffer_read = ocl_buffer_read,
    .buffer_copy = ocl_buffer_copy,
    .buffer_host_pointer = ocl_buffer_host_pointer,
    .run = ocl_run,
    .time = ocl_time,
    .features = ocl_features,
    .artifact_emit = ocl_artifact_emit,
    .artifact_load = ocl_artifact_load,
};

HETC_PLUGIN_EXPORT const hetc_plugin_t *hetc_plugin_query(uint32_t host_abi_major, uint32_t host_abi_minor,
                                                          const hetc_plugin_host_t *host);

HETC_PLUGIN_EXPORT const hetc_plugin_t *hetc_plugin_query(uint32_t host_abi_major, uint32_t host_abi_minor,
                                                          const hetc_plugin_host_t *host) {
  (void)host_abi_minor;
  /* Every service this plugin calls is in minor 0 (optional ones only
   * where HETC_PLUGIN_HAS_FIELD finds them): the kit refuses another major
   * and a shorter table, and keeps the host for its own calls. */
  if (!hetc_kit_bind(host_abi_major, host, OCL_PLUGIN_NAME)) return NULL;
  ocl_host = host;
  return &ocl_plugin;
}
