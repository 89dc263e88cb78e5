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
#include <stdio.h>

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

/* A call that never returns NULL, so that a compiler following a failure's
 * path knows that path returns. */
#if defined(__GNUC__) || defined(__clang__)
#define HETC_RETURNS_NONNULL __attribute__((returns_nonnull))
#else
#define HETC_RETURNS_NONNULL
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
/* A status of the caller's own, so that an application reports its
 * failures and hetc's through one type. Never NULL: HETC_STATUS_OK is
 * made HETC_STATUS_INTERNAL, and a static out-of-memory status stands in
 * when allocating fails; owned by the caller. */
HETC_API hetc_status_t hetc_status_new(hetc_status_code_t code, const char *format, ...)
    HETC_PLUGIN_PRINTF(2, 3) HETC_RETURNS_NONNULL;

/* ------------------------------------------------------------------------ */
/* Models                                                                   */
/* ------------------------------------------------------------------------ */

/* A loaded, validated model (api/model-format.md): every shape inferred,
 * every parameter loaded. Immutable once loaded; may be read from several
 * threads. */
typedef struct hetc_graph_t hetc_model_t;

/* Loads a model: model.json (and its weights), or an ONNX file (a name
 * ending in ".onnx"; api/model-format.md, "ONNX import"). A malformed file
 * gives HETC_STATUS_BAD_INPUT naming the file and the place in it (the
 * JSON path; the ONNX node, initializer or graph input). *out_model is
 * released with hetc_model_free. */
HETC_API hetc_status_t hetc_model_load(const char *path, hetc_model_t **out_model);

/* How a model is loaded. Fields are only ever appended: set struct_size to
 * sizeof(hetc_model_load_options_t) as compiled, the rest to 0 for the
 * defaults. */
typedef struct hetc_model_load_options_t {
  size_t struct_size;
  /* "NAME=D0xD1x...", one per graph input whose shape an ONNX model leaves
   * symbolic (or that should be given another one); borrowed. */
  const char *const *input_shapes;
  int32_t num_input_shapes;
  /* Told of what the import changed that a user should know of (weights
   * converted from float16 or float64, unused nodes dropped); may be NULL.
   * `message` is borrowed for the call. */
  void (*note)(void *user, const char *message);
  void *note_user;
  /* 1: the shapes only, no weights: a model.json's "weights" is checked
   * for its form but neither read nor made, an ONNX file's initializers
   * are dropped once imported. Enough to list the model's tasks and tune
   * them (what a tuning worker loads), at a fraction of the load's time
   * and memory; hetc_compile, hetc_compile_select, hetc_compare_model and
   * hetc_model_save refuse such a model (INVALID_ARGUMENT). */
  int32_t shapes_only;
} hetc_model_load_options_t;

/* hetc_model_load with options (NULL: the defaults). */
HETC_API hetc_status_t hetc_model_load_with_options(const char *path, const hetc_model_load_options_t *options,
                                                    hetc_model_t **out_model);

/* Writes `model` as model.json at json_path and its parameters as a
 * weights file beside it (json_path with ".json" replaced by ".weights"),
 * each written whole or not at all: what `hetc import` does. */
HETC_API hetc_status_t hetc_model_save(const hetc_model_t *model, const char *json_path);
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
  /* A secret key file (hetc_signing_keys_create): the package gets a
   * signature made with it over every file it holds (README.md, "Trust
   * model"). Read before any work; a malformed one is BAD_INPUT naming
   * the file. NULL: unsigned. Borrowed. */
  const char *sign_key;
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
  /* Channel slices (a conv2d that only picks a run of its input's channels,
   * as the ONNX importer writes Slice and Split) read where they lie in
   * their input: no kernel runs for them. */
  int32_t slice_views;
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

/* How a package is opened. Fields are only ever appended: set struct_size
 * to sizeof(hetc_package_open_options_t) as compiled, the rest to 0 for
 * the defaults. */
typedef struct hetc_package_open_options_t {
  size_t struct_size;
  /* A public key file (hetc_signing_keys_create): the package opens only
   * when hetc_package_check_signature finds it signed with that key's
   * secret key, before any of it is loaded. NULL: any package opens.
   * Borrowed. */
  const char *trusted_key;
} hetc_package_open_options_t;

/* hetc_package_open with options (NULL: the defaults). */
HETC_API hetc_status_t hetc_package_open_with_options(hetc_context_t *context, const char *path,
                                                      const hetc_package_open_options_t *options,
                                                      hetc_package_t **out_package);

/* NULL when the package at `path` carries a signature (PATH/signature,
 * written by hetc_compile with options->sign_key) made with the secret key
 * of the public key file `public_key_path`, and its files are exactly the
 * ones signed: manifest.json, weights.bin and every file under kernels/,
 * each with its BLAKE2b-256 digest. Otherwise BAD_INPUT naming the
 * package's file and the key file ("not signed", "signed by another key",
 * "changed since the package was signed", ...), or naming the key file
 * when it is malformed. Loads and runs nothing. */
HETC_API hetc_status_t hetc_package_check_signature(const char *path, const char *public_key_path);

/* Writes a new ed25519 key pair: the secret key to secret_path (mode 0600;
 * for hetc_compile's sign_key) and the public key to public_path (for
 * trusted_key). Neither may exist yet (BAD_INPUT); on failure neither is
 * left. The formats are in api/package-format.md, "Signed packages". */
HETC_API hetc_status_t hetc_signing_keys_create(const char *secret_path, const char *public_path);

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

/* Runs the package warmup_runs times, then `runs` times timed. While
 * hetc_interrupt_watch is in effect, a noted signal stops it between two
 * runs (HETC_STATUS_INTERRUPTED). */
HETC_API hetc_status_t hetc_package_bench(hetc_package_t *package, const hetc_bench_options_t *options,
                                 hetc_bench_result_t *out_result);


/* ------------------------------------------------------------------------ */
/* Environment and interrupts                                               */
/* ------------------------------------------------------------------------ */

/* Checks the environment variables hetc reads whose value can be wrong
 * (HETC_NUM_THREADS, HETC_LOG_LEVEL, HETC_PLUGIN_PATH, HETC_LOCK_TIMEOUT):
 * BAD_INPUT naming the first bad one. hetc_context_create checks them too;
 * calling this first refuses a bad value before any work starts. */
HETC_API hetc_status_t hetc_env_check(void);

/* Ctrl-C and kill during long work. While watched, the first SIGINT,
 * SIGTERM or SIGHUP is only noted: a compile, compare or tune polls for it
 * where it can leave things whole, removes what it was writing and returns
 * HETC_STATUS_INTERRUPTED; a second signal ends the process at once.
 * Process-wide: an application that handles these signals itself does not
 * watch. Installs the handlers (without SA_RESTART, so waits return early)
 * and forgets any earlier signal. */
HETC_API void hetc_interrupt_watch(void);
/* Restores the default actions; the signal noted, if any, stays noted. */
HETC_API void hetc_interrupt_unwatch(void);
/* The signal noted since hetc_interrupt_watch, else 0. Async-signal-safe. */
HETC_API int hetc_interrupt_signal(void);
/* From now on (while watched) the first signal too ends the process at
 * once, after `text` (copied, at most 1 KiB) is written to stderr: for work
 * that cannot stop half-way but leaves nothing half-written, such as
 * hetc_compile_select. NULL: back to noting. */
HETC_API void hetc_interrupt_set_last_words(const char *text);

/* ------------------------------------------------------------------------ */
/* Output files                                                             */
/* ------------------------------------------------------------------------ */

/* A whole new content for a file the user named, as hetc writes its own:
 * a regular file (or a path where nothing is yet) is written beside and
 * renamed over it on commit, so a reader sees the old content or the new,
 * never half; a symbolic link's target is replaced that way, the link
 * kept; a character device or FIFO (/dev/stdout, a pipe) is written
 * through. A directory, socket or block device is refused (BAD_INPUT).
 * Released by hetc_output_file_commit or hetc_output_file_abandon. */
typedef struct hetc_output_file_t hetc_output_file_t;
HETC_API hetc_status_t hetc_output_file_open(const char *path, hetc_output_file_t **out_file);
/* Failures name the path; the machine being full is STORAGE_FAILED. */
HETC_API hetc_status_t hetc_output_file_write(hetc_output_file_t *file, const void *data, size_t bytes);
/* Flushes, syncs and renames into place, then frees the object; on failure
 * nothing is replaced. */
HETC_API hetc_status_t hetc_output_file_commit(hetc_output_file_t *file);
/* Drops what was written (a written-through device keeps what it got) and
 * frees the object; NULL is fine. */
HETC_API void hetc_output_file_abandon(hetc_output_file_t *file);

/* ------------------------------------------------------------------------ */
/* Packages: inputs from files, steps, verification                         */
/* ------------------------------------------------------------------------ */

/* Sets input `index` from a file of raw little-endian float32 values,
 * row-major, exactly the input's element count (BAD_INPUT naming the file
 * otherwise). A FIFO or device is refused rather than waited on. */
HETC_API hetc_status_t hetc_package_set_input_file(hetc_package_t *package, int32_t index, const char *path);

/* One step of a package timed inside whole runs. */
typedef struct hetc_step_time_t {
  const char *name;   /* borrowed from the package */
  const char *target; /* the plugin it runs on (a copy: the destination's); borrowed */
  int32_t copy;       /* 1: a copy between devices; 0: a kernel or layout transform */
  /* Median over the runs of the wall time around the step's plugin calls:
   * what it costs inside the whole run, not alone. */
  double seconds;
} hetc_step_time_t;

/* Runs the package `runs` times (>= 1) on the inputs set, timing every
 * step; a signal noted while interrupts are watched stops it between runs,
 * as hetc_package_bench. *out_steps (one per step, in the plan's order;
 * *out_count of them) is released with hetc_free; its strings live as long
 * as the package. */
HETC_API hetc_status_t hetc_package_bench_steps(hetc_package_t *package, int32_t runs, hetc_step_time_t **out_steps,
                                                int32_t *out_count);

/* What hetc_package_verify found. Problems are listed, not only the first. */
typedef struct hetc_verify_report_t {
  int32_t steps, values;
  /* Files the manifest lists with their sizes and checksums, and their
   * bytes; 0 for a package of format version 1 or 2, which lists none. */
  int32_t files;
  uint64_t file_bytes;
  /* Owned: one problem per line ('\n' after each), `problems` of them;
   * NULL when none. */
  char *problem_text;
  int32_t problems;
  /* Always 0 and NULL: verify loads no artifact, since loading one runs
   * its code. Once whether every artifact loaded on this machine's
   * plugins, and why not; kept so that the struct keeps its layout. */
  int32_t loaded;
  char *not_loaded;
} hetc_verify_report_t;

/* Checks everything about the package at `path` that can be checked from
 * its files without running it or loading any of it: the manifest and
 * plan, every file's size and checksum (weights.bin's included), that each
 * artifact is of the format its name says (a shared object or object file
 * of this machine, a CUDA binary, text), files the manifest does not list,
 * and NaN or infinite parameters. Whether the plugins still load the
 * artifacts is found only by opening the package, which runs its code.
 * `context` is not used (NULL will do). The status is non-NULL only when
 * there is no manifest to check against (its defects are BAD_INPUT);
 * everything else is in *out_report, released with
 * hetc_verify_report_free. A package that passes is undamaged, not
 * trustworthy: checksums are no signature (README.md, "Trust model";
 * hetc_package_check_signature checks one). */
HETC_API hetc_status_t hetc_package_verify(hetc_context_t *context, const char *path,
                                           hetc_verify_report_t *out_report);
/* Frees what the report owns and zeroes it. */
HETC_API void hetc_verify_report_free(hetc_verify_report_t *report);

/* ------------------------------------------------------------------------ */
/* Plugins and devices                                                      */
/* ------------------------------------------------------------------------ */

typedef enum hetc_plugin_state_t {
  HETC_PLUGIN_STATE_READY,       /* loaded and probe said usable */
  HETC_PLUGIN_STATE_UNAVAILABLE, /* loaded, but probe or init said no */
  HETC_PLUGIN_STATE_REFUSED,     /* not loaded: dlopen, symbol, ABI, duplicate */
} hetc_plugin_state_t;

/* Where plugins are searched, in order, as one line for people.
 * *out_path is released with hetc_free. */
HETC_API hetc_status_t hetc_plugins_search_path(char **out_path);

/* Every candidate plugin file the context found, loaded or not. */
HETC_API int32_t hetc_context_plugin_count(const hetc_context_t *context);

typedef struct hetc_plugin_info_t {
  const char *path;   /* the candidate file */
  int32_t state;      /* hetc_plugin_state_t */
  const char *reason; /* why refused or unavailable; NULL when ready */
  /* The plugin's own table when it was loaded (identity, ABI version),
   * else NULL; borrowed. */
  const hetc_plugin_t *plugin;
  int32_t device_count; /* 0 unless ready */
} hetc_plugin_info_t;

/* Candidate `index`. A ready plugin's instance is created here, since that
 * is what enumerates its devices; an instance that fails turns the plugin
 * unavailable with the reason, which is why the context is not const.
 * Strings and the table are borrowed from the context. */
HETC_API hetc_status_t hetc_context_plugin_info(hetc_context_t *context, int32_t index,
                                                hetc_plugin_info_t *out_info);
/* Device `device_index` of ready candidate `index` (after
 * hetc_context_plugin_info), borrowed from the plugin; NULL when it has no
 * such device. */
HETC_API const hetc_plugin_device_t *hetc_context_plugin_device(const hetc_context_t *context, int32_t index,
                                                                int32_t device_index);
/* A target as compile takes it (a ready plugin's name), with its instance
 * created: its candidate index. NOT_FOUND lists the targets there are;
 * UNAVAILABLE gives the reason. */
HETC_API hetc_status_t hetc_context_target(hetc_context_t *context, const char *target, int32_t *out_index);

/* Device peaks. A plugin measures its device's fp32 peak when its
 * instance is created; on a shared machine one measurement can come out
 * far low but never high, so the records store keeps the best measured per
 * device fingerprint, and the maximum over runs converges on the real
 * peak. */
typedef enum hetc_peaks_mode_t {
  HETC_PEAKS_OFF = 0,           /* the plugins' own figures only */
  HETC_PEAKS_READ = 1,          /* read the kept peaks of a store that exists; write nothing */
  HETC_PEAKS_RECORD = 2,        /* ... and fold each fresh figure into it */
  HETC_PEAKS_RECORD_CREATE = 3, /* ... creating the store (and the per-user store's directories) when missing */
} hetc_peaks_mode_t;

/* The context's device peaks are kept in the records store at
 * records_path (NULL: the per-user store): instances that exist are
 * resolved now, later ones as they are created. A context already keeping
 * peaks in a mode at least as strong is left as it is. A store that cannot
 * be opened or written is a warning on stderr (once per context), never a
 * failure: the plugins' own figures stand. */
HETC_API void hetc_context_keep_peaks(hetc_context_t *context, const char *records_path, hetc_peaks_mode_t mode);

/* A device's peak as this process knows it (per fingerprint, for the life
 * of the process). */
typedef struct hetc_device_peak_t {
  double gflops;       /* the effective peak: the higher of the two below; 0 unknown */
  double fresh_gflops; /* the plugin's own figure this run; 0 unknown */
  double kept_gflops;  /* the store's best for the fingerprint (this run's folded in); 0 none */
  int64_t runs;        /* measurements that best is the best of; 0 none kept */
  int from_kept;       /* 1 when gflops is the kept figure, above this run's */
} hetc_device_peak_t;
HETC_API void hetc_device_peak(const hetc_plugin_device_t *device, hetc_device_peak_t *out_peak);
/* Where the figure comes from when it is the kept one, as `hetc plugins`
 * prints it after "peak 233.1 GFLOPS fp32": " (best of 7 runs; this run
 * 118.2)"; "" when it is this run's own. */
HETC_API void hetc_device_peak_source(const hetc_device_peak_t *peak, char *out, size_t size);

/* ------------------------------------------------------------------------ */
/* Task spaces                                                              */
/* ------------------------------------------------------------------------ */

/* A task's whole space on a target: the union over every template the
 * backend offers for the workload, each template's knobs with their
 * candidates (README.md, "Tuning"). Immutable; released with
 * hetc_task_space_free. */
typedef struct hetc_task_space_t hetc_task_space_t;

/* The space of task `task` (0-based, in hetc_model_tasks' order) of
 * `model` on device 0 of `target`, with the space overrides file
 * overrides_path applied (NULL: none; api/space-overrides.md). A malformed
 * overrides file, or one naming a template or knob the task does not
 * have, is BAD_INPUT; a target without a kernel for the task UNSUPPORTED;
 * a task out of range NOT_FOUND. `context` must outlive the space. */
HETC_API hetc_status_t hetc_model_task_space(hetc_context_t *context, const hetc_model_t *model, int32_t task,
                                             const char *target, const char *overrides_path,
                                             hetc_task_space_t **out_space);
HETC_API void hetc_task_space_free(hetc_task_space_t *space);
/* Prints the space like AutoTVM's ConfigSpace: the total and valid length,
 * then per template its name and version, length, valid count and global
 * range, and each knob with its kind, candidate count and first
 * candidates; a template that defined no space, with its reason. */
HETC_API hetc_status_t hetc_task_space_print(const hetc_task_space_t *space, FILE *out);

/* ------------------------------------------------------------------------ */
/* Tuning records                                                           */
/* ------------------------------------------------------------------------ */

/* The tuning records store (api/records-format.md): an SQLite file that
 * several processes may read and write at once. One handle is used by one
 * thread at a time; never carry an open store across fork(). Errors name
 * the file: not a records store, or a newer schema, BAD_INPUT; a store that
 * does not exist, opened other than to create it, NOT_FOUND; still locked
 * by another writer after the busy timeout, UNAVAILABLE. */
typedef struct hetc_records_t hetc_records_t;

/* What a store is opened for. Only writers that make records create a
 * store (hetc tune, hetc records import); everything else refuses one
 * that does not exist, naming it. */
typedef enum hetc_records_mode_t {
  /* An existing store, read only: nothing is written to the file, not even
   * its journal mode or an upgrade of an older schema (versions 1 to 5 are
   * read as they are). A store the process may not write, in a directory
   * it may not write, is read as the file stands. */
  HETC_RECORDS_READ = 0,
  /* As READ, but the caches (transfers, selections, peaks) are written when
   * the file can be written and holds the current schema (hetc compile);
   * otherwise they are left alone, silently. */
  HETC_RECORDS_CACHE = 1,
  /* An existing store, read and written; an older schema is upgraded. */
  HETC_RECORDS_WRITE = 2,
  /* As WRITE, creating the store when missing: made whole under a
   * temporary name beside it and linked into place, so that processes
   * starting together on a new store all find a whole one. */
  HETC_RECORDS_CREATE = 3,
} hetc_records_mode_t;

/* Opens the store at `path` for `mode`; NULL means the per-user store
 * ($HETC_RECORDS, else $XDG_DATA_HOME/hetc/records.sqlite, else
 * ~/.local/share/hetc/records.sqlite), whose directories are created
 * (CREATE only) when missing (an explicit path's directory must exist). An
 * empty path is refused. An existing empty file is no store (BAD_INPUT)
 * except to CREATE, which makes it one. *out_store is released with
 * hetc_records_close. */
HETC_API hetc_status_t hetc_records_open_as(const char *path, hetc_records_mode_t mode, hetc_records_t **out_store);
/* Closes the store, releasing the claims made through it; NULL is fine. */
HETC_API void hetc_records_close(hetc_records_t *store);
/* The file's path; borrowed, lives as long as the store. */
HETC_API const char *hetc_records_path(const hetc_records_t *store);

/* AutoTVM's error taxonomy. The values are stored in records files and
 * databases: never renumbered, only appended to. */
typedef enum hetc_record_error_t {
  HETC_RECORD_OK = 0,
  HETC_RECORD_INSTANTIATION = 1,  /* the template refused the config */
  HETC_RECORD_COMPILE_HOST = 2,   /* host-side code generation failed */
  HETC_RECORD_COMPILE_DEVICE = 3, /* the device compiler failed */
  HETC_RECORD_DEVICE_LIMITS = 4,  /* threads, registers, local memory */
  HETC_RECORD_RUNTIME_DEVICE = 5, /* launch failed or the worker crashed */
  HETC_RECORD_WRONG_ANSWER = 6,   /* output differs from the reference */
  HETC_RECORD_BUILD_TIMEOUT = 7,
  HETC_RECORD_RUN_TIMEOUT = 8,
  HETC_RECORD_UNKNOWN = 9,
} hetc_record_error_t;

/* Stable lower-case names ("ok", "instantiation", "compile_host", ...,
 * "unknown"), used in the store, JSON Lines and messages. */
HETC_API const char *hetc_record_error_name(hetc_record_error_t error);

#define HETC_RECORD_MAX_COSTS 32

/* One measurement. Every string is owned by the record, or by the list
 * that holds it. */
typedef struct hetc_record_t {
  char *target;             /* plugin name: "cpu", "vec", "cuda" */
  char *plugin_version;     /* hetc_plugin_t.version */
  char *device_kind;        /* "cpu", "gpu" or "accelerator" */
  char *device_fingerprint; /* hetc_plugin_device_t.fingerprint */
  char *template_name;
  uint32_t template_version;
  char *workload_key;       /* layout-free */
  int64_t config_index;     /* index in the template's own space */
  /* The config's explicit entities, authoritative over config_index:
   * a JSON object {"knob": [v, ...], ...} in the space's knob order. */
  char *config_json;
  int32_t num_costs;        /* seconds per run, one per repeat; 0 unless ok */
  double costs[HETC_RECORD_MAX_COSTS];
  hetc_record_error_t error;
  char *error_message;      /* NULL when ok */
  double build_seconds;
  double total_seconds;     /* build + measure, as the tuner waited */
  int64_t timestamp;        /* Unix seconds */
  char *hetc_version;
} hetc_record_t;

/* Median of the costs (the record's figure of merit); +inf when the record
 * is not ok or has no costs. */
HETC_API double hetc_record_median_cost(const hetc_record_t *record);

/* Which records a query, best or export considers. Strings are borrowed;
 * a NULL string matches anything. Start from hetc_record_filter_any(),
 * which sets template_version to -1 ("any version"). */
typedef struct hetc_record_filter_t {
  const char *target;
  const char *device_fingerprint;
  const char *device_kind;
  const char *workload_key;
  const char *template_name;
  int64_t template_version; /* -1: any */
  int only_ok;              /* 1: only records whose error is ok */
  int64_t limit;            /* 0: all; else at most this many */
} hetc_record_filter_t;

/* A filter that matches every record. */
HETC_API hetc_record_filter_t hetc_record_filter_any(void);

/* Records handed to the caller: `items` (count of them) and every string
 * in them are owned by the list and released by hetc_record_list_free. */
typedef struct hetc_record_list_t {
  int32_t count;
  hetc_record_t *items;
} hetc_record_list_t;

/* The matching records, oldest first (by timestamp, then by the order in
 * which they were added); with a limit, the oldest `limit` of them.
 * NULL filter: everything. *out_list is overwritten (not freed first). */
HETC_API hetc_status_t hetc_records_query(hetc_records_t *store, const hetc_record_filter_t *filter,
                                          hetc_record_list_t *out_list);
/* The best record of each (target, device_fingerprint, workload_key) among
 * those matching: the ok record with the lowest median cost (ties: the
 * oldest; one without costs is never the best), ordered by target,
 * fingerprint and workload key. The filter's limit is ignored. */
HETC_API hetc_status_t hetc_records_best_each(hetc_records_t *store, const hetc_record_filter_t *filter,
                                              hetc_record_list_t *out_list);
/* Frees the items and zeroes the list; NULL is fine. */
HETC_API void hetc_record_list_free(hetc_record_list_t *list);

/* Drops what is no longer worth keeping, in one transaction: ok records
 * beyond the `keep` best (>= 0) of each (target, device_fingerprint,
 * workload_key, template_name, template_version), and failed records of a
 * template version that is not the newest the store holds. Failed records
 * of current versions are all kept: failed configs are never measured
 * again. *out_removed (may be NULL) receives how many were deleted. */
HETC_API hetc_status_t hetc_records_prune(hetc_records_t *store, int64_t keep, int64_t *out_removed);
/* Number of records in the store. */
HETC_API hetc_status_t hetc_records_count(hetc_records_t *store, int64_t *out_count);

/* Records as JSON Lines in AutoTVM's record shape, for interchange
 * (api/records-format.md, with every message the importer gives): export
 * -> import -> export is byte-identical. A malformed line is
 * INVALID_ARGUMENT "PATH:LINE: <what is wrong>" for the first one, with the
 * number of further malformed lines. */

/* Writes the store's records that match `filter` (NULL: all), oldest
 * first, one per line, to `path`, whole or not at all (as an output file,
 * above). *out_count (may be NULL) receives the number of lines. */
HETC_API hetc_status_t hetc_records_export_jsonl(hetc_records_t *store, const hetc_record_filter_t *filter,
                                                 const char *path, int64_t *out_count);
/* Reads every line of `path` without a store: NULL when it is a regular
 * file of well-formed records (their count in *out_records, may be NULL).
 * A pipe is only opened (it cannot be read twice; *out_records is -1).
 * Checking a file before opening (maybe creating) the store means a bad
 * file leaves no new store behind. */
HETC_API hetc_status_t hetc_records_check_jsonl(const char *path, int64_t *out_records);
/* Adds every record of `path` in one transaction, all or nothing,
 * skipping configs the store already holds (importing a file twice adds
 * nothing the second time). *out_imported and *out_duplicates (each may
 * be NULL) receive how many lines were added and how many configs were
 * there already. */
HETC_API hetc_status_t hetc_records_import_jsonl(hetc_records_t *store, const char *path, int32_t *out_imported,
                                                 int32_t *out_duplicates);

/* ------------------------------------------------------------------------ */
/* Tuning                                                                   */
/* ------------------------------------------------------------------------ */

/* Tunes every task of a model (README.md, "Tuning"): each round a search
 * proposes a batch of configs, measurement workers build and time them
 * (a candidate that hangs or crashes takes only its worker down), every
 * result goes to the records store and the cost model learns from it.
 * Records already in the store are never measured again, so an
 * interrupted run resumes; tuners sharing a store never measure a config
 * twice. Initialise with designated initialisers: 0 means the default. */
typedef struct hetc_tuner_options_t {
  const char *records_path;   /* created when missing; NULL: the per-user store */
  const char *overrides_path; /* space overrides (api/space-overrides.md); NULL: none */
  /* A records store (or .jsonl file) replayed as the device; candidates
   * it does not hold are not proposed. NULL: measure for real. */
  const char *simulate_path;
  const char *search;      /* "model" (NULL), "random", "grid" or "genetic" */
  int32_t trials;          /* per task and target; 0: 200 */
  int32_t early_stopping;  /* stop a task after this many trials without improvement; 0: never */
  double time_budget_s;    /* the whole run, spread over tasks by their share of the time; 0: none */
  int32_t batch;           /* candidates per round; 0: 16 */
  int32_t no_transfer;     /* 1: the cost model learns from this task's records only */
  int32_t build_workers;   /* parallel builds; 0: the online cores */
  double build_timeout_s;  /* per candidate's build; 0: 60 */
  double run_timeout_s;    /* per candidate's check and timing; 0: 30 */
  uint64_t seed;           /* of the search (`hetc tune` uses 1 unless told) */
  int32_t check;           /* 1: compare each candidate's output with the reference executor */
  /* Only these tasks, by the 1-based numbers `hetc tasks` prints; NULL:
   * every task. */
  const int32_t *task_numbers;
  int32_t num_task_numbers;
  FILE *progress;          /* progress lines; NULL: quiet */
} hetc_tuner_options_t;

/* Refuses what hetc_tuner_tune_graph would refuse of these arguments --
 * a target no plugin serves, a task number (options->task_numbers) beyond
 * the model's tasks -- with the same status, before anything is opened:
 * called before hetc_tuner_open, a refused run leaves no store behind.
 * Only the plugins are loaded, to look the targets up. `model` may be
 * NULL: the targets alone are checked. */
HETC_API hetc_status_t hetc_tune_check(const hetc_model_t *model, const char *const *targets, int32_t num_targets,
                                       const hetc_tuner_options_t *options);

/* Opens the records store, the plugins and (with transfer) the cost
 * model. The options' strings and task numbers are borrowed until
 * hetc_tuner_free. A malformed overrides file is BAD_INPUT. */
typedef struct hetc_tuner_t hetc_tuner_t;
HETC_API hetc_status_t hetc_tuner_open(const hetc_tuner_options_t *options, hetc_tuner_t **out_tuner);
/* Stops the workers and releases the store's claims; NULL is fine. */
HETC_API void hetc_tuner_free(hetc_tuner_t *tuner);

/* One task on one target after tuning. */
typedef struct hetc_tune_task_result_t {
  int32_t task_number;     /* 1-based, as `hetc tasks` prints it */
  char workload_key[256];
  char target[32];
  char template_name[64];  /* of the best config; "" when none succeeded */
  double flops;            /* of one run */
  int32_t count;           /* nodes of the model with this workload */
  double best_seconds;     /* median of the best record; 0 when none */
  double best_gflops;
  double peak_fraction;    /* best_gflops / the device's peak */
  int32_t trials;          /* measured (or replayed) by this run */
  int32_t failed;          /* of those, with an error */
  int32_t from_store;      /* records found in the store before the run */
  /* Trials (1-based, counting this run's only) after which the best was
   * within 95% of this run's final best throughput (in simulation, of the
   * replayed best); 0 when it never was. */
  int32_t trials_to_95;
  /* Simulation: the best throughput among the replayed records, which
   * trials_to_95 is then measured against. */
  double replay_best_gflops;
  double seconds;          /* wall time spent on the task */
  double measure_seconds;  /* of which waiting for builds and measurements */
} hetc_tune_task_result_t;

/* Every task of `model` on every target (NAME, or NAME:INDEX for one
 * device), spending the time budget across tasks by their share of the
 * model's time. *out_results (one per task and target, *out_count of them)
 * is released with hetc_free. After hetc_interrupt_watch, a signal stops
 * the run between batches (or drops the batch in flight). */
HETC_API hetc_status_t hetc_tuner_tune_graph(hetc_tuner_t *tuner, const hetc_model_t *model,
                                             const char *const *targets, int32_t num_targets,
                                             hetc_tune_task_result_t **out_results, int32_t *out_count);
/* Records this tuner added to its store so far: what an interrupted run
 * kept. */
HETC_API int64_t hetc_tuner_records_written(const hetc_tuner_t *tuner);
/* Candidates of the batch in flight when a signal stopped the run:
 * dropped, nothing of them recorded; 0 otherwise. */
HETC_API int32_t hetc_tuner_dropped(const hetc_tuner_t *tuner);
/* The store's path (borrowed). */
HETC_API const char *hetc_tuner_records_path(const hetc_tuner_t *tuner);
/* Seconds since hetc_tuner_open not spent waiting for builds and
 * measurements (loading plugins, spaces, search, model, features, store):
 * the tuner's overhead. */
HETC_API double hetc_tuner_overhead_seconds(const hetc_tuner_t *tuner);

/* Several tuning jobs at once on one machine (`hetc tune a.json b.json`):
 * each job is a child process running a tuner, started with the
 * environment variable HETC_TUNE_TURNS_FD naming its end of a socketpair
 * (AF_UNIX, SOCK_STREAM); the parent calls this with its ends. Every stage
 * of a job that needs the machine asks for its turn there first: builds
 * and the cost model's work share the cores, a measurement holds its
 * device alone (on a CPU device, the cores too). Turns are granted in the
 * order asked, a waiting turn holding back the later ones it conflicts
 * with, so that no job starves and one job builds while another measures
 * on another device; a job waiting for its turn holds nothing. A job that
 * dies gives back what it held. Returns when every job's socket has closed,
 * with each job reaped: out_statuses[k] is pids[k]'s waitpid status. */
#define HETC_TUNE_TURNS_FD "HETC_TUNE_TURNS_FD"
HETC_API hetc_status_t hetc_tune_serve_turns(const int *sockets, const int *pids, int32_t count, int *out_statuses);

/* Graph-level selection alone (`hetc tune` ends with it): chooses the plan
 * of `model` on the options' targets as hetc_compile would, over the
 * records' candidates, and keeps it in the records store for the next
 * compile, which then builds it without costing the candidates again;
 * writes no package. out_report (may be NULL) gets the expected latency of
 * the plan and of the best plan at the templates' default configs. */
HETC_API hetc_status_t hetc_compile_select(hetc_context_t *context, const hetc_model_t *model,
                                           const hetc_compile_options_t *options,
                                           hetc_compile_report_t *out_report);

/* ------------------------------------------------------------------------ */
/* The tuning queue: jobs for workers on many machines                      */
/* ------------------------------------------------------------------------ */

/* A queue of tuning jobs in a PostgreSQL database (README.md, "Tuning many
 * models on many machines"; the tables are api/queue-format.md). One
 * handle is one connection: use it from one thread at a time. */
typedef struct hetc_queue_t hetc_queue_t;

/* Connects to `uri` (postgresql://USER[:PASSWORD]@HOST[:PORT]/DATABASE, or
 * postgres://) and creates the queue's tables on first use. BAD_INPUT,
 * naming the URI without its password: a URI of another scheme or one
 * libpq does not parse, a server that cannot be reached or refuses the
 * login, a database whose hetc tables are of another schema version.
 * Released with hetc_queue_close. */
HETC_API hetc_status_t hetc_queue_open(const char *uri, hetc_queue_t **out_queue);
/* NULL is fine. */
HETC_API void hetc_queue_close(hetc_queue_t *queue);
/* The URI as messages name it, without a password (borrowed). */
HETC_API const char *hetc_queue_uri(const hetc_queue_t *queue);

/* A job: every task of every model, tuned on every target (as one `hetc
 * tune` would). Initialise with designated initialisers and struct_size =
 * sizeof: fields a later hetc adds read as 0 from an older caller. */
typedef struct hetc_job_spec_t {
  size_t struct_size;
  /* The models: each file is stored with the job (workers on other
   * machines load it from there), and `models[k]` is model_paths[k]
   * loaded (with input_shapes[k], the --input-shape text or NULL, which is
   * stored too). */
  const char *const *model_paths;
  const hetc_model_t *const *models;
  const char *const *input_shapes; /* may be NULL */
  int32_t num_models;
  /* Target names: each must be a plugin of this machine or a target a
   * worker of the queue registered (BAD_INPUT otherwise). */
  const char *const *targets;
  int32_t num_targets;
  int32_t trials;   /* per task and target; 0: 200 */
  int32_t priority; /* higher first; -1000 to 1000 */
  const char *search; /* as hetc_tuner_options_t's; NULL: "model" */
  uint64_t seed;      /* of the search; 0: 1 */
} hetc_job_spec_t;

/* Stores the job and its tasks (one per task of each model and target),
 * all at once or not at all. The models' tasks come from
 * hetc_model_tasks. Each file is loaded as a worker will load it, from
 * the stored bytes alone with its shapes only: one that needs a file
 * beside it to be loaded so (an ONNX shape kept as external data) is
 * BAD_INPUT naming it. `context` supplies this machine's plugins for the
 * target check. */
HETC_API hetc_status_t hetc_queue_submit(hetc_context_t *context, hetc_queue_t *queue, const hetc_job_spec_t *spec,
                                         int64_t *out_job_id);

typedef enum hetc_job_state_t {
  HETC_JOB_QUEUED = 0,    /* no task started */
  HETC_JOB_RUNNING = 1,   /* some task started, not every task ended */
  HETC_JOB_DONE = 2,      /* every task tuned */
  HETC_JOB_CANCELLED = 3, /* by hetc_queue_cancel */
  HETC_JOB_FAILED = 4,    /* a task: tuning it failed (its message says why); a job: every task ended, some failed */
} hetc_job_state_t;

/* A job as `hetc jobs list` shows it. */
typedef struct hetc_job_info_t {
  int64_t id;
  int32_t state;    /* hetc_job_state_t */
  int32_t priority;
  int64_t submitted_at; /* seconds since the epoch */
  char submitter[128];  /* host:pid */
  char models[512];     /* the model files' names, comma-separated (cut at 511 bytes) */
  char targets[256];    /* comma-separated */
  int32_t tasks;        /* task and target pairs */
  int32_t tasks_done;   /* ended: tuned, or failed */
  int32_t tasks_failed;
  int64_t trials;       /* asked for, over every task */
  int64_t trials_done;
} hetc_job_info_t;

/* Every job, newest first. *out_jobs (*out_count entries) is released with
 * hetc_free. */
HETC_API hetc_status_t hetc_queue_jobs(hetc_queue_t *queue, hetc_job_info_t **out_jobs, int32_t *out_count);

/* One task of a job on one target, as `hetc jobs show` prints it. */
typedef struct hetc_job_task_t {
  int32_t model_index;  /* into the job's models */
  int32_t task_number;  /* 1-based, as `hetc tasks` prints it */
  char target[32];
  char workload_key[256];
  int32_t count;        /* nodes of the model with this workload */
  double flops;         /* of one run */
  int32_t trials;       /* asked for */
  int32_t trials_done;
  double best_seconds;  /* 0 before a trial succeeded */
  int32_t state;        /* hetc_job_state_t: queued, running (claimed), done, cancelled, failed */
  char worker[128];     /* the worker holding it: host:pid; "" when none */
  char message[256];    /* why it failed; "" otherwise */
} hetc_job_task_t;

/* Job `job_id` and its tasks (*out_tasks, *out_count entries, released
 * with hetc_free; may be NULL when only the job is wanted). NOT_FOUND for
 * a job the queue does not hold. */
HETC_API hetc_status_t hetc_queue_job(hetc_queue_t *queue, int64_t job_id, hetc_job_info_t *out_job,
                                      hetc_job_task_t **out_tasks, int32_t *out_count);

/* A worker registered in the queue, as `hetc jobs show` lists them. */
typedef struct hetc_queue_worker_t {
  int64_t id;
  char name[128];     /* host:pid */
  char targets[256];  /* comma-separated */
  double heartbeat_age_s; /* since its last heartbeat */
  char doing[256];    /* "idle", or the task and its trials so far */
} hetc_queue_worker_t;

/* Every registered worker, oldest first. *out_workers (*out_count
 * entries) is released with hetc_free. */
HETC_API hetc_status_t hetc_queue_workers(hetc_queue_t *queue, hetc_queue_worker_t **out_workers, int32_t *out_count);

/* Runs a worker: registers this process in the queue with its targets,
 * then claims tasks one at a time and tunes each (as `hetc tune` tunes one
 * task of a model, into the worker's records store) while a thread renews
 * its leases, until there has been nothing to claim for idle_exit_s or a
 * signal is noted (hetc_interrupt_watch). A task whose lease was lost or
 * whose job was cancelled is stopped after its batch in flight; one whose
 * tuning fails is marked failed with the message, and the worker goes on.
 * On the way out the worker gives back the task it holds. Initialise with
 * designated initialisers and struct_size = sizeof. */
typedef struct hetc_worker_options_t {
  size_t struct_size;
  const char *const *targets; /* NULL: every ready plugin of the context */
  int32_t num_targets;
  const char *records_path;   /* the store tasks are tuned into; NULL: the queue's database */
  int32_t lease_s;            /* how long a claim outlives the last heartbeat; 0: 60 */
  double idle_exit_s;         /* return after this long with nothing to claim; 0: wait on */
  int32_t build_workers;      /* parallel builds; 0: the online cores */
  int32_t batch;              /* candidates per round; 0: 16 */
  FILE *progress;             /* a line per task claimed and ended; NULL: quiet */
  /* Simulation (the scaling benchmark): a records store replayed as every
   * target's device, each batch taking the time its records took, asleep;
   * each job's records are kept under a device of its own, "simulated:
   * job N". NULL: measure for real. */
  const char *simulate_path;
} hetc_worker_options_t;

typedef struct hetc_worker_summary_t {
  int32_t tasks_done;    /* tuned to their trials */
  int32_t tasks_failed;
  int32_t tasks_stopped; /* lease lost or job cancelled */
  int64_t trials;        /* measured by this worker */
  /* How long the tasks' claims took (the claiming statement's round
   * trip), over the claims that got a task. */
  int32_t claims;
  double claim_p50_s, claim_p95_s, claim_max_s;
} hetc_worker_summary_t;

HETC_API hetc_status_t hetc_queue_work(hetc_context_t *context, hetc_queue_t *queue,
                                       const hetc_worker_options_t *options, hetc_worker_summary_t *out_summary);

/* Cancels job `job_id`: no worker claims its tasks any more, and a worker
 * tuning one stops after its batch in flight. NOT_FOUND for a job the
 * queue does not hold; a job done, failed or cancelled already is left as
 * it is and *out_state (may be NULL) says which. */
HETC_API hetc_status_t hetc_queue_cancel(hetc_queue_t *queue, int64_t job_id, int32_t *out_state);

/* ------------------------------------------------------------------------ */
/* Comparing devices                                                        */
/* ------------------------------------------------------------------------ */

/* A model measured on several devices side by side (`hetc compare`): per
 * task and device, every template the plugin offers, built with the config
 * the records choose for it and timed; end to end, one package per device
 * and one placed by cost over all of them, compiled and benchmarked. */
#define HETC_COMPARE_MAX_DEVICES 8

typedef struct hetc_compare_options_t {
  const char *const *targets; /* 1 to HETC_COMPARE_MAX_DEVICES, each once */
  int32_t num_targets;
  const char *records_path; /* NULL: the per-user store when there is one */
  int32_t runs, warmup_runs; /* of each package's benchmark */
  /* Where packages go: NULL compiles into a temporary directory that is
   * removed at the end; otherwise DIR/<target>.hetc and DIR/hetero.hetc
   * are kept (DIR is created when missing). */
  const char *keep_dir;
  FILE *progress; /* a line per task and device and per package; NULL: none */
} hetc_compare_options_t;

typedef struct hetc_compare_result_t hetc_compare_result_t;

/* Measures `model` on the options' targets. A target that cannot run here
 * is reported as skipped with its reason (an error only when no target is
 * left); a template that does not build, or a package that does not
 * compile, is reported with its message. An unknown target is NOT_FOUND,
 * a target listed twice BAD_INPUT. *out_result is released with
 * hetc_compare_result_destroy. */
HETC_API hetc_status_t hetc_compare_model(hetc_context_t *context, const hetc_model_t *model,
                                          const hetc_compare_options_t *options,
                                          hetc_compare_result_t **out_result);
HETC_API void hetc_compare_result_destroy(hetc_compare_result_t *result);

typedef enum hetc_compare_format_t {
  HETC_COMPARE_TEXT = 0, /* the tables `hetc compare` prints */
  HETC_COMPARE_CSV = 1,  /* one row per task and device and per package (column `kind`) */
  HETC_COMPARE_JSON = 2, /* everything, every template included */
  HETC_COMPARE_HTML = 3, /* a self-contained report with charts */
} hetc_compare_format_t;

/* Writes the whole report in `format` to `out`. */
HETC_API hetc_status_t hetc_compare_write(const hetc_compare_result_t *result, hetc_compare_format_t format,
                                          FILE *out);
/* Writes it to `path`, whole or not at all (as an output file, above). */
HETC_API hetc_status_t hetc_compare_write_file(const hetc_compare_result_t *result, hetc_compare_format_t format,
                                               const char *path);

/* ------------------------------------------------------------------------ */
/* Plugin conformance                                                       */
/* ------------------------------------------------------------------------ */

/* `hetc plugin-check`: the conformance run any plugin can be put through
 * (api/plugin-guide.md, "Testing"). The plugin is never loaded into the
 * calling process: children load it, one check at a time, and a crash or
 * a hang becomes that check's failure. */
typedef struct hetc_plugin_check_options_t {
  int32_t device;          /* the device to check; -1: every device */
  int32_t quick;           /* fewer workloads and sampled configs */
  int32_t item_timeout_s;  /* seconds one item may take (crash after) */
} hetc_plugin_check_options_t;

/* Every device, the full suite, 600 s per item. */
HETC_API hetc_plugin_check_options_t hetc_plugin_check_default_options(void);

typedef struct hetc_plugin_check_summary_t {
  int32_t passed, failed, skipped;
} hetc_plugin_check_summary_t;

/* Checks the plugin file `path`, printing one line per result to
 * `report`, and counts the results. The status is non-NULL only when the
 * check could not be carried out (no such file: IO_ERROR; fork or pipe
 * failed); every defect of the plugin is a failed result instead. */
HETC_API hetc_status_t hetc_plugin_check(const char *path, const hetc_plugin_check_options_t *options, FILE *report,
                                         hetc_plugin_check_summary_t *out_summary);

#ifdef __cplusplus
}
#endif

#endif /* HETC_HETC_H_ */
