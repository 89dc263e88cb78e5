/* driver/compile/placement_costs.h -- cost-based placement for a compile
 * on several targets: every node built and timed on every device that
 * supports it (with the config the records choose), the transfer costs of
 * each device (from the records store, else measured and kept there), the
 * cost of a layout transform on each device, and the optimiser of
 * place/placement.h over them. The compile stage then builds the plan the
 * choice describes. */
#ifndef HETC_DRIVER_COMPILE_PLACEMENT_COSTS_H_
#define HETC_DRIVER_COMPILE_PLACEMENT_COSTS_H_

#include <stdio.h>

#include "compile/config_choice.h"
#include "graph/graph.h"
#include "plugins/registry.h"

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
} hetc_placement_request_t;

typedef struct hetc_placement_t {
  int32_t *device;          /* per node: the chosen device; owned, free() */
  double predicted_seconds; /* the plan's expected latency */
  double kernel_seconds;    /* of which kernels */
  int32_t exact;
} hetc_placement_t;

/* Measures and solves. UNSUPPORTED names a node no device supports. */
hetc_status_t hetc_placement_choose(const hetc_placement_request_t *request, hetc_placement_t *out_placement);

#endif
