/* `hetc records list|best|export|import|prune`: the tuning records store
 * from the command line (hetc.h's tuning records, api/records-format.md). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"

static const char usage[] =
    "usage: hetc records list   [--records PATH] [FILTERS] [--limit N]\n"
    "       hetc records best   [--records PATH] [FILTERS]\n"
    "       hetc records export FILE.jsonl [--records PATH] [FILTERS] [--limit N]\n"
    "       hetc records import FILE.jsonl [--records PATH]\n"
    "       hetc records prune  [--records PATH] [--keep N]\n"
    "FILTERS: --target T  --device FINGERPRINT  --workload KEY  --template NAME  --ok\n"
    "--limit N: at most N records, 0 to 2147483647 (default 0: all)\n"
    "--keep N: the N best ok records per group, 0 to 2147483647 (default 10)\n"
    "The store is --records PATH, else $HETC_RECORDS, else\n"
    "$XDG_DATA_HOME/hetc/records.sqlite, else ~/.local/share/hetc/records.sqlite.\n";

/* What the subcommands are given; each takes only its own options. */
typedef struct arguments_t {
  const char *file;    /* export/import */
  const char *records; /* --records */
  hetc_record_filter_t filter;
  int64_t keep;
} arguments_t;

/* 1 when parsed, 0 after printing the error. */
static int parse_arguments(const char *subcommand, int argc, char **argv, arguments_t *out) {
  const int is_list = !strcmp(subcommand, "list"), is_export = !strcmp(subcommand, "export");
  const int filters = is_list || is_export || !strcmp(subcommand, "best");
  const int has_file = is_export || !strcmp(subcommand, "import"), is_prune = !strcmp(subcommand, "prune");
  memset(out, 0, sizeof(*out));
  out->filter = hetc_record_filter_any();
  long long limit = 0, keep = 10;
  char command[32];
  snprintf(command, sizeof(command), "records %s", subcommand);
  hetc_cli_args_t args;
  hetc_cli_args_init(&args, command, usage, argc, argv);
  /* An option another subcommand takes is unexpected here, as is a file
   * for a subcommand that reads none. */
  while (hetc_cli_args_next(&args))
    (void)(hetc_cli_text(&args, "--records", "a path", &out->records) ||
           (filters && hetc_cli_text(&args, "--target", "a target name", &out->filter.target)) ||
           (filters && hetc_cli_text(&args, "--device", "a device fingerprint", &out->filter.device_fingerprint)) ||
           (filters && hetc_cli_text(&args, "--workload", "a workload key", &out->filter.workload_key)) ||
           (filters && hetc_cli_text(&args, "--template", "a template name", &out->filter.template_name)) ||
           (filters && hetc_cli_flag(&args, "--ok", &out->filter.only_ok)) ||
           ((is_list || is_export) && hetc_cli_count(&args, "--limit", 0, INT32_MAX, &limit)) ||
           (is_prune && hetc_cli_count(&args, "--keep", 0, INT32_MAX, &keep)) ||
           (has_file && hetc_cli_positional(&args, "FILE.jsonl", &out->file)));
  if (has_file && !out->file) hetc_cli_error(&args, "no FILE.jsonl given");
  out->filter.limit = limit;
  out->keep = keep;
  return !args.failed;
}

/* "0.812 ms (5 runs)" or "compile_host: first line of the message". */
static void format_result(const hetc_record_t *r, char *out, size_t size) {
  if (r->error == HETC_RECORD_OK) {
    double median = hetc_record_median_cost(r);
    if (r->num_costs == 0) snprintf(out, size, "ok (no costs)");
    else snprintf(out, size, "%.4f ms (%d run%s)", median * 1e3, r->num_costs,
                  r->num_costs == 1 ? "" : "s");
    return;
  }
  const char *message = r->error_message ? r->error_message : "";
  int line_length = (int)strcspn(message, "\r\n");
  if (line_length > 80) line_length = 80;
  snprintf(out, size, "%s%s%.*s", hetc_record_error_name(r->error), line_length ? ": " : "",
           line_length, message);
}

static hetc_status_t list_records(hetc_records_t *store, const hetc_record_filter_t *filter) {
  hetc_record_list_t list;
  hetc_status_t status = hetc_records_query(store, filter, &list);
  if (status) return status;
  for (int32_t i = 0; i < list.count; ++i) {
    const hetc_record_t *r = &list.items[i];
    char when[32], result[160];
    hetc_cli_format_time(r->timestamp, when, sizeof(when));
    format_result(r, result, sizeof(result));
    printf("%s  %s  %s v%u  #%lld %s  %s  | %s | %s\n", when, r->target, r->template_name,
           r->template_version, (long long)r->config_index, r->config_json, result,
           r->workload_key, r->device_fingerprint);
  }
  printf("%d record%s in %s\n", list.count, list.count == 1 ? "" : "s", hetc_records_path(store));
  hetc_record_list_free(&list);
  return NULL;
}

static hetc_status_t best_records(hetc_records_t *store, const hetc_record_filter_t *filter) {
  hetc_record_list_t list;
  hetc_status_t status = hetc_records_best_each(store, filter, &list);
  if (status) return status;
  for (int32_t i = 0; i < list.count; ++i) {
    const hetc_record_t *r = &list.items[i];
    const hetc_record_t *previous = i ? &list.items[i - 1] : NULL;
    /* One heading per (target, device); the list is sorted by them. */
    if (!previous || strcmp(previous->target, r->target) != 0 ||
        strcmp(previous->device_fingerprint, r->device_fingerprint) != 0) {
      printf("%s on %s\n", r->target, r->device_fingerprint);
    }
    char result[160];
    format_result(r, result, sizeof(result));
    printf("  %s: %s v%u, %s, #%lld %s\n", r->workload_key, r->template_name,
           r->template_version, result, (long long)r->config_index, r->config_json);
  }
  printf("%d tuned workload%s in %s\n", list.count, list.count == 1 ? "" : "s",
         hetc_records_path(store));
  hetc_record_list_free(&list);
  return NULL;
}

int hetc_cli_records(int argc, char **argv) {
  static const char *const subcommands[] = {"list", "best", "export", "import", "prune"};
  int known = 0;
  for (size_t i = 0; argc >= 1 && i < sizeof(subcommands) / sizeof(subcommands[0]); ++i)
    known |= !strcmp(argv[0], subcommands[i]);
  if (!known) {
    hetc_cli_args_t args;
    hetc_cli_args_init(&args, "records", usage, argc, argv);
    if (argc < 1) return hetc_cli_error(&args, "no subcommand given (list, best, export, import or prune)");
    return hetc_cli_error(&args, "unknown subcommand '%s' (list, best, export, import or prune)", argv[0]);
  }
  const char *command = argv[0];
  arguments_t args;
  if (!parse_arguments(command, argc - 1, argv + 1, &args)) return HETC_EXIT_USAGE;
  const int is_list = !strcmp(command, "list"), is_best = !strcmp(command, "best"),
            is_export = !strcmp(command, "export"), is_import = !strcmp(command, "import"),
            is_prune = !strcmp(command, "prune");

  /* Only import makes records, so only import creates a store; the
   * readers leave the file exactly as it is. */
  const hetc_records_mode_t mode = is_import ? HETC_RECORDS_CREATE : is_prune ? HETC_RECORDS_WRITE : HETC_RECORDS_READ;
  hetc_records_t *store = NULL;
  hetc_status_t status = is_import ? hetc_records_check_jsonl(args.file, NULL) : NULL;
  if (status) return hetc_cli_report_input(status);
  status = hetc_records_open_as(args.records, mode, &store);
  if (status && args.records && !args.records[0]) {
    hetc_status_t named = hetc_status_new(hetc_status_code(status), "--records: %s", hetc_status_message(status));
    hetc_status_free(status);
    status = named;
  }
  if (status) return hetc_cli_report_input(status);
  if (is_list) {
    status = list_records(store, &args.filter);
  } else if (is_best) {
    status = best_records(store, &args.filter);
  } else if (is_export) {
    int64_t count = 0;
    status = hetc_records_export_jsonl(store, &args.filter, args.file, &count);
    if (!status) printf("exported %lld record%s to %s\n", (long long)count, count == 1 ? "" : "s",
                        args.file);
  } else if (is_import) {
    int32_t imported = 0, duplicates = 0;
    status = hetc_records_import_jsonl(store, args.file, &imported, &duplicates);
    if (!status) {
      printf("imported %d record%s from %s into %s (%d already there)\n", imported,
             imported == 1 ? "" : "s", args.file, hetc_records_path(store), duplicates);
    }
  } else {
    int64_t removed = 0, left = 0;
    status = hetc_records_prune(store, args.keep, &removed);
    if (!status) status = hetc_records_count(store, &left);
    if (!status) printf("removed %lld record%s, %lld left in %s\n", (long long)removed,
                        removed == 1 ? "" : "s", (long long)left, hetc_records_path(store));
  }
  hetc_records_close(store);
  return hetc_cli_report_input(status);
}
