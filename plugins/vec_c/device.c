/* The one CPU device: identity from /proc/cpuinfo, caches from sysfs, peak
 * fp32 throughput measured with a compiled FMA loop on the host's thread
 * pool, as the kernels run: the best of many samples of about 2 ms within
 * 30 ms. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "vec.h"
#include "hetc/kit/cpu_info.h"
#include "hetc/kit/peak.h"

static char *dup_string(const char *s) {
  size_t n = strlen(s) + 1;
  char *d = malloc(n);
  if (d) memcpy(d, s, n);
  return d;
}

static int simd_width(void) {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx512f")) return 16;
  if (__builtin_cpu_supports("avx")) return 8;
  return 4;
#else
  return 4;
#endif
}

/* FMA chains per call and their count: CH chains of LANES lanes, 2 flops
 * per lane and iteration. */
#define PEAK_CHAINS 10

/* One thread's share: independent FMA chains, enough of them to cover the
 * FMA latency on a core; the compiler keeps them in vector registers. The
 * probe is compiled like the kernels (the same compiler and flags), and
 * runs like them, on the host's pool. */
static char *peak_source(int lanes) {
  hpc_strbuf_t sb;
  hpc_strbuf_init(&sb);
  hpc_strbuf_printf(
      &sb,
      "/* hetc vec plugin: fp32 FMA throughput probe (one thread's share). */\n"
      "#define CH %d\n#define LANES %d\n"
      "float hetc_vec_peak(long iters);\n"
      "float hetc_vec_peak(long iters) {\n"
      "  float a[CH][LANES];\n"
      "  for (int j = 0; j < CH; ++j)\n"
      "    for (int l = 0; l < LANES; ++l) a[j][l] = (float)(j + l) * 1e-3f;\n"
      "  for (long it = 0; it < iters; ++it)\n"
      "    for (int j = 0; j < CH; ++j)\n"
      "#pragma omp simd\n"
      "      for (int l = 0; l < LANES; ++l) a[j][l] = a[j][l] * 0.9999f + 1e-4f;\n"
      "  float s = 0.f;\n"
      "  for (int j = 0; j < CH; ++j)\n"
      "    for (int l = 0; l < LANES; ++l) s += a[j][l];\n"
      "  return s;\n"
      "}\n",
      PEAK_CHAINS, lanes);
  return hpc_strbuf_take(&sb, NULL);
}

static hetc_plugin_status_t measure_peak(vec_toolchain_t *tc, int lanes, double *out_gflops) {
  char *source = peak_source(lanes);
  if (!source) return vec_status(HETC_PLUGIN_STATUS_OUT_OF_MEMORY, "vec: out of memory");
  vec_object_t *object = NULL;
  hetc_plugin_status_t s = vec_toolchain_get(tc, source, strlen(source), "hetc_vec_peak",
                                             HETC_PLUGIN_STATUS_UNAVAILABLE, &object);
  free(source);
  if (s) return s;
  hetc_kit_fma_loop_fn_t loop;
  void *symbol = object->symbol;
  memcpy(&loop, &symbol, sizeof(loop));
  *out_gflops = hetc_kit_measure_peak_gflops(loop, PEAK_CHAINS * (double)lanes * 2.0);
  vec_toolchain_release(tc, object);
  return NULL;
}

hetc_plugin_status_t vec_device_init(vec_device_t *dev, vec_toolchain_t *tc) {
  memset(dev, 0, sizeof(*dev));
  char model[256];
  hetc_kit_cpu_model(model, sizeof(model));
  dev->cpu_model = dup_string(model);
  long cores = sysconf(_SC_NPROCESSORS_ONLN);
  if (cores < 1) cores = 1;
  int lanes = simd_width();
  char buf[1024];
  snprintf(buf, sizeof(buf), "%s (%ld cores)", dev->cpu_model ? dev->cpu_model : "?", cores);
  dev->name = dup_string(buf);
  snprintf(buf, sizeof(buf), "vec:%s:%ldc:%s", dev->cpu_model ? dev->cpu_model : "?", cores,
           tc->version);
  dev->fingerprint = dup_string(buf);
  if (!dev->cpu_model || !dev->name || !dev->fingerprint) {
    vec_device_fini(dev);
    return vec_status(HETC_PLUGIN_STATUS_OUT_OF_MEMORY, "vec: out of memory");
  }
  /* The probe kernel doubles as the test that the compiler works with our
   * flags. */
  double gflops = 0;
  hetc_plugin_status_t s = measure_peak(tc, lanes, &gflops);
  if (s) {
    vec_device_fini(dev);
    return s;
  }
  hetc_plugin_device_t *d = &dev->desc;
  d->struct_size = sizeof(*d);
  d->kind = HETC_PLUGIN_DEVICE_CPU;
  d->name = dev->name;
  d->fingerprint = dev->fingerprint;
  d->compute_units = (int32_t)cores;
  d->simd_width_fp32 = lanes;
  d->peak_gflops_fp32 = gflops;
  d->memory_bandwidth_gbps = 0;
  d->memory_bytes = hetc_kit_memory_bytes();
  hetc_kit_cpu_caches(d->cache_bytes);
  d->host_memory = 1;
  return NULL;
}

void vec_device_fini(vec_device_t *dev) {
  free(dev->name);
  free(dev->fingerprint);
  free(dev->cpu_model);
  memset(dev, 0, sizeof(*dev));
}
