/* fake_cublas.c — a test double of the cuBLAS entry points that
 * experiments/cuda_host.c resolves: column-major reference BLAS on host
 * memory (a "device pointer" is a host address). tests/bench_gpu_dry.sh
 * builds it as a shared library and runs `bench_gpu --self-test` with
 * GS_CUBLAS_LIB pointing at it, which checks ch_blas_run's row-major to
 * column-major mapping (operand order, transposes, leading dimensions,
 * batch strides) against the IR interpreter without a GPU.
 *
 * Written from the BLAS definitions (netlib SGEMM / SGEMV, and cuBLAS's
 * strided-batched GEMM: matrix b at A + b*strideA), including their
 * argument checks, not from cuda_host.c. Returns 7
 * (CUBLAS_STATUS_INVALID_VALUE) where real cuBLAS would. */
#include <stddef.h>

/* The marker cuda_host.c looks for: never hand this library device memory. */
int gs_fake_cublas = 1;

struct cublasContext {
    int math;
};
typedef struct cublasContext *cublasHandle_t;
static struct cublasContext the_handle;

enum { OK = 0, INVALID_VALUE = 7, OP_N = 0, OP_T = 1 };

int cublasCreate_v2(cublasHandle_t *h) {
    *h = &the_handle;
    return OK;
}
int cublasDestroy_v2(cublasHandle_t h) { return h == &the_handle ? OK : INVALID_VALUE; }
int cublasSetMathMode(cublasHandle_t h, int mode) {
    if (mode != 0 && mode != 2) return INVALID_VALUE; /* the test accepts default and pedantic only */
    h->math = mode;
    return OK;
}
int cublasGetVersion_v2(cublasHandle_t h, int *v) {
    (void)h;
    *v = 0;
    return OK;
}

static int max1(int a) { return a > 1 ? a : 1; }

/* Element (i, j) of op(X) for X column-major with leading dimension ld. */
static float opx(const float *X, int ld, int trans, int i, int j) {
    return trans == OP_T ? X[(size_t)j + (size_t)i * (size_t)ld] : X[(size_t)i + (size_t)j * (size_t)ld];
}

/* C (m x n) = alpha op(A) (m x k) op(B) (k x n) + beta C. */
static int gemm(int ta, int tb, int m, int n, int k, float alpha, const float *A, int lda, const float *B, int ldb,
                float beta, float *C, int ldc) {
    if ((ta != OP_N && ta != OP_T) || (tb != OP_N && tb != OP_T) || m < 0 || n < 0 || k < 0) return INVALID_VALUE;
    if (lda < max1(ta == OP_N ? m : k) || ldb < max1(tb == OP_N ? k : n) || ldc < max1(m)) return INVALID_VALUE;
    for (int j = 0; j < n; j++)
        for (int i = 0; i < m; i++) {
            double s = 0;
            for (int l = 0; l < k; l++) s += (double)opx(A, lda, ta, i, l) * (double)opx(B, ldb, tb, l, j);
            float *c = &C[(size_t)i + (size_t)j * (size_t)ldc];
            *c = (float)(alpha * s + (beta == 0.0f ? 0.0 : (double)beta * (double)*c));
        }
    return OK;
}

int cublasSgemm_v2(cublasHandle_t h, int ta, int tb, int m, int n, int k, const float *alpha, const float *A, int lda,
                   const float *B, int ldb, const float *beta, float *C, int ldc) {
    if (h != &the_handle) return INVALID_VALUE;
    return gemm(ta, tb, m, n, k, *alpha, A, lda, B, ldb, *beta, C, ldc);
}

int cublasSgemmStridedBatched(cublasHandle_t h, int ta, int tb, int m, int n, int k, const float *alpha,
                              const float *A, int lda, long long sA, const float *B, int ldb, long long sB,
                              const float *beta, float *C, int ldc, long long sC, int batch) {
    if (h != &the_handle || batch < 0) return INVALID_VALUE;
    for (int b = 0; b < batch; b++) {
        int st = gemm(ta, tb, m, n, k, *alpha, A + b * sA, lda, B + b * sB, ldb, *beta, C + b * sC, ldc);
        if (st != OK) return st;
    }
    return OK;
}

/* y = alpha op(A) x + beta y, A column-major m x n. */
int cublasSgemv_v2(cublasHandle_t h, int trans, int m, int n, const float *alpha, const float *A, int lda,
                   const float *x, int incx, const float *beta, float *y, int incy) {
    if (h != &the_handle || (trans != OP_N && trans != OP_T) || m < 0 || n < 0 || lda < max1(m) || incx == 0 ||
        incy == 0)
        return INVALID_VALUE;
    if (incx != 1 || incy != 1) return INVALID_VALUE; /* the test double covers unit strides only */
    int ny = trans == OP_N ? m : n, nx = trans == OP_N ? n : m;
    for (int i = 0; i < ny; i++) {
        double s = 0;
        for (int l = 0; l < nx; l++) s += (double)opx(A, lda, trans, i, l) * (double)x[l];
        y[i] = (float)(*alpha * s + (*beta == 0.0f ? 0.0 : (double)*beta * (double)y[i]));
    }
    return OK;
}

/* ---- the typed entry points (cublasGemmEx, cublasGemmStridedBatchedEx) ----
 * Matrices of cudaDataType CUDA_R_32F (0), CUDA_R_16F (2) or CUDA_R_16BF
 * (14); compute CUBLAS_COMPUTE_32F (68) or CUBLAS_COMPUTE_32F_FAST_TF32 (77,
 * f32 matrices only here: each input rounded to 10 mantissa bits, to nearest
 * with ties away, before a double accumulation). Each call appends a line
 * "<entry> A=<type> B=<type> C=<type> compute=<type>" to $GS_FAKE_CUBLAS_LOG
 * when set, so a test can see which types the caller asked for. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { R_32F = 0, R_16F = 2, R_16BF = 14, COMPUTE_32F = 68, COMPUTE_TF32 = 77 };

static int type_bytes(int t) { return t == R_32F ? 4 : t == R_16F || t == R_16BF ? 2 : 0; }

static float bits_f(uint32_t u) {
    float f;
    memcpy(&f, &u, 4);
    return f;
}
static uint32_t f_bits(float f) {
    uint32_t u;
    memcpy(&u, &f, 4);
    return u;
}

static float load(const void *base, int t, size_t i) {
    if (t == R_32F) return ((const float *)base)[i];
    uint16_t h = ((const uint16_t *)base)[i];
    if (t == R_16BF) return bits_f((uint32_t)h << 16);
    _Float16 x;
    memcpy(&x, &h, 2);
    return (float)x;
}

static void store(void *base, int t, size_t i, double v) {
    float f = (float)v;
    if (t == R_32F) {
        ((float *)base)[i] = f;
    } else if (t == R_16F) {
        _Float16 x = (_Float16)f; /* round to nearest even */
        memcpy(&((uint16_t *)base)[i], &x, 2);
    } else {
        uint32_t u = f_bits(f);
        if ((u & 0x7fffffffu) > 0x7f800000u) u |= 0x00400000u; /* quiet NaN */
        else u += 0x7fffu + ((u >> 16) & 1u);                  /* nearest even */
        ((uint16_t *)base)[i] = (uint16_t)(u >> 16);
    }
}

static float tf32(float x) {
    uint32_t u = f_bits(x);
    if ((u & 0x7f800000u) == 0x7f800000u) return x;
    return bits_f((u + 0x1000u) & 0xffffe000u);
}

static void trace(const char *entry, int at, int bt, int ct, int comp) {
    const char *p = getenv("GS_FAKE_CUBLAS_LOG");
    FILE *f = p && *p ? fopen(p, "a") : NULL;
    if (!f) return;
    fprintf(f, "%s A=%d B=%d C=%d compute=%d\n", entry, at, bt, ct, comp);
    fclose(f);
}

static float opx_t(const void *X, int t, int ld, int trans, int i, int j, int round_tf32) {
    float v = trans == OP_T ? load(X, t, (size_t)j + (size_t)i * (size_t)ld) : load(X, t, (size_t)i + (size_t)j * (size_t)ld);
    return round_tf32 ? tf32(v) : v;
}

static int gemm_ex(int ta, int tb, int m, int n, int k, float alpha, const void *A, int at, int lda, const void *B,
                   int bt, int ldb, float beta, void *C, int ct, int ldc, int comp) {
    if ((ta != OP_N && ta != OP_T) || (tb != OP_N && tb != OP_T) || m < 0 || n < 0 || k < 0) return INVALID_VALUE;
    if (lda < max1(ta == OP_N ? m : k) || ldb < max1(tb == OP_N ? k : n) || ldc < max1(m)) return INVALID_VALUE;
    if (!type_bytes(at) || at != bt || !type_bytes(ct)) return INVALID_VALUE;
    if (comp != COMPUTE_32F && comp != COMPUTE_TF32) return INVALID_VALUE;
    if (comp == COMPUTE_TF32 && at != R_32F) return INVALID_VALUE;
    int r = comp == COMPUTE_TF32;
    for (int j = 0; j < n; j++)
        for (int i = 0; i < m; i++) {
            double s = 0;
            for (int l = 0; l < k; l++) s += (double)opx_t(A, at, lda, ta, i, l, r) * (double)opx_t(B, bt, ldb, tb, l, j, r);
            size_t o = (size_t)i + (size_t)j * (size_t)ldc;
            store(C, ct, o, alpha * s + (beta == 0.0f ? 0.0 : (double)beta * (double)load(C, ct, o)));
        }
    return OK;
}

int cublasGemmEx(cublasHandle_t h, int ta, int tb, int m, int n, int k, const void *alpha, const void *A, int at,
                 int lda, const void *B, int bt, int ldb, const void *beta, void *C, int ct, int ldc, int comp,
                 int algo) {
    (void)algo;
    trace("GemmEx", at, bt, ct, comp);
    if (h != &the_handle) return INVALID_VALUE;
    return gemm_ex(ta, tb, m, n, k, *(const float *)alpha, A, at, lda, B, bt, ldb, *(const float *)beta, C, ct, ldc,
                   comp);
}

int cublasGemmStridedBatchedEx(cublasHandle_t h, int ta, int tb, int m, int n, int k, const void *alpha,
                               const void *A, int at, int lda, long long sA, const void *B, int bt, int ldb,
                               long long sB, const void *beta, void *C, int ct, int ldc, long long sC, int batch,
                               int comp, int algo) {
    (void)algo;
    trace("GemmStridedBatchedEx", at, bt, ct, comp);
    if (h != &the_handle || batch < 0 || !type_bytes(at) || !type_bytes(bt) || !type_bytes(ct)) return INVALID_VALUE;
    for (int b = 0; b < batch; b++) {
        int st = gemm_ex(ta, tb, m, n, k, *(const float *)alpha, (const char *)A + b * sA * type_bytes(at), at, lda,
                         (const char *)B + b * sB * type_bytes(bt), bt, ldb, *(const float *)beta,
                         (char *)C + b * sC * type_bytes(ct), ct, ldc, comp);
        if (st != OK) return st;
    }
    return OK;
}
