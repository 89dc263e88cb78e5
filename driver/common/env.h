/* driver/common/env.h -- the environment variables libhetc reads whose
 * value can be wrong, each parsed in one place so that a bad value is an
 * error naming the variable (README.md, "The command line") rather than a
 * silent default.
 *
 * The readers that cannot return an error (the thread pool, the plugin
 * host's log) take the default for a bad value; hetc_env_check, run by
 * hetc_registry_open (hetc_context_create) and by the hetc command before
 * any subcommand, is where a bad value is reported. An empty variable
 * counts as unset. */
#ifndef HETC_DRIVER_COMMON_ENV_H_
#define HETC_DRIVER_COMMON_ENV_H_

#include <stdint.h>

#include "common/status.h"

/* HETC_NUM_THREADS above this many threads per online core is capped:
 * more threads than cores only take turns on them, and hetc's pool spins
 * between jobs, so 32 threads a core made SqueezeNet 17x slower and 512 a
 * core near to a hang (while 32768 exhausted libgomp's threads before the
 * vec kernels moved onto the pool). */
#define HETC_MAX_THREADS_PER_CORE 4

/* The most threads HETC_NUM_THREADS may ask for here:
 * HETC_MAX_THREADS_PER_CORE times the online cores. */
int32_t hetc_env_max_threads(void);

/* HETC_NUM_THREADS: 0 in *out_threads when unset; else the number, capped
 * at hetc_env_max_threads() with a warning on stderr (once per process).
 * BAD_INPUT, naming the variable and the value, when it is not a whole
 * number of 1 or more (*out_threads is then 0). */
hetc_status_t hetc_env_num_threads(int32_t *out_threads);

/* HETC_LOG_LEVEL: -1 in *out_level when unset, else the
 * HETC_PLUGIN_LOG_* level it names (error, warning, info, debug);
 * BAD_INPUT for any other value (*out_level is then -1). */
hetc_status_t hetc_env_log_level(int32_t *out_level);

/* HETC_PLUGIN_PATH: every entry (colon-separated; empty ones are skipped)
 * must be a directory hetc can read; ignored in setuid processes, as the
 * registry ignores it there. */
hetc_status_t hetc_env_check_plugin_path(void);

/* The variable `name` as seconds from 0 to 86400 (a decimal number) in
 * *out_seconds; `fallback` when unset. BAD_INPUT naming the variable and
 * the value otherwise. For waits a user may shorten or lengthen
 * (HETC_RECORDS_BUSY_TIMEOUT, HETC_LOCK_TIMEOUT), read where the wait is. */
hetc_status_t hetc_env_seconds(const char *name, double fallback, double *out_seconds);

/* hetc_env_check (hetc/hetc.h) checks every variable above, and
 * HETC_LOCK_TIMEOUT. */

#endif /* HETC_DRIVER_COMMON_ENV_H_ */
