/* plugins/llvm_cpu/irb.h -- a small IR builder over the LLVM C API for the
 * kernel generators: loops (induction variables in allocas, promoted to
 * phis by mem2reg), ifs, float and <lanes x float> loads/stores (8 or 16
 * lanes, set per kernel or per part of one), intrinsics and 4-d tensor
 * views in any layout. */
#ifndef HETC_PLUGINS_LLVM_CPU_IRB_H_
#define HETC_PLUGINS_LLVM_CPU_IRB_H_

#include "cpu.h"

typedef struct irb_t {
  LLVMContextRef ctx;
  LLVMModuleRef mod;
  LLVMBuilderRef b;
  LLVMBuilderRef ab; /* at the end of the alloca block */
  LLVMValueRef fn, args, begin, end, phase;
  LLVMBasicBlockRef alloca_block;
  LLVMTypeRef i1, i32, i64, f32, ptr, void_t;
  int64_t lanes;   /* of every vector helper below: 8 until irb_set_lanes */
  LLVMTypeRef vec; /* <lanes x float> */
} irb_t;

/* Creates the module and `void hetc_cpu_kernel(ptr args, i64 begin,
 * i64 end, i64 phase)`, positioned in its body. */
void irb_open(irb_t *r, LLVMContextRef ctx, LLVMModuleRef mod);
/* Returns void and links the alloca block. */
void irb_close(irb_t *r);
/* The width of the vectors built from here on (8 or 16). */
void irb_set_lanes(irb_t *r, int64_t lanes);

LLVMValueRef irb_i64(irb_t *r, int64_t v);
LLVMValueRef irb_f32(irb_t *r, double v);
LLVMValueRef irb_vconst(irb_t *r, double v); /* splat constant vector */
/* args[index] as a float pointer (loaded in the alloca block). */
LLVMValueRef irb_arg(irb_t *r, int index);
LLVMValueRef irb_alloca(irb_t *r, LLVMTypeRef type);
/* `count` elements on the stack, 64-byte aligned, for the whole call. */
LLVMValueRef irb_alloca_array(irb_t *r, LLVMTypeRef type, int64_t count);

#define ADD(x, y) LLVMBuildAdd(r->b, (x), (y), "")
#define SUB(x, y) LLVMBuildSub(r->b, (x), (y), "")
#define MUL(x, y) LLVMBuildMul(r->b, (x), (y), "")
#define DIV(x, y) LLVMBuildSDiv(r->b, (x), (y), "")
#define REM(x, y) LLVMBuildSRem(r->b, (x), (y), "")
#define FADD(x, y) LLVMBuildFAdd(r->b, (x), (y), "")
#define FSUB(x, y) LLVMBuildFSub(r->b, (x), (y), "")
#define FMUL(x, y) LLVMBuildFMul(r->b, (x), (y), "")
#define FDIV(x, y) LLVMBuildFDiv(r->b, (x), (y), "")
#define LT(x, y) LLVMBuildICmp(r->b, LLVMIntSLT, (x), (y), "")
#define GE(x, y) LLVMBuildICmp(r->b, LLVMIntSGE, (x), (y), "")
#define AND(x, y) LLVMBuildAnd(r->b, (x), (y), "")
#define SEL(c, x, y) LLVMBuildSelect(r->b, (c), (x), (y), "")
#define C64(v) irb_i64(r, (v))
#define CF(v) irb_f32(r, (v))

LLVMValueRef irb_ld(irb_t *r, LLVMValueRef base, LLVMValueRef index);
void irb_st(irb_t *r, LLVMValueRef value, LLVMValueRef base, LLVMValueRef index);
LLVMValueRef irb_ldv(irb_t *r, LLVMValueRef base, LLVMValueRef index);
void irb_stv(irb_t *r, LLVMValueRef value, LLVMValueRef base, LLVMValueRef index);
/* A <lanes x i1> constant whose first `count` lanes are set, and the
 * vector load and store of only those lanes (llvm.masked.*: lanes off load
 * 0 and touch no memory, so a row's last vector may end where the buffer
 * does). */
LLVMValueRef irb_lane_mask(irb_t *r, int64_t count);
LLVMValueRef irb_ldv_masked(irb_t *r, LLVMValueRef base, LLVMValueRef index, LLVMValueRef mask);
void irb_stv_masked(irb_t *r, LLVMValueRef value, LLVMValueRef base, LLVMValueRef index, LLVMValueRef mask);
LLVMValueRef irb_load(irb_t *r, LLVMTypeRef type, LLVMValueRef slot);
void irb_store(irb_t *r, LLVMValueRef value, LLVMValueRef slot);
LLVMValueRef irb_splat(irb_t *r, LLVMValueRef scalar);
LLVMValueRef irb_smin(irb_t *r, LLVMValueRef a, LLVMValueRef b);
LLVMValueRef irb_smax(irb_t *r, LLVMValueRef a, LLVMValueRef b);
/* Calls an overloaded intrinsic ("llvm.fma") on `type`. */
LLVMValueRef irb_intrinsic(irb_t *r, const char *name, LLVMTypeRef type, LLVMValueRef *args,
                           unsigned n);
LLVMValueRef irb_fma(irb_t *r, LLVMValueRef a, LLVMValueRef b, LLVMValueRef c);
/* Activation of a float or vector value. */
LLVMValueRef irb_act(irb_t *r, LLVMValueRef v, int32_t activation);
/* e^x of a float or a vector of floats, inline (no call), within 2 ulp of
 * expf (irb.c). */
LLVMValueRef irb_exp(irb_t *r, LLVMValueRef x);
/* erf(x) of a float or a vector of floats, inline, within a few ulp of
 * the exact value (irb.c). */
LLVMValueRef irb_erf(irb_t *r, LLVMValueRef x);
/* Calls the libm function `name` (float -> float). */
LLVMValueRef irb_libm(irb_t *r, const char *name, LLVMValueRef v);

typedef struct irb_loop_t {
  LLVMValueRef var, end, step;
  LLVMBasicBlockRef cond, body, exit;
} irb_loop_t;
/* for (i = start; i < end; i += step): returns i, positioned in the body. */
LLVMValueRef irb_for(irb_t *r, irb_loop_t *l, LLVMValueRef start, LLVMValueRef end,
                     int64_t step);
void irb_endfor(irb_t *r, irb_loop_t *l);

typedef struct irb_if_t {
  LLVMBasicBlockRef then, els, done;
  int has_else;
} irb_if_t;
void irb_if(irb_t *r, irb_if_t *f, LLVMValueRef cond);
void irb_else(irb_t *r, irb_if_t *f);
void irb_endif(irb_t *r, irb_if_t *f);

/* A tensor view: rank-4 tensors in a channel-block layout (b = 1 for NCHW,
 * C for NHWC, the block for NCHWc), others row-major. */
typedef struct irb_view_t {
  int32_t rank;
  int64_t shape[HETC_PLUGIN_MAX_RANK];
  int64_t b, cb;
  LLVMValueRef base;
} irb_view_t;
void irb_view(irb_view_t *v, const hetc_plugin_tensor_t *t, hetc_plugin_layout_t layout,
              LLVMValueRef base);
/* Element offset of logical coordinates; `broadcast` replaces coordinates
 * of size-1 dims by 0. */
LLVMValueRef irb_offset(irb_t *r, const irb_view_t *v, LLVMValueRef *coords, int broadcast);

/* Value of the output element at logical coords. */
typedef LLVMValueRef (*irb_elem_fn)(irb_t *r, LLVMValueRef *coords, void *user);
/* Writes every element of the output view (NCHWc padding channels as 0),
 * iterations [begin, end) of its outer axis; returns the outer extent and
 * the innermost trip count. */
void irb_walk_output(irb_t *r, const irb_view_t *out, irb_elem_fn fn, void *user,
                     int64_t *out_outer, double *out_inner);

#endif
