/* driver/place/placement_costs.h -- cost-based placement for a compile
 * on several targets: every node built on every device that supports it
 * (with the config the records choose, or with graph-level selection each
 * of its candidates: config_choice.h) and timed in rounds
 * (kernel/kernel_rounds.h), the transfer costs of each device (from the
 * records store, else measured and kept there), the cost of a layout
 * transform on each device, the cost of switching devices between two
 * nodes (place/switch_cost.h), and the optimiser of place/placement.h
 * over them; then, as the request says, conv2d splits to propose. The
 * compile stage builds the plan the choice describes. */
#ifndef HETC_DRIVER_PLACE_PLACEMENT_COSTS_H_
#define HETC_DRIVER_PLACE_PLACEMENT_COSTS_H_

#include <stdio.h>

#include "compile/config_choice.h"
#include "graph/graph.h"
#include "plugins/registry.h"

/* Kernel times (and device-switch costs) measured during one compile, so
 * that costing a rewritten graph (after splits) times only its new
 * kernels. */
typedef struct hetc_kernel_times_t hetc_kernel_times_t;
void hetc_kernel_times_free(hetc_kernel_times_t *times);

/* A conv2d to split by output channels: node `node`'s first
 * `first_channels` on first_device, the rest on second_device. */
typedef struct hetc_place_split_t {
  int32_t node;
  int32_t first_device, second_device;
  int64_t first_channels;
} hetc_place_split_t;

typedef struct hetc_placement_request_t {
  const hetc_graph_t *graph;          /* optimized */
  int32_t num_devices;
  hetc_plugin_entry_t *const *entries; /* per device */
  const int32_t *device_indices;      /* per device: the plugin's device */
  const char *const *targets;         /* per device: target names */
  hetc_config_chooser_t *chooser;
  const char *records_path;           /* transfers; NULL: the per-user store */
  FILE *explain;                      /* the plan, printed; NULL: silent */
  int progress;                       /* a line per node to stderr */
  /* Per node, the device it must run on, or -1 to choose; NULL: choose
   * every node (a pinned plan is only costed, e.g. first-fit's). */
  const int32_t *pinned_device;
  int32_t split;                      /* hetc_split_policy_t: which conv2d to propose splitting */
  /* Per node, the other half of its split conv2d, or -1; NULL: none. Two
   * halves on devices that do not share cores run at once, and count once
   * (the longer) in the expected latency. */
  const int32_t *split_partner;
  hetc_kernel_times_t **times;        /* the compile's cache (created on first use); NULL: none */
  /* The compile's kernels (kernel/kernel_shelf.h): every kernel timed here
   * that ran is put on it, for the package; NULL: released here. */
  struct hetc_kernel_shelf_t *shelf;
  /* 1: graph-level selection, every candidate of config_choice.h weighed;
   * 0: each tunable node only with the config the records choose for it
   * alone (what a compile that places nothing builds). */
  int32_t weigh_candidates;
} hetc_placement_request_t;

typedef struct hetc_placement_t {
  int32_t num_nodes;
  int32_t *device;          /* per node: the chosen device; owned, free() */
  /* Per node: how to build its kernel there (template and config; for ops
   * without knobs template 0's default); owned with their strings. */
  hetc_kernel_candidate_t *candidate;
  /* Per node: the layout its chosen kernel was costed reading its 4-d
   * activation inputs in, which compile must hint them as, so that a
   * kernel that follows its hints (pooling, elementwise, resize) is the
   * one the plan costed; owned, free(). */
  hetc_plugin_layout_t *input_layout;
  double predicted_seconds; /* the plan's expected latency */
  /* The best plan's with every tunable kernel at its first template's
   * default config (0: no node had another candidate). */
  double default_seconds;
  double kernel_seconds;    /* of which kernels */
  int32_t exact;
  int32_t num_splits;
  hetc_place_split_t *splits; /* owned, free(): proposed splits, by node */
} hetc_placement_t;

/* Measures and solves, and proposes conv2d splits as request->split says
 * (the caller rewrites the graph and places it again, the halves pinned).
 * UNSUPPORTED names a node no device supports. */
hetc_status_t hetc_placement_choose(const hetc_placement_request_t *request, hetc_placement_t *out_placement);

/* Frees what a placement owns and zeroes it. */
void hetc_placement_release(hetc_placement_t *placement);

#endif
