/* driver/place/placement.h -- choosing a device and a layout for every node
 * so that the whole model's expected latency is lowest.
 *
 * The problem is given as numbers, not as plugins: each node's options
 * (device, the layout it reads its inputs in, the layout it writes, its
 * expected seconds) and the costs of moving a tensor (a copy between two
 * devices, a layout transform on one device). The costs come from the
 * records, the cost model and measured transfers (the compile stage's
 * business); this file only optimises.
 *
 * The model of a plan's latency: kernels and transfers run one after the
 * other, so latency is the sum of the chosen options' seconds and of the
 * cost of delivering every value to its consumers. A value is delivered
 * once per (device, layout) its consumers need, not once per consumer: a
 * tensor on device A in layout La needed by consumers on A in Lb and on B
 * in Lc costs one transform on A (La -> Lb), and, for B, a transform to
 * row-major on A when La is not row-major, one copy A -> B and one
 * transform on B (row-major -> Lc). Copies move row-major tensors, as the
 * runtime does. Model inputs start on the host in row-major; model outputs
 * end there.
 *
 * Nodes run in the order given; when one runs on another device than the
 * node before it, the switch costs switch_seconds.
 *
 * The method: dynamic programming over the nodes in topological order. A
 * state is what later nodes' costs can depend on: for every live value
 * (produced, with consumers still to come) the option that produced it and
 * the set of (device, layout) pairs its consumers so far need, and the
 * device of the last node. Choosing a
 * node's option adds its seconds and, for each input, the delivery cost's
 * increase; states that become equal once a value dies are merged, keeping
 * the cheaper. A value's producer counts by where it leaves the value
 * (device and layout), not by which kernel, and of a node's options alike
 * in device and both layouts only the cheapest is tried: neither loses a
 * plan. On a chain a state is one (option, set) pair, so the DP is exact
 * and linear in the nodes; on a DAG it is exact too, and the number of
 * states grows with the width of the live frontier (two or three values
 * around residual and concat branches, but every earlier layer's output in
 * a DenseNet block). A state's key holds one entry per live value and one
 * for the last device; should the keys of one step hold more than
 * max_entries entries in all, only the cheapest states are kept (at least
 * one) and the result says it is no longer proven optimal. The bound is on
 * entries rather than states because a step's time and memory grow with
 * both. */
#ifndef HETC_DRIVER_PLACE_PLACEMENT_H_
#define HETC_DRIVER_PLACE_PLACEMENT_H_

#include <stdint.h>

#include "common/status.h"

/* Layout ids are the caller's small integers below the problem's
 * num_layouts; 0 means row-major, the layout copies move and the host
 * holds. A state keeps a value's needs as one bit per (device, layout),
 * the host included, in 64 bits: num_layouts x (num_devices + 1) <= 64
 * (hetc_place_layout_limit). */
#define HETC_PLACE_ROW_MAJOR 0
#define HETC_PLACE_MAX_LAYOUTS 8 /* num_layouts 0 means this many */
/* Devices 0..num_devices-1, plus the host as device num_devices. */
#define HETC_PLACE_MAX_DEVICES 7

typedef struct hetc_place_option_t {
  int32_t device;     /* 0..num_devices-1 */
  int32_t in_layout;  /* the layout it reads every activation input in */
  int32_t out_layout; /* the layout it writes */
  double seconds;     /* expected time of the kernel */
} hetc_place_option_t;

/* An input of a node: a node's output (node index, earlier in the order)
 * or a model input (-1 - k for model input k). */
typedef struct hetc_place_node_t {
  int32_t num_inputs;
  const int32_t *inputs;   /* borrowed */
  double output_bytes;
  int32_t is_model_output; /* 1: its value must end on the host */
  int32_t num_options;     /* >= 1 */
  const hetc_place_option_t *options; /* borrowed */
} hetc_place_node_t;

typedef struct hetc_place_costs_t {
  int32_t num_devices; /* 1..HETC_PLACE_MAX_DEVICES; the host is this index */
  /* Seconds to copy `bytes` of a row-major tensor between two devices
   * (either may be the host). */
  double (*copy_seconds)(const void *context, int32_t from_device, int32_t to_device, double bytes);
  /* Seconds to convert `bytes` between two layouts on one device. */
  double (*transform_seconds)(const void *context, int32_t device, int32_t from_layout, int32_t to_layout,
                              double bytes);
  const void *context;
  /* Seconds lost when a node on device `to` runs right after one on
   * another device `from` (the order is the nodes'): one device's threads
   * still holding shared cores, the other's waking. NULL: none. */
  double (*switch_seconds)(const void *context, int32_t from_device, int32_t to_device);
} hetc_place_costs_t;

typedef struct hetc_place_problem_t {
  int32_t num_nodes; /* in topological order: inputs come earlier */
  const hetc_place_node_t *nodes;
  int32_t num_model_inputs;
  const double *model_input_bytes; /* num_model_inputs entries */
  int32_t num_layouts;             /* layout ids in use; 0: HETC_PLACE_MAX_LAYOUTS */
} hetc_place_problem_t;

/* The most layouts a problem on num_devices devices may use. */
int32_t hetc_place_layout_limit(int32_t num_devices);

typedef struct hetc_place_solution_t {
  int32_t *choice;        /* per node, the chosen option; owned, free() */
  double total_seconds;   /* expected latency of the plan */
  double compute_seconds; /* the kernels' part of it */
  int32_t exact;          /* 1: proven lowest under the model */
  int64_t states;         /* the largest number of states a step held */
} hetc_place_solution_t;

/* Solves the problem. max_entries <= 0 means unlimited. INVALID_ARGUMENT
 * for a malformed problem (an input that is not earlier, a device or
 * layout out of range, a node without options). */
hetc_status_t hetc_place_solve(const hetc_place_problem_t *problem, const hetc_place_costs_t *costs,
                               int64_t max_entries, hetc_place_solution_t *out_solution);

void hetc_place_solution_free(hetc_place_solution_t *solution);

/* The part of the latency spent delivering value `value` (model inputs
 * first, then one per node) under `choice`: its copies and transforms.
 * *out_devices (may be NULL) gets a bit per device it is copied to (the
 * host's is bit num_devices). */
double hetc_place_value_seconds(const hetc_place_problem_t *problem, const hetc_place_costs_t *costs,
                                const int32_t *choice, int32_t value, int32_t *out_devices);

/* The latency of a given choice of options under the same model (the
 * DP's objective, computed directly): for checking plans and for brute
 * force in tests. */
double hetc_place_evaluate(const hetc_place_problem_t *problem, const hetc_place_costs_t *costs,
                           const int32_t *choice);

#endif
