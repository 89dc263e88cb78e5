#include "common/interrupt.h"

#include <signal.h>
#include <string.h>

static volatile sig_atomic_t received;

static void on_signal(int signal_number) {
  received = signal_number;
  /* The next one kills: a user pressing Ctrl-C twice means it. */
  struct sigaction again;
  memset(&again, 0, sizeof(again));
  again.sa_handler = SIG_DFL;
  sigaction(signal_number, &again, NULL);
}

void hetc_interrupt_install(void) {
  struct sigaction action;
  memset(&action, 0, sizeof(action));
  action.sa_handler = on_signal;
  sigemptyset(&action.sa_mask);
  sigaction(SIGINT, &action, NULL);
  sigaction(SIGTERM, &action, NULL);
}

int hetc_interrupted(void) { return received; }

hetc_status_t hetc_interrupt_status(void) {
  const int signal_number = received;
  if (!signal_number) return NULL;
  return hetc_status_new(HETC_STATUS_INTERRUPTED, "interrupted by %s",
                         signal_number == SIGINT ? "SIGINT" : signal_number == SIGTERM ? "SIGTERM" : "a signal");
}
