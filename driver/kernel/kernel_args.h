/* driver/kernel/kernel_args.h -- the argument buffers of one built kernel.
 *
 * Every harness that runs a kernel outside a package (the tuner's trials,
 * plugin-check and `hetc compare`, placement's timing rounds) needs the
 * same buffers: each activation input in the layout the artifact reads,
 * each parameter packed by the plugin, the output in the layout it writes,
 * and its workspace, in the order `run` takes them (hetc/plugin.h). They
 * are made here, once, from logical row-major data or as zeros. */
#ifndef HETC_DRIVER_KERNEL_KERNEL_ARGS_H_
#define HETC_DRIVER_KERNEL_KERNEL_ARGS_H_

#include "graph/graph.h"
#include "plugins/registry.h"

/* Inputs (a concat reads up to HETC_MAX_NODE_INPUTS), params (at most 4),
 * output, workspace. */
#define HETC_KERNEL_MAX_ARGS (HETC_MAX_NODE_INPUTS + 4 + 2)

typedef struct hetc_kernel_args_t {
  const hetc_plugin_entry_t *entry;
  hetc_plugin_buffer_t *buffers[HETC_KERNEL_MAX_ARGS]; /* owned: buffer_free'd by hetc_kernel_args_release */
  int32_t count;       /* buffers made, in run's order */
  int32_t first_param; /* index of the first packed param (= the number of inputs) */
  int32_t num_params;
  int32_t output;                 /* index of the output buffer */
  hetc_plugin_tensor_t output_type; /* the output as the artifact writes it */
} hetc_kernel_args_t;

/* The elements of `workload`'s param `param` in logical row-major form. */
int64_t hetc_kernel_param_elements(const hetc_plugin_workload_t *workload, int32_t param);

/* Buffers on device `device_index` for `artifact` (built for `workload`):
 * inputs from logical row-major `inputs` (NULL: zeros), params packed from
 * logical `params` (NULL: zero bytes, unpacked), the output and workspace
 * uninitialised. INTERNAL when artifact_info disagrees with the workload.
 * Released with hetc_kernel_args_release, also on failure. */
hetc_status_t hetc_kernel_args_create(const hetc_plugin_entry_t *entry, int32_t device_index,
                                      const hetc_plugin_workload_t *workload, const hetc_plugin_artifact_t *artifact,
                                      const float *const *inputs, const float *const *params,
                                      hetc_kernel_args_t *out_args);

/* Runs the artifact once on these buffers. */
hetc_status_t hetc_kernel_args_run(const hetc_kernel_args_t *args, const hetc_plugin_artifact_t *artifact);

/* The output converted to logical row-major form into `logical` (the
 * caller's, as many floats as the workload's output has); `physical` (the
 * caller's, or NULL) also gets it as the artifact wrote it. */
hetc_status_t hetc_kernel_args_read_output(const hetc_kernel_args_t *args, const hetc_plugin_workload_t *workload,
                                           float *logical, float *physical);

void hetc_kernel_args_release(hetc_kernel_args_t *args);

#endif /* HETC_DRIVER_KERNEL_KERNEL_ARGS_H_ */
