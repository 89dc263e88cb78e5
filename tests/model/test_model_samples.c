/* Good models: every samples/ model file loads; a weights file's values arrive
 * bit for bit; the random init is deterministic and equals the reference
 * implementation in samples/gen_samples.py (random_init_values), whose
 * float32 bits tests/model/make_cases.py stores in random_init_golden.txt. */
#define _POSIX_C_SOURCE 200809L /* strdup, strtok_r, chdir */

#include <dirent.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "common/fileio.h"
#include "model/model.h"

static char source_dir[4096];

static int setup(void **state) {
  (void)state;
  const char *source = getenv("HETC_SOURCE_DIR");
  if (!source) {
    fprintf(stderr, "HETC_SOURCE_DIR is not set (run through ctest)\n");
    return -1;
  }
  snprintf(source_dir, sizeof(source_dir), "%s", source);
  return 0;
}

static hetc_graph_t *load_sample(const char *name) {
  char path[4200];
  snprintf(path, sizeof(path), "%s/samples/%s", source_dir, name);
  hetc_graph_t *graph = NULL;
  hetc_status_t status = hetc_model_load_file(path, &graph);
  if (status) fail_msg("%s: %s", name, hetc_status_message(status));
  assert_non_null(graph);
  return graph;
}

/* The param of `graph` called `tensor` ("<node>.<suffix>"), or NULL. */
static const hetc_param_t *find_param(const hetc_graph_t *graph, const char *tensor) {
  for (int32_t k = 0; k < graph->num_nodes; ++k) {
    const hetc_node_t *node = &graph->nodes[k];
    for (int slot = 0; slot < HETC_PARAM_SLOTS; ++slot) {
      const char *suffix = hetc_weights_param_suffix(node->op, slot);
      if (!suffix || !node->params[slot].data) continue;
      char name[600];
      snprintf(name, sizeof(name), "%s.%s", node->name, suffix);
      if (strcmp(name, tensor) == 0) return &node->params[slot];
    }
  }
  return NULL;
}

static int64_t param_total(const hetc_graph_t *graph, int *num_params) {
  int64_t total = 0;
  *num_params = 0;
  for (int32_t k = 0; k < graph->num_nodes; ++k) {
    hetc_param_t shape;
    for (int slot = 0; slot < HETC_PARAM_SLOTS; ++slot) {
      if (!hetc_weights_param_shape(graph, &graph->nodes[k], slot, &shape)) continue;
      const hetc_param_t *p = &graph->nodes[k].params[slot];
      assert_non_null(p->data);
      assert_int_equal(p->count, shape.count);
      assert_int_equal(p->rank, shape.rank);
      total += p->count;
      ++*num_params;
    }
  }
  return total;
}

static void test_every_sample_loads(void **state) {
  (void)state;
  char dir_path[4200];
  snprintf(dir_path, sizeof(dir_path), "%s/samples", source_dir);
  DIR *dir = opendir(dir_path);
  assert_non_null(dir);
  int loaded = 0;
  for (struct dirent *entry; (entry = readdir(dir));) {
    size_t length = strlen(entry->d_name);
    if (length < 5 || strcmp(entry->d_name + length - 5, ".json") != 0) continue;
    hetc_graph_t *graph = load_sample(entry->d_name);
    int num_params;
    int64_t total = param_total(graph, &num_params);
    assert_true(graph->num_nodes > 0);
    assert_true(num_params > 0);
    assert_non_null(graph->source_path);
    printf("%-22s %5d nodes %4d params %10lld values\n", entry->d_name, graph->num_nodes,
           num_params, (long long)total);
    /* Nodes come in topological order. */
    for (int32_t k = 0; k < graph->num_nodes; ++k) {
      for (int32_t i = 0; i < graph->nodes[k].num_inputs; ++i) {
        int32_t producer = graph->values[graph->nodes[k].inputs[i]].producer;
        assert_true(producer < k);
      }
    }
    hetc_graph_free(graph);
    ++loaded;
  }
  closedir(dir);
  assert_true(loaded >= 12);
}

static uint32_t le32(const unsigned char *p) {
  return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static uint64_t le64(const unsigned char *p) { return (uint64_t)le32(p + 4) << 32 | le32(p); }

/* tiny_weights.json: read tiny_weights.weights independently of the loader
 * and compare every tensor, bit for bit. */
static void test_weights_file_values(void **state) {
  (void)state;
  hetc_graph_t *graph = load_sample("tiny_weights.json");
  char path[4200];
  snprintf(path, sizeof(path), "%s/samples/tiny_weights.weights", source_dir);
  char *bytes = NULL;
  size_t size = 0;
  hetc_status_t status = hetc_file_read_all(path, 1u << 24, &bytes, &size);
  assert_null(status);
  const unsigned char *data = (const unsigned char *)bytes;
  assert_true(size >= 16);
  assert_memory_equal(data, "HETCWTS1", 8);
  assert_int_equal(le32(data + 8), 1);
  uint32_t count = le32(data + 12);
  size_t at = 16;
  int num_params;
  param_total(graph, &num_params);
  assert_int_equal(count, (uint32_t)num_params);
  for (uint32_t t = 0; t < count; ++t) {
    uint32_t name_len = le32(data + at);
    char name[256];
    assert_true(name_len < sizeof(name));
    memcpy(name, data + at + 4, name_len);
    name[name_len] = 0;
    at += 4 + name_len;
    assert_int_equal(le32(data + at), 1); /* float32 */
    uint32_t rank = le32(data + at + 4);
    at += 8;
    const hetc_param_t *p = find_param(graph, name);
    if (!p) fail_msg("tensor %s is not a param of the loaded graph", name);
    assert_int_equal(p->rank, (int32_t)rank);
    for (uint32_t d = 0; d < rank; ++d) assert_int_equal(p->shape[d], (int64_t)le64(data + at + 8 * d));
    at += 8 * rank;
    uint64_t offset = le64(data + at), nbytes = le64(data + at + 8);
    at += 16;
    assert_int_equal(nbytes, (uint64_t)p->count * 4);
    assert_true(offset + nbytes <= size);
    /* The file is little-endian, like every machine hetc runs on. */
    assert_memory_equal(p->data, data + offset, (size_t)nbytes);
  }
  free(bytes);
  hetc_graph_free(graph);
}

static void test_random_init_is_deterministic(void **state) {
  (void)state;
  static const char *const models[] = {"tiny_allops.json", "tiny_depthwise.json",
                                       "mobilenet_v1.json"};
  for (size_t m = 0; m < sizeof(models) / sizeof(models[0]); ++m) {
    hetc_graph_t *a = load_sample(models[m]);
    hetc_graph_t *b = load_sample(models[m]);
    assert_int_equal(a->num_nodes, b->num_nodes);
    for (int32_t k = 0; k < a->num_nodes; ++k) {
      for (int slot = 0; slot < HETC_PARAM_SLOTS; ++slot) {
        const hetc_param_t *pa = &a->nodes[k].params[slot], *pb = &b->nodes[k].params[slot];
        assert_int_equal(pa->count, pb->count);
        if (pa->count) assert_memory_equal(pa->data, pb->data, (size_t)pa->count * sizeof(float));
      }
    }
    /* Another seed gives other values. */
    const hetc_param_t *w = NULL;
    for (int32_t k = 0; k < a->num_nodes && !w; ++k) {
      if (a->nodes[k].op == HETC_OP_CONV2D) w = &a->nodes[k].params[HETC_PARAM_WEIGHT];
    }
    assert_non_null(w);
    assert_non_null(w->data);
    float first = w->data[0];
    assert_null(hetc_weights_init_random(a, 7));
    assert_true(w->data[0] != first);
    hetc_graph_free(a);
    hetc_graph_free(b);
  }
}

static uint32_t float_bits(float value) {
  uint32_t bits;
  memcpy(&bits, &value, sizeof(bits));
  return bits;
}

/* Each golden line: MODEL TENSOR SEED COUNT BITS... (hex float32 bits). */
static void test_random_init_matches_reference(void **state) {
  (void)state;
  char path[4200];
  snprintf(path, sizeof(path), "%s/tests/model/random_init_golden.txt", source_dir);
  char *text = NULL;
  size_t length = 0;
  hetc_status_t status = hetc_file_read_all(path, 1u << 20, &text, &length);
  assert_null(status);
  int tensors = 0, values = 0, mismatches = 0;
  char *save_line = NULL;
  for (char *line = strtok_r(text, "\n", &save_line); line; line = strtok_r(NULL, "\n", &save_line)) {
    if (line[0] == '#') continue;
    char *save = NULL;
    const char *model = strtok_r(line, " ", &save);
    const char *tensor = strtok_r(NULL, " ", &save);
    const char *seed = strtok_r(NULL, " ", &save);
    const char *count_text = strtok_r(NULL, " ", &save);
    assert_non_null(count_text);
    hetc_graph_t *graph = load_sample(model);
    const hetc_param_t *p = find_param(graph, tensor);
    if (!p) fail_msg("%s has no param %s", model, tensor);
    long count = strtol(count_text, NULL, 10);
    assert_int_equal(p->count, count);
    (void)seed; /* the model's own seed; the golden line records it */
    for (long i = 0; i < count; ++i) {
      const char *hex = strtok_r(NULL, " ", &save);
      assert_non_null(hex);
      uint32_t want = (uint32_t)strtoul(hex, NULL, 16), got = float_bits(p->data[i]);
      if (want != got) {
        /* Report the difference in units in the last place. */
        long long ulps = (long long)(int32_t)got - (long long)(int32_t)want;
        fprintf(stderr, "%s %s[%ld]: got %08x, reference %08x (%lld ulp)\n", model, tensor, i, got,
                want, ulps);
        ++mismatches;
      }
      ++values;
    }
    ++tensors;
    hetc_graph_free(graph);
  }
  free(text);
  printf("%d values of %d tensors compared with gen_samples.random_init_values\n", values,
         tensors);
  assert_true(tensors >= 2);
  assert_int_equal(mismatches, 0);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_every_sample_loads),
      cmocka_unit_test(test_weights_file_values),
      cmocka_unit_test(test_random_init_is_deterministic),
      cmocka_unit_test(test_random_init_matches_reference),
  };
  return cmocka_run_group_tests(tests, setup, NULL);
}
