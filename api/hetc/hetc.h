/*
 * hetc/hetc.h -- the library API of hetc (libhetc).
 *
 * The `hetc` command is a thin layer over these calls; an application can
 * embed the same pipeline: load a model, extract its tasks, compile it for
 * a list of targets into a package, open the package and run it.
 *
 * Conventions: every fallible call returns hetc_status_t (NULL on success;
 * otherwise owned by the caller, read with hetc_status_code/_message and
 * released with hetc_status_free). Output parameters come last and are named
 * out_*. Objects are released by the matching destroy or free call. Unless
 * stated otherwise, one object is not used from two threads at once.
 */
#ifndef HETC_HETC_H_
#define HETC_HETC_H_

#include <stddef.h>
#include <stdint.h>

#include "hetc/plugin.h"

#ifdef __cplusplus
extern "C" {
#endif

#define HETC_VERSION_STRING "0.1.0"

/* libhetc is built with hidden visibility: a function is part of the
 * library's ABI exactly when this header declares it with HETC_API. */
#if defined(__GNUC__) || defined(__clang__)
#define HETC_API __attribute__((visibility("default")))
#else
#define HETC_API
#endif

/* ------------------------------------------------------------------------ */
/* Status                                                                   */
/* ------------------------------------------------------------------------ */

/* Codes 0..99 are the plugin ABI's canonical codes (same values); codes
 * from 100 are the driver's own. */
typedef enum hetc_status_code_t {
  HETC_STATUS_OK = HETC_PLUGIN_STATUS_OK,
  HETC_STATUS_INVALID_ARGUMENT = HETC_PLUGIN_STATUS_INVALID_ARGUMENT,
  HETC_STATUS_UNSUPPORTED = HETC_PLUGIN_STATUS_UNSUPPORTED,
  HETC_STATUS_UNAVAILABLE = HETC_PLUGIN_STATUS_UNAVAILABLE,
  HETC_STATUS_OUT_OF_MEMORY = HETC_PLUGIN_STATUS_OUT_OF_MEMORY,
  HETC_STATUS_BUILD_FAILED = HETC_PLUGIN_STATUS_BUILD_FAILED,
  HETC_STATUS_DEVICE_LIMITS = HETC_PLUGIN_STATUS_DEVICE_LIMITS,
  HETC_STATUS_RUNTIME_FAILED = HETC_PLUGIN_STATUS_RUNTIME_FAILED,
  HETC_STATUS_TIMEOUT = HETC_PLUGIN_STATUS_TIMEOUT,
  HETC_STATUS_INTERNAL = HETC_PLUGIN_STATUS_INTERNAL,
  /* A file the user supplied (model, weights, package, input) is malformed;
   * the message names the file and the place in it. The CLI exits with 2. */
  HETC_STATUS_BAD_INPUT = 100,
  /* Reading or writing a file failed (the message has the path and errno
   * text). */
  HETC_STATUS_IO_ERROR = 101,
  /* A named thing (target, plugin, node) does not exist. */
  HETC_STATUS_NOT_FOUND = 102,
  /* The machine could not store what hetc wrote (disk full, quota, an I/O
   * error of the device): not the user's input, so the CLI exits with 1. */
  HETC_STATUS_STORAGE_FAILED = 103,
  /* SIGINT or SIGTERM stopped the work; nothing half-written was kept. The
   * CLI exits with 128 + the signal (130 for Ctrl-C). */
  HETC_STATUS_INTERRUPTED = 104,
} hetc_status_code_t;

/* Same object as hetc_plugin_status_t: plugin failures pass through. */
typedef struct hetc_plugin_status_object_t *hetc_status_t;

HETC_API hetc_status_code_t hetc_status_code(hetc_status_t status);
/* Borrowed; valid until hetc_status_free. "ok" for NULL. */
HETC_API const char *hetc_status_message(hetc_status_t status);
HETC_API void hetc_status_free(hetc_status_t status);
/* Static string naming a code. */
HETC_API const char *hetc_status_code_name(hetc_status_code_t code);

/* ------------------------------------------------------------------------ */
/* Models                                                                   */
/* ------------------------------------------------------------------------ */

/* A loaded, validated model (api/model-format.md): every shape inferred,
 * every parameter loaded. Immutable once loaded; may be read from several
 * threads. */
typedef struct hetc_graph_t hetc_model_t;

/* Loads model.json (and its weights). A malformed file gives
 * HETC_STATUS_BAD_INPUT naming the file and the JSON path. *out_model is
 * released with hetc_model_free. */
HETC_API hetc_status_t hetc_model_load(const char *path, hetc_model_t **out_model);
HETC_API void hetc_model_free(hetc_model_t *model);
/* Borrowed; lives as long as the model. */
HETC_API const char *hetc_model_name(const hetc_model_t *model);

/* One tunable task: a distinct fused workload and how often it occurs. */
typedef struct hetc_task_info_t {
  char key[256];   /* layout-free workload key */
  int32_t count;   /* nodes sharing it */
  double flops;    /* of one node */
} hetc_task_info_t;

/* The model's tasks after batch-norm folding and epilogue fusion.
 * *out_tasks (out_count entries) is released with hetc_free;
 * out_fused_nodes receives the node count after fusion (may be NULL). */
HETC_API hetc_status_t hetc_model_tasks(const hetc_model_t *model, hetc_task_info_t **out_tasks,
                               int32_t *out_count, int32_t *out_fused_nodes);

/* Releases memory that a hetc call handed to the caller. */
HETC_API void hetc_free(void *memory);

/* ------------------------------------------------------------------------ */
/* Contexts: the loaded plugins                                             */
/* ------------------------------------------------------------------------ */

/* Discovers and loads the backend plugins (see api/plugin-guide.md for the
 * search order). A bad plugin never fails this call; it is listed as
 * refused. Released with hetc_context_destroy, which destroys plugin
 * instances. Not thread-safe. */
typedef struct hetc_registry_t hetc_context_t;
HETC_API hetc_status_t hetc_context_create(hetc_context_t **out_context);
HETC_API void hetc_context_destroy(hetc_context_t *context);

/* ------------------------------------------------------------------------ */
/* Compiling                                                                */
/* ------------------------------------------------------------------------ */

/* How nodes are placed when a compile has several targets. */
typedef enum hetc_placement_policy_t {
  /* Each node where the whole model's expected latency is lowest: every
   * node built and timed on every target, transfers priced (see
   * README.md, "Placement"). */
  HETC_PLACEMENT_COST = 0,
  /* Each node on the first target that supports it, in the order given. */
  HETC_PLACEMENT_FIRST = 1,
} hetc_placement_policy_t;

/* Splitting a conv2d by output channels across two devices, which then
 * compute their shares at the same time. */
typedef enum hetc_split_policy_t {
  /* Where the expected latency drops: the two devices must not share
   * cores (two CPU targets of one host gain nothing from running at once). */
  HETC_SPLIT_AUTO = 0,
  HETC_SPLIT_NEVER = 1,
  /* Every conv2d that can be split, between the two devices fastest on it,
   * gain or not: for testing and experiments. */
  HETC_SPLIT_ALL = 2,
} hetc_split_policy_t;

/* Initialise with designated initialisers ({.targets = t, ...}): later
 * versions append fields, which then start as 0. */
typedef struct hetc_compile_options_t {
  const char *const *targets; /* target names, in order of preference */
  int32_t num_targets;
  int32_t progress;           /* 1: a line per kernel on stderr */
  /* Tuning records to take configs from (`hetc tune`'s store). NULL: the
   * per-user store when it exists, else every kernel gets its template's
   * default config. Placement keeps measured transfer costs there. */
  const char *records_path;
  int32_t placement;          /* hetc_placement_policy_t */
  int32_t explain;            /* 1: print the placement plan on stdout */
  /* 1: cost the plan even on one target (as explain does, silently), so
   * that the report's predicted_seconds is set. */
  int32_t predict;
  int32_t split; /* hetc_split_policy_t (cost placement only) */
} hetc_compile_options_t;

typedef struct hetc_compile_report_t {
  int32_t kernels;    /* kernel steps, layout transforms included */
  int32_t transforms; /* layout transforms inserted */
  int32_t copies;     /* cross-device copies inserted */
  uint64_t weights_bytes;
  double build_seconds;
  /* Mean static innermost loop trip count over the conv2d kernels that
   * report one (0 if none): the vector-length indicator. */
  double avg_inner_loop_length;
  /* How many conv2d and dense kernels got their config from each source,
   * indexed by source: 0 the template's default, 1 a record tuned for this
   * workload and device, 2 a record of the nearest tuned workload on a
   * device of the same kind, 3 the cost model's best prediction. */
  int32_t configs[4];
  /* Cost-based placement (several targets, or explain/predict): the plan's
   * expected latency (0 otherwise) and whether it is proven lowest under
   * the cost model. */
  double predicted_seconds;
  int32_t placement_exact;
  int32_t splits; /* conv2d split across two devices */
  /* Concats whose inputs were written straight into their slices (no
   * concat kernel runs; see README.md, "What compile does"). */
  int32_t concat_views;
  /* Graph-level selection: the expected latency of the best plan with every
   * tunable kernel at its first template's default config (0 when there
   * was nothing else to choose), to compare with predicted_seconds; and 1
   * when the plan was the one `hetc tune` chose and kept in the records
   * store, built without costing the candidates again. */
  double default_seconds;
  int32_t selection_kept;
  /* 1 when the plan chosen now was written to the records store for the
   * next compile (plans that split layers are not kept). */
  int32_t selection_stored;
  /* The devices the package runs steps on, in the order of the targets,
   * as "cpu, opencl:1" (a device is NAME:INDEX when its plugin has several);
   * cut at the array's end. */
  char targets_used[256];
  /* Kernels built by this compile (placement's candidates included), and
   * kernel steps that used one built before for another step or for
   * placement (each distinct kernel is built once). */
  int32_t kernels_built;
  int32_t kernels_reused;
} hetc_compile_report_t;

/* Compiles a model into a package directory at out_path, placing nodes by
 * options->placement when there are several targets. The package is written to a
 * temporary directory beside out_path and renamed into place only when
 * complete; on failure nothing is left behind. out_report may be NULL. */
HETC_API hetc_status_t hetc_compile(hetc_context_t *context, const hetc_model_t *model,
                           const hetc_compile_options_t *options, const char *out_path,
                           hetc_compile_report_t *out_report);

/* ------------------------------------------------------------------------ */
/* Packages                                                                 */
/* ------------------------------------------------------------------------ */

/* An opened package: artifacts loaded, buffers allocated, weights on the
 * devices. `context` must outlive it. Released with hetc_package_close. */
typedef struct hetc_runtime_t hetc_package_t;
HETC_API hetc_status_t hetc_package_open(hetc_context_t *context, const char *path,
                                hetc_package_t **out_package);
HETC_API void hetc_package_close(hetc_package_t *package);

HETC_API int32_t hetc_package_input_count(const hetc_package_t *package);
HETC_API int32_t hetc_package_output_count(const hetc_package_t *package);
/* Name (borrowed), element count and shape (rank returned; dims written
 * to out_shape, HETC_PLUGIN_MAX_RANK entries) of an input or output. */
HETC_API const char *hetc_package_input_name(const hetc_package_t *package, int32_t index);
HETC_API const char *hetc_package_output_name(const hetc_package_t *package, int32_t index);
HETC_API int64_t hetc_package_input_elements(const hetc_package_t *package, int32_t index);
HETC_API int64_t hetc_package_output_elements(const hetc_package_t *package, int32_t index);
HETC_API int32_t hetc_package_output_shape(const hetc_package_t *package, int32_t index, int64_t *out_shape);

/* Inputs and outputs are row-major float32 (NCHW for 4-d); count must equal
 * the element count. */
HETC_API hetc_status_t hetc_package_set_input(hetc_package_t *package, int32_t index, const float *data,
                                     int64_t count);
/* Fills `count` floats with the deterministic values of
 * `hetc run --random-input SEED` for graph input `input_index`: uniform in
 * [-1, 1) from an xorshift64* stream. */
HETC_API void hetc_fill_random_input(float *data, int64_t count, uint64_t seed, int32_t input_index);

/* Runs the whole package once (synchronously). */
HETC_API hetc_status_t hetc_package_run(hetc_package_t *package);
HETC_API hetc_status_t hetc_package_get_output(hetc_package_t *package, int32_t index, float *data,
                                      int64_t count);

/* Latency of whole runs, by the host's monotonic clock, on the inputs set. */
typedef struct hetc_bench_options_t {
  int32_t warmup_runs; /* untimed runs first (>= 0) */
  int32_t runs;        /* timed runs (>= 1) */
} hetc_bench_options_t;

typedef struct hetc_bench_result_t {
  int32_t runs;
  /* Seconds per run. Percentiles by nearest rank: p50 is the smallest time
   * that at least half of the runs did not exceed. */
  double min, p50, p90, p99, max, mean;
} hetc_bench_result_t;

/* Runs the package warmup_runs times, then `runs` times timed. */
HETC_API hetc_status_t hetc_package_bench(hetc_package_t *package, const hetc_bench_options_t *options,
                                 hetc_bench_result_t *out_result);

#ifdef __cplusplus
}
#endif

#endif /* HETC_HETC_H_ */
