#include "tune/wire.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

static void put(hetc_wire_writer_t *w, const void *bytes, size_t size) {
  if (w->failed) return;
  if (w->size + size > w->capacity) {
    size_t capacity = w->capacity ? w->capacity : 256;
    while (capacity < w->size + size) capacity *= 2;
    uint8_t *data = realloc(w->data, capacity);
    if (!data) {
      w->failed = 1;
      return;
    }
    w->data = data;
    w->capacity = capacity;
  }
  memcpy(w->data + w->size, bytes, size);
  w->size += size;
}

void hetc_wire_begin(hetc_wire_writer_t *w, uint8_t kind) {
  w->size = 0;
  w->failed = 0;
  uint32_t length = 0; /* patched by send */
  put(w, &length, sizeof(length));
  put(w, &kind, 1);
}

void hetc_wire_put_i64(hetc_wire_writer_t *w, int64_t value) { put(w, &value, sizeof(value)); }
void hetc_wire_put_f64(hetc_wire_writer_t *w, double value) { put(w, &value, sizeof(value)); }

void hetc_wire_put_bytes(hetc_wire_writer_t *w, const void *bytes, size_t size) {
  hetc_wire_put_i64(w, (int64_t)size);
  put(w, bytes, size);
}

void hetc_wire_put_string(hetc_wire_writer_t *w, const char *text) {
  if (!text) text = "";
  hetc_wire_put_bytes(w, text, strlen(text) + 1);
}

void hetc_wire_put_workload(hetc_wire_writer_t *w, const hetc_plugin_workload_t *workload) {
  hetc_plugin_workload_t copy = *workload;
  copy.inputs = NULL;
  hetc_wire_put_bytes(w, &copy, sizeof(copy));
  hetc_wire_put_bytes(w, workload->inputs, sizeof(hetc_plugin_tensor_t) * (size_t)workload->num_inputs);
}

void hetc_wire_put_config(hetc_wire_writer_t *w, const hetc_plugin_config_t *config) {
  int32_t n = config ? config->num_knobs : 0;
  hetc_wire_put_i64(w, n);
  for (int32_t k = 0; k < n; ++k) {
    hetc_wire_put_string(w, config->knobs[k].name);
    hetc_wire_put_bytes(w, config->knobs[k].values, sizeof(int64_t) * (size_t)config->knobs[k].count);
  }
}

void hetc_wire_writer_free(hetc_wire_writer_t *w) {
  free(w->data);
  memset(w, 0, sizeof(*w));
}

static const void *get(hetc_wire_reader_t *r, size_t size) {
  if (r->failed || size > r->size - r->offset) {
    r->failed = 1;
    return NULL;
  }
  const void *at = r->data + r->offset;
  r->offset += size;
  return at;
}

int64_t hetc_wire_get_i64(hetc_wire_reader_t *r) {
  int64_t value = 0;
  const void *at = get(r, sizeof(value));
  if (at) memcpy(&value, at, sizeof(value));
  return value;
}

double hetc_wire_get_f64(hetc_wire_reader_t *r) {
  double value = 0;
  const void *at = get(r, sizeof(value));
  if (at) memcpy(&value, at, sizeof(value));
  return value;
}

/* A length-prefixed byte run; NULL (and failed) when it does not fit. */
static const void *get_bytes(hetc_wire_reader_t *r, size_t *out_size) {
  int64_t size = hetc_wire_get_i64(r);
  if (size < 0 || (uint64_t)size > r->size) {
    r->failed = 1;
    return NULL;
  }
  *out_size = (size_t)size;
  return get(r, (size_t)size);
}

const char *hetc_wire_get_string(hetc_wire_reader_t *r) {
  size_t size = 0;
  const char *text = get_bytes(r, &size);
  if (!text || size == 0 || text[size - 1] != '\0') {
    r->failed = 1;
    return "";
  }
  return text;
}

void hetc_wire_get_workload(hetc_wire_reader_t *r, hetc_wire_workload_t *out) {
  memset(out, 0, sizeof(*out));
  size_t size = 0;
  const void *bytes = get_bytes(r, &size);
  if (!bytes || size != sizeof(out->workload)) {
    r->failed = 1;
    return;
  }
  memcpy(&out->workload, bytes, size);
  bytes = get_bytes(r, &size);
  int32_t n = out->workload.num_inputs;
  if (!bytes || n < 1 || n > 8 || size != sizeof(hetc_plugin_tensor_t) * (size_t)n) {
    r->failed = 1;
    return;
  }
  memcpy(out->inputs, bytes, size);
  out->workload.inputs = out->inputs;
}

void hetc_wire_get_config(hetc_wire_reader_t *r, hetc_wire_config_t *out) {
  memset(out, 0, sizeof(*out));
  int64_t n = hetc_wire_get_i64(r);
  if (n < 0 || n > HETC_WIRE_MAX_KNOBS) {
    r->failed = 1;
    return;
  }
  for (int64_t k = 0; k < n && !r->failed; ++k) {
    out->knobs[k].name = hetc_wire_get_string(r);
    size_t size = 0;
    const void *values = get_bytes(r, &size);
    if (!values || size % sizeof(int64_t) || size > sizeof(out->values[k])) {
      r->failed = 1;
      return;
    }
    /* Values sit unaligned in the message; plugins read int64s. */
    memcpy(out->values[k], values, size);
    out->knobs[k].count = (int32_t)(size / sizeof(int64_t));
    out->knobs[k].values = out->values[k];
  }
  out->config.num_knobs = (int32_t)n;
  out->config.knobs = out->knobs;
}

int hetc_wire_send(int fd, const hetc_wire_writer_t *w) {
  if (w->failed || w->size < 5) {
    errno = ENOMEM;
    return -1;
  }
  uint32_t length = (uint32_t)(w->size - sizeof(uint32_t));
  memcpy(w->data, &length, sizeof(length));
  size_t done = 0;
  while (done < w->size) {
    /* A socket (the tuner's end) must not raise SIGPIPE; send() on
     * anything else fails with ENOTSOCK and falls back to write(). */
    ssize_t n = send(fd, w->data + done, w->size - done, MSG_NOSIGNAL);
    if (n < 0 && errno == ENOTSOCK) n = write(fd, w->data + done, w->size - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return -1;
    done += (size_t)n;
  }
  return 0;
}

static int read_exactly(int fd, void *buffer, size_t size, int *out_eof_at_start) {
  size_t done = 0;
  while (done < size) {
    ssize_t n = read(fd, (uint8_t *)buffer + done, size - done);
    if (n < 0 && errno == EINTR) continue;
    if (n == 0 && done == 0 && out_eof_at_start) *out_eof_at_start = 1;
    if (n <= 0) return -1;
    done += (size_t)n;
  }
  return 0;
}

int hetc_wire_receive(int fd, uint8_t **out_data, size_t *out_size) {
  uint32_t length = 0;
  int eof = 0;
  *out_data = NULL;
  if (read_exactly(fd, &length, sizeof(length), &eof)) return eof ? 1 : -1;
  if (length < 1 || length > HETC_WIRE_MAX_MESSAGE) return -1;
  uint8_t *data = malloc(length);
  if (!data) return -1;
  if (read_exactly(fd, data, length, NULL)) {
    free(data);
    return -1;
  }
  *out_data = data;
  *out_size = length;
  return 0;
}
