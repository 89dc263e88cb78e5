/* One session of `hetc plugin-check`, in the child process: loads the
 * plugin with a host of the session's ABI version and runs the numbered
 * items (plugin_check.h) in a fixed order, so that a session restarted
 * after a crash skips exactly what its predecessor did. */
#include <stdio.h>

#include "check/check_host.h"
#include "check/check_items.h"

/* An older ABI version: negotiation, then every space and template 0's
 * default kernel of each supported workload (quick suite, one device),
 * with the older host. */
static void older_version_session(session_t *s) {
  if (!hetc_check_item_begin(s, "ABI %u.%u: spaces and default kernels", hetc_abi_level_major(s->level),
                             hetc_abi_level_minor(s->level)))
    return;
  hetc_status_t status = hetc_registry_instance(s->entry);
  if (status) {
    hetc_check_fail_status(s, status, "instance_create");
    hetc_check_item_end(s);
    return;
  }
  const int32_t d = s->options->device >= 0 ? s->options->device : 0;
  if (d >= s->p->device_count(s->entry->instance)) {
    hetc_check_say(s, "SKIP", "no device %d", d);
    hetc_check_item_end(s);
    return;
  }
  int32_t spaces = 0, kernels = 0, count = hetc_check_workload_count(1);
  double max_error = 0;
  for (int32_t w = 0; w < count && !s->failures; ++w) {
    check_workload_t cw;
    hetc_check_workload_at(w, 1, &cw);
    int32_t templates = s->p->template_count(s->entry->instance, d, &cw.workload);
    if (!s->p->supports(s->entry->instance, d, &cw.workload)) continue;
    for (int32_t t = 0; t < templates && !s->failures; ++t) {
      char text[300];
      snprintf(text, sizeof(text), "%s: template %d: template_define_space", cw.label, t);
      spaces += hetc_check_define_space_once(s, d, &cw, t, text);
      if (!s->failures && t == 0) {
        snprintf(text, sizeof(text), "%s: template 0's default config", cw.label);
        kernels += hetc_check_default_kernel(s, d, &cw, t, text, &max_error);
      }
    }
  }
  const char *missing = hetc_check_host_missing_calls_used();
  if (missing[0])
    hetc_check_say(s, "FAIL", "the plugin called %s, which a host of ABI %d.%u lacks: read a host field added after minor 0 "
        "only when HETC_PLUGIN_HAS_FIELD says the host has it", missing, hetc_abi_level_major(s->level),
        hetc_abi_level_minor(s->level));
  if (!s->failures)
    hetc_check_say(s, "PASS", "%d spaces defined and %d default kernels match the reference (max rel error %.2g)", spaces,
        kernels, max_error);
  hetc_check_item_end(s);
  s->p->instance_destroy(s->entry->instance);
  s->entry->instance = NULL;
}

void hetc_plugin_check_session(const char *path, const hetc_plugin_check_options_t *options, uint32_t level,
                               int32_t first_item, int fd) {
  session_t s = {fd, options, level, first_item, 0, NULL, NULL, NULL, 0, ""};
  if (hetc_check_load(&s, path)) {
    /* What the plugin allocated while loading may live as long as it does. */
    int64_t baseline_blocks = hetc_check_host_live_blocks(), baseline_bytes = hetc_check_host_live_bytes();
    if (level < HETC_ABI_LEVEL_NOW) {
      older_version_session(&s);
    } else if (hetc_check_instance(&s)) {
      int32_t devices = s.p->device_count(s.entry->instance);
      for (int32_t d = 0; d < devices; ++d) {
        if (options->device >= 0 && d != options->device) continue;
        hetc_check_descriptor(&s, d);
        hetc_check_buffers(&s, d);
        hetc_check_unknown_op(&s, d);
        int32_t count = hetc_check_workload_count(options->quick);
        for (int32_t w = 0; w < count; ++w) {
          check_workload_t cw;
          hetc_check_workload_at(w, options->quick, &cw);
          hetc_check_workload(&s, d, &cw);
        }
        hetc_check_wrong_calls(&s, d);
      }
      if (options->device >= devices && hetc_check_item_begin(&s, "device %d", options->device)) {
        hetc_check_say(&s, "FAIL", "--device %d: the plugin has %d device%s", options->device, devices, devices == 1 ? "" : "s");
        hetc_check_item_end(&s);
      }
      hetc_check_release(&s, baseline_blocks, baseline_bytes);
    }
  }
  hetc_registry_free(s.registry);
}
