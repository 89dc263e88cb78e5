/* The opencl and cpu plugins load and run in one process: one LLVM per
 * process, as the cpu backend (LLVM 15 ORC JIT) and PoCL (which links the
 * same LLVM 15 to compile OpenCL C) share it, in both orders, without
 * command-line option clashes. Skips (exit 77) when the cpu or opencl
 * target is not available, saying why. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "kernel_check.h"

#define SKIP 77

static hetc_registry_t *registry;
static hetc_plugin_entry_t *cpu, *opencl;

/* A small conv through a plugin, checked against the reference. */
static void run_conv(hetc_plugin_entry_t *entry, uint64_t seed) {
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
  /* Every template: PoCL compiles each with LLVM, the cpu plugin JITs. */
  const int32_t templates = entry->plugin->template_count(entry->instance, 0, &w);
  assert_true(templates > 0);
  for (int32_t t = 0; t < templates; ++t) {
    kernel_check_result_t result;
    hetc_status_t status = hetc_kernel_check_run_default(entry, &w, t, seed, 0, &result);
    if (status) fail_msg("%s kernel: %s", entry->plugin->name, hetc_status_message(status));
    printf("%s plugin conv, template %s: max rel error %.2e\n", entry->plugin->name,
           entry->plugin->template_name(entry->instance, 0, &w, t), result.max_relative_error);
    assert_true(result.max_relative_error <= 1e-4);
  }
}

static void cpu_then_opencl_then_cpu(void **state) {
  (void)state;
  run_conv(cpu, 1);
  run_conv(opencl, 2);
  run_conv(cpu, 3);
  run_conv(opencl, 4);
}

int main(void) {
  if (hetc_registry_open(&registry)) return 1;
  hetc_status_t status = hetc_registry_target(registry, "cpu", &cpu);
  if (status) {
    printf("SKIP: the cpu target is not available: %s\n", hetc_status_message(status));
    return SKIP;
  }
  status = hetc_registry_target(registry, "opencl", &opencl);
  if (status) {
    printf("SKIP: the opencl target is not available: %s\n", hetc_status_message(status));
    return SKIP;
  }
  const struct CMUnitTest tests[] = {cmocka_unit_test(cpu_then_opencl_then_cpu)};
  int failed = cmocka_run_group_tests(tests, NULL, NULL);
  hetc_registry_free(registry);
  return failed;
}
