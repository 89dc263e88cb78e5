/* hetc/kit/reference_ops.h -- portable C kernels for every op but conv2d,
 * which a CPU-style plugin (host_memory device) can serve as knob-less
 * templates while it spends its own effort on conv2d: dense with its
 * epilogue, max/avg/global-average pooling, elementwise (activations,
 * add/mul with broadcasting), softmax, concat, layout_transform (between
 * row-major, NHWC and NCHWc, and reshapes), bias_add, transpose (ABI
 * 1.4), log_softmax (1.5), resize, normalize and matmul (2.0), with the
 * semantics of hetc_plugin_workload_t. They run on the bound host's pool.
 *
 * They read and write row-major tensors, except layout_transform, which
 * converts exactly the layouts it is asked for (zeroing NCHWc padding);
 * hetc_kit_reference_layouts says which, for artifact_info. Params keep
 * their logical layout. */
#ifndef HETC_KIT_REFERENCE_OPS_H_
#define HETC_KIT_REFERENCE_OPS_H_

#include <stdint.h>

#include <hetc/plugin.h>

#include "hetc/kit/reason.h"

#ifdef __cplusplus
extern "C" {
#endif

/* 1 for the ops above, 0 for conv2d and ops of a later minor. */
int hetc_kit_reference_serves(int32_t op);

/* 0 when a reference kernel runs wl, else the code and the reason:
 * hetc_kit_workload_check's, or the op is not one the kernels serve. */
int32_t hetc_kit_reference_check(const hetc_plugin_workload_t *wl, hetc_kit_reason_t *reason);

/* The layouts the kernel for wl reads (input_layouts, wl->num_inputs
 * entries, the caller's) and writes. */
void hetc_kit_reference_layouts(const hetc_plugin_workload_t *wl, hetc_plugin_layout_t *input_layouts,
                                hetc_plugin_layout_t *output_layout);

/* pack_param: params keep their logical layout, so this checks the count
 * (naming `template_name`) and copies. out_packed is the caller's. */
hetc_plugin_status_t hetc_kit_reference_pack(const char *template_name, const hetc_plugin_workload_t *wl,
                                             int32_t param_index, const float *logical, uint64_t count,
                                             void *out_packed);

/* The innermost trip count of the kernel, for artifact_info. */
double hetc_kit_reference_inner_loop(const hetc_plugin_workload_t *wl);

/* Runs the kernel for wl, whose tensors carry the layouts of
 * hetc_kit_reference_layouts; args are the data of the activation inputs,
 * the params and the output, in run()'s order. */
void hetc_kit_reference_run(const hetc_plugin_workload_t *wl, float *const *args);

/* act(v) for a hetc_plugin_activation_t, for fused epilogues too. */
float hetc_kit_activate(int32_t activation, float v);

#ifdef __cplusplus
}
#endif

#endif /* HETC_KIT_REFERENCE_OPS_H_ */
