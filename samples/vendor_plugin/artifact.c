/* The example_c artifact, from birth to death: prepare (validate and
 * describe), build, release, info and pack_param, and the artifact file that
 * emit writes and load checks. The file format and the artifact's lifetime
 * are one concern: load must instantiate exactly what build would, so both
 * go through prepare, and the text load compares is the text emit wrote.
 * plugin.c has already decided which template serves a workload
 * (exc_resolve); buffers.c reads the artifact at run time.
 *
 * The artifact and every block it points to are host->alloc'ed and freed by
 * artifact_free, so that the host accounts for what the plugin holds. */
#define _POSIX_C_SOURCE 200809L /* strerror_r */

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "example_c.h"

static const char *error_text(int error, char *buf, size_t size) {
  if (strerror_r(error, buf, size) != 0) snprintf(buf, size, "error %d", error);
  return buf;
}

/* ------------------------------------------------------------------------ */
/* A growing string in host memory (artifact descriptions and files)       */
/* ------------------------------------------------------------------------ */

typedef struct text_t {
  char *data; /* host->alloc'ed, NUL-terminated; the owner frees it */
  size_t length, capacity;
  int failed; /* an allocation failed: data is incomplete */
} text_t;

static void text_printf(text_t *t, const char *format, ...) HETC_PLUGIN_PRINTF(2, 3);
static void text_printf(text_t *t, const char *format, ...) {
  if (t->failed) return;
  va_list args, again;
  va_start(args, format);
  va_copy(again, args);
  const int n = vsnprintf(NULL, 0, format, args);
  va_end(args);
  if (n < 0) {
    t->failed = 1;
  } else {
    if (t->length + (size_t)n + 1 > t->capacity) {
      size_t capacity = t->capacity ? t->capacity * 2 : 256;
      while (capacity < t->length + (size_t)n + 1) capacity *= 2;
      /* The host allocator has no realloc: move to a new block. */
      char *grown = exc_host->alloc(capacity);
      if (!grown) {
        t->failed = 1;
      } else {
        if (t->data) memcpy(grown, t->data, t->length + 1);
        exc_host->free(t->data);
        t->data = grown;
        t->capacity = capacity;
      }
    }
    if (!t->failed) {
      vsnprintf(t->data + t->length, (size_t)n + 1, format, again);
      t->length += (size_t)n;
    }
  }
  va_end(again);
}

static void text_free(text_t *t) {
  exc_host->free(t->data);
  t->data = NULL;
}

/* A knob-less template accepts NULL or a config without knobs. */
static hetc_plugin_status_t check_no_knobs(int kind, const hetc_plugin_config_t *config) {
  if (!config || config->num_knobs == 0) return NULL;
  const char *name = config->num_knobs > 0 && config->knobs && config->knobs[0].name
                         ? config->knobs[0].name
                         : "?";
  return exc_status(HETC_PLUGIN_STATUS_INVALID_ARGUMENT,
                    "%s: unknown knob '%s' (this template has no knobs)",
                    exc_templates[kind].name, name);
}

/* ------------------------------------------------------------------------ */
/* Artifacts                                                                */
/* ------------------------------------------------------------------------ */

/* The one place that knows which fields of the artifact own memory (see the
 * struct in example_c.h): it frees those blocks and then the artifact. */
static void artifact_free(hetc_plugin_artifact_t *a) {
  if (!a) return;
  exc_host->free(a->inputs);
  exc_host->free(a->input_layouts);
  exc_host->free(a->arg_bytes);
  exc_host->free(a->description);
  exc_host->free(a);
}

/* Validates (instance, workload, template, config) and describes the
 * artifact: build() and artifact_load() share it so that both instantiate
 * the same kernel. On success *out is the caller's, released with
 * artifact_free. */
static hetc_plugin_status_t prepare(const hetc_plugin_instance_t *instance, int32_t device_index,
                                    const hetc_plugin_workload_t *workload,
                                    int32_t template_index, const hetc_plugin_config_t *config,
                                    hetc_plugin_artifact_t **out) {
  *out = NULL;
  int kind = -1;
  hetc_plugin_status_t s = exc_resolve(instance, device_index, workload, template_index, &kind);
  if (s) return s;
  exc_direct_config_t conv;
  memset(&conv, 0, sizeof(conv));
  s = kind == EXC_T_DIRECT ? exc_direct_parse(workload, config, &conv)
                           : check_no_knobs(kind, config);
  if (s) return s;

  const int32_t n_in = workload->num_inputs;
  const int32_t n_params = kind == EXC_T_DIRECT ? 1 + workload->epilogue.has_bias
                                                : exc_ops_num_params(workload);
  hetc_plugin_artifact_t *a = exc_host->alloc(sizeof(*a));
  if (!a) return exc_status(HETC_PLUGIN_STATUS_OUT_OF_MEMORY, EXC_NAME ": out of memory");
  memset(a, 0, sizeof(*a));
  a->kind = kind;
  a->conv = conv;
  a->num_args = n_in + n_params + 1;
  a->inputs = exc_host->alloc(sizeof(*a->inputs) * (size_t)n_in);
  a->input_layouts = exc_host->alloc(sizeof(*a->input_layouts) * (size_t)n_in);
  a->arg_bytes = exc_host->alloc(sizeof(*a->arg_bytes) * (size_t)a->num_args);
  text_t d = {0};
  if (kind == EXC_T_DIRECT) {
    char config_text[160];
    exc_direct_config_text(&conv, config_text, sizeof(config_text));
    text_printf(&d, "%s %s", exc_templates[kind].name, config_text);
  } else {
    text_printf(&d, "%s", exc_templates[kind].name);
  }
  a->description = d.data;
  if (!a->inputs || !a->input_layouts || !a->arg_bytes || d.failed) {
    artifact_free(a);
    return exc_status(HETC_PLUGIN_STATUS_OUT_OF_MEMORY, EXC_NAME ": out of memory");
  }
  memcpy(a->inputs, workload->inputs, sizeof(*a->inputs) * (size_t)n_in);
  a->wl = *workload;
  a->wl.inputs = a->inputs;
  int32_t arg = 0;
  /* Every artifact reads and writes row-major, except a layout_transform
   * that keeps the shape: it converts between the layouts it is given. */
  const int converts = kind == EXC_T_LAYOUT && exc_same_shape(&workload->inputs[0], &workload->output);
  for (int32_t i = 0; i < n_in; ++i) {
    a->input_layouts[i] = converts ? workload->inputs[i].layout
                                   : (hetc_plugin_layout_t){HETC_PLUGIN_LAYOUT_ROW_MAJOR, 0};
    a->inputs[i].layout = a->input_layouts[i];
    a->arg_bytes[arg++] = (uint64_t)exc_stored_count(&a->inputs[i]) * sizeof(float);
  }
  if (!converts) a->wl.output.layout = (hetc_plugin_layout_t){HETC_PLUGIN_LAYOUT_ROW_MAJOR, 0};
  for (int32_t p = 0; p < n_params; ++p) {
    a->param_bytes[p] = kind == EXC_T_DIRECT ? exc_direct_param_bytes(workload, p)
                                             : exc_ops_param_bytes(workload, p);
    a->arg_bytes[arg++] = a->param_bytes[p];
  }
  a->arg_bytes[arg] = (uint64_t)exc_stored_count(&a->wl.output) * sizeof(float);
  hetc_plugin_artifact_info_t *info = &a->info;
  info->num_inputs = n_in;
  info->input_layouts = a->input_layouts;
  info->output_layout = a->wl.output.layout;
  info->num_params = n_params;
  info->param_bytes = a->param_bytes;
  info->workspace_bytes = 0;
  info->avg_inner_loop_length =
      kind == EXC_T_DIRECT ? (double)conv.tile_x[1] : exc_ops_inner_loop(workload, kind);
  info->description = a->description;
  *out = a;
  return NULL;
}

/* *out_artifact is the caller's, released with artifact_release. */
hetc_plugin_status_t exc_build(hetc_plugin_instance_t *instance, int32_t device_index,
                               const hetc_plugin_workload_t *workload,
                               int32_t template_index, const hetc_plugin_config_t *config,
                               hetc_plugin_artifact_t **out_artifact) {
  if (!out_artifact)
    return exc_status(HETC_PLUGIN_STATUS_INVALID_ARGUMENT, EXC_NAME ": null out_artifact");
  /* Nothing to compile: the kernels are in this library, and the artifact
   * is the validated (workload, template, config). */
  return prepare(instance, device_index, workload, template_index, config, out_artifact);
}

void exc_artifact_release(hetc_plugin_instance_t *instance, hetc_plugin_artifact_t *artifact) {
  (void)instance;
  artifact_free(artifact);
}

/* Owned by the artifact: valid until artifact_release. */
const hetc_plugin_artifact_info_t *exc_artifact_info(const hetc_plugin_artifact_t *artifact) {
  return artifact ? &artifact->info : NULL;
}

hetc_plugin_status_t exc_pack_param(const hetc_plugin_artifact_t *artifact,
                                    int32_t param_index, const float *logical,
                                    uint64_t count, void *out_packed) {
  if (!artifact || !logical || !out_packed)
    return exc_status(HETC_PLUGIN_STATUS_INVALID_ARGUMENT, EXC_NAME ": pack_param: null argument");
  if (param_index < 0 || param_index >= artifact->info.num_params)
    return exc_status(HETC_PLUGIN_STATUS_INVALID_ARGUMENT, "%s: param %d outside 0..%d",
                      exc_templates[artifact->kind].name, param_index,
                      artifact->info.num_params - 1);
  if (artifact->kind == EXC_T_DIRECT)
    return exc_direct_pack(&artifact->wl, &artifact->conv, param_index, logical, count,
                           out_packed);
  return exc_ops_pack(&artifact->wl, artifact->kind, param_index, logical, count, out_packed);
}

/* ------------------------------------------------------------------------ */
/* Emit and load                                                            */
/* ------------------------------------------------------------------------ */

/* The artifact file: four lines naming what the artifact was built from.
 * There is no code in it: this backend rebuilds an artifact in microseconds,
 * so the file only has to prove that the package asks for the same
 * kernel. Layout hints are left out: they do not change the kernel. */
#define FILE_FORMAT "example_c artifact 1"
#define FILE_SUFFIX ".example_c"
#define FILE_MAX_BYTES (64 * 1024)
static const char *const line_names[4] = {"format", "template", "config", "workload"};

static void describe_tensor(text_t *t, const hetc_plugin_tensor_t *x) {
  text_printf(t, "[");
  for (int32_t i = 0; i < x->rank; ++i)
    text_printf(t, "%s%lld", i ? "," : "", (long long)x->shape[i]);
  text_printf(t, "]");
}

static void artifact_text(const hetc_plugin_artifact_t *a, text_t *t) {
  const hetc_plugin_workload_t *w = &a->wl;
  text_printf(t, FILE_FORMAT "\ntemplate %s %u\nconfig ", exc_templates[a->kind].name,
              exc_templates[a->kind].version);
  if (a->kind == EXC_T_DIRECT) {
    char config_text[160];
    exc_direct_config_text(&a->conv, config_text, sizeof(config_text));
    text_printf(t, "%s\n", config_text);
  } else {
    text_printf(t, "(no knobs)\n");
  }
  text_printf(t, "workload op=%d inputs=", w->op);
  for (int32_t i = 0; i < w->num_inputs; ++i) {
    if (i) text_printf(t, ";");
    describe_tensor(t, &w->inputs[i]);
  }
  text_printf(t, " output=");
  describe_tensor(t, &w->output);
  text_printf(t,
              " kernel=%d,%d strides=%d,%d padding=%d,%d,%d,%d dilation=%d,%d groups=%d "
              "ceil_mode=%d count_include_pad=%d axis=%d activation=%d binary=%d "
              "epilogue=%d,%d,%d\n",
              w->kernel[0], w->kernel[1], w->strides[0], w->strides[1], w->padding[0],
              w->padding[1], w->padding[2], w->padding[3], w->dilation[0], w->dilation[1],
              w->groups, w->ceil_mode, w->count_include_pad, w->axis, w->activation, w->binary,
              w->epilogue.has_bias, w->epilogue.has_residual, w->epilogue.activation);
}

/* <dir>/<prefix>.example_c in host memory (the caller frees it), or NULL. */
static char *file_path(const char *dir, const char *prefix) {
  text_t t = {0};
  text_printf(&t, "%s/%s" FILE_SUFFIX, dir, prefix);
  if (t.failed) text_free(&t);
  return t.data;
}

hetc_plugin_status_t exc_artifact_emit(hetc_plugin_instance_t *instance,
                                       const hetc_plugin_artifact_t *artifact,
                                       const char *dir, const char *prefix) {
  if (!instance || !artifact || !dir || !prefix)
    return exc_status(HETC_PLUGIN_STATUS_INVALID_ARGUMENT, EXC_NAME ": artifact_emit: null argument");
  char *path = file_path(dir, prefix);
  text_t t = {0};
  artifact_text(artifact, &t);
  hetc_plugin_status_t s = NULL;
  if (!path || t.failed) {
    s = exc_status(HETC_PLUGIN_STATUS_OUT_OF_MEMORY, EXC_NAME ": out of memory");
  } else {
    errno = 0;
    FILE *f = fopen(path, "wb");
    int error = f ? 0 : (errno ? errno : EIO);
    if (f && fwrite(t.data, 1, t.length, f) != t.length) error = errno ? errno : EIO;
    if (f && fclose(f) != 0 && !error) error = errno ? errno : EIO;
    if (error) {
      char e[128];
      s = exc_status(HETC_PLUGIN_STATUS_INTERNAL, EXC_NAME ": writing %s: %s", path,
                     error_text(error, e, sizeof(e)));
    }
  }
  text_free(&t);
  exc_host->free(path);
  return s;
}

/* A line of an artifact file fit for a message: at most 120 characters,
 * bytes outside printable ASCII shown as '?'. */
static void quote_line(const char *p, size_t n, char *buf, size_t size) {
  size_t o = 0;
  for (size_t i = 0; i < n && o + 4 < size; ++i) buf[o++] = p[i] >= 0x20 && p[i] < 0x7f ? p[i] : '?';
  if (o + 4 >= size && n > o) {
    memcpy(buf + o, "...", 3);
    o += 3;
  }
  buf[o] = '\0';
}

/* Compares the file's text with the expected one line by line, so that the
 * reason names what differs (config, workload, ...). NULL when equal. */
static hetc_plugin_status_t compare_text(const char *path, const char *got, size_t got_length,
                                         const char *want) {
  size_t g = 0, w = 0;
  for (int line = 0; line < 4; ++line) {
    const size_t wn = strcspn(want + w, "\n");
    size_t gn = 0;
    while (g + gn < got_length && got[g + gn] != '\n') ++gn;
    char have[128], need[128];
    if (g >= got_length)
      return exc_status(HETC_PLUGIN_STATUS_INVALID_ARGUMENT,
                        EXC_NAME ": %s ends before its %s line: truncated or not an example_c "
                        "artifact",
                        path, line_names[line]);
    if (gn != wn || memcmp(got + g, want + w, wn) != 0) {
      quote_line(got + g, gn, have, sizeof(have));
      quote_line(want + w, wn, need, sizeof(need));
      if (line == 0)
        return exc_status(HETC_PLUGIN_STATUS_INVALID_ARGUMENT,
                          EXC_NAME ": %s is not an example_c artifact of this format (first "
                          "line '%s', expected '%s')",
                          path, have, need);
      return exc_status(HETC_PLUGIN_STATUS_INVALID_ARGUMENT,
                        EXC_NAME ": %s was emitted for another %s: it has '%s', this load asks "
                        "for '%s'",
                        path, line_names[line], have, need);
    }
    if (g + gn >= got_length)
      return exc_status(HETC_PLUGIN_STATUS_INVALID_ARGUMENT,
                        EXC_NAME ": %s ends inside its %s line: truncated", path,
                        line_names[line]);
    g += gn + 1;
    w += wn + 1;
  }
  if (g != got_length)
    return exc_status(HETC_PLUGIN_STATUS_INVALID_ARGUMENT,
                      EXC_NAME ": %s has %llu bytes after its last line: corrupt", path,
                      (unsigned long long)(got_length - g));
  return NULL;
}

/* Reads the whole file at path into host memory (*out, NUL-terminated,
 * the caller frees it); files above FILE_MAX_BYTES are refused unread. */
static hetc_plugin_status_t read_file(const char *path, char **out, size_t *out_length) {
  *out = NULL;
  FILE *f = fopen(path, "rb");
  if (!f) {
    char e[128];
    return exc_status(HETC_PLUGIN_STATUS_INVALID_ARGUMENT, EXC_NAME ": cannot open %s: %s", path,
                      error_text(errno, e, sizeof(e)));
  }
  char *data = exc_host->alloc(FILE_MAX_BYTES + 2);
  if (!data) {
    fclose(f);
    return exc_status(HETC_PLUGIN_STATUS_OUT_OF_MEMORY, EXC_NAME ": out of memory");
  }
  const size_t n = fread(data, 1, FILE_MAX_BYTES + 1, f);
  const int failed = ferror(f);
  fclose(f);
  if (failed || n > FILE_MAX_BYTES) {
    exc_host->free(data);
    return exc_status(HETC_PLUGIN_STATUS_INVALID_ARGUMENT,
                      failed ? EXC_NAME ": reading %s failed"
                             : EXC_NAME ": %s is larger than any example_c artifact",
                      path);
  }
  data[n] = '\0';
  *out = data;
  *out_length = n;
  return NULL;
}

/* *out_artifact is the caller's, released with artifact_release. */
hetc_plugin_status_t exc_artifact_load(hetc_plugin_instance_t *instance,
                                       int32_t device_index,
                                       const hetc_plugin_workload_t *workload,
                                       int32_t template_index,
                                       const hetc_plugin_config_t *config, const char *dir,
                                       const char *prefix,
                                       hetc_plugin_artifact_t **out_artifact) {
  if (!out_artifact || !dir || !prefix)
    return exc_status(HETC_PLUGIN_STATUS_INVALID_ARGUMENT, EXC_NAME ": artifact_load: null argument");
  *out_artifact = NULL;
  hetc_plugin_artifact_t *a = NULL;
  hetc_plugin_status_t s = prepare(instance, device_index, workload, template_index, config, &a);
  if (s) return s;
  char *path = file_path(dir, prefix), *got = NULL;
  size_t got_length = 0;
  text_t want = {0};
  artifact_text(a, &want);
  if (!path || want.failed) s = exc_status(HETC_PLUGIN_STATUS_OUT_OF_MEMORY, EXC_NAME ": out of memory");
  if (!s) s = read_file(path, &got, &got_length);
  if (!s) s = compare_text(path, got, got_length, want.data);
  exc_host->free(got);
  text_free(&want);
  exc_host->free(path);
  if (s) {
    artifact_free(a);
    return s;
  }
  *out_artifact = a;
  return NULL;
}
