/* Every op but conv2d, one knob-less template each, over row-major tensors:
 * dense, max/avg/global-avg pooling, elementwise (unary activations, binary
 * add/mul with broadcasting), softmax, concat, layout_transform (the
 * reshape/flatten copy, and conversions between row-major, NHWC and
 * NCHWc) and bias_add. Semantics are those
 * of hetc_plugin_workload_t in <hetc/plugin.h>. */
#include <math.h>
#include <string.h>

#include "example_c.h"

int64_t exc_count(const hetc_plugin_tensor_t *t) {
  int64_t count = 1;
  for (int32_t i = 0; i < t->rank; ++i) count *= t->shape[i];
  return count;
}

int64_t exc_stored_count(const hetc_plugin_tensor_t *t) {
  if (t->layout.kind != HETC_PLUGIN_LAYOUT_NCHWC) return exc_count(t);
  /* Channels padded up to a whole block. */
  const int64_t block = t->layout.block;
  return t->shape[0] * ((t->shape[1] + block - 1) / block) * block * t->shape[2] * t->shape[3];
}

/* Offset of logical element (n, c, h, w) of a 4-d tensor in its layout. */
static int64_t offset_4d(const hetc_plugin_tensor_t *t, int64_t n, int64_t c, int64_t h, int64_t w) {
  const int64_t C = t->shape[1], H = t->shape[2], W = t->shape[3];
  switch (t->layout.kind) {
    case HETC_PLUGIN_LAYOUT_NHWC: return ((n * H + h) * W + w) * C + c;
    case HETC_PLUGIN_LAYOUT_NCHWC: {
      const int64_t b = t->layout.block, blocks = (C + b - 1) / b;
      return (((n * blocks + c / b) * H + h) * W + w) * b + c % b;
    }
    default: return ((n * C + c) * H + h) * W + w;
  }
}

static int is_row_major(const hetc_plugin_tensor_t *t) {
  return t->layout.kind == HETC_PLUGIN_LAYOUT_ROW_MAJOR;
}

int exc_same_shape(const hetc_plugin_tensor_t *a, const hetc_plugin_tensor_t *b) {
  if (a->rank != b->rank) return 0;
  for (int32_t i = 0; i < a->rank; ++i)
    if (a->shape[i] != b->shape[i]) return 0;
  return 1;
}

float exc_activate(int32_t activation, float v) {
  switch (activation) {
    case HETC_PLUGIN_ACT_RELU: return v < 0.0f ? 0.0f : v;
    case HETC_PLUGIN_ACT_RELU6: return v < 0.0f ? 0.0f : (v > 6.0f ? 6.0f : v);
    case HETC_PLUGIN_ACT_SIGMOID: return 1.0f / (1.0f + expf(-v));
    case HETC_PLUGIN_ACT_TANH: return tanhf(v);
    default: return v;
  }
}

int exc_ops_template(int32_t op) {
  switch (op) {
    case HETC_PLUGIN_OP_DENSE: return EXC_T_DENSE;
    case HETC_PLUGIN_OP_MAX_POOL2D: return EXC_T_MAX_POOL;
    case HETC_PLUGIN_OP_AVG_POOL2D: return EXC_T_AVG_POOL;
    case HETC_PLUGIN_OP_GLOBAL_AVG_POOL2D: return EXC_T_GLOBAL_AVG_POOL;
    case HETC_PLUGIN_OP_ELEMENTWISE: return EXC_T_ELEMENTWISE;
    case HETC_PLUGIN_OP_SOFTMAX: return EXC_T_SOFTMAX;
    case HETC_PLUGIN_OP_CONCAT: return EXC_T_CONCAT;
    case HETC_PLUGIN_OP_LAYOUT_TRANSFORM: return EXC_T_LAYOUT;
    case HETC_PLUGIN_OP_BIAS_ADD: return EXC_T_BIAS_ADD;
    default: return -1;
  }
}

/* ------------------------------------------------------------------------ */
/* Workload checks                                                          */
/* ------------------------------------------------------------------------ */

#define INVALID(...) return exc_fail(r, HETC_PLUGIN_STATUS_INVALID_ARGUMENT, __VA_ARGS__)
#define UNSUPPORTED(...) return exc_fail(r, HETC_PLUGIN_STATUS_UNSUPPORTED, __VA_ARGS__)

static int64_t pool_extent(int64_t in, int64_t p0, int64_t p1, int64_t k, int64_t s, int ceil) {
  const int64_t span = in + p0 + p1 - k;
  if (span < 0) return 0;
  int64_t out = (ceil ? (span + s - 1) / s : span / s) + 1;
  /* ceil_mode: a last window starting inside the end padding is dropped. */
  if (ceil && (out - 1) * s >= in + p0) --out;
  return out;
}

static int32_t check_pool(const hetc_plugin_workload_t *wl, exc_reason_t *r) {
  const hetc_plugin_tensor_t *in = &wl->inputs[0], *out = &wl->output;
  if (wl->num_inputs != 1) INVALID("pool2d: %d inputs, expected 1", wl->num_inputs);
  if (in->rank != 4 || out->rank != 4 || in->shape[0] != out->shape[0] ||
      in->shape[1] != out->shape[1])
    INVALID("pool2d: input and output must be 4-d with the same N and C");
  if (wl->kernel[0] < 1 || wl->kernel[1] < 1 || wl->strides[0] < 1 || wl->strides[1] < 1)
    INVALID("pool2d: kernel %dx%d and strides %dx%d must be positive", wl->kernel[0],
            wl->kernel[1], wl->strides[0], wl->strides[1]);
  if (wl->dilation[0] > 1 || wl->dilation[1] > 1) UNSUPPORTED("pool2d: dilated pooling");
  for (int i = 0; i < 4; ++i)
    if (wl->padding[i] < 0 || wl->padding[i] >= wl->kernel[i % 2])
      INVALID("pool2d: padding %d is not in [0, kernel)", wl->padding[i]);
  const int64_t oh = pool_extent(in->shape[2], wl->padding[0], wl->padding[2], wl->kernel[0],
                                 wl->strides[0], wl->ceil_mode);
  const int64_t ow = pool_extent(in->shape[3], wl->padding[1], wl->padding[3], wl->kernel[1],
                                 wl->strides[1], wl->ceil_mode);
  if (oh != out->shape[2] || ow != out->shape[3])
    INVALID("pool2d: output %lldx%lld, the arithmetic gives %lldx%lld",
            (long long)out->shape[2], (long long)out->shape[3], (long long)oh, (long long)ow);
  return 0;
}

static int32_t check_elementwise(const hetc_plugin_workload_t *wl, exc_reason_t *r) {
  const hetc_plugin_tensor_t *in = wl->inputs;
  if (!exc_same_shape(&in[0], &wl->output))
    INVALID("elementwise: the output's shape differs from the first input's");
  if (wl->binary == HETC_PLUGIN_BINARY_NONE) {
    if (wl->num_inputs != 1) INVALID("elementwise: a unary op takes one input");
    if (wl->activation < HETC_PLUGIN_ACT_NONE || wl->activation > HETC_PLUGIN_ACT_TANH)
      UNSUPPORTED("elementwise: unknown activation %d", wl->activation);
    return 0;
  }
  if (wl->binary != HETC_PLUGIN_BINARY_ADD && wl->binary != HETC_PLUGIN_BINARY_MUL)
    UNSUPPORTED("elementwise: unknown binary op %d", wl->binary);
  if (wl->activation != HETC_PLUGIN_ACT_NONE)
    INVALID("elementwise: both an activation and a binary op");
  if (wl->num_inputs != 2) INVALID("elementwise: a binary op takes two inputs");
  if (in[1].rank != in[0].rank) INVALID("elementwise: operands of different rank");
  for (int32_t i = 0; i < in[0].rank; ++i)
    if (in[1].shape[i] != in[0].shape[i] && in[1].shape[i] != 1)
      INVALID("elementwise: dim %d of the second operand is %lld, neither %lld nor 1", i,
              (long long)in[1].shape[i], (long long)in[0].shape[i]);
  return 0;
}

static int32_t check_concat(const hetc_plugin_workload_t *wl, exc_reason_t *r) {
  const hetc_plugin_tensor_t *out = &wl->output;
  if (wl->axis < 0 || wl->axis >= out->rank)
    INVALID("concat: axis %d outside 0..%d", wl->axis, out->rank - 1);
  int64_t sum = 0;
  for (int32_t j = 0; j < wl->num_inputs; ++j) {
    const hetc_plugin_tensor_t *in = &wl->inputs[j];
    if (in->rank != out->rank) INVALID("concat: input %d has rank %d, the output %d", j,
                                       in->rank, out->rank);
    for (int32_t i = 0; i < out->rank; ++i)
      if (i != wl->axis && in->shape[i] != out->shape[i])
        INVALID("concat: input %d differs from the output in dim %d", j, i);
    sum += in->shape[wl->axis];
  }
  if (sum != out->shape[wl->axis])
    INVALID("concat: the inputs add up to %lld along axis %d, the output has %lld",
            (long long)sum, wl->axis, (long long)out->shape[wl->axis]);
  return 0;
}

static int32_t check_dense(const hetc_plugin_workload_t *wl, exc_reason_t *r) {
  const hetc_plugin_epilogue_t *e = &wl->epilogue;
  if ((e->has_bias != 0 && e->has_bias != 1) || (e->has_residual != 0 && e->has_residual != 1))
    INVALID("dense: epilogue flags must be 0 or 1");
  if (e->activation < HETC_PLUGIN_ACT_NONE || e->activation > HETC_PLUGIN_ACT_TANH)
    UNSUPPORTED("dense: unknown activation %d", e->activation);
  if (wl->num_inputs != 1 + e->has_residual)
    INVALID("dense: %d activation inputs, expected %d", wl->num_inputs, 1 + e->has_residual);
  const hetc_plugin_tensor_t *in = &wl->inputs[0], *out = &wl->output;
  if (in->rank != 2 || out->rank != 2 || in->shape[0] != out->shape[0])
    INVALID("dense: input [N,K] and output [N,units] expected");
  if (e->has_residual && !exc_same_shape(&wl->inputs[1], out))
    INVALID("dense: the residual's shape differs from the output's");
  return 0;
}

int32_t exc_ops_check(const hetc_plugin_workload_t *wl, exc_reason_t *r) {
  const hetc_plugin_tensor_t *in = wl->inputs, *out = &wl->output;
  if (wl->op != HETC_PLUGIN_OP_CONCAT && wl->num_inputs > 2)
    INVALID("op %d takes at most 2 inputs, got %d", wl->op, wl->num_inputs);
  switch (wl->op) {
    case HETC_PLUGIN_OP_DENSE: return check_dense(wl, r);
    case HETC_PLUGIN_OP_MAX_POOL2D:
    case HETC_PLUGIN_OP_AVG_POOL2D: return check_pool(wl, r);
    case HETC_PLUGIN_OP_GLOBAL_AVG_POOL2D:
      if (wl->num_inputs != 1 || in->rank != 4 || out->rank != 4 ||
          out->shape[0] != in->shape[0] || out->shape[1] != in->shape[1] || out->shape[2] != 1 ||
          out->shape[3] != 1)
        INVALID("global_avg_pool2d: input [N,C,H,W] and output [N,C,1,1] expected");
      return 0;
    case HETC_PLUGIN_OP_ELEMENTWISE: return check_elementwise(wl, r);
    case HETC_PLUGIN_OP_SOFTMAX:
      if (wl->num_inputs != 1 || !exc_same_shape(in, out))
        INVALID("softmax: one input of the output's shape expected");
      if (wl->axis < 0 || wl->axis >= in->rank)
        INVALID("softmax: axis %d outside 0..%d", wl->axis, in->rank - 1);
      return 0;
    case HETC_PLUGIN_OP_CONCAT: return check_concat(wl, r);
    case HETC_PLUGIN_OP_LAYOUT_TRANSFORM:
      if (wl->num_inputs != 1) INVALID("layout_transform: one input expected");
      if (exc_count(in) != exc_count(out))
        INVALID("layout_transform: %lld elements in, %lld out", (long long)exc_count(in),
                (long long)exc_count(out));
      /* A change of layout keeps the logical shape; a reshape reads
       * row-major (whatever the producer's layout: the driver converts)
       * and writes row-major. */
      if (!is_row_major(out) && !exc_same_shape(in, out))
        UNSUPPORTED("layout_transform: a reshape into a layout other than row-major");
      return 0;
    case HETC_PLUGIN_OP_BIAS_ADD:
      if (wl->num_inputs != 1 || !exc_same_shape(in, out))
        INVALID("bias_add: one input of the output's shape expected");
      if (in->rank != 2 && in->rank != 4)
        UNSUPPORTED("bias_add: rank %d, expected 2 or 4", in->rank);
      return 0;
    default: UNSUPPORTED("op %d is not supported", wl->op);
  }
}

/* ------------------------------------------------------------------------ */
/* Params                                                                   */
/* ------------------------------------------------------------------------ */

int32_t exc_ops_num_params(const hetc_plugin_workload_t *wl) {
  if (wl->op == HETC_PLUGIN_OP_DENSE) return 1 + wl->epilogue.has_bias;
  return wl->op == HETC_PLUGIN_OP_BIAS_ADD ? 1 : 0;
}

uint64_t exc_ops_param_bytes(const hetc_plugin_workload_t *wl, int32_t param) {
  if (wl->op == HETC_PLUGIN_OP_DENSE && param == 0)
    return (uint64_t)(wl->output.shape[1] * wl->inputs[0].shape[1]) * sizeof(float);
  if (wl->op == HETC_PLUGIN_OP_DENSE) return (uint64_t)wl->output.shape[1] * sizeof(float);
  return (uint64_t)wl->inputs[0].shape[1] * sizeof(float); /* bias_add: [C] */
}

hetc_plugin_status_t exc_ops_pack(const hetc_plugin_workload_t *wl, int kind, int32_t param,
                                  const float *logical, uint64_t count, void *out) {
  (void)kind;
  const uint64_t want = exc_ops_param_bytes(wl, param) / sizeof(float);
  if (count != want)
    return exc_status(HETC_PLUGIN_STATUS_INVALID_ARGUMENT,
                      "example_c: param %d has %llu values, expected %llu", param,
                      (unsigned long long)count, (unsigned long long)want);
  memcpy(out, logical, (size_t)count * sizeof(float));
  return NULL;
}

double exc_ops_inner_loop(const hetc_plugin_workload_t *wl, int kind) {
  const hetc_plugin_tensor_t *in = &wl->inputs[0];
  switch (kind) {
    case EXC_T_DENSE: return (double)in->shape[1];
    case EXC_T_MAX_POOL:
    case EXC_T_AVG_POOL: return wl->kernel[1];
    case EXC_T_GLOBAL_AVG_POOL: return (double)(in->shape[2] * in->shape[3]);
    case EXC_T_SOFTMAX: return (double)in->shape[wl->axis];
    case EXC_T_BIAS_ADD: return in->rank == 4 ? (double)(in->shape[2] * in->shape[3]) : 1.0;
    case EXC_T_CONCAT: { /* one copy per (outer slice, input) */
      double outer = 1;
      for (int32_t d = 0; d < wl->axis; ++d) outer *= (double)wl->output.shape[d];
      return (double)exc_count(&wl->output) / (outer * wl->num_inputs);
    }
    default: return (double)exc_count(&wl->output); /* one flat loop */
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
    y[i] = exc_activate(wl->epilogue.activation, acc);
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
        y[oh * OW + ow] =
            is_max ? best : sum / (float)(wl->count_include_pad ? padded : real);
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
  for (int64_t i = begin; i < end; ++i) y[i] = exc_activate(j->wl->activation, x[i]);
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
  const int mul = wl->binary == HETC_PLUGIN_BINARY_MUL;
  for (int64_t i = begin; i < end; ++i) {
    y[i] = mul ? a[i] * b[ib] : a[i] + b[ib];
    for (int32_t d = rank - 1; d >= 0; --d) { /* next index, odometer style */
      ib += stride_b[d];
      if (++index[d] < out->shape[d]) break;
      ib -= stride_b[d] * index[d];
      index[d] = 0;
    }
  }
}

/* Lines [begin, end) of (outer, inner) along the softmax axis. */
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

/* Iterations per parallel chunk such that a chunk does at least ~16k
 * elements of work: below that the pool's hand-off costs more than it
 * saves. */
static int64_t grain(int64_t work_per_iteration) {
  const int64_t g = 16384 / (work_per_iteration > 0 ? work_per_iteration : 1);
  return g > 1 ? g : 1;
}

void exc_ops_run(const hetc_plugin_workload_t *wl, int kind, float *const *args) {
  const hetc_plugin_host_t *h = exc_host;
  const hetc_plugin_tensor_t *in = &wl->inputs[0], *out = &wl->output;
  job_t j = {wl, args, 1, 1, 1};
  switch (kind) {
    case EXC_T_DENSE:
      h->parallel_for(exc_count(out), grain(in->shape[1]), dense_rows, &j);
      break;
    case EXC_T_MAX_POOL:
    case EXC_T_AVG_POOL:
      h->parallel_for(in->shape[0] * in->shape[1],
                      grain(out->shape[2] * out->shape[3] * wl->kernel[0] * wl->kernel[1]),
                      pool_planes, &j);
      break;
    case EXC_T_GLOBAL_AVG_POOL:
      j.inner = in->shape[2] * in->shape[3];
      h->parallel_for(in->shape[0] * in->shape[1], grain(j.inner), global_pool_planes, &j);
      break;
    case EXC_T_ELEMENTWISE:
      h->parallel_for(exc_count(out), grain(1), wl->binary ? binary_chunk : unary_chunk, &j);
      break;
    case EXC_T_SOFTMAX:
      j.extent = in->shape[wl->axis];
      for (int32_t d = 0; d < wl->axis; ++d) j.outer *= in->shape[d];
      for (int32_t d = wl->axis + 1; d < in->rank; ++d) j.inner *= in->shape[d];
      h->parallel_for(j.outer * j.inner, grain(3 * j.extent), softmax_lines, &j);
      break;
    case EXC_T_CONCAT:
      j.extent = out->shape[wl->axis];
      for (int32_t d = 0; d < wl->axis; ++d) j.outer *= out->shape[d];
      for (int32_t d = wl->axis + 1; d < out->rank; ++d) j.inner *= out->shape[d];
      h->parallel_for(j.outer, grain(j.extent * j.inner), concat_slices, &j);
      break;
    case EXC_T_LAYOUT:
      if (is_row_major(in) && is_row_major(out)) {
        /* A reshape keeps the element order. */
        memcpy(args[1], args[0], (size_t)exc_count(out) * sizeof(float));
        break;
      }
      /* The padding channels of an NCHWc output are zeros (plugin.h). */
      memset(args[1], 0, (size_t)exc_stored_count(out) * sizeof(float));
      for (int64_t n = 0; n < out->shape[0]; ++n)
        for (int64_t c = 0; c < out->shape[1]; ++c)
          for (int64_t y = 0; y < out->shape[2]; ++y)
            for (int64_t x = 0; x < out->shape[3]; ++x)
              args[1][offset_4d(out, n, c, y, x)] = args[0][offset_4d(in, n, c, y, x)];
      break;
    case EXC_T_BIAS_ADD:
      j.extent = in->shape[1];
      for (int32_t d = 2; d < in->rank; ++d) j.inner *= in->shape[d];
      h->parallel_for(in->shape[0] * j.extent, grain(j.inner), bias_planes, &j);
      break;
    default: break;
  }
}
