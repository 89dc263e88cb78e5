/* driver/common/interrupt.h -- Ctrl-C and kill during long work.
 *
 * A compile or tune interrupted by SIGINT or SIGTERM stops at the next
 * point where it can leave things whole (between kernels, between timing
 * rounds), removes what it was writing and says so; the CLI then exits
 * with 128 + the signal, as a shell expects. Signal handlers may only set
 * a flag, so the work polls it. A second signal ends the process at once. */
#ifndef HETC_DRIVER_COMMON_INTERRUPT_H_
#define HETC_DRIVER_COMMON_INTERRUPT_H_

#include "common/status.h"

/* Installs the SIGINT and SIGTERM handlers (the CLI does, once). */
void hetc_interrupt_install(void);

/* The signal that asked hetc to stop, or 0. */
int hetc_interrupted(void);

/* NULL, or an INTERRUPTED status ("interrupted by SIGINT") when a signal
 * asked hetc to stop: the one-line poll of long loops. */
hetc_status_t hetc_interrupt_status(void);

#endif /* HETC_DRIVER_COMMON_INTERRUPT_H_ */
