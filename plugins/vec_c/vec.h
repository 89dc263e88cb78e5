/* plugins/vec_c/vec.h -- internals of the `vec` backend plugin.
 *
 * The plugin emits self-contained C for each workload (emit_*.c), compiles
 * it with the host C compiler into a shared object and loads it (compile.c).
 * Knob spaces and config validation live in space.c, weight packing in
 * pack.c, workload checks and layout arithmetic in workload.c, the CPU
 * descriptor in device.c and the ABI table in plugin.c.
 *
 * Nothing here is exported from the .so except hetc_plugin_query. */
#ifndef HETC_PLUGINS_VEC_C_VEC_H_
#define HETC_PLUGINS_VEC_C_VEC_H_

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

#include "hetc/plugin.h"
#include "plugin_strbuf.h"
#include "plugin_pack.h"
#include "plugin_workload.h"

#ifndef VEC_PLUGIN_NAME /* overridden by a test build */
#define VEC_PLUGIN_NAME "vec"
#endif
/* 0.2.0: kernels run on the host's thread pool (emit.c); 0.1.0's took an
 * OpenMP thread count. */
#define VEC_PLUGIN_VERSION "0.2.0"
/* The one function every emitted kernel exports (a vendor may rename it by
 * compiling with -DHETC_VEC_KERNEL=name). Named for its signature: the
 * objects of 0.1.0 packages export hetc_vec_kernel(float *const *, int), so
 * none of them is ever called with the new arguments. */
#define VEC_KERNEL_SYMBOL "hetc_vec_kernel_v2"
/* Activation inputs an op may have (concat takes up to 64). */
#define VEC_MAX_INPUTS 64
/* Outlined parallel bodies a kernel may have (concat: one per input). */
#define VEC_MAX_BODIES (VEC_MAX_INPUTS + 2)

/* The host table handed to hetc_plugin_query; services for every file. */
extern const hetc_plugin_host_t *vec_host;

/* A failure status with a printf-formatted message, made by the host. */
hetc_plugin_status_t vec_status(int32_t code, const char *format, ...)
    HETC_PLUGIN_PRINTF(2, 3);

/* ------------------------------------------------------------------------ */
/* Templates                                                                */
/* ------------------------------------------------------------------------ */

typedef enum vec_template_kind_t {
  VEC_T_CONV_NCHW = 0,
  VEC_T_CONV_NCHWC,
  VEC_T_DENSE,
  VEC_T_POOL,
  VEC_T_GLOBAL_POOL,
  VEC_T_ELEMENTWISE,
  VEC_T_SOFTMAX,
  VEC_T_CONCAT,
  VEC_T_LAYOUT,
  VEC_T_BIAS_ADD,
  VEC_T_TRANSPOSE,
  VEC_T_LOG_SOFTMAX, /* vec_emit_softmax's log form */
  VEC_T_RESIZE,
  VEC_T_NORMALIZE,
  VEC_T_MATMUL,
  VEC_T_COUNT_
} vec_template_kind_t;

/* Templates offered for a workload (0 when unsupported). */
int32_t vec_template_count(const hetc_plugin_workload_t *wl);
/* Kind of template `index` for the workload, or -1. */
int vec_template_kind(const hetc_plugin_workload_t *wl, int32_t index);
const char *vec_template_name(int kind);
uint32_t vec_template_version(int kind);

/* Workloads and layouts: the plugin kit (hetc/kit/workload.h, layout.h)
 * and plugins/common/plugin_workload.h. */

/* ------------------------------------------------------------------------ */
/* Knob spaces and configs (space.c)                                        */
/* ------------------------------------------------------------------------ */

/* A parsed config. Unused fields are 0. */
typedef struct vec_config_t {
  int64_t tile_ic;   /* NCHWc input channel block */
  int64_t tile_oc;   /* NCHWc output channel block */
  int64_t reorder;   /* index into the template's loop orders */
  int64_t parallel;  /* 0: outer fused axis; 1: also OH */
  int64_t unroll_kw; /* 1: the kw loop is unrolled in the source */
  int64_t tile_m;    /* matmul: output rows of a parallel item */
  int64_t tile_n;    /* matmul: output columns whose sums stay in registers */
} vec_config_t;

typedef enum vec_knob_kind_t {
  VEC_KNOB_OPTION = 0,   /* space_define_knob */
  VEC_KNOB_REORDER = 1,  /* space_define_reorder; value = permutation index */
  VEC_KNOB_ANNOTATE = 2, /* space_define_annotate */
} vec_knob_kind_t;

#define VEC_MAX_KNOBS 6
#define VEC_MAX_VALUES 8
#define VEC_MAX_AXES 5

typedef struct vec_knob_spec_t {
  const char *name;
  int32_t kind; /* vec_knob_kind_t */
  /* OPTION/ANNOTATE: the allowed values. REORDER: num_values
   * permutations of num_axes axes. */
  int32_t num_values;
  int64_t values[VEC_MAX_VALUES];
  int32_t num_axes;
  int32_t permutations[VEC_MAX_VALUES][VEC_MAX_AXES];
  int64_t default_value;
  size_t offset; /* of the field in vec_config_t */
} vec_knob_spec_t;

typedef struct vec_space_t {
  int32_t num_knobs;
  vec_knob_spec_t knobs[VEC_MAX_KNOBS];
  /* Constraint tile_ic == tile_oc (depthwise NCHWc). */
  int tiles_equal;
} vec_space_t;

/* The knob space of template `kind` for the workload. */
void vec_space_describe(const hetc_plugin_workload_t *wl, int kind,
                        vec_space_t *out);
/* Declares the space through the host and sets its default. */
hetc_plugin_status_t vec_space_define(const vec_space_t *space,
                                      hetc_plugin_space_t *host_space);
/* Validates a config against the space (every knob present once, values
 * allowed, no unknown knobs, constraints hold) and parses it. A NULL config
 * means the default. INVALID_ARGUMENT with the reason otherwise. */
hetc_plugin_status_t vec_config_parse(const vec_space_t *space,
                                      const hetc_plugin_config_t *config,
                                      vec_config_t *out);
/* "tile_ic=16 tile_oc=32 ..." or "(no knobs)". */
void vec_config_describe(const vec_space_t *space, const vec_config_t *config,
                         hpc_strbuf_t *sb);

/* ------------------------------------------------------------------------ */
/* Emission (emit.c, emit_conv.c, emit_ops.c, emit_matmul.c)                               */
/* ------------------------------------------------------------------------ */

typedef struct vec_emit_t {
  /* In. */
  const hetc_plugin_workload_t *wl;
  int kind;
  vec_config_t cfg;
  const char *config_text;
  /* Out: the source and the boundary of the kernel. */
  hpc_strbuf_t src;
  int32_t num_inputs;
  hetc_plugin_layout_t input_layouts[VEC_MAX_INPUTS + 1];
  hetc_plugin_layout_t output_layout;
  int32_t num_params;
  uint64_t param_bytes[2];
  /* Innermost-loop statistics: sum of trip counts and number of executed
   * innermost loop instances (static: computed from the shapes). */
  double inner_iterations;
  double inner_loops;
  /* The outlined parallel bodies, run by the entry in this order: body i
   * over [0, body_count[i]) in chunks of at least body_grain[i]. */
  int32_t num_bodies;
  int body_open;
  int64_t body_count[VEC_MAX_BODIES];
  int64_t body_grain[VEC_MAX_BODIES];
} vec_emit_t;

/* Emits the kernel for e->wl / e->kind / e->cfg and fills the boundary. */
hetc_plugin_status_t vec_emit(vec_emit_t *e);

/* Helpers shared by the emitters. */
void vec_emit_stat(vec_emit_t *e, double trip_count, double executions);
/* Header comment, includes, the kernel macro and act() when needed. */
void vec_emit_preamble(vec_emit_t *e, int32_t activation);
/* "static inline float act(float v)" body expression for an activation,
 * applied to `v`; NULL for NONE. */
const char *vec_act_expr(int32_t activation);
/* Emits "const float *restrict NAME = args[I];" lines. */
void vec_emit_arg(vec_emit_t *e, const char *name, int index, int is_output);
/* Opens the next outlined parallel body: a static function over the range
 * [t0, t1) of its parallel loop's iterations, with `args` bound from its
 * context. The emitter then declares the arguments and constants it uses
 * and writes the loop as "for (long t = t0; t < t1; ++t)". */
void vec_emit_body_open(vec_emit_t *e);
/* Closes the body. The entry runs it over [0, count) in chunks of at least
 * the grain that gives a chunk about VEC_CHUNK_WORK of `work` (inner-loop
 * element operations per iteration), so that a small loop runs on the
 * calling thread alone. */
void vec_emit_body_close(vec_emit_t *e, int64_t count, double work);
/* Element operations below which a parallel loop is not split. */
#define VEC_CHUNK_WORK 16384.0
/* The exported entry: every body in order through rt->parallel_for. */
void vec_emit_entry(vec_emit_t *e);

hetc_plugin_status_t vec_emit_conv_nchw(vec_emit_t *e);
/* The NCHWc loop orders (rows of 5 axes: icb, kh, kw, ic, ow) into
 * out_perms; returns their number. */
int32_t vec_conv_nchwc_orders(int32_t *out_perms, int32_t capacity_rows);
/* Output columns of the NCHWc accumulator tile for a channel block. */
int64_t vec_conv_ow_tile(int64_t OW, int64_t block);
hetc_plugin_status_t vec_emit_conv_nchwc(vec_emit_t *e);
hetc_plugin_status_t vec_emit_dense(vec_emit_t *e);
hetc_plugin_status_t vec_emit_pool(vec_emit_t *e);
hetc_plugin_status_t vec_emit_global_pool(vec_emit_t *e);
hetc_plugin_status_t vec_emit_elementwise(vec_emit_t *e);
hetc_plugin_status_t vec_emit_softmax(vec_emit_t *e);
hetc_plugin_status_t vec_emit_concat(vec_emit_t *e);
hetc_plugin_status_t vec_emit_layout(vec_emit_t *e);
hetc_plugin_status_t vec_emit_bias_add(vec_emit_t *e);
hetc_plugin_status_t vec_emit_transpose(vec_emit_t *e);
hetc_plugin_status_t vec_emit_resize(vec_emit_t *e);
hetc_plugin_status_t vec_emit_normalize(vec_emit_t *e);
hetc_plugin_status_t vec_emit_matmul(vec_emit_t *e);

/* ------------------------------------------------------------------------ */
/* Features (features.c)                                                    */
/* ------------------------------------------------------------------------ */

/* The plugin's part of a schema-1 feature row for a template and a parsed
 * config on a device of `simd_width` fp32 lanes: writes the plugin-owned
 * indices below `capacity` and returns the count to report, or -1 for a
 * template without features (ops other than conv2d and dense). Pure. */
int32_t vec_features_fill(const hetc_plugin_workload_t *wl, int kind, const vec_config_t *cfg,
                          int32_t simd_width, float *out, int32_t capacity);

/* ------------------------------------------------------------------------ */
/* Parameter packing (pack.c)                                               */
/* ------------------------------------------------------------------------ */

/* hetc_kit_param_elements: hetc/kit/workload.h. */
/* Packs a param into the template's layout; out has out_bytes bytes. Pure. */
hetc_plugin_status_t vec_pack_param(const hetc_plugin_workload_t *wl,
                                    int kind, const vec_config_t *cfg,
                                    hetc_plugin_layout_t output_layout,
                                    int32_t index, const float *logical,
                                    uint64_t count, void *out,
                                    uint64_t out_bytes);

/* ------------------------------------------------------------------------ */
/* Compiler, object cache, loading (compile.c)                              */
/* ------------------------------------------------------------------------ */

/* The parallel runtime a kernel is called with; emitted kernels declare the
 * same struct as hetc_vec_rt_t (emit.c). The plugin passes the host's
 * parallel_for and thread_count(), so vec's kernels run on hetc's one pool
 * of hot workers, as every CPU backend's do. */
typedef struct vec_rt_t {
  void (*parallel_for)(int64_t count, int64_t grain, hetc_plugin_parallel_body_fn_t body,
                       void *ctx);
  int32_t threads;
} vec_rt_t;

/* A compiled kernel (VEC_KERNEL_SYMBOL). */
typedef void (*vec_kernel_fn_t)(float *const *args, const vec_rt_t *rt);

/* A loaded shared object. Reference counted; owned by the toolchain. */
typedef struct vec_object_t {
  uint64_t key;   /* cache key; 0 for objects opened from a package */
  char *path;     /* the loaded file; NULL once unlinked (no disk cache) */
  void *handle;   /* dlopen handle */
  void *symbol;   /* the looked-up function */
  int32_t refs;
  struct vec_object_t *next;
} vec_object_t;

typedef struct vec_toolchain_t {
  char **argv;        /* compiler and flags, NULL-terminated; owned */
  int32_t argc;
  char *command_text; /* "cc -O3 -march=native -fopenmp-simd -shared -fPIC" */
  char *version;      /* compiler identity, e.g. "gcc-12.2.0" */
  char *cache_dir;    /* on-disk cache, or NULL when unusable */
  uint64_t key_seed;  /* hash of compiler, flags, version and CPU */
  pthread_mutex_t lock;
  vec_object_t *objects;
  uint64_t counter;   /* unique temp names; under lock */
} vec_toolchain_t;

/* Cheap check that the compiler named by HETC_VEC_CC is on PATH. */
hetc_plugin_status_t vec_toolchain_probe(void);
/* Reads HETC_VEC_CC / HETC_VEC_CFLAGS, asks the compiler its version,
 * creates the cache directory. cpu_key enters the cache key. Compiles run
 * in scratch directories removed right after, so nothing is left in $TMPDIR
 * even when an instance is never destroyed. */
hetc_plugin_status_t vec_toolchain_init(vec_toolchain_t *tc,
                                        const char *cpu_key);
/* Unloads every object. */
void vec_toolchain_fini(vec_toolchain_t *tc);
/* Returns a loaded object for `source`, from the in-process cache, the
 * disk cache, or by compiling it. Thread-safe. Failures carry fail_code
 * (BUILD_FAILED for kernels) and the compiler log. */
hetc_plugin_status_t vec_toolchain_get(vec_toolchain_t *tc, const char *source,
                                       size_t length, const char *symbol,
                                       int32_t fail_code,
                                       vec_object_t **out_object);
/* Loads the shared object at `path` (not cached by source). Returns 1 on
 * success, 0 when it cannot be loaded (no status: the caller recompiles). */
int vec_toolchain_try_open(vec_toolchain_t *tc, const char *path,
                           const char *symbol, vec_object_t **out_object);
/* Compiles `source` into so_path (written atomically). */
hetc_plugin_status_t vec_toolchain_compile_to(vec_toolchain_t *tc,
                                              const char *source,
                                              size_t length,
                                              const char *so_path,
                                              int32_t fail_code);
void vec_toolchain_release(vec_toolchain_t *tc, vec_object_t *object);

/* ------------------------------------------------------------------------ */
/* The CPU device (device.c)                                                */
/* ------------------------------------------------------------------------ */

typedef struct vec_device_t {
  hetc_plugin_device_t desc;
  char *name;
  char *fingerprint;
  char *cpu_model;
} vec_device_t;

/* Fills the descriptor; measures peak GFLOPS with a compiled FMA loop on
 * the host's thread pool. */
hetc_plugin_status_t vec_device_init(vec_device_t *dev, vec_toolchain_t *tc);
void vec_device_fini(vec_device_t *dev);

#endif /* HETC_PLUGINS_VEC_C_VEC_H_ */
