/* The malformed-model corpus: every case of tests/model/bad_cases.txt must be
 * rejected by the loader with exactly the status code and message listed
 * there, through both hetc_model_load_file and hetc_model_load_buffer. The
 * table and the files in tests/model/bad/ must list the same cases. */
#define _POSIX_C_SOURCE 200809L /* strdup, strtok_r, chdir */

#include <dirent.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "common/fileio.h"
#include "common/json_input.h"
#include "model/model.h"

#define MIN_CASES 45

typedef struct bad_case_t {
  char *file;
  hetc_status_code_t code;
  char *message;
} bad_case_t;

static bad_case_t *cases;
static int num_cases;

static const char *code_name(hetc_status_code_t code) {
  switch (code) {
    case HETC_STATUS_OK: return "OK";
    case HETC_STATUS_BAD_INPUT: return "BAD_INPUT";
    case HETC_STATUS_IO_ERROR: return "IO_ERROR";
    case HETC_STATUS_NOT_FOUND: return "NOT_FOUND";
    case HETC_STATUS_OUT_OF_MEMORY: return "OUT_OF_MEMORY";
    default: return "other";
  }
}

/* Reads bad_cases.txt and changes into tests/model/bad, so that the loader
 * sees the bare file names the table's messages start with. */
static int setup(void **state) {
  (void)state;
  const char *source = getenv("HETC_SOURCE_DIR");
  if (!source) {
    fprintf(stderr, "HETC_SOURCE_DIR is not set (run through ctest)\n");
    return -1;
  }
  char path[4096];
  snprintf(path, sizeof(path), "%s/tests/model/bad", source);
  if (chdir(path) != 0) {
    fprintf(stderr, "cannot enter %s\n", path);
    return -1;
  }
  char *text = NULL;
  size_t length = 0;
  hetc_status_t status = hetc_file_read_all("../bad_cases.txt", 1u << 20, &text, &length);
  if (status) {
    fprintf(stderr, "%s\n", hetc_status_message(status));
    hetc_status_free(status);
    return -1;
  }
  int capacity = 0;
  for (char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n")) {
    if (line[0] == '#' || line[0] == 0) continue;
    char *tab1 = strchr(line, '\t');
    char *tab2 = tab1 ? strchr(tab1 + 1, '\t') : NULL;
    if (!tab2) {
      fprintf(stderr, "bad_cases.txt: malformed line: %s\n", line);
      free(text);
      return -1;
    }
    *tab1 = *tab2 = 0;
    hetc_status_code_t code;
    if (strcmp(tab1 + 1, "BAD_INPUT") == 0) {
      code = HETC_STATUS_BAD_INPUT;
    } else if (strcmp(tab1 + 1, "IO_ERROR") == 0) {
      code = HETC_STATUS_IO_ERROR;
    } else {
      fprintf(stderr, "bad_cases.txt: %s: unknown status %s\n", line, tab1 + 1);
      free(text);
      return -1;
    }
    if (num_cases == capacity) {
      capacity = capacity ? capacity * 2 : 64;
      cases = realloc(cases, sizeof(*cases) * (size_t)capacity);
      if (!cases) abort();
    }
    cases[num_cases].file = strdup(line);
    cases[num_cases].code = code;
    cases[num_cases].message = strdup(tab2 + 1);
    ++num_cases;
  }
  free(text);
  return 0;
}

static int teardown(void **state) {
  (void)state;
  for (int i = 0; i < num_cases; ++i) {
    free(cases[i].file);
    free(cases[i].message);
  }
  free(cases);
  return 0;
}

/* Compares one load result with its case; prints a line and returns 1 on a
 * mismatch. Frees the status and any graph. */
static int check_result(const bad_case_t *c, const char *how, hetc_status_t status,
                        hetc_graph_t *graph) {
  int failed = 0;
  if (!status) {
    fprintf(stderr, "%s (%s): loaded, expected %s: %s\n", c->file, how, code_name(c->code),
            c->message);
    failed = 1;
  } else if (hetc_status_code(status) != c->code ||
             strcmp(hetc_status_message(status), c->message) != 0) {
    fprintf(stderr, "%s (%s):\n  expected %s: %s\n  got      %s: %s\n", c->file, how,
            code_name(c->code), c->message, code_name(hetc_status_code(status)),
            hetc_status_message(status));
    failed = 1;
  }
  if (status && graph) {
    fprintf(stderr, "%s (%s): failed but set the graph\n", c->file, how);
    failed = 1;
  }
  hetc_status_free(status);
  hetc_graph_free(graph);
  return failed;
}

static void test_corpus_size(void **state) {
  (void)state;
  printf("%d malformed-model cases\n", num_cases);
  assert_true(num_cases >= MIN_CASES);
}

/* Every .json file in bad/ has a table row and every row a file, once. */
static void test_table_matches_files(void **state) {
  (void)state;
  int problems = 0;
  for (int i = 0; i < num_cases; ++i) {
    if (access(cases[i].file, R_OK) != 0) {
      fprintf(stderr, "bad_cases.txt lists %s, which is not in tests/model/bad\n", cases[i].file);
      ++problems;
    }
    for (int j = 0; j < i; ++j) {
      if (strcmp(cases[i].file, cases[j].file) == 0) {
        fprintf(stderr, "bad_cases.txt lists %s twice\n", cases[i].file);
        ++problems;
      }
    }
  }
  DIR *dir = opendir(".");
  assert_non_null(dir);
  for (struct dirent *entry; (entry = readdir(dir));) {
    size_t length = strlen(entry->d_name);
    if (length < 5 || strcmp(entry->d_name + length - 5, ".json") != 0) continue;
    int listed = 0;
    for (int i = 0; i < num_cases && !listed; ++i) listed = strcmp(cases[i].file, entry->d_name) == 0;
    if (!listed) {
      fprintf(stderr, "tests/model/bad/%s has no row in bad_cases.txt\n", entry->d_name);
      ++problems;
    }
  }
  closedir(dir);
  assert_int_equal(problems, 0);
}

static void test_load_file(void **state) {
  (void)state;
  int failures = 0;
  for (int i = 0; i < num_cases; ++i) {
    hetc_graph_t *graph = NULL;
    hetc_status_t status = hetc_model_load_file(cases[i].file, &graph);
    failures += check_result(&cases[i], "hetc_model_load_file", status, graph);
  }
  assert_int_equal(failures, 0);
}

/* The buffer entry point (the fuzz target's) gives the same messages when
 * given the same display name and the directory the file is in. */
static void test_load_buffer(void **state) {
  (void)state;
  int failures = 0;
  for (int i = 0; i < num_cases; ++i) {
    char *text = NULL;
    size_t length = 0;
    hetc_status_t status = hetc_file_read_all(cases[i].file, HETC_MODEL_MAX_FILE_BYTES, &text,
                                              &length);
    assert_null(status);
    hetc_graph_t *graph = NULL;
    status = hetc_model_load_buffer(text, length, cases[i].file, ".", &graph);
    failures += check_result(&cases[i], "hetc_model_load_buffer", status, graph);
    free(text);
  }
  assert_int_equal(failures, 0);
}

/* Cut-off copies of every case fail cleanly (no crash, no leak under the
 * sanitizers) with a message naming the file; this walks many of the
 * loader's paths at once. */
static void test_prefixes_fail_cleanly(void **state) {
  (void)state;
  for (int i = 0; i < num_cases; ++i) {
    char *text = NULL;
    size_t length = 0;
    hetc_status_t status = hetc_file_read_all(cases[i].file, HETC_MODEL_MAX_FILE_BYTES, &text,
                                              &length);
    assert_null(status);
    char stem[256];
    snprintf(stem, sizeof(stem), "%.*s", (int)(strlen(cases[i].file) - 5), cases[i].file);
    for (size_t cut = 0; cut < length; cut += 7) {
      hetc_graph_t *graph = NULL;
      status = hetc_model_load_buffer(text, cut, cases[i].file, ".", &graph);
      if (!status) { /* a prefix can be complete: drop the trailing newline */
        hetc_graph_free(graph);
        continue;
      }
      assert_null(graph);
      hetc_status_code_t code = hetc_status_code(status);
      assert_true(code == HETC_STATUS_BAD_INPUT || code == HETC_STATUS_IO_ERROR);
      /* "NAME.json: ..." or, for its weights file, "./NAME.weights: ..." */
      assert_non_null(strstr(hetc_status_message(status), stem));
      hetc_status_free(status);
    }
    free(text);
  }
}

/* The UTF-8 rules the loader holds strings to (RFC 3629), at the edges of
 * each sequence length. */
static void test_utf8_rules(void **state) {
  (void)state;
  static const struct {
    const char *bytes;
    int valid;
    size_t bad_offset;
  } utf8_cases[] = {
      {"plain ascii", 1, 0},
      {"caf\xc3\xa9", 1, 0},
      {"\xc2\x80", 1, 0},                  /* U+0080, the first two-byte one */
      {"\xed\x9f\xbf", 1, 0},              /* U+D7FF, just below the surrogates */
      {"\xee\x80\x80", 1, 0},              /* U+E000, just above them */
      {"\xf0\x9f\x98\x80", 1, 0},          /* U+1F600 */
      {"\xf4\x8f\xbf\xbf", 1, 0},          /* U+10FFFF, the last code point */
      {"ab\xff", 0, 2},                     /* never a UTF-8 byte */
      {"a\x80", 0, 1},                      /* a continuation byte alone */
      {"\xc1\xbf", 0, 0},                  /* overlong U+007F */
      {"x\xe0\x80\x80", 0, 1},             /* overlong U+0000 */
      {"\xf0\x8f\xbf\xbf", 0, 0},          /* overlong U+FFFF */
      {"\xed\xa0\x80", 0, 0},              /* U+D800, a surrogate */
      {"\xf4\x90\x80\x80", 0, 0},          /* U+110000 */
      {"\xf8\x88\x80\x80\x80", 0, 0},      /* five bytes */
      {"ok\xe2\x82", 0, 2},                 /* cut short at the end */
      {"\xe2\x82x", 0, 0},                  /* cut short by an ASCII byte */
  };
  for (size_t i = 0; i < sizeof(utf8_cases) / sizeof(utf8_cases[0]); ++i) {
    size_t bad = 99;
    const int valid = hetc_utf8_valid(utf8_cases[i].bytes, strlen(utf8_cases[i].bytes), &bad);
    if (valid != utf8_cases[i].valid || (!valid && bad != utf8_cases[i].bad_offset))
      fail_msg("case %zu: valid %d (bad at %zu), expected %d (bad at %zu)", i, valid, bad, utf8_cases[i].valid,
               utf8_cases[i].bad_offset);
  }
}

/* Names in any language load, and come out as they went in. */
static void test_utf8_name_accepted(void **state) {
  (void)state;
  char *text = NULL;
  size_t length = 0;
  assert_null(hetc_file_read_all("top_unknown_key.json", HETC_MODEL_MAX_FILE_BYTES, &text, &length));
  /* The case with its comment member taken out is a good model. */
  const char *member = ",\n \"comment\": \"hello\"";
  char *comment = strstr(text, member);
  assert_non_null(comment);
  memmove(comment, comment + strlen(member), strlen(comment + strlen(member)) + 1);
  char *name = strstr(text, "\"name\": \"bad\"");
  assert_non_null(name);
  const char *utf8_name = "\"name\": \"caf\xc3\xa9 \xe2\x9c\x93 \xf0\x9f\x98\x80\"";
  char model[4096];
  snprintf(model, sizeof(model), "%.*s%s%s", (int)(name - text), text, utf8_name, name + strlen("\"name\": \"bad\""));
  hetc_graph_t *graph = NULL;
  hetc_status_t status = hetc_model_load_buffer(model, strlen(model), "utf8.json", ".", &graph);
  if (status) fail_msg("%s", hetc_status_message(status));
  assert_string_equal(graph->name, "caf\xc3\xa9 \xe2\x9c\x93 \xf0\x9f\x98\x80");
  hetc_graph_free(graph);
  free(text);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_utf8_rules),
      cmocka_unit_test(test_utf8_name_accepted),
      cmocka_unit_test(test_corpus_size),
      cmocka_unit_test(test_table_matches_files),
      cmocka_unit_test(test_load_file),
      cmocka_unit_test(test_load_buffer),
      cmocka_unit_test(test_prefixes_fail_cleanly),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
