/* The kernels a compile has built, kept for the package (kernel_shelf.h). */
#include "kernel/kernel_shelf.h"

#include <stdlib.h>
#include <string.h>

typedef struct shelved_t {
  int32_t device;
  hetc_plugin_entry_t *entry;
  unsigned char *key; /* owned */
  size_t key_bytes;
  hetc_plugin_artifact_t *artifact; /* owned */
} shelved_t;

struct hetc_kernel_shelf_t {
  shelved_t *items;
  int32_t count, capacity;
  int64_t put, found;
};

size_t hetc_kernel_key(const hetc_plugin_workload_t *workload, int32_t template_index, const char *config_json,
                       unsigned char **out_key) {
  hetc_plugin_workload_t copy = *workload;
  copy.inputs = NULL;
  const size_t inputs = sizeof(hetc_plugin_tensor_t) * (size_t)workload->num_inputs;
  const char *config = config_json ? config_json : "";
  const size_t bytes = sizeof(copy) + inputs + sizeof(template_index) + strlen(config);
  unsigned char *key = malloc(bytes);
  if (key) {
    memcpy(key, &copy, sizeof(copy));
    memcpy(key + sizeof(copy), workload->inputs, inputs);
    memcpy(key + sizeof(copy) + inputs, &template_index, sizeof(template_index));
    memcpy(key + sizeof(copy) + inputs + sizeof(template_index), config, strlen(config));
  }
  *out_key = key;
  return bytes;
}

hetc_status_t hetc_kernel_shelf_create(hetc_kernel_shelf_t **out_shelf) {
  *out_shelf = calloc(1, sizeof(hetc_kernel_shelf_t));
  return *out_shelf ? NULL : hetc_status_new(HETC_STATUS_OUT_OF_MEMORY, "compile: the kernel shelf");
}

void hetc_kernel_shelf_free(hetc_kernel_shelf_t *shelf) {
  if (!shelf) return;
  for (int32_t i = 0; i < shelf->count; ++i) {
    shelved_t *s = &shelf->items[i];
    s->entry->plugin->artifact_release(s->entry->instance, s->artifact);
    free(s->key);
  }
  free(shelf->items);
  free(shelf);
}

hetc_status_t hetc_kernel_shelf_put(hetc_kernel_shelf_t *shelf, int32_t device, hetc_plugin_entry_t *entry,
                                    unsigned char *key, size_t key_bytes, hetc_plugin_artifact_t *artifact) {
  if (shelf->count == shelf->capacity) {
    const int32_t capacity = shelf->capacity ? 2 * shelf->capacity : 64;
    shelved_t *items = realloc(shelf->items, sizeof(shelved_t) * (size_t)capacity);
    if (!items) return hetc_status_new(HETC_STATUS_OUT_OF_MEMORY, "compile: keeping %d kernels", capacity);
    shelf->items = items;
    shelf->capacity = capacity;
  }
  shelf->items[shelf->count++] = (shelved_t){device, entry, key, key_bytes, artifact};
  ++shelf->put;
  return NULL;
}

hetc_plugin_artifact_t *hetc_kernel_shelf_find(hetc_kernel_shelf_t *shelf, int32_t device, const unsigned char *key,
                                               size_t key_bytes) {
  for (int32_t i = 0; shelf && key && i < shelf->count; ++i) {
    shelved_t *s = &shelf->items[i];
    if (s->device == device && s->key_bytes == key_bytes && !memcmp(s->key, key, key_bytes)) {
      ++shelf->found;
      return s->artifact;
    }
  }
  return NULL;
}

void hetc_kernel_shelf_counts(const hetc_kernel_shelf_t *shelf, int64_t *out_put, int64_t *out_found) {
  *out_put = shelf ? shelf->put : 0;
  *out_found = shelf ? shelf->found : 0;
}
