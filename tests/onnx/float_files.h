/* tests/onnx/float_files.h -- raw float32 files (inputs, outputs, expected
 * outputs) as the ONNX tests compare them. */
#ifndef HETC_TESTS_ONNX_FLOAT_FILES_H_
#define HETC_TESTS_ONNX_FLOAT_FILES_H_

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

/* The file's floats (the caller frees them), or NULL. */
static inline float *read_floats(const char *path, long *out_count) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  fseek(f, 0, SEEK_END);
  const long bytes = ftell(f);
  fseek(f, 0, SEEK_SET);
  float *data = bytes >= 0 ? malloc((size_t)bytes + 4) : NULL;
  if (data && fread(data, 1, (size_t)bytes, f) != (size_t)bytes) {
    free(data);
    data = NULL;
  }
  fclose(f);
  *out_count = bytes / 4;
  return data;
}

/* Largest error relative to max(|expected|, 1% of the output's largest
 * magnitude): elements near zero are judged on the output's scale. NaN
 * anywhere is an infinite error. */
static inline double worst_error(const float *got, const float *expected, long count) {
  double scale = 0, worst = 0;
  for (long k = 0; k < count; ++k) scale = fmax(scale, fabs(expected[k]));
  for (long k = 0; k < count; ++k) {
    const double error = fabs((double)got[k] - expected[k]) / fmax(fabs(expected[k]), 1e-2 * scale + 1e-30);
    worst = isnan(error) ? INFINITY : fmax(worst, error);
  }
  return worst;
}

#endif /* HETC_TESTS_ONNX_FLOAT_FILES_H_ */
