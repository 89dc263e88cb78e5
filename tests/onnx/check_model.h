/* tests/onnx/check_model.h -- one ONNX model of a committed corpus
 * (NAME.onnx, NAME.input.bin, NAME.expected.bin: onnxruntime's outputs)
 * through the public API, as the ONNX tests hold hetc to onnxruntime:
 * imported, compiled for the targets given, run on its input, and its
 * outputs compared with the expected ones; or, for a model hetc does not
 * import yet, its refusal checked. */
#ifndef HETC_TESTS_ONNX_CHECK_MODEL_H_
#define HETC_TESTS_ONNX_CHECK_MODEL_H_

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "float_files.h"
#include "hetc/hetc.h"

/* How outputs are held to the expected ones (float_files.h). */
typedef enum {
  JUDGE_ELEMENTS, /* each element on its own magnitude, floored at 1% of the largest */
  JUDGE_QUARTILE, /* the same, floored at 1% of the lower quartile of the magnitudes */
  JUDGE_LARGEST,  /* every element on the largest |expected| */
} judge_t;

typedef enum {
  EXPECT_MATCH,   /* imports, compiles, runs, and matches within rtol */
  EXPECT_REFUSED, /* the import fails: with `message` exactly, or (NULL) with a message
                     that says "is not supported" or "not supported yet" */
  EXPECT_FAILS,   /* a known failure: imports, and fails to compile, run or match (the
                     day it matches, the check fails, so that the list is kept true) */
} expect_t;

typedef struct {
  expect_t expect;
  double rtol;
  judge_t judge;
  const char *message;
} expectation_t;

/* Imports, compiles (into WORK/NAME.hetc) and runs DIR/NAME.onnx on TARGETS
 * (comma-separated), with its one input "input" of SHAPE (e.g. 1x3x64x64);
 * prints one line; 0 when the model does what `expected` says. */
static int check_model(hetc_context_t *context, const char *dir, const char *work, const char *targets,
                       const char *name, const char *shape, const expectation_t *expected_outcome) {
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
  if (expected_outcome->expect == EXPECT_REFUSED) {
    /* The message without the "PATH: " hetc puts before it. */
    const char *message = status ? hetc_status_message(status) : "";
    const size_t path_length = strlen(path);
    if (!strncmp(message, path, path_length) && !strncmp(message + path_length, ": ", 2)) message += path_length + 2;
    const int refused = status && (expected_outcome->message ? !strcmp(message, expected_outcome->message)
                                                             : strstr(message, "is not supported") ||
                                                                   strstr(message, "not supported yet"));
    if (refused) printf("%-36s refused as expected: %s\n", name, message);
    else if (!status) printf("%-36s FAIL: expected to be refused, but imports\n", name);
    else if (expected_outcome->message)
      printf("%-36s FAIL: refused with another message: %s (expected: %s)\n", name, message, expected_outcome->message);
    else
      printf("%-36s FAIL: refused with a message that says neither \"is not supported\" nor \"not supported yet\": "
             "%s\n", name, message);
    hetc_status_free(status);
    hetc_model_free(model);
    return !refused;
  }
  if (expected_outcome->expect == EXPECT_FAILS && status) {
    printf("%-36s FAIL: listed as a known failure, but the import fails: %s\n", name, hetc_status_message(status));
    hetc_status_free(status);
    return 1;
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
    if (!status) {
      const float *want = expected + offset;
      worst = fmax(worst, expected_outcome->judge == JUDGE_QUARTILE  ? worst_error_quartile(got, want, count)
                          : expected_outcome->judge == JUDGE_LARGEST ? worst_error_of_largest(got, want, count)
                                                                     : worst_error(got, want, count));
    }
    offset += count;
    free(got);
  }
  if (!status && offset != expected_count)
    status = hetc_status_new(HETC_STATUS_BAD_INPUT, "%ld output values, %ld expected", offset, expected_count);
  const int matched = !status && worst <= expected_outcome->rtol;
  int failed;
  if (expected_outcome->expect == EXPECT_FAILS) {
    failed = matched;
    if (matched)
      printf("%-36s FAIL: a known failure that now matches: worst relative error %.2e (tolerance %.0e)\n", name,
             worst, expected_outcome->rtol);
    else if (status) printf("%-36s fails as known: %s\n", name, hetc_status_message(status));
    else
      printf("%-36s fails as known: worst relative error %.2e (tolerance %.0e)\n", name, worst, expected_outcome->rtol);
  } else {
    failed = !matched;
    if (status) printf("%-36s FAIL: %s\n", name, hetc_status_message(status));
    else
      printf("%-36s %s worst relative error %.2e (tolerance %.0e)\n", name, failed ? "FAIL:" : "ok  ", worst,
             expected_outcome->rtol);
  }
  hetc_status_free(status);
  free(expected);
  hetc_package_close(package);
  hetc_model_free(model);
  return failed;
}

#endif /* HETC_TESTS_ONNX_CHECK_MODEL_H_ */
