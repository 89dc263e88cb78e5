/* plugins/common/plugin_gpu_dialect.h -- the portability layer that lets
 * one generated kernel text compile as CUDA C (NVRTC) or as OpenCL C (see
 * plugin_gpu_dialect.c for the macros it defines). */
#ifndef HETC_PLUGINS_COMMON_PLUGIN_GPU_DIALECT_H_
#define HETC_PLUGINS_COMMON_PLUGIN_GPU_DIALECT_H_

/* The definitions to put before a kernel text; static strings. */
const char *hpc_gpu_dialect_cuda(void);
const char *hpc_gpu_dialect_opencl(void);

#endif /* HETC_PLUGINS_COMMON_PLUGIN_GPU_DIALECT_H_ */
