/* kernels.h — lowering, dialect printers and the runtimes (NVRTC, OpenCL). */
#ifndef GS_KERNELS_H
#define GS_KERNELS_H

#include "hwmodel/hw.h"
#include "ir/ir.h"

/* ---- kernel descriptor, lowering and emission -------------------------
 * A kernel is described by a zeroed, fixed-size struct of plain data; its
 * bytes are hashed for the cache and printed as a banner in the source.
 * Extents and tensor shapes are runtime arguments, so one binary serves every
 * shape that maps to the same descriptor. */
#define GS_CODEGEN_VERSION 1u

typedef struct gs_kdesc {
    uint32_t codegen_version;
    uint32_t dialect;       /* gs_dialect */
    uint32_t arch;          /* sm_XX the source is meant for (0: any) */
    uint32_t idx64;         /* 64-bit linear offsets */
    uint32_t combine, naxes, ninputs;
    uint32_t axis_kind[GS_MAX_AXES];
    int32_t ndim[GS_MAX_TENSORS];
    gs_affine idx[GS_MAX_TENSORS][GS_MAX_DIMS];
    gs_etir etir;
    uint32_t has_beta, has_bias, bias_axis, relu;
} gs_kdesc;

void gs_kdesc_make(const gs_op *op, const gs_etir *e, gs_dialect d, int arch, gs_kdesc *k);
uint64_t gs_kdesc_hash(const gs_kdesc *k);

typedef struct gs_kernel_src {
    char *src;          /* malloc'd source text */
    char name[48];      /* kernel entry name, gs_<hash> */
    gs_kdesc desc;
    uint64_t hash;
    int64_t grid, block;/* 1-D launch: grid blocks of block threads */
    int64_t smem_bytes; /* static shared memory of the kernel */
} gs_kernel_src;

/* Lower the ETIR of op and print it in a dialect. */
gs_status gs_lower_emit(gs_ctx *ctx, const gs_op *op, const gs_etir *e, gs_dialect d, int arch,
                        gs_kernel_src *out);
void gs_kernel_src_free(gs_kernel_src *k);
/* Integer runtime arguments in order: axis extents, then every tensor's
 * shape (inputs, output). Returns the count (<= cap). */
int gs_kernel_int_args(const gs_op *op, int32_t *vals, int cap);

/* ---- NVRTC (loaded with dlopen; no link-time dependency) --------------- */
typedef struct gs_ptxas_stats {
    int registers;
    int64_t spill_store_bytes, spill_load_bytes;
    int64_t smem_bytes;   /* static shared memory ("bytes smem") */
    int64_t stack_bytes;  /* "bytes stack frame" */
} gs_ptxas_stats;

/* True if libnvrtc could be loaded (result cached). On failure ctx says why. */
bool gs_nvrtc_available(gs_ctx *ctx);
/* Arches the installed NVRTC accepts (nvrtcGetSupportedArchs), as 75, 80, ...
 * Writes up to cap values into archs and their count into *n. */
gs_status gs_nvrtc_supported_archs(gs_ctx *ctx, int *archs, int cap, int *n);
/* The supported arch nearest to sm (the smallest supported >= sm, else the
 * largest supported). Returns 0 if NVRTC is missing. */
int gs_nvrtc_nearest_arch(gs_ctx *ctx, int sm);

typedef struct gs_nvrtc_out {
    char *ptx;        /* malloc'd, may be NULL if not requested */
    size_t ptx_len;
    void *cubin;      /* malloc'd, may be NULL if not requested */
    size_t cubin_len;
    char *log;        /* malloc'd compile log (ptxas verbose output included) */
    gs_ptxas_stats stats; /* parsed from the log when a cubin was built */
    double compile_s;
} gs_nvrtc_out;

/* Compile CUDA C source for sm_XX. want_cubin adds -arch=sm_XX (SASS) and
 * --ptxas-options=--verbose and fills stats; otherwise compute_XX PTX only.
 * If sm is not supported returns GS_ERR_ARCH_UNSUPPORTED with a message
 * naming the supported list. */
gs_status gs_nvrtc_compile(gs_ctx *ctx, const char *src, const char *name, int sm,
                           bool want_ptx, bool want_cubin, gs_nvrtc_out *out);
void gs_nvrtc_out_free(gs_nvrtc_out *o);
/* Parse ptxas --verbose text into stats (for the kernel named, or the first). */
bool gs_ptxas_parse(const char *log, gs_ptxas_stats *st);

/* ---- OpenCL runtime (through the ICD loader) --------------------------- */
typedef struct gs_cl gs_cl;       /* platform + device + context + queue */
typedef struct gs_cl_prog gs_cl_prog;
typedef struct gs_cl_buf gs_cl_buf;

/* Open the first available device (prefers GPU, else CPU/PoCL). */
gs_status gs_cl_open(gs_ctx *ctx, gs_cl **out);
void gs_cl_close(gs_cl *cl);
const char *gs_cl_device_name(const gs_cl *cl);
/* Build source; on failure ctx holds the build log. */
gs_status gs_cl_build(gs_ctx *ctx, gs_cl *cl, const char *src, const char *kernel_name,
                      gs_cl_prog **out);
void gs_cl_prog_free(gs_cl_prog *p);
gs_status gs_cl_buf_create(gs_ctx *ctx, gs_cl *cl, size_t bytes, const void *host, gs_cl_buf **out);
gs_status gs_cl_buf_read(gs_ctx *ctx, gs_cl *cl, gs_cl_buf *b, void *host, size_t bytes);
void gs_cl_buf_free(gs_cl_buf *b);

/* Kernel arguments, in order. */
typedef enum gs_karg_kind { GS_KARG_BUF, GS_KARG_INT, GS_KARG_LONG, GS_KARG_FLOAT } gs_karg_kind;
typedef struct gs_karg {
    gs_karg_kind kind;
    gs_cl_buf *buf;
    int32_t i;
    int64_t l;
    float f;
} gs_karg;
/* Launch with global = grid*block work-items and local = block, wait, and
 * return the profiled kernel time in seconds in *elapsed_s (may be NULL). */
gs_status gs_cl_launch(gs_ctx *ctx, gs_cl *cl, gs_cl_prog *p, const gs_karg *args, int nargs,
                       size_t grid, size_t block, double *elapsed_s);

/* ---- verification: run on OpenCL and compare with a reference -----------
 * The reference is GSL's sgemm for gemm and the IR interpreter otherwise.
 * Errors are reported as a diff struct (libxsmm matdiff style). */
typedef struct gs_diff {
    double max_abs;       /* max |y - ref| */
    double max_rel;       /* max |y - ref| / max(|ref|, 1e-30) over elements with |ref| > 1e-6*max|ref| */
    int64_t where;        /* linear index of max_abs */
    double ref_max;       /* max |ref| */
    double normwise;      /* max_abs / max|ref| (the pass/fail figure) */
    double nmse;          /* sum (y-ref)^2 / sum ref^2 */
    int64_t nonfinite;    /* NaN/Inf in y where ref is finite */
    const char *reference;/* "gsl_blas_sgemm" or "interpreter" */
    double kernel_s;      /* profiled kernel time on the OpenCL device */
} gs_diff;

/* Tolerance on the normwise error for fp32 results. */
#define GS_VERIFY_TOL 1e-5

/* Largest problem verify will allocate on the host (bytes over all tensors). */
#define GS_VERIFY_MAX_BYTES (2LL << 30)

/* Emit e for OpenCL, build it on cl, run it on inputs drawn from seed, and
 * compare with the reference. GS_ERR_MISMATCH when normwise > tol or any
 * non-finite value appears; *d is filled either way when the run succeeded. */
gs_status gs_verify_opencl(gs_ctx *ctx, gs_cl *cl, const gs_op *op, const gs_etir *e, uint64_t seed,
                           gs_diff *d);
/* Compare two arrays (y against ref). */
void gs_diff_compute(const float *y, const float *ref, int64_t n, gs_diff *d);

#endif
