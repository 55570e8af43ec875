/* cuda_host.h — host-side helpers shared by the GPU experiments
 * (cublas_check.c, bench_gpu.c): the few CUDA driver and cuBLAS entry points
 * they need, loaded with dlopen and declared by hand (no cuda.h, no
 * cublas_v2.h, so the programs build on machines without a GPU), cuBLAS
 * calls for gensor's row-major gemm / bgemm / gemv, the timing loop, the
 * arch choice and the one place that emits a kernel.
 *
 * The driver calls run in the device's primary context, the context
 * gs_cuda (kernels/runtime/cuda.c) uses too, so cuBLAS works on gs_cuda buffers
 * (gs_cuda_buf_devptr) and both sides run on the legacy default stream.
 *
 * tests/bench_gpu_dry.sh compiles cuda_host.c once more with the toolkit's
 * own headers (-DCH_CHECK_HEADERS) and checks every declaration and enum
 * value below against them. */
#ifndef GS_CUDA_HOST_H
#define GS_CUDA_HOST_H

#include "construct/construct.h"
#include "kernels/service/service.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef CH_CHECK_HEADERS
#include <cublas_v2.h>
#include <cuda.h>
typedef cublasOperation_t ch_op_t;
typedef cublasMath_t ch_math_t;
typedef cudaDataType ch_dtype_t;
typedef cublasComputeType_t ch_compute_t;
typedef cublasGemmAlgo_t ch_algo_t;
#else
typedef int CUresult;
typedef int CUdevice;
typedef struct CUctx_st *CUcontext;
typedef unsigned long long CUdeviceptr;
typedef struct CUevent_st *CUevent;
typedef struct CUstream_st *CUstream;
typedef int cublasStatus_t;
typedef struct cublasContext *cublasHandle_t;
typedef int ch_op_t;   /* cublasOperation_t */
typedef int ch_math_t; /* cublasMath_t */
enum { CUBLAS_OP_N = 0, CUBLAS_OP_T = 1 };
enum { CUBLAS_DEFAULT_MATH = 0, CUBLAS_PEDANTIC_MATH = 2 };
typedef int ch_dtype_t;   /* cudaDataType (library_types.h) */
typedef int ch_compute_t; /* cublasComputeType_t */
typedef int ch_algo_t;    /* cublasGemmAlgo_t */
enum { CUDA_R_32F = 0, CUDA_R_16F = 2, CUDA_R_16BF = 14 };
enum { CUBLAS_COMPUTE_32F = 68, CUBLAS_COMPUTE_32F_FAST_TF32 = 77 };
enum { CUBLAS_GEMM_DEFAULT = -1 };
#endif

/* Entry points, with the signatures of cuda.h and cublas_api.h (CUDA 13.0). */
typedef struct ch_api {
    /* driver (libcuda.so.1) */
    CUresult (*Init)(unsigned);
    CUresult (*DeviceGet)(CUdevice *, int);
    CUresult (*PrimaryCtxRetain)(CUcontext *, CUdevice);
    CUresult (*PrimaryCtxRelease)(CUdevice);
    CUresult (*CtxSetCurrent)(CUcontext);
    CUresult (*CtxSynchronize)(void);
    CUresult (*MemAlloc)(CUdeviceptr *, size_t);
    CUresult (*MemFree)(CUdeviceptr);
    CUresult (*MemcpyHtoD)(CUdeviceptr, const void *, size_t);
    CUresult (*MemcpyDtoH)(void *, CUdeviceptr, size_t);
    CUresult (*EventCreate)(CUevent *, unsigned);
    CUresult (*EventRecord)(CUevent, CUstream);
    CUresult (*EventSynchronize)(CUevent);
    CUresult (*EventElapsedTime)(float *, CUevent, CUevent);
    CUresult (*EventDestroy)(CUevent);
    /* cuBLAS (libcublas.so) */
    cublasStatus_t (*Create)(cublasHandle_t *);
    cublasStatus_t (*Destroy)(cublasHandle_t);
    cublasStatus_t (*SetMathMode)(cublasHandle_t, ch_math_t);
    cublasStatus_t (*GetVersion)(cublasHandle_t, int *);
    cublasStatus_t (*Sgemm)(cublasHandle_t, ch_op_t, ch_op_t, int, int, int, const float *, const float *, int,
                            const float *, int, const float *, float *, int);
    cublasStatus_t (*SgemmStridedBatched)(cublasHandle_t, ch_op_t, ch_op_t, int, int, int, const float *,
                                          const float *, int, long long int, const float *, int, long long int,
                                          const float *, float *, int, long long int, int);
    cublasStatus_t (*Sgemv)(cublasHandle_t, ch_op_t, int, int, const float *, const float *, int, const float *, int,
                            const float *, float *, int);
    /* typed GEMM (f16/bf16 storage, f32 or TF32 compute); alpha/beta are
     * floats for the 32F compute types */
    cublasStatus_t (*GemmEx)(cublasHandle_t, ch_op_t, ch_op_t, int, int, int, const void *, const void *, ch_dtype_t,
                             int, const void *, ch_dtype_t, int, const void *, void *, ch_dtype_t, int, ch_compute_t,
                             ch_algo_t);
    cublasStatus_t (*GemmStridedBatchedEx)(cublasHandle_t, ch_op_t, ch_op_t, int, int, int, const void *,
                                           const void *, ch_dtype_t, int, long long int, const void *, ch_dtype_t,
                                           int, long long int, const void *, void *, ch_dtype_t, int, long long int,
                                           int, ch_compute_t, ch_algo_t);
    /* state */
    bool driver, blas;    /* which half is loaded */
    bool blas_fake;       /* $GS_CUBLAS_LIB is tests/fake_cublas.c: host memory, no device */
    char blas_path[256];  /* the libcublas that answered */
    CUdevice dev;
    CUcontext ctx;        /* device 0's primary context (retained) */
} ch_api;

extern ch_api CH;

/* Resolve cuBLAS's entry points (no device needed: nothing is called).
 * $GS_CUBLAS_LIB when set, else the loader path, .so.13, .so.12,
 * $CUDA_HOME/lib64 and /usr/local/cuda/lib64. A library exporting
 * `gs_fake_cublas` is the test double (CH.blas_fake): it works on host
 * memory and must never meet a device pointer. False with the reason in
 * why. */
bool ch_load_cublas(char *why, size_t n);
/* Load libcuda.so.1 ($GS_CUDA_LIB overrides), cuInit, retain device 0's
 * primary context and make it current. False with the reason in why. */
bool ch_load_driver(char *why, size_t n);
/* Release what ch_load_driver retained. */
void ch_unload(void);

/* Median of x[0..n) (sorts x in place); NAN when n < 1. */
double ch_median(double *x, int n);

/* What to compile for a device of compute capability sm: sm itself as a
 * cubin when NVRTC supports it (*cubin = true), else PTX for the newest
 * supported arch below it (the driver JIT-compiles it forward). 0 when
 * NVRTC is missing or supports nothing at or below sm. */
int ch_pick_arch(gs_ctx *ctx, int sm, bool *cubin);

/* Emit candidate e of op in the CUDA dialect for sm_<arch>: the one place
 * in experiments/ that calls the code generator (gs_lower_emit; hw is for
 * its next signature, which takes the profile). The caller frees ks. */
gs_status ch_kernel_emit(gs_ctx *ctx, const gs_hw *hw, const gs_op *op, const gs_etir *e, int arch,
                         gs_kernel_src *ks);
/* ch_kernel_emit, then compile it
 * with NVRTC (a cubin with ptxas statistics, or PTX). The caller frees ks
 * (gs_kernel_src_free) and nv (gs_nvrtc_out_free) either way: both are
 * zeroed first, and on failure already freed (freeing again is a no-op);
 * ctx says why. */
gs_status ch_kernel_compile(gs_ctx *ctx, const gs_hw *hw, const gs_op *op, const gs_etir *e, int arch, bool cubin,
                            gs_kernel_src *ks, gs_nvrtc_out *nv);

/* True for the operators cuBLAS computes: gemm (without its bias/relu
 * epilogue), bgemm and gemv. */
bool ch_blas_supports(const gs_op *op);
/* cuBLAS handle with the given math mode (CUBLAS_DEFAULT_MATH: FP32, no
 * TF32). 0 or the cublasStatus_t / -1 when cuBLAS is not loaded, or the
 * driver is not (unless cuBLAS is the test double). */
int ch_blas_create(ch_math_t math, cublasHandle_t *h);
/* One cuBLAS call computing op's row-major result (alpha, beta, transposes)
 * into out from a (tensor 0) and b (tensor 1), all device addresses.
 * Row-major X[r,c] is column-major X^T, so C = op(A)·op(B) is issued as
 * C^T = op(B)^T·op(A)^T with the operands swapped. Returns the
 * cublasStatus_t (0 = success) or -1 for an operator cuBLAS does not have.
 * Asynchronous, on the default stream. */
int ch_blas_run(cublasHandle_t h, const gs_op *op, uint64_t a, uint64_t b, uint64_t out);
/* Typed operators (f16/bf16 tensors, or math=tf32) go through cublasGemmEx /
 * cublasGemmStridedBatchedEx: a, b, out hold the types' storage
 * (gs_op_buffer_bytes), inputs and output of the cuBLAS types below,
 * compute CUBLAS_COMPUTE_32F (CUBLAS_COMPUTE_32F_FAST_TF32 for math=tf32). */
bool ch_blas_typed(const gs_op *op);
ch_dtype_t ch_blas_dtype(int gs_dtype); /* CUDA_R_32F / CUDA_R_16F / CUDA_R_16BF */
ch_compute_t ch_blas_compute(const gs_op *op);

/* One timed launch: run once, put its time in ms into *ms; 0 on success. */
typedef int (*ch_timed_fn)(void *state, double *ms);
/* Timed launches after the caller's warm-up: at least min_runs, at most
 * max_runs, and stop once target_ms of wall time have gone (the H100
 * data's method: 5..30 runs, about 40 ms). Median into *median_ms, the
 * count into *runs. 0, or the first failing call's code. */
int ch_time_median(ch_timed_fn fn, void *state, int min_runs, int max_runs, double target_ms, double *median_ms,
                   int *runs);
/* A ch_timed_fn for cuBLAS: state is a ch_blas_call; events around one
 * ch_blas_run. */
typedef struct ch_blas_call {
    cublasHandle_t h;
    const gs_op *op;
    uint64_t a, b, out;
} ch_blas_call;
int ch_blas_timed(void *state, double *ms);
/* A ch_timed_fn for our kernels: state is a ch_launch; one gs_cuda_launch
 * (events around it), its gs_status as the code. */
typedef struct ch_launch {
    gs_ctx *ctx;
    gs_cuda *cu;
    gs_cuda_mod *mod;
    const gs_karg *args;
    int nargs;
    size_t grid, block;
} ch_launch;
int ch_launch_timed(void *state, double *ms);

#endif
