/* driver/common/status.h -- the one status type of libhetc.
 *
 * A hetc_status_t is NULL on success or a heap object carrying a code and a
 * message. The same objects are what plugins create through
 * host->status_new, so a plugin failure travels up unchanged. Whoever holds
 * a non-NULL status owns it and ends it with hetc_status_free (or passes it
 * on). */
#ifndef HETC_DRIVER_COMMON_STATUS_H_
#define HETC_DRIVER_COMMON_STATUS_H_

#include <stdarg.h>

#include "hetc/hetc.h"

/* hetc_status_new (hetc/hetc.h) with a va_list. */
hetc_status_t hetc_status_newv(hetc_status_code_t code, const char *format,
                               va_list args) HETC_RETURNS_NONNULL;

/* Prepends "prefix: " to the message of a failure and returns it; returns
 * NULL unchanged. Used to add the file name or JSON path as an error climbs. */
hetc_status_t hetc_status_annotate(hetc_status_t status, const char *format, ...)
    HETC_PLUGIN_PRINTF(2, 3);

/* Gives a failure another code, keeping its message; NULL stays NULL. */
hetc_status_t hetc_status_recode(hetc_status_t status, hetc_status_code_t code);

/* Propagates a failure to the caller in one line. */
#define HETC_RETURN_IF_ERROR(expr)                                             \
  do {                                                                         \
    hetc_status_t status_ = (expr);                                            \
    if (status_) return status_;                                               \
  } while (0)

#endif /* HETC_DRIVER_COMMON_STATUS_H_ */
