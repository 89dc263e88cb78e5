/* driver/records/records_jsonl.h -- tuning records as JSON Lines in AutoTVM's
 * record shape, for interchange (api/records-format.md). The format, line by
 * line and with every message the importer gives, is in
 * api/records-format.md.
 *
 * Export -> import -> export is byte-identical, and every field of a record
 * survives (config_json in its canonical spelling,
 * hetc_record_config_canonical). */
#ifndef HETC_DRIVER_RECORDS_RECORDS_JSONL_H_
#define HETC_DRIVER_RECORDS_RECORDS_JSONL_H_

#include <stdint.h>
#include <stdio.h>

#include "records/record.h"
#include "records/records.h"

/* The AutoTVM log version written in "version" and required on import. */
#define HETC_RECORDS_JSONL_VERSION "0.2"

/* One record as one line (no trailing newline). *out_line is owned by the
 * caller (free). INVALID_ARGUMENT when the record breaks
 * hetc_record_validate (such a record would not import). */
hetc_status_t hetc_record_to_jsonl(const hetc_record_t *record, char **out_line);

/* Parses one line into *out_record (zeroed or cleared by the caller; filled
 * and owned by the caller on success, left cleared on failure).
 * INVALID_ARGUMENT with a message that starts at the JSON path of the
 * problem ("/result/1: expected ...") or names the record field; the file
 * importer prefixes "FILE:LINE: ". */
hetc_status_t hetc_record_from_jsonl(const char *line, hetc_record_t *out_record);

/* hetc_records_export_jsonl is public (hetc/hetc.h). */

/* The limits of a records file: a line holds at most this many bytes
 * (a record's line is well under 4 KiB), a file at most this many records
 * (an import holds the store's write lock while it adds them: a million
 * take a few seconds, well inside the others' busy timeout). */
#define HETC_RECORDS_JSONL_MAX_LINE (1 << 20)
#define HETC_RECORDS_JSONL_MAX_RECORDS 1000000

/* Called with each record read (borrowed for the call) and its line
 * number; a failure stops the reading and is returned as it is. */
typedef hetc_status_t (*hetc_jsonl_record_fn_t)(void *user, const hetc_record_t *record, int64_t line);

/* Reads records from `file` line by line (blank lines skipped, a '\r'
 * before the '\n' dropped), named `path` in messages, calling on_record
 * (may be NULL) for each until a line is malformed. A malformed line gives
 * INVALID_ARGUMENT "PATH:LINE: <what is wrong>" for the first one, with the
 * number of further malformed lines, if any: the whole file is read.
 * *out_records (may be NULL): the records read when all were well formed. */
hetc_status_t hetc_records_read_jsonl(FILE *file, const char *path, hetc_jsonl_record_fn_t on_record, void *user,
                                      int64_t *out_records);

/* hetc_records_check_jsonl and hetc_records_import_jsonl (which reads a
 * regular file once before it locks the store, so that a malformed one never
 * keeps another writer waiting; a pipe is read once, under the lock) are
 * public (hetc/hetc.h). */

#endif /* HETC_DRIVER_RECORDS_RECORDS_JSONL_H_ */
