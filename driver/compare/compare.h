/* driver/compare/compare.h -- `hetc compare`: a model's tasks and whole
 * packages measured on several devices side by side.
 *
 * Per task and device, every template the plugin offers is built with the
 * config the records choose for it (else its default) and timed; the
 * fastest is the task's best there. End to end, one package per device and
 * one heterogeneous package placed by cost over all of them are compiled,
 * opened and benchmarked. The result is plain data: the renderers
 * (report_*.c) read only this struct, so they can be tested on a
 * hand-built one. */
#ifndef HETC_DRIVER_COMPARE_COMPARE_H_
#define HETC_DRIVER_COMPARE_COMPARE_H_

#include <stdint.h>
#include <stdio.h>

#include "common/status.h"
#include "graph/graph.h"
#include "plugins/registry.h"

/* HETC_COMPARE_MAX_DEVICES and hetc_compare_options_t are public
 * (hetc/hetc.h); the result, opaque there, is plain data here. */
#define HETC_COMPARE_NAME_SIZE 128
#define HETC_COMPARE_KEY_SIZE 256

/* What became of a (task, device) pair or a package. */
typedef enum hetc_compare_state_t {
  HETC_COMPARE_OK,          /* measured */
  HETC_COMPARE_SKIPPED,     /* the target cannot run here (see the device's reason) */
  HETC_COMPARE_UNSUPPORTED, /* the target has no kernel for the workload */
  HETC_COMPARE_FAILED,      /* nothing built, compiled or ran (see the error) */
} hetc_compare_state_t;

/* "ok", "skipped", "unsupported", "failed". */
const char *hetc_compare_state_name(hetc_compare_state_t state);

/* One target as given on the command line. */
typedef struct hetc_compare_device_t {
  char target[HETC_COMPARE_NAME_SIZE];
  char name[HETC_COMPARE_NAME_SIZE]; /* the device's own description; "" when skipped */
  double peak_gflops;                /* fp32 peak, the effective one (plugins/peaks.h); 0 unknown */
  /* Owned (free): why the target is not compared here (no GPU, no
   * driver); NULL when it is. */
  char *skipped_reason;
} hetc_compare_device_t;

/* One template of one task on one device. */
typedef struct hetc_compare_template_t {
  char name[HETC_COMPARE_NAME_SIZE];
  char config_source[16]; /* "tuned", "nearest", "predicted" or "default" */
  double seconds;         /* median of the timed runs; 0 when failed */
  double gflops;          /* task flops / seconds / 1e9; 0 when failed */
  char *error;            /* owned (free): why it failed; NULL when timed */
} hetc_compare_template_t;

/* One task on one device. */
typedef struct hetc_compare_entry_t {
  hetc_compare_state_t state;
  int32_t num_templates;
  hetc_compare_template_t *templates; /* owned */
  int32_t best;           /* index of the fastest template; -1 when none ran */
  double peak_fraction;   /* best GFLOPS / the device's peak; 0 unknown */
  /* Owned (free): why the device has no result for the task at all (not
   * supported, skipped target); NULL otherwise. */
  char *error;
} hetc_compare_entry_t;

typedef struct hetc_compare_task_t {
  char key[HETC_COMPARE_KEY_SIZE];        /* layout-free workload key */
  char node_name[HETC_COMPARE_NAME_SIZE]; /* the first node with it */
  int32_t count;                          /* nodes sharing the workload */
  double flops;                           /* of one node */
  hetc_compare_entry_t *entries;          /* owned: one per device, in device order */
} hetc_compare_task_t;

/* One compiled package, benchmarked. */
typedef struct hetc_compare_package_t {
  /* The target of a single-device package, or "hetero". */
  char name[HETC_COMPARE_NAME_SIZE];
  hetc_compare_state_t state;
  double predicted_seconds; /* the placement's expected latency; 0 unknown */
  double p50, p90, p99;     /* seconds per run, nearest rank */
  /* Fused graph nodes (kernels other than layout transforms) placed on
   * each device, indexed like the result's devices. */
  int32_t nodes_on_device[HETC_COMPARE_MAX_DEVICES];
  int32_t copies;           /* cross-device copies in the package */
  char *error;              /* owned (free): why there are no numbers; NULL when benchmarked */
} hetc_compare_package_t;

struct hetc_compare_result_t {
  char model[HETC_COMPARE_NAME_SIZE];
  int32_t runs, warmup_runs; /* of each package's benchmark */
  int32_t num_devices;
  hetc_compare_device_t devices[HETC_COMPARE_MAX_DEVICES];
  int32_t num_tasks;
  hetc_compare_task_t *tasks; /* owned */
  int32_t num_packages;
  hetc_compare_package_t *packages; /* owned: one per device in device order, then "hetero" */
};

/* Measures `graph` (not modified) on the options' targets into *out_result
 * (released with hetc_compare_result_free, also after a failure). A target
 * that cannot run here is recorded as skipped with its reason; it is an
 * error only when no target is left. A template that does not build, or a
 * package that does not compile, is recorded with its message. An unknown
 * target is NOT_FOUND, a target listed twice BAD_INPUT. */
hetc_status_t hetc_compare_run(hetc_registry_t *registry, const hetc_graph_t *graph,
                               const hetc_compare_options_t *options, hetc_compare_result_t *out_result);

/* Frees what the result owns (not the struct itself) and zeroes it. */
void hetc_compare_result_free(hetc_compare_result_t *result);

/* The best template of a task on a device, or NULL when none ran. */
const hetc_compare_template_t *hetc_compare_best(const hetc_compare_entry_t *entry);

/* Renderers: each writes the whole report to `out`. */
hetc_status_t hetc_compare_write_text(const hetc_compare_result_t *result, FILE *out);
hetc_status_t hetc_compare_write_csv(const hetc_compare_result_t *result, FILE *out);
hetc_status_t hetc_compare_write_json(const hetc_compare_result_t *result, FILE *out);
hetc_status_t hetc_compare_write_html(const hetc_compare_result_t *result, FILE *out);

/* Renders with `write` into a temporary file beside `path` and renames it
 * into place, so that a failure never leaves a half-written report. */
hetc_status_t hetc_compare_save(const hetc_compare_result_t *result,
                                hetc_status_t (*write)(const hetc_compare_result_t *, FILE *),
                                const char *path);

#endif /* HETC_DRIVER_COMPARE_COMPARE_H_ */
