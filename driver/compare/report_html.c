/* `hetc compare --html`: one self-contained page (inline CSS and SVG, no
 * script, nothing fetched) with a grouped bar chart of each task's best
 * GFLOPS per device, a bar chart of each package's p50 latency with the
 * placement's prediction marked, and the numbers as tables. The page has
 * no date in it, so the same result renders the same bytes. Every string
 * that comes from the model or a plugin is escaped, and the SVG is
 * well-formed XML. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "compare/compare.h"

#define CHART_WIDTH 1000.0
#define PLOT_LEFT 70.0
#define PLOT_RIGHT 20.0
#define PLOT_TOP 40.0
#define PLOT_HEIGHT 300.0
#define LABEL_SPACE 110.0
#define LABEL_BYTES 24
#define HETERO_COLOUR "#555555"

/* Tableau 10: distinguishable, and readable printed in grey. */
static const char *const palette[] = {"#4e79a7", "#f28e2b", "#59a14f", "#e15759",
                                      "#76b7b2", "#edc948", "#b07aa1", "#ff9da7"};

static const char *device_colour(int32_t d) { return palette[d % (int32_t)(sizeof(palette) / sizeof(palette[0]))]; }

/* Text for an HTML element, an attribute or an SVG text node. */
static void escaped(FILE *out, const char *text) {
  for (const char *c = text ? text : ""; *c; ++c) {
    switch (*c) {
      case '&': fputs("&amp;", out); break;
      case '<': fputs("&lt;", out); break;
      case '>': fputs("&gt;", out); break;
      case '"': fputs("&quot;", out); break;
      case '\'': fputs("&#39;", out); break;
      default: fputc(*c, out);
    }
  }
}

/* A label shortened to LABEL_BYTES without splitting a UTF-8 character,
 * escaped after cutting so that no entity is cut either. */
static void escaped_label(FILE *out, const char *text) {
  size_t length = strlen(text);
  if (length <= LABEL_BYTES) {
    escaped(out, text);
    return;
  }
  char cut[LABEL_BYTES + 1];
  size_t n = LABEL_BYTES - 1;
  while (n > 0 && ((unsigned char)text[n] & 0xC0) == 0x80) --n;
  memcpy(cut, text, n);
  cut[n] = 0;
  escaped(out, cut);
  fputs("\xE2\x80\xA6", out); /* an ellipsis */
}

/* A round axis step (1, 2 or 5 times a power of ten) giving about five
 * ticks up to `max`; *out_top is the axis end, a multiple of it. */
static double axis_step(double max, double *out_top) {
  if (!(max > 0)) max = 1;
  double raw = max / 5, magnitude = pow(10, floor(log10(raw))), ratio = raw / magnitude;
  double step = (ratio <= 1 ? 1 : ratio <= 2 ? 2 : ratio <= 5 ? 5 : 10) * magnitude;
  *out_top = ceil(max / step - 1e-9) * step;
  return step;
}

static void y_axis(FILE *out, double top, double step, const char *unit) {
  const double bottom = PLOT_TOP + PLOT_HEIGHT;
  fprintf(out, "<line class=\"axis\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/>\n", PLOT_LEFT, PLOT_TOP,
          PLOT_LEFT, bottom);
  fprintf(out, "<line class=\"axis\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/>\n", PLOT_LEFT, bottom,
          CHART_WIDTH - PLOT_RIGHT, bottom);
  for (int32_t k = 0; k * step <= top * (1 + 1e-9); ++k) {
    double value = k * step, y = bottom - value / top * PLOT_HEIGHT;
    fprintf(out, "<line class=\"grid\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/>\n", PLOT_LEFT - 5, y,
            CHART_WIDTH - PLOT_RIGHT, y);
    fprintf(out, "<text class=\"tick\" x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\">%g</text>\n", PLOT_LEFT - 8,
            y + 4, value);
  }
  fprintf(out, "<text class=\"unit\" x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\" transform=\"rotate(-90 %.1f %.1f)\">",
          18.0, PLOT_TOP + PLOT_HEIGHT / 2, 18.0, PLOT_TOP + PLOT_HEIGHT / 2);
  escaped(out, unit);
  fputs("</text>\n", out);
}

static void legend_item(FILE *out, double x, const char *colour, const char *label) {
  fprintf(out, "<rect class=\"swatch\" x=\"%.1f\" y=\"10\" width=\"12\" height=\"12\" fill=\"%s\"/>", x, colour);
  fprintf(out, "<text class=\"legend\" x=\"%.1f\" y=\"20\">", x + 16);
  escaped(out, label);
  fputs("</text>\n", out);
}

static void bar(FILE *out, double x, double width, double value, double top, const char *colour) {
  double height = value / top * PLOT_HEIGHT;
  fprintf(out, "<rect class=\"bar\" x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"%s\">", x,
          PLOT_TOP + PLOT_HEIGHT - height, width, height, colour);
}

static void x_label(FILE *out, double x, const char *prefix, const char *text) {
  const double y = PLOT_TOP + PLOT_HEIGHT + 14;
  fprintf(out, "<text class=\"label\" x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\" transform=\"rotate(-35 %.1f %.1f)\">",
          x, y, x, y);
  escaped(out, prefix);
  escaped_label(out, text);
  fputs("</text>\n", out);
}

static void task_chart(const hetc_compare_result_t *r, FILE *out) {
  double max = 0;
  for (int32_t i = 0; i < r->num_tasks; ++i)
    for (int32_t d = 0; d < r->num_devices; ++d) {
      const hetc_compare_template_t *best = hetc_compare_best(&r->tasks[i].entries[d]);
      if (best && best->gflops > max) max = best->gflops;
    }
  double top = 1, step = axis_step(max, &top);
  fprintf(out, "<svg xmlns=\"http://www.w3.org/2000/svg\" id=\"tasks-chart\" viewBox=\"0 0 %.0f %.0f\" "
               "role=\"img\" aria-label=\"GFLOPS of each task's best template per device\">\n",
          CHART_WIDTH, PLOT_TOP + PLOT_HEIGHT + LABEL_SPACE);
  for (int32_t d = 0; d < r->num_devices; ++d) {
    char label[HETC_COMPARE_NAME_SIZE + 16];
    snprintf(label, sizeof(label), "%s%s", r->devices[d].target, r->devices[d].skipped_reason ? " (skipped)" : "");
    legend_item(out, PLOT_LEFT + 130.0 * d, device_colour(d), label);
  }
  y_axis(out, top, step, "GFLOPS (best template)");
  const double group = (CHART_WIDTH - PLOT_LEFT - PLOT_RIGHT) / (r->num_tasks > 0 ? r->num_tasks : 1);
  const double width = group * 0.8 / (r->num_devices > 0 ? r->num_devices : 1);
  for (int32_t i = 0; i < r->num_tasks; ++i) {
    const hetc_compare_task_t *task = &r->tasks[i];
    const double left = PLOT_LEFT + group * i + group * 0.1;
    for (int32_t d = 0; d < r->num_devices; ++d) {
      const hetc_compare_template_t *best = hetc_compare_best(&task->entries[d]);
      if (!best) continue;
      bar(out, left + width * d, width, best->gflops, top, device_colour(d));
      fprintf(out, "<title>task %d (", i + 1);
      escaped(out, task->node_name);
      fprintf(out, ") on ");
      escaped(out, r->devices[d].target);
      fprintf(out, ": %.1f GFLOPS, %.3f ms, ", best->gflops, best->seconds * 1e3);
      escaped(out, best->name);
      fputs("</title></rect>\n", out);
    }
    char prefix[16];
    snprintf(prefix, sizeof(prefix), "%d ", i + 1);
    x_label(out, PLOT_LEFT + group * (i + 0.5), prefix, task->node_name);
  }
  fputs("</svg>\n", out);
}

static const char *package_colour(const hetc_compare_result_t *r, int32_t p) {
  for (int32_t d = 0; d < r->num_devices; ++d)
    if (!strcmp(r->devices[d].target, r->packages[p].name)) return device_colour(d);
  return HETERO_COLOUR;
}

static void package_chart(const hetc_compare_result_t *r, FILE *out) {
  double max = 0;
  for (int32_t p = 0; p < r->num_packages; ++p) {
    const hetc_compare_package_t *package = &r->packages[p];
    if (package->state != HETC_COMPARE_OK) continue;
    max = fmax(max, fmax(package->p50, package->predicted_seconds) * 1e3);
  }
  double top = 1, step = axis_step(max, &top);
  fprintf(out, "<svg xmlns=\"http://www.w3.org/2000/svg\" id=\"packages-chart\" viewBox=\"0 0 %.0f %.0f\" "
               "role=\"img\" aria-label=\"p50 latency of each package\">\n",
          CHART_WIDTH, PLOT_TOP + PLOT_HEIGHT + LABEL_SPACE);
  legend_item(out, PLOT_LEFT, "#bbbbbb", "p50 measured");
  fprintf(out, "<line class=\"predicted\" x1=\"%.1f\" y1=\"16\" x2=\"%.1f\" y2=\"16\"/>", PLOT_LEFT + 130,
          PLOT_LEFT + 150);
  fprintf(out, "<text class=\"legend\" x=\"%.1f\" y=\"20\">predicted by placement</text>\n", PLOT_LEFT + 156);
  y_axis(out, top, step, "p50 latency (ms)");
  const double group = (CHART_WIDTH - PLOT_LEFT - PLOT_RIGHT) / (r->num_packages > 0 ? r->num_packages : 1);
  const double width = fmin(group * 0.6, 120);
  for (int32_t p = 0; p < r->num_packages; ++p) {
    const hetc_compare_package_t *package = &r->packages[p];
    const double x = PLOT_LEFT + group * (p + 0.5) - width / 2;
    if (package->state == HETC_COMPARE_OK) {
      bar(out, x, width, package->p50 * 1e3, top, package_colour(r, p));
      fputs("<title>", out);
      escaped(out, package->name);
      fprintf(out, ": p50 %.3f ms, p90 %.3f ms, p99 %.3f ms</title></rect>\n", package->p50 * 1e3,
              package->p90 * 1e3, package->p99 * 1e3);
      if (package->predicted_seconds > 0) {
        double y = PLOT_TOP + PLOT_HEIGHT - package->predicted_seconds * 1e3 / top * PLOT_HEIGHT;
        fprintf(out, "<line class=\"predicted\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/>\n", x - 6, y,
                x + width + 6, y);
      }
    } else {
      fprintf(out, "<text class=\"missing\" x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">%s</text>\n",
              x + width / 2, PLOT_TOP + PLOT_HEIGHT - 8, hetc_compare_state_name(package->state));
    }
    x_label(out, x + width / 2, "", package->name);
  }
  fputs("</svg>\n", out);
}

static void cell(FILE *out, const char *text) {
  fputs("<td>", out);
  escaped(out, text);
  fputs("</td>", out);
}

static void device_table(const hetc_compare_result_t *r, FILE *out) {
  fputs("<table id=\"devices\"><tr><th>target</th><th>device</th><th>peak GFLOPS</th><th>status</th></tr>\n", out);
  for (int32_t d = 0; d < r->num_devices; ++d) {
    const hetc_compare_device_t *device = &r->devices[d];
    fprintf(out, "<tr><td><span class=\"key\" style=\"background:%s\"></span>", device_colour(d));
    escaped(out, device->target);
    fputs("</td>", out);
    if (device->skipped_reason) {
      fputs("<td></td><td></td>", out);
      fputs("<td class=\"skipped\">skipped: ", out);
      escaped(out, device->skipped_reason);
      fputs("</td></tr>\n", out);
    } else {
      cell(out, device->name);
      fprintf(out, "<td class=\"n\">%.1f</td><td>ok</td></tr>\n", device->peak_gflops);
    }
  }
  fputs("</table>\n", out);
}

static void entry_cells(const hetc_compare_result_t *r, int32_t d, const hetc_compare_entry_t *entry, FILE *out) {
  const hetc_compare_template_t *best = hetc_compare_best(entry);
  if (best) {
    cell(out, best->name);
    fprintf(out, "<td class=\"n\">%.4g</td><td class=\"n\">%.1f</td><td class=\"n\">%.1f%%</td>",
            best->seconds * 1e3, best->gflops, 100 * entry->peak_fraction);
    cell(out, best->config_source);
    fprintf(out, "<td class=\"n\">%d</td><td></td>", entry->num_templates);
    return;
  }
  /* A skipped device's reason is in the devices table, once. */
  const char *detail = entry->state == HETC_COMPARE_SKIPPED ? "see Devices" : entry->error;
  if (!detail && entry->num_templates) detail = entry->templates[0].error;
  fprintf(out, "<td colspan=\"5\" class=\"skipped\">%s</td><td class=\"n\">%d</td>",
          hetc_compare_state_name(entry->state), entry->num_templates);
  cell(out, detail);
}

static void task_table(const hetc_compare_result_t *r, FILE *out) {
  fputs("<table id=\"tasks\"><tr><th>task</th><th>first node</th><th>workload</th><th>nodes</th><th>MFLOP</th>"
        "<th>device</th><th>best template</th><th>ms</th><th>GFLOPS</th><th>of peak</th><th>config</th>"
        "<th>templates</th><th>note</th></tr>\n",
        out);
  for (int32_t i = 0; i < r->num_tasks; ++i) {
    const hetc_compare_task_t *task = &r->tasks[i];
    for (int32_t d = 0; d < r->num_devices; ++d) {
      fputs("<tr>", out);
      if (d == 0) {
        fprintf(out, "<td rowspan=\"%d\" class=\"n\">%d</td><td rowspan=\"%d\">", r->num_devices, i + 1,
                r->num_devices);
        escaped(out, task->node_name);
        fprintf(out, "</td><td rowspan=\"%d\" class=\"key\">", r->num_devices);
        escaped(out, task->key);
        fprintf(out, "</td><td rowspan=\"%d\" class=\"n\">%d</td><td rowspan=\"%d\" class=\"n\">%.2f</td>",
                r->num_devices, task->count, r->num_devices, task->flops / 1e6);
      }
      cell(out, r->devices[d].target);
      entry_cells(r, d, &task->entries[d], out);
      fputs("</tr>\n", out);
    }
  }
  fputs("</table>\n", out);
}

static void template_table(const hetc_compare_result_t *r, FILE *out) {
  fputs("<details><summary>every template timed</summary>\n<table id=\"templates\"><tr><th>task</th><th>device</th>"
        "<th>template</th><th>config</th><th>ms</th><th>GFLOPS</th><th>note</th></tr>\n",
        out);
  for (int32_t i = 0; i < r->num_tasks; ++i)
    for (int32_t d = 0; d < r->num_devices; ++d) {
      const hetc_compare_entry_t *entry = &r->tasks[i].entries[d];
      for (int32_t t = 0; t < entry->num_templates; ++t) {
        const hetc_compare_template_t *tried = &entry->templates[t];
        fprintf(out, "<tr%s><td class=\"n\">%d</td>", t == entry->best ? " class=\"best\"" : "", i + 1);
        cell(out, r->devices[d].target);
        cell(out, tried->name);
        cell(out, tried->config_source);
        if (tried->error)
          fputs("<td></td><td></td>", out);
        else
          fprintf(out, "<td class=\"n\">%.4g</td><td class=\"n\">%.1f</td>", tried->seconds * 1e3, tried->gflops);
        cell(out, tried->error ? tried->error : t == entry->best ? "best" : "");
        fputs("</tr>\n", out);
      }
    }
  fputs("</table>\n</details>\n", out);
}

static void package_table(const hetc_compare_result_t *r, FILE *out) {
  fputs("<table id=\"packages\"><tr><th>package</th><th>p50 ms</th><th>p90 ms</th><th>p99 ms</th>"
        "<th>predicted ms</th><th>nodes per device</th><th>copies</th><th>note</th></tr>\n",
        out);
  for (int32_t p = 0; p < r->num_packages; ++p) {
    const hetc_compare_package_t *package = &r->packages[p];
    fputs("<tr>", out);
    cell(out, package->name);
    if (package->state != HETC_COMPARE_OK) {
      fprintf(out, "<td colspan=\"6\" class=\"skipped\">%s</td>", hetc_compare_state_name(package->state));
      cell(out, package->error);
      fputs("</tr>\n", out);
      continue;
    }
    fprintf(out, "<td class=\"n\">%.3f</td><td class=\"n\">%.3f</td><td class=\"n\">%.3f</td>", package->p50 * 1e3,
            package->p90 * 1e3, package->p99 * 1e3);
    if (package->predicted_seconds > 0)
      fprintf(out, "<td class=\"n\">%.3f</td><td>", package->predicted_seconds * 1e3);
    else
      fputs("<td></td><td>", out);
    const char *separator = "";
    for (int32_t d = 0; d < r->num_devices && d < HETC_COMPARE_MAX_DEVICES; ++d) {
      if (!package->nodes_on_device[d]) continue;
      fputs(separator, out);
      escaped(out, r->devices[d].target);
      fprintf(out, " %d", package->nodes_on_device[d]);
      separator = ", ";
    }
    fprintf(out, "</td><td class=\"n\">%d</td><td></td></tr>\n", package->copies);
  }
  fputs("</table>\n", out);
}

static const char style[] =
    "body{font-family:system-ui,sans-serif;margin:24px;color:#222;max-width:1100px}"
    "h1{font-size:22px}h2{font-size:17px;margin-top:28px}"
    "table{border-collapse:collapse;margin:8px 0;font-size:13px}"
    "th,td{border:1px solid #ccc;padding:3px 7px;text-align:left;vertical-align:top}"
    "th{background:#f0f0f0}td.n{text-align:right;font-variant-numeric:tabular-nums}"
    "td.key{font-family:monospace;font-size:12px}td.skipped{color:#a33}tr.best td{font-weight:bold}"
    "span.key{display:inline-block;width:10px;height:10px;margin-right:6px}"
    "svg{width:100%;height:auto;background:#fff;font-size:12px}"
    "svg .axis{stroke:#333;stroke-width:1}svg .grid{stroke:#e4e4e4;stroke-width:1}"
    "svg .predicted{stroke:#000;stroke-width:2.5;stroke-dasharray:5 3}"
    "svg .tick,svg .label,svg .legend,svg .unit{fill:#333}svg .missing{fill:#a33}\n";

hetc_status_t hetc_compare_write_html(const hetc_compare_result_t *r, FILE *out) {
  fputs("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>hetc compare: ", out);
  escaped(out, r->model);
  fprintf(out, "</title>\n<style>%s</style>\n</head>\n<body>\n<h1>hetc compare: ", style);
  escaped(out, r->model);
  fputs("</h1>\n<h2>Devices</h2>\n", out);
  device_table(r, out);
  fputs("<h2>Per task: GFLOPS of the best template on each device</h2>\n", out);
  task_chart(r, out);
  task_table(r, out);
  template_table(r, out);
  fprintf(out, "<h2>End to end: p50 latency of each package (%d runs after %d warm-up runs)</h2>\n", r->runs,
          r->warmup_runs);
  package_chart(r, out);
  package_table(r, out);
  fputs("</body>\n</html>\n", out);
  return ferror(out) ? hetc_status_new(HETC_STATUS_IO_ERROR, "writing the HTML failed") : NULL;
}
