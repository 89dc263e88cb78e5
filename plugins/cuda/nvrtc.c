/* plugins/cuda/nvrtc.c -- the generated kernel text to PTX or a cubin, with NVRTC.
 *
 * The text the emitters write is compiled after the dialect prelude
 * (hpc_gpu_dialect_cuda) as CUDA C++17. "#line" directives make NVRTC's
 * diagnostics name the kernel text's own lines ("kernel.cu(12): error: ...")
 * and the prelude's as "hk_prelude.cu(N)", so a build log reads against the
 * emitted text without arithmetic. Each call makes and destroys
 * its own nvrtcProgram, so concurrent calls share nothing but the library. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cu.h"
#include "cuda_loader.h"

/* Kernels are checked against the reference executor, so the float math must
 * be IEEE: no flush-to-zero, correctly rounded division and square root.
 * These are NVRTC's defaults, spelled out so they cannot drift and so that
 * rt_driver.c's cache keys (which hash cu_nvrtc_options) change with them.
 * Contracting a*b+c into one FMA is allowed (one rounding instead of two).
 * Warnings are off: the log is only read when a build fails, and the
 * prelude's unused helpers would put two warnings before every error. */
#define CU_NVRTC_FIXED_OPTIONS(X)                                                                  \
  X("--std=c++17") X("--fmad=true") X("--ftz=false") X("--prec-div=true") X("--prec-sqrt=true") \
  X("--disable-warnings")
#define CU_AS_ELEMENT(option) option,
#define CU_AS_TEXT(option) option " "

const char cu_nvrtc_options[] = CU_NVRTC_FIXED_OPTIONS(CU_AS_TEXT);

/* How much of NVRTC's log goes into a status: enough for the first errors,
 * which are the ones that matter; a template bug can log thousands of lines. */
#define CU_NVRTC_LOG_MAX 4000

/* Around the prelude, so that diagnostics name each part's own lines. */
static const char prelude_directive[] = "#line 1 \"hk_prelude.cu\"\n";
static const char source_directive[] = "#line 1 \"kernel.cu\"\n";

/* The status for a failed nvrtcCompileProgram, with (the start of) its log. */
static hetc_plugin_status_t compile_failure(const cul_nvrtc_t *n, nvrtcProgram program, nvrtcResult r,
                                            const char *arch) {
  size_t size = 0;
  char *log = NULL;
  if (n->nvrtcGetProgramLogSize(program, &size) == NVRTC_SUCCESS && size > 1 && (log = malloc(size)) &&
      n->nvrtcGetProgramLog(program, log) != NVRTC_SUCCESS) {
    free(log);
    log = NULL;
  }
  size_t length = log ? strnlen(log, size) : 0;
  while (length > 0 && (log[length - 1] == '\n' || log[length - 1] == ' ')) --length;
  size_t shown = length;
  if (shown > CU_NVRTC_LOG_MAX) { /* at a line's end when there is one */
    const char *cut = memrchr(log, '\n', CU_NVRTC_LOG_MAX);
    shown = cut ? (size_t)(cut - log) : CU_NVRTC_LOG_MAX;
  }
  /* A missing libnvrtc-builtins is an installation problem, not the
   * kernel's; out of memory is neither. */
  const int32_t code = r == NVRTC_ERROR_BUILTIN_OPERATION_FAILURE ? HETC_PLUGIN_STATUS_UNAVAILABLE
                       : r == NVRTC_ERROR_OUT_OF_MEMORY          ? HETC_PLUGIN_STATUS_OUT_OF_MEMORY
                                                                 : HETC_PLUGIN_STATUS_BUILD_FAILED;
  hetc_plugin_status_t s =
      cu_status(code,
                "%s: NVRTC %d.%d could not compile the kernel for %s: %s; log (kernel.cu lines are the "
                "kernel text's, hk_prelude.cu the dialect's):\n%.*s%s",
                cu_plugin_name, n->major, n->minor, arch, cul_nvrtc_error_text(n, r),
                (int)shown, log ? log : "",
                !log ? "(no log)" : shown < length ? "\n[log truncated]" : "");
  free(log);
  return s;
}

hetc_plugin_status_t cu_nvrtc_compile(const char *source, size_t length, const char *arch, void **out_code,
                                      size_t *out_length) {
  *out_code = NULL;
  *out_length = 0;
  const char *why = NULL;
  const cul_nvrtc_t *n = cul_nvrtc(&why);
  if (!n) return cu_status(HETC_PLUGIN_STATUS_UNAVAILABLE, "%s: %s", cu_plugin_name, why);
  const int cubin = arch && strncmp(arch, "sm_", 3) == 0;
  if (!cubin && !(arch && strncmp(arch, "compute_", 8) == 0))
    return cu_status(HETC_PLUGIN_STATUS_INVALID_ARGUMENT,
                     "%s: NVRTC target \"%s\" is neither sm_XY (cubin) nor compute_XY (PTX)", cu_plugin_name,
                     arch ? arch : "(null)");

  /* The source need not be NUL-terminated; NVRTC wants one string. */
  const char *prelude = hpc_gpu_dialect_cuda();
  const size_t prelude_length = strlen(prelude);
  char *text = malloc(sizeof prelude_directive + prelude_length + sizeof source_directive + length + 2);
  if (!text) return cu_status(HETC_PLUGIN_STATUS_OUT_OF_MEMORY, "%s: out of memory", cu_plugin_name);
  char *end = stpcpy(stpcpy(stpcpy(text, prelude_directive), prelude), source_directive);
  memcpy(end, source, length);
  memcpy(end + length, "\n", 2);

  nvrtcProgram program = NULL;
  nvrtcResult r = n->nvrtcCreateProgram(&program, text, "kernel.cu", 0, NULL, NULL);
  free(text);
  if (r != NVRTC_SUCCESS)
    return cu_status(r == NVRTC_ERROR_OUT_OF_MEMORY ? HETC_PLUGIN_STATUS_OUT_OF_MEMORY : HETC_PLUGIN_STATUS_INTERNAL,
                     "%s: nvrtcCreateProgram failed: %s", cu_plugin_name, cul_nvrtc_error_text(n, r));

  char target[64];
  snprintf(target, sizeof target, "--gpu-architecture=%s", arch);
  const char *const options[] = {target, CU_NVRTC_FIXED_OPTIONS(CU_AS_ELEMENT)};
  hetc_plugin_status_t s = NULL;
  r = n->nvrtcCompileProgram(program, (int)(sizeof options / sizeof options[0]), options);
  if (r != NVRTC_SUCCESS) {
    s = compile_failure(n, program, r, arch);
  } else {
    size_t size = 0;
    char *code = NULL;
    r = cubin ? n->nvrtcGetCUBINSize(program, &size) : n->nvrtcGetPTXSize(program, &size);
    if (r == NVRTC_SUCCESS && size > 0 && (code = malloc(size + 1))) {
      r = cubin ? n->nvrtcGetCUBIN(program, code) : n->nvrtcGetPTX(program, code);
      code[size] = 0;
    }
    if (r == NVRTC_SUCCESS && size > 0 && !code) {
      s = cu_status(HETC_PLUGIN_STATUS_OUT_OF_MEMORY, "%s: out of memory", cu_plugin_name);
    } else if (r != NVRTC_SUCCESS || !code) {
      free(code);
      s = cu_status(HETC_PLUGIN_STATUS_INTERNAL, "%s: NVRTC compiled for %s but returned no %s: %s",
                    cu_plugin_name, arch, cubin ? "cubin" : "PTX",
                    r != NVRTC_SUCCESS ? cul_nvrtc_error_text(n, r) : "it is empty");
    } else {
      /* PTX's size counts its NUL; the length handed out never does. */
      *out_code = code;
      *out_length = cubin ? size : strlen(code);
    }
  }
  n->nvrtcDestroyProgram(&program);
  return s;
}
