/* driver/package/plan_order.h -- does a plan compute its outputs?
 *
 * Each value and step of a manifest can be well formed while the plan as a
 * whole computes garbage: steps reversed or missing, an output never
 * written, a step writing over a value a later step still reads (values
 * share buffer slots), a step whose output lies in its own input's bytes.
 * This walks the steps in order, tracking which value last wrote each byte
 * range of each slot, and says where the plan goes wrong. */
#ifndef HETC_DRIVER_PACKAGE_PLAN_ORDER_H_
#define HETC_DRIVER_PACKAGE_PLAN_ORDER_H_

#include "package/plan.h"

/* NULL when, running the steps in order from the graph inputs, every value
 * a step reads holds what its writer wrote (or, for a concat whose inputs
 * live inside it, what its inputs' writers wrote), no step's output
 * overlaps its inputs or a graph input (every run reads those), and every graph output holds its value at the end.
 * Otherwise a BAD_INPUT whose message starts with the JSON path of the
 * step or output at fault ("/steps/7: ..."). The plan's indices must
 * already be checked (manifest_read.c does). */
hetc_status_t hetc_plan_check_order(const hetc_plan_t *plan);

#endif /* HETC_DRIVER_PACKAGE_PLAN_ORDER_H_ */
