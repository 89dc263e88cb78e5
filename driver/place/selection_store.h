/* driver/place/selection_store.h -- keeping graph-level selection's plan.
 *
 * Choosing a plan builds and times every candidate kernel of a model
 * (placement_costs.h), a matter of seconds to minutes. `hetc tune` chooses
 * one when it ends and keeps it in the records store (table selections);
 * `hetc compile` then builds that plan without costing again, as long as
 * the model, the targets and their devices are the same, the store holds
 * no newer records, and every chosen template still exists at its version. */
#ifndef HETC_DRIVER_PLACE_SELECTION_STORE_H_
#define HETC_DRIVER_PLACE_SELECTION_STORE_H_

#include "place/placement_costs.h"
#include "records/records.h"

/* What a plan is kept under: the optimized graph's identity (its nodes'
 * names, ops, workloads and wiring, before any split), the targets in
 * order, each with its device's fingerprint, and with several targets the
 * split policy (a plan chosen under `--split never` is no answer for
 * `auto`). */
typedef struct hetc_selection_key_t {
  char model[17];
  char targets[1024];
} hetc_selection_key_t;

void hetc_selection_key(const hetc_graph_t *graph, int32_t num_devices, hetc_plugin_entry_t *const *entries,
                        const int32_t *device_indices, hetc_split_policy_t split, hetc_selection_key_t *out_key);

/* Keeps `placement` (no splits) for the key. */
hetc_status_t hetc_selection_keep(hetc_records_t *store, const hetc_selection_key_t *key, const hetc_graph_t *graph,
                                  hetc_plugin_entry_t *const *entries, const int32_t *device_indices,
                                  const hetc_placement_t *placement);

/* The kept plan for the key as a placement (*out_found 1), or nothing when
 * there is none or it no longer applies (*out_found 0). *out_placement is
 * released with hetc_placement_release. */
hetc_status_t hetc_selection_find(hetc_records_t *store, const hetc_selection_key_t *key, const hetc_graph_t *graph,
                                  int32_t num_devices, hetc_plugin_entry_t *const *entries,
                                  const int32_t *device_indices, hetc_placement_t *out_placement, int *out_found);

#endif /* HETC_DRIVER_PLACE_SELECTION_STORE_H_ */
