/* driver/common/thread_pool.h -- the process-wide worker pool behind the
 * host's parallel_for. */
#ifndef HETC_DRIVER_COMMON_THREAD_POOL_H_
#define HETC_DRIVER_COMMON_THREAD_POOL_H_

#include <stddef.h>
#include <stdint.h>

#include "hetc/plugin.h"

/* Stack size of the pool's worker threads (documented in plugin.h, parallel_for). */
#define HETC_THREAD_STACK_BYTES ((size_t)8 << 20)

/* Sets the number of threads (>= 1, capped at hetc_env_max_threads())
 * used from the next parallel_for on; 0 means the online core count (or
 * HETC_NUM_THREADS when set, capped the same way). */
void hetc_thread_pool_set_threads(int32_t threads);
int32_t hetc_thread_pool_threads(void);

/* Runs body over [0, count) in chunks of at least `grain`; the caller's
 * thread takes part. Nested calls run serially on the calling thread. */
void hetc_parallel_for(int64_t count, int64_t grain, hetc_plugin_parallel_body_fn_t body,
                       void *user_data);

/* Stops the workers (at exit and in tests); the pool restarts on demand. */
void hetc_thread_pool_shutdown(void);

#endif /* HETC_DRIVER_COMMON_THREAD_POOL_H_ */
