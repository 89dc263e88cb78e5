/* plugins/common/plugin_gpu_ops.h -- kernels of the ops without knobs
 * (pooling, global average pooling, elementwise, softmax, concat, layout
 * transforms, bias_add, transpose, resize, normalize) and of matmul, whose
 * tiles are the plugin's knobs, for the GPU-style plugins, written once
 * against the portability layer (plugin_gpu_dialect.h) so that the same
 * text compiles as CUDA C with NVRTC (cuda) and as OpenCL C (opencl).
 *
 * Every kernel of the ops without knobs is one thread per output element
 * (per row for softmax, per (n, c) plane for global pooling, per
 * statistics line or a block per line for normalize), declared for 1-d
 * blocks of HPC_GPU_OPS_BLOCK threads and guarded against the rounded-up
 * range. matmul's kernel is a block per output tile, its block the
 * config's (hpc_gpu_matmul_tiles_t). */
#ifndef HETC_PLUGINS_COMMON_PLUGIN_GPU_OPS_H_
#define HETC_PLUGINS_COMMON_PLUGIN_GPU_OPS_H_

#include <stddef.h>
#include <stdint.h>

#include "hetc/plugin.h"
#include "plugin_strbuf.h"

/* Threads per block of every ops kernel: the kernels declare it
 * (HK_KERNEL(64, 1, 1)), so a launch must use exactly this block. */
#define HPC_GPU_OPS_BLOCK 64

/* matmul's config: a block computes a tile_m x tile_n output tile of one
 * batch, staging tile_k of the reduction per step; each thread keeps
 * thread_m x thread_n outputs in registers, so the block is (tile_n /
 * thread_n) x (tile_m / thread_m) threads (x along N). thread_m divides
 * tile_m and thread_n tile_n (hpc_gpu_matmul_tiles_check). */
typedef struct hpc_gpu_matmul_tiles_t {
  int64_t tile_m, tile_n, tile_k, thread_m, thread_n;
} hpc_gpu_matmul_tiles_t;

typedef struct hpc_gpu_ops_t {
  /* In. */
  const hetc_plugin_workload_t *wl;
  /* matmul's tiles; NULL for the ops without knobs. */
  const hpc_gpu_matmul_tiles_t *tiles;
  /* The kernel text is appended here: dialect macros only, neither the
   * dialect's definitions nor a header (the plugin adds those). */
  hpc_strbuf_t *src;
  /* Adds a 1-d launch of `items` threads (the plugin rounds up to whole
   * blocks of HPC_GPU_OPS_BLOCK) of `kernel` with `num_args` buffers, each
   * an index into run()'s args: inputs, then params, then the output.
   * Returns 0, or -1 when the plugin has no room for it. */
  int (*add_launch)(void *ctx, const char *kernel, int64_t items, int32_t num_args,
                    const int32_t *args);
  /* Adds a launch of a 1-d grid of `blocks` blocks of block[0] x block[1]
   * x block[2] threads, the block the kernel declares (HK_KERNEL), for
   * kernels that index by block (HK_BX) rather than by thread. Returns 0,
   * or -1 when the plugin cannot launch it. */
  int (*add_block_launch)(void *ctx, const char *kernel, int64_t blocks, const int64_t block[3],
                          int32_t num_args, const int32_t *args);
  void *ctx;
  const char *plugin_name; /* prefixes the reasons */
  /* Out: the boundary, written into the caller's fields (input_layouts
   * has HETC_KIT_MAX_INPUTS + 1 entries, param_bytes 2). */
  int32_t *num_inputs;
  hetc_plugin_layout_t *input_layouts;
  hetc_plugin_layout_t *output_layout;
  int32_t *num_params;
  uint64_t *param_bytes;
  uint64_t *workspace_bytes; /* no op needs any: set to 0 */
} hpc_gpu_ops_t;

typedef int32_t (*hpc_gpu_emit_fn_t)(const hpc_gpu_ops_t *o, char *reason, size_t size);

/* Each emits the kernels and launches of its op for o->wl and fills the
 * boundary. Returns 0, or a HETC_PLUGIN_STATUS_* code with the reason
 * (prefixed with o->plugin_name) in `reason`. An allocation failure shows
 * only in o->src->failed, for the caller to check. */
int32_t hpc_gpu_emit_pool(const hpc_gpu_ops_t *o, char *reason, size_t size); /* max/avg pool2d */
int32_t hpc_gpu_emit_global_pool(const hpc_gpu_ops_t *o, char *reason, size_t size);
int32_t hpc_gpu_emit_elementwise(const hpc_gpu_ops_t *o, char *reason, size_t size);
int32_t hpc_gpu_emit_softmax(const hpc_gpu_ops_t *o, char *reason, size_t size);
int32_t hpc_gpu_emit_concat(const hpc_gpu_ops_t *o, char *reason, size_t size);
int32_t hpc_gpu_emit_layout(const hpc_gpu_ops_t *o, char *reason, size_t size);
int32_t hpc_gpu_emit_bias_add(const hpc_gpu_ops_t *o, char *reason, size_t size);
/* Row-major in and out: one thread per output element. */
int32_t hpc_gpu_emit_transpose(const hpc_gpu_ops_t *o, char *reason, size_t size);
/* In the producer's layout, one thread per output element, the taps in
 * tables at file scope (plugin_resize.h; HK_TABLE). */
int32_t hpc_gpu_emit_resize(const hpc_gpu_ops_t *o, char *reason, size_t size);
/* In the layout plugin_normalize.h picks: where the statistics lines are
 * contiguous in row-major (inner 1), a block per line reducing through
 * HPC_GPU_NORMALIZE_SHARED_BYTES of shared memory, else a thread per line;
 * then, for NCHWc, a kernel writing the padding channels' zeros. */
int32_t hpc_gpu_emit_normalize(const hpc_gpu_ops_t *o, char *reason, size_t size);
/* The shared memory of normalize's block reduction, one float a thread. */
#define HPC_GPU_NORMALIZE_SHARED_BYTES (HPC_GPU_OPS_BLOCK * 4)

/* Row-major in and out whatever the producer hints (the last two dims are
 * the matrices, every layout hint of a 4-d tensor would split a batch or
 * matrix dim): a block per (batch, tile_m x tile_n output tile) of
 * o->tiles, A's and B's tiles of tile_k staged in shared memory
 * (hpc_gpu_matmul_shared_bytes), every edge guarded. */
int32_t hpc_gpu_emit_matmul(const hpc_gpu_ops_t *o, char *reason, size_t size);
/* The shared memory matmul's kernel declares for `t`. */
int64_t hpc_gpu_matmul_shared_bytes(const hpc_gpu_matmul_tiles_t *t);
/* 0 when `t` can be built; else 1 with why in `reason`. */
int hpc_gpu_matmul_tiles_check(const hpc_gpu_matmul_tiles_t *t, char *reason, size_t size);

/* The dialect expression of an activation applied to the float `v` ("v"
 * for NONE); static string. */
const char *hpc_gpu_act_expr(int32_t activation);

#endif /* HETC_PLUGINS_COMMON_PLUGIN_GPU_OPS_H_ */
