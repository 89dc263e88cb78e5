/* plugins/cuda/rt_driver.c -- the cuda plugin's runtime on the CUDA Driver API.
 *
 * Devices: every device the driver reports whose architecture NVRTC can
 * compile for, each on its primary context (shared with any other CUDA user
 * in the process) with one stream and two timing events. The host calls from
 * any thread, so every call that needs the context pushes the device's and
 * pops it again: nothing is left current on the caller's thread.
 *
 * Ordering: the stream is a blocking one, not CU_STREAM_NON_BLOCKING. The
 * loader offers only the synchronous cuMemcpy* calls, which run on the
 * legacy default stream, and a blocking stream is ordered with that stream
 * both ways: a launch after cu_rt_write waits for the copy's DMA (a pageable
 * host-to-device copy may return before it lands) and a copy waits for the
 * launches before it, with no host-side synchronize per copy.
 *
 * Modules: keyed by a hash of the prelude, the source, the NVRTC target and
 * options and the NVRTC version; held in memory while an artifact references
 * them, and on disk in hpc_cache_dir("cuda") as <key>-<target>.cubin (or
 * .ptx where the device is newer than NVRTC and only PTX can be made). An
 * entry that fails to load (truncated, from another driver) is rebuilt. */
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cu.h"
#include "cuda_loader.h"
#include "plugin_files.h"

struct cu_rt_device_t {
  const cul_driver_t *d;
  CUdevice device;
  CUcontext context; /* the retained primary context; NULL until retained */
  CUstream stream;
  CUevent marks[2];
  char *cache_dir;      /* NULL: no disk cache */
  pthread_mutex_t lock; /* the module list and every module's function list */
  cu_module_t *modules;
};

struct cu_function_t {
  cu_function_t *next;
  CUfunction handle;
  cu_function_attrs_t attrs;
  char name[]; /* for launch errors */
};

struct cu_module_t {
  cu_module_t *next;
  cu_device_t *dev;
  uint64_t key;
  int32_t refs;
  CUmodule handle;
  char *source; /* kept to tell hash collisions apart and to make PTX for packages */
  size_t length;
  char *ptx, *cubin; /* what it was loaded from (one of them), NUL-terminated */
  size_t ptx_length, cubin_length;
  cu_function_t *functions;
};

struct cu_mem_t {
  CUdeviceptr ptr;
  uint64_t bytes;
};

HETC_PLUGIN_PRINTF(2, 3) static void note(int32_t level, const char *format, ...) {
  if (!cu_host || !cu_host->log) return;
  char text[1024];
  va_list args;
  va_start(args, format);
  vsnprintf(text, sizeof text, format, args);
  va_end(args);
  cu_host->log(level, cu_plugin_name, "%s", text);
}

/* Errors a faulting kernel leaves in the context: every later call on it
 * fails with the same error until the process exits. */
static int sticky(CUresult r) {
  return r == CUDA_ERROR_ILLEGAL_ADDRESS || r == CUDA_ERROR_LAUNCH_FAILED || r == CUDA_ERROR_ILLEGAL_INSTRUCTION ||
         r == CUDA_ERROR_MISALIGNED_ADDRESS || r == CUDA_ERROR_INVALID_PC ||
         r == CUDA_ERROR_HARDWARE_STACK_ERROR || r == CUDA_ERROR_ASSERT || r == CUDA_ERROR_LAUNCH_TIMEOUT;
}

/* "cuda: <what> failed: CUDA_ERROR_X (text)[; why every later call fails]";
 * out of memory is always OUT_OF_MEMORY. */
HETC_PLUGIN_PRINTF(4, 5)
static hetc_plugin_status_t fail(int32_t code, const cul_driver_t *d, CUresult r, const char *format, ...) {
  char what[512], error[256];
  va_list args;
  va_start(args, format);
  vsnprintf(what, sizeof what, format, args);
  va_end(args);
  if (r == CUDA_ERROR_OUT_OF_MEMORY) code = HETC_PLUGIN_STATUS_OUT_OF_MEMORY;
  return cu_status(code, "%s: %s failed: %s%s", cu_plugin_name, what, cul_error_text(d, r, error, sizeof error),
                   sticky(r) ? "; a kernel faulted and the device's context stays unusable until the process exits"
                             : "");
}

/* Push and pop the device's context around Driver API calls (see above). */
static CUresult enter(const struct cu_rt_device_t *rt) { return rt->d->cuCtxPushCurrent(rt->context); }
static void leave(const struct cu_rt_device_t *rt) {
  CUcontext popped;
  rt->d->cuCtxPopCurrent(&popped);
}
/* r = call, made with rt's context current (or the push's error). */
#define IN_CONTEXT(rt, r, call)               \
  do {                                        \
    if (((r) = enter(rt)) == CUDA_SUCCESS) {  \
      (r) = (call);                           \
      leave(rt);                              \
    }                                         \
  } while (0)

hetc_plugin_status_t cu_rt_probe(void) {
  const char *why = NULL;
  if (!cul_nvrtc(&why)) return cu_status(HETC_PLUGIN_STATUS_UNAVAILABLE, "%s: %s", cu_plugin_name, why);
  const cul_driver_t *d = cul_driver(&why);
  if (!d) return cu_status(HETC_PLUGIN_STATUS_UNAVAILABLE, "%s: %s", cu_plugin_name, why);
  int count = 0;
  CUresult r = d->cuDeviceGetCount(&count);
  if (r != CUDA_SUCCESS) return fail(HETC_PLUGIN_STATUS_UNAVAILABLE, d, r, "cuDeviceGetCount");
  if (count <= 0)
    return cu_status(HETC_PLUGIN_STATUS_UNAVAILABLE, "%s: no CUDA device (cuDeviceGetCount returned 0)",
                     cu_plugin_name);
  return NULL;
}

const char *cu_rt_prelude(void) { return hpc_gpu_dialect_cuda(); }

/* ---- devices ---- */

static int32_t attribute(const cul_driver_t *d, CUdevice device, CUdevice_attribute which) {
  int value = 0;
  return d->cuDeviceGetAttribute(&value, which, device) == CUDA_SUCCESS ? value : 0;
}

/* What NVRTC compiles for on a device of compute capability cc (80 for
 * 8.0): its cubin when NVRTC knows the architecture; else PTX for the newest
 * architecture below it, which the driver JIT-compiles (a device newer than
 * the toolkit); "" when NVRTC supports nothing that old. archs[] is
 * nvrtcGetSupportedArchs's ascending list; none (NVRTC < 11.2): trust it. */
static void pick_target(int cc, const int *archs, int num_archs, char *out, size_t size) {
  int below = 0, exact = num_archs == 0;
  for (int i = 0; i < num_archs; ++i) {
    exact |= archs[i] == cc;
    if (archs[i] <= cc && archs[i] > below) below = archs[i];
  }
  if (exact)
    snprintf(out, size, "sm_%d", cc);
  else if (below)
    snprintf(out, size, "compute_%d", below);
  else
    out[0] = 0;
}

static hetc_plugin_status_t open_device(cu_device_t *dev, const cul_driver_t *d, const cul_nvrtc_t *n,
                                        CUdevice device, const char *name, const char *target) {
  cu_limits_t *l = &dev->limits;
  l->cc_major = attribute(d, device, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR);
  l->cc_minor = attribute(d, device, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR);
  l->sm_count = attribute(d, device, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT);
  l->max_threads_per_block = attribute(d, device, CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK);
  l->max_block_dims[0] = attribute(d, device, CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X);
  l->max_block_dims[1] = attribute(d, device, CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Y);
  l->max_block_dims[2] = attribute(d, device, CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Z);
  l->max_grid_dims[0] = attribute(d, device, CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X);
  l->max_grid_dims[1] = attribute(d, device, CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Y);
  l->max_grid_dims[2] = attribute(d, device, CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Z);
  /* The static limit (48 KiB): kernels declare their shared memory
   * statically and never opt into the larger dynamic carve-out. */
  l->shared_bytes_per_block = attribute(d, device, CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK);
  l->shared_bytes_per_sm = attribute(d, device, CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR);
  l->registers_per_block = attribute(d, device, CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_BLOCK);
  l->registers_per_sm = attribute(d, device, CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_MULTIPROCESSOR);
  l->warp_size = attribute(d, device, CU_DEVICE_ATTRIBUTE_WARP_SIZE);
  l->clock_khz = attribute(d, device, CU_DEVICE_ATTRIBUTE_CLOCK_RATE);
  l->l2_bytes = attribute(d, device, CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE);
  l->memory_clock_khz = attribute(d, device, CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE);
  l->memory_bus_bits = attribute(d, device, CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH);
  size_t total = 0;
  if (d->cuDeviceTotalMem(&total, device) == CUDA_SUCCESS) l->memory_bytes = (int64_t)total;

  /* The fingerprint names the hardware and the software stack, not the
   * board: plugin.h wants identical GPUs on other machines to share tuning
   * records, which a UUID would prevent. */
  char fingerprint[512];
  snprintf(fingerprint, sizeof fingerprint, "cuda|%s|sm_%d%d|driver %d.%d|nvrtc %d.%d", name, l->cc_major,
           l->cc_minor, d->version / 1000, d->version % 1000 / 10, n->major, n->minor);
  dev->name = strdup(name);
  dev->arch = strdup(target);
  dev->fingerprint = strdup(fingerprint);
  struct cu_rt_device_t *rt = calloc(1, sizeof *rt);
  if (!dev->name || !dev->arch || !dev->fingerprint || !rt) {
    free(rt);
    return cu_status(HETC_PLUGIN_STATUS_OUT_OF_MEMORY, "%s: out of memory", cu_plugin_name);
  }
  dev->rt = rt;
  rt->d = d;
  rt->device = device;
  pthread_mutex_init(&rt->lock, NULL);
  CUresult r = d->cuDevicePrimaryCtxRetain(&rt->context, device);
  if (r != CUDA_SUCCESS) {
    rt->context = NULL;
    return fail(HETC_PLUGIN_STATUS_UNAVAILABLE, d, r, "opening %s (cuDevicePrimaryCtxRetain)", name);
  }
  if ((r = enter(rt)) == CUDA_SUCCESS) {
    r = d->cuStreamCreate(&rt->stream, CU_STREAM_DEFAULT);
    for (int i = 0; i < 2 && r == CUDA_SUCCESS; ++i) r = d->cuEventCreate(&rt->marks[i], CU_EVENT_DEFAULT);
    leave(rt);
  }
  if (r != CUDA_SUCCESS) return fail(HETC_PLUGIN_STATUS_UNAVAILABLE, d, r, "creating a stream on %s", name);
  rt->cache_dir = hpc_cache_dir("cuda");
  if (!rt->cache_dir) note(HETC_PLUGIN_LOG_WARNING, "no kernel cache directory; kernels are rebuilt in every process");
  cu_device_describe(dev);
  return NULL;
}

static void module_destroy(struct cu_rt_device_t *rt, cu_module_t *m);

static void close_device(cu_device_t *dev) {
  struct cu_rt_device_t *rt = dev->rt;
  if (rt) {
    /* Modules an artifact never released still hold code on the device. */
    while (rt->modules) {
      cu_module_t *m = rt->modules;
      rt->modules = m->next;
      module_destroy(rt, m);
    }
    if (rt->context) {
      if (enter(rt) == CUDA_SUCCESS) {
        for (int i = 0; i < 2; ++i)
          if (rt->marks[i]) rt->d->cuEventDestroy(rt->marks[i]);
        if (rt->stream) rt->d->cuStreamDestroy(rt->stream);
        leave(rt);
      }
      rt->d->cuDevicePrimaryCtxRelease(rt->device);
    }
    pthread_mutex_destroy(&rt->lock);
    free(rt->cache_dir);
    free(rt);
  }
  free(dev->name);
  free(dev->arch);
  free(dev->fingerprint);
}

hetc_plugin_status_t cu_rt_devices_open(cu_device_t **out, int32_t *out_count) {
  *out = NULL;
  *out_count = 0;
  hetc_plugin_status_t s = cu_rt_probe();
  if (s) return s;
  const cul_driver_t *d = cul_driver(NULL);
  const cul_nvrtc_t *n = cul_nvrtc(NULL);
  int count = 0, archs[128], num_archs = 0;
  d->cuDeviceGetCount(&count);
  if (n->nvrtcGetNumSupportedArchs && n->nvrtcGetSupportedArchs &&
      (n->nvrtcGetNumSupportedArchs(&num_archs) != NVRTC_SUCCESS || num_archs < 0 || num_archs > 128 ||
       n->nvrtcGetSupportedArchs(archs) != NVRTC_SUCCESS))
    num_archs = 0;
  cu_device_t *devices = calloc((size_t)count, sizeof *devices);
  if (!devices) return cu_status(HETC_PLUGIN_STATUS_OUT_OF_MEMORY, "%s: out of memory", cu_plugin_name);
  char skipped[512] = "";
  int32_t used = 0;
  for (int i = 0; i < count && !s; ++i) {
    CUdevice device;
    char name[256] = "", target[24];
    CUresult r = d->cuDeviceGet(&device, i);
    if (r == CUDA_SUCCESS) r = d->cuDeviceGetName(name, sizeof name, device);
    if (r != CUDA_SUCCESS) {
      s = fail(HETC_PLUGIN_STATUS_UNAVAILABLE, d, r, "querying CUDA device %d", i);
      break;
    }
    const int cc = 10 * attribute(d, device, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR) +
                   attribute(d, device, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR);
    pick_target(cc, archs, num_archs, target, sizeof target);
    if (!target[0]) {
      snprintf(skipped, sizeof skipped, "device %d (%s, sm_%d) is too old for NVRTC %d.%d (oldest: sm_%d)", i,
               name, cc, n->major, n->minor, num_archs ? archs[0] : 0);
      note(HETC_PLUGIN_LOG_WARNING, "%s; skipped", skipped);
      continue;
    }
    if (target[0] == 'c')
      note(HETC_PLUGIN_LOG_WARNING, "NVRTC %d.%d cannot compile for %s (sm_%d); its kernels are %s PTX, "
           "compiled by the driver", n->major, n->minor, name, cc, target);
    s = open_device(&devices[used++], d, n, device, name, target);
  }
  if (!s && used == 0) s = cu_status(HETC_PLUGIN_STATUS_UNAVAILABLE, "%s: %s", cu_plugin_name, skipped);
  if (s) {
    cu_rt_devices_close(devices, used);
    return s;
  }
  *out = devices;
  *out_count = used;
  return NULL;
}

void cu_rt_devices_close(cu_device_t *devices, int32_t count) {
  if (!devices) return;
  for (int32_t i = 0; i < count; ++i) close_device(&devices[i]);
  free(devices);
}

/* ---- modules ---- */

static uint64_t module_key(const cu_device_t *dev, const char *source, size_t length) {
  const cul_nvrtc_t *n = cul_nvrtc(NULL);
  const char *prelude = hpc_gpu_dialect_cuda();
  char tag[96];
  snprintf(tag, sizeof tag, "|%s|%s|nvrtc %d.%d", dev->arch, cu_nvrtc_options, n ? n->major : 0, n ? n->minor : 0);
  uint64_t h = hpc_fnv1a64(prelude, strlen(prelude), HPC_FNV1A64_INIT);
  h = hpc_fnv1a64(source, length, h);
  return hpc_fnv1a64(tag, strlen(tag), h);
}

static int is_cubin(const char *code, size_t length) { return length >= 4 && memcmp(code, "\177ELF", 4) == 0; }

/* A referenced module with this source, or NULL; the caller holds the lock. */
static cu_module_t *find_module(struct cu_rt_device_t *rt, uint64_t key, const char *source, size_t length) {
  for (cu_module_t *m = rt->modules; m; m = m->next)
    if (m->key == key && m->length == length && memcmp(m->source, source, length) == 0) return m;
  return NULL;
}

/* Loads code (NUL-terminated: PTX is read as a string) into m, which owns
 * it on success; the JIT's error log goes to log. */
static CUresult load(cu_module_t *m, char *code, size_t length, char *log, size_t log_size) {
  struct cu_rt_device_t *rt = m->dev->rt;
  CUjit_option keys[] = {CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES};
  void *values[] = {log, (void *)(uintptr_t)log_size};
  log[0] = 0;
  CUresult r;
  IN_CONTEXT(rt, r, rt->d->cuModuleLoadDataEx(&m->handle, code, 2, keys, values));
  if (r != CUDA_SUCCESS) return r;
  if (is_cubin(code, length)) {
    m->cubin = code;
    m->cubin_length = length;
  } else {
    m->ptx = code;
    m->ptx_length = length;
  }
  return CUDA_SUCCESS;
}

static void module_destroy(struct cu_rt_device_t *rt, cu_module_t *m) {
  CUresult r;
  if (m->handle) IN_CONTEXT(rt, r, rt->d->cuModuleUnload(m->handle));
  while (m->functions) {
    cu_function_t *f = m->functions;
    m->functions = f->next;
    free(f);
  }
  free(m->source);
  free(m->ptx);
  free(m->cubin);
  free(m);
}

hetc_plugin_status_t cu_rt_module_get(cu_device_t *dev, const char *source, size_t length, const void *image,
                                      size_t image_length, cu_module_t **out) {
  *out = NULL;
  struct cu_rt_device_t *rt = dev->rt;
  const uint64_t key = module_key(dev, source, length);
  pthread_mutex_lock(&rt->lock);
  cu_module_t *m = find_module(rt, key, source, length);
  if (m) ++m->refs;
  pthread_mutex_unlock(&rt->lock);
  if ((*out = m)) return NULL;

  /* Everything below runs outside the lock: builds are the tuner's
   * parallel stage. Two threads building one source both succeed, and the
   * second adopts the first's module. */
  m = calloc(1, sizeof *m);
  if (m) m->source = malloc(length + 1);
  if (!m || !m->source) {
    free(m);
    return cu_status(HETC_PLUGIN_STATUS_OUT_OF_MEMORY, "%s: out of memory", cu_plugin_name);
  }
  memcpy(m->source, source, length);
  m->source[length] = 0;
  m->length = length;
  m->dev = dev;
  m->key = key;
  m->refs = 1;
  char log[4096];
  int loaded = 0;
  /* A package's image may be for another GPU or driver: then compile. */
  if (image && image_length) {
    char *copy = malloc(image_length + 1);
    if (copy) {
      memcpy(copy, image, image_length);
      copy[image_length] = 0;
      loaded = load(m, copy, image_length, log, sizeof log) == CUDA_SUCCESS;
      if (!loaded) {
        free(copy);
        note(HETC_PLUGIN_LOG_DEBUG, "the package's kernel image does not load on %s; compiling the source",
             dev->name);
      }
    }
  }
  const int cubin = strncmp(dev->arch, "sm_", 3) == 0;
  char path[4200] = "";
  if (rt->cache_dir)
    snprintf(path, sizeof path, "%s/%016llx-%s.%s", rt->cache_dir, (unsigned long long)key, dev->arch,
             cubin ? "cubin" : "ptx");
  if (!loaded && path[0]) {
    size_t n = 0;
    char *cached = hpc_read_file(path, &n);
    loaded = cached && load(m, cached, n, log, sizeof log) == CUDA_SUCCESS;
    if (cached && !loaded) free(cached);
  }
  hetc_plugin_status_t s = NULL;
  if (!loaded) {
    void *code = NULL;
    size_t n = 0;
    s = cu_nvrtc_compile(source, length, dev->arch, &code, &n);
    CUresult r = s ? CUDA_SUCCESS : load(m, code, n, log, sizeof log);
    if (r != CUDA_SUCCESS) {
      free(code);
      /* Code from an NVRTC newer than the driver fails here, not in NVRTC. */
      const cul_nvrtc_t *nv = cul_nvrtc(NULL);
      char error[256];
      /* After a kernel fault every call fails: that is the device's
       * failure, not this kernel's. */
      if (sticky(r))
        s = fail(HETC_PLUGIN_STATUS_RUNTIME_FAILED, rt->d, r, "loading the compiled kernels on %s", dev->name);
      else
        s = cu_status(r == CUDA_ERROR_OUT_OF_MEMORY ? HETC_PLUGIN_STATUS_OUT_OF_MEMORY : HETC_PLUGIN_STATUS_BUILD_FAILED,
                      "%s: loading the compiled kernels (%s, %zu bytes) on %s failed: %s%s; JIT log: %s", cu_plugin_name,
                      dev->arch, n, dev->name, cul_error_text(rt->d, r, error, sizeof error),
                      nv && nv->major * 1000 + nv->minor * 10 > rt->d->version ? " (NVRTC is newer than the driver)" : "",
                      log[0] ? log : "(empty)");
    } else if (!s && path[0] && hetc_kit_write_file_atomic(path, code, n) != 0) {
      note(HETC_PLUGIN_LOG_DEBUG, "cannot write the kernel cache entry %s", path); /* costs only a rebuild */
    }
  }
  if (s) {
    module_destroy(rt, m);
    return s;
  }
  pthread_mutex_lock(&rt->lock);
  cu_module_t *other = find_module(rt, key, source, length);
  if (other) {
    ++other->refs;
  } else {
    m->next = rt->modules;
    rt->modules = m;
  }
  pthread_mutex_unlock(&rt->lock);
  if (other) module_destroy(rt, m);
  *out = other ? other : m;
  return NULL;
}

void cu_rt_module_release(cu_device_t *dev, cu_module_t *module) {
  if (!module) return;
  struct cu_rt_device_t *rt = dev->rt;
  pthread_mutex_lock(&rt->lock);
  /* The last artifact gone, the module goes: a tuning run builds thousands
   * of configs once each, and the disk cache serves the rebuilds. */
  const int last = --module->refs == 0;
  if (last) {
    cu_module_t **link = &rt->modules;
    while (*link && *link != module) link = &(*link)->next;
    if (*link) *link = module->next;
  }
  pthread_mutex_unlock(&rt->lock);
  if (last) module_destroy(rt, module);
}

hetc_plugin_status_t cu_rt_function(cu_module_t *module, const char *name, cu_function_t **out,
                                    cu_function_attrs_t *attrs) {
  static const CUfunction_attribute which[4] = {CU_FUNC_ATTRIBUTE_NUM_REGS, CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK,
                                                CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES,
                                                CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES};
  *out = NULL;
  struct cu_rt_device_t *rt = module->dev->rt;
  CUresult r = CUDA_SUCCESS;
  /* Under the lock (a lookup takes microseconds), so that the artifacts
   * sharing a module share one entry per kernel. */
  pthread_mutex_lock(&rt->lock);
  cu_function_t *f = module->functions;
  while (f && strcmp(f->name, name) != 0) f = f->next;
  if (!f && (f = calloc(1, sizeof *f + strlen(name) + 1))) {
    strcpy(f->name, name);
    int v[4] = {0, 0, 0, 0};
    if ((r = enter(rt)) == CUDA_SUCCESS) {
      r = rt->d->cuModuleGetFunction(&f->handle, module->handle, name);
      for (int i = 0; i < 4 && r == CUDA_SUCCESS; ++i) r = rt->d->cuFuncGetAttribute(&v[i], which[i], f->handle);
      leave(rt);
    }
    if (r == CUDA_SUCCESS) {
      f->attrs = (cu_function_attrs_t){v[0], v[1], v[2], v[3]};
      f->next = module->functions;
      module->functions = f;
    } else {
      free(f);
      f = NULL;
    }
  }
  pthread_mutex_unlock(&rt->lock);
  /* Not found: the emitter named a kernel its text does not define. */
  if (r == CUDA_ERROR_NOT_FOUND)
    return cu_status(HETC_PLUGIN_STATUS_INTERNAL, "%s: the compiled module has no kernel %s", cu_plugin_name, name);
  if (r != CUDA_SUCCESS) return fail(HETC_PLUGIN_STATUS_RUNTIME_FAILED, rt->d, r, "looking up kernel %s", name);
  if (!f) return cu_status(HETC_PLUGIN_STATUS_OUT_OF_MEMORY, "%s: out of memory", cu_plugin_name);
  if (attrs) *attrs = f->attrs;
  *out = f;
  return NULL;
}

static void *duplicate(const char *data, size_t length, size_t *out_length) {
  char *copy = data ? malloc(length + 1) : NULL;
  if (!copy) return NULL;
  memcpy(copy, data, length);
  copy[length] = 0;
  *out_length = length;
  return copy;
}

void cu_rt_module_images(const cu_module_t *module, void **ptx, size_t *ptx_length, void **binary,
                         size_t *binary_length) {
  *ptx = *binary = NULL;
  *ptx_length = *binary_length = 0;
  *binary = duplicate(module->cubin, module->cubin_length, binary_length);
  if (module->ptx) {
    *ptx = duplicate(module->ptx, module->ptx_length, ptx_length);
    return;
  }
  /* Builds make cubins only (they are the tuner's hot path); the PTX that
   * lets a package run on newer GPUs is compiled here, once per artifact
   * packaged, for the device's own architecture. */
  const char *arch = module->dev->arch;
  char target[32];
  snprintf(target, sizeof target, "compute_%s", strchr(arch, '_') ? strchr(arch, '_') + 1 : arch);
  hetc_plugin_status_t s = cu_nvrtc_compile(module->source, module->length, target, ptx, ptx_length);
  if (s && cu_host) {
    note(HETC_PLUGIN_LOG_WARNING, "the package gets no PTX: %s", cu_host->status_message(s));
    cu_host->status_free(s);
  }
}

/* ---- memory ---- */

hetc_plugin_status_t cu_rt_alloc(cu_device_t *dev, uint64_t bytes, cu_mem_t **out) {
  *out = NULL;
  struct cu_rt_device_t *rt = dev->rt;
  cu_mem_t *mem = calloc(1, sizeof *mem);
  if (!mem) return cu_status(HETC_PLUGIN_STATUS_OUT_OF_MEMORY, "%s: out of memory", cu_plugin_name);
  /* An empty buffer still gets a valid, distinct pointer to pass to kernels. */
  CUresult r;
  IN_CONTEXT(rt, r, rt->d->cuMemAlloc(&mem->ptr, bytes ? (size_t)bytes : 4));
  if (r != CUDA_SUCCESS) {
    free(mem);
    return fail(HETC_PLUGIN_STATUS_RUNTIME_FAILED, rt->d, r, "allocating %llu bytes on %s",
                (unsigned long long)bytes, dev->name);
  }
  mem->bytes = bytes;
  *out = mem;
  return NULL;
}

void cu_rt_free(cu_device_t *dev, cu_mem_t *mem) {
  if (!mem) return;
  CUresult r;
  IN_CONTEXT(dev->rt, r, dev->rt->d->cuMemFree(mem->ptr));
  free(mem);
}

static hetc_plugin_status_t check_range(const cu_mem_t *mem, uint64_t offset, uint64_t bytes, const char *what) {
  if (bytes <= mem->bytes && offset <= mem->bytes - bytes) return NULL;
  return cu_status(HETC_PLUGIN_STATUS_INVALID_ARGUMENT, "%s: %s %llu bytes at offset %llu of a %llu-byte buffer",
                   cu_plugin_name, what, (unsigned long long)bytes, (unsigned long long)offset,
                   (unsigned long long)mem->bytes);
}

/* The copies run on the legacy default stream, ordered with the device's
 * blocking stream (see the header comment). */
hetc_plugin_status_t cu_rt_write(cu_device_t *dev, cu_mem_t *mem, uint64_t offset, const void *src, uint64_t bytes) {
  hetc_plugin_status_t s = check_range(mem, offset, bytes, "writing");
  if (s || bytes == 0) return s;
  CUresult r;
  IN_CONTEXT(dev->rt, r, dev->rt->d->cuMemcpyHtoD(mem->ptr + offset, src, bytes));
  return r ? fail(HETC_PLUGIN_STATUS_RUNTIME_FAILED, dev->rt->d, r, "writing %llu bytes to %s",
                  (unsigned long long)bytes, dev->name)
           : NULL;
}

hetc_plugin_status_t cu_rt_read(cu_device_t *dev, const cu_mem_t *mem, uint64_t offset, void *dst, uint64_t bytes) {
  hetc_plugin_status_t s = check_range(mem, offset, bytes, "reading");
  if (s || bytes == 0) return s;
  CUresult r;
  IN_CONTEXT(dev->rt, r, dev->rt->d->cuMemcpyDtoH(dst, mem->ptr + offset, bytes));
  return r ? fail(HETC_PLUGIN_STATUS_RUNTIME_FAILED, dev->rt->d, r, "reading %llu bytes from %s",
                  (unsigned long long)bytes, dev->name)
           : NULL;
}

hetc_plugin_status_t cu_rt_copy(cu_device_t *dev, cu_mem_t *dst, uint64_t dst_offset, const cu_mem_t *src,
                                uint64_t src_offset, uint64_t bytes) {
  hetc_plugin_status_t s = check_range(dst, dst_offset, bytes, "copying");
  if (!s) s = check_range(src, src_offset, bytes, "copying");
  if (s || bytes == 0) return s;
  CUresult r;
  IN_CONTEXT(dev->rt, r, dev->rt->d->cuMemcpyDtoD(dst->ptr + dst_offset, src->ptr + src_offset, (size_t)bytes));
  return r ? fail(HETC_PLUGIN_STATUS_RUNTIME_FAILED, dev->rt->d, r, "copying %llu bytes on %s",
                  (unsigned long long)bytes, dev->name)
           : NULL;
}

/* ---- launches and timing ---- */

hetc_plugin_status_t cu_rt_launch(cu_device_t *dev, cu_function_t *fn, const uint32_t grid[3], const uint32_t block[3],
                                  cu_mem_t *const *args, int32_t num_args) {
  struct cu_rt_device_t *rt = dev->rt;
  if (num_args < 0 || num_args > CU_MAX_LAUNCH_ARGS)
    return cu_status(HETC_PLUGIN_STATUS_INTERNAL, "%s: %s takes %d buffers, more than %d", cu_plugin_name,
                     fn->name, num_args, CU_MAX_LAUNCH_ARGS);
  /* cuLaunchKernel reads each argument through a pointer to its value. */
  CUdeviceptr pointers[CU_MAX_LAUNCH_ARGS];
  void *params[CU_MAX_LAUNCH_ARGS];
  for (int32_t i = 0; i < num_args; ++i) {
    pointers[i] = args[i]->ptr;
    params[i] = &pointers[i];
  }
  CUresult r;
  IN_CONTEXT(rt, r,
             rt->d->cuLaunchKernel(fn->handle, grid[0], grid[1], grid[2], block[0], block[1], block[2], 0,
                                   rt->stream, num_args ? params : NULL, NULL));
  if (r == CUDA_SUCCESS) return NULL;
  /* Too many registers for the block is a property of the config. */
  const uint64_t threads = (uint64_t)block[0] * block[1] * block[2];
  if (r == CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES)
    return fail(HETC_PLUGIN_STATUS_DEVICE_LIMITS, rt->d, r,
                "launching %s (%llu threads x %d registers; a block may use %d)", fn->name,
                (unsigned long long)threads, fn->attrs.registers, dev->limits.registers_per_block);
  return fail(HETC_PLUGIN_STATUS_RUNTIME_FAILED, rt->d, r, "launching %s (grid %ux%ux%u, block %ux%ux%u)", fn->name,
              grid[0], grid[1], grid[2], block[0], block[1], block[2]);
}

hetc_plugin_status_t cu_rt_mark(cu_device_t *dev, int32_t which) {
  struct cu_rt_device_t *rt = dev->rt;
  if (which != 0 && which != 1)
    return cu_status(HETC_PLUGIN_STATUS_INTERNAL, "%s: no timing mark %d", cu_plugin_name, which);
  CUresult r;
  IN_CONTEXT(rt, r, rt->d->cuEventRecord(rt->marks[which], rt->stream));
  return r ? fail(HETC_PLUGIN_STATUS_RUNTIME_FAILED, rt->d, r, "recording a timing event on %s", dev->name) : NULL;
}

hetc_plugin_status_t cu_rt_elapsed(cu_device_t *dev, double *seconds) {
  struct cu_rt_device_t *rt = dev->rt;
  float milliseconds = 0;
  *seconds = 0;
  CUresult r;
  IN_CONTEXT(rt, r, rt->d->cuEventSynchronize(rt->marks[1]));
  if (r == CUDA_SUCCESS) IN_CONTEXT(rt, r, rt->d->cuEventElapsedTime(&milliseconds, rt->marks[0], rt->marks[1]));
  if (r != CUDA_SUCCESS)
    return fail(HETC_PLUGIN_STATUS_RUNTIME_FAILED, rt->d, r, "timing the kernels on %s", dev->name);
  *seconds = milliseconds * 1e-3;
  return NULL;
}

hetc_plugin_status_t cu_rt_sync(cu_device_t *dev) {
  struct cu_rt_device_t *rt = dev->rt;
  CUresult r;
  IN_CONTEXT(rt, r, rt->d->cuStreamSynchronize(rt->stream));
  return r ? fail(HETC_PLUGIN_STATUS_RUNTIME_FAILED, rt->d, r, "waiting for the kernels on %s", dev->name) : NULL;
}
