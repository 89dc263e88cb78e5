/* driver/common/clock.h -- the monotonic clock every stage times with, and
 * the sort its medians and percentiles share. */
#ifndef HETC_DRIVER_COMMON_CLOCK_H_
#define HETC_DRIVER_COMMON_CLOCK_H_

#include <stddef.h>

/* Seconds on CLOCK_MONOTONIC (a difference of two calls is a duration). */
double hetc_now_seconds(void);

/* Sorts `count` values ascending, in place. */
void hetc_sort_doubles(double *values, size_t count);

#endif
