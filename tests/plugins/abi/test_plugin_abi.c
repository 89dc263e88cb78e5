/* Plugin discovery and negotiation: each fake plugin breaks one rule and is
 * refused (or marked unavailable) with the right reason, and none of them
 * stops the others from loading. HETC_PLUGIN_PATH points at the fakes. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "plugins/registry.h"

static hetc_registry_t *registry;

static const hetc_plugin_entry_t *find(const char *file) {
  for (int32_t i = 0; i < registry->count; ++i) {
    const char *slash = strrchr(registry->entries[i].path, '/');
    if (!strcmp(slash ? slash + 1 : registry->entries[i].path, file)) return &registry->entries[i];
  }
  fail_msg("no candidate %s", file);
  return NULL;
}

static void expect(const char *file, hetc_plugin_state_t state, const char *reason) {
  const hetc_plugin_entry_t *e = find(file);
  printf("%-32s state %d reason: %s\n", file, e->state, e->reason ? e->reason : "-");
  assert_int_equal(e->state, state);
  if (reason) {
    assert_non_null(e->reason);
    assert_string_equal(e->reason, reason);
  } else {
    assert_null(e->reason);
  }
}

static void good_plugins_load(void **state) {
  (void)state;
  expect("libfake_good.so", HETC_PLUGIN_STATE_READY, NULL);
  /* A plugin from a newer minor is accepted: only its known prefix is read. */
  expect("libfake_newer_minor.so", HETC_PLUGIN_STATE_READY, NULL);
  /* A plugin of major 1 declines 2.x and is asked again as 1.7. */
  expect("libfake_major1.so", HETC_PLUGIN_STATE_READY, NULL);
  assert_int_equal(find("libfake_major1.so")->plugin->header.abi_major, 1);
  hetc_plugin_entry_t *entry = NULL;
  hetc_status_t status = hetc_registry_target(registry, "fake_good", &entry);
  assert_null(status);
  assert_int_equal(entry->plugin->device_count(entry->instance), 1);
}

static void wrong_major_is_refused(void **state) {
  (void)state;
  char want[128];
  snprintf(want, sizeof(want),
           "the plugin speaks ABI 3.0; this hetc speaks ABI 2.%d and loads plugins of majors 1 and 2",
           HETC_PLUGIN_ABI_MINOR);
  expect("libfake_bad_major.so", HETC_PLUGIN_STATE_REFUSED, want);
}

static void missing_call_is_refused(void **state) {
  (void)state;
  expect("libfake_no_build.so", HETC_PLUGIN_STATE_REFUSED,
         "plugin table of 'fake_nobuild' lacks the required call build");
}

static void missing_symbol_is_refused(void **state) {
  (void)state;
  expect("libfake_no_query.so", HETC_PLUGIN_STATE_REFUSED,
         "no exported symbol hetc_plugin_query (not a hetc plugin)");
}

static void declining_query_is_refused(void **state) {
  (void)state;
  char want[128];
  snprintf(want, sizeof(want), "hetc_plugin_query declined this host (host ABI %d.%d, and as 1.7)",
           HETC_PLUGIN_ABI_MAJOR, HETC_PLUGIN_ABI_MINOR);
  expect("libfake_declines_host.so", HETC_PLUGIN_STATE_REFUSED, want);
}

static void declining_probe_is_unavailable(void **state) {
  (void)state;
  expect("libfake_probe_declines.so", HETC_PLUGIN_STATE_UNAVAILABLE,
         "no FakeAccel device: /dev/fake0 is missing");
  hetc_plugin_entry_t *entry = NULL;
  hetc_status_t status = hetc_registry_target(registry, "fake_probe", &entry);
  assert_int_equal(hetc_status_code(status), HETC_STATUS_UNAVAILABLE);
  assert_string_equal(hetc_status_message(status),
                      "target 'fake_probe' is unavailable: no FakeAccel device: /dev/fake0 is missing");
  hetc_status_free(status);
}

static void short_table_is_refused(void **state) {
  (void)state;
  char want[128];
  snprintf(want, sizeof(want), "plugin table is %zu bytes, ABI 1.0 needs at least %zu",
           sizeof(hetc_plugin_t) - 64, offsetof(hetc_plugin_t, artifact_load) + sizeof(void *));
  expect("libfake_short_table.so", HETC_PLUGIN_STATE_REFUSED, want);
}

static void duplicate_target_is_refused(void **state) {
  (void)state;
  const hetc_plugin_entry_t *first = find("libfake_good.so");
  char want[1024];
  snprintf(want, sizeof(want), "target name 'fake_good' is already served by %s", first->path);
  expect("libfake_zz_duplicate.so", HETC_PLUGIN_STATE_REFUSED, want);
}

/* Checked before dlopen (plugins/common/plugin_elf.c), which would map a
 * damaged file's missing pages and die of SIGBUS. */
static void non_elf_is_refused_before_dlopen(void **state) {
  (void)state;
  const hetc_plugin_entry_t *e = find("not_a_plugin.so");
  assert_int_equal(e->state, HETC_PLUGIN_STATE_REFUSED);
  char want[1024];
  snprintf(want, sizeof(want), "%s: not an ELF file (86 bytes)", e->path);
  assert_string_equal(e->reason, want);
}

static void unknown_target_lists_what_exists(void **state) {
  (void)state;
  hetc_plugin_entry_t *entry = NULL;
  hetc_status_t status = hetc_registry_target(registry, "quantum", &entry);
  assert_int_equal(hetc_status_code(status), HETC_STATUS_NOT_FOUND);
  assert_non_null(strstr(hetc_status_message(status), "no plugin serves target 'quantum' (available: "));
  assert_non_null(strstr(hetc_status_message(status), "fake_good"));
  hetc_status_free(status);
}

static int setup(void **state) {
  (void)state;
  return hetc_registry_open(&registry) ? -1 : 0;
}

static int teardown(void **state) {
  (void)state;
  hetc_registry_free(registry);
  return 0;
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(good_plugins_load),
      cmocka_unit_test(wrong_major_is_refused),
      cmocka_unit_test(missing_symbol_is_refused),
      cmocka_unit_test(missing_call_is_refused),
      cmocka_unit_test(declining_query_is_refused),
      cmocka_unit_test(declining_probe_is_unavailable),
      cmocka_unit_test(short_table_is_refused),
      cmocka_unit_test(duplicate_target_is_refused),
      cmocka_unit_test(non_elf_is_refused_before_dlopen),
      cmocka_unit_test(unknown_target_lists_what_exists),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
