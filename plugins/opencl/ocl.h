/* plugins/opencl/ocl.h -- internals of the `opencl` backend plugin.
 *
 * The plugin generates OpenCL C for each workload (emit_*.c), builds it with
 * the device's compiler through the ICD loader and caches the program
 * binaries by source hash and device fingerprint (runtime.c). Knob spaces
 * and the check of configs against the device's limits live in space.c,
 * weight packing in pack.c, the device descriptors in device.c, the cost
 * model's features in features.c and the ABI table in plugin.c.
 *
 * Nothing here is exported from the .so except hetc_plugin_query. */
#ifndef HETC_PLUGINS_OPENCL_OCL_H_
#define HETC_PLUGINS_OPENCL_OCL_H_

#define CL_TARGET_OPENCL_VERSION 120
#include <CL/cl.h>
#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

#include "hetc/plugin.h"
#include "plugin_gpu_ops.h"
#include "plugin_pack.h"
#include "plugin_strbuf.h"
#include "plugin_workload.h"

#define OCL_PLUGIN_NAME "opencl"
#define OCL_PLUGIN_VERSION "0.1.0"
/* Activation inputs an op may have (concat takes up to 64). */
#define OCL_MAX_INPUTS 64
/* Kernel launches one artifact may enqueue (concat: one per input). */
#define OCL_MAX_LAUNCHES 66
/* Buffers one launch may take. */
#define OCL_MAX_LAUNCH_ARGS 6
/* run()'s argument index that stands for the workspace buffer. */
#define OCL_ARG_WORKSPACE (-1)

/* The host table handed to hetc_plugin_query; services for every file. */
extern const hetc_plugin_host_t *ocl_host;

/* A failure status with a printf-formatted message, made by the host. */
hetc_plugin_status_t ocl_status(int32_t code, const char *format, ...)
    HETC_PLUGIN_PRINTF(2, 3);
/* "CL_OUT_OF_RESOURCES (-5)" for an OpenCL error code. Static string. */
const char *ocl_error_name(cl_int error);

/* ------------------------------------------------------------------------ */
/* Devices (device.c)                                                       */
/* ------------------------------------------------------------------------ */

/* The limits the templates are checked against, from the device's own
 * queries. */
typedef struct ocl_limits_t {
  uint64_t max_work_group_size;    /* CL_DEVICE_MAX_WORK_GROUP_SIZE */
  uint64_t max_work_item_sizes[3]; /* CL_DEVICE_MAX_WORK_ITEM_SIZES */
  uint64_t local_memory_bytes;     /* CL_DEVICE_LOCAL_MEM_SIZE */
  uint64_t max_mem_alloc_bytes;    /* CL_DEVICE_MAX_MEM_ALLOC_SIZE */
  uint64_t max_constant_bytes;     /* CL_DEVICE_MAX_CONSTANT_BUFFER_SIZE */
  int32_t local_memory_dedicated;  /* CL_LOCAL: 1, CL_GLOBAL (emulated): 0 */
  int32_t preferred_vector_width;  /* CL_DEVICE_PREFERRED_VECTOR_WIDTH_FLOAT */
  int32_t clock_mhz;
} ocl_limits_t;

typedef struct ocl_device_t {
  hetc_plugin_device_t desc;
  ocl_limits_t limits;
  cl_platform_id platform;
  cl_device_id id;
  cl_context context;
  cl_command_queue queue; /* in order, with profiling */
  char *name;             /* "<platform>: <device>" */
  char *fingerprint;      /* platform | device | driver version */
  char *platform_name;
  char *device_version;
  /* The driver keeps every build in a cache of its own (PoCL's kcache,
   * unless POCL_KERNEL_CACHE=0), so no program binary is asked of it, for
   * the plugin's disk cache or a package: PoCL answers by building every
   * kernel a second time, for any work-group size (40% of a cold build's
   * time), and a later process's build of the same source hits PoCL's
   * cache anyway. */
  int32_t driver_keeps_builds;
} ocl_device_t;

struct ocl_program_cache_t;
/* Every device of every platform the ICD loader reports, in platform then
 * device order, each with its peak measured (the probe kernel goes through
 * `cache`). *out_devices is malloc()ed (free with ocl_devices_free).
 * UNAVAILABLE with the reason when there are none. */
hetc_plugin_status_t ocl_devices_open(struct ocl_program_cache_t *cache, ocl_device_t **out_devices,
                                      int32_t *out_count);
/* Whether the driver of platform `platform_name` keeps its builds itself
 * (ocl_device_t.driver_keeps_builds); reads POCL_KERNEL_CACHE. */
int32_t ocl_driver_keeps_builds(const char *platform_name);
void ocl_devices_free(ocl_device_t *devices, int32_t count);
/* Cheap, loads no driver: an ICD file is registered, else UNAVAILABLE
 * with why. */
hetc_plugin_status_t ocl_devices_probe(void);

/* ------------------------------------------------------------------------ */
/* Templates                                                                */
/* ------------------------------------------------------------------------ */

typedef enum ocl_template_kind_t {
  OCL_T_CONV_DIRECT = 0, /* local-memory tiles, register tiles */
  OCL_T_CONV_GEMM,       /* im2col (skipped for 1x1) + tiled GEMM */
  OCL_T_CONV_WINOGRAD,   /* F(2x2, 3x3): transforms + 16 batched GEMMs */
  OCL_T_CONV_DEPTHWISE,
  OCL_T_DENSE,           /* tiled GEMM */
  OCL_T_POOL,
  OCL_T_GLOBAL_POOL,
  OCL_T_ELEMENTWISE,
  OCL_T_SOFTMAX,
  OCL_T_CONCAT,
  OCL_T_LAYOUT,
  OCL_T_BIAS_ADD,
  OCL_T_TRANSPOSE,
  OCL_T_LOG_SOFTMAX, /* ocl_emit_softmax's log form */
  OCL_T_RESIZE,
  OCL_T_NORMALIZE,
  OCL_T_MATMUL, /* the shared tiled kernel (hpc_gpu_emit_matmul), knobs wg_* and tile_* */
  OCL_T_COUNT_
} ocl_template_kind_t;

/* Templates offered for a workload (0 when unsupported). */
int32_t ocl_template_count(const hetc_plugin_workload_t *wl);
/* Kind of template `index` for the workload, or -1. */
int ocl_template_kind(const hetc_plugin_workload_t *wl, int32_t index);
const char *ocl_template_name(int kind);
uint32_t ocl_template_version(int kind);

/* ------------------------------------------------------------------------ */
/* Knob spaces and configs (space.c)                                        */
/* ------------------------------------------------------------------------ */

/* A parsed config: every knob of every template. Unused fields are 0.
 * Tiles: a work-group computes wg_m*tile_m x wg_n*tile_n outputs (GEMM
 * rows x columns; direct conv: output channels x output columns, with
 * wg_h rows of work-items over output rows). */
typedef struct ocl_config_t {
  int64_t wg_m, wg_n, wg_h; /* work-group shape */
  int64_t tile_m, tile_n;   /* register tile per work-item */
  int64_t tile_k;           /* reduction tile staged per step */
  int64_t vector;           /* vector width of the register tile's loads */
  int64_t unroll;           /* 1: the reduction step is unrolled */
  int64_t local;            /* 1: tiles staged in local memory */
} ocl_config_t;

#define OCL_MAX_KNOBS 9
#define OCL_MAX_VALUES 8

typedef struct ocl_knob_spec_t {
  const char *name;
  int32_t num_values;
  int64_t values[OCL_MAX_VALUES];
  int64_t default_value;
  size_t offset; /* of the field in ocl_config_t */
} ocl_knob_spec_t;

typedef struct ocl_space_t {
  int kind;
  int32_t num_knobs;
  ocl_knob_spec_t knobs[OCL_MAX_KNOBS];
} ocl_space_t;

/* The knob space of template `kind` for the workload. */
void ocl_space_describe(const hetc_plugin_workload_t *wl, int kind, ocl_space_t *out);
/* Declares the space through the host (with a constraint that keeps
 * configs inside `limits`) and sets its default. `limits` must outlive the
 * instance. */
hetc_plugin_status_t ocl_space_define(const ocl_space_t *space, const hetc_plugin_workload_t *wl,
                                      const ocl_limits_t *limits,
                                      hetc_plugin_space_t *host_space);
/* Validates a config against the space (every knob present once, values
 * allowed, no unknown knobs) and parses it. NULL means the default.
 * INVALID_ARGUMENT with the reason otherwise. */
hetc_plugin_status_t ocl_config_parse(const ocl_space_t *space, const hetc_plugin_config_t *config,
                                      ocl_config_t *out);
/* "wg_m=8 wg_n=8 ..." or "(no knobs)". */
void ocl_config_describe(const ocl_space_t *space, const ocl_config_t *config, hpc_strbuf_t *sb);

/* What a config asks of the device: the largest work-group, its shape, the
 * local memory of its biggest kernel and the program's __constant data
 * (resize's tap tables). */
typedef struct ocl_demand_t {
  uint64_t work_group[3];
  uint64_t local_bytes;
  uint64_t constant_bytes;
} ocl_demand_t;
void ocl_config_demand(const hetc_plugin_workload_t *wl, int kind, const ocl_config_t *cfg,
                       ocl_demand_t *out);
/* matmul's tiles of a config: a work-group of wg_m x wg_n work-items of
 * tile_m x tile_n outputs each, tile_k staged, as the GEMM's knobs read. */
hpc_gpu_matmul_tiles_t ocl_matmul_tiles(const ocl_config_t *cfg);
/* NULL when the demand fits the device, else DEVICE_LIMITS naming the
 * limit and both numbers. */
hetc_plugin_status_t ocl_check_limits(const ocl_demand_t *demand, const ocl_limits_t *limits);
/* 1 when the demand fits (the space's constraint: no status made). */
int ocl_demand_fits(const ocl_demand_t *demand, const ocl_limits_t *limits);

/* ------------------------------------------------------------------------ */
/* Emission (emit*.c)                                                       */
/* ------------------------------------------------------------------------ */

/* One kernel launch of an artifact. */
typedef struct ocl_launch_t {
  char kernel[32];  /* the __kernel function's name in the program */
  int32_t dims;     /* 1..3 */
  size_t global[3]; /* a multiple of local in each dim when local is set */
  size_t local[3];  /* local[0] == 0: the implementation chooses */
  int32_t num_args;
  /* Each kernel argument is a buffer: an index into run()'s args
   * (inputs, params, output) or OCL_ARG_WORKSPACE. */
  int32_t args[OCL_MAX_LAUNCH_ARGS];
} ocl_launch_t;

typedef struct ocl_emit_t {
  /* In. */
  const hetc_plugin_workload_t *wl;
  int kind;
  ocl_config_t cfg;
  const char *config_text;
  /* Out: the program source, its launches in order, and the boundary. */
  hpc_strbuf_t src;
  int32_t num_launches;
  ocl_launch_t launches[OCL_MAX_LAUNCHES];
  int32_t num_inputs;
  hetc_plugin_layout_t input_layouts[OCL_MAX_INPUTS + 1];
  hetc_plugin_layout_t output_layout;
  int32_t num_params;
  uint64_t param_bytes[2];
  uint64_t workspace_bytes;
} ocl_emit_t;

/* Emits the program for e->wl / e->kind / e->cfg and fills the rest. */
hetc_plugin_status_t ocl_emit(ocl_emit_t *e);

/* Helpers shared by the emitters (emit.c). */
/* Header comment naming template, config and workload; the act() helper
 * when `activation` is not NONE. */
void ocl_emit_preamble(ocl_emit_t *e, int32_t activation);
/* OpenCL C expression of an activation applied to `v`; NULL for NONE. */
const char *ocl_act_expr(int32_t activation);
/* Appends a launch; returns it for the caller to fill global/local/args. */
ocl_launch_t *ocl_emit_launch(ocl_emit_t *e, const char *kernel, int32_t dims);
/* Rounds x up to a multiple of m. */
size_t ocl_round_up(size_t x, size_t m);

/* A tiled GEMM C[b][m][n] = sum_k A(b,m,k) B(b,k,n) with its epilogue,
 * written as one __kernel. Addresses are OpenCL C expressions over the
 * integer variables named in each field; the emitter guards every edge. */
typedef struct ocl_gemm_t {
  const char *kernel;     /* function name */
  int64_t batch, M, N, K; /* batch is the launch's third dimension */
  /* Kernel parameters, e.g. "__global const float *restrict A, ..." */
  const char *params;
  /* Element loads: A over (b, m, k), B over (b, k, n). */
  const char *load_a;     /* e.g. "A[(b * 64 + m) * 27 + k]" */
  const char *load_b;
  /* Statement storing float `v` for (b, m, n), applying the epilogue. */
  const char *store;
} ocl_gemm_t;
/* Emits the GEMM kernel and its launch (args filled by the caller). */
ocl_launch_t *ocl_emit_gemm(ocl_emit_t *e, const ocl_gemm_t *g);
/* Work-group and local memory the GEMM kernel of a config needs. */
void ocl_gemm_demand(const ocl_config_t *cfg, ocl_demand_t *out);

hetc_plugin_status_t ocl_emit_conv_direct(ocl_emit_t *e);
hetc_plugin_status_t ocl_emit_conv_gemm(ocl_emit_t *e);
hetc_plugin_status_t ocl_emit_conv_winograd(ocl_emit_t *e);
hetc_plugin_status_t ocl_emit_conv_depthwise(ocl_emit_t *e);
hetc_plugin_status_t ocl_emit_dense(ocl_emit_t *e);
/* Ops without knobs (emit_ops.c). */
hetc_plugin_status_t ocl_emit_pool(ocl_emit_t *e);
hetc_plugin_status_t ocl_emit_global_pool(ocl_emit_t *e);
hetc_plugin_status_t ocl_emit_elementwise(ocl_emit_t *e);
hetc_plugin_status_t ocl_emit_softmax(ocl_emit_t *e);
hetc_plugin_status_t ocl_emit_concat(ocl_emit_t *e);
hetc_plugin_status_t ocl_emit_layout(ocl_emit_t *e);
hetc_plugin_status_t ocl_emit_bias_add(ocl_emit_t *e);
hetc_plugin_status_t ocl_emit_transpose(ocl_emit_t *e);
hetc_plugin_status_t ocl_emit_resize(ocl_emit_t *e);
hetc_plugin_status_t ocl_emit_normalize(ocl_emit_t *e);
hetc_plugin_status_t ocl_emit_matmul(ocl_emit_t *e);

/* ------------------------------------------------------------------------ */
/* Parameter packing (pack.c)                                               */
/* ------------------------------------------------------------------------ */

/* Packs param `index` from its logical form into the template's layout;
 * out has out_bytes bytes. Pure. */
hetc_plugin_status_t ocl_pack_param(const hetc_plugin_workload_t *wl, int kind, int32_t index,
                                    const float *logical, uint64_t count, void *out,
                                    uint64_t out_bytes);

/* ------------------------------------------------------------------------ */
/* Features (features.c)                                                    */
/* ------------------------------------------------------------------------ */

/* The plugin's part of a schema-1 feature row; returns the count to
 * report, or -1 for a template without features. Pure. */
int32_t ocl_features_fill(const hetc_plugin_workload_t *wl, int kind, const ocl_config_t *cfg,
                          float *out, int32_t capacity);

/* ------------------------------------------------------------------------ */
/* Programs (runtime.c)                                                     */
/* ------------------------------------------------------------------------ */

/* A built program shared by every artifact with the same source on the
 * same device. Reference counted; owned by the program cache. */
typedef struct ocl_program_t {
  /* The key hashes what the program is (source, options, the device's
   * fingerprint: the disk cache's name); a program object belongs to one
   * context, and two devices of one kind have the same fingerprint. */
  uint64_t key;
  cl_context context;
  cl_program program;
  int32_t refs;
  struct ocl_program_t *next;
} ocl_program_t;

typedef struct ocl_program_cache_t {
  char *dir; /* on-disk binary cache, or NULL when unusable */
  pthread_mutex_t lock;
  ocl_program_t *programs;
} ocl_program_cache_t;

void ocl_program_cache_init(ocl_program_cache_t *cache);
void ocl_program_cache_fini(ocl_program_cache_t *cache);
/* A built program for `source` on `dev`: from memory, from `binary` when
 * given (a package's), from the disk cache (not for a device whose driver
 * keeps its builds), or built from source. A
 * failed build is BUILD_FAILED with the device compiler's log. */
hetc_plugin_status_t ocl_program_get(ocl_program_cache_t *cache, ocl_device_t *dev,
                                     const char *source, size_t length,
                                     const unsigned char *binary, size_t binary_length,
                                     ocl_program_t **out_program);
void ocl_program_release(ocl_program_cache_t *cache, ocl_program_t *program);
/* The device binary of a built program (malloc()ed); NULL when the device
 * gives none. */
unsigned char *ocl_program_binary(const ocl_program_t *program, size_t *out_length);

#endif /* HETC_PLUGINS_OPENCL_OCL_H_ */
