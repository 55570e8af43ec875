/* plan.h — the kernel plan: every decision about how one ETIR state of one
 * operator becomes a kernel, made once, here, from the operator, the state
 * and a few target facts. hwmodel/model/model.c prices a plan and kernels/codegen/lower.c
 * prints it, so what is priced is what is emitted.
 *
 * The plan is plain data with no CUDA or OpenCL in it. It is zeroed before it
 * is filled, so its bytes can be hashed into the kernel descriptor. It holds
 * only decisions that do not depend on the extents (those are runtime
 * arguments), so one plan serves every shape of its alignment class.
 *
 * Two kinds of decision:
 * - choices that pay off differently per shape live in the ETIR and the walk
 *   explores them: tiles, vthreads, staging, pipeline stages, rasterisation;
 * - choices that follow from the facts are made here and never searched:
 *   vector widths (from the affine maps, the tiles and the alignment of the
 *   shapes), the shared-memory layout (dim order and padding, from a
 *   bank-conflict count), the copy mechanism (cp.async where the target has
 *   it and the copy does not transpose), the launch bounds, and whether
 *   interior tiles take an unpredicated fast path.
 */
#ifndef GS_PLAN_H
#define GS_PLAN_H

#include "hwmodel/profile/hw.h"

/* Widest vector access, in fp32 elements (128-bit loads and stores). */
#define GS_PLAN_MAX_VEC 4
/* Copy units in flight per thread on the predicated (v1-style) plan: the v1
 * staging loop as nvcc unrolled it. */
#define GS_PLAN_SERIAL_UNROLL 4
/* Registers the units of one copy batch hold in flight (values, addresses,
 * edge coordinates): a copy runs in batches of about this size, so its
 * registers stay bounded however many units a thread moves. */
#define GS_PLAN_COPY_BATCH_REGS 32
/* The widest reduce split combined by warp shuffles alone; a wider group
 * (whole warps) adds a step through shared memory (plan.lanes_wide). */
#define GS_LANES_WARP 32
/* Reduce loops longer than this are unrolled by this much, not fully. */
#define GS_PLAN_K_UNROLL 16
/* the longest tile, in k-steps, the fragment-pipelined loop unrolls fully */
#define GS_PLAN_FRAG_PIPE_TRIP 16
/* plan.cross_turn's values (0: none) */
#define GS_CROSS_TURN_COPY_EARLY 1
#define GS_CROSS_TURN_COPY_AT_TURN 2
/* Units a thread keeps per-unit offsets for in registers (more: recomputed). */
#define GS_PLAN_UNIT_ARRAY_MAX 4
/* The most separable units per thread (plan.unit_sep; a register each, where
 * ptxas keeps its folded offset); more are recomputed. */
#define GS_PLAN_UNIT_SEP_MAX 16

/* How a staged input's tile reaches shared memory on the fast path. */
typedef enum gs_copy_mode {
    GS_COPY_REG = 0,   /* global -> registers -> shared (a transposing copy, or no async copy) */
    GS_COPY_ASYNC = 1  /* global -> shared with no register hop (cp.async, sm_80 and later) */
} gs_copy_mode;

/* Options for the fallback plans (tests, and pricing code of the v1 style
 * that was measured on an H100). All zero: the plan the library emits. */
typedef struct gs_plan_opts {
    uint8_t scalar;      /* no vector access, no transposition, v1 odd-pitch layout */
    uint8_t predicated;  /* no fast path: every tile and every store predicated */
    uint8_t no_async;    /* register copies even where cp.async exists */
    uint8_t min_blocks1; /* launch bounds (threads, 1), as v1 */
    uint8_t split_atomic; /* split-K meets by float atomics: fewer bytes, NOT deterministic
                             (the user's choice; the default sums in a fixed order) */
    uint8_t im2col;      /* gs_im2col_mode: the box of a windowed input (tests, benchmarks) */
    uint8_t no_frag_pipe; /* no fragment double buffering (plan.frag_pipe), as before it */
} gs_plan_opts;

/* Which box a staged input with a window dim (a conv's h = p*stride +
 * r*dilation - pad) is copied as (gs_plan_opts.im2col). */
typedef enum gs_im2col_mode {
    GS_IM2COL_AUTO = 0,  /* the im2col tile when it has fewer elements than the tensor box */
    GS_IM2COL_FORCE = 1, /* the im2col tile wherever a window exists */
    GS_IM2COL_OFF = 2    /* the tensor box (the window's halo) always */
} gs_im2col_mode;

/* How the blocks of a split-K meet (plan.split_mode). */
typedef enum gs_split_mode {
    GS_SPLIT_NONE = 0,
    GS_SPLIT_ORDERED = 1, /* each block writes its partials to its slice of the workspace; the
                             last block of a tile to arrive (a counter) sums the slices in
                             split order and runs the epilogue: bitwise reproducible */
    GS_SPLIT_ATOMIC = 2   /* each block adds its partials into one workspace slice with float
                             atomics; the last block runs the epilogue and zeroes the slice */
} gs_split_mode;

typedef struct gs_plan_input {
    uint8_t staged;       /* copied to shared memory for every reduce tile */
    uint8_t copy_mode;    /* gs_copy_mode */
    uint8_t copy_vec;     /* elements per fast-path global load along copy_dim (1, 2, 4) */
    uint8_t store_vec;    /* elements per shared store of one copy unit (copy_vec when the
                             unit is contiguous in shared memory, else 1) */
    uint8_t frag_vec;     /* elements per fragment read along frag_axis (1: scalar reads) */
    int8_t frag_axis;     /* spatial axis read as vectors from the innermost smem dim; -1 */
    int8_t copy_dim;      /* tensor dim the copy runs along: the tensor's innermost */
    int8_t inner_dim;     /* tensor dim innermost in shared memory */
    int32_t pad;          /* elements added to the innermost smem extent */
    uint8_t im2col;       /* the box is the im2col tile of a windowed input: one box dim per axis
                             the tensor uses (view_axis), each indexed by its axis alone, so the
                             gaps of a stride and the window's halo are not staged. dims,
                             sstride, copy_dim, inner_dim and unit_dim then count these view
                             dims (gs_plan_box_tensor); the global side keeps the tensor's */
    uint8_t view_ndim;    /* im2col: view dims */
    int8_t view_axis[GS_MAX_DIMS]; /* im2col: the axis of each view dim */
    /* tensor cores (plan.mma; these three bytes were padding, so a plan without
     * mma hashes as before): */
    uint8_t ldsm;         /* 0: fragments read element by element; 1, 2, 4: ldmatrix .x1/.x2/.x4
                             (the row's registers of this operand), one per instruction tile */
    uint8_t ldsm_trans;   /* ldmatrix .trans: the smem rows run along m (A) or n (B), not k */
    uint8_t swizzle;      /* log2 of the XOR period, in 16-byte vectors, of the smem layout (0:
                             none; the padding, pad, is the fallback) */
    uint8_t kmask;        /* mma (in what was padding: a plan without it hashes as before): bit a
                             set for each reduce axis a whose copy does not zero-fill this
                             operand beyond a's extent (a window's r and s, read as real input
                             rows; a group's channels, read from the next group). In a tile
                             partial along such an axis the compute zeroes the fragment elements
                             whose k lies beyond it, so that the zero-filled other operand never
                             multiplies a real Inf or NaN (0 * Inf = NaN) */
    int64_t halo[GS_MAX_DIMS]; /* the tensor box per tensor dim (dims, unless im2col): what the
                                  fast path's range check covers */
    int8_t unit_dim;      /* unit_linear: the dim a thread's successive units step along */
    uint8_t unit_linear;  /* a thread's units are evenly spaced (unit i = unit 0 + i * unit_rows
                             along unit_dim): two offsets in registers instead of two per unit */
    uint8_t store_group;  /* 0: none; G (2, 4): a transposing register copy whose thread moves
                             its units in groups of G consecutive rows of inner_dim (unit i is
                             row i % G of group i / G; the groups number as the units would with
                             inner_dim's extent divided by G, linearly: unit_rows counts real
                             rows), so each element of the G prefetched units is one G-wide
                             shared store instead of G scalar ones (was padding: a plan without
                             it hashes as before) */
    int32_t unit_rows;    /* unit_linear: the step, in elements of unit_dim */
    uint8_t unit_sep;     /* not linear, many units, several reduce axes (a conv): the digits of
                             unit tid + i*threads are tid's plus those of i*threads, never
                             carrying, so unit i's offsets are unit 0's (two registers) plus
                             compile-time digits of i (gs_plan_unit_sep) */
    uint8_t unit_recompute; /* not linear and many units: each unit's offsets are recomputed
                               from its index where used (no per-unit registers) */
    uint8_t frag_pairs;   /* mma, 16-bit element reads (was padding: a plan without it hashes as
                             before): each fragment register's two elements are adjacent in
                             shared memory at an even offset, so the register is one 32-bit
                             read (gs_plan_mma_frag_pairs); else two 16-bit reads and a pack */
    int32_t units_per_thread; /* copy units a thread moves per tile (rounded up) */
    int32_t copy_batch;   /* units per unrolled batch of the copy (units_per_thread: one batch,
                             every load in flight at once; fewer: a loop over batches, each
                             batch one round of load latency) */
    int64_t dims[GS_MAX_DIMS];    /* box extent per tensor dim (uncapped block tiles) */
    int64_t sstride[GS_MAX_DIMS]; /* shared-memory stride per tensor dim, elements */
    int64_t stage_elems;  /* one buffer, padding included, a multiple of 4 */
    int64_t units;        /* copy units per tile: box elements / copy_vec */
    uint8_t direct;       /* unstaged: every dim is one axis with unit step, no offset and the
                             axis' extent as its shape, so interior blocks read it without
                             predicates (re-checked at run time) */
    float read_wf;        /* smem wavefronts of one warp-wide fragment read (mma: of one
                             instruction tile's fragment of this operand: the ldmatrix's 8-lane
                             phases, or its element reads) */
    float store_wf;       /* smem wavefronts of one copy unit's stores, per warp */
} gs_plan_input;

typedef struct gs_plan {
    int32_t arch;         /* sm_XX the decisions were made for */
    int32_t threads;      /* threads per block */
    int32_t min_blocks;   /* __launch_bounds__(threads, min_blocks) */
    int32_t regs_bound;   /* registers per thread the plan is sized for (upper bound; mma: the
                             accumulators and the A and B fragment registers) */
    uint8_t stages;       /* pipeline depth (from the ETIR) */
    uint8_t raster;       /* log2 block-swizzle group (from the ETIR) */
    int8_t raster_x;      /* the swizzled (slower) spatial axis; -1 none */
    int8_t raster_y;      /* the faster spatial axis of the swizzled pair; -1 none */
    uint8_t fast_path;    /* interior tiles and blocks run unpredicated code */
    uint8_t out_vec;      /* output elements per vector store along out_axis (1: scalar) */
    int8_t out_axis;      /* spatial axis of the output's innermost dim; -1 */
    uint8_t bias_vec;     /* bias elements per vector read (out_vec when bias runs along out_axis) */
    uint8_t smem_dynamic; /* shared memory over the 48 KiB static limit: dynamic, opted in */
    uint8_t any_async;    /* some input copies with GS_COPY_ASYNC */
    uint16_t lanes;       /* reduce lanes: threads sharing one output's reduction (1: none) */
    uint8_t lanes_wide;    /* lanes > GS_LANES_WARP: the combine crosses warps */
    uint8_t k_unroll;     /* unroll of the innermost reduce loop (0: full) */
    uint8_t frag_pipe;    /* the pipelined main loop double-buffers the register fragments:
                             each k-step loads the next one's while it multiplies, across the
                             tile boundary too (after the barrier, the next tile's first
                             fragments come before the copies of the tile after), and the
                             copies of a tile are issued after its first k-step. Needs a
                             product of two inputs (combine mac), a staged pipeline (stages > 1, every input staged), an even number
                             of k-steps per thread and tile (reduce lanes take turns along
                             the last reduce axis), at most GS_PLAN_FRAG_PIPE_TRIP (unrolled
                             fully: k_unroll 0), the fast path */
    uint8_t peel;         /* one reduce axis whose staged boxes run along it with unit step
                             (gemm-like, no window), in the fragment-pipelined or (FFMA, fast
                             path) the plain pipeline: the full tiles whose next copy is a full
                             tile run in a steady loop of their own, entered when every copy's
                             block-invariant fast-path check holds, with no edge code, each copy
                             walking one pointer per input (sp<t>, stepped a k-tile at a time,
                             and a unit at a time within the tile); the other tiles (the last
                             stages-1 and a partial one) after it. A conv (several reduce axes,
                             frag_pipe): its window's steady loop */
    uint8_t splitk;       /* split-K blocks per output tile (from the ETIR; 1: none) */
    uint8_t split_mode;   /* gs_split_mode */
    int8_t split_axis;    /* the reduce axis split-K divides; -1 */
    /* tensor cores (these five bytes were padding, so a plan without mma
     * hashes as before): */
    uint8_t mma;          /* the instruction row (ir/mma.h; 0: FFMA), from the ETIR */
    uint16_t warp_m;      /* mma: a warp's tile along the m axis (8 * TM: lanes are 8 x 4 threads) */
    uint16_t warp_n;      /* mma: along the n axis (4 * TN) */
    int64_t smem_bytes;   /* all stage buffers of all staged inputs */
    int32_t scratch_bytes; /* static shared scratch beside them (CUDA): split-K's flag, a wide
                              group's per-warp results; 16-byte granular */
    uint8_t cross_turn;   /* (in what was padding: a plan without it hashes as before) the plain
                             pipeline's steady loop (peel, one reduce axis, FFMA, no frag_pipe,
                             two k-steps or more a thread and tile) turns each tile before its
                             last k-step's multiply: the last step's fragments are loaded, then
                             the register path's stores, the wait, the barrier and the next
                             read buffer, and the next tile's first fragments are loaded from
                             it before the last multiply, so every k-step's fragments are read
                             a k-step ahead, across the barrier too (frag_pipe's loop turns so
                             already, for every k-step). GS_CROSS_TURN_COPY_AT_TURN: the copies
                             of the tile `stages` ahead are issued at the turn, after every
                             shared load of the tile; GS_CROSS_TURN_COPY_EARLY: those of the
                             tile stages-1 ahead after the second k-step's loads (ptxas then
                             hoists the loads less far: fewer registers). On a conv's
                             frag_pipe steady loop (several reduce axes) GS_CROSS_TURN_COPY_AT_TURN
                             where a third fragment set (and one more for ptxas' hoisting) keeps
                             the plan's register blocks per SM (regs_bound then counts the
                             third), else 0: each tile turns before its
                             second-last k-step's multiply, the next tile's first fragments
                             in a third set, the copies of the tile `stages` ahead after the
                             tile's last multiply (lower.c print_full_tile_cross) */
    gs_plan_input in[GS_MAX_TENSORS];
    gs_plan_opts opts;
} gs_plan;

/* One set of input t's fragments on the FFMA core: its thread tile over
 * the spatial axes it uses (the plan's register bound, the conv turn's third
 * set and the printers' fragment arrays read this one count). */
static inline int64_t gs_plan_frag_elems(const gs_op *op, const gs_etir *e, int t) {
    int64_t f = 1;
    for (int a = 0; a < op->naxes; a++)
        if (op->axes[a].kind == GS_AXIS_SPATIAL && gs_tensor_uses_axis(&op->tensors[t], a)) f *= e->tile[a].thread;
    return f;
}

/* How many tiles ahead of the one it computes a one-reduce-axis steady loop
 * (plan.peel) copies: stages-1, or stages when its copies go at the cross
 * turn (GS_CROSS_TURN_COPY_AT_TURN). The loop runs while that tile is a
 * full one (its copies are unchecked), so it runs nfull - ahead tiles of a
 * block's nfull full ones; the printer and the model's steady fraction both
 * read it. (A conv's turned loop, frag_pipe, copies the tile `stages` ahead
 * too but skips them on its last tile: it runs nfull - (stages-1).) */
static inline int gs_plan_steady_ahead(const gs_plan *p) {
    return p->stages - 1 + (p->cross_turn == GS_CROSS_TURN_COPY_AT_TURN && !p->frag_pipe);
}

/* A memo of access-pattern simulations (bank conflicts, sectors), owned by
 * the caller and shared by the plans and estimates of one construction:
 * neighbouring states repeat most of their lane address patterns. Results
 * are identical with or without it. Zero it (gs_wf_memo_init, or a zeroed
 * allocation) before use;
 * a full memo simply stops remembering. */
#define GS_WF_MEMO_SLOTS 16384 /* indexed by a key's top 16 bits: at most 65536 */
/* Staged inputs' layouts remembered by gs_plan_shape_memo (a power of two). */
#define GS_WF_MEMO_LAYOUTS 1024
/* mma inputs' candidate layouts (choose_pad_mma), direct-mapped (a power of two). */
#define GS_WF_MEMO_MMA 512
/* mma fragment reads' wavefronts (mma_read_wf), direct-mapped (a power of two). */
#define GS_WF_MEMO_MMA_READS 1024
/* Staged inputs' padding choices (choose_pad), direct-mapped (a power of two). */
#define GS_WF_MEMO_PADS 4096
/* Staged inputs' fast-path copy fractions (the model's fast_copy_fraction),
 * inputs' L2 bytes per tile (tile_l2_elems) and the reduce loop's trip
 * counts (est_reduce_loop), direct-mapped (powers of two). */
#define GS_WF_MEMO_FAST 1024
#define GS_WF_MEMO_L2 1024
#define GS_WF_MEMO_LOOPS 1024
/* A wave's unique input bytes (the model's wave_unique_bytes), direct-mapped
 * (a power of two). */
#define GS_WF_MEMO_WAVES 512
/* The estimate's reduce-loop trip counts (model.c's est_reduce_loop). */
typedef struct gs_loop_counts {
    double S, R, tiles, iters_pad, iters_real, iters_fast, iters_slow, f_inb;
    int nred;
} gs_loop_counts;
/* The wavefronts of an mma input's candidate layouts (choose_pad_mma): the
 * fragment reads (rw) and the copy's stores (sw) of each, valid ones by bit,
 * and the ldmatrix mode they were simulated with. */
typedef struct gs_mma_pad_cands {
    double rw[5], sw[5];
    uint8_t valid, ldsm, ldsm_trans;
} gs_mma_pad_cands;
typedef struct gs_wf_memo {
    uint64_t key[GS_WF_MEMO_SLOTS];
    double val[GS_WF_MEMO_SLOTS];
    /* one staged input's layout decisions (box, im2col or tensor box, vectors,
     * copy mode, padding reserve) by the state fields they read; these
     * depend on the operator and the profile, so a memo serves one of each */
    uint64_t layout_key[GS_WF_MEMO_LAYOUTS];
    int64_t layout_pad[GS_WF_MEMO_LAYOUTS];
    gs_plan_input layout[GS_WF_MEMO_LAYOUTS];
    /* an mma plan's staged input's candidate layouts, simulated (ldmatrix
     * mode, each padding or swizzle's wavefronts), by everything the
     * simulations read: not the warp tile, which only weighs them
     * (choose_pad_mma) */
    uint64_t mma_key[GS_WF_MEMO_MMA];
    gs_mma_pad_cands mma_cands[GS_WF_MEMO_MMA];
    /* one candidate layout's fragment-read wavefronts (mma_read_wf) by
     * everything they read: the row, the operand, the ldmatrix mode, the
     * swizzle and pitch, the shared strides and the block tiles; not the warp
     * tile or the threads, so the warp tiles of one block tile (complete_mma)
     * and the polish's moves that keep it share one simulation */
    uint64_t mma_rd_key[GS_WF_MEMO_MMA_READS];
    double mma_rd_val[GS_WF_MEMO_MMA_READS];
    /* one staged input's padding and its wavefronts by everything the choice
     * reads: one lookup, and out of the simulations' table (which overflowed) */
    uint64_t pad_key[GS_WF_MEMO_PADS];
    struct { int32_t pad; float read_wf, store_wf; } pad_val[GS_WF_MEMO_PADS];
    /* one staged input's share of copies on the fast path (the estimate's
     * est_copies), by everything it reads: the input's tensor box (halo)
     * and the block tiles of the axes the tensor uses */
    uint64_t fast_key[GS_WF_MEMO_FAST];
    double fast_val[GS_WF_MEMO_FAST];
    /* one input's L2 elements per (block, reduce tile) (tile_l2_elems), by
     * its box kind (staged, im2col, copy dim) and the block tiles of the
     * axes the tensor uses */
    uint64_t l2_key[GS_WF_MEMO_L2];
    double l2_val[GS_WF_MEMO_L2];
    /* the reduce loop's trip counts (est_reduce_loop), by every block tile,
     * the split, the lanes and the fast path's kind */
    uint64_t loop_key[GS_WF_MEMO_LOOPS];
    gs_loop_counts loop_val[GS_WF_MEMO_LOOPS];
    /* a wave's unique input bytes (wave_unique_bytes), by the spatial block
     * tiles, the raster group and the wave's blocks */
    uint64_t wave_key[GS_WF_MEMO_WAVES];
    double wave_val[GS_WF_MEMO_WAVES];
    /* the operator's input and output bytes (est_traffic), known when
     * bytes_known */
    double in_bytes, out_bytes;
    uint8_t bytes_known;
    /* tensor t's address step along each axis in global memory (sum over
     * its dims of coefficient x row stride; global_wavefronts), known by
     * bit t */
    uint64_t gstep[GS_MAX_TENSORS][GS_MAX_AXES];
    uint8_t gstep_known;
    /* the operator's gs_mma_roles and gs_mma_axes, as they return them:
     * mma_known bit 0 set once known, bit 1 the roles' result, bit 2 the
     * axes' */
    int8_t mma_role[GS_MAX_AXES];
    int mma_axis[3];
    uint8_t mma_known;
    /* 1 when the operator's state with every block tile at its maximum fits
     * int32 indexing (so every well-formed state does: the check skips the
     * test), -1 when not, 0 not yet known */
    int8_t index_fits_max;
    /* 1 when some input's index has a negative coefficient on a reduce axis
     * (the window's steady loop cannot peel: plan.peel), -1 when none, 0
     * not yet known */
    int8_t reduce_coeff_neg;
    /* the axes each tensor uses (bit a: axis a), for the layout keys; bit t
     * of uses_known says whether uses[t] is set */
    uint8_t uses[GS_MAX_TENSORS], uses_known;
    /* each input's im2col view axes (choose_box), known by bit t */
    int8_t i2c_n[GS_MAX_TENSORS], i2c_axes[GS_MAX_TENSORS][GS_MAX_DIMS];
    uint8_t i2c_known;
} gs_wf_memo;
void gs_wf_memo_init(gs_wf_memo *m);
/* Key of an access pattern: the lane addresses and a tag with the
 * simulation's other inputs. */
uint64_t gs_wf_key(const int64_t *addr, int lanes, uint64_t tag);
/* The axes tensor t of op uses (bit a: axis a), computed once per memo
 * (gs_wf_memo_uses_fill the first time; with m NULL it only computes). */
uint8_t gs_wf_memo_uses_fill(gs_wf_memo *m, const gs_op *op, int t);
static inline uint8_t gs_wf_memo_uses(gs_wf_memo *m, const gs_op *op, int t) {
    return m->uses_known >> t & 1 ? m->uses[t] : gs_wf_memo_uses_fill(m, op, t);
}
/* The same where the memo may be NULL (computed each time). */
static inline uint8_t gs_wf_uses(gs_wf_memo *m, const gs_op *op, int t) {
    return m ? gs_wf_memo_uses(m, op, t) : gs_wf_memo_uses_fill(NULL, op, t);
}
/* gs_mma_roles and gs_mma_axes of op, once per memo (m NULL: computed). */
bool gs_wf_memo_mma_roles(gs_wf_memo *m, const gs_op *op, int8_t *role);
bool gs_wf_memo_mma_axes(gs_wf_memo *m, const gs_op *op, int *am, int *an, int *ak);
/* Look a key up (true and *val on a hit) / remember a value. */
bool gs_wf_memo_get(const gs_wf_memo *m, uint64_t key, double *val);
void gs_wf_memo_put(gs_wf_memo *m, uint64_t key, double val);

/* True when the profile's arch has asynchronous global->shared copies
 * (cp.async: compute capability 8.0 and later, CUDA C++ Programming Guide,
 * "Asynchronous Data Copies"). */
bool gs_hw_has_async_copy(const gs_hw *hw);

/* Make the plan of state e of op for hw (opts NULL: the default plan). The
 * state must be well formed; the plan is made even when it breaks a limit
 * (gs_hw_check says whether it fits). */
/* Register file partitions (schedulers) per SM, Volta and later. */
#define GS_SM_PARTITIONS 4
/* Warps per SM that regs registers per thread allow. */
int64_t gs_hw_warps_by_regs(const gs_hw *hw, int regs);
/* Registers per thread ptxas may use when warps_per_sm warps must fit. */
int gs_hw_regs_cap(const gs_hw *hw, int64_t warps_per_sm);
/* Blocks per SM of the plan's kernel when a thread uses regs registers (the
 * smallest of the register, thread, shared-memory and block limits). ptxas
 * may use registers above the plan's bound where that costs no block:
 * gs_plan_blocks_per_sm(hw, p, ptxas) >= gs_plan_blocks_per_sm(hw, p,
 * p->regs_bound) is what the tests assert. */
int64_t gs_plan_blocks_per_sm(const gs_hw *hw, const gs_plan *p, int regs);
void gs_plan_make(const gs_hw *hw, const gs_op *op, const gs_etir *e, const gs_plan_opts *opts, gs_plan *p);
/* The same with a memo of simulations (may be NULL). */
void gs_plan_make_memo(const gs_hw *hw, const gs_op *op, const gs_etir *e, const gs_plan_opts *opts, gs_wf_memo *memo,
                       gs_plan *p);

/* The plan's resource decisions (shared memory, registers, copy modes,
 * vector widths, raster axes) without the padding search and the epilogue
 * (cheap, for the memory check): the figures equal gs_plan_make's. */
void gs_plan_shape(const gs_hw *hw, const gs_op *op, const gs_etir *e, const gs_plan_opts *opts, gs_plan *p);
/* The same through a memo (may be NULL) that remembers each staged input's
 * layout decisions; the plan is identical. A memo serves one operator and
 * profile (gs_wf_memo). */
void gs_plan_shape_memo(const gs_hw *hw, const gs_op *op, const gs_etir *e, const gs_plan_opts *opts, gs_wf_memo *memo,
                        gs_plan *p);
/* The rest of gs_plan_make on a plan gs_plan_shape made for the same state
 * (its options are p->opts): the padding search, the output vector, the
 * unroll and the launch bounds. gs_plan_shape then gs_plan_finish_memo is
 * gs_plan_make_memo. */
void gs_plan_finish_memo(const gs_hw *hw, const gs_op *op, const gs_etir *e, gs_wf_memo *memo, gs_plan *p);
/* The shared memory and register bound of gs_plan_shape. */
void gs_plan_resources(const gs_hw *hw, const gs_op *op, const gs_etir *e, const gs_plan_opts *opts,
                       int64_t *smem_bytes, int *regs_bound);

/* The tensor a staged input's box is laid out over: op's tensor t, or for
 * an im2col box its view, written to *view (one dim per pi->view_axis,
 * indexed by that axis alone; the innermost keeps the tensor's row length
 * and offset when it is the tensor's innermost unit axis, for the copy
 * vector's alignment). */
const gs_tensor *gs_plan_box_tensor(const gs_op *op, const gs_plan_input *pi, int t, gs_tensor *view);

/* Shared-memory wavefronts of one warp-wide access: lane l reads or writes w
 * consecutive words from word address addr[l]. A w-wide access is served in
 * phases of 32/w lanes; each phase costs the largest number of distinct
 * words falling in one bank (equal words are broadcast). */
double gs_smem_wavefronts_of(int banks, const int64_t *addr, int lanes, int w);

/* Number of distinct values among v[0..n) (n <= 256). */
int gs_count_distinct(const int64_t *v, int n);

/* Lane word addresses of a warp-wide fragment read of staged input t under
 * plan p at reduce index 0 (thread coordinates as the kernel decomposes
 * them, last spatial axis fastest). Returns the lane count (<= 64). */
int gs_plan_frag_lanes(const gs_op *op, const gs_etir *e, const gs_plan *p, int t, int warp, int64_t *addr);

/* Whether every 16-byte row input t's (0: A, 1: B) ldmatrix reads under
 * plan p holds gs_mma_ldsm_row_elems elements at consecutive shared
 * offsets from a multiple of that count, for every warp, lane,
 * instruction tile and k-step (checked by enumeration; false without
 * ldmatrix). What ldmatrix needs of a plan's pi->ldsm. */
bool gs_plan_mma_ldsm_rows(const gs_op *op, const gs_etir *e, const gs_plan *p, int t);

/* Whether input t's ldmatrix row addresses sit at one lane base plus
 * constants: offset(warp, lane, tile it, k-step ks) = base(warp, lane) +
 * it * dx + ks * dk in every case (checked by enumeration; false without
 * ldmatrix). The printers then compute the base once a lane where the
 * roles span several axes (a conv's), whose split they would otherwise
 * redo at every load. */
bool gs_plan_mma_ldsm_affine(const gs_op *op, const gs_etir *e, const gs_plan *p, int t, int64_t *dx, int64_t *dk);

/* Input t's (0: A, 1: B) mma fragment element reads at one lane base plus
 * constants (gs_plan_mma_frag_affine): offset(warp, lane, tile it, k-step
 * ks, element i) = base(warp, lane) + it * dx + ks * dk + ei[i] in every
 * case, checked by enumeration. base0 is warp 0 lane 0's base in the plan's
 * offsets (without the printers' constant shift of a negative reach);
 * pairs (16-bit rows): each register's two elements are adjacent and every
 * register's first element lies at an offset of base0's parity, so a
 * register is one aligned 32-bit read wherever base0 plus the shift is
 * even. The printers compute the base once a lane, outside the main loop. */
typedef struct gs_mma_frag_fold {
    int64_t dx, dk, base0;
    int64_t ei[GS_MMA_MAX_ELEMS];
    bool pairs;
} gs_mma_frag_fold;
/* False under ldmatrix, a swizzle, no mma, or where the offsets are not so. */
bool gs_plan_mma_frag_affine(const gs_op *op, const gs_etir *e, const gs_plan *p, int t, gs_mma_frag_fold *ff);
/* plan.in[t].frag_pairs from the layout (role: gs_mma_roles'): a 16-bit row,
 * element reads (no ldmatrix, no swizzle), the k split's fastest axis with
 * a block tile over 1 (kf) stepping the offset by 1, every other axis with
 * a block tile over 1 by an even amount, and the constant shift of the
 * printers' offsets even: a dim's negative reach (gs_plan_neg_reach) times
 * its stride (its affine offset cancels: the box starts at it). Then a register's elements
 * (k and k + 1, k even: kf's digit even and no carry) sit side by side at
 * an even offset whatever the lane, tile, k-step and stage. */
uint8_t gs_plan_mma_frag_pairs(const gs_op *op, const gs_etir *e, const gs_plan *p, const int8_t *role, int t);
/* How far below its box origin dim f of a tensor reaches through negative
 * coefficients (a coefficient -c over a block tile T: -c (T - 1)); the
 * printers shift those dims up by it. */
int64_t gs_plan_neg_reach(const gs_op *op, const gs_etir *e, const gs_affine *f);

/* The XOR swizzle of staged input pi's shared-memory element offset o
 * (eb-byte elements; pi->swizzle 0: o itself): within each row of the
 * padded innermost extent, the 16-byte vector index XOR the row index mod
 * 2^swizzle. The plan's bank simulation and the printers' GS_SWZ<t> agree. */
int64_t gs_plan_swizzle(const gs_plan_input *pi, int eb, int64_t o);

/* One-line summary of the plan's decisions, e.g.
 * "A:reg v4 T k>m pad4 fv4 | B:async v4 pad0 fv4 | st2 r8 fast ov4 lb(256,2)". */
void gs_plan_format(const gs_op *op, const gs_plan *p, char *buf, size_t n);
/* Split-K's workspace for op's extents, in bytes (0 without split-K): one
 * int counter per output tile (rounded up to 4), then the partial sums: a
 * float per output element and split block (ordered) or one slice (atomic).
 * It must be zero at the first launch, and every launch leaves it ready
 * for the next: the counters (and the atomic slice) back at zero; ordered
 * slices are scratch. Launches that run at the same time need a workspace
 * each. */
int64_t gs_plan_workspace_bytes(const gs_op *op, const gs_etir *e, const gs_plan *p);
/* The same from the ETIR and a gs_split_mode, without making the plan. */
int64_t gs_split_workspace_bytes(const gs_op *op, const gs_etir *e, int mode);
/* Its leading part: the counters, one int per output tile, rounded up to 4. */
int64_t gs_split_counter_bytes(const gs_op *op, const gs_etir *e);
/* The kernel's arguments in order (the signature the printer writes from
 * them): the inputs, the output, the bias (when used), the extents, every
 * tensor's shape, alpha, beta, and split-K's workspace (when the plan splits),
 * each sized for op's extents, into args[cap]. Returns the count, or -1
 * when cap is too small. */
int gs_plan_launch_args(const gs_op *op, const gs_etir *e, const gs_plan *p, gs_launch_arg *args, int cap);
/* "input", "output", "bias", "extent", "shape", "alpha", "beta", "workspace"; "?" */
const char *gs_arg_role_name(gs_arg_role r);

#endif
