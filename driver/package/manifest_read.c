/* Reads manifest.json back into a plan. A package is user input: every
 * index, size and name is checked, and a defect is a BAD_INPUT naming the
 * file and the JSON path. */
#include <cjson/cJSON.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/fileio.h"
#include "common/json_input.h"
#include "graph/infer.h"
#include "package/package_files.h"
#include "package/plan_order.h"
#include "package/plan.h"

typedef struct reader_t {
  const char *file;
  char path[160];
  hetc_status_t status;
} reader_t;

static void bad(reader_t *r, const char *format, ...) HETC_PLUGIN_PRINTF(2, 3);
static void bad(reader_t *r, const char *format, ...) {
  if (r->status) return;
  char message[512];
  va_list args;
  va_start(args, format);
  vsnprintf(message, sizeof(message), format, args);
  va_end(args);
  r->status = hetc_status_new(HETC_STATUS_BAD_INPUT, "%s: %s: %s", r->file, r->path, message);
}

/* Sets r->path to the JSON pointer of `key` under `base`. A key is the
 * manifest's own text (a knob's name), so a pointer may not fit: it is then
 * cut and ends in "...", which only shortens an error message. */
static void at(reader_t *r, const char *base, const char *key) {
  const int length = snprintf(r->path, sizeof(r->path), "%s/%s", base, key);
  if (length < 0 || (size_t)length >= sizeof(r->path)) memcpy(r->path + sizeof(r->path) - 4, "...", 4);
}

static const cJSON *field(reader_t *r, const cJSON *object, const char *base, const char *key) {
  at(r, base, key);
  const cJSON *item = cJSON_IsObject(object) ? cJSON_GetObjectItemCaseSensitive(object, key) : NULL;
  if (!item) bad(r, "missing");
  return item;
}

static int64_t get_int(reader_t *r, const cJSON *object, const char *base, const char *key,
                       int64_t lo, int64_t hi) {
  const cJSON *item = field(r, object, base, key);
  if (r->status) return lo;
  if (!cJSON_IsNumber(item) || floor(item->valuedouble) != item->valuedouble ||
      item->valuedouble < (double)lo || item->valuedouble > (double)hi) {
    bad(r, "expected an integer in [%lld, %lld]", (long long)lo, (long long)hi);
    return lo;
  }
  return (int64_t)item->valuedouble;
}

static char *get_string(reader_t *r, const cJSON *object, const char *base, const char *key) {
  const cJSON *item = field(r, object, base, key);
  if (r->status) return NULL;
  if (!cJSON_IsString(item) || strlen(item->valuestring) > 4096) {
    bad(r, "expected a string");
    return NULL;
  }
  char *copy = strdup(item->valuestring);
  if (!copy) bad(r, "out of memory");
  return copy;
}

/* Reads an integer array of length lo..hi into out (capacity hi). */
static int32_t get_ints(reader_t *r, const cJSON *object, const char *base, const char *key,
                        int32_t lo, int32_t hi, int64_t min, int64_t max, int64_t *out) {
  const cJSON *item = field(r, object, base, key);
  if (r->status) return 0;
  int32_t n = cJSON_IsArray(item) ? cJSON_GetArraySize(item) : -1;
  if (n < lo || n > hi) {
    bad(r, "expected an array of %d to %d integers", lo, hi);
    return 0;
  }
  for (int32_t i = 0; i < n; ++i) {
    const cJSON *v = cJSON_GetArrayItem(item, i);
    if (!cJSON_IsNumber(v) || floor(v->valuedouble) != v->valuedouble ||
        v->valuedouble < (double)min || v->valuedouble > (double)max) {
      bad(r, "element %d: expected an integer in [%lld, %lld]", i, (long long)min, (long long)max);
      return 0;
    }
    out[i] = (int64_t)v->valuedouble;
  }
  return n;
}

static void get_i32s(reader_t *r, const cJSON *object, const char *base, const char *key, int32_t n,
                     int64_t min, int64_t max, int32_t *out) {
  int64_t values[8] = {0};
  get_ints(r, object, base, key, n, n, min, max, values);
  for (int32_t i = 0; i < n; ++i) out[i] = (int32_t)values[i];
}

static void get_tensor(reader_t *r, const cJSON *object, const char *base, hetc_plugin_tensor_t *t) {
  memset(t, 0, sizeof(*t));
  t->dtype = HETC_PLUGIN_DTYPE_FLOAT32;
  t->rank = get_ints(r, object, base, "shape", 1, HETC_PLUGIN_MAX_RANK, 1, HETC_MAX_TENSOR_ELEMENTS,
                     t->shape);
  t->layout.kind = (int32_t)get_int(r, object, base, "layout", 0, 2);
  t->layout.block = (int32_t)get_int(r, object, base, "block", 0, 4096);
  if (r->status) return;
  at(r, base, "shape");
  int64_t count = 1;
  for (int32_t i = 0; i < t->rank; ++i) {
    if ((count *= t->shape[i]) > HETC_MAX_TENSOR_ELEMENTS) {
      bad(r, "more than 2^31 elements");
      break;
    }
  }
  at(r, base, "layout");
  if (t->layout.kind != HETC_PLUGIN_LAYOUT_ROW_MAJOR && t->rank != 4) bad(r, "a blocked layout needs rank 4");
  if ((t->layout.kind == HETC_PLUGIN_LAYOUT_NCHWC) != (t->layout.block > 0)) bad(r, "block does not match the layout");
}

static uint64_t tensor_bytes(const hetc_plugin_tensor_t *t) {
  uint64_t count = 1;
  for (int32_t i = 0; i < t->rank; ++i) {
    int64_t d = t->shape[i];
    if (i == 1 && t->layout.kind == HETC_PLUGIN_LAYOUT_NCHWC)
      d = (d + t->layout.block - 1) / t->layout.block * t->layout.block;
    count *= (uint64_t)d;
  }
  return count * sizeof(float);
}

static int same_logical_shape(const hetc_plugin_tensor_t *a, const hetc_plugin_tensor_t *b) {
  if (a->rank != b->rank) return 0;
  for (int32_t i = 0; i < a->rank; ++i)
    if (a->shape[i] != b->shape[i]) return 0;
  return 1;
}

/* A resize's parameters: {"mode_coordinates_rounding": [3 ints],
 * "scales": [2 positive numbers]}. */
static void get_resize(reader_t *r, const cJSON *workload, const char *base, hetc_plugin_resize_params_t *p) {
  char sub[192];
  snprintf(sub, sizeof(sub), "%s/resize", base);
  const cJSON *object = field(r, workload, base, "resize");
  if (r->status) return;
  int64_t choices[3] = {0};
  if (get_ints(r, object, sub, "mode_coordinates_rounding", 3, 3, 0, HETC_PLUGIN_RESIZE_HALF_PIXEL_SYMMETRIC, choices) !=
      3)
    return;
  p->mode = (int32_t)choices[0], p->coordinates = (int32_t)choices[1], p->rounding = (int32_t)choices[2];
  if (p->mode > HETC_PLUGIN_RESIZE_LINEAR || p->rounding > HETC_PLUGIN_RESIZE_CEIL) {
    bad(r, "mode %d or rounding %d is not a resize's", (int)p->mode, (int)p->rounding);
    return;
  }
  const cJSON *scales = field(r, object, sub, "scales");
  if (r->status) return;
  for (int32_t k = 0; k < 2; ++k) {
    const cJSON *v = cJSON_IsArray(scales) && cJSON_GetArraySize(scales) == 2 ? cJSON_GetArrayItem(scales, k) : NULL;
    if (!cJSON_IsNumber(v) || !(v->valuedouble > 0) || !isfinite(v->valuedouble)) {
      bad(r, "expected 2 positive numbers");
      return;
    }
    p->scales[k] = v->valuedouble;
  }
}

/* A normalize's parameters: {"axis_num_axes_groups_affine": [4 ints],
 * "epsilon": a positive number}, checked against the input's shape. */
static void get_normalize(reader_t *r, const cJSON *workload, const char *base, hetc_plugin_workload_t *w) {
  char sub[192];
  snprintf(sub, sizeof(sub), "%s/normalize", base);
  const cJSON *object = field(r, workload, base, "normalize");
  if (r->status) return;
  int64_t ints[4] = {0};
  if (get_ints(r, object, sub, "axis_num_axes_groups_affine", 4, 4, 0, 1 << 20, ints) != 4) return;
  hetc_plugin_normalize_params_t *p = &w->params.normalize;
  p->axis = (int32_t)ints[0], p->num_axes = (int32_t)ints[1], p->groups = (int32_t)ints[2];
  p->affine = (int32_t)ints[3];
  const int32_t rank = w->inputs[0].rank;
  if (p->num_axes < 1 || p->axis + p->num_axes > rank || p->groups < 1 || p->affine > 1 ||
      w->inputs[0].shape[p->axis] % p->groups != 0) {
    bad(r, "axis %d, %d axes, %d groups or affine %d do not fit an input of rank %d", (int)p->axis,
        (int)p->num_axes, (int)p->groups, (int)p->affine, (int)rank);
    return;
  }
  const cJSON *epsilon = field(r, object, sub, "epsilon");
  if (r->status) return;
  if (!cJSON_IsNumber(epsilon) || !(epsilon->valuedouble > 0) || !isfinite(epsilon->valuedouble)) {
    bad(r, "expected a positive number");
    return;
  }
  p->epsilon = epsilon->valuedouble;
}

static void get_workload(reader_t *r, const cJSON *object, const char *base, hetc_plan_step_t *s) {
  hetc_plugin_workload_t *w = &s->workload;
  char sub[160];
  w->op = (int32_t)get_int(r, object, base, "op", 1, HETC_PLUGIN_OP_COUNT_ - 1);
  const cJSON *inputs = field(r, object, base, "inputs");
  int32_t n = cJSON_IsArray(inputs) ? cJSON_GetArraySize(inputs) : -1;
  if (!r->status && (n < 1 || n > HETC_MAX_NODE_INPUTS)) bad(r, "expected 1 to %d input tensors", HETC_MAX_NODE_INPUTS);
  if (r->status) return;
  s->input_types = calloc((size_t)n, sizeof(hetc_plugin_tensor_t));
  if (!s->input_types) {
    bad(r, "out of memory");
    return;
  }
  for (int32_t i = 0; i < n && !r->status; ++i) {
    snprintf(sub, sizeof(sub), "%s/inputs/%d", base, i);
    get_tensor(r, cJSON_GetArrayItem(inputs, i), sub, &s->input_types[i]);
  }
  w->num_inputs = n;
  w->inputs = s->input_types;
  snprintf(sub, sizeof(sub), "%s/output", base);
  get_tensor(r, cJSON_GetObjectItemCaseSensitive(object, "output"), sub, &w->output);
  get_i32s(r, object, base, "kernel", 2, 0, 4096, w->kernel);
  get_i32s(r, object, base, "strides", 2, 0, 4096, w->strides);
  get_i32s(r, object, base, "padding", 4, 0, 4096, w->padding);
  get_i32s(r, object, base, "dilation", 2, 0, 4096, w->dilation);
  w->groups = (int32_t)get_int(r, object, base, "groups", 0, 1 << 20);
  w->ceil_mode = (int32_t)get_int(r, object, base, "ceil_mode", 0, 1);
  w->count_include_pad = (int32_t)get_int(r, object, base, "count_include_pad", 0, 1);
  /* A transpose's axis packs its permutation, three bits a dim. */
  const int is_transpose = w->op == HETC_PLUGIN_OP_TRANSPOSE;
  w->axis = (int32_t)get_int(r, object, base, "axis", 0,
                             is_transpose ? (1 << (3 * HETC_PLUGIN_MAX_RANK)) - 1 : HETC_PLUGIN_MAX_RANK - 1);
  w->activation = (int32_t)get_int(r, object, base, "activation", 0, HETC_PLUGIN_ACT_ERF);
  w->binary = (int32_t)get_int(r, object, base, "binary", 0, HETC_PLUGIN_BINARY_DIV);
  int32_t epilogue[3];
  get_i32s(r, object, base, "epilogue", 3, 0, HETC_PLUGIN_ACT_ERF, epilogue);
  w->epilogue.has_bias = epilogue[0] != 0;
  w->epilogue.has_residual = epilogue[1] != 0;
  w->epilogue.activation = epilogue[2];
  if (!r->status && !HETC_PLUGIN_ACT_IS_EPILOGUE(epilogue[2])) {
    at(r, base, "epilogue");
    bad(r, "activation %d is not an epilogue's", (int)epilogue[2]);
  }
  if (w->op == HETC_PLUGIN_OP_RESIZE && !r->status) get_resize(r, object, base, &w->params.resize);
  if (w->op == HETC_PLUGIN_OP_NORMALIZE && !r->status) get_normalize(r, object, base, w);
}

static void get_config(reader_t *r, const cJSON *config, const char *base, hetc_plan_step_t *s) {
  at(r, base, "config");
  if (!cJSON_IsObject(config)) {
    bad(r, "expected an object");
    return;
  }
  int32_t n = cJSON_GetArraySize(config);
  if (n > 64) {
    bad(r, "more than 64 knobs");
    return;
  }
  s->knob_names = calloc((size_t)n + 1, sizeof(char *));
  s->knob_counts = calloc((size_t)n + 1, sizeof(int32_t));
  s->knob_values = calloc((size_t)n + 1, sizeof(int64_t *));
  if (!s->knob_names || !s->knob_counts || !s->knob_values) {
    bad(r, "out of memory");
    return;
  }
  char sub[128];
  snprintf(sub, sizeof(sub), "%s/config", base);
  const cJSON *knob;
  cJSON_ArrayForEach(knob, config) {
    int32_t k = s->num_knobs;
    s->knob_values[k] = calloc(16, sizeof(int64_t));
    s->knob_names[k] = strdup(knob->string);
    ++s->num_knobs;
    if (!s->knob_values[k] || !s->knob_names[k]) {
      bad(r, "out of memory");
      return;
    }
    s->knob_counts[k] = get_ints(r, config, sub, knob->string, 1, 16, INT64_MIN / 2, INT64_MAX / 2,
                                 s->knob_values[k]);
    if (r->status) return;
  }
}

static void read_step(reader_t *r, const cJSON *object, int32_t index, hetc_plan_t *plan) {
  hetc_plan_step_t *s = &plan->steps[index];
  char base[48];
  snprintf(base, sizeof(base), "/steps/%d", index);
  char *kind = get_string(r, object, base, "kind");
  if (kind && !strcmp(kind, "kernel")) {
    s->kind = HETC_PLAN_STEP_KERNEL;
  } else if (kind && !strcmp(kind, "copy")) {
    s->kind = HETC_PLAN_STEP_COPY;
  } else {
    bad(r, "expected \"kernel\" or \"copy\"");
  }
  free(kind);
  s->name = get_string(r, object, base, "name");
  s->device = (int32_t)get_int(r, object, base, "device", 0, plan->num_devices - 1);
  int64_t inputs[HETC_MAX_NODE_INPUTS];
  s->num_inputs = get_ints(r, object, base, "inputs", 1, HETC_MAX_NODE_INPUTS, 0,
                           plan->num_values - 1, inputs);
  s->inputs = calloc((size_t)s->num_inputs + 1, sizeof(int32_t));
  if (!s->inputs) bad(r, "out of memory");
  for (int32_t i = 0; s->inputs && i < s->num_inputs; ++i) s->inputs[i] = (int32_t)inputs[i];
  s->output = (int32_t)get_int(r, object, base, "output", 0, plan->num_values - 1);
  if (r->status) return;
  const hetc_plan_value_t *out = &plan->values[s->output];
  at(r, base, "output");
  if (out->device != s->device) bad(r, "value %d lives on device %d, the step runs on %d", s->output, out->device, s->device);
  /* Kernels may assume their output aliases no input (plugin.h); values
   * in one slot at disjoint offsets (a concat's inputs) do not alias. */
  at(r, base, "inputs");
  for (int32_t i = 0; i < s->num_inputs; ++i) {
    const hetc_plan_value_t *in = &plan->values[s->inputs[i]];
    if (in->slot == out->slot && in->offset < out->offset + out->bytes && out->offset < in->offset + in->bytes)
      bad(r, "input %d shares its buffer slot with the output", i);
  }
  if (s->kind == HETC_PLAN_STEP_COPY) {
    const hetc_plan_value_t *in = &plan->values[s->inputs[0]];
    if (s->num_inputs != 1 || !same_logical_shape(&in->type, &out->type) ||
        !hetc_layout_equal(in->type.layout, out->type.layout))
      bad(r, "a copy reads one value of its output's shape and layout");
    return;
  }
  s->template_name = get_string(r, object, base, "template");
  s->template_index = (int32_t)get_int(r, object, base, "template_index", 0, 1 << 20);
  s->artifact_prefix = get_string(r, object, base, "artifact");
  at(r, base, "artifact");
  if (s->artifact_prefix && (strchr(s->artifact_prefix, '/') || s->artifact_prefix[0] == '.' || !s->artifact_prefix[0]))
    bad(r, "expected a plain file prefix");
  s->workspace_bytes = (uint64_t)get_int(r, object, base, "workspace_bytes", 0, INT64_C(1) << 40);
  char sub[64]; /* "/steps/N/workload" */
  snprintf(sub, sizeof(sub), "%s/workload", base);
  get_workload(r, field(r, object, base, "workload"), sub, s);
  get_config(r, field(r, object, base, "config"), base, s);
  const cJSON *params = field(r, object, base, "params");
  int32_t n = cJSON_IsArray(params) ? cJSON_GetArraySize(params) : -1;
  if (!r->status && (n < 0 || n > 8)) bad(r, "expected an array of at most 8 params");
  if (r->status) return;
  s->params = calloc((size_t)n + 1, sizeof(hetc_plan_param_t));
  s->num_params = n;
  for (int32_t p = 0; p < n && !r->status && s->params; ++p) {
    const cJSON *pair = cJSON_GetArrayItem(params, p);
    snprintf(r->path, sizeof(r->path), "%s/params/%d", base, p);
    const cJSON *offset = cJSON_GetArrayItem(pair, 0), *bytes = cJSON_GetArrayItem(pair, 1);
    if (!cJSON_IsArray(pair) || cJSON_GetArraySize(pair) != 2 || !cJSON_IsNumber(offset) ||
        !cJSON_IsNumber(bytes) || offset->valuedouble < 0 || bytes->valuedouble < 0 ||
        floor(offset->valuedouble) != offset->valuedouble ||
        floor(bytes->valuedouble) != bytes->valuedouble ||
        offset->valuedouble > (double)plan->weights_bytes || bytes->valuedouble > (double)plan->weights_bytes) {
      bad(r, "expected [offset, bytes] inside weights.bin");
      break;
    }
    s->params[p].offset = (uint64_t)offset->valuedouble;
    s->params[p].bytes = (uint64_t)bytes->valuedouble;
    if (s->params[p].offset % 64 || s->params[p].bytes > plan->weights_bytes - s->params[p].offset)
      bad(r, "param lies outside weights.bin");
  }
  if (!s->params) bad(r, "out of memory");
  if (r->status) return;
  at(r, base, "workload");
  if (s->workload.num_inputs != s->num_inputs) bad(r, "workload has %d inputs, the step %d", s->workload.num_inputs, s->num_inputs);
  for (int32_t i = 0; i < s->num_inputs && !r->status; ++i) {
    const hetc_plan_value_t *in = &plan->values[s->inputs[i]];
    if (in->device != s->device) bad(r, "input %d lives on another device", i);
    if (!same_logical_shape(&s->input_types[i], &in->type)) bad(r, "input %d does not have its value's shape", i);
  }
  if (!r->status && !same_logical_shape(&s->workload.output, &out->type)) bad(r, "output does not have its value's shape");
}

/* Version 3's `files`: every file of the package but the manifest, with
 * weights.bin among them at the size `weights_bytes` says. */
static void read_files(reader_t *r, const cJSON *root, hetc_plan_t *plan) {
  const cJSON *files = field(r, root, "", "files");
  if (r->status) return;
  if (!cJSON_IsArray(files) || cJSON_GetArraySize(files) < 1 || cJSON_GetArraySize(files) > HETC_PACKAGE_MAX_FILES) {
    bad(r, "expected an array of 1 to %d files", HETC_PACKAGE_MAX_FILES);
    return;
  }
  const int32_t count = cJSON_GetArraySize(files);
  if (!(plan->files = calloc((size_t)count, sizeof(hetc_plan_file_t)))) {
    bad(r, "out of memory");
    return;
  }
  int weights_listed = 0;
  char base[48];
  const cJSON *item;
  int32_t i = 0;
  cJSON_ArrayForEach(item, files) {
    snprintf(base, sizeof(base), "/files/%d", i);
    hetc_plan_file_t *file = &plan->files[i++];
    file->path = get_string(r, item, base, "path");
    plan->num_files = i;
    file->bytes = (uint64_t)get_int(r, item, base, "bytes", 0, INT64_C(1) << 40);
    char *hash = get_string(r, item, base, "fnv1a64");
    char *end = NULL;
    if (hash) file->fnv1a64 = strtoull(hash, &end, 16);
    if (!r->status && (strlen(hash) != 16 || *end)) bad(r, "expected 16 hexadecimal digits");
    free(hash);
    if (r->status) return;
    at(r, base, "path");
    if (!hetc_package_file_name_ok(file->path)) bad(r, "'%s' is not a file a package holds", file->path);
    for (int32_t j = 0; j + 1 < i && !r->status; ++j)
      if (!strcmp(plan->files[j].path, file->path)) bad(r, "'%s' is listed twice", file->path);
    if (!r->status && !strcmp(file->path, HETC_PACKAGE_WEIGHTS)) {
      weights_listed = 1;
      at(r, base, "bytes");
      if (file->bytes != plan->weights_bytes)
        bad(r, "%llu, but weights_bytes says %llu", (unsigned long long)file->bytes,
            (unsigned long long)plan->weights_bytes);
    }
    if (r->status) return;
  }
  at(r, "", "files");
  if (!weights_listed) bad(r, "does not list %s", HETC_PACKAGE_WEIGHTS);
}

static hetc_status_t read_plan(reader_t *r, const cJSON *root, hetc_plan_t *plan) {
  char *format = get_string(r, root, "", "format");
  if (format && strcmp(format, HETC_PACKAGE_FORMAT)) bad(r, "expected \"%s\"", HETC_PACKAGE_FORMAT);
  free(format);
  /* Version 1 packages have no value offsets; they read as 0. */
  const int64_t version = get_int(r, root, "", "version", 1, HETC_PACKAGE_VERSION);
  plan->model_name = get_string(r, root, "", "model");
  plan->weights_bytes = (uint64_t)get_int(r, root, "", "weights_bytes", 0, INT64_C(1) << 40);
  if (r->status) return r->status;
  const char *lists[] = {"devices", "buffer_slots", "values", "inputs", "outputs", "steps"};
  const cJSON *arrays[6];
  for (int l = 0; l < 6; ++l) {
    arrays[l] = field(r, root, "", lists[l]);
    if (!r->status && (!cJSON_IsArray(arrays[l]) || cJSON_GetArraySize(arrays[l]) > 1000000)) bad(r, "expected an array");
    if (!r->status && l != 5 && cJSON_GetArraySize(arrays[l]) < 1) bad(r, "expected a non-empty array");
  }
  if (r->status) return r->status;
  plan->num_devices = cJSON_GetArraySize(arrays[0]);
  plan->num_slots = cJSON_GetArraySize(arrays[1]);
  plan->num_values = cJSON_GetArraySize(arrays[2]);
  plan->num_inputs = cJSON_GetArraySize(arrays[3]);
  plan->num_outputs = cJSON_GetArraySize(arrays[4]);
  plan->num_steps = cJSON_GetArraySize(arrays[5]);
  plan->devices = calloc((size_t)plan->num_devices + 1, sizeof(hetc_plan_device_t));
  plan->slots = calloc((size_t)plan->num_slots + 1, sizeof(hetc_plan_slot_t));
  plan->values = calloc((size_t)plan->num_values + 1, sizeof(hetc_plan_value_t));
  plan->inputs = calloc((size_t)plan->num_inputs + 1, sizeof(hetc_plan_io_t));
  plan->outputs = calloc((size_t)plan->num_outputs + 1, sizeof(hetc_plan_io_t));
  plan->steps = calloc((size_t)plan->num_steps + 1, sizeof(hetc_plan_step_t));
  if (!plan->devices || !plan->slots || !plan->values || !plan->inputs || !plan->outputs || !plan->steps) {
    bad(r, "out of memory");
    return r->status;
  }
  char base[48];
  for (int32_t i = 0; i < plan->num_devices && !r->status; ++i) {
    const cJSON *d = cJSON_GetArrayItem(arrays[0], i);
    snprintf(base, sizeof(base), "/devices/%d", i);
    plan->devices[i].target = get_string(r, d, base, "target");
    plan->devices[i].plugin_version = get_string(r, d, base, "plugin_version");
    plan->devices[i].device_index = (int32_t)get_int(r, d, base, "device_index", 0, 1024);
    plan->devices[i].fingerprint = get_string(r, d, base, "fingerprint");
  }
  for (int32_t i = 0; i < plan->num_slots && !r->status; ++i) {
    const cJSON *pair = cJSON_GetArrayItem(arrays[1], i);
    const cJSON *device = cJSON_GetArrayItem(pair, 0), *bytes = cJSON_GetArrayItem(pair, 1);
    snprintf(r->path, sizeof(r->path), "/buffer_slots/%d", i);
    if (!cJSON_IsArray(pair) || cJSON_GetArraySize(pair) != 2 || !cJSON_IsNumber(device) ||
        !cJSON_IsNumber(bytes) || device->valuedouble < 0 || device->valuedouble >= plan->num_devices ||
        floor(device->valuedouble) != device->valuedouble || bytes->valuedouble < 0 ||
        bytes->valuedouble > (double)(INT64_C(1) << 40) || floor(bytes->valuedouble) != bytes->valuedouble) {
      bad(r, "expected [device, bytes] with an existing device");
      break;
    }
    plan->slots[i].device = (int32_t)device->valuedouble;
    plan->slots[i].bytes = (uint64_t)bytes->valuedouble;
  }
  for (int32_t i = 0; i < plan->num_values && !r->status; ++i) {
    const cJSON *v = cJSON_GetArrayItem(arrays[2], i);
    hetc_plan_value_t *value = &plan->values[i];
    snprintf(base, sizeof(base), "/values/%d", i);
    get_tensor(r, v, base, &value->type);
    value->name = get_string(r, v, base, "name");
    value->device = (int32_t)get_int(r, v, base, "device", 0, plan->num_devices - 1);
    value->slot = (int32_t)get_int(r, v, base, "slot", 0, plan->num_slots - 1);
    value->bytes = (uint64_t)get_int(r, v, base, "bytes", 0, INT64_C(1) << 40);
    if (version >= 2) value->offset = (uint64_t)get_int(r, v, base, "offset", 0, INT64_C(1) << 40);
    value->part_of = version >= 4 && cJSON_GetObjectItemCaseSensitive(v, "part_of")
                         ? (int32_t)get_int(r, v, base, "part_of", 0, plan->num_values - 1)
                         : -1;
    if (r->status) break;
    at(r, base, "offset");
    if (value->offset % 64 != 0) bad(r, "%llu is not a multiple of 64", (unsigned long long)value->offset);
    at(r, base, "bytes");
    if (value->bytes != tensor_bytes(&value->type)) bad(r, "does not match the shape and layout");
    if (plan->slots[value->slot].device != value->device ||
        plan->slots[value->slot].bytes < value->offset + value->bytes)
      bad(r, "slot %d cannot hold it", value->slot);
  }
  for (int32_t i = 0; i < plan->num_values && !r->status; ++i) {
    const hetc_plan_value_t *part = &plan->values[i], *whole = NULL;
    if (part->part_of < 0) continue;
    whole = &plan->values[part->part_of];
    snprintf(base, sizeof(base), "/values/%d", i);
    at(r, base, "part_of");
    if (part->part_of == i || whole->slot != part->slot || part->offset < whole->offset ||
        part->offset + part->bytes > whole->offset + whole->bytes)
      bad(r, "value %d does not hold this value's bytes", part->part_of);
  }
  hetc_plan_io_t *io_lists[2] = {plan->inputs, plan->outputs};
  int32_t io_counts[2] = {plan->num_inputs, plan->num_outputs};
  for (int l = 0; l < 2 && !r->status; ++l) {
    for (int32_t i = 0; i < io_counts[l] && !r->status; ++i) {
      snprintf(base, sizeof(base), "/%s/%d", lists[3 + l], i);
      const cJSON *item = cJSON_GetArrayItem(arrays[3 + l], i);
      io_lists[l][i].name = get_string(r, item, base, "name");
      io_lists[l][i].value = (int32_t)get_int(r, item, base, "value", 0, plan->num_values - 1);
      if (!r->status && plan->values[io_lists[l][i].value].type.layout.kind != HETC_PLUGIN_LAYOUT_ROW_MAJOR)
        bad(r, "graph inputs and outputs must be row-major");
    }
  }
  for (int32_t i = 0; i < plan->num_steps && !r->status; ++i)
    read_step(r, cJSON_GetArrayItem(arrays[5], i), i, plan);
  if (version >= 3 && !r->status) read_files(r, root, plan);
  if (!r->status) {
    hetc_status_t order = hetc_plan_check_order(plan);
    if (order) r->status = hetc_status_annotate(order, "%s", r->file);
  }
  return r->status;
}

hetc_status_t hetc_plan_read_manifest(const char *dir, hetc_plan_t **out_plan) {
  char *path = hetc_path_join(dir, HETC_PACKAGE_MANIFEST);
  if (!path) return hetc_status_new(HETC_STATUS_OUT_OF_MEMORY, "manifest");
  char *text = NULL;
  size_t length = 0;
  hetc_status_t status = hetc_file_read_all(path, HETC_PACKAGE_MAX_MANIFEST_BYTES, &text, &length);
  if (status) {
    free(path);
    return hetc_status_annotate(status, "%s is not a hetc package", dir);
  }
  reader_t r = {path, "/", NULL};
  const char *end = NULL;
  cJSON *root = cJSON_ParseWithLengthOpts(text, length, &end, 0);
  hetc_plan_t *plan = calloc(1, sizeof(*plan));
  size_t offset = 0;
  int is_name = 0;
  const char *why_not_text = NULL;
  if (!root) {
    const char *error_at = cJSON_GetErrorPtr();
    offset = error_at && error_at >= text && error_at <= text + length ? (size_t)(error_at - text) : 0;
    why_not_text = hetc_json_syntax_error(text, length, offset);
  } else if (hetc_json_find_escaped_nul(text, length, &offset)) {
    why_not_text = "\\u0000 (a NUL character) is not allowed in a string";
  }
  if (why_not_text) {
    int line, column;
    hetc_text_position(text, length, offset, &line, &column);
    r.status = hetc_status_new(HETC_STATUS_BAD_INPUT, "%s: line %d, column %d: %s", path, line, column, why_not_text);
  } else if (hetc_json_find_invalid_utf8(root, HETC_JSON_PATH_POINTER, r.path, sizeof(r.path), &is_name, &offset)) {
    /* The model name and value names go back into JSON (hetc verify, the
     * round trip of a package): bytes that are not UTF-8 would break it. */
    bad(&r, "%s (at byte %zu)", is_name ? "a member name is not valid UTF-8" : "not valid UTF-8", offset + 1);
  } else if (!plan) {
    bad(&r, "out of memory");
  } else {
    read_plan(&r, root, plan);
  }
  cJSON_Delete(root);
  free(text);
  free(path);
  if (r.status) {
    hetc_plan_free(plan);
    return r.status;
  }
  *out_plan = plan;
  return NULL;
}
