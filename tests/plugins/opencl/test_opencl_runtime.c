/* The opencl plugin's program cache, white-box (its sources linked in, the
 * driver's host services as the host): a source the device compiler
 * rejects fails with BUILD_FAILED and the compiler's log as the message; a
 * source built once is served from memory, and after a new cache instance
 * from the disk cache (the program binary, keyed by source and device
 * fingerprint) unless the driver keeps its builds itself (PoCL); resize's
 * tables count against the device's constant memory, normalize's block
 * reduction and matmul's staged tiles against its local memory. Skips
 * (exit 77) without an OpenCL device. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "hetc/hetc.h"
#include "ocl.h"
#include "plugin_gpu_ops.h"
#include "plugins/host.h"

#define SKIP 77

static ocl_device_t *devices;
static int32_t num_devices;
static ocl_program_cache_t cache;

static const char broken[] =
    "__kernel void broken(__global float *out) {\n"
    "  out[get_global_id(0)] = undeclared_variable;\n"
    "}\n";

static void build_log_is_the_message(void **state) {
  (void)state;
  ocl_program_t *program = NULL;
  hetc_status_t s =
      (hetc_status_t)ocl_program_get(&cache, &devices[0], broken, sizeof(broken) - 1, NULL, 0, &program);
  assert_non_null(s);
  assert_null(program);
  assert_int_equal(hetc_status_code(s), HETC_PLUGIN_STATUS_BUILD_FAILED);
  const char *message = hetc_status_message(s);
  printf("%s\n", message);
  char want[512];
  snprintf(want, sizeof(want), "opencl: building the kernel for %s failed (CL_BUILD_PROGRAM_FAILURE):\n",
           devices[0].name);
  assert_int_equal(strncmp(message, want, strlen(want)), 0);
  /* The device compiler's own words follow. */
  assert_non_null(strstr(message, "undeclared_variable"));
  hetc_status_free(s);
}

/* Builds a kernel unique to this process and test (`tag`) twice: the
 * second comes from memory. Returns the program's key. */
static uint64_t build_twice(const char *tag, char *source, size_t size) {
  snprintf(source, size, "__kernel void %s(__global float *x) { x[get_global_id(0)] *= %d.0f; }\n", tag,
           (int)getpid());
  ocl_program_t *first = NULL, *second = NULL;
  assert_null(ocl_program_get(&cache, &devices[0], source, strlen(source), NULL, 0, &first));
  assert_null(ocl_program_get(&cache, &devices[0], source, strlen(source), NULL, 0, &second));
  assert_ptr_equal(first, second); /* from memory */
  assert_int_equal(first->refs, 2);
  const uint64_t key = first->key;
  ocl_program_release(&cache, second);
  ocl_program_release(&cache, first);
  return key;
}

static void disk_path_of(uint64_t key, char *path, size_t size) {
  snprintf(path, size, "%s/%016llx.bin", cache.dir, (unsigned long long)key);
}

static void programs_are_cached(void **state) {
  (void)state;
  if (!cache.dir) {
    printf("SKIP: no disk cache here\n");
    skip();
  }
  /* As if the driver kept no builds of its own, whatever it is. */
  const int32_t keeps = devices[0].driver_keeps_builds;
  devices[0].driver_keeps_builds = 0;
  char source[256], path[4200];
  disk_path_of(build_twice("twice", source, sizeof(source)), path, sizeof(path));
  assert_int_equal(access(path, R_OK), 0);
  /* A fresh cache (another process) takes the binary from disk. */
  ocl_program_cache_t other;
  ocl_program_cache_init(&other);
  ocl_program_t *loaded = NULL;
  assert_null(ocl_program_get(&other, &devices[0], source, strlen(source), NULL, 0, &loaded));
  cl_program_binary_type type = 0;
  assert_int_equal(clGetProgramBuildInfo(loaded->program, devices[0].id, CL_PROGRAM_BINARY_TYPE, sizeof(type), &type,
                                         NULL),
                   CL_SUCCESS);
  ocl_program_release(&other, loaded);
  ocl_program_cache_fini(&other);
  remove(path);
  devices[0].driver_keeps_builds = keeps;
}

/* A driver that keeps its builds gets nothing written to the disk cache
 * (PoCL would build every kernel again for its binary). */
static void builds_the_driver_keeps_are_not_on_disk(void **state) {
  (void)state;
  if (!cache.dir) {
    printf("SKIP: no disk cache here\n");
    skip();
  }
  const int32_t keeps = devices[0].driver_keeps_builds;
  devices[0].driver_keeps_builds = 1;
  char source[256], path[4200];
  disk_path_of(build_twice("kept", source, sizeof(source)), path, sizeof(path));
  assert_int_not_equal(access(path, F_OK), 0);
  devices[0].driver_keeps_builds = keeps;
}

/* PoCL keeps its builds unless POCL_KERNEL_CACHE turns its cache off;
 * other platforms are not assumed to. */
static void pocl_keeps_builds_unless_told_not_to(void **state) {
  (void)state;
  const char *was = getenv("POCL_KERNEL_CACHE");
  char *saved = was ? strdup(was) : NULL;
  unsetenv("POCL_KERNEL_CACHE");
  assert_int_equal(ocl_driver_keeps_builds("Portable Computing Language"), 1);
  assert_int_equal(ocl_driver_keeps_builds("NVIDIA CUDA"), 0);
  setenv("POCL_KERNEL_CACHE", "0", 1);
  assert_int_equal(ocl_driver_keeps_builds("Portable Computing Language"), 0);
  setenv("POCL_KERNEL_CACHE", "1", 1);
  assert_int_equal(ocl_driver_keeps_builds("Portable Computing Language"), 1);
  if (saved) setenv("POCL_KERNEL_CACHE", saved, 1);
  else unsetenv("POCL_KERNEL_CACHE");
  free(saved);
}

/* A resize's tap tables are program-scope __constant data: its demand
 * counts their bytes against CL_DEVICE_MAX_CONSTANT_BUFFER_SIZE (64 KiB on
 * most GPUs). The largest nearest tables (16384 output rows and columns)
 * fit 64 KiB exactly; the largest linear ones (192 KiB) do not, and are
 * refused there with the limit named, and build on this device when its
 * constant memory holds them. */
static void resize_tables_count_against_constant_memory(void **state) {
  (void)state;
  assert_true(devices[0].limits.max_constant_bytes >= 64 * 1024);
  hetc_plugin_tensor_t in = {HETC_PLUGIN_DTYPE_FLOAT32, 4, {1, 3, 600, 800}, {HETC_PLUGIN_LAYOUT_ROW_MAJOR, 0}};
  hetc_plugin_workload_t w;
  memset(&w, 0, sizeof(w));
  w.op = HETC_PLUGIN_OP_RESIZE;
  w.num_inputs = 1;
  w.inputs = &in;
  w.output = in;
  w.output.shape[2] = w.output.shape[3] = 16384;
  w.params.resize.coordinates = HETC_PLUGIN_RESIZE_HALF_PIXEL;
  w.params.resize.scales[0] = 16384.0 / 600.0;
  w.params.resize.scales[1] = 16384.0 / 800.0;
  ocl_limits_t gpu = devices[0].limits;
  gpu.max_constant_bytes = 64 * 1024;
  ocl_config_t cfg;
  memset(&cfg, 0, sizeof(cfg));
  ocl_demand_t demand;
  w.params.resize.mode = HETC_PLUGIN_RESIZE_NEAREST;
  ocl_config_demand(&w, OCL_T_RESIZE, &cfg, &demand);
  assert_int_equal(demand.constant_bytes, 2 * 16384 * 2);
  assert_true(ocl_demand_fits(&demand, &gpu));
  w.params.resize.mode = HETC_PLUGIN_RESIZE_LINEAR;
  ocl_config_demand(&w, OCL_T_RESIZE, &cfg, &demand);
  assert_int_equal(demand.constant_bytes, 2 * 16384 * (2 + 4));
  assert_false(ocl_demand_fits(&demand, &gpu));
  hetc_status_t s = (hetc_status_t)ocl_check_limits(&demand, &gpu);
  assert_non_null(s);
  assert_int_equal(hetc_status_code(s), HETC_PLUGIN_STATUS_DEVICE_LIMITS);
  assert_string_equal(hetc_status_message(s),
                      "opencl: the kernel's tables need 196608 bytes of __constant memory, more than the device's "
                      "CL_DEVICE_MAX_CONSTANT_BUFFER_SIZE of 65536");
  hetc_status_free(s);
  if (!ocl_demand_fits(&demand, &devices[0].limits)) {
    printf("SKIP part: the device has %llu bytes of constant memory\n",
           (unsigned long long)devices[0].limits.max_constant_bytes);
    return;
  }
  ocl_emit_t *e = calloc(1, sizeof(*e));
  assert_non_null(e);
  e->wl = &w;
  e->kind = OCL_T_RESIZE;
  hpc_strbuf_init(&e->src);
  assert_null(ocl_emit(e));
  ocl_program_t *program = NULL;
  s = (hetc_status_t)ocl_program_get(&cache, &devices[0], e->src.data, e->src.length, NULL, 0, &program);
  if (s) fail_msg("%s", hetc_status_message(s));
  ocl_program_release(&cache, program);
  hpc_strbuf_free(&e->src);
  free(e);
}

/* normalize's block reduction asks for its local memory, which every
 * OpenCL device has (32 KiB at least), so the demand always fits. */
static void normalize_counts_its_local_memory(void **state) {
  (void)state;
  hetc_plugin_tensor_t in = {HETC_PLUGIN_DTYPE_FLOAT32, 3, {1, 197, 768}, {HETC_PLUGIN_LAYOUT_ROW_MAJOR, 0}};
  hetc_plugin_workload_t w;
  memset(&w, 0, sizeof(w));
  w.op = HETC_PLUGIN_OP_NORMALIZE;
  w.num_inputs = 1;
  w.inputs = &in;
  w.output = in;
  w.params.normalize = (hetc_plugin_normalize_params_t){2, 1, 1, 1, 1e-5};
  assert_int_equal(ocl_template_kind(&w, 0), OCL_T_NORMALIZE);
  ocl_config_t cfg;
  memset(&cfg, 0, sizeof(cfg));
  ocl_demand_t demand;
  ocl_config_demand(&w, OCL_T_NORMALIZE, &cfg, &demand);
  assert_int_equal(demand.work_group[0], HPC_GPU_OPS_BLOCK);
  assert_int_equal(demand.local_bytes, HPC_GPU_NORMALIZE_SHARED_BYTES);
  assert_true(ocl_demand_fits(&demand, &devices[0].limits));
}

/* matmul stages A's and B's tiles in local memory: the demand counts them
 * (A's rows padded to tile_k + 1 floats) with the work-group the kernel
 * declares; the default fits this device, and a config whose tiles pass a
 * device's local memory is refused there with the limit named, as the
 * space's constraint leaves it out. */
static void matmul_counts_its_local_memory(void **state) {
  (void)state;
  hetc_plugin_tensor_t in[2] = {{HETC_PLUGIN_DTYPE_FLOAT32, 4, {1, 12, 197, 64}, {HETC_PLUGIN_LAYOUT_ROW_MAJOR, 0}},
                                {HETC_PLUGIN_DTYPE_FLOAT32, 4, {1, 12, 64, 197}, {HETC_PLUGIN_LAYOUT_ROW_MAJOR, 0}}};
  hetc_plugin_workload_t w;
  memset(&w, 0, sizeof(w));
  w.op = HETC_PLUGIN_OP_MATMUL;
  w.num_inputs = 2;
  w.inputs = in;
  w.output = in[0];
  w.output.shape[3] = 197;
  assert_int_equal(ocl_template_count(&w), 1);
  assert_int_equal(ocl_template_kind(&w, 0), OCL_T_MATMUL);
  ocl_space_t space;
  ocl_space_describe(&w, OCL_T_MATMUL, &space);
  ocl_config_t cfg;
  assert_null(ocl_config_parse(&space, NULL, &cfg));
  assert_int_equal(cfg.wg_m * cfg.tile_m, 64);
  assert_int_equal(cfg.wg_n * cfg.tile_n, 64);
  assert_int_equal(cfg.tile_k, 16);
  ocl_demand_t demand;
  ocl_config_demand(&w, OCL_T_MATMUL, &cfg, &demand);
  assert_int_equal(demand.work_group[0], cfg.wg_n);
  assert_int_equal(demand.work_group[1], cfg.wg_m);
  assert_int_equal(demand.work_group[2], 1);
  assert_int_equal(demand.local_bytes, 4 * (64 * (16 + 1) + 16 * 64));
  assert_true(ocl_demand_fits(&demand, &devices[0].limits));
  /* 128 x 128 outputs, 32 of K a step: 33280 bytes. */
  cfg.wg_m = cfg.wg_n = 16;
  cfg.tile_m = cfg.tile_n = 8;
  cfg.tile_k = 32;
  ocl_config_demand(&w, OCL_T_MATMUL, &cfg, &demand);
  assert_int_equal(demand.local_bytes, 4 * (128 * 33 + 32 * 128));
  ocl_limits_t small = devices[0].limits;
  small.local_memory_bytes = 32 * 1024;
  assert_false(ocl_demand_fits(&demand, &small));
  hetc_status_t s = (hetc_status_t)ocl_check_limits(&demand, &small);
  assert_non_null(s);
  assert_int_equal(hetc_status_code(s), HETC_PLUGIN_STATUS_DEVICE_LIMITS);
  assert_string_equal(hetc_status_message(s),
                      "opencl: the kernel's tiles need 33280 bytes of local memory, more than the device's "
                      "CL_DEVICE_LOCAL_MEM_SIZE of 32768");
  hetc_status_free(s);
}

int main(void) {
  ocl_host = hetc_host_services();
  ocl_program_cache_init(&cache);
  hetc_status_t s = (hetc_status_t)ocl_devices_open(&cache, &devices, &num_devices);
  if (s) {
    printf("SKIP: %s\n", hetc_status_message(s));
    hetc_status_free(s);
    ocl_program_cache_fini(&cache);
    return SKIP;
  }
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(build_log_is_the_message),
      cmocka_unit_test(programs_are_cached),
      cmocka_unit_test(builds_the_driver_keeps_are_not_on_disk),
      cmocka_unit_test(pocl_keeps_builds_unless_told_not_to),
      cmocka_unit_test(resize_tables_count_against_constant_memory),
      cmocka_unit_test(normalize_counts_its_local_memory),
      cmocka_unit_test(matmul_counts_its_local_memory),
  };
  int failed = cmocka_run_group_tests(tests, NULL, NULL);
  ocl_devices_free(devices, num_devices);
  ocl_program_cache_fini(&cache);
  return failed;
}
