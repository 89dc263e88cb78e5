/* The ops without knobs (pooling, global average pooling, elementwise,
 * softmax, concat, layout transforms, bias_add, transpose, resize and
 * normalize) and matmul: the kernels are the ones the GPU-style plugins share
 * (plugins/common/plugin_gpu_ops.c); this file turns their launches into
 * grids. The runtime puts the dialect's definitions before the text, so
 * none is added here. */
#include <string.h>

#include "cu.h"
#include "plugin_gpu_ops.h"

/* hpc_gpu_ops_t's add_launch: the kernels' __launch_bounds__ is
 * HPC_GPU_OPS_BLOCK, so the block is that and the grid the item count in
 * whole blocks. */
static int add_launch(void *ctx, const char *kernel, int64_t items, int32_t num_args,
                      const int32_t *args) {
  cu_emit_t *e = ctx;
  const int64_t blocks = hetc_kit_ceil_div(items, HPC_GPU_OPS_BLOCK);
  /* A grid's x extent is 32 bits in the launch; the device's own limit is
   * checked with the others. */
  if (num_args > CU_MAX_LAUNCH_ARGS || blocks > (int64_t)UINT32_MAX) return -1;
  cu_launch_t *l = cu_emit_launch(e, kernel);
  if (!l) return -1;
  l->grid[0] = (uint32_t)blocks;
  l->block[0] = HPC_GPU_OPS_BLOCK;
  l->num_args = num_args;
  for (int32_t a = 0; a < num_args; ++a) l->args[a] = args[a];
  return 0;
}

/* hpc_gpu_ops_t's add_block_launch: the kernel's __launch_bounds__ is the
 * block's size, the blocks lie along the grid's x (2^31 - 1 on every
 * device the plugin runs on; y and z stop at 65535). */
static int add_block_launch(void *ctx, const char *kernel, int64_t blocks, const int64_t block[3],
                            int32_t num_args, const int32_t *args) {
  cu_emit_t *e = ctx;
  if (num_args > CU_MAX_LAUNCH_ARGS || blocks > (int64_t)INT32_MAX) return -1;
  cu_launch_t *l = cu_emit_launch(e, kernel);
  if (!l) return -1;
  l->grid[0] = (uint32_t)blocks;
  for (int d = 0; d < 3; ++d) l->block[d] = (uint32_t)block[d];
  l->num_args = num_args;
  for (int32_t a = 0; a < num_args; ++a) l->args[a] = args[a];
  return 0;
}

/* The usual header, then the op's kernels. The header's act() helper is the
 * identity here and unused: the shared kernels inline their activation. */
static hetc_plugin_status_t emit_op(cu_emit_t *e, hpc_gpu_emit_fn_t emit, const hpc_gpu_matmul_tiles_t *tiles) {
  cu_emit_preamble(e, HETC_PLUGIN_ACT_NONE);
  /* In, then the boundary written straight into e's fields. */
  const hpc_gpu_ops_t o = {
      .wl = e->wl, .tiles = tiles, .src = &e->src, .add_launch = add_launch,
      .add_block_launch = add_block_launch, .ctx = e,
      .plugin_name = cu_plugin_name,
      .num_inputs = &e->num_inputs, .input_layouts = e->input_layouts,
      .output_layout = &e->output_layout, .num_params = &e->num_params,
      .param_bytes = e->param_bytes, .workspace_bytes = &e->workspace_bytes};
  char reason[256];
  const int32_t code = emit(&o, reason, sizeof(reason));
  return code ? cu_status(code, "%s", reason) : NULL;
}

hetc_plugin_status_t cu_emit_pool(cu_emit_t *e) { return emit_op(e, hpc_gpu_emit_pool, NULL); }
hetc_plugin_status_t cu_emit_global_pool(cu_emit_t *e) {
  return emit_op(e, hpc_gpu_emit_global_pool, NULL);
}
hetc_plugin_status_t cu_emit_elementwise(cu_emit_t *e) {
  return emit_op(e, hpc_gpu_emit_elementwise, NULL);
}
hetc_plugin_status_t cu_emit_softmax(cu_emit_t *e) { return emit_op(e, hpc_gpu_emit_softmax, NULL); }
hetc_plugin_status_t cu_emit_concat(cu_emit_t *e) { return emit_op(e, hpc_gpu_emit_concat, NULL); }
hetc_plugin_status_t cu_emit_layout(cu_emit_t *e) { return emit_op(e, hpc_gpu_emit_layout, NULL); }
hetc_plugin_status_t cu_emit_bias_add(cu_emit_t *e) { return emit_op(e, hpc_gpu_emit_bias_add, NULL); }

hetc_plugin_status_t cu_emit_transpose(cu_emit_t *e) { return emit_op(e, hpc_gpu_emit_transpose, NULL); }
hetc_plugin_status_t cu_emit_resize(cu_emit_t *e) { return emit_op(e, hpc_gpu_emit_resize, NULL); }
hetc_plugin_status_t cu_emit_normalize(cu_emit_t *e) { return emit_op(e, hpc_gpu_emit_normalize, NULL); }

hetc_plugin_status_t cu_emit_matmul(cu_emit_t *e) {
  const hpc_gpu_matmul_tiles_t tiles = cu_matmul_tiles(&e->cfg);
  return emit_op(e, hpc_gpu_emit_matmul, &tiles);
}
