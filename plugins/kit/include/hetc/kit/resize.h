/* hetc/kit/resize.h -- a resize workload's sampling (ABI 2.0), computed
 * once at build time as plugin.h defines it, so that every kernel reads
 * the same rows and columns with the same weights: a nearest kernel reads
 * tap.lo, a linear one blends tap.lo and tap.hi with 1 - weight and
 * weight. Built against an older header this file declares nothing. */
#ifndef HETC_KIT_RESIZE_H_
#define HETC_KIT_RESIZE_H_

#include <stdint.h>

#include <hetc/plugin.h>

#include "hetc/kit/abi.h"

#if HETC_KIT_ABI_AT_LEAST(2, 0)

#ifdef __cplusplus
extern "C" {
#endif

typedef struct hetc_kit_resize_tap_t {
  int32_t lo, hi; /* input rows (columns); equal for nearest */
  float weight;   /* of hi: 0 for nearest */
} hetc_kit_resize_tap_t;

/* The taps of output rows (dim 2) or columns (dim 3) first .. first +
 * count - 1 of a resize workload that hetc_kit_workload_check accepts, into
 * `taps` (the caller's, count entries). */
void hetc_kit_resize_taps(const hetc_plugin_workload_t *wl, int32_t dim, int64_t first, int64_t count,
                          hetc_kit_resize_tap_t *taps);

#ifdef __cplusplus
}
#endif

#endif /* HETC_KIT_ABI_AT_LEAST(2, 0) */

#endif /* HETC_KIT_RESIZE_H_ */
