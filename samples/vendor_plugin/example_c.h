/* Internal interface of the example_c sample plugin, shared by plugin.c
 * (the ABI table, the instance, template dispatch), artifact.c (artifacts,
 * their file, run and time) and conv_direct.c (the conv2d template).
 * Nothing here is ABI. The sample takes <hetc/plugin.h> and the plugin kit
 * (<hetc/kit/...>, a static library with hidden visibility) from the SDK:
 * the library exports hetc_plugin_query alone.
 *
 * Building against several SDK versions: a minor only appends (fields at
 * the ends of tables, enum values, macros) and major 2 keeps all of 1.7, so
 * this compiles against any version from 1.0. What a later version added
 * is used only under `#if HETC_KIT_ABI_AT_LEAST(major, minor)` (the names
 * do not exist in an older header); built against 1.0 the plugin has no features() -- the
 * feature schema is minor 1's -- and its table says minor 0. The kit must
 * be built against the same header (samples/vendor_plugin/sources.cmake). */
#ifndef EXAMPLE_C_H_
#define EXAMPLE_C_H_

#include <stddef.h>
#include <stdint.h>

#include <hetc/kit/kit.h>

#define EXC_NAME "example_c"
#define EXC_VERSION "0.1.0"

/* The accumulator tile of the direct conv: inner_k x inner_x floats. */
#define EXC_MAX_ACC 64

/* One template per op, named "example_c_<op>" ("example_c_direct" for
 * conv2d); the index a workload sees is always 0. Names key tuning
 * records: they never change. NULL for an op this plugin does not know. */
const char *exc_template_name(int32_t op);
/* Every template's version: bump it when records made with the old code
 * stop being meaningful. */
#define EXC_TEMPLATE_VERSION 1

/* The checks every call on (instance, device, workload, template) starts
 * with, so that they read the same from every entry. Creates nothing but
 * the returned status. */
hetc_plugin_status_t exc_resolve(const hetc_plugin_instance_t *instance, int32_t device_index,
                                 const hetc_plugin_workload_t *workload, int32_t template_index);

/* ---- conv_direct.c: template "example_c_direct" ---- */

/* A config of the direct conv, checked. Splits are outermost first. */
typedef struct exc_direct_config_t {
  int64_t tile_k[2];    /* output channels of a group: [k_outer, inner_k] */
  int64_t tile_x[2];    /* output columns: [x_outer, inner_x] */
  int64_t reduce_order; /* 0: channels outside the window; 1: inside */
} exc_direct_config_t;

hetc_plugin_status_t exc_direct_define_space(const hetc_plugin_workload_t *wl, hetc_plugin_space_t *space);
/* The one parser build, features and artifact_load share. NULL config:
 * the default. A refusal names the knob and value. */
hetc_plugin_status_t exc_direct_parse(const hetc_plugin_workload_t *wl, const hetc_plugin_config_t *config,
                                      exc_direct_config_t *out);
/* "tile_k=[4,8] tile_x=[3,4] reduce_order=0" into buf (always terminated). */
void exc_direct_config_text(const exc_direct_config_t *cfg, char *buf, size_t size);
/* out (the caller's) gets the packed param: the weight as
 * [g][k_outer][C/g][KH][KW][inner_k], the bias as is. */
hetc_plugin_status_t exc_direct_pack(const hetc_plugin_workload_t *wl, const exc_direct_config_t *cfg, int32_t param,
                                     const float *logical, uint64_t count, void *out);
/* args: input, [residual], packed weight, [bias], output. */
void exc_direct_run(const hetc_plugin_workload_t *wl, const exc_direct_config_t *cfg, float *const *args);
#if HETC_KIT_ABI_AT_LEAST(1, 1)
/* Writes indices [0, min(capacity, HETC_FEATURE_PLUGIN_END)); allocates
 * nothing. */
void exc_direct_features(const hetc_plugin_workload_t *wl, const exc_direct_config_t *cfg, float *out,
                         int32_t capacity);
#endif

/* ---- artifact.c: the table's artifact, run and time entries ---- */

/* *out_artifact is the caller's, released with exc_artifact_release. */
hetc_plugin_status_t exc_build(hetc_plugin_instance_t *instance, int32_t device_index,
                               const hetc_plugin_workload_t *workload, int32_t template_index,
                               const hetc_plugin_config_t *config, hetc_plugin_artifact_t **out_artifact);
/* Frees the artifact and everything it owns; NULL is a no-op. */
void exc_artifact_release(hetc_plugin_instance_t *instance, hetc_plugin_artifact_t *artifact);
/* Owned by the artifact: valid until exc_artifact_release. */
const hetc_plugin_artifact_info_t *exc_artifact_info(const hetc_plugin_artifact_t *artifact);
/* out_packed is the caller's, of info->param_bytes[param_index] bytes. */
hetc_plugin_status_t exc_pack_param(const hetc_plugin_artifact_t *artifact, int32_t param_index,
                                    const float *logical, uint64_t count, void *out_packed);
/* Writes <dir>/<prefix>.example_c; allocates nothing that outlives it. */
hetc_plugin_status_t exc_artifact_emit(hetc_plugin_instance_t *instance, const hetc_plugin_artifact_t *artifact,
                                       const char *dir, const char *prefix);
/* *out_artifact is the caller's, released with exc_artifact_release. */
hetc_plugin_status_t exc_artifact_load(hetc_plugin_instance_t *instance, int32_t device_index,
                                       const hetc_plugin_workload_t *workload, int32_t template_index,
                                       const hetc_plugin_config_t *config, const char *dir, const char *prefix,
                                       hetc_plugin_artifact_t **out_artifact);
/* args (the caller's): the artifact's inputs, params and output. */
hetc_plugin_status_t exc_run(hetc_plugin_instance_t *instance, const hetc_plugin_artifact_t *artifact,
                             hetc_plugin_buffer_t *const *args, int32_t num_args);
/* out_seconds is the caller's, of at least `repeat` entries. */
hetc_plugin_status_t exc_time(hetc_plugin_instance_t *instance, const hetc_plugin_artifact_t *artifact,
                              hetc_plugin_buffer_t *const *args, int32_t num_args, int32_t number, int32_t repeat,
                              double *out_seconds);

#endif /* EXAMPLE_C_H_ */
