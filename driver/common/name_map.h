/* driver/common/name_map.h -- string -> index map (open addressing). */
#ifndef HETC_DRIVER_COMMON_NAME_MAP_H_
#define HETC_DRIVER_COMMON_NAME_MAP_H_

#include <stdint.h>

typedef struct hetc_name_map_t hetc_name_map_t;

/* A map sized for `capacity` names; NULL when out of memory. Keys are
 * borrowed: they must outlive the map. */
hetc_name_map_t *hetc_name_map_create(int32_t capacity);
void hetc_name_map_free(hetc_name_map_t *map);
/* Inserts name -> index unless present; returns the index now stored. */
int32_t hetc_name_map_put(hetc_name_map_t *map, const char *name, int32_t index);
/* The index of name, or -1. */
int32_t hetc_name_map_get(const hetc_name_map_t *map, const char *name);
/* FNV-1a 64-bit hash of a byte string. */
uint64_t hetc_fnv1a64(const void *data, uint64_t length, uint64_t seed);
#define HETC_FNV1A64_OFFSET UINT64_C(0xcbf29ce484222325)

#endif /* HETC_DRIVER_COMMON_NAME_MAP_H_ */
