/* The argument parsing every subcommand shares (cli.h), so that a count,
 * a choice, a path or a repeated option is refused the same way, with the
 * same words, whichever command it is given to. */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"

void hetc_cli_args_init(hetc_cli_args_t *args, const char *command, const char *usage, int argc,
                        char **argv) {
  memset(args, 0, sizeof(*args));
  args->command = command;
  args->usage = usage;
  args->argc = argc;
  args->argv = argv;
  args->index = -1;
  args->matched = 1;
}

int hetc_cli_error(hetc_cli_args_t *args, const char *format, ...) {
  if (!args->failed) { /* the first error is the one to fix */
    va_list list;
    va_start(list, format);
    fprintf(stderr, "hetc %s: ", args->command);
    vfprintf(stderr, format, list);
    fputc('\n', stderr);
    va_end(list);
    if (args->usage) fputs(args->usage, stderr);
  }
  args->failed = 1;
  return HETC_EXIT_USAGE;
}

int hetc_cli_args_next(hetc_cli_args_t *args) {
  if (args->failed) return 0;
  if (!args->matched) {
    hetc_cli_error(args, "unexpected argument '%s'", args->argv[args->index]);
    return 0;
  }
  args->matched = 0;
  return ++args->index < args->argc;
}

/* The current argument's spelling of one of `names` ("--output|-o"): its
 * length in *out_length, the value after '=' in *out_inline (NULL when
 * none). 0 when it is none of them. */
static int spelled(const char *arg, const char *names, size_t *out_length, const char **out_inline) {
  for (const char *name = names; *name;) {
    const size_t length = strcspn(name, "|");
    if (!strncmp(arg, name, length) && (arg[length] == '\0' || arg[length] == '=')) {
      *out_length = length;
      *out_inline = arg[length] == '=' ? arg + length + 1 : NULL;
      return 1;
    }
    name += length;
    if (*name == '|') ++name;
  }
  return 0;
}

/* Takes the current argument when it is one of `names`: 1 when it is (an
 * error already printed for an option given twice), 0 when it is not.
 * The option is known by its first name. */
static int take_option(hetc_cli_args_t *args, const char *names, size_t *out_length, const char **out_inline) {
  if (args->matched || args->failed) return 0;
  if (!spelled(args->argv[args->index], names, out_length, out_inline)) return 0;
  args->matched = 1;
  for (int i = 0; i < args->num_given; ++i) {
    if (!strcmp(args->given[i], names)) {
      hetc_cli_error(args, "%.*s given twice", (int)*out_length, args->argv[args->index]);
      return 1;
    }
  }
  if (args->num_given < HETC_CLI_MAX_OPTIONS) args->given[args->num_given++] = names;
  return 1;
}

/* The value of an option just taken: after '=', else the next argument.
 * NULL after printing "expected <what>, got nothing" when there is none. */
static const char *take_value(hetc_cli_args_t *args, size_t length, const char *inline_value, const char *what) {
  if (args->failed) return NULL;
  if (inline_value) return inline_value;
  if (args->index + 1 >= args->argc) {
    hetc_cli_error(args, "%.*s: expected %s, got nothing", (int)length, args->argv[args->index], what);
    return NULL;
  }
  return args->argv[++args->index];
}

/* "--runs" as the user spelled it, for messages about its value. */
#define SPELLING(args, length, inline_value) \
  (int)(length), (args)->argv[(args)->index - ((inline_value) ? 0 : 1)]

int hetc_cli_flag(hetc_cli_args_t *args, const char *names, int *out_set) {
  size_t length;
  const char *inline_value;
  if (!take_option(args, names, &length, &inline_value)) return 0;
  if (inline_value && !args->failed)
    hetc_cli_error(args, "%.*s takes no value, got '%s'", (int)length, args->argv[args->index],
                   args->argv[args->index]);
  *out_set = 1;
  return 1;
}

/* No blanks, '+', hex or fraction, which strtoll would take in part, and
 * nothing past the range, which strtoll would clamp to it. */
int hetc_cli_parse_whole(const char *text, long long lo, long long hi, long long *out_value) {
  const char *digits = text[0] == '-' ? text + 1 : text;
  if (!*digits || strspn(digits, "0123456789") != strlen(digits)) return 0;
  errno = 0;
  char *end = NULL;
  const long long value = strtoll(text, &end, 10);
  if (errno || *end || value < lo || value > hi) return 0;
  *out_value = value;
  return 1;
}

int hetc_cli_count(hetc_cli_args_t *args, const char *names, long long lo, long long hi, long long *out_value) {
  size_t length;
  const char *inline_value;
  if (!take_option(args, names, &length, &inline_value)) return 0;
  char what[96];
  snprintf(what, sizeof(what), "a whole number from %lld to %lld", lo, hi);
  const char *text = take_value(args, length, inline_value, what);
  if (text && !hetc_cli_parse_whole(text, lo, hi, out_value))
    hetc_cli_error(args, "%.*s: expected %s, got '%s'", SPELLING(args, length, inline_value), what, text);
  return 1;
}

int hetc_cli_seconds(hetc_cli_args_t *args, const char *names, double most, double *out_seconds) {
  size_t length;
  const char *inline_value;
  if (!take_option(args, names, &length, &inline_value)) return 0;
  char what[96];
  snprintf(what, sizeof(what), "seconds, a number above 0 and at most %.15g", most);
  const char *text = take_value(args, length, inline_value, what);
  if (!text) return 1;
  /* Decimal only: strtod also reads "inf", "nan", hex and leading blanks. */
  char *end = NULL;
  const double value = strtod(text, &end);
  const int decimal = (text[0] >= '0' && text[0] <= '9') || text[0] == '.';
  if (!decimal || strspn(text, "0123456789.eE+-") != strlen(text) || *end || !isfinite(value) || !(value > 0) ||
      value > most)
    hetc_cli_error(args, "%.*s: expected %s, got '%s'", SPELLING(args, length, inline_value), what, text);
  else
    *out_seconds = value;
  return 1;
}

int hetc_cli_choice(hetc_cli_args_t *args, const char *names, const char *choices, int *out_index) {
  size_t length;
  const char *inline_value;
  if (!take_option(args, names, &length, &inline_value)) return 0;
  char what[128];
  snprintf(what, sizeof(what), "one of %s", choices);
  const char *text = take_value(args, length, inline_value, what);
  if (!text) return 1;
  int index = 0;
  for (const char *choice = choices; *choice; ++index) {
    const size_t choice_length = strcspn(choice, "|");
    if (choice_length == strlen(text) && !strncmp(choice, text, choice_length)) {
      *out_index = index;
      return 1;
    }
    choice += choice_length;
    if (*choice == '|') ++choice;
  }
  hetc_cli_error(args, "%.*s: expected %s, got '%s'", SPELLING(args, length, inline_value), what, text);
  return 1;
}

int hetc_cli_text(hetc_cli_args_t *args, const char *names, const char *what, const char **out_text) {
  size_t length;
  const char *inline_value;
  if (!take_option(args, names, &length, &inline_value)) return 0;
  const char *text = take_value(args, length, inline_value, what);
  if (!text) return 1;
  /* "--output --repeat 3" would write a file named --repeat; the '=' form
   * is there for a value that does start with '-'. */
  if (!text[0] || (!inline_value && text[0] == '-'))
    hetc_cli_error(args, "%.*s: expected %s, got '%s'", SPELLING(args, length, inline_value), what, text);
  else
    *out_text = text;
  return 1;
}

int hetc_cli_positional(hetc_cli_args_t *args, const char *name, const char **out_text) {
  if (args->matched || args->failed || *out_text) return 0;
  const char *arg = args->argv[args->index];
  if (arg[0] == '-') return 0;
  args->matched = 1;
  if (!arg[0]) hetc_cli_error(args, "%s: expected a path, got ''", name);
  else *out_text = arg;
  return 1;
}

int hetc_cli_targets(hetc_cli_args_t *args, const char *names, int32_t capacity, hetc_cli_targets_t *out_targets) {
  size_t length;
  const char *inline_value;
  if (!take_option(args, names, &length, &inline_value)) return 0;
  const char *what = "target names, comma-separated";
  const char *text = take_value(args, length, inline_value, what);
  if (!text) return 1;
  if (!text[0] || (!inline_value && text[0] == '-')) {
    hetc_cli_error(args, "%.*s: expected %s, got '%s'", SPELLING(args, length, inline_value), what, text);
    return 1;
  }
  hetc_cli_targets_t *t = out_targets;
  snprintf(t->storage, sizeof(t->storage), "%s", text);
  if (strlen(text) >= sizeof(t->storage)) {
    hetc_cli_error(args, "%.*s: at most %zu characters, got %zu", SPELLING(args, length, inline_value),
                   sizeof(t->storage) - 1, strlen(text));
    return 1;
  }
  /* Split by hand: strtok would pass over the empty names of "vec,",
   * ",vec" and "vec,,cpu" silently. */
  t->count = 0;
  for (char *name = t->storage;;) {
    char *comma = strchr(name, ',');
    if (comma) *comma = '\0';
    if (!name[0]) {
      hetc_cli_error(args, "%.*s: empty target name in '%s'", SPELLING(args, length, inline_value), text);
      return 1;
    }
    for (int32_t i = 0; i < t->count && i < HETC_CLI_MAX_TARGETS; ++i) {
      if (!strcmp(t->names[i], name)) {
        hetc_cli_error(args, "%.*s: target '%s' is listed twice in '%s'", SPELLING(args, length, inline_value),
                       name, text);
        return 1;
      }
    }
    if (t->count < HETC_CLI_MAX_TARGETS) t->names[t->count] = name;
    ++t->count;
    if (!comma) break;
    name = comma + 1;
  }
  if (capacity > HETC_CLI_MAX_TARGETS) capacity = HETC_CLI_MAX_TARGETS;
  if (t->count > capacity)
    hetc_cli_error(args, "%.*s: at most %d targets, got %d in '%s'", SPELLING(args, length, inline_value), capacity,
                   t->count, text);
  else
    t->text = text;
  return 1;
}
