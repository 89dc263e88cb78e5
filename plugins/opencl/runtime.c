/* Programs: building OpenCL C through the device's compiler, an in-process
 * cache of built programs and an on-disk cache of their binaries.
 *
 * Disk cache: ${XDG_CACHE_HOME:-$HOME/.cache}/hetc/opencl/<key>.bin, where
 * the key hashes the source, the build options and the device fingerprint
 * (platform, device, driver version): a new driver never loads an old
 * binary. A cache entry that fails to load is rebuilt from source. A
 * driver that keeps its own builds (ocl_device_t.driver_keeps_builds) gets
 * no disk cache from the plugin. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ocl.h"
#include "plugin_files.h"

/* Every kernel is built with these: denormals kept, IEEE division, so that
 * results match the reference within 1e-4 on every device. */
#define OCL_BUILD_OPTIONS "-cl-std=CL1.2"

const char *ocl_error_name(cl_int error) {
  switch (error) {
#define NAME(x) case x: return #x
    NAME(CL_DEVICE_NOT_FOUND);
    NAME(CL_DEVICE_NOT_AVAILABLE);
    NAME(CL_COMPILER_NOT_AVAILABLE);
    NAME(CL_MEM_OBJECT_ALLOCATION_FAILURE);
    NAME(CL_OUT_OF_RESOURCES);
    NAME(CL_OUT_OF_HOST_MEMORY);
    NAME(CL_PROFILING_INFO_NOT_AVAILABLE);
    NAME(CL_BUILD_PROGRAM_FAILURE);
    NAME(CL_INVALID_VALUE);
    NAME(CL_INVALID_PLATFORM);
    NAME(CL_INVALID_DEVICE);
    NAME(CL_INVALID_CONTEXT);
    NAME(CL_INVALID_COMMAND_QUEUE);
    NAME(CL_INVALID_MEM_OBJECT);
    NAME(CL_INVALID_BINARY);
    NAME(CL_INVALID_BUILD_OPTIONS);
    NAME(CL_INVALID_PROGRAM);
    NAME(CL_INVALID_PROGRAM_EXECUTABLE);
    NAME(CL_INVALID_KERNEL_NAME);
    NAME(CL_INVALID_KERNEL);
    NAME(CL_INVALID_ARG_INDEX);
    NAME(CL_INVALID_ARG_VALUE);
    NAME(CL_INVALID_ARG_SIZE);
    NAME(CL_INVALID_KERNEL_ARGS);
    NAME(CL_INVALID_WORK_DIMENSION);
    NAME(CL_INVALID_WORK_GROUP_SIZE);
    NAME(CL_INVALID_WORK_ITEM_SIZE);
    NAME(CL_INVALID_GLOBAL_OFFSET);
    NAME(CL_INVALID_EVENT);
    NAME(CL_INVALID_BUFFER_SIZE);
    NAME(CL_INVALID_GLOBAL_WORK_SIZE);
#undef NAME
    default: return "an OpenCL error";
  }
}

/* ------------------------------------------------------------------------ */

void ocl_program_cache_init(ocl_program_cache_t *cache) {
  memset(cache, 0, sizeof(*cache));
  pthread_mutex_init(&cache->lock, NULL);
  cache->dir = hpc_cache_dir("opencl");
  if (!cache->dir && ocl_host && ocl_host->log)
    ocl_host->log(HETC_PLUGIN_LOG_WARNING, OCL_PLUGIN_NAME,
                  "cannot create the program cache in $XDG_CACHE_HOME or ~/.cache; programs are rebuilt in every "
                  "process");
}

void ocl_program_cache_fini(ocl_program_cache_t *cache) {
  ocl_program_t *p = cache->programs;
  while (p) {
    ocl_program_t *next = p->next;
    clReleaseProgram(p->program);
    free(p);
    p = next;
  }
  cache->programs = NULL;
  free(cache->dir);
  cache->dir = NULL;
  pthread_mutex_destroy(&cache->lock);
}

static uint64_t program_key(const ocl_device_t *dev, const char *source, size_t length) {
  uint64_t h = hpc_fnv1a64(source, length, HPC_FNV1A64_INIT);
  h = hpc_fnv1a64(OCL_BUILD_OPTIONS, strlen(OCL_BUILD_OPTIONS), h);
  return hpc_fnv1a64(dev->fingerprint, strlen(dev->fingerprint), h);
}

unsigned char *ocl_program_binary(const ocl_program_t *program, size_t *out_length) {
  size_t size = 0;
  if (clGetProgramInfo(program->program, CL_PROGRAM_BINARY_SIZES, sizeof(size), &size, NULL) !=
          CL_SUCCESS ||
      size == 0)
    return NULL;
  unsigned char *data = malloc(size);
  if (!data) return NULL;
  unsigned char *pointers[1] = {data};
  if (clGetProgramInfo(program->program, CL_PROGRAM_BINARIES, sizeof(pointers), pointers, NULL) !=
      CL_SUCCESS) {
    free(data);
    return NULL;
  }
  *out_length = size;
  return data;
}

/* The program built from a binary, or NULL when the device refuses it (a
 * stale or foreign binary: the caller builds from source). */
static cl_program build_from_binary(ocl_device_t *dev, const unsigned char *binary, size_t length) {
  cl_int err, binary_status = CL_SUCCESS;
  cl_program program = clCreateProgramWithBinary(dev->context, 1, &dev->id, &length, &binary,
                                                 &binary_status, &err);
  if (err != CL_SUCCESS || binary_status != CL_SUCCESS) {
    if (program) clReleaseProgram(program);
    return NULL;
  }
  if (clBuildProgram(program, 1, &dev->id, OCL_BUILD_OPTIONS, NULL, NULL) != CL_SUCCESS) {
    clReleaseProgram(program);
    return NULL;
  }
  return program;
}

static hetc_plugin_status_t build_from_source(ocl_device_t *dev, const char *source, size_t length,
                                              cl_program *out) {
  cl_int err;
  cl_program program = clCreateProgramWithSource(dev->context, 1, &source, &length, &err);
  if (err != CL_SUCCESS)
    return ocl_status(HETC_PLUGIN_STATUS_BUILD_FAILED, "opencl: clCreateProgramWithSource: %s (%d)",
                      ocl_error_name(err), err);
  err = clBuildProgram(program, 1, &dev->id, OCL_BUILD_OPTIONS, NULL, NULL);
  if (err != CL_SUCCESS) {
    size_t log_size = 0;
    clGetProgramBuildInfo(program, dev->id, CL_PROGRAM_BUILD_LOG, 0, NULL, &log_size);
    char *log = malloc(log_size + 1);
    if (log) {
      log[0] = 0;
      clGetProgramBuildInfo(program, dev->id, CL_PROGRAM_BUILD_LOG, log_size, log, NULL);
      log[log_size] = 0;
    }
    hetc_plugin_status_t s = ocl_status(HETC_PLUGIN_STATUS_BUILD_FAILED,
                                        "opencl: building the kernel for %s failed (%s):\n%s", dev->name,
                                        ocl_error_name(err), log ? log : "(no build log)");
    free(log);
    clReleaseProgram(program);
    return s;
  }
  *out = program;
  return NULL;
}

static void disk_path(const ocl_program_cache_t *cache, uint64_t key, char *path, size_t size) {
  snprintf(path, size, "%s/%016llx.bin", cache->dir, (unsigned long long)key);
}

hetc_plugin_status_t ocl_program_get(ocl_program_cache_t *cache, ocl_device_t *dev, const char *source,
                                     size_t length, const unsigned char *binary, size_t binary_length,
                                     ocl_program_t **out_program) {
  const uint64_t key = program_key(dev, source, length);
  pthread_mutex_lock(&cache->lock);
  for (ocl_program_t *p = cache->programs; p; p = p->next) {
    if (p->key == key && p->context == dev->context) {
      ++p->refs;
      pthread_mutex_unlock(&cache->lock);
      *out_program = p;
      return NULL;
    }
  }
  pthread_mutex_unlock(&cache->lock);

  /* Built outside the lock: builds are the parallel stage of tuning. Two
   * threads building the same source both succeed; the second keeps the
   * first's program. */
  cl_program program = binary ? build_from_binary(dev, binary, binary_length) : NULL;
  const int use_disk = cache->dir && !dev->driver_keeps_builds;
  char path[4200] = "";
  int from_disk = 0;
  if (!program && use_disk) {
    disk_path(cache, key, path, sizeof(path));
    size_t n = 0;
    unsigned char *cached = (unsigned char *)hpc_read_file(path, &n);
    if (cached) {
      program = build_from_binary(dev, cached, n);
      from_disk = program != NULL;
    }
    free(cached);
  }
  if (!program) {
    hetc_plugin_status_t s = build_from_source(dev, source, length, &program);
    if (s) return s;
  }
  ocl_program_t *made = calloc(1, sizeof(*made));
  if (!made) {
    clReleaseProgram(program);
    return ocl_status(HETC_PLUGIN_STATUS_OUT_OF_MEMORY, "opencl: out of memory");
  }
  made->key = key;
  made->context = dev->context;
  made->program = program;
  made->refs = 1;
  if (use_disk && !from_disk) {
    size_t n = 0;
    unsigned char *bin = ocl_program_binary(made, &n);
    if (bin) {
      if (!path[0]) disk_path(cache, key, path, sizeof(path));
      /* A cache that cannot be written only costs rebuilds. */
      (void)hetc_kit_write_file_atomic(path, bin, n);
      free(bin);
    }
  }
  pthread_mutex_lock(&cache->lock);
  for (ocl_program_t *p = cache->programs; p; p = p->next) {
    if (p->key == key && p->context == dev->context) {
      ++p->refs;
      pthread_mutex_unlock(&cache->lock);
      clReleaseProgram(made->program);
      free(made);
      *out_program = p;
      return NULL;
    }
  }
  made->next = cache->programs;
  cache->programs = made;
  pthread_mutex_unlock(&cache->lock);
  *out_program = made;
  return NULL;
}

void ocl_program_release(ocl_program_cache_t *cache, ocl_program_t *program) {
  if (!program) return;
  pthread_mutex_lock(&cache->lock);
  /* The last artifact gone, the program goes too: a tuning run builds
   * thousands of configs once each, and the disk cache serves rebuilds. */
  int last = --program->refs == 0;
  if (last) {
    ocl_program_t **link = &cache->programs;
    while (*link && *link != program) link = &(*link)->next;
    if (*link) *link = program->next;
  }
  pthread_mutex_unlock(&cache->lock);
  if (last) {
    clReleaseProgram(program->program);
    free(program);
  }
}
