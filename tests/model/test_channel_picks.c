/* Channel shuffles and linear 1x1 convs folded into the convs after them
 * (hetc_graph_fold_channel_picks): the rewritten graph computes what the
 * original did, the reshapes and the transpose are gone, a pick that
 * would add multiply-adds (a bottleneck) stays. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "graph/passes.h"
#include "model/model.h"
#include "reference/graph_exec.h"

static void assert_ok(hetc_status_t status) {
  if (status) fail_msg("%s", hetc_status_message(status));
}

/* data [1,8,5,5] -> conv 3x3 -> shuffle in 2 groups -> two readers: a
 * 1x1 conv without bias (10 channels) that a padded 3x3 conv to 7 reads
 * (merged: 9 * 8 * 7 multiply-adds a pixel instead of 8 * 10 + 9 * 10 *
 * 7), and a 1x1 conv with bias; beside them a bottleneck: 1x1 to 2
 * channels read by a 3x3 conv back to 8, which merging would make 9 * 8 * 8
 * multiply-adds a pixel instead of 8 * 2 + 9 * 2 * 8. */
static const char model[] =
    "{\"format\": \"hetc-model\", \"version\": 1, \"name\": \"picks\","
    " \"inputs\": [{\"name\": \"data\", \"shape\": [1, 8, 5, 5], \"dtype\": \"float32\", \"layout\": \"NCHW\"}],"
    " \"weights\": {\"init\": \"random\", \"seed\": 3},"
    " \"nodes\": ["
    "  {\"name\": \"stem\", \"op\": \"conv2d\", \"inputs\": [\"data\"], \"attrs\": {\"channels\": 8, \"kernel\": [3, 3], \"padding\": [1, 1]}},"
    "  {\"name\": \"split\", \"op\": \"reshape\", \"inputs\": [\"stem\"], \"attrs\": {\"shape\": [1, 2, 4, 5, 5]}},"
    "  {\"name\": \"swap\", \"op\": \"transpose\", \"inputs\": [\"split\"], \"attrs\": {\"perm\": [0, 2, 1, 3, 4]}},"
    "  {\"name\": \"shuffled\", \"op\": \"reshape\", \"inputs\": [\"swap\"], \"attrs\": {\"shape\": [1, 8, 5, 5]}},"
    "  {\"name\": \"narrow\", \"op\": \"conv2d\", \"inputs\": [\"shuffled\"], \"attrs\": {\"channels\": 10, \"kernel\": [1, 1], \"bias\": false}},"
    "  {\"name\": \"wide\", \"op\": \"conv2d\", \"inputs\": [\"narrow\"], \"attrs\": {\"channels\": 7, \"kernel\": [3, 3], \"padding\": [1, 1]}},"
    "  {\"name\": \"other\", \"op\": \"conv2d\", \"inputs\": [\"shuffled\"], \"attrs\": {\"channels\": 5, \"kernel\": [1, 1]}},"
    "  {\"name\": \"squeeze\", \"op\": \"conv2d\", \"inputs\": [\"stem\"], \"attrs\": {\"channels\": 2, \"kernel\": [1, 1], \"bias\": false}},"
    "  {\"name\": \"expand\", \"op\": \"conv2d\", \"inputs\": [\"squeeze\"], \"attrs\": {\"channels\": 8, \"kernel\": [3, 3], \"padding\": [1, 1]}}"
    " ],"
    " \"outputs\": [\"wide\", \"other\", \"expand\"]}";

static int32_t find_node(const hetc_graph_t *graph, const char *name) {
  for (int32_t k = 0; k < graph->num_nodes; ++k)
    if (!strcmp(graph->nodes[k].name, name)) return k;
  return -1;
}

static void folds_and_matches(void **state) {
  (void)state;
  hetc_graph_t *graph = NULL, *folded = NULL;
  assert_ok(hetc_model_load_buffer(model, sizeof(model) - 1, "picks.json", ".", &graph));
  assert_ok(hetc_graph_clone(graph, &folded));
  assert_ok(hetc_graph_fold_channel_picks(folded));

  /* The shuffle became a pick, merged into both of its readers, and the
   * narrow 1x1 into the 3x3 after it; the bottleneck stays. */
  assert_int_equal(folded->num_nodes, 5);
  assert_int_equal(find_node(folded, "split"), -1);
  assert_int_equal(find_node(folded, "swap"), -1);
  assert_int_equal(find_node(folded, "shuffled"), -1);
  assert_int_equal(find_node(folded, "narrow"), -1);
  const int32_t stem = find_node(folded, "stem"), wide = find_node(folded, "wide"), other = find_node(folded, "other");
  assert_true(stem >= 0 && wide >= 0 && other >= 0 && find_node(folded, "squeeze") >= 0);
  assert_int_equal(folded->nodes[wide].inputs[0], folded->nodes[stem].output);
  assert_int_equal(folded->nodes[other].inputs[0], folded->nodes[stem].output);
  assert_int_equal(folded->nodes[wide].params[HETC_PARAM_WEIGHT].shape[1], 8);
  assert_string_equal(folded->nodes[wide].fused_names, "split+swap+shuffled+narrow");

  float *input = malloc(sizeof(float) * 200);
  uint32_t seed = 7;
  for (int i = 0; i < 200; ++i) {
    seed = seed * 1664525u + 1013904223u;
    input[i] = (float)(seed >> 8) / (float)(1u << 24) - 0.5f;
  }
  const float *inputs[] = {input};
  float *want[3] = {NULL}, *got[3] = {NULL};
  assert_ok(hetc_reference_run_graph(graph, inputs, want));
  assert_ok(hetc_reference_run_graph(folded, inputs, got));
  for (int32_t o = 0; o < 3; ++o) {
    const int64_t count = hetc_tensor_element_count(&graph->values[graph->outputs[o]].type);
    double worst = 0, scale = 0;
    for (int64_t i = 0; i < count; ++i) {
      worst = fmax(worst, fabs((double)got[o][i] - want[o][i]));
      scale = fmax(scale, fabs((double)want[o][i]));
    }
    if (worst > 1e-5 * scale) fail_msg("output %d: max error %g of %g", o, worst, scale);
    free(want[o]);
    free(got[o]);
  }
  free(input);
  hetc_graph_free(graph);
  hetc_graph_free(folded);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(folds_and_matches),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
