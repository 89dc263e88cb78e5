/* libFuzzer target for the ONNX importer: arbitrary bytes as model.onnx.
 *
 * The importer treats its input as hostile (driver/model/onnx_import.h):
 * for any input it must return without crashing, leaking or invoking
 * undefined behaviour, and every rejection must name the model file
 * ("fuzz.onnx: ..."). A graph it accepts must be wired in topological
 * order with every value inferred. Violations abort, which libFuzzer
 * reports as a crash.
 *
 * Built only with -DHETC_FUZZ=ON and clang; see tests/fuzz/CMakeLists.txt. */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/onnx_import.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check(int ok, const char *what, const char *message) {
  if (ok) return;
  fprintf(stderr, "fuzz_onnx_import: %s: %s\n", what, message ? message : "");
  abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  hetc_graph_t *graph = NULL;
  /* A symbolic input of the corpus's models resolves like the tests'. */
  const char *shapes[1] = {"input=1x3x8x8"};
  const hetc_model_load_options_t options = {.struct_size = sizeof(options), .input_shapes = shapes,
                                             .num_input_shapes = 1};
  hetc_status_t status = hetc_onnx_import_buffer(data, size, "fuzz.onnx", "/nonexistent", size % 2 ? &options : NULL,
                                                 &graph);
  if (status) {
    const char *message = hetc_status_message(status);
    const hetc_status_code_t code = hetc_status_code(status);
    check(graph == NULL, "a failed import set the graph", message);
    check(code == HETC_STATUS_BAD_INPUT || code == HETC_STATUS_IO_ERROR || code == HETC_STATUS_OUT_OF_MEMORY,
          "unexpected status code", message);
    if (code != HETC_STATUS_OUT_OF_MEMORY)
      check(strncmp(message, "fuzz.onnx: ", 11) == 0 || strncmp(message, "--input-shape: ", 15) == 0,
            "a rejection does not name the file", message);
    hetc_status_free(status);
    return 0;
  }
  check(graph->num_nodes >= 1 && graph->num_outputs >= 1, "an empty graph was accepted", graph->name);
  for (int32_t k = 0; k < graph->num_nodes; ++k) {
    const hetc_node_t *node = &graph->nodes[k];
    check(node->output == graph->num_inputs + k, "a node's value is out of place", node->name);
    for (int32_t i = 0; i < node->num_inputs; ++i)
      check(node->inputs[i] >= 0 && node->inputs[i] < node->output, "a node reads a later value", node->name);
  }
  for (int32_t v = 0; v < graph->num_values; ++v)
    check(graph->values[v].type.rank >= 1, "a value was not inferred", graph->values[v].name);
  hetc_graph_free(graph);
  return 0;
}
