/* The one CPU device: identity from /proc/cpuinfo, caches from sysfs, peak
 * fp32 throughput measured with an FMA loop in the instance's ISA (12
 * independent ymm or 16 zmm accumulators per thread) on every host thread:
 * the best of many samples of about 2 ms within 30 ms. */
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

/* 16 chains of 16 lanes: two 512-bit FMA ports at 4 cycles' latency need
 * 8; 16 leave room. Only called where cpu_isa_select() chose AVX-512. */
__attribute__((target("avx512f"))) static float peak_loop_avx512(long iters) {
  __m512 a[16];
  for (int i = 0; i < 16; ++i) a[i] = _mm512_set1_ps(0.1f * (float)(i + 1));
  const __m512 m = _mm512_set1_ps(0.9999f), k = _mm512_set1_ps(1e-4f);
  for (long i = 0; i < iters; ++i) {
    a[0] = _mm512_fmadd_ps(a[0], m, k); a[1] = _mm512_fmadd_ps(a[1], m, k);
    a[2] = _mm512_fmadd_ps(a[2], m, k); a[3] = _mm512_fmadd_ps(a[3], m, k);
    a[4] = _mm512_fmadd_ps(a[4], m, k); a[5] = _mm512_fmadd_ps(a[5], m, k);
    a[6] = _mm512_fmadd_ps(a[6], m, k); a[7] = _mm512_fmadd_ps(a[7], m, k);
    a[8] = _mm512_fmadd_ps(a[8], m, k); a[9] = _mm512_fmadd_ps(a[9], m, k);
    a[10] = _mm512_fmadd_ps(a[10], m, k); a[11] = _mm512_fmadd_ps(a[11], m, k);
    a[12] = _mm512_fmadd_ps(a[12], m, k); a[13] = _mm512_fmadd_ps(a[13], m, k);
    a[14] = _mm512_fmadd_ps(a[14], m, k); a[15] = _mm512_fmadd_ps(a[15], m, k);
    __asm__ volatile("" : "+v"(a[0]), "+v"(a[1]), "+v"(a[2]), "+v"(a[3]), "+v"(a[4]), "+v"(a[5]));
  }
  __m512 s = a[0];
  for (int i = 1; i < 16; ++i) s = _mm512_add_ps(s, a[i]);
  return _mm512_reduce_add_ps(s);
}

hetc_plugin_status_t cpu_device_init(cpu_device_t *dev, const cpu_isa_t *isa) {
  memset(dev, 0, sizeof(*dev));
  char model[256];
  hetc_kit_cpu_model(model, sizeof(model));
  dev->cpu_model = dup_string(model);
  long cores = sysconf(_SC_NPROCESSORS_ONLN);
  if (cores < 1) cores = 1;
  char buf[1024];
  snprintf(buf, sizeof(buf), "%s (%ld cores)", dev->cpu_model ? dev->cpu_model : "?", cores);
  dev->name = dup_string(buf);
  /* The ISA is part of the identity: records tuned with one never serve
   * the other, and a package says which its kernels need. */
  snprintf(buf, sizeof(buf), "cpu:%s:%ldc:llvm-15:%s", dev->cpu_model ? dev->cpu_model : "?",
           cores, isa->lanes == 16 ? "avx512" : "avx2+fma");
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
  d->simd_width_fp32 = isa->lanes;
  d->peak_gflops_fp32 = isa->lanes == 16
                            ? hetc_kit_measure_peak_gflops(peak_loop_avx512, 16.0 * 16.0 * 2.0)
                            : hetc_kit_measure_peak_gflops(peak_loop, 12.0 * 8.0 * 2.0);
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
