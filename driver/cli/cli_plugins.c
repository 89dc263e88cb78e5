/* `hetc plugins [--records PATH]`: every candidate found, loaded or
 * refused, with devices. Each device's peak is the effective one
 * (hetc_device_peak): the best kept for its fingerprint in the records store
 * when that is above what the plugin measured this run, which this run's
 * figure is folded into. */
#include <stdio.h>
#include <stdlib.h>

#include "cli/cli.h"

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

/* "peak 233.1 GFLOPS fp32", and where the figure is the kept one, what
 * it is the best of and what this run measured. */
static void print_peak(const hetc_plugin_device_t *dev) {
  hetc_device_peak_t peak;
  hetc_device_peak(dev, &peak);
  char source[96];
  hetc_device_peak_source(&peak, source, sizeof(source));
  printf("peak %.1f GFLOPS fp32%s", peak.gflops, source);
}

int hetc_cli_plugins(int argc, char **argv) {
  const char *records = NULL;
  hetc_cli_args_t args;
  hetc_cli_args_init(&args, "plugins", "usage: hetc plugins [--records PATH]\n", argc, argv);
  while (hetc_cli_args_next(&args)) (void)hetc_cli_text(&args, "--records", "a path", &records);
  if (args.failed) return HETC_EXIT_USAGE;
  /* A store named with --records must be one (tune and records import
   * create stores, not this): refused by name before anything runs. */
  if (records) {
    hetc_records_t *store = NULL;
    hetc_status_t checked = hetc_records_open_as(records, HETC_RECORDS_WRITE, &store);
    hetc_records_close(store);
    if (checked) return hetc_cli_report(checked);
  }
  hetc_context_t *context = NULL;
  hetc_status_t status = hetc_context_create(&context);
  if (status) return hetc_cli_report(status);
  /* Every peak measured here counts towards its device's kept one, in a
   * store that exists. */
  hetc_context_keep_peaks(context, records, HETC_PEAKS_RECORD);
  char *path = NULL;
  hetc_status_free(hetc_plugins_search_path(&path));
  printf("search path: %s\n", path ? path : "?");
  hetc_free(path);
  const int32_t count = hetc_context_plugin_count(context);
  printf("%d candidate%s\n", count, count == 1 ? "" : "s");
  for (int32_t i = 0; i < count; ++i) {
    hetc_plugin_info_t info;
    status = hetc_context_plugin_info(context, i, &info);
    if (status) break;
    const hetc_plugin_t *p = info.plugin;
    printf("\n%s\n  state: %s\n", info.path, state_name((hetc_plugin_state_t)info.state));
    if (p) {
      printf("  target: %s\n  vendor: %s\n  version: %s\n  ABI: %u.%u\n  description: %s\n",
             p->name, p->vendor ? p->vendor : "", p->version ? p->version : "",
             p->header.abi_major, p->header.abi_minor, p->description ? p->description : "");
    }
    if (info.reason) printf("  reason: %s\n", info.reason);
    for (int32_t d = 0; d < info.device_count; ++d) {
      const hetc_plugin_device_t *dev = hetc_context_plugin_device(context, i, d);
      if (!dev) continue;
      printf("  device %d: %s (%s), %d compute units, SIMD %d, ", d, dev->name ? dev->name : "?",
             kind_name(dev->kind), dev->compute_units, dev->simd_width_fp32);
      print_peak(dev);
      printf("\n            fingerprint %s\n", dev->fingerprint ? dev->fingerprint : "?");
    }
  }
  hetc_context_destroy(context);
  return hetc_cli_report(status);
}
