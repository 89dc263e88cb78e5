/* The example_c artifact, from birth to death: prepare (validate and
 * describe), build, release, info and pack_param; the artifact file that
 * emit writes and load compares; run and time. Load must instantiate
 * exactly what build would, so both go through prepare, and the text load
 * compares is the text emit wrote.
 *
 * The artifact is host->alloc'ed and freed by artifact_free, so that the
 * host accounts for what the plugin holds; the kit's boundary (workload
 * copy, artifact_info, run()'s argument sizes) lives inside it. */
#include <stdio.h>
#include <string.h>

#include "example_c.h"

struct hetc_plugin_artifact_t {
  int32_t op;               /* which template: one per op */
  exc_direct_config_t conv; /* conv2d only */
  hetc_kit_boundary_t boundary;
};

static int is_conv(const hetc_plugin_artifact_t *a) { return a->op == HETC_PLUGIN_OP_CONV2D; }

static void artifact_free(hetc_plugin_artifact_t *a) {
  if (!a) return;
  hetc_kit_boundary_release(&a->boundary);
  hetc_kit_host()->free(a);
}

/* The config as text: the artifact's description and its file's line. */
static void config_text(const hetc_plugin_artifact_t *a, char *buf, size_t size) {
  if (is_conv(a)) exc_direct_config_text(&a->conv, buf, size);
  else hetc_kit_config_text(NULL, buf, size);
}

/* Validates (instance, workload, template, config) and describes the
 * artifact: build() and artifact_load() share it so that both instantiate
 * the same kernel. On success *out is the caller's, released with
 * artifact_free. */
static hetc_plugin_status_t prepare(const hetc_plugin_instance_t *instance, int32_t device_index,
                                    const hetc_plugin_workload_t *workload, int32_t template_index,
                                    const hetc_plugin_config_t *config, hetc_plugin_artifact_t **out) {
  *out = NULL;
  hetc_plugin_status_t s = exc_resolve(instance, device_index, workload, template_index);
  if (s) return s;
  const char *name = exc_template_name(workload->op);
  exc_direct_config_t conv;
  memset(&conv, 0, sizeof(conv));
  const int conv2d = workload->op == HETC_PLUGIN_OP_CONV2D;
  s = conv2d ? exc_direct_parse(workload, config, &conv) : hetc_kit_config_expect_none(name, config);
  if (s) return s;
  hetc_plugin_artifact_t *a = hetc_kit_host_calloc(sizeof(*a));
  if (!a) return hetc_kit_status(HETC_PLUGIN_STATUS_OUT_OF_MEMORY, EXC_NAME ": out of memory");
  a->op = workload->op;
  a->conv = conv;
  /* The direct conv reads and writes row-major; the kit's kernels say what
   * they read. Packed or not, every param has its logical size. */
  hetc_plugin_layout_t inputs[HETC_KIT_MAX_INPUTS], output = hetc_kit_layout_row_major();
  if (!conv2d) hetc_kit_reference_layouts(workload, inputs, &output);
  s = hetc_kit_boundary_init(&a->boundary, workload, conv2d ? NULL : inputs, output, NULL, 0);
  if (s) {
    artifact_free(a);
    return s;
  }
  a->boundary.info.avg_inner_loop_length = conv2d ? (double)conv.tile_x[1] : hetc_kit_reference_inner_loop(workload);
  char text[160];
  config_text(a, text, sizeof(text));
  snprintf(a->boundary.description, sizeof(a->boundary.description), "%s %s", name, text);
  *out = a;
  return NULL;
}

hetc_plugin_status_t exc_build(hetc_plugin_instance_t *instance, int32_t device_index,
                               const hetc_plugin_workload_t *workload, int32_t template_index,
                               const hetc_plugin_config_t *config, hetc_plugin_artifact_t **out_artifact) {
  if (!out_artifact) return hetc_kit_status(HETC_PLUGIN_STATUS_INVALID_ARGUMENT, EXC_NAME ": null out_artifact");
  /* Nothing to compile: the kernels are in this library, and the artifact
   * is the validated (workload, template, config). */
  return prepare(instance, device_index, workload, template_index, config, out_artifact);
}

void exc_artifact_release(hetc_plugin_instance_t *instance, hetc_plugin_artifact_t *artifact) {
  (void)instance;
  artifact_free(artifact);
}

const hetc_plugin_artifact_info_t *exc_artifact_info(const hetc_plugin_artifact_t *artifact) {
  return artifact ? &artifact->boundary.info : NULL;
}

hetc_plugin_status_t exc_pack_param(const hetc_plugin_artifact_t *artifact, int32_t param_index,
                                    const float *logical, uint64_t count, void *out_packed) {
  if (!artifact || !logical || !out_packed)
    return hetc_kit_status(HETC_PLUGIN_STATUS_INVALID_ARGUMENT, EXC_NAME ": pack_param: null argument");
  const char *name = exc_template_name(artifact->op);
  const hetc_plugin_workload_t *wl = &artifact->boundary.workload;
  if (param_index < 0 || param_index >= artifact->boundary.info.num_params)
    return hetc_kit_status(HETC_PLUGIN_STATUS_INVALID_ARGUMENT, "%s: param %d outside 0..%d", name, param_index,
                           artifact->boundary.info.num_params - 1);
  if (is_conv(artifact)) return exc_direct_pack(wl, &artifact->conv, param_index, logical, count, out_packed);
  return hetc_kit_reference_pack(name, wl, param_index, logical, count, out_packed);
}

/* ------------------------------------------------------------------------ */
/* Emit and load                                                            */
/* ------------------------------------------------------------------------ */

/* The artifact file: four lines naming what the artifact was built from.
 * There is no code in it: this backend rebuilds an artifact in
 * microseconds, so the file only has to prove that the package asks for
 * the same kernel. Format 2 describes the workload as the kit does. */
#define FILE_FORMAT "example_c artifact 2"
#define FILE_SUFFIX ".example_c"
#define FILE_MAX_BYTES (64 * 1024)
#define FILE_TEXT_MAX (HETC_KIT_WORKLOAD_TEXT_MAX + 512)
static const char *const line_names[4] = {"format", "template", "config", "workload"};

static void artifact_text(const hetc_plugin_artifact_t *a, char *buf, size_t size) {
  char config[160], workload[HETC_KIT_WORKLOAD_TEXT_MAX];
  config_text(a, config, sizeof(config));
  hetc_kit_workload_describe(&a->boundary.workload, workload, sizeof(workload));
  snprintf(buf, size, FILE_FORMAT "\ntemplate %s %u\nconfig %s\nworkload %s\n", exc_template_name(a->op),
           EXC_TEMPLATE_VERSION, config, workload);
}

hetc_plugin_status_t exc_artifact_emit(hetc_plugin_instance_t *instance, const hetc_plugin_artifact_t *artifact,
                                       const char *dir, const char *prefix) {
  if (!instance || !artifact || !dir || !prefix)
    return hetc_kit_status(HETC_PLUGIN_STATUS_INVALID_ARGUMENT, EXC_NAME ": artifact_emit: null argument");
  char text[FILE_TEXT_MAX];
  artifact_text(artifact, text, sizeof(text));
  return hetc_kit_artifact_file_write(dir, prefix, FILE_SUFFIX, text);
}

hetc_plugin_status_t exc_artifact_load(hetc_plugin_instance_t *instance, int32_t device_index,
                                       const hetc_plugin_workload_t *workload, int32_t template_index,
                                       const hetc_plugin_config_t *config, const char *dir, const char *prefix,
                                       hetc_plugin_artifact_t **out_artifact) {
  if (!out_artifact || !dir || !prefix)
    return hetc_kit_status(HETC_PLUGIN_STATUS_INVALID_ARGUMENT, EXC_NAME ": artifact_load: null argument");
  hetc_plugin_artifact_t *a = NULL;
  hetc_plugin_status_t s = prepare(instance, device_index, workload, template_index, config, &a);
  if (s) return s;
  char text[FILE_TEXT_MAX];
  artifact_text(a, text, sizeof(text));
  s = hetc_kit_artifact_file_expect(dir, prefix, FILE_SUFFIX, text, line_names, 4, FILE_MAX_BYTES);
  if (s) {
    artifact_free(a);
    return s;
  }
  *out_artifact = a;
  return NULL;
}

/* ------------------------------------------------------------------------ */
/* Run and time                                                             */
/* ------------------------------------------------------------------------ */

static void launch(const hetc_plugin_artifact_t *a, float *const *args) {
  if (is_conv(a)) exc_direct_run(&a->boundary.workload, &a->conv, args);
  else hetc_kit_reference_run(&a->boundary.workload, args);
}

hetc_plugin_status_t exc_run(hetc_plugin_instance_t *instance, const hetc_plugin_artifact_t *artifact,
                             hetc_plugin_buffer_t *const *args, int32_t num_args) {
  (void)instance;
  if (!artifact) return hetc_kit_status(HETC_PLUGIN_STATUS_INVALID_ARGUMENT, EXC_NAME ": null artifact");
  return hetc_kit_run(&artifact->boundary.run_args, exc_template_name(artifact->op), launch, artifact, args,
                      num_args);
}

hetc_plugin_status_t exc_time(hetc_plugin_instance_t *instance, const hetc_plugin_artifact_t *artifact,
                              hetc_plugin_buffer_t *const *args, int32_t num_args, int32_t number, int32_t repeat,
                              double *out_seconds) {
  (void)instance;
  if (!artifact) return hetc_kit_status(HETC_PLUGIN_STATUS_INVALID_ARGUMENT, EXC_NAME ": null artifact");
  return hetc_kit_time(&artifact->boundary.run_args, exc_template_name(artifact->op), launch, artifact, args,
                       num_args, number, repeat, out_seconds);
}
