/* driver/tune/device_lock.h -- turns on the devices and the cores, taken by
 * every tuning process of one machine (several `hetc tune`s, several
 * `hetc worker`s): a measurement holds its device alone, and on a CPU
 * device it also holds the cores alone, which builds and the tuner's model
 * work share. So two measurements never share a device, and no build
 * disturbs a CPU measurement, whichever jobs they belong to. The jobs of
 * one `hetc tune a.json b.json` also ask its scheduler for their turns
 * first (turns.h), which grants them fairly.
 *
 * The turns are flock(2) locks on files in the lock folder:
 * $HETC_LOCK_DIR, else $XDG_RUNTIME_DIR/hetc-locks, else
 * /tmp/hetc-locks-UID. The kernel releases a dead process's locks, so a
 * killed tuner holds nothing. Waiting polls for hetc_interrupt_signal.
 *
 * A process that is stopped (SIGSTOP, Ctrl-Z, a debugger) keeps its
 * locks, and so does a process gone whose lock file a child still has
 * open: a wait on holders that are all stopped or gone (as /proc/locks
 * names them) gives up after HETC_LOCK_TIMEOUT_S, or $HETC_LOCK_TIMEOUT
 * seconds, with TIMEOUT naming the lock, the holder and what it is, so
 * that a worker hands its task back rather than wait for ever. A wait on
 * a running holder goes on: measurements take turns.
 *
 * With $HETC_MEASURE_LOG set, every hold is appended to that file as a
 * line "measure|build LOCK START END PID DEVICE" (CLOCK_REALTIME microseconds), for
 * checking that holds never overlap where they must not. */
#ifndef HETC_DRIVER_TUNE_DEVICE_LOCK_H_
#define HETC_DRIVER_TUNE_DEVICE_LOCK_H_

#include <stdint.h>

#include "common/status.h"
#include "records/records.h"

/* How long a wait for a tuning lock goes on while its holders are all
 * stopped or gone, unless $HETC_LOCK_TIMEOUT (seconds, 0 to 86400) says
 * otherwise. */
#define HETC_LOCK_TIMEOUT_S 300

typedef struct hetc_device_lock_t {
  int device_fd; /* the device's lock file; -1 before open */
  int cores_fd;  /* the cores' lock file */
  int is_cpu;    /* the device is the machine's cores */
  char device_name[160];
  int64_t held_since_ns; /* CLOCK_REALTIME of the current hold; 0: none */
  char turn;             /* the scheduler's turn held with it (turns.h): 'm', 'c' or 0 */
  char folder[900];      /* the lock folder, for messages */
  char device_file[200]; /* the device's lock file in it */
  double timeout_s;      /* HETC_LOCK_TIMEOUT_S, or the variable's */
} hetc_device_lock_t;

/* Opens the lock files of the device `fingerprint` (kind CPU when is_cpu)
 * in the lock folder, creating it; BAD_INPUT for a HETC_LOCK_TIMEOUT that
 * is not seconds. Close with hetc_device_lock_close. */
hetc_status_t hetc_device_lock_open(const char *fingerprint, int is_cpu, hetc_device_lock_t *out_lock);
void hetc_device_lock_close(hetc_device_lock_t *lock);

/* Waits until the device (and, on a CPU, the cores) are this process's
 * alone; INTERRUPTED when a signal is noted meanwhile, TIMEOUT when the
 * holders are stopped or gone for the timeout. */
hetc_status_t hetc_device_lock_measure(hetc_device_lock_t *lock);
/* Waits for a shared hold of the cores, for builds. */
hetc_status_t hetc_device_lock_build(hetc_device_lock_t *lock);
/* Ends the hold taken by either. */
void hetc_device_lock_release(hetc_device_lock_t *lock, const char *what);

/* The tuner's own CPU work between batches (the cost model's fits and
 * proposals) holds the cores as a build does, so that it never runs beside
 * a measurement on a CPU device, of this process or another. */
hetc_status_t hetc_device_lock_cpu_work_begin(void);
void hetc_device_lock_cpu_work_end(void);

/* A measurement's hold (records/records.h) is kept by this process until
 * the tuner writes it to the records store with the batch it measured
 * (hetc_records_note_holds). Moves up to `max` of the holds ended since
 * the last call into `out` (oldest first) and returns how many. Holds
 * beyond the process's buffer (4096, where a tuner takes one per batch)
 * are not kept. Any thread. */
int32_t hetc_device_lock_take_holds(hetc_measure_hold_t *out, int32_t max);

#endif /* HETC_DRIVER_TUNE_DEVICE_LOCK_H_ */
