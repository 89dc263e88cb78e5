/* Buffers in plain host memory, and running and timing an artifact over
 * them. They are together because run() is where buffers meet artifacts:
 * it checks each buffer against the bytes the artifact needs
 * (hetc_plugin_artifact_t.arg_bytes) and hands the kernels raw float
 * pointers, so the buffer struct stays private to this file. The device is
 * host_memory, so the driver also reads buffers in place through
 * buffer_host_pointer.
 *
 * Buffers are host->alloc'ed and freed by exc_buffer_free, so that the host
 * accounts for what the plugin holds. */
#include <stdio.h>
#include <string.h>

#include "example_c.h"

/* ------------------------------------------------------------------------ */
/* Buffers: plain host memory                                               */
/* ------------------------------------------------------------------------ */

struct hetc_plugin_buffer_t {
  uint64_t bytes;
  float *data; /* host->alloc'ed; 64-byte aligned */
};

/* *out_buffer is the caller's, freed with buffer_free. */
hetc_plugin_status_t exc_buffer_alloc(hetc_plugin_instance_t *instance,
                                      int32_t device_index, uint64_t bytes,
                                      hetc_plugin_buffer_t **out_buffer) {
  if (!instance || !out_buffer || device_index != 0)
    return exc_status(HETC_PLUGIN_STATUS_INVALID_ARGUMENT,
                      EXC_NAME ": buffer_alloc: null instance or out_buffer, or device %d",
                      device_index);
  *out_buffer = NULL;
  if (bytes > (uint64_t)SIZE_MAX / 2)
    return exc_status(HETC_PLUGIN_STATUS_OUT_OF_MEMORY, EXC_NAME ": %llu bytes",
                      (unsigned long long)bytes);
  hetc_plugin_buffer_t *b = exc_host->alloc(sizeof(*b));
  /* One byte for an empty buffer: a host allocator may return NULL for 0. */
  float *data = exc_host->alloc(bytes ? (size_t)bytes : 1);
  if (!b || !data) {
    exc_host->free(b);
    exc_host->free(data);
    return exc_status(HETC_PLUGIN_STATUS_OUT_OF_MEMORY, EXC_NAME ": buffer of %llu bytes",
                      (unsigned long long)bytes);
  }
  b->bytes = bytes;
  b->data = data;
  *out_buffer = b;
  return NULL;
}

void exc_buffer_free(hetc_plugin_instance_t *instance, hetc_plugin_buffer_t *buffer) {
  (void)instance;
  if (!buffer) return;
  exc_host->free(buffer->data);
  exc_host->free(buffer);
}

/* offset + bytes within size, without overflowing. */
static int in_range(uint64_t size, uint64_t offset, uint64_t bytes) {
  return offset <= size && bytes <= size - offset;
}

hetc_plugin_status_t exc_buffer_write(hetc_plugin_instance_t *instance,
                                      hetc_plugin_buffer_t *buffer, uint64_t offset,
                                      const void *src, uint64_t bytes) {
  (void)instance;
  if (!buffer || (bytes && !src))
    return exc_status(HETC_PLUGIN_STATUS_INVALID_ARGUMENT, EXC_NAME ": buffer_write: null argument");
  if (!in_range(buffer->bytes, offset, bytes))
    return exc_status(HETC_PLUGIN_STATUS_INVALID_ARGUMENT,
                      EXC_NAME ": buffer_write of %llu bytes at %llu into a buffer of %llu",
                      (unsigned long long)bytes, (unsigned long long)offset,
                      (unsigned long long)buffer->bytes);
  if (bytes) memcpy((char *)buffer->data + offset, src, (size_t)bytes);
  return NULL;
}

hetc_plugin_status_t exc_buffer_read(hetc_plugin_instance_t *instance,
                                     const hetc_plugin_buffer_t *buffer, uint64_t offset,
                                     void *dst, uint64_t bytes) {
  (void)instance;
  if (!buffer || (bytes && !dst))
    return exc_status(HETC_PLUGIN_STATUS_INVALID_ARGUMENT, EXC_NAME ": buffer_read: null argument");
  if (!in_range(buffer->bytes, offset, bytes))
    return exc_status(HETC_PLUGIN_STATUS_INVALID_ARGUMENT,
                      EXC_NAME ": buffer_read of %llu bytes at %llu from a buffer of %llu",
                      (unsigned long long)bytes, (unsigned long long)offset,
                      (unsigned long long)buffer->bytes);
  if (bytes) memcpy(dst, (const char *)buffer->data + offset, (size_t)bytes);
  return NULL;
}

hetc_plugin_status_t exc_buffer_copy(hetc_plugin_instance_t *instance,
                                     hetc_plugin_buffer_t *dst, uint64_t dst_offset,
                                     const hetc_plugin_buffer_t *src, uint64_t src_offset,
                                     uint64_t bytes) {
  (void)instance;
  if (!dst || !src)
    return exc_status(HETC_PLUGIN_STATUS_INVALID_ARGUMENT, EXC_NAME ": buffer_copy: null buffer");
  if (!in_range(dst->bytes, dst_offset, bytes) || !in_range(src->bytes, src_offset, bytes))
    return exc_status(HETC_PLUGIN_STATUS_INVALID_ARGUMENT,
                      EXC_NAME ": buffer_copy of %llu bytes from %llu (of %llu) to %llu (of %llu)",
                      (unsigned long long)bytes, (unsigned long long)src_offset,
                      (unsigned long long)src->bytes, (unsigned long long)dst_offset,
                      (unsigned long long)dst->bytes);
  /* memmove: the two ranges may lie in one buffer. */
  if (bytes)
    memmove((char *)dst->data + dst_offset, (const char *)src->data + src_offset, (size_t)bytes);
  return NULL;
}

/* The buffer's own memory: valid until buffer_free, never freed by the
 * caller. */
void *exc_buffer_host_pointer(hetc_plugin_instance_t *instance,
                              hetc_plugin_buffer_t *buffer) {
  (void)instance;
  return buffer ? buffer->data : NULL;
}

/* ------------------------------------------------------------------------ */
/* Run and time                                                             */
/* ------------------------------------------------------------------------ */

static const char *arg_role(const hetc_plugin_artifact_t *a, int32_t i, char *buf, size_t size) {
  if (i < a->info.num_inputs) snprintf(buf, size, "input %d", i);
  else if (i < a->info.num_inputs + a->info.num_params)
    snprintf(buf, size, "param %d", i - a->info.num_inputs);
  else snprintf(buf, size, "the output");
  return buf;
}

/* Checks run()'s arguments and collects their data pointers. */
static hetc_plugin_status_t gather(const hetc_plugin_artifact_t *a,
                                   hetc_plugin_buffer_t *const *args, int32_t num_args,
                                   float **pointers) {
  if (!a) return exc_status(HETC_PLUGIN_STATUS_INVALID_ARGUMENT, EXC_NAME ": null artifact");
  const char *name = exc_templates[a->kind].name;
  if (num_args != a->num_args || !args)
    return exc_status(HETC_PLUGIN_STATUS_INVALID_ARGUMENT,
                      "%s: expected %d arguments, got %d (inputs, params, output)", name,
                      a->num_args, num_args);
  char role[32];
  for (int32_t i = 0; i < num_args; ++i) {
    if (!args[i])
      return exc_status(HETC_PLUGIN_STATUS_INVALID_ARGUMENT, "%s: argument %d (%s) is null",
                        name, i, arg_role(a, i, role, sizeof(role)));
    if (args[i]->bytes < a->arg_bytes[i])
      return exc_status(HETC_PLUGIN_STATUS_INVALID_ARGUMENT,
                        "%s: argument %d (%s) has %llu bytes, the kernel needs %llu", name, i,
                        arg_role(a, i, role, sizeof(role)), (unsigned long long)args[i]->bytes,
                        (unsigned long long)a->arg_bytes[i]);
    pointers[i] = args[i]->data;
  }
  return NULL;
}

static void dispatch(const hetc_plugin_artifact_t *a, float *const *pointers) {
  if (a->kind == EXC_T_DIRECT) exc_direct_run(&a->wl, &a->conv, pointers);
  else exc_ops_run(&a->wl, a->kind, pointers);
}

hetc_plugin_status_t exc_run(hetc_plugin_instance_t *instance,
                             const hetc_plugin_artifact_t *artifact,
                             hetc_plugin_buffer_t *const *args, int32_t num_args) {
  (void)instance;
  float *pointers[EXC_MAX_INPUTS + 3];
  hetc_plugin_status_t s = gather(artifact, args, num_args, pointers);
  if (s) return s;
  dispatch(artifact, pointers);
  return NULL;
}

hetc_plugin_status_t exc_time(hetc_plugin_instance_t *instance,
                              const hetc_plugin_artifact_t *artifact,
                              hetc_plugin_buffer_t *const *args, int32_t num_args,
                              int32_t number, int32_t repeat, double *out_seconds) {
  (void)instance;
  if (number < 1 || repeat < 1 || !out_seconds)
    return exc_status(HETC_PLUGIN_STATUS_INVALID_ARGUMENT,
                      EXC_NAME ": time: number %d and repeat %d must be positive, out_seconds "
                      "non-null",
                      number, repeat);
  float *pointers[EXC_MAX_INPUTS + 3];
  hetc_plugin_status_t s = gather(artifact, args, num_args, pointers);
  if (s) return s;
  dispatch(artifact, pointers); /* warm-up: caches, the host's pool */
  for (int32_t r = 0; r < repeat; ++r) {
    const double t0 = exc_now_seconds();
    for (int32_t i = 0; i < number; ++i) dispatch(artifact, pointers);
    out_seconds[r] = (exc_now_seconds() - t0) / number;
  }
  return NULL;
}
