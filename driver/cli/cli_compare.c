/* `hetc compare MODEL.json --targets T1,T2[,...] [--records PATH] [--runs N]
 * [--warmup N] [--csv FILE] [--json FILE] [--html FILE] [--keep DIR]
 * [--quiet]`: each task's best template and each package's latency on
 * several devices side by side (driver/compare). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/cli.h"
#include "compare/compare.h"

static const char usage[] =
    "usage: hetc compare MODEL.json --targets T1,T2[,...] [--records PATH] [--runs N] [--warmup N]\n"
    "                    [--csv FILE] [--json FILE] [--html FILE] [--keep DIR] [--quiet]\n"
    "  --runs N     timed runs of each package (default 10)\n"
    "  --warmup N   untimed runs first (default 2)\n"
    "  --csv FILE   one row per task and device and per package (column `kind`)\n"
    "  --json FILE  everything, every template included\n"
    "  --html FILE  a self-contained report with charts\n"
    "  --keep DIR   keep the packages as DIR/<target>.hetc and DIR/hetero.hetc\n";

typedef struct report_file_t {
  const char *path;
  hetc_status_t (*write)(const hetc_compare_result_t *, FILE *);
} report_file_t;

int hetc_cli_compare(int argc, char **argv) {
  const char *model = NULL, *targets_arg = NULL, *value;
  hetc_compare_options_t options = {.runs = 10, .warmup_runs = 2};
  report_file_t reports[] = {{NULL, hetc_compare_write_csv}, {NULL, hetc_compare_write_json},
                             {NULL, hetc_compare_write_html}};
  long long runs = 10, warmup = 2;
  int quiet = 0;
  for (int i = 0; i < argc; ++i) {
    if ((value = hetc_cli_option(argc, argv, &i, "--targets"))) {
      targets_arg = value;
    } else if ((value = hetc_cli_option(argc, argv, &i, "--records"))) {
      options.records_path = value;
    } else if ((value = hetc_cli_option(argc, argv, &i, "--runs"))) {
      if ((runs = hetc_cli_parse_count(value)) < 1 || runs > 1000000) {
        fprintf(stderr, "hetc compare: --runs takes a whole number from 1 to 1000000, not '%s'\n%s", value, usage);
        return HETC_EXIT_USAGE;
      }
    } else if ((value = hetc_cli_option(argc, argv, &i, "--warmup"))) {
      if ((warmup = hetc_cli_parse_count(value)) < 0 || warmup > 1000000) {
        fprintf(stderr, "hetc compare: --warmup takes a whole number from 0 to 1000000, not '%s'\n%s", value, usage);
        return HETC_EXIT_USAGE;
      }
    } else if ((value = hetc_cli_option(argc, argv, &i, "--csv"))) {
      reports[0].path = value;
    } else if ((value = hetc_cli_option(argc, argv, &i, "--json"))) {
      reports[1].path = value;
    } else if ((value = hetc_cli_option(argc, argv, &i, "--html"))) {
      reports[2].path = value;
    } else if ((value = hetc_cli_option(argc, argv, &i, "--keep"))) {
      options.keep_dir = value;
    } else if (!strcmp(argv[i], "-q") || !strcmp(argv[i], "--quiet")) {
      quiet = 1;
    } else if (argv[i][0] != '-' && !model) {
      model = argv[i];
    } else {
      fprintf(stderr, "hetc compare: unexpected argument '%s'\n%s", argv[i], usage);
      return HETC_EXIT_USAGE;
    }
  }
  if (!model || !targets_arg) {
    fprintf(stderr, "hetc compare: %s\n%s", !model ? "no model given" : "--targets is required", usage);
    return HETC_EXIT_USAGE;
  }
  char *targets_copy = NULL;
  const char *targets[HETC_COMPARE_MAX_DEVICES];
  int32_t num_targets =
      hetc_cli_split_targets("compare", targets_arg, &targets_copy, targets, HETC_COMPARE_MAX_DEVICES);
  if (num_targets < 0) {
    free(targets_copy);
    fputs(usage, stderr);
    return HETC_EXIT_USAGE;
  }
  options.targets = targets;
  options.num_targets = num_targets;
  options.runs = (int32_t)runs;
  options.warmup_runs = (int32_t)warmup;
  /* As compile: progress only for a person watching. */
  options.progress = !quiet && isatty(2) ? stderr : NULL;
  hetc_model_t *graph = NULL;
  hetc_context_t *context = NULL;
  hetc_compare_result_t result;
  memset(&result, 0, sizeof(result));
  hetc_status_t status = hetc_model_load(model, &graph);
  if (!status) status = hetc_context_create(&context);
  if (!status) status = hetc_compare_run(context, graph, &options, &result);
  if (!status) status = hetc_compare_write_text(&result, stdout);
  for (size_t r = 0; !status && r < sizeof(reports) / sizeof(reports[0]); ++r)
    if (reports[r].path) status = hetc_compare_save(&result, reports[r].write, reports[r].path);
  hetc_compare_result_free(&result);
  hetc_context_destroy(context);
  hetc_model_free(graph);
  free(targets_copy);
  return hetc_cli_report(status);
}
