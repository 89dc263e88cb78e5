/* The cuda plugin through the `hetc` command line ($HETC_BINARY_DIR/bin/hetc),
 * on any machine: the driver is always chosen with HETC_CUDA_DRIVER_LIBRARY,
 * either a file that does not exist or the fake driver
 * ($HETC_FAKE_CUDA_LIBRARY, fake_libcuda.c) in one of its modes.
 *   - `hetc plugins` says why the plugin is unavailable: no driver, no
 *     NVRTC, no device (cuInit's error, or none counted), a driver too old,
 *     a GPU too old for NVRTC; and lists the fake's devices when it is there.
 *   - `hetc compile --targets cuda,cpu` without a driver leaves cuda out with
 *     two warnings and the package runs on the cpu; `--targets cuda` alone
 *     is a failure (exit 1, README's "a failure in hetc or a plugin": the
 *     input is fine, the machine lacks the driver), and so is running a
 *     cuda package there.
 *   - On the fake H100 a model compiles for cuda (NVRTC's real output,
 *     packaged as .cu, .ptx and .cubin) and runs; on a fake A100 the package
 *     still runs, with the fingerprint warning (its sm_90 cubins are
 *     refused and the kernels compiled again); and a compile whose kernels
 *     need more registers than their blocks may have (the fake's
 *     HETC_FAKE_CUDA_REGISTERS) fails with the plugin's reason, as does PTX
 *     from an NVRTC newer than the (fake) driver.
 * Skips (77) without NVRTC, since every reason but NVRTC's comes after it. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "cuda_loader.h"

#define SKIP 77

static const cul_nvrtc_t *nvrtc;
static char work[64]; /* a temporary folder: outputs, packages, the kernel cache */
static char hetc[1024], model[1024], fake[1024];
static int have_cpu;

typedef struct result_t {
  int status; /* exit status, or -1 */
  char *out, *err;
} result_t;

static char *slurp(const char *path) {
  FILE *f = fopen(path, "rb");
  if (!f) return calloc(1, 1);
  fseek(f, 0, SEEK_END);
  const long n = ftell(f);
  fseek(f, 0, SEEK_SET);
  char *text = calloc(1, (size_t)(n > 0 ? n : 0) + 1);
  if (text && n > 0 && fread(text, 1, (size_t)n, f) != (size_t)n) text[0] = 0;
  fclose(f);
  return text;
}

/* Runs `env <env> hetc <args>` in the work folder with its own kernel cache
 * and records store (where `hetc plugins` keeps device peaks);
 * HETC_CUDA_DRIVER_LIBRARY is always in env. */
static result_t run_hetc(const char *env, const char *args) {
  char command[4096], out_path[128], err_path[128];
  snprintf(out_path, sizeof out_path, "%s/stdout", work);
  snprintf(err_path, sizeof err_path, "%s/stderr", work);
  snprintf(command, sizeof command,
           "cd '%s' && env XDG_CACHE_HOME='%s/cache' HETC_RECORDS='%s/records.sqlite' %s '%s' %s >'%s' 2>'%s'", work,
           work, work, env, hetc, args, out_path, err_path);
  const int raw = system(command);
  result_t r = {WIFEXITED(raw) ? WEXITSTATUS(raw) : -1, slurp(out_path), slurp(err_path)};
  assert_non_null(r.out);
  assert_non_null(r.err);
  return r;
}

static void result_free(result_t *r) {
  free(r->out);
  free(r->err);
}

/* 1 when `line` (without its newline) is a whole line of text. */
static int has_line(const char *text, const char *line) {
  const size_t n = strlen(line);
  for (const char *p = text; (p = strstr(p, line)); p += n)
    if ((p == text || p[-1] == '\n') && (p[n] == '\n' || p[n] == 0)) return 1;
  return 0;
}

#define assert_line(text, line)                                                     \
  do {                                                                              \
    if (!has_line((text), (line))) fail_msg("no line \"%s\" in:\n%s", (line), (text)); \
  } while (0)

/* The cuda plugin's paragraph of `hetc plugins` (malloc()ed). */
static char *cuda_paragraph(const char *out) {
  const char *start = strstr(out, "libhetc_plugin_cuda.so\n");
  if (!start) fail_msg("`hetc plugins` lists no libhetc_plugin_cuda.so:\n%s", out);
  while (start > out && start[-1] != '\n') --start;
  const char *end = strstr(start, "\n\n");
  const size_t n = end ? (size_t)(end - start) + 1 : strlen(start);
  char *paragraph = calloc(1, n + 1);
  assert_non_null(paragraph);
  memcpy(paragraph, start, n);
  return paragraph;
}

/* `hetc plugins` under env: exit 0, the cuda plugin in `state`, and the
 * paragraph returned for more checks. */
static char *plugins(const char *env, const char *state) {
  result_t r = run_hetc(env, "plugins");
  if (r.status != 0) fail_msg("hetc plugins exited %d: %s", r.status, r.err);
  char *paragraph = cuda_paragraph(r.out);
  char want[64];
  snprintf(want, sizeof want, "  state: %s", state);
  assert_line(paragraph, want);
  result_free(&r);
  return paragraph;
}

static void expect_reason(const char *env, const char *reason) {
  char *paragraph = plugins(env, "unavailable");
  char want[2048];
  snprintf(want, sizeof want, "  reason: %s", reason);
  assert_line(paragraph, want);
  assert_null(strstr(paragraph, "  device "));
  printf("%s -> %s\n", env, reason);
  free(paragraph);
}

static void fake_env(char *out, size_t size, const char *mode, const char *devices) {
  snprintf(out, size, "HETC_CUDA_DRIVER_LIBRARY='%s' HETC_FAKE_CUDA=%s HETC_FAKE_CUDA_DEVICES=%s", fake, mode,
           devices);
}

/* ------------------------------------------------------------------------ */

static void unavailable_reasons(void **state) {
  (void)state;
  expect_reason("HETC_CUDA_DRIVER_LIBRARY=/nonexistent/libcuda.so.1",
                "cuda: no NVIDIA driver: HETC_CUDA_DRIVER_LIBRARY=/nonexistent/libcuda.so.1 not found "
                "(/nonexistent/libcuda.so.1: cannot open "
                "shared object file: No such file or directory)");
  /* NVRTC is looked for first: its reason wins over a working driver. */
  char env[2048], reason[1024];
  fake_env(env, sizeof env, "ok", "90");
  strncat(env, " HETC_NVRTC_LIBRARY=/nonexistent/libnvrtc.so.13", sizeof env - strlen(env) - 1);
  expect_reason(env,
                "cuda: NVRTC not found (tried HETC_NVRTC_LIBRARY=/nonexistent/libnvrtc.so.13): "
                "/nonexistent/libnvrtc.so.13: cannot open "
                "shared object file: No such file or directory");
  fake_env(env, sizeof env, "no_device", "90");
  expect_reason(env, "cuda: cuInit failed: CUDA_ERROR_NO_DEVICE (no CUDA-capable device is detected)");
  fake_env(env, sizeof env, "zero_devices", "90");
  expect_reason(env, "cuda: no CUDA device (cuDeviceGetCount returned 0)");
  fake_env(env, sizeof env, "old_driver", "90");
  expect_reason(env, "cuda: NVIDIA driver is too old: it speaks CUDA 10.2, the plugin needs at least 11.0");
  /* A GPU older than anything NVRTC compiles for: found when the devices
   * are opened. */
  int count = 0, archs[128];
  assert_int_equal(nvrtc->nvrtcGetNumSupportedArchs(&count), NVRTC_SUCCESS);
  assert_true(count > 0 && count <= 128);
  assert_int_equal(nvrtc->nvrtcGetSupportedArchs(archs), NVRTC_SUCCESS);
  fake_env(env, sizeof env, "ok", "30");
  snprintf(reason, sizeof reason,
           "instance creation failed: cuda: device 0 (Fake GPU sm_30, sm_30) is too old for NVRTC %d.%d (oldest: "
           "sm_%d)",
           nvrtc->major, nvrtc->minor, archs[0]);
  expect_reason(env, reason);
}

static void fake_devices_listed(void **state) {
  (void)state;
  char env[2048], want[512];
  fake_env(env, sizeof env, "ok", "90,86");
  char *paragraph = plugins(env, "ready");
  printf("%s", paragraph);
  assert_line(paragraph, "  target: cuda");
  assert_null(strstr(paragraph, "  reason: "));
  /* 132 SMs x 128 lanes x 2 x 1.98 GHz; 82 x 128 x 2 x 1.695 GHz. Tensor
   * cores: 132 x 2048 and 82 x 256 TF32 flops per clock. */
  assert_line(paragraph, "  device 0: Fake H100 80GB HBM3 (sm_90, TF32 tensor cores 535.3 TFLOPS) (gpu), 132 compute units, "
                         "SIMD 32, peak 66908.2 GFLOPS fp32");
  snprintf(want, sizeof want, "            fingerprint cuda|Fake H100 80GB HBM3|sm_90|driver 13.0|nvrtc %d.%d",
           nvrtc->major, nvrtc->minor);
  assert_line(paragraph, want);
  assert_line(paragraph, "  device 1: Fake GeForce RTX 3090 (sm_86, TF32 tensor cores 35.6 TFLOPS) (gpu), 82 compute units, "
                         "SIMD 32, peak 35581.4 GFLOPS fp32");
  snprintf(want, sizeof want, "            fingerprint cuda|Fake GeForce RTX 3090|sm_86|driver 13.0|nvrtc %d.%d",
           nvrtc->major, nvrtc->minor);
  assert_line(paragraph, want);
  free(paragraph);
}

static const char no_driver[] = "HETC_CUDA_DRIVER_LIBRARY=/nonexistent/libcuda.so.1";
static const char no_driver_reason[] =
    "target 'cuda' is unavailable: cuda: no NVIDIA driver: HETC_CUDA_DRIVER_LIBRARY=/nonexistent/libcuda.so.1 not "
    "found "
    "(/nonexistent/libcuda.so.1: cannot open shared object file: No such file or directory)";

static void compile_without_driver(void **state) {
  (void)state;
  if (!have_cpu) {
    printf("SKIP part: the cpu target is not available here\n");
  } else {
    char args[2048], want[1024];
    snprintf(args, sizeof args, "compile '%s' --targets cuda,cpu -o cpu.hetc", model);
    result_t r = run_hetc(no_driver, args);
    if (r.status != 0) fail_msg("compile exited %d: %s", r.status, r.err);
    snprintf(want, sizeof want, "hetc: warning: %s", no_driver_reason);
    assert_line(r.err, want);
    assert_line(r.err, "hetc: warning: placing every node on the available target: cpu");
    result_free(&r);
    char manifest[128];
    snprintf(manifest, sizeof manifest, "%s/cpu.hetc/manifest.json", work);
    char *text = slurp(manifest);
    assert_non_null(strstr(text, "\"target\":\"cpu\""));
    assert_null(strstr(text, "\"cuda\""));
    free(text);
    r = run_hetc(no_driver, "run cpu.hetc --random-input 1 --repeat 1");
    if (r.status != 0) fail_msg("run exited %d: %s", r.status, r.err);
    assert_non_null(strstr(r.out, "output prob [1,13]:"));
    result_free(&r);
  }

  /* cuda alone: nothing to place the model on. */
  char args[2048], want[1024], path[128];
  snprintf(args, sizeof args, "compile '%s' --targets cuda -o cuda.hetc", model);
  result_t r = run_hetc(no_driver, args);
  assert_int_equal(r.status, 1);
  snprintf(want, sizeof want, "hetc: %s", no_driver_reason);
  assert_line(r.err, want);
  assert_null(strstr(r.err, "warning"));
  snprintf(path, sizeof path, "%s/cuda.hetc", work);
  struct stat st;
  assert_int_not_equal(stat(path, &st), 0); /* no package */
  result_free(&r);
}

static void compile_and_run_on_the_fake(void **state) {
  (void)state;
  char env[2048], args[2048], path[256];
  fake_env(env, sizeof env, "ok", "90");
  snprintf(args, sizeof args, "compile '%s' --targets cuda -o fake.hetc", model);
  result_t r = run_hetc(env, args);
  if (r.status != 0) fail_msg("compile exited %d: %s", r.status, r.err);
  assert_non_null(strstr(r.out, "compiled tiny_conv for cuda:"));
  result_free(&r);
  /* Every kernel as text, PTX and cubin. */
  for (int i = 0; i < 3; ++i) {
    static const char *const suffixes[3] = {"cu", "ptx", "cubin"};
    snprintf(path, sizeof path, "%s/fake.hetc/kernels/s0000-cuda.%s", work, suffixes[i]);
    char *text = slurp(path);
    assert_true(text[0] != 0);
    if (i == 1) assert_non_null(strstr(text, "\n.target sm_90\n"));
    if (i == 2) assert_memory_equal(text, "\177ELF", 4);
    free(text);
  }
  snprintf(path, sizeof path, "%s/fake.hetc/manifest.json", work);
  char *manifest = slurp(path);
  char want[512];
  snprintf(want, sizeof want, "\"fingerprint\":\"cuda|Fake H100 80GB HBM3|sm_90|driver 13.0|nvrtc %d.%d\"",
           nvrtc->major, nvrtc->minor);
  assert_non_null(strstr(manifest, want));
  free(manifest);
  /* The fake runs no kernel: only that it runs is checked. */
  r = run_hetc(env, "run fake.hetc --random-input 1 --repeat 2");
  if (r.status != 0) fail_msg("run exited %d: %s", r.status, r.err);
  assert_non_null(strstr(r.out, "output prob [1,13]:"));
  assert_non_null(strstr(r.out, "over 2 runs"));
  result_free(&r);

  /* Another GPU: the fingerprint warning, and the package still runs. */
  fake_env(env, sizeof env, "ok", "80");
  r = run_hetc(env, "run fake.hetc --random-input 1 --repeat 1");
  if (r.status != 0) fail_msg("run on the A100 exited %d: %s", r.status, r.err);
  snprintf(want, sizeof want,
           "hetc [runtime] warning: package was compiled for 'cuda|Fake H100 80GB HBM3|sm_90|driver 13.0|nvrtc %d.%d' "
           "but target 'cuda' now reports 'cuda|Fake A100-SXM4-40GB|sm_80|driver 13.0|nvrtc %d.%d'; it runs, but its "
           "tuning may not fit this device",
           nvrtc->major, nvrtc->minor, nvrtc->major, nvrtc->minor);
  assert_line(r.err, want);
  result_free(&r);

  /* Kernels needing more registers than their blocks can have (an
   * artificial 1000 per thread: 64 threads a block) are refused with the
   * plugin's reason, naming the node. */
  fake_env(env, sizeof env, "ok", "90");
  strncat(env, " HETC_FAKE_CUDA_REGISTERS=1000", sizeof env - strlen(env) - 1);
  snprintf(args, sizeof args, "compile '%s' --targets cuda -o registers.hetc", model);
  r = run_hetc(env, args);
  assert_int_equal(r.status, 1);
  static const char refused[] = "hetc: node 'conv1' (conv2d) on cuda: cuda: kernel ";
  if (strncmp(r.err, refused, strlen(refused)) != 0 ||
      !strstr(r.err, " uses 1000 registers per thread, so a block may have at most 64 threads; this config launches "))
    fail_msg("unexpected refusal: %s", r.err);
  result_free(&r);

  /* PTX from an NVRTC newer than the driver (a CUDA 12.4 driver, a GPU
   * NVRTC only makes PTX for): the driver's refusal, its JIT log and the
   * hint. */
  if (nvrtc->major * 1000 + nvrtc->minor * 10 > 12040) {
    snprintf(env, sizeof env,
             "HETC_CUDA_DRIVER_LIBRARY='%s' HETC_FAKE_CUDA_DEVICES=130 HETC_FAKE_CUDA_DRIVER_VERSION=12040", fake);
    snprintf(args, sizeof args, "compile '%s' --targets cuda -o newer.hetc", model);
    r = run_hetc(env, args);
    assert_int_equal(r.status, 1);
    if (!strstr(r.err, "hetc: node 'conv1' (conv2d) on cuda: cuda: loading the compiled kernels (compute_") ||
        !strstr(r.err, " on Fake GPU sm_130 failed: CUDA_ERROR_UNSUPPORTED_PTX_VERSION (the provided PTX was compiled "
                       "with an unsupported toolchain.) (NVRTC is newer than the driver); JIT log: ptxas application "
                       "ptx input, line 10; fatal   : Unsupported .version "))
      fail_msg("unexpected refusal: %s", r.err);
    result_free(&r);
  }

  /* No driver: a cuda package cannot run here (exit 1, the reason). */
  r = run_hetc(no_driver, "run fake.hetc --random-input 1 --repeat 1");
  assert_int_equal(r.status, 1);
  snprintf(want, sizeof want, "hetc: %s", no_driver_reason);
  assert_line(r.err, want);
  result_free(&r);
}

/* Two GPUs (an H100 and an A100) are two devices of the cuda target:
 * `cuda:1` compiles for the second alone (its kernels for sm_80, device
 * index 1 in the manifest), `cuda` places over both. */
static void two_gpus(void **state) {
  (void)state;
  char env[2048], args[2048], path[256];
  fake_env(env, sizeof env, "ok", "90,80");
  snprintf(args, sizeof args, "compile '%s' --targets cuda:1 -o second.hetc", model);
  result_t r = run_hetc(env, args);
  if (r.status != 0) fail_msg("compile exited %d: %s", r.status, r.err);
  assert_non_null(strstr(r.out, "compiled tiny_conv for cuda:1:"));
  result_free(&r);
  snprintf(path, sizeof path, "%s/second.hetc/kernels/s0000-cuda.ptx", work);
  char *text = slurp(path);
  assert_non_null(strstr(text, "\n.target sm_80\n"));
  free(text);
  snprintf(path, sizeof path, "%s/second.hetc/manifest.json", work);
  text = slurp(path);
  assert_non_null(strstr(text, "\"device_index\":1,"));
  assert_non_null(strstr(text, "Fake A100-SXM4-40GB"));
  free(text);
  r = run_hetc(env, "run second.hetc --random-input 1 --repeat 1");
  if (r.status != 0) fail_msg("run exited %d: %s", r.status, r.err);
  result_free(&r);

  snprintf(args, sizeof args, "compile '%s' --targets cuda --explain -o both.hetc", model);
  r = run_hetc(env, args);
  if (r.status != 0) fail_msg("compile exited %d: %s", r.status, r.err);
  assert_non_null(strstr(r.out, "placement of tiny_conv on cuda:0 cuda:1 "));
  result_free(&r);
  snprintf(args, sizeof args, "compile '%s' --targets cuda:2 -o never.hetc", model);
  r = run_hetc(env, args);
  assert_int_equal(r.status, 2);
  assert_string_equal(r.err, "hetc: target 'cuda:2': cuda has 2 devices (cuda:0 to cuda:1)\n");
  result_free(&r);
}

int main(void) {
  const char *bin = getenv("HETC_BINARY_DIR"), *src = getenv("HETC_SOURCE_DIR");
  const char *lib = getenv("HETC_FAKE_CUDA_LIBRARY");
  if (!bin || !src || !lib) {
    printf("SKIP: HETC_BINARY_DIR, HETC_SOURCE_DIR and HETC_FAKE_CUDA_LIBRARY must be set\n");
    return SKIP;
  }
  const char *why = NULL;
  if (!(nvrtc = cul_nvrtc(&why))) {
    printf("SKIP: %s\n", why);
    return SKIP;
  }
  if (!nvrtc->nvrtcGetNumSupportedArchs || !nvrtc->nvrtcGetSupportedArchs) {
    printf("SKIP: NVRTC %d.%d cannot list its architectures\n", nvrtc->major, nvrtc->minor);
    return SKIP;
  }
  snprintf(hetc, sizeof hetc, "%s/bin/hetc", bin);
  snprintf(model, sizeof model, "%s/samples/tiny_conv.json", src);
  snprintf(fake, sizeof fake, "%s", lib);
  snprintf(work, sizeof work, "/tmp/hetc-cuda-cli-XXXXXX");
  if (!mkdtemp(work)) return 1;
  /* Whether the cpu target runs here (LLVM's plugin). */
  result_t r = run_hetc(no_driver, "plugins");
  have_cpu = strstr(r.out, "  target: cpu\n") && strstr(r.out, "fingerprint cpu:");
  result_free(&r);
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(unavailable_reasons),
      cmocka_unit_test(fake_devices_listed),
      cmocka_unit_test(compile_without_driver),
      cmocka_unit_test(compile_and_run_on_the_fake),
      cmocka_unit_test(two_gpus),
  };
  const int failed = cmocka_run_group_tests(tests, NULL, NULL);
  char command[128];
  snprintf(command, sizeof command, "rm -rf '%s'", work);
  if (system(command) != 0) fprintf(stderr, "cannot remove %s\n", work);
  return failed;
}
