/* driver/tune/worker_protocol.h -- the messages between the tuner
 * (measure.c) and hetc-measure-worker (worker_main.c), each a wire.h
 * message whose first byte is one of these kinds. Requests are answered in
 * order; release and exit have no answer. */
#ifndef HETC_DRIVER_TUNE_WORKER_PROTOCOL_H_
#define HETC_DRIVER_TUNE_WORKER_PROTOCOL_H_

enum {
  /* target string, device index -> READY: ok (0/1), message, device kind */
  HETC_WORKER_INIT = 'I',
  HETC_WORKER_READY = 'i',
  /* the workload every following build is for (no answer) */
  HETC_WORKER_WORKLOAD = 'W',
  /* id, template index, config -> BUILT: id, record error, message,
   * build seconds */
  HETC_WORKER_BUILD = 'B',
  HETC_WORKER_BUILT = 'b',
  /* id, trial options -> MEASURED: id, record error, message, number,
   * costs (count, then each), max relative error */
  HETC_WORKER_MEASURE = 'M',
  HETC_WORKER_MEASURED = 'm',
  /* id: drop that artifact (no answer) */
  HETC_WORKER_RELEASE = 'R',
  HETC_WORKER_EXIT = 'X',
};

/* A worker sent one of the crash signals (SIGSEGV, SIGBUS, ...) by another
 * process, rather than raising it itself through a crash, exits with this
 * plus the signal's number, so that the tuner does not blame the candidate
 * it was running. */
#define HETC_WORKER_EXIT_KILLED 160

#endif /* HETC_DRIVER_TUNE_WORKER_PROTOCOL_H_ */
