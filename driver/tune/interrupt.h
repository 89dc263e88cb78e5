/* driver/tune/interrupt.h -- stopping `hetc tune` in good order.
 *
 * While watched, the first SIGINT, SIGTERM or SIGHUP is only noted: the
 * tuner stops before its next batch, the measurer drops the batch in
 * flight (kills its workers, records nothing of it), a store waiting for
 * another writer gives up, and the command says what was kept. A second
 * one ends the process at once (the signal's default action): every record
 * written so far is in the store already, since each write is one
 * transaction. */
#ifndef HETC_DRIVER_TUNE_INTERRUPT_H_
#define HETC_DRIVER_TUNE_INTERRUPT_H_

/* Installs the handlers (without SA_RESTART, so a wait in poll() or
 * nanosleep() returns early) and forgets any earlier signal. */
void hetc_interrupt_watch(void);
/* Restores the default actions; the signal noted, if any, stays noted. */
void hetc_interrupt_unwatch(void);
/* The signal noted since hetc_interrupt_watch, else 0. Async-signal-safe. */
int hetc_interrupt_signal(void);
/* From now on (while watched) the first signal too ends the process at
 * once, after `text` (copied, at most 1 KiB) is written to stderr: for the
 * part of a run that cannot stop half-way but leaves nothing half-written
 * (a transaction not committed is no change). NULL: back to noting. */
void hetc_interrupt_set_last_words(const char *text);

#endif /* HETC_DRIVER_TUNE_INTERRUPT_H_ */
