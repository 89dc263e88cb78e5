/* driver/common/interrupt.h -- Ctrl-C and kill during long work.
 *
 * While watched, the first SIGINT, SIGTERM or SIGHUP is only noted: a
 * compile, compare or tune polls for it where it can leave things whole
 * (between kernels, timing rounds, tasks and batches), removes what it was
 * writing (a tune keeps every batch already written: each is one
 * transaction), and says so; the CLI then exits with 128 + the signal, as a
 * shell expects. A second signal ends the process at once (the signal's
 * default action). Signal handlers may only set a flag, so the work polls. */
#ifndef HETC_DRIVER_COMMON_INTERRUPT_H_
#define HETC_DRIVER_COMMON_INTERRUPT_H_

#include "common/status.h"

/* Installs the handlers (without SA_RESTART, so a wait in poll() or
 * nanosleep() returns early) and forgets any earlier signal. */
void hetc_interrupt_watch(void);
/* Restores the default actions; the signal noted, if any, stays noted. */
void hetc_interrupt_unwatch(void);
/* The signal noted since hetc_interrupt_watch, else 0. Async-signal-safe. */
int hetc_interrupt_signal(void);
/* NULL, or an INTERRUPTED status ("interrupted by SIGINT") when a signal
 * was noted: the one-line poll of long loops. */
hetc_status_t hetc_interrupt_status(void);
/* From now on (while watched) the first signal too ends the process at
 * once, after `text` (copied, at most 1 KiB) is written to stderr: for the
 * part of a run that cannot stop half-way but leaves nothing half-written
 * (a transaction not committed is no change). NULL: back to noting. */
void hetc_interrupt_set_last_words(const char *text);

#endif /* HETC_DRIVER_COMMON_INTERRUPT_H_ */
