#include "check/check_host.h"

#include <stdatomic.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "plugins/host.h"
#include "space/space.h"

static hetc_plugin_host_t table;
static atomic_llong live_blocks;
static atomic_llong live_bytes;
static atomic_int used_mark_optional;

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
                          "called host->space_mark_optional('%s'), which a host of ABI %d.0 does not have",
                          knob_name ? knob_name : "(null)", HETC_PLUGIN_ABI_MAJOR);
}

const hetc_plugin_host_t *check_host_for_minor(uint32_t minor) {
  memcpy(&table, hetc_host_services(), sizeof(table));
  if (minor > HETC_PLUGIN_ABI_MINOR) minor = HETC_PLUGIN_ABI_MINOR;
  table.header.abi_minor = minor;
  table.header.struct_size = (uint32_t)hetc_host_table_size(minor);
  table.alloc = counting_alloc;
  table.free = counting_free;
  if (minor < 1) table.space_mark_optional = missing_mark_optional;
  return &table;
}

int64_t check_host_live_blocks(void) { return atomic_load(&live_blocks); }
int64_t check_host_live_bytes(void) { return atomic_load(&live_bytes); }

const char *check_host_missing_calls_used(void) {
  return atomic_load(&used_mark_optional) ? "space_mark_optional" : "";
}
