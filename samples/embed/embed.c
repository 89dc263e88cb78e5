/* samples/embed: hetc inside an application. Loads a model, compiles it for
 * the targets given into a package, opens the package, runs it on
 * deterministic random inputs, prints each output's largest values and the
 * latency percentiles of 50 runs. Everything goes through <hetc/hetc.h>.
 *
 *   embed MODEL.json TARGET[,TARGET...] PACKAGE_DIR
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <hetc/hetc.h>

#define MAX_TARGETS 8

/* Prints the message of a failed call and frees it; returns 1. */
static int failed(const char *what, hetc_status_t status) {
  fprintf(stderr, "embed: %s: %s (%s)\n", what, hetc_status_message(status),
          hetc_status_code_name(hetc_status_code(status)));
  hetc_status_free(status);
  return 1;
}

/* The index and value of the largest of `count` values. */
static int64_t arg_max(const float *values, int64_t count) {
  int64_t best = 0;
  for (int64_t i = 1; i < count; ++i)
    if (values[i] > values[best]) best = i;
  return best;
}

static int run(const char *model_path, char *targets_arg, const char *package_path) {
  const char *targets[MAX_TARGETS];
  int32_t num_targets = 0;
  for (char *t = strtok(targets_arg, ","); t && num_targets < MAX_TARGETS; t = strtok(NULL, ",")) targets[num_targets++] = t;

  hetc_model_t *model = NULL;
  hetc_context_t *context = NULL;
  hetc_package_t *package = NULL;
  hetc_status_t status = hetc_model_load(model_path, &model);
  if (status) return failed("loading the model", status);
  int result = 1;
  if ((status = hetc_context_create(&context))) {
    failed("loading the plugins", status);
    goto done;
  }
  hetc_compile_options_t options = {.targets = targets, .num_targets = num_targets, .placement = HETC_PLACEMENT_COST};
  hetc_compile_report_t report;
  if ((status = hetc_compile(context, model, &options, package_path, &report))) {
    failed("compiling", status);
    goto done;
  }
  printf("compiled %s: %d kernels, %d copies between devices", hetc_model_name(model), report.kernels,
         report.copies);
  if (report.predicted_seconds > 0) printf(", expected latency %.3f ms", report.predicted_seconds * 1e3);
  printf("\n");
  if ((status = hetc_package_open(context, package_path, &package))) {
    failed("opening the package", status);
    goto done;
  }
  /* Inputs: the values `hetc run --random-input 1` feeds. */
  for (int32_t i = 0; i < hetc_package_input_count(package); ++i) {
    int64_t count = hetc_package_input_elements(package, i);
    float *data = malloc(sizeof(float) * (size_t)count);
    if (!data) goto done;
    hetc_fill_random_input(data, count, 1, i);
    status = hetc_package_set_input(package, i, data, count);
    free(data);
    if (status) {
      failed("setting an input", status);
      goto done;
    }
  }
  if ((status = hetc_package_run(package))) {
    failed("running", status);
    goto done;
  }
  for (int32_t o = 0; o < hetc_package_output_count(package); ++o) {
    int64_t count = hetc_package_output_elements(package, o);
    float *data = malloc(sizeof(float) * (size_t)count);
    if (!data) goto done;
    status = hetc_package_get_output(package, o, data, count);
    if (!status) {
      int64_t best = arg_max(data, count);
      printf("output %s: %lld values, the largest %.6f at %lld\n", hetc_package_output_name(package, o),
             (long long)count, data[best], (long long)best);
    }
    free(data);
    if (status) {
      failed("reading an output", status);
      goto done;
    }
  }
  hetc_bench_options_t bench = {5, 50};
  hetc_bench_result_t timing;
  if ((status = hetc_package_bench(package, &bench, &timing))) {
    failed("timing", status);
    goto done;
  }
  printf("latency over %d runs: p50 %.3f ms, p90 %.3f ms, p99 %.3f ms\n", timing.runs, timing.p50 * 1e3,
         timing.p90 * 1e3, timing.p99 * 1e3);
  result = 0;
done:
  hetc_package_close(package);
  hetc_context_destroy(context);
  hetc_model_free(model);
  return result;
}

int main(int argc, char **argv) {
  if (argc != 4) {
    fprintf(stderr, "usage: embed MODEL.json TARGET[,TARGET...] PACKAGE_DIR\n");
    return 2;
  }
  return run(argv[1], argv[2], argv[3]);
}
