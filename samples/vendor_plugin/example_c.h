/* Internal interface of the example_c sample plugin: shared between
 * plugin.c (the ABI table), conv_direct.c (the conv2d template) and ops.c
 * (every other op). Nothing here is part of the hetc ABI; the only header
 * the sample takes from hetc is <hetc/plugin.h>.
 *
 * Building against several SDK minors: minor versions of the ABI only
 * append (fields at the ends of tables, enum values, macros). This sample
 * compiles against any minor >= 0. Everything a later minor added is used
 * only under `#if HETC_PLUGIN_ABI_MINOR >= N` (compile time: the names do
 * not exist in an older header), and a host field added after minor 0 is
 * read only after HETC_PLUGIN_HAS_FIELD says the host's table holds it
 * (run time: an older host's table ends before it). Built against minor 0
 * the plugin has no features() -- the feature schema is minor 1's -- and
 * its table says minor 0, so a newer driver does not call that entry. */
#ifndef EXAMPLE_C_H_
#define EXAMPLE_C_H_

#include <stddef.h>
#include <stdint.h>

#include <hetc/plugin.h>

#define EXC_NAME "example_c"
#define EXC_VERSION "0.1.0"

/* concat takes up to 64 inputs (plugin.h); every other op at most 2. */
#define EXC_MAX_INPUTS 64
/* The accumulator tile of the direct conv: inner_k x inner_x floats. */
#define EXC_MAX_ACC 64

/* Set once by hetc_plugin_query; the host table is static and outlives
 * every call into the plugin. */
extern const hetc_plugin_host_t *exc_host;

/* host->status_new with the message formatted here first, so that helpers
 * can pass a va_list-free format through (status_new has no va_list
 * variant). The returned status belongs to whoever returns it to the host. */
hetc_plugin_status_t exc_status(int32_t code, const char *format, ...)
    HETC_PLUGIN_PRINTF(2, 3);

/* Templates. One per op; the index a workload sees is always 0. */
typedef enum exc_template_t {
  EXC_T_DIRECT = 0, /* conv2d */
  EXC_T_DENSE,
  EXC_T_MAX_POOL,
  EXC_T_AVG_POOL,
  EXC_T_GLOBAL_AVG_POOL,
  EXC_T_ELEMENTWISE,
  EXC_T_SOFTMAX,
  EXC_T_CONCAT,
  EXC_T_LAYOUT,
  EXC_T_BIAS_ADD,
  EXC_T_COUNT_
} exc_template_t;

/* Workload checks write a reason into `reason` (may be NULL when size is 0)
 * and return a hetc_plugin_status_code_t, 0 when the workload is fine, so
 * that supports() can ask without creating a status. */
typedef struct exc_reason_t {
  char *text;
  size_t size;
} exc_reason_t;
int32_t exc_fail(exc_reason_t *r, int32_t code, const char *format, ...)
    HETC_PLUGIN_PRINTF(3, 4);

/* Row-major element count of a tensor's logical shape. */
int64_t exc_count(const hetc_plugin_tensor_t *t);
/* Floats a tensor occupies in its layout (NCHWc pads channels). */
int64_t exc_stored_count(const hetc_plugin_tensor_t *t);
int exc_same_shape(const hetc_plugin_tensor_t *a, const hetc_plugin_tensor_t *b);
/* out = act(v), hetc_plugin_activation_t. */
float exc_activate(int32_t activation, float v);

/* ---- conv_direct.c: template "example_c_direct" ---- */

/* A config of the direct conv, parsed and validated. Splits are outermost
 * first, as in a hetc config. */
typedef struct exc_direct_config_t {
  int64_t tile_k[2];    /* output channels of a group: [k_outer, inner_k] */
  int64_t tile_x[2];    /* output columns: [x_outer, inner_x] */
  int64_t reduce_order; /* 0: channels outside the window; 1: inside */
} exc_direct_config_t;

int32_t exc_direct_check(const hetc_plugin_workload_t *wl, exc_reason_t *r);
hetc_plugin_status_t exc_direct_define_space(const hetc_plugin_workload_t *wl,
                                             hetc_plugin_space_t *space);
/* NULL config: the default. A failure names the knob and value. */
hetc_plugin_status_t exc_direct_parse(const hetc_plugin_workload_t *wl,
                                      const hetc_plugin_config_t *config,
                                      exc_direct_config_t *out);
/* "tile_k=[4,8] tile_x=[3,4] reduce_order=0" into buf (always terminated). */
void exc_direct_config_text(const exc_direct_config_t *cfg, char *buf, size_t size);
uint64_t exc_direct_param_bytes(const hetc_plugin_workload_t *wl, int32_t param);
hetc_plugin_status_t exc_direct_pack(const hetc_plugin_workload_t *wl,
                                     const exc_direct_config_t *cfg, int32_t param,
                                     const float *logical, uint64_t count, void *out);
/* args: input, [residual], packed weight, [bias], output. */
void exc_direct_run(const hetc_plugin_workload_t *wl, const exc_direct_config_t *cfg,
                    float *const *args);
#if HETC_PLUGIN_ABI_MINOR >= 1
/* Writes indices [0, min(capacity, HETC_FEATURE_PLUGIN_END)); allocates
 * nothing. */
void exc_direct_features(const hetc_plugin_workload_t *wl, const exc_direct_config_t *cfg,
                         float *out, int32_t capacity);
#endif

/* ---- ops.c: every other op, one knob-less template each ---- */

/* The template serving a non-conv op, or -1. */
int exc_ops_template(int32_t op);
int32_t exc_ops_check(const hetc_plugin_workload_t *wl, exc_reason_t *r);
int32_t exc_ops_num_params(const hetc_plugin_workload_t *wl);
uint64_t exc_ops_param_bytes(const hetc_plugin_workload_t *wl, int32_t param);
/* Params of these ops keep their logical layout: packing is a copy. */
hetc_plugin_status_t exc_ops_pack(const hetc_plugin_workload_t *wl, int kind,
                                  int32_t param, const float *logical, uint64_t count,
                                  void *out);
/* Innermost trip count of the op's kernel, for artifact_info. */
double exc_ops_inner_loop(const hetc_plugin_workload_t *wl, int kind);
/* args: the activation inputs, the params, the output. */
void exc_ops_run(const hetc_plugin_workload_t *wl, int kind, float *const *args);

#endif /* EXAMPLE_C_H_ */
