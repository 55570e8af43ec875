/* service.h — what runs on top of codegen and the runtimes: the kernel object (kernel.c),
 * verification (verify.c), the kernel cache (cache.c), ptxas re-ranking (rerank.c),
 * refinement (refine.c), the dispatcher (dispatch.c) and the static SASS checks (sass.c). */
#ifndef GS_SERVICE_H
#define GS_SERVICE_H

#include "construct/construct.h"
#include "kernels/runtime/runtime.h"

/* ptxas-informed ranking: compile the n candidates for sm_<arch>, re-estimate
 * each with its real register count (spilled words added), and re-sort cand
 * and est together by the new prediction; stats (may be NULL) receives the
 * ptxas figures in the new order. GS_ERR_NVRTC_MISSING leaves them as they
 * were, so callers can fall back to the model's own ranking. */
gs_status gs_rerank_ptxas(gs_ctx *ctx, const gs_hw *hw, const gs_op *op, int arch, gs_etir *cand, gs_estimate *est,
                          int n, gs_ptxas_stats *stats);
/* The same, compiling through kernel cache c (NULL: none; cache.c). */
typedef struct gs_kcache gs_kcache;
gs_status gs_rerank_ptxas_cached(gs_ctx *ctx, gs_kcache *c, const gs_hw *hw, const gs_op *op, int arch, gs_etir *cand,
                                 gs_estimate *est, int n, gs_ptxas_stats *stats);

/* ---- static SASS checks (sass.c) -----------------------------------------
 * A cubin is disassembled with cuobjdump -sass (no GPU needed; `make
 * sass-tools` installs it from PyPI into build/venv) and its instructions are
 * counted by class, over the whole kernel and over the main loop: the
 * backward-branch loop (a BRA to an earlier address, the body being the
 * address range from the target to the branch) that holds the most FFMA,
 * ties going to the longer range. */
typedef enum gs_sass_class {
    GS_SASS_LDG128 = 0, /* global loads of 128 bits or more: LDG.E.128, LDG.E.128.CONSTANT, ... */
    GS_SASS_LDG,        /* other global loads (LDG.E, LDG.E.64, ...) */
    GS_SASS_LDS128,     /* 128-bit shared loads */
    GS_SASS_LDS64,      /* 64-bit shared loads */
    GS_SASS_LDS,        /* other shared loads (not LDSM: its own class) */
    GS_SASS_STS128,     /* 128-bit shared stores */
    GS_SASS_STS,        /* other shared stores */
    GS_SASS_LDGSTS128,  /* 16-byte cp.async: global -> shared without registers (sm_80+) */
    GS_SASS_LDGSTS,     /* other cp.async (4 or 8 bytes) */
    GS_SASS_LDL,        /* local-memory loads: spills or dynamically indexed local arrays */
    GS_SASS_STL,        /* local-memory stores */
    GS_SASS_SHFL,       /* warp shuffles */
    GS_SASS_ISETP,      /* integer compares (bounds checks, loop tests) */
    GS_SASS_BAR,        /* barriers (BAR.SYNC, __syncthreads) */
    GS_SASS_FFMA,       /* fp32 fused multiply-adds (FFMA2 counts once) */
    GS_SASS_HMMA,       /* tensor-core mma (HMMA: f16, bf16 and tf32 inputs) */
    GS_SASS_LDSM,       /* ldmatrix: warp-wide 8x8 fragment loads from shared memory */
    GS_SASS_TOTAL,      /* every instruction but NOPs and @!PT-guarded (never executed) ones */
    GS_SASS_NCLASS
} gs_sass_class;

/* Table label ("LDG.E.128", "LDG.other", ...: no spaces) and JSON key
 * ("ldg128", "ldg_other", ...) of a class; "?" out of range. */
const char *gs_sass_class_label(gs_sass_class c);
const char *gs_sass_class_key(gs_sass_class c);

/* The steady-state iteration: the one path through a loop's body that a
 * full tile takes (sass.c says how the loop and path are chosen), with the cold
 * code (the last tile's bounded compute, edge copies) left out. Its counts,
 * and for each shared load (LDS or LDSM) whose result the math reads (an
 * FFMA, or on the tensor cores an HMMA), the distance in issue slots
 * (instructions along the path, which repeats) to the first such
 * instruction: a load issued fewer than GS_SASS_NEAR_SLOTS slots before its
 * use stalls the warp unless other warps hide it. */
#define GS_SASS_NEAR_SLOTS 20
/* The runs of the steady path kept by address (the first this many). */
#define GS_SASS_SPANS 32
/* The near loads listed by address (the first this many along the path). */
#define GS_SASS_NEAR_LIST 8
typedef struct gs_sass_near {
    int64_t load, ffma; /* byte offsets: the shared load and the first FFMA (or HMMA) that reads it */
    int64_t slots;      /* issue slots between them along the path */
    int64_t math;       /* of those, FFMA or HMMA: on the tensor cores each HMMA holds the pipe
                           for several clocks, so a few slots may still cover the load */
} gs_sass_near;
typedef struct gs_sass_steady {
    bool found;
    int64_t begin, end;             /* byte offsets: the loop head and the backward BRA */
    int64_t count[GS_SASS_NCLASS];  /* instructions on the path by class */
    int64_t intops;                 /* integer and address arithmetic (IMAD, IADD3, LEA, SHF, LOP3, ISETP, ...) */
    int64_t gbytes;                 /* bytes each thread loads from global memory (LDG, LDGSTS) */
    int64_t blocks;                 /* basic blocks on the path */
    int64_t ffma_inner;             /* FFMA on the path inside an inner loop (counted once; a
                                       partly unrolled k-loop runs several times a tile) */
    int64_t lds_fed;                /* shared loads (LDS, or ldmatrix's LDSM) on the path that feed
                                       the math: an FFMA, or an HMMA (the lds_* fields and near[] read
                                       FFMA as "FFMA or HMMA") */
    int64_t lds_near;               /* of those, the ones fewer than GS_SASS_NEAR_SLOTS slots ahead */
    int64_t lds_min_slots;          /* the smallest distance; -1 when no load feeds an FFMA or HMMA */
    gs_sass_near near[GS_SASS_NEAR_LIST]; /* the near loads, in path order (the first
                                       GS_SASS_NEAR_LIST of lds_near): where to look */
    double lds_mean_slots;          /* the mean distance */
    int64_t ffma_reuse;             /* FFMA operands on the path flagged .reuse (read from the
                                       register reuse cache: the operand of the FFMA before) */
    int mma_k;                      /* the k of the path's HMMA (m16n8k16: 16); 0 without HMMA */
    int nspan;                      /* runs of consecutive instructions the path takes, in address
                                       order (the first GS_SASS_SPANS in span[]; --sass=steady
                                       prints their lines) */
    int64_t span[GS_SASS_SPANS][2]; /* byte offsets of each run's first and last instruction */
} gs_sass_steady;

typedef struct gs_sass_summary {
    int64_t all[GS_SASS_NCLASS];  /* whole cubin (every function) */
    int64_t loop[GS_SASS_NCLASS]; /* main loop; zeros when there is none */
    bool has_loop;
    int64_t loop_begin, loop_end; /* byte offsets: the loop's first instruction and its backward BRA */
    int64_t loops;                /* backward branches seen */
    int functions;                /* functions in the listing */
    gs_sass_steady steady;        /* the steady-state iteration (of the loop chosen as sass.c says,
                                     the main loop or a peeled steady loop); found false without
                                     a loop */
} gs_sass_summary;

/* Find cuobjdump: $GS_CUOBJDUMP when set (it must be executable), else
 * <root>/build/venv/lib/python3.X/site-packages/nvidia/cuNN/bin/cuobjdump
 * (root NULL: the current directory), else cuobjdump on PATH, else the CUDA
 * toolkit's bin/. Writes the path into path[cap]. GS_ERR_TOOL_MISSING with
 * "cuobjdump not found: run make sass-tools (...where it looked...)". */
gs_status gs_sass_find_tool(gs_ctx *ctx, const char *root, char *path, size_t cap);
/* Run `tool -sass` on a cubin (written to a mkstemp file that is removed
 * again) and return its listing in *text (malloc'd, caller frees).
 * GS_ERR_TOOL naming the exit status and cuobjdump's own message when it
 * fails; GS_ERR_IO when the temp file cannot be written. */
gs_status gs_sass_disasm(gs_ctx *ctx, const char *tool, const void *cubin, size_t len, char **text);
/* Count a cuobjdump -sass (or nvdisasm) listing into *out. GS_ERR_PARSE when
 * it holds no instruction. */
gs_status gs_sass_parse(gs_ctx *ctx, const char *text, gs_sass_summary *out);
/* The three above in one call: find the tool under root, disassemble and
 * count. text (may be NULL) receives the listing, tool_path (may be NULL)
 * the tool used (tool_cap bytes). */
gs_status gs_sass_cubin(gs_ctx *ctx, const char *root, const void *cubin, size_t len, gs_sass_summary *out,
                        char **text, char *tool_path, size_t tool_cap);


/* ---- verification: run on a device and compare with a reference ---------
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
    double kernel_s;      /* profiled kernel time on the device */
    double tol;           /* the tolerance applied (gs_verify_tolerance) */
    int64_t rounding;     /* 16-bit outputs: elements farther from the unrounded reference than half
                             an ulp of the output type plus the f32 slack (gs_diff_round_check) */
    int64_t class_where;  /* the first output whose class (NaN, +inf, -inf, finite) differs from the
                             reference's, -1 when none (gs_diff_compute) */
    int64_t ref_nonfinite;/* reference outputs that are NaN or infinite */
} gs_diff;
/* The rounding check of a 16-bit output type t: the kernel's value must be
 * the round-to-nearest-even of an f32 value within slack of the exact one,
 * so |y - ref| <= ulp_t(|ref| + slack) / 2 + slack for every element (ref
 * unrounded); d->rounding counts the elements that break it. A truncating
 * or otherwise wrong store breaks it by up to an ulp; normwise cannot see
 * that. */
/* A device buffer of n elements of type t from host floats (packed to the
 * type's storage, rounding to nearest even). */
gs_status gs_typed_buffer_create(gs_ctx *ctx, gs_device *dev, gs_dtype t, const float *x, int64_t n, gs_buffer **b);
void gs_diff_round_check(const float *y, const float *ref, int64_t n, gs_dtype t, double slack, gs_diff *d);

/* Tolerance on the normwise error for fp32 results: GS_VERIFY_TOL for
 * reductions up to 4096 terms, growing like sqrt(terms/4096) beyond (fp32
 * rounding error of a sum grows like a random walk over its terms). A
 * 16-bit output type adds its unit roundoff u (one rounding of the f32
 * result): tol = tol_f32 + u (1 + tol_f32), against the unrounded
 * reference; the inputs are exact in their type and their products exact
 * in f32, so the accumulation's error is f32's (docs/MODEL.md, "Verification bound"). */
#define GS_VERIFY_TOL 1e-5
double gs_verify_tolerance(const gs_op *op);

/* Largest problem verify will allocate on the host (bytes over all tensors). */
#define GS_VERIFY_MAX_BYTES (2LL << 30)
/* Largest iteration space (product of all axis extents) verify will run: the
 * reference runs it on the host and the kernel on the device, so a
 * tiny tensor with a 2^31 x 2^31 window otherwise runs for ever. */
#define GS_VERIFY_MAX_ITERS (1LL << 36)

/* Plan e for profile hw (the plan of the GPU the kernel is for; on OpenCL
 * its asynchronous copies print as plain copies), emit it in dev's dialect
 * (CUDA: for the NVRTC arch of gs_device_target), build or load it on dev,
 * run it on inputs drawn from seed, and compare with the reference.
 * GS_ERR_MISMATCH when normwise > tol or any non-finite value appears; *d is
 * filled either way when the run succeeded. A device without an open
 * runtime: GS_ERR_OPENCL_MISSING or GS_ERR_CUDA_MISSING. */
gs_status gs_verify(gs_ctx *ctx, gs_device *dev, const gs_hw *hw, const gs_op *op, const gs_etir *e, uint64_t seed,
                    gs_diff *d);
/* The same for a given plan (a fallback plan, or the plan of another shape
 * of the operator: the kernel then runs with op's extents, as a kernel
 * reused across shapes does). */
gs_status gs_verify_plan(gs_ctx *ctx, gs_device *dev, const gs_op *op, const gs_etir *e, const gs_plan *plan,
                         uint64_t seed, gs_diff *d);
/* Verification options (internal; gs_verify and gs_verify_plan take the
 * defaults, all zero).
 *   nonfinite  after the usual finite inputs are drawn (and rounded to their
 *              types), N special values -- NaN, +inf or -inf, each a third
 *              of the time -- replace elements at random positions of the
 *              inputs, the bias and, when beta != 0, the output's old
 *              contents, all drawn from the seed (another stream than the
 *              inputs', which stay the same). With beta = 0 the old contents,
 *              which the operator never reads, are all NaN instead. Every
 *              output's class must match the reference's (computed by the
 *              interpreter, never GSL, whose sgemm skips zero terms and so
 *              0 x inf); the finite ones pass the usual tolerance. */
typedef struct gs_verify_opts {
    int64_t nonfinite;
} gs_verify_opts;
gs_status gs_verify_ex(gs_ctx *ctx, gs_device *dev, const gs_hw *hw, const gs_op *op, const gs_etir *e, uint64_t seed,
                       const gs_verify_opts *vo, gs_diff *d);
gs_status gs_verify_plan_ex(gs_ctx *ctx, gs_device *dev, const gs_op *op, const gs_etir *e, const gs_plan *plan,
                            uint64_t seed, const gs_verify_opts *vo, gs_diff *d);
/* Compare two arrays (y against ref): normwise over the outputs whose
 * reference is finite; an output counts in nonfinite when its class (NaN,
 * +inf, -inf, finite) differs from the reference's (class_where: the
 * first). */
void gs_diff_compute(const float *y, const float *ref, int64_t n, gs_diff *d);
/* The gemm reference through GSL: C = alpha*op(A)*op(B) + beta*C in single
 * precision (C holds the old output on entry; no bias, no relu). */
void gs_gemm_reference(const gs_op *op, const float *A, const float *B, float *C);


/* ==== kernel cache, refinement and dispatch (cache.c, refine.c, dispatch.c) ==== */

/* ---- kernel cache (cache.c) ---------------------------------------------
 * Compiled artifacts keyed by (descriptor hash, backend). In memory always;
 * on disk when a directory is given (or $GS_CACHE_DIR is set), one file per
 * entry: <16-hex key>.<backend>.gsk = a GS_KCACHE_HEADER_BYTES header
 * (magic "GSKC", format version, key, backend, payload length, FNV-1a 64 of
 * the payload) and the payload. Writes are temp file + fsync + rename, so
 * processes may share a directory. A truncated, garbage or foreign entry is
 * counted as corrupt, deleted and reported as a miss. OpenCL entries hold
 * the source (CL program binaries are device-specific). */
typedef enum gs_kbackend {
    GS_KB_CUDA_CUBIN = 0,    /* "cuda-cubin": NVRTC SASS for the descriptor's arch */
    GS_KB_CUDA_PTX = 1,      /* "cuda-ptx": PTX text, JIT-compiled by the driver */
    GS_KB_CUDA_SOURCE = 2,   /* "cuda-source": CUDA C when NVRTC is missing */
    GS_KB_OPENCL_SOURCE = 3, /* "opencl-source": OpenCL C */
    GS_KB_NVRTC_OUT = 4,     /* "nvrtc-out": PTX, cubin and ptxas log of one compile */
    GS_KB_COUNT_ = 5
} gs_kbackend;
const char *gs_kbackend_name(gs_kbackend b);

#define GS_KCACHE_MAGIC "GSKC"
#define GS_KCACHE_FORMAT 1u
#define GS_KCACHE_HEADER_BYTES 40
#define GS_KCACHE_MAX_PAYLOAD (256u << 20)

typedef struct gs_kcache gs_kcache;
typedef struct gs_kcache_stats {
    int64_t hits;         /* gets answered, from memory or disk */
    int64_t disk_hits;    /* of which read from disk */
    int64_t misses;
    int64_t corrupt;      /* disk entries rejected (and deleted) */
    int64_t write_errors; /* puts whose disk write failed */
    int64_t puts;
    int64_t entries;      /* entries in memory */
    int64_t bytes;        /* payload bytes in memory */
} gs_kcache_stats;

/* 64-bit FNV-1a (offset basis 0xcbf29ce484222325), the entry checksum. */
uint64_t gs_fnv1a64(const void *p, size_t n);
/* dir: the disk directory (created if missing, best effort); NULL: the
 * value of $GS_CACHE_DIR, memory only when that is unset or empty; "":
 * memory only. A directory that cannot be created or written is not an
 * error here: each put then returns GS_ERR_IO. Caller closes *out. */
gs_status gs_kcache_open(gs_ctx *ctx, const char *dir, gs_kcache **out);
void gs_kcache_close(gs_kcache *c);
/* The disk directory, or NULL when memory only. */
const char *gs_kcache_dir(const gs_kcache *c);
/* Look key up in memory, then on disk. True on a hit: *bytes (NUL-terminated
 * after *len bytes, owned by the cache, valid until close). A corrupt disk
 * entry is a miss; its description is left in ctx's message. */
bool gs_kcache_get(gs_ctx *ctx, gs_kcache *c, uint64_t key, gs_kbackend b, const void **bytes, size_t *len);
/* Store a copy in memory and, with a directory, on disk. GS_ERR_IO (naming
 * the directory and strerror) when the disk write fails; the memory entry
 * is kept either way, so callers may go on. */
gs_status gs_kcache_put(gs_ctx *ctx, gs_kcache *c, uint64_t key, gs_kbackend b, const void *bytes, size_t len);
void gs_kcache_stats_get(gs_kcache *c, gs_kcache_stats *s);
/* gs_kcache_get with single flight across the dispatchers, threads and
 * processes that share a cache directory: the one that misses an entry
 * first builds it while the others wait, then find it on disk. On a miss
 * (in memory and on disk) it takes <key>.<backend>.gsk.lock (an flock, released if
 * its holder dies), waiting at most GS_KCACHE_LOCK_WAIT_S, and looks again.
 * True on a hit (as gs_kcache_get; no lock held). False on a miss, with
 * *lock the lock's descriptor for the caller to release with
 * gs_kcache_unlock once it has built and put the entry (or failed), or -1
 * without a directory, when the lock file cannot be made, or after the wait
 * (the caller then builds the entry itself: the lock only saves work, the
 * entries stay correct without it). One hit or miss is counted either way.
 * *waited_s (may be NULL): the time spent waiting for the lock. */
#define GS_KCACHE_LOCK_WAIT_S 120.0
bool gs_kcache_get_or_lock(gs_ctx *ctx, gs_kcache *c, uint64_t key, gs_kbackend b, const void **bytes, size_t *len,
                           int *lock, double *waited_s);
/* Remove the lock file and release the lock (fd -1: nothing to do). */
void gs_kcache_unlock(gs_kcache *c, uint64_t key, gs_kbackend b, int fd);
/* The cache key of a kernel's binary: its descriptor's hash (desc_key) mixed
 * with its source text. The descriptor names the kernel, but a printer change
 * that keeps every descriptor (a new build: session 15's lane bases changed
 * the text of every mma conv's kernel, not its descriptor) must not read an
 * older build's binary from a shared cache directory. */
uint64_t gs_kcache_src_key(uint64_t desc_key, const char *src);
/* The file name of an entry (GS_ERR_UNSUPPORTED when memory only). */
gs_status gs_kcache_path(const gs_kcache *c, uint64_t key, gs_kbackend b, char *buf, size_t n);
/* Encode an entry header (GS_KCACHE_HEADER_BYTES bytes) for a payload. */
void gs_kcache_header_encode(unsigned char *h, uint64_t key, gs_kbackend b, const void *payload, size_t len);
/* gs_nvrtc_compile through cache c (NULL: a plain compile). The entry
 * (GS_KB_NVRTC_OUT) is keyed by an FNV-1a hash of the source, which carries
 * the kernel descriptor, of the name, the arch and the requested outputs, and
 * holds the PTX, the cubin and the log; a hit fills *out from it (stats
 * parsed from the log, compile_s 0) and sets *hit. A failed disk write is
 * counted by the cache and the compile still succeeds. */
gs_status gs_nvrtc_compile_cached(gs_ctx *ctx, gs_kcache *c, const char *src, const char *name, int sm, bool want_ptx,
                                  bool want_cubin, gs_nvrtc_out *out, bool *hit);

/* ---- refinement (refine.c) ----------------------------------------------
 * Measure the top-K candidates of a construction on a device for a short,
 * bounded time and keep the fastest median. Per candidate: build, one
 * warm-up launch (excluded: PoCL finishes its JIT on the first launch, CUDA
 * loads the module lazily), then timed launches with profiling events until
 * the candidate's share of the budget is spent, at least
 * GS_REFINE_MIN_RUNS and at most GS_REFINE_MAX_RUNS. The budget counts the
 * timed launches only (builds and warm-ups are reported separately). */
#define GS_REFINE_MAX 64
#define GS_REFINE_DEFAULT_MS 200.0
#define GS_REFINE_MIN_RUNS 3
#define GS_REFINE_MAX_RUNS 100

typedef struct gs_refine_cand {
    int rank;             /* candidate index in the gs_result */
    double predicted_s;   /* analytic estimate on the result's (target) profile */
    double median_s;      /* measured kernel time: median of the timed runs (NAN if none) */
    double sd_s;          /* standard deviation of the runs */
    double iqr_s;         /* interquartile range of the runs */
    double min_s, max_s;
    int runs;
    double build_s;       /* compile/build wall time */
    double warmup_s;      /* the excluded first launch */
    gs_status status;     /* GS_OK when measured */
    char error[160];      /* why not, when status != GS_OK */
} gs_refine_cand;

typedef struct gs_refine_report {
    int n;                /* candidates tried: min(K, candidates in the result) */
    int measured;         /* of which measured */
    int pick;             /* index into c[] (== rank) of the fastest median; -1 if none */
    gs_refine_cand c[GS_REFINE_MAX];
    double spearman;      /* rank correlation predicted vs measured (NAN when < 3 measured) */
    double budget_s;      /* the budget the timed launches were held to */
    double measure_s;     /* wall time of the timed launches */
    double total_s;       /* wall time of the whole refinement */
    char device[256];
    char target[32];      /* the profile the predictions are for */
    const char *backend;  /* "opencl" or "cuda" */
} gs_refine_report;

/* Index of the smallest finite, positive median; ties go to the lower index
 * (the candidate the model ranks higher). NaN, infinite, zero and negative
 * entries are skipped. -1 when none qualifies or n <= 0. */
int gs_refine_select(const double *medians, int n);
/* Median, standard deviation and interquartile range of n samples (GSL;
 * the input is not modified). GS_ERR_INVALID_ARG when n < 1. */
gs_status gs_refine_summarize(const double *samples, int n, double *median, double *sd, double *iqr);
/* Spearman rank correlation (gsl_stats_spearman); NAN when n < 3 or a
 * series is constant. */
double gs_refine_spearman(const double *a, const double *b, int n);
/* Refine on dev: OpenCL builds each candidate's source (PoCL on CPU-only
 * machines: the timings then describe the CPU, not the GPU the model
 * predicts for); CUDA compiles NVRTC cubins for the device's arch (PTX for
 * the nearest older supported arch when NVRTC lacks it) through kernel cache
 * kc (NULL: none). op NULL: the result's operator. budget_ms <= 0:
 * GS_REFINE_DEFAULT_MS. dev NULL: GS_ERR_INVALID_ARG; a device without an
 * open runtime: GS_ERR_OPENCL_MISSING or GS_ERR_CUDA_MISSING. GS_OK when at
 * least one candidate was measured (the others carry their status); else
 * the first error. */
gs_status gs_refine_device(gs_ctx *ctx, gs_kcache *kc, gs_device *dev, const gs_op *op, const gs_result *r, int K,
                           double budget_ms, gs_refine_report *out);

/* ---- dispatcher internals (dispatch.c; the public API is in gensor.h) ---- */
/* The key of op's size class in d's shape-class memo (GS_WARM_MEMO): its
 * operator class (structure, epilogue, dialect, arch), d's profile and
 * construction options, and ceil(log2(extent)) of each axis. */
uint64_t gs_dispatcher_memo_key(const gs_dispatcher *d, const gs_op *op);
/* The memo keys' salt: every byte of the profile (its strings up to their
 * end) and of the construction options. */
uint64_t gs_dispatcher_salt(const gs_hw *hw, const gs_construct_opts *co);
/* The dispatcher's kernel cache (owned by d). */
gs_kcache *gs_dispatcher_cache(gs_dispatcher *d);
/* An ETIR of another shape of the same operator fitted to op: block tiles
 * capped at the next power of two of each extent, thread tiles at the block
 * tile, vthreads at the thread tile. False when the result is malformed or
 * fails hw's resource check. */
bool gs_etir_fit_shape(const gs_hw *hw, const gs_op *op, const gs_etir *from, gs_etir *out);

#endif
