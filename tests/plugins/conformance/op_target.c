/* The target an op conformance test runs on (op_target.h). */
#include "op_target.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

hetc_plugin_entry_t *op_target_entry;
const char *op_target_variable = "HETC_OP_TARGET";

static hetc_registry_t *registry;

const char *op_target_name(void) {
  const char *name = getenv(op_target_variable);
  return name && *name ? name : "vec";
}

int op_target_setup(void **state) {
  (void)state;
  if (hetc_registry_open(&registry)) return -1;
  hetc_status_t s = hetc_registry_target(registry, op_target_name(), &op_target_entry);
  if (s && hetc_status_code(s) == HETC_STATUS_UNAVAILABLE && getenv("HETC_CPU_ISA")) {
    printf("skipped: this machine cannot run HETC_CPU_ISA=%s: %s\n", getenv("HETC_CPU_ISA"), hetc_status_message(s));
    exit(77);
  }
  if (s) {
    fprintf(stderr, "%s target: %s\n", op_target_name(), hetc_status_message(s));
    hetc_status_free(s);
    return -1;
  }
  return 0;
}

int op_target_teardown(void **state) {
  (void)state;
  hetc_registry_free(registry);
  return 0;
}

void op_target_template_name(const char *op, char *out, size_t size) {
  snprintf(out, size, "%s_%s", strcmp(op_target_name(), "cuda_on_opencl") ? op_target_name() : "cuda", op);
}

float op_target_next_value(uint64_t *state) {
  *state ^= *state << 13;
  *state ^= *state >> 7;
  *state ^= *state << 17;
  return (float)((double)(*state >> 40) / 8388608.0 - 1.0);
}
