/* `hetc run PACKAGE [--input FILE | --random-input SEED] [--output FILE]
 * [--repeat N]`. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"

static void print_summary(const hetc_package_t *package, int32_t index, const float *data, int64_t count) {
  int64_t shape[HETC_PLUGIN_MAX_RANK];
  int32_t rank = hetc_package_output_shape(package, index, shape);
  printf("output %s [", hetc_package_output_name(package, index));
  for (int32_t d = 0; d < rank; ++d) printf(d ? ",%lld" : "%lld", (long long)shape[d]);
  double sum = 0, lo = INFINITY, hi = -INFINITY;
  int64_t nonfinite = 0;
  for (int64_t i = 0; i < count; ++i) {
    sum += data[i];
    lo = data[i] < lo ? data[i] : lo;
    hi = data[i] > hi ? data[i] : hi;
    nonfinite += !isfinite(data[i]);
  }
  printf("]: min %.6g max %.6g mean %.6g\n", lo, hi, sum / (double)count);
  if (nonfinite)
    fprintf(stderr, "hetc: warning: output %s: %lld of %lld values are NaN or infinite\n",
            hetc_package_output_name(package, index), (long long)nonfinite, (long long)count);
  /* A classifier's output is [N, classes]: show each item's top 5. */
  if (rank != 2 || shape[1] < 2) return;
  int64_t classes = shape[1];
  for (int64_t n = 0; n < shape[0]; ++n) {
    const float *row = data + n * classes;
    printf("  item %lld top-5:", (long long)n);
    int64_t taken[5];
    for (int k = 0; k < 5 && k < classes; ++k) {
      int64_t best = -1;
      for (int64_t c = 0; c < classes; ++c) {
        int used = 0;
        for (int j = 0; j < k; ++j) used |= taken[j] == c;
        if (!used && (best < 0 || row[c] > row[best])) best = c;
      }
      taken[k] = best;
      printf(" %lld (%.5f)", (long long)best, row[best]);
    }
    printf("\n");
  }
}

/* A --input for several inputs, NAME=FILE,NAME=FILE: every entry has both
 * parts, names one of the package's inputs, and each input is given once
 * (a misspelt name was ignored, and the input it meant reported missing). */
static hetc_status_t check_input_list(const hetc_package_t *rt, const char *list) {
  const int32_t num_inputs = hetc_package_input_count(rt);
  char known[1024] = "";
  for (int32_t i = 0, used = 0; i < num_inputs && used < (int)sizeof(known); ++i) {
    int written = snprintf(known + used, sizeof(known) - (size_t)used, "%s%s", i ? ", " : "",
                           hetc_package_input_name(rt, i));
    if (written < 0) break;
    used += written;
  }
  int *given = calloc((size_t)num_inputs + 1, sizeof(int));
  if (!given) return hetc_status_new(HETC_STATUS_OUT_OF_MEMORY, "--input");
  hetc_status_t status = NULL;
  for (const char *entry = list; !status;) {
    const int length = (int)strcspn(entry, ",");
    const char *equals = memchr(entry, '=', (size_t)length);
    const int name_length = equals ? (int)(equals - entry) : 0;
    int32_t index = -1;
    for (int32_t i = 0; i < num_inputs && index < 0; ++i) {
      const char *name = hetc_package_input_name(rt, i);
      if ((int)strlen(name) == name_length && !strncmp(name, entry, (size_t)name_length)) index = i;
    }
    if (!equals || name_length == 0 || name_length == length - 1) {
      status = hetc_status_new(HETC_STATUS_BAD_INPUT, "--input: '%.*s' is not NAME=FILE (the package's inputs: %s)",
                               length, entry, known);
    } else if (index < 0) {
      status = hetc_status_new(HETC_STATUS_BAD_INPUT, "--input: the package has no input '%.*s' (its inputs: %s)",
                               name_length, entry, known);
    } else if (given[index]++) {
      status = hetc_status_new(HETC_STATUS_BAD_INPUT, "--input: input '%.*s' is given twice", name_length, entry);
    }
    if (!entry[length]) break;
    entry += length + 1;
  }
  free(given);
  return status;
}

hetc_status_t hetc_cli_set_inputs(hetc_package_t *rt, const char *input, long long seed) {
  const int32_t num_inputs = hetc_package_input_count(rt);
  hetc_status_t status = input && num_inputs > 1 ? check_input_list(rt, input) : NULL;
  for (int32_t i = 0; !status && i < num_inputs; ++i) {
    const char *input_name = hetc_package_input_name(rt, i);
    if (input) {
      const char *path = input;
      char *pick = NULL;
      if (num_inputs > 1) {
        /* NAME=FILE,NAME=FILE */
        size_t name_len = strlen(input_name);
        for (const char *p = input; p && *p; p = strchr(p, ',') ? strchr(p, ',') + 1 : NULL) {
          if (!strncmp(p, input_name, name_len) && p[name_len] == '=') {
            const char *stop = strchr(p, ',');
            pick = strndup(p + name_len + 1, stop ? (size_t)(stop - p - name_len - 1) : strlen(p));
            break;
          }
        }
        if (!pick) status = hetc_status_new(HETC_STATUS_BAD_INPUT, "--input names no file for input '%s'",
                                            input_name);
        path = pick;
      }
      if (!status) status = hetc_package_set_input_file(rt, i, path);
      free(pick);
      continue;
    }
    int64_t count = hetc_package_input_elements(rt, i);
    float *data = malloc(sizeof(float) * (size_t)count);
    if (!data) return hetc_status_new(HETC_STATUS_OUT_OF_MEMORY, "input");
    hetc_fill_random_input(data, count, (uint64_t)seed, i);
    status = hetc_package_set_input(rt, i, data, count);
    free(data);
  }
  return status;
}

static const char usage[] =
    "usage: hetc run PACKAGE [--input FILE | --random-input SEED] [--output FILE] [--repeat N]\n"
    "                [--trust KEY.public]\n"
    "  --input FILE         raw little-endian float32, row-major (NCHW), exactly the input's size;\n"
    "                       for a model with several inputs, NAME=FILE for each, comma-separated\n"
    "  --random-input SEED  deterministic values in [-1, 1), SEED 0 to 9223372036854775807 (default 0)\n"
    "  --output FILE        every output, concatenated, as raw float32\n"
    "  --repeat N           timed runs after one warm-up, 1 to 100000 (default 10)\n"
    "  --trust KEY.public   open the package only if it is signed with this key's secret key\n"
    "                       (`hetc compile --sign`) and unchanged since\n";

int hetc_cli_run(int argc, char **argv) {
  const char *package = NULL, *input = NULL, *output = NULL, *trust = NULL;
  long long seed = -1, repeat = 10;
  hetc_cli_args_t args;
  hetc_cli_args_init(&args, "run", usage, argc, argv);
  while (hetc_cli_args_next(&args))
    (void)(hetc_cli_text(&args, "--input", "a file, or NAME=FILE,... for several inputs", &input) ||
           hetc_cli_count(&args, "--random-input", 0, INT64_MAX, &seed) ||
           hetc_cli_text(&args, "--output", "a path", &output) ||
           hetc_cli_count(&args, "--repeat", 1, 100000, &repeat) ||
           hetc_cli_text(&args, "--trust", "a public key file", &trust) ||
           hetc_cli_positional(&args, "PACKAGE", &package));
  if (!package) hetc_cli_error(&args, "no PACKAGE given");
  if (input && seed >= 0) hetc_cli_error(&args, "--input and --random-input exclude each other");
  if (args.failed) return HETC_EXIT_USAGE;
  if (!input && seed < 0) seed = 0;
  hetc_context_t *context = NULL;
  hetc_package_t *rt = NULL;
  hetc_status_t status = hetc_context_create(&context);
  const hetc_package_open_options_t open_options = {sizeof(open_options), trust};
  if (!status) status = hetc_package_open_with_options(context, package, &open_options, &rt);
  if (!status) status = hetc_cli_set_inputs(rt, input, seed);
  const int32_t num_outputs = rt ? hetc_package_output_count(rt) : 0;
  /* One warm-up run, then `repeat` timed runs; the median is reported. */
  hetc_bench_result_t timing;
  const hetc_bench_options_t bench = {1, (int32_t)repeat};
  if (!status) status = hetc_package_bench(rt, &bench, &timing);
  hetc_output_file_t *out_file = NULL;
  if (!status && output) status = hetc_output_file_open(output, &out_file);
  for (int32_t o = 0; !status && o < num_outputs; ++o) {
    int64_t count = hetc_package_output_elements(rt, o);
    float *data = malloc(sizeof(float) * (size_t)count);
    if (!data) status = hetc_status_new(HETC_STATUS_OUT_OF_MEMORY, "output");
    if (!status) status = hetc_package_get_output(rt, o, data, count);
    if (!status) print_summary(rt, o, data, count);
    if (!status && out_file) status = hetc_output_file_write(out_file, data, sizeof(float) * (size_t)count);
    free(data);
  }
  if (out_file && status) hetc_output_file_abandon(out_file);
  else if (out_file) status = hetc_output_file_commit(out_file);
  if (!status)
    printf("latency: median %.3f ms, min %.3f ms, max %.3f ms over %d runs\n", timing.p50 * 1e3, timing.min * 1e3,
           timing.max * 1e3, (int)repeat);
  hetc_package_close(rt);
  hetc_context_destroy(context);
  return hetc_cli_report(status);
}
