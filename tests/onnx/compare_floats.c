/* compare_floats A B RTOL: whether two raw float32 files agree within RTOL
 * relative to max(|b|, 1% of b's largest magnitude); prints the worst
 * error. Exit 0 when they do, 1 when not (or they differ in length). */
#include <stdio.h>
#include <stdlib.h>

#include "float_files.h"

int main(int argc, char **argv) {
  if (argc != 4) {
    fprintf(stderr, "usage: compare_floats A B RTOL\n");
    return 2;
  }
  long count_a = 0, count_b = 0;
  float *a = read_floats(argv[1], &count_a), *b = read_floats(argv[2], &count_b);
  const double rtol = atof(argv[3]);
  if (!a || !b || count_a != count_b) {
    printf("%s and %s: unreadable or of different lengths\n", argv[1], argv[2]);
    return 1;
  }
  const double worst = worst_error(a, b, count_b);
  printf("worst relative error %.2e\n", worst);
  free(a);
  free(b);
  return worst <= rtol ? 0 : 1;
}
