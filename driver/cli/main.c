/* The `hetc` command: dispatches to a subcommand. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"

static void usage(FILE *to) {
  fprintf(to,
          "usage: hetc COMMAND [ARGS]\n"
          "\n"
          "commands:\n"
          "  tasks MODEL.json|MODEL.onnx          print the model's tunable tasks\n"
          "  import MODEL.onnx -o MODEL.json      write an ONNX model as model.json and weights\n"
          "  plugins [--records PATH]             list backend plugins found, loaded, refused\n"
          "  plugin-check PLUGIN.so [--device N] [--quick] [--timeout S]\n"
          "                                       put a plugin through the conformance checks\n"
          "  compile MODEL.json --targets T[,T..] -o OUT.hetc\n"
          "                                       compile a model into a package\n"
          "  run PACKAGE [--input FILE | --random-input SEED] [--output FILE]\n"
          "      [--repeat N]                     execute a package\n"
          "  bench PACKAGE [--runs N] [--warmup N] [--input FILE | --random-input SEED]\n"
          "                                       latency percentiles of whole runs\n"
          "  compare MODEL.json --targets T1,T2[,...] [--csv F] [--json F] [--html F] ...\n"
          "                                       each task's best template and each package's\n"
          "                                       latency on several devices side by side\n"
          "  space MODEL.json --task N --target T [--overrides FILE]\n"
          "                                       print a task's space on a target\n"
          "  tune MODEL.json --targets T[,T...] [--records PATH] [--trials N] ...\n"
          "                                       tune every task and keep the records\n"
          "  verify PACKAGE [--trust KEY.public]  check a package's plan, files, checksums,\n"
          "                                       formats and parameters, running none of it\n"
          "  keys new NAME                        write a key pair for signed packages\n"
          "  records list|best|export|import|prune [ARGS]\n"
          "                                       the tuning records store\n"
          "  jobs submit|list|show|cancel|wait [ARGS] --queue URI\n"
          "                                       tuning jobs in a PostgreSQL queue\n"
          "  worker [--queue URI] [--targets T[,T...]] ...\n"
          "                                       claim the queue's tasks and tune them\n"
          "  version                              print the version\n"
          "\n"
          "Exit status: 0 success, 1 failure, 2 bad input or usage.\n");
}

/* Prints the status and frees it; its exit status, with INVALID_ARGUMENT
 * taken for bad input when `invalid_is_input`. */
static int report(hetc_status_t status, int invalid_is_input) {
  if (!status) return HETC_EXIT_OK;
  hetc_status_code_t code = hetc_status_code(status);
  fprintf(stderr, "hetc: %s\n", hetc_status_message(status));
  hetc_status_free(status);
  if (code == HETC_STATUS_INTERRUPTED) return 128 + (hetc_interrupt_signal() ? hetc_interrupt_signal() : 2);
  return (code == HETC_STATUS_BAD_INPUT || code == HETC_STATUS_NOT_FOUND || code == HETC_STATUS_IO_ERROR ||
          (invalid_is_input && code == HETC_STATUS_INVALID_ARGUMENT))
             ? HETC_EXIT_BAD_INPUT
             : HETC_EXIT_FAILURE;
}

int hetc_cli_report(hetc_status_t status) { return report(status, 0); }

int hetc_cli_report_input(hetc_status_t status) { return report(status, 1); }

int main(int argc, char **argv) {
  if (argc < 2) {
    usage(stderr);
    return HETC_EXIT_USAGE;
  }
  const char *command = argv[1];
  const int is_help = !strcmp(command, "-h") || !strcmp(command, "--help") || !strcmp(command, "help");
  const int is_version = !strcmp(command, "version") || !strcmp(command, "--version");
  if ((is_help || is_version) && argc > 2) {
    fprintf(stderr, "hetc %s: unexpected argument '%s'\n", command, argv[2]);
    usage(stderr);
    return HETC_EXIT_USAGE;
  }
  if (is_help) {
    usage(stdout);
    return HETC_EXIT_OK;
  }
  if (is_version) {
    printf("hetc %s (plugin ABI %d.%d)\n", HETC_VERSION_STRING, HETC_PLUGIN_ABI_MAJOR,
           HETC_PLUGIN_ABI_MINOR);
    return HETC_EXIT_OK;
  }
  /* A bad HETC_NUM_THREADS, HETC_LOG_LEVEL or HETC_PLUGIN_PATH is refused
   * by every command alike, before it does anything. */
  hetc_status_t environment = hetc_env_check();
  if (environment) return hetc_cli_report(environment);
  if (!strcmp(command, "tasks")) return hetc_cli_tasks(argc - 2, argv + 2);
  if (!strcmp(command, "import")) return hetc_cli_import(argc - 2, argv + 2);
  if (!strcmp(command, "plugins")) return hetc_cli_plugins(argc - 2, argv + 2);
  if (!strcmp(command, "plugin-check")) return hetc_cli_plugin_check(argc - 2, argv + 2);
  if (!strcmp(command, "compile")) return hetc_cli_compile(argc - 2, argv + 2);
  if (!strcmp(command, "run")) return hetc_cli_run(argc - 2, argv + 2);
  if (!strcmp(command, "bench")) return hetc_cli_bench(argc - 2, argv + 2);
  if (!strcmp(command, "compare")) return hetc_cli_compare(argc - 2, argv + 2);
  if (!strcmp(command, "records")) return hetc_cli_records(argc - 2, argv + 2);
  if (!strcmp(command, "jobs")) return hetc_cli_jobs(argc - 2, argv + 2);
  if (!strcmp(command, "worker")) return hetc_cli_worker(argc - 2, argv + 2);
  if (!strcmp(command, "space")) return hetc_cli_space(argc - 2, argv + 2);
  if (!strcmp(command, "tune")) return hetc_cli_tune(argc - 2, argv + 2);
  if (!strcmp(command, "verify")) return hetc_cli_verify(argc - 2, argv + 2);
  if (!strcmp(command, "keys")) return hetc_cli_keys(argc - 2, argv + 2);
  fprintf(stderr, "hetc: unknown command '%s'\n", command);
  usage(stderr);
  return HETC_EXIT_USAGE;
}
