/* The machine's fp32 FMA peak, measured: a register-resident FMA loop with
 * enough independent chains to hide latency, on every core at once, in the
 * widest vector ISA the CPU and the OS allow (AVX-512F, else AVX2+FMA).
 * A peak measured in AVX2 on an AVX-512 machine is half of what its cores
 * do, and would flatter every kernel held against it. */
#ifndef HETC_TESTS_BENCH_MACHINE_PEAK_H_
#define HETC_TESTS_BENCH_MACHINE_PEAK_H_

/* GFLOPS over `threads` threads: the best of 5 trials of ~0.1 s. */
double machine_peak_gflops(int threads);

/* The ISA machine_peak_gflops measures: "avx512" or "avx2". */
const char *machine_peak_isa(void);

#endif
