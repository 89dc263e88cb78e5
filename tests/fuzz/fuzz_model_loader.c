/* libFuzzer target for the model loader: arbitrary bytes as model.json.
 *
 * The loader treats its input as hostile (driver/model/model.h), so for any
 * input it must return without crashing, leaking or invoking undefined
 * behaviour, and every rejection must name the file at fault: the model
 * ("fuzz.json: ...") or a weights file it names (an absolute path, since
 * relative names resolve under /nonexistent). A graph it accepts must be
 * wired in topological order with every value inferred. Violations abort,
 * which libFuzzer reports as a crash.
 *
 * Built only with -DHETC_FUZZ=ON and clang; see tests/fuzz/CMakeLists.txt. */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/model.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check(int ok, const char *what, const char *message) {
  if (ok) return;
  fprintf(stderr, "fuzz_model_loader: %s: %s\n", what, message ? message : "");
  abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  hetc_graph_t *graph = NULL;
  hetc_status_t status =
      hetc_model_load_buffer((const char *)data, size, "fuzz.json", "/nonexistent", &graph);
  if (status) {
    const char *message = hetc_status_message(status);
    hetc_status_code_t code = hetc_status_code(status);
    check(graph == NULL, "a failed load set the graph", message);
    check(code == HETC_STATUS_BAD_INPUT || code == HETC_STATUS_IO_ERROR ||
              code == HETC_STATUS_OUT_OF_MEMORY,
          "unexpected status code", message);
    if (code != HETC_STATUS_OUT_OF_MEMORY)
      check(strncmp(message, "fuzz.json: ", 11) == 0 || message[0] == '/',
            "message does not start with the file at fault", message);
    hetc_status_free(status);
    return 0;
  }
  check(graph != NULL, "a successful load gave no graph", "");
  check(graph->num_nodes >= 1 && graph->num_outputs >= 1, "empty graph", graph->name);
  for (int32_t k = 0; k < graph->num_nodes; ++k) {
    const hetc_node_t *node = &graph->nodes[k];
    check(node->output == graph->num_inputs + k, "node output is not its value", node->name);
    for (int32_t i = 0; i < node->num_inputs; ++i) {
      int32_t v = node->inputs[i];
      check(v >= 0 && v < graph->num_values && graph->values[v].producer < k,
            "node input is not an earlier value", node->name);
    }
    const hetc_plugin_tensor_t *t = &graph->values[node->output].type;
    check(t->rank >= 1 && t->rank <= HETC_PLUGIN_MAX_RANK, "output rank", node->name);
    int64_t count = 1;
    for (int32_t d = 0; d < t->rank; ++d) {
      check(t->shape[d] >= 1, "output dim < 1", node->name);
      count *= t->shape[d];
      check(count <= (INT64_C(1) << 31), "output above 2^31 elements", node->name);
    }
  }
  hetc_graph_free(graph);
  return 0;
}
