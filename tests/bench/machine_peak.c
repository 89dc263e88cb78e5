#include "machine_peak.h"

#include <immintrin.h>
#include <pthread.h>
#include <stdlib.h>
#include <time.h>

#define CHAINS 12
#define ITERATIONS 20000000L

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static volatile float sink;

/* 12 independent ymm accumulators: enough to cover FMA latency (4-5
 * cycles) times two FMA ports on current x86 cores. */
__attribute__((target("avx2,fma"))) static void *fma_loop(void *arg) {
  long iterations = *(long *)arg;
  __m256 acc[CHAINS];
  for (int c = 0; c < CHAINS; ++c) acc[c] = _mm256_set1_ps((float)c * 1e-3f);
  const __m256 a = _mm256_set1_ps(0.999999f), b = _mm256_set1_ps(1e-7f);
  for (long i = 0; i < iterations; ++i) {
    for (int c = 0; c < CHAINS; ++c) acc[c] = _mm256_fmadd_ps(acc[c], a, b);
  }
  __m256 total = acc[0];
  for (int c = 1; c < CHAINS; ++c) total = _mm256_add_ps(total, acc[c]);
  sink = _mm256_cvtss_f32(total);
  return NULL;
}

static int compare(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

double machine_peak_gflops(int threads) {
  long iterations = ITERATIONS / 4;
  double trials[5];
  pthread_t ids[256];
  if (threads > 256) threads = 256;
  for (int t = 0; t < 5; ++t) {
    double start = now();
    for (int i = 0; i < threads; ++i) pthread_create(&ids[i], NULL, fma_loop, &iterations);
    for (int i = 0; i < threads; ++i) pthread_join(ids[i], NULL);
    double seconds = now() - start;
    trials[t] = (double)threads * (double)iterations * CHAINS * 8 * 2 / seconds / 1e9;
  }
  qsort(trials, 5, sizeof(double), compare);
  return trials[2];
}
