/* Internal interface of the example_c sample plugin: shared between
 * plugin.c (the ABI table, the instance, template dispatch), artifact.c
 * (artifacts and their files), buffers.c (buffers, run and time),
 * conv_direct.c (the conv2d template) and ops.c (every other op). Nothing
 * here is part of the hetc ABI; the only header the sample takes from hetc
 * is <hetc/plugin.h>. Every symbol is hidden: the library exports
 * hetc_plugin_query alone, and the host reaches the rest through its table.
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

/* ---- plugin.c: what the other files share of the front ---- */

/* Template names and versions, indexed by exc_template_t: artifacts name
 * their template in descriptions, messages and files. */
typedef struct exc_template_info_t {
  const char *name;
  uint32_t version;
} exc_template_info_t;
extern const exc_template_info_t exc_templates[EXC_T_COUNT_];

/* The checks every call on a (device, workload, template) starts with, so
 * that they read the same from every entry; *out_kind is the template kind
 * (exc_template_t) on success. Allocates nothing but the returned status. */
hetc_plugin_status_t exc_resolve(const hetc_plugin_instance_t *instance, int32_t device_index,
                                 const hetc_plugin_workload_t *workload, int32_t template_index,
                                 int *out_kind);

/* CLOCK_MONOTONIC in seconds: time() and the peak measurement use one clock. */
double exc_now_seconds(void);

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

/* ---- artifact.c: artifacts, their lifetime and their files ---- */

/* Shared because run() (buffers.c) reads what build() (artifact.c) decided.
 * The artifact and its pointer fields (inputs, input_layouts, arg_bytes,
 * description) are host->alloc'ed, owned by the artifact and freed with it
 * by exc_artifact_release; info points into them. */
struct hetc_plugin_artifact_t {
  int kind;
  hetc_plugin_workload_t wl;     /* a copy; wl.inputs points at inputs */
  hetc_plugin_tensor_t *inputs;  /* the workload's inputs, copied */
  exc_direct_config_t conv;      /* EXC_T_DIRECT only */
  hetc_plugin_artifact_info_t info;
  hetc_plugin_layout_t *input_layouts; /* all row-major */
  uint64_t param_bytes[2];
  int32_t num_args;    /* inputs + params + output */
  uint64_t *arg_bytes; /* the least bytes of each run() argument */
  char *description;
};

/* The table's entries (plugin.c fills hetc_plugin_t with them). */

/* *out_artifact is the caller's, released with exc_artifact_release. */
hetc_plugin_status_t exc_build(hetc_plugin_instance_t *instance, int32_t device_index,
                               const hetc_plugin_workload_t *workload, int32_t template_index,
                               const hetc_plugin_config_t *config,
                               hetc_plugin_artifact_t **out_artifact);
/* Frees the artifact and everything it owns; NULL is a no-op. */
void exc_artifact_release(hetc_plugin_instance_t *instance, hetc_plugin_artifact_t *artifact);
/* Owned by the artifact: valid until exc_artifact_release; never freed by
 * the caller. */
const hetc_plugin_artifact_info_t *exc_artifact_info(const hetc_plugin_artifact_t *artifact);
/* out_packed is the caller's, of at least info->param_bytes[param_index]. */
hetc_plugin_status_t exc_pack_param(const hetc_plugin_artifact_t *artifact, int32_t param_index,
                                    const float *logical, uint64_t count, void *out_packed);
/* Writes <dir>/<prefix>.example_c; allocates nothing that outlives the call. */
hetc_plugin_status_t exc_artifact_emit(hetc_plugin_instance_t *instance,
                                       const hetc_plugin_artifact_t *artifact, const char *dir,
                                       const char *prefix);
/* *out_artifact is the caller's, released with exc_artifact_release. */
hetc_plugin_status_t exc_artifact_load(hetc_plugin_instance_t *instance, int32_t device_index,
                                       const hetc_plugin_workload_t *workload,
                                       int32_t template_index, const hetc_plugin_config_t *config,
                                       const char *dir, const char *prefix,
                                       hetc_plugin_artifact_t **out_artifact);

/* ---- buffers.c: buffers in host memory, run and time ---- */

/* The table's entries (plugin.c fills hetc_plugin_t with them). */

/* *out_buffer is the caller's, freed with exc_buffer_free. */
hetc_plugin_status_t exc_buffer_alloc(hetc_plugin_instance_t *instance, int32_t device_index,
                                      uint64_t bytes, hetc_plugin_buffer_t **out_buffer);
/* Frees the buffer and its memory; NULL is a no-op. */
void exc_buffer_free(hetc_plugin_instance_t *instance, hetc_plugin_buffer_t *buffer);
hetc_plugin_status_t exc_buffer_write(hetc_plugin_instance_t *instance,
                                      hetc_plugin_buffer_t *buffer, uint64_t offset,
                                      const void *src, uint64_t bytes);
hetc_plugin_status_t exc_buffer_read(hetc_plugin_instance_t *instance,
                                     const hetc_plugin_buffer_t *buffer, uint64_t offset,
                                     void *dst, uint64_t bytes);
hetc_plugin_status_t exc_buffer_copy(hetc_plugin_instance_t *instance, hetc_plugin_buffer_t *dst,
                                     uint64_t dst_offset, const hetc_plugin_buffer_t *src,
                                     uint64_t src_offset, uint64_t bytes);
/* The buffer's own memory: valid until exc_buffer_free, never freed by the
 * caller. */
void *exc_buffer_host_pointer(hetc_plugin_instance_t *instance, hetc_plugin_buffer_t *buffer);
/* args: the artifact's inputs, params and output, in that order; they stay
 * the caller's. */
hetc_plugin_status_t exc_run(hetc_plugin_instance_t *instance,
                             const hetc_plugin_artifact_t *artifact,
                             hetc_plugin_buffer_t *const *args, int32_t num_args);
/* out_seconds is the caller's, of at least `repeat` entries. */
hetc_plugin_status_t exc_time(hetc_plugin_instance_t *instance,
                              const hetc_plugin_artifact_t *artifact,
                              hetc_plugin_buffer_t *const *args, int32_t num_args,
                              int32_t number, int32_t repeat, double *out_seconds);

#endif /* EXAMPLE_C_H_ */
