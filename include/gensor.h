/* gensor.h — the one public header of gensor, a graph-based tensor-kernel
 * constructor (after Liu et al., "Gensor").
 *
 * Everything is reached through opaque handles. Every fallible call returns a
 * gs_status (GS_OK == 0, errors < 0); the detail of the last error is kept in
 * the gs_ctx and read with gs_ctx_errmsg(). Nothing here includes cuda.h,
 * nvrtc.h or CL/cl.h: the GPU runtimes are loaded at run time.
 *
 * Ownership: a pointer returned through an out-parameter of *_create, *_parse,
 * *_load or gs_construct belongs to the caller, who frees it with the matching
 * *_destroy. destroy(NULL) is a no-op. Strings returned as const char * are
 * owned by the object they came from and live as long as it does.
 */
#ifndef GENSOR_H
#define GENSOR_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define GS_VERSION_STRING "0.1.0"

typedef enum gs_status {
    GS_OK = 0,
    GS_ERR_INVALID_ARG = -1,   /* a NULL or out-of-range argument */
    GS_ERR_PARSE = -2,         /* malformed spec string or config */
    GS_ERR_UNKNOWN_OP = -3,    /* spec names an operator we do not know */
    GS_ERR_BAD_SHAPE = -4,     /* zero, negative or overflowing extent */
    GS_ERR_NOMEM = -5,         /* allocation failed */
    GS_ERR_HW_UNKNOWN = -6,    /* no built-in profile by that name */
    GS_ERR_HW_INVALID = -7,    /* a profile breaks a rule (e.g. 0 SMs) */
    GS_ERR_JSON = -8,          /* malformed JSON file */
    GS_ERR_IO = -9,            /* file could not be read or written */
    GS_ERR_NO_CANDIDATE = -10, /* no state passes the memory check */
    GS_ERR_NVRTC_MISSING = -11,/* libnvrtc could not be loaded */
    GS_ERR_NVRTC_COMPILE = -12,/* NVRTC rejected the source (see errmsg) */
    GS_ERR_ARCH_UNSUPPORTED = -13, /* the installed NVRTC lacks this sm_XX */
    GS_ERR_OPENCL_MISSING = -14,   /* no OpenCL platform / device */
    GS_ERR_OPENCL = -15,       /* an OpenCL call failed (see errmsg) */
    GS_ERR_CUDA_MISSING = -16, /* no CUDA driver or device */
    GS_ERR_CUDA = -17,         /* a CUDA driver call failed */
    GS_ERR_MISMATCH = -18,     /* verification: result differs from reference */
    GS_ERR_UNSUPPORTED = -19,  /* valid request this build cannot serve */
    GS_STATUS_MIN_ = -19
} gs_status;

/* Human-readable, static message for a status. Never NULL. */
const char *gs_status_str(gs_status s);

/* ---- context: carries the last error message -------------------------- */
typedef struct gs_ctx gs_ctx;
/* Create a context. Caller owns it; free with gs_ctx_destroy. */
gs_ctx *gs_ctx_create(void);
void gs_ctx_destroy(gs_ctx *ctx);
/* Detail of the last error set on ctx ("" when none). Owned by ctx. */
const char *gs_ctx_errmsg(const gs_ctx *ctx);

/* ---- operators --------------------------------------------------------- */
typedef struct gs_op gs_op;
/* Parse a text spec such as "gemm M=64 N=64 K=64 transA=1 alpha=2".
 * On success *out is owned by the caller (gs_op_destroy). */
gs_status gs_op_parse(gs_ctx *ctx, const char *spec, gs_op **out);
/* Build C[M,N] = alpha*op(A)*op(B) + beta*C. Caller owns *out. */
gs_status gs_op_create_gemm(gs_ctx *ctx, int64_t M, int64_t N, int64_t K,
                            int transA, int transB, float alpha, float beta,
                            gs_op **out);
void gs_op_destroy(gs_op *op);
/* Canonical spec string of the operator. Owned by op. */
const char *gs_op_spec(const gs_op *op);
/* Useful floating-point work of the operator (2*M*N*K for gemm). */
double gs_op_flops(const gs_op *op);

/* ---- hardware profiles ------------------------------------------------- */
typedef struct gs_hw gs_hw;
/* Load a built-in profile by name ("rtx3090") or a JSON file by path.
 * Caller owns *out (gs_hw_destroy). */
gs_status gs_hw_load(gs_ctx *ctx, const char *name_or_path, gs_hw **out);
/* Write the profile as JSON to path (atomically: temp file + rename). */
gs_status gs_hw_save(gs_ctx *ctx, const gs_hw *hw, const char *path);
void gs_hw_destroy(gs_hw *hw);
/* Number of built-in profiles and the name of the i-th (static strings). */
int gs_hw_builtin_count(void);
const char *gs_hw_builtin_name(int i);
const char *gs_hw_name(const gs_hw *hw);
/* CUDA compute capability as major*10+minor (86 for sm_86). */
int gs_hw_sm(const gs_hw *hw);

/* ---- construction ------------------------------------------------------ */
typedef enum gs_policy {
    GS_POLICY_PAPER = 0,    /* formulas (1)-(3) exactly as printed */
    GS_POLICY_BALANCED = 1, /* (1) read as traffic reduction per footprint growth */
    GS_POLICY_MODEL = 2     /* tile/vthread benefit = predicted speedup of the move */
} gs_policy;

typedef enum gs_strategy {
    GS_STRATEGY_MARKOV = 0,
    GS_STRATEGY_TREE = 1,
    GS_STRATEGY_EXHAUSTIVE = 2,
    GS_STRATEGY_RANDOM = 3
} gs_strategy;

typedef struct gs_construct_opts {
    uint64_t seed;       /* PCG32 seed; same seed => identical result */
    int top_k;           /* candidates kept, ranked by the estimate (>= 1) */
    int chains;          /* independent Markov chains (>= 1) */
    double t_start;      /* initial temperature (> threshold) */
    double t_threshold;  /* stop when T <= threshold */
    gs_policy policy;
    gs_strategy strategy;
} gs_construct_opts;

/* Defaults: seed 1, top_k 5, chains 16, T from 1 down to 2^-40; the default
 * policy is documented in the README (chosen by experiments/). */
void gs_construct_opts_default(gs_construct_opts *o);

typedef struct gs_result gs_result;
/* Construct kernels for op on hw. Caller owns *out (gs_result_destroy). */
gs_status gs_construct(gs_ctx *ctx, const gs_op *op, const gs_hw *hw,
                       const gs_construct_opts *opts, gs_result **out);
void gs_result_destroy(gs_result *r);
/* Number of ranked candidates (<= top_k). Candidate 0 is the best. */
int gs_result_count(const gs_result *r);
/* Predicted time in seconds of candidate i under the analytic estimate. */
double gs_result_predicted_s(const gs_result *r, int i);
/* Wall time the construction took, in seconds. */
double gs_result_construct_s(const gs_result *r);
/* One-line description of candidate i's ETIR. Owned by r. */
const char *gs_result_describe(const gs_result *r, int i);

/* ---- kernels ----------------------------------------------------------- */
typedef enum gs_dialect { GS_DIALECT_CUDA = 0, GS_DIALECT_OPENCL = 1 } gs_dialect;

/* Emit the source of candidate i in a dialect. *out is malloc'd; caller frees. */
gs_status gs_kernel_emit(gs_ctx *ctx, const gs_result *r, int i,
                         gs_dialect d, char **out);

#ifdef __cplusplus
}
#endif
#endif /* GENSOR_H */
