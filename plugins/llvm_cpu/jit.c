/* The JIT: one ORC LLJIT per instance with an explicit x86-64 target
 * machine (the CPU of the instance's ISA level, x86-64-v3 or -v4, with
 * every feature named; the host's CPU as each kernel's "tune-cpu", which
 * schedules but adds no instruction; opt level 3).
 *
 * A kernel module is optimised with the new pass manager ("default<O3>"),
 * compiled once to an ELF object in memory (LLVMTargetMachineEmitToMemory-
 * Buffer) and that object is linked into the JIT (LLVMOrcLLJITAddObjectFile).
 * Keeping the object bytes lets artifact_emit write them into a package, and
 * `hetc run` links the packaged object without generating or optimising IR
 * again (see plugin.c). Kernels are cached per instance by the FNV-1a 64
 * hash of the printed (pre-optimisation) IR, and named after it, so
 * identical kernels are compiled and linked once.
 *
 * Disk cache: ${XDG_CACHE_HOME:-$HOME/.cache}/hetc/cpu/<key>.o, where the
 * key hashes the IR and everything else that shapes the object (the ISA
 * level and features, the tuning CPU, LLVM's version, the pipeline:
 * object_key_seed), so that compiling a model again, a tuning worker or
 * another test does not optimise and generate code a second time (about 4
 * of ResNet-18's 5 seconds of compiling for cpu). An entry that does not
 * link is compiled again and replaced. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <llvm-c/Analysis.h>
#include <llvm-c/Error.h>
#include <llvm-c/LLJIT.h>
#include <llvm-c/Orc.h>
#include <llvm-c/Target.h>
#include <llvm-c/TargetMachine.h>
#include <llvm-c/Transforms/PassBuilder.h>

#include <llvm/Config/llvm-config.h>

#include "cpu.h"
#include "plugin_files.h"

/* What shapes a kernel's object besides its IR; bump the version when the
 * passes or code generation options below change. */
#define OBJECT_CACHE_VERSION "1 default<O3> loop-vectorize slp-vectorize loop-unroll aggressive pic small"

static pthread_once_t init_once = PTHREAD_ONCE_INIT;
static int init_ok;

static void init_llvm(void) {
  init_ok = LLVMInitializeNativeTarget() == 0 && LLVMInitializeNativeAsmPrinter() == 0;
}

static hetc_plugin_status_t llvm_error(int32_t code, const char *what, LLVMErrorRef err) {
  char *msg = LLVMGetErrorMessage(err);
  hetc_plugin_status_t s = cpu_status(code, "cpu: %s: %s", what, msg ? msg : "?");
  LLVMDisposeErrorMessage(msg);
  return s;
}

static LLVMTargetMachineRef make_tm(const cpu_jit_t *jit) {
  char *triple = LLVMGetDefaultTargetTriple();
  LLVMTargetRef target = NULL;
  char *error = NULL;
  LLVMTargetMachineRef tm = NULL;
  if (LLVMGetTargetFromTriple(triple, &target, &error) == 0)
    tm = LLVMCreateTargetMachine(target, triple, jit->isa->level, jit->isa->features,
                                 LLVMCodeGenLevelAggressive, LLVMRelocPIC,
                                 LLVMCodeModelSmall);
  LLVMDisposeMessage(error);
  LLVMDisposeMessage(triple);
  return tm;
}

static char *dup_cat(const char *a, const char *b) {
  size_t n = strlen(a) + strlen(b) + 1;
  char *p = malloc(n);
  if (p) snprintf(p, n, "%s%s", a, b);
  return p;
}

hetc_plugin_status_t cpu_jit_init(cpu_jit_t *jit, const cpu_isa_t *isa) {
  memset(jit, 0, sizeof(*jit));
  jit->isa = isa;
  pthread_once(&init_once, init_llvm);
  if (!init_ok)
    return cpu_status(HETC_PLUGIN_STATUS_UNAVAILABLE, "cpu: LLVM has no native x86 target");
  char *host_cpu = LLVMGetHostCPUName();
  jit->tune_cpu = dup_cat(host_cpu ? host_cpu : "generic", "");
  LLVMDisposeMessage(host_cpu);
  if (!jit->tune_cpu) {
    cpu_jit_fini(jit);
    return cpu_status(HETC_PLUGIN_STATUS_OUT_OF_MEMORY, "cpu: out of memory");
  }
  LLVMTargetMachineRef tm = make_tm(jit);
  if (!tm) {
    hetc_plugin_status_t s = cpu_status(HETC_PLUGIN_STATUS_UNAVAILABLE,
                                        "cpu: cannot create an x86-64 target machine for %s",
                                        jit->isa->level);
    cpu_jit_fini(jit);
    return s;
  }
  LLVMOrcLLJITBuilderRef builder = LLVMOrcCreateLLJITBuilder();
  /* Takes ownership of tm. */
  LLVMOrcJITTargetMachineBuilderRef jtmb =
      LLVMOrcJITTargetMachineBuilderCreateFromTargetMachine(tm);
  LLVMOrcLLJITBuilderSetJITTargetMachineBuilder(builder, jtmb);
  LLVMOrcLLJITRef lljit = NULL;
  LLVMErrorRef err = LLVMOrcCreateLLJIT(&lljit, builder); /* consumes builder */
  if (err) {
    cpu_jit_fini(jit);
    return llvm_error(HETC_PLUGIN_STATUS_UNAVAILABLE, "cannot create the LLJIT", err);
  }
  /* Kernels call libm (expf, tanhf): resolve from the process. */
  LLVMOrcDefinitionGeneratorRef gen = NULL;
  err = LLVMOrcCreateDynamicLibrarySearchGeneratorForProcess(
      &gen, LLVMOrcLLJITGetGlobalPrefix(lljit), NULL, NULL);
  if (err) {
    LLVMOrcDisposeLLJIT(lljit);
    cpu_jit_fini(jit);
    return llvm_error(HETC_PLUGIN_STATUS_UNAVAILABLE, "cannot search the process", err);
  }
  LLVMOrcJITDylibAddGenerator(LLVMOrcLLJITGetMainJITDylib(lljit), gen);
  jit->lljit = lljit;
  jit->cache_dir = hpc_cache_dir("cpu"); /* none: objects are compiled in every process */
  uint64_t seed = HPC_FNV1A64_INIT;
  const char *const parts[] = {OBJECT_CACHE_VERSION, LLVM_VERSION_STRING, isa->level, isa->features, jit->tune_cpu};
  for (size_t i = 0; i < sizeof(parts) / sizeof(parts[0]); ++i) seed = hpc_fnv1a64(parts[i], strlen(parts[i]) + 1, seed);
  jit->object_key_seed = seed;
  pthread_mutex_init(&jit->lock, NULL);
  return NULL;
}

void cpu_jit_fini(cpu_jit_t *jit) {
  if (jit->lljit) {
    LLVMErrorRef err = LLVMOrcDisposeLLJIT(jit->lljit);
    if (err) LLVMConsumeError(err);
    pthread_mutex_destroy(&jit->lock);
  }
  for (cpu_kernel_t *k = jit->kernels, *next; k; k = next) {
    next = k->next;
    free(k->object);
    free(k);
  }
  free(jit->tune_cpu);
  free(jit->cache_dir);
  memset(jit, 0, sizeof(*jit));
}

/* Under jit->lock. */
static cpu_kernel_t *find_symbol(cpu_jit_t *jit, const char *symbol) {
  for (cpu_kernel_t *k = jit->kernels; k; k = k->next)
    if (strcmp(k->symbol, symbol) == 0) return k;
  return NULL;
}

/* Links `object` (copied) and looks its symbol up; under jit->lock. */
static hetc_plugin_status_t link_object(cpu_jit_t *jit, const char *symbol, const void *object,
                                        size_t size, uint64_t hash, cpu_kernel_t **out) {
  cpu_kernel_t *k = calloc(1, sizeof(*k));
  void *copy = malloc(size ? size : 1);
  if (!k || !copy) {
    free(k);
    free(copy);
    return cpu_status(HETC_PLUGIN_STATUS_OUT_OF_MEMORY, "cpu: out of memory");
  }
  memcpy(copy, object, size);
  snprintf(k->symbol, sizeof(k->symbol), "%s", symbol);
  k->ir_hash = hash;
  k->object = copy;
  k->object_size = size;
  LLVMMemoryBufferRef buf =
      LLVMCreateMemoryBufferWithMemoryRangeCopy(object, size, k->symbol);
  LLVMOrcLLJITRef lljit = jit->lljit;
  LLVMErrorRef err = LLVMOrcLLJITAddObjectFile(lljit, LLVMOrcLLJITGetMainJITDylib(lljit), buf);
  if (err) {
    free(copy);
    free(k);
    return llvm_error(HETC_PLUGIN_STATUS_BUILD_FAILED, "linking the kernel object", err);
  }
  LLVMOrcExecutorAddress addr = 0;
  err = LLVMOrcLLJITLookup(lljit, &addr, k->symbol);
  if (err || !addr) {
    free(copy);
    free(k);
    if (err) return llvm_error(HETC_PLUGIN_STATUS_BUILD_FAILED, "looking the kernel up", err);
    return cpu_status(HETC_PLUGIN_STATUS_BUILD_FAILED, "cpu: kernel %s not found", symbol);
  }
  void *p = (void *)(uintptr_t)addr;
  memcpy(&k->fn, &p, sizeof(k->fn));
  k->next = jit->kernels;
  jit->kernels = k;
  *out = k;
  return NULL;
}

/* The disk cache's file for the kernel of IR hash `ir_hash` ("" when the
 * instance has no cache directory). */
static void object_path(const cpu_jit_t *jit, uint64_t ir_hash, char *path, size_t size) {
  path[0] = 0;
  if (!jit->cache_dir) return;
  const uint64_t key = hpc_fnv1a64(&ir_hash, sizeof(ir_hash), jit->object_key_seed);
  snprintf(path, size, "%s/%016llx.o", jit->cache_dir, (unsigned long long)key);
}

/* Links the kernel from the disk cache: 1 when it is there and links. */
static int link_cached_object(cpu_jit_t *jit, const char *path, const char *symbol, uint64_t ir_hash,
                              cpu_kernel_t **out) {
  size_t size = 0;
  char *object = path[0] ? hpc_read_file(path, &size) : NULL;
  /* Only an ELF object goes to the linker; anything else is compiled again. */
  int linked = object && size > 64 && !memcmp(object, "\177ELF", 4);
  if (linked) {
    pthread_mutex_lock(&jit->lock);
    cpu_kernel_t *k = find_symbol(jit, symbol);
    hetc_plugin_status_t s = k ? NULL : link_object(jit, symbol, object, size, ir_hash, &k);
    pthread_mutex_unlock(&jit->lock);
    linked = !s;
    if (s) cpu_host->status_free(s);
    if (linked) *out = k;
  }
  free(object);
  return linked;
}

hetc_plugin_status_t cpu_jit_compile(cpu_jit_t *jit, LLVMContextRef ctx, LLVMModuleRef mod,
                                     cpu_kernel_t **out) {
  *out = NULL;
  hetc_plugin_status_t s = NULL;
  LLVMTargetMachineRef tm = make_tm(jit);
  if (!tm) {
    LLVMDisposeModule(mod);
    LLVMContextDispose(ctx);
    return cpu_status(HETC_PLUGIN_STATUS_BUILD_FAILED, "cpu: cannot create a target machine");
  }
  char *triple = LLVMGetTargetMachineTriple(tm);
  LLVMSetTarget(mod, triple);
  LLVMDisposeMessage(triple);
  LLVMTargetDataRef layout = LLVMCreateTargetDataLayout(tm);
  LLVMSetModuleDataLayout(mod, layout);
  LLVMDisposeTargetData(layout);
  char *verify = NULL;
  if (LLVMVerifyModule(mod, LLVMReturnStatusAction, &verify)) {
    char *ir = LLVMPrintModuleToString(mod);
    s = cpu_status(HETC_PLUGIN_STATUS_INTERNAL, "cpu: generated IR is invalid: %s\n%.20000s",
                   verify ? verify : "?", ir ? ir : "");
    LLVMDisposeMessage(ir);
  }
  LLVMDisposeMessage(verify);
  uint64_t hash = 0;
  char symbol[40];
  if (!s) {
    char *ir = LLVMPrintModuleToString(mod);
    hash = hpc_fnv1a64(ir, strlen(ir), HPC_FNV1A64_INIT);
    LLVMDisposeMessage(ir);
    snprintf(symbol, sizeof(symbol), "hetc_cpu_%016llx", (unsigned long long)hash);
    pthread_mutex_lock(&jit->lock);
    cpu_kernel_t *k = find_symbol(jit, symbol);
    pthread_mutex_unlock(&jit->lock);
    char cached[4200];
    object_path(jit, hash, cached, sizeof(cached));
    if (k) {
      *out = k;
    } else if (!link_cached_object(jit, cached, symbol, hash, out)) {
      LLVMValueRef fn = LLVMGetNamedFunction(mod, "hetc_cpu_kernel");
      if (fn) {
        LLVMSetValueName2(fn, symbol, strlen(symbol));
        LLVMAddTargetDependentFunctionAttr(fn, "tune-cpu", jit->tune_cpu);
      }
      LLVMPassBuilderOptionsRef opts = LLVMCreatePassBuilderOptions();
      LLVMPassBuilderOptionsSetLoopVectorization(opts, 1);
      LLVMPassBuilderOptionsSetSLPVectorization(opts, 1);
      LLVMPassBuilderOptionsSetLoopUnrolling(opts, 1);
      LLVMErrorRef err = LLVMRunPasses(mod, "default<O3>", tm, opts);
      LLVMDisposePassBuilderOptions(opts);
      if (err) s = llvm_error(HETC_PLUGIN_STATUS_BUILD_FAILED, "optimising", err);
      LLVMMemoryBufferRef obj = NULL;
      char *msg = NULL;
      if (!s && LLVMTargetMachineEmitToMemoryBuffer(tm, mod, LLVMObjectFile, &msg, &obj)) {
        s = cpu_status(HETC_PLUGIN_STATUS_BUILD_FAILED, "cpu: code generation failed: %s",
                       msg ? msg : "?");
        obj = NULL;
      }
      LLVMDisposeMessage(msg);
      /* A cache that cannot be written only costs compiling again. */
      if (!s && cached[0]) (void)hetc_kit_write_file_atomic(cached, LLVMGetBufferStart(obj), LLVMGetBufferSize(obj));
      if (!s) {
        pthread_mutex_lock(&jit->lock);
        k = find_symbol(jit, symbol); /* a concurrent build of the same IR */
        if (k) *out = k;
        else
          s = link_object(jit, symbol, LLVMGetBufferStart(obj), LLVMGetBufferSize(obj), hash,
                          out);
        pthread_mutex_unlock(&jit->lock);
      }
      if (obj) LLVMDisposeMemoryBuffer(obj);
    }
  }
  LLVMDisposeTargetMachine(tm);
  LLVMDisposeModule(mod);
  LLVMContextDispose(ctx);
  return s;
}

hetc_plugin_status_t cpu_jit_load_object(cpu_jit_t *jit, const char *symbol,
                                         const void *object, size_t size,
                                         cpu_kernel_t **out) {
  *out = NULL;
  if (strlen(symbol) >= sizeof(((cpu_kernel_t *)0)->symbol))
    return cpu_status(HETC_PLUGIN_STATUS_INVALID_ARGUMENT, "cpu: bad kernel symbol");
  pthread_mutex_lock(&jit->lock);
  hetc_plugin_status_t s = NULL;
  cpu_kernel_t *k = find_symbol(jit, symbol);
  if (k) *out = k;
  else s = link_object(jit, symbol, object, size, 0, out);
  pthread_mutex_unlock(&jit->lock);
  return s;
}
