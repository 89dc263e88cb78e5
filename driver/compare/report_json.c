/* `hetc compare --json`: the whole result, every template included.
 * Times in seconds; a value that does not exist is null. */
#include <cjson/cJSON.h>
#include <stdlib.h>

#include "compare/compare.h"

/* cJSON's adders return NULL when out of memory: every failure is noted
 * and checked once, before printing, so no member is silently missing. */
typedef struct builder_t {
  int failed;
} builder_t;

static void add_string(builder_t *b, cJSON *object, const char *name, const char *value) {
  if (!(value ? cJSON_AddStringToObject(object, name, value) : cJSON_AddNullToObject(object, name))) b->failed = 1;
}

static void add_number(builder_t *b, cJSON *object, const char *name, double value) {
  if (!cJSON_AddNumberToObject(object, name, value)) b->failed = 1;
}

/* A time or rate that exists only when the thing was measured. */
static void add_measured(builder_t *b, cJSON *object, const char *name, int measured, double value) {
  if (!(measured ? cJSON_AddNumberToObject(object, name, value) : cJSON_AddNullToObject(object, name)))
    b->failed = 1;
}

static cJSON *add_array(builder_t *b, cJSON *object, const char *name) {
  cJSON *array = cJSON_AddArrayToObject(object, name);
  if (!array) b->failed = 1;
  return array;
}

static cJSON *append_object(builder_t *b, cJSON *array) {
  cJSON *object = cJSON_CreateObject();
  if (!object || !array || !cJSON_AddItemToArray(array, object)) {
    cJSON_Delete(object);
    b->failed = 1;
    return NULL;
  }
  return object;
}

static void add_devices(builder_t *b, const hetc_compare_result_t *r, cJSON *root) {
  cJSON *devices = add_array(b, root, "devices");
  for (int32_t d = 0; d < r->num_devices; ++d) {
    const hetc_compare_device_t *device = &r->devices[d];
    cJSON *item = append_object(b, devices);
    if (!item) return;
    add_string(b, item, "target", device->target);
    add_string(b, item, "name", device->skipped_reason ? NULL : device->name);
    add_measured(b, item, "peak_gflops", !device->skipped_reason && device->peak_gflops > 0, device->peak_gflops);
    add_string(b, item, "status", device->skipped_reason ? "skipped" : "ok");
    add_string(b, item, "skipped_reason", device->skipped_reason);
  }
}

static void add_entry(builder_t *b, const hetc_compare_result_t *r, int32_t d, const hetc_compare_entry_t *entry,
                      cJSON *item) {
  const hetc_compare_template_t *best = hetc_compare_best(entry);
  add_string(b, item, "target", r->devices[d].target);
  add_string(b, item, "status", hetc_compare_state_name(entry->state));
  add_string(b, item, "best_template", best ? best->name : NULL);
  add_string(b, item, "config_source", best ? best->config_source : NULL);
  add_measured(b, item, "seconds", best != NULL, best ? best->seconds : 0);
  add_measured(b, item, "gflops", best != NULL, best ? best->gflops : 0);
  add_measured(b, item, "peak_fraction", best && entry->peak_fraction > 0, entry->peak_fraction);
  add_string(b, item, "error",
             entry->state == HETC_COMPARE_SKIPPED ? r->devices[d].skipped_reason : entry->error);
  cJSON *templates = add_array(b, item, "templates");
  for (int32_t t = 0; t < entry->num_templates; ++t) {
    const hetc_compare_template_t *tried = &entry->templates[t];
    cJSON *one = append_object(b, templates);
    if (!one) return;
    add_string(b, one, "name", tried->name);
    add_string(b, one, "config_source", tried->config_source);
    add_measured(b, one, "seconds", !tried->error, tried->seconds);
    add_measured(b, one, "gflops", !tried->error, tried->gflops);
    add_string(b, one, "error", tried->error);
  }
}

static void add_tasks(builder_t *b, const hetc_compare_result_t *r, cJSON *root) {
  cJSON *tasks = add_array(b, root, "tasks");
  for (int32_t i = 0; i < r->num_tasks; ++i) {
    const hetc_compare_task_t *task = &r->tasks[i];
    cJSON *item = append_object(b, tasks);
    if (!item) return;
    add_number(b, item, "index", i + 1);
    add_string(b, item, "key", task->key);
    add_string(b, item, "node", task->node_name);
    add_number(b, item, "count", task->count);
    add_number(b, item, "flops", task->flops);
    cJSON *devices = add_array(b, item, "devices");
    for (int32_t d = 0; d < r->num_devices; ++d) {
      cJSON *entry = append_object(b, devices);
      if (!entry) return;
      add_entry(b, r, d, &task->entries[d], entry);
    }
  }
}

static void add_packages(builder_t *b, const hetc_compare_result_t *r, cJSON *root) {
  cJSON *packages = add_array(b, root, "packages");
  for (int32_t p = 0; p < r->num_packages; ++p) {
    const hetc_compare_package_t *package = &r->packages[p];
    const int ok = package->state == HETC_COMPARE_OK;
    cJSON *item = append_object(b, packages);
    if (!item) return;
    add_string(b, item, "name", package->name);
    add_string(b, item, "status", hetc_compare_state_name(package->state));
    add_measured(b, item, "predicted_seconds", ok && package->predicted_seconds > 0, package->predicted_seconds);
    add_measured(b, item, "p50_seconds", ok, package->p50);
    add_measured(b, item, "p90_seconds", ok, package->p90);
    add_measured(b, item, "p99_seconds", ok, package->p99);
    cJSON *nodes = cJSON_AddObjectToObject(item, "nodes_on_device");
    if (!nodes) b->failed = 1;
    for (int32_t d = 0; nodes && ok && d < r->num_devices && d < HETC_COMPARE_MAX_DEVICES; ++d)
      if (package->nodes_on_device[d]) add_number(b, nodes, r->devices[d].target, package->nodes_on_device[d]);
    add_number(b, item, "copies", package->copies);
    add_string(b, item, "error", package->error);
  }
}

hetc_status_t hetc_compare_write_json(const hetc_compare_result_t *r, FILE *out) {
  builder_t b = {0};
  cJSON *root = cJSON_CreateObject();
  if (!root) return hetc_status_new(HETC_STATUS_OUT_OF_MEMORY, "compare: JSON");
  add_string(&b, root, "model", r->model);
  add_number(&b, root, "runs", r->runs);
  add_number(&b, root, "warmup_runs", r->warmup_runs);
  add_devices(&b, r, root);
  add_tasks(&b, r, root);
  add_packages(&b, r, root);
  char *text = b.failed ? NULL : cJSON_Print(root);
  cJSON_Delete(root);
  if (!text) return hetc_status_new(HETC_STATUS_OUT_OF_MEMORY, "compare: JSON");
  fputs(text, out);
  fputc('\n', out);
  cJSON_free(text);
  return ferror(out) ? hetc_status_new(HETC_STATUS_IO_ERROR, "writing the JSON failed") : NULL;
}
