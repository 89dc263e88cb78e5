#include "place/transfer.h"

#include <stdlib.h>
#include <string.h>

#include "common/clock.h"
#include "kernel/plugin_calls.h"

/* A small copy prices the latency, a large one the bandwidth. */
#define SMALL_BYTES ((uint64_t)64 << 10)
#define LARGE_BYTES ((uint64_t)4 << 20)
#define SAMPLES 5

/* Median seconds of SAMPLES writes (or reads) of `bytes`. */
static hetc_status_t time_copies(hetc_plugin_entry_t *entry, hetc_plugin_buffer_t *buffer, void *host,
                                 uint64_t bytes, int to_host, double *out_seconds) {
  const hetc_plugin_t *p = entry->plugin;
  double samples[SAMPLES];
  for (int s = 0; s < SAMPLES; ++s) {
    double start = hetc_now_seconds();
    hetc_status_t status = to_host ? p->buffer_read(entry->instance, buffer, 0, host, bytes)
                                   : p->buffer_write(entry->instance, buffer, 0, host, bytes);
    if (status) return status;
    samples[s] = hetc_now_seconds() - start;
  }
  hetc_sort_doubles(samples, SAMPLES);
  *out_seconds = samples[SAMPLES / 2];
  return NULL;
}

static hetc_transfer_cost_t fit(double small_seconds, double large_seconds) {
  hetc_transfer_cost_t cost;
  double rate = (large_seconds - small_seconds) / (double)(LARGE_BYTES - SMALL_BYTES);
  cost.seconds_per_byte = rate > 0 ? rate : large_seconds / (double)LARGE_BYTES;
  double latency = small_seconds - cost.seconds_per_byte * (double)SMALL_BYTES;
  cost.latency_seconds = latency > 0 ? latency : 0;
  return cost;
}

hetc_status_t hetc_transfer_measure(hetc_plugin_entry_t *entry, int32_t device_index,
                                    hetc_transfer_cost_t *out_to_device, hetc_transfer_cost_t *out_to_host) {
  const hetc_plugin_t *p = entry->plugin;
  hetc_plugin_buffer_t *buffer = NULL;
  char *host = malloc(LARGE_BYTES);
  if (!host) return hetc_status_new(HETC_STATUS_OUT_OF_MEMORY, "transfer measurement");
  /* Values, not zeros: a lazy allocator must not turn the first write
   * into page faults that the timing then counts. */
  memset(host, 0x3f, LARGE_BYTES);
  hetc_status_t status = p->buffer_alloc(entry->instance, device_index, LARGE_BYTES, &buffer);
  double write_small = 0, write_large = 0, read_small = 0, read_large = 0;
  /* A first round trip of the large buffer warms both directions up. */
  if (!status) status = p->buffer_write(entry->instance, buffer, 0, host, LARGE_BYTES);
  if (!status) status = p->buffer_read(entry->instance, buffer, 0, host, LARGE_BYTES);
  if (!status) status = time_copies(entry, buffer, host, SMALL_BYTES, 0, &write_small);
  if (!status) status = time_copies(entry, buffer, host, LARGE_BYTES, 0, &write_large);
  if (!status) status = time_copies(entry, buffer, host, SMALL_BYTES, 1, &read_small);
  if (!status) status = time_copies(entry, buffer, host, LARGE_BYTES, 1, &read_large);
  if (buffer) p->buffer_free(entry->instance, buffer);
  free(host);
  if (status) return status;
  *out_to_device = fit(write_small, write_large);
  *out_to_host = fit(read_small, read_large);
  return NULL;
}

hetc_status_t hetc_transfer_costs(hetc_records_t *store, hetc_plugin_entry_t *entry, int32_t device_index,
                                  hetc_transfer_cost_t *out_to_device, hetc_transfer_cost_t *out_to_host,
                                  int *out_measured) {
  const hetc_plugin_device_t *device = hetc_entry_device(entry, device_index);
  if (!device || !device->fingerprint)
    return hetc_status_new(HETC_STATUS_INTERNAL, "target '%s' has no device %d", hetc_entry_name(entry), device_index);
  int found_to_device = 0, found_to_host = 0;
  if (store) {
    HETC_RETURN_IF_ERROR(hetc_records_get_transfer(store, device->fingerprint, HETC_TRANSFER_TO_DEVICE,
                                                   out_to_device, &found_to_device));
    HETC_RETURN_IF_ERROR(hetc_records_get_transfer(store, device->fingerprint, HETC_TRANSFER_TO_HOST, out_to_host,
                                                   &found_to_host));
  }
  if (out_measured) *out_measured = !(found_to_device && found_to_host);
  if (found_to_device && found_to_host) return NULL;
  HETC_RETURN_IF_ERROR(hetc_transfer_measure(entry, device_index, out_to_device, out_to_host));
  if (!store) return NULL;
  HETC_RETURN_IF_ERROR(hetc_records_put_transfer(store, device->fingerprint, HETC_TRANSFER_TO_DEVICE, out_to_device));
  return hetc_records_put_transfer(store, device->fingerprint, HETC_TRANSFER_TO_HOST, out_to_host);
}

double hetc_transfer_seconds(const hetc_transfer_cost_t *cost, double bytes) {
  return cost->latency_seconds + bytes * cost->seconds_per_byte;
}
