/* Device descriptors from the limits the runtime read: nominal peak rates
 * from the compute capability's per-SM throughput (NVIDIA's CUDA C
 * Programming Guide, "Arithmetic Instructions", and the architecture
 * whitepapers for the tensor cores), since a GPU's nominal peak is what its
 * fraction-of-peak is quoted against. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cu.h"

/* fp32 FMA lanes per SM. */
static int fp32_lanes_per_sm(int major, int minor) {
  switch (major) {
    case 3: return 192;
    case 5: return 128;
    case 6: return minor == 0 ? 64 : 128;
    case 7: return 64;
    case 8: return minor == 0 ? 64 : 128;
    default: return major >= 9 ? 128 : 64;
  }
}

/* Dense TF32 tensor-core flops per SM per clock: A100 (sm_80) 1024, the
 * GA10x/AD10x parts (sm_86/87/89) 256, Hopper (sm_90) and data-centre
 * Blackwell (sm_100) 2048. */
static int tf32_flops_per_sm(int major, int minor) {
  if (major == 8) return minor == 0 ? 1024 : 256;
  if (major == 9 || major == 10) return 2048;
  if (major > 10) return 256;
  return 0;
}

double cu_peak_fp32_gflops(const cu_limits_t *l) {
  return (double)l->sm_count * fp32_lanes_per_sm(l->cc_major, l->cc_minor) * 2.0 * l->clock_khz * 1e-6;
}

double cu_peak_tf32_gflops(const cu_limits_t *l) {
  return (double)l->sm_count * tf32_flops_per_sm(l->cc_major, l->cc_minor) * l->clock_khz * 1e-6;
}

void cu_device_describe(cu_device_t *dev) {
  const cu_limits_t *l = &dev->limits;
  hetc_plugin_device_t *d = &dev->desc;
  memset(d, 0, sizeof(*d));
  d->struct_size = sizeof(*d);
  d->kind = HETC_PLUGIN_DEVICE_GPU;
  const double tf32 = cu_peak_tf32_gflops(l);
  if (tf32 > 0)
    snprintf(dev->label, sizeof(dev->label), "%s (%s, TF32 tensor cores %.1f TFLOPS)", dev->name, dev->arch,
             tf32 * 1e-3);
  else
    snprintf(dev->label, sizeof(dev->label), "%s (%s)", dev->name, dev->arch);
  d->name = dev->label;
  d->fingerprint = dev->fingerprint;
  d->compute_units = l->sm_count;
  d->simd_width_fp32 = l->warp_size;
  d->peak_gflops_fp32 = cu_peak_fp32_gflops(l);
  /* DDR: two transfers per memory clock. */
  d->memory_bandwidth_gbps = 2.0 * l->memory_clock_khz * 1e3 * (l->memory_bus_bits / 8) * 1e-9;
  d->memory_bytes = (uint64_t)l->memory_bytes;
  d->max_threads_per_group = l->max_threads_per_block;
  d->local_memory_bytes = (uint64_t)l->shared_bytes_per_block;
  d->cache_bytes[1] = (uint64_t)l->l2_bytes;
  d->host_memory = 0;
}
