/* `hetc plugin-check PLUGIN.so [--device N] [--quick] [--timeout S]`. */
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"

static const char usage[] =
    "usage: hetc plugin-check PLUGIN.so [--device N] [--quick] [--timeout S]\n"
    "  --device N    check only device N, 0 to 1048576 (default: every device)\n"
    "  --quick       fewer workloads and sampled configs\n"
    "  --timeout S   whole seconds one check may take before it counts as hung, 1 to 86400 (default 600)\n"
    "Exit status: 0 every check passed, 1 a check failed, 2 usage or no such file.\n";

int hetc_cli_plugin_check(int argc, char **argv) {
  hetc_plugin_check_options_t options = hetc_plugin_check_default_options();
  const char *path = NULL;
  long long device = options.device, seconds = options.item_timeout_s;
  int quick = 0;
  hetc_cli_args_t args;
  hetc_cli_args_init(&args, "plugin-check", usage, argc, argv);
  while (hetc_cli_args_next(&args))
    (void)(hetc_cli_count(&args, "--device", 0, 1 << 20, &device) ||
           hetc_cli_count(&args, "--timeout", 1, 86400, &seconds) || hetc_cli_flag(&args, "--quick", &quick) ||
           hetc_cli_positional(&args, "PLUGIN.so", &path));
  if (!path) hetc_cli_error(&args, "no PLUGIN.so given");
  if (args.failed) return HETC_EXIT_USAGE;
  options.device = (int32_t)device;
  options.item_timeout_s = (int32_t)seconds;
  options.quick = quick;
  hetc_plugin_check_summary_t summary;
  hetc_status_t status = hetc_plugin_check(path, &options, stdout, &summary);
  if (status) return hetc_cli_report(status);
  return summary.failed ? HETC_EXIT_FAILURE : HETC_EXIT_OK;
}
