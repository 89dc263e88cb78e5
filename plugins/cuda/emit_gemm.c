/* The tiled GEMM the GEMM-shaped templates share (Winograd's 16 batched
 * products, dense), and the dense template on it.
 *
 * A block of (block_n/thread_n) x (block_m/thread_m) threads computes a
 * block_m x block_n tile of C[b] (b is the grid's z). Each thread keeps a
 * thread_m x thread_n register tile whose rows are strided by the threads'
 * rows and whose columns by the threads' columns: thread (tx, ty) owns
 * rows ty + i*TY and columns tx + j*TX, so neighbouring threads store
 * neighbouring columns (coalesced) and read neighbouring shared words
 * (no bank conflicts). The reduction advances block_k at a time: the block
 * stages A's block_m x block_k tile and B's block_k x block_n tile in shared
 * memory (k-major; an operand read along k gets padded rows, so that the
 * threads writing down a column hit different banks), zero-filled past
 * every edge, then each thread accumulates from there. Where the staging
 * registers are few, the next step's elements are loaded into them before
 * the current step's products, so global latency overlaps arithmetic; one
 * barrier pair per step.
 *
 * M, N and K need not be multiples of the block: staged elements and
 * stored outputs are guarded, and guards that the shapes make always true
 * are left out of the text. */
#include <stdio.h>
#include <string.h>

#include "cu.h"

#define L(ind, ...) hpc_strbuf_line(&e->src, ind, __VA_ARGS__)

/* Register prefetch of the next step: at most this many staging registers
 * per thread, and this many with the accumulators. */
#define MAX_PREFETCH 16
#define MAX_PREFETCH_LIVE 80

static long long ll(int64_t v) { return (long long)v; }

/* A staged tile's allocated row length (floats per k) for `rows` rows and
 * a k step of bk. The threads staging a tile whose k is contiguous in
 * memory write it down a column (neighbouring threads: neighbouring k), so
 * the row length is padded to leave those writes in different banks: 32/bk
 * banks apart where bk divides 32, else odd. A tile staged along its rows
 * is written contiguously (row length = rows) inside the same array. */
static int64_t row_length(int64_t rows, int64_t bk) {
  if (bk == 1) return rows;
  if (bk >= 32 || 32 % bk != 0) return rows | 1;
  return rows + ((32 / bk - rows % 32) % 32 + 32) % 32;
}

void cu_demand_gemm(const cu_config_t *cfg, cu_demand_t *out) {
  const int64_t bm = cfg->block_m, bn = cfg->block_n, bk = cfg->block_k, tm = cfg->thread_m, tn = cfg->thread_n;
  if (bm < 1 || bn < 1 || bk < 1 || tm < 1 || tn < 1) {
    snprintf(out->reason, sizeof(out->reason), "block_m, block_n, block_k, thread_m and thread_n must be positive");
    return;
  }
  out->block[0] = bn / tn > 0 ? bn / tn : 1;
  out->block[1] = bm / tm > 0 ? bm / tm : 1;
  out->block[2] = 1;
  out->shared_bytes = 4 * bk * (row_length(bm, bk) + row_length(bn, bk));
  out->accumulators = tm * tn;
  if (bm % tm != 0)
    snprintf(out->reason, sizeof(out->reason), "thread_m = %lld does not divide block_m = %lld", ll(tm), ll(bm));
  else if (bn % tn != 0)
    snprintf(out->reason, sizeof(out->reason), "thread_n = %lld does not divide block_n = %lld", ll(tn), ll(bn));
}

/* The text of `cond1 && cond2 ...` for the guards that are not always
 * true, or "" when none is needed. */
static void guard_text(char *buf, size_t size, const char *const *conds, int count) {
  buf[0] = 0;
  size_t used = 0;
  for (int i = 0; i < count; ++i) {
    if (!conds[i]) continue;
    const int n = snprintf(buf + used, size - used, "%s%s", used ? " && " : "", conds[i]);
    if (n < 0 || (size_t)n >= size - used) return;
    used += (size_t)n;
  }
}

/* One operand's staging: a tile of `rows` (m or n) x BK, `reg` the staging
 * registers, `tile` the shared array (k-major, rows `ld` apart). */
typedef struct stage_t {
  const char *reg, *tile, *row, *load; /* "ra", "As", "m", g->load_a */
  int64_t rows, extent;                /* block_m, M */
  const char *base;                    /* the block's first row: "m0" */
  int k_contiguous;
  int64_t count, per_thread, ld;       /* rows * BK, registers, row length used */
} stage_t;

/* Registers <- global for the step starting at reduction index `k_base`. */
static void emit_stage_load(cu_emit_t *e, const stage_t *s, int64_t BK, int64_t K, int64_t threads,
                            const char *k_base, int ind) {
  char row_guard[64], k_guard[64], i_guard[64], guard[200];
  snprintf(row_guard, sizeof(row_guard), "%s < %lld", s->row, ll(s->extent));
  snprintf(k_guard, sizeof(k_guard), "k < %lld", ll(K));
  snprintf(i_guard, sizeof(i_guard), "i < %lld", ll(s->count));
  const char *conds[3] = {s->count % threads ? i_guard : NULL, s->extent % s->rows ? row_guard : NULL,
                          K % BK ? k_guard : NULL};
  guard_text(guard, sizeof(guard), conds, 3);
  /* The first step's base is "" (k from 0). */
  const char *k_plus = k_base[0] ? " + " : "";
  L(ind, "#pragma unroll");
  L(ind, "for (int r = 0; r < %lld; ++r) {", ll(s->per_thread));
  L(ind + 1, "const int i = r * %lld + tid;", ll(threads));
  if (s->k_contiguous)
    L(ind + 1, "const int %s = %s + i / %lld, k = %s%si %% %lld;", s->row, s->base, ll(BK), k_base, k_plus, ll(BK));
  else
    L(ind + 1, "const int %s = %s + i %% %lld, k = %s%si / %lld;", s->row, s->base, ll(s->rows), k_base, k_plus,
      ll(s->rows));
  if (guard[0])
    L(ind + 1, "%s[r] = %s ? %s : 0.0f;", s->reg, guard, s->load);
  else
    L(ind + 1, "%s[r] = %s;", s->reg, s->load);
  L(ind, "}");
}

/* Shared <- registers. */
static void emit_stage_store(cu_emit_t *e, const stage_t *s, int64_t BK, int64_t threads, int ind) {
  L(ind, "#pragma unroll");
  L(ind, "for (int r = 0; r < %lld; ++r) {", ll(s->per_thread));
  L(ind + 1, "const int i = r * %lld + tid;", ll(threads));
  const int guarded = s->count % threads != 0;
  if (guarded) L(ind + 1, "if (i < %lld)", ll(s->count));
  if (s->k_contiguous)
    L(ind + 1 + guarded, "%s[i %% %lld * %lld + i / %lld] = %s[r];", s->tile, ll(BK), ll(s->ld), ll(BK), s->reg);
  else
    L(ind + 1 + guarded, "%s[i / %lld * %lld + i %% %lld] = %s[r];", s->tile, ll(s->rows), ll(s->ld), ll(s->rows),
      s->reg);
  L(ind, "}");
}

hetc_plugin_status_t cu_emit_gemm(cu_emit_t *e, const cu_gemm_t *g, cu_launch_t **out) {
  const cu_config_t *c = &e->cfg;
  const int64_t BM = c->block_m, BN = c->block_n, BK = c->block_k, TM = c->thread_m, TN = c->thread_n;
  const int64_t TX = BN / TN, TY = BM / TM, threads = TX * TY;
  const int64_t gx = hetc_kit_ceil_div(g->N, BN), gy = hetc_kit_ceil_div(g->M, BM);
  *out = NULL;
  if (BM % TM || BN % TN || BK < 1)
    return cu_status(HETC_PLUGIN_STATUS_INVALID_ARGUMENT, "%s: GEMM tile %lldx%lldx%lld with threads of %lldx%lld",
                     cu_plugin_name, ll(BM), ll(BN), ll(BK), ll(TM), ll(TN));
  if (gx > INT32_MAX || gy > 65535 || g->batch > 65535 || g->batch < 1)
    return cu_status(HETC_PLUGIN_STATUS_UNSUPPORTED,
                     "%s: a GEMM grid of %lldx%lldx%lld blocks exceeds what a launch takes", cu_plugin_name, ll(gx),
                     ll(gy), ll(g->batch));
  stage_t sa = {"ra", "As", "m", g->load_a, BM, g->M, "m0", g->a_k_contiguous, BM * BK, 0,
                g->a_k_contiguous ? row_length(BM, BK) : BM};
  stage_t sb = {"rb", "Bs", "n", g->load_b, BN, g->N, "n0", g->b_k_contiguous, BN * BK, 0,
                g->b_k_contiguous ? row_length(BN, BK) : BN};
  sa.per_thread = hetc_kit_ceil_div(sa.count, threads);
  sb.per_thread = hetc_kit_ceil_div(sb.count, threads);

  L(0, "HK_KERNEL(%lld, %lld, 1) %s(%s) {", ll(TX), ll(TY), g->kernel, g->params);
  L(1, "HK_SHARED float As[%lld];", ll(BK * row_length(BM, BK)));
  L(1, "HK_SHARED float Bs[%lld];", ll(BK * row_length(BN, BK)));
  L(1, "const int tx = HK_TX, ty = HK_TY, tid = ty * %lld + tx;", ll(TX));
  L(1, "const int b = HK_BZ, m0 = HK_BY * %lld, n0 = HK_BX * %lld;", ll(BM), ll(BN));
  L(1, "float acc[%lld];", ll(TM * TN));
  L(1, "float ra[%lld], rb[%lld];", ll(sa.per_thread), ll(sb.per_thread));
  L(1, "#pragma unroll");
  L(1, "for (int x = 0; x < %lld; ++x) acc[x] = 0.0f;", ll(TM * TN));
  /* Prefetching keeps the staging registers live across the products: only
   * while they are few next to the accumulators. */
  const int64_t staging = sa.per_thread + sb.per_thread;
  const int prefetch = g->K > BK && staging <= MAX_PREFETCH && TM * TN + staging <= MAX_PREFETCH_LIVE;
  if (prefetch) {
    L(1, "{");
    emit_stage_load(e, &sa, BK, g->K, threads, "", 2);
    emit_stage_load(e, &sb, BK, g->K, threads, "", 2);
    L(1, "}");
  }
  L(1, "for (int k0 = 0; k0 < %lld; k0 += %lld) {", ll(g->K), ll(BK));
  if (!prefetch) {
    emit_stage_load(e, &sa, BK, g->K, threads, "k0", 2);
    emit_stage_load(e, &sb, BK, g->K, threads, "k0", 2);
  }
  emit_stage_store(e, &sa, BK, threads, 2);
  emit_stage_store(e, &sb, BK, threads, 2);
  L(2, "HK_BARRIER();");
  if (prefetch) {
    /* The next step's elements, in flight while this step computes. */
    L(2, "if (k0 + %lld < %lld) {", ll(BK), ll(g->K));
    L(3, "const int k1 = k0 + %lld;", ll(BK));
    emit_stage_load(e, &sa, BK, g->K, threads, "k1", 3);
    emit_stage_load(e, &sb, BK, g->K, threads, "k1", 3);
    L(2, "}");
  }
  L(2, "#pragma unroll");
  L(2, "for (int kk = 0; kk < %lld; ++kk) {", ll(BK));
  L(3, "float fa[%lld], fb[%lld];", ll(TM), ll(TN));
  L(3, "#pragma unroll");
  L(3, "for (int i = 0; i < %lld; ++i) fa[i] = As[kk * %lld + ty + i * %lld];", ll(TM), ll(sa.ld), ll(TY));
  L(3, "#pragma unroll");
  L(3, "for (int j = 0; j < %lld; ++j) fb[j] = Bs[kk * %lld + tx + j * %lld];", ll(TN), ll(sb.ld), ll(TX));
  L(3, "#pragma unroll");
  L(3, "for (int i = 0; i < %lld; ++i)", ll(TM));
  L(4, "#pragma unroll");
  L(4, "for (int j = 0; j < %lld; ++j) acc[i * %lld + j] += fa[i] * fb[j];", ll(TN), ll(TN));
  L(2, "}");
  L(2, "HK_BARRIER();");
  L(1, "}");
  /* The epilogue: outputs inside C only. */
  char m_guard[48], n_guard[48], guard[120];
  snprintf(m_guard, sizeof(m_guard), "m < %lld", ll(g->M));
  snprintf(n_guard, sizeof(n_guard), "n < %lld", ll(g->N));
  const char *conds[2] = {g->M % BM ? m_guard : NULL, g->N % BN ? n_guard : NULL};
  guard_text(guard, sizeof(guard), conds, 2);
  L(1, "#pragma unroll");
  L(1, "for (int i = 0; i < %lld; ++i) {", ll(TM));
  L(2, "const int m = m0 + ty + i * %lld;", ll(TY));
  L(2, "#pragma unroll");
  L(2, "for (int j = 0; j < %lld; ++j) {", ll(TN));
  L(3, "const int n = n0 + tx + j * %lld;", ll(TX));
  if (guard[0])
    L(3, "if (%s) {", guard);
  else
    L(3, "{");
  L(4, "const float v = acc[i * %lld + j];", ll(TN));
  const size_t length = strlen(g->store);
  hpc_strbuf_printf(&e->src, "        %s%s", g->store, length && g->store[length - 1] == '\n' ? "" : "\n");
  L(3, "}");
  L(2, "}");
  L(1, "}");
  L(0, "}");
  L(0, "%s", "");

  cu_launch_t *launch = cu_emit_launch(e, g->kernel);
  if (!launch)
    return cu_status(HETC_PLUGIN_STATUS_INTERNAL, "%s: more than %d launches", cu_plugin_name, CU_MAX_LAUNCHES);
  launch->grid[0] = (uint32_t)gx, launch->grid[1] = (uint32_t)gy, launch->grid[2] = (uint32_t)g->batch;
  launch->block[0] = (uint32_t)TX, launch->block[1] = (uint32_t)TY, launch->block[2] = 1;
  *out = launch;
  return NULL;
}

/* ------------------------------------------------------------------------ */
/* Dense                                                                    */
/* ------------------------------------------------------------------------ */

/* cu_emit_epilogue_store's statement as text (it writes into e->src). */
static void epilogue_text(cu_emit_t *e, hpc_strbuf_t *dst, const char *index, const char *channel) {
  const hpc_strbuf_t saved = e->src;
  e->src = *dst;
  cu_emit_epilogue_store(e, "out", index, channel, "v");
  *dst = e->src;
  e->src = saved;
}

/* out[N][units] = act(in[N][K] w[units][K]^T + bias + res): rows are the
 * GEMM's M, units its N (so that neighbouring threads store neighbouring
 * outputs), both operands read along k. */
hetc_plugin_status_t cu_emit_dense(cu_emit_t *e) {
  const hetc_plugin_workload_t *wl = e->wl;
  const int64_t rows = wl->inputs[0].shape[0], K = wl->inputs[0].shape[1], units = wl->output.shape[1];
  /* 32-bit index arithmetic where every index fits. */
  const int wide = rows * K > INT32_MAX || units * K > INT32_MAX || rows * units > INT32_MAX;
  const char *cast = wide ? "(long)" : "";

  e->num_inputs = wl->num_inputs;
  for (int32_t i = 0; i < wl->num_inputs; ++i) e->input_layouts[i] = hetc_kit_layout_row_major();
  e->output_layout = hetc_kit_layout_row_major();
  e->num_params = wl->epilogue.has_bias ? 2 : 1;
  e->param_bytes[0] = (uint64_t)(units * K) * 4;
  e->param_bytes[1] = (uint64_t)units * 4;
  e->workspace_bytes = 0;

  cu_emit_preamble(e, wl->epilogue.activation);
  cu_launch_t args;
  memset(&args, 0, sizeof(args));
  hpc_strbuf_t params, store;
  hpc_strbuf_init(&params);
  hpc_strbuf_init(&store);
  cu_emit_conv_params(e, &args, &params);
  char load_a[96], load_b[96], index[64];
  snprintf(load_a, sizeof(load_a), "in[%sm * %lld + k]", cast, ll(K));
  snprintf(load_b, sizeof(load_b), "w[%sn * %lld + k]", cast, ll(K));
  snprintf(index, sizeof(index), "%sm * %lld + n", cast, ll(units));
  epilogue_text(e, &store, index, "n");
  hetc_plugin_status_t s = NULL;
  if (params.failed || store.failed || !params.data || !store.data)
    s = cu_status(HETC_PLUGIN_STATUS_OUT_OF_MEMORY, "%s: out of memory emitting a kernel", cu_plugin_name);
  cu_launch_t *launch = NULL;
  if (!s) {
    const cu_gemm_t g = {.kernel = "dense_gemm", .params = params.data, .batch = 1, .M = rows, .N = units, .K = K,
                         .load_a = load_a, .load_b = load_b, .a_k_contiguous = 1, .b_k_contiguous = 1,
                         .store = store.data};
    s = cu_emit_gemm(e, &g, &launch);
  }
  hpc_strbuf_free(&params);
  hpc_strbuf_free(&store);
  if (s) return s;
  launch->num_args = args.num_args;
  memcpy(launch->args, args.args, sizeof(args.args));
  return NULL;
}
