#include "plugins/registry.h"

#include "plugin_elf.h"
#include "plugins/abi_level.h"

#include <dirent.h>
#include <dlfcn.h>
#include <limits.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/env.h"
#include "common/fileio.h"
#include "plugins/host.h"
#include "plugins/peaks.h"

#ifndef HETC_INSTALL_PLUGIN_DIR
#define HETC_INSTALL_PLUGIN_DIR "/usr/local/lib/hetc/plugins"
#endif

/* The last field of the minor-0 plugin table: every plugin of this major
 * has at least that much. */
#define MINOR0_TABLE_SIZE (offsetof(hetc_plugin_t, artifact_load) + sizeof(void *))

typedef struct dir_list_t {
  int32_t count;
  char *dirs[64];
} dir_list_t;

static void add_dir(dir_list_t *list, const char *dir) {
  if (!dir || !dir[0] || list->count == 64) return;
  char resolved[PATH_MAX];
  const char *key = realpath(dir, resolved) ? resolved : dir;
  for (int32_t i = 0; i < list->count; ++i)
    if (!strcmp(list->dirs[i], key)) return;
  char *copy = strdup(key);
  if (copy) list->dirs[list->count++] = copy;
}

static void add_relative(dir_list_t *list, const char *file, const char *relative) {
  char *dir = hetc_path_dirname(file);
  char *joined = dir ? hetc_path_join(dir, relative) : NULL;
  add_dir(list, joined);
  free(dir);
  free(joined);
}

static void search_dirs(dir_list_t *list) {
  const char *env = getauxval(AT_SECURE) ? NULL : getenv("HETC_PLUGIN_PATH");
  if (env) {
    char *copy = strdup(env);
    for (char *save = NULL, *dir = copy ? strtok_r(copy, ":", &save) : NULL; dir;
         dir = strtok_r(NULL, ":", &save))
      add_dir(list, dir);
    free(copy);
  }
  char exe[PATH_MAX];
  ssize_t length = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
  if (length > 0) {
    exe[length] = 0;
    add_relative(list, exe, "../lib/hetc/plugins");
  }
  Dl_info info;
  if (dladdr((void *)&hetc_registry_open, &info) && info.dli_fname)
    add_relative(list, info.dli_fname, "hetc/plugins");
  add_dir(list, HETC_INSTALL_PLUGIN_DIR);
}

char *hetc_registry_search_path(void) {
  dir_list_t list = {0};
  search_dirs(&list);
  size_t length = 1;
  for (int32_t i = 0; i < list.count; ++i) length += strlen(list.dirs[i]) + 1;
  char *joined = calloc(1, length);
  for (int32_t i = 0; i < list.count; ++i) {
    if (joined) {
      if (i) strcat(joined, ":");
      strcat(joined, list.dirs[i]);
    }
    free(list.dirs[i]);
  }
  return joined;
}

static int ends_with_so(const char *name) {
  size_t n = strlen(name);
  return n > 3 && !strcmp(name + n - 3, ".so");
}

static int compare_strings(const void *a, const void *b) {
  return strcmp(*(char *const *)a, *(char *const *)b);
}

static void set_reason(hetc_plugin_entry_t *entry, hetc_plugin_state_t state, const char *format,
                       ...) HETC_PLUGIN_PRINTF(3, 4);
static void set_reason(hetc_plugin_entry_t *entry, hetc_plugin_state_t state, const char *format,
                       ...) {
  char message[1536];
  va_list args;
  va_start(args, format);
  vsnprintf(message, sizeof(message), format, args);
  va_end(args);
  free(entry->reason);
  entry->reason = strdup(message);
  entry->state = state;
}

/* The calls a plugin must provide; the others (buffer_copy,
 * buffer_host_pointer on devices without host memory, features) may be
 * NULL. Checked before anything is called, so that a plugin with a hole in
 * its table is refused with the name of the call rather than crashing hetc
 * later. */
#define REQUIRED_CALL(field) {#field, offsetof(hetc_plugin_t, field)}
static const struct {
  const char *name;
  size_t offset;
} required_calls[] = {
    REQUIRED_CALL(probe),          REQUIRED_CALL(instance_create), REQUIRED_CALL(instance_destroy),
    REQUIRED_CALL(device_count),   REQUIRED_CALL(device_get),      REQUIRED_CALL(supports),
    REQUIRED_CALL(template_count), REQUIRED_CALL(template_name),   REQUIRED_CALL(template_version),
    REQUIRED_CALL(template_define_space), REQUIRED_CALL(build),    REQUIRED_CALL(artifact_release),
    REQUIRED_CALL(artifact_info),  REQUIRED_CALL(pack_param),      REQUIRED_CALL(buffer_alloc),
    REQUIRED_CALL(buffer_free),    REQUIRED_CALL(buffer_write),    REQUIRED_CALL(buffer_read),
    REQUIRED_CALL(run),            REQUIRED_CALL(time),            REQUIRED_CALL(artifact_emit),
    REQUIRED_CALL(artifact_load),
};

int hetc_plugin_table_problem(const hetc_plugin_t *plugin, char *reason, size_t reason_size) {
  if (plugin->header.abi_major != HETC_PLUGIN_ABI_MAJOR && plugin->header.abi_major != 1) {
    snprintf(reason, reason_size,
             "the plugin speaks ABI %u.%u; this hetc speaks ABI %d.%d and loads plugins of majors 1 and %d",
             plugin->header.abi_major, plugin->header.abi_minor, HETC_PLUGIN_ABI_MAJOR,
             HETC_PLUGIN_ABI_MINOR, HETC_PLUGIN_ABI_MAJOR);
    return 1;
  }
  if (plugin->header.struct_size < MINOR0_TABLE_SIZE) {
    snprintf(reason, reason_size, "plugin table is %u bytes, ABI 1.0 needs at least %zu",
             plugin->header.struct_size, (size_t)MINOR0_TABLE_SIZE);
    return 1;
  }
  if (!plugin->name || !plugin->name[0]) {
    snprintf(reason, reason_size, "plugin table has no name");
    return 1;
  }
  for (size_t i = 0; i < sizeof(required_calls) / sizeof(required_calls[0]); ++i) {
    void *call;
    memcpy(&call, (const char *)plugin + required_calls[i].offset, sizeof(call));
    if (!call) {
      snprintf(reason, reason_size, "plugin table of '%s' lacks the required call %s", plugin->name,
               required_calls[i].name);
      return 1;
    }
  }
  return 0;
}

/* dlopen, query and table checks: on success entry->plugin is set and the
 * handle stays open; on failure the entry is REFUSED with the reason. */
static void negotiate(hetc_plugin_entry_t *entry, const hetc_plugin_host_t *host) {
  char problem[512];
  /* One damaged file in a plugin directory must not take hetc down. */
  if (hpc_elf_problem(entry->path, problem, sizeof(problem))) {
    set_reason(entry, HETC_PLUGIN_STATE_REFUSED, "%s", problem);
    return;
  }
  dlerror();
  entry->handle = dlopen(entry->path, RTLD_NOW | RTLD_LOCAL);
  if (!entry->handle) {
    const char *error = dlerror();
    set_reason(entry, HETC_PLUGIN_STATE_REFUSED, "dlopen failed: %s", error ? error : "unknown error");
    return;
  }
  hetc_plugin_query_fn_t query;
  void *symbol = dlsym(entry->handle, HETC_PLUGIN_QUERY_SYMBOL);
  memcpy(&query, &symbol, sizeof(query));
  const hetc_plugin_t *plugin = query ? query(host->header.abi_major, host->header.abi_minor, host) : NULL;
  /* A plugin of major 1 declines a major-2 host, as its guide told it to;
   * it is asked once more by the same services showing themselves as 1.7. */
  const hetc_plugin_host_t *major1 = NULL;
  if (query && !plugin && host->header.abi_major == 2 && (major1 = hetc_host_as_major1(host)) != NULL)
    plugin = query(major1->header.abi_major, major1->header.abi_minor, major1);
  if (!query) {
    set_reason(entry, HETC_PLUGIN_STATE_REFUSED, "no exported symbol %s (not a hetc plugin)",
               HETC_PLUGIN_QUERY_SYMBOL);
  } else if (!plugin) {
    set_reason(entry, HETC_PLUGIN_STATE_REFUSED, "%s declined this host (host ABI %u.%u%s)",
               HETC_PLUGIN_QUERY_SYMBOL, host->header.abi_major, host->header.abi_minor,
               major1 ? ", and as 1.7" : "");
  } else if (hetc_plugin_table_problem(plugin, problem, sizeof(problem))) {
    set_reason(entry, HETC_PLUGIN_STATE_REFUSED, "%s", problem);
  } else {
    entry->plugin = plugin;
    return;
  }
  dlclose(entry->handle);
  entry->handle = NULL;
}

static void probe(hetc_plugin_entry_t *entry) {
  hetc_plugin_status_t status = entry->plugin->probe();
  if (status) {
    set_reason(entry, HETC_PLUGIN_STATE_UNAVAILABLE, "%s", hetc_status_message(status));
    hetc_status_free(status);
  } else {
    entry->state = HETC_PLUGIN_STATE_READY;
  }
}

static void load_candidate(hetc_registry_t *registry, hetc_plugin_entry_t *entry) {
  negotiate(entry, hetc_host_services());
  if (!entry->plugin) return;
  for (int32_t i = 0; registry->entries + i < entry; ++i) {
    const hetc_plugin_entry_t *other = &registry->entries[i];
    if (other->plugin && !strcmp(other->plugin->name, entry->plugin->name)) {
      set_reason(entry, HETC_PLUGIN_STATE_REFUSED, "target name '%s' is already served by %s",
                 entry->plugin->name, other->path);
      entry->plugin = NULL;
      dlclose(entry->handle);
      entry->handle = NULL;
      return;
    }
  }
  probe(entry);
}

hetc_status_t hetc_registry_open_file(const char *path, const hetc_plugin_host_t *host,
                                      hetc_registry_t **out_registry) {
  hetc_registry_t *registry = calloc(1, sizeof(*registry));
  hetc_plugin_entry_t *entry = calloc(1, sizeof(*entry));
  /* dlopen searches the library path for a name without a '/', never the
   * current folder: "libfoo.so" means the file here, as to every other
   * command, so the path is made absolute first. */
  char *copy = realpath(path, NULL);
  if (!copy) copy = strdup(path);
  if (!registry || !entry || !copy) {
    free(registry);
    free(entry);
    free(copy);
    return hetc_status_new(HETC_STATUS_OUT_OF_MEMORY, "plugin registry");
  }
  registry->count = 1;
  registry->entries = entry;
  entry->path = copy;
  entry->registry = registry;
  negotiate(entry, host ? host : hetc_host_services());
  if (entry->plugin) probe(entry);
  *out_registry = registry;
  return NULL;
}

hetc_status_t hetc_registry_open(hetc_registry_t **out_registry) {
  /* Every use of plugins (hetc_context_create) starts here: a bad
   * HETC_NUM_THREADS, HETC_LOG_LEVEL or HETC_PLUGIN_PATH is refused
   * before a plugin reads it. */
  HETC_RETURN_IF_ERROR(hetc_env_check());
  hetc_registry_t *registry = calloc(1, sizeof(*registry));
  if (!registry) return hetc_status_new(HETC_STATUS_OUT_OF_MEMORY, "plugin registry");
  dir_list_t dirs = {0};
  search_dirs(&dirs);
  int32_t capacity = 0;
  for (int32_t d = 0; d < dirs.count; ++d) {
    DIR *dir = opendir(dirs.dirs[d]);
    if (!dir) continue;
    char *names[1024];
    int32_t count = 0;
    struct dirent *e;
    while ((e = readdir(dir)) && count < 1024)
      if (ends_with_so(e->d_name)) names[count++] = strdup(e->d_name);
    closedir(dir);
    qsort(names, (size_t)count, sizeof(char *), compare_strings);
    for (int32_t i = 0; i < count; ++i) {
      if (registry->count == capacity) {
        capacity = capacity ? capacity * 2 : 16;
        hetc_plugin_entry_t *grown = realloc(registry->entries, sizeof(*grown) * (size_t)capacity);
        if (!grown) break;
        registry->entries = grown;
      }
      hetc_plugin_entry_t *entry = &registry->entries[registry->count];
      memset(entry, 0, sizeof(*entry));
      entry->path = names[i] ? hetc_path_join(dirs.dirs[d], names[i]) : NULL;
      free(names[i]);
      if (entry->path) ++registry->count;
    }
  }
  for (int32_t d = 0; d < dirs.count; ++d) free(dirs.dirs[d]);
  /* Load only after the list stops moving: entries point at each other. */
  for (int32_t i = 0; i < registry->count; ++i) {
    registry->entries[i].registry = registry;
    load_candidate(registry, &registry->entries[i]);
  }
  *out_registry = registry;
  return NULL;
}

void hetc_registry_free(hetc_registry_t *registry) {
  if (!registry) return;
  for (int32_t i = 0; i < registry->count; ++i) {
    hetc_plugin_entry_t *entry = &registry->entries[i];
    if (entry->instance) entry->plugin->instance_destroy(entry->instance);
    /* Plugins may keep threads or atexit handlers (OpenMP, drivers), so
     * their code stays mapped until the process ends. */
    free(entry->path);
    free(entry->reason);
  }
  free(registry->entries);
  free(registry->peaks_path);
  free(registry);
}

hetc_status_t hetc_registry_instance(hetc_plugin_entry_t *entry) {
  if (entry->instance) return NULL;
  if (entry->state != HETC_PLUGIN_STATE_READY)
    return hetc_status_new(HETC_STATUS_UNAVAILABLE, "%s: %s", entry->path,
                           entry->reason ? entry->reason : "not loaded");
  hetc_plugin_status_t status = entry->plugin->instance_create(&entry->instance);
  if (!status && !entry->instance)
    status = hetc_status_new(HETC_STATUS_INTERNAL, "instance_create returned no instance");
  if (status) {
    /* A plugin refusing its settings (HETC_CPU_ISA=sse) is the user's
     * input, not a missing device. */
    const hetc_status_code_t code =
        hetc_status_code(status) == HETC_STATUS_INVALID_ARGUMENT ? HETC_STATUS_BAD_INPUT : HETC_STATUS_UNAVAILABLE;
    entry->instance = NULL;
    set_reason(entry, HETC_PLUGIN_STATE_UNAVAILABLE, "instance creation failed: %s",
               hetc_status_message(status));
    hetc_status_free(status);
    return hetc_status_new(code, "target '%s' (%s): %s", entry->plugin->name, entry->path, entry->reason);
  }
  hetc_peaks_resolve(entry);
  return NULL;
}

hetc_status_t hetc_registry_target(hetc_registry_t *registry, const char *target,
                                   hetc_plugin_entry_t **out_entry) {
  char known[512] = "", refused[1024] = "";
  size_t used = 0, refused_used = 0;
  for (int32_t i = 0; i < registry->count; ++i) {
    hetc_plugin_entry_t *entry = &registry->entries[i];
    if (!entry->plugin) {
      /* A refused candidate may be the wanted target: show why it failed. */
      if (refused_used < sizeof(refused))
        refused_used += (size_t)snprintf(refused + refused_used, sizeof(refused) - refused_used, "; refused %s: %s",
                                         entry->path, entry->reason ? entry->reason : "?");
      continue;
    }
    if (!strcmp(entry->plugin->name, target)) {
      if (entry->state != HETC_PLUGIN_STATE_READY)
        return hetc_status_new(HETC_STATUS_UNAVAILABLE, "target '%s' is unavailable: %s", target,
                               entry->reason);
      HETC_RETURN_IF_ERROR(hetc_registry_instance(entry));
      *out_entry = entry;
      return NULL;
    }
    if (used < sizeof(known))
      used += (size_t)snprintf(known + used, sizeof(known) - used, "%s%s", used ? ", " : "",
                               entry->plugin->name);
  }
  char *path = hetc_registry_search_path();
  hetc_status_t status = hetc_status_new(
      HETC_STATUS_NOT_FOUND, "no plugin serves target '%s' (available: %s; searched %s%s)", target,
      used ? known : "none", path ? path : "?", refused);
  free(path);
  return status;
}

hetc_status_t hetc_registry_target_spec(hetc_registry_t *registry, const char *spec, hetc_plugin_entry_t **out_entry,
                                        int32_t *out_device_index) {
  *out_device_index = -1;
  const char *colon = strrchr(spec, ':');
  const size_t digits = colon ? strspn(colon + 1, "0123456789") : 0;
  if (!colon || colon == spec || digits == 0 || colon[1 + digits] || digits > 6)
    return hetc_registry_target(registry, spec, out_entry);
  char name[256];
  snprintf(name, sizeof(name), "%.*s", (int)(colon - spec), spec);
  HETC_RETURN_IF_ERROR(hetc_registry_target(registry, name, out_entry));
  const int32_t index = (int32_t)strtol(colon + 1, NULL, 10);
  const int32_t count = (*out_entry)->plugin->device_count((*out_entry)->instance);
  if (index >= count && count > 1)
    return hetc_status_new(HETC_STATUS_NOT_FOUND, "target '%s': %s has %d devices (%s:0 to %s:%d)", spec, name,
                           count, name, name, count - 1);
  if (index >= count)
    return hetc_status_new(HETC_STATUS_NOT_FOUND, "target '%s': %s has %s", spec, name,
                           count ? "one device (index 0)" : "no device");
  *out_device_index = index;
  return NULL;
}

static uint32_t activation_level(int32_t activation) {
  if (activation >= HETC_PLUGIN_ACT_GELU && activation <= HETC_PLUGIN_ACT_ERF) return 7;
  if (activation >= HETC_PLUGIN_ACT_SILU && activation <= HETC_PLUGIN_ACT_HARDSIGMOID) return 6;
  if (activation == HETC_PLUGIN_ACT_EXP || activation == HETC_PLUGIN_ACT_LOG) return 5;
  if (activation == HETC_PLUGIN_ACT_ELU || activation == HETC_PLUGIN_ACT_SOFTPLUS) return 4;
  return 0;
}

uint32_t hetc_workload_abi_level(const hetc_plugin_workload_t *workload) {
  switch (workload->op) {
    case HETC_PLUGIN_OP_TRANSPOSE: return 4;
    case HETC_PLUGIN_OP_LOG_SOFTMAX: return 5;
    case HETC_PLUGIN_OP_RESIZE:
    case HETC_PLUGIN_OP_NORMALIZE:
    case HETC_PLUGIN_OP_MATMUL: return hetc_abi_level(2, 0);
    case HETC_PLUGIN_OP_ELEMENTWISE:
      return workload->binary == HETC_PLUGIN_BINARY_DIV ? 4 : activation_level(workload->activation);
    case HETC_PLUGIN_OP_CONV2D:
    case HETC_PLUGIN_OP_DENSE: return activation_level(workload->epilogue.activation);
    default: return 0;
  }
}

void hetc_registry_unsupported_reason(const hetc_plugin_entry_t *entry, int32_t device_index,
                                      const hetc_plugin_workload_t *workload, char *out, size_t size) {
  const hetc_plugin_t *p = entry->plugin;
  const uint32_t needs = hetc_workload_abi_level(workload);
  if (hetc_plugin_abi_level(p) < needs) {
    /* Its supports_why is not asked either: the workload names what the
     * plugin's header did not ("unknown activation 12" would hide why). */
    snprintf(out, size, "the plugin speaks ABI %u.%u; this workload needs ABI %u.%u", p->header.abi_major,
             p->header.abi_minor, hetc_abi_level_major(needs), hetc_abi_level_minor(needs));
    return;
  }
  hetc_status_t why = HETC_PLUGIN_HAS_FIELD(p, hetc_plugin_t, supports_why) && p->supports_why
                          ? p->supports_why(entry->instance, device_index, workload)
                          : NULL;
  if (why && hetc_status_message(why)[0]) snprintf(out, size, "%s", hetc_status_message(why));
  else snprintf(out, size, "the plugin gives no reason");
  hetc_status_free(why);
}
