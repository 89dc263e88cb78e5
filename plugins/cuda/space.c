/* Templates, their knob spaces, config validation and the check of a
 * config's demand (block shape, shared memory, accumulators) against the
 * device.
 *
 * One description (cu_space_t) per (workload, template) drives declaring
 * the space, choosing the default and checking a config in build(), so they
 * cannot drift apart. The same demand function (each template's file owns
 * its own) feeds the space's constraint, so the tuner never proposes what
 * the device refuses, and build()'s check, so a config handed in directly
 * is refused with the limit named.
 *
 * The spaces are AutoTVM's for its CUDA conv2d schedules (conv2d_direct and its
 * NHWC variant), with
 * the research's enlargements available as space overrides: the NHWC
 * template's thread knobs are optional knobs of the NCHW template, and
 * api/space-overrides.md's `add` takes the larger candidates. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cu.h"
#include "plugin_gpu_ops.h"
#include "plugin_intern.h"

static const struct {
  const char *name;
  uint32_t version;
} templates[CU_T_COUNT_] = {
    [CU_T_CONV_NCHW] = {"cuda_conv2d_nchw", 1},
    [CU_T_CONV_NHWC] = {"cuda_conv2d_nhwc", 1},
    [CU_T_CONV_WINOGRAD] = {"cuda_conv2d_winograd", 1},
    [CU_T_CONV_IGEMM_TC] = {"cuda_conv2d_implicit_gemm_tf32", 1},
    [CU_T_CONV_DEPTHWISE] = {"cuda_conv2d_depthwise", 1},
    [CU_T_DENSE] = {"cuda_dense_gemm", 1},
    [CU_T_POOL] = {"cuda_pool2d", 1},
    [CU_T_GLOBAL_POOL] = {"cuda_global_avg_pool2d", 1},
    [CU_T_ELEMENTWISE] = {"cuda_elementwise", 1},
    [CU_T_SOFTMAX] = {"cuda_softmax", 1},
    [CU_T_CONCAT] = {"cuda_concat", 1},
    [CU_T_LAYOUT] = {"cuda_layout_transform", 1},
    [CU_T_BIAS_ADD] = {"cuda_bias_add", 1},
    [CU_T_TRANSPOSE] = {"cuda_transpose", 1},
    [CU_T_LOG_SOFTMAX] = {"cuda_log_softmax", 1},
    [CU_T_RESIZE] = {"cuda_resize", 1},
    [CU_T_NORMALIZE] = {"cuda_normalize", 1},
    [CU_T_MATMUL] = {"cuda_matmul", 1},
};

const char *cu_template_name(int kind) { return kind >= 0 && kind < CU_T_COUNT_ ? templates[kind].name : NULL; }

uint32_t cu_template_version(int kind) { return kind >= 0 && kind < CU_T_COUNT_ ? templates[kind].version : 0; }

static int winograd_applicable(const hetc_plugin_workload_t *wl) {
  return wl->groups == 1 && wl->kernel[0] == 3 && wl->kernel[1] == 3 && wl->strides[0] == 1 &&
         wl->strides[1] == 1 && wl->dilation[0] == 1 && wl->dilation[1] == 1;
}

/* The conv2d templates for a workload, template 0 first (what an untuned
 * model gets): AutoTVM's NCHW schedule, as TVM's CUDA strategy picks. */
static int32_t conv_templates(const hetc_plugin_workload_t *wl, const cu_limits_t *limits, int *kinds) {
  int32_t n = 0;
  if (hetc_kit_conv_is_depthwise(wl)) kinds[n++] = CU_T_CONV_DEPTHWISE;
  kinds[n++] = CU_T_CONV_NCHW;
  if (wl->groups == 1) kinds[n++] = CU_T_CONV_NHWC;
  if (winograd_applicable(wl)) kinds[n++] = CU_T_CONV_WINOGRAD;
  /* mma.sync with TF32 operands exists from sm_80 (Ampere) on. */
  if (wl->groups == 1 && limits && limits->cc_major >= 8) kinds[n++] = CU_T_CONV_IGEMM_TC;
  return n;
}

static int op_template(int32_t op) {
  switch (op) {
    case HETC_PLUGIN_OP_DENSE: return CU_T_DENSE;
    case HETC_PLUGIN_OP_MAX_POOL2D:
    case HETC_PLUGIN_OP_AVG_POOL2D: return CU_T_POOL;
    case HETC_PLUGIN_OP_GLOBAL_AVG_POOL2D: return CU_T_GLOBAL_POOL;
    case HETC_PLUGIN_OP_ELEMENTWISE: return CU_T_ELEMENTWISE;
    case HETC_PLUGIN_OP_SOFTMAX: return CU_T_SOFTMAX;
    case HETC_PLUGIN_OP_CONCAT: return CU_T_CONCAT;
    case HETC_PLUGIN_OP_LAYOUT_TRANSFORM: return CU_T_LAYOUT;
    case HETC_PLUGIN_OP_BIAS_ADD: return CU_T_BIAS_ADD;
    case HETC_PLUGIN_OP_TRANSPOSE: return CU_T_TRANSPOSE;
    case HETC_PLUGIN_OP_LOG_SOFTMAX: return CU_T_LOG_SOFTMAX;
    case HETC_PLUGIN_OP_RESIZE: return CU_T_RESIZE;
    case HETC_PLUGIN_OP_NORMALIZE: return CU_T_NORMALIZE;
    case HETC_PLUGIN_OP_MATMUL: return CU_T_MATMUL;
    default: return -1;
  }
}

int32_t cu_template_count(const hetc_plugin_workload_t *wl, const cu_limits_t *limits) {
  if (hpc_workload_check(wl, NULL, 0) != 0) return 0;
  if (wl->op == HETC_PLUGIN_OP_CONV2D) {
    int kinds[8];
    return conv_templates(wl, limits, kinds);
  }
  return op_template(wl->op) >= 0 ? 1 : 0;
}

int cu_template_kind(const hetc_plugin_workload_t *wl, const cu_limits_t *limits, int32_t index) {
  if (index < 0 || hpc_workload_check(wl, NULL, 0) != 0) return -1;
  if (wl->op == HETC_PLUGIN_OP_CONV2D) {
    int kinds[8];
    const int32_t n = conv_templates(wl, limits, kinds);
    return index < n ? kinds[index] : -1;
  }
  return index == 0 ? op_template(wl->op) : -1;
}

/* ------------------------------------------------------------------------ */
/* Spaces                                                                   */
/* ------------------------------------------------------------------------ */

#define FIELD(f) offsetof(cu_config_t, f)

static cu_knob_spec_t *add_knob(cu_space_t *s, const char *name, size_t offset, int64_t dflt, int64_t lo,
                                int64_t hi) {
  cu_knob_spec_t *k = &s->knobs[s->num_knobs++];
  memset(k, 0, sizeof(*k));
  k->name = name;
  k->offset = offset;
  k->default_values[0] = dflt;
  k->lo = lo;
  k->hi = hi;
  return k;
}

static cu_knob_spec_t *add_choices(cu_space_t *s, const char *name, size_t offset, const int64_t *values,
                                   int32_t count, int64_t dflt, int64_t lo, int64_t hi) {
  cu_knob_spec_t *k = add_knob(s, name, offset, dflt, lo, hi);
  for (int32_t i = 0; i < count && i < CU_MAX_VALUES; ++i) k->values[k->num_values++] = values[i];
  return k;
}

/* The largest divisor of `extent` that is at most `most`. */
static int64_t divisor_at_most(int64_t extent, int64_t most) {
  for (int64_t d = most < extent ? most : extent; d > 1; --d)
    if (extent % d == 0) return d;
  return 1;
}

/* A split of `extent` into `parts` factors (AutoTVM's define_split with
 * the exact-factor policy). The default takes, from the innermost part
 * out, the largest divisor of what is left at most wants[i]; the outermost
 * part takes the rest. Added splits need not divide exactly: the kernels
 * round the outermost part up and guard the tail. */
static cu_knob_spec_t *add_split(cu_space_t *s, const char *name, size_t offset, int64_t extent, int32_t parts,
                                 const int64_t *wants) {
  cu_knob_spec_t *k = add_knob(s, name, offset, 0, 1, 4096);
  k->parts = parts;
  k->extent = extent;
  int64_t left = extent;
  for (int32_t i = parts - 1; i > 0; --i) {
    k->default_values[i] = divisor_at_most(left, wants[i]);
    left /= k->default_values[i];
  }
  k->default_values[0] = left;
  return k;
}

static void nchw_space(cu_space_t *s, const hetc_plugin_workload_t *wl) {
  const int64_t K = wl->output.shape[1], P = wl->output.shape[2], Q = wl->output.shape[3];
  const int64_t Cg = wl->inputs[0].shape[1] / wl->groups, R = wl->kernel[0], S = wl->kernel[1];
  /* Default: 8 x 2 x 16 threads of 4 x 2 x 1 outputs (where the extents
   * allow), 8 input channels and the whole window staged per step; one
   * tap row (column) per step where the dilated window spans more than 8
   * rows (columns): DeepLab's ASPP (3x3, dilation 36) would otherwise stage
   * a 76 x 88 input tile a channel, 214 KB for 8 channels. */
  static const int64_t want_f[4] = {0, 1, 8, 4}, want_y[4] = {0, 1, 2, 2}, want_x[4] = {0, 1, 16, 1};
  const int64_t reach_y = (R - 1) * wl->dilation[0] + 1, reach_x = (S - 1) * wl->dilation[1] + 1;
  const int64_t want_rc[2] = {0, 8}, want_ry[2] = {0, reach_y > 8 ? 1 : R}, want_rx[2] = {0, reach_x > 8 ? 1 : S};
  add_split(s, "tile_f", FIELD(tile_f), K, 4, want_f);
  add_split(s, "tile_y", FIELD(tile_y), P, 4, want_y);
  add_split(s, "tile_x", FIELD(tile_x), Q, 4, want_x);
  /* The constraint spans the output tiles only (threads, accumulators,
   * the block's tile with one reduction step staged); the reduction's
   * staging and the optional knobs are checked by build(). */
  add_split(s, "tile_rc", FIELD(tile_rc), Cg, 2, want_rc)->unconstrained = 1;
  add_split(s, "tile_ry", FIELD(tile_ry), R, 2, want_ry)->unconstrained = 1;
  add_split(s, "tile_rx", FIELD(tile_rx), S, 2, want_rx)->unconstrained = 1;
  static const int64_t unroll_steps[] = {0, 512, 1500};
  static const int64_t flags[] = {0, 1};
  add_choices(s, "auto_unroll_max_step", FIELD(auto_unroll_max_step), unroll_steps, 3, 512, 0, 4096)->unconstrained = 1;
  add_choices(s, "unroll_explicit", FIELD(unroll_explicit), flags, 2, 0, 0, 1)->unconstrained = 1;
  /* The NHWC template's thread knobs: 0 keeps the split's part. */
  static const int64_t threads[] = {0, 4, 8, 16}, vthreads[] = {0, 1, 2};
  const char *optional[4] = {"num_thread_n", "num_thread_c", "vthread_n", "vthread_c"};
  const size_t fields[4] = {FIELD(num_thread_n), FIELD(num_thread_c), FIELD(vthread_n), FIELD(vthread_c)};
  for (int i = 0; i < 4; ++i) {
    cu_knob_spec_t *k = i < 2 ? add_choices(s, optional[i], fields[i], threads, 4, 0, 0, 1024)
                              : add_choices(s, optional[i], fields[i], vthreads, 3, 0, 0, 16);
    k->optional = k->unconstrained = 1;
  }
}

static void nhwc_space(cu_space_t *s) {
  static const int64_t tiles[] = {2, 4, 8}, threads[] = {4, 8, 16}, vthreads[] = {1, 2}, steps[] = {16, 32, 64};
  add_choices(s, "tile_n", FIELD(tile_n), tiles, 3, 4, 1, 128);
  add_choices(s, "tile_c", FIELD(tile_c), tiles, 3, 4, 1, 128);
  add_choices(s, "num_thread_n", FIELD(num_thread_n), threads, 3, 16, 1, 1024);
  add_choices(s, "num_thread_c", FIELD(num_thread_c), threads, 3, 8, 1, 1024);
  add_choices(s, "vthread_n", FIELD(vthread_n), vthreads, 2, 1, 1, 16);
  add_choices(s, "vthread_c", FIELD(vthread_c), vthreads, 2, 1, 1, 16);
  add_choices(s, "step", FIELD(step), steps, 3, 16, 1, 1024);
}

/* GEMM-shaped templates: a block of block_m x block_n outputs, threads of
 * thread_m x thread_n, block_k of the reduction staged per step. `dflt`:
 * block_m, block_n, block_k, thread_m, thread_n. */
static void gemm_space(cu_space_t *s, const int64_t dflt[5]) {
  static const int64_t blocks[] = {16, 32, 64, 128}, ks[] = {8, 16, 32}, threads[] = {1, 2, 4, 8};
  add_choices(s, "block_m", FIELD(block_m), blocks, 4, dflt[0], 1, 1024);
  add_choices(s, "block_n", FIELD(block_n), blocks, 4, dflt[1], 1, 1024);
  add_choices(s, "block_k", FIELD(block_k), ks, 3, dflt[2], 1, 256);
  add_choices(s, "thread_m", FIELD(thread_m), threads, 4, dflt[3], 1, 32);
  add_choices(s, "thread_n", FIELD(thread_n), threads, 4, dflt[4], 1, 32);
}

/* Dense's default: 16x8 threads of 4x4 outputs for a batch of rows; for a
 * few rows (a matrix-vector product, bound by reading the weights) more and
 * narrower blocks, 32 columns of units each, and the longest k step, so
 * that more of the weights are in flight per step. */
static void dense_space(cu_space_t *s, const hetc_plugin_workload_t *wl) {
  static const int64_t rows[5] = {32, 64, 8, 4, 4}, few_rows[5] = {16, 32, 32, 8, 1};
  gemm_space(s, wl->inputs[0].shape[0] >= 16 ? rows : few_rows);
}

/* Tensor cores: block_m x block_n outputs per block, thread_m x thread_n
 * warps (each a (block_m/thread_m) x (block_n/thread_n) tile of 16x8 mma
 * steps), block_k of the reduction per shared-memory stage. */
static void igemm_tc_space(cu_space_t *s) {
  static const int64_t blocks[] = {32, 64, 128}, ks[] = {8, 16, 32}, warps[] = {1, 2, 4};
  /* Default: 2x2 warps of 64x32 (shared-memory traffic per mma step
   * falls with the warp tile), 16 of Kred per stage, double-buffered. */
  add_choices(s, "block_m", FIELD(block_m), blocks, 3, 128, 16, 256);
  add_choices(s, "block_n", FIELD(block_n), blocks, 3, 64, 8, 256);
  add_choices(s, "block_k", FIELD(block_k), ks, 3, 16, 8, 64);
  add_choices(s, "thread_m", FIELD(thread_m), warps, 3, 2, 1, 8);
  add_choices(s, "thread_n", FIELD(thread_n), warps, 3, 2, 1, 8);
}

/* Depthwise: blocks of thread_m rows x thread_n columns per thread, block_m
 * x block_n threads (rows x columns) over one channel's plane. */
static void depthwise_space(cu_space_t *s) {
  static const int64_t rows[] = {1, 2, 4, 8}, cols[] = {8, 16, 32}, per_thread[] = {1, 2, 4};
  add_choices(s, "block_m", FIELD(block_m), rows, 4, 4, 1, 1024);
  add_choices(s, "block_n", FIELD(block_n), cols, 3, 16, 1, 1024);
  add_choices(s, "thread_m", FIELD(thread_m), per_thread, 3, 1, 1, 16);
  add_choices(s, "thread_n", FIELD(thread_n), per_thread, 3, 2, 1, 16);
}

/* The smallest of 16, 32 and 64 that covers `extent` (64 past it). */
static int64_t matmul_block(int64_t extent) { return extent <= 16 ? 16 : extent <= 32 ? 32 : 64; }

/* matmul (hpc_gpu_emit_matmul): a block of block_m x block_n outputs,
 * threads of thread_m x thread_n, block_k of K staged per step. Default:
 * 16 x 16 threads whatever the shape, each block side the smallest of 16,
 * 32, 64 covering the extent (ViT-B's 197 tokens in 4 blocks of 64 a side,
 * Swin's 49 in one), a thread's tile the rest; 16 of K a step. */
static void matmul_space(cu_space_t *s, const hetc_plugin_workload_t *wl) {
  static const int64_t blocks[] = {16, 32, 64, 128}, ks[] = {8, 16, 32}, threads[] = {1, 2, 4, 8};
  const int32_t r = wl->output.rank;
  const int64_t bm = matmul_block(wl->output.shape[r - 2]), bn = matmul_block(wl->output.shape[r - 1]);
  add_choices(s, "block_m", FIELD(block_m), blocks, 4, bm, 1, 1024);
  add_choices(s, "block_n", FIELD(block_n), blocks, 4, bn, 1, 1024);
  add_choices(s, "block_k", FIELD(block_k), ks, 3, 16, 1, 256);
  add_choices(s, "thread_m", FIELD(thread_m), threads, 4, bm / 16, 1, 32);
  add_choices(s, "thread_n", FIELD(thread_n), threads, 4, bn / 16, 1, 32);
}

void cu_space_describe(const hetc_plugin_workload_t *wl, int kind, cu_space_t *out) {
  memset(out, 0, sizeof(*out));
  out->kind = kind;
  switch (kind) {
    case CU_T_CONV_NCHW: nchw_space(out, wl); break;
    case CU_T_CONV_NHWC: nhwc_space(out); break;
    case CU_T_CONV_WINOGRAD: {
      static const int64_t winograd_default[5] = {32, 64, 8, 4, 4};
      gemm_space(out, winograd_default);
      break;
    }
    case CU_T_DENSE: dense_space(out, wl); break;
    case CU_T_CONV_IGEMM_TC: igemm_tc_space(out); break;
    case CU_T_CONV_DEPTHWISE: depthwise_space(out); break;
    case CU_T_MATMUL: matmul_space(out, wl); break;
    default: break; /* the ops without knobs */
  }
}

/* ------------------------------------------------------------------------ */
/* Demand and limits                                                        */
/* ------------------------------------------------------------------------ */

/* Registers a thread needs besides its accumulators: addresses, loop
 * counters, the operands in flight (ptxas reports 30-60 for these kernels'
 * smallest tiles). */
#define REGISTERS_BESIDE_ACCUMULATORS 32

/* Every thread's accumulators must stay in registers: a tile beyond 128
 * spills whatever the block size, and __launch_bounds__ caps a thread's
 * registers at the block's share of the register file. */
static int registers_fit(const cu_demand_t *d, int64_t threads, const cu_limits_t *limits) {
  return d->accumulators <= 128 &&
         (d->accumulators + REGISTERS_BESIDE_ACCUMULATORS) * threads <= limits->registers_per_block;
}

int cu_demand_fits(const cu_demand_t *d, const cu_limits_t *limits) {
  if (d->reason[0]) return 0;
  const int64_t threads = d->block[0] * d->block[1] * d->block[2];
  for (int i = 0; i < 3; ++i)
    if (d->block[i] < 1 || d->block[i] > limits->max_block_dims[i]) return 0;
  return threads <= limits->max_threads_per_block && d->shared_bytes <= limits->shared_bytes_per_block &&
         registers_fit(d, threads, limits);
}

hetc_plugin_status_t cu_check_limits(const cu_demand_t *d, const cu_limits_t *limits) {
  const char *name = cu_plugin_name;
  if (d->reason[0]) return cu_status(HETC_PLUGIN_STATUS_INVALID_ARGUMENT, "%s: %s", name, d->reason);
  const int64_t threads = d->block[0] * d->block[1] * d->block[2];
  static const char axis[3] = {'X', 'Y', 'Z'};
  for (int i = 0; i < 3; ++i)
    if (d->block[i] > limits->max_block_dims[i])
      return cu_status(HETC_PLUGIN_STATUS_DEVICE_LIMITS,
                       "%s: a block of %lldx%lldx%lld threads exceeds the device's MAX_BLOCK_DIM_%c of %d", name,
                       (long long)d->block[0], (long long)d->block[1], (long long)d->block[2], axis[i],
                       limits->max_block_dims[i]);
  if (threads > limits->max_threads_per_block)
    return cu_status(HETC_PLUGIN_STATUS_DEVICE_LIMITS,
                     "%s: a block of %lldx%lldx%lld = %lld threads exceeds the device's MAX_THREADS_PER_BLOCK of %d",
                     name, (long long)d->block[0], (long long)d->block[1], (long long)d->block[2],
                     (long long)threads, limits->max_threads_per_block);
  if (d->shared_bytes > limits->shared_bytes_per_block)
    return cu_status(HETC_PLUGIN_STATUS_DEVICE_LIMITS,
                     "%s: the kernel's tiles need %lld bytes of shared memory, more than the device's "
                     "MAX_SHARED_MEMORY_PER_BLOCK of %d",
                     name, (long long)d->shared_bytes, limits->shared_bytes_per_block);
  if (!registers_fit(d, threads, limits))
    return cu_status(HETC_PLUGIN_STATUS_DEVICE_LIMITS,
                     "%s: %lld accumulators (+%d other registers) per thread x %lld threads do not fit the device's "
                     "MAX_REGISTERS_PER_BLOCK of %d (at most 128 accumulators per thread)",
                     name, (long long)d->accumulators, REGISTERS_BESIDE_ACCUMULATORS, (long long)threads,
                     limits->registers_per_block);
  return NULL;
}

hetc_plugin_status_t cu_check_function(const char *kernel, const cu_function_attrs_t *attrs, const uint32_t block[3],
                                       const cu_limits_t *limits) {
  const int64_t threads = (int64_t)block[0] * block[1] * block[2];
  /* The compiler's register allocation decides how many threads a block
   * of this kernel may have; the runtime reports it per function. */
  if (attrs->max_threads > 0 && threads > attrs->max_threads)
    return cu_status(HETC_PLUGIN_STATUS_DEVICE_LIMITS,
                     "%s: kernel %s uses %d registers per thread, so a block may have at most %d threads; "
                     "this config launches %lld",
                     cu_plugin_name, kernel, attrs->registers, attrs->max_threads, (long long)threads);
  if (attrs->registers > 0 && (int64_t)attrs->registers * threads > limits->registers_per_block)
    return cu_status(HETC_PLUGIN_STATUS_DEVICE_LIMITS,
                     "%s: kernel %s needs %d registers x %lld threads, more than the device's "
                     "MAX_REGISTERS_PER_BLOCK of %d",
                     cu_plugin_name, kernel, attrs->registers, (long long)threads, limits->registers_per_block);
  return NULL;
}

/* ------------------------------------------------------------------------ */
/* Declaring spaces, parsing configs                                        */
/* ------------------------------------------------------------------------ */

/* What the constraint needs: the space, the workload (its input inline:
 * the context is interned by its bytes) and the limits. */
typedef struct constraint_context_t {
  cu_space_t space;
  hetc_plugin_workload_t wl; /* inputs: NULL, see `input` */
  hetc_plugin_tensor_t input;
  cu_limits_t limits;
} constraint_context_t;

/* The shared context equal to (space, wl, limits); NULL when out of memory. */
static const constraint_context_t *context_for(const cu_space_t *space, const hetc_plugin_workload_t *wl,
                                               const cu_limits_t *limits) {
  constraint_context_t probe;
  memset(&probe, 0, sizeof(probe));
  probe.space = *space;
  probe.wl = *wl;
  probe.wl.inputs = NULL;
  probe.wl.num_inputs = 1;
  probe.input = wl->inputs[0];
  probe.limits = *limits;
  return hpc_intern(&probe, sizeof(probe));
}

static int64_t *field(cu_config_t *c, const cu_knob_spec_t *k) { return (int64_t *)((char *)c + k->offset); }
static const int64_t *cfield(const cu_config_t *c, const cu_knob_spec_t *k) {
  return (const int64_t *)((const char *)c + k->offset);
}
static int32_t value_count(const cu_knob_spec_t *k) { return k->parts > 0 ? k->parts : 1; }

/* The constraint's knobs: those not marked unconstrained, in space order. */
static int32_t constrained_knobs(const cu_space_t *space, int32_t *out) {
  int32_t n = 0;
  for (int32_t i = 0; i < space->num_knobs; ++i)
    if (!space->knobs[i].unconstrained) out[n++] = i;
  return n;
}

static int config_acceptable(const hetc_plugin_config_t *config, const void *user_data) {
  const constraint_context_t *ctx = user_data;
  int32_t knobs[CU_MAX_KNOBS];
  const int32_t n = constrained_knobs(&ctx->space, knobs);
  if (!config || config->num_knobs != n) return 0;
  cu_config_t cfg;
  memset(&cfg, 0, sizeof(cfg));
  for (int32_t i = 0; i < ctx->space.num_knobs; ++i) {
    const cu_knob_spec_t *k = &ctx->space.knobs[i];
    int64_t *v = field(&cfg, k);
    if (k->parts == 0) v[0] = k->default_values[0];
    for (int32_t p = 0; p < k->parts; ++p) v[p] = p == 0 ? k->extent : 1;
  }
  for (int32_t i = 0; i < n; ++i) {
    const cu_knob_spec_t *k = &ctx->space.knobs[knobs[i]];
    if (config->knobs[i].count != value_count(k)) return 0;
    memcpy(field(&cfg, k), config->knobs[i].values, sizeof(int64_t) * (size_t)value_count(k));
  }
  cu_demand_t demand;
  hetc_plugin_workload_t wl = ctx->wl;
  wl.inputs = &ctx->input;
  cu_config_demand(&wl, ctx->space.kind, &cfg, &demand);
  return cu_demand_fits(&demand, &ctx->limits);
}

hetc_plugin_status_t cu_space_define(const cu_space_t *space, const hetc_plugin_workload_t *wl,
                                     const cu_limits_t *limits, hetc_plugin_space_t *host_space) {
  const hetc_plugin_host_t *h = cu_host;
  hetc_plugin_status_t s = NULL;
  for (int32_t i = 0; i < space->num_knobs && !s; ++i) {
    const cu_knob_spec_t *k = &space->knobs[i];
    s = k->parts > 0 ? h->space_define_split(host_space, k->name, k->extent, k->parts, HETC_PLUGIN_SPLIT_FACTORS, 0,
                                             NULL, 0)
                     : h->space_define_knob(host_space, k->name, k->values, k->num_values);
  }
  if (s || space->num_knobs == 0) return s;
  const constraint_context_t *ctx = context_for(space, wl, limits);
  if (!ctx) return cu_status(HETC_PLUGIN_STATUS_OUT_OF_MEMORY, "%s: out of memory", cu_plugin_name);
  int32_t constrained[CU_MAX_KNOBS];
  const int32_t n = constrained_knobs(space, constrained);
  const char *names[CU_MAX_KNOBS];
  for (int32_t i = 0; i < n; ++i) names[i] = space->knobs[constrained[i]].name;
  s = n ? h->space_add_constraint(host_space, names, n, config_acceptable, ctx) : NULL;
  if (s) return s;
  hetc_plugin_knob_value_t knobs[CU_MAX_KNOBS];
  for (int32_t i = 0; i < space->num_knobs; ++i) {
    knobs[i].name = space->knobs[i].name;
    knobs[i].count = value_count(&space->knobs[i]);
    knobs[i].values = space->knobs[i].default_values;
  }
  hetc_plugin_config_t config = {space->num_knobs, knobs};
  s = h->space_set_default(host_space, &config);
  /* A minor-0 host cannot pin knobs: it tunes the optional ones too. */
  const int can_pin = HETC_PLUGIN_HAS_FIELD(h, hetc_plugin_host_t, space_mark_optional);
  for (int32_t i = 0; i < space->num_knobs && !s && can_pin; ++i)
    if (space->knobs[i].optional) s = h->space_mark_optional(host_space, space->knobs[i].name);
  return s;
}

static hetc_plugin_status_t bad_config(const char *format, const char *knob, long long a, long long b) {
  char message[256];
  snprintf(message, sizeof(message), format, knob, a, b);
  return cu_status(HETC_PLUGIN_STATUS_INVALID_ARGUMENT, "%s: %s", cu_plugin_name, message);
}

hetc_plugin_status_t cu_config_parse(const cu_space_t *space, const hetc_plugin_config_t *config, cu_config_t *out) {
  const char *name = cu_plugin_name;
  memset(out, 0, sizeof(*out));
  for (int32_t i = 0; i < space->num_knobs; ++i)
    memcpy(field(out, &space->knobs[i]), space->knobs[i].default_values,
           sizeof(int64_t) * (size_t)value_count(&space->knobs[i]));
  if (!config) return NULL;
  if (config->num_knobs < 0 || (config->num_knobs > 0 && !config->knobs))
    return cu_status(HETC_PLUGIN_STATUS_INVALID_ARGUMENT, "%s: malformed config (%d knobs)", name,
                     config->num_knobs);
  for (int32_t j = 0; j < config->num_knobs; ++j) {
    const hetc_plugin_knob_value_t *kv = &config->knobs[j];
    if (!kv->name) return cu_status(HETC_PLUGIN_STATUS_INVALID_ARGUMENT, "%s: config knob %d has no name", name, j);
    int32_t found = -1;
    for (int32_t i = 0; i < space->num_knobs; ++i)
      if (strcmp(space->knobs[i].name, kv->name) == 0) found = i;
    if (found < 0)
      return cu_status(HETC_PLUGIN_STATUS_INVALID_ARGUMENT,
                       "%s: config has knob '%s', which this template's space does not define", name, kv->name);
    for (int32_t i = 0; i < j; ++i)
      if (config->knobs[i].name && strcmp(config->knobs[i].name, kv->name) == 0)
        return cu_status(HETC_PLUGIN_STATUS_INVALID_ARGUMENT, "%s: config gives knob '%s' twice", name, kv->name);
    const cu_knob_spec_t *k = &space->knobs[found];
    if (kv->count != value_count(k) || !kv->values)
      return bad_config("knob '%s' takes %lld values, got %lld", kv->name, value_count(k), kv->count);
    for (int32_t v = 0; v < kv->count; ++v)
      if (kv->values[v] < k->lo || kv->values[v] > k->hi)
        return cu_status(HETC_PLUGIN_STATUS_INVALID_ARGUMENT, "%s: knob '%s' = %lld is outside [%lld, %lld]", name,
                         kv->name, (long long)kv->values[v], (long long)k->lo, (long long)k->hi);
    memcpy(field(out, k), kv->values, sizeof(int64_t) * (size_t)kv->count);
  }
  if (config->num_knobs != space->num_knobs)
    for (int32_t i = 0; i < space->num_knobs; ++i) {
      int present = 0;
      for (int32_t j = 0; j < config->num_knobs; ++j) present |= strcmp(config->knobs[j].name, space->knobs[i].name) == 0;
      if (!present)
        return cu_status(HETC_PLUGIN_STATUS_INVALID_ARGUMENT, "%s: config lacks knob '%s'", name,
                         space->knobs[i].name);
    }
  return NULL;
}

void cu_config_describe(const cu_space_t *space, const cu_config_t *config, hpc_strbuf_t *sb) {
  if (space->num_knobs == 0) {
    hpc_strbuf_printf(sb, "(no knobs)");
    return;
  }
  for (int32_t i = 0; i < space->num_knobs; ++i) {
    const cu_knob_spec_t *k = &space->knobs[i];
    const int64_t *v = cfield(config, k);
    hpc_strbuf_printf(sb, "%s%s=", i ? " " : "", k->name);
    if (k->parts == 0) {
      hpc_strbuf_printf(sb, "%lld", (long long)v[0]);
      continue;
    }
    for (int32_t p = 0; p < k->parts; ++p) hpc_strbuf_printf(sb, "%s%lld", p ? "," : "[", (long long)v[p]);
    hpc_strbuf_printf(sb, "]");
  }
}

hpc_gpu_matmul_tiles_t cu_matmul_tiles(const cu_config_t *cfg) {
  const hpc_gpu_matmul_tiles_t t = {cfg->block_m, cfg->block_n, cfg->block_k, cfg->thread_m, cfg->thread_n};
  return t;
}

/* The block the kernel declares and the shared memory it stages through;
 * a config the kernel cannot be written for is refused with why. */
static void matmul_demand(const cu_config_t *cfg, cu_demand_t *out) {
  const hpc_gpu_matmul_tiles_t t = cu_matmul_tiles(cfg);
  if (hpc_gpu_matmul_tiles_check(&t, out->reason, sizeof(out->reason))) return;
  out->block[0] = t.tile_n / t.thread_n;
  out->block[1] = t.tile_m / t.thread_m;
  out->shared_bytes = hpc_gpu_matmul_shared_bytes(&t);
  out->accumulators = t.thread_m * t.thread_n;
}

void cu_config_demand(const hetc_plugin_workload_t *wl, int kind, const cu_config_t *cfg, cu_demand_t *out) {
  memset(out, 0, sizeof(*out));
  for (int i = 0; i < 3; ++i) out->block[i] = 1;
  switch (kind) {
    case CU_T_CONV_NCHW: cu_demand_conv_nchw(wl, cfg, out); break;
    case CU_T_CONV_NHWC: cu_demand_conv_nhwc(wl, cfg, out); break;
    case CU_T_CONV_WINOGRAD:
    case CU_T_DENSE: cu_demand_gemm(cfg, out); break;
    case CU_T_CONV_IGEMM_TC: cu_demand_igemm_tc(cfg, out); break;
    case CU_T_CONV_DEPTHWISE: cu_demand_depthwise(wl, cfg, out); break;
    case CU_T_MATMUL: matmul_demand(cfg, out); break;
    default:
      out->block[0] = HPC_GPU_OPS_BLOCK; /* the ops' one-thread-per-element kernels */
      if (kind == CU_T_NORMALIZE) out->shared_bytes = HPC_GPU_NORMALIZE_SHARED_BYTES;
      break;
  }
}
