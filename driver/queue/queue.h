/* driver/queue/queue.h -- the tuning queue in PostgreSQL (hetc.h's
 * hetc_queue_*; the tables are api/queue-format.md). Internal to libhetc. */
#ifndef HETC_DRIVER_QUEUE_QUEUE_H_
#define HETC_DRIVER_QUEUE_QUEUE_H_

#include "common/pg.h"

/* The version of the queue's tables this build reads and writes, kept in
 * hetc_meta under 'queue_schema'. */
#define HETC_QUEUE_SCHEMA_VERSION 1

struct hetc_queue_t {
  hetc_pg_t pg;
  char *uri; /* as given, password included: for a worker's second connection */
};

/* Creates the queue's tables when the database has none, in one
 * transaction that concurrent first users wait on; BAD_INPUT when it holds
 * them at another schema version. */
hetc_status_t hetc_queue_schema_ensure(hetc_pg_t *pg);

/* "host:pid" of this process, for submitters and workers. */
void hetc_queue_process_name(char *out, size_t size);

#endif /* HETC_DRIVER_QUEUE_QUEUE_H_ */
