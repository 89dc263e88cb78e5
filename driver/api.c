/* The public library API (hetc/hetc.h): thin entry points over the
 * pipeline stages, which keep their own headers. */
#include <stdlib.h>
#include <string.h>

#include "compile/compile.h"
#include "graph/passes.h"
#include "graph/tasks.h"
#include "model/model.h"
#include "model/onnx_import.h"
#include "package/package_sign.h"
#include "plugins/peaks.h"
#include "runtime/runtime.h"

hetc_status_t hetc_model_load_with_options(const char *path, const hetc_model_load_options_t *options,
                                           hetc_model_t **out_model) {
  if (!path) return hetc_status_new(HETC_STATUS_INVALID_ARGUMENT, "hetc_model_load needs a path");
  /* Options from a caller built against a shorter struct keep the fields
   * it knew of; the rest take their defaults. */
  hetc_model_load_options_t known;
  memset(&known, 0, sizeof(known));
  if (options) memcpy(&known, options, options->struct_size < sizeof(known) ? options->struct_size : sizeof(known));
  const size_t length = strlen(path);
  if (length > 5 && !strcmp(path + length - 5, ".onnx")) {
    hetc_status_t status = hetc_onnx_import_file(path, &known, out_model);
    if (!status && known.shapes_only) hetc_weights_shapes_only(*out_model);
    return status;
  }
  if (known.num_input_shapes)
    return hetc_status_new(HETC_STATUS_BAD_INPUT, "--input-shape: %s is a model.json, whose inputs have fixed shapes "
                           "(the option is for ONNX models)", path);
  return known.shapes_only ? hetc_model_load_file_shapes_only(path, out_model) : hetc_model_load_file(path, out_model);
}

hetc_status_t hetc_model_load(const char *path, hetc_model_t **out_model) {
  return hetc_model_load_with_options(path, NULL, out_model);
}

void hetc_model_free(hetc_model_t *model) { hetc_graph_free(model); }

const char *hetc_model_name(const hetc_model_t *model) { return model->name; }

void hetc_free(void *memory) { free(memory); }

hetc_status_t hetc_model_tasks(const hetc_model_t *model, hetc_task_info_t **out_tasks,
                               int32_t *out_count, int32_t *out_fused_nodes) {
  hetc_graph_t *graph = NULL;
  hetc_task_list_t *list = NULL;
  hetc_status_t status = hetc_graph_clone(model, &graph);
  if (!status) status = hetc_graph_optimize(graph);
  if (!status) status = hetc_graph_extract_tasks(graph, &list);
  hetc_task_info_t *tasks = NULL;
  if (!status && !(tasks = calloc((size_t)list->count + 1, sizeof(*tasks))))
    status = hetc_status_new(HETC_STATUS_OUT_OF_MEMORY, "tasks");
  if (!status) {
    for (int32_t t = 0; t < list->count; ++t) {
      memcpy(tasks[t].key, list->tasks[t].key, sizeof(tasks[t].key));
      tasks[t].count = list->tasks[t].count;
      tasks[t].flops = list->tasks[t].flops;
    }
    *out_tasks = tasks;
    *out_count = list->count;
    if (out_fused_nodes) *out_fused_nodes = graph->num_nodes;
  }
  hetc_task_list_free(list);
  hetc_graph_free(graph);
  return status;
}

hetc_status_t hetc_context_create(hetc_context_t **out_context) {
  return hetc_registry_open(out_context);
}

void hetc_context_destroy(hetc_context_t *context) { hetc_registry_free(context); }

hetc_status_t hetc_compile(hetc_context_t *context, const hetc_model_t *model,
                           const hetc_compile_options_t *options, const char *out_path,
                           hetc_compile_report_t *out_report) {
  if (!options || !out_path)
    return hetc_status_new(HETC_STATUS_INVALID_ARGUMENT, "hetc_compile needs options and a path");
  /* The cost model's predictions see each device's kept peak, as the tuner
   * that trained the model did (plugins/peaks.h); compile writes nothing
   * there. */
  hetc_registry_keep_peaks(context, options->records_path, HETC_PEAKS_READ);
  return hetc_compile_graph(context, model, options, out_path, out_report);
}

hetc_status_t hetc_package_open_with_options(hetc_context_t *context, const char *path,
                                             const hetc_package_open_options_t *options,
                                             hetc_package_t **out_package) {
  hetc_package_open_options_t known;
  memset(&known, 0, sizeof(known));
  if (options) memcpy(&known, options, options->struct_size < sizeof(known) ? options->struct_size : sizeof(known));
  /* Before the runtime reads a byte of it: a package the key does not
   * trust is refused whole. */
  if (known.trusted_key) HETC_RETURN_IF_ERROR(hetc_signature_check(path, known.trusted_key));
  return hetc_runtime_open(context, path, out_package);
}

hetc_status_t hetc_package_open(hetc_context_t *context, const char *path, hetc_package_t **out_package) {
  return hetc_package_open_with_options(context, path, NULL, out_package);
}

hetc_status_t hetc_package_check_signature(const char *path, const char *public_key_path) {
  if (!path || !public_key_path)
    return hetc_status_new(HETC_STATUS_INVALID_ARGUMENT, "hetc_package_check_signature needs a package and a key");
  return hetc_signature_check(path, public_key_path);
}

hetc_status_t hetc_signing_keys_create(const char *secret_path, const char *public_path) {
  if (!secret_path || !public_path)
    return hetc_status_new(HETC_STATUS_INVALID_ARGUMENT, "hetc_signing_keys_create needs two paths");
  return hetc_keys_write(secret_path, public_path);
}

void hetc_package_close(hetc_package_t *package) { hetc_runtime_close(package); }

int32_t hetc_package_input_count(const hetc_package_t *package) {
  return hetc_runtime_plan(package)->num_inputs;
}

int32_t hetc_package_output_count(const hetc_package_t *package) {
  return hetc_runtime_plan(package)->num_outputs;
}

const char *hetc_package_input_name(const hetc_package_t *package, int32_t index) {
  return hetc_runtime_plan(package)->inputs[index].name;
}

const char *hetc_package_output_name(const hetc_package_t *package, int32_t index) {
  return hetc_runtime_plan(package)->outputs[index].name;
}

int64_t hetc_package_input_elements(const hetc_package_t *package, int32_t index) {
  return hetc_runtime_input_count(package, index);
}

int64_t hetc_package_output_elements(const hetc_package_t *package, int32_t index) {
  return hetc_runtime_output_count(package, index);
}

int32_t hetc_package_output_shape(const hetc_package_t *package, int32_t index, int64_t *out_shape) {
  const hetc_plan_t *plan = hetc_runtime_plan(package);
  const hetc_plugin_tensor_t *type = &plan->values[plan->outputs[index].value].type;
  memcpy(out_shape, type->shape, sizeof(int64_t) * (size_t)type->rank);
  return type->rank;
}

hetc_status_t hetc_package_set_input(hetc_package_t *package, int32_t index, const float *data,
                                     int64_t count) {
  return hetc_runtime_set_input(package, index, data, count);
}

hetc_status_t hetc_package_run(hetc_package_t *package) { return hetc_runtime_execute(package); }

hetc_status_t hetc_package_get_output(hetc_package_t *package, int32_t index, float *data,
                                      int64_t count) {
  return hetc_runtime_get_output(package, index, data, count);
}

void hetc_fill_random_input(float *data, int64_t count, uint64_t seed, int32_t input_index) {
  uint64_t state = seed * UINT64_C(0x9E3779B97F4A7C15) + (uint64_t)input_index + 1;
  for (int64_t i = 0; i < count; ++i) {
    state ^= state >> 12;
    state ^= state << 25;
    state ^= state >> 27;
    uint64_t r = state * UINT64_C(0x2545F4914F6CDD1D);
    data[i] = (float)((double)(r >> 40) / 8388608.0 - 1.0);
  }
}
