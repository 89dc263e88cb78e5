#include "plugin_status.h"

#include <stdio.h>
#include <stdlib.h>

hetc_plugin_status_t hpc_status_v(const hetc_plugin_host_t *host, int32_t code, const char *format, va_list args) {
  /* A host of minor 3 formats it; an older one gets the formatted text. */
  if (HETC_PLUGIN_HAS_FIELD(host, hetc_plugin_host_t, status_newv) && host->status_newv)
    return host->status_newv(code, format, args);
  char stack[2048];
  va_list copy;
  va_copy(copy, args);
  int n = vsnprintf(stack, sizeof(stack), format, args);
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
