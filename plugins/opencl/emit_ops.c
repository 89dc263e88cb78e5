/* The ops without knobs (pooling, global average pooling, elementwise,
 * softmax, concat, layout transforms, bias_add, transpose, resize and
 * normalize) and matmul: the kernels are the ones the GPU-style plugins share
 * (plugins/common/plugin_gpu_ops.c), written against the portability
 * layer; this file puts the OpenCL dialect's definitions before them and
 * turns their launches into NDRanges. */
#include <string.h>

#include "ocl.h"
#include "plugin_gpu_dialect.h"
#include "plugin_gpu_ops.h"

/* hpc_gpu_ops_t's add_launch: the kernels declare
 * reqd_work_group_size(HPC_GPU_OPS_BLOCK, 1, 1), so the local size is that
 * and the global size the item count rounded up to it. */
static int add_launch(void *ctx, const char *kernel, int64_t items, int32_t num_args,
                      const int32_t *args) {
  ocl_emit_t *e = ctx;
  if (num_args > OCL_MAX_LAUNCH_ARGS) return -1;
  ocl_launch_t *l = ocl_emit_launch(e, kernel, 1);
  if (!l) return -1;
  l->global[0] = ocl_round_up((size_t)items, HPC_GPU_OPS_BLOCK);
  l->local[0] = HPC_GPU_OPS_BLOCK;
  l->num_args = num_args;
  for (int32_t a = 0; a < num_args; ++a) l->args[a] = args[a];
  return 0;
}

/* hpc_gpu_ops_t's add_block_launch: the kernel declares its work-group
 * (reqd_work_group_size), so the local size is `block` and the work-groups
 * lie along dimension 0. */
static int add_block_launch(void *ctx, const char *kernel, int64_t blocks, const int64_t block[3],
                            int32_t num_args, const int32_t *args) {
  ocl_emit_t *e = ctx;
  if (num_args > OCL_MAX_LAUNCH_ARGS) return -1;
  ocl_launch_t *l = ocl_emit_launch(e, kernel, 3);
  if (!l) return -1;
  for (int d = 0; d < 3; ++d) {
    l->local[d] = (size_t)block[d];
    l->global[d] = (size_t)block[d] * (d == 0 ? (size_t)blocks : 1u);
  }
  l->num_args = num_args;
  for (int32_t a = 0; a < num_args; ++a) l->args[a] = args[a];
  return 0;
}

/* The program: the dialect's definitions first (the kernels use its
 * macros), then the usual header, then the op's kernels. The header's act()
 * helper is the identity here and unused: the shared kernels inline their
 * activation, and the dialect defines no act(). */
static hetc_plugin_status_t emit_op(ocl_emit_t *e, hpc_gpu_emit_fn_t emit, const hpc_gpu_matmul_tiles_t *tiles) {
  const char *dialect = hpc_gpu_dialect_opencl();
  hpc_strbuf_append(&e->src, dialect, strlen(dialect));
  ocl_emit_preamble(e, HETC_PLUGIN_ACT_NONE);
  /* In, then the boundary written straight into e's fields. */
  const hpc_gpu_ops_t o = {
      .wl = e->wl, .tiles = tiles, .src = &e->src, .add_launch = add_launch,
      .add_block_launch = add_block_launch, .ctx = e,
      .plugin_name = OCL_PLUGIN_NAME,
      .num_inputs = &e->num_inputs, .input_layouts = e->input_layouts,
      .output_layout = &e->output_layout, .num_params = &e->num_params,
      .param_bytes = e->param_bytes, .workspace_bytes = &e->workspace_bytes};
  char reason[256];
  const int32_t code = emit(&o, reason, sizeof(reason));
  return code ? ocl_status(code, "%s", reason) : NULL;
}

hetc_plugin_status_t ocl_emit_pool(ocl_emit_t *e) { return emit_op(e, hpc_gpu_emit_pool, NULL); }
hetc_plugin_status_t ocl_emit_global_pool(ocl_emit_t *e) {
  return emit_op(e, hpc_gpu_emit_global_pool, NULL);
}
hetc_plugin_status_t ocl_emit_elementwise(ocl_emit_t *e) {
  return emit_op(e, hpc_gpu_emit_elementwise, NULL);
}
hetc_plugin_status_t ocl_emit_softmax(ocl_emit_t *e) { return emit_op(e, hpc_gpu_emit_softmax, NULL); }
hetc_plugin_status_t ocl_emit_concat(ocl_emit_t *e) { return emit_op(e, hpc_gpu_emit_concat, NULL); }
hetc_plugin_status_t ocl_emit_layout(ocl_emit_t *e) { return emit_op(e, hpc_gpu_emit_layout, NULL); }
hetc_plugin_status_t ocl_emit_bias_add(ocl_emit_t *e) {
  return emit_op(e, hpc_gpu_emit_bias_add, NULL);
}

hetc_plugin_status_t ocl_emit_transpose(ocl_emit_t *e) { return emit_op(e, hpc_gpu_emit_transpose, NULL); }
hetc_plugin_status_t ocl_emit_resize(ocl_emit_t *e) { return emit_op(e, hpc_gpu_emit_resize, NULL); }
hetc_plugin_status_t ocl_emit_normalize(ocl_emit_t *e) { return emit_op(e, hpc_gpu_emit_normalize, NULL); }

hetc_plugin_status_t ocl_emit_matmul(ocl_emit_t *e) {
  const hpc_gpu_matmul_tiles_t tiles = ocl_matmul_tiles(&e->cfg);
  return emit_op(e, hpc_gpu_emit_matmul, &tiles);
}
