/* The reference matmul, as plugin.h defines it: batches of [M, K] x [K, N]
 * products of two row-major activations, accumulated in double. Written
 * apart from the plugin kit's kernel so that the two check each other. */
#include "reference/reference.h"

hetc_status_t hetc_reference_matmul(const hetc_plugin_workload_t *w, const float *a, const float *b, float *y) {
  const hetc_plugin_tensor_t *ta = &w->inputs[0], *tb = &w->inputs[1], *out = &w->output;
  const int32_t rank = ta->rank;
  int ok = w->num_inputs == 2 && rank >= 2 && tb->rank == rank && out->rank == rank;
  for (int32_t d = 0; ok && d + 2 < rank; ++d) ok = ta->shape[d] == tb->shape[d] && out->shape[d] == ta->shape[d];
  if (ok)
    ok = ta->shape[rank - 1] == tb->shape[rank - 2] && out->shape[rank - 2] == ta->shape[rank - 2] &&
         out->shape[rank - 1] == tb->shape[rank - 1];
  if (!ok)
    return hetc_status_new(HETC_STATUS_INVALID_ARGUMENT,
                           "matmul: inputs [B..., M, K] and [B..., K, N] and output [B..., M, N] expected");
  const int64_t M = ta->shape[rank - 2], K = ta->shape[rank - 1], N = tb->shape[rank - 1];
  int64_t batches = 1;
  for (int32_t d = 0; d + 2 < rank; ++d) batches *= ta->shape[d];
  for (int64_t bi = 0; bi < batches; ++bi) {
    const float *ab = a + bi * M * K, *bb = b + bi * K * N;
    float *yb = y + bi * M * N;
    for (int64_t m = 0; m < M; ++m)
      for (int64_t n = 0; n < N; ++n) {
        double acc = 0.0;
        for (int64_t k = 0; k < K; ++k) acc += (double)ab[m * K + k] * (double)bb[k * N + n];
        yb[m * N + n] = (float)acc;
      }
  }
  return NULL;
}
