/* compare_floats A B RTOL: whether two raw float32 files agree within RTOL
 * relative to max(|b|, 1% of b's largest magnitude); prints the worst
 * error. Exit 0 when they do, 1 when not (or they differ in length). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

static float *read_floats(const char *path, long *out_count) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  fseek(f, 0, SEEK_END);
  const long bytes = ftell(f);
  fseek(f, 0, SEEK_SET);
  float *data = malloc((size_t)bytes + 4);
  if (data && fread(data, 1, (size_t)bytes, f) != (size_t)bytes) {
    free(data);
    data = NULL;
  }
  fclose(f);
  *out_count = bytes / 4;
  return data;
}

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
  double scale = 0, worst = 0;
  for (long k = 0; k < count_b; ++k) scale = fmax(scale, fabs(b[k]));
  for (long k = 0; k < count_b; ++k) {
    const double error = fabs((double)a[k] - b[k]) / fmax(fabs(b[k]), 1e-2 * scale + 1e-30);
    worst = isnan(error) ? INFINITY : fmax(worst, error);
  }
  printf("worst relative error %.2e\n", worst);
  free(a);
  free(b);
  return worst <= rtol ? 0 : 1;
}
