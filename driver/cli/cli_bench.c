/* `hetc bench PACKAGE [--runs N] [--warmup N] [--input FILE | --random-input SEED]`:
 * latency percentiles of whole runs after warm-up. */
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"

static const char usage[] =
    "usage: hetc bench PACKAGE [--runs N] [--warmup N] [--input FILE | --random-input SEED]\n"
    "  --runs N     timed runs (default 100)\n"
    "  --warmup N   untimed runs first (default 10)\n"
    "  inputs as for `hetc run` (default: --random-input 0)\n";

int hetc_cli_bench(int argc, char **argv) {
  const char *package = NULL, *input = NULL, *value;
  long long seed = -1, runs = 100, warmup = 10;
  int bad_value = 0;
  for (int i = 0; i < argc; ++i) {
    if ((value = hetc_cli_option(argc, argv, &i, "--runs"))) {
      runs = hetc_cli_parse_count(value);
      bad_value |= runs < 1 || runs > 1000000;
    } else if ((value = hetc_cli_option(argc, argv, &i, "--warmup"))) {
      warmup = hetc_cli_parse_count(value);
      bad_value |= warmup < 0 || warmup > 1000000;
    } else if ((value = hetc_cli_option(argc, argv, &i, "--random-input"))) {
      seed = hetc_cli_parse_count(value);
      bad_value |= seed < 0;
    } else if ((value = hetc_cli_option(argc, argv, &i, "--input"))) {
      input = value;
    } else if (argv[i][0] != '-' && !package) {
      package = argv[i];
    } else {
      fprintf(stderr, "hetc bench: unexpected argument '%s'\n%s", argv[i], usage);
      return HETC_EXIT_USAGE;
    }
  }
  if (!package || bad_value || (input && seed >= 0)) {
    fputs(usage, stderr);
    return HETC_EXIT_USAGE;
  }
  hetc_context_t *context = NULL;
  hetc_package_t *rt = NULL;
  hetc_bench_result_t result;
  const hetc_bench_options_t options = {(int32_t)warmup, (int32_t)runs};
  hetc_status_t status = hetc_context_create(&context);
  if (!status) status = hetc_package_open(context, package, &rt);
  if (!status) status = hetc_cli_set_inputs(rt, input, seed < 0 ? 0 : seed);
  if (!status) status = hetc_package_bench(rt, &options, &result);
  if (!status)
    printf("%s: %d runs after %d warm-up runs: p50 %.3f ms, p90 %.3f ms, p99 %.3f ms "
           "(min %.3f ms, mean %.3f ms, max %.3f ms)\n",
           package, result.runs, options.warmup_runs, result.p50 * 1e3, result.p90 * 1e3, result.p99 * 1e3,
           result.min * 1e3, result.mean * 1e3, result.max * 1e3);
  hetc_package_close(rt);
  hetc_context_destroy(context);
  return hetc_cli_report(status);
}
