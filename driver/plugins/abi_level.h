/* driver/plugins/abi_level.h -- ABI versions as one ordered number.
 *
 * Major 2 keeps everything of 1.7 and appends to the workload, so what a
 * plugin of some version can be handed is ordered across majors: 1.m is
 * level m, 2.m is level 8 + m. Whatever asks "does this plugin know that"
 * (ops, activations, graph rewrites, host tables) compares levels. */
#ifndef HETC_DRIVER_PLUGINS_ABI_LEVEL_H_
#define HETC_DRIVER_PLUGINS_ABI_LEVEL_H_

#include <stdint.h>

#include "hetc/plugin.h"

/* The last minor of major 1: a host of major 2 offers itself as this to a
 * plugin of major 1. */
#define HETC_ABI_MAJOR1_LAST_MINOR 7u

static inline uint32_t hetc_abi_level(uint32_t major, uint32_t minor) {
  return major >= 2 ? HETC_ABI_MAJOR1_LAST_MINOR + 1u + minor : minor;
}

static inline uint32_t hetc_abi_level_major(uint32_t level) { return level > HETC_ABI_MAJOR1_LAST_MINOR ? 2u : 1u; }

static inline uint32_t hetc_abi_level_minor(uint32_t level) {
  return level > HETC_ABI_MAJOR1_LAST_MINOR ? level - HETC_ABI_MAJOR1_LAST_MINOR - 1u : level;
}

/* This host's own level. */
#define HETC_ABI_LEVEL_NOW hetc_abi_level(HETC_PLUGIN_ABI_MAJOR, HETC_PLUGIN_ABI_MINOR)

/* A plugin table's level. */
static inline uint32_t hetc_plugin_abi_level(const hetc_plugin_t *plugin) {
  return hetc_abi_level(plugin->header.abi_major, plugin->header.abi_minor);
}

#endif /* HETC_DRIVER_PLUGINS_ABI_LEVEL_H_ */
