/* What the op conformance tests (test_resize_kernels, test_normalize_kernels,
 * test_matmul_kernels) share: the target they run on, named by one
 * environment variable each (default vec), opened through the real driver
 * registry and host as cmocka group setup; the template name the target's
 * kernels of an op carry; and their inputs' random stream. */
#ifndef HETC_TESTS_OP_TARGET_H
#define HETC_TESTS_OP_TARGET_H

#include <stddef.h>
#include <stdint.h>

#include "kernel_check.h"

/* The target's registry entry, set by op_target_setup; the registry owns it. */
extern hetc_plugin_entry_t *op_target_entry;

/* The environment variable naming the target; set it before the group runs. */
extern const char *op_target_variable;

/* The target's name: the variable's value, or "vec". */
const char *op_target_name(void);

/* cmocka group setup and teardown: open the registry and the target. A
 * forced HETC_CPU_ISA this machine cannot run exits 77 (ctest's skip). */
int op_target_setup(void **state);
int op_target_teardown(void **state);

/* "TARGET_OP" (cuda_on_opencl, the cuda plugin's text on PoCL: "cuda_OP"),
 * the name (or prefix) of the target's templates of `op`, into out. */
void op_target_template_name(const char *op, char *out, size_t size);

/* The next value of a xorshift stream, uniform in [-1, 1). */
float op_target_next_value(uint64_t *state);

#endif
