/* The shared feature schema (driver/records/features.h, api/hetc/plugin.h)
 * through the real cpu and vec plugins, loaded by the driver's registry:
 *   - names: one per index, non-empty, unique;
 *   - for several conv2d and dense workloads, every template, its default
 *     and sampled configs: rows of exactly HETC_FEATURE_COUNT values, each
 *     finite or NaN, one-hots exactly one-hot, and configs with another
 *     register tiling give other register-level features;
 *   - the driver's indices equal hand-computed values for known workloads
 *     and the device descriptor, and agree between plugins;
 *   - the ABI contract: capacity honoured, the driver's indices untouched,
 *     failures (a config outside the space, a template without features,
 *     a minor-0 plugin) leave the plugin's indices NaN;
 *   - extraction from several threads gives the serial rows;
 *   - the rate of features() calls (printed, not asserted). */
#include <math.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include "plugins/registry.h"
#include "space/space.h"
#include "records/features.h"

#define SAMPLED_CONFIGS 12
#define MAX_ROWS (SAMPLED_CONFIGS + 1)

/* ------------------------------------------------------------------------ */
/* Workloads                                                                */
/* ------------------------------------------------------------------------ */

typedef struct workload_case_t {
  const char *name;
  hetc_plugin_workload_t wl;
  hetc_plugin_tensor_t inputs[2];
} workload_case_t;

static hetc_plugin_tensor_t tensor(int32_t rank, int64_t a, int64_t b, int64_t c, int64_t d) {
  hetc_plugin_tensor_t t;
  memset(&t, 0, sizeof(t));
  t.dtype = HETC_PLUGIN_DTYPE_FLOAT32;
  t.rank = rank;
  t.shape[0] = a;
  t.shape[1] = b;
  t.shape[2] = c;
  t.shape[3] = d;
  t.layout.kind = HETC_PLUGIN_LAYOUT_ROW_MAJOR;
  return t;
}

/* Square kernel, stride and symmetric padding; the output shape follows. */
static void make_conv(workload_case_t *w, const char *name, int64_t n, int64_t c, int64_t h,
                      int64_t width, int64_t k, int32_t kernel, int32_t stride, int32_t pad,
                      int32_t dilation, int32_t groups, int32_t bias, int32_t residual,
                      int32_t activation) {
  memset(w, 0, sizeof(*w));
  w->name = name;
  const int64_t oh = (h + 2 * pad - dilation * (kernel - 1) - 1) / stride + 1;
  const int64_t ow = (width + 2 * pad - dilation * (kernel - 1) - 1) / stride + 1;
  w->inputs[0] = tensor(4, n, c, h, width);
  w->wl.op = HETC_PLUGIN_OP_CONV2D;
  w->wl.output = tensor(4, n, k, oh, ow);
  w->wl.num_inputs = 1;
  if (residual) w->inputs[w->wl.num_inputs++] = w->wl.output;
  w->wl.kernel[0] = w->wl.kernel[1] = kernel;
  w->wl.strides[0] = w->wl.strides[1] = stride;
  for (int i = 0; i < 4; ++i) w->wl.padding[i] = pad;
  w->wl.dilation[0] = w->wl.dilation[1] = dilation;
  w->wl.groups = groups;
  w->wl.epilogue.has_bias = bias;
  w->wl.epilogue.has_residual = residual;
  w->wl.epilogue.activation = activation;
}

static void make_dense(workload_case_t *w, const char *name, int64_t n, int64_t c, int64_t units,
                       int32_t bias, int32_t activation) {
  memset(w, 0, sizeof(*w));
  w->name = name;
  w->inputs[0] = tensor(2, n, c, 0, 0);
  w->wl.op = HETC_PLUGIN_OP_DENSE;
  w->wl.output = tensor(2, n, units, 0, 0);
  w->wl.num_inputs = 1;
  w->wl.epilogue.has_bias = bias;
  w->wl.epilogue.activation = activation;
}

#define NUM_CASES 8
static workload_case_t cases[NUM_CASES];

/* The first conv2d and the first dense are the hand-computed ones. */
static void make_cases(void) {
  make_conv(&cases[0], "resnet 64x56x56 k64 3x3 p1 bias relu", 1, 64, 56, 56, 64, 3, 1, 1, 1, 1,
            1, 0, HETC_PLUGIN_ACT_RELU);
  make_dense(&cases[1], "dense 4x512 -> 1000 bias", 4, 512, 1000, 1, HETC_PLUGIN_ACT_NONE);
  make_conv(&cases[2], "stem 3x224x224 k64 7x7 s2 p3", 1, 3, 224, 224, 64, 7, 2, 3, 1, 1, 1, 0,
            HETC_PLUGIN_ACT_RELU);
  make_conv(&cases[3], "1x1 256x14x14 k1024 residual", 1, 256, 14, 14, 1024, 1, 1, 0, 1, 1, 0, 1,
            HETC_PLUGIN_ACT_NONE);
  make_conv(&cases[4], "depthwise 32x28x28 3x3 relu6", 2, 32, 28, 28, 32, 3, 1, 1, 1, 32, 1, 0,
            HETC_PLUGIN_ACT_RELU6);
  make_conv(&cases[5], "grouped 16x10x10 k32 g4 dilation 2", 1, 16, 10, 10, 32, 3, 1, 2, 2, 4, 0,
            0, HETC_PLUGIN_ACT_NONE);
  make_conv(&cases[6], "odd 13x9x11 k21 3x3 s2", 3, 13, 9, 11, 21, 3, 2, 1, 1, 1, 1, 1,
            HETC_PLUGIN_ACT_SIGMOID);
  make_dense(&cases[7], "dense 1x2048 -> 10 tanh", 1, 2048, 10, 0, HETC_PLUGIN_ACT_TANH);
  for (int i = 0; i < NUM_CASES; ++i) cases[i].wl.inputs = cases[i].inputs;
}

/* ------------------------------------------------------------------------ */
/* Fixture: the registry with the cpu (when built) and vec plugins          */
/* ------------------------------------------------------------------------ */

typedef struct fixture_t {
  hetc_registry_t *registry;
  hetc_plugin_entry_t *targets[2];
  int32_t num_targets;
} fixture_t;

static int setup(void **state) {
  make_cases();
  fixture_t *f = calloc(1, sizeof(*f));
  if (!f) return -1;
  hetc_status_t s = hetc_registry_open(&f->registry);
  if (s) {
    fprintf(stderr, "registry: %s\n", hetc_status_message(s));
    hetc_status_free(s);
    free(f);
    return -1;
  }
  static const char *const names[2] = {"cpu", "vec"};
  for (int i = 0; i < 2; ++i) {
    hetc_plugin_entry_t *entry = NULL;
    s = hetc_registry_target(f->registry, names[i], &entry);
    if (s) {
      /* The cpu plugin is skipped by builds without LLVM 15; vec is always
       * built. */
      printf("target %s not available: %s\n", names[i], hetc_status_message(s));
      hetc_status_free(s);
      if (i == 1) return -1;
      continue;
    }
    f->targets[f->num_targets++] = entry;
  }
  *state = f;
  return 0;
}

static int teardown(void **state) {
  fixture_t *f = *state;
  if (f) hetc_registry_free(f->registry);
  free(f);
  return 0;
}

/* ------------------------------------------------------------------------ */
/* Helpers                                                                  */
/* ------------------------------------------------------------------------ */

static void row_of(hetc_plugin_entry_t *e, const hetc_plugin_workload_t *wl, int32_t t,
                   const hetc_plugin_config_t *config, float *row) {
  hetc_status_t s = hetc_features_extract(e->plugin, e->instance, 0, wl, t, config, row);
  if (s) fail_msg("%s: features: %s", e->plugin->name, hetc_status_message(s));
}

/* Every value is a number or NaN (missing): never infinite. */
static void assert_values_usable(const float *row, const char *what) {
  for (int32_t i = 0; i < HETC_FEATURE_COUNT; ++i)
    if (!(isfinite(row[i]) || isnan(row[i])))
      fail_msg("%s: feature %s = %g", what, hetc_feature_name(i), (double)row[i]);
}

/* Indices [first, last] hold exactly one 1 and otherwise 0. */
static void assert_one_hot(const float *row, int32_t first, int32_t last, const char *what) {
  int ones = 0;
  for (int32_t i = first; i <= last; ++i) {
    if (row[i] == 1.0f)
      ++ones;
    else if (row[i] != 0.0f)
      fail_msg("%s: %s = %g in a one-hot", what, hetc_feature_name(i), (double)row[i]);
  }
  if (ones != 1) fail_msg("%s: %d ones in %s..%s", what, ones, hetc_feature_name(first),
                          hetc_feature_name(last));
}

static int64_t knob_value(const hetc_plugin_config_t *config, const char *name) {
  for (int32_t i = 0; i < config->num_knobs; ++i)
    if (strcmp(config->knobs[i].name, name) == 0) return config->knobs[i].values[0];
  return -1;
}

/* The knobs that shape a plugin's register tile (cpu: the micro-kernel's
 * rows and channel block; vec: the channel block of its innermost loop). */
static int register_tiling_differs(const char *target, const hetc_plugin_config_t *a,
                                   const hetc_plugin_config_t *b) {
  static const char *const cpu_knobs[] = {"reg_n", "tile_oc", NULL};
  static const char *const vec_knobs[] = {"tile_oc", NULL};
  const char *const *knobs = strcmp(target, "cpu") == 0 ? cpu_knobs : vec_knobs;
  for (int i = 0; knobs[i]; ++i)
    if (knob_value(a, knobs[i]) != knob_value(b, knobs[i])) return 1;
  return 0;
}

static double now_seconds(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* ------------------------------------------------------------------------ */
/* Tests                                                                    */
/* ------------------------------------------------------------------------ */

static void names_are_unique_and_non_empty(void **state) {
  (void)state;
  for (int32_t i = 0; i < HETC_FEATURE_COUNT; ++i) {
    const char *name = hetc_feature_name(i);
    assert_non_null(name);
    assert_true(name[0] != '\0');
    for (const char *c = name; *c; ++c)
      assert_true((*c >= 'a' && *c <= 'z') || (*c >= '0' && *c <= '9') || *c == '_');
    for (int32_t j = 0; j < i; ++j)
      if (strcmp(name, hetc_feature_name(j)) == 0) fail_msg("feature %d and %d: %s", j, i, name);
    assert_int_equal(hetc_feature_is_plugin_owned(i), i < HETC_FEATURE_PLUGIN_END);
  }
  assert_null(hetc_feature_name(-1));
  assert_null(hetc_feature_name(HETC_FEATURE_COUNT));
  printf("%d features, %d written by the plugin\n", HETC_FEATURE_COUNT, HETC_FEATURE_PLUGIN_END);
}

static void rows_are_complete_for_every_template(void **state) {
  fixture_t *f = *state;
  uint64_t rng = 0x5eedf00dULL;
  /* Each plugin's first row of each workload, for the cross-plugin check. */
  static float first_rows[2][NUM_CASES][HETC_FEATURE_COUNT];
  for (int32_t p = 0; p < f->num_targets; ++p) {
    hetc_plugin_entry_t *e = f->targets[p];
    const char *target = e->plugin->name;
    int templates_seen = 0, rows_seen = 0, pairs_checked = 0;
    for (int c = 0; c < NUM_CASES; ++c) {
      const hetc_plugin_workload_t *wl = &cases[c].wl;
      const int32_t templates = e->plugin->template_count(e->instance, 0, wl);
      assert_true(templates >= 1);
      for (int32_t t = 0; t < templates; ++t) {
        const char *tname = e->plugin->template_name(e->instance, 0, wl, t);
        hetc_plugin_space_t *space = NULL;
        assert_null(hetc_space_create(&space));
        hetc_status_t s = e->plugin->template_define_space(e->instance, 0, wl, t, space);
        if (s) fail_msg("%s %s: %s", target, tname, hetc_status_message(s));
        int64_t indices[MAX_ROWS];
        int num = 0;
        assert_null(hetc_space_default(space, &indices[num++]));
        for (int k = 0; k < SAMPLED_CONFIGS; ++k) {
          hetc_status_t sampled = hetc_space_sample_valid(space, &rng, &indices[num]);
          if (sampled) {
            hetc_status_free(sampled); /* no valid point found by sampling */
            break;
          }
          ++num;
        }
        static hetc_space_config_t configs[MAX_ROWS];
        static float rows[MAX_ROWS][HETC_FEATURE_COUNT];
        int distinct = 0, distinct_configs = 0;
        for (int k = 0; k < num; ++k) {
          int seen = 0;
          for (int j = 0; j < k; ++j) seen |= indices[j] == indices[k];
          distinct_configs += !seen;
          assert_null(hetc_space_config_at(space, indices[k], &configs[k]));
          /* Sentinels past the row: nothing may write there. */
          float padded[HETC_FEATURE_COUNT + 4];
          for (int i = 0; i < HETC_FEATURE_COUNT + 4; ++i) padded[i] = 12345.0f;
          row_of(e, wl, t, &configs[k].view, padded);
          for (int i = HETC_FEATURE_COUNT; i < HETC_FEATURE_COUNT + 4; ++i)
            assert_true(padded[i] == 12345.0f);
          memcpy(rows[k], padded, sizeof(rows[k]));
          char what[256];
          snprintf(what, sizeof(what), "%s %s [%s] config %lld", target, tname, cases[c].name,
                   (long long)indices[k]);
          assert_values_usable(rows[k], what);
          assert_one_hot(rows[k], HETC_FEATURE_ALGO_DIRECT, HETC_FEATURE_ALGO_OTHER, what);
          assert_one_hot(rows[k], HETC_FEATURE_LAYOUT_NCHW, HETC_FEATURE_LAYOUT_NCHWC, what);
          /* Both plugins describe every level of every conv2d and dense
           * template, and nothing they write is missing. */
          for (int32_t i = 0; i < HETC_FEATURE_PLUGIN_END; ++i)
            if (isnan(rows[k][i])) fail_msg("%s: %s missing", what, hetc_feature_name(i));
          for (int32_t i = HETC_FEATURE_WL_OP; i < HETC_FEATURE_DEV_KIND; ++i)
            if (isnan(rows[k][i]))
              fail_msg("%s: workload feature %s missing", what, hetc_feature_name(i));
          /* A task is part of the kernel, a register tile part of a task. */
          assert_true(rows[k][HETC_FEATURE_REG_SPATIAL] <= rows[k][HETC_FEATURE_BLOCK_SPATIAL]);
          assert_true(rows[k][HETC_FEATURE_BLOCK_SPATIAL] <= rows[k][HETC_FEATURE_GRID_SPATIAL]);
          for (int32_t field = HETC_FEATURE_FIELD_BYTES_IN; field <= HETC_FEATURE_FIELD_BYTES_OUT;
               ++field)
            if (rows[k][HETC_FEATURE_AT_LEVEL(HETC_FEATURE_LEVEL_BLOCK, field)] >
                rows[k][HETC_FEATURE_AT_LEVEL(HETC_FEATURE_LEVEL_GRID, field)])
              fail_msg("%s: a task moves more than the kernel: %s", what,
                       hetc_feature_name(HETC_FEATURE_AT_LEVEL(HETC_FEATURE_LEVEL_BLOCK, field)));
          /* The driver's indices do not depend on the template or config. */
          if (t == 0 && k == 0) memcpy(first_rows[p][c], rows[k], sizeof(rows[k]));
          assert_memory_equal(rows[k] + HETC_FEATURE_PLUGIN_END,
                              first_rows[p][c] + HETC_FEATURE_PLUGIN_END,
                              sizeof(float) * (HETC_FEATURE_PARALLEL_BALANCE -
                                               HETC_FEATURE_PLUGIN_END));
          int same = 0;
          for (int j = 0; j < k && !same; ++j)
            same = memcmp(rows[j], rows[k], sizeof(float) * HETC_FEATURE_PLUGIN_END) == 0;
          distinct += !same;
          /* Another register tiling is another register tile. */
          for (int j = 0; j < k; ++j) {
            if (!register_tiling_differs(target, &configs[j].view, &configs[k].view)) continue;
            ++pairs_checked;
            if (memcmp(rows[j], rows[k], sizeof(float) * HETC_FEATURE_FIELD_COUNT) == 0)
              fail_msg("%s: same register features as config %lld", what, (long long)indices[j]);
          }
          ++rows_seen;
        }
        printf("%-4s %-22s %-38s %2d configs of %6lld: %2d distinct, %2d distinct rows\n",
               target, tname, cases[c].name, num, (long long)hetc_space_size(space),
               distinct_configs, distinct);
        /* Configs that run differently look different. */
        if (distinct_configs > 1) assert_true(distinct > 1);
        ++templates_seen;
        hetc_space_free(space);
      }
    }
    printf("%s: %d templates, %d rows, %d config pairs with another register tiling\n", target,
           templates_seen, rows_seen, pairs_checked);
    assert_true(pairs_checked > 0);
  }
  /* Every plugin's rows agree on the workload. */
  if (f->num_targets == 2)
    for (int c = 0; c < NUM_CASES; ++c)
      assert_memory_equal(first_rows[0][c] + HETC_FEATURE_WL_OP,
                          first_rows[1][c] + HETC_FEATURE_WL_OP,
                          sizeof(float) * (HETC_FEATURE_DEV_KIND - HETC_FEATURE_WL_OP));
}

static void assert_feature(const float *row, int32_t index, double expected) {
  const double got = row[index];
  if (!(fabs(got - expected) <= 1e-6 * (1 + fabs(expected))))
    fail_msg("%s = %.9g, expected %.9g", hetc_feature_name(index), got, expected);
}

/* A descriptor number as the driver reports it: NaN when unknown (0). */
static double known(double x) { return x > 0 ? log2(1 + x) : NAN; }

static void assert_feature_or_nan(const float *row, int32_t index, double expected) {
  if (isnan(expected)) {
    if (!isnan(row[index]))
      fail_msg("%s = %g, expected NaN", hetc_feature_name(index), (double)row[index]);
  } else {
    assert_feature(row, index, expected);
  }
}

static void driver_indices_match_hand_computed_values(void **state) {
  fixture_t *f = *state;
  for (int32_t p = 0; p < f->num_targets; ++p) {
    hetc_plugin_entry_t *e = f->targets[p];
    float row[HETC_FEATURE_COUNT];
    /* conv2d 1x64x56x56 -> 64, 3x3, stride 1, padding 1: 56x56 out;
     * 2 x 64 x 56 x 56 x 64 x 3 x 3 = 231211008 flops. */
    row_of(e, &cases[0].wl, 0, NULL, row);
    assert_feature(row, HETC_FEATURE_WL_OP, 1);
    assert_feature(row, HETC_FEATURE_WL_FLOPS, log2(231211009.0));
    assert_feature(row, HETC_FEATURE_WL_N, 1);
    assert_feature(row, HETC_FEATURE_WL_C, log2(65.0));
    assert_feature(row, HETC_FEATURE_WL_H, log2(57.0));
    assert_feature(row, HETC_FEATURE_WL_W, log2(57.0));
    assert_feature(row, HETC_FEATURE_WL_K, log2(65.0));
    assert_feature(row, HETC_FEATURE_WL_OH, log2(57.0));
    assert_feature(row, HETC_FEATURE_WL_OW, log2(57.0));
    assert_feature(row, HETC_FEATURE_WL_KH, 3);
    assert_feature(row, HETC_FEATURE_WL_KW, 3);
    assert_feature(row, HETC_FEATURE_WL_STRIDE_H, 1);
    assert_feature(row, HETC_FEATURE_WL_STRIDE_W, 1);
    assert_feature(row, HETC_FEATURE_WL_DILATION_H, 1);
    assert_feature(row, HETC_FEATURE_WL_DILATION_W, 1);
    assert_feature(row, HETC_FEATURE_WL_PADDING, 4);
    assert_feature(row, HETC_FEATURE_WL_GROUPS, 1);
    assert_feature(row, HETC_FEATURE_WL_DEPTHWISE, 0);
    assert_feature(row, HETC_FEATURE_WL_HAS_BIAS, 1);
    assert_feature(row, HETC_FEATURE_WL_HAS_RESIDUAL, 0);
    assert_feature(row, HETC_FEATURE_WL_ACTIVATION, HETC_PLUGIN_ACT_RELU);

    /* The device: its descriptor on the schema's scale. */
    const hetc_plugin_device_t *d = e->plugin->device_get(e->instance, 0);
    assert_non_null(d);
    assert_feature(row, HETC_FEATURE_DEV_KIND, d->kind);
    assert_feature_or_nan(row, HETC_FEATURE_DEV_PEAK_GFLOPS, known(d->peak_gflops_fp32));
    assert_feature_or_nan(row, HETC_FEATURE_DEV_BANDWIDTH_GBPS, known(d->memory_bandwidth_gbps));
    assert_feature_or_nan(row, HETC_FEATURE_DEV_COMPUTE_UNITS, known(d->compute_units));
    assert_feature_or_nan(row, HETC_FEATURE_DEV_SIMD_WIDTH,
                          d->simd_width_fp32 > 0 ? d->simd_width_fp32 : NAN);
    assert_feature_or_nan(row, HETC_FEATURE_DEV_MAX_THREADS_PER_GROUP,
                          known(d->max_threads_per_group));
    assert_feature_or_nan(row, HETC_FEATURE_DEV_LOCAL_MEMORY, known((double)d->local_memory_bytes));
    assert_feature_or_nan(row, HETC_FEATURE_DEV_L1, known((double)d->cache_bytes[0]));
    assert_feature_or_nan(row, HETC_FEATURE_DEV_L2, known((double)d->cache_bytes[1]));
    assert_feature_or_nan(row, HETC_FEATURE_DEV_L3, known((double)d->cache_bytes[2]));

    /* Derived: the plugin's task count over the device's compute units. */
    const double units = nearbyint(exp2(row[HETC_FEATURE_PARALLEL_UNITS]) - 1);
    const double cu = d->compute_units;
    assert_true(units >= 1 && cu >= 1);
    assert_feature(row, HETC_FEATURE_PARALLEL_BALANCE, units / (ceil(units / cu) * cu));
    assert_true(row[HETC_FEATURE_PARALLEL_BALANCE] > 0 && row[HETC_FEATURE_PARALLEL_BALANCE] <= 1);
    if (d->cache_bytes[0] > 0) {
      const double bytes = exp2(row[HETC_FEATURE_CACHE_BYTES_IN]) - 1 +
                           exp2(row[HETC_FEATURE_CACHE_BYTES_WEIGHT]) - 1 +
                           exp2(row[HETC_FEATURE_CACHE_BYTES_OUT]) - 1;
      const double got = row[HETC_FEATURE_CACHE_TILE_OVER_L1];
      const double expected = log2(bytes / ((double)d->cache_bytes[0] / cu));
      assert_true(fabs(got - expected) < 1e-3);
    }
    printf("%s on the resnet layer: parallel units %.0f on %.0f compute units, balance %.3f, "
           "cache tile over L1 2^%.2f\n",
           e->plugin->name, units, cu, (double)row[HETC_FEATURE_PARALLEL_BALANCE],
           (double)row[HETC_FEATURE_CACHE_TILE_OVER_L1]);

    /* dense 4x512 -> 1000: a 1x1 convolution of a 1x1 plane; 2 x 4 x 1000 x
     * 512 = 4096000 flops. */
    row_of(e, &cases[1].wl, 0, NULL, row);
    assert_feature(row, HETC_FEATURE_WL_OP, 2);
    assert_feature(row, HETC_FEATURE_WL_FLOPS, log2(4096001.0));
    assert_feature(row, HETC_FEATURE_WL_N, log2(5.0));
    assert_feature(row, HETC_FEATURE_WL_C, log2(513.0));
    assert_feature(row, HETC_FEATURE_WL_H, 1);
    assert_feature(row, HETC_FEATURE_WL_W, 1);
    assert_feature(row, HETC_FEATURE_WL_K, log2(1001.0));
    assert_feature(row, HETC_FEATURE_WL_OH, 1);
    assert_feature(row, HETC_FEATURE_WL_OW, 1);
    assert_feature(row, HETC_FEATURE_WL_KH, 1);
    assert_feature(row, HETC_FEATURE_WL_KW, 1);
    assert_feature(row, HETC_FEATURE_WL_STRIDE_H, 1);
    assert_feature(row, HETC_FEATURE_WL_DILATION_W, 1);
    assert_feature(row, HETC_FEATURE_WL_PADDING, 0);
    assert_feature(row, HETC_FEATURE_WL_GROUPS, 1);
    assert_feature(row, HETC_FEATURE_WL_HAS_BIAS, 1);
    assert_feature(row, HETC_FEATURE_WL_ACTIVATION, HETC_PLUGIN_ACT_NONE);
    assert_feature(row, HETC_FEATURE_ALGO_GEMM, 1);
    assert_feature(row, HETC_FEATURE_LAYOUT_NCHW, 1);

    /* Depthwise 2x32x28x28, groups 32. */
    row_of(e, &cases[4].wl, 0, NULL, row);
    assert_feature(row, HETC_FEATURE_WL_GROUPS, log2(33.0));
    assert_feature(row, HETC_FEATURE_WL_DEPTHWISE, 1);
    assert_feature(row, HETC_FEATURE_WL_FLOPS, log2(2.0 * 2 * 32 * 28 * 28 * 9 + 1));
    assert_feature(row, HETC_FEATURE_WL_ACTIVATION, HETC_PLUGIN_ACT_RELU6);
    assert_feature(row, HETC_FEATURE_ALGO_DEPTHWISE, 1);
  }
}

/* What a built kernel reports about itself agrees with its features: the
 * innermost trip count, the packed weights, the input as read (its layout
 * and bytes) and the output as written. Builds the default config of every
 * template of three workloads. */
static void features_agree_with_built_artifacts(void **state) {
  fixture_t *f = *state;
  static const int built_cases[] = {0, 1, 4};
  for (int32_t p = 0; p < f->num_targets; ++p) {
    hetc_plugin_entry_t *e = f->targets[p];
    /* vec's avg_inner_loop_length averages every innermost loop it emits
     * (zeroing, epilogue, remainders); cpu's is the main loop's trip. */
    const double inner_tolerance = strcmp(e->plugin->name, "cpu") == 0 ? 1e-5 : 0.5;
    for (size_t b = 0; b < sizeof(built_cases) / sizeof(built_cases[0]); ++b) {
      const workload_case_t *w = &cases[built_cases[b]];
      const int32_t templates = e->plugin->template_count(e->instance, 0, &w->wl);
      for (int32_t t = 0; t < templates; ++t) {
        const char *tname = e->plugin->template_name(e->instance, 0, &w->wl, t);
        float row[HETC_FEATURE_COUNT];
        row_of(e, &w->wl, t, NULL, row);
        hetc_plugin_artifact_t *artifact = NULL;
        hetc_status_t s = e->plugin->build(e->instance, 0, &w->wl, t, NULL, &artifact);
        if (s) fail_msg("%s %s: build: %s", e->plugin->name, tname, hetc_status_message(s));
        const hetc_plugin_artifact_info_t *info = e->plugin->artifact_info(artifact);
        const hetc_plugin_tensor_t *in = &w->wl.inputs[0], *out = &w->wl.output;
        const hetc_plugin_layout_t layout = info->input_layouts[0];
        const double block = layout.kind == HETC_PLUGIN_LAYOUT_NCHWC ? layout.block : 1;
        double in_elements = (double)in->shape[0] * ceil((double)in->shape[1] / block) * block;
        for (int32_t i = 2; i < in->rank; ++i) in_elements *= (double)in->shape[i];
        const hetc_plugin_layout_t olayout = info->output_layout;
        const double oblock = olayout.kind == HETC_PLUGIN_LAYOUT_NCHWC ? olayout.block : 1;
        double out_elements = (double)out->shape[0] * ceil((double)out->shape[1] / oblock) * oblock;
        for (int32_t i = 2; i < out->rank; ++i) out_elements *= (double)out->shape[i];
        printf("%-4s %-22s inner loop %6.1f (features %6.1f), weights %9llu bytes, reads %s\n",
               e->plugin->name, tname, info->avg_inner_loop_length,
               exp2(row[HETC_FEATURE_INNER_LOOP]) - 1, (unsigned long long)info->param_bytes[0],
               layout.kind == HETC_PLUGIN_LAYOUT_NCHWC ? "NCHWc" : "row-major");
        assert_true(fabs(row[HETC_FEATURE_INNER_LOOP] - log2(1 + info->avg_inner_loop_length)) <=
                    inner_tolerance);
        assert_feature(row, HETC_FEATURE_GRID_BYTES_WEIGHT,
                       log2(1.0 + (double)info->param_bytes[0]));
        assert_feature(row, HETC_FEATURE_GRID_BYTES_IN, log2(1 + 4 * in_elements));
        assert_feature(row, HETC_FEATURE_GRID_BYTES_OUT, log2(1 + 4 * out_elements));
        assert_feature(row, layout.kind == HETC_PLUGIN_LAYOUT_NCHWC ? HETC_FEATURE_LAYOUT_NCHWC
                            : layout.kind == HETC_PLUGIN_LAYOUT_NHWC ? HETC_FEATURE_LAYOUT_NHWC
                                                                     : HETC_FEATURE_LAYOUT_NCHW,
                       1);
        e->plugin->artifact_release(e->instance, artifact);
      }
    }
  }
}

/* The plugin's side of the ABI, called directly. */
static void plugin_honours_capacity_and_leaves_driver_indices(void **state) {
  fixture_t *f = *state;
  for (int32_t p = 0; p < f->num_targets; ++p) {
    const hetc_plugin_t *plugin = f->targets[p]->plugin;
    hetc_plugin_instance_t *instance = f->targets[p]->instance;
    float row[HETC_FEATURE_COUNT + 8];
    for (int i = 0; i < HETC_FEATURE_COUNT + 8; ++i) row[i] = -7.0f;
    int32_t count = -1;
    /* A host with a longer schema: the plugin fills what it knows. */
    assert_null(plugin->features(instance, 0, &cases[0].wl, 0, NULL, row, HETC_FEATURE_COUNT + 8,
                                 &count));
    assert_int_equal(count, HETC_FEATURE_COUNT);
    for (int i = 0; i < HETC_FEATURE_PLUGIN_END; ++i) assert_true(row[i] != -7.0f);
    for (int i = HETC_FEATURE_PLUGIN_END; i < HETC_FEATURE_COUNT + 8; ++i)
      assert_true(row[i] == -7.0f);
    /* A host with a shorter schema: nothing at or past its capacity. */
    for (int i = 0; i < HETC_FEATURE_COUNT + 8; ++i) row[i] = -7.0f;
    assert_null(plugin->features(instance, 0, &cases[0].wl, 0, NULL, row, 10, &count));
    assert_int_equal(count, 10);
    for (int i = 0; i < 10; ++i) assert_true(row[i] != -7.0f);
    for (int i = 10; i < HETC_FEATURE_COUNT + 8; ++i) assert_true(row[i] == -7.0f);
    /* Null outputs are refused, not written through. */
    hetc_status_t s = plugin->features(instance, 0, &cases[0].wl, 0, NULL, NULL, 5, &count);
    assert_int_equal(hetc_status_code(s), HETC_STATUS_INVALID_ARGUMENT);
    assert_int_equal(count, 0);
    hetc_status_free(s);
  }
}

static void assert_plugin_part_missing(const float *row) {
  for (int32_t i = 0; i < HETC_FEATURE_PLUGIN_END; ++i) assert_true(isnan(row[i]));
  for (int32_t i = HETC_FEATURE_WL_OP; i < HETC_FEATURE_DEV_KIND; ++i) assert_false(isnan(row[i]));
}

static void failures_leave_the_plugin_part_missing(void **state) {
  fixture_t *f = *state;
  for (int32_t p = 0; p < f->num_targets; ++p) {
    hetc_plugin_entry_t *e = f->targets[p];
    float row[HETC_FEATURE_COUNT];
    /* A config outside the space: the plugin's failure is handed on. */
    const int64_t huge = 4096;
    const hetc_plugin_knob_value_t knob = {"tile_oc", 1, &huge};
    const hetc_plugin_config_t bad = {1, &knob};
    hetc_status_t s = hetc_features_extract(e->plugin, e->instance, 0, &cases[0].wl, 0, &bad, row);
    assert_int_equal(hetc_status_code(s), HETC_STATUS_INVALID_ARGUMENT);
    printf("%s: %s\n", e->plugin->name, hetc_status_message(s));
    hetc_status_free(s);
    assert_plugin_part_missing(row);

    /* A template without knobs has no features: not a failure. */
    workload_case_t pool;
    memset(&pool, 0, sizeof(pool));
    pool.inputs[0] = tensor(4, 1, 8, 6, 6);
    pool.wl.op = HETC_PLUGIN_OP_MAX_POOL2D;
    pool.wl.num_inputs = 1;
    pool.wl.inputs = pool.inputs;
    pool.wl.output = tensor(4, 1, 8, 3, 3);
    pool.wl.kernel[0] = pool.wl.kernel[1] = 2;
    pool.wl.strides[0] = pool.wl.strides[1] = 2;
    pool.wl.dilation[0] = pool.wl.dilation[1] = 1;
    assert_null(hetc_features_extract(e->plugin, e->instance, 0, &pool.wl, 0, NULL, row));
    assert_plugin_part_missing(row);
    assert_feature(row, HETC_FEATURE_WL_OP, HETC_PLUGIN_OP_MAX_POOL2D);
    assert_feature(row, HETC_FEATURE_WL_FLOPS, log2(1.0 + 8 * 9 * 4));

    /* A 1.0 plugin's features() predates the schema: not called. */
    hetc_plugin_t old = *e->plugin;
    old.header.abi_major = 1;
    old.header.abi_minor = 0;
    assert_null(hetc_features_extract(&old, e->instance, 0, &cases[0].wl, 0, NULL, row));
    assert_plugin_part_missing(row);

    /* The driver's own argument checks. */
    s = hetc_features_extract(e->plugin, e->instance, 3, &cases[0].wl, 0, NULL, row);
    assert_int_equal(hetc_status_code(s), HETC_STATUS_INVALID_ARGUMENT);
    hetc_status_free(s);
    s = hetc_features_extract(e->plugin, e->instance, 0, NULL, 0, NULL, row);
    assert_int_equal(hetc_status_code(s), HETC_STATUS_INVALID_ARGUMENT);
    hetc_status_free(s);
    for (int32_t i = 0; i < HETC_FEATURE_COUNT; ++i) assert_true(isnan(row[i]));
  }
}

/* ------------------------------------------------------------------------ */

#define THREADS 4
#define THREAD_ROUNDS 200

typedef struct thread_job_t {
  hetc_plugin_entry_t *entry;
  const float (*expected)[HETC_FEATURE_COUNT];
  int mismatches;
} thread_job_t;

static void *extract_concurrently(void *arg) {
  thread_job_t *job = arg;
  float row[HETC_FEATURE_COUNT];
  for (int r = 0; r < THREAD_ROUNDS; ++r)
    for (int c = 0; c < NUM_CASES; ++c) {
      hetc_status_t s = hetc_features_extract(job->entry->plugin, job->entry->instance, 0,
                                              &cases[c].wl, 0, NULL, row);
      if (s || memcmp(row, job->expected[c], sizeof(row)) != 0) ++job->mismatches;
      hetc_status_free(s);
    }
  return NULL;
}

static void concurrent_extraction_matches_serial(void **state) {
  fixture_t *f = *state;
  for (int32_t p = 0; p < f->num_targets; ++p) {
    static float expected[NUM_CASES][HETC_FEATURE_COUNT];
    for (int c = 0; c < NUM_CASES; ++c) row_of(f->targets[p], &cases[c].wl, 0, NULL, expected[c]);
    pthread_t threads[THREADS];
    thread_job_t jobs[THREADS];
    for (int i = 0; i < THREADS; ++i) {
      jobs[i] = (thread_job_t){f->targets[p], (const float(*)[HETC_FEATURE_COUNT])expected, 0};
      assert_int_equal(pthread_create(&threads[i], NULL, extract_concurrently, &jobs[i]), 0);
    }
    for (int i = 0; i < THREADS; ++i) {
      assert_int_equal(pthread_join(threads[i], NULL), 0);
      assert_int_equal(jobs[i].mismatches, 0);
    }
  }
}

/* Not a timed assertion (machines differ, sanitizers slow everything):
 * the rate is printed for the record. */
static void extraction_rate(void **state) {
  fixture_t *f = *state;
  enum { CALLS = 20000 };
  for (int32_t p = 0; p < f->num_targets; ++p) {
    hetc_plugin_entry_t *e = f->targets[p];
    float row[HETC_FEATURE_COUNT];
    int32_t count = 0;
    hetc_plugin_space_t *space = NULL;
    assert_null(hetc_space_create(&space));
    assert_null(e->plugin->template_define_space(e->instance, 0, &cases[0].wl, 0, space));
    int64_t index = 0;
    assert_null(hetc_space_default(space, &index));
    hetc_space_config_t config;
    assert_null(hetc_space_config_at(space, index, &config));
    double t0 = now_seconds();
    for (int i = 0; i < CALLS; ++i)
      assert_null(e->plugin->features(e->instance, 0, &cases[0].wl, 0, &config.view, row,
                                      HETC_FEATURE_COUNT, &count));
    const double plugin_us = (now_seconds() - t0) / CALLS * 1e6;
    t0 = now_seconds();
    for (int i = 0; i < CALLS; ++i)
      assert_null(hetc_features_extract(e->plugin, e->instance, 0, &cases[0].wl, 0, &config.view,
                                        row));
    const double row_us = (now_seconds() - t0) / CALLS * 1e6;
    printf("%s features(): %.2f us per call (%.0f per second); a whole row: %.2f us "
           "(%.0f per second)\n",
           e->plugin->name, plugin_us, 1e6 / plugin_us, row_us, 1e6 / row_us);
    hetc_space_free(space);
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(names_are_unique_and_non_empty),
      cmocka_unit_test(rows_are_complete_for_every_template),
      cmocka_unit_test(driver_indices_match_hand_computed_values),
      cmocka_unit_test(features_agree_with_built_artifacts),
      cmocka_unit_test(plugin_honours_capacity_and_leaves_driver_indices),
      cmocka_unit_test(failures_leave_the_plugin_part_missing),
      cmocka_unit_test(concurrent_extraction_matches_serial),
      cmocka_unit_test(extraction_rate),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
