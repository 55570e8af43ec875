/* cuda_host.c — see cuda_host.h. */
#include "experiments/cuda_host.h"

#include <dlfcn.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <gsl/gsl_sort.h>
#include <gsl/gsl_statistics_double.h>

ch_api CH;

/* Every entry point of CH, with the library it comes from; a second name is
 * the older fallback. */
enum { CH_BLAS, CH_DRIVER };
static const struct {
    int lib;
    gs_dlsym_entry e;
} ch_syms[] = {
    {CH_BLAS, {offsetof(ch_api, Create), "cublasCreate_v2", NULL}},
    {CH_BLAS, {offsetof(ch_api, Destroy), "cublasDestroy_v2", NULL}},
    {CH_BLAS, {offsetof(ch_api, SetMathMode), "cublasSetMathMode", NULL}},
    {CH_BLAS, {offsetof(ch_api, GetVersion), "cublasGetVersion_v2", NULL}},
    {CH_BLAS, {offsetof(ch_api, Sgemm), "cublasSgemm_v2", NULL}},
    {CH_BLAS, {offsetof(ch_api, SgemmStridedBatched), "cublasSgemmStridedBatched", NULL}},
    {CH_BLAS, {offsetof(ch_api, Sgemv), "cublasSgemv_v2", NULL}},
    {CH_BLAS, {offsetof(ch_api, GemmEx), "cublasGemmEx", NULL}},
    {CH_BLAS, {offsetof(ch_api, GemmStridedBatchedEx), "cublasGemmStridedBatchedEx", NULL}},
    {CH_DRIVER, {offsetof(ch_api, Init), "cuInit", NULL}},
    {CH_DRIVER, {offsetof(ch_api, DeviceGet), "cuDeviceGet", NULL}},
    {CH_DRIVER, {offsetof(ch_api, PrimaryCtxRetain), "cuDevicePrimaryCtxRetain", NULL}},
    {CH_DRIVER, {offsetof(ch_api, PrimaryCtxRelease), "cuDevicePrimaryCtxRelease_v2", "cuDevicePrimaryCtxRelease"}},
    {CH_DRIVER, {offsetof(ch_api, CtxSetCurrent), "cuCtxSetCurrent", NULL}},
    {CH_DRIVER, {offsetof(ch_api, CtxSynchronize), "cuCtxSynchronize", NULL}},
    {CH_DRIVER, {offsetof(ch_api, MemAlloc), "cuMemAlloc_v2", NULL}},
    {CH_DRIVER, {offsetof(ch_api, MemFree), "cuMemFree_v2", NULL}},
    {CH_DRIVER, {offsetof(ch_api, MemcpyHtoD), "cuMemcpyHtoD_v2", NULL}},
    {CH_DRIVER, {offsetof(ch_api, MemcpyDtoH), "cuMemcpyDtoH_v2", NULL}},
    {CH_DRIVER, {offsetof(ch_api, EventCreate), "cuEventCreate", NULL}},
    {CH_DRIVER, {offsetof(ch_api, EventRecord), "cuEventRecord", NULL}},
    {CH_DRIVER, {offsetof(ch_api, EventSynchronize), "cuEventSynchronize", NULL}},
    {CH_DRIVER, {offsetof(ch_api, EventElapsedTime), "cuEventElapsedTime_v2", "cuEventElapsedTime"}},
    {CH_DRIVER, {offsetof(ch_api, EventDestroy), "cuEventDestroy_v2", "cuEventDestroy"}},
};

/* Resolve lib's entries of ch_syms from h into CH; false with why naming the
 * first missing one. */
static bool ch_resolve(void *h, int lib, char *why, size_t n) {
    for (size_t i = 0; i < sizeof ch_syms / sizeof ch_syms[0]; i++) {
        const char *missing = NULL;
        if (ch_syms[i].lib != lib || gs_dlsym_table(h, &CH, &ch_syms[i].e, 1, &missing)) continue;
        snprintf(why, n, "symbol %s not found", missing);
        return false;
    }
    return true;
}

bool ch_load_cublas(char *why, size_t n) {
    if (CH.blas) return true;
    const char *fixed[] = {"", "libcublas.so", "libcublas.so.13", "libcublas.so.12", "",
                           "/usr/local/cuda/lib64/libcublas.so"};
    char home[512] = "";
    const char *env = getenv("GS_CUBLAS_LIB"), *ch = getenv("CUDA_HOME");
    if (ch && *ch) snprintf(home, sizeof home, "%s/lib64/libcublas.so", ch);
    fixed[4] = home;
    size_t tries = sizeof fixed / sizeof fixed[0];
    if (env && *env) {
        fixed[0] = env;
        tries = 1;
    }
    void *bl = NULL;
    for (size_t i = 0; i < tries && !bl; i++) {
        if (!fixed[i][0]) continue;
        bl = dlopen(fixed[i], RTLD_NOW | RTLD_LOCAL);
        if (bl) snprintf(CH.blas_path, sizeof CH.blas_path, "%s", fixed[i]);
    }
    if (!bl) {
        if (env && *env) snprintf(why, n, "cannot load $GS_CUBLAS_LIB: %s", dlerror());
        else
            snprintf(why, n, "cannot load libcublas.so (tried the loader path, .so.13, .so.12, $CUDA_HOME/lib64, "
                             "/usr/local/cuda/lib64): %s",
                     dlerror());
        return false;
    }
    CH.blas_fake = dlsym(bl, "gs_fake_cublas") != NULL;
    if (!ch_resolve(bl, CH_BLAS, why, n)) return false;
    CH.blas = true;
    return true;
}

bool ch_load_driver(char *why, size_t n) {
    if (CH.driver) return true;
    const char *env = getenv("GS_CUDA_LIB");
    const char *path = env && *env ? env : "libcuda.so.1";
    void *cu = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!cu) {
        snprintf(why, n, "%s: %s", path, dlerror());
        return false;
    }
    if (!ch_resolve(cu, CH_DRIVER, why, n)) return false;
    CUresult r = CH.Init(0);
    if (r == 0) r = CH.DeviceGet(&CH.dev, 0);
    if (r == 0) r = CH.PrimaryCtxRetain(&CH.ctx, CH.dev);
    if (r == 0) r = CH.CtxSetCurrent(CH.ctx);
    if (r != 0) {
        snprintf(why, n, "driver initialisation failed (CUresult %d)", (int)r);
        return false;
    }
    CH.driver = true;
    return true;
}

void ch_unload(void) {
    if (CH.driver && CH.ctx) CH.PrimaryCtxRelease(CH.dev);
    CH.ctx = NULL;
    CH.driver = false;
}

double ch_median(double *x, int n) {
    if (n < 1) return NAN;
    gsl_sort(x, 1, (size_t)n);
    return gsl_stats_median_from_sorted_data(x, 1, (size_t)n);
}

int ch_pick_arch(gs_ctx *ctx, int sm, bool *cubin) {
    int archs[64], n = 0, below = 0;
    *cubin = false;
    if (gs_nvrtc_supported_archs(ctx, archs, 64, &n) != GS_OK) return 0;
    for (int i = 0; i < n; i++) {
        if (archs[i] == sm) {
            *cubin = true;
            return sm;
        }
        if (archs[i] < sm && archs[i] > below) below = archs[i];
    }
    return below;
}

gs_status ch_kernel_emit(gs_ctx *ctx, const gs_hw *hw, const gs_op *op, const gs_etir *e, int arch,
                         gs_kernel_src *ks) {
    memset(ks, 0, sizeof *ks);
    return gs_lower_emit(ctx, hw, op, e, GS_DIALECT_CUDA, arch, ks);
}

gs_status ch_kernel_compile(gs_ctx *ctx, const gs_hw *hw, const gs_op *op, const gs_etir *e, int arch, bool cubin,
                            gs_kernel_src *ks, gs_nvrtc_out *nv) {
    memset(nv, 0, sizeof *nv);
    gs_status s = ch_kernel_emit(ctx, hw, op, e, arch, ks);
    if (s != GS_OK) return s;
    s = gs_nvrtc_compile(ctx, ks->src, ks->name, arch, !cubin, cubin, nv);
    if (s != GS_OK) {
        gs_nvrtc_out_free(nv);
        gs_kernel_src_free(ks);
    }
    return s;
}

/* ---- cuBLAS ------------------------------------------------------------------ */
bool ch_blas_supports(const gs_op *op) {
    return op->kind == GS_OPK_GEMM || op->kind == GS_OPK_BGEMM || op->kind == GS_OPK_GEMV;
}

int ch_blas_create(ch_math_t math, cublasHandle_t *h) {
    *h = NULL;
    if (!CH.blas || (!CH.driver && !CH.blas_fake)) return -1;
    if (CH.driver) CH.CtxSetCurrent(CH.ctx);
    int st = (int)CH.Create(h);
    if (st == 0) st = (int)CH.SetMathMode(*h, math);
    if (st != 0 && *h) {
        CH.Destroy(*h);
        *h = NULL;
    }
    return st;
}

#define DP(x) ((float *)(uintptr_t)(x))

ch_dtype_t ch_blas_dtype(int t) {
    return t == GS_DTYPE_F16 ? CUDA_R_16F : t == GS_DTYPE_BF16 ? CUDA_R_16BF : CUDA_R_32F;
}

ch_compute_t ch_blas_compute(const gs_op *op) {
    return op->math == GS_MATH_TF32 ? CUBLAS_COMPUTE_32F_FAST_TF32 : CUBLAS_COMPUTE_32F;
}

bool ch_blas_typed(const gs_op *op) { return gs_op_typed(op) || op->math == GS_MATH_TF32; }

#define VP(x) ((void *)(uintptr_t)(x))
/* The typed twin of the switch below: the same operand order, transposes and
 * leading dimensions through cublasGemmEx / cublasGemmStridedBatchedEx (a
 * gemv is a GEMM with one column: cuBLAS has no typed gemv with f32
 * compute). */
static int blas_run_ex(cublasHandle_t h, const gs_op *op, uint64_t a, uint64_t b, uint64_t out) {
    const gs_tensor *ta = &op->tensors[0], *tb = &op->tensors[1];
    const float alpha = op->epi.alpha, beta = op->epi.beta;
    ch_dtype_t ti = ch_blas_dtype(op->dtype_in), to = ch_blas_dtype(op->dtype_out);
    ch_compute_t ct = ch_blas_compute(op);
    if (!CH.GemmEx || !CH.GemmStridedBatchedEx) return -1;
    switch (op->kind) {
    case GS_OPK_GEMM: {
        int M = (int)op->axes[0].extent, N = (int)op->axes[1].extent, K = (int)op->axes[2].extent;
        ch_op_t opA = op->transA ? CUBLAS_OP_T : CUBLAS_OP_N, opB = op->transB ? CUBLAS_OP_T : CUBLAS_OP_N;
        return (int)CH.GemmEx(h, opB, opA, N, M, K, &alpha, VP(b), ti, (int)tb->shape[1], VP(a), ti,
                              (int)ta->shape[1], &beta, VP(out), to, N, ct, CUBLAS_GEMM_DEFAULT);
    }
    case GS_OPK_BGEMM: {
        int Bt = (int)op->axes[0].extent, M = (int)op->axes[1].extent, N = (int)op->axes[2].extent,
            K = (int)op->axes[3].extent;
        ch_op_t opA = op->transA ? CUBLAS_OP_T : CUBLAS_OP_N, opB = op->transB ? CUBLAS_OP_T : CUBLAS_OP_N;
        return (int)CH.GemmStridedBatchedEx(h, opB, opA, N, M, K, &alpha, VP(b), ti, (int)tb->shape[2],
                                            (long long)K * N, VP(a), ti, (int)ta->shape[2], (long long)M * K, &beta,
                                            VP(out), to, N, (long long)M * N, Bt, ct, CUBLAS_GEMM_DEFAULT);
    }
    case GS_OPK_GEMV: {
        /* y (M x 1, column-major) = op(A_cm) x, as in the Sgemv case below */
        int M = (int)op->axes[0].extent, N = (int)op->axes[1].extent;
        if (op->transA)
            return (int)CH.GemmEx(h, CUBLAS_OP_N, CUBLAS_OP_N, M, 1, N, &alpha, VP(a), ti, M, VP(b), ti, N, &beta,
                                  VP(out), to, M, ct, CUBLAS_GEMM_DEFAULT);
        return (int)CH.GemmEx(h, CUBLAS_OP_T, CUBLAS_OP_N, M, 1, N, &alpha, VP(a), ti, N, VP(b), ti, N, &beta,
                              VP(out), to, M, ct, CUBLAS_GEMM_DEFAULT);
    }
    default:
        return -1;
    }
}
#undef VP

int ch_blas_run(cublasHandle_t h, const gs_op *op, uint64_t a, uint64_t b, uint64_t out) {
    if (ch_blas_typed(op)) return blas_run_ex(h, op, a, b, out);
    const gs_tensor *ta = &op->tensors[0], *tb = &op->tensors[1];
    const float alpha = op->epi.alpha, beta = op->epi.beta;
    switch (op->kind) {
    case GS_OPK_GEMM: {
        /* C[M,N] row-major = column-major C^T[N,M] = op(B)^T op(A)^T; each
         * leading dimension is the stored row length. */
        int M = (int)op->axes[0].extent, N = (int)op->axes[1].extent, K = (int)op->axes[2].extent;
        ch_op_t opA = op->transA ? CUBLAS_OP_T : CUBLAS_OP_N, opB = op->transB ? CUBLAS_OP_T : CUBLAS_OP_N;
        return (int)CH.Sgemm(h, opB, opA, N, M, K, &alpha, DP(b), (int)tb->shape[1], DP(a), (int)ta->shape[1], &beta,
                             DP(out), N);
    }
    case GS_OPK_BGEMM: {
        /* The same per batch; batches are dense and consecutive. */
        int Bt = (int)op->axes[0].extent, M = (int)op->axes[1].extent, N = (int)op->axes[2].extent,
            K = (int)op->axes[3].extent;
        ch_op_t opA = op->transA ? CUBLAS_OP_T : CUBLAS_OP_N, opB = op->transB ? CUBLAS_OP_T : CUBLAS_OP_N;
        return (int)CH.SgemmStridedBatched(h, opB, opA, N, M, K, &alpha, DP(b), (int)tb->shape[2],
                                           (long long)K * N, DP(a), (int)ta->shape[2], (long long)M * K, &beta,
                                           DP(out), N, (long long)M * N, Bt);
    }
    case GS_OPK_GEMV: {
        /* y[M] = A x. A stored [M,N] row-major is column-major N x M (lda N):
         * y = (A_cm)^T x, OP_T with m = N, n = M. Stored [N,M] (transA) it
         * is column-major M x N (lda M): y = A_cm x, OP_N with m = M, n = N. */
        int M = (int)op->axes[0].extent, N = (int)op->axes[1].extent;
        if (op->transA)
            return (int)CH.Sgemv(h, CUBLAS_OP_N, M, N, &alpha, DP(a), M, DP(b), 1, &beta, DP(out), 1);
        return (int)CH.Sgemv(h, CUBLAS_OP_T, N, M, &alpha, DP(a), N, DP(b), 1, &beta, DP(out), 1);
    }
    default:
        return -1;
    }
}
#undef DP

/* ---- timing ------------------------------------------------------------------ */
static double wall_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + 1e-6 * (double)ts.tv_nsec;
}

int ch_time_median(ch_timed_fn fn, void *state, int min_runs, int max_runs, double target_ms, double *median_ms,
                   int *runs) {
    *median_ms = NAN;
    *runs = 0;
    if (max_runs < 1) return 0;
    double *t = malloc((size_t)max_runs * sizeof *t);
    if (!t) return -1;
    int n = 0, rc = 0;
    double start = wall_ms();
    while (n < max_runs && (n < min_runs || wall_ms() - start < target_ms)) {
        double ms = 0;
        if ((rc = fn(state, &ms)) != 0) break;
        t[n++] = ms;
    }
    if (rc == 0) {
        *median_ms = ch_median(t, n);
        *runs = n;
    }
    free(t);
    return rc;
}

int ch_blas_timed(void *state, double *ms) {
    ch_blas_call *c = state;
    CUevent e0 = NULL, e1 = NULL;
    float f = 0;
    int rc = (int)CH.EventCreate(&e0, 0);
    if (rc == 0) rc = (int)CH.EventCreate(&e1, 0);
    if (rc == 0) rc = (int)CH.EventRecord(e0, NULL);
    if (rc == 0) rc = ch_blas_run(c->h, c->op, c->a, c->b, c->out);
    if (rc == 0) rc = (int)CH.EventRecord(e1, NULL);
    if (rc == 0) rc = (int)CH.EventSynchronize(e1);
    if (rc == 0) rc = (int)CH.EventElapsedTime(&f, e0, e1);
    if (e0) CH.EventDestroy(e0);
    if (e1) CH.EventDestroy(e1);
    *ms = f;
    return rc;
}

int ch_launch_timed(void *state, double *ms) {
    ch_launch *l = state;
    double s = 0;
    gs_status st = gs_cuda_launch(l->ctx, l->cu, l->mod, l->args, l->nargs, l->grid, l->block, &s);
    *ms = s * 1e3;
    return (int)st;
}

#ifdef CH_CHECK_HEADERS
/* Every hand-written declaration against the toolkit's headers. */
#define SAME(field, fn) _Static_assert(__builtin_types_compatible_p(__typeof__(CH.field), __typeof__(&fn)), #fn)
SAME(Init, cuInit);
SAME(DeviceGet, cuDeviceGet);
SAME(PrimaryCtxRetain, cuDevicePrimaryCtxRetain);
SAME(PrimaryCtxRelease, cuDevicePrimaryCtxRelease_v2);
SAME(CtxSetCurrent, cuCtxSetCurrent);
SAME(CtxSynchronize, cuCtxSynchronize);
SAME(MemAlloc, cuMemAlloc_v2);
SAME(MemFree, cuMemFree_v2);
SAME(MemcpyHtoD, cuMemcpyHtoD_v2);
SAME(MemcpyDtoH, cuMemcpyDtoH_v2);
SAME(EventCreate, cuEventCreate);
SAME(EventRecord, cuEventRecord);
SAME(EventSynchronize, cuEventSynchronize);
SAME(EventElapsedTime, cuEventElapsedTime_v2);
SAME(EventDestroy, cuEventDestroy_v2);
SAME(Create, cublasCreate_v2);
SAME(Destroy, cublasDestroy_v2);
SAME(SetMathMode, cublasSetMathMode);
SAME(GetVersion, cublasGetVersion_v2);
SAME(Sgemm, cublasSgemm_v2);
SAME(SgemmStridedBatched, cublasSgemmStridedBatched);
SAME(Sgemv, cublasSgemv_v2);
SAME(GemmEx, cublasGemmEx);
SAME(GemmStridedBatchedEx, cublasGemmStridedBatchedEx);
#undef SAME
_Static_assert(CUDA_R_32F == 0 && CUDA_R_16F == 2 && CUDA_R_16BF == 14, "cudaDataType");
_Static_assert(CUBLAS_COMPUTE_32F == 68 && CUBLAS_COMPUTE_32F_FAST_TF32 == 77, "cublasComputeType_t");
_Static_assert(CUBLAS_GEMM_DEFAULT == -1, "cublasGemmAlgo_t");
_Static_assert(CUBLAS_OP_N == 0 && CUBLAS_OP_T == 1, "cublasOperation_t");
_Static_assert(CUBLAS_DEFAULT_MATH == 0 && CUBLAS_PEDANTIC_MATH == 2, "cublasMath_t");
_Static_assert(sizeof(CUdeviceptr) == 8, "64-bit CUdeviceptr");
#endif
