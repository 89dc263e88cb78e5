/* `hetc compile MODEL.json --targets T[,T...] -o OUT.hetc [--records PATH]
 * [--placement cost|first] [--explain] [--quiet]`. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/cli.h"

#define MAX_TARGETS 16

static const char usage[] =
    "usage: hetc compile MODEL.json|MODEL.onnx --targets T[,T...] -o OUT.hetc [--records PATH]\n"
    "                    [--placement cost|first] [--split auto|never|all] [--sign KEY.secret] [--explain]\n"
    "                    [--quiet]\n"
    "  --targets T,...    1 to 16 targets, each once: a plugin's name (every device it has)\n"
    "                     or NAME:INDEX (one device, as `hetc plugins` numbers them)\n"
    "  -o, --output PATH  the package directory to write\n"
    "  --placement cost   (several targets) each node where the model's expected latency is lowest\n"
    "  --placement first  each node on the first target that supports it\n"
    "  --split auto       (cost placement) split a conv2d by output channels across two devices\n"
    "                     that do not share cores, where that lowers the expected latency\n"
    "  --split never|all  never, or every conv2d that can be split (for testing)\n"
    "  --sign KEY.secret  sign the package with a secret key of `hetc keys new`\n"
    "  --explain          print the placement: each node's device, layouts, expected time, the moves\n" HETC_CLI_INPUT_SHAPE_USAGE;

int hetc_cli_compile(int argc, char **argv) {
  static const int placements[] = {HETC_PLACEMENT_COST, HETC_PLACEMENT_FIRST};
  static const int splits[] = {HETC_SPLIT_AUTO, HETC_SPLIT_NEVER, HETC_SPLIT_ALL};
  const char *out = NULL, *records = NULL, *sign_key = NULL;
  int quiet = 0, explain = 0, placement = 0, split = 0;
  hetc_cli_targets_t targets = {.text = NULL};
  hetc_cli_model_t model_arg = {0};
  hetc_cli_args_t args;
  hetc_cli_args_init(&args, "compile", usage, argc, argv);
  while (hetc_cli_args_next(&args))
    (void)(hetc_cli_targets(&args, "--targets", MAX_TARGETS, &targets) ||
           hetc_cli_text(&args, "--output|-o", "a path", &out) ||
           hetc_cli_text(&args, "--records", "a path", &records) || hetc_cli_flag(&args, "--quiet|-q", &quiet) ||
           hetc_cli_text(&args, "--sign", "a secret key file", &sign_key) ||
           hetc_cli_flag(&args, "--explain", &explain) ||
           hetc_cli_choice(&args, "--placement", "cost|first", &placement) ||
           hetc_cli_choice(&args, "--split", "auto|never|all", &split) ||
           hetc_cli_input_shape(&args, &model_arg) || hetc_cli_positional(&args, "MODEL.json", &model_arg.path));
  if (!model_arg.path) hetc_cli_error(&args, "no MODEL.json given");
  if (!targets.text) hetc_cli_error(&args, "--targets is required");
  if (!out) hetc_cli_error(&args, "-o is required");
  if (args.failed) return HETC_EXIT_USAGE;
  hetc_model_t *graph = NULL;
  hetc_context_t *context = NULL;
  hetc_compile_report_t report;
  hetc_compile_options_t options = {.targets = targets.names, .num_targets = targets.count,
                                   .progress = !quiet && isatty(2), .records_path = records,
                                   .placement = placements[placement], .explain = explain, .split = splits[split],
                                   .sign_key = sign_key};
  hetc_status_t status = hetc_cli_model_load(&model_arg, &graph);
  if (!status) status = hetc_context_create(&context);
  hetc_interrupt_watch();
  if (!status) status = hetc_compile(context, graph, &options, out, &report);
  if (!status) {
    printf("%s: compiled %s for %s: %d kernels (%d layout transforms, %d copies), %.1f MB weights, %.1f s\n",
           out, hetc_model_name(graph), report.targets_used, report.kernels, report.transforms, report.copies,
           (double)report.weights_bytes / 1e6, report.build_seconds);
    printf("configs: %d tuned, %d from the nearest tuned workload, %d predicted, %d defaults\n",
           report.configs[1], report.configs[2], report.configs[3], report.configs[0]);
    if (report.predicted_seconds > 0)
      printf("placement: expected latency %.3f ms (%s)\n", report.predicted_seconds * 1e3,
             options.placement == HETC_PLACEMENT_FIRST ? "first fit"
             : report.selection_kept           ? "kept in the records by an earlier tune or compile"
             : report.placement_exact          ? "lowest under the cost model"
                                               : "state-capped search, not proven lowest");
    if (report.default_seconds > 0)
      printf("graph-level selection: %.3f ms expected with every kernel at its template's default\n",
             report.default_seconds * 1e3);
    if (report.splits > 0) printf("split: %d conv2d across two devices\n", report.splits);
    if (explain)
      printf("kernels built: %d, each once (%d steps use a kernel built for placement or for another step)\n",
             report.kernels_built, report.kernels_reused);
    if (report.concat_views > 0)
      printf("concat: %d written in place by the producers of their inputs (no kernel)\n", report.concat_views);
    if (report.slice_views > 0)
      printf("slice: %d read where they lie in their inputs (no kernel)\n", report.slice_views);
    if (report.avg_inner_loop_length > 0)
      printf("average innermost loop length of the conv2d kernels: %.1f\n", report.avg_inner_loop_length);
  }
  hetc_context_destroy(context);
  hetc_model_free(graph);
  return hetc_cli_report(status);
}
