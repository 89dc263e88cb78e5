/* A task's space: every template's space side by side in one index. */
#include "space/task_space.h"

#include <stdlib.h>
#include <string.h>

/* Candidates printed per knob. */
#define PRINT_VALUES 8

typedef struct task_template_t {
  char *name;                 /* owned copy of the plugin's name */
  uint32_t version;
  hetc_plugin_space_t *space; /* owned; NULL when skipped */
  char *error;                /* owned: why skipped, else NULL */
  int64_t offset, size;       /* global range [offset, offset + size) */
  int64_t valid_offset, valid_count;
  int32_t tunable_knobs;      /* knobs with more than one candidate */
  int64_t default_local;
} task_template_t;

struct hetc_task_space_t {
  char *backend; /* owned: the plugin's target name */
  int32_t num_templates;
  task_template_t *templates; /* owned */
  int64_t size, valid_count;
};

void hetc_task_space_free(hetc_task_space_t *space) {
  if (!space) return;
  for (int32_t t = 0; t < space->num_templates; ++t) {
    free(space->templates[t].name);
    free(space->templates[t].error);
    hetc_space_free(space->templates[t].space);
  }
  free(space->templates);
  free(space->backend);
  free(space);
}

/* Defines, overrides and indexes template t. A failure of the template
 * itself is kept in t->error (the template is skipped); only failures of
 * the overrides or of memory are returned. */
static hetc_status_t define_template(const hetc_plugin_t *plugin, hetc_plugin_instance_t *instance,
                                     int32_t device_index, const hetc_plugin_workload_t *workload,
                                     const hetc_space_overrides_t *overrides, int32_t index,
                                     task_template_t *t) {
  HETC_RETURN_IF_ERROR(hetc_space_create(&t->space));
  hetc_status_t reason =
      plugin->template_define_space(instance, device_index, workload, index, t->space);
  if (!reason) {
    /* The user's overrides are checked against every template that was
     * offered, but a failure there is the user's, not the template's. */
    HETC_RETURN_IF_ERROR(hetc_space_overrides_apply(overrides, t->name, t->space));
    reason = hetc_space_default(t->space, &t->default_local);
  }
  if (!reason) reason = hetc_space_build_index(t->space);
  if (reason) {
    t->error = strdup(hetc_status_message(reason));
    const int out_of_memory = !t->error || hetc_status_code(reason) == HETC_STATUS_OUT_OF_MEMORY;
    hetc_space_free(t->space);
    t->space = NULL;
    if (out_of_memory) return reason;
    hetc_status_free(reason);
    return NULL;
  }
  t->size = hetc_space_size(t->space);
  t->valid_count = hetc_space_valid_count(t->space);
  for (int32_t k = 0; k < hetc_space_knob_count(t->space); ++k)
    t->tunable_knobs += hetc_space_knob_size(t->space, k) > 1;
  return NULL;
}

hetc_status_t hetc_task_space_create(const hetc_plugin_t *plugin, hetc_plugin_instance_t *instance,
                                     int32_t device_index, const hetc_plugin_workload_t *workload,
                                     const hetc_space_overrides_t *overrides,
                                     hetc_task_space_t **out_space) {
  const int32_t count = plugin->template_count(instance, device_index, workload);
  if (count < 1)
    return hetc_status_new(HETC_STATUS_UNSUPPORTED, "backend '%s' has no template for this workload",
                           plugin->name);
  hetc_task_space_t *space = calloc(1, sizeof(*space));
  if (!space || !(space->templates = calloc((size_t)count, sizeof(task_template_t))) ||
      !(space->backend = strdup(plugin->name))) {
    hetc_task_space_free(space);
    return hetc_status_new(HETC_STATUS_OUT_OF_MEMORY, "task space");
  }
  space->num_templates = count;
  hetc_status_t status = NULL;
  const char **names = calloc((size_t)count, sizeof(char *));
  if (!names) status = hetc_status_new(HETC_STATUS_OUT_OF_MEMORY, "task space");
  for (int32_t t = 0; t < count && !status; ++t) {
    const char *name = plugin->template_name(instance, device_index, workload, t);
    space->templates[t].version = plugin->template_version(instance, device_index, workload, t);
    if (!(space->templates[t].name = strdup(name ? name : "?")))
      status = hetc_status_new(HETC_STATUS_OUT_OF_MEMORY, "task space");
    names[t] = space->templates[t].name;
  }
  free(names);
  int usable = 0;
  for (int32_t t = 0; t < count && !status; ++t) {
    task_template_t *entry = &space->templates[t];
    status = define_template(plugin, instance, device_index, workload, overrides, t, entry);
    if (status) break;
    entry->offset = space->size;
    entry->valid_offset = space->valid_count;
    if (!entry->space) continue;
    ++usable;
    if (space->size > INT64_MAX - entry->size) {
      status = hetc_status_new(HETC_STATUS_INVALID_ARGUMENT,
                               "the task space would exceed 2^63 points at template '%s'",
                               entry->name);
      break;
    }
    space->size += entry->size;
    space->valid_count += entry->valid_count;
  }
  if (!status && !usable) {
    status = hetc_status_new(HETC_STATUS_UNSUPPORTED, "no template of backend '%s' has a space: %s: %s",
                             plugin->name, space->templates[0].name,
                             space->templates[0].error ? space->templates[0].error : "?");
  }
  if (status) {
    hetc_task_space_free(space);
    return status;
  }
  *out_space = space;
  return NULL;
}

int32_t hetc_task_space_template_count(const hetc_task_space_t *space) {
  return space->num_templates;
}
const char *hetc_task_space_template_name(const hetc_task_space_t *space, int32_t t) {
  return space->templates[t].name;
}
uint32_t hetc_task_space_template_version(const hetc_task_space_t *space, int32_t t) {
  return space->templates[t].version;
}
const hetc_plugin_space_t *hetc_task_space_template_space(const hetc_task_space_t *space,
                                                          int32_t t) {
  return space->templates[t].space;
}
const char *hetc_task_space_template_error(const hetc_task_space_t *space, int32_t t) {
  return space->templates[t].error;
}
int64_t hetc_task_space_size(const hetc_task_space_t *space) { return space->size; }
int64_t hetc_task_space_valid_count(const hetc_task_space_t *space) {
  return space->valid_count;
}

hetc_status_t hetc_task_space_locate(const hetc_task_space_t *space, int64_t global,
                                     int32_t *out_template, int64_t *out_local) {
  for (int32_t t = 0; global >= 0 && t < space->num_templates; ++t) {
    const task_template_t *entry = &space->templates[t];
    if (global < entry->offset + entry->size) {
      *out_template = t;
      *out_local = global - entry->offset;
      return NULL;
    }
  }
  return hetc_status_new(HETC_STATUS_INVALID_ARGUMENT, "point %lld outside the task space of %lld",
                         (long long)global, (long long)space->size);
}

int64_t hetc_task_space_global(const hetc_task_space_t *space, int32_t t, int64_t local) {
  if (t < 0 || t >= space->num_templates || local < 0 || local >= space->templates[t].size)
    return -1;
  return space->templates[t].offset + local;
}

hetc_status_t hetc_task_space_default(const hetc_task_space_t *space, int64_t *out_global) {
  for (int32_t t = 0; t < space->num_templates; ++t) {
    if (!space->templates[t].space) continue;
    *out_global = space->templates[t].offset + space->templates[t].default_local;
    return NULL;
  }
  return hetc_status_new(HETC_STATUS_UNSUPPORTED, "no template has a space");
}

int hetc_task_space_is_valid(const hetc_task_space_t *space, int64_t global) {
  int32_t t;
  int64_t local;
  hetc_status_t status = hetc_task_space_locate(space, global, &t, &local);
  if (status) {
    hetc_status_free(status);
    return 0;
  }
  return hetc_space_is_valid(space->templates[t].space, local);
}

hetc_status_t hetc_task_space_valid_at(const hetc_task_space_t *space, int64_t n,
                                       int64_t *out_global) {
  for (int32_t t = 0; n >= 0 && t < space->num_templates; ++t) {
    const task_template_t *entry = &space->templates[t];
    if (n >= entry->valid_offset + entry->valid_count) continue;
    int64_t local;
    HETC_RETURN_IF_ERROR(hetc_space_valid_at(entry->space, n - entry->valid_offset, &local));
    *out_global = entry->offset + local;
    return NULL;
  }
  return hetc_status_new(HETC_STATUS_INVALID_ARGUMENT,
                         "valid point %lld outside the %lld valid points of the task space",
                         (long long)n, (long long)space->valid_count);
}

hetc_status_t hetc_task_space_sample_valid(const hetc_task_space_t *space, uint64_t *rng,
                                           int64_t *out_global) {
  if (space->valid_count == 0)
    return hetc_status_new(HETC_STATUS_UNSUPPORTED, "no template of the task has a valid config");
  const int64_t n = (int64_t)hetc_space_random_below(rng, (uint64_t)space->valid_count);
  return hetc_task_space_valid_at(space, n, out_global);
}

/* Another template's default, chosen uniformly among the templates that
 * have a space; UNSUPPORTED when there is no other. */
static hetc_status_t other_template(const hetc_task_space_t *space, int32_t current,
                                    uint64_t *rng, int64_t *out_global) {
  int32_t others = 0;
  for (int32_t t = 0; t < space->num_templates; ++t)
    others += t != current && space->templates[t].space != NULL;
  if (others == 0)
    return hetc_status_new(HETC_STATUS_UNSUPPORTED, "the task has no other template");
  int32_t pick = (int32_t)hetc_space_random_below(rng, (uint64_t)others);
  for (int32_t t = 0; t < space->num_templates; ++t) {
    if (t == current || !space->templates[t].space || pick-- > 0) continue;
    *out_global = space->templates[t].offset + space->templates[t].default_local;
    break;
  }
  return NULL;
}

hetc_status_t hetc_task_space_random_neighbor(const hetc_task_space_t *space, int64_t global,
                                              uint64_t *rng, int64_t *out_global) {
  int32_t t;
  int64_t local;
  HETC_RETURN_IF_ERROR(hetc_task_space_locate(space, global, &t, &local));
  const task_template_t *entry = &space->templates[t];
  const int switch_template =
      hetc_space_random_below(rng, (uint64_t)entry->tunable_knobs + 1) == 0;
  hetc_status_t status = NULL;
  if (switch_template) {
    status = other_template(space, t, rng, out_global);
    if (!status) return NULL;
    hetc_status_free(status);
  }
  int64_t neighbor;
  status = hetc_space_random_neighbor(entry->space, local, rng, &neighbor);
  if (!status) {
    *out_global = entry->offset + neighbor;
    return NULL;
  }
  if (switch_template || hetc_status_code(status) != HETC_STATUS_UNSUPPORTED) return status;
  hetc_status_free(status);
  return other_template(space, t, rng, out_global);
}

hetc_status_t hetc_task_space_config(const hetc_task_space_t *space, int64_t global,
                                     int32_t *out_template, hetc_space_config_t *out_config) {
  int32_t t;
  int64_t local;
  HETC_RETURN_IF_ERROR(hetc_task_space_locate(space, global, &t, &local));
  HETC_RETURN_IF_ERROR(hetc_space_config_at(space->templates[t].space, local, out_config));
  *out_template = t;
  return NULL;
}

hetc_status_t hetc_task_space_print(const hetc_task_space_t *space, FILE *out) {
  fprintf(out, "TaskSpace (len=%lld, valid=%lld, templates=%d, backend=%s)\n",
          (long long)space->size, (long long)space->valid_count, space->num_templates,
          space->backend);
  for (int32_t t = 0; t < space->num_templates; ++t) {
    const task_template_t *entry = &space->templates[t];
    fprintf(out, "  template %d: %s v%u", t, entry->name, entry->version);
    if (!entry->space) {
      fprintf(out, " skipped: %s\n", entry->error ? entry->error : "?");
      continue;
    }
    fprintf(out, " (len=%lld, valid=%lld, global=[%lld, %lld))\n", (long long)entry->size,
            (long long)entry->valid_count, (long long)entry->offset,
            (long long)(entry->offset + entry->size));
    if (hetc_space_knob_count(entry->space) == 0) fprintf(out, "     (no knobs)\n");
    HETC_RETURN_IF_ERROR(hetc_space_print(entry->space, "    ", PRINT_VALUES, out));
  }
  return ferror(out) ? hetc_status_new(HETC_STATUS_IO_ERROR, "writing the task space failed")
                     : NULL;
}
