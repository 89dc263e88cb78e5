/* plugins/common/plugin_intern.h -- process-lifetime copies of small
 * pointer-free structs, shared among equal ones: what a knob space's
 * constraint needs as user data (it must outlive every space of the
 * instance, and tuning defines the same task's space again and again, so
 * equal contexts must not pile up). */
#ifndef HETC_PLUGINS_COMMON_PLUGIN_INTERN_H_
#define HETC_PLUGINS_COMMON_PLUGIN_INTERN_H_

#include <stddef.h>

/* A copy of data[0..size) that lives until the process exits, the same
 * copy for every call with equal bytes (compare padding too: zero the
 * struct before filling it). Thread-safe. NULL when out of memory. */
const void *hpc_intern(const void *data, size_t size);

#endif /* HETC_PLUGINS_COMMON_PLUGIN_INTERN_H_ */
