/* plugins/cuda/cuda_loader.h -- the CUDA Driver API and NVRTC, opened at run time.
 *
 * The cuda plugin never links libcuda or libnvrtc: it dlopens them on first
 * use, so the plugin itself loads on a machine with no GPU, no driver or no
 * toolkit, and can say exactly which piece is missing instead of failing in
 * the dynamic linker. Each library is opened once per process and stays open
 * for the process lifetime (never dlclosed).
 *
 * The tables' members are named after the API functions. <cuda.h> #defines
 * many of those names to versioned ones (cuMemAlloc -> cuMemAlloc_v2), so the
 * preprocessor renames the members too; that is harmless as long as every
 * user includes <cuda.h> through this header, and it makes d->cuMemAlloc(...)
 * read exactly like a direct call. The loader resolves the exported symbol
 * each macro stands for, whatever the member ends up being called. */
#ifndef HETC_PLUGINS_CUDA_CUDA_LOADER_H_
#define HETC_PLUGINS_CUDA_CUDA_LOADER_H_

#include <stddef.h>

#include <cuda.h>
#include <nvrtc.h>

/* cuDriverGetVersion's encoding (1000 * major + 10 * minor). 11.0 brought
 * the primary-context calls with the _v2 release this plugin uses. */
#define CUL_MIN_DRIVER_VERSION 11000

typedef struct cul_driver_t {
  CUresult (*cuInit)(unsigned int flags);
  CUresult (*cuDriverGetVersion)(int *version);
  CUresult (*cuGetErrorName)(CUresult error, const char **name);
  CUresult (*cuGetErrorString)(CUresult error, const char **text);

  CUresult (*cuDeviceGetCount)(int *count);
  CUresult (*cuDeviceGet)(CUdevice *device, int ordinal);
  CUresult (*cuDeviceGetName)(char *name, int length, CUdevice device);
  CUresult (*cuDeviceGetAttribute)(int *value, CUdevice_attribute attribute, CUdevice device);
  /* cuDeviceGetUuid_v2, or cuDeviceGetUuid on drivers older than 11.4. */
  CUresult (*cuDeviceGetUuid)(CUuuid *uuid, CUdevice device);
  CUresult (*cuDeviceTotalMem)(size_t *bytes, CUdevice device);

  CUresult (*cuDevicePrimaryCtxRetain)(CUcontext *context, CUdevice device);
  CUresult (*cuDevicePrimaryCtxRelease)(CUdevice device);
  CUresult (*cuCtxPushCurrent)(CUcontext context);
  CUresult (*cuCtxPopCurrent)(CUcontext *context);
  CUresult (*cuCtxSynchronize)(void);

  CUresult (*cuMemAlloc)(CUdeviceptr *pointer, size_t bytes);
  CUresult (*cuMemFree)(CUdeviceptr pointer);
  CUresult (*cuMemcpyHtoD)(CUdeviceptr destination, const void *source, size_t bytes);
  CUresult (*cuMemcpyDtoH)(void *destination, CUdeviceptr source, size_t bytes);
  CUresult (*cuMemcpyDtoD)(CUdeviceptr destination, CUdeviceptr source, size_t bytes);
  CUresult (*cuMemsetD8)(CUdeviceptr destination, unsigned char value, size_t count);

  CUresult (*cuModuleLoadDataEx)(CUmodule *module, const void *image, unsigned int option_count,
                                 CUjit_option *options, void **option_values);
  CUresult (*cuModuleGetFunction)(CUfunction *function, CUmodule module, const char *name);
  CUresult (*cuModuleUnload)(CUmodule module);
  CUresult (*cuFuncGetAttribute)(int *value, CUfunction_attribute attribute, CUfunction function);
  CUresult (*cuLaunchKernel)(CUfunction function, unsigned int grid_x, unsigned int grid_y,
                             unsigned int grid_z, unsigned int block_x, unsigned int block_y,
                             unsigned int block_z, unsigned int shared_bytes, CUstream stream,
                             void **params, void **extra);

  CUresult (*cuStreamCreate)(CUstream *stream, unsigned int flags);
  CUresult (*cuStreamSynchronize)(CUstream stream);
  CUresult (*cuStreamDestroy)(CUstream stream);
  CUresult (*cuEventCreate)(CUevent *event, unsigned int flags);
  CUresult (*cuEventRecord)(CUevent event, CUstream stream);
  CUresult (*cuEventSynchronize)(CUevent event);
  /* cuEventElapsedTime_v2 (what CUDA 13 headers map the name to), or
   * the original cuEventElapsedTime on older drivers; same signature. */
  CUresult (*cuEventElapsedTime)(float *milliseconds, CUevent start, CUevent end);
  CUresult (*cuEventDestroy)(CUevent event);

  int version; /* cuDriverGetVersion's value, e.g. 13000 for CUDA 13.0 */
} cul_driver_t;

typedef struct cul_nvrtc_t {
  nvrtcResult (*nvrtcVersion)(int *major, int *minor);
  const char *(*nvrtcGetErrorString)(nvrtcResult result);
  nvrtcResult (*nvrtcCreateProgram)(nvrtcProgram *program, const char *source, const char *name,
                                    int header_count, const char *const *headers,
                                    const char *const *include_names);
  nvrtcResult (*nvrtcDestroyProgram)(nvrtcProgram *program);
  nvrtcResult (*nvrtcCompileProgram)(nvrtcProgram program, int option_count,
                                     const char *const *options);
  nvrtcResult (*nvrtcGetPTXSize)(nvrtcProgram program, size_t *size);
  nvrtcResult (*nvrtcGetPTX)(nvrtcProgram program, char *ptx);
  nvrtcResult (*nvrtcGetCUBINSize)(nvrtcProgram program, size_t *size);
  nvrtcResult (*nvrtcGetCUBIN)(nvrtcProgram program, char *cubin);
  nvrtcResult (*nvrtcGetProgramLogSize)(nvrtcProgram program, size_t *size);
  nvrtcResult (*nvrtcGetProgramLog)(nvrtcProgram program, char *log);
  /* Optional (NVRTC 11.2+): NULL when the library lacks them. */
  nvrtcResult (*nvrtcGetNumSupportedArchs)(int *count);
  nvrtcResult (*nvrtcGetSupportedArchs)(int *archs);

  int major, minor; /* nvrtcVersion */
  char path[512];   /* the file that was opened, for messages */
} cul_nvrtc_t;

/* Opens NVRTC once per process (thread-safe) and returns its table, or NULL
 * with *why (when why is not NULL) pointing at a message that names every
 * file tried and the last loader error, e.g.
 *   "NVRTC not found (tried libnvrtc.so.13, ..., /usr/local/cuda/lib64/libnvrtc.so): <dlerror>"
 * Search order: $HETC_NVRTC_LIBRARY when set and not empty (that exact file,
 * nothing else); otherwise libnvrtc.so.13, libnvrtc.so.12, libnvrtc.so.11.2,
 * libnvrtc.so through the loader's search path, then libnvrtc.so.13,
 * libnvrtc.so.12, libnvrtc.so in $CUDA_HOME/lib64 (when set) and in
 * /usr/local/cuda/lib64. A file lacking a required symbol is refused (the
 * message names the file and the symbol) and the search goes on.
 * The table and the message live for the process lifetime. */
const cul_nvrtc_t *cul_nvrtc(const char **why);

/* Opens libcuda.so.1 ($HETC_CUDA_DRIVER_LIBRARY when set and not empty, e.g.
 * a fake for tests) once per process, checks the driver's version and calls
 * cuInit(0). Returns the table, or NULL with *why (when why is not NULL) set
 * to one of:
 *   "no NVIDIA driver: libcuda.so.1 not found (<dlerror>)"
 *   "NVIDIA driver is too old: it speaks CUDA X.Y, the plugin needs at least 11.0"
 *   "libcuda.so.1 lacks cuLaunchKernel (driver too old?)"
 *   "cuInit failed: CUDA_ERROR_NO_DEVICE (no CUDA-capable device is detected)"
 * The table and the message live for the process lifetime. */
const cul_driver_t *cul_driver(const char **why);

/* "CUDA_ERROR_OUT_OF_MEMORY (out of memory)" for r, written into buf (size
 * bytes, truncated to fit) and returned; d may be NULL, in which case (or
 * when the driver does not know r) the text is "CUDA error <r>". */
const char *cul_error_text(const cul_driver_t *d, CUresult r, char *buf, size_t size);

/* nvrtcGetErrorString's text for r; n may be NULL ("NVRTC error"). */
const char *cul_nvrtc_error_text(const cul_nvrtc_t *n, nvrtcResult r);

#endif /* HETC_PLUGINS_CUDA_CUDA_LOADER_H_ */
