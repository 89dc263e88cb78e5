/* The shared feature schema: names, and the rows the driver assembles from
 * a plugin's loop-nest features plus its own workload, device and derived
 * features (features.h). */
#include "records/features.h"
#include "plugins/abi_level.h"

#include <math.h>
#include <stddef.h>

#include "plugins/peaks.h"

/* The level features sit where HETC_FEATURE_AT_LEVEL says; the plugin's
 * indices end where the driver's begin; the enum, the table below and
 * feature-schema.md count the same features. */
_Static_assert(HETC_FEATURE_AT_LEVEL(HETC_FEATURE_LEVEL_CACHE, HETC_FEATURE_FIELD_SPATIAL) ==
                   HETC_FEATURE_CACHE_SPATIAL,
               "cache level offset");
_Static_assert(HETC_FEATURE_AT_LEVEL(HETC_FEATURE_LEVEL_GRID, HETC_FEATURE_FIELD_INTENSITY) ==
                   HETC_FEATURE_GRID_INTENSITY,
               "grid level offset");
_Static_assert(HETC_FEATURE_AT_LEVEL(HETC_FEATURE_LEVEL_COUNT, 0) == HETC_FEATURE_EXEC_FLOPS,
               "levels end where the loop features begin");
_Static_assert(HETC_FEATURE_PLUGIN_END == HETC_FEATURE_WL_OP, "plugin indices end at the driver's");
_Static_assert(HETC_FEATURE_BLOCK_TILE_OVER_L2 + 1 == HETC_FEATURE_COUNT, "count");

/* Indexed by hetc_plugin_feature_t: a missing entry is NULL, which the
 * tests catch (every name non-empty and unique). */
static const char *const feature_names[HETC_FEATURE_COUNT] = {
    [HETC_FEATURE_REG_SPATIAL] = "reg_spatial",
    [HETC_FEATURE_REG_REDUCTION] = "reg_reduction",
    [HETC_FEATURE_REG_BYTES_IN] = "reg_bytes_in",
    [HETC_FEATURE_REG_BYTES_WEIGHT] = "reg_bytes_weight",
    [HETC_FEATURE_REG_BYTES_OUT] = "reg_bytes_out",
    [HETC_FEATURE_REG_REUSE_IN] = "reg_reuse_in",
    [HETC_FEATURE_REG_REUSE_WEIGHT] = "reg_reuse_weight",
    [HETC_FEATURE_REG_INTENSITY] = "reg_intensity",
    [HETC_FEATURE_CACHE_SPATIAL] = "cache_spatial",
    [HETC_FEATURE_CACHE_REDUCTION] = "cache_reduction",
    [HETC_FEATURE_CACHE_BYTES_IN] = "cache_bytes_in",
    [HETC_FEATURE_CACHE_BYTES_WEIGHT] = "cache_bytes_weight",
    [HETC_FEATURE_CACHE_BYTES_OUT] = "cache_bytes_out",
    [HETC_FEATURE_CACHE_REUSE_IN] = "cache_reuse_in",
    [HETC_FEATURE_CACHE_REUSE_WEIGHT] = "cache_reuse_weight",
    [HETC_FEATURE_CACHE_INTENSITY] = "cache_intensity",
    [HETC_FEATURE_BLOCK_SPATIAL] = "block_spatial",
    [HETC_FEATURE_BLOCK_REDUCTION] = "block_reduction",
    [HETC_FEATURE_BLOCK_BYTES_IN] = "block_bytes_in",
    [HETC_FEATURE_BLOCK_BYTES_WEIGHT] = "block_bytes_weight",
    [HETC_FEATURE_BLOCK_BYTES_OUT] = "block_bytes_out",
    [HETC_FEATURE_BLOCK_REUSE_IN] = "block_reuse_in",
    [HETC_FEATURE_BLOCK_REUSE_WEIGHT] = "block_reuse_weight",
    [HETC_FEATURE_BLOCK_INTENSITY] = "block_intensity",
    [HETC_FEATURE_GRID_SPATIAL] = "grid_spatial",
    [HETC_FEATURE_GRID_REDUCTION] = "grid_reduction",
    [HETC_FEATURE_GRID_BYTES_IN] = "grid_bytes_in",
    [HETC_FEATURE_GRID_BYTES_WEIGHT] = "grid_bytes_weight",
    [HETC_FEATURE_GRID_BYTES_OUT] = "grid_bytes_out",
    [HETC_FEATURE_GRID_REUSE_IN] = "grid_reuse_in",
    [HETC_FEATURE_GRID_REUSE_WEIGHT] = "grid_reuse_weight",
    [HETC_FEATURE_GRID_INTENSITY] = "grid_intensity",
    [HETC_FEATURE_EXEC_FLOPS] = "exec_flops",
    [HETC_FEATURE_VECTOR_WIDTH] = "vector_width",
    [HETC_FEATURE_UNROLL] = "unroll",
    [HETC_FEATURE_INNER_LOOP] = "inner_loop",
    [HETC_FEATURE_PARALLEL_UNITS] = "parallel_units",
    [HETC_FEATURE_THREADS_PER_GROUP] = "threads_per_group",
    [HETC_FEATURE_ALGO_DIRECT] = "algo_direct",
    [HETC_FEATURE_ALGO_IM2COL] = "algo_im2col",
    [HETC_FEATURE_ALGO_WINOGRAD] = "algo_winograd",
    [HETC_FEATURE_ALGO_GEMM] = "algo_gemm",
    [HETC_FEATURE_ALGO_DEPTHWISE] = "algo_depthwise",
    [HETC_FEATURE_ALGO_OTHER] = "algo_other",
    [HETC_FEATURE_LAYOUT_NCHW] = "layout_nchw",
    [HETC_FEATURE_LAYOUT_NHWC] = "layout_nhwc",
    [HETC_FEATURE_LAYOUT_NCHWC] = "layout_nchwc",
    [HETC_FEATURE_WL_OP] = "wl_op",
    [HETC_FEATURE_WL_FLOPS] = "wl_flops",
    [HETC_FEATURE_WL_N] = "wl_n",
    [HETC_FEATURE_WL_C] = "wl_c",
    [HETC_FEATURE_WL_H] = "wl_h",
    [HETC_FEATURE_WL_W] = "wl_w",
    [HETC_FEATURE_WL_K] = "wl_k",
    [HETC_FEATURE_WL_OH] = "wl_oh",
    [HETC_FEATURE_WL_OW] = "wl_ow",
    [HETC_FEATURE_WL_KH] = "wl_kh",
    [HETC_FEATURE_WL_KW] = "wl_kw",
    [HETC_FEATURE_WL_STRIDE_H] = "wl_stride_h",
    [HETC_FEATURE_WL_STRIDE_W] = "wl_stride_w",
    [HETC_FEATURE_WL_DILATION_H] = "wl_dilation_h",
    [HETC_FEATURE_WL_DILATION_W] = "wl_dilation_w",
    [HETC_FEATURE_WL_PADDING] = "wl_padding",
    [HETC_FEATURE_WL_GROUPS] = "wl_groups",
    [HETC_FEATURE_WL_DEPTHWISE] = "wl_depthwise",
    [HETC_FEATURE_WL_HAS_BIAS] = "wl_has_bias",
    [HETC_FEATURE_WL_HAS_RESIDUAL] = "wl_has_residual",
    [HETC_FEATURE_WL_ACTIVATION] = "wl_activation",
    [HETC_FEATURE_DEV_KIND] = "dev_kind",
    [HETC_FEATURE_DEV_PEAK_GFLOPS] = "dev_peak_gflops",
    [HETC_FEATURE_DEV_BANDWIDTH_GBPS] = "dev_bandwidth_gbps",
    [HETC_FEATURE_DEV_COMPUTE_UNITS] = "dev_compute_units",
    [HETC_FEATURE_DEV_SIMD_WIDTH] = "dev_simd_width",
    [HETC_FEATURE_DEV_MAX_THREADS_PER_GROUP] = "dev_max_threads_per_group",
    [HETC_FEATURE_DEV_LOCAL_MEMORY] = "dev_local_memory",
    [HETC_FEATURE_DEV_L1] = "dev_l1",
    [HETC_FEATURE_DEV_L2] = "dev_l2",
    [HETC_FEATURE_DEV_L3] = "dev_l3",
    [HETC_FEATURE_PARALLEL_BALANCE] = "parallel_balance",
    [HETC_FEATURE_CACHE_TILE_OVER_L1] = "cache_tile_over_l1",
    [HETC_FEATURE_BLOCK_TILE_OVER_L2] = "block_tile_over_l2",
};

const char *hetc_feature_name(int32_t index) {
  return index >= 0 && index < HETC_FEATURE_COUNT ? feature_names[index] : NULL;
}

int hetc_feature_is_plugin_owned(int32_t index) {
  return index >= 0 && index < HETC_FEATURE_PLUGIN_END;
}

/* ------------------------------------------------------------------------ */

/* The schema's scale for magnitudes. */
static float log2p(double x) { return (float)log2(1.0 + x); }

/* Inverse of log2p, for the derived features; NaN stays NaN. */
static double unlog2p(float f) { return exp2((double)f) - 1.0; }

/* A descriptor's number, or missing when the descriptor says 0 (unknown). */
static float known_log2p(double x) { return x > 0 ? log2p(x) : NAN; }

/* N, C, H, W of a tensor of any rank: rank 4 as it is, rank 2 as [N, C]
 * on a 1x1 plane (dense), rank 1 as one row of channels, further dims
 * folded into H. */
static void tensor_nchw(const hetc_plugin_tensor_t *t, double out[4]) {
  out[0] = out[1] = out[2] = out[3] = 1;
  if (!t || t->rank < 1 || t->rank > HETC_PLUGIN_MAX_RANK) return;
  if (t->rank == 1) {
    out[1] = (double)t->shape[0];
    return;
  }
  out[0] = (double)t->shape[0];
  out[1] = (double)t->shape[1];
  if (t->rank >= 3) out[2] = (double)t->shape[2];
  if (t->rank >= 4) out[3] = (double)t->shape[3];
  for (int32_t i = 4; i < t->rank; ++i) out[2] *= (double)t->shape[i];
}

static void put_workload(const hetc_plugin_workload_t *wl, float *out) {
  double in[4], o[4];
  tensor_nchw(wl->num_inputs > 0 ? &wl->inputs[0] : NULL, in);
  tensor_nchw(&wl->output, o);
  const int conv = wl->op == HETC_PLUGIN_OP_CONV2D, dense = wl->op == HETC_PLUGIN_OP_DENSE;
  /* Dense is a 1x1 convolution of a 1x1 plane; other ops keep the
   * workload's own window attributes (zero where they have none). */
  double kh = wl->kernel[0], kw = wl->kernel[1], sh = wl->strides[0], sw = wl->strides[1];
  double dh = wl->dilation[0], dw = wl->dilation[1], groups = conv ? wl->groups : 1;
  double padding = (double)wl->padding[0] + wl->padding[1] + wl->padding[2] + wl->padding[3];
  if (dense) {
    kh = kw = sh = sw = dh = dw = 1;
    padding = 0;
  }
  if (groups < 1) groups = 1;
  double macs;
  if (conv)
    macs = o[0] * o[1] * o[2] * o[3] * (in[1] / groups) * kh * kw;
  else if (dense)
    macs = o[0] * o[1] * in[1];
  else if (wl->op == HETC_PLUGIN_OP_MAX_POOL2D || wl->op == HETC_PLUGIN_OP_AVG_POOL2D)
    macs = o[0] * o[1] * o[2] * o[3] * kh * kw / 2; /* one op per window tap */
  else if (wl->op == HETC_PLUGIN_OP_GLOBAL_AVG_POOL2D)
    macs = in[0] * in[1] * in[2] * in[3] / 2;
  else
    macs = o[0] * o[1] * o[2] * o[3] / 2; /* one op per output element */
  out[HETC_FEATURE_WL_OP] = (float)wl->op;
  out[HETC_FEATURE_WL_FLOPS] = log2p(2 * macs);
  out[HETC_FEATURE_WL_N] = log2p(in[0]);
  out[HETC_FEATURE_WL_C] = log2p(in[1]);
  out[HETC_FEATURE_WL_H] = log2p(in[2]);
  out[HETC_FEATURE_WL_W] = log2p(in[3]);
  out[HETC_FEATURE_WL_K] = log2p(o[1]);
  out[HETC_FEATURE_WL_OH] = log2p(o[2]);
  out[HETC_FEATURE_WL_OW] = log2p(o[3]);
  out[HETC_FEATURE_WL_KH] = (float)kh;
  out[HETC_FEATURE_WL_KW] = (float)kw;
  out[HETC_FEATURE_WL_STRIDE_H] = (float)sh;
  out[HETC_FEATURE_WL_STRIDE_W] = (float)sw;
  out[HETC_FEATURE_WL_DILATION_H] = (float)dh;
  out[HETC_FEATURE_WL_DILATION_W] = (float)dw;
  out[HETC_FEATURE_WL_PADDING] = (float)padding;
  out[HETC_FEATURE_WL_GROUPS] = log2p(groups);
  out[HETC_FEATURE_WL_DEPTHWISE] =
      conv && groups > 1 && groups == in[1] && groups == o[1] ? 1.0f : 0.0f;
  out[HETC_FEATURE_WL_HAS_BIAS] = (conv || dense) && wl->epilogue.has_bias ? 1.0f : 0.0f;
  out[HETC_FEATURE_WL_HAS_RESIDUAL] = (conv || dense) && wl->epilogue.has_residual ? 1.0f : 0.0f;
  out[HETC_FEATURE_WL_ACTIVATION] =
      (float)(conv || dense ? wl->epilogue.activation
                            : wl->op == HETC_PLUGIN_OP_ELEMENTWISE ? wl->activation : 0);
}

static void put_device(const hetc_plugin_device_t *d, float *out) {
  out[HETC_FEATURE_DEV_KIND] = d->kind > 0 ? (float)d->kind : NAN;
  /* The effective peak: the best kept for the fingerprint when it is above
   * the plugin's figure of this run (plugins/peaks.h), so that rows of one
   * device agree from run to run and with the saved model's. */
  out[HETC_FEATURE_DEV_PEAK_GFLOPS] = known_log2p(hetc_device_peak_gflops(d));
  out[HETC_FEATURE_DEV_BANDWIDTH_GBPS] = known_log2p(d->memory_bandwidth_gbps);
  out[HETC_FEATURE_DEV_COMPUTE_UNITS] = known_log2p(d->compute_units);
  out[HETC_FEATURE_DEV_SIMD_WIDTH] = d->simd_width_fp32 > 0 ? (float)d->simd_width_fp32 : NAN;
  out[HETC_FEATURE_DEV_MAX_THREADS_PER_GROUP] = known_log2p(d->max_threads_per_group);
  out[HETC_FEATURE_DEV_LOCAL_MEMORY] = known_log2p((double)d->local_memory_bytes);
  out[HETC_FEATURE_DEV_L1] = known_log2p((double)d->cache_bytes[0]);
  out[HETC_FEATURE_DEV_L2] = known_log2p((double)d->cache_bytes[1]);
  out[HETC_FEATURE_DEV_L3] = known_log2p((double)d->cache_bytes[2]);
}

/* Bytes (in + weight + out) of one tile at `level`, from the plugin's
 * log2p values; NaN when any is missing. */
static double tile_bytes(const float *out, int level) {
  return unlog2p(out[HETC_FEATURE_AT_LEVEL(level, HETC_FEATURE_FIELD_BYTES_IN)]) +
         unlog2p(out[HETC_FEATURE_AT_LEVEL(level, HETC_FEATURE_FIELD_BYTES_WEIGHT)]) +
         unlog2p(out[HETC_FEATURE_AT_LEVEL(level, HETC_FEATURE_FIELD_BYTES_OUT)]);
}

/* Features that relate the plugin's loop nest to the device, by one
 * formula for every plugin, so that a model sees "fits in L1" rather than
 * raw sizes it would have to compare across two columns. */
static void put_derived(const hetc_plugin_device_t *d, float *out) {
  const double cu = d->compute_units;
  /* log2p values are floats: round the task count back to an integer. */
  const double units = nearbyint(unlog2p(out[HETC_FEATURE_PARALLEL_UNITS]));
  out[HETC_FEATURE_PARALLEL_BALANCE] =
      cu > 0 && units >= 1 ? (float)(units / (ceil(units / cu) * cu)) : NAN;
  const double l1 = cu > 0 ? (double)d->cache_bytes[0] / cu : 0;
  const double l2 = cu > 0 ? (double)d->cache_bytes[1] / cu : 0;
  const double cache = tile_bytes(out, HETC_FEATURE_LEVEL_CACHE);
  const double block = tile_bytes(out, HETC_FEATURE_LEVEL_BLOCK);
  out[HETC_FEATURE_CACHE_TILE_OVER_L1] = l1 > 0 && cache > 0 ? (float)log2(cache / l1) : NAN;
  out[HETC_FEATURE_BLOCK_TILE_OVER_L2] = l2 > 0 && block > 0 ? (float)log2(block / l2) : NAN;
}

/* The plugin's part: NaN unless a schema-1 plugin fills it. */
static hetc_status_t put_plugin(const hetc_plugin_t *plugin, const hetc_plugin_instance_t *instance,
                                int32_t device_index, const hetc_plugin_workload_t *workload,
                                int32_t template_index, const hetc_plugin_config_t *config,
                                float *out) {
  /* features() of minor 0 came before the schema was defined. */
  if (hetc_plugin_abi_level(plugin) < 1 || !HETC_PLUGIN_HAS_FIELD(plugin, hetc_plugin_t, features) ||
      !plugin->features)
    return NULL;
  int32_t count = 0;
  hetc_status_t status = plugin->features(instance, device_index, workload, template_index,
                                          config, out, HETC_FEATURE_COUNT, &count);
  if (status) {
    for (int32_t i = 0; i < HETC_FEATURE_PLUGIN_END; ++i) out[i] = NAN;
    if (hetc_status_code(status) != HETC_STATUS_UNSUPPORTED) return status;
    hetc_status_free(status);
    return NULL;
  }
  /* What the plugin did not claim to fill, and values a model cannot use,
   * are missing. */
  for (int32_t i = 0; i < HETC_FEATURE_PLUGIN_END; ++i)
    if (i >= count || isinf(out[i])) out[i] = NAN;
  return NULL;
}

hetc_status_t hetc_features_extract(const hetc_plugin_t *plugin,
                                    const hetc_plugin_instance_t *instance,
                                    int32_t device_index,
                                    const hetc_plugin_workload_t *workload,
                                    int32_t template_index,
                                    const hetc_plugin_config_t *config, float *out) {
  if (!out) return hetc_status_new(HETC_STATUS_INVALID_ARGUMENT, "features: null output row");
  for (int32_t i = 0; i < HETC_FEATURE_COUNT; ++i) out[i] = NAN;
  if (!plugin || !instance || !workload)
    return hetc_status_new(HETC_STATUS_INVALID_ARGUMENT,
                           "features: null plugin, instance or workload");
  const hetc_plugin_device_t *device = plugin->device_get(instance, device_index);
  if (!device)
    return hetc_status_new(HETC_STATUS_INVALID_ARGUMENT, "features: %s has no device %d",
                           plugin->name, device_index);
  hetc_status_t status =
      put_plugin(plugin, instance, device_index, workload, template_index, config, out);
  /* The driver's indices are written after the plugin's call, whatever it
   * wrote there. */
  put_workload(workload, out);
  put_device(device, out);
  put_derived(device, out);
  return status;
}
