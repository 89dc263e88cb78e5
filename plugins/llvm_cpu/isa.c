/* The vector ISA the cpu plugin generates kernels for: CPUID says what the
 * processor has, XCR0 what state the OS saves on a context switch (a
 * processor with AVX-512 under an OS that does not enable ZMM and opmask
 * state must not run it). AVX-512 here is x86-64-v4's set (F, CD, BW, DQ,
 * VL): every server core that has AVX-512F has all five, and LLVM then
 * gives 8-lane code the upper 16 registers too. */
#include <cpuid.h>
#include <stdlib.h>
#include <string.h>

#include "cpu.h"

/* The target machine's CPU is the ISA level, not the host, so that the
 * code uses nothing the level lacks (a Zen 5 host would otherwise lend AVX-512
 * forms to "AVX2" code, and VNNI or BMI to both) and a package runs on every
 * machine of its level; the host only tunes scheduling (jit.c). */
static const cpu_isa_t isa_avx2 = {
    .name = "avx2",
    .title = "AVX2 + FMA (x86-64-v3)",
    .lanes = 8,
    .registers = 16,
    .level = "x86-64-v3",
    .features = "+avx2,+fma,+f16c,+avx,+sse4.2,+popcnt,-avx512f",
};

static const cpu_isa_t isa_avx512 = {
    .name = "avx512",
    .title = "AVX-512 (x86-64-v4)",
    .lanes = 16,
    .registers = 32,
    .level = "x86-64-v4",
    .features = "+avx512f,+avx512cd,+avx512bw,+avx512dq,+avx512vl,+avx2,+fma,+f16c,+avx,+sse4.2,"
                "+popcnt",
};

static uint64_t read_xcr0(void) {
  uint32_t eax, edx;
  __asm__ volatile("xgetbv" : "=a"(eax), "=d"(edx) : "c"(0));
  return ((uint64_t)edx << 32) | eax;
}

hetc_plugin_status_t cpu_isa_probe(void) {
  unsigned a, b, c, d;
  if (!__get_cpuid(1, &a, &b, &c, &d))
    return cpu_status(HETC_PLUGIN_STATUS_UNAVAILABLE, "cpu: cpuid leaf 1 is not available");
  const int osxsave = (c >> 27) & 1, avx = (c >> 28) & 1, fma = (c >> 12) & 1;
  if (!avx || !osxsave || (read_xcr0() & 6) != 6)
    return cpu_status(HETC_PLUGIN_STATUS_UNAVAILABLE,
                      "cpu: the OS does not enable AVX (YMM) state");
  if (__get_cpuid_max(0, NULL) < 7)
    return cpu_status(HETC_PLUGIN_STATUS_UNAVAILABLE, "cpu: the processor lacks AVX2");
  unsigned a7, b7, c7, d7;
  __cpuid_count(7, 0, a7, b7, c7, d7);
  (void)a7, (void)c7, (void)d7;
  if (!((b7 >> 5) & 1))
    return cpu_status(HETC_PLUGIN_STATUS_UNAVAILABLE, "cpu: the processor lacks AVX2");
  if (!fma) return cpu_status(HETC_PLUGIN_STATUS_UNAVAILABLE, "cpu: the processor lacks FMA");
  return NULL;
}

/* Whether AVX-512 code runs here: after cpu_isa_probe() succeeded. Writes
 * what is missing into `why`. */
static int avx512_runs(const char **why) {
  unsigned a7, b7, c7, d7;
  __cpuid_count(7, 0, a7, b7, c7, d7);
  (void)a7, (void)c7, (void)d7;
  /* F 16, DQ 17, CD 28, BW 30, VL 31. */
  const unsigned need = (1u << 16) | (1u << 17) | (1u << 28) | (1u << 30) | (1u << 31);
  if ((b7 & need) != need) {
    *why = (b7 >> 16) & 1 ? "the processor lacks AVX-512 CD, BW, DQ or VL"
                          : "the processor lacks AVX-512F";
    return 0;
  }
  /* XCR0: SSE, AVX (bits 1, 2), opmask, ZMM_Hi256, Hi16_ZMM (bits 5-7). */
  if ((read_xcr0() & 0xe6) != 0xe6) {
    *why = "the OS does not enable AVX-512 (ZMM and opmask) state";
    return 0;
  }
  return 1;
}

const cpu_isa_t *cpu_isa_named(const char *name) {
  if (name && strcmp(name, isa_avx2.name) == 0) return &isa_avx2;
  if (name && strcmp(name, isa_avx512.name) == 0) return &isa_avx512;
  return NULL;
}

hetc_plugin_status_t cpu_isa_select(const cpu_isa_t **out, int *forced_out) {
  *out = NULL;
  *forced_out = 0;
  hetc_plugin_status_t s = cpu_isa_probe();
  if (s) return s;
  const char *forced = getenv("HETC_CPU_ISA");
  const char *why = NULL;
  const int has_avx512 = avx512_runs(&why);
  if (forced && *forced) {
    const cpu_isa_t *isa = cpu_isa_named(forced);
    if (!isa)
      return cpu_status(HETC_PLUGIN_STATUS_INVALID_ARGUMENT,
                        "cpu: HETC_CPU_ISA is '%.40s'; it takes avx2 or avx512", forced);
    if (isa == &isa_avx512 && !has_avx512)
      return cpu_status(HETC_PLUGIN_STATUS_UNAVAILABLE, "cpu: HETC_CPU_ISA=avx512, but %s", why);
    *out = isa;
    *forced_out = 1;
    return NULL;
  }
  *out = has_avx512 ? &isa_avx512 : &isa_avx2;
  return NULL;
}

int cpu_isa_runs_on(const cpu_isa_t *code, const cpu_isa_t *host) {
  return code == host || (code == &isa_avx2 && host == &isa_avx512);
}

int cpu_isa_block_lanes(const cpu_isa_t *isa, int64_t block) {
  return block > 0 && block % isa->lanes == 0 ? isa->lanes : 8;
}
