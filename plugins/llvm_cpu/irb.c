/* The IR builder helpers (irb.h). */
#include <string.h>

#include "irb.h"

void irb_open(irb_t *r, LLVMContextRef ctx, LLVMModuleRef mod) {
  memset(r, 0, sizeof(*r));
  r->ctx = ctx;
  r->mod = mod;
  r->i1 = LLVMInt1TypeInContext(ctx);
  r->i32 = LLVMInt32TypeInContext(ctx);
  r->i64 = LLVMInt64TypeInContext(ctx);
  r->f32 = LLVMFloatTypeInContext(ctx);
  irb_set_lanes(r, 8);
  r->ptr = LLVMPointerTypeInContext(ctx, 0);
  r->void_t = LLVMVoidTypeInContext(ctx);
  LLVMTypeRef params[4] = {r->ptr, r->i64, r->i64, r->i64};
  LLVMTypeRef fty = LLVMFunctionType(r->void_t, params, 4, 0);
  r->fn = LLVMAddFunction(mod, "hetc_cpu_kernel", fty);
  r->args = LLVMGetParam(r->fn, 0);
  r->begin = LLVMGetParam(r->fn, 1);
  r->end = LLVMGetParam(r->fn, 2);
  r->phase = LLVMGetParam(r->fn, 3);
  /* Every pointer argument points to distinct memory (the output never
   * aliases an input). */
  unsigned nounwind = LLVMGetEnumAttributeKindForName("nounwind", 8);
  LLVMAddAttributeAtIndex(r->fn, LLVMAttributeFunctionIndex,
                          LLVMCreateEnumAttribute(ctx, nounwind, 0));
  r->alloca_block = LLVMAppendBasicBlockInContext(ctx, r->fn, "allocas");
  LLVMBasicBlockRef body = LLVMAppendBasicBlockInContext(ctx, r->fn, "body");
  r->ab = LLVMCreateBuilderInContext(ctx);
  LLVMPositionBuilderAtEnd(r->ab, r->alloca_block);
  r->b = LLVMCreateBuilderInContext(ctx);
  LLVMPositionBuilderAtEnd(r->b, body);
}

void irb_close(irb_t *r) {
  LLVMBuildRetVoid(r->b);
  LLVMBasicBlockRef body = LLVMGetNextBasicBlock(r->alloca_block);
  LLVMBuildBr(r->ab, body);
  LLVMDisposeBuilder(r->ab);
  LLVMDisposeBuilder(r->b);
}

void irb_set_lanes(irb_t *r, int64_t lanes) {
  r->lanes = lanes;
  r->vec = LLVMVectorType(r->f32, (unsigned)lanes);
}

LLVMValueRef irb_i64(irb_t *r, int64_t v) {
  return LLVMConstInt(r->i64, (unsigned long long)v, 1);
}

LLVMValueRef irb_f32(irb_t *r, double v) { return LLVMConstReal(r->f32, v); }

LLVMValueRef irb_vconst(irb_t *r, double v) {
  LLVMValueRef e[16];
  for (int64_t i = 0; i < r->lanes; ++i) e[i] = LLVMConstReal(r->f32, v);
  return LLVMConstVector(e, (unsigned)r->lanes);
}

LLVMValueRef irb_arg(irb_t *r, int index) {
  LLVMValueRef idx = LLVMConstInt(r->i64, (unsigned long long)index, 0);
  LLVMValueRef slot = LLVMBuildGEP2(r->ab, r->ptr, r->args, &idx, 1, "");
  return LLVMBuildLoad2(r->ab, r->ptr, slot, "");
}

LLVMValueRef irb_alloca(irb_t *r, LLVMTypeRef type) {
  return LLVMBuildAlloca(r->ab, type, "");
}

LLVMValueRef irb_alloca_array(irb_t *r, LLVMTypeRef type, int64_t count) {
  LLVMValueRef a = LLVMBuildArrayAlloca(r->ab, type, irb_i64(r, count), "");
  LLVMSetAlignment(a, 64);
  return a;
}

static LLVMValueRef gep(irb_t *r, LLVMValueRef base, LLVMValueRef index) {
  return LLVMBuildInBoundsGEP2(r->b, r->f32, base, &index, 1, "");
}

LLVMValueRef irb_ld(irb_t *r, LLVMValueRef base, LLVMValueRef index) {
  return LLVMBuildLoad2(r->b, r->f32, gep(r, base, index), "");
}

void irb_st(irb_t *r, LLVMValueRef value, LLVMValueRef base, LLVMValueRef index) {
  LLVMBuildStore(r->b, value, gep(r, base, index));
}

LLVMValueRef irb_ldv(irb_t *r, LLVMValueRef base, LLVMValueRef index) {
  LLVMValueRef v = LLVMBuildLoad2(r->b, r->vec, gep(r, base, index), "");
  LLVMSetAlignment(v, 4);
  return v;
}

void irb_stv(irb_t *r, LLVMValueRef value, LLVMValueRef base, LLVMValueRef index) {
  LLVMValueRef s = LLVMBuildStore(r->b, value, gep(r, base, index));
  LLVMSetAlignment(s, 4);
}

LLVMValueRef irb_lane_mask(irb_t *r, int64_t count) {
  LLVMValueRef bits[16];
  for (int64_t i = 0; i < r->lanes; ++i) bits[i] = LLVMConstInt(r->i1, i < count, 0);
  return LLVMConstVector(bits, (unsigned)r->lanes);
}

/* llvm.masked.load and .store are overloaded on the vector and the
 * pointer type. */
static LLVMValueRef masked_call(irb_t *r, const char *name, LLVMValueRef *args) {
  LLVMTypeRef types[2] = {r->vec, r->ptr};
  const unsigned id = LLVMLookupIntrinsicID(name, strlen(name));
  LLVMValueRef fn = LLVMGetIntrinsicDeclaration(r->mod, id, types, 2);
  return LLVMBuildCall2(r->b, LLVMIntrinsicGetType(r->ctx, id, types, 2), fn, args, 4, "");
}

LLVMValueRef irb_ldv_masked(irb_t *r, LLVMValueRef base, LLVMValueRef index, LLVMValueRef mask) {
  LLVMValueRef args[4] = {gep(r, base, index), LLVMConstInt(r->i32, 4, 0), mask, LLVMConstNull(r->vec)};
  return masked_call(r, "llvm.masked.load", args);
}

void irb_stv_masked(irb_t *r, LLVMValueRef value, LLVMValueRef base, LLVMValueRef index, LLVMValueRef mask) {
  LLVMValueRef args[4] = {value, gep(r, base, index), LLVMConstInt(r->i32, 4, 0), mask};
  masked_call(r, "llvm.masked.store", args);
}

LLVMValueRef irb_load(irb_t *r, LLVMTypeRef type, LLVMValueRef slot) {
  return LLVMBuildLoad2(r->b, type, slot, "");
}

void irb_store(irb_t *r, LLVMValueRef value, LLVMValueRef slot) {
  LLVMBuildStore(r->b, value, slot);
}

LLVMValueRef irb_splat(irb_t *r, LLVMValueRef scalar) {
  LLVMValueRef v = LLVMBuildInsertElement(r->b, LLVMGetUndef(r->vec), scalar,
                                          LLVMConstInt(r->i32, 0, 0), "");
  LLVMValueRef mask = LLVMConstNull(LLVMVectorType(r->i32, (unsigned)r->lanes));
  return LLVMBuildShuffleVector(r->b, v, LLVMGetUndef(r->vec), mask, "");
}

LLVMValueRef irb_smin(irb_t *r, LLVMValueRef a, LLVMValueRef b) { return SEL(LT(a, b), a, b); }
LLVMValueRef irb_smax(irb_t *r, LLVMValueRef a, LLVMValueRef b) { return SEL(LT(a, b), b, a); }

LLVMValueRef irb_intrinsic(irb_t *r, const char *name, LLVMTypeRef type, LLVMValueRef *args,
                           unsigned n) {
  unsigned id = LLVMLookupIntrinsicID(name, strlen(name));
  LLVMValueRef fn = LLVMGetIntrinsicDeclaration(r->mod, id, &type, 1);
  LLVMTypeRef fty = LLVMIntrinsicGetType(r->ctx, id, &type, 1);
  return LLVMBuildCall2(r->b, fty, fn, args, n, "");
}

LLVMValueRef irb_fma(irb_t *r, LLVMValueRef a, LLVMValueRef b, LLVMValueRef c) {
  LLVMValueRef args[3] = {a, b, c};
  return irb_intrinsic(r, "llvm.fma", LLVMTypeOf(a), args, 3);
}

LLVMValueRef irb_libm(irb_t *r, const char *name, LLVMValueRef v) {
  LLVMTypeRef fty = LLVMFunctionType(r->f32, &r->f32, 1, 0);
  LLVMValueRef fn = LLVMGetNamedFunction(r->mod, name);
  if (!fn) fn = LLVMAddFunction(r->mod, name, fty);
  return LLVMBuildCall2(r->b, fty, fn, &v, 1, "");
}

/* A constant of `like`'s shape (float or vector of floats; with `integer`,
 * the i32 of that shape). */
static LLVMValueRef const_like(irb_t *r, LLVMTypeRef like, double v, int integer) {
  LLVMValueRef one = integer ? LLVMConstInt(r->i32, (unsigned long long)(int64_t)v, 1) : LLVMConstReal(r->f32, v);
  if (LLVMGetTypeKind(like) != LLVMVectorTypeKind) return one;
  LLVMValueRef lanes[16];
  const unsigned n = LLVMGetVectorSize(like);
  for (unsigned i = 0; i < n; ++i) lanes[i] = one;
  return LLVMConstVector(lanes, n);
}

/* e^x without a call, so that loops of it vectorise and vectors of it stay
 * vectors: x = n ln2 + t with n = rint(x / ln2) and |t| <= ln2 / 2 (ln2 in
 * two parts, Cody and Waite), e^t by its Taylor series to t^7 (truncation
 * under 1e-8 relative), times 2^n built in two halves so that results in
 * the subnormal range and overflow to infinity come out right. Within 2
 * ulp of expf over the floats; NaN stays NaN, -inf gives 0, +inf inf. */
LLVMValueRef irb_exp(irb_t *r, LLVMValueRef x) {
  LLVMTypeRef ft = LLVMTypeOf(x);
  const int vector = LLVMGetTypeKind(ft) == LLVMVectorTypeKind;
  LLVMTypeRef it = vector ? LLVMVectorType(r->i32, LLVMGetVectorSize(ft)) : r->i32;
#define K(v) const_like(r, ft, (v), 0)
#define KI(v) const_like(r, ft, (v), 1)
  LLVMValueRef nan = LLVMBuildFCmp(r->b, LLVMRealUNO, x, x, "");
  /* Past [-104, 89] the result is 0 or inf anyway; inside, n fits 2^n's
   * two halves. */
  LLVMValueRef xc = SEL(LLVMBuildFCmp(r->b, LLVMRealOLT, x, K(-104.0), ""), K(-104.0), x);
  xc = SEL(LLVMBuildFCmp(r->b, LLVMRealOGT, xc, K(89.0), ""), K(89.0), xc);
  xc = SEL(nan, K(0.0), xc);
  LLVMValueRef t = FMUL(xc, K(1.4426950408889634));
  LLVMValueRef n = irb_intrinsic(r, "llvm.rint", ft, &t, 1);
  LLVMValueRef red = irb_fma(r, n, K(-0.693145751953125), xc);
  red = irb_fma(r, n, K(-1.428606820309417232e-6), red);
  static const double taylor[8] = {1.0, 1.0, 1.0 / 2, 1.0 / 6, 1.0 / 24, 1.0 / 120, 1.0 / 720, 1.0 / 5040};
  LLVMValueRef p = K(taylor[7]);
  for (int k = 6; k >= 0; --k) p = irb_fma(r, p, red, K(taylor[k]));
  LLVMValueRef ni = LLVMBuildFPToSI(r->b, n, it, "");
  LLVMValueRef n1 = LLVMBuildAShr(r->b, ni, KI(1), "");
  LLVMValueRef n2 = LLVMBuildSub(r->b, ni, n1, "");
  LLVMValueRef s1 = LLVMBuildBitCast(r->b, LLVMBuildShl(r->b, LLVMBuildAdd(r->b, n1, KI(127), ""), KI(23), ""), ft, "");
  LLVMValueRef s2 = LLVMBuildBitCast(r->b, LLVMBuildShl(r->b, LLVMBuildAdd(r->b, n2, KI(127), ""), KI(23), ""), ft, "");
  LLVMValueRef e = FMUL(FMUL(p, s1), s2);
  return SEL(nan, x, e);
#undef K
#undef KI
}

/* 1 / (1 + e^-x) for x >= 0, e^x / (1 + e^x) below, so that e^-|x| never
 * overflows: 1 / (1 + e^-x) at x = -89 divides by infinity and gives 0
 * where the answer is a subnormal 2e-39. */
static LLVMValueRef sigmoid(irb_t *r, LLVMValueRef x) {
  LLVMTypeRef ft = LLVMTypeOf(x);
  LLVMValueRef one = const_like(r, ft, 1.0, 0);
  LLVMValueRef negative = LLVMBuildFCmp(r->b, LLVMRealOLT, x, const_like(r, ft, 0.0, 0), "");
  LLVMValueRef e = irb_exp(r, SEL(negative, x, LLVMBuildFNeg(r->b, x, "")));
  LLVMValueRef s = FDIV(one, FADD(one, e));
  return SEL(negative, FMUL(e, s), s);
}

/* erf's two halves of a = min(|x|, 10), each accurate where it is used:
 * `small`, erf(a) for a < 0.75, as a (c0 + a^2 P(a^2)) (a minimax fit of
 * erf(a) / a in a^2, relative error 3e-11, c0 kept out of the polynomial
 * so that its last rounding is small); `tail`, erfc(a) for a >= 0.75, as
 * exp(-a^2) Q(1 / (1 + a)) (a fit of erfc(a) exp(a^2), whose value moves
 * only from 0.44 to 0.056 there; relative error 1.5e-8), with a^2's
 * rounding error taken back out of exp(-a^2) (a^2 reaches 100, where
 * half an ulp of it would cost 4e-6 relative). Past 10, erfc is below
 * the floats' subnormals and erf is 1. NaN stays NaN. Plain arithmetic
 * and irb_exp, so a vector stays a vector. */
typedef struct erf_parts_t {
  LLVMValueRef a, small, tail;
} erf_parts_t;

static erf_parts_t erf_parts(irb_t *r, LLVMValueRef x) {
  LLVMTypeRef ft = LLVMTypeOf(x);
#define K(v) const_like(r, ft, (v), 0)
  static const double small[7] = {1.128379167e+00,  -3.761263846e-01, 1.128377889e-01, -2.686479031e-02,
                                  5.216851783e-03,  -8.357900309e-04, 9.476173748e-05};
  static const double tail[10] = {4.684803170e-06,  5.639744769e-01,  5.683811916e-01, 2.367946345e-01,
                                  1.437522866e-02,  -1.894635838e+00, 2.570803632e+00, -6.876878062e-01,
                                  -9.725823695e-01, 6.189322457e-01};
  erf_parts_t p;
  LLVMValueRef a = irb_intrinsic(r, "llvm.fabs", ft, &x, 1);
  p.a = a = SEL(LLVMBuildFCmp(r->b, LLVMRealOGT, a, K(10.0), ""), K(10.0), a);
  LLVMValueRef a2 = FMUL(a, a);
  LLVMValueRef s = K(small[6]);
  for (int k = 5; k >= 1; --k) s = irb_fma(r, s, a2, K(small[k]));
  p.small = irb_fma(r, a, K(small[0]), FMUL(a, FMUL(a2, s)));
  LLVMValueRef u = FDIV(K(1.0), FADD(K(1.0), a));
  LLVMValueRef q = K(tail[9]);
  for (int k = 8; k >= 0; --k) q = irb_fma(r, q, u, K(tail[k]));
  /* exp(-(a2 + lo)) = exp(-a2) (1 - lo) to first order, lo = a^2 - a2. */
  LLVMValueRef lo = irb_fma(r, a, a, LLVMBuildFNeg(r->b, a2, ""));
  p.tail = FMUL(irb_exp(r, LLVMBuildFNeg(r->b, a2, "")), irb_fma(r, LLVMBuildFNeg(r->b, q, ""), lo, q));
  return p;
#undef K
}

/* erf(x), the halves of erf_parts joined and given x's sign: within 2.1
 * ulp over the floats (test_cpu_kernels measures it). */
LLVMValueRef irb_erf(irb_t *r, LLVMValueRef x) {
  LLVMTypeRef ft = LLVMTypeOf(x);
  erf_parts_t p = erf_parts(r, x);
  LLVMValueRef near = LLVMBuildFCmp(r->b, LLVMRealOLT, p.a, const_like(r, ft, 0.75, 0), "");
  LLVMValueRef e = SEL(near, p.small, FSUB(const_like(r, ft, 1.0, 0), p.tail));
  LLVMValueRef args[2] = {e, x};
  return irb_intrinsic(r, "llvm.copysign", ft, args, 2);
}

/* 0.5 x (1 + erf(x / sqrt 2)) with 1 + erf(y) taken as erfc(-y) where y
 * is at or below -0.75: the tail half directly, without the cancellation
 * of 1 + erf (gelu(-5) is -1.4e-6, which 1 + erf would get 10% wrong).
 * Past y = -10 that factor is 0, so gelu(-inf) is NaN as torch's is. */
static LLVMValueRef gelu(irb_t *r, LLVMValueRef x) {
  LLVMTypeRef ft = LLVMTypeOf(x);
#define K(v) const_like(r, ft, (v), 0)
  LLVMValueRef y = FMUL(x, K(0.70710678118654752440));
  erf_parts_t p = erf_parts(r, y);
  LLVMValueRef near = LLVMBuildFCmp(r->b, LLVMRealOLT, p.a, K(0.75), "");
  LLVMValueRef signed_small = SEL(LLVMBuildFCmp(r->b, LLVMRealOLT, y, K(0.0), ""), LLVMBuildFNeg(r->b, p.small, ""), p.small);
  LLVMValueRef upper = FSUB(K(2.0), p.tail); /* 1 + erf(y) for y >= 0.75 */
  LLVMValueRef lower = SEL(LLVMBuildFCmp(r->b, LLVMRealOLT, y, K(-10.0), ""), K(0.0), p.tail);
  LLVMValueRef one_plus = SEL(near, FADD(K(1.0), signed_small),
                              SEL(LLVMBuildFCmp(r->b, LLVMRealOLT, y, K(0.0), ""), lower, upper));
  return FMUL(FMUL(K(0.5), x), one_plus);
#undef K
}

/* 0.5 x (1 + tanh(y)) = x sigmoid(2 y), y = sqrt(2 / pi) (x + 0.044715 x^3):
 * sigmoid keeps the digits 1 + tanh loses where y is negative. x^3
 * overflows first for large |x|, where sigmoid is then exactly 0 or 1:
 * x at +inf, NaN at -inf (as torch's). */
static LLVMValueRef gelu_tanh(irb_t *r, LLVMValueRef x) {
  LLVMTypeRef ft = LLVMTypeOf(x);
  LLVMValueRef cube = FMUL(FMUL(x, x), x);
  LLVMValueRef inner = irb_fma(r, cube, const_like(r, ft, 0.044715, 0), x);
  return FMUL(x, sigmoid(r, FMUL(inner, const_like(r, ft, 1.5957691216057307117, 0))));
}

/* The activations made of compares and selects, on a float or a vector
 * alike: relu, relu6, and hardswish and hardsigmoid as torch computes
 * them (x + 3 clamped to [0, 6], over 6). An unordered compare is false,
 * so NaN passes through each. NULL for any other activation. */
static LLVMValueRef act_select(irb_t *r, LLVMValueRef v, int32_t activation) {
  LLVMTypeRef type = LLVMTypeOf(v);
  LLVMValueRef zero = const_like(r, type, 0, 0), six = const_like(r, type, 6, 0);
  switch (activation) {
    case HETC_PLUGIN_ACT_RELU:
    case HETC_PLUGIN_ACT_RELU6: {
      LLVMValueRef lo = SEL(LLVMBuildFCmp(r->b, LLVMRealOLT, v, zero, ""), zero, v);
      if (activation == HETC_PLUGIN_ACT_RELU) return lo;
      return SEL(LLVMBuildFCmp(r->b, LLVMRealOGT, lo, six, ""), six, lo);
    }
    case HETC_PLUGIN_ACT_HARDSWISH:
    case HETC_PLUGIN_ACT_HARDSIGMOID: {
      LLVMValueRef t = FADD(v, const_like(r, type, 3, 0));
      t = SEL(LLVMBuildFCmp(r->b, LLVMRealOLT, t, zero, ""), zero, t);
      t = SEL(LLVMBuildFCmp(r->b, LLVMRealOGT, t, six, ""), six, t);
      return FDIV(activation == HETC_PLUGIN_ACT_HARDSWISH ? FMUL(v, t) : t, six);
    }
    default: return NULL;
  }
}

static LLVMValueRef act_scalar(irb_t *r, LLVMValueRef v, int32_t activation) {
  LLVMValueRef selected = act_select(r, v, activation);
  if (selected) return selected;
  switch (activation) {
    /* The vector code on one lane, so that a loop's scalar tail computes
     * what its vector body does. */
    case HETC_PLUGIN_ACT_GELU: return gelu(r, v);
    case HETC_PLUGIN_ACT_GELU_TANH: return gelu_tanh(r, v);
    case HETC_PLUGIN_ACT_ERF: return irb_erf(r, v);
    case HETC_PLUGIN_ACT_SIGMOID: {
      /* A scalar: libm's expf is faster than irb_exp's longer series; in
       * vectors (irb_act below) irb_exp does 8 or 16 at once. */
      LLVMValueRef e = irb_libm(r, "expf", LLVMBuildFNeg(r->b, v, ""));
      return FDIV(CF(1), FADD(CF(1), e));
    }
    /* x / (1 + exp(-x)), torch's form: NaN at -inf, as x * sigmoid(x). */
    case HETC_PLUGIN_ACT_SILU: return FDIV(v, FADD(CF(1), irb_libm(r, "expf", LLVMBuildFNeg(r->b, v, ""))));
    case HETC_PLUGIN_ACT_TANH: return irb_libm(r, "tanhf", v);
    case HETC_PLUGIN_ACT_ELU:
      return SEL(LLVMBuildFCmp(r->b, LLVMRealOGT, v, CF(0), ""), v, irb_libm(r, "expm1f", v));
    case HETC_PLUGIN_ACT_SOFTPLUS: {
      LLVMValueRef positive = SEL(LLVMBuildFCmp(r->b, LLVMRealOGT, v, CF(0), ""), v, CF(0));
      LLVMValueRef tail = irb_libm(r, "log1pf", irb_libm(r, "expf", LLVMBuildFNeg(r->b, irb_libm(r, "fabsf", v), "")));
      return FADD(positive, tail);
    }
    case HETC_PLUGIN_ACT_EXP: return irb_libm(r, "expf", v);
    case HETC_PLUGIN_ACT_LOG: return irb_libm(r, "logf", v);
    default: return v;
  }
}

LLVMValueRef irb_act(irb_t *r, LLVMValueRef v, int32_t activation) {
  if (activation == HETC_PLUGIN_ACT_NONE) return v;
  if (LLVMGetTypeKind(LLVMTypeOf(v)) != LLVMVectorTypeKind) return act_scalar(r, v, activation);
  LLVMValueRef selected = act_select(r, v, activation);
  if (selected) return selected;
  if (activation == HETC_PLUGIN_ACT_SIGMOID) return sigmoid(r, v);
  if (activation == HETC_PLUGIN_ACT_SILU) return FMUL(v, sigmoid(r, v)); /* NaN at -inf, as torch's */
  if (activation == HETC_PLUGIN_ACT_EXP) return irb_exp(r, v);
  if (activation == HETC_PLUGIN_ACT_GELU) return gelu(r, v);
  if (activation == HETC_PLUGIN_ACT_GELU_TANH) return gelu_tanh(r, v);
  if (activation == HETC_PLUGIN_ACT_ERF) return irb_erf(r, v);
  /* tanh and the rest: lane by lane through libm, for accuracy. */
  LLVMValueRef out = LLVMGetUndef(LLVMTypeOf(v));
  for (unsigned i = 0; i < LLVMGetVectorSize(LLVMTypeOf(v)); ++i) {
    LLVMValueRef lane = LLVMConstInt(r->i32, i, 0);
    LLVMValueRef x = LLVMBuildExtractElement(r->b, v, lane, "");
    out = LLVMBuildInsertElement(r->b, out, act_scalar(r, x, activation), lane, "");
  }
  return out;
}

LLVMValueRef irb_for(irb_t *r, irb_loop_t *l, LLVMValueRef start, LLVMValueRef end,
                     int64_t step) {
  l->var = irb_alloca(r, r->i64);
  l->end = end;
  l->step = C64(step);
  irb_store(r, start, l->var);
  l->cond = LLVMAppendBasicBlockInContext(r->ctx, r->fn, "for.cond");
  l->body = LLVMAppendBasicBlockInContext(r->ctx, r->fn, "for.body");
  l->exit = LLVMAppendBasicBlockInContext(r->ctx, r->fn, "for.exit");
  LLVMBuildBr(r->b, l->cond);
  LLVMPositionBuilderAtEnd(r->b, l->cond);
  LLVMValueRef i = irb_load(r, r->i64, l->var);
  LLVMBuildCondBr(r->b, LT(i, end), l->body, l->exit);
  LLVMPositionBuilderAtEnd(r->b, l->body);
  return i;
}

void irb_endfor(irb_t *r, irb_loop_t *l) {
  LLVMValueRef i = irb_load(r, r->i64, l->var);
  LLVMValueRef next = LLVMBuildNSWAdd(r->b, i, l->step, "");
  irb_store(r, next, l->var);
  LLVMBuildBr(r->b, l->cond);
  LLVMPositionBuilderAtEnd(r->b, l->exit);
}

void irb_if(irb_t *r, irb_if_t *f, LLVMValueRef cond) {
  f->then = LLVMAppendBasicBlockInContext(r->ctx, r->fn, "if.then");
  f->els = LLVMAppendBasicBlockInContext(r->ctx, r->fn, "if.else");
  f->done = LLVMAppendBasicBlockInContext(r->ctx, r->fn, "if.done");
  f->has_else = 0;
  LLVMBuildCondBr(r->b, cond, f->then, f->els);
  LLVMPositionBuilderAtEnd(r->b, f->then);
}

void irb_else(irb_t *r, irb_if_t *f) {
  LLVMBuildBr(r->b, f->done);
  LLVMPositionBuilderAtEnd(r->b, f->els);
  f->has_else = 1;
}

void irb_endif(irb_t *r, irb_if_t *f) {
  LLVMBuildBr(r->b, f->done);
  if (!f->has_else) {
    LLVMPositionBuilderAtEnd(r->b, f->els);
    LLVMBuildBr(r->b, f->done);
  }
  LLVMPositionBuilderAtEnd(r->b, f->done);
}

void irb_view(irb_view_t *v, const hetc_plugin_tensor_t *t, hetc_plugin_layout_t layout,
              LLVMValueRef base) {
  memset(v, 0, sizeof(*v));
  v->rank = t->rank;
  for (int32_t i = 0; i < t->rank; ++i) v->shape[i] = t->shape[i];
  v->base = base;
  if (t->rank == 4) {
    v->b = hetc_kit_layout_block(layout, t->shape[1]);
    v->cb = hetc_kit_ceil_div(t->shape[1], v->b);
  }
}

LLVMValueRef irb_offset(irb_t *r, const irb_view_t *v, LLVMValueRef *coords, int broadcast) {
  LLVMValueRef c[HETC_PLUGIN_MAX_RANK] = {0};
  for (int32_t i = 0; i < v->rank; ++i)
    c[i] = broadcast && v->shape[i] == 1 ? C64(0) : coords[i];
  if (v->rank == 4) {
    LLVMValueRef b = C64(v->b);
    LLVMValueRef o = ADD(MUL(c[0], C64(v->cb)), v->b == 1 ? c[1] : DIV(c[1], b));
    o = ADD(MUL(o, C64(v->shape[2])), c[2]);
    o = ADD(MUL(o, C64(v->shape[3])), c[3]);
    if (v->b == 1) return o;
    return ADD(MUL(o, b), REM(c[1], b));
  }
  LLVMValueRef o = c[0];
  for (int32_t i = 1; i < v->rank; ++i) o = ADD(MUL(o, C64(v->shape[i])), c[i]);
  return o;
}

void irb_walk_output(irb_t *r, const irb_view_t *out, irb_elem_fn fn, void *user,
                     int64_t *out_outer, double *out_inner) {
  irb_loop_t lo;
  if (out->rank == 4) {
    const int64_t C = out->shape[1], H = out->shape[2], W = out->shape[3], b = out->b;
    const int nhwc = b == C && b > 1 && out->cb == 1;
    *out_outer = out->shape[0] * out->cb;
    *out_inner = (double)(b > 1 ? b : W);
    LLVMValueRef o = irb_for(r, &lo, r->begin, r->end, 1);
    LLVMValueRef n = DIV(o, C64(out->cb)), cb = REM(o, C64(out->cb));
    irb_loop_t lh, lw, lc;
    LLVMValueRef h = irb_for(r, &lh, C64(0), C64(H), 1);
    LLVMValueRef w = irb_for(r, &lw, C64(0), C64(W), 1);
    LLVMValueRef ci = irb_for(r, &lc, C64(0), C64(b), 1);
    LLVMValueRef c = ADD(MUL(cb, C64(b)), ci);
    LLVMValueRef coords[4] = {n, c, h, w};
    /* Physical offset, in walk order. */
    LLVMValueRef off = ADD(MUL(ADD(MUL(ADD(MUL(o, C64(H)), h), C64(W)), w), C64(b)), ci);
    (void)nhwc;
    if (C % b != 0) {
      irb_if_t f;
      irb_if(r, &f, LT(c, C64(C)));
      irb_st(r, fn(r, coords, user), out->base, off);
      irb_else(r, &f);
      irb_st(r, CF(0), out->base, off);
      irb_endif(r, &f);
    } else {
      irb_st(r, fn(r, coords, user), out->base, off);
    }
    irb_endfor(r, &lc);
    irb_endfor(r, &lw);
    irb_endfor(r, &lh);
    irb_endfor(r, &lo);
    return;
  }
  /* Row-major, any rank: outer axis is dim 0. */
  *out_outer = out->shape[0];
  *out_inner = (double)out->shape[out->rank - 1];
  irb_loop_t loops[HETC_PLUGIN_MAX_RANK];
  LLVMValueRef coords[HETC_PLUGIN_MAX_RANK];
  coords[0] = irb_for(r, &loops[0], r->begin, r->end, 1);
  for (int32_t i = 1; i < out->rank; ++i)
    coords[i] = irb_for(r, &loops[i], C64(0), C64(out->shape[i]), 1);
  irb_st(r, fn(r, coords, user), out->base, irb_offset(r, out, coords, 0));
  for (int32_t i = out->rank - 1; i >= 0; --i) irb_endfor(r, &loops[i]);
}
