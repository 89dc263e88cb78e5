/* Interned copies for constraint contexts (see plugin_intern.h). A list is
 * enough: there is one entry per distinct task and template. */
#include "plugin_intern.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

typedef struct interned_t {
  struct interned_t *next;
  size_t size;
  max_align_t data[]; /* size bytes, aligned for any struct */
} interned_t;

static pthread_mutex_t interned_lock = PTHREAD_MUTEX_INITIALIZER;
static interned_t *interned;

const void *hpc_intern(const void *data, size_t size) {
  pthread_mutex_lock(&interned_lock);
  interned_t *e = interned;
  while (e && (e->size != size || memcmp(e->data, data, size) != 0)) e = e->next;
  if (!e && (e = malloc(sizeof(*e) + size))) {
    e->size = size;
    memcpy(e->data, data, size);
    e->next = interned;
    interned = e;
  }
  pthread_mutex_unlock(&interned_lock);
  return e ? e->data : NULL;
}
