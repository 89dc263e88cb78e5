/* plugins/cuda/cu.h -- internals of the `cuda` backend plugin.
 *
 * The plugin generates kernels as text against a thin portability layer
 * (plugins/common/plugin_gpu_dialect.c: thread and block indices, shared memory, barriers, the
 * tensor-core step) and hands the text to a runtime. The product's runtime
 * (rt_driver.c) compiles it as CUDA C with NVRTC and runs it through the
 * Driver API, both opened with dlopen (cuda_loader.c). The same sources
 * built with tests/plugins/cuda/rt_opencl.c instead run the identical
 * kernel text as OpenCL C on PoCL, which is how CI checks the kernels'
 * arithmetic on a machine without a GPU.
 *
 * Knob spaces and the check of configs against the device's limits live in
 * space.c, the emitters in emit*.c, weight packing in pack.c, the cost
 * model's features in features.c and the ABI table in plugin.c.
 *
 * Nothing here is exported from the .so except hetc_plugin_query. */
#ifndef HETC_PLUGINS_CUDA_CU_H_
#define HETC_PLUGINS_CUDA_CU_H_

#include <stddef.h>
#include <stdint.h>

#include "hetc/plugin.h"
#include "plugin_gpu_dialect.h"
#include "plugin_gpu_ops.h"
#include "plugin_pack.h"
#include "plugin_strbuf.h"
#include "plugin_workload.h"

#define CU_PLUGIN_VERSION "0.1.0"
/* Activation inputs an op may have (concat takes up to 64). */
#define CU_MAX_INPUTS 64
/* Kernel launches one artifact may make (concat: one per input). */
#define CU_MAX_LAUNCHES 66
/* Buffers one launch may take. */
#define CU_MAX_LAUNCH_ARGS 6
/* run()'s argument index that stands for the workspace buffer. */
#define CU_ARG_WORKSPACE (-1)

/* The host table handed to hetc_plugin_query; services for every file. */
extern const hetc_plugin_host_t *cu_host;
/* The target name this build answers to: "cuda", or the test build's. */
extern const char *const cu_plugin_name;

/* A failure status with a printf-formatted message, made by the host. */
hetc_plugin_status_t cu_status(int32_t code, const char *format, ...) HETC_PLUGIN_PRINTF(2, 3);

/* ------------------------------------------------------------------------ */
/* Devices                                                                  */
/* ------------------------------------------------------------------------ */

/* What the templates are checked against: the Driver API's attributes (or,
 * in the OpenCL build, a GPU's limits capped by the OpenCL device's). */
typedef struct cu_limits_t {
  int32_t cc_major, cc_minor;         /* compute capability */
  int32_t sm_count;                   /* multiprocessors */
  int32_t max_threads_per_block;
  int32_t max_block_dims[3];
  int64_t max_grid_dims[3];
  int32_t shared_bytes_per_block;     /* static shared memory a block may declare */
  int32_t shared_bytes_per_sm;
  int32_t registers_per_block;
  int32_t registers_per_sm;
  int32_t warp_size;
  int32_t clock_khz;
  int64_t l2_bytes;
  int64_t memory_bytes;
  int32_t memory_clock_khz;     /* 0 when unknown */
  int32_t memory_bus_bits;
} cu_limits_t;

struct cu_rt_device_t; /* the runtime's own state */

typedef struct cu_device_t {
  hetc_plugin_device_t desc;
  cu_limits_t limits;
  char *name;
  char *fingerprint;
  char *arch; /* "sm_90", what NVRTC compiles for */
  /* desc.name: the name with the architecture and the tensor cores' rate,
   * which the ABI's descriptor has no field for. */
  char label[256];
  struct cu_rt_device_t *rt;
} cu_device_t;

/* Peak rates from the limits (device.c): fp32 FMA lanes per SM by compute
 * capability times SMs times clock, and the TF32 tensor-core rate. */
double cu_peak_fp32_gflops(const cu_limits_t *limits);
double cu_peak_tf32_gflops(const cu_limits_t *limits);
/* Fills desc (label, fingerprint, peaks, memory) from the other fields. */
void cu_device_describe(cu_device_t *dev);

/* ------------------------------------------------------------------------ */
/* Runtime: implemented once for the Driver API (rt_driver.c) and once for  */
/* OpenCL (tests/plugins/cuda/rt_opencl.c).                                 */
/* ------------------------------------------------------------------------ */

typedef struct cu_module_t cu_module_t;     /* compiled code of one source */
typedef struct cu_function_t cu_function_t; /* owned by its module */
typedef struct cu_mem_t cu_mem_t;           /* device memory */

/* What the compiled function asks of the device, for the limit check. */
typedef struct cu_function_attrs_t {
  int32_t registers;     /* per thread */
  int32_t max_threads;   /* the most threads a block of it may have */
  int32_t shared_bytes;  /* static shared memory */
  int32_t local_bytes;   /* per-thread local memory (spills) */
} cu_function_attrs_t;

/* Cheap: NULL when the runtime can run, else UNAVAILABLE with the reason. */
hetc_plugin_status_t cu_rt_probe(void);
/* Every device, described; *out is malloc()ed, free with cu_rt_devices_close. */
hetc_plugin_status_t cu_rt_devices_open(cu_device_t **out, int32_t *out_count);
void cu_rt_devices_close(cu_device_t *devices, int32_t count);
/* The portability layer's definitions this runtime's compiler needs. */
const char *cu_rt_prelude(void);
/* Compiles (or takes from the caches) `source`; `image` (may be NULL) is a
 * packaged binary tried first. A compile error is BUILD_FAILED with the
 * compiler's log. The module is reference counted (cu_rt_module_release). */
hetc_plugin_status_t cu_rt_module_get(cu_device_t *dev, const char *source, size_t length, const void *image,
                                      size_t image_length, cu_module_t **out);
void cu_rt_module_release(cu_device_t *dev, cu_module_t *module);
hetc_plugin_status_t cu_rt_function(cu_module_t *module, const char *name, cu_function_t **out,
                                    cu_function_attrs_t *attrs);
/* The module's loadable images for a package, malloc()ed (NULL, 0 when
 * there is none): the PTX, and the device binary. */
void cu_rt_module_images(const cu_module_t *module, void **ptx, size_t *ptx_length, void **binary,
                         size_t *binary_length);
hetc_plugin_status_t cu_rt_alloc(cu_device_t *dev, uint64_t bytes, cu_mem_t **out);
void cu_rt_free(cu_device_t *dev, cu_mem_t *mem);
hetc_plugin_status_t cu_rt_write(cu_device_t *dev, cu_mem_t *mem, uint64_t offset, const void *src, uint64_t bytes);
hetc_plugin_status_t cu_rt_read(cu_device_t *dev, const cu_mem_t *mem, uint64_t offset, void *dst, uint64_t bytes);
hetc_plugin_status_t cu_rt_copy(cu_device_t *dev, cu_mem_t *dst, uint64_t dst_offset, const cu_mem_t *src,
                                uint64_t src_offset, uint64_t bytes);
/* Enqueues a launch on the device's stream. */
hetc_plugin_status_t cu_rt_launch(cu_device_t *dev, cu_function_t *fn, const uint32_t grid[3],
                                  const uint32_t block[3], cu_mem_t *const *args, int32_t num_args);
/* Marks the stream; cu_rt_elapsed waits and gives the seconds between two
 * marks. Marks are per device and reused: begin is 0, end is 1. */
hetc_plugin_status_t cu_rt_mark(cu_device_t *dev, int32_t which);
hetc_plugin_status_t cu_rt_elapsed(cu_device_t *dev, double *seconds);
/* Waits for the stream; a kernel's asynchronous failure surfaces here. */
hetc_plugin_status_t cu_rt_sync(cu_device_t *dev);

/* NVRTC (nvrtc.c), used by rt_driver.c and by the CI's compile check:
 * compiles dialect-prelude + `source` as CUDA C for `arch` ("compute_80"
 * gives PTX, "sm_80" a cubin). *out_code is malloc()ed (NUL-terminated for
 * PTX); a compile error is BUILD_FAILED with NVRTC's log, a missing NVRTC
 * UNAVAILABLE with what was tried. */
hetc_plugin_status_t cu_nvrtc_compile(const char *source, size_t length, const char *arch, void **out_code,
                                      size_t *out_length);
/* The options every compile passes (part of the module caches' keys). */
extern const char cu_nvrtc_options[];

/* ------------------------------------------------------------------------ */
/* Templates                                                                */
/* ------------------------------------------------------------------------ */

typedef enum cu_template_kind_t {
  CU_T_CONV_NCHW = 0,   /* AutoTVM's conv2d_nchw.cuda direct schedule */
  CU_T_CONV_NHWC,       /* AutoTVM's conv2d_nhwc.cuda direct schedule */
  CU_T_CONV_WINOGRAD,   /* F(2x2, 3x3): transforms + batched GEMM */
  CU_T_CONV_IGEMM_TC,   /* implicit GEMM on tensor cores, TF32, sm_80+ */
  CU_T_CONV_DEPTHWISE,
  CU_T_DENSE,           /* tiled GEMM */
  CU_T_POOL,
  CU_T_GLOBAL_POOL,
  CU_T_ELEMENTWISE,
  CU_T_SOFTMAX,
  CU_T_CONCAT,
  CU_T_LAYOUT,
  CU_T_BIAS_ADD,
  CU_T_TRANSPOSE,
  CU_T_LOG_SOFTMAX, /* cu_emit_softmax's log form */
  CU_T_RESIZE,
  CU_T_NORMALIZE,
  CU_T_MATMUL, /* the shared tiled kernel (hpc_gpu_emit_matmul), knobs block_* and thread_* */
  CU_T_COUNT_
} cu_template_kind_t;

/* Templates offered for a workload on a device (0 when unsupported). */
int32_t cu_template_count(const hetc_plugin_workload_t *wl, const cu_limits_t *limits);
/* Kind of template `index`, or -1. */
int cu_template_kind(const hetc_plugin_workload_t *wl, const cu_limits_t *limits, int32_t index);
const char *cu_template_name(int kind);
uint32_t cu_template_version(int kind);

/* ------------------------------------------------------------------------ */
/* Knob spaces and configs (space.c)                                        */
/* ------------------------------------------------------------------------ */

/* Every knob of every template; a template reads its own, the others are
 * 0. Splits hold their parts outermost first. */
typedef struct cu_config_t {
  /* conv2d_nchw: output channels, rows and columns split (block, virtual
   * thread, thread, inner); reduction over input channels, kernel rows and
   * columns split (outer, inner), the inner part staged in shared memory. */
  int64_t tile_f[4], tile_y[4], tile_x[4];
  int64_t tile_rc[2], tile_ry[2], tile_rx[2];
  int64_t auto_unroll_max_step; /* inner reduction loops of at most this many steps unroll */
  int64_t unroll_explicit;      /* 1: the emitter writes them out; 0: #pragma unroll */
  /* conv2d_nhwc (and, as optional knobs, conv2d_nchw): output pixels (n)
   * and channels (c): per-thread tile, threads and virtual threads. In the
   * NCHW template a non-zero value replaces the split's part: n the
   * columns' thread/vthread parts, c the channels'. */
  int64_t tile_n, tile_c, num_thread_n, num_thread_c, vthread_n, vthread_c;
  int64_t step; /* input channels staged in shared memory per step */
  /* GEMM-shaped templates (Winograd's batched GEMM, dense, depthwise,
   * tensor cores): a block computes block_m x block_n outputs; threads
   * compute thread_m x thread_n each (tensor cores: warps of warp_m x
   * warp_n mma tiles); block_k is the reduction staged per step. */
  int64_t block_m, block_n, block_k, thread_m, thread_n;
} cu_config_t;

#define CU_MAX_KNOBS 16
#define CU_MAX_VALUES 8

typedef struct cu_knob_spec_t {
  const char *name;
  int32_t parts;    /* > 0: a split of `extent` into this many parts */
  int64_t extent;   /* splits */
  int32_t num_values; /* other knobs: the candidates */
  int64_t values[CU_MAX_VALUES];
  int64_t default_values[4]; /* a split's default parts, or the default value */
  /* What build() accepts (overrides may add candidates the template did not
   * list): every value, or every part of a split, within [lo, hi]. */
  int64_t lo, hi;
  int32_t optional;          /* pinned to its default unless an override enables it */
  /* 1: left out of the space's constraint, which then assumes the knob's
   * least demanding value (a split's inner parts 1, else the default). The
   * host enumerates every combination of the knobs a constraint spans, so
   * AutoTVM's NCHW space (tens of millions of points) cannot be constrained
   * as a whole; what the constraint cannot see, build() refuses, before
   * anything is compiled. */
  int32_t unconstrained;
  size_t offset;             /* of the field in cu_config_t */
} cu_knob_spec_t;

typedef struct cu_space_t {
  int kind;
  int32_t num_knobs;
  cu_knob_spec_t knobs[CU_MAX_KNOBS];
} cu_space_t;

void cu_space_describe(const hetc_plugin_workload_t *wl, int kind, cu_space_t *out);
/* Declares the space through the host with a constraint that keeps configs
 * buildable and inside `limits` (which must outlive the instance), and sets
 * its default. */
hetc_plugin_status_t cu_space_define(const cu_space_t *space, const hetc_plugin_workload_t *wl,
                                     const cu_limits_t *limits, hetc_plugin_space_t *host_space);
/* Validates a config against the space's knobs and parses it; NULL config
 * means the default. INVALID_ARGUMENT with the reason otherwise. */
hetc_plugin_status_t cu_config_parse(const cu_space_t *space, const hetc_plugin_config_t *config,
                                     cu_config_t *out);
/* "tile_f=[2,1,8,4] ..." or "(no knobs)". */
void cu_config_describe(const cu_space_t *space, const cu_config_t *config, hpc_strbuf_t *sb);

/* What a config asks of the device before it is compiled: the largest
 * block and the static shared memory of its biggest kernel; and whether the
 * template can build it at all (reason set when not). */
typedef struct cu_demand_t {
  int64_t block[3];
  int64_t shared_bytes;
  int64_t accumulators; /* registers of the per-thread output tile */
  char reason[160];     /* non-empty: the template cannot build this config */
} cu_demand_t;
void cu_config_demand(const hetc_plugin_workload_t *wl, int kind, const cu_config_t *cfg, cu_demand_t *out);
/* Each template's demand, next to its emitter (out comes zeroed with a
 * 1x1x1 block). */
void cu_demand_conv_nchw(const hetc_plugin_workload_t *wl, const cu_config_t *cfg, cu_demand_t *out);
void cu_demand_conv_nhwc(const hetc_plugin_workload_t *wl, const cu_config_t *cfg, cu_demand_t *out);
void cu_demand_gemm(const cu_config_t *cfg, cu_demand_t *out);
void cu_demand_igemm_tc(const cu_config_t *cfg, cu_demand_t *out);
void cu_demand_depthwise(const hetc_plugin_workload_t *wl, const cu_config_t *cfg, cu_demand_t *out);
/* matmul's tiles of a config: block_m x block_n outputs a block, block_k
 * staged, thread_m x thread_n a thread, as the GEMM's knobs read. */
hpc_gpu_matmul_tiles_t cu_matmul_tiles(const cu_config_t *cfg);
/* 1 when the demand fits (the space's constraint: no status made). */
int cu_demand_fits(const cu_demand_t *demand, const cu_limits_t *limits);
/* NULL when the demand fits, else DEVICE_LIMITS (or INVALID_ARGUMENT for a
 * config the template cannot build) naming the limit and both numbers. */
hetc_plugin_status_t cu_check_limits(const cu_demand_t *demand, const cu_limits_t *limits);
/* After compiling: the function's registers and threads against the block. */
hetc_plugin_status_t cu_check_function(const char *kernel, const cu_function_attrs_t *attrs,
                                       const uint32_t block[3], const cu_limits_t *limits);

/* ------------------------------------------------------------------------ */
/* Emission (emit*.c)                                                       */
/* ------------------------------------------------------------------------ */

typedef struct cu_launch_t {
  char kernel[32];
  uint32_t grid[3];  /* blocks */
  uint32_t block[3]; /* threads per block */
  int32_t num_args;
  /* Each kernel argument is a buffer: an index into run()'s args
   * (inputs, params, output) or CU_ARG_WORKSPACE. */
  int32_t args[CU_MAX_LAUNCH_ARGS];
} cu_launch_t;

typedef struct cu_emit_t {
  /* In. */
  const hetc_plugin_workload_t *wl;
  int kind;
  cu_config_t cfg;
  const char *config_text;
  /* Out: the kernel text (without the prelude), its launches in order, the
   * boundary. */
  hpc_strbuf_t src;
  int32_t num_launches;
  cu_launch_t launches[CU_MAX_LAUNCHES];
  int32_t num_inputs;
  hetc_plugin_layout_t input_layouts[CU_MAX_INPUTS + 1];
  hetc_plugin_layout_t output_layout;
  int32_t num_params;
  uint64_t param_bytes[2];
  uint64_t workspace_bytes;
} cu_emit_t;

/* Emits the program for e->wl / e->kind / e->cfg and fills the rest. */
hetc_plugin_status_t cu_emit(cu_emit_t *e);

/* Helpers shared by the emitters (emit.c). */
/* Header comment naming template, config and workload; the act() helper. */
void cu_emit_preamble(cu_emit_t *e, int32_t activation);
/* Appends a launch; returns it for the caller to fill grid/block/args. */
cu_launch_t *cu_emit_launch(cu_emit_t *e, const char *kernel);
/* The fused epilogue as a statement storing `acc` for output element
 * `index` of channel `channel` (both C expressions): bias, residual (input
 * `residual_arg`'s parameter name "res"), activation. */
void cu_emit_epilogue_store(cu_emit_t *e, const char *out, const char *index, const char *channel,
                            const char *acc);
/* Kernel parameter list text for the usual conv2d/dense arguments:
 * input(s), weight, bias, residual, output. Fills the launch's args. */
void cu_emit_conv_params(cu_emit_t *e, cu_launch_t *launch, hpc_strbuf_t *params);

hetc_plugin_status_t cu_emit_conv_nchw(cu_emit_t *e);
hetc_plugin_status_t cu_emit_conv_nhwc(cu_emit_t *e);
hetc_plugin_status_t cu_emit_conv_winograd(cu_emit_t *e);
hetc_plugin_status_t cu_emit_conv_igemm_tc(cu_emit_t *e);
hetc_plugin_status_t cu_emit_conv_depthwise(cu_emit_t *e);
hetc_plugin_status_t cu_emit_dense(cu_emit_t *e);
/* Ops without knobs (emit_ops.c). */
hetc_plugin_status_t cu_emit_pool(cu_emit_t *e);
hetc_plugin_status_t cu_emit_global_pool(cu_emit_t *e);
hetc_plugin_status_t cu_emit_elementwise(cu_emit_t *e);
hetc_plugin_status_t cu_emit_softmax(cu_emit_t *e);
hetc_plugin_status_t cu_emit_concat(cu_emit_t *e);
hetc_plugin_status_t cu_emit_layout(cu_emit_t *e);
hetc_plugin_status_t cu_emit_bias_add(cu_emit_t *e);
hetc_plugin_status_t cu_emit_transpose(cu_emit_t *e);
hetc_plugin_status_t cu_emit_resize(cu_emit_t *e);
hetc_plugin_status_t cu_emit_normalize(cu_emit_t *e);
hetc_plugin_status_t cu_emit_matmul(cu_emit_t *e);


/* ------------------------------------------------------------------------ */
/* Parameter packing (pack.c) and features (features.c)                     */
/* ------------------------------------------------------------------------ */

/* Packs param `index` from its logical form into the template's layout;
 * out has out_bytes bytes. Pure. Templates whose weights are not in the
 * logical layout pack them next to their emitter (Winograd's transform is
 * hpc_pack_winograd_f2x3_weight): */
void cu_pack_weight_rsck(const hetc_plugin_workload_t *wl, const float *logical, float *out); /* NHWC: [R][S][C][K] */
/* Bytes of a template's packed weight. */
uint64_t cu_weight_bytes(const hetc_plugin_workload_t *wl, int kind);
hetc_plugin_status_t cu_pack_param(const hetc_plugin_workload_t *wl, int kind, int32_t index, const float *logical,
                                   uint64_t count, void *out, uint64_t out_bytes);
/* The plugin's part of a schema-1 feature row; returns the count, or -1
 * for a template without features. Pure. */
int32_t cu_features_fill(const hetc_plugin_workload_t *wl, int kind, const cu_config_t *cfg, float *out,
                         int32_t capacity);

/* emit_gemm.c */
/* The tiled GEMM the GEMM-shaped templates share: for every b < batch (the
 * grid's z), C[b][m][n] = sum_k A(b, m, k) B(b, k, n), with e->cfg's
 * block_m, block_n, block_k, thread_m, thread_n (cu_demand_gemm's block and
 * shared memory). */
typedef struct cu_gemm_t {
  const char *kernel;     /* function name */
  const char *params;     /* its parameter list, e.g. "HK_GLOBAL const float *HK_RESTRICT a, ..." */
  int64_t batch, M, N, K;
  /* Element loads, C expressions over the ints b, m, k and b, k, n; only
   * evaluated inside the bounds. */
  const char *load_a, *load_b;
  /* 1 when A's (B's) neighbouring k lie next to each other in memory, 0
   * when its neighbouring m (n) do: the way the block's threads sweep a
   * tile while staging it, so that neighbouring threads load neighbouring
   * addresses. */
  int a_k_contiguous, b_k_contiguous;
  /* Statement storing the float `v` as output (b, m, n), inside the bounds. */
  const char *store;
} cu_gemm_t;
/* Emits the kernel into e->src and appends its launch (grid and block set,
 * args left to the caller) as *out; UNSUPPORTED when the grid exceeds what
 * a launch takes. */
hetc_plugin_status_t cu_emit_gemm(cu_emit_t *e, const cu_gemm_t *g, cu_launch_t **out);

#endif /* HETC_PLUGINS_CUDA_CU_H_ */
