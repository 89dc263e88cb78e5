/* Statuses and log lines on hosts of every minor (hetc/kit/status.h). */
#include "hetc/kit/status.h"

#include <stdio.h>
#include <stdlib.h>

#include "hetc/kit/host.h"

hetc_plugin_status_t hetc_kit_status_va(const hetc_plugin_host_t *host, int32_t code, const char *format,
                                        va_list args) {
#if HETC_KIT_ABI_AT_LEAST(1, 3)
  if (HETC_PLUGIN_HAS_FIELD(host, hetc_plugin_host_t, status_newv) && host->status_newv)
    return host->status_newv(code, format, args);
#endif
  /* An older host's status_new is variadic only: hand it the text. */
  char stack[2048];
  va_list copy;
  va_copy(copy, args);
  const int n = vsnprintf(stack, sizeof(stack), format, args);
  hetc_plugin_status_t s;
  if (n >= (int)sizeof(stack)) {
    char *heap = malloc((size_t)n + 1);
    if (heap) vsnprintf(heap, (size_t)n + 1, format, copy);
    s = host->status_new(code, "%s", heap ? heap : stack);
    free(heap);
  } else {
    s = host->status_new(code, "%s", stack);
  }
  va_end(copy);
  return s;
}

hetc_plugin_status_t hetc_kit_status(int32_t code, const char *format, ...) {
  va_list args;
  va_start(args, format);
  hetc_plugin_status_t s = hetc_kit_status_va(hetc_kit_host(), code, format, args);
  va_end(args);
  return s;
}

void hetc_kit_log_va(const hetc_plugin_host_t *host, int32_t level, const char *origin, const char *format,
                     va_list args) {
#if HETC_KIT_ABI_AT_LEAST(1, 3)
  if (HETC_PLUGIN_HAS_FIELD(host, hetc_plugin_host_t, logv) && host->logv) {
    host->logv(level, origin, format, args);
    return;
  }
#endif
  /* The host cuts a message at 2047 bytes anyway. */
  char text[2048];
  vsnprintf(text, sizeof(text), format, args);
  host->log(level, origin, "%s", text);
}

void hetc_kit_log(int32_t level, const char *format, ...) {
  va_list args;
  va_start(args, format);
  hetc_kit_log_va(hetc_kit_host(), level, hetc_kit_plugin_name(), format, args);
  va_end(args);
}
