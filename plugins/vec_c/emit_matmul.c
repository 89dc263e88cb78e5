/* The matmul template (ABI 2.0): out[b] = A[b] x B[b] for every batch b,
 * A [M, K], B [K, N] and out [M, N], all row-major whatever the producer
 * hints (the batch dims are a matmul's own, not an image's channels, so an
 * NCHWc hint on a 4-d operand is no layout matmul could keep).
 *
 * N is contiguous in B and in the output, so the vectors run along N: one
 * parallel item is a block of tile_m rows of one batch's output, and within
 * it a tile of tile_n columns at a time takes the whole reduction with its
 * tile_m x tile_n sums in registers, each k step broadcasting tile_m values
 * of A against one row segment of B. The sums are arrays of
 * MATMUL_LANES floats, one statement per row in the vectorised loop: GCC
 * keeps an array that is exactly one vector in a register across the k
 * loop, but sends wider ones (a whole tile_n row) through the stack at
 * every step, which measured at about half the speed. The last partial tile of
 * columns (as vectors and a rest) and the last partial block of rows are
 * their own code with their own constant extents, so no loop tests a bound
 * the compiler cannot see. */
#include <stdio.h>
#include <string.h>

#include "vec.h"

#define L(ind, ...) hpc_strbuf_line(&e->src, ind, __VA_ARGS__)

static long long ll(int64_t v) { return (long long)v; }

/* Eight floats: one AVX vector, half an AVX-512 one, so the sums live in
 * registers on AVX2 too. On AVX-512 nothing is lost where the FMA pipes
 * are 256 bits wide (Zen 4 here: as fast as 16-float sums, measured) or
 * where GCC's tuning prefers 256-bit vectors anyway (Intel's). */
#define MATMUL_LANES 8

/* One tile: `rows` rows by U vectors of MATMUL_LANES columns and `rest`
 * more columns (fewer than MATMUL_LANES) from column n0, its sums in
 * c<row>_<vector> and p<row> over the whole reduction. */
static void emit_tile(vec_emit_t *e, int ind, int64_t rows, int64_t U, int64_t rest) {
  hpc_strbuf_t *s = &e->src;
  for (int64_t r = 0; r < rows; ++r) {
    hpc_strbuf_printf(s, "%*sfloat", 2 * ind, "");
    for (int64_t u = 0; u < U; ++u)
      hpc_strbuf_printf(s, "%s c%lld_%lld[%d]", u ? "," : "", ll(r), ll(u), MATMUL_LANES);
    if (rest) hpc_strbuf_printf(s, "%s p%lld[%lld]", U ? "," : "", ll(r), ll(rest));
    hpc_strbuf_printf(s, ";\n");
  }
  /* The j loops: zeroing, one step of the reduction, the stores; the
   * vectors' of MATMUL_LANES, then the rest's. */
  for (int phase = 0; phase < 3; ++phase) {
    const int in = phase == 1 ? ind + 1 : ind;
    if (phase == 1) {
      L(ind, "for (long k = 0; k < K; ++k) {");
      L(ind + 1, "const float *restrict v0 = Bm + k * N + n0;");
      for (int64_t r = 0; r < rows; ++r) L(ind + 1, "const float a%lld = A[%lldL * K + k];", ll(r), ll(r));
    }
    for (int64_t u = 0; u <= U; ++u) {
      const int64_t width = u < U ? MATMUL_LANES : rest, at = u * MATMUL_LANES;
      if (!width) continue;
      char sum[64];
      L(0, "#pragma omp simd");
      hpc_strbuf_printf(s, "%*sfor (long j = 0; j < %lldL; ++j) {", 2 * in, "", ll(width));
      if (phase == 1) hpc_strbuf_printf(s, " const float v = v0[%lld + j];", ll(at));
      for (int64_t r = 0; r < rows; ++r) {
        if (u < U)
          snprintf(sum, sizeof(sum), "c%lld_%lld[j]", ll(r), ll(u));
        else
          snprintf(sum, sizeof(sum), "p%lld[j]", ll(r));
        if (phase == 0) hpc_strbuf_printf(s, " %s = 0.f;", sum);
        if (phase == 1) hpc_strbuf_printf(s, " %s += a%lld * v;", sum, ll(r));
        if (phase == 2) hpc_strbuf_printf(s, " C[%lldL * N + n0 + %lld + j] = %s;", ll(r), ll(at), sum);
      }
      hpc_strbuf_printf(s, " }\n");
    }
    if (phase == 1) L(ind, "}");
  }
}

/* The block of `rows` output rows at A, Bm, C (the item's pointers): every
 * full tile of TN columns, then the partial one, if any, as vectors of
 * MATMUL_LANES and the rest. */
static void emit_row_block(vec_emit_t *e, int ind, int64_t rows, int64_t N, int64_t TN) {
  const int64_t full = N / TN * TN, tail = N - full;
  if (full > 0) {
    L(ind, "for (long n0 = 0; n0 < %lldL; n0 += %lldL) {", ll(full), ll(TN));
    emit_tile(e, ind + 1, rows, TN / MATMUL_LANES, 0);
    L(ind, "}");
  }
  if (tail > 0) {
    L(ind, "{");
    L(ind + 1, "const long n0 = %lldL;", ll(full));
    emit_tile(e, ind + 1, rows, tail / MATMUL_LANES, tail % MATMUL_LANES);
    L(ind, "}");
  }
}

hetc_plugin_status_t vec_emit_matmul(vec_emit_t *e) {
  const hetc_plugin_workload_t *wl = e->wl;
  const int32_t rank = wl->output.rank;
  const int64_t M = wl->inputs[0].shape[rank - 2], K = wl->inputs[0].shape[rank - 1];
  const int64_t N = wl->inputs[1].shape[rank - 1];
  int64_t batches = 1;
  for (int32_t d = 0; d + 2 < rank; ++d) batches *= wl->output.shape[d];
  const int64_t TM = e->cfg.tile_m, TN = e->cfg.tile_n;
  if (TM < 1 || TN < MATMUL_LANES || TN % MATMUL_LANES)
    return vec_status(HETC_PLUGIN_STATUS_INTERNAL, "vec: matmul tile_m %lld, tile_n %lld", ll(TM), ll(TN));
  /* A block of TM rows, and where M is no multiple of TM, the last block
   * of each batch with the rest (all of M when M < TM). */
  const int64_t blocks = hetc_kit_ceil_div(M, TM), last_rows = M - (blocks - 1) * TM;
  e->num_inputs = 2;
  e->input_layouts[0] = e->input_layouts[1] = hetc_kit_layout_row_major();
  e->output_layout = hetc_kit_layout_row_major();
  e->num_params = 0;

  vec_emit_preamble(e, HETC_PLUGIN_ACT_NONE);
  vec_emit_body_open(e);
  vec_emit_arg(e, "a", 0, 0);
  vec_emit_arg(e, "b", 1, 0);
  vec_emit_arg(e, "out", 2, 1);
  L(1, "const long M = %lld, K = %lld, N = %lld, MB = %lld;", ll(M), ll(K), ll(N), ll(blocks));
  L(1, "(void)M;");
  L(1, "for (long t = t0; t < t1; ++t) {");
  L(2, "const long bi = t / MB, m0 = t %% MB * %lldL;", ll(TM));
  L(2, "const float *restrict A = a + (bi * M + m0) * K;");
  L(2, "const float *restrict Bm = b + bi * K * N;");
  L(2, "float *restrict C = out + (bi * M + m0) * N;");
  if (last_rows == TM) {
    emit_row_block(e, 2, TM, N, TN);
  } else if (blocks == 1) {
    emit_row_block(e, 2, last_rows, N, TN);
  } else {
    L(2, "if (m0 + %lldL <= M) {", ll(TM));
    emit_row_block(e, 3, TM, N, TN);
    L(2, "} else {");
    emit_row_block(e, 3, last_rows, N, TN);
    L(2, "}");
  }
  L(1, "}");
  vec_emit_body_close(e, batches * blocks, (double)(TM * K * N));
  /* The innermost loops: MATMUL_LANES columns, or the rest's, once per k
   * of every block. */
  const double steps = (double)(batches * blocks * K);
  vec_emit_stat(e, MATMUL_LANES, steps * (double)(N / MATMUL_LANES));
  vec_emit_stat(e, (double)(N % MATMUL_LANES), steps);
  return NULL;
}
