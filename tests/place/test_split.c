/* Splitting a conv2d by output channels (graph/split.h): the rewritten
 * graph computes what the original did, exactly, for every share; convs
 * that cannot be split are refused and left alone. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "graph/passes.h"
#include "graph/split.h"
#include "model/model.h"
#include "reference/graph_exec.h"

static void assert_ok(hetc_status_t status) {
  if (status) fail_msg("%s", hetc_status_message(status));
}

static hetc_graph_t *load_optimized(const char *sample) {
  char path[4096];
  snprintf(path, sizeof(path), "%s/samples/%s", getenv("HETC_SOURCE_DIR"), sample);
  hetc_graph_t *graph = NULL;
  assert_ok(hetc_model_load_file(path, &graph));
  assert_ok(hetc_graph_optimize(graph));
  return graph;
}

static float **random_inputs(const hetc_graph_t *graph, uint32_t seed) {
  float **inputs = calloc((size_t)graph->num_inputs, sizeof(float *));
  for (int32_t i = 0; i < graph->num_inputs; ++i) {
    int64_t count = hetc_tensor_element_count(&graph->values[graph->inputs[i]].type);
    inputs[i] = malloc(sizeof(float) * (size_t)count);
    for (int64_t e = 0; e < count; ++e) {
      seed = seed * 1664525u + 1013904223u;
      inputs[i][e] = (float)(seed >> 8) / (float)(1u << 24) - 0.5f;
    }
  }
  return inputs;
}

static void free_arrays(float **arrays, int32_t count) {
  for (int32_t i = 0; i < count; ++i) free(arrays[i]);
  free(arrays);
}

/* Outputs of `graph` and of a copy with node `node` split at `first`
 * agree bit for bit: each output channel is the same dot product. */
static void check_split_matches(const char *sample, const char *node_name, int64_t first) {
  hetc_graph_t *graph = load_optimized(sample);
  int32_t node = -1;
  for (int32_t k = 0; k < graph->num_nodes; ++k)
    if (!strcmp(graph->nodes[k].name, node_name)) node = k;
  assert_true(node >= 0);
  hetc_graph_t *split = NULL;
  assert_ok(hetc_graph_clone(graph, &split));
  const int32_t nodes_before = split->num_nodes, value = split->nodes[node].output;
  assert_ok(hetc_graph_split_conv2d(split, node, first));
  assert_int_equal(split->num_nodes, nodes_before + 2);
  char name[256];
  snprintf(name, sizeof(name), "%s.part0", node_name);
  assert_string_equal(split->nodes[node].name, name);
  assert_int_equal(split->nodes[node].attrs.channels, first);
  assert_int_equal(split->nodes[node + 1].attrs.channels, graph->nodes[node].attrs.channels - first);
  assert_int_equal(split->nodes[node + 2].op, HETC_OP_CONCAT);
  assert_string_equal(split->nodes[node + 2].name, node_name);
  assert_int_equal(split->nodes[node + 2].output, value);
  /* Every value's producer is the node that writes it. */
  for (int32_t k = 0; k < split->num_nodes; ++k) assert_int_equal(split->values[split->nodes[k].output].producer, k);

  float **inputs = random_inputs(graph, 11);
  float **want = calloc((size_t)graph->num_outputs, sizeof(float *));
  float **got = calloc((size_t)graph->num_outputs, sizeof(float *));
  assert_ok(hetc_reference_run_graph(graph, (const float *const *)inputs, want));
  assert_ok(hetc_reference_run_graph(split, (const float *const *)inputs, got));
  for (int32_t o = 0; o < graph->num_outputs; ++o) {
    int64_t count = hetc_tensor_element_count(&graph->values[graph->outputs[o]].type);
    assert_memory_equal(want[o], got[o], sizeof(float) * (size_t)count);
  }
  free_arrays(want, graph->num_outputs);
  free_arrays(got, graph->num_outputs);
  free_arrays(inputs, graph->num_inputs);
  hetc_graph_free(split);
  hetc_graph_free(graph);
}

static void splits_compute_the_same(void **state) {
  (void)state;
  check_split_matches("tiny_conv.json", "conv1", 1);
  check_split_matches("tiny_conv.json", "conv1", 4);
  check_split_matches("tiny_conv.json", "conv2", 3);
  check_split_matches("tiny_concat.json", "b.conv", 2);
  check_split_matches("resnet18.json", "layer1.0.conv1", 24); /* 64 channels: the first of a chain */
}

static void refuses_what_it_cannot_split(void **state) {
  (void)state;
  hetc_graph_t *graph = load_optimized("tiny_depthwise.json");
  for (int32_t k = 0; k < graph->num_nodes; ++k) {
    const hetc_node_t *node = &graph->nodes[k];
    if (node->op != HETC_OP_CONV2D) continue;
    assert_int_equal(hetc_graph_can_split_conv2d(graph, k), node->attrs.groups == 1);
    if (node->attrs.groups == 1) continue;
    const int32_t nodes = graph->num_nodes;
    hetc_status_t status = hetc_graph_split_conv2d(graph, k, 1);
    assert_non_null(status);
    assert_int_equal(hetc_status_code(status), HETC_STATUS_INVALID_ARGUMENT);
    hetc_status_free(status);
    assert_int_equal(graph->num_nodes, nodes);
  }
  hetc_graph_free(graph);
  /* A fused residual, and shares out of range. */
  graph = load_optimized("tiny_residual.json");
  int32_t residual = -1, plain = -1;
  for (int32_t k = 0; k < graph->num_nodes; ++k) {
    if (graph->nodes[k].op != HETC_OP_CONV2D) continue;
    if (graph->nodes[k].epilogue.has_residual) residual = k;
    else plain = k;
  }
  assert_true(residual >= 0 && plain >= 0);
  assert_false(hetc_graph_can_split_conv2d(graph, residual));
  const int64_t channels = graph->nodes[plain].attrs.channels;
  const int64_t bad[] = {0, channels, -3};
  for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); ++i) {
    hetc_status_t status = hetc_graph_split_conv2d(graph, plain, bad[i]);
    assert_non_null(status);
    char want[256];
    snprintf(want, sizeof(want), "'%s': cannot split %lld channels at %lld", graph->nodes[plain].name,
             (long long)channels, (long long)bad[i]);
    assert_string_equal(hetc_status_message(status), want);
    hetc_status_free(status);
  }
  assert_int_equal(hetc_split_channel_step(31), 1);
  assert_int_equal(hetc_split_channel_step(32), 8);
  hetc_graph_free(graph);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(splits_compute_the_same),
      cmocka_unit_test(refuses_what_it_cannot_split),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
