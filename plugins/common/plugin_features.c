/* The built-in CPU plugins' template arithmetic (plugin_features.h). */
#include "plugin_features.h"

hpc_conv_shape_t hpc_conv_shape(const hetc_plugin_workload_t *wl) {
  return (hpc_conv_shape_t){.N = (double)wl->inputs[0].shape[0],
                            .C = (double)wl->inputs[0].shape[1],
                            .H = (double)wl->inputs[0].shape[2],
                            .W = (double)wl->inputs[0].shape[3],
                            .K = (double)wl->output.shape[1],
                            .OH = (double)wl->output.shape[2],
                            .OW = (double)wl->output.shape[3],
                            .KH = wl->kernel[0],
                            .KW = wl->kernel[1],
                            .SH = wl->strides[0],
                            .SW = wl->strides[1],
                            .DH = wl->dilation[0],
                            .DW = wl->dilation[1]};
}

hpc_conv_nchw_tiles_t hpc_conv_nchw_tiles(const hpc_conv_shape_t *s, int32_t groups) {
  const double cg = s->C / groups, reduction = cg * s->KH * s->KW;
  return (hpc_conv_nchw_tiles_t){
      .row = {.spatial = s->OW,
              .reduction = reduction,
              .in = cg * hetc_kit_window_span(1, s->SH, s->KH, s->DH, s->H) * s->W,
              .weight = reduction,
              .out = s->OW},
      .plane = {.spatial = s->OH * s->OW,
                .reduction = reduction,
                .in = cg * s->H * s->W,
                .weight = reduction,
                .out = s->OH * s->OW},
      .grid = {.spatial = s->N * s->K * s->OH * s->OW,
               .reduction = reduction,
               .in = s->N * s->C * s->H * s->W,
               .weight = s->K * reduction,
               .out = s->N * s->K * s->OH * s->OW}};
}
