/* `hetc plugins`: every candidate found, loaded or refused, with devices. */
#include <stdio.h>
#include <stdlib.h>

#include "cli/cli.h"
#include "plugins/registry.h"

static const char *state_name(hetc_plugin_state_t state) {
  switch (state) {
    case HETC_PLUGIN_STATE_READY: return "ready";
    case HETC_PLUGIN_STATE_UNAVAILABLE: return "unavailable";
    default: return "refused";
  }
}

static const char *kind_name(int32_t kind) {
  switch (kind) {
    case HETC_PLUGIN_DEVICE_CPU: return "cpu";
    case HETC_PLUGIN_DEVICE_GPU: return "gpu";
    case HETC_PLUGIN_DEVICE_ACCELERATOR: return "accelerator";
    default: return "unknown";
  }
}

int hetc_cli_plugins(int argc, char **argv) {
  (void)argv;
  if (argc != 0) {
    fprintf(stderr, "usage: hetc plugins\n");
    return HETC_EXIT_USAGE;
  }
  hetc_registry_t *registry = NULL;
  hetc_status_t status = hetc_registry_open(&registry);
  if (status) return hetc_cli_report(status);
  char *path = hetc_registry_search_path();
  printf("search path: %s\n", path ? path : "?");
  free(path);
  printf("%d candidate%s\n", registry->count, registry->count == 1 ? "" : "s");
  for (int32_t i = 0; i < registry->count; ++i) {
    hetc_plugin_entry_t *entry = &registry->entries[i];
    /* Devices are enumerated by creating the instance; a failure there
     * turns the entry unavailable with the reason. */
    if (entry->state == HETC_PLUGIN_STATE_READY) hetc_status_free(hetc_registry_instance(entry));
    const hetc_plugin_t *p = entry->plugin;
    printf("\n%s\n  state: %s\n", entry->path, state_name(entry->state));
    if (p) {
      printf("  target: %s\n  vendor: %s\n  version: %s\n  ABI: %u.%u\n  description: %s\n",
             p->name, p->vendor ? p->vendor : "", p->version ? p->version : "",
             p->header.abi_major, p->header.abi_minor, p->description ? p->description : "");
    }
    if (entry->reason) printf("  reason: %s\n", entry->reason);
    if (entry->instance) {
      int32_t devices = p->device_count(entry->instance);
      for (int32_t d = 0; d < devices; ++d) {
        const hetc_plugin_device_t *dev = p->device_get(entry->instance, d);
        if (!dev) continue;
        printf("  device %d: %s (%s), %d compute units, SIMD %d, peak %.1f GFLOPS fp32\n"
               "            fingerprint %s\n",
               d, dev->name ? dev->name : "?", kind_name(dev->kind), dev->compute_units,
               dev->simd_width_fp32, dev->peak_gflops_fp32, dev->fingerprint ? dev->fingerprint : "?");
      }
    }
  }
  hetc_registry_free(registry);
  return HETC_EXIT_OK;
}
