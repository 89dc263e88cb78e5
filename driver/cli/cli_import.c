/* `hetc import MODEL.onnx -o MODEL.json [--input-shape NAME=DIMS,...]`:
 * writes an ONNX model as model.json and a weights file beside it, for
 * users who want to read or edit what hetc compiles. */
#include <stdio.h>

#include "cli/cli.h"

static const char *const usage =
    "usage: hetc import MODEL.onnx -o MODEL.json [--input-shape NAME=DIMS[,...]]\n"
    "  writes MODEL.json and MODEL.weights (its parameters) beside it\n" HETC_CLI_INPUT_SHAPE_USAGE;

int hetc_cli_import(int argc, char **argv) {
  hetc_cli_model_t model = {0};
  const char *out = NULL;
  hetc_cli_args_t args;
  hetc_cli_args_init(&args, "import", usage, argc, argv);
  while (hetc_cli_args_next(&args))
    (void)(hetc_cli_text(&args, "-o|--output", "a path", &out) || hetc_cli_input_shape(&args, &model) ||
           hetc_cli_positional(&args, "MODEL.onnx", &model.path));
  if (!model.path) hetc_cli_error(&args, "no MODEL.onnx given");
  if (!out) hetc_cli_error(&args, "-o is required");
  if (args.failed) return HETC_EXIT_USAGE;
  hetc_model_t *graph = NULL;
  hetc_status_t status = hetc_cli_model_load(&model, &graph);
  if (!status) status = hetc_model_save(graph, out);
  if (!status) printf("%s: wrote %s and its weights file\n", hetc_model_name(graph), out);
  hetc_model_free(graph);
  return hetc_cli_report(status);
}
