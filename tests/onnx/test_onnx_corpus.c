/* The ONNX corpus (tests/onnx/corpus, made by make_corpus.py) through the
 * public API: each model imported, compiled for TARGET, run on its
 * committed input, and its outputs held against onnxruntime's within the
 * model's tolerance. Models listed in not_yet.txt must instead be refused
 * with "is not supported" or "not supported yet" (so that the list shrinks
 * as ops land, and never hides a model that imports).
 *
 * Models of kind "ext" (tests/onnx/extremes, made by make_extremes.py:
 * attributes at their extremes) are judged element by element, near zero
 * on their output's lower quartile rather than its largest value.
 *
 *   test_onnx_corpus CORPUS_DIR NOT_YET_FILE WORK_DIR TARGET[,TARGET] op|net|ext|all|CASE
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check_model.h"
#include "hetc/hetc.h"

static int listed(const char *list, const char *name) {
  char line[300];
  snprintf(line, sizeof(line), "\n%s\n", name);
  return strstr(list, line) != NULL;
}

int main(int argc, char **argv) {
  if (argc != 6) {
    fprintf(stderr, "usage: test_onnx_corpus CORPUS_DIR NOT_YET_FILE WORK_DIR TARGET[,TARGET] op|net|ext|all|CASE\n");
    return 2;
  }
  const char *dir = argv[1], *work = argv[3], *targets = argv[4], *kind = argv[5];
  char tsv_path[1024];
  snprintf(tsv_path, sizeof(tsv_path), "%s/corpus.tsv", dir);
  FILE *tsv = fopen(tsv_path, "r"), *not_yet_file = fopen(argv[2], "r");
  if (!tsv || !not_yet_file) {
    fprintf(stderr, "cannot open %s or %s\n", tsv_path, argv[2]);
    return 1;
  }
  static char not_yet[1 << 16] = "\n";
  const size_t got = fread(not_yet + 1, 1, sizeof(not_yet) - 2, not_yet_file);
  not_yet[got + 1] = 0;
  fclose(not_yet_file);
  hetc_context_t *context = NULL;
  hetc_status_t status = hetc_context_create(&context);
  if (status) {
    fprintf(stderr, "%s\n", hetc_status_message(status));
    return 1;
  }
  char line[4096];
  int failures = 0, checked = 0;
  while (fgets(line, sizeof(line), tsv)) {
    if (line[0] == '#' || line[0] == '\n') continue;
    char name[256], model_kind[16], shape[64];
    double rtol = 0;
    if (sscanf(line, "%255s %15s %63s %lf", name, model_kind, shape, &rtol) != 4) {
      fprintf(stderr, "corpus.tsv: bad line: %s", line);
      return 1;
    }
    if (strcmp(kind, "all") != 0 && strcmp(kind, model_kind) != 0 && strcmp(kind, name) != 0) continue;
    const expectation_t expectation = {.expect = listed(not_yet, name) ? EXPECT_REFUSED : EXPECT_MATCH,
                                       .rtol = rtol,
                                       .judge = !strcmp(model_kind, "ext") ? JUDGE_QUARTILE : JUDGE_ELEMENTS};
    failures += check_model(context, dir, work, targets, name, shape, &expectation);
    ++checked;
  }
  fclose(tsv);
  hetc_context_destroy(context);
  printf("%d models on %s: %d failed\n", checked, targets, failures);
  return failures ? 1 : checked ? 0 : 1;
}
