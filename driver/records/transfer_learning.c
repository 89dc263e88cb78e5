/* driver/records/transfer_learning.c -- the global prior and the task's correction
 * (rule and reasons in transfer.h). */
#include "records/transfer_learning.h"

#include <stdlib.h>

struct hetc_transfer_model_t {
  int32_t num_features;
  hetc_cost_model_options_t options; /* as the caller gave them (zeros kept) */
  hetc_cost_model_t *global;         /* never NULL; owned */
  hetc_cost_model_t *task;           /* NULL: no own rows yet; owned */
};

hetc_status_t hetc_transfer_model_create(int32_t num_features,
                                         const hetc_cost_model_options_t *options,
                                         hetc_transfer_model_t **out) {
  if (!out) return hetc_status_new(HETC_STATUS_INVALID_ARGUMENT, "transfer model: no output");
  hetc_transfer_model_t *m = calloc(1, sizeof(*m));
  if (!m) return hetc_status_new(HETC_STATUS_OUT_OF_MEMORY, "transfer model");
  m->num_features = num_features;
  if (options) m->options = *options;
  /* Creating the global model validates num_features and the options. */
  hetc_status_t status = hetc_cost_model_create(num_features, options, &m->global);
  if (status) {
    free(m);
    return status;
  }
  *out = m;
  return NULL;
}

void hetc_transfer_model_free(hetc_transfer_model_t *m) {
  if (!m) return;
  hetc_cost_model_free(m->global);
  hetc_cost_model_free(m->task);
  free(m);
}

/* Installs a new global model; the task model corrected the old one, so it
 * goes too. */
static void transfer_replace_global(hetc_transfer_model_t *m, hetc_cost_model_t *global) {
  hetc_cost_model_free(m->global);
  m->global = global;
  hetc_cost_model_free(m->task);
  m->task = NULL;
}

hetc_status_t hetc_transfer_model_fit_global(hetc_transfer_model_t *m, const float *features,
                                             const float *labels, int64_t rows,
                                             const uint32_t *group_sizes, int32_t num_groups) {
  if (!m) return hetc_status_new(HETC_STATUS_INVALID_ARGUMENT, "transfer model: no model");
  /* A fresh model rather than retraining m->global in place, so that a
   * failure leaves the old prior (and the task model on top of it) intact. */
  hetc_cost_model_t *global = NULL;
  HETC_RETURN_IF_ERROR(hetc_cost_model_create(m->num_features, &m->options, &global));
  hetc_status_t status =
      hetc_cost_model_train(global, features, labels, NULL, rows, group_sizes, num_groups);
  if (status) {
    hetc_cost_model_free(global);
    return hetc_status_annotate(status, "global model");
  }
  transfer_replace_global(m, global);
  return NULL;
}

hetc_status_t hetc_transfer_model_fit_task(hetc_transfer_model_t *m, const float *features,
                                           const float *labels, int64_t rows) {
  if (!m) return hetc_status_new(HETC_STATUS_INVALID_ARGUMENT, "transfer model: no model");
  if (rows < 0 || rows > UINT32_MAX)
    return hetc_status_new(HETC_STATUS_INVALID_ARGUMENT, "task model: %lld rows",
                           (long long)rows);
  if (rows == 0) {
    hetc_cost_model_free(m->task);
    m->task = NULL;
    return NULL;
  }
  hetc_cost_model_options_t options = m->options;
  double eta = options.eta > 0.0 ? options.eta : HETC_COST_MODEL_DEFAULT_ETA;
  options.eta = eta * (double)rows / (double)(rows + HETC_TRANSFER_HALF_WEIGHT_ROWS);

  hetc_status_t status = NULL;
  hetc_cost_model_t *task = NULL;
  float *prior = malloc((size_t)rows * sizeof(*prior));
  if (!prior) return hetc_status_new(HETC_STATUS_OUT_OF_MEMORY, "task model: prior");
  status = hetc_cost_model_predict(m->global, features, NULL, rows, prior);
  if (status) goto cleanup;
  status = hetc_cost_model_create(m->num_features, &options, &task);
  if (status) goto cleanup;
  uint32_t group_size = (uint32_t)rows;
  status = hetc_cost_model_train(task, features, labels, prior, rows, &group_size, 1);
  if (status) goto cleanup;
  hetc_cost_model_free(m->task);
  m->task = task;
  task = NULL;

cleanup:
  hetc_cost_model_free(task);
  free(prior);
  return hetc_status_annotate(status, "task model");
}

hetc_status_t hetc_transfer_model_predict(const hetc_transfer_model_t *m, const float *features,
                                          int64_t rows, float *out_scores) {
  if (!m) return hetc_status_new(HETC_STATUS_INVALID_ARGUMENT, "transfer model: no model");
  HETC_RETURN_IF_ERROR(hetc_cost_model_predict(m->global, features, NULL, rows, out_scores));
  if (!m->task) return NULL;
  /* The global margin is the task model's base margin; predict allows it
   * to share the output array. */
  return hetc_cost_model_predict(m->task, features, out_scores, rows, out_scores);
}

hetc_status_t hetc_transfer_model_save_global(const hetc_transfer_model_t *m, const char *path) {
  if (!m) return hetc_status_new(HETC_STATUS_INVALID_ARGUMENT, "transfer model: no model");
  return hetc_cost_model_save(m->global, path);
}

hetc_status_t hetc_transfer_model_global_bytes(const hetc_transfer_model_t *m, const char *name, char **out_bytes,
                                               size_t *out_length) {
  if (!m) return hetc_status_new(HETC_STATUS_INVALID_ARGUMENT, "transfer model: no model");
  return hetc_cost_model_to_bytes(m->global, name, out_bytes, out_length);
}

hetc_status_t hetc_transfer_model_load_global_bytes(hetc_transfer_model_t *m, const char *name, const char *bytes,
                                                    size_t length) {
  if (!m) return hetc_status_new(HETC_STATUS_INVALID_ARGUMENT, "transfer model: no model");
  hetc_cost_model_t *global = NULL;
  HETC_RETURN_IF_ERROR(hetc_cost_model_from_bytes(name, bytes, length, m->num_features, &m->options, &global));
  transfer_replace_global(m, global);
  return NULL;
}

hetc_status_t hetc_transfer_model_load_global(hetc_transfer_model_t *m, const char *path) {
  if (!m) return hetc_status_new(HETC_STATUS_INVALID_ARGUMENT, "transfer model: no model");
  hetc_cost_model_t *global = NULL;
  HETC_RETURN_IF_ERROR(
      hetc_cost_model_load_with_options(path, m->num_features, &m->options, &global));
  transfer_replace_global(m, global);
  return NULL;
}
