/* The opencl plugin through the real driver registry and host, on whatever
 * device the ICD loader reports first (PoCL's CPU device in CI): device
 * descriptors from the device's own queries; configs beyond the device's
 * work-group and local-memory limits refused before building, with the
 * limit named, and never offered by the space; emit/load round trips of
 * source and binary, refusing stale or missing files; the reason `hetc
 * plugins` gives when no OpenCL driver is registered. The kernels' numbers:
 * test_template_conformance_opencl (conv2d), test_opencl_ops (the other
 * ops), test_e2e_samples_opencl (every sample model). Skips (exit 77) when
 * no OpenCL device is there, saying why. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "kernel_check.h"
#include "space/space.h"

#define SKIP 77

static hetc_registry_t *registry;
static hetc_plugin_entry_t *entry;

/* 64 -> 64 channels, 3x3, 56x56: the ResNet-50 layer whose space reaches
 * past PoCL's limits. */
static hetc_plugin_tensor_t conv_inputs[1];
static hetc_plugin_workload_t conv_workload(void) {
  hetc_plugin_workload_t w;
  memset(&w, 0, sizeof(w));
  conv_inputs[0] = (hetc_plugin_tensor_t){HETC_PLUGIN_DTYPE_FLOAT32, 4, {1, 64, 56, 56}, {0, 0}};
  w.op = HETC_PLUGIN_OP_CONV2D;
  w.num_inputs = 1;
  w.inputs = conv_inputs;
  w.output = (hetc_plugin_tensor_t){HETC_PLUGIN_DTYPE_FLOAT32, 4, {1, 64, 56, 56}, {0, 0}};
  w.kernel[0] = w.kernel[1] = 3;
  w.strides[0] = w.strides[1] = 1;
  w.dilation[0] = w.dilation[1] = 1;
  for (int p = 0; p < 4; ++p) w.padding[p] = 1;
  w.groups = 1;
  w.epilogue.has_bias = 1;
  w.epilogue.activation = HETC_PLUGIN_ACT_RELU;
  return w;
}

static int32_t template_named(const hetc_plugin_workload_t *w, const char *name) {
  const hetc_plugin_t *p = entry->plugin;
  for (int32_t t = 0; t < p->template_count(entry->instance, 0, w); ++t)
    if (strcmp(p->template_name(entry->instance, 0, w, t), name) == 0) return t;
  fail_msg("no template %s", name);
  return -1;
}

static void descriptors(void **state) {
  (void)state;
  const hetc_plugin_t *p = entry->plugin;
  assert_true(p->device_count(entry->instance) >= 1);
  for (int32_t d = 0; d < p->device_count(entry->instance); ++d) {
    const hetc_plugin_device_t *dev = p->device_get(entry->instance, d);
    printf("device %d: %s, %d compute units, %d work-items per group, %llu bytes local, peak %.1f GFLOPS\n", d,
           dev->name, dev->compute_units, dev->max_threads_per_group, (unsigned long long)dev->local_memory_bytes,
           dev->peak_gflops_fp32);
    assert_int_equal(strncmp(dev->fingerprint, "opencl|", 7), 0);
    assert_true(dev->compute_units > 0);
    assert_true(dev->max_threads_per_group > 0);
    assert_true(dev->local_memory_bytes > 0);
    assert_true(dev->memory_bytes > 0);
    assert_true(dev->peak_gflops_fp32 > 0);
    assert_int_equal(dev->host_memory, 0);
  }
  assert_null(p->device_get(entry->instance, p->device_count(entry->instance)));
}

/* Builds the direct template with the given knob values; returns the
 * status (the artifact, if any, released). */
static hetc_status_t build_direct(const int64_t values[9]) {
  static const char *const names[9] = {"wg_m", "wg_n", "wg_h", "tile_m", "tile_n", "tile_k",
                                       "vector", "unroll", "local"};
  hetc_plugin_knob_value_t knobs[9];
  for (int i = 0; i < 9; ++i) knobs[i] = (hetc_plugin_knob_value_t){names[i], 1, &values[i]};
  const hetc_plugin_config_t config = {9, knobs};
  hetc_plugin_workload_t w = conv_workload();
  const int32_t t = template_named(&w, "opencl_conv2d_direct");
  /* The space declares these points, and its constraint rules them out. */
  hetc_plugin_space_t *space = NULL;
  assert_null(hetc_space_create(&space));
  assert_null(entry->plugin->template_define_space(entry->instance, 0, &w, t, space));
  int64_t index = -1;
  assert_null(hetc_space_index_of(space, &config, &index));
  const int valid = hetc_space_is_valid(space, index);
  hetc_space_free(space);
  hetc_plugin_artifact_t *a = NULL;
  hetc_status_t s = (hetc_status_t)entry->plugin->build(entry->instance, 0, &w, t, &config, &a);
  if (a) entry->plugin->artifact_release(entry->instance, a);
  assert_int_equal(valid, s == NULL);
  return s;
}

static void limits_refused_before_building(void **state) {
  (void)state;
  const hetc_plugin_device_t *dev = entry->plugin->device_get(entry->instance, 0);
  char want[512];
  /* 32 x 16 x 16 work-items. */
  const int64_t big_group[9] = {16, 32, 16, 1, 1, 1, 1, 0, 0};
  hetc_status_t s = build_direct(big_group);
  if ((int64_t)dev->max_threads_per_group >= 32 * 16 * 16) {
    printf("SKIP part: the device takes work-groups of %d\n", dev->max_threads_per_group);
    if (s) hetc_status_free(s);
  } else {
    assert_non_null(s);
    snprintf(want, sizeof(want),
             "opencl: a work-group of 32x16x16 = 8192 work-items exceeds the device's "
             "CL_DEVICE_MAX_WORK_GROUP_SIZE of %d",
             dev->max_threads_per_group);
    assert_int_equal(hetc_status_code(s), HETC_PLUGIN_STATUS_DEVICE_LIMITS);
    assert_string_equal(hetc_status_message(s), want);
    printf("refused: %s\n", hetc_status_message(s));
    hetc_status_free(s);
  }
  /* 16 x 16 x 16 work-items (within PoCL's 4096) staging 64 channels of
   * an 18 x 66 input halo and 64 x 9 x 128 weights: 599040 bytes. */
  const int64_t big_tiles[9] = {16, 16, 16, 8, 4, 64, 1, 0, 1};
  const uint64_t bytes = 64ull * (18 * 66 + 9 * 128) * 4;
  if (dev->max_threads_per_group < 16 * 16 * 16 || dev->local_memory_bytes >= bytes) {
    printf("SKIP part: the device takes work-groups of %d and has %llu bytes of local memory\n",
           dev->max_threads_per_group, (unsigned long long)dev->local_memory_bytes);
    return;
  }
  s = build_direct(big_tiles);
  assert_non_null(s);
  snprintf(want, sizeof(want),
           "opencl: the kernel's tiles need %llu bytes of local memory, more than the device's "
           "CL_DEVICE_LOCAL_MEM_SIZE of %llu",
           (unsigned long long)bytes, (unsigned long long)dev->local_memory_bytes);
  assert_int_equal(hetc_status_code(s), HETC_PLUGIN_STATUS_DEVICE_LIMITS);
  assert_string_equal(hetc_status_message(s), want);
  printf("refused: %s\n", hetc_status_message(s));
  hetc_status_free(s);
  /* The same tiles without local memory fit. */
  const int64_t no_local[9] = {16, 16, 16, 8, 4, 64, 1, 0, 0};
  assert_null(build_direct(no_local));
}

static char *read_text(const char *path) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  char *text = calloc(1, 1 << 20);
  size_t n = fread(text, 1, (1 << 20) - 1, f);
  text[n] = 0;
  fclose(f);
  return text;
}

/* Runs an artifact on zeroed buffers of the sizes it asks for and returns
 * the output's first value. */
static float run_on_zeros(hetc_plugin_artifact_t *a) {
  const hetc_plugin_t *p = entry->plugin;
  const hetc_plugin_artifact_info_t *info = p->artifact_info(a);
  uint64_t sizes[8];
  int32_t n = 0;
  sizes[n++] = 64 * 56 * 56 * 4;
  for (int32_t i = 0; i < info->num_params; ++i) sizes[n++] = info->param_bytes[i];
  const int32_t output = n;
  sizes[n++] = 64 * 56 * 56 * 4;
  if (info->workspace_bytes) sizes[n++] = info->workspace_bytes;
  hetc_plugin_buffer_t *buffers[8];
  for (int32_t i = 0; i < n; ++i) {
    assert_null(p->buffer_alloc(entry->instance, 0, sizes[i], &buffers[i]));
    char *zeros = calloc(1, sizes[i]);
    assert_null(p->buffer_write(entry->instance, buffers[i], 0, zeros, sizes[i]));
    free(zeros);
  }
  const float minus_one = -1.0f;
  assert_null(p->buffer_write(entry->instance, buffers[output], 0, &minus_one, 4));
  assert_null(p->run(entry->instance, a, buffers, n));
  float first = 0;
  assert_null(p->buffer_read(entry->instance, buffers[output], 0, &first, 4));
  for (int32_t i = 0; i < n; ++i) p->buffer_free(entry->instance, buffers[i]);
  return first;
}

/* Whether artifact_emit writes the program binary: on every driver but
 * PoCL with its kernel cache on (README, the opencl plugin's row). */
static int binary_emitted(void) {
  const char *pocl = "opencl|Portable Computing Language|";
  const char *kernel_cache = getenv("POCL_KERNEL_CACHE");
  const hetc_plugin_device_t *dev = entry->plugin->device_get(entry->instance, 0);
  return strncmp(dev->fingerprint, pocl, strlen(pocl)) != 0 || (kernel_cache && kernel_cache[0] == '0');
}

/* artifact_emit writes <prefix>.cl and, where binary_emitted(),
 * <prefix>.bin; artifact_load takes them for the same (workload, template,
 * config) and refuses a changed source or a missing one with
 * INVALID_ARGUMENT and the file named. test_opencl_plugin_binary runs this
 * with PoCL's kernel cache off, so the binary's way is tested on PoCL. */
static void emit_and_load(void **state) {
  (void)state;
  const hetc_plugin_t *p = entry->plugin;
  hetc_plugin_workload_t w = conv_workload();
  const int32_t t = template_named(&w, "opencl_conv2d_winograd");
  hetc_plugin_artifact_t *a = NULL;
  assert_null(p->build(entry->instance, 0, &w, t, NULL, &a));
  char dir[] = "/tmp/hetc-opencl-test-XXXXXX";
  assert_non_null(mkdtemp(dir));
  assert_null(p->artifact_emit(entry->instance, a, dir, "k0"));
  char cl_path[256], bin_path[256];
  snprintf(cl_path, sizeof(cl_path), "%s/k0.cl", dir);
  snprintf(bin_path, sizeof(bin_path), "%s/k0.bin", dir);
  assert_int_equal(access(cl_path, R_OK), 0);
  const int with_binary = binary_emitted();
  printf("the binary is %s\n", with_binary ? "emitted" : "not emitted (the driver keeps its builds)");
  assert_int_equal(access(bin_path, R_OK) == 0, with_binary);
  hetc_plugin_artifact_t *b = NULL;
  assert_null(p->artifact_load(entry->instance, 0, &w, t, NULL, dir, "k0", &b));
  assert_string_equal(p->artifact_info(a)->description, p->artifact_info(b)->description);
  /* zero input and weights, ReLU: every output is 0 */
  assert_true(run_on_zeros(b) == 0.0f);
  p->artifact_release(entry->instance, b);

  /* A source edited after emission is stale. */
  char *text = read_text(cl_path);
  assert_non_null(text);
  FILE *f = fopen(cl_path, "wb");
  fprintf(f, "%s/* edited */\n", text);
  fclose(f);
  free(text);
  hetc_status_t s = (hetc_status_t)p->artifact_load(entry->instance, 0, &w, t, NULL, dir, "k0", &b);
  char want[512];
  snprintf(want, sizeof(want),
           "opencl: %s was emitted for another workload, template, config or plugin version", cl_path);
  assert_non_null(s);
  assert_int_equal(hetc_status_code(s), HETC_PLUGIN_STATUS_INVALID_ARGUMENT);
  assert_string_equal(hetc_status_message(s), want);
  hetc_status_free(s);
  remove(cl_path);
  s = (hetc_status_t)p->artifact_load(entry->instance, 0, &w, t, NULL, dir, "k0", &b);
  snprintf(want, sizeof(want), "opencl: %s is missing or unreadable", cl_path);
  assert_non_null(s);
  assert_string_equal(hetc_status_message(s), want);
  hetc_status_free(s);

  /* A corrupt binary beside the right source: rebuilt from the source. */
  assert_null(p->artifact_emit(entry->instance, a, dir, "k0"));
  f = fopen(bin_path, "wb");
  fprintf(f, "not a binary");
  fclose(f);
  assert_null(p->artifact_load(entry->instance, 0, &w, t, NULL, dir, "k0", &b));
  assert_true(run_on_zeros(b) == 0.0f);
  p->artifact_release(entry->instance, b);
  p->artifact_release(entry->instance, a);
  remove(cl_path);
  remove(bin_path);
  rmdir(dir);
}

/* Without an OpenCL driver the plugin is unavailable, and says why. */
static void no_platform_is_explained(void **state) {
  (void)state;
  char dir[] = "/tmp/hetc-no-vendors-XXXXXX";
  assert_non_null(mkdtemp(dir));
  char command[1024], records[64];
  /* The per-user store is one beside the folder that does not exist, so
   * the user's is not touched (hetc plugins creates none). */
  snprintf(records, sizeof(records), "%s.sqlite", dir);
  snprintf(command, sizeof(command), "OCL_ICD_VENDORS=%s HETC_RECORDS=%s %s/bin/hetc plugins 2>&1", dir, records,
           getenv("HETC_BINARY_DIR"));
  FILE *pipe = popen(command, "r");
  assert_non_null(pipe);
  char line[1024], want[512];
  snprintf(want, sizeof(want),
           "  reason: opencl: the OpenCL ICD loader found no platform (no driver registered in %s; install "
           "pocl-opencl-icd or a GPU's OpenCL driver)\n",
           dir);
  int in_opencl = 0, unavailable = 0, explained = 0;
  while (fgets(line, sizeof(line), pipe)) {
    if (strstr(line, "libhetc_plugin_")) in_opencl = strstr(line, "libhetc_plugin_opencl.so") != NULL;
    if (in_opencl && !strcmp(line, "  state: unavailable\n")) unavailable = 1;
    if (in_opencl && !strcmp(line, want)) explained = 1;
  }
  assert_int_equal(pclose(pipe), 0);
  rmdir(dir);
  const char *suffixes[] = {"", "-wal", "-shm"};
  for (int i = 0; i < 3; ++i) {
    char path[96];
    snprintf(path, sizeof(path), "%s%s", records, suffixes[i]);
    remove(path);
  }
  assert_true(unavailable);
  assert_true(explained);
}

int main(void) {
  if (hetc_registry_open(&registry)) return 1;
  hetc_status_t status = hetc_registry_target(registry, "opencl", &entry);
  if (status) {
    printf("SKIP: the opencl target is not available: %s\n", hetc_status_message(status));
    hetc_registry_free(registry);
    return SKIP;
  }
  if (getenv("HETC_OPENCL_TEST_FILTER")) cmocka_set_test_filter(getenv("HETC_OPENCL_TEST_FILTER"));
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(descriptors),
      cmocka_unit_test(limits_refused_before_building),
      cmocka_unit_test(emit_and_load),
      cmocka_unit_test(no_platform_is_explained),
  };
  int failed = cmocka_run_group_tests(tests, NULL, NULL);
  hetc_registry_free(registry);
  return failed;
}
