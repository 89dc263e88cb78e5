/* The one CPU device: ISA probe (cpuid + xgetbv), identity from
 * /proc/cpuinfo, caches from sysfs, peak fp32 throughput measured with an
 * FMA loop (12 independent ymm accumulators per thread) on every host
 * thread: the best of many samples of about 2 ms within 30 ms. */
#include <cpuid.h>
#include <immintrin.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cpu.h"
#include "hetc/kit/cpu_info.h"
#include "hetc/kit/peak.h"

static char *dup_string(const char *s) {
  size_t n = strlen(s) + 1;
  char *d = malloc(n);
  if (d) memcpy(d, s, n);
  return d;
}

static uint64_t read_xcr0(void) {
  uint32_t eax, edx;
  __asm__ volatile("xgetbv" : "=a"(eax), "=d"(edx) : "c"(0));
  return ((uint64_t)edx << 32) | eax;
}

hetc_plugin_status_t cpu_isa_probe(void) {
  unsigned a, b, c, d;
  if (!__get_cpuid(1, &a, &b, &c, &d))
    return cpu_status(HETC_PLUGIN_STATUS_UNAVAILABLE, "cpu: cpuid leaf 1 is not available");
  const int osxsave = (c >> 27) & 1, avx = (c >> 28) & 1, fma = (c >> 12) & 1;
  if (!avx || !osxsave || (read_xcr0() & 6) != 6)
    return cpu_status(HETC_PLUGIN_STATUS_UNAVAILABLE,
                      "cpu: the OS does not enable AVX (YMM) state");
  if (__get_cpuid_max(0, NULL) < 7)
    return cpu_status(HETC_PLUGIN_STATUS_UNAVAILABLE, "cpu: the processor lacks AVX2");
  unsigned a7, b7, c7, d7;
  __cpuid_count(7, 0, a7, b7, c7, d7);
  (void)a7, (void)c7, (void)d7;
  if (!((b7 >> 5) & 1))
    return cpu_status(HETC_PLUGIN_STATUS_UNAVAILABLE, "cpu: the processor lacks AVX2");
  if (!fma) return cpu_status(HETC_PLUGIN_STATUS_UNAVAILABLE, "cpu: the processor lacks FMA");
  return NULL;
}

/* 12 independent FMA chains: enough to cover the FMA latency (4-5 cycles
 * at two ports). Only called after cpu_isa_probe() succeeded. */
__attribute__((target("avx2,fma"))) static float peak_loop(long iters) {
  __m256 a0 = _mm256_set1_ps(0.1f), a1 = _mm256_set1_ps(0.2f), a2 = _mm256_set1_ps(0.3f),
         a3 = _mm256_set1_ps(0.4f), a4 = _mm256_set1_ps(0.5f), a5 = _mm256_set1_ps(0.6f),
         a6 = _mm256_set1_ps(0.7f), a7 = _mm256_set1_ps(0.8f), a8 = _mm256_set1_ps(0.9f),
         a9 = _mm256_set1_ps(1.0f), a10 = _mm256_set1_ps(1.1f), a11 = _mm256_set1_ps(1.2f);
  const __m256 m = _mm256_set1_ps(0.9999f), k = _mm256_set1_ps(1e-4f);
  for (long i = 0; i < iters; ++i) {
    a0 = _mm256_fmadd_ps(a0, m, k); a1 = _mm256_fmadd_ps(a1, m, k);
    a2 = _mm256_fmadd_ps(a2, m, k); a3 = _mm256_fmadd_ps(a3, m, k);
    a4 = _mm256_fmadd_ps(a4, m, k); a5 = _mm256_fmadd_ps(a5, m, k);
    a6 = _mm256_fmadd_ps(a6, m, k); a7 = _mm256_fmadd_ps(a7, m, k);
    a8 = _mm256_fmadd_ps(a8, m, k); a9 = _mm256_fmadd_ps(a9, m, k);
    a10 = _mm256_fmadd_ps(a10, m, k); a11 = _mm256_fmadd_ps(a11, m, k);
    __asm__ volatile("" : "+x"(a0), "+x"(a1), "+x"(a2), "+x"(a3), "+x"(a4), "+x"(a5));
  }
  __m256 s = _mm256_add_ps(_mm256_add_ps(_mm256_add_ps(a0, a1), _mm256_add_ps(a2, a3)),
                           _mm256_add_ps(_mm256_add_ps(a4, a5), _mm256_add_ps(a6, a7)));
  s = _mm256_add_ps(s, _mm256_add_ps(_mm256_add_ps(a8, a9), _mm256_add_ps(a10, a11)));
  float out[8];
  _mm256_storeu_ps(out, s);
  return out[0] + out[7];
}

hetc_plugin_status_t cpu_device_init(cpu_device_t *dev) {
  memset(dev, 0, sizeof(*dev));
  char model[256];
  hetc_kit_cpu_model(model, sizeof(model));
  dev->cpu_model = dup_string(model);
  long cores = sysconf(_SC_NPROCESSORS_ONLN);
  if (cores < 1) cores = 1;
  char buf[1024];
  snprintf(buf, sizeof(buf), "%s (%ld cores)", dev->cpu_model ? dev->cpu_model : "?", cores);
  dev->name = dup_string(buf);
  snprintf(buf, sizeof(buf), "cpu:%s:%ldc:llvm-15:avx2+fma",
           dev->cpu_model ? dev->cpu_model : "?", cores);
  dev->fingerprint = dup_string(buf);
  if (!dev->cpu_model || !dev->name || !dev->fingerprint) {
    cpu_device_fini(dev);
    return cpu_status(HETC_PLUGIN_STATUS_OUT_OF_MEMORY, "cpu: out of memory");
  }
  hetc_plugin_device_t *d = &dev->desc;
  d->struct_size = sizeof(*d);
  d->kind = HETC_PLUGIN_DEVICE_CPU;
  d->name = dev->name;
  d->fingerprint = dev->fingerprint;
  d->compute_units = (int32_t)cores;
  d->simd_width_fp32 = 8;
  d->peak_gflops_fp32 = hetc_kit_measure_peak_gflops(peak_loop, 12.0 * 8.0 * 2.0);
  d->memory_bytes = hetc_kit_memory_bytes();
  hetc_kit_cpu_caches(d->cache_bytes);
  d->host_memory = 1;
  return NULL;
}

void cpu_device_fini(cpu_device_t *dev) {
  free(dev->name);
  free(dev->fingerprint);
  free(dev->cpu_model);
  memset(dev, 0, sizeof(*dev));
}
