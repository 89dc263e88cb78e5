/* hetc/kit/workload.h -- workloads as plugin.h defines them: the checks
 * every plugin needs before it computes anything, the params a workload
 * takes, a one-line description, and copies that outlive a call. */
#ifndef HETC_KIT_WORKLOAD_H_
#define HETC_KIT_WORKLOAD_H_

#include <stddef.h>
#include <stdint.h>

#include <hetc/plugin.h>

#include "hetc/kit/abi.h"

#include "hetc/kit/reason.h"

/* The last activation and binary op of the header compiled against: an
 * elementwise workload names one of them or none. */
#if HETC_KIT_ABI_AT_LEAST(1, 7)
#define HETC_KIT_LAST_ACTIVATION HETC_PLUGIN_ACT_ERF
#define HETC_KIT_LAST_BINARY HETC_PLUGIN_BINARY_DIV
#elif HETC_KIT_ABI_AT_LEAST(1, 6)
#define HETC_KIT_LAST_ACTIVATION HETC_PLUGIN_ACT_HARDSIGMOID
#define HETC_KIT_LAST_BINARY HETC_PLUGIN_BINARY_DIV
#elif HETC_KIT_ABI_AT_LEAST(1, 5)
#define HETC_KIT_LAST_ACTIVATION HETC_PLUGIN_ACT_LOG
#define HETC_KIT_LAST_BINARY HETC_PLUGIN_BINARY_DIV
#elif HETC_KIT_ABI_AT_LEAST(1, 4)
#define HETC_KIT_LAST_ACTIVATION HETC_PLUGIN_ACT_SOFTPLUS
#define HETC_KIT_LAST_BINARY HETC_PLUGIN_BINARY_DIV
#else
#define HETC_KIT_LAST_ACTIVATION HETC_PLUGIN_ACT_TANH
#define HETC_KIT_LAST_BINARY HETC_PLUGIN_BINARY_MUL
#endif

/* Whether a conv2d's or dense's epilogue may apply `activation` under the
 * header compiled against: the four of minor 0, from minor 6 silu,
 * hardswish and hardsigmoid too, from minor 7 gelu and gelu_tanh (each
 * header's HETC_PLUGIN_ACT_IS_EPILOGUE names its own). */
#if HETC_KIT_ABI_AT_LEAST(1, 6)
#define HETC_KIT_EPILOGUE_ACTIVATION(activation) HETC_PLUGIN_ACT_IS_EPILOGUE(activation)
#else
#define HETC_KIT_EPILOGUE_ACTIVATION(activation)                                                  \
  ((activation) >= HETC_PLUGIN_ACT_NONE && (activation) <= HETC_PLUGIN_ACT_TANH)
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* Most activation inputs a workload may have (concat takes up to 64). */
#define HETC_KIT_MAX_INPUTS 64
/* Most params a workload has (conv2d and dense: weight and bias). */
#define HETC_KIT_MAX_PARAMS 2
/* Room for any hetc_kit_workload_describe text: 65 tensors of 6 dims. */
#define HETC_KIT_WORKLOAD_TEXT_MAX 8192

/* 0 when the workload is well formed as plugin.h defines it and every
 * tensor is float32 of fewer than 2^31 elements (so that index products
 * fit int64); else HETC_PLUGIN_STATUS_UNSUPPORTED or _INVALID_ARGUMENT,
 * with the reason (no plugin name: the caller adds its own). Ops of a
 * later minor are UNSUPPORTED. Creates no status. */
int32_t hetc_kit_workload_check(const hetc_plugin_workload_t *wl, hetc_kit_reason_t *reason);

/* conv2d with groups == C_in == C_out > 1. */
int hetc_kit_conv_is_depthwise(const hetc_plugin_workload_t *wl);

/* "conv2d", "dense", ...; "unknown op" past the last op. */
const char *hetc_kit_op_name(int32_t op);

/* Params the workload takes, in plugin.h's order: conv2d and dense a
 * weight and, with has_bias, a bias; bias_add a bias; normalize with
 * affine a scale and a bias (ABI 2.0); other ops none. */
int32_t hetc_kit_param_count(const hetc_plugin_workload_t *wl);
/* Elements of logical param `index` (conv2d weight [C_out, C_in/groups,
 * KH, KW], dense weight [units, K], bias [C], normalize's scale and bias
 * [shape[axis]]), 0 past the last. */
uint64_t hetc_kit_param_elements(const hetc_plugin_workload_t *wl, int32_t index);

/* One line: op, logical shapes, the attributes the op uses. Layouts are
 * left out: they are the producers' hints, and a kernel that does not
 * follow one must not describe itself differently because of it. Always
 * terminated; HETC_KIT_WORKLOAD_TEXT_MAX bytes always suffice. */
void hetc_kit_workload_describe(const hetc_plugin_workload_t *wl, char *buf, size_t size);

/* A deep copy of src into *dst (its inputs array in host memory through
 * the bound host); free with hetc_kit_workload_release. 0, or -1 when out
 * of memory (dst->inputs is then NULL). */
int hetc_kit_workload_copy(const hetc_plugin_workload_t *src, hetc_plugin_workload_t *dst);
void hetc_kit_workload_release(hetc_plugin_workload_t *wl);

#ifdef __cplusplus
}
#endif

#endif /* HETC_KIT_WORKLOAD_H_ */
