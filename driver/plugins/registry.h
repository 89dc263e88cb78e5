/* driver/plugins/registry.h -- finding, loading and refusing plugins.
 *
 * Discovery follows the ABI design: directories in HETC_PLUGIN_PATH
 * (colon-separated; ignored in setuid processes), then <exe>/../lib/hetc/plugins
 * beside the running executable, then the plugins folder beside libhetc, then
 * the install prefix's lib/hetc/plugins. Every *.so found is a candidate;
 * each is loaded with dlopen(RTLD_NOW | RTLD_LOCAL), negotiated through
 * hetc_plugin_query, and probed. Candidates that fail stay in the list with
 * the reason, so `hetc plugins` can show them. */
#ifndef HETC_DRIVER_PLUGINS_REGISTRY_H_
#define HETC_DRIVER_PLUGINS_REGISTRY_H_

#include "common/status.h"

/* hetc_plugin_state_t is public (hetc/hetc.h). */

struct hetc_registry_t;

typedef struct hetc_plugin_entry_t {
  char *path;  /* owned; the candidate file */
  hetc_plugin_state_t state;
  char *reason; /* owned; why refused or unavailable, else NULL */
  void *handle; /* dlopen handle while loaded */
  const hetc_plugin_t *plugin;       /* the plugin's table when loaded */
  hetc_plugin_instance_t *instance;  /* created on first use */
  struct hetc_registry_t *registry;  /* the registry holding the entry */
  int peaks_resolved;                /* the hetc_peaks_mode_t its peaks were resolved in (plugins/peaks.h) */
} hetc_plugin_entry_t;

typedef struct hetc_registry_t {
  int32_t count;
  hetc_plugin_entry_t *entries; /* owned */
  /* Where device peaks are kept (plugins/peaks.h). */
  char *peaks_path; /* owned; NULL: the per-user store */
  int peaks_mode;   /* hetc_peaks_mode_t; 0: the plugins' own figures */
  int peaks_warned; /* the store's trouble was reported */
} hetc_registry_t;

/* Discovers and loads every candidate. Never fails for a bad plugin (that
 * is recorded in its entry); fails only when out of memory. Release with
 * hetc_registry_free, which destroys the instances; a loaded plugin's code
 * stays mapped until the process ends (its runtimes may keep threads or
 * exit handlers). */
hetc_status_t hetc_registry_open(hetc_registry_t **out_registry);
void hetc_registry_free(hetc_registry_t *registry);

/* A registry of the one plugin file `path`, negotiated with `host` (NULL:
 * the driver's own services) and probed: for `hetc plugin-check`, which
 * hands plugins a host of an older minor or one that counts allocations.
 * Like hetc_registry_open, a bad plugin is recorded in the entry, not
 * returned as a failure. */
hetc_status_t hetc_registry_open_file(const char *path, const hetc_plugin_host_t *host,
                                      hetc_registry_t **out_registry);

/* 1, with the reason written to `reason`, when a plugin table cannot be
 * used by this host: another major, a table shorter than minor 0, no name,
 * or a required call missing. */
int hetc_plugin_table_problem(const hetc_plugin_t *plugin, char *reason, size_t reason_size);

/* The search directories, in order, as one string for messages. Owned by
 * the caller. */
char *hetc_registry_search_path(void);

/* The ABI level (plugins/abi_level.h) that introduced the newest op,
 * activation (of an elementwise op or an epilogue) or binary op `workload`
 * uses: 0 for those of the first release, 4 (1.4) for transpose, elu,
 * softplus and div, 5 for log_softmax, exp and log, 6 for silu, hardswish
 * and hardsigmoid, 7 for gelu, gelu_tanh and erf, 8 (2.0) for resize, normalize and matmul. hetc
 * hands a workload only to plugins built for that version or a later one:
 * an older plugin need not check what its header did not name (an
 * epilogue's activation was one of four before minor 6, one of seven
 * before minor 7). */
uint32_t hetc_workload_abi_level(const hetc_plugin_workload_t *workload);

/* Why device `device_index` of `entry` does not take `workload`, into
 * `out`: for a plugin older than the workload's level, that (its
 * supports_why is not asked); else the message of the plugin's
 * supports_why (ABI minor 3), or "the plugin gives no reason". */
void hetc_registry_unsupported_reason(const hetc_plugin_entry_t *entry, int32_t device_index,
                                      const hetc_plugin_workload_t *workload, char *out, size_t size);

/* A target as the user names it: "NAME", every device of the plugin, or
 * "NAME:INDEX", its device INDEX (plugin.h's device_index). Resolves NAME
 * as hetc_registry_target does; *out_device_index is INDEX, or -1 for every
 * device. NOT_FOUND when the plugin has no device INDEX. */
hetc_status_t hetc_registry_target_spec(hetc_registry_t *registry, const char *spec, hetc_plugin_entry_t **out_entry,
                                        int32_t *out_device_index);

/* A ready plugin whose target name is `target`, with its instance created.
 * NOT_FOUND lists the targets there are; UNAVAILABLE gives the reason. */
hetc_status_t hetc_registry_target(hetc_registry_t *registry, const char *target,
                                   hetc_plugin_entry_t **out_entry);

/* Creates the entry's instance if needed (an instance failure marks the
 * entry unavailable and returns the reason), then resolves its device peaks
 * when the registry keeps them (hetc_registry_keep_peaks, plugins/peaks.h). */
hetc_status_t hetc_registry_instance(hetc_plugin_entry_t *entry);

#endif /* HETC_DRIVER_PLUGINS_REGISTRY_H_ */
