/* `hetc compare MODEL.json --targets T1,T2[,...] [--records PATH] [--runs N]
 * [--warmup N] [--csv FILE] [--json FILE] [--html FILE] [--keep DIR]
 * [--quiet]`: each task's best template and each package's latency on
 * several devices side by side (hetc_compare_model). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/cli.h"

static const char usage[] =
    "usage: hetc compare MODEL.json|MODEL.onnx --targets T1,T2[,...] [--records PATH] [--runs N] [--warmup N]\n"
    "                    [--csv FILE] [--json FILE] [--html FILE] [--keep DIR] [--quiet]\n"
    "  --targets T1,T2,...  1 to 8 targets, each once\n"
    "  --runs N     timed runs of each package, 1 to 1000000 (default 10)\n"
    "  --warmup N   untimed runs first, 0 to 1000000 (default 2)\n"
    "  --csv FILE   one row per task and device and per package (column `kind`)\n"
    "  --json FILE  everything, every template included\n"
    "  --html FILE  a self-contained report with charts\n"
    "  --keep DIR   keep the packages as DIR/<target>.hetc and DIR/hetero.hetc\n" HETC_CLI_INPUT_SHAPE_USAGE;

typedef struct report_file_t {
  const char *path;
  hetc_compare_format_t format;
} report_file_t;

int hetc_cli_compare(int argc, char **argv) {
  hetc_compare_options_t options = {.runs = 10, .warmup_runs = 2};
  report_file_t reports[] = {{NULL, HETC_COMPARE_CSV}, {NULL, HETC_COMPARE_JSON}, {NULL, HETC_COMPARE_HTML}};
  long long runs = 10, warmup = 2;
  int quiet = 0;
  hetc_cli_targets_t targets = {.text = NULL};
  hetc_cli_model_t model_arg = {0};
  hetc_cli_args_t args;
  hetc_cli_args_init(&args, "compare", usage, argc, argv);
  while (hetc_cli_args_next(&args))
    (void)(hetc_cli_targets(&args, "--targets", HETC_COMPARE_MAX_DEVICES, &targets) ||
           hetc_cli_text(&args, "--records", "a path", &options.records_path) ||
           hetc_cli_count(&args, "--runs", 1, 1000000, &runs) ||
           hetc_cli_count(&args, "--warmup", 0, 1000000, &warmup) ||
           hetc_cli_text(&args, "--csv", "a path", &reports[0].path) ||
           hetc_cli_text(&args, "--json", "a path", &reports[1].path) ||
           hetc_cli_text(&args, "--html", "a path", &reports[2].path) ||
           hetc_cli_text(&args, "--keep", "a directory", &options.keep_dir) ||
           hetc_cli_flag(&args, "--quiet|-q", &quiet) || hetc_cli_input_shape(&args, &model_arg) || hetc_cli_positional(&args, "MODEL.json", &model_arg.path));
  if (!model_arg.path) hetc_cli_error(&args, "no MODEL.json given");
  if (!targets.text) hetc_cli_error(&args, "--targets is required");
  /* Two reports to one file: the second would replace the first. */
  static const char *const report_flags[] = {"--csv", "--json", "--html"};
  for (int a = 0; a < 3; ++a)
    for (int b = a + 1; b < 3; ++b)
      if (reports[a].path && reports[b].path && !strcmp(reports[a].path, reports[b].path))
        hetc_cli_error(&args, "%s and %s name the same file '%s'", report_flags[a], report_flags[b], reports[a].path);
  if (args.failed) return HETC_EXIT_USAGE;
  options.targets = targets.names;
  options.num_targets = targets.count;
  options.runs = (int32_t)runs;
  options.warmup_runs = (int32_t)warmup;
  /* As compile: progress only for a person watching. */
  options.progress = !quiet && isatty(2) ? stderr : NULL;
  hetc_model_t *graph = NULL;
  hetc_context_t *context = NULL;
  hetc_compare_result_t *result = NULL;
  hetc_status_t status = hetc_cli_model_load(&model_arg, &graph);
  if (!status) status = hetc_context_create(&context);
  hetc_interrupt_watch();
  if (!status) status = hetc_compare_model(context, graph, &options, &result);
  if (!status) status = hetc_compare_write(result, HETC_COMPARE_TEXT, stdout);
  for (size_t r = 0; !status && r < sizeof(reports) / sizeof(reports[0]); ++r)
    if (reports[r].path) status = hetc_compare_write_file(result, reports[r].format, reports[r].path);
  hetc_compare_result_destroy(result);
  hetc_context_destroy(context);
  hetc_model_free(graph);
  return hetc_cli_report(status);
}
