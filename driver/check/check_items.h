/* driver/check/check_items.h -- what the checks of one plugin-check
 * session share (check_session.c runs them): the session, the numbered
 * items and their results, sent to the supervisor (plugin_check.h). */
#ifndef HETC_DRIVER_CHECK_CHECK_ITEMS_H_
#define HETC_DRIVER_CHECK_CHECK_ITEMS_H_

#include "check/check_workloads.h"
#include "check/plugin_check.h"
#include "plugins/abi_level.h"
#include "plugins/registry.h"

/* Max relative error against the reference executor. */
#define CHECK_TOLERANCE 1e-4

typedef struct session_t {
  int fd;
  const hetc_plugin_check_options_t *options;
  uint32_t level; /* the host's ABI level (plugins/abi_level.h) */
  int32_t first_item, item;
  hetc_registry_t *registry; /* owned */
  hetc_plugin_entry_t *entry; /* the one plugin, in registry */
  const hetc_plugin_t *p;
  int32_t failures; /* in the current item */
  char label[512];
} session_t;

/* Begins item number s->item (then counts it). Returns 0, without
 * reporting, for items a previous session already did. */
int hetc_check_item_begin(session_t *s, const char *format, ...) HETC_PLUGIN_PRINTF(2, 3);
void hetc_check_item_end(session_t *s);
/* One result of the current item: kind PASS, FAIL, SKIP or NOTE. */
void hetc_check_say(session_t *s, const char *kind, const char *format, ...) HETC_PLUGIN_PRINTF(3, 4);
/* Names the plugin call the item is about to make ("build of config {...}"),
 * so that when the plugin crashes or hangs in it, the report line names the
 * call as well as the item (which names the device, workload and template).
 * Holds until the next step or the item's end. */
void hetc_check_step(session_t *s, const char *format, ...) HETC_PLUGIN_PRINTF(2, 3);
/* Reports a plugin status as a failure of `what`, and frees it. */
void hetc_check_fail_status(session_t *s, hetc_status_t status, const char *what);
/* A call that must refuse: `status` NULL means it accepted. Frees it. */
void hetc_check_expect_refusal(session_t *s, hetc_status_t status, const char *what);
/* "{knob=value, split=[a,b]}" into out. */
void hetc_check_describe_config(const hetc_plugin_config_t *config, char *out, size_t size);

/* check_device.c: loading and identity (0 when the plugin cannot be
 * used), the instance (0 without devices), and the per-device items. */
int hetc_check_load(session_t *s, const char *path);
int hetc_check_instance(session_t *s);
void hetc_check_descriptor(session_t *s, int32_t d);
void hetc_check_buffers(session_t *s, int32_t d);
void hetc_check_unknown_op(session_t *s, int32_t d);
void hetc_check_wrong_calls(session_t *s, int32_t d);
/* Destroys the instance; then no host->alloc block beyond the baseline. */
void hetc_check_release(session_t *s, int64_t baseline_blocks, int64_t baseline_bytes);

/* check_template.c: one workload's support, then each template's item. */
void hetc_check_workload(session_t *s, int32_t d, const check_workload_t *cw);
/* Template t's space on device d: defined (failure reported as `what`)
 * and freed. Returns 1 when it could be defined. */
int hetc_check_define_space_once(session_t *s, int32_t d, const check_workload_t *cw, int32_t t, const char *what);
/* Template t's default config built, run against the reference; 1 when it
 * matched (failures reported, naming `text`), with *max_error raised. */
int hetc_check_default_kernel(session_t *s, int32_t d, const check_workload_t *cw, int32_t t, const char *text,
                         double *max_error);

#endif
