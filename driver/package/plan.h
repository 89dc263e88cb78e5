/* driver/package/plan.h -- the execution plan a package holds.
 *
 * Compilation produces a plan; the package writer serialises it as
 * manifest.json beside weights.bin and the plugins' artifacts; the runtime
 * reads it back and executes it. A plan is a list of steps over plan
 * values: each value is one tensor in one layout on one device, stored in a
 * buffer slot of that device (slots are reused across values whose
 * lifetimes do not overlap). A plan owns everything it points to. */
#ifndef HETC_DRIVER_PACKAGE_PLAN_H_
#define HETC_DRIVER_PACKAGE_PLAN_H_

#include <stdint.h>

#include "common/status.h"
#include "graph/graph.h"

#define HETC_PACKAGE_FORMAT "hetc-package"
/* Version 2 added each value's offset in its slot (views for concats);
 * version 3 the list of the package's files with their sizes and
 * checksums. */
#define HETC_PACKAGE_VERSION 4
#define HETC_PACKAGE_MANIFEST "manifest.json"
#define HETC_PACKAGE_WEIGHTS "weights.bin"
#define HETC_PACKAGE_KERNEL_DIR "kernels"
/* The largest manifest.json hetc reads; compile refuses to write a larger
 * one, so that every package it writes opens. A 100000-node model (the
 * model format's limit) needs about 80 MB. */
#define HETC_PACKAGE_MAX_MANIFEST_BYTES ((size_t)256 << 20)
/* The most files a manifest may list (weights.bin and the artifacts). */
#define HETC_PACKAGE_MAX_FILES 1000000

typedef struct hetc_plan_device_t {
  char *target;         /* owned: plugin target name */
  char *plugin_version; /* owned */
  int32_t device_index; /* within the plugin */
  char *fingerprint;    /* owned: device fingerprint at compile time */
} hetc_plan_device_t;

typedef struct hetc_plan_value_t {
  char *name;                /* owned: graph value name (+ layout/device) */
  hetc_plugin_tensor_t type; /* logical shape and physical layout */
  int32_t device;            /* index into plan devices */
  int32_t slot;              /* buffer slot */
  uint64_t offset;           /* bytes into the slot, a multiple of 64: a concat's input
                              * lives in its slice of the concat's value */
  uint64_t bytes;            /* bytes in its layout */
  /* A channel slice read where it lies (no step writes it): the value whose
   * bytes it is a part of; -1 otherwise. Since package version 4. */
  int32_t part_of;
} hetc_plan_value_t;

typedef enum hetc_plan_step_kind_t {
  HETC_PLAN_STEP_KERNEL, /* run an artifact */
  HETC_PLAN_STEP_COPY,   /* copy a value to another device, via the host */
} hetc_plan_step_kind_t;

typedef struct hetc_plan_param_t {
  uint64_t offset; /* in weights.bin, 64-byte aligned */
  uint64_t bytes;
} hetc_plan_param_t;

typedef struct hetc_plan_step_t {
  hetc_plan_step_kind_t kind;
  char *name;     /* owned: node name, or what a transform/copy is for */
  int32_t device; /* where it runs (copy: the destination) */
  /* KERNEL: what to load. The workload's inputs point at `input_types`. */
  hetc_plugin_workload_t workload;
  hetc_plugin_tensor_t *input_types; /* owned, workload.num_inputs */
  char *template_name;               /* owned */
  int32_t template_index;
  int32_t num_knobs;
  char **knob_names;                /* owned */
  int32_t *knob_counts;             /* owned */
  int64_t **knob_values;            /* owned */
  char *artifact_prefix;            /* owned: file prefix under kernels/ */
  uint64_t workspace_bytes;
  double avg_inner_loop_length;
  /* Values read (activation inputs in order) and written. */
  int32_t num_inputs;
  int32_t *inputs; /* owned: plan value ids */
  int32_t output;
  int32_t num_params;
  hetc_plan_param_t *params; /* owned */
} hetc_plan_step_t;

typedef struct hetc_plan_slot_t {
  int32_t device;
  uint64_t bytes;
} hetc_plan_slot_t;

typedef struct hetc_plan_io_t {
  char *name;    /* owned: graph input/output name */
  int32_t value; /* plan value (ROW_MAJOR) */
} hetc_plan_io_t;

/* One file of the package besides manifest.json. */
typedef struct hetc_plan_file_t {
  char *path;       /* owned: "weights.bin" or "kernels/NAME" */
  uint64_t bytes;
  uint64_t fnv1a64; /* of the whole content (FNV-1a, 64 bits) */
  /* BLAKE2b-256 of the content, for a signature (package_sign.h): FNV-1a
   * catches damage, but anyone can make a file that matches it. Set by
   * hetc_package_files_describe when asked for; not in the manifest. */
  unsigned char blake2b[32];
} hetc_plan_file_t;

typedef struct hetc_plan_t {
  char *model_name; /* owned */
  int32_t num_devices;
  hetc_plan_device_t *devices; /* owned */
  int32_t num_values;
  hetc_plan_value_t *values; /* owned */
  int32_t num_steps;
  hetc_plan_step_t *steps; /* owned */
  int32_t num_slots;
  hetc_plan_slot_t *slots; /* owned */
  int32_t num_inputs;
  hetc_plan_io_t *inputs; /* owned */
  int32_t num_outputs;
  hetc_plan_io_t *outputs; /* owned */
  uint64_t weights_bytes;  /* size of weights.bin */
  int32_t num_files;
  hetc_plan_file_t *files; /* owned; none in packages before version 3 */
} hetc_plan_t;

void hetc_plan_free(hetc_plan_t *plan);

/* Frees what a step owns (not the step itself) and zeroes it. */
void hetc_plan_step_release(hetc_plan_step_t *step);

/* Appends a zeroed value/step and returns its index, or -1 when out of
 * memory. Pointers into the arrays move when they grow. */
int32_t hetc_plan_add_value(hetc_plan_t *plan);
int32_t hetc_plan_add_step(hetc_plan_t *plan);

/* Writes a plan (manifest.json) into package directory `dir`. */
hetc_status_t hetc_plan_write_manifest(const hetc_plan_t *plan, const char *dir);
/* Reads dir/manifest.json; every defect is a BAD_INPUT naming the file and
 * the JSON path. *out_plan is owned by the caller. */
hetc_status_t hetc_plan_read_manifest(const char *dir, hetc_plan_t **out_plan);

/* 1 when two layouts store a tensor identically. */
int hetc_layout_equal(hetc_plugin_layout_t a, hetc_plugin_layout_t b);

/* "NCHW", "NCHW8c", "NHWC" or "row-major" for a tensor's layout. */
void hetc_layout_name(const hetc_plugin_tensor_t *type, char *out, size_t size);

#endif /* HETC_DRIVER_PACKAGE_PLAN_H_ */
