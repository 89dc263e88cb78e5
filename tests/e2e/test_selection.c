/* Graph-level selection (README.md, "Tuning"; place/placement_costs.c).
 *
 * selection: crafted records give the three convs of
 * tests/e2e/models/selection.json tuned configs in several channel blocks
 * on cpu. `hetc compile` then weighs them with every template's default and
 * the layouts the pool can follow; the problem it solved
 * (HETC_PLACEMENT_PROBLEM) is solved again here by brute force over every
 * combination of options, and the chosen plan must be the cheapest one
 * under the same latency model, its latency what compile predicted. The
 * package must match the reference executor.
 *
 * many_layouts: ResNet-50 with a tuning run's records
 * (tests/tune/data/resnet50_cpu_tuned, configs in channel blocks of 8 to
 * 64), compiled on cpu, vec and cpu,vec with and without --explain, and a
 * small model with crafted records on cpu,vec,opencl: every target keeps
 * options in the problem (none is dropped for having many layouts), and
 * every package matches the reference. */
#include <cjson/cJSON.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "common/fileio.h"
#include "e2e_util.h"
#include "graph/passes.h"
#include "graph/tasks.h"
#include "model/model.h"
#include "place/placement.h"
#include "plugins/registry.h"
#include "space/space.h"
#include "records/config_json.h"
#include "records/records.h"

#define TOLERANCE 1e-4
#define MAX_NODES 64
#define MAX_OPTIONS 64

static void assert_ok(hetc_status_t status) {
  if (status) fail_msg("%s", hetc_status_message(status));
}

static const char *build_path(const char *name) {
  static char path[2][1024];
  static int which;
  which ^= 1;
  snprintf(path[which], sizeof(path[which]), "%s/%s-%d", getenv("HETC_BINARY_DIR"), name, (int)getpid());
  return path[which];
}

/* ------------------------------------------------------------------------ */
/* Crafted records                                                          */
/* ------------------------------------------------------------------------ */

/* Up to `count` configs of template t with distinct (tile_ic, tile_oc),
 * each recorded for the workload on the device. */
static int record_configs(hetc_records_t *store, hetc_plugin_entry_t *entry, const hetc_plugin_workload_t *workload,
                          int32_t t, int count) {
  const hetc_plugin_t *p = entry->plugin;
  const hetc_plugin_device_t *device = p->device_get(entry->instance, 0);
  hetc_plugin_space_t *space = NULL;
  assert_ok(hetc_space_create(&space));
  assert_ok(p->template_define_space(entry->instance, 0, workload, t, space));
  int64_t seen[16][2];
  int found = 0;
  char key[HETC_TASK_KEY_SIZE];
  hetc_workload_key(workload, key, sizeof(key));
  for (int64_t index = 0; index < hetc_space_size(space) && found < count; index += 7) {
    if (!hetc_space_is_valid(space, index)) continue;
    hetc_space_config_t config;
    assert_ok(hetc_space_config_at(space, index, &config));
    const hetc_plugin_knob_value_t *ic = hetc_config_find(&config.view, "tile_ic");
    const hetc_plugin_knob_value_t *oc = hetc_config_find(&config.view, "tile_oc");
    if (!ic || !oc) break;
    int distinct = 1;
    for (int i = 0; i < found; ++i) distinct &= seen[i][0] != ic->values[0] || seen[i][1] != oc->values[0];
    if (!distinct) continue;
    seen[found][0] = ic->values[0];
    seen[found][1] = oc->values[0];
    char *json = hetc_config_to_json(&config.view);
    hetc_record_t record = {
        .target = (char *)p->name, .plugin_version = (char *)p->version, .device_kind = "cpu",
        .device_fingerprint = (char *)device->fingerprint,
        .template_name = (char *)p->template_name(entry->instance, 0, workload, t),
        .template_version = p->template_version(entry->instance, 0, workload, t), .workload_key = key,
        .config_index = index, .config_json = json, .num_costs = 1, .costs = {1e-4 * (1 + found)},
        .error = HETC_RECORD_OK, .timestamp = 1700000000, .hetc_version = "test"};
    assert_ok(hetc_records_add(store, &record, 1));
    free(json);
    ++found;
  }
  hetc_space_free(space);
  return found;
}

/* Records for every conv2d of the model on cpu: three configs of each
 * template that has channel blocks. */
static void craft_records(const char *model_path, const char *store_path) {
  remove(store_path);
  hetc_registry_t *registry = NULL;
  hetc_plugin_entry_t *entry = NULL;
  assert_ok(hetc_registry_open(&registry));
  assert_ok(hetc_registry_target(registry, "cpu", &entry));
  hetc_graph_t *graph = NULL;
  assert_ok(hetc_model_load_file(model_path, &graph));
  assert_ok(hetc_graph_optimize(graph));
  hetc_records_t *store = NULL;
  assert_ok(hetc_records_open(store_path, &store));
  int recorded = 0;
  for (int32_t k = 0; k < graph->num_nodes; ++k) {
    hetc_plugin_tensor_t inputs[HETC_MAX_NODE_INPUTS];
    hetc_plugin_workload_t workload;
    assert_ok(hetc_graph_node_workload(graph, k, inputs, &workload));
    if (workload.op != HETC_PLUGIN_OP_CONV2D) continue;
    for (int32_t t = 0; t < entry->plugin->template_count(entry->instance, 0, &workload); ++t)
      recorded += record_configs(store, entry, &workload, t, 3);
  }
  printf("crafted %d records\n", recorded);
  assert_true(recorded >= 9);
  hetc_records_close(store);
  hetc_graph_free(graph);
  hetc_registry_free(registry);
}

/* ------------------------------------------------------------------------ */
/* The problem compile solved, read back                                    */
/* ------------------------------------------------------------------------ */

typedef struct dumped_t {
  int32_t devices, layouts, num_nodes, num_inputs;
  double predicted;
  double transform[HETC_PLACE_MAX_DEVICES], to_device[HETC_PLACE_MAX_DEVICES][2], to_host[HETC_PLACE_MAX_DEVICES][2];
  double switch_[HETC_PLACE_MAX_DEVICES * HETC_PLACE_MAX_DEVICES];
  double model_input_bytes[4];
  hetc_place_node_t nodes[MAX_NODES];
  int32_t inputs[MAX_NODES][HETC_MAX_NODE_INPUTS];
  hetc_place_option_t options[MAX_NODES][MAX_OPTIONS];
  int32_t chosen[MAX_NODES];
  int tuned_options, layouts_seen;
  int32_t options_on[HETC_PLACE_MAX_DEVICES];
} dumped_t;

static double copy_seconds(const void *context, int32_t from, int32_t to, double bytes) {
  const dumped_t *d = context;
  double seconds = 0;
  if (from != d->devices) seconds += d->to_host[from][0] + bytes * d->to_host[from][1];
  if (to != d->devices) seconds += d->to_device[to][0] + bytes * d->to_device[to][1];
  return seconds;
}

static double transform_seconds(const void *context, int32_t device, int32_t from, int32_t to, double bytes) {
  const dumped_t *d = context;
  return from == to || device >= d->devices ? 0 : bytes * d->transform[device];
}

static double switch_seconds(const void *context, int32_t from, int32_t to) {
  const dumped_t *d = context;
  return d->switch_[from * d->devices + to];
}

static double number_at(const cJSON *array, int i) { return cJSON_GetArrayItem(array, i)->valuedouble; }

static void read_problem(const char *path, dumped_t *d) {
  memset(d, 0, sizeof(*d));
  char *text = NULL;
  size_t length = 0;
  assert_ok(hetc_file_read_all(path, 1 << 26, &text, &length));
  cJSON *root = cJSON_Parse(text);
  free(text);
  assert_non_null(root);
  d->devices = cJSON_GetObjectItem(root, "devices")->valueint;
  d->layouts = cJSON_GetObjectItem(root, "layouts")->valueint;
  d->predicted = cJSON_GetObjectItem(root, "predicted_seconds")->valuedouble;
  assert_true(d->devices >= 1 && d->devices <= HETC_PLACE_MAX_DEVICES);
  for (int32_t i = 0; i < d->devices; ++i) {
    d->transform[i] = number_at(cJSON_GetObjectItem(root, "transform_seconds_per_byte"), i);
    for (int j = 0; j < 2; ++j) {
      d->to_device[i][j] = number_at(cJSON_GetArrayItem(cJSON_GetObjectItem(root, "to_device"), i), j);
      d->to_host[i][j] = number_at(cJSON_GetArrayItem(cJSON_GetObjectItem(root, "to_host"), i), j);
    }
  }
  for (int32_t i = 0; i < d->devices * d->devices; ++i) d->switch_[i] = number_at(cJSON_GetObjectItem(root, "switch_seconds"), i);
  const cJSON *inputs = cJSON_GetObjectItem(root, "model_input_bytes");
  d->num_inputs = cJSON_GetArraySize(inputs);
  assert_true(d->num_inputs <= 4);
  for (int32_t m = 0; m < d->num_inputs; ++m) d->model_input_bytes[m] = number_at(inputs, m);
  const cJSON *nodes = cJSON_GetObjectItem(root, "nodes");
  d->num_nodes = cJSON_GetArraySize(nodes);
  assert_true(d->num_nodes <= MAX_NODES);
  int32_t layout_seen[64] = {0};
  for (int32_t k = 0; k < d->num_nodes; ++k) {
    const cJSON *node = cJSON_GetArrayItem(nodes, k);
    hetc_place_node_t *pn = &d->nodes[k];
    const cJSON *in = cJSON_GetObjectItem(node, "inputs");
    pn->num_inputs = cJSON_GetArraySize(in);
    for (int32_t i = 0; i < pn->num_inputs; ++i) d->inputs[k][i] = cJSON_GetArrayItem(in, i)->valueint;
    pn->inputs = d->inputs[k];
    pn->output_bytes = cJSON_GetObjectItem(node, "output_bytes")->valuedouble;
    pn->is_model_output = cJSON_GetObjectItem(node, "is_model_output")->valueint;
    d->chosen[k] = cJSON_GetObjectItem(node, "chosen")->valueint;
    const cJSON *options = cJSON_GetObjectItem(node, "options");
    pn->num_options = cJSON_GetArraySize(options);
    assert_true(pn->num_options >= 1 && pn->num_options <= MAX_OPTIONS);
    for (int32_t o = 0; o < pn->num_options; ++o) {
      const cJSON *opt = cJSON_GetArrayItem(options, o);
      d->options[k][o] = (hetc_place_option_t){cJSON_GetObjectItem(opt, "device")->valueint,
                                               cJSON_GetObjectItem(opt, "in")->valueint,
                                               cJSON_GetObjectItem(opt, "out")->valueint,
                                               cJSON_GetObjectItem(opt, "seconds")->valuedouble};
      d->tuned_options += !strcmp(cJSON_GetObjectItem(opt, "source")->valuestring, "tuned");
      ++d->options_on[d->options[k][o].device];
      layout_seen[d->options[k][o].in_layout] = layout_seen[d->options[k][o].out_layout] = 1;
    }
    pn->options = d->options[k];
  }
  for (int l = 0; l < 64; ++l) d->layouts_seen += layout_seen[l];
  cJSON_Delete(root);
}

/* The lowest latency over every combination of options. */
static double brute_force(const dumped_t *d, const hetc_place_problem_t *problem, const hetc_place_costs_t *costs,
                          int64_t *out_plans) {
  int32_t choice[MAX_NODES] = {0};
  double best = INFINITY;
  *out_plans = 0;
  for (;;) {
    const double seconds = hetc_place_evaluate(problem, costs, choice);
    if (seconds < best) best = seconds;
    ++*out_plans;
    int32_t k = 0;
    while (k < d->num_nodes && ++choice[k] == d->nodes[k].num_options) choice[k++] = 0;
    if (k == d->num_nodes) return best;
  }
}

/* ------------------------------------------------------------------------ */

static void selection(void **state) {
  (void)state;
  char model[4096];
  snprintf(model, sizeof(model), "%s/tests/e2e/models/selection.json", getenv("HETC_SOURCE_DIR"));
  char store[1024], dump[1024], env[2200], flags[1200];
  snprintf(store, sizeof(store), "%s", build_path("selection.sqlite"));
  snprintf(dump, sizeof(dump), "%s", build_path("selection-problem.json"));
  craft_records(model, store);
  snprintf(env, sizeof(env), "HETC_PLACEMENT_PROBLEM=%s", dump);
  snprintf(flags, sizeof(flags), "--records %s", store);
  char printed[8192];
  const double error = e2e_compile_and_check(model, "cpu", flags, env, printed, sizeof(printed));
  printf("selection.json on cpu with crafted records: max rel error %.2e\n", error);
  assert_true(error <= TOLERANCE);

  dumped_t d;
  read_problem(dump, &d);
  const hetc_place_problem_t problem = {d.num_nodes, d.nodes, d.num_inputs, d.model_input_bytes, d.layouts};
  const hetc_place_costs_t costs = {.num_devices = d.devices, .copy_seconds = copy_seconds,
                                    .transform_seconds = transform_seconds, .context = &d,
                                    .switch_seconds = switch_seconds};
  int64_t plans = 0;
  const double best = brute_force(&d, &problem, &costs, &plans);
  const double chosen = hetc_place_evaluate(&problem, &costs, d.chosen);
  printf("%lld plans: the cheapest %.6f ms, the chosen %.6f ms, predicted %.6f ms; %d tuned options, %d layouts\n",
         (long long)plans, best * 1e3, chosen * 1e3, d.predicted * 1e3, d.tuned_options, d.layouts_seen);
  assert_true(plans >= 100);          /* a real choice */
  assert_true(d.tuned_options >= 6);  /* the crafted records were weighed */
  assert_true(d.layouts_seen >= 3);   /* in several layouts */
  assert_true(fabs(chosen - best) <= 1e-9 * best);
  assert_true(fabs(d.predicted - chosen) <= 1e-9 * chosen);
  remove(store);
  remove(dump);
}

/* Every target keeps options; the package matches the reference. */
static void compile_keeping_targets(const char *model, const char *targets, const char *flags) {
  char dump[1024], env[2200];
  snprintf(dump, sizeof(dump), "%s", build_path("many-layouts-problem.json"));
  snprintf(env, sizeof(env), "HETC_PLACEMENT_PROBLEM=%s", dump);
  remove(dump);
  const double error = e2e_compile_and_check(model, targets, flags, env, NULL, 0);
  printf("%s on %s (%s): max rel error %.2e\n", model, targets, flags, error);
  assert_true(error <= TOLERANCE);
  dumped_t d;
  read_problem(dump, &d);
  int32_t expected = 1;
  for (const char *c = targets; *c; ++c) expected += *c == ',';
  assert_int_equal(d.devices, expected);
  for (int32_t t = 0; t < d.devices; ++t) {
    printf("  target %d: %d options\n", t, d.options_on[t]);
    assert_true(d.options_on[t] > 0);
  }
  printf("  %d tuned options, %d layouts\n", d.tuned_options, d.layouts_seen);
  remove(dump);
}

static void many_layouts(void **state) {
  (void)state;
  char store[1024], jsonl[1200], command[4096], flags[2200], explain[2300];
  snprintf(store, sizeof(store), "%s", build_path("resnet50-tuned.sqlite"));
  snprintf(jsonl, sizeof(jsonl), "%s/tests/tune/data/resnet50_cpu_tuned.jsonl", getenv("HETC_BINARY_DIR"));
  remove(store);
  snprintf(command, sizeof(command), "%s records import %s --records %s", e2e_hetc(), jsonl, store);
  assert_int_equal(system(command), 0);
  snprintf(flags, sizeof(flags), "--records %s", store);
  snprintf(explain, sizeof(explain), "--records %s --explain", store);
  const char *resnet50 = e2e_sample_path("resnet50.json");
  compile_keeping_targets(resnet50, "cpu", flags);
  compile_keeping_targets(resnet50, "cpu", explain);
  compile_keeping_targets(resnet50, "vec", explain);
  compile_keeping_targets(resnet50, "cpu,vec", flags);
  compile_keeping_targets(resnet50, "cpu,vec", explain);
  remove(store);
}

static void three_targets(void **state) {
  (void)state;
  char model[4096], store[1024], flags[2200], explain[2300];
  snprintf(model, sizeof(model), "%s/tests/e2e/models/selection.json", getenv("HETC_SOURCE_DIR"));
  snprintf(store, sizeof(store), "%s", build_path("three-targets.sqlite"));
  craft_records(model, store);
  snprintf(flags, sizeof(flags), "--records %s", store);
  snprintf(explain, sizeof(explain), "--records %s --explain", store);
  compile_keeping_targets(model, "cpu,vec,opencl", flags);
  compile_keeping_targets(model, "cpu,vec,opencl", explain);
  remove(store);
}

int main(int argc, char **argv) {
  const struct CMUnitTest tests[] = {cmocka_unit_test(selection), cmocka_unit_test(many_layouts),
                                     cmocka_unit_test(three_targets)};
  /* ctest runs the three apart: the one named, or selection. */
  cmocka_set_test_filter(argc > 1 ? argv[1] : "selection");
  return cmocka_run_group_tests(tests, NULL, NULL);
}
