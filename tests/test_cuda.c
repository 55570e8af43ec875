/* test_cuda.c — the CUDA driver runtime (libcuda.so.1 through dlopen).
 *
 * Without a driver (these machines) gs_cuda_open must answer
 * GS_ERR_CUDA_MISSING with "no CUDA device: measurement-free mode (...)",
 * and nothing may crash; $GS_CUDA_LIB forces that path on any machine (a
 * missing file, a library that is not a driver, the toolkit's stub driver).
 * With a device the launch tests run real kernels and check the results
 * exactly; without one they skip with that message, never pass. Set
 * GS_REQUIRE_CUDA=1 to turn the skip into a failure (make check-gpu). */
#include "kernels/service/service.h"
#include "tests/test_common.h"

#include <criterion/criterion.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

TestSuite(cuda, .timeout = 120);

#define MISSING_PREFIX "no CUDA device: measurement-free mode ("

static void assert_missing_msg(gs_ctx *ctx) {
    const char *m = gs_ctx_errmsg(ctx);
    cr_assert(strncmp(m, MISSING_PREFIX, strlen(MISSING_PREFIX)) == 0,
              "message should start with '" MISSING_PREFIX "': %s", m);
    size_t n = strlen(m);
    cr_assert(n > strlen(MISSING_PREFIX) + 1 && m[n - 1] == ')',
              "message should give a reason in parentheses: %s", m);
}

/* Open device 0 or skip the test when there is none; other errors fail. */
static gs_cuda *open_or_skip(gs_ctx *ctx) {
    gs_cuda *cu = NULL;
    gs_status s = gs_cuda_open(ctx, 0, &cu);
    if (s == GS_ERR_CUDA_MISSING) {
        assert_missing_msg(ctx);
        if (gs_test_env_true("GS_REQUIRE_CUDA"))
            cr_assert_fail("GS_REQUIRE_CUDA is set but: %s", gs_ctx_errmsg(ctx));
        cr_skip_test("no CUDA device: measurement-free mode; launch test not run: %s",
                     gs_ctx_errmsg(ctx));
    }
    cr_assert_eq(s, GS_OK, "gs_cuda_open: %s", gs_ctx_errmsg(ctx));
    cr_assert_not_null(cu);
    return cu;
}

/* What the tests with a device share: a context, device 0 (skipped without
 * one) and its own profile. */
typedef struct cu_fix {
    gs_ctx *ctx;
    gs_cuda *cu;
    gs_hw hw;
} cu_fix;

static void cu_setup(cu_fix *f) {
    f->ctx = gs_ctx_create();
    cr_assert_not_null(f->ctx);
    f->cu = open_or_skip(f->ctx);
    cr_assert_eq(gs_cuda_query_profile(f->ctx, f->cu, &f->hw), GS_OK, "%s", gs_ctx_errmsg(f->ctx));
}

static void cu_teardown(cu_fix *f) {
    gs_cuda_close(f->cu);
    gs_ctx_destroy(f->ctx);
}

/* NVRTC's cubin of SRC for the device's own arch. Skipped with the reason
 * when NVRTC is missing (failed under GS_REQUIRE_NVRTC=1) or cannot build
 * SASS that runs on the device: SASS runs only on its own major arch at the
 * same or a later minor. */
static void compile_for_device(cu_fix *f, const char *src, const char *file, gs_nvrtc_out *o) {
    gs_test_need_nvrtc(f->ctx, "the CUDA device's cubin test");
    int arch = gs_nvrtc_nearest_arch(f->ctx, f->hw.sm);
    if (arch > f->hw.sm || arch / 10 != f->hw.sm / 10)
        cr_skip_test("the installed NVRTC cannot build SASS for sm_%d (nearest sm_%d)", f->hw.sm, arch);
    cr_assert_eq(gs_nvrtc_compile(f->ctx, src, file, arch, false, true, o), GS_OK, "%s", gs_ctx_errmsg(f->ctx));
    cr_assert_not_null(o->cubin);
}

static gs_karg karg_buf(gs_cuda_buf *b) { return (gs_karg){.kind = GS_KARG_BUF, .buf = b}; }
static gs_karg karg_int(int32_t v) { return (gs_karg){.kind = GS_KARG_INT, .i = v}; }
static gs_karg karg_long(int64_t v) { return (gs_karg){.kind = GS_KARG_LONG, .l = v}; }
static gs_karg karg_float(float v) { return (gs_karg){.kind = GS_KARG_FLOAT, .f = v}; }

/* ---- measurement-free mode ------------------------------------------------ */

Test(cuda, open_without_driver_is_measurement_free) {
    gs_ctx *ctx = gs_ctx_create();
    gs_cuda *cu = (gs_cuda *)(uintptr_t)1; /* must be reset to NULL */
    gs_status s = gs_cuda_open(ctx, 0, &cu);
    if (s == GS_OK) {
        char name[256];
        snprintf(name, sizeof name, "%s", gs_cuda_device_name(cu));
        gs_cuda_close(cu);
        gs_ctx_destroy(ctx);
        cr_skip_test("a CUDA device is present (%s): the no-driver path is covered by the "
                     "GS_CUDA_LIB tests", name);
    }
    cr_assert_eq(s, GS_ERR_CUDA_MISSING, "gs_cuda_open: %d %s", (int)s, gs_ctx_errmsg(ctx));
    cr_assert_null(cu);
    assert_missing_msg(ctx);
    cr_log_info("%s", gs_ctx_errmsg(ctx));
    /* Asking again gives the same answer (the failure is not half-cached). */
    s = gs_cuda_open(ctx, 0, &cu);
    cr_assert_eq(s, GS_ERR_CUDA_MISSING);
    cr_assert_null(cu);
    assert_missing_msg(ctx);
    /* Another ordinal and a NULL ctx are no different. */
    cr_assert_eq(gs_cuda_open(ctx, 3, &cu), GS_ERR_CUDA_MISSING);
    cr_assert_eq(gs_cuda_open(NULL, 0, &cu), GS_ERR_CUDA_MISSING);
    cr_assert_null(cu);
    gs_ctx_destroy(ctx);
}

Test(cuda, null_arguments_never_crash) {
    gs_ctx *ctx = gs_ctx_create();
    gs_cuda *cu = NULL;
    cr_assert_eq(gs_cuda_open(ctx, 0, NULL), GS_ERR_INVALID_ARG);
    cr_assert_eq(gs_cuda_open(ctx, -1, &cu), GS_ERR_INVALID_ARG);
    cr_assert_null(cu);

    gs_hw hw;
    cr_assert_eq(gs_cuda_query_profile(ctx, NULL, &hw), GS_ERR_INVALID_ARG);
    gs_cuda_mod *m = (gs_cuda_mod *)(uintptr_t)1;
    cr_assert_eq(gs_cuda_load(ctx, NULL, "x", "k", 0, &m), GS_ERR_INVALID_ARG);
    cr_assert_null(m, "out must be reset on failure");
    cr_assert_eq(gs_cuda_load(ctx, NULL, NULL, NULL, 0, NULL), GS_ERR_INVALID_ARG);
    gs_cuda_buf *b = (gs_cuda_buf *)(uintptr_t)1;
    cr_assert_eq(gs_cuda_buf_create(ctx, NULL, 16, NULL, &b), GS_ERR_INVALID_ARG);
    cr_assert_null(b, "out must be reset on failure");
    cr_assert_eq(gs_cuda_buf_create(ctx, NULL, 16, NULL, NULL), GS_ERR_INVALID_ARG);
    float host[4];
    cr_assert_eq(gs_cuda_buf_read(ctx, NULL, NULL, host, sizeof host), GS_ERR_INVALID_ARG);
    double t = -1.0;
    cr_assert_eq(gs_cuda_launch(ctx, NULL, NULL, NULL, 0, 1, 1, &t), GS_ERR_INVALID_ARG);
    cr_assert_eq(t, 0.0, "elapsed must be reset on failure");
    cr_assert_eq(gs_cuda_launch(NULL, NULL, NULL, NULL, -1, 0, 0, NULL), GS_ERR_INVALID_ARG);
    cr_assert_gt(strlen(gs_ctx_errmsg(ctx)), 0);

    gs_cuda_close(NULL);
    gs_cuda_unload(NULL);
    gs_cuda_buf_free(NULL);
    cr_assert_str_eq(gs_cuda_device_name(NULL), "");
    gs_ctx_destroy(ctx);
}

/* With $GS_CUDA_LIB=lib, gs_cuda_open is measurement-free mode and its
 * reason holds needle (what says why it should). */
static void expect_missing_with_lib(gs_ctx *ctx, const char *lib, const char *needle, const char *what) {
    cr_assert_eq(setenv("GS_CUDA_LIB", lib, 1), 0);
    gs_cuda *cu = NULL;
    cr_assert_eq(gs_cuda_open(ctx, 0, &cu), GS_ERR_CUDA_MISSING, "%s", gs_ctx_errmsg(ctx));
    cr_assert_null(cu);
    assert_missing_msg(ctx);
    cr_assert(strstr(gs_ctx_errmsg(ctx), needle), "message should %s: %s", what, gs_ctx_errmsg(ctx));
}

Test(cuda, gs_cuda_lib_nonexistent_path) {
    const char *path = "/nonexistent/gensor-test/libcuda.so.1";
    gs_ctx *ctx = gs_ctx_create();
    expect_missing_with_lib(ctx, path, path, "name the path");
    gs_ctx_destroy(ctx);
}

Test(cuda, gs_cuda_lib_not_a_driver) {
    /* libm loads fine but has none of the driver's entry points. */
    gs_ctx *ctx = gs_ctx_create();
    expect_missing_with_lib(ctx, "libm.so.6", "symbol cuInit not found", "name the missing symbol");
    cr_assert(strstr(gs_ctx_errmsg(ctx), "libm.so.6"), "%s", gs_ctx_errmsg(ctx));
    /* Switching back to another path in the same process is honoured. */
    expect_missing_with_lib(ctx, "/nonexistent/libcuda.so.1", "/nonexistent/libcuda.so.1", "name the new path");
    gs_ctx_destroy(ctx);
}

/* The toolkit ships a stub libcuda.so for linking: every symbol exists and
 * every call fails with CUDA_ERROR_STUB_LIBRARY, so cuInit is what fails. */
Test(cuda, gs_cuda_lib_stub_driver) {
    const char *home = getenv("CUDA_HOME");
    char path[512];
    snprintf(path, sizeof path, "%s/lib64/stubs/libcuda.so",
             home && *home ? home : "/usr/local/cuda");
    if (access(path, R_OK) != 0)
        cr_skip_test("no CUDA stub driver at %s (toolkit not installed)", path);
    gs_ctx *ctx = gs_ctx_create();
    expect_missing_with_lib(ctx, path, "cuInit failed: CUDA_ERROR_STUB_LIBRARY (34)", "name cuInit and its error");
    gs_ctx_destroy(ctx);
}

/* ---- with a device ---------------------------------------------------------- */

/* c[i] = alpha*a[i] + b[i] + (big - 2^40): small integers and halves only,
 * so the result is exact with or without fma contraction; the long argument
 * only contributes 3 if all 64 bits arrive. */
static const char vadd_cu[] =
    "extern \"C\" __global__ void gs_cu_vadd(const float *a, const float *b, float *c,\n"
    "                                        float alpha, int n, long long big) {\n"
    "    int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
    "    if (i < n) c[i] = alpha * a[i] + b[i] + (float)(big - (1LL << 40));\n"
    "}\n";

/* The same kernel as PTX ISA 6.0 for sm_50 (what nvcc 13 emits for it, with
 * the version lowered), so any driver since CUDA 10 JIT-compiles it for any
 * GPU without NVRTC. Checked with ptxas -arch=sm_75 and sm_90. */
static const char vadd_ptx[] =
    ".version 6.0\n"
    ".target sm_50\n"
    ".address_size 64\n"
    ".visible .entry gs_ptx_vadd(\n"
    "\t.param .u64 gs_ptx_vadd_param_0,\n"
    "\t.param .u64 gs_ptx_vadd_param_1,\n"
    "\t.param .u64 gs_ptx_vadd_param_2,\n"
    "\t.param .f32 gs_ptx_vadd_param_3,\n"
    "\t.param .u32 gs_ptx_vadd_param_4,\n"
    "\t.param .u64 gs_ptx_vadd_param_5\n"
    ")\n"
    "{\n"
    "\t.reg .pred %p<2>;\n"
    "\t.reg .f32 %f<7>;\n"
    "\t.reg .b32 %r<6>;\n"
    "\t.reg .b64 %rd<13>;\n"
    "\tld.param.u64 %rd1, [gs_ptx_vadd_param_0];\n"
    "\tld.param.u64 %rd2, [gs_ptx_vadd_param_1];\n"
    "\tld.param.u64 %rd3, [gs_ptx_vadd_param_2];\n"
    "\tld.param.f32 %f1, [gs_ptx_vadd_param_3];\n"
    "\tld.param.u32 %r2, [gs_ptx_vadd_param_4];\n"
    "\tld.param.u64 %rd4, [gs_ptx_vadd_param_5];\n"
    "\tmov.u32 %r3, %ctaid.x;\n"
    "\tmov.u32 %r4, %ntid.x;\n"
    "\tmov.u32 %r5, %tid.x;\n"
    "\tmad.lo.s32 %r1, %r3, %r4, %r5;\n"
    "\tsetp.ge.s32 %p1, %r1, %r2;\n"
    "\t@%p1 bra $L__BB0_2;\n"
    "\tcvta.to.global.u64 %rd5, %rd1;\n"
    "\tmul.wide.s32 %rd6, %r1, 4;\n"
    "\tadd.s64 %rd7, %rd5, %rd6;\n"
    "\tld.global.f32 %f2, [%rd7];\n"
    "\tcvta.to.global.u64 %rd8, %rd2;\n"
    "\tadd.s64 %rd9, %rd8, %rd6;\n"
    "\tld.global.f32 %f3, [%rd9];\n"
    "\tfma.rn.f32 %f4, %f2, %f1, %f3;\n"
    "\tadd.s64 %rd10, %rd4, -1099511627776;\n"
    "\tcvt.rn.f32.s64 %f5, %rd10;\n"
    "\tadd.f32 %f6, %f4, %f5;\n"
    "\tcvta.to.global.u64 %rd11, %rd3;\n"
    "\tadd.s64 %rd12, %rd11, %rd6;\n"
    "\tst.global.f32 [%rd12], %f6;\n"
    "$L__BB0_2:\n"
    "\tret;\n"
    "}\n";

/* Run the vadd kernel of module m on n elements (grid rounded up) and check
 * every element exactly; the untouched tail of c must stay zero. */
static void run_vadd(const cu_fix *f, gs_cuda_mod *m, int n, size_t block) {
    gs_ctx *ctx = f->ctx;
    gs_cuda *cu = f->cu;
    float *a = malloc((size_t)n * sizeof *a), *b = malloc((size_t)n * sizeof *b);
    float *c = malloc((size_t)(n + 7) * sizeof *c);
    cr_assert(a && b && c);
    for (int i = 0; i < n; i++) {
        a[i] = (float)(i % 97) - 40.0f;
        b[i] = (float)(i % 13) * 0.5f;
    }
    gs_cuda_buf *ba = NULL, *bb = NULL, *bc = NULL;
    cr_assert_eq(gs_cuda_buf_create(ctx, cu, (size_t)n * sizeof *a, a, &ba), GS_OK, "%s",
                 gs_ctx_errmsg(ctx));
    cr_assert_eq(gs_cuda_buf_create(ctx, cu, (size_t)n * sizeof *b, b, &bb), GS_OK, "%s",
                 gs_ctx_errmsg(ctx));
    cr_assert_eq(gs_cuda_buf_create(ctx, cu, (size_t)(n + 7) * sizeof *c, NULL, &bc), GS_OK,
                 "%s", gs_ctx_errmsg(ctx));
    const float alpha = 2.0f;
    const int64_t big = (1LL << 40) + 3;
    gs_karg args[6] = {karg_buf(ba),      karg_buf(bb), karg_buf(bc),
                       karg_float(alpha), karg_int(n),  karg_long(big)};
    size_t grid = ((size_t)n + block - 1) / block;
    double t = -1.0;
    cr_assert_eq(gs_cuda_launch(ctx, cu, m, args, 6, grid, block, &t), GS_OK, "%s",
                 gs_ctx_errmsg(ctx));
    cr_assert(t >= 0.0 && t < 10.0, "elapsed %g s", t);
    memset(c, 0xff, (size_t)(n + 7) * sizeof *c);
    cr_assert_eq(gs_cuda_buf_read(ctx, cu, bc, c, (size_t)(n + 7) * sizeof *c), GS_OK, "%s",
                 gs_ctx_errmsg(ctx));
    int bad = -1, nbad = 0;
    for (int i = 0; i < n; i++)
        if (c[i] != alpha * a[i] + b[i] + 3.0f) {
            if (bad < 0) bad = i;
            nbad++;
        }
    cr_assert_eq(nbad, 0, "%d of %d wrong; first c[%d] = %.9g, want %.9g", nbad, n, bad,
                 bad < 0 ? 0.0 : (double)c[bad],
                 bad < 0 ? 0.0 : (double)(alpha * a[bad] + b[bad] + 3.0f));
    for (int i = n; i < n + 7; i++) cr_assert_eq(c[i], 0.0f, "tail c[%d] = %g", i, (double)c[i]);
    /* Reading more than the buffer holds is refused. */
    cr_assert_eq(gs_cuda_buf_read(ctx, cu, bc, c, (size_t)(n + 8) * sizeof *c), GS_ERR_INVALID_ARG);
    /* And a launch without the timing pointer works too. */
    cr_assert_eq(gs_cuda_launch(ctx, cu, m, args, 6, grid, block, NULL), GS_OK, "%s",
                 gs_ctx_errmsg(ctx));
    gs_cuda_buf_free(ba);
    gs_cuda_buf_free(bb);
    gs_cuda_buf_free(bc);
    free(a);
    free(b);
    free(c);
}

Test(cuda, device_profile_validates) {
    cu_fix f;
    cu_setup(&f);
    const gs_hw *hw = &f.hw;
    cr_assert_gt(strlen(gs_cuda_device_name(f.cu)), 0);
    cr_assert_eq(gs_hw_validate(f.ctx, hw), GS_OK, "%s", gs_ctx_errmsg(f.ctx));
    cr_assert(strncmp(hw->name, "auto-", 5) == 0, "name %s", hw->name);
    cr_assert(hw->sm >= 30 && hw->num_sms > 0 && hw->clock_mhz > 0 && hw->dram_gbs > 0);
    cr_assert_eq(hw->smem_per_block, 48 * 1024, "smem_per_block %lld", (long long)hw->smem_per_block);
    cr_assert_eq(hw->warp_size, 32);
    char *d = gs_hw_describe(hw);
    cr_log_info("%s: %s", gs_cuda_device_name(f.cu), d ? d : "");
    free(d);
    cu_teardown(&f);
}

/* NVRTC cubin for the device's own arch, loaded, launched and read back. */
Test(cuda, vector_add_cubin_from_nvrtc) {
    cu_fix f;
    cu_setup(&f);
    gs_ctx *ctx = f.ctx;
    gs_cuda *cu = f.cu;
    gs_nvrtc_out o;
    compile_for_device(&f, vadd_cu, "vadd.cu", &o);
    gs_cuda_mod *m = NULL;
    cr_assert_eq(gs_cuda_load(ctx, cu, o.cubin, "gs_cu_vadd", 0, &m), GS_OK, "%s",
                 gs_ctx_errmsg(ctx));
    run_vadd(&f, m, 1000003, 256);
    run_vadd(&f, m, 1, 32);
    /* A block over the device limit is refused before the driver sees it. */
    gs_karg none[1] = {karg_int(0)};
    cr_assert_eq(gs_cuda_launch(ctx, cu, m, none, 1, 1, (size_t)f.hw.max_threads_per_block + 1, NULL),
                 GS_ERR_INVALID_ARG);
    /* A NULL buffer argument too. */
    gs_karg nullbuf[1] = {karg_buf(NULL)};
    cr_assert_eq(gs_cuda_launch(ctx, cu, m, nullbuf, 1, 1, 32, NULL), GS_ERR_INVALID_ARG);
    /* An unknown kernel name is a driver error naming the call. */
    gs_cuda_mod *bad = NULL;
    cr_assert_eq(gs_cuda_load(ctx, cu, o.cubin, "no_such_kernel", 0, &bad), GS_ERR_CUDA);
    cr_assert_null(bad);
    cr_assert(strstr(gs_ctx_errmsg(ctx), "cuModuleGetFunction"), "%s", gs_ctx_errmsg(ctx));
    gs_cuda_unload(m);
    gs_nvrtc_out_free(&o);
    cu_teardown(&f);
}

/* Hand-written PTX, JIT-compiled by the driver: needs no NVRTC. */
Test(cuda, vector_add_ptx_jit) {
    cu_fix f;
    cu_setup(&f);
    gs_cuda_mod *m = NULL;
    cr_assert_eq(gs_cuda_load(f.ctx, f.cu, vadd_ptx, "gs_ptx_vadd", 0, &m), GS_OK, "%s", gs_ctx_errmsg(f.ctx));
    run_vadd(&f, m, 4099, 128);
    gs_cuda_unload(m);
    /* Garbage is a GS_ERR_CUDA naming cuModuleLoadData, not a crash. */
    cr_assert_eq(gs_cuda_load(f.ctx, f.cu, "this is not PTX", "k", 0, &m), GS_ERR_CUDA);
    cr_assert_null(m);
    cr_assert(strstr(gs_ctx_errmsg(f.ctx), "cuModuleLoadData"), "%s", gs_ctx_errmsg(f.ctx));
    cu_teardown(&f);
}

/* More than 48 KiB of shared memory needs the opt-in attribute. The kernel
 * reverses each block's slice through 64 KiB of dynamic shared memory. */
static const char bigsmem_cu[] =
    "extern \"C\" __global__ void gs_cu_bigsmem(const float *x, float *y) {\n"
    "    extern __shared__ float s[];\n"
    "    const int per = 16384; /* 64 KiB of floats per block */\n"
    "    const float *xb = x + (long long)blockIdx.x * per;\n"
    "    float *yb = y + (long long)blockIdx.x * per;\n"
    "    for (int i = threadIdx.x; i < per; i += blockDim.x) s[i] = xb[i];\n"
    "    __syncthreads();\n"
    "    for (int i = threadIdx.x; i < per; i += blockDim.x) yb[i] = s[per - 1 - i];\n"
    "}\n";

Test(cuda, dynamic_smem_above_48k_opt_in) {
    cu_fix f;
    cu_setup(&f);
    gs_ctx *ctx = f.ctx;
    gs_cuda *cu = f.cu;
    const int64_t smem = 64 * 1024;
    if (f.hw.smem_per_block_optin < smem)
        cr_skip_test("%s allows only %lld bytes of shared memory per block", f.hw.name,
                     (long long)f.hw.smem_per_block_optin);
    gs_nvrtc_out o;
    compile_for_device(&f, bigsmem_cu, "big.cu", &o);
    gs_cuda_mod *m = NULL;
    cr_assert_eq(gs_cuda_load(ctx, cu, o.cubin, "gs_cu_bigsmem", smem, &m), GS_OK, "%s",
                 gs_ctx_errmsg(ctx));
    const int blocks = 5, per = 16384, n = blocks * per;
    float *x = malloc((size_t)n * sizeof *x), *y = malloc((size_t)n * sizeof *y);
    cr_assert(x && y);
    for (int i = 0; i < n; i++) x[i] = (float)i;
    gs_cuda_buf *bx = NULL, *by = NULL;
    cr_assert_eq(gs_cuda_buf_create(ctx, cu, (size_t)n * sizeof *x, x, &bx), GS_OK, "%s",
                 gs_ctx_errmsg(ctx));
    cr_assert_eq(gs_cuda_buf_create(ctx, cu, (size_t)n * sizeof *y, NULL, &by), GS_OK, "%s",
                 gs_ctx_errmsg(ctx));
    gs_karg args[2] = {karg_buf(bx), karg_buf(by)};
    cr_assert_eq(gs_cuda_launch(ctx, cu, m, args, 2, (size_t)blocks, 256, NULL), GS_OK, "%s",
                 gs_ctx_errmsg(ctx));
    cr_assert_eq(gs_cuda_buf_read(ctx, cu, by, y, (size_t)n * sizeof *y), GS_OK, "%s",
                 gs_ctx_errmsg(ctx));
    int bad = -1, nbad = 0;
    for (int bI = 0; bI < blocks; bI++)
        for (int i = 0; i < per; i++)
            if (y[bI * per + i] != (float)(bI * per + per - 1 - i)) {
                if (bad < 0) bad = bI * per + i;
                nbad++;
            }
    cr_assert_eq(nbad, 0, "%d of %d wrong; first y[%d] = %g", nbad, n, bad,
                 bad < 0 ? 0.0 : (double)y[bad]);
    gs_cuda_buf_free(bx);
    gs_cuda_buf_free(by);
    free(x);
    free(y);
    gs_cuda_unload(m);
    gs_nvrtc_out_free(&o);
    cu_teardown(&f);
}
