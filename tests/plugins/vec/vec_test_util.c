#include "vec_test_util.h"

#include <dlfcn.h>
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/status.h"
#include "reference/reference.h"

int vec_plugin_open(vec_plugin_handle_t *h, int create_instance) {
  memset(h, 0, sizeof(*h));
  char path[4096];
  const char *explicit_path = getenv("HETC_VEC_PLUGIN");
  const char *bin = getenv("HETC_BINARY_DIR");
  if (explicit_path)
    snprintf(path, sizeof(path), "%s", explicit_path);
  else
    snprintf(path, sizeof(path), "%s/lib/hetc/plugins/libhetc_plugin_vec.so", bin ? bin : ".");
  h->so = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (!h->so) {
    fprintf(stderr, "dlopen %s: %s\n", path, dlerror());
    return -1;
  }
  hetc_plugin_query_fn_t query;
  void *sym = dlsym(h->so, HETC_PLUGIN_QUERY_SYMBOL);
  memcpy(&query, &sym, sizeof(query));
  if (!query) return -1;
  h->plugin = query(HETC_PLUGIN_ABI_MAJOR, HETC_PLUGIN_ABI_MINOR, fake_host());
  if (!h->plugin) return -1;
  if (create_instance) {
    hetc_status_t s = h->plugin->instance_create(&h->instance);
    if (s) {
      fprintf(stderr, "instance_create: %s\n", hetc_status_message(s));
      hetc_status_free(s);
      return -1;
    }
  }
  return 0;
}

void vec_plugin_close(vec_plugin_handle_t *h) {
  if (h->instance) h->plugin->instance_destroy(h->instance);
  if (h->so) dlclose(h->so);
  memset(h, 0, sizeof(*h));
}

hetc_plugin_tensor_t tensor4(int64_t n, int64_t c, int64_t h, int64_t w) {
  int64_t dims[4] = {n, c, h, w};
  return tensor_rank(4, dims);
}

hetc_plugin_tensor_t tensor_rank(int32_t rank, const int64_t *dims) {
  hetc_plugin_tensor_t t;
  memset(&t, 0, sizeof(t));
  t.dtype = HETC_PLUGIN_DTYPE_FLOAT32;
  t.rank = rank;
  for (int32_t i = 0; i < rank; ++i) t.shape[i] = dims[i];
  return t;
}

hetc_plugin_tensor_t with_layout(hetc_plugin_tensor_t t, int32_t kind, int32_t block) {
  t.layout.kind = kind;
  t.layout.block = block;
  return t;
}

int vec_define_space(vec_plugin_handle_t *h, const hetc_plugin_workload_t *wl,
                     int32_t template_index, hetc_plugin_space_t *space) {
  memset(space, 0, sizeof(*space));
  hetc_status_t s =
      h->plugin->template_define_space(h->instance, 0, wl, template_index, space);
  if (s) {
    fprintf(stderr, "define_space: %s\n", hetc_status_message(s));
    hetc_status_free(s);
    return -1;
  }
  return space->has_default ? 0 : -1;
}

typedef struct build_job_t {
  vec_plugin_handle_t *h;
  vec_case_t *cases;
  int count;
  atomic_int next;
} build_job_t;

static void *build_worker(void *arg) {
  build_job_t *job = arg;
  for (;;) {
    int i = atomic_fetch_add(&job->next, 1);
    if (i >= job->count) break;
    vec_case_t *c = &job->cases[i];
    c->wl.inputs = c->inputs;
    const hetc_plugin_config_t *config = c->use_config ? fake_config_get(&c->config) : NULL;
    hetc_plugin_config_t empty = {0, NULL};
    c->status = job->h->plugin->build(job->h->instance, 0, &c->wl, c->template_index,
                                      config ? config : &empty, &c->artifact);
  }
  return NULL;
}

void vec_build_cases(vec_plugin_handle_t *h, vec_case_t *cases, int count, int threads) {
  build_job_t job = {h, cases, count, 0};
  pthread_t tids[16];
  if (threads > 16) threads = 16;
  for (int i = 0; i < threads; ++i) pthread_create(&tids[i], NULL, build_worker, &job);
  for (int i = 0; i < threads; ++i) pthread_join(tids[i], NULL);
}

/* SplitMix64 uniform floats in [-1, 1). */
static float next_float(uint64_t *state) {
  uint64_t z = (*state += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  z ^= z >> 31;
  return (float)((double)(z >> 40) * (1.0 / 16777216.0) * 2.0 - 1.0);
}

static uint64_t param_count(const hetc_plugin_workload_t *wl, int32_t index) {
  const hetc_plugin_tensor_t *in = &wl->inputs[0], *out = &wl->output;
  switch (wl->op) {
    case HETC_PLUGIN_OP_CONV2D:
      return index == 0 ? (uint64_t)(out->shape[1] * (in->shape[1] / wl->groups) *
                                     wl->kernel[0] * wl->kernel[1])
                        : (uint64_t)out->shape[1];
    case HETC_PLUGIN_OP_DENSE:
      return index == 0 ? (uint64_t)(out->shape[1] * in->shape[1]) : (uint64_t)out->shape[1];
    case HETC_PLUGIN_OP_BIAS_ADD: return (uint64_t)in->shape[1];
    case HETC_PLUGIN_OP_NORMALIZE: return (uint64_t)in->shape[wl->params.normalize.axis]; /* scale, bias */
    default: return 0;
  }
}

double vec_check_case(vec_plugin_handle_t *h, vec_case_t *c, uint64_t seed) {
  const hetc_plugin_t *p = h->plugin;
  if (c->status || !c->artifact) {
    fprintf(stderr, "%s: build failed: %s\n", c->name,
            c->status ? hetc_status_message(c->status) : "no artifact");
    return -1;
  }
  const hetc_plugin_artifact_info_t *info = p->artifact_info(c->artifact);
  hetc_plugin_workload_t wl = c->wl;
  /* HETC_TEST_EMIT_DIR: keep every kernel's source for reading. */
  const char *emit_dir = getenv("HETC_TEST_EMIT_DIR");
  if (emit_dir) {
    char prefix[200];
    size_t k = 0;
    for (const char *q = c->name; *q && k + 1 < sizeof(prefix); ++q)
      prefix[k++] = (char)((*q >= 'a' && *q <= 'z') || (*q >= '0' && *q <= '9') ? *q : '_');
    prefix[k] = '\0';
    hetc_status_t es = p->artifact_emit(h->instance, c->artifact, emit_dir, prefix);
    if (es) {
      fprintf(stderr, "%s: emit: %s\n", c->name, hetc_status_message(es));
      hetc_status_free(es);
    }
  }
  hetc_plugin_tensor_t phys_inputs[8];
  int32_t ni = wl.num_inputs, np = info->num_params;
  if (info->num_inputs != ni) {
    fprintf(stderr, "%s: artifact has %d inputs, workload %d\n", c->name, info->num_inputs, ni);
    return -1;
  }
  float *logical_in[8] = {0}, *phys_in[8] = {0}, *params[2] = {0};
  hetc_plugin_buffer_t *bufs[12] = {0};
  int32_t nb = 0;
  double result = -1;
  uint64_t state = seed;
  hetc_status_t s = NULL;
  for (int32_t i = 0; i < ni; ++i) {
    phys_inputs[i] = c->inputs[i];
    phys_inputs[i].layout = info->input_layouts[i];
    int64_t n = hetc_reference_logical_count(&c->inputs[i]);
    int64_t pn = hetc_layout_element_count(&phys_inputs[i]);
    logical_in[i] = malloc(sizeof(float) * (size_t)n);
    phys_in[i] = malloc(sizeof(float) * (size_t)pn);
    for (int64_t k = 0; k < n; ++k) logical_in[i][k] = next_float(&state) + c->input_offset;
    hetc_plugin_tensor_t rm = with_layout(c->inputs[i], HETC_PLUGIN_LAYOUT_ROW_MAJOR, 0);
    if ((s = hetc_layout_convert(&rm, logical_in[i], &phys_inputs[i], phys_in[i]))) goto done;
    if ((s = p->buffer_alloc(h->instance, 0, (uint64_t)pn * 4, &bufs[nb]))) goto done;
    if ((s = p->buffer_write(h->instance, bufs[nb], 0, phys_in[i], (uint64_t)pn * 4))) goto done;
    ++nb;
  }
  for (int32_t i = 0; i < np; ++i) {
    uint64_t n = param_count(&wl, i);
    params[i] = malloc(sizeof(float) * n);
    for (uint64_t k = 0; k < n; ++k) params[i][k] = next_float(&state);
    if ((s = p->buffer_alloc(h->instance, 0, info->param_bytes[i], &bufs[nb]))) goto done;
    void *packed = p->buffer_host_pointer(h->instance, bufs[nb]);
    if ((s = p->pack_param(c->artifact, i, params[i], n, packed))) goto done;
    ++nb;
  }
  hetc_plugin_tensor_t phys_out = c->wl.output;
  phys_out.layout = info->output_layout;
  int64_t on = hetc_layout_element_count(&phys_out);
  float *got = malloc(sizeof(float) * (size_t)on), *want = malloc(sizeof(float) * (size_t)on);
  for (int64_t k = 0; k < on; ++k) got[k] = 777.f; /* padding must be written */
  if ((s = p->buffer_alloc(h->instance, 0, (uint64_t)on * 4, &bufs[nb]))) goto done_out;
  if ((s = p->buffer_write(h->instance, bufs[nb], 0, got, (uint64_t)on * 4))) goto done_out;
  int32_t out_index = nb++;
  wl.inputs = phys_inputs;
  wl.output = phys_out;
  const float *cin[8];
  for (int32_t i = 0; i < ni; ++i) cin[i] = phys_in[i];
  const float *cparams[2] = {params[0], params[1]};
  if ((s = hetc_reference_run_op(&wl, cin, cparams, want))) goto done_out;
  /* On hetc's pool, then serially in scattered chunks (every parallel body
   * must compute exactly its own range). */
  static const fake_parallel_t modes[2] = {FAKE_PARALLEL_POOL, FAKE_PARALLEL_SCATTERED};
  static const char *const mode_names[2] = {"on the pool", "in scattered chunks"};
  result = 0;
  for (int m = 0; m < 2; ++m) {
    for (int64_t k = 0; k < on; ++k) got[k] = 777.f; /* padding must be written */
    if ((s = p->buffer_write(h->instance, bufs[out_index], 0, got, (uint64_t)on * 4))) break;
    fake_host_set_parallel(modes[m]);
    s = p->run(h->instance, c->artifact, bufs, nb);
    fake_host_set_parallel(FAKE_PARALLEL_POOL);
    if (s) break;
    if ((s = p->buffer_read(h->instance, bufs[out_index], 0, got, (uint64_t)on * 4))) break;
    double max_ref = 0, max_diff = 0;
    int64_t worst = 0;
    for (int64_t k = 0; k < on; ++k) {
      double d = fabs((double)got[k] - (double)want[k]);
      if (!(d <= max_diff)) {
        max_diff = isnan(d) ? INFINITY : d;
        worst = k;
      }
      if (fabs((double)want[k]) > max_ref) max_ref = fabs((double)want[k]);
    }
    double error = max_diff / (max_ref > 1e-6 ? max_ref : 1e-6);
    if (error > 1e-4)
      fprintf(stderr, "%s: %s: relative error %g at element %lld: got %g want %g\n  %s\n",
              c->name, mode_names[m], error, (long long)worst, (double)got[worst],
              (double)want[worst], info->description);
    if (!(error <= result)) result = error;
  }
done_out:
  free(got);
  free(want);
done:
  if (s) {
    fprintf(stderr, "%s: %s\n", c->name, hetc_status_message(s));
    hetc_status_free(s);
    result = -1;
  }
  for (int32_t i = 0; i < nb; ++i) p->buffer_free(h->instance, bufs[i]);
  for (int32_t i = 0; i < 8; ++i) {
    free(logical_in[i]);
    free(phys_in[i]);
  }
  free(params[0]);
  free(params[1]);
  return result;
}
