/* plugins/llvm_cpu/cpu.h -- internals of the `cpu` backend plugin.
 *
 * The plugin builds each kernel's LLVM IR through the LLVM 15 C API
 * (gen.c: ops; gen_pool.c, gen_layout.c: the vector forms of pooling and
 * layout copies; gen_resize.c: resize; gen_normalize.c: normalize; gen_conv.c: direct conv2d;
 * gen_gemm.c: the packed GEMM micro-kernel and dense; gen_matmul.c: matmul on that micro-kernel; gen_im2col.c, gen_winograd.c with winograd.c's
 * transforms: the GEMM-based conv2d templates), optimises it with the new
 * pass manager, compiles it to an object file for an explicit x86-64
 * target machine of the instance's ISA (AVX-512 or AVX2+FMA, isa.c) and
 * links it into one ORC LLJIT per instance (jit.c). Knob spaces live in space.c, weight packing in pack.c, the CPU
 * descriptor in device.c and the ABI table in plugin.c; workload checks
 * and layouts are the plugin kit's. Only hetc_plugin_query is exported. */
#ifndef HETC_PLUGINS_LLVM_CPU_CPU_H_
#define HETC_PLUGINS_LLVM_CPU_CPU_H_

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

#include <llvm-c/Core.h>

#include "hetc/plugin.h"
#include "plugin_strbuf.h"
#include "plugin_pack.h"
#include "plugin_workload.h"

#define CPU_PLUGIN_NAME "cpu"
/* Part of every artifact's key: bumped when generated code changes, so a
 * package's kernels built by an older plugin are refused, not misread. */
#define CPU_PLUGIN_VERSION "0.3.0"
#define CPU_MAX_INPUTS 64

extern const hetc_plugin_host_t *cpu_host;

/* ------------------------------------------------------------------------ */
/* The vector ISA (isa.c)                                                   */
/* ------------------------------------------------------------------------ */

/* What the kernels of one instance are generated for, chosen once when
 * the instance is created: the widest the processor and the OS allow, or
 * the one HETC_CPU_ISA names. Static descriptors, never freed. */
typedef struct cpu_isa_t {
  const char *name;     /* "avx512" or "avx2": HETC_CPU_ISA's words */
  const char *title;    /* for messages: "AVX-512 (x86-64-v4)" */
  int lanes;            /* fp32 lanes of the widest vector: 16 or 8 */
  int registers;        /* vector registers: 32 or 16 */
  const char *level;    /* LLVM CPU of the ISA level: "x86-64-v4", "x86-64-v3" */
  const char *features; /* LLVM target features, every one named */
} cpu_isa_t;

/* The ISA an instance uses: HETC_CPU_ISA (avx2, avx512) when set, else the
 * widest the machine runs; *forced says which (messages name the variable).
 * NULL with *out set, or UNAVAILABLE when the machine lacks AVX2 + FMA or
 * the forced ISA, or INVALID_ARGUMENT for an unknown HETC_CPU_ISA. */
hetc_plugin_status_t cpu_isa_select(const cpu_isa_t **out, int *forced);
/* The descriptor named `name`, or NULL. */
const cpu_isa_t *cpu_isa_named(const char *name);
/* Whether code for `code` runs where `host` was chosen (AVX2 code runs on
 * an AVX-512 instance, not the other way round). */
int cpu_isa_runs_on(const cpu_isa_t *code, const cpu_isa_t *host);
/* Lanes of the vectors a kernel uses over channel blocks of `block`: the
 * ISA's width where the block is a multiple of it, else 8 (AVX-512's 8-lane
 * forms still have 32 registers). */
int cpu_isa_block_lanes(const cpu_isa_t *isa, int64_t block);

hetc_plugin_status_t cpu_status(int32_t code, const char *format, ...)
    HETC_PLUGIN_PRINTF(2, 3);

/* ------------------------------------------------------------------------ */
/* Templates                                                                */
/* ------------------------------------------------------------------------ */

typedef enum cpu_template_kind_t {
  CPU_T_CONV_NCHWC = 0, /* register-blocked NCHW[x]c direct conv */
  CPU_T_CONV_DEPTHWISE, /* depthwise NCHW[x]c */
  CPU_T_CONV_NCHW,      /* plain direct conv, any groups */
  CPU_T_CONV_IM2COL,    /* im2col panels on the packed GEMM micro-kernel */
  CPU_T_CONV_WINOGRAD,  /* Winograd F(m x m, 3 x 3), stride 1 */
  CPU_T_DENSE,
  CPU_T_POOL,
  CPU_T_GLOBAL_POOL,
  CPU_T_ELEMENTWISE,
  CPU_T_SOFTMAX,
  CPU_T_CONCAT,
  CPU_T_LAYOUT,
  CPU_T_BIAS_ADD,
  CPU_T_TRANSPOSE,
  CPU_T_LOG_SOFTMAX, /* gen_softmax's log form */
  CPU_T_CONV_GROUPED, /* NCHW[x]c direct conv over output blocks of whole groups */
  CPU_T_RESIZE,       /* gen_resize.c */
  CPU_T_NORMALIZE,    /* gen_normalize.c */
  CPU_T_MATMUL,       /* gen_matmul.c */
  CPU_T_COUNT_
} cpu_template_kind_t;

/* A resize's taps are arrays of the module, one entry an output row or
 * column: wider outputs are refused (UNSUPPORTED) rather than built into
 * modules of megabytes. */
#define CPU_RESIZE_MAX_EXTENT 65536

/* normalize (gen_normalize.c): the layout its kernel reads and writes
 * (the producer's NCHW[b]c, b a multiple of 8, where a blocked form
 * applies, else row-major), and the floats of its scale and of its bias
 * (NCHW[b]c: whole blocks, zeros past the channels). */
hetc_plugin_layout_t cpu_normalize_layout(const hetc_plugin_workload_t *wl);
uint64_t cpu_normalize_param_count(const hetc_plugin_workload_t *wl);

/* matmul (gen_matmul.c): the product of the batch dims, and M, K, N. */
void cpu_matmul_dims(const hetc_plugin_workload_t *wl, int64_t *batches, int64_t *m, int64_t *k, int64_t *n);

/* hpc_workload_check, then the limits of this plugin's own kernels. */
int32_t cpu_workload_check(const hetc_plugin_workload_t *wl, char *reason, size_t reason_size);
int32_t cpu_template_count(const hetc_plugin_workload_t *wl);
int cpu_template_kind(const hetc_plugin_workload_t *wl, int32_t index);
const char *cpu_template_name(int kind);
uint32_t cpu_template_version(int kind);

/* Workloads and layouts: the plugin kit (hetc/kit/workload.h, layout.h)
 * and plugins/common/plugin_workload.h. */

/* Grouped convolution (1 < groups < channels) on NCHW[x]c: an output
 * block of tile_oc channels holds whole groups (tile_oc a multiple of the
 * group's output channels; the weights of other groups' inputs are packed
 * as zeros) or lies inside one group, and reduces over the input channels
 * of its groups only, `cpu_grouped_span` of them. Whether tile_oc gives
 * such blocks (K a multiple of it too), and the span. */
int cpu_grouped_block_ok(const hetc_plugin_workload_t *wl, int64_t tile_oc);
int64_t cpu_grouped_span(const hetc_plugin_workload_t *wl, int64_t tile_oc);

/* Whether cpu_conv2d_nchwc merges the output rows into one (1x1, stride 1,
 * no padding, enough planes to parallelise over): gen_conv.c. */
int cpu_conv_nchwc_flat(const hetc_plugin_workload_t *wl, int64_t tile_oc);

/* ------------------------------------------------------------------------ */
/* Knob spaces (space.c)                                                    */
/* ------------------------------------------------------------------------ */

typedef struct cpu_config_t {
  int64_t tile_ic;   /* ic_bn */
  int64_t tile_oc;   /* oc_bn; dense, matmul: columns of N a block */
  int64_t reg_n;     /* register block: ow columns, im2col pixels, Winograd tiles; dense, matmul: rows */
  int64_t unroll_kw; /* 1: kw unrolled in the IR */
  int64_t parallel;  /* nchwc 0: n*ocb, 1: n*ocb*oh, 2: n*oh*ocb; im2col, Winograd: 1 also splits ocb */
  int64_t tile_k;    /* im2col: reduction elements per packed chunk (whole rows) */
  int64_t tiles;     /* im2col: register blocks per packed panel */
  int64_t tile_m;    /* Winograd: output tile m of F(m x m, 3 x 3) */
} cpu_config_t;

#define CPU_MAX_KNOBS 8
#define CPU_MAX_VALUES 24

typedef struct cpu_knob_spec_t {
  const char *name;
  int32_t annotate; /* 1: space_define_annotate, else define_knob */
  int32_t num_values;
  int64_t values[CPU_MAX_VALUES];
  int64_t default_value;
  size_t offset; /* of the field in cpu_config_t */
} cpu_knob_spec_t;

typedef struct cpu_space_t {
  int32_t num_knobs;
  cpu_knob_spec_t knobs[CPU_MAX_KNOBS];
  const cpu_isa_t *isa; /* the register budget of reg_constraint */
  int reg_constraint;   /* cpu_reg_block_fits(isa, reg_n, tile_oc) */
  int panel_constraint; /* im2col: the packed panel fits CPU_STACK_BUFFER_BYTES */
} cpu_space_t;

/* The largest scratch buffer a kernel keeps on its thread's stack (the
 * host's pool threads have glibc's default 8 MiB stacks). */
#define CPU_STACK_BUFFER_BYTES (512 * 1024)
/* Bytes of the im2col kernel's packed panel (at most; whole rows). */
int64_t cpu_im2col_panel_bytes(int64_t tiles, int64_t reg_n, int64_t tile_k);
/* Output tiles of Winograd F(m x m, 3 x 3) over the workload's plane; the
 * kernel's tiles padded to a multiple of reg_n, tiles per main iteration
 * and workspace (the transformed input), gen_winograd.c. */
int64_t cpu_winograd_tiles(const hetc_plugin_workload_t *wl, int64_t tile_m);
struct cpu_config_t;
int64_t cpu_winograd_padded_tiles(const hetc_plugin_workload_t *wl, const struct cpu_config_t *cfg);
int64_t cpu_winograd_chunk_tiles(const hetc_plugin_workload_t *wl, const struct cpu_config_t *cfg);
uint64_t cpu_winograd_workspace_bytes(const hetc_plugin_workload_t *wl, const struct cpu_config_t *cfg);
/* (icb, kh, kw) rows per im2col reduction chunk: tile_k elements in whole
 * rows of tile_ic, at least one, at most all. */
int64_t cpu_im2col_chunk_rows(const hetc_plugin_workload_t *wl, const cpu_config_t *cfg);
/* Whether the cpu Winograd template applies: 3x3, stride 1, dilation 1,
 * groups 1. */
int cpu_winograd_applicable(const hetc_plugin_workload_t *wl);

/* Register budget of the NCHWc conv and GEMM micro-kernels: reg_n x V
 * accumulators, V weight vectors and a broadcast input in the ISA's
 * registers, V = tile_oc / cpu_isa_block_lanes(tile_oc). */
int cpu_reg_block_fits(const cpu_isa_t *isa, int64_t reg_n, int64_t tile_oc);
void cpu_space_describe(const cpu_isa_t *isa, const hetc_plugin_workload_t *wl, int kind,
                        cpu_space_t *out);
hetc_plugin_status_t cpu_space_define(const cpu_space_t *space,
                                      hetc_plugin_space_t *host_space);
hetc_plugin_status_t cpu_config_parse(const cpu_space_t *space,
                                      const hetc_plugin_config_t *config,
                                      cpu_config_t *out);
void cpu_config_describe(const cpu_space_t *space, const cpu_config_t *config,
                         hpc_strbuf_t *sb);

/* The plugin's part of a schema-1 feature row for a template and a parsed
 * config (features.c; depthwise: tile_ic == tile_oc as build() sets it):
 * writes the plugin-owned indices below `capacity` and returns the count
 * to report, or -1 for a template without features (ops other than
 * conv2d and dense, which have no knobs). Pure. */
int32_t cpu_features_fill(const cpu_isa_t *isa, const hetc_plugin_workload_t *wl, int kind,
                          const cpu_config_t *cfg, float *out, int32_t capacity);

/* ------------------------------------------------------------------------ */
/* Code generation (gen.c, gen_conv.c)                                      */
/* ------------------------------------------------------------------------ */

/* Every kernel is `void k(float **args, i64 begin, i64 end, i64 phase)`:
 * it computes iterations [begin, end) of its outer (fused, parallel) axis;
 * run() spreads [0, outer) over the host's parallel_for with phase 1. A
 * kernel with a prologue (prologue_outer > 0) is first run over [0,
 * prologue_outer) with phase 0, and every prologue iteration is done
 * before the main phase starts (Winograd's input transform into the
 * workspace, read by every output-channel block). */
typedef void (*cpu_kernel_fn_t)(float *const *args, int64_t begin, int64_t end, int64_t phase);
#define CPU_PHASE_PROLOGUE 0
#define CPU_PHASE_MAIN 1

typedef struct cpu_gen_t {
  /* In. */
  const cpu_isa_t *isa;
  const hetc_plugin_workload_t *wl;
  int kind;
  cpu_config_t cfg;
  /* Out: boundary (filled by cpu_gen_boundary, no IR). */
  int32_t num_inputs;
  hetc_plugin_layout_t input_layouts[CPU_MAX_INPUTS + 1];
  hetc_plugin_layout_t output_layout;
  int32_t num_params;
  uint64_t param_bytes[2];
  int64_t outer;       /* extent of the parallel axis */
  int64_t grain;       /* parallel_for grain */
  int64_t prologue_outer, prologue_grain; /* 0: no prologue phase */
  uint64_t workspace_bytes; /* scratch the runtime passes after the output */
  double avg_inner;    /* avg innermost trip count (vector-length indicator) */
  /* Out: IR (cpu_gen_module). */
  LLVMContextRef ctx;
  LLVMModuleRef mod;
} cpu_gen_t;

/* Fills the boundary fields (layouts, params, outer extent). Cheap. */
hetc_plugin_status_t cpu_gen_boundary(cpu_gen_t *g);
/* Builds the module (function named "hetc_cpu_kernel") in a new context
 * owned by g (ctx/mod); the caller hands both to the JIT or disposes. */
hetc_plugin_status_t cpu_gen_module(cpu_gen_t *g);

/* ------------------------------------------------------------------------ */
/* Parameter packing (pack.c)                                               */
/* ------------------------------------------------------------------------ */

/* hetc_kit_param_elements: hetc/kit/workload.h. */
/* Packed element count of a param for the template (its byte size / 4). */
uint64_t cpu_param_packed_count(const hetc_plugin_workload_t *wl, int kind,
                                const cpu_config_t *cfg, int32_t index);
hetc_plugin_status_t cpu_pack_param(const hetc_plugin_workload_t *wl,
                                    int kind, const cpu_config_t *cfg,
                                    int32_t index, const float *logical,
                                    uint64_t count, void *out,
                                    uint64_t out_bytes);

/* Winograd F(m x m, 3 x 3) transforms (winograd.c): Y = AT [(G g GT) .*
 * (BT d B)] A, row-major matrices (Lavin and Gray, 2016). */
typedef struct cpu_winograd_t {
  int m, alpha; /* alpha = m + 2 */
  const double *bt; /* alpha x alpha */
  const double *g;  /* alpha x 3 */
  const double *at; /* m x alpha */
} cpu_winograd_t;
/* m 2 or 4; NULL otherwise. */
const cpu_winograd_t *cpu_winograd(int64_t m);

/* ------------------------------------------------------------------------ */
/* JIT (jit.c)                                                              */
/* ------------------------------------------------------------------------ */

/* A linked kernel: its object code (kept for packages) and entry point.
 * Owned by the JIT's cache for the life of the instance. */
typedef struct cpu_kernel_t {
  uint64_t ir_hash;
  char symbol[40];
  void *object;
  size_t object_size;
  cpu_kernel_fn_t fn;
  struct cpu_kernel_t *next;
} cpu_kernel_t;

typedef struct cpu_jit_t {
  const cpu_isa_t *isa;
  void *lljit; /* LLVMOrcLLJITRef */
  pthread_mutex_t lock;
  cpu_kernel_t *kernels;
  char *tune_cpu; /* the host's CPU: scheduling only, never the ISA */
  char *cache_dir; /* the objects' disk cache, or NULL for none */
  uint64_t object_key_seed; /* the disk cache key's part besides the IR */
} cpu_jit_t;

hetc_plugin_status_t cpu_jit_init(cpu_jit_t *jit, const cpu_isa_t *isa);
void cpu_jit_fini(cpu_jit_t *jit);
/* Optimises (default<O3>), compiles and links the module; takes ownership
 * of ctx and mod. Identical IR (by FNV-1a of the printed module) is
 * compiled once per instance, and once per machine where the disk cache
 * can be written. Thread-safe. */
hetc_plugin_status_t cpu_jit_compile(cpu_jit_t *jit, LLVMContextRef ctx,
                                     LLVMModuleRef mod, cpu_kernel_t **out);
/* Links an object file made by cpu_jit_compile (from a package) defining
 * `symbol`; reuses a kernel of that symbol already linked. Thread-safe. */
hetc_plugin_status_t cpu_jit_load_object(cpu_jit_t *jit, const char *symbol,
                                         const void *object, size_t size,
                                         cpu_kernel_t **out);

/* ------------------------------------------------------------------------ */
/* The device (device.c)                                                    */
/* ------------------------------------------------------------------------ */

typedef struct cpu_device_t {
  hetc_plugin_device_t desc;
  char *name;
  char *fingerprint;
  char *cpu_model;
} cpu_device_t;

/* NULL when the processor and OS support AVX2 + FMA, else UNAVAILABLE
 * (isa.c). */
hetc_plugin_status_t cpu_isa_probe(void);
/* The device as the instance's ISA sees it: its width, its peak (measured
 * with that ISA's FMAs) and its name in the fingerprint. */
hetc_plugin_status_t cpu_device_init(cpu_device_t *dev, const cpu_isa_t *isa);
void cpu_device_fini(cpu_device_t *dev);

#endif /* HETC_PLUGINS_LLVM_CPU_CPU_H_ */
