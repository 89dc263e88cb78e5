/* driver/compile/compile.h -- graph + targets -> a package directory.
 *
 * Placement: on several targets, each node runs where the cost model puts
 * it (place/placement_costs.h), a conv2d possibly split by output
 * channels across two devices (graph/split.h, as options->split says), or,
 * with HETC_PLACEMENT_FIRST, on the first target in the list whose plugin
 * supports its workload; always on the plugin's device 0. Each kernel gets the config the records choose,
 * else its template's default. Where a kernel reads a layout or a device
 * other than the one its producer wrote, a LAYOUT_TRANSFORM kernel and/or
 * a copy through the host is inserted. */
#ifndef HETC_DRIVER_COMPILE_COMPILE_H_
#define HETC_DRIVER_COMPILE_COMPILE_H_

#include "graph/graph.h"
#include "plugins/registry.h"

/* hetc_compile_report_t is public (hetc/hetc.h). */

/* Compiles `graph` (not modified; the passes run on a copy) for the
 * options' targets into a package at out_path, written to a temporary
 * directory and renamed into place only when complete. */
hetc_status_t hetc_compile_graph(hetc_registry_t *registry, const hetc_graph_t *graph,
                                 const hetc_compile_options_t *options, const char *requested_path,
                                 hetc_compile_report_t *out_report);

/* hetc_compile_select is public (hetc/hetc.h). */

#endif /* HETC_DRIVER_COMPILE_COMPILE_H_ */
