#include "compile/compile.h"
#include "plugins/abi_level.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "common/clock.h"
#include "common/fileio.h"
#include "common/interrupt.h"
#include "common/nonfinite.h"
#include "compile/buffer_plan.h"
#include "compile/channel_view.h"
#include "graph/passes.h"
#include "graph/split.h"
#include "graph/tasks.h"
#include "package/package_files.h"
#include "package/package_sign.h"
#include "package/package_weights.h"
#include "package/plan_order.h"
#include "package/plan.h"
#include "reference/reference.h"
#include "space/space.h"
#include "compile/config_choice.h"
#include "compile/kernel_build.h"
#include "place/placement_costs.h"
#include "place/selection_store.h"
#include "kernel/kernel_shelf.h"
#include "records/config_json.h"
#include "place/placement.h"
#include "kernel/plugin_calls.h"

/* A graph value as it exists on one device in one layout. */
typedef struct copy_of_t {
  int32_t device;
  hetc_plugin_layout_t layout;
  int32_t plan_value;
} copy_of_t;

typedef struct copies_t {
  int32_t count;
  copy_of_t items[8];
} copies_t;

typedef struct compiler_t {
  double inner_loop_sum;    /* over conv2d kernels reporting one */
  int32_t inner_loop_count;
  hetc_graph_t *graph; /* optimized copy, owned */
  hetc_plan_t *plan;   /* being built, owned until handed to the writer */
  hetc_plugin_entry_t **entries; /* per plan device */
  char **labels;                 /* per plan device, owned: its name in messages (add_target) */
  int32_t device_capacity;       /* of entries, labels and plan->devices */
  copies_t *copies;              /* per graph value */
  char *temp_dir, *kernel_dir;
  hetc_weights_writer_t *weights; /* the package's weights.bin, being written */
  hetc_config_chooser_t *chooser; /* tuned configs; NULL: defaults only */
  const hetc_compile_options_t *options;
  hetc_placement_t placement;     /* device per node; NULL device: first fit */
  hetc_kernel_times_t *times;     /* kernels timed for placement, owned */
  hetc_kernel_shelf_t *shelf;     /* every kernel built, owned: each distinct one is built once */
  int32_t *view_of;               /* per plan value: the value whose slot holds it, -1 (buffer_plan.h) */
  int weigh_candidates;           /* graph-level selection (placement_costs.h) */
  int32_t view_capacity;
  hetc_compile_report_t report;
} compiler_t;

static hetc_status_t new_plan_value(compiler_t *c, int32_t graph_value, int32_t device,
                                    hetc_plugin_layout_t layout, int32_t *out_id) {
  hetc_plugin_tensor_t type = c->graph->values[graph_value].type;
  type.layout = layout;
  char layout_name[32], name[512];
  hetc_layout_name(&type, layout_name, sizeof(layout_name));
  snprintf(name, sizeof(name), "%s@%s:%s", c->graph->values[graph_value].name, c->labels[device], layout_name);
  int32_t id = hetc_plan_add_value(c->plan);
  if (id < 0) return hetc_status_new(HETC_STATUS_OUT_OF_MEMORY, "compile");
  if (id >= c->view_capacity) {
    const int32_t capacity = c->view_capacity ? 2 * c->view_capacity : 256;
    int32_t *grown = realloc(c->view_of, sizeof(int32_t) * (size_t)capacity);
    if (!grown) return hetc_status_new(HETC_STATUS_OUT_OF_MEMORY, "compile");
    c->view_of = grown;
    c->view_capacity = capacity;
  }
  c->view_of[id] = -1;
  hetc_plan_value_t *v = &c->plan->values[id];
  v->name = strdup(name);
  v->type = type;
  v->device = device;
  int64_t elements = hetc_layout_element_count(&type);
  if (elements < 0)
    return hetc_status_new(HETC_STATUS_INTERNAL, "target '%s' asked for layout %s, which does not fit '%s'",
                           c->labels[device], layout_name, c->graph->values[graph_value].name);
  v->bytes = (uint64_t)elements * sizeof(float);
  copies_t *copies = &c->copies[graph_value];
  if (!v->name) return hetc_status_new(HETC_STATUS_OUT_OF_MEMORY, "compile");
  if (copies->count == (int32_t)(sizeof(copies->items) / sizeof(copies->items[0])))
    return hetc_status_new(HETC_STATUS_UNSUPPORTED, "'%s' would need more than %d device/layout copies",
                           c->graph->values[graph_value].name, copies->count);
  copies->items[copies->count++] = (copy_of_t){device, layout, id};
  *out_id = id;
  return NULL;
}

static hetc_status_t write_param(compiler_t *c, const void *data, uint64_t bytes,
                                 hetc_plan_param_t *out) {
  HETC_RETURN_IF_ERROR(hetc_weights_append(c->weights, data, bytes, &out->offset));
  out->bytes = bytes;
  c->plan->weights_bytes = hetc_weights_length(c->weights);
  return NULL;
}

/* Packs the node's logical params into the artifact's layout and appends
 * them to weights.bin. */
static hetc_status_t pack_params(compiler_t *c, const hetc_node_t *node, hetc_plugin_entry_t *entry,
                                 const hetc_plugin_artifact_t *artifact,
                                 const hetc_plugin_artifact_info_t *info, hetc_plan_step_t *step) {
  int32_t count = node ? hetc_graph_node_param_count(node) : 0;
  if (info->num_params != count)
    return hetc_status_new(HETC_STATUS_INTERNAL, "%s: artifact takes %d params, the node has %d",
                           step->name, info->num_params, count);
  step->params = calloc((size_t)count + 1, sizeof(hetc_plan_param_t));
  if (!step->params) return hetc_status_new(HETC_STATUS_OUT_OF_MEMORY, "compile");
  for (int32_t p = 0; p < count; ++p) {
    const hetc_param_t *param = hetc_graph_node_param(node, p);
    void *packed = malloc(info->param_bytes[p] ? info->param_bytes[p] : 1);
    if (!packed) return hetc_status_new(HETC_STATUS_OUT_OF_MEMORY, "packing %s", step->name);
    hetc_status_t status = hetc_entry_pack_param(entry, artifact, p, param->data, (uint64_t)param->count, packed);
    const int64_t nonfinite = status ? 0 : hetc_count_nonfinite(packed, info->param_bytes[p]);
    if (nonfinite)
      fprintf(stderr, "hetc: warning: %s: param %d holds %lld NaN or infinite values once packed (folded batch norm "
              "out of float32 range?); the model's outputs will hold them too\n",
              step->name, p, (long long)nonfinite);
    if (!status) status = write_param(c, packed, info->param_bytes[p], &step->params[p]);
    free(packed);
    if (status) return hetc_status_annotate(status, "%s: param %d", step->name, p);
    ++step->num_params;
  }
  return NULL;
}

/* hetc_compile_report_t.configs is indexed by source. */
_Static_assert(HETC_CONFIG_DEFAULT == 0 && HETC_CONFIG_TUNED == 1 && HETC_CONFIG_NEAREST == 2 &&
                   HETC_CONFIG_PREDICTED == 3,
               "hetc.h documents the order of hetc_compile_report_t.configs");

/* Appends a kernel step: built, emitted, params packed. The caller has set
 * name/device/inputs/output. */
/* The kernel of `workload` on plan device `device` with template
 * `template_index` and `config_json` (NULL: the template's default;
 * template -1: an op without choice, built with template 0's default): the
 * one the compile built already, found on its shelf, else built now and
 * put there. The template and config are recorded in `step` either way.
 * *out_artifact is the shelf's. */
static hetc_status_t shelved_kernel(compiler_t *c, int32_t device, const hetc_plugin_workload_t *workload,
                                    int32_t template_index, const char *config_json, const char *what,
                                    hetc_plan_step_t *step, hetc_plugin_artifact_t **out_artifact) {
  hetc_plugin_entry_t *entry = c->entries[device];
  const int32_t device_index = c->plan->devices[device].device_index;
  const int32_t build_template = template_index < 0 ? 0 : template_index;
  unsigned char *key = NULL;
  const size_t key_bytes = hetc_kernel_key(workload, template_index, config_json, &key);
  if (!key) return hetc_status_new(HETC_STATUS_OUT_OF_MEMORY, "compile");
  hetc_plugin_artifact_t *found = hetc_kernel_shelf_find(c->shelf, device, key, key_bytes);
  if (found) {
    free(key);
    *out_artifact = found;
    return hetc_kernel_describe_json(entry, device_index, workload, build_template, config_json, what, step);
  }
  hetc_status_t status =
      hetc_kernel_build_json(entry, device_index, workload, build_template, config_json, what, step, out_artifact);
  if (status) {
    free(key);
    return status;
  }
  status = hetc_kernel_shelf_put(c->shelf, device, entry, key, key_bytes, *out_artifact);
  if (status) {
    hetc_entry_artifact_release(entry, *out_artifact);
    *out_artifact = NULL;
    free(key);
  }
  return status;
}

static hetc_status_t finish_kernel_step(compiler_t *c, int32_t step_index, const hetc_node_t *node,
                                        hetc_plugin_entry_t *entry, hetc_plugin_artifact_t *artifact,
                                        const hetc_plugin_workload_t *workload) {
  hetc_plan_step_t *step = &c->plan->steps[step_index];
  const hetc_plugin_artifact_info_t *info = hetc_entry_artifact_info(entry, artifact);
  step->kind = HETC_PLAN_STEP_KERNEL;
  step->workload = *workload;
  step->input_types = calloc((size_t)workload->num_inputs + 1, sizeof(hetc_plugin_tensor_t));
  if (!step->input_types) return hetc_status_new(HETC_STATUS_OUT_OF_MEMORY, "compile");
  /* The manifest keeps the workload exactly as build() saw it (layout
   * hints included): artifact_load must be asked for the same thing. The
   * layouts really read and written are the plan values'. */
  memcpy(step->input_types, workload->inputs, sizeof(hetc_plugin_tensor_t) * (size_t)workload->num_inputs);
  step->workload.inputs = step->input_types;
  step->workspace_bytes = info->workspace_bytes;
  step->avg_inner_loop_length = info->avg_inner_loop_length;
  char prefix[64];
  snprintf(prefix, sizeof(prefix), "s%04d-%s", step_index, hetc_entry_name(entry));
  step->artifact_prefix = strdup(prefix);
  if (!step->artifact_prefix) return hetc_status_new(HETC_STATUS_OUT_OF_MEMORY, "compile");
  HETC_RETURN_IF_ERROR(pack_params(c, node, entry, artifact, info, step));
  if (workload->op == HETC_PLUGIN_OP_CONV2D && info->avg_inner_loop_length > 0) {
    c->inner_loop_sum += info->avg_inner_loop_length;
    ++c->inner_loop_count;
  }
  hetc_status_t status = hetc_entry_artifact_emit(entry, artifact, c->kernel_dir, prefix);
  ++c->report.kernels;
  return status ? hetc_status_annotate(status, "%s: emitting the artifact", step->name) : NULL;
}

static hetc_status_t value_on(compiler_t *c, int32_t graph_value, int32_t device,
                              hetc_plugin_layout_t layout, int32_t *out_id);

/* Appends a step that reads one plan value (a transform or a copy). */
static hetc_status_t add_one_input_step(compiler_t *c, hetc_plan_step_kind_t kind, const char *name,
                                        int32_t device, int32_t source, int32_t *out_step_index) {
  int32_t step_index = hetc_plan_add_step(c->plan);
  if (step_index < 0) return hetc_status_new(HETC_STATUS_OUT_OF_MEMORY, "compile");
  hetc_plan_step_t *step = &c->plan->steps[step_index];
  step->kind = kind;
  step->name = strdup(name);
  step->device = device;
  step->inputs = malloc(sizeof(int32_t));
  if (!step->name || !step->inputs) return hetc_status_new(HETC_STATUS_OUT_OF_MEMORY, "compile");
  step->inputs[0] = source;
  step->num_inputs = 1;
  *out_step_index = step_index;
  return NULL;
}

/* Converts graph_value's copy on `device` (another layout) into `layout`
 * with the device's LAYOUT_TRANSFORM kernel. */
static hetc_status_t add_transform(compiler_t *c, int32_t graph_value, int32_t source_id,
                                   int32_t device, hetc_plugin_layout_t layout, int32_t *out_id) {
  hetc_plugin_entry_t *entry = c->entries[device];
  hetc_plugin_tensor_t input = c->plan->values[source_id].type;
  hetc_plugin_workload_t workload = hetc_layout_transform_workload(&input, layout);
  char what[400];
  char from[32], to[32];
  hetc_layout_name(&input, from, sizeof(from));
  hetc_layout_name(&workload.output, to, sizeof(to));
  snprintf(what, sizeof(what), "%s:%s->%s", c->graph->values[graph_value].name, from, to);
  int32_t step_index = -1;
  HETC_RETURN_IF_ERROR(add_one_input_step(c, HETC_PLAN_STEP_KERNEL, what, device, source_id, &step_index));
  hetc_plugin_artifact_t *artifact = NULL;
  HETC_RETURN_IF_ERROR(
      shelved_kernel(c, device, &workload, -1, NULL, what, &c->plan->steps[step_index], &artifact));
  const hetc_plugin_artifact_info_t *info = hetc_entry_artifact_info(entry, artifact);
  hetc_status_t status = NULL;
  if (info->num_inputs != 1 || !hetc_layout_equal(info->input_layouts[0], input.layout) ||
      !hetc_layout_equal(info->output_layout, layout)) {
    status = hetc_status_new(HETC_STATUS_UNSUPPORTED, "%s: target '%s' cannot convert %s to %s", what,
                             hetc_entry_name(entry), from, to);
  }
  if (!status) status = new_plan_value(c, graph_value, device, layout, &c->plan->steps[step_index].output);
  if (!status) status = finish_kernel_step(c, step_index, NULL, entry, artifact, &workload);
  if (!status) {
    *out_id = c->plan->steps[step_index].output;
    ++c->report.transforms;
  }
  return status;
}

/* Copies graph_value's row-major copy from another device to `device`. */
static hetc_status_t add_copy(compiler_t *c, int32_t graph_value, int32_t device, int32_t *out_id) {
  const hetc_plugin_layout_t row_major = {HETC_PLUGIN_LAYOUT_ROW_MAJOR, 0};
  int32_t source;
  HETC_RETURN_IF_ERROR(value_on(c, graph_value, c->copies[graph_value].items[0].device, row_major, &source));
  char name[400];
  snprintf(name, sizeof(name), "%s:%s->%s", c->graph->values[graph_value].name,
           c->labels[c->plan->values[source].device], c->labels[device]);
  int32_t step_index = -1;
  HETC_RETURN_IF_ERROR(add_one_input_step(c, HETC_PLAN_STEP_COPY, name, device, source, &step_index));
  HETC_RETURN_IF_ERROR(new_plan_value(c, graph_value, device, row_major, out_id));
  c->plan->steps[step_index].output = *out_id;
  ++c->report.copies;
  return NULL;
}

/* The plan value holding graph_value on `device` in `layout`, adding
 * transforms and copies as needed. */
static hetc_status_t value_on(compiler_t *c, int32_t graph_value, int32_t device,
                              hetc_plugin_layout_t layout, int32_t *out_id) {
  const copies_t *copies = &c->copies[graph_value];
  int32_t on_device = -1;
  for (int32_t i = 0; i < copies->count; ++i) {
    if (copies->items[i].device != device) continue;
    if (hetc_layout_equal(copies->items[i].layout, layout)) {
      *out_id = copies->items[i].plan_value;
      return NULL;
    }
    if (on_device < 0) on_device = copies->items[i].plan_value;
  }
  if (on_device >= 0) return add_transform(c, graph_value, on_device, device, layout, out_id);
  const hetc_plugin_layout_t row_major = {HETC_PLUGIN_LAYOUT_ROW_MAJOR, 0};
  int32_t copied;
  HETC_RETURN_IF_ERROR(add_copy(c, graph_value, device, &copied));
  if (hetc_layout_equal(layout, row_major)) {
    *out_id = copied;
    return NULL;
  }
  return add_transform(c, graph_value, copied, device, layout, out_id);
}

/* The first target whose plugin supports the workload. */
static hetc_status_t first_fit(const compiler_t *c, int32_t node_index, const hetc_plugin_workload_t *workload,
                               int32_t *out_device) {
  for (int32_t d = 0; d < c->plan->num_devices; ++d) {
    hetc_plugin_entry_t *entry = c->entries[d];
    if (hetc_entry_supports(entry, c->plan->devices[d].device_index, workload)) {
      *out_device = d;
      return NULL;
    }
  }
  char reasons[2048] = "";
  for (int32_t d = 0; d < c->plan->num_devices; ++d) {
    char why[512];
    hetc_registry_unsupported_reason(c->entries[d], c->plan->devices[d].device_index, workload, why, sizeof(why));
    const size_t used = strlen(reasons);
    snprintf(reasons + used, sizeof(reasons) - used, "%s%s: %s", d ? "; " : "", c->labels[d], why);
  }
  const hetc_node_t *node = &c->graph->nodes[node_index];
  return hetc_status_new(HETC_STATUS_UNSUPPORTED, "node '%s' (%s): no target supports it (%s)", node->name,
                         hetc_op_name(node->op), reasons);
}

/* The placement's device, else the first fit. */
static hetc_status_t place(compiler_t *c, int32_t node_index, const hetc_plugin_workload_t *workload,
                           int32_t *out_device) {
  if (c->placement.device) {
    *out_device = c->placement.device[node_index];
    return NULL;
  }
  return first_fit(c, node_index, workload, out_device);
}

/* The kernel of a node: the candidate placement chose (graph-level
 * selection: the template and config whose whole-model latency was
 * lowest), else the config the records choose for the node alone. A
 * chosen config that no longer builds (a plan kept in the records, a
 * plugin updated since) falls back as the records' choice would: the
 * package must not depend on the store being current. */
/* A tunable node's kernel: the placement's choice, else the records'
 * (or the cost model's) for it alone; one that no longer builds falls back
 * to the default with a warning, since the package must not depend on the
 * store being current. *out_artifact is the shelf's. */
static hetc_status_t build_node_kernel(compiler_t *c, int32_t node_index, int32_t device,
                                       const hetc_plugin_workload_t *workload, const char *what,
                                       hetc_plan_step_t *step, hetc_plugin_artifact_t **out_artifact,
                                       hetc_config_source_t *out_source) {
  *out_source = HETC_CONFIG_DEFAULT;
  if (!hetc_workload_is_tunable(workload)) return shelved_kernel(c, device, workload, -1, NULL, what, step, out_artifact);
  int32_t template_index = 0;
  char *config_json = NULL;
  if (c->placement.candidate) {
    const hetc_kernel_candidate_t *chosen = &c->placement.candidate[node_index];
    template_index = chosen->template_index;
    *out_source = chosen->source;
    if (chosen->config_json && !(config_json = strdup(chosen->config_json)))
      return hetc_status_new(HETC_STATUS_OUT_OF_MEMORY, "compile");
  } else {
    hetc_plugin_entry_t *entry = c->entries[device];
    hetc_config_json_t config;
    HETC_RETURN_IF_ERROR(hetc_config_choose(c->chooser, entry->plugin, entry->instance,
                                            c->plan->devices[device].device_index, workload, &template_index, &config,
                                            out_source));
    if (*out_source != HETC_CONFIG_DEFAULT) {
      config_json = hetc_config_to_json(&config.config);
      hetc_config_json_free(&config);
      if (!config_json) return hetc_status_new(HETC_STATUS_OUT_OF_MEMORY, "compile");
    }
  }
  hetc_status_t status = shelved_kernel(c, device, workload, template_index, config_json, what, step, out_artifact);
  const int was_default = template_index == 0 && !config_json;
  free(config_json);
  if (!status || was_default) return status;
  fprintf(stderr, "hetc: warning: %s: the %s config does not build (%s); using the default\n", what,
          hetc_config_source_name(*out_source), hetc_status_message(status));
  hetc_status_free(status);
  hetc_plan_step_release(step);
  memset(step, 0, sizeof(*step));
  *out_source = HETC_CONFIG_DEFAULT;
  return shelved_kernel(c, device, workload, 0, NULL, what, step, out_artifact);
}

/* The last step that writes plan value `value`, or -1. */
static int32_t step_writing(const compiler_t *c, int32_t value) {
  for (int32_t s = c->plan->num_steps - 1; s >= 0; --s)
    if (c->plan->steps[s].output == value) return s;
  return -1;
}

/* The kernel step on `device` that writes plan value `value`, or -1. */
static int32_t kernel_writing(const compiler_t *c, int32_t value, int32_t device) {
  const int32_t s = step_writing(c, value);
  return s >= 0 && c->plan->steps[s].kind == HETC_PLAN_STEP_KERNEL && c->plan->steps[s].device == device ? s : -1;
}

/* 1 when a view lives in plan value `value`'s slot (a channel slice read
 * in place): `value` cannot then move into a concat's slot itself, since a
 * view names the value that holds it, never a view of a view. */
static int holds_views(const compiler_t *c, int32_t value) {
  for (int32_t v = 0; v < c->plan->num_values; ++v)
    if (c->view_of[v] == value) return 1;
  return 0;
}

/* Lays a concat out as views (compile/channel_view.h) when its inputs were
 * all written by kernels on `device` in one layout and may live in the
 * output's slices: *out_done is then 1 and no step is added. */
static hetc_status_t try_concat_views(compiler_t *c, int32_t node_index, int32_t device, int *out_done) {
  const hetc_node_t *node = &c->graph->nodes[node_index];
  *out_done = 0;
  if (node->op != HETC_OP_CONCAT || !hetc_plugin_buffer_view_call(c->entries[device]->plugin)) return NULL;
  int32_t parts[HETC_MAX_NODE_INPUTS];
  hetc_plugin_layout_t layout = {HETC_PLUGIN_LAYOUT_ROW_MAJOR, 0};
  for (int32_t i = 0; i < node->num_inputs; ++i) {
    const copies_t *copies = &c->copies[node->inputs[i]];
    parts[i] = -1;
    for (int32_t k = 0; k < copies->count && parts[i] < 0; ++k) {
      const copy_of_t *copy = &copies->items[k];
      if (copy->device != device || (i > 0 && !hetc_layout_equal(copy->layout, layout))) continue;
      if (kernel_writing(c, copy->plan_value, device) < 0 || c->view_of[copy->plan_value] >= 0 ||
          holds_views(c, copy->plan_value))
        continue;
      parts[i] = copy->plan_value;
      layout = copy->layout;
    }
    if (parts[i] < 0) return NULL;
  }
  uint64_t offsets[HETC_MAX_NODE_INPUTS];
  if (!hetc_concat_view_offsets(c->graph, node_index, layout, offsets)) return NULL;
  int32_t whole;
  HETC_RETURN_IF_ERROR(new_plan_value(c, node->output, device, layout, &whole));
  for (int32_t i = 0; i < node->num_inputs; ++i) {
    c->view_of[parts[i]] = whole;
    c->plan->values[parts[i]].offset = offsets[i];
  }
  ++c->report.concat_views;
  *out_done = 1;
  return NULL;
}

/* Reads a channel slice where it lies in its input (compile/channel_view.h)
 * when that input is already on `device` in a layout that allows it:
 * *out_done is then 1, no step is added, and the slice's value is a view
 * in the slot of the value holding its input. */
static hetc_status_t try_slice_view(compiler_t *c, int32_t node_index, int32_t device, int *out_done) {
  const hetc_node_t *node = &c->graph->nodes[node_index];
  *out_done = 0;
  if (!hetc_plugin_buffer_view_call(c->entries[device]->plugin)) return NULL;
  const copies_t *copies = &c->copies[node->inputs[0]];
  for (int32_t k = 0; k < copies->count; ++k) {
    const copy_of_t copy = copies->items[k];
    uint64_t offset = 0;
    /* The input must be written by a step: a value that is itself made of
     * views (a concat's) is not one piece of bytes to cut from. */
    if (copy.device != device || step_writing(c, copy.plan_value) < 0 ||
        !hetc_slice_view_offset(c->graph, node_index, copy.layout, &offset))
      continue;
    const int32_t holder = c->view_of[copy.plan_value] >= 0 ? c->view_of[copy.plan_value] : copy.plan_value;
    int32_t slice;
    HETC_RETURN_IF_ERROR(new_plan_value(c, node->output, device, copy.layout, &slice));
    c->view_of[slice] = holder;
    c->plan->values[slice].offset = c->plan->values[copy.plan_value].offset + offset;
    c->plan->values[slice].part_of = copy.plan_value;
    ++c->report.slice_views;
    *out_done = 1;
    return NULL;
  }
  return NULL;
}

static hetc_status_t compile_node(compiler_t *c, int32_t node_index) {
  const hetc_node_t *node = &c->graph->nodes[node_index];
  hetc_plugin_tensor_t inputs[HETC_MAX_NODE_INPUTS];
  hetc_plugin_workload_t workload;
  HETC_RETURN_IF_ERROR(hetc_graph_node_workload(c->graph, node_index, inputs, &workload));
  int32_t device = 0;
  HETC_RETURN_IF_ERROR(place(c, node_index, &workload, &device));
  int viewed = 0;
  HETC_RETURN_IF_ERROR(try_concat_views(c, node_index, device, &viewed));
  if (viewed) {
    if (c->options->progress)
      fprintf(stderr, "[%3d/%3d] %-18s %-28s on %s (its inputs written into its slices)\n", node_index + 1,
              c->graph->num_nodes, hetc_op_name(node->op), node->name, c->labels[device]);
    return NULL;
  }
  HETC_RETURN_IF_ERROR(try_slice_view(c, node_index, device, &viewed));
  if (viewed) {
    if (c->options->progress)
      fprintf(stderr, "[%3d/%3d] %-18s %-28s on %s (a channel slice read where it lies in its input)\n",
              node_index + 1, c->graph->num_nodes, hetc_op_name(node->op), node->name, c->labels[device]);
    return NULL;
  }
  /* Hint each input's layout: the one the placement costed the kernel
   * reading, else what already exists on this device. */
  for (int32_t i = 0; i < workload.num_inputs; ++i) {
    if (c->placement.input_layout && inputs[i].rank == 4) {
      inputs[i].layout = c->placement.input_layout[node_index];
      continue;
    }
    const copies_t *copies = &c->copies[node->inputs[i]];
    for (int32_t k = 0; k < copies->count; ++k) {
      if (copies->items[k].device == device) {
        inputs[i].layout = copies->items[k].layout;
        break;
      }
    }
  }
  hetc_plugin_entry_t *entry = c->entries[device];
  /* The step is appended after the input transforms it may need, so it is
   * built into a scratch record first. */
  hetc_plan_step_t scratch;
  memset(&scratch, 0, sizeof(scratch));
  hetc_plugin_artifact_t *artifact = NULL;
  char what[300];
  snprintf(what, sizeof(what), "node '%s' (%s)", node->name, hetc_op_name(node->op));
  hetc_config_source_t source = HETC_CONFIG_DEFAULT;
  hetc_status_t status = build_node_kernel(c, node_index, device, &workload, what, &scratch, &artifact,
                                           &source);
  if (!status && hetc_workload_is_tunable(&workload))
    ++c->report.configs[source];
  if (c->options->progress)
    fprintf(stderr, "[%3d/%3d] %-18s %-28s on %s (%s config)\n", node_index + 1, c->graph->num_nodes,
            hetc_op_name(node->op), node->name, c->labels[device], hetc_config_source_name(source));
  int32_t *input_ids = calloc((size_t)workload.num_inputs + 1, sizeof(int32_t));
  if (!status && !input_ids) status = hetc_status_new(HETC_STATUS_OUT_OF_MEMORY, "compile");
  const hetc_plugin_artifact_info_t *info = status ? NULL : hetc_entry_artifact_info(entry, artifact);
  if (info && info->num_inputs != workload.num_inputs)
    status = hetc_status_new(HETC_STATUS_INTERNAL, "%s: artifact reads %d inputs, expected %d", what,
                             info->num_inputs, workload.num_inputs);
  for (int32_t i = 0; !status && i < workload.num_inputs; ++i) {
    status = value_on(c, node->inputs[i], device, info->input_layouts[i], &input_ids[i]);
  }
  int32_t step_index = status ? -1 : hetc_plan_add_step(c->plan);
  if (!status && step_index < 0) status = hetc_status_new(HETC_STATUS_OUT_OF_MEMORY, "compile");
  if (!status) {
    hetc_plan_step_t *step = &c->plan->steps[step_index];
    *step = scratch;
    memset(&scratch, 0, sizeof(scratch));
    step->name = strdup(node->name);
    step->device = device;
    step->inputs = input_ids;
    step->num_inputs = workload.num_inputs;
    input_ids = NULL;
    if (!step->name) status = hetc_status_new(HETC_STATUS_OUT_OF_MEMORY, "compile");
  }
  if (!status) status = new_plan_value(c, node->output, device, info->output_layout,
                                       &c->plan->steps[step_index].output);
  if (!status) status = finish_kernel_step(c, step_index, node, entry, artifact, &workload);
  free(input_ids);
  hetc_plan_step_release(&scratch);
  return status;
}

/* Adds device `index` of `entry` to the plan, named `label` in messages. */
static hetc_status_t add_device(compiler_t *c, hetc_plugin_entry_t *entry, int32_t index, const char *label) {
  for (int32_t d = 0; d < c->plan->num_devices; ++d)
    if (c->entries[d] == entry && c->plan->devices[d].device_index == index)
      return hetc_status_new(HETC_STATUS_BAD_INPUT, "target '%s' is listed twice (a target without ':INDEX' "
                             "is every device of its plugin)", label);
  if (c->plan->num_devices == c->device_capacity) {
    const int32_t capacity = 2 * c->device_capacity + 4;
    hetc_plan_device_t *devices = realloc(c->plan->devices, sizeof(*devices) * (size_t)capacity);
    if (devices) c->plan->devices = devices;
    hetc_plugin_entry_t **entries = realloc(c->entries, sizeof(*entries) * (size_t)capacity);
    if (entries) c->entries = entries;
    char **labels = realloc(c->labels, sizeof(*labels) * (size_t)capacity);
    if (labels) c->labels = labels;
    if (!devices || !entries || !labels) return hetc_status_new(HETC_STATUS_OUT_OF_MEMORY, "compile");
    c->device_capacity = capacity;
  }
  const hetc_plugin_device_t *device = hetc_entry_device(entry, index);
  const int32_t d = c->plan->num_devices++;
  hetc_plan_device_t *plan_device = &c->plan->devices[d];
  memset(plan_device, 0, sizeof(*plan_device));
  c->entries[d] = entry;
  c->labels[d] = strdup(label);
  plan_device->target = strdup(hetc_entry_name(entry));
  plan_device->device_index = index;
  plan_device->plugin_version = strdup(hetc_entry_version(entry) ? hetc_entry_version(entry) : "");
  plan_device->fingerprint = strdup(device && device->fingerprint ? device->fingerprint : "");
  if (!c->labels[d] || !plan_device->target || !plan_device->plugin_version || !plan_device->fingerprint)
    return hetc_status_new(HETC_STATUS_OUT_OF_MEMORY, "compile");
  return NULL;
}

/* The plan's devices, from the targets as the user named them: "NAME" is
 * every device of that plugin, "NAME:INDEX" one (hetc_registry_target_spec).
 * A device is named NAME in messages and value names when it is its
 * plugin's only device, else NAME:INDEX. */
static hetc_status_t add_target(compiler_t *c, hetc_registry_t *registry, const char *spec, int num_targets,
                                hetc_status_t *unavailable) {
  hetc_plugin_entry_t *entry;
  int32_t index;
  hetc_status_t status = hetc_registry_target_spec(registry, spec, &entry, &index);
  const int32_t count = status ? 0 : hetc_entry_device_count(entry);
  if (!status && count < 1)
    status = hetc_status_new(HETC_STATUS_UNAVAILABLE, "target '%s' has no device", spec);
  if (status && hetc_status_code(status) == HETC_STATUS_UNAVAILABLE) {
    /* A target whose plugin cannot run here (no GPU, no driver) is left
     * out with the reason when another can take the model; the package
     * then runs where the others do. Alone, it is an error. */
    if (num_targets > 1) fprintf(stderr, "hetc: warning: %s\n", hetc_status_message(status));
    if (!*unavailable) *unavailable = status;
    else hetc_status_free(status);
    return NULL;
  }
  HETC_RETURN_IF_ERROR(status);
  char label[300];
  for (int32_t i = index < 0 ? 0 : index; i < (index < 0 ? count : index + 1); ++i) {
    if (count > 1) snprintf(label, sizeof(label), "%s:%d", hetc_entry_name(entry), i);
    else snprintf(label, sizeof(label), "%s", hetc_entry_name(entry));
    HETC_RETURN_IF_ERROR(add_device(c, entry, i, label));
  }
  return NULL;
}

static hetc_status_t setup(compiler_t *c, hetc_registry_t *registry, const hetc_graph_t *graph,
                           const char *const *targets, int32_t num_targets) {
  if (num_targets < 1) return hetc_status_new(HETC_STATUS_INVALID_ARGUMENT, "no targets given");
  HETC_RETURN_IF_ERROR(hetc_graph_require_weights(graph, "compiled"));
  HETC_RETURN_IF_ERROR(hetc_graph_clone(graph, &c->graph));
  c->plan = calloc(1, sizeof(hetc_plan_t));
  if (c->plan) c->plan->model_name = strdup(graph->name);
  if (!c->plan || !c->plan->model_name) return hetc_status_new(HETC_STATUS_OUT_OF_MEMORY, "compile");
  hetc_status_t unavailable = NULL, status = NULL;
  for (int32_t t = 0; t < num_targets && !status; ++t)
    status = add_target(c, registry, targets[t], num_targets, &unavailable);
  if (status || c->plan->num_devices == 0) {
    if (status) hetc_status_free(unavailable);
    return status ? status : unavailable;
  }
  /* Fused as the oldest plugin among the targets can run it: silu and the
   * hard activations stay apart (ops of minor 0) when one predates them. */
  uint32_t level = HETC_ABI_LEVEL_NOW;
  for (int32_t d = 0; d < c->plan->num_devices; ++d)
    if (hetc_entry_abi_level(c->entries[d]) < level) level = hetc_entry_abi_level(c->entries[d]);
  status = hetc_graph_optimize_for(c->graph, level);
  if (status) {
    hetc_status_free(unavailable);
    return status;
  }
  if (unavailable) {
    fprintf(stderr, "hetc: warning: placing every node on the available target%s:", c->plan->num_devices > 1 ? "s" : "");
    for (int32_t d = 0; d < c->plan->num_devices; ++d) fprintf(stderr, " %s", c->labels[d]);
    fprintf(stderr, "\n");
  }
  hetc_status_free(unavailable);
  return NULL;
}

/* The package's temporary directory, its kernels folder and weights.bin. */
static hetc_status_t open_package(compiler_t *c, const char *out_path) {
  HETC_RETURN_IF_ERROR(hetc_dir_create_temp_beside(out_path, &c->temp_dir));
  c->kernel_dir = hetc_path_join(c->temp_dir, HETC_PACKAGE_KERNEL_DIR);
  if (!c->kernel_dir) return hetc_status_new(HETC_STATUS_OUT_OF_MEMORY, "compile");
  if (mkdir(c->kernel_dir, 0755) != 0)
    return hetc_status_new(HETC_STATUS_IO_ERROR, "%s: cannot create package files", c->temp_dir);
  return hetc_weights_create(c->temp_dir, &c->weights);
}

/* One costing and solve over the current graph: `pinned` and
 * `split_partner` as in hetc_placement_request_t. */
static hetc_status_t place_graph(compiler_t *c, const int32_t *pinned, const int32_t *split_partner, int32_t split,
                                 FILE *explain, int progress) {
  int32_t device_indices[HETC_PLACE_MAX_DEVICES];
  const char *targets[HETC_PLACE_MAX_DEVICES];
  for (int32_t d = 0; d < c->plan->num_devices && d < HETC_PLACE_MAX_DEVICES; ++d) {
    device_indices[d] = c->plan->devices[d].device_index;
    targets[d] = c->labels[d];
  }
  const hetc_placement_request_t request = {
      .graph = c->graph,     .num_devices = c->plan->num_devices, .entries = c->entries,
      .device_indices = device_indices, .targets = targets,       .chooser = c->chooser,
      .records_path = c->options->records_path, .explain = explain, .progress = progress,
      .pinned_device = pinned, .split = split,                     .split_partner = split_partner,
      .times = &c->times, .shelf = c->shelf, .weigh_candidates = c->weigh_candidates};
  hetc_placement_release(&c->placement);
  return hetc_placement_choose(&request, &c->placement);
}

/* Rewrites the proposed conv2d splits into the graph (from the last node
 * back, so the proposals' node indices stay valid) and places the result
 * again with each half pinned to its device. */
static hetc_status_t split_and_place(compiler_t *c) {
  const int32_t num_splits = c->placement.num_splits;
  hetc_place_split_t *splits = c->placement.splits;
  c->placement.splits = NULL;
  hetc_status_t status = NULL;
  for (int32_t i = num_splits - 1; !status && i >= 0; --i)
    status = hetc_graph_split_conv2d(c->graph, splits[i].node, splits[i].first_channels);
  const int32_t n = c->graph->num_nodes;
  int32_t *pinned = status ? NULL : malloc(sizeof(int32_t) * (size_t)(n + 1));
  int32_t *partner = status ? NULL : malloc(sizeof(int32_t) * (size_t)(n + 1));
  if (!status && (!pinned || !partner)) status = hetc_status_new(HETC_STATUS_OUT_OF_MEMORY, "compile");
  for (int32_t k = 0; !status && k < n; ++k) pinned[k] = partner[k] = -1;
  /* Split i's part 0 now sits at its node index plus two per earlier split. */
  for (int32_t i = 0; !status && i < num_splits; ++i) {
    const int32_t part0 = splits[i].node + 2 * i;
    pinned[part0] = splits[i].first_device;
    pinned[part0 + 1] = splits[i].second_device;
    partner[part0] = part0 + 1;
    partner[part0 + 1] = part0;
    c->report.splits++;
  }
  if (!status)
    status = place_graph(c, pinned, partner, HETC_SPLIT_NEVER, c->options->explain ? stdout : NULL, 0);
  free(splits);
  free(pinned);
  free(partner);
  return status;
}

/* Cost-based placement (splitting conv2d where the options say), or with
 * HETC_PLACEMENT_FIRST the first-fit plan, pinned and only costed (for
 * --explain and predict). */
static hetc_status_t choose_placement(compiler_t *c) {
  int32_t *pinned = NULL;
  if (c->options->placement == HETC_PLACEMENT_FIRST) {
    if (!(pinned = calloc((size_t)c->graph->num_nodes + 1, sizeof(int32_t))))
      return hetc_status_new(HETC_STATUS_OUT_OF_MEMORY, "compile");
    for (int32_t k = 0; k < c->graph->num_nodes; ++k) {
      hetc_plugin_tensor_t inputs[HETC_MAX_NODE_INPUTS];
      hetc_plugin_workload_t workload;
      hetc_status_t status = hetc_graph_node_workload(c->graph, k, inputs, &workload);
      if (!status) status = first_fit(c, k, &workload, &pinned[k]);
      if (status) {
        free(pinned);
        return status;
      }
    }
  }
  const int may_split = !pinned && c->plan->num_devices > 1 && c->options->split != HETC_SPLIT_NEVER;
  /* Where splits may follow, the plan is explained once final. */
  hetc_status_t status = place_graph(c, pinned, NULL, pinned ? HETC_SPLIT_NEVER : c->options->split,
                                     c->options->explain && !may_split ? stdout : NULL, c->options->progress);
  free(pinned);
  if (!status && may_split) {
    if (c->placement.num_splits > 0) status = split_and_place(c);
    else if (c->options->explain) status = place_graph(c, NULL, NULL, HETC_SPLIT_NEVER, stdout, 0);
  }
  HETC_RETURN_IF_ERROR(status);
  c->report.predicted_seconds = c->placement.predicted_seconds;
  c->report.default_seconds = c->placement.default_seconds;
  c->report.placement_exact = c->placement.exact;
  return NULL;
}

/* The plugins' device index of each plan device. */
static void device_indices_of(const compiler_t *c, int32_t out[HETC_PLACE_MAX_DEVICES]) {
  for (int32_t d = 0; d < c->plan->num_devices && d < HETC_PLACE_MAX_DEVICES; ++d)
    out[d] = c->plan->devices[d].device_index;
}

/* The key a plan for this graph (as given, before any split) and these
 * targets is kept under; for at most HETC_PLACE_MAX_DEVICES targets. */
static void selection_key_of(const compiler_t *c, hetc_selection_key_t *out_key) {
  int32_t device_indices[HETC_PLACE_MAX_DEVICES];
  device_indices_of(c, device_indices);
  hetc_selection_key(c->graph, c->plan->num_devices, c->entries, device_indices, c->options->split, out_key);
}

/* Keeps the plan just chosen under `key` in the records store, for the
 * next compile. A plan that split layers is not kept: it belongs to the
 * rewritten graph, and splitting is costed anew each time. Failing to
 * write is a warning: the package does not depend on it. */
static void keep_selection(compiler_t *c, hetc_records_t *store, const hetc_selection_key_t *key) {
  /* A store read as it is (read-only, or an older schema) keeps no plan. */
  if (c->report.splits > 0 || !hetc_records_writable(store)) return;
  int32_t device_indices[HETC_PLACE_MAX_DEVICES];
  device_indices_of(c, device_indices);
  hetc_status_t status = hetc_selection_keep(store, key, c->graph, c->entries, device_indices, &c->placement);
  if (status) fprintf(stderr, "hetc: warning: the plan chosen is not kept: %s\n", hetc_status_message(status));
  else c->report.selection_stored = 1;
  hetc_status_free(status);
}

/* The plan graph-level selection kept for this model and these targets
 * (place/selection_store.h), else a new one, kept for next time. A
 * first-fit placement and --explain or predict always cost anew. */
static hetc_status_t place_or_reuse(compiler_t *c) {
  hetc_records_t *store = hetc_config_chooser_records(c->chooser);
  const int by_cost = c->options->placement == HETC_PLACEMENT_COST && c->plan->num_devices <= HETC_PLACE_MAX_DEVICES;
  hetc_selection_key_t key;
  if (by_cost) selection_key_of(c, &key);
  int found = 0;
  if (store && by_cost && !c->options->explain && !c->options->predict) {
    int32_t device_indices[HETC_PLACE_MAX_DEVICES];
    device_indices_of(c, device_indices);
    hetc_placement_release(&c->placement);
    HETC_RETURN_IF_ERROR(hetc_selection_find(store, &key, c->graph, c->plan->num_devices, c->entries,
                                             device_indices, &c->placement, &found));
  }
  if (found) {
    c->report.predicted_seconds = c->placement.predicted_seconds;
    c->report.placement_exact = c->placement.exact;
    c->report.selection_kept = 1;
    return NULL;
  }
  HETC_RETURN_IF_ERROR(choose_placement(c));
  if (store && by_cost) keep_selection(c, store, &key);
  return NULL;
}

static int32_t first_consumer_device(const compiler_t *c, int32_t value) {
  if (!c->placement.device) return 0;
  for (int32_t k = 0; k < c->graph->num_nodes; ++k)
    for (int32_t i = 0; i < c->graph->nodes[k].num_inputs; ++i)
      if (c->graph->nodes[k].inputs[i] == value) return c->placement.device[k];
  return 0;
}

/* Whether the records (or the cost model beside them) would decide any
 * tunable node's kernel on the first device, were there no selection: then
 * graph-level selection weighs what they offer against every template's
 * default. A record of one template's default counts too: alone it would
 * pick that template over a faster one nobody measured. */
static hetc_status_t records_offer_configs(compiler_t *c, int *out_offered) {
  *out_offered = 0;
  hetc_plugin_entry_t *entry = c->entries[0];
  const int32_t device = c->plan->devices[0].device_index;
  for (int32_t k = 0; c->chooser && k < c->graph->num_nodes && !*out_offered; ++k) {
    hetc_plugin_tensor_t inputs[HETC_MAX_NODE_INPUTS];
    hetc_plugin_workload_t workload;
    HETC_RETURN_IF_ERROR(hetc_graph_node_workload(c->graph, k, inputs, &workload));
    if (!hetc_workload_is_tunable(&workload)) continue;
    if (!hetc_entry_supports(entry, device, &workload)) continue;
    int32_t template_index = 0;
    hetc_config_json_t config;
    hetc_config_source_t source = HETC_CONFIG_DEFAULT;
    HETC_RETURN_IF_ERROR(
        hetc_config_choose(c->chooser, entry->plugin, entry->instance, device, &workload, &template_index, &config,
                           &source));
    if (source != HETC_CONFIG_DEFAULT) {
      hetc_config_json_free(&config);
      *out_offered = 1;
    }
  }
  return NULL;
}

static hetc_status_t compile_all(compiler_t *c) {
  hetc_graph_t *g = c->graph;
  const hetc_plugin_layout_t row_major = {HETC_PLUGIN_LAYOUT_ROW_MAJOR, 0};
  c->plan->inputs = calloc((size_t)g->num_inputs, sizeof(hetc_plan_io_t));
  c->plan->outputs = calloc((size_t)g->num_outputs, sizeof(hetc_plan_io_t));
  if (!c->plan->inputs || !c->plan->outputs) return hetc_status_new(HETC_STATUS_OUT_OF_MEMORY, "compile");
  /* One target needs no placement, but --explain and predict still want
   * its plan's expected latency, and records that offer configs besides
   * the defaults want graph-level selection (config_choice.h), so it is
   * costed too. */
  int offered = 0;
  if (c->plan->num_devices == 1) HETC_RETURN_IF_ERROR(records_offer_configs(c, &offered));
  /* On one target without records to choose from, --explain and predict
   * cost the plan a compile builds: no selection among defaults. */
  c->weigh_candidates = c->plan->num_devices > 1 || offered;
  if ((c->plan->num_devices > 1 && c->options->placement == HETC_PLACEMENT_COST) || c->options->explain ||
      c->options->predict || offered)
    HETC_RETURN_IF_ERROR(place_or_reuse(c));
  /* Sized now: splitting adds values. */
  if (!(c->copies = calloc((size_t)g->num_values + 1, sizeof(copies_t))))
    return hetc_status_new(HETC_STATUS_OUT_OF_MEMORY, "compile");
  /* Graph inputs arrive row-major on the device of their first consumer
   * (the first target's without a placement); other devices get copies
   * when they read them. */
  for (int32_t i = 0; i < g->num_inputs; ++i) {
    hetc_plan_io_t *io = &c->plan->inputs[c->plan->num_inputs++];
    io->name = strdup(g->values[g->inputs[i]].name);
    if (!io->name) return hetc_status_new(HETC_STATUS_OUT_OF_MEMORY, "compile");
    HETC_RETURN_IF_ERROR(new_plan_value(c, g->inputs[i], first_consumer_device(c, g->inputs[i]), row_major,
                                        &io->value));
  }
  for (int32_t k = 0; k < g->num_nodes; ++k) {
    HETC_RETURN_IF_ERROR(hetc_interrupt_status());
    HETC_RETURN_IF_ERROR(compile_node(c, k));
  }
  /* Outputs leave row-major, from the device that produced them. */
  for (int32_t o = 0; o < g->num_outputs; ++o) {
    hetc_plan_io_t *io = &c->plan->outputs[c->plan->num_outputs++];
    io->name = strdup(g->output_names[o]);
    if (!io->name) return hetc_status_new(HETC_STATUS_OUT_OF_MEMORY, "compile");
    int32_t device = c->copies[g->outputs[o]].items[0].device;
    HETC_RETURN_IF_ERROR(value_on(c, g->outputs[o], device, row_major, &io->value));
  }
  HETC_RETURN_IF_ERROR(hetc_buffer_plan_assign(c->plan, c->view_of));
  hetc_weights_writer_t *weights = c->weights;
  c->weights = NULL;
  HETC_RETURN_IF_ERROR(hetc_weights_finish(weights));
  /* The reader refuses a plan that reads a value before writing it or
   * writes over one still needed; compile must never write one. */
  hetc_status_t order = hetc_plan_check_order(c->plan);
  if (order) return hetc_status_recode(hetc_status_annotate(order, "compile made a wrong plan"), HETC_STATUS_INTERNAL);
  HETC_RETURN_IF_ERROR(hetc_package_files_describe(c->plan, c->temp_dir, c->options->sign_key != NULL));
  return hetc_plan_write_manifest(c->plan, c->temp_dir);
}

/* Frees what a compiler owns (not the package directory it wrote). */
static void compiler_release(compiler_t *c) {
  free(c->temp_dir);
  free(c->kernel_dir);
  free(c->entries);
  for (int32_t d = 0; c->labels && c->plan && d < c->plan->num_devices; ++d) free(c->labels[d]);
  free(c->labels);
  free(c->copies);
  free(c->view_of);
  hetc_placement_release(&c->placement);
  hetc_kernel_times_free(c->times);
  hetc_kernel_shelf_free(c->shelf);
  hetc_plan_free(c->plan);
  hetc_graph_free(c->graph);
  hetc_config_chooser_free(c->chooser);
}

/* The labels of the devices some step runs on, in plan order. */
static void describe_devices_used(const compiler_t *c, char *out, size_t size) {
  size_t used = 0;
  out[0] = 0;
  for (int32_t d = 0; d < c->plan->num_devices && used < size; ++d) {
    int32_t s = 0;
    while (s < c->plan->num_steps && c->plan->steps[s].device != d) ++s;
    if (s < c->plan->num_steps)
      used += (size_t)snprintf(out + used, size - used, "%s%s", used ? ", " : "", c->labels[d]);
  }
}

hetc_status_t hetc_compile_graph(hetc_registry_t *registry, const hetc_graph_t *graph,
                                 const hetc_compile_options_t *options, const char *requested_path,
                                 hetc_compile_report_t *out_report) {
  /* "pkg.hetc/" (a shell completion) names the same package as "pkg.hetc". */
  char *out_path = strdup(requested_path);
  if (!out_path) return hetc_status_new(HETC_STATUS_OUT_OF_MEMORY, "compile");
  for (size_t n = strlen(out_path); n > 1 && out_path[n - 1] == '/'; --n) out_path[n - 1] = 0;
  compiler_t c;
  memset(&c, 0, sizeof(c));
  c.options = options;
  double start = hetc_now_seconds();
  /* A bad key is found before the work, not after it. */
  unsigned char secret[HETC_SECRET_KEY_BYTES];
  hetc_status_t status = options->sign_key ? hetc_key_read_secret(options->sign_key, secret) : NULL;
  if (!status) status = hetc_config_chooser_open(options->records_path, &c.chooser);
  if (!status) status = hetc_kernel_shelf_create(&c.shelf);
  if (!status) status = setup(&c, registry, graph, options->targets, options->num_targets);
  if (!status) status = open_package(&c, out_path);
  if (!status) status = compile_all(&c);
  if (!status && options->sign_key) status = hetc_signature_write(c.plan, c.temp_dir, secret);
  explicit_bzero(secret, sizeof(secret));
  if (!status) status = hetc_dir_commit(c.temp_dir, out_path, HETC_PACKAGE_MANIFEST);
  hetc_weights_abandon(c.weights);
  if (status && c.temp_dir) hetc_dir_remove_tree(c.temp_dir);
  if (hetc_status_code(status) == HETC_STATUS_INTERRUPTED) {
    /* Said once, plainly, wherever the work noticed it (a kernel build
     * would have prefixed its node). */
    hetc_status_t signal_status = hetc_interrupt_status();
    hetc_status_t said = hetc_status_new(HETC_STATUS_INTERRUPTED, "%s; %s was not written",
                                         hetc_status_message(signal_status ? signal_status : status), out_path);
    hetc_status_free(signal_status);
    hetc_status_free(status);
    status = said;
  }
  if (!status && out_report) {
    describe_devices_used(&c, c.report.targets_used, sizeof(c.report.targets_used));
    int64_t built = 0, reused = 0;
    hetc_kernel_shelf_counts(c.shelf, &built, &reused);
    c.report.kernels_built = (int32_t)built;
    c.report.kernels_reused = (int32_t)reused;
    c.report.weights_bytes = c.plan->weights_bytes;
    c.report.build_seconds = hetc_now_seconds() - start;
    c.report.avg_inner_loop_length = c.inner_loop_count ? c.inner_loop_sum / c.inner_loop_count : 0;
    *out_report = c.report;
  }
  compiler_release(&c);
  free(out_path);
  return status;
}

hetc_status_t hetc_compile_select(hetc_registry_t *registry, const hetc_graph_t *graph,
                                  const hetc_compile_options_t *options, hetc_compile_report_t *out_report) {
  compiler_t c;
  memset(&c, 0, sizeof(c));
  c.options = options;
  c.weigh_candidates = 1;
  double start = hetc_now_seconds();
  hetc_status_t status = hetc_config_chooser_open(options->records_path, &c.chooser);
  if (!status) status = setup(&c, registry, graph, options->targets, options->num_targets);
  hetc_selection_key_t key;
  if (!status && c.plan->num_devices <= HETC_PLACE_MAX_DEVICES) selection_key_of(&c, &key);
  if (!status) status = choose_placement(&c);
  hetc_records_t *store = hetc_config_chooser_records(c.chooser);
  if (!status && store && c.plan->num_devices <= HETC_PLACE_MAX_DEVICES) keep_selection(&c, store, &key);
  if (!status && out_report) {
    c.report.build_seconds = hetc_now_seconds() - start;
    *out_report = c.report;
  }
  compiler_release(&c);
  return status;
}
