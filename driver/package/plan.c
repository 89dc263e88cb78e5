#include "package/plan.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void hetc_plan_step_release(hetc_plan_step_t *step) {
  free(step->name);
  free(step->input_types);
  free(step->template_name);
  for (int32_t k = 0; k < step->num_knobs; ++k) {
    if (step->knob_names) free(step->knob_names[k]);
    if (step->knob_values) free(step->knob_values[k]);
  }
  free(step->knob_names);
  free(step->knob_counts);
  free(step->knob_values);
  free(step->artifact_prefix);
  free(step->inputs);
  free(step->params);
  memset(step, 0, sizeof(*step));
}

void hetc_plan_free(hetc_plan_t *plan) {
  if (!plan) return;
  for (int32_t i = 0; i < plan->num_devices; ++i) {
    free(plan->devices[i].target);
    free(plan->devices[i].plugin_version);
    free(plan->devices[i].fingerprint);
  }
  for (int32_t i = 0; i < plan->num_values; ++i) free(plan->values[i].name);
  for (int32_t i = 0; i < plan->num_steps; ++i) hetc_plan_step_release(&plan->steps[i]);
  for (int32_t i = 0; i < plan->num_inputs; ++i) free(plan->inputs[i].name);
  for (int32_t i = 0; i < plan->num_outputs; ++i) free(plan->outputs[i].name);
  free(plan->devices);
  free(plan->values);
  free(plan->steps);
  free(plan->slots);
  free(plan->inputs);
  free(plan->outputs);
  for (int32_t i = 0; i < plan->num_files; ++i) free(plan->files[i].path);
  free(plan->files);
  free(plan->model_name);
  free(plan);
}

/* Grows an array by one zeroed element, doubling its capacity when the
 * count reaches a power of two. */
static int32_t grow(void **array, int32_t *count, size_t element) {
  int32_t n = *count;
  if (n == 0 || (n & (n - 1)) == 0) {
    size_t capacity = n ? (size_t)n * 2 : 8;
    void *grown = realloc(*array, capacity * element);
    if (!grown) return -1;
    *array = grown;
  }
  memset((char *)*array + (size_t)n * element, 0, element);
  *count = n + 1;
  return n;
}

int32_t hetc_plan_add_value(hetc_plan_t *plan) {
  const int32_t id = grow((void **)&plan->values, &plan->num_values, sizeof(hetc_plan_value_t));
  if (id >= 0) plan->values[id].part_of = -1;
  return id;
}

int32_t hetc_plan_add_step(hetc_plan_t *plan) {
  return grow((void **)&plan->steps, &plan->num_steps, sizeof(hetc_plan_step_t));
}

int hetc_layout_equal(hetc_plugin_layout_t a, hetc_plugin_layout_t b) {
  return a.kind == b.kind && (a.kind != HETC_PLUGIN_LAYOUT_NCHWC || a.block == b.block);
}

void hetc_layout_name(const hetc_plugin_tensor_t *type, char *out, size_t size) {
  switch (type->layout.kind) {
    case HETC_PLUGIN_LAYOUT_NCHWC: snprintf(out, size, "NCHW%dc", type->layout.block); break;
    case HETC_PLUGIN_LAYOUT_NHWC: snprintf(out, size, "NHWC"); break;
    default: snprintf(out, size, type->rank == 4 ? "NCHW" : "row-major"); break;
  }
}
