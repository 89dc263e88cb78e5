/* driver/compile/compile.h -- graph + targets -> a package directory.
 *
 * Placement policy (until cost-based placement arrives): every node runs on
 * the first target in the list whose plugin supports its workload, on that
 * plugin's device 0. Each kernel is built with its plugin's first template
 * and that template's default config. Where a kernel reads a layout or a
 * device other than the one its producer wrote, a LAYOUT_TRANSFORM kernel
 * and/or a copy through the host is inserted. */
#ifndef HETC_DRIVER_COMPILE_COMPILE_H_
#define HETC_DRIVER_COMPILE_COMPILE_H_

#include "graph/graph.h"
#include "plugins/registry.h"

/* hetc_compile_report_t is public (hetc/hetc.h). */

/* Compiles `graph` (not modified; the passes run on a copy) for the
 * targets into a package at out_path, written to a temporary directory and
 * renamed into place only when complete. `progress` prints one line per
 * kernel to stderr. */
hetc_status_t hetc_compile_graph(hetc_registry_t *registry, const hetc_graph_t *graph,
                                 const char *const *targets, int32_t num_targets,
                                 int progress, const char *records_path,
                                 const char *requested_path,
                                 hetc_compile_report_t *out_report);

#endif /* HETC_DRIVER_COMPILE_COMPILE_H_ */
