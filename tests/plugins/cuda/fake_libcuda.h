/* tests/plugins/cuda/fake_libcuda.h -- the test controls of the fake
 * libcuda.so.1 (fake_libcuda.c), which the cuda plugin's tests load through
 * HETC_CUDA_DRIVER_LIBRARY on machines without a GPU.
 *
 * Environment, read when the library is loaded:
 *   HETC_FAKE_CUDA          ok (default) | no_device (cuInit fails with
 *                           CUDA_ERROR_NO_DEVICE, as on a machine without a
 *                           GPU) | zero_devices (cuInit succeeds,
 *                           cuDeviceGetCount gives 0) | old_driver
 *                           (cuDriverGetVersion gives 10020)
 *   HETC_FAKE_CUDA_DEVICES  compute capabilities, e.g. "90,86" (default 90);
 *                           75, 80, 86 and 90 look like a T4, an A100, an RTX
 *                           3090 and an H100, any other is "Fake GPU sm_XY"
 *   HETC_FAKE_CUDA_DRIVER_VERSION  cuDriverGetVersion's value (default 13000);
 *                           when set, PTX of a newer ISA than that driver's
 *                           is refused (CUDA_ERROR_UNSUPPORTED_PTX_VERSION)
 *   HETC_FAKE_CUDA_REGISTERS       registers per thread of every function (32)
 *   HETC_FAKE_CUDA_LAUNCH_US       simulated microseconds per launch (100)
 *
 * The tests reach the controls with dlsym on the same file. */
#ifndef HETC_TESTS_FAKE_LIBCUDA_H_
#define HETC_TESTS_FAKE_LIBCUDA_H_

/* What the fake recorded of a launch. */
typedef struct hetc_fake_cuda_launch_t {
  char kernel[64];
  int device;
  unsigned grid[3], block[3], shared_bytes;
  int num_params; /* from the image's parameter list */
  unsigned long long params[8];
} hetc_fake_cuda_launch_t;

/* Sets a control; 0, or -1 for an unknown key. Keys (values are decimal):
 *   devices       like HETC_FAKE_CUDA_DEVICES, from the next cuDeviceGetCount
 *   registers     registers per thread reported for functions looked up next
 *   max_threads   CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK for functions looked
 *                 up next (0: what the registers allow, as a real driver)
 *   launch_us     simulated microseconds per launch
 *   fail_launch   the next launch returns this CUresult
 *   fault_launch  the next launch succeeds but leaves this (sticky) error in
 *                 its context, as a kernel fault does
 *   reset         zeroes the counters */
typedef int (*hetc_fake_cuda_set_fn)(const char *key, const char *value);
/* A counter, or -1 for an unknown key: loads, load_failures, unloads,
 * live_modules, allocs, frees, live_allocs, launches, pushes, pops, depth
 * (this thread's context stack), no_context (context-bound calls made
 * without one), retains, releases, live_streams, live_events, reclaimed
 * (objects a context still held when its last release destroyed it). */
typedef long long (*hetc_fake_cuda_stat_fn)(const char *key);
/* The last launch into *out; 0 when there was none. */
typedef int (*hetc_fake_cuda_last_launch_fn)(hetc_fake_cuda_launch_t *out);

#define HETC_FAKE_CUDA_SET "hetc_fake_cuda_set"
#define HETC_FAKE_CUDA_STAT "hetc_fake_cuda_stat"
#define HETC_FAKE_CUDA_LAST_LAUNCH "hetc_fake_cuda_last_launch"

/* The kernel the fake runs on the host: y[i] += 2 * x[i] for every thread i
 * of the launch (params: x, y). A launch that reaches outside a live
 * allocation faults its context with CUDA_ERROR_ILLEGAL_ADDRESS. */
#define HETC_FAKE_CUDA_SAXPY "fake_saxpy"

#endif /* HETC_TESTS_FAKE_LIBCUDA_H_ */
