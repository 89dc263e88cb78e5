/* The argument buffers of one built kernel (kernel_args.h). */
#include "kernel/kernel_args.h"

#include <stdlib.h>
#include <string.h>

#include "kernel/plugin_calls.h"
#include "reference/reference.h"

int64_t hetc_kernel_param_elements(const hetc_plugin_workload_t *w, int32_t param) {
  const int64_t cout = w->output.shape[1];
  if (w->op == HETC_PLUGIN_OP_CONV2D && param == 0)
    return cout * (w->inputs[0].shape[1] / (w->groups > 0 ? w->groups : 1)) * w->kernel[0] * w->kernel[1];
  if (w->op == HETC_PLUGIN_OP_DENSE && param == 0) return cout * w->inputs[0].shape[1];
  if (w->op == HETC_PLUGIN_OP_NORMALIZE) return w->inputs[0].shape[w->params.normalize.axis];
  return cout;
}

static hetc_plugin_tensor_t with_layout(hetc_plugin_tensor_t t, hetc_plugin_layout_t layout) {
  t.layout = layout;
  return t;
}

static const hetc_plugin_layout_t row_major = {HETC_PLUGIN_LAYOUT_ROW_MAJOR, 0};

/* A buffer of `bytes` (at least 64: some plugins refuse empty buffers)
 * holding `data`, or zeros when data is NULL. */
static hetc_status_t add_buffer(hetc_kernel_args_t *a, int32_t device_index, uint64_t bytes, const void *data) {
  if (a->count == HETC_KERNEL_MAX_ARGS) return hetc_status_new(HETC_STATUS_INTERNAL, "kernel: too many arguments");
  const uint64_t size = bytes ? bytes : 64;
  HETC_RETURN_IF_ERROR(hetc_entry_buffer_alloc(a->entry, device_index, size, &a->buffers[a->count]));
  hetc_plugin_buffer_t *buffer = a->buffers[a->count++];
  /* Zeros, not garbage: no NaNs or denormals to slow a timed kernel down,
   * and a lazy allocator's first touch happens here. */
  void *zeros = data ? NULL : calloc(1, size);
  if (!data && !zeros) return hetc_status_new(HETC_STATUS_OUT_OF_MEMORY, "kernel arguments");
  hetc_status_t status = hetc_entry_buffer_write(a->entry, buffer, 0, data ? data : zeros, data ? bytes : size);
  free(zeros);
  return status;
}

hetc_status_t hetc_kernel_args_create(const hetc_plugin_entry_t *entry, int32_t device_index,
                                      const hetc_plugin_workload_t *workload, const hetc_plugin_artifact_t *artifact,
                                      const float *const *inputs, const float *const *params,
                                      hetc_kernel_args_t *out) {
  memset(out, 0, sizeof(*out));
  out->entry = entry;
  const hetc_plugin_artifact_info_t *info = hetc_entry_artifact_info(entry, artifact);
  if (!info) return hetc_status_new(HETC_STATUS_INTERNAL, "artifact_info returned NULL for a built artifact");
  if (info->num_inputs != workload->num_inputs || (info->num_inputs && !info->input_layouts) ||
      info->num_params < 0 || info->num_params > 4 || (info->num_params && !info->param_bytes))
    return hetc_status_new(HETC_STATUS_INTERNAL, "artifact_info describes %d inputs and %d params; the workload has %d inputs",
                           info->num_inputs, info->num_params, workload->num_inputs);
  hetc_status_t status = NULL;
  for (int32_t i = 0; !status && i < workload->num_inputs; ++i) {
    const hetc_plugin_tensor_t logical = with_layout(workload->inputs[i], row_major);
    const hetc_plugin_tensor_t physical = with_layout(workload->inputs[i], info->input_layouts[i]);
    const int64_t count = hetc_layout_element_count(&physical);
    float *converted = inputs && count > 0 ? malloc(sizeof(float) * (size_t)count) : NULL;
    if (inputs && count > 0 && !converted) status = hetc_status_new(HETC_STATUS_OUT_OF_MEMORY, "kernel inputs");
    if (!status && converted) status = hetc_layout_convert(&logical, inputs[i], &physical, converted);
    if (!status) status = add_buffer(out, device_index, (uint64_t)count * sizeof(float), converted);
    free(converted);
  }
  out->first_param = out->count;
  out->num_params = info->num_params;
  for (int32_t k = 0; !status && k < info->num_params; ++k) {
    const uint64_t bytes = info->param_bytes[k];
    void *packed = params ? malloc(bytes ? bytes : 1) : NULL;
    if (params && !packed) status = hetc_status_new(HETC_STATUS_OUT_OF_MEMORY, "kernel params");
    if (!status && packed)
      status = hetc_entry_pack_param(entry, artifact, k, params[k], (uint64_t)hetc_kernel_param_elements(workload, k),
                                     packed);
    if (!status) status = add_buffer(out, device_index, bytes, packed);
    free(packed);
  }
  out->output = out->count;
  out->output_type = with_layout(workload->output, info->output_layout);
  if (!status)
    status = add_buffer(out, device_index, (uint64_t)hetc_layout_element_count(&out->output_type) * sizeof(float),
                        NULL);
  if (!status && info->workspace_bytes) status = add_buffer(out, device_index, info->workspace_bytes, NULL);
  return status;
}

hetc_status_t hetc_kernel_args_run(const hetc_kernel_args_t *args, const hetc_plugin_artifact_t *artifact) {
  return hetc_entry_run(args->entry, artifact, args->buffers, args->count);
}

hetc_status_t hetc_kernel_args_read_output(const hetc_kernel_args_t *args, const hetc_plugin_workload_t *workload,
                                           float *logical, float *physical) {
  const int64_t count = hetc_layout_element_count(&args->output_type);
  float *got = physical ? physical : malloc(sizeof(float) * (size_t)(count > 0 ? count : 1));
  if (!got) return hetc_status_new(HETC_STATUS_OUT_OF_MEMORY, "kernel output");
  hetc_status_t status =
      hetc_entry_buffer_read(args->entry, args->buffers[args->output], 0, got, (uint64_t)count * sizeof(float));
  const hetc_plugin_tensor_t logical_type = with_layout(workload->output, row_major);
  if (!status) status = hetc_layout_convert(&args->output_type, got, &logical_type, logical);
  if (!physical) free(got);
  return status;
}

void hetc_kernel_args_release(hetc_kernel_args_t *args) {
  for (int32_t a = 0; a < args->count; ++a)
    if (args->buffers[a]) hetc_entry_buffer_free(args->entry, args->buffers[a]);
  args->count = 0;
}
