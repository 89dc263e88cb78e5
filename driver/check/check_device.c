/* The plugin-check items about the plugin as a whole and its devices:
 * negotiation and identity, the instance, descriptors, buffers, an op of
 * a later minor, calls with wrong arguments, and what instance_destroy
 * leaves behind. */
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check/check_host.h"
#include "check/check_items.h"
#include "common/fileio.h"
#include "plugins/peaks.h"

/* The descriptor as minor 0 defined it (no minor has grown it since). */
#define DEVICE_MINOR0_SIZE (offsetof(hetc_plugin_device_t, reserved1) + sizeof(int32_t))

/* ------------------------------------------------------------------------ */
/* Loading, identity, devices, buffers                                      */
/* ------------------------------------------------------------------------ */

static int valid_target_name(const char *name) {
  if (!name || !(name[0] >= 'a' && name[0] <= 'z') || strlen(name) > 32) return 0;
  for (const char *c = name; *c; ++c)
    if (!((*c >= 'a' && *c <= 'z') || (*c >= '0' && *c <= '9') || *c == '_')) return 0;
  return 1;
}

/* Negotiation and identity. Returns 0 when the plugin cannot be used. */
int hetc_check_load(session_t *s, const char *path) {
  const uint32_t major = hetc_abi_level_major(s->level), minor = hetc_abi_level_minor(s->level);
  int report = hetc_check_item_begin(s, "ABI %u.%u: load and negotiate", major, minor);
  hetc_status_t status = hetc_registry_open_file(path, hetc_check_host_for_level(s->level), &s->registry);
  if (status) {
    if (report) hetc_check_fail_status(s, status, "loading");
    else hetc_status_free(status);
    if (report) hetc_check_item_end(s);
    return 0;
  }
  s->entry = &s->registry->entries[0];
  s->p = s->entry->plugin;
  /* The descriptor line shows the device's effective peak, as `hetc
   * plugins` does; a plugin under test never writes to the store. */
  hetc_registry_keep_peaks(s->registry, NULL, HETC_PEAKS_READ);
  if (!report) return s->p && s->entry->state == HETC_PLUGIN_STATE_READY;
  if (!s->p) {
    if (s->level < HETC_ABI_LEVEL_NOW && s->entry->reason && strstr(s->entry->reason, "declined this host"))
      hetc_check_say(s, "PASS", "declines a host of ABI %u.%u (it needs a newer one): %s", major, minor,
          s->entry->reason);
    else
      hetc_check_say(s, "FAIL", "refused: %s", s->entry->reason);
    hetc_check_item_end(s);
    return 0;
  }
  if (!valid_target_name(s->p->name))
    hetc_check_say(s, "FAIL", "target name '%s' must be 1 to 32 of [a-z0-9_], starting with a letter (it is typed in --targets)",
        s->p->name);
  if (!s->p->vendor || !s->p->version || !s->p->description)
    hetc_check_say(s, "FAIL", "vendor, version and description must all be set (static strings)");
  if (!s->failures)
    hetc_check_say(s, "PASS", "target '%s' (%s %s, %s) speaks ABI %u.%u with a host of ABI %u.%u", s->p->name,
        s->p->vendor, s->p->version, s->p->description, s->p->header.abi_major, s->p->header.abi_minor,
        major, minor);
  if (s->entry->state != HETC_PLUGIN_STATE_READY) {
    hetc_check_say(s, "SKIP", "probe says the plugin is not usable here: %s; every device check is skipped", s->entry->reason);
    hetc_check_item_end(s);
    return 0;
  }
  hetc_check_item_end(s);
  return 1;
}

int hetc_check_instance(session_t *s) {
  int report = hetc_check_item_begin(s, "instance");
  hetc_status_t status = hetc_registry_instance(s->entry);
  int32_t devices = status ? 0 : s->p->device_count(s->entry->instance);
  if (report) {
    if (status) {
      hetc_check_say(s, "FAIL", "%s", hetc_status_message(status));
    } else if (devices < 1) {
      hetc_check_say(s, "FAIL", "instance_create succeeded but device_count is %d (a plugin with no usable device says why "
          "from probe or instance_create)", devices);
    } else {
      hetc_check_say(s, "PASS", "instance_create gave %d device%s", devices, devices == 1 ? "" : "s");
    }
    hetc_check_item_end(s);
  }
  hetc_status_free(status);
  return !status && devices >= 1;
}

void hetc_check_descriptor(session_t *s, int32_t d) {
  if (!hetc_check_item_begin(s, "device %d: descriptor", d)) return;
  const hetc_plugin_device_t *dev = s->p->device_get(s->entry->instance, d);
  int32_t count = s->p->device_count(s->entry->instance);
  if (s->p->device_get(s->entry->instance, count))
    hetc_check_say(s, "FAIL", "device_get(%d) returned a descriptor; past the last device it must return NULL", count);
  if (!dev) {
    hetc_check_say(s, "FAIL", "device_get(%d) returned NULL", d);
    hetc_check_item_end(s);
    return;
  }
  if (dev->struct_size < DEVICE_MINOR0_SIZE)
    hetc_check_say(s, "FAIL", "struct_size is %u; ABI %d.0's descriptor has %zu bytes", dev->struct_size, HETC_PLUGIN_ABI_MAJOR,
        DEVICE_MINOR0_SIZE);
  if (dev->kind < HETC_PLUGIN_DEVICE_CPU || dev->kind > HETC_PLUGIN_DEVICE_ACCELERATOR)
    hetc_check_say(s, "FAIL", "kind is %d; it must be one of hetc_plugin_device_kind_t (1 cpu, 2 gpu, 3 accelerator)", dev->kind);
  if (!dev->name || !dev->name[0]) hetc_check_say(s, "FAIL", "name is empty");
  if (!dev->fingerprint || !dev->fingerprint[0] || strpbrk(dev->fingerprint, "\n\r\t"))
    hetc_check_say(s, "FAIL", "fingerprint must be a non-empty one-line string (it keys tuning records)");
  if (dev->compute_units < 0) hetc_check_say(s, "FAIL", "compute_units is %d (0 means unknown)", dev->compute_units);
  if (dev->simd_width_fp32 < 0) hetc_check_say(s, "FAIL", "simd_width_fp32 is %d (0 means unknown)", dev->simd_width_fp32);
  if (!(dev->peak_gflops_fp32 >= 0) || isinf(dev->peak_gflops_fp32))
    hetc_check_say(s, "FAIL", "peak_gflops_fp32 is %g; it must be finite and >= 0 (0 means unknown)", dev->peak_gflops_fp32);
  if (!(dev->memory_bandwidth_gbps >= 0) || isinf(dev->memory_bandwidth_gbps))
    hetc_check_say(s, "FAIL", "memory_bandwidth_gbps is %g; it must be finite and >= 0", dev->memory_bandwidth_gbps);
  if (dev->max_threads_per_group < 0 || (dev->kind == HETC_PLUGIN_DEVICE_GPU && dev->max_threads_per_group < 1))
    hetc_check_say(s, "FAIL", "max_threads_per_group is %d (a GPU needs at least 1)", dev->max_threads_per_group);
  if (dev->host_memory != 0 && dev->host_memory != 1) hetc_check_say(s, "FAIL", "host_memory is %d; it must be 0 or 1", dev->host_memory);
  if (dev->host_memory == 1 && !s->p->buffer_host_pointer)
    hetc_check_say(s, "FAIL", "host_memory is 1 but the table has no buffer_host_pointer");
  if (!s->failures) {
    /* The plugin's own figure is what is checked above; the line says the
     * effective one, and this run's where the store keeps a higher one. */
    hetc_device_peak_t peak;
    hetc_device_peak(dev, &peak);
    char kept[96];
    hetc_device_peak_source(&peak, kept, sizeof(kept));
    hetc_check_say(s, "PASS", "%s: %d compute units, SIMD %d, peak %.1f GFLOPS fp32%s, %s memory, fingerprint %s", dev->name,
        dev->compute_units, dev->simd_width_fp32, peak.gflops, kept, dev->host_memory ? "host" : "device",
        dev->fingerprint);
  }
  hetc_check_item_end(s);
}

static int host_memory(session_t *s, int32_t d) {
  const hetc_plugin_device_t *dev = s->p->device_get(s->entry->instance, d);
  return dev && dev->host_memory == 1;
}

/* buffer_view (minor 2, optional): a view at a multiple of 64 reads what
 * its parent holds there, a write through it lands in the parent, and a
 * range past the parent is refused. `a` holds `pattern` but for [1000,
 * 1100), which holds pattern + 3000; [0, 1000) is the pattern. */
static void check_views(session_t *s, hetc_plugin_instance_t *inst, hetc_plugin_buffer_t *a,
                        const unsigned char *pattern) {
  if (!HETC_PLUGIN_HAS_FIELD(s->p, hetc_plugin_t, buffer_view) || !s->p->buffer_view) return;
  hetc_plugin_buffer_t *view = NULL;
  hetc_status_t status = s->p->buffer_view(inst, a, 512, 256, &view);
  if (status) {
    hetc_check_fail_status(s, status, "buffer_view of [512, 768)");
    return;
  }
  unsigned char back[256], mark[64];
  memset(mark, 0xa5, sizeof(mark));
  if ((status = s->p->buffer_read(inst, view, 0, back, sizeof(back)))) hetc_check_fail_status(s, status, "buffer_read of a view");
  else if (memcmp(back, pattern + 512, sizeof(back)))
    hetc_check_say(s, "FAIL", "buffer_view: the view does not read its parent's bytes at its offset");
  if (!s->failures && (status = s->p->buffer_write(inst, view, 64, mark, sizeof(mark))))
    hetc_check_fail_status(s, status, "buffer_write through a view");
  if (!s->failures && (status = s->p->buffer_read(inst, a, 512 + 64, back, sizeof(mark))))
    hetc_check_fail_status(s, status, "buffer_read");
  if (!s->failures && memcmp(back, mark, sizeof(mark)))
    hetc_check_say(s, "FAIL", "buffer_view: a write through the view did not land in its parent");
  if (!s->failures && (status = s->p->buffer_write(inst, a, 512 + 64, pattern + 512 + 64, sizeof(mark))))
    hetc_check_fail_status(s, status, "buffer_write");
  hetc_check_expect_refusal(s, s->p->buffer_read(inst, view, 250, back, 10), "buffer_read past the end of a view");
  s->p->buffer_free(inst, view);
  hetc_plugin_buffer_t *past = NULL;
  status = s->p->buffer_view(inst, a, 4096, 64, &past);
  if (!status) {
    s->p->buffer_free(inst, past);
    hetc_check_say(s, "FAIL", "buffer_view of a range past the end of its parent must be refused");
  }
  hetc_status_free(status);
}

void hetc_check_buffers(session_t *s, int32_t d) {
  if (!hetc_check_item_begin(s, "device %d: buffers", d)) return;
  enum { BYTES = 4109 };
  unsigned char pattern[BYTES], back[BYTES];
  for (int i = 0; i < BYTES; ++i) pattern[i] = (unsigned char)(i * 31 + 7);
  hetc_plugin_instance_t *inst = s->entry->instance;
  hetc_plugin_buffer_t *a = NULL, *b = NULL;
  hetc_status_t status = s->p->buffer_alloc(inst, d, BYTES, &a);
  if (!status) status = s->p->buffer_alloc(inst, d, BYTES, &b);
  if (status) {
    hetc_check_fail_status(s, status, "buffer_alloc");
  } else {
    if ((status = s->p->buffer_write(inst, a, 0, pattern, BYTES))) hetc_check_fail_status(s, status, "buffer_write");
    memset(back, 0, BYTES);
    if (!s->failures && (status = s->p->buffer_read(inst, a, 0, back, BYTES))) hetc_check_fail_status(s, status, "buffer_read");
    if (!s->failures && memcmp(back, pattern, BYTES)) hetc_check_say(s, "FAIL", "buffer_read did not return what buffer_write wrote");
    /* Offsets: 100 bytes written at 1000 land there and nowhere else. */
    if (!s->failures && (status = s->p->buffer_write(inst, a, 1000, pattern + 3000, 100)))
      hetc_check_fail_status(s, status, "buffer_write at an offset");
    if (!s->failures && (status = s->p->buffer_read(inst, a, 900, back, 300)))
      hetc_check_fail_status(s, status, "buffer_read at an offset");
    if (!s->failures && (memcmp(back, pattern + 900, 100) || memcmp(back + 100, pattern + 3000, 100) ||
                         memcmp(back + 200, pattern + 1100, 100)))
      hetc_check_say(s, "FAIL", "buffer_write/buffer_read at offsets moved the wrong bytes");
    if (!s->failures && s->p->buffer_copy) {
      if ((status = s->p->buffer_copy(inst, b, 10, a, 20, 2000))) hetc_check_fail_status(s, status, "buffer_copy");
      if (!s->failures && (status = s->p->buffer_read(inst, b, 10, back, 2000))) hetc_check_fail_status(s, status, "buffer_read");
      /* a holds the pattern with [1000, 1100) overwritten from 3000. */
      unsigned char want[2000];
      memcpy(want, pattern + 20, sizeof(want));
      memcpy(want + 980, pattern + 3000, 100);
      if (!s->failures && memcmp(back, want, sizeof(want))) hetc_check_say(s, "FAIL", "buffer_copy copied the wrong bytes");
    }
    void *host = s->p->buffer_host_pointer ? s->p->buffer_host_pointer(inst, a) : NULL;
    if (host_memory(s, d) && (!host || memcmp(host, pattern, 900)))
      hetc_check_say(s, "FAIL", "host_memory device: buffer_host_pointer must give the buffer's contents");
    if (!host_memory(s, d) && host) hetc_check_say(s, "FAIL", "buffer_host_pointer must return NULL on a device without host memory");
    if (!s->failures) check_views(s, inst, a, pattern);
    hetc_check_expect_refusal(s, s->p->buffer_read(inst, a, BYTES - 10, back, 20), "buffer_read past the end of a buffer");
    hetc_check_expect_refusal(s, s->p->buffer_write(inst, a, BYTES + 1, pattern, 1), "buffer_write past the end of a buffer");
  }
  if (a) s->p->buffer_free(inst, a);
  if (b) s->p->buffer_free(inst, b);
  if (!s->failures)
    hetc_check_say(s, "PASS", "alloc, write, read, offsets%s%s%s, out-of-range access refused",
        s->p->buffer_copy ? ", device-to-device copy" : "", host_memory(s, d) ? ", host pointer" : "",
        HETC_PLUGIN_HAS_FIELD(s->p, hetc_plugin_t, buffer_view) && s->p->buffer_view ? ", views" : "");
  hetc_check_item_end(s);
}

/* An op from a later minor (the first value this one does not define):
 * a plugin must say it does not support it rather than index a table. */
void hetc_check_unknown_op(session_t *s, int32_t d) {
  if (!hetc_check_item_begin(s, "device %d: an op of a later ABI minor", d)) return;
  check_workload_t cw;
  hetc_check_workload_at(0, 1, &cw);
  cw.workload.op = HETC_PLUGIN_OP_COUNT_;
  if (s->p->supports(s->entry->instance, d, &cw.workload))
    hetc_check_say(s, "FAIL", "supports() says 1 for op %d, which this ABI does not define", HETC_PLUGIN_OP_COUNT_);
  int32_t templates = s->p->template_count(s->entry->instance, d, &cw.workload);
  if (templates != 0) hetc_check_say(s, "FAIL", "template_count() is %d for op %d, which this ABI does not define", templates,
                          HETC_PLUGIN_OP_COUNT_);
  if (!s->failures) hetc_check_say(s, "PASS", "op %d is not supported, and no template is offered", HETC_PLUGIN_OP_COUNT_);
  hetc_check_item_end(s);
}

/* ------------------------------------------------------------------------ */
/* Calls with wrong arguments                                               */
/* ------------------------------------------------------------------------ */

void hetc_check_wrong_calls(session_t *s, int32_t d) {
  if (!hetc_check_item_begin(s, "device %d: calls with wrong arguments", d)) return;
  hetc_plugin_instance_t *inst = s->entry->instance;
  check_workload_t cw;
  int32_t count = hetc_check_workload_count(1), w = 0;
  for (; w < count; ++w) {
    hetc_check_workload_at(w, 1, &cw);
    if (s->p->supports(inst, d, &cw.workload) && s->p->template_count(inst, d, &cw.workload) > 0) break;
  }
  if (w == count) {
    hetc_check_say(s, "SKIP", "the device supports none of the check's workloads");
    hetc_check_item_end(s);
    return;
  }
  int32_t templates = s->p->template_count(inst, d, &cw.workload);
  hetc_plugin_artifact_t *artifact = NULL;
  hetc_check_step(s, "build with a template index one past template_count(), on %s", cw.label);
  hetc_status_t status = s->p->build(inst, d, &cw.workload, templates, NULL, &artifact);
  if (!status && artifact) s->p->artifact_release(inst, artifact);
  hetc_check_expect_refusal(s, status, "build with a template index one past template_count()");
  artifact = NULL;
  hetc_check_step(s, "build of template 0's default config, on %s", cw.label);
  status = s->p->build(inst, d, &cw.workload, 0, NULL, &artifact);
  if (status) {
    hetc_check_fail_status(s, status, "build of template 0's default config");
    hetc_check_item_end(s);
    return;
  }
  const hetc_plugin_artifact_info_t *info = s->p->artifact_info(artifact);
  /* pack_param with a wrong count and a param index past the last. */
  if (info && info->num_params > 0) {
    float values[64] = {0};
    void *packed = malloc(info->param_bytes[0] + 64);
    if (packed) {
      hetc_check_step(s, "pack_param with a wrong element count, on %s", cw.label);
      hetc_check_expect_refusal(s, s->p->pack_param(artifact, 0, values, 1, packed), "pack_param with a wrong element count");
      hetc_check_step(s, "pack_param with a param index past the last, on %s", cw.label);
      hetc_check_expect_refusal(s, s->p->pack_param(artifact, info->num_params, values, 1, packed),
                     "pack_param with a param index past the last");
    }
    free(packed);
  }
  /* run with the output missing: every buffer the right size, one short. */
  hetc_plugin_buffer_t *args[CHECK_WORKLOAD_MAX_INPUTS + 8] = {0};
  int32_t nargs = 0;
  status = NULL;
  for (int32_t i = 0; info && !status && i < info->num_inputs; ++i)
    status = s->p->buffer_alloc(inst, d, 1 << 16, &args[nargs++]);
  for (int32_t k = 0; info && !status && k < info->num_params; ++k)
    status = s->p->buffer_alloc(inst, d, info->param_bytes[k] + 64, &args[nargs++]);
  if (info && !status && nargs > 0) hetc_check_step(s, "run without the output argument, on %s", cw.label);
  if (info && !status && nargs > 0) hetc_check_expect_refusal(s, s->p->run(inst, artifact, args, nargs), "run without the output argument");
  hetc_status_free(status);
  for (int32_t a = 0; a < nargs; ++a)
    if (args[a]) s->p->buffer_free(inst, args[a]);
  s->p->artifact_release(inst, artifact);
  /* artifact_load from a folder that holds nothing. */
  char dir[] = "/tmp/hetc-plugin-check-XXXXXX";
  if (mkdtemp(dir)) {
    artifact = NULL;
    hetc_check_step(s, "artifact_load from an empty folder, on %s", cw.label);
    status = s->p->artifact_load(inst, d, &cw.workload, 0, NULL, dir, "k0", &artifact);
    if (!status && artifact) s->p->artifact_release(inst, artifact);
    hetc_check_expect_refusal(s, status, "artifact_load from an empty folder");
    hetc_dir_remove_tree(dir);
  }
  if (!s->failures)
    hetc_check_say(s, "PASS", "%s: a template index past the last, wrong pack_param arguments, a run "
        "without its output and a load from an empty folder are all refused", cw.label);
  hetc_check_item_end(s);
}

void hetc_check_release(session_t *s, int64_t baseline_blocks, int64_t baseline_bytes) {
  if (!hetc_check_item_begin(s, "release")) {
    s->p->instance_destroy(s->entry->instance);
    s->entry->instance = NULL;
    return;
  }
  s->p->instance_destroy(s->entry->instance);
  s->entry->instance = NULL;
  int64_t blocks = hetc_check_host_live_blocks() - baseline_blocks;
  int64_t bytes = hetc_check_host_live_bytes() - baseline_bytes;
  if (blocks > 0)
    hetc_check_say(s, "FAIL", "%lld block%s (%lld bytes) allocated with host->alloc %s still live after instance_destroy",
        (long long)blocks, blocks == 1 ? "" : "s", (long long)bytes, blocks == 1 ? "is" : "are");
  else
    hetc_check_say(s, "PASS", "instance_destroy freed every block allocated with host->alloc (under ASan or valgrind, the "
        "process's own leak check covers malloc too)");
  hetc_check_item_end(s);
}
