#include "check/check_host.h"

#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "plugins/abi_level.h"
#include "plugins/host.h"
#include "space/space.h"

static hetc_plugin_host_t table;
static atomic_llong live_blocks;
static atomic_llong live_bytes;
static atomic_int used_mark_optional;
static atomic_int used_split_both;
static atomic_int used_logv, used_status_newv, used_constraint_copy;

/* Each block carries its size in front of it, keeping the 64-byte
 * alignment the ABI promises. */
#define HEADER 64

static void *counting_alloc(size_t size) {
  if (size > SIZE_MAX - HEADER) return NULL;
  char *block = hetc_host_alloc(size + HEADER);
  if (!block) return NULL;
  memcpy(block, &size, sizeof(size));
  atomic_fetch_add(&live_blocks, 1);
  atomic_fetch_add(&live_bytes, (long long)size);
  return block + HEADER;
}

static void counting_free(void *ptr) {
  if (!ptr) return;
  char *block = (char *)ptr - HEADER;
  size_t size;
  memcpy(&size, block, sizeof(size));
  atomic_fetch_sub(&live_blocks, 1);
  atomic_fetch_sub(&live_bytes, (long long)size);
  hetc_host_free(block);
}

/* Stands in for space_mark_optional on a minor-0 host: a plugin that calls
 * it did not check HETC_PLUGIN_HAS_FIELD and would crash a real 1.0 host. */
static hetc_plugin_status_t missing_mark_optional(hetc_plugin_space_t *space, const char *knob_name) {
  (void)space;
  atomic_store(&used_mark_optional, 1);
  return table.status_new(HETC_PLUGIN_STATUS_INTERNAL,
                          "called host->space_mark_optional('%s'), which a host of ABI 1.0 does not have",
                          knob_name ? knob_name : "(null)");
}

/* space_define_split as a minor-0 host has it: SPLIT_BOTH (minor 1) is an
 * unknown policy there. */
static hetc_plugin_status_t minor0_define_split(hetc_plugin_space_t *space, const char *name, int64_t extent,
                                                int32_t num_parts, int32_t policy, int64_t max_factor,
                                                const int64_t *candidates, int32_t num_candidates) {
  if (policy == HETC_PLUGIN_SPLIT_BOTH) {
    atomic_store(&used_split_both, 1);
    return table.status_new(HETC_PLUGIN_STATUS_INVALID_ARGUMENT,
                            "space_define_split('%s'): policy SPLIT_BOTH, which a host of ABI 1.0 does not know",
                            name ? name : "(null)");
  }
  return hetc_space_define_split(space, name, extent, num_parts, policy, max_factor, candidates, num_candidates);
}

/* Stand in for the minor-3 calls on an older host: the plugin did not
 * check HETC_PLUGIN_HAS_FIELD(host, hetc_plugin_host_t, logv). */
static void missing_logv(int32_t level, const char *origin, const char *format, va_list args) {
  atomic_store(&used_logv, 1);
  char message[1024];
  vsnprintf(message, sizeof(message), format, args);
  table.log(level, origin, "%s", message);
}

static hetc_plugin_status_t missing_status_newv(int32_t code, const char *format, va_list args) {
  atomic_store(&used_status_newv, 1);
  char message[1024];
  vsnprintf(message, sizeof(message), format, args);
  return table.status_new(code, "%s", message);
}

static hetc_plugin_status_t missing_constraint_copy(hetc_plugin_space_t *space, const char *const *knob_names,
                                                    int32_t num_knob_names, hetc_plugin_constraint_fn_t fn,
                                                    const void *data, size_t size) {
  (void)space, (void)knob_names, (void)num_knob_names, (void)fn, (void)data, (void)size;
  atomic_store(&used_constraint_copy, 1);
  return table.status_new(HETC_PLUGIN_STATUS_INTERNAL,
                          "called host->space_add_constraint_copy, which a host of ABI %d.%u does not have",
                          table.header.abi_major, table.header.abi_minor);
}

const hetc_plugin_host_t *hetc_check_host_for_level(uint32_t level) {
  memcpy(&table, hetc_host_services(), sizeof(table));
  if (level > HETC_ABI_LEVEL_NOW) level = HETC_ABI_LEVEL_NOW;
  table.header.abi_major = hetc_abi_level_major(level);
  table.header.abi_minor = hetc_abi_level_minor(level);
  table.header.struct_size = (uint32_t)hetc_host_table_size(level);
  table.alloc = counting_alloc;
  table.free = counting_free;
  const uint32_t minor = level; /* the calls below are major 1's */
  if (minor < 1) {
    table.space_mark_optional = missing_mark_optional;
    table.space_define_split = minor0_define_split;
  }
  if (minor < 3) {
    table.logv = missing_logv;
    table.status_newv = missing_status_newv;
    table.space_add_constraint_copy = missing_constraint_copy;
  }
  return &table;
}

int64_t hetc_check_host_live_blocks(void) { return atomic_load(&live_blocks); }
int64_t hetc_check_host_live_bytes(void) { return atomic_load(&live_bytes); }

const char *hetc_check_host_missing_calls_used(void) {
  static char names[256];
  const struct {
    atomic_int *used;
    const char *what;
  } uses[] = {
      {&used_mark_optional, "space_mark_optional"},
      {&used_split_both, "space_define_split with policy SPLIT_BOTH"},
      {&used_logv, "logv"},
      {&used_status_newv, "status_newv"},
      {&used_constraint_copy, "space_add_constraint_copy"},
  };
  size_t length = 0;
  names[0] = 0;
  for (size_t i = 0; i < sizeof(uses) / sizeof(uses[0]); ++i)
    if (atomic_load(uses[i].used) && length < sizeof(names))
      length += (size_t)snprintf(names + length, sizeof(names) - length, "%s%s", length ? ", " : "", uses[i].what);
  return names;
}
