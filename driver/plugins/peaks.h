/* driver/plugins/peaks.h -- one fp32 peak per device for everything that
 * shows or uses one.
 *
 * A plugin measures its device's peak when its instance is created (cuda
 * states a nominal one). On a shared machine one measurement can come out
 * far low -- another process holds a core -- but never high, so the records
 * store keeps the best measured per device fingerprint (table `peaks`,
 * api/records-format.md) and the maximum over runs converges on the real
 * peak. A registry told where the store is (hetc_registry_keep_peaks) folds
 * every instance's fresh figures into it as the instance is created, and
 * this process then knows each device's kept peak. hetc_device_peak() is
 * the one figure every consumer reads: `hetc plugins`, the tuner's device
 * features and end table, `hetc compare`, `hetc plugin-check` and the cost
 * model's predictions in `hetc compile`.
 *
 * What the process knows is kept per fingerprint for the life of the
 * process (the highest figure any registry of it read), so a feature row
 * computed from a bare plugin and instance (tune/features.c) sees it too.
 * Thread-safe. */
#ifndef HETC_DRIVER_PLUGINS_PEAKS_H_
#define HETC_DRIVER_PLUGINS_PEAKS_H_

#include <stddef.h>
#include <stdint.h>

#include "plugins/registry.h"

/* hetc_peaks_mode_t, hetc_device_peak_t, hetc_device_peak and
 * hetc_device_peak_source are public (hetc/hetc.h). */

/* The registry's device peaks are kept in the records store at `path`
 * (NULL: the per-user store, hetc_records_default_path()). Instances that
 * exist are resolved now, later ones as hetc_registry_instance creates them.
 * A registry already keeping peaks in a mode at least as strong is left as
 * it is. A store that cannot be opened or written is a warning (once per
 * registry), never a failure: the plugins' own figures stand. */
void hetc_registry_keep_peaks(hetc_registry_t *registry, const char *path, hetc_peaks_mode_t mode);

/* Called by hetc_registry_instance once the entry's instance exists:
 * reads (and in the RECORD modes folds in) the kept peak of every device. */
void hetc_peaks_resolve(hetc_plugin_entry_t *entry);

/* hetc_device_peak(device).gflops. */
double hetc_device_peak_gflops(const hetc_plugin_device_t *device);

/* Makes the process know `gflops` (with `runs`) as the kept peak of
 * `fingerprint`, unless it knows a higher one: what resolving does with a
 * store's row. For tests and for consumers that read a store themselves. */
void hetc_peaks_note_known(const char *fingerprint, double gflops, int64_t runs);

#endif /* HETC_DRIVER_PLUGINS_PEAKS_H_ */
