#include "check/kernel_check.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "common/clock.h"
#include "kernel/kernel_args.h"
#include "kernel/plugin_calls.h"
#include "package/plan.h"
#include "graph/graph.h"
#include "graph/infer.h"
#include "reference/reference.h"
#include "space/space.h"

static void fill(float *data, int64_t count, uint64_t *state) {
  for (int64_t i = 0; i < count; ++i) {
    *state ^= *state >> 12;
    *state ^= *state << 25;
    *state ^= *state >> 27;
    data[i] = (float)((double)((*state * UINT64_C(0x2545F4914F6CDD1D)) >> 40) / 8388608.0 - 1.0);
  }
}

/* A template named *tf32* multiplies on tensor cores with TF32 operands (10
 * mantissa bits). Its inputs and weights are drawn as TF32 values, rounded
 * as the kernel rounds them, so that the kernel and the fp32 reference
 * multiply the same numbers and the comparison keeps fp32's tolerance (it
 * then checks the kernel's arithmetic, not TF32's precision). */
static void round_to_tf32(float *data, int64_t count) {
  for (int64_t i = 0; i < count; ++i) {
    uint32_t bits;
    memcpy(&bits, &data[i], 4);
    bits = (bits + 0x1000u) & 0xffffe000u;
    memcpy(&data[i], &bits, 4);
  }
}

static int uses_tf32(hetc_plugin_entry_t *entry, int32_t device, const hetc_plugin_workload_t *workload,
                     int32_t template_index) {
  const char *name = hetc_entry_template_name(entry, device, workload, template_index);
  return name && strstr(name, "tf32") != NULL;
}

hetc_status_t hetc_kernel_check_run_default(hetc_plugin_entry_t *entry, const hetc_plugin_workload_t *workload,
                                       int32_t template_index, uint64_t seed, int32_t timed_repeats,
                                       kernel_check_result_t *out) {
  const hetc_plugin_t *p = entry->plugin;
  hetc_plugin_space_t *space = NULL;
  int64_t index = 0;
  hetc_space_config_t config;
  HETC_RETURN_IF_ERROR(hetc_space_create(&space));
  hetc_status_t status = p->template_define_space(entry->instance, 0, workload, template_index, space);
  if (!status) status = hetc_space_default(space, &index);
  if (!status) status = hetc_space_config_at(space, index, &config);
  if (!status) status = hetc_kernel_check_run(entry, workload, template_index, &config.view, seed, timed_repeats, out);
  hetc_space_free(space);
  return status;
}

int64_t hetc_kernel_check_random(uint64_t *rng, int64_t lo, int64_t hi) {
  *rng ^= *rng << 13;
  *rng ^= *rng >> 7;
  *rng ^= *rng << 17;
  return lo + (int64_t)(*rng % (uint64_t)(hi - lo + 1));
}

void hetc_kernel_check_random_conv(uint64_t *rng, const kernel_check_conv_limits_t *limits, int index,
                              hetc_plugin_workload_t *w, hetc_plugin_tensor_t *inputs) {
#define NEXT(lo, hi) hetc_kernel_check_random(rng, (lo), (hi))
  memset(w, 0, sizeof(*w));
  int64_t cin, cout;
  int32_t groups;
  switch (index % 3) {
    case 0: groups = 1; cin = NEXT(1, limits->dense_in_channels); cout = NEXT(1, limits->dense_out_channels); break;
    case 1: cin = NEXT(2, limits->depthwise_channels); groups = (int32_t)cin; cout = cin; break;
    default:
      if ((index / 6) % 2 == 0) {
        groups = (int32_t)NEXT(2, 3);
        cin = groups * NEXT(1, 5);
        cout = groups * NEXT(1, 6);
      } else {
        /* As real grouped convs have them (ResNeXt, RegNet): 4 to 16
         * channels a group, output channels a multiple of 8. */
        static const int64_t per_group[3] = {4, 8, 16};
        groups = (int32_t)NEXT(2, 4);
        cin = groups * per_group[NEXT(0, 2)];
        cout = groups * per_group[NEXT(0, 2)];
      }
      break;
  }
  for (;;) {
    w->kernel[0] = (int32_t)NEXT(1, 5);
    w->kernel[1] = (int32_t)NEXT(1, 5);
    w->strides[0] = (int32_t)NEXT(1, 3);
    w->strides[1] = (int32_t)NEXT(1, 3);
    w->dilation[0] = (int32_t)NEXT(1, 2);
    w->dilation[1] = (int32_t)NEXT(1, 2);
    for (int p = 0; p < 4; ++p) w->padding[p] = (int32_t)NEXT(0, 2);
    int64_t h = NEXT(3, limits->height), wd = NEXT(3, limits->width);
    int64_t oh = hetc_window_output_extent(h, w->kernel[0], w->strides[0], w->padding[0], w->padding[2],
                                           w->dilation[0], 0);
    int64_t ow = hetc_window_output_extent(wd, w->kernel[1], w->strides[1], w->padding[1], w->padding[3],
                                           w->dilation[1], 0);
    if (oh < 1 || ow < 1) continue;
    inputs[0] = (hetc_plugin_tensor_t){HETC_PLUGIN_DTYPE_FLOAT32, 4, {NEXT(1, 2), cin, h, wd}, {0, 0}};
    w->output = (hetc_plugin_tensor_t){HETC_PLUGIN_DTYPE_FLOAT32, 4, {inputs[0].shape[0], cout, oh, ow}, {0, 0}};
    break;
  }
  w->op = HETC_PLUGIN_OP_CONV2D;
  w->groups = groups;
  w->epilogue.has_bias = (int32_t)NEXT(0, 1);
  /* Every activation an epilogue may apply (plugin.h's
   * HETC_PLUGIN_ACT_IS_EPILOGUE). */
  static const int32_t activations[] = {HETC_PLUGIN_ACT_NONE,      HETC_PLUGIN_ACT_RELU,     HETC_PLUGIN_ACT_RELU6,
                                        HETC_PLUGIN_ACT_SIGMOID,   HETC_PLUGIN_ACT_TANH,     HETC_PLUGIN_ACT_SILU,
                                        HETC_PLUGIN_ACT_HARDSWISH, HETC_PLUGIN_ACT_HARDSIGMOID, HETC_PLUGIN_ACT_GELU,
                                        HETC_PLUGIN_ACT_GELU_TANH};
  w->epilogue.activation = activations[NEXT(0, (int64_t)(sizeof(activations) / sizeof(activations[0])) - 1)];
  w->epilogue.has_residual = index % 4 == 3;
  w->num_inputs = 1 + w->epilogue.has_residual;
  inputs[1] = w->output;
  w->inputs = inputs;
#undef NEXT
}

void hetc_kernel_check_conv_3x3_stride1(hetc_plugin_workload_t *w, hetc_plugin_tensor_t *inputs) {
  const hetc_plugin_tensor_t *in = &inputs[0];
  w->kernel[0] = w->kernel[1] = 3;
  w->strides[0] = w->strides[1] = 1;
  w->dilation[0] = w->dilation[1] = 1;
  /* Inputs are at least 3 x 3, so the output is at least 1 x 1. */
  w->output.shape[2] = hetc_window_output_extent(in->shape[2], 3, 1, w->padding[0], w->padding[2], 1, 0);
  w->output.shape[3] = hetc_window_output_extent(in->shape[3], 3, 1, w->padding[1], w->padding[3], 1, 0);
  inputs[1] = w->output;
}

/* Consumers may rely on the padding channels of an NCHWc output being
 * zero (plugin.h): a kernel that leaves them unwritten fails. */
static hetc_status_t check_padding_zero(const hetc_plugin_tensor_t *type, const float *data) {
  if (type->layout.kind != HETC_PLUGIN_LAYOUT_NCHWC || type->rank != 4) return NULL;
  const int64_t block = type->layout.block, channels = type->shape[1];
  const int64_t blocks = (channels + block - 1) / block, plane = type->shape[2] * type->shape[3];
  for (int64_t n = 0; n < type->shape[0]; ++n)
    for (int64_t c = channels; c < blocks * block; ++c)
      for (int64_t p = 0; p < plane; ++p) {
        float value = data[((n * blocks + c / block) * plane + p) * block + c % block];
        if (value != 0.0f)
          return hetc_status_new(HETC_STATUS_INTERNAL,
                                 "the NCHW%lldc output's padding channel %lld holds %g, not zero (consumers rely on "
                                 "zeros there)", (long long)block, (long long)c, value);
      }
  return NULL;
}

static int same_layout(hetc_plugin_layout_t a, hetc_plugin_layout_t b) {
  return a.kind == b.kind && (a.kind != HETC_PLUGIN_LAYOUT_NCHWC || a.block == b.block);
}

static void describe_layout(hetc_plugin_layout_t layout, char *out, size_t size) {
  hetc_plugin_tensor_t type = {.rank = 4, .layout = layout};
  hetc_layout_name(&type, out, size);
}

/* Runs a built artifact on random data; without `compare`, the reference
 * is not run and max_relative_error is 0. The artifact stays the caller's. */
static hetc_status_t run_artifact(hetc_plugin_entry_t *entry, int32_t device, const hetc_plugin_workload_t *workload,
                                  int32_t template_index, const hetc_plugin_artifact_t *artifact, uint64_t seed,
                                  int32_t timed_repeats, int compare, kernel_check_result_t *out) {
  memset(out, 0, sizeof(*out));
  const hetc_plugin_artifact_info_t *info = hetc_entry_artifact_info(entry, artifact);
  if (!info) return hetc_status_new(HETC_STATUS_INTERNAL, "artifact_info returned NULL for a built artifact");
  /* A layout transform's layouts are what it computes: one whose artifact
   * reads or writes other layouts than those requested (a plain copy that
   * calls both row-major) would pass the comparison below, which converts
   * through the layouts artifact_info names. */
  if (workload->op == HETC_PLUGIN_OP_LAYOUT_TRANSFORM && info->num_inputs == 1 && info->input_layouts &&
      (!same_layout(info->input_layouts[0], workload->inputs[0].layout) ||
       !same_layout(info->output_layout, workload->output.layout))) {
    char want_in[32], want_out[32], got_in[32], got_out[32];
    describe_layout(workload->inputs[0].layout, want_in, sizeof(want_in));
    describe_layout(workload->output.layout, want_out, sizeof(want_out));
    describe_layout(info->input_layouts[0], got_in, sizeof(got_in));
    describe_layout(info->output_layout, got_out, sizeof(got_out));
    return hetc_status_new(HETC_STATUS_INTERNAL,
                           "the layout_transform %s -> %s was requested; artifact_info describes %s -> %s", want_in,
                           want_out, got_in, got_out);
  }
  uint64_t state = seed | 1;
  const int32_t n_in = workload->num_inputs, n_params = info->num_params > 0 && info->num_params <= 4 ? info->num_params : 0;
  float *logical_in[HETC_MAX_NODE_INPUTS] = {0}, *logical_params[4] = {0};
  hetc_plugin_tensor_t out_type = workload->output;
  out_type.layout = info->output_layout;
  const int64_t out_count = hetc_layout_element_count(&out_type);
  int64_t logical_out_count = 1;
  for (int32_t d = 0; d < workload->output.rank; ++d) logical_out_count *= workload->output.shape[d];
  float *want = malloc(sizeof(float) * (size_t)logical_out_count);
  float *got = malloc(sizeof(float) * (size_t)(out_count > 0 ? out_count : 1));
  float *got_logical = malloc(sizeof(float) * (size_t)logical_out_count);
  hetc_status_t status = !want || !got || !got_logical ? hetc_status_new(HETC_STATUS_OUT_OF_MEMORY, "check") : NULL;
  const int tf32 = uses_tf32(entry, device, workload, template_index);
  /* Random logical data; kernel_args converts and packs it. */
  for (int32_t i = 0; !status && i < n_in; ++i) {
    hetc_plugin_tensor_t logical = workload->inputs[i];
    logical.layout = (hetc_plugin_layout_t){HETC_PLUGIN_LAYOUT_ROW_MAJOR, 0};
    const int64_t count = hetc_layout_element_count(&logical);
    if (!(logical_in[i] = malloc(sizeof(float) * (size_t)count))) {
      status = hetc_status_new(HETC_STATUS_OUT_OF_MEMORY, "check");
      break;
    }
    fill(logical_in[i], count, &state);
    /* log is compared where it is finite: on inputs in (0, 1]. */
    if (workload->op == HETC_PLUGIN_OP_ELEMENTWISE && workload->activation == HETC_PLUGIN_ACT_LOG)
      for (int64_t k = 0; k < count; ++k) logical_in[i][k] = 0.5f * (logical_in[i][k] + 1.0f) + 1.0f / 1024;
    if (tf32) round_to_tf32(logical_in[i], count);
  }
  for (int32_t k = 0; !status && k < n_params; ++k) {
    const int64_t count = hetc_kernel_param_elements(workload, k);
    if (!(logical_params[k] = malloc(sizeof(float) * (size_t)count))) {
      status = hetc_status_new(HETC_STATUS_OUT_OF_MEMORY, "check");
      break;
    }
    fill(logical_params[k], count, &state);
    if (tf32 && k == 0) round_to_tf32(logical_params[k], count);
  }
  hetc_kernel_args_t args;
  memset(&args, 0, sizeof(args));
  if (!status)
    status = hetc_kernel_args_create(entry, device, workload, artifact, (const float *const *)logical_in,
                                     (const float *const *)logical_params, &args);
  if (!status) status = hetc_kernel_args_run(&args, artifact);
  if (!status) status = hetc_kernel_args_read_output(&args, workload, got_logical, got);
  out->avg_inner_loop_length = info->avg_inner_loop_length;
  if (!status && compare) status = check_padding_zero(&out_type, got);
  if (!status && compare) {
    hetc_plugin_workload_t logical = *workload;
    hetc_plugin_tensor_t logical_types[HETC_MAX_NODE_INPUTS];
    for (int32_t i = 0; i < n_in; ++i) {
      logical_types[i] = workload->inputs[i];
      logical_types[i].layout = (hetc_plugin_layout_t){HETC_PLUGIN_LAYOUT_ROW_MAJOR, 0};
    }
    logical.inputs = logical_types;
    logical.output.layout = (hetc_plugin_layout_t){HETC_PLUGIN_LAYOUT_ROW_MAJOR, 0};
    status = hetc_reference_run_op(&logical, (const float *const *)logical_in,
                                   (const float *const *)logical_params, want);
  }
  if (!status && compare) {
    double max_diff = 0, max_ref = 0;
    for (int64_t i = 0; i < logical_out_count; ++i) {
      double diff = fabs((double)got_logical[i] - want[i]);
      if (!(diff <= max_diff)) max_diff = diff;
      if (fabs(want[i]) > max_ref) max_ref = fabs(want[i]);
    }
    out->max_relative_error = max_ref > 0 ? max_diff / max_ref : max_diff;
  }
  if (!status && timed_repeats > 0) {
    double *samples = calloc((size_t)timed_repeats, sizeof(double));
    if (!samples) status = hetc_status_new(HETC_STATUS_OUT_OF_MEMORY, "check");
    if (!status) status = hetc_entry_time(entry, artifact, args.buffers, args.count, 1, timed_repeats, samples);
    if (!status) {
      hetc_sort_doubles(samples, (size_t)timed_repeats);
      out->seconds = samples[timed_repeats / 2];
    }
    free(samples);
  }
  hetc_kernel_args_release(&args);
  for (int32_t i = 0; i < n_in; ++i) free(logical_in[i]);
  for (int32_t k = 0; k < 4; ++k) free(logical_params[k]);
  free(want);
  free(got);
  free(got_logical);
  return status;
}

static hetc_status_t run_kernel(hetc_plugin_entry_t *entry, const hetc_plugin_workload_t *workload,
                                int32_t template_index, const hetc_plugin_config_t *config, uint64_t seed,
                                int32_t timed_repeats, int compare, kernel_check_result_t *out) {
  hetc_plugin_artifact_t *artifact = NULL;
  HETC_RETURN_IF_ERROR(hetc_entry_build(entry, 0, workload, template_index, config, &artifact));
  hetc_status_t status = run_artifact(entry, 0, workload, template_index, artifact, seed, timed_repeats, compare, out);
  hetc_entry_artifact_release(entry, artifact);
  return status;
}

hetc_status_t hetc_kernel_check_artifact(hetc_plugin_entry_t *entry, int32_t device, const hetc_plugin_workload_t *workload,
                                    int32_t template_index, const hetc_plugin_artifact_t *artifact, uint64_t seed,
                                    int32_t timed_repeats, kernel_check_result_t *out) {
  return run_artifact(entry, device, workload, template_index, artifact, seed, timed_repeats, 1, out);
}

hetc_status_t hetc_kernel_check_time_artifact(hetc_plugin_entry_t *entry, int32_t device,
                                        const hetc_plugin_workload_t *workload, int32_t template_index,
                                        const hetc_plugin_artifact_t *artifact, int32_t timed_repeats,
                                        kernel_check_result_t *out) {
  return run_artifact(entry, device, workload, template_index, artifact, 1, timed_repeats, 0, out);
}

hetc_status_t hetc_kernel_check_run(hetc_plugin_entry_t *entry, const hetc_plugin_workload_t *workload,
                               int32_t template_index, const hetc_plugin_config_t *config,
                               uint64_t seed, int32_t timed_repeats, kernel_check_result_t *out) {
  return run_kernel(entry, workload, template_index, config, seed, timed_repeats, 1, out);
}

hetc_status_t hetc_kernel_check_time(hetc_plugin_entry_t *entry, const hetc_plugin_workload_t *workload,
                                int32_t template_index, const hetc_plugin_config_t *config,
                                int32_t timed_repeats, kernel_check_result_t *out) {
  return run_kernel(entry, workload, template_index, config, 1, timed_repeats, 0, out);
}
