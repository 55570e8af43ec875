/* test_nvrtc.c — NVRTC loading, compilation and the ptxas report parser.
 *
 * Compilation needs libnvrtc but no GPU. Where NVRTC cannot be loaded the
 * compile tests are skipped with the loader's message (set GS_REQUIRE_NVRTC=1
 * to make that a failure instead); the parser tests always run. */
#include "tests/test_common.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

TestSuite(nvrtc);

/* One kernel with 1024 floats (4096 bytes) of static shared memory. */
static const char k_src[] =
    "extern \"C\" __global__ void gs_test_k(const float *__restrict__ x,\n"
    "                                       float *__restrict__ y, int n) {\n"
    "  __shared__ float tile[1024];\n"
    "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
    "  tile[threadIdx.x] = i < n ? x[i] : 0.0f;\n"
    "  __syncthreads();\n"
    "  if (i < n) y[i] = 2.0f * tile[blockDim.x - 1 - threadIdx.x];\n"
    "}\n";

/* Returns a context with NVRTC loaded, or skips the test. */
static gs_ctx *need_nvrtc(void) {
    gs_ctx *ctx = gs_ctx_create();
    cr_assert_not_null(ctx);
    gs_test_need_nvrtc(ctx, "this compile test");
    return ctx;
}

static bool has_arch(const int *a, int n, int sm) {
    for (int i = 0; i < n; i++)
        if (a[i] == sm) return true;
    return false;
}

/* NVRTC's major version, read from the unsupported-arch message, which
 * names it: "sm_10 is not supported by this NVRTC (13.0); ...". */
static int nvrtc_major(gs_ctx *ctx) {
    gs_nvrtc_out o;
    gs_status s = gs_nvrtc_compile(ctx, k_src, "v.cu", 10, false, true, &o);
    gs_nvrtc_out_free(&o);
    cr_assert_eq(s, GS_ERR_ARCH_UNSUPPORTED, "sm_10 should never be supported: %s",
                 gs_ctx_errmsg(ctx));
    const char *p = strstr(gs_ctx_errmsg(ctx), "NVRTC (");
    cr_assert_not_null(p, "message lacks the version: %s", gs_ctx_errmsg(ctx));
    int major = 0, minor = -1;
    cr_assert_eq(sscanf(p, "NVRTC (%d.%d)", &major, &minor), 2, "%s", gs_ctx_errmsg(ctx));
    cr_assert(major >= 11 && minor >= 0, "version %d.%d", major, minor);
    return major;
}

/* ---- ptxas report parsing (no NVRTC needed) -------------------------------- */
/* Parse log and expect these figures. */
static void expect_stats(const char *log, int regs, int64_t smem, int64_t stack, int64_t spill_st, int64_t spill_ld) {
    gs_ptxas_stats st;
    cr_assert(gs_ptxas_parse(log, &st), "no register count in:\n%s", log);
    cr_assert_eq(st.registers, regs, "registers %d, want %d", st.registers, regs);
    cr_assert_eq(st.smem_bytes, smem, "smem %lld, want %lld", (long long)st.smem_bytes, (long long)smem);
    cr_assert_eq(st.stack_bytes, stack, "stack %lld, want %lld", (long long)st.stack_bytes, (long long)stack);
    cr_assert_eq(st.spill_store_bytes, spill_st);
    cr_assert_eq(st.spill_load_bytes, spill_ld);
}

Test(nvrtc, ptxas_parse_nvcc_style) {
    const char *log =
        "ptxas info    : 0 bytes gmem\n"
        "ptxas info    : Compiling entry function 'gemm' for 'sm_80'\n"
        "ptxas info    : Function properties for gemm\n"
        "    0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads\n"
        "ptxas info    : Used 40 registers, used 0 barriers, 4096 bytes smem, 380 bytes cmem[0]\n";
    expect_stats(log, 40, 4096, 0, 0, 0);
}

Test(nvrtc, ptxas_parse_spills_and_several_entries) {
    /* Verbatim NVRTC 13.0 output (-arch=sm_86, --maxrregcount=24): ptxas
     * reports the second kernel first, then a noinline device function. */
    const char *log =
        "ptxas info    : Overriding maximum register limit 256 for 'k2' with  24 of maxrregcount option\n"
        "ptxas info    : Overriding maximum register limit 256 for 'k' with  24 of maxrregcount option\n"
        "ptxas info    : 0 bytes gmem\n"
        "ptxas info    : Compiling entry function 'k2' for 'sm_86'\n"
        "ptxas info    : Function properties for k2\n"
        "ptxas         .     0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads\n"
        "ptxas info    : Used 12 registers, used 0 barriers, 64 bytes smem, 360 bytes cmem[0]\n"
        "ptxas info    : Compile time = 2.660 ms\n"
        "ptxas info    : Compiling entry function 'k' for 'sm_86'\n"
        "ptxas info    : Function properties for k\n"
        "ptxas         .     288 bytes stack frame, 100 bytes spill stores, 124 bytes spill loads\n"
        "ptxas info    : Used 24 registers, used 0 barriers, 288 bytes cumulative stack size, "
        "364 bytes cmem[0]\n"
        "ptxas info    : Compile time = 31.694 ms\n"
        "ptxas info    : Function properties for _Z1fPfi\n"
        "ptxas         .     0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads\n";
    /* gs_ptxas_parse takes the first entry function ptxas reports: k2. */
    expect_stats(log, 12, 64, 0, 0, 0);
    /* The second entry alone, as a log of its own: spills are read, and no
     * smem on the line means 0. */
    const char *k = strstr(log, "ptxas info    : Compiling entry function 'k' ");
    cr_assert_not_null(k);
    expect_stats(k, 24, 0, 288, 100, 124);
}

Test(nvrtc, ptxas_parse_any_order_and_missing_pieces) {
    /* Registers first, properties after, no entry line, CRLF endings. */
    const char *log =
        "ptxas info    : Used 255 registers, 49152 bytes smem, 400 bytes cmem[0]\r\n"
        "ptxas info    : Function properties for gemm\r\n"
        "    1024 bytes stack frame, 512 bytes spill stores, 768 bytes spill loads\r\n";
    expect_stats(log, 255, 49152, 1024, 512, 768);
    /* Only the register line: the rest stays 0. */
    expect_stats("ptxas info    : Used 7 registers, 356 bytes cmem[0]\n", 7, 0, 0, 0, 0);
    /* Old ptxas: "static+reserved bytes smem" is summed. */
    expect_stats("ptxas info    : Used 10 registers, 2048+16 bytes smem\n", 10, 2064, 0, 0, 0);
}

Test(nvrtc, ptxas_parse_rejects_logs_without_registers) {
    gs_ptxas_stats st;
    memset(&st, 0xff, sizeof st);
    cr_assert_not(gs_ptxas_parse("", &st));
    cr_assert_eq(st.registers, 0, "stats are zeroed even when nothing is found");
    cr_assert_not(gs_ptxas_parse(NULL, &st));
    cr_assert_not(gs_ptxas_parse("ptxas info    : Overriding maximum register limit 256 for 'k'"
                                 " with  24 of maxrregcount option\n"
                                 "    8 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads\n",
                                 &st));
    cr_assert_eq(st.stack_bytes, 8, "pieces found are still reported");
    cr_assert_not(gs_ptxas_parse("garbage Used registers", &st));
    cr_assert_not(gs_ptxas_parse("x", NULL));
}

Test(nvrtc, out_free_zeroes) {
    gs_nvrtc_out o;
    memset(&o, 0, sizeof o);
    o.log = malloc(4);
    o.ptx = malloc(4);
    o.ptx_len = 3;
    o.stats.registers = 9;
    gs_nvrtc_out_free(&o);
    cr_assert_null(o.log);
    cr_assert_null(o.ptx);
    cr_assert_eq(o.ptx_len, 0);
    cr_assert_eq(o.stats.registers, 0);
    gs_nvrtc_out_free(&o); /* twice is fine */
    gs_nvrtc_out_free(NULL);
}

Test(nvrtc, bad_arguments) {
    gs_ctx *ctx = gs_ctx_create();
    gs_nvrtc_out o;
    cr_assert_eq(gs_nvrtc_compile(ctx, NULL, "x.cu", 80, true, true, &o), GS_ERR_INVALID_ARG);
    gs_nvrtc_out_free(&o);
    cr_assert_eq(gs_nvrtc_compile(ctx, k_src, "x.cu", 80, false, false, &o), GS_ERR_INVALID_ARG);
    gs_nvrtc_out_free(&o);
    cr_assert_eq(gs_nvrtc_compile(ctx, k_src, "x.cu", 80, true, true, NULL), GS_ERR_INVALID_ARG);
    int n = -1;
    cr_assert_eq(gs_nvrtc_supported_archs(ctx, NULL, 4, &n), GS_ERR_INVALID_ARG);
    gs_ctx_destroy(ctx);
}

/* ---- with NVRTC ------------------------------------------------------------ */

static void check_sample(int sm) {
    gs_ctx *ctx = need_nvrtc();
    gs_nvrtc_out o;
    gs_status s = gs_nvrtc_compile(ctx, k_src, "gs_test_k.cu", sm, true, true, &o);
    cr_assert_eq(s, GS_OK, "sm_%d: %s", sm, gs_ctx_errmsg(ctx));
    cr_assert_not_null(o.log);
    cr_assert_not_null(o.cubin);
    cr_assert_gt(o.cubin_len, 4u);
    cr_assert_eq(memcmp(o.cubin, "\x7f" "ELF", 4), 0, "cubin is an ELF image");
    cr_assert_not_null(o.ptx);
    cr_assert_eq(o.ptx_len, strlen(o.ptx));
    cr_assert_not_null(strstr(o.ptx, ".entry gs_test_k"), "PTX lacks the entry");
    cr_assert_not_null(strstr(o.log, "Used "), "no ptxas report in the log:\n%s", o.log);
    cr_assert_gt(o.stats.registers, 0, "log:\n%s", o.log);
    cr_assert_leq(o.stats.registers, 255);
    cr_assert_eq(o.stats.spill_store_bytes, 0);
    cr_assert_eq(o.stats.spill_load_bytes, 0);
    cr_assert_eq(o.stats.smem_bytes, 4096, "log:\n%s", o.log);
    cr_assert_gt(o.compile_s, 0.0);
    cr_assert_lt(o.compile_s, 60.0);
    cr_log_info("sm_%d: %d registers, %lld B smem, %lld B stack, spills %lld/%lld, %.1f ms",
                sm, o.stats.registers, (long long)o.stats.smem_bytes,
                (long long)o.stats.stack_bytes, (long long)o.stats.spill_store_bytes,
                (long long)o.stats.spill_load_bytes, o.compile_s * 1e3);
    gs_nvrtc_out_free(&o);
    gs_ctx_destroy(ctx);
}

Test(nvrtc, compile_sm80_cubin_stats) { check_sample(80); }
Test(nvrtc, compile_sm86_cubin_stats) { check_sample(86); }

Test(nvrtc, compile_cubin_only_and_ptx_only) {
    gs_ctx *ctx = need_nvrtc();
    gs_nvrtc_out o;
    cr_assert_eq(gs_nvrtc_compile(ctx, k_src, "gs_test_k.cu", 80, false, true, &o), GS_OK, "%s",
                 gs_ctx_errmsg(ctx));
    cr_assert_null(o.ptx, "PTX not asked for");
    cr_assert_not_null(o.cubin);
    cr_assert_gt(o.stats.registers, 0);
    gs_nvrtc_out_free(&o);

    cr_assert_eq(gs_nvrtc_compile(ctx, k_src, "gs_test_k.cu", 80, true, false, &o), GS_OK, "%s",
                 gs_ctx_errmsg(ctx));
    cr_assert_not_null(o.ptx);
    cr_assert_not_null(strstr(o.ptx, ".entry gs_test_k"));
    cr_assert_not_null(strstr(o.ptx, ".target sm_80"));
    cr_assert_null(o.cubin, "cubin not asked for");
    cr_assert_not_null(o.log, "the log is always set");
    cr_assert_eq(o.stats.registers, 0, "no ptxas run, no stats");
    gs_nvrtc_out_free(&o);
    gs_ctx_destroy(ctx);
}

Test(nvrtc, stats_follow_the_named_kernel) {
    /* Two kernels; the program name picks which one's stats are kept. */
    static const char two[] =
        "extern \"C\" __global__ void small_k(float *x) {\n"
        "  __shared__ float s[16]; s[threadIdx.x & 15] = x[0]; __syncthreads();\n"
        "  x[1] = s[threadIdx.x & 15]; }\n"
        "extern \"C\" __global__ void big_k(float *x) {\n"
        "  __shared__ float s[2048]; s[threadIdx.x] = x[threadIdx.x]; __syncthreads();\n"
        "  x[threadIdx.x] = s[2047 - threadIdx.x]; }\n";
    gs_ctx *ctx = need_nvrtc();
    gs_nvrtc_out o;
    cr_assert_eq(gs_nvrtc_compile(ctx, two, "dir/big_k.cu", 80, false, true, &o), GS_OK);
    cr_assert_eq(o.stats.smem_bytes, 8192, "log:\n%s", o.log);
    gs_nvrtc_out_free(&o);
    cr_assert_eq(gs_nvrtc_compile(ctx, two, "small_k.cu", 80, false, true, &o), GS_OK);
    cr_assert_eq(o.stats.smem_bytes, 64, "log:\n%s", o.log);
    gs_nvrtc_out_free(&o);
    gs_ctx_destroy(ctx);
}

Test(nvrtc, supported_archs) {
    gs_ctx *ctx = need_nvrtc();
    int a[64], n = 0;
    cr_assert_eq(gs_nvrtc_supported_archs(ctx, a, 64, &n), GS_OK, "%s", gs_ctx_errmsg(ctx));
    cr_assert_gt(n, 0);
    static const int want[] = {75, 80, 86, 89, 90};
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++)
        cr_assert(has_arch(a, n, want[i]), "sm_%d missing from the supported list", want[i]);
    int major = nvrtc_major(ctx);
    if (major >= 13) cr_assert_not(has_arch(a, n, 70), "CUDA 13 dropped sm_70");

    /* cap limits what is written. */
    int b[2] = {0, 0}, m = 0;
    cr_assert_eq(gs_nvrtc_supported_archs(ctx, b, 2, &m), GS_OK);
    cr_assert_eq(m, n < 2 ? n : 2);
    cr_assert_eq(b[0], a[0]);
    gs_ctx_destroy(ctx);
}

Test(nvrtc, unsupported_arch_and_nearest) {
    gs_ctx *ctx = need_nvrtc();
    int major = nvrtc_major(ctx);
    int a[64], n = 0, top = 0, bottom = 1 << 30;
    cr_assert_eq(gs_nvrtc_supported_archs(ctx, a, 64, &n), GS_OK);
    for (int i = 0; i < n; i++) {
        if (a[i] > top) top = a[i];
        if (a[i] < bottom) bottom = a[i];
    }
    cr_assert_eq(gs_nvrtc_nearest_arch(ctx, 86), 86);
    cr_assert_eq(gs_nvrtc_nearest_arch(ctx, 1), bottom);
    cr_assert_eq(gs_nvrtc_nearest_arch(ctx, 10000), top, "above all: the largest");
    if (major >= 13) {
        cr_assert_eq(gs_nvrtc_nearest_arch(ctx, 70), 75);
        gs_nvrtc_out o;
        gs_status s = gs_nvrtc_compile(ctx, k_src, "gs_test_k.cu", 70, false, true, &o);
        cr_assert_eq(s, GS_ERR_ARCH_UNSUPPORTED, "%s", gs_ctx_errmsg(ctx));
        const char *m = gs_ctx_errmsg(ctx);
        cr_assert_not_null(strstr(m, "sm_70 is not supported"), "%s", m);
        cr_assert_not_null(strstr(m, "sm_75"), "%s", m);
        cr_assert_not_null(strstr(m, "nearest: sm_75"), "%s", m);
        cr_assert_null(o.cubin);
        gs_nvrtc_out_free(&o);
    } else {
        cr_assert_eq(gs_nvrtc_nearest_arch(ctx, 70), 70, "CUDA < 13 still has sm_70");
    }
    gs_ctx_destroy(ctx);
}

Test(nvrtc, syntax_error_reports_log) {
    gs_ctx *ctx = need_nvrtc();
    static const char bad[] =
        "extern \"C\" __global__ void broken(float *x) {\n"
        "  x[threadIdx.x] = undeclared_name + ;\n"
        "}\n";
    gs_nvrtc_out o;
    gs_status s = gs_nvrtc_compile(ctx, bad, "broken.cu", 80, true, true, &o);
    cr_assert_eq(s, GS_ERR_NVRTC_COMPILE, "%s", gs_ctx_errmsg(ctx));
    cr_assert_not_null(o.log);
    cr_assert_not_null(strstr(o.log, "error"), "log: %s", o.log);
    cr_assert_not_null(strstr(gs_ctx_errmsg(ctx), "error"), "%s", gs_ctx_errmsg(ctx));
    cr_assert_not_null(strstr(gs_ctx_errmsg(ctx), "broken.cu"), "%s", gs_ctx_errmsg(ctx));
    cr_assert_null(o.ptx);
    cr_assert_null(o.cubin);
    gs_nvrtc_out_free(&o);
    gs_ctx_destroy(ctx);
}

Test(nvrtc, long_error_log_is_cut_in_ctx_but_whole_in_out) {
    gs_ctx *ctx = need_nvrtc();
    /* Many errors: the log is far longer than the ctx message. */
    char src[8192];
    size_t len = (size_t)snprintf(src, sizeof src, "extern \"C\" __global__ void many(float *x) {\n");
    for (int i = 0; i < 40; i++)
        len += (size_t)snprintf(src + len, sizeof src - len, "  x[%d] = undefined_%d;\n", i, i);
    snprintf(src + len, sizeof src - len, "}\n");
    gs_nvrtc_out o;
    cr_assert_eq(gs_nvrtc_compile(ctx, src, "many.cu", 80, false, true, &o), GS_ERR_NVRTC_COMPILE);
    cr_assert_gt(strlen(o.log), 1000u);
    cr_assert_not_null(strstr(o.log, "undefined_39"), "the full log is kept");
    cr_assert_lt(strlen(gs_ctx_errmsg(ctx)), 1023u);
    cr_assert_not_null(strstr(gs_ctx_errmsg(ctx), "undefined_0"));
    gs_nvrtc_out_free(&o);
    gs_ctx_destroy(ctx);
}

/* The register rule the plan's launch bounds rely on (gs_hw_regs_cap): a
 * register-hungry kernel compiled with __launch_bounds__(32, N) gets at most
 * the cap for N one-warp blocks, and the cap binds (ptxas uses it, spilling
 * the rest). Registers are allocated per scheduler partition: N = 13 caps a
 * thread at 128 registers, not 65536 / (13 * 32) = 157. */
Test(nvrtc, launch_bounds_register_cap, .timeout = 120) {
    gs_ctx *ctx = need_nvrtc();
    const gs_hw *hw = gs_hw_find_builtin("h100");
    static const int blocks[] = {9, 12, 13, 16};
    for (size_t i = 0; i < sizeof blocks / sizeof blocks[0]; i++) {
        char src[1024];
        snprintf(src, sizeof src,
                 "extern \"C\" __global__ void __launch_bounds__(32, %d) gs_t_regs(const float *x, float *y) {\n"
                 "  float v[224];\n"
                 "  #pragma unroll\n"
                 "  for (int i = 0; i < 224; i++) v[i] = x[i * 32 + threadIdx.x];\n"
                 "  float s = 0.0f;\n"
                 "  #pragma unroll\n"
                 "  for (int i = 0; i < 224; i++) s += v[i] * v[223 - i];\n"
                 "  y[threadIdx.x] = s;\n"
                 "}\n",
                 blocks[i]);
        gs_nvrtc_out nv;
        cr_assert_eq(gs_nvrtc_compile(ctx, src, "gs_t_regs", 90, false, true, &nv), GS_OK, "%s", gs_ctx_errmsg(ctx));
        int cap = gs_hw_regs_cap(hw, blocks[i]);
        cr_expect_leq(nv.stats.registers, cap, "(32, %d): ptxas %d registers over the cap %d", blocks[i],
                      nv.stats.registers, cap);
        cr_expect_geq(nv.stats.registers, cap - 8, "(32, %d): ptxas %d registers, the cap %d does not bind", blocks[i],
                      nv.stats.registers, cap);
        gs_nvrtc_out_free(&nv);
    }
    cr_expect_eq(gs_hw_regs_cap(hw, 13), 128);
    cr_expect_eq(gs_hw_regs_cap(hw, 16), 128);
    cr_expect_eq(gs_hw_regs_cap(hw, 8), 255);
    gs_ctx_destroy(ctx);
}

/* Reduce splits wider than a warp combine through shared memory: the CUDA
 * printers' wide path compiles for sm_90 without spills, with the shared
 * scratch of one float per warp (and shuffles, see tests/sass_check.sh). */
Test(nvrtc, wide_group_compiles, .timeout = 120) {
    gs_ctx *ctx = need_nvrtc();
    const gs_hw *hw = gs_hw_find_builtin("h100");
    static const struct {
        const char *spec, *cfg;
        int lanes;
    } cases[] = {
        {"gemv M=37 N=1031", "bm=2,bk=256,tm=1,vm=1,group=128", 128},
        {"rowmax M=5 K=3001", "bm=1,bk=1024,tm=1,vm=1,sx=1,stages=2,group=512", 512},
        {"gemm M=13 N=21 K=515", "bm=2,bn=2,bk=64,tm=1,tn=1,group=64", 64},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        gs_op *op = NULL;
        cr_assert_eq(gs_op_parse(ctx, cases[i].spec, &op), GS_OK, "%s", gs_ctx_errmsg(ctx));
        gs_etir e;
        cr_assert_eq(gs_etir_parse_config(ctx, op, cases[i].cfg, &e), GS_OK, "%s", gs_ctx_errmsg(ctx));
        cr_assert(gs_hw_check(hw, op, &e), "%s %s fails the profile check", cases[i].spec, cases[i].cfg);
        gs_plan p;
        gs_plan_make(hw, op, &e, NULL, &p);
        cr_expect_eq(p.lanes, cases[i].lanes);
        cr_expect(p.lanes_wide);
        gs_kernel_src k;
        cr_assert_eq(gs_lower_emit_plan(ctx, op, &e, &p, GS_DIALECT_CUDA, 90, &k), GS_OK, "%s", gs_ctx_errmsg(ctx));
        cr_expect_not_null(strstr(k.src, "GS_GROUP_WIDE("), "%s: no cross-warp combine", cases[i].spec);
        gs_nvrtc_out nv;
        cr_assert_eq(gs_nvrtc_compile(ctx, k.src, k.name, 90, false, true, &nv), GS_OK, "%s: %s", cases[i].spec,
                     gs_ctx_errmsg(ctx));
        cr_expect_eq(nv.stats.spill_store_bytes + nv.stats.spill_load_bytes, 0, "%s spills", cases[i].spec);
        cr_expect_eq(nv.stats.smem_bytes, p.smem_bytes + p.scratch_bytes, "%s: smem %lld, planned %lld + %d",
                     cases[i].spec, (long long)nv.stats.smem_bytes, (long long)p.smem_bytes, p.scratch_bytes);
        gs_nvrtc_out_free(&nv);
        gs_kernel_src_free(&k);
        gs_op_destroy(op);
    }
    gs_ctx_destroy(ctx);
}

/* The fragment pipeline's register bound (issue 19): the second fragment
 * set is counted only for an input whose fragments stay live through the
 * whole multiply (one not indexed by its outermost loop); the other's next
 * fragments take the registers its finished rows free. The register-heavy
 * gemm tiles that the bound once kept on the plain loop (two full sets
 * counted: 259 and 260 registers, over 255) take the pipeline, and ptxas
 * fits them with 0 spills at a count that costs no block per SM. */
Test(nvrtc, fragment_pipeline_register_bound, .timeout = 240) {
    gs_ctx *ctx = need_nvrtc();
    static const struct {
        const char *hw, *spec, *cfg;
    } cases[] = {
        {"h100", "gemm M=8192 N=8192 K=8192", "bm=64,bn=256,bk=8,tm=8,tn=16,vm=1,vn=4,sa=1,sb=1,stages=4"},
        {"a100", "gemm M=8192 N=8192 K=8192", "bm=128,bn=128,bk=16,tm=16,tn=8,vm=16,vn=2,sa=1,sb=1,stages=4"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const gs_hw *hw = gs_hw_find_builtin(cases[i].hw);
        gs_op *op = NULL;
        cr_assert_eq(gs_op_parse(ctx, cases[i].spec, &op), GS_OK, "%s", gs_ctx_errmsg(ctx));
        gs_etir e;
        cr_assert_eq(gs_etir_parse_config(ctx, op, cases[i].cfg, &e), GS_OK, "%s", gs_ctx_errmsg(ctx));
        cr_assert(gs_hw_check(hw, op, &e), "%s %s fails the profile check", cases[i].spec, cases[i].cfg);
        gs_plan p;
        gs_plan_make(hw, op, &e, NULL, &p);
        cr_expect(p.frag_pipe, "%s on %s: %s keeps the plain loop (bound %d)", cases[i].spec, hw->name, cases[i].cfg,
                  p.regs_bound);
        gs_kernel_src k;
        cr_assert_eq(gs_lower_emit_plan(ctx, op, &e, &p, GS_DIALECT_CUDA, hw->sm, &k), GS_OK, "%s", gs_ctx_errmsg(ctx));
        gs_nvrtc_out nv;
        cr_assert_eq(gs_nvrtc_compile(ctx, k.src, k.name, hw->sm, false, true, &nv), GS_OK, "%s: %s", cases[i].spec,
                     gs_ctx_errmsg(ctx));
        cr_expect_eq(nv.stats.spill_store_bytes + nv.stats.spill_load_bytes, 0, "%s on %s spills", cases[i].spec,
                     hw->name);
        cr_expect(gs_plan_blocks_per_sm(hw, &p, nv.stats.registers) >= gs_plan_blocks_per_sm(hw, &p, p.regs_bound),
                  "%s on %s: ptxas %d registers against the bound %d", cases[i].spec, hw->name, nv.stats.registers,
                  p.regs_bound);
        cr_log_info("%s on %s: bound %d, ptxas %d", cases[i].spec, hw->name, p.regs_bound, nv.stats.registers);
        gs_nvrtc_out_free(&nv);
        gs_kernel_src_free(&k);
        gs_op_destroy(op);
    }
    gs_ctx_destroy(ctx);
}
