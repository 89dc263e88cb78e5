/* The one CPU device: identity from /proc/cpuinfo, caches from sysfs, peak
 * fp32 throughput measured with a compiled FMA loop (about 50 ms). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "vec.h"
#include "plugin_cpu_info.h"

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

static double now_seconds(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

typedef void (*peak_fn_t)(long iters, float *out, int *threads);

/* Independent FMA chains per thread, enough of them to cover the FMA
 * latency on every core; the compiler keeps them in vector registers. */
static char *peak_source(int lanes) {
  hpc_strbuf_t sb;
  hpc_strbuf_init(&sb);
  hpc_strbuf_printf(
      &sb,
      "/* hetc vec plugin: fp32 FMA throughput probe. */\n"
      "#define CH 10\n#define LANES %d\n"
      "void hetc_vec_peak(long iters, float *out, int *threads);\n"
      "void hetc_vec_peak(long iters, float *out, int *threads) {\n"
      "  float total = 0.f;\n  int count = 0;\n"
      "#pragma omp parallel reduction(+:total, count)\n"
      "  {\n"
      "    float a[CH][LANES];\n"
      "    for (int j = 0; j < CH; ++j)\n"
      "      for (int l = 0; l < LANES; ++l) a[j][l] = (float)(j + l) * 1e-3f;\n"
      "    for (long it = 0; it < iters; ++it)\n"
      "      for (int j = 0; j < CH; ++j)\n"
      "#pragma omp simd\n"
      "        for (int l = 0; l < LANES; ++l) a[j][l] = a[j][l] * 0.9999f + 1e-4f;\n"
      "    float s = 0.f;\n"
      "    for (int j = 0; j < CH; ++j)\n"
      "      for (int l = 0; l < LANES; ++l) s += a[j][l];\n"
      "    total += s;\n    count += 1;\n"
      "  }\n"
      "  *out = total;\n  *threads = count;\n"
      "}\n",
      lanes);
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
  peak_fn_t fn;
  void *symbol = object->symbol;
  memcpy(&fn, &symbol, sizeof(fn));
  float sink = 0.f;
  int threads = 1;
  fn(1000, &sink, &threads); /* starts the OpenMP team */
  long iters = 20000;
  double t0 = now_seconds();
  fn(iters, &sink, &threads);
  double t = now_seconds() - t0;
  if (t > 0 && t < 0.04) {
    iters = (long)((double)iters * 0.04 / t);
    t0 = now_seconds();
    fn(iters, &sink, &threads);
    t = now_seconds() - t0;
  }
  *out_gflops = t > 0 ? (double)threads * (double)iters * 10.0 * lanes * 2.0 / t * 1e-9 : 0;
  vec_toolchain_release(tc, object);
  return NULL;
}

hetc_plugin_status_t vec_device_init(vec_device_t *dev, vec_toolchain_t *tc) {
  memset(dev, 0, sizeof(*dev));
  dev->cpu_model = hpc_cpu_model();
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
  long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
  d->memory_bytes = pages > 0 && page > 0 ? (uint64_t)pages * (uint64_t)page : 0;
  hpc_cpu_caches(d->cache_bytes);
  d->host_memory = 1;
  return NULL;
}

void vec_device_fini(vec_device_t *dev) {
  free(dev->name);
  free(dev->fingerprint);
  free(dev->cpu_model);
  memset(dev, 0, sizeof(*dev));
}
