/* Templates, their knob spaces and config validation.
 *
 * One description (vec_space_t) per (workload, template) drives all three
 * uses: declaring the space to the host, choosing the default and checking
 * a config in build(), so they cannot drift apart. */
#include <stdio.h>
#include <string.h>

#include "vec.h"

static const struct {
  const char *name;
  uint32_t version;
} templates[VEC_T_COUNT_] = {
    [VEC_T_CONV_NCHW] = {"vec_conv2d_nchw", 1},
    [VEC_T_CONV_NCHWC] = {"vec_conv2d_nchwc", 1},
    [VEC_T_DENSE] = {"vec_dense", 1},
    [VEC_T_POOL] = {"vec_pool2d", 1},
    [VEC_T_GLOBAL_POOL] = {"vec_global_avg_pool2d", 1},
    [VEC_T_ELEMENTWISE] = {"vec_elementwise", 1},
    [VEC_T_SOFTMAX] = {"vec_softmax", 1},
    [VEC_T_CONCAT] = {"vec_concat", 1},
    [VEC_T_LAYOUT] = {"vec_layout_transform", 1},
    [VEC_T_BIAS_ADD] = {"vec_bias_add", 1},
    [VEC_T_TRANSPOSE] = {"vec_transpose", 1},
    [VEC_T_LOG_SOFTMAX] = {"vec_log_softmax", 1},
    [VEC_T_RESIZE] = {"vec_resize", 1},
    [VEC_T_NORMALIZE] = {"vec_normalize", 1},
    [VEC_T_MATMUL] = {"vec_matmul", 1},
};

const char *vec_template_name(int kind) {
  return kind >= 0 && kind < VEC_T_COUNT_ ? templates[kind].name : NULL;
}

uint32_t vec_template_version(int kind) {
  return kind >= 0 && kind < VEC_T_COUNT_ ? templates[kind].version : 0;
}

static int op_template(int32_t op) {
  switch (op) {
    case HETC_PLUGIN_OP_CONV2D: return VEC_T_CONV_NCHW;
    case HETC_PLUGIN_OP_DENSE: return VEC_T_DENSE;
    case HETC_PLUGIN_OP_MAX_POOL2D:
    case HETC_PLUGIN_OP_AVG_POOL2D: return VEC_T_POOL;
    case HETC_PLUGIN_OP_GLOBAL_AVG_POOL2D: return VEC_T_GLOBAL_POOL;
    case HETC_PLUGIN_OP_ELEMENTWISE: return VEC_T_ELEMENTWISE;
    case HETC_PLUGIN_OP_SOFTMAX: return VEC_T_SOFTMAX;
    case HETC_PLUGIN_OP_CONCAT: return VEC_T_CONCAT;
    case HETC_PLUGIN_OP_LAYOUT_TRANSFORM: return VEC_T_LAYOUT;
    case HETC_PLUGIN_OP_BIAS_ADD: return VEC_T_BIAS_ADD;
    case HETC_PLUGIN_OP_TRANSPOSE: return VEC_T_TRANSPOSE;
    case HETC_PLUGIN_OP_LOG_SOFTMAX: return VEC_T_LOG_SOFTMAX;
    case HETC_PLUGIN_OP_RESIZE: return VEC_T_RESIZE;
    case HETC_PLUGIN_OP_NORMALIZE: return VEC_T_NORMALIZE;
    case HETC_PLUGIN_OP_MATMUL: return VEC_T_MATMUL;
    default: return -1;
  }
}

int32_t vec_template_count(const hetc_plugin_workload_t *wl) {
  if (hpc_workload_check(wl, NULL, 0) != 0) return 0;
  if (wl->op == HETC_PLUGIN_OP_CONV2D)
    return hpc_conv_nchwc_applicable(wl) ? 2 : 1;
  /* The kit's check accepts every op of the ABI, also one this plugin has
   * no template for (a newer ABI's): counting it would offer a template
   * without a name or a kernel. */
  return op_template(wl->op) >= 0 ? 1 : 0;
}

int vec_template_kind(const hetc_plugin_workload_t *wl, int32_t index) {
  int32_t count = vec_template_count(wl);
  if (index < 0 || index >= count) return -1;
  /* Template 0 is what an untuned model gets: NCHWc wherever it applies,
   * the NCHW baseline otherwise. */
  if (wl->op == HETC_PLUGIN_OP_CONV2D)
    return count == 2 && index == 0 ? VEC_T_CONV_NCHWC : VEC_T_CONV_NCHW;
  return op_template(wl->op);
}

/* ------------------------------------------------------------------------ */

static vec_knob_spec_t *add_knob(vec_space_t *s, const char *name,
                                 int32_t kind, size_t offset) {
  vec_knob_spec_t *k = &s->knobs[s->num_knobs++];
  memset(k, 0, sizeof(*k));
  k->name = name;
  k->kind = kind;
  k->offset = offset;
  return k;
}

static void add_value(vec_knob_spec_t *k, int64_t value) {
  k->values[k->num_values++] = value;
}

static void add_permutation(vec_knob_spec_t *k, int32_t num_axes,
                            const int32_t *axes) {
  k->num_axes = num_axes;
  memcpy(k->permutations[k->num_values], axes, sizeof(int32_t) * (size_t)num_axes);
  k->values[k->num_values] = k->num_values;
  k->num_values++;
}

/* Channel block candidates: 8 .. 256 (powers of two), those not above the
 * channel count rounded up to 8. Default: the largest not above 64. */
static void add_tile_knob(vec_space_t *s, const char *name, size_t offset,
                          int64_t channels) {
  vec_knob_spec_t *k = add_knob(s, name, VEC_KNOB_OPTION, offset);
  int64_t limit = (channels + 7) / 8 * 8;
  for (int64_t b = 8; b <= 256 && b <= limit; b *= 2) {
    add_value(k, b);
    if (b <= 64) k->default_value = b;
  }
}

static void add_parallel_knob(vec_space_t *s, int64_t outer_work) {
  vec_knob_spec_t *k = add_knob(s, "parallel", VEC_KNOB_OPTION,
                                offsetof(vec_config_t, parallel));
  add_value(k, 0);
  add_value(k, 1);
  /* Enough coarse iterations for any core count we expect: keep the
   * coarse axis, else also split OH. */
  k->default_value = outer_work >= 64 ? 0 : 1;
}

static void add_unroll_knob(vec_space_t *s, int64_t kw, int64_t dflt) {
  vec_knob_spec_t *k = add_knob(s, "unroll_kw", VEC_KNOB_ANNOTATE,
                                offsetof(vec_config_t, unroll_kw));
  add_value(k, 0);
  /* Unrolling a one-tap loop changes nothing: no knob value for it. */
  if (kw > 1) add_value(k, 1);
  k->default_value = kw > 1 ? dflt : 0;
}

void vec_space_describe(const hetc_plugin_workload_t *wl, int kind,
                        vec_space_t *out) {
  memset(out, 0, sizeof(*out));
  if (kind == VEC_T_CONV_NCHW) {
    const int64_t N = wl->inputs[0].shape[0], K = wl->output.shape[1];
    /* Loop axes below the output row: ow, c, kh, kw. */
    static const int32_t row[4] = {1, 2, 3, 0};    /* c, kh, kw, ow */
    static const int32_t canon[4] = {0, 1, 2, 3};  /* ow, c, kh, kw */
    vec_knob_spec_t *k = add_knob(out, "reorder", VEC_KNOB_REORDER,
                                  offsetof(vec_config_t, reorder));
    add_permutation(k, 4, row);
    add_permutation(k, 4, canon);
    k->default_value = 0;
    add_parallel_knob(out, N * K);
    add_unroll_knob(out, wl->kernel[1], 0);
  } else if (kind == VEC_T_CONV_NCHWC) {
    const int64_t N = wl->inputs[0].shape[0], C = wl->inputs[0].shape[1];
    const int64_t K = wl->output.shape[1];
    add_tile_knob(out, "tile_ic", offsetof(vec_config_t, tile_ic), C);
    add_tile_knob(out, "tile_oc", offsetof(vec_config_t, tile_oc), K);
    vec_knob_spec_t *k = add_knob(out, "reorder", VEC_KNOB_REORDER,
                                  offsetof(vec_config_t, reorder));
    if (hetc_kit_conv_is_depthwise(wl)) {
      /* Axes kh, kw, ow around the channel-block loop. */
      static const int32_t taps_outer[3] = {0, 1, 2}; /* kh, kw, ow */
      static const int32_t pixel_outer[3] = {2, 0, 1}; /* ow, kh, kw */
      add_permutation(k, 3, taps_outer);
      add_permutation(k, 3, pixel_outer);
      out->tiles_equal = 1;
    } else {
      /* Axes icb, kh, kw, ic, ow around the oc loop (emit_conv.c). */
      int32_t perms[VEC_MAX_VALUES * 5];
      int32_t count = vec_conv_nchwc_orders(perms, VEC_MAX_VALUES);
      for (int32_t p = 0; p < count; ++p) add_permutation(k, 5, perms + p * 5);
      /* Order 3 keeps one pixel's accumulators in registers over the
       * input channels of a block: best on most ResNet-50 layers here. */
      k->default_value = 3;
    }
    int64_t oc_default = out->knobs[1].default_value;
    add_parallel_knob(out, N * hetc_kit_ceil_div(K, oc_default));
    add_unroll_knob(out, wl->kernel[1], 1);
  } else if (kind == VEC_T_MATMUL) {
    /* Six rows of two eight-float sums (emit_matmul.c): 12 independent FMA
     * chains, enough to cover the FMA latency on two pipes, and with B's
     * two vectors and a broadcast still within AVX2's 16 registers (32
     * columns would spill there). Within 2% of the space's best on ViT's
     * scores and values here, 15% behind 32 columns on Swin's 49-wide
     * windows. A product narrower than 16 takes 8 columns: all of its
     * columns would be the partial tile's otherwise. */
    const int64_t N = wl->inputs[1].shape[wl->inputs[1].rank - 1];
    vec_knob_spec_t *k = add_knob(out, "tile_m", VEC_KNOB_OPTION, offsetof(vec_config_t, tile_m));
    static const int64_t rows[] = {1, 2, 4, 6, 8};
    for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); ++i) add_value(k, rows[i]);
    k->default_value = 6;
    k = add_knob(out, "tile_n", VEC_KNOB_OPTION, offsetof(vec_config_t, tile_n));
    add_value(k, 8);
    add_value(k, 16);
    add_value(k, 32);
    k->default_value = N >= 16 ? 16 : 8;
  }
  /* Other templates have no knobs. */
}

/* ------------------------------------------------------------------------ */

static int tiles_equal_fn(const hetc_plugin_config_t *config,
                          const void *user_data) {
  (void)user_data;
  if (!config || config->num_knobs != 2) return 0;
  const hetc_plugin_knob_value_t *a = &config->knobs[0], *b = &config->knobs[1];
  return a->count == 1 && b->count == 1 && a->values[0] == b->values[0];
}

hetc_plugin_status_t vec_space_define(const vec_space_t *space,
                                      hetc_plugin_space_t *host_space) {
  const hetc_plugin_host_t *h = vec_host;
  hetc_plugin_status_t s = NULL;
  for (int32_t i = 0; i < space->num_knobs && !s; ++i) {
    const vec_knob_spec_t *k = &space->knobs[i];
    switch (k->kind) {
      case VEC_KNOB_OPTION:
        s = h->space_define_knob(host_space, k->name, k->values, k->num_values);
        break;
      case VEC_KNOB_ANNOTATE:
        s = h->space_define_annotate(host_space, k->name, k->values,
                                     k->num_values);
        break;
      case VEC_KNOB_REORDER: {
        int32_t perms[VEC_MAX_VALUES * VEC_MAX_AXES];
        for (int32_t p = 0; p < k->num_values; ++p)
          for (int32_t a = 0; a < k->num_axes; ++a)
            perms[p * k->num_axes + a] = k->permutations[p][a];
        s = h->space_define_reorder(host_space, k->name, k->num_axes, perms,
                                    k->num_values);
        break;
      }
      default:
        s = vec_status(HETC_PLUGIN_STATUS_INTERNAL, "vec: bad knob kind");
    }
  }
  if (!s && space->tiles_equal) {
    static const char *const names[2] = {"tile_ic", "tile_oc"};
    s = h->space_add_constraint(host_space, names, 2, tiles_equal_fn, NULL);
  }
  if (s) return s;
  hetc_plugin_knob_value_t knobs[VEC_MAX_KNOBS];
  int64_t values[VEC_MAX_KNOBS];
  for (int32_t i = 0; i < space->num_knobs; ++i) {
    values[i] = space->knobs[i].default_value;
    knobs[i].name = space->knobs[i].name;
    knobs[i].count = 1;
    knobs[i].values = &values[i];
  }
  hetc_plugin_config_t config = {space->num_knobs, knobs};
  return h->space_set_default(host_space, &config);
}

static int64_t *field(vec_config_t *c, const vec_knob_spec_t *k) {
  return (int64_t *)((char *)c + k->offset);
}

static const int64_t *cfield(const vec_config_t *c, const vec_knob_spec_t *k) {
  return (const int64_t *)((const char *)c + k->offset);
}

hetc_plugin_status_t vec_config_parse(const vec_space_t *space,
                                      const hetc_plugin_config_t *config,
                                      vec_config_t *out) {
  memset(out, 0, sizeof(*out));
  for (int32_t i = 0; i < space->num_knobs; ++i)
    *field(out, &space->knobs[i]) = space->knobs[i].default_value;
  if (!config) return NULL;
  if (config->num_knobs < 0 || (config->num_knobs > 0 && !config->knobs))
    return vec_status(HETC_PLUGIN_STATUS_INVALID_ARGUMENT,
                      "vec: malformed config (%d knobs)", config->num_knobs);
  for (int32_t j = 0; j < config->num_knobs; ++j) {
    const hetc_plugin_knob_value_t *kv = &config->knobs[j];
    if (!kv->name)
      return vec_status(HETC_PLUGIN_STATUS_INVALID_ARGUMENT,
                        "vec: config knob %d has no name", j);
    int32_t found = -1;
    for (int32_t i = 0; i < space->num_knobs; ++i)
      if (strcmp(space->knobs[i].name, kv->name) == 0) found = i;
    if (found < 0)
      return vec_status(HETC_PLUGIN_STATUS_INVALID_ARGUMENT,
                        "vec: config has knob '%s', which this template's "
                        "space does not define",
                        kv->name);
    for (int32_t i = 0; i < j; ++i)
      if (strcmp(config->knobs[i].name, kv->name) == 0)
        return vec_status(HETC_PLUGIN_STATUS_INVALID_ARGUMENT,
                          "vec: config gives knob '%s' twice", kv->name);
    const vec_knob_spec_t *k = &space->knobs[found];
    if (kv->count != 1 || !kv->values)
      return vec_status(HETC_PLUGIN_STATUS_INVALID_ARGUMENT,
                        "vec: knob '%s' takes exactly one value, got %d",
                        kv->name, kv->count);
    int ok = 0;
    for (int32_t v = 0; v < k->num_values; ++v)
      if (k->values[v] == kv->values[0]) ok = 1;
    if (!ok) {
      char allowed[256] = "";
      size_t used = 0;
      for (int32_t v = 0; v < k->num_values && used < sizeof(allowed); ++v)
        used += (size_t)snprintf(allowed + used, sizeof(allowed) - used, "%s%lld",
                                 v ? "," : "", (long long)k->values[v]);
      return vec_status(HETC_PLUGIN_STATUS_INVALID_ARGUMENT,
                        "vec: knob '%s' = %lld is outside the space {%s}",
                        kv->name, (long long)kv->values[0], allowed);
    }
    *field(out, k) = kv->values[0];
  }
  if (config->num_knobs != space->num_knobs) {
    for (int32_t i = 0; i < space->num_knobs; ++i) {
      int present = 0;
      for (int32_t j = 0; j < config->num_knobs; ++j)
        if (strcmp(config->knobs[j].name, space->knobs[i].name) == 0) present = 1;
      if (!present)
        return vec_status(HETC_PLUGIN_STATUS_INVALID_ARGUMENT,
                          "vec: config lacks knob '%s'", space->knobs[i].name);
    }
  }
  if (space->tiles_equal && out->tile_ic != out->tile_oc)
    return vec_status(HETC_PLUGIN_STATUS_INVALID_ARGUMENT,
                      "vec: depthwise conv needs tile_ic == tile_oc, got %lld "
                      "and %lld",
                      (long long)out->tile_ic, (long long)out->tile_oc);
  return NULL;
}

void vec_config_describe(const vec_space_t *space, const vec_config_t *config,
                         hpc_strbuf_t *sb) {
  if (space->num_knobs == 0) {
    hpc_strbuf_printf(sb, "(no knobs)");
    return;
  }
  for (int32_t i = 0; i < space->num_knobs; ++i)
    hpc_strbuf_printf(sb, "%s%s=%lld", i ? " " : "", space->knobs[i].name,
                      (long long)*cfield(config, &space->knobs[i]));
}
