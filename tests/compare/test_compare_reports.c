/* The `hetc compare` renderers on a hand-built result: the exact CSV, the
 * JSON read back field by field, and the HTML's bars, escaping and
 * well-formed SVG. With `--write-html FILE` it only writes the HTML of the
 * same result (the smoke test renders it in a browser). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>
#include <cmocka.h>

#include "compare/compare.h"

/* Two tasks on cpu, vec and a cuda that is not here; task 2 has no vec
 * kernel, vec's second template for task 1 failed to build. */
static void build_result(hetc_compare_result_t *r) {
  memset(r, 0, sizeof(*r));
  strcpy(r->model, "net<&>");
  r->runs = 10;
  r->warmup_runs = 2;
  r->num_devices = 3;
  strcpy(r->devices[0].target, "cpu");
  strcpy(r->devices[0].name, "Test CPU \"8 cores\"");
  r->devices[0].peak_gflops = 100;
  strcpy(r->devices[1].target, "vec");
  strcpy(r->devices[1].name, "Test CPU");
  r->devices[1].peak_gflops = 50;
  strcpy(r->devices[2].target, "cuda");
  r->devices[2].skipped_reason = strdup("no NVIDIA driver");

  r->num_tasks = 2;
  r->tasks = calloc(2, sizeof(hetc_compare_task_t));
  hetc_compare_task_t *t1 = &r->tasks[0], *t2 = &r->tasks[1];
  strcpy(t1->key, "conv2d n1 c3 h8 w8 k4 r3x3 s1x1 p1,1,1,1 d1x1 g1 f32");
  strcpy(t1->node_name, "<conv&1>");
  t1->count = 2;
  t1->flops = 2e6;
  strcpy(t2->key, "dense n1 k8 units4 f32");
  strcpy(t2->node_name, "fc");
  t2->count = 1;
  t2->flops = 64;
  for (int32_t i = 0; i < 2; ++i) {
    r->tasks[i].entries = calloc(3, sizeof(hetc_compare_entry_t));
    r->tasks[i].entries[2].state = HETC_COMPARE_SKIPPED;
    r->tasks[i].entries[2].best = -1;
  }
  hetc_compare_entry_t *e = &t1->entries[0];
  e->num_templates = 2;
  e->templates = calloc(2, sizeof(hetc_compare_template_t));
  strcpy(e->templates[0].name, "direct");
  strcpy(e->templates[0].config_source, "tuned");
  e->templates[0].seconds = 0.002;
  e->templates[0].gflops = 1;
  strcpy(e->templates[1].name, "winograd");
  strcpy(e->templates[1].config_source, "default");
  e->templates[1].seconds = 0.001;
  e->templates[1].gflops = 2;
  e->best = 1;
  e->peak_fraction = 0.02;
  e = &t1->entries[1];
  e->num_templates = 2;
  e->templates = calloc(2, sizeof(hetc_compare_template_t));
  strcpy(e->templates[0].name, "nchwc");
  strcpy(e->templates[0].config_source, "default");
  e->templates[0].seconds = 0.004;
  e->templates[0].gflops = 0.5;
  strcpy(e->templates[1].name, "im2col");
  strcpy(e->templates[1].config_source, "default");
  e->templates[1].error = strdup("build failed: \"x\", line 3");
  e->best = 0;
  e->peak_fraction = 0.01;
  e = &t2->entries[0];
  e->num_templates = 1;
  e->templates = calloc(1, sizeof(hetc_compare_template_t));
  strcpy(e->templates[0].name, "gemm");
  strcpy(e->templates[0].config_source, "nearest");
  e->templates[0].seconds = 0.000032;
  e->templates[0].gflops = 0.002;
  e->best = 0;
  e->peak_fraction = 0.00002;
  e = &t2->entries[1];
  e->state = HETC_COMPARE_UNSUPPORTED;
  e->best = -1;
  e->error = strdup("the target does not support this workload");

  r->num_packages = 4;
  r->packages = calloc(4, sizeof(hetc_compare_package_t));
  hetc_compare_package_t *p = r->packages;
  strcpy(p[0].name, "cpu");
  p[0].predicted_seconds = 0.0025;
  p[0].p50 = 0.003;
  p[0].p90 = 0.0035;
  p[0].p99 = 0.004;
  p[0].nodes_on_device[0] = 3;
  strcpy(p[1].name, "vec");
  p[1].predicted_seconds = 0.009;
  p[1].p50 = 0.01;
  p[1].p90 = 0.011;
  p[1].p99 = 0.0125;
  p[1].nodes_on_device[1] = 3;
  strcpy(p[2].name, "cuda");
  p[2].state = HETC_COMPARE_SKIPPED;
  p[2].error = strdup("no NVIDIA driver");
  strcpy(p[3].name, "hetero");
  p[3].predicted_seconds = 0.002;
  p[3].p50 = 0.0028;
  p[3].p90 = 0.003;
  p[3].p99 = 0.0031;
  p[3].nodes_on_device[0] = 2;
  p[3].nodes_on_device[1] = 1;
  p[3].copies = 2;
}

/* What a renderer writes, NUL-terminated; the caller frees it. */
static char *render(hetc_status_t (*write)(const hetc_compare_result_t *, FILE *), const hetc_compare_result_t *r) {
  char *text = NULL;
  size_t length = 0;
  FILE *out = open_memstream(&text, &length);
  assert_non_null(out);
  hetc_status_t status = write(r, out);
  if (status) fail_msg("%s", hetc_status_message(status));
  assert_int_equal(fclose(out), 0);
  return text;
}

static void csv_is_exact(void **state) {
  (void)state;
  hetc_compare_result_t r;
  build_result(&r);
  char *csv = render(hetc_compare_write_csv, &r);
  static const char expected[] =
      "kind,task,key,node,count,flops,device,status,template,config_source,templates,seconds,gflops,"
      "peak_fraction,predicted_seconds,p50_seconds,p90_seconds,p99_seconds,nodes_per_device,copies,detail\n"
      "task,1,\"conv2d n1 c3 h8 w8 k4 r3x3 s1x1 p1,1,1,1 d1x1 g1 f32\",<conv&1>,2,2000000,cpu,ok,winograd,default,2,"
      "0.001,2,0.02,,,,,,,\n"
      "task,1,\"conv2d n1 c3 h8 w8 k4 r3x3 s1x1 p1,1,1,1 d1x1 g1 f32\",<conv&1>,2,2000000,vec,ok,nchwc,default,2,"
      "0.004,0.5,0.01,,,,,,,\n"
      "task,1,\"conv2d n1 c3 h8 w8 k4 r3x3 s1x1 p1,1,1,1 d1x1 g1 f32\",<conv&1>,2,2000000,cuda,skipped,,,0,,,,,,,,,,"
      "no NVIDIA driver\n"
      "task,2,dense n1 k8 units4 f32,fc,1,64,cpu,ok,gemm,nearest,1,3.2e-05,0.002,2e-05,,,,,,,\n"
      "task,2,dense n1 k8 units4 f32,fc,1,64,vec,unsupported,,,0,,,,,,,,,,the target does not support this workload\n"
      "task,2,dense n1 k8 units4 f32,fc,1,64,cuda,skipped,,,0,,,,,,,,,,no NVIDIA driver\n"
      "package,,,,,,cpu,ok,,,,,,,0.0025,0.003,0.0035,0.004,cpu:3,0,\n"
      "package,,,,,,vec,ok,,,,,,,0.009,0.01,0.011,0.0125,vec:3,0,\n"
      "package,,,,,,cuda,skipped,,,,,,,,,,,,,no NVIDIA driver\n"
      "package,,,,,,hetero,ok,,,,,,,0.002,0.0028,0.003,0.0031,cpu:2;vec:1,2,\n";
  assert_string_equal(csv, expected);
  /* Every row has the header's 21 columns (commas outside quotes). */
  for (const char *line = csv; *line;) {
    int columns = 1, quoted = 0;
    for (; *line && *line != '\n'; ++line) {
      if (*line == '"') quoted = !quoted;
      if (*line == ',' && !quoted) ++columns;
    }
    assert_int_equal(columns, 21);
    if (*line) ++line;
  }
  free(csv);
  hetc_compare_result_free(&r);
}

static const cJSON *member(const cJSON *object, const char *name) {
  const cJSON *item = cJSON_GetObjectItemCaseSensitive(object, name);
  if (!item) fail_msg("no member '%s'", name);
  return item;
}

static void assert_number(const cJSON *object, const char *name, double want) {
  const cJSON *item = member(object, name);
  assert_true(cJSON_IsNumber(item));
  if (item->valuedouble != want) fail_msg("%s: %.17g, want %.17g", name, item->valuedouble, want);
}

static void assert_text(const cJSON *object, const char *name, const char *want) {
  const cJSON *item = member(object, name);
  if (!want) {
    assert_true(cJSON_IsNull(item));
    return;
  }
  assert_true(cJSON_IsString(item));
  assert_string_equal(item->valuestring, want);
}

static void json_reads_back(void **state) {
  (void)state;
  hetc_compare_result_t r;
  build_result(&r);
  char *text = render(hetc_compare_write_json, &r);
  cJSON *root = cJSON_Parse(text);
  assert_non_null(root);
  assert_text(root, "model", "net<&>");
  assert_number(root, "runs", 10);
  assert_number(root, "warmup_runs", 2);
  const cJSON *devices = member(root, "devices");
  assert_int_equal(cJSON_GetArraySize(devices), 3);
  assert_text(cJSON_GetArrayItem(devices, 0), "name", "Test CPU \"8 cores\"");
  assert_number(cJSON_GetArrayItem(devices, 0), "peak_gflops", 100);
  assert_text(cJSON_GetArrayItem(devices, 0), "status", "ok");
  assert_text(cJSON_GetArrayItem(devices, 2), "status", "skipped");
  assert_text(cJSON_GetArrayItem(devices, 2), "skipped_reason", "no NVIDIA driver");
  assert_true(cJSON_IsNull(member(cJSON_GetArrayItem(devices, 2), "peak_gflops")));

  const cJSON *tasks = member(root, "tasks");
  assert_int_equal(cJSON_GetArraySize(tasks), 2);
  const cJSON *t1 = cJSON_GetArrayItem(tasks, 0);
  assert_number(t1, "index", 1);
  assert_text(t1, "node", "<conv&1>");
  assert_text(t1, "key", r.tasks[0].key);
  assert_number(t1, "count", 2);
  assert_number(t1, "flops", 2e6);
  const cJSON *on = member(t1, "devices");
  assert_int_equal(cJSON_GetArraySize(on), 3);
  const cJSON *cpu = cJSON_GetArrayItem(on, 0);
  assert_text(cpu, "target", "cpu");
  assert_text(cpu, "status", "ok");
  assert_text(cpu, "best_template", "winograd");
  assert_text(cpu, "config_source", "default");
  assert_number(cpu, "seconds", 0.001);
  assert_number(cpu, "gflops", 2);
  assert_number(cpu, "peak_fraction", 0.02);
  assert_text(cpu, "error", NULL);
  const cJSON *templates = member(cpu, "templates");
  assert_int_equal(cJSON_GetArraySize(templates), 2);
  assert_text(cJSON_GetArrayItem(templates, 0), "name", "direct");
  assert_text(cJSON_GetArrayItem(templates, 0), "config_source", "tuned");
  assert_number(cJSON_GetArrayItem(templates, 0), "seconds", 0.002);
  const cJSON *vec_failed = cJSON_GetArrayItem(member(cJSON_GetArrayItem(on, 1), "templates"), 1);
  assert_text(vec_failed, "error", "build failed: \"x\", line 3");
  assert_true(cJSON_IsNull(member(vec_failed, "seconds")));
  const cJSON *cuda = cJSON_GetArrayItem(on, 2);
  assert_text(cuda, "status", "skipped");
  assert_text(cuda, "best_template", NULL);
  assert_true(cJSON_IsNull(member(cuda, "seconds")));
  assert_text(cuda, "error", "no NVIDIA driver");
  const cJSON *vec2 = cJSON_GetArrayItem(member(cJSON_GetArrayItem(tasks, 1), "devices"), 1);
  assert_text(vec2, "status", "unsupported");
  assert_text(vec2, "error", "the target does not support this workload");

  const cJSON *packages = member(root, "packages");
  assert_int_equal(cJSON_GetArraySize(packages), 4);
  const cJSON *hetero = cJSON_GetArrayItem(packages, 3);
  assert_text(hetero, "name", "hetero");
  assert_text(hetero, "status", "ok");
  assert_number(hetero, "predicted_seconds", 0.002);
  assert_number(hetero, "p50_seconds", 0.0028);
  assert_number(hetero, "p90_seconds", 0.003);
  assert_number(hetero, "p99_seconds", 0.0031);
  assert_number(member(hetero, "nodes_on_device"), "cpu", 2);
  assert_number(member(hetero, "nodes_on_device"), "vec", 1);
  assert_int_equal(cJSON_GetArraySize(member(hetero, "nodes_on_device")), 2);
  assert_number(hetero, "copies", 2);
  const cJSON *skipped = cJSON_GetArrayItem(packages, 2);
  assert_text(skipped, "status", "skipped");
  assert_true(cJSON_IsNull(member(skipped, "p50_seconds")));
  assert_text(skipped, "error", "no NVIDIA driver");
  cJSON_Delete(root);
  free(text);
  hetc_compare_result_free(&r);
}

static int count(const char *text, const char *what) {
  int n = 0;
  for (const char *at = text; (at = strstr(at, what)); at += strlen(what)) ++n;
  return n;
}

/* Every tag in text[begin, end) is closed in order (XML's rule; the SVG has
 * no void elements, unlike HTML). */
static void assert_balanced(const char *begin, const char *end) {
  char stack[64][32];
  int depth = 0;
  for (const char *c = begin; c < end; ++c) {
    if (*c != '<') continue;
    const char *close = memchr(c, '>', (size_t)(end - c));
    assert_non_null(close);
    const int closing = c[1] == '/', self_closing = close[-1] == '/';
    const char *name = c + 1 + closing;
    size_t length = strcspn(name, " />");
    assert_true(length > 0 && length < 32);
    if (closing) {
      assert_true(depth > 0);
      --depth;
      if (strncmp(stack[depth], name, length) || stack[depth][length])
        fail_msg("</%.*s> closes <%s>", (int)length, name, stack[depth]);
    } else if (!self_closing) {
      assert_true(depth < 64);
      memcpy(stack[depth], name, length);
      stack[depth++][length] = 0;
    }
    /* Between tags, only escaped text: a raw '&' starts an entity. */
    for (const char *t = close + 1; t < end && *t != '<'; ++t)
      if (*t == '&') assert_true(!strncmp(t, "&amp;", 5) || !strncmp(t, "&lt;", 4) || !strncmp(t, "&gt;", 4) ||
                                 !strncmp(t, "&quot;", 6) || !strncmp(t, "&#39;", 5));
    c = close;
  }
  assert_int_equal(depth, 0);
}

static void html_has_bars_escapes_and_balanced_svg(void **state) {
  (void)state;
  hetc_compare_result_t r;
  build_result(&r);
  char *html = render(hetc_compare_write_html, &r);
  /* Bars: 3 timed (task, device) pairs + 3 benchmarked packages; the
   * skipped and unsupported ones have none. */
  assert_int_equal(count(html, "<rect class=\"bar\""), 6);
  assert_int_equal(count(html, "<rect "), 6 + 3 /* device swatches */ + 1 /* the p50 swatch */);
  assert_int_equal(count(html, "<line class=\"predicted\""), 3 + 1 /* legend */);
  assert_int_equal(count(html, "<svg "), 2);
  assert_null(strstr(html, "<script"));
  /* Only the SVG namespace names a URL: nothing is fetched. */
  assert_int_equal(count(html, "http"), 2);
  assert_null(strstr(html, "<conv&1>"));
  assert_non_null(strstr(html, "&lt;conv&amp;1&gt;"));
  assert_non_null(strstr(html, "net&lt;&amp;&gt;"));
  assert_non_null(strstr(html, "Test CPU &quot;8 cores&quot;"));
  assert_non_null(strstr(html, "build failed: &quot;x&quot;, line 3"));
  assert_non_null(strstr(html, "no NVIDIA driver"));
  for (const char *svg = html; (svg = strstr(svg, "<svg "));) {
    const char *end = strstr(svg, "</svg>");
    assert_non_null(end);
    end += strlen("</svg>");
    assert_balanced(svg, end);
    svg = end;
  }
  /* The same result gives the same bytes (no date, no addresses). */
  char *again = render(hetc_compare_write_html, &r);
  assert_string_equal(html, again);
  free(again);
  free(html);
  hetc_compare_result_free(&r);
}

static void text_names_skips_and_failures(void **state) {
  (void)state;
  hetc_compare_result_t r;
  build_result(&r);
  char *text = render(hetc_compare_write_text, &r);
  assert_non_null(strstr(text, "(2 of 3 targets available)"));
  assert_non_null(strstr(text, "cuda     skipped: no NVIDIA driver"));
  assert_non_null(strstr(text, "unsupported: the target does not support this workload"));
  assert_non_null(strstr(text, "(1 failed)"));
  assert_non_null(strstr(text, "cpu 2, vec 1; 2 copies"));
  free(text);
  hetc_compare_result_free(&r);
}

static void save_replaces_atomically(void **state) {
  (void)state;
  hetc_compare_result_t r;
  build_result(&r);
  char dir[] = "/tmp/hetc-compare-test-XXXXXX";
  assert_non_null(mkdtemp(dir));
  char path[128];
  snprintf(path, sizeof(path), "%s/report.csv", dir);
  assert_null(hetc_compare_save(&r, hetc_compare_write_csv, path));
  assert_null(hetc_compare_save(&r, hetc_compare_write_csv, path));
  /* A folder that does not exist: an error naming the file, nothing left. */
  char missing[160];
  snprintf(missing, sizeof(missing), "%s/no/report.csv", dir);
  hetc_status_t status = hetc_compare_save(&r, hetc_compare_write_csv, missing);
  assert_non_null(status);
  assert_non_null(strstr(hetc_status_message(status), missing));
  hetc_status_free(status);
  char command[256];
  snprintf(command, sizeof(command), "test \"$(ls %s)\" = report.csv", dir);
  assert_int_equal(system(command), 0);
  snprintf(command, sizeof(command), "rm -rf %s", dir);
  assert_int_equal(system(command), 0);
  hetc_compare_result_free(&r);
}

int main(int argc, char **argv) {
  if (argc == 3 && !strcmp(argv[1], "--write-html")) {
    hetc_compare_result_t r;
    build_result(&r);
    hetc_status_t status = hetc_compare_save(&r, hetc_compare_write_html, argv[2]);
    hetc_compare_result_free(&r);
    if (status) fprintf(stderr, "%s\n", hetc_status_message(status));
    hetc_status_free(status);
    return status ? 1 : 0;
  }
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(csv_is_exact),
      cmocka_unit_test(json_reads_back),
      cmocka_unit_test(html_has_bars_escapes_and_balanced_svg),
      cmocka_unit_test(text_names_skips_and_failures),
      cmocka_unit_test(save_replaces_atomically),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
