/* Templates, their knob spaces and config validation.
 *
 * One description (cpu_space_t) per (workload, template) drives declaring
 * the space to the host, the default, and checking a config in build(). */
#include <stdio.h>
#include <string.h>

#include "cpu.h"

static const struct {
  const char *name;
  uint32_t version;
} templates[CPU_T_COUNT_] = {
    [CPU_T_CONV_NCHWC] = {"cpu_conv2d_nchwc", 2},
    [CPU_T_CONV_DEPTHWISE] = {"cpu_depthwise_nchwc", 2},
    [CPU_T_CONV_NCHW] = {"cpu_conv2d_nchw", 1},
    [CPU_T_CONV_IM2COL] = {"cpu_conv2d_im2col", 1},
    [CPU_T_CONV_WINOGRAD] = {"cpu_conv2d_winograd", 2},
    [CPU_T_DENSE] = {"cpu_dense", 2},
    [CPU_T_POOL] = {"cpu_pool2d", 1},
    [CPU_T_GLOBAL_POOL] = {"cpu_global_avg_pool2d", 1},
    [CPU_T_ELEMENTWISE] = {"cpu_elementwise", 1},
    [CPU_T_SOFTMAX] = {"cpu_softmax", 1},
    [CPU_T_CONCAT] = {"cpu_concat", 1},
    [CPU_T_LAYOUT] = {"cpu_layout_transform", 1},
    [CPU_T_BIAS_ADD] = {"cpu_bias_add", 1},
    [CPU_T_TRANSPOSE] = {"cpu_transpose", 1},
    [CPU_T_LOG_SOFTMAX] = {"cpu_log_softmax", 1},
    [CPU_T_CONV_GROUPED] = {"cpu_conv2d_grouped_nchwc", 1},
    [CPU_T_RESIZE] = {"cpu_resize", 1},
    [CPU_T_NORMALIZE] = {"cpu_normalize", 1},
    [CPU_T_MATMUL] = {"cpu_matmul", 1},
};

const char *cpu_template_name(int kind) {
  return kind >= 0 && kind < CPU_T_COUNT_ ? templates[kind].name : NULL;
}

uint32_t cpu_template_version(int kind) {
  return kind >= 0 && kind < CPU_T_COUNT_ ? templates[kind].version : 0;
}

static int op_template(int32_t op) {
  switch (op) {
    case HETC_PLUGIN_OP_DENSE: return CPU_T_DENSE;
    case HETC_PLUGIN_OP_MAX_POOL2D:
    case HETC_PLUGIN_OP_AVG_POOL2D: return CPU_T_POOL;
    case HETC_PLUGIN_OP_GLOBAL_AVG_POOL2D: return CPU_T_GLOBAL_POOL;
    case HETC_PLUGIN_OP_ELEMENTWISE: return CPU_T_ELEMENTWISE;
    case HETC_PLUGIN_OP_SOFTMAX: return CPU_T_SOFTMAX;
    case HETC_PLUGIN_OP_CONCAT: return CPU_T_CONCAT;
    case HETC_PLUGIN_OP_LAYOUT_TRANSFORM: return CPU_T_LAYOUT;
    case HETC_PLUGIN_OP_BIAS_ADD: return CPU_T_BIAS_ADD;
    case HETC_PLUGIN_OP_TRANSPOSE: return CPU_T_TRANSPOSE;
    case HETC_PLUGIN_OP_LOG_SOFTMAX: return CPU_T_LOG_SOFTMAX;
    case HETC_PLUGIN_OP_RESIZE: return CPU_T_RESIZE;
    case HETC_PLUGIN_OP_NORMALIZE: return CPU_T_NORMALIZE;
    case HETC_PLUGIN_OP_MATMUL: return CPU_T_MATMUL;
    default: return -1;
  }
}

int cpu_winograd_applicable(const hetc_plugin_workload_t *wl) {
  return wl->op == HETC_PLUGIN_OP_CONV2D && wl->groups == 1 && wl->kernel[0] == 3 &&
         wl->kernel[1] == 3 && wl->strides[0] == 1 && wl->strides[1] == 1 &&
         wl->dilation[0] == 1 && wl->dilation[1] == 1;
}

int cpu_grouped_block_ok(const hetc_plugin_workload_t *wl, int64_t tile_oc) {
  const int64_t K = wl->output.shape[1], KG = K / wl->groups;
  return tile_oc >= 8 && tile_oc % 8 == 0 && K % tile_oc == 0 &&
         (tile_oc % KG == 0 || KG % tile_oc == 0);
}

int64_t cpu_grouped_span(const hetc_plugin_workload_t *wl, int64_t tile_oc) {
  const int64_t KG = wl->output.shape[1] / wl->groups, CG = wl->inputs[0].shape[1] / wl->groups;
  return tile_oc >= KG ? tile_oc / KG * CG : CG;
}

/* The grouped template's output blocks: every multiple of 8 up to 64 that
 * cpu_grouped_block_ok takes, whatever the ISA's width (with 4 channels a
 * group, a block of 8 in 8-lane vectors computes half zeros, one of 16
 * three quarters); none: the template does not apply. */
static int32_t grouped_oc_blocks(const hetc_plugin_workload_t *wl, int64_t out[8]) {
  int32_t n = 0;
  for (int64_t b = 8; b <= 64; b += 8)
    if (cpu_grouped_block_ok(wl, b)) out[n++] = b;
  return n;
}

/* The conv2d templates that apply to a workload, the default first. */
static int32_t conv_templates(const hetc_plugin_workload_t *wl, int kinds[4]) {
  int32_t n = 0;
  int64_t blocks[8];
  if (hetc_kit_conv_is_depthwise(wl)) {
    kinds[n++] = CPU_T_CONV_DEPTHWISE;
  } else if (wl->groups > 1 && grouped_oc_blocks(wl, blocks) > 0) {
    kinds[n++] = CPU_T_CONV_GROUPED;
  } else if (wl->groups == 1) {
    /* Winograd first where it applies to planes of at least 14 x 14: 2.3-3x
     * the direct kernel on ResNet-50's 3x3 stride-1 layers there, while on
     * 7 x 7 its 4 x 4 tiles waste a third of the work (tests/bench). */
    const int winograd = cpu_winograd_applicable(wl);
    if (winograd && wl->output.shape[2] * wl->output.shape[3] >= 196)
      kinds[n++] = CPU_T_CONV_WINOGRAD;
    kinds[n++] = CPU_T_CONV_NCHWC;
    kinds[n++] = CPU_T_CONV_IM2COL;
    if (winograd && wl->output.shape[2] * wl->output.shape[3] < 196)
      kinds[n++] = CPU_T_CONV_WINOGRAD;
  }
  kinds[n++] = CPU_T_CONV_NCHW;
  return n;
}

int32_t cpu_workload_check(const hetc_plugin_workload_t *wl, char *reason, size_t reason_size) {
  const int32_t code = hpc_workload_check(wl, reason, reason_size);
  if (code) return code;
  hetc_kit_reason_t r = {reason, reason_size};
  if (wl->op == HETC_PLUGIN_OP_RESIZE &&
      (wl->output.shape[2] > CPU_RESIZE_MAX_EXTENT || wl->output.shape[3] > CPU_RESIZE_MAX_EXTENT))
    return hetc_kit_refuse(&r, HETC_PLUGIN_STATUS_UNSUPPORTED,
                           "resize: output of %lldx%lld, more than %d rows or columns", (long long)wl->output.shape[2],
                           (long long)wl->output.shape[3], CPU_RESIZE_MAX_EXTENT);
  return 0;
}

int32_t cpu_template_count(const hetc_plugin_workload_t *wl) {
  if (cpu_workload_check(wl, NULL, 0) != 0) return 0;
  int kinds[4];
  if (wl->op == HETC_PLUGIN_OP_CONV2D) return conv_templates(wl, kinds);
  /* Every other op the kit's checks accept has one template. */
  return op_template(wl->op) >= 0 ? 1 : 0;
}

int cpu_template_kind(const hetc_plugin_workload_t *wl, int32_t index) {
  int32_t count = cpu_template_count(wl);
  if (index < 0 || index >= count) return -1;
  int kinds[4];
  if (wl->op == HETC_PLUGIN_OP_CONV2D) return conv_templates(wl, kinds) > index ? kinds[index] : -1;
  return op_template(wl->op);
}

int64_t cpu_im2col_panel_bytes(int64_t tiles, int64_t reg_n, int64_t tile_k) {
  return tiles * reg_n * tile_k * 4;
}

int64_t cpu_winograd_tiles(const hetc_plugin_workload_t *wl, int64_t tile_m) {
  return hetc_kit_ceil_div(wl->output.shape[2], tile_m) * hetc_kit_ceil_div(wl->output.shape[3], tile_m);
}

int64_t cpu_im2col_chunk_rows(const hetc_plugin_workload_t *wl, const cpu_config_t *cfg) {
  const int64_t rows =
      hetc_kit_ceil_div(wl->inputs[0].shape[1], cfg->tile_ic) * wl->kernel[0] * wl->kernel[1];
  const int64_t chunk = cfg->tile_k / cfg->tile_ic;
  return chunk < 1 ? 1 : chunk > rows ? rows : chunk;
}

/* ------------------------------------------------------------------------ */

/* The ISA's registers (16 ymm, or 32 zmm/ymm) must hold reg_n x V
 * accumulators, the V weight vectors of the current input channel and the
 * broadcast input: any more and the inner loop spills. */
int cpu_reg_block_fits(const cpu_isa_t *isa, int64_t reg_n, int64_t tile_oc) {
  const int64_t vectors = tile_oc / cpu_isa_block_lanes(isa, tile_oc);
  return reg_n >= 1 && tile_oc >= 8 && reg_n * vectors + vectors + 1 <= isa->registers;
}

/* The largest reg_n knob value: 16 columns, or 24 with 32 registers (one
 * 16-lane vector of output channels leaves room for 30). */
static int64_t reg_n_max(const cpu_isa_t *isa) { return isa->registers >= 32 ? 24 : 16; }

static cpu_knob_spec_t *add_knob(cpu_space_t *s, const char *name, int annotate,
                                 size_t offset) {
  cpu_knob_spec_t *k = &s->knobs[s->num_knobs++];
  memset(k, 0, sizeof(*k));
  k->name = name;
  k->annotate = annotate;
  k->offset = offset;
  return k;
}

static void add_value(cpu_knob_spec_t *k, int64_t v) { k->values[k->num_values++] = v; }

/* Channel blocks: multiples of `lanes` (8, or 16 for output channels in
 * AVX-512 vectors) up to 64, those not above the channel count rounded up
 * to 8; with 16 lanes, 8 too where the channels are not a multiple of 16
 * (24 channels in blocks of 16 would compute 8 of padding). Default: the
 * largest not above `pref`. With `exact_small`, fewer than 8 channels also
 * get a block of exactly that many, the default (an RGB input padded to 8
 * would waste 5/8 of the FMAs). */
static void add_tile_knob(cpu_space_t *s, const char *name, size_t offset, int64_t channels,
                          int64_t pref, int exact_small, int lanes) {
  cpu_knob_spec_t *k = add_knob(s, name, 0, offset);
  const int64_t limit = (channels + 7) / 8 * 8;
  if (exact_small && channels >= 1 && channels < 8) {
    add_value(k, channels);
    k->default_value = channels;
    pref = 0;
  }
  for (int64_t b = 8; b <= 64 && b <= limit; b += 8) {
    if (b % lanes != 0 && !(b == 8 && channels % lanes != 0)) continue;
    add_value(k, b);
    if (b <= pref) k->default_value = b;
  }
  /* Every block offered is above `pref` (8, where 16 lanes start at 16). */
  if (k->default_value == 0 && k->num_values > 0) k->default_value = k->values[0];
}

/* The ow register block for a channel block: at most the largest for which
 * the reg_n x tile_oc/8 accumulators, the tile_oc/8 weight vectors held
 * across the block and the broadcast input all fit the 16 ymm registers
 * (measured: a block that needs more spills in the inner loop and runs at
 * about half the speed), at most OW. Of that and one less, the one whose
 * blocks over the row cost least, a block of r columns costing as if it had
 * at least the 8 independent accumulators FMA latency needs (OW 14: 5+5+4
 * rather than 6+6+2; OW 7: 5+2 rather than 6+1). `ow` is the row the
 * kernel blocks (all OH x OW when it merges rows), `limit` the largest
 * value the knob has. */
static int64_t default_reg_n(const cpu_isa_t *isa, int64_t ow, int64_t limit, int64_t tile_oc) {
  const int64_t lanes = cpu_isa_block_lanes(isa, tile_oc);
  const int64_t v = tile_oc / lanes < 1 ? 1 : tile_oc / lanes;
  int64_t maxr = 1;
  while (maxr < 12 && (maxr + 1) * v + v + 1 <= isa->registers) ++maxr;
  if (maxr > ow) maxr = ow;
  if (maxr > limit) maxr = limit;
  if (maxr < 1) return 1;
  const int64_t floor_cols = (8 + v - 1) / v;
  int64_t best = maxr, best_cost = -1;
  for (int64_t r = maxr; r >= 1 && r >= maxr - 1; --r) {
    const int64_t full = ow / r, rem = ow % r;
    int64_t cost = full * (r > floor_cols ? r : floor_cols);
    if (rem > 0) cost += rem > floor_cols ? rem : floor_cols;
    if (best_cost < 0 || cost < best_cost) {
      best = r;
      best_cost = cost;
    }
  }
  return best;
}

/* reg_n over 1 .. min(reg_n_max, extent), under the register constraint;
 * the default by default_reg_n for blocks along `extent`. */
static void add_reg_knob(cpu_space_t *s, int64_t extent, int64_t tile_oc) {
  cpu_knob_spec_t *k = add_knob(s, "reg_n", 0, offsetof(cpu_config_t, reg_n));
  const int64_t most = reg_n_max(s->isa) < extent ? reg_n_max(s->isa) : extent;
  for (int64_t r = 1; r <= most; ++r) add_value(k, r);
  k->default_value = default_reg_n(s->isa, extent, most, tile_oc);
  s->reg_constraint = 1;
}

static void add_parallel_knob(cpu_space_t *s, int64_t default_value) {
  cpu_knob_spec_t *k = add_knob(s, "parallel", 0, offsetof(cpu_config_t, parallel));
  add_value(k, 0);
  add_value(k, 1);
  k->default_value = default_value;
}

/* The direct NCHWc kernels' parallel axis: 0 (n, ocb) planes, 1 (n, ocb,
 * oh) rows, 2 (n, oh, ocb) rows with the output blocks innermost, so that
 * consecutive iterations read the same input rows while each block's
 * weights come round again. By default 2 where the weights are smaller
 * than the input, else 1. Timed alone, with the input in cache, the orders
 * tie on ResNet-50's layers except the strided 1x1 ones (c256 56 x 56 ->
 * k512 stride 2: 0.46 ms at 2, 0.53 at 0 and 1); inside a model the input
 * comes from memory, which order 1 streams once per output block. */
static void add_direct_parallel_knob(cpu_space_t *s, const hetc_plugin_workload_t *wl) {
  add_parallel_knob(s, 1);
  cpu_knob_spec_t *k = &s->knobs[s->num_knobs - 1];
  add_value(k, 2);
  const hetc_plugin_tensor_t *in = &wl->inputs[0];
  const int64_t weights = wl->output.shape[1] * in->shape[1] / wl->groups * wl->kernel[0] * wl->kernel[1];
  const int64_t input = in->shape[0] * in->shape[1] * in->shape[2] * in->shape[3];
  k->default_value = weights < input ? 2 : 1;
}

/* Below this many pixel or tile blocks the im2col and Winograd defaults
 * also split the output channels across threads, at the price of packing
 * or transforming the input once per channel block (measured on ResNet-50:
 * with 3 blocks on 2 cores that price is 2.4x the kernel time; with one
 * block a core would idle). */
#define MIN_PARALLEL_BLOCKS 2

static void describe_im2col(const hetc_plugin_workload_t *wl, cpu_space_t *out) {
  const int64_t C = wl->inputs[0].shape[1], K = wl->output.shape[1];
  const int64_t P = wl->output.shape[2] * wl->output.shape[3];
  add_tile_knob(out, "tile_ic", offsetof(cpu_config_t, tile_ic), C, 16, 1, 8);
  add_tile_knob(out, "tile_oc", offsetof(cpu_config_t, tile_oc), K, 16, 0, out->isa->lanes);
  add_reg_knob(out, P, out->knobs[1].default_value);
  /* Reduction chunks of 16 .. 4096 elements; one at least the whole
   * reduction (with channels padded to 64) packs it in one chunk. */
  const int64_t whole = (C + 63) / 64 * 64 * wl->kernel[0] * wl->kernel[1];
  cpu_knob_spec_t *k = add_knob(out, "tile_k", 0, offsetof(cpu_config_t, tile_k));
  for (int64_t v = 16; v <= 4096; v *= 2) {
    add_value(k, v);
    if (v >= whole) break;
  }
  k->default_value = k->values[k->num_values - 1] < 256 ? k->values[k->num_values - 1] : 256;
  k = add_knob(out, "tiles", 0, offsetof(cpu_config_t, tiles));
  for (int64_t v = 1; v <= 16; v *= 2) add_value(k, v);
  k->default_value = 4;
  out->panel_constraint = 1;
  const int64_t blocks = wl->inputs[0].shape[0] * hetc_kit_ceil_div(P, out->knobs[2].default_value * 4);
  add_parallel_knob(out, blocks < MIN_PARALLEL_BLOCKS);
}

/* Winograd (gen_winograd.c): the product buffer of one main iteration is
 * bounded by construction, so every register-feasible config is offered.
 * Defaults: 16-channel blocks, the tile block default_reg_n picks over the
 * tiles, F(4 x 4) where the planes are at least 28 x 28, else F(2 x 2),
 * whose weights are 16/9 rather than 36/9 the direct kernel's and, inside
 * a model, come from memory; whole chunks per iteration unless that leaves
 * fewer than MIN_PARALLEL_BLOCKS iterations a thread. */
static void describe_winograd(const hetc_plugin_workload_t *wl, cpu_space_t *out) {
  const int64_t C = wl->inputs[0].shape[1], K = wl->output.shape[1];
  add_tile_knob(out, "tile_ic", offsetof(cpu_config_t, tile_ic), C, 16, 0, 8);
  add_tile_knob(out, "tile_oc", offsetof(cpu_config_t, tile_oc), K, 16, 0, out->isa->lanes);
  const int64_t tiles2 = cpu_winograd_tiles(wl, 2), tiles4 = cpu_winograd_tiles(wl, 4);
  const int big = wl->output.shape[2] * wl->output.shape[3] >= 28 * 28;
  const int64_t tiles = big ? tiles4 : tiles2;
  add_reg_knob(out, tiles2, out->knobs[1].default_value);
  const int64_t most = reg_n_max(out->isa) < tiles ? reg_n_max(out->isa) : tiles;
  out->knobs[2].default_value = default_reg_n(out->isa, tiles, most, out->knobs[1].default_value);
  cpu_knob_spec_t *k = add_knob(out, "tile_m", 0, offsetof(cpu_config_t, tile_m));
  add_value(k, 2);
  add_value(k, 4);
  k->default_value = big ? 4 : 2;
  const int64_t ocb = hetc_kit_ceil_div(K, out->knobs[1].default_value);
  add_parallel_knob(out, wl->inputs[0].shape[0] * ocb < MIN_PARALLEL_BLOCKS * 4);
}

/* The direct kernels' (NCHWc, grouped) reg_n (1 up to `extent`, at most
 * reg_n_max; the default for blocks along `row` with `tile_oc`, at most
 * `default_cap`), unroll_kw and parallel knobs. */
static void add_direct_knobs(const cpu_isa_t *isa, const hetc_plugin_workload_t *wl, cpu_space_t *out,
                             int64_t extent, int64_t row, int64_t tile_oc, int64_t default_cap) {
  cpu_knob_spec_t *k = add_knob(out, "reg_n", 0, offsetof(cpu_config_t, reg_n));
  const int64_t most = reg_n_max(isa) < extent ? reg_n_max(isa) : extent;
  for (int64_t r = 1; r <= most; ++r) add_value(k, r);
  k->default_value = default_reg_n(isa, row, most < default_cap ? most : default_cap, tile_oc);
  out->reg_constraint = 1;
  k = add_knob(out, "unroll_kw", 1, offsetof(cpu_config_t, unroll_kw));
  add_value(k, 0);
  if (wl->kernel[1] > 1) add_value(k, 1);
  k->default_value = wl->kernel[1] > 1 ? 1 : 0;
  add_direct_parallel_knob(out, wl);
}

/* Grouped conv: tile_oc over grouped_oc_blocks, by default the one nearest
 * a group's output channels (at least 8, at most 32: no zeros computed
 * where a group fills vectors); tile_ic over the divisors of a group's input
 * channels that are multiples of 8 up to 64 (or, where there are none, the
 * largest divisor up to 64), so that it divides every block's span; then
 * add_direct_knobs. */
static void describe_grouped(const cpu_isa_t *isa, const hetc_plugin_workload_t *wl,
                             cpu_space_t *out) {
  const int64_t CG = wl->inputs[0].shape[1] / wl->groups, KG = wl->output.shape[1] / wl->groups;
  const int64_t OW = wl->output.shape[3];
  cpu_knob_spec_t *k = add_knob(out, "tile_ic", 0, offsetof(cpu_config_t, tile_ic));
  for (int64_t b = 8; b <= 64 && b <= CG; b += 8)
    if (CG % b == 0) {
      add_value(k, b);
      if (b <= 32) k->default_value = b;
    }
  if (k->num_values == 0) {
    int64_t d = CG < 64 ? CG : 64;
    while (CG % d != 0) --d;
    add_value(k, d);
    k->default_value = d;
  }
  int64_t blocks[8];
  const int32_t nblocks = grouped_oc_blocks(wl, blocks);
  const int64_t want = KG < 8 ? 8 : KG > 32 ? 32 : KG;
  k = add_knob(out, "tile_oc", 0, offsetof(cpu_config_t, tile_oc));
  for (int32_t i = 0; i < nblocks; ++i) {
    add_value(k, blocks[i]);
    if (blocks[i] <= want || k->num_values == 1) k->default_value = blocks[i];
  }
  add_direct_knobs(isa, wl, out, OW, OW, k->default_value, reg_n_max(isa));
}

/* Issue slots of one matmul block of `rows` x `vectors` over K: an FMA a
 * slot, but at least 8 a k step (two FMA pipes times 4 cycles of latency:
 * fewer accumulators wait on their own sums) and at least the loads of A
 * and B a step; then storing the block and setting it up. */
static int64_t matmul_block_cost(int64_t rows, int64_t vectors, int64_t K) {
  int64_t step = rows * vectors;
  if (step < 8) step = 8;
  if (step < rows + vectors) step = rows + vectors;
  return K * step + rows * vectors + 16;
}

/* The whole product's cost for one batch: whole row blocks and the last
 * one of M % rows, each across whole column blocks and a masked rest. */
static int64_t matmul_cost(int64_t M, int64_t K, int64_t N, int64_t lanes, int64_t rows, int64_t vectors) {
  const int64_t width = vectors * lanes, whole = N / width, rest = hetc_kit_ceil_div(N % width, lanes);
  int64_t cost = 0;
  const int64_t heights[2] = {rows, M % rows}, counts[2] = {M / rows, 1};
  for (int h = 0; h < 2; ++h) {
    if (heights[h] == 0) continue;
    int64_t row = whole * matmul_block_cost(heights[h], vectors, K);
    if (rest > 0) row += matmul_block_cost(heights[h], rest, K);
    cost += counts[h] * row;
  }
  return cost;
}

/* matmul: tile_oc, the columns of N a block, in whole vectors of the
 * ISA's width (no wider than N rounded up to one); reg_n, the rows of M,
 * 1 up to M; both under the register constraint. The default is the block
 * matmul_cost finds cheapest over M x N, the larger on a tie (fewer passes
 * over A and B), among blocks of at least 4 rows and 2 vectors (fewer
 * where M or N is that small): a B vector then feeds 4 FMAs and a
 * broadcast of A 2, and the count above, blind to loads, misjudges blocks
 * that need more of them. Measured on ViT-B's scores and Swin's windows
 * (2-core EPYC, AVX2): 2 rows x 5 vectors took 350 us where 6 x 2 took
 * 288, and 14 x 1 vector 280 us where 6 x 2 took 164. */
static void describe_matmul(const hetc_plugin_workload_t *wl, cpu_space_t *out) {
  int64_t batches, M, K, N;
  cpu_matmul_dims(wl, &batches, &M, &K, &N);
  const int64_t lanes = out->isa->lanes;
  cpu_knob_spec_t *tk = add_knob(out, "tile_oc", 0, offsetof(cpu_config_t, tile_oc));
  for (int64_t v = 1; v <= 8 && (v - 1) * lanes < N; ++v)
    if (cpu_reg_block_fits(out->isa, 1, v * lanes)) add_value(tk, v * lanes);
  cpu_knob_spec_t *rk = add_knob(out, "reg_n", 0, offsetof(cpu_config_t, reg_n));
  const int64_t most = reg_n_max(out->isa) < M ? reg_n_max(out->isa) : M;
  for (int64_t r = 1; r <= most; ++r) add_value(rk, r);
  out->reg_constraint = 1;
  const int64_t min_rows = M < 4 ? M : 4, min_vectors = N <= lanes ? 1 : 2;
  int64_t best = -1;
  for (int32_t i = 0; i < tk->num_values; ++i)
    for (int64_t r = min_rows; r <= most; ++r) {
      const int64_t width = tk->values[i];
      if (width / lanes < min_vectors || !cpu_reg_block_fits(out->isa, r, width)) continue;
      const int64_t cost = matmul_cost(M, K, N, lanes, r, width / lanes);
      if (best < 0 || cost < best || (cost == best && r * width > rk->default_value * tk->default_value)) {
        best = cost;
        tk->default_value = width;
        rk->default_value = r;
      }
    }
}

void cpu_space_describe(const cpu_isa_t *isa, const hetc_plugin_workload_t *wl, int kind,
                        cpu_space_t *out) {
  memset(out, 0, sizeof(*out));
  out->isa = isa;
  const int lanes = isa->lanes;
  if (kind == CPU_T_CONV_NCHWC) {
    const int64_t C = wl->inputs[0].shape[1], K = wl->output.shape[1];
    const int64_t OW = wl->output.shape[3];
    /* Defaults measured on the ResNet-50 layers (2-core AVX2 host): 16
     * output channels x 5-6 columns (up to 15 ymm registers); input-channel
     * blocks of 32 for spatial kernels, where the per-(kh, kw) loop overhead
     * otherwise dominates (16: up to 1.25x slower), 16 for 1x1 kernels. */
    const int64_t spatial = wl->kernel[0] * wl->kernel[1] > 1;
    add_tile_knob(out, "tile_ic", offsetof(cpu_config_t, tile_ic), C, spatial ? 32 : 16, 1, 8);
    /* Output channels: with 16-lane vectors, 32 on rows under 12 columns
     * (7 x 7 planes), where one vector of channels keeps too few
     * accumulators to cover the FMA latency; else 16. Fewer than 8 input
     * channels (the RGB stem): the ic loop is too short to hide the
     * per-(kh, kw) loads, so 8 channels x 12 columns with 8 lanes; with 16
     * lanes 32 channels x at most 6 columns, two FMAs per load (ResNet-50's
     * stem on Zen 5: 0.47 ms, against 0.86 at 16 x 12 and 0.89 at 32 x 12).
     * A merged row (1x1) is long. */
    const int64_t merged = wl->output.shape[2] * OW;
    const int64_t short_row = OW < 12 && !cpu_conv_nchwc_flat(wl, 16);
    const int stem = C < 8;
    add_tile_knob(out, "tile_oc", offsetof(cpu_config_t, tile_oc), K,
                  stem ? (lanes == 16 ? 32 : 8) : lanes == 16 && short_row ? 32 : 16, 0, lanes);
    const int64_t toc = out->knobs[1].default_value;
    /* Where rows can merge (1x1, stride 1, unpadded), a block may span a
     * merged row: up to OH x OW columns; elsewhere more than OW would only
     * repeat the OW config. */
    add_direct_knobs(isa, wl, out, cpu_conv_nchwc_flat(wl, 8) ? merged : OW,
                     cpu_conv_nchwc_flat(wl, toc) ? merged : OW, toc,
                     stem && lanes == 16 ? 6 : reg_n_max(isa));
  } else if (kind == CPU_T_CONV_GROUPED) {
    describe_grouped(isa, wl, out);
  } else if (kind == CPU_T_CONV_DEPTHWISE) {
    add_tile_knob(out, "tile_oc", offsetof(cpu_config_t, tile_oc), wl->output.shape[1], 16, 0, lanes);
  } else if (kind == CPU_T_CONV_IM2COL) {
    describe_im2col(wl, out);
  } else if (kind == CPU_T_CONV_WINOGRAD) {
    describe_winograd(wl, out);
  } else if (kind == CPU_T_DENSE) {
    const int64_t N = wl->inputs[0].shape[0];
    add_tile_knob(out, "tile_oc", offsetof(cpu_config_t, tile_oc), wl->output.shape[1], 16, 0, lanes);
    add_reg_knob(out, N, out->knobs[0].default_value);
  } else if (kind == CPU_T_MATMUL) {
    describe_matmul(wl, out);
  }
  /* Other templates have no knobs. */
}

/* ------------------------------------------------------------------------ */


static int64_t knob_value(const hetc_plugin_config_t *config, int32_t i) {
  return config->knobs[i].count == 1 ? config->knobs[i].values[0] : -1;
}

static int reg_fn(const hetc_plugin_config_t *config, const void *user_data) {
  if (!config || config->num_knobs != 2) return 0;
  return cpu_reg_block_fits(user_data, knob_value(config, 0), knob_value(config, 1));
}

static int panel_fn(const hetc_plugin_config_t *config, const void *user_data) {
  (void)user_data;
  if (!config || config->num_knobs != 3) return 0;
  return cpu_im2col_panel_bytes(knob_value(config, 0), knob_value(config, 1),
                                knob_value(config, 2)) <= CPU_STACK_BUFFER_BYTES;
}

hetc_plugin_status_t cpu_space_define(const cpu_space_t *space,
                                      hetc_plugin_space_t *host_space) {
  const hetc_plugin_host_t *h = cpu_host;
  hetc_plugin_status_t s = NULL;
  for (int32_t i = 0; i < space->num_knobs && !s; ++i) {
    const cpu_knob_spec_t *k = &space->knobs[i];
    s = k->annotate ? h->space_define_annotate(host_space, k->name, k->values, k->num_values)
                    : h->space_define_knob(host_space, k->name, k->values, k->num_values);
  }
  if (!s && space->reg_constraint) {
    /* Register tiles that would spill are never offered. */
    static const char *const names[2] = {"reg_n", "tile_oc"};
    s = h->space_add_constraint(host_space, names, 2, reg_fn, space->isa);
  }
  if (!s && space->panel_constraint) {
    static const char *const names[3] = {"tiles", "reg_n", "tile_k"};
    s = h->space_add_constraint(host_space, names, 3, panel_fn, NULL);
  }
  if (s) return s;
  hetc_plugin_knob_value_t knobs[CPU_MAX_KNOBS];
  int64_t values[CPU_MAX_KNOBS];
  for (int32_t i = 0; i < space->num_knobs; ++i) {
    values[i] = space->knobs[i].default_value;
    knobs[i].name = space->knobs[i].name;
    knobs[i].count = 1;
    knobs[i].values = &values[i];
  }
  hetc_plugin_config_t config = {space->num_knobs, knobs};
  return h->space_set_default(host_space, &config);
}

static int64_t *field(cpu_config_t *c, const cpu_knob_spec_t *k) {
  return (int64_t *)((char *)c + k->offset);
}

static const int64_t *cfield(const cpu_config_t *c, const cpu_knob_spec_t *k) {
  return (const int64_t *)((const char *)c + k->offset);
}

hetc_plugin_status_t cpu_config_parse(const cpu_space_t *space,
                                      const hetc_plugin_config_t *config,
                                      cpu_config_t *out) {
  memset(out, 0, sizeof(*out));
  for (int32_t i = 0; i < space->num_knobs; ++i)
    *field(out, &space->knobs[i]) = space->knobs[i].default_value;
  if (config) {
    if (config->num_knobs < 0 || (config->num_knobs > 0 && !config->knobs))
      return cpu_status(HETC_PLUGIN_STATUS_INVALID_ARGUMENT, "cpu: malformed config (%d knobs)",
                        config->num_knobs);
    for (int32_t j = 0; j < config->num_knobs; ++j) {
      const hetc_plugin_knob_value_t *kv = &config->knobs[j];
      if (!kv->name)
        return cpu_status(HETC_PLUGIN_STATUS_INVALID_ARGUMENT, "cpu: config knob %d has no name",
                          j);
      int32_t found = -1;
      for (int32_t i = 0; i < space->num_knobs; ++i)
        if (strcmp(space->knobs[i].name, kv->name) == 0) found = i;
      if (found < 0)
        return cpu_status(HETC_PLUGIN_STATUS_INVALID_ARGUMENT,
                          "cpu: config has knob '%s', which this template's space does not "
                          "define",
                          kv->name);
      for (int32_t i = 0; i < j; ++i)
        if (config->knobs[i].name && strcmp(config->knobs[i].name, kv->name) == 0)
          return cpu_status(HETC_PLUGIN_STATUS_INVALID_ARGUMENT,
                            "cpu: config gives knob '%s' twice", kv->name);
      const cpu_knob_spec_t *k = &space->knobs[found];
      if (kv->count != 1 || !kv->values)
        return cpu_status(HETC_PLUGIN_STATUS_INVALID_ARGUMENT,
                          "cpu: knob '%s' takes exactly one value, got %d", kv->name, kv->count);
      int ok = 0;
      for (int32_t v = 0; v < k->num_values; ++v)
        if (k->values[v] == kv->values[0]) ok = 1;
      if (!ok)
        return cpu_status(HETC_PLUGIN_STATUS_INVALID_ARGUMENT,
                          "cpu: knob '%s' = %lld is outside the space", kv->name,
                          (long long)kv->values[0]);
      *field(out, k) = kv->values[0];
    }
    if (config->num_knobs != space->num_knobs)
      return cpu_status(HETC_PLUGIN_STATUS_INVALID_ARGUMENT,
                        "cpu: config has %d knobs, the space %d", config->num_knobs,
                        space->num_knobs);
  }
  if (space->reg_constraint && !cpu_reg_block_fits(space->isa, out->reg_n, out->tile_oc)) {
    const int64_t vectors = out->tile_oc / cpu_isa_block_lanes(space->isa, out->tile_oc);
    return cpu_status(HETC_PLUGIN_STATUS_DEVICE_LIMITS,
                      "cpu: reg_n %lld x tile_oc %lld needs %lld vector registers, %s has %d",
                      (long long)out->reg_n, (long long)out->tile_oc,
                      (long long)((out->reg_n + 1) * vectors + 1), space->isa->title,
                      space->isa->registers);
  }
  if (space->panel_constraint &&
      cpu_im2col_panel_bytes(out->tiles, out->reg_n, out->tile_k) > CPU_STACK_BUFFER_BYTES)
    return cpu_status(HETC_PLUGIN_STATUS_DEVICE_LIMITS,
                      "cpu: tiles %lld x reg_n %lld x tile_k %lld needs a %lld-byte panel, the "
                      "stack budget is %d",
                      (long long)out->tiles, (long long)out->reg_n, (long long)out->tile_k,
                      (long long)cpu_im2col_panel_bytes(out->tiles, out->reg_n, out->tile_k),
                      CPU_STACK_BUFFER_BYTES);
  return NULL;
}

void cpu_config_describe(const cpu_space_t *space, const cpu_config_t *config,
                         hpc_strbuf_t *sb) {
  if (space->num_knobs == 0) {
    hpc_strbuf_printf(sb, "(no knobs)");
    return;
  }
  for (int32_t i = 0; i < space->num_knobs; ++i)
    hpc_strbuf_printf(sb, "%s%s=%lld", i ? " " : "", space->knobs[i].name,
                      (long long)*cfield(config, &space->knobs[i]));
}
