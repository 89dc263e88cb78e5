/* hetc/kit/status.h -- failure statuses and log lines with printf-style
 * messages, on any host minor.
 *
 * A host of ABI minor 3 takes the format and arguments itself (status_newv,
 * logv); an older one gets the text formatted here first and passed as
 * "%s", so a message of any length (a compiler log) arrives whole. */
#ifndef HETC_KIT_STATUS_H_
#define HETC_KIT_STATUS_H_

#include <stdarg.h>
#include <stdint.h>

#include <hetc/plugin.h>

#include "hetc/kit/abi.h"

#ifdef __cplusplus
extern "C" {
#endif

/* A failure status with the formatted message, created by the bound host.
 * Never NULL. It belongs to whoever returns it to the host (or frees it
 * with host->status_free). */
hetc_plugin_status_t hetc_kit_status(int32_t code, const char *format, ...) HETC_PLUGIN_PRINTF(2, 3);

/* hetc_kit_status on a given host, for a plugin that keeps its own host
 * pointer (and tests that set it without a query). Does not va_end args. */
hetc_plugin_status_t hetc_kit_status_va(const hetc_plugin_host_t *host, int32_t code, const char *format,
                                        va_list args);

/* A log line at `level` (hetc_plugin_log_level_t) through the bound host,
 * its origin the bound plugin name. */
void hetc_kit_log(int32_t level, const char *format, ...) HETC_PLUGIN_PRINTF(2, 3);

/* hetc_kit_log on a given host and origin. Does not va_end args. */
void hetc_kit_log_va(const hetc_plugin_host_t *host, int32_t level, const char *origin, const char *format,
                     va_list args);

#ifdef __cplusplus
}
#endif

#endif /* HETC_KIT_STATUS_H_ */
