/* The tuner's space engine (driver/space): constraint-aware counting,
 * numbering, sampling and neighbours, split policies, optional knobs,
 * JSON overrides, task spaces over every template of a workload and the
 * `hetc space` command.
 *
 * Real spaces come from the vec and cpu plugins (loaded through the
 * registry, as hetc does) for the conv2d, depthwise and dense tasks of
 * sample models; the cpu part is skipped with a note where that plugin is
 * unavailable. Hand-built spaces cover overlapping constraints that the
 * plugins do not declare. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "common/fileio.h"
#include "graph/passes.h"
#include "graph/tasks.h"
#include "plugins/host.h"
#include "plugins/registry.h"
#include "space/space.h"
#include "space/space_override.h"
#include "space/task_space.h"

#define ROUND_TRIPS 2000
/* Template spaces up to this many points are enumerated in full. */
#define MAX_BRUTE_FORCE 300000

static const char *const sample_models[] = {"resnet18.json", "mobilenet_v1.json",
                                            "squeezenet.json"};
#define NUM_MODELS (sizeof(sample_models) / sizeof(sample_models[0]))

/* Every conv2d and dense task of the sample models, as workloads. */
typedef struct workload_slot_t {
  hetc_plugin_tensor_t inputs[HETC_MAX_NODE_INPUTS];
  hetc_plugin_workload_t workload;
  char key[HETC_TASK_KEY_SIZE];
} workload_slot_t;

static hetc_registry_t *registry;
static workload_slot_t *workloads;
static int32_t num_workloads;

static void fail_status(hetc_status_t status, const char *what) {
  if (status) fail_msg("%s: %s", what, hetc_status_message(status));
}

static int group_setup(void **state) {
  (void)state;
  if (hetc_registry_open(&registry)) return -1;
  workloads = calloc(256, sizeof(workload_slot_t));
  if (!workloads) return -1;
  const char *source = getenv("HETC_SOURCE_DIR") ? getenv("HETC_SOURCE_DIR") : ".";
  for (size_t m = 0; m < NUM_MODELS; ++m) {
    char path[4096];
    snprintf(path, sizeof(path), "%s/samples/%s", source, sample_models[m]);
    hetc_model_t *model = NULL;
    hetc_graph_t *graph = NULL;
    hetc_task_list_t *tasks = NULL;
    hetc_status_t status = hetc_model_load(path, &model);
    if (!status) status = hetc_graph_clone(model, &graph);
    if (!status) status = hetc_graph_optimize(graph);
    if (!status) status = hetc_graph_extract_tasks(graph, &tasks);
    for (int32_t t = 0; !status && t < tasks->count && num_workloads < 256; ++t) {
      workload_slot_t *slot = &workloads[num_workloads];
      status = hetc_graph_task_workload(graph, tasks, t, slot->inputs, &slot->workload);
      snprintf(slot->key, sizeof(slot->key), "%s", tasks->tasks[t].key);
      if (!status) ++num_workloads;
    }
    hetc_task_list_free(tasks);
    hetc_graph_free(graph);
    hetc_model_free(model);
    if (status) {
      fprintf(stderr, "%s: %s\n", path, hetc_status_message(status));
      hetc_status_free(status);
      return -1;
    }
  }
  return num_workloads > 10 ? 0 : -1;
}

static int group_teardown(void **state) {
  (void)state;
  hetc_registry_free(registry);
  free(workloads);
  return 0;
}

/* The ready plugin of a target, or NULL (with a note) when it is not
 * usable here. */
static hetc_plugin_entry_t *target_entry(const char *target) {
  hetc_plugin_entry_t *entry = NULL;
  hetc_status_t status = hetc_registry_target(registry, target, &entry);
  if (status) {
    printf("target %s skipped: %s\n", target, hetc_status_message(status));
    hetc_status_free(status);
    return NULL;
  }
  return entry;
}

static uint64_t next_random(uint64_t *rng) { return hetc_space_random_below(rng, UINT64_MAX); }

/* ------------------------------------------------------------------------ */
/* Hand-built spaces                                                        */
/* ------------------------------------------------------------------------ */

/* A pseudo-random predicate over the named knobs' values: accepts about
 * `percent` percent of assignments. It also checks that the config holds
 * exactly its knobs, in the declared order. */
typedef struct random_constraint_t {
  uint64_t seed;
  int32_t percent;
  int32_t num_knobs;
  const char *names[HETC_SPACE_MAX_KNOBS];
} random_constraint_t;

static int random_predicate(const hetc_plugin_config_t *config, const void *user_data) {
  const random_constraint_t *c = user_data;
  if (config->num_knobs != c->num_knobs) abort();
  uint64_t h = c->seed;
  for (int32_t i = 0; i < config->num_knobs; ++i) {
    if (strcmp(config->knobs[i].name, c->names[i]) != 0) abort();
    for (int32_t v = 0; v < config->knobs[i].count; ++v) {
      h ^= (uint64_t)config->knobs[i].values[v] + UINT64_C(0x9E3779B97F4A7C15) + (h << 6) + (h >> 2);
      h *= UINT64_C(0xff51afd7ed558ccd);
      h ^= h >> 33;
    }
  }
  return (int32_t)(h % 100) < c->percent;
}

static const char *const knob_names_table[] = {"a", "b", "c", "d", "e", "f", "g", "h"};

/* A space of `num_knobs` list knobs (sizes from `sizes`) with the given
 * constraints (each a list of knob numbers, ended by -1). */
static hetc_plugin_space_t *hand_space(int32_t num_knobs, const int64_t *sizes,
                                       random_constraint_t *constraints,
                                       const int32_t (*members)[6], int32_t num_constraints) {
  hetc_plugin_space_t *space = NULL;
  fail_status(hetc_space_create(&space), "create");
  for (int32_t k = 0; k < num_knobs; ++k) {
    int64_t values[64];
    for (int64_t v = 0; v < sizes[k]; ++v) values[v] = 3 * v + k;
    fail_status(hetc_space_define_knob(space, knob_names_table[k], values, (int32_t)sizes[k]),
                "define");
  }
  for (int32_t i = 0; i < num_constraints; ++i) {
    random_constraint_t *c = &constraints[i];
    c->num_knobs = 0;
    for (int32_t j = 0; members[i][j] >= 0; ++j) c->names[c->num_knobs++] = knob_names_table[members[i][j]];
    fail_status(hetc_space_add_constraint(space, c->names, c->num_knobs, random_predicate, c),
                "constraint");
  }
  return space;
}

/* Enumerates every index: the valid count must equal valid_count, and
 * valid_at must be a bijection onto exactly the valid indices, inverted by
 * valid_rank. */
static void check_against_brute_force(const hetc_plugin_space_t *space, const char *what) {
  const int64_t size = hetc_space_size(space);
  const int64_t valid = hetc_space_valid_count(space);
  unsigned char *is_valid = calloc((size_t)size, 1);
  unsigned char *seen = calloc((size_t)size, 1);
  assert_non_null(is_valid);
  assert_non_null(seen);
  int64_t brute = 0;
  for (int64_t i = 0; i < size; ++i) {
    is_valid[i] = (unsigned char)hetc_space_is_valid(space, i);
    brute += is_valid[i];
    int64_t n = -1;
    hetc_status_t status = hetc_space_valid_rank(space, i, &n);
    if (is_valid[i]) {
      fail_status(status, what);
    } else {
      assert_non_null(status);
      assert_int_equal(hetc_status_code(status), HETC_STATUS_INVALID_ARGUMENT);
      hetc_status_free(status);
    }
  }
  if (brute != valid) fail_msg("%s: brute force %lld valid, valid_count %lld", what, (long long)brute, (long long)valid);
  for (int64_t n = 0; n < valid; ++n) {
    int64_t index = -1, back = -1;
    fail_status(hetc_space_valid_at(space, n, &index), what);
    assert_true(index >= 0 && index < size);
    assert_true(is_valid[index]);
    assert_false(seen[index]);
    seen[index] = 1;
    fail_status(hetc_space_valid_rank(space, index, &back), what);
    assert_int_equal(back, n);
  }
  free(is_valid);
  free(seen);
}

static void hand_built_counts_match_brute_force(void **state) {
  (void)state;
  /* Overlapping constraints: (a,b), (b,c) join a-b-c; (d) alone; (e,f)
   * and (f,a) pull e and f into the first component; g stays free. */
  static const int64_t sizes[7] = {5, 4, 3, 6, 2, 7, 3};
  static const int32_t members[5][6] = {{0, 1, -1}, {2, 1, -1}, {3, -1}, {4, 5, -1}, {5, 0, -1}};
  uint64_t rng = 12345;
  for (int round = 0; round < 12; ++round) {
    random_constraint_t constraints[5];
    for (int i = 0; i < 5; ++i) {
      constraints[i].seed = next_random(&rng);
      constraints[i].percent = 20 + (int32_t)hetc_space_random_below(&rng, 70);
    }
    /* Vary how many constraints there are, so that components split and
     * merge. */
    const int32_t used = 1 + round % 5;
    hetc_plugin_space_t *space = hand_space(7, sizes, constraints, members, used);
    char what[64];
    snprintf(what, sizeof(what), "hand-built round %d (%d constraints)", round, used);
    check_against_brute_force(space, what);
    hetc_space_free(space);
  }
  /* No constraint at all: valid_at is the identity. */
  hetc_plugin_space_t *free_space = hand_space(3, sizes, NULL, NULL, 0);
  for (int64_t n = 0; n < hetc_space_size(free_space); ++n) {
    int64_t index;
    fail_status(hetc_space_valid_at(free_space, n, &index), "free");
    assert_int_equal(index, n);
  }
  hetc_space_free(free_space);
}

static int reject_all(const hetc_plugin_config_t *config, const void *user_data) {
  (void)config;
  (void)user_data;
  return 0;
}

/* Accepts exactly one assignment: every value the smallest (k). */
static int only_first(const hetc_plugin_config_t *config, const void *user_data) {
  (void)user_data;
  for (int32_t i = 0; i < config->num_knobs; ++i)
    if (config->knobs[i].values[0] >= 3) return 0;
  return 1;
}

static void sampling_is_uniform_and_never_fails(void **state) {
  (void)state;
  /* Two random constraints over 60 points; every valid point is drawn
   * 2000 times on average. The chi-square statistic must stay below its
   * 99.9% quantile (Wilson-Hilferty); the draws are deterministic. */
  static const int64_t sizes[3] = {4, 5, 3};
  static const int32_t members[2][6] = {{0, 1, -1}, {2, -1}};
  random_constraint_t constraints[2] = {{7, 60, 0, {0}}, {11, 70, 0, {0}}};
  hetc_plugin_space_t *space = hand_space(3, sizes, constraints, members, 2);
  const int64_t size = hetc_space_size(space), valid = hetc_space_valid_count(space);
  assert_true(valid > 5 && valid < size);
  int64_t counts[60] = {0};
  const int64_t draws = valid * 2000;
  uint64_t rng = 99;
  for (int64_t d = 0; d < draws; ++d) {
    int64_t index;
    fail_status(hetc_space_sample_valid(space, &rng, &index), "sample");
    assert_true(hetc_space_is_valid(space, index));
    ++counts[index];
  }
  double chi2 = 0;
  for (int64_t i = 0; i < size; ++i) {
    if (!hetc_space_is_valid(space, i)) {
      assert_int_equal(counts[i], 0);
      continue;
    }
    const double diff = (double)counts[i] - 2000.0;
    chi2 += diff * diff / 2000.0;
  }
  const double df = (double)valid - 1, z = 3.0902; /* the normal's 99.9% quantile */
  const double bound = df * pow(1 - 2 / (9 * df) + z * sqrt(2 / (9 * df)), 3);
  printf("sampling: %lld valid of %lld, chi-square %.2f with %.0f degrees of freedom (bound %.2f)\n",
         (long long)valid, (long long)size, chi2, df, bound);
  assert_true(chi2 < bound);
  hetc_space_free(space);

  /* One valid point among 2^21: rejection sampling would give up. */
  hetc_plugin_space_t *sparse = NULL;
  fail_status(hetc_space_create(&sparse), "create");
  const char *names[3] = {"x", "y", "z"};
  for (int k = 0; k < 3; ++k) {
    int64_t values[128];
    for (int v = 0; v < 128; ++v) values[v] = v == 0 ? 0 : v + 2; /* only 0 is below 3 */
    fail_status(hetc_space_define_knob(sparse, names[k], values, 128), "define");
  }
  fail_status(hetc_space_add_constraint(sparse, names, 3, only_first, NULL), "constraint");
  assert_int_equal(hetc_space_valid_count(sparse), 1);
  for (int d = 0; d < 10; ++d) {
    int64_t index;
    fail_status(hetc_space_sample_valid(sparse, &rng, &index), "sparse sample");
    assert_int_equal(index, 0);
  }
  hetc_space_free(sparse);

  /* No valid point: UNSUPPORTED. */
  hetc_plugin_space_t *empty = hand_space(2, sizes, NULL, NULL, 0);
  const char *pair[2] = {"a", "b"};
  fail_status(hetc_space_add_constraint(empty, pair, 2, reject_all, NULL), "constraint");
  int64_t index;
  hetc_status_t status = hetc_space_sample_valid(empty, &rng, &index);
  assert_int_equal(hetc_status_code(status), HETC_STATUS_UNSUPPORTED);
  assert_string_equal(hetc_status_message(status),
                      "no valid config: the constraints reject all 20 points");
  hetc_status_free(status);
  assert_int_equal(hetc_space_valid_count(empty), 0);
  hetc_space_free(empty);
}

/* Checks neighbours of random valid points of a space. */
static void check_neighbors(const hetc_plugin_space_t *space, uint64_t *rng, int count,
                            const char *what) {
  const int64_t valid = hetc_space_valid_count(space);
  int found = 0;
  for (int i = 0; i < count && valid > 0; ++i) {
    int64_t start, neighbor;
    fail_status(hetc_space_valid_at(space, (int64_t)hetc_space_random_below(rng, (uint64_t)valid), &start), what);
    hetc_status_t status = hetc_space_random_neighbor(space, start, rng, &neighbor);
    if (status) {
      assert_int_equal(hetc_status_code(status), HETC_STATUS_UNSUPPORTED);
      hetc_status_free(status);
      continue;
    }
    ++found;
    int differ = 0;
    for (int32_t k = 0; k < hetc_space_knob_count(space); ++k)
      differ += hetc_space_knob_choice(space, start, k) != hetc_space_knob_choice(space, neighbor, k);
    if (differ != 1) fail_msg("%s: neighbour of %lld is %lld, %d knobs differ", what, (long long)start, (long long)neighbor, differ);
    assert_true(hetc_space_is_valid(space, neighbor));
  }
  if (valid > 1 && count > 0 && found == 0) printf("%s: no point had a neighbour\n", what);
}

static void neighbors_differ_in_one_knob(void **state) {
  (void)state;
  static const int64_t sizes[7] = {5, 4, 3, 6, 2, 7, 3};
  static const int32_t members[5][6] = {{0, 1, -1}, {2, 1, -1}, {3, -1}, {4, 5, -1}, {5, 0, -1}};
  random_constraint_t constraints[5];
  uint64_t rng = 777;
  for (int i = 0; i < 5; ++i) constraints[i] = (random_constraint_t){next_random(&rng), 50, 0, {0}};
  hetc_plugin_space_t *space = hand_space(7, sizes, constraints, members, 5);
  check_neighbors(space, &rng, 3000, "hand-built");
  /* Every single-knob change of a valid point that stays valid is reached
   * from it. */
  int64_t start;
  fail_status(hetc_space_valid_at(space, hetc_space_valid_count(space) / 2, &start), "start");
  int64_t choices[7], expected = 0;
  for (int32_t k = 0; k < 7; ++k) choices[k] = hetc_space_knob_choice(space, start, k);
  unsigned char reachable[15120] = {0};
  assert_int_equal(hetc_space_size(space), 15120);
  for (int32_t k = 0; k < 7; ++k) {
    for (int64_t c = 0; c < sizes[k]; ++c) {
      if (c == choices[k]) continue;
      int64_t other[7], index;
      memcpy(other, choices, sizeof(other));
      other[k] = c;
      fail_status(hetc_space_index_from_choices(space, other, &index), "from choices");
      if (hetc_space_is_valid(space, index)) {
        reachable[index] = 1;
        ++expected;
      }
    }
  }
  unsigned char hit[15120] = {0};
  int64_t hits = 0;
  for (int i = 0; i < 20000; ++i) {
    int64_t neighbor;
    fail_status(hetc_space_random_neighbor(space, start, &rng, &neighbor), "neighbour");
    assert_true(reachable[neighbor]);
    hits += !hit[neighbor];
    hit[neighbor] = 1;
  }
  assert_int_equal(hits, expected);
  hetc_space_free(space);

  /* A point with no valid neighbour. */
  hetc_plugin_space_t *single = NULL;
  fail_status(hetc_space_create(&single), "create");
  const char *names[2] = {"x", "y"};
  const int64_t values[3] = {0, 5, 6};
  fail_status(hetc_space_define_knob(single, "x", values, 3), "x");
  fail_status(hetc_space_define_knob(single, "y", values, 3), "y");
  fail_status(hetc_space_add_constraint(single, names, 2, only_first, NULL), "constraint");
  int64_t neighbor;
  hetc_status_t status = hetc_space_random_neighbor(single, 0, &rng, &neighbor);
  assert_int_equal(hetc_status_code(status), HETC_STATUS_UNSUPPORTED);
  assert_string_equal(hetc_status_message(status),
                      "config 0 has no valid neighbour: no single knob can change");
  hetc_status_free(status);
  hetc_space_free(single);
}

static int accept_all(const hetc_plugin_config_t *config, const void *user_data) {
  (void)config;
  (void)user_data;
  return 1;
}

static void oversized_component_is_refused(void **state) {
  (void)state;
  hetc_plugin_space_t *space = NULL;
  fail_status(hetc_space_create(&space), "create");
  int64_t *values = malloc(sizeof(int64_t) * 5000);
  assert_non_null(values);
  for (int v = 0; v < 5000; ++v) values[v] = v;
  const char *names[3] = {"tile_x", "tile_y", "free"};
  for (int k = 0; k < 3; ++k) fail_status(hetc_space_define_knob(space, names[k], values, 5000), "define");
  free(values);
  fail_status(hetc_space_add_constraint(space, names, 2, accept_all, NULL), "constraint");
  hetc_status_t status = hetc_space_build_index(space);
  assert_int_equal(hetc_status_code(status), HETC_STATUS_INVALID_ARGUMENT);
  assert_string_equal(hetc_status_message(status),
                      "knobs 'tile_x', 'tile_y' share constraints over more than 16777216 (2^24) "
                      "points, too many to enumerate");
  hetc_status_free(status);
  assert_int_equal(hetc_space_valid_count(space), -1);
  int64_t index;
  uint64_t rng = 1;
  status = hetc_space_sample_valid(space, &rng, &index);
  assert_int_equal(hetc_status_code(status), HETC_STATUS_INVALID_ARGUMENT);
  hetc_status_free(status);
  hetc_space_free(space);
}

/* ------------------------------------------------------------------------ */
/* Split policies                                                           */
/* ------------------------------------------------------------------------ */

static void expect_split(int64_t extent, int32_t parts, int32_t policy, int64_t max_factor,
                         const int64_t *candidates, int32_t num_candidates, const char *want) {
  hetc_plugin_space_t *space = NULL;
  fail_status(hetc_space_create(&space), "create");
  fail_status(hetc_space_define_split(space, "s", extent, parts, policy, max_factor, candidates,
                                      num_candidates),
              "split");
  char text[4096] = "";
  size_t used = 0;
  for (int64_t c = 0; c < hetc_space_knob_size(space, 0); ++c) {
    const int64_t *v = hetc_space_knob_values(space, 0, c);
    used += (size_t)snprintf(text + used, sizeof(text) - used, "%s[", c ? " " : "");
    for (int32_t p = 0; p < parts; ++p)
      used += (size_t)snprintf(text + used, sizeof(text) - used, "%s%lld", p ? "," : "", (long long)v[p]);
    used += (size_t)snprintf(text + used, sizeof(text) - used, "]");
  }
  assert_string_equal(text, want);
  assert_int_equal(hetc_space_knob_extent(space, 0), extent);
  assert_int_equal(hetc_space_knob_policy(space, 0), policy);
  hetc_space_free(space);
}

static void split_policies(void **state) {
  (void)state;
  expect_split(12, 2, HETC_PLUGIN_SPLIT_FACTORS, 0, NULL, 0,
               "[12,1] [6,2] [4,3] [3,4] [2,6] [1,12]");
  expect_split(12, 2, HETC_PLUGIN_SPLIT_POWER2, 0, NULL, 0, "[12,1] [6,2] [3,4]");
  /* Both: the exact splits, then power-of-two inner parts whose product
   * does not divide 12, the outer part rounded up. */
  expect_split(12, 2, HETC_PLUGIN_SPLIT_BOTH, 0, NULL, 0,
               "[12,1] [6,2] [4,3] [3,4] [2,6] [1,12] [2,8]");
  expect_split(12, 3, HETC_PLUGIN_SPLIT_BOTH, 4, NULL, 0,
               "[12,1,1] [6,2,1] [4,3,1] [3,4,1] [6,1,2] [3,2,2] [2,3,2] [4,1,3] [2,2,3] [1,4,3] "
               "[3,1,4] [1,3,4] [2,4,2] [2,2,4]");
  expect_split(10, 2, HETC_PLUGIN_SPLIT_BOTH, 0, NULL, 0, "[10,1] [5,2] [2,5] [1,10] [3,4] [2,8]");
  const int64_t candidates[3] = {4, 3, 16};
  expect_split(10, 2, HETC_PLUGIN_SPLIT_CANDIDATES, 8, candidates, 3, "[3,4] [4,3]");
  expect_split(16, 2, HETC_PLUGIN_SPLIT_FACTORS, 4, NULL, 0, "[16,1] [8,2] [4,4]");
  /* Split knobs round-trip through configs too. */
  hetc_plugin_space_t *space = NULL;
  fail_status(hetc_space_create(&space), "create");
  fail_status(hetc_space_define_split(space, "tile", 96, 3, HETC_PLUGIN_SPLIT_BOTH, 0, NULL, 0), "split");
  for (int64_t i = 0; i < hetc_space_size(space); ++i) {
    hetc_space_config_t config;
    int64_t back;
    fail_status(hetc_space_config_at(space, i, &config), "config");
    fail_status(hetc_space_index_of(space, &config.view, &back), "index");
    assert_int_equal(back, i);
  }
  hetc_space_free(space);
  /* An unknown policy is still refused. */
  hetc_plugin_space_t *bad = NULL;
  fail_status(hetc_space_create(&bad), "create");
  hetc_status_t status = hetc_space_define_split(bad, "s", 8, 2, 4, 0, NULL, 0);
  assert_string_equal(hetc_status_message(status), "split 's': unknown policy 4");
  hetc_status_free(status);
  hetc_space_free(bad);
}

/* ------------------------------------------------------------------------ */
/* Optional knobs and overrides                                             */
/* ------------------------------------------------------------------------ */

/* Knobs tile (split of 16 in 2, factors: 5 candidates), unroll (3), vec
 * (4) with defaults [4,4], 1, 8; vec optional. */
static hetc_plugin_space_t *optional_space(void) {
  const hetc_plugin_host_t *host = hetc_host_services();
  hetc_plugin_space_t *space = NULL;
  fail_status(hetc_space_create(&space), "create");
  const int64_t unroll[3] = {0, 1, 2}, vec[4] = {1, 2, 4, 8};
  fail_status(host->space_define_split(space, "tile", 16, 2, HETC_PLUGIN_SPLIT_FACTORS, 0, NULL, 0), "tile");
  fail_status(host->space_define_knob(space, "unroll", unroll, 3), "unroll");
  fail_status(host->space_define_annotate(space, "vec", vec, 4), "vec");
  const int64_t tile_default[2] = {4, 4}, unroll_default = 1, vec_default = 8;
  const hetc_plugin_knob_value_t knobs[3] = {
      {"tile", 2, tile_default}, {"unroll", 1, &unroll_default}, {"vec", 1, &vec_default}};
  const hetc_plugin_config_t config = {3, knobs};
  fail_status(host->space_set_default(space, &config), "default");
  fail_status(host->space_mark_optional(space, "vec"), "optional");
  return space;
}

static void default_values(const hetc_plugin_space_t *space, int64_t *tile0, int64_t *unroll,
                           int64_t *vec) {
  int64_t index;
  hetc_space_config_t config;
  fail_status(hetc_space_default(space, &index), "default");
  fail_status(hetc_space_config_at(space, index, &config), "config");
  *tile0 = config.knobs[0].values[0];
  *unroll = config.knobs[1].values[0];
  *vec = config.knobs[2].values[0];
}

static void optional_knobs_are_pinned_until_enabled(void **state) {
  (void)state;
  /* The host offers the service from 1.1 on (2.0 keeps it); a 1.0 table
   * does not cover it. */
  const hetc_plugin_host_t *host = hetc_host_services();
  assert_int_equal(host->header.abi_major, HETC_PLUGIN_ABI_MAJOR);
  assert_int_equal(host->header.abi_minor, HETC_PLUGIN_ABI_MINOR);
  assert_true(host->header.abi_major >= 2 || host->header.abi_minor >= 1);
  assert_true(HETC_PLUGIN_HAS_FIELD(host, hetc_plugin_host_t, space_mark_optional));
  assert_non_null(host->space_mark_optional);
  hetc_plugin_host_t minor0 = *host;
  minor0.header.struct_size = (uint32_t)offsetof(hetc_plugin_host_t, space_mark_optional);
  assert_false(HETC_PLUGIN_HAS_FIELD(&minor0, hetc_plugin_host_t, space_mark_optional));

  hetc_plugin_space_t *space = optional_space();
  int pinned = 0;
  assert_true(hetc_space_knob_is_optional(space, 2, &pinned));
  assert_true(pinned);
  assert_false(hetc_space_knob_is_optional(space, 1, &pinned));
  assert_int_equal(hetc_space_size(space), 5 * 3);
  int64_t tile0, unroll, vec;
  default_values(space, &tile0, &unroll, &vec);
  assert_int_equal(tile0, 4);
  assert_int_equal(unroll, 1);
  assert_int_equal(vec, 8);
  /* How `hetc space` shows each kind of knob. */
  FILE *file = tmpfile();
  assert_non_null(file);
  fail_status(hetc_space_print(space, "  ", 4, file), "print");
  char printed[1024] = "";
  rewind(file);
  size_t length = fread(printed, 1, sizeof(printed) - 1, file);
  printed[length] = 0;
  fclose(file);
  assert_string_equal(printed,
                      "   0 tile: split(policy=factors, product=16, parts=2) len=5 [[16, 1], [8, 2], "
                      "[4, 4], [2, 8], ...]\n"
                      "   1 unroll: other len=3 [0, 1, 2]\n"
                      "   2 vec: annotate len=1 [8] optional: pinned to its default (4 candidates "
                      "when enabled)\n");
  /* Enabling multiplies the size by the knob's full candidate count, and
   * the default stays the default. */
  fail_status(hetc_space_enable_knob(space, 2), "enable");
  assert_int_equal(hetc_space_size(space), 5 * 3 * 4);
  assert_false(hetc_space_knob_is_optional(space, 2, &pinned) && pinned);
  default_values(space, &tile0, &unroll, &vec);
  assert_int_equal(vec, 8);
  check_against_brute_force(space, "enabled");
  hetc_space_free(space);

  /* Marking needs a default first, and a knob that exists. */
  hetc_plugin_space_t *early = NULL;
  fail_status(hetc_space_create(&early), "create");
  const int64_t values[2] = {1, 2};
  fail_status(host->space_define_knob(early, "k", values, 2), "k");
  hetc_status_t status = host->space_mark_optional(early, "k");
  assert_string_equal(hetc_status_message(status),
                      "space_mark_optional('k'): call space_set_default first");
  hetc_status_free(status);
  status = host->space_mark_optional(early, "nope");
  assert_string_equal(hetc_status_message(status), "space_mark_optional: no knob 'nope'");
  hetc_status_free(status);
  hetc_space_free(early);
}

static hetc_space_overrides_t *parse_ok(const char *text) {
  hetc_space_overrides_t *overrides = NULL;
  fail_status(hetc_space_overrides_parse(text, strlen(text), "overrides.json", &overrides), text);
  return overrides;
}

static void overrides_enable_and_add(void **state) {
  (void)state;
  /* Enable the optional knob, add a split candidate (one duplicate) and
   * two unroll values (one duplicate). */
  hetc_space_overrides_t *overrides = parse_ok(
      "{\"templates\": {\"t\": {\"enable\": [\"vec\"],\n"
      "  \"add\": {\"tile\": [[3, 6], [4, 4]], \"unroll\": [4, 0, 8], \"vec\": [16]}},\n"
      " \"other\": {\"add\": {\"nothing\": [1]}}}}");
  hetc_plugin_space_t *space = optional_space();
  fail_status(hetc_space_overrides_apply(overrides, "t", space), "apply");
  assert_int_equal(hetc_space_knob_size(space, 0), 6);
  assert_int_equal(hetc_space_knob_size(space, 1), 5);
  assert_int_equal(hetc_space_knob_size(space, 2), 5);
  assert_int_equal(hetc_space_size(space), 6 * 5 * 5);
  const int64_t *split = hetc_space_knob_values(space, 0, 5);
  assert_int_equal(split[0], 3);
  assert_int_equal(split[1], 6);
  assert_int_equal(hetc_space_knob_values(space, 1, 3)[0], 4);
  assert_int_equal(hetc_space_knob_values(space, 1, 4)[0], 8);
  assert_int_equal(hetc_space_knob_values(space, 2, 3)[0], 8);
  assert_int_equal(hetc_space_knob_values(space, 2, 4)[0], 16);
  int64_t tile0, unroll, vec;
  default_values(space, &tile0, &unroll, &vec);
  assert_int_equal(tile0, 4);
  assert_int_equal(unroll, 1);
  assert_int_equal(vec, 8);
  hetc_space_free(space);

  /* Adding to a pinned knob without enabling it: its default and the
   * added values. */
  hetc_space_overrides_t *add_only =
      parse_ok("{\"templates\": {\"t\": {\"add\": {\"vec\": [16, 8]}}}}");
  space = optional_space();
  fail_status(hetc_space_overrides_apply(add_only, "t", space), "apply");
  assert_int_equal(hetc_space_knob_size(space, 2), 2);
  /* Enabling later puts the full list first. */
  fail_status(hetc_space_enable_knob(space, 2), "enable");
  assert_int_equal(hetc_space_knob_size(space, 2), 5);
  assert_int_equal(hetc_space_knob_values(space, 2, 4)[0], 16);
  hetc_space_free(space);
  hetc_space_overrides_free(add_only);

  /* Apply-time errors name the file, the place and the knob. */
  static const struct {
    const char *text, *message;
  } cases[] = {
      {"{\"templates\": {\"t\": {\"enable\": [\"vec\", \"vex\"]}}}",
       "overrides.json: templates.t.enable[1]: template 't' has no knob 'vex' (its knobs: tile, "
       "unroll, vec)"},
      {"{\"templates\": {\"t\": {\"add\": {\"tiles\": [1]}}}}",
       "overrides.json: templates.t.add.tiles: template 't' has no knob 'tiles' (its knobs: tile, "
       "unroll, vec)"},
      {"{\"templates\": {\"t\": {\"add\": {\"tile\": [[2, 8], 4]}}}}",
       "overrides.json: templates.t.add.tile[1]: knob 'tile' is a split into 2 parts: expected "
       "an array of 2 integers"},
      {"{\"templates\": {\"t\": {\"add\": {\"tile\": [[2, 2, 4]]}}}}",
       "overrides.json: templates.t.add.tile[0]: knob 'tile' is a split into 2 parts: expected "
       "an array of 2 integers"},
      {"{\"templates\": {\"t\": {\"add\": {\"unroll\": [[1]]}}}}",
       "overrides.json: templates.t.add.unroll[0]: knob 'unroll' takes one integer per "
       "candidate: expected an integer"},
  };
  for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); ++i) {
    hetc_space_overrides_t *bad = parse_ok(cases[i].text);
    space = optional_space();
    hetc_status_t status = hetc_space_overrides_apply(bad, "t", space);
    assert_non_null(status);
    assert_int_equal(hetc_status_code(status), HETC_STATUS_INVALID_ARGUMENT);
    assert_string_equal(hetc_status_message(status), cases[i].message);
    hetc_status_free(status);
    hetc_space_free(space);
    hetc_space_overrides_free(bad);
  }
  hetc_space_overrides_free(overrides);
}

static void malformed_overrides_are_refused(void **state) {
  (void)state;
  static const struct {
    const char *text, *message;
  } cases[] = {
      {"{\"templates\": {", "overrides.json: line 1, column 15: not valid JSON"},
      {"{\"templates\": {}} x",
       "overrides.json: line 1, column 19: not valid JSON (text after the top-level value)"},
      {"[1]", "overrides.json: expected a JSON object {\"templates\": {...}}"},
      {"{}", "overrides.json: templates: missing"},
      {"{\"templates\": {}, \"extra\": 1}",
       "overrides.json: extra: unknown key (expected \"templates\")"},
      {"{\"templates\": []}", "overrides.json: templates: expected an object"},
      {"{\"templates\": {\"a\": {}, \"a\": {}}}", "overrides.json: templates.a: given twice"},
      {"{\"templates\": {\"cpu_conv2d_nchwc\": 3}}",
       "overrides.json: templates.cpu_conv2d_nchwc: expected an object"},
      {"{\"templates\": {\"cpu_conv2d_nchwc\": {\"enabled\": []}}}",
       "overrides.json: templates.cpu_conv2d_nchwc.enabled: unknown key (expected \"enable\" or "
       "\"add\")"},
      {"{\"templates\": {\"t\": {\"enable\": \"vec\"}}}",
       "overrides.json: templates.t.enable: expected an array of knob names"},
      {"{\"templates\": {\"t\": {\"enable\": [\"vec\", 2]}}}",
       "overrides.json: templates.t.enable[1]: expected a knob name (a string)"},
      {"{\"templates\": {\"t\": {\"add\": [1]}}}",
       "overrides.json: templates.t.add: expected an object mapping knob names to arrays of "
       "values"},
      {"{\"templates\": {\"t\": {\"add\": {\"k\": 4}}}}",
       "overrides.json: templates.t.add.k: expected an array of values"},
      {"{\"templates\": {\"cpu_conv2d_nchwc\": {\"add\": {\"tile_oc\": [8, 16, \"24\"]}}}}",
       "overrides.json: templates.cpu_conv2d_nchwc.add.tile_oc[2]: expected an integer"},
      {"{\"templates\": {\"t\": {\"add\": {\"k\": [2.5]}}}}",
       "overrides.json: templates.t.add.k[0]: expected an integer"},
      {"{\"templates\": {\"t\": {\"add\": {\"k\": [1e300]}}}}",
       "overrides.json: templates.t.add.k[0]: expected an integer"},
      {"{\"templates\": {\"t\": {\"add\": {\"k\": [[4, true]]}}}}",
       "overrides.json: templates.t.add.k[0][1]: expected an integer"},
      {"{\"templates\": {\"t\": {\"add\": {\"k\": [[]]}}}}",
       "overrides.json: templates.t.add.k[0]: expected an array of 1 to 8 split parts"},
      {"{\"templates\": {\"t\": {\"add\": {\"k\": [1], \"k\": [2]}}}}",
       "overrides.json: templates.t.add.k: given twice"},
      /* A NUL escape would cut the name short; names that are not UTF-8
       * would reach messages and records. */
      {"{\"templates\": {\"t\\u0000x\": {}}}",
       "overrides.json: line 1, column 18: \\u0000 (a NUL character) is not allowed in a string"},
      {"{\"templates\": {\"t\xff\": {}}}",
       "overrides.json: templates: a member name is not valid UTF-8 (at byte 2 of the name)"},
      {"{\"\xc3\": {}}", "overrides.json: top level: a member name is not valid UTF-8 (at byte 1 of the name)"},
      {"{\"templates\": {\"t\": {\"enable\": [\"vec\", \"ve\xc3\"]}}}",
       "overrides.json: templates.t.enable[1]: not valid UTF-8 (at byte 3 of the string)"},
  };
  for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); ++i) {
    hetc_space_overrides_t *overrides = NULL;
    hetc_status_t status =
        hetc_space_overrides_parse(cases[i].text, strlen(cases[i].text), "overrides.json", &overrides);
    if (!status) fail_msg("accepted: %s", cases[i].text);
    assert_null(overrides);
    assert_int_equal(hetc_status_code(status), HETC_STATUS_INVALID_ARGUMENT);
    assert_string_equal(hetc_status_message(status), cases[i].message);
    hetc_status_free(status);
  }
  /* cJSON's nesting limit, 1000 levels, is said to be the nesting: here
   * the 997th bracket of "k"'s value is the 1001st level. */
  char deep[2200];
  int used = snprintf(deep, sizeof(deep), "{\"templates\": {\"t\": {\"add\": {\"k\": ");
  for (int level = 0; level < 997; ++level) deep[used++] = '[';
  deep[used] = '\0';
  hetc_space_overrides_t *overrides = NULL;
  hetc_status_t status = hetc_space_overrides_parse(deep, strlen(deep), "overrides.json", &overrides);
  assert_null(overrides);
  assert_string_equal(hetc_status_message(status),
                      "overrides.json: line 1, column 1031: arrays and objects nested deeper than 1000 levels");
  hetc_status_free(status);
  /* A file that is not there. */
  status = hetc_space_overrides_load("/nonexistent/overrides.json", &overrides);
  assert_int_equal(hetc_status_code(status), HETC_STATUS_IO_ERROR);
  hetc_status_free(status);
}

/* ------------------------------------------------------------------------ */
/* Real template spaces                                                     */
/* ------------------------------------------------------------------------ */

static void check_real_space(const hetc_plugin_space_t *space, uint64_t *rng, const char *what,
                             int *enumerated) {
  const int64_t size = hetc_space_size(space), valid = hetc_space_valid_count(space);
  const int32_t knobs = hetc_space_knob_count(space);
  assert_true(valid >= 1 && valid <= size);
  for (int i = 0; i < ROUND_TRIPS; ++i) {
    /* index -> config -> index, and index -> choices -> index. */
    const int64_t index = (int64_t)hetc_space_random_below(rng, (uint64_t)size);
    hetc_space_config_t config;
    int64_t back = -1, choices[HETC_SPACE_MAX_KNOBS];
    fail_status(hetc_space_config_at(space, index, &config), what);
    fail_status(hetc_space_index_of(space, &config.view, &back), what);
    assert_int_equal(back, index);
    for (int32_t k = 0; k < knobs; ++k) choices[k] = hetc_space_knob_choice(space, index, k);
    fail_status(hetc_space_index_from_choices(space, choices, &back), what);
    assert_int_equal(back, index);
    /* valid_at -> valid_rank, and the rank of a valid index. */
    const int64_t n = (int64_t)hetc_space_random_below(rng, (uint64_t)valid);
    int64_t point = -1, rank = -1;
    fail_status(hetc_space_valid_at(space, n, &point), what);
    assert_true(hetc_space_is_valid(space, point));
    fail_status(hetc_space_valid_rank(space, point, &rank), what);
    assert_int_equal(rank, n);
    if (hetc_space_is_valid(space, index)) {
      fail_status(hetc_space_valid_rank(space, index, &rank), what);
      fail_status(hetc_space_valid_at(space, rank, &point), what);
      assert_int_equal(point, index);
    }
  }
  check_neighbors(space, rng, 200, what);
  if (size <= MAX_BRUTE_FORCE) {
    check_against_brute_force(space, what);
    ++*enumerated;
  }
}

static void check_target(const char *target, int *spaces, int *enumerated) {
  hetc_plugin_entry_t *entry = target_entry(target);
  if (!entry) return;
  uint64_t rng = 2024;
  for (int32_t w = 0; w < num_workloads; ++w) {
    const hetc_plugin_workload_t *workload = &workloads[w].workload;
    if (!entry->plugin->supports(entry->instance, 0, workload)) continue;
    hetc_task_space_t *task = NULL;
    fail_status(hetc_task_space_create(entry->plugin, entry->instance, 0, workload, NULL, &task),
                workloads[w].key);
    int64_t total = 0, valid = 0;
    for (int32_t t = 0; t < hetc_task_space_template_count(task); ++t) {
      const hetc_plugin_space_t *space = hetc_task_space_template_space(task, t);
      if (!space) {
        printf("%s %s: template %s skipped: %s\n", target, workloads[w].key,
               hetc_task_space_template_name(task, t), hetc_task_space_template_error(task, t));
        continue;
      }
      char what[400];
      snprintf(what, sizeof(what), "%s %s %s", target, hetc_task_space_template_name(task, t),
               workloads[w].key);
      check_real_space(space, &rng, what, enumerated);
      ++*spaces;
      /* Global <-> (template, local). */
      const int64_t local = (int64_t)hetc_space_random_below(&rng, (uint64_t)hetc_space_size(space));
      const int64_t global = hetc_task_space_global(task, t, local);
      int32_t back_t = -1;
      int64_t back_local = -1;
      fail_status(hetc_task_space_locate(task, global, &back_t, &back_local), what);
      assert_int_equal(back_t, t);
      assert_int_equal(back_local, local);
      assert_int_equal(hetc_task_space_is_valid(task, global), hetc_space_is_valid(space, local));
      total += hetc_space_size(space);
      valid += hetc_space_valid_count(space);
    }
    assert_int_equal(hetc_task_space_size(task), total);
    assert_int_equal(hetc_task_space_valid_count(task), valid);
    /* Task-level sampling and neighbours land on valid points; a
     * neighbour is one knob away or another template's default. */
    for (int i = 0; i < 200; ++i) {
      int64_t global, neighbor, local, default_local;
      int32_t t, nt;
      fail_status(hetc_task_space_sample_valid(task, &rng, &global), workloads[w].key);
      assert_true(hetc_task_space_is_valid(task, global));
      hetc_status_t status = hetc_task_space_random_neighbor(task, global, &rng, &neighbor);
      if (status) {
        assert_int_equal(hetc_status_code(status), HETC_STATUS_UNSUPPORTED);
        hetc_status_free(status);
        continue;
      }
      assert_true(hetc_task_space_is_valid(task, neighbor));
      fail_status(hetc_task_space_locate(task, global, &t, &local), "locate");
      fail_status(hetc_task_space_locate(task, neighbor, &nt, &local), "locate");
      const hetc_plugin_space_t *space = hetc_task_space_template_space(task, nt);
      if (nt != t) {
        fail_status(hetc_space_default(space, &default_local), "default");
        assert_int_equal(local, default_local);
      } else {
        int differ = 0;
        const int64_t start_local = global - hetc_task_space_global(task, t, 0);
        for (int32_t k = 0; k < hetc_space_knob_count(space); ++k)
          differ += hetc_space_knob_choice(space, start_local, k) != hetc_space_knob_choice(space, local, k);
        assert_int_equal(differ, 1);
      }
    }
    int64_t global;
    hetc_space_config_t config;
    int32_t t;
    fail_status(hetc_task_space_default(task, &global), "default");
    fail_status(hetc_task_space_config(task, global, &t, &config), "config");
    assert_int_equal(t, 0);
    hetc_task_space_free(task);
  }
}

static void real_spaces_round_trip_and_match_brute_force(void **state) {
  (void)state;
  int spaces = 0, enumerated = 0;
  check_target("vec", &spaces, &enumerated);
  const int vec_spaces = spaces;
  check_target("cpu", &spaces, &enumerated);
  printf("%d template spaces over %d workloads (%d vec), %d enumerated in full\n", spaces,
         num_workloads, vec_spaces, enumerated);
  assert_true(vec_spaces >= 10);
  assert_true(enumerated >= 10);
}

static void task_space_overrides(void **state) {
  (void)state;
  hetc_plugin_entry_t *entry = target_entry("vec");
  assert_non_null(entry);
  /* The first task of resnet18: its stem conv2d. */
  const hetc_plugin_workload_t *workload = &workloads[0].workload;
  hetc_task_space_t *plain = NULL, *grown = NULL;
  fail_status(hetc_task_space_create(entry->plugin, entry->instance, 0, workload, NULL, &plain),
              "plain");
  assert_string_equal(hetc_task_space_template_name(plain, 0), "vec_conv2d_nchwc");
  const hetc_plugin_space_t *space = hetc_task_space_template_space(plain, 0);
  const int32_t tile_oc = hetc_space_find_knob(space, "tile_oc");
  assert_true(tile_oc >= 0);
  const int64_t before = hetc_space_knob_size(space, tile_oc);
  /* 8 is there already; 24 and 40 are new. Enabling a knob that is not
   * optional changes nothing. */
  hetc_space_overrides_t *overrides = parse_ok(
      "{\"templates\": {\"vec_conv2d_nchwc\": {\"enable\": [\"parallel\"], "
      "\"add\": {\"tile_oc\": [24, 8, 40]}}}}");
  fail_status(hetc_task_space_create(entry->plugin, entry->instance, 0, workload, overrides, &grown),
              "grown");
  const hetc_plugin_space_t *grown_space = hetc_task_space_template_space(grown, 0);
  assert_int_equal(hetc_space_knob_size(grown_space, tile_oc), before + 2);
  assert_int_equal(hetc_space_size(grown_space),
                   hetc_space_size(space) / before * (before + 2));
  assert_int_equal(hetc_space_knob_values(grown_space, tile_oc, before)[0], 24);
  assert_int_equal(hetc_space_knob_values(grown_space, tile_oc, before + 1)[0], 40);
  assert_int_equal(hetc_task_space_size(grown) - hetc_task_space_size(plain),
                   hetc_space_size(grown_space) - hetc_space_size(space));
  hetc_task_space_free(grown);
  hetc_task_space_free(plain);
  hetc_space_overrides_free(overrides);

  /* A template or knob that is not there. */
  /* A template the workload does not offer is the caller's check (one
   * overrides file serves every task of a model): the task space is built,
   * and the check names what there is. */
  {
    hetc_space_overrides_t *other = parse_ok("{\"templates\": {\"vec_conv2d_nhwc\": {}}}");
    hetc_task_space_t *task = NULL;
    assert_null(hetc_task_space_create(entry->plugin, entry->instance, 0, workload, other, &task));
    const char *names[8];
    int32_t n = hetc_task_space_template_count(task);
    for (int32_t t = 0; t < n; ++t) names[t] = hetc_task_space_template_name(task, t);
    hetc_status_t status = hetc_space_overrides_check_templates(other, "vec", names, n);
    assert_non_null(status);
    assert_string_equal(hetc_status_message(status),
                        "overrides.json: templates.vec_conv2d_nhwc: backend 'vec' has no template "
                        "'vec_conv2d_nhwc' for this workload (it has vec_conv2d_nchwc, vec_conv2d_nchw)");
    hetc_status_free(status);
    hetc_task_space_free(task);
    hetc_space_overrides_free(other);
  }
  static const struct {
    const char *text, *message;
  } cases[] = {
      {"{\"templates\": {\"vec_conv2d_nchw\": {\"add\": {\"tile_oc\": [8]}}}}",
       "overrides.json: templates.vec_conv2d_nchw.add.tile_oc: template 'vec_conv2d_nchw' has no "
       "knob 'tile_oc' (its knobs: reorder, parallel, unroll_kw)"},
  };
  for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); ++i) {
    hetc_space_overrides_t *bad = parse_ok(cases[i].text);
    hetc_task_space_t *task = NULL;
    hetc_status_t status =
        hetc_task_space_create(entry->plugin, entry->instance, 0, workload, bad, &task);
    assert_null(task);
    assert_non_null(status);
    assert_int_equal(hetc_status_code(status), HETC_STATUS_INVALID_ARGUMENT);
    assert_string_equal(hetc_status_message(status), cases[i].message);
    hetc_status_free(status);
    hetc_space_overrides_free(bad);
  }
}

/* ------------------------------------------------------------------------ */
/* hetc space                                                               */
/* ------------------------------------------------------------------------ */

/* Runs a shell command; its stdout and stderr land in *out (owned by the
 * caller). Returns the exit status. */
static int run_capture(char **out, const char *format, ...) {
  char command[8192], path[4096];
  snprintf(path, sizeof(path), "%s/test_space_out_%d.txt",
           getenv("HETC_BINARY_DIR") ? getenv("HETC_BINARY_DIR") : ".", (int)getpid());
  va_list args;
  va_start(args, format);
  int length = vsnprintf(command, sizeof(command), format, args);
  va_end(args);
  snprintf(command + length, sizeof(command) - (size_t)length, " > %s 2>&1", path);
  int status = system(command);
  size_t bytes = 0;
  if (hetc_file_read_all(path, 1 << 22, out, &bytes)) *out = NULL;
  unlink(path);
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

static void hetc_space_command(void **state) {
  (void)state;
  const char *bin = getenv("HETC_BINARY_DIR") ? getenv("HETC_BINARY_DIR") : ".";
  const char *source = getenv("HETC_SOURCE_DIR") ? getenv("HETC_SOURCE_DIR") : ".";
  char *out = NULL;
  assert_int_equal(run_capture(&out, "%s/bin/hetc space %s/samples/resnet18.json --task 2 --target vec",
                               bin, source),
                   0);
  assert_non_null(out);
  printf("%s", out);
  const char *want =
      "resnet18 task 2 of 19: conv2d n1 c64 h56 w56 k64 r3x3 s1x1 p1,1,1,1 d1x1 g1+bias+relu f32 (2 nodes)\n"
      "target vec, device 0: ";
  assert_true(strncmp(out, want, strlen(want)) == 0);
  assert_non_null(strstr(out, "\nTaskSpace (len="));
  assert_non_null(strstr(out, ", templates=2, backend=vec)\n  template 0: vec_conv2d_nchwc v1 (len="));
  assert_non_null(strstr(out, "\n  template 1: vec_conv2d_nchw v1 (len=8, valid=8, global=["));
  assert_non_null(strstr(out, "\n     0 reorder: reorder len=2 [0, 1]\n"));
  free(out);

  /* Bad task numbers and overrides are the user's: exit 2. */
  assert_int_equal(run_capture(&out, "%s/bin/hetc space %s/samples/resnet18.json --task 20 --target vec",
                               bin, source),
                   2);
  char want_error[4400];
  snprintf(want_error, sizeof(want_error), "hetc: --task 20: %s/samples/resnet18.json has 19 tasks (1..19)\n",
           source);
  assert_string_equal(out, want_error);
  free(out);
  assert_int_equal(run_capture(&out, "%s/bin/hetc space %s/samples/resnet18.json --task x --target vec",
                               bin, source),
                   2);
  assert_string_equal(out, "hetc space: --task: expected a whole number from 1 to 2147483647, got 'x'\n"
                           "usage: hetc space MODEL.json|MODEL.onnx --task N --target T [--overrides FILE]\n"
                           "  --task N   the task's number as `hetc tasks` prints it, 1 or more\n"
                           "  --input-shape NAME=DIMS[,...]  shapes of an ONNX model's symbolic inputs (e.g. "
                           "input=1x3x224x224)\n");
  free(out);
  char overrides[4096];
  snprintf(overrides, sizeof(overrides), "%s/test_space_overrides_%d.json", bin, (int)getpid());
  const char *text = "{\"templates\": {\"vec_conv2d_nchwc\": {\"add\": {\"tile_oc\": [8, \"x\"]}}}}";
  fail_status(hetc_file_write_all(overrides, text, strlen(text)), "write");
  assert_int_equal(run_capture(&out, "%s/bin/hetc space %s/samples/resnet18.json --task 2 --target vec --overrides %s",
                               bin, source, overrides),
                   2);
  snprintf(want_error, sizeof(want_error),
           "hetc: %s: templates.vec_conv2d_nchwc.add.tile_oc[1]: expected an integer\n", overrides);
  assert_string_equal(out, want_error);
  free(out);
  text = "{\"templates\": {\"vec_conv2d_nchwc\": {\"add\": {\"tile_oc\": [24]}}}}";
  fail_status(hetc_file_write_all(overrides, text, strlen(text)), "write");
  assert_int_equal(run_capture(&out, "%s/bin/hetc space %s/samples/resnet18.json --task 2 --target vec --overrides %s",
                               bin, source, overrides),
                   0);
  assert_non_null(strstr(out, " tile_oc: other len=5 [8, 16, 32, 64, 24]\n"));
  free(out);
  unlink(overrides);
}

/* A constraint reading its threshold from the data the host copied. */
static int below_copied_limit(const hetc_plugin_config_t *config, const void *user_data) {
  const int64_t *limit = user_data;
  return config->knobs[0].values[0] < *limit;
}

/* space_add_constraint_copy (ABI minor 3): the space keeps its own copy of
 * the data, so the plugin's may change or go before the space is used. */
static void constraint_data_is_copied(void **state) {
  (void)state;
  hetc_plugin_space_t *space = NULL;
  fail_status(hetc_space_create(&space), "create");
  const int64_t values[] = {1, 2, 3, 4, 5, 6};
  fail_status(hetc_space_define_knob(space, "a", values, 6), "define");
  const char *names[] = {"a"};
  int64_t *limit = malloc(sizeof(int64_t));
  *limit = 4;
  fail_status(hetc_space_add_constraint_copy(space, names, 1, below_copied_limit, limit, sizeof(*limit)), "constraint");
  *limit = 100; /* the plugin's copy changes, then goes */
  free(limit);
  assert_int_equal(hetc_space_valid_count(space), 3);
  for (int64_t i = 0; i < 6; ++i) assert_int_equal(hetc_space_is_valid(space, i), i < 3);
  /* A refused constraint keeps no copy (the leak check of the sanitizer
   * build sees one), and data of no bytes is NULL. */
  const char *unknown[] = {"zz"};
  hetc_status_t status = hetc_space_add_constraint_copy(space, unknown, 1, below_copied_limit, values, 8);
  assert_non_null(status);
  assert_string_equal(hetc_status_message(status), "constraint names unknown knob 'zz'");
  hetc_status_free(status);
  status = hetc_space_add_constraint_copy(space, names, 1, below_copied_limit, NULL, 8);
  assert_non_null(status);
  assert_string_equal(hetc_status_message(status), "constraint data of 8 bytes at NULL");
  hetc_status_free(status);
  hetc_space_free(space);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(hand_built_counts_match_brute_force),
      cmocka_unit_test(sampling_is_uniform_and_never_fails),
      cmocka_unit_test(neighbors_differ_in_one_knob),
      cmocka_unit_test(oversized_component_is_refused),
      cmocka_unit_test(split_policies),
      cmocka_unit_test(constraint_data_is_copied),
      cmocka_unit_test(optional_knobs_are_pinned_until_enabled),
      cmocka_unit_test(overrides_enable_and_add),
      cmocka_unit_test(malformed_overrides_are_refused),
      cmocka_unit_test(real_spaces_round_trip_and_match_brute_force),
      cmocka_unit_test(task_space_overrides),
      cmocka_unit_test(hetc_space_command),
  };
  return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
