#include "common/interrupt.h"

#include <signal.h>
#include <string.h>
#include <unistd.h>

static volatile sig_atomic_t noted_signal = 0;
static char last_words[1024];
static volatile sig_atomic_t last_words_length = 0;

static const int watched[] = {SIGINT, SIGTERM, SIGHUP};
#define NUM_WATCHED ((int)(sizeof(watched) / sizeof(watched[0])))

static void note(int signal_number) {
  if (noted_signal || last_words_length) {
    if (last_words_length) {
      ssize_t ignored = write(STDERR_FILENO, last_words, (size_t)last_words_length);
      (void)ignored;
    }
    /* The second one (the user means it), or one during a part that
     * cannot stop in between: end the process as the signal would have. */
    struct sigaction fallback;
    memset(&fallback, 0, sizeof(fallback));
    fallback.sa_handler = SIG_DFL;
    sigaction(signal_number, &fallback, NULL);
    raise(signal_number);
    return;
  }
  noted_signal = signal_number;
}

void hetc_interrupt_watch(void) {
  noted_signal = 0;
  struct sigaction action;
  memset(&action, 0, sizeof(action));
  action.sa_handler = note;
  sigemptyset(&action.sa_mask);
  action.sa_flags = 0; /* no SA_RESTART: waits return with EINTR */
  for (int s = 0; s < NUM_WATCHED; ++s) sigaction(watched[s], &action, NULL);
}

void hetc_interrupt_unwatch(void) {
  struct sigaction action;
  memset(&action, 0, sizeof(action));
  action.sa_handler = SIG_DFL;
  sigemptyset(&action.sa_mask);
  for (int s = 0; s < NUM_WATCHED; ++s) sigaction(watched[s], &action, NULL);
}

int hetc_interrupt_signal(void) { return (int)noted_signal; }

void hetc_interrupt_set_last_words(const char *text) {
  last_words_length = 0; /* the handler never sees a half-copied text */
  if (!text) return;
  size_t length = strlen(text);
  if (length > sizeof(last_words)) length = sizeof(last_words);
  memcpy(last_words, text, length);
  last_words_length = (sig_atomic_t)length;
}

hetc_status_t hetc_interrupt_status(void) {
  const int signal_number = noted_signal;
  if (!signal_number) return NULL;
  return hetc_status_new(HETC_STATUS_INTERRUPTED, "interrupted by %s",
                         signal_number == SIGINT    ? "SIGINT"
                         : signal_number == SIGTERM ? "SIGTERM"
                         : signal_number == SIGHUP  ? "SIGHUP"
                                                    : "a signal");
}
