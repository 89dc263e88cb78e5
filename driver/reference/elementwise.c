#include <math.h>

#include "reference/reference.h"

/* x + 3 clamped to [0, 6]: torch's hardswish and hardsigmoid divide it
 * by 6. NaN passes through. */
static double hard_gate(double x) {
  const double t = x + 3.0;
  return t < 0.0 ? 0.0 : (t > 6.0 ? 6.0 : t);
}

double hetc_reference_activate(int32_t activation, double x) {
  switch (activation) {
    case HETC_PLUGIN_ACT_RELU: return x < 0.0 ? 0.0 : x; /* NaN passes through */
    case HETC_PLUGIN_ACT_RELU6: return x < 0.0 ? 0.0 : (x > 6.0 ? 6.0 : x);
    case HETC_PLUGIN_ACT_SIGMOID: return 1.0 / (1.0 + exp(-x));
    case HETC_PLUGIN_ACT_TANH: return tanh(x);
    case HETC_PLUGIN_ACT_ELU: return x > 0.0 ? x : expm1(x);
    case HETC_PLUGIN_ACT_SOFTPLUS: return (x > 0.0 ? x : 0.0) + log1p(exp(-fabs(x)));
    case HETC_PLUGIN_ACT_EXP: return exp(x);
    case HETC_PLUGIN_ACT_LOG: return log(x);
    /* silu as torch computes it: -inf / inf is NaN at -inf, as
     * x * sigmoid(x) is. */
    case HETC_PLUGIN_ACT_SILU: return x / (1.0 + exp(-x));
    case HETC_PLUGIN_ACT_HARDSWISH: return x * hard_gate(x) / 6.0;
    case HETC_PLUGIN_ACT_HARDSIGMOID: return hard_gate(x) / 6.0;
    /* 1 + erf(x / sqrt 2) as erfc(-x / sqrt 2) and 0.5 (1 + tanh(y)) as
     * 1 / (1 + exp(-2 y)): the same values, without the cancellation where
     * x is negative; NaN at -inf as torch's x * (1 + ...) is. */
    case HETC_PLUGIN_ACT_GELU: return 0.5 * x * erfc(-x * 0.70710678118654752440);
    case HETC_PLUGIN_ACT_GELU_TANH:
      return x / (1.0 + exp(-1.5957691216057307117 * (x + 0.044715 * x * x * x)));
    case HETC_PLUGIN_ACT_ERF: return erf(x);
    default: return x;
  }
}

hetc_status_t hetc_reference_check_epilogue(const hetc_plugin_workload_t *w,
                                            const char *op) {
  const hetc_plugin_epilogue_t *e = &w->epilogue;
  if ((e->has_bias != 0 && e->has_bias != 1) ||
      (e->has_residual != 0 && e->has_residual != 1))
    return hetc_status_new(HETC_STATUS_INVALID_ARGUMENT,
                           "%s: epilogue flags must be 0 or 1", op);
  /* Unary elementwise ops take elu, softplus, exp, log and erf too. */
  if (!HETC_PLUGIN_ACT_IS_EPILOGUE(e->activation))
    return hetc_status_new(HETC_STATUS_UNSUPPORTED,
                           "%s: unknown epilogue activation %d", op,
                           e->activation);
  if (w->num_inputs != 1 + e->has_residual)
    return hetc_status_new(HETC_STATUS_INVALID_ARGUMENT,
                           "%s: %d activation inputs, expected %d", op,
                           w->num_inputs, 1 + e->has_residual);
  return NULL;
}

/* Row-major strides of a shape; broadcast dims (extent 1 where the output's
 * is larger) get stride 0 so one index walks both tensors. */
static void broadcast_strides(const hetc_plugin_tensor_t *t,
                              const hetc_plugin_tensor_t *out,
                              int64_t strides[HETC_PLUGIN_MAX_RANK]) {
  int64_t stride = 1;
  for (int32_t i = t->rank - 1; i >= 0; --i) {
    strides[i] = (t->shape[i] == 1 && out->shape[i] != 1) ? 0 : stride;
    stride *= t->shape[i];
  }
}

static hetc_status_t binary(const hetc_plugin_workload_t *w, const float *a,
                            const float *b, float *y) {
  const hetc_plugin_tensor_t *ta = &w->inputs[0], *tb = &w->inputs[1];
  const hetc_plugin_tensor_t *out = &w->output;
  if (w->num_inputs != 2)
    return hetc_status_new(HETC_STATUS_INVALID_ARGUMENT,
                           "elementwise binary: %d inputs, expected 2",
                           w->num_inputs);
  if (w->binary < HETC_PLUGIN_BINARY_ADD || w->binary > HETC_PLUGIN_BINARY_DIV)
    return hetc_status_new(HETC_STATUS_UNSUPPORTED,
                           "elementwise: unknown binary op %d", w->binary);
  if (w->activation != HETC_PLUGIN_ACT_NONE)
    return hetc_status_new(HETC_STATUS_UNSUPPORTED,
                           "elementwise: both an activation and a binary op");
  if (!hetc_reference_same_shape(ta, out) || tb->rank != ta->rank)
    return hetc_status_new(HETC_STATUS_INVALID_ARGUMENT,
                           "elementwise binary: output must have the first "
                           "input's shape and both inputs the same rank");
  for (int32_t i = 0; i < ta->rank; ++i)
    if (tb->shape[i] != ta->shape[i] && tb->shape[i] != 1)
      return hetc_status_new(HETC_STATUS_INVALID_ARGUMENT,
                             "elementwise binary: second input dim %d is %lld, "
                             "neither %lld nor 1",
                             i, (long long)tb->shape[i],
                             (long long)ta->shape[i]);
  int64_t sb[HETC_PLUGIN_MAX_RANK];
  broadcast_strides(tb, out, sb);
  int32_t rank = out->rank;
  int64_t index[HETC_PLUGIN_MAX_RANK] = {0};
  int64_t count = hetc_reference_logical_count(out);
  int64_t ob = 0;
  for (int64_t i = 0; i < count; ++i) {
    y[i] = w->binary == HETC_PLUGIN_BINARY_ADD ? a[i] + b[ob] : w->binary == HETC_PLUGIN_BINARY_MUL ? a[i] * b[ob]
                                                                                          : a[i] / b[ob];
    /* Odometer increment of the multi-index, keeping b's offset in step. */
    for (int32_t d = rank - 1; d >= 0; --d) {
      ob += sb[d];
      if (++index[d] < out->shape[d]) break;
      ob -= sb[d] * out->shape[d];
      index[d] = 0;
    }
  }
  return NULL;
}

hetc_status_t hetc_reference_elementwise(const hetc_plugin_workload_t *w,
                                         const float *a, const float *b,
                                         float *y) {
  if (w->binary != HETC_PLUGIN_BINARY_NONE) return binary(w, a, b, y);
  if (w->num_inputs != 1)
    return hetc_status_new(HETC_STATUS_INVALID_ARGUMENT,
                           "elementwise unary: %d inputs, expected 1",
                           w->num_inputs);
  if (w->activation == HETC_PLUGIN_ACT_NONE)
    return hetc_status_new(HETC_STATUS_INVALID_ARGUMENT,
                           "elementwise: neither an activation nor a binary op");
  if (w->activation < HETC_PLUGIN_ACT_NONE || w->activation > HETC_PLUGIN_ACT_ERF)
    return hetc_status_new(HETC_STATUS_UNSUPPORTED,
                           "elementwise: unknown activation %d", w->activation);
  if (!hetc_reference_same_shape(&w->inputs[0], &w->output))
    return hetc_status_new(HETC_STATUS_INVALID_ARGUMENT,
                           "elementwise unary: output shape differs from input");
  int64_t count = hetc_reference_logical_count(&w->output);
  for (int64_t i = 0; i < count; ++i)
    y[i] = (float)hetc_reference_activate(w->activation, a[i]);
  return NULL;
}

hetc_status_t hetc_reference_bias_add(const hetc_plugin_workload_t *w,
                                      const float *x, const float *bias,
                                      float *y) {
  const hetc_plugin_tensor_t *in = &w->inputs[0];
  if (w->num_inputs != 1 || in->rank < 2 ||
      !hetc_reference_same_shape(in, &w->output))
    return hetc_status_new(HETC_STATUS_INVALID_ARGUMENT,
                           "bias_add: one input of rank >= 2 and an output of "
                           "the same shape expected");
  int64_t C = in->shape[1];
  int64_t inner = 1;
  for (int32_t i = 2; i < in->rank; ++i) inner *= in->shape[i];
  int64_t outer = in->shape[0];
  for (int64_t n = 0; n < outer; ++n)
    for (int64_t c = 0; c < C; ++c)
      for (int64_t i = 0; i < inner; ++i) {
        int64_t o = (n * C + c) * inner + i;
        y[o] = x[o] + bias[c];
      }
  return NULL;
}

void hetc_reference_batch_norm(int64_t n, int64_t c, int64_t spatial,
                               const float *x, const float *gamma,
                               const float *beta, const float *mean,
                               const float *var, float epsilon, float *y) {
  for (int64_t b = 0; b < n; ++b)
    for (int64_t ch = 0; ch < c; ++ch) {
      double scale = (double)gamma[ch] / sqrt((double)var[ch] + (double)epsilon);
      for (int64_t s = 0; s < spatial; ++s) {
        int64_t o = (b * c + ch) * spatial + s;
        y[o] = (float)(scale * ((double)x[o] - (double)mean[ch]) + (double)beta[ch]);
      }
    }
}
