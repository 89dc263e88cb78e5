/* Damaged packages: each defect of a package (the manifest, weights.bin,
 * the artifacts) is refused by hetc_package_open as BAD_INPUT with a message
 * naming the file and the place, never a crash. One compiled package is
 * copied and damaged once per case. */
#include <cjson/cJSON.h>
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

static char work[1024], pristine[1100], damaged[1100];
static hetc_context_t *context;

typedef void (*damage_fn_t)(cJSON *manifest);

static void copy_package(void) {
  char command[9000];
  snprintf(command, sizeof(command), "rm -rf %s && cp -r %s %s", damaged, pristine, damaged);
  assert_int_equal(system(command), 0);
}

static cJSON *item_at(cJSON *root, const char *array, int index) {
  return cJSON_GetArrayItem(cJSON_GetObjectItem(root, array), index);
}

static void set_number(cJSON *object, const char *key, double value) {
  cJSON_ReplaceItemInObject(object, key, cJSON_CreateNumber(value));
}

/* The index of the first kernel step that has params. */
static int first_step_with_params(cJSON *root) {
  cJSON *steps = cJSON_GetObjectItem(root, "steps");
  for (int s = 0; s < cJSON_GetArraySize(steps); ++s)
    if (cJSON_GetArraySize(cJSON_GetObjectItem(cJSON_GetArrayItem(steps, s), "params")) > 0) return s;
  return -1;
}

/* Opening the damaged package fails as bad input, with `expected` in the
 * message. */
static void expect_refused(const char *expected) {
  hetc_package_t *package = NULL;
  hetc_status_t status = hetc_package_open(context, damaged, &package);
  if (!status) fail_msg("damaged package opened; expected: %s", expected);
  printf("%s\n", hetc_status_message(status));
  assert_int_equal(hetc_status_code(status), HETC_STATUS_BAD_INPUT);
  if (!strstr(hetc_status_message(status), expected))
    fail_msg("message lacks \"%s\": %s", expected, hetc_status_message(status));
  hetc_status_free(status);
}

/* A fresh copy of the package with its manifest edited by `damage`. */
static void copy_with_manifest(damage_fn_t damage) {
  copy_package();
  if (!damage) return;
  char path[4300];
  snprintf(path, sizeof(path), "%s/manifest.json", damaged);
  char *text = NULL;
  size_t length = 0;
  assert_null(hetc_file_read_all(path, 1 << 26, &text, &length));
  cJSON *root = cJSON_Parse(text);
  free(text);
  damage(root);
  char *out = cJSON_Print(root);
  assert_null(hetc_file_write_all(path, out, strlen(out)));
  cJSON_free(out);
  cJSON_Delete(root);
}

static void damage_and_expect(damage_fn_t damage, const char *expected) {
  copy_with_manifest(damage);
  expect_refused(expected);
}

static void wrong_format(cJSON *m) { cJSON_ReplaceItemInObject(m, "format", cJSON_CreateString("zip")); }
static void newer_version(cJSON *m) { set_number(m, "version", 5); }
static void no_steps(cJSON *m) { cJSON_DeleteItemFromObject(m, "steps"); }
static void step_device_out_of_range(cJSON *m) { set_number(item_at(m, "steps", 0), "device", 7); }
static void step_reads_missing_value(cJSON *m) {
  cJSON_ReplaceItemInObject(item_at(m, "steps", 1), "inputs", cJSON_CreateIntArray((int[]){-1}, 1));
}
static void value_bytes_lie(cJSON *m) { set_number(item_at(m, "values", 0), "bytes", 4); }
static void value_huge_shape(cJSON *m) {
  double dims[3] = {2147483648.0, 2147483648.0, 2147483648.0};
  cJSON_ReplaceItemInObject(item_at(m, "values", 0), "shape", cJSON_CreateDoubleArray(dims, 3));
}
static void output_aliases_input(cJSON *m) {
  /* Put step 1's output in the slot of its input. */
  cJSON *step = item_at(m, "steps", 1);
  int in = cJSON_GetArrayItem(cJSON_GetObjectItem(step, "inputs"), 0)->valueint;
  int out = cJSON_GetObjectItem(step, "output")->valueint;
  cJSON *in_value = item_at(m, "values", in);
  set_number(item_at(m, "values", out), "slot", cJSON_GetObjectItem(in_value, "slot")->valuedouble);
  cJSON *slot = item_at(m, "buffer_slots", cJSON_GetObjectItem(in_value, "slot")->valueint);
  cJSON_ReplaceItemInArray(slot, 1, cJSON_CreateNumber(1 << 20));
}
static void value_part_of_elsewhere(cJSON *m) {
  set_number(m, "version", 4);
  cJSON_AddNumberToObject(item_at(m, "values", 2), "part_of", 0);
}
static void value_offset_misaligned(cJSON *m) { set_number(item_at(m, "values", 0), "offset", 32); }
/* Value 0 moved to the first multiple of 64 past its slot's end. */
static void value_offset_past_slot(cJSON *m) {
  cJSON *value = item_at(m, "values", 0);
  cJSON *slot = item_at(m, "buffer_slots", cJSON_GetObjectItem(value, "slot")->valueint);
  const double bytes = cJSON_GetArrayItem(slot, 1)->valuedouble;
  set_number(value, "offset", 64 * ((unsigned long long)bytes / 64 + 1));
}
static void param_outside_weights(cJSON *m) {
  cJSON *params = cJSON_GetObjectItem(item_at(m, "steps", first_step_with_params(m)), "params");
  double pair[2] = {0, 1e30};
  cJSON_ReplaceItemInArray(params, 0, cJSON_CreateDoubleArray(pair, 2));
}
static void param_misaligned(cJSON *m) {
  cJSON *params = cJSON_GetObjectItem(item_at(m, "steps", first_step_with_params(m)), "params");
  double pair[2] = {4, 4};
  cJSON_ReplaceItemInArray(params, 0, cJSON_CreateDoubleArray(pair, 2));
}
static void param_wrong_size(cJSON *m) {
  cJSON *params = cJSON_GetObjectItem(item_at(m, "steps", first_step_with_params(m)), "params");
  double pair[2] = {0, 8};
  cJSON_ReplaceItemInArray(params, 0, cJSON_CreateDoubleArray(pair, 2));
}
/* weights.bin is 64 bytes shorter than the manifest now says. */
static void weights_size_lies(cJSON *m) {
  set_number(m, "weights_bytes", cJSON_GetObjectItem(m, "weights_bytes")->valuedouble + 64);
}
static void template_renamed(cJSON *m) {
  cJSON_ReplaceItemInObject(item_at(m, "steps", first_step_with_params(m)), "template",
                            cJSON_CreateString("vec_conv2d_winograd"));
}
static void workspace_invented(cJSON *m) { set_number(item_at(m, "steps", first_step_with_params(m)), "workspace_bytes", 64); }
static void config_outside_space(cJSON *m) {
  cJSON *config = cJSON_GetObjectItem(item_at(m, "steps", first_step_with_params(m)), "config");
  cJSON *first = config->child;
  cJSON_ReplaceItemInObject(config, first->string, cJSON_CreateIntArray((int[]){12345}, 1));
}
/* erf (ABI minor 7) is a unary activation only, never an epilogue's;
 * gelu, its neighbour, is one. */
static void epilogue_activation(cJSON *m, int activation) {
  cJSON *workload = cJSON_GetObjectItem(item_at(m, "steps", first_step_with_params(m)), "workload");
  cJSON_ReplaceItemInObject(workload, "epilogue", cJSON_CreateIntArray((int[]){1, 0, activation}, 3));
}
static void epilogue_erf(cJSON *m) { epilogue_activation(m, HETC_PLUGIN_ACT_ERF); }
static void epilogue_gelu(cJSON *m) { epilogue_activation(m, HETC_PLUGIN_ACT_GELU); }
static void artifact_path_escapes(cJSON *m) {
  cJSON_ReplaceItemInObject(item_at(m, "steps", 0), "artifact", cJSON_CreateString("../../etc/passwd"));
}
/* The plan as a whole (package/plan_order.c). tiny_conv on vec: step 0
 * transforms input value 0 (slot 0) into value 1 (slot 2), step 1 (conv1)
 * reads it, step 2 (pool1) writes value 3 into slot 2, ..., step 7 (prob)
 * writes output value 8 (slot 1). */
static void steps_reversed(cJSON *m) {
  cJSON *steps = cJSON_GetObjectItem(m, "steps");
  cJSON *reversed = cJSON_CreateArray();
  for (int s = cJSON_GetArraySize(steps) - 1; s >= 0; --s)
    cJSON_AddItemToArray(reversed, cJSON_Duplicate(cJSON_GetArrayItem(steps, s), 1));
  cJSON_ReplaceItemInObject(m, "steps", reversed);
}
static void steps_emptied(cJSON *m) { cJSON_ReplaceItemInObject(m, "steps", cJSON_CreateArray()); }
static void middle_step_missing(cJSON *m) { cJSON_DeleteItemFromArray(cJSON_GetObjectItem(m, "steps"), 3); }
static void output_over_graph_input(cJSON *m) { set_number(item_at(m, "values", 8), "slot", 0); }
/* conv1 again after pool1 wrote over its input. */
static void step_reads_overwritten_value(cJSON *m) {
  cJSON *steps = cJSON_GetObjectItem(m, "steps");
  cJSON *longer = cJSON_CreateArray();
  for (int s = 0; s < cJSON_GetArraySize(steps); ++s) {
    if (s == 3) cJSON_AddItemToArray(longer, cJSON_Duplicate(cJSON_GetArrayItem(steps, 1), 1));
    cJSON_AddItemToArray(longer, cJSON_Duplicate(cJSON_GetArrayItem(steps, s), 1));
  }
  cJSON_ReplaceItemInObject(m, "steps", longer);
}
static void files_path_escapes(cJSON *m) {
  cJSON_ReplaceItemInObject(item_at(m, "files", 1), "path", cJSON_CreateString("kernels/../../x.so"));
}
static void files_without_weights(cJSON *m) { cJSON_DeleteItemFromArray(cJSON_GetObjectItem(m, "files"), 0); }
static void files_bad_checksum_text(cJSON *m) {
  cJSON_ReplaceItemInObject(item_at(m, "files", 0), "fnv1a64", cJSON_CreateString("xyz"));
}
static void output_in_blocked_layout(cJSON *m) {
  cJSON *outputs = cJSON_GetObjectItem(m, "outputs");
  int v = cJSON_GetObjectItem(cJSON_GetArrayItem(outputs, 0), "value")->valueint;
  cJSON *value = item_at(m, "values", v);
  set_number(value, "layout", 1);
  set_number(value, "block", 8);
}

#define CASE(fn, expected) \
  static void test_##fn(void **state) { (void)state; damage_and_expect(fn, expected); }

CASE(wrong_format, "manifest.json: /format: expected \"hetc-package\"")
CASE(newer_version, "manifest.json: /version: expected an integer in [1, 4]")
CASE(no_steps, "manifest.json: /steps: missing")
CASE(step_device_out_of_range, "manifest.json: /steps/0/device: expected an integer in [0, 0]")
CASE(step_reads_missing_value, "manifest.json: /steps/1/inputs: element 0: expected an integer in [0, ")
CASE(value_bytes_lie, "manifest.json: /values/0/bytes: does not match the shape and layout")
CASE(value_huge_shape, "manifest.json: /values/0/shape: more than 2^31 elements")
CASE(output_aliases_input, "/inputs: input 0 shares its buffer slot with the output")
CASE(value_offset_misaligned, "manifest.json: /values/0/offset: 32 is not a multiple of 64")
CASE(value_part_of_elsewhere, "manifest.json: /values/2/part_of: value 0 does not hold this value's bytes")
CASE(value_offset_past_slot, "manifest.json: /values/0/bytes: slot ")
CASE(param_outside_weights, "/params/0: expected [offset, bytes] inside weights.bin")
CASE(param_misaligned, "/params/0: param lies outside weights.bin")
CASE(param_wrong_size, "damaged.hetc: step 1 (conv1): param 0 has 8 bytes, the kernel expects")
CASE(weights_size_lies, "manifest.json: /files/0/bytes: 5172, but weights_bytes says 5236")
CASE(template_renamed, "no longer has template 'vec_conv2d_winograd'")
CASE(workspace_invented, "do not match the manifest")
CASE(config_outside_space, "loading artifact")
CASE(artifact_path_escapes, "/steps/0/artifact: expected a plain file prefix")
CASE(epilogue_erf, "/workload/epilogue: activation 14 is not an epilogue's")
/* The manifest reads a gelu epilogue; the kernel emitted for relu then no
 * longer matches the workload. */
CASE(epilogue_gelu, "was emitted for another workload")
CASE(output_in_blocked_layout, "/layout: a blocked layout needs rank 4")
CASE(steps_reversed, "manifest.json: /steps/0: step 0 (prob) reads input 0: value 7 (fc@vec:row-major), which no "
                     "earlier step writes")
CASE(steps_emptied, "manifest.json: /outputs/0: output 'prob': value 8 (prob@vec:row-major), which no earlier step "
                    "writes")
CASE(middle_step_missing, "manifest.json: /steps/3: step 3 (gap) reads input 0: value 4 (relu2@vec:NCHW8c), which no "
                          "earlier step writes")
CASE(output_over_graph_input, "manifest.json: /steps/7: step 7 (prob) writes value 8 (prob@vec:row-major) over graph "
                              "input 'data', which every run reads")
CASE(step_reads_overwritten_value, "manifest.json: /steps/3: step 3 (conv1) reads input 0: value 1 "
                                   "(data@vec:NCHW8c), which step 2 (pool1) overwrote with value 3 "
                                   "(pool1@vec:NCHW8c) before it")
CASE(files_path_escapes, "manifest.json: /files/1/path: 'kernels/../../x.so' is not a file a package holds")
CASE(files_without_weights, "manifest.json: /files: does not list weights.bin")
CASE(files_bad_checksum_text, "manifest.json: /files/0/fnv1a64: expected 16 hexadecimal digits")

/* The files beside the manifest, damaged by a shell command run in the
 * package's directory. */
static void damage_files_and_expect(const char *command, const char *expected) {
  copy_package();
  char line[9000];
  snprintf(line, sizeof(line), "cd %s && %s", damaged, command);
  assert_int_equal(system(line), 0);
  expect_refused(expected);
}

#define FILES_CASE(name, command, expected) \
  static void name(void **state) { (void)state; damage_files_and_expect(command, expected); }

/* A truncated shared object reached dlopen and killed hetc with SIGBUS. */
FILES_CASE(truncated_kernel_object, "truncate -s 5000 kernels/s0003-vec.so",
           "damaged.hetc/kernels/s0003-vec.so: 5000 bytes, the manifest says ")
FILES_CASE(flipped_kernel_byte, "printf 'X' | dd of=kernels/s0003-vec.so bs=1 seek=4000 conv=notrunc status=none",
           "damaged.hetc/kernels/s0003-vec.so: its checksum is ")
/* A FIFO blocked open() forever. */
FILES_CASE(kernel_is_fifo, "rm kernels/s0001-vec.so && mkfifo kernels/s0001-vec.so",
           "damaged.hetc/kernels/s0001-vec.so: is a FIFO, not a regular file")
FILES_CASE(weights_is_fifo, "rm weights.bin && mkfifo weights.bin", "damaged.hetc/weights.bin: is a FIFO, not a regular file")
FILES_CASE(kernel_missing, "rm kernels/s0002-vec.c", "damaged.hetc/kernels/s0002-vec.c: cannot open: No such file")

/* The manifest's text: strings that are not UTF-8 or hold \u0000, and
 * nesting deeper than cJSON follows. */
FILES_CASE(manifest_name_not_utf8,
           "python3 -c \"import sys; t=open('manifest.json','rb').read(); "
           "open('manifest.json','wb').write(t.replace(b'\\\"tiny_conv\\\"', b'\\\"tiny\\\\xff\\\"', 1))\"",
           "damaged.hetc/manifest.json: /model: not valid UTF-8 (at byte 5)")
FILES_CASE(manifest_name_with_nul,
           "python3 -c \"t=open('manifest.json').read(); "
           "open('manifest.json','w').write(t.replace('\\\"tiny_conv\\\"', '\\\"tiny\\\\\\\\u0000conv\\\"', 1))\"",
           "damaged.hetc/manifest.json: line 1, column ")
FILES_CASE(manifest_too_deep, "python3 -c \"open('manifest.json','w').write('[' * 5000)\"",
           "damaged.hetc/manifest.json: line 1, column 1001: arrays and objects nested deeper than 1000 levels")

/* A version-2 package (no file list) still opens and runs. */
static void without_files(cJSON *m) {
  set_number(m, "version", 2);
  cJSON_DeleteItemFromObject(m, "files");
}
static void version2_package_opens(void **state) {
  (void)state;
  copy_with_manifest(without_files);
  hetc_package_t *package = NULL;
  hetc_status_t status = hetc_package_open(context, damaged, &package);
  if (status) fail_msg("%s", hetc_status_message(status));
  assert_null(hetc_package_run(package));
  hetc_package_close(package);
}

static void missing_manifest(void **state) {
  (void)state;
  copy_package();
  char path[4300];
  snprintf(path, sizeof(path), "%s/manifest.json", damaged);
  assert_int_equal(unlink(path), 0);
  hetc_package_t *package = NULL;
  hetc_status_t status = hetc_package_open(context, damaged, &package);
  assert_non_null(status);
  printf("%s\n", hetc_status_message(status));
  assert_int_equal(hetc_status_code(status), HETC_STATUS_IO_ERROR);
  assert_non_null(strstr(hetc_status_message(status), "is not a hetc package"));
  hetc_status_free(status);
}

static void truncated_weights(void **state) {
  (void)state;
  copy_package();
  char path[4300];
  snprintf(path, sizeof(path), "%s/weights.bin", damaged);
  assert_int_equal(truncate(path, 100), 0);
  hetc_package_t *package = NULL;
  hetc_status_t status = hetc_package_open(context, damaged, &package);
  assert_non_null(status);
  printf("%s\n", hetc_status_message(status));
  assert_int_equal(hetc_status_code(status), HETC_STATUS_BAD_INPUT);
  assert_non_null(strstr(hetc_status_message(status), "weights.bin: 100 bytes, the manifest says"));
  hetc_status_free(status);
}

static void tampered_kernel_source(void **state) {
  (void)state;
  copy_package();
  char command[9000];
  /* Listed in a version-2 manifest, which has no checksums: the plugin
   * finds the source no longer what the workload and config generate. */
  snprintf(command, sizeof(command),
           "echo '/* edited */' >> %s/kernels/s0001-vec.c && rm -f %s/kernels/s0001-vec.so && "
           "sed -i -e 's/\"version\":[[:space:]]*3/\"version\": 2/' %s/manifest.json",
           damaged, damaged, damaged);
  assert_int_equal(system(command), 0);
  hetc_package_t *package = NULL;
  hetc_status_t status = hetc_package_open(context, damaged, &package);
  assert_non_null(status);
  printf("%s\n", hetc_status_message(status));
  assert_int_equal(hetc_status_code(status), HETC_STATUS_BAD_INPUT);
  assert_non_null(strstr(hetc_status_message(status), "step 1"));
  hetc_status_free(status);
}

static void pristine_package_opens(void **state) {
  (void)state;
  copy_package();
  hetc_package_t *package = NULL;
  hetc_status_t status = hetc_package_open(context, damaged, &package);
  if (status) fail_msg("%s", hetc_status_message(status));
  assert_null(hetc_package_run(package));
  hetc_package_close(package);
}

static int setup(void **state) {
  (void)state;
  const char *bin = getenv("HETC_BINARY_DIR");
  snprintf(work, sizeof(work), "%s/package-defects-%d", bin ? bin : ".", (int)getpid());
  snprintf(pristine, sizeof(pristine), "%s/pristine.hetc", work);
  snprintf(damaged, sizeof(damaged), "%s/damaged.hetc", work);
  char command[4200];
  snprintf(command, sizeof(command), "mkdir -p %s", work);
  if (system(command) != 0 || hetc_context_create(&context)) return -1;
  hetc_model_t *model = NULL;
  const char *targets[] = {"vec"};
  hetc_compile_options_t options = {.targets = targets, .num_targets = 1, .placement = HETC_PLACEMENT_COST};
  hetc_status_t status = hetc_model_load(e2e_sample_path("tiny_conv.json"), &model);
  if (!status) status = hetc_compile(context, model, &options, pristine, NULL);
  hetc_model_free(model);
  if (status) {
    fprintf(stderr, "%s\n", hetc_status_message(status));
    hetc_status_free(status);
    return -1;
  }
  return 0;
}

static int teardown(void **state) {
  (void)state;
  hetc_context_destroy(context);
  hetc_dir_remove_tree(work);
  return 0;
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(pristine_package_opens),
      cmocka_unit_test(test_wrong_format),
      cmocka_unit_test(test_newer_version),
      cmocka_unit_test(test_no_steps),
      cmocka_unit_test(test_step_device_out_of_range),
      cmocka_unit_test(test_step_reads_missing_value),
      cmocka_unit_test(test_value_bytes_lie),
      cmocka_unit_test(test_value_huge_shape),
      cmocka_unit_test(test_output_aliases_input),
      cmocka_unit_test(test_value_offset_misaligned),
      cmocka_unit_test(test_value_part_of_elsewhere),
      cmocka_unit_test(test_value_offset_past_slot),
      cmocka_unit_test(test_param_outside_weights),
      cmocka_unit_test(test_param_misaligned),
      cmocka_unit_test(test_param_wrong_size),
      cmocka_unit_test(test_weights_size_lies),
      cmocka_unit_test(test_template_renamed),
      cmocka_unit_test(test_workspace_invented),
      cmocka_unit_test(test_config_outside_space),
      cmocka_unit_test(test_artifact_path_escapes),
      cmocka_unit_test(test_epilogue_erf),
      cmocka_unit_test(test_epilogue_gelu),
      cmocka_unit_test(test_output_in_blocked_layout),
      cmocka_unit_test(missing_manifest),
      cmocka_unit_test(truncated_weights),
      cmocka_unit_test(tampered_kernel_source),
      cmocka_unit_test(test_steps_reversed),
      cmocka_unit_test(test_steps_emptied),
      cmocka_unit_test(test_middle_step_missing),
      cmocka_unit_test(test_output_over_graph_input),
      cmocka_unit_test(test_step_reads_overwritten_value),
      cmocka_unit_test(test_files_path_escapes),
      cmocka_unit_test(test_files_without_weights),
      cmocka_unit_test(test_files_bad_checksum_text),
      cmocka_unit_test(truncated_kernel_object),
      cmocka_unit_test(flipped_kernel_byte),
      cmocka_unit_test(kernel_is_fifo),
      cmocka_unit_test(weights_is_fifo),
      cmocka_unit_test(kernel_missing),
      cmocka_unit_test(manifest_name_not_utf8),
      cmocka_unit_test(manifest_name_with_nul),
      cmocka_unit_test(manifest_too_deep),
      cmocka_unit_test(version2_package_opens),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
