#include "compile/config_choice.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "graph/tasks.h"
#include "space/space.h"
#include "space/task_space.h"
#include "records/features.h"
#include "records/record.h"
#include "records/records.h"
#include "records/transfer_learning.h"

/* Configs the cost model rates per kernel when nothing was tuned: enough
 * to find a good region of spaces of a few thousand valid points, cheap
 * next to building the kernel. */
#define PREDICTION_SAMPLES 512
#define MAX_TEMPLATES 64

struct hetc_config_chooser_t {
  hetc_records_t *store;
  hetc_transfer_model_t *model; /* NULL: no model saved beside the store */
};

const char *hetc_config_source_name(hetc_config_source_t source) {
  switch (source) {
    case HETC_CONFIG_TUNED: return "tuned";
    case HETC_CONFIG_NEAREST: return "nearest";
    case HETC_CONFIG_PREDICTED: return "predicted";
    default: return "default";
  }
}

hetc_status_t hetc_config_chooser_open(const char *records_path, hetc_config_chooser_t **out) {
  *out = NULL;
  char *path = records_path ? strdup(records_path) : hetc_records_default_path();
  if (!path || (!records_path && !hetc_records_may_exist(path))) {
    free(path);
    return NULL;
  }
  hetc_config_chooser_t *c = calloc(1, sizeof(*c));
  /* Compile reads the records and never creates a store: a --records that
   * names none is refused by name (NOT_FOUND). It writes only its caches
   * (the plan it chose, transfer costs), where the file can be written. */
  hetc_status_t status = c ? hetc_records_open_as(path, HETC_RECORDS_CACHE, &c->store)
                           : hetc_status_new(HETC_STATUS_OUT_OF_MEMORY, "compile");
  /* The global model the tuner kept with the store. */
  char *model = NULL;
  size_t model_bytes = 0;
  int found = 0;
  if (!status) status = hetc_records_get_model(c->store, &model, &model_bytes, &found);
  if (!status && found) {
    status = hetc_transfer_model_create(HETC_FEATURE_COUNT, NULL, &c->model);
    if (!status)
      status = hetc_transfer_model_load_global_bytes(c->model, hetc_records_model_name(c->store), model, model_bytes);
  }
  free(model);
  free(path);
  if (status) {
    hetc_config_chooser_free(c);
    return hetc_status_annotate(status, "tuning records");
  }
  *out = c;
  return NULL;
}

struct hetc_records_t *hetc_config_chooser_records(hetc_config_chooser_t *c) { return c ? c->store : NULL; }

void hetc_config_chooser_free(hetc_config_chooser_t *c) {
  if (!c) return;
  hetc_transfer_model_free(c->model);
  hetc_records_close(c->store);
  free(c);
}

/* The record's config when it fits the template's space for this
 * workload (a nearest workload's split factors may not). */
static int record_fits(const hetc_plugin_t *p, hetc_plugin_instance_t *instance, int32_t device,
                       const hetc_plugin_workload_t *workload, int32_t t, const hetc_config_json_t *config) {
  hetc_plugin_space_t *space = NULL;
  int64_t index = 0;
  hetc_status_t status = hetc_space_create(&space);
  if (!status) status = p->template_define_space(instance, device, workload, t, space);
  if (!status) status = hetc_space_index_of(space, &config->config, &index);
  int fits = !status && hetc_space_is_valid(space, index);
  hetc_status_free(status);
  hetc_space_free(space);
  return fits;
}

/* The sampled valid point the model rates best; with `with_defaults`, the
 * templates' defaults compete too. Graph-level selection, which weighs
 * every default anyway, asks without them: a prediction that only named a
 * default would add nothing to weigh. */
static hetc_status_t predict_best(hetc_config_chooser_t *c, const hetc_plugin_t *p, hetc_plugin_instance_t *instance,
                                  int32_t device, const hetc_plugin_workload_t *workload, int with_defaults,
                                  int32_t *out_template, hetc_config_json_t *out_config, int *out_found) {
  *out_found = 0;
  hetc_task_space_t *space = NULL;
  HETC_RETURN_IF_ERROR(hetc_task_space_create(p, instance, device, workload, NULL, &space));
  int64_t points[PREDICTION_SAMPLES + MAX_TEMPLATES], defaults[MAX_TEMPLATES];
  int32_t n = 0, num_defaults = 0;
  for (int32_t t = 0; t < hetc_task_space_template_count(space) && t < MAX_TEMPLATES; ++t) {
    const hetc_plugin_space_t *ts = hetc_task_space_template_space(space, t);
    int64_t local = 0;
    hetc_status_t status = ts ? hetc_space_default(ts, &local) : NULL;
    if (ts && !status) defaults[num_defaults++] = hetc_task_space_global(space, t, local);
    hetc_status_free(status);
  }
  if (with_defaults)
    for (int32_t d = 0; d < num_defaults; ++d) points[n++] = defaults[d];
  uint64_t rng = 0x5EEDULL;
  hetc_status_t status = NULL;
  for (int32_t i = 0; i < PREDICTION_SAMPLES && !status; ++i) {
    status = hetc_task_space_sample_valid(space, &rng, &points[n]);
    int is_default = 0;
    for (int32_t d = 0; !with_defaults && d < num_defaults; ++d) is_default |= points[n] == defaults[d];
    if (!status && !is_default) ++n;
  }
  hetc_status_free(status);
  status = NULL;
  float *rows = malloc(sizeof(float) * (size_t)(n + 1) * HETC_FEATURE_COUNT);
  float *scores = malloc(sizeof(float) * (size_t)(n + 1));
  if (!rows || !scores) status = hetc_status_new(HETC_STATUS_OUT_OF_MEMORY, "compile");
  for (int32_t i = 0; !status && i < n; ++i) {
    int32_t t = 0;
    hetc_space_config_t config;
    float *row = rows + (size_t)i * HETC_FEATURE_COUNT;
    hetc_status_t bad = hetc_task_space_config(space, points[i], &t, &config);
    if (!bad) bad = hetc_features_extract(p, instance, device, workload, t, &config.view, row);
    if (bad) for (int32_t f = 0; f < HETC_FEATURE_COUNT; ++f) row[f] = NAN;
    hetc_status_free(bad);
  }
  if (!status && n > 0) status = hetc_transfer_model_predict(c->model, rows, n, scores);
  int32_t best = -1;
  for (int32_t i = 0; !status && i < n; ++i)
    if (best < 0 || scores[i] > scores[best]) best = i;
  if (!status && best >= 0) {
    hetc_space_config_t config;
    status = hetc_task_space_config(space, points[best], out_template, &config);
    char *text = status ? NULL : hetc_config_to_json(&config.view);
    if (!status && !text) status = hetc_status_new(HETC_STATUS_OUT_OF_MEMORY, "compile");
    if (!status) status = hetc_config_from_json(text, out_config);
    free(text);
    *out_found = !status;
  }
  free(rows);
  free(scores);
  hetc_task_space_free(space);
  return status;
}

/* The best record among the templates (all of them, or only template
 * `only` when it is not negative): tuned, else nearest when it fits. */
static hetc_status_t choose_from_records(hetc_config_chooser_t *c, const hetc_plugin_t *p,
                                         hetc_plugin_instance_t *instance, int32_t device,
                                         const hetc_plugin_workload_t *workload, int32_t n, int32_t only,
                                         int32_t *out_template, hetc_config_json_t *out_config,
                                         hetc_config_source_t *out_source) {
  hetc_template_id_t templates[MAX_TEMPLATES];
  for (int32_t t = 0; t < n; ++t) {
    const char *name = p->template_name(instance, device, workload, t);
    templates[t] = (hetc_template_id_t){name ? name : "", p->template_version(instance, device, workload, t)};
  }
  const hetc_plugin_device_t *descriptor = p->device_get(instance, device);
  char key[HETC_TASK_KEY_SIZE];
  hetc_workload_key(workload, key, sizeof(key));
  hetc_record_t record;
  memset(&record, 0, sizeof(record));
  hetc_lookup_kind_t found = HETC_LOOKUP_NONE;
  HETC_RETURN_IF_ERROR(hetc_records_lookup(c->store, p->name,
                                           descriptor && descriptor->fingerprint ? descriptor->fingerprint : "",
                                           hetc_record_device_kind(descriptor), key,
                                           only >= 0 ? &templates[only] : templates, only >= 0 ? 1 : n,
                                           &record, &found));
  int32_t t = -1;
  for (int32_t i = 0; found != HETC_LOOKUP_NONE && i < n; ++i)
    if (!strcmp(templates[i].name, record.template_name)) t = i;
  hetc_status_t status = t >= 0 ? hetc_config_from_json(record.config_json, out_config) : NULL;
  hetc_record_clear(&record);
  if (status) return hetc_status_annotate(status, "%s: a stored config", key);
  if (t >= 0 && (found == HETC_LOOKUP_EXACT || record_fits(p, instance, device, workload, t, out_config))) {
    *out_template = t;
    *out_source = found == HETC_LOOKUP_EXACT ? HETC_CONFIG_TUNED : HETC_CONFIG_NEAREST;
    return NULL;
  }
  hetc_config_json_free(out_config);
  memset(out_config, 0, sizeof(*out_config));
  return NULL;
}

static int choosable(const hetc_config_chooser_t *c, const hetc_plugin_workload_t *workload, int32_t n) {
  return c && n >= 1 && n <= MAX_TEMPLATES && hetc_workload_is_tunable(workload);
}

hetc_status_t hetc_config_choose(hetc_config_chooser_t *c, const hetc_plugin_t *p, hetc_plugin_instance_t *instance,
                                 int32_t device, const hetc_plugin_workload_t *workload, int32_t *out_template,
                                 hetc_config_json_t *out_config, hetc_config_source_t *out_source) {
  *out_source = HETC_CONFIG_DEFAULT;
  *out_template = 0;
  memset(out_config, 0, sizeof(*out_config));
  int32_t n = p->template_count(instance, device, workload);
  if (!choosable(c, workload, n)) return NULL;
  HETC_RETURN_IF_ERROR(
      choose_from_records(c, p, instance, device, workload, n, -1, out_template, out_config, out_source));
  if (*out_source != HETC_CONFIG_DEFAULT || !c->model) return NULL;
  int predicted = 0;
  HETC_RETURN_IF_ERROR(predict_best(c, p, instance, device, workload, 1, out_template, out_config, &predicted));
  if (predicted) *out_source = HETC_CONFIG_PREDICTED;
  return NULL;
}

hetc_status_t hetc_config_choose_template(hetc_config_chooser_t *c, const hetc_plugin_t *p,
                                          hetc_plugin_instance_t *instance, int32_t device,
                                          const hetc_plugin_workload_t *workload, int32_t template_index,
                                          hetc_config_json_t *out_config, hetc_config_source_t *out_source) {
  *out_source = HETC_CONFIG_DEFAULT;
  memset(out_config, 0, sizeof(*out_config));
  int32_t n = p->template_count(instance, device, workload);
  if (!choosable(c, workload, n) || template_index < 0 || template_index >= n) return NULL;
  int32_t t = 0;
  return choose_from_records(c, p, instance, device, workload, n, template_index, &t, out_config, out_source);
}

/* ------------------------------------------------------------------------ */
/* Candidates for graph-level selection                                     */
/* ------------------------------------------------------------------------ */

typedef struct candidate_list_t {
  hetc_kernel_candidate_t *items;
  int32_t count, capacity;
} candidate_list_t;

/* Adds (template, config) unless an equal one is listed; takes `canonical`
 * (the canonical config text, NULL for a default). */
static hetc_status_t add_candidate(candidate_list_t *list, int32_t t, char *canonical, const char *default_text,
                                   hetc_config_source_t source, double seconds) {
  if (canonical && default_text && !strcmp(canonical, default_text)) {
    free(canonical);
    canonical = NULL;
  }
  for (int32_t i = 0; i < list->count; ++i) {
    const hetc_kernel_candidate_t *c = &list->items[i];
    if (c->template_index == t && (c->config_json == canonical ||
                                   (c->config_json && canonical && !strcmp(c->config_json, canonical)))) {
      free(canonical);
      return NULL;
    }
  }
  if (list->count == list->capacity) {
    const int32_t capacity = list->capacity ? 2 * list->capacity : 8;
    hetc_kernel_candidate_t *grown = realloc(list->items, sizeof(hetc_kernel_candidate_t) * (size_t)capacity);
    if (!grown) {
      free(canonical);
      return hetc_status_new(HETC_STATUS_OUT_OF_MEMORY, "compile: kernel candidates");
    }
    list->items = grown;
    list->capacity = capacity;
  }
  list->items[list->count++] = (hetc_kernel_candidate_t){t, canonical, source, seconds};
  return NULL;
}

/* The canonical text of template t's default config (*out NULL when it has
 * no space to speak of). */
static hetc_status_t default_text(const hetc_plugin_t *p, hetc_plugin_instance_t *instance, int32_t device,
                                  const hetc_plugin_workload_t *workload, int32_t t, char **out) {
  *out = NULL;
  hetc_plugin_space_t *space = NULL;
  int64_t index = 0;
  hetc_space_config_t config;
  hetc_status_t status = hetc_space_create(&space);
  if (!status) status = p->template_define_space(instance, device, workload, t, space);
  if (!status) status = hetc_space_default(space, &index);
  if (!status) status = hetc_space_config_at(space, index, &config);
  char *text = status ? NULL : hetc_config_to_json(&config.view);
  if (!status && !text) status = hetc_status_new(HETC_STATUS_OUT_OF_MEMORY, "compile");
  if (!status) status = hetc_record_config_canonical(text, out);
  free(text);
  hetc_space_free(space);
  return status;
}

hetc_status_t hetc_config_candidates(hetc_config_chooser_t *c, const hetc_plugin_t *p,
                                     hetc_plugin_instance_t *instance, int32_t device,
                                     const hetc_plugin_workload_t *workload, int32_t per_template,
                                     hetc_kernel_candidate_t **out_candidates, int32_t *out_count) {
  *out_candidates = NULL;
  *out_count = 0;
  candidate_list_t list = {0};
  const int32_t n = p->template_count(instance, device, workload);
  const int tunable = hetc_workload_is_tunable(workload);
  const int32_t templates = tunable ? (n < MAX_TEMPLATES ? n : MAX_TEMPLATES) : (n > 0 ? 1 : 0);
  char *defaults[MAX_TEMPLATES] = {0};
  hetc_status_t status = NULL;
  for (int32_t t = 0; t < templates && !status; ++t) {
    status = tunable ? default_text(p, instance, device, workload, t, &defaults[t]) : NULL;
    if (!status) status = add_candidate(&list, t, NULL, NULL, HETC_CONFIG_DEFAULT, 0);
  }
  const hetc_plugin_device_t *descriptor = p->device_get(instance, device);
  char key[HETC_TASK_KEY_SIZE];
  hetc_workload_key(workload, key, sizeof(key));
  for (int32_t t = 0; tunable && c && t < templates && !status; ++t) {
    hetc_record_filter_t filter = hetc_record_filter_any();
    filter.target = p->name;
    filter.device_fingerprint = descriptor && descriptor->fingerprint ? descriptor->fingerprint : "";
    filter.workload_key = key;
    filter.template_name = p->template_name(instance, device, workload, t);
    filter.template_version = p->template_version(instance, device, workload, t);
    if (!filter.template_name) continue;
    hetc_record_list_t best;
    status = hetc_records_best_configs(c->store, &filter, per_template, &best);
    for (int32_t i = 0; !status && i < best.count; ++i) {
      char *canonical = NULL;
      status = hetc_record_config_canonical(best.items[i].config_json, &canonical);
      if (!status)
        status = add_candidate(&list, t, canonical, defaults[t], HETC_CONFIG_TUNED,
                               hetc_record_median_cost(&best.items[i]));
    }
    const int tuned = !status && best.count > 0;
    hetc_record_list_free(&best);
    /* Nothing tuned for this template here: the nearest workload's best. */
    hetc_config_json_t near;
    memset(&near, 0, sizeof(near));
    hetc_config_source_t source = HETC_CONFIG_DEFAULT;
    int32_t only = 0;
    if (!status && !tuned)
      status = choose_from_records(c, p, instance, device, workload, templates, t, &only, &near, &source);
    if (!status && source == HETC_CONFIG_NEAREST) {
      char *text = hetc_config_to_json(&near.config), *canonical = NULL;
      status = text ? hetc_record_config_canonical(text, &canonical)
                    : hetc_status_new(HETC_STATUS_OUT_OF_MEMORY, "compile");
      free(text);
      if (!status) status = add_candidate(&list, t, canonical, defaults[t], HETC_CONFIG_NEAREST, 0);
    }
    if (source != HETC_CONFIG_DEFAULT) hetc_config_json_free(&near);
  }
  if (tunable && c && c->model && !status) {
    int32_t t = 0;
    int found = 0;
    hetc_config_json_t predicted;
    memset(&predicted, 0, sizeof(predicted));
    status = predict_best(c, p, instance, device, workload, 0, &t, &predicted, &found);
    if (!status && found && t < templates) {
      char *text = hetc_config_to_json(&predicted.config), *canonical = NULL;
      status = text ? hetc_record_config_canonical(text, &canonical)
                    : hetc_status_new(HETC_STATUS_OUT_OF_MEMORY, "compile");
      free(text);
      if (!status) status = add_candidate(&list, t, canonical, defaults[t], HETC_CONFIG_PREDICTED, 0);
    }
    if (found) hetc_config_json_free(&predicted);
  }
  for (int32_t t = 0; t < templates; ++t) free(defaults[t]);
  if (status) {
    hetc_kernel_candidates_free(list.items, list.count);
    return status;
  }
  *out_candidates = list.items;
  *out_count = list.count;
  return NULL;
}

void hetc_kernel_candidates_free(hetc_kernel_candidate_t *candidates, int32_t count) {
  for (int32_t i = 0; candidates && i < count; ++i) free(candidates[i].config_json);
  free(candidates);
}
