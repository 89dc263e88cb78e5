/* The tiled GEMM every matrix-product template shares (im2col and 1x1
 * convolutions, Winograd's 16 products, dense).
 *
 * A work-group of wg_n x wg_m work-items computes a (wg_m*tile_m) x
 * (wg_n*tile_n) block of C; each work-item keeps its tile_m x tile_n outputs
 * in registers, as tile_n/vector vectors per row. The reduction advances
 * tile_k at a time; with `local`, each step's A and B panels are staged in
 * local memory by the whole work-group first (each element read from global
 * memory once per work-group instead of once per work-item). */
#include <stdio.h>
#include <string.h>

#include "ocl.h"

#define L(ind, ...) hpc_strbuf_line(&e->src, ind, __VA_ARGS__)

static long long ll(int64_t v) { return (long long)v; }

/* "float4" or "float" for a vector width. */
static const char *vtype(int64_t v) {
  switch (v) {
    case 2: return "float2";
    case 4: return "float4";
    case 8: return "float8";
    default: return "float";
  }
}

/* The component `lane` of a vector variable (".s3"), "" for scalars. */
static void lane_suffix(int64_t vector, int64_t lane, char *buf, size_t size) {
  if (vector == 1)
    buf[0] = 0;
  else
    snprintf(buf, size, ".s%c", "0123456789abcdef"[lane]);
}

ocl_launch_t *ocl_emit_gemm(ocl_emit_t *e, const ocl_gemm_t *g) {
  const ocl_config_t *c = &e->cfg;
  const int64_t TM = c->wg_m * c->tile_m, TN = c->wg_n * c->tile_n, TK = c->tile_k;
  const int64_t RM = c->tile_m, RN = c->tile_n, V = c->vector > 0 ? c->vector : 1, NV = RN / V;
  const char *vt = vtype(V);

  L(0, "__kernel __attribute__((reqd_work_group_size(%lld, %lld, 1)))", ll(c->wg_n), ll(c->wg_m));
  L(0, "void %s(%s) {", g->kernel, g->params);
  L(1, "const long M = %lld, N = %lld, K = %lld;", ll(g->M), ll(g->N), ll(g->K));
  L(1, "const int ln = get_local_id(0), lm = get_local_id(1);");
  L(1, "const long b = get_global_id(2);");
  L(1, "const long m0 = get_group_id(1) * %lld + lm * %lld;", ll(TM), ll(RM));
  L(1, "const long n0 = get_group_id(0) * %lld + ln * %lld;", ll(TN), ll(RN));
  L(1, "%s acc[%lld][%lld];", vt, ll(RM), ll(NV));
  L(1, "for (int i = 0; i < %lld; ++i)", ll(RM));
  L(2, "for (int j = 0; j < %lld; ++j) acc[i][j] = (%s)(0.0f);", ll(NV), vt);
  if (c->local) {
    /* Panels are stored k-major, so a work-item's tile_m A values and
     * tile_n B values of one k step are consecutive (vector loads). */
    L(1, "__local float As[%lld][%lld];", ll(TK), ll(TM));
    L(1, "__local float Bs[%lld][%lld];", ll(TK), ll(TN));
    L(1, "const int flat = lm * %lld + ln;", ll(c->wg_n));
    L(1, "const long mb = get_group_id(1) * %lld, nb = get_group_id(0) * %lld;", ll(TM), ll(TN));
    L(1, "for (long k0 = 0; k0 < K; k0 += %lld) {", ll(TK));
    L(2, "for (int t = flat; t < %lld; t += %lld) {", ll(TK * TM), ll(c->wg_m * c->wg_n));
    L(3, "const long k = k0 + t / %lld, m = mb + t %% %lld;", ll(TM), ll(TM));
    L(3, "As[t / %lld][t %% %lld] = (m < M && k < K) ? %s : 0.0f;", ll(TM), ll(TM), g->load_a);
    L(2, "}");
    L(2, "for (int t = flat; t < %lld; t += %lld) {", ll(TK * TN), ll(c->wg_m * c->wg_n));
    L(3, "const long k = k0 + t / %lld, n = nb + t %% %lld;", ll(TN), ll(TN));
    L(3, "Bs[t / %lld][t %% %lld] = (n < N && k < K) ? %s : 0.0f;", ll(TN), ll(TN), g->load_b);
    L(2, "}");
    L(2, "barrier(CLK_LOCAL_MEM_FENCE);");
    if (c->unroll) L(2, "#pragma unroll");
    L(2, "for (int kk = 0; kk < %lld; ++kk) {", ll(TK));
    L(3, "float a[%lld];", ll(RM));
    L(3, "for (int i = 0; i < %lld; ++i) a[i] = As[kk][lm * %lld + i];", ll(RM), ll(RM));
    L(3, "%s bv[%lld];", vt, ll(NV));
    if (V == 1)
      L(3, "for (int j = 0; j < %lld; ++j) bv[j] = Bs[kk][ln * %lld + j];", ll(NV), ll(RN));
    else
      L(3, "for (int j = 0; j < %lld; ++j) bv[j] = vload%lld(0, &Bs[kk][ln * %lld + j * %lld]);", ll(NV), ll(V),
        ll(RN), ll(V));
    L(3, "for (int i = 0; i < %lld; ++i)", ll(RM));
    L(4, "for (int j = 0; j < %lld; ++j) acc[i][j] = fma((%s)(a[i]), bv[j], acc[i][j]);", ll(NV), vt);
    L(2, "}");
    L(2, "barrier(CLK_LOCAL_MEM_FENCE);");
    L(1, "}");
  } else {
    L(1, "for (long k0 = 0; k0 < K; k0 += %lld) {", ll(TK));
    if (c->unroll) L(2, "#pragma unroll");
    L(2, "for (int kk = 0; kk < %lld; ++kk) {", ll(TK));
    L(3, "const long k = k0 + kk;");
    L(3, "if (k >= K) break;");
    L(3, "float a[%lld];", ll(RM));
    L(3, "for (int i = 0; i < %lld; ++i) {", ll(RM));
    L(4, "const long m = m0 + i;");
    L(4, "a[i] = m < M ? %s : 0.0f;", g->load_a);
    L(3, "}");
    L(3, "%s bv[%lld];", vt, ll(NV));
    L(3, "for (int j = 0; j < %lld; ++j) {", ll(NV));
    for (int64_t lane = 0; lane < V; ++lane) {
      char sfx[8];
      lane_suffix(V, lane, sfx, sizeof(sfx));
      L(4, "{ const long n = n0 + j * %lld + %lld; bv[j]%s = n < N ? %s : 0.0f; }", ll(V), ll(lane), sfx,
        g->load_b);
    }
    L(3, "}");
    L(3, "for (int i = 0; i < %lld; ++i)", ll(RM));
    L(4, "for (int j = 0; j < %lld; ++j) acc[i][j] = fma((%s)(a[i]), bv[j], acc[i][j]);", ll(NV), vt);
    L(2, "}");
    L(1, "}");
  }
  L(1, "for (int i = 0; i < %lld; ++i) {", ll(RM));
  L(2, "const long m = m0 + i;");
  L(2, "if (m >= M) break;");
  L(2, "for (int j = 0; j < %lld; ++j) {", ll(NV));
  for (int64_t lane = 0; lane < V; ++lane) {
    char sfx[8];
    lane_suffix(V, lane, sfx, sizeof(sfx));
    L(3, "{ const long n = n0 + j * %lld + %lld;", ll(V), ll(lane));
    L(3, "  if (n < N) { const float v = acc[i][j]%s; %s } }", sfx, g->store);
  }
  L(2, "}");
  L(1, "}");
  L(0, "}");
  L(0, "%s", "");

  ocl_launch_t *launch = ocl_emit_launch(e, g->kernel, 3);
  if (!launch) return NULL;
  launch->global[0] = (size_t)(hetc_kit_ceil_div(g->N, TN) * c->wg_n);
  launch->global[1] = (size_t)(hetc_kit_ceil_div(g->M, TM) * c->wg_m);
  launch->global[2] = (size_t)g->batch;
  launch->local[0] = (size_t)c->wg_n;
  launch->local[1] = (size_t)c->wg_m;
  launch->local[2] = 1;
  return launch;
}
