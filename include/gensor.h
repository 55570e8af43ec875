/* gensor.h — the one public header of gensor, a graph-based tensor-kernel
 * constructor (after Liu et al., "Gensor").
 *
 * Everything is reached through opaque handles. Every fallible call returns a
 * gs_status (GS_OK == 0, errors < 0); the detail of the last error is kept in
 * the gs_ctx and read with gs_ctx_errmsg(). Nothing here includes cuda.h,
 * nvrtc.h or CL/cl.h: the GPU runtimes are loaded at run time.
 *
 * Ownership: a pointer returned through an out-parameter of *_create, *_parse,
 * *_load, *_query, *_open or gs_construct* belongs to the caller, who frees it
 * with the matching *_destroy (or *_close). destroy(NULL) is a no-op. Strings
 * returned as const char * are owned by the object they came from and live as
 * long as it does.
 *
 * Threads: each function below says one of
 *   [any thread]  callable from several threads at once, each with its own
 *                 gs_ctx; objects passed as const may be shared while no
 *                 thread modifies them (ops, profiles and results are never
 *                 modified after they are made);
 *   [one thread]  the object it works on (a dispatcher, a device, a kernel,
 *                 a buffer) is used by one thread at a time: give each thread
 *                 its own, or hold a lock around the calls.
 * A gs_ctx is never shared between threads that run at the same time.
 * Dispatchers of several threads or processes may share a disk cache
 * directory. The library's only process-wide state is once-only loading
 * (libnvrtc and the CUDA driver table under a mutex, the built-in profiles'
 * self-check behind an atomic flag); tests/tsan_threads.c runs 8 threads
 * constructing and dispatching at once under ThreadSanitizer (make
 * check-tsan).
 *
 * A typical embedding: gs_op_parse -> gs_hw_load -> gs_construct ->
 * gs_kernel_create -> gs_kernel_compile (NVRTC) or gs_kernel_source (hand the
 * OpenCL or CUDA C to your own runtime); or, for shapes that change at run
 * time, gs_dispatcher_create -> gs_dispatch per shape. experiments/api_demo.c
 * is a complete program that uses this header only.
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
    GS_ERR_BAD_SHAPE = -4,     /* an extent out of range, a window larger than its input, ... (see errmsg) */
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

/* Human-readable, static message for a status. Never NULL. [any thread] */
const char *gs_status_str(gs_status s);

typedef struct gs_device gs_device; /* an open OpenCL or CUDA device (below) */

/* ---- context: carries the last error message -------------------------- */
typedef struct gs_ctx gs_ctx;
/* Create a context (NULL when out of memory). Caller owns it (gs_ctx_destroy).
 * Every ctx argument below may be NULL: the call works, the detail is lost.
 * [any thread; one ctx per thread] */
gs_ctx *gs_ctx_create(void);
/* Free a context. [one thread] */
void gs_ctx_destroy(gs_ctx *ctx);
/* Detail of the last error set on ctx ("" when none). Owned by ctx, valid
 * until its next failing call. [one thread] */
const char *gs_ctx_errmsg(const gs_ctx *ctx);

/* ---- operators --------------------------------------------------------- */
typedef struct gs_op gs_op;
/* Parse a text spec such as "gemm M=64 N=64 K=64 transA=1 alpha=2" (every
 * operator class: see docs/CLI.md, "Spec grammar"). A number's decimal point
 * is '.' whatever LC_NUMERIC the program set (setlocale), in the specs read
 * and written (gs_op_spec) and in kernel sources alike. Caller owns *out
 * (gs_op_destroy). [any thread] */
gs_status gs_op_parse(gs_ctx *ctx, const char *spec, gs_op **out);
/* Build C[M,N] = alpha*op(A)*op(B) + beta*C. Caller owns *out. [any thread] */
gs_status gs_op_create_gemm(gs_ctx *ctx, int64_t M, int64_t N, int64_t K,
                            int transA, int transB, float alpha, float beta,
                            gs_op **out);
/* A gemm's epilogue: C = relu(alpha*op(A)*op(B) + beta*C + bias[n]), each
 * part as asked (the spec's "alpha= beta= bias=1 relu=1"). */
typedef struct gs_gemm_epilogue {
    float alpha;  /* scale of the product */
    float beta;   /* scale of C's old contents (0: C is only written) */
    int bias;     /* 1: add bias[n], a vector of N floats: the kernel's buffer after C
                     (gs_op_num_buffers is then 4) */
    int relu;     /* 1: max(x, 0) last */
} gs_gemm_epilogue;
/* gs_op_create_gemm with a fused epilogue (epi NULL: alpha 1, beta 0, no
 * bias, no relu); bias and relu take 0 or 1. Caller owns *out. [any thread] */
gs_status gs_op_create_gemm_ex(gs_ctx *ctx, int64_t M, int64_t N, int64_t K, int transA, int transB,
                               const gs_gemm_epilogue *epi, gs_op **out);
/* Element types of a tensor. Every type accumulates in fp32: a kernel
 * converts its inputs on load, computes and runs the epilogue in fp32 and
 * rounds once (to nearest even) on the store. */
typedef enum gs_dtype {
    GS_DTYPE_F32 = 0,  /* IEEE binary32 (the default) */
    GS_DTYPE_F16 = 1,  /* IEEE binary16 */
    GS_DTYPE_BF16 = 2, /* bfloat16: binary32's top 16 bits */
    GS_DTYPE_COUNT
} gs_dtype;
/* The spec name of a type ("f32", "f16", "bf16"; "?" out of range) and its
 * bytes per element (0 out of range). [any thread] */
const char *gs_dtype_name(gs_dtype t);
int gs_dtype_bytes(gs_dtype t);
/* n elements of type from at src into type to at dst (not overlapping):
 * host buffers for a kernel and back. To a 16-bit type: round to nearest
 * even (overflow to inf, NaN stays NaN), as the kernels' stores round; to
 * f32: exact. bf16 and f16 travel as their 16-bit words. GS_ERR_INVALID_ARG
 * for an unknown type, a NULL buffer (n > 0), or n below 0 or beyond what a
 * buffer can hold (n * 4 bytes past PTRDIFF_MAX). [any thread] */
gs_status gs_dtype_convert(gs_ctx *ctx, gs_dtype from, const void *src, gs_dtype to, void *dst, int64_t n);
/* Give op's inputs (and bias) the type in, its output the type out: the
 * spec text gains " dtype=in" (and " out_dtype=out" when they differ) unless
 * both are f32. GS_ERR_INVALID_ARG for an unknown type, GS_ERR_UNSUPPORTED
 * (naming the operator) for a type an operator cannot take. [one thread] */
gs_status gs_op_set_dtype(gs_ctx *ctx, gs_op *op, gs_dtype in, gs_dtype out);
/* How a matrix product's f32 inputs enter the arithmetic: as they are, or
 * rounded to TF32 (10 mantissa bits, to nearest with ties away from zero,
 * as cvt.rna.tf32.f32 does: the tensor cores' input format) before the f32
 * accumulation. The spec's "math=tf32". */
typedef enum gs_math { GS_MATH_F32 = 0, GS_MATH_TF32 = 1 } gs_math;
/* Set op's math. GS_ERR_INVALID_ARG for an unknown value, or for TF32 on an
 * operator other than gemm, bgemm and conv2d or on one whose tensors are not
 * all f32. [one thread] */
gs_status gs_op_set_math(gs_ctx *ctx, gs_op *op, gs_math m);
/* Free an operator. [one thread] */
void gs_op_destroy(gs_op *op);
/* Canonical spec string of the operator. Owned by op. [any thread] */
const char *gs_op_spec(const gs_op *op);
/* Useful floating-point work of the operator (2*M*N*K for gemm). [any thread] */
double gs_op_flops(const gs_op *op);
/* The buffers a kernel of op takes, in argument order: the inputs, the
 * output, then the bias vector when the operator has one. 0 for NULL.
 * [any thread] */
int gs_op_num_buffers(const gs_op *op);
/* Elements (dense row-major) of buffer i; 0 when i is out of range.
 * [any thread] */
int64_t gs_op_buffer_elems(const gs_op *op, int i);
/* The element type of buffer i (inputs and bias: the input type; the
 * output: the output type) and its size in bytes (elements times the
 * type's bytes; 0 out of range). [any thread] */
gs_dtype gs_op_buffer_dtype(const gs_op *op, int i);
int64_t gs_op_buffer_bytes(const gs_op *op, int i);
/* Name of buffer i ("A", "B", "C", "X", "bias", ...; "" out of range). Owned
 * by op. [any thread] */
const char *gs_op_buffer_name(const gs_op *op, int i);

/* ---- models: ONNX import ----------------------------------------------- *
 * A model file in, its nodes out as operators: gs_model_load reads the file
 * (a protobuf reader of gensor's own: no new dependency), gs_model_bind_dim
 * gives each symbolic dim of the inputs a size ("batch" = 8), and
 * gs_model_import propagates the shapes from the inputs, folds a batch norm
 * into the conv before it, fuses a Relu into the kernel before it, and maps
 * each node to one gensor operator or lists it with the reason it is not
 * mapped. The ops and strings handed out are owned by the model, valid until
 * the next gs_model_import, gs_model_bind_dim or gs_model_destroy. */
typedef struct gs_model gs_model;
/* Read an ONNX model file; external data files are read relative to its
 * directory. A malformed or truncated file is GS_ERR_PARSE with the byte
 * offset and what was being read. Caller owns *out (gs_model_destroy).
 * [any thread] */
gs_status gs_model_load(gs_ctx *ctx, const char *path, gs_model **out);
/* The same from n bytes in memory (copied as needed: data may be freed after
 * the call). dir is where external data lives; NULL refuses external data.
 * Caller owns *out. [any thread] */
gs_status gs_model_load_buffer(gs_ctx *ctx, const void *data, size_t n, const char *dir, gs_model **out);
/* Free a model and everything it handed out. [one thread] */
void gs_model_destroy(gs_model *m);
/* The default-domain opset the model imports (0 when it names none). [any thread] */
int64_t gs_model_opset(const gs_model *m);
/* The symbolic dims of the graph inputs ("batch", "seq"): how many, and the
 * name of the i-th (owned by m; NULL out of range). [any thread] */
int gs_model_num_dims(const gs_model *m);
const char *gs_model_dim_name(const gs_model *m, int i);
/* Give symbolic dim name the size value (1..2^31-1); GS_ERR_INVALID_ARG
 * naming the model's dims when it has no such dim. Undoes the last import.
 * [one thread: m] */
gs_status gs_model_bind_dim(gs_ctx *ctx, gs_model *m, const char *name, int64_t value);
/* Propagate shapes and map the nodes. GS_ERR_INVALID_ARG naming the first
 * input dim that is unbound; a node that cannot be mapped is not an error
 * (it is listed as unsupported). [one thread: m] */
gs_status gs_model_import(gs_ctx *ctx, gs_model *m);
/* The graph's nodes, in file order. [any thread] */
int gs_model_num_nodes(const gs_model *m);
typedef enum gs_model_node_kind {
    GS_MODEL_KERNEL = 0,     /* one gensor kernel: op, bindings */
    GS_MODEL_FUSED = 1,      /* done by the kernel of node fused_into (a folded batch norm, a Relu) */
    GS_MODEL_VIEW = 2,       /* no kernel: a reshape of its input's buffer, or a constant (reason says which) */
    GS_MODEL_UNSUPPORTED = 3 /* no kernel: reason says why */
} gs_model_node_kind;
typedef struct gs_model_binding {
    const char *buffer; /* the kernel's buffer, as gs_op_buffer_name names it ("I", "F", "O", "bias", ...) */
    const char *tensor; /* the model tensor it reads, or (the output) writes */
    int constant;       /* 1: a constant of the model or of the import (gs_model_constant) */
    int output;         /* 1: the buffer the kernel writes (its initial contents: out_init, or any) */
} gs_model_binding;
typedef struct gs_model_node {
    const char *name, *op_type;
    gs_model_node_kind kind;
    const gs_op *op;         /* GS_MODEL_KERNEL: the operator; else NULL */
    int fused_into;          /* GS_MODEL_FUSED: the node whose kernel does this one's work; else -1 */
    const char *reason;      /* GS_MODEL_UNSUPPORTED and GS_MODEL_VIEW: why / what; else NULL */
    const char *out_init;    /* GS_MODEL_KERNEL with beta != 0, or one that writes a slice of its output (a
                                Concat's part after the first): the tensor the output buffer starts as */
    int nbindings;           /* GS_MODEL_KERNEL: gs_op_num_buffers(op), in its buffer order; GS_MODEL_VIEW:
                                the viewed tensor ("in") and the view ("out"), or the constant ("out") */
    const gs_model_binding *bindings;
} gs_model_node;
/* Node i of an imported model into *out (its pointers owned by m).
 * [any thread, after gs_model_import] */
gs_status gs_model_node_get(gs_ctx *ctx, const gs_model *m, int i, gs_model_node *out);
/* The data of a floating constant as floats: an initializer, a Constant
 * node's value or a weight the import derived (a folded batch norm). A
 * FLOAT16 or BFLOAT16 constant's values are exact floats (every such value
 * is one); gs_model_tensor_dtype gives its type, and a runner makes the
 * kernel's buffer with gs_dtype_convert from f32 to gs_op_buffer_dtype
 * (exact for such a constant; a derived weight of a half model is computed
 * in f32 and rounds there once). *data owned by m. GS_ERR_UNSUPPORTED for
 * an integer constant. [any thread, after gs_model_import] */
gs_status gs_model_constant(gs_ctx *ctx, const gs_model *m, const char *name, const float **data, int64_t *n);
/* The element type of a floating tensor of the imported model (a graph
 * input or output, a constant, a node's output): FLOAT is f32, FLOAT16 f16,
 * BFLOAT16 bf16. Each kernel reads and writes its tensors' type (its
 * gs_op_buffer_dtype); a Cast between these types is a conversion kernel.
 * GS_ERR_UNSUPPORTED for another type (INT64), GS_ERR_INVALID_ARG for a
 * name the import gave no type. [any thread, after gs_model_import] */
gs_status gs_model_tensor_dtype(gs_ctx *ctx, const gs_model *m, const char *name, gs_dtype *out);

/* ---- hardware profiles ------------------------------------------------- */
typedef struct gs_hw gs_hw;
/* Load a built-in profile by name ("rtx3090") or a JSON file by path.
 * Caller owns *out (gs_hw_destroy). [any thread] */
gs_status gs_hw_load(gs_ctx *ctx, const char *name_or_path, gs_hw **out);
/* Build a profile from JSON text in the file format: every field, or
 * "base": "NAME" and the fields that differ (named by its "name" field, else
 * "NAME+custom"). Each rule is checked.
 * Caller owns *out (gs_hw_destroy). [any thread] */
gs_status gs_hw_parse(gs_ctx *ctx, const char *json, gs_hw **out);
/* The profile of an open device ("--hw auto"): a CUDA device's attributes;
 * an OpenCL device's own numbers with the rest taken from the built-in
 * fallback (NULL: "rtx3090"). Caller owns *out (gs_hw_destroy). [one thread:
 * dev] */
gs_status gs_hw_query(gs_ctx *ctx, gs_device *dev, const char *fallback, gs_hw **out);
/* Write the profile as JSON to path (atomically: temp file + rename).
 * [any thread] */
gs_status gs_hw_save(gs_ctx *ctx, const gs_hw *hw, const char *path);
/* Free a profile. [one thread] */
void gs_hw_destroy(gs_hw *hw);
/* Number of built-in profiles and the name of the i-th (static strings;
 * NULL out of range). [any thread] */
int gs_hw_builtin_count(void);
const char *gs_hw_builtin_name(int i);
/* The profile's name. Owned by hw. [any thread] */
const char *gs_hw_name(const gs_hw *hw);
/* CUDA compute capability as major*10+minor (86 for sm_86). [any thread] */
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

/* The forms gs_construct may give an operator (gs_construct_opts.conv_form). */
typedef enum gs_conv_form {
    GS_FORM_DIRECT = 0, /* the operator's own loop nest: the candidates are states of the operator
                           passed in (the default) */
    GS_FORM_AUTO = 1    /* a 1x1, stride-1, unpadded conv2d is also constructed as the matrix
                           product it is (over the same buffers: NHWC a gemm over the pixels, NCHW
                           one per image), and the faster predicted form is kept. The result's
                           candidates are then states of that form (gs_result_form), and its
                           kernels take the form's extents; gs_kernel_run takes the conv and
                           maps it onto the form */
} gs_conv_form;

/* Names of a policy ("paper", "balanced", "model") and a strategy ("markov",
 * "tree", "exhaustive", "random"); "?" out of range. Static. [any thread] */
const char *gs_policy_name(gs_policy p);
const char *gs_strategy_name(gs_strategy s);
/* The policy or strategy of a name; GS_ERR_INVALID_ARG with "unknown policy
 * 'X' (paper, balanced, model)" (or the strategies) otherwise. [any thread] */
gs_status gs_policy_parse(gs_ctx *ctx, const char *name, gs_policy *out);
gs_status gs_strategy_parse(gs_ctx *ctx, const char *name, gs_strategy *out);

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
    gs_conv_form conv_form; /* GS_FORM_DIRECT (default) or GS_FORM_AUTO */
    int split_atomic;    /* 1: split-K blocks meet by float atomics (sums only): fewer bytes,
                            but NOT deterministic (the order of the adds varies from run to
                            run). 0 (default): a fixed-order sum, bitwise reproducible */
    int threads;         /* workers for the walk's chains, the polishes and a 1x1 conv's two
                            forms (the calling thread is one): 0 (default) = up to the online
                            CPUs, at most 4, the helpers started only when the work left in a
                            phase is worth them (docs/CONSTRUCTION.md, "Workers"); 1 = the
                            calling thread only; N = N workers at once; at most 64. The result
                            is the same for every value, only the time changes */
    int reserved;        /* 0 (keeps the struct free of padding: the dispatcher hashes it whole) */
} gs_construct_opts;

/* Defaults: seed 1, top_k 5, chains 8, T from 1 down to 2^-40; the default
 * policy is documented in docs/CONSTRUCTION.md (chosen by experiments/). [any thread] */
void gs_construct_opts_default(gs_construct_opts *o);

typedef struct gs_result gs_result;
/* Construct kernels for op on hw (opts NULL: the defaults). The result
 * copies op and hw. Caller owns *out (gs_result_destroy). [any thread]; it
 * needs under 128 KB of the calling thread's stack (musl's default for a
 * new thread; a test constructs on a thread of 112 KB on x86-64, 128 KB on
 * aarch64, the least glibc allows there; about 80 KB on x86-64),
 * and its helpers (opts.threads) start with the system's default stack. */
gs_status gs_construct(gs_ctx *ctx, const gs_op *op, const gs_hw *hw,
                       const gs_construct_opts *opts, gs_result **out);
/* A result with one candidate, the configuration cfg in config form
 * ("bm=64,bn=64,bk=16,tm=8,tn=8,vm=1,vn=1,sa=1,sb=1", see docs/CLI.md), checked
 * against hw's limits and estimated; no walk runs. Caller owns *out
 * (gs_result_destroy). [any thread] */
gs_status gs_construct_config(gs_ctx *ctx, const gs_op *op, const gs_hw *hw, const char *cfg,
                              gs_result **out);
/* The form the result's kernels compute the operator in: its spec when it
 * is the operator's own loop nest, or the rewritten operator's (for a 1x1
 * conv kept as a matrix product, "matmul N=.. K=.. HW=.. C=.. ..."). The
 * kernels take that form's extents as arguments; gs_kernel_run passes them.
 * Static while r lives. [any thread] */
const char *gs_result_form(const gs_result *r);
/* Free a result. [one thread] */
void gs_result_destroy(gs_result *r);
/* Number of ranked candidates (<= top_k). Candidate 0 is the best. [any thread] */
int gs_result_count(const gs_result *r);
/* Predicted time in seconds of candidate i under the analytic estimate (-1
 * out of range). [any thread] */
double gs_result_predicted_s(const gs_result *r, int i);
/* Wall time the construction took, in seconds. [any thread] */
double gs_result_construct_s(const gs_result *r);
/* One-line description of candidate i's ETIR ("" out of range). Owned by r.
 * [any thread] */
const char *gs_result_describe(const gs_result *r, int i);
/* Candidate i in config form (gs_construct_config reads it back), written
 * into buf[n]; GS_ERR_INVALID_ARG when i is out of range or n too small.
 * [any thread] */
gs_status gs_result_config(const gs_result *r, int i, char *buf, size_t n);
/* Candidate i's kernel plan on one line (the plan: line of its source:
 * copy modes, vector widths, layout, stages, launch bounds), into buf[n].
 * [any thread] */
gs_status gs_result_plan(const gs_result *r, int i, char *buf, size_t n);
/* How candidate i launches on the result's operator: a 1-D grid of *grid
 * blocks of *block threads using *smem_bytes of shared memory (each may be
 * NULL). [any thread] */
gs_status gs_result_launch(const gs_result *r, int i, int64_t *grid, int64_t *block, int64_t *smem_bytes);

/* One argument of a kernel, as gs_result_launch_args lists them: every
 * argument in the kernel's order (its signature's). */
typedef enum gs_arg_role {
    GS_ARG_INPUT = 0,  /* an input tensor's buffer (float, read) */
    GS_ARG_OUTPUT,     /* the output buffer (float; also read when beta != 0) */
    GS_ARG_BIAS,       /* the bias vector (float, read) */
    GS_ARG_EXTENT,     /* an axis' extent (int) */
    GS_ARG_SHAPE,      /* one dimension of a tensor's shape (int) */
    GS_ARG_ALPHA,      /* alpha (float) */
    GS_ARG_BETA,       /* beta (float) */
    GS_ARG_WORKSPACE   /* split-K's workspace (a buffer of int counters, then float partials):
                          zero it before the first launch; each launch leaves it zeroed for the
                          next. One per launch in flight */
} gs_arg_role;
typedef struct gs_launch_arg {
    char name[16];     /* its name in the signature: in0, out, bias, E0, S1_0, alpha, beta, ws */
    gs_arg_role role;
    const char *type;  /* "float*" (a device buffer), "int" or "float" (by value); static */
    int index;         /* the tensor (input, output, shape: inputs first, the output last) or
                          the axis (extent); -1 otherwise */
    int dim;           /* GS_ARG_SHAPE: the dimension of that tensor; -1 otherwise */
    int64_t bytes;     /* a buffer's bytes for the result's operator; a scalar's size (4) */
    int64_t elems;     /* a buffer's 4-byte elements (bytes / 4); 1 for a scalar */
    int64_t ivalue;    /* GS_ARG_EXTENT and GS_ARG_SHAPE: the value */
    double fvalue;     /* GS_ARG_ALPHA and GS_ARG_BETA: the value */
    int zero_first;    /* 1: must be zero before the first launch (the workspace) */
} gs_launch_arg;
#define GS_LAUNCH_MAX_ARGS 48
/* The arguments of candidate i's kernel on the result's operator, in
 * order, into args[cap] (GS_LAUNCH_MAX_ARGS is always enough); *n gets
 * their count. GS_ERR_INVALID_ARG when i is out of range, args or n is
 * NULL, or cap is too small. [any thread] */
gs_status gs_result_launch_args(const gs_result *r, int i, gs_launch_arg *args, int cap, int *n);

/* ---- kernels ----------------------------------------------------------- */
typedef enum gs_dialect { GS_DIALECT_CUDA = 0, GS_DIALECT_OPENCL = 1 } gs_dialect;

/* Emit the source of candidate i in a dialect (CUDA C for the profile's
 * sm_XX, or OpenCL C 1.2). *out is malloc'd; the caller frees it with free().
 * [any thread] */
gs_status gs_kernel_emit(gs_ctx *ctx, const gs_result *r, int i,
                         gs_dialect d, char **out);

/* A kernel: one candidate emitted in one dialect, which can be compiled
 * (NVRTC) and run on a device. Its extents are runtime arguments, so it runs
 * on any shape of the same operator. */
typedef struct gs_kernel gs_kernel;
/* Emit candidate i of r in dialect d; CUDA for sm_<arch> (0: the profile's
 * sm; see gs_nvrtc_nearest_arch), OpenCL takes arch 0. Caller owns *out
 * (gs_kernel_destroy). [any thread] */
gs_status gs_kernel_create(gs_ctx *ctx, const gs_result *r, int i, gs_dialect d, int arch,
                           gs_kernel **out);
/* Free a kernel (and what it built or loaded on a device). [one thread] */
void gs_kernel_destroy(gs_kernel *k);
/* The source text and the entry point's name (gs_<16 hex digits>). Owned by
 * k. [any thread] */
const char *gs_kernel_source(const gs_kernel *k);
const char *gs_kernel_name(const gs_kernel *k);
/* The descriptor hash (the cache key; equal keys, identical kernels), and
 * the sm_XX a CUDA kernel is for (0 for OpenCL). [any thread] */
uint64_t gs_kernel_key(const gs_kernel *k);
int gs_kernel_arch(const gs_kernel *k);

/* What ptxas reports for a compiled CUDA kernel. */
typedef struct gs_kernel_stats {
    int arch;                  /* sm_XX compiled for */
    int registers;             /* registers per thread */
    int64_t spill_store_bytes; /* register spills (0 for a healthy kernel) */
    int64_t spill_load_bytes;
    int64_t smem_bytes;        /* static shared memory */
    int64_t stack_bytes;       /* stack frame */
    double compile_s;          /* NVRTC wall time */
} gs_kernel_stats;
/* Compile a CUDA kernel with NVRTC (loaded at run time) to a cubin and PTX
 * for its arch; *st (may be NULL) gets ptxas' figures. GS_ERR_NVRTC_MISSING
 * when libnvrtc cannot be loaded (ctx says where it looked),
 * GS_ERR_ARCH_UNSUPPORTED naming the nearest arch, GS_ERR_NVRTC_COMPILE
 * with the log's head. No GPU is needed. [one thread: k] */
gs_status gs_kernel_compile(gs_ctx *ctx, gs_kernel *k, gs_kernel_stats *st);
/* The cubin of a compiled kernel (NULL before gs_kernel_compile), its
 * length in *len (may be NULL), and the NVRTC log with ptxas' report ("").
 * Owned by k. [any thread] */
const void *gs_kernel_binary(const gs_kernel *k, size_t *len);
const char *gs_kernel_log(const gs_kernel *k);
/* The arch the installed NVRTC supports nearest to sm (sm itself when it is
 * supported, else the smallest above, else the largest); 0 when NVRTC
 * cannot be loaded (ctx says why). [any thread] */
int gs_nvrtc_nearest_arch(gs_ctx *ctx, int sm);

/* ---- devices: run, refine ----------------------------------------------- */
typedef enum gs_backend { GS_BACKEND_OPENCL = 0, GS_BACKEND_CUDA = 1 } gs_backend;
/* Open a device. OpenCL: the first GPU, else a CPU device such as PoCL
 * ($GS_CL_DEVICE=cpu|gpu|NAME picks; index must be 0). CUDA: device index,
 * through libcuda.so.1 loaded at run time. Without one: GS_ERR_OPENCL_MISSING,
 * or GS_ERR_CUDA_MISSING with "no CUDA device: measurement-free mode (why)".
 * Caller owns *out (gs_device_close). [any thread] */
gs_status gs_device_open(gs_ctx *ctx, gs_backend b, int index, gs_device **out);
/* Close a device; its buffers and the kernels run on it must be freed
 * first. [one thread] */
void gs_device_close(gs_device *dev);
/* The device's name (owned by dev) and backend. [one thread: dev] */
const char *gs_device_name(const gs_device *dev);
gs_backend gs_device_backend(const gs_device *dev);

typedef struct gs_buffer gs_buffer;
/* A device buffer of bytes, filled from host when host is not NULL. Caller
 * owns *out (gs_buffer_destroy, before the device is closed). [one thread: dev] */
gs_status gs_buffer_create(gs_ctx *ctx, gs_device *dev, size_t bytes, const void *host, gs_buffer **out);
/* Copy bytes from the buffer to host (blocking). [one thread: dev] */
gs_status gs_buffer_read(gs_ctx *ctx, gs_buffer *b, void *host, size_t bytes);
/* Copy bytes from host into the buffer's start (blocking; host may be
 * reused on return). GS_ERR_INVALID_ARG when bytes exceeds the buffer.
 * [one thread: dev] */
gs_status gs_buffer_write(gs_ctx *ctx, gs_buffer *b, const void *host, size_t bytes);
/* Free a buffer. [one thread: its device] */
void gs_buffer_destroy(gs_buffer *b);
/* Run k on dev for op's shape (op: the result's operator or another shape of
 * it) with bufs in gs_op_buffer order; k's dialect must be the device's. The
 * first run builds (OpenCL) or compiles and loads (CUDA: the cubin when k is
 * for the device's sm_XX, its PTX when k is for an older arch) the kernel on
 * dev; a split-K kernel's workspace is kept by k. Waits for it;
 * *elapsed_s (may be NULL) gets the kernel time from device events.
 * A kernel of a 1x1 conv's matmul form (GS_FORM_AUTO) takes the conv itself
 * (the one constructed, or a 1x1 conv of another shape with the same
 * structure) and its buffers; it refuses a conv with a larger window, a
 * stride or padding. [one thread: dev and k] */
gs_status gs_kernel_run(gs_ctx *ctx, gs_device *dev, gs_kernel *k, const gs_op *op, gs_buffer *const *bufs,
                        int nbufs, double *elapsed_s);

/* Refinement: time the top K candidates of r on dev (each built, launched
 * once untimed, then timed launches sharing budget_ms; <= 0: 200 ms) and
 * keep the fastest median: *pick gets its index, medians (K entries, may be
 * NULL) each candidate's median in seconds (NAN when it failed). A CPU
 * OpenCL device times the CPU, not a GPU. No device (dev NULL):
 * GS_ERR_INVALID_ARG "refine: no device (open one with gs_device_open)".
 * [one thread: dev] */
gs_status gs_refine(gs_ctx *ctx, gs_device *dev, const gs_result *r, int K, double budget_ms, int *pick,
                    double *medians);

/* ---- dynamic shapes: the dispatcher -------------------------------------
 * A runtime serving shapes it has not seen (BERT with varying sequence
 * length, DietCode's workloads) keeps one dispatcher per hardware profile
 * and dialect. gs_dispatch() constructs a kernel for the operator's
 * extents, hashes its descriptor (op structure, ETIR, dialect, arch and
 * codegen version; extents are runtime arguments) and compiles only when
 * that descriptor has not been compiled before: NVRTC cubin for CUDA (the
 * CUDA source when NVRTC is missing), OpenCL source built on the attached
 * device for OpenCL. Compiled artifacts go to a kernel cache in memory and,
 * optionally, on disk. A shape seen before skips the construction, and by
 * default (GS_WARM_MEMO) so does a new shape near one seen before whose
 * kernel is compiled already.
 * Not thread-safe: one dispatcher per thread, or a lock around it;
 * dispatchers of several threads or processes may share cache_dir. There
 * NVRTC compiles a kernel once: the first dispatcher to miss it compiles
 * under a lock file beside the entry (<key>.<backend>.gsk.lock, an flock; local
 * file systems), and the others wait for it (at most 120 s) and read it from
 * the disk (disk_hit). */
typedef struct gs_dispatcher gs_dispatcher;

typedef enum gs_warm_start {
    GS_WARM_OFF = 0,       /* construct every new shape from scratch (the walk, ~5 ms for a
                              gemm) */
    GS_WARM_CONSTRUCT = 1, /* ETO-style: the state of the nearest dispatched shape of the
                              same operator (log-distance of extents) competes with a
                              reduced construction (warm_chains chains); the faster
                              prediction is kept */
    GS_WARM_REUSE = 2,     /* reuse the nearest shape's state whenever it fits; construct
                              only when none fits (cheapest, loses the most) */
    GS_WARM_MEMO = 3       /* default: the shape-class memo. A size class is the operator
                              class, the profile, the construction options and
                              ceil(log2(extent)) of each axis. A new shape whose class or a
                              neighbouring one (each axis within one class) was seen gets
                              those classes' states, fitted to it and polished (~1 ms); when
                              the best one's kernel is compiled already, no walk runs.
                              Otherwise a compile is due anyway: the walk runs and the
                              faster of its pick and the memo's is kept. The kernels depend
                              on the order of the shapes dispatched before (the same
                              sequence gives the same kernels). Measured on DietCode's
                              workloads: docs/CHANGELOG.md */
} gs_warm_start;

typedef struct gs_dispatch_opts {
    gs_dialect dialect;          /* GS_DIALECT_CUDA (default) or GS_DIALECT_OPENCL */
    int arch;                    /* CUDA: sm_XX to compile for; 0: the profile's (or the
                                    nearest the installed NVRTC supports) */
    const char *cache_dir;       /* disk cache: a directory; NULL: $GS_CACHE_DIR if set;
                                    "": memory only */
    gs_construct_opts construct; /* options of every construction */
    gs_warm_start warm_start;    /* default GS_WARM_MEMO (see experiments/dynamic.c) */
    int warm_chains;             /* chains of a warm-started construction [4] */
    double reuse_tol;            /* among a construction's ranked candidates, prefer one
                                    already compiled when its prediction is within this
                                    fraction of the best: 0 (default) takes exact ties
                                    only, so nothing is lost under the model; < 0: never */
    int compile;                 /* 1 (default): compile on a miss; 0: construct only */
} gs_dispatch_opts;

/* Defaults: CUDA, the profile's arch, $GS_CACHE_DIR, top_k 8, the
 * shape-class memo (GS_WARM_MEMO), exact ties reused, compile on a miss.
 * [any thread] */
void gs_dispatch_opts_default(gs_dispatch_opts *o);

/* Create a dispatcher for a profile (copied; opts NULL: the defaults).
 * Every option, the construction's included, is checked here:
 * GS_ERR_INVALID_ARG names the one out of range. Caller owns *out
 * (gs_dispatcher_destroy). [any thread] */
gs_status gs_dispatcher_create(gs_ctx *ctx, const gs_hw *hw, const gs_dispatch_opts *opts,
                               gs_dispatcher **out);
/* Free a dispatcher, its kernels and its in-memory cache. [one thread] */
void gs_dispatcher_destroy(gs_dispatcher *d);
/* Attach an open device of the dispatcher's dialect: kernels are then built
 * (OpenCL) or compiled and loaded (CUDA: a cubin for the device's arch, or
 * PTX of an older one) on a miss, and gs_dispatch_run launches them. Attach
 * before the first dispatch; dev must outlive d. [one thread: d and dev] */
gs_status gs_dispatcher_attach(gs_ctx *ctx, gs_dispatcher *d, gs_device *dev);

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
    int constructed;          /* 1: a construction ran (0: shape seen before, reused, or memo) */
    int warm;                 /* 1: the warm-start (cached) state was kept */
    int memo;                 /* 1: GS_WARM_MEMO served this shape from its shape-class memo,
                                 no walk */
    double predicted_s;       /* estimate of this kernel on this shape */
    double construct_s;       /* spent constructing in this call (the walk, and
                                 GS_WARM_MEMO's fits and polish) */
    double compile_s;         /* spent compiling and loading in this call, with any wait
                                 for another dispatcher's compile in the shared cache_dir */
    double dispatch_s;        /* whole call */
    const char *binary_kind;  /* "cuda-cubin", "cuda-source", "opencl-source", ...; NULL
                                 when compile == 0 */
    const void *binary;       /* the artifact (NUL-terminated after binary_len bytes);
                                 owned by the dispatcher */
    size_t binary_len;
    void *program;            /* the kernel built on the attached device (an internal runtime
                                 object; NULL without a device): launch with gs_dispatch_run */
    char config[200];         /* the configuration, e.g. bm=64,bn=64,... */
    int64_t workspace_bytes;  /* split-K (config split=N): launch with a device buffer of this
                                 many bytes after the float arguments, zeroed before its first
                                 use; each launch leaves it ready for the next. One buffer per
                                 launch in flight. 0: no workspace argument. gs_dispatch_run
                                 passes the dispatcher's own: this is for a runtime of yours */
} gs_kernel_handle;

/* Dispatch op: fills *out (valid until d is destroyed). [one thread: d] */
gs_status gs_dispatch(gs_ctx *ctx, gs_dispatcher *d, const gs_op *op, gs_kernel_handle *out);
/* Launch the kernel of h, which gs_dispatch filled for op, on d's attached
 * device, with bufs in gs_op_buffer order (inputs, output, then the bias
 * when op has one), each on that device and large enough for op. A split-K
 * kernel's workspace is kept by d, as gs_kernel_run's is by its kernel:
 * made (zeroed) by the first launch that needs one, grown for a larger
 * shape, left ready by each launch for the next; freed with d. Waits;
 * *elapsed_s (may be NULL) gets the kernel time from device events.
 * GS_ERR_INVALID_ARG without an attached device, or when h is not d's
 * kernel for op. [one thread: d and its device] */
gs_status gs_dispatch_run(gs_ctx *ctx, gs_dispatcher *d, const gs_op *op, const gs_kernel_handle *h,
                          gs_buffer *const *bufs, int nbufs, double *elapsed_s);

typedef struct gs_dispatch_stats {
    int64_t dispatches;       /* gs_dispatch calls that succeeded */
    int64_t shapes;           /* distinct shapes seen */
    int64_t constructions;    /* gs_construct runs */
    int64_t compiles;         /* NVRTC compilations or OpenCL builds */
    int64_t hits;             /* dispatches whose kernel was compiled already */
    int64_t disk_hits;        /* kernels read from the disk cache instead of compiled */
    int64_t kernels;          /* distinct kernels (descriptors) held */
    int64_t warm_kept;        /* warm start: the cached state won */
    int64_t memo_hits;        /* GS_WARM_MEMO: new shapes served by the memo, no walk */
    int64_t tie_reused;       /* an already-compiled candidate replaced the top one */
    int64_t cache_corrupt;    /* disk entries found corrupt and rebuilt */
    int64_t cache_write_errors;
    double construct_ms;      /* total construction time (wall clock; the walks, and
                                 GS_WARM_MEMO's fits and polish) */
    double construct_cpu_ms;  /* the same in CPU time of the calling thread */
    double compile_ms;        /* total compile time */
    double dispatch_ms;       /* total time in gs_dispatch */
} gs_dispatch_stats;
/* The dispatcher's counters so far into *out (zeros for NULL d). [one thread: d] */
void gs_dispatch_stats_get(const gs_dispatcher *d, gs_dispatch_stats *out);

#ifdef __cplusplus
}
#endif
#endif /* GENSOR_H */
