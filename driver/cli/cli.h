/* driver/cli/cli.h -- the `hetc` command's subcommands. Each takes the
 * arguments after its name and returns the process exit status. The
 * command is built on the library API alone (hetc/hetc.h, libhetc). */
#ifndef HETC_DRIVER_CLI_CLI_H_
#define HETC_DRIVER_CLI_CLI_H_

#include "hetc/hetc.h"

enum {
  HETC_EXIT_OK = 0,
  HETC_EXIT_FAILURE = 1, /* hetc or a plugin failed */
  HETC_EXIT_BAD_INPUT = 2, /* the user's files or arguments are wrong */
  HETC_EXIT_USAGE = 2
};

/* Prints "hetc: <message>" and returns the exit status for the status
 * (2 for bad input, not found and usage errors, 1 otherwise). Frees it. */
int hetc_cli_report(hetc_status_t status);
/* The same, where the library's INVALID_ARGUMENT means the user's file or
 * argument (a records file, an overrides file) is wrong: exit status 2. */
int hetc_cli_report_input(hetc_status_t status);

/* ---- Arguments (cli_args.c) ----------------------------------------------
 * Every subcommand parses its arguments with one loop over these, so that
 * each refuses a bad value, a repeated option or a stray argument in the
 * same words and with exit status 2:
 *
 *   hetc_cli_args_t args;
 *   hetc_cli_args_init(&args, "run", usage_text, argc, argv);
 *   while (hetc_cli_args_next(&args))
 *     (void)(hetc_cli_count(&args, "--repeat", 1, 100000, &repeat) ||
 *            hetc_cli_text(&args, "--output", "a path", &output) ||
 *            hetc_cli_positional(&args, "PACKAGE", &package));
 *   if (args.failed) return HETC_EXIT_USAGE;
 *
 * Each matcher looks at the current argument and returns 1 when it is its
 * option (taken, with its value: `--name VALUE` or `--name=VALUE`), else
 * 0; an argument no matcher takes is "unexpected" at the next call of
 * hetc_cli_args_next. `names` lists the spellings, "--output|-o"; the
 * first one identifies the option, which may be given once. A bad or
 * missing value, a repeated option or a stray argument prints
 *   hetc CMD: --repeat: expected a whole number from 1 to 100000, got 'x'
 * (and the like) and the usage text on stderr, sets `failed` and ends the
 * loop. A matcher writes its output only for a good value. */
#define HETC_CLI_MAX_OPTIONS 32
#define HETC_CLI_MAX_TARGETS 64

typedef struct hetc_cli_args_t {
  const char *command; /* "run", "records list": messages start "hetc COMMAND: " */
  const char *usage;   /* printed after an error message; may be NULL */
  int argc;
  char **argv;          /* not owned */
  int index;            /* the argument being looked at */
  int matched;          /* it has been taken */
  int failed;           /* an error was printed */
  const char *given[HETC_CLI_MAX_OPTIONS]; /* the options seen, by their `names` */
  int num_given;
} hetc_cli_args_t;

void hetc_cli_args_init(hetc_cli_args_t *args, const char *command, const char *usage, int argc, char **argv);

/* Moves to the next argument; 0 at the end or after an error. */
int hetc_cli_args_next(hetc_cli_args_t *args);

/* Prints "hetc COMMAND: <message>" and the usage (only for the first
 * error), sets `failed`; returns HETC_EXIT_USAGE. For what no matcher can
 * see: a missing argument, options that exclude each other. */
int hetc_cli_error(hetc_cli_args_t *args, const char *format, ...) HETC_PLUGIN_PRINTF(2, 3);

/* An option without a value: *out_set = 1. */
int hetc_cli_flag(hetc_cli_args_t *args, const char *names, int *out_set);

/* Whether `text` is a whole number (digits, an optional '-') from lo to
 * hi: then *out_value is set. For positional numbers; options use
 * hetc_cli_count. */
int hetc_cli_parse_whole(const char *text, long long lo, long long hi, long long *out_value);

/* A whole number (digits, an optional '-') from lo to hi. */
int hetc_cli_count(hetc_cli_args_t *args, const char *names, long long lo, long long hi, long long *out_value);

/* A decimal number of seconds, above 0 and at most `most`. */
int hetc_cli_seconds(hetc_cli_args_t *args, const char *names, double most, double *out_seconds);

/* One of `choices` ("cost|first"): its index in *out_index. */
int hetc_cli_choice(hetc_cli_args_t *args, const char *names, const char *choices, int *out_index);

/* A non-empty text (a path, a name); `what` says what for messages ("a
 * path"). A separate value starting with '-' is taken for a forgotten
 * value, not a file name: `--output=-x` says that one. *out_text points
 * into argv. */
int hetc_cli_text(hetc_cli_args_t *args, const char *names, const char *what, const char **out_text);

/* The positional argument `name` ("PACKAGE") when *out_text is still NULL
 * and the argument does not start with '-'; an empty one is refused. */
int hetc_cli_positional(hetc_cli_args_t *args, const char *name, const char **out_text);

/* A --targets list: names separated by commas, none empty, none twice, at
 * most `capacity` (<= HETC_CLI_MAX_TARGETS). The names point into
 * `storage`. */
typedef struct hetc_cli_targets_t {
  const char *text; /* the value as given (points into argv); NULL until one is */
  char storage[4096];
  const char *names[HETC_CLI_MAX_TARGETS];
  int32_t count;
} hetc_cli_targets_t;
int hetc_cli_targets(hetc_cli_args_t *args, const char *names, int32_t capacity, hetc_cli_targets_t *out_targets);

/* The model a command reads, with the --input-shape that ONNX models with
 * symbolic input shapes need: NAME=DIMS[,NAME=DIMS...], e.g.
 * input=1x3x224x224 (cli_model.c). */
typedef struct hetc_cli_model_t {
  const char *path;        /* the positional MODEL; NULL until given */
  const char *input_shape; /* the --input-shape value as given; NULL when none */
  char storage[4096];
  const char *shapes[16];
  int32_t num_shapes;
} hetc_cli_model_t;
/* The matcher for --input-shape (a list of at most 16 entries). */
int hetc_cli_input_shape(hetc_cli_args_t *args, hetc_cli_model_t *model);
/* Loads model->path with its input shapes; notes of the import (weights
 * converted, nodes left out) go to stderr as "hetc: note: ...". */
hetc_status_t hetc_cli_model_load(hetc_cli_model_t *model, hetc_model_t **out_model);
#define HETC_CLI_INPUT_SHAPE_USAGE "  --input-shape NAME=DIMS[,...]  shapes of an ONNX model's symbolic inputs (e.g. input=1x3x224x224)\n"

/* Seconds since the epoch as UTC, 2026-11-27T15:53:59Z (the number itself
 * where the time cannot be written), into out. */
void hetc_cli_format_time(int64_t seconds, char *out, size_t size);

int hetc_cli_tasks(int argc, char **argv);
int hetc_cli_import(int argc, char **argv);
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
int hetc_cli_jobs(int argc, char **argv);
int hetc_cli_worker(int argc, char **argv);
int hetc_cli_space(int argc, char **argv);
int hetc_cli_tune(int argc, char **argv);
int hetc_cli_verify(int argc, char **argv);
int hetc_cli_keys(int argc, char **argv);

#endif /* HETC_DRIVER_CLI_CLI_H_ */
