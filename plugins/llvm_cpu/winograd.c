/* Winograd F(m x m, 3 x 3) transform matrices (Lavin and Gray, "Fast
 * Algorithms for Convolutional Neural Networks", 2016): F(2, 3) with
 * interpolation points 0, 1, -1, F(4, 3) with the five below (and the
 * point at infinity in both). */
#include "cpu.h"

static const double bt2[16] = {
    1, 0, -1, 0,  /**/
    0, 1, 1, 0,   /**/
    0, -1, 1, 0,  /**/
    0, 1, 0, -1,
};
static const double g2[12] = {
    1, 0, 0,  /**/
    0.5, 0.5, 0.5,  /**/
    0.5, -0.5, 0.5, /**/
    0, 0, 1,
};
static const double at2[8] = {
    1, 1, 1, 0, /**/
    0, 1, -1, -1,
};

/* F(4, 3) interpolates at 0, -1, 1, 1/2, -2 rather than Lavin's 0, 1, -1,
 * 2, -2: with 256 input channels its fp32 error is about 1.5 times lower
 * (2.1e-6 against 3.3e-6 of outputs of unit RMS; direct convolution:
 * 4.3e-7), the choice of points Barabasz et al. found best in "Error
 * Analysis and Improving the Accuracy of Winograd Convolution for Deep
 * Neural Networks" (ACM TOMS, 2020). Deep nets feel it: torchvision's
 * ResNet-152 drifted 1.0e-3 from onnxruntime with Lavin's points. The
 * input transform has 26 nonzeros instead of 22; G is applied in double
 * when the weights are packed. */
static const double bt4[36] = {
    1, -1.5, -2, 1.5, 1, 0,   /**/
    0, 1, -2.5, 0.5, 1, 0,    /**/
    0, -1, 0.5, 2.5, 1, 0,    /**/
    0, -2, -1, 2, 1, 0,       /**/
    0, 0.5, -1, -0.5, 1, 0,   /**/
    0, 1, -1.5, -2, 1.5, 1,
};
static const double g4[18] = {
    1, 0, 0,                                /**/
    -1.0 / 3, 1.0 / 3, -1.0 / 3,            /**/
    1.0 / 3, 1.0 / 3, 1.0 / 3,              /**/
    -16.0 / 15, -8.0 / 15, -4.0 / 15,       /**/
    1.0 / 15, -2.0 / 15, 4.0 / 15,          /**/
    0, 0, 1,
};
static const double at4[24] = {
    1, 1, 1, 1, 1, 0,          /**/
    0, -1, 1, 0.5, -2, 0,      /**/
    0, 1, 1, 0.25, 4, 0,       /**/
    0, -1, 1, 0.125, -8, 1,
};

static const cpu_winograd_t f2 = {2, 4, bt2, g2, at2};
static const cpu_winograd_t f4 = {4, 6, bt4, g4, at4};

const cpu_winograd_t *cpu_winograd(int64_t m) {
  return m == 2 ? &f2 : m == 4 ? &f4 : NULL;
}
