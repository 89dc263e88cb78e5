/* hetc/kit/peak.h -- a CPU-style device's peak fp32 rate, measured with the
 * plugin's own FMA loop on every thread of the bound host's pool, as its
 * kernels run. */
#ifndef HETC_KIT_PEAK_H_
#define HETC_KIT_PEAK_H_

#ifdef __cplusplus
extern "C" {
#endif

/* `iters` iterations of independent multiply-add chains; returns something
 * computed from them so that they are not optimised away. */
typedef float (*hetc_kit_fma_loop_fn_t)(long iters);

/* GFLOPS of `loop` on host->thread_count() threads through
 * host->parallel_for, counting `flops_per_iter` per iteration of one call:
 * the fastest of many samples of about 2 ms within 30 ms (at least 4).
 * Another process, a worker still waking or a core clocking up only ever
 * lowers a sample's rate, and on a shared machine a core is often taken for
 * a few milliseconds at a time: many short samples spread over the budget
 * catch a moment when every thread runs, where a few long ones would each
 * include the interruption. Each sample's time includes its whole
 * parallel_for, so the figure never overestimates (hetc keeps the best
 * over runs). */
double hetc_kit_measure_peak_gflops(hetc_kit_fma_loop_fn_t loop, double flops_per_iter);

#ifdef __cplusplus
}
#endif

#endif /* HETC_KIT_PEAK_H_ */
