/* driver/runtime/runtime_internal.h -- what the runtime's loader
 * (runtime.c) and its executor (executor.c) share. */
#ifndef HETC_DRIVER_RUNTIME_RUNTIME_INTERNAL_H_
#define HETC_DRIVER_RUNTIME_RUNTIME_INTERNAL_H_

#include "runtime/runtime.h"

typedef struct hetc_executor_t hetc_executor_t;

struct hetc_runtime_t {
  hetc_plan_t *plan;
  char *kernel_dir;
  hetc_plugin_entry_t **entries;      /* per plan device */
  hetc_plugin_buffer_t **slots;       /* per slot */
  void **slot_host;                   /* per slot: its host address on a host-memory device, else NULL */
  hetc_plugin_buffer_t **views;       /* per value: a view of its slot at its offset, NULL at offset 0 */
  hetc_plugin_artifact_t **artifacts; /* per step (kernels) */
  hetc_plugin_buffer_t ***params;     /* per step, per param */
  hetc_plugin_buffer_t **workspaces;  /* per device, the largest a step needs */
  void *staging;                      /* host bounce buffer for copies between two device memories */
  uint64_t staging_bytes;
  hetc_executor_t *executor;
};

static inline hetc_plugin_entry_t *entry_of(const hetc_runtime_t *rt, int32_t device) {
  return rt->entries[device];
}

/* The buffer a kernel reads or writes plan value `value` through. */
static inline hetc_plugin_buffer_t *value_buffer(const hetc_runtime_t *rt, int32_t value) {
  return rt->views[value] ? rt->views[value] : rt->slots[rt->plan->values[value].slot];
}

/* A plan value's host address on a host-memory device, else NULL. */
static inline void *value_host(const hetc_runtime_t *rt, int32_t value) {
  const hetc_plan_value_t *v = &rt->plan->values[value];
  return rt->slot_host[v->slot] ? (char *)rt->slot_host[v->slot] + v->offset : NULL;
}

/* Prepares execution of rt's plan: the steps' dependencies and, when the
 * plan spans several devices, a worker thread per device and one for
 * copies. NULL on success; rt->executor is released by
 * hetc_executor_destroy. */
hetc_status_t hetc_executor_create(hetc_runtime_t *rt);
void hetc_executor_destroy(hetc_executor_t *executor);

#endif /* HETC_DRIVER_RUNTIME_RUNTIME_INTERNAL_H_ */
