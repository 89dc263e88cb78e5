#include "compile/buffer_plan.h"

#include <stdlib.h>

static int32_t new_slot(hetc_plan_t *plan, int32_t device, uint64_t bytes) {
  int32_t n = plan->num_slots;
  if (n == 0 || (n & (n - 1)) == 0) {
    hetc_plan_slot_t *grown = realloc(plan->slots, sizeof(hetc_plan_slot_t) * (size_t)(n ? n * 2 : 8));
    if (!grown) return -1;
    plan->slots = grown;
  }
  plan->slots[n] = (hetc_plan_slot_t){device, bytes};
  plan->num_slots = n + 1;
  return n;
}

hetc_status_t hetc_buffer_plan_assign(hetc_plan_t *plan, const int32_t *view_of) {
  const int32_t nv = plan->num_values;
  /* Per group (indexed by its containing value): the last step reading any
   * member, -1 if none. */
  int32_t *last_use = malloc(sizeof(int32_t) * (size_t)(nv + 1));
  int32_t *group = malloc(sizeof(int32_t) * (size_t)(nv + 1));
  char *pinned = calloc((size_t)nv + 1, 1);
  char *slot_busy = NULL;
  hetc_status_t status = NULL;
  if (!last_use || !group || !pinned) {
    status = hetc_status_new(HETC_STATUS_OUT_OF_MEMORY, "buffer plan");
    goto done;
  }
  for (int32_t v = 0; v < nv; ++v) {
    last_use[v] = -1;
    group[v] = view_of && view_of[v] >= 0 ? view_of[v] : v;
    plan->values[v].slot = -1;
  }
  for (int32_t s = 0; s < plan->num_steps; ++s)
    for (int32_t i = 0; i < plan->steps[s].num_inputs; ++i) last_use[group[plan->steps[s].inputs[i]]] = s;
  for (int32_t i = 0; i < plan->num_inputs; ++i) pinned[plan->inputs[i].value] = 1;
  for (int32_t i = 0; i < plan->num_outputs; ++i) pinned[plan->outputs[i].value] = 1;
  for (int32_t v = 0; v < nv; ++v) {
    if (!pinned[v]) continue;
    plan->values[v].slot = new_slot(plan, plan->values[v].device, plan->values[v].bytes);
    if (plan->values[v].slot < 0) {
      status = hetc_status_new(HETC_STATUS_OUT_OF_MEMORY, "buffer plan");
      goto done;
    }
  }
  /* Slots below first_shared belong to graph inputs and outputs. */
  const int32_t first_shared = plan->num_slots;
  /* busy[slot] while a value in it still has readers ahead. */
  slot_busy = calloc((size_t)plan->num_slots + (size_t)plan->num_steps + 1, 1);
  if (!slot_busy) {
    status = hetc_status_new(HETC_STATUS_OUT_OF_MEMORY, "buffer plan");
    goto done;
  }
  for (int32_t s = 0; s < plan->num_steps; ++s) {
    hetc_plan_step_t *step = &plan->steps[s];
    const int32_t out_group = group[step->output];
    hetc_plan_value_t *container = &plan->values[out_group];
    if (container->slot < 0) {
      int32_t chosen = -1;
      for (int32_t k = first_shared; k < plan->num_slots && chosen < 0; ++k)
        if (!slot_busy[k] && plan->slots[k].device == container->device) chosen = k;
      if (chosen < 0) chosen = new_slot(plan, container->device, container->bytes);
      if (chosen < 0) {
        status = hetc_status_new(HETC_STATUS_OUT_OF_MEMORY, "buffer plan");
        goto done;
      }
      if (plan->slots[chosen].bytes < container->bytes) plan->slots[chosen].bytes = container->bytes;
      container->slot = chosen;
    }
    plan->values[step->output].slot = container->slot;
    slot_busy[container->slot] = 1;
    /* Inputs read for the last time free their slots after the step; the
     * output was placed first, so it never aliases an input. */
    for (int32_t i = 0; i < step->num_inputs; ++i) {
      const int32_t g = group[step->inputs[i]];
      if (last_use[g] == s && !pinned[g]) slot_busy[plan->values[g].slot] = 0;
    }
    if (last_use[out_group] < 0 && !pinned[out_group]) slot_busy[container->slot] = 0;
  }
  /* Members of a group that no step wrote (the containing value of a
   * concat, which no kernel writes) take the group's slot. */
  for (int32_t v = 0; v < nv; ++v)
    if (plan->values[v].slot < 0) plan->values[v].slot = plan->values[group[v]].slot;
  for (int32_t v = 0; v < nv; ++v)
    if (plan->values[v].slot < 0) {
      status = hetc_status_new(HETC_STATUS_INTERNAL, "buffer plan: value '%s' is never written",
                               plan->values[v].name);
      goto done;
    }
done:
  free(last_use);
  free(group);
  free(pinned);
  free(slot_busy);
  return status;
}
