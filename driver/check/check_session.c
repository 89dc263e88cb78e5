/* One session of `hetc plugin-check`, in the child process: loads the
 * plugin with a host of the session's ABI minor and runs the numbered
 * items (plugin_check.h). Item numbers follow a fixed order, so a session
 * restarted after a crash skips exactly what its predecessor did. */
#include <math.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check/check_host.h"
#include "check/check_workloads.h"
#include "check/kernel_check.h"
#include "check/plugin_check.h"
#include "common/fileio.h"
#include "plugins/registry.h"
#include "space/space.h"

#define TOLERANCE 1e-4
/* The descriptor as minor 0 defined it (no minor has grown it since). */
#define DEVICE_MINOR0_SIZE (offsetof(hetc_plugin_device_t, reserved1) + sizeof(int32_t))
/* Driver-owned feature indices are filled with this before features() is
 * called; a plugin that writes one of them is caught. */
#define FEATURE_CANARY (-7777.0f)

typedef struct session_t {
  int fd;
  const hetc_plugin_check_options_t *options;
  uint32_t minor;
  int32_t first_item, item;
  hetc_registry_t *registry;
  hetc_plugin_entry_t *entry;
  const hetc_plugin_t *p;
  int32_t failures; /* in the current item */
  char label[512];
} session_t;

static void send_line(session_t *s, const char *text) {
  size_t length = strlen(text), done = 0;
  while (done < length) {
    ssize_t n = write(s->fd, text + done, length - done);
    if (n <= 0) return;
    done += (size_t)n;
  }
}

/* Begins item number s->item (then counts it). Returns 0, without
 * reporting, for items a previous session already did. */
static int item_begin(session_t *s, const char *format, ...) HETC_PLUGIN_PRINTF(2, 3);
static int item_begin(session_t *s, const char *format, ...) {
  int32_t item = s->item++;
  if (item < s->first_item) return 0;
  va_list args;
  va_start(args, format);
  vsnprintf(s->label, sizeof(s->label), format, args);
  va_end(args);
  char line[600];
  snprintf(line, sizeof(line), "B %d\t%s\n", item, s->label);
  send_line(s, line);
  s->failures = 0;
  alarm((unsigned)s->options->item_timeout_s);
  return 1;
}

static void item_end(session_t *s) {
  alarm(0);
  char line[32];
  snprintf(line, sizeof(line), "E %d\n", s->item - 1);
  send_line(s, line);
}

static void say(session_t *s, const char *kind, const char *format, ...) HETC_PLUGIN_PRINTF(3, 4);
static void say(session_t *s, const char *kind, const char *format, ...) {
  char text[4096];
  va_list args;
  va_start(args, format);
  vsnprintf(text, sizeof(text), format, args);
  va_end(args);
  for (char *c = text; *c; ++c)
    if (*c == '\n') *c = '\x1e';
  char line[4200];
  snprintf(line, sizeof(line), "R %s\t%s\n", kind, text);
  send_line(s, line);
  if (!strcmp(kind, "FAIL")) ++s->failures;
}

/* Reports a plugin status as a failure of `what`, and frees it. */
static void fail_status(session_t *s, hetc_status_t status, const char *what) {
  say(s, "FAIL", "%s failed (%s): %s", what, hetc_status_code_name(hetc_status_code(status)),
      hetc_status_message(status));
  hetc_status_free(status);
}

/* A call that must refuse: `status` NULL means it accepted. */
static void expect_refusal(session_t *s, hetc_status_t status, const char *what) {
  if (!status) {
    say(s, "FAIL", "%s was accepted; it must be refused with a status and a message", what);
  } else {
    const char *message = hetc_status_message(status);
    if (!message || !message[0]) say(s, "FAIL", "%s was refused with an empty message", what);
    hetc_status_free(status);
  }
}

static void describe_config(const hetc_plugin_config_t *config, char *out, size_t size) {
  size_t used = (size_t)snprintf(out, size, "{");
  for (int32_t k = 0; config && k < config->num_knobs && used < size; ++k) {
    const hetc_plugin_knob_value_t *knob = &config->knobs[k];
    used += (size_t)snprintf(out + used, size - used, "%s%s=", k ? ", " : "", knob->name);
    for (int32_t v = 0; v < knob->count && used < size; ++v)
      used += (size_t)snprintf(out + used, size - used, "%s%lld", v ? "," : (knob->count > 1 ? "[" : ""),
                               (long long)knob->values[v]);
    if (knob->count > 1 && used < size) used += (size_t)snprintf(out + used, size - used, "]");
  }
  if (used < size) snprintf(out + used, size - used, "}");
}

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
static int check_load(session_t *s, const char *path) {
  int report = item_begin(s, "ABI %d.%u: load and negotiate", HETC_PLUGIN_ABI_MAJOR, s->minor);
  hetc_status_t status = hetc_registry_open_file(path, check_host_for_minor(s->minor), &s->registry);
  if (status) {
    if (report) fail_status(s, status, "loading");
    else hetc_status_free(status);
    if (report) item_end(s);
    return 0;
  }
  s->entry = &s->registry->entries[0];
  s->p = s->entry->plugin;
  if (!report) return s->p && s->entry->state == HETC_PLUGIN_STATE_READY;
  if (!s->p) {
    if (s->minor < HETC_PLUGIN_ABI_MINOR && s->entry->reason && strstr(s->entry->reason, "declined this host"))
      say(s, "PASS", "declines a host of ABI %d.%u (it needs a newer one): %s", HETC_PLUGIN_ABI_MAJOR, s->minor,
          s->entry->reason);
    else
      say(s, "FAIL", "refused: %s", s->entry->reason);
    item_end(s);
    return 0;
  }
  if (!valid_target_name(s->p->name))
    say(s, "FAIL", "target name '%s' must be 1 to 32 of [a-z0-9_], starting with a letter (it is typed in --targets)",
        s->p->name);
  if (!s->p->vendor || !s->p->version || !s->p->description)
    say(s, "FAIL", "vendor, version and description must all be set (static strings)");
  if (!s->failures)
    say(s, "PASS", "target '%s' (%s %s, %s) speaks ABI %u.%u with a host of ABI %d.%u", s->p->name,
        s->p->vendor, s->p->version, s->p->description, s->p->header.abi_major, s->p->header.abi_minor,
        HETC_PLUGIN_ABI_MAJOR, s->minor);
  if (s->entry->state != HETC_PLUGIN_STATE_READY) {
    say(s, "SKIP", "probe says the plugin is not usable here: %s; every device check is skipped", s->entry->reason);
    item_end(s);
    return 0;
  }
  item_end(s);
  return 1;
}

static int check_instance(session_t *s) {
  int report = item_begin(s, "instance");
  hetc_status_t status = hetc_registry_instance(s->entry);
  int32_t devices = status ? 0 : s->p->device_count(s->entry->instance);
  if (report) {
    if (status) {
      say(s, "FAIL", "%s", hetc_status_message(status));
    } else if (devices < 1) {
      say(s, "FAIL", "instance_create succeeded but device_count is %d (a plugin with no usable device says why "
          "from probe or instance_create)", devices);
    } else {
      say(s, "PASS", "instance_create gave %d device%s", devices, devices == 1 ? "" : "s");
    }
    item_end(s);
  }
  hetc_status_free(status);
  return !status && devices >= 1;
}

static void check_descriptor(session_t *s, int32_t d) {
  if (!item_begin(s, "device %d: descriptor", d)) return;
  const hetc_plugin_device_t *dev = s->p->device_get(s->entry->instance, d);
  int32_t count = s->p->device_count(s->entry->instance);
  if (s->p->device_get(s->entry->instance, count))
    say(s, "FAIL", "device_get(%d) returned a descriptor; past the last device it must return NULL", count);
  if (!dev) {
    say(s, "FAIL", "device_get(%d) returned NULL", d);
    item_end(s);
    return;
  }
  if (dev->struct_size < DEVICE_MINOR0_SIZE)
    say(s, "FAIL", "struct_size is %u; ABI %d.0's descriptor has %zu bytes", dev->struct_size, HETC_PLUGIN_ABI_MAJOR,
        DEVICE_MINOR0_SIZE);
  if (dev->kind < HETC_PLUGIN_DEVICE_CPU || dev->kind > HETC_PLUGIN_DEVICE_ACCELERATOR)
    say(s, "FAIL", "kind is %d; it must be one of hetc_plugin_device_kind_t (1 cpu, 2 gpu, 3 accelerator)", dev->kind);
  if (!dev->name || !dev->name[0]) say(s, "FAIL", "name is empty");
  if (!dev->fingerprint || !dev->fingerprint[0] || strpbrk(dev->fingerprint, "\n\r\t"))
    say(s, "FAIL", "fingerprint must be a non-empty one-line string (it keys tuning records)");
  if (dev->compute_units < 0) say(s, "FAIL", "compute_units is %d (0 means unknown)", dev->compute_units);
  if (dev->simd_width_fp32 < 0) say(s, "FAIL", "simd_width_fp32 is %d (0 means unknown)", dev->simd_width_fp32);
  if (!(dev->peak_gflops_fp32 >= 0) || isinf(dev->peak_gflops_fp32))
    say(s, "FAIL", "peak_gflops_fp32 is %g; it must be finite and >= 0 (0 means unknown)", dev->peak_gflops_fp32);
  if (!(dev->memory_bandwidth_gbps >= 0) || isinf(dev->memory_bandwidth_gbps))
    say(s, "FAIL", "memory_bandwidth_gbps is %g; it must be finite and >= 0", dev->memory_bandwidth_gbps);
  if (dev->max_threads_per_group < 0 || (dev->kind == HETC_PLUGIN_DEVICE_GPU && dev->max_threads_per_group < 1))
    say(s, "FAIL", "max_threads_per_group is %d (a GPU needs at least 1)", dev->max_threads_per_group);
  if (dev->host_memory != 0 && dev->host_memory != 1) say(s, "FAIL", "host_memory is %d; it must be 0 or 1", dev->host_memory);
  if (dev->host_memory == 1 && !s->p->buffer_host_pointer)
    say(s, "FAIL", "host_memory is 1 but the table has no buffer_host_pointer");
  if (!s->failures)
    say(s, "PASS", "%s: %d compute units, SIMD %d, peak %.1f GFLOPS fp32, %s memory, fingerprint %s", dev->name,
        dev->compute_units, dev->simd_width_fp32, dev->peak_gflops_fp32, dev->host_memory ? "host" : "device",
        dev->fingerprint);
  item_end(s);
}

static int host_memory(session_t *s, int32_t d) {
  const hetc_plugin_device_t *dev = s->p->device_get(s->entry->instance, d);
  return dev && dev->host_memory == 1;
}

static void check_buffers(session_t *s, int32_t d) {
  if (!item_begin(s, "device %d: buffers", d)) return;
  enum { BYTES = 4109 };
  unsigned char pattern[BYTES], back[BYTES];
  for (int i = 0; i < BYTES; ++i) pattern[i] = (unsigned char)(i * 31 + 7);
  hetc_plugin_instance_t *inst = s->entry->instance;
  hetc_plugin_buffer_t *a = NULL, *b = NULL;
  hetc_status_t status = s->p->buffer_alloc(inst, d, BYTES, &a);
  if (!status) status = s->p->buffer_alloc(inst, d, BYTES, &b);
  if (status) {
    fail_status(s, status, "buffer_alloc");
  } else {
    if ((status = s->p->buffer_write(inst, a, 0, pattern, BYTES))) fail_status(s, status, "buffer_write");
    memset(back, 0, BYTES);
    if (!s->failures && (status = s->p->buffer_read(inst, a, 0, back, BYTES))) fail_status(s, status, "buffer_read");
    if (!s->failures && memcmp(back, pattern, BYTES)) say(s, "FAIL", "buffer_read did not return what buffer_write wrote");
    /* Offsets: 100 bytes written at 1000 land there and nowhere else. */
    if (!s->failures && (status = s->p->buffer_write(inst, a, 1000, pattern + 3000, 100)))
      fail_status(s, status, "buffer_write at an offset");
    if (!s->failures && (status = s->p->buffer_read(inst, a, 900, back, 300)))
      fail_status(s, status, "buffer_read at an offset");
    if (!s->failures && (memcmp(back, pattern + 900, 100) || memcmp(back + 100, pattern + 3000, 100) ||
                         memcmp(back + 200, pattern + 1100, 100)))
      say(s, "FAIL", "buffer_write/buffer_read at offsets moved the wrong bytes");
    if (!s->failures && s->p->buffer_copy) {
      if ((status = s->p->buffer_copy(inst, b, 10, a, 20, 2000))) fail_status(s, status, "buffer_copy");
      if (!s->failures && (status = s->p->buffer_read(inst, b, 10, back, 2000))) fail_status(s, status, "buffer_read");
      /* a holds the pattern with [1000, 1100) overwritten from 3000. */
      unsigned char want[2000];
      memcpy(want, pattern + 20, sizeof(want));
      memcpy(want + 980, pattern + 3000, 100);
      if (!s->failures && memcmp(back, want, sizeof(want))) say(s, "FAIL", "buffer_copy copied the wrong bytes");
    }
    void *host = s->p->buffer_host_pointer ? s->p->buffer_host_pointer(inst, a) : NULL;
    if (host_memory(s, d) && (!host || memcmp(host, pattern, 900)))
      say(s, "FAIL", "host_memory device: buffer_host_pointer must give the buffer's contents");
    if (!host_memory(s, d) && host) say(s, "FAIL", "buffer_host_pointer must return NULL on a device without host memory");
    expect_refusal(s, s->p->buffer_read(inst, a, BYTES - 10, back, 20), "buffer_read past the end of a buffer");
    expect_refusal(s, s->p->buffer_write(inst, a, BYTES + 1, pattern, 1), "buffer_write past the end of a buffer");
  }
  if (a) s->p->buffer_free(inst, a);
  if (b) s->p->buffer_free(inst, b);
  if (!s->failures)
    say(s, "PASS", "alloc, write, read, offsets%s%s, out-of-range access refused",
        s->p->buffer_copy ? ", device-to-device copy" : "", host_memory(s, d) ? ", host pointer" : "");
  item_end(s);
}

/* An op from a later minor (the first value this one does not define):
 * a plugin must say it does not support it rather than index a table. */
static void check_unknown_op(session_t *s, int32_t d) {
  if (!item_begin(s, "device %d: an op of a later ABI minor", d)) return;
  check_workload_t cw;
  check_workload_at(0, 1, &cw);
  cw.workload.op = HETC_PLUGIN_OP_COUNT_;
  if (s->p->supports(s->entry->instance, d, &cw.workload))
    say(s, "FAIL", "supports() says 1 for op %d, which this ABI does not define", HETC_PLUGIN_OP_COUNT_);
  int32_t templates = s->p->template_count(s->entry->instance, d, &cw.workload);
  if (templates != 0) say(s, "FAIL", "template_count() is %d for op %d, which this ABI does not define", templates,
                          HETC_PLUGIN_OP_COUNT_);
  if (!s->failures) say(s, "PASS", "op %d is not supported, and no template is offered", HETC_PLUGIN_OP_COUNT_);
  item_end(s);
}

/* ------------------------------------------------------------------------ */
/* Templates                                                                */
/* ------------------------------------------------------------------------ */

typedef struct template_ctx_t {
  session_t *s;
  int32_t d;
  const check_workload_t *cw;
  int32_t t;
  const char *name;
} template_ctx_t;

static hetc_status_t define(const template_ctx_t *c, hetc_plugin_space_t **out_space) {
  HETC_RETURN_IF_ERROR(hetc_space_create(out_space));
  return c->s->p->template_define_space(c->s->entry->instance, c->d, &c->cw->workload, c->t, *out_space);
}

#define DEPEND_ONLY "(template_define_space must depend only on the device and the workload)"

/* The same space twice: same knobs, candidates, constraints and default. */
static void compare_spaces(const template_ctx_t *c, const hetc_plugin_space_t *a, const hetc_plugin_space_t *b) {
  int64_t da = -1, db = -1;
  hetc_status_free(hetc_space_default(a, &da));
  hetc_status_free(hetc_space_default(b, &db));
  if (hetc_space_knob_count(a) != hetc_space_knob_count(b) || hetc_space_size(a) != hetc_space_size(b) ||
      hetc_space_constraint_count(a) != hetc_space_constraint_count(b) || da != db) {
    say(c->s, "FAIL",
        "the space is not the same when defined twice: %d knobs, %lld points, %d constraints, default #%lld; "
        "then %d knobs, %lld points, %d constraints, default #%lld " DEPEND_ONLY,
        hetc_space_knob_count(a), (long long)hetc_space_size(a), hetc_space_constraint_count(a), (long long)da,
        hetc_space_knob_count(b), (long long)hetc_space_size(b), hetc_space_constraint_count(b), (long long)db);
    return;
  }
  for (int32_t k = 0; k < hetc_space_knob_count(a); ++k) {
    int same = !strcmp(hetc_space_knob_name(a, k), hetc_space_knob_name(b, k)) &&
               hetc_space_knob_kind(a, k) == hetc_space_knob_kind(b, k) &&
               hetc_space_knob_size(a, k) == hetc_space_knob_size(b, k) &&
               hetc_space_knob_width(a, k) == hetc_space_knob_width(b, k);
    for (int64_t choice = 0; same && choice < hetc_space_knob_size(a, k); ++choice)
      same = !memcmp(hetc_space_knob_values(a, k, choice), hetc_space_knob_values(b, k, choice),
                     sizeof(int64_t) * (size_t)hetc_space_knob_width(a, k));
    if (!same) {
      say(c->s, "FAIL",
          "the space is not the same when defined twice: knob %d is '%s' (%s) with %lld candidates, then '%s' (%s) "
          "with %lld%s " DEPEND_ONLY,
          k, hetc_space_knob_name(a, k), hetc_knob_kind_name(hetc_space_knob_kind(a, k)),
          (long long)hetc_space_knob_size(a, k), hetc_space_knob_name(b, k),
          hetc_knob_kind_name(hetc_space_knob_kind(b, k)), (long long)hetc_space_knob_size(b, k),
          hetc_space_knob_size(a, k) == hetc_space_knob_size(b, k) ? " of other values" : "");
      return;
    }
  }
}

/* Round trips of one point: config -> index, valid rank -> point, and the
 * constraints answering the same twice. */
static int round_trip(const template_ctx_t *c, const hetc_plugin_space_t *space, int64_t index) {
  hetc_space_config_t config;
  int64_t back = -1, rank = -1, again = -1;
  hetc_status_t status = hetc_space_config_at(space, index, &config);
  if (!status) status = hetc_space_index_of(space, &config.view, &back);
  if (!status && back == index) status = hetc_space_valid_rank(space, index, &rank);
  if (!status && back == index) status = hetc_space_valid_at(space, rank, &again);
  if (status) {
    fail_status(c->s, status, "a round trip through the space");
    return 0;
  }
  int first = hetc_space_is_valid(space, index), second = hetc_space_is_valid(space, index);
  if (back != index || again != index || !first || first != second) {
    char text[512];
    describe_config(&config.view, text, sizeof(text));
    say(c->s, "FAIL", "config #%lld %s does not round-trip: its index comes back as #%lld, its valid rank as #%lld, "
        "and the constraints answer %d then %d (constraints must be pure functions of the knobs they name)",
        (long long)index, text, (long long)back, (long long)again, first, second);
    return 0;
  }
  return 1;
}

/* features() on one config: allowed to be UNSUPPORTED; otherwise it writes
 * only the plugin's indices, no infinities, the same values twice. Returns
 * 1 when the template has features. */
static int check_features(const template_ctx_t *c, const hetc_plugin_config_t *config, const char *text) {
  const hetc_plugin_t *p = c->s->p;
  if (p->header.abi_minor < 1 || !HETC_PLUGIN_HAS_FIELD(p, hetc_plugin_t, features) || !p->features) return 0;
  float first[HETC_FEATURE_COUNT], second[HETC_FEATURE_COUNT];
  float *rows[2] = {first, second};
  int32_t counts[2] = {0, 0};
  for (int r = 0; r < 2; ++r) {
    for (int32_t i = 0; i < HETC_FEATURE_COUNT; ++i) rows[r][i] = i < HETC_FEATURE_PLUGIN_END ? NAN : FEATURE_CANARY;
    hetc_status_t status = p->features(c->s->entry->instance, c->d, &c->cw->workload, c->t, config, rows[r],
                                       HETC_FEATURE_COUNT, &counts[r]);
    if (status && hetc_status_code(status) == HETC_STATUS_UNSUPPORTED) {
      hetc_status_free(status);
      return 0;
    }
    if (status) {
      char what[600];
      snprintf(what, sizeof(what), "features() for %s", text);
      fail_status(c->s, status, what);
      return 1;
    }
  }
  if (counts[0] < 1 || counts[0] > HETC_FEATURE_COUNT)
    say(c->s, "FAIL", "features() for %s set *out_count to %d; it must be min(capacity %d, its HETC_FEATURE_COUNT)",
        text, counts[0], HETC_FEATURE_COUNT);
  for (int32_t i = 0; i < HETC_FEATURE_COUNT; ++i) {
    if (i >= HETC_FEATURE_PLUGIN_END && first[i] != FEATURE_CANARY) {
      say(c->s, "FAIL", "features() for %s wrote index %d, which the driver owns (a plugin writes only [0, %d))", text,
          i, HETC_FEATURE_PLUGIN_END);
      return 1;
    }
    if (isinf(first[i])) {
      say(c->s, "FAIL", "features() for %s wrote an infinity at index %d (NaN is the missing value)", text, i);
      return 1;
    }
    if (memcmp(&first[i], &second[i], sizeof(float))) {
      say(c->s, "FAIL", "features() for %s is not deterministic: index %d was %g, then %g", text, i, first[i],
          second[i]);
      return 1;
    }
  }
  return 1;
}

/* Builds and checks one config against the reference. Returns 1 when it
 * matched, 0 when the template refused it for device limits, -1 on a
 * failure (reported). *out_artifact (optional) keeps the artifact. */
static int check_kernel(const template_ctx_t *c, const hetc_plugin_config_t *config, const char *text,
                        int is_default, double *max_error, hetc_plugin_artifact_t **out_artifact) {
  session_t *s = c->s;
  hetc_plugin_artifact_t *artifact = NULL;
  hetc_status_t status = s->p->build(s->entry->instance, c->d, &c->cw->workload, c->t, config, &artifact);
  if (!status && !artifact) {
    say(s, "FAIL", "build of %s returned success without an artifact", text);
    return -1;
  }
  if (status) {
    if (!is_default && hetc_status_code(status) == HETC_STATUS_DEVICE_LIMITS) {
      hetc_status_free(status);
      return 0;
    }
    char what[600];
    snprintf(what, sizeof(what), "build of %s%s", is_default ? "the default config " : "config ", text);
    fail_status(s, status, what);
    return -1;
  }
  /* The default is timed too: time() must give positive, finite samples. */
  kernel_check_result_t result;
  status = kernel_check_artifact(s->entry, c->d, &c->cw->workload, c->t, artifact, 7 + (uint64_t)c->t,
                                 is_default ? 3 : 0, &result);
  int outcome = 1;
  if (status) {
    char what[600];
    snprintf(what, sizeof(what), "running %s%s", is_default ? "and timing " : "", text);
    fail_status(s, status, what);
    outcome = -1;
  } else if (is_default && !(result.seconds > 0 && result.seconds < 1e6)) {
    say(s, "FAIL", "time() of %s gave a median of %g s; samples must be positive and finite", text, result.seconds);
    outcome = -1;
  } else if (!(result.max_relative_error <= TOLERANCE)) {
    say(s, "FAIL", "%s: max relative error %.3g against the reference executor (tolerance %g)", text,
        result.max_relative_error, TOLERANCE);
    outcome = -1;
  } else if (result.max_relative_error > *max_error) {
    *max_error = result.max_relative_error;
  }
  if (out_artifact && outcome == 1)
    *out_artifact = artifact;
  else
    s->p->artifact_release(s->entry->instance, artifact);
  return outcome;
}

/* artifact_emit into a fresh folder, artifact_load from it, and the loaded
 * artifact against the reference. */
static void check_emit_load(const template_ctx_t *c, const hetc_plugin_config_t *config,
                            const hetc_plugin_artifact_t *artifact, double *max_error) {
  session_t *s = c->s;
  char dir[] = "/tmp/hetc-plugin-check-XXXXXX";
  if (!mkdtemp(dir)) {
    say(s, "FAIL", "cannot create a temporary folder for artifact_emit");
    return;
  }
  hetc_status_t status = s->p->artifact_emit(s->entry->instance, artifact, dir, "k0");
  if (status) {
    fail_status(s, status, "artifact_emit of the default config");
  } else {
    hetc_plugin_artifact_t *loaded = NULL;
    status = s->p->artifact_load(s->entry->instance, c->d, &c->cw->workload, c->t, config, dir, "k0", &loaded);
    if (status) {
      fail_status(s, status, "artifact_load of what artifact_emit wrote");
    } else if (!loaded) {
      say(s, "FAIL", "artifact_load returned success without an artifact");
    } else {
      kernel_check_result_t result;
      status = kernel_check_artifact(s->entry, c->d, &c->cw->workload, c->t, loaded, 11, 0, &result);
      if (status)
        fail_status(s, status, "running the loaded artifact");
      else if (!(result.max_relative_error <= TOLERANCE))
        say(s, "FAIL", "the artifact loaded from artifact_emit's files: max relative error %.3g (tolerance %g)",
            result.max_relative_error, TOLERANCE);
      else if (result.max_relative_error > *max_error)
        *max_error = result.max_relative_error;
      s->p->artifact_release(s->entry->instance, loaded);
    }
  }
  hetc_dir_remove_tree(dir);
}

/* Configs no space offers: build must refuse them, with a message. */
static int check_invalid_configs(const template_ctx_t *c, const hetc_plugin_space_t *space,
                                 const hetc_plugin_config_t *default_config) {
  session_t *s = c->s;
  if (hetc_space_knob_count(space) == 0) return 0;
  hetc_plugin_artifact_t *artifact = NULL;
  hetc_plugin_config_t empty = {0, NULL};
  char what[256];
  hetc_status_t status = s->p->build(s->entry->instance, c->d, &c->cw->workload, c->t, &empty, &artifact);
  snprintf(what, sizeof(what), "build with a config that has none of the space's knobs");
  if (!status && artifact) s->p->artifact_release(s->entry->instance, artifact);
  expect_refusal(s, status, what);

  /* The default with its first knob's values all -1. */
  hetc_plugin_knob_value_t knobs[HETC_SPACE_MAX_KNOBS];
  int64_t negative[64];
  for (int i = 0; i < 64; ++i) negative[i] = -1;
  memcpy(knobs, default_config->knobs, sizeof(knobs[0]) * (size_t)default_config->num_knobs);
  knobs[0].values = negative;
  if (knobs[0].count > 64) knobs[0].count = 64;
  hetc_plugin_config_t bad = {default_config->num_knobs, knobs};
  artifact = NULL;
  status = s->p->build(s->entry->instance, c->d, &c->cw->workload, c->t, &bad, &artifact);
  if (!status && artifact) s->p->artifact_release(s->entry->instance, artifact);
  snprintf(what, sizeof(what), "build with knob '%s' set to -1", knobs[0].name);
  expect_refusal(s, status, what);
  return 2;
}

static void check_template(session_t *s, int32_t d, const check_workload_t *cw, int32_t t) {
  const char *name = s->p->template_name(s->entry->instance, d, &cw->workload, t);
  if (!item_begin(s, "device %d: %s: template %d (%s)", d, cw->label, t, name ? name : "no name")) return;
  template_ctx_t c = {s, d, cw, t, name};
  if (!name || !name[0]) say(s, "FAIL", "template_name() returned no name");
  for (int32_t u = 0; name && u < t; ++u) {
    const char *other = s->p->template_name(s->entry->instance, d, &cw->workload, u);
    if (other && !strcmp(other, name)) say(s, "FAIL", "template %d has the same name as template %d", t, u);
  }
  hetc_plugin_space_t *space = NULL, *again = NULL;
  hetc_status_t status = define(&c, &space);
  int64_t default_index = -1;
  if (status) {
    fail_status(s, status, "template_define_space");
  } else if ((status = hetc_space_default(space, &default_index))) {
    fail_status(s, status, "the default config (space_set_default)");
  } else if (!hetc_space_is_valid(space, default_index)) {
    say(s, "FAIL", "the default config violates the space's own constraints");
  } else if ((status = define(&c, &again))) {
    fail_status(s, status, "template_define_space, called a second time");
  } else {
    compare_spaces(&c, space, again);
  }
  if (s->failures) {
    hetc_space_free(space);
    hetc_space_free(again);
    item_end(s);
    return;
  }
  /* The default, then configs drawn uniformly from the valid points. */
  const int32_t samples = s->options->quick ? 1 : 3;
  uint64_t rng = 0x5eed0000u + (uint64_t)t;
  int64_t indices[8] = {default_index};
  int32_t count = 1;
  status = hetc_space_build_index(space);
  for (int32_t i = 0; !status && i < samples * 2 && count < 1 + samples; ++i) {
    int64_t index;
    if (hetc_space_sample_valid(space, &rng, &index)) break;
    int seen = 0;
    for (int32_t j = 0; j < count; ++j) seen |= indices[j] == index;
    if (!seen) indices[count++] = index;
  }
  if (status) {
    say(s, "NOTE", "the space's constrained parts are too large to enumerate, so only the default is checked: %s",
        hetc_status_message(status));
    hetc_status_free(status);
  }
  int with_features = 0, matched = 0, refused = 0;
  double max_error = 0;
  hetc_plugin_artifact_t *default_artifact = NULL;
  hetc_space_config_t default_config;
  memset(&default_config, 0, sizeof(default_config));
  for (int32_t i = 0; i < count && !s->failures; ++i) {
    hetc_space_config_t config;
    if (!round_trip(&c, space, indices[i])) break;
    hetc_status_free(hetc_space_config_at(space, indices[i], &config));
    if (i == 0) default_config = config;
    char text[512];
    describe_config(&config.view, text, sizeof(text));
    with_features |= check_features(&c, &config.view, text);
    if (s->failures) break;
    int outcome = check_kernel(&c, &config.view, text, i == 0, &max_error, i == 0 ? &default_artifact : NULL);
    matched += outcome == 1;
    refused += outcome == 0;
  }
  /* default_config's view points into itself: fix it up after the copy. */
  default_config.view.knobs = default_config.knobs;
  if (default_artifact) {
    check_emit_load(&c, &default_config.view, default_artifact, &max_error);
    s->p->artifact_release(s->entry->instance, default_artifact);
  }
  int invalid = s->failures ? 0 : check_invalid_configs(&c, space, &default_config.view);
  if (!s->failures) {
    char refusals[96] = "";
    if (refused)
      snprintf(refusals, sizeof(refusals), " (%d sampled config%s refused for device limits)", refused,
               refused == 1 ? "" : "s");
    say(s, "PASS",
        "%d knob%s, %lld point%s (%lld valid); %d config%s (the default first, also timed) round-trip%s and match "
        "the reference (max rel error %.2g)%s; emit/load round-trips%s",
        hetc_space_knob_count(space), hetc_space_knob_count(space) == 1 ? "" : "s", (long long)hetc_space_size(space),
        hetc_space_size(space) == 1 ? "" : "s",
        (long long)hetc_space_valid_count(space), matched, matched == 1 ? "" : "s",
        with_features ? ", give features" : "", max_error, refusals,
        invalid ? "; invalid configs refused" : "");
  }
  hetc_space_free(space);
  hetc_space_free(again);
  item_end(s);
}

static void check_workload(session_t *s, int32_t d, const check_workload_t *cw) {
  hetc_plugin_instance_t *inst = s->entry->instance;
  int supported = s->p->supports(inst, d, &cw->workload) != 0;
  int32_t templates = s->p->template_count(inst, d, &cw->workload);
  if (item_begin(s, "device %d: %s", d, cw->label)) {
    if (!supported && templates > 0)
      say(s, "FAIL", "supports() says 0 but template_count() is %d", templates);
    else if (supported && templates <= 0)
      say(s, "FAIL", "supports() says 1 but template_count() is %d", templates);
    else if (!supported)
      say(s, "SKIP", "not supported by this device");
    else
      say(s, "PASS", "supported, %d template%s", templates, templates == 1 ? "" : "s");
    item_end(s);
  }
  if (!supported || templates <= 0) return;
  for (int32_t t = 0; t < templates && t < 64; ++t) check_template(s, d, cw, t);
}

/* ------------------------------------------------------------------------ */
/* Calls with wrong arguments                                               */
/* ------------------------------------------------------------------------ */

static void check_wrong_calls(session_t *s, int32_t d) {
  if (!item_begin(s, "device %d: calls with wrong arguments", d)) return;
  hetc_plugin_instance_t *inst = s->entry->instance;
  check_workload_t cw;
  int32_t count = check_workload_count(1), w = 0;
  for (; w < count; ++w) {
    check_workload_at(w, 1, &cw);
    if (s->p->supports(inst, d, &cw.workload) && s->p->template_count(inst, d, &cw.workload) > 0) break;
  }
  if (w == count) {
    say(s, "SKIP", "the device supports none of the check's workloads");
    item_end(s);
    return;
  }
  int32_t templates = s->p->template_count(inst, d, &cw.workload);
  hetc_plugin_artifact_t *artifact = NULL;
  hetc_status_t status = s->p->build(inst, d, &cw.workload, templates, NULL, &artifact);
  if (!status && artifact) s->p->artifact_release(inst, artifact);
  expect_refusal(s, status, "build with a template index one past template_count()");
  artifact = NULL;
  status = s->p->build(inst, d, &cw.workload, 0, NULL, &artifact);
  if (status) {
    fail_status(s, status, "build of template 0's default config");
    item_end(s);
    return;
  }
  const hetc_plugin_artifact_info_t *info = s->p->artifact_info(artifact);
  /* pack_param with a wrong count and a param index past the last. */
  if (info && info->num_params > 0) {
    float values[64] = {0};
    void *packed = malloc(info->param_bytes[0] + 64);
    if (packed) {
      expect_refusal(s, s->p->pack_param(artifact, 0, values, 1, packed), "pack_param with a wrong element count");
      expect_refusal(s, s->p->pack_param(artifact, info->num_params, values, 1, packed),
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
  if (info && !status && nargs > 0) expect_refusal(s, s->p->run(inst, artifact, args, nargs), "run without the output argument");
  hetc_status_free(status);
  for (int32_t a = 0; a < nargs; ++a)
    if (args[a]) s->p->buffer_free(inst, args[a]);
  s->p->artifact_release(inst, artifact);
  /* artifact_load from a folder that holds nothing. */
  char dir[] = "/tmp/hetc-plugin-check-XXXXXX";
  if (mkdtemp(dir)) {
    artifact = NULL;
    status = s->p->artifact_load(inst, d, &cw.workload, 0, NULL, dir, "k0", &artifact);
    if (!status && artifact) s->p->artifact_release(inst, artifact);
    expect_refusal(s, status, "artifact_load from an empty folder");
    hetc_dir_remove_tree(dir);
  }
  if (!s->failures)
    say(s, "PASS", "%s: a template index past the last, wrong pack_param arguments, a run "
        "without its output and a load from an empty folder are all refused", cw.label);
  item_end(s);
}

/* ------------------------------------------------------------------------ */
/* Sessions                                                                 */
/* ------------------------------------------------------------------------ */

static void check_release(session_t *s, int64_t baseline_blocks, int64_t baseline_bytes) {
  if (!item_begin(s, "release")) {
    s->p->instance_destroy(s->entry->instance);
    s->entry->instance = NULL;
    return;
  }
  s->p->instance_destroy(s->entry->instance);
  s->entry->instance = NULL;
  int64_t blocks = check_host_live_blocks() - baseline_blocks;
  int64_t bytes = check_host_live_bytes() - baseline_bytes;
  if (blocks > 0)
    say(s, "FAIL", "%lld block%s (%lld bytes) allocated with host->alloc %s still live after instance_destroy",
        (long long)blocks, blocks == 1 ? "" : "s", (long long)bytes, blocks == 1 ? "is" : "are");
  else
    say(s, "PASS", "instance_destroy freed every block allocated with host->alloc (under ASan or valgrind, the "
        "process's own leak check covers malloc too)");
  item_end(s);
}

/* An older minor: negotiation, then every space and template 0's default
 * kernel of each supported workload, with the older host. */
static void older_minor_session(session_t *s) {
  if (!item_begin(s, "ABI %d.%u: spaces and default kernels", HETC_PLUGIN_ABI_MAJOR, s->minor)) return;
  hetc_status_t status = hetc_registry_instance(s->entry);
  if (status) {
    fail_status(s, status, "instance_create");
    item_end(s);
    return;
  }
  const int32_t d = s->options->device >= 0 ? s->options->device : 0;
  if (d >= s->p->device_count(s->entry->instance)) {
    say(s, "SKIP", "no device %d", d);
    item_end(s);
    return;
  }
  int32_t spaces = 0, kernels = 0, count = check_workload_count(1);
  double max_error = 0;
  for (int32_t w = 0; w < count && !s->failures; ++w) {
    check_workload_t cw;
    check_workload_at(w, 1, &cw);
    int32_t templates = s->p->template_count(s->entry->instance, d, &cw.workload);
    if (!s->p->supports(s->entry->instance, d, &cw.workload)) continue;
    for (int32_t t = 0; t < templates && !s->failures; ++t) {
      template_ctx_t c = {s, d, &cw, t, NULL};
      hetc_plugin_space_t *space = NULL;
      status = define(&c, &space);
      if (status) {
        char what[300];
        snprintf(what, sizeof(what), "%s: template %d: template_define_space", cw.label, t);
        fail_status(s, status, what);
      }
      hetc_space_free(space);
      ++spaces;
      if (!s->failures && t == 0) {
        char text[300];
        snprintf(text, sizeof(text), "%s: template 0's default config", cw.label);
        kernels += check_kernel(&c, NULL, text, 1, &max_error, NULL) == 1;
      }
    }
  }
  const char *missing = check_host_missing_calls_used();
  if (missing[0])
    say(s, "FAIL", "the plugin called %s, which a host of ABI %d.%u lacks: read a host field added after minor 0 "
        "only when HETC_PLUGIN_HAS_FIELD says the host has it", missing, HETC_PLUGIN_ABI_MAJOR, s->minor);
  if (!s->failures)
    say(s, "PASS", "%d spaces defined and %d default kernels match the reference (max rel error %.2g)", spaces,
        kernels, max_error);
  item_end(s);
  s->p->instance_destroy(s->entry->instance);
  s->entry->instance = NULL;
}

void hetc_plugin_check_session(const char *path, const hetc_plugin_check_options_t *options, uint32_t minor,
                               int32_t first_item, int fd) {
  session_t s = {fd, options, minor, first_item, 0, NULL, NULL, NULL, 0, ""};
  if (check_load(&s, path)) {
    /* What the plugin allocated while loading may live as long as it does. */
    int64_t baseline_blocks = check_host_live_blocks(), baseline_bytes = check_host_live_bytes();
    if (minor < HETC_PLUGIN_ABI_MINOR) {
      older_minor_session(&s);
    } else if (check_instance(&s)) {
      int32_t devices = s.p->device_count(s.entry->instance);
      for (int32_t d = 0; d < devices; ++d) {
        if (options->device >= 0 && d != options->device) continue;
        check_descriptor(&s, d);
        check_buffers(&s, d);
        check_unknown_op(&s, d);
        int32_t count = check_workload_count(options->quick);
        for (int32_t w = 0; w < count; ++w) {
          check_workload_t cw;
          check_workload_at(w, options->quick, &cw);
          check_workload(&s, d, &cw);
        }
        check_wrong_calls(&s, d);
      }
      if (options->device >= devices && item_begin(&s, "device %d", options->device)) {
        say(&s, "FAIL", "--device %d: the plugin has %d device%s", options->device, devices, devices == 1 ? "" : "s");
        item_end(&s);
      }
      check_release(&s, baseline_blocks, baseline_bytes);
    }
  }
  hetc_registry_free(s.registry);
}
