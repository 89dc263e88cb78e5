/* `hetc compile MODEL.json --targets T[,T...] -o OUT.hetc [--records PATH]
 * [--placement cost|first] [--explain] [--quiet]`. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/cli.h"
#include "common/interrupt.h"

#define MAX_TARGETS 16

int hetc_cli_compile(int argc, char **argv) {
  const char *model = NULL, *out = NULL, *targets_arg = NULL, *records = NULL;
  int quiet = 0, explain = 0, placement = HETC_PLACEMENT_COST, split = HETC_SPLIT_AUTO;
  for (int i = 0; i < argc; ++i) {
    if (!strcmp(argv[i], "--targets") && i + 1 < argc) {
      targets_arg = argv[++i];
    } else if (!strncmp(argv[i], "--targets=", 10)) {
      targets_arg = argv[i] + 10;
    } else if ((!strcmp(argv[i], "-o") || !strcmp(argv[i], "--output")) && i + 1 < argc) {
      out = argv[++i];
    } else if (!strcmp(argv[i], "--records") && i + 1 < argc) {
      records = argv[++i];
    } else if (!strcmp(argv[i], "-q") || !strcmp(argv[i], "--quiet")) {
      quiet = 1;
    } else if (!strcmp(argv[i], "--explain")) {
      explain = 1;
    } else if (!strcmp(argv[i], "--placement") && i + 1 < argc &&
               (!strcmp(argv[i + 1], "cost") || !strcmp(argv[i + 1], "first"))) {
      placement = !strcmp(argv[++i], "first") ? HETC_PLACEMENT_FIRST : HETC_PLACEMENT_COST;
    } else if (!strcmp(argv[i], "--split") && i + 1 < argc &&
               (!strcmp(argv[i + 1], "auto") || !strcmp(argv[i + 1], "never") || !strcmp(argv[i + 1], "all"))) {
      ++i;
      split = !strcmp(argv[i], "never") ? HETC_SPLIT_NEVER : !strcmp(argv[i], "all") ? HETC_SPLIT_ALL : HETC_SPLIT_AUTO;
    } else if (argv[i][0] != '-' && !model) {
      model = argv[i];
    } else {
      fprintf(stderr, "hetc compile: unexpected argument '%s'\n", argv[i]);
      model = NULL;
      break;
    }
  }
  if (!model || !out || !targets_arg) {
    fprintf(stderr, "usage: hetc compile MODEL.json --targets T[,T...] -o OUT.hetc [--records PATH]\n"
                    "                    [--placement cost|first] [--split auto|never|all] [--explain] [--quiet]\n"
                    "  --placement cost   (several targets) each node where the model's expected latency is lowest\n"
                    "  --placement first  each node on the first target that supports it\n"
                    "  --split auto       (cost placement) split a conv2d by output channels across two devices\n"
                    "                     that do not share cores, where that lowers the expected latency\n"
                    "  --split never|all  never, or every conv2d that can be split (for testing)\n"
                    "  --explain          print the placement: each node's device, layouts, expected time, the moves\n");
    return HETC_EXIT_USAGE;
  }
  char *targets_copy = NULL;
  const char *targets[MAX_TARGETS];
  int32_t num_targets = hetc_cli_split_targets("compile", targets_arg, &targets_copy, targets, MAX_TARGETS);
  if (num_targets < 0) {
    free(targets_copy);
    return HETC_EXIT_USAGE;
  }
  hetc_model_t *graph = NULL;
  hetc_context_t *context = NULL;
  hetc_compile_report_t report;
  hetc_compile_options_t options = {.targets = targets, .num_targets = num_targets, .progress = !quiet && isatty(2),
                                   .records_path = records, .placement = placement, .explain = explain,
                                   .split = split};
  hetc_status_t status = hetc_model_load(model, &graph);
  if (!status) status = hetc_context_create(&context);
  hetc_interrupt_install();
  if (!status) status = hetc_compile(context, graph, &options, out, &report);
  if (!status) {
    printf("%s: compiled %s for %s: %d kernels (%d layout transforms, %d copies), %.1f MB weights, %.1f s\n",
           out, hetc_model_name(graph), targets_arg, report.kernels, report.transforms, report.copies,
           (double)report.weights_bytes / 1e6, report.build_seconds);
    printf("configs: %d tuned, %d from the nearest tuned workload, %d predicted, %d defaults\n",
           report.configs[1], report.configs[2], report.configs[3], report.configs[0]);
    if (report.predicted_seconds > 0)
      printf("placement: expected latency %.3f ms (%s)\n", report.predicted_seconds * 1e3,
             placement == HETC_PLACEMENT_FIRST ? "first fit"
             : report.selection_kept           ? "kept in the records by an earlier tune or compile"
             : report.placement_exact          ? "lowest under the cost model"
                                               : "state-capped search, not proven lowest");
    if (report.default_seconds > 0)
      printf("graph-level selection: %.3f ms expected with every kernel at its template's default\n",
             report.default_seconds * 1e3);
    if (report.splits > 0) printf("split: %d conv2d across two devices\n", report.splits);
    if (report.concat_views > 0)
      printf("concat: %d written in place by the producers of their inputs (no kernel)\n", report.concat_views);
    if (report.avg_inner_loop_length > 0)
      printf("average innermost loop length of the conv2d kernels: %.1f\n", report.avg_inner_loop_length);
  }
  hetc_context_destroy(context);
  hetc_model_free(graph);
  free(targets_copy);
  return hetc_cli_report(status);
}
