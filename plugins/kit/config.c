/* Knobs described once, for the space and for config checks
 * (hetc/kit/config.h). */
#include "hetc/kit/config.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "hetc/kit/host.h"
#include "hetc/kit/status.h"

hetc_plugin_status_t hetc_kit_space_define_knobs(hetc_plugin_space_t *space, const hetc_kit_knob_t *knobs,
                                                 int32_t count) {
  const hetc_plugin_host_t *h = hetc_kit_host();
  hetc_plugin_status_t s = NULL;
  for (int32_t i = 0; i < count && !s; ++i) {
    const hetc_kit_knob_t *k = &knobs[i];
    s = k->kind == HETC_KIT_KNOB_SPLIT
            ? h->space_define_split(space, k->name, k->extent, k->parts, k->policy, k->max_factor, k->values,
                                    k->num_values)
            : h->space_define_knob(space, k->name, k->values, k->num_values);
  }
  return s;
}

/* "[2,8]" or "3" into buf. */
static void values_text(const hetc_plugin_knob_value_t *kv, char *buf, size_t size) {
  size_t n = 0;
  if (kv->count != 1) n += (size_t)snprintf(buf + n, size - n, "[");
  for (int32_t i = 0; i < kv->count && n < size; ++i)
    n += (size_t)snprintf(buf + n, size - n, "%s%lld", i ? "," : "", (long long)kv->values[i]);
  if (kv->count != 1 && n < size) snprintf(buf + n, size - n, "]");
}

static int is_exact_policy(int32_t policy) {
  return policy == HETC_PLUGIN_SPLIT_FACTORS || policy == HETC_PLUGIN_SPLIT_POWER2;
}

/* A split of the knob's shape: positive parts whose product is the extent,
 * or, where the policy lets the template guard a tail, whose outermost
 * part is ceil(extent / the inner parts' product). */
static hetc_plugin_status_t check_split(const char *tmpl, const hetc_kit_knob_t *k,
                                        const hetc_plugin_knob_value_t *kv) {
  /* Parts up to 2^31 keep the inner product of any two below 2^62. */
  const int64_t largest_part = (int64_t)1 << 31;
  char text[160];
  values_text(kv, text, sizeof(text));
  int64_t inner = 1;
  for (int32_t i = 0; i < kv->count; ++i) {
    if (kv->values[i] < 1 || kv->values[i] > largest_part || inner > largest_part)
      return hetc_kit_status(HETC_PLUGIN_STATUS_INVALID_ARGUMENT, "%s: knob '%s' = %s: parts must be positive and "
                             "at most 2^31", tmpl, k->name, text);
    if (i > 0) inner *= kv->values[i];
  }
  const int exact = is_exact_policy(k->policy);
  if ((exact && kv->values[0] * inner != k->extent) || (!exact && kv->values[0] != (k->extent + inner - 1) / inner))
    return hetc_kit_status(HETC_PLUGIN_STATUS_INVALID_ARGUMENT, "%s: knob '%s' = %s: the parts must %s %s %lld", tmpl,
                           k->name, text, exact ? "multiply to" : "cover",
                           k->extent_name ? k->extent_name : "the extent", (long long)k->extent);
  return NULL;
}

static hetc_plugin_status_t check_choice(const char *tmpl, const hetc_kit_knob_t *k,
                                         const hetc_plugin_knob_value_t *kv) {
  for (int32_t i = 0; i < k->num_values; ++i)
    if (kv->values[0] == k->values[i]) return NULL;
  char set[160];
  size_t n = 0;
  for (int32_t i = 0; i < k->num_values && n < sizeof(set); ++i)
    n += (size_t)snprintf(set + n, sizeof(set) - n, "%s%lld", i ? "," : "", (long long)k->values[i]);
  return hetc_kit_status(HETC_PLUGIN_STATUS_INVALID_ARGUMENT, "%s: knob '%s' = %lld, expected one of {%s}", tmpl,
                         k->name, (long long)kv->values[0], set);
}

/* The knobs' names, for the message about an unknown one. */
static void names_text(const hetc_kit_knob_t *knobs, int32_t count, char *buf, size_t size) {
  size_t n = 0;
  buf[0] = '\0';
  for (int32_t i = 0; i < count && n < size; ++i)
    n += (size_t)snprintf(buf + n, size - n, "%s%s", i ? ", " : "", knobs[i].name);
}

hetc_plugin_status_t hetc_kit_config_match(const char *tmpl, const hetc_plugin_config_t *config,
                                           const hetc_kit_knob_t *knobs, int32_t count,
                                           const hetc_plugin_knob_value_t **found) {
  for (int32_t k = 0; k < count; ++k) found[k] = NULL;
  if (!config) return NULL;
  if (config->num_knobs < 0 || (config->num_knobs > 0 && !config->knobs))
    return hetc_kit_status(HETC_PLUGIN_STATUS_INVALID_ARGUMENT, "%s: malformed config (%d knobs)", tmpl,
                           config->num_knobs);
  for (int32_t j = 0; j < config->num_knobs; ++j) {
    const hetc_plugin_knob_value_t *kv = &config->knobs[j];
    if (!kv->name)
      return hetc_kit_status(HETC_PLUGIN_STATUS_INVALID_ARGUMENT, "%s: config knob %d has no name", tmpl, j);
    int32_t k = 0;
    while (k < count && strcmp(kv->name, knobs[k].name) != 0) ++k;
    if (k == count && !count)
      return hetc_kit_status(HETC_PLUGIN_STATUS_INVALID_ARGUMENT, "%s: unknown knob '%s' (this template has no knobs)",
                             tmpl, kv->name);
    if (k == count) {
      char names[256];
      names_text(knobs, count, names, sizeof(names));
      return hetc_kit_status(HETC_PLUGIN_STATUS_INVALID_ARGUMENT, "%s: unknown knob '%s' (knobs: %s)", tmpl, kv->name,
                             names);
    }
    if (found[k])
      return hetc_kit_status(HETC_PLUGIN_STATUS_INVALID_ARGUMENT, "%s: knob '%s' given twice", tmpl, kv->name);
    found[k] = kv;
  }
  for (int32_t k = 0; k < count; ++k) {
    const hetc_kit_knob_t *knob = &knobs[k];
    const hetc_plugin_knob_value_t *kv = found[k];
    if (!kv)
      return hetc_kit_status(HETC_PLUGIN_STATUS_INVALID_ARGUMENT, "%s: config lacks knob '%s'", tmpl, knob->name);
    const int32_t want = knob->kind == HETC_KIT_KNOB_SPLIT ? knob->parts : 1;
    if (kv->count != want || !kv->values)
      return hetc_kit_status(HETC_PLUGIN_STATUS_INVALID_ARGUMENT, "%s: knob '%s' has %d values, expected %d", tmpl,
                             kv->name, kv->count, want);
    hetc_plugin_status_t s =
        knob->kind == HETC_KIT_KNOB_SPLIT ? check_split(tmpl, knob, kv) : check_choice(tmpl, knob, kv);
    if (s) return s;
  }
  return NULL;
}

hetc_plugin_status_t hetc_kit_config_expect_none(const char *tmpl, const hetc_plugin_config_t *config) {
  return hetc_kit_config_match(tmpl, config, NULL, 0, NULL);
}

void hetc_kit_config_text(const hetc_plugin_config_t *config, char *buf, size_t size) {
  size_t n = 0;
  buf[0] = '\0';
  if (!config || config->num_knobs <= 0) {
    snprintf(buf, size, "(no knobs)");
    return;
  }
  for (int32_t j = 0; j < config->num_knobs && n + 1 < size; ++j) {
    char values[160];
    values_text(&config->knobs[j], values, sizeof(values));
    n += (size_t)snprintf(buf + n, size - n, "%s%s=%s", j ? " " : "", config->knobs[j].name, values);
  }
}
