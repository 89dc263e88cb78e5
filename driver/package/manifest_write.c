/* Serialises a plan as manifest.json (read back by manifest_read.c). */
#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/fileio.h"
#include "common/json_number.h"
#include "package/plan.h"

static cJSON *int_array(const int32_t *values, int count) {
  return cJSON_CreateIntArray(values, count);
}

static cJSON *i64_array(const int64_t *values, int count) {
  cJSON *array = cJSON_CreateArray();
  for (int i = 0; array && i < count; ++i) cJSON_AddItemToArray(array, cJSON_CreateNumber((double)values[i]));
  return array;
}

static cJSON *tensor_json(const hetc_plugin_tensor_t *t) {
  cJSON *object = cJSON_CreateObject();
  cJSON_AddItemToObject(object, "shape", i64_array(t->shape, t->rank));
  cJSON_AddNumberToObject(object, "layout", t->layout.kind);
  cJSON_AddNumberToObject(object, "block", t->layout.block);
  return object;
}

static cJSON *workload_json(const hetc_plugin_workload_t *w) {
  cJSON *object = cJSON_CreateObject();
  cJSON_AddNumberToObject(object, "op", w->op);
  cJSON *inputs = cJSON_AddArrayToObject(object, "inputs");
  for (int32_t i = 0; i < w->num_inputs; ++i) cJSON_AddItemToArray(inputs, tensor_json(&w->inputs[i]));
  cJSON_AddItemToObject(object, "output", tensor_json(&w->output));
  cJSON_AddItemToObject(object, "kernel", int_array(w->kernel, 2));
  cJSON_AddItemToObject(object, "strides", int_array(w->strides, 2));
  cJSON_AddItemToObject(object, "padding", int_array(w->padding, 4));
  cJSON_AddItemToObject(object, "dilation", int_array(w->dilation, 2));
  cJSON_AddNumberToObject(object, "groups", w->groups);
  cJSON_AddNumberToObject(object, "ceil_mode", w->ceil_mode);
  cJSON_AddNumberToObject(object, "count_include_pad", w->count_include_pad);
  cJSON_AddNumberToObject(object, "axis", w->axis);
  cJSON_AddNumberToObject(object, "activation", w->activation);
  cJSON_AddNumberToObject(object, "binary", w->binary);
  int32_t epilogue[3] = {w->epilogue.has_bias, w->epilogue.has_residual, w->epilogue.activation};
  cJSON_AddItemToObject(object, "epilogue", int_array(epilogue, 3));
  if (w->op == HETC_PLUGIN_OP_RESIZE) {
    const hetc_plugin_resize_params_t *p = &w->params.resize;
    cJSON *resize = cJSON_AddObjectToObject(object, "resize");
    int32_t choices[3] = {p->mode, p->coordinates, p->rounding};
    cJSON_AddItemToObject(resize, "mode_coordinates_rounding", int_array(choices, 3));
    cJSON_AddItemToObject(resize, "scales", hetc_json_exact_numbers(p->scales, 2));
  }
  if (w->op == HETC_PLUGIN_OP_NORMALIZE) {
    const hetc_plugin_normalize_params_t *p = &w->params.normalize;
    cJSON *normalize = cJSON_AddObjectToObject(object, "normalize");
    int32_t ints[4] = {p->axis, p->num_axes, p->groups, p->affine};
    cJSON_AddItemToObject(normalize, "axis_num_axes_groups_affine", int_array(ints, 4));
    cJSON_AddItemToObject(normalize, "epsilon", hetc_json_exact_number(p->epsilon));
  }
  return object;
}

static cJSON *step_json(const hetc_plan_step_t *s) {
  cJSON *object = cJSON_CreateObject();
  cJSON_AddStringToObject(object, "kind", s->kind == HETC_PLAN_STEP_KERNEL ? "kernel" : "copy");
  cJSON_AddStringToObject(object, "name", s->name);
  cJSON_AddNumberToObject(object, "device", s->device);
  cJSON_AddItemToObject(object, "inputs", int_array(s->inputs, s->num_inputs));
  cJSON_AddNumberToObject(object, "output", s->output);
  if (s->kind != HETC_PLAN_STEP_KERNEL) return object;
  cJSON_AddStringToObject(object, "template", s->template_name);
  cJSON_AddNumberToObject(object, "template_index", s->template_index);
  cJSON *config = cJSON_AddObjectToObject(object, "config");
  for (int32_t k = 0; k < s->num_knobs; ++k)
    cJSON_AddItemToObject(config, s->knob_names[k], i64_array(s->knob_values[k], s->knob_counts[k]));
  cJSON_AddStringToObject(object, "artifact", s->artifact_prefix);
  cJSON_AddNumberToObject(object, "workspace_bytes", (double)s->workspace_bytes);
  cJSON_AddNumberToObject(object, "avg_inner_loop_length", s->avg_inner_loop_length);
  cJSON *params = cJSON_AddArrayToObject(object, "params");
  for (int32_t p = 0; p < s->num_params; ++p) {
    double pair[2] = {(double)s->params[p].offset, (double)s->params[p].bytes};
    cJSON_AddItemToArray(params, cJSON_CreateDoubleArray(pair, 2));
  }
  cJSON_AddItemToObject(object, "workload", workload_json(&s->workload));
  return object;
}

hetc_status_t hetc_plan_write_manifest(const hetc_plan_t *plan, const char *dir) {
  cJSON *root = cJSON_CreateObject();
  if (!root) return hetc_status_new(HETC_STATUS_OUT_OF_MEMORY, "manifest");
  cJSON_AddStringToObject(root, "format", HETC_PACKAGE_FORMAT);
  /* A plan read from a package older than version 3 lists no files: it is
   * written back as version 2, which has none, so that it reads again. A
   * plan with no slice read in place is version 3, which hetc versions
   * before slices (version 4) still open. */
  int has_parts = 0;
  for (int32_t i = 0; i < plan->num_values; ++i) has_parts |= plan->values[i].part_of >= 0;
  cJSON_AddNumberToObject(root, "version", !plan->num_files ? 2 : has_parts ? HETC_PACKAGE_VERSION : 3);
  cJSON_AddStringToObject(root, "hetc_version", HETC_VERSION_STRING);
  cJSON_AddStringToObject(root, "model", plan->model_name);
  cJSON_AddNumberToObject(root, "weights_bytes", (double)plan->weights_bytes);
  cJSON *devices = cJSON_AddArrayToObject(root, "devices");
  for (int32_t i = 0; i < plan->num_devices; ++i) {
    const hetc_plan_device_t *d = &plan->devices[i];
    cJSON *object = cJSON_CreateObject();
    cJSON_AddStringToObject(object, "target", d->target);
    cJSON_AddStringToObject(object, "plugin_version", d->plugin_version);
    cJSON_AddNumberToObject(object, "device_index", d->device_index);
    cJSON_AddStringToObject(object, "fingerprint", d->fingerprint);
    cJSON_AddItemToArray(devices, object);
  }
  cJSON *slots = cJSON_AddArrayToObject(root, "buffer_slots");
  for (int32_t i = 0; i < plan->num_slots; ++i) {
    double pair[2] = {plan->slots[i].device, (double)plan->slots[i].bytes};
    cJSON_AddItemToArray(slots, cJSON_CreateDoubleArray(pair, 2));
  }
  cJSON *values = cJSON_AddArrayToObject(root, "values");
  for (int32_t i = 0; i < plan->num_values; ++i) {
    const hetc_plan_value_t *v = &plan->values[i];
    cJSON *object = tensor_json(&v->type);
    char layout[32];
    hetc_layout_name(&v->type, layout, sizeof(layout));
    cJSON_AddStringToObject(object, "name", v->name);
    cJSON_AddStringToObject(object, "layout_name", layout);
    cJSON_AddNumberToObject(object, "device", v->device);
    cJSON_AddNumberToObject(object, "slot", v->slot);
    cJSON_AddNumberToObject(object, "offset", (double)v->offset);
    cJSON_AddNumberToObject(object, "bytes", (double)v->bytes);
    if (v->part_of >= 0) cJSON_AddNumberToObject(object, "part_of", v->part_of);
    cJSON_AddItemToArray(values, object);
  }
  const hetc_plan_io_t *io_lists[2] = {plan->inputs, plan->outputs};
  const int32_t io_counts[2] = {plan->num_inputs, plan->num_outputs};
  const char *io_keys[2] = {"inputs", "outputs"};
  for (int l = 0; l < 2; ++l) {
    cJSON *list = cJSON_AddArrayToObject(root, io_keys[l]);
    for (int32_t i = 0; i < io_counts[l]; ++i) {
      cJSON *object = cJSON_CreateObject();
      cJSON_AddStringToObject(object, "name", io_lists[l][i].name);
      cJSON_AddNumberToObject(object, "value", io_lists[l][i].value);
      cJSON_AddItemToArray(list, object);
    }
  }
  cJSON *steps = cJSON_AddArrayToObject(root, "steps");
  for (int32_t i = 0; i < plan->num_steps; ++i) cJSON_AddItemToArray(steps, step_json(&plan->steps[i]));
  cJSON *files = plan->num_files ? cJSON_AddArrayToObject(root, "files") : NULL;
  for (int32_t i = 0; i < plan->num_files; ++i) {
    cJSON *object = cJSON_CreateObject();
    char hash[17];
    snprintf(hash, sizeof(hash), "%016llx", (unsigned long long)plan->files[i].fnv1a64);
    cJSON_AddStringToObject(object, "path", plan->files[i].path);
    cJSON_AddNumberToObject(object, "bytes", (double)plan->files[i].bytes);
    cJSON_AddStringToObject(object, "fnv1a64", hash);
    cJSON_AddItemToArray(files, object);
  }
  /* Unformatted: a third smaller, which matters for models of many nodes. */
  char *text = cJSON_PrintUnformatted(root);
  cJSON_Delete(root);
  if (!text) return hetc_status_new(HETC_STATUS_OUT_OF_MEMORY, "manifest");
  const size_t length = strlen(text);
  if (length > HETC_PACKAGE_MAX_MANIFEST_BYTES) {
    cJSON_free(text);
    return hetc_status_new(HETC_STATUS_UNSUPPORTED,
                           "the package's manifest.json would be %zu bytes, more than the %zu hetc reads; the model "
                           "has too many steps (%d)",
                           length, HETC_PACKAGE_MAX_MANIFEST_BYTES, plan->num_steps);
  }
  char *path = hetc_path_join(dir, HETC_PACKAGE_MANIFEST);
  hetc_status_t status = path ? hetc_file_write_all(path, text, length)
                              : hetc_status_new(HETC_STATUS_OUT_OF_MEMORY, "manifest");
  free(path);
  cJSON_free(text);
  return status;
}
