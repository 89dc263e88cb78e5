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

/* 16 independent zmm accumulators (of 32 registers): two 512-bit FMA
 * ports with a 4-cycle latency need 8 in flight; 16 leave room for cores
 * whose latency is longer. */
#define CHAINS_512 16
__attribute__((target("avx512f"))) static void *fma_loop_512(void *arg) {
  long iterations = *(long *)arg;
  __m512 a[CHAINS_512];
  for (int k = 0; k < CHAINS_512; ++k) a[k] = _mm512_set1_ps(0.1f * (float)k);
  const __m512 m = _mm512_set1_ps(0.999999f), c = _mm512_set1_ps(1e-7f);
  for (long i = 0; i < iterations; ++i) {
    a[0] = _mm512_fmadd_ps(a[0], m, c);
    a[1] = _mm512_fmadd_ps(a[1], m, c);
    a[2] = _mm512_fmadd_ps(a[2], m, c);
    a[3] = _mm512_fmadd_ps(a[3], m, c);
    a[4] = _mm512_fmadd_ps(a[4], m, c);
    a[5] = _mm512_fmadd_ps(a[5], m, c);
    a[6] = _mm512_fmadd_ps(a[6], m, c);
    a[7] = _mm512_fmadd_ps(a[7], m, c);
    a[8] = _mm512_fmadd_ps(a[8], m, c);
    a[9] = _mm512_fmadd_ps(a[9], m, c);
    a[10] = _mm512_fmadd_ps(a[10], m, c);
    a[11] = _mm512_fmadd_ps(a[11], m, c);
    a[12] = _mm512_fmadd_ps(a[12], m, c);
    a[13] = _mm512_fmadd_ps(a[13], m, c);
    a[14] = _mm512_fmadd_ps(a[14], m, c);
    a[15] = _mm512_fmadd_ps(a[15], m, c);
  }
  __m512 total = a[0];
  for (int k = 1; k < CHAINS_512; ++k) total = _mm512_add_ps(total, a[k]);
  sink = _mm512_reduce_add_ps(total);
  return NULL;
}

/* libgcc's CPU model checks the OS's XSAVE state (XCR0) as well as CPUID:
 * a kernel that does not save zmm registers reports no avx512f. */
static int has_avx512(void) {
  __builtin_cpu_init();
  return __builtin_cpu_supports("avx512f");
}

const char *machine_peak_isa(void) { return has_avx512() ? "avx512" : "avx2"; }

static int compare(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

double machine_peak_gflops(int threads) {
  const int wide = has_avx512();
  void *(*loop)(void *) = wide ? fma_loop_512 : fma_loop;
  const double flops_per_iteration = wide ? CHAINS_512 * 16 * 2 : CHAINS * 8 * 2;
  long iterations = ITERATIONS / 4;
  double trials[5];
  pthread_t ids[256];
  if (threads > 256) threads = 256;
  for (int t = 0; t < 5; ++t) {
    double start = now();
    for (int i = 0; i < threads; ++i) pthread_create(&ids[i], NULL, loop, &iterations);
    for (int i = 0; i < threads; ++i) pthread_join(ids[i], NULL);
    double seconds = now() - start;
    trials[t] = (double)threads * (double)iterations * flops_per_iteration / seconds / 1e9;
  }
  /* A peak is the best the machine can do: the fastest trial, since
   * anything else on the machine only slows a trial down. */
  qsort(trials, 5, sizeof(double), compare);
  return trials[4];
}
