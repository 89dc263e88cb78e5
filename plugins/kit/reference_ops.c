/* Portable C kernels for every op but conv2d (hetc/kit/reference_ops.h).
 * Semantics are those of hetc_plugin_workload_t in <hetc/plugin.h>. */
#include "hetc/kit/reference_ops.h"

#include <math.h>
#include <string.h>

#include "hetc/kit/host.h"
#include "hetc/kit/layout.h"
#include "hetc/kit/resize.h"
#include "hetc/kit/status.h"
#include "hetc/kit/workload.h"

int hetc_kit_reference_serves(int32_t op) {
  return op > HETC_PLUGIN_OP_CONV2D && op < HETC_PLUGIN_OP_COUNT_;
}

int32_t hetc_kit_reference_check(const hetc_plugin_workload_t *wl, hetc_kit_reason_t *reason) {
  const int32_t code = hetc_kit_workload_check(wl, reason);
  if (code) return code;
  if (!hetc_kit_reference_serves(wl->op))
    return hetc_kit_refuse(reason, HETC_PLUGIN_STATUS_UNSUPPORTED, "%s has no reference kernel",
                           hetc_kit_op_name(wl->op));
  return 0;
}

void hetc_kit_reference_layouts(const hetc_plugin_workload_t *wl, hetc_plugin_layout_t *input_layouts,
                                hetc_plugin_layout_t *output_layout) {
  /* A layout_transform is what converts layouts, so it follows them; the
   * other kernels read and write row-major and the driver converts. */
  const int converts = wl->op == HETC_PLUGIN_OP_LAYOUT_TRANSFORM;
  for (int32_t i = 0; i < wl->num_inputs; ++i)
    input_layouts[i] = converts ? wl->inputs[i].layout : hetc_kit_layout_row_major();
  *output_layout = converts ? wl->output.layout : hetc_kit_layout_row_major();
}

hetc_plugin_status_t hetc_kit_reference_pack(const char *template_name, const hetc_plugin_workload_t *wl,
                                             int32_t param_index, const float *logical, uint64_t count,
                                             void *out_packed) {
  const uint64_t want = hetc_kit_param_elements(wl, param_index);
  if (want == 0 || count != want)
    return hetc_kit_status(HETC_PLUGIN_STATUS_INVALID_ARGUMENT, "%s: param %d has %llu values, expected %llu",
                           template_name, param_index, (unsigned long long)count, (unsigned long long)want);
  memcpy(out_packed, logical, (size_t)count * sizeof(float));
  return NULL;
}

double hetc_kit_reference_inner_loop(const hetc_plugin_workload_t *wl) {
  const hetc_plugin_tensor_t *in = &wl->inputs[0];
  switch (wl->op) {
    case HETC_PLUGIN_OP_DENSE: return (double)in->shape[1];
    case HETC_PLUGIN_OP_MAX_POOL2D:
    case HETC_PLUGIN_OP_AVG_POOL2D: return wl->kernel[1];
    case HETC_PLUGIN_OP_GLOBAL_AVG_POOL2D: return (double)(in->shape[2] * in->shape[3]);
    case HETC_PLUGIN_OP_SOFTMAX:
#if HETC_KIT_ABI_AT_LEAST(1, 5)
    case HETC_PLUGIN_OP_LOG_SOFTMAX:
#endif
      return (double)in->shape[wl->axis];
    case HETC_PLUGIN_OP_BIAS_ADD: return (double)hetc_kit_logical_count(in) / (double)(in->shape[0] * in->shape[1]);
    case HETC_PLUGIN_OP_CONCAT: { /* one copy per (outer slice, input) */
      double outer = 1;
      for (int32_t d = 0; d < wl->axis; ++d) outer *= (double)wl->output.shape[d];
      return (double)hetc_kit_logical_count(&wl->output) / (outer * wl->num_inputs);
    }
    default: return (double)hetc_kit_logical_count(&wl->output); /* one flat loop */
  }
}

#if HETC_KIT_ABI_AT_LEAST(1, 6)
/* x + 3 clamped to [0, 6], as torch's hardswish and hardsigmoid compute
 * it; NaN passes through. */
static float hard_gate(float v) {
  const float t = v + 3.0f;
  return t < 0.0f ? 0.0f : (t > 6.0f ? 6.0f : t);
}
#endif

float hetc_kit_activate(int32_t activation, float v) {
  switch (activation) {
    case HETC_PLUGIN_ACT_RELU: return v < 0.0f ? 0.0f : v;
    case HETC_PLUGIN_ACT_RELU6: return v < 0.0f ? 0.0f : (v > 6.0f ? 6.0f : v);
    case HETC_PLUGIN_ACT_SIGMOID: return 1.0f / (1.0f + expf(-v));
    case HETC_PLUGIN_ACT_TANH: return tanhf(v);
#if HETC_KIT_ABI_AT_LEAST(1, 4)
    case HETC_PLUGIN_ACT_ELU: return v > 0.0f ? v : expm1f(v);
    case HETC_PLUGIN_ACT_SOFTPLUS: return (v > 0.0f ? v : 0.0f) + log1pf(expf(-fabsf(v)));
#endif
#if HETC_KIT_ABI_AT_LEAST(1, 5)
    case HETC_PLUGIN_ACT_EXP: return expf(v);
    case HETC_PLUGIN_ACT_LOG: return logf(v);
#endif
#if HETC_KIT_ABI_AT_LEAST(1, 6)
    case HETC_PLUGIN_ACT_SILU: return v / (1.0f + expf(-v));
    case HETC_PLUGIN_ACT_HARDSWISH: return v * hard_gate(v) / 6.0f;
    case HETC_PLUGIN_ACT_HARDSIGMOID: return hard_gate(v) / 6.0f;
#endif
#if HETC_KIT_ABI_AT_LEAST(1, 7)
    /* erfc(-x / sqrt 2) is 1 + erf(x / sqrt 2) without its cancellation
     * below 0, and x / (1 + exp(-2 y)) is 0.5 x (1 + tanh(y)). */
    case HETC_PLUGIN_ACT_GELU: return 0.5f * v * erfcf(v * -0.70710678f);
    case HETC_PLUGIN_ACT_GELU_TANH: return v / (1.0f + expf(-1.59576912f * (v + 0.044715f * v * v * v)));
    case HETC_PLUGIN_ACT_ERF: return erff(v);
#endif
    default: return v;
  }
}

/* ------------------------------------------------------------------------ */
/* Kernels                                                                  */
/* ------------------------------------------------------------------------ */

/* What every parallel body needs: the workload and the argument pointers. */
typedef struct job_t {
  const hetc_plugin_workload_t *wl;
  float *const *args;
  int64_t outer, extent, inner; /* op-specific sizes */
} job_t;

static void dense_rows(int64_t begin, int64_t end, void *user_data) {
  const job_t *j = user_data;
  const hetc_plugin_workload_t *wl = j->wl;
  const int has_res = wl->epilogue.has_residual, has_bias = wl->epilogue.has_bias;
  const int64_t K = wl->inputs[0].shape[1], U = wl->output.shape[1];
  const float *x = j->args[0], *res = has_res ? j->args[1] : NULL;
  const float *w = j->args[1 + has_res], *bias = has_bias ? j->args[2 + has_res] : NULL;
  float *y = j->args[2 + has_res + has_bias];
  for (int64_t i = begin; i < end; ++i) { /* i = n * U + u */
    const float *xr = x + (i / U) * K, *wr = w + (i % U) * K;
    float acc = 0.0f;
    for (int64_t k = 0; k < K; ++k) acc += xr[k] * wr[k];
    if (bias) acc += bias[i % U];
    if (res) acc += res[i];
    y[i] = hetc_kit_activate(wl->epilogue.activation, acc);
  }
}

static void pool_planes(int64_t begin, int64_t end, void *user_data) {
  const job_t *j = user_data;
  const hetc_plugin_workload_t *wl = j->wl;
  const int is_max = wl->op == HETC_PLUGIN_OP_MAX_POOL2D;
  const int64_t H = wl->inputs[0].shape[2], W = wl->inputs[0].shape[3];
  const int64_t OH = wl->output.shape[2], OW = wl->output.shape[3];
  const int64_t KH = wl->kernel[0], KW = wl->kernel[1], SH = wl->strides[0], SW = wl->strides[1];
  const int64_t PT = wl->padding[0], PL = wl->padding[1], PB = wl->padding[2], PR = wl->padding[3];
  for (int64_t p = begin; p < end; ++p) {
    const float *x = j->args[0] + p * H * W;
    float *y = j->args[1] + p * OH * OW;
    for (int64_t oh = 0; oh < OH; ++oh)
      for (int64_t ow = 0; ow < OW; ++ow) {
        /* The window clipped to the padded input, then to the real one:
         * the first gives count_include_pad's divisor, the second the
         * elements read (ceil_mode windows may hang past both). */
        const int64_t h0 = oh * SH - PT, w0 = ow * SW - PL;
        const int64_t h1 = h0 + KH < H + PB ? h0 + KH : H + PB;
        const int64_t w1 = w0 + KW < W + PR ? w0 + KW : W + PR;
        const int64_t padded = (h1 - h0) * (w1 - w0);
        const int64_t hs = h0 > 0 ? h0 : 0, ws = w0 > 0 ? w0 : 0;
        const int64_t he = h1 < H ? h1 : H, we = w1 < W ? w1 : W;
        float best = -INFINITY, sum = 0.0f;
        for (int64_t ih = hs; ih < he; ++ih)
          for (int64_t iw = ws; iw < we; ++iw) {
            const float v = x[ih * W + iw];
            sum += v;
            if (v > best || isnan(v)) best = v; /* a NaN is never hidden */
          }
        const int64_t real = (he - hs) * (we - ws);
        y[oh * OW + ow] = is_max ? best : sum / (float)(wl->count_include_pad ? padded : real);
      }
  }
}

static void global_pool_planes(int64_t begin, int64_t end, void *user_data) {
  const job_t *j = user_data;
  const int64_t plane = j->inner;
  for (int64_t p = begin; p < end; ++p) {
    const float *x = j->args[0] + p * plane;
    double sum = 0.0;
    for (int64_t i = 0; i < plane; ++i) sum += x[i];
    j->args[1][p] = (float)(sum / (double)plane);
  }
}

static void unary_chunk(int64_t begin, int64_t end, void *user_data) {
  const job_t *j = user_data;
  const float *x = j->args[0];
  float *y = j->args[1];
  for (int64_t i = begin; i < end; ++i) y[i] = hetc_kit_activate(j->wl->activation, x[i]);
}

/* Binary ops walk the output in row-major order and the second operand with
 * stride 0 along its broadcast dims. */
static void binary_chunk(int64_t begin, int64_t end, void *user_data) {
  const job_t *j = user_data;
  const hetc_plugin_workload_t *wl = j->wl;
  const hetc_plugin_tensor_t *out = &wl->output, *tb = &wl->inputs[1];
  const int32_t rank = out->rank;
  int64_t stride_b[HETC_PLUGIN_MAX_RANK], index[HETC_PLUGIN_MAX_RANK];
  int64_t s = 1, rest = begin, ib = 0;
  for (int32_t d = rank - 1; d >= 0; --d) {
    stride_b[d] = tb->shape[d] == 1 ? 0 : s;
    s *= tb->shape[d];
    index[d] = rest % out->shape[d];
    rest /= out->shape[d];
    ib += index[d] * stride_b[d];
  }
  const float *a = j->args[0], *b = j->args[1];
  float *y = j->args[2];
  const int32_t op = wl->binary;
  for (int64_t i = begin; i < end; ++i) {
    y[i] = op == HETC_PLUGIN_BINARY_MUL ? a[i] * b[ib] : op == HETC_PLUGIN_BINARY_ADD ? a[i] + b[ib] : a[i] / b[ib];
    for (int32_t d = rank - 1; d >= 0; --d) { /* next index, odometer style */
      ib += stride_b[d];
      if (++index[d] < out->shape[d]) break;
      ib -= stride_b[d] * index[d];
      index[d] = 0;
    }
  }
}

/* Lines [begin, end) of (outer, inner) along the softmax (or log_softmax)
 * axis. */
static void softmax_lines(int64_t begin, int64_t end, void *user_data) {
  const job_t *j = user_data;
  const int64_t extent = j->extent, inner = j->inner;
  for (int64_t line = begin; line < end; ++line) {
    const int64_t base = (line / inner) * extent * inner + line % inner;
    const float *x = j->args[0] + base;
    float *y = j->args[1] + base;
    /* Subtracting the maximum keeps expf from overflowing. */
    float max = x[0];
    for (int64_t k = 1; k < extent; ++k)
      if (x[k * inner] > max) max = x[k * inner];
    double sum = 0.0;
    for (int64_t k = 0; k < extent; ++k) {
      const float e = expf(x[k * inner] - max);
      y[k * inner] = e;
      sum += e;
    }
    if (j->wl->op != HETC_PLUGIN_OP_SOFTMAX) { /* log_softmax */
      const float log_sum = (float)log(sum);
      for (int64_t k = 0; k < extent; ++k) y[k * inner] = (x[k * inner] - max) - log_sum;
      continue;
    }
    const float scale = (float)(1.0 / sum);
    for (int64_t k = 0; k < extent; ++k) y[k * inner] *= scale;
  }
}

/* Outer slices [begin, end): each input's block of the slice in turn. */
static void concat_slices(int64_t begin, int64_t end, void *user_data) {
  const job_t *j = user_data;
  const hetc_plugin_workload_t *wl = j->wl;
  float *y = j->args[wl->num_inputs];
  for (int64_t o = begin; o < end; ++o) {
    int64_t offset = o * j->extent * j->inner;
    for (int32_t i = 0; i < wl->num_inputs; ++i) {
      const int64_t block = wl->inputs[i].shape[wl->axis] * j->inner;
      memcpy(y + offset, j->args[i] + o * block, (size_t)block * sizeof(float));
      offset += block;
    }
  }
}

/* Elements [begin, end) in row-major logical order, each from where the
 * input's layout keeps it to where the output's does. */
static void transform_chunk(int64_t begin, int64_t end, void *user_data) {
  const job_t *j = user_data;
  const hetc_plugin_tensor_t *in = &j->wl->inputs[0], *out = &j->wl->output;
  for (int64_t i = begin; i < end; ++i)
    j->args[1][hetc_kit_element_offset(out, i)] = j->args[0][hetc_kit_element_offset(in, i)];
}

static void bias_planes(int64_t begin, int64_t end, void *user_data) {
  const job_t *j = user_data;
  const int64_t C = j->extent, inner = j->inner;
  const float *x = j->args[0], *bias = j->args[1];
  float *y = j->args[2];
  for (int64_t p = begin; p < end; ++p) { /* p = n * C + c */
    const float b = bias[p % C];
    for (int64_t i = 0; i < inner; ++i) y[p * inner + i] = x[p * inner + i] + b;
  }
}

#if HETC_KIT_ABI_AT_LEAST(1, 4)
/* Output elements [begin, end) in row-major order, each read from the
 * input at the permuted index: an odometer over the output with the
 * input's stride for each output dim. */
static void transpose_chunk(int64_t begin, int64_t end, void *user_data) {
  const job_t *j = user_data;
  const hetc_plugin_workload_t *wl = j->wl;
  const hetc_plugin_tensor_t *in = &wl->inputs[0], *out = &wl->output;
  const int32_t rank = out->rank;
  int64_t in_stride[HETC_PLUGIN_MAX_RANK], stride[HETC_PLUGIN_MAX_RANK], index[HETC_PLUGIN_MAX_RANK];
  int64_t s = 1;
  for (int32_t d = rank - 1; d >= 0; --d) in_stride[d] = s, s *= in->shape[d];
  int64_t rest = begin, from = 0;
  for (int32_t d = rank - 1; d >= 0; --d) {
    stride[d] = in_stride[HETC_PLUGIN_PERM_AT(wl->axis, d)];
    index[d] = rest % out->shape[d];
    rest /= out->shape[d];
    from += index[d] * stride[d];
  }
  for (int64_t i = begin; i < end; ++i) {
    j->args[1][i] = j->args[0][from];
    for (int32_t d = rank - 1; d >= 0; --d) {
      from += stride[d];
      if (++index[d] < out->shape[d]) break;
      from -= stride[d] * index[d];
      index[d] = 0;
    }
  }
}
#endif

/* Iterations per parallel chunk such that a chunk does at least ~16k
 * elements of work: below that the pool's hand-off costs more than it
 * saves. */
static int64_t grain(int64_t work_per_iteration) {
  const int64_t g = 16384 / (work_per_iteration > 0 ? work_per_iteration : 1);
  return g > 1 ? g : 1;
}

/* j's outer, extent and inner: the dims before `axis`, at it, after it. */
static void split_at_axis(job_t *j, const hetc_plugin_tensor_t *t, int32_t axis) {
  j->extent = t->shape[axis];
  for (int32_t d = 0; d < axis; ++d) j->outer *= t->shape[d];
  for (int32_t d = axis + 1; d < t->rank; ++d) j->inner *= t->shape[d];
}

#if HETC_KIT_ABI_AT_LEAST(2, 0)
/* Output rows [begin, end) over every (n, c) plane (plane * OH + row), the
 * columns' taps a block at a time on the stack. */
static void resize_rows(int64_t begin, int64_t end, void *user_data) {
  enum { BLOCK = 512 };
  const job_t *j = user_data;
  const hetc_plugin_tensor_t *in = &j->wl->inputs[0], *out = &j->wl->output;
  const int64_t H = in->shape[2], W = in->shape[3], OH = out->shape[2], OW = out->shape[3];
  hetc_kit_resize_tap_t cols[BLOCK];
  for (int64_t c0 = 0; c0 < OW; c0 += BLOCK) {
    const int64_t n = OW - c0 < BLOCK ? OW - c0 : BLOCK;
    hetc_kit_resize_taps(j->wl, 3, c0, n, cols);
    for (int64_t r = begin; r < end; ++r) {
      hetc_kit_resize_tap_t row;
      hetc_kit_resize_taps(j->wl, 2, r % OH, 1, &row);
      const float *top = j->args[0] + (r / OH * H + row.lo) * W, *bottom = j->args[0] + (r / OH * H + row.hi) * W;
      float *y = j->args[1] + r * OW + c0;
      for (int64_t c = 0; c < n; ++c) {
        const hetc_kit_resize_tap_t t = cols[c];
        if (j->wl->params.resize.mode == HETC_PLUGIN_RESIZE_NEAREST) { /* a copy: an infinity stays one */
          y[c] = top[t.lo];
          continue;
        }
        const float upper = top[t.lo] + t.weight * (top[t.hi] - top[t.lo]);
        const float lower = bottom[t.lo] + t.weight * (bottom[t.hi] - bottom[t.lo]);
        y[c] = upper + row.weight * (lower - upper);
      }
    }
  }
}
#endif

#if HETC_KIT_ABI_AT_LEAST(2, 0)
/* Normalize's lines [begin, end): (outer, group, inner) triples, inner
 * fastest; a line's elements lie `inner` apart. Mean first, then the
 * variance about it, both in double. */
static void normalize_lines(int64_t begin, int64_t end, void *user_data) {
  const job_t *j = user_data;
  const hetc_plugin_normalize_params_t *p = &j->wl->params.normalize;
  const hetc_plugin_tensor_t *in = &j->wl->inputs[0];
  const int64_t channels = in->shape[p->axis], per_group = channels / p->groups, inner = j->inner;
  const int64_t rest = j->extent / channels, count = per_group * rest;
  const float *scale = p->affine ? j->args[1] : NULL, *bias = p->affine ? j->args[2] : NULL;
  float *y = j->args[p->affine ? 3 : 1];
  for (int64_t line = begin; line < end; ++line) {
    const int64_t i = line % inner, g = line / inner % p->groups, o = line / inner / p->groups;
    const int64_t first = ((o * channels + g * per_group) * rest) * inner + i;
    const float *x = j->args[0] + first;
    double sum = 0, squares = 0;
    for (int64_t k = 0; k < count; ++k) sum += x[k * inner];
    const double mean = sum / (double)count;
    for (int64_t k = 0; k < count; ++k) squares += (x[k * inner] - mean) * (x[k * inner] - mean);
    const double inv = 1.0 / sqrt(squares / (double)count + p->epsilon);
    for (int64_t k = 0; k < count; ++k) {
      const float v = (float)((x[k * inner] - mean) * inv);
      const int64_t c = g * per_group + k / rest;
      y[first + k * inner] = scale ? v * scale[c] + bias[c] : v;
    }
  }
}
#endif

#if HETC_KIT_ABI_AT_LEAST(2, 0)
/* Matmul's output rows [begin, end) of all batches: row r is batch r / M,
 * row r % M; outer M, extent K, inner N. Each sum in float, k ascending. */
static void matmul_rows(int64_t begin, int64_t end, void *user_data) {
  const job_t *j = user_data;
  const int64_t M = j->outer, K = j->extent, N = j->inner;
  for (int64_t r = begin; r < end; ++r) {
    const float *a = j->args[0] + r * K, *b = j->args[1] + r / M * K * N;
    float *y = j->args[2] + r * N;
    for (int64_t n = 0; n < N; ++n) y[n] = 0.0f;
    for (int64_t k = 0; k < K; ++k)
      for (int64_t n = 0; n < N; ++n) y[n] += a[k] * b[k * N + n];
  }
}
#endif

void hetc_kit_reference_run(const hetc_plugin_workload_t *wl, float *const *args) {
  void (*parallel_for)(int64_t, int64_t, hetc_plugin_parallel_body_fn_t, void *) = hetc_kit_host()->parallel_for;
  const hetc_plugin_tensor_t *in = &wl->inputs[0], *out = &wl->output;
  job_t j = {wl, args, 1, 1, 1};
  switch (wl->op) {
    case HETC_PLUGIN_OP_DENSE:
      parallel_for(hetc_kit_logical_count(out), grain(in->shape[1]), dense_rows, &j);
      break;
    case HETC_PLUGIN_OP_MAX_POOL2D:
    case HETC_PLUGIN_OP_AVG_POOL2D:
      parallel_for(in->shape[0] * in->shape[1], grain(out->shape[2] * out->shape[3] * wl->kernel[0] * wl->kernel[1]),
                   pool_planes, &j);
      break;
    case HETC_PLUGIN_OP_GLOBAL_AVG_POOL2D:
      j.inner = in->shape[2] * in->shape[3];
      parallel_for(in->shape[0] * in->shape[1], grain(j.inner), global_pool_planes, &j);
      break;
    case HETC_PLUGIN_OP_ELEMENTWISE:
      parallel_for(hetc_kit_logical_count(out), grain(1), wl->binary ? binary_chunk : unary_chunk, &j);
      break;
    case HETC_PLUGIN_OP_SOFTMAX:
#if HETC_KIT_ABI_AT_LEAST(1, 5)
    case HETC_PLUGIN_OP_LOG_SOFTMAX:
#endif
      split_at_axis(&j, in, wl->axis);
      parallel_for(j.outer * j.inner, grain(3 * j.extent), softmax_lines, &j);
      break;
    case HETC_PLUGIN_OP_CONCAT:
      split_at_axis(&j, out, wl->axis);
      parallel_for(j.outer, grain(j.extent * j.inner), concat_slices, &j);
      break;
    case HETC_PLUGIN_OP_LAYOUT_TRANSFORM:
      if (in->layout.kind == HETC_PLUGIN_LAYOUT_ROW_MAJOR && out->layout.kind == HETC_PLUGIN_LAYOUT_ROW_MAJOR) {
        /* A reshape keeps the element order. */
        memcpy(args[1], args[0], (size_t)hetc_kit_logical_count(out) * sizeof(float));
        break;
      }
      /* The padding channels of an NCHWc output are zeros (plugin.h). */
      memset(args[1], 0, (size_t)hetc_kit_physical_count(out, out->layout) * sizeof(float));
      parallel_for(hetc_kit_logical_count(out), grain(4), transform_chunk, &j);
      break;
    case HETC_PLUGIN_OP_BIAS_ADD:
      split_at_axis(&j, in, 1);
      parallel_for(in->shape[0] * j.extent, grain(j.inner), bias_planes, &j);
      break;
#if HETC_KIT_ABI_AT_LEAST(1, 4)
    case HETC_PLUGIN_OP_TRANSPOSE: parallel_for(hetc_kit_logical_count(out), grain(2), transpose_chunk, &j); break;
#endif
#if HETC_KIT_ABI_AT_LEAST(2, 0)
    case HETC_PLUGIN_OP_RESIZE:
      parallel_for(out->shape[0] * out->shape[1] * out->shape[2], grain(4 * out->shape[3]), resize_rows, &j);
      break;
    case HETC_PLUGIN_OP_NORMALIZE: {
      const hetc_plugin_normalize_params_t *p = &wl->params.normalize;
      /* outer: dims before axis; extent: the normalized dims; inner: after. */
      j.outer = j.extent = j.inner = 1;
      for (int32_t d = 0; d < in->rank; ++d)
        *(d < p->axis ? &j.outer : d < p->axis + p->num_axes ? &j.extent : &j.inner) *= in->shape[d];
      parallel_for(j.outer * p->groups * j.inner, grain(3 * j.extent / p->groups), normalize_lines, &j);
      break;
    }
    case HETC_PLUGIN_OP_MATMUL: {
      const int32_t rank = in->rank;
      j.outer = in->shape[rank - 2], j.extent = in->shape[rank - 1], j.inner = out->shape[rank - 1];
      parallel_for(hetc_kit_logical_count(out) / j.inner, grain(j.extent * j.inner), matmul_rows, &j);
      break;
    }
#endif
    default: break;
  }
}
