/* hetc/kit/cpu_info.h -- what a CPU-style plugin reports about the host
 * machine in its device descriptor. */
#ifndef HETC_KIT_CPU_INFO_H_
#define HETC_KIT_CPU_INFO_H_

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The processor's model name from /proc/cpuinfo ("unknown CPU" when it
 * names none) into buf, always terminated. Stable across runs: fit for a
 * device fingerprint. */
void hetc_kit_cpu_model(char *buf, size_t size);

/* The total bytes of L1 data, L2 and L3 cache over the machine into
 * out[0..2], each cache instance counted once (from sysfs; 0 where it is
 * unknown). */
void hetc_kit_cpu_caches(uint64_t out[3]);

/* The machine's physical memory in bytes (0 when unknown). */
uint64_t hetc_kit_memory_bytes(void);

#ifdef __cplusplus
}
#endif

#endif /* HETC_KIT_CPU_INFO_H_ */
