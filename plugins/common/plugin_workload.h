/* plugins/common/plugin_workload.h -- what the built-in plugins decide about
 * workloads on top of the kit's checks (hetc/kit/workload.h): the limits
 * their code generators share, and the kit's description appended to the
 * string builder they emit source with. The prefix hpc_ is "hetc plugin
 * common". */
#ifndef HETC_PLUGINS_COMMON_PLUGIN_WORKLOAD_H_
#define HETC_PLUGINS_COMMON_PLUGIN_WORKLOAD_H_

#include <stddef.h>
#include <stdint.h>

#include "hetc/kit/layout.h"
#include "hetc/kit/workload.h"
#include "hetc/plugin.h"
#include "plugin_strbuf.h"

/* hetc_kit_workload_check, then the generators' own limit: a conv2d or
 * pooling kernel at most 64 wide (they tabulate per-kernel-column ranges
 * in fixed arrays). 0, or the code with the reason (no plugin name). */
int32_t hpc_workload_check(const hetc_plugin_workload_t *wl, char *reason, size_t reason_size);
/* conv2d that the NCHWc templates cover: groups == 1 or depthwise. */
int hpc_conv_nchwc_applicable(const hetc_plugin_workload_t *wl);
/* Whether an elementwise op runs in row-major only: the activations of ABI
 * minors 4 and 5 and its binary op are not 0 at 0 (softplus, exp, log,
 * 0 / 0), so they stay out of blocked layouts' padding channels. Minor 6's
 * follow the producer's layout, as sigmoid does: silu and hardswish are 0
 * at 0, and the kernels put hardsigmoid's padding back to 0 (0.5 there)
 * as they do sigmoid's. */
int hpc_elementwise_row_major_only(const hetc_plugin_workload_t *wl);
/* Kernel text (C, CUDA and OpenCL C alike) of v + 3 clamped to [0, 6],
 * which torch's hardswish multiplies by v and hardsigmoid takes, both then
 * divided by 6. Compares, not fmin/fmax, which would turn NaN into a
 * bound: an unordered compare is false, so NaN passes through. */
#define HPC_HARD_GATE_EXPR "(v + 3.0f < 0.0f ? 0.0f : (v + 3.0f > 6.0f ? 6.0f : v + 3.0f))"
/* silu as torch computes it, x / (1 + exp(-x)) (NaN at -inf, as
 * x * sigmoid(x)), with the exponential EXP: expf, HK_EXP or exp. */
#define HPC_SILU_EXPR(EXP) "(v / (1.0f + " EXP "(-v)))"
#define HPC_HARDSWISH_EXPR "(v * " HPC_HARD_GATE_EXPR " / 6.0f)"
#define HPC_HARDSIGMOID_EXPR "(" HPC_HARD_GATE_EXPR " / 6.0f)"
/* gelu with the complementary error function ERFC (erfcf, HK_ERFC or
 * erfc): 1 + erf(x / sqrt 2) is erfc(-x / sqrt 2), which keeps the digits
 * that 1 + erf loses where x is negative (gelu(-5) is -1.4e-6). NaN at
 * -inf, as x * (1 + erf(x / sqrt 2)) is. */
#define HPC_GELU_EXPR(ERFC) "(0.5f * v * " ERFC "(v * -0.70710678f))"
/* gelu_tanh with the exponential EXP: 0.5 x (1 + tanh(y)) is
 * x / (1 + exp(-2 y)), with y = sqrt(2 / pi) (x + 0.044715 x^3); no
 * cancellation where tanh(y) is near -1, NaN at -inf, x at inf. */
#define HPC_GELU_TANH_EXPR(EXP) "(v / (1.0f + " EXP "(-1.59576912f * (v + 0.044715f * v * v * v))))"

/* The C operator of an elementwise binary op: "+", "*" or "/". */
const char *hpc_binary_operator(int32_t binary);
/* Appends hetc_kit_workload_describe's line to sb. */
void hpc_workload_describe(const hetc_plugin_workload_t *wl, hpc_strbuf_t *sb);

/* hetc_kit_physical_count under the name tests/plugins/cuda still calls
 * it by; the plugins themselves use the kit's name. */
static inline int64_t hpc_physical_count(const hetc_plugin_tensor_t *t, hetc_plugin_layout_t layout) {
  return hetc_kit_physical_count(t, layout);
}

#endif /* HETC_PLUGINS_COMMON_PLUGIN_WORKLOAD_H_ */
