/* driver/compile/buffer_plan.h -- assigns plan values to buffer slots. */
#ifndef HETC_DRIVER_COMPILE_BUFFER_PLAN_H_
#define HETC_DRIVER_COMPILE_BUFFER_PLAN_H_

#include "package/plan.h"

/* Gives every plan value a slot on its device, reusing a slot once every
 * reader of its previous value has run (greedy in step order; a slot grows
 * to the largest value it holds). Graph inputs and outputs get slots of
 * their own, so a run can write inputs and read outputs at any time.
 *
 * view_of (NULL: none) gives, per value, the value whose slot it lives in
 * at its `offset` (a concat's input inside the concat's value), or -1. Such
 * a group shares one slot, sized for the containing value, from the first
 * write of any member to the last read of any member. Members are never
 * graph inputs or outputs. */
hetc_status_t hetc_buffer_plan_assign(hetc_plan_t *plan, const int32_t *view_of);

#endif /* HETC_DRIVER_COMPILE_BUFFER_PLAN_H_ */
