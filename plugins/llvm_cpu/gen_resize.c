/* resize (ABI 2.0) in the layout its producer hints, written in the same
 * layout. Where each output row and column reads from is fixed by the
 * workload, so it is computed once at build time by hetc_kit_resize_taps
 * (in double, exactly as plugin.h defines it) and embedded in the module
 * as constant arrays: the kernel picks the same input pixels as the
 * reference for every coordinate transform and rounding, and does no
 * coordinate arithmetic of its own.
 *
 * Every 4-d layout is taken as planes of H x W pixels of P contiguous
 * floats (hetc_kit_layout_block: NCHW[b]c P = b, row-major P = 1, NHWC P
 * = C). One parallel iteration is one output row of one plane; an output
 * pixel blends up to four input pixels, whole:
 *   P a multiple of 8  vectors over the pixel, 16 lanes where the ISA has
 *                      them and P is a multiple of 16, else 8 (NCHWc's
 *                      padding channels are zeros in and, as blends of
 *                      zeros, out);
 *   P = 1              vectors over the output row: lanes permuted out
 *                      of one load where a vector's taps lie within a
 *                      vector's width of input columns (upscales), else
 *                      gathered through a vector of column taps;
 *   other P            one float at a time.
 * Linear blends are lerps, a + w (b - a) as one FMA, across the columns
 * and then between the two rows, as the reference orders them (the
 * permuting form blends the rows first); a row
 * whose weight is 0 (align_corners, integer scales, the clamped edges)
 * reads one input row only. Nearest copies. */
#include <stdlib.h>
#include <string.h>

#include "gen_conv.h"
#include "hetc/kit/resize.h"

/* Per-pixel vectors unrolled in the vector form; wider pixels (NHWC with
 * many channels) loop over their vectors. */
#define RESIZE_UNROLL_VECTORS 8

int64_t cpu_resize_outer(const hetc_plugin_workload_t *wl, hetc_plugin_layout_t layout) {
  const hetc_plugin_tensor_t *o = &wl->output;
  return o->shape[0] * hetc_kit_ceil_div(o->shape[1], hetc_kit_layout_block(layout, o->shape[1])) * o->shape[2];
}

/* The taps of one dim as three constant arrays, `count` entries each
 * (entries past the dim's extent read input index 0 with weight 0, so
 * that a last partial vector loads within bounds). */
typedef struct taps_t {
  LLVMValueRef lo, hi, weight;
} taps_t;

static LLVMValueRef const_array(irb_t *r, LLVMTypeRef type, LLVMValueRef *values, int64_t count) {
  LLVMTypeRef array = LLVMArrayType(type, (unsigned)count);
  LLVMValueRef g = LLVMAddGlobal(r->mod, array, "");
  LLVMSetInitializer(g, LLVMConstArray(type, values, (unsigned)count));
  LLVMSetGlobalConstant(g, 1);
  LLVMSetLinkage(g, LLVMPrivateLinkage);
  LLVMSetUnnamedAddress(g, LLVMGlobalUnnamedAddr);
  LLVMSetAlignment(g, 64);
  return g;
}

/* Nearest reads lo only: hi and weight are left out (NULL). */
static taps_t emit_taps(irb_t *r, const hetc_kit_resize_tap_t *taps, int64_t extent, int64_t count, int linear,
                        LLVMValueRef *scratch) {
  taps_t t = {NULL, NULL, NULL};
  for (int64_t k = 0; k < count; ++k)
    scratch[k] = LLVMConstInt(r->i32, (unsigned long long)(k < extent ? taps[k].lo : 0), 1);
  t.lo = const_array(r, r->i32, scratch, count);
  if (!linear) return t;
  for (int64_t k = 0; k < count; ++k)
    scratch[k] = LLVMConstInt(r->i32, (unsigned long long)(k < extent ? taps[k].hi : 0), 1);
  t.hi = const_array(r, r->i32, scratch, count);
  for (int64_t k = 0; k < count; ++k) scratch[k] = LLVMConstReal(r->f32, k < extent ? taps[k].weight : 0.0);
  t.weight = const_array(r, r->f32, scratch, count);
  return t;
}

/* Element `i` of a constant array of `type` (a vector type: a vector
 * starting there). */
static LLVMValueRef tap_load(irb_t *r, LLVMTypeRef type, LLVMValueRef array, LLVMValueRef i) {
  LLVMTypeRef element = LLVMGetTypeKind(type) == LLVMVectorTypeKind ? LLVMGetElementType(type) : type;
  LLVMValueRef p = LLVMBuildInBoundsGEP2(r->b, element, array, &i, 1, "");
  LLVMValueRef v = LLVMBuildLoad2(r->b, type, p, "");
  LLVMSetAlignment(v, 4);
  return v;
}

static LLVMValueRef tap_index(irb_t *r, LLVMValueRef array, LLVMValueRef i) {
  return LLVMBuildSExt(r->b, tap_load(r, r->i32, array, i), r->i64, "");
}

/* a + w (b - a) as one FMA: exactly a where w is 0 or b equals a (the
 * reference blends (1 - w) a + w b in double; the two differ by float
 * roundings, never in what they read). */
static LLVMValueRef lerp(irb_t *r, LLVMValueRef a, LLVMValueRef b, LLVMValueRef w) {
  return irb_fma(r, w, FSUB(b, a), a);
}

typedef struct resize_t {
  int linear;
  int64_t H, W, OH, OW, P;
  LLVMValueRef x, y;
  taps_t rows, cols;
  /* Per output row: */
  LLVMValueRef top, bottom; /* first element of the input rows */
  LLVMValueRef out_row;     /* first element of the output row */
  LLVMValueRef wy;          /* float */
  /* Row-major rows whose column taps span under a vector each: */
  int permute;
  LLVMValueRef bases; /* i32 per vector of output columns: its first input column */
  LLVMValueRef row;   /* W + L floats on the stack: the blended input row */
} resize_t;

/* Where pixel `column` (i64) of the row starting at element `row` starts. */
static LLVMValueRef pixel_at(irb_t *r, const resize_t *s, LLVMValueRef row, LLVMValueRef column) {
  return ADD(row, MUL(column, C64(s->P)));
}

/* ------------------------------------------------------------------------ */
/* P a multiple of 8: whole vectors of a pixel                              */
/* ------------------------------------------------------------------------ */

/* Vector `v` (a value) of output pixel `ow`, its column taps given. */
static void vector_blend(irb_t *r, const resize_t *s, LLVMValueRef ow, LLVMValueRef lo, LLVMValueRef hi,
                         LLVMValueRef wx, LLVMValueRef wy, int two_rows, LLVMValueRef v) {
  LLVMValueRef lane = MUL(v, C64(r->lanes));
  LLVMValueRef value = irb_ldv(r, s->x, ADD(pixel_at(r, s, s->top, lo), lane));
  if (s->linear) {
    value = lerp(r, value, irb_ldv(r, s->x, ADD(pixel_at(r, s, s->top, hi), lane)), wx);
    if (two_rows) {
      LLVMValueRef lower = lerp(r, irb_ldv(r, s->x, ADD(pixel_at(r, s, s->bottom, lo), lane)),
                                irb_ldv(r, s->x, ADD(pixel_at(r, s, s->bottom, hi), lane)), wx);
      value = lerp(r, value, lower, wy);
    }
  }
  irb_stv(r, value, s->y, ADD(pixel_at(r, s, s->out_row, ow), lane));
}

/* The output row's pixels, from the top input row only (`two_rows` 0) or
 * from both. */
static void vector_row(irb_t *r, const resize_t *s, int two_rows) {
  const int64_t V = s->P / r->lanes;
  LLVMValueRef wy = two_rows ? irb_splat(r, s->wy) : NULL;
  irb_loop_t lw, lv;
  LLVMValueRef ow = irb_for(r, &lw, C64(0), C64(s->OW), 1);
  LLVMValueRef lo = tap_index(r, s->cols.lo, ow);
  LLVMValueRef hi = s->linear ? tap_index(r, s->cols.hi, ow) : NULL;
  LLVMValueRef wx = s->linear ? irb_splat(r, tap_load(r, r->f32, s->cols.weight, ow)) : NULL;
  if (V <= RESIZE_UNROLL_VECTORS) {
    for (int64_t v = 0; v < V; ++v) vector_blend(r, s, ow, lo, hi, wx, wy, two_rows, C64(v));
  } else {
    LLVMValueRef v = irb_for(r, &lv, C64(0), C64(V), 1);
    vector_blend(r, s, ow, lo, hi, wx, wy, two_rows, v);
    irb_endfor(r, &lv);
  }
  irb_endfor(r, &lw);
}

/* ------------------------------------------------------------------------ */
/* P = 1 (row-major): vectors over the output row                           */
/* ------------------------------------------------------------------------ */

/* Calls the intrinsic `name` overloaded on two types. */
static LLVMValueRef intrinsic2(irb_t *r, const char *name, LLVMTypeRef t0, LLVMTypeRef t1, LLVMValueRef *args,
                               unsigned n) {
  LLVMTypeRef types[2] = {t0, t1};
  const unsigned id = LLVMLookupIntrinsicID(name, strlen(name));
  LLVMValueRef fn = LLVMGetIntrinsicDeclaration(r->mod, id, types, 2);
  return LLVMBuildCall2(r->b, LLVMIntrinsicGetType(r->ctx, id, types, 2), fn, args, n, "");
}

/* A constant <L x i1>: lanes below `active` set. */
static LLVMValueRef lane_mask(irb_t *r, int64_t active) {
  LLVMValueRef bits[16];
  for (int64_t i = 0; i < r->lanes; ++i) bits[i] = LLVMConstInt(r->i1, i < active, 0);
  return LLVMConstVector(bits, (unsigned)r->lanes);
}

/* The inputs of the row starting at element `row`, at the columns of
 * `columns` (<L x i32>). */
static LLVMValueRef gather(irb_t *r, const resize_t *s, LLVMValueRef row, LLVMValueRef columns) {
  LLVMValueRef start = LLVMBuildInBoundsGEP2(r->b, r->f32, s->x, &row, 1, "");
  LLVMValueRef index = LLVMBuildSExt(r->b, columns, LLVMVectorType(r->i64, (unsigned)r->lanes), "");
  LLVMValueRef at = LLVMBuildInBoundsGEP2(r->b, r->f32, start, &index, 1, "");
  LLVMValueRef args[4] = {at, LLVMConstInt(r->i32, 4, 0), lane_mask(r, r->lanes), LLVMGetUndef(r->vec)};
  return intrinsic2(r, "llvm.masked.gather", r->vec, LLVMTypeOf(at), args, 4);
}

/* Output columns ow .. ow + L - 1 of the row (ow a value); only the first
 * `active` are stored (the row's last, partial vector; its taps are
 * padded). */
static void store_columns(irb_t *r, const resize_t *s, LLVMValueRef value, LLVMValueRef ow, int64_t active) {
  LLVMValueRef at = ADD(s->out_row, ow);
  if (active == r->lanes) {
    irb_stv(r, value, s->y, at);
    return;
  }
  LLVMValueRef args[4] = {value, LLVMBuildInBoundsGEP2(r->b, r->f32, s->y, &at, 1, ""), LLVMConstInt(r->i32, 4, 0),
                          lane_mask(r, active)};
  intrinsic2(r, "llvm.masked.store", r->vec, r->ptr, args, 4);
}

static void columns_blend(irb_t *r, const resize_t *s, LLVMValueRef ow, int two_rows, int64_t active) {
  LLVMTypeRef iv = LLVMVectorType(r->i32, (unsigned)r->lanes);
  LLVMValueRef lo = tap_load(r, iv, s->cols.lo, ow);
  LLVMValueRef value = gather(r, s, s->top, lo);
  if (s->linear) {
    LLVMValueRef hi = tap_load(r, iv, s->cols.hi, ow), wx = tap_load(r, r->vec, s->cols.weight, ow);
    value = lerp(r, value, gather(r, s, s->top, hi), wx);
    if (two_rows)
      value = lerp(r, value, lerp(r, gather(r, s, s->bottom, lo), gather(r, s, s->bottom, hi), wx),
                   irb_splat(r, s->wy));
  }
  store_columns(r, s, value, ow, active);
}

static void columns_row(irb_t *r, const resize_t *s, int two_rows) {
  const int64_t L = r->lanes, whole = s->OW / L * L;
  if (whole > 0) {
    irb_loop_t lw;
    LLVMValueRef ow = irb_for(r, &lw, C64(0), C64(whole), L);
    columns_blend(r, s, ow, two_rows, L);
    irb_endfor(r, &lw);
  }
  if (whole < s->OW) columns_blend(r, s, C64(whole), two_rows, s->OW - whole);
}

/* Where every output vector's taps lie within L input columns (upscales,
 * the columns' spans known at build time), gathers are not needed: the
 * row is blended vertically once into a buffer, and each output vector is
 * one load from it at the vector's base column and a lane permutation per
 * tap (vpermps), its indices relative to that base. Blending the rows
 * first changes the reference's order of the lerps, not what they read. */

/* row[0, W) = the top input row, or its blend with the bottom one. */
static void blend_rows(irb_t *r, const resize_t *s, int two_rows) {
  const int64_t L = r->lanes, whole = s->W / L * L;
  LLVMValueRef wy = two_rows ? irb_splat(r, s->wy) : NULL;
  if (whole > 0) {
    irb_loop_t lw;
    LLVMValueRef w = irb_for(r, &lw, C64(0), C64(whole), L);
    LLVMValueRef v = irb_ldv(r, s->x, ADD(s->top, w));
    if (two_rows) v = lerp(r, v, irb_ldv(r, s->x, ADD(s->bottom, w)), wy);
    irb_stv(r, v, s->row, w);
    irb_endfor(r, &lw);
  }
  for (int64_t w = whole; w < s->W; ++w) {
    LLVMValueRef v = irb_ld(r, s->x, ADD(s->top, C64(w)));
    if (two_rows) v = lerp(r, v, irb_ld(r, s->x, ADD(s->bottom, C64(w))), s->wy);
    irb_st(r, v, s->row, C64(w));
  }
}

/* The lanes of `v` that `lanes` (<L x i32>, each below L) name. */
static LLVMValueRef permute(irb_t *r, LLVMValueRef v, LLVMValueRef lanes) {
  const char *name = r->lanes == 16 ? "llvm.x86.avx512.permvar.sf.512" : "llvm.x86.avx2.permps";
  const unsigned id = LLVMLookupIntrinsicID(name, strlen(name));
  LLVMValueRef fn = LLVMGetIntrinsicDeclaration(r->mod, id, NULL, 0);
  LLVMValueRef args[2] = {v, lanes};
  return LLVMBuildCall2(r->b, LLVMIntrinsicGetType(r->ctx, id, NULL, 0), fn, args, 2, "");
}

/* Output vector k (a value) from the blended row. */
static void permute_blend(irb_t *r, const resize_t *s, LLVMValueRef k, int64_t active) {
  LLVMTypeRef iv = LLVMVectorType(r->i32, (unsigned)r->lanes);
  LLVMValueRef ow = MUL(k, C64(r->lanes));
  LLVMValueRef v = irb_ldv(r, s->row, tap_index(r, s->bases, k));
  LLVMValueRef value = permute(r, v, tap_load(r, iv, s->cols.lo, ow));
  if (s->linear)
    value = lerp(r, value, permute(r, v, tap_load(r, iv, s->cols.hi, ow)), tap_load(r, r->vec, s->cols.weight, ow));
  store_columns(r, s, value, ow, active);
}

static void permute_row(irb_t *r, const resize_t *s) {
  const int64_t L = r->lanes, whole = s->OW / L;
  if (whole > 0) {
    irb_loop_t lk;
    LLVMValueRef k = irb_for(r, &lk, C64(0), C64(whole), 1);
    permute_blend(r, s, k, L);
    irb_endfor(r, &lk);
  }
  if (whole * L < s->OW) permute_blend(r, s, C64(whole), s->OW - whole * L);
}

/* Whether the permuting form applies: row-major, every output vector's
 * taps within L columns, the buffer within the stack budget. If so, the
 * column taps become relative to each vector's base (bases[k]). */
static int relative_columns(int64_t L, int64_t W, hetc_kit_resize_tap_t *cols, int64_t OW, int32_t *bases) {
  if ((W + L) * 4 > CPU_STACK_BUFFER_BYTES) return 0;
  for (int64_t k = 0; k * L < OW; ++k) {
    int32_t lo = INT32_MAX, hi = 0;
    for (int64_t j = k * L; j < OW && j < (k + 1) * L; ++j) {
      lo = cols[j].lo < lo ? cols[j].lo : lo;
      hi = cols[j].hi > hi ? cols[j].hi : hi;
    }
    if (hi - lo >= L) return 0;
    bases[k] = lo;
  }
  for (int64_t j = 0; j < OW; ++j) {
    cols[j].lo -= bases[j / L];
    cols[j].hi -= bases[j / L];
  }
  return 1;
}

/* ------------------------------------------------------------------------ */
/* Any other P: one float at a time                                         */
/* ------------------------------------------------------------------------ */

static void scalar_row(irb_t *r, const resize_t *s, int two_rows) {
  irb_loop_t lw, lp;
  LLVMValueRef ow = irb_for(r, &lw, C64(0), C64(s->OW), 1);
  LLVMValueRef lo = tap_index(r, s->cols.lo, ow);
  LLVMValueRef hi = s->linear ? tap_index(r, s->cols.hi, ow) : NULL;
  LLVMValueRef wx = s->linear ? tap_load(r, r->f32, s->cols.weight, ow) : NULL;
  LLVMValueRef p = irb_for(r, &lp, C64(0), C64(s->P), 1);
  LLVMValueRef value = irb_ld(r, s->x, ADD(pixel_at(r, s, s->top, lo), p));
  if (s->linear) {
    value = lerp(r, value, irb_ld(r, s->x, ADD(pixel_at(r, s, s->top, hi), p)), wx);
    if (two_rows)
      value = lerp(r, value,
                   lerp(r, irb_ld(r, s->x, ADD(pixel_at(r, s, s->bottom, lo), p)),
                        irb_ld(r, s->x, ADD(pixel_at(r, s, s->bottom, hi), p)), wx),
                   s->wy);
  }
  irb_st(r, value, s->y, ADD(pixel_at(r, s, s->out_row, ow), p));
  irb_endfor(r, &lp);
  irb_endfor(r, &lw);
}

/* ------------------------------------------------------------------------ */

static void emit_row(irb_t *r, const resize_t *s, int two_rows) {
  if (s->P % 8 == 0)
    vector_row(r, s, two_rows);
  else if (s->P == 1)
    columns_row(r, s, two_rows);
  else
    scalar_row(r, s, two_rows);
}

hetc_plugin_status_t cpu_gen_resize(const cpu_gen_t *g, irb_t *r) {
  const hetc_plugin_workload_t *wl = g->wl;
  const hetc_plugin_tensor_t *in = &wl->inputs[0], *out = &wl->output;
  resize_t s = {.linear = wl->params.resize.mode == HETC_PLUGIN_RESIZE_LINEAR,
                .H = in->shape[2],
                .W = in->shape[3],
                .OH = out->shape[2],
                .OW = out->shape[3],
                .P = hetc_kit_layout_block(g->output_layout, out->shape[1])};
  if (s.P % 8 == 0)
    irb_set_lanes(r, cpu_isa_block_lanes(g->isa, s.P));
  else
    irb_set_lanes(r, g->isa->lanes);
  /* Column taps padded to whole vectors for the row-major form. */
  const int64_t columns = hetc_kit_ceil_div(s.OW, r->lanes) * r->lanes;
  const int64_t most = columns > s.OH ? columns : s.OH;
  hetc_kit_resize_tap_t *taps = malloc(sizeof(*taps) * (size_t)(s.OH + s.OW));
  LLVMValueRef *scratch = malloc(sizeof(*scratch) * (size_t)most);
  if (!taps || !scratch) {
    free(taps);
    free(scratch);
    return cpu_status(HETC_PLUGIN_STATUS_OUT_OF_MEMORY, "cpu: resize: %lld taps", (long long)(s.OH + s.OW));
  }
  hetc_kit_resize_taps(wl, 2, 0, s.OH, taps);
  hetc_kit_resize_taps(wl, 3, 0, s.OW, taps + s.OH);
  s.rows = emit_taps(r, taps, s.OH, s.OH, s.linear, scratch);
  int32_t *bases = s.P == 1 ? malloc(sizeof(*bases) * (size_t)(columns / r->lanes)) : NULL;
  if (bases && relative_columns(r->lanes, s.W, taps + s.OH, s.OW, bases)) {
    s.permute = 1;
    for (int64_t k = 0; k < columns / r->lanes; ++k) scratch[k] = LLVMConstInt(r->i32, (unsigned long long)bases[k], 1);
    s.bases = const_array(r, r->i32, scratch, columns / r->lanes);
  }
  s.cols = emit_taps(r, taps + s.OH, s.OW, columns, s.linear, scratch);
  free(bases);
  free(taps);
  free(scratch);

  s.x = irb_arg(r, 0);
  s.y = irb_arg(r, 1);
  if (s.permute) {
    /* The last base's load reaches past W: lanes never selected, zeros
     * rather than whatever the stack held. */
    s.row = irb_alloca_array(r, r->f32, s.W + r->lanes);
    irb_stv(r, irb_vconst(r, 0), s.row, C64(s.W));
  }
  const int64_t row_elements = s.W * s.P;
  irb_loop_t lo;
  LLVMValueRef o = irb_for(r, &lo, r->begin, r->end, 1); /* plane * OH + oh */
  LLVMValueRef oh = REM(o, C64(s.OH)), plane = DIV(o, C64(s.OH));
  LLVMValueRef first = MUL(plane, C64(s.H * row_elements));
  s.top = ADD(first, MUL(tap_index(r, s.rows.lo, oh), C64(row_elements)));
  s.out_row = MUL(o, C64(s.OW * s.P));
  if (s.permute) {
    if (s.linear) {
      s.bottom = ADD(first, MUL(tap_index(r, s.rows.hi, oh), C64(row_elements)));
      s.wy = tap_load(r, r->f32, s.rows.weight, oh);
      irb_if_t one_row;
      irb_if(r, &one_row, LLVMBuildFCmp(r->b, LLVMRealOEQ, s.wy, CF(0), ""));
      blend_rows(r, &s, 0);
      irb_else(r, &one_row);
      blend_rows(r, &s, 1);
      irb_endif(r, &one_row);
    } else {
      blend_rows(r, &s, 0);
    }
    permute_row(r, &s);
  } else if (!s.linear) {
    emit_row(r, &s, 0);
  } else {
    s.bottom = ADD(first, MUL(tap_index(r, s.rows.hi, oh), C64(row_elements)));
    s.wy = tap_load(r, r->f32, s.rows.weight, oh);
    irb_if_t one_row;
    irb_if(r, &one_row, LLVMBuildFCmp(r->b, LLVMRealOEQ, s.wy, CF(0), ""));
    emit_row(r, &s, 0);
    irb_else(r, &one_row);
    emit_row(r, &s, 1);
    irb_endif(r, &one_row);
  }
  irb_endfor(r, &lo);
  return NULL;
}
