/* `hetc verify PACKAGE [--trust KEY.public]`: everything that can be
 * checked about a package from its files, loading none of them
 * (hetc_package_verify), every problem listed, not just the first; with
 * --trust, its signature too. */
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"

static const char usage[] =
    "usage: hetc verify PACKAGE [--trust KEY.public]\n"
    "  --trust KEY.public  also check that the package is signed with this key's secret key\n"
    "                      (`hetc compile --sign`) and unchanged since\n";

int hetc_cli_verify(int argc, char **argv) {
  const char *package = NULL, *trust = NULL;
  hetc_cli_args_t args;
  hetc_cli_args_init(&args, "verify", usage, argc, argv);
  while (hetc_cli_args_next(&args))
    (void)(hetc_cli_text(&args, "--trust", "a public key file", &trust) ||
           hetc_cli_positional(&args, "PACKAGE", &package));
  if (!package) hetc_cli_error(&args, "no PACKAGE given");
  if (args.failed) return HETC_EXIT_USAGE;
  hetc_verify_report_t report;
  hetc_status_t status = hetc_package_verify(NULL, package, &report);
  if (status) return hetc_cli_report(status);
  hetc_status_t signature = trust ? hetc_package_check_signature(package, trust) : NULL;
  if (report.files == 0)
    fprintf(stderr, "hetc: warning: %s: a package of format version 1 or 2 lists no files and checksums; "
                    "recompile it to have them checked\n", package);
  for (const char *line = report.problem_text; line && *line;) {
    const size_t length = strcspn(line, "\n");
    fprintf(stderr, "  %.*s\n", (int)length, line);
    line += length + (line[length] ? 1 : 0);
  }
  if (signature) fprintf(stderr, "  %s\n", hetc_status_message(signature));
  const int problems = report.problems + (signature != NULL);
  if (problems) {
    fprintf(stderr, "hetc: %s: %d problem%s (listed above)\n", package, problems, problems == 1 ? "" : "s");
  } else {
    printf("%s: ok: %d steps, %d values, %d files (%.1f MB) matching their checksums and formats, finite "
           "parameters%s%s\n",
           package, report.steps, report.values, report.files, (double)report.file_bytes / 1e6,
           trust ? ", signed with the secret key of " : "", trust ? trust : "");
  }
  const int exit_status = problems ? HETC_EXIT_BAD_INPUT : HETC_EXIT_OK;
  hetc_status_free(signature);
  hetc_verify_report_free(&report);
  return exit_status;
}
