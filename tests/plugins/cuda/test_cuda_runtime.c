/* The cuda plugin's Driver API runtime (rt_driver.c) and ABI table
 * (plugin.c) against the fake driver (fake_libcuda.c, through
 * HETC_CUDA_DRIVER_LIBRARY) with the real NVRTC, on a machine without a GPU:
 * device enumeration and descriptors; the module caches (memory, then disk
 * in a fresh device open, a corrupt entry rebuilt) and package images (a
 * cubin, or PTX for a device newer than NVRTC; a foreign image falls back
 * to compiling); buffers with their bounds; launches, their typed failures
 * (too many registers -> DEVICE_LIMITS, a faulted context -> RUNTIME_FAILED
 * with the sticky-error note) and the register check; timing marks; the
 * plugin's build / run / time / emit / load. The fake counts what the
 * runtime does (context pushes, loads, allocations) and the test ends by
 * asserting that nothing leaked and that no call was made without a
 * context.
 *
 * White-box: the plugin's sources are linked in, with the driver's host
 * services as the host. Skips (77) when NVRTC is missing. */
#include <dirent.h>
#include <dlfcn.h>
#include <math.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "common/status.h"
#include "cu.h"
#include "cuda_loader.h"
#include "fake_libcuda.h"
#include "plugin_files.h"
#include "plugin_workload.h"
#include "plugins/host.h"

#define SKIP 77

static hetc_fake_cuda_set_fn fake_set;
static hetc_fake_cuda_stat_fn fake_stat;
static hetc_fake_cuda_last_launch_fn fake_last_launch;
static const cul_nvrtc_t *nvrtc;
static char cache_root[64];  /* XDG_CACHE_HOME */
static char cache_dir[128];  /* where rt_driver keeps the kernels */
static cu_device_t *devs;
static int32_t num_devs;

/* The kernel the fake runs (y += 2x over every thread); variants differ in
 * a comment, which makes them different modules. */
#define SAXPY(tag)                                                                                         \
  "/* " tag " */ HK_KERNEL(1024, 1, 1) fake_saxpy(HK_GLOBAL const float *HK_RESTRICT x, HK_GLOBAL float " \
  "*HK_RESTRICT y) { y[HK_GID_X] += 2.0f * x[HK_GID_X]; }"

static const char *message(hetc_plugin_status_t s) { return hetc_status_message((hetc_status_t)s); }

#define assert_ok(call)                                        \
  do {                                                         \
    hetc_plugin_status_t s_ = (call);                          \
    if (s_) fail_msg("%s: %s", #call, message(s_));            \
  } while (0)

/* Asserts that s failed with code and exactly the message want, frees it. */
static void expect_status(hetc_plugin_status_t s, int32_t code, const char *want) {
  if (!s) fail_msg("expected status %d \"%s\", got success", code, want);
  if ((int32_t)hetc_status_code((hetc_status_t)s) != code || strcmp(message(s), want) != 0)
    fail_msg("expected status %d \"%s\",\n     got status %d \"%s\"", code, want, hetc_status_code((hetc_status_t)s),
             message(s));
  hetc_status_free((hetc_status_t)s);
}

static long long stat_of(const char *key) {
  const long long v = fake_stat(key);
  if (v < 0) fail_msg("the fake driver has no counter %s", key);
  return v;
}

static void set(const char *key, const char *value) { assert_int_equal(fake_set(key, value), 0); }

static void open_devices(void) {
  assert_ok(cu_rt_devices_open(&devs, &num_devs));
  assert_int_equal(num_devs, 2);
}

static void close_devices(void) {
  cu_rt_devices_close(devs, num_devs);
  devs = NULL;
  num_devs = 0;
}

/* What NVRTC makes for compute capability cc: its cubin when it knows the
 * architecture, else PTX for the newest below (as rt_driver.c decides). */
static void nvrtc_target(int cc, char *out, size_t size) {
  int count = 0, archs[128], below = 0;
  assert_int_equal(nvrtc->nvrtcGetNumSupportedArchs(&count), NVRTC_SUCCESS);
  assert_true(count > 0 && count <= 128);
  assert_int_equal(nvrtc->nvrtcGetSupportedArchs(archs), NVRTC_SUCCESS);
  for (int i = 0; i < count; ++i) {
    if (archs[i] == cc) {
      snprintf(out, size, "sm_%d", cc);
      return;
    }
    if (archs[i] < cc && archs[i] > below) below = archs[i];
  }
  snprintf(out, size, "compute_%d", below);
}

static int oldest_arch(void) {
  int count = 0, archs[128];
  nvrtc->nvrtcGetNumSupportedArchs(&count);
  nvrtc->nvrtcGetSupportedArchs(archs);
  return archs[0];
}

/* Files in the kernel cache ending with suffix; the first one's name. */
static int cache_files(const char *suffix, char *first, size_t size) {
  DIR *d = opendir(cache_dir);
  if (!d) return 0;
  int count = 0;
  for (struct dirent *e; (e = readdir(d));) {
    const size_t n = strlen(e->d_name), k = strlen(suffix);
    if (e->d_name[0] == '.' || n < k || strcmp(e->d_name + n - k, suffix) != 0) continue;
    if (count++ == 0 && first) snprintf(first, size, "%s/%s", cache_dir, e->d_name);
  }
  closedir(d);
  return count;
}

static void clear_cache(void) {
  DIR *d = opendir(cache_dir);
  if (!d) return;
  char path[512];
  for (struct dirent *e; (e = readdir(d));) {
    if (e->d_name[0] == '.') continue;
    snprintf(path, sizeof path, "%s/%s", cache_dir, e->d_name);
    remove(path);
  }
  closedir(d);
}

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static void write_file(const char *path, const void *data, size_t length) {
  FILE *f = fopen(path, "wb");
  assert_non_null(f);
  assert_int_equal(fwrite(data, 1, length, f), length);
  fclose(f);
}

static cu_module_t *get_module(cu_device_t *dev, const char *source, const void *image, size_t image_length) {
  cu_module_t *m = NULL;
  assert_ok(cu_rt_module_get(dev, source, strlen(source), image, image_length, &m));
  assert_non_null(m);
  return m;
}

/* ------------------------------------------------------------------------ */

static void devices_and_descriptors(void **state) {
  (void)state;
  assert_ok(cu_rt_probe());
  assert_string_equal(cu_rt_prelude(), hpc_gpu_dialect_cuda());

  /* A device older than anything NVRTC compiles for is refused by name. */
  set("devices", "30");
  char want[512];
  snprintf(want, sizeof want, "cuda: device 0 (Fake GPU sm_30, sm_30) is too old for NVRTC %d.%d (oldest: sm_%d)",
           nvrtc->major, nvrtc->minor, oldest_arch());
  expect_status(cu_rt_devices_open(&devs, &num_devs), HETC_PLUGIN_STATUS_UNAVAILABLE, want);
  assert_null(devs);
  assert_int_equal(num_devs, 0);

  /* An H100, a device newer than NVRTC (PTX for the driver to compile),
   * and the old one, skipped. */
  set("devices", "90,130,30");
  open_devices();
  cu_device_t *h100 = &devs[0], *next = &devs[1];
  const cu_limits_t *l = &h100->limits;
  assert_string_equal(h100->name, "Fake H100 80GB HBM3");
  assert_string_equal(h100->arch, "sm_90");
  snprintf(want, sizeof want, "cuda|Fake H100 80GB HBM3|sm_90|driver 13.0|nvrtc %d.%d", nvrtc->major, nvrtc->minor);
  assert_string_equal(h100->fingerprint, want);
  assert_int_equal(l->cc_major, 9);
  assert_int_equal(l->cc_minor, 0);
  assert_int_equal(l->sm_count, 132);
  assert_int_equal(l->max_threads_per_block, 1024);
  assert_int_equal(l->max_block_dims[0], 1024);
  assert_int_equal(l->max_block_dims[1], 1024);
  assert_int_equal(l->max_block_dims[2], 64);
  assert_int_equal(l->max_grid_dims[0], 2147483647);
  assert_int_equal(l->max_grid_dims[1], 65535);
  assert_int_equal(l->max_grid_dims[2], 65535);
  assert_int_equal(l->shared_bytes_per_block, 49152);
  assert_int_equal(l->shared_bytes_per_sm, 233472);
  assert_int_equal(l->registers_per_block, 65536);
  assert_int_equal(l->registers_per_sm, 65536);
  assert_int_equal(l->warp_size, 32);
  assert_int_equal(l->clock_khz, 1980000);
  assert_int_equal(l->l2_bytes, 52428800);
  assert_int_equal(l->memory_bytes, 85028896768LL);

  const hetc_plugin_device_t *d = &h100->desc;
  assert_int_equal(d->struct_size, sizeof(*d));
  assert_int_equal(d->kind, HETC_PLUGIN_DEVICE_GPU);
  assert_string_equal(d->name, "Fake H100 80GB HBM3 (sm_90, TF32 tensor cores 535.3 TFLOPS)");
  assert_string_equal(d->fingerprint, h100->fingerprint);
  assert_int_equal(d->compute_units, 132);
  assert_int_equal(d->simd_width_fp32, 32);
  /* 132 SMs x 128 FMA lanes x 2 flops x 1.98 GHz. */
  assert_true(fabs(d->peak_gflops_fp32 - 66908.16) < 1e-6);
  assert_true(fabs(cu_peak_fp32_gflops(l) - 66908.16) < 1e-6);
  /* 132 SMs x 2048 TF32 flops per clock x 1.98 GHz. */
  assert_true(fabs(cu_peak_tf32_gflops(l) - 535265.28) < 1e-6);
  assert_int_equal(d->memory_bytes, 85028896768ULL);
  assert_int_equal(d->max_threads_per_group, 1024);
  assert_int_equal(d->local_memory_bytes, 49152);
  assert_int_equal(d->cache_bytes[1], 52428800);
  assert_int_equal(d->host_memory, 0);
  /* The bandwidth comes from the memory clock and bus width the runtime
   * read (the fake reports 2619 MHz and 5120 bits: 3352.32 GB/s). */
  assert_true(fabs(d->memory_bandwidth_gbps - 3352.32) < 1e-6);

  char target[32];
  nvrtc_target(130, target, sizeof target);
  assert_string_equal(next->name, "Fake GPU sm_130");
  assert_string_equal(next->arch, target);
  assert_int_equal(next->limits.cc_major, 13);
  snprintf(want, sizeof want, "cuda|Fake GPU sm_130|sm_130|driver 13.0|nvrtc %d.%d", nvrtc->major, nvrtc->minor);
  assert_string_equal(next->fingerprint, want);
  /* 16 SMs x 128 lanes x 2 x 1 GHz. */
  assert_true(fabs(next->desc.peak_gflops_fp32 - 4096.0) < 1e-9);
  printf("devices: %s (%s), %s (%s); peak %.1f and %.1f GFLOPS\n", h100->name, h100->arch, next->name, next->arch,
         d->peak_gflops_fp32, next->desc.peak_gflops_fp32);

  /* One primary context, stream and two events per device, nothing left
   * current. */
  assert_int_equal(stat_of("retains") - stat_of("releases"), 2);
  assert_int_equal(stat_of("live_streams"), 2);
  assert_int_equal(stat_of("live_events"), 4);
  assert_int_equal(stat_of("depth"), 0);

  /* Timing before any mark: the driver's invalid handle, typed. */
  double seconds = -1;
  expect_status(cu_rt_elapsed(h100, &seconds), HETC_PLUGIN_STATUS_RUNTIME_FAILED,
                "cuda: timing the kernels on Fake H100 80GB HBM3 failed: CUDA_ERROR_INVALID_HANDLE (invalid resource "
                "handle)");
  assert_true(seconds == 0);
}

/* Compile once, then the memory cache, then the disk cache in a fresh
 * device open; a corrupt disk entry is rebuilt and rewritten. */
static void module_caches(void **state) {
  (void)state;
  static const char source[] = SAXPY("caches");
  cu_device_t *dev = &devs[0];
  const long long loads = stat_of("loads"), failures = stat_of("load_failures"), unloads = stat_of("unloads");
  const int entries = cache_files("", NULL, 0);
  double t0 = now();
  cu_module_t *m = get_module(dev, source, NULL, 0);
  const double compile_seconds = now() - t0;
  assert_int_equal(stat_of("loads"), loads + 1);
  assert_int_equal(cache_files("", NULL, 0), entries + 1);

  /* The entry: <16 hex digits of the key>-sm_90.cubin, a cubin. */
  char path[512] = "";
  assert_int_equal(cache_files("-sm_90.cubin", path, sizeof path), 1);
  const char *name = strrchr(path, '/') + 1;
  assert_int_equal(strlen(name), 16 + strlen("-sm_90.cubin"));
  assert_int_equal(strspn(name, "0123456789abcdef"), 16);
  struct stat before;
  assert_int_equal(stat(path, &before), 0);

  cu_module_t *again = get_module(dev, source, NULL, 0);
  assert_ptr_equal(again, m);
  assert_int_equal(stat_of("loads"), loads + 1);
  cu_rt_module_release(dev, m);
  assert_int_equal(stat_of("unloads"), unloads); /* still referenced */
  cu_rt_module_release(dev, again);
  assert_int_equal(stat_of("unloads"), unloads + 1);

  /* A fresh open: the disk entry loads, nothing is compiled or written. */
  close_devices();
  open_devices();
  dev = &devs[0];
  t0 = now();
  m = get_module(dev, source, NULL, 0);
  const double disk_seconds = now() - t0;
  assert_int_equal(stat_of("loads"), loads + 2);
  assert_int_equal(stat_of("load_failures"), failures);
  struct stat after;
  assert_int_equal(stat(path, &after), 0);
  assert_int_equal(after.st_ino, before.st_ino);
  printf("module: compiled in %.1f ms, from the disk cache in %.2f ms\n", compile_seconds * 1e3, disk_seconds * 1e3);
  cu_rt_module_release(dev, m);

  /* A corrupt entry: refused by the driver, rebuilt, rewritten. */
  static const char junk[] = "not a cubin";
  write_file(path, junk, sizeof junk - 1);
  m = get_module(dev, source, NULL, 0);
  assert_int_equal(stat_of("load_failures"), failures + 1);
  assert_int_equal(stat_of("loads"), loads + 3);
  assert_int_equal(stat(path, &after), 0);
  assert_true(after.st_size > 64);
  char head[4];
  FILE *f = fopen(path, "rb");
  assert_non_null(f);
  assert_int_equal(fread(head, 1, 4, f), 4);
  fclose(f);
  assert_memory_equal(head, "\177ELF", 4);
  cu_rt_module_release(dev, m);
  /* ... and good again for the next process. */
  close_devices();
  open_devices();
  m = get_module(&devs[0], source, NULL, 0);
  assert_int_equal(stat_of("load_failures"), failures + 1);
  assert_int_equal(stat_of("loads"), loads + 4);
  cu_rt_module_release(&devs[0], m);

  /* A compile error is BUILD_FAILED with NVRTC's log; nothing loads. */
  static const char broken[] = "HK_KERNEL(64, 1, 1) fake_saxpy(HK_GLOBAL float *y) { y[0] = undefined_name; }";
  cu_module_t *none = NULL;
  hetc_plugin_status_t s = cu_rt_module_get(&devs[0], broken, strlen(broken), NULL, 0, &none);
  assert_non_null(s);
  assert_null(none);
  assert_int_equal(hetc_status_code((hetc_status_t)s), HETC_PLUGIN_STATUS_BUILD_FAILED);
  char prefix[256];
  snprintf(prefix, sizeof prefix,
           "cuda: NVRTC %d.%d could not compile the kernel for sm_90: NVRTC_ERROR_COMPILATION; log (kernel.cu lines "
           "are the kernel text's, hk_prelude.cu the dialect's):\n",
           nvrtc->major, nvrtc->minor);
  assert_int_equal(strncmp(message(s), prefix, strlen(prefix)), 0);
  assert_non_null(strstr(message(s), "kernel.cu(1): error: identifier \"undefined_name\" is undefined"));
  hetc_status_free((hetc_status_t)s);
  assert_int_equal(stat_of("loads"), loads + 4);
}

/* What a package gets: PTX and the cubin; PTX only on a device newer than
 * NVRTC. A package's image is loaded instead of compiling, unless the
 * device refuses it. */
static void package_images(void **state) {
  (void)state;
  static const char source[] = SAXPY("images");
  cu_device_t *h100 = &devs[0], *next = &devs[1];
  cu_module_t *m = get_module(h100, source, NULL, 0);
  void *ptx = NULL, *cubin = NULL;
  size_t ptx_length = 0, cubin_length = 0;
  cu_rt_module_images(m, &ptx, &ptx_length, &cubin, &cubin_length);
  assert_non_null(ptx);
  assert_non_null(cubin);
  assert_int_equal(strlen(ptx), ptx_length);
  assert_int_equal(strncmp(ptx, "//", 2), 0);
  assert_non_null(strstr(ptx, "\n.target sm_90\n"));
  assert_non_null(strstr(ptx, ".entry fake_saxpy("));
  assert_true(cubin_length > 64);
  assert_memory_equal(cubin, "\177ELF", 4);
  uint32_t flags;
  memcpy(&flags, (char *)cubin + 0x30, 4);
  assert_int_equal(flags >> 8 & 0xff, 90); /* the cubin's architecture */
  cu_rt_module_release(h100, m);

  /* The newer device: PTX for the newest architecture NVRTC knows. */
  char target[32], suffix[48], ptx_target[48];
  nvrtc_target(130, target, sizeof target);
  snprintf(suffix, sizeof suffix, "-%s.%s", target, target[0] == 's' ? "cubin" : "ptx");
  snprintf(ptx_target, sizeof ptx_target, "\n.target sm_%s\n", strchr(target, '_') + 1);
  const int before = cache_files(suffix, NULL, 0);
  m = get_module(next, source, NULL, 0);
  assert_int_equal(cache_files(suffix, NULL, 0), before + 1);
  void *next_ptx = NULL, *next_cubin = NULL;
  size_t next_ptx_length = 0, next_cubin_length = 0;
  cu_rt_module_images(m, &next_ptx, &next_ptx_length, &next_cubin, &next_cubin_length);
  assert_non_null(next_ptx);
  assert_non_null(strstr(next_ptx, ptx_target));
  if (target[0] == 'c') {
    assert_null(next_cubin);
    assert_int_equal(next_cubin_length, 0);
  }
  free(next_cubin);
  cu_rt_module_release(next, m);

  /* A package's PTX for another source text: loaded as it is (the key is
   * the new text's, so a compile would have written a cache entry). */
  const long long loads = stat_of("loads"), failures = stat_of("load_failures");
  const int entries = cache_files("", NULL, 0);
  static const char packaged[] = SAXPY("packaged");
  m = get_module(h100, packaged, ptx, ptx_length);
  assert_int_equal(stat_of("loads"), loads + 1);
  assert_int_equal(cache_files("", NULL, 0), entries);
  cu_function_t *fn = NULL;
  assert_ok(cu_rt_function(m, "fake_saxpy", &fn, NULL));
  void *again_ptx = NULL, *again_cubin = NULL;
  size_t again_ptx_length = 0, again_cubin_length = 0;
  cu_rt_module_images(m, &again_ptx, &again_ptx_length, &again_cubin, &again_cubin_length);
  assert_int_equal(again_ptx_length, ptx_length);
  assert_memory_equal(again_ptx, ptx, ptx_length);
  assert_null(again_cubin);
  free(again_ptx);
  cu_rt_module_release(h100, m);

  /* Images the device refuses: an sm_90 cubin on the sm_130 device, PTX
   * for sm_1xx on the H100, something that is no image. Each is compiled. */
  static const char refused_cubin[] = SAXPY("refused cubin");
  m = get_module(next, refused_cubin, cubin, cubin_length);
  assert_int_equal(stat_of("load_failures"), failures + 1);
  assert_int_equal(stat_of("loads"), loads + 2);
  assert_int_equal(cache_files("", NULL, 0), entries + 1);
  cu_rt_module_release(next, m);
  static const char refused_ptx[] = SAXPY("refused ptx");
  m = get_module(h100, refused_ptx, next_ptx, next_ptx_length);
  assert_int_equal(stat_of("load_failures"), failures + 2);
  assert_int_equal(stat_of("loads"), loads + 3);
  cu_rt_module_release(h100, m);
  static const char no_image[] = SAXPY("no image");
  m = get_module(h100, no_image, "no image", 8);
  assert_int_equal(stat_of("load_failures"), failures + 3);
  assert_int_equal(stat_of("loads"), loads + 4);
  cu_rt_module_release(h100, m);
  free(ptx);
  free(cubin);
  free(next_ptx);
}

static void buffers(void **state) {
  (void)state;
  cu_device_t *dev = &devs[0];
  const long long live = stat_of("live_allocs");
  cu_mem_t *a = NULL, *b = NULL, *empty = NULL;
  assert_ok(cu_rt_alloc(dev, 1024, &a));
  assert_ok(cu_rt_alloc(dev, 1024, &b));
  assert_ok(cu_rt_alloc(dev, 0, &empty)); /* still a distinct pointer */
  assert_int_equal(stat_of("live_allocs"), live + 3);
  float host[256], back[256];
  for (int i = 0; i < 256; ++i) host[i] = (float)i;
  assert_ok(cu_rt_write(dev, a, 0, host, sizeof host));
  memset(back, 0, sizeof back);
  assert_ok(cu_rt_read(dev, a, 0, back, sizeof back));
  assert_memory_equal(back, host, sizeof host);
  assert_ok(cu_rt_copy(dev, b, 16, a, 0, sizeof host - 16));
  assert_ok(cu_rt_read(dev, b, 16, back, sizeof host - 16));
  assert_memory_equal(back, host, sizeof host - 16);
  assert_ok(cu_rt_read(dev, a, 1020, back, 4));
  assert_true(back[0] == 255.0f);
  assert_ok(cu_rt_write(dev, empty, 0, NULL, 0));
  assert_ok(cu_rt_read(dev, empty, 0, NULL, 0));

  expect_status(cu_rt_write(dev, a, 1, host, 1024), HETC_PLUGIN_STATUS_INVALID_ARGUMENT,
                "cuda: writing 1024 bytes at offset 1 of a 1024-byte buffer");
  expect_status(cu_rt_read(dev, a, UINT64_MAX, back, 4), HETC_PLUGIN_STATUS_INVALID_ARGUMENT,
                "cuda: reading 4 bytes at offset 18446744073709551615 of a 1024-byte buffer");
  expect_status(cu_rt_read(dev, a, 0, back, 1025), HETC_PLUGIN_STATUS_INVALID_ARGUMENT,
                "cuda: reading 1025 bytes at offset 0 of a 1024-byte buffer");
  expect_status(cu_rt_copy(dev, b, 0, empty, 0, 4), HETC_PLUGIN_STATUS_INVALID_ARGUMENT,
                "cuda: copying 4 bytes at offset 0 of a 0-byte buffer");
  expect_status(cu_rt_copy(dev, b, 1021, a, 0, 4), HETC_PLUGIN_STATUS_INVALID_ARGUMENT,
                "cuda: copying 4 bytes at offset 1021 of a 1024-byte buffer");
  cu_mem_t *huge = NULL;
  expect_status(cu_rt_alloc(dev, 1ULL << 40, &huge), HETC_PLUGIN_STATUS_OUT_OF_MEMORY,
                "cuda: allocating 1099511627776 bytes on Fake H100 80GB HBM3 failed: CUDA_ERROR_OUT_OF_MEMORY (out of "
                "memory)");
  assert_null(huge);
  cu_rt_free(dev, a);
  cu_rt_free(dev, b);
  cu_rt_free(dev, empty);
  cu_rt_free(dev, NULL);
  assert_int_equal(stat_of("live_allocs"), live);
}

/* x = 0, 1, 2, ...; y = 1: returns the buffers. */
static void saxpy_buffers(cu_device_t *dev, int n, cu_mem_t **x, cu_mem_t **y) {
  float *host = malloc(sizeof(float) * (size_t)n);
  assert_non_null(host);
  assert_ok(cu_rt_alloc(dev, sizeof(float) * (uint64_t)n, x));
  assert_ok(cu_rt_alloc(dev, sizeof(float) * (uint64_t)n, y));
  for (int i = 0; i < n; ++i) host[i] = (float)i;
  assert_ok(cu_rt_write(dev, *x, 0, host, sizeof(float) * (uint64_t)n));
  for (int i = 0; i < n; ++i) host[i] = 1.0f;
  assert_ok(cu_rt_write(dev, *y, 0, host, sizeof(float) * (uint64_t)n));
  free(host);
}

static void launches_and_timing(void **state) {
  (void)state;
  cu_device_t *dev = &devs[0];
  cu_module_t *m = get_module(dev, SAXPY("launch"), NULL, 0);
  cu_function_t *fn = NULL, *same = NULL;
  cu_function_attrs_t attrs;
  assert_ok(cu_rt_function(m, "fake_saxpy", &fn, &attrs));
  assert_ok(cu_rt_function(m, "fake_saxpy", &same, NULL));
  assert_ptr_equal(fn, same);
  assert_int_equal(attrs.registers, 32);
  assert_int_equal(attrs.max_threads, 1024);
  assert_int_equal(attrs.shared_bytes, 0);
  assert_int_equal(attrs.local_bytes, 0);
  expect_status(cu_rt_function(m, "nokernel", &same, &attrs), HETC_PLUGIN_STATUS_INTERNAL,
                "cuda: the compiled module has no kernel nokernel");
  assert_null(same);

  cu_mem_t *x = NULL, *y = NULL;
  saxpy_buffers(dev, 1024, &x, &y);
  const uint32_t grid[3] = {4, 1, 1}, block[3] = {256, 1, 1};
  assert_ok(cu_check_function("fake_saxpy", &attrs, block, &dev->limits));
  cu_mem_t *args[2] = {x, y};
  const long long launches = stat_of("launches");
  assert_ok(cu_rt_launch(dev, fn, grid, block, args, 2));
  assert_ok(cu_rt_sync(dev));
  assert_int_equal(stat_of("launches"), launches + 1);
  hetc_fake_cuda_launch_t l;
  assert_int_equal(fake_last_launch(&l), 1);
  assert_string_equal(l.kernel, "fake_saxpy");
  assert_int_equal(l.device, 0);
  assert_int_equal(l.grid[0], 4);
  assert_int_equal(l.grid[1], 1);
  assert_int_equal(l.grid[2], 1);
  assert_int_equal(l.block[0], 256);
  assert_int_equal(l.block[1], 1);
  assert_int_equal(l.block[2], 1);
  assert_int_equal(l.shared_bytes, 0);
  assert_int_equal(l.num_params, 2);
  assert_true(l.params[0] != 0 && l.params[1] != 0 && l.params[0] != l.params[1]);
  float back[1024];
  assert_ok(cu_rt_read(dev, y, 0, back, sizeof back));
  for (int i = 0; i < 1024; ++i)
    if (back[i] != 1.0f + 2.0f * (float)i) fail_msg("y[%d] = %g, want %g", i, back[i], 1.0 + 2.0 * i);

  /* The marks bracket the launches between them: 3 x 250 us. */
  set("launch_us", "250");
  assert_ok(cu_rt_mark(dev, 0));
  for (int i = 0; i < 3; ++i) assert_ok(cu_rt_launch(dev, fn, grid, block, args, 2));
  assert_ok(cu_rt_mark(dev, 1));
  double seconds = 0;
  assert_ok(cu_rt_elapsed(dev, &seconds));
  assert_true(fabs(seconds - 750e-6) < 1e-9);
  assert_ok(cu_rt_mark(dev, 0));
  assert_ok(cu_rt_mark(dev, 1));
  assert_ok(cu_rt_elapsed(dev, &seconds));
  assert_true(seconds == 0);
  set("launch_us", "100");
  expect_status(cu_rt_mark(dev, 2), HETC_PLUGIN_STATUS_INTERNAL, "cuda: no timing mark 2");

  /* A block the device cannot take is the driver's error, typed as a
   * runtime failure with the launch's shape. */
  const uint32_t one[3] = {1, 1, 1}, wide[3] = {2048, 1, 1};
  expect_status(cu_rt_launch(dev, fn, one, wide, args, 2), HETC_PLUGIN_STATUS_RUNTIME_FAILED,
                "cuda: launching fake_saxpy (grid 1x1x1, block 2048x1x1) failed: CUDA_ERROR_INVALID_VALUE (invalid "
                "argument)");
  cu_mem_t *many[7] = {x, y, x, y, x, y, x};
  expect_status(cu_rt_launch(dev, fn, grid, block, many, 7), HETC_PLUGIN_STATUS_INTERNAL,
                "cuda: fake_saxpy takes 7 buffers, more than 6");
  assert_int_equal(stat_of("launches"), launches + 4);
  cu_rt_free(dev, x);
  cu_rt_free(dev, y);
  cu_rt_module_release(dev, m);
}

/* The compiled function's registers against the block: refused before
 * launching (cu_check_function), and the driver's refusal when launched
 * anyway is DEVICE_LIMITS. */
static void register_limits(void **state) {
  (void)state;
  cu_device_t *dev = &devs[0];
  const uint32_t grid[3] = {1, 1, 1}, block[3] = {1024, 1, 1}, half[3] = {512, 1, 1};
  /* 128 registers: the driver allows 512 threads. */
  set("registers", "128");
  cu_module_t *m = get_module(dev, SAXPY("128 registers"), NULL, 0);
  cu_function_t *fn = NULL;
  cu_function_attrs_t attrs;
  assert_ok(cu_rt_function(m, "fake_saxpy", &fn, &attrs));
  assert_int_equal(attrs.registers, 128);
  assert_int_equal(attrs.max_threads, 512);
  expect_status(cu_check_function("fake_saxpy", &attrs, block, &dev->limits), HETC_PLUGIN_STATUS_DEVICE_LIMITS,
                "cuda: kernel fake_saxpy uses 128 registers per thread, so a block may have at most 512 threads; this "
                "config launches 1024");
  assert_ok(cu_check_function("fake_saxpy", &attrs, half, &dev->limits));
  cu_rt_module_release(dev, m);

  /* A driver that reports no thread limit: the registers x threads check. */
  set("max_threads", "1024");
  m = get_module(dev, SAXPY("128 registers, 1024 threads"), NULL, 0);
  assert_ok(cu_rt_function(m, "fake_saxpy", &fn, &attrs));
  assert_int_equal(attrs.max_threads, 1024);
  expect_status(cu_check_function("fake_saxpy", &attrs, block, &dev->limits), HETC_PLUGIN_STATUS_DEVICE_LIMITS,
                "cuda: kernel fake_saxpy needs 128 registers x 1024 threads, more than the device's "
                "MAX_REGISTERS_PER_BLOCK of 65536");
  cu_mem_t *x = NULL, *y = NULL;
  saxpy_buffers(dev, 1024, &x, &y);
  cu_mem_t *args[2] = {x, y};
  expect_status(cu_rt_launch(dev, fn, grid, block, args, 2), HETC_PLUGIN_STATUS_DEVICE_LIMITS,
                "cuda: launching fake_saxpy (1024 threads x 128 registers; a block may use 65536) failed: "
                "CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES (too many resources requested for launch)");
  assert_ok(cu_rt_launch(dev, fn, grid, half, args, 2));
  assert_ok(cu_rt_sync(dev));
  cu_rt_free(dev, x);
  cu_rt_free(dev, y);
  cu_rt_module_release(dev, m);
  set("registers", "32");
  set("max_threads", "0");
}

/* Threads building one source end up sharing one module, and one function
 * per kernel. */
static cu_device_t *shared_dev;
static cu_module_t *got[8];
static void *get_in_thread(void *arg) {
  static const char source[] = SAXPY("threads");
  const long i = (long)arg;
  hetc_plugin_status_t s = cu_rt_module_get(shared_dev, source, strlen(source), NULL, 0, &got[i]);
  return (void *)s;
}
static void *function_in_thread(void *arg) {
  cu_function_t *fn = NULL;
  hetc_plugin_status_t s = cu_rt_function((cu_module_t *)arg, "fake_saxpy", &fn, NULL);
  return s ? NULL : fn;
}

static void concurrent_builds(void **state) {
  (void)state;
  shared_dev = &devs[0];
  const long long loaded = stat_of("live_modules");
  pthread_t threads[8];
  for (long i = 0; i < 8; ++i) assert_int_equal(pthread_create(&threads[i], NULL, get_in_thread, (void *)i), 0);
  for (int i = 0; i < 8; ++i) {
    void *s = NULL;
    pthread_join(threads[i], &s);
    if (s) fail_msg("thread %d: %s", i, message(s));
  }
  for (int i = 1; i < 8; ++i) assert_ptr_equal(got[i], got[0]);
  assert_int_equal(stat_of("live_modules"), loaded + 1);
  void *functions[8];
  for (long i = 0; i < 8; ++i) assert_int_equal(pthread_create(&threads[i], NULL, function_in_thread, got[0]), 0);
  for (int i = 0; i < 8; ++i) pthread_join(threads[i], &functions[i]);
  for (int i = 0; i < 8; ++i) {
    assert_non_null(functions[i]);
    assert_ptr_equal(functions[i], functions[0]);
  }
  for (int i = 0; i < 8; ++i) cu_rt_module_release(shared_dev, got[i]);
  assert_int_equal(stat_of("live_modules"), loaded);
  assert_int_equal(stat_of("depth"), 0);
}

/* A kernel that faults leaves its error in the context: the next
 * synchronisation reports it, and so does every later call, with the note
 * that the context stays unusable. Other devices carry on. */
static void sticky_fault(void **state) {
  (void)state;
  cu_device_t *dev = &devs[0];
  cu_module_t *m = get_module(dev, SAXPY("fault"), NULL, 0);
  cu_function_t *fn = NULL;
  assert_ok(cu_rt_function(m, "fake_saxpy", &fn, NULL));
  cu_mem_t *x = NULL, *y = NULL;
  saxpy_buffers(dev, 256, &x, &y);
  cu_mem_t *args[2] = {x, y};
  /* 1024 threads over buffers of 256 floats. */
  const uint32_t grid[3] = {4, 1, 1}, block[3] = {256, 1, 1};
  assert_ok(cu_rt_launch(dev, fn, grid, block, args, 2)); /* asynchronous */
  static const char note[] =
      "failed: CUDA_ERROR_ILLEGAL_ADDRESS (an illegal memory access was encountered); a kernel faulted and the "
      "device's context stays unusable until the process exits";
  char want[512];
  snprintf(want, sizeof want, "cuda: waiting for the kernels on Fake H100 80GB HBM3 %s", note);
  expect_status(cu_rt_sync(dev), HETC_PLUGIN_STATUS_RUNTIME_FAILED, want);
  float value;
  snprintf(want, sizeof want, "cuda: reading 4 bytes from Fake H100 80GB HBM3 %s", note);
  expect_status(cu_rt_read(dev, y, 0, &value, 4), HETC_PLUGIN_STATUS_RUNTIME_FAILED, want);
  cu_mem_t *more = NULL;
  snprintf(want, sizeof want, "cuda: allocating 16 bytes on Fake H100 80GB HBM3 %s", note);
  expect_status(cu_rt_alloc(dev, 16, &more), HETC_PLUGIN_STATUS_RUNTIME_FAILED, want);
  snprintf(want, sizeof want, "cuda: launching fake_saxpy (grid 4x1x1, block 256x1x1) %s", note);
  expect_status(cu_rt_launch(dev, fn, grid, block, args, 2), HETC_PLUGIN_STATUS_RUNTIME_FAILED, want);
  /* A module built now cannot load into the faulted context either. */
  cu_module_t *late = NULL;
  hetc_plugin_status_t s = cu_rt_module_get(dev, SAXPY("after the fault"), strlen(SAXPY("after the fault")), NULL, 0,
                                            &late);
  assert_non_null(s);
  assert_null(late);
  assert_non_null(strstr(message(s), "CUDA_ERROR_ILLEGAL_ADDRESS"));
  /* The device failed, not the kernel: the tuner must not record it as a
   * build error of this config. */
  assert_int_equal(hetc_status_code((hetc_status_t)s), HETC_PLUGIN_STATUS_RUNTIME_FAILED);
  assert_non_null(strstr(message(s), "stays unusable until the process exits"));
  hetc_status_free((hetc_status_t)s);

  /* The other device's context is its own. */
  cu_mem_t *other = NULL;
  assert_ok(cu_rt_alloc(&devs[1], 64, &other));
  assert_ok(cu_rt_write(&devs[1], other, 0, "0123456789abcdef", 16));
  char text[16];
  assert_ok(cu_rt_read(&devs[1], other, 0, text, 16));
  assert_memory_equal(text, "0123456789abcdef", 16);
  cu_rt_free(&devs[1], other);

  /* Cleaning up still frees (the driver reports the fault, ignored). */
  cu_rt_free(dev, x);
  cu_rt_free(dev, y);
  cu_rt_module_release(dev, m);
  close_devices(); /* the last release destroys the faulted context */
  open_devices();
}

/* ------------------------------------------------------------------------ */
/* The ABI table over the runtime                                           */
/* ------------------------------------------------------------------------ */

const hetc_plugin_t *hetc_plugin_query(uint32_t host_abi_major, uint32_t host_abi_minor,
                                       const hetc_plugin_host_t *host);

static hetc_plugin_tensor_t conv_inputs[1];
static hetc_plugin_workload_t conv_workload(void) {
  hetc_plugin_workload_t w;
  memset(&w, 0, sizeof(w));
  conv_inputs[0] = (hetc_plugin_tensor_t){HETC_PLUGIN_DTYPE_FLOAT32, 4, {1, 8, 16, 16}, {0, 0}};
  w.op = HETC_PLUGIN_OP_CONV2D;
  w.num_inputs = 1;
  w.inputs = conv_inputs;
  w.output = (hetc_plugin_tensor_t){HETC_PLUGIN_DTYPE_FLOAT32, 4, {1, 16, 16, 16}, {0, 0}};
  w.kernel[0] = w.kernel[1] = 3;
  w.strides[0] = w.strides[1] = 1;
  w.dilation[0] = w.dilation[1] = 1;
  for (int p = 0; p < 4; ++p) w.padding[p] = 1;
  w.groups = 1;
  w.epilogue.has_bias = 1;
  w.epilogue.activation = HETC_PLUGIN_ACT_RELU;
  return w;
}

typedef struct run_args_t {
  hetc_plugin_buffer_t *b[8];
  int32_t n;
} run_args_t;

static void alloc_args(const hetc_plugin_t *p, hetc_plugin_instance_t *inst, const hetc_plugin_workload_t *w,
                       const hetc_plugin_artifact_info_t *info, run_args_t *out) {
  uint64_t sizes[8];
  int32_t n = 0;
  for (int32_t i = 0; i < info->num_inputs; ++i)
    sizes[n++] = (uint64_t)hpc_physical_count(&w->inputs[i], info->input_layouts[i]) * 4;
  for (int32_t i = 0; i < info->num_params; ++i) sizes[n++] = info->param_bytes[i];
  sizes[n++] = (uint64_t)hpc_physical_count(&w->output, info->output_layout) * 4;
  if (info->workspace_bytes) sizes[n++] = info->workspace_bytes;
  for (int32_t i = 0; i < n; ++i) assert_ok(p->buffer_alloc(inst, 0, sizes[i], &out->b[i]));
  out->n = n;
}

static void free_args(const hetc_plugin_t *p, hetc_plugin_instance_t *inst, run_args_t *a) {
  for (int32_t i = 0; i < a->n; ++i) p->buffer_free(inst, a->b[i]);
}

static void plugin_table(void **state) {
  (void)state;
  const hetc_plugin_t *p = hetc_plugin_query(HETC_PLUGIN_ABI_MAJOR, HETC_PLUGIN_ABI_MINOR, hetc_host_services());
  assert_non_null(p);
  assert_string_equal(p->name, "cuda");
  assert_null(p->probe());
  hetc_plugin_instance_t *inst = NULL;
  assert_ok(p->instance_create(&inst));
  assert_int_equal(p->device_count(inst), 2);
  assert_string_equal(p->device_get(inst, 0)->name, "Fake H100 80GB HBM3 (sm_90, TF32 tensor cores 535.3 TFLOPS)");
  assert_null(p->device_get(inst, 2));

  hetc_plugin_workload_t w = conv_workload();
  assert_true(p->template_count(inst, 0, &w) > 0);
  hetc_plugin_artifact_t *a = NULL;
  assert_ok(p->build(inst, 0, &w, 0, NULL, &a));
  const hetc_plugin_artifact_info_t *info = p->artifact_info(a);
  printf("built %s\n", info->description);
  run_args_t args;
  alloc_args(p, inst, &w, info, &args);

  /* A run launches the artifact's kernels once each; time() runs once
   * untimed, then `number` runs per repeat between the marks. */
  long long launches = stat_of("launches");
  assert_ok(p->run(inst, a, args.b, args.n));
  const long long per_run = stat_of("launches") - launches;
  assert_true(per_run >= 1);
  hetc_fake_cuda_launch_t l;
  assert_int_equal(fake_last_launch(&l), 1);
  assert_int_equal(l.device, 0);
  assert_true(l.num_params >= 2 && l.block[0] * l.block[1] * l.block[2] >= 1);
  set("launch_us", "250");
  launches = stat_of("launches");
  double seconds[3] = {0, 0, 0};
  assert_ok(p->time(inst, a, args.b, args.n, 2, 3, seconds));
  assert_int_equal(stat_of("launches") - launches, per_run * 7);
  for (int r = 0; r < 3; ++r) assert_true(fabs(seconds[r] - (double)per_run * 250e-6) < 1e-9);
  set("launch_us", "100");
  hetc_plugin_status_t s = p->run(inst, a, args.b, args.n - 1);
  assert_non_null(s);
  assert_int_equal(hetc_status_code((hetc_status_t)s), HETC_PLUGIN_STATUS_INVALID_ARGUMENT);
  hetc_status_free((hetc_status_t)s);

  /* Emit writes the text, its PTX and the cubin. */
  char dir[] = "/tmp/hetc-cuda-package-XXXXXX";
  assert_non_null(mkdtemp(dir));
  assert_ok(p->artifact_emit(inst, a, dir, "k0"));
  char cu_path[128], ptx_path[128], cubin_path[128];
  snprintf(cu_path, sizeof cu_path, "%s/k0.cu", dir);
  snprintf(ptx_path, sizeof ptx_path, "%s/k0.ptx", dir);
  snprintf(cubin_path, sizeof cubin_path, "%s/k0.cubin", dir);
  size_t length = 0;
  char *ptx = hpc_read_file(ptx_path, &length);
  assert_non_null(ptx);
  assert_non_null(strstr(ptx, "\n.target sm_90\n"));
  free(ptx);
  char *cubin = hpc_read_file(cubin_path, &length);
  assert_non_null(cubin);
  assert_memory_equal(cubin, "\177ELF", 4);
  free(cubin);
  char *text = hpc_read_file(cu_path, &length);
  assert_non_null(text);
  p->artifact_release(inst, a);
  free_args(p, inst, &args);

  /* Load takes the cubin: nothing is compiled, so no cache entry appears. */
  clear_cache();
  const long long loads = stat_of("loads"), failures = stat_of("load_failures");
  hetc_plugin_artifact_t *b = NULL;
  assert_ok(p->artifact_load(inst, 0, &w, 0, NULL, dir, "k0", &b));
  assert_int_equal(stat_of("loads"), loads + 1);
  assert_int_equal(stat_of("load_failures"), failures);
  assert_int_equal(cache_files("", NULL, 0), 0);
  alloc_args(p, inst, &w, p->artifact_info(b), &args);
  assert_ok(p->run(inst, b, args.b, args.n));
  free_args(p, inst, &args);
  p->artifact_release(inst, b);
  /* Without the cubin, the PTX. */
  remove(cubin_path);
  assert_ok(p->artifact_load(inst, 0, &w, 0, NULL, dir, "k0", &b));
  assert_int_equal(stat_of("loads"), loads + 2);
  assert_int_equal(cache_files("", NULL, 0), 0);
  p->artifact_release(inst, b);
  /* A cubin the device refuses: compiled again. */
  write_file(cubin_path, "junk", 4);
  assert_ok(p->artifact_load(inst, 0, &w, 0, NULL, dir, "k0", &b));
  assert_int_equal(stat_of("load_failures"), failures + 1);
  assert_int_equal(cache_files("-sm_90.cubin", NULL, 0), 1);
  p->artifact_release(inst, b);
  /* Stale or missing text: refused, naming the file. */
  write_file(cu_path, text, length - 1);
  char want[256];
  snprintf(want, sizeof want, "cuda: %s was emitted for another workload, template, config or plugin version",
           cu_path);
  expect_status(p->artifact_load(inst, 0, &w, 0, NULL, dir, "k0", &b), HETC_PLUGIN_STATUS_INVALID_ARGUMENT, want);
  remove(cu_path);
  snprintf(want, sizeof want, "cuda: %s is missing or unreadable", cu_path);
  expect_status(p->artifact_load(inst, 0, &w, 0, NULL, dir, "k0", &b), HETC_PLUGIN_STATUS_INVALID_ARGUMENT, want);
  assert_null(b);
  free(text);
  remove(ptx_path);
  remove(cubin_path);
  rmdir(dir);
  p->instance_destroy(inst);
}

/* After the last close: everything the runtime made is gone, every push
 * had its pop, and no call was made without a context. */
static void nothing_leaked(void **state) {
  (void)state;
  close_devices();
  printf("fake driver: %lld loads (%lld refused), %lld launches, %lld context pushes, %lld allocations\n",
         stat_of("loads"), stat_of("load_failures"), stat_of("launches"), stat_of("pushes"), stat_of("allocs"));
  assert_int_equal(stat_of("live_allocs"), 0);
  assert_int_equal(stat_of("allocs"), stat_of("frees"));
  assert_int_equal(stat_of("live_modules"), 0);
  assert_int_equal(stat_of("loads"), stat_of("unloads"));
  assert_int_equal(stat_of("live_streams"), 0);
  assert_int_equal(stat_of("live_events"), 0);
  assert_int_equal(stat_of("retains"), stat_of("releases"));
  assert_int_equal(stat_of("pushes"), stat_of("pops"));
  assert_int_equal(stat_of("depth"), 0);
  assert_int_equal(stat_of("no_context"), 0);
  assert_int_equal(stat_of("reclaimed"), 0);
}

static void remove_tree(const char *path) {
  char command[256];
  snprintf(command, sizeof command, "rm -rf '%s'", path);
  if (system(command) != 0) fprintf(stderr, "cannot remove %s\n", path);
}

int main(void) {
  cu_host = hetc_host_services();
  const char *driver = getenv("HETC_CUDA_DRIVER_LIBRARY");
  if (!driver || !*driver) {
    printf("SKIP: HETC_CUDA_DRIVER_LIBRARY does not name the fake driver\n");
    return SKIP;
  }
  const char *why = NULL;
  if (!(nvrtc = cul_nvrtc(&why))) {
    printf("SKIP: %s\n", why);
    return SKIP;
  }
  if (!nvrtc->nvrtcGetNumSupportedArchs || !nvrtc->nvrtcGetSupportedArchs) {
    printf("SKIP: NVRTC %d.%d cannot list its architectures\n", nvrtc->major, nvrtc->minor);
    return SKIP;
  }
  void *fake = dlopen(driver, RTLD_NOW | RTLD_LOCAL);
  if (!fake) {
    printf("FAIL: %s\n", dlerror());
    return 1;
  }
  fake_set = (hetc_fake_cuda_set_fn)dlsym(fake, HETC_FAKE_CUDA_SET);
  fake_stat = (hetc_fake_cuda_stat_fn)dlsym(fake, HETC_FAKE_CUDA_STAT);
  fake_last_launch = (hetc_fake_cuda_last_launch_fn)dlsym(fake, HETC_FAKE_CUDA_LAST_LAUNCH);
  if (!fake_set || !fake_stat || !fake_last_launch) {
    printf("FAIL: %s is not the fake driver (no %s)\n", driver, HETC_FAKE_CUDA_SET);
    return 1;
  }
  /* A kernel cache of this run's own. */
  snprintf(cache_root, sizeof cache_root, "/tmp/hetc-cuda-runtime-XXXXXX");
  if (!mkdtemp(cache_root)) return 1;
  setenv("XDG_CACHE_HOME", cache_root, 1);
  snprintf(cache_dir, sizeof cache_dir, "%s/hetc/cuda", cache_root);
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(devices_and_descriptors),
      cmocka_unit_test(module_caches),
      cmocka_unit_test(package_images),
      cmocka_unit_test(buffers),
      cmocka_unit_test(launches_and_timing),
      cmocka_unit_test(register_limits),
      cmocka_unit_test(concurrent_builds),
      cmocka_unit_test(sticky_fault),
      cmocka_unit_test(plugin_table),
      cmocka_unit_test(nothing_leaked),
  };
  const int failed = cmocka_run_group_tests(tests, NULL, NULL);
  if (devs) close_devices();
  remove_tree(cache_root);
  return failed;
}
