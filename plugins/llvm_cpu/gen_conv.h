/* plugins/llvm_cpu/gen_conv.h -- what the conv2d and dense generators share:
 * the unpacked workload, the in-register epilogue and the packed GEMM
 * micro-kernel. Internal to the cpu plugin. */
#ifndef HETC_PLUGINS_LLVM_CPU_GEN_CONV_H_
#define HETC_PLUGINS_LLVM_CPU_GEN_CONV_H_

#include "irb.h"

/* A conv2d workload's sizes and its kernel arguments (x, residual, packed
 * weight, bias, y in plugin.h order; residual and bias NULL when absent). */
typedef struct cpu_conv_t {
  const hetc_plugin_workload_t *wl;
  LLVMValueRef x, res, w, bias, y;
  int64_t C, H, W, K, OH, OW, KH, KW, SH, SW, DH, DW, PT, PL;
  int64_t ICBN, OCBN, ICB, OCB;
  /* Input-channel blocks one output block reduces over: ICB, or a grouped
   * conv's span / ICBN; CG, KG: a group's channels (grouped only). */
  int64_t ICBG, CG, KG;
  int grouped;
} cpu_conv_t;

void cpu_conv_init(cpu_conv_t *c, const cpu_gen_t *g, irb_t *r);
/* 0 <= v < limit. */
LLVMValueRef cpu_in_range(irb_t *r, LLVMValueRef v, int64_t limit);
/* acc (r->lanes wide) + bias + residual, activation, NCHWc padding lanes
 * zeroed, stored at y[oidx]; c0 is the channel of lane 0. */
void cpu_conv_epilogue(irb_t *r, const cpu_conv_t *c, LLVMValueRef acc, LLVMValueRef c0,
                          LLVMValueRef oidx);

/* The packed GEMM micro-kernel: acc[i][v] += A[i][k] * B[k][v*L .. v*L+L-1]
 * for k in [0, kc), L = r->lanes, with A[i][k] at a[a_off + i*a_row +
 * k*a_col] (one broadcast per row) and B's row k at b[b_off + k*b_row] (nv
 * vectors). mr x nv accumulators (allocas of <L x float>, initialised by
 * the caller) stay in registers: mr * nv + nv + 1 fit the ISA's
 * (cpu_reg_block_fits). B need not be packed: matmul's is an activation
 * whose rows are b_row apart, and b_last_mask (NULL: none) loads only the
 * lanes it sets of each row's last vector, where N ends inside it. */
#define CPU_MICRO_MAX_ACC 32
typedef struct cpu_micro_t {
  LLVMValueRef a, a_off;
  int64_t a_row, a_col;
  LLVMValueRef b, b_off;
  int64_t b_row;
  LLVMValueRef b_last_mask;
  LLVMValueRef kc;
  int64_t mr, nv;
  LLVMValueRef acc[CPU_MICRO_MAX_ACC]; /* acc[i * nv + v] */
} cpu_micro_t;
void cpu_micro_alloc(irb_t *r, cpu_micro_t *m);
void cpu_micro_zero(irb_t *r, const cpu_micro_t *m);
void cpu_micro_kernel(irb_t *r, const cpu_micro_t *m);

/* Boundaries and IR of the conv2d templates (gen_conv.c dispatches). */
hetc_plugin_status_t cpu_gen_conv_boundary(cpu_gen_t *g);
void cpu_gen_conv_ir(cpu_gen_t *g, irb_t *r);
void cpu_gen_im2col(const cpu_gen_t *g, irb_t *r);   /* gen_im2col.c */
void cpu_gen_winograd(const cpu_gen_t *g, irb_t *r); /* gen_winograd.c */
void cpu_gen_depthwise(const cpu_gen_t *g, irb_t *r); /* gen_depthwise.c */
/* Winograd's outer axes (prologue and main) and workspace. */
void cpu_winograd_boundary(cpu_gen_t *g);
void cpu_gen_dense(const cpu_gen_t *g, irb_t *r);    /* gen_gemm.c */

/* matmul (gen_matmul.c): its boundary (row-major in and out, the outer
 * axis batch x blocks of reg_n rows) and its code. */
void cpu_matmul_boundary(cpu_gen_t *g);
void cpu_gen_matmul(const cpu_gen_t *g, irb_t *r);

/* Pooling on NCHW[b]c, b a multiple of 8 (gen_pool.c; vectors of 16 lanes
 * where b is a multiple of 16 and the ISA has them): whether a pool
 * kernel reading `layout` is generated there; its outer axis is N x CB x
 * OH. */
int cpu_pool_vectorized(const hetc_plugin_workload_t *wl, hetc_plugin_layout_t layout);
void cpu_gen_pool_nchwc(const cpu_gen_t *g, irb_t *r);

/* NCHW[b1]c -> NCHW[b2]c, blocks multiples of 8 (gen_layout.c): whether
 * it is generated there; its outer axis is N x CB2 x H. */
/* Layout transforms and channel concats between channel-block layouts
 * (gen_layout.c): whether the vector copy applies, and its code. */
int cpu_blocks_vectorized(const hetc_plugin_workload_t *wl, const hetc_plugin_layout_t *in, hetc_plugin_layout_t out);
void cpu_gen_blocks(const cpu_gen_t *g, irb_t *r);

/* resize in the producer's layout (gen_resize.c), its taps constant arrays
 * of the module: the outer axis (N x C/b x OH, b the layout's channel
 * block), and its code. */
int64_t cpu_resize_outer(const hetc_plugin_workload_t *wl, hetc_plugin_layout_t layout);
hetc_plugin_status_t cpu_gen_resize(const cpu_gen_t *g, irb_t *r);

/* normalize (gen_normalize.c): its boundary (layouts, outer axis, grain)
 * and its code. */
void cpu_normalize_boundary(cpu_gen_t *g);
void cpu_gen_normalize(const cpu_gen_t *g, irb_t *r);

#endif /* HETC_PLUGINS_LLVM_CPU_GEN_CONV_H_ */
