/* driver/check/plugin_check.h -- `hetc plugin-check`: the conformance run
 * any plugin can be put through (api/plugin-guide.md, "Testing").
 *
 * The plugin is never loaded into the calling process. A child process
 * (fork) loads it and runs the checks in a fixed order, one numbered item
 * at a time, reporting each result over a pipe; when the child crashes or
 * an item outlives its time limit, the item is reported as such and a new
 * child goes on from the next item. Then one child per older ABI version
 * (1.7 down to 1.0) negotiates with a host of that version. */
#ifndef HETC_DRIVER_CHECK_PLUGIN_CHECK_H_
#define HETC_DRIVER_CHECK_PLUGIN_CHECK_H_

#include <stdio.h>

#include "common/status.h"

/* hetc_plugin_check_options_t, hetc_plugin_check_default_options,
 * hetc_plugin_check_summary_t and hetc_plugin_check are public
 * (hetc/hetc.h). */

/* ---- Between the supervisor and its child (check_session.c). ---- */

/* Runs the checks of ABI level `level` (plugins/abi_level.h;
 * HETC_ABI_LEVEL_NOW: the full run; older: negotiation and spaces with a
 * host of that version) in this
 * process, reporting from item `first_item` on to file descriptor `fd`.
 * Lines: "B <item>\t<label>" when an item begins, "R <kind>\t<text>" per
 * result (kind PASS, FAIL, SKIP or NOTE; newlines in text sent as \x1e),
 * "E <item>" when it ends. */
void hetc_plugin_check_session(const char *path, const hetc_plugin_check_options_t *options, uint32_t level,
                               int32_t first_item, int fd);

#endif
