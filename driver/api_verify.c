/* The public API's check of a package without running it (hetc/hetc.h,
 * hetc_package_verify). Opening a package checks the manifest, the plan as
 * a whole, the files' sizes and the kernels' checksums, and stops at the
 * first problem; verify adds weights.bin's checksum, each artifact's format,
 * files the manifest does not list and NaN or infinite parameters, and
 * lists every problem. It loads no artifact and no plugin: loading a
 * kernel runs its code (an ELF constructor runs at dlopen), and a package
 * is checked to decide whether to run it. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/fileio.h"
#include "common/nonfinite.h"
#include "package/package_files.h"
#include "package/plan.h"

/* Appends each line of `text` (split at '\n') to the report's problems. */
static void add_lines(hetc_verify_report_t *report, const char *text) {
  size_t used = report->problem_text ? strlen(report->problem_text) : 0;
  char *grown = realloc(report->problem_text, used + strlen(text) + 2);
  if (!grown) return;
  report->problem_text = grown;
  while (*text) {
    const char *end = strchr(text, '\n');
    const size_t length = end ? (size_t)(end - text) : strlen(text);
    memcpy(grown + used, text, length);
    used += length;
    grown[used++] = '\n';
    ++report->problems;
    text += length + (end ? 1 : 0);
  }
  grown[used] = '\0';
}

/* The lines of a status holding several, as problems; frees it. */
static void add_status(hetc_verify_report_t *report, hetc_status_t status) {
  if (!status) return;
  add_lines(report, hetc_status_message(status));
  hetc_status_free(status);
}

static void add_problem(hetc_verify_report_t *report, const char *format, ...) HETC_PLUGIN_PRINTF(2, 3);
static void add_problem(hetc_verify_report_t *report, const char *format, ...) {
  va_list list;
  va_start(list, format);
  char *line = NULL;
  if (vasprintf(&line, format, list) >= 0) {
    add_lines(report, line);
    free(line);
  }
  va_end(list);
}

/* Parameters holding NaN or infinite values, one problem each. */
static void check_params(const hetc_plan_t *plan, const char *package, hetc_verify_report_t *report) {
  char *path = hetc_path_join(package, HETC_PACKAGE_WEIGHTS);
  char *weights = NULL;
  size_t length = 0;
  hetc_status_t status = path ? hetc_file_read_all(path, (size_t)plan->weights_bytes, &weights, &length)
                              : hetc_status_new(HETC_STATUS_OUT_OF_MEMORY, "verify");
  /* An unreadable weights.bin: the file check has said why already. */
  const int readable = !status;
  hetc_status_free(status);
  for (int32_t s = 0; readable && s < plan->num_steps; ++s) {
    const hetc_plan_step_t *step = &plan->steps[s];
    for (int32_t p = 0; p < step->num_params; ++p) {
      const hetc_plan_param_t *param = &step->params[p];
      if (param->offset + param->bytes > length) continue;
      const int64_t nonfinite = hetc_count_nonfinite(weights + param->offset, param->bytes);
      if (nonfinite)
        add_problem(report, "%s: step %d (%s): param %d holds %lld NaN or infinite values", path, s, step->name, p,
                    (long long)nonfinite);
    }
  }
  free(weights);
  free(path);
}

hetc_status_t hetc_package_verify(hetc_context_t *context, const char *path, hetc_verify_report_t *out_report) {
  (void)context;
  memset(out_report, 0, sizeof(*out_report));
  hetc_plan_t *plan = NULL;
  HETC_RETURN_IF_ERROR(hetc_plan_read_manifest(path, &plan));
  out_report->steps = plan->num_steps;
  out_report->values = plan->num_values;
  out_report->files = plan->num_files;
  for (int32_t f = 0; f < plan->num_files; ++f) out_report->file_bytes += plan->files[f].bytes;
  add_status(out_report, hetc_package_files_check(plan, path, 1));
  check_params(plan, path, out_report);
  hetc_plan_free(plan);
  return NULL;
}

void hetc_verify_report_free(hetc_verify_report_t *report) {
  if (!report) return;
  free(report->problem_text);
  free(report->not_loaded);
  memset(report, 0, sizeof(*report));
}
