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

/* Largest error relative to max(|expected|, floor). An infinity or NaN
 * where one is expected (same sign) is no error; anywhere else it is an
 * infinite one. */
static inline double worst_error_above(const float *got, const float *expected, long count, double floor) {
  double worst = 0;
  for (long k = 0; k < count; ++k) {
    if (!isfinite(expected[k]) && (got[k] == expected[k] || (isnan(got[k]) && isnan(expected[k])))) continue;
    const double error = fabs((double)got[k] - expected[k]) / fmax(fabs(expected[k]), floor + 1e-30);
    worst = isnan(error) ? INFINITY : fmax(worst, error);
  }
  return worst;
}

/* Elements near zero judged on 1% of the output's largest magnitude: sums
 * of many products round near zero on the scale of their terms. */
static inline double worst_error(const float *got, const float *expected, long count) {
  double scale = 0;
  for (long k = 0; k < count; ++k)
    if (isfinite(expected[k])) scale = fmax(scale, fabs(expected[k]));
  return worst_error_above(got, expected, count, 1e-2 * scale);
}

/* Every element judged on the output's largest magnitude: the largest
 * |got - expected| over the largest |expected| (check_torchvision.sh's
 * measure, which the torchvision corpus is held to). */
static inline double worst_error_of_largest(const float *got, const float *expected, long count) {
  double scale = 0;
  for (long k = 0; k < count; ++k)
    if (isfinite(expected[k])) scale = fmax(scale, fabs(expected[k]));
  return worst_error_above(got, expected, count, scale);
}

static inline int compare_doubles(const void *a, const void *b) {
  const double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* Elements near zero judged on 1% of the lower quartile of the nonzero
 * finite magnitudes: a few huge values (a pad of 1e9 around an image) must
 * not excuse the rest. */
static inline double worst_error_quartile(const float *got, const float *expected, long count) {
  double *magnitudes = malloc(sizeof(double) * (size_t)(count + 1));
  long kept = 0;
  for (long k = 0; magnitudes && k < count; ++k)
    if (isfinite(expected[k]) && expected[k] != 0) magnitudes[kept++] = fabs(expected[k]);
  if (!magnitudes) return INFINITY;
  qsort(magnitudes, (size_t)kept, sizeof(double), compare_doubles);
  const double floor = kept ? 1e-2 * magnitudes[kept / 4] : 0;
  free(magnitudes);
  return worst_error_above(got, expected, count, floor);
}

#endif /* HETC_TESTS_ONNX_FLOAT_FILES_H_ */
