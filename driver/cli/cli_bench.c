/* `hetc bench PACKAGE [--runs N] [--warmup N] [--input FILE | --random-input SEED]
 * [--steps]`: latency percentiles of whole runs after warm-up, and with
 * --steps each step's median time inside the runs. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"

static const char usage[] =
    "usage: hetc bench PACKAGE [--runs N] [--warmup N] [--input FILE | --random-input SEED] [--steps]\n"
    "                  [--trust KEY.public]\n"
    "  --runs N     timed runs, 1 to 1000000 (default 100)\n"
    "  --warmup N   untimed runs first, 0 to 1000000 (default 10)\n"
    "  --steps      then N more runs, each step timed: its median, device and share of the sum\n"
    "  --trust KEY.public\n"
    "               open the package only if it is signed with this key's secret key\n"
    "               (`hetc compile --sign`) and unchanged since\n"
    "  inputs as for `hetc run` (default: --random-input 0)\n";

/* `runs` more runs with every step timed; per step its median. */
static hetc_status_t print_steps(hetc_package_t *package, int32_t runs) {
  hetc_step_time_t *steps = NULL;
  int32_t n = 0;
  hetc_status_t status = hetc_package_bench_steps(package, runs, &steps, &n);
  if (status) return status;
  double sum = 0;
  for (int32_t s = 0; s < n; ++s) sum += steps[s].seconds;
  printf("steps (median of %d runs; the sum counts steps that ran at once on different devices twice):\n", runs);
  printf("  %4s  %-6s %-8s %10s %6s  %s\n", "step", "kind", "device", "ms", "share", "name");
  for (int32_t s = 0; s < n; ++s)
    printf("  %4d  %-6s %-8s %10.3f %5.1f%%  %s\n", s, steps[s].copy ? "copy" : "kernel", steps[s].target,
           steps[s].seconds * 1e3, sum > 0 ? 100 * steps[s].seconds / sum : 0, steps[s].name);
  printf("  sum of the steps' medians: %.3f ms\n", sum * 1e3);
  hetc_free(steps);
  return NULL;
}

int hetc_cli_bench(int argc, char **argv) {
  const char *package = NULL, *input = NULL, *trust = NULL;
  long long seed = -1, runs = 100, warmup = 10;
  int steps = 0;
  hetc_cli_args_t args;
  hetc_cli_args_init(&args, "bench", usage, argc, argv);
  while (hetc_cli_args_next(&args))
    (void)(hetc_cli_count(&args, "--runs", 1, 1000000, &runs) ||
           hetc_cli_count(&args, "--warmup", 0, 1000000, &warmup) ||
           hetc_cli_count(&args, "--random-input", 0, INT64_MAX, &seed) ||
           hetc_cli_text(&args, "--input", "a file, or NAME=FILE,... for several inputs", &input) ||
           hetc_cli_text(&args, "--trust", "a public key file", &trust) || hetc_cli_flag(&args, "--steps", &steps) ||
           hetc_cli_positional(&args, "PACKAGE", &package));
  if (!package) hetc_cli_error(&args, "no PACKAGE given");
  if (input && seed >= 0) hetc_cli_error(&args, "--input and --random-input exclude each other");
  if (args.failed) return HETC_EXIT_USAGE;
  hetc_context_t *context = NULL;
  hetc_package_t *rt = NULL;
  hetc_bench_result_t result;
  const hetc_bench_options_t options = {(int32_t)warmup, (int32_t)runs};
  hetc_status_t status = hetc_context_create(&context);
  const hetc_package_open_options_t open_options = {sizeof(open_options), trust};
  if (!status) status = hetc_package_open_with_options(context, package, &open_options, &rt);
  if (!status) status = hetc_cli_set_inputs(rt, input, seed < 0 ? 0 : seed);
  if (!status) status = hetc_package_bench(rt, &options, &result);
  if (!status)
    printf("%s: %d runs after %d warm-up runs: p50 %.3f ms, p90 %.3f ms, p99 %.3f ms "
           "(min %.3f ms, mean %.3f ms, max %.3f ms)\n",
           package, result.runs, options.warmup_runs, result.p50 * 1e3, result.p90 * 1e3, result.p99 * 1e3,
           result.min * 1e3, result.mean * 1e3, result.max * 1e3);
  if (!status && steps) status = print_steps(rt, (int32_t)runs);
  hetc_package_close(rt);
  hetc_context_destroy(context);
  return hetc_cli_report(status);
}
