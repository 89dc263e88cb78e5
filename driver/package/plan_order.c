#include "package/plan_order.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Bytes [start, end) of a slot, last written as `value`. */
typedef struct occupant_t {
  uint64_t start, end;
  int32_t value;
} occupant_t;

typedef struct slot_state_t {
  occupant_t *items;
  int32_t count, capacity;
} slot_state_t;

enum { WRITTEN_BY_INPUT = -1, NEVER_WRITTEN = -2 };

typedef struct walk_t {
  const hetc_plan_t *plan;
  slot_state_t *slots;
  int32_t *writer; /* per value: the step that last wrote it, or an enum above */
} walk_t;

static uint64_t end_of(const hetc_plan_value_t *v) { return v->offset + v->bytes; }

/* 1 when value `inner` lies within value `outer`'s bytes of the same slot. */
static int contains(const hetc_plan_t *plan, int32_t outer, int32_t inner) {
  const hetc_plan_value_t *o = &plan->values[outer], *i = &plan->values[inner];
  return o->slot == i->slot && o->offset <= i->offset && end_of(i) <= end_of(o);
}

/* 1 when the bytes of `value`, which no step writes, may hold `other`: a
 * slice's holder, or a value inside a concat's. */
static int made_of(const hetc_plan_t *plan, int32_t value, int32_t other) {
  const int32_t holder = plan->values[value].part_of;
  return holder >= 0 ? other == holder : contains(plan, value, other);
}

static int append(slot_state_t *slot, occupant_t item) {
  if (slot->count == slot->capacity) {
    int32_t capacity = slot->capacity ? slot->capacity * 2 : 4;
    occupant_t *grown = realloc(slot->items, (size_t)capacity * sizeof(occupant_t));
    if (!grown) return 0;
    slot->items = grown;
    slot->capacity = capacity;
  }
  slot->items[slot->count++] = item;
  return 1;
}

/* The value's bytes now hold `value`: what was there is cut away. */
static int write_value(walk_t *w, int32_t value) {
  const hetc_plan_value_t *v = &w->plan->values[value];
  if (v->bytes == 0) return 1;
  slot_state_t *slot = &w->slots[v->slot];
  const uint64_t start = v->offset, end = end_of(v);
  for (int32_t i = 0; i < slot->count;) {
    occupant_t o = slot->items[i];
    if (o.end <= start || o.start >= end) {
      ++i;
      continue;
    }
    slot->items[i] = slot->items[--slot->count]; /* order does not matter */
    if (o.start < start && !append(slot, (occupant_t){o.start, start, o.value})) return 0;
    if (o.end > end && !append(slot, (occupant_t){end, o.end, o.value})) return 0;
  }
  return append(slot, (occupant_t){start, end, value});
}

static int by_start(const void *a, const void *b) {
  const occupant_t *x = a, *y = b;
  return x->start < y->start ? -1 : x->start > y->start;
}

static const char *step_name(const hetc_plan_t *plan, int32_t step) {
  return plan->steps[step].name ? plan->steps[step].name : "";
}

/* NULL when `value` holds what was written as it: every byte last written
 * as the value itself or, for a value no step writes, as a value inside it
 * (a concat's inputs) or as the value it is part of (a channel slice read
 * where it lies). Else why not, as "value V (NAME) ...". */
static hetc_status_t check_readable(const walk_t *w, int32_t value) {
  const hetc_plan_t *plan = w->plan;
  const hetc_plan_value_t *v = &plan->values[value];
  if (v->bytes == 0) return NULL;
  const slot_state_t *slot = &w->slots[v->slot];
  const uint64_t start = v->offset, end = end_of(v);
  occupant_t *parts = malloc(((size_t)slot->count + 1) * sizeof(occupant_t));
  if (!parts) return hetc_status_new(HETC_STATUS_OUT_OF_MEMORY, "checking the plan");
  int32_t count = 0;
  hetc_status_t status = NULL;
  int any_member = 0;
  for (int32_t i = 0; i < slot->count; ++i) {
    const occupant_t *o = &slot->items[i];
    any_member |= o->end > start && o->start < end && o->value != value && made_of(plan, value, o->value);
  }
  if (w->writer[value] == NEVER_WRITTEN && !any_member)
    status = hetc_status_new(HETC_STATUS_BAD_INPUT, "value %d (%s), which no earlier step writes", value, v->name);
  for (int32_t i = 0; i < slot->count && !status; ++i) {
    const occupant_t *o = &slot->items[i];
    if (o->end <= start || o->start >= end) continue;
    /* A value a step wrote must still hold it all; only a value no step
     * writes is made of others (made_of). */
    const int member = w->writer[value] == NEVER_WRITTEN && made_of(plan, value, o->value);
    if (o->value != value && !member) {
      const int32_t by = w->writer[o->value];
      status = by >= 0 ? hetc_status_new(HETC_STATUS_BAD_INPUT,
                                         "value %d (%s), which step %d (%s) overwrote with value %d (%s) before it",
                                         value, v->name, by, step_name(plan, by), o->value, plan->values[o->value].name)
                       : hetc_status_new(HETC_STATUS_BAD_INPUT, "value %d (%s), which shares its bytes with input value %d (%s)",
                                         value, v->name, o->value, plan->values[o->value].name);
    }
    parts[count++] = *o;
  }
  if (!status) {
    qsort(parts, (size_t)count, sizeof(occupant_t), by_start);
    uint64_t covered = start;
    for (int32_t i = 0; i < count && parts[i].start <= covered; ++i)
      if (parts[i].end > covered) covered = parts[i].end;
    if (covered < end)
      status = hetc_status_new(HETC_STATUS_BAD_INPUT, "value %d (%s), part of which no earlier step writes",
                               value, v->name);
  }
  free(parts);
  return status;
}

static hetc_status_t walk(walk_t *w) {
  const hetc_plan_t *plan = w->plan;
  for (int32_t i = 0; i < plan->num_inputs; ++i) {
    w->writer[plan->inputs[i].value] = WRITTEN_BY_INPUT;
    if (!write_value(w, plan->inputs[i].value)) return hetc_status_new(HETC_STATUS_OUT_OF_MEMORY, "checking the plan");
  }
  for (int32_t s = 0; s < plan->num_steps; ++s) {
    const hetc_plan_step_t *step = &plan->steps[s];
    const hetc_plan_value_t *out = &plan->values[step->output];
    for (int32_t i = 0; i < step->num_inputs; ++i) {
      hetc_status_t status = check_readable(w, step->inputs[i]);
      if (status) return hetc_status_annotate(status, "/steps/%d: step %d (%s) reads input %d", s, s, step->name, i);
      const hetc_plan_value_t *in = &plan->values[step->inputs[i]];
      if (in->slot == out->slot && in->bytes && out->bytes && in->offset < end_of(out) && out->offset < end_of(in))
        return hetc_status_new(HETC_STATUS_BAD_INPUT,
                               "/steps/%d: step %d (%s) writes value %d (%s) over the bytes of its own input %d (%s)", s,
                               s, step->name, step->output, out->name, step->inputs[i], in->name);
    }
    /* Inputs are set once and read by every run: a step writing over one
     * would leave the next run (hetc run --repeat) a different input. */
    for (int32_t i = 0; i < plan->num_inputs; ++i) {
      const hetc_plan_value_t *in = &plan->values[plan->inputs[i].value];
      if (in->slot == out->slot && in->bytes && out->bytes && in->offset < end_of(out) && out->offset < end_of(in))
        return hetc_status_new(HETC_STATUS_BAD_INPUT,
                               "/steps/%d: step %d (%s) writes value %d (%s) over graph input '%s', which every run reads",
                               s, s, step->name, step->output, out->name, plan->inputs[i].name);
    }
    w->writer[step->output] = s;
    if (!write_value(w, step->output)) return hetc_status_new(HETC_STATUS_OUT_OF_MEMORY, "checking the plan");
  }
  for (int32_t o = 0; o < plan->num_outputs; ++o) {
    hetc_status_t status = check_readable(w, plan->outputs[o].value);
    if (status) return hetc_status_annotate(status, "/outputs/%d: output '%s'", o, plan->outputs[o].name);
  }
  return NULL;
}

hetc_status_t hetc_plan_check_order(const hetc_plan_t *plan) {
  walk_t w = {plan, calloc((size_t)plan->num_slots + 1, sizeof(slot_state_t)),
              malloc(((size_t)plan->num_values + 1) * sizeof(int32_t))};
  hetc_status_t status = NULL;
  if (!w.slots || !w.writer) {
    status = hetc_status_new(HETC_STATUS_OUT_OF_MEMORY, "checking the plan");
  } else {
    for (int32_t v = 0; v < plan->num_values; ++v) w.writer[v] = NEVER_WRITTEN;
    status = walk(&w);
  }
  for (int32_t k = 0; w.slots && k < plan->num_slots; ++k) free(w.slots[k].items);
  free(w.slots);
  free(w.writer);
  return status;
}
