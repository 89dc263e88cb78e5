#include "place/placement_costs.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "compile/channel_view.h"
#include "compile/kernel_build.h"
#include "kernel/kernel_rounds.h"
#include "place/switch_cost.h"
#include "common/thread_pool.h"
#include "graph/split.h"
#include "kernel/kernel_shelf.h"
#include "package/plan.h"
#include "place/placement.h"
#include "place/transfer.h"
#include "kernel/plugin_calls.h"

/* A device's options for a node: one per kernel candidate (every
 * template's default and the records' best configs, config_choice.h) for
 * tunable ops, and for ops without knobs one per layout their producer can
 * deliver there (and row-major). */
#define OPTIONS_PER_DEVICE 24
/* Tuned configs per template the selection weighs (besides the default). */
#define CONFIGS_PER_TEMPLATE 3
/* Layout ids while costing (the solver takes fewer, hetc_place_layout_limit:
 * options in the least useful layouts are dropped before it runs). */
#define COSTING_LAYOUTS 64
/* The most key entries one step of the placement search keeps
 * (placement.h). A ResNet's steps hold a few dozen states and are exact; a
 * DenseNet block's, where every layer's output lives to the block's end,
 * would hold millions: this keeps about ten thousand, some 10 ms a step. */
#define PLACEMENT_MAX_ENTRIES (1 << 18)
/* Timed rounds over every kernel (kernel_rounds.h), after a warm-up one. */
#define TIMED_ROUNDS 5
/* The tensor a device's layout-transform rate is measured on. */
static const hetc_plugin_tensor_t transform_probe = {
    HETC_PLUGIN_DTYPE_FLOAT32, 4, {1, 64, 56, 56}, {HETC_PLUGIN_LAYOUT_ROW_MAJOR, 0}};

typedef struct costing_t {
  const hetc_placement_request_t *r;
  hetc_plugin_layout_t layouts[COSTING_LAYOUTS];
  int32_t num_layouts;
  hetc_transfer_cost_t to_device[HETC_PLACE_MAX_DEVICES], to_host[HETC_PLACE_MAX_DEVICES];
  double transform_per_byte[HETC_PLACE_MAX_DEVICES];
  double switch_seconds[HETC_PLACE_MAX_DEVICES * HETC_PLACE_MAX_DEVICES]; /* from * num_devices + to */
  hetc_place_node_t *nodes;
  hetc_place_option_t *options; /* num_nodes x num_devices x OPTIONS_PER_DEVICE */
  hetc_kernel_candidate_t *candidates; /* per option slot: how its kernel is built (tunable ops) */
  int32_t *option_job;          /* per option slot: its kernel in `rounds`, -1 when its time is known */
  int32_t transform_job[HETC_PLACE_MAX_DEVICES]; /* the layout-transform probe's kernel, or -1 */
  hetc_kernel_rounds_t *rounds; /* the kernels to time */
  struct timed_kernel_t *queued; /* per kernel in `rounds`, its seconds not yet known */
  int32_t *inputs;              /* num_nodes x HETC_MAX_NODE_INPUTS */
  double *model_input_bytes;
  struct prebuilt_t *prebuilt;  /* tunable candidates built ahead, in parallel */
  int32_t num_prebuilt;
  /* Per (node, device), node * num_devices + device: a tunable node's
   * candidates there, listed once for the prebuild and the options. */
  struct node_candidates_t *node_candidates;
} costing_t;

typedef struct node_candidates_t {
  hetc_kernel_candidate_t *items; /* owned */
  int32_t count;
} node_candidates_t;

/* A candidate kernel built ahead of queue_kernel, which takes it. */
typedef struct prebuilt_t {
  int32_t device;
  size_t key_bytes;
  unsigned char *key; /* kernel_key's; owned */
  hetc_plugin_artifact_t *artifact;
  hetc_status_t status;
} prebuilt_t;

/* ------------------------------------------------------------------------ */
/* Kernel times kept for the compile                                        */
/* ------------------------------------------------------------------------ */

/* A kernel of one device: what identifies it (for the cache and for nodes
 * with the same workload), the layouts it reads and writes, its time. */
typedef struct timed_kernel_t {
  int32_t device;
  size_t key_bytes;
  unsigned char *key; /* the workload with its input tensors; owned */
  hetc_plugin_layout_t in_layout, out_layout;
  double seconds;
} timed_kernel_t;

struct hetc_kernel_times_t {
  int32_t count, capacity;
  timed_kernel_t *items;
  int32_t has_switch_seconds;
  double switch_seconds[HETC_PLACE_MAX_DEVICES * HETC_PLACE_MAX_DEVICES];
};

static hetc_kernel_times_t *times_get(hetc_kernel_times_t **times) {
  if (times && !*times) *times = calloc(1, sizeof(hetc_kernel_times_t));
  return times ? *times : NULL;
}

void hetc_kernel_times_free(hetc_kernel_times_t *times) {
  for (int32_t i = 0; times && i < times->count; ++i) free(times->items[i].key);
  if (times) free(times->items);
  free(times);
}

/* The bytes that identify a kernel (kernel/kernel_shelf.h); a candidate
 * NULL for an op without knobs. */
static size_t kernel_key(const hetc_plugin_workload_t *workload, const hetc_kernel_candidate_t *candidate,
                         unsigned char **out_key) {
  return hetc_kernel_key(workload, candidate ? candidate->template_index : -1, candidate ? candidate->config_json : NULL,
                         out_key);
}

/* The index of device's kernel with `key` among items[0, count), or -1. */
static int32_t find_kernel(const timed_kernel_t *items, int32_t count, int32_t device, const unsigned char *key,
                           size_t key_bytes) {
  for (int32_t i = 0; i < count; ++i) {
    const timed_kernel_t *t = &items[i];
    if (t->device == device && t->key_bytes == key_bytes && !memcmp(t->key, key, key_bytes)) return i;
  }
  return -1;
}

/* Keeps a time; takes `key`. Out of memory only means timing it again. */
static void times_add(hetc_kernel_times_t **times, timed_kernel_t entry) {
  hetc_kernel_times_t *t = times_get(times);
  if (t && t->count == t->capacity) {
    int32_t capacity = t->capacity ? 2 * t->capacity : 64;
    timed_kernel_t *items = realloc(t->items, sizeof(timed_kernel_t) * (size_t)capacity);
    if (items) t->items = items, t->capacity = capacity;
  }
  if (!t || t->count == t->capacity) {
    free(entry.key);
    return;
  }
  t->items[t->count++] = entry;
}

/* ------------------------------------------------------------------------ */

static double copy_cost(const void *context, int32_t from, int32_t to, double bytes) {
  const costing_t *c = context;
  const int32_t host = c->r->num_devices;
  double seconds = 0;
  if (from != host) seconds += hetc_transfer_seconds(&c->to_host[from], bytes);
  if (to != host) seconds += hetc_transfer_seconds(&c->to_device[to], bytes);
  return seconds;
}

static double transform_cost(const void *context, int32_t device, int32_t from, int32_t to, double bytes) {
  const costing_t *c = context;
  return from == to || device >= c->r->num_devices ? 0 : bytes * c->transform_per_byte[device];
}

static double switch_cost(const void *context, int32_t from, int32_t to) {
  const costing_t *c = context;
  return c->switch_seconds[from * c->r->num_devices + to];
}

/* Switch costs are measured once per compile (they depend on the machine's
 * load more than on anything worth keeping in the records). */
static hetc_status_t find_switch_costs(costing_t *c) {
  const int32_t n = c->r->num_devices;
  hetc_kernel_times_t *kept = times_get(c->r->times);
  if (n < 2) return NULL;
  if (kept && kept->has_switch_seconds) {
    memcpy(c->switch_seconds, kept->switch_seconds, sizeof(double) * (size_t)(n * n));
    return NULL;
  }
  HETC_RETURN_IF_ERROR(hetc_switch_costs_measure(n, c->r->entries, c->r->device_indices, c->switch_seconds));
  if (kept) {
    memcpy(kept->switch_seconds, c->switch_seconds, sizeof(double) * (size_t)(n * n));
    kept->has_switch_seconds = 1;
  }
  return NULL;
}

static int32_t layout_id(costing_t *c, hetc_plugin_layout_t layout) {
  for (int32_t i = 0; i < c->num_layouts; ++i)
    if (hetc_layout_equal(c->layouts[i], layout)) return i;
  if (c->num_layouts == COSTING_LAYOUTS) return -1;
  c->layouts[c->num_layouts] = layout;
  return c->num_layouts++;
}

static double tensor_bytes(const hetc_plugin_tensor_t *t) {
  return (double)sizeof(float) * (double)hetc_tensor_element_count(t);
}

/* An option of device d reading in_layout and writing out_layout, with
 * the layouts numbered for the optimiser. */
static hetc_status_t option_of(costing_t *c, int32_t d, hetc_plugin_layout_t in_layout,
                               hetc_plugin_layout_t out_layout, double seconds, hetc_place_option_t *out_option) {
  int32_t in = layout_id(c, in_layout), out = layout_id(c, out_layout);
  if (in < 0 || out < 0)
    return hetc_status_new(HETC_STATUS_UNSUPPORTED, "placement: more than %d layouts among the candidates",
                           COSTING_LAYOUTS);
  *out_option = (hetc_place_option_t){d, in, out, seconds};
  return NULL;
}

/* Builds `workload` on device d as `candidate` says (NULL: template 0's
 * default, for ops without knobs and transform probes). */
static hetc_status_t build_candidate(costing_t *c, int32_t d, const hetc_plugin_workload_t *workload,
                                     const hetc_kernel_candidate_t *candidate, const char *what,
                                     hetc_plugin_artifact_t **out_artifact) {
  hetc_plugin_entry_t *entry = c->r->entries[d];
  const int32_t device_index = c->r->device_indices[d];
  hetc_plan_step_t scratch;
  memset(&scratch, 0, sizeof(scratch));
  hetc_status_t status =
      hetc_kernel_build_json(entry, device_index, workload, candidate ? candidate->template_index : 0,
                             candidate ? candidate->config_json : NULL, what, &scratch, out_artifact);
  hetc_plan_step_release(&scratch);
  return status;
}

/* Fills *out_option for the kernel of `workload` on device d built as
 * `candidate` says: its layouts now, its seconds from the compile's cache
 * or, once the rounds have run, from its kernel there (*out_job, else -1).
 * Nodes with the same workload and candidate share one kernel. */
static hetc_status_t queue_kernel(costing_t *c, int32_t d, const hetc_plugin_workload_t *workload,
                                  const hetc_kernel_candidate_t *candidate, const char *what,
                                  hetc_place_option_t *out_option, int32_t *out_job) {
  *out_job = -1;
  unsigned char *key = NULL;
  const size_t key_bytes = kernel_key(workload, candidate, &key);
  if (!key) return hetc_status_new(HETC_STATUS_OUT_OF_MEMORY, "placement");
  const hetc_kernel_times_t *kept = c->r->times ? *c->r->times : NULL;
  const int32_t known = kept ? find_kernel(kept->items, kept->count, d, key, key_bytes) : -1;
  if (known >= 0) {
    free(key);
    const timed_kernel_t *t = &kept->items[known];
    return option_of(c, d, t->in_layout, t->out_layout, t->seconds, out_option);
  }
  const int32_t count = hetc_kernel_rounds_count(c->rounds);
  const int32_t queued = find_kernel(c->queued, count, d, key, key_bytes);
  if (queued >= 0) {
    free(key);
    *out_job = queued;
    return option_of(c, d, c->queued[queued].in_layout, c->queued[queued].out_layout, 0, out_option);
  }
  hetc_plugin_entry_t *entry = c->r->entries[d];
  hetc_plugin_artifact_t *artifact = NULL;
  hetc_status_t status = NULL;
  /* A prebuilt kernel is taken once; a failed one is not queued, so a
   * second node with its key finds the entry empty and builds again, to
   * fail with the same reason. */
  prebuilt_t *built = NULL;
  for (int32_t i = 0; i < c->num_prebuilt && !built; ++i)
    if (c->prebuilt[i].device == d && c->prebuilt[i].key_bytes == key_bytes &&
        !memcmp(c->prebuilt[i].key, key, key_bytes) && (c->prebuilt[i].artifact || c->prebuilt[i].status))
      built = &c->prebuilt[i];
  if (built) {
    artifact = built->artifact;
    status = built->status;
    built->artifact = NULL;
    built->status = NULL;
  } else {
    status = build_candidate(c, d, workload, candidate, what, &artifact);
  }
  const hetc_plugin_layout_t row_major = {HETC_PLUGIN_LAYOUT_ROW_MAJOR, 0};
  hetc_plugin_layout_t in = row_major, out = row_major;
  if (!status) {
    const hetc_plugin_artifact_info_t *info = hetc_entry_artifact_info(entry, artifact);
    if (info->num_inputs > 0) in = info->input_layouts[0];
    out = info->output_layout;
    status = option_of(c, d, in, out, 0, out_option);
  }
  if (!status && (count & (count - 1)) == 0) { /* the queue grows at powers of two */
    timed_kernel_t *grown = realloc(c->queued, sizeof(timed_kernel_t) * (size_t)(count ? 2 * count : 1));
    if (!grown) status = hetc_status_new(HETC_STATUS_OUT_OF_MEMORY, "placement");
    else c->queued = grown;
  }
  int32_t job = -1;
  if (!status) {
    status = hetc_kernel_rounds_add(c->rounds, entry, c->r->device_indices[d], workload, artifact, &job);
    artifact = NULL; /* the rounds' now */
  }
  if (artifact) hetc_entry_artifact_release(entry, artifact);
  if (status) {
    free(key);
    return status;
  }
  c->queued[job] = (timed_kernel_t){d, key_bytes, key, in, out, 0};
  *out_job = job;
  return NULL;
}

/* A kernel that does not build or run on a device is not placed there:
 * the plan must not depend on it (a warning says why). */
static int usable(hetc_status_t status, const char *target) {
  if (!status) return 1;
  fprintf(stderr, "hetc: warning: not placed on %s: %s\n", target, hetc_status_message(status));
  hetc_status_free(status);
  return 0;
}

static hetc_place_option_t *option_slots(const costing_t *c, int32_t k) {
  return &c->options[(size_t)k * (size_t)c->r->num_devices * OPTIONS_PER_DEVICE];
}

static size_t slot_index(const costing_t *c, const hetc_place_option_t *slot) {
  return (size_t)(slot - c->options);
}

/* Queues the next option of node k on device d, built as `candidate` says
 * (copied; NULL for an op without knobs): 1 when it became an option. An
 * option whose layouts another option of the node already has on d, or
 * whose input layout is not `want_in` (>= 0), is dropped. */
static int add_option(costing_t *c, int32_t k, int32_t d, const hetc_plugin_workload_t *workload,
                      const hetc_kernel_candidate_t *candidate, int32_t want_in, const char *what) {
  hetc_place_node_t *pn = &c->nodes[k];
  if (pn->num_options == c->r->num_devices * OPTIONS_PER_DEVICE) return 0;
  hetc_place_option_t *slot = &option_slots(c, k)[pn->num_options];
  int32_t *job = &c->option_job[slot_index(c, slot)];
  if (!usable(queue_kernel(c, d, workload, candidate, what, slot, job), c->r->targets[d])) return 0;
  /* The node's kernels compete for it: the rounds time one far slower than
   * the fastest of them no more (a kernel shared by nodes of the same
   * workload is in the last one's group). */
  if (*job >= 0) hetc_kernel_rounds_set_group(c->rounds, *job, k);
  if (want_in >= 0 && slot->in_layout != want_in) return 0;
  if (!candidate)
    for (int32_t o = 0; o < pn->num_options; ++o) {
      const hetc_place_option_t *other = &option_slots(c, k)[o];
      if (other->device == d && other->in_layout == slot->in_layout && other->out_layout == slot->out_layout) return 0;
    }
  hetc_kernel_candidate_t *kept = &c->candidates[slot_index(c, slot)];
  *kept = candidate ? *candidate : (hetc_kernel_candidate_t){0, NULL, HETC_CONFIG_DEFAULT, 0};
  if (candidate && candidate->config_json && !(kept->config_json = strdup(candidate->config_json))) return 0;
  ++pn->num_options;
  return 1;
}

/* Node k's one option on device d without selection: the config the
 * records choose for it alone, else template 0's default. */
static hetc_status_t add_chosen_option(costing_t *c, int32_t k, int32_t d, const hetc_plugin_workload_t *workload,
                                       const char *what) {
  hetc_plugin_entry_t *entry = c->r->entries[d];
  hetc_kernel_candidate_t chosen = {0, NULL, HETC_CONFIG_DEFAULT, 0};
  hetc_config_json_t config;
  HETC_RETURN_IF_ERROR(hetc_config_choose(c->r->chooser, entry->plugin, entry->instance, c->r->device_indices[d],
                                          workload, &chosen.template_index, &config, &chosen.source));
  if (chosen.source != HETC_CONFIG_DEFAULT) {
    chosen.config_json = hetc_config_to_json(&config.config);
    hetc_config_json_free(&config);
    if (!chosen.config_json) return hetc_status_new(HETC_STATUS_OUT_OF_MEMORY, "placement");
  }
  /* A chosen config that does not build falls back to the default. */
  if (!add_option(c, k, d, workload, &chosen, -1, what) && chosen.config_json) {
    chosen = (hetc_kernel_candidate_t){0, NULL, HETC_CONFIG_DEFAULT, 0};
    add_option(c, k, d, workload, &chosen, -1, what);
  }
  free(chosen.config_json);
  return NULL;
}

/* Node k's options on device d (none when d does not support it or no
 * kernel builds and runs there): a tunable op's candidates; an op without
 * knobs on row-major inputs and on each layout its first input's producer
 * can deliver on d (saving a transform). */
static hetc_status_t cost_node_on(costing_t *c, int32_t k, int32_t d) {
  const hetc_graph_t *g = c->r->graph;
  const hetc_node_t *node = &g->nodes[k];
  hetc_place_node_t *pn = &c->nodes[k];
  hetc_plugin_tensor_t inputs[HETC_MAX_NODE_INPUTS];
  hetc_plugin_workload_t workload;
  HETC_RETURN_IF_ERROR(hetc_graph_node_workload(g, k, inputs, &workload));
  hetc_plugin_entry_t *entry = c->r->entries[d];
  const int32_t pinned = c->r->pinned_device ? c->r->pinned_device[k] : -1;
  if ((pinned >= 0 && d != pinned) || !hetc_entry_supports(entry, c->r->device_indices[d], &workload))
    return NULL;
  char what[300];
  snprintf(what, sizeof(what), "node '%s' (%s)", node->name, hetc_op_name(node->op));
  if (hetc_workload_is_tunable(&workload)) {
    if (!c->r->weigh_candidates) return add_chosen_option(c, k, d, &workload, what);
    const node_candidates_t *list = &c->node_candidates[(size_t)k * (size_t)c->r->num_devices + (size_t)d];
    for (int32_t i = 0; i < list->count; ++i) add_option(c, k, d, &workload, &list->items[i], -1, what);
    return NULL;
  }
  add_option(c, k, d, &workload, NULL, -1, what);
  if (node->num_inputs < 1 || pn->inputs[0] < 0) return NULL;
  /* The layouts the producer writes on d, each once. */
  const hetc_place_node_t *producer = &c->nodes[pn->inputs[0]];
  for (int32_t o = 0; o < producer->num_options; ++o) {
    const hetc_place_option_t *p = &producer->options[o];
    if (p->device != d || p->out_layout == HETC_PLACE_ROW_MAJOR) continue;
    int seen = 0;
    for (int32_t e = 0; e < o && !seen; ++e)
      seen = producer->options[e].device == d && producer->options[e].out_layout == p->out_layout;
    for (int32_t e = 0; e < pn->num_options && !seen; ++e)
      seen = pn->options[e].device == d && pn->options[e].in_layout == p->out_layout;
    if (seen) continue;
    hetc_plugin_tensor_t hinted[HETC_MAX_NODE_INPUTS];
    hetc_plugin_workload_t variant = workload;
    for (int32_t i = 0; i < workload.num_inputs; ++i) {
      hinted[i] = inputs[i];
      if (hinted[i].rank == 4) hinted[i].layout = c->layouts[p->out_layout];
    }
    variant.inputs = hinted;
    add_option(c, k, d, &variant, NULL, p->out_layout, what);
  }
  return NULL;
}

/* A device's layout-transform probe: a ResNet-sized activation into the
 * first other layout the device uses (none for a row-major-only device). */
static hetc_status_t queue_transform_probe(costing_t *c, int32_t d) {
  c->transform_job[d] = -1;
  int32_t layout = -1;
  for (int32_t k = 0; k < c->r->graph->num_nodes && layout < 0; ++k)
    for (int32_t o = 0; o < c->nodes[k].num_options; ++o) {
      const hetc_place_option_t *opt = &c->nodes[k].options[o];
      if (opt->device != d) continue;
      if (opt->out_layout != HETC_PLACE_ROW_MAJOR) layout = opt->out_layout;
      if (opt->in_layout != HETC_PLACE_ROW_MAJOR) layout = opt->in_layout;
    }
  if (layout < 0) return NULL;
  hetc_plugin_tensor_t input = transform_probe;
  hetc_plugin_workload_t workload = hetc_layout_transform_workload(&input, c->layouts[layout]);
  hetc_place_option_t probe;
  HETC_RETURN_IF_ERROR(
      queue_kernel(c, d, &workload, NULL, "the layout-transform probe", &probe, &c->transform_job[d]));
  c->transform_per_byte[d] = probe.seconds / tensor_bytes(&input); /* known already when cached */
  return NULL;
}

/* The candidates of every tunable node on every device, built ahead with
 * as many threads as kernels use (builds dominate the costing of a model
 * with records: a few hundred kernels of tens of milliseconds each). */
typedef struct prebuild_t {
  hetc_plugin_workload_t workload;
  hetc_plugin_tensor_t inputs[HETC_MAX_NODE_INPUTS];
  char *config_json;
} prebuild_t;

static hetc_status_t prebuild_candidates(costing_t *c) {
  const hetc_graph_t *g = c->r->graph;
  if (!c->r->weigh_candidates) return NULL;
  int32_t capacity = 64, count = 0;
  prebuild_t *storage = malloc(sizeof(prebuild_t) * (size_t)capacity);
  hetc_kernel_build_job_t *jobs = malloc(sizeof(hetc_kernel_build_job_t) * (size_t)capacity);
  c->prebuilt = malloc(sizeof(prebuilt_t) * (size_t)capacity);
  hetc_status_t status = !storage || !jobs || !c->prebuilt ? hetc_status_new(HETC_STATUS_OUT_OF_MEMORY, "placement") : NULL;
  const hetc_kernel_times_t *kept = c->r->times ? *c->r->times : NULL;
  for (int32_t d = 0; !status && d < c->r->num_devices; ++d)
    for (int32_t k = 0; !status && k < g->num_nodes; ++k) {
      hetc_plugin_tensor_t inputs[HETC_MAX_NODE_INPUTS];
      hetc_plugin_workload_t workload;
      status = hetc_graph_node_workload(g, k, inputs, &workload);
      if (status) break;
      hetc_plugin_entry_t *entry = c->r->entries[d];
      const int32_t pinned = c->r->pinned_device ? c->r->pinned_device[k] : -1;
      if (!hetc_workload_is_tunable(&workload) ||
          (pinned >= 0 && d != pinned) || !hetc_entry_supports(entry, c->r->device_indices[d], &workload))
        continue;
      node_candidates_t *list = &c->node_candidates[(size_t)k * (size_t)c->r->num_devices + (size_t)d];
      status = hetc_config_candidates(c->r->chooser, entry->plugin, entry->instance, c->r->device_indices[d],
                                      &workload, CONFIGS_PER_TEMPLATE, &list->items, &list->count);
      const hetc_kernel_candidate_t *candidates = list->items;
      const int32_t n = list->count;
      for (int32_t i = 0; !status && i < n; ++i) {
        unsigned char *key = NULL;
        const size_t key_bytes = kernel_key(&workload, &candidates[i], &key);
        int known = !key || (kept && find_kernel(kept->items, kept->count, d, key, key_bytes) >= 0);
        for (int32_t j = 0; !known && j < count; ++j)
          known = c->prebuilt[j].device == d && c->prebuilt[j].key_bytes == key_bytes &&
                  !memcmp(c->prebuilt[j].key, key, key_bytes);
        if (!key) status = hetc_status_new(HETC_STATUS_OUT_OF_MEMORY, "placement");
        if (known) {
          free(key);
          continue;
        }
        if (count == capacity) {
          capacity *= 2;
          prebuild_t *s2 = realloc(storage, sizeof(prebuild_t) * (size_t)capacity);
          if (s2) storage = s2;
          hetc_kernel_build_job_t *j2 = realloc(jobs, sizeof(hetc_kernel_build_job_t) * (size_t)capacity);
          if (j2) jobs = j2;
          prebuilt_t *p2 = realloc(c->prebuilt, sizeof(prebuilt_t) * (size_t)capacity);
          if (p2) c->prebuilt = p2;
          if (!s2 || !j2 || !p2) {
            free(key);
            status = hetc_status_new(HETC_STATUS_OUT_OF_MEMORY, "placement");
            break;
          }
        }
        prebuild_t *b = &storage[count];
        b->workload = workload;
        memcpy(b->inputs, inputs, sizeof(inputs));
        b->config_json = candidates[i].config_json ? strdup(candidates[i].config_json) : NULL;
        c->prebuilt[count] = (prebuilt_t){d, key_bytes, key, NULL, NULL};
        jobs[count] = (hetc_kernel_build_job_t){entry, c->r->device_indices[d], NULL, candidates[i].template_index,
                                                b->config_json, g->nodes[k].name, NULL, NULL};
        ++count;
        c->num_prebuilt = count;
      }
    }
  /* Storage may have moved while it grew: point the jobs at it now. */
  for (int32_t i = 0; i < count; ++i) {
    storage[i].workload.inputs = storage[i].inputs;
    jobs[i].workload = &storage[i].workload;
  }
  if (!status && count > 0) {
    if (c->r->progress) fprintf(stderr, "placement: building %d candidate kernels\n", count);
    status = hetc_kernel_build_all(jobs, count, hetc_thread_pool_threads());
    for (int32_t i = 0; !status && i < count; ++i) {
      c->prebuilt[i].artifact = jobs[i].artifact;
      c->prebuilt[i].status = jobs[i].status;
    }
  }
  for (int32_t i = 0; storage && i < count; ++i) free(storage[i].config_json);
  free(storage);
  free(jobs);
  return status;
}

static void free_prebuilt(costing_t *c) {
  for (int32_t i = 0; i < c->num_prebuilt; ++i) {
    prebuilt_t *p = &c->prebuilt[i];
    if (p->artifact) hetc_entry_artifact_release(c->r->entries[p->device], p->artifact);
    hetc_status_free(p->status);
    free(p->key);
  }
  free(c->prebuilt);
  c->prebuilt = NULL;
  c->num_prebuilt = 0;
}

/* Every node's kernels on every device, then the transform probes, queued
 * device by device (so that the rounds run one device's kernels in a row,
 * as a model placed there would). */
static hetc_status_t queue_kernels(costing_t *c) {
  const hetc_graph_t *g = c->r->graph;
  hetc_status_t status = prebuild_candidates(c);
  for (int32_t d = 0; !status && d < c->r->num_devices; ++d)
    for (int32_t k = 0; !status && k < g->num_nodes; ++k) status = cost_node_on(c, k, d);
  for (int32_t d = 0; !status && d < c->r->num_devices; ++d) status = queue_transform_probe(c, d);
  free_prebuilt(c);
  return status;
}

/* A concat whose inputs its producers can write into its slices, and a
 * channel slice read where it lies (compile/channel_view.h), run no
 * kernel. */
static int view_costs_nothing(const costing_t *c, int32_t k, const hetc_place_option_t *option) {
  if (option->in_layout != option->out_layout || !hetc_plugin_buffer_view_call(c->r->entries[option->device]->plugin))
    return 0;
  const hetc_plugin_layout_t layout = c->layouts[option->in_layout];
  uint64_t offsets[HETC_MAX_NODE_INPUTS];
  if (c->r->graph->nodes[k].op == HETC_OP_CONCAT) return hetc_concat_view_offsets(c->r->graph, k, layout, offsets);
  return hetc_slice_view_offset(c->r->graph, k, layout, offsets);
}

/* The node's fastest option on device d (-1: none); *out_count (may be
 * NULL) gets how many it has there. */
static int32_t fastest_on(const hetc_place_node_t *pn, int32_t d, int32_t *out_count) {
  int32_t best = -1, count = 0;
  for (int32_t o = 0; o < pn->num_options; ++o) {
    if (pn->options[o].device != d) continue;
    ++count;
    if (best < 0 || pn->options[o].seconds < pn->options[best].seconds) best = o;
  }
  if (out_count) *out_count = count;
  return best;
}

/* Runs the rounds and hands each kernel's time to the options waiting for
 * it (and to the compile's cache). A kernel that failed to run is not an
 * option (a warning says why). */
static hetc_status_t time_kernels(costing_t *c) {
  const hetc_graph_t *g = c->r->graph;
  const int32_t jobs = hetc_kernel_rounds_count(c->rounds);
  double *seconds = malloc(sizeof(double) * (size_t)(jobs + 1));
  hetc_status_t *errors = malloc(sizeof(hetc_status_t) * (size_t)(jobs + 1));
  hetc_status_t status = !seconds || !errors ? hetc_status_new(HETC_STATUS_OUT_OF_MEMORY, "placement") : NULL;
  if (!status && c->r->progress && jobs > 0)
    fprintf(stderr, "placement: timing %d kernels, %d rounds\n", jobs, TIMED_ROUNDS + 1);
  if (!status) status = hetc_kernel_rounds_time(c->rounds, TIMED_ROUNDS, seconds, errors);
  for (int32_t j = 0; !status && j < jobs; ++j) {
    timed_kernel_t *q = &c->queued[j];
    if (errors[j]) {
      (void)usable(errors[j], c->r->targets[q->device]);
      q->seconds = -1;
      continue;
    }
    q->seconds = seconds[j];
    if (c->r->times) {
      /* The cache gets a copy of the key; the kernel's own goes with it to
       * the compile's shelf. */
      timed_kernel_t kept = *q;
      kept.key = malloc(q->key_bytes);
      if (kept.key) {
        memcpy(kept.key, q->key, q->key_bytes);
        times_add(c->r->times, kept);
      }
    }
  }
  for (int32_t k = 0; !status && k < g->num_nodes; ++k) {
    hetc_place_node_t *pn = &c->nodes[k];
    hetc_place_option_t *options = option_slots(c, k);
    int32_t kept = 0;
    for (int32_t o = 0; o < pn->num_options; ++o) {
      const int32_t job = c->option_job[slot_index(c, &options[o])];
      if (job >= 0) options[o].seconds = seconds[job];
      if (options[o].seconds >= 0 && view_costs_nothing(c, k, &options[o])) options[o].seconds = 0;
      hetc_kernel_candidate_t *candidate = &c->candidates[slot_index(c, &options[o])];
      if (options[o].seconds < 0) {
        free(candidate->config_json);
        candidate->config_json = NULL;
        continue;
      }
      c->candidates[slot_index(c, &options[kept])] = *candidate;
      options[kept++] = options[o];
    }
    /* The slots past the kept options hold nothing of their own now. */
    for (int32_t o = kept; o < pn->num_options; ++o)
      memset(&c->candidates[slot_index(c, &options[o])], 0, sizeof(hetc_kernel_candidate_t));
    pn->num_options = kept;
    if (kept == 0)
      status = hetc_status_new(HETC_STATUS_UNSUPPORTED, "node '%s' (%s): no target among the %d given supports it",
                               g->nodes[k].name, hetc_op_name(g->nodes[k].op), c->r->num_devices);
    if (!status && c->r->progress) {
      fprintf(stderr, "[%3d/%3d] %-18s %-28s", k + 1, g->num_nodes, hetc_op_name(g->nodes[k].op), g->nodes[k].name);
      for (int32_t d = 0; d < c->r->num_devices; ++d) {
        const int32_t best = fastest_on(pn, d, NULL);
        if (best >= 0) fprintf(stderr, " %s %.3f ms", c->r->targets[d], pn->options[best].seconds * 1e3);
      }
      fprintf(stderr, "\n");
    }
  }
  for (int32_t d = 0; !status && d < c->r->num_devices; ++d) {
    const int32_t job = c->transform_job[d];
    if (job < 0) continue;
    c->transform_per_byte[d] = seconds[job] > 0 ? seconds[job] / tensor_bytes(&transform_probe) : 0;
  }
  free(seconds);
  free(errors);
  return status;
}

/* The solver's states hold a bit per (device, layout) (placement.h): when
 * the candidates use more layouts than that allows, the least useful go,
 * with the options that read or write them. Kept first: row-major and the
 * layouts of each node's own default (a tunable node's template defaults,
 * a knobless op's unhinted kernel), so every node keeps an option, then
 * those of the fastest option of most nodes. Ids are renumbered densely. */
static hetc_status_t prune_layouts(costing_t *c) {
  const int32_t limit = hetc_place_layout_limit(c->r->num_devices);
  const hetc_graph_t *g = c->r->graph;
  if (c->num_layouts <= limit) return NULL;
  int32_t score[COSTING_LAYOUTS] = {0};
  const int32_t must = 1 << 20; /* outranks any count of nodes */
  score[HETC_PLACE_ROW_MAJOR] = 2 * must;
  for (int32_t k = 0; k < g->num_nodes; ++k) {
    const hetc_place_node_t *pn = &c->nodes[k];
    int32_t best = 0;
    const int tunable = hetc_op_is_tunable(g->nodes[k].op);
    for (int32_t o = 0; o < pn->num_options; ++o) {
      const hetc_kernel_candidate_t *candidate = &c->candidates[slot_index(c, &pn->options[o])];
      /* A device's first option of a knobless op is the plugin's own
       * choice for it (cost_node_on); the others follow producers. */
      const int first_on_device = o == 0 || pn->options[o - 1].device != pn->options[o].device;
      if (tunable ? candidate->template_index == 0 && !candidate->config_json : first_on_device) {
        score[pn->options[o].in_layout] |= must;
        score[pn->options[o].out_layout] |= must;
      }
      if (pn->options[o].seconds < pn->options[best].seconds) best = o;
    }
    if (pn->num_options > 0) {
      ++score[pn->options[best].in_layout];
      ++score[pn->options[best].out_layout];
    }
  }
  int32_t order[COSTING_LAYOUTS], renumber[COSTING_LAYOUTS];
  for (int32_t l = 0; l < c->num_layouts; ++l) order[l] = l;
  for (int32_t i = 1; i < c->num_layouts; ++i) /* by score, descending; ties keep the first seen */
    for (int32_t j = i; j > 0 && score[order[j]] > score[order[j - 1]]; --j) {
      const int32_t t = order[j];
      order[j] = order[j - 1];
      order[j - 1] = t;
    }
  for (int32_t l = 0; l < c->num_layouts; ++l) renumber[l] = -1;
  hetc_plugin_layout_t kept_layouts[COSTING_LAYOUTS];
  /* Row-major stays id 0. */
  for (int32_t i = 0; i < limit; ++i) renumber[order[i]] = order[i] == HETC_PLACE_ROW_MAJOR ? 0 : -2;
  int32_t next = 1;
  for (int32_t l = 0; l < c->num_layouts; ++l)
    if (renumber[l] == -2) renumber[l] = next++;
  for (int32_t l = 0; l < c->num_layouts; ++l)
    if (renumber[l] >= 0) kept_layouts[renumber[l]] = c->layouts[l];
  hetc_status_t status = NULL;
  for (int32_t k = 0; k < g->num_nodes; ++k) {
    hetc_place_node_t *pn = &c->nodes[k];
    hetc_place_option_t *options = option_slots(c, k);
    int32_t kept = 0;
    const int32_t had = pn->num_options;
    for (int32_t o = 0; o < pn->num_options; ++o) {
      hetc_kernel_candidate_t *candidate = &c->candidates[slot_index(c, &options[o])];
      if (renumber[options[o].in_layout] < 0 || renumber[options[o].out_layout] < 0) {
        free(candidate->config_json);
        candidate->config_json = NULL;
        continue;
      }
      options[o].in_layout = renumber[options[o].in_layout];
      options[o].out_layout = renumber[options[o].out_layout];
      c->candidates[slot_index(c, &options[kept])] = *candidate;
      options[kept++] = options[o];
    }
    for (int32_t o = kept; o < pn->num_options; ++o)
      memset(&c->candidates[slot_index(c, &options[o])], 0, sizeof(hetc_kernel_candidate_t));
    pn->num_options = kept;
    if (had > 0 && kept == 0 && !status)
      status = hetc_status_new(HETC_STATUS_INTERNAL,
                               "placement: node '%s' (%s) lost every option when %d of the candidates' %d layouts "
                               "were kept",
                               g->nodes[k].name, hetc_op_name(g->nodes[k].op), limit, c->num_layouts);
  }
  memcpy(c->layouts, kept_layouts, sizeof(hetc_plugin_layout_t) * (size_t)limit);
  c->num_layouts = limit;
  return status;
}

/* ------------------------------------------------------------------------ */
/* Splitting conv2d across two devices                                      */
/* ------------------------------------------------------------------------ */

/* Two CPU devices of one host run on the same cores: halves of a layer on
 * them take as long at once as one after the other. */
static int share_cores(const costing_t *c, int32_t a, int32_t b) {
  const hetc_plugin_device_t *da = hetc_entry_device(c->r->entries[a], c->r->device_indices[a]);
  const hetc_plugin_device_t *db = hetc_entry_device(c->r->entries[b], c->r->device_indices[b]);
  return !da || !db || (da->kind == HETC_PLUGIN_DEVICE_CPU && db->kind == HETC_PLUGIN_DEVICE_CPU);
}

/* For each conv2d that can be split: its placed device A, the other
 * device B fastest on it, and shares in proportion to their speeds, so
 * that both halves take about tA * tB / (tA + tB). AUTO proposes it when
 * A and B do not share cores and that, plus copying the input to B, the
 * half back and concatenating, saves a tenth of tA or more. */
static hetc_status_t propose_splits(const costing_t *c, const hetc_place_problem_t *problem,
                                    const hetc_place_costs_t *costs, const int32_t *choice, hetc_placement_t *out) {
  const hetc_graph_t *g = c->r->graph;
  if (c->r->split == HETC_SPLIT_NEVER || c->r->pinned_device || c->r->num_devices < 2) return NULL;
  for (int32_t k = 0; k < g->num_nodes; ++k) {
    if (!hetc_graph_can_split_conv2d(g, k)) continue;
    const hetc_place_node_t *pn = &problem->nodes[k];
    const hetc_place_option_t *placed = &pn->options[choice[k]];
    const hetc_place_option_t *other = NULL;
    for (int32_t o = 0; o < pn->num_options; ++o)
      if (pn->options[o].device != placed->device && (!other || pn->options[o].seconds < other->seconds))
        other = &pn->options[o];
    if (!other) continue;
    const double ta = placed->seconds, tb = other->seconds;
    const int64_t channels = g->nodes[k].attrs.channels, step = hetc_split_channel_step(channels);
    int64_t first = (int64_t)((double)channels * tb / (ta + tb) / (double)step + 0.5) * step;
    if (first < step) first = step;
    if (first > channels - step) first = channels - step;
    if (c->r->split == HETC_SPLIT_AUTO) {
      if (share_cores(c, placed->device, other->device)) continue;
      const double share = (double)(channels - first) / (double)channels;
      const double input_bytes = pn->inputs[0] >= 0 ? problem->nodes[pn->inputs[0]].output_bytes
                                                    : problem->model_input_bytes[-1 - pn->inputs[0]];
      double halves = ta * (1 - share) > tb * share ? ta * (1 - share) : tb * share;
      double moves = costs->copy_seconds(c, placed->device, other->device, input_bytes) +
                     costs->copy_seconds(c, other->device, placed->device, pn->output_bytes * share) +
                     pn->output_bytes * c->transform_per_byte[placed->device]; /* the concat, about a copy */
      if (ta - halves - moves < 0.1 * ta) continue;
    }
    hetc_place_split_t *splits = realloc(out->splits, sizeof(hetc_place_split_t) * (size_t)(out->num_splits + 1));
    if (!splits) return hetc_status_new(HETC_STATUS_OUT_OF_MEMORY, "placement");
    out->splits = splits;
    out->splits[out->num_splits++] = (hetc_place_split_t){k, placed->device, other->device, first};
  }
  return NULL;
}

/* Seconds saved by split halves running at once: for each pair on devices
 * that do not share cores, the shorter half. */
static double concurrent_seconds(const costing_t *c, const hetc_place_problem_t *problem, const int32_t *choice) {
  double saved = 0;
  for (int32_t k = 0; c->r->split_partner && k < problem->num_nodes; ++k) {
    const int32_t partner = c->r->split_partner[k];
    if (partner <= k) continue;
    const hetc_place_option_t *a = &problem->nodes[k].options[choice[k]];
    const hetc_place_option_t *b = &problem->nodes[partner].options[choice[partner]];
    if (a->device != b->device && !share_cores(c, a->device, b->device))
      saved += a->seconds < b->seconds ? a->seconds : b->seconds;
  }
  return saved;
}

/* ------------------------------------------------------------------------ */
/* Explaining                                                               */
/* ------------------------------------------------------------------------ */

static void layout_text(const costing_t *c, int32_t id, char *out, size_t size) {
  hetc_plugin_tensor_t t = {HETC_PLUGIN_DTYPE_FLOAT32, 4, {1, 1, 1, 1}, c->layouts[id]};
  hetc_layout_name(&t, out, size);
}

static void explain(const costing_t *c, const hetc_place_problem_t *problem, const hetc_place_costs_t *costs,
                    const hetc_place_solution_t *solution, double concurrent) {
  FILE *out = c->r->explain;
  const hetc_graph_t *g = c->r->graph;
  fprintf(out, "placement of %s on", g->name);
  for (int32_t d = 0; d < c->r->num_devices; ++d) fprintf(out, " %s", c->r->targets[d]);
  fprintf(out, c->r->weigh_candidates ? " (every candidate kernel timed in model order, the plan chosen among them):\n"
                                      : " (kernel times measured with the configs the records choose):\n");
  fprintf(out, "  %4s  %-18s %-28s %-8s %-16s %10s  %-9s  %s\n", "node", "op", "name", "device", "layouts", "ms",
          "config", "fastest on each device (ms, of n options)");
  for (int32_t k = 0; k < g->num_nodes; ++k) {
    const hetc_place_node_t *pn = &problem->nodes[k];
    const hetc_place_option_t *o = &pn->options[solution->choice[k]];
    const hetc_kernel_candidate_t *chosen = &c->candidates[slot_index(c, o)];
    const hetc_node_t *node = &g->nodes[k];
    const int tunable = hetc_op_is_tunable(node->op);
    char in[32], outl[32], layouts[80], others[512] = "";
    layout_text(c, o->in_layout, in, sizeof(in));
    layout_text(c, o->out_layout, outl, sizeof(outl));
    snprintf(layouts, sizeof(layouts), "%s->%s", in, outl);
    size_t used = 0;
    for (int32_t d = 0; d < c->r->num_devices && used < sizeof(others); ++d) {
      int32_t count = 0;
      const int32_t best = fastest_on(pn, d, &count);
      if (best >= 0)
        used += (size_t)snprintf(others + used, sizeof(others) - used, "%s%s %.3f (%d)", used ? ", " : "",
                                 c->r->targets[d], pn->options[best].seconds * 1e3, count);
    }
    fprintf(out, "  %4d  %-18s %-28s %-8s %-16s %10.3f  %-9s  %s\n", k + 1, hetc_op_name(node->op), node->name,
            c->r->targets[o->device], layouts, o->seconds * 1e3,
            tunable ? hetc_config_source_name(chosen->source) : "-", others);
  }
  /* Moves: per value, its deliveries' cost (copies and transforms). */
  double moved = 0;
  for (int32_t v = 0; v < problem->num_model_inputs + problem->num_nodes; ++v) {
    int32_t devices = 0;
    double seconds = hetc_place_value_seconds(problem, costs, solution->choice, v, &devices);
    if (seconds <= 0) continue;
    moved += seconds;
    const int32_t node = v - problem->num_model_inputs;
    const int32_t value = node < 0 ? g->inputs[v] : g->nodes[node].output;
    const char *from = node < 0 ? "host" : c->r->targets[problem->nodes[node].options[solution->choice[node]].device];
    fprintf(out, "  move %-28s %8.3f MB from %s", g->values[value].name,
            tensor_bytes(&g->values[value].type) / 1e6, from);
    if (!devices) fprintf(out, " (layout transforms only)");
    for (int32_t d = 0; d <= c->r->num_devices; ++d)
      if (devices >> d & 1) fprintf(out, " to %s", d == c->r->num_devices ? "host" : c->r->targets[d]);
    fprintf(out, ": %.3f ms\n", seconds * 1e3);
  }
  /* Switches: between consecutive nodes on different devices. */
  double switched = 0;
  int32_t switches = 0;
  for (int32_t k = 1; k < g->num_nodes; ++k) {
    const int32_t from = problem->nodes[k - 1].options[solution->choice[k - 1]].device;
    const int32_t to = problem->nodes[k].options[solution->choice[k]].device;
    if (from != to) switched += costs->switch_seconds(costs->context, from, to), ++switches;
  }
  if (switches > 0) {
    fprintf(out, "  %d device switches: %.3f ms (per switch:", switches, switched * 1e3);
    for (int32_t a = 0; a < c->r->num_devices; ++a)
      for (int32_t b = 0; b < c->r->num_devices; ++b)
        if (a != b) fprintf(out, " %s->%s %.3f", c->r->targets[a], c->r->targets[b], switch_cost(c, a, b) * 1e3);
    fprintf(out, " ms)\n");
  }
  if (concurrent > 0)
    fprintf(out, "  split halves run at once on devices with their own cores: %.3f ms less\n", concurrent * 1e3);
  fprintf(out, "expected latency: %.3f ms (kernels %.3f ms, copies and layout transforms %.3f ms, switches %.3f ms); "
          "%s plan, at most %lld states a step\n",
          (solution->total_seconds - concurrent) * 1e3, solution->compute_seconds * 1e3, moved * 1e3, switched * 1e3,
          c->r->split_partner    ? (solution->exact ? "an optimal (split halves pinned)" : "a good (state-capped)")
          : c->r->pinned_device  ? "a pinned"
          : solution->exact      ? "an optimal"
                                 : "a good (state-capped)",
          (long long)solution->states);
}

/* The expected latency of the best plan whose tunable kernels all keep
 * their first template's default config (what compile builds without
 * records), under the same costs: the yardstick of graph-level selection.
 * 0 when no node had anything else to choose, or out of memory. */
static double default_plan_seconds(costing_t *c, const hetc_place_problem_t *problem,
                                   const hetc_place_costs_t *costs) {
  const hetc_graph_t *g = c->r->graph;
  hetc_place_node_t *nodes = calloc((size_t)problem->num_nodes + 1, sizeof(hetc_place_node_t));
  hetc_place_option_t *options =
      calloc((size_t)(problem->num_nodes * c->r->num_devices * OPTIONS_PER_DEVICE) + 1, sizeof(hetc_place_option_t));
  double seconds = 0;
  int other = 0, complete = nodes && options;
  for (int32_t k = 0; complete && k < problem->num_nodes; ++k) {
    nodes[k] = problem->nodes[k];
    nodes[k].options = &options[(size_t)k * (size_t)c->r->num_devices * OPTIONS_PER_DEVICE];
    nodes[k].num_options = 0;
    const int tunable = hetc_op_is_tunable(g->nodes[k].op);
    for (int32_t o = 0; o < problem->nodes[k].num_options; ++o) {
      const hetc_kernel_candidate_t *candidate = &c->candidates[slot_index(c, &problem->nodes[k].options[o])];
      if (tunable && (candidate->template_index != 0 || candidate->config_json)) {
        other = 1;
        continue;
      }
      options[(size_t)k * (size_t)c->r->num_devices * OPTIONS_PER_DEVICE + (size_t)nodes[k].num_options++] =
          problem->nodes[k].options[o];
    }
    complete = nodes[k].num_options > 0; /* else a default did not build */
  }
  if (complete && other) {
    hetc_place_problem_t defaults = *problem;
    defaults.nodes = nodes;
    hetc_place_solution_t solution;
    hetc_status_t status = hetc_place_solve(&defaults, costs, PLACEMENT_MAX_ENTRIES, &solution);
    if (!status) seconds = solution.total_seconds;
    hetc_status_free(status);
    hetc_place_solution_free(&solution);
  }
  free(nodes);
  free(options);
  return seconds;
}

/* ------------------------------------------------------------------------ */
/* The problem as data                                                      */
/* ------------------------------------------------------------------------ */

/* With HETC_PLACEMENT_PROBLEM=path, the solved problem and its plan are
 * written there as JSON (README.md, "Placement"): every node's options
 * (device, layout ids, seconds, and for tunable ops the template and
 * config), the cost model's parameters and the chosen options, so that the
 * plan can be checked or explored outside hetc (tests/e2e/test_selection
 * solves it again by brute force). A file that cannot be written is a
 * warning. */
static void write_problem(const costing_t *c, const hetc_place_problem_t *problem,
                          const hetc_place_solution_t *solution, double predicted) {
  const char *path = getenv("HETC_PLACEMENT_PROBLEM");
  if (!path || !*path) return;
  FILE *f = fopen(path, "w");
  if (!f) {
    fprintf(stderr, "hetc: warning: HETC_PLACEMENT_PROBLEM: cannot write %s\n", path);
    return;
  }
  const int32_t D = c->r->num_devices;
  fprintf(f, "{\n \"devices\": %d, \"layouts\": %d, \"predicted_seconds\": %.17g,\n", D, c->num_layouts,
          predicted);
  fprintf(f, " \"targets\": [");
  for (int32_t d = 0; d < D; ++d) fprintf(f, "%s\"%s\"", d ? ", " : "", c->r->targets[d]);
  fprintf(f, "],\n \"transform_seconds_per_byte\": [");
  for (int32_t d = 0; d < D; ++d) fprintf(f, "%s%.17g", d ? ", " : "", c->transform_per_byte[d]);
  fprintf(f, "],\n \"to_device\": [");
  for (int32_t d = 0; d < D; ++d)
    fprintf(f, "%s[%.17g, %.17g]", d ? ", " : "", c->to_device[d].latency_seconds, c->to_device[d].seconds_per_byte);
  fprintf(f, "],\n \"to_host\": [");
  for (int32_t d = 0; d < D; ++d)
    fprintf(f, "%s[%.17g, %.17g]", d ? ", " : "", c->to_host[d].latency_seconds, c->to_host[d].seconds_per_byte);
  fprintf(f, "],\n \"switch_seconds\": [");
  for (int32_t i = 0; i < D * D; ++i) fprintf(f, "%s%.17g", i ? ", " : "", c->switch_seconds[i]);
  fprintf(f, "],\n \"model_input_bytes\": [");
  for (int32_t m = 0; m < problem->num_model_inputs; ++m)
    fprintf(f, "%s%.17g", m ? ", " : "", problem->model_input_bytes[m]);
  fprintf(f, "],\n \"nodes\": [\n");
  for (int32_t k = 0; k < problem->num_nodes; ++k) {
    const hetc_place_node_t *pn = &problem->nodes[k];
    fprintf(f, "  {\"name\": \"%s\", \"inputs\": [", c->r->graph->nodes[k].name);
    for (int32_t i = 0; i < pn->num_inputs; ++i) fprintf(f, "%s%d", i ? ", " : "", pn->inputs[i]);
    fprintf(f, "], \"output_bytes\": %.17g, \"is_model_output\": %d, \"chosen\": %d, \"options\": [\n",
            pn->output_bytes, pn->is_model_output, solution->choice[k]);
    for (int32_t o = 0; o < pn->num_options; ++o) {
      const hetc_place_option_t *opt = &pn->options[o];
      const hetc_kernel_candidate_t *candidate = &c->candidates[slot_index(c, opt)];
      fprintf(f, "   {\"device\": %d, \"in\": %d, \"out\": %d, \"seconds\": %.17g, \"template\": %d, "
                 "\"source\": \"%s\", \"config\": %s}%s\n",
              opt->device, opt->in_layout, opt->out_layout, opt->seconds, candidate->template_index,
              hetc_config_source_name(candidate->source), candidate->config_json ? candidate->config_json : "null",
              o + 1 < pn->num_options ? "," : "");
    }
    fprintf(f, "  ]}%s\n", k + 1 < problem->num_nodes ? "," : "");
  }
  fprintf(f, " ]\n}\n");
  if (fclose(f) != 0) fprintf(stderr, "hetc: warning: HETC_PLACEMENT_PROBLEM: cannot write %s\n", path);
}

/* ------------------------------------------------------------------------ */

static hetc_status_t describe_graph(costing_t *c) {
  const hetc_graph_t *g = c->r->graph;
  for (int32_t k = 0; k < g->num_nodes; ++k) {
    const hetc_node_t *node = &g->nodes[k];
    hetc_place_node_t *pn = &c->nodes[k];
    pn->inputs = &c->inputs[k * HETC_MAX_NODE_INPUTS];
    pn->options = &c->options[k * c->r->num_devices * OPTIONS_PER_DEVICE];
    pn->output_bytes = tensor_bytes(&g->values[node->output].type);
    for (int32_t o = 0; o < g->num_outputs; ++o) pn->is_model_output |= g->outputs[o] == node->output;
    int32_t *inputs = &c->inputs[k * HETC_MAX_NODE_INPUTS];
    for (int32_t i = 0; i < node->num_inputs; ++i) {
      const hetc_value_t *value = &g->values[node->inputs[i]];
      if (value->producer >= 0) {
        inputs[i] = value->producer;
      } else {
        int32_t m = 0;
        while (m < g->num_inputs && g->inputs[m] != node->inputs[i]) ++m;
        if (m == g->num_inputs) return hetc_status_new(HETC_STATUS_INTERNAL, "placement: an input of no node");
        inputs[i] = -1 - m;
      }
    }
    pn->num_inputs = node->num_inputs;
  }
  for (int32_t m = 0; m < g->num_inputs; ++m) c->model_input_bytes[m] = tensor_bytes(&g->values[g->inputs[m]].type);
  return NULL;
}

hetc_status_t hetc_placement_choose(const hetc_placement_request_t *r, hetc_placement_t *out) {
  memset(out, 0, sizeof(*out));
  if (r->num_devices > HETC_PLACE_MAX_DEVICES)
    return hetc_status_new(HETC_STATUS_UNSUPPORTED, "placement: %d targets (at most %d)", r->num_devices,
                           HETC_PLACE_MAX_DEVICES);
  const hetc_graph_t *g = r->graph;
  costing_t c;
  memset(&c, 0, sizeof(c));
  c.r = r;
  c.num_layouts = 1; /* id 0: row-major */
  c.nodes = calloc((size_t)g->num_nodes + 1, sizeof(hetc_place_node_t));
  c.options = calloc((size_t)(g->num_nodes * r->num_devices * OPTIONS_PER_DEVICE) + 1, sizeof(hetc_place_option_t));
  c.candidates =
      calloc((size_t)(g->num_nodes * r->num_devices * OPTIONS_PER_DEVICE) + 1, sizeof(hetc_kernel_candidate_t));
  c.inputs = calloc((size_t)(g->num_nodes * HETC_MAX_NODE_INPUTS) + 1, sizeof(int32_t));
  c.model_input_bytes = calloc((size_t)g->num_inputs + 1, sizeof(double));
  const int32_t slots = g->num_nodes * r->num_devices * OPTIONS_PER_DEVICE;
  c.option_job = malloc(sizeof(int32_t) * (size_t)(slots + 1));
  c.node_candidates = calloc((size_t)(g->num_nodes * r->num_devices) + 1, sizeof(node_candidates_t));
  hetc_status_t status = hetc_kernel_rounds_create(&c.rounds);
  if (!status && (!c.nodes || !c.options || !c.candidates || !c.inputs || !c.model_input_bytes || !c.option_job ||
                  !c.node_candidates))
    status = hetc_status_new(HETC_STATUS_OUT_OF_MEMORY, "placement");
  for (int32_t i = 0; !status && i < slots; ++i) c.option_job[i] = -1;
  if (!status) status = describe_graph(&c);
  if (!status) status = queue_kernels(&c);
  if (!status) status = time_kernels(&c);
  if (!status) status = prune_layouts(&c);
  /* The kernels that ran go on the compile's shelf, for the package; the
   * rest, and every buffer, go before the solve: they may be large. */
  for (int32_t j = 0; !status && r->shelf && j < hetc_kernel_rounds_count(c.rounds); ++j) {
    timed_kernel_t *q = &c.queued[j];
    if (q->seconds < 0) continue;
    hetc_plugin_artifact_t *artifact = hetc_kernel_rounds_take_artifact(c.rounds, j);
    hetc_status_t kept = hetc_kernel_shelf_put(r->shelf, q->device, r->entries[q->device], q->key, q->key_bytes, artifact);
    if (kept) { /* only costs building it again */
      hetc_entry_artifact_release(r->entries[q->device], artifact);
      hetc_status_free(kept);
    } else {
      q->key = NULL; /* the shelf's */
    }
  }
  for (int32_t j = 0; c.rounds && c.queued && j < hetc_kernel_rounds_count(c.rounds); ++j) free(c.queued[j].key);
  free(c.queued);
  hetc_kernel_rounds_free(c.rounds);
  /* Transfers: from the records when measured before, else now, and kept
   * where the store can be written. No store (none named and no per-user
   * one), or one that cannot be opened, only means measuring every time;
   * a store is never created here. */
  hetc_records_t *store = NULL;
  char *transfers_path = status ? NULL : r->records_path ? strdup(r->records_path) : hetc_records_default_path();
  if (transfers_path && (r->records_path || hetc_records_may_exist(transfers_path))) {
    hetc_status_t opened = hetc_records_open_as(transfers_path, HETC_RECORDS_CACHE, &store);
    if (opened) {
      fprintf(stderr, "hetc: warning: transfer costs are measured, not kept: %s\n", hetc_status_message(opened));
      hetc_status_free(opened);
    }
  }
  free(transfers_path);
  for (int32_t d = 0; !status && d < r->num_devices; ++d)
    status = hetc_transfer_costs(store, r->entries[d], r->device_indices[d], &c.to_device[d], &c.to_host[d], NULL);
  hetc_records_close(store);
  if (!status) status = find_switch_costs(&c);
  hetc_place_solution_t solution;
  memset(&solution, 0, sizeof(solution));
  const hetc_place_problem_t problem = {g->num_nodes, c.nodes, g->num_inputs, c.model_input_bytes, c.num_layouts};
  const hetc_place_costs_t costs = {.num_devices = r->num_devices, .copy_seconds = copy_cost,
                                    .transform_seconds = transform_cost, .context = &c,
                                    .switch_seconds = switch_cost};
  if (!status) status = hetc_place_solve(&problem, &costs, PLACEMENT_MAX_ENTRIES, &solution);
  const double concurrent = status ? 0 : concurrent_seconds(&c, &problem, solution.choice);
  if (!status) out->default_seconds = default_plan_seconds(&c, &problem, &costs);
  if (!status) {
    if (r->explain) explain(&c, &problem, &costs, &solution, concurrent);
    if (r->explain && out->default_seconds > 0)
      fprintf(r->explain, "with every tunable kernel at its first template's default config: %.3f ms\n",
              out->default_seconds * 1e3);
    write_problem(&c, &problem, &solution, solution.total_seconds - concurrent);
    out->device = malloc(sizeof(int32_t) * (size_t)(g->num_nodes + 1));
    if (!out->device) status = hetc_status_new(HETC_STATUS_OUT_OF_MEMORY, "placement");
  }
  if (!status) status = propose_splits(&c, &problem, &costs, solution.choice, out);
  if (!status) {
    out->candidate = calloc((size_t)g->num_nodes + 1, sizeof(hetc_kernel_candidate_t));
    out->input_layout = calloc((size_t)g->num_nodes + 1, sizeof(hetc_plugin_layout_t));
    if (!out->candidate || !out->input_layout) status = hetc_status_new(HETC_STATUS_OUT_OF_MEMORY, "placement");
    else out->num_nodes = g->num_nodes;
  }
  if (!status) {
    for (int32_t k = 0; k < g->num_nodes; ++k) {
      const hetc_place_option_t *chosen = &c.nodes[k].options[solution.choice[k]];
      hetc_kernel_candidate_t *candidate = &c.candidates[slot_index(&c, chosen)];
      out->device[k] = chosen->device;
      out->input_layout[k] = c.layouts[chosen->in_layout];
      out->candidate[k] = *candidate; /* the placement's now */
      candidate->config_json = NULL;
    }
    out->predicted_seconds = solution.total_seconds - concurrent;
    out->kernel_seconds = solution.compute_seconds;
    out->exact = solution.exact;
  }
  hetc_place_solution_free(&solution);
  for (int32_t k = 0; c.nodes && c.candidates && k < g->num_nodes; ++k)
    for (int32_t o = 0; o < c.nodes[k].num_options; ++o) free(c.candidates[slot_index(&c, &c.nodes[k].options[o])].config_json);
  free(c.candidates);
  for (int32_t i = 0; c.node_candidates && i < g->num_nodes * r->num_devices; ++i)
    hetc_kernel_candidates_free(c.node_candidates[i].items, c.node_candidates[i].count);
  free(c.node_candidates);
  free(c.nodes);
  free(c.options);
  free(c.option_job);
  free(c.inputs);
  free(c.model_input_bytes);
  return status;
}

void hetc_placement_release(hetc_placement_t *placement) {
  for (int32_t k = 0; placement->candidate && k < placement->num_nodes; ++k) free(placement->candidate[k].config_json);
  free(placement->candidate);
  free(placement->input_layout);
  free(placement->device);
  free(placement->splits);
  memset(placement, 0, sizeof(*placement));
}
