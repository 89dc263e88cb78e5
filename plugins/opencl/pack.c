/* Parameter packing. Every template reads its weights in their logical
 * form (OIHW, [units, K]) except Winograd, whose weights are transformed
 * here once, at compile time: U[xi][k][c] = (G g G^T)[xi] for the 3x3
 * filter g of output channel k and input channel c. */
#include <string.h>

#include "ocl.h"

/* F(2x2, 3x3)'s filter transform G (4x3). */
static const float winograd_g[4][3] = {{1.f, 0.f, 0.f}, {.5f, .5f, .5f}, {.5f, -.5f, .5f}, {0.f, 0.f, 1.f}};

static void winograd_weights(const hetc_plugin_workload_t *wl, const float *w, float *out) {
  const int64_t K = wl->output.shape[1], C = wl->inputs[0].shape[1];
  for (int64_t k = 0; k < K; ++k)
    for (int64_t c = 0; c < C; ++c) {
      const float *g = w + (k * C + c) * 9;
      float gg[4][3]; /* G g */
      for (int i = 0; i < 4; ++i)
        for (int j = 0; j < 3; ++j)
          gg[i][j] = winograd_g[i][0] * g[0 * 3 + j] + winograd_g[i][1] * g[1 * 3 + j] + winograd_g[i][2] * g[2 * 3 + j];
      for (int i = 0; i < 4; ++i)
        for (int j = 0; j < 4; ++j) {
          const float u = gg[i][0] * winograd_g[j][0] + gg[i][1] * winograd_g[j][1] + gg[i][2] * winograd_g[j][2];
          out[((int64_t)(i * 4 + j) * K + k) * C + c] = u;
        }
    }
}

hetc_plugin_status_t ocl_pack_param(const hetc_plugin_workload_t *wl, int kind, int32_t index, const float *logical,
                                    uint64_t count, void *out, uint64_t out_bytes) {
  const uint64_t expected = hpc_param_logical_count(wl, index);
  if (!logical || !out || count != expected)
    return ocl_status(HETC_PLUGIN_STATUS_INVALID_ARGUMENT,
                      "opencl: param %d has %llu values, the workload's takes %llu", index,
                      (unsigned long long)count, (unsigned long long)expected);
  const int is_weight = index == 0 && (wl->op == HETC_PLUGIN_OP_CONV2D || wl->op == HETC_PLUGIN_OP_DENSE);
  if (kind == OCL_T_CONV_WINOGRAD && is_weight) {
    if (out_bytes != (uint64_t)wl->output.shape[1] * (uint64_t)wl->inputs[0].shape[1] * 16 * 4)
      return ocl_status(HETC_PLUGIN_STATUS_INTERNAL, "opencl: Winograd weight size mismatch");
    winograd_weights(wl, logical, out);
    return NULL;
  }
  if (out_bytes != count * 4)
    return ocl_status(HETC_PLUGIN_STATUS_INTERNAL, "opencl: param %d: %llu bytes for %llu values", index,
                      (unsigned long long)out_bytes, (unsigned long long)count);
  memcpy(out, logical, out_bytes);
  return NULL;
}
