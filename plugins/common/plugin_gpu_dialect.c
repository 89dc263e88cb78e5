/* The portability layer of the GPU-style plugins (cuda, and opencl's ops): every kernel the plugin generates is written
 * against these macros, so that one text compiles as CUDA C with NVRTC (the
 * product) and as OpenCL C on PoCL (the tests' check of its arithmetic on
 * machines without a GPU).
 *
 *   HK_KERNEL(x, y, z)   a kernel entry for blocks of x*y*z threads
 *   HK_GLOBAL            qualifier of pointers to device memory
 *   HK_SHARED            declares block-shared memory (at kernel scope)
 *   HK_RESTRICT, HK_FN   no-alias pointers; a device helper function
 *   HK_TX/TY/TZ, HK_BX/BY/BZ   thread and block indices (int)
 *   HK_GID_X             the global thread index along x (long)
 *   HK_BARRIER()         block-wide barrier for shared memory
 *   HK_FMAX, HK_FMIN, HK_EXP, HK_EXPM1, HK_LOG, HK_LOG1P, HK_FABS, HK_TANH, HK_ERF, HK_ERFC, HK_SQRT, HK_NEG_INF
 *                        float math
 *   HK_TABLE             qualifies an initialised read-only table at file
 *                        scope: device global memory on CUDA (__device__
 *                        const: neither the 64 KiB __constant__ bank, nor
 *                        its serialised reads when a warp's threads read
 *                        different entries), __constant on OpenCL 1.2
 *                        (which has no program-scope __global data; the
 *                        plugin checks the device's constant buffer size)
 *   Tensor cores (blocks are 1-d, whole warps):
 *   HK_LANE, HK_WARP     lane in the warp, warp in the block
 *   HK_MMA_SCRATCH(s, w) declares what w warps' mma steps need (nothing
 *                        on CUDA, where lanes exchange through registers)
 *   hk_tf32(x)           a float rounded to TF32 (as its bits, unsigned)
 *   HK_MMA_TF32(c, a, b, s)  c[4] += A(16x8) B(8x8), PTX's m16n8k8 TF32
 *                        fragment layout (a[4], b[2], c[4] per lane);
 *                        every thread of the block must reach it.
 *   HK_UNROLL_MMA        before a loop around mma steps: unrolled on CUDA;
 *                        kept rolled on OpenCL, where each emulated step
 *                        holds two barriers and unrolled copies of them
 *                        make PoCL's compile several times slower.
 *
 * The OpenCL side emulates the mma step through shared memory with the
 * fragment layout of the PTX ISA, so a kernel that places its fragments
 * wrongly fails the tests there as it would on the GPU. */
#include "plugin_gpu_dialect.h"

static const char cuda_dialect[] =
    "#define HK_KERNEL(x, y, z) extern \"C\" __global__ void __launch_bounds__((x) * (y) * (z))\n"
    "#define HK_GLOBAL\n"
    "#define HK_SHARED __shared__\n"
    "#define HK_RESTRICT __restrict__\n"
    "#define HK_FN static __device__ __forceinline__\n"
    "#define HK_TX ((int)threadIdx.x)\n"
    "#define HK_TY ((int)threadIdx.y)\n"
    "#define HK_TZ ((int)threadIdx.z)\n"
    "#define HK_BX ((int)blockIdx.x)\n"
    "#define HK_BY ((int)blockIdx.y)\n"
    "#define HK_BZ ((int)blockIdx.z)\n"
    "#define HK_GID_X ((long)blockIdx.x * (long)blockDim.x + (long)threadIdx.x)\n"
    "#define HK_BARRIER() __syncthreads()\n"
    "#define HK_FMAX(a, b) fmaxf(a, b)\n"
    "#define HK_FMIN(a, b) fminf(a, b)\n"
    "#define HK_EXP(x) expf(x)\n"
    "#define HK_EXPM1(x) expm1f(x)\n"
    "#define HK_LOG(x) logf(x)\n"
    "#define HK_LOG1P(x) log1pf(x)\n"
    "#define HK_FABS(x) fabsf(x)\n"
    "#define HK_TANH(x) tanhf(x)\n"
    "#define HK_ERF(x) erff(x)\n"
    "#define HK_ERFC(x) erfcf(x)\n"
    "#define HK_SQRT(x) sqrtf(x)\n"
    "#define HK_NEG_INF (-__int_as_float(0x7f800000))\n"
    "#define HK_TABLE static __device__ const\n"
    "#define HK_LANE ((int)(threadIdx.x & 31u))\n"
    "#define HK_WARP ((int)(threadIdx.x >> 5))\n"
    "#define HK_MMA_SCRATCH(s, warps)\n"
    "#define HK_MMA_TF32(c, a, b, s) hk_mma_tf32(c, a, b)\n"
    "#define HK_UNROLL_MMA _Pragma(\"unroll\")\n"
    "HK_FN unsigned hk_tf32(float x) {\n"
    "  unsigned r;\n"
    "  asm(\"cvt.rna.tf32.f32 %0, %1;\" : \"=r\"(r) : \"f\"(x));\n"
    "  return r;\n"
    "}\n"
    "HK_FN void hk_mma_tf32(float *c, const unsigned *a, const unsigned *b) {\n"
    "  asm volatile(\"mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 \"\n"
    "               \"{%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};\"\n"
    "               : \"+f\"(c[0]), \"+f\"(c[1]), \"+f\"(c[2]), \"+f\"(c[3])\n"
    "               : \"r\"(a[0]), \"r\"(a[1]), \"r\"(a[2]), \"r\"(a[3]), \"r\"(b[0]), \"r\"(b[1]));\n"
    "}\n";

static const char opencl_dialect[] =
    "#define HK_KERNEL(x, y, z) __kernel __attribute__((reqd_work_group_size(x, y, z))) void\n"
    "#define HK_GLOBAL __global\n"
    "#define HK_SHARED __local\n"
    "#define HK_RESTRICT restrict\n"
    "#define HK_FN static inline\n"
    "#define HK_TX ((int)get_local_id(0))\n"
    "#define HK_TY ((int)get_local_id(1))\n"
    "#define HK_TZ ((int)get_local_id(2))\n"
    "#define HK_BX ((int)get_group_id(0))\n"
    "#define HK_BY ((int)get_group_id(1))\n"
    "#define HK_BZ ((int)get_group_id(2))\n"
    "#define HK_GID_X ((long)get_global_id(0))\n"
    "#define HK_BARRIER() barrier(CLK_LOCAL_MEM_FENCE)\n"
    "#define HK_FMAX(a, b) fmax(a, b)\n"
    "#define HK_FMIN(a, b) fmin(a, b)\n"
    "#define HK_EXP(x) exp(x)\n"
    "#define HK_EXPM1(x) expm1(x)\n"
    "#define HK_LOG(x) log(x)\n"
    "#define HK_LOG1P(x) log1p(x)\n"
    "#define HK_FABS(x) fabs(x)\n"
    "#define HK_TANH(x) tanh(x)\n"
    "#define HK_ERF(x) erf(x)\n"
    "#define HK_ERFC(x) erfc(x)\n"
    "#define HK_SQRT(x) sqrt(x)\n"
    "#define HK_NEG_INF (-INFINITY)\n"
    "#define HK_TABLE __constant\n"
    "#define HK_LANE ((int)(get_local_id(0) & 31u))\n"
    "#define HK_WARP ((int)(get_local_id(0) >> 5))\n"
    /* Per warp: A (16x8) then B (8x8), as floats. */
    "#define HK_MMA_SCRATCH(s, warps) __local float s[(warps) * 192]\n"
    "#define HK_MMA_TF32(c, a, b, s) hk_mma_tf32(c, a, b, (s) + HK_WARP * 192)\n"
    "#define HK_UNROLL_MMA\n"
    /* cvt.rna: to nearest, ties away from zero, 10 mantissa bits kept. */
    "HK_FN unsigned hk_tf32(float x) { return (as_uint(x) + 0x1000u) & 0xffffe000u; }\n"
    "HK_FN void hk_mma_tf32(float *c, const unsigned *a, const unsigned *b, __local float *s) {\n"
    "  const int g = HK_LANE >> 2, t = HK_LANE & 3;\n"
    "  barrier(CLK_LOCAL_MEM_FENCE);\n"
    "  s[g * 8 + t] = as_float(a[0]);\n"
    "  s[(g + 8) * 8 + t] = as_float(a[1]);\n"
    "  s[g * 8 + t + 4] = as_float(a[2]);\n"
    "  s[(g + 8) * 8 + t + 4] = as_float(a[3]);\n"
    "  s[128 + t * 8 + g] = as_float(b[0]);\n"
    "  s[128 + (t + 4) * 8 + g] = as_float(b[1]);\n"
    "  barrier(CLK_LOCAL_MEM_FENCE);\n"
    "  for (int i = 0; i < 4; ++i) {\n"
    "    const int row = g + (i >> 1) * 8, col = 2 * t + (i & 1);\n"
    "    float sum = 0.0f;\n"
    "    for (int k = 0; k < 8; ++k) sum += s[row * 8 + k] * s[128 + k * 8 + col];\n"
    "    c[i] += sum;\n"
    "  }\n"
    "}\n";

const char *hpc_gpu_dialect_cuda(void) { return cuda_dialect; }
const char *hpc_gpu_dialect_opencl(void) { return opencl_dialect; }
