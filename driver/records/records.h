/* driver/records/records.h -- the tuning records store (api/records-format.md).
 *
 * An SQLite file with one table of records in plain SQL (explicit columns,
 * so that a shared server database can hold the same table), holding each
 * config of a workload on a device once. Several processes may read and
 * write one file at once: the file is in WAL mode, every write is one
 * IMMEDIATE transaction, and a busy store is waited for
 * (HETC_RECORDS_BUSY_TIMEOUT_MS, or $HETC_RECORDS_BUSY_TIMEOUT seconds) before
 * a call gives up with UNAVAILABLE.
 * Tuners claim the configs they are about to measure (hetc_records_claim),
 * so that two of them never measure one config twice. The layout is
 * documented in api/records-format.md.
 *
 * Threads: one hetc_records_t is used by one thread at a time; open one per
 * thread (or process) to write concurrently. Never carry an open store
 * across fork(): open it again in the child.
 *
 * Errors: an empty path, a file that is not a hetc records database, one
 * written by a newer schema, one whose tables or columns are missing, and
 * a row no record can be made of give BAD_INPUT naming the file (and the
 * row's id); a store that does not exist, opened other than to create it,
 * gives NOT_FOUND naming it; SQLite failures give IO_ERROR (permissions),
 * STORAGE_FAILED (disk full, I/O errors), UNAVAILABLE (still locked after
 * the busy timeout), OUT_OF_MEMORY or INTERNAL, each with the path and
 * SQLite's text; a record that breaks hetc_record_validate gives
 * INVALID_ARGUMENT. */
#ifndef HETC_DRIVER_RECORDS_RECORDS_H_
#define HETC_DRIVER_RECORDS_RECORDS_H_

#include <stdint.h>

#include "records/record.h"

/* The schema this build writes (PRAGMA user_version) and the file's
 * identity (PRAGMA application_id, "hetc" in ASCII). */
#define HETC_RECORDS_SCHEMA_VERSION 5
#define HETC_RECORDS_APPLICATION_ID 0x68657463
/* How long a call waits for another process's write to end before it
 * gives up with UNAVAILABLE (an import of a million records holds the
 * store for well under a minute). $HETC_RECORDS_BUSY_TIMEOUT (seconds, 0 to
 * 86400) replaces it; any other value of it is BAD_INPUT when a store is
 * opened. */
#define HETC_RECORDS_BUSY_TIMEOUT_MS 300000
/* A claim made on another machine (a store on a shared filesystem) is
 * honoured this long; on this machine, as long as its process runs. */
#define HETC_RECORDS_CLAIM_LEASE_S 3600

/* hetc_records_t, hetc_records_mode_t, hetc_records_open_as, _close,
 * _path, the record filter and list with hetc_records_query,
 * hetc_records_best_each, hetc_records_prune and hetc_records_count are
 * public (hetc/hetc.h), documented there. */

/* The per-user store: $HETC_RECORDS when set and non-empty, else
 * $XDG_DATA_HOME/hetc/records.sqlite when XDG_DATA_HOME is an absolute
 * path, else $HOME/.local/share/hetc/records.sqlite. NULL when none of
 * them is set (no home). The caller frees the result. */
char *hetc_records_default_path(void);

/* 1 when `path` is a PostgreSQL URI (postgresql:// or postgres://): the
 * store is on that server, in the schema hetc_records, and every call
 * below behaves as on a file, with the URI (its password left out) as the
 * store's name. */
int hetc_records_names_server(const char *path);
/* 1 when `path` names a server, whose store opening tells, or a file that
 * exists: what readers that never create a store check before opening
 * the per-user one. */
int hetc_records_may_exist(const char *path);

/* hetc_records_open_as(path, HETC_RECORDS_CREATE, out_store). */
hetc_status_t hetc_records_open(const char *path, hetc_records_t **out_store);
/* 1 when records and caches written through `store` reach the file (opened
 * to write, or for its caches where the file allows it). */
int hetc_records_writable(const hetc_records_t *store);

/* Adds `count` records in one transaction: all of them or, on any failure
 * (an invalid record included), none. A record of a config the store holds
 * already -- the same (target, device_fingerprint, workload_key,
 * template_name, template_version, config_json) -- is skipped: the record
 * stored stays. config_json is stored in its canonical spelling
 * (hetc_record_config_canonical). Claims on the configs added are
 * released. The records stay the caller's. Needs a store opened to write
 * (INTERNAL otherwise). */
hetc_status_t hetc_records_add(hetc_records_t *store, const hetc_record_t *records,
                               int32_t count);
/* hetc_records_add, with *out_added (may be NULL) set to how many records
 * were new. */
hetc_status_t hetc_records_add_new(hetc_records_t *store, const hetc_record_t *records,
                                   int32_t count, int32_t *out_added);

/* Records added one at a time in one transaction, for callers that read
 * them as they go (the JSON Lines importer): begin, add each (records are
 * numbered from 0 in messages, as by hetc_records_add), then commit or
 * abandon (roll back). Other writers wait meanwhile. */
typedef struct hetc_records_batch_t hetc_records_batch_t;
hetc_status_t hetc_records_batch_begin(hetc_records_t *store, hetc_records_batch_t **out_batch);
hetc_status_t hetc_records_batch_add(hetc_records_batch_t *batch, const hetc_record_t *record);
/* Commits and frees the batch; *out_added (may be NULL): records new to
 * the store. On failure nothing is added. */
hetc_status_t hetc_records_batch_commit(hetc_records_batch_t *batch, int32_t *out_added);
/* Rolls back and frees the batch; NULL is fine. */
void hetc_records_batch_abandon(hetc_records_batch_t *batch);

/* Claims for measurement. A tuner about to measure configs claims them, in
 * one transaction; a config already recorded, or claimed by a tuner still
 * at work (a process that runs, on this machine; for
 * HETC_RECORDS_CLAIM_LEASE_S, on another), is not its to measure. Adding
 * a config's record releases its claim; hetc_records_unclaim releases
 * those given back unmeasured, and closing the store all of its own. A
 * claim whose owner is gone (killed) is taken over. */
typedef enum hetc_claim_t {
  HETC_CLAIM_TAKEN = 0,    /* this store's handle holds it now: measure it */
  HETC_CLAIM_RECORDED = 1, /* the store holds its record (hetc_records_find) */
  HETC_CLAIM_BUSY = 2,     /* another tuner is measuring it */
} hetc_claim_t;
/* `candidates` are records whose identity fields (target,
 * device_fingerprint, workload_key, template_name, template_version,
 * config_json) name the configs; out_claims gets one answer each (all BUSY
 * on failure). Needs a store opened to write. */
hetc_status_t hetc_records_claim(hetc_records_t *store, const hetc_record_t *candidates, int32_t count,
                                 hetc_claim_t *out_claims);
/* Releases this handle's claims on the candidates' configs. */
hetc_status_t hetc_records_unclaim(hetc_records_t *store, const hetc_record_t *candidates, int32_t count);
/* The record of the config `identity` names (its identity fields, as for a
 * claim): *out_found 1 and *out_record (zeroed or cleared beforehand; the
 * caller's, hetc_record_clear) filled, or 0. */
hetc_status_t hetc_records_find(hetc_records_t *store, const hetc_record_t *identity, hetc_record_t *out_record,
                               int *out_found);

/* The ok record with the lowest median cost among those matching (ties:
 * the oldest). *out_found is 1 and *out_record (zeroed or cleared by the
 * caller beforehand; the caller then owns it and clears it with
 * hetc_record_clear) is filled, or *out_found is 0 and *out_record is left
 * untouched. An ok record without costs is never the best. */
hetc_status_t hetc_records_best(hetc_records_t *store, const hetc_record_filter_t *filter,
                                hetc_record_t *out_record, int *out_found);

/* The `count` best distinct configs among the matching records: for each
 * config_json its best record (as hetc_records_best), fastest first. The
 * filter's limit is ignored. */
hetc_status_t hetc_records_best_configs(hetc_records_t *store, const hetc_record_filter_t *filter, int64_t count,
                                       hetc_record_list_t *out_list);

/* What hetc_records_lookup found. */
typedef enum hetc_lookup_kind_t {
  HETC_LOOKUP_NONE,    /* nothing usable: the caller falls back to the
                        * cost model's best predicted config, then the
                        * template's default */
  HETC_LOOKUP_EXACT,   /* tuned for this device fingerprint and workload */
  HETC_LOOKUP_NEAREST, /* tuned for the nearest workload on a device of the
                        * same kind: the record's workload_key and
                        * device_fingerprint say which; the caller reports
                        * it and checks the config fits this workload */
} hetc_lookup_kind_t;

/* A template as it exists now: its name and current version. */
typedef struct hetc_template_id_t {
  const char *name;
  uint32_t version;
} hetc_template_id_t;

/* The config to use for a workload, among the ok records of `target` made
 * with one of `templates` (the templates valid for this workload now, each
 * at its current version; records of other names or versions are ignored):
 *
 *  1. exact: the lowest median cost among records of this
 *     device_fingerprint and workload_key;
 *  2. else nearest: among workloads tuned on devices of the same
 *     device_kind, those with the same op and the same non-shape fields of
 *     the key (kernel, stride, dilation, groups, epilogue, data type), the
 *     one at the smallest log distance over the shape fields
 *       sum over fields f of |ln(f_wanted) - ln(f_tuned)|
 *     with shape fields n c h w k for conv2d and n k units for dense
 *     (padding is neither compared nor counted: it follows from the shape
 *     and kernel, and a config that does not fit is refused on rebuild);
 *     ties go to this device_fingerprint, then the lowest median cost. The
 *     record is that workload's best on that device. A key that is not
 *     "conv2d ..." or "dense ..." only matches itself (on another device
 *     of the same kind).
 *
 * *out_kind says which; *out_record (zeroed or cleared beforehand) is filled
 * and owned by the caller unless *out_kind is HETC_LOOKUP_NONE. */
hetc_status_t hetc_records_lookup(hetc_records_t *store, const char *target,
                                  const char *device_fingerprint, const char *device_kind,
                                  const char *workload_key, const hetc_template_id_t *templates,
                                  int32_t num_templates, hetc_record_t *out_record,
                                  hetc_lookup_kind_t *out_kind);

/* The log distance above between two workload keys; -1 when they are not
 * comparable (other op, other non-shape fields, or unparseable). 0 for
 * equal keys. */
double hetc_workload_key_distance(const char *key_a, const char *key_b);

/* Moving a tensor between a device and the host: latency + bytes x
 * seconds_per_byte, fitted from measurements of the plugin's buffer_write
 * (to_device) and buffer_read (to_host). Kept per device fingerprint. */
typedef enum hetc_transfer_direction_t {
  HETC_TRANSFER_TO_DEVICE = 0,
  HETC_TRANSFER_TO_HOST = 1,
} hetc_transfer_direction_t;

typedef struct hetc_transfer_cost_t {
  double latency_seconds;
  double seconds_per_byte;
} hetc_transfer_cost_t;

/* Stores (replacing) the cost of one device and direction; a store that
 * cannot be written (hetc_records_writable) keeps nothing and says so by
 * nothing: it is a cache. */
hetc_status_t hetc_records_put_transfer(hetc_records_t *store, const char *device_fingerprint,
                                        hetc_transfer_direction_t direction, const hetc_transfer_cost_t *cost);
/* Reads it; *out_found is 0 when the store has none. */
hetc_status_t hetc_records_get_transfer(hetc_records_t *store, const char *device_fingerprint,
                                        hetc_transfer_direction_t direction, hetc_transfer_cost_t *out_cost,
                                        int *out_found);

/* A device's fp32 peak kept over runs: the best (highest) figure measured
 * for its fingerprint. Load on a shared machine only ever lowers a
 * measurement, so the maximum converges on the real peak. */
typedef struct hetc_kept_peak_t {
  double gflops;     /* the best measured, > 0 */
  int64_t runs;      /* measurements folded in, >= 1 */
  int64_t timestamp; /* Unix seconds of the best measurement */
} hetc_kept_peak_t;

/* Folds one measurement (finite, > 0; INVALID_ARGUMENT otherwise, or for an
 * empty fingerprint) into the fingerprint's kept peak in one transaction:
 * the best becomes the higher of the two, runs grows by one.
 * *out_peak (may be NULL) receives the kept peak after it. A store that
 * cannot be written keeps nothing; *out_peak is then what it would hold. */
hetc_status_t hetc_records_note_peak(hetc_records_t *store, const char *device_fingerprint, const char *target,
                                     double gflops, hetc_kept_peak_t *out_peak);
/* The fingerprint's kept peak; *out_found is 0 (and *out_peak untouched)
 * when the store has none. */
hetc_status_t hetc_records_get_peak(hetc_records_t *store, const char *device_fingerprint,
                                    hetc_kept_peak_t *out_peak, int *out_found);

/* The plan graph-level selection chose for a model on a list of targets
 * (place/placement_costs.h): per node, its device (an index into the
 * targets), template and config (NULL: the template's default), and where
 * the config came from. Kept so that `hetc compile` builds what `hetc tune`
 * chose without costing every candidate again. */
typedef struct hetc_selection_entry_t {
  char *node;
  int32_t device;
  char *template_name;
  uint32_t template_version;
  char *config_json; /* NULL: the template's default */
  char *source;      /* "default", "tuned", "nearest", "predicted" */
} hetc_selection_entry_t;

typedef struct hetc_selection_t {
  int32_t count;
  hetc_selection_entry_t *entries; /* owned, with their strings */
  double predicted_seconds;        /* the plan's expected latency */
  int64_t records;                 /* records in the store when it was chosen */
} hetc_selection_t;

void hetc_selection_free(hetc_selection_t *selection);

/* Replaces the selection of (model_key, targets) in one transaction; a
 * store that cannot be written keeps nothing (a cache). */
hetc_status_t hetc_records_put_selection(hetc_records_t *store, const char *model_key, const char *targets,
                                         const hetc_selection_t *selection);
/* Reads it; out_selection->count is 0 when there is none. Freed with
 * hetc_selection_free. */
hetc_status_t hetc_records_get_selection(hetc_records_t *store, const char *model_key, const char *targets,
                                         hetc_selection_t *out_selection);

/* The global cost model trained on the store's records (the tuner's
 * transfer learning, records/transfer_learning.h), kept with the store so
 * that the next process, on this machine or another sharing the store,
 * starts from it: beside a file as PATH.model (replaced atomically), on a
 * server in the store's cost_models table. hetc_records_model_name says
 * how messages name it (borrowed from the store). A store that cannot be
 * written keeps nothing. */
hetc_status_t hetc_records_put_model(hetc_records_t *store, const char *bytes, size_t length);
/* The kept model: *out_bytes (the caller frees it; NUL-terminated) and
 * *out_length, and *out_found 1; or *out_found 0 when there is none. */
hetc_status_t hetc_records_get_model(hetc_records_t *store, char **out_bytes, size_t *out_length, int *out_found);
const char *hetc_records_model_name(const hetc_records_t *store);

/* When a tuner held a device to measure (tune/device_lock.h): the store
 * keeps every hold in its table `measurements`, with the machine and the
 * process, so that anyone can check that no two measurements shared a
 * device, across every tuner and worker that wrote to the store. */
typedef struct hetc_measure_hold_t {
  char lock[160];               /* the device's lock: its name, or "cores" for a CPU device */
  char device[160];             /* the device's name (its fingerprint as a file name) */
  int64_t started_us, ended_us; /* CLOCK_REALTIME microseconds */
} hetc_measure_hold_t;
/* Adds `count` holds of this process in one transaction (the table is made
 * on first use). A store that cannot be written keeps nothing. */
hetc_status_t hetc_records_note_holds(hetc_records_t *store, const hetc_measure_hold_t *holds, int32_t count);

#endif /* HETC_DRIVER_RECORDS_RECORDS_H_ */
