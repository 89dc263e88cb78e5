/* `hetc plugin-check PLUGIN.so [--device N] [--quick] [--timeout S]`. */
#include <stdio.h>
#include <string.h>

#include "check/plugin_check.h"
#include "cli/cli.h"

static const char usage[] =
    "usage: hetc plugin-check PLUGIN.so [--device N] [--quick] [--timeout S]\n"
    "  --device N    check only device N (default: every device)\n"
    "  --quick       fewer workloads and sampled configs\n"
    "  --timeout S   seconds one check may take before it counts as hung (default 600)\n"
    "Exit status: 0 every check passed, 1 a check failed, 2 usage or no such file.\n";

int hetc_cli_plugin_check(int argc, char **argv) {
  hetc_plugin_check_options_t options = hetc_plugin_check_default_options();
  const char *path = NULL, *value;
  for (int i = 0; i < argc; ++i) {
    if ((value = hetc_cli_option(argc, argv, &i, "--device"))) {
      long long device = hetc_cli_parse_count(value);
      if (device < 0 || device > 1 << 20) {
        fprintf(stderr, "hetc plugin-check: --device takes a device number, not '%s'\n%s", value, usage);
        return HETC_EXIT_USAGE;
      }
      options.device = (int32_t)device;
    } else if ((value = hetc_cli_option(argc, argv, &i, "--timeout"))) {
      long long seconds = hetc_cli_parse_count(value);
      if (seconds < 1 || seconds > 86400) {
        fprintf(stderr, "hetc plugin-check: --timeout takes 1 to 86400 seconds, not '%s'\n%s", value, usage);
        return HETC_EXIT_USAGE;
      }
      options.item_timeout_s = (int32_t)seconds;
    } else if (!strcmp(argv[i], "--quick")) {
      options.quick = 1;
    } else if (argv[i][0] == '-' || path) {
      fprintf(stderr, "hetc plugin-check: unexpected argument '%s'\n%s", argv[i], usage);
      return HETC_EXIT_USAGE;
    } else {
      path = argv[i];
    }
  }
  if (!path) {
    fputs(usage, stderr);
    return HETC_EXIT_USAGE;
  }
  hetc_plugin_check_summary_t summary;
  hetc_status_t status = hetc_plugin_check(path, &options, stdout, &summary);
  if (status) return hetc_cli_report(status);
  return summary.failed ? HETC_EXIT_FAILURE : HETC_EXIT_OK;
}
