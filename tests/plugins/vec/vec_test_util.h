/* tests/plugins/vec/vec_test_util.h -- loading the vec plugin and running
 * one workload through it against the reference executor. */
#ifndef HETC_TESTS_PLUGINS_VEC_VEC_TEST_UTIL_H_
#define HETC_TESTS_PLUGINS_VEC_VEC_TEST_UTIL_H_

#include <stdint.h>

#include "fake_host.h"
#include "hetc/plugin.h"

typedef struct vec_plugin_handle_t {
  void *so;
  const hetc_plugin_t *plugin;
  hetc_plugin_instance_t *instance;
} vec_plugin_handle_t;

/* dlopens $HETC_BINARY_DIR/lib/hetc/plugins/libhetc_plugin_vec.so (or
 * $HETC_VEC_PLUGIN), queries it with the fake host. 0 on success. */
int vec_plugin_open(vec_plugin_handle_t *h, int create_instance);
void vec_plugin_close(vec_plugin_handle_t *h);

/* Tensor descriptors. */
hetc_plugin_tensor_t tensor4(int64_t n, int64_t c, int64_t h, int64_t w);
hetc_plugin_tensor_t tensor_rank(int32_t rank, const int64_t *dims);
hetc_plugin_tensor_t with_layout(hetc_plugin_tensor_t t, int32_t kind, int32_t block);

/* One workload + template + config, built (possibly on a worker thread)
 * then checked. */
typedef struct vec_case_t {
  char name[160];
  hetc_plugin_workload_t wl;
  hetc_plugin_tensor_t inputs[8];
  int32_t template_index;
  /* Added to every random input value: a large common offset checks that
   * a kernel's statistics keep the digits of the values about it. */
  float input_offset;
  int use_config;
  fake_config_t config;
  /* Filled by the build. */
  hetc_plugin_artifact_t *artifact;
  hetc_plugin_status_t status;
} vec_case_t;

/* Builds every case on `threads` threads (exercises concurrent build()). */
void vec_build_cases(vec_plugin_handle_t *h, vec_case_t *cases, int count, int threads);
/* Runs a built case on random data and compares with the reference in the
 * artifact's layouts (padding included). Returns the relative error
 * max|a-b|/max|ref|, or a negative value on a failure (printed). */
double vec_check_case(vec_plugin_handle_t *h, vec_case_t *c, uint64_t seed);
/* Defines the space of (workload, template) into `space`. */
int vec_define_space(vec_plugin_handle_t *h, const hetc_plugin_workload_t *wl,
                     int32_t template_index, hetc_plugin_space_t *space);

#endif /* HETC_TESTS_PLUGINS_VEC_VEC_TEST_UTIL_H_ */
