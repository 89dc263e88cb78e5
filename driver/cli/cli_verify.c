/* `hetc verify PACKAGE`: everything that can be checked about a package
 * without running it. Opening a package (hetc run) checks the manifest,
 * the plan as a whole, the files' sizes and the kernels' checksums; verify
 * adds weights.bin's checksum, files the manifest does not list, NaN or
 * infinite parameters, and loads every artifact on this machine's plugins.
 * Every problem is listed, not just the first. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "common/fileio.h"
#include "common/nonfinite.h"
#include "package/package_files.h"
#include "package/plan.h"

/* Parameters holding NaN or infinite values, one line each. */
static int32_t report_nonfinite_params(const hetc_plan_t *plan, const char *package) {
  char *path = hetc_path_join(package, HETC_PACKAGE_WEIGHTS);
  char *weights = NULL;
  size_t length = 0;
  hetc_status_t status = path ? hetc_file_read_all(path, (size_t)plan->weights_bytes, &weights, &length)
                              : hetc_status_new(HETC_STATUS_OUT_OF_MEMORY, "verify");
  int32_t problems = 0;
  if (status) {
    /* The file check has said why already. */
    hetc_status_free(status);
    free(path);
    return 0;
  }
  for (int32_t s = 0; s < plan->num_steps; ++s) {
    const hetc_plan_step_t *step = &plan->steps[s];
    for (int32_t p = 0; p < step->num_params; ++p) {
      const hetc_plan_param_t *param = &step->params[p];
      if (param->offset + param->bytes > length) continue;
      const int64_t nonfinite = hetc_count_nonfinite(weights + param->offset, param->bytes);
      if (!nonfinite) continue;
      fprintf(stderr, "  %s: step %d (%s): param %d holds %lld NaN or infinite values\n", path, s, step->name, p,
              (long long)nonfinite);
      ++problems;
    }
  }
  free(weights);
  free(path);
  return problems;
}

/* Problems, one per line under a heading, from a status holding several
 * lines; returns how many. */
static int32_t report_lines(hetc_status_t status) {
  if (!status) return 0;
  int32_t count = 0;
  const char *text = hetc_status_message(status);
  while (*text) {
    const char *end = strchr(text, '\n');
    size_t length = end ? (size_t)(end - text) : strlen(text);
    fprintf(stderr, "  %.*s\n", (int)length, text);
    ++count;
    text += length + (end ? 1 : 0);
  }
  hetc_status_free(status);
  return count;
}

int hetc_cli_verify(int argc, char **argv) {
  if (argc != 1 || argv[0][0] == '-') {
    fprintf(stderr, "usage: hetc verify PACKAGE\n");
    return HETC_EXIT_USAGE;
  }
  const char *package = argv[0];
  hetc_plan_t *plan = NULL;
  hetc_status_t status = hetc_plan_read_manifest(package, &plan);
  if (status) return hetc_cli_report(status);
  if (plan->num_files == 0)
    fprintf(stderr, "hetc: warning: %s: a package of format version 1 or 2 lists no files and checksums; "
                    "recompile it to have them checked\n", package);
  int32_t problems = report_lines(hetc_package_files_check(plan, package, 1));
  problems += report_nonfinite_params(plan, package);
  /* Loading every artifact is what the plugins can check: objects that
   * link, sources that match their workload, layouts that match. */
  int loaded = 0;
  if (problems == 0) {
    hetc_context_t *context = NULL;
    hetc_package_t *opened = NULL;
    status = hetc_context_create(&context);
    if (!status) status = hetc_package_open(context, package, &opened);
    if (hetc_status_code(status) == HETC_STATUS_UNAVAILABLE || hetc_status_code(status) == HETC_STATUS_NOT_FOUND) {
      fprintf(stderr, "hetc: warning: %s: artifacts not loaded: %s\n", package, hetc_status_message(status));
      hetc_status_free(status);
      status = NULL;
    } else if (status) {
      problems += report_lines(status);
      status = NULL;
    } else {
      loaded = 1;
    }
    hetc_package_close(opened);
    hetc_context_destroy(context);
  }
  uint64_t bytes = 0;
  for (int32_t f = 0; f < plan->num_files; ++f) bytes += plan->files[f].bytes;
  if (problems) {
    fprintf(stderr, "hetc: %s: %d problem%s (listed above)\n", package, problems, problems == 1 ? "" : "s");
  } else {
    printf("%s: ok: %d steps, %d values, %d files (%.1f MB) matching their checksums, finite parameters%s\n", package,
           plan->num_steps, plan->num_values, plan->num_files, (double)bytes / 1e6,
           loaded ? ", every artifact loaded" : "");
  }
  hetc_plan_free(plan);
  return problems ? HETC_EXIT_BAD_INPUT : HETC_EXIT_OK;
}
