/* Transfer costs: measured through a real plugin's buffer copies (vec),
 * fitted to a non-negative latency and rate that price a 4 MiB copy close
 * to what it takes; kept in the records store, so that a second lookup
 * reads instead of measuring. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "common/fileio.h"
#include "place/transfer.h"

static void assert_ok(hetc_status_t status) {
  if (status) fail_msg("%s", hetc_status_message(status));
}

static void measured_then_stored(void **state) {
  (void)state;
  hetc_registry_t *registry = NULL;
  hetc_plugin_entry_t *entry = NULL;
  assert_ok(hetc_registry_open(&registry));
  assert_ok(hetc_registry_target(registry, "vec", &entry));
  char path[256];
  snprintf(path, sizeof(path), "/tmp/hetc-transfer-%d.sqlite", (int)getpid());
  hetc_records_t *store = NULL;
  assert_ok(hetc_records_open(path, &store));
  hetc_transfer_cost_t to_device, to_host, again_to_device, again_to_host;
  int measured = 0;
  assert_ok(hetc_transfer_costs(store, entry, 0, &to_device, &to_host, &measured));
  assert_int_equal(measured, 1);
  printf("vec: to device %.2f us + %.3f ns/byte, to host %.2f us + %.3f ns/byte\n", to_device.latency_seconds * 1e6,
         to_device.seconds_per_byte * 1e9, to_host.latency_seconds * 1e6, to_host.seconds_per_byte * 1e9);
  assert_true(to_device.latency_seconds >= 0 && to_device.seconds_per_byte > 0);
  assert_true(to_host.latency_seconds >= 0 && to_host.seconds_per_byte > 0);
  /* Host memory: a 4 MiB copy well under 100 ms. */
  assert_true(hetc_transfer_seconds(&to_device, 4 << 20) < 0.1);
  assert_ok(hetc_transfer_costs(store, entry, 0, &again_to_device, &again_to_host, &measured));
  assert_int_equal(measured, 0);
  assert_true(again_to_device.latency_seconds == to_device.latency_seconds &&
              again_to_device.seconds_per_byte == to_device.seconds_per_byte);
  assert_true(again_to_host.seconds_per_byte == to_host.seconds_per_byte);
  hetc_records_close(store);
  remove(path);
  char wal[300];
  snprintf(wal, sizeof(wal), "%s-wal", path);
  remove(wal);
  snprintf(wal, sizeof(wal), "%s-shm", path);
  remove(wal);
  hetc_registry_free(registry);
}

int main(void) {
  const struct CMUnitTest tests[] = {cmocka_unit_test(measured_then_stored)};
  return cmocka_run_group_tests(tests, NULL, NULL);
}
