#include "place/selection_store.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/name_map.h"
#include "graph/tasks.h"
#include "kernel/plugin_calls.h"

static uint64_t hash_text(const char *text, uint64_t hash) { return hetc_fnv1a64(text, strlen(text), hash); }

void hetc_selection_key(const hetc_graph_t *graph, int32_t num_devices, hetc_plugin_entry_t *const *entries,
                        const int32_t *device_indices, hetc_split_policy_t split, hetc_selection_key_t *out_key) {
  uint64_t hash = HETC_FNV1A64_OFFSET;
  for (int32_t k = 0; k < graph->num_nodes; ++k) {
    const hetc_node_t *node = &graph->nodes[k];
    char text[HETC_TASK_KEY_SIZE + 64];
    hetc_plugin_tensor_t inputs[HETC_MAX_NODE_INPUTS];
    hetc_plugin_workload_t workload;
    hetc_status_t status = hetc_graph_node_workload(graph, k, inputs, &workload);
    if (!status) hetc_workload_key(&workload, text, sizeof(text));
    else snprintf(text, sizeof(text), "op %d", (int)node->op);
    hetc_status_free(status);
    hash = hash_text(node->name, hash);
    hash = hash_text(text, hash);
    for (int32_t i = 0; i < node->num_inputs; ++i) {
      snprintf(text, sizeof(text), ",%d", node->inputs[i]);
      hash = hash_text(text, hash);
    }
  }
  snprintf(out_key->model, sizeof(out_key->model), "%016llx", (unsigned long long)hash);
  size_t used = 0;
  out_key->targets[0] = 0;
  for (int32_t d = 0; d < num_devices && used < sizeof(out_key->targets); ++d) {
    const hetc_plugin_device_t *device = hetc_entry_device(entries[d], device_indices[d]);
    used += (size_t)snprintf(out_key->targets + used, sizeof(out_key->targets) - used, "%s%s=%s", d ? ";" : "",
                             hetc_entry_name(entries[d]), device && device->fingerprint ? device->fingerprint : "");
  }
  if (num_devices > 1 && used < sizeof(out_key->targets))
    snprintf(out_key->targets + used, sizeof(out_key->targets) - used, ";split=%d", (int)split);
}

static hetc_status_t workload_of(const hetc_graph_t *graph, int32_t k, hetc_plugin_tensor_t *inputs,
                                 hetc_plugin_workload_t *out) {
  return hetc_graph_node_workload(graph, k, inputs, out);
}

hetc_status_t hetc_selection_keep(hetc_records_t *store, const hetc_selection_key_t *key, const hetc_graph_t *graph,
                                  hetc_plugin_entry_t *const *entries, const int32_t *device_indices,
                                  const hetc_placement_t *placement) {
  if (!placement->device || !placement->candidate || placement->num_splits > 0) return NULL;
  hetc_selection_t selection = {0, NULL, placement->predicted_seconds, 0};
  HETC_RETURN_IF_ERROR(hetc_records_count(store, &selection.records));
  selection.entries = calloc((size_t)graph->num_nodes + 1, sizeof(hetc_selection_entry_t));
  if (!selection.entries) return hetc_status_new(HETC_STATUS_OUT_OF_MEMORY, "keeping a selection");
  hetc_status_t status = NULL;
  for (int32_t k = 0; !status && k < graph->num_nodes; ++k) {
    const int32_t d = placement->device[k];
    const hetc_kernel_candidate_t *candidate = &placement->candidate[k];
    hetc_plugin_tensor_t inputs[HETC_MAX_NODE_INPUTS];
    hetc_plugin_workload_t workload;
    status = workload_of(graph, k, inputs, &workload);
    if (status) break;
    const hetc_plugin_t *p = entries[d]->plugin;
    const char *name = p->template_name(entries[d]->instance, device_indices[d], &workload, candidate->template_index);
    hetc_selection_entry_t *e = &selection.entries[selection.count++];
    e->node = strdup(graph->nodes[k].name);
    e->device = d;
    e->template_name = strdup(name ? name : "");
    e->template_version = p->template_version(entries[d]->instance, device_indices[d], &workload,
                                              candidate->template_index);
    e->config_json = candidate->config_json ? strdup(candidate->config_json) : NULL;
    e->source = strdup(hetc_config_source_name(candidate->source));
    if (!e->node || !e->template_name || !e->source || (candidate->config_json && !e->config_json))
      status = hetc_status_new(HETC_STATUS_OUT_OF_MEMORY, "keeping a selection");
  }
  if (!status) status = hetc_records_put_selection(store, key->model, key->targets, &selection);
  hetc_selection_free(&selection);
  return status;
}

static hetc_config_source_t source_from_name(const char *name) {
  if (!strcmp(name, "tuned")) return HETC_CONFIG_TUNED;
  if (!strcmp(name, "nearest")) return HETC_CONFIG_NEAREST;
  if (!strcmp(name, "predicted")) return HETC_CONFIG_PREDICTED;
  return HETC_CONFIG_DEFAULT;
}

/* The kept entry's template on its device for node k, or -1. */
static int32_t template_of(const hetc_selection_entry_t *e, hetc_plugin_entry_t *entry, int32_t device_index,
                           const hetc_plugin_workload_t *workload) {
  const hetc_plugin_t *p = entry->plugin;
  const int32_t n = p->template_count(entry->instance, device_index, workload);
  for (int32_t t = 0; t < n; ++t) {
    const char *name = p->template_name(entry->instance, device_index, workload, t);
    if (name && !strcmp(name, e->template_name) &&
        p->template_version(entry->instance, device_index, workload, t) == e->template_version)
      return t;
  }
  return -1;
}

hetc_status_t hetc_selection_find(hetc_records_t *store, const hetc_selection_key_t *key, const hetc_graph_t *graph,
                                  int32_t num_devices, hetc_plugin_entry_t *const *entries,
                                  const int32_t *device_indices, hetc_placement_t *out, int *out_found) {
  memset(out, 0, sizeof(*out));
  *out_found = 0;
  hetc_selection_t selection;
  int64_t records = 0;
  HETC_RETURN_IF_ERROR(hetc_records_get_selection(store, key->model, key->targets, &selection));
  hetc_status_t status = hetc_records_count(store, &records);
  int applies = !status && selection.count == graph->num_nodes && selection.records == records;
  if (applies) {
    out->device = calloc((size_t)graph->num_nodes + 1, sizeof(int32_t));
    out->candidate = calloc((size_t)graph->num_nodes + 1, sizeof(hetc_kernel_candidate_t));
    if (!out->device || !out->candidate) status = hetc_status_new(HETC_STATUS_OUT_OF_MEMORY, "a kept selection");
    else out->num_nodes = graph->num_nodes;
  }
  for (int32_t k = 0; !status && applies && k < graph->num_nodes; ++k) {
    const hetc_selection_entry_t *e = &selection.entries[k];
    hetc_plugin_tensor_t inputs[HETC_MAX_NODE_INPUTS];
    hetc_plugin_workload_t workload;
    status = workload_of(graph, k, inputs, &workload);
    if (status) break;
    applies = !strcmp(e->node, graph->nodes[k].name) && e->device >= 0 && e->device < num_devices;
    const int32_t t = applies ? template_of(e, entries[e->device], device_indices[e->device], &workload) : -1;
    applies = t >= 0;
    if (!applies) break;
    out->device[k] = e->device;
    out->candidate[k] = (hetc_kernel_candidate_t){t, NULL, source_from_name(e->source), 0};
    if (e->config_json && !(out->candidate[k].config_json = strdup(e->config_json)))
      status = hetc_status_new(HETC_STATUS_OUT_OF_MEMORY, "a kept selection");
  }
  if (!status && applies) {
    out->predicted_seconds = selection.predicted_seconds;
    out->exact = 1;
    *out_found = 1;
  } else {
    hetc_placement_release(out);
  }
  hetc_selection_free(&selection);
  return status;
}
