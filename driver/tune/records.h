/* driver/tune/records.h -- the tuning records store (tuner.md, "Records").
 *
 * An SQLite file with one table of records in plain SQL (explicit columns,
 * so that a shared server database can hold the same table). Several
 * processes may read and write one file at once: the file is in WAL mode,
 * every write is one IMMEDIATE transaction, and a busy store is waited for
 * (HETC_RECORDS_BUSY_TIMEOUT_MS) before a call gives up with UNAVAILABLE.
 * The layout is documented in api/records-format.md.
 *
 * Threads: one hetc_records_t is used by one thread at a time; open one per
 * thread (or process) to write concurrently. Never carry an open store
 * across fork(): open it again in the child.
 *
 * Errors: a file that is not a hetc records database, or one written by a
 * newer schema, gives BAD_INPUT naming the file; SQLite failures give
 * IO_ERROR (disk, permissions), UNAVAILABLE (still locked after the busy
 * timeout), OUT_OF_MEMORY or INTERNAL, each with the path and SQLite's text;
 * a record that breaks hetc_record_validate gives INVALID_ARGUMENT. */
#ifndef HETC_DRIVER_TUNE_RECORDS_H_
#define HETC_DRIVER_TUNE_RECORDS_H_

#include <stdint.h>

#include "tune/record.h"

/* The schema this build writes (PRAGMA user_version) and the file's
 * identity (PRAGMA application_id, "hetc" in ASCII). */
#define HETC_RECORDS_SCHEMA_VERSION 4
#define HETC_RECORDS_APPLICATION_ID 0x68657463
#define HETC_RECORDS_BUSY_TIMEOUT_MS 60000

typedef struct hetc_records_t hetc_records_t;

/* The per-user store: $HETC_RECORDS when set and non-empty, else
 * $XDG_DATA_HOME/hetc/records.sqlite when XDG_DATA_HOME is an absolute
 * path, else $HOME/.local/share/hetc/records.sqlite. NULL when none of
 * them is set (no home). The caller frees the result. */
char *hetc_records_default_path(void);

/* Opens (creating when missing) the store at `path`; NULL means
 * hetc_records_default_path(), whose directory is created when missing
 * (an explicit path's directory must exist). A new or empty file gets the
 * schema. *out_store is released with hetc_records_close. */
hetc_status_t hetc_records_open(const char *path, hetc_records_t **out_store);
/* Closes the store; NULL is fine. */
void hetc_records_close(hetc_records_t *store);
/* The file's path; borrowed, lives as long as the store. */
const char *hetc_records_path(const hetc_records_t *store);

/* Adds `count` records in one transaction: all of them or, on any failure
 * (an invalid record included), none. config_json is stored in its
 * canonical spelling (hetc_record_config_canonical). The records stay the
 * caller's. */
hetc_status_t hetc_records_add(hetc_records_t *store, const hetc_record_t *records,
                               int32_t count);
/* Like hetc_records_add, but skips each record that the store already
 * holds with every field equal (the same measurement imported twice);
 * *out_added (may be NULL) receives how many were new. */
hetc_status_t hetc_records_add_new(hetc_records_t *store, const hetc_record_t *records,
                                   int32_t count, int32_t *out_added);

/* Which records a query, best or export considers. Strings are borrowed;
 * a NULL string matches anything. Zero-initialise and set
 * template_version = -1 for "any version" (hetc_record_filter_any()). */
typedef struct hetc_record_filter_t {
  const char *target;
  const char *device_fingerprint;
  const char *device_kind;
  const char *workload_key;
  const char *template_name;
  int64_t template_version; /* -1: any */
  int only_ok;              /* 1: only records whose error is ok */
  int64_t limit;            /* 0: all; else at most this many */
} hetc_record_filter_t;

/* A filter that matches every record. */
hetc_record_filter_t hetc_record_filter_any(void);

/* Records handed to the caller: `items` (count of them) and every string
 * in them are owned by the list and released by hetc_record_list_free. */
typedef struct hetc_record_list_t {
  int32_t count;
  hetc_record_t *items;
} hetc_record_list_t;

/* The matching records, oldest first (by timestamp, then by the order in
 * which they were added); with a limit, the oldest `limit` of them.
 * NULL filter: everything. *out_list is overwritten (not freed first). */
hetc_status_t hetc_records_query(hetc_records_t *store, const hetc_record_filter_t *filter,
                                 hetc_record_list_t *out_list);
/* Frees the items and zeroes the list; NULL is fine. */
void hetc_record_list_free(hetc_record_list_t *list);

/* The ok record with the lowest median cost among those matching (ties:
 * the oldest). *out_found is 1 and *out_record (zeroed or cleared by the
 * caller beforehand; the caller then owns it and clears it with
 * hetc_record_clear) is filled, or *out_found is 0 and *out_record is left
 * untouched. An ok record without costs is never the best. */
hetc_status_t hetc_records_best(hetc_records_t *store, const hetc_record_filter_t *filter,
                                hetc_record_t *out_record, int *out_found);

/* The best record (as hetc_records_best) of each (target,
 * device_fingerprint, workload_key) among those matching, ordered by
 * target, fingerprint and workload key. The filter's limit is ignored. */
hetc_status_t hetc_records_best_each(hetc_records_t *store, const hetc_record_filter_t *filter,
                                     hetc_record_list_t *out_list);

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

/* Drops what is no longer worth keeping, in one transaction:
 *  - ok records beyond the `keep` best (lowest median cost, ties oldest;
 *    ok records without costs rank last) of each (target,
 *    device_fingerprint, workload_key, template_name, template_version);
 *  - failed records of a template version that is not current, where
 *    current means the highest version the store holds for that target
 *    and template name (plugins only ever bump versions, plugin.h).
 * Failed records of current versions are all kept: failed configs are never
 * measured again. keep >= 0. *out_removed (may be NULL) receives how many
 * records were deleted. */
hetc_status_t hetc_records_prune(hetc_records_t *store, int64_t keep, int64_t *out_removed);

/* Number of records in the store. */
hetc_status_t hetc_records_count(hetc_records_t *store, int64_t *out_count);

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

/* Stores (replacing) the cost of one device and direction. */
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
 * *out_peak (may be NULL) receives the kept peak after it. */
hetc_status_t hetc_records_note_peak(hetc_records_t *store, const char *device_fingerprint, const char *target,
                                     double gflops, hetc_kept_peak_t *out_peak);
/* The fingerprint's kept peak; *out_found is 0 (and *out_peak untouched)
 * when the store has none. */
hetc_status_t hetc_records_get_peak(hetc_records_t *store, const char *device_fingerprint,
                                    hetc_kept_peak_t *out_peak, int *out_found);

/* The plan graph-level selection chose for a model on a list of targets
 * (compile/placement_costs.h): per node, its device (an index into the
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

/* Replaces the selection of (model_key, targets) in one transaction. */
hetc_status_t hetc_records_put_selection(hetc_records_t *store, const char *model_key, const char *targets,
                                         const hetc_selection_t *selection);
/* Reads it; out_selection->count is 0 when there is none. Freed with
 * hetc_selection_free. */
hetc_status_t hetc_records_get_selection(hetc_records_t *store, const char *model_key, const char *targets,
                                         hetc_selection_t *out_selection);

#endif /* HETC_DRIVER_TUNE_RECORDS_H_ */
