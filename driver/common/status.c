#include "common/status.h"

#include "common/escape.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct hetc_plugin_status_object_t {
  hetc_status_code_t code;
  int is_static; /* the out-of-memory fallback is never freed */
  const char *message; /* points into storage, or at a literal */
  char storage[];
};

static struct hetc_plugin_status_object_t out_of_memory_status = {HETC_STATUS_OUT_OF_MEMORY, 1,
                                                                   "out of memory"};

static hetc_status_t status_out_of_memory(void) { return &out_of_memory_status; }

hetc_status_t hetc_status_newv(hetc_status_code_t code, const char *format,
                               va_list args) {
  if (code == HETC_STATUS_OK) code = HETC_STATUS_INTERNAL;
  va_list copy;
  va_copy(copy, args);
  int length = vsnprintf(NULL, 0, format, copy);
  va_end(copy);
  if (length < 0) length = 0;
  struct hetc_plugin_status_object_t *status =
      malloc(sizeof(*status) + (size_t)length + 1);
  if (!status) return status_out_of_memory();
  status->code = code;
  status->is_static = 0;
  vsnprintf(status->storage, (size_t)length + 1, format, args);
  status->message = status->storage;
  /* A message can quote any input; escape sequences and carriage returns
   * must not reach the terminal. Lines stay lines: verify lists problems
   * one a line. */
  if (hetc_needs_escape(status->storage, "\n\t")) {
    char *escaped = hetc_escape_controls(status->storage, "\n\t");
    hetc_status_t replaced = escaped ? hetc_status_new(code, "%s", escaped) : status_out_of_memory();
    free(escaped);
    free(status);
    return replaced;
  }
  return status;
}

hetc_status_t hetc_status_new(hetc_status_code_t code, const char *format, ...) {
  va_list args;
  va_start(args, format);
  hetc_status_t status = hetc_status_newv(code, format, args);
  va_end(args);
  return status;
}

hetc_status_t hetc_status_annotate(hetc_status_t status, const char *format,
                                   ...) {
  if (!status || status->is_static) return status;
  char prefix[1024];
  va_list args;
  va_start(args, format);
  vsnprintf(prefix, sizeof(prefix), format, args);
  va_end(args);
  hetc_status_t annotated = hetc_status_new(status->code, "%s: %s", prefix,
                                            status->message);
  hetc_status_free(status);
  return annotated;
}

hetc_status_t hetc_status_recode(hetc_status_t status, hetc_status_code_t code) {
  if (!status || status->is_static || code == HETC_STATUS_OK) return status;
  status->code = code;
  return status;
}

hetc_status_code_t hetc_status_code(hetc_status_t status) {
  if (!status) return HETC_STATUS_OK;
  return status->code;
}

const char *hetc_status_message(hetc_status_t status) {
  return status ? status->message : "ok";
}

void hetc_status_free(hetc_status_t status) {
  if (status && !status->is_static) free(status);
}

const char *hetc_status_code_name(hetc_status_code_t code) {
  switch (code) {
    case HETC_STATUS_OK: return "ok";
    case HETC_STATUS_INVALID_ARGUMENT: return "invalid argument";
    case HETC_STATUS_UNSUPPORTED: return "unsupported";
    case HETC_STATUS_UNAVAILABLE: return "unavailable";
    case HETC_STATUS_OUT_OF_MEMORY: return "out of memory";
    case HETC_STATUS_BUILD_FAILED: return "build failed";
    case HETC_STATUS_DEVICE_LIMITS: return "device limits exceeded";
    case HETC_STATUS_RUNTIME_FAILED: return "runtime failed";
    case HETC_STATUS_TIMEOUT: return "timeout";
    case HETC_STATUS_INTERNAL: return "internal error";
    case HETC_STATUS_BAD_INPUT: return "bad input";
    case HETC_STATUS_IO_ERROR: return "i/o error";
    case HETC_STATUS_NOT_FOUND: return "not found";
    case HETC_STATUS_STORAGE_FAILED: return "storage failed";
    case HETC_STATUS_INTERRUPTED: return "interrupted";
  }
  return "unknown status code";
}
