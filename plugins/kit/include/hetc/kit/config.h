/* hetc/kit/config.h -- a template's knobs described once, for both ends:
 * template_define_space declares them to the host, and build, features
 * and artifact_load check a config against the same description, so that
 * what the space offers and what the kernel accepts cannot drift apart.
 *
 * A config is checked completely (plugin.h: override files and old records
 * reach build): every knob once and no other, the right number of values,
 * split parts positive and multiplying to the extent (the outermost part
 * rounded up for the policies that allow a tail), and a choice among its
 * values. A split beyond max_factor is accepted: an override may add one,
 * and the kernel runs any split of the right shape. What the kit cannot
 * know (a constraint across knobs, a device limit) the template checks
 * after. */
#ifndef HETC_KIT_CONFIG_H_
#define HETC_KIT_CONFIG_H_

#include <stddef.h>
#include <stdint.h>

#include <hetc/plugin.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum hetc_kit_knob_kind_t {
  /* host->space_define_split: `extent` into `parts` by `policy`. */
  HETC_KIT_KNOB_SPLIT = 0,
  /* host->space_define_knob: one of `values`. */
  HETC_KIT_KNOB_CHOICE = 1,
} hetc_kit_knob_kind_t;

/* One knob. Strings and arrays are borrowed; the description is usually
 * built on the stack from the workload at each call. */
typedef struct hetc_kit_knob_t {
  const char *name;
  int32_t kind; /* hetc_kit_knob_kind_t */
  /* SPLIT: the loop extent, the parts (2..8), a hetc_plugin_split_policy_t,
   * the cap on inner parts (0: none), and what the extent is, for messages
   * ("the output width"). values/num_values are SPLIT_CANDIDATES'
   * candidates. */
  int64_t extent;
  int32_t parts;
  int32_t policy;
  int64_t max_factor;
  const char *extent_name;
  /* CHOICE: the values (also a SPLIT's candidates). */
  const int64_t *values;
  int32_t num_values;
} hetc_kit_knob_t;

/* Declares knobs[0..count) through the bound host's space builder, in
 * order. Returns the host's failure, if any. */
hetc_plugin_status_t hetc_kit_space_define_knobs(hetc_plugin_space_t *space, const hetc_kit_knob_t *knobs,
                                                 int32_t count);

/* Checks `config` against knobs[0..count) and points found[i] at knob i's
 * entry in it (found has `count` slots, borrowed from config). A NULL
 * config (the template's default) leaves every found[i] NULL. A refusal is
 * INVALID_ARGUMENT naming the template, the knob and the value. */
hetc_plugin_status_t hetc_kit_config_match(const char *template_name, const hetc_plugin_config_t *config,
                                           const hetc_kit_knob_t *knobs, int32_t count,
                                           const hetc_plugin_knob_value_t **found);

/* A knob-less template: NULL and a config without knobs pass, anything
 * else is INVALID_ARGUMENT naming the knob. */
hetc_plugin_status_t hetc_kit_config_expect_none(const char *template_name, const hetc_plugin_config_t *config);

/* "tile_k=[2,8] tile_x=[5,2] reduce_order=0" (one value bare, several in
 * brackets), "(no knobs)" for none; always terminated. */
void hetc_kit_config_text(const hetc_plugin_config_t *config, char *buf, size_t size);

#ifdef __cplusplus
}
#endif

#endif /* HETC_KIT_CONFIG_H_ */
