/* Devices: every device of every platform the ICD loader reports, each with
 * its own context and in-order profiling queue; descriptors from the
 * device's own queries; peak fp32 throughput measured with an FMA kernel. */
#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "ocl.h"

#define MAX_PLATFORMS 16
#define MAX_DEVICES_PER_PLATFORM 16

static char *platform_string(cl_platform_id platform, cl_platform_info what) {
  size_t n = 0;
  if (clGetPlatformInfo(platform, what, 0, NULL, &n) != CL_SUCCESS || n == 0) return strdup("?");
  char *s = malloc(n + 1);
  if (s && clGetPlatformInfo(platform, what, n, s, NULL) != CL_SUCCESS) s[0] = 0;
  if (s) s[n] = 0;
  return s;
}

static char *device_string(cl_device_id device, cl_device_info what) {
  size_t n = 0;
  if (clGetDeviceInfo(device, what, 0, NULL, &n) != CL_SUCCESS || n == 0) return strdup("?");
  char *s = malloc(n + 1);
  if (s && clGetDeviceInfo(device, what, n, s, NULL) != CL_SUCCESS) s[0] = 0;
  if (s) s[n] = 0;
  return s;
}

static uint64_t device_u64(cl_device_id device, cl_device_info what) {
  cl_ulong v = 0;
  clGetDeviceInfo(device, what, sizeof(v), &v, NULL);
  return v;
}

static uint32_t device_u32(cl_device_id device, cl_device_info what) {
  cl_uint v = 0;
  clGetDeviceInfo(device, what, sizeof(v), &v, NULL);
  return v;
}

static uint64_t device_size(cl_device_id device, cl_device_info what) {
  size_t v = 0;
  clGetDeviceInfo(device, what, sizeof(v), &v, NULL);
  return v;
}

/* PoCL's CPU device runs work-groups on its own threads; like every
 * plugin's threads they follow the host's setting, unless the user set
 * PoCL's own variable. Must run before the ICD loader loads the driver. */
static void size_driver_threads(void) {
  if (!ocl_host || !ocl_host->thread_count) return;
  char count[16];
  snprintf(count, sizeof(count), "%d", ocl_host->thread_count());
  setenv("POCL_MAX_PTHREAD_COUNT", count, 0);
}

int32_t ocl_driver_keeps_builds(const char *platform_name) {
  if (strcmp(platform_name, "Portable Computing Language") != 0) return 0;
  const char *kernel_cache = getenv("POCL_KERNEL_CACHE");
  return !kernel_cache || kernel_cache[0] != '0';
}

static const char *vendors_directory(void);

static hetc_plugin_status_t no_platform(void) {
  return ocl_status(HETC_PLUGIN_STATUS_UNAVAILABLE,
                    "opencl: the OpenCL ICD loader found no platform (no driver registered in %s; install "
                    "pocl-opencl-icd or a GPU's OpenCL driver)",
                    vendors_directory());
}

static hetc_plugin_status_t list_platforms(cl_platform_id *platforms, cl_uint *out_count) {
  size_driver_threads();
  cl_uint count = 0;
  cl_int err = clGetPlatformIDs(MAX_PLATFORMS, platforms, &count);
  if (err == -1001 /* CL_PLATFORM_NOT_FOUND_KHR */ || (err == CL_SUCCESS && count == 0)) return no_platform();
  if (err != CL_SUCCESS)
    return ocl_status(HETC_PLUGIN_STATUS_UNAVAILABLE, "opencl: clGetPlatformIDs failed: %s (%d)",
                      ocl_error_name(err), err);
  *out_count = count < MAX_PLATFORMS ? count : MAX_PLATFORMS;
  return NULL;
}

/* ocl-icd's vendor directory: OCL_ICD_VENDORS when set, else the system's. */
static const char *vendors_directory(void) {
  const char *vendors = getenv("OCL_ICD_VENDORS");
  return vendors && *vendors ? vendors : "/etc/OpenCL/vendors";
}

/* Looks for a registered driver without loading one: every process that
 * opens the plugin registry probes every plugin, and loading a driver
 * there (PoCL brings LLVM, its signal handlers and threads) would change
 * processes that never use OpenCL. instance_create enumerates for real. */
hetc_plugin_status_t ocl_devices_probe(void) {
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
    return NULL; /* a single .icd file or a driver library's name */
  }
  return no_platform();
}

/* The peak-FLOPS kernel: independent float8 FMA chains per work-item, far
 * more work-items than lanes, so that latency is hidden on any device. */
static const char peak_source[] =
    "/* hetc opencl plugin: fp32 FMA throughput probe. */\n"
    "__kernel void hetc_peak(__global float *out, float x, int iters) {\n"
    "  float8 a0 = (float8)(x), a1 = a0 + 1.f, a2 = a0 + 2.f, a3 = a0 + 3.f;\n"
    "  float8 a4 = a0 + 4.f, a5 = a0 + 5.f, a6 = a0 + 6.f, a7 = a0 + 7.f;\n"
    "  const float8 m = (float8)(0.9999f), c = (float8)(1e-4f);\n"
    "  for (int i = 0; i < iters; ++i) {\n"
    "    a0 = fma(a0, m, c); a1 = fma(a1, m, c); a2 = fma(a2, m, c); a3 = fma(a3, m, c);\n"
    "    a4 = fma(a4, m, c); a5 = fma(a5, m, c); a6 = fma(a6, m, c); a7 = fma(a7, m, c);\n"
    "  }\n"
    "  float8 s = a0 + a1 + a2 + a3 + a4 + a5 + a6 + a7;\n"
    "  out[get_global_id(0)] = s.s0 + s.s1 + s.s2 + s.s3 + s.s4 + s.s5 + s.s6 + s.s7;\n"
    "}\n";

/* Samples of about PEAK_SAMPLE_SECONDS, as many as fit in
 * PEAK_BUDGET_SECONDS per device (at least PEAK_MIN_SAMPLES), timed with
 * profiling events; the fastest counts. Load on a shared machine only ever
 * lowers a sample's rate, and on a CPU device a core is often taken for a
 * few milliseconds at a time: many short samples spread over the budget
 * catch a moment when every worker runs, where a few long ones would each
 * include the interruption (PoCL on two cores read 118 GFLOPS instead of
 * 233 that way). The driver keeps the best over runs as well
 * (driver/plugins/peaks.h). 0 when the probe cannot run (the descriptor
 * then says unknown). */
#define PEAK_SAMPLE_SECONDS 0.001
#define PEAK_BUDGET_SECONDS 0.025
#define PEAK_MIN_SAMPLES 4
#define PEAK_MAX_SAMPLES 64

static double now_seconds(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static double measure_peak(ocl_device_t *dev, ocl_program_cache_t *cache) {
  ocl_program_t *program = NULL;
  hetc_plugin_status_t s = ocl_program_get(cache, dev, peak_source, sizeof(peak_source) - 1, NULL, 0, &program);
  if (s) {
    ocl_host->log(HETC_PLUGIN_LOG_WARNING, OCL_PLUGIN_NAME, "%s: no peak measurement: %s", dev->name,
                  ocl_host->status_message(s));
    ocl_host->status_free(s);
    return 0;
  }
  const size_t items = (size_t)(dev->desc.compute_units > 0 ? dev->desc.compute_units : 1) * 256;
  const double flops_per_iter = (double)items * 8 * 8 * 2;
  cl_int iters = 64; /* the first run warms up (and may compile the work-group function) */
  cl_int err;
  cl_kernel kernel = clCreateKernel(program->program, "hetc_peak", &err);
  cl_mem out = clCreateBuffer(dev->context, CL_MEM_WRITE_ONLY, items * sizeof(float), NULL, &err);
  double best = 0, start = 0;
  if (kernel && out) {
    const float x = 0.5f;
    clSetKernelArg(kernel, 0, sizeof(out), &out);
    clSetKernelArg(kernel, 1, sizeof(x), &x);
    for (int run = 0; run <= PEAK_MAX_SAMPLES; ++run) {
      if (run == 1) start = now_seconds();
      if (run > PEAK_MIN_SAMPLES && now_seconds() - start > PEAK_BUDGET_SECONDS - PEAK_SAMPLE_SECONDS) break;
      clSetKernelArg(kernel, 2, sizeof(iters), &iters);
      cl_event ev = NULL;
      if (clEnqueueNDRangeKernel(dev->queue, kernel, 1, NULL, &items, NULL, 0, NULL, &ev) != CL_SUCCESS) break;
      clWaitForEvents(1, &ev);
      cl_ulong t0 = 0, t1 = 0;
      clGetEventProfilingInfo(ev, CL_PROFILING_COMMAND_START, sizeof(t0), &t0, NULL);
      clGetEventProfilingInfo(ev, CL_PROFILING_COMMAND_END, sizeof(t1), &t1, NULL);
      clReleaseEvent(ev);
      if (t1 <= t0) continue;
      const double gflops = flops_per_iter * iters / (double)(t1 - t0);
      if (run > 0 && gflops > best) best = gflops;
      /* The next sample sized to about PEAK_SAMPLE_SECONDS at the best
       * rate so far (the warm-up's own rate before there is one). */
      const double next = PEAK_SAMPLE_SECONDS * (best > 0 ? best : gflops) * 1e9 / flops_per_iter;
      iters = next < 16 ? 16 : next > (1 << 24) ? (1 << 24) : (cl_int)next;
    }
  }
  if (out) clReleaseMemObject(out);
  if (kernel) clReleaseKernel(kernel);
  ocl_program_release(cache, program);
  return best;
}

static hetc_plugin_status_t open_device(ocl_device_t *dev, cl_platform_id platform, cl_device_id id) {
  memset(dev, 0, sizeof(*dev));
  dev->platform = platform;
  dev->id = id;
  cl_int err;
  dev->context = clCreateContext(NULL, 1, &id, NULL, NULL, &err);
  if (err != CL_SUCCESS)
    return ocl_status(HETC_PLUGIN_STATUS_UNAVAILABLE, "opencl: clCreateContext: %s (%d)",
                      ocl_error_name(err), err);
  dev->queue = clCreateCommandQueue(dev->context, id, CL_QUEUE_PROFILING_ENABLE, &err);
  if (err != CL_SUCCESS)
    return ocl_status(HETC_PLUGIN_STATUS_UNAVAILABLE, "opencl: clCreateCommandQueue: %s (%d)",
                      ocl_error_name(err), err);

  dev->platform_name = platform_string(platform, CL_PLATFORM_NAME);
  char *device_name = device_string(id, CL_DEVICE_NAME);
  char *driver = device_string(id, CL_DRIVER_VERSION);
  dev->device_version = device_string(id, CL_DEVICE_VERSION);
  hetc_plugin_status_t s = NULL;
  if (dev->platform_name && device_name && driver && dev->device_version) {
    size_t n = strlen(dev->platform_name) + strlen(device_name) + strlen(driver) + 16;
    dev->name = malloc(n);
    dev->fingerprint = malloc(n);
    if (dev->name) snprintf(dev->name, n, "%s: %s", dev->platform_name, device_name);
    if (dev->fingerprint)
      snprintf(dev->fingerprint, n, "opencl|%s|%s|%s", dev->platform_name, device_name, driver);
  }
  if (!dev->name || !dev->fingerprint)
    s = ocl_status(HETC_PLUGIN_STATUS_OUT_OF_MEMORY, "opencl: out of memory");
  else dev->driver_keeps_builds = ocl_driver_keeps_builds(dev->platform_name);
  free(device_name);
  free(driver);
  if (s) return s;

  ocl_limits_t *l = &dev->limits;
  l->max_work_group_size = device_size(id, CL_DEVICE_MAX_WORK_GROUP_SIZE);
  size_t sizes[3] = {0, 0, 0};
  clGetDeviceInfo(id, CL_DEVICE_MAX_WORK_ITEM_SIZES, sizeof(sizes), sizes, NULL);
  for (int d = 0; d < 3; ++d) l->max_work_item_sizes[d] = sizes[d];
  l->local_memory_bytes = device_u64(id, CL_DEVICE_LOCAL_MEM_SIZE);
  l->max_mem_alloc_bytes = device_u64(id, CL_DEVICE_MAX_MEM_ALLOC_SIZE);
  l->max_constant_bytes = device_u64(id, CL_DEVICE_MAX_CONSTANT_BUFFER_SIZE);
  cl_device_local_mem_type local_type = CL_GLOBAL;
  clGetDeviceInfo(id, CL_DEVICE_LOCAL_MEM_TYPE, sizeof(local_type), &local_type, NULL);
  l->local_memory_dedicated = local_type == CL_LOCAL;
  l->preferred_vector_width = (int32_t)device_u32(id, CL_DEVICE_PREFERRED_VECTOR_WIDTH_FLOAT);
  l->clock_mhz = (int32_t)device_u32(id, CL_DEVICE_MAX_CLOCK_FREQUENCY);

  cl_device_type type = 0;
  clGetDeviceInfo(id, CL_DEVICE_TYPE, sizeof(type), &type, NULL);
  hetc_plugin_device_t *d = &dev->desc;
  d->struct_size = sizeof(*d);
  d->kind = (type & CL_DEVICE_TYPE_GPU)   ? HETC_PLUGIN_DEVICE_GPU
            : (type & CL_DEVICE_TYPE_CPU) ? HETC_PLUGIN_DEVICE_CPU
                                          : HETC_PLUGIN_DEVICE_ACCELERATOR;
  d->name = dev->name;
  d->fingerprint = dev->fingerprint;
  d->compute_units = (int32_t)device_u32(id, CL_DEVICE_MAX_COMPUTE_UNITS);
  d->simd_width_fp32 = l->preferred_vector_width > 0 ? l->preferred_vector_width : 1;
  d->memory_bytes = device_u64(id, CL_DEVICE_GLOBAL_MEM_SIZE);
  d->max_threads_per_group = (int32_t)(l->max_work_group_size < INT32_MAX ? l->max_work_group_size : INT32_MAX);
  d->local_memory_bytes = l->local_memory_bytes;
  /* The one cache OpenCL reports: the global memory cache (a GPU's L2, a
   * CPU driver's last level it sees). */
  d->cache_bytes[1] = device_u64(id, CL_DEVICE_GLOBAL_MEM_CACHE_SIZE);
  d->host_memory = 0;
  return NULL;
}

static void close_device(ocl_device_t *dev) {
  if (dev->queue) clReleaseCommandQueue(dev->queue);
  if (dev->context) clReleaseContext(dev->context);
  free(dev->name);
  free(dev->fingerprint);
  free(dev->platform_name);
  free(dev->device_version);
}

hetc_plugin_status_t ocl_devices_open(ocl_program_cache_t *cache, ocl_device_t **out_devices,
                                      int32_t *out_count) {
  *out_devices = NULL;
  *out_count = 0;
  cl_platform_id platforms[MAX_PLATFORMS];
  cl_uint num_platforms = 0;
  hetc_plugin_status_t s = list_platforms(platforms, &num_platforms);
  if (s) return s;
  ocl_device_t *devices = calloc((size_t)num_platforms * MAX_DEVICES_PER_PLATFORM, sizeof(*devices));
  if (!devices) return ocl_status(HETC_PLUGIN_STATUS_OUT_OF_MEMORY, "opencl: out of memory");
  int32_t count = 0;
  for (cl_uint p = 0; p < num_platforms && !s; ++p) {
    cl_device_id ids[MAX_DEVICES_PER_PLATFORM];
    cl_uint n = 0;
    if (clGetDeviceIDs(platforms[p], CL_DEVICE_TYPE_ALL, MAX_DEVICES_PER_PLATFORM, ids, &n) != CL_SUCCESS) continue;
    if (n > MAX_DEVICES_PER_PLATFORM) n = MAX_DEVICES_PER_PLATFORM;
    for (cl_uint i = 0; i < n && !s; ++i) {
      s = open_device(&devices[count], platforms[p], ids[i]);
      ++count;
    }
  }
  if (!s && count == 0)
    s = ocl_status(HETC_PLUGIN_STATUS_UNAVAILABLE, "opencl: %u OpenCL platform(s) but no device on any of them",
                   num_platforms);
  for (int32_t i = 0; i < count && !s; ++i)
    devices[i].desc.peak_gflops_fp32 = measure_peak(&devices[i], cache);
  if (s) {
    ocl_devices_free(devices, count);
    return s;
  }
  *out_devices = devices;
  *out_count = count;
  return NULL;
}

void ocl_devices_free(ocl_device_t *devices, int32_t count) {
  if (!devices) return;
  for (int32_t i = 0; i < count; ++i) close_device(&devices[i]);
  free(devices);
}
