/* Reasons of refusals without statuses (hetc/kit/reason.h). */
#include "hetc/kit/reason.h"

#include <stdarg.h>
#include <stdio.h>

int32_t hetc_kit_refuse(hetc_kit_reason_t *reason, int32_t code, const char *format, ...) {
  if (reason && reason->size) {
    va_list args;
    va_start(args, format);
    vsnprintf(reason->text, reason->size, format, args);
    va_end(args);
  }
  return code;
}
