/* plugins/common/plugin_cpu_info.h -- what the CPU backends report about
 * the host processor in their device descriptors. */
#ifndef HETC_PLUGINS_COMMON_PLUGIN_CPU_INFO_H_
#define HETC_PLUGINS_COMMON_PLUGIN_CPU_INFO_H_

#include <stdint.h>

/* The processor's model name ("unknown CPU" when /proc/cpuinfo has none);
 * malloc'ed, the caller frees it; NULL when out of memory. */
char *hpc_cpu_model(void);

/* Total bytes of L1 data, L2 and L3 cache over the machine, each cache
 * instance counted once (from sysfs; 0 when unknown). */
void hpc_cpu_caches(uint64_t out[3]);

#endif /* HETC_PLUGINS_COMMON_PLUGIN_CPU_INFO_H_ */
