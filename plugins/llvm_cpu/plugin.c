/* The cpu plugin's ABI table: query, probe, instances, the device, template
 * dispatch, build/load/emit of artifacts, buffers, run and time. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <llvm-c/Core.h>

#include "hetc/kit/host.h"
#include "cpu.h"
#include "plugin_files.h"
#include "hetc/kit/status.h"
#include "hetc/kit/buffers.h"
#include "hetc/kit/run.h"

const hetc_plugin_host_t *cpu_host;

hetc_plugin_status_t cpu_status(int32_t code, const char *format, ...) {
  va_list args;
  va_start(args, format);
  hetc_plugin_status_t s = hetc_kit_status_va(cpu_host, code, format, args);
  va_end(args);
  return s;
}

struct hetc_plugin_instance_t {
  const cpu_isa_t *isa;
  int isa_forced; /* by HETC_CPU_ISA */
  cpu_jit_t jit;
  cpu_device_t device;
};


struct hetc_plugin_artifact_t {
  hetc_plugin_workload_t wl; /* deep copy */
  int kind;
  const cpu_isa_t *isa; /* the code's */
  cpu_config_t cfg;
  hetc_plugin_artifact_info_t info;
  hetc_plugin_layout_t input_layouts[CPU_MAX_INPUTS + 1];
  uint64_t param_bytes[2];
  char *description;
  /* Identity of (plugin, template, workload, chosen layouts, config, ISA):
   * what a packaged object must have been made for. */
  uint64_t key;
  cpu_kernel_t *kernel; /* owned by the instance's JIT cache */
  int64_t outer, grain;
  int64_t prologue_outer, prologue_grain;
  hetc_kit_run_args_t run_args;
};

/* ------------------------------------------------------------------------ */

static hetc_plugin_status_t cpu_probe(void) { return cpu_isa_probe(); }

static void cpu_instance_destroy(hetc_plugin_instance_t *instance) {
  if (!instance) return;
  cpu_device_fini(&instance->device);
  cpu_jit_fini(&instance->jit);
  free(instance);
}

static hetc_plugin_status_t cpu_instance_create(hetc_plugin_instance_t **out_instance) {
  if (!out_instance)
    return cpu_status(HETC_PLUGIN_STATUS_INVALID_ARGUMENT, "cpu: null out_instance");
  *out_instance = NULL;
  const cpu_isa_t *isa = NULL;
  int isa_forced = 0;
  hetc_plugin_status_t s = cpu_isa_select(&isa, &isa_forced);
  if (s) return s;
  hetc_plugin_instance_t *inst = calloc(1, sizeof(*inst));
  if (!inst) return cpu_status(HETC_PLUGIN_STATUS_OUT_OF_MEMORY, "cpu: out of memory");
  inst->isa = isa;
  inst->isa_forced = isa_forced;
  if ((s = cpu_jit_init(&inst->jit, isa))) {
    free(inst);
    return s;
  }
  if ((s = cpu_device_init(&inst->device, isa))) {
    cpu_jit_fini(&inst->jit);
    free(inst);
    return s;
  }
  *out_instance = inst;
  return NULL;
}

static int32_t cpu_device_count(const hetc_plugin_instance_t *instance) {
  return instance ? 1 : 0;
}

static const hetc_plugin_device_t *cpu_device_get(const hetc_plugin_instance_t *instance,
                                                  int32_t device_index) {
  if (!instance || device_index != 0) return NULL;
  return &instance->device.desc;
}

/* ------------------------------------------------------------------------ */

static int32_t cpu_supports(const hetc_plugin_instance_t *instance, int32_t device_index,
                            const hetc_plugin_workload_t *workload) {
  return instance && device_index == 0 && cpu_template_count(workload) > 0;
}

static int32_t cpu_template_count_fn(const hetc_plugin_instance_t *instance,
                                     int32_t device_index,
                                     const hetc_plugin_workload_t *workload) {
  if (!instance || device_index != 0) return 0;
  return cpu_template_count(workload);
}

static const char *cpu_template_name_fn(const hetc_plugin_instance_t *instance,
                                        int32_t device_index,
                                        const hetc_plugin_workload_t *workload,
                                        int32_t template_index) {
  if (!instance || device_index != 0) return NULL;
  return cpu_template_name(cpu_template_kind(workload, template_index));
}

static uint32_t cpu_template_version_fn(const hetc_plugin_instance_t *instance,
                                        int32_t device_index,
                                        const hetc_plugin_workload_t *workload,
                                        int32_t template_index) {
  if (!instance || device_index != 0) return 0;
  return cpu_template_version(cpu_template_kind(workload, template_index));
}

/* Checks device, workload and template; returns the template kind. */
static hetc_plugin_status_t resolve(const hetc_plugin_instance_t *instance,
                                    int32_t device_index,
                                    const hetc_plugin_workload_t *workload,
                                    int32_t template_index, int *out_kind) {
  if (!instance)
    return cpu_status(HETC_PLUGIN_STATUS_INVALID_ARGUMENT, "cpu: null instance");
  if (device_index != 0)
    return cpu_status(HETC_PLUGIN_STATUS_INVALID_ARGUMENT,
                      "cpu: device %d does not exist (one device)", device_index);
  char reason[512];
  int32_t code = cpu_workload_check(workload, reason, sizeof(reason));
  if (code) return cpu_status(code, "cpu: %s", reason);
  int kind = cpu_template_kind(workload, template_index);
  if (kind < 0)
    return cpu_status(HETC_PLUGIN_STATUS_INVALID_ARGUMENT,
                      "cpu: template %d outside 0..%d for this workload", template_index,
                      cpu_template_count(workload) - 1);
  *out_kind = kind;
  return NULL;
}

static hetc_plugin_status_t cpu_template_define_space(const hetc_plugin_instance_t *instance,
                                                      int32_t device_index,
                                                      const hetc_plugin_workload_t *workload,
                                                      int32_t template_index,
                                                      hetc_plugin_space_t *space) {
  int kind = -1;
  hetc_plugin_status_t s = resolve(instance, device_index, workload, template_index, &kind);
  if (s) return s;
  cpu_space_t desc;
  cpu_space_describe(instance->isa, workload, kind, &desc);
  return cpu_space_define(&desc, space);
}

/* ------------------------------------------------------------------------ */
/* Artifacts                                                                */
/* ------------------------------------------------------------------------ */

static void artifact_free(hetc_plugin_instance_t *instance, hetc_plugin_artifact_t *a) {
  (void)instance;
  if (!a) return;
  hetc_kit_workload_release(&a->wl);
  free(a->description);
  free(a);
}

/* Validates and describes the kernel's boundary without generating IR:
 * everything build() and artifact_load() share. `isa` is the one the code
 * is (to be) made for: the instance's, or a package's narrower one. */
static hetc_plugin_status_t prepare(hetc_plugin_instance_t *instance, const cpu_isa_t *isa,
                                    int32_t device_index, const hetc_plugin_workload_t *workload,
                                    int32_t template_index, const hetc_plugin_config_t *config,
                                    hetc_plugin_artifact_t **out) {
  int kind = -1;
  hetc_plugin_status_t s = resolve(instance, device_index, workload, template_index, &kind);
  if (s) return s;
  cpu_space_t space;
  cpu_space_describe(isa, workload, kind, &space);
  cpu_config_t cfg;
  if ((s = cpu_config_parse(&space, config, &cfg))) return s;
  if (kind == CPU_T_CONV_DEPTHWISE) cfg.tile_ic = cfg.tile_oc;

  hetc_plugin_artifact_t *a = calloc(1, sizeof(*a));
  if (!a) return cpu_status(HETC_PLUGIN_STATUS_OUT_OF_MEMORY, "cpu: out of memory");
  if (hetc_kit_workload_copy(workload, &a->wl)) {
    free(a);
    return cpu_status(HETC_PLUGIN_STATUS_OUT_OF_MEMORY, "cpu: out of memory");
  }
  a->kind = kind;
  a->isa = isa;
  a->cfg = cfg;
  cpu_gen_t g;
  memset(&g, 0, sizeof(g));
  g.isa = isa;
  g.wl = &a->wl;
  g.kind = kind;
  g.cfg = cfg;
  if ((s = cpu_gen_boundary(&g))) {
    artifact_free(instance, a);
    return s;
  }
  hpc_strbuf_t d;
  hpc_strbuf_init(&d);
  hpc_strbuf_printf(&d, "%s v%u [", cpu_template_name(kind), cpu_template_version(kind));
  cpu_config_describe(&space, &cfg, &d);
  hpc_strbuf_printf(&d, "] ");
  hpc_workload_describe(&a->wl, &d);
  char layout[32];
  for (int32_t i = 0; i < g.num_inputs; ++i) {
    hetc_kit_layout_text(g.input_layouts[i], a->wl.inputs[i].rank, layout, sizeof(layout));
    hpc_strbuf_printf(&d, "%s%s", i ? ", " : "; reads ", layout);
  }
  hetc_kit_layout_text(g.output_layout, a->wl.output.rank, layout, sizeof(layout));
  hpc_strbuf_printf(&d, ", writes %s", layout);
  a->description = hpc_strbuf_take(&d, NULL);
  if (!a->description) {
    artifact_free(instance, a);
    return cpu_status(HETC_PLUGIN_STATUS_OUT_OF_MEMORY, "cpu: out of memory");
  }
  a->key = hpc_fnv1a64(a->description, strlen(a->description), HPC_FNV1A64_INIT);
  a->key = hpc_fnv1a64(CPU_PLUGIN_VERSION, strlen(CPU_PLUGIN_VERSION), a->key);
  a->key = hpc_fnv1a64(isa->features, strlen(isa->features), a->key);
  memcpy(a->input_layouts, g.input_layouts, sizeof(a->input_layouts));
  memcpy(a->param_bytes, g.param_bytes, sizeof(a->param_bytes));
  hetc_plugin_artifact_info_t *info = &a->info;
  info->num_inputs = g.num_inputs;
  info->input_layouts = a->input_layouts;
  info->output_layout = g.output_layout;
  info->num_params = g.num_params;
  info->param_bytes = a->param_bytes;
  info->workspace_bytes = g.workspace_bytes;
  info->avg_inner_loop_length = g.avg_inner;
  info->description = a->description;
  a->outer = g.outer;
  a->grain = g.grain < 1 ? 1 : g.grain;
  a->prologue_outer = g.prologue_outer;
  a->prologue_grain = g.prologue_grain < 1 ? 1 : g.prologue_grain;
  hetc_kit_run_args_init(&a->run_args, &a->wl, info);
  *out = a;
  return NULL;
}

static hetc_plugin_status_t cpu_build(hetc_plugin_instance_t *instance, int32_t device_index,
                                      const hetc_plugin_workload_t *workload,
                                      int32_t template_index,
                                      const hetc_plugin_config_t *config,
                                      hetc_plugin_artifact_t **out_artifact) {
  if (!out_artifact)
    return cpu_status(HETC_PLUGIN_STATUS_INVALID_ARGUMENT, "cpu: null out_artifact");
  *out_artifact = NULL;
  hetc_plugin_artifact_t *a = NULL;
  hetc_plugin_status_t s =
      prepare(instance, instance ? instance->isa : NULL, device_index, workload, template_index, config, &a);
  if (s) return s;
  cpu_gen_t g;
  memset(&g, 0, sizeof(g));
  g.isa = a->isa;
  g.wl = &a->wl;
  g.kind = a->kind;
  g.cfg = a->cfg;
  s = cpu_gen_boundary(&g);
  if (!s) s = cpu_gen_module(&g);
  if (!s) {
    s = cpu_jit_compile(&instance->jit, g.ctx, g.mod, &a->kernel);
  } else {
    if (g.mod) LLVMDisposeModule(g.mod);
    if (g.ctx) LLVMContextDispose(g.ctx);
  }
  if (s) {
    artifact_free(instance, a);
    return s;
  }
  *out_artifact = a;
  return NULL;
}

static void cpu_artifact_release(hetc_plugin_instance_t *instance,
                                 hetc_plugin_artifact_t *artifact) {
  if (instance) artifact_free(instance, artifact);
}

static const hetc_plugin_artifact_info_t *cpu_artifact_info(
    const hetc_plugin_artifact_t *artifact) {
  return artifact ? &artifact->info : NULL;
}

static hetc_plugin_status_t cpu_pack_param_fn(const hetc_plugin_artifact_t *artifact,
                                              int32_t param_index, const float *logical,
                                              uint64_t count, void *out_packed) {
  if (!artifact)
    return cpu_status(HETC_PLUGIN_STATUS_INVALID_ARGUMENT, "cpu: null artifact");
  if (param_index < 0 || param_index >= artifact->info.num_params)
    return cpu_status(HETC_PLUGIN_STATUS_INVALID_ARGUMENT,
                      "cpu: param %d outside 0..%d", param_index,
                      artifact->info.num_params - 1);
  return cpu_pack_param(&artifact->wl, artifact->kind, &artifact->cfg, param_index, logical,
                        count, out_packed, artifact->param_bytes[param_index]);
}

/* ------------------------------------------------------------------------ */
/* Buffers                                                                  */
/* ------------------------------------------------------------------------ */

static hetc_plugin_status_t cpu_buffer_alloc(hetc_plugin_instance_t *instance,
                                             int32_t device_index, uint64_t bytes,
                                             hetc_plugin_buffer_t **out_buffer) {
  if (!instance || !out_buffer || device_index != 0)
    return cpu_status(HETC_PLUGIN_STATUS_INVALID_ARGUMENT,
                      "cpu: buffer_alloc: bad instance, device %d or null out", device_index);
  return hetc_kit_buffer_alloc(instance, device_index, bytes, out_buffer);
}

/* ------------------------------------------------------------------------ */
/* Run and time                                                             */
/* ------------------------------------------------------------------------ */

typedef struct run_ctx_t {
  cpu_kernel_fn_t fn;
  float *const *args;
  int64_t phase;
} run_ctx_t;

static void run_body(int64_t begin, int64_t end, void *user) {
  const run_ctx_t *c = user;
  c->fn(c->args, begin, end, c->phase);
}

static void run_phase(run_ctx_t *c, int64_t phase, int64_t outer, int64_t grain) {
  c->phase = phase;
  if (outer <= 0) return;
  if (outer == 1) run_body(0, 1, c);
  else cpu_host->parallel_for(outer, grain, run_body, c);
}

/* The kernel's outer axis over the host's thread pool: the thread count is
 * the host's setting, and nested calls run serially, so kernels never
 * oversubscribe the cores. parallel_for returns when every iteration is
 * done, which is the barrier between a prologue and the main phase. */
static void launch(const hetc_plugin_artifact_t *a, float *const *pointers) {
  run_ctx_t c = {a->kernel->fn, pointers, CPU_PHASE_MAIN};
  run_phase(&c, CPU_PHASE_PROLOGUE, a->prologue_outer, a->prologue_grain);
  run_phase(&c, CPU_PHASE_MAIN, a->outer, a->grain);
}

static int runnable(const hetc_plugin_artifact_t *a) { return a && a->kernel && a->kernel->fn; }

static hetc_plugin_status_t cpu_run(hetc_plugin_instance_t *instance,
                                    const hetc_plugin_artifact_t *artifact,
                                    hetc_plugin_buffer_t *const *args, int32_t num_args) {
  (void)instance;
  if (!runnable(artifact))
    return cpu_status(HETC_PLUGIN_STATUS_INVALID_ARGUMENT, "cpu: artifact not runnable");
  return hetc_kit_run(&artifact->run_args, CPU_PLUGIN_NAME, launch, artifact, args, num_args);
}

static hetc_plugin_status_t cpu_time(hetc_plugin_instance_t *instance,
                                     const hetc_plugin_artifact_t *artifact,
                                     hetc_plugin_buffer_t *const *args, int32_t num_args,
                                     int32_t number, int32_t repeat, double *out_seconds) {
  (void)instance;
  if (!runnable(artifact))
    return cpu_status(HETC_PLUGIN_STATUS_INVALID_ARGUMENT, "cpu: artifact not runnable");
  return hetc_kit_time(&artifact->run_args, CPU_PLUGIN_NAME, launch, artifact, args, num_args, number, repeat,
                       out_seconds);
}

/* Validates like build() and describes the kernel it would generate
 * (features.c). No allocation on success: the search calls this for
 * thousands of candidates a second, from several threads. */
static hetc_plugin_status_t cpu_features(const hetc_plugin_instance_t *instance,
                                         int32_t device_index,
                                         const hetc_plugin_workload_t *workload,
                                         int32_t template_index,
                                         const hetc_plugin_config_t *config,
                                         float *out_features, int32_t capacity,
                                         int32_t *out_count) {
  if (out_count) *out_count = 0;
  if (!out_count || capacity < 0 || (capacity > 0 && !out_features))
    return cpu_status(HETC_PLUGIN_STATUS_INVALID_ARGUMENT,
                      "cpu: features: null out_count or out_features");
  int kind = -1;
  hetc_plugin_status_t s = resolve(instance, device_index, workload, template_index, &kind);
  if (s) return s;
  cpu_space_t space;
  cpu_space_describe(instance->isa, workload, kind, &space);
  cpu_config_t cfg;
  if ((s = cpu_config_parse(&space, config, &cfg))) return s;
  if (kind == CPU_T_CONV_DEPTHWISE) cfg.tile_ic = cfg.tile_oc;
  const int32_t count =
      cpu_features_fill(instance->isa, workload, kind, &cfg, out_features, capacity);
  if (count < 0)
    return cpu_status(HETC_PLUGIN_STATUS_UNSUPPORTED,
                      "cpu: %s has no features (only conv2d and dense templates do)",
                      cpu_template_name(kind));
  *out_count = count;
  return NULL;
}

/* ------------------------------------------------------------------------ */
/* Emit and load                                                            */
/* ------------------------------------------------------------------------ */

static char *file_path(const char *dir, const char *prefix, const char *suffix) {
  size_t n = strlen(dir) + strlen(prefix) + strlen(suffix) + 2;
  char *p = malloc(n);
  if (p) snprintf(p, n, "%s/%s%s", dir, prefix, suffix);
  return p;
}

static hetc_plugin_status_t write_file(const char *path, const void *data, size_t length) {
  size_t n = strlen(path) + 8;
  char *tmp = malloc(n);
  if (!tmp) return cpu_status(HETC_PLUGIN_STATUS_OUT_OF_MEMORY, "cpu: out of memory");
  snprintf(tmp, n, "%s.tmp", path);
  FILE *f = fopen(tmp, "wb");
  int ok = f && fwrite(data, 1, length, f) == length;
  if (f && fclose(f) != 0) ok = 0;
  if (ok && rename(tmp, path) != 0) ok = 0;
  if (!ok) remove(tmp);
  free(tmp);
  return ok ? NULL : cpu_status(HETC_PLUGIN_STATUS_RUNTIME_FAILED, "cpu: cannot write %s", path);
}

static char *read_file(const char *path, size_t *out_length) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  char *data = NULL;
  size_t length = 0, cap = 0;
  for (;;) {
    if (length + 65536 + 1 > cap) {
      cap = (length + 65536 + 1) * 2;
      char *p = realloc(data, cap);
      if (!p) {
        free(data);
        fclose(f);
        return NULL;
      }
      data = p;
    }
    size_t got = fread(data + length, 1, 65536, f);
    length += got;
    if (got < 65536) break;
  }
  fclose(f);
  data[length] = '\0';
  *out_length = length;
  return data;
}

/* A package keeps <prefix>.o, the kernel's relocatable object exactly as
 * the JIT linked it, and <prefix>.ir-hash, a small text file with the ISA
 * the object's code needs, the key of (plugin version, template, workload,
 * layouts, config, target features), the kernel symbol and the IR hash.
 * artifact_load checks the ISA (an AVX-512 object is never linked into an
 * AVX2 instance, where it would fault on its first instruction), then the
 * key, and links the object: `hetc run` never generates, optimises or
 * compiles IR again (no re-JIT), which keeps loading a model fast. */
static hetc_plugin_status_t cpu_artifact_emit(hetc_plugin_instance_t *instance,
                                              const hetc_plugin_artifact_t *artifact,
                                              const char *dir, const char *prefix) {
  if (!instance || !artifact || !dir || !prefix || !artifact->kernel)
    return cpu_status(HETC_PLUGIN_STATUS_INVALID_ARGUMENT, "cpu: artifact_emit: null argument");
  char *o_path = file_path(dir, prefix, ".o"), *h_path = file_path(dir, prefix, ".ir-hash");
  hetc_plugin_status_t s = NULL;
  if (!o_path || !h_path) s = cpu_status(HETC_PLUGIN_STATUS_OUT_OF_MEMORY, "cpu: out of memory");
  if (!s) s = write_file(o_path, artifact->kernel->object, artifact->kernel->object_size);
  if (!s) {
    char text[256];
    int n = snprintf(text, sizeof(text),
                     "hetc-cpu-artifact 2\nisa %s\nkey %016llx\nsymbol %s\nir %016llx\n",
                     artifact->isa->name, (unsigned long long)artifact->key, artifact->kernel->symbol,
                     (unsigned long long)artifact->kernel->ir_hash);
    s = write_file(h_path, text, (size_t)n);
  }
  free(o_path);
  free(h_path);
  return s;
}

static hetc_plugin_status_t cpu_artifact_load(hetc_plugin_instance_t *instance,
                                              int32_t device_index,
                                              const hetc_plugin_workload_t *workload,
                                              int32_t template_index,
                                              const hetc_plugin_config_t *config,
                                              const char *dir, const char *prefix,
                                              hetc_plugin_artifact_t **out_artifact) {
  if (!out_artifact || !dir || !prefix)
    return cpu_status(HETC_PLUGIN_STATUS_INVALID_ARGUMENT, "cpu: artifact_load: null argument");
  *out_artifact = NULL;
  if (!instance) return cpu_status(HETC_PLUGIN_STATUS_INVALID_ARGUMENT, "cpu: null instance");
  hetc_plugin_artifact_t *a = NULL;
  hetc_plugin_status_t s = NULL;
  char *o_path = file_path(dir, prefix, ".o"), *h_path = file_path(dir, prefix, ".ir-hash");
  char *meta = NULL, *object = NULL;
  size_t meta_length = 0, object_length = 0;
  unsigned long long key = 0, ir = 0;
  char symbol[64] = "", isa_name[16] = "";
  const cpu_isa_t *isa = NULL;
  if (!o_path || !h_path) s = cpu_status(HETC_PLUGIN_STATUS_OUT_OF_MEMORY, "cpu: out of memory");
  if (!s && !(meta = read_file(h_path, &meta_length)))
    s = cpu_status(HETC_PLUGIN_STATUS_INVALID_ARGUMENT, "cpu: cannot read %s", h_path);
  if (!s && sscanf(meta, "hetc-cpu-artifact 2\nisa %15s\nkey %llx\nsymbol %63s\nir %llx", isa_name,
                   &key, symbol, &ir) != 4)
    s = cpu_status(HETC_PLUGIN_STATUS_INVALID_ARGUMENT, "cpu: %s is corrupt or from an older hetc",
                   h_path);
  else if (!s && !(isa = cpu_isa_named(isa_name)))
    s = cpu_status(HETC_PLUGIN_STATUS_INVALID_ARGUMENT, "cpu: %s names an unknown ISA '%s'", h_path,
                   isa_name);
  else if (!s && !cpu_isa_runs_on(isa, instance->isa))
    /* Never linked: it would fault on its first instruction. */
    s = cpu_status(HETC_PLUGIN_STATUS_INVALID_ARGUMENT,
                   "cpu: %s holds %s code, and this cpu target runs %s%s; recompile the package "
                   "here",
                   o_path, isa->title, instance->isa->title,
                   instance->isa_forced ? " (HETC_CPU_ISA)" : "");
  if (!s) s = prepare(instance, isa, device_index, workload, template_index, config, &a);
  if (!s && !(object = read_file(o_path, &object_length)))
    s = cpu_status(HETC_PLUGIN_STATUS_INVALID_ARGUMENT, "cpu: cannot read %s", o_path);
  if (!s) {
    if (key != a->key)
      s = cpu_status(HETC_PLUGIN_STATUS_INVALID_ARGUMENT,
                     "cpu: %s was emitted for another workload, template, config or plugin "
                     "version",
                     o_path);
    else if (strncmp(symbol, "hetc_cpu_", 9) != 0 || object_length < 64 ||
             memcmp(object, "\177ELF", 4) != 0)
      s = cpu_status(HETC_PLUGIN_STATUS_INVALID_ARGUMENT, "cpu: %s is not a kernel object",
                     o_path);
    else if ((s = cpu_jit_load_object(&instance->jit, symbol, object, object_length, &a->kernel)) &&
             strstr(cpu_host->status_message(s), "out of memory") == NULL) {
      /* An object the JIT cannot link (cut short, or for something else) is
       * a defect of the package, not of the plugin. */
      hetc_plugin_status_t bad = cpu_status(HETC_PLUGIN_STATUS_INVALID_ARGUMENT, "cpu: %s cannot be loaded: %s",
                                            o_path, cpu_host->status_message(s));
      cpu_host->status_free(s);
      s = bad;
    }
  }
  free(meta);
  free(object);
  free(o_path);
  free(h_path);
  if (s) {
    artifact_free(instance, a);
    return s;
  }
  *out_artifact = a;
  return NULL;
}

/* ------------------------------------------------------------------------ */

static const hetc_plugin_t cpu_plugin = {
    .header = {HETC_PLUGIN_ABI_MAJOR, HETC_PLUGIN_ABI_MINOR, sizeof(hetc_plugin_t), 0},
    .name = CPU_PLUGIN_NAME,
    .vendor = "hetc",
    .version = CPU_PLUGIN_VERSION,
    .description = "LLVM 15 JIT for x86-64 with AVX-512 or AVX2 and FMA (the widest the host "
                   "runs, or HETC_CPU_ISA): NCHW[x]c register-blocked convolutions and vectorised "
                   "ops, compiled in process by ORC LLJIT",
    .probe = cpu_probe,
    .instance_create = cpu_instance_create,
    .instance_destroy = cpu_instance_destroy,
    .device_count = cpu_device_count,
    .device_get = cpu_device_get,
    .supports = cpu_supports,
    .template_count = cpu_template_count_fn,
    .template_name = cpu_template_name_fn,
    .template_version = cpu_template_version_fn,
    .template_define_space = cpu_template_define_space,
    .build = cpu_build,
    .artifact_release = cpu_artifact_release,
    .artifact_info = cpu_artifact_info,
    .pack_param = cpu_pack_param_fn,
    .buffer_alloc = cpu_buffer_alloc,
    .buffer_free = hetc_kit_buffer_free,
    .buffer_write = hetc_kit_buffer_write,
    .buffer_read = hetc_kit_buffer_read,
    .buffer_copy = hetc_kit_buffer_copy,
    .buffer_host_pointer = hetc_kit_buffer_host_pointer,
    .run = cpu_run,
    .time = cpu_time,
    .features = cpu_features,
    .artifact_emit = cpu_artifact_emit,
    .artifact_load = cpu_artifact_load,
    .buffer_view = hetc_kit_buffer_view,
};

HETC_PLUGIN_EXPORT const hetc_plugin_t *hetc_plugin_query(uint32_t host_abi_major,
                                                          uint32_t host_abi_minor,
                                                          const hetc_plugin_host_t *host);

HETC_PLUGIN_EXPORT const hetc_plugin_t *hetc_plugin_query(uint32_t host_abi_major,
                                                          uint32_t host_abi_minor,
                                                          const hetc_plugin_host_t *host) {
  (void)host_abi_minor;
  /* Every service this plugin calls is in minor 0 (optional ones only
   * where HETC_PLUGIN_HAS_FIELD finds them): the kit refuses another major
   * and a shorter table, and keeps the host for its own calls. */
  if (!hetc_kit_bind(host_abi_major, host, CPU_PLUGIN_NAME)) return NULL;
  cpu_host = host;
  return &cpu_plugin;
}
