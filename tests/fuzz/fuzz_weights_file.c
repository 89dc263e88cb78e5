/* libFuzzer target for the weights-file reader (api/model-format.md,
 * "Weights file"): arbitrary bytes as the .weights file of a small fixed
 * model (conv with bias, batch_norm, relu; the model of
 * tests/model/bad/wfile_*.json, whose .weights files seed the corpus).
 *
 * The reader must never crash, leak or read out of bounds; a rejection must
 * be BAD_INPUT and start with the weights file's display name; an accepted
 * file must have filled every param with finite values (var >= 0). */
#define _GNU_SOURCE /* memfd_create */

#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "model/model.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char model_json[] =
    "{\"format\": \"hetc-model\", \"version\": 1, \"name\": \"fuzz\",\n"
    " \"inputs\": [{\"name\": \"data\", \"shape\": [1, 3, 8, 8], \"dtype\": \"float32\","
    " \"layout\": \"NCHW\"}],\n"
    " \"weights\": {\"init\": \"random\", \"seed\": 1},\n"
    " \"nodes\": [\n"
    "  {\"name\": \"conv1\", \"op\": \"conv2d\", \"inputs\": [\"data\"], \"attrs\": {\"channels\": 4,"
    " \"kernel\": [3, 3], \"padding\": [1, 1], \"bias\": true}},\n"
    "  {\"name\": \"bn1\", \"op\": \"batch_norm\", \"inputs\": [\"conv1\"]},\n"
    "  {\"name\": \"relu1\", \"op\": \"relu\", \"inputs\": [\"bn1\"]}\n"
    " ],\n"
    " \"outputs\": [\"relu1\"]}\n";

/* The bytes go to an in-memory file (a disk file is ten times slower). */
static char path[64];
static int fd = -1;

static void check(int ok, const char *what, const char *message) {
  if (ok) return;
  fprintf(stderr, "fuzz_weights_file: %s: %s\n", what, message ? message : "");
  abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (fd < 0) {
    fd = memfd_create("fuzz.weights", 0);
    check(fd >= 0, "memfd_create failed", "");
    snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
  }
  check(ftruncate(fd, 0) == 0 && (size == 0 || pwrite(fd, data, size, 0) == (ssize_t)size),
        "cannot write the temporary file", path);

  hetc_graph_t *graph = NULL;
  hetc_status_t status =
      hetc_model_load_buffer(model_json, sizeof(model_json) - 1, "fuzz.json", ".", &graph);
  check(status == NULL, "the fixed model does not load", hetc_status_message(status));
  status = hetc_weights_load_file(graph, path, "fuzz.weights");
  if (status) {
    const char *message = hetc_status_message(status);
    check(hetc_status_code(status) == HETC_STATUS_BAD_INPUT, "unexpected status code", message);
    check(strncmp(message, "fuzz.weights: ", 14) == 0, "message does not name the file", message);
    hetc_status_free(status);
  } else {
    for (int32_t k = 0; k < graph->num_nodes; ++k) {
      const hetc_node_t *node = &graph->nodes[k];
      for (int slot = 0; slot < HETC_PARAM_SLOTS; ++slot) {
        const hetc_param_t *p = &node->params[slot];
        for (int64_t i = 0; i < p->count; ++i) {
          check(isfinite(p->data[i]), "accepted a non-finite value", node->name);
          if (node->op == HETC_OP_BATCH_NORM && slot == HETC_PARAM_VAR)
            check(p->data[i] >= 0, "accepted a negative variance", node->name);
        }
      }
    }
  }
  hetc_graph_free(graph);
  return 0;
}
