/* lower.c — prints a kernel plan (hwmodel/plan/plan.h) as CUDA C (for NVRTC) or
 * OpenCL C 1.2. The plan made every decision; this file only spells them.
 * The two dialects differ only in the spellings of the table below, so
 * running the OpenCL kernel on PoCL checks the logic the CUDA kernel uses
 * (an asynchronous copy is spelled as a plain copy in OpenCL, into the same
 * ring of stage buffers, so the pipelining logic is checked too).
 *
 * Kernel shape (1-D grid, 1-D block):
 *   prologue   block index (optionally swizzled in groups for L2 reuse) ->
 *              block origin per spatial axis; thread index -> thread
 *              coordinate per spatial axis (last axis fastest); per staged
 *              input, the global and shared offsets of the copy units this
 *              thread moves (computed once, so the main loop has no div/mod);
 *   main loop  over reduce tiles: copy each staged input's box into a stage
 *              buffer (fast path: the box lies inside the tensor and the
 *              row and pointer are aligned, so copies are unpredicated
 *              vectors or cp.async; else predicated, identity-filling scalar
 *              copies), then per reduce index load register fragments (vector
 *              reads along the smem innermost dim where the plan says so) and
 *              accumulate (full tiles unrolled without bounds, the last tile
 *              with runtime bounds). With stages > 1, stages-1 tiles are in
 *              flight while one is computed;
 *   epilogue   alpha, beta, bias, relu; interior blocks store vectors
 *              without predicates, edge blocks predicated scalars.
 */
#include "kernels/codegen/codegen.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CW 256 /* width of a coordinate expression */

typedef struct dialect_spelling {
    const char *kernel_prefix; /* printf with threads, min blocks (CUDA) or threads (OpenCL) */
    const char *in_ptr, *out_ptr;
    const char *sync, *tid, *bid;
    const char *long_t, *neg_inf;
    const char *ws_ptr, *ws_int_ptr; /* split-K's workspace (no restrict: read back by other blocks) */
    /* the pragma over the last tile's reduce loops, whose bounds are runtime
     * values: NVRTC unrolls them by 4; PoCL's LLVM often cannot, and then
     * prints "N warning(s) generated." on the caller's stderr at every cold
     * build, so OpenCL kernels carry no pragma there ("": no line) */
    const char *unroll_bounded;
    /* the first line of the last tile's bounded compute (cold code): in
     * CUDA a pmevent, which the SASS listing shows as PMTRIG, so --sass's
     * steady path leaves that branch out exactly (sass.c); OpenCL none */
    const char *cold;
    /* the address space of a pointer into shared memory: CUDA's generic
     * pointers need none, OpenCL 1.2's need __local */
    const char *smem_q;
    /* Vector loads and stores, shared arrays and asynchronous copies are
     * macros defined here, so the kernel bodies of the two dialects are the
     * same text: GS_LD2/4(p), GS_ST2/4(p, v), GS_SMEM (a 16-byte aligned
     * shared array), GS_CP_ASYNC4/8/16(dst, src) (cp.async; a plain copy in
     * OpenCL), GS_CP_COMMIT(), GS_CP_WAIT(n) (no-ops in OpenCL), and the
     * reduce split's combine across a group's lanes, GS_GROUP_SUM/MAX(v, r,
     * mask) (warp shuffles in CUDA; a tree in local memory, GS_GROUP_SCRATCH,
     * in OpenCL 1.2, which has no shuffles). Split-K meets through
     * GS_FENCE() (a global memory fence), GS_ATOMIC_INC(int *),
     * GS_ATOMIC_ADDF(float *, v), GS_LDCG(p) (a load that sees other blocks'
     * fenced stores) and GS_SHARED_INT. */
    const char *preamble;
    /* Printed after the preamble only in kernels with a max combine or a relu
     * (GS_KDESC_MAXN), so the others keep their text: gs_maxn(a, b), the max
     * that propagates NaN (ir.h's NaN rule; fmax drops it), and the reduce
     * split's and split-K's combines over it, GS_GROUP_MAXN and GS_MAXN_OP
     * (the preamble's GS_GROUP_MAX and GS_MAX_OP are fmax's, unused). */
    const char *maxn;
    /* The same for a min combine (GS_KDESC_MINN): gs_minn, GS_GROUP_MINN, GS_MINN_OP. */
    const char *minn;
    const char *pos_inf;
} dialect_spelling;

static const dialect_spelling spellings[] = {
    [GS_DIALECT_CUDA] = {
        .kernel_prefix = "extern \"C\" __global__ void __launch_bounds__(%lld, %d)",
        .in_ptr = "const float* __restrict__",
        .out_ptr = "float* __restrict__",
        .sync = "__syncthreads()",
        .tid = "(int)threadIdx.x",
        .bid = "(int)blockIdx.x",
        .long_t = "long long",
        .neg_inf = "__int_as_float(0xff800000)",
        .ws_ptr = "float*",
        .ws_int_ptr = "int*",
        .unroll_bounded = "#pragma unroll 4",
        .cold = "asm volatile(\"pmevent 0;\");",
        .smem_q = "",
        .preamble =
            "#define GS_LD2(p) (*(const float2*)(p))\n"
            "#define GS_LD4(p) (*(const float4*)(p))\n"
            "#define GS_ST2(p, v) (*(float2*)(p) = (v))\n"
            "#define GS_ST4(p, v) (*(float4*)(p) = (v))\n"
            "#define GS_SMEM __shared__ __align__(16)\n"
            "#define GS_CP_ASYNC16(d, s) asm volatile(\"cp.async.cg.shared.global [%0], [%1], 16;\\n\" :: "
            "\"r\"((unsigned)__cvta_generic_to_shared(d)), \"l\"(s))\n"
            "#define GS_CP_ASYNC8(d, s) asm volatile(\"cp.async.ca.shared.global [%0], [%1], 8;\\n\" :: "
            "\"r\"((unsigned)__cvta_generic_to_shared(d)), \"l\"(s))\n"
            "#define GS_CP_ASYNC4(d, s) asm volatile(\"cp.async.ca.shared.global [%0], [%1], 4;\\n\" :: "
            "\"r\"((unsigned)__cvta_generic_to_shared(d)), \"l\"(s))\n"
            "#define GS_CP_COMMIT() asm volatile(\"cp.async.commit_group;\\n\" ::)\n"
            "#define GS_CP_WAIT(n) asm volatile(\"cp.async.wait_group %0;\\n\" :: \"n\"(n))\n"
            "#define GS_GROUP_SCRATCH(n)\n"
            "#define GS_GROUP_MASK(nt) ((tid >> 5) == ((nt) >> 5) ? (1u << ((nt) & 31)) - 1u : 0xffffffffu)\n"
            "#define GS_GROUP_SUM(v, r, m) for (int o_ = (r) / 2; o_ > 0; o_ >>= 1) v += __shfl_xor_sync(m, v, o_, r)\n"
            "#define GS_GROUP_MAX(v, r, m) for (int o_ = (r) / 2; o_ > 0; o_ >>= 1) v = fmaxf(v, __shfl_xor_sync(m, v, o_, r))\n"
            /* a group of whole warps: shuffles in each warp, then warp 0..r/32-1's
             * results through shared memory, read by every lane in one fixed order */
            "#define GS_GROUP_WIDE_SCRATCH(n) __shared__ float gs_red[(n) / 32]\n"
            "#define GS_GROUP_WIDE(v, r, OP) { GS_GROUP_##OP(v, 32, 0xffffffffu); if ((tid & 31) == 0) gs_red[tid >> 5] = v; \\\n"
            "    __syncthreads(); const int w0_ = (tid & ~((r) - 1)) >> 5; v = gs_red[w0_]; \\\n"
            "    for (int w_ = 1; w_ < (r) / 32; w_++) v = GS_##OP##_OP(v, gs_red[w0_ + w_]); __syncthreads(); }\n"
            "#define GS_SUM_OP(a, b) ((a) + (b))\n"
            "#define GS_MAX_OP(a, b) fmaxf(a, b)\n"
            "#define GS_FENCE() __threadfence()\n"
            "#define GS_ATOMIC_INC(p) atomicAdd((p), 1)\n"
            "#define GS_ATOMIC_ADDF(p, v) atomicAdd((p), (v))\n"
            "#define GS_LDCG(p) __ldcg(p)\n"
            "#define GS_SHARED_INT __shared__ int\n",
        .maxn =
            "__device__ __forceinline__ float gs_maxn(float a, float b) { return (a > b || a != a) ? a : b; }\n"
            "#define GS_GROUP_MAXN(v, r, m) for (int o_ = (r) / 2; o_ > 0; o_ >>= 1) v = gs_maxn(v, __shfl_xor_sync(m, v, o_, r))\n"
            "#define GS_MAXN_OP(a, b) gs_maxn(a, b)\n",
        .minn =
            "__device__ __forceinline__ float gs_minn(float a, float b) { return (a < b || a != a) ? a : b; }\n"
            "#define GS_GROUP_MINN(v, r, m) for (int o_ = (r) / 2; o_ > 0; o_ >>= 1) v = gs_minn(v, __shfl_xor_sync(m, v, o_, r))\n"
            "#define GS_MINN_OP(a, b) gs_minn(a, b)\n",
        .pos_inf = "__int_as_float(0x7f800000)",
    },
    [GS_DIALECT_OPENCL] = {
        .kernel_prefix = "__kernel __attribute__((reqd_work_group_size(%lld, 1, 1))) void",
        .in_ptr = "__global const float* restrict",
        .out_ptr = "__global float* restrict",
        .sync = "barrier(CLK_LOCAL_MEM_FENCE)",
        .tid = "(int)get_local_id(0)",
        .bid = "(int)get_group_id(0)",
        .long_t = "long",
        .ws_ptr = "__global float*",
        .ws_int_ptr = "__global int*",
        .unroll_bounded = "",
        .cold = "",
        .smem_q = "__local ",
        .neg_inf = "(-INFINITY)",
        .preamble =
            "#define GS_LD2(p) vload2(0, p)\n"
            "#define GS_LD4(p) vload4(0, p)\n"
            "#define GS_ST2(p, v) vstore2(v, 0, p)\n"
            "#define GS_ST4(p, v) vstore4(v, 0, p)\n"
            "#define GS_SMEM __local __attribute__((aligned(16)))\n"
            "#define GS_CP_ASYNC16(d, s) vstore4(vload4(0, s), 0, d)\n"
            "#define GS_CP_ASYNC8(d, s) vstore2(vload2(0, s), 0, d)\n"
            "#define GS_CP_ASYNC4(d, s) (*(d) = *(s))\n"
            "#define GS_CP_COMMIT()\n"
            "#define GS_CP_WAIT(n)\n"
            "#define GS_GROUP_SCRATCH(n) __local float gs_red[n]\n"
            "#define GS_GROUP_MASK(nt) 0u\n"
            "#define GS_GROUP_SUM(v, r, m) { gs_red[tid] = v; barrier(CLK_LOCAL_MEM_FENCE); \\\n"
            "    for (int o_ = (r) / 2; o_ > 0; o_ >>= 1) { if ((tid & ((r) - 1)) < o_) gs_red[tid] += gs_red[tid + o_]; \\\n"
            "    barrier(CLK_LOCAL_MEM_FENCE); } v = gs_red[tid & ~((r) - 1)]; barrier(CLK_LOCAL_MEM_FENCE); (void)(m); }\n"
            "#define GS_GROUP_MAX(v, r, m) { gs_red[tid] = v; barrier(CLK_LOCAL_MEM_FENCE); \\\n"
            "    for (int o_ = (r) / 2; o_ > 0; o_ >>= 1) { if ((tid & ((r) - 1)) < o_) gs_red[tid] = fmax(gs_red[tid], gs_red[tid + o_]); \\\n"
            "    barrier(CLK_LOCAL_MEM_FENCE); } v = gs_red[tid & ~((r) - 1)]; barrier(CLK_LOCAL_MEM_FENCE); (void)(m); }\n"
            "#define GS_GROUP_WIDE_SCRATCH(n) GS_GROUP_SCRATCH(n)\n"
            "#define GS_GROUP_WIDE(v, r, OP) GS_GROUP_##OP(v, r, 0u)\n"
            "#define GS_SUM_OP(a, b) ((a) + (b))\n"
            "#define GS_MAX_OP(a, b) fmax(a, b)\n"
            "#define GS_FENCE() mem_fence(CLK_GLOBAL_MEM_FENCE)\n"
            "#define GS_ATOMIC_INC(p) atomic_inc((volatile __global int*)(p))\n"
            "#define GS_ATOMIC_ADDF(p, v) { volatile __global uint* q_ = (volatile __global uint*)(p); uint o_, n_; \\\n"
            "    do { o_ = *q_; n_ = as_uint(as_float(o_) + (v)); } while (atomic_cmpxchg(q_, o_, n_) != o_); }\n"
            "#define GS_LDCG(p) (*(volatile __global const float*)(p))\n"
            "#define GS_SHARED_INT __local int\n",
        .maxn =
            "static inline float gs_maxn(float a, float b) { return (a > b || a != a) ? a : b; }\n"
            "#define GS_GROUP_MAXN(v, r, m) { gs_red[tid] = v; barrier(CLK_LOCAL_MEM_FENCE); \\\n"
            "    for (int o_ = (r) / 2; o_ > 0; o_ >>= 1) { if ((tid & ((r) - 1)) < o_) gs_red[tid] = gs_maxn(gs_red[tid], gs_red[tid + o_]); \\\n"
            "    barrier(CLK_LOCAL_MEM_FENCE); } v = gs_red[tid & ~((r) - 1)]; barrier(CLK_LOCAL_MEM_FENCE); (void)(m); }\n"
            "#define GS_MAXN_OP(a, b) gs_maxn(a, b)\n",
        .minn =
            "static inline float gs_minn(float a, float b) { return (a < b || a != a) ? a : b; }\n"
            "#define GS_GROUP_MINN(v, r, m) { gs_red[tid] = v; barrier(CLK_LOCAL_MEM_FENCE); \\\n"
            "    for (int o_ = (r) / 2; o_ > 0; o_ >>= 1) { if ((tid & ((r) - 1)) < o_) gs_red[tid] = gs_minn(gs_red[tid], gs_red[tid + o_]); \\\n"
            "    barrier(CLK_LOCAL_MEM_FENCE); } v = gs_red[tid & ~((r) - 1)]; barrier(CLK_LOCAL_MEM_FENCE); (void)(m); }\n"
            "#define GS_MINN_OP(a, b) gs_minn(a, b)\n",
        .pos_inf = "(INFINITY)",
    },
};

/* ---- element types ------------------------------------------------------------- *
 * A kernel of 16-bit tensors (gs_op dtype_in/dtype_out, the type table's rows)
 * keeps them as 16-bit storage (ushort in OpenCL, which needs no cl_khr_fp16;
 * unsigned short in CUDA, which needs no header) in global and shared memory:
 * copies move the bits, and the conversions sit where values meet the f32
 * arithmetic: GS_IN_F(x) on every input read into a fragment or a bias,
 * GS_OUT_F(x) on the output's old value, GS_F_OUT(y) once on each store.
 * f16 converts with vload_half / vstore_half_rte (OpenCL, core 1.2) or the
 * cvt instructions (CUDA, every arch); bf16 with shifts both ways, its store
 * rounding to nearest even with the rounding bias (NaN kept, quiet). Vector
 * accesses of 2, 4 and 8 elements (4, 8 and 16 bytes) are GS_LDH/GS_STH/
 * GS_CP_ASYNCH<bytes>, with components s0..s7. Printed only in typed
 * kernels, so f32 kernels keep their text. */
static const char *type_preamble[] = {
    [GS_DIALECT_CUDA] =
        "struct __align__(4) gs_h2 { unsigned short s0, s1; };\n"
        "struct __align__(8) gs_h4 { unsigned short s0, s1, s2, s3; };\n"
        "struct __align__(16) gs_h8 { unsigned short s0, s1, s2, s3, s4, s5, s6, s7; };\n"
        "#define GS_LDH2(p) (*(const gs_h2*)(p))\n"
        "#define GS_LDH4(p) (*(const gs_h4*)(p))\n"
        "#define GS_LDH8(p) (*(const gs_h8*)(p))\n"
        "#define GS_STH2(p, v) (*(gs_h2*)(p) = (v))\n"
        "#define GS_STH4(p, v) (*(gs_h4*)(p) = (v))\n"
        "#define GS_STH8(p, v) (*(gs_h8*)(p) = (v))\n"
        "#define GS_CP_ASYNCH4(d, s) GS_CP_ASYNC4(d, s)\n"
        "#define GS_CP_ASYNCH8(d, s) GS_CP_ASYNC8(d, s)\n"
        "#define GS_CP_ASYNCH16(d, s) GS_CP_ASYNC16(d, s)\n"
        "__device__ __forceinline__ float gs_h2f(unsigned short h) { float f; asm(\"cvt.f32.f16 %0, %1;\" : \"=f\"(f) : \"h\"(h)); return f; }\n"
        "__device__ __forceinline__ unsigned short gs_f2h(float f) { unsigned short h; asm(\"cvt.rn.f16.f32 %0, %1;\" : \"=h\"(h) : \"f\"(f)); return h; }\n"
        "__device__ __forceinline__ float gs_b2f(unsigned short h) { return __uint_as_float((unsigned)h << 16); }\n"
        "__device__ __forceinline__ unsigned short gs_f2b(float f) { const unsigned u = __float_as_uint(f);\n"
        "    return (u & 0x7fffffffu) > 0x7f800000u ? (unsigned short)((u >> 16) | 0x40u) : (unsigned short)((u + 0x7fffu + ((u >> 16) & 1u)) >> 16); }\n",
    [GS_DIALECT_OPENCL] =
        "#define GS_LDH2(p) vload2(0, p)\n"
        "#define GS_LDH4(p) vload4(0, p)\n"
        "#define GS_LDH8(p) vload8(0, p)\n"
        "#define GS_STH2(p, v) vstore2(v, 0, p)\n"
        "#define GS_STH4(p, v) vstore4(v, 0, p)\n"
        "#define GS_STH8(p, v) vstore8(v, 0, p)\n"
        "#define GS_CP_ASYNCH4(d, s) vstore2(vload2(0, s), 0, d)\n"
        "#define GS_CP_ASYNCH8(d, s) vstore4(vload4(0, s), 0, d)\n"
        "#define GS_CP_ASYNCH16(d, s) vstore8(vload8(0, s), 0, d)\n"
        "static inline float gs_h2f(ushort h) { return vload_half(0, (const half*)&h); }\n"
        "static inline ushort gs_f2h(float f) { ushort h; vstore_half_rte(f, 0, (half*)&h); return h; }\n"
        "static inline float gs_b2f(ushort h) { return as_float((uint)h << 16); }\n"
        "static inline ushort gs_f2b(float f) { const uint u = as_uint(f);\n"
        "    return (u & 0x7fffffffu) > 0x7f800000u ? (ushort)((u >> 16) | 0x40u) : (ushort)((u + 0x7fffu + ((u >> 16) & 1u)) >> 16); }\n",
};

/* math=tf32 (f32 tensors): each product input is rounded to TF32 as it
 * enters a fragment, GS_IN_F(x) = gs_tf32(x): cvt.rna.tf32.f32 on sm_80 and
 * later (its low 13 bits masked), and before, and in OpenCL, the same
 * rounding by bits (half an ulp added to the magnitude, ties away from
 * zero, then truncated; NaN and inf as they are). The bias and the
 * epilogue stay f32. */
static void print_tf32_macros(gs_sb *sb, gs_dialect d, int arch) {
    if (d == GS_DIALECT_CUDA && arch >= 80)
        gs_sb_puts(sb, "__device__ __forceinline__ float gs_tf32(float x) { unsigned u; asm(\"cvt.rna.tf32.f32 %0, %1;\" : "
                       "\"=r\"(u) : \"f\"(x)); return __uint_as_float(u & 0xffffe000u); }\n");
    else if (d == GS_DIALECT_CUDA)
        gs_sb_puts(sb, "__device__ __forceinline__ float gs_tf32(float x) { unsigned u = __float_as_uint(x);\n"
                       "    if ((u & 0x7f800000u) != 0x7f800000u) u = (u + 0x1000u) & 0xffffe000u; return __uint_as_float(u); }\n");
    else
        gs_sb_puts(sb, "static inline float gs_tf32(float x) { uint u = as_uint(x);\n"
                       "    if ((u & 0x7f800000u) != 0x7f800000u) u = (u + 0x1000u) & 0xffffe000u; return as_float(u); }\n");
    gs_sb_puts(sb, "#define GS_IN_F(x) gs_tf32(x)\n");
}

/* The conversion macros of one kernel's types (f32: the identity). */
/* The unary epilogue step's function (gs_unary) as the f32 helper gs_unary(y),
 * printed after the preamble only in kernels that have one: its body per
 * function, '$' standing for the dialect's float suffix of a math function
 * ("" in OpenCL, whose builtins are overloaded; "f" in CUDA) and P for the
 * parameter (a literal). NaN in, NaN out, for every function. */
static const char *const unary_body[GS_UN_COUNT] = {
    [GS_UN_NONE] = "y", [GS_UN_NEG] = "-y", [GS_UN_ABS] = "fabs$(y)", [GS_UN_EXP] = "exp$(y)",
    [GS_UN_LOG] = "log$(y)", [GS_UN_SQRT] = "sqrt$(y)", [GS_UN_RSQRT] = "1.0f / sqrt$(y + P)",
    [GS_UN_RECIP] = "1.0f / y", [GS_UN_TANH] = "tanh$(y)", [GS_UN_SIGMOID] = "1.0f / (1.0f + exp$(-y))",
    [GS_UN_ERF] = "erf$(y)", [GS_UN_SOFTPLUS] = "fmax$(y, 0.0f) + log1p$(exp$(-fabs$(y)))",
    [GS_UN_SOFTSIGN] = "y / (1.0f + fabs$(y))", [GS_UN_FLOOR] = "floor$(y)", [GS_UN_CEIL] = "ceil$(y)",
    [GS_UN_ROUND] = "rint$(y)", [GS_UN_SIGN] = "y > 0.0f ? 1.0f : y < 0.0f ? -1.0f : y",
    [GS_UN_SIN] = "sin$(y)", [GS_UN_COS] = "cos$(y)", [GS_UN_TAN] = "tan$(y)", [GS_UN_ASIN] = "asin$(y)",
    [GS_UN_ACOS] = "acos$(y)", [GS_UN_ATAN] = "atan$(y)", [GS_UN_SINH] = "sinh$(y)", [GS_UN_COSH] = "cosh$(y)",
    [GS_UN_ASINH] = "asinh$(y)", [GS_UN_ACOSH] = "acosh$(y)", [GS_UN_ATANH] = "atanh$(y)",
    [GS_UN_GELU] = "0.5f * y * (1.0f + erf$(y * 0.707106781f))",
    [GS_UN_GELU_TANH] = "0.5f * y * (1.0f + tanh$(0.797884561f * (y + 0.044715f * y * y * y)))",
    [GS_UN_LEAKYRELU] = "y < 0.0f ? P * y : y", [GS_UN_ELU] = "y < 0.0f ? P * expm1$(y) : y",
    [GS_UN_CELU] = "fmax$(y, 0.0f) + fmin$(0.0f, P * expm1$(y / P))",
    [GS_UN_THRESHOLDED_RELU] = "y > P ? y : 0.0f", [GS_UN_HARDSIGMOID] = "fmin$(1.0f, fmax$(0.0f, y + P))",
    [GS_UN_HARDSWISH] = "y * fmin$(1.0f, fmax$(0.0f, y * 0.166666667f + 0.5f))",
    [GS_UN_MISH] = "y * tanh$(fmax$(y, 0.0f) + log1p$(exp$(-fabs$(y))))",
    [GS_UN_SWISH] = "y / (1.0f + exp$(-P * y))", [GS_UN_LOGP] = "log$(y + P)",
};
static void print_unary_fn(gs_sb *sb, const gs_op *op, gs_dialect d) {
    if (!op->unary || op->unary >= GS_UN_COUNT) return;
    gs_sb_puts(sb, d == GS_DIALECT_CUDA ? "__device__ __forceinline__ float gs_unary(float y) {"
                                        : "static inline float gs_unary(float y) {");
    gs_sb_puts(sb, " if (y != y) return y; return ");
    for (const char *c = unary_body[op->unary]; *c; c++) {
        if (*c == '$') {
            if (d == GS_DIALECT_CUDA) gs_sb_puts(sb, "f");
        } else if (*c == 'P')
            gs_sb_printf(sb, "(%.9ef)", (double)op->unary_p);
        else
            gs_sb_printf(sb, "%c", *c);
    }
    gs_sb_puts(sb, "; }\n");
}

static void print_type_macros(gs_sb *sb, const gs_op *op) {
    static const char *to_f[] = {"(x)", "gs_h2f(x)", "gs_b2f(x)"}, *from_f[] = {"(y)", "gs_f2h(y)", "gs_f2b(y)"};
    gs_sb_printf(sb, "#define GS_IN_F(x) %s\n#define GS_OUT_F(x) %s\n#define GS_F_OUT(y) %s\n", to_f[op->dtype_in % 3],
                 to_f[op->dtype_out % 3], from_f[op->dtype_out % 3]);
}

/* ---- the printer ----------------------------------------------------------------- */
typedef struct printer {
    gs_sb sb;
    const gs_op *op;
    const gs_etir *e;
    const gs_plan *p;
    const dialect_spelling *sp;
    gs_dialect dialect;
    const char *idx_t; /* type of linear offsets */
    int indent;
    int na, ni, nred;
    int64_t thr[GS_MAX_AXES], t0[GS_MAX_AXES];
    gs_launch_arg args[GS_LAUNCH_MAX_ARGS]; /* the kernel's arguments (gs_plan_launch_args) */
    int nargs;
    bool typed;          /* some tensor is not f32 (the element types' spellings below) */
    char in_ptr[64], out_ptr[64]; /* the buffer pointer types (the dialect's, or 16-bit storage) */
    char id_raw[16];     /* identity_raw's text */
    /* register fragments: f<t>[i] by default; the fragment-pipelined main
     * loop's are declared once as fr<t>[2][n] and indexed by a set, fslot
     * ("[(kk + 1) & 1]"), with frag_decl off */
    const char *fname, *fslot;
    bool frag_nodecl;
    bool walk_ptr; /* in a steady loop (plan.peel): a fast copy's tile base is sp<t>, stepped a tile at a
                      time (a conv's: with the counters, its units walking from it, copy_ptr_step; a
                      gemm's units at their offsets from it, a cp.async's destinations from sd<t>) */
    /* mma (plan.mma): the instruction row and the role of each axis (m, n, k, batch) */
    const gs_mma_row *mr;
    int8_t role[GS_MAX_AXES];
    const char *mma_acc; /* the epilogue's vector store: the pair's first accumulator index */
    /* element-read fragments at a lane base fb<t> plus constants
     * (gs_plan_mma_frag_affine; mma_fold_init), a register's two 16-bit
     * elements one aligned 32-bit read where fpair[t] */
    bool ffold[2], fpair[2];
    gs_mma_frag_fold ff[2];
    /* ldmatrix rows at a lane base lb<t> plus it * ldx + ks * ldk, where t's
     * role or k spans several axes (gs_plan_mma_ldsm_affine) */
    bool lfold[2];
    int64_t ldx[2], ldk[2];
} printer;

static void line(printer *m, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void line(printer *m, const char *fmt, ...) {
    for (int i = 0; i < m->indent; i++) gs_sb_puts(&m->sb, "    ");
    va_list ap;
    va_start(ap, fmt);
    gs_sb_vprintf(&m->sb, fmt, ap);
    va_end(ap);
    gs_sb_puts(&m->sb, "\n");
}
static void open_(printer *m, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void open_(printer *m, const char *fmt, ...) {
    for (int i = 0; i < m->indent; i++) gs_sb_puts(&m->sb, "    ");
    va_list ap;
    va_start(ap, fmt);
    gs_sb_vprintf(&m->sb, fmt, ap);
    va_end(ap);
    gs_sb_puts(&m->sb, " {\n");
    m->indent++;
}
static void open_block(printer *m) {
    line(m, "{");
    m->indent++;
}
static void close_(printer *m) {
    m->indent--;
    line(m, "}");
}

static bool spatial(const gs_op *op, int a) { return op->axes[a].kind == GS_AXIS_SPATIAL; }

static const char *comp(int e) { return e == 0 ? "x" : e == 1 ? "y" : e == 2 ? "z" : "w"; }
static const char *vtype(int w) { return w == 4 ? "float4" : w == 2 ? "float2" : "float"; }

/* Storage of an element of type dt (0: f32) and its w-wide vectors, their
 * components, and the load/store macro names: f32's as before; 16-bit
 * types by the tables above. */
static bool is16(int dt) { return dt != GS_DTYPE_F32; }
/* Whether an input read into a fragment converts (GS_IN_F): a 16-bit
 * input, or f32 rounded to TF32. */
static bool in_cvt(const printer *m) { return is16(m->op->dtype_in) || m->op->math == GS_MATH_TF32; }
static const char *svtype(const printer *m, int w, int dt) {
    if (!is16(dt)) return vtype(w);
    if (w <= 1) return m->dialect == GS_DIALECT_OPENCL ? gs_dtype_row(dt)->opencl_t : gs_dtype_row(dt)->cuda_t;
    static const char *cl[] = {"", "", "ushort2", "", "ushort4", "", "", "", "ushort8"};
    static const char *cu[] = {"", "", "gs_h2", "", "gs_h4", "", "", "", "gs_h8"};
    return (m->dialect == GS_DIALECT_OPENCL ? cl : cu)[w <= 8 ? w : 8];
}
static const char *scomp(int k, int dt) {
    static const char *s16[] = {"s0", "s1", "s2", "s3", "s4", "s5", "s6", "s7"};
    return is16(dt) ? s16[k & 7] : comp(k);
}
static const char *ldm(int dt) { return is16(dt) ? "GS_LDH" : "GS_LD"; }
static const char *stm(int dt) { return is16(dt) ? "GS_STH" : "GS_ST"; }
static int ebytes(int dt) { return gs_dtype_row(dt)->bytes; }
/* x wrapped in the conversion mac ("GS_IN_F", ...) when on (the value's type
 * converts), into buf. */
static const char *cvt(char *buf, size_t n, const char *mac, bool on, const char *x) {
    if (on) snprintf(buf, n, "%s(%s)", mac, x);
    else snprintf(buf, n, "%s", x);
    return buf;
}

/* Identity of the combine: what an out-of-bounds read yields. */
static const char *identity(const printer *m) {
    return m->op->combine == GS_COMBINE_MAX ? m->sp->neg_inf : m->op->combine == GS_COMBINE_MIN ? m->sp->pos_inf : "0.0f";
}
/* The same as the inputs' storage bits (a copy into shared memory), from
 * the type table's zero, -inf and +inf. */
static const char *identity_raw(printer *m) {
    if (!is16(m->op->dtype_in)) return identity(m);
    const gs_dtype_info *r = gs_dtype_row(m->op->dtype_in);
    const int c = m->op->combine;
    snprintf(m->id_raw, sizeof m->id_raw, "0x%04x",
             (unsigned)(c == GS_COMBINE_MAX ? r->neg_inf_bits : c == GS_COMBINE_MIN ? r->pos_inf_bits : r->zero_bits));
    return m->id_raw;
}

/* Local (within-block) coordinate of axis a: for spatial axes the register
 * index r<a> spread over vthreads; for reduce axes the reduce index. */
static void local_expr(const printer *m, int a, const char *r, char *buf, size_t n) {
    if (!spatial(m->op, a)) {
        snprintf(buf, n, "kr%d", a);
        return;
    }
    long long t0 = m->t0[a], thr = m->thr[a], t1 = m->e->tile[a].thread;
    if (t0 == 1) snprintf(buf, n, "(%s * %lld + th%d)", r, thr, a);
    else if (t0 == t1) snprintf(buf, n, "(th%d * %lld + %s)", a, t0, r);
    else snprintf(buf, n, "((%s / %lld) * %lld + th%d * %lld + %s %% %lld)", r, t0, thr * t0, a, t0, r, t0);
}

/* Affine index of a tensor dim over the given axis coordinate texts. */
static void affine_text(const gs_affine *f, int naxes, char coord[][CW], char *buf, size_t n) {
    size_t off = (size_t)snprintf(buf, n, "(%lld", (long long)f->offset);
    for (int a = 0; a < naxes && off < n; a++) {
        if (!f->coeff[a]) continue;
        if (f->coeff[a] == 1) off += (size_t)snprintf(buf + off, n - off, " + %s", coord[a]);
        else off += (size_t)snprintf(buf + off, n - off, " + %lld * %s", (long long)f->coeff[a], coord[a]);
    }
    if (off < n) snprintf(buf + off, n - off, ")");
}

/* Linear row-major index text ((g0 * S1 + g1) * S2 + g2) of tensor t from
 * coordinate variables <prefix><j>. */
static char *linear_text(const printer *m, int t, const char *prefix) {
    gs_sb lin;
    gs_sb_init(&lin);
    gs_sb_printf(&lin, "(%s)%s0", m->idx_t, prefix);
    for (int j = 1; j < m->op->tensors[t].ndim; j++) {
        char *prev = gs_sb_take(&lin);
        gs_sb_init(&lin);
        gs_sb_printf(&lin, "(%s * S%d_%d + %s%d)", prev ? prev : "0", t, j, prefix, j);
        free(prev);
    }
    return gs_sb_take(&lin);
}

/* `<var> = in-bounds ? in<t>[linear] : identity;` over coordinate vars:
 * converted to f32 (a fragment) or raw storage (raw: a copy's unit). */
static void global_read(printer *m, int t, const char *prefix, const char *lhs, bool raw) {
    const gs_tensor *ts = &m->op->tensors[t];
    gs_sb cond;
    gs_sb_init(&cond);
    for (int j = 0; j < ts->ndim; j++)
        gs_sb_printf(&cond, "%s%s%d >= 0 && %s%d < S%d_%d", j ? " && " : "", prefix, j, prefix, j, t, j);
    char *c = gs_sb_take(&cond), *l = linear_text(m, t, prefix);
    if (raw || !in_cvt(m)) {
        line(m, "%s = (%s) ? in%d[%s] : %s;", lhs, c ? c : "0", t, l ? l : "0", raw ? identity_raw(m) : identity(m));
    } else {
        line(m, "%s = (%s) ? GS_IN_F(in%d[%s]) : %s;", lhs, c ? c : "0", t, l ? l : "0", identity(m));
    }
    free(c);
    free(l);
}

/* ---- prologue ---------------------------------------------------------------------- */
static void print_signature(printer *m, const gs_kernel_src *out) {
    if (m->dialect == GS_DIALECT_CUDA)
        gs_sb_printf(&m->sb, m->sp->kernel_prefix, (long long)m->p->threads, (int)m->p->min_blocks);
    else
        gs_sb_printf(&m->sb, m->sp->kernel_prefix, (long long)m->p->threads);
    gs_sb_printf(&m->sb, " %s(", out->name);
    for (int i = 0; i < m->nargs; i++) {
        const gs_launch_arg *a = &m->args[i];
        const char *type = a->type;
        if (a->role == GS_ARG_INPUT || a->role == GS_ARG_BIAS) type = m->in_ptr;
        else if (a->role == GS_ARG_OUTPUT) type = m->out_ptr;
        else if (a->role == GS_ARG_WORKSPACE) type = m->sp->ws_ptr;
        gs_sb_printf(&m->sb, "%s%s %s", i ? ", " : "", type, a->name);
    }
    gs_sb_puts(&m->sb, ")\n{\n");
}

/* The banner's argument list: every argument in order, the buffers with
 * their sizes for this operator's extents, and the workspace's rule. */
static void print_banner_args(printer *m) {
    gs_sb_puts(&m->sb, " * args:");
    for (int i = 0; i < m->nargs; i++) {
        const gs_launch_arg *a = &m->args[i];
        gs_sb_printf(&m->sb, "%s %s", i ? "," : "", a->name);
        if (!strcmp(a->type, "float*") || !strcmp(a->type, "uint16_t*"))
            gs_sb_printf(&m->sb, "[%lld]", (long long)a->elems);
    }
    if (m->typed)
        gs_sb_printf(&m->sb, " (buffers: elements for these extents; inputs and bias %s, output %s; f32 arithmetic)",
                     gs_dtype_name((gs_dtype)m->op->dtype_in), gs_dtype_name((gs_dtype)m->op->dtype_out));
    else gs_sb_puts(&m->sb, " (buffers: 4-byte elements for these extents)");
    if (m->nargs > 0 && m->args[m->nargs - 1].role == GS_ARG_WORKSPACE)
        gs_sb_printf(&m->sb, "\n * ws: split-K workspace, %lld bytes for these extents; zero it before the first "
                             "launch (each launch leaves it ready for the next); one per launch in flight",
                     (long long)m->args[m->nargs - 1].bytes);
    gs_sb_puts(&m->sb, " */\n");
}

/* Block origins ob<a>: the block index decomposes with the last spatial
 * axis fastest. With a raster group G = 2^raster over the last two spatial
 * axes (x slower, y faster), consecutive blocks walk G rows of x before
 * moving along y, so a wave shares row and column panels in L2. */
static void print_block_index(printer *m) {
    const gs_op *op = m->op;
    const gs_etir *e = m->e;
    const gs_plan *p = m->p;
    line(m, "int bid = %s;", m->sp->bid);
    for (int a = 0; a < m->na; a++)
        if (spatial(op, a)) line(m, "const int nb%d = (E%d + %d - 1) / %d;", a, a, e->tile[a].block, e->tile[a].block);
    if (p->split_mode != GS_SPLIT_NONE) { /* split-K: the split index is the slowest */
        gs_sb nsp;
        gs_sb_init(&nsp);
        gs_sb_puts(&nsp, "1");
        for (int a = 0; a < m->na; a++)
            if (spatial(op, a)) gs_sb_printf(&nsp, " * nb%d", a);
        char *ns = gs_sb_take(&nsp);
        line(m, "const int nsp = %s; /* blocks of one split */", ns ? ns : "1");
        free(ns);
        line(m, "const int ks = bid / nsp;");
        line(m, "bid -= ks * nsp;");
        line(m, "const int tile_id = bid;");
    }
    int gx = p->raster_x, gy = p->raster_y;
    bool ras = p->raster > 0 && gx >= 0 && gy >= 0;
    if (ras) {
        int G = 1 << p->raster;
        line(m, "/* raster: groups of %d block rows of axis %s */", G, op->axes[gx].name);
        line(m, "const int pair = nb%d * nb%d;", gx, gy);
        line(m, "int loc = bid %% pair; bid /= pair;");
        line(m, "const int grp = loc / (%d * nb%d), first = grp * %d;", G, gy, G);
        line(m, "const int gsz = nb%d - first < %d ? nb%d - first : %d;", gx, G, gx, G);
        line(m, "loc -= grp * %d * nb%d;", G, gy);
        line(m, "const int ob%d = (first + loc %% gsz) * %d;", gx, e->tile[gx].block);
        line(m, "const int ob%d = (loc / gsz) * %d;", gy, e->tile[gy].block);
    }
    for (int a = m->na - 1; a >= 0; a--) {
        if (!spatial(op, a) || (ras && (a == gx || a == gy))) continue;
        line(m, "const int ob%d = (bid %% nb%d) * %d; bid /= nb%d;", a, a, e->tile[a].block, a);
    }
    line(m, "(void)bid;");
    if (p->lanes > 1) {
        line(m, "/* group: %d lanes share each output's reduction along %s */", p->lanes,
             op->axes[gs_etir_lanes_axis(op)].name);
        line(m, "const int lane = tid %% %d;", p->lanes);
        line(m, "int tt = tid / %d;", p->lanes);
    } else {
        line(m, "int tt = tid;");
    }
    for (int a = m->na - 1; a >= 0; a--) {
        if (!spatial(op, a)) continue;
        line(m, "const int th%d = tt %% %lld; tt /= %lld;", a, (long long)m->thr[a], (long long)m->thr[a]);
    }
    line(m, "(void)tt;");
}

/* Run-time alignment of the vector paths: a row length that is a multiple
 * of the width and a 16-byte aligned (for the width) pointer. Uniform over
 * the grid, so the branch it guards costs nothing. */
static void print_guards(printer *m) {
    const gs_plan *p = m->p;
    for (int t = 0; t < m->ni; t++) {
        const gs_plan_input *pi = &p->in[t];
        if (!pi->staged || pi->copy_vec == 1 || !p->fast_path) continue;
        int last = m->op->tensors[t].ndim - 1;
        line(m, "const int al%d = (S%d_%d %% %d) == 0 && ((size_t)in%d %% %d) == 0;", t, t, last, pi->copy_vec, t,
             ebytes(m->op->dtype_in) * pi->copy_vec);
    }
    /* unstaged inputs read without predicates: their shapes are the extents */
    for (int t = 0; t < m->ni; t++) {
        const gs_plan_input *pi = &p->in[t];
        if (pi->staged || !pi->direct || !p->fast_path) continue;
        const gs_tensor *ts = &m->op->tensors[t];
        gs_sb c;
        gs_sb_init(&c);
        for (int j = 0; j < ts->ndim; j++) {
            int a = -1;
            for (int x = 0; x < m->na; x++)
                if (ts->idx[j].coeff[x]) a = x;
            gs_sb_printf(&c, "%sS%d_%d == E%d", j ? " && " : "", t, j, a);
        }
        if (pi->frag_vec > 1)
            gs_sb_printf(&c, " && (S%d_%d %% %d) == 0 && ((size_t)in%d %% %d) == 0", t, ts->ndim - 1, pi->frag_vec, t,
                         ebytes(m->op->dtype_in) * pi->frag_vec);
        char *cs = gs_sb_take(&c);
        line(m, "const int ald%d = %s;", t, cs ? cs : "0");
        free(cs);
    }
    if (p->out_vec > 1) {
        int last = gs_op_out(m->op)->ndim - 1;
        line(m, "const int alo = (S%d_%d %% %d) == 0 && ((size_t)out %% %d) == 0%s;", m->ni, last, p->out_vec,
             ebytes(m->op->dtype_out) * p->out_vec, p->bias_vec > 1 ? " && ((size_t)bias % 16) == 0" : "");
    }
    if (p->fast_path) {
        gs_sb c;
        gs_sb_init(&c);
        bool any = false;
        for (int a = 0; a < m->na; a++) {
            if (!spatial(m->op, a)) continue;
            gs_sb_printf(&c, "%sob%d + %d <= E%d", any ? " && " : "", a, m->e->tile[a].block, a);
            any = true;
        }
        char *s = gs_sb_take(&c);
        line(m, "const int inb = %s; /* the block lies inside every extent */", any && s ? s : "1");
        free(s);
    }
}

/* Name of the global strides of a staged input's box dims: the tensor's
 * (gs<t>_<j>), or an im2col view's (gv<t>_<k>, each the sum of the tensor
 * strides its axis steps). */
static const char *box_gstride(const gs_plan_input *pi) { return pi->im2col ? "gv" : "gs"; }

/* Dims of staged input t's box: the tensor's, or its im2col view's. */
static int box_ndim(const printer *m, int t) {
    const gs_plan_input *pi = &m->p->in[t];
    return pi->im2col ? pi->view_ndim : m->op->tensors[t].ndim;
}

/* Assign the offsets of unit i of staged input t to the lvalues gl (global,
 * from the tile's base; NULL: not wanted) and sl (shared), computed from the
 * unit's index in a block of their own: units are numbered row-major with
 * copy_vec elements along the copy dim innermost. */
static void print_unit_decompose_at(printer *m, int t, const char *u0, const char *gl, const char *sl) {
    const gs_plan_input *pi = &m->p->in[t];
    const char *gsn = box_gstride(pi);
    int64_t per_row = pi->dims[pi->copy_dim] / pi->copy_vec;
    open_block(m);
    line(m, "int u = %s;", u0);
    line(m, "int c = (u %% %lld) * %d; u /= %lld;", (long long)per_row, pi->copy_vec, (long long)per_row);
    if (gl) line(m, "%s g = (%s)c * %s%d_%d;", m->idx_t, m->idx_t, gsn, t, pi->copy_dim);
    line(m, "int s = c * %lld;", (long long)pi->sstride[pi->copy_dim]);
    for (int j = box_ndim(m, t) - 1; j >= 0; j--) {
        if (j == pi->copy_dim) continue;
        if (pi->store_group > 1 && j == pi->inner_dim) { /* the group's first row (plan.store_group) */
            const long long gx = (long long)(pi->dims[j] / pi->store_group);
            line(m, "c = (u %% %lld) * %d; u /= %lld;", gx, pi->store_group, gx);
        } else {
            line(m, "c = u %% %lld; u /= %lld;", (long long)pi->dims[j], (long long)pi->dims[j]);
        }
        if (gl) line(m, "g += (%s)c * %s%d_%d;", m->idx_t, gsn, t, j);
        line(m, "s += c * %lld;", (long long)pi->sstride[j]);
    }
    if (gl) line(m, "%s = g;", gl);
    line(m, "%s = s;", sl);
    close_(m);
}

static void print_unit_decompose(printer *m, int t, const char *gl, const char *sl) {
    char u0[48];
    snprintf(u0, sizeof u0, "tid + i * %d", (int)m->p->threads);
    print_unit_decompose_at(m, t, u0, gl, sl);
}

/* Inside a unit loop: `gu` (when want_g) and `su`, the offsets of unit i. */
static void print_unit_offsets(printer *m, int t, bool want_g) {
    const gs_plan_input *pi = &m->p->in[t];
    if (pi->unit_sep) {
        /* unit 0's offsets plus those of unit number i * threads alone (no
         * carry between the two: plan.unit_sep); i is an unrolled constant,
         * so gd is a sum of strides times constants and sd a constant.
         * (The fast path reads src + gd, src already at unit 0.) */
        if (want_g) line(m, "%s gd;", m->idx_t);
        line(m, "int sd;");
        char u0[32];
        snprintf(u0, sizeof u0, "i * %d", (int)m->p->threads);
        print_unit_decompose_at(m, t, u0, want_g ? "gd" : NULL, "sd");
        line(m, "const int su = so%d + sd;", t);
    } else if (pi->unit_recompute) {
        if (want_g) line(m, "%s gu;", m->idx_t);
        line(m, "int su;");
        print_unit_decompose(m, t, want_g ? "gu" : NULL, "su");
    } else if (pi->store_group > 1) { /* group i / G, its row i % G */
        const int g = pi->store_group;
        if (want_g) line(m, "const %s gu = go%d + (i / %d) * gst%d + (i %% %d) * gs%d_%d;", m->idx_t, t, g, t, g, t, pi->inner_dim);
        line(m, "const int su = so%d + (i / %d) * %lld + (i %% %d) * %lld;", t, g,
             (long long)pi->unit_rows * (long long)pi->sstride[pi->unit_dim], g, (long long)pi->sstride[pi->inner_dim]);
    } else if (pi->unit_linear) {
        if (want_g) line(m, "const %s gu = go%d + i * gst%d;", m->idx_t, t, t);
        line(m, "const int su = so%d + i * %lld;", t, (long long)pi->unit_rows * (long long)pi->sstride[pi->unit_dim]);
    } else {
        if (want_g) line(m, "const %s gu = go%d[i];", m->idx_t, t);
        line(m, "const int su = so%d[i];", t);
    }
}

/* The global strides of an im2col view's dims: view dim k steps axis a_k,
 * which moves every tensor dim j by its coefficient on a_k. */
static void print_view_strides(printer *m, int t) {
    const gs_plan_input *pi = &m->p->in[t];
    const gs_tensor *ts = &m->op->tensors[t];
    for (int k = 0; k < pi->view_ndim; k++) {
        int a = pi->view_axis[k];
        gs_sb g;
        gs_sb_init(&g);
        bool any = false;
        for (int j = 0; j < ts->ndim; j++) {
            long long c = (long long)ts->idx[j].coeff[a];
            if (!c) continue;
            if (c == 1) gs_sb_printf(&g, "%sgs%d_%d", any ? " + " : "", t, j);
            else gs_sb_printf(&g, "%s%lld * gs%d_%d", any ? " + " : "", c, t, j);
            any = true;
        }
        char *gs = gs_sb_take(&g);
        line(m, "const %s gv%d_%d = %s; /* axis %s */", m->idx_t, t, k, any && gs ? gs : "0", m->op->axes[a].name);
        free(gs);
    }
}

/* Shared stage buffers, global strides of staged inputs, and the offsets of
 * the copy units each thread moves (unit u = tid + i * threads, numbered
 * row-major with copy_vec elements along the tensor's innermost dim). */
static void print_staging_setup(printer *m) {
    const gs_plan *p = m->p;
    if (p->smem_dynamic && m->dialect == GS_DIALECT_CUDA) {
        line(m, "extern __shared__ __align__(16) %s gs_dsm[];", svtype(m, 1, m->op->dtype_in));
        int64_t off = 0;
        for (int t = 0; t < m->ni; t++) {
            if (!p->in[t].staged) continue;
            line(m, "%s* const sm%d = gs_dsm + %lld;", svtype(m, 1, m->op->dtype_in), t, (long long)off);
            off += p->stages * p->in[t].stage_elems;
        }
    } else {
        for (int t = 0; t < m->ni; t++)
            if (p->in[t].staged)
                line(m, "GS_SMEM %s sm%d[%lld];", svtype(m, 1, m->op->dtype_in), t,
                     (long long)(p->stages * p->in[t].stage_elems));
    }
    for (int t = 0; t < m->ni; t++) {
        const gs_plan_input *pi = &p->in[t];
        const gs_tensor *ts = &m->op->tensors[t];
        if (!pi->staged) continue;
        /* global strides of the tensor dims */
        for (int j = ts->ndim - 1; j >= 0; j--) {
            if (j == ts->ndim - 1) line(m, "const %s gs%d_%d = 1;", m->idx_t, t, j);
            else line(m, "const %s gs%d_%d = gs%d_%d * S%d_%d;", m->idx_t, t, j, t, j + 1, t, j + 1);
        }
        if (pi->im2col) print_view_strides(m, t);
        char box[160];
        size_t bo = 0;
        for (int j = 0; j < box_ndim(m, t) && bo < sizeof box; j++)
            bo += (size_t)snprintf(box + bo, sizeof box - bo, " %lld", (long long)pi->dims[j]);
        line(m, "/* %s: %s%s, %lld units of %d per tile, %d per thread */", ts->name, pi->im2col ? "im2col tile" : "box",
             box, (long long)pi->units, pi->copy_vec, pi->units_per_thread);
        if (!pi->unit_recompute) {
            bool lin = pi->unit_linear || pi->unit_sep;
            if (lin) {
                /* unit i = unit 0 + i rows of unit_dim: two offsets and a step
                 * (unit_sep: unit 0's offsets, the rest per unit from i) */
                if (p->fast_path) line(m, "%s go%d;", m->idx_t, t);
                line(m, "int so%d;", t);
                if (p->fast_path && pi->unit_linear)
                    line(m, "const %s gst%d = %d * %s%d_%d;", m->idx_t, t, (int)pi->unit_rows, box_gstride(pi), t,
                         pi->unit_dim);
                open_block(m);
                line(m, "const int i = 0;");
            } else {
                if (p->fast_path) line(m, "%s go%d[%d];", m->idx_t, t, pi->units_per_thread);
                line(m, "int so%d[%d];", t, pi->units_per_thread);
                line(m, "#pragma unroll");
                open_(m, "for (int i = 0; i < %d; i++)", pi->units_per_thread);
            }
            char gl[32], sl[32];
            snprintf(gl, sizeof gl, lin ? "go%d" : "go%d[i]", t);
            snprintf(sl, sizeof sl, lin ? "so%d" : "so%d[i]", t);
            print_unit_decompose(m, t, p->fast_path ? gl : NULL, sl);
            close_(m);
        }
        if (p->stages > 1 && pi->copy_mode == GS_COPY_REG)
            line(m, "%s pf%d[%d];", svtype(m, pi->copy_vec, m->op->dtype_in), t, pi->units_per_thread);
    }
}

/* ---- copies ------------------------------------------------------------------------ */
typedef enum copy_kind {
    COPY_DIRECT,   /* global -> shared now (loads then stores) */
    COPY_PREFETCH, /* global -> the pf registers; stored after the compute */
    COPY_ISSUE     /* global -> shared asynchronously (cp.async; a plain copy in OpenCL) */
} copy_kind;

/* Declare or<a> = the origin of reduce tile `tile` on every reduce axis. */
static void print_tile_origins(printer *m, const char *tile) {
    const int sa = m->p->split_axis; /* split-K: this block's run starts at tile k0 */
    if (m->nred == 1) {
        for (int a = 0; a < m->na; a++)
            if (!spatial(m->op, a))
                line(m, "const int or%d = (%s%s) * %d;", a, a == sa ? "k0 + " : "", tile, m->e->tile[a].block);
        return;
    }
    line(m, "int trem = %s;", tile);
    for (int a = m->na - 1; a >= 0; a--) {
        if (spatial(m->op, a)) continue;
        line(m, "const int or%d = (%strem %% nk%d) * %d; trem /= nk%d;", a, a == sa ? "k0 + " : "", a, m->e->tile[a].block,
             a);
    }
    line(m, "(void)trem;");
}

/* With several reduce axes the fragment-pipelined loop keeps each tile's
 * per-axis tile index in counters, <c><a> (ci: the tile computed, cn: the
 * tile copied, stages-1 ahead), stepped once a tile with the last reduce
 * axis fastest, instead of dividing the tile number by the runtime tile
 * counts nk<a> twice a tile. */
static bool tile_counters(const printer *m) { return m->p->stages > 1 && m->p->smem_bytes > 0 && m->nred > 1; }

/* Declare counters c<a> at tile number `tile` (once, before the loop). */
static void print_counters_init(printer *m, const char *c, const char *tile) {
    line(m, "int %strem = %s;", c, tile);
    for (int a = m->na - 1; a >= 0; a--) {
        if (spatial(m->op, a)) continue;
        line(m, "int %s%d = %strem %% nk%d; %strem /= nk%d;", c, a, c, a, c, a);
    }
}

/* or<a> from the counters c<a>. */
static void print_counter_origins(printer *m, const char *c) {
    const int sa = m->p->split_axis;
    for (int a = 0; a < m->na; a++)
        if (!spatial(m->op, a))
            line(m, "const int or%d = (%s%s%d) * %d;", a, a == sa ? "k0 + " : "", c, a, m->e->tile[a].block);
}

/* Step counters c<a> to the next tile: the last reduce axis fastest, a
 * wrapped axis carrying into the next slower one. */
static void print_counters_step(printer *m, const char *c) {
    int open = 0, prev = -1;
    for (int a = m->na - 1; a >= 0; a--) {
        if (spatial(m->op, a)) continue;
        if (prev >= 0) {
            open_(m, "if (%s%d == nk%d)", c, prev, prev);
            open++;
            line(m, "%s%d = 0;", c, prev);
        }
        line(m, "%s%d++;", c, a);
        prev = a;
    }
    for (; open > 0; open--) close_(m);
}

/* Advance both counter sets a tile. With two stages the tile computed next
 * is the one copied this iteration, so ci takes cn's values (a move per axis)
 * before cn steps, instead of stepping ci's own carry chain too. */
static void print_counters_advance(printer *m) {
    if (m->p->stages == 2)
        for (int a = 0; a < m->na; a++)
            if (!spatial(m->op, a)) line(m, "ci%d = cn%d;", a, a);
    if (m->p->stages != 2) print_counters_step(m, "ci");
    print_counters_step(m, "cn");
}

/* "sm<t>[buffer * stage_elems + off]" (malloc'd; NULL on OOM). */
static char *smem_ref(const printer *m, int t, const char *buf, const char *off) {
    gs_sb r;
    gs_sb_init(&r);
    if (m->p->in[t].swizzle) { /* mma's XOR layout: GS_SWZ<t>(index) */
        if (m->p->stages > 1) gs_sb_printf(&r, "sm%d[GS_SWZ%d((%s) * %lld + %s)]", t, t, buf, (long long)m->p->in[t].stage_elems, off);
        else gs_sb_printf(&r, "sm%d[GS_SWZ%d(%s)]", t, t, off);
        return gs_sb_take(&r);
    }
    if (m->p->stages > 1) gs_sb_printf(&r, "sm%d[(%s) * %lld + %s]", t, buf, (long long)m->p->in[t].stage_elems, off);
    else gs_sb_printf(&r, "sm%d[%s]", t, off);
    return gs_sb_take(&r);
}

/* Store a unit's value v (a vector of copy_vec) at so<t>[i] of buffer buf:
 * one vector store when the unit is contiguous in shared memory, else one
 * scalar store per element (a transposing copy). */
static void print_store_unit(printer *m, int t, const char *buf, const char *v) {
    const gs_plan_input *pi = &m->p->in[t];
    char off[96];
    if (pi->store_vec > 1) {
        snprintf(off, sizeof off, "su");
        char *ref = smem_ref(m, t, buf, off);
        gs_sb ptr;
        gs_sb_init(&ptr);
        gs_sb_printf(&ptr, "&%s", ref ? ref : "");
        char *pp = gs_sb_take(&ptr);
        gs_sb st;
        gs_sb_init(&st);
        gs_sb_printf(&st, "%s%d(%s, %s)", stm(m->op->dtype_in), pi->store_vec, pp ? pp : "", v);
        char *ss = gs_sb_take(&st);
        line(m, "%s;", ss ? ss : "");
        free(ss);
        free(pp);
        free(ref);
        return;
    }
    for (int k = 0; k < pi->copy_vec; k++) {
        snprintf(off, sizeof off, "su + %lld", (long long)(k * pi->sstride[pi->copy_dim]));
        char *ref = smem_ref(m, t, buf, off);
        if (pi->copy_vec == 1) line(m, "%s = %s;", ref ? ref : "", v);
        else line(m, "%s = %s.%s;", ref ? ref : "", v, scomp(k, m->op->dtype_in));
        free(ref);
    }
}

/* Open the loop over a thread's copy units, in the plan's batches: one
 * unrolled loop when the batch is every unit, else a rolled loop over
 * unrolled batches. Units beyond the tile (the last round when the units do
 * not divide by the threads) are skipped. Returns the scopes opened. */
static int open_units(printer *m, int t) {
    const gs_plan_input *pi = &m->p->in[t];
    const int upt = pi->units_per_thread, b = pi->copy_batch > 0 ? pi->copy_batch : upt;
    int64_t covered = (int64_t)upt * m->p->threads;
    int scopes = 1;
    if (b < upt) {
        line(m, "#pragma unroll 1");
        open_(m, "for (int i0 = 0; i0 < %d; i0 += %d)", upt, b);
        line(m, "#pragma unroll");
        open_(m, "for (int i = i0; i < i0 + %d; i++)", b);
        covered = (int64_t)((upt + b - 1) / b) * b * m->p->threads;
        scopes = 2;
    } else {
        line(m, "#pragma unroll");
        open_(m, "for (int i = 0; i < %d; i++)", upt);
    }
    if (pi->units != covered) line(m, "if (tid + i * %d >= %lld) break;", (int)m->p->threads, (long long)pi->units);
    return scopes;
}

static void close_units(printer *m, int scopes) {
    while (scopes-- > 0) close_(m);
}

/* The tensor coordinates g<j> of element k of an im2col unit at view
 * coordinates c<view dim>: the tile origin's point lo<j> (an im2col tile has
 * no negative coefficient) plus each view axis' coordinate times its
 * coefficient. */
static void print_view_coords(printer *m, int t, int k) {
    const gs_plan_input *pi = &m->p->in[t];
    const gs_tensor *ts = &m->op->tensors[t];
    for (int j = 0; j < ts->ndim; j++) {
        gs_sb g;
        gs_sb_init(&g);
        gs_sb_printf(&g, "lo%d", j);
        for (int v = 0; v < pi->view_ndim; v++) {
            long long c = (long long)ts->idx[j].coeff[pi->view_axis[v]];
            if (!c) continue;
            long long add = v == pi->copy_dim ? c * k : 0;
            if (c == 1) gs_sb_printf(&g, " + c%d", v);
            else gs_sb_printf(&g, " + %lld * c%d", c, v);
            if (add) gs_sb_printf(&g, " + %lld", add);
        }
        char *gs = gs_sb_take(&g);
        line(m, "const int g%d = %s;", j, gs ? gs : "0");
        free(gs);
    }
}

/* The copy of staged input t's box for the reduce tile whose origins or<a>
 * are in scope, into buffer buf. */
/* Whether the fast copy of staged input t walks one pointer over its units
 * (src += gst<t> after each, an IMAD.WIDE) instead of adding each unit's
 * 32-bit offset go<t> + i * gst<t> to the tile's base (a 32-bit add, a sign
 * extension and a 64-bit scaled add: four instructions a unit in the SASS).
 * Taken for operators of several reduce axes (convolutions), whose copies are
 * redone at every small (c, r, s) tile: there the per-unit address was a
 * third of the steady iteration's non-FFMA work. Needs linear unit offsets
 * (stepped) or separable ones (plan.unit_sep: src moves to unit 0 once, each
 * unit reads src + gd, gd folded from i). */
static bool copy_ptr_step(const printer *m, int t) {
    return m->nred > 1 && (m->p->in[t].unit_linear || m->p->in[t].unit_sep);
}

/* The fast path of a copy, the lo<j> of the box in scope: the box lies
 * inside the tensor and the rows are aligned, so each unit is one vector
 * load (or cp.async) from its precomputed offset, without predicates. */
static void print_copy_fast(printer *m, int t, const char *buf, copy_kind kind) {
    const int nd = m->op->tensors[t].ndim, cv = m->p->in[t].copy_vec;
    gs_sb base;
    gs_sb_init(&base);
    /* (an im2col tile has no negative coefficient: lo<j> is the tile
     * origin's point, from which its units' offsets count) */
    for (int j = 0; j < nd; j++) gs_sb_printf(&base, "%s(%s)lo%d * gs%d_%d", j ? " + " : "", m->idx_t, j, t, j);
    char *bs = gs_sb_take(&base);
    const bool step = copy_ptr_step(m, t);
    if (m->walk_ptr) line(m, "%s src = sp%d;", m->in_ptr, t);
    else line(m, "%s src = in%d + (%s);", m->in_ptr, t, bs ? bs : "0");
    free(bs);
    if (step) line(m, "src += go%d;", t);
    /* a gemm's walked cp.async of linear units: the destination's stage
     * buffer and unit 0 once, sd<t>, and unit i at a constant from it (the
     * shared addresses were an IADD3 and an IMAD a unit: ptxas converts
     * each to the shared window separately) */
    const bool sdst = kind == COPY_ISSUE && m->walk_ptr && m->nred == 1 && m->p->in[t].unit_linear && !m->p->in[t].swizzle;
    if (sdst) {
        char so[16];
        snprintf(so, sizeof so, "so%d", t);
        char *ref = smem_ref(m, t, buf, so);
        line(m, "%s%s *sd%d = &%s;", m->sp->smem_q, svtype(m, 1, m->op->dtype_in), t, ref ? ref : "");
        free(ref);
    }
    int us = open_units(m, t);
    char ld[CW + 16], ptr[CW];
    const bool sep = m->p->in[t].unit_sep;
    if (sep) { /* src + gd: gd from i's digits (print_unit_offsets) */
        print_unit_offsets(m, t, true);
        snprintf(ptr, sizeof ptr, "src + gd");
    } else if (step && m->p->in[t].store_group > 1) { /* src at the unit: a group's rows, then the next group */
        const gs_plan_input *pi = &m->p->in[t];
        line(m, "const int su = so%d + (i / %d) * %lld + (i %% %d) * %lld;", t, pi->store_group,
             (long long)pi->unit_rows * (long long)pi->sstride[pi->unit_dim], pi->store_group,
             (long long)pi->sstride[pi->inner_dim]);
        snprintf(ptr, sizeof ptr, "src");
    } else if (step) { /* su only: the global address is src, stepped below */
        line(m, "const int su = so%d + i * %lld;", t,
             (long long)m->p->in[t].unit_rows * (long long)m->p->in[t].sstride[m->p->in[t].unit_dim]);
        snprintf(ptr, sizeof ptr, "src");
    } else {
        print_unit_offsets(m, t, true);
        snprintf(ptr, sizeof ptr, "src + gu");
    }
    if (cv > 1) snprintf(ld, sizeof ld, "%s%d(%s)", ldm(m->op->dtype_in), cv, ptr);
    else snprintf(ld, sizeof ld, sep ? "src[gd]" : step ? "*src" : "src[gu]");
    if (kind == COPY_PREFETCH) {
        line(m, "pf%d[i] = %s;", t, ld);
    } else if (sdst) {
        line(m, "GS_CP_ASYNC%s%d(&sd%d[i * %lld], %s);", is16(m->op->dtype_in) ? "H" : "", ebytes(m->op->dtype_in) * cv, t,
             (long long)m->p->in[t].unit_rows * (long long)m->p->in[t].sstride[m->p->in[t].unit_dim], ptr);
    } else if (kind == COPY_ISSUE) {
        char *ref = smem_ref(m, t, buf, "su");
        line(m, "GS_CP_ASYNC%s%d(&%s, %s);", is16(m->op->dtype_in) ? "H" : "", ebytes(m->op->dtype_in) * cv,
             ref ? ref : "", ptr);
        free(ref);
    } else {
        line(m, "const %s v = %s;", svtype(m, cv, m->op->dtype_in), ld);
        print_store_unit(m, t, buf, "v");
    }
    /* a group's rows step one pointer (G rows apart, then on to the next
     * group), as the ungrouped units do: offsets of the rows from the group's
     * address would each hold a 64-bit register across the loop (h100 conv2d
     * N=1 C=32 28x28 K=192 1x1 nchw, sg4 under lb(32,12): ptxas kept 168
     * registers and spilled two invariants, 28 bytes; one pointer: 0) */
    if (step && !sep && m->p->in[t].store_group > 1) {
        const gs_plan_input *pi = &m->p->in[t];
        line(m, "src += i %% %d == %d ? gst%d - %d * gs%d_%d : gs%d_%d;", pi->store_group, pi->store_group - 1, t,
             pi->store_group - 1, t, pi->inner_dim, t, pi->inner_dim);
    } else if (step && !sep) line(m, "src += gst%d;", t);
    close_units(m, us);
}

/* The lo<j> of input t's box at the origins in scope (ob<a>, or<a>). */
static void print_box_origin(printer *m, int t) {
    const gs_tensor *ts = &m->op->tensors[t];
    char origin[GS_MAX_AXES][CW];
    for (int a = 0; a < m->na; a++) snprintf(origin[a], CW, spatial(m->op, a) ? "ob%d" : "or%d", a);
    for (int j = 0; j < ts->ndim; j++) {
        char buf2[1024];
        affine_text(&ts->idx[j], m->na, origin, buf2, sizeof buf2);
        line(m, "const int lo%d = %s + %lld;", j, buf2, (long long)gs_plan_neg_reach(m->op, m->e, &ts->idx[j]));
    }
}

static void print_copy(printer *m, int t, const char *buf, copy_kind kind) {
    const gs_op *op = m->op;
    const gs_tensor *ts = &op->tensors[t];
    const gs_plan_input *pi = &m->p->in[t];
    const int nd = ts->ndim, nb = box_ndim(m, t), cv = pi->copy_vec;
    open_(m, "/* copy %s */", ts->name);
    print_box_origin(m, t);
    if (m->p->fast_path) {
        gs_sb c;
        gs_sb_init(&c);
        gs_sb_puts(&c, cv > 1 ? "al" : "1");
        if (cv > 1) gs_sb_printf(&c, "%d", t);
        for (int j = 0; j < nd; j++) gs_sb_printf(&c, " && lo%d >= 0 && lo%d + %lld <= S%d_%d", j, j, (long long)pi->halo[j], t, j);
        char *cs = gs_sb_take(&c);
        open_(m, "if (%s)", cs ? cs : "0");
        free(cs);
        print_copy_fast(m, t, buf, kind);
        m->indent--;
        line(m, "} else {");
        m->indent++;
    } else {
        open_block(m);
    }
    /* edge path: identity-filled, predicated scalar loads */
    int eus = open_units(m, t);
    const int sg = pi->store_group;
    if (sg > 1) line(m, "int u = tid + (i / %d) * %d;", sg, (int)m->p->threads);
    else line(m, "int u = tid + i * %d;", (int)m->p->threads);
    int64_t per_row = pi->dims[pi->copy_dim] / cv;
    line(m, "const int c%d = (u %% %lld) * %d; u /= %lld;", pi->copy_dim, (long long)per_row, cv, (long long)per_row);
    for (int j = nb - 1; j >= 0; j--) {
        if (j == pi->copy_dim) continue;
        if (sg > 1 && j == pi->inner_dim) /* row i % G of the group (plan.store_group) */
            line(m, "const int c%d = (u %% %lld) * %d + i %% %d; u /= %lld;", j, (long long)(pi->dims[j] / sg), sg, sg,
                 (long long)(pi->dims[j] / sg));
        else line(m, "const int c%d = u %% %lld; u /= %lld;", j, (long long)pi->dims[j], (long long)pi->dims[j]);
    }
    line(m, "(void)u;");
    print_unit_offsets(m, t, false);
    line(m, "%s v;", svtype(m, cv, m->op->dtype_in));
    for (int k = 0; k < cv; k++) {
        open_block(m);
        char kadd[16];
        snprintf(kadd, sizeof kadd, " + %d", k);
        if (pi->im2col) print_view_coords(m, t, k);
        else
            for (int j = 0; j < nd; j++) line(m, "const int g%d = lo%d + c%d%s;", j, j, j, j == pi->copy_dim && k ? kadd : "");
        char lhs[32];
        snprintf(lhs, sizeof lhs, cv == 1 ? "v" : "v.%s", scomp(k, m->op->dtype_in));
        global_read(m, t, "g", lhs, true);
        close_(m);
    }
    if (kind == COPY_PREFETCH) line(m, "pf%d[i] = v;", t);
    else print_store_unit(m, t, buf, "v");
    close_units(m, eus);
    close_(m); /* else */
    close_(m); /* copy scope */
}

/* The prefetched stores of a convolution's linear units (several reduce
 * axes: the register copies of every small (c, r, s) tile) through one
 * pointer at unit 0 of the stage buffer, sw<t>, each unit's elements at
 * compile-time offsets from it: written as sm<t>[buf * stage + su + k], the
 * stores of the two-tile pass's first tile (buffer 1) took an IADD3 and a
 * LEA each in the 3x3 conv picks' SASS (32 of the h100 nhwc pick's 56
 * int/addr). A grouped copy (plan.store_group G, scalar units): element k
 * of a group's G units, consecutive rows of the smem-innermost dim, is one
 * G-wide store. */
static bool store_walked(const printer *m, int t) {
    const gs_plan_input *pi = &m->p->in[t];
    return m->nred > 1 && pi->unit_linear && !pi->swizzle && m->p->stages > 1;
}

static void print_store_walked(printer *m, int t, const char *buf) {
    const gs_plan_input *pi = &m->p->in[t];
    const int g = pi->store_group > 1 ? pi->store_group : 1, dt = m->op->dtype_in;
    const long long rs = (long long)pi->unit_rows * (long long)pi->sstride[pi->unit_dim];
    open_block(m);
    char so[16];
    snprintf(so, sizeof so, "so%d", t);
    char *ref = smem_ref(m, t, buf, so);
    line(m, "%s%s *sw%d = &%s;", m->sp->smem_q, svtype(m, 1, dt), t, ref ? ref : "");
    free(ref);
    line(m, "#pragma unroll");
    open_(m, "for (int i = 0; i < %d; i += %d)", pi->units_per_thread, g);
    /* (units that do not fill the last round: as open_units; a grouped
     * copy's always do) */
    if (pi->units != (int64_t)pi->units_per_thread * m->p->threads)
        line(m, "if (tid + i * %d >= %lld) break;", (int)m->p->threads, (long long)pi->units);
    for (int k = 0; k < pi->copy_vec; k++) {
        char off[96];
        if (g > 1) snprintf(off, sizeof off, "(i / %d) * %lld + %lld", g, rs, (long long)(k * pi->sstride[pi->copy_dim]));
        else snprintf(off, sizeof off, "i * %lld + %lld", rs, (long long)(k * pi->sstride[pi->copy_dim]));
        if (g == 1 && pi->store_vec > 1) {
            line(m, "%s%d(&sw%d[%s], pf%d[i]);", stm(dt), pi->store_vec, t, off, t);
            break;
        }
        if (g == 1) {
            if (pi->copy_vec == 1) line(m, "sw%d[%s] = pf%d[i];", t, off, t);
            else line(m, "sw%d[%s] = pf%d[i].%s;", t, off, t, scomp(k, dt));
            continue;
        }
        open_block(m);
        line(m, "%s w;", svtype(m, g, dt));
        for (int j = 0; j < g; j++) {
            if (pi->copy_vec == 1) line(m, "w.%s = pf%d[i + %d];", scomp(j, dt), t, j);
            else line(m, "w.%s = pf%d[i + %d].%s;", scomp(j, dt), t, j, scomp(k, dt));
        }
        line(m, "%s%d(&sw%d[%s], w);", stm(dt), g, t, off);
        close_(m);
    }
    close_(m);
    close_(m);
}

static void print_store_prefetched(printer *m, const char *buf) {
    for (int t = 0; t < m->ni; t++) {
        const gs_plan_input *pi = &m->p->in[t];
        if (!pi->staged || pi->copy_mode != GS_COPY_REG) continue;
        if (store_walked(m, t)) {
            print_store_walked(m, t, buf);
            continue;
        }
        int us = open_units(m, t);
        print_unit_offsets(m, t, false);
        char v[32];
        snprintf(v, sizeof v, "pf%d[i]", t);
        print_store_unit(m, t, buf, v);
        close_units(m, us);
    }
}

/* ---- compute ----------------------------------------------------------------------- */
/* Fragment index of a register tile: row-major over the spatial axes input t
 * depends on (t < 0: every spatial axis, the accumulator). */
static char *frag_index(const printer *m, int t, const char *extra_axis_add, int extra_axis) {
    gs_sb fi;
    gs_sb_init(&fi);
    gs_sb_puts(&fi, "0");
    for (int a = 0; a < m->na; a++) {
        if (!spatial(m->op, a) || (t >= 0 && !gs_tensor_uses_axis(&m->op->tensors[t], a))) continue;
        char *prev = gs_sb_take(&fi);
        gs_sb_init(&fi);
        if (a == extra_axis && extra_axis_add)
            gs_sb_printf(&fi, "(%s) * %d + r%d + %s", prev ? prev : "0", m->e->tile[a].thread, a, extra_axis_add);
        else
            gs_sb_printf(&fi, "(%s) * %d + r%d", prev ? prev : "0", m->e->tile[a].thread, a);
        free(prev);
    }
    return gs_sb_take(&fi);
}

/* Shared-memory offset text of input t at the local coordinates in scope. */
static char *smem_offset(const printer *m, int t, char local[][CW]) {
    const gs_tensor *ts = &m->op->tensors[t];
    const gs_plan_input *pi = &m->p->in[t];
    gs_sb o;
    gs_sb_init(&o);
    gs_sb_puts(&o, "0");
    if (pi->im2col) { /* the im2col tile: view dim k at the local coordinate of its axis */
        for (int k = 0; k < pi->view_ndim; k++)
            gs_sb_printf(&o, " + %s * %lld", local[pi->view_axis[k]], (long long)pi->sstride[k]);
        return gs_sb_take(&o);
    }
    for (int j = 0; j < ts->ndim; j++) {
        char buf[1024];
        affine_text(&ts->idx[j], m->na, local, buf, sizeof buf);
        /* the affine offset is folded into lo<j>; negative coefficients shift up */
        int64_t shift = -gs_plan_neg_reach(m->op, m->e, &ts->idx[j]) - ts->idx[j].offset;
        gs_sb_printf(&o, " + (%s + %lld) * %lld", buf, (long long)shift, (long long)pi->sstride[j]);
    }
    return gs_sb_take(&o);
}

/* One vector read of input t's fragment along axis fa from address ptr
 * (shared or global), spread into the fragment registers. */
static void print_vector_fragment(printer *m, int t, int fa, const char *ptr) {
    const int w = m->p->in[t].frag_vec, dt = m->op->dtype_in;
    line(m, "const %s q = %s%d(%s);", svtype(m, w, dt), ldm(dt), w, ptr ? ptr : "");
    for (int k = 0; k < w; k++) {
        char add[16], qk[16], cv[32];
        snprintf(add, sizeof add, "%d", k);
        snprintf(qk, sizeof qk, "q.%s", scomp(k, dt));
        char *fi = frag_index(m, t, add, fa);
        line(m, "%s%d%s[%s] = %s;", m->fname, t, m->fslot, fi ? fi : "0", cvt(cv, sizeof cv, "GS_IN_F", in_cvt(m), qk));
        free(fi);
    }
}

static void print_fragments(printer *m, const char *buf, bool fastreads) {
    const gs_op *op = m->op;
    char local[GS_MAX_AXES][CW], global[GS_MAX_AXES][CW];
    for (int a = 0; a < m->na; a++) {
        char r[16];
        snprintf(r, sizeof r, "r%d", a);
        local_expr(m, a, r, local[a], CW);
        snprintf(global[a], CW, "(%s%d + %.200s)", spatial(op, a) ? "ob" : "or", a, local[a]);
    }
    for (int t = 0; t < m->ni; t++) {
        const gs_tensor *ts = &op->tensors[t];
        const gs_plan_input *pi = &m->p->in[t];
        const int64_t fn = gs_plan_frag_elems(op, m->e, t);
        if (!m->frag_nodecl) line(m, "float %s%d[%lld];", m->fname, t, (long long)fn);
        bool direct = !pi->staged && pi->direct && fastreads;
        int open = 0, fa = (pi->staged || direct) && pi->frag_vec > 1 ? pi->frag_axis : -1;
        for (int a = 0; a < m->na; a++) {
            if (!spatial(op, a) || !gs_tensor_uses_axis(ts, a)) continue;
            line(m, "#pragma unroll");
            if (a == fa) open_(m, "for (int r%d = 0; r%d < %d; r%d += %d)", a, a, m->e->tile[a].thread, a, pi->frag_vec);
            else open_(m, "for (int r%d = 0; r%d < %d; r%d++)", a, a, m->e->tile[a].thread, a);
            open++;
        }
        if (pi->staged) {
            char *off = smem_offset(m, t, local);
            char *ref = smem_ref(m, t, buf, off ? off : "0");
            free(off);
            if (fa >= 0) {
                gs_sb ptr;
                gs_sb_init(&ptr);
                gs_sb_printf(&ptr, "&%s", ref ? ref : "");
                char *pp = gs_sb_take(&ptr);
                print_vector_fragment(m, t, fa, pp);
                free(pp);
            } else {
                char *fi = frag_index(m, t, NULL, -1);
                if (in_cvt(m)) line(m, "%s%d%s[%s] = GS_IN_F(%s);", m->fname, t, m->fslot, fi ? fi : "0", ref ? ref : "");
                else line(m, "%s%d%s[%s] = %s;", m->fname, t, m->fslot, fi ? fi : "0", ref ? ref : "");
                free(fi);
            }
            free(ref);
        } else if (direct) {
            /* an interior block: every coordinate is in range */
            open_block(m);
            for (int j = 0; j < ts->ndim; j++) {
                char buf2[1024];
                affine_text(&ts->idx[j], m->na, global, buf2, sizeof buf2);
                line(m, "const int q%d = %s;", j, buf2);
            }
            char *l = linear_text(m, t, "q");
            if (fa >= 0) {
                gs_sb ptr;
                gs_sb_init(&ptr);
                gs_sb_printf(&ptr, "in%d + %s", t, l ? l : "0");
                char *pp = gs_sb_take(&ptr);
                print_vector_fragment(m, t, fa, pp);
                free(pp);
            } else {
                char *fi = frag_index(m, t, NULL, -1);
                if (in_cvt(m))
                    line(m, "%s%d%s[%s] = GS_IN_F(in%d[%s]);", m->fname, t, m->fslot, fi ? fi : "0", t, l ? l : "0");
                else line(m, "%s%d%s[%s] = in%d[%s];", m->fname, t, m->fslot, fi ? fi : "0", t, l ? l : "0");
                free(fi);
            }
            free(l);
            close_(m);
        } else {
            open_block(m);
            for (int j = 0; j < ts->ndim; j++) {
                char buf2[1024];
                affine_text(&ts->idx[j], m->na, global, buf2, sizeof buf2);
                line(m, "const int q%d = %s;", j, buf2);
            }
            char *fi = frag_index(m, t, NULL, -1);
            char lhs[512];
            snprintf(lhs, sizeof lhs, "%s%d%s[%s]", m->fname, t, m->fslot, fi ? fi : "0");
            free(fi);
            global_read(m, t, "q", lhs, false);
            close_(m);
        }
        for (; open > 0; open--) close_(m);
    }
}

/* The multiply's loops over the thread tile, spatial axes in order. A
 * product of two inputs over one reduce axis (combine mac: gemm, bgemm,
 * gemv, 1x1 convs as matmul; not an elementwise mul, and convolutions keep
 * their order) runs its innermost looping axis serpentine: backwards on
 * odd passes of the looping axis outside it, so the FFMA that starts a row
 * reuses the operand of the one before it (the register reuse cache's
 * .reuse flags), as consecutive FFMAs within a row do. (On the 3x3 conv
 * picks it moved h100 NHWC's nearest load 18 -> 6 slots, share 0.849 ->
 * 0.846; left to the conv paths.) */
static void print_accumulate(printer *m) {
    const gs_op *op = m->op;
    int open = 0, inner = -1, outer = -1;
    for (int a = 0; a < m->na; a++)
        if (spatial(op, a) && m->e->tile[a].thread > 1) outer = inner, inner = a;
    const bool zigzag = op->combine == GS_COMBINE_MAC && m->ni >= 2 && m->nred == 1 && outer >= 0;
    for (int a = 0; a < m->na; a++) {
        if (!spatial(op, a)) continue;
        line(m, "#pragma unroll");
        if (zigzag && a == inner) {
            const int T = m->e->tile[a].thread;
            open_(m, "for (int z%d = 0; z%d < %d; z%d++)", a, a, T, a);
            line(m, "const int r%d = r%d & 1 ? %d - z%d : z%d;", a, outer, T - 1, a, a);
        } else {
            open_(m, "for (int r%d = 0; r%d < %d; r%d++)", a, a, m->e->tile[a].thread, a);
        }
        open++;
    }
    char *aidx = frag_index(m, -1, NULL, -1);
    gs_sb rhs;
    gs_sb_init(&rhs);
    const bool fn2 = op->combine == GS_COMBINE_MAXE || op->combine == GS_COMBINE_MINE || op->combine == GS_COMBINE_POW;
    for (int t = 0; t < m->ni; t++) {
        char *fi = frag_index(m, t, NULL, -1);
        const char *bin = op->combine == GS_COMBINE_ADD   ? " + "
                          : op->combine == GS_COMBINE_SUB ? " - "
                          : op->combine == GS_COMBINE_DIV ? " / "
                          : fn2                           ? ", "
                                                          : " * ";
        char v[96];
        snprintf(v, sizeof v, "%s%d%s[%s]", m->fname, t, m->fslot, fi ? fi : "0");
        if (fn2 && t > 0) { /* f(f(in0, in1), in2): max, min (NaN kept), pow */
            char *prev = gs_sb_take(&rhs);
            gs_sb_init(&rhs);
            const char *f = op->combine == GS_COMBINE_MAXE ? "gs_maxn"
                            : op->combine == GS_COMBINE_MINE ? "gs_minn"
                            : m->dialect == GS_DIALECT_CUDA ? "powf" : "pow";
            gs_sb_printf(&rhs, "%s(%s%s%s)", f, prev ? prev : "0", bin, v);
            free(prev);
        } else if (op->combine == GS_COMBINE_PRELU && t > 0) {
            char *prev = gs_sb_take(&rhs);
            gs_sb_init(&rhs);
            gs_sb_printf(&rhs, "(%s < 0.0f ? %s * %s : %s)", prev ? prev : "0", prev ? prev : "0", v, prev ? prev : "0");
            free(prev);
        } else
            gs_sb_printf(&rhs, "%s%s", t ? bin : "", v);
        free(fi);
    }
    char *r = gs_sb_take(&rhs);
    if (op->combine == GS_COMBINE_MAX || op->combine == GS_COMBINE_MIN)
        line(m, "acc[%s] = gs_%sn(acc[%s], %s);", aidx ? aidx : "0", op->combine == GS_COMBINE_MAX ? "max" : "min",
             aidx ? aidx : "0", r ? r : "0");
    else
        line(m, "acc[%s] += %s;", aidx ? aidx : "0", r ? r : "0");
    free(r);
    free(aidx);
    for (; open > 0; open--) close_(m);
}

/* The reduce loops of one tile: full tiles with constant trip counts (fully
 * or partly unrolled), the last tile with runtime bounds. fastreads: the
 * direct unstaged inputs are read without predicates (an interior block). */
static void print_compute_body(printer *m, const char *buf, bool bounded, bool fastreads) {
    int open = 0, last_red = -1;
    for (int a = 0; a < m->na; a++)
        if (!spatial(m->op, a)) last_red = a;
    /* a partly unrolled full tile (plan.k_unroll) of several reduce axes: the
     * unroll goes to the innermost loops that run more than once, inner
     * first, k_unroll k-steps in all (a conv tile c:32 r:1 s:1 ran its 32
     * k-steps rolled one at a time when the unroll sat on the trip-1 s
     * loop); one reduce axis keeps it on its loop */
    int unr[GS_MAX_AXES];
    for (int a = 0, left = m->p->k_unroll; a < m->na; a++) unr[a] = a == last_red ? left : 1;
    if (m->nred > 1 && m->p->k_unroll > 0) {
        int left = m->p->k_unroll;
        for (int a = m->na - 1; a >= 0; a--) {
            if (spatial(m->op, a)) continue;
            const int Teff = m->e->tile[a].block / (a == last_red ? m->p->lanes : 1);
            unr[a] = 1;
            if (left <= 1 || Teff <= 1) continue;
            unr[a] = left;
            left = Teff >= left ? 1 : left / Teff;
        }
    }
    if (bounded && m->nred > 0 && *m->sp->cold) line(m, "%s", m->sp->cold);
    for (int a = 0; a < m->na; a++) {
        if (spatial(m->op, a)) continue;
        int T = m->e->tile[a].block, R = a == last_red ? m->p->lanes : 1;
        if (bounded) {
            line(m, "const int kl%d = E%d - or%d < %d ? E%d - or%d : %d;", a, a, a, T, a, a, T);
            if (*m->sp->unroll_bounded) line(m, "%s", m->sp->unroll_bounded);
            if (R > 1) open_(m, "for (int kr%d = lane; kr%d < kl%d; kr%d += %d)", a, a, a, a, R);
            else open_(m, "for (int kr%d = 0; kr%d < kl%d; kr%d++)", a, a, a, a);
        } else {
            if (m->p->k_unroll == 0) line(m, "#pragma unroll");
            else line(m, "#pragma unroll %d", unr[a]);
            if (R > 1) {
                /* lane l takes l, l + R, ...: neighbouring lanes, neighbouring elements */
                open_(m, "for (int kq%d = 0; kq%d < %d; kq%d++)", a, a, T / R, a);
                line(m, "const int kr%d = kq%d * %d + lane;", a, a, R);
            } else {
                open_(m, "for (int kr%d = 0; kr%d < %d; kr%d++)", a, a, T, a);
            }
        }
        open++;
    }
    print_fragments(m, buf, fastreads);
    print_accumulate(m);
    for (; open > 0; open--) close_(m);
}

/* Appends to c "the tile at or<a> is whole along every reduce axis of
 * mask (bit a)" (or<a> + block <= E<a>, joined by &&); false when there is
 * none (nothing appended). GS_ALL_AXES: every reduce axis. */
#define GS_ALL_AXES 0xffffffffu
static bool print_full_tile_cond(printer *m, gs_sb *c, unsigned mask) {
    bool any = false;
    for (int a = 0; a < m->na; a++) {
        if (spatial(m->op, a) || !(mask >> a & 1u)) continue;
        gs_sb_printf(c, "%sor%d + %d <= E%d", any ? " && " : "", a, m->e->tile[a].block, a);
        any = true;
    }
    return any;
}

/* One tile's compute: the fast body when the tile is full (and, with direct
 * unstaged inputs, the block interior and their rows aligned), else the
 * bounded, predicated body. */
static void print_mma_compute(printer *m, const char *buf);

static void print_compute(printer *m, const char *buf) {
    if (m->p->mma) { /* whole tiles always: the copies zero-filled the edges */
        print_mma_compute(m, buf);
        return;
    }
    if (!m->p->fast_path) {
        print_compute_body(m, buf, m->nred > 0, false);
        return;
    }
    gs_sb c;
    gs_sb_init(&c);
    bool any = print_full_tile_cond(m, &c, GS_ALL_AXES);
    bool direct = false;
    for (int t = 0; t < m->ni; t++) {
        const gs_plan_input *pi = &m->p->in[t];
        if (pi->staged || !pi->direct) continue;
        gs_sb_printf(&c, "%s%sald%d", any ? " && " : "", direct ? "" : "inb && ", t);
        any = direct = true;
    }
    char *cs = gs_sb_take(&c);
    if (!any) {
        free(cs);
        print_compute_body(m, buf, false, false);
        return;
    }
    open_(m, "if (%s)", cs ? cs : "1");
    free(cs);
    print_compute_body(m, buf, false, true);
    m->indent--;
    line(m, "} else {");
    m->indent++;
    print_compute_body(m, buf, m->nred > 0, false);
    close_(m);
}

/* ---- the math core ------------------------------------------------------------------
 * The pipelined main loop (print_main_loop_fragpipe) holds the copies, the
 * stages, the barriers and the k-step order; what it multiplies with is a
 * core of three steps: declare the fragment sets, load one k-step's
 * fragments (the reduce coordinates kr<a> in scope) from a stage buffer into
 * a set, and multiply a set into the accumulators. The per-thread FFMA core
 * is below; a tensor-core core (issue 20) is another table of the same
 * three. */
typedef struct math_core {
    void (*declare)(printer *m);
    void (*load)(printer *m, const char *buf, const char *set);
    void (*multiply)(printer *m, const char *set);
} math_core;

/* FFMA core: each input's register tile twice, fr<t>[2][n]. */
static void ffma_declare(printer *m) {
    for (int t = 0; t < m->ni; t++) {
        const int64_t fn = gs_plan_frag_elems(m->op, m->e, t);
        /* a conv steady loop's turn (plan.cross_turn) loads the next
         * tile's first fragments into a third set */
        line(m, "float fr%d[%d][%lld];", t, m->p->frag_pipe && m->p->cross_turn ? 3 : 2, (long long)fn);
    }
}

static void ffma_with_set(printer *m, const char *set, char *slot, size_t cap) {
    snprintf(slot, cap, "[%s]", set);
    m->fname = "fr";
    m->fslot = slot;
    m->frag_nodecl = true;
}

static void ffma_restore(printer *m) {
    m->fname = "f";
    m->fslot = "";
    m->frag_nodecl = false;
}

static void ffma_load(printer *m, const char *buf, const char *set) {
    char slot[64];
    ffma_with_set(m, set, slot, sizeof slot);
    print_fragments(m, buf, true);
    ffma_restore(m);
}

static void ffma_multiply(printer *m, const char *set) {
    char slot[64];
    ffma_with_set(m, set, slot, sizeof slot);
    print_accumulate(m);
    ffma_restore(m);
}

static const math_core ffma_core = {ffma_declare, ffma_load, ffma_multiply};


/* ---- the tensor-core core (issue 20) ------------------------------------------------
 * A warp multiplies whole 16 x 8 instruction tiles from the stage buffer:
 * per k-step of the row's k, each of its warp_m/16 A tiles and warp_n/8 B
 * tiles is loaded into packed 32-bit fragment registers (ldmatrix where the
 * plan says, else element reads placed by the row's layout), then one mma
 * per (A, B) pair accumulates into acc[(mi * NT + ni) * 4 + c], c the C
 * register. Lane ln = tid & 31 of warp tid >> 5; the warp's origin in the
 * block is wo<a>. The copies zero-fill what lies outside the tensors, so
 * every tile is whole and the mma and ldmatrix run in block-uniform control
 * flow. CUDA spells the instructions as inline PTX (GS_MMA, GS_LDSM_X<n>[_T]);
 * OpenCL emulates them exactly per lane: each work-item holds only its lane's
 * registers, and the fragments and ldmatrix's row addresses travel through
 * __local memory between barriers (gs_mma, gs_ldsm). */

/* "(g * rg + t * rt + off)" of a layout coordinate, g = ln >> 2, t = ln & 3. */
static void mma_coord(char *buf, size_t n, int cg, int ct, int off) {
    snprintf(buf, n, "((ln >> 2) * %d + (ln & 3) * %d + %d)", cg, ct, off);
}

static void print_mma_ptx(printer *m) {
    const gs_mma_row *r = m->mr;
    gs_sb *sb = &m->sb;
    int op = 4;
    gs_sb_printf(sb, "#define GS_MMA(d, a, b) asm volatile(\"%s {%%0,%%1,%%2,%%3}, {", r->ptx);
    for (int i = 0; i < r->a.regs; i++) gs_sb_printf(sb, "%s%%%d", i ? "," : "", op++);
    gs_sb_puts(sb, "}, {");
    for (int i = 0; i < r->b.regs; i++) gs_sb_printf(sb, "%s%%%d", i ? "," : "", op++);
    gs_sb_puts(sb, "}, {%0,%1,%2,%3};\" : \"+f\"((d)[0]), \"+f\"((d)[1]), \"+f\"((d)[2]), \"+f\"((d)[3]) : ");
    for (int i = 0; i < r->a.regs; i++) gs_sb_printf(sb, "%s\"r\"((a)[%d])", i ? ", " : "", i);
    for (int i = 0; i < r->b.regs; i++) gs_sb_printf(sb, ", \"r\"((b)[%d])", i);
    gs_sb_puts(sb, ")\n");
    for (int n = 1; n <= 4; n *= 2)
        for (int tr = 0; tr < (gs_mma_ldsm_trans(r) ? 2 : 1); tr++) {
            gs_sb_printf(sb, "#define GS_LDSM_X%d%s(r, s, o) asm volatile(\"ldmatrix.sync.aligned.m8n8.x%d%s.shared.b16 {",
                         n, tr ? "_T" : "", n, tr ? ".trans" : "");
            for (int i = 0; i < n; i++) gs_sb_printf(sb, "%s%%%d", i ? "," : "", i);
            gs_sb_printf(sb, "}, [%%%d];\" : ", n);
            for (int i = 0; i < n; i++) gs_sb_printf(sb, "%s\"=r\"((r)[%d])", i ? ", " : "", i);
            gs_sb_puts(sb, " : \"r\"((unsigned)__cvta_generic_to_shared(s) + (unsigned)(o) * (unsigned)sizeof *(s)))\n");
        }
    gs_sb_puts(sb, "#define GS_F2U(x) __float_as_uint(x)\n");
    if (r->per_reg == 1) gs_sb_puts(sb, "#define GS_U2F(x) __uint_as_float(x)\n"); /* ldmatrix's words, converted */
}

/* One operand's element stores of gs_mma: element i of register reg/half. */
static void print_mma_emu_operand(printer *m, const gs_mma_frag *f, const char *reg, int base, int cols) {
    const gs_mma_row *r = m->mr;
    for (int i = 0; i < f->elems; i++) {
        char row[64], col[64], v[64];
        mma_coord(row, sizeof row, f->rg, f->rt, f->row_off[i]);
        mma_coord(col, sizeof col, f->cg, f->ct, f->col_off[i]);
        if (r->per_reg == 1) snprintf(v, sizeof v, "as_float(%s[%d])", reg, i);
        else snprintf(v, sizeof v, "%s((ushort)(%s[%d] %s))", r->dtype_in == GS_DTYPE_BF16 ? "gs_b2f" : "gs_h2f", reg,
                      i / 2, i % 2 ? ">> 16" : "& 0xffffu");
        gs_sb_printf(&m->sb, "    xs[%d + %s * %d + %s] = %s;\n", base, row, cols, col, v);
    }
}

/* OpenCL: the exact per-lane emulation of the row's mma and of ldmatrix. */
static void print_mma_emulation(printer *m) {
    const gs_mma_row *r = m->mr;
    gs_sb *sb = &m->sb;
    const int ak = r->m * r->k;
    gs_sb_puts(sb, "/* mma: each lane scatters its A and B registers by the row's layout into the warp's\n"
                   " * scratch, then computes its C registers from them */\n");
    gs_sb_puts(sb, "static void gs_mma(float *d, const uint *a, const uint *b, __local float *xs, const int ln) {\n");
    print_mma_emu_operand(m, &r->a, "a", 0, r->k);
    print_mma_emu_operand(m, &r->b, "b", ak, r->n);
    gs_sb_puts(sb, "    barrier(CLK_LOCAL_MEM_FENCE);\n");
    for (int i = 0; i < r->c.elems; i++) {
        char row[64], col[64];
        mma_coord(row, sizeof row, r->c.rg, r->c.rt, r->c.row_off[i]);
        mma_coord(col, sizeof col, r->c.cg, r->c.ct, r->c.col_off[i]);
        gs_sb_printf(sb, "    { float s = 0.0f; for (int q = 0; q < %d; q++) s += xs[%s * %d + q] * xs[%d + q * %d + %s]; d[%d] += s; }\n",
                     r->k, row, r->k, ak, r->n, col, i);
    }
    gs_sb_puts(sb, "    barrier(CLK_LOCAL_MEM_FENCE);\n}\n");
    if (r->ldsm && r->per_reg == 1) {
        /* 32-bit words (tf32): word t of row g; no .trans */
        gs_sb_printf(sb,
                     "/* ldmatrix of 32-bit words: lane ln names a row (%d elements, 16 bytes) of matrix ln >> 3;\n"
                     " * register j of lane (g, t) gets word t of row g of matrix j; a row that does not start on\n"
                     " * 16 bytes (which ldmatrix does not allow) reads NaN */\n"
                     "static void gs_ldsm(uint *r, const int n, __local const float *s, const int o, __local int *xa,\n"
                     "                    const int ln) {\n"
                     "    xa[ln] = o;\n"
                     "    barrier(CLK_LOCAL_MEM_FENCE);\n"
                     "    const int g = ln >> 2, t = ln & 3;\n"
                     "    for (int j = 0; j < n; j++)\n"
                     "        r[j] = xa[j * 8 + g] %% %d ? 0x7fc00000u : as_uint(s[xa[j * 8 + g] + t]);\n"
                     "    barrier(CLK_LOCAL_MEM_FENCE);\n"
                     "}\n",
                     gs_mma_ldsm_row_elems(r), gs_mma_ldsm_row_elems(r));
        for (int n = 1; n <= 4; n *= 2)
            gs_sb_printf(sb, "#define GS_LDSM_X%d(r, s, o) gs_ldsm(r, %d, s, o, gs_law, ln)\n", n, n);
        gs_sb_puts(sb, "#define GS_U2F(x) as_float(x)\n");
    } else if (r->ldsm) {
        gs_sb_puts(sb,
                   "/* ldmatrix: lane ln names a row (8 halves) of matrix ln >> 3; register j of lane (g, t)\n"
                   " * gets halves 2t, 2t+1 of row g of matrix j (.trans: of column g, rows 2t and 2t+1); a\n"
                   " * row that does not start on 16 bytes (which ldmatrix does not allow) reads NaN halves\n"
                   " * (0xffff, in f16 and bf16 alike) */\n"
                   "static void gs_ldsm(uint *r, const int n, const int tr, __local const ushort *s, const int o,\n"
                   "                    __local int *xa, const int ln) {\n"
                   "    xa[ln] = o;\n"
                   "    barrier(CLK_LOCAL_MEM_FENCE);\n"
                   "    const int g = ln >> 2, t = ln & 3;\n"
                   "    for (int j = 0; j < n; j++) {\n"
                   "        const int ra = xa[j * 8 + (tr ? 2 * t : g)], rb = xa[j * 8 + (tr ? 2 * t + 1 : g)];\n"
                   "        r[j] = (ra | rb) % 8 ? 0xffffffffu\n"
                   "             : tr ? (uint)s[ra + g] | ((uint)s[rb + g] << 16)\n"
                   "                  : (uint)s[ra + 2 * t] | ((uint)s[ra + 2 * t + 1] << 16);\n"
                   "    }\n"
                   "    barrier(CLK_LOCAL_MEM_FENCE);\n"
                   "}\n");
        for (int n = 1; n <= 4; n *= 2)
            for (int tr = 0; tr < 2; tr++)
                gs_sb_printf(sb, "#define GS_LDSM_X%d%s(r, s, o) gs_ldsm(r, %d, %d, s, o, gs_law, ln)\n", n, tr ? "_T" : "",
                             n, tr);
    }
    gs_sb_puts(sb, "#define GS_MMA(d, a, b) gs_mma(d, a, b, gs_mxw, ln)\n#define GS_F2U(x) as_uint(x)\n");
}

/* Which inputs' fragment element reads sit at a lane base plus constants,
 * and which of those read a register's two 16-bit elements at once: the
 * plan's frag_pairs (what the model priced), which the enumeration's
 * adjacency and parity confirm (tests/test_mma.c holds them equal). */
static int mma_role_axes(const printer *m, int r);

static void mma_fold_init(printer *m) {
    for (int t = 0; t < 2; t++) {
        m->ffold[t] = t < m->ni && m->e->staged[t] && gs_plan_mma_frag_affine(m->op, m->e, m->p, t, &m->ff[t]);
        m->fpair[t] = m->ffold[t] && m->ff[t].pairs && m->p->in[t].frag_pairs;
        /* ldmatrix rows: where t's role and k are one axis each (a gemm's)
         * the full offset is already affine text that ptxas folds, and is
         * printed as it was */
        const int xr = t == 0 ? GS_MMA_ROLE_M : GS_MMA_ROLE_N;
        m->lfold[t] = t < m->ni && m->e->staged[t] && m->p->in[t].ldsm &&
                      (mma_role_axes(m, xr) > 1 || mma_role_axes(m, GS_MMA_ROLE_K) > 1) &&
                      gs_plan_mma_ldsm_affine(m->op, m->e, m->p, t, &m->ldx[t], &m->ldk[t]);
    }
}

/* The offset of a folded read: "<base> + it * dx + ks * dk + c", the zero
 * terms left out (it: the instruction tile's text). */
static void fold_text(char *out, size_t n, const char *base, const char *it, int64_t dx, int64_t dk, int64_t c) {
    int k = snprintf(out, n, "%s", base);
    if (dx) k += snprintf(out + k, n - (size_t)k, " + %s * %lld", it, (long long)dx);
    if (dk) k += snprintf(out + k, n - (size_t)k, " + ks * %lld", (long long)dk);
    if (c) snprintf(out + k, n - (size_t)k, " + %lld", (long long)c);
}

static void print_mma_preamble(printer *m) {
    if (m->dialect == GS_DIALECT_CUDA) print_mma_ptx(m);
    else print_mma_emulation(m);
    /* a register's two 16-bit elements from one 32-bit read at an even
     * offset; the emulation's odd offset reads 0xffff pairs (NaN) */
    if (m->fpair[0] || m->fpair[1]) {
        if (m->dialect == GS_DIALECT_CUDA)
            gs_sb_puts(&m->sb, "#define GS_LDS_PAIR(s, o) (*(const unsigned int*)((s) + (o)))\n");
        else
            gs_sb_puts(&m->sb, "#define GS_LDS_PAIR(s, o) (((o) & 1) ? 0xffffffffu : ((uint)(s)[o] | ((uint)(s)[(o) + 1] << 16)))\n");
    }
    for (int t = 0; t < m->ni; t++) { /* the XOR layouts (gs_plan_swizzle) */
        const gs_plan_input *pi = &m->p->in[t];
        if (!pi->swizzle) continue;
        gs_sb_printf(&m->sb, "#define GS_SWZ%d(o) ((o) ^ ((((o) / %lld) & %d) * %d))\n", t,
                     (long long)(pi->dims[pi->inner_dim] + pi->pad), (1 << pi->swizzle) - 1, 16 / ebytes(m->op->dtype_in));
    }
}

/* The product of the block tiles of the axes of role r. */
static int64_t mma_role_block(const printer *m, int r) {
    int64_t b = 1;
    for (int a = 0; a < m->na; a++)
        if (m->role[a] == r) b *= m->e->tile[a].block;
    return b;
}

/* Kernel scope: the emulation's scratch (OpenCL), the lane and the warp's
 * origin: wom and won along the flattened m and n, wo<a> per batch axis
 * (warps numbered n fastest, then m, then the batch axes, the last first). */
static void mma_locals(const printer *m, int t, const char *x, const char *kk, char local[][CW]);

/* The number of axes of role r. */
static int mma_role_axes(const printer *m, int r) {
    int n = 0;
    for (int a = 0; a < m->na; a++) n += m->role[a] == r;
    return n;
}

/* The row that lane ln names in operand t's ldmatrix at instruction tile
 * `it` and k-step `ks` (texts): x (m or n) and kk (k) of its first element,
 * the origin of the lane's matrix lj (ldsm_a, ldsm_b; lj the text of its
 * index) plus ln & 7 rows along x (no .trans) or k (.trans). */
static void mma_ldsm_row(const printer *m, int t, const char *lj, const char *it, const char *ks, char *x, char *kk) {
    const gs_mma_row *r = m->mr;
    const gs_plan_input *pi = &m->p->in[t];
    const int8_t(*org)[2] = t == 0 ? r->ldsm_a : r->ldsm_b;
    gs_sb ox, ok;
    gs_sb_init(&ox);
    gs_sb_init(&ok);
    for (int j = 0; j < pi->ldsm; j++) { /* the origin of the lane's matrix lj, selected */
        const int jx = t == 0 ? org[j][0] : org[j][1], jk = t == 0 ? org[j][1] : org[j][0];
        if (j + 1 < pi->ldsm) {
            gs_sb_printf(&ox, "%s == %d ? %d : ", lj, j, jx);
            gs_sb_printf(&ok, "%s == %d ? %d : ", lj, j, jk);
        } else {
            gs_sb_printf(&ox, "%d", jx);
            gs_sb_printf(&ok, "%d", jk);
        }
    }
    char *sx = gs_sb_take(&ox), *sk = gs_sb_take(&ok);
    snprintf(x, CW, "(%s + %s * %d + (%s)%s)", t == 0 ? "wom" : "won", it, t == 0 ? r->m : r->n, sx ? sx : "0",
             pi->ldsm_trans ? "" : " + (ln & 7)");
    snprintf(kk, CW, "(%s * %d + (%s)%s)", ks, r->k, sk ? sk : "0", pi->ldsm_trans ? " + (ln & 7)" : "");
    free(sx);
    free(sk);
}

/* "const int <name><t> = <offset>;": operand t's lane base, the shared
 * offset of row x and k index kk (texts). */
static void print_lane_base(printer *m, int t, const char *name, const char *x, const char *kk) {
    char local[GS_MAX_AXES][CW];
    mma_locals(m, t, x, kk, local);
    char *off = smem_offset(m, t, local);
    line(m, "const int %s%d = %s;", name, t, off ? off : "0");
    free(off);
}

static void print_mma_warp(printer *m) {
    const gs_mma_row *r = m->mr;
    const int warps = (int)(m->p->threads / 32);
    line(m, "const int ln = tid & 31;");
    if (m->dialect == GS_DIALECT_OPENCL) {
        line(m, "__local float* const gs_mxw = gs_mx + (tid >> 5) * %d;", r->m * r->k + r->k * r->n);
        if (r->ldsm) line(m, "__local int* const gs_law = gs_la + (tid >> 5) * 32;");
    }
    line(m, "int wq = tid >> 5; /* %d warps */", warps);
    const int64_t nwn = mma_role_block(m, GS_MMA_ROLE_N) / m->p->warp_n, nwm = mma_role_block(m, GS_MMA_ROLE_M) / m->p->warp_m;
    line(m, "const int won = (wq %% %lld) * %d; wq /= %lld;", (long long)nwn, m->p->warp_n, (long long)nwn);
    line(m, "const int wom = (wq %% %lld) * %d; wq /= %lld;", (long long)nwm, m->p->warp_m, (long long)nwm);
    for (int a = m->na - 1; a >= 0; a--) {
        if (m->role[a] != GS_MMA_ROLE_BATCH) continue;
        int nw = m->e->tile[a].block;
        line(m, "const int wo%d = wq %% %d; wq /= %d;", a, nw, nw);
    }
    line(m, "(void)wq;");
    for (int t = 0; t < 2; t++) { /* the element reads' lane bases: tile 0, k-step 0, element 0 */
        if (!m->ffold[t]) continue;
        const gs_mma_frag *f = t == 0 ? &r->a : &r->b;
        char x[CW], kk[CW], row[64], col[64];
        mma_coord(row, sizeof row, f->rg, f->rt, f->row_off[0]);
        mma_coord(col, sizeof col, f->cg, f->ct, f->col_off[0]);
        snprintf(x, sizeof x, "(%s + %s)", t == 0 ? "wom" : "won", t == 0 ? row : col);
        snprintf(kk, sizeof kk, "(%s)", t == 0 ? col : row);
        print_lane_base(m, t, "fb", x, kk);
    }
    for (int t = 0; t < 2; t++) { /* the ldmatrix rows' lane bases: tile 0, k-step 0 */
        if (!m->lfold[t]) continue;
        char x[CW], kk[CW], lj[32];
        snprintf(lj, sizeof lj, "(ln >> 3) %% %d", m->p->in[t].ldsm);
        mma_ldsm_row(m, t, lj, "0", "0", x, kk);
        print_lane_base(m, t, "lb", x, kk);
    }
}

/* Split the flattened index text x of role r over its axes' block tiles
 * (the last axis fastest) into coord[a] of each axis of r, plus base<a>
 * ("ob<a> + ", or ""). */
static void mma_split(const printer *m, int r, const char *x, bool base, char coord[][CW]) {
    int n = 0;
    for (int a = 0; a < m->na; a++) n += m->role[a] == r;
    int64_t div = 1;
    for (int a = m->na - 1; a >= 0; a--) {
        if (m->role[a] != r) continue;
        char ob[24] = "";
        if (base) snprintf(ob, sizeof ob, "ob%d + ", a);
        if (n == 1) snprintf(coord[a], CW, "(%s%s)", ob, x);
        else snprintf(coord[a], CW, "(%s(%s) / %lld %% %d)", ob, x, (long long)div, m->e->tile[a].block);
        div *= m->e->tile[a].block;
    }
}

/* "(buf) * stage_elems + off" (or off with one stage): an index into sm<t>
 * (malloc'd: a several-axis offset runs to hundreds of characters). */
static char *mma_smem_index(const printer *m, int t, const char *buf, const char *off) {
    const char *sw = m->p->in[t].swizzle ? "GS_SWZ" : "";
    char tn[8] = "";
    if (*sw) snprintf(tn, sizeof tn, "%d", t);
    gs_sb o;
    gs_sb_init(&o);
    if (m->p->stages > 1) gs_sb_printf(&o, "%s%s(((%s) * %lld + %s))", sw, tn, buf, (long long)m->p->in[t].stage_elems, off);
    else gs_sb_printf(&o, "%s%s((%s))", sw, tn, off);
    return gs_sb_take(&o);
}

/* Local coordinates of operand t (0: A, 1: B) at flattened x (m or n) and kk (k). */
static void mma_locals(const printer *m, int t, const char *x, const char *kk, char local[][CW]) {
    for (int a = 0; a < m->na; a++) snprintf(local[a], CW, "wo%d", a); /* batch axes */
    mma_split(m, t == 0 ? GS_MMA_ROLE_M : GS_MMA_ROLE_N, x, false, local);
    mma_split(m, GS_MMA_ROLE_K, kk, false, local);
}

/* Instruction tile `it` (mi or ni) of operand t at k-step ks into f<t>[it]. */
static void print_mma_load(printer *m, int t, const char *buf) {
    const gs_mma_row *r = m->mr;
    const gs_plan_input *pi = &m->p->in[t];
    const gs_mma_frag *f = t == 0 ? &r->a : &r->b;
    const int tx = t == 0 ? r->m : r->n;
    const char *it = t == 0 ? "mi" : "ni", *wo = t == 0 ? "wom" : "won";
    char local[GS_MAX_AXES][CW], x[CW], kk[CW], *idx;
    if (pi->ldsm) {
        const bool fold = m->lfold[t];
        if (fold) { /* at the lane's base (print_mma_warp) plus constants */
            char off[CW], base[8];
            snprintf(base, sizeof base, "lb%d", t);
            fold_text(off, sizeof off, base, it, m->ldx[t], m->ldk[t], 0);
            idx = mma_smem_index(m, t, buf, off);
        } else {
            open_block(m);
            line(m, "const int lj = (ln >> 3) %% %d;", pi->ldsm);
            mma_ldsm_row(m, t, "lj", it, "ks", x, kk);
            mma_locals(m, t, x, kk, local);
            char *off = smem_offset(m, t, local);
            idx = mma_smem_index(m, t, buf, off ? off : "0");
            free(off);
        }
        line(m, "GS_LDSM_X%d%s(%s%d%s[%s], sm%d, %s);", pi->ldsm, pi->ldsm_trans ? "_T" : "", m->fname, t, m->fslot, it,
             t, idx);
        free(idx);
        /* one element a register (tf32): each word rounded as an element read rounds it */
        for (int j = 0; j < pi->ldsm && r->per_reg == 1; j++)
            line(m, "%s%d%s[%s][%d] = GS_F2U(GS_IN_F(GS_U2F(%s%d%s[%s][%d])));", m->fname, t, m->fslot, it, j, m->fname, t,
                 m->fslot, it, j);
        if (!fold) close_(m);
        return;
    }
    for (int i = 0; i < f->elems; i++) { /* element reads, placed by the row's layout */
        if (m->ffold[t]) { /* at the lane's base (print_mma_warp) plus constants */
            const gs_mma_frag_fold *ff = &m->ff[t];
            char off[CW], base[8];
            snprintf(base, sizeof base, "fb%d", t);
            fold_text(off, sizeof off, base, it, ff->dx, ff->dk, ff->ei[i]);
            idx = mma_smem_index(m, t, buf, off);
            if (m->fpair[t]) { /* the register whole: this element and the next */
                line(m, "%s%d%s[%s][%d] = GS_LDS_PAIR(sm%d, %s);", m->fname, t, m->fslot, it, i / 2, t, idx);
                free(idx);
                i++;
                continue;
            }
        } else {
            char row[64], col[64];
            mma_coord(row, sizeof row, f->rg, f->rt, f->row_off[i]);
            mma_coord(col, sizeof col, f->cg, f->ct, f->col_off[i]);
            snprintf(x, sizeof x, "(%s + %s * %d + %s)", wo, it, tx, t == 0 ? row : col);
            snprintf(kk, sizeof kk, "(ks * %d + %s)", r->k, t == 0 ? col : row);
            mma_locals(m, t, x, kk, local);
            char *off = smem_offset(m, t, local);
            idx = mma_smem_index(m, t, buf, off ? off : "0");
            free(off);
        }
        const char *fn = m->fname, *fs = m->fslot;
        if (r->per_reg == 1) line(m, "%s%d%s[%s][%d] = GS_F2U(GS_IN_F(sm%d[%s]));", fn, t, fs, it, i, t, idx);
        else if (i % 2 == 0) line(m, "%s%d%s[%s][%d] = (unsigned int)sm%d[%s];", fn, t, fs, it, i / 2, t, idx);
        else line(m, "%s%d%s[%s][%d] |= (unsigned int)sm%d[%s] << 16;", fn, t, fs, it, i / 2, t, idx);
        free(idx);
    }
}

/* Every instruction tile of A and B of k-step ks (in scope) from buffer buf
 * into the fragment set m->fname/m->fslot names. */
static void print_mma_load_all(printer *m, const char *buf) {
    const gs_mma_row *r = m->mr;
    line(m, "#pragma unroll");
    open_(m, "for (int mi = 0; mi < %d; mi++)", m->p->warp_m / r->m);
    print_mma_load(m, 0, buf);
    close_(m);
    line(m, "#pragma unroll");
    open_(m, "for (int ni = 0; ni < %d; ni++)", m->p->warp_n / r->n);
    print_mma_load(m, 1, buf);
    close_(m);
}

/* One mma per (A, B) instruction tile pair of the fragment set. */
static void print_mma_multiply_all(printer *m) {
    const gs_mma_row *r = m->mr;
    const int MT = m->p->warp_m / r->m, NT = m->p->warp_n / r->n;
    line(m, "#pragma unroll");
    open_(m, "for (int mi = 0; mi < %d; mi++)", MT);
    line(m, "#pragma unroll");
    line(m, "for (int ni = 0; ni < %d; ni++) GS_MMA(&acc[(mi * %d + ni) * 4], %s0%s[mi], %s1%s[ni]);", NT, NT, m->fname,
         m->fslot, m->fname, m->fslot);
    close_(m);
}

/* The k-step ks's fragments of operand t (0: A, 1: B) with plan.kmask:
 * where the tile (origins or<a>) is partial along a masked axis, each
 * element whose k coordinate lies beyond a masked axis' extent is zeroed
 * (a 16-bit half, or the whole register of a one-element row), so that the
 * zero-filled operand beside it never multiplies a real Inf or NaN: the
 * copies read real elements there (a window's rows past r's extent, the
 * next group's channels). One mask per register, the same for every
 * instruction tile of the operand (k does not depend on m or n). */
static void print_mma_kmask(printer *m, int t) {
    const gs_mma_row *r = m->mr;
    const unsigned km = m->p->in[t].kmask;
    if (!km) return;
    const gs_mma_frag *f = t == 0 ? &r->a : &r->b;
    gs_sb g;
    gs_sb_init(&g);
    print_full_tile_cond(m, &g, km);
    char *gsx = gs_sb_take(&g);
    open_(m, "if (!(%s)) /* partial along an axis whose copy reads real elements past it: zero those k */",
          gsx ? gsx : "1");
    free(gsx);
    char *prev[GS_MMA_MAX_ELEMS] = {0}; /* a register's mask text: A's pairs of m rows share theirs */
    for (int j = 0; j < f->regs; j++) {
        gs_sb mk;
        gs_sb_init(&mk);
        for (int h = 0; h < r->per_reg; h++) {
            const int i = j * r->per_reg + h;
            char co[64], kk[CW], local[GS_MAX_AXES][CW];
            /* A's k is its column, B's its row */
            mma_coord(co, sizeof co, t == 0 ? f->cg : f->rg, t == 0 ? f->ct : f->rt, gs_mma_elem_k(f, t, i));
            snprintf(kk, sizeof kk, "(ks * %d + %s)", r->k, co);
            mma_split(m, GS_MMA_ROLE_K, kk, false, local);
            gs_sb_puts(&mk, h ? " | (" : "(");
            for (int a = 0, any = 0; a < m->na; a++)
                if (km >> a & 1u) gs_sb_printf(&mk, "%sor%d + %s < E%d", any++ ? " && " : "", a, local[a], a);
            if (r->per_reg == 1) gs_sb_puts(&mk, " ? 0xffffffffu : 0u)");
            else gs_sb_printf(&mk, " ? 0x%xu : 0u)", h ? 0xffff0000u : 0xffffu);
        }
        prev[j] = gs_sb_take(&mk);
        int same = -1;
        for (int q = 0; q < j && same < 0; q++)
            if (prev[q] && prev[j] && !strcmp(prev[q], prev[j])) same = q;
        if (same >= 0) line(m, "const unsigned int mk%d = mk%d;", j, same);
        else line(m, "const unsigned int mk%d = %s;", j, prev[j] ? prev[j] : "0u");
    }
    for (int j = 0; j < f->regs; j++) free(prev[j]);
    line(m, "#pragma unroll");
    open_(m, "for (int xi = 0; xi < %d; xi++)", t == 0 ? m->p->warp_m / r->m : m->p->warp_n / r->n);
    for (int j = 0; j < f->regs; j++) line(m, "%s%d%s[xi][%d] &= mk%d;", m->fname, t, m->fslot, j, j);
    close_(m);
    close_(m);
}

/* One tile's multiply from buffer buf: every k-step of the row's k. The
 * only compute of a tile partial along a reduce axis (the fragment-pipelined
 * loop's full tiles never are), so the k masks (plan.kmask) live here. */
static void print_mma_compute(printer *m, const char *buf) {
    const gs_mma_row *r = m->mr;
    line(m, "#pragma unroll");
    open_(m, "for (int ks = 0; ks < %lld; ks++)", (long long)(mma_role_block(m, GS_MMA_ROLE_K) / r->k));
    line(m, "unsigned int f0[%d][%d], f1[%d][%d];", m->p->warp_m / r->m, r->a.regs, m->p->warp_n / r->n, r->b.regs);
    print_mma_load_all(m, buf);
    for (int t = 0; t < 2; t++) print_mma_kmask(m, t);
    print_mma_multiply_all(m);
    close_(m);
}

/* The mma core of the fragment-pipelined main loop (plan.frag_pipe): two
 * fragment sets fr<t>[2][tiles][regs], a k-step ks of the row's k each. */
static void mma_declare(printer *m) {
    const gs_mma_row *r = m->mr;
    line(m, "unsigned int fr0[2][%d][%d], fr1[2][%d][%d];", m->p->warp_m / r->m, r->a.regs, m->p->warp_n / r->n,
         r->b.regs);
}

static void mma_load(printer *m, const char *buf, const char *set) {
    char slot[64];
    ffma_with_set(m, set, slot, sizeof slot);
    print_mma_load_all(m, buf);
    ffma_restore(m);
}

static void mma_multiply(printer *m, const char *set) {
    char slot[64];
    ffma_with_set(m, set, slot, sizeof slot);
    print_mma_multiply_all(m);
    ffma_restore(m);
}

static const math_core mma_core = {mma_declare, mma_load, mma_multiply};

/* ---- main loop --------------------------------------------------------------------- */
/* k-steps of a full tile: the product of the reduce tiles, flattened with
 * the last reduce axis fastest (the order of print_compute_body's loops). */
static int64_t tile_ksteps(const printer *m) {
    if (m->p->mma) return mma_role_block(m, GS_MMA_ROLE_K) / m->mr->k; /* the row's k-steps */
    int64_t n = 1;
    for (int a = 0; a < m->na; a++)
        if (!spatial(m->op, a)) n *= m->e->tile[a].block;
    return n / m->p->lanes; /* reduce lanes: each thread takes every lanes-th index of the last axis */
}

/* Load the fragments of flattened k-step `step` (text) from buffer buf into
 * set `set`, in a scope declaring its reduce coordinates kr<a>. */
static void print_step_load(printer *m, const math_core *core, const char *step, const char *buf, const char *set) {
    open_block(m);
    if (m->p->mma) { /* the row's k-step ks over the flattened reduce tile */
        line(m, "const int ks = %s;", step);
        core->load(m, buf, set);
        close_(m);
        return;
    }
    int64_t d = 1;
    int first = -1, last = -1;
    for (int a = 0; a < m->na; a++)
        if (!spatial(m->op, a)) {
            if (first < 0) first = a;
            last = a;
        }
    for (int a = m->na - 1; a >= 0; a--) {
        if (spatial(m->op, a)) continue;
        /* with reduce lanes, lane l takes l, l + R, ... of the last axis */
        const int R = a == last ? m->p->lanes : 1, T = m->e->tile[a].block / R;
        char lane[48] = "";
        if (R > 1) snprintf(lane, sizeof lane, " * %d + lane", R);
        if (a == first) line(m, "const int kr%d = ((%s) / %lld)%s;", a, step, (long long)d, lane);
        else line(m, "const int kr%d = (((%s) / %lld) %% %d)%s;", a, step, (long long)d, T, lane);
        d *= T;
    }
    core->load(m, buf, set);
    close_(m);
}

/* The next tile's copies into buffer wb, when there is a next tile; in the
 * steady loop (peel) there always is, and each copy takes its fast path. */
static void print_next_copies(printer *m, bool steady) {
    const gs_plan *p = m->p;
    if (steady) open_block(m);
    else open_(m, "if (nx < ntile)");
    if (tile_counters(m)) print_counter_origins(m, "cn");
    else print_tile_origins(m, "nx");
    for (int t = 0; t < m->ni; t++) {
        if (!p->in[t].staged) continue;
        copy_kind kind = p->in[t].copy_mode == GS_COPY_ASYNC ? COPY_ISSUE : COPY_PREFETCH;
        if (!steady) {
            print_copy(m, t, "wb", kind);
            continue;
        }
        open_(m, "/* copy %s (fast) */", m->op->tensors[t].name);
        print_box_origin(m, t);
        print_copy_fast(m, t, "wb", kind);
        close_(m);
    }
    close_(m);
    if (p->any_async) line(m, "GS_CP_COMMIT();");
}

/* The end of a tile: the register path's stores of the next tile, the wait
 * for the tile after this one and the barrier; then the read buffer moves
 * on and that tile's first fragments are loaded into set 0. */
static void print_tile_turn(printer *m, const math_core *core, bool any_reg, bool steady) {
    const gs_plan *p = m->p;
    if (any_reg && steady) {
        print_store_prefetched(m, "wb");
    } else if (any_reg) {
        open_(m, "if (nx < ntile)");
        print_store_prefetched(m, "wb");
        close_(m);
    }
    if (p->any_async) line(m, "GS_CP_WAIT(%d);", p->stages - 2);
    line(m, "%s;", m->sp->sync);
    line(m, "rb = rb + 1 == %d ? 0 : rb + 1;", p->stages);
    print_step_load(m, core, "0", "rb", "0");
}

/* A full tile's k-steps, unrolled: step kk loads step kk+1's fragments into
 * the other set (the last step turns the tile and loads the next tile's
 * first), multiplies its own set, and after the first step issues the
 * copies of the tile stages-1 ahead. */
static void print_full_tile(printer *m, const math_core *core, bool any_reg, bool steady) {
    const int64_t T = tile_ksteps(m);
    line(m, "#pragma unroll");
    open_(m, "for (int kk = 0; kk < %lld; kk++)", (long long)T);
    open_(m, "if (kk < %lld)", (long long)(T - 1));
    print_step_load(m, core, "kk + 1", "rb", "(kk + 1) & 1");
    m->indent--;
    line(m, "} else {");
    m->indent++;
    print_tile_turn(m, core, any_reg, steady);
    close_(m);
    core->multiply(m, "kk & 1");
    open_(m, "if (kk == 0)");
    print_next_copies(m, steady);
    close_(m);
    close_(m); /* kk */
}

/* The steady loop of an operator of several reduce axes (plan.peel on a
 * convolution's window): the tiles run in counter order, the last reduce
 * axis fastest, so the full tiles are a prefix when every reduce axis but
 * the first (slowest) divides by its tile, checked at run time. A copy's
 * fast-path check then holds for every full tile when it holds at the
 * lowest reduce origins (all 0) and at the highest full ones ((E/T - 1) * T
 * each): each dim is non-decreasing in every reduce origin (plan.peel needs
 * coefficients >= 0). Inside, the copies take their fast path from the
 * counters cn, without a check, and the counters step as in the general
 * loop that takes over after it (the last stages-1 tiles, a partial c
 * tile, the blocks whose window crosses the padding). */
/* The copied tile's counters cn step, moving the walked bases sp<t> (less
 * nk * dp on a wrap). */
static void print_window_step(printer *m) {
    int open = 0, prev = -1;
    for (int a = m->na - 1; a >= 0; a--) {
        if (spatial(m->op, a)) continue;
        if (prev >= 0) {
            open_(m, "if (cn%d == nk%d)", prev, prev);
            open++;
            line(m, "cn%d = 0;", prev);
            for (int t = 0; t < m->ni; t++) line(m, "sp%d -= nk%d * dp%d_%d;", t, prev, t, prev);
        }
        line(m, "cn%d++;", a);
        for (int t = 0; t < m->ni; t++) line(m, "sp%d += dp%d_%d;", t, t, a);
        prev = a;
    }
    for (; open > 0; open--) close_(m);
}

/* The copies of the tile cn (walked, unchecked) into wb, then the step of
 * cn and the bases. */
static void print_window_copies(printer *m) {
    m->walk_ptr = true;
    print_next_copies(m, true);
    m->walk_ptr = false;
    print_window_step(m);
}

/* A full tile of a conv's steady loop turned a k-step early
 * (plan.cross_turn): after the second-last k-step's loads (the tile's last
 * shared loads) come the register path's stores, the wait, the barrier, the
 * next read buffer (wb rotated too) and the next tile's first fragments,
 * into a third set fr<t>[2]; the last two k-steps' multiplies follow, then
 * the copies of the tile `stages` ahead into the buffer this tile was read
 * from (none where `guard`, text or NULL, says this is the loop's last
 * tile: its next copy is the general loop's) and set 2 moves to set 0.
 * --sass on the four 3x3 picks (h100/a100, NHWC/NCHW): frag_pipe's turn at
 * the last k-step left ptxas one k-step of FFMAs to hoist above the barrier
 * and the copies after the first k-step put the next loads behind the
 * global loads (4-16 slots); the copies at the turn, or a turn two or
 * three k-steps early, measured worse on one pick or another. */
static void print_full_tile_cross(printer *m, const math_core *core, bool any_reg, const char *guard) {
    const int64_t T = tile_ksteps(m), turn = T >= 2 ? T - 2 : 0;
    line(m, "#pragma unroll");
    open_(m, "for (int kk = 0; kk < %lld; kk++)", (long long)T);
    if (T > 1) {
        open_(m, "if (kk < %lld)", (long long)(T - 1));
        print_step_load(m, core, "kk + 1", "rb", "(kk + 1) & 1");
        close_(m);
    }
    open_(m, "if (kk == %lld)", (long long)turn);
    if (any_reg) print_store_prefetched(m, "wb");
    if (m->p->any_async) line(m, "GS_CP_WAIT(%d);", m->p->stages - 2);
    line(m, "%s;", m->sp->sync);
    line(m, "rb = rb + 1 == %d ? 0 : rb + 1;", m->p->stages);
    print_step_load(m, core, "0", "rb", "2");
    line(m, "wb = wb + 1 == %d ? 0 : wb + 1;", m->p->stages);
    close_(m);
    core->multiply(m, "kk & 1");
    close_(m); /* kk */
    if (guard) open_(m, "if (%s)", guard);
    print_window_copies(m);
    if (guard) close_(m);
    for (int t = 0; t < m->ni; t++) {
        line(m, "#pragma unroll");
        open_(m, "for (int i = 0; i < (int)(sizeof fr%d[0] / sizeof fr%d[0][0]); i++)", t, t);
        line(m, "fr%d[0][i] = fr%d[2][i];", t, t);
        close_(m);
    }
}

/* One full tile of a conv's steady loop: unchecked copies from the walked
 * bases sp<t>, then the copied tile's counters cn step, moving the bases
 * (less nk * dp on a wrap). The computed tile's counters ci are not used
 * inside: they are set from `it` once after the loop. With plan.cross_turn
 * the copies and the step follow the tile's last multiply
 * (print_full_tile_cross). */
static void print_steady_tile_window(printer *m, const math_core *core, bool any_reg, const char *guard) {
    if (m->p->cross_turn) {
        print_full_tile_cross(m, core, any_reg, guard);
        return;
    }
    m->walk_ptr = true;
    print_full_tile(m, core, any_reg, true);
    m->walk_ptr = false;
    print_window_step(m);
}

/* The most stages whose steady loop runs a pass of one tile per stage,
 * each with its buffers as constants. Three measured worse: the a100 nchw
 * 3x3 pick (st3, lb(64,6), 166 registers) went from 0.683 to 0.613 steady
 * FFMA share, ptxas recomputing each constant-buffer fragment address
 * (271 int/addr a pass of three tiles against 43 a tile). */
#define GS_STEADY_PASS_STAGES 2

static void print_steady_loop_window(printer *m, const math_core *core, bool any_reg) {
    const gs_plan *p = m->p;
    const int S = p->stages;
    int first = -1;
    for (int a = 0; a < m->na; a++)
        if (!spatial(m->op, a) && first < 0) first = a;
    open_block(m);
    line(m, "int steady = 1;");
    for (int a = 0; a < m->na; a++)
        if (!spatial(m->op, a) && a != first) line(m, "steady = steady && E%d %% %d == 0;", a, m->e->tile[a].block);
    char lo[GS_MAX_AXES][CW], hi[GS_MAX_AXES][CW];
    for (int a = 0; a < m->na; a++) {
        if (spatial(m->op, a)) {
            snprintf(lo[a], CW, "ob%d", a);
            snprintf(hi[a], CW, "ob%d", a);
        } else {
            snprintf(lo[a], CW, "0");
            snprintf(hi[a], CW, "(E%d / %d - 1) * %d", a, m->e->tile[a].block, m->e->tile[a].block);
        }
    }
    for (int t = 0; t < m->ni; t++) {
        const gs_tensor *ts = &m->op->tensors[t];
        const gs_plan_input *pi = &p->in[t];
        open_(m, "/* copy %s: every full tile's check, at the lowest and highest reduce origins */", ts->name);
        gs_sb c;
        gs_sb_init(&c);
        gs_sb_puts(&c, pi->copy_vec > 1 ? "al" : "1");
        if (pi->copy_vec > 1) gs_sb_printf(&c, "%d", t);
        for (int j = 0; j < ts->ndim; j++) {
            char b0[1024], b1[1024];
            const long long nr = (long long)gs_plan_neg_reach(m->op, m->e, &ts->idx[j]);
            affine_text(&ts->idx[j], m->na, lo, b0, sizeof b0);
            affine_text(&ts->idx[j], m->na, hi, b1, sizeof b1);
            line(m, "const int lo%d = %s + %lld, hi%d = %s + %lld;", j, b0, nr, j, b1, nr);
            gs_sb_printf(&c, " && lo%d >= 0 && hi%d + %lld <= S%d_%d", j, j, (long long)pi->halo[j], t, j);
        }
        char *cs = gs_sb_take(&c);
        line(m, "steady = steady && (%s);", cs ? cs : "0");
        free(cs);
        close_(m);
    }
    gs_sb nf;
    gs_sb_init(&nf);
    gs_sb_printf(&nf, "E%d / %d", first, m->e->tile[first].block);
    for (int a = 0; a < m->na; a++)
        if (!spatial(m->op, a) && a != first) gs_sb_printf(&nf, " * nk%d", a);
    char *nfs = gs_sb_take(&nf);
    line(m, "int nfull = %s;", nfs ? nfs : "0");
    free(nfs);
    line(m, "if (nfull > ntile) nfull = ntile;");
    line(m, "const int nsteady = steady ? nfull - %d : 0;", S - 1);
    /* each copy's tile base at the counters cn, and its step along each
     * reduce axis (a tile's origin times the axis' element stride in the
     * tensor): the copies add nothing but their unit offsets */
    for (int t = 0; t < m->ni; t++) {
        const gs_tensor *ts = &m->op->tensors[t];
        line(m, "%s sp%d;", m->in_ptr, t);
        open_block(m);
        print_counter_origins(m, "cn");
        print_box_origin(m, t);
        gs_sb base;
        gs_sb_init(&base);
        for (int j = 0; j < ts->ndim; j++) gs_sb_printf(&base, "%s(%s)lo%d * gs%d_%d", j ? " + " : "", m->idx_t, j, t, j);
        char *bs = gs_sb_take(&base);
        line(m, "sp%d = in%d + (%s);", t, t, bs ? bs : "0");
        free(bs);
        close_(m);
        for (int a = 0; a < m->na; a++) {
            if (spatial(m->op, a)) continue;
            gs_sb d;
            gs_sb_init(&d);
            int any = 0;
            for (int j = 0; j < ts->ndim; j++) {
                const long long c = (long long)ts->idx[j].coeff[a];
                if (!c) continue;
                gs_sb_printf(&d, "%s%lld * gs%d_%d", any++ ? " + " : "", c, t, j);
            }
            char *ds = gs_sb_take(&d);
            line(m, "const int dp%d_%d = %d * (%s);", t, a, m->e->tile[a].block, any && ds ? ds : "0");
            free(ds);
        }
    }
    if (p->cross_turn) { /* the copies of the loop's first tile, before it */
        open_(m, "if (nsteady > 0)");
        print_window_copies(m);
        close_(m);
    }
    if (S <= GS_STEADY_PASS_STAGES) {
        /* S tiles a pass, each with its buffers as constants (the loop
         * starts at tile 0: rb 0, wb S-1; tile h of a pass reads buffer h
         * and writes h + S-1 mod S), so that the fragment and store
         * addresses need no multiply by rb or wb and nothing rotates them;
         * the last tiles short of a pass run in the loop below */
        open_(m, "for (; it + %d < nsteady; it += %d)", S - 1, S);
        for (int h = 0; h < S; h++) {
            open_block(m);
            line(m, "int rb = %d, wb = %d;", h, (h + S - 1) % S);
            /* (tile it + h; the pass' last may be the loop's last) */
            char guard[32];
            snprintf(guard, sizeof guard, "it + %d < nsteady", S);
            print_steady_tile_window(m, core, any_reg, h == S - 1 ? guard : NULL);
            line(m, "(void)rb, (void)wb;");
            close_(m);
        }
        close_(m);
    }
    open_(m, "for (; it < nsteady; it++)");
    print_steady_tile_window(m, core, any_reg, "it + 1 < nsteady");
    if (!p->cross_turn) line(m, "wb = wb + 1 == %d ? 0 : wb + 1;", S);
    close_(m);
    /* the general loop goes on at tile it: its counters from the index */
    open_(m, "if (nsteady > 0)");
    line(m, "int cirem = it;");
    for (int a = m->na - 1; a >= 0; a--)
        if (!spatial(m->op, a)) line(m, "ci%d = cirem %% nk%d; cirem /= nk%d;", a, a, a);
    close_(m);
    close_(m);
}

/* The walked bases of a gemm-like steady loop (one reduce axis k): sp<t>,
 * staged input t's box at tile `tile` (the copy stages-1 ahead of the
 * loop's first), and dp<t>, its step a k-tile (the tile times k's element
 * stride in the tensor); the copies then add only their unit offsets. */
static void print_walk_bases(printer *m, int k, const char *tile) {
    for (int t = 0; t < m->ni; t++) {
        const gs_tensor *ts = &m->op->tensors[t];
        if (!m->p->in[t].staged) continue;
        line(m, "%s sp%d;", m->in_ptr, t);
        open_block(m);
        print_tile_origins(m, tile);
        print_box_origin(m, t);
        gs_sb base, d;
        gs_sb_init(&base);
        gs_sb_init(&d);
        int any = 0;
        for (int j = 0; j < ts->ndim; j++) {
            gs_sb_printf(&base, "%s(%s)lo%d * gs%d_%d", j ? " + " : "", m->idx_t, j, t, j);
            const long long c = (long long)ts->idx[j].coeff[k];
            if (c) gs_sb_printf(&d, "%s%lld * gs%d_%d", any++ ? " + " : "", c, t, j);
        }
        char *bs = gs_sb_take(&base), *ds = gs_sb_take(&d);
        line(m, "sp%d = in%d + (%s);", t, t, bs ? bs : "0");
        close_(m);
        line(m, "const int dp%d = %d * (%s);", t, m->e->tile[k].block, any && ds ? ds : "0");
        free(bs);
        free(ds);
    }
}

static void print_walk_step(printer *m) {
    for (int t = 0; t < m->ni; t++)
        if (m->p->in[t].staged) line(m, "sp%d += dp%d;", t, t);
}

/* A one-reduce-axis steady loop's copies of its next tile into wb: each
 * staged input's unchecked copy from its walked base sp<t>, then the commit
 * of the cp.async ones. */
static void print_walked_copies(printer *m) {
    const gs_plan *p = m->p;
    m->walk_ptr = true;
    for (int t = 0; t < m->ni; t++) {
        if (!p->in[t].staged) continue;
        open_(m, "/* copy %s (fast, walked) */", m->op->tensors[t].name);
        print_copy_fast(m, t, "wb", p->in[t].copy_mode == GS_COPY_ASYNC ? COPY_ISSUE : COPY_PREFETCH);
        close_(m);
    }
    m->walk_ptr = false;
    if (p->any_async) line(m, "GS_CP_COMMIT();");
}

/* One tile of the plain pipeline's steady loop (plan.peel without
 * frag_pipe): the wait and the barrier, the unchecked copies of the tile
 * stages-1 ahead from the walked bases, the full tile's compute, the
 * register path's stores, the bases' step. rb and wb in scope. */
static void print_plain_steady_tile(printer *m, bool any_reg, const char *tile) {
    const gs_plan *p = m->p;
    if (p->any_async) line(m, "GS_CP_WAIT(%d);", p->stages - 2);
    line(m, "%s;", m->sp->sync);
    print_walked_copies(m);
    open_block(m);
    print_tile_origins(m, tile);
    print_compute_body(m, "rb", false, true);
    close_(m);
    if (any_reg) print_store_prefetched(m, "wb");
    print_walk_step(m);
}

/* The block's steady check of a gemm-like operator (one reduce axis k):
 * every staged box passes the fast path's check on its spatial dims (the
 * same for every tile) and its reduce dim holds the reduce extent; then
 * nsteady, the tiles of the steady loop: the full ones less the last
 * stages-1 (whose next copy is not a full tile). */
static void print_steady_check(printer *m, int k) {
    const gs_plan *p = m->p;
    const int T = m->e->tile[k].block;
    line(m, "int steady = 1;");
    char origin[GS_MAX_AXES][CW];
    for (int a = 0; a < m->na; a++) snprintf(origin[a], CW, spatial(m->op, a) ? "ob%d" : "or%d", a);
    for (int t = 0; t < m->ni; t++) {
        const gs_tensor *ts = &m->op->tensors[t];
        const gs_plan_input *pi = &p->in[t];
        open_(m, "/* copy %s: the block's check */", ts->name);
        for (int j = 0; j < ts->ndim; j++) { /* the spatial dims' lo<j>, as print_box_origin */
            if (ts->idx[j].coeff[k]) continue;
            char buf2[1024];
            affine_text(&ts->idx[j], m->na, origin, buf2, sizeof buf2);
            line(m, "const int lo%d = %s + %lld;", j, buf2, (long long)gs_plan_neg_reach(m->op, m->e, &ts->idx[j]));
        }
        gs_sb c;
        gs_sb_init(&c);
        gs_sb_puts(&c, pi->copy_vec > 1 ? "al" : "1");
        if (pi->copy_vec > 1) gs_sb_printf(&c, "%d", t);
        for (int j = 0; j < ts->ndim; j++) {
            if (ts->idx[j].coeff[k]) gs_sb_printf(&c, " && E%d <= S%d_%d", k, t, j);
            else gs_sb_printf(&c, " && lo%d >= 0 && lo%d + %lld <= S%d_%d", j, j, (long long)pi->halo[j], t, j);
        }
        char *cs = gs_sb_take(&c);
        line(m, "steady = steady && (%s);", cs ? cs : "0");
        free(cs);
        close_(m);
    }
    /* this block's full tiles: E/T in all, less the split's first tile */
    if (k == p->split_axis) line(m, "int nfull = E%d / %d - k0;", k, T);
    else line(m, "int nfull = E%d / %d;", k, T);
    line(m, "if (nfull > ntile) nfull = ntile;");
    line(m, "const int nsteady = steady ? nfull - %d : 0;", gs_plan_steady_ahead(p));
}

static int reduce_axis(const printer *m) {
    int k = -1;
    for (int a = 0; a < m->na; a++)
        if (!spatial(m->op, a)) k = a;
    return k;
}

/* The entry of a one-reduce-axis steady loop: the block's check, the copy
 * bases sp<t> at tile stages-1, and the loop head over the steady tiles. */
static void open_steady_loop(printer *m, int k) {
    open_block(m);
    print_steady_check(m, k);
    char first[8];
    snprintf(first, sizeof first, "%d", m->p->stages - 1);
    print_walk_bases(m, k, first);
    open_(m, "for (; it < nsteady; it++)");
}

/* The steady loop (plan.peel): the leading full tiles whose next copy is a
 * full tile too, run while every staged box of the block passes the fast
 * path's check; nothing in it checks an edge, and its copies walk the
 * bases sp<t> (print_walk_bases), entered at tile 0. */
static void print_steady_loop(printer *m, const math_core *core, bool any_reg) {
    const gs_plan *p = m->p;
    const int S = p->stages;
    if (m->nred > 1) {
        print_steady_loop_window(m, core, any_reg);
        return;
    }
    const int k = reduce_axis(m);
    open_steady_loop(m, k);
    line(m, "const int nx = it + %d;", S - 1);
    m->walk_ptr = true;
    print_full_tile(m, core, any_reg, true);
    m->walk_ptr = false;
    print_walk_step(m);
    line(m, "wb = wb + 1 == %d ? 0 : wb + 1;", S);
    close_(m);
    close_(m);
}

/* The plain pipeline's steady loop (plan.peel, one reduce axis, no
 * frag_pipe), entered at tile 0, one tile a pass, rotating rb and wb as
 * the general loop after it does. (Passes of `stages` tiles with constant
 * buffers, as a conv's two-tile pass, were tried on the a100 gemm 4096^3
 * pick: ptxas then recomputed every fragment address, 118 int/addr
 * instructions a tile against 49, at 229 registers.) With plan.cross_turn:
 * print_steady_loop_cross. */
static void print_steady_loop_cross(printer *m, bool any_reg);

static void print_steady_loop_plain(printer *m, bool any_reg) {
    const int S = m->p->stages, k = reduce_axis(m);
    if (m->p->cross_turn) {
        print_steady_loop_cross(m, any_reg);
        return;
    }
    open_steady_loop(m, k);
    print_plain_steady_tile(m, any_reg, "it");
    line(m, "rb = rb + 1 == %d ? 0 : rb + 1;", S);
    line(m, "wb = wb + 1 == %d ? 0 : wb + 1;", S);
    close_(m);
    close_(m);
}

/* The walked copies of the steady loop's next tile into wb (rotated first
 * when asked), then the bases' step. */
static void print_cross_copies(printer *m, bool rotate) {
    const gs_plan *p = m->p;
    if (rotate) line(m, "wb = wb + 1 == %d ? 0 : wb + 1;", p->stages);
    print_walked_copies(m);
    print_walk_step(m);
}

/* The plain steady loop turned before each tile's last k-step
 * (plan.cross_turn), with two fragment sets fr<t>[2][n] as frag_pipe's:
 * each k-step loads the next one's fragments into the other set while it
 * multiplies, and the last one's multiply comes after the turn (the
 * register path's stores, the wait, the barrier, the next read buffer) and
 * the next tile's first fragments, so every fragment is loaded a k-step
 * ahead, across the barrier too. Entered once the block's first tile is
 * waited for and its first fragments are loaded; the last turn waits for
 * and loads the tile the general loop takes next, which waits, syncs and
 * loads it again. The copies (walked, as the plain steady tile's) go at the
 * turn or after the second k-step's loads (plan.cross_turn's value). */
static void print_steady_loop_cross(printer *m, bool any_reg) {
    const gs_plan *p = m->p;
    const int S = p->stages, k = reduce_axis(m);
    const int64_t TT = tile_ksteps(m); /* even (plan) */
    /* the copies at the turn, or after the second k-step's loads */
    const bool at_turn = p->cross_turn == GS_CROSS_TURN_COPY_AT_TURN;
    open_block(m);
    print_steady_check(m, k);
    char first[8];
    snprintf(first, sizeof first, "%d", S - 1);
    print_walk_bases(m, k, first);
    ffma_core.declare(m);
    open_(m, "if (nsteady > 0)");
    if (p->any_async) line(m, "GS_CP_WAIT(%d);", S - 2);
    line(m, "%s;", m->sp->sync);
    print_step_load(m, &ffma_core, "0", "rb", "0");
    if (at_turn) print_cross_copies(m, false); /* the tile stages-1, into wb */
    close_(m);
    open_(m, "for (; it < nsteady; it++)");
    if (p->k_unroll == 0) {
        /* fully unrolled: step kk loads step kk+1's fragments into the other
         * set, as frag_pipe's loop (this spelling, not the pairs' below:
         * ptxas scheduled the h100 gemm 4096^3 pick's loads 25 slots ahead
         * from it, 5 from the pairs) */
        line(m, "#pragma unroll");
        open_(m, "for (int kk = 0; kk < %lld; kk++)", (long long)(TT - 1));
        print_step_load(m, &ffma_core, "kk + 1", "rb", "(kk + 1) & 1");
        if (!at_turn) {
            open_(m, "if (kk == 0)");
            print_cross_copies(m, false);
            close_(m);
        }
        ffma_core.multiply(m, "kk & 1");
        close_(m);
    } else {
        /* partly unrolled (plan.k_unroll): the k-steps in pairs, each
         * loading the next one's fragments into the other set, k_unroll/2
         * pairs a pass, so the loads stay a k-step ahead across the loop's
         * back edge too */
        print_step_load(m, &ffma_core, "1", "rb", "1");
        if (!at_turn) print_cross_copies(m, false);
        ffma_core.multiply(m, "0");
        if (TT > 2) { /* set 1 holds step 2kp-1 */
            if (p->k_unroll <= 2) line(m, "#pragma unroll");
            else line(m, "#pragma unroll %d", p->k_unroll / 2);
            open_(m, "for (int kp = 1; kp < %lld; kp++)", (long long)(TT / 2));
            print_step_load(m, &ffma_core, "2 * kp", "rb", "0");
            ffma_core.multiply(m, "1");
            print_step_load(m, &ffma_core, "2 * kp + 1", "rb", "1");
            ffma_core.multiply(m, "0");
            close_(m);
        }
    }
    /* the turn. With the copies here, those of the tile `stages` ahead go
     * into the buffer this tile was read from (every thread's reads of it
     * came before the barrier), a k-step earlier than at the next tile's
     * start and after every shared load of this tile in program order
     * (ptxas keeps a shared load after a shared store it cannot tell apart:
     * a cp.async issued early in the tile holds the later k-steps' loads
     * back behind it) */
    if (any_reg) print_store_prefetched(m, "wb");
    if (p->any_async) line(m, "GS_CP_WAIT(%d);", S - 2);
    line(m, "%s;", m->sp->sync);
    line(m, "rb = rb + 1 == %d ? 0 : rb + 1;", S);
    print_step_load(m, &ffma_core, "0", "rb", "0");
    /* wb: the buffer of the tile stages ahead (this one's); at the loop's
     * end, that of the tile stages-1 ahead, as the general loop takes it */
    if (at_turn) print_cross_copies(m, true);
    ffma_core.multiply(m, "1");
    if (!at_turn) line(m, "wb = wb + 1 == %d ? 0 : wb + 1;", S);
    close_(m);
    close_(m);
}

/* The pipelined main loop with register fragments double-buffered a k-step
 * ahead (plan.frag_pipe). A full tile's k-steps are unrolled: step kk loads
 * step kk+1's fragments into the other set, then multiplies its own; after
 * the first step it issues the copies of the tile stages-1 ahead; at the
 * last step the tile turns (wait, barrier, next buffer) and the next
 * tile's first fragments are loaded before the last multiply. One barrier a
 * tile: the copies write the buffer read two turns ago, after this turn's
 * barrier; the register path stores it before the barrier. A partial tile
 * (the bounded compute) copies first, computes with its own fragments and
 * turns at its end. */
/* The pipeline's prologue: the first S-1 tiles' copies issued (cp.async,
 * committed per tile) or made. A loop, not S-1 printed copies: the same
 * code once (PoCL's LLVM took minutes on four unrolled batched copies). */
static void print_pipeline_prologue(printer *m) {
    const gs_plan *p = m->p;
    line(m, "#pragma unroll 1");
    open_(m, "for (int ps = 0; ps < %d; ps++)", p->stages - 1);
    open_(m, "if (ps < ntile)");
    print_tile_origins(m, "ps");
    for (int t = 0; t < m->ni; t++)
        if (p->in[t].staged) print_copy(m, t, "ps", p->in[t].copy_mode == GS_COPY_ASYNC ? COPY_ISSUE : COPY_DIRECT);
    close_(m);
    if (p->any_async) line(m, "GS_CP_COMMIT();");
    close_(m);
}

static void print_main_loop_fragpipe(printer *m, const math_core *core) {
    const gs_plan *p = m->p;
    const int S = p->stages;
    bool any_reg = false;
    for (int t = 0; t < m->ni; t++) any_reg |= p->in[t].staged && p->in[t].copy_mode == GS_COPY_REG;
    line(m, "/* pipeline: %d stages, %d tiles in flight; register fragments double-buffered a k-step ahead */", S,
         S - 1);
    print_pipeline_prologue(m);
    core->declare(m);
    line(m, "int rb = 0, wb = %d;", S - 1);
    if (p->any_async) line(m, "GS_CP_WAIT(%d);", S - 2);
    line(m, "%s;", m->sp->sync);
    print_step_load(m, core, "0", "rb", "0");
    line(m, "int it = 0;");
    if (tile_counters(m)) { /* before the steady loop (plan.peel), which steps them too */
        print_counters_init(m, "ci", "0");
        char snx[8];
        snprintf(snx, sizeof snx, "%d", S - 1);
        print_counters_init(m, "cn", snx);
    }
    if (p->peel) print_steady_loop(m, core, any_reg);
    open_(m, "for (; it < ntile; it++)");
    line(m, "const int nx = it + %d;", S - 1);
    if (tile_counters(m)) print_counter_origins(m, "ci");
    else print_tile_origins(m, "it");
    gs_sb c;
    gs_sb_init(&c);
    print_full_tile_cond(m, &c, GS_ALL_AXES);
    char *cs = gs_sb_take(&c);
    open_(m, "if (%s)", cs ? cs : "1");
    free(cs);
    print_full_tile(m, core, any_reg, false);
    m->indent--;
    line(m, "} else {");
    m->indent++;
    print_next_copies(m, false);
    if (m->p->mma) print_mma_compute(m, "rb"); /* whole (zero-filled) tiles */
    else print_compute_body(m, "rb", m->nred > 0, false);
    print_tile_turn(m, core, any_reg, false);
    close_(m);
    line(m, "wb = wb + 1 == %d ? 0 : wb + 1;", S);
    if (tile_counters(m)) print_counters_advance(m);
    close_(m); /* it */
}

static void print_main_loop(printer *m) {
    const gs_plan *p = m->p;
    bool staged = p->smem_bytes > 0;
    for (int a = 0; a < m->na; a++) {
        if (spatial(m->op, a)) continue;
        if (a != p->split_axis) {
            line(m, "const int nk%d = (E%d + %d - 1) / %d;", a, a, m->e->tile[a].block, m->e->tile[a].block);
            continue;
        }
        /* split-K: block ks takes the ks-th run of kper tiles */
        line(m, "const int nkall = (E%d + %d - 1) / %d, kper = (nkall + %d - 1) / %d, k0 = ks * kper;", a,
             m->e->tile[a].block, m->e->tile[a].block, p->splitk, p->splitk);
        line(m, "const int nk%d = nkall - k0 < kper ? nkall - k0 : kper;", a);
    }
    gs_sb nt;
    gs_sb_init(&nt);
    gs_sb_puts(&nt, "1");
    for (int a = 0; a < m->na; a++)
        if (!spatial(m->op, a)) gs_sb_printf(&nt, " * nk%d", a);
    char *nts = gs_sb_take(&nt);
    line(m, "const int ntile = %s;", nts ? nts : "1");
    free(nts);
    if (p->stages <= 1 || !staged) {
        open_(m, "for (int it = 0; it < ntile; it++)");
        print_tile_origins(m, "it");
        for (int t = 0; t < m->ni; t++)
            if (p->in[t].staged) print_copy(m, t, "0", COPY_DIRECT);
        if (staged) line(m, "%s;", m->sp->sync);
        print_compute(m, "0");
        if (staged) line(m, "%s;", m->sp->sync);
        close_(m);
        return;
    }
    if (p->frag_pipe) {
        print_main_loop_fragpipe(m, p->mma ? &mma_core : &ffma_core);
        return;
    }
    bool async = p->any_async;
    const int S = p->stages;
    line(m, "/* pipeline: %d stages, %d tiles in flight */", S, S - 1);
    print_pipeline_prologue(m);
    line(m, "int rb = 0, wb = %d;", S - 1);
    const bool ctr = tile_counters(m);
    if (ctr) {
        char snx[8];
        snprintf(snx, sizeof snx, "%d", S - 1);
        print_counters_init(m, "ci", "0");
        print_counters_init(m, "cn", snx);
    }
    bool any_reg = false;
    for (int t = 0; t < m->ni; t++) any_reg |= p->in[t].staged && p->in[t].copy_mode == GS_COPY_REG;
    if (p->peel && m->nred == 1) { /* (other kernels keep their text) */
        line(m, "int it = 0;");
        print_steady_loop_plain(m, any_reg);
        open_(m, "for (; it < ntile; it++)");
    } else {
        open_(m, "for (int it = 0; it < ntile; it++)");
    }
    if (async) line(m, "GS_CP_WAIT(%d);", S - 2);
    line(m, "%s;", m->sp->sync);
    line(m, "const int nx = it + %d;", S - 1);
    open_(m, "if (nx < ntile)");
    if (ctr) print_counter_origins(m, "cn");
    else print_tile_origins(m, "nx");
    for (int t = 0; t < m->ni; t++)
        if (p->in[t].staged) print_copy(m, t, "wb", p->in[t].copy_mode == GS_COPY_ASYNC ? COPY_ISSUE : COPY_PREFETCH);
    close_(m);
    if (async) line(m, "GS_CP_COMMIT();");
    open_block(m);
    if (ctr) print_counter_origins(m, "ci");
    else print_tile_origins(m, "it");
    print_compute(m, "rb");
    close_(m);
    if (any_reg) {
        open_(m, "if (nx < ntile)");
        print_store_prefetched(m, "wb");
        close_(m);
    }
    line(m, "rb = rb + 1 == %d ? 0 : rb + 1;", S);
    line(m, "wb = wb + 1 == %d ? 0 : wb + 1;", S);
    if (ctr) print_counters_advance(m);
    close_(m);
}

/* ---- epilogue ---------------------------------------------------------------------- */
/* count_valid (average pooling with count_include_pad=0): `const float
 * <name> = alpha / n;`, n the in-bounds reduce points of the output point
 * x<a> (axis vaxis offset by vk: a vector store's component). gs_op_validate
 * made it a product over the reduce axes: an axis in no dim of input 0
 * counts its extent, one in dim d counts the v with 0 <= base + c*v < S0_d.
 * A window with none divides by 1 (its sum is 0). */
static void print_count_scale(printer *m, int vaxis, int vk, const char *name) {
    const gs_op *op = m->op;
    const gs_tensor *in = &op->tensors[0];
    char coord[GS_MAX_AXES][CW];
    for (int a = 0; a < m->na; a++) {
        if (a == vaxis && vk) snprintf(coord[a], CW, "(x%d + %d)", a, vk);
        else snprintf(coord[a], CW, "x%d", a);
    }
    line(m, "int %s_n = 1;", name);
    for (int a = 0; a < m->na; a++) {
        if (spatial(op, a)) continue;
        int d = -1;
        for (int j = 0; j < in->ndim; j++)
            if (in->idx[j].coeff[a]) d = j;
        if (d < 0) {
            line(m, "%s_n *= E%d;", name, a);
            continue;
        }
        gs_affine base = in->idx[d];
        long long c = (long long)base.coeff[a];
        base.coeff[a] = 0;
        char bt[CW * 2];
        affine_text(&base, m->na, coord, bt, sizeof bt);
        line(m, "{ int c_ = 0; for (int v_ = 0; v_ < E%d; v_++) { const int i_ = %s + %lld * v_; c_ += i_ >= 0 && i_ < S0_%d; } %s_n *= c_; }",
             a, bt, c, d, name);
    }
    line(m, "const float %s = alpha / (float)(%s_n > 0 ? %s_n : 1);", name, name, name);
}

/* The bias element of an ADD_BIAS step: x<axis>, or within group x<g>
 * (a grouped conv: x<g> * E<axis> + x<axis>); plus add, the point's offset
 * from x<axis> (component add of a vector store along that axis, else 0). */
static void bias_index(char *buf, size_t n, const gs_epi_step *st, int add) {
    char plus[16] = "";
    if (add) snprintf(plus, sizeof plus, " + %d", add);
    if (st->group >= 0) snprintf(buf, n, "x%d * E%d + x%d%s", st->group, st->axis, st->axis, plus);
    else snprintf(buf, n, "x%d%s", st->axis, plus);
}

/* One output point: the epilogue's steps (gs_epi_steps) on acc[aidx] (NULL:
 * on v), stored to out[oi]. */
static void print_store_one(printer *m, const char *aidx, const char *oi) {
    gs_epi_step st[GS_EPI_MAX_STEPS];
    int n = gs_epi_steps(m->op, st);
    for (int i = 0; i < n; i++) {
        switch (st[i].kind) {
        case GS_EPI_SCALE: {
            const char *scale = "alpha";
            if (m->op->epi.count_valid) {
                print_count_scale(m, -1, 0, "av");
                scale = "av";
            }
            if (aidx) line(m, "float y = %s * acc[%s];", scale, aidx);
            else line(m, "float y = %s * v;", scale);
            break;
        }
        case GS_EPI_ADD_OLD:
            if (is16(m->op->dtype_out)) line(m, "y += beta * GS_OUT_F(out[%s]);", oi);
            else line(m, "y += beta * out[%s];", oi);
            break;
        case GS_EPI_ADD_BIAS: {
            char bi[48];
            bias_index(bi, sizeof bi, &st[i], 0);
            if (is16(m->op->dtype_in)) line(m, "y += GS_IN_F(bias[%s]);", bi);
            else line(m, "y += bias[%s];", bi);
            break;
        }
        case GS_EPI_UNARY: line(m, "y = gs_unary(y);"); break;
        case GS_EPI_RELU: line(m, "y = gs_maxn(y, 0.0f);"); break;
        case GS_EPI_CLIP_LO: line(m, "y = gs_maxn(y, %.9ef);", (double)m->op->clip_lo); break;
        case GS_EPI_CLIP_HI: line(m, "y = -gs_maxn(-y, %.9ef);", -(double)m->op->clip_hi); break; /* min, NaN kept */
        }
    }
    if (is16(m->op->dtype_out)) line(m, "out[%s] = GS_F_OUT(y);", oi); /* the one rounding */
    else line(m, "out[%s] = y;", oi);
}

/* Component k of a w-wide vector of outputs: the epilogue's steps as one
 * expression into ex (the old values in old, the bias in bv when it is a
 * vector load, else read per point). */
static void print_epi_expr(printer *m, gs_sb *ex, int k) {
    gs_epi_step st[GS_EPI_MAX_STEPS];
    int n = gs_epi_steps(m->op, st);
    for (int i = 0; i < n; i++) {
        switch (st[i].kind) {
        case GS_EPI_SCALE: {
            char add[16], sc[16] = "alpha";
            if (m->op->epi.count_valid) { /* the count's lines precede the expression's */
                snprintf(sc, sizeof sc, "av%d", k);
                print_count_scale(m, m->p->out_axis, k, sc);
            }
            snprintf(add, sizeof add, "%d", k);
            char *aidx = m->mma_acc ? NULL : frag_index(m, -1, add, m->p->out_axis);
            if (m->mma_acc) gs_sb_printf(ex, "%s * acc[%s + %d]", sc, m->mma_acc, k); /* the pair's k-th */
            else gs_sb_printf(ex, "%s * acc[%s]", sc, aidx ? aidx : "0");
            free(aidx);
            break;
        }
        case GS_EPI_ADD_OLD: {
            char o[16], c[40];
            snprintf(o, sizeof o, "old.%s", scomp(k, m->op->dtype_out));
            gs_sb_printf(ex, " + beta * %s", cvt(c, sizeof c, "GS_OUT_F", is16(m->op->dtype_out), o));
            break;
        }
        case GS_EPI_ADD_BIAS: {
            char o[64], c[96];
            if (m->p->bias_vec > 1) snprintf(o, sizeof o, "bv.%s", scomp(k, m->op->dtype_in));
            else { /* a scalar read at component k's own point (k along the vector's axis) */
                char bi[48];
                bias_index(bi, sizeof bi, &st[i], st[i].axis == m->p->out_axis ? k : 0);
                snprintf(o, sizeof o, "bias[%s]", bi);
            }
            gs_sb_printf(ex, " + %s", cvt(c, sizeof c, "GS_IN_F", is16(m->op->dtype_in), o));
            break;
        }
        case GS_EPI_UNARY:
        case GS_EPI_RELU:
        case GS_EPI_CLIP_LO:
        case GS_EPI_CLIP_HI: { /* min(y, hi) as -max(-y, -hi): gs_maxn keeps NaN */
            char *in = gs_sb_take(ex);
            gs_sb_init(ex);
            if (st[i].kind == GS_EPI_UNARY) gs_sb_printf(ex, "gs_unary(%s)", in ? in : "0");
            else if (st[i].kind == GS_EPI_RELU) gs_sb_printf(ex, "gs_maxn(%s, 0.0f)", in ? in : "0");
            else if (st[i].kind == GS_EPI_CLIP_LO) gs_sb_printf(ex, "gs_maxn(%s, %.9ef)", in ? in : "0", (double)m->op->clip_lo);
            else gs_sb_printf(ex, "-gs_maxn(-(%s), %.9ef)", in ? in : "0", -(double)m->op->clip_hi);
            free(in);
            break;
        }
        }
    }
}

/* wi: the dense index of output point (x<a>) over the spatial extents,
 * last axis fastest (split-K's workspace slices). */
static void print_dense_index(printer *m) {
    gs_sb wi;
    gs_sb_init(&wi);
    gs_sb_puts(&wi, "0");
    for (int a = 0; a < m->na; a++) {
        if (!spatial(m->op, a)) continue;
        char *prev = gs_sb_take(&wi);
        gs_sb_init(&wi);
        gs_sb_printf(&wi, "(%s * E%d + x%d)", prev ? prev : "0", a, a);
        free(prev);
    }
    char *ws = gs_sb_take(&wi);
    line(m, "const %s wi = (%s)%s;", m->idx_t, m->idx_t, ws ? ws : "0");
    free(ws);
}

/* oi: the output's linear offset of point (x<a>), through its index maps
 * and strides. */
static void print_out_index(printer *m) {
    const gs_tensor *ot = gs_op_out(m->op);
    char xs[GS_MAX_AXES][CW];
    for (int a = 0; a < m->na; a++) snprintf(xs[a], CW, "x%d", a);
    for (int j = 0; j < ot->ndim; j++) {
        char buf[1024];
        affine_text(&ot->idx[j], m->na, xs, buf, sizeof buf);
        line(m, "const int o%d = %s;", j, buf);
    }
    gs_sb lin;
    gs_sb_init(&lin);
    gs_sb_printf(&lin, "(%s)o0", m->idx_t);
    for (int j = 1; j < ot->ndim; j++) {
        char *prev = gs_sb_take(&lin);
        gs_sb_init(&lin);
        gs_sb_printf(&lin, "(%s * S%d_%d + o%d)", prev ? prev : "0", m->ni, j, j);
        free(prev);
    }
    char *l = gs_sb_take(&lin);
    line(m, "const %s oi = %s;", m->idx_t, l ? l : "0");
    free(l);
}

/* What the loops over a thread's outputs do with each accumulator. */
typedef enum epi_mode {
    EPI_OUT,    /* the epilogue: alpha, beta, bias, relu; store to out */
    EPI_WS_PUT  /* split-K: the partial to this split's workspace slice (or atomically to the one slice) */
} epi_mode;

/* Split-K: one accumulator's partial to the workspace at dense index wi. */
static void print_ws_put(printer *m, const char *aidx) {
    const gs_plan *p = m->p;
    bool atomic = p->split_mode == GS_SPLIT_ATOMIC;
    if (atomic) line(m, "GS_ATOMIC_ADDF(part + wi, acc[%s]);", aidx);
    else line(m, "part[(%s)ks * WN + wi] = acc[%s];", m->idx_t, aidx);
}

static void print_store_vec(printer *m, int w);

/* mma: the loops over a thread's accumulators, each mapped to its output
 * point by the row's C layout (tile mi, ni of the warp, register c), then
 * the epilogue (or split-K's put) per point in range. */
static void print_epilogue_loops_mma(printer *m, epi_mode mode) {
    const gs_mma_row *r = m->mr;
    const int MT = m->p->warp_m / r->m, NT = m->p->warp_n / r->n;
    line(m, "#pragma unroll");
    open_(m, "for (int mi = 0; mi < %d; mi++)", MT);
    line(m, "#pragma unroll");
    open_(m, "for (int ni = 0; ni < %d; ni++)", NT);
    for (int c = 0; c < r->c.elems; c++) {
        char row[64], col[64], aidx[64];
        mma_coord(row, sizeof row, r->c.rg, r->c.rt, r->c.row_off[c]);
        mma_coord(col, sizeof col, r->c.cg, r->c.ct, r->c.col_off[c]);
        open_block(m);
        char xm[CW], xn[CW], coord[GS_MAX_AXES][CW];
        snprintf(xm, sizeof xm, "wom + mi * %d + %s", r->m, row);
        snprintf(xn, sizeof xn, "won + ni * %d + %s", r->n, col);
        for (int a = 0; a < m->na; a++) snprintf(coord[a], CW, "(ob%d + wo%d)", a, a); /* batch axes */
        mma_split(m, GS_MMA_ROLE_M, xm, true, coord);
        mma_split(m, GS_MMA_ROLE_N, xn, true, coord);
        gs_sb cond;
        gs_sb_init(&cond);
        for (int a = 0; a < m->na; a++) {
            if (!spatial(m->op, a)) continue;
            line(m, "const int x%d = %s;", a, coord[a]);
            gs_sb_printf(&cond, "%sx%d < E%d", cond.len ? " && " : "", a, a);
        }
        char *cs = gs_sb_take(&cond);
        snprintf(aidx, sizeof aidx, "(mi * %d + ni) * 4 + %d", NT, c);
        if (mode == EPI_OUT && m->p->out_vec == 2) { /* the pair (c, c + 1), neighbours along n */
            const int oa = m->p->out_axis;
            open_(m, "if (alo && %s && x%d + 1 < E%d)", cs ? cs : "1", oa, oa);
            print_out_index(m);
            m->mma_acc = aidx;
            print_store_vec(m, 2);
            m->mma_acc = NULL;
            m->indent--;
            line(m, "} else {"); /* an edge or unaligned rows: two predicated scalars */
            m->indent++;
            for (int h = 0; h < 2; h++) {
                snprintf(aidx, sizeof aidx, "(mi * %d + ni) * 4 + %d", NT, c + h);
                open_block(m);
                if (h) {
                    line(m, "const int xt_ = x%d + 1;", oa);
                    open_block(m);
                    line(m, "const int x%d = xt_;", oa);
                }
                open_(m, "if (%s)", cs ? cs : "1");
                print_out_index(m);
                print_store_one(m, aidx, "oi");
                close_(m);
                if (h) close_(m);
                close_(m);
            }
            close_(m);
            free(cs);
            close_(m);
            c++; /* the pair's second */
            continue;
        }
        open_(m, "if (%s)", cs ? cs : "1");
        free(cs);
        if (mode != EPI_OUT) {
            print_dense_index(m);
            print_ws_put(m, aidx);
        } else {
            print_out_index(m);
            print_store_one(m, aidx, "oi");
        }
        close_(m);
        close_(m);
    }
    close_(m);
    close_(m);
}

static void print_epilogue_loops(printer *m, bool vec, bool predicated, epi_mode mode) {
    const gs_op *op = m->op;
    const gs_plan *p = m->p;
    if (p->mma) {
        print_epilogue_loops_mma(m, mode);
        return;
    }
    int open = 0, oa = vec ? p->out_axis : -1, w = vec ? p->out_vec : 1;
    for (int a = 0; a < m->na; a++) {
        if (!spatial(op, a)) continue;
        line(m, "#pragma unroll");
        if (a == oa) open_(m, "for (int r%d = 0; r%d < %d; r%d += %d)", a, a, m->e->tile[a].thread, a, w);
        else open_(m, "for (int r%d = 0; r%d < %d; r%d++)", a, a, m->e->tile[a].thread, a);
        open++;
    }
    gs_sb cond;
    gs_sb_init(&cond);
    bool first = true;
    for (int a = 0; a < m->na; a++) {
        if (!spatial(op, a)) continue;
        char r[16], lx[CW];
        snprintf(r, sizeof r, "r%d", a);
        local_expr(m, a, r, lx, sizeof lx);
        line(m, "const int x%d = ob%d + %s;", a, a, lx);
        gs_sb_printf(&cond, "%sx%d < E%d", first ? "" : " && ", a, a);
        first = false;
    }
    char *c = gs_sb_take(&cond);
    if (predicated) open_(m, "if (%s)", c ? c : "1");
    else open_block(m);
    free(c);
    if (mode != EPI_OUT) {
        print_dense_index(m);
        char *aidx = frag_index(m, -1, NULL, -1);
        print_ws_put(m, aidx ? aidx : "0");
        free(aidx);
        close_(m);
        for (; open > 0; open--) close_(m);
        return;
    }
    print_out_index(m);
    if (w == 1) {
        char *aidx = frag_index(m, -1, NULL, -1);
        print_store_one(m, aidx ? aidx : "0", "oi");
        free(aidx);
    } else {
        print_store_vec(m, w);
    }
    close_(m);
    for (; open > 0; open--) close_(m);
}

/* A w-wide vector of outputs at oi (x<a> in scope): old values and bias
 * read as vectors where the plan says, the epilogue per component, one
 * vector store. */
static void print_store_vec(printer *m, int w) {
    const gs_op *op = m->op;
    const gs_plan *p = m->p;
    {
        char ld[CW];
        int bias_axis = -1;
        const int dto = op->dtype_out, dti = op->dtype_in;
        line(m, "%s y;", svtype(m, w, dto));
        if (gs_epi_has(op, GS_EPI_ADD_OLD, NULL)) {
            snprintf(ld, sizeof ld, "%s%d(out + oi)", ldm(dto), w);
            line(m, "const %s old = %s;", svtype(m, w, dto), ld);
        }
        if (gs_epi_has(op, GS_EPI_ADD_BIAS, &bias_axis) && p->bias_vec > 1) {
            char bp[64];
            snprintf(bp, sizeof bp, "bias + x%d", bias_axis);
            snprintf(ld, sizeof ld, "%s%d(%s)", ldm(dti), w, bp);
            line(m, "const %s bv = %s;", svtype(m, w, dti), ld);
        }
        for (int k = 0; k < w; k++) {
            gs_sb ex;
            gs_sb_init(&ex);
            print_epi_expr(m, &ex, k);
            char *exs = gs_sb_take(&ex);
            if (is16(dto)) line(m, "y.%s = GS_F_OUT(%s);", scomp(k, dto), exs ? exs : "0");
            else line(m, "y.%s = %s;", comp(k), exs ? exs : "0");
            free(exs);
        }
        char st[CW];
        snprintf(st, sizeof st, "%s%d(out + oi, y)", stm(dto), w);
        line(m, "%s;", st);
    }
}

/* The group's combine: every lane ends with the whole reduction. */
static void print_group_combine(printer *m) {
    const gs_plan *p = m->p;
    if (p->lanes <= 1) return;
    const char *op = m->op->combine == GS_COMBINE_MAX ? "MAXN" : m->op->combine == GS_COMBINE_MIN ? "MINN" : "SUM";
    long long acc = (long long)gs_etir_acc_regs(m->op, m->e);
    line(m, "/* group: combine the %d lanes' partial results */", p->lanes);
    if (p->lanes_wide) { /* whole warps: shuffles, then shared memory */
        line(m, "for (int i = 0; i < %lld; i++) GS_GROUP_WIDE(acc[i], %d, %s);", acc, p->lanes, op);
        return;
    }
    line(m, "const unsigned gmask = GS_GROUP_MASK(%d);", (int)p->threads);
    line(m, "(void)gmask;");
    line(m, "#pragma unroll");
    line(m, "for (int i = 0; i < %lld; i++) GS_GROUP_%s(acc[i], %d, gmask);", acc, op, p->lanes);
}

/* Split-K: the S blocks of an output tile meet in the workspace. Each adds
 * its partials (its own slice, or atomically the one slice), fences, and
 * counts itself in on the tile's counter; the last to arrive reads the
 * partials back (summed in split order 0..S-1: the same bits whichever block
 * is last), resets the counter (and the atomic slice) to zero for the next
 * launch and goes on to the epilogue; the others are done. */
static void print_split_meet(printer *m) {
    const gs_plan *p = m->p;
    if (p->split_mode == GS_SPLIT_NONE) return;
    line(m, "/* split-K: %d blocks per output tile meet in the workspace (%s) */", p->splitk,
         p->split_mode == GS_SPLIT_ATOMIC ? "float atomics, not deterministic" : "summed in split order");
    gs_sb wn;
    gs_sb_init(&wn);
    gs_sb_printf(&wn, "(%s)1", m->idx_t);
    for (int a = 0; a < m->na; a++)
        if (spatial(m->op, a)) gs_sb_printf(&wn, " * E%d", a);
    char *w = gs_sb_take(&wn);
    line(m, "const %s WN = %s;", m->idx_t, w ? w : "1");
    free(w);
    line(m, "%s cnt = (%s)ws;", m->sp->ws_int_ptr, m->sp->ws_int_ptr);
    line(m, "%s part = ws + ((nsp + 3) & ~3);", m->sp->ws_ptr);
    if (p->lanes > 1) open_(m, "if (lane == 0)");
    else open_block(m);
    print_epilogue_loops(m, false, true, EPI_WS_PUT);
    close_(m);
    line(m, "GS_FENCE();");
    line(m, "%s;", m->sp->sync);
    line(m, "if (tid == 0) gs_last = GS_ATOMIC_INC(cnt + tile_id) == %d;", p->splitk - 1);
    line(m, "%s;", m->sp->sync);
    line(m, "if (!gs_last) return;");
    line(m, "GS_FENCE();");
    /* the last block: the tile's points spread over all its threads (the
     * accumulators are dead: no registers held across the reads) */
    int64_t tile = 1;
    for (int a = 0; a < m->na; a++)
        if (spatial(m->op, a)) tile *= m->e->tile[a].block;
    line(m, "#pragma unroll 1");
    open_(m, "for (int li = tid; li < %lld; li += %d)", (long long)tile, (int)p->threads);
    line(m, "int rem = li;");
    gs_sb cond;
    gs_sb_init(&cond);
    bool first = true;
    for (int a = m->na - 1; a >= 0; a--) {
        if (!spatial(m->op, a)) continue;
        line(m, "const int x%d = ob%d + rem %% %d; rem /= %d;", a, a, m->e->tile[a].block, m->e->tile[a].block);
        gs_sb_printf(&cond, "%sx%d < E%d", first ? "" : " && ", a, a);
        first = false;
    }
    line(m, "(void)rem;");
    char *c = gs_sb_take(&cond);
    open_(m, "if (%s)", c ? c : "1");
    free(c);
    print_dense_index(m);
    if (p->split_mode == GS_SPLIT_ATOMIC) {
        line(m, "const float v = GS_LDCG(part + wi);");
        line(m, "part[wi] = 0.0f;");
    } else {
        line(m, "float v = GS_LDCG(part + wi);");
        line(m, "for (int s = 1; s < %d; s++) v = GS_%s_OP(v, GS_LDCG(part + (%s)s * WN + wi));", p->splitk,
             m->op->combine == GS_COMBINE_MAX ? "MAXN" : m->op->combine == GS_COMBINE_MIN ? "MINN" : "SUM", m->idx_t);
    }
    print_out_index(m);
    print_store_one(m, NULL, "oi");
    close_(m);
    close_(m);
    line(m, "if (tid == 0) cnt[tile_id] = 0;");
}

static void print_epilogue(printer *m) {
    const gs_plan *p = m->p;
    if (p->lanes > 1) open_(m, "if (lane == 0)"); /* one lane stores */
    else open_block(m);
    if (!p->fast_path || p->mma) {
        print_epilogue_loops(m, false, true, EPI_OUT);
        close_(m);
        return;
    }
    open_(m, "if (inb%s)", p->out_vec > 1 ? " && alo" : "");
    print_epilogue_loops(m, p->out_vec > 1, false, EPI_OUT);
    m->indent--;
    line(m, "} else {");
    m->indent++;
    print_epilogue_loops(m, false, true, EPI_OUT);
    close_(m);
    close_(m);
}

gs_status gs_lower_emit_plan(gs_ctx *ctx, const gs_op *op, const gs_etir *e, const gs_plan *p, gs_dialect d, int arch,
                             gs_kernel_src *out) {
    memset(out, 0, sizeof *out);
    if (d != GS_DIALECT_CUDA && d != GS_DIALECT_OPENCL)
        return gs_err(ctx, GS_ERR_INVALID_ARG, "unknown dialect %d", (int)d);
    if (!gs_etir_wellformed(op, e)) return gs_err(ctx, GS_ERR_INVALID_ARG, "lowering: malformed ETIR state");
    printer mm, *m = &mm;
    memset(m, 0, sizeof *m);
    gs_sb_init(&m->sb);
    m->op = op;
    m->e = e;
    m->p = p;
    m->sp = &spellings[d];
    m->dialect = d;
    m->na = op->naxes;
    m->ni = op->ninputs;
    m->typed = gs_op_typed(op);
    snprintf(m->in_ptr, sizeof m->in_ptr, "%s", m->sp->in_ptr);
    snprintf(m->out_ptr, sizeof m->out_ptr, "%s", m->sp->out_ptr);
    if (is16(op->dtype_in))
        snprintf(m->in_ptr, sizeof m->in_ptr, d == GS_DIALECT_CUDA ? "const %s* __restrict__" : "__global const %s* restrict",
                 svtype(m, 1, op->dtype_in));
    if (is16(op->dtype_out))
        snprintf(m->out_ptr, sizeof m->out_ptr, d == GS_DIALECT_CUDA ? "%s* __restrict__" : "__global %s* restrict",
                 svtype(m, 1, op->dtype_out));
    m->fname = "f";
    m->fslot = "";
    if (p->mma) {
        m->mr = gs_mma_get(p->mma);
        if (!m->mr || !gs_mma_roles(op, m->role) || !gs_mma_state_ok(op, e, p->mma)) {
            gs_sb_free(&m->sb);
            return gs_err(ctx, GS_ERR_INVALID_ARG, "lowering: mma=%d does not apply to this operator and state", p->mma);
        }
    }
    if (p->mma) mma_fold_init(m);
    gs_kdesc_make(op, p, e, d, arch, &out->desc);
    m->idx_t = out->desc.idx64 ? m->sp->long_t : "int";
    out->hash = gs_kdesc_hash(&out->desc);
    snprintf(out->name, sizeof out->name, "gs_%016llx", (unsigned long long)out->hash);
    for (int a = 0; a < m->na; a++) {
        m->thr[a] = spatial(op, a) ? gs_etir_threads_axis(e, a) : 1;
        m->t0[a] = spatial(op, a) ? e->tile[a].thread / e->V[a] : 1;
        m->nred += !spatial(op, a);
    }
    out->block = p->threads;
    out->grid = gs_etir_blocks(op, e);
    /* the kernel's whole shared memory, the static scratch included: the
     * loader launches with this less what the module declares statically */
    out->smem_bytes = p->smem_bytes + p->scratch_bytes;
    out->smem_dynamic = p->smem_dynamic && d == GS_DIALECT_CUDA;
    out->ws_bytes = gs_plan_workspace_bytes(op, e, p);
    m->nargs = gs_plan_launch_args(op, e, p, m->args, GS_LAUNCH_MAX_ARGS);
    if (m->nargs < 0) {
        gs_sb_free(&m->sb);
        return gs_err(ctx, GS_ERR_UNSUPPORTED, "lowering: more than %d kernel arguments", GS_LAUNCH_MAX_ARGS);
    }

    char etxt[256], cfg[256], ptxt[320];
    gs_etir_format(op, e, etxt, sizeof etxt);
    gs_etir_format_config(op, e, cfg, sizeof cfg);
    gs_plan_format(op, p, ptxt, sizeof ptxt);
    gs_sb_printf(&m->sb, "/* gensor codegen v%u | %s | descriptor %016llx\n", GS_CODEGEN_VERSION,
                 d == GS_DIALECT_CUDA ? "cuda" : "opencl", (unsigned long long)out->hash);
    gs_sb_printf(&m->sb, " * op: %s\n * etir: %s\n * config: %s\n * plan: %s\n", op->spec, etxt, cfg, ptxt);
    gs_sb_printf(&m->sb, " * launch: grid %lld x block %lld (1-D), %lld bytes of %s shared memory; extents are runtime arguments\n",
                 (long long)out->grid, (long long)p->threads, (long long)p->smem_bytes,
                 out->smem_dynamic ? "dynamic" : "static");
    print_banner_args(m);
    gs_sb_puts(&m->sb, m->sp->preamble);
    if (out->desc.flags & GS_KDESC_MAXN) gs_sb_puts(&m->sb, m->sp->maxn);
    if (out->desc.flags & GS_KDESC_MINN) gs_sb_puts(&m->sb, m->sp->minn);
    print_unary_fn(&m->sb, op, d);
    if (m->typed) {
        gs_sb_puts(&m->sb, type_preamble[d]);
        print_type_macros(&m->sb, op);
    }
    if (op->math == GS_MATH_TF32) print_tf32_macros(&m->sb, d, arch);
    if (p->mma) print_mma_preamble(m);
    print_signature(m, out);
    m->indent = 1;
    if (p->mma && d == GS_DIALECT_OPENCL) { /* the emulation's per-warp scratch */
        line(m, "__local float gs_mx[%d];", (int)(p->threads / 32) * (m->mr->m * m->mr->k + m->mr->k * m->mr->n));
        if (m->mr->ldsm) line(m, "__local int gs_la[%d];", (int)p->threads);
    }
    if (p->lanes_wide) line(m, "GS_GROUP_WIDE_SCRATCH(%d);", (int)p->threads);
    else if (p->lanes > 1) line(m, "GS_GROUP_SCRATCH(%d);", (int)p->threads);
    if (p->split_mode != GS_SPLIT_NONE) line(m, "GS_SHARED_INT gs_last;");
    line(m, "const int tid = %s;", m->sp->tid);
    print_block_index(m);
    if (p->mma) print_mma_warp(m);
    print_guards(m);
    int64_t acc_n = gs_etir_acc_regs(op, e);
    line(m, "(void)beta;");
    line(m, "float acc[%lld];", (long long)acc_n);
    line(m, "#pragma unroll");
    /* no reduce axis: acc + v is v itself only from -0 (a -0 input stays -0) */
    line(m, "for (int i = 0; i < %lld; i++) acc[i] = %s;", (long long)acc_n,
         m->nred == 0 && !strcmp(identity(m), "0.0f") ? "-0.0f" : identity(m));
    print_staging_setup(m);
    print_main_loop(m);
    print_group_combine(m);
    if (p->split_mode != GS_SPLIT_NONE) print_split_meet(m); /* ends with the last block's epilogue */
    else print_epilogue(m);
    gs_sb_puts(&m->sb, "}\n");
    if (m->sb.oom) {
        gs_sb_free(&m->sb);
        return gs_err(ctx, GS_ERR_NOMEM, "out of memory emitting kernel source");
    }
    out->src = gs_sb_take(&m->sb);
    if (!out->src) return gs_err(ctx, GS_ERR_NOMEM, "out of memory emitting kernel source");
    return GS_OK;
}

gs_status gs_lower_emit(gs_ctx *ctx, const gs_hw *hw, const gs_op *op, const gs_etir *e, gs_dialect d, int arch,
                        gs_kernel_src *out) {
    memset(out, 0, sizeof *out);
    if (!hw || !op || !e) return gs_err(ctx, GS_ERR_INVALID_ARG, "lowering: NULL profile, operator or state");
    if (!gs_etir_wellformed(op, e)) return gs_err(ctx, GS_ERR_INVALID_ARG, "lowering: malformed ETIR state");
    gs_plan p;
    gs_plan_make(hw, op, e, NULL, &p);
    return gs_lower_emit_plan(ctx, op, e, &p, d, arch, out);
}
