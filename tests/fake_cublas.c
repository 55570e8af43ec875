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
