#include "common/clock.h"

#include <stdlib.h>
#include <time.h>

double hetc_now_seconds(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static int compare_doubles(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

void hetc_sort_doubles(double *values, size_t count) { qsort(values, count, sizeof(double), compare_doubles); }
