/* Templates, their knob spaces, config validation and the check of a
 * config's demand (work-group shape, local and __constant memory) against
 * the device.
 *
 * One description (ocl_space_t) per (workload, template) drives declaring
 * the space, choosing the default and checking a config in build(), so they
 * cannot drift apart. The same demand function feeds the space's constraint
 * (the tuner never proposes what the device refuses) and build()'s check
 * (a config handed in directly is refused with the limit named). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ocl.h"
#include "plugin_gpu_ops.h"
#include "plugin_intern.h"
#include "plugin_resize.h"

static const struct {
  const char *name;
  uint32_t version;
} templates[OCL_T_COUNT_] = {
    [OCL_T_CONV_DIRECT] = {"opencl_conv2d_direct", 1},
    [OCL_T_CONV_GEMM] = {"opencl_conv2d_im2col_gemm", 1},
    [OCL_T_CONV_WINOGRAD] = {"opencl_conv2d_winograd", 1},
    [OCL_T_CONV_DEPTHWISE] = {"opencl_conv2d_depthwise", 1},
    [OCL_T_DENSE] = {"opencl_dense_gemm", 1},
    [OCL_T_POOL] = {"opencl_pool2d", 1},
    [OCL_T_GLOBAL_POOL] = {"opencl_global_avg_pool2d", 1},
    [OCL_T_ELEMENTWISE] = {"opencl_elementwise", 1},
    [OCL_T_SOFTMAX] = {"opencl_softmax", 1},
    [OCL_T_CONCAT] = {"opencl_concat", 1},
    [OCL_T_LAYOUT] = {"opencl_layout_transform", 1},
    [OCL_T_BIAS_ADD] = {"opencl_bias_add", 1},
    [OCL_T_TRANSPOSE] = {"opencl_transpose", 1},
    [OCL_T_LOG_SOFTMAX] = {"opencl_log_softmax", 1},
    [OCL_T_RESIZE] = {"opencl_resize", 1},
    [OCL_T_NORMALIZE] = {"opencl_normalize", 1},
    [OCL_T_MATMUL] = {"opencl_matmul", 1},
};

const char *ocl_template_name(int kind) {
  return kind >= 0 && kind < OCL_T_COUNT_ ? templates[kind].name : NULL;
}

uint32_t ocl_template_version(int kind) {
  return kind >= 0 && kind < OCL_T_COUNT_ ? templates[kind].version : 0;
}

static int winograd_applicable(const hetc_plugin_workload_t *wl) {
  return wl->groups == 1 && wl->kernel[0] == 3 && wl->kernel[1] == 3 && wl->strides[0] == 1 &&
         wl->strides[1] == 1 && wl->dilation[0] == 1 && wl->dilation[1] == 1;
}

/* The conv2d templates for a workload, template 0 first (what an untuned
 * model gets). Returns their number. */
static int32_t conv_templates(const hetc_plugin_workload_t *wl, int *kinds) {
  int32_t n = 0;
  if (hetc_kit_conv_is_depthwise(wl)) kinds[n++] = OCL_T_CONV_DEPTHWISE;
  const int pointwise = wl->kernel[0] == 1 && wl->kernel[1] == 1;
  if (pointwise) kinds[n++] = OCL_T_CONV_GEMM;
  kinds[n++] = OCL_T_CONV_DIRECT;
  if (!pointwise) kinds[n++] = OCL_T_CONV_GEMM;
  if (winograd_applicable(wl)) kinds[n++] = OCL_T_CONV_WINOGRAD;
  return n;
}

static int op_template(int32_t op) {
  switch (op) {
    case HETC_PLUGIN_OP_DENSE: return OCL_T_DENSE;
    case HETC_PLUGIN_OP_MAX_POOL2D:
    case HETC_PLUGIN_OP_AVG_POOL2D: return OCL_T_POOL;
    case HETC_PLUGIN_OP_GLOBAL_AVG_POOL2D: return OCL_T_GLOBAL_POOL;
    case HETC_PLUGIN_OP_ELEMENTWISE: return OCL_T_ELEMENTWISE;
    case HETC_PLUGIN_OP_SOFTMAX: return OCL_T_SOFTMAX;
    case HETC_PLUGIN_OP_CONCAT: return OCL_T_CONCAT;
    case HETC_PLUGIN_OP_LAYOUT_TRANSFORM: return OCL_T_LAYOUT;
    case HETC_PLUGIN_OP_BIAS_ADD: return OCL_T_BIAS_ADD;
    case HETC_PLUGIN_OP_TRANSPOSE: return OCL_T_TRANSPOSE;
    case HETC_PLUGIN_OP_LOG_SOFTMAX: return OCL_T_LOG_SOFTMAX;
    case HETC_PLUGIN_OP_RESIZE: return OCL_T_RESIZE;
    case HETC_PLUGIN_OP_NORMALIZE: return OCL_T_NORMALIZE;
    case HETC_PLUGIN_OP_MATMUL: return OCL_T_MATMUL;
    default: return -1;
  }
}

int32_t ocl_template_count(const hetc_plugin_workload_t *wl) {
  if (hpc_workload_check(wl, NULL, 0) != 0) return 0;
  if (wl->op == HETC_PLUGIN_OP_CONV2D) {
    int kinds[4];
    return conv_templates(wl, kinds);
  }
  return op_template(wl->op) >= 0 ? 1 : 0;
}

int ocl_template_kind(const hetc_plugin_workload_t *wl, int32_t index) {
  const int32_t count = ocl_template_count(wl);
  if (index < 0 || index >= count) return -1;
  if (wl->op == HETC_PLUGIN_OP_CONV2D) {
    int kinds[4];
    conv_templates(wl, kinds);
    return kinds[index];
  }
  return op_template(wl->op);
}

/* ------------------------------------------------------------------------ */
/* Spaces                                                                   */
/* ------------------------------------------------------------------------ */

static ocl_knob_spec_t *add_knob(ocl_space_t *s, const char *name, size_t offset, int64_t dflt) {
  ocl_knob_spec_t *k = &s->knobs[s->num_knobs++];
  memset(k, 0, sizeof(*k));
  k->name = name;
  k->offset = offset;
  k->default_value = dflt;
  return k;
}

/* Powers of two from 1 to `most`, those below twice `extent` (a tile much
 * larger than the extent only computes padding). The default is the largest
 * candidate not above `dflt`. */
static void add_pow2_knob(ocl_space_t *s, const char *name, size_t offset, int64_t most, int64_t extent,
                          int64_t dflt) {
  ocl_knob_spec_t *k = add_knob(s, name, offset, 1);
  for (int64_t v = 1; v <= most && k->num_values < OCL_MAX_VALUES; v *= 2) {
    if (v > 1 && v >= 2 * extent) break;
    k->values[k->num_values++] = v;
    if (v <= dflt) k->default_value = v;
  }
}

static void add_choice_knob(ocl_space_t *s, const char *name, size_t offset, int64_t dflt) {
  ocl_knob_spec_t *k = add_knob(s, name, offset, dflt);
  k->values[0] = 0;
  k->values[1] = 1;
  k->num_values = 2;
}

#define OFF(field) offsetof(ocl_config_t, field)

/* Vector widths up to `most` that some tile_n candidate (defined before)
 * splits evenly, the default dividing tile_n's default. */
static void add_vector_knob(ocl_space_t *s, int64_t most, int64_t dflt) {
  const ocl_knob_spec_t *tile_n = &s->knobs[0];
  for (int32_t i = 0; i < s->num_knobs; ++i)
    if (strcmp(s->knobs[i].name, "tile_n") == 0) tile_n = &s->knobs[i];
  const int64_t widest = tile_n->values[tile_n->num_values - 1];
  const int64_t fitting = dflt < tile_n->default_value ? dflt : tile_n->default_value;
  add_pow2_knob(s, "vector", OFF(vector), most < widest ? most : widest, most, fitting);
}

/* The GEMM knobs over an M x N x K product (conv im2col, Winograd's batched
 * products, dense). */
static void gemm_space(ocl_space_t *s, int64_t M, int64_t N, int64_t K) {
  add_pow2_knob(s, "wg_m", OFF(wg_m), 16, M, 8);
  add_pow2_knob(s, "wg_n", OFF(wg_n), 16, N, 8);
  add_pow2_knob(s, "tile_m", OFF(tile_m), 8, M, 4);
  add_pow2_knob(s, "tile_n", OFF(tile_n), 8, N, 4);
  add_pow2_knob(s, "tile_k", OFF(tile_k), 32, K, 16);
  add_vector_knob(s, 8, 4);
  add_choice_knob(s, "unroll", OFF(unroll), 1);
  add_choice_knob(s, "local", OFF(local), 1);
}

/* matmul's tiles (hpc_gpu_emit_matmul). Default: 16 x 16 work-items of 4 x
 * 4 outputs, a 64 x 64 tile (ViT-B's 197 tokens in 4 tiles a side, Swin's
 * 49 in one), 16 of K a step. For a small M or N the candidates stop
 * below twice the extent, so the work-group narrows to it; a work-item's
 * tile stops below twice what each of 16 work-items would take, so a
 * default tile past the extent is never more than twice it. */
static void matmul_space(ocl_space_t *s, const hetc_plugin_workload_t *wl) {
  const int32_t r = wl->output.rank;
  const int64_t M = wl->output.shape[r - 2], N = wl->output.shape[r - 1], K = wl->inputs[0].shape[r - 1];
  add_pow2_knob(s, "wg_m", OFF(wg_m), 16, M, 16);
  add_pow2_knob(s, "wg_n", OFF(wg_n), 16, N, 16);
  add_pow2_knob(s, "tile_m", OFF(tile_m), 8, hetc_kit_ceil_div(M, 16), 4);
  add_pow2_knob(s, "tile_n", OFF(tile_n), 8, hetc_kit_ceil_div(N, 16), 4);
  add_pow2_knob(s, "tile_k", OFF(tile_k), 32, K, 16);
}

void ocl_space_describe(const hetc_plugin_workload_t *wl, int kind, ocl_space_t *out) {
  memset(out, 0, sizeof(*out));
  out->kind = kind;
  if (kind == OCL_T_MATMUL) {
    matmul_space(out, wl);
    return;
  }
  if (kind < 0 || kind > OCL_T_DENSE) return; /* ops without knobs */
  const hetc_plugin_tensor_t *in = &wl->inputs[0];
  if (kind == OCL_T_DENSE) {
    gemm_space(out, wl->output.shape[1], in->shape[0], in->shape[1]);
    return;
  }
  const int64_t N = in->shape[0], C = in->shape[1], K = wl->output.shape[1];
  const int64_t OH = wl->output.shape[2], OW = wl->output.shape[3];
  const int64_t G = wl->groups, Cg = C / G, Kg = K / G;
  switch (kind) {
    case OCL_T_CONV_GEMM:
      gemm_space(out, Kg, N * OH * OW, Cg * wl->kernel[0] * wl->kernel[1]);
      break;
    case OCL_T_CONV_WINOGRAD:
      gemm_space(out, K, N * hetc_kit_ceil_div(OH, 2) * hetc_kit_ceil_div(OW, 2), C);
      break;
    case OCL_T_CONV_DIRECT:
      add_pow2_knob(out, "wg_m", OFF(wg_m), 16, Kg, 4);
      add_pow2_knob(out, "wg_n", OFF(wg_n), 32, OW, 8);
      add_pow2_knob(out, "wg_h", OFF(wg_h), 16, OH, 2);
      add_pow2_knob(out, "tile_m", OFF(tile_m), 8, Kg, 4);
      add_pow2_knob(out, "tile_n", OFF(tile_n), 4, OW, 2);
      add_pow2_knob(out, "tile_k", OFF(tile_k), 64, Cg, 8);
      add_vector_knob(out, 4, 1);
      add_choice_knob(out, "unroll", OFF(unroll), 1);
      add_choice_knob(out, "local", OFF(local), 1);
      break;
    case OCL_T_CONV_DEPTHWISE:
      add_pow2_knob(out, "wg_m", OFF(wg_m), 16, K, 4);
      add_pow2_knob(out, "wg_n", OFF(wg_n), 32, OW, 16);
      add_pow2_knob(out, "wg_h", OFF(wg_h), 16, OH, 4);
      add_pow2_knob(out, "tile_n", OFF(tile_n), 8, OW, 2);
      add_choice_knob(out, "unroll", OFF(unroll), 1);
      add_choice_knob(out, "local", OFF(local), 0);
      break;
    default: break;
  }
}

/* ------------------------------------------------------------------------ */
/* Demand and limits                                                        */
/* ------------------------------------------------------------------------ */

void ocl_gemm_demand(const ocl_config_t *cfg, ocl_demand_t *out) {
  memset(out, 0, sizeof(*out));
  out->work_group[0] = (uint64_t)cfg->wg_n;
  out->work_group[1] = (uint64_t)cfg->wg_m;
  out->work_group[2] = 1;
  if (cfg->local)
    out->local_bytes = (uint64_t)cfg->tile_k * (uint64_t)(cfg->wg_m * cfg->tile_m + cfg->wg_n * cfg->tile_n) * 4;
}

hpc_gpu_matmul_tiles_t ocl_matmul_tiles(const ocl_config_t *cfg) {
  const hpc_gpu_matmul_tiles_t t = {cfg->wg_m * cfg->tile_m, cfg->wg_n * cfg->tile_n, cfg->tile_k, cfg->tile_m,
                                    cfg->tile_n};
  return t;
}

void ocl_config_demand(const hetc_plugin_workload_t *wl, int kind, const ocl_config_t *cfg, ocl_demand_t *out) {
  memset(out, 0, sizeof(*out));
  switch (kind) {
    case OCL_T_MATMUL: {
      /* x along N, as the kernel's HK_KERNEL(wg_n, wg_m, 1) declares. */
      out->work_group[0] = (uint64_t)cfg->wg_n;
      out->work_group[1] = (uint64_t)cfg->wg_m;
      out->work_group[2] = 1;
      const hpc_gpu_matmul_tiles_t t = ocl_matmul_tiles(cfg);
      out->local_bytes = (uint64_t)hpc_gpu_matmul_shared_bytes(&t);
      return;
    }
    case OCL_T_CONV_GEMM:
    case OCL_T_CONV_WINOGRAD:
    case OCL_T_DENSE: ocl_gemm_demand(cfg, out); return;
    case OCL_T_CONV_DIRECT:
    case OCL_T_CONV_DEPTHWISE: {
      out->work_group[0] = (uint64_t)cfg->wg_n;
      out->work_group[1] = (uint64_t)cfg->wg_h;
      out->work_group[2] = (uint64_t)cfg->wg_m;
      if (!cfg->local) return;
      /* The input rows and columns a work-group's outputs read. */
      const uint64_t tile_w = (uint64_t)(cfg->wg_n * cfg->tile_n);
      const uint64_t in_h = (uint64_t)((cfg->wg_h - 1) * wl->strides[0] + (wl->kernel[0] - 1) * wl->dilation[0] + 1);
      const uint64_t in_w = (tile_w - 1) * (uint64_t)wl->strides[1] + (uint64_t)((wl->kernel[1] - 1) * wl->dilation[1]) + 1;
      const uint64_t taps = (uint64_t)wl->kernel[0] * (uint64_t)wl->kernel[1];
      if (kind == OCL_T_CONV_DEPTHWISE) {
        out->local_bytes = (uint64_t)cfg->wg_m * (in_h * in_w + taps) * 4;
      } else {
        const uint64_t tile_k = (uint64_t)cfg->tile_k, tile_m = (uint64_t)(cfg->wg_m * cfg->tile_m);
        out->local_bytes = tile_k * (in_h * in_w + taps * tile_m) * 4;
      }
      return;
    }
    default:
      out->work_group[0] = 64; /* the ops' fixed work-groups */
      out->work_group[1] = out->work_group[2] = 1;
      if (kind == OCL_T_RESIZE) out->constant_bytes = hpc_resize_table_bytes(wl);
      if (kind == OCL_T_NORMALIZE) out->local_bytes = HPC_GPU_NORMALIZE_SHARED_BYTES;
      return;
  }
}

int ocl_demand_fits(const ocl_demand_t *demand, const ocl_limits_t *limits) {
  const uint64_t items = demand->work_group[0] * demand->work_group[1] * demand->work_group[2];
  if (items > limits->max_work_group_size) return 0;
  for (int d = 0; d < 3; ++d)
    if (demand->work_group[d] > limits->max_work_item_sizes[d]) return 0;
  return demand->local_bytes <= limits->local_memory_bytes && demand->constant_bytes <= limits->max_constant_bytes;
}

hetc_plugin_status_t ocl_check_limits(const ocl_demand_t *demand, const ocl_limits_t *limits) {
  const uint64_t *wg = demand->work_group;
  const uint64_t items = wg[0] * wg[1] * wg[2];
  if (items > limits->max_work_group_size)
    return ocl_status(HETC_PLUGIN_STATUS_DEVICE_LIMITS,
                      "opencl: a work-group of %llux%llux%llu = %llu work-items exceeds the device's "
                      "CL_DEVICE_MAX_WORK_GROUP_SIZE of %llu",
                      (unsigned long long)wg[0], (unsigned long long)wg[1], (unsigned long long)wg[2],
                      (unsigned long long)items, (unsigned long long)limits->max_work_group_size);
  for (int d = 0; d < 3; ++d)
    if (wg[d] > limits->max_work_item_sizes[d])
      return ocl_status(HETC_PLUGIN_STATUS_DEVICE_LIMITS,
                        "opencl: a work-group of %llu work-items in dimension %d exceeds the device's "
                        "CL_DEVICE_MAX_WORK_ITEM_SIZES[%d] of %llu",
                        (unsigned long long)wg[d], d, d, (unsigned long long)limits->max_work_item_sizes[d]);
  if (demand->local_bytes > limits->local_memory_bytes)
    return ocl_status(HETC_PLUGIN_STATUS_DEVICE_LIMITS,
                      "opencl: the kernel's tiles need %llu bytes of local memory, more than the device's "
                      "CL_DEVICE_LOCAL_MEM_SIZE of %llu",
                      (unsigned long long)demand->local_bytes, (unsigned long long)limits->local_memory_bytes);
  if (demand->constant_bytes > limits->max_constant_bytes)
    return ocl_status(HETC_PLUGIN_STATUS_DEVICE_LIMITS,
                      "opencl: the kernel's tables need %llu bytes of __constant memory, more than the device's "
                      "CL_DEVICE_MAX_CONSTANT_BUFFER_SIZE of %llu",
                      (unsigned long long)demand->constant_bytes, (unsigned long long)limits->max_constant_bytes);
  return NULL;
}

/* ------------------------------------------------------------------------ */
/* Declaring, parsing, describing                                           */
/* ------------------------------------------------------------------------ */

/* What the constraint needs: the space, the workload (its input inline:
 * the context is interned by its bytes) and the limits. */
typedef struct constraint_context_t {
  ocl_space_t space;
  hetc_plugin_workload_t wl; /* inputs: NULL, see `input` */
  hetc_plugin_tensor_t input;
  ocl_limits_t limits;
} constraint_context_t;

/* The shared context equal to (space, wl, limits); NULL when out of memory. */
static const constraint_context_t *context_for(const ocl_space_t *space, const hetc_plugin_workload_t *wl,
                                               const ocl_limits_t *limits) {
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

static int64_t *field(ocl_config_t *c, const ocl_knob_spec_t *k) { return (int64_t *)((char *)c + k->offset); }
static const int64_t *cfield(const ocl_config_t *c, const ocl_knob_spec_t *k) {
  return (const int64_t *)((const char *)c + k->offset);
}

/* Vector loads split the register tile's columns evenly, and the config
 * fits the device. */
static int config_acceptable(const hetc_plugin_config_t *config, const void *user_data) {
  const constraint_context_t *ctx = user_data;
  if (!config || config->num_knobs != ctx->space.num_knobs) return 0;
  ocl_config_t cfg;
  memset(&cfg, 0, sizeof(cfg));
  for (int32_t i = 0; i < config->num_knobs; ++i) {
    if (config->knobs[i].count != 1) return 0;
    *field(&cfg, &ctx->space.knobs[i]) = config->knobs[i].values[0];
  }
  if (cfg.vector > 1 && cfg.tile_n % cfg.vector != 0) return 0;
  ocl_demand_t demand;
  hetc_plugin_workload_t wl = ctx->wl;
  wl.inputs = &ctx->input;
  ocl_config_demand(&wl, ctx->space.kind, &cfg, &demand);
  return ocl_demand_fits(&demand, &ctx->limits);
}

hetc_plugin_status_t ocl_space_define(const ocl_space_t *space, const hetc_plugin_workload_t *wl,
                                      const ocl_limits_t *limits, hetc_plugin_space_t *host_space) {
  const hetc_plugin_host_t *h = ocl_host;
  hetc_plugin_status_t s = NULL;
  for (int32_t i = 0; i < space->num_knobs && !s; ++i)
    s = h->space_define_knob(host_space, space->knobs[i].name, space->knobs[i].values, space->knobs[i].num_values);
  if (s || space->num_knobs == 0) return s;
  const constraint_context_t *ctx = context_for(space, wl, limits);
  if (!ctx) return ocl_status(HETC_PLUGIN_STATUS_OUT_OF_MEMORY, "opencl: out of memory");
  const char *names[OCL_MAX_KNOBS];
  for (int32_t i = 0; i < space->num_knobs; ++i) names[i] = space->knobs[i].name;
  s = h->space_add_constraint(host_space, names, space->num_knobs, config_acceptable, ctx);
  if (s) return s;
  hetc_plugin_knob_value_t knobs[OCL_MAX_KNOBS];
  int64_t values[OCL_MAX_KNOBS];
  for (int32_t i = 0; i < space->num_knobs; ++i) {
    values[i] = space->knobs[i].default_value;
    knobs[i].name = space->knobs[i].name;
    knobs[i].count = 1;
    knobs[i].values = &values[i];
  }
  hetc_plugin_config_t config = {space->num_knobs, knobs};
  return h->space_set_default(host_space, &config);
}

hetc_plugin_status_t ocl_config_parse(const ocl_space_t *space, const hetc_plugin_config_t *config,
                                      ocl_config_t *out) {
  memset(out, 0, sizeof(*out));
  for (int32_t i = 0; i < space->num_knobs; ++i) *field(out, &space->knobs[i]) = space->knobs[i].default_value;
  if (!config) return NULL;
  if (config->num_knobs < 0 || (config->num_knobs > 0 && !config->knobs))
    return ocl_status(HETC_PLUGIN_STATUS_INVALID_ARGUMENT, "opencl: malformed config (%d knobs)", config->num_knobs);
  for (int32_t j = 0; j < config->num_knobs; ++j) {
    const hetc_plugin_knob_value_t *kv = &config->knobs[j];
    if (!kv->name)
      return ocl_status(HETC_PLUGIN_STATUS_INVALID_ARGUMENT, "opencl: config knob %d has no name", j);
    int32_t found = -1;
    for (int32_t i = 0; i < space->num_knobs; ++i)
      if (strcmp(space->knobs[i].name, kv->name) == 0) found = i;
    if (found < 0)
      return ocl_status(HETC_PLUGIN_STATUS_INVALID_ARGUMENT,
                        "opencl: config has knob '%s', which this template's space does not define", kv->name);
    for (int32_t i = 0; i < j; ++i)
      if (config->knobs[i].name && strcmp(config->knobs[i].name, kv->name) == 0)
        return ocl_status(HETC_PLUGIN_STATUS_INVALID_ARGUMENT, "opencl: config gives knob '%s' twice", kv->name);
    const ocl_knob_spec_t *k = &space->knobs[found];
    if (kv->count != 1 || !kv->values)
      return ocl_status(HETC_PLUGIN_STATUS_INVALID_ARGUMENT, "opencl: knob '%s' takes exactly one value, got %d",
                        kv->name, kv->count);
    int ok = 0;
    for (int32_t v = 0; v < k->num_values; ++v) ok |= k->values[v] == kv->values[0];
    if (!ok) {
      char allowed[256] = "";
      size_t used = 0;
      for (int32_t v = 0; v < k->num_values && used < sizeof(allowed); ++v)
        used += (size_t)snprintf(allowed + used, sizeof(allowed) - used, "%s%lld", v ? "," : "",
                                 (long long)k->values[v]);
      return ocl_status(HETC_PLUGIN_STATUS_INVALID_ARGUMENT, "opencl: knob '%s' = %lld is outside the space {%s}",
                        kv->name, (long long)kv->values[0], allowed);
    }
    *field(out, k) = kv->values[0];
  }
  if (config->num_knobs != space->num_knobs)
    for (int32_t i = 0; i < space->num_knobs; ++i) {
      int present = 0;
      for (int32_t j = 0; j < config->num_knobs; ++j)
        present |= strcmp(config->knobs[j].name, space->knobs[i].name) == 0;
      if (!present)
        return ocl_status(HETC_PLUGIN_STATUS_INVALID_ARGUMENT, "opencl: config lacks knob '%s'",
                          space->knobs[i].name);
    }
  if (out->vector > 1 && out->tile_n % out->vector != 0)
    return ocl_status(HETC_PLUGIN_STATUS_INVALID_ARGUMENT,
                      "opencl: vector = %lld does not divide tile_n = %lld", (long long)out->vector,
                      (long long)out->tile_n);
  return NULL;
}

void ocl_config_describe(const ocl_space_t *space, const ocl_config_t *config, hpc_strbuf_t *sb) {
  if (space->num_knobs == 0) {
    hpc_strbuf_printf(sb, "(no knobs)");
    return;
  }
  for (int32_t i = 0; i < space->num_knobs; ++i)
    hpc_strbuf_printf(sb, "%s%s=%lld", i ? " " : "", space->knobs[i].name,
                      (long long)*cfield(config, &space->knobs[i]));
}
