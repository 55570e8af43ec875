/* ir.h — operator IR, ETIR states and their analysis. Knows nothing about
 * hardware: only libc and util/ are used here. */
#ifndef GS_IR_H
#define GS_IR_H

#include "gensor.h"
#include "util/util.h"
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* ---- operator IR --------------------------------------------------------
 * An operator is a loop nest given as data: axes, tensors indexed by affine
 * maps of the axes, a combine and an epilogue. The output tensor is indexed
 * by spatial axes only; inputs may use any axis. Tensors are dense and
 * row-major. An access outside a tensor's shape reads the combine's identity
 * (zero padding for sums, -inf for max), which is how conv padding works. */
#define GS_MAX_AXES 8
#define GS_MAX_TENSORS 4 /* inputs + the output */
#define GS_MAX_DIMS 6
#define GS_NAME_LEN 12
/* Bytes of an operator's canonical spec. The widest one, a conv2d with every
 * key and 10-digit values, act=thresholdedrelu and -1.17549435e-38 for each
 * float, is under 420 characters; 255 cut real ones (a grouped, dilated,
 * padded NHWC conv with an activation, a clip and two element types lost its
 * out_dtype= and parsed back as another operator). */
#define GS_SPEC_LEN 512

/* ---- element types -------------------------------------------------------
 * The type table: one row per gs_dtype, read by everything that sizes bytes
 * (plan, model), spells a type (the printers) or converts host data
 * (verify, refine, the experiments). Every type accumulates in f32. */
typedef struct gs_dtype_info {
    const char *name;      /* spec name: "f32", "f16", "bf16" */
    int bytes;             /* storage bytes per element */
    const char *cuda_t;    /* CUDA storage spelling ("float", "unsigned short") */
    const char *opencl_t;  /* OpenCL storage spelling ("float", "ushort": no cl_khr_fp16 needed) */
    uint32_t zero_bits;    /* the storage bits of +0 */
    uint32_t neg_inf_bits; /* the storage bits of -inf (a max's identity) */
    uint32_t pos_inf_bits; /* the storage bits of +inf (a min's identity) */
    int mant_bits;         /* explicit mantissa bits (23, 10, 7): unit roundoff 2^-(mant_bits+1) */
    gs_dtype acc;          /* the accumulator type (f32 for all) */
} gs_dtype_info;
extern const gs_dtype_info gs_dtypes[GS_DTYPE_COUNT];
/* The row of t (f32's for an out-of-range t). Inline: the plan and the
 * model size bytes through it for every state a construction prices. */
static inline const gs_dtype_info *gs_dtype_row(int t) {
    return t >= 0 && t < GS_DTYPE_COUNT ? &gs_dtypes[t] : &gs_dtypes[GS_DTYPE_F32];
}
/* Parse a spec name; false when unknown. */
bool gs_dtype_parse(const char *name, gs_dtype *t);
/* Unit roundoff of t: 2^-(mant_bits+1). */
double gs_dtype_unit_roundoff(gs_dtype t);
/* Exact host conversions, round to nearest even on the way down (NaN stays
 * NaN, quiet; overflow to inf; subnormals kept): binary32 <-> binary16 and
 * bfloat16 bits. */
uint16_t gs_f32_to_f16(float x);
float gs_f16_to_f32(uint16_t h);
uint16_t gs_f32_to_bf16(float x);
float gs_bf16_to_f32(uint16_t h);
/* x rounded to TF32 as cvt.rna.tf32.f32 does: to 10 mantissa bits, to
 * nearest with ties away from zero (NaN and inf as they are). */
float gs_tf32_round(float x);
/* x rounded to t and back (f32: x itself). */
float gs_dtype_round(gs_dtype t, float x);
/* Pack n floats into t's storage (dst: n * bytes) and back. */
void gs_dtype_pack(gs_dtype t, const float *src, void *dst, int64_t n);
void gs_dtype_unpack(gs_dtype t, const void *src, float *dst, int64_t n);

typedef enum gs_axis_kind { GS_AXIS_SPATIAL = 0, GS_AXIS_REDUCE = 1 } gs_axis_kind;

/* Operator structs have no padding (ir/op.c asserts it): gs_op_key hashes
 * their bytes whole, so every byte must be a field's. */
typedef struct gs_axis {
    char name[GS_NAME_LEN];
    gs_axis_kind kind;
    int64_t extent;
} gs_axis;

/* index = sum_a coeff[a] * axis_a + offset */
typedef struct gs_affine {
    int64_t coeff[GS_MAX_AXES];
    int64_t offset;
} gs_affine;

typedef struct gs_tensor {
    char name[GS_NAME_LEN];
    int ndim;
    int64_t shape[GS_MAX_DIMS];
    gs_affine idx[GS_MAX_DIMS];
} gs_tensor;

typedef enum gs_combine {
    GS_COMBINE_MAC = 0, /* acc += prod(inputs) */
    GS_COMBINE_SUM = 1, /* acc += input (single input); alpha scales (mean, avg pool) */
    GS_COMBINE_MAX = 2, /* acc = max(acc, input) */
    GS_COMBINE_ADD = 3, /* acc += sum(inputs) (elementwise add) */
    GS_COMBINE_MIN = 4, /* acc = min(acc, input); NaN propagates as in max */
    GS_COMBINE_SUB = 5, /* acc += input0 - input1 (elementwise, no reduce axis) */
    GS_COMBINE_DIV = 6, /* acc += input0 / input1 (elementwise, no reduce axis) */
    GS_COMBINE_MAXE = 7, /* acc += max of the inputs (elementwise; NaN propagates) */
    GS_COMBINE_MINE = 8, /* acc += min of the inputs (elementwise; NaN propagates) */
    GS_COMBINE_POW = 9,  /* acc += pow(input0, input1) (elementwise) */
    GS_COMBINE_PRELU = 10 /* acc += input0 < 0 ? input0 * input1 : input0 (elementwise) */
} gs_combine;
/* The element-wise combines of two or more inputs, no reduce axis allowed. */
static inline bool gs_combine_eltwise(gs_combine c) {
    return c == 5 || c == 6 || c == 7 || c == 8 || c == 9 || c == 10;
}

/* ---- unary functions ----------------------------------------------------
 * One function applied to the output as an epilogue step (GS_EPI_UNARY),
 * after the bias and before relu and clip: an element-wise op of its own
 * (the spec's "unary") or fused after a gemm, conv or matmul (act=NAME).
 * p is the function's one parameter (gs_op.unary_p), a literal of the
 * kernel. The table in ir/op.c names each (the spec's act=) and gives the
 * reference's double formula; kernels/codegen/lower.c prints each as an f32
 * helper gs_unary(y) in the two dialects. */
typedef enum gs_unary {
    GS_UN_NONE = 0,
    GS_UN_NEG, GS_UN_ABS, GS_UN_EXP, GS_UN_LOG, GS_UN_SQRT, GS_UN_RSQRT /* 1/sqrt(y + p) */,
    GS_UN_RECIP, GS_UN_TANH, GS_UN_SIGMOID, GS_UN_ERF, GS_UN_SOFTPLUS, GS_UN_SOFTSIGN, GS_UN_FLOOR,
    GS_UN_CEIL, GS_UN_ROUND /* half to even */, GS_UN_SIGN, GS_UN_SIN, GS_UN_COS, GS_UN_TAN, GS_UN_ASIN,
    GS_UN_ACOS, GS_UN_ATAN, GS_UN_SINH, GS_UN_COSH, GS_UN_ASINH, GS_UN_ACOSH, GS_UN_ATANH,
    GS_UN_GELU /* 0.5 y (1 + erf(y / sqrt 2)) */, GS_UN_GELU_TANH /* the tanh approximation */,
    GS_UN_LEAKYRELU /* y < 0: p y */, GS_UN_ELU /* y < 0: p (e^y - 1) */,
    GS_UN_CELU /* max(0, y) + min(0, p (e^(y/p) - 1)) */, GS_UN_THRESHOLDED_RELU /* y > p: y, else 0 */,
    GS_UN_HARDSIGMOID /* max(0, min(1, y + p)): y is already alpha-scaled */,
    GS_UN_HARDSWISH /* y max(0, min(1, y/6 + 1/2)) */, GS_UN_MISH /* y tanh(softplus(y)) */,
    GS_UN_SWISH /* y sigmoid(p y) (SiLU at p = 1) */, GS_UN_LOGP /* log(y + p) */,
    GS_UN_COUNT
} gs_unary;
typedef struct gs_unary_info {
    const char *name;  /* act= name: "exp", "gelu", "leakyrelu" */
    int has_p;         /* takes p (act_p=) */
    double p_default;  /* p when act_p is not given */
} gs_unary_info;
extern const gs_unary_info gs_unaries[GS_UN_COUNT];
/* Parse an act= name; false when unknown. */
bool gs_unary_parse(const char *name, gs_unary *u);
/* The function u at y with parameter p, in double (the reference's). */
double gs_unary_eval(gs_unary u, double p, double y);

typedef struct gs_epilogue {
    float alpha;    /* out = alpha*acc */
    float beta;     /*     + beta*out_old (read only when beta != 0) */
    int bias_axis;  /* -1: none; else out += bias[axis value] (tensor "bias") */
    int relu;       /* out = max(out, 0); NaN stays NaN (see the NaN rule below) */
    int count_valid;/* 1: out = alpha*acc / n, n the reduce points whose input-0 read
                       is in bounds (average pooling with count_include_pad=0; a
                       window with none gives 0). Input 0's dims each use at most one
                       reduce axis, and each reduce axis at most one dim (validated). */
} gs_epilogue;
enum { GS_CLIP_LO = 1, GS_CLIP_HI = 2 };
/* NaN rule (ONNX Runtime's and PyTorch's): max propagates NaN. relu(NaN),
 * a max pool whose window holds a NaN and a row max over a NaN are NaN, in
 * the reference interpreter and in both printers (gs_maxn, not fmax, which
 * drops NaN). A max over padding alone is -inf (the identity). */

typedef enum gs_op_kind {
    GS_OPK_GEMM = 0,
    GS_OPK_CUSTOM = 1, /* built directly in the IR */
    GS_OPK_BGEMM,
    GS_OPK_GEMV,
    GS_OPK_CONV2D,
    GS_OPK_DWCONV2D,
    GS_OPK_POOL,
    GS_OPK_ELTWISE,
    GS_OPK_REDUCE
} gs_op_kind;

struct gs_op {
    gs_op_kind kind;
    int naxes;
    int ninputs;                       /* tensors[0..ninputs-1] are inputs */
    gs_combine combine;
    gs_axis axes[GS_MAX_AXES];
    gs_tensor tensors[GS_MAX_TENSORS]; /* tensors[ninputs] is the output */
    gs_epilogue epi;
    /* gemm-specific knobs kept for the reference check and the spec */
    int transA, transB;
    char spec[GS_SPEC_LEN];
    bool has_bias;                     /* bias vector is an extra kernel arg */
    uint8_t clip;                      /* the epilogue's last steps (gs_epi_steps), after relu:
                                          GS_CLIP_LO: out = max(out, clip_lo); GS_CLIP_HI: out =
                                          min(out, clip_hi) (ONNX Clip; ReLU6 is clip 0..6); NaN
                                          stays NaN. The bounds are part of the kernel (literals) */
    uint8_t dtype_in;                  /* gs_dtype of the inputs and the bias (f32: 0) */
    uint8_t dtype_out;                 /* gs_dtype of the output */
    uint8_t math;                      /* gs_math: GS_MATH_TF32 rounds a product's inputs to TF32 */
    uint8_t unary;                     /* gs_unary: the epilogue's unary step (GS_UN_NONE: none) */
    uint8_t bias_group;                /* 0: the bias is read at bias[x_b], b = epi.bias_axis; else
                                          1 + a spatial axis g, and it is read at bias[x_g * E_b + x_b]
                                          (a grouped conv's channel k of group g: gs_op_bias_elems) */
    uint8_t reserved_[1];              /* zero: no padding (see gs_op_key) */
    float unary_p;                     /* the unary function's parameter (0 when it has none);
                                          a literal of the kernel, like the clip bounds */
    float clip_lo, clip_hi;            /* finite, lo <= hi when both; 0 when unused */
};
/* The element types of tensor t of op (t == ninputs: the output) and of the
 * bias. */
static inline gs_dtype gs_op_tensor_dtype(const gs_op *op, int t) {
    return (gs_dtype)(t == op->ninputs ? op->dtype_out : op->dtype_in);
}
static inline bool gs_op_typed(const gs_op *op) { return op->dtype_in != 0 || op->dtype_out != 0; }

static inline const gs_tensor *gs_op_out(const gs_op *op) { return &op->tensors[op->ninputs]; }
/* The operator's structure as a kernel sees it: a copy of op, every byte of
 * it, with what a kernel takes at run time cleared: the axis extents, the
 * tensor shapes, the spec text (it names the extents), the names (comments
 * only), alpha and beta's value (kernel arguments; beta becomes 1 when it is
 * non-zero, since a non-zero beta makes the kernel read the output), and a
 * bias that is not used (has_bias without an axis). Kernel descriptors and
 * dispatcher classes hash this whole, so a field added to gs_op is part of
 * every key unless it is cleared here. */
void gs_op_key(const gs_op *op, gs_op *key);

/* ---- the epilogue as steps --------------------------------------------
 * What is done to an output's accumulator, in order: the one description
 * the reference interpreter evaluates and the code printers print. */
typedef enum gs_epi_kind {
    GS_EPI_SCALE = 0, /* y = alpha * acc */
    GS_EPI_ADD_OLD,   /* y += beta * out (the output's previous value; beta != 0) */
    GS_EPI_ADD_BIAS,  /* y += bias[x_axis] */
    GS_EPI_RELU,      /* y = max(y, 0) */
    GS_EPI_CLIP_LO,   /* y = max(y, clip_lo) */
    GS_EPI_CLIP_HI,   /* y = min(y, clip_hi) */
    GS_EPI_UNARY      /* y = f(y), f = gs_op.unary (after the bias, before relu) */
} gs_epi_kind;
typedef struct gs_epi_step {
    gs_epi_kind kind;
    int axis;  /* GS_EPI_ADD_BIAS: the axis whose value indexes the bias */
    int group; /* GS_EPI_ADD_BIAS: -1, or the group axis g: the index is x_g * E_axis + x_axis */
} gs_epi_step;
#define GS_EPI_MAX_STEPS 7
/* op's epilogue steps into steps[GS_EPI_MAX_STEPS]; returns their count
 * (>= 1: the scale comes first). */
int gs_epi_steps(const gs_op *op, gs_epi_step *steps);
/* Whether op's epilogue has a step of kind k (the axis into *axis when not
 * NULL). */
bool gs_epi_has(const gs_op *op, gs_epi_kind k, int *axis);
/* Elements of a tensor (product of its shape). */
int64_t gs_tensor_elems(const gs_tensor *t);
/* Elements of op's bias vector: the bias axis' extent, times the group
 * axis' (bias_group) when there is one; 0 without a bias. */
int64_t gs_op_bias_elems(const gs_op *op);
/* Output points of an operator: the product of its spatial extents. */
int64_t gs_op_out_points(const gs_op *op);
/* Check an operator's structure: extents > 0, products fit int64 and the
 * largest tensor fits int32 indexing or is flagged; output uses only spatial
 * axes; at least one reduce or spatial axis. */
gs_status gs_op_validate(gs_ctx *ctx, const gs_op *op);
/* True when axis a appears (non-zero coefficient) in any index of tensor t
 * (inline: the plan and the estimate ask it in their inner loops). */
static inline bool gs_tensor_uses_axis(const gs_tensor *t, int a) {
    for (int d = 0; d < t->ndim; d++)
        if (t->idx[d].coeff[a] != 0) return true;
    return false;
}

/* ---- ETIR ---------------------------------------------------------------
 * For each axis d: tile[d].block block tile (shared-memory level; for a reduce
 * axis, the k-step), tile[d].thread register tile per thread (1 for reduce axes),
 * V[d] vthreads, so a thread owns V[d] chunks of tile[d].thread/V[d] elements spaced
 * threads_d*tile[d].thread/V[d] apart. staged[t] says whether input t is staged in
 * shared memory. level is the level being scheduled (2, 1, or 0 = done). */
#define GS_LEVELS 3

/* Whole-kernel knobs: choices that pay off differently per shape, so the
 * walk explores them like tiles. Each is a row of gs_knobs (below):
 *   stages  software-pipeline depth of the reduce-tile loop, 1..GS_MAX_STAGES
 *           (1: load, barrier, compute, barrier; s > 1: s shared-memory
 *           buffers per staged input with s-1 tiles in flight);
 *   raster  log2 of the block-swizzle group over the last two spatial axes
 *           (0: blocks in plain order; r: groups of 2^r block rows, for L2
 *           reuse), at most GS_MAX_RASTER. */
#define GS_MAX_STAGES 4
#define GS_MAX_RASTER 4
/* Reduce lanes (tinygrad's GROUP):
 *   lanes_log2  log2 of the threads that share each output's reduction along the
 *           last reduce axis (0: none). Lane l of a group takes the indices
 *           l, l + 2^g, ... of each reduce tile, so neighbouring lanes read
 *           neighbouring elements of that axis; the partial results are
 *           combined across the lanes at the end. Lanes are the fastest
 *           thread index. A group of up to a warp combines with shuffles; a
 *           wider one (whole warps) adds a step through shared memory. At
 *           most GS_MAX_LANES (1024 lanes), the reduce tile and the block's
 *           thread limit. */
#define GS_MAX_LANES 10
/* Split-K across blocks:
 *   splitk  the blocks (1..GS_MAX_SPLITK) that share each output tile's
 *           reduction along the first reduce axis (gs_etir_splitk_axis). Block
 *           s takes the s-th run of ceil(tiles/splitk) of that axis' reduce
 *           tiles (the last runs may be short or empty); splitk <= tiles. The grid is splitk times
 *           the spatial blocks. How the partial results meet (a workspace summed in a fixed
 *           order, or atomics where the user allowed them: splitk_atomic) is a plan decision. */
#define GS_MAX_SPLITK 16

/* The tiles of one axis, by level of the memory hierarchy. The three words are a
 * state's bytes as v2 hashed them (gs_etir_hash names kernels), so elem stays. */
typedef struct gs_tile {
    int32_t elem;   /* level 0: one element (always 1) */
    int32_t thread; /* level 1: a thread's tile (its register block along the axis) */
    int32_t block;  /* level 2: a block's tile */
} gs_tile;
/* The tile of level 0, 1 or 2 (the paper's T[d][level]). */
static inline int32_t gs_tile_level(const gs_tile *t, int level) {
    return level >= 2 ? t->block : level == 1 ? t->thread : t->elem;
}

typedef struct gs_etir {
    gs_tile tile[GS_MAX_AXES];
    int32_t V[GS_MAX_AXES];
    uint8_t staged[GS_MAX_TENSORS]; /* input t is copied to shared memory */
    int8_t level;
    uint8_t stages;
    uint8_t raster;
    uint8_t lanes_log2;   /* log2 of the reduce lanes */
    uint8_t splitk;       /* split-K blocks per output tile (1: none) */
    uint8_t splitk_atomic; /* 1: split-K's blocks may meet by float atomics (sums; the user's
                             choice, NOT deterministic); 0: a sum in a fixed order */
    /* The plan options of the v1-style kernels (gs_plan_opts; the user's choice, never walked,
     * so the old and new plans of the same tiles compare): each 0 by default, the plan the
     * library emits. gs_plan_make applies them on top of its own options. */
    uint8_t plan_scalar;     /* 1: no vector access, no transposition, v1 odd-pitch layout */
    uint8_t plan_predicated; /* 1: no fast path: every tile and store predicated */
    uint8_t plan_no_async;   /* 1: register copies even where cp.async exists */
    uint8_t plan_lb1;        /* 1: launch bounds (threads, 1), as v1 */
    uint8_t plan_im2col;     /* gs_im2col_mode (hwmodel/plan/plan.h): 0 auto, 1 the im2col tile
                                wherever a window exists, 2 the tensor box always */
    uint8_t mma;          /* the tensor-core row (ir/mma.h, gs_mma_get): 0 = FFMA, else the
                             index of an mma.sync instruction the main loop multiplies with
                             (legal: gs_mma_state_ok; the arch is the plan's and the check's) */
} gs_etir;

typedef enum gs_action_kind {
    GS_ACT_TILE = 0,
    GS_ACT_INVTILE = 1,
    GS_ACT_VTHREAD = 2,
    GS_ACT_CACHE = 3,
    GS_ACT_STAGES = 4, /* set the pipeline depth to value (level 1) */
    GS_ACT_RASTER = 5, /* set the block-swizzle log2 group to value (level 1) */
    GS_ACT_LANES = 6,  /* set the reduce lanes' log2 to value (level 1) */
    GS_ACT_SPLITK = 7, /* set split-K's block count to value (level 1) */
    GS_ACT_MMA = 8,    /* set the tensor-core row to value (level 1; 0: FFMA) */
    GS_ACT_COUNT_ = 9
} gs_action_kind;

typedef struct gs_action {
    gs_action_kind kind;
    int axis;   /* -1 for cache */
    int value;  /* the vthread count, stage count or raster for those actions */
} gs_action;

/* ---- the knob table ----------------------------------------------------------------
 * Every whole-kernel knob of gs_etir is one row: its byte in the state, its
 * range and legality, its text and config forms, and how the walk, the
 * polish and the space move it. Init, well-formedness, the knob actions,
 * the text and config forms (printing and parsing), the walk's actions and
 * neighbours (construct/markov.c) and the space's enumeration and draw all
 * read the rows; a new knob is a row here plus its uses in the plan, the
 * model and the printers. The per-axis tiles and vthreads stay in their own
 * arrays (tile[], V[]): they are indexed by axis and move by tile/invTile/
 * vthread. staged[t] is per input and fixed by init (no action moves it). */
typedef enum gs_knob_id {
    GS_KNOB_STAGES = 0,   /* stages: software-pipeline depth */
    GS_KNOB_RASTER,       /* raster: log2 block-swizzle group */
    GS_KNOB_LANES,        /* lanes_log2: log2 of the reduce lanes */
    GS_KNOB_SPLITK,       /* splitk: split-K blocks */
    GS_KNOB_SPLITK_ATOMIC, /* splitk_atomic: split-K meets by atomics (the user's, never walked) */
    GS_KNOB_SCALAR,       /* plan_scalar: the v1-style plan options, the user's, never walked */
    GS_KNOB_PREDICATED,   /* plan_predicated */
    GS_KNOB_NO_ASYNC,     /* plan_no_async */
    GS_KNOB_LB1,          /* plan_lb1 */
    GS_KNOB_IM2COL,       /* plan_im2col */
    GS_KNOB_MMA,          /* mma: the tensor-core instruction row, 0 = FFMA */
    GS_KNOB_COUNT
} gs_knob_id;

/* How a row's stored byte reads: the value itself, or 2^value. */
typedef enum gs_knob_scale { GS_KNOB_LINEAR = 0, GS_KNOB_LOG2 = 1 } gs_knob_scale;
/* How the walk proposes values (gs_actions_enumerate): every other value of
 * the range, or one step each way (STEP_DOWN_UP: v-1 then v+1 of the stored
 * byte; DOUBLE_HALF: 2v then v/2); NONE: not walked. */
typedef enum gs_knob_moves { GS_KNOB_NOT_WALKED = 0, GS_KNOB_EVERY, GS_KNOB_STEP_DOWN_UP, GS_KNOB_DOUBLE_HALF } gs_knob_moves;

typedef struct gs_knob {
    const char *name;        /* its name in C and the docs: "stages", "raster", "lanes", "splitk", ... */
    size_t offset;           /* offsetof(gs_etir, its byte) */
    uint8_t off;             /* the stored value of "off": init's value; omitted from both forms */
    uint8_t lo, hi;          /* the stored range */
    uint8_t needs_reduce;    /* a value other than off needs a reduce axis */
    gs_knob_scale shown;     /* the forms show 2^stored (LOG2) or stored (LINEAR) */
    const char *text;        /* text form prefix (" | st4 r8 g32 sk2a"): "st", "r", "g", "sk"; for an
                                attached row, the suffix */
    int attach;              /* -1, or the row whose text this row's suffix follows (only when that
                                row prints, and only when this one is not off) */
    const char *key;         /* config key ("stages=4,raster=8,group=32,split=2,atomic=1") */
    const char *alias;       /* another key that parses (NULL: none) */
    const char *const *names; /* NULL, or the text form's word per stored value (NULL or "" for off),
                                 shown instead of text and the number: " scalar", " box" */
    gs_knob_moves moves;     /* how the walk and the polish move it */
    gs_action_kind act;      /* its action (when walked) */
    int space_nest;          /* nesting in the space's enumeration (0 outermost); -1: not enumerated */
    /* Legality beyond the range, given the rest of the state (tiles, other
     * knobs); NULL: the range is all. For a row whose legality grows
     * monotone with the stored value, as split-K's and the lanes' do, the
     * space stops at the first illegal value. */
    bool (*legal)(const struct gs_op *op, const struct gs_etir *e, int stored);
} gs_knob;

extern const gs_knob gs_knobs[GS_KNOB_COUNT];
/* A row's stored byte in e, and e with it set. */
int gs_knob_get(const struct gs_etir *e, gs_knob_id k);
void gs_knob_set(struct gs_etir *e, gs_knob_id k, int stored);
/* The row an action sets, or -1 for a per-axis action. */
int gs_knob_of_action(gs_action_kind a);
/* Whether stored is in the row's range and legal for op and the rest of e
 * (a value other than off of a needs_reduce row also needs a reduce axis). */
bool gs_knob_ok(const struct gs_op *op, const struct gs_etir *e, gs_knob_id k, int stored);
/* The value the forms show for a stored one (2^stored for LOG2 rows). */
long gs_knob_shown(gs_knob_id k, int stored);

/* Initial state: all tiles 1, no vthreads, every input staged, 1 stage, no
 * raster, level 2. */
void gs_etir_init(const gs_op *op, gs_etir *e);
/* Apply an action; returns false when it is not applicable structurally
 * (e.g. tiling past the extent). Resource limits are checked by the caller
 * (hwmodel). The cache action from level 2 enters level 1 with the smallest
 * power-of-two thread tiles that bring the thread count to <= max_threads
 * (a number handed in by the caller: ir/ knows no hardware). */
bool gs_etir_apply(const gs_op *op, const gs_etir *e, gs_action a, int max_threads, gs_etir *out);
/* Largest tile the walk may reach on axis d: next power of two >= extent. */
int32_t gs_etir_max_tile(const gs_op *op, int d);
/* The last reduce axis (the one a group splits), or -1. */
int gs_etir_lanes_axis(const gs_op *op);
/* The first reduce axis (the one split-K divides among blocks), or -1. */
int gs_etir_splitk_axis(const gs_op *op);
/* Reduce tiles along the split axis: in all (ceil(extent/T2)) and per split
 * block (ceil(all/split)). */
int64_t gs_etir_splitk_tiles(const gs_op *op, const gs_etir *e, int64_t *per_block);
/* Blocks of one split: the spatial blocks, prod over spatial axes of
 * ceil(extent/T2); gs_etir_blocks is split times this. */
int64_t gs_etir_tile_blocks(const gs_op *op, const gs_etir *e);
/* Threads along axis d (T2/T1) and in total (the spatial threads times the
 * group's lanes). */
int64_t gs_etir_threads_axis(const gs_etir *e, int d);
int64_t gs_etir_threads(const gs_op *op, const gs_etir *e);
/* Blocks in the grid: split times prod over spatial axes of ceil(extent/T2). */
int64_t gs_etir_blocks(const gs_op *op, const gs_etir *e);
/* Register accumulators per thread: prod over spatial axes of T1. */
int64_t gs_etir_acc_regs(const gs_op *op, const gs_etir *e);
/* Structural validity (tiles divide, within extents' next power of two). */
bool gs_etir_wellformed(const gs_op *op, const gs_etir *e);
/* Text form "m:128/8/v2 n:... k:32 | A:smem B:smem" into buf, followed by
 * " | st2 r3" when stages > 1 or raster > 0. */
void gs_etir_format(const gs_op *op, const gs_etir *e, char *buf, size_t n);
/* Config form "bm=128,bn=128,bk=32,tm=8,tn=8,vm=1,vn=2,sa=1,sb=1,stages=2,raster=8"
 * (raster is printed as the group size 2^raster; stages and raster are
 * omitted when they are 1 and 0). */
void gs_etir_format_config(const gs_op *op, const gs_etir *e, char *buf, size_t n);
/* Parse the config form back (unknown keys are errors). */
gs_status gs_etir_parse_config(gs_ctx *ctx, const gs_op *op, const char *cfg, gs_etir *e);
uint64_t gs_etir_hash(const gs_etir *e);

/* ---- footprint and traffic from the affine maps -------------------------
 * tile[a] is a box of extents per axis. The footprint of tensor t is the
 * product over its dims of the interval length sum_a |c_a|*(tile_a-1) + 1,
 * capped by the dim's shape. */
int64_t gs_footprint_dim(const gs_tensor *t, int dim, const int64_t *tile);
int64_t gs_footprint(const gs_tensor *t, const int64_t *tile);
/* Tiles of the state at level l as a box per axis (reduce axes use T2 at
 * level 2 and 1 at level 1). */
void gs_etir_box(const gs_op *op, const gs_etir *e, int level, int64_t *box);
/* Elements moved through level l for the whole operator:
 * sum over inputs of (#tiles) * footprint(tile) + output elements. */
double gs_traffic(const gs_op *op, const int64_t *box);
/* Footprint of one tile at a box: sum over inputs and the output. */
double gs_footprint_total(const gs_op *op, const int64_t *box);

/* Shared-memory box of staged input t at level 2: dims[] per tensor dim,
 * *row_pitch the padded innermost extent; returns elements incl. padding. */
/* Saturation bound of gs_stage_layout sizes (per dim and in total). */
#define GS_STAGE_SAT (1LL << 31)
int64_t gs_stage_layout(const gs_op *op, const gs_etir *e, int t, int64_t *dims, int64_t *row_pitch);

/* ---- spec parsing ------------------------------------------------------ */
/* Parse a spec into *op (caller-provided storage). */
gs_status gs_op_parse_into(gs_ctx *ctx, const char *spec, gs_op *op);
gs_status gs_op_build_gemm(gs_ctx *ctx, gs_op *op, int64_t M, int64_t N, int64_t K,
                           int transA, int transB, float alpha, float beta);

gs_status gs_op_build_bgemm(gs_ctx *ctx, gs_op *op, int64_t B, int64_t M, int64_t N, int64_t K, int transA,
                            int transB, float alpha, float beta);
gs_status gs_op_build_gemv(gs_ctx *ctx, gs_op *op, int64_t M, int64_t N, int transA, float alpha, float beta);

/* Sliding-window operators: conv2d, depthwise conv2d, avg/max pool2d.
 * Output extent P = (H + pad_top + pad_bottom - dil*(R-1) - 1)/stride + 1.
 * Filters: conv2d [K,C,R,S] (nchw) or [K,R,S,C] (nhwc); dwconv2d [C,R,S]
 * (nchw) or [R,S,C] (nhwc). Average pooling counts padded cells.
 * A grouped conv2d (groups G > 1, dividing C and K) has filters [K,C/G,R,S]
 * (nchw) or [K,R,S,C/G] (nhwc): output channel g*K/G + k reads input
 * channels g*C/G .. (g+1)*C/G - 1. It is one loop nest with a spatial axis
 * g of extent G before k (axes n g k p q c r s, or n p q g k c r s for
 * nhwc; c of extent C/G, k of K/G), the channel dims affine in g and k (c),
 * and the bias read at g*K/G + k (gs_op.bias_group). */
typedef enum gs_window_kind { GS_WIN_CONV = 0, GS_WIN_DWCONV, GS_WIN_AVGPOOL, GS_WIN_MAXPOOL } gs_window_kind;
typedef struct gs_window {
    gs_window_kind kind;
    int64_t N, C, H, W, K, R, S;
    int64_t sh, sw, pt, pb, pl, pr, dh, dw;
    int nhwc, bias, relu;
    int exclude_pad; /* average pooling only: count_include_pad=0 */
    int64_t groups;  /* conv2d only: 0 or 1 ungrouped, else the group count G */
} gs_window;
gs_status gs_op_build_window(gs_ctx *ctx, gs_op *op, const gs_window *w);
/* A 1x1 convolution with stride 1 and no padding as the matrix product it
 * is, over the same buffers (implicit GEMM without the im2col: the pixels
 * are rows): nhwc O[NHW,K] = I[NHW,C] . F[K,C]^T (gemm axes m, k, c), nchw
 * O[n][K,HW] = F[K,C] . I[n][C,HW] (axes n, k, x, c). The same epilogue.
 * GS_ERR_UNSUPPORTED (with the reason) for any other operator. */
gs_status gs_op_conv1x1_as_matmul(gs_ctx *ctx, const gs_op *conv, gs_op *out);
/* Clip op's output after its epilogue: flags GS_CLIP_LO / GS_CLIP_HI with
 * the bounds; appends " clip_lo=.. clip_hi=.." (the set ones) to the spec.
 * GS_ERR_INVALID_ARG for a NaN or infinite bound, or lo > hi. */
gs_status gs_op_set_clip(gs_ctx *ctx, gs_op *op, int flags, float lo, float hi);

/* A unary function as op's epilogue step (gs_unary; p its parameter, ignored
 * and stored 0 when it has none); appends " act=NAME[ act_p=P]" to the spec.
 * GS_ERR_INVALID_ARG for an unknown function or a parameter that is not
 * finite (or 0 for celu, which divides by it). */
gs_status gs_op_set_unary(gs_ctx *ctx, gs_op *op, gs_unary u, float p);

typedef enum gs_eltwise { GS_ELT_RELU = 0, GS_ELT_ADD, GS_ELT_MUL, GS_ELT_CLIP, GS_ELT_SUB, GS_ELT_DIV,
                          GS_ELT_UNARY, GS_ELT_MAX, GS_ELT_MIN, GS_ELT_POW, GS_ELT_PRELU } gs_eltwise;
/* Z[M,N] = the sum, max or min of n (2..3) inputs of X's shape, times alpha
 * (mean: alpha = 1/n); spec "add M N inputs=3", "max M N", "mean M N inputs=3". */
gs_status gs_op_build_nary(gs_ctx *ctx, gs_op *op, gs_eltwise kind, int n, int64_t M, int64_t N, float alpha);
/* Z[M,N] = relu(X) | X + Y | X * Y | X (clip: bounds by gs_op_set_clip) |
 * X - Y | X / Y | X (unary: the function by gs_op_set_unary); with bcast, Y
 * is a [N] vector. */
gs_status gs_op_build_eltwise(gs_ctx *ctx, gs_op *op, gs_eltwise kind, int64_t M, int64_t N, int bcast);
typedef enum gs_rowreduce { GS_ROW_SUM = 0, GS_ROW_MEAN, GS_ROW_MAX, GS_ROW_MIN } gs_rowreduce;
/* Y[M] = sum | mean | max over k of X[M,K]. */
gs_status gs_op_build_rowreduce(gs_ctx *ctx, gs_op *op, gs_rowreduce kind, int64_t M, int64_t K);
/* Z[A,C,B] = X[A,C,B] + Y[C] | X[A,C,B] * Y[C] (+ bias[C] with bias): a
 * per-channel vector broadcast over the other dims (NCHW's [C,1,1]; mul
 * with bias is an inference batch norm). Axes a, c, b; spec "addc A C B". */
gs_status gs_op_build_chan(gs_ctx *ctx, gs_op *op, gs_eltwise kind, int64_t A, int64_t C, int64_t B, int bias);
/* Z[A,R,B] = X[A,R,B] op Y[A,B] (add, sub, mul, div): Y broadcast over the
 * middle dims, as a middle-axis reduction kept with keepdims is (softmax over
 * a middle axis). Axes a, r, b (all spatial); spec "addm A R B". */
gs_status gs_op_build_midb(gs_ctx *ctx, gs_op *op, gs_eltwise kind, int64_t A, int64_t R, int64_t B);
/* Z[a, at + r, b] = X[a, r, b] for X[A,R,B] and Z[A,T,B] (at + R <= T): X
 * copied into a slice of Z along the middle axis; the rest of Z is left as it
 * is (the output starts as the caller's buffer). One input of a concat per
 * kernel. Axes a, r, b (all spatial); spec "place A R B T at". */
gs_status gs_op_build_place(gs_ctx *ctx, gs_op *op, int64_t A, int64_t R, int64_t B, int64_t T, int64_t at);
/* Z = X with its dims permuted: Z's dim j is X's dim perm[j] (rank 1..GS_MAX_DIMS,
 * dims[] X's extents). One spatial axis per output dim; spec "transpose d0.. p0..". */
gs_status gs_op_build_transpose(gs_ctx *ctx, gs_op *op, int rank, const int64_t *dims, const int *perm);
/* Y[n,c,x] = alpha * sum over the channel window c-(size-1)/2 .. c+size/2 of X[n,c',x]^2 (out of
 * range: 0): local response normalization's sum, inputs X and X (the same buffer twice). Axes n,
 * c, x spatial, r reduce; spec "chansq N C X size [alpha=1]". */
gs_status gs_op_build_chansq(gs_ctx *ctx, gs_op *op, int64_t N, int64_t C, int64_t X, int64_t size, float alpha);
/* Y[A,B] = sum | mean | max over r of X[A,R,B]: a reduction over a middle
 * axis (ONNX Reduce* over axes that are not the last; A or B may be 1).
 * Axes a, b (spatial), r (reduce); spec "midsum A=.. R=.. B=..". */
gs_status gs_op_build_midreduce(gs_ctx *ctx, gs_op *op, gs_rowreduce kind, int64_t A, int64_t R, int64_t B);

/* ---- reference interpreter (naive loops, double accumulation) ----------
 * ins[i] are the inputs in order, out the output (read when beta != 0),
 * bias may be NULL when the op has none. Every buffer holds floats; for a
 * 16-bit type the caller gives values its type represents exactly
 * (gs_dtype_round), and each output is rounded to the output type (via
 * f32, as the kernels' f32 epilogue does). */
gs_status gs_op_reference(gs_ctx *ctx, const gs_op *op, const float *const *ins,
                          const float *bias, float *out);
/* Linear offset of tensor t at the axis point pt[naxes], or -1 when the
 * point falls outside the tensor (padding). */
int64_t gs_tensor_offset(const gs_tensor *t, const int64_t *pt, int naxes);
/* The reference value of one output element: the spatial axes of pt give the
 * point (its reduce entries are scratch, overwritten), old is the output's
 * previous value (read when beta != 0). No validation: the caller has
 * checked op (gs_op_validate) and sized the buffers. gs_op_reference is
 * this over every spatial point, so a sampled check agrees with it exactly. */
double gs_op_reference_point(const gs_op *op, const float *const *ins, const float *bias, int64_t *pt, double old);

#include "ir/mma.h" /* the tensor-core instruction table (needs the types above) */

#endif
