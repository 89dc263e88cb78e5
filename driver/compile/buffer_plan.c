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

hetc_status_t hetc_buffer_plan_assign(hetc_plan_t *plan) {
  const int32_t nv = plan->num_values;
  int32_t *last_use = malloc(sizeof(int32_t) * (size_t)(nv + 1));
  char *pinned = calloc((size_t)nv + 1, 1);
  char *slot_busy = NULL;
  hetc_status_t status = NULL;
  if (!last_use || !pinned) {
    status = hetc_status_new(HETC_STATUS_OUT_OF_MEMORY, "buffer plan");
    goto done;
  }
  for (int32_t v = 0; v < nv; ++v) last_use[v] = -1;
  for (int32_t s = 0; s < plan->num_steps; ++s)
    for (int32_t i = 0; i < plan->steps[s].num_inputs; ++i) last_use[plan->steps[s].inputs[i]] = s;
  for (int32_t i = 0; i < plan->num_inputs; ++i) pinned[plan->inputs[i].value] = 1;
  for (int32_t i = 0; i < plan->num_outputs; ++i) pinned[plan->outputs[i].value] = 1;
  for (int32_t v = 0; v < nv; ++v) {
    plan->values[v].slot = -1;
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
    hetc_plan_value_t *out = &plan->values[step->output];
    if (out->slot < 0) {
      int32_t chosen = -1;
      for (int32_t k = first_shared; k < plan->num_slots && chosen < 0; ++k)
        if (!slot_busy[k] && plan->slots[k].device == out->device) chosen = k;
      if (chosen < 0) chosen = new_slot(plan, out->device, out->bytes);
      if (chosen < 0) {
        status = hetc_status_new(HETC_STATUS_OUT_OF_MEMORY, "buffer plan");
        goto done;
      }
      if (plan->slots[chosen].bytes < out->bytes) plan->slots[chosen].bytes = out->bytes;
      out->slot = chosen;
    }
    slot_busy[out->slot] = 1;
    /* Inputs read for the last time free their slots after the step; the
     * output was placed first, so it never aliases an input. */
    for (int32_t i = 0; i < step->num_inputs; ++i) {
      int32_t v = step->inputs[i];
      if (last_use[v] == s && !pinned[v]) slot_busy[plan->values[v].slot] = 0;
    }
    if (last_use[step->output] < 0 && !pinned[step->output]) slot_busy[out->slot] = 0;
  }
done:
  free(last_use);
  free(pinned);
  free(slot_busy);
  return status;
}
