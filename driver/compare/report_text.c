/* `hetc compare`'s terminal table. */
#include <stdio.h>
#include <string.h>

#include "compare/compare.h"

static void print_devices(const hetc_compare_result_t *r, FILE *out) {
  int32_t available = 0;
  for (int32_t d = 0; d < r->num_devices; ++d) available += !r->devices[d].skipped_reason;
  fprintf(out, "compare %s on", r->model);
  for (int32_t d = 0; d < r->num_devices; ++d) fprintf(out, "%s %s", d ? "," : "", r->devices[d].target);
  fprintf(out, " (%d of %d targets available)\n", available, r->num_devices);
  for (int32_t d = 0; d < r->num_devices; ++d) {
    const hetc_compare_device_t *device = &r->devices[d];
    if (device->skipped_reason)
      fprintf(out, "  %-8s skipped: %s\n", device->target, device->skipped_reason);
    else
      fprintf(out, "  %-8s %s, peak %.1f GFLOPS\n", device->target, device->name, device->peak_gflops);
  }
}

static void print_entry(const hetc_compare_result_t *r, int32_t d, const hetc_compare_entry_t *entry, FILE *out) {
  const hetc_compare_template_t *best = hetc_compare_best(entry);
  fprintf(out, "        %-8s ", r->devices[d].target);
  if (best) {
    int32_t failed = 0;
    for (int32_t t = 0; t < entry->num_templates; ++t) failed += entry->templates[t].error != NULL;
    fprintf(out, "%-24s %10.4g %9.1f %6.1f%%  %-9s %d", best->name, best->seconds * 1e3, best->gflops,
            100 * entry->peak_fraction, best->config_source, entry->num_templates);
    if (failed) fprintf(out, " (%d failed)", failed);
    fputc('\n', out);
  } else if (entry->state == HETC_COMPARE_SKIPPED) {
    fprintf(out, "skipped\n");
  } else if (entry->error) {
    fprintf(out, "%s: %s\n", hetc_compare_state_name(entry->state), entry->error);
  } else {
    /* Every template failed: the first message says why. */
    fprintf(out, "failed: %s\n", entry->num_templates ? entry->templates[0].error : "no template");
  }
}

static void print_packages(const hetc_compare_result_t *r, FILE *out) {
  fprintf(out, "\nend to end (%d runs after %d warm-up runs, ms):\n", r->runs, r->warmup_runs);
  fprintf(out, "  %-8s %10s %10s %10s %10s  %s\n", "package", "p50", "p90", "p99", "predicted", "nodes per device");
  for (int32_t p = 0; p < r->num_packages; ++p) {
    const hetc_compare_package_t *package = &r->packages[p];
    fprintf(out, "  %-8s ", package->name);
    if (package->state != HETC_COMPARE_OK) {
      const char *reason = package->error;
      for (int32_t d = 0; !reason && d < r->num_devices; ++d)
        if (!strcmp(r->devices[d].target, package->name)) reason = r->devices[d].skipped_reason;
      fprintf(out, "%s: %s\n", hetc_compare_state_name(package->state), reason ? reason : "");
      continue;
    }
    fprintf(out, "%10.3f %10.3f %10.3f %10.3f  ", package->p50 * 1e3, package->p90 * 1e3, package->p99 * 1e3,
            package->predicted_seconds * 1e3);
    const char *separator = "";
    for (int32_t d = 0; d < r->num_devices && d < HETC_COMPARE_MAX_DEVICES; ++d) {
      if (!package->nodes_on_device[d]) continue;
      fprintf(out, "%s%s %d", separator, r->devices[d].target, package->nodes_on_device[d]);
      separator = ", ";
    }
    if (package->copies) fprintf(out, "; %d cop%s", package->copies, package->copies == 1 ? "y" : "ies");
    fputc('\n', out);
  }
}

hetc_status_t hetc_compare_write_text(const hetc_compare_result_t *r, FILE *out) {
  print_devices(r, out);
  fprintf(out, "\nper task: the best template on each device (time of one node)\n");
  fprintf(out, "  task  nodes     MFLOP  key (first node)\n");
  fprintf(out, "        %-8s %-24s %10s %9s %7s  %-9s %s\n", "device", "best template", "ms", "GFLOPS", "peak",
          "config", "templates");
  for (int32_t i = 0; i < r->num_tasks; ++i) {
    const hetc_compare_task_t *task = &r->tasks[i];
    fprintf(out, "  %4d  %5d %9.3f  %s (%s)\n", i + 1, task->count, task->flops / 1e6, task->key, task->node_name);
    for (int32_t d = 0; d < r->num_devices; ++d) print_entry(r, d, &task->entries[d], out);
  }
  print_packages(r, out);
  return ferror(out) ? hetc_status_new(HETC_STATUS_IO_ERROR, "writing the report failed") : NULL;
}
