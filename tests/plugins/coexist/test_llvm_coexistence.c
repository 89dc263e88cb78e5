/* One LLVM per process: the cpu backend (LLVM 15 ORC JIT) and PoCL (which
 * links the same LLVM 15 to compile OpenCL C) work in one process, in both
 * orders, without command-line option clashes. Until the OpenCL plugin
 * exists, PoCL is driven through the ICD loader directly. Skips (exit 77)
 * when the cpu target or a PoCL platform is not there, saying which. */
#include <CL/cl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "kernel_check.h"

#define SKIP 77

static hetc_registry_t *registry;
static hetc_plugin_entry_t *cpu;
static cl_platform_id pocl;

/* A small conv through the cpu plugin, checked against the reference. */
static void run_cpu_kernel(uint64_t seed) {
  hetc_plugin_tensor_t inputs[1] = {{HETC_PLUGIN_DTYPE_FLOAT32, 4, {1, 5, 9, 7}, {0, 0}}};
  hetc_plugin_workload_t w;
  memset(&w, 0, sizeof(w));
  w.op = HETC_PLUGIN_OP_CONV2D;
  w.num_inputs = 1;
  w.inputs = inputs;
  w.output = (hetc_plugin_tensor_t){HETC_PLUGIN_DTYPE_FLOAT32, 4, {1, 11, 9, 7}, {0, 0}};
  w.kernel[0] = w.kernel[1] = 3;
  w.strides[0] = w.strides[1] = 1;
  w.dilation[0] = w.dilation[1] = 1;
  for (int p = 0; p < 4; ++p) w.padding[p] = 1;
  w.groups = 1;
  w.epilogue.has_bias = 1;
  w.epilogue.activation = HETC_PLUGIN_ACT_RELU;
  kernel_check_result_t result;
  hetc_status_t status = kernel_check_run(cpu, &w, 0, NULL, seed, 0, &result);
  if (status) fail_msg("cpu kernel: %s", hetc_status_message(status));
  printf("cpu plugin conv: max rel error %.2e\n", result.max_relative_error);
  assert_true(result.max_relative_error <= 1e-4);
}

/* Builds and runs an OpenCL C kernel on PoCL: PoCL compiles it with LLVM. */
static void run_pocl_kernel(float scale) {
  cl_int err;
  cl_device_id device;
  assert_int_equal(clGetDeviceIDs(pocl, CL_DEVICE_TYPE_ALL, 1, &device, NULL), CL_SUCCESS);
  cl_context context = clCreateContext(NULL, 1, &device, NULL, NULL, &err);
  assert_int_equal(err, CL_SUCCESS);
  cl_command_queue queue = clCreateCommandQueue(context, device, 0, &err);
  assert_int_equal(err, CL_SUCCESS);
  char source[256];
  snprintf(source, sizeof(source),
           "__kernel void axpy(__global const float *x, __global float *y) {"
           "  size_t i = get_global_id(0); y[i] = %.1ff * x[i] + y[i]; }",
           (double)scale);
  const char *text = source;
  cl_program program = clCreateProgramWithSource(context, 1, &text, NULL, &err);
  assert_int_equal(err, CL_SUCCESS);
  err = clBuildProgram(program, 1, &device, NULL, NULL, NULL);
  if (err != CL_SUCCESS) {
    char log[4096] = "";
    clGetProgramBuildInfo(program, device, CL_PROGRAM_BUILD_LOG, sizeof(log), log, NULL);
    fail_msg("PoCL build failed (%d): %s", err, log);
  }
  cl_kernel kernel = clCreateKernel(program, "axpy", &err);
  assert_int_equal(err, CL_SUCCESS);
  float x[64], y[64];
  for (int i = 0; i < 64; ++i) x[i] = (float)i, y[i] = 1.0f;
  cl_mem bx = clCreateBuffer(context, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, sizeof(x), x, &err);
  cl_mem by = clCreateBuffer(context, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, sizeof(y), y, &err);
  clSetKernelArg(kernel, 0, sizeof(cl_mem), &bx);
  clSetKernelArg(kernel, 1, sizeof(cl_mem), &by);
  size_t global = 64;
  assert_int_equal(clEnqueueNDRangeKernel(queue, kernel, 1, NULL, &global, NULL, 0, NULL, NULL), CL_SUCCESS);
  assert_int_equal(clEnqueueReadBuffer(queue, by, CL_TRUE, 0, sizeof(y), y, 0, NULL, NULL), CL_SUCCESS);
  for (int i = 0; i < 64; ++i) assert_true(y[i] == scale * (float)i + 1.0f);
  printf("PoCL kernel (scale %.1f): ok\n", (double)scale);
  clReleaseMemObject(bx);
  clReleaseMemObject(by);
  clReleaseKernel(kernel);
  clReleaseProgram(program);
  clReleaseCommandQueue(queue);
  clReleaseContext(context);
}

static void cpu_then_pocl_then_cpu(void **state) {
  (void)state;
  run_cpu_kernel(1);
  run_pocl_kernel(2.0f);
  run_cpu_kernel(2);
  run_pocl_kernel(3.0f);
}

int main(void) {
  if (hetc_registry_open(&registry)) return 1;
  hetc_status_t status = hetc_registry_target(registry, "cpu", &cpu);
  if (status) {
    printf("SKIP: the cpu target is not available: %s\n", hetc_status_message(status));
    return SKIP;
  }
  cl_platform_id platforms[8];
  cl_uint count = 0;
  if (clGetPlatformIDs(8, platforms, &count) != CL_SUCCESS) count = 0;
  for (cl_uint i = 0; i < count && !pocl; ++i) {
    char name[256] = "";
    clGetPlatformInfo(platforms[i], CL_PLATFORM_NAME, sizeof(name), name, NULL);
    if (strstr(name, "Portable Computing Language")) pocl = platforms[i];
  }
  if (!pocl) {
    printf("SKIP: no PoCL platform (install pocl-opencl-icd)\n");
    return SKIP;
  }
  const struct CMUnitTest tests[] = {cmocka_unit_test(cpu_then_pocl_then_cpu)};
  int failed = cmocka_run_group_tests(tests, NULL, NULL);
  hetc_registry_free(registry);
  return failed;
}
