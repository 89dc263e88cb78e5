/* hetc/kit/boundary.h -- what an artifact records about its boundary: the
 * workload it computes, the layouts it reads and writes, its packed params
 * and what run() must be given. artifact_info answers with `info`, run()
 * checks its arguments against `run_args`; a plugin embeds one in its
 * struct hetc_plugin_artifact_t. */
#ifndef HETC_KIT_BOUNDARY_H_
#define HETC_KIT_BOUNDARY_H_

#include <stdint.h>

#include <hetc/plugin.h>

#include "hetc/kit/run.h"
#include "hetc/kit/workload.h"

#ifdef __cplusplus
extern "C" {
#endif

#define HETC_KIT_DESCRIPTION_MAX 256

typedef struct hetc_kit_boundary_t {
  /* A deep copy (hetc_kit_workload_copy) whose tensors carry the layouts
   * the kernel reads and writes, not the producers' hints. */
  hetc_plugin_workload_t workload;
  hetc_plugin_layout_t input_layouts[HETC_KIT_MAX_INPUTS];
  uint64_t param_bytes[HETC_KIT_MAX_PARAMS];
  /* artifact_info's answer; its pointers point into this struct. The
   * plugin sets avg_inner_loop_length and writes `description`. */
  hetc_plugin_artifact_info_t info;
  char description[HETC_KIT_DESCRIPTION_MAX];
  hetc_kit_run_args_t run_args;
} hetc_kit_boundary_t;

/* Fills b for a kernel computing wl that reads input i in input_layouts[i]
 * (NULL: every input row-major), writes output_layout, takes
 * hetc_kit_param_count(wl) params of param_bytes[i] bytes (NULL: their
 * logical float32 sizes) and a workspace of workspace_bytes. Fails with
 * OUT_OF_MEMORY only; release b with hetc_kit_boundary_release either
 * way. */
hetc_plugin_status_t hetc_kit_boundary_init(hetc_kit_boundary_t *b, const hetc_plugin_workload_t *wl,
                                            const hetc_plugin_layout_t *input_layouts,
                                            hetc_plugin_layout_t output_layout, const uint64_t *param_bytes,
                                            uint64_t workspace_bytes);
void hetc_kit_boundary_release(hetc_kit_boundary_t *b);

#ifdef __cplusplus
}
#endif

#endif /* HETC_KIT_BOUNDARY_H_ */
