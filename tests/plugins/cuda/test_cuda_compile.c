/* The cuda plugin's kernels compiled for real GPUs on a machine without
 * one: for every conv2d and dense template, at least HETC_CUDA_COMPILE_CONFIGS
 * (default 20) configs sampled from the spaces of ResNet-50's workloads
 * (MobileNet v1's for the depthwise template) are emitted, compiled to PTX
 * with NVRTC and assembled with ptxas for sm_80 and sm_90 (-v), which must
 * succeed; so must resize's, normalize's and matmul's templates
 * (test_resize_compiles, test_normalize_compiles, test_matmul_compiles). Sampled
 * configs that build() would refuse before compiling (limits the space's
 * constraint does not span) are drawn again and counted. The test prints a table of registers, spills and shared memory
 * per template and architecture, and fails on a config whose registers
 * times threads exceed what its block may hold (the driver would refuse to
 * launch it).
 *
 * White-box: the plugin's template sources are linked in, with the driver's
 * host services as the host. Skips (77) when NVRTC or ptxas is missing.
 *
 * HETC_CUDA_COMPILE_NVRTC=0 (the sanitizer build) does every step but NVRTC
 * and ptxas: the same spaces, draws, demands and limits, and the same
 * kernels emitted (HETC_CUDA_COMPILE_CONFIGS as in the plain build, so the
 * same sources), whose compiling the plain build checks. NVRTC and ptxas
 * are not instrumented and took all but a few percent of the sanitizer
 * run; the plugin's call into NVRTC (nvrtc.c) runs under the sanitizers in
 * test_cuda_runtime. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cu.h"
#include "plugin_gpu_ops.h"
#include "cuda_loader.h"
#include "graph/passes.h"
#include "graph/tasks.h"
#include "model/model.h"
#include "plugins/host.h"
#include "space/space.h"

#define MAX_WORKLOADS 64

/* 0 when HETC_CUDA_COMPILE_NVRTC=0: kernels are emitted, not compiled. */
static int nvrtc_on = 1;

typedef struct arch_t {
  const char *name;    /* ptxas -arch */
  const char *virtual; /* NVRTC's target */
  cu_limits_t limits;
} arch_t;

/* A100 and H100 (SXM) as the Driver API reports them. */
static arch_t archs[2] = {
    {"sm_80", "compute_80", {8, 0, 108, 1024, {1024, 1024, 64}, {2147483647, 65535, 65535}, 49152, 167936, 65536,
                              65536, 32, 1410000, 41943040, 42949672960LL, 1215000, 5120}},
    {"sm_90", "compute_90", {9, 0, 132, 1024, {1024, 1024, 64}, {2147483647, 65535, 65535}, 49152, 233472, 65536,
                              65536, 32, 1980000, 52428800, 85899345920LL, 2619000, 5120}},
};

typedef struct workloads_t {
  hetc_plugin_workload_t w[MAX_WORKLOADS];
  hetc_plugin_tensor_t inputs[MAX_WORKLOADS][HETC_MAX_NODE_INPUTS];
  int count;
} workloads_t;

/* The distinct conv2d and dense workloads of a sample model. */
static void load_workloads(const char *model, workloads_t *out) {
  char path[4096];
  snprintf(path, sizeof(path), "%s/samples/%s", getenv("HETC_SOURCE_DIR"), model);
  hetc_graph_t *graph = NULL;
  hetc_task_list_t *tasks = NULL;
  assert_null(hetc_model_load_file(path, &graph));
  assert_null(hetc_graph_optimize(graph));
  assert_null(hetc_graph_extract_tasks(graph, &tasks));
  for (int32_t t = 0; t < tasks->count && out->count < MAX_WORKLOADS; ++t) {
    const hetc_task_t *task = &tasks->tasks[t];
    if (task->op != HETC_OP_CONV2D && task->op != HETC_OP_DENSE) continue;
    const int i = out->count++;
    assert_null(hetc_graph_node_workload(graph, task->first_node, out->inputs[i], &out->w[i]));
  }
  hetc_task_list_free(tasks);
  hetc_graph_free(graph);
}

/* Whether template `kind` is among those offered for `w` on sm_90. */
static int template_applies(const hetc_plugin_workload_t *w, int kind) {
  for (int32_t t = 0; t < cu_template_count(w, &archs[1].limits); ++t)
    if (cu_template_kind(w, &archs[1].limits, t) == kind) return 1;
  return 0;
}

static const char *ptxas_path(void) {
  static char path[4096];
  const char *home = getenv("CUDA_HOME");
  const char *candidates[] = {home ? home : "", "/usr/local/cuda"};
  for (int i = 0; i < 2; ++i) {
    if (!candidates[i][0]) continue;
    snprintf(path, sizeof(path), "%s/bin/ptxas", candidates[i]);
    if (access(path, X_OK) == 0) return path;
  }
  return NULL;
}

typedef struct usage_t {
  int registers, spill_bytes, shared_bytes;
} usage_t;

/* ptxas -v on a PTX file; 0 and the usage of the (only) entry, or -1 with
 * ptxas's output printed. */
static int assemble(const char *ptxas, const char *arch, const char *ptx_path, usage_t *u) {
  char command[16384];
  snprintf(command, sizeof(command), "'%s' -arch=%s -v -o /dev/null '%s' 2>&1", ptxas, arch, ptx_path);
  FILE *p = popen(command, "r");
  if (!p) return -1;
  char output[16384];
  size_t n = fread(output, 1, sizeof(output) - 1, p);
  output[n] = 0;
  const int rc = pclose(p);
  memset(u, 0, sizeof(*u));
  for (const char *line = output; line && *line; line = strchr(line, '\n') ? strchr(line, '\n') + 1 : NULL) {
    const char *at;
    int a = 0, b = 0;
    if ((at = strstr(line, "bytes spill stores")) && sscanf(line, "ptxas info    : %d bytes stack frame, %d", &a, &b) == 2)
      u->spill_bytes += b;
    if ((at = strstr(line, "Used ")) && sscanf(at, "Used %d registers", &a) == 1) {
      if (a > u->registers) u->registers = a;
      const char *smem = strstr(at, "bytes smem");
      if (smem) {
        const char *start = smem;
        while (start > at && start[-1] != ',') --start;
        if (sscanf(start, " %d bytes smem", &b) == 1 && b > u->shared_bytes) u->shared_bytes = b;
      }
    }
  }
  if (rc != 0) {
    printf("ptxas -arch=%s failed on %s:\n%s\n", arch, ptx_path, output);
    return -1;
  }
  return 0;
}

typedef struct row_t {
  int configs, with_spills, over_registers, refused;
  int reg_min, reg_max, smem_max, spill_max;
} row_t;

static void test_templates_compile_for_sm80_and_sm90(void **state) {
  (void)state;
  cu_host = hetc_host_services();
  const char *ptxas = ptxas_path();
  const int wanted = getenv("HETC_CUDA_COMPILE_CONFIGS") ? atoi(getenv("HETC_CUDA_COMPILE_CONFIGS")) : 20;
  static workloads_t resnet, mobilenet;
  load_workloads("resnet50.json", &resnet);
  load_workloads("mobilenet_v1.json", &mobilenet);
  static const int kinds[] = {CU_T_CONV_NCHW, CU_T_CONV_NHWC, CU_T_CONV_WINOGRAD, CU_T_CONV_IGEMM_TC,
                              CU_T_CONV_DEPTHWISE, CU_T_DENSE};
  row_t rows[6][2];
  memset(rows, 0, sizeof(rows));
  int emitted[6] = {0};
  uint64_t rng = 0x5eed;
  char dir[] = "/tmp/hetc-cuda-compile-XXXXXX";
  assert_non_null(mkdtemp(dir));
  int failures = 0;
  for (int k = 0; k < 6; ++k) {
    const workloads_t *set = kinds[k] == CU_T_CONV_DEPTHWISE ? &mobilenet : &resnet;
    int done = 0;
    /* Round-robin over the workloads the template applies to. */
    for (int round = 0; done < wanted && round < wanted * 40; ++round)
      for (int i = 0; i < set->count && done < wanted; ++i) {
        const hetc_plugin_workload_t *w = &set->w[i];
        if (!template_applies(w, kinds[k])) continue;
        cu_space_t space;
        cu_space_describe(w, kinds[k], &space);
        hetc_plugin_space_t *host_space = NULL;
        assert_null(hetc_space_create(&host_space));
        assert_null(cu_space_define(&space, w, &archs[0].limits, host_space));
        int64_t at;
        /* The first config is the template's default, the others sampled. */
        assert_null(done == 0 ? hetc_space_default(host_space, &at) : hetc_space_sample_valid(host_space, &rng, &at));
        hetc_space_config_t config;
        assert_null(hetc_space_config_at(host_space, at, &config));
        cu_emit_t *e = calloc(1, sizeof(*e));
        assert_non_null(e);
        e->wl = w;
        e->kind = kinds[k];
        assert_null(cu_config_parse(&space, &config.view, &e->cfg));
        /* What the space's constraint cannot see (the NCHW template's
         * reduction staging) build() refuses before compiling; so does
         * this test, drawing again. */
        cu_demand_t demand;
        cu_config_demand(w, kinds[k], &e->cfg, &demand);
        hetc_plugin_status_t refused = cu_check_limits(&demand, &archs[0].limits);
        if (refused) {
          cu_host->status_free(refused);
          ++rows[k][0].refused;
          free(e);
          hetc_space_free(host_space);
          continue;
        }
        hpc_strbuf_init(&e->src);
        hetc_plugin_status_t s = cu_emit(e);
        if (s) fail_msg("%s: emit: %s", cu_template_name(kinds[k]), cu_host->status_message(s));
        ++emitted[k];
        for (int a = 0; a < 2 && nvrtc_on; ++a) {
          void *ptx = NULL;
          size_t length = 0;
          s = cu_nvrtc_compile(e->src.data, e->src.length, archs[a].virtual, &ptx, &length);
          if (s) fail_msg("%s config %lld: NVRTC: %s", cu_template_name(kinds[k]), (long long)at, cu_host->status_message(s));
          char path[4200];
          snprintf(path, sizeof(path), "%s/%s_%d_%s.ptx", dir, cu_template_name(kinds[k]), done, archs[a].name);
          FILE *f = fopen(path, "wb");
          assert_non_null(f);
          fwrite(ptx, 1, length, f);
          fclose(f);
          free(ptx);
          usage_t u;
          if (assemble(ptxas, archs[a].name, path, &u) != 0) {
            ++failures;
            continue;
          }
          row_t *r = &rows[k][a];
          const int64_t threads = (int64_t)e->launches[0].block[0] * e->launches[0].block[1] * e->launches[0].block[2];
          if (r->configs == 0 || u.registers < r->reg_min) r->reg_min = u.registers;
          if (u.registers > r->reg_max) r->reg_max = u.registers;
          if (u.shared_bytes > r->smem_max) r->smem_max = u.shared_bytes;
          if (u.spill_bytes > r->spill_max) r->spill_max = u.spill_bytes;
          r->with_spills += u.spill_bytes > 0;
          r->over_registers += (int64_t)u.registers * threads > archs[a].limits.registers_per_block;
          ++r->configs;
          remove(path);
        }
        hpc_strbuf_free(&e->src);
        free(e);
        hetc_space_free(host_space);
        ++done;
      }
  }
  rmdir(dir);
  if (!nvrtc_on) {
    for (int k = 0; k < 6; ++k) {
      printf("%-32s %d configs emitted (%d refused), not compiled (HETC_CUDA_COMPILE_NVRTC=0)\n",
             cu_template_name(kinds[k]), emitted[k], rows[k][0].refused);
      if (emitted[k] < wanted) fail_msg("%s: %d configs emitted, %d wanted", cu_template_name(kinds[k]), emitted[k], wanted);
    }
    return;
  }
  printf("\n%-32s %-5s %7s %13s %12s %10s %11s %8s\n", "template", "arch", "configs", "registers", "with spills",
         "max spill", "max smem", "refused");
  for (int k = 0; k < 6; ++k)
    for (int a = 0; a < 2; ++a) {
      const row_t *r = &rows[k][a];
      printf("%-32s %-5s %7d %6d..%-6d %12d %8d B %9d B %8d\n", cu_template_name(kinds[k]), archs[a].name, r->configs,
             r->reg_min, r->reg_max, r->with_spills, r->spill_max, r->smem_max, rows[k][0].refused);
    }
  assert_int_equal(failures, 0);
  for (int k = 0; k < 6; ++k)
    for (int a = 0; a < 2; ++a) {
      if (rows[k][a].configs < wanted)
        fail_msg("%s %s: %d configs compiled, %d wanted", cu_template_name(kinds[k]), archs[a].name,
                 rows[k][a].configs, wanted);
      /* The space's constraint must keep registers x threads inside a
       * block, or the tuner would keep proposing unlaunchable configs. */
      if (rows[k][a].over_registers)
        fail_msg("%s %s: %d configs need more registers than a block has", cu_template_name(kinds[k]),
                 archs[a].name, rows[k][a].over_registers);
    }
}

/* Template `kind` at its default config for `w`, emitted and compiled by
 * NVRTC for sm_80; 0 when it compiles. */
static int default_config_compiles(const hetc_plugin_workload_t *w, int kind, const char *what) {
  cu_space_t space;
  cu_space_describe(w, kind, &space);
  hetc_plugin_space_t *host_space = NULL;
  assert_null(hetc_space_create(&host_space));
  assert_null(cu_space_define(&space, w, &archs[0].limits, host_space));
  int64_t at;
  assert_null(hetc_space_default(host_space, &at));
  hetc_space_config_t config;
  assert_null(hetc_space_config_at(host_space, at, &config));
  cu_emit_t *e = calloc(1, sizeof(*e));
  assert_non_null(e);
  e->wl = w;
  e->kind = kind;
  assert_null(cu_config_parse(&space, &config.view, &e->cfg));
  hpc_strbuf_init(&e->src);
  hetc_plugin_status_t s = cu_emit(e);
  if (!s && nvrtc_on) {
    void *ptx = NULL;
    size_t length = 0;
    s = cu_nvrtc_compile(e->src.data, e->src.length, archs[0].virtual, &ptx, &length);
    free(ptx);
  }
  if (s) printf("%s (%s): %s\n", cu_template_name(kind), what, cu_host->status_message(s));
  const int failed = s != NULL;
  if (s) cu_host->status_free(s);
  hpc_strbuf_free(&e->src);
  free(e);
  hetc_space_free(host_space);
  return failed;
}

/* ABI minors 6's and 7's activations, written as CUDA C for NVRTC: in the
 * epilogue of every conv2d and dense template (the first sample workload
 * each applies to) and as a unary elementwise op; erf only as the latter,
 * never an epilogue's. */
static void test_minor6_activations_compile(void **state) {
  (void)state;
  cu_host = hetc_host_services();
  static workloads_t resnet, mobilenet;
  load_workloads("resnet50.json", &resnet);
  load_workloads("mobilenet_v1.json", &mobilenet);
  static const int kinds[] = {CU_T_CONV_NCHW, CU_T_CONV_NHWC, CU_T_CONV_WINOGRAD, CU_T_CONV_IGEMM_TC,
                              CU_T_CONV_DEPTHWISE, CU_T_DENSE};
  static const int32_t activations[] = {HETC_PLUGIN_ACT_SILU, HETC_PLUGIN_ACT_HARDSWISH, HETC_PLUGIN_ACT_HARDSIGMOID,
                                        HETC_PLUGIN_ACT_GELU, HETC_PLUGIN_ACT_GELU_TANH, HETC_PLUGIN_ACT_ERF};
  static const char *const names[] = {"silu", "hardswish", "hardsigmoid", "gelu", "gelu_tanh", "erf"};
  enum { EPILOGUES = 5, ALL = 6 };
  int failures = 0, compiled = 0;
  for (int k = 0; k < 6; ++k) {
    const workloads_t *set = kinds[k] == CU_T_CONV_DEPTHWISE ? &mobilenet : &resnet;
    int i = 0;
    while (i < set->count && !template_applies(&set->w[i], kinds[k])) ++i;
    assert_true(i < set->count);
    for (int a = 0; a < EPILOGUES; ++a) {
      hetc_plugin_workload_t w = set->w[i];
      w.epilogue.activation = activations[a];
      failures += default_config_compiles(&w, kinds[k], names[a]);
      ++compiled;
    }
  }
  hetc_plugin_tensor_t t = {HETC_PLUGIN_DTYPE_FLOAT32, 4, {1, 12, 7, 7}, {HETC_PLUGIN_LAYOUT_ROW_MAJOR, 0}};
  for (int a = 0; a < ALL; ++a) {
    hetc_plugin_workload_t w;
    memset(&w, 0, sizeof(w));
    w.op = HETC_PLUGIN_OP_ELEMENTWISE;
    w.num_inputs = 1;
    w.inputs = &t;
    w.output = t;
    w.activation = activations[a];
    failures += default_config_compiles(&w, CU_T_ELEMENTWISE, names[a]);
    ++compiled;
  }
  printf("%d kernels with minor 6's and 7's activations %s, %d failed\n", compiled - failures,
         nvrtc_on ? "compiled" : "emitted (not compiled: HETC_CUDA_COMPILE_NVRTC=0)", failures);
  assert_int_equal(failures, 0);
}

/* A resize (ABI 2.0) of `in` to oh x ow, scales output / input. */
static hetc_plugin_workload_t resize_workload(const hetc_plugin_tensor_t *in, int64_t oh, int64_t ow, int32_t mode,
                                              int32_t coordinates, int32_t rounding) {
  hetc_plugin_workload_t w;
  memset(&w, 0, sizeof(w));
  w.op = HETC_PLUGIN_OP_RESIZE;
  w.num_inputs = 1;
  w.inputs = in;
  w.output = *in;
  w.output.shape[2] = oh;
  w.output.shape[3] = ow;
  w.output.layout = (hetc_plugin_layout_t){HETC_PLUGIN_LAYOUT_ROW_MAJOR, 0};
  w.params.resize.mode = mode;
  w.params.resize.coordinates = coordinates;
  w.params.resize.rounding = rounding;
  w.params.resize.scales[0] = (double)oh / (double)in->shape[2];
  w.params.resize.scales[1] = (double)ow / (double)in->shape[3];
  return w;
}

/* cuda_resize compiled by NVRTC and assembled by ptxas for sm_80 and sm_90:
 * nearest and linear in row-major, NCHW8c with padding channels and NHWC,
 * and the largest tables a model can ask for (16384 output rows and
 * columns, 192 KiB of taps; 32-bit indices for an input 70000 wide). Its
 * tables must be global memory (.global in the PTX), never the 64 KiB
 * __constant__ bank (.const), which the largest would overflow. The
 * kernels' arithmetic runs on PoCL: test_resize_kernels_cuda. */
static void test_resize_compiles(void **state) {
  (void)state;
  cu_host = hetc_host_services();
  const char *ptxas = ptxas_path();
  const int32_t N = HETC_PLUGIN_RESIZE_NEAREST, L = HETC_PLUGIN_RESIZE_LINEAR;
  const hetc_plugin_tensor_t inputs[] = {
      {HETC_PLUGIN_DTYPE_FLOAT32, 4, {2, 3, 5, 7}, {HETC_PLUGIN_LAYOUT_ROW_MAJOR, 0}},
      {HETC_PLUGIN_DTYPE_FLOAT32, 4, {2, 13, 7, 13}, {HETC_PLUGIN_LAYOUT_NCHWC, 8}},
      {HETC_PLUGIN_DTYPE_FLOAT32, 4, {1, 6, 13, 7}, {HETC_PLUGIN_LAYOUT_NHWC, 0}},
      {HETC_PLUGIN_DTYPE_FLOAT32, 4, {1, 3, 600, 800}, {HETC_PLUGIN_LAYOUT_ROW_MAJOR, 0}},
      {HETC_PLUGIN_DTYPE_FLOAT32, 4, {1, 1, 2, 70000}, {HETC_PLUGIN_LAYOUT_ROW_MAJOR, 0}},
  };
  const hetc_plugin_workload_t workloads[] = {
      resize_workload(&inputs[0], 10, 14, N, HETC_PLUGIN_RESIZE_ASYMMETRIC, HETC_PLUGIN_RESIZE_ROUND_PREFER_FLOOR),
      resize_workload(&inputs[0], 10, 14, L, HETC_PLUGIN_RESIZE_HALF_PIXEL, 0),
      resize_workload(&inputs[1], 10, 5, N, HETC_PLUGIN_RESIZE_HALF_PIXEL, HETC_PLUGIN_RESIZE_CEIL),
      resize_workload(&inputs[1], 10, 5, L, HETC_PLUGIN_RESIZE_PYTORCH_HALF_PIXEL, 0),
      resize_workload(&inputs[2], 5, 10, L, HETC_PLUGIN_RESIZE_ALIGN_CORNERS, 0),
      resize_workload(&inputs[3], 16384, 16384, L, HETC_PLUGIN_RESIZE_HALF_PIXEL, 0),
      resize_workload(&inputs[4], 4, 16384, N, HETC_PLUGIN_RESIZE_ASYMMETRIC, HETC_PLUGIN_RESIZE_FLOOR),
  };
  const int count = (int)(sizeof(workloads) / sizeof(workloads[0]));
  char dir[] = "/tmp/hetc-cuda-resize-XXXXXX";
  assert_non_null(mkdtemp(dir));
  int failures = 0;
  for (int i = 0; i < count; ++i) {
    const hetc_plugin_workload_t *w = &workloads[i];
    assert_int_equal(cu_template_count(w, &archs[1].limits), 1);
    assert_int_equal(cu_template_kind(w, &archs[1].limits, 0), CU_T_RESIZE);
    assert_string_equal(cu_template_name(CU_T_RESIZE), "cuda_resize");
    cu_emit_t *e = calloc(1, sizeof(*e));
    assert_non_null(e);
    e->wl = w;
    e->kind = CU_T_RESIZE;
    hpc_strbuf_init(&e->src);
    hetc_plugin_status_t s = cu_emit(e);
    if (s) fail_msg("resize %d: emit: %s", i, cu_host->status_message(s));
    for (int a = 0; a < 2 && nvrtc_on; ++a) {
      void *ptx = NULL;
      size_t length = 0;
      s = cu_nvrtc_compile(e->src.data, e->src.length, archs[a].virtual, &ptx, &length);
      if (s) fail_msg("resize %d: NVRTC: %s", i, cu_host->status_message(s));
      /* The tables' declarations, wherever PTX puts them. */
      const char *table = strstr((const char *)ptx, "resize_col_lo");
      while (table && table > (const char *)ptx && table[-1] != '\n') --table;
      if (!table || strncmp(table, ".global", 7) != 0) {
        printf("resize %d: the tables are not in global memory:\n%.200s\n", i, table ? table : "(not found)");
        ++failures;
      }
      char path[4200];
      snprintf(path, sizeof(path), "%s/resize_%d_%s.ptx", dir, i, archs[a].name);
      FILE *f = fopen(path, "wb");
      assert_non_null(f);
      fwrite(ptx, 1, length, f);
      fclose(f);
      free(ptx);
      usage_t u;
      if (assemble(ptxas, archs[a].name, path, &u) != 0) ++failures;
      else printf("resize %d %s: %d registers\n", i, archs[a].name, u.registers);
      remove(path);
    }
    hpc_strbuf_free(&e->src);
    free(e);
  }
  rmdir(dir);
  assert_int_equal(failures, 0);
}

/* A normalize (ABI 2.0) of `in`. */
static hetc_plugin_workload_t normalize_workload(const hetc_plugin_tensor_t *in, int32_t axis, int32_t num_axes,
                                                 int32_t groups, int32_t affine) {
  hetc_plugin_workload_t w;
  memset(&w, 0, sizeof(w));
  w.op = HETC_PLUGIN_OP_NORMALIZE;
  w.num_inputs = 1;
  w.inputs = in;
  w.output = *in;
  w.output.layout = (hetc_plugin_layout_t){HETC_PLUGIN_LAYOUT_ROW_MAJOR, 0};
  w.params.normalize = (hetc_plugin_normalize_params_t){axis, num_axes, groups, affine, 1e-5};
  return w;
}

/* cuda_normalize compiled by NVRTC and assembled by ptxas for sm_80 and
 * sm_90: a block a line (instance and group norm, LayerNorm over the last
 * dim, rank 5) and a thread a line (LayerNorm over NCHW's channels), affine
 * or not, row-major, NCHW8c with padding channels (a second kernel) and
 * NHWC. Its launches are blocks of HPC_GPU_OPS_BLOCK threads, and the
 * block reduction's shared memory is what the demand counts. The kernels'
 * arithmetic runs on PoCL: test_normalize_kernels_cuda. */
static void test_normalize_compiles(void **state) {
  (void)state;
  cu_host = hetc_host_services();
  const char *ptxas = ptxas_path();
  const hetc_plugin_tensor_t inputs[] = {
      {HETC_PLUGIN_DTYPE_FLOAT32, 4, {2, 8, 3, 3}, {HETC_PLUGIN_LAYOUT_ROW_MAJOR, 0}},
      {HETC_PLUGIN_DTYPE_FLOAT32, 4, {1, 6, 4, 5}, {HETC_PLUGIN_LAYOUT_NCHWC, 8}},
      {HETC_PLUGIN_DTYPE_FLOAT32, 3, {1, 197, 768}, {HETC_PLUGIN_LAYOUT_ROW_MAJOR, 0}},
      {HETC_PLUGIN_DTYPE_FLOAT32, 4, {1, 96, 56, 56}, {HETC_PLUGIN_LAYOUT_ROW_MAJOR, 0}},
      {HETC_PLUGIN_DTYPE_FLOAT32, 4, {1, 10, 3, 4}, {HETC_PLUGIN_LAYOUT_NCHWC, 8}},
      {HETC_PLUGIN_DTYPE_FLOAT32, 4, {2, 12, 3, 5}, {HETC_PLUGIN_LAYOUT_NHWC, 0}},
      {HETC_PLUGIN_DTYPE_FLOAT32, 5, {2, 4, 3, 4, 5}, {HETC_PLUGIN_LAYOUT_ROW_MAJOR, 0}},
  };
  const struct {
    hetc_plugin_workload_t w;
    int block_per_line, launches;
  } cases[] = {
      {normalize_workload(&inputs[0], 1, 3, 4, 1), 1, 1},  {normalize_workload(&inputs[1], 1, 3, 6, 0), 1, 2},
      {normalize_workload(&inputs[2], 2, 1, 1, 1), 1, 1},  {normalize_workload(&inputs[3], 1, 1, 1, 1), 0, 1},
      {normalize_workload(&inputs[4], 1, 1, 1, 1), 0, 2},  {normalize_workload(&inputs[5], 1, 3, 3, 1), 1, 1},
      {normalize_workload(&inputs[6], 1, 4, 2, 0), 1, 1},
  };
  const int count = (int)(sizeof(cases) / sizeof(cases[0]));
  char dir[] = "/tmp/hetc-cuda-normalize-XXXXXX";
  assert_non_null(mkdtemp(dir));
  int failures = 0;
  for (int i = 0; i < count; ++i) {
    const hetc_plugin_workload_t *w = &cases[i].w;
    assert_int_equal(cu_template_count(w, &archs[1].limits), 1);
    assert_int_equal(cu_template_kind(w, &archs[1].limits, 0), CU_T_NORMALIZE);
    assert_string_equal(cu_template_name(CU_T_NORMALIZE), "cuda_normalize");
    cu_config_t cfg;
    memset(&cfg, 0, sizeof(cfg));
    cu_demand_t demand;
    cu_config_demand(w, CU_T_NORMALIZE, &cfg, &demand);
    assert_int_equal(demand.block[0], HPC_GPU_OPS_BLOCK);
    assert_int_equal(demand.shared_bytes, HPC_GPU_NORMALIZE_SHARED_BYTES);
    assert_null(cu_check_limits(&demand, &archs[0].limits));
    cu_emit_t *e = calloc(1, sizeof(*e));
    assert_non_null(e);
    e->wl = w;
    e->kind = CU_T_NORMALIZE;
    hpc_strbuf_init(&e->src);
    hetc_plugin_status_t s = cu_emit(e);
    if (s) fail_msg("normalize %d: emit: %s", i, cu_host->status_message(s));
    assert_int_equal(e->num_launches, cases[i].launches);
    for (int l = 0; l < e->num_launches; ++l) assert_int_equal(e->launches[l].block[0], HPC_GPU_OPS_BLOCK);
    for (int a = 0; a < 2 && nvrtc_on; ++a) {
      void *ptx = NULL;
      size_t length = 0;
      s = cu_nvrtc_compile(e->src.data, e->src.length, archs[a].virtual, &ptx, &length);
      if (s) fail_msg("normalize %d: NVRTC: %s", i, cu_host->status_message(s));
      char path[4200];
      snprintf(path, sizeof(path), "%s/normalize_%d_%s.ptx", dir, i, archs[a].name);
      FILE *f = fopen(path, "wb");
      assert_non_null(f);
      fwrite(ptx, 1, length, f);
      fclose(f);
      free(ptx);
      usage_t u;
      if (assemble(ptxas, archs[a].name, path, &u) != 0) {
        ++failures;
      } else {
        const int shared = cases[i].block_per_line ? HPC_GPU_NORMALIZE_SHARED_BYTES : 0;
        if (u.shared_bytes != shared || u.spill_bytes) {
          printf("normalize %d %s: %d bytes of shared memory (expected %d), %d bytes spilled\n", i, archs[a].name,
                 u.shared_bytes, shared, u.spill_bytes);
          ++failures;
        }
        printf("normalize %d %s: %d registers, %d bytes smem\n", i, archs[a].name, u.registers, u.shared_bytes);
      }
      remove(path);
    }
    hpc_strbuf_free(&e->src);
    free(e);
  }
  rmdir(dir);
  assert_int_equal(failures, 0);
}

/* A matmul (ABI 2.0) of a [batch..., m, k] x [batch..., k, n], both
 * operands hinted `layout`. */
static hetc_plugin_workload_t matmul_workload(hetc_plugin_tensor_t inputs[2], int32_t rank, const int64_t *batch,
                                              int64_t m, int64_t k, int64_t n, hetc_plugin_layout_t layout) {
  for (int i = 0; i < 2; ++i) {
    memset(&inputs[i], 0, sizeof(inputs[i]));
    inputs[i].dtype = HETC_PLUGIN_DTYPE_FLOAT32;
    inputs[i].rank = rank;
    for (int32_t d = 0; d + 2 < rank; ++d) inputs[i].shape[d] = batch[d];
    inputs[i].shape[rank - 2] = i ? k : m;
    inputs[i].shape[rank - 1] = i ? n : k;
    inputs[i].layout = layout;
  }
  hetc_plugin_workload_t w;
  memset(&w, 0, sizeof(w));
  w.op = HETC_PLUGIN_OP_MATMUL;
  w.num_inputs = 2;
  w.inputs = inputs;
  w.output = inputs[0];
  w.output.shape[rank - 1] = n;
  w.output.layout = hetc_kit_layout_row_major();
  return w;
}

/* cuda_matmul compiled by NVRTC and assembled by ptxas for sm_80 and
 * sm_90: the default config of attention's products (ViT-B's scores and
 * weighted values, Swin's windows), of a 2-d product, of a rank-3 one with
 * a single row and of a 4-d one hinted NCHW8c (read row-major all the
 * same); then, on ViT-B's scores, configs at the space's corners (the
 * largest thread tile, the smallest block, a block wider than tall). The
 * launch's block is the demand's, the static shared memory ptxas reports
 * is what the demand counts, nothing spills, and the registers fit the
 * block. The kernels' arithmetic runs on PoCL: test_matmul_kernels_cuda. */
static void test_matmul_compiles(void **state) {
  (void)state;
  cu_host = hetc_host_services();
  const char *ptxas = ptxas_path();
  const hetc_plugin_layout_t row_major = hetc_kit_layout_row_major(), nchw8c = hetc_kit_layout_nchwc(8);
  static const int64_t vit[2] = {1, 12}, swin[2] = {64, 3}, three[1] = {3}, heads[2] = {2, 2};
  hetc_plugin_tensor_t inputs[6][2];
  const hetc_plugin_workload_t workloads[6] = {
      matmul_workload(inputs[0], 4, vit, 197, 64, 197, row_major),
      matmul_workload(inputs[1], 4, vit, 197, 197, 64, row_major),
      matmul_workload(inputs[2], 4, swin, 49, 32, 49, row_major),
      matmul_workload(inputs[3], 2, NULL, 5, 7, 9, row_major),
      matmul_workload(inputs[4], 3, three, 1, 40, 7, row_major),
      matmul_workload(inputs[5], 4, heads, 33, 65, 3, nchw8c),
  };
  /* block_m, block_n, block_k, thread_m, thread_n; 0: the default. */
  static const int64_t configs[4][5] = {{0}, {128, 64, 32, 8, 4}, {16, 16, 8, 1, 1}, {32, 128, 16, 2, 8}};
  char dir[] = "/tmp/hetc-cuda-matmul-XXXXXX";
  assert_non_null(mkdtemp(dir));
  int failures = 0;
  for (int i = 0; i < 6; ++i) {
    const hetc_plugin_workload_t *w = &workloads[i];
    assert_int_equal(cu_template_count(w, &archs[1].limits), 1);
    assert_int_equal(cu_template_kind(w, &archs[1].limits, 0), CU_T_MATMUL);
    assert_string_equal(cu_template_name(CU_T_MATMUL), "cuda_matmul");
    cu_space_t space;
    cu_space_describe(w, CU_T_MATMUL, &space);
    for (int c = 0; c < (i == 0 ? 4 : 1); ++c) {
      cu_config_t cfg;
      assert_null(cu_config_parse(&space, NULL, &cfg));
      if (configs[c][0]) {
        cfg.block_m = configs[c][0];
        cfg.block_n = configs[c][1];
        cfg.block_k = configs[c][2];
        cfg.thread_m = configs[c][3];
        cfg.thread_n = configs[c][4];
      }
      cu_demand_t demand;
      cu_config_demand(w, CU_T_MATMUL, &cfg, &demand);
      assert_int_equal(demand.block[0], cfg.block_n / cfg.thread_n);
      assert_int_equal(demand.block[1], cfg.block_m / cfg.thread_m);
      assert_int_equal(demand.shared_bytes, 4 * (cfg.block_m * (cfg.block_k + 1) + cfg.block_k * cfg.block_n));
      for (int a = 0; a < 2; ++a) assert_null(cu_check_limits(&demand, &archs[a].limits));
      cu_emit_t *e = calloc(1, sizeof(*e));
      assert_non_null(e);
      e->wl = w;
      e->kind = CU_T_MATMUL;
      e->cfg = cfg;
      hpc_strbuf_init(&e->src);
      hetc_plugin_status_t s = cu_emit(e);
      if (s) fail_msg("matmul %d config %d: emit: %s", i, c, cu_host->status_message(s));
      assert_int_equal(e->num_inputs, 2);
      for (int k = 0; k < 2; ++k) assert_int_equal(e->input_layouts[k].kind, HETC_PLUGIN_LAYOUT_ROW_MAJOR);
      assert_int_equal(e->output_layout.kind, HETC_PLUGIN_LAYOUT_ROW_MAJOR);
      assert_int_equal(e->num_launches, 1);
      const int32_t rank = w->output.rank;
      int64_t blocks = hetc_kit_ceil_div(w->output.shape[rank - 2], cfg.block_m) *
                       hetc_kit_ceil_div(w->output.shape[rank - 1], cfg.block_n);
      for (int32_t d = 0; d + 2 < rank; ++d) blocks *= w->output.shape[d];
      assert_int_equal(e->launches[0].grid[0], blocks);
      for (int d = 0; d < 3; ++d) assert_int_equal(e->launches[0].block[d], demand.block[d]);
      const int64_t threads = demand.block[0] * demand.block[1];
      for (int a = 0; a < 2 && nvrtc_on; ++a) {
        void *ptx = NULL;
        size_t length = 0;
        s = cu_nvrtc_compile(e->src.data, e->src.length, archs[a].virtual, &ptx, &length);
        if (s) fail_msg("matmul %d config %d: NVRTC: %s", i, c, cu_host->status_message(s));
        char path[4200];
        snprintf(path, sizeof(path), "%s/matmul_%d_%d_%s.ptx", dir, i, c, archs[a].name);
        FILE *f = fopen(path, "wb");
        assert_non_null(f);
        fwrite(ptx, 1, length, f);
        fclose(f);
        free(ptx);
        usage_t u;
        if (assemble(ptxas, archs[a].name, path, &u) != 0) {
          ++failures;
        } else {
          if (u.shared_bytes != demand.shared_bytes || u.spill_bytes ||
              u.registers * threads > archs[a].limits.registers_per_block) {
            printf("matmul %d config %d %s: %d bytes of shared memory (the demand counts %lld), %d bytes spilled, "
                   "%d registers x %lld threads\n",
                   i, c, archs[a].name, u.shared_bytes, (long long)demand.shared_bytes, u.spill_bytes, u.registers,
                   (long long)threads);
            ++failures;
          }
          printf("matmul %d config %d %s: %d registers, %d bytes smem\n", i, c, archs[a].name, u.registers,
                 u.shared_bytes);
        }
        remove(path);
      }
      hpc_strbuf_free(&e->src);
      free(e);
    }
  }
  rmdir(dir);
  assert_int_equal(failures, 0);
}

int main(void) {
  const char *nvrtc = getenv("HETC_CUDA_COMPILE_NVRTC");
  nvrtc_on = !(nvrtc && !strcmp(nvrtc, "0"));
  const char *why = NULL;
  if (!cul_nvrtc(&why)) {
    printf("SKIP: %s\n", why);
    return 77;
  }
  if (!ptxas_path()) {
    printf("SKIP: ptxas not found in $CUDA_HOME/bin or /usr/local/cuda/bin\n");
    return 77;
  }
  const struct CMUnitTest tests[] = {cmocka_unit_test(test_minor6_activations_compile),
                                     cmocka_unit_test(test_resize_compiles),
                                     cmocka_unit_test(test_normalize_compiles),
                                     cmocka_unit_test(test_matmul_compiles),
                                     cmocka_unit_test(test_templates_compile_for_sm80_and_sm90)};
  return cmocka_run_group_tests(tests, NULL, NULL);
}
