/* driver/records/transfer_learning.h -- transfer learning for the cost model
 * (README.md, "Tuning").
 *
 * Two cost models stacked. The global model is trained on every relevant
 * record in the store (other tasks, templates, devices), grouped by task.
 * The task model is trained on the current task's own measurements with
 * the global model's margin as its base margin, so it learns only a
 * correction to the global prior. Its shrinkage grows with its rows:
 *
 *   eta_task = eta * n / (n + HETC_TRANSFER_HALF_WEIGHT_ROWS)
 *
 * for n own rows, with the same number of rounds and depth as the global
 * model. With n = 0 there is no task model and predictions are the
 * global model's; at 32 rows the correction gets half the step size the
 * global model had, at 288 rows 90%. The rule is smooth in n, so there is
 * no minimum-record cliff, and since the pairwise objective stops pulling
 * once a pair is ordered, a strong correction only happens where the
 * task's own measurements contradict the prior.
 *
 * Threads: hetc_transfer_model_predict and the save may run concurrently
 * with each other; fitting, loading and freeing need exclusive use. */
#ifndef HETC_DRIVER_RECORDS_TRANSFER_LEARNING_H_
#define HETC_DRIVER_RECORDS_TRANSFER_LEARNING_H_

#include <stdint.h>

#include "common/status.h"
#include "records/cost_model.h"

/* Own rows at which the task model's step size is half the global one's. */
#define HETC_TRANSFER_HALF_WEIGHT_ROWS 32

typedef struct hetc_transfer_model_t hetc_transfer_model_t;

/* Both models untrained. `options` (NULL: defaults) is copied; it applies
 * to the global model as given and to the task model with the scaled eta
 * above. *out is owned by the caller and released with
 * hetc_transfer_model_free. */
hetc_status_t hetc_transfer_model_create(int32_t num_features,
                                         const hetc_cost_model_options_t *options,
                                         hetc_transfer_model_t **out);

/* Releases both models. NULL is a no-op. */
void hetc_transfer_model_free(hetc_transfer_model_t *m);

/* Retrains the global model from scratch on every relevant record (as
 * hetc_cost_model_train, no base margin; all tasks, grouped by
 * group_sizes). The task model was a correction to the previous global
 * model, so it is dropped: call hetc_transfer_model_fit_task again. On
 * failure both models are unchanged. Inputs are borrowed for the call. */
hetc_status_t hetc_transfer_model_fit_global(hetc_transfer_model_t *m, const float *features,
                                             const float *labels, int64_t rows,
                                             const uint32_t *group_sizes, int32_t num_groups);

/* Retrains the task model from scratch on the current task's own rows
 * (one group; labels normalised within the task as for the global model).
 * rows may be 0: the task model is dropped and predictions are the global
 * model's. On failure the previous task model stays. */
hetc_status_t hetc_transfer_model_fit_task(hetc_transfer_model_t *m, const float *features,
                                           const float *labels, int64_t rows);

/* Scores for rows of the current task (higher = faster): the global
 * model's margin plus the task model's correction. out_scores is
 * caller-owned, `rows` floats. */
hetc_status_t hetc_transfer_model_predict(const hetc_transfer_model_t *m, const float *features,
                                          int64_t rows, float *out_scores);

/* Saves the global model (hetc_cost_model_save: atomic). The task model is
 * cheap to refit from the task's records and is not saved. */
hetc_status_t hetc_transfer_model_save_global(const hetc_transfer_model_t *m, const char *path);

/* Replaces the global model by one saved with
 * hetc_transfer_model_save_global (errors as hetc_cost_model_load) and
 * drops the task model, as fit_global does. On failure m is unchanged. */
hetc_status_t hetc_transfer_model_load_global(hetc_transfer_model_t *m, const char *path);

/* The same through bytes (hetc_cost_model_to_bytes, _from_bytes), for a
 * store that keeps the model in its database; `name` names it in
 * messages. */
hetc_status_t hetc_transfer_model_global_bytes(const hetc_transfer_model_t *m, const char *name, char **out_bytes,
                                               size_t *out_length);
hetc_status_t hetc_transfer_model_load_global_bytes(hetc_transfer_model_t *m, const char *name, const char *bytes,
                                                    size_t length);

#endif /* HETC_DRIVER_RECORDS_TRANSFER_LEARNING_H_ */
