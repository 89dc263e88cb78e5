/* The reporting side of a plugin-check session: numbered items and their
 * results as lines on the pipe to the supervisor (plugin_check.h). */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "check/check_items.h"

static void send_line(session_t *s, const char *text) {
  size_t length = strlen(text), done = 0;
  while (done < length) {
    ssize_t n = write(s->fd, text + done, length - done);
    if (n <= 0) return;
    done += (size_t)n;
  }
}

int hetc_check_item_begin(session_t *s, const char *format, ...) {
  int32_t item = s->item++;
  if (item < s->first_item) return 0;
  va_list args;
  va_start(args, format);
  vsnprintf(s->label, sizeof(s->label), format, args);
  va_end(args);
  char line[600];
  snprintf(line, sizeof(line), "B %d\t%s\n", item, s->label);
  send_line(s, line);
  s->failures = 0;
  alarm((unsigned)s->options->item_timeout_s);
  return 1;
}

void hetc_check_step(session_t *s, const char *format, ...) {
  char line[600] = "C\t";
  va_list args;
  va_start(args, format);
  vsnprintf(line + 2, sizeof(line) - 3, format, args);
  va_end(args);
  for (char *c = line + 2; *c; ++c)
    if (*c == '\n' || *c == '\t') *c = ' ';
  strcat(line, "\n");
  send_line(s, line);
}

void hetc_check_item_end(session_t *s) {
  alarm(0);
  char line[32];
  snprintf(line, sizeof(line), "E %d\n", s->item - 1);
  send_line(s, line);
}

void hetc_check_say(session_t *s, const char *kind, const char *format, ...) {
  char text[4096];
  va_list args;
  va_start(args, format);
  vsnprintf(text, sizeof(text), format, args);
  va_end(args);
  for (char *c = text; *c; ++c)
    if (*c == '\n') *c = '\x1e';
  char line[4200];
  snprintf(line, sizeof(line), "R %s\t%s\n", kind, text);
  send_line(s, line);
  if (!strcmp(kind, "FAIL")) ++s->failures;
}

void hetc_check_fail_status(session_t *s, hetc_status_t status, const char *what) {
  hetc_check_say(s, "FAIL", "%s failed (%s): %s", what, hetc_status_code_name(hetc_status_code(status)),
      hetc_status_message(status));
  hetc_status_free(status);
}

void hetc_check_expect_refusal(session_t *s, hetc_status_t status, const char *what) {
  if (!status) {
    hetc_check_say(s, "FAIL", "%s was accepted; it must be refused with a status and a message", what);
  } else {
    const char *message = hetc_status_message(status);
    if (!message || !message[0]) hetc_check_say(s, "FAIL", "%s was refused with an empty message", what);
    hetc_status_free(status);
  }
}

void hetc_check_describe_config(const hetc_plugin_config_t *config, char *out, size_t size) {
  size_t used = (size_t)snprintf(out, size, "{");
  for (int32_t k = 0; config && k < config->num_knobs && used < size; ++k) {
    const hetc_plugin_knob_value_t *knob = &config->knobs[k];
    used += (size_t)snprintf(out + used, size - used, "%s%s=", k ? ", " : "", knob->name);
    for (int32_t v = 0; v < knob->count && used < size; ++v)
      used += (size_t)snprintf(out + used, size - used, "%s%lld", v ? "," : (knob->count > 1 ? "[" : ""),
                               (long long)knob->values[v]);
    if (knob->count > 1 && used < size) used += (size_t)snprintf(out + used, size - used, "]");
  }
  if (used < size) snprintf(out + used, size - used, "}");
}
