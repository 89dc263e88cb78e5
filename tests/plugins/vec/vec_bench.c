/* vec_bench: times the vec plugin's conv2d templates on ResNet-50 layers
 * and prints a table (GFLOPS, average innermost loop length). Not a test.
 *
 *   vec_bench [--emit DIR] [--all]
 *
 * --emit writes each kernel's C source and object into DIR; --all also
 * times every point of the NCHWc space (slow). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/status.h"
#include "fake_host.h"
#include "vec_test_util.h"

typedef struct layer_t {
  const char *name;
  int64_t c, hw, k;
  int kernel, stride, pad;
} layer_t;

static const layer_t layers[] = {
    {"conv1 7x7/2 3->64 224", 3, 224, 64, 7, 2, 3},
    {"res2 1x1 64->64 56", 64, 56, 64, 1, 1, 0},
    {"res2 3x3 64->64 56", 64, 56, 64, 3, 1, 1},
    {"res2 1x1 64->256 56", 64, 56, 256, 1, 1, 0},
    {"res3 3x3 128->128 28", 128, 28, 128, 3, 1, 1},
    {"res4 3x3 256->256 14", 256, 14, 256, 3, 1, 1},
    {"res4 1x1 256->1024 14", 256, 14, 1024, 1, 1, 0},
    {"res5 3x3 512->512 7", 512, 7, 512, 3, 1, 1},
};

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* Builds and times one config; returns median seconds, <0 on failure. */
static double time_one(vec_plugin_handle_t *h, const hetc_plugin_workload_t *wl, int32_t tmpl,
                       fake_config_t *cfg, double *out_avg, const char *emit_dir,
                       const char *prefix) {
  hetc_plugin_artifact_t *a = NULL;
  hetc_status_t s = h->plugin->build(h->instance, 0, wl, tmpl, fake_config_get(cfg), &a);
  if (s) {
    fprintf(stderr, "build: %s\n", hetc_status_message(s));
    hetc_status_free(s);
    return -1;
  }
  const hetc_plugin_artifact_info_t *info = h->plugin->artifact_info(a);
  *out_avg = info->avg_inner_loop_length;
  if (emit_dir) {
    s = h->plugin->artifact_emit(h->instance, a, emit_dir, prefix);
    if (s) {
      fprintf(stderr, "emit: %s\n", hetc_status_message(s));
      hetc_status_free(s);
    }
  }
  hetc_plugin_buffer_t *bufs[8];
  int nb = 0;
  for (int32_t i = 0; i < info->num_inputs; ++i) {
    hetc_plugin_tensor_t t = wl->inputs[i];
    int64_t b = info->input_layouts[i].block > 0 ? info->input_layouts[i].block : 1;
    uint64_t bytes = (uint64_t)(t.shape[0] * ((t.shape[1] + b - 1) / b * b) * t.shape[2] *
                                t.shape[3]) * 4;
    h->plugin->buffer_alloc(h->instance, 0, bytes, &bufs[nb++]);
  }
  for (int32_t i = 0; i < info->num_params; ++i)
    h->plugin->buffer_alloc(h->instance, 0, info->param_bytes[i], &bufs[nb++]);
  {
    hetc_plugin_tensor_t t = wl->output;
    int64_t b = info->output_layout.block > 0 ? info->output_layout.block : 1;
    uint64_t bytes = (uint64_t)(t.shape[0] * ((t.shape[1] + b - 1) / b * b) * t.shape[2] *
                                t.shape[3]) * 4;
    h->plugin->buffer_alloc(h->instance, 0, bytes, &bufs[nb++]);
  }
  double samples[5];
  double seconds = -1;
  s = h->plugin->time(h->instance, a, bufs, nb, 3, 5, samples);
  if (s) {
    fprintf(stderr, "time: %s\n", hetc_status_message(s));
    hetc_status_free(s);
  } else {
    qsort(samples, 5, sizeof(double), cmp_double);
    seconds = samples[2];
  }
  for (int i = 0; i < nb; ++i) h->plugin->buffer_free(h->instance, bufs[i]);
  h->plugin->artifact_release(h->instance, a);
  return seconds;
}

int main(int argc, char **argv) {
  const char *emit_dir = NULL;
  int all = 0;
  for (int i = 1; i < argc; ++i) {
    if (!strcmp(argv[i], "--emit") && i + 1 < argc) emit_dir = argv[++i];
    else if (!strcmp(argv[i], "--all")) all = 1;
  }
  vec_plugin_handle_t h;
  if (vec_plugin_open(&h, 1) != 0) return 1;
  const hetc_plugin_device_t *d = h.plugin->device_get(h.instance, 0);
  printf("device %s, peak %.1f GFLOPS\n\n", d->name, d->peak_gflops_fp32);
  printf("%-24s %-8s %-52s %9s %8s\n", "layer", "template", "config", "GFLOPS", "avg_len");
  for (size_t l = 0; l < sizeof(layers) / sizeof(layers[0]); ++l) {
    const layer_t *L = &layers[l];
    hetc_plugin_tensor_t in = tensor4(1, L->c, L->hw, L->hw);
    hetc_plugin_workload_t wl;
    memset(&wl, 0, sizeof(wl));
    wl.op = HETC_PLUGIN_OP_CONV2D;
    wl.num_inputs = 1;
    wl.inputs = &in;
    wl.kernel[0] = wl.kernel[1] = L->kernel;
    wl.strides[0] = wl.strides[1] = L->stride;
    for (int i = 0; i < 4; ++i) wl.padding[i] = L->pad;
    wl.dilation[0] = wl.dilation[1] = 1;
    wl.groups = 1;
    int64_t o = (L->hw + 2 * L->pad - L->kernel) / L->stride + 1;
    wl.output = tensor4(1, L->k, o, o);
    wl.epilogue.has_bias = 1;
    wl.epilogue.activation = HETC_PLUGIN_ACT_RELU;
    double flops = 2.0 * (double)(L->k * o * o) * (double)(L->c * L->kernel * L->kernel);
    for (int32_t t = 0; t < 2; ++t) {
      hetc_plugin_space_t sp;
      if (vec_define_space(&h, &wl, t, &sp) != 0) return 1;
      /* Enumerate the whole space (small) when --all, else default plus
       * the variants of one knob at a time. */
      int32_t radix[FAKE_MAX_KNOBS], num = sp.num_knobs;
      int64_t total = 1;
      for (int32_t k = 0; k < num; ++k) {
        radix[k] = sp.knobs[k].num_values;
        total *= radix[k];
      }
      fake_config_t def;
      fake_config_default(&sp, &def);
      for (int64_t idx = -1; idx < total; ++idx) {
        fake_config_t cfg;
        fake_config_default(&sp, &cfg);
        if (idx >= 0) {
          int64_t rest = idx;
          int differs = 0;
          for (int32_t k = 0; k < num; ++k) {
            cfg.values[k] = sp.knobs[k].values[rest % radix[k]];
            rest /= radix[k];
            differs += cfg.values[k] != def.values[k];
          }
          if (!all && differs != 1) continue;
          if (differs == 0) continue;
        }
        if (!fake_config_valid(&sp, &cfg)) continue;
        char text[128];
        int used = 0;
        for (int32_t k = 0; k < num; ++k)
          used += snprintf(text + used, sizeof(text) - (size_t)used, "%s%s=%lld", k ? " " : "",
                           sp.knobs[k].name, (long long)cfg.values[k]);
        if (idx < 0) snprintf(text + used, sizeof(text) - (size_t)used, " (default)");
        char prefix[64];
        snprintf(prefix, sizeof(prefix), "l%zu_t%d_%lld", l, t, (long long)idx + 1);
        double avg = 0;
        double sec = time_one(&h, &wl, t, &cfg, &avg, emit_dir, prefix);
        printf("%-24s %-8s %-52s %9.1f %8.1f\n", L->name, t ? "nchwc" : "nchw", text,
               sec > 0 ? flops / sec * 1e-9 : NAN, avg);
        fflush(stdout);
      }
    }
  }
  vec_plugin_close(&h);
  return 0;
}
