/* driver/common/json_number.h -- doubles that survive a trip through the
 * JSON hetc writes (packages' manifests, model.json).
 *
 * cJSON prints a number with 15 significant digits and keeps them when
 * they read back within a relative DBL_EPSILON, which is not always the
 * same double (1e-5f as a double comes back one ulp off). A parameter that
 * keys a kernel (an epsilon, a scale) must come back bit for bit, so it is
 * written with 17 digits, which always do. */
#ifndef HETC_DRIVER_COMMON_JSON_NUMBER_H_
#define HETC_DRIVER_COMMON_JSON_NUMBER_H_

#include <cjson/cJSON.h>

/* A JSON number that parses back (strtod) to exactly `value`, which must be
 * finite. NULL when out of memory; the caller owns it (cJSON_Delete, or
 * hand it to an object or array). */
cJSON *hetc_json_exact_number(double value);

/* An array of `count` such numbers; NULL when out of memory. */
cJSON *hetc_json_exact_numbers(const double *values, int count);

#endif /* HETC_DRIVER_COMMON_JSON_NUMBER_H_ */
