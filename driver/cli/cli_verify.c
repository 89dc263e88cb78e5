/* `hetc verify PACKAGE`: everything that can be checked about a package
 * from its files, loading none of them (hetc_package_verify), every problem
 * listed, not just the first. */
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"

int hetc_cli_verify(int argc, char **argv) {
  if (argc != 1 || argv[0][0] == '-') {
    fprintf(stderr, "usage: hetc verify PACKAGE\n");
    return HETC_EXIT_USAGE;
  }
  const char *package = argv[0];
  hetc_verify_report_t report;
  hetc_status_t status = hetc_package_verify(NULL, package, &report);
  if (status) return hetc_cli_report(status);
  if (report.files == 0)
    fprintf(stderr, "hetc: warning: %s: a package of format version 1 or 2 lists no files and checksums; "
                    "recompile it to have them checked\n", package);
  for (const char *line = report.problem_text; line && *line;) {
    const size_t length = strcspn(line, "\n");
    fprintf(stderr, "  %.*s\n", (int)length, line);
    line += length + (line[length] ? 1 : 0);
  }
  if (report.problems) {
    fprintf(stderr, "hetc: %s: %d problem%s (listed above)\n", package, report.problems,
            report.problems == 1 ? "" : "s");
  } else {
    printf("%s: ok: %d steps, %d values, %d files (%.1f MB) matching their checksums and formats, finite "
           "parameters\n",
           package, report.steps, report.values, report.files, (double)report.file_bytes / 1e6);
  }
  const int exit_status = report.problems ? HETC_EXIT_BAD_INPUT : HETC_EXIT_OK;
  hetc_verify_report_free(&report);
  return exit_status;
}
