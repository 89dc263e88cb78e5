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

/* A job's model as every worker loads it: its stored bytes alone in a
 * folder of their own, under `file_name` (whose extension says JSON or
 * ONNX), with `input_shapes` (the --input-shape text, or NULL), shapes
 * only: tuning needs no weights, and a model.json's weights file or an
 * ONNX file's external data stayed with the submitter. Failures name the
 * model by `file_name`. Submission loads every model so too, so that a job
 * no worker could load is refused there. */
hetc_status_t hetc_queue_load_model(const char *file_name, const void *content, size_t length,
                                    const char *input_shapes, hetc_model_t **out_model);

/* "host:pid" of this process, for submitters and workers. */
void hetc_queue_process_name(char *out, size_t size);

#endif /* HETC_DRIVER_QUEUE_QUEUE_H_ */
