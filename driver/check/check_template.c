/* The plugin-check items of each workload and template: the space defined
 * twice, round trips through it, features, kernels of the default and
 * sampled configs against the reference, emit/load, and configs outside
 * the space refused. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check/check_items.h"
#include "check/kernel_check.h"
#include "common/fileio.h"
#include "space/space.h"

/* Driver-owned feature indices are filled with this before features() is
 * called; a plugin that writes one of them is caught. */
#define FEATURE_CANARY (-7777.0f)

/* ------------------------------------------------------------------------ */
/* Templates                                                                */
/* ------------------------------------------------------------------------ */

typedef struct template_ctx_t {
  session_t *s;
  int32_t d;
  const check_workload_t *cw;
  int32_t t;
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
    hetc_check_say(c->s, "FAIL",
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
      hetc_check_say(c->s, "FAIL",
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
 * constraints answering the same twice. *config receives the point's
 * config (its view points into it: keep it unmoved). */
static int round_trip(const template_ctx_t *c, const hetc_plugin_space_t *space, int64_t index,
                      hetc_space_config_t *config) {
  int64_t back = -1, rank = -1, again = -1;
  hetc_status_t status = hetc_space_config_at(space, index, config);
  if (!status) status = hetc_space_index_of(space, &config->view, &back);
  if (!status && back == index) status = hetc_space_valid_rank(space, index, &rank);
  if (!status && back == index) status = hetc_space_valid_at(space, rank, &again);
  if (status) {
    hetc_check_fail_status(c->s, status, "a round trip through the space");
    return 0;
  }
  int first = hetc_space_is_valid(space, index), second = hetc_space_is_valid(space, index);
  if (back != index || again != index || !first || first != second) {
    char text[512];
    hetc_check_describe_config(&config->view, text, sizeof(text));
    hetc_check_say(c->s, "FAIL", "config #%lld %s does not round-trip: its index comes back as #%lld, its valid rank as #%lld, "
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
  if (hetc_plugin_abi_level(p) < 1 || !HETC_PLUGIN_HAS_FIELD(p, hetc_plugin_t, features) || !p->features) return 0;
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
      hetc_check_fail_status(c->s, status, what);
      return 1;
    }
  }
  if (counts[0] < 1 || counts[0] > HETC_FEATURE_COUNT)
    hetc_check_say(c->s, "FAIL", "features() for %s set *out_count to %d; it must be min(capacity %d, its HETC_FEATURE_COUNT)",
        text, counts[0], HETC_FEATURE_COUNT);
  for (int32_t i = 0; i < HETC_FEATURE_COUNT; ++i) {
    if (i >= HETC_FEATURE_PLUGIN_END && first[i] != FEATURE_CANARY) {
      hetc_check_say(c->s, "FAIL", "features() for %s wrote index %d, which the driver owns (a plugin writes only [0, %d))", text,
          i, HETC_FEATURE_PLUGIN_END);
      return 1;
    }
    if (isinf(first[i])) {
      hetc_check_say(c->s, "FAIL", "features() for %s wrote an infinity at index %d (NaN is the missing value)", text, i);
      return 1;
    }
    if (memcmp(&first[i], &second[i], sizeof(float))) {
      hetc_check_say(c->s, "FAIL", "features() for %s is not deterministic: index %d was %g, then %g", text, i, first[i],
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
  hetc_check_step(s, "build of %s%s", is_default ? "the default config " : "config ", text);
  hetc_status_t status = s->p->build(s->entry->instance, c->d, &c->cw->workload, c->t, config, &artifact);
  if (!status && !artifact) {
    hetc_check_say(s, "FAIL", "build of %s returned success without an artifact", text);
    return -1;
  }
  if (status) {
    if (!is_default && hetc_status_code(status) == HETC_STATUS_DEVICE_LIMITS) {
      hetc_status_free(status);
      return 0;
    }
    char what[600];
    snprintf(what, sizeof(what), "build of %s%s", is_default ? "the default config " : "config ", text);
    hetc_check_fail_status(s, status, what);
    return -1;
  }
  /* The default is timed too: time() must give positive, finite samples. */
  kernel_check_result_t result;
  hetc_check_step(s, "pack_param, run%s of %s", is_default ? " and time" : "", text);
  status = hetc_kernel_check_artifact(s->entry, c->d, &c->cw->workload, c->t, artifact, 7 + (uint64_t)c->t,
                                 is_default ? 3 : 0, &result);
  int outcome = 1;
  if (status) {
    char what[600];
    snprintf(what, sizeof(what), "running %s%s", is_default ? "and timing " : "", text);
    hetc_check_fail_status(s, status, what);
    outcome = -1;
  } else if (is_default && !(result.seconds > 0 && result.seconds < 1e6)) {
    hetc_check_say(s, "FAIL", "time() of %s gave a median of %g s; samples must be positive and finite", text, result.seconds);
    outcome = -1;
  } else if (!(result.max_relative_error <= CHECK_TOLERANCE)) {
    hetc_check_say(s, "FAIL", "%s: max relative error %.3g against the reference executor (tolerance %g)", text,
        result.max_relative_error, CHECK_TOLERANCE);
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
    hetc_check_say(s, "FAIL", "cannot create a temporary folder for artifact_emit");
    return;
  }
  hetc_check_step(s, "artifact_emit of the default config");
  hetc_status_t status = s->p->artifact_emit(s->entry->instance, artifact, dir, "k0");
  if (status) {
    hetc_check_fail_status(s, status, "artifact_emit of the default config");
  } else {
    hetc_plugin_artifact_t *loaded = NULL;
    hetc_check_step(s, "artifact_load of what artifact_emit wrote");
    status = s->p->artifact_load(s->entry->instance, c->d, &c->cw->workload, c->t, config, dir, "k0", &loaded);
    if (status) {
      hetc_check_fail_status(s, status, "artifact_load of what artifact_emit wrote");
    } else if (!loaded) {
      hetc_check_say(s, "FAIL", "artifact_load returned success without an artifact");
    } else {
      kernel_check_result_t result;
      hetc_check_step(s, "pack_param and run of the loaded artifact");
      status = hetc_kernel_check_artifact(s->entry, c->d, &c->cw->workload, c->t, loaded, 11, 0, &result);
      if (status)
        hetc_check_fail_status(s, status, "running the loaded artifact");
      else if (!(result.max_relative_error <= CHECK_TOLERANCE))
        hetc_check_say(s, "FAIL", "the artifact loaded from artifact_emit's files: max relative error %.3g (tolerance %g)",
            result.max_relative_error, CHECK_TOLERANCE);
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
  snprintf(what, sizeof(what), "build with a config that has none of the space's knobs");
  hetc_check_step(s, "%s", what);
  hetc_status_t status = s->p->build(s->entry->instance, c->d, &c->cw->workload, c->t, &empty, &artifact);
  if (!status && artifact) s->p->artifact_release(s->entry->instance, artifact);
  hetc_check_expect_refusal(s, status, what);

  /* The default with its first knob's values all -1. */
  hetc_plugin_knob_value_t knobs[HETC_SPACE_MAX_KNOBS];
  int64_t negative[64];
  for (int i = 0; i < 64; ++i) negative[i] = -1;
  memcpy(knobs, default_config->knobs, sizeof(knobs[0]) * (size_t)default_config->num_knobs);
  knobs[0].values = negative;
  if (knobs[0].count > 64) knobs[0].count = 64;
  hetc_plugin_config_t bad = {default_config->num_knobs, knobs};
  artifact = NULL;
  snprintf(what, sizeof(what), "build with knob '%s' set to -1", knobs[0].name);
  hetc_check_step(s, "%s", what);
  status = s->p->build(s->entry->instance, c->d, &c->cw->workload, c->t, &bad, &artifact);
  if (!status && artifact) s->p->artifact_release(s->entry->instance, artifact);
  hetc_check_expect_refusal(s, status, what);
  return 2;
}

static void check_template(session_t *s, int32_t d, const check_workload_t *cw, int32_t t) {
  const char *name = s->p->template_name(s->entry->instance, d, &cw->workload, t);
  if (!hetc_check_item_begin(s, "device %d: %s: template %d (%s)", d, cw->label, t, name ? name : "no name")) return;
  template_ctx_t c = {s, d, cw, t};
  if (!name || !name[0]) hetc_check_say(s, "FAIL", "template_name() returned no name");
  for (int32_t u = 0; name && u < t; ++u) {
    const char *other = s->p->template_name(s->entry->instance, d, &cw->workload, u);
    if (other && !strcmp(other, name)) hetc_check_say(s, "FAIL", "template %d has the same name as template %d", t, u);
  }
  hetc_plugin_space_t *space = NULL, *again = NULL;
  hetc_status_t status = define(&c, &space);
  int64_t default_index = -1;
  if (status) {
    hetc_check_fail_status(s, status, "template_define_space");
  } else if ((status = hetc_space_default(space, &default_index))) {
    hetc_check_fail_status(s, status, "the default config (space_set_default)");
  } else if (!hetc_space_is_valid(space, default_index)) {
    hetc_check_say(s, "FAIL", "the default config violates the space's own constraints");
  } else if ((status = define(&c, &again))) {
    hetc_check_fail_status(s, status, "template_define_space, called a second time");
  } else {
    compare_spaces(&c, space, again);
  }
  if (s->failures) {
    hetc_space_free(space);
    hetc_space_free(again);
    hetc_check_item_end(s);
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
    hetc_check_say(s, "NOTE", "the space's constrained parts are too large to enumerate, so only the default is checked: %s",
        hetc_status_message(status));
    hetc_status_free(status);
  }
  int with_features = 0, matched = 0, refused = 0;
  double max_error = 0;
  hetc_plugin_artifact_t *default_artifact = NULL;
  hetc_space_config_t default_config, sampled_config;
  memset(&default_config, 0, sizeof(default_config));
  for (int32_t i = 0; i < count && !s->failures; ++i) {
    hetc_space_config_t *config = i == 0 ? &default_config : &sampled_config;
    if (!round_trip(&c, space, indices[i], config)) break;
    char text[512];
    hetc_check_describe_config(&config->view, text, sizeof(text));
    with_features |= check_features(&c, &config->view, text);
    if (s->failures) break;
    int outcome = check_kernel(&c, &config->view, text, i == 0, &max_error, i == 0 ? &default_artifact : NULL);
    matched += outcome == 1;
    refused += outcome == 0;
  }
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
    hetc_check_say(s, "PASS",
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
  hetc_check_item_end(s);
}

void hetc_check_workload(session_t *s, int32_t d, const check_workload_t *cw) {
  hetc_plugin_instance_t *inst = s->entry->instance;
  int supported = s->p->supports(inst, d, &cw->workload) != 0;
  int32_t templates = s->p->template_count(inst, d, &cw->workload);
  if (hetc_check_item_begin(s, "device %d: %s", d, cw->label)) {
    /* supports_why (minor 3) must give the same answer, with a reason. */
    const int has_why = HETC_PLUGIN_HAS_FIELD(s->p, hetc_plugin_t, supports_why) && s->p->supports_why;
    hetc_check_step(s, "supports_why");
    hetc_status_t why = has_why ? s->p->supports_why(inst, d, &cw->workload) : NULL;
    char reason[512] = "";
    if (why) snprintf(reason, sizeof(reason), "%s", hetc_status_message(why));
    if (!supported && templates > 0)
      hetc_check_say(s, "FAIL", "supports() says 0 but template_count() is %d", templates);
    else if (supported && templates <= 0)
      hetc_check_say(s, "FAIL", "supports() says 1 but template_count() is %d", templates);
    else if (supported && why)
      hetc_check_say(s, "FAIL", "supports() says 1 but supports_why() refuses: %s", reason);
    else if (!supported && has_why && (!why || !reason[0]))
      hetc_check_say(s, "FAIL", "supports() says 0 but supports_why() gives %s", why ? "an empty message" : "no reason");
    else if (!supported)
      hetc_check_say(s, "SKIP", "not supported by this device%s%s", reason[0] ? ": " : "", reason);
    else
      hetc_check_say(s, "PASS", "supported, %d template%s", templates, templates == 1 ? "" : "s");
    hetc_status_free(why);
    hetc_check_item_end(s);
  }
  if (!supported || templates <= 0) return;
  for (int32_t t = 0; t < templates && t < 64; ++t) check_template(s, d, cw, t);
}

int hetc_check_define_space_once(session_t *s, int32_t d, const check_workload_t *cw, int32_t t, const char *what) {
  template_ctx_t c = {s, d, cw, t};
  hetc_plugin_space_t *space = NULL;
  hetc_status_t status = define(&c, &space);
  hetc_space_free(space);
  if (status) hetc_check_fail_status(s, status, what);
  return !status;
}

int hetc_check_default_kernel(session_t *s, int32_t d, const check_workload_t *cw, int32_t t, const char *text,
                         double *max_error) {
  template_ctx_t c = {s, d, cw, t};
  return check_kernel(&c, NULL, text, 1, max_error, NULL) == 1;
}
