#include "common/name_map.h"

#include <stdlib.h>
#include <string.h>

typedef struct slot_t {
  const char *name;
  int32_t index;
} slot_t;

struct hetc_name_map_t {
  uint64_t mask; /* slot count - 1; slot count is a power of two */
  int32_t size;
  slot_t *slots;
};

uint64_t hetc_fnv1a64(const void *data, uint64_t length, uint64_t seed) {
  const unsigned char *bytes = data;
  uint64_t hash = seed;
  for (uint64_t i = 0; i < length; ++i) {
    hash ^= bytes[i];
    hash *= UINT64_C(0x100000001b3);
  }
  return hash;
}

hetc_name_map_t *hetc_name_map_create(int32_t capacity) {
  hetc_name_map_t *map = calloc(1, sizeof(*map));
  if (!map) return NULL;
  uint64_t slots = 16;
  while (slots < (uint64_t)capacity * 2 + 2) slots *= 2;
  map->slots = calloc(slots, sizeof(slot_t));
  if (!map->slots) {
    free(map);
    return NULL;
  }
  map->mask = slots - 1;
  return map;
}

void hetc_name_map_free(hetc_name_map_t *map) {
  if (!map) return;
  free(map->slots);
  free(map);
}

static slot_t *find(const hetc_name_map_t *map, const char *name) {
  uint64_t at = hetc_fnv1a64(name, strlen(name), HETC_FNV1A64_OFFSET) & map->mask;
  while (map->slots[at].name && strcmp(map->slots[at].name, name) != 0) at = (at + 1) & map->mask;
  return &map->slots[at];
}

int32_t hetc_name_map_put(hetc_name_map_t *map, const char *name, int32_t index) {
  slot_t *slot = find(map, name);
  if (slot->name) return slot->index;
  /* The map is sized at creation to stay at most half full. */
  if ((uint64_t)map->size * 2 + 2 > map->mask + 1) return -1;
  slot->name = name;
  slot->index = index;
  ++map->size;
  return index;
}

int32_t hetc_name_map_get(const hetc_name_map_t *map, const char *name) {
  const slot_t *slot = find(map, name);
  return slot->name ? slot->index : -1;
}
