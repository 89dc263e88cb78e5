/* The CI-sized torchvision corpus (tests/onnx/torchvision/small, made by
 * make_torchvision.py --small; issue 33) through the public API: every
 * model its manifest small.tsv lists for TARGET is imported, compiled for
 * TARGET, run on its committed input, and held to onnxruntime's output:
 * the largest |hetc - onnxruntime| over the largest |onnxruntime| within
 * the model's RTOL (check_model.h). A model the manifest expects to be
 * refused ("refused: MESSAGE") must fail to import with exactly that
 * message, and a known failure ("fails: NOTE") must still fail, so that
 * the manifest says what hetc does today.
 *
 *   test_torchvision_small MANIFEST WORK_DIR TARGET [NAME...]
 *
 * The models are the files beside MANIFEST; with NAMEs, only those (which
 * must be in the manifest, for TARGET).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check_model.h"
#include "hetc/hetc.h"

enum { NAME, INPUT, TARGETS, RTOL, TORCH, STANDS_FOR, EXPECT, COLUMNS };

/* Splits `line` at tabs, in place, into `fields` (COLUMNS + 1 of them at
 * most); how many fields there are. */
static int split(char *line, char **fields) {
  line[strcspn(line, "\r\n")] = 0;
  int count = 0;
  for (char *field = line;; ++count) {
    if (count <= COLUMNS) fields[count] = field;
    char *tab = strchr(field, '\t');
    if (!tab) return count + 1;
    *tab = 0;
    field = tab + 1;
  }
}

/* Whether the comma-separated `list` has `item`. */
static int has(const char *list, const char *item) {
  const size_t length = strlen(item);
  for (const char *p = list;; ++p) {
    const size_t span = strcspn(p, ",");
    if (span == length && !strncmp(p, item, length)) return 1;
    p += span;
    if (!*p) return 0;
  }
}

int main(int argc, char **argv) {
  if (argc < 4) {
    fprintf(stderr, "usage: test_torchvision_small MANIFEST WORK_DIR TARGET [NAME...]\n");
    return 2;
  }
  const char *manifest = argv[1], *work = argv[2], *target = argv[3];
  /* The manifest's folder. */
  const char *slash = strrchr(manifest, '/');
  const size_t dir_length = slash ? (size_t)(slash - manifest) : 1;
  char *dir = malloc(dir_length + 1);
  if (!dir) return 1;
  memcpy(dir, slash ? manifest : ".", dir_length);
  dir[dir_length] = 0;
  FILE *tsv = fopen(manifest, "r");
  if (!tsv) {
    fprintf(stderr, "cannot open %s\n", manifest);
    return 1;
  }
  hetc_context_t *context = NULL;
  hetc_status_t status = hetc_context_create(&context);
  if (status) {
    fprintf(stderr, "%s\n", hetc_status_message(status));
    return 1;
  }
  char line[4096];
  int failures = 0, checked = 0, number = 0, named_found = 0;
  while (fgets(line, sizeof(line), tsv)) {
    ++number;
    if (line[0] == '#' || line[0] == '\n') continue;
    char *fields[COLUMNS + 1];
    if (split(line, fields) != COLUMNS) {
      fprintf(stderr, "%s:%d: expected %d tab-separated fields\n", manifest, number, COLUMNS);
      return 1;
    }
    expectation_t expectation = {.judge = JUDGE_LARGEST};
    char *end = NULL;
    expectation.rtol = strtod(fields[RTOL], &end);
    const char *expect = fields[EXPECT];
    if (!strcmp(expect, "match") || !strncmp(expect, "match: ", 7)) expectation.expect = EXPECT_MATCH;
    else if (!strncmp(expect, "refused: ", 9)) {
      expectation.expect = EXPECT_REFUSED;
      expectation.message = expect + 9;
    } else if (!strncmp(expect, "fails: ", 7)) expectation.expect = EXPECT_FAILS;
    else end = NULL;
    if (!end || *end || !(expectation.rtol > 0)) {
      fprintf(stderr, "%s:%d: bad RTOL '%s' or EXPECT '%s'\n", manifest, number, fields[RTOL], expect);
      return 1;
    }
    if (!has(fields[TARGETS], target)) continue;
    if (argc > 4) {
      int named = 0;
      for (int k = 4; k < argc; ++k) named |= !strcmp(argv[k], fields[NAME]);
      if (!named) continue;
      ++named_found;
    }
    failures += check_model(context, dir, work, target, fields[NAME], fields[INPUT], &expectation);
    ++checked;
  }
  fclose(tsv);
  free(dir);
  hetc_context_destroy(context);
  if (argc > 4 && named_found != argc - 4) {
    fprintf(stderr, "%d of the %d models named are not in %s for %s\n", argc - 4 - named_found, argc - 4, manifest,
            target);
    return 1;
  }
  printf("%d models on %s: %d failed\n", checked, target, failures);
  return failures ? 1 : checked ? 0 : 1;
}
