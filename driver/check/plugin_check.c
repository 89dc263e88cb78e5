/* The supervisor of `hetc plugin-check`: forks the sessions, relays their
 * results, and turns a session that dies inside an item into that item's
 * failure. */
#include "check/plugin_check.h"
#include "plugins/abi_level.h"

#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

/* A session that keeps dying is not restarted forever. */
#define MAX_RESTARTS 32

hetc_plugin_check_options_t hetc_plugin_check_default_options(void) {
  hetc_plugin_check_options_t options = {-1, 0, 600};
  return options;
}

typedef struct supervisor_t {
  FILE *report;
  hetc_plugin_check_summary_t *summary;
  int32_t open_item;      /* item begun and not ended, -1 when none */
  char open_label[512];
  char open_step[512]; /* the plugin call the open item is in (hetc_check_step), or "" */
  int load_failed;        /* item 0 (loading the plugin) failed */
} supervisor_t;

static void print_result(supervisor_t *sup, const char *kind, const char *text) {
  fprintf(sup->report, "%-4s  %s: ", kind, sup->open_label);
  for (const char *c = text; *c; ++c) {
    if (*c == '\x1e')
      fputs("\n        ", sup->report);
    else
      fputc(*c, sup->report);
  }
  fputc('\n', sup->report);
  fflush(sup->report);
  if (!strcmp(kind, "PASS")) ++sup->summary->passed;
  if (!strcmp(kind, "FAIL")) {
    ++sup->summary->failed;
    if (sup->open_item == 0) sup->load_failed = 1;
  }
  if (!strcmp(kind, "SKIP")) ++sup->summary->skipped;
}

static void handle_line(supervisor_t *sup, char *line) {
  char *tab = strchr(line, '\t');
  if (line[0] == 'B' && tab) {
    sup->open_item = atoi(line + 2);
    snprintf(sup->open_label, sizeof(sup->open_label), "%s", tab + 1);
    sup->open_step[0] = 0;
  } else if (line[0] == 'C' && tab) {
    snprintf(sup->open_step, sizeof(sup->open_step), "%s", tab + 1);
  } else if (line[0] == 'E') {
    sup->open_item = -1;
    sup->open_step[0] = 0;
  } else if (line[0] == 'R' && tab) {
    *tab = 0;
    print_result(sup, line + 2, tab + 1);
  }
}

/* How a session ended, in words, for the item it was in. */
static void describe_death(int wait_status, int32_t timeout_s, char *out, size_t size) {
  if (WIFSIGNALED(wait_status)) {
    int sig = WTERMSIG(wait_status);
    if (sig == SIGALRM)
      snprintf(out, size, "did not finish within %d s (the check process was stopped)", timeout_s);
    else
      snprintf(out, size, "crashed (signal %d, %s)", sig, strsignal(sig));
  } else {
    snprintf(out, size, "the check process died (exit status %d; a sanitizer's report, if any, is above)",
             WEXITSTATUS(wait_status));
  }
}

/* Runs one session from `first_item`; returns the item to restart from, or
 * -1 when the session is over. */
static int32_t run_session(supervisor_t *sup, const char *path, const hetc_plugin_check_options_t *options,
                           uint32_t level, int32_t first_item, hetc_status_t *out_status) {
  int fds[2];
  if (pipe(fds)) {
    *out_status = hetc_status_new(HETC_STATUS_INTERNAL, "plugin-check: pipe: %s", strerror(errno));
    return -1;
  }
  fflush(NULL);
  pid_t pid = fork();
  if (pid < 0) {
    close(fds[0]);
    close(fds[1]);
    *out_status = hetc_status_new(HETC_STATUS_INTERNAL, "plugin-check: fork: %s", strerror(errno));
    return -1;
  }
  if (pid == 0) {
    close(fds[0]);
    hetc_plugin_check_session(path, options, level, first_item, fds[1]);
    close(fds[1]);
    /* exit, not _exit: a sanitizer's leak check runs at exit. */
    exit(0);
  }
  close(fds[1]);
  sup->open_item = -1;
  FILE *in = fdopen(fds[0], "r");
  char *line = NULL;
  size_t capacity = 0;
  ssize_t length;
  while (in && (length = getline(&line, &capacity, in)) > 0) {
    if (line[length - 1] == '\n') line[length - 1] = 0;
    handle_line(sup, line);
  }
  free(line);
  if (in)
    fclose(in);
  else
    close(fds[0]);
  int wait_status = 0;
  while (waitpid(pid, &wait_status, 0) < 0 && errno == EINTR) {
  }
  if (WIFEXITED(wait_status) && WEXITSTATUS(wait_status) == 0 && sup->open_item < 0) return -1;
  char death[900];
  describe_death(wait_status, options->item_timeout_s, death, sizeof(death));
  if (sup->open_item >= 0 && sup->open_step[0])
    snprintf(death + strlen(death), sizeof(death) - strlen(death), " in %s", sup->open_step);
  if (sup->open_item >= 0) {
    print_result(sup, "FAIL", death);
    return sup->open_item + 1;
  }
  snprintf(sup->open_label, sizeof(sup->open_label), "after the last check");
  print_result(sup, "FAIL", death);
  return -1;
}

hetc_status_t hetc_plugin_check(const char *path, const hetc_plugin_check_options_t *options, FILE *report,
                                hetc_plugin_check_summary_t *out_summary) {
  struct stat info;
  if (stat(path, &info) != 0)
    return hetc_status_new(HETC_STATUS_IO_ERROR, "%s: %s", path, strerror(errno));
  if (!S_ISREG(info.st_mode)) return hetc_status_new(HETC_STATUS_BAD_INPUT, "%s: not a regular file", path);
  memset(out_summary, 0, sizeof(*out_summary));
  supervisor_t sup = {report, out_summary, -1, "", "", 0};
  fprintf(report, "hetc plugin-check %s (host ABI %d.%d)%s\n", path, HETC_PLUGIN_ABI_MAJOR, HETC_PLUGIN_ABI_MINOR,
          options->quick ? ", quick" : "");
  hetc_status_t status = NULL;
  /* This hetc's version first: the full run; then a short one per older
   * version (1.7 down to 1.0), each in processes of its own, unless it
   * could not be loaded at all (which the full run has said). */
  for (int32_t level = (int32_t)HETC_ABI_LEVEL_NOW; level >= 0 && !status && !sup.load_failed; --level) {
    int32_t next = 0;
    for (int32_t restarts = 0; next >= 0 && !status; ++restarts) {
      if (restarts > MAX_RESTARTS) {
        snprintf(sup.open_label, sizeof(sup.open_label), "ABI %u.%u session", hetc_abi_level_major((uint32_t)level),
                 hetc_abi_level_minor((uint32_t)level));
        print_result(&sup, "FAIL", "crashed too often; the remaining checks were not run");
        break;
      }
      next = run_session(&sup, path, options, (uint32_t)level, next, &status);
    }
  }
  fprintf(report, "plugin-check: %d passed, %d failed, %d skipped\n", out_summary->passed, out_summary->failed,
          out_summary->skipped);
  return status;
}
