/* The ONNX corpus (tests/onnx/corpus, made by make_corpus.py) through the
 * public API: each model imported, compiled for TARGET, run on its
 * committed input, and its outputs held against onnxruntime's within the
 * model's tolerance. Models listed in not_yet.txt must instead be refused
 * with "is not supported" or "not supported yet" (so that the list shrinks
 * as ops land, and never hides a model that imports).
 *
 * Models of kind "ext" (tests/onnx/extremes, made by make_extremes.py:
 * attributes at their extremes) are judged element by element, near zero
 * on their output's lower quartile rather than its largest value.
 *
 *   test_onnx_corpus CORPUS_DIR NOT_YET_FILE WORK_DIR TARGET[,TARGET] op|net|ext|all|CASE
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "float_files.h"
#include "hetc/hetc.h"

static int listed(const char *list, const char *name) {
  char line[300];
  snprintf(line, sizeof(line), "\n%s\n", name);
  return strstr(list, line) != NULL;
}

/* Imports, compiles and runs one model; 0 when it matches. */
static int check_model(hetc_context_t *context, const char *dir, const char *work, const char *targets,
                       const char *name, const char *shape, double rtol, int by_element, int expect_refusal) {
  char path[1024], package_path[1024], input_path[1024], expected_path[1024], shape_option[300];
  snprintf(path, sizeof(path), "%s/%s.onnx", dir, name);
  snprintf(package_path, sizeof(package_path), "%s/%s.hetc", work, name);
  snprintf(input_path, sizeof(input_path), "%s/%s.input.bin", dir, name);
  snprintf(expected_path, sizeof(expected_path), "%s/%s.expected.bin", dir, name);
  snprintf(shape_option, sizeof(shape_option), "input=%s", shape);
  const char *shapes[1] = {shape_option};
  const hetc_model_load_options_t options = {.struct_size = sizeof(options), .input_shapes = shapes, .num_input_shapes = 1};
  const char *target_names[8];
  char target_storage[256];
  int32_t num_targets = 0;
  snprintf(target_storage, sizeof(target_storage), "%s", targets);
  for (char *t = strtok(target_storage, ","); t && num_targets < 8; t = strtok(NULL, ",")) target_names[num_targets++] = t;
  hetc_model_t *model = NULL;
  hetc_package_t *package = NULL;
  hetc_compile_options_t compile_options = {.targets = target_names, .num_targets = num_targets};
  hetc_compile_report_t report;
  hetc_status_t status = hetc_model_load_with_options(path, &options, &model);
  if (expect_refusal) {
    const char *message = status ? hetc_status_message(status) : "";
    const int refused = status && (strstr(message, "is not supported") || strstr(message, "not supported yet"));
    printf("%-36s %s%s\n", name, refused ? "refused as expected: " : "FAIL: listed in not_yet.txt but ",
           refused ? message : status ? message : "imports");
    hetc_status_free(status);
    hetc_model_free(model);
    return !refused;
  }
  if (!status) status = hetc_compile(context, model, &compile_options, package_path, &report);
  if (!status) status = hetc_package_open(context, package_path, &package);
  if (!status) status = hetc_package_set_input_file(package, 0, input_path);
  if (!status) status = hetc_package_run(package);
  long expected_count = 0, offset = 0;
  float *expected = status ? NULL : read_floats(expected_path, &expected_count);
  if (!status && !expected) status = hetc_status_new(HETC_STATUS_IO_ERROR, "cannot read %s", expected_path);
  double worst = 0;
  for (int32_t o = 0; !status && o < hetc_package_output_count(package); ++o) {
    const long count = (long)hetc_package_output_elements(package, o);
    float *got = malloc(sizeof(float) * (size_t)count + 4);
    if (offset + count > expected_count) status = hetc_status_new(HETC_STATUS_BAD_INPUT, "more outputs than expected");
    if (!status) status = hetc_package_get_output(package, o, got, count);
    if (!status)
      worst = fmax(worst, by_element ? worst_error_quartile(got, expected + offset, count)
                                     : worst_error(got, expected + offset, count));
    offset += count;
    free(got);
  }
  if (!status && offset != expected_count)
    status = hetc_status_new(HETC_STATUS_BAD_INPUT, "%ld output values, %ld expected", offset, expected_count);
  const int failed = status || !(worst <= rtol);
  if (status) printf("%-36s FAIL: %s\n", name, hetc_status_message(status));
  else printf("%-36s %s worst relative error %.2e (tolerance %.0e)\n", name, failed ? "FAIL:" : "ok  ", worst, rtol);
  hetc_status_free(status);
  free(expected);
  hetc_package_close(package);
  hetc_model_free(model);
  return failed;
}

int main(int argc, char **argv) {
  if (argc != 6) {
    fprintf(stderr, "usage: test_onnx_corpus CORPUS_DIR NOT_YET_FILE WORK_DIR TARGET[,TARGET] op|net|ext|all|CASE\n");
    return 2;
  }
  const char *dir = argv[1], *work = argv[3], *targets = argv[4], *kind = argv[5];
  char tsv_path[1024];
  snprintf(tsv_path, sizeof(tsv_path), "%s/corpus.tsv", dir);
  FILE *tsv = fopen(tsv_path, "r"), *not_yet_file = fopen(argv[2], "r");
  if (!tsv || !not_yet_file) {
    fprintf(stderr, "cannot open %s or %s\n", tsv_path, argv[2]);
    return 1;
  }
  static char not_yet[1 << 16] = "\n";
  const size_t got = fread(not_yet + 1, 1, sizeof(not_yet) - 2, not_yet_file);
  not_yet[got + 1] = 0;
  fclose(not_yet_file);
  hetc_context_t *context = NULL;
  hetc_status_t status = hetc_context_create(&context);
  if (status) {
    fprintf(stderr, "%s\n", hetc_status_message(status));
    return 1;
  }
  char line[4096];
  int failures = 0, checked = 0;
  while (fgets(line, sizeof(line), tsv)) {
    if (line[0] == '#' || line[0] == '\n') continue;
    char name[256], model_kind[16], shape[64];
    double rtol = 0;
    if (sscanf(line, "%255s %15s %63s %lf", name, model_kind, shape, &rtol) != 4) {
      fprintf(stderr, "corpus.tsv: bad line: %s", line);
      return 1;
    }
    if (strcmp(kind, "all") != 0 && strcmp(kind, model_kind) != 0 && strcmp(kind, name) != 0) continue;
    failures += check_model(context, dir, work, targets, name, shape, rtol, !strcmp(model_kind, "ext"),
                            listed(not_yet, name));
    ++checked;
  }
  fclose(tsv);
  hetc_context_destroy(context);
  printf("%d models on %s: %d failed\n", checked, targets, failures);
  return failures ? 1 : checked ? 0 : 1;
}
