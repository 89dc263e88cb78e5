/* The machine's fp32 FMA peak, measured: a register-resident FMA loop with
 * enough independent chains to hide latency, on every core at once. */
#ifndef HETC_TESTS_BENCH_MACHINE_PEAK_H_
#define HETC_TESTS_BENCH_MACHINE_PEAK_H_

/* GFLOPS over `threads` threads: the best of 5 trials of ~0.1 s. */
double machine_peak_gflops(int threads);

#endif
