/*
 * hetc/plugin.h -- the backend plugin ABI of hetc.
 *
 * This header is the whole contract between the hetc driver and a backend
 * plugin. It stands alone (only <stddef.h>, <stdint.h> and <stdarg.h>) so a
 * vendor builds a plugin out of tree with nothing else from hetc.
 *
 * Negotiation
 * -----------
 * A plugin is a shared object exporting exactly one symbol,
 * HETC_PLUGIN_QUERY_SYMBOL ("hetc_plugin_query"), of type
 * hetc_plugin_query_fn_t. The driver calls it with its ABI major, the highest
 * minor it understands and its host services table. The plugin returns its
 * constant plugin table, or NULL when it cannot serve this host (for example
 * a different major). A driver of major 2 that a plugin declines asks it once
 * more as a host of ABI 1.7 (the last minor of major 1), so plugins built
 * for major 1 keep loading; it refuses a table of any other major.
 *
 * Every table starts with hetc_plugin_table_header_t. Minor versions only
 * append fields at the end of a table; a reader touches a field only when the
 * other side's struct_size covers it (HETC_PLUGIN_HAS_FIELD). Fields are never
 * reordered or removed within a major version.
 *
 * Status
 * ------
 * Every fallible call returns hetc_plugin_status_t: NULL means success; any
 * other value is a failure object created with host->status_new() and owned by
 * the host from then on (the plugin never frees or inspects it after
 * returning it). A code the host does not know (from a newer plugin) is still
 * a failure.
 *
 * Ownership
 * ---------
 * - Tables returned by the plugin are static and read-only for the life of
 *   the loaded object.
 * - Strings and arrays the driver passes in are borrowed for the duration of
 *   the call only; copy what must outlive it.
 * - Strings in device descriptors, template names and artifact descriptions
 *   are owned by the plugin and live until the instance is destroyed.
 * - Artifacts and buffers are owned by the plugin instance and released with
 *   its artifact_release / buffer_free calls; the driver releases every one it
 *   got before calling instance_destroy.
 * - Memory the plugin allocates with host->alloc is freed with host->free.
 *
 * Threading
 * ---------
 * Unless a field says otherwise, calls on one instance are serialised by the
 * driver: never two at once, but not always from the same thread (a package
 * on several devices runs each device's kernels on a worker thread of its
 * own, and copies on another), so a plugin keeps no per-thread state between
 * calls (a CUDA context is made current in every call that needs it). Calls
 * on different instances may run concurrently. probe and query may be called
 * from any thread. Host services are thread-safe.
 *
 * Optional calls
 * --------------
 * A plugin may leave these fields of hetc_plugin_t NULL; the driver then
 * does without: buffer_copy (copies go through the host), buffer_host_pointer
 * (when no device has host memory), features (the cost model uses the
 * driver's own features), buffer_view (since minor 2; concats run as
 * kernels) and supports_why (since minor 3; messages give no reason). Every
 * other call is required. A field added by a minor is read only when the
 * table's struct_size covers it (HETC_PLUGIN_HAS_FIELD). Every host call is
 * present in a host of the minor that introduced it.
 */
#ifndef HETC_PLUGIN_H_
#define HETC_PLUGIN_H_

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ABI version spoken by this header. A change of major breaks every plugin;
 * a minor only appends fields at the ends of tables.
 *   minor 1: hetc_plugin_host_t.space_mark_optional; HETC_PLUGIN_SPLIT_BOTH;
 *            feature schema 1 (the indices features() fills).
 *   minor 2: hetc_plugin_t.buffer_view (buffers that alias part of another,
 *            so that producers write a concat's inputs into its slices).
 *   minor 3: hetc_plugin_host_t.logv and status_newv (va_list twins of log
 *            and status_new), space_add_constraint_copy (the host keeps a
 *            copy of the constraint's data); hetc_plugin_t.supports_why (the
 *            reason a workload is not supported).
 *   minor 4: HETC_PLUGIN_OP_TRANSPOSE, its permutation packed into the
 *            workload's axis (HETC_PLUGIN_PERM_AT, HETC_PLUGIN_PERM_PACK_ONE):
 *            the workload struct keeps its size within a major;
 *            HETC_PLUGIN_ACT_ELU and HETC_PLUGIN_ACT_SOFTPLUS (elementwise
 *            only, never an epilogue's), HETC_PLUGIN_BINARY_DIV.
 *   minor 5: HETC_PLUGIN_OP_LOG_SOFTMAX; HETC_PLUGIN_ACT_EXP and
 *            HETC_PLUGIN_ACT_LOG (elementwise only).
 *   minor 6: HETC_PLUGIN_ACT_SILU, HETC_PLUGIN_ACT_HARDSWISH and
 *            HETC_PLUGIN_ACT_HARDSIGMOID, unary elementwise and epilogue
 *            activations alike (HETC_PLUGIN_ACT_IS_EPILOGUE).
 *   minor 7: HETC_PLUGIN_ACT_GELU and HETC_PLUGIN_ACT_GELU_TANH (unary
 *            elementwise and epilogue activations), HETC_PLUGIN_ACT_ERF
 *            (elementwise only).
 * Major 2 (ops with parameters of their own need room in the workload,
 * which cannot grow within a major):
 *   2.0:     hetc_plugin_workload_t.params, a fixed-size union holding the
 *            parameters of the ops that have their own; HETC_PLUGIN_OP_RESIZE
 *            (params.resize) and HETC_PLUGIN_OP_NORMALIZE (params.normalize:
 *            instance, group and layer normalization); HETC_PLUGIN_OP_MATMUL
 *            (batched products of two computed values, as attention
 *            takes them). Everything of 1.7 is unchanged: the major-2
 *            workload is the major-1 one with params appended, so a major-1
 *            plugin reads the prefix it knows (and is never handed an op of
 *            major 2). */
#define HETC_PLUGIN_ABI_MAJOR 2
#define HETC_PLUGIN_ABI_MINOR 0

/* The one symbol a plugin exports. */
#define HETC_PLUGIN_QUERY_SYMBOL "hetc_plugin_query"

#if defined(_WIN32)
#define HETC_PLUGIN_EXPORT __declspec(dllexport)
#else
#define HETC_PLUGIN_EXPORT __attribute__((visibility("default")))
#endif

/* printf-style argument checking where the compiler supports it. */
#if defined(__GNUC__) || defined(__clang__)
#define HETC_PLUGIN_PRINTF(fmt_index, first_arg)                               \
  __attribute__((format(printf, fmt_index, first_arg)))
#else
#define HETC_PLUGIN_PRINTF(fmt_index, first_arg)
#endif

/* Header at the start of every table, host's and plugin's. */
typedef struct hetc_plugin_table_header_t {
  uint32_t abi_major;   /* HETC_PLUGIN_ABI_MAJOR the table was built with */
  uint32_t abi_minor;   /* HETC_PLUGIN_ABI_MINOR the table was built with */
  uint32_t struct_size; /* sizeof the table as the writer compiled it */
  uint32_t reserved;    /* zero */
} hetc_plugin_table_header_t;

/* True when a table of type T, whose header says struct_size, contains
 * FIELD completely. Use before reading any field added after minor 0. */
#define HETC_PLUGIN_HAS_FIELD(table_ptr, T, FIELD)                             \
  ((table_ptr)->header.struct_size >=                                          \
   offsetof(T, FIELD) + sizeof(((T *)0)->FIELD))

/* The same test for structs that start with a bare struct_size instead of
 * a header (hetc_plugin_device_t). */
#define HETC_PLUGIN_STRUCT_HAS_FIELD(struct_ptr, T, FIELD)                     \
  ((struct_ptr)->struct_size >= offsetof(T, FIELD) + sizeof(((T *)0)->FIELD))

/* ------------------------------------------------------------------------ */
/* Status                                                                   */
/* ------------------------------------------------------------------------ */

/* Canonical failure codes. Values are stable; new codes are appended. */
typedef enum hetc_plugin_status_code_t {
  HETC_PLUGIN_STATUS_OK = 0,
  /* A caller passed something malformed (a config outside the space, a
   * null pointer). Not retried. */
  HETC_PLUGIN_STATUS_INVALID_ARGUMENT = 1,
  /* The plugin does not implement this op, workload, layout or call. */
  HETC_PLUGIN_STATUS_UNSUPPORTED = 2,
  /* The device, driver or library is not usable here (probe, init). */
  HETC_PLUGIN_STATUS_UNAVAILABLE = 3,
  /* Host or device memory ran out. */
  HETC_PLUGIN_STATUS_OUT_OF_MEMORY = 4,
  /* Code generation or compilation of an artifact failed; the message
   * carries the compiler log. */
  HETC_PLUGIN_STATUS_BUILD_FAILED = 5,
  /* A config exceeds device limits (threads, registers, local memory). */
  HETC_PLUGIN_STATUS_DEVICE_LIMITS = 6,
  /* A launch or copy failed on the device. */
  HETC_PLUGIN_STATUS_RUNTIME_FAILED = 7,
  /* A build or run did not finish in time. */
  HETC_PLUGIN_STATUS_TIMEOUT = 8,
  /* A bug in the plugin. */
  HETC_PLUGIN_STATUS_INTERNAL = 9,
} hetc_plugin_status_code_t;

/* Opaque failure object created by host->status_new; NULL is success.
 * Ownership passes to the host when a plugin call returns it. */
typedef struct hetc_plugin_status_object_t *hetc_plugin_status_t;

/* ------------------------------------------------------------------------ */
/* Tensors and workloads                                                    */
/* ------------------------------------------------------------------------ */

typedef enum hetc_plugin_dtype_t {
  HETC_PLUGIN_DTYPE_FLOAT32 = 1,
} hetc_plugin_dtype_t;

/* Physical layout of a 4-d activation tensor. Logical shapes are always
 * N, C, H, W; the layout says how they lie in memory. */
typedef enum hetc_plugin_layout_kind_t {
  /* Rank-agnostic row-major order of the logical shape (NCHW for 4-d). */
  HETC_PLUGIN_LAYOUT_ROW_MAJOR = 0,
  /* N, C/block, H, W, block: channels padded with zeros up to a multiple
   * of block. block is hetc_plugin_layout_t.block. */
  HETC_PLUGIN_LAYOUT_NCHWC = 1,
  /* N, H, W, C. */
  HETC_PLUGIN_LAYOUT_NHWC = 2,
} hetc_plugin_layout_kind_t;

typedef struct hetc_plugin_layout_t {
  int32_t kind;  /* hetc_plugin_layout_kind_t */
  int32_t block; /* channel block for NCHWC, else 0 */
} hetc_plugin_layout_t;

#define HETC_PLUGIN_MAX_RANK 6

/* A tensor as a kernel sees it: logical shape, dtype and physical layout. */
typedef struct hetc_plugin_tensor_t {
  int32_t dtype;               /* hetc_plugin_dtype_t */
  int32_t rank;                /* 1..HETC_PLUGIN_MAX_RANK */
  int64_t shape[HETC_PLUGIN_MAX_RANK]; /* logical, NCHW order for 4-d */
  hetc_plugin_layout_t layout;
} hetc_plugin_tensor_t;

/* Operators. Values are stable; new ones are appended. */
typedef enum hetc_plugin_op_t {
  HETC_PLUGIN_OP_CONV2D = 1,
  HETC_PLUGIN_OP_DENSE = 2,
  HETC_PLUGIN_OP_MAX_POOL2D = 3,
  HETC_PLUGIN_OP_AVG_POOL2D = 4,
  HETC_PLUGIN_OP_GLOBAL_AVG_POOL2D = 5,
  HETC_PLUGIN_OP_ELEMENTWISE = 6, /* unary activation or binary add/mul */
  HETC_PLUGIN_OP_SOFTMAX = 7,
  HETC_PLUGIN_OP_CONCAT = 8,
  HETC_PLUGIN_OP_LAYOUT_TRANSFORM = 9, /* also flatten/reshape copies */
  HETC_PLUGIN_OP_BIAS_ADD = 10,
  HETC_PLUGIN_OP_TRANSPOSE = 11, /* since minor 4 */
  HETC_PLUGIN_OP_LOG_SOFTMAX = 12, /* since minor 5 */
  HETC_PLUGIN_OP_RESIZE = 13,      /* since 2.0 */
  HETC_PLUGIN_OP_NORMALIZE = 14,   /* since 2.0 */
  HETC_PLUGIN_OP_MATMUL = 15,      /* since 2.0 */
  HETC_PLUGIN_OP_COUNT_ = 16 /* one past the last op of this minor */
} hetc_plugin_op_t;

typedef enum hetc_plugin_activation_t {
  HETC_PLUGIN_ACT_NONE = 0,
  HETC_PLUGIN_ACT_RELU = 1,
  HETC_PLUGIN_ACT_RELU6 = 2,
  HETC_PLUGIN_ACT_SIGMOID = 3,
  HETC_PLUGIN_ACT_TANH = 4,
  /* Since minor 4, unary elementwise only (an epilogue's activation is one
   * of the four above): x > 0 ? x : exp(x) - 1, and log(1 + exp(x)). */
  HETC_PLUGIN_ACT_ELU = 5,
  HETC_PLUGIN_ACT_SOFTPLUS = 6,
  /* Since minor 5, unary elementwise only: exp(x), and log(x) (NaN below
   * 0, -inf at 0). */
  HETC_PLUGIN_ACT_EXP = 7,
  HETC_PLUGIN_ACT_LOG = 8,
  /* Since minor 6, in epilogues and unary elementwise ops alike, as torch
   * computes them: silu x / (1 + exp(-x)) (x * sigmoid(x); NaN at -inf),
   * hardswish x * min(max(x + 3, 0), 6) / 6 (0 at -3, x from 3 up; NaN at
   * -inf), hardsigmoid min(max(x + 3, 0), 6) / 6. NaN stays NaN. */
  HETC_PLUGIN_ACT_SILU = 9,
  HETC_PLUGIN_ACT_HARDSWISH = 10,
  HETC_PLUGIN_ACT_HARDSIGMOID = 11,
  /* Since minor 7, in epilogues and unary elementwise ops alike: gelu
   * 0.5 x (1 + erf(x / sqrt(2))), and gelu_tanh, its tanh approximation
   * 0.5 x (1 + tanh(sqrt(2 / pi) (x + 0.044715 x^3))), as torch computes
   * them: 0 at 0 (so padding channels stay 0), inf at inf, NaN at -inf (as
   * x times a gate of 0 is, like silu); NaN stays NaN. */
  HETC_PLUGIN_ACT_GELU = 12,
  HETC_PLUGIN_ACT_GELU_TANH = 13,
  /* Since minor 7, unary elementwise only: erf(x) (0 at 0, -1 and 1 at
   * -inf and inf; NaN stays NaN). */
  HETC_PLUGIN_ACT_ERF = 14,
} hetc_plugin_activation_t;

/* Whether an activation may be an epilogue's (hetc_plugin_epilogue_t):
 * none and the four of minor 0, since minor 6 silu, hardswish and
 * hardsigmoid, since minor 7 gelu and gelu_tanh; never elu, softplus, exp,
 * log or erf. */
#define HETC_PLUGIN_ACT_IS_EPILOGUE(activation)                                \
  (((activation) >= HETC_PLUGIN_ACT_NONE &&                                    \
    (activation) <= HETC_PLUGIN_ACT_TANH) ||                                   \
   ((activation) >= HETC_PLUGIN_ACT_SILU &&                                    \
    (activation) <= HETC_PLUGIN_ACT_GELU_TANH))

typedef enum hetc_plugin_binary_t {
  HETC_PLUGIN_BINARY_NONE = 0,
  HETC_PLUGIN_BINARY_ADD = 1,
  HETC_PLUGIN_BINARY_MUL = 2,
  HETC_PLUGIN_BINARY_DIV = 3, /* since minor 4: first / second */
} hetc_plugin_binary_t;

/* Epilogue fused into conv2d and dense, applied in this order:
 * out = act(acc + bias[c] + residual), where residual is an extra input
 * tensor of the output's shape; act is one HETC_PLUGIN_ACT_IS_EPILOGUE
 * allows. */
typedef struct hetc_plugin_epilogue_t {
  int32_t has_bias;     /* 1: a bias param of shape [C_out] */
  int32_t has_residual; /* 1: one extra activation input, added */
  int32_t activation;   /* hetc_plugin_activation_t */
  int32_t reserved;
} hetc_plugin_epilogue_t;

/* Resize (since 2.0): where output index j of a resized dim (input extent
 * n, output extent m, scale s = params.resize.scales[dim - 2]) reads from,
 * in input coordinates x, computed in double precision as ONNX's Resize
 * defines its coordinate_transformation_mode: */
typedef enum hetc_plugin_resize_coordinates_t {
  HETC_PLUGIN_RESIZE_HALF_PIXEL = 0,         /* x = (j + 0.5) / s - 0.5 */
  HETC_PLUGIN_RESIZE_PYTORCH_HALF_PIXEL = 1, /* as half_pixel where m > 1, else 0 */
  HETC_PLUGIN_RESIZE_ALIGN_CORNERS = 2,      /* x = j (n - 1) / (m - 1) where m > 1, else 0 */
  HETC_PLUGIN_RESIZE_ASYMMETRIC = 3,         /* x = j / s */
  HETC_PLUGIN_RESIZE_TF_HALF_PIXEL_FOR_NN = 4, /* x = (j + 0.5) / s */
  /* x = n / 2 (1 - m / (s n)) + (j + 0.5) / s - 0.5 */
  HETC_PLUGIN_RESIZE_HALF_PIXEL_SYMMETRIC = 5,
} hetc_plugin_resize_coordinates_t;

/* How nearest resizing turns x into an index (then clamped to [0, n-1]):
 * the nearest integer, a tie (x = k + 0.5 exactly) going to k or k + 1;
 * floor(x); ceil(x). */
typedef enum hetc_plugin_resize_rounding_t {
  HETC_PLUGIN_RESIZE_ROUND_PREFER_FLOOR = 0,
  HETC_PLUGIN_RESIZE_ROUND_PREFER_CEIL = 1,
  HETC_PLUGIN_RESIZE_FLOOR = 2,
  HETC_PLUGIN_RESIZE_CEIL = 3,
} hetc_plugin_resize_rounding_t;

typedef enum hetc_plugin_resize_mode_t {
  /* output = input at the rounded index of each of H and W */
  HETC_PLUGIN_RESIZE_NEAREST = 0,
  /* x clamped to [0, n-1], lo = floor(x), hi = min(lo + 1, n-1), f = x - lo
   * per dim; output = (1 - fy) ((1 - fx) in[lo_y][lo_x] + fx in[lo_y][hi_x])
   * + fy ((1 - fx) in[hi_y][lo_x] + fx in[hi_y][hi_x]) */
  HETC_PLUGIN_RESIZE_LINEAR = 1,
} hetc_plugin_resize_mode_t;

typedef struct hetc_plugin_resize_params_t {
  int32_t mode;        /* hetc_plugin_resize_mode_t */
  int32_t coordinates; /* hetc_plugin_resize_coordinates_t */
  int32_t rounding;    /* hetc_plugin_resize_rounding_t; nearest only, else 0 */
  int32_t reserved;    /* zero */
  double scales[2];    /* s of H and W, > 0 (output / input unless the model
                        * gave a scale whose product it floored) */
} hetc_plugin_resize_params_t;

/* Normalize (since 2.0): instance, group and layer normalization. Dims
 * axis .. axis + num_axes - 1 are normalized, dim `axis` in `groups` equal
 * parts: with outer the product of the dims before axis and inner that of
 * the dims after the normalized ones, each (outer index, group, inner
 * index) has its mean m and biased variance v over the group's part of dim
 * axis times the other normalized dims, and
 *   y = (x - m) / sqrt(v + epsilon), then, with affine, y * scale[c] +
 *   bias[c] for c the index along dim axis.
 * InstanceNormalization of [N, C, H, W] is axis 1, num_axes 3, groups C;
 * GroupNormalization axis 1, num_axes 3, groups G; LayerNormalization over
 * the last dim axis rank - 1, num_axes 1, groups 1; ConvNeXt's LayerNorm of
 * channels in NCHW axis 1, num_axes 1, groups 1 (inner = H W). */
typedef struct hetc_plugin_normalize_params_t {
  int32_t axis;     /* >= 0 */
  int32_t num_axes; /* >= 1, axis + num_axes <= rank */
  int32_t groups;   /* >= 1, divides shape[axis] */
  int32_t affine;   /* 1: params scale and bias, shape[axis] values each */
  double epsilon;   /* > 0 */
} hetc_plugin_normalize_params_t;

/* The parameters of the ops that have their own, one member an op, read
 * by the workload's op; all zero for every other op. Its size is fixed for
 * the whole major, so the workload keeps its size: later minors add members
 * for their new ops and append fields to a member only within the union,
 * and a host zeroes every workload it builds, so a field a host's minor does
 * not know reads 0, which must mean what that minor meant. */
typedef union hetc_plugin_op_params_t {
  hetc_plugin_resize_params_t resize;       /* HETC_PLUGIN_OP_RESIZE */
  hetc_plugin_normalize_params_t normalize; /* HETC_PLUGIN_OP_NORMALIZE */
  uint64_t reserved[16];
} hetc_plugin_op_params_t;

/* The operation a kernel computes, independent of any layout choice.
 *
 * Inputs of a kernel, in this order:
 *   activations: inputs[0 .. num_inputs-1]; a fused residual is the last
 *                one and, like every activation input, is read in the
 *                layout artifact_info reports for it
 *   params:      conv2d and dense: weight, then bias when epilogue.has_bias;
 *                bias_add: bias; normalize with params.normalize.affine:
 *                scale, then bias; other ops: none
 * Logical param shapes: conv2d weight [C_out, C_in/groups, KH, KW]; dense
 * weight [units, K]; bias [C_out] (bias_add: [C] of axis 1; normalize:
 * scale and bias [shape[params.normalize.axis]]).
 *
 * Op-specific fields (fields an op does not use are zero):
 *   conv2d:  kernel, strides, padding, dilation (>= 1), groups (divides
 *            C_in and C_out; depthwise is groups == C_in == C_out),
 *            epilogue
 *   pools:   kernel, strides, padding (each side < kernel), ceil_mode,
 *            count_include_pad (avg); dilation is [1,1]. Output extent:
 *            floor or ceil of (in + pad_begin + pad_end - kernel) / stride
 *            + 1; with ceil_mode a last window that would start at or
 *            after in + pad_begin (inside the end padding only) is dropped.
 *            Average divisor: with count_include_pad, the window clipped to
 *            [-pad_begin, in + pad_end); without it, the number of real
 *            input elements in the window.
 *   dense:   input [N, K] row-major; epilogue (has_residual allowed)
 *   elementwise: exactly one of activation (unary) or binary (two inputs;
 *            the second has the same rank and each dim equal to the
 *            first's or 1)
 *   softmax: axis (non-negative; the driver normalises)
 *   log_softmax (since minor 5): as softmax; the output is the log of
 *            softmax's, computed as x - max - log(sum of exp(x - max)) so
 *            that it stays finite where softmax's would round to 0
 *   concat:  axis (non-negative), 1..64 inputs of equal rank
 *   layout_transform: inputs[0].layout -> output.layout for the same
 *            logical shape, or a reshape when the logical shapes differ
 *            (element order preserved in row-major logical order)
 *   bias_add: channel bias over axis 1 of a 2-d or 4-d input
 *   transpose (since minor 4): output dim d is input dim
 *            HETC_PLUGIN_PERM_AT(axis, d), a permutation of 0..rank-1
 *            packed three bits an output dim (bits past the rank's are
 *            zero); input and output of equal rank
 *   resize (since 2.0): params.resize; a 4-d input resampled over H and
 *            W (N and C as the input's; hetc_plugin_resize_params_t)
 *   normalize (since 2.0): params.normalize; one input of the output's
 *            shape, rank 2 to 6 (hetc_plugin_normalize_params_t)
 *   matmul (since 2.0): two inputs of equal rank r (2 to 6), A [B..., M,
 *            K] and B [B..., K, N] with the same batch dims B..., and the
 *            output [B..., M, N]: out[b][m][n] = sum over k of
 *            A[b][m][k] B[b][k][n] (numpy's matmul without broadcasting;
 *            both operands are activations, neither is packed ahead)
 */
typedef struct hetc_plugin_workload_t {
  int32_t op;         /* hetc_plugin_op_t */
  int32_t num_inputs; /* activation inputs, 1..num_inputs */
  const hetc_plugin_tensor_t *inputs; /* borrowed, num_inputs entries */
  hetc_plugin_tensor_t output;
  int32_t kernel[2];   /* KH, KW */
  int32_t strides[2];  /* SH, SW */
  int32_t padding[4];  /* top, left, bottom, right */
  int32_t dilation[2]; /* DH, DW */
  int32_t groups;
  int32_t ceil_mode;
  int32_t count_include_pad;
  int32_t axis;
  int32_t activation; /* hetc_plugin_activation_t, elementwise unary */
  int32_t binary;     /* hetc_plugin_binary_t, elementwise binary */
  hetc_plugin_epilogue_t epilogue;
  hetc_plugin_op_params_t params; /* since 2.0: the op's own parameters */
} hetc_plugin_workload_t;

/* A transpose's permutation (since minor 4): the input dim that output dim
 * d reads, from the workload's packed axis; and the packing of perm[d] for
 * d < rank into one axis value. */
#define HETC_PLUGIN_PERM_AT(packed_axis, d) ((int32_t)(((uint32_t)(packed_axis) >> (3u * (uint32_t)(d))) & 7u))
#define HETC_PLUGIN_PERM_PACK_ONE(input_dim, d) ((int32_t)((uint32_t)(input_dim) << (3u * (uint32_t)(d))))

/* ------------------------------------------------------------------------ */
/* Knob spaces and configs                                                  */
/* ------------------------------------------------------------------------ */

/* Opaque space under construction, owned by the host. */
typedef struct hetc_plugin_space_t hetc_plugin_space_t;

typedef enum hetc_plugin_split_policy_t {
  HETC_PLUGIN_SPLIT_FACTORS = 0,    /* every exact factorisation */
  HETC_PLUGIN_SPLIT_POWER2 = 1,     /* factors that are powers of two */
  HETC_PLUGIN_SPLIT_CANDIDATES = 2, /* inner parts from a candidate list */
  /* Since minor 1 (a minor-0 host refuses it as an unknown policy): every
   * exact factorisation (as FACTORS), then every split whose inner parts
   * are all powers of two with a product p <= extent that does not divide
   * extent, the outermost part rounded up to ceil(extent / p): the template
   * must guard the tail. AutoTVM's "verbose" policy. */
  HETC_PLUGIN_SPLIT_BOTH = 3,
} hetc_plugin_split_policy_t;

/* One knob's value in a config. A split has num_parts values (outermost
 * first, product == extent except that the outermost part may round up when
 * the template allows non-divisible splits); other knobs have one value: an
 * option value, a permutation index or an annotation choice. */
typedef struct hetc_plugin_knob_value_t {
  const char *name;      /* borrowed: knob name as defined */
  int32_t count;         /* number of values */
  const int64_t *values; /* borrowed: count values */
} hetc_plugin_knob_value_t;

/* A point of a space, as a plugin sees it. All pointers borrowed for the
 * duration of the call that passes it. */
typedef struct hetc_plugin_config_t {
  int32_t num_knobs;
  const hetc_plugin_knob_value_t *knobs;
} hetc_plugin_config_t;

/* A constraint across knobs: returns 1 when the values of the named knobs
 * (config holds exactly those knobs, in the order given to
 * space_add_constraint) are acceptable. Must be pure and thread-safe. */
typedef int (*hetc_plugin_constraint_fn_t)(const hetc_plugin_config_t *config,
                                           const void *user_data);

/* ------------------------------------------------------------------------ */
/* Host services                                                            */
/* ------------------------------------------------------------------------ */

typedef enum hetc_plugin_log_level_t {
  HETC_PLUGIN_LOG_ERROR = 0,
  HETC_PLUGIN_LOG_WARNING = 1,
  HETC_PLUGIN_LOG_INFO = 2,
  HETC_PLUGIN_LOG_DEBUG = 3,
} hetc_plugin_log_level_t;

/* Body of a parallel-for: runs iterations [begin, end) on one worker. */
typedef void (*hetc_plugin_parallel_body_fn_t)(int64_t begin, int64_t end,
                                               void *user_data);

/* What the host offers every plugin. All functions are thread-safe. */
typedef struct hetc_plugin_host_t {
  hetc_plugin_table_header_t header;

  /* Allocator. alloc returns NULL on failure; memory is 64-byte aligned;
   * free(NULL) is a no-op. */
  void *(*alloc)(size_t size);
  void (*free)(void *ptr);

  /* Logger. origin names the plugin; the message is printf-formatted. The
   * host filters by level. */
  void (*log)(int32_t level, const char *origin, const char *format, ...)
      HETC_PLUGIN_PRINTF(3, 4);

  /* Creates a failure status with a printf-formatted message. Returns the
   * status to hand back to the host (never NULL; an allocation failure
   * yields a static out-of-memory status). code == OK is treated as
   * INTERNAL: success is NULL. */
  hetc_plugin_status_t (*status_new)(int32_t code, const char *format, ...)
      HETC_PLUGIN_PRINTF(2, 3);
  /* Reads and discards a status the plugin created and will not return
   * (a fallback path). status_message's result is valid until
   * status_free. NULL is accepted by both. */
  const char *(*status_message)(hetc_plugin_status_t status);
  void (*status_free)(hetc_plugin_status_t status);

  /* Knob-space builder, used from template_define_space only. Names are
   * copied. Each returns NULL or a failure (duplicate name, bad argument).
   *
   * define_split: split `extent` into num_parts factors by policy; inner
   *   parts are at most max_factor when max_factor > 0. For
   *   SPLIT_CANDIDATES, the innermost part takes values from candidates
   *   (others are 1 except the outermost, which is extent / inner rounded
   *   up: the template must handle the remainder). SPLIT_BOTH (minor 1)
   *   adds power-of-two splits with a rounded-up outer part to the exact
   *   ones (see hetc_plugin_split_policy_t).
   * define_knob: a knob taking one of `values` (an other-option knob).
   * define_reorder: a permutation of num_axes axes; the candidate
   *   permutations are given explicitly, each num_axes entries, row-major.
   *   The knob's value in a config is the index of the chosen permutation.
   * define_annotate: an annotation choice (e.g. unroll / vectorize / none),
   *   encoded as small integers in `choices`.
   * set_default: the template's default point; every knob must be given
   *   exactly once with valid values, through values/count as in a config.
   * add_constraint: a predicate over the named knobs (see
   *   hetc_plugin_constraint_fn_t); user_data must outlive the instance
   *   (space_add_constraint_copy, since minor 3, lifts that rule). */
  hetc_plugin_status_t (*space_define_split)(hetc_plugin_space_t *space,
                                             const char *name, int64_t extent,
                                             int32_t num_parts, int32_t policy,
                                             int64_t max_factor,
                                             const int64_t *candidates,
                                             int32_t num_candidates);
  hetc_plugin_status_t (*space_define_knob)(hetc_plugin_space_t *space,
                                            const char *name,
                                            const int64_t *values,
                                            int32_t num_values);
  hetc_plugin_status_t (*space_define_reorder)(hetc_plugin_space_t *space,
                                               const char *name,
                                               int32_t num_axes,
                                               const int32_t *permutations,
                                               int32_t num_permutations);
  hetc_plugin_status_t (*space_define_annotate)(hetc_plugin_space_t *space,
                                                const char *name,
                                                const int64_t *choices,
                                                int32_t num_choices);
  hetc_plugin_status_t (*space_set_default)(hetc_plugin_space_t *space,
                                            const hetc_plugin_config_t *config);
  hetc_plugin_status_t (*space_add_constraint)(
      hetc_plugin_space_t *space, const char *const *knob_names,
      int32_t num_knob_names, hetc_plugin_constraint_fn_t fn,
      const void *user_data);

  /* Looks a knob up by name in a config; returns its entry or NULL. */
  const hetc_plugin_knob_value_t *(*config_find)(
      const hetc_plugin_config_t *config, const char *name);

  /* Runs body over [0, count) on the host's thread pool, in chunks of at
   * least `grain` iterations, and returns when all are done. Calls from
   * inside a body run serially (no nested oversubscription). The pool's
   * threads have 8 MiB stacks; the calling thread also runs bodies, on
   * its own stack (the hetc CLI's main thread: the process's stack limit). */
  void (*parallel_for)(int64_t count, int64_t grain,
                       hetc_plugin_parallel_body_fn_t body, void *user_data);

  /* Number of threads kernels should use (>= 1): the user's setting
   * (HETC_NUM_THREADS or the driver's option). Plugins that run their own
   * threads (OpenMP, a device runtime) size them by it too, so that kernels
   * never oversubscribe the cores. */
  int32_t (*thread_count)(void);

  /* ---- Since minor 1: read only when HETC_PLUGIN_HAS_FIELD(host,
   * hetc_plugin_host_t, space_mark_optional) (a minor-0 host's table ends
   * above). ---- */

  /* Marks a knob the template supports but does not tune by default. Call
   * from template_define_space after space_set_default, for a knob already
   * defined. Unless a user's space override enables it, the space offers
   * only the knob's default value (the knob stays in every config, with
   * one candidate); enabled, it has its full candidate list again. Returns
   * NULL or a failure (unknown knob, no default config yet). */
  hetc_plugin_status_t (*space_mark_optional)(hetc_plugin_space_t *space,
                                              const char *knob_name);

  /* ---- Since minor 3: read only when HETC_PLUGIN_HAS_FIELD(host,
   * hetc_plugin_host_t, logv) (a host of minor 1 or 2 ends above). ---- */

  /* log and status_new taking a va_list, for a plugin's own printf-style
   * wrappers. The host does not va_end `args`. */
  void (*logv)(int32_t level, const char *origin, const char *format,
               va_list args);
  hetc_plugin_status_t (*status_newv)(int32_t code, const char *format,
                                      va_list args);
  /* space_add_constraint whose data the host copies: `size` bytes from
   * `data` (64-byte aligned in the copy), passed to fn as its user_data
   * and kept as long as the space, so the plugin need not keep it alive.
   * size 0 passes NULL. */
  hetc_plugin_status_t (*space_add_constraint_copy)(
      hetc_plugin_space_t *space, const char *const *knob_names,
      int32_t num_knob_names, hetc_plugin_constraint_fn_t fn,
      const void *data, size_t size);
} hetc_plugin_host_t;

/* ------------------------------------------------------------------------ */
/* Devices                                                                  */
/* ------------------------------------------------------------------------ */

typedef enum hetc_plugin_device_kind_t {
  HETC_PLUGIN_DEVICE_CPU = 1,
  HETC_PLUGIN_DEVICE_GPU = 2,
  HETC_PLUGIN_DEVICE_ACCELERATOR = 3,
} hetc_plugin_device_kind_t;

/* Describes one device. Strings owned by the plugin instance. Numbers that
 * are unknown are 0. */
typedef struct hetc_plugin_device_t {
  uint32_t struct_size;     /* sizeof(hetc_plugin_device_t) as built */
  int32_t kind;             /* hetc_plugin_device_kind_t */
  const char *name;         /* human-readable, e.g. "AMD EPYC (2 cores)" */
  /* Stable identity for tuning records: same hardware and driver stack
   * give the same string across runs and machines. */
  const char *fingerprint;
  int32_t compute_units;    /* cores, SMs, compute units */
  int32_t simd_width_fp32;  /* fp32 lanes per vector instruction */
  double peak_gflops_fp32;  /* measured or nominal peak */
  double memory_bandwidth_gbps;
  uint64_t memory_bytes;
  int32_t max_threads_per_group; /* GPUs: threads per block/work-group */
  int32_t reserved0;
  uint64_t local_memory_bytes;   /* shared/local memory per group */
  uint64_t cache_bytes[3];       /* L1d, L2, L3 totals over the device,
                                   * each cache counted once (CPUs) */
  /* 1 when buffers of this device are plain host memory that the host may
   * read and write through buffer_host_pointer. */
  int32_t host_memory;
  int32_t reserved1;
} hetc_plugin_device_t;

/* ------------------------------------------------------------------------ */
/* Plugin objects                                                           */
/* ------------------------------------------------------------------------ */

typedef struct hetc_plugin_instance_t hetc_plugin_instance_t;  /* opaque */
typedef struct hetc_plugin_artifact_t hetc_plugin_artifact_t;  /* opaque */
typedef struct hetc_plugin_buffer_t hetc_plugin_buffer_t;      /* opaque */

/* What a built artifact expects at its boundary. Owned by the artifact. */
typedef struct hetc_plugin_artifact_info_t {
  /* Layout of each activation input and of the output, as the kernel reads
   * and writes them. */
  int32_t num_inputs;
  const hetc_plugin_layout_t *input_layouts;
  hetc_plugin_layout_t output_layout;
  /* Params (weights, bias) after packing: count and byte size of each. */
  int32_t num_params;
  const uint64_t *param_bytes;
  /* Scratch bytes the kernel needs (0 if none); the driver passes a buffer
   * of at least this size as the last argument of run. */
  uint64_t workspace_bytes;
  /* Static average innermost loop trip count of the generated code, a
   * vector-length indicator: innermost loops weighted by how often they
   * are entered; 0 if not applicable. */
  double avg_inner_loop_length;
  /* Free text describing the kernel (template, config), for logs. */
  const char *description;
} hetc_plugin_artifact_info_t;

/* ------------------------------------------------------------------------ */
/* Features for the cost model (schema 1, since ABI minor 1)                */
/* ------------------------------------------------------------------------ */

/* Feature schema version produced by features(): the hetc_plugin_feature_t
 * indices below, defined since ABI minor 1 (a minor-0 plugin's features()
 * predates them and is not called by the driver). One fixed-length, named
 * vector per candidate, the same for every plugin, so that one cost model
 * learns across plugins, templates and devices (api/feature-schema.md). A later minor
 * may append indices (raising HETC_FEATURE_COUNT, each saying who writes
 * it) but never renumbers or reuses one; the schema number changes only if
 * that rule is ever broken.
 * api/feature-schema.md lists every feature with its meaning.
 *
 * Values are floats. Magnitudes (sizes, bytes, counts, ratios) are
 * log2(1 + x), so that one model sees kernels and devices of very
 * different sizes on one scale; small categorical or lane counts are raw
 * (each index says which). NaN means missing: the plugin has nothing to say
 * about that feature for this candidate. A row is never shorter or padded:
 * every row has exactly HETC_FEATURE_COUNT values at fixed indices (an
 * AutoTVM model once saw rows of 835 and 919 features of shifting meaning).
 *
 * Who writes what: the plugin describes its generated loop nest, the
 * indices in [0, HETC_FEATURE_PLUGIN_END); the driver writes the workload,
 * device and derived indices itself, identically for every plugin. */
#define HETC_PLUGIN_FEATURE_SCHEMA 1

/* Tiling levels of a generated loop nest, innermost first. For each level
 * the plugin describes one tile (the typical, full tile; remainder tiles
 * are not described):
 *   REGISTER: the accumulators a micro-kernel keeps in registers.
 *   CACHE:    the cache-blocked unit around register tiles: the data the
 *             register tiles inside it reuse from L1/L2 (CPU) or shared
 *             memory (GPU), e.g. one input-channel block or packed panel.
 *   BLOCK:    one parallel task: an iteration of a CPU kernel's parallel
 *             loop, a GPU thread block or work-group.
 *   GRID:     the whole kernel. */
typedef enum hetc_plugin_feature_level_t {
  HETC_FEATURE_LEVEL_REGISTER = 0,
  HETC_FEATURE_LEVEL_CACHE = 1,
  HETC_FEATURE_LEVEL_BLOCK = 2,
  HETC_FEATURE_LEVEL_GRID = 3,
  HETC_FEATURE_LEVEL_COUNT = 4
} hetc_plugin_feature_level_t;

/* The eight features of every level, each log2(1 + x):
 *   SPATIAL:      output elements one tile computes (pixels x channels,
 *                 padding lanes of a channel block included).
 *   REDUCTION:    multiply-add steps each of those outputs accumulates
 *                 while the tile is at this level (the part of the
 *                 reduction it covers there).
 *   BYTES_IN, BYTES_WEIGHT, BYTES_OUT: bytes of activation input, weights
 *                 and output one tile moves into this level. At REGISTER:
 *                 what its loads bring into registers (every load counted)
 *                 and its accumulator stores (and reloads of partial sums);
 *                 at the other levels: the distinct bytes the tile touches,
 *                 its footprint.
 *   REUSE_IN, REUSE_WEIGHT: multiply-adds per input (weight) element moved:
 *                 how often each moved element is used.
 *   INTENSITY:    flops (two per multiply-add) per byte moved (input +
 *                 weight + output). */
typedef enum hetc_plugin_feature_field_t {
  HETC_FEATURE_FIELD_SPATIAL = 0,
  HETC_FEATURE_FIELD_REDUCTION = 1,
  HETC_FEATURE_FIELD_BYTES_IN = 2,
  HETC_FEATURE_FIELD_BYTES_WEIGHT = 3,
  HETC_FEATURE_FIELD_BYTES_OUT = 4,
  HETC_FEATURE_FIELD_REUSE_IN = 5,
  HETC_FEATURE_FIELD_REUSE_WEIGHT = 6,
  HETC_FEATURE_FIELD_INTENSITY = 7,
  HETC_FEATURE_FIELD_COUNT = 8
} hetc_plugin_feature_field_t;

/* Index of a level's field: levels lie one after another from index 0. */
#define HETC_FEATURE_AT_LEVEL(level, field)                                    \
  ((level) * HETC_FEATURE_FIELD_COUNT + (field))

/* Indices of schema 1. Values are stable. */
typedef enum hetc_plugin_feature_t {
  /* ---- Written by the plugin: its loop nest for this config. ---- */
  HETC_FEATURE_REG_SPATIAL = 0, /* levels: see hetc_plugin_feature_field_t */
  HETC_FEATURE_REG_REDUCTION = 1,
  HETC_FEATURE_REG_BYTES_IN = 2,
  HETC_FEATURE_REG_BYTES_WEIGHT = 3,
  HETC_FEATURE_REG_BYTES_OUT = 4,
  HETC_FEATURE_REG_REUSE_IN = 5,
  HETC_FEATURE_REG_REUSE_WEIGHT = 6,
  HETC_FEATURE_REG_INTENSITY = 7,
  HETC_FEATURE_CACHE_SPATIAL = 8,
  HETC_FEATURE_CACHE_REDUCTION = 9,
  HETC_FEATURE_CACHE_BYTES_IN = 10,
  HETC_FEATURE_CACHE_BYTES_WEIGHT = 11,
  HETC_FEATURE_CACHE_BYTES_OUT = 12,
  HETC_FEATURE_CACHE_REUSE_IN = 13,
  HETC_FEATURE_CACHE_REUSE_WEIGHT = 14,
  HETC_FEATURE_CACHE_INTENSITY = 15,
  HETC_FEATURE_BLOCK_SPATIAL = 16,
  HETC_FEATURE_BLOCK_REDUCTION = 17,
  HETC_FEATURE_BLOCK_BYTES_IN = 18,
  HETC_FEATURE_BLOCK_BYTES_WEIGHT = 19,
  HETC_FEATURE_BLOCK_BYTES_OUT = 20,
  HETC_FEATURE_BLOCK_REUSE_IN = 21,
  HETC_FEATURE_BLOCK_REUSE_WEIGHT = 22,
  HETC_FEATURE_BLOCK_INTENSITY = 23,
  HETC_FEATURE_GRID_SPATIAL = 24,
  HETC_FEATURE_GRID_REDUCTION = 25,
  HETC_FEATURE_GRID_BYTES_IN = 26,
  HETC_FEATURE_GRID_BYTES_WEIGHT = 27,
  HETC_FEATURE_GRID_BYTES_OUT = 28,
  HETC_FEATURE_GRID_REUSE_IN = 29,
  HETC_FEATURE_GRID_REUSE_WEIGHT = 30,
  HETC_FEATURE_GRID_INTENSITY = 31,
  /* log2(1 + flops the kernel executes): two per multiply-add of its main
   * computation, padding lanes and recomputed tiles included (Winograd:
   * its transformed-domain products, not the direct convolution's). */
  HETC_FEATURE_EXEC_FLOPS = 32,
  /* fp32 lanes of the innermost loop's arithmetic (1: scalar). Raw. */
  HETC_FEATURE_VECTOR_WIDTH = 33,
  /* log2(1 + independent operations of the innermost body as generated:
   * the product of the extents the generator unrolls, e.g. accumulator
   * rows x vectors x unrolled kernel columns). */
  HETC_FEATURE_UNROLL = 34,
  /* log2(1 + average trip count of the innermost loop). */
  HETC_FEATURE_INNER_LOOP = 35,
  /* log2(1 + parallel tasks): iterations of the parallel loop, GPU blocks. */
  HETC_FEATURE_PARALLEL_UNITS = 36,
  /* log2(1 + threads that run one task together): 1 on CPU, threads per
   * block on GPU. */
  HETC_FEATURE_THREADS_PER_GROUP = 37,
  /* Algorithm one-hot: exactly one is 1, the others 0. */
  HETC_FEATURE_ALGO_DIRECT = 38,     /* direct convolution */
  HETC_FEATURE_ALGO_IM2COL = 39,     /* im2col + GEMM */
  HETC_FEATURE_ALGO_WINOGRAD = 40,
  HETC_FEATURE_ALGO_GEMM = 41,       /* dense / matrix multiply */
  HETC_FEATURE_ALGO_DEPTHWISE = 42,  /* a depthwise-specialised kernel */
  HETC_FEATURE_ALGO_OTHER = 43,
  /* Layout one-hot of the activation input as the kernel reads it:
   * exactly one is 1. NCHW stands for row-major at any rank. */
  HETC_FEATURE_LAYOUT_NCHW = 44,
  HETC_FEATURE_LAYOUT_NHWC = 45,
  HETC_FEATURE_LAYOUT_NCHWC = 46,
  HETC_FEATURE_PLUGIN_END = 47, /* one past the plugin's indices */

  /* ---- Written by the driver: the workload. Dense is a 1x1 convolution
   * of a 1x1 plane (H = W = OH = OW = KH = KW = stride = dilation = 1). ---- */
  HETC_FEATURE_WL_OP = 47,            /* hetc_plugin_op_t, raw */
  HETC_FEATURE_WL_FLOPS = 48,         /* log2(1 + 2 x multiply-adds) */
  HETC_FEATURE_WL_N = 49,             /* N to OW: log2(1 + extent) */
  HETC_FEATURE_WL_C = 50,             /* input channels */
  HETC_FEATURE_WL_H = 51,
  HETC_FEATURE_WL_W = 52,
  HETC_FEATURE_WL_K = 53,             /* output channels */
  HETC_FEATURE_WL_OH = 54,
  HETC_FEATURE_WL_OW = 55,
  HETC_FEATURE_WL_KH = 56,            /* KH to PADDING: raw */
  HETC_FEATURE_WL_KW = 57,
  HETC_FEATURE_WL_STRIDE_H = 58,
  HETC_FEATURE_WL_STRIDE_W = 59,
  HETC_FEATURE_WL_DILATION_H = 60,
  HETC_FEATURE_WL_DILATION_W = 61,
  HETC_FEATURE_WL_PADDING = 62,       /* top + left + bottom + right */
  HETC_FEATURE_WL_GROUPS = 63,        /* log2(1 + groups) */
  HETC_FEATURE_WL_DEPTHWISE = 64,     /* 1: groups > 1, == C == K */
  HETC_FEATURE_WL_HAS_BIAS = 65,      /* 0 or 1 */
  HETC_FEATURE_WL_HAS_RESIDUAL = 66,  /* 0 or 1 */
  HETC_FEATURE_WL_ACTIVATION = 67,    /* hetc_plugin_activation_t */

  /* ---- Written by the driver: the device descriptor (NaN where the
   * descriptor says 0, unknown). ---- */
  HETC_FEATURE_DEV_KIND = 68,            /* hetc_plugin_device_kind_t */
  HETC_FEATURE_DEV_PEAK_GFLOPS = 69,     /* log2(1 + fp32 GFLOPS) */
  HETC_FEATURE_DEV_BANDWIDTH_GBPS = 70,  /* log2(1 + GB/s) */
  HETC_FEATURE_DEV_COMPUTE_UNITS = 71,   /* log2(1 + x) */
  HETC_FEATURE_DEV_SIMD_WIDTH = 72,      /* fp32 lanes, raw */
  HETC_FEATURE_DEV_MAX_THREADS_PER_GROUP = 73, /* log2(1 + x) */
  HETC_FEATURE_DEV_LOCAL_MEMORY = 74,    /* log2(1 + bytes per group) */
  HETC_FEATURE_DEV_L1 = 75,              /* log2(1 + bytes), device */
  HETC_FEATURE_DEV_L2 = 76,              /*   totals as in the */
  HETC_FEATURE_DEV_L3 = 77,              /*   descriptor */

  /* ---- Written by the driver from the plugin's and the device's
   * indices, by one formula for every plugin (NaN when an input is). ---- */
  /* Tasks over task slots: PARALLEL_UNITS / (ceil(units / compute units) x
   * compute units), in (0, 1]. Raw. */
  HETC_FEATURE_PARALLEL_BALANCE = 78,
  /* log2 of the CACHE tile's bytes (in + weight + out) over the L1 of one
   * compute unit (DEV_L1 / compute units): below 0 it fits. Signed. */
  HETC_FEATURE_CACHE_TILE_OVER_L1 = 79,
  /* log2 of the BLOCK tile's bytes over the L2 of one compute unit. */
  HETC_FEATURE_BLOCK_TILE_OVER_L2 = 80,

  HETC_FEATURE_COUNT = 81 /* features of schema 1 */
} hetc_plugin_feature_t;

/* ------------------------------------------------------------------------ */
/* The plugin table                                                         */
/* ------------------------------------------------------------------------ */

typedef struct hetc_plugin_t {
  hetc_plugin_table_header_t header;

  /* Identity. Static strings. name is the target name used on the command
   * line ("cuda", "cpu", "vec"); it is unique among loaded plugins. */
  const char *name;
  const char *vendor;
  const char *version;
  const char *description;

  /* Cheap check that the plugin can work here (driver present, ISA
   * supported) without heavy initialisation. Returns NULL when usable, or a
   * failure (usually UNAVAILABLE) whose message says why not. */
  hetc_plugin_status_t (*probe)(void);

  /* Creates an instance (opens drivers, enumerates devices). out_instance
   * is owned by the caller and destroyed with instance_destroy, which stops
   * every thread the plugin started itself (pools of runtimes it links,
   * such as OpenMP's, may stay idle until the process ends, and the driver
   * never unloads a plugin's code). query is always called before probe. */
  hetc_plugin_status_t (*instance_create)(hetc_plugin_instance_t **out_instance);
  void (*instance_destroy)(hetc_plugin_instance_t *instance);

  /* Devices: count and descriptors (owned by the instance). */
  int32_t (*device_count)(const hetc_plugin_instance_t *instance);
  const hetc_plugin_device_t *(*device_get)(
      const hetc_plugin_instance_t *instance, int32_t device_index);

  /* Returns 1 when the device can run this workload at all (by some
   * template), else 0. Pure; thread-safe. */
  int32_t (*supports)(const hetc_plugin_instance_t *instance,
                      int32_t device_index,
                      const hetc_plugin_workload_t *workload);

  /* Templates for a workload: their number (0 if unsupported) and names.
   * Template 0 is the plugin's choice when nothing has been tuned.
   * Names are static strings, unique within the plugin, stable across
   * versions of the same template (they key tuning records). */
  int32_t (*template_count)(const hetc_plugin_instance_t *instance,
                            int32_t device_index,
                            const hetc_plugin_workload_t *workload);
  const char *(*template_name)(const hetc_plugin_instance_t *instance,
                               int32_t device_index,
                               const hetc_plugin_workload_t *workload,
                               int32_t template_index);
  /* Version of a template's generated code; bumped when records made with
   * an older version are no longer meaningful. */
  uint32_t (*template_version)(const hetc_plugin_instance_t *instance,
                               int32_t device_index,
                               const hetc_plugin_workload_t *workload,
                               int32_t template_index);

  /* Declares the template's knob space for this workload through the
   * host's space_* functions and sets its default config. */
  hetc_plugin_status_t (*template_define_space)(
      const hetc_plugin_instance_t *instance, int32_t device_index,
      const hetc_plugin_workload_t *workload, int32_t template_index,
      hetc_plugin_space_t *space);

  /* Builds an artifact for (template, workload, config). The layouts in
   * workload->inputs[] are those the producers deliver: a hint the kernel
   * should follow when it can (ops without knobs: pooling, elementwise,
   * softmax, concat). The artifact reports the layouts it really reads and
   * writes in artifact_info; where they differ from what the producer
   * delivers, the driver inserts a LAYOUT_TRANSFORM kernel. The output
   * layout in the workload is ignored except for LAYOUT_TRANSFORM, where it
   * is the target. For ops without knobs the config has no knobs; a NULL
   * config means the template's default. A kernel producing an NCHWC
   * tensor writes zeros into its padding channels, and consumers may rely
   * on that. A config the
   * template cannot instantiate fails with INVALID_ARGUMENT or
   * DEVICE_LIMITS and a reason; compiler failures are BUILD_FAILED with the
   * log. out_artifact is released with artifact_release. May be called
   * concurrently on one instance (builds are the parallel stage). */
  hetc_plugin_status_t (*build)(hetc_plugin_instance_t *instance,
                                int32_t device_index,
                                const hetc_plugin_workload_t *workload,
                                int32_t template_index,
                                const hetc_plugin_config_t *config,
                                hetc_plugin_artifact_t **out_artifact);
  void (*artifact_release)(hetc_plugin_instance_t *instance,
                           hetc_plugin_artifact_t *artifact);
  /* Boundary description; owned by the artifact. */
  const hetc_plugin_artifact_info_t *(*artifact_info)(
      const hetc_plugin_artifact_t *artifact);

  /* Packs param `param_index` from its logical row-major float32 form
   * (shape as in hetc_plugin_workload_t) into the artifact's layout.
   * out_packed has artifact_info()->param_bytes[param_index] bytes and is
   * owned by the caller. Pure host code; thread-safe. */
  hetc_plugin_status_t (*pack_param)(const hetc_plugin_artifact_t *artifact,
                                     int32_t param_index,
                                     const float *logical, uint64_t count,
                                     void *out_packed);

  /* Device memory. Buffers are owned by the instance; the driver frees
   * each with buffer_free. Contents after alloc are unspecified. Reads,
   * writes and copies are synchronous. */
  hetc_plugin_status_t (*buffer_alloc)(hetc_plugin_instance_t *instance,
                                       int32_t device_index, uint64_t bytes,
                                       hetc_plugin_buffer_t **out_buffer);
  void (*buffer_free)(hetc_plugin_instance_t *instance,
                      hetc_plugin_buffer_t *buffer);
  hetc_plugin_status_t (*buffer_write)(hetc_plugin_instance_t *instance,
                                       hetc_plugin_buffer_t *buffer,
                                       uint64_t offset, const void *src,
                                       uint64_t bytes);
  hetc_plugin_status_t (*buffer_read)(hetc_plugin_instance_t *instance,
                                      const hetc_plugin_buffer_t *buffer,
                                      uint64_t offset, void *dst,
                                      uint64_t bytes);
  /* Device-to-device copy on one device; NULL when not provided (the
   * driver then goes through the host). */
  hetc_plugin_status_t (*buffer_copy)(hetc_plugin_instance_t *instance,
                                      hetc_plugin_buffer_t *dst,
                                      uint64_t dst_offset,
                                      const hetc_plugin_buffer_t *src,
                                      uint64_t src_offset, uint64_t bytes);
  /* Host address of a buffer on a host_memory device, else NULL. The
   * field may be NULL when no device of the plugin has host memory. */
  void *(*buffer_host_pointer)(hetc_plugin_instance_t *instance,
                               hetc_plugin_buffer_t *buffer);

  /* Runs an artifact once and waits for it. args holds, in order: the
   * activation inputs, the packed params, the output, then the workspace
   * when workspace_bytes > 0. The output never shares a buffer with an
   * input or param (kernels may use restrict). */
  hetc_plugin_status_t (*run)(hetc_plugin_instance_t *instance,
                              const hetc_plugin_artifact_t *artifact,
                              hetc_plugin_buffer_t *const *args,
                              int32_t num_args);
  /* Times an artifact with the device's own clock after one untimed
   * warm-up run: `repeat` samples, each the mean seconds of `number`
   * back-to-back runs, written to out_seconds[0..repeat-1] (owned by the
   * caller). */
  hetc_plugin_status_t (*time)(hetc_plugin_instance_t *instance,
                               const hetc_plugin_artifact_t *artifact,
                               hetc_plugin_buffer_t *const *args,
                               int32_t num_args, int32_t number,
                               int32_t repeat, double *out_seconds);

  /* Describes the loop nest that build() would generate for (template,
   * workload, config) in feature schema HETC_PLUGIN_FEATURE_SCHEMA (defined
   * since minor 1; the driver does not call a minor-0 plugin's features()).
   * out_features has `capacity` floats (owned by the caller; the driver
   * passes HETC_FEATURE_COUNT of its own header, every entry NaN). The
   * plugin writes the plugin-owned indices below min(capacity, the
   * HETC_FEATURE_COUNT it was built with) -- in schema 1 the indices in
   * [0, HETC_FEATURE_PLUGIN_END) -- with NaN for any it cannot tell, and
   * sets *out_count to that min. It leaves every other index untouched:
   * the workload, device and derived indices are the driver's, which
   * overwrites them, so every plugin's rows agree on them. It never pads
   * or shifts: index i always means feature i. A NULL config means the
   * template's default; a config outside the space is INVALID_ARGUMENT.
   * UNSUPPORTED when the plugin has no features for this template (the
   * driver then leaves the plugin's indices NaN).
   * Must be cheap -- the search calls it for thousands of candidates a
   * second: no code generation, no compilation, no allocation on success.
   * Pure and thread-safe: unlike the calls above, it may run concurrently
   * with any call on the same instance. The field may be NULL (no features
   * at all; see "Optional calls" above: a table lacking a required call is
   * refused). */
  hetc_plugin_status_t (*features)(const hetc_plugin_instance_t *instance,
                                   int32_t device_index,
                                   const hetc_plugin_workload_t *workload,
                                   int32_t template_index,
                                   const hetc_plugin_config_t *config,
                                   float *out_features, int32_t capacity,
                                   int32_t *out_count);

  /* Writes the artifact into directory `dir` (borrowed; exists) as files
   * whose names all start with `prefix` (the package keeps every such
   * file), so that artifact_load can rebuild it there without
   * recompiling. */
  hetc_plugin_status_t (*artifact_emit)(hetc_plugin_instance_t *instance,
                                        const hetc_plugin_artifact_t *artifact,
                                        const char *dir, const char *prefix);
  /* Loads an artifact emitted by artifact_emit. The driver passes exactly
   * the workload (layout hints included), template and config that build()
   * got. Files that are missing, corrupt or made for something else give
   * INVALID_ARGUMENT with the reason. out_artifact is released with
   * artifact_release. */
  hetc_plugin_status_t (*artifact_load)(hetc_plugin_instance_t *instance,
                                        int32_t device_index,
                                        const hetc_plugin_workload_t *workload,
                                        int32_t template_index,
                                        const hetc_plugin_config_t *config,
                                        const char *dir, const char *prefix,
                                        hetc_plugin_artifact_t **out_artifact);

  /* ---- Since minor 2: read only when HETC_PLUGIN_HAS_FIELD(plugin,
   * hetc_plugin_t, buffer_view) (a minor-1 plugin's table ends above). ---- */

  /* A buffer for bytes [offset, offset + bytes) of `parent`, which stays
   * the owner of the memory: what a kernel writes through the view is in
   * the parent, and the reverse. The driver asks only for offsets that are
   * multiples of 64 and ranges inside the parent, frees every view with
   * buffer_free before its parent, and never passes a view and a buffer it
   * overlaps as the output and an input of one run. With views, the
   * producers of a concat's inputs write straight into the slices of its
   * output and no concat kernel runs. Optional: when NULL, compile plans a
   * concat kernel instead. A failure is final: a package planned with views
   * of this target does not open (compile already chose the layout), so
   * fail only when the offset cannot be honoured at all. out_view is the
   * caller's, freed with buffer_free. */
  hetc_plugin_status_t (*buffer_view)(hetc_plugin_instance_t *instance,
                                      hetc_plugin_buffer_t *parent,
                                      uint64_t offset, uint64_t bytes,
                                      hetc_plugin_buffer_t **out_view);

  /* ---- Since minor 3: read only when HETC_PLUGIN_HAS_FIELD(plugin,
   * hetc_plugin_t, supports_why) (a minor-2 plugin's table ends above). ---- */

  /* supports() with the reason: NULL exactly when supports() would return
   * 1, else a failure (UNSUPPORTED) whose message says what the device
   * lacks for this workload ("grouped conv2d with 3 groups: only depthwise
   * or 1 group"), which hetc shows when no target can take a node. Pure;
   * thread-safe. Optional. */
  hetc_plugin_status_t (*supports_why)(const hetc_plugin_instance_t *instance,
                                       int32_t device_index,
                                       const hetc_plugin_workload_t *workload);
} hetc_plugin_t;

/* The exported entry point. host_abi_major is HETC_PLUGIN_ABI_MAJOR of the
 * host, host_abi_minor its highest minor, host its services (static, lives
 * as long as the plugin is loaded). Returns the plugin's static table, or
 * NULL when this host cannot be served. */
typedef const hetc_plugin_t *(*hetc_plugin_query_fn_t)(
    uint32_t host_abi_major, uint32_t host_abi_minor,
    const hetc_plugin_host_t *host);

#ifdef __cplusplus
}
#endif

#endif /* HETC_PLUGIN_H_ */
