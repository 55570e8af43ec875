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
 *
 * Threads: use one gs_ctx per thread (it holds that thread's last error).
 * gs_hw, gs_op and gs_result handles are never written after they are made,
 * so any number of threads may read and construct with them at once; destroy
 * one only when no thread uses it. A gs_dispatcher is not thread-safe: give
 * each thread its own (several may share a disk cache directory, which is
 * safe across threads and processes) or put a lock around it. The library
 * keeps no mutable global state but three once-only loads: libnvrtc
 * (pthread_once), the CUDA driver table (a mutex) and the self-check of the
 * built-in profiles (an atomic flag). tests/tsan_threads.c checks this with
 * 8 threads under ThreadSanitizer (make check-tsan).
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
    GS_ERR_TOOL_MISSING = -20, /* an external tool (cuobjdump) was not found */
    GS_ERR_TOOL = -21,         /* an external tool failed (see errmsg) */
    GS_STATUS_MIN_ = -21
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
    double max_ms;       /* exhaustive: wall-clock budget in ms, 0 = none (default);
                            a cut enumeration is reported as capped */
} gs_construct_opts;

/* Defaults: seed 1, top_k 5, chains 8, T from 1 down to 2^-40; the default
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

/* ---- dynamic shapes: the dispatcher -------------------------------------
 * A runtime serving shapes it has not seen (BERT with varying sequence
 * length, DietCode's workloads) keeps one dispatcher per hardware profile
 * and dialect. gs_dispatch() constructs a kernel for the operator's
 * extents, hashes its descriptor (op structure, ETIR, dialect, arch and
 * codegen version; extents are runtime arguments) and compiles only when
 * that descriptor has not been compiled before: NVRTC cubin for CUDA (the
 * CUDA source when NVRTC is missing), OpenCL source built on the attached
 * device for OpenCL. Compiled artifacts go to a kernel cache in memory and,
 * optionally, on disk. A shape seen before skips the construction.
 * Not thread-safe: one dispatcher per thread, or a lock around it;
 * dispatchers of several threads or processes may share cache_dir. */
typedef struct gs_dispatcher gs_dispatcher;

typedef enum gs_warm_start {
    GS_WARM_OFF = 0,       /* construct every new shape from scratch (default) */
    GS_WARM_CONSTRUCT = 1, /* ETO-style: the state of the nearest dispatched shape of the
                              same operator (log-distance of extents) competes with a
                              reduced construction (warm_chains chains); the faster
                              prediction is kept */
    GS_WARM_REUSE = 2      /* reuse the nearest shape's state whenever it fits; construct
                              only when none fits (cheapest, loses the most) */
} gs_warm_start;

typedef struct gs_dispatch_opts {
    gs_dialect dialect;          /* GS_DIALECT_CUDA (default) or GS_DIALECT_OPENCL */
    int arch;                    /* CUDA: sm_XX to compile for; 0: the profile's (or the
                                    nearest the installed NVRTC supports) */
    const char *cache_dir;       /* disk cache: a directory; NULL: $GS_CACHE_DIR if set;
                                    "": memory only */
    gs_construct_opts construct; /* options of every construction */
    gs_warm_start warm_start;    /* default GS_WARM_OFF (see experiments/dynamic.c) */
    int warm_chains;             /* chains of a warm-started construction [4] */
    double reuse_tol;            /* among a construction's ranked candidates, prefer one
                                    already compiled when its prediction is within this
                                    fraction of the best: 0 (default) takes exact ties
                                    only, so nothing is lost under the model; < 0: never */
    int compile;                 /* 1 (default): compile on a miss; 0: construct only */
} gs_dispatch_opts;

void gs_dispatch_opts_default(gs_dispatch_opts *o);

/* Create a dispatcher for a profile (copied). Caller owns *out. */
gs_status gs_dispatcher_create(gs_ctx *ctx, const gs_hw *hw, const gs_dispatch_opts *opts,
                               gs_dispatcher **out);
void gs_dispatcher_destroy(gs_dispatcher *d);

#define GS_HANDLE_MAX_INTS 48
typedef struct gs_kernel_handle {
    char name[48];            /* kernel entry point, gs_<16-hex key> */
    uint64_t key;             /* descriptor hash: the cache key */
    int64_t grid, block;      /* 1-D launch for this shape */
    int64_t smem_bytes;       /* static shared memory */
    int nint;                 /* integer arguments for this shape: extents, then shapes */
    int32_t int_args[GS_HANDLE_MAX_INTS];
    float alpha, beta;        /* the float arguments */
    int has_bias;             /* a bias buffer follows the output */
    int hit;                  /* 1: the kernel was compiled already (no compile now) */
    int disk_hit;             /* 1: this dispatch read it from the disk cache */
    int new_shape;            /* 1: the first dispatch of this shape */
    int constructed;          /* 1: a construction ran (0: shape seen before, or reused) */
    int warm;                 /* 1: the warm-start (cached) state was kept */
    double predicted_s;       /* estimate of this kernel on this shape */
    double construct_s;       /* spent constructing in this call */
    double compile_s;         /* spent compiling in this call */
    double dispatch_s;        /* whole call */
    const char *binary_kind;  /* "cuda-cubin", "cuda-source", "opencl-source", ...; NULL
                                 when compile == 0 */
    const void *binary;       /* the artifact (NUL-terminated after binary_len bytes);
                                 owned by the dispatcher */
    size_t binary_len;
    void *program;            /* gs_cl_prog * / gs_cuda_mod * when a device is attached */
    char config[200];         /* the configuration, e.g. bm=64,bn=64,... */
    int64_t workspace_bytes;  /* split-K (config split=N): launch with a device buffer of this
                                 many bytes after the float arguments, zeroed before its first
                                 use; each launch leaves it ready for the next. One buffer per
                                 launch in flight. 0: no workspace argument */
} gs_kernel_handle;

/* Dispatch op: fills *out (valid until d is destroyed). */
gs_status gs_dispatch(gs_ctx *ctx, gs_dispatcher *d, const gs_op *op, gs_kernel_handle *out);

typedef struct gs_dispatch_stats {
    int64_t dispatches;       /* gs_dispatch calls that succeeded */
    int64_t shapes;           /* distinct shapes seen */
    int64_t constructions;    /* gs_construct runs */
    int64_t compiles;         /* NVRTC compilations or OpenCL builds */
    int64_t hits;             /* dispatches whose kernel was compiled already */
    int64_t disk_hits;        /* kernels read from the disk cache instead of compiled */
    int64_t kernels;          /* distinct kernels (descriptors) held */
    int64_t warm_kept;        /* warm start: the cached state won */
    int64_t tie_reused;       /* an already-compiled candidate replaced the top one */
    int64_t cache_corrupt;    /* disk entries found corrupt and rebuilt */
    int64_t cache_write_errors;
    double construct_ms;      /* total construction time (wall clock) */
    double construct_cpu_ms;  /* the same in CPU time of the calling thread */
    double compile_ms;        /* total compile time */
    double dispatch_ms;       /* total time in gs_dispatch */
} gs_dispatch_stats;
void gs_dispatch_stats_get(const gs_dispatcher *d, gs_dispatch_stats *out);

#ifdef __cplusplus
}
#endif
#endif /* GENSOR_H */
