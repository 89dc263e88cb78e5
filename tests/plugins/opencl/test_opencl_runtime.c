/* The opencl plugin's program cache, white-box (its sources linked in, the
 * driver's host services as the host): a source the device compiler
 * rejects fails with BUILD_FAILED and the compiler's log as the message; a
 * source built once is served from memory, and after a new cache instance
 * from the disk cache (the program binary, keyed by source and device
 * fingerprint). Skips (exit 77) without an OpenCL device. */
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

static void programs_are_cached(void **state) {
  (void)state;
  char source[256];
  snprintf(source, sizeof(source), "__kernel void twice(__global float *x) { x[get_global_id(0)] *= %d.0f; }\n",
           (int)getpid());
  ocl_program_t *first = NULL, *second = NULL;
  assert_null(ocl_program_get(&cache, &devices[0], source, strlen(source), NULL, 0, &first));
  assert_null(ocl_program_get(&cache, &devices[0], source, strlen(source), NULL, 0, &second));
  assert_ptr_equal(first, second); /* from memory */
  assert_int_equal(first->refs, 2);
  const uint64_t key = first->key;
  ocl_program_release(&cache, second);
  ocl_program_release(&cache, first);
  if (!cache.dir) {
    printf("SKIP part: no disk cache here\n");
    return;
  }
  char path[4200];
  snprintf(path, sizeof(path), "%s/%016llx.bin", cache.dir, (unsigned long long)key);
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
  };
  int failed = cmocka_run_group_tests(tests, NULL, NULL);
  ocl_devices_free(devices, num_devices);
  ocl_program_cache_fini(&cache);
  return failed;
}
