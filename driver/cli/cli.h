/* driver/cli/cli.h -- the `hetc` command's subcommands. Each takes the
 * arguments after its name and returns the process exit status. */
#ifndef HETC_DRIVER_CLI_CLI_H_
#define HETC_DRIVER_CLI_CLI_H_

#include "common/status.h"

enum {
  HETC_EXIT_OK = 0,
  HETC_EXIT_FAILURE = 1, /* hetc or a plugin failed */
  HETC_EXIT_BAD_INPUT = 2, /* the user's files or arguments are wrong */
  HETC_EXIT_USAGE = 2
};

/* Prints "hetc: <message>" and returns the exit status for the status
 * (2 for bad input, not found and usage errors, 1 otherwise). Frees it. */
int hetc_cli_report(hetc_status_t status);

/* Splits a --targets value ("cuda,cpu") into at most `capacity` names.
 * The names point into *out_storage (owned by the caller, free()).
 * Returns the count, or -1 after printing why (too many, or empty) as
 * "hetc COMMAND: ...". */
int32_t hetc_cli_split_targets(const char *command, const char *arg, char **out_storage,
                               const char **out_targets, int32_t capacity);

/* The value of `--name VALUE` or `--name=VALUE` at argv[*i] (advancing *i
 * past a separate value), else NULL. */
const char *hetc_cli_option(int argc, char **argv, int *i, const char *name);

/* A whole non-negative number; -1 when `text` is not one. */
long long hetc_cli_parse_count(const char *text);

int hetc_cli_tasks(int argc, char **argv);
int hetc_cli_plugin_check(int argc, char **argv);
int hetc_cli_plugins(int argc, char **argv);
int hetc_cli_compile(int argc, char **argv);
int hetc_cli_run(int argc, char **argv);
int hetc_cli_bench(int argc, char **argv);
int hetc_cli_compare(int argc, char **argv);

/* Sets every input of an opened package: from `input` (a file, or
 * NAME=FILE,... for several inputs) when it is not NULL, else the
 * deterministic random values of `seed`. */
hetc_status_t hetc_cli_set_inputs(hetc_package_t *package, const char *input, long long seed);
int hetc_cli_records(int argc, char **argv);
int hetc_cli_space(int argc, char **argv);
int hetc_cli_tune(int argc, char **argv);
int hetc_cli_verify(int argc, char **argv);

#endif /* HETC_DRIVER_CLI_CLI_H_ */
