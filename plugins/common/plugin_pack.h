/* plugins/common/plugin_pack.h -- weight layouts the built-in plugins'
 * kernels read: NCHW[x]c blocks, and the Winograd transform the GPU-style
 * plugins share. */
#ifndef HETC_PLUGINS_COMMON_PLUGIN_PACK_H_
#define HETC_PLUGINS_COMMON_PLUGIN_PACK_H_

#include <stdint.h>

#include "hetc/plugin.h"

/* Copies `channels` values and zero-fills up to `padded`. */
void hpc_pack_padded(const float *src, int64_t channels, int64_t padded, float *dst);
/* conv weight OIHW -> (K/ocbn, C/icbn, KH, KW, icbn, ocbn), zero-padded. */
void hpc_pack_nchwc_weight(const hetc_plugin_workload_t *wl, int64_t icbn, int64_t ocbn, const float *w,
                           float *out);
/* depthwise weight [C,1,KH,KW] -> (C/bn, KH, KW, bn), zero-padded. */
void hpc_pack_depthwise_weight(const hetc_plugin_workload_t *wl, int64_t bn, const float *w, float *out);

/* Winograd F(2x2, 3x3)'s weight transform, done once at compile time:
 * U[xi][k][c] = (G g G^T)[xi] for the 3x3 filter g of output channel k and
 * input channel c (groups == 1); out holds 16 * K * C values. */
void hpc_pack_winograd_f2x3_weight(const hetc_plugin_workload_t *wl, const float *w, float *out);

#endif /* HETC_PLUGINS_COMMON_PLUGIN_PACK_H_ */
