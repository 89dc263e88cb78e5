/*
 * hetc/hetc.h -- the library API of hetc (libhetc).
 *
 * The `hetc` command is a thin layer over these calls; an application can
 * embed the same pipeline: load a model, extract its tasks, compile it for
 * a list of targets into a package, open the package and run it.
 *
 * Conventions: every fallible call returns hetc_status_t (NULL on success;
 * otherwise owned by the caller, read with hetc_status_code/_message and
 * released with hetc_status_free). Output parameters come last and are named
 * out_*. Objects are released by the matching matching destroy or free call. Unless
 * stated otherwise, one object is not used from two threads at once.
 */
#ifndef HETC_HETC_H_
#define HETC_HETC_H_

#include <stddef.h>
#include <stdint.h>

#include "hetc/plugin.h"

#ifdef __cplusplus
extern "C" {
#endif

#define HETC_VERSION_STRING "0.1.0"

/* ------------------------------------------------------------------------ */
/* Status                                                                   */
/* ------------------------------------------------------------------------ */

/* Codes 0..99 are the plugin ABI's canonical codes (same values); codes
 * from 100 are the driver's own. */
typedef enum hetc_status_code_t {
  HETC_STATUS_OK = HETC_PLUGIN_STATUS_OK,
  HETC_STATUS_INVALID_ARGUMENT = HETC_PLUGIN_STATUS_INVALID_ARGUMENT,
  HETC_STATUS_UNSUPPORTED = HETC_PLUGIN_STATUS_UNSUPPORTED,
  HETC_STATUS_UNAVAILABLE = HETC_PLUGIN_STATUS_UNAVAILABLE,
  HETC_STATUS_OUT_OF_MEMORY = HETC_PLUGIN_STATUS_OUT_OF_MEMORY,
  HETC_STATUS_BUILD_FAILED = HETC_PLUGIN_STATUS_BUILD_FAILED,
  HETC_STATUS_DEVICE_LIMITS = HETC_PLUGIN_STATUS_DEVICE_LIMITS,
  HETC_STATUS_RUNTIME_FAILED = HETC_PLUGIN_STATUS_RUNTIME_FAILED,
  HETC_STATUS_TIMEOUT = HETC_PLUGIN_STATUS_TIMEOUT,
  HETC_STATUS_INTERNAL = HETC_PLUGIN_STATUS_INTERNAL,
  /* A file the user supplied (model, weights, package, input) is malformed;
   * the message names the file and the place in it. The CLI exits with 2. */
  HETC_STATUS_BAD_INPUT = 100,
  /* Reading or writing a file failed (the message has the path and errno
   * text). */
  HETC_STATUS_IO_ERROR = 101,
  /* A named thing (target, plugin, node) does not exist. */
  HETC_STATUS_NOT_FOUND = 102,
} hetc_status_code_t;

/* Same object as hetc_plugin_status_t: plugin failures pass through. */
typedef struct hetc_plugin_status_object_t *hetc_status_t;

hetc_status_code_t hetc_status_code(hetc_status_t status);
/* Borrowed; valid until hetc_status_free. "ok" for NULL. */
const char *hetc_status_message(hetc_status_t status);
void hetc_status_free(hetc_status_t status);
/* Static string naming a code. */
const char *hetc_status_code_name(hetc_status_code_t code);

#ifdef __cplusplus
}
#endif

#endif /* HETC_HETC_H_ */
