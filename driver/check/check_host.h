/* driver/check/check_host.h -- the host tables `hetc plugin-check` hands a
 * plugin: the driver's own services, seen as a host of a given ABI version
 * (its struct_size cut to that version's; a call it lacks, or a split
 * policy it does not know, replaced by one that reports its use), with an allocator that counts live blocks so
 * that what a plugin keeps after instance_destroy is seen. One process
 * checks one plugin, so the table and the counts are process-wide. */
#ifndef HETC_DRIVER_CHECK_CHECK_HOST_H_
#define HETC_DRIVER_CHECK_CHECK_HOST_H_

#include "hetc/plugin.h"

/* The table for a host of ABI level `level` (plugins/abi_level.h; at most
 * HETC_ABI_LEVEL_NOW): its header says that level's major and minor.
 * Static; the last call's level wins, so call it once per process. */
const hetc_plugin_host_t *hetc_check_host_for_level(uint32_t level);

/* Blocks allocated with the table's alloc and not yet freed, and their
 * bytes as requested. */
int64_t hetc_check_host_live_blocks(void);
int64_t hetc_check_host_live_bytes(void);

/* What the plugin used that its host's version lacks (calls, split
 * policies), joined with ", " (empty when none). Static buffer. */
const char *hetc_check_host_missing_calls_used(void);

#endif
