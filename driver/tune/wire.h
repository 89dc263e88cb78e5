/* driver/tune/wire.h -- the byte format between the tuner and its
 * measurement workers.
 *
 * A message is a little-endian uint32 payload length, then the payload: a
 * one-byte kind and fields appended in order. Both ends are the same build
 * (the worker is found beside libhetc), so structs of the ABI travel as
 * their bytes, pointers rebuilt on arrival. */
#ifndef HETC_DRIVER_TUNE_WIRE_H_
#define HETC_DRIVER_TUNE_WIRE_H_

#include <stddef.h>
#include <stdint.h>

#include "hetc/plugin.h"

#define HETC_WIRE_MAX_MESSAGE (64u << 20)
#define HETC_WIRE_MAX_KNOBS 64

typedef struct hetc_wire_writer_t {
  uint8_t *data; /* owned; free() */
  size_t size, capacity;
  int failed;    /* an allocation failed: the message is unusable */
} hetc_wire_writer_t;

typedef struct hetc_wire_reader_t {
  const uint8_t *data; /* borrowed */
  size_t size, offset;
  int failed;          /* read past the end or malformed */
} hetc_wire_reader_t;

void hetc_wire_begin(hetc_wire_writer_t *w, uint8_t kind);
void hetc_wire_put_i64(hetc_wire_writer_t *w, int64_t value);
void hetc_wire_put_f64(hetc_wire_writer_t *w, double value);
void hetc_wire_put_bytes(hetc_wire_writer_t *w, const void *bytes, size_t size);
void hetc_wire_put_string(hetc_wire_writer_t *w, const char *text); /* NULL travels as "" */
void hetc_wire_put_workload(hetc_wire_writer_t *w, const hetc_plugin_workload_t *workload);
void hetc_wire_put_config(hetc_wire_writer_t *w, const hetc_plugin_config_t *config);
void hetc_wire_writer_free(hetc_wire_writer_t *w);

int64_t hetc_wire_get_i64(hetc_wire_reader_t *r);
double hetc_wire_get_f64(hetc_wire_reader_t *r);
/* A string borrowed from the message (NUL-terminated there). */
const char *hetc_wire_get_string(hetc_wire_reader_t *r);

/* A workload decoded into caller storage: inputs points into `inputs`. */
typedef struct hetc_wire_workload_t {
  hetc_plugin_workload_t workload;
  hetc_plugin_tensor_t inputs[8];
} hetc_wire_workload_t;
void hetc_wire_get_workload(hetc_wire_reader_t *r, hetc_wire_workload_t *out);

#define HETC_WIRE_MAX_KNOB_VALUES 8

/* A config decoded into caller storage: values copied (aligned) there, names
 * borrowed from the message (keep it alive while the config is used). */
typedef struct hetc_wire_config_t {
  hetc_plugin_config_t config;
  hetc_plugin_knob_value_t knobs[HETC_WIRE_MAX_KNOBS];
  int64_t values[HETC_WIRE_MAX_KNOBS][HETC_WIRE_MAX_KNOB_VALUES];
} hetc_wire_config_t;
void hetc_wire_get_config(hetc_wire_reader_t *r, hetc_wire_config_t *out);

/* Whole-message I/O on a file descriptor, retrying on EINTR. send returns
 * 0 or -1 (errno set); receive returns 0 with *out_data (owned; free()) and
 * its size, 1 at a clean end of file, -1 on errors or a malformed length. */
int hetc_wire_send(int fd, const hetc_wire_writer_t *w);
int hetc_wire_receive(int fd, uint8_t **out_data, size_t *out_size);

#endif /* HETC_DRIVER_TUNE_WIRE_H_ */
