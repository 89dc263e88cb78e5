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

/* 12 independent ymm accumulators, written out so they stay in registers
 * at any optimisation level: enough to cover FMA latency (4-5 cycles)
 * times two FMA ports on current x86 cores. */
__attribute__((target("avx2,fma"))) static void *fma_loop(void *arg) {
  long iterations = *(long *)arg;
  __m256 a0 = _mm256_set1_ps(0.0f), a1 = _mm256_set1_ps(0.1f), a2 = _mm256_set1_ps(0.2f),
         a3 = _mm256_set1_ps(0.3f), a4 = _mm256_set1_ps(0.4f), a5 = _mm256_set1_ps(0.5f),
         a6 = _mm256_set1_ps(0.6f), a7 = _mm256_set1_ps(0.7f), a8 = _mm256_set1_ps(0.8f),
         a9 = _mm256_set1_ps(0.9f), a10 = _mm256_set1_ps(1.0f), a11 = _mm256_set1_ps(1.1f);
  const __m256 m = _mm256_set1_ps(0.999999f), c = _mm256_set1_ps(1e-7f);
  for (long i = 0; i < iterations; ++i) {
    a0 = _mm256_fmadd_ps(a0, m, c);
    a1 = _mm256_fmadd_ps(a1, m, c);
    a2 = _mm256_fmadd_ps(a2, m, c);
    a3 = _mm256_fmadd_ps(a3, m, c);
    a4 = _mm256_fmadd_ps(a4, m, c);
    a5 = _mm256_fmadd_ps(a5, m, c);
    a6 = _mm256_fmadd_ps(a6, m, c);
    a7 = _mm256_fmadd_ps(a7, m, c);
    a8 = _mm256_fmadd_ps(a8, m, c);
    a9 = _mm256_fmadd_ps(a9, m, c);
    a10 = _mm256_fmadd_ps(a10, m, c);
    a11 = _mm256_fmadd_ps(a11, m, c);
  }
  __m256 total = _mm256_add_ps(_mm256_add_ps(_mm256_add_ps(a0, a1), _mm256_add_ps(a2, a3)),
                               _mm256_add_ps(_mm256_add_ps(a4, a5), _mm256_add_ps(a6, a7)));
  total = _mm256_add_ps(total, _mm256_add_ps(_mm256_add_ps(a8, a9), _mm256_add_ps(a10, a11)));
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
  /* A peak is the best the machine can do: the fastest trial, since
   * anything else on the machine only slows a trial down. */
  qsort(trials, 5, sizeof(double), compare);
  return trials[4];
}
