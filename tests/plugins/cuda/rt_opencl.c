/* tests/plugins/cuda/rt_opencl.c -- the cuda plugin's runtime (cu.h,
 * "Runtime") on OpenCL, for the test-only plugin `cuda_on_opencl`.
 *
 * CI machines have no GPU, so the tests build the cuda plugin's sources
 * with this file in place of rt_driver.c: the kernel text the plugin
 * generates is compiled as OpenCL C behind the dialect's OpenCL prelude
 * (plugin_gpu_dialect.c: blocks become work-groups of the kernel's
 * reqd_work_group_size, shared memory __local, the tensor-core step an
 * emulation with PTX's fragment layout) and run on the first OpenCL device
 * found, PoCL's CPU device on these machines. The arithmetic of every
 * template is then checked by the same conformance and end-to-end harnesses
 * that check the other backends.
 *
 * The device pretends to be a GPU of compute capability 8.0 (so that the
 * tensor-core template is offered and exercised) whose limits are capped by
 * the OpenCL device's own. One device, one context, one in-order profiling
 * queue; programs are cached in memory per device (no disk cache: a test
 * process builds each source once), keyed by the source's FNV-1a hash and
 * length. Packaged images do not exist in this runtime: they are ignored
 * when given and never produced.
 *
 * Thread safety: every entry point may be called from any thread. A
 * module's kernel objects are shared by its users, so setting a kernel's
 * arguments and enqueueing it happen under the device's launch lock. */
#define CL_TARGET_OPENCL_VERSION 120
#include <CL/cl.h>

#include <dirent.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cu.h"
#include "plugin_files.h"
#include "plugin_gpu_dialect.h"

/* Build options: the OpenCL C the dialect's prelude is written for. */
#define RT_BUILD_OPTIONS "-cl-std=CL1.2"

/* What the device pretends to be before the OpenCL device's limits cap it:
 * an sm_80 part (A100-like per-block and per-SM limits). */
#define RT_CC_MAJOR 8
#define RT_CC_MINOR 0
#define RT_MAX_THREADS_PER_BLOCK 1024
#define RT_SHARED_PER_BLOCK (48 * 1024)
#define RT_SHARED_PER_SM (100 * 1024)
#define RT_REGISTERS 65536
#define RT_WARP_SIZE 32

#define RT_MAX_PLATFORMS 16
#define RT_MAX_DEVICES 16

struct cu_function_t {
  struct cu_function_t *next;
  cl_kernel kernel; /* shared: arguments are set under the device's launch lock */
  cu_function_attrs_t attrs;
  char name[]; /* the kernel's name in the program */
};

struct cu_module_t {
  struct cu_module_t *next; /* the device's cache list */
  cu_device_t *dev;
  uint64_t key;    /* FNV-1a of the kernel text (without the prelude) */
  size_t length;   /* of the kernel text: a second check against collisions */
  int32_t refs;    /* under the device's cache lock */
  cl_program program;
  cu_function_t *functions; /* created on first request, under the cache lock */
};

struct cu_mem_t {
  cl_mem mem;
  uint64_t bytes; /* what was asked for (the buffer has at least 4) */
};

typedef struct cu_rt_device_t {
  cl_platform_id platform;
  cl_device_id id;
  cl_context context;
  cl_command_queue queue; /* in order, profiling enabled */
  /* Guards `modules`, every module's refs and functions. */
  pthread_mutex_t cache_lock;
  cu_module_t *modules;
  /* Serializes clSetKernelArg + clEnqueueNDRangeKernel on shared kernels,
   * and the marks. */
  pthread_mutex_t launch_lock;
  cl_event marks[2]; /* begin, end; NULL until marked */
} cu_rt_device_t;

/* ------------------------------------------------------------------------ */
/* Errors                                                                   */
/* ------------------------------------------------------------------------ */

/* The name of an OpenCL error code ("CL_OUT_OF_RESOURCES"); static. */
static const char *cl_error_name(cl_int error) {
#define RT_NAME(code) \
  case code:          \
    return #code
  switch (error) {
    RT_NAME(CL_SUCCESS);
    RT_NAME(CL_DEVICE_NOT_FOUND);
    RT_NAME(CL_DEVICE_NOT_AVAILABLE);
    RT_NAME(CL_COMPILER_NOT_AVAILABLE);
    RT_NAME(CL_MEM_OBJECT_ALLOCATION_FAILURE);
    RT_NAME(CL_OUT_OF_RESOURCES);
    RT_NAME(CL_OUT_OF_HOST_MEMORY);
    RT_NAME(CL_PROFILING_INFO_NOT_AVAILABLE);
    RT_NAME(CL_MEM_COPY_OVERLAP);
    RT_NAME(CL_BUILD_PROGRAM_FAILURE);
    RT_NAME(CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST);
    RT_NAME(CL_INVALID_VALUE);
    RT_NAME(CL_INVALID_PLATFORM);
    RT_NAME(CL_INVALID_DEVICE);
    RT_NAME(CL_INVALID_CONTEXT);
    RT_NAME(CL_INVALID_COMMAND_QUEUE);
    RT_NAME(CL_INVALID_MEM_OBJECT);
    RT_NAME(CL_INVALID_BUILD_OPTIONS);
    RT_NAME(CL_INVALID_PROGRAM);
    RT_NAME(CL_INVALID_PROGRAM_EXECUTABLE);
    RT_NAME(CL_INVALID_KERNEL_NAME);
    RT_NAME(CL_INVALID_KERNEL_DEFINITION);
    RT_NAME(CL_INVALID_KERNEL);
    RT_NAME(CL_INVALID_ARG_INDEX);
    RT_NAME(CL_INVALID_ARG_VALUE);
    RT_NAME(CL_INVALID_ARG_SIZE);
    RT_NAME(CL_INVALID_KERNEL_ARGS);
    RT_NAME(CL_INVALID_WORK_DIMENSION);
    RT_NAME(CL_INVALID_WORK_GROUP_SIZE);
    RT_NAME(CL_INVALID_WORK_ITEM_SIZE);
    RT_NAME(CL_INVALID_GLOBAL_OFFSET);
    RT_NAME(CL_INVALID_EVENT);
    RT_NAME(CL_INVALID_OPERATION);
    RT_NAME(CL_INVALID_BUFFER_SIZE);
    RT_NAME(CL_INVALID_GLOBAL_WORK_SIZE);
    default:
      return "an OpenCL error";
  }
#undef RT_NAME
}

/* Allocation failures are OUT_OF_MEMORY, everything else RUNTIME_FAILED. */
static hetc_plugin_status_t cl_failure(cl_int err, const char *what, const char *detail) {
  const int32_t code = err == CL_MEM_OBJECT_ALLOCATION_FAILURE || err == CL_OUT_OF_HOST_MEMORY
                           ? HETC_PLUGIN_STATUS_OUT_OF_MEMORY
                           : HETC_PLUGIN_STATUS_RUNTIME_FAILED;
  return cu_status(code, "%s: %s%s%s: %s (%d)", cu_plugin_name, what, detail ? " " : "", detail ? detail : "",
                   cl_error_name(err), (int)err);
}

static hetc_plugin_status_t out_of_memory(void) {
  return cu_status(HETC_PLUGIN_STATUS_OUT_OF_MEMORY, "%s: out of memory", cu_plugin_name);
}

/* ------------------------------------------------------------------------ */
/* Probe and devices                                                        */
/* ------------------------------------------------------------------------ */

/* ocl-icd's vendor directory: OCL_ICD_VENDORS when set, else the system's. */
static const char *vendors_directory(void) {
  const char *vendors = getenv("OCL_ICD_VENDORS");
  return vendors && *vendors ? vendors : "/etc/OpenCL/vendors";
}

/* Looks for a registered driver without loading one (no clGetPlatformIDs):
 * every process that opens the plugin registry probes every plugin, and a
 * driver loaded there (PoCL brings LLVM with its signal handlers and
 * threads) would change processes that never run a kernel. */
hetc_plugin_status_t cu_rt_probe(void) {
  const char *vendors = vendors_directory();
  struct stat st;
  if (stat(vendors, &st) == 0 && S_ISDIR(st.st_mode)) {
    DIR *dir = opendir(vendors);
    int found = 0;
    for (struct dirent *e; dir && !found && (e = readdir(dir));) {
      const size_t n = strlen(e->d_name);
      found = n > 4 && strcmp(e->d_name + n - 4, ".icd") == 0;
    }
    if (dir) closedir(dir);
    if (found) return NULL;
  } else if (getenv("OCL_ICD_VENDORS") && *getenv("OCL_ICD_VENDORS")) {
    return NULL; /* OCL_ICD_VENDORS naming one .icd file or a driver library */
  }
  return cu_status(HETC_PLUGIN_STATUS_UNAVAILABLE,
                   "%s: no OpenCL ICD registered in %s (install pocl-opencl-icd to run the cuda plugin's "
                   "kernels on the CPU)",
                   cu_plugin_name, vendors);
}

/* A platform or device string, malloc()ed; "?" when the query fails. */
static char *info_string(cl_platform_id platform, cl_device_id device, cl_uint what) {
  size_t n = 0;
  cl_int err = device ? clGetDeviceInfo(device, what, 0, NULL, &n) : clGetPlatformInfo(platform, what, 0, NULL, &n);
  char *s = malloc(err == CL_SUCCESS && n > 0 ? n + 1 : 2);
  if (!s) return NULL;
  if (err != CL_SUCCESS || n == 0) return strcpy(s, "?");
  err = device ? clGetDeviceInfo(device, what, n, s, NULL) : clGetPlatformInfo(platform, what, n, s, NULL);
  if (err != CL_SUCCESS) return strcpy(s, "?");
  s[n] = 0;
  return s;
}

static uint64_t device_ulong(cl_device_id id, cl_device_info what) {
  cl_ulong v = 0;
  return clGetDeviceInfo(id, what, sizeof(v), &v, NULL) == CL_SUCCESS ? (uint64_t)v : 0;
}

static uint64_t device_uint(cl_device_id id, cl_device_info what) {
  cl_uint v = 0;
  return clGetDeviceInfo(id, what, sizeof(v), &v, NULL) == CL_SUCCESS ? (uint64_t)v : 0;
}

static uint64_t device_size(cl_device_id id, cl_device_info what) {
  size_t v = 0;
  return clGetDeviceInfo(id, what, sizeof(v), &v, NULL) == CL_SUCCESS ? (uint64_t)v : 0;
}

static int64_t min_i64(int64_t a, int64_t b) { return a < b ? a : b; }

/* A GPU limit capped by the OpenCL device's (0: the device did not say). */
static int32_t capped(int64_t gpu, uint64_t device) {
  return (int32_t)(device > 0 && device < (uint64_t)gpu ? (int64_t)device : gpu);
}

/* PoCL's CPU device runs work-groups on its own threads; like every
 * plugin's threads they follow the host's setting unless the user set
 * PoCL's variable. Takes effect only before the driver is loaded, i.e.
 * before the process's first clGetPlatformIDs. */
static void size_driver_threads(void) {
  if (!cu_host || !cu_host->thread_count) return;
  char count[16];
  snprintf(count, sizeof(count), "%d", (int)cu_host->thread_count());
  setenv("POCL_MAX_PTHREAD_COUNT", count, 0);
}

/* The first device of the first platform that has one. */
static hetc_plugin_status_t find_device(cl_platform_id *out_platform, cl_device_id *out_id) {
  size_driver_threads();
  cl_platform_id platforms[RT_MAX_PLATFORMS];
  cl_uint num_platforms = 0;
  cl_int err = clGetPlatformIDs(RT_MAX_PLATFORMS, platforms, &num_platforms);
  if (err == -1001 /* CL_PLATFORM_NOT_FOUND_KHR */ || (err == CL_SUCCESS && num_platforms == 0))
    return cu_status(HETC_PLUGIN_STATUS_UNAVAILABLE, "%s: the OpenCL ICD loader found no platform (drivers in %s)",
                     cu_plugin_name, vendors_directory());
  if (err != CL_SUCCESS)
    return cu_status(HETC_PLUGIN_STATUS_UNAVAILABLE, "%s: clGetPlatformIDs: %s (%d)", cu_plugin_name,
                     cl_error_name(err), (int)err);
  if (num_platforms > RT_MAX_PLATFORMS) num_platforms = RT_MAX_PLATFORMS;
  for (cl_uint p = 0; p < num_platforms; ++p) {
    cl_device_id ids[RT_MAX_DEVICES];
    cl_uint n = 0;
    if (clGetDeviceIDs(platforms[p], CL_DEVICE_TYPE_ALL, RT_MAX_DEVICES, ids, &n) == CL_SUCCESS && n > 0) {
      *out_platform = platforms[p];
      *out_id = ids[0];
      return NULL;
    }
  }
  return cu_status(HETC_PLUGIN_STATUS_UNAVAILABLE, "%s: %u OpenCL platform(s) but no device on any of them",
                   cu_plugin_name, (unsigned)num_platforms);
}

static void fill_limits(cl_device_id id, cu_limits_t *l) {
  memset(l, 0, sizeof(*l));
  l->cc_major = RT_CC_MAJOR;
  l->cc_minor = RT_CC_MINOR;
  l->sm_count = (int32_t)device_uint(id, CL_DEVICE_MAX_COMPUTE_UNITS);
  l->max_threads_per_block = capped(RT_MAX_THREADS_PER_BLOCK, device_size(id, CL_DEVICE_MAX_WORK_GROUP_SIZE));
  size_t items[3] = {0, 0, 0};
  clGetDeviceInfo(id, CL_DEVICE_MAX_WORK_ITEM_SIZES, sizeof(items), items, NULL);
  static const int32_t gpu_block_dims[3] = {1024, 1024, 64};
  for (int d = 0; d < 3; ++d) l->max_block_dims[d] = capped(gpu_block_dims[d], items[d]);
  l->max_grid_dims[0] = INT32_MAX;
  l->max_grid_dims[1] = 65535;
  l->max_grid_dims[2] = 65535;
  const uint64_t local = device_ulong(id, CL_DEVICE_LOCAL_MEM_SIZE);
  l->shared_bytes_per_block = capped(RT_SHARED_PER_BLOCK, local);
  l->shared_bytes_per_sm = capped(RT_SHARED_PER_SM, local);
  l->registers_per_block = RT_REGISTERS;
  l->registers_per_sm = RT_REGISTERS;
  l->warp_size = RT_WARP_SIZE;
  l->clock_khz = (int32_t)min_i64((int64_t)device_uint(id, CL_DEVICE_MAX_CLOCK_FREQUENCY) * 1000, INT32_MAX);
  l->l2_bytes = (int64_t)device_ulong(id, CL_DEVICE_GLOBAL_MEM_CACHE_SIZE);
  l->memory_bytes = (int64_t)device_ulong(id, CL_DEVICE_GLOBAL_MEM_SIZE);
}

/* "<prefix><platform>: <device>" and "<plugin>|<platform>|<device>|<driver>". */
static hetc_plugin_status_t name_device(cu_device_t *dev) {
  char *platform = info_string(dev->rt->platform, NULL, CL_PLATFORM_NAME);
  char *device = info_string(NULL, dev->rt->id, CL_DEVICE_NAME);
  char *driver = info_string(NULL, dev->rt->id, CL_DRIVER_VERSION);
  hetc_plugin_status_t s = NULL;
  if (platform && device && driver) {
    const size_t n = strlen(cu_plugin_name) + strlen(platform) + strlen(device) + strlen(driver) + 64;
    dev->name = malloc(n);
    dev->fingerprint = malloc(n);
    if (dev->name) snprintf(dev->name, n, "cuda kernels on OpenCL: %s: %s", platform, device);
    if (dev->fingerprint) snprintf(dev->fingerprint, n, "%s|%s|%s|%s", cu_plugin_name, platform, device, driver);
  }
  dev->arch = strdup("opencl");
  if (!dev->name || !dev->fingerprint || !dev->arch) s = out_of_memory();
  free(platform);
  free(device);
  free(driver);
  return s;
}

static hetc_plugin_status_t open_device(cu_device_t *dev) {
  cu_rt_device_t *rt = calloc(1, sizeof(*rt));
  if (!rt) return out_of_memory();
  pthread_mutex_init(&rt->cache_lock, NULL);
  pthread_mutex_init(&rt->launch_lock, NULL);
  dev->rt = rt;
  hetc_plugin_status_t s = find_device(&rt->platform, &rt->id);
  if (s) return s;
  cl_int err;
  rt->context = clCreateContext(NULL, 1, &rt->id, NULL, NULL, &err);
  if (err != CL_SUCCESS) {
    rt->context = NULL;
    return cu_status(HETC_PLUGIN_STATUS_UNAVAILABLE, "%s: clCreateContext: %s (%d)", cu_plugin_name,
                     cl_error_name(err), (int)err);
  }
  rt->queue = clCreateCommandQueue(rt->context, rt->id, CL_QUEUE_PROFILING_ENABLE, &err);
  if (err != CL_SUCCESS) {
    rt->queue = NULL;
    return cu_status(HETC_PLUGIN_STATUS_UNAVAILABLE, "%s: clCreateCommandQueue: %s (%d)", cu_plugin_name,
                     cl_error_name(err), (int)err);
  }
  s = name_device(dev);
  if (s) return s;
  fill_limits(rt->id, &dev->limits);
  cu_device_describe(dev);
  return NULL;
}

static void close_device(cu_device_t *dev) {
  cu_rt_device_t *rt = dev->rt;
  if (rt) {
    for (int i = 0; i < 2; ++i)
      if (rt->marks[i]) clReleaseEvent(rt->marks[i]);
    /* Modules still referenced here are a leak in the caller; the driver
     * objects go with the context either way. */
    for (cu_module_t *m = rt->modules, *next; m; m = next) {
      next = m->next;
      for (cu_function_t *f = m->functions, *fn; f; f = fn) {
        fn = f->next;
        clReleaseKernel(f->kernel);
        free(f);
      }
      clReleaseProgram(m->program);
      free(m);
    }
    if (rt->queue) clReleaseCommandQueue(rt->queue);
    if (rt->context) clReleaseContext(rt->context);
    pthread_mutex_destroy(&rt->cache_lock);
    pthread_mutex_destroy(&rt->launch_lock);
    free(rt);
  }
  free(dev->name);
  free(dev->fingerprint);
  free(dev->arch);
  memset(dev, 0, sizeof(*dev));
}

hetc_plugin_status_t cu_rt_devices_open(cu_device_t **out, int32_t *out_count) {
  *out = NULL;
  *out_count = 0;
  cu_device_t *devices = calloc(1, sizeof(*devices));
  if (!devices) return out_of_memory();
  hetc_plugin_status_t s = open_device(&devices[0]);
  if (s) {
    close_device(&devices[0]);
    free(devices);
    return s;
  }
  *out = devices;
  *out_count = 1;
  return NULL;
}

void cu_rt_devices_close(cu_device_t *devices, int32_t count) {
  if (!devices) return;
  for (int32_t i = 0; i < count; ++i) close_device(&devices[i]);
  free(devices);
}

const char *cu_rt_prelude(void) { return hpc_gpu_dialect_opencl(); }

/* ------------------------------------------------------------------------ */
/* Modules and functions                                                    */
/* ------------------------------------------------------------------------ */

/* The build log of a failed build, malloc()ed (NULL when there is none). */
static char *build_log(cl_program program, cl_device_id id) {
  size_t n = 0;
  if (clGetProgramBuildInfo(program, id, CL_PROGRAM_BUILD_LOG, 0, NULL, &n) != CL_SUCCESS || n == 0) return NULL;
  char *log = malloc(n + 1);
  if (!log) return NULL;
  if (clGetProgramBuildInfo(program, id, CL_PROGRAM_BUILD_LOG, n, log, NULL) != CL_SUCCESS) {
    free(log);
    return NULL;
  }
  log[n] = 0;
  while (n > 0 && (log[n - 1] == '\n' || log[n - 1] == ' ' || log[n - 1] == 0)) log[--n] = 0;
  return log;
}

/* Builds prelude + kernel text. A "#line 1" between them makes the build
 * log's line numbers those of the kernel text. */
static hetc_plugin_status_t build_program(cu_device_t *dev, const char *source, size_t length, cl_program *out) {
  cu_rt_device_t *rt = dev->rt;
  const char *prelude = cu_rt_prelude();
  const char *parts[3] = {prelude, "\n#line 1\n", source};
  const size_t lengths[3] = {strlen(prelude), strlen(parts[1]), length};
  cl_int err;
  cl_program program = clCreateProgramWithSource(rt->context, 3, parts, lengths, &err);
  if (err != CL_SUCCESS)
    return cu_status(err == CL_OUT_OF_HOST_MEMORY ? HETC_PLUGIN_STATUS_OUT_OF_MEMORY : HETC_PLUGIN_STATUS_BUILD_FAILED,
                     "%s: clCreateProgramWithSource: %s (%d)", cu_plugin_name, cl_error_name(err), (int)err);
  err = clBuildProgram(program, 1, &rt->id, RT_BUILD_OPTIONS, NULL, NULL);
  if (err != CL_SUCCESS) {
    char *log = build_log(program, rt->id);
    hetc_plugin_status_t s =
        cu_status(HETC_PLUGIN_STATUS_BUILD_FAILED, "%s: building the kernels for %s failed (%s):\n%s", cu_plugin_name,
                  dev->name, cl_error_name(err), log && *log ? log : "(no build log)");
    free(log);
    clReleaseProgram(program);
    return s;
  }
  *out = program;
  return NULL;
}

/* The cached module with this key, its reference taken; under cache_lock. */
static cu_module_t *find_module(cu_rt_device_t *rt, uint64_t key, size_t length) {
  for (cu_module_t *m = rt->modules; m; m = m->next) {
    if (m->key == key && m->length == length) {
      ++m->refs;
      return m;
    }
  }
  return NULL;
}

hetc_plugin_status_t cu_rt_module_get(cu_device_t *dev, const char *source, size_t length, const void *image,
                                      size_t image_length, cu_module_t **out) {
  (void)image; /* this runtime never packages binaries */
  (void)image_length;
  *out = NULL;
  cu_rt_device_t *rt = dev->rt;
  const uint64_t key = hpc_fnv1a64(source, length, HPC_FNV1A64_INIT);
  pthread_mutex_lock(&rt->cache_lock);
  cu_module_t *module = find_module(rt, key, length);
  pthread_mutex_unlock(&rt->cache_lock);
  if (module) {
    *out = module;
    return NULL;
  }

  /* Built outside the lock: builds are the parallel stage of tuning. Two
   * threads building one source both succeed; the later keeps the first's. */
  cl_program program = NULL;
  hetc_plugin_status_t s = build_program(dev, source, length, &program);
  if (s) return s;
  cu_module_t *made = calloc(1, sizeof(*made));
  if (!made) {
    clReleaseProgram(program);
    return out_of_memory();
  }
  made->dev = dev;
  made->key = key;
  made->length = length;
  made->refs = 1;
  made->program = program;
  pthread_mutex_lock(&rt->cache_lock);
  module = find_module(rt, key, length);
  if (!module) {
    made->next = rt->modules;
    rt->modules = made;
    module = made;
    made = NULL;
  }
  pthread_mutex_unlock(&rt->cache_lock);
  if (made) {
    clReleaseProgram(made->program);
    free(made);
  }
  *out = module;
  return NULL;
}

void cu_rt_module_release(cu_device_t *dev, cu_module_t *module) {
  if (!module) return;
  cu_rt_device_t *rt = dev->rt;
  pthread_mutex_lock(&rt->cache_lock);
  const int last = --module->refs == 0;
  if (last) {
    cu_module_t **link = &rt->modules;
    while (*link && *link != module) link = &(*link)->next;
    if (*link) *link = module->next;
  }
  pthread_mutex_unlock(&rt->cache_lock);
  if (!last) return;
  for (cu_function_t *f = module->functions, *next; f; f = next) {
    next = f->next;
    clReleaseKernel(f->kernel);
    free(f);
  }
  clReleaseProgram(module->program);
  free(module);
}

static int32_t clamp_i32(uint64_t v) { return v > (uint64_t)INT32_MAX ? INT32_MAX : (int32_t)v; }

hetc_plugin_status_t cu_rt_function(cu_module_t *module, const char *name, cu_function_t **out,
                                    cu_function_attrs_t *attrs) {
  *out = NULL;
  cu_rt_device_t *rt = module->dev->rt;
  hetc_plugin_status_t s = NULL;
  pthread_mutex_lock(&rt->cache_lock);
  cu_function_t *fn = module->functions;
  while (fn && strcmp(fn->name, name) != 0) fn = fn->next;
  if (!fn) {
    cl_int err;
    cl_kernel kernel = clCreateKernel(module->program, name, &err);
    const size_t n = strlen(name);
    if (err != CL_SUCCESS) {
      s = cl_failure(err, "clCreateKernel", name);
    } else if (!(fn = malloc(sizeof(*fn) + n + 1))) {
      clReleaseKernel(kernel);
      s = out_of_memory();
    } else {
      fn->kernel = kernel;
      memcpy(fn->name, name, n + 1);
      size_t threads = 0, required[3] = {0, 0, 0};
      cl_ulong shared = 0, local = 0;
      clGetKernelWorkGroupInfo(kernel, rt->id, CL_KERNEL_WORK_GROUP_SIZE, sizeof(threads), &threads, NULL);
      /* Like the Driver API's MAX_THREADS_PER_BLOCK under __launch_bounds__:
       * no more than the block HK_KERNEL declares, nor than the device's. */
      clGetKernelWorkGroupInfo(kernel, rt->id, CL_KERNEL_COMPILE_WORK_GROUP_SIZE, sizeof(required), required, NULL);
      const uint64_t declared = (uint64_t)required[0] * required[1] * required[2];
      if (declared > 0 && declared < threads) threads = (size_t)declared;
      if (threads > (size_t)module->dev->limits.max_threads_per_block)
        threads = (size_t)module->dev->limits.max_threads_per_block;
      clGetKernelWorkGroupInfo(kernel, rt->id, CL_KERNEL_LOCAL_MEM_SIZE, sizeof(shared), &shared, NULL);
      clGetKernelWorkGroupInfo(kernel, rt->id, CL_KERNEL_PRIVATE_MEM_SIZE, sizeof(local), &local, NULL);
      fn->attrs.registers = 0; /* OpenCL does not say */
      fn->attrs.max_threads = clamp_i32(threads);
      fn->attrs.shared_bytes = clamp_i32(shared);
      fn->attrs.local_bytes = clamp_i32(local);
      fn->next = module->functions;
      module->functions = fn;
    }
  }
  pthread_mutex_unlock(&rt->cache_lock);
  if (s) return s;
  if (attrs) *attrs = fn->attrs;
  *out = fn;
  return NULL;
}

void cu_rt_module_images(const cu_module_t *module, void **ptx, size_t *ptx_length, void **binary,
                         size_t *binary_length) {
  (void)module;
  if (ptx) *ptx = NULL;
  if (ptx_length) *ptx_length = 0;
  if (binary) *binary = NULL;
  if (binary_length) *binary_length = 0;
}

/* ------------------------------------------------------------------------ */
/* Memory                                                                   */
/* ------------------------------------------------------------------------ */

hetc_plugin_status_t cu_rt_alloc(cu_device_t *dev, uint64_t bytes, cu_mem_t **out) {
  *out = NULL;
  cu_mem_t *mem = calloc(1, sizeof(*mem));
  if (!mem) return out_of_memory();
  if (bytes > (uint64_t)SIZE_MAX) {
    free(mem);
    return cu_status(HETC_PLUGIN_STATUS_OUT_OF_MEMORY, "%s: cannot allocate %llu bytes", cu_plugin_name,
                     (unsigned long long)bytes);
  }
  cl_int err;
  mem->mem = clCreateBuffer(dev->rt->context, CL_MEM_READ_WRITE, bytes ? (size_t)bytes : 4, NULL, &err);
  if (err != CL_SUCCESS) {
    free(mem);
    /* More than one buffer may hold is the device's memory running out too. */
    const int32_t code = err == CL_INVALID_BUFFER_SIZE || err == CL_MEM_OBJECT_ALLOCATION_FAILURE ||
                                 err == CL_OUT_OF_RESOURCES || err == CL_OUT_OF_HOST_MEMORY
                             ? HETC_PLUGIN_STATUS_OUT_OF_MEMORY
                             : HETC_PLUGIN_STATUS_RUNTIME_FAILED;
    return cu_status(code, "%s: clCreateBuffer of %llu bytes on %s: %s (%d)", cu_plugin_name,
                     (unsigned long long)bytes, dev->name, cl_error_name(err), (int)err);
  }
  mem->bytes = bytes;
  *out = mem;
  return NULL;
}

void cu_rt_free(cu_device_t *dev, cu_mem_t *mem) {
  (void)dev;
  if (!mem) return;
  clReleaseMemObject(mem->mem);
  free(mem);
}

/* INVALID_ARGUMENT unless [offset, offset + bytes) lies inside the buffer. */
static hetc_plugin_status_t check_range(const cu_mem_t *mem, uint64_t offset, uint64_t bytes, const char *what) {
  if (offset <= mem->bytes && bytes <= mem->bytes - offset) return NULL;
  return cu_status(HETC_PLUGIN_STATUS_INVALID_ARGUMENT, "%s: %s of %llu bytes at %llu outside a buffer of %llu bytes",
                   cu_plugin_name, what, (unsigned long long)bytes, (unsigned long long)offset,
                   (unsigned long long)mem->bytes);
}

hetc_plugin_status_t cu_rt_write(cu_device_t *dev, cu_mem_t *mem, uint64_t offset, const void *src, uint64_t bytes) {
  hetc_plugin_status_t s = check_range(mem, offset, bytes, "write");
  if (s || bytes == 0) return s;
  cl_int err = clEnqueueWriteBuffer(dev->rt->queue, mem->mem, CL_TRUE, (size_t)offset, (size_t)bytes, src, 0, NULL,
                                    NULL);
  return err == CL_SUCCESS ? NULL : cl_failure(err, "clEnqueueWriteBuffer", NULL);
}

hetc_plugin_status_t cu_rt_read(cu_device_t *dev, const cu_mem_t *mem, uint64_t offset, void *dst, uint64_t bytes) {
  hetc_plugin_status_t s = check_range(mem, offset, bytes, "read");
  if (s || bytes == 0) return s;
  cl_int err =
      clEnqueueReadBuffer(dev->rt->queue, mem->mem, CL_TRUE, (size_t)offset, (size_t)bytes, dst, 0, NULL, NULL);
  return err == CL_SUCCESS ? NULL : cl_failure(err, "clEnqueueReadBuffer", NULL);
}

hetc_plugin_status_t cu_rt_copy(cu_device_t *dev, cu_mem_t *dst, uint64_t dst_offset, const cu_mem_t *src,
                                uint64_t src_offset, uint64_t bytes) {
  hetc_plugin_status_t s = check_range(src, src_offset, bytes, "copy from");
  if (!s) s = check_range(dst, dst_offset, bytes, "copy to");
  if (s || bytes == 0) return s;
  cl_int err = clEnqueueCopyBuffer(dev->rt->queue, src->mem, dst->mem, (size_t)src_offset, (size_t)dst_offset,
                                   (size_t)bytes, 0, NULL, NULL);
  if (err == CL_SUCCESS) err = clFinish(dev->rt->queue);
  return err == CL_SUCCESS ? NULL : cl_failure(err, "clEnqueueCopyBuffer", NULL);
}

/* ------------------------------------------------------------------------ */
/* Launches, marks, synchronization                                         */
/* ------------------------------------------------------------------------ */

hetc_plugin_status_t cu_rt_launch(cu_device_t *dev, cu_function_t *fn, const uint32_t grid[3],
                                  const uint32_t block[3], cu_mem_t *const *args, int32_t num_args) {
  size_t global[3], local[3];
  for (int d = 0; d < 3; ++d) {
    if (grid[d] == 0 || block[d] == 0)
      return cu_status(HETC_PLUGIN_STATUS_INVALID_ARGUMENT, "%s: launching %s: empty grid {%u,%u,%u} x block {%u,%u,%u}",
                       cu_plugin_name, fn->name, (unsigned)grid[0], (unsigned)grid[1], (unsigned)grid[2],
                       (unsigned)block[0], (unsigned)block[1], (unsigned)block[2]);
    global[d] = (size_t)grid[d] * block[d];
    local[d] = block[d];
  }
  for (int32_t i = 0; i < num_args; ++i)
    if (!args[i])
      return cu_status(HETC_PLUGIN_STATUS_INVALID_ARGUMENT, "%s: launching %s: argument %d is no buffer",
                       cu_plugin_name, fn->name, (int)i);
  cu_rt_device_t *rt = dev->rt;
  cl_int err = CL_SUCCESS;
  const char *call = "clSetKernelArg";
  pthread_mutex_lock(&rt->launch_lock);
  for (int32_t i = 0; i < num_args && err == CL_SUCCESS; ++i)
    err = clSetKernelArg(fn->kernel, (cl_uint)i, sizeof(cl_mem), &args[i]->mem);
  if (err == CL_SUCCESS) {
    call = "clEnqueueNDRangeKernel";
    err = clEnqueueNDRangeKernel(rt->queue, fn->kernel, 3, NULL, global, local, 0, NULL, NULL);
  }
  pthread_mutex_unlock(&rt->launch_lock);
  if (err == CL_SUCCESS) return NULL;
  const int limits =
      err == CL_INVALID_WORK_GROUP_SIZE || err == CL_INVALID_WORK_ITEM_SIZE || err == CL_OUT_OF_RESOURCES;
  return cu_status(limits ? HETC_PLUGIN_STATUS_DEVICE_LIMITS
                   : err == CL_MEM_OBJECT_ALLOCATION_FAILURE || err == CL_OUT_OF_HOST_MEMORY
                       ? HETC_PLUGIN_STATUS_OUT_OF_MEMORY
                       : HETC_PLUGIN_STATUS_RUNTIME_FAILED,
                   "%s: launching %s (grid {%u,%u,%u}, block {%u,%u,%u}, %d buffers): %s: %s (%d)", cu_plugin_name,
                   fn->name, (unsigned)grid[0], (unsigned)grid[1], (unsigned)grid[2], (unsigned)block[0],
                   (unsigned)block[1], (unsigned)block[2], (int)num_args, call, cl_error_name(err), (int)err);
}

hetc_plugin_status_t cu_rt_mark(cu_device_t *dev, int32_t which) {
  if (which != 0 && which != 1)
    return cu_status(HETC_PLUGIN_STATUS_INVALID_ARGUMENT, "%s: mark %d: marks are 0 (begin) and 1 (end)",
                     cu_plugin_name, (int)which);
  cu_rt_device_t *rt = dev->rt;
  cl_event event = NULL;
  pthread_mutex_lock(&rt->launch_lock);
  cl_int err = clEnqueueMarkerWithWaitList(rt->queue, 0, NULL, &event);
  if (err == CL_SUCCESS) {
    if (rt->marks[which]) clReleaseEvent(rt->marks[which]);
    rt->marks[which] = event;
  }
  pthread_mutex_unlock(&rt->launch_lock);
  return err == CL_SUCCESS ? NULL : cl_failure(err, "clEnqueueMarkerWithWaitList", NULL);
}

/* When the marker completed, in the device's nanoseconds: its END, or its
 * START where a driver does not record END for markers. */
static cl_int mark_time(cl_event event, cl_ulong *out) {
  cl_int err = clGetEventProfilingInfo(event, CL_PROFILING_COMMAND_END, sizeof(*out), out, NULL);
  if (err != CL_SUCCESS || *out == 0)
    err = clGetEventProfilingInfo(event, CL_PROFILING_COMMAND_START, sizeof(*out), out, NULL);
  return err;
}

hetc_plugin_status_t cu_rt_elapsed(cu_device_t *dev, double *seconds) {
  *seconds = 0;
  cu_rt_device_t *rt = dev->rt;
  cl_event marks[2];
  pthread_mutex_lock(&rt->launch_lock);
  for (int i = 0; i < 2; ++i) {
    marks[i] = rt->marks[i];
    if (marks[i]) clRetainEvent(marks[i]);
  }
  pthread_mutex_unlock(&rt->launch_lock);
  hetc_plugin_status_t s = NULL;
  if (!marks[0] || !marks[1]) {
    s = cu_status(HETC_PLUGIN_STATUS_INVALID_ARGUMENT, "%s: elapsed time asked before marks 0 and 1 were set",
                  cu_plugin_name);
  } else {
    cl_ulong begin = 0, end = 0;
    cl_int err = clWaitForEvents(1, &marks[1]);
    if (err == CL_SUCCESS) err = mark_time(marks[0], &begin);
    if (err == CL_SUCCESS) err = mark_time(marks[1], &end);
    if (err != CL_SUCCESS)
      s = cl_failure(err, "timing between marks", NULL);
    else if (end < begin)
      s = cu_status(HETC_PLUGIN_STATUS_RUNTIME_FAILED,
                    "%s: timing between marks: the end mark (%llu ns) precedes the begin mark (%llu ns); was mark 1 "
                    "set before mark 0?",
                    cu_plugin_name, (unsigned long long)end, (unsigned long long)begin);
    else
      *seconds = (double)(end - begin) * 1e-9;
  }
  for (int i = 0; i < 2; ++i)
    if (marks[i]) clReleaseEvent(marks[i]);
  return s;
}

hetc_plugin_status_t cu_rt_sync(cu_device_t *dev) {
  cl_int err = clFinish(dev->rt->queue);
  return err == CL_SUCCESS ? NULL : cl_failure(err, "clFinish", NULL);
}
