/* Placement: the DP's plan is the cheapest under the latency model on
 * hundreds of random small graphs (chains, residual blocks, concat
 * branches; up to three devices and three layouts), checked against brute
 * force over every choice; hand-made cases check the model itself (a value
 * is copied once per device, copies move row-major tensors, outputs end on
 * the host, switching devices costs); a capped state count says the plan is
 * no longer exact. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>

#include <cmocka.h>

#include "place/placement.h"

#define MAX_NODES 10
#define MAX_OPTIONS 4

/* copy: latency + bytes / bandwidth per ordered pair; transform: bytes x
 * a per-device rate. */
typedef struct cost_model_t {
  int32_t devices;
  double latency[HETC_PLACE_MAX_DEVICES + 1][HETC_PLACE_MAX_DEVICES + 1];
  double per_byte[HETC_PLACE_MAX_DEVICES + 1][HETC_PLACE_MAX_DEVICES + 1];
  double transform_per_byte[HETC_PLACE_MAX_DEVICES + 1];
  double switch_[HETC_PLACE_MAX_DEVICES + 1][HETC_PLACE_MAX_DEVICES + 1];
} cost_model_t;

static double copy_seconds(const void *context, int32_t from, int32_t to, double bytes) {
  const cost_model_t *m = context;
  return m->latency[from][to] + bytes * m->per_byte[from][to];
}

static double transform_seconds(const void *context, int32_t device, int32_t from, int32_t to, double bytes) {
  const cost_model_t *m = context;
  return from == to ? 0 : bytes * m->transform_per_byte[device];
}

static double switch_seconds(const void *context, int32_t from, int32_t to) {
  const cost_model_t *m = context;
  return m->switch_[from][to];
}

typedef struct graph_t {
  hetc_place_node_t nodes[MAX_NODES];
  int32_t inputs[MAX_NODES][3];
  hetc_place_option_t options[MAX_NODES][MAX_OPTIONS];
  double model_input_bytes[2];
  hetc_place_problem_t problem;
  cost_model_t model;
  hetc_place_costs_t costs;
} graph_t;

static uint64_t rng = 0x9e3779b97f4a7c15u;
static double uniform(void) {
  rng ^= rng << 13;
  rng ^= rng >> 7;
  rng ^= rng << 17;
  return (double)(rng >> 11) / 9007199254740992.0;
}
static int32_t below(int32_t n) { return (int32_t)(uniform() * n); }

static void finish(graph_t *g, int32_t num_nodes, int32_t num_model_inputs) {
  g->problem = (hetc_place_problem_t){num_nodes, g->nodes, num_model_inputs, g->model_input_bytes, 0};
  g->costs = (hetc_place_costs_t){g->model.devices, copy_seconds, transform_seconds, &g->model, switch_seconds};
}

/* A random graph: shape 0 a chain, 1 residual blocks, 2 concat branches. */
static void random_graph(graph_t *g, int shape) {
  int32_t devices = 1 + below(3), layouts = 1 + below(3);
  int32_t n = 3 + below(shape == 0 ? 8 : 6), model_inputs = 1 + (shape == 2 && below(2));
  g->model.devices = devices;
  for (int32_t a = 0; a <= devices; ++a) {
    for (int32_t b = 0; b <= devices; ++b) {
      g->model.latency[a][b] = a == b ? 0 : 1e-5 * uniform();
      g->model.per_byte[a][b] = a == b ? 0 : 1e-9 * (0.1 + uniform());
    }
    g->model.transform_per_byte[a] = 1e-10 * (0.1 + uniform());
    for (int32_t b = 0; b <= devices; ++b) g->model.switch_[a][b] = a == b ? 0 : 3e-5 * uniform();
  }
  for (int32_t i = 0; i < model_inputs; ++i) g->model_input_bytes[i] = 1e4 * (1 + below(100));
  for (int32_t v = 0; v < n; ++v) {
    hetc_place_node_t *node = &g->nodes[v];
    int32_t *in = g->inputs[v];
    node->num_inputs = 1;
    in[0] = v == 0 ? -1 : v - 1;
    if (shape == 1 && v >= 2 && below(3) == 0) in[node->num_inputs++] = v - 2 - below(v - 1 < 2 ? 1 : 2);
    if (shape == 2 && v >= 1 && below(2) == 0) {
      in[node->num_inputs++] = below(v) - (model_inputs > 1 ? below(2) * (v + 1) : 0);
      if (in[node->num_inputs - 1] < -model_inputs) in[node->num_inputs - 1] = -model_inputs;
    }
    node->inputs = in;
    node->output_bytes = 1e4 * (1 + below(100));
    node->is_model_output = v == n - 1 || below(8) == 0;
    node->num_options = 1 + below(MAX_OPTIONS);
    for (int32_t o = 0; o < node->num_options; ++o)
      g->options[v][o] = (hetc_place_option_t){below(devices), below(layouts), below(layouts), 1e-4 * uniform()};
    node->options = g->options[v];
  }
  finish(g, n, model_inputs);
}

/* The cheapest choice by trying every one. */
static double brute_force(const graph_t *g, int32_t *best_choice) {
  int32_t choice[MAX_NODES] = {0};
  double best = INFINITY;
  for (;;) {
    double seconds = hetc_place_evaluate(&g->problem, &g->costs, choice);
    if (seconds < best) {
      best = seconds;
      for (int32_t v = 0; v < g->problem.num_nodes; ++v) best_choice[v] = choice[v];
    }
    int32_t v = 0;
    while (v < g->problem.num_nodes && ++choice[v] == g->nodes[v].num_options) choice[v++] = 0;
    if (v == g->problem.num_nodes) return best;
  }
}

static void optimal_against_brute_force(void **state) {
  (void)state;
  int64_t most_states = 0;
  for (int trial = 0; trial < 600; ++trial) {
    graph_t g;
    random_graph(&g, trial % 3);
    hetc_place_solution_t solution;
    hetc_status_t status = hetc_place_solve(&g.problem, &g.costs, 0, &solution);
    if (status) fail_msg("trial %d: %s", trial, hetc_status_message(status));
    int32_t best_choice[MAX_NODES];
    double best = brute_force(&g, best_choice);
    double dp = hetc_place_evaluate(&g.problem, &g.costs, solution.choice);
    if (fabs(dp - best) > 1e-12 || fabs(solution.total_seconds - dp) > 1e-12)
      fail_msg("trial %d (shape %d, %d nodes, %d devices): DP %.9g s (its own total %.9g s), brute force %.9g s",
               trial, trial % 3, g.problem.num_nodes, g.model.devices, dp, solution.total_seconds, best);
    assert_int_equal(solution.exact, 1);
    if (solution.states > most_states) most_states = solution.states;
    hetc_place_solution_free(&solution);
  }
  printf("600 random graphs: the DP's plan costs what brute force finds; at most %lld states in a step\n",
         (long long)most_states);
}

/* Two devices: 0 the host's CPU (copies to and from the host, index 2,
 * are free), 1 an accelerator; other copies cost 10 us + 1 ns per byte. */
static void two_devices(graph_t *g) {
  g->model.devices = 2;
  for (int32_t a = 0; a <= 2; ++a) {
    for (int32_t b = 0; b <= 2; ++b) {
      int free_copy = a == b || a + b == 2; /* 0 <-> 2 */
      g->model.latency[a][b] = free_copy ? 0 : 1e-5;
      g->model.per_byte[a][b] = free_copy ? 0 : 1e-9;
    }
    g->model.transform_per_byte[a] = 1e-10;
    for (int32_t b = 0; b <= 2; ++b) g->model.switch_[a][b] = 0;
  }
}

static void set_node(graph_t *g, int32_t v, int32_t num_inputs, int32_t in0, int32_t in1, double bytes, int output,
                     double slow, double fast) {
  g->inputs[v][0] = in0;
  g->inputs[v][1] = in1;
  g->nodes[v] = (hetc_place_node_t){num_inputs, g->inputs[v], bytes, output, 2, g->options[v]};
  g->options[v][0] = (hetc_place_option_t){0, 0, 0, slow};
  g->options[v][1] = (hetc_place_option_t){1, 0, 0, fast};
}

/* A fast device wins a chain only when the kernels it saves outweigh the
 * copies in and out. */
static void chain_moves_when_it_pays(void **state) {
  (void)state;
  graph_t g;
  two_devices(&g);
  g.model_input_bytes[0] = 1e5; /* 100 us + 10 us to copy to device 1 */
  /* Input 0 -> a -> b -> c (output): 1 ms on device 0, 0.5 ms on device 1 each. */
  set_node(&g, 0, 1, -1, 0, 1e5, 0, 1e-3, 5e-4);
  set_node(&g, 1, 1, 0, 0, 1e5, 0, 1e-3, 5e-4);
  set_node(&g, 2, 1, 1, 0, 1e5, 1, 1e-3, 5e-4);
  finish(&g, 3, 1);
  hetc_place_solution_t s;
  assert_null(hetc_place_solve(&g.problem, &g.costs, 0, &s));
  /* Everything on device 1: 1.5 ms + 2 x 110 us of copies. */
  for (int v = 0; v < 3; ++v) assert_int_equal(s.choice[v], 1);
  assert_true(fabs(s.total_seconds - (1.5e-3 + 2 * 1.1e-4)) < 1e-12);
  hetc_place_solution_free(&s);
  /* With copies to and from device 1 of 1 ms + 1 ns per byte, staying on
   * device 0 is cheaper: 3 ms against 1.5 ms + 2 x 1.1 ms. */
  for (int32_t a = 0; a <= 2; ++a)
    for (int32_t b = 0; b <= 2; ++b)
      if (a != b && (a == 1 || b == 1)) g.model.latency[a][b] = 1e-3;
  assert_null(hetc_place_solve(&g.problem, &g.costs, 0, &s));
  for (int v = 0; v < 3; ++v) assert_int_equal(s.choice[v], 0);
  assert_true(fabs(s.total_seconds - 3e-3) < 1e-12);
  hetc_place_solution_free(&s);
}

/* A node in the middle of a chain moves to a faster device only when the
 * time saved outweighs switching there and back. */
static void switching_devices_costs(void **state) {
  (void)state;
  graph_t g;
  two_devices(&g);
  for (int32_t a = 0; a <= 2; ++a)
    for (int32_t b = 0; b <= 2; ++b) g.model.latency[a][b] = g.model.per_byte[a][b] = 0; /* free copies */
  g.model_input_bytes[0] = 1e5;
  set_node(&g, 0, 1, -1, 0, 1e5, 0, 1e-3, 2e-3);
  set_node(&g, 1, 1, 0, 0, 1e5, 0, 1e-3, 8e-4); /* 0.2 ms faster on device 1 */
  set_node(&g, 2, 1, 1, 0, 1e5, 1, 1e-3, 2e-3);
  finish(&g, 3, 1);
  const double switches[] = {1.5e-4, 5e-5};
  for (int i = 0; i < 2; ++i) {
    g.model.switch_[0][1] = g.model.switch_[1][0] = switches[i];
    hetc_place_solution_t s;
    assert_null(hetc_place_solve(&g.problem, &g.costs, 0, &s));
    /* 2 x 0.15 ms > 0.2 ms: stay; 2 x 0.05 ms < 0.2 ms: go. */
    assert_int_equal(s.choice[1], i == 0 ? 0 : 1);
    const double want = i == 0 ? 3e-3 : 2.8e-3 + 2 * switches[i];
    assert_true(fabs(s.total_seconds - want) < 1e-12);
    assert_true(fabs(hetc_place_evaluate(&g.problem, &g.costs, s.choice) - want) < 1e-12);
    hetc_place_solution_free(&s);
  }
}

/* One value, two consumers on the other device: copied once. */
static void a_value_is_copied_once_per_device(void **state) {
  (void)state;
  graph_t g;
  two_devices(&g);
  g.model_input_bytes[0] = 1e3;
  set_node(&g, 0, 1, -1, 0, 1e5, 0, 1e-4, 1e-4);
  set_node(&g, 1, 1, 0, 0, 1e3, 1, 1e-4, 1e-4);
  set_node(&g, 2, 1, 0, 0, 1e3, 1, 1e-4, 1e-4);
  finish(&g, 3, 1);
  int32_t choice[3] = {0, 1, 1};
  /* The input to device 0: free; node 0's 100 kB to device 1 once:
   * 110 us; two outputs back to the host: 11 us each; kernels 300 us. */
  double want = 3e-4 + 1.1e-4 + 2 * 1.1e-5;
  assert_true(fabs(hetc_place_evaluate(&g.problem, &g.costs, choice) - want) < 1e-12);
}

/* Copies move row-major tensors: a blocked layout is transformed before
 * the copy (once for every device) and after it (per needed layout). */
static void copies_move_row_major(void **state) {
  (void)state;
  graph_t g;
  two_devices(&g);
  g.model_input_bytes[0] = 0;
  set_node(&g, 0, 1, -1, 0, 1e5, 0, 1e-4, 1e-4);
  set_node(&g, 1, 1, 0, 0, 0, 1, 1e-4, 1e-4);
  g.options[0][0] = (hetc_place_option_t){0, 0, 2, 1e-4}; /* writes layout 2 on device 0 */
  g.options[1][1] = (hetc_place_option_t){1, 3, 0, 1e-4}; /* reads layout 3 on device 1 */
  finish(&g, 2, 1);
  int32_t choice[2] = {0, 1};
  /* The input to device 0: free. Node 0's output: 2 -> row-major on
   * device 0 (10 us), copy (110 us), row-major -> 3 on device 1 (10 us).
   * Node 1's empty output to the host: 10 us. Kernels: 200 us. */
  double want = 1e-5 + 1.1e-4 + 1e-5 + 1e-5 + 2e-4;
  assert_true(fabs(hetc_place_evaluate(&g.problem, &g.costs, choice) - want) < 1e-12);
}

static void capped_states_are_not_exact(void **state) {
  (void)state;
  int capped = 0;
  for (int trial = 0; trial < 200; ++trial) {
    graph_t g;
    random_graph(&g, 1 + trial % 2);
    hetc_place_solution_t s;
    assert_null(hetc_place_solve(&g.problem, &g.costs, 2, &s));
    int32_t best_choice[MAX_NODES];
    double best = brute_force(&g, best_choice);
    assert_true(s.total_seconds >= best - 1e-12);
    assert_true(fabs(hetc_place_evaluate(&g.problem, &g.costs, s.choice) - s.total_seconds) < 1e-12);
    if (s.states > 2) {
      assert_int_equal(s.exact, 0);
      ++capped;
    }
    hetc_place_solution_free(&s);
  }
  assert_true(capped > 0);
}

static void malformed_problems_are_refused(void **state) {
  (void)state;
  graph_t g;
  two_devices(&g);
  set_node(&g, 0, 1, 0, 0, 1e3, 1, 1e-4, 1e-4); /* reads itself */
  finish(&g, 1, 1);
  hetc_place_solution_t s;
  hetc_status_t status = hetc_place_solve(&g.problem, &g.costs, 0, &s);
  assert_int_equal(hetc_status_code(status), HETC_STATUS_INVALID_ARGUMENT);
  assert_string_equal(hetc_status_message(status), "placement: input 0 of node 0 is 0");
  hetc_status_free(status);
  set_node(&g, 0, 1, -1, 0, 1e3, 1, 1e-4, 1e-4);
  g.options[0][1].device = 2;
  status = hetc_place_solve(&g.problem, &g.costs, 0, &s);
  assert_int_equal(hetc_status_code(status), HETC_STATUS_INVALID_ARGUMENT);
  assert_string_equal(hetc_status_message(status),
                      "placement: option 1 of node 0 (device 2, layouts 0 -> 0, 0.0001 s) is out of range");
  hetc_status_free(status);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(optimal_against_brute_force),   cmocka_unit_test(chain_moves_when_it_pays),
      cmocka_unit_test(a_value_is_copied_once_per_device), cmocka_unit_test(copies_move_row_major),
      cmocka_unit_test(capped_states_are_not_exact),   cmocka_unit_test(malformed_problems_are_refused),
      cmocka_unit_test(switching_devices_costs),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
