/* tests/plugins/cuda/fake_libcuda.c -- a fake CUDA driver (libcuda.so.1) for
 * testing the cuda plugin's runtime on machines without a GPU.
 *
 * It exports every Driver API function plugins/cuda/cuda_loader.c resolves,
 * under the names <cuda.h> maps them to, and behaves like the driver where
 * the plugin depends on it:
 *   - device calls fail with CUDA_ERROR_NOT_INITIALIZED before cuInit;
 *   - every context-bound call fails with CUDA_ERROR_INVALID_CONTEXT unless
 *     a retained context is current on the calling thread (and is counted,
 *     so a test can assert that the runtime never does that);
 *   - device memory is host memory; copies are checked against the live
 *     allocations (CUDA_ERROR_INVALID_VALUE outside them) and allocations
 *     beyond the device's memory fail with CUDA_ERROR_OUT_OF_MEMORY;
 *   - cuModuleLoadDataEx takes what NVRTC makes: a cubin (ELF, EM_CUDA)
 *     whose architecture the device runs (same major, minor not above the
 *     device's; CUDA_ERROR_NO_BINARY_FOR_GPU otherwise), or PTX text whose
 *     .target the device runs and whose .version the driver knows
 *     (CUDA_ERROR_INVALID_PTX / CUDA_ERROR_UNSUPPORTED_PTX_VERSION, the
 *     latter only with HETC_FAKE_CUDA_DRIVER_VERSION set), with a JIT log;
 *     anything else is CUDA_ERROR_INVALID_IMAGE;
 *   - cuModuleGetFunction finds `.entry <name>(` in PTX or `.text.<name>`
 *     in a cubin, and reads the parameter count from either;
 *   - launches check the block against the device and the function's
 *     registers (CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES when registers x threads
 *     exceed the block's), are recorded, and advance the stream's simulated
 *     clock, which events read, so timings are exact; kernel fake_saxpy runs
 *     on the host (fake_libcuda.h), and faults its context when it reaches
 *     outside its buffers: every later call on that context then fails with
 *     the sticky CUDA_ERROR_ILLEGAL_ADDRESS until its last release.
 * Behaviours are chosen by environment variables and test controls
 * (fake_libcuda.h). */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* memmem */
#endif
#include <cuda.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fake_libcuda.h"

#define API __attribute__((visibility("default")))

/* ------------------------------------------------------------------------ */
/* State                                                                    */
/* ------------------------------------------------------------------------ */

#define MAX_DEVICES 8
#define MAX_DEPTH 16

typedef struct fake_context_t {
  int device;
  int retains;
  CUresult sticky; /* CUDA_SUCCESS, or the fault every later call returns */
} fake_context_t;

typedef struct fake_alloc_t {
  struct fake_alloc_t *next;
  fake_context_t *context;
  char *base;
  size_t bytes;
} fake_alloc_t;

typedef struct fake_function_t {
  struct fake_function_t *next;
  struct fake_module_t *module;
  int registers, max_threads, num_params;
  char name[64];
} fake_function_t;

typedef struct fake_module_t {
  struct fake_module_t *next;
  fake_context_t *context;
  int cubin;
  char *image;
  size_t length;
  fake_function_t *functions;
} fake_module_t;

typedef struct fake_stream_t {
  struct fake_stream_t *next;
  fake_context_t *context;
  unsigned long long clock_us; /* simulated: launches advance it */
} fake_stream_t;

typedef struct fake_event_t {
  struct fake_event_t *next;
  fake_context_t *context;
  int recorded;
  unsigned long long at_us;
} fake_event_t;

typedef struct fake_counters_t {
  long long loads, load_failures, unloads, allocs, frees, launches, pushes, pops, no_context, retains, releases,
      reclaimed;
} fake_counters_t;

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_once_t once = PTHREAD_ONCE_INIT;
static char mode[32] = "ok";
static int driver_version = 13000;
/* Whether PTX newer than the driver's version is refused: only for a
 * version set explicitly, so that a newer NVRTC does not break the tests. */
static int check_ptx_version;
static int initialized;
static int ccs[MAX_DEVICES], num_ccs;
static int registers = 32, max_threads_override, launch_us = 100;
static CUresult fail_next_launch, fault_next_launch;
static fake_context_t contexts[MAX_DEVICES];
static fake_alloc_t *allocs;
static fake_module_t *modules;
static fake_stream_t *streams;
static fake_event_t *events;
static fake_counters_t counters;
static hetc_fake_cuda_launch_t last_launch;
static int launched;
/* The legacy default stream's clock (stream 0). */
static unsigned long long default_clock_us;

static __thread fake_context_t *stack[MAX_DEPTH];
static __thread int depth;

static void parse_devices(const char *text) {
  num_ccs = 0;
  for (const char *p = text; p && *p && num_ccs < MAX_DEVICES;) {
    ccs[num_ccs++] = atoi(p);
    p = strchr(p, ',');
    if (p) ++p;
  }
}

static void configure(void) {
  const char *v;
  if ((v = getenv("HETC_FAKE_CUDA")) && *v) snprintf(mode, sizeof mode, "%s", v);
  if (!strcmp(mode, "old_driver")) driver_version = 10020;
  if ((v = getenv("HETC_FAKE_CUDA_DRIVER_VERSION")) && *v) {
    driver_version = atoi(v);
    check_ptx_version = 1;
  }
  parse_devices((v = getenv("HETC_FAKE_CUDA_DEVICES")) && *v ? v : "90");
  if ((v = getenv("HETC_FAKE_CUDA_REGISTERS")) && *v) registers = atoi(v);
  if ((v = getenv("HETC_FAKE_CUDA_LAUNCH_US")) && *v) launch_us = atoi(v);
}

static void start(void) { pthread_once(&once, configure); }

/* ------------------------------------------------------------------------ */
/* Devices                                                                  */
/* ------------------------------------------------------------------------ */

typedef struct fake_board_t {
  int cc;
  const char *name;
  int sm_count, clock_khz, memory_clock_khz, bus_bits, shared_per_sm;
  long long l2_bytes, memory_bytes;
} fake_board_t;

static const fake_board_t boards[] = {
    {75, "Fake Tesla T4", 40, 1590000, 5001000, 256, 65536, 4194304, 15655829504LL},
    {80, "Fake A100-SXM4-40GB", 108, 1410000, 1215000, 5120, 167936, 41943040, 42505273344LL},
    {86, "Fake GeForce RTX 3090", 82, 1695000, 9751000, 384, 102400, 6291456, 25438126080LL},
    {90, "Fake H100 80GB HBM3", 132, 1980000, 2619000, 5120, 233472, 52428800, 85028896768LL},
};

static fake_board_t board_of(int cc) {
  for (size_t i = 0; i < sizeof boards / sizeof boards[0]; ++i)
    if (boards[i].cc == cc) return boards[i];
  /* Another architecture: a small generic part. */
  return (fake_board_t){cc, NULL, 16, 1000000, 1000000, 256, 65536, 2097152, 8589934592LL};
}

static CUresult device_ready(CUdevice device) {
  if (!initialized) return CUDA_ERROR_NOT_INITIALIZED;
  if (device < 0 || device >= num_ccs) return CUDA_ERROR_INVALID_DEVICE;
  return CUDA_SUCCESS;
}

API CUresult cuInit(unsigned int flags) {
  start();
  if (flags != 0) return CUDA_ERROR_INVALID_VALUE;
  if (!strcmp(mode, "no_device")) return CUDA_ERROR_NO_DEVICE;
  initialized = 1;
  return CUDA_SUCCESS;
}

API CUresult cuDriverGetVersion(int *version) {
  start();
  if (!version) return CUDA_ERROR_INVALID_VALUE;
  *version = driver_version;
  return CUDA_SUCCESS;
}

typedef struct fake_error_t {
  CUresult code;
  const char *name, *text;
} fake_error_t;

#define E(code, text) {code, #code, text}
static const fake_error_t errors[] = {
    E(CUDA_SUCCESS, "no error"),
    E(CUDA_ERROR_INVALID_VALUE, "invalid argument"),
    E(CUDA_ERROR_OUT_OF_MEMORY, "out of memory"),
    E(CUDA_ERROR_NOT_INITIALIZED, "initialization error"),
    E(CUDA_ERROR_NO_DEVICE, "no CUDA-capable device is detected"),
    E(CUDA_ERROR_INVALID_DEVICE, "invalid device ordinal"),
    E(CUDA_ERROR_INVALID_IMAGE, "device kernel image is invalid"),
    E(CUDA_ERROR_INVALID_CONTEXT, "invalid device context"),
    E(CUDA_ERROR_NO_BINARY_FOR_GPU, "no kernel image is available for execution on the device"),
    E(CUDA_ERROR_INVALID_PTX, "a PTX JIT compilation failed"),
    E(CUDA_ERROR_UNSUPPORTED_PTX_VERSION, "the provided PTX was compiled with an unsupported toolchain."),
    E(CUDA_ERROR_INVALID_HANDLE, "invalid resource handle"),
    E(CUDA_ERROR_NOT_FOUND, "named symbol not found"),
    E(CUDA_ERROR_ILLEGAL_ADDRESS, "an illegal memory access was encountered"),
    E(CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES, "too many resources requested for launch"),
    E(CUDA_ERROR_LAUNCH_FAILED, "unspecified launch failure"),
};
#undef E

static const fake_error_t *error_of(CUresult r) {
  for (size_t i = 0; i < sizeof errors / sizeof errors[0]; ++i)
    if (errors[i].code == r) return &errors[i];
  return NULL;
}

API CUresult cuGetErrorName(CUresult error, const char **name) {
  const fake_error_t *e = error_of(error);
  if (!name) return CUDA_ERROR_INVALID_VALUE;
  *name = e ? e->name : NULL;
  return e ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

API CUresult cuGetErrorString(CUresult error, const char **text) {
  const fake_error_t *e = error_of(error);
  if (!text) return CUDA_ERROR_INVALID_VALUE;
  *text = e ? e->text : NULL;
  return e ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

API CUresult cuDeviceGetCount(int *count) {
  if (!initialized) return CUDA_ERROR_NOT_INITIALIZED;
  if (!count) return CUDA_ERROR_INVALID_VALUE;
  pthread_mutex_lock(&lock);
  *count = strcmp(mode, "zero_devices") ? num_ccs : 0;
  pthread_mutex_unlock(&lock);
  return CUDA_SUCCESS;
}

API CUresult cuDeviceGet(CUdevice *device, int ordinal) {
  CUresult r = device_ready(ordinal);
  if (r) return r;
  if (!device) return CUDA_ERROR_INVALID_VALUE;
  *device = ordinal;
  return CUDA_SUCCESS;
}

API CUresult cuDeviceGetName(char *name, int length, CUdevice device) {
  CUresult r = device_ready(device);
  if (r) return r;
  if (!name || length <= 0) return CUDA_ERROR_INVALID_VALUE;
  const fake_board_t b = board_of(ccs[device]);
  if (b.name)
    snprintf(name, (size_t)length, "%s", b.name);
  else
    snprintf(name, (size_t)length, "Fake GPU sm_%d", b.cc);
  return CUDA_SUCCESS;
}

API CUresult cuDeviceGetAttribute(int *value, CUdevice_attribute attribute, CUdevice device) {
  CUresult r = device_ready(device);
  if (r) return r;
  if (!value) return CUDA_ERROR_INVALID_VALUE;
  const fake_board_t b = board_of(ccs[device]);
  switch (attribute) {
    case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR: *value = b.cc / 10; break;
    case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR: *value = b.cc % 10; break;
    case CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT: *value = b.sm_count; break;
    case CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK: *value = 1024; break;
    case CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X: *value = 1024; break;
    case CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Y: *value = 1024; break;
    case CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Z: *value = 64; break;
    case CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X: *value = 2147483647; break;
    case CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Y: *value = 65535; break;
    case CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Z: *value = 65535; break;
    case CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK: *value = 49152; break;
    case CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR: *value = b.shared_per_sm; break;
    case CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_BLOCK: *value = 65536; break;
    case CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_MULTIPROCESSOR: *value = 65536; break;
    case CU_DEVICE_ATTRIBUTE_WARP_SIZE: *value = 32; break;
    case CU_DEVICE_ATTRIBUTE_CLOCK_RATE: *value = b.clock_khz; break;
    case CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE: *value = b.memory_clock_khz; break;
    case CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH: *value = b.bus_bits; break;
    case CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE: *value = (int)b.l2_bytes; break;
    default: *value = 0; break;
  }
  return CUDA_SUCCESS;
}

API CUresult cuDeviceGetUuid(CUuuid *uuid, CUdevice device) {
  CUresult r = device_ready(device);
  if (r) return r;
  if (!uuid) return CUDA_ERROR_INVALID_VALUE;
  memset(uuid->bytes, 0xf0 + device, sizeof uuid->bytes);
  return CUDA_SUCCESS;
}

API CUresult cuDeviceTotalMem(size_t *bytes, CUdevice device) {
  CUresult r = device_ready(device);
  if (r) return r;
  if (!bytes) return CUDA_ERROR_INVALID_VALUE;
  *bytes = (size_t)board_of(ccs[device]).memory_bytes;
  return CUDA_SUCCESS;
}

/* ------------------------------------------------------------------------ */
/* Contexts                                                                 */
/* ------------------------------------------------------------------------ */

/* The context current on this thread, checked: the caller holds the lock.
 * Context-bound calls start with CURRENT(c), which returns their error. */
static CUresult current(fake_context_t **out) {
  *out = depth > 0 ? stack[depth - 1] : NULL;
  if (!*out || (*out)->retains <= 0) {
    ++counters.no_context;
    return CUDA_ERROR_INVALID_CONTEXT;
  }
  return (*out)->sticky;
}

#define LOCKED_CURRENT(c)                     \
  fake_context_t *c;                          \
  pthread_mutex_lock(&lock);                  \
  do {                                        \
    CUresult r_ = current(&c);                \
    if (r_ != CUDA_SUCCESS) {                 \
      pthread_mutex_unlock(&lock);            \
      return r_;                              \
    }                                         \
  } while (0)

static void module_free(fake_module_t *m) {
  while (m->functions) {
    fake_function_t *f = m->functions;
    m->functions = f->next;
    free(f);
  }
  free(m->image);
  free(m);
}

/* Destroys what a context still holds (its last release): the caller holds
 * the lock. */
static void reclaim(fake_context_t *c) {
  for (fake_alloc_t **a = &allocs; *a;) {
    if ((*a)->context != c) { a = &(*a)->next; continue; }
    fake_alloc_t *dead = *a;
    *a = dead->next;
    free(dead->base);
    free(dead);
    ++counters.reclaimed;
  }
  for (fake_module_t **m = &modules; *m;) {
    if ((*m)->context != c) { m = &(*m)->next; continue; }
    fake_module_t *dead = *m;
    *m = dead->next;
    module_free(dead);
    ++counters.reclaimed;
  }
  for (fake_stream_t **s = &streams; *s;) {
    if ((*s)->context != c) { s = &(*s)->next; continue; }
    fake_stream_t *dead = *s;
    *s = dead->next;
    free(dead);
    ++counters.reclaimed;
  }
  for (fake_event_t **e = &events; *e;) {
    if ((*e)->context != c) { e = &(*e)->next; continue; }
    fake_event_t *dead = *e;
    *e = dead->next;
    free(dead);
    ++counters.reclaimed;
  }
  c->sticky = CUDA_SUCCESS;
}

API CUresult cuDevicePrimaryCtxRetain(CUcontext *context, CUdevice device) {
  CUresult r = device_ready(device);
  if (r) return r;
  if (!context) return CUDA_ERROR_INVALID_VALUE;
  pthread_mutex_lock(&lock);
  contexts[device].device = device;
  ++contexts[device].retains;
  ++counters.retains;
  pthread_mutex_unlock(&lock);
  *context = (CUcontext)(void *)&contexts[device];
  return CUDA_SUCCESS;
}

API CUresult cuDevicePrimaryCtxRelease(CUdevice device) {
  CUresult r = device_ready(device);
  if (r) return r;
  pthread_mutex_lock(&lock);
  fake_context_t *c = &contexts[device];
  if (c->retains <= 0) {
    pthread_mutex_unlock(&lock);
    return CUDA_ERROR_INVALID_CONTEXT;
  }
  ++counters.releases;
  if (--c->retains == 0) reclaim(c);
  pthread_mutex_unlock(&lock);
  return CUDA_SUCCESS;
}

static fake_context_t *context_of(CUcontext context) {
  for (int i = 0; i < MAX_DEVICES; ++i)
    if ((void *)context == (void *)&contexts[i]) return &contexts[i];
  return NULL;
}

API CUresult cuCtxPushCurrent(CUcontext context) {
  pthread_mutex_lock(&lock);
  fake_context_t *c = context_of(context);
  CUresult r = !c || c->retains <= 0 ? CUDA_ERROR_INVALID_CONTEXT
               : depth == MAX_DEPTH  ? CUDA_ERROR_INVALID_VALUE
                                     : CUDA_SUCCESS;
  if (r == CUDA_SUCCESS) {
    stack[depth++] = c;
    ++counters.pushes;
  }
  pthread_mutex_unlock(&lock);
  return r;
}

API CUresult cuCtxPopCurrent(CUcontext *context) {
  if (context) *context = NULL;
  if (depth <= 0) return CUDA_ERROR_INVALID_CONTEXT;
  pthread_mutex_lock(&lock);
  fake_context_t *c = stack[--depth];
  ++counters.pops;
  pthread_mutex_unlock(&lock);
  if (context) *context = (CUcontext)(void *)c;
  return CUDA_SUCCESS;
}

API CUresult cuCtxSynchronize(void) {
  LOCKED_CURRENT(c);
  (void)c;
  pthread_mutex_unlock(&lock);
  return CUDA_SUCCESS;
}

/* ------------------------------------------------------------------------ */
/* Memory                                                                   */
/* ------------------------------------------------------------------------ */

/* The allocation holding [pointer, pointer + bytes), or NULL. */
static fake_alloc_t *find_alloc(CUdeviceptr pointer, size_t bytes) {
  for (fake_alloc_t *a = allocs; a; a = a->next) {
    const uintptr_t base = (uintptr_t)a->base;
    if (pointer >= base && pointer - base <= a->bytes && bytes <= a->bytes - (pointer - base)) return a;
  }
  return NULL;
}

API CUresult cuMemAlloc(CUdeviceptr *pointer, size_t bytes) {
  if (!pointer) return CUDA_ERROR_INVALID_VALUE;
  *pointer = 0;
  LOCKED_CURRENT(c);
  CUresult r = CUDA_SUCCESS;
  size_t used = 0;
  for (fake_alloc_t *a = allocs; a; a = a->next)
    if (a->context == c) used += a->bytes;
  fake_alloc_t *a = NULL;
  if (bytes == 0)
    r = CUDA_ERROR_INVALID_VALUE;
  else if (bytes > (size_t)board_of(ccs[c->device]).memory_bytes - used)
    r = CUDA_ERROR_OUT_OF_MEMORY;
  else if (!(a = calloc(1, sizeof *a)) || !(a->base = calloc(1, bytes)))
    r = CUDA_ERROR_OUT_OF_MEMORY;
  if (r == CUDA_SUCCESS) {
    a->context = c;
    a->bytes = bytes;
    a->next = allocs;
    allocs = a;
    ++counters.allocs;
    *pointer = (CUdeviceptr)(uintptr_t)a->base;
  } else {
    free(a);
  }
  pthread_mutex_unlock(&lock);
  return r;
}

API CUresult cuMemFree(CUdeviceptr pointer) {
  fake_context_t *c;
  pthread_mutex_lock(&lock);
  /* Freeing in a faulted context still frees, and reports the fault. */
  CUresult r = current(&c);
  if (r == CUDA_ERROR_INVALID_CONTEXT) {
    pthread_mutex_unlock(&lock);
    return r;
  }
  fake_alloc_t **link = &allocs;
  while (*link && (uintptr_t)(*link)->base != pointer) link = &(*link)->next;
  if (!*link) {
    pthread_mutex_unlock(&lock);
    return r ? r : CUDA_ERROR_INVALID_VALUE;
  }
  fake_alloc_t *dead = *link;
  *link = dead->next;
  free(dead->base);
  free(dead);
  ++counters.frees;
  pthread_mutex_unlock(&lock);
  return r;
}

API CUresult cuMemcpyHtoD(CUdeviceptr destination, const void *source, size_t bytes) {
  LOCKED_CURRENT(c);
  (void)c;
  CUresult r = !source || !find_alloc(destination, bytes) ? CUDA_ERROR_INVALID_VALUE : CUDA_SUCCESS;
  if (r == CUDA_SUCCESS) memcpy((void *)(uintptr_t)destination, source, bytes);
  pthread_mutex_unlock(&lock);
  return r;
}

API CUresult cuMemcpyDtoH(void *destination, CUdeviceptr source, size_t bytes) {
  LOCKED_CURRENT(c);
  (void)c;
  CUresult r = !destination || !find_alloc(source, bytes) ? CUDA_ERROR_INVALID_VALUE : CUDA_SUCCESS;
  if (r == CUDA_SUCCESS) memcpy(destination, (const void *)(uintptr_t)source, bytes);
  pthread_mutex_unlock(&lock);
  return r;
}

API CUresult cuMemcpyDtoD(CUdeviceptr destination, CUdeviceptr source, size_t bytes) {
  LOCKED_CURRENT(c);
  (void)c;
  CUresult r = !find_alloc(destination, bytes) || !find_alloc(source, bytes) ? CUDA_ERROR_INVALID_VALUE : CUDA_SUCCESS;
  if (r == CUDA_SUCCESS) memmove((void *)(uintptr_t)destination, (const void *)(uintptr_t)source, bytes);
  pthread_mutex_unlock(&lock);
  return r;
}

API CUresult cuMemsetD8(CUdeviceptr destination, unsigned char value, size_t count) {
  LOCKED_CURRENT(c);
  (void)c;
  CUresult r = !find_alloc(destination, count) ? CUDA_ERROR_INVALID_VALUE : CUDA_SUCCESS;
  if (r == CUDA_SUCCESS) memset((void *)(uintptr_t)destination, value, count);
  pthread_mutex_unlock(&lock);
  return r;
}

/* ------------------------------------------------------------------------ */
/* Modules                                                                  */
/* ------------------------------------------------------------------------ */

#define EM_CUDA 190

static uint16_t u16_at(const char *p) {
  uint16_t v;
  memcpy(&v, p, sizeof v);
  return v;
}
static uint32_t u32_at(const char *p) {
  uint32_t v;
  memcpy(&v, p, sizeof v);
  return v;
}
static uint64_t u64_at(const char *p) {
  uint64_t v;
  memcpy(&v, p, sizeof v);
  return v;
}

static int is_elf(const char *image) { return memcmp(image, "\177ELF", 4) == 0; }

/* A cubin's length: the furthest of its section headers, program headers
 * and section contents (the driver takes no length either). */
static size_t cubin_length(const char *image) {
  const uint64_t shoff = u64_at(image + 0x28), phoff = u64_at(image + 0x20);
  const uint16_t phentsize = u16_at(image + 0x36), phnum = u16_at(image + 0x38);
  const uint16_t shentsize = u16_at(image + 0x3a), shnum = u16_at(image + 0x3c);
  size_t end = (size_t)(shoff + (uint64_t)shentsize * shnum);
  if (phoff + (uint64_t)phentsize * phnum > end) end = (size_t)(phoff + (uint64_t)phentsize * phnum);
  for (uint16_t i = 0; i < shnum; ++i) {
    const char *sh = image + shoff + (size_t)i * shentsize;
    const uint32_t type = u32_at(sh + 4);
    const uint64_t offset = u64_at(sh + 0x18), size = u64_at(sh + 0x20);
    if (type != 8 /* SHT_NOBITS */ && offset + size > end) end = (size_t)(offset + size);
  }
  return end;
}

/* The section named `name` of a cubin, or NULL; *size gets its size. */
static const char *cubin_section(const fake_module_t *m, const char *name, size_t *size) {
  const char *image = m->image;
  const uint64_t shoff = u64_at(image + 0x28);
  const uint16_t shentsize = u16_at(image + 0x3a), shnum = u16_at(image + 0x3c), shstrndx = u16_at(image + 0x3e);
  if (shstrndx >= shnum) return NULL;
  const uint64_t strings = u64_at(image + shoff + (size_t)shstrndx * shentsize + 0x18);
  for (uint16_t i = 0; i < shnum; ++i) {
    const char *sh = image + shoff + (size_t)i * shentsize;
    const uint64_t at = strings + u32_at(sh);
    if (at < m->length && strncmp(image + at, name, m->length - at) == 0) {
      *size = (size_t)u64_at(sh + 0x20);
      return image + u64_at(sh + 0x18);
    }
  }
  return NULL;
}

/* What a cubin's .nv.info.<name> says of a kernel: its attributes (a
 * format byte, an attribute byte, then a 16-bit value, or for format 4 a
 * 16-bit size and that many bytes) hold one EIATTR_KPARAM_INFO (0x17) per
 * parameter and, with __launch_bounds__, EIATTR_MAX_THREADS (0x05: x, y,
 * z). *max_threads is left alone without one. */
static int cubin_params(const fake_module_t *m, const char *name, int *max_threads) {
  char section[96];
  snprintf(section, sizeof section, ".nv.info.%s", name);
  size_t size = 0;
  const char *p = cubin_section(m, section, &size);
  int count = 0;
  for (size_t at = 0; p && at + 4 <= size;) {
    const unsigned char format = (unsigned char)p[at], attribute = (unsigned char)p[at + 1];
    if (format == 4) { /* EIFMT_SVAL */
      const size_t length = u16_at(p + at + 2);
      count += attribute == 0x17;
      if (attribute == 0x05 && length == 12 && at + 16 <= size)
        *max_threads = (int)(u32_at(p + at + 4) * u32_at(p + at + 8) * u32_at(p + at + 12));
      at += 4 + length;
    } else { /* EIFMT_NVAL, EIFMT_BVAL, EIFMT_HVAL: 4 bytes */
      at += 4;
    }
  }
  return count;
}

/* The `.entry <name>(` of PTX, or NULL; the text is NUL-terminated. */
static const char *ptx_entry(const fake_module_t *m, const char *name) {
  char pattern[96];
  snprintf(pattern, sizeof pattern, ".entry %s(", name);
  return strstr(m->image, pattern);
}

/* The parameters of the PTX entry at `entry`, and its .maxntid (left
 * alone without one). */
static int ptx_params(const char *entry, int *max_threads) {
  const char *close = strchr(entry, ')'), *body = strchr(entry, '{'), *bounds = strstr(entry, ".maxntid ");
  int count = 0, x = 0, y = 0, z = 0;
  for (const char *p = entry; (p = strstr(p, ".param")) && (!close || p < close); p += 6) ++count;
  if (bounds && body && bounds < body && sscanf(bounds, ".maxntid %d, %d, %d", &x, &y, &z) == 3)
    *max_threads = x * y * z;
  return count;
}

/* PTX ISA the driver's version understands: CUDA 13.x -> 9.x, 12.x -> 8.x,
 * 11.x -> 7.x (as 10 * major + minor). */
static int driver_ptx_isa(void) {
  const int major = driver_version / 1000, minor = driver_version % 1000 / 10;
  return 10 * (major - 4) + minor;
}

/* Checks an image against the current device; the JIT log gets why not. */
static CUresult check_image(const char *image, int cc, char *log, size_t log_size) {
  if (is_elf(image)) {
    const int arch = (int)(u32_at(image + 0x30) >> 8 & 0xff);
    if (image[4] != 2 || u16_at(image + 0x12) != EM_CUDA) {
      snprintf(log, log_size, "fake driver: an ELF image that is not a 64-bit CUDA cubin");
      return CUDA_ERROR_INVALID_IMAGE;
    }
    if (arch / 10 != cc / 10 || arch % 10 > cc % 10) {
      snprintf(log, log_size, "fake driver: the cubin is for sm_%d, the device is sm_%d", arch, cc);
      return CUDA_ERROR_NO_BINARY_FOR_GPU;
    }
    return CUDA_SUCCESS;
  }
  const char *version = strstr(image, "\n.version "), *target = strstr(image, "\n.target sm_");
  int major = 0, minor = 0, arch = 0;
  if (strncmp(image, "//", 2) != 0 || !version || !target || sscanf(version, "\n.version %d.%d", &major, &minor) != 2 ||
      sscanf(target, "\n.target sm_%d", &arch) != 1) {
    snprintf(log, log_size, "fake driver: the image is neither a cubin nor PTX");
    return CUDA_ERROR_INVALID_IMAGE;
  }
  if (check_ptx_version && 10 * major + minor > driver_ptx_isa()) {
    snprintf(log, log_size,
             "ptxas application ptx input, line 10; fatal   : Unsupported .version %d.%d; current version is '%d.%d'",
             major, minor, driver_ptx_isa() / 10, driver_ptx_isa() % 10);
    return CUDA_ERROR_UNSUPPORTED_PTX_VERSION;
  }
  if (arch > cc) {
    snprintf(log, log_size, "ptxas fatal   : PTX for sm_%d cannot be compiled for sm_%d", arch, cc);
    return CUDA_ERROR_INVALID_PTX;
  }
  return CUDA_SUCCESS;
}

API CUresult cuModuleLoadDataEx(CUmodule *module, const void *image, unsigned int option_count, CUjit_option *options,
                                void **option_values) {
  char *log = NULL;
  size_t log_size = 0;
  for (unsigned int i = 0; i < option_count; ++i) {
    if (options[i] == CU_JIT_ERROR_LOG_BUFFER) log = option_values[i];
    if (options[i] == CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES) log_size = (size_t)(uintptr_t)option_values[i];
  }
  char ignored[8];
  if (!log || !log_size) {
    log = ignored;
    log_size = sizeof ignored;
  }
  log[0] = 0;
  if (!module || !image) return CUDA_ERROR_INVALID_VALUE;
  *module = NULL;
  LOCKED_CURRENT(c);
  CUresult r = check_image(image, ccs[c->device], log, log_size);
  fake_module_t *m = NULL;
  if (r == CUDA_SUCCESS && (m = calloc(1, sizeof *m))) {
    m->cubin = is_elf(image);
    m->length = m->cubin ? cubin_length(image) : strlen(image);
    if ((m->image = malloc(m->length + 1))) {
      memcpy(m->image, image, m->length);
      m->image[m->length] = 0;
    }
  }
  if (r == CUDA_SUCCESS && (!m || !m->image)) {
    if (m) free(m);
    m = NULL;
    r = CUDA_ERROR_OUT_OF_MEMORY;
  }
  if (r == CUDA_SUCCESS) {
    m->context = c;
    m->next = modules;
    modules = m;
    ++counters.loads;
    *module = (CUmodule)(void *)m;
  } else {
    ++counters.load_failures;
  }
  pthread_mutex_unlock(&lock);
  return r;
}

static fake_module_t *find_module(CUmodule module, const fake_context_t *c) {
  for (fake_module_t *m = modules; m; m = m->next)
    if ((void *)m == (void *)module && m->context == c) return m;
  return NULL;
}

/* As a real driver: a block of this many registers per thread may have at
 * most this many threads (registers are given out per warp, 256 at a time). */
static int threads_for(int regs) {
  if (regs <= 0) return 1024;
  const int per_warp = (regs * 32 + 255) / 256 * 256;
  const int threads = 65536 / per_warp * 32;
  return threads > 1024 ? 1024 : threads;
}

API CUresult cuModuleGetFunction(CUfunction *function, CUmodule module, const char *name) {
  if (!function || !name) return CUDA_ERROR_INVALID_VALUE;
  *function = NULL;
  LOCKED_CURRENT(c);
  fake_module_t *m = find_module(module, c);
  CUresult r = m ? CUDA_SUCCESS : CUDA_ERROR_INVALID_HANDLE;
  fake_function_t *f = NULL;
  if (m) {
    for (f = m->functions; f && strcmp(f->name, name) != 0; f = f->next) {
    }
  }
  if (m && !f) {
    char section[96];
    size_t size = 0;
    const char *entry = NULL;
    snprintf(section, sizeof section, ".text.%s", name);
    const int found = strlen(name) < sizeof f->name &&
                      (m->cubin ? cubin_section(m, section, &size) != NULL : (entry = ptx_entry(m, name)) != NULL);
    if (!found) {
      r = CUDA_ERROR_NOT_FOUND;
    } else if (!(f = calloc(1, sizeof *f))) {
      r = CUDA_ERROR_OUT_OF_MEMORY;
    } else {
      snprintf(f->name, sizeof f->name, "%s", name);
      f->module = m;
      /* As a real driver: the fewest of what the registers and the
       * kernel's launch bounds allow, unless a test says otherwise. */
      int bounds = 1024;
      f->registers = registers;
      f->num_params = m->cubin ? cubin_params(m, name, &bounds) : ptx_params(entry, &bounds);
      f->max_threads = threads_for(registers) < bounds ? threads_for(registers) : bounds;
      if (max_threads_override > 0) f->max_threads = max_threads_override;
      f->next = m->functions;
      m->functions = f;
    }
  }
  if (f) *function = (CUfunction)(void *)f;
  pthread_mutex_unlock(&lock);
  return r;
}

API CUresult cuModuleUnload(CUmodule module) {
  fake_context_t *c;
  pthread_mutex_lock(&lock);
  CUresult r = current(&c);
  if (r == CUDA_ERROR_INVALID_CONTEXT) {
    pthread_mutex_unlock(&lock);
    return r;
  }
  fake_module_t **link = &modules;
  while (*link && (void *)*link != (void *)module) link = &(*link)->next;
  if (!*link) {
    pthread_mutex_unlock(&lock);
    return r ? r : CUDA_ERROR_INVALID_HANDLE;
  }
  fake_module_t *dead = *link;
  *link = dead->next;
  module_free(dead);
  ++counters.unloads;
  pthread_mutex_unlock(&lock);
  return r;
}

/* The function if it lives in a module of context c, else NULL. */
static fake_function_t *find_function(CUfunction function, const fake_context_t *c) {
  for (fake_module_t *m = modules; m; m = m->next)
    if (m->context == c)
      for (fake_function_t *f = m->functions; f; f = f->next)
        if ((void *)f == (void *)function) return f;
  return NULL;
}

API CUresult cuFuncGetAttribute(int *value, CUfunction_attribute attribute, CUfunction function) {
  if (!value) return CUDA_ERROR_INVALID_VALUE;
  LOCKED_CURRENT(c);
  fake_function_t *f = find_function(function, c);
  CUresult r = f ? CUDA_SUCCESS : CUDA_ERROR_INVALID_HANDLE;
  if (f) {
    switch (attribute) {
      case CU_FUNC_ATTRIBUTE_NUM_REGS: *value = f->registers; break;
      case CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK: *value = f->max_threads; break;
      case CU_FUNC_ATTRIBUTE_PTX_VERSION:
      case CU_FUNC_ATTRIBUTE_BINARY_VERSION: *value = ccs[c->device]; break;
      default: *value = 0; break; /* shared, local, constant memory: none */
    }
  }
  pthread_mutex_unlock(&lock);
  return r;
}

/* ------------------------------------------------------------------------ */
/* Streams, launches, events                                                */
/* ------------------------------------------------------------------------ */

static fake_stream_t *find_stream(CUstream stream, const fake_context_t *c) {
  for (fake_stream_t *s = streams; s; s = s->next)
    if ((void *)s == (void *)stream && s->context == c) return s;
  return NULL;
}

API CUresult cuStreamCreate(CUstream *stream, unsigned int flags) {
  if (!stream) return CUDA_ERROR_INVALID_VALUE;
  *stream = NULL;
  LOCKED_CURRENT(c);
  fake_stream_t *s = flags <= CU_STREAM_NON_BLOCKING ? calloc(1, sizeof *s) : NULL;
  if (s) {
    s->context = c;
    s->next = streams;
    streams = s;
    *stream = (CUstream)(void *)s;
  }
  pthread_mutex_unlock(&lock);
  return s ? CUDA_SUCCESS : flags > CU_STREAM_NON_BLOCKING ? CUDA_ERROR_INVALID_VALUE : CUDA_ERROR_OUT_OF_MEMORY;
}

API CUresult cuStreamSynchronize(CUstream stream) {
  LOCKED_CURRENT(c);
  CUresult r = !stream || find_stream(stream, c) ? CUDA_SUCCESS : CUDA_ERROR_INVALID_HANDLE;
  pthread_mutex_unlock(&lock);
  return r;
}

API CUresult cuStreamDestroy(CUstream stream) {
  fake_context_t *c;
  pthread_mutex_lock(&lock);
  CUresult r = current(&c);
  if (r == CUDA_ERROR_INVALID_CONTEXT) {
    pthread_mutex_unlock(&lock);
    return r;
  }
  fake_stream_t **link = &streams;
  while (*link && (void *)*link != (void *)stream) link = &(*link)->next;
  if (*link) {
    fake_stream_t *dead = *link;
    *link = dead->next;
    free(dead);
  } else if (!r) {
    r = CUDA_ERROR_INVALID_HANDLE;
  }
  pthread_mutex_unlock(&lock);
  return r;
}

/* fake_saxpy on the host: y[i] += 2 x[i] for every thread; a fault when
 * either buffer is shorter than the launch. */
static CUresult saxpy(fake_function_t *f, unsigned long long threads, void **params) {
  if (f->num_params != 2) return CUDA_ERROR_LAUNCH_FAILED;
  CUdeviceptr x, y;
  memcpy(&x, params[0], sizeof x);
  memcpy(&y, params[1], sizeof y);
  if (threads > SIZE_MAX / 4 || !find_alloc(x, (size_t)threads * 4) || !find_alloc(y, (size_t)threads * 4))
    return CUDA_ERROR_ILLEGAL_ADDRESS;
  const float *xs = (const float *)(uintptr_t)x;
  float *ys = (float *)(uintptr_t)y;
  for (unsigned long long i = 0; i < threads; ++i) ys[i] += 2.0f * xs[i];
  return CUDA_SUCCESS;
}

API CUresult cuLaunchKernel(CUfunction function, unsigned int grid_x, unsigned int grid_y, unsigned int grid_z,
                            unsigned int block_x, unsigned int block_y, unsigned int block_z, unsigned int shared_bytes,
                            CUstream stream, void **params, void **extra) {
  LOCKED_CURRENT(c);
  fake_function_t *f = find_function(function, c);
  fake_stream_t *s = stream ? find_stream(stream, c) : NULL;
  const unsigned long long threads = (unsigned long long)block_x * block_y * block_z;
  CUresult r = CUDA_SUCCESS;
  if (!f || (stream && !s))
    r = CUDA_ERROR_INVALID_HANDLE;
  else if (!grid_x || !grid_y || !grid_z || !block_x || !block_y || !block_z || block_x > 1024 || block_y > 1024 ||
           block_z > 64 || threads > 1024 || grid_y > 65535 || grid_z > 65535 || grid_x > 2147483647u ||
           shared_bytes > 49152 || extra || (f->num_params > 0 && !params))
    r = CUDA_ERROR_INVALID_VALUE;
  else if ((unsigned long long)f->registers * threads > 65536 || threads > (unsigned long long)f->max_threads)
    r = CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES;
  else if (fail_next_launch) {
    r = fail_next_launch;
    fail_next_launch = CUDA_SUCCESS;
  }
  if (r == CUDA_SUCCESS) {
    ++counters.launches;
    launched = 1;
    hetc_fake_cuda_launch_t *l = &last_launch;
    memset(l, 0, sizeof *l);
    snprintf(l->kernel, sizeof l->kernel, "%s", f->name);
    l->device = c->device;
    l->grid[0] = grid_x, l->grid[1] = grid_y, l->grid[2] = grid_z;
    l->block[0] = block_x, l->block[1] = block_y, l->block[2] = block_z;
    l->shared_bytes = shared_bytes;
    l->num_params = f->num_params;
    for (int i = 0; i < f->num_params && i < 8; ++i) memcpy(&l->params[i], params[i], sizeof l->params[i]);
    *(s ? &s->clock_us : &default_clock_us) += (unsigned long long)launch_us;
    /* Faults surface later, on the context, like a kernel's. */
    CUresult fault = fault_next_launch;
    fault_next_launch = CUDA_SUCCESS;
    if (!fault && !strcmp(f->name, HETC_FAKE_CUDA_SAXPY))
      fault = saxpy(f, (unsigned long long)grid_x * grid_y * grid_z * threads, params);
    if (fault) c->sticky = fault;
  }
  pthread_mutex_unlock(&lock);
  return r;
}

static fake_event_t *find_event(CUevent event, const fake_context_t *c) {
  for (fake_event_t *e = events; e; e = e->next)
    if ((void *)e == (void *)event && e->context == c) return e;
  return NULL;
}

API CUresult cuEventCreate(CUevent *event, unsigned int flags) {
  if (!event) return CUDA_ERROR_INVALID_VALUE;
  *event = NULL;
  LOCKED_CURRENT(c);
  (void)flags;
  fake_event_t *e = calloc(1, sizeof *e);
  if (e) {
    e->context = c;
    e->next = events;
    events = e;
    *event = (CUevent)(void *)e;
  }
  pthread_mutex_unlock(&lock);
  return e ? CUDA_SUCCESS : CUDA_ERROR_OUT_OF_MEMORY;
}

API CUresult cuEventRecord(CUevent event, CUstream stream) {
  LOCKED_CURRENT(c);
  fake_event_t *e = find_event(event, c);
  fake_stream_t *s = stream ? find_stream(stream, c) : NULL;
  CUresult r = !e || (stream && !s) ? CUDA_ERROR_INVALID_HANDLE : CUDA_SUCCESS;
  if (r == CUDA_SUCCESS) {
    e->recorded = 1;
    e->at_us = s ? s->clock_us : default_clock_us;
  }
  pthread_mutex_unlock(&lock);
  return r;
}

API CUresult cuEventSynchronize(CUevent event) {
  LOCKED_CURRENT(c);
  CUresult r = find_event(event, c) ? CUDA_SUCCESS : CUDA_ERROR_INVALID_HANDLE;
  pthread_mutex_unlock(&lock);
  return r;
}

API CUresult cuEventElapsedTime(float *milliseconds, CUevent start_event, CUevent end_event) {
  if (!milliseconds) return CUDA_ERROR_INVALID_VALUE;
  LOCKED_CURRENT(c);
  fake_event_t *a = find_event(start_event, c), *b = find_event(end_event, c);
  /* As the driver: an event never recorded is an invalid handle here. */
  CUresult r = !a || !b || !a->recorded || !b->recorded ? CUDA_ERROR_INVALID_HANDLE : CUDA_SUCCESS;
  if (r == CUDA_SUCCESS) *milliseconds = (float)((double)b->at_us - (double)a->at_us) / 1000.0f;
  pthread_mutex_unlock(&lock);
  return r;
}

API CUresult cuEventDestroy(CUevent event) {
  fake_context_t *c;
  pthread_mutex_lock(&lock);
  CUresult r = current(&c);
  if (r == CUDA_ERROR_INVALID_CONTEXT) {
    pthread_mutex_unlock(&lock);
    return r;
  }
  fake_event_t **link = &events;
  while (*link && (void *)*link != (void *)event) link = &(*link)->next;
  if (*link) {
    fake_event_t *dead = *link;
    *link = dead->next;
    free(dead);
  } else if (!r) {
    r = CUDA_ERROR_INVALID_HANDLE;
  }
  pthread_mutex_unlock(&lock);
  return r;
}

/* ------------------------------------------------------------------------ */
/* Test controls (fake_libcuda.h)                                           */
/* ------------------------------------------------------------------------ */

API int hetc_fake_cuda_set(const char *key, const char *value);
API long long hetc_fake_cuda_stat(const char *key);
API int hetc_fake_cuda_last_launch(hetc_fake_cuda_launch_t *out);

API int hetc_fake_cuda_set(const char *key, const char *value) {
  start();
  const int v = value ? atoi(value) : 0;
  int known = 1;
  pthread_mutex_lock(&lock);
  if (!strcmp(key, "devices"))
    parse_devices(value);
  else if (!strcmp(key, "registers"))
    registers = v;
  else if (!strcmp(key, "max_threads"))
    max_threads_override = v;
  else if (!strcmp(key, "launch_us"))
    launch_us = v;
  else if (!strcmp(key, "fail_launch"))
    fail_next_launch = (CUresult)v;
  else if (!strcmp(key, "fault_launch"))
    fault_next_launch = (CUresult)v;
  else if (!strcmp(key, "reset"))
    memset(&counters, 0, sizeof counters);
  else
    known = 0;
  pthread_mutex_unlock(&lock);
  return known ? 0 : -1;
}

API long long hetc_fake_cuda_stat(const char *key) {
  long long live_allocs = 0, live_modules = 0, live_streams = 0, live_events = 0;
  pthread_mutex_lock(&lock);
  for (fake_alloc_t *a = allocs; a; a = a->next) ++live_allocs;
  for (fake_module_t *m = modules; m; m = m->next) ++live_modules;
  for (fake_stream_t *s = streams; s; s = s->next) ++live_streams;
  for (fake_event_t *e = events; e; e = e->next) ++live_events;
  const fake_counters_t k = counters;
  pthread_mutex_unlock(&lock);
  static const char *const names[] = {"loads",  "load_failures", "unloads", "allocs",   "frees",
                                      "launches", "pushes",      "pops",    "no_context", "retains",
                                      "releases", "reclaimed"};
  const long long values[] = {k.loads,  k.load_failures, k.unloads, k.allocs,     k.frees,    k.launches,
                              k.pushes, k.pops,          k.no_context, k.retains, k.releases, k.reclaimed};
  for (size_t i = 0; i < sizeof names / sizeof names[0]; ++i)
    if (!strcmp(key, names[i])) return values[i];
  if (!strcmp(key, "live_allocs")) return live_allocs;
  if (!strcmp(key, "live_modules")) return live_modules;
  if (!strcmp(key, "live_streams")) return live_streams;
  if (!strcmp(key, "live_events")) return live_events;
  if (!strcmp(key, "depth")) return depth;
  return -1;
}

API int hetc_fake_cuda_last_launch(hetc_fake_cuda_launch_t *out) {
  pthread_mutex_lock(&lock);
  const int any = launched;
  if (any && out) *out = last_launch;
  pthread_mutex_unlock(&lock);
  return any;
}
