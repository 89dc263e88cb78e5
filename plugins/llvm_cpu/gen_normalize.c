/* normalize (ABI 2.0): instance, group and layer normalization.
 *
 * Every line (outer index, group, inner index) gets its mean and biased
 * variance from two sums of d = x - K over the line, K one of its own
 * values: shifted, so that an offset the line's values share (1000 +
 * noise) cancels before anything is squared, where E[x^2] - E[x]^2 in
 * float loses every digit of the variance; in double (float vectors
 * widened before they are added), so that long lines do not drift. One
 * pass reads the line for both sums, a second writes
 *   y = ((x - m_hi) - m_lo) r, times scale[c] plus bias[c] with affine,
 * r = 1 / sqrt(v + eps) and the mean held as two floats m_hi + m_lo:
 * x - m_hi is exact where x is near the mean, whereas m_hi alone is up
 * to half an ulp of the offset away (3e-5 at 1000: three times the error
 * allowed). The kernel computes fma(x - m_hi, r, -m_lo r), and where
 * one scale serves a run of elements fma(x - m_hi, a, b) with a = r
 * scale[c] and b = bias[c] - m_lo a.
 *
 * Forms, fixed at build time by the layout and the split of the shape
 * into outer x (groups x rows a group) x inner:
 *   LINE     row-major, inner 1 (instance and group norm of NCHW, layer
 *            norm of the last dim): an iteration is one contiguous line,
 *            read in vectors two ISA vectors wide, then one, then floats.
 *   COLUMNS  row-major, inner > 1 (layer norm of NCHW's channels): the
 *            lines are the columns of a group's [rows x inner] matrix; an
 *            iteration is a tile of columns two ISA vectors wide (the
 *            last one masked) whose sums stay in registers while the
 *            rows stream past twice.
 *   GROUPS   NCHW[b]c, dims 1..3 normalized, a group within one block or
 *            a whole number of them (instance norm; group norm of 8 or 16
 *            channels a group, 32 groups): sums per lane over the plane,
 *            read several pixels at a time, joined per group in scalar
 *            code (Chan et al.'s pairwise update), then per-lane factors
 *            a and b, padding lanes 0 so that they write exact zeros.
 *   PIXELS   NCHW[b]c, dim 1 alone in one group (layer norm of channels):
 *            an iteration is a few pixels, each summed across its blocks'
 *            lanes; the padding lanes are left out of the sums and
 *            written 0.
 * Few long lines (LINE) or units (GROUPS) are cut in parts, each an
 * iteration of two phases: a prologue sums every part into the
 * workspace, then each part adds its line's sums up and writes itself. */
#include <string.h>

#include "gen_conv.h"

enum { NORM_LINE = 0, NORM_COLUMNS, NORM_GROUPS, NORM_PIXELS };

/* Floats in one vector of the GROUPS form (several pixels of a block) or
 * a wide one of the others; masks of shuffles are built up to this. */
#define NORM_MAX_WIDTH 64

typedef struct norm_t {
  int form, affine;
  double epsilon;
  /* The row-major split: outer x channels (in groups of per_group) x rest
   * x inner; a line holds per_group x rest values, `rows` of them. */
  int64_t outer, channels, groups, per_group, rest, inner, rows;
  /* NCHW[b]c: batch, block, blocks, plane; GROUPS: blocks an iteration
   * covers, pixels a vector holds. */
  int64_t batch, block, blocks, plane, unit_blocks, pixels;
  int64_t chunk; /* PIXELS: pixels an iteration, a divisor of the plane */
  /* LINE and GROUPS: lines (units of whole groups) and the parts each is
   * split into, of `part` elements (LINE) or pixels (GROUPS) but the last;
   * parts > 1: two phases, the sums of every part into the workspace
   * first. */
  int64_t lines, parts, part;
  int64_t lanes; /* of the ISA */
  int64_t wide;  /* floats of the LINE and COLUMNS forms' wide vectors */
} norm_t;

static int blocked_form(const hetc_plugin_workload_t *wl, int64_t block) {
  const hetc_plugin_tensor_t *in = &wl->inputs[0];
  const hetc_plugin_normalize_params_t *p = &wl->params.normalize;
  if (in->rank != 4 || p->axis != 1) return -1;
  const int64_t per_group = in->shape[1] / p->groups;
  /* An iteration keeps 32 bytes a lane of its blocks on the stack. */
  const int64_t lanes = per_group > block ? per_group : block;
  if (p->num_axes == 3 && (per_group % block == 0 || block % per_group == 0) && lanes * 32 <= CPU_STACK_BUFFER_BYTES)
    return NORM_GROUPS;
  if (p->num_axes == 1 && p->groups == 1) return NORM_PIXELS;
  return -1;
}

hetc_plugin_layout_t cpu_normalize_layout(const hetc_plugin_workload_t *wl) {
  const hetc_plugin_layout_t hint = wl->inputs[0].layout;
  /* Blocks of whole vectors; a wider one would be a vector of more than
   * NORM_MAX_WIDTH floats. */
  if (hint.kind == HETC_PLUGIN_LAYOUT_NCHWC && hint.block >= 8 && hint.block % 8 == 0 &&
      hint.block <= NORM_MAX_WIDTH && blocked_form(wl, hint.block) >= 0)
    return hint;
  return hetc_kit_layout_row_major();
}

/* Fewer lines than this are split into parts of at least NORM_MIN_PART
 * elements, so that about twice as many iterations keep the cores busy:
 * instance norm of 64 channels in NCHW16c is 4 lines, GroupNorm(1, C) one.
 * Split, a part's second read finds it in a farther cache (the first
 * phase read the whole tensor since), so lines enough are not split. */
#define NORM_FEW_LINES 16
#define NORM_MIN_PART 8192

static void split(norm_t *n, int64_t lines, int64_t length, int64_t extent, int64_t step) {
  n->lines = lines;
  n->parts = 1;
  n->part = extent;
  if (lines >= NORM_FEW_LINES) return;
  int64_t parts = hetc_kit_ceil_div(2 * NORM_FEW_LINES, lines);
  if (parts > length / NORM_MIN_PART) parts = length / NORM_MIN_PART;
  if (parts < 2) return;
  n->part = hetc_kit_ceil_div(hetc_kit_ceil_div(extent, parts), step) * step;
  n->parts = hetc_kit_ceil_div(extent, n->part);
}

static void describe(const cpu_isa_t *isa, const hetc_plugin_workload_t *wl, norm_t *n) {
  const hetc_plugin_tensor_t *in = &wl->inputs[0];
  const hetc_plugin_normalize_params_t *p = &wl->params.normalize;
  const hetc_plugin_layout_t layout = cpu_normalize_layout(wl);
  memset(n, 0, sizeof(*n));
  n->affine = p->affine;
  n->epsilon = p->epsilon;
  n->outer = n->rest = n->inner = 1;
  for (int32_t d = 0; d < p->axis; ++d) n->outer *= in->shape[d];
  for (int32_t d = p->axis + 1; d < p->axis + p->num_axes; ++d) n->rest *= in->shape[d];
  for (int32_t d = p->axis + p->num_axes; d < in->rank; ++d) n->inner *= in->shape[d];
  n->channels = in->shape[p->axis];
  n->groups = p->groups;
  n->per_group = n->channels / n->groups;
  n->rows = n->per_group * n->rest;
  n->lanes = isa->lanes;
  n->wide = 2 * isa->lanes;
  if (layout.kind == HETC_PLUGIN_LAYOUT_NCHWC) {
    n->form = blocked_form(wl, layout.block);
    n->batch = in->shape[0];
    n->block = layout.block;
    n->blocks = hetc_kit_ceil_div(n->channels, n->block);
    n->plane = in->shape[2] * in->shape[3];
    n->unit_blocks = n->per_group > n->block ? n->per_group / n->block : 1;
    /* Two ISA vectors of pixels where the block divides that. */
    n->pixels = n->wide % n->block == 0 ? n->wide / n->block : 1;
    for (n->chunk = 8; n->plane % n->chunk != 0;) --n->chunk;
    const int64_t units = n->batch * n->blocks / n->unit_blocks;
    if (n->form == NORM_GROUPS) split(n, units, n->unit_blocks * n->block * n->plane, n->plane, n->pixels);
  } else {
    n->form = n->inner == 1 ? NORM_LINE : NORM_COLUMNS;
    if (n->form == NORM_LINE) split(n, n->outer * n->groups, n->rows, n->rows, n->wide);
  }
}

void cpu_normalize_boundary(cpu_gen_t *g) {
  norm_t n;
  describe(g->isa, g->wl, &n);
  g->input_layouts[0] = g->output_layout = cpu_normalize_layout(g->wl);
  int64_t per = 1; /* elements an iteration reads */
  switch (n.form) {
    case NORM_LINE:
      g->outer = n.lines * n.parts;
      per = n.part;
      g->avg_inner = (double)n.rows;
      g->workspace_bytes = n.parts > 1 ? (uint64_t)(g->outer * 2 * 8) : 0;
      break;
    case NORM_COLUMNS:
      g->outer = n.outer * n.groups * hetc_kit_ceil_div(n.inner, n.wide);
      per = n.rows * (n.inner < n.wide ? n.inner : n.wide);
      g->avg_inner = (double)n.rows;
      break;
    case NORM_GROUPS:
      g->outer = n.lines * n.parts;
      per = n.unit_blocks * n.block * n.part;
      g->avg_inner = (double)n.plane;
      g->workspace_bytes = n.parts > 1 ? (uint64_t)(g->outer * n.unit_blocks * n.block * 2 * 8) : 0;
      break;
    default: /* NORM_PIXELS */
      g->outer = n.batch * n.plane / n.chunk;
      per = n.chunk * n.blocks * n.block;
      g->avg_inner = (double)n.blocks;
      break;
  }
  /* Chunks of some 16K elements: a line of a few hundred is too little
   * to hand a thread on its own. */
  g->grain = 16384 / (per > 0 ? per : 1);
  if (g->grain < 1) g->grain = 1;
  if (g->workspace_bytes) {
    g->prologue_outer = g->outer;
    g->prologue_grain = g->grain;
  }
}

uint64_t cpu_normalize_param_count(const hetc_plugin_workload_t *wl) {
  const hetc_plugin_layout_t layout = cpu_normalize_layout(wl);
  const int64_t channels = wl->inputs[0].shape[wl->params.normalize.axis];
  /* NCHW[b]c reads whole blocks of them: zeros past the channels. */
  if (layout.kind == HETC_PLUGIN_LAYOUT_NCHWC)
    return (uint64_t)(hetc_kit_ceil_div(channels, layout.block) * layout.block);
  return (uint64_t)channels;
}

/* ------------------------------------------------------------------------ */
/* Vectors of any width (1: a scalar)                                       */
/* ------------------------------------------------------------------------ */

static LLVMTypeRef f64(irb_t *r) { return LLVMDoubleTypeInContext(r->ctx); }

static LLVMTypeRef of_width(LLVMTypeRef element, int64_t width) {
  return width == 1 ? element : LLVMVectorType(element, (unsigned)width);
}

static LLVMValueRef constant(LLVMTypeRef element, double v, int64_t width) {
  LLVMValueRef one = LLVMConstReal(element, v), all[NORM_MAX_WIDTH];
  if (width == 1) return one;
  for (int64_t i = 0; i < width; ++i) all[i] = one;
  return LLVMConstVector(all, (unsigned)width);
}

static LLVMValueRef splat(irb_t *r, LLVMValueRef scalar, int64_t width) {
  if (width == 1) return scalar;
  LLVMTypeRef t = LLVMVectorType(LLVMTypeOf(scalar), (unsigned)width);
  LLVMValueRef v = LLVMBuildInsertElement(r->b, LLVMGetUndef(t), scalar, LLVMConstInt(r->i32, 0, 0), "");
  return LLVMBuildShuffleVector(r->b, v, LLVMGetUndef(t), LLVMConstNull(LLVMVectorType(r->i32, (unsigned)width)),
                                "");
}

/* Lanes first .. first + count - 1 of v, or (`repeat`) v's lanes over and
 * over to `count` lanes. */
static LLVMValueRef shuffle(irb_t *r, LLVMValueRef v, int64_t first, int64_t count, int repeat) {
  const int64_t width = LLVMGetVectorSize(LLVMTypeOf(v));
  if (count == 1 && !repeat)
    return LLVMBuildExtractElement(r->b, v, LLVMConstInt(r->i32, (unsigned long long)first, 0), "");
  LLVMValueRef mask[NORM_MAX_WIDTH];
  for (int64_t i = 0; i < count; ++i)
    mask[i] = LLVMConstInt(r->i32, (unsigned long long)(repeat ? i % width : first + i), 0);
  return LLVMBuildShuffleVector(r->b, v, LLVMGetUndef(LLVMTypeOf(v)), LLVMConstVector(mask, (unsigned)count), "");
}

/* The sum of v's lanes, halving while the width is even. */
static LLVMValueRef lane_sum(irb_t *r, LLVMValueRef v, int64_t width) {
  while (width > 1 && width % 2 == 0) {
    v = FADD(shuffle(r, v, 0, width / 2, 0), shuffle(r, v, width / 2, width / 2, 0));
    width /= 2;
  }
  if (width == 1) return v;
  LLVMValueRef s = shuffle(r, v, 0, 1, 0);
  for (int64_t i = 1; i < width; ++i) s = FADD(s, shuffle(r, v, i, 1, 0));
  return s;
}

/* v's `width` lanes added in runs of `to`: lane i of the result sums
 * lanes i, i + to, i + 2 to, ... */
static LLVMValueRef fold(irb_t *r, LLVMValueRef v, int64_t width, int64_t to) {
  if (width == to) return v;
  LLVMValueRef s = shuffle(r, v, 0, to, 0);
  for (int64_t k = to; k < width; k += to) s = FADD(s, shuffle(r, v, k, to, 0));
  return s;
}

static LLVMValueRef load(irb_t *r, LLVMValueRef base, LLVMValueRef index, int64_t width) {
  LLVMValueRef p = LLVMBuildInBoundsGEP2(r->b, r->f32, base, &index, 1, "");
  LLVMValueRef v = LLVMBuildLoad2(r->b, of_width(r->f32, width), p, "");
  LLVMSetAlignment(v, 4);
  return v;
}

static void store(irb_t *r, LLVMValueRef value, LLVMValueRef base, LLVMValueRef index) {
  LLVMValueRef s = LLVMBuildStore(r->b, value, LLVMBuildInBoundsGEP2(r->b, r->f32, base, &index, 1, ""));
  LLVMSetAlignment(s, 4);
}

/* <b x i1>: lanes below `count` true. */
static LLVMValueRef first_lanes(irb_t *r, int64_t b, int64_t count) {
  LLVMValueRef bits[NORM_MAX_WIDTH];
  for (int64_t i = 0; i < b; ++i) bits[i] = LLVMConstInt(r->i1, i < count, 0);
  return LLVMConstVector(bits, (unsigned)b);
}

/* Calls the intrinsic `name` overloaded on a vector and a pointer type. */
static LLVMValueRef vector_intrinsic(irb_t *r, const char *name, LLVMTypeRef vector, LLVMValueRef *args,
                                     unsigned n) {
  LLVMTypeRef types[2] = {vector, r->ptr};
  const unsigned id = LLVMLookupIntrinsicID(name, strlen(name));
  LLVMValueRef fn = LLVMGetIntrinsicDeclaration(r->mod, id, types, 2);
  return LLVMBuildCall2(r->b, LLVMIntrinsicGetType(r->ctx, id, types, 2), fn, args, n, "");
}

/* load and store of the lanes `mask` (NULL: all) sets; lanes off load 0
 * and are not written. */
static LLVMValueRef load_masked(irb_t *r, LLVMValueRef base, LLVMValueRef index, int64_t width, LLVMValueRef mask) {
  if (!mask) return load(r, base, index, width);
  LLVMTypeRef type = of_width(r->f32, width);
  LLVMValueRef args[4] = {LLVMBuildInBoundsGEP2(r->b, r->f32, base, &index, 1, ""), LLVMConstInt(r->i32, 4, 0), mask,
                          LLVMConstNull(type)};
  return vector_intrinsic(r, "llvm.masked.load", type, args, 4);
}

static void store_masked(irb_t *r, LLVMValueRef value, LLVMValueRef base, LLVMValueRef index, LLVMValueRef mask) {
  if (!mask) {
    store(r, value, base, index);
    return;
  }
  LLVMValueRef args[4] = {value, LLVMBuildInBoundsGEP2(r->b, r->f32, base, &index, 1, ""), LLVMConstInt(r->i32, 4, 0),
                          mask};
  vector_intrinsic(r, "llvm.masked.store", LLVMTypeOf(value), args, 4);
}

/* ------------------------------------------------------------------------ */
/* Sums and moments                                                         */
/* ------------------------------------------------------------------------ */

/* Running sums of d = x - K and d^2 in double, `width` lanes each. */
typedef struct sums_t {
  LLVMValueRef s1, s2; /* allocas */
  LLVMTypeRef type;
} sums_t;

static sums_t sums_start(irb_t *r, int64_t width) {
  sums_t s = {irb_alloca(r, of_width(f64(r), width)), irb_alloca(r, of_width(f64(r), width)),
              of_width(f64(r), width)};
  irb_store(r, LLVMConstNull(s.type), s.s1);
  irb_store(r, LLVMConstNull(s.type), s.s2);
  return s;
}

/* Adds x - k; lanes where `keep` (NULL: all) is false add 0. */
static void sums_add(irb_t *r, const sums_t *s, LLVMValueRef x, LLVMValueRef k, LLVMValueRef keep) {
  LLVMValueRef d = FSUB(x, k);
  if (keep) d = SEL(keep, d, LLVMConstNull(LLVMTypeOf(d)));
  d = LLVMBuildFPExt(r->b, d, s->type, "");
  irb_store(r, FADD(irb_load(r, s->type, s->s1), d), s->s1);
  irb_store(r, irb_fma(r, d, d, irb_load(r, s->type, s->s2)), s->s2);
}

/* What the output pass needs of a line's (or of each lane's) statistics,
 * as floats: the mean as hi + lo, r = 1 / sqrt(variance + eps) and -lo r. */
typedef struct moments_t {
  LLVMValueRef hi, lo, rs, off;
} moments_t;

static moments_t moments_of(irb_t *r, double epsilon, LLVMValueRef mean, LLVMValueRef variance, int64_t width) {
  LLVMTypeRef ft = of_width(r->f32, width), dt = of_width(f64(r), width);
  LLVMValueRef zero = constant(f64(r), 0, width);
  /* Rounding can take the difference of the sums below 0. */
  variance = SEL(LLVMBuildFCmp(r->b, LLVMRealOLT, variance, zero, ""), zero, variance);
  LLVMValueRef sum = FADD(variance, constant(f64(r), epsilon, width));
  LLVMValueRef root = irb_intrinsic(r, "llvm.sqrt", dt, &sum, 1);
  moments_t m;
  m.hi = LLVMBuildFPTrunc(r->b, mean, ft, "");
  m.lo = LLVMBuildFPTrunc(r->b, FSUB(mean, LLVMBuildFPExt(r->b, m.hi, dt, "")), ft, "");
  m.rs = LLVMBuildFPTrunc(r->b, FDIV(constant(f64(r), 1, width), root), ft, "");
  m.off = FMUL(LLVMBuildFNeg(r->b, m.lo, ""), m.rs);
  return m;
}

/* The moments of `count` values from their shift k (floats) and sums. */
static moments_t moments(irb_t *r, double epsilon, LLVMValueRef k, LLVMValueRef s1, LLVMValueRef s2, int64_t count,
                         int64_t width) {
  /* A product, not a quotient: a division's latency, once a line, is
   * felt where lines are short (a pixel's channels). */
  LLVMValueRef inverse = constant(f64(r), 1.0 / (double)count, width);
  LLVMValueRef shift = FMUL(s1, inverse); /* the mean less k */
  LLVMValueRef mean = FADD(LLVMBuildFPExt(r->b, k, of_width(f64(r), width), ""), shift);
  LLVMValueRef variance = LLVMBuildFSub(r->b, FMUL(s2, inverse), FMUL(shift, shift), "");
  return moments_of(r, epsilon, mean, variance, width);
}

/* (x - hi - lo) rs, as fma(x - hi, rs, -lo rs). */
static LLVMValueRef normalized(irb_t *r, const moments_t *m, LLVMValueRef x) {
  return irb_fma(r, FSUB(x, m->hi), m->rs, m->off);
}

static moments_t splat_moments(irb_t *r, const moments_t *m, int64_t width) {
  moments_t s = {splat(r, m->hi, width), splat(r, m->lo, width), splat(r, m->rs, width), splat(r, m->off, width)};
  return s;
}

/* [first, first + count) (values; constants fold) in spans of decreasing
 * width: steps of widths[0] up to the last whole one, then of widths[1],
 * ..., the last width 1. Returns the spans not known to be empty. */
typedef struct span_t {
  int64_t width;
  LLVMValueRef first, end;
} span_t;

static int spans(irb_t *r, LLVMValueRef first, LLVMValueRef count, const int64_t *widths, int n, span_t *out) {
  int k = 0;
  for (int i = 0; i < n; ++i) {
    LLVMValueRef whole = widths[i] == 1 ? count : SUB(count, REM(count, C64(widths[i])));
    LLVMValueRef end = ADD(first, whole);
    if (!LLVMIsAConstantInt(whole) || LLVMConstIntGetSExtValue(whole) != 0)
      out[k++] = (span_t){widths[i], first, end};
    first = end;
    count = SUB(count, whole);
  }
  return k;
}

/* Doubles at base[index ...], `width` of them (1: a scalar), and their
 * store. */
static LLVMValueRef load64(irb_t *r, LLVMValueRef base, LLVMValueRef index, int64_t width) {
  LLVMValueRef p = LLVMBuildInBoundsGEP2(r->b, f64(r), base, &index, 1, "");
  LLVMValueRef v = LLVMBuildLoad2(r->b, of_width(f64(r), width), p, "");
  LLVMSetAlignment(v, 8);
  return v;
}

static void store64(irb_t *r, LLVMValueRef value, LLVMValueRef base, LLVMValueRef index) {
  LLVMSetAlignment(LLVMBuildStore(r->b, value, LLVMBuildInBoundsGEP2(r->b, f64(r), base, &index, 1, "")), 8);
}

/* Phase 0's iterations of a two-phase kernel in the `then` branch, phase
 * 1's in the `else`. */
static void if_prologue(irb_t *r, irb_if_t *f) {
  irb_if(r, f, LLVMBuildICmp(r->b, LLVMIntEQ, r->phase, C64(CPU_PHASE_PROLOGUE), ""));
}

/* ------------------------------------------------------------------------ */
/* LINE                                                                     */
/* ------------------------------------------------------------------------ */

typedef struct args_t {
  LLVMValueRef x, scale, bias, y, ws;
} args_t;

/* The sums of elements [first, first + count) of the line at `base`. */
static void line_sums(const norm_t *n, irb_t *r, const args_t *a, LLVMValueRef base, LLVMValueRef k,
                      LLVMValueRef first, LLVMValueRef count, LLVMValueRef *s1, LLVMValueRef *s2) {
  const int64_t widths[3] = {n->wide, n->lanes, 1};
  span_t sp[3];
  const int ns = spans(r, first, count, widths, 3, sp);
  irb_loop_t ls;
  *s1 = *s2 = LLVMConstReal(f64(r), 0);
  for (int i = 0; i < ns; ++i) {
    const int64_t w = sp[i].width;
    sums_t s = sums_start(r, w);
    LLVMValueRef kw = splat(r, k, w);
    LLVMValueRef at = irb_for(r, &ls, sp[i].first, sp[i].end, w);
    sums_add(r, &s, load(r, a->x, ADD(base, at), w), kw, NULL);
    irb_endfor(r, &ls);
    *s1 = FADD(*s1, lane_sum(r, irb_load(r, s.type, s.s1), w));
    *s2 = FADD(*s2, lane_sum(r, irb_load(r, s.type, s.s2), w));
  }
}

/* Elements [first, first + count) of the line at `base`, whose channels
 * start at c0. */
static void line_output(const norm_t *n, irb_t *r, const args_t *a, LLVMValueRef base, LLVMValueRef c0,
                        const moments_t *m, LLVMValueRef first, LLVMValueRef count) {
  const int64_t widths[3] = {n->wide, n->lanes, 1};
  span_t sp[3];
  irb_loop_t lc, ls;
  if (n->affine && n->rest > 1) {
    /* Channels of `rest` values each, those the range meets: fma(x - hi,
     * a, b) per channel. */
    LLVMValueRef end = ADD(first, count);
    LLVMValueRef c_end = DIV(ADD(end, C64(n->rest - 1)), C64(n->rest));
    LLVMValueRef c = irb_for(r, &lc, DIV(first, C64(n->rest)), c_end, 1);
    LLVMValueRef factor = FMUL(m->rs, irb_ld(r, a->scale, ADD(c0, c)));
    LLVMValueRef offset = irb_fma(r, LLVMBuildFNeg(r->b, m->lo, ""), factor, irb_ld(r, a->bias, ADD(c0, c)));
    LLVMValueRef from = MUL(c, C64(n->rest)), run = C64(n->rest);
    if (n->parts > 1) {
      /* A part may start or end inside a channel. */
      LLVMValueRef to = irb_smin(r, end, ADD(from, run));
      from = irb_smax(r, first, from);
      run = SUB(to, from);
    }
    const int ns = spans(r, from, run, widths, 3, sp);
    for (int i = 0; i < ns; ++i) {
      const int64_t w = sp[i].width;
      LLVMValueRef hi = splat(r, m->hi, w), fw = splat(r, factor, w), ow = splat(r, offset, w);
      LLVMValueRef at = ADD(base, irb_for(r, &ls, sp[i].first, sp[i].end, w));
      store(r, irb_fma(r, FSUB(load(r, a->x, at, w), hi), fw, ow), a->y, at);
      irb_endfor(r, &ls);
    }
    irb_endfor(r, &lc);
    return;
  }
  /* One channel a value (layer norm of the last dim), or no affine. */
  const int ns = spans(r, first, count, widths, 3, sp);
  for (int i = 0; i < ns; ++i) {
    const int64_t w = sp[i].width;
    const moments_t mw = splat_moments(r, m, w);
    LLVMValueRef j = irb_for(r, &ls, sp[i].first, sp[i].end, w);
    LLVMValueRef at = ADD(base, j);
    LLVMValueRef v = normalized(r, &mw, load(r, a->x, at, w));
    if (n->affine) v = irb_fma(r, v, load(r, a->scale, ADD(c0, j), w), load(r, a->bias, ADD(c0, j), w));
    store(r, v, a->y, at);
    irb_endfor(r, &ls);
  }
}

/* Iteration `it` (a value) of a LINE kernel: its line's first element,
 * its channels' first, and its part's range within the line. */
typedef struct line_at_t {
  LLVMValueRef base, c0, first, count;
} line_at_t;

static line_at_t line_at(const norm_t *n, irb_t *r, LLVMValueRef it) {
  line_at_t at;
  LLVMValueRef line = n->parts > 1 ? DIV(it, C64(n->parts)) : it;
  at.base = MUL(line, C64(n->rows));
  at.c0 = MUL(REM(line, C64(n->groups)), C64(n->per_group));
  if (n->parts > 1) {
    at.first = MUL(REM(it, C64(n->parts)), C64(n->part));
    at.count = irb_smin(r, C64(n->part), SUB(C64(n->rows), at.first));
  } else {
    at.first = C64(0);
    at.count = C64(n->rows);
  }
  return at;
}

static void gen_line(const norm_t *n, irb_t *r, const args_t *a) {
  irb_loop_t lo;
  irb_if_t phase;
  LLVMValueRef it, k, s1, s2;
  line_at_t at;
  if (n->parts > 1) {
    /* Phase 0: each part's sums, all shifted by the line's first value. */
    if_prologue(r, &phase);
    it = irb_for(r, &lo, r->begin, r->end, 1);
    at = line_at(n, r, it);
    line_sums(n, r, a, at.base, irb_ld(r, a->x, at.base), at.first, at.count, &s1, &s2);
    store64(r, s1, a->ws, MUL(it, C64(2)));
    store64(r, s2, a->ws, ADD(MUL(it, C64(2)), C64(1)));
    irb_endfor(r, &lo);
    irb_else(r, &phase);
  }
  it = irb_for(r, &lo, r->begin, r->end, 1);
  at = line_at(n, r, it);
  k = irb_ld(r, a->x, at.base);
  if (n->parts > 1) {
    LLVMValueRef sums = MUL(SUB(it, REM(it, C64(n->parts))), C64(2)); /* the line's first part's */
    s1 = s2 = LLVMConstReal(f64(r), 0);
    for (int64_t q = 0; q < n->parts; ++q) {
      s1 = FADD(s1, load64(r, a->ws, ADD(sums, C64(2 * q)), 1));
      s2 = FADD(s2, load64(r, a->ws, ADD(sums, C64(2 * q + 1)), 1));
    }
  } else {
    line_sums(n, r, a, at.base, k, at.first, at.count, &s1, &s2);
  }
  const moments_t m = moments(r, n->epsilon, k, s1, s2, n->rows, 1);
  line_output(n, r, a, at.base, at.c0, &m, at.first, at.count);
  irb_endfor(r, &lo);
  if (n->parts > 1) irb_endif(r, &phase);
}

/* ------------------------------------------------------------------------ */
/* COLUMNS                                                                  */
/* ------------------------------------------------------------------------ */

/* Columns col .. col + w - 1 of the group's matrix at `base`, those of
 * `mask` (NULL: all): the lanes off read zeros, whose moments are finite
 * (0, and 1 / sqrt(eps)), and write nothing. */
static void columns(const norm_t *n, irb_t *r, const args_t *a, LLVMValueRef base, LLVMValueRef c0, LLVMValueRef col,
                    int64_t w, LLVMValueRef mask) {
  irb_loop_t lm, lc, lr;
  LLVMValueRef first = ADD(base, col);
  LLVMValueRef k = load_masked(r, a->x, first, w, mask);
  sums_t s = sums_start(r, w);
  LLVMValueRef row = irb_for(r, &lm, C64(0), C64(n->rows), 1);
  sums_add(r, &s, load_masked(r, a->x, ADD(first, MUL(row, C64(n->inner))), w, mask), k, NULL);
  irb_endfor(r, &lm);
  const moments_t m =
      moments(r, n->epsilon, k, irb_load(r, s.type, s.s1), irb_load(r, s.type, s.s2), n->rows, w);
  LLVMValueRef c = irb_for(r, &lc, C64(0), C64(n->per_group), 1);
  LLVMValueRef sc = NULL, bc = NULL;
  if (n->affine) {
    sc = splat(r, irb_ld(r, a->scale, ADD(c0, c)), w);
    bc = splat(r, irb_ld(r, a->bias, ADD(c0, c)), w);
  }
  LLVMValueRef rr = irb_for(r, &lr, C64(0), C64(n->rest), 1);
  LLVMValueRef at = ADD(first, MUL(ADD(MUL(c, C64(n->rest)), rr), C64(n->inner)));
  LLVMValueRef v = normalized(r, &m, load_masked(r, a->x, at, w, mask));
  store_masked(r, n->affine ? irb_fma(r, v, sc, bc) : v, a->y, at, mask);
  irb_endfor(r, &lr);
  irb_endfor(r, &lc);
}

static void gen_columns(const norm_t *n, irb_t *r, const args_t *a) {
  const int64_t tiles = hetc_kit_ceil_div(n->inner, n->wide), tail = n->inner - (tiles - 1) * n->wide;
  irb_loop_t lo;
  LLVMValueRef it = irb_for(r, &lo, r->begin, r->end, 1);
  LLVMValueRef matrix = DIV(it, C64(tiles)), tile = REM(it, C64(tiles));
  LLVMValueRef base = MUL(matrix, C64(n->rows * n->inner));
  LLVMValueRef c0 = MUL(REM(matrix, C64(n->groups)), C64(n->per_group));
  LLVMValueRef col = MUL(tile, C64(n->wide));
  if (tail == n->wide) {
    columns(n, r, a, base, c0, col, n->wide, NULL);
  } else {
    /* The last tile, narrower: the same vectors, masked. */
    irb_if_t last;
    irb_if(r, &last, LT(tile, C64(tiles - 1)));
    columns(n, r, a, base, c0, col, n->wide, NULL);
    irb_else(r, &last);
    columns(n, r, a, base, c0, col, n->wide, first_lanes(r, n->wide, tail));
    irb_endif(r, &last);
  }
  irb_endfor(r, &lo);
}

/* ------------------------------------------------------------------------ */
/* GROUPS                                                                   */
/* ------------------------------------------------------------------------ */

/* Per lane of the iteration's blocks, on the stack. */
typedef struct lanes_t {
  LLVMValueRef s1, s2, k;        /* the sums (double) and shifts */
  LLVMValueRef hi, factor, offset; /* y = fma(x - hi, factor, offset) */
} lanes_t;

/* The sums of pixels [first, first + count) of the block at `blk`, each
 * lane shifted by its value at the block's first pixel (*kb). */
static void block_sums(const norm_t *n, irb_t *r, const args_t *a, LLVMValueRef blk, LLVMValueRef first,
                       LLVMValueRef count, LLVMValueRef *kb, LLVMValueRef *s1, LLVMValueRef *s2) {
  const int64_t b = n->block, widths[2] = {n->pixels, 1};
  span_t sp[2];
  const int ns = spans(r, first, count, widths, 2, sp);
  *kb = load(r, a->x, blk, b);
  *s1 = *s2 = LLVMConstNull(of_width(f64(r), b));
  irb_loop_t lp;
  for (int i = 0; i < ns; ++i) {
    const int64_t w = sp[i].width * b;
    sums_t s = sums_start(r, w);
    LLVMValueRef kw = w == b ? *kb : shuffle(r, *kb, 0, w, 1);
    LLVMValueRef p = irb_for(r, &lp, sp[i].first, sp[i].end, sp[i].width);
    sums_add(r, &s, load(r, a->x, ADD(blk, MUL(p, C64(b))), w), kw, NULL);
    irb_endfor(r, &lp);
    *s1 = FADD(*s1, fold(r, irb_load(r, s.type, s.s1), w, b));
    *s2 = FADD(*s2, fold(r, irb_load(r, s.type, s.s2), w, b));
  }
}

/* Lane `lane`'s mean. */
static LLVMValueRef lane_mean(const norm_t *n, irb_t *r, const lanes_t *l, LLVMValueRef lane) {
  LLVMValueRef k = LLVMBuildFPExt(r->b, irb_ld(r, l->k, lane), f64(r), "");
  return FADD(k, FMUL(load64(r, l->s1, lane, 1), LLVMConstReal(f64(r), 1.0 / (double)n->plane)));
}

/* The factors of the group whose lanes start at `first` (its channel c). */
static void group_factors(const norm_t *n, irb_t *r, const args_t *a, const lanes_t *l, LLVMValueRef first,
                          LLVMValueRef c) {
  const double plane = (double)n->plane;
  LLVMValueRef acc = irb_alloca(r, f64(r));
  irb_loop_t ll;
  /* Every lane counts `plane` values, so the group's mean is their means'
   * mean, and its sum of squares about it theirs about their own plus
   * plane times the squares of their means' distances to it. */
  irb_store(r, LLVMConstReal(f64(r), 0), acc);
  LLVMValueRef i = irb_for(r, &ll, C64(0), C64(n->per_group), 1);
  irb_store(r, FADD(irb_load(r, f64(r), acc), lane_mean(n, r, l, ADD(first, i))), acc);
  irb_endfor(r, &ll);
  LLVMValueRef mean = FDIV(irb_load(r, f64(r), acc), LLVMConstReal(f64(r), (double)n->per_group));
  irb_store(r, LLVMConstReal(f64(r), 0), acc);
  i = irb_for(r, &ll, C64(0), C64(n->per_group), 1);
  LLVMValueRef lane = ADD(first, i), s1 = load64(r, l->s1, lane, 1);
  LLVMValueRef own =
      LLVMBuildFSub(r->b, load64(r, l->s2, lane, 1), FDIV(FMUL(s1, s1), LLVMConstReal(f64(r), plane)), "");
  LLVMValueRef apart = LLVMBuildFSub(r->b, lane_mean(n, r, l, lane), mean, "");
  LLVMValueRef add = irb_fma(r, FMUL(apart, apart), LLVMConstReal(f64(r), plane), own);
  irb_store(r, FADD(irb_load(r, f64(r), acc), add), acc);
  irb_endfor(r, &ll);
  LLVMValueRef variance = FDIV(irb_load(r, f64(r), acc), LLVMConstReal(f64(r), plane * (double)n->per_group));
  const moments_t m = moments_of(r, n->epsilon, mean, variance, 1);
  i = irb_for(r, &ll, C64(0), C64(n->per_group), 1);
  lane = ADD(first, i);
  LLVMValueRef factor = m.rs, offset;
  if (n->affine) {
    factor = FMUL(factor, irb_ld(r, a->scale, ADD(c, i)));
    offset = irb_fma(r, LLVMBuildFNeg(r->b, m.lo, ""), factor, irb_ld(r, a->bias, ADD(c, i)));
  } else {
    offset = FMUL(LLVMBuildFNeg(r->b, m.lo, ""), factor);
  }
  irb_st(r, m.hi, l->hi, lane);
  irb_st(r, factor, l->factor, lane);
  irb_st(r, offset, l->offset, lane);
  irb_endfor(r, &ll);
}

/* Iteration `it` (a value) of a GROUPS kernel: its unit's first element
 * and its part's range of pixels. */
typedef struct unit_at_t {
  LLVMValueRef unit, base, first, count;
} unit_at_t;

static unit_at_t unit_at(const norm_t *n, irb_t *r, LLVMValueRef it) {
  unit_at_t at;
  at.unit = n->parts > 1 ? DIV(it, C64(n->parts)) : it;
  at.base = MUL(at.unit, C64(n->unit_blocks * n->block * n->plane));
  if (n->parts > 1) {
    at.first = MUL(REM(it, C64(n->parts)), C64(n->part));
    at.count = irb_smin(r, C64(n->part), SUB(C64(n->plane), at.first));
  } else {
    at.first = C64(0);
    at.count = C64(n->plane);
  }
  return at;
}

static void gen_groups(const norm_t *n, irb_t *r, const args_t *a) {
  const int64_t b = n->block, lanes = n->unit_blocks * b, units = n->blocks / n->unit_blocks;
  const int64_t groups = lanes / n->per_group; /* in an iteration: one, or a block's */
  lanes_t l;
  l.s1 = irb_alloca_array(r, f64(r), lanes);
  l.s2 = irb_alloca_array(r, f64(r), lanes);
  l.k = irb_alloca_array(r, r->f32, lanes);
  l.hi = irb_alloca_array(r, r->f32, lanes);
  l.factor = irb_alloca_array(r, r->f32, lanes);
  l.offset = irb_alloca_array(r, r->f32, lanes);
  irb_loop_t lo, lj, lq, lp;
  irb_if_t phase;
  LLVMValueRef it, j, kb, s1, s2;
  unit_at_t at;
  if (n->parts > 1) {
    /* Phase 0: each part's sums per lane, into the workspace. */
    if_prologue(r, &phase);
    it = irb_for(r, &lo, r->begin, r->end, 1);
    at = unit_at(n, r, it);
    j = irb_for(r, &lj, C64(0), C64(n->unit_blocks), 1);
    block_sums(n, r, a, ADD(at.base, MUL(j, C64(b * n->plane))), at.first, at.count, &kb, &s1, &s2);
    LLVMValueRef slot = MUL(ADD(MUL(it, C64(n->unit_blocks)), j), C64(2 * b));
    store64(r, s1, a->ws, slot);
    store64(r, s2, a->ws, ADD(slot, C64(b)));
    irb_endfor(r, &lj);
    irb_endfor(r, &lo);
    irb_else(r, &phase);
  }
  it = irb_for(r, &lo, r->begin, r->end, 1);
  at = unit_at(n, r, it);
  LLVMValueRef c_unit = MUL(REM(at.unit, C64(units)), C64(lanes)); /* channel of lane 0 */
  j = irb_for(r, &lj, C64(0), C64(n->unit_blocks), 1);
  LLVMValueRef blk = ADD(at.base, MUL(j, C64(b * n->plane))), lane = MUL(j, C64(b));
  if (n->parts > 1) {
    kb = load(r, a->x, blk, b);
    s1 = s2 = LLVMConstNull(of_width(f64(r), b));
    LLVMValueRef parts = SUB(it, REM(it, C64(n->parts))); /* the unit's first part */
    for (int64_t q = 0; q < n->parts; ++q) {
      LLVMValueRef slot = MUL(ADD(MUL(ADD(parts, C64(q)), C64(n->unit_blocks)), j), C64(2 * b));
      s1 = FADD(s1, load64(r, a->ws, slot, b));
      s2 = FADD(s2, load64(r, a->ws, ADD(slot, C64(b)), b));
    }
  } else {
    block_sums(n, r, a, blk, at.first, at.count, &kb, &s1, &s2);
  }
  store64(r, s1, l.s1, lane);
  store64(r, s2, l.s2, lane);
  store(r, kb, l.k, lane);
  irb_endfor(r, &lj);
  LLVMValueRef q = irb_for(r, &lq, C64(0), C64(groups), 1);
  LLVMValueRef first = MUL(q, C64(n->per_group)), c = ADD(c_unit, first);
  if (n->channels % b != 0) {
    /* The last block's padding lanes make up whole groups of no channel
     * (per_group divides the block and the channels): factors 0, zeros out. */
    irb_if_t real;
    irb_if(r, &real, LT(c, C64(n->channels)));
    group_factors(n, r, a, &l, first, c);
    irb_else(r, &real);
    irb_loop_t lz;
    LLVMValueRef i = irb_for(r, &lz, C64(0), C64(n->per_group), 1);
    irb_st(r, CF(0), l.hi, ADD(first, i));
    irb_st(r, CF(0), l.factor, ADD(first, i));
    irb_st(r, CF(0), l.offset, ADD(first, i));
    irb_endfor(r, &lz);
    irb_endif(r, &real);
  } else {
    group_factors(n, r, a, &l, first, c);
  }
  irb_endfor(r, &lq);
  const int64_t widths[2] = {n->pixels, 1};
  span_t sp[2];
  const int ns = spans(r, at.first, at.count, widths, 2, sp);
  j = irb_for(r, &lj, C64(0), C64(n->unit_blocks), 1);
  blk = ADD(at.base, MUL(j, C64(b * n->plane)));
  lane = MUL(j, C64(b));
  LLVMValueRef hb = load(r, l.hi, lane, b), fb = load(r, l.factor, lane, b), ob = load(r, l.offset, lane, b);
  for (int i = 0; i < ns; ++i) {
    const int64_t w = sp[i].width * b;
    LLVMValueRef hw = w == b ? hb : shuffle(r, hb, 0, w, 1), fw = w == b ? fb : shuffle(r, fb, 0, w, 1);
    LLVMValueRef ow = w == b ? ob : shuffle(r, ob, 0, w, 1);
    LLVMValueRef p = irb_for(r, &lp, sp[i].first, sp[i].end, sp[i].width);
    LLVMValueRef at_p = ADD(blk, MUL(p, C64(b)));
    store(r, irb_fma(r, FSUB(load(r, a->x, at_p, w), hw), fw, ow), a->y, at_p);
    irb_endfor(r, &lp);
  }
  irb_endfor(r, &lj);
  irb_endfor(r, &lo);
  if (n->parts > 1) irb_endif(r, &phase);
}

/* ------------------------------------------------------------------------ */
/* PIXELS                                                                   */
/* ------------------------------------------------------------------------ */

/* An iteration is `chunk` pixels: first each one's sums, then the
 * moments of all of them in one vector, then each one's output. A pixel
 * an iteration waits on its own sums' reduction, square root and
 * division, which are longer than its work at 96 channels; the chunk's
 * pixels are independent and hide it (1x96x56x56 in NCHW16c on one
 * AVX-512 thread: 40 us, 49 a pixel at a time). */
static void gen_pixels(const norm_t *n, irb_t *r, const args_t *a) {
  const int64_t b = n->block, whole = n->channels / b, stride = n->plane * b, chunk = n->chunk;
  LLVMValueRef keep = n->channels % b ? first_lanes(r, b, n->channels % b) : NULL;
  LLVMValueRef ks = irb_alloca_array(r, r->f32, chunk), s1s = irb_alloca_array(r, f64(r), chunk);
  LLVMValueRef s2s = irb_alloca_array(r, f64(r), chunk), his = irb_alloca_array(r, r->f32, chunk);
  LLVMValueRef rss = irb_alloca_array(r, r->f32, chunk), offs = irb_alloca_array(r, r->f32, chunk);
  irb_loop_t lo, lq, lc;
  LLVMValueRef it = irb_for(r, &lo, r->begin, r->end, 1);
  LLVMValueRef first = MUL(it, C64(chunk)); /* the chunk lies in one image: chunk divides the plane */
  LLVMValueRef base =
      ADD(MUL(DIV(first, C64(n->plane)), C64(n->blocks * stride)), MUL(REM(first, C64(n->plane)), C64(b)));
  LLVMValueRef q = irb_for(r, &lq, C64(0), C64(chunk), 1);
  LLVMValueRef pixel = ADD(base, MUL(q, C64(b)));
  LLVMValueRef k = irb_ld(r, a->x, pixel), kb = splat(r, k, b);
  sums_t s = sums_start(r, b);
  LLVMValueRef cb = irb_for(r, &lc, C64(0), C64(whole), 1);
  sums_add(r, &s, load(r, a->x, ADD(pixel, MUL(cb, C64(stride))), b), kb, NULL);
  irb_endfor(r, &lc);
  if (keep) sums_add(r, &s, load(r, a->x, ADD(pixel, C64(whole * stride)), b), kb, keep);
  irb_st(r, k, ks, q);
  store64(r, lane_sum(r, irb_load(r, s.type, s.s1), b), s1s, q);
  store64(r, lane_sum(r, irb_load(r, s.type, s.s2), b), s2s, q);
  irb_endfor(r, &lq);
  const moments_t m = moments(r, n->epsilon, load(r, ks, C64(0), chunk), load64(r, s1s, C64(0), chunk),
                              load64(r, s2s, C64(0), chunk), n->channels, chunk);
  store(r, m.hi, his, C64(0));
  store(r, m.rs, rss, C64(0));
  store(r, m.off, offs, C64(0));
  q = irb_for(r, &lq, C64(0), C64(chunk), 1);
  pixel = ADD(base, MUL(q, C64(b)));
  const moments_t mb = {splat(r, irb_ld(r, his, q), b), NULL, splat(r, irb_ld(r, rss, q), b),
                        splat(r, irb_ld(r, offs, q), b)};
  cb = irb_for(r, &lc, C64(0), C64(n->blocks), 1);
  LLVMValueRef at = ADD(pixel, MUL(cb, C64(stride)));
  LLVMValueRef v = normalized(r, &mb, load(r, a->x, at, b));
  if (n->affine) v = irb_fma(r, v, load(r, a->scale, MUL(cb, C64(b)), b), load(r, a->bias, MUL(cb, C64(b)), b));
  /* The padding lanes of the last block: 0 whatever the others hold. */
  if (keep) v = SEL(LLVMBuildOr(r->b, splat(r, LT(cb, C64(whole)), b), keep, ""), v, LLVMConstNull(LLVMTypeOf(v)));
  store(r, v, a->y, at);
  irb_endfor(r, &lc);
  irb_endfor(r, &lq);
  irb_endfor(r, &lo);
}

/* ------------------------------------------------------------------------ */

void cpu_gen_normalize(const cpu_gen_t *g, irb_t *r) {
  norm_t n;
  describe(g->isa, g->wl, &n);
  args_t a = {irb_arg(r, 0), NULL, NULL, NULL, NULL};
  if (n.affine) {
    a.scale = irb_arg(r, 1);
    a.bias = irb_arg(r, 2);
  }
  a.y = irb_arg(r, n.affine ? 3 : 1);
  if (n.parts > 1) a.ws = irb_arg(r, n.affine ? 4 : 2); /* after the output */
  switch (n.form) {
    case NORM_LINE: gen_line(&n, r, &a); break;
    case NORM_COLUMNS: gen_columns(&n, r, &a); break;
    case NORM_GROUPS: gen_groups(&n, r, &a); break;
    default: gen_pixels(&n, r, &a); break;
  }
}
