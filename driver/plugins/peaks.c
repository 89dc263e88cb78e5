#include "plugins/peaks.h"

#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "plugins/host.h"
#include "records/records.h"

/* ------------------------------------------------------------------------ */
/* What this process knows                                                  */
/* ------------------------------------------------------------------------ */

typedef struct known_peak_t {
  char *fingerprint; /* owned */
  double gflops;
  int64_t runs;
} known_peak_t;

/* Few devices, read far more often than written (every feature row reads
 * one): a short list under a lock. It lives as long as the process. */
static pthread_mutex_t known_lock = PTHREAD_MUTEX_INITIALIZER;
static known_peak_t *known;
static int32_t num_known, known_capacity;

static int usable(double gflops) { return gflops > 0 && isfinite(gflops); }

void hetc_peaks_note_known(const char *fingerprint, double gflops, int64_t runs) {
  if (!fingerprint || !fingerprint[0] || !usable(gflops)) return;
  pthread_mutex_lock(&known_lock);
  int32_t i = 0;
  while (i < num_known && strcmp(known[i].fingerprint, fingerprint)) ++i;
  if (i < num_known) {
    if (gflops > known[i].gflops) known[i].gflops = gflops;
    if (runs > known[i].runs) known[i].runs = runs;
  } else {
    if (num_known == known_capacity) {
      int32_t capacity = known_capacity ? 2 * known_capacity : 8;
      known_peak_t *grown = realloc(known, sizeof(*grown) * (size_t)capacity);
      if (grown) {
        known = grown;
        known_capacity = capacity;
      }
    }
    char *copy = num_known < known_capacity ? strdup(fingerprint) : NULL;
    if (copy) known[num_known++] = (known_peak_t){copy, gflops, runs};
  }
  pthread_mutex_unlock(&known_lock);
}

static int find_known(const char *fingerprint, double *out_gflops, int64_t *out_runs) {
  int found = 0;
  pthread_mutex_lock(&known_lock);
  for (int32_t i = 0; i < num_known && !found; ++i) {
    if (strcmp(known[i].fingerprint, fingerprint)) continue;
    *out_gflops = known[i].gflops;
    *out_runs = known[i].runs;
    found = 1;
  }
  pthread_mutex_unlock(&known_lock);
  return found;
}

void hetc_device_peak(const hetc_plugin_device_t *device, hetc_device_peak_t *out_peak) {
  memset(out_peak, 0, sizeof(*out_peak));
  if (!device) return;
  const double fresh = usable(device->peak_gflops_fp32) ? device->peak_gflops_fp32 : 0;
  out_peak->fresh_gflops = out_peak->gflops = fresh;
  double kept = 0;
  int64_t runs = 0;
  if (device->fingerprint && find_known(device->fingerprint, &kept, &runs)) {
    out_peak->kept_gflops = kept;
    out_peak->runs = runs;
    if (kept > fresh) {
      out_peak->gflops = kept;
      out_peak->from_kept = 1;
    }
  }
}

double hetc_device_peak_gflops(const hetc_plugin_device_t *device) {
  hetc_device_peak_t peak;
  hetc_device_peak(device, &peak);
  return peak.gflops;
}

void hetc_device_peak_source(const hetc_device_peak_t *peak, char *out, size_t size) {
  if (!size) return;
  out[0] = 0;
  if (peak->from_kept)
    snprintf(out, size, " (best of %lld run%s; this run %.1f)", (long long)peak->runs, peak->runs == 1 ? "" : "s",
             peak->fresh_gflops);
}

/* ------------------------------------------------------------------------ */
/* The store                                                                */
/* ------------------------------------------------------------------------ */

void hetc_registry_keep_peaks(hetc_registry_t *registry, const char *path, hetc_peaks_mode_t mode) {
  if (!registry || (int)mode <= registry->peaks_mode) return;
  char *copy = path ? strdup(path) : NULL;
  if (path && !copy) return; /* out of memory: the plugins' figures stand */
  free(registry->peaks_path);
  registry->peaks_path = copy;
  registry->peaks_mode = (int)mode;
  /* Instances resolved in a weaker mode fold their figures in now. */
  for (int32_t i = 0; i < registry->count; ++i)
    if (registry->entries[i].instance) hetc_peaks_resolve(&registry->entries[i]);
}

static void warn(hetc_registry_t *registry, int level, const char *message) {
  if (registry->peaks_warned) return;
  registry->peaks_warned = 1;
  hetc_host_services()->log(level, "hetc", "device peaks are not kept: %s", message);
}

/* Opens the registry's store as its mode allows; NULL (after a warning
 * where something went wrong) when there is none to use. */
static hetc_records_t *open_store(hetc_registry_t *registry) {
  const int mode = registry->peaks_mode;
  char *path = registry->peaks_path ? strdup(registry->peaks_path) : hetc_records_default_path();
  hetc_records_t *store = NULL;
  if (!path) {
    /* No home: nowhere to keep anything, which is not worth a warning. */
  } else if (mode < HETC_PEAKS_RECORD_CREATE && !hetc_records_may_exist(path)) {
    /* Only a store that exists. */
  } else {
    /* Reading leaves the file as it is; recording writes an existing store
     * (upgrading it), and only RECORD_CREATE makes one -- the per-user
     * store's directories by opening it as NULL. */
    const hetc_records_mode_t open_mode = mode == HETC_PEAKS_READ   ? HETC_RECORDS_READ
                                          : mode == HETC_PEAKS_RECORD ? HETC_RECORDS_WRITE
                                                                      : HETC_RECORDS_CREATE;
    hetc_status_t status = hetc_records_open_as(
        registry->peaks_path || mode < HETC_PEAKS_RECORD_CREATE ? path : NULL, open_mode, &store);
    if (status) {
      warn(registry, mode >= HETC_PEAKS_RECORD ? HETC_PLUGIN_LOG_WARNING : HETC_PLUGIN_LOG_INFO,
           hetc_status_message(status));
      hetc_status_free(status);
      store = NULL;
    }
  }
  free(path);
  return store;
}

void hetc_peaks_resolve(hetc_plugin_entry_t *entry) {
  hetc_registry_t *registry = entry->registry;
  if (!registry || registry->peaks_mode == HETC_PEAKS_OFF || !entry->instance || !entry->plugin) return;
  /* Once read, or once folded in, is enough for an instance. */
  const int done = registry->peaks_mode >= HETC_PEAKS_RECORD ? HETC_PEAKS_RECORD : HETC_PEAKS_READ;
  if (entry->peaks_resolved >= done) return;
  entry->peaks_resolved = done;
  hetc_records_t *store = open_store(registry);
  if (!store) return;
  const hetc_plugin_t *p = entry->plugin;
  const int32_t devices = p->device_count(entry->instance);
  hetc_status_t status = NULL;
  for (int32_t d = 0; d < devices && !status; ++d) {
    const hetc_plugin_device_t *device = p->device_get(entry->instance, d);
    if (!device || !device->fingerprint || !device->fingerprint[0]) continue;
    hetc_kept_peak_t kept = {0, 0, 0};
    int found = 0;
    if (registry->peaks_mode >= HETC_PEAKS_RECORD && usable(device->peak_gflops_fp32)) {
      status = hetc_records_note_peak(store, device->fingerprint, p->name, device->peak_gflops_fp32, &kept);
      found = !status;
    } else {
      status = hetc_records_get_peak(store, device->fingerprint, &kept, &found);
    }
    if (!status && found) hetc_peaks_note_known(device->fingerprint, kept.gflops, kept.runs);
  }
  if (status) {
    warn(registry, registry->peaks_mode >= HETC_PEAKS_RECORD ? HETC_PLUGIN_LOG_WARNING : HETC_PLUGIN_LOG_INFO,
         hetc_status_message(status));
    hetc_status_free(status);
  }
  hetc_records_close(store);
}
