/* Run-time loading of the CUDA Driver API (libcuda.so.1) and NVRTC.
 *
 * Linking either library would make the plugin's dlopen fail on any machine
 * without the driver or the toolkit, with a loader message that names neither
 * the cause nor the fix. Opening them here instead lets the plugin load
 * everywhere and report, per library, the files tried, the symbol missing or
 * the driver's own error. Each library is opened once per process under
 * pthread_once; the tables and messages are then read-only, so any thread
 * may use them. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* dlinfo */
#endif
#include "cuda_loader.h"

#include <dlfcn.h>
#include <link.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The tables are filled by copying dlsym's void * into function-pointer
 * members, which POSIX makes valid by requiring both to share a
 * representation. */
_Static_assert(sizeof(void *) == sizeof(void (*)(void)), "function pointers must fit a void *");

typedef struct cul_symbol_t {
  const char *name;     /* the exported symbol <cuda.h>/<nvrtc.h> map the call to */
  const char *fallback; /* an older export with the same signature, or NULL */
  size_t offset;        /* of the member in the table */
  bool optional;        /* NULL in the table when missing, instead of refusing the library */
} cul_symbol_t;

/* member, exported name, fallback, optional. Member names go through
 * <cuda.h>'s renaming macros in both offsetof and the type checks below, so
 * they stay consistent with the header whatever the macros say; the exported
 * names are literal, checked against CUDA 13's #defines. */
#define CUL_DRIVER_SYMBOLS(X)                                                         \
  X(cuInit, "cuInit", NULL, false)                                                    \
  X(cuDriverGetVersion, "cuDriverGetVersion", NULL, false)                            \
  X(cuGetErrorName, "cuGetErrorName", NULL, false)                                    \
  X(cuGetErrorString, "cuGetErrorString", NULL, false)                                \
  X(cuDeviceGetCount, "cuDeviceGetCount", NULL, false)                                \
  X(cuDeviceGet, "cuDeviceGet", NULL, false)                                          \
  X(cuDeviceGetName, "cuDeviceGetName", NULL, false)                                  \
  X(cuDeviceGetAttribute, "cuDeviceGetAttribute", NULL, false)                        \
  X(cuDeviceGetUuid, "cuDeviceGetUuid_v2", "cuDeviceGetUuid", false)                  \
  X(cuDeviceTotalMem, "cuDeviceTotalMem_v2", NULL, false)                             \
  X(cuDevicePrimaryCtxRetain, "cuDevicePrimaryCtxRetain", NULL, false)                \
  X(cuDevicePrimaryCtxRelease, "cuDevicePrimaryCtxRelease_v2", NULL, false)           \
  X(cuCtxPushCurrent, "cuCtxPushCurrent_v2", NULL, false)                             \
  X(cuCtxPopCurrent, "cuCtxPopCurrent_v2", NULL, false)                               \
  X(cuCtxSynchronize, "cuCtxSynchronize", NULL, false)                                \
  X(cuMemAlloc, "cuMemAlloc_v2", NULL, false)                                         \
  X(cuMemFree, "cuMemFree_v2", NULL, false)                                           \
  X(cuMemcpyHtoD, "cuMemcpyHtoD_v2", NULL, false)                                     \
  X(cuMemcpyDtoH, "cuMemcpyDtoH_v2", NULL, false)                                     \
  X(cuMemcpyDtoD, "cuMemcpyDtoD_v2", NULL, false)                                     \
  X(cuMemsetD8, "cuMemsetD8_v2", NULL, false)                                         \
  X(cuModuleLoadDataEx, "cuModuleLoadDataEx", NULL, false)                            \
  X(cuModuleGetFunction, "cuModuleGetFunction", NULL, false)                          \
  X(cuModuleUnload, "cuModuleUnload", NULL, false)                                    \
  X(cuFuncGetAttribute, "cuFuncGetAttribute", NULL, false)                            \
  X(cuLaunchKernel, "cuLaunchKernel", NULL, false)                                    \
  X(cuStreamCreate, "cuStreamCreate", NULL, false)                                    \
  X(cuStreamSynchronize, "cuStreamSynchronize", NULL, false)                          \
  X(cuStreamDestroy, "cuStreamDestroy_v2", NULL, false)                               \
  X(cuEventCreate, "cuEventCreate", NULL, false)                                      \
  X(cuEventRecord, "cuEventRecord", NULL, false)                                      \
  X(cuEventSynchronize, "cuEventSynchronize", NULL, false)                            \
  X(cuEventElapsedTime, "cuEventElapsedTime_v2", "cuEventElapsedTime", false)         \
  X(cuEventDestroy, "cuEventDestroy_v2", NULL, false)

#define CUL_NVRTC_SYMBOLS(X)                                                          \
  X(nvrtcVersion, "nvrtcVersion", NULL, false)                                        \
  X(nvrtcGetErrorString, "nvrtcGetErrorString", NULL, false)                          \
  X(nvrtcCreateProgram, "nvrtcCreateProgram", NULL, false)                            \
  X(nvrtcDestroyProgram, "nvrtcDestroyProgram", NULL, false)                          \
  X(nvrtcCompileProgram, "nvrtcCompileProgram", NULL, false)                          \
  X(nvrtcGetPTXSize, "nvrtcGetPTXSize", NULL, false)                                  \
  X(nvrtcGetPTX, "nvrtcGetPTX", NULL, false)                                          \
  X(nvrtcGetCUBINSize, "nvrtcGetCUBINSize", NULL, false)                              \
  X(nvrtcGetCUBIN, "nvrtcGetCUBIN", NULL, false)                                      \
  X(nvrtcGetProgramLogSize, "nvrtcGetProgramLogSize", NULL, false)                    \
  X(nvrtcGetProgramLog, "nvrtcGetProgramLog", NULL, false)                            \
  X(nvrtcGetNumSupportedArchs, "nvrtcGetNumSupportedArchs", NULL, true)               \
  X(nvrtcGetSupportedArchs, "nvrtcGetSupportedArchs", NULL, true)

#define CUL_DRIVER_ENTRY(member, name, fallback, optional) \
  {name, fallback, offsetof(cul_driver_t, member), optional},
#define CUL_NVRTC_ENTRY(member, name, fallback, optional) \
  {name, fallback, offsetof(cul_nvrtc_t, member), optional},

static const cul_symbol_t driver_symbols[] = {CUL_DRIVER_SYMBOLS(CUL_DRIVER_ENTRY)};
static const cul_symbol_t nvrtc_symbols[] = {CUL_NVRTC_SYMBOLS(CUL_NVRTC_ENTRY)};

#if defined(__GNUC__)
/* A hand-written member type that drifted from the toolkit's prototype would
 * call into the library with the wrong arguments and no diagnostic; compare
 * each against the header's declaration (typeof only: no symbol reference). */
#define CUL_CHECK(table, member)                                                                 \
  _Static_assert(__builtin_types_compatible_p(__typeof__(&member),                               \
                                              __typeof__(((table *)0)->member)),                 \
                 #member " in " #table " differs from the toolkit header");
#define CUL_DRIVER_CHECK(member, name, fallback, optional) CUL_CHECK(cul_driver_t, member)
#define CUL_NVRTC_CHECK(member, name, fallback, optional) CUL_CHECK(cul_nvrtc_t, member)
CUL_DRIVER_SYMBOLS(CUL_DRIVER_CHECK)
CUL_NVRTC_SYMBOLS(CUL_NVRTC_CHECK)
#endif

/* Fills table from handle and returns the first required symbol missing
 * (NULL when none). */
static const char *resolve(void *handle, const cul_symbol_t *symbols, size_t count, void *table) {
  const char *missing = NULL;
  for (size_t i = 0; i < count; ++i) {
    void *address = dlsym(handle, symbols[i].name);
    if (!address && symbols[i].fallback) address = dlsym(handle, symbols[i].fallback);
    if (!address && !symbols[i].optional && !missing) missing = symbols[i].name;
    memcpy((char *)table + symbols[i].offset, &address, sizeof address);
  }
  return missing;
}

/* Appends to a message buffer, truncating silently: the messages are
 * diagnostics, a cut-off tail is better than none. */
#if defined(__GNUC__)
__attribute__((format(printf, 3, 4)))
#endif
static void append(char *buffer, size_t size, const char *format, ...) {
  size_t used = strlen(buffer);
  if (used + 1 >= size) return;
  va_list args;
  va_start(args, format);
  vsnprintf(buffer + used, size - used, format, args);
  va_end(args);
}

const char *cul_error_text(const cul_driver_t *d, CUresult r, char *buf, size_t size) {
  if (!buf || size == 0) return "CUDA error";
  const char *name = NULL, *text = NULL;
  if (d && d->cuGetErrorName && d->cuGetErrorName(r, &name) != CUDA_SUCCESS) name = NULL;
  if (d && d->cuGetErrorString && d->cuGetErrorString(r, &text) != CUDA_SUCCESS) text = NULL;
  if (name && text)
    snprintf(buf, size, "%s (%s)", name, text);
  else if (name)
    snprintf(buf, size, "%s", name);
  else
    snprintf(buf, size, "CUDA error %d", (int)r);
  return buf;
}

const char *cul_nvrtc_error_text(const cul_nvrtc_t *n, nvrtcResult r) {
  const char *text = n && n->nvrtcGetErrorString ? n->nvrtcGetErrorString(r) : NULL;
  return text ? text : "NVRTC error";
}

/* ---- driver ---- */

static pthread_once_t driver_once = PTHREAD_ONCE_INIT;
static cul_driver_t driver_table;
static bool driver_ready;
static char driver_why[1024];

static void driver_open(void) {
  const char *file = getenv("HETC_CUDA_DRIVER_LIBRARY");
  const bool from_env = file && *file;
  if (!from_env) file = "libcuda.so.1";
  void *handle = dlopen(file, RTLD_NOW | RTLD_LOCAL);
  if (!handle) {
    const char *error = dlerror();
    snprintf(driver_why, sizeof driver_why, "no NVIDIA driver: %s%s not found (%s)",
             from_env ? "HETC_CUDA_DRIVER_LIBRARY=" : "", file, error ? error : "unknown error");
    return;
  }
  cul_driver_t *d = &driver_table;
  const char *missing =
      resolve(handle, driver_symbols, sizeof driver_symbols / sizeof driver_symbols[0], d);
  char text[256];

  /* The version is checked before the symbols: a pre-11.0 driver lacks
   * several of them, and "too old, update the driver" is the useful message. */
  if (d->cuDriverGetVersion) {
    CUresult r = d->cuDriverGetVersion(&d->version);
    if (r != CUDA_SUCCESS) {
      snprintf(driver_why, sizeof driver_why, "cuDriverGetVersion failed: %s",
               cul_error_text(d, r, text, sizeof text));
      return;
    }
    if (d->version < CUL_MIN_DRIVER_VERSION) {
      snprintf(driver_why, sizeof driver_why,
               "NVIDIA driver is too old: it speaks CUDA %d.%d, the plugin needs at least %d.%d",
               d->version / 1000, d->version % 1000 / 10, CUL_MIN_DRIVER_VERSION / 1000,
               CUL_MIN_DRIVER_VERSION % 1000 / 10);
      return;
    }
  }
  if (missing) {
    snprintf(driver_why, sizeof driver_why, "%s lacks %s (driver too old?)", file, missing);
    return;
  }
  CUresult r = d->cuInit(0);
  if (r != CUDA_SUCCESS) {
    snprintf(driver_why, sizeof driver_why, "cuInit failed: %s",
             cul_error_text(d, r, text, sizeof text));
    return;
  }
  driver_ready = true;
}

const cul_driver_t *cul_driver(const char **why) {
  pthread_once(&driver_once, driver_open);
  if (why) *why = driver_ready ? NULL : driver_why;
  return driver_ready ? &driver_table : NULL;
}

/* ---- NVRTC ---- */

static pthread_once_t nvrtc_once = PTHREAD_ONCE_INIT;
static cul_nvrtc_t nvrtc_table;
static bool nvrtc_ready;
static char nvrtc_why[4096];

/* Sonames first, newest first: a program built against CUDA 13 headers wants
 * the 13 ABI, and the loader's own search (LD_LIBRARY_PATH, ld.so.cache) is
 * what the user configured. The toolkit directories catch installs the
 * loader was never told about. */
static const char *const nvrtc_names[] = {"libnvrtc.so.13", "libnvrtc.so.12", "libnvrtc.so.11.2",
                                          "libnvrtc.so"};
static const char *const nvrtc_dir_names[] = {"libnvrtc.so.13", "libnvrtc.so.12", "libnvrtc.so"};
#define CUL_MAX_CANDIDATES 12 /* 4 sonames + 2 directories x 3 names, with room */

/* Tries one file; on success fills nvrtc_table. Records the loader's error
 * or the missing symbol for the failure message. */
static bool nvrtc_try(const char *file, char *error, size_t error_size, char *refused,
                      size_t refused_size) {
  void *handle = dlopen(file, RTLD_NOW | RTLD_LOCAL);
  if (!handle) {
    const char *e = dlerror();
    snprintf(error, error_size, "%s", e ? e : "unknown error");
    return false;
  }
  cul_nvrtc_t candidate = {0};
  const char *missing =
      resolve(handle, nvrtc_symbols, sizeof nvrtc_symbols / sizeof nvrtc_symbols[0], &candidate);
  if (missing) {
    /* The handle stays open: unloading a library whose initialisers have run
     * is riskier than the few pages it holds. */
    if (!*refused) snprintf(refused, refused_size, "%s (lacks %s)", file, missing);
    return false;
  }
  /* A bare soname says little in a message; the link map has the path the
   * loader actually picked. */
  struct link_map *map = NULL;
  const char *path = file;
  if (dlinfo(handle, RTLD_DI_LINKMAP, &map) == 0 && map && map->l_name && *map->l_name)
    path = map->l_name;
  snprintf(candidate.path, sizeof candidate.path, "%s", path);
  if (candidate.nvrtcVersion(&candidate.major, &candidate.minor) != NVRTC_SUCCESS)
    candidate.major = candidate.minor = 0;
  /* NVRTC dlopens libnvrtc-builtins.so.M.m by soname at its first compile,
   * which fails when NVRTC itself was found by path outside the loader's
   * search path. Loading the builtins from NVRTC's own directory now makes
   * that later lookup match by soname; when this fails NVRTC still searches
   * as usual, so the error is left for its compile log. */
  const char *slash = strrchr(candidate.path, '/');
  if (strchr(file, '/') && slash && candidate.major > 0) {
    char builtins[600];
    snprintf(builtins, sizeof builtins, "%.*s/libnvrtc-builtins.so.%d.%d",
             (int)(slash - candidate.path), candidate.path, candidate.major, candidate.minor);
    if (!dlopen(builtins, RTLD_NOW | RTLD_LOCAL)) (void)dlerror();
  }
  nvrtc_table = candidate;
  return true;
}

static void nvrtc_open(void) {
  char candidates[CUL_MAX_CANDIDATES][512];
  size_t count = 0;
  const char *override = getenv("HETC_NVRTC_LIBRARY");
  if (override && *override) {
    snprintf(candidates[count++], sizeof candidates[0], "%s", override);
  } else {
    for (size_t i = 0; i < sizeof nvrtc_names / sizeof nvrtc_names[0]; ++i)
      snprintf(candidates[count++], sizeof candidates[0], "%s", nvrtc_names[i]);
    const char *cuda_home = getenv("CUDA_HOME");
    const char *dirs[] = {cuda_home && *cuda_home ? cuda_home : NULL, "/usr/local/cuda"};
    for (size_t d = 0; d < sizeof dirs / sizeof dirs[0]; ++d) {
      if (!dirs[d]) continue;
      for (size_t i = 0; i < sizeof nvrtc_dir_names / sizeof nvrtc_dir_names[0]; ++i) {
        int n = snprintf(candidates[count], sizeof candidates[0], "%s/lib64/%s", dirs[d],
                         nvrtc_dir_names[i]);
        if (n > 0 && (size_t)n < sizeof candidates[0]) ++count; /* a truncated path is no path */
      }
    }
  }

  char error[1024] = "", refused[1024] = "";
  for (size_t i = 0; i < count; ++i) {
    if (nvrtc_try(candidates[i], error, sizeof error, refused, sizeof refused)) {
      nvrtc_ready = true;
      return;
    }
  }
  snprintf(nvrtc_why, sizeof nvrtc_why, "NVRTC not found (tried %s",
           override && *override ? "HETC_NVRTC_LIBRARY=" : "");
  for (size_t i = 0; i < count; ++i)
    append(nvrtc_why, sizeof nvrtc_why, "%s%s", i ? ", " : "", candidates[i]);
  append(nvrtc_why, sizeof nvrtc_why, ")");
  if (*error) append(nvrtc_why, sizeof nvrtc_why, ": %s", error);
  if (*refused) append(nvrtc_why, sizeof nvrtc_why, "%s refused %s", *error ? ";" : ":", refused);
}

const cul_nvrtc_t *cul_nvrtc(const char **why) {
  pthread_once(&nvrtc_once, nvrtc_open);
  if (why) *why = nvrtc_ready ? NULL : nvrtc_why;
  return nvrtc_ready ? &nvrtc_table : NULL;
}
