/* plugins/common/plugin_peak.h -- a CPU backend's peak fp32 rate, measured
 * with the backend's own FMA loop on every thread of the host's pool. */
#ifndef HETC_PLUGINS_COMMON_PLUGIN_PEAK_H_
#define HETC_PLUGINS_COMMON_PLUGIN_PEAK_H_

#include "hetc/plugin.h"

/* `iters` iterations of independent FMA chains; returns something computed
 * from them so that they are not optimised away. */
typedef float (*hpc_fma_loop_fn_t)(long iters);

/* GFLOPS of `loop` run on host->thread_count() threads through
 * host->parallel_for, counting `flops_per_iter` per iteration of one call:
 * the fastest of many samples of about 2 ms within 30 ms (at least 4).
 * Another process, a worker still waking or a core clocking up only ever
 * lowers a sample's rate, and on a shared machine a core is often taken for
 * a few milliseconds at a time: many short samples spread over the budget
 * catch a moment when every thread runs, where a few long ones would each
 * include the interruption. Each sample's time includes its whole
 * parallel_for, so the figure never overestimates (the driver keeps the
 * best over runs, driver/plugins/peaks.h). */
double hpc_measure_peak_gflops(const hetc_plugin_host_t *host, hpc_fma_loop_fn_t loop, double flops_per_iter);

#endif /* HETC_PLUGINS_COMMON_PLUGIN_PEAK_H_ */
