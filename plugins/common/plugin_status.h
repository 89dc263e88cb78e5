/* plugins/common/plugin_status.h -- failure statuses with printf-formatted
 * messages of any length, for the built-in plugins' own status helpers. */
#ifndef HETC_PLUGINS_COMMON_PLUGIN_STATUS_H_
#define HETC_PLUGINS_COMMON_PLUGIN_STATUS_H_

#include <stdarg.h>

#include "hetc/plugin.h"

/* host->status_new(code, ...) with the message formatted here: the host's
 * own format takes "%s", so a message (a compiler log) of any length goes
 * through whole. The status is the host's, handed to the caller. */
hetc_plugin_status_t hpc_status_v(const hetc_plugin_host_t *host, int32_t code, const char *format, va_list args);

#endif /* HETC_PLUGINS_COMMON_PLUGIN_STATUS_H_ */
