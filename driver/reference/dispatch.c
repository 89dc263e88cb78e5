#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "reference/reference.h"

/* A tensor descriptor for the row-major form of `t`. */
static hetc_plugin_tensor_t row_major_of(const hetc_plugin_tensor_t *t) {
  hetc_plugin_tensor_t r = *t;
  r.layout.kind = HETC_PLUGIN_LAYOUT_ROW_MAJOR;
  r.layout.block = 0;
  return r;
}

static int is_row_major(const hetc_plugin_tensor_t *t) {
  return t->layout.kind == HETC_PLUGIN_LAYOUT_ROW_MAJOR;
}

static float *alloc_floats(int64_t count) {
  return malloc((size_t)(count > 0 ? count : 1) * sizeof(float));
}

static hetc_status_t check_workload(const hetc_plugin_workload_t *w,
                                    const float *const *inputs,
                                    const float *const *params, float *output) {
  if (!w || !inputs || !output || !w->inputs)
    return hetc_status_new(HETC_STATUS_INVALID_ARGUMENT,
                           "reference: null workload, inputs or output");
  if (w->op < HETC_PLUGIN_OP_CONV2D || w->op >= HETC_PLUGIN_OP_COUNT_)
    return hetc_status_new(HETC_STATUS_UNSUPPORTED, "reference: unknown op %d",
                           w->op);
  if (w->num_inputs < 1)
    return hetc_status_new(HETC_STATUS_INVALID_ARGUMENT,
                           "reference: %d activation inputs", w->num_inputs);
  char what[48];
  for (int32_t i = 0; i < w->num_inputs; ++i) {
    if (!inputs[i])
      return hetc_status_new(HETC_STATUS_INVALID_ARGUMENT,
                             "reference: input %d is null", i);
    snprintf(what, sizeof(what), "input %d", i);
    HETC_RETURN_IF_ERROR(hetc_reference_check_tensor(&w->inputs[i], what));
  }
  HETC_RETURN_IF_ERROR(hetc_reference_check_tensor(&w->output, "output"));

  int has_params = w->op == HETC_PLUGIN_OP_CONV2D || w->op == HETC_PLUGIN_OP_DENSE;
  const hetc_plugin_epilogue_t *e = &w->epilogue;
  if (!has_params && (e->has_bias || e->has_residual || e->activation))
    return hetc_status_new(HETC_STATUS_UNSUPPORTED,
                           "reference: op %d has no epilogue", w->op);
  int num_params = has_params ? 1 + (e->has_bias == 1)
                              : (w->op == HETC_PLUGIN_OP_BIAS_ADD ? 1 : 0);
  if (num_params > 0 && !params)
    return hetc_status_new(HETC_STATUS_INVALID_ARGUMENT,
                           "reference: op %d needs params", w->op);
  for (int i = 0; i < num_params; ++i)
    if (!params[i])
      return hetc_status_new(HETC_STATUS_INVALID_ARGUMENT,
                             "reference: param %d is null", i);
  return NULL;
}

/* Runs the row-major kernel of the op; all pointers are row-major. */
static hetc_status_t run_row_major(const hetc_plugin_workload_t *w,
                                   const float *const *in,
                                   const float *const *params, float *out) {
  const float *residual =
      w->epilogue.has_residual ? in[w->num_inputs - 1] : NULL;
  const float *bias = NULL;
  switch (w->op) {
    case HETC_PLUGIN_OP_CONV2D:
      if (w->epilogue.has_bias) bias = params[1];
      return hetc_reference_conv2d(w, in[0], params[0], bias, residual, out);
    case HETC_PLUGIN_OP_DENSE:
      if (w->epilogue.has_bias) bias = params[1];
      return hetc_reference_dense(w, in[0], params[0], bias, residual, out);
    case HETC_PLUGIN_OP_MAX_POOL2D:
    case HETC_PLUGIN_OP_AVG_POOL2D:
      return hetc_reference_pool2d(w, in[0], out);
    case HETC_PLUGIN_OP_GLOBAL_AVG_POOL2D:
      return hetc_reference_global_avg_pool2d(w, in[0], out);
    case HETC_PLUGIN_OP_ELEMENTWISE:
      return hetc_reference_elementwise(w, in[0], w->num_inputs > 1 ? in[1] : NULL,
                                        out);
    case HETC_PLUGIN_OP_SOFTMAX:
    case HETC_PLUGIN_OP_LOG_SOFTMAX:
      return hetc_reference_softmax(w, in[0], out);
    case HETC_PLUGIN_OP_CONCAT:
      return hetc_reference_concat(w, in, out);
    case HETC_PLUGIN_OP_BIAS_ADD:
      return hetc_reference_bias_add(w, in[0], params[0], out);
    case HETC_PLUGIN_OP_TRANSPOSE:
      return hetc_reference_transpose(w, in[0], out);
    case HETC_PLUGIN_OP_RESIZE:
      return hetc_reference_resize(w, in[0], out);
    case HETC_PLUGIN_OP_NORMALIZE:
      return w->params.normalize.affine ? hetc_reference_normalize(w, in[0], params[0], params[1], out)
                                        : hetc_reference_normalize(w, in[0], NULL, NULL, out);
    case HETC_PLUGIN_OP_MATMUL:
      return hetc_reference_matmul(w, in[0], w->num_inputs > 1 ? in[1] : NULL, out);
    case HETC_PLUGIN_OP_LAYOUT_TRANSFORM:
      /* The data is already row-major; a reshape keeps that order. */
      if (w->num_inputs != 1 ||
          hetc_reference_logical_count(&w->inputs[0]) !=
              hetc_reference_logical_count(&w->output))
        return hetc_status_new(HETC_STATUS_INVALID_ARGUMENT,
                               "layout_transform: one input with the output's "
                               "element count expected");
      memcpy(out, in[0],
             (size_t)hetc_reference_logical_count(&w->output) * sizeof(float));
      return NULL;
    default:
      return hetc_status_new(HETC_STATUS_UNSUPPORTED,
                             "reference: unknown op %d", w->op);
  }
}

hetc_status_t hetc_reference_run_op(const hetc_plugin_workload_t *w,
                                    const float *const *inputs,
                                    const float *const *params, float *output) {
  HETC_RETURN_IF_ERROR(check_workload(w, inputs, params, output));
  int32_t count = w->num_inputs;
  const float **in = calloc((size_t)count, sizeof(*in));
  float **scratch = calloc((size_t)count, sizeof(*scratch));
  float *out_scratch = NULL;
  float *out = output;
  hetc_status_t status = NULL;
  if (!in || !scratch) {
    status = hetc_status_new(HETC_STATUS_OUT_OF_MEMORY, "reference: scratch");
    goto done;
  }
  for (int32_t i = 0; i < count; ++i) {
    const hetc_plugin_tensor_t *t = &w->inputs[i];
    if (is_row_major(t)) {
      in[i] = inputs[i];
      continue;
    }
    scratch[i] = alloc_floats(hetc_reference_logical_count(t));
    if (!scratch[i]) {
      status = hetc_status_new(HETC_STATUS_OUT_OF_MEMORY, "reference: scratch");
      goto done;
    }
    hetc_plugin_tensor_t rm = row_major_of(t);
    status = hetc_layout_convert(t, inputs[i], &rm, scratch[i]);
    if (status) goto done;
    in[i] = scratch[i];
  }
  if (!is_row_major(&w->output)) {
    out_scratch = alloc_floats(hetc_reference_logical_count(&w->output));
    if (!out_scratch) {
      status = hetc_status_new(HETC_STATUS_OUT_OF_MEMORY, "reference: scratch");
      goto done;
    }
    out = out_scratch;
  }
  status = run_row_major(w, in, params, out);
  if (!status && out_scratch) {
    hetc_plugin_tensor_t rm = row_major_of(&w->output);
    status = hetc_layout_convert(&rm, out_scratch, &w->output, output);
  }
done:
  if (scratch)
    for (int32_t i = 0; i < count; ++i) free(scratch[i]);
  free(scratch);
  free(in);
  free(out_scratch);
  return status;
}
