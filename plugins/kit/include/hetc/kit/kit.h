/* hetc/kit/kit.h -- the whole plugin kit in one include.
 *
 * The kit is what a backend plugin needs beyond its kernels, knob spaces
 * and device: a static library (libhetc_plugin_kit.a, PIC, hidden
 * visibility: a plugin linking it still exports only hetc_plugin_query)
 * built against the same hetc/plugin.h as the plugin. Nothing of it is
 * ABI: the host never sees it. Start with host.h (hetc_kit_bind in the
 * query), then take what fits:
 *   status.h, reason.h    statuses and log lines; checks that explain
 *   workload.h, layout.h  workload checks, params, descriptions, copies;
 *                         sizes and layouts
 *   config.h              knobs described once for define_space and build
 *   boundary.h, run.h     artifact_info and run()'s argument checks;
 *                         run and time
 *   buffers.h             buffers in host memory, table-ready
 *   files.h, artifact_file.h  atomic writes, bounded reads; one-file artifacts
 *   reference_ops.h       C kernels for every op but conv2d
 *   resize.h              a resize's rows, columns and weights (ABI 2.0)
 *   features.h            feature rows (ABI minor >= 1)
 *   cpu_info.h, peak.h    a CPU device's model, caches and peak
 *   abi.h                 HETC_KIT_ABI_AT_LEAST, for sources built against
 *                         several headers */
#ifndef HETC_KIT_KIT_H_
#define HETC_KIT_KIT_H_

#include "hetc/kit/abi.h"
#include "hetc/kit/artifact_file.h"
#include "hetc/kit/boundary.h"
#include "hetc/kit/buffers.h"
#include "hetc/kit/config.h"
#include "hetc/kit/cpu_info.h"
#include "hetc/kit/features.h"
#include "hetc/kit/files.h"
#include "hetc/kit/host.h"
#include "hetc/kit/layout.h"
#include "hetc/kit/peak.h"
#include "hetc/kit/reason.h"
#include "hetc/kit/reference_ops.h"
#include "hetc/kit/resize.h"
#include "hetc/kit/run.h"
#include "hetc/kit/status.h"
#include "hetc/kit/workload.h"

#endif /* HETC_KIT_KIT_H_ */
