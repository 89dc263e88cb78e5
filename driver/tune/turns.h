/* driver/tune/turns.h -- the scheduler of several tuning jobs run by one
 * `hetc tune a.json b.json`: each job is a child process, and every stage
 * of it that needs the machine asks the parent for its turn first (over a
 * socket the child inherits, $HETC_TUNE_TURNS_FD), then takes the machine-wide
 * lock as any tuner does (device_lock.h), so other hetc processes are kept
 * out too. The stages:
 *
 *   cpu      builds and the cost model's updates: the cores, shared by any
 *            number of jobs;
 *   measure  one device, alone; on a CPU device the cores too, so no
 *            build or model update runs beside it.
 *
 * The parent grants turns in the order they were asked for: a turn that
 * must wait holds back every later one it conflicts with (a CPU
 * measurement is not starved by builds that keep overlapping), and a later
 * one that does not conflict goes ahead (one job builds while another
 * measures on another device). A job waiting for its turn holds nothing.
 * A job that dies gives back what it held. */
#ifndef HETC_DRIVER_TUNE_TURNS_H_
#define HETC_DRIVER_TUNE_TURNS_H_

#include <stdint.h>

#include "common/status.h"

#include "hetc/hetc.h"

/* One message from a job: asking for a turn (a reply of one byte grants
 * it) or ending one (no reply). */
typedef struct hetc_turn_message_t {
  char op;    /* 'a' ask, 'e' end */
  char stage; /* 'c' cpu, 'm' measure */
  char is_cpu; /* a measurement on the machine's cores */
  char device[161];
} hetc_turn_message_t;

/* The parent's side is public: hetc_tune_serve_turns (hetc/hetc.h). */

/* The child's side, used by device_lock.c: 1 and a turn taken when this
 * process is a job of a scheduler, 0 when it is not (nothing to ask). */
int hetc_turn_ask(char stage, int is_cpu, const char *device);
void hetc_turn_end(char stage, int is_cpu, const char *device);

#endif /* HETC_DRIVER_TUNE_TURNS_H_ */
