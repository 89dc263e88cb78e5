/* driver/common/nonfinite.h -- counting NaN and infinite float32 values,
 * for the warnings about parameters and outputs that hold them: hetc runs
 * such a model (it is not malformed), but its results are meaningless. */
#ifndef HETC_DRIVER_COMMON_NONFINITE_H_
#define HETC_DRIVER_COMMON_NONFINITE_H_

#include <math.h>
#include <stdint.h>
#include <string.h>

/* `bytes` need not be a multiple of 4 nor `data` aligned (packed params
 * sit at any offset of weights.bin); a trailing partial float is ignored. */
static inline int64_t hetc_count_nonfinite(const void *data, uint64_t bytes) {
  int64_t count = 0;
  const unsigned char *p = data;
  for (uint64_t i = 0; i + 4 <= bytes; i += 4) {
    float value;
    memcpy(&value, p + i, sizeof(value));
    count += !isfinite(value);
  }
  return count;
}

#endif /* HETC_DRIVER_COMMON_NONFINITE_H_ */
