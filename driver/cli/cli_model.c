/* The model argument every model-reading command shares (cli.h): a
 * model.json or an ONNX file, and --input-shape for the latter. */
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"

int hetc_cli_input_shape(hetc_cli_args_t *args, hetc_cli_model_t *model) {
  const char *text = NULL;
  if (!hetc_cli_text(args, "--input-shape", "NAME=DIMS[,NAME=DIMS...]", &text)) return 0;
  if (!text) return 1;
  if (strlen(text) >= sizeof(model->storage)) {
    hetc_cli_error(args, "--input-shape: the list is longer than %zu bytes", sizeof(model->storage) - 1);
    return 1;
  }
  strcpy(model->storage, text);
  model->num_shapes = 0;
  for (char *entry = model->storage; entry;) {
    char *comma = strchr(entry, ',');
    if (comma) *comma = 0;
    if (!entry[0] || model->num_shapes == (int32_t)(sizeof(model->shapes) / sizeof(model->shapes[0]))) {
      hetc_cli_error(args, "--input-shape: expected NAME=DIMS[,NAME=DIMS...] (at most 16), got '%s'", text);
      return 1;
    }
    model->shapes[model->num_shapes++] = entry;
    entry = comma ? comma + 1 : NULL;
  }
  model->input_shape = text;
  return 1;
}

static void print_note(void *user, const char *message) {
  (void)user;
  fprintf(stderr, "hetc: note: %s\n", message);
}

hetc_status_t hetc_cli_model_load(hetc_cli_model_t *model, hetc_model_t **out_model) {
  const hetc_model_load_options_t options = {.struct_size = sizeof(options),
                                             .input_shapes = model->shapes,
                                             .num_input_shapes = model->num_shapes,
                                             .note = print_note};
  return hetc_model_load_with_options(model->path, &options, out_model);
}
