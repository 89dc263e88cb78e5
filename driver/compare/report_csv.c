/* `hetc compare --csv`: one table a spreadsheet can filter. The `kind`
 * column says what a row is: `task` (a task on a device: its best
 * template) or `package` (a whole package benchmarked); columns that do
 * not apply to a kind are empty. Times are in seconds, RFC 4180 quoting. */
#include <stdio.h>
#include <string.h>

#include "compare/compare.h"

static const char header[] =
    "kind,task,key,node,count,flops,device,status,template,config_source,templates,seconds,gflops,"
    "peak_fraction,predicted_seconds,p50_seconds,p90_seconds,p99_seconds,nodes_per_device,copies,detail\n";

/* A field, quoted when it holds a comma, a quote or a line break. */
static void field(FILE *out, const char *text) {
  if (!text) return;
  if (!strpbrk(text, ",\"\r\n")) {
    fputs(text, out);
    return;
  }
  fputc('"', out);
  for (const char *c = text; *c; ++c) {
    if (*c == '"') fputc('"', out);
    fputc(*c, out);
  }
  fputc('"', out);
}

static void number(FILE *out, double value) { fprintf(out, ",%.9g", value); }

static void task_row(const hetc_compare_result_t *r, int32_t i, int32_t d, FILE *out) {
  const hetc_compare_task_t *task = &r->tasks[i];
  const hetc_compare_entry_t *entry = &task->entries[d];
  const hetc_compare_template_t *best = hetc_compare_best(entry);
  fprintf(out, "task,%d,", i + 1);
  field(out, task->key);
  fputc(',', out);
  field(out, task->node_name);
  fprintf(out, ",%d,%.0f,", task->count, task->flops);
  field(out, r->devices[d].target);
  fprintf(out, ",%s,", hetc_compare_state_name(entry->state));
  if (best) {
    field(out, best->name);
    fprintf(out, ",%s,%d", best->config_source, entry->num_templates);
    number(out, best->seconds);
    number(out, best->gflops);
    number(out, entry->peak_fraction);
  } else {
    fprintf(out, ",,%d,,,", entry->num_templates);
  }
  fputs(",,,,,,,", out);
  const char *detail = entry->state == HETC_COMPARE_SKIPPED ? r->devices[d].skipped_reason : entry->error;
  if (!detail && !best && entry->num_templates) detail = entry->templates[0].error;
  field(out, detail);
  fputc('\n', out);
}

static void package_row(const hetc_compare_result_t *r, const hetc_compare_package_t *package, FILE *out) {
  fputs("package,,,,,,", out);
  field(out, package->name);
  fprintf(out, ",%s,,,,,,", hetc_compare_state_name(package->state));
  if (package->state == HETC_COMPARE_OK) {
    number(out, package->predicted_seconds);
    number(out, package->p50);
    number(out, package->p90);
    number(out, package->p99);
    fputc(',', out);
    /* "cpu:3;vec:2": commas would need quoting in every spreadsheet. */
    const char *separator = "";
    for (int32_t d = 0; d < r->num_devices && d < HETC_COMPARE_MAX_DEVICES; ++d) {
      if (!package->nodes_on_device[d]) continue;
      fputs(separator, out);
      field(out, r->devices[d].target);
      fprintf(out, ":%d", package->nodes_on_device[d]);
      separator = ";";
    }
    fprintf(out, ",%d,", package->copies);
  } else {
    fputs(",,,,,,,", out);
  }
  field(out, package->error);
  fputc('\n', out);
}

hetc_status_t hetc_compare_write_csv(const hetc_compare_result_t *r, FILE *out) {
  fputs(header, out);
  for (int32_t i = 0; i < r->num_tasks; ++i)
    for (int32_t d = 0; d < r->num_devices; ++d) task_row(r, i, d, out);
  for (int32_t p = 0; p < r->num_packages; ++p) package_row(r, &r->packages[p], out);
  return ferror(out) ? hetc_status_new(HETC_STATUS_IO_ERROR, "writing the CSV failed") : NULL;
}
