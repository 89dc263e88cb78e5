#include "place/placement.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* A (device, layout) pair a value's consumers need, as one bit: device x
 * layouts + layout, the host included (hetc_place_layout_limit). */
static uint64_t pair_bit(int32_t layouts, int32_t device, int32_t layout) {
  return UINT64_C(1) << (device * layouts + layout);
}

/* The bits of one device's layouts in a needs set. */
static uint64_t device_needs(int32_t layouts, uint64_t needs, int32_t device) {
  return (needs >> (device * layouts)) & ((UINT64_C(1) << layouts) - 1);
}

int32_t hetc_place_layout_limit(int32_t num_devices) { return 64 / (num_devices + 1); }

static int32_t layouts_of(const hetc_place_problem_t *p) {
  return p->num_layouts > 0 ? p->num_layouts : HETC_PLACE_MAX_LAYOUTS;
}

/* Where a value starts: a node's option, or the host for a model input. */
typedef struct source_t {
  int32_t device, layout;
  double bytes;
} source_t;

/* Seconds to deliver a value from its source to every (device, layout) in
 * `needs` (see placement.h for the rules), with `layouts` layout ids. */
static double deliver(const hetc_place_costs_t *c, int32_t layouts, source_t s, uint64_t needs) {
  const int32_t devices = c->num_devices + 1;
  int remote = 0;
  double seconds = 0;
  for (int32_t d = 0; d < devices; ++d) {
    const uint64_t of_device = device_needs(layouts, needs, d);
    if (!of_device || d == s.device) continue;
    remote = 1;
    seconds += c->copy_seconds(c->context, s.device, d, s.bytes);
    for (int32_t l = 1; l < layouts; ++l)
      if (of_device >> l & 1) seconds += c->transform_seconds(c->context, d, HETC_PLACE_ROW_MAJOR, l, s.bytes);
  }
  /* Copies leave in row-major: one transform on the source when it holds
   * another layout, which local consumers needing row-major share. */
  const int source_rm = remote && s.layout != HETC_PLACE_ROW_MAJOR;
  if (source_rm) seconds += c->transform_seconds(c->context, s.device, s.layout, HETC_PLACE_ROW_MAJOR, s.bytes);
  const uint64_t local = device_needs(layouts, needs, s.device);
  for (int32_t l = 0; l < layouts; ++l) {
    if (!(local >> l & 1) || l == s.layout || (l == HETC_PLACE_ROW_MAJOR && source_rm)) continue;
    seconds += c->transform_seconds(c->context, s.device, s.layout, l, s.bytes);
  }
  return seconds;
}

/* From the host (before the first node) or to the same device: nothing. */
static double switch_cost(const hetc_place_costs_t *c, int32_t from, int32_t to) {
  return c->switch_seconds && from != to && from < c->num_devices ? c->switch_seconds(c->context, from, to) : 0;
}

/* Values are numbered model inputs first, then one per node. */
typedef struct values_t {
  int32_t count, num_model_inputs;
  int32_t *last_use; /* per value: the last consumer's position, -1 if none */
} values_t;

static int32_t value_of_input(const values_t *v, int32_t input) {
  return input < 0 ? -1 - input : v->num_model_inputs + input;
}

static source_t source_of(const hetc_place_problem_t *p, const hetc_place_costs_t *c, int32_t value,
                          int32_t option) {
  if (value < p->num_model_inputs)
    return (source_t){c->num_devices, HETC_PLACE_ROW_MAJOR, p->model_input_bytes[value]};
  const hetc_place_node_t *node = &p->nodes[value - p->num_model_inputs];
  const hetc_place_option_t *o = &node->options[option];
  return (source_t){o->device, o->out_layout, node->output_bytes};
}

static hetc_status_t check_problem(const hetc_place_problem_t *p, const hetc_place_costs_t *c) {
  if (c->num_devices < 1 || c->num_devices > HETC_PLACE_MAX_DEVICES)
    return hetc_status_new(HETC_STATUS_INVALID_ARGUMENT, "placement: %d devices (1 to %d)", c->num_devices,
                           HETC_PLACE_MAX_DEVICES);
  const int32_t layouts = layouts_of(p);
  if (layouts < 1 || layouts > hetc_place_layout_limit(c->num_devices))
    return hetc_status_new(HETC_STATUS_INVALID_ARGUMENT, "placement: %d layouts on %d devices (at most %d)", layouts,
                           c->num_devices, hetc_place_layout_limit(c->num_devices));
  for (int32_t n = 0; n < p->num_nodes; ++n) {
    const hetc_place_node_t *node = &p->nodes[n];
    if (node->num_options < 1)
      return hetc_status_new(HETC_STATUS_INVALID_ARGUMENT, "placement: node %d has no option", n);
    for (int32_t i = 0; i < node->num_inputs; ++i)
      if (node->inputs[i] >= n || node->inputs[i] < -p->num_model_inputs)
        return hetc_status_new(HETC_STATUS_INVALID_ARGUMENT, "placement: input %d of node %d is %d", i, n,
                               node->inputs[i]);
    for (int32_t o = 0; o < node->num_options; ++o) {
      const hetc_place_option_t *opt = &node->options[o];
      if (opt->device < 0 || opt->device >= c->num_devices || opt->in_layout < 0 ||
          opt->in_layout >= layouts || opt->out_layout < 0 || opt->out_layout >= layouts ||
          !(opt->seconds >= 0))
        return hetc_status_new(HETC_STATUS_INVALID_ARGUMENT,
                               "placement: option %d of node %d (device %d, layouts %d -> %d, %g s) is out of range",
                               o, n, opt->device, opt->in_layout, opt->out_layout, opt->seconds);
    }
  }
  return NULL;
}

/* Every (device, layout) the consumers of each value need under `choice`:
 * needs has one entry per value (model inputs, then nodes). */
static void all_needs(const hetc_place_problem_t *p, const hetc_place_costs_t *c, const int32_t *choice,
                      uint64_t *needs) {
  memset(needs, 0, sizeof(uint64_t) * (size_t)(p->num_model_inputs + p->num_nodes));
  for (int32_t n = 0; n < p->num_nodes; ++n) {
    const hetc_place_node_t *node = &p->nodes[n];
    const hetc_place_option_t *o = &node->options[choice[n]];
    for (int32_t i = 0; i < node->num_inputs; ++i) {
      int32_t input = node->inputs[i];
      needs[input < 0 ? -1 - input : p->num_model_inputs + input] |= pair_bit(layouts_of(p), o->device, o->in_layout);
    }
    if (node->is_model_output)
      needs[p->num_model_inputs + n] |= pair_bit(layouts_of(p), c->num_devices, HETC_PLACE_ROW_MAJOR);
  }
}

static int32_t option_of(const hetc_place_problem_t *p, const int32_t *choice, int32_t value) {
  return value < p->num_model_inputs ? 0 : choice[value - p->num_model_inputs];
}

double hetc_place_value_seconds(const hetc_place_problem_t *p, const hetc_place_costs_t *c, const int32_t *choice,
                                int32_t value, int32_t *out_devices) {
  uint64_t *needs = malloc(sizeof(uint64_t) * (size_t)(p->num_model_inputs + p->num_nodes + 1));
  if (!needs) return INFINITY;
  all_needs(p, c, choice, needs);
  const source_t source = source_of(p, c, value, option_of(p, choice, value));
  if (out_devices) {
    *out_devices = 0;
    for (int32_t d = 0; d <= c->num_devices; ++d)
      if (d != source.device && device_needs(layouts_of(p), needs[value], d)) *out_devices |= 1 << d;
  }
  double seconds = needs[value] ? deliver(c, layouts_of(p), source, needs[value]) : 0;
  free(needs);
  return seconds;
}

double hetc_place_evaluate(const hetc_place_problem_t *p, const hetc_place_costs_t *c, const int32_t *choice) {
  const int32_t count = p->num_model_inputs + p->num_nodes;
  uint64_t *needs = malloc(sizeof(uint64_t) * (size_t)(count + 1));
  if (!needs) return INFINITY;
  all_needs(p, c, choice, needs);
  double seconds = 0;
  for (int32_t n = 0; n < p->num_nodes; ++n) {
    seconds += p->nodes[n].options[choice[n]].seconds;
    if (n > 0)
      seconds += switch_cost(c, p->nodes[n - 1].options[choice[n - 1]].device, p->nodes[n].options[choice[n]].device);
  }
  for (int32_t v = 0; v < count; ++v)
    if (needs[v]) seconds += deliver(c, layouts_of(p), source_of(p, c, v, option_of(p, choice, v)), needs[v]);
  free(needs);
  return seconds;
}

/* ------------------------------------------------------------------------ */
/* The DP                                                                   */
/* ------------------------------------------------------------------------ */

/* The states of one step. Every state's key holds, for each live value in
 * the step's live list, its producer's key option (option_keys) and the
 * needs so far, then one more entry: the device of the step's node (the
 * host before the first) as its option, needs 0. */
typedef struct layer_t {
  int64_t count, capacity;
  int32_t width;     /* live values; keys have width + 1 entries */
  int32_t *live;     /* width value ids, ascending */
  double *cost;      /* per state */
  int64_t *prev;     /* per state: the state of the previous layer */
  int32_t *chosen;   /* per state: the option of this step's node */
  uint64_t *hash;    /* per state: hash_key of its key */
  int32_t *option;   /* count x width */
  uint64_t *needs;   /* count x width */
  int64_t *table;    /* hash table of state indices, -1 empty */
  int64_t table_size;
} layer_t;

static void layer_free_keys(layer_t *l) {
  free(l->option);
  free(l->needs);
  free(l->table);
  free(l->live);
  free(l->hash);
  l->option = NULL;
  l->needs = NULL;
  l->table = NULL;
  l->live = NULL;
  l->hash = NULL;
}

static void layer_free(layer_t *l) {
  layer_free_keys(l);
  free(l->cost);
  free(l->prev);
  free(l->chosen);
}

static uint64_t hash_key(const int32_t *option, const uint64_t *needs, int32_t width) {
  uint64_t h = UINT64_C(1469598103934665603);
  for (int32_t i = 0; i < width; ++i) {
    h = (h ^ (uint64_t)(uint32_t)option[i]) * UINT64_C(1099511628211);
    h = (h ^ needs[i]) * UINT64_C(1099511628211);
  }
  return h;
}

static int grow(layer_t *l) {
  int64_t capacity = l->capacity ? l->capacity * 2 : 64;
  double *cost = realloc(l->cost, sizeof(double) * (size_t)capacity);
  if (cost) l->cost = cost;
  int64_t *prev = realloc(l->prev, sizeof(int64_t) * (size_t)capacity);
  if (prev) l->prev = prev;
  int32_t *chosen = realloc(l->chosen, sizeof(int32_t) * (size_t)capacity);
  if (chosen) l->chosen = chosen;
  size_t keys = (size_t)capacity * (size_t)(l->width + 1);
  int32_t *option = realloc(l->option, sizeof(int32_t) * keys);
  if (option) l->option = option;
  uint64_t *needs = realloc(l->needs, sizeof(uint64_t) * keys);
  if (needs) l->needs = needs;
  uint64_t *hash = realloc(l->hash, sizeof(uint64_t) * (size_t)capacity);
  if (hash) l->hash = hash;
  if (!cost || !prev || !chosen || !option || !needs || !hash) return 0;
  l->capacity = capacity;
  /* Rehash into a table twice the capacity. */
  free(l->table);
  l->table_size = capacity * 2;
  l->table = malloc(sizeof(int64_t) * (size_t)l->table_size);
  if (!l->table) return 0;
  memset(l->table, 0xff, sizeof(int64_t) * (size_t)l->table_size);
  for (int64_t s = 0; s < l->count; ++s) {
    int64_t at = (int64_t)(l->hash[s] & (uint64_t)(l->table_size - 1));
    while (l->table[at] >= 0) at = (at + 1) & (l->table_size - 1);
    l->table[at] = s;
  }
  return 1;
}

/* Adds a state, or lowers the cost of the equal one. 0 when out of memory. */
static int offer(layer_t *l, const int32_t *option, const uint64_t *needs, double cost, int64_t prev,
                 int32_t chosen) {
  if (l->count == l->capacity && !grow(l)) return 0;
  const int32_t kw = l->width + 1;
  const size_t key_bytes32 = sizeof(int32_t) * (size_t)kw, key_bytes64 = sizeof(uint64_t) * (size_t)kw;
  const uint64_t hash = hash_key(option, needs, kw);
  int64_t at = (int64_t)(hash & (uint64_t)(l->table_size - 1));
  for (; l->table[at] >= 0; at = (at + 1) & (l->table_size - 1)) {
    int64_t s = l->table[at];
    if (l->hash[s] == hash && !memcmp(l->option + s * kw, option, key_bytes32) &&
        !memcmp(l->needs + s * kw, needs, key_bytes64)) {
      if (cost < l->cost[s]) {
        l->cost[s] = cost;
        l->prev[s] = prev;
        l->chosen[s] = chosen;
      }
      return 1;
    }
  }
  int64_t s = l->count++;
  l->table[at] = s;
  l->hash[s] = hash;
  memcpy(l->option + s * kw, option, key_bytes32);
  memcpy(l->needs + s * kw, needs, key_bytes64);
  l->cost[s] = cost;
  l->prev[s] = prev;
  l->chosen[s] = chosen;
  return 1;
}

/* qsort_r's comparator: state indices by their cost (`costs`), so that two
 * placements may run at once. */
static int by_cost(const void *a, const void *b, void *costs) {
  const double *cost = costs;
  double x = cost[*(const int64_t *)a], y = cost[*(const int64_t *)b];
  return (x > y) - (x < y);
}

/* Keeps the `keep` cheapest states. 0 when out of memory. */
static int prune(layer_t *l, int64_t keep) {
  int64_t *order = malloc(sizeof(int64_t) * (size_t)l->count);
  if (!order) return 0;
  for (int64_t s = 0; s < l->count; ++s) order[s] = s;
  qsort_r(order, (size_t)l->count, sizeof(int64_t), by_cost, l->cost);
  /* Keep the chosen states in cost order, moved to the front. */
  layer_t kept = {0};
  kept.width = l->width;
  int ok = 1;
  for (int64_t k = 0; ok && k < keep; ++k) {
    int64_t s = order[k];
    ok = offer(&kept, l->option + s * (l->width + 1), l->needs + s * (l->width + 1), l->cost[s], l->prev[s],
               l->chosen[s]);
  }
  free(order);
  if (!ok) {
    layer_free(&kept);
    return 0;
  }
  kept.live = l->live;
  l->live = NULL;
  layer_free(l);
  *l = kept;
  return 1;
}

/* Per option of `node`, the option whose key its states take, or -1 for
 * none. Later costs see where an option leaves the output (device,
 * layout), not which kernel wrote it: options that leave it alike share
 * one key, the first's, so their states merge. Of options alike in device
 * and both layouts only the cheapest (the first among equals) can be in a
 * lowest plan; the others are not tried. */
static void option_keys(const hetc_place_node_t *node, int32_t *key_of) {
  for (int32_t o = 0; o < node->num_options; ++o) {
    const hetc_place_option_t *mine = &node->options[o];
    key_of[o] = o;
    for (int32_t e = 0; e < node->num_options && key_of[o] >= 0; ++e) {
      const hetc_place_option_t *other = &node->options[e];
      if (e == o || other->device != mine->device || other->out_layout != mine->out_layout) continue;
      if (other->in_layout == mine->in_layout &&
          (other->seconds < mine->seconds || (other->seconds == mine->seconds && e < o)))
        key_of[o] = -1;
      else if (e < key_of[o])
        key_of[o] = e;
    }
  }
}

hetc_status_t hetc_place_solve(const hetc_place_problem_t *p, const hetc_place_costs_t *c, int64_t max_entries,
                               hetc_place_solution_t *out) {
  memset(out, 0, sizeof(*out));
  HETC_RETURN_IF_ERROR(check_problem(p, c));
  const int32_t layouts = layouts_of(p);
  values_t values = {p->num_model_inputs + p->num_nodes, p->num_model_inputs, NULL};
  values.last_use = malloc(sizeof(int32_t) * (size_t)(values.count + 1));
  layer_t *layers = calloc((size_t)p->num_nodes + 1, sizeof(layer_t));
  uint64_t *scratch_needs = malloc(sizeof(uint64_t) * (size_t)(values.count + 1));
  int32_t *key_option = malloc(sizeof(int32_t) * (size_t)(values.count + 2));
  uint64_t *key_needs = malloc(sizeof(uint64_t) * (size_t)(values.count + 2));
  int32_t most_options = 1;
  for (int32_t n = 0; n < p->num_nodes; ++n)
    if (p->nodes[n].num_options > most_options) most_options = p->nodes[n].num_options;
  int32_t *key_of_option = malloc(sizeof(int32_t) * (size_t)most_options);
  hetc_status_t status = NULL;
  if (!values.last_use || !layers || !scratch_needs || !key_option || !key_needs || !key_of_option) {
    status = hetc_status_new(HETC_STATUS_OUT_OF_MEMORY, "placement");
    goto done;
  }
  for (int32_t v = 0; v < values.count; ++v) values.last_use[v] = -1;
  for (int32_t n = 0; n < p->num_nodes; ++n)
    for (int32_t i = 0; i < p->nodes[n].num_inputs; ++i) values.last_use[value_of_input(&values, p->nodes[n].inputs[i])] = n;

  /* Layer 0: before any node, the model inputs that have consumers, on
   * the host, needed nowhere yet. */
  layer_t *first = &layers[0];
  first->live = malloc(sizeof(int32_t) * (size_t)(values.count + 1));
  if (!first->live) {
    status = hetc_status_new(HETC_STATUS_OUT_OF_MEMORY, "placement");
    goto done;
  }
  for (int32_t v = 0; v < p->num_model_inputs; ++v)
    if (values.last_use[v] >= 0) {
      key_option[first->width] = 0;
      key_needs[first->width] = 0;
      first->live[first->width++] = v;
    }
  key_option[first->width] = c->num_devices; /* the host ran "before" */
  key_needs[first->width] = 0;
  if (!offer(first, key_option, key_needs, 0, -1, -1)) {
    status = hetc_status_new(HETC_STATUS_OUT_OF_MEMORY, "placement");
    goto done;
  }
  out->exact = 1;
  out->states = 1;
  for (int32_t n = 0; n < p->num_nodes && !status; ++n) {
    const hetc_place_node_t *node = &p->nodes[n];
    layer_t *from = &layers[n], *to = &layers[n + 1];
    const int32_t produced = p->num_model_inputs + n;
    const int keeps_output = values.last_use[produced] > n;
    /* The live list after node n: the previous one without the values
     * whose last consumer is n, plus n's output when used later. */
    to->live = malloc(sizeof(int32_t) * (size_t)(from->width + 1));
    int32_t *slot_in_to = malloc(sizeof(int32_t) * (size_t)(from->width + 1));
    if (!to->live || !slot_in_to) {
      free(slot_in_to);
      status = hetc_status_new(HETC_STATUS_OUT_OF_MEMORY, "placement");
      break;
    }
    for (int32_t k = 0; k < from->width; ++k) {
      slot_in_to[k] = -1;
      if (values.last_use[from->live[k]] > n) {
        slot_in_to[k] = to->width;
        to->live[to->width++] = from->live[k];
      }
    }
    if (keeps_output) to->live[to->width++] = produced;
    option_keys(node, key_of_option);
    for (int64_t s = 0; s < from->count && !status; ++s) {
      for (int32_t o = 0; o < node->num_options && !status; ++o) {
        if (key_of_option[o] < 0) continue;
        const hetc_place_option_t *opt = &node->options[o];
        /* Needs after this node, for the previous live values. */
        const int32_t *old_option = from->option + s * (from->width + 1);
        const uint64_t *old_needs = from->needs + s * (from->width + 1);
        double cost = from->cost[s] + opt->seconds + switch_cost(c, old_option[from->width], opt->device);
        memcpy(scratch_needs, old_needs, sizeof(uint64_t) * (size_t)from->width);
        for (int32_t i = 0; i < node->num_inputs; ++i) {
          int32_t value = value_of_input(&values, node->inputs[i]);
          int32_t k = 0;
          while (k < from->width && from->live[k] != value) ++k;
          if (k == from->width) continue; /* unreachable: an input is live until its last use */
          uint64_t want = scratch_needs[k] | pair_bit(layouts, opt->device, opt->in_layout);
          if (want == scratch_needs[k]) continue;
          source_t src = source_of(p, c, value, old_option[k]);
          cost += deliver(c, layouts, src, want) - deliver(c, layouts, src, scratch_needs[k]);
          scratch_needs[k] = want;
        }
        if (node->is_model_output)
          cost += deliver(c, layouts, source_of(p, c, produced, o), pair_bit(layouts, c->num_devices, HETC_PLACE_ROW_MAJOR));
        /* The new state's key, in to->live's order. */
        for (int32_t k = 0; k < from->width; ++k)
          if (slot_in_to[k] >= 0) {
            key_option[slot_in_to[k]] = old_option[k];
            key_needs[slot_in_to[k]] = scratch_needs[k];
          }
        if (keeps_output) {
          key_option[to->width - 1] = key_of_option[o];
          key_needs[to->width - 1] =
              node->is_model_output ? pair_bit(layouts, c->num_devices, HETC_PLACE_ROW_MAJOR) : 0;
        }
        key_option[to->width] = opt->device;
        key_needs[to->width] = 0;
        if (!offer(to, key_option, key_needs, cost, s, o))
          status = hetc_status_new(HETC_STATUS_OUT_OF_MEMORY, "placement");
      }
    }
    free(slot_in_to);
    if (!status && to->count > out->states) out->states = to->count;
    int64_t keep = max_entries / (to->width + 1);
    if (keep < 1) keep = 1;
    if (!status && max_entries > 0 && to->count > keep) {
      out->exact = 0;
      if (!prune(to, keep)) status = hetc_status_new(HETC_STATUS_OUT_OF_MEMORY, "placement");
    }
    /* Only the costs and back pointers of `from` are needed from now on. */
    if (!status) layer_free_keys(from);
  }
  if (!status) {
    layer_t *last = &layers[p->num_nodes];
    int64_t best = 0;
    for (int64_t s = 1; s < last->count; ++s)
      if (last->cost[s] < last->cost[best]) best = s;
    out->choice = malloc(sizeof(int32_t) * (size_t)(p->num_nodes + 1));
    if (!out->choice) {
      status = hetc_status_new(HETC_STATUS_OUT_OF_MEMORY, "placement");
    } else {
      out->total_seconds = last->cost[best];
      for (int32_t n = p->num_nodes; n > 0; --n) {
        out->choice[n - 1] = layers[n].chosen[best];
        best = layers[n].prev[best];
      }
      for (int32_t n = 0; n < p->num_nodes; ++n) out->compute_seconds += p->nodes[n].options[out->choice[n]].seconds;
    }
  }
done:
  if (layers)
    for (int32_t n = 0; n <= p->num_nodes; ++n) layer_free(&layers[n]);
  free(layers);
  free(values.last_use);
  free(scratch_needs);
  free(key_option);
  free(key_needs);
  free(key_of_option);
  if (status) hetc_place_solution_free(out);
  return status;
}

void hetc_place_solution_free(hetc_place_solution_t *solution) {
  free(solution->choice);
  solution->choice = NULL;
}
