/* Winograd F(m x m, 3 x 3) transform matrices, from Lavin and Gray, "Fast
 * Algorithms for Convolutional Neural Networks" (2016): F(2, 3) with
 * interpolation points 0, 1, -1 and F(4, 3) with 0, 1, -1, 2, -2 (and the
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

static const double bt4[36] = {
    4, 0, -5, 0, 1, 0,   /**/
    0, -4, -4, 1, 1, 0,  /**/
    0, 4, -4, -1, 1, 0,  /**/
    0, -2, -1, 2, 1, 0,  /**/
    0, 2, -1, -2, 1, 0,  /**/
    0, 4, 0, -5, 0, 1,
};
static const double g4[18] = {
    1.0 / 4, 0, 0,                   /**/
    -1.0 / 6, -1.0 / 6, -1.0 / 6,    /**/
    -1.0 / 6, 1.0 / 6, -1.0 / 6,     /**/
    1.0 / 24, 1.0 / 12, 1.0 / 6,     /**/
    1.0 / 24, -1.0 / 12, 1.0 / 6,    /**/
    0, 0, 1,
};
static const double at4[24] = {
    1, 1, 1, 1, 1, 0,   /**/
    0, 1, -1, 2, -2, 0, /**/
    0, 1, 1, 4, 4, 0,   /**/
    0, 1, -1, 8, -8, 1,
};

static const cpu_winograd_t f2 = {2, 4, bt2, g2, at2};
static const cpu_winograd_t f4 = {4, 6, bt4, g4, at4};

const cpu_winograd_t *cpu_winograd(int64_t m) {
  return m == 2 ? &f2 : m == 4 ? &f4 : NULL;
}
