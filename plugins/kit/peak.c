/* Peak fp32 rate of a CPU-style device (hetc/kit/peak.h). */
#include "hetc/kit/peak.h"

#include "hetc/kit/host.h"
#include "hetc/kit/run.h"

#define PEAK_SAMPLE_SECONDS 0.002
#define PEAK_BUDGET_SECONDS 0.030
#define PEAK_MIN_SAMPLES 4
#define PEAK_MAX_SAMPLES 64

typedef struct peak_ctx_t {
  hetc_kit_fma_loop_fn_t loop;
  long iters;
} peak_ctx_t;

static void peak_body(int64_t begin, int64_t end, void *user) {
  const peak_ctx_t *p = user;
  /* A local sink keeps the loop from being optimised away; a shared one
   * would be written by every pool thread at once. */
  volatile float sink;
  for (int64_t i = begin; i < end; ++i) sink = p->loop(p->iters);
  (void)sink;
}

double hetc_kit_measure_peak_gflops(hetc_kit_fma_loop_fn_t loop, double flops_per_iter) {
  const hetc_plugin_host_t *host = hetc_kit_host();
  const int32_t threads = host->thread_count() > 0 ? host->thread_count() : 1;
  /* Many more pieces than threads: the pool hands pieces out dynamically,
   * and with one piece per thread the calling thread could take both
   * before a sleeping worker woke, halving the figure. */
  const int64_t pieces = (int64_t)threads * 16;
  const double flops_per_sample_iter = (double)pieces * flops_per_iter;
  const double start = hetc_kit_now_seconds();
  peak_ctx_t ctx = {loop, 100};
  host->parallel_for(pieces, 1, peak_body, &ctx); /* wakes the pool */
  double best = 0;
  for (int sample = 0; sample < PEAK_MAX_SAMPLES; ++sample) {
    if (sample >= PEAK_MIN_SAMPLES && hetc_kit_now_seconds() - start > PEAK_BUDGET_SECONDS - PEAK_SAMPLE_SECONDS) break;
    const double t0 = hetc_kit_now_seconds();
    host->parallel_for(pieces, 1, peak_body, &ctx);
    const double t = hetc_kit_now_seconds() - t0;
    if (!(t > 0)) continue;
    const double gflops = flops_per_sample_iter * (double)ctx.iters / t * 1e-9;
    if (gflops > best) best = gflops;
    /* The next sample sized to about PEAK_SAMPLE_SECONDS at the best rate
     * so far (the first, tiny, one only calibrates). */
    const double iters = PEAK_SAMPLE_SECONDS * best * 1e9 / flops_per_sample_iter;
    ctx.iters = iters < 10 ? 10 : iters > 1e7 ? 10000000 : (long)iters;
  }
  return best;
}
