/* Every conv2d template of a target (HETC_CONFORMANCE_TARGET, default vec)
 * on at least 30 random small workloads -- strides 1-3, asymmetric padding,
 * dilation, groups and depthwise, odd channel counts that do not divide the
 * vector width, several channel blocks, every epilogue; every other draw is
 * made 3x3 stride 1 so shape-specific templates (Winograd) get theirs too --
 * with the default config and a randomly sampled valid config from the
 * space the template declared through the host, at least 20 sampled
 * configs per template. Each result must match the reference executor
 * within a max relative error of 1e-4. Templates are counted by name (which
 * template sits at an index depends on the workload); a template stops
 * being run once it has its workloads and configs.
 * HETC_CONFORMANCE_WORKLOADS=n lowers the 30 workloads per template (the
 * sanitizer build of a backend with slow kernel builds, whose point is the
 * plugin's memory safety; the plain build runs all 30); its checks are the
 * first n of each template's in the full run, kernels and configs alike
 * (draw_stream), so the sanitizer build finds them in the kernel caches the
 * plain build filled. The cpu target runs
 * once per ISA (HETC_CPU_ISA); a run the machine cannot do skips (77).
 * A second test runs every template on a fixed list of layers real CNNs
 * have (depthwise 3x3 and 5x5 at strides 1 and 2, dilated convs whose taps
 * lie in the padding, grouped convs, the RGB stem), scaled down. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "kernel_check.h"
#include "space/space.h"

#define MAX_DRAWS 400
#define TOLERANCE 1e-4
#define MAX_TEMPLATES 16

/* The random stream of one draw: workload i's (what = NULL), or the
 * config sampled for template `what` at that draw. Every check owns its
 * stream, so which workloads and configs a run draws does not depend on
 * which templates it skips: a run with fewer workloads
 * (HETC_CONFORMANCE_WORKLOADS) checks a subset of the kernels the full run
 * checks, and the kernel caches (PoCL's, the cpu plugin's) the plain
 * build's run filled serve the sanitizer build's. */
static uint64_t draw_stream(uint64_t draw, const char *what) {
  uint64_t h = 0x5eed ^ (draw + 1) * UINT64_C(0x9e3779b97f4a7c15);
  for (const char *c = what; c && *c; ++c) h = (h ^ (unsigned char)*c) * UINT64_C(0x100000001b3);
  h ^= h >> 30;
  h *= UINT64_C(0xbf58476d1ce4e5b9);
  h ^= h >> 27;
  h *= UINT64_C(0x94d049bb133111eb);
  h ^= h >> 31;
  return h ? h : 1; /* xorshift64 never leaves 0 */
}

static void random_conv(hetc_plugin_workload_t *w, hetc_plugin_tensor_t *inputs, int index) {
  static const kernel_check_conv_limits_t limits = {40, 72, 40, 14, 20};
  uint64_t rng = draw_stream((uint64_t)index, NULL);
  hetc_kernel_check_random_conv(&rng, &limits, index, w, inputs);
  if ((index / 3) % 2 == 1) hetc_kernel_check_conv_3x3_stride1(w, inputs);
}

static void describe(const hetc_plugin_workload_t *w, char *buf, size_t size) {
  const hetc_plugin_tensor_t *in = &w->inputs[0];
  snprintf(buf, size, "n%lld c%lld %lldx%lld -> k%lld r%dx%d s%dx%d p%d,%d,%d,%d d%dx%d g%d b%d r%d a%d",
           (long long)in->shape[0], (long long)in->shape[1], (long long)in->shape[2], (long long)in->shape[3],
           (long long)w->output.shape[1], w->kernel[0], w->kernel[1], w->strides[0], w->strides[1],
           w->padding[0], w->padding[1], w->padding[2], w->padding[3], w->dilation[0], w->dilation[1],
           w->groups, w->epilogue.has_bias, w->epilogue.has_residual, w->epilogue.activation);
}

/* HETC_CONFORMANCE_TEMPLATES, a comma-separated list, limits a run to those
 * templates (to iterate on one); unset, every template is checked. */
static int template_selected(const char *template_name) {
  const char *list = getenv("HETC_CONFORMANCE_TEMPLATES");
  if (!list || !*list) return 1;
  const size_t n = strlen(template_name);
  for (const char *p = list; (p = strstr(p, template_name)) != NULL; p += n)
    if ((p == list || p[-1] == ',') && (p[n] == 0 || p[n] == ',')) return 1;
  return 0;
}

/* The target under test (HETC_CONFORMANCE_TARGET, default vec), or a
 * skip (77) where the machine cannot run the forced HETC_CPU_ISA. */
static hetc_plugin_entry_t *open_target(hetc_registry_t **registry) {
  const char *target = getenv("HETC_CONFORMANCE_TARGET") ? getenv("HETC_CONFORMANCE_TARGET") : "vec";
  assert_null(hetc_registry_open(registry));
  hetc_plugin_entry_t *entry = NULL;
  hetc_status_t status = hetc_registry_target(*registry, target, &entry);
  if (status && hetc_status_code(status) == HETC_STATUS_UNAVAILABLE && getenv("HETC_CPU_ISA")) {
    printf("skipped: this machine cannot run HETC_CPU_ISA=%s: %s\n", getenv("HETC_CPU_ISA"),
           hetc_status_message(status));
    exit(77);
  }
  if (status) fail_msg("%s", hetc_status_message(status));
  return entry;
}

/* Template t on workload w with its default config and, unless
 * default_only, one sampled valid config (drawn from `rng`, the check's
 * own stream), each against the reference; returns the larger error. */
static double check_template(hetc_plugin_entry_t *entry, const hetc_plugin_workload_t *w, int32_t t,
                             const char *template_name, const char *text, uint64_t seed, uint64_t rng,
                             int default_only) {
  hetc_plugin_space_t *space = NULL;
  assert_null(hetc_space_create(&space));
  hetc_status_t status = entry->plugin->template_define_space(entry->instance, 0, w, t, space);
  if (status) fail_msg("%s: %s: define_space: %s", text, template_name, hetc_status_message(status));
  int64_t indices[2];
  assert_null(hetc_space_default(space, &indices[0]));
  status = hetc_space_sample_valid(space, &rng, &indices[1]);
  if (status) fail_msg("%s: %s: %s", text, template_name, hetc_status_message(status));
  double worst = 0;
  for (int s = 0; s < (default_only ? 1 : 2); ++s) {
    hetc_space_config_t config;
    assert_null(hetc_space_config_at(space, indices[s], &config));
    kernel_check_result_t result;
    status = hetc_kernel_check_run(entry, w, t, &config.view, seed + (uint64_t)s, 0, &result);
    /* A space whose constraint cannot span every knob (cuda's NCHW
     * template: tens of millions of points) leaves some device limits
     * to build(), which refuses before compiling: draw again. */
    for (int redraw = 0; s == 1 && status && hetc_status_code(status) == HETC_STATUS_DEVICE_LIMITS && redraw < 50;
         ++redraw) {
      hetc_status_free(status);
      assert_null(hetc_space_sample_valid(space, &rng, &indices[1]));
      assert_null(hetc_space_config_at(space, indices[1], &config));
      status = hetc_kernel_check_run(entry, w, t, &config.view, seed + (uint64_t)s, 0, &result);
    }
    if (status) fail_msg("%s: %s config %lld: %s", text, template_name, (long long)indices[s], hetc_status_message(status));
    printf("%-28s cfg %6lld of %6lld  %-70s err %.2e\n", template_name, (long long)indices[s],
           (long long)hetc_space_size(space), text, result.max_relative_error);
    if (!(result.max_relative_error <= TOLERANCE))
      fail_msg("%s: %s config %lld: max relative error %.3e", text, template_name, (long long)indices[s],
               result.max_relative_error);
    if (result.max_relative_error > worst) worst = result.max_relative_error;
  }
  hetc_space_free(space);
  return worst;
}

static void conv_templates_match_reference(void **state) {
  (void)state;
  const int min_workloads = getenv("HETC_CONFORMANCE_WORKLOADS") ? atoi(getenv("HETC_CONFORMANCE_WORKLOADS")) : 30;
  assert_true(min_workloads >= 1);
  hetc_registry_t *registry = NULL;
  hetc_plugin_entry_t *entry = open_target(&registry);
  const hetc_plugin_t *p = entry->plugin;
  /* Configs checked per template name: which template sits at an index
   * depends on the workload (e.g. depthwise vs dense conv). */
  char names[MAX_TEMPLATES][64] = {{0}};
  /* Each workload checks the default and one sampled config, so a template
   * with 30 workloads has had 30 sampled configs. */
  int workloads[MAX_TEMPLATES] = {0};
  int num_names = 0;
  double worst = 0;
  for (int i = 0; i < MAX_DRAWS; ++i) {
    hetc_plugin_workload_t w;
    hetc_plugin_tensor_t inputs[2];
    random_conv(&w, inputs, i);
    char text[200];
    describe(&w, text, sizeof(text));
    assert_true(p->supports(entry->instance, 0, &w));
    int32_t templates = p->template_count(entry->instance, 0, &w);
    assert_true(templates >= 1 && templates <= MAX_TEMPLATES);
    for (int32_t t = 0; t < templates; ++t) {
      const char *template_name = p->template_name(entry->instance, 0, &w, t);
      int slot = 0;
      while (slot < num_names && strcmp(names[slot], template_name) != 0) ++slot;
      assert_true(slot < MAX_TEMPLATES);
      if (slot == num_names) snprintf(names[num_names++], sizeof(names[0]), "%s", template_name);
      if (workloads[slot] >= min_workloads || !template_selected(template_name)) continue;
      double e = check_template(entry, &w, t, names[slot], text, (uint64_t)(i * 31),
                                draw_stream((uint64_t)i, template_name), 0);
      if (e > worst) worst = e;
      ++workloads[slot];
    }
    int done = i >= 5; /* every draw class seen */
    for (int n = 0; n < num_names; ++n)
      done = done && (workloads[n] >= min_workloads || !template_selected(names[n]));
    if (done) break;
  }
  for (int n = 0; n < num_names; ++n) {
    if (!template_selected(names[n])) continue;
    printf("template %s: %d workloads, each with its default and a sampled config\n", names[n], workloads[n]);
    assert_true(workloads[n] >= min_workloads);
  }
  printf("worst max relative error %.3e\n", worst);
  hetc_registry_free(registry);
}

/* A layer of a real CNN, channels scaled down: the shapes random draws
 * reach only by chance. */
typedef struct cnn_layer_t {
  const char *name;
  int64_t c_in, c_out, h, w;
  int32_t kernel, stride, pad, dilation, groups;
  int32_t activation, has_residual;
} cnn_layer_t;

static const cnn_layer_t CNN_LAYERS[] = {
    {"mobilenet depthwise 3x3 s1", 32, 32, 14, 14, 3, 1, 1, 1, 32, HETC_PLUGIN_ACT_RELU6, 0},
    {"mobilenet depthwise 3x3 s2", 24, 24, 15, 15, 3, 2, 1, 1, 24, HETC_PLUGIN_ACT_RELU6, 0},
    {"efficientnet depthwise 5x5 s1", 40, 40, 14, 14, 5, 1, 2, 1, 40, HETC_PLUGIN_ACT_SILU, 0},
    {"mnasnet depthwise 5x5 s2", 36, 36, 17, 17, 5, 2, 2, 1, 36, HETC_PLUGIN_ACT_RELU, 0},
    {"mobilenet_v3 depthwise 5x5 s2", 48, 48, 14, 14, 5, 2, 2, 1, 48, HETC_PLUGIN_ACT_HARDSWISH, 0},
    {"deeplab aspp 3x3 d12 (taps in the padding)", 16, 16, 14, 14, 3, 1, 12, 12, 1, HETC_PLUGIN_ACT_RELU, 0},
    {"deeplab aspp 3x3 d36 on 14x14", 24, 16, 14, 14, 3, 1, 36, 36, 1, HETC_PLUGIN_ACT_RELU, 0},
    {"dilated 3x3 d2", 16, 24, 13, 13, 3, 1, 2, 2, 1, HETC_PLUGIN_ACT_NONE, 1},
    {"regnet grouped 3x3, 8 a group", 48, 48, 14, 14, 3, 1, 1, 1, 6, HETC_PLUGIN_ACT_RELU, 0},
    {"regnet grouped 3x3 s2, 8 a group", 24, 24, 15, 15, 3, 2, 1, 1, 3, HETC_PLUGIN_ACT_RELU, 0},
    {"resnext grouped 3x3, 4 a group", 64, 64, 8, 8, 3, 1, 1, 1, 16, HETC_PLUGIN_ACT_RELU, 0},
    {"grouped 3x3, 16 a group", 64, 64, 9, 9, 3, 1, 1, 1, 4, HETC_PLUGIN_ACT_SIGMOID, 1},
    {"resnet stem 7x7 s2 from RGB", 3, 32, 32, 32, 7, 2, 3, 1, 1, HETC_PLUGIN_ACT_RELU, 0},
    {"resnet downsample 1x1 s2", 32, 48, 14, 14, 1, 2, 0, 1, 1, HETC_PLUGIN_ACT_NONE, 1},
    {"efficientnet 1x1 with silu", 40, 24, 12, 12, 1, 1, 0, 1, 1, HETC_PLUGIN_ACT_SILU, 0},
    {"3x3 s1 with residual and hardsigmoid", 48, 48, 10, 10, 3, 1, 1, 1, 1, HETC_PLUGIN_ACT_HARDSIGMOID, 1},
};

/* Every template that serves a real-CNN layer, with its default and a
 * sampled config, against the reference: depthwise 3x3 and 5x5 at strides
 * 1 and 2, dilated convs whose taps lie wholly in the padding, grouped
 * convs with 4, 8 and 16 channels a group, the RGB stem. A run with fewer
 * workloads (HETC_CONFORMANCE_WORKLOADS, the sanitizer builds of slowly
 * building backends) checks the defaults only. */
static void real_cnn_layers_match_reference(void **state) {
  (void)state;
  const int default_only = getenv("HETC_CONFORMANCE_WORKLOADS") && atoi(getenv("HETC_CONFORMANCE_WORKLOADS")) < 30;
  hetc_registry_t *registry = NULL;
  hetc_plugin_entry_t *entry = open_target(&registry);
  const hetc_plugin_t *p = entry->plugin;
  double worst = 0;
  for (size_t i = 0; i < sizeof(CNN_LAYERS) / sizeof(CNN_LAYERS[0]); ++i) {
    const cnn_layer_t *l = &CNN_LAYERS[i];
    hetc_plugin_workload_t w;
    memset(&w, 0, sizeof(w));
    hetc_plugin_tensor_t inputs[2] = {{HETC_PLUGIN_DTYPE_FLOAT32, 4, {1, l->c_in, l->h, l->w}, {0, 0}}};
    const int64_t reach = (int64_t)l->dilation * (l->kernel - 1) + 1;
    const int64_t oh = (l->h + 2 * l->pad - reach) / l->stride + 1, ow = (l->w + 2 * l->pad - reach) / l->stride + 1;
    w.op = HETC_PLUGIN_OP_CONV2D;
    w.output = (hetc_plugin_tensor_t){HETC_PLUGIN_DTYPE_FLOAT32, 4, {1, l->c_out, oh, ow}, {0, 0}};
    inputs[1] = w.output;
    w.inputs = inputs;
    w.num_inputs = 1 + l->has_residual;
    w.kernel[0] = w.kernel[1] = l->kernel;
    w.strides[0] = w.strides[1] = l->stride;
    for (int k = 0; k < 4; ++k) w.padding[k] = l->pad;
    w.dilation[0] = w.dilation[1] = l->dilation;
    w.groups = l->groups;
    w.epilogue = (hetc_plugin_epilogue_t){1, l->has_residual, l->activation, 0};
    char text[200];
    describe(&w, text, sizeof(text));
    printf("%s: %s\n", l->name, text);
    assert_true(p->supports(entry->instance, 0, &w));
    const int32_t templates = p->template_count(entry->instance, 0, &w);
    assert_true(templates >= 1 && templates <= MAX_TEMPLATES);
    for (int32_t t = 0; t < templates; ++t) {
      const char *template_name = p->template_name(entry->instance, 0, &w, t);
      if (!template_selected(template_name)) continue;
      double e = check_template(entry, &w, t, template_name, l->name, 1000 + i * 31,
                                draw_stream(MAX_DRAWS + i, template_name), default_only);
      if (e > worst) worst = e;
    }
  }
  printf("worst max relative error %.3e\n", worst);
  hetc_registry_free(registry);
}

int main(void) {
  const struct CMUnitTest tests[] = {cmocka_unit_test(conv_templates_match_reference),
                                     cmocka_unit_test(real_cnn_layers_match_reference)};
  return cmocka_run_group_tests(tests, NULL, NULL);
}
