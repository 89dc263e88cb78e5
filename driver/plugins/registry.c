#include "plugins/registry.h"

#include <dirent.h>
#include <dlfcn.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/fileio.h"
#include "plugins/host.h"

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

static void load_candidate(hetc_registry_t *registry, hetc_plugin_entry_t *entry) {
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
  const hetc_plugin_t *plugin = query ? query(HETC_PLUGIN_ABI_MAJOR, HETC_PLUGIN_ABI_MINOR,
                                              hetc_host_services())
                                      : NULL;
  if (!query) {
    set_reason(entry, HETC_PLUGIN_STATE_REFUSED, "no exported symbol %s (not a hetc plugin)",
               HETC_PLUGIN_QUERY_SYMBOL);
  } else if (!plugin) {
    set_reason(entry, HETC_PLUGIN_STATE_REFUSED,
               "%s declined this host (host ABI %d.%d)", HETC_PLUGIN_QUERY_SYMBOL,
               HETC_PLUGIN_ABI_MAJOR, HETC_PLUGIN_ABI_MINOR);
  } else if (plugin->header.abi_major != HETC_PLUGIN_ABI_MAJOR) {
    set_reason(entry, HETC_PLUGIN_STATE_REFUSED, "ABI major %u, this hetc speaks %d",
               plugin->header.abi_major, HETC_PLUGIN_ABI_MAJOR);
  } else if (plugin->header.struct_size < MINOR0_TABLE_SIZE) {
    set_reason(entry, HETC_PLUGIN_STATE_REFUSED,
               "plugin table is %u bytes, ABI %d.0 needs at least %zu",
               plugin->header.struct_size, HETC_PLUGIN_ABI_MAJOR, (size_t)MINOR0_TABLE_SIZE);
  } else if (!plugin->name || !plugin->name[0] || !plugin->probe || !plugin->instance_create) {
    set_reason(entry, HETC_PLUGIN_STATE_REFUSED, "plugin table lacks a name, probe or instance_create");
  } else {
    for (int32_t i = 0; registry->entries + i < entry; ++i) {
      const hetc_plugin_entry_t *other = &registry->entries[i];
      if (other->plugin && !strcmp(other->plugin->name, plugin->name)) {
        set_reason(entry, HETC_PLUGIN_STATE_REFUSED, "target name '%s' is already served by %s",
                   plugin->name, other->path);
        break;
      }
    }
    if (entry->state != HETC_PLUGIN_STATE_REFUSED) {
      entry->plugin = plugin;
      hetc_plugin_status_t probe = plugin->probe();
      if (probe) {
        set_reason(entry, HETC_PLUGIN_STATE_UNAVAILABLE, "%s", hetc_status_message(probe));
        hetc_status_free(probe);
      } else {
        entry->state = HETC_PLUGIN_STATE_READY;
      }
      return;
    }
  }
  dlclose(entry->handle);
  entry->handle = NULL;
}

hetc_status_t hetc_registry_open(hetc_registry_t **out_registry) {
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
  for (int32_t i = 0; i < registry->count; ++i) load_candidate(registry, &registry->entries[i]);
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
    entry->instance = NULL;
    set_reason(entry, HETC_PLUGIN_STATE_UNAVAILABLE, "instance creation failed: %s",
               hetc_status_message(status));
    hetc_status_free(status);
    return hetc_status_new(HETC_STATUS_UNAVAILABLE, "target '%s' (%s): %s", entry->plugin->name,
                           entry->path, entry->reason);
  }
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
