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

/* hetc_interrupt_watch, _unwatch, _signal and _set_last_words are public
 * (hetc/hetc.h). */

/* NULL, or an INTERRUPTED status ("interrupted by SIGINT") when a signal
 * was noted: the one-line poll of long loops. */
hetc_status_t hetc_interrupt_status(void);

#endif /* HETC_DRIVER_COMMON_INTERRUPT_H_ */
