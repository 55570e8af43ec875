/* model.c — the resource ("memory") check, the paper's benefit formulas
 * (1)-(3), and the analytic latency estimate used to rank candidates.
 *
 * Everything here reads hardware numbers from the profile; nothing branches
 * on an architecture name. */
#include "hwmodel/model/model.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* Accumulators per thread we allow: beyond 128 fp32 accumulators plus the
 * fragments and addressing, ptxas starts spilling at the 255-register cap. */
#define GS_MAX_ACC 128
/* The mma core (issue 20): an mma's result is ready about this many clocks
 * after issue, and the fraction of the tensor pipe's rate a pipelined mma
 * loop sustains (CUTLASS-class sm_80 kernels reach about 90 % of the peak
 * on large GEMMs). docs/MODEL.md, "The price of an mma plan". */
#define GS_MMA_LATENCY 24
#define GS_MMA_SUSTAIN 0.9
/* Integer instructions each ldmatrix's address costs in ptxas' code beyond
 * the load: counted, not fitted to timings. The printer hands ldmatrix the
 * stage's shared base plus the row's byte offset, so ptxas folds a tile's
 * and a k-step's constant part into the instruction's immediate; what is
 * left is the per-thread part. Over the f16 and bf16 gemm and bgemm picks of
 * the suite and model lists on h100 and a100 (62), the steady state's
 * instructions less the model's count without it, against the path's LDSM:
 * 0.81 a load (least squares, no constant; the median miss 15.9 % -> 5.3 %
 * of the steady count). It was 2.45 while the address was formed as
 * &s[o] and converted per load (docs/MODEL.md, "The instruction count
 * against ptxas' code"). */
#define GS_MMA_LDSM_ADDR 0.81
/* How far the register bound sits above the typical ptxas count. */
#define GS_REGS_BOUND_MARGIN 4
/* Blocks of one launch: the grid is 1-D, CUDA's gridDim.x is at most 2^31-1,
 * and the kernel reads its block index as a 32-bit int. */
#define GS_MAX_GRID 2147483647LL

/* ---- resources ------------------------------------------------------------------
 * The plan is the one source of shared-memory size and the register bound:
 * the check, the estimate and the printers read the same numbers. */
void gs_etir_resources(const gs_hw *hw, const gs_op *op, const gs_etir *e, gs_resources *r) {
    int regs;
    gs_plan_resources(hw, op, e, NULL, &r->smem_bytes, &regs);
    r->threads = gs_etir_threads(op, e);
    r->regs_per_thread = regs;
    /* the performance model uses a typical count a little below the bound
     * (ptxas lands 0-16 below it on the test sweeps); the check keeps the
     * bound */
    r->regs_expected = regs - GS_REGS_BOUND_MARGIN;
}

/* The kernel does its per-axis arithmetic in 32-bit ints: the block count
 * (E + T - 1) / T, the tile loops `for (o = 0; o < E; o += T)`, and every
 * tensor coordinate offset + sum c_a * x_a, where x_a runs up to E_a + T_a - 2
 * over the padded tiles. A state whose bounds leave int32 would make the
 * kernel skip its last block or never leave a loop (signed overflow), so it
 * fails the check. Only extents above 2^30, or huge strides, dilations and
 * pads, come near this. */
static bool index_fits_int32(const gs_op *op, const gs_etir *e) {
    int64_t span[GS_MAX_AXES];
    for (int a = 0; a < op->naxes; a++) {
        span[a] = op->axes[a].extent + e->tile[a].block - 1;
        if (span[a] > INT32_MAX) return false;
    }
    for (int t = 0; t <= op->ninputs; t++) {
        const gs_tensor *ts = &op->tensors[t];
        for (int j = 0; j < ts->ndim; j++) {
            int64_t off = ts->idx[j].offset, lo = off < 0 ? off : 0, hi = off > 0 ? off : 0, term;
            for (int a = 0; a < op->naxes; a++) {
                int64_t c = ts->idx[j].coeff[a];
                if (!c) continue;
                if (__builtin_mul_overflow(c, span[a] - 1, &term)) return false; /* x_a <= E_a + T_a - 2 */
                if (c > 0 ? __builtin_add_overflow(hi, term, &hi) : __builtin_add_overflow(lo, term, &lo))
                    return false;
            }
            if (hi > INT32_MAX || lo < INT32_MIN) return false;
        }
    }
    return true;
}

bool gs_hw_splitk_ok(const gs_hw *hw, const gs_op *op, const gs_etir *e) {
    /* split-K is for outputs too small to fill the GPU: tiles that give at
     * most two blocks per SM without it, and partials that stay in the L2
     * (a larger workspace would cost DRAM traffic and the user's memory) */
    return e->splitk <= 1 || (gs_etir_tile_blocks(op, e) <= 2 * (int64_t)hw->num_sms &&
                             gs_split_workspace_bytes(op, e, GS_SPLIT_ORDERED) <= hw->l2_bytes);
}

/* Whether every well-formed state of op fits int32 indexing: the spans grow
 * with the block tiles, so it is whether the state with each block tile at
 * its maximum (gs_etir_max_tile) fits. Remembered in the memo (one operator
 * each), so most checks skip index_fits_int32. */
static bool index_fits_all(const gs_op *op, gs_wf_memo *memo) {
    if (!memo) return false;
    if (!memo->index_fits_max) {
        gs_etir x;
        memset(&x, 0, sizeof x);
        for (int a = 0; a < op->naxes; a++) x.tile[a].block = gs_etir_max_tile(op, a);
        memo->index_fits_max = index_fits_int32(op, &x) ? 1 : -1;
    }
    return memo->index_fits_max > 0;
}

/* The check's cheap half: the rules that need no plan (threads, blocks,
 * accumulators, the raster's axis and the level-2 thread bound). Most states
 * the walk and the polish reject fail one of these, so they are tried
 * before the plan is made. */
#define REJECT(why_) \
    do { \
        if (why) *why = (why_); \
        return false; \
    } while (0)

static bool check_cheap(const gs_hw *hw, const gs_op *op, const gs_etir *e, gs_wf_memo *memo, const char **why) {
    if (!gs_etir_wellformed(op, e)) REJECT("the state is not well formed (tiles, lanes, split or mma against the operator)");
    if (e->mma && !gs_mma_arch_ok(e->mma, hw->sm)) /* the instruction's arch (ir/mma.h) */
        REJECT("the profile's arch has no such mma instruction");
    if (!gs_hw_splitk_ok(hw, op, e))
        REJECT("split-K needs at most two blocks per SM without it and a workspace within the L2");
    if (!index_fits_all(op, memo) && !index_fits_int32(op, e)) REJECT("an index would overflow 32 bits");
    if (e->level == 2) {
        /* block tile must admit some thread tile within both limits */
        int64_t elems = 1;
        for (int a = 0; a < op->naxes; a++)
            if (op->axes[a].kind == GS_AXIS_SPATIAL) elems *= e->tile[a].block;
        if (elems > (int64_t)hw->max_threads_per_block * GS_MAX_ACC)
            REJECT("the block tile has more outputs than the thread limit times the accumulator limit");
        return true;
    }
    if (e->raster > 0) {
        /* a group no taller than the blocks along the swizzled axis (a
         * taller one orders the blocks exactly like the grid's height); the
         * swizzled axis is the second-to-last spatial one (the plan's
         * raster_x) */
        int rx = -1, seen = 0;
        for (int a = op->naxes - 1; a >= 0 && rx < 0; a--)
            if (op->axes[a].kind == GS_AXIS_SPATIAL && ++seen == 2) rx = a;
        if (rx < 0) REJECT("the raster needs two spatial axes");
        int64_t nbx = (op->axes[rx].extent + e->tile[rx].block - 1) / e->tile[rx].block;
        if ((1LL << (e->raster - 1)) >= nbx) REJECT("the raster's group is as tall as the grid or taller");
    }
    int64_t threads = gs_etir_threads(op, e);
    if (threads < 1 || threads > hw->max_threads_per_block) REJECT("too many threads per block");
    if (gs_etir_blocks(op, e) > GS_MAX_GRID) REJECT("too many blocks for the grid");
    if (gs_etir_acc_regs(op, e) > GS_MAX_ACC) REJECT("too many accumulators per thread");
    return true;
}

static bool check_plan(const gs_hw *hw, const gs_op *op, const gs_etir *e, gs_wf_memo *memo, gs_plan *p,
                       const char **why) {
    if (!check_cheap(hw, op, e, memo, why)) return false;
    gs_plan_shape_memo(hw, op, e, NULL, memo, p);
    /* shared memory: above the 48 KiB static limit the kernel opts in to
     * dynamic shared memory, up to the per-block opt-in maximum */
    int64_t smem_cap = hw->smem_per_block_optin > hw->smem_per_block ? hw->smem_per_block_optin : hw->smem_per_block;
    if (p->smem_bytes + p->scratch_bytes > smem_cap) REJECT("too much shared memory per block");
    if (e->level == 2) return true;
    /* a pipeline needs something to pipeline: a staged input and a reduce
     * loop; more than one tile in flight needs asynchronous copies (a
     * register hop holds one tile only) */
    if (e->stages > 1) {
        /* and more tiles than buffers: a deeper pipeline than the reduce
         * loop has tiles only costs shared memory */
        int64_t tiles = 1;
        bool red = false;
        for (int a = 0; a < op->naxes; a++)
            if (op->axes[a].kind == GS_AXIS_REDUCE) {
                red = true;
                tiles *= (op->axes[a].extent + e->tile[a].block - 1) / e->tile[a].block;
            }
        if (!red || p->smem_bytes == 0) REJECT("stages > 1 needs a staged input and a reduce loop");
        if (tiles < e->stages) REJECT("stages exceeds the reduce loop's tiles (a block tile of a reduce axis too large)");
        if (e->stages > 2 && !p->any_async) REJECT("stages > 2 needs an asynchronous copy");
    }
    if (p->regs_bound > hw->max_regs_per_thread) REJECT("too many registers per thread");
    /* one block must fit an SM: registers are allocated per warp, in each
     * scheduler's quarter of the register file */
    int64_t warps = ((int64_t)p->threads + hw->warp_size - 1) / hw->warp_size; /* (the threads passed above) */
    if (gs_hw_warps_by_regs(hw, p->regs_bound) < warps) REJECT("the block's registers do not fit an SM");
    if (p->smem_bytes + p->scratch_bytes > hw->smem_per_sm) REJECT("the block's shared memory does not fit an SM");
    return true;
}
#undef REJECT

bool gs_hw_check_plan(const gs_hw *hw, const gs_op *op, const gs_etir *e, gs_wf_memo *memo, gs_plan *p) {
    return check_plan(hw, op, e, memo, p, NULL);
}

const char *gs_hw_check_why(const gs_hw *hw, const gs_op *op, const gs_etir *e) {
    gs_plan p;
    const char *why = NULL;
    return check_plan(hw, op, e, NULL, &p, &why) ? NULL : why;
}

bool gs_hw_check(const gs_hw *hw, const gs_op *op, const gs_etir *e) {
    gs_plan p;
    return gs_hw_check_plan(hw, op, e, NULL, &p);
}

/* ---- benefit formulas -------------------------------------------------------------
 * (1) Benefit_tiling = Q(T)F(T') / (Q(T')F(T)). Q is the traffic through the
 * level being scheduled for the whole operator, F the footprint of one tile.
 * GS_POLICY_PAPER follows the printed formula: a growing footprint *raises*
 * the benefit, so growth is rewarded twice (less traffic, bigger tile) and the
 * memory check is what stops it. GS_POLICY_BALANCED reads the prose ("the
 * reduction in traffic against the increase in footprint"): traffic
 * reduction divided by footprint growth, Q(T)F(T) / (Q(T')F(T')). */
double gs_benefit_tiling(const gs_op *op, const gs_etir *before, const gs_etir *after, int level,
                         gs_policy policy) {
    int64_t b0[GS_MAX_AXES], b1[GS_MAX_AXES];
    gs_etir_box(op, before, level, b0);
    gs_etir_box(op, after, level, b1);
    double q0 = gs_traffic(op, b0), q1 = gs_traffic(op, b1);
    double f0 = gs_footprint_total(op, b0), f1 = gs_footprint_total(op, b1);
    if (q1 <= 0 || f0 <= 0 || f1 <= 0) return 0;
    if (policy == GS_POLICY_PAPER) return (q0 * f1) / (q1 * f0);
    return (q0 * f0) / (q1 * f1);
}

/* (2) Benefit_caching = (L_low + S/B_low) / (L_high + S/B_high): the time to
 * move the tile's S bytes from the slower level versus the faster one.
 * Level 2 -> 1 moves the block tile from DRAM into shared memory; level
 * 1 -> done moves the thread tile from shared memory into registers. The
 * bandwidths are per SM (a block is served by one SM's share of DRAM). */
/* Bytes of one element of tensor t (t == ninputs: the output), from the
 * type table. */
static double elem_bytes(const gs_op *op, int t) { return (double)gs_dtype_row(gs_op_tensor_dtype(op, t))->bytes; }

double gs_benefit_caching(const gs_hw *hw, const gs_op *op, const gs_etir *e, int level) {
    int64_t box[GS_MAX_AXES];
    gs_etir_box(op, e, level, box);
    double S = 4.0 * gs_footprint_total(op, box); /* bytes, fp32 */
    if (gs_op_typed(op)) { /* each tensor's footprint at its type's bytes */
        S = 0;
        for (int t = 0; t <= op->ninputs; t++) S += elem_bytes(op, t) * (double)gs_footprint(&op->tensors[t], box);
    }
    double clk = hw->clock_mhz * 1e6;
    double smem_bw_sm = (double)hw->smem_banks * hw->bank_bytes * clk; /* B/s per SM */
    if (level == 2) {
        double dram_bw_sm = hw->dram_gbs * 1e9 / hw->num_sms;
        return (hw->dram_latency_ns * 1e-9 + S / dram_bw_sm) / (hw->smem_latency_ns * 1e-9 + S / smem_bw_sm);
    }
    /* registers: operands are read at lanes*3 words per clock, ~1 cycle latency */
    double reg_bw_sm = hw->fp32_lanes_per_sm * 3.0 * 4.0 * clk;
    return (hw->smem_latency_ns * 1e-9 + S / smem_bw_sm) / (1.0 / clk + S / reg_bw_sm);
}

/* (3) Benefit_vthread = ceil(x/W) / ceil(x/(V*W)): x is the width (in banks)
 * of what a warp touches along the axis per access, W the bank count. With
 * one contiguous chunk per thread (V=1) a warp's threads along axis a are
 * T0 = T1/V words apart, so they span x = threads_in_warp_a * T1 words;
 * splitting into V vthreads packs them V times closer. */
double gs_benefit_vthread(const gs_hw *hw, const gs_op *op, const gs_etir *e, int axis, int v) {
    (void)op;
    int64_t thr = gs_etir_threads_axis(e, axis);
    int64_t lanes = thr < hw->warp_size ? thr : hw->warp_size;
    double x = (double)lanes * e->tile[axis].thread;
    double W = hw->smem_banks;
    double before = ceil(x / (e->V[axis] * W)), after = ceil(x / (v * W));
    return after > 0 ? before / after : 1.0;
}

/* ---- analytic latency estimate of a plan ----------------------------------------
 * The formulas are written out in docs/MODEL.md. Every GPU-specific
 * number comes from the profile; the constants of gs_model_params describe
 * the emitted code and generic SIMT behaviour. The estimate prices the plan
 * the printers print: its vector widths, copy mechanism, fast and edge
 * paths, pipeline depth, raster and launch bounds. */

/* Shared-memory load-to-use latency and FMA latency, cycles: the wait
 * between a fragment read and its first FMA inside the reduce loop. */
#define GS_LDS_LATENCY 30.0
#define GS_FMA_LATENCY 4.0

void gs_model_params_default(gs_model_params *p) {
    /* fitted with experiments/calibrate.c --fit (make calibrate) on the RTX
     * 3090 CLBlast sweep, the H100 v1 fidelity set and the H100 v1 suite,
     * each constant within a physically plausible range; MODEL.md has the
     * figures */
    p->fma_efficiency = 0.8;      /* CLBlast's best reaches 68 % of peak */
    p->k_overhead_fast = 0.9;     /* loop and address work left after full unrolling */
    p->k_overhead_bounded = 1.0;  /* the runtime bound of a tail tile */
    p->copy_unit_fast = 1.0;      /* the address of an unpredicated vector copy */
    p->copy_elem_edge = 18.0;     /* div/mod, compares, selects, address, load, store */
    p->unstaged_pred = 8.0;       /* coordinates and compares of a predicated operand */
    p->barrier_cycles = 43.0;
    p->pipe_norm = 6.0;
    p->latency_norm = 4.0;
    p->l1_sectors_per_clk = 1.25;
    p->latency_scale = 1.5;       /* loaded over idle latency */
}

static double clampd(double x, double lo, double hi) { return x < lo ? lo : x > hi ? hi : x; }

/* (sum x_i^k)^(1/k), scaled by the largest term so nothing overflows; x^k
 * by multiplication when k is a small whole number (the estimate's hot
 * path calls this a few times per state), k's test once per call. The
 * largest by comparison: a NaN term is passed over, as fmax does. */
static double pnorm(const double *x, int n, double k) {
    double mx = 0, s = 0;
    for (int i = 0; i < n; i++)
        if (x[i] > mx) mx = x[i];
    if (!(mx > 0)) return 0;
    if (k == 4 || k == 6) { /* the defaults (gs_model_params_default), the loop below unrolled: the
                               same products in the same order, so the same doubles */
        for (int i = 0; i < n; i++) {
            const double y = x[i] / mx, y4 = y * y * y * y;
            s += k == 4 ? y4 : y4 * y * y;
        }
    } else if (k == floor(k) && k >= 1 && k <= 16) {
        const int ik = (int)k;
        for (int i = 0; i < n; i++) {
            double r = 1, y = x[i] / mx;
            for (int j = 0; j < ik; j++) r *= y;
            s += r;
        }
    } else {
        for (int i = 0; i < n; i++) s += pow(x[i] / mx, k);
    }
    return s <= 1 + 1e-12 ? mx : mx * pow(s, 1.0 / k);
}

/* Fragment elements of input t per thread and reduce index: the product of
 * T1 over the spatial axes t depends on. */
static double frag_elems(const gs_op *op, const gs_etir *e, int t, gs_wf_memo *memo) {
    double n = 1;
    for (unsigned m = gs_wf_uses(memo, op, t); m; m &= m - 1) { /* the axes t uses (once per memo) */
        const int a = __builtin_ctz(m);
        if (op->axes[a].kind == GS_AXIS_SPATIAL) n *= e->tile[a].thread;
    }
    return n;
}

/* L1 cycles of one warp-wide global access of tensor t (an unstaged input,
 * or the output for t = ninputs), each lane touching w consecutive
 * elements of its run: the distinct 128-byte lines the warp touches, or its
 * 32-byte sectors over the rate the L1 tag stage serves them, whichever is
 * larger. *sectors_out (may be NULL) receives the distinct sectors: what L2
 * sees of the access. */
static double global_wavefronts(const gs_hw *hw, const gs_op *op, const gs_etir *e, const gs_plan *p, int t, int w,
                                double sectors_per_clk, double *sectors_out, gs_wf_memo *memo) {
    const gs_tensor *ts = &op->tensors[t];
    int64_t rs[GS_MAX_DIMS], step[GS_MAX_AXES + 1], thr[GS_MAX_AXES + 1], th[GS_MAX_AXES + 1], addr[64];
    rs[ts->ndim - 1] = 1;
    for (int j = ts->ndim - 2; j >= 0; j--) rs[j] = (int64_t)((uint64_t)rs[j + 1] * (uint64_t)ts->shape[j + 1]);
    /* the address step along each axis: the operator's, so once per memo */
    uint64_t gst_own[GS_MAX_AXES];
    uint64_t *gst = memo ? memo->gstep[t] : gst_own;
    if (!memo || !(memo->gstep_known >> t & 1)) {
        for (int a = 0; a < op->naxes; a++) {
            uint64_t st = 0;
            for (int j = 0; j < ts->ndim; j++) st += (uint64_t)ts->idx[j].coeff[a] * (uint64_t)rs[j];
            gst[a] = st;
        }
        if (memo) memo->gstep_known |= (uint8_t)(1u << t);
    }
    int nax = 0;
    int ga = gs_etir_lanes_axis(op);
    if (e->lanes_log2 && ga >= 0 && t < op->ninputs) { /* a group's lanes: the fastest thread index */
        step[nax] = (int64_t)gst[ga];
        thr[nax] = (int64_t)1 << e->lanes_log2;
        th[nax++] = 0;
    }
    for (int a = op->naxes - 1; a >= 0; a--) {
        if (op->axes[a].kind != GS_AXIS_SPATIAL) continue;
        step[nax] = (int64_t)(gst[a] * (uint64_t)(e->tile[a].thread / e->V[a]));
        thr[nax] = gs_etir_threads_axis(e, a);
        th[nax++] = 0;
    }
    /* the output of an mma plan leaves from the accumulators in the row's C
     * layout (ir/mma.h), not the FFMA thread tiles: lane (g, t) holds its
     * element 0 at row rg*g + rt*t, col cg*g + ct*t of the m x n
     * instruction tile (m16n8: row g, col 2t, so a warp store covers 8 rows
     * of 8 elements). With one m and one n axis (gemm, bgemm, the 1x1 conv
     * as a matmul) those are the axes' strides; a conv's flattened m keeps
     * the thread decomposition above. */
    int am, an, ak;
    const gs_mma_row *row = p->mma ? gs_mma_get(p->mma) : NULL;
    if (row && t == op->ninputs && gs_wf_memo_mma_axes(memo, op, &am, &an, &ak)) {
        int64_t sm = 0, sn = 0;
        for (int j = 0; j < ts->ndim; j++) {
            sm += ts->idx[j].coeff[am] * rs[j];
            sn += ts->idx[j].coeff[an] * rs[j];
        }
        step[0] = row->c.rt * sm + row->c.ct * sn; /* t, the fastest lane digit */
        thr[0] = 4;
        step[1] = row->c.rg * sm + row->c.cg * sn; /* g */
        thr[1] = 8;
        th[0] = th[1] = 0;
        nax = 2;
    }
    int lanes = (int)(p->threads < hw->warp_size ? p->threads : hw->warp_size);
    if (lanes > 64) lanes = 64;
    /* elements per sector and per 128-byte line, by the tensor's type */
    const int eb = (int)elem_bytes(op, t);
    int64_t per_sector = hw->transaction_bytes / eb > 0 ? hw->transaction_bytes / eb : 32 / eb;
    const uint64_t per_line = (uint64_t)(128 / eb);
    uint64_t key = 0;
    double lines_m, secs_m;
    /* the digits that move within the warp: not those of one thread, nor
     * those past the lanes (their addresses do not depend on them) */
    int nd = 0;
    for (int i = 0, span = 1; i < nax && span < lanes; i++)
        if (thr[i] > 1) {
            step[nd] = step[i];
            thr[nd++] = thr[i];
            span = thr[i] >= lanes ? lanes : span * (int)thr[i];
        }
    nax = nd;
    if (memo) {
        /* keyed by the odometer the addresses follow from (a hit builds none)
         * and the access' width and granules, each in its own bits of one
         * word: xored into the tag, w cancelled the lanes' bits of kv[0]
         * (4 lanes of 2 elements and 2 lanes of 4 shared one key) */
        int64_t kv[2 * (GS_MAX_AXES + 1) + 1];
        int nk = 0;
        kv[nk++] = lanes | (int64_t)nax << 8 | (int64_t)(w & 0xffff) << 16 | (int64_t)(per_sector & 0xffff) << 32 |
                   (int64_t)eb << 48;
        for (int i = 0; i < nax; i++) {
            kv[nk++] = step[i];
            kv[nk++] = thr[i];
        }
        key = gs_wf_key(kv, nk, 0x676c6f6f00000000ull);
        double both;
        if (gs_wf_memo_get(memo, key, &both)) { /* lines * 512 + sectors: both at most 256 */
            lines_m = floor(both / 512);
            secs_m = both - lines_m * 512;
            if (sectors_out) *sectors_out = secs_m;
            return fmax(lines_m, secs_m / sectors_per_clk);
        }
    }
    uint64_t ad = 0; /* sum th[i] * step[i], kept as a running sum (the same modulo 2^64) */
    for (int l = 0; l < lanes; l++) {
        addr[l] = (int64_t)ad;
        for (int i = 0; i < nax; i++) {
            if (++th[i] < thr[i]) {
                ad += (uint64_t)step[i];
                break;
            }
            ad -= (uint64_t)(thr[i] - 1) * (uint64_t)step[i];
            th[i] = 0;
        }
    }
    int64_t sec[256], line[256];
    int n = 0;
    for (int l = 0; l < lanes; l++)
        for (int k = 0; k < w && n < 256; k++) {
            uint64_t ak = (uint64_t)addr[l] + (uint64_t)k;
            sec[n] = (int64_t)(ak / (uint64_t)per_sector);
            line[n] = (int64_t)(ak / per_line);
            n++;
        }
    int distinct = gs_count_distinct(sec, n), lines = gs_count_distinct(line, n);
    gs_wf_memo_put(memo, key, (double)lines * 512 + distinct); /* one entry: n <= 256 */
    if (sectors_out) *sectors_out = distinct;
    return fmax(lines, distinct / sectors_per_clk);
}

/* Fraction of origins o = lo + k*step (k = 0..count-1) for which a box of
 * extent len lies in [0, shape): the k with o >= 0 and o + len <= shape
 * form one interval, counted in closed form. */
static double in_range_fraction(int64_t lo, int64_t step, int64_t count, int64_t len, int64_t shape) {
    if (count <= 0) return 1;
    if (step == 0) return lo >= 0 && lo + len <= shape ? 1 : 0;
    /* o >= 0 and o <= shape - len, for o = lo + k*step */
    double a = (0.0 - (double)lo) / (double)step, b = ((double)shape - (double)len - (double)lo) / (double)step;
    if (step < 0) {
        double t = a;
        a = b;
        b = t;
    }
    /* fmax and fmin as comparisons (no libm calls; a NaN bound takes the
     * other operand, as they do) */
    double ca = ceil(a), fb = floor(b), last = (double)count - 1;
    double kmin = ca > 0.0 ? ca : 0.0, kmax = fb < last ? fb : last;
    return kmax < kmin ? 0 : (kmax - kmin + 1) / (double)count;
}

/* Fraction of (block, reduce tile) copies of staged input t that take the
 * fast path: the box lies inside the tensor on every dim. A dim indexed by
 * one axis is counted over that axis' tile origins; a dim indexed by
 * several (a conv window) over the origins of its largest-coefficient axis,
 * the others at their first tile. */
static double fast_copy_fraction(const gs_op *op, const gs_etir *e, const gs_plan_input *pi, int t, int skip) {
    const gs_tensor *ts = &op->tensors[t];
    double f = 1;
    for (int j = 0; j < ts->ndim; j++) {
        const gs_affine *x = &ts->idx[j];
        if (skip >= 0 && x->coeff[skip]) continue; /* (a dim along axis skip: counted by the caller) */
        int amax = -1;
        int64_t cmax = 0, lo = x->offset;
        for (int a = 0; a < op->naxes; a++) { /* one pass: most coefficients are 0 */
            int64_t k = x->coeff[a];
            if (!k) continue;
            if (k < 0) lo += k * (e->tile[a].block - 1);
            int64_t c = k < 0 ? -k : k;
            if (c > cmax) {
                cmax = c;
                amax = a;
            }
        }
        if (amax < 0) continue;
        int64_t T = e->tile[amax].block, E = op->axes[amax].extent;
        f *= in_range_fraction(lo, x->coeff[amax] * T, (E + T - 1) / T, pi->halo[j], ts->shape[j]);
    }
    return f;
}

/* Append to a memo key kv[0..nk) the block tiles of the axes tensor t uses
 * (what a per-input step that reads only block tiles depends on); the new
 * length. */
static int key_used_tiles(gs_wf_memo *memo, const gs_op *op, const gs_etir *e, int t, int64_t *kv, int nk) {
    for (unsigned m = gs_wf_memo_uses(memo, op, t); m; m &= m - 1) kv[nk++] = e->tile[__builtin_ctz(m)].block;
    return nk;
}

/* fast_copy_fraction through memo (NULL: none), keyed by what it reads:
 * the tensor box (halo) and the block tiles of the axes t uses (its dims'
 * coefficients, the axes' extents and the tensor's shape are the
 * operator's, whose memo it is). */
static double fast_copy_fraction_memo(gs_wf_memo *memo, const gs_op *op, const gs_etir *e, const gs_plan_input *pi,
                                      int t, int skip) {
    if (!memo) return fast_copy_fraction(op, e, pi, t, skip);
    const gs_tensor *ts = &op->tensors[t];
    int64_t kv[1 + GS_MAX_DIMS + GS_MAX_AXES];
    int nk = 0;
    kv[nk++] = t | (int64_t)(skip + 1) << 8 | (int64_t)ts->ndim << 16;
    for (int j = 0; j < ts->ndim; j++) kv[nk++] = pi->halo[j];
    nk = key_used_tiles(memo, op, e, t, kv, nk);
    const uint64_t key = gs_wf_key(kv, nk, 0x6661737400000000ull);
    const unsigned slot = (unsigned)(key >> 40) & (GS_WF_MEMO_FAST - 1);
    if (memo->fast_key[slot] != key) {
        memo->fast_key[slot] = key;
        memo->fast_val[slot] = fast_copy_fraction(op, e, pi, t, skip);
    }
    return memo->fast_val[slot];
}

/* An im2col tile's gather: the global distance, in elements, between
 * neighbouring elements of its copy dim (1: contiguous, as NHWC's channels;
 * a stride along NCHW's rows). A warp's scalar loads then touch that many
 * times the lines and sectors of a contiguous copy, up to one each. */
static double im2col_gather(const gs_op *op, const gs_plan_input *pi, int t) {
    if (!pi->im2col) return 1;
    const gs_tensor *ts = &op->tensors[t];
    int a = pi->view_axis[pi->copy_dim];
    double rs = 1, g = 0;
    for (int j = ts->ndim - 1; j >= 0; j--) {
        g += (double)ts->idx[j].coeff[a] * rs;
        rs *= (double)ts->shape[j];
    }
    return clampd(g, 1, 32);
}

/* L2 bytes of staged input t per (block, reduce tile): the footprint of the
 * block's box, or for an im2col tile its elements times the sectors its
 * gather wastes (a stride along the rows reads the gaps as the halo does;
 * NHWC's channel runs skip them), whichever is smaller. */
static double tile_l2_elems(const gs_op *op, const gs_etir *e, const gs_plan *p, int t, const int64_t *box) {
    double fp = (double)gs_footprint(&op->tensors[t], box);
    const gs_plan_input *pi = &p->in[t];
    if (!pi->staged || !pi->im2col) return fp;
    double v = 1;
    for (int k = 0; k < pi->view_ndim; k++) {
        int a = pi->view_axis[k];
        v *= (double)(e->tile[a].block < op->axes[a].extent ? e->tile[a].block : op->axes[a].extent);
    }
    return fmin(fp, v * fmin(im2col_gather(op, pi, t), 8));
}

/* tile_l2_elems through memo (NULL: none), keyed by what it reads: the
 * input's box kind (staged, im2col and its copy dim) and the block tiles
 * of the axes the tensor uses (box is the block tiles within the extents;
 * the im2col view's axes are among those the tensor uses). */
static double tile_l2_elems_memo(gs_wf_memo *memo, const gs_op *op, const gs_etir *e, const gs_plan *p, int t,
                                 const int64_t *box) {
    if (!memo) return tile_l2_elems(op, e, p, t, box);
    const gs_plan_input *pi = &p->in[t];
    int64_t kv[1 + GS_MAX_AXES];
    int nk = 0;
    kv[nk++] = t | (int64_t)pi->staged << 8 | (int64_t)pi->im2col << 9 | (int64_t)pi->copy_dim << 16;
    nk = key_used_tiles(memo, op, e, t, kv, nk);
    const uint64_t key = gs_wf_key(kv, nk, 0x6c32000000000000ull);
    const unsigned slot = (unsigned)(key >> 40) & (GS_WF_MEMO_L2 - 1);
    if (memo->l2_key[slot] != key) {
        memo->l2_key[slot] = key;
        memo->l2_val[slot] = tile_l2_elems(op, e, p, t, box);
    }
    return memo->l2_val[slot];
}

/* Unique input bytes one wave of concurrently resident blocks reads: the
 * footprint of the box the wave covers. Blocks run in launch order, the last
 * spatial axis fastest; with a raster group G the wave covers G rows of the
 * slower axis of the swizzled pair and as many columns as fill the wave. */
static double wave_unique_bytes(const gs_op *op, const gs_etir *e, const gs_plan *p, double slots) {
    int64_t box[GS_MAX_AXES];
    for (int a = 0; a < GS_MAX_AXES; a++) box[a] = 1;
    double left = slots;
    int order[GS_MAX_AXES], n = 0;
    for (int a = op->naxes - 1; a >= 0; a--)
        if (op->axes[a].kind == GS_AXIS_SPATIAL) order[n++] = a; /* fastest first */
    if (p->raster > 0 && p->raster_x >= 0) {
        /* the pair: G rows of x, then columns of y */
        int gx = p->raster_x, gy = p->raster_y;
        double nbx = ceil((double)op->axes[gx].extent / e->tile[gx].block);
        double nby = ceil((double)op->axes[gy].extent / e->tile[gy].block);
        double rows = fmin(nbx, (double)(1 << p->raster)), cols = fmin(nby, ceil(left / rows));
        box[gx] = (int64_t)(rows * e->tile[gx].block);
        box[gy] = (int64_t)(cols * e->tile[gy].block);
        left = ceil(left / (rows * cols));
        for (int i = 0; i < n; i++) {
            int a = order[i];
            if (a == gx || a == gy) continue;
            double nb = ceil((double)op->axes[a].extent / e->tile[a].block), take = fmin(nb, left);
            box[a] = (int64_t)(take * e->tile[a].block);
            left = ceil(left / take);
        }
    } else {
        for (int i = 0; i < n; i++) {
            int a = order[i];
            double nb = ceil((double)op->axes[a].extent / e->tile[a].block), take = fmin(nb, left);
            box[a] = (int64_t)(take * e->tile[a].block);
            left = ceil(left / take);
        }
    }
    for (int a = 0; a < op->naxes; a++) {
        if (op->axes[a].kind == GS_AXIS_REDUCE) box[a] = op->axes[a].extent;
        if (box[a] > op->axes[a].extent) box[a] = op->axes[a].extent;
        if (box[a] < 1) box[a] = 1;
    }
    double bytes = 0;
    for (int t = 0; t < op->ninputs; t++) bytes += elem_bytes(op, t) * (double)gs_footprint(&op->tensors[t], box);
    return bytes;
}

/* ---- tensor cores: the price of mma instructions -------------------------------- */
double gs_model_mma_clocks(const gs_hw *hw, gs_dtype in, gs_math math, int m, int n, int k) {
    double rate = gs_hw_tensor_flops_per_sm(hw, in, math);
    if (!(rate > 0)) rate = 2.0 * hw->fp32_lanes_per_sm; /* no tensor math: the FMAs it stands for */
    return 2.0 * m * n * k / (rate / 4.0) / hw->mma_sync_efficiency;
}

void gs_model_mma_kstep(const gs_hw *hw, gs_dtype in, gs_math math, int m, int n, int k, int warp_m, int warp_n,
                        const gs_mma_operand *a, const gs_mma_operand *b, gs_mma_kstep *o) {
    double ta = (double)warp_m / m, tb = (double)warp_n / n;
    o->mma = ta * tb;
    o->tensor_clk = o->mma * gs_model_mma_clocks(hw, in, math, m, n, k);
    o->loads = ta * (a->ldsm ? 1 : a->regs * (a->split ? 2 : 1)) + tb * (b->ldsm ? 1 : b->regs * (b->split ? 2 : 1));
    o->pack = ta * (!a->ldsm && a->split ? a->regs : 0) + tb * (!b->ldsm && b->split ? b->regs : 0);
    o->addr = GS_MMA_LDSM_ADDR * (ta * (a->ldsm ? 1 : 0) + tb * (b->ldsm ? 1 : 0));
    o->wavefronts = ta * a->read_wf + tb * b->read_wf;
    o->cvt = math == GS_MATH_TF32 ? ta * a->regs + tb * b->regs : 0;
}

/* ---- the analytic estimate --------------------------------------------------------
 * gs_estimate_plan prices one plan in named steps, in this order: occupancy,
 * the reduce loop, the operands of one reduce index, the copies of one reduce
 * tile, the epilogue, the core's pipes, global traffic, the latency chain,
 * and the total. Each step reads what the steps before it left in est_ctx
 * and fills its own part of est_ctx or of the estimate. */
typedef struct {
    const gs_hw *hw;
    const gs_op *op;
    const gs_etir *e;
    const gs_plan *p;
    const gs_model_params *mp;
    gs_wf_memo *memo;
    double clk;       /* SM clock, Hz */
    int64_t nt;       /* threads per block */
    int64_t warps;    /* warps per block */
    /* est_occupancy */
    double spilled;   /* registers per thread beyond the per-thread cap */
    double slots;     /* blocks resident on the whole GPU at once */
    double warps_res; /* warps resident per SM */
    double blocks_sm; /* blocks each SM runs in total */
    /* est_reduce_loop: per thread */
    int nred;         /* reduce axes */
    double S, R;      /* split-K blocks per output tile, lanes of a reduce group (1: none) */
    double tiles, iters_pad, iters_real, iters_fast, iters_slow;
    double f_inb;     /* share of blocks inside every extent */
    double acc;       /* accumulators per thread */
    /* est_operands: per reduce index and warp */
    double lds_wave, ldg_fast, ldg_slow, l1_fast, l1_slow, per_k_fast, per_k_slow;
    /* est_copies: per reduce tile and warp */
    double copy_wave, barriers, tile_instr;
    /* est_epilogue: per warp */
    double epi_instr, epi_wave, epi_sectors;
    /* est_traffic */
    double l2_in, dram_in;
    /* mma plans (est_operands_mma): tensor-pipe clocks per reduce index and
     * warp, and per k-step of the row (the warp's busy time between two
     * fragment loads) */
    double tensor_k, tensor_step;
    /* gs_estimate_floor_plan: the global accesses' wavefronts and sectors
     * taken as 0 (they only add to t_smem and the output's L2 bytes) */
    bool floor;
    /* gs_model_issue_per_math: a steady full tile, not the average one (every
     * copy on its fast path, a peeled loop's savings whole) */
    bool steady;
} est_ctx;

/* global_wavefronts for the estimate: 0 (and no sectors) for the floor */
static double est_gwf(const est_ctx *c, int t, int w, double *sectors_out) {
    if (c->floor) {
        if (sectors_out) *sectors_out = 0;
        return 0;
    }
    return global_wavefronts(c->hw, c->op, c->e, c->p, t, w, c->mp->l1_sectors_per_clk, sectors_out, c->memo);
}

/* Prices registers and occupancy: the register count, spills, blocks per SM,
 * waves and the warps each SM keeps resident. */
static void est_occupancy(est_ctx *c, int regs_override, gs_estimate *o) {
    const gs_hw *hw = c->hw;
    const gs_plan *p = c->p;
    const int64_t warps = c->warps;
    /* ptxas keeps to the launch bounds' budget; below it, it uses about the
     * plan's typical count. Registers beyond the per-thread cap spill to
     * local memory. */
    /* (a state over the thread limit, which the check rejects, still gets a
     * finite estimate: every divisor below is at least 1) */
    int64_t cap = gs_hw_regs_cap(hw, (int64_t)(p->min_blocks > 0 ? p->min_blocks : 1) * warps);
    int regs = regs_override > 0 ? regs_override : p->regs_bound - GS_REGS_BOUND_MARGIN;
    if (regs_override <= 0 && regs > cap) regs = (int)cap;
    if (regs < 1) regs = 1;
    o->regs_per_thread = regs;
    int regs_alloc = regs < hw->max_regs_per_thread ? regs : hw->max_regs_per_thread;
    regs_alloc = (regs_alloc + 7) / 8 * 8; /* allocated per warp in units of 256 */
    c->spilled = regs > hw->max_regs_per_thread ? regs - hw->max_regs_per_thread : 0;
    int64_t bps = gs_plan_blocks_per_sm(hw, p, regs_alloc);
    if (bps < 1) bps = 1;
    o->blocks_per_sm = (int)bps;
    c->slots = (double)bps * hw->num_sms;
    o->waves = ceil((double)o->blocks / c->slots); /* wave quantisation */
    double resident = fmin((double)bps, ceil((double)o->blocks / (o->waves * hw->num_sms)));
    c->warps_res = resident * warps;
    o->occupancy = c->warps_res * hw->warp_size / (double)hw->max_threads_per_sm;
    c->blocks_sm = o->waves * resident; /* blocks each SM runs in total */
}

/* Prices the reduce loop's trip counts: tiles, and iterations on the fast
 * (full tile, unrolled, unpredicated) and bounded bodies, after split-K and
 * the reduce group. */
static void est_reduce_loop_counts(est_ctx *c);
static void est_reduce_loop(est_ctx *c) {
    gs_wf_memo *memo = c->memo;
    const gs_op *op = c->op;
    const gs_etir *e = c->e;
    const gs_plan *p = c->p;
    c->acc = (double)gs_etir_acc_regs(op, e);
    if (!memo) {
        est_reduce_loop_counts(c);
        return;
    }
    /* through the memo, keyed by what the counts read: every block tile,
     * the split, the lanes, the fast path, whether an input is read
     * directly, and whether the plan is an mma one (whose partial tiles
     * count whole) */
    bool direct = false;
    for (int t = 0; t < op->ninputs; t++) direct |= !p->in[t].staged && p->in[t].direct;
    int64_t kv[1 + GS_MAX_AXES];
    int nk = 0;
    kv[nk++] = (int64_t)p->splitk | (int64_t)(p->split_axis + 1) << 32 | (int64_t)p->lanes << 40 |
               (int64_t)p->fast_path << 56 | (int64_t)direct << 57 | (int64_t)(p->mma != 0) << 58;
    for (int a = 0; a < op->naxes; a++) kv[nk++] = e->tile[a].block;
    const uint64_t key = gs_wf_key(kv, nk, 0x6c6f6f7000000000ull);
    const unsigned slot = (unsigned)(key >> 40) & (GS_WF_MEMO_LOOPS - 1);
    gs_loop_counts *v = &memo->loop_val[slot];
    if (memo->loop_key[slot] != key) {
        est_reduce_loop_counts(c);
        memo->loop_key[slot] = key;
        *v = (gs_loop_counts){.S = c->S, .R = c->R, .tiles = c->tiles, .iters_pad = c->iters_pad,
                              .iters_real = c->iters_real, .iters_fast = c->iters_fast, .iters_slow = c->iters_slow,
                              .f_inb = c->f_inb, .nred = c->nred};
        return;
    }
    c->nred = v->nred;
    c->S = v->S;
    c->R = v->R;
    c->tiles = v->tiles;
    c->iters_pad = v->iters_pad;
    c->iters_real = v->iters_real;
    c->iters_fast = v->iters_fast;
    c->iters_slow = v->iters_slow;
    c->f_inb = v->f_inb;
}

/* est_reduce_loop's trip counts, computed. */
static void est_reduce_loop_counts(est_ctx *c) {
    const gs_op *op = c->op;
    const gs_etir *e = c->e;
    const gs_plan *p = c->p;
    /* iters_whole: the indices of every tile counted whole (an mma plan's), 1/S of them per block */
    double tiles = 1, full_tiles = 1, iters_pad = 1, iters_real = 1, tile_iters = 1, iters_whole = 1;
    int nred = 0;
    for (int a = 0; a < op->naxes; a++) {
        if (op->axes[a].kind != GS_AXIS_REDUCE) continue;
        double E = (double)op->axes[a].extent, T = e->tile[a].block;
        tiles *= ceil(E / T);
        full_tiles *= floor(E / T);
        iters_pad *= ceil(E / T) * T;
        iters_whole *= ceil(E / T) * T;
        iters_real *= E;
        tile_iters *= T;
        nred++;
    }
    /* split-K: a block runs one run of kper tiles of the split axis (the
     * longest run sets the latency chain; the iterations are 1/S of all) */
    const double S = p->splitk > 1 ? p->splitk : 1;
    if (S > 1 && p->split_axis >= 0) {
        int a = p->split_axis;
        double E = (double)op->axes[a].extent, T = e->tile[a].block;
        double all = ceil(E / T), per = ceil(all / S);
        tiles *= per / all;
        full_tiles *= fmin(per, floor(E / T) / S) / fmax(floor(E / T), 1);
        iters_pad *= per / all;
        iters_real /= S;
        iters_whole /= S;
    }
    double f_inb = 1; /* blocks inside every extent */
    for (int a = 0; a < op->naxes; a++)
        if (op->axes[a].kind == GS_AXIS_SPATIAL) {
            double E = (double)op->axes[a].extent, T = e->tile[a].block;
            f_inb *= floor(E / T) / ceil(E / T);
        }
    bool direct = false;
    for (int t = 0; t < op->ninputs; t++) direct |= !p->in[t].staged && p->in[t].direct;
    double iters_fast = 0;
    if (p->fast_path) iters_fast = (direct ? f_inb : 1.0) * full_tiles * tile_iters;
    if (iters_fast > iters_real) iters_fast = iters_real;
    double iters_slow = iters_real - iters_fast;
    /* an mma plan computes every tile whole (its copies zero-fill the edges):
     * a partial tile's k-steps run as a full one's */
    if (p->mma) iters_slow = iters_whole - iters_fast;
    if (nred == 0) {
        iters_fast = p->fast_path && (!direct || f_inb >= 1) ? 1 : 0;
        iters_slow = 1 - iters_fast;
        if (p->fast_path && direct) {
            iters_fast = f_inb;
            iters_slow = 1 - f_inb;
        }
    }
    /* a group's lanes share each reduction: a thread runs 1/R of it */
    double R = p->lanes > 1 ? p->lanes : 1;
    if (R > 1 && nred) {
        iters_fast /= R;
        iters_slow /= R;
        iters_real /= R;
        iters_pad /= R;
    }
    c->nred = nred;
    c->S = S;
    c->R = R;
    c->tiles = tiles;
    c->iters_pad = iters_pad;
    c->iters_real = iters_real;
    c->iters_fast = iters_fast;
    c->iters_slow = iters_slow;
    c->f_inb = f_inb;
}

/* Prices one reduce index per warp: FMAs, operand loads (shared fragments,
 * or global loads of unstaged inputs) and their wavefronts, and spills. */
static void est_operands(est_ctx *c) {
    const gs_op *op = c->op;
    const gs_plan *p = c->p;
    const gs_model_params *mp = c->mp;
    double lds_instr = 0, lds_wave = 0, ldg_fast = 0, ldg_slow = 0, l1_fast = 0, l1_slow = 0;
    /* 16-bit inputs and math=tf32: one conversion (cvt, or a shift) per fragment element */
    const bool converts = op->dtype_in != GS_DTYPE_F32 || op->math != GS_MATH_F32;
    for (int t = 0; t < op->ninputs; t++) {
        const gs_plan_input *pi = &p->in[t];
        double f = frag_elems(op, c->e, t, c->memo);
        if (converts) lds_instr += f;
        if (pi->staged) {
            lds_instr += f / pi->frag_vec;
            lds_wave += f / pi->frag_vec * pi->read_wf;
        } else {
            int wf = pi->direct ? pi->frag_vec : 1;
            double gw1 = est_gwf(c, t, 1, NULL);
            double gwv = wf > 1 ? est_gwf(c, t, wf, NULL) : gw1;
            ldg_fast += pi->direct ? f / wf : f * (1 + mp->unstaged_pred);
            l1_fast += pi->direct ? f / wf * gwv : f * gw1;
            ldg_slow += f * (1 + mp->unstaged_pred);
            l1_slow += f * gw1;
        }
    }
    /* spilled registers: a local load and store per reduce index each */
    ldg_fast += 2.0 * c->spilled;
    ldg_slow += 2.0 * c->spilled;
    l1_fast += 2.0 * c->spilled;
    l1_slow += 2.0 * c->spilled;
    c->lds_wave = lds_wave;
    c->ldg_fast = ldg_fast;
    c->ldg_slow = ldg_slow;
    c->l1_fast = l1_fast;
    c->l1_slow = l1_slow;
    c->per_k_fast = c->acc + lds_instr + ldg_fast + mp->k_overhead_fast;
    c->per_k_slow = c->acc + lds_instr + ldg_slow + mp->k_overhead_bounded;
}

/* Prices one reduce index per warp of an mma plan: a k-step of the row's k
 * indices is (warp_m/m)(warp_n/n) mma instructions on the tensor pipe, the
 * fragment loads of A's and B's instruction tiles (ldmatrix or element
 * reads) and their wavefronts (the plan's read_wf), and TF32's conversions;
 * every tile is whole (the copies zero-fill the edges, and est_reduce_loop
 * counts a partial tile's indices as a full one's), so the bounded body
 * costs what the fast one does, less the k masks below. */
static void est_operands_mma(est_ctx *c) {
    const gs_op *op = c->op;
    const gs_plan *p = c->p;
    const gs_mma_row *r = gs_mma_get(p->mma);
    /* 16-bit element reads without pairs: two reads and a pack a register */
    const int split16 = r->per_reg == 2;
    gs_mma_operand a = {r->a.regs, p->in[0].ldsm, p->in[0].read_wf, split16 && !p->in[0].ldsm && !p->in[0].frag_pairs},
                   b = {r->b.regs, p->in[1].ldsm, p->in[1].read_wf, split16 && !p->in[1].ldsm && !p->in[1].frag_pairs};
    gs_mma_kstep ks;
    gs_model_mma_kstep(c->hw, (gs_dtype)op->dtype_in, (gs_math)op->math, r->m, r->n, r->k, p->warp_m, p->warp_n, &a,
                       &b, &ks);
    const double per = 1.0 / r->k; /* a k-step covers r->k reduce indices */
    c->tensor_k = ks.tensor_clk * per;
    c->tensor_step = ks.tensor_clk;
    c->lds_wave = ks.wavefronts * per;
    c->ldg_fast = c->ldg_slow = c->l1_fast = c->l1_slow = 2.0 * c->spilled;
    /* the k-step's loop overhead is the FFMA loop's per index, once per k-step */
    c->per_k_fast = c->per_k_slow =
        (ks.mma + ks.loads + ks.addr + ks.cvt + ks.pack + c->mp->k_overhead_fast) * per + c->ldg_fast;
    /* plan.kmask: in a tile partial along a masked axis, each k-step zeroes
     * the operand's elements past the extents (print_mma_kmask): per distinct
     * k of a lane an add and a compare per masked axis and a select, an AND
     * per register of each instruction tile, and the tile's guard. Charged
     * to the slow iterations in the share of them such tiles hold. */
    double mask = 0, full = 1;
    uint8_t any = 0;
    for (int t = 0; t < 2; t++) {
        const unsigned km = p->in[t].kmask;
        if (!km) continue;
        const gs_mma_frag *f = t == 0 ? &r->a : &r->b;
        int nax = 0;
        for (int a = 0; a < op->naxes; a++) nax += (int)(km >> a & 1u);
        const int dk = gs_mma_distinct_k(f, t);
        const double tiles = t == 0 ? (double)p->warp_m / r->m : (double)p->warp_n / r->n;
        mask += dk * (2.0 * nax + 1) + tiles * f->regs + 1;
        any |= (uint8_t)km;
    }
    for (int a = 0; a < op->naxes; a++) /* the share of the (whole) tiles full along every masked axis */
        if (any >> a & 1u) {
            const double E = (double)op->axes[a].extent, T = c->e->tile[a].block;
            full *= floor(E / T) / ceil(E / T);
        }
    if (mask > 0 && full < 1 && c->iters_slow > 0) /* (an mma plan's iterations count its tiles whole) */
        c->per_k_slow += mask * per * fmin((1 - full) * (c->iters_fast + c->iters_slow) / c->iters_slow, 1.0);
}

/* Index work of one fast copy unit beyond copy_unit_fast, as the printer
 * emits it for operators of several reduce axes (convolutions; gemms keep
 * the calibrated constant alone), whose copies run at every small (c, r, s)
 * tile: a pointer walk or separable offsets cost nothing more; a per-unit
 * offset array adds the 32-bit add, sign extension and scaled 64-bit add
 * (3); recomputed offsets divide the unit index once per box dim (4 each);
 * a register copy's prefetch register is zeroed besides (1), for the edge
 * path that shares it. Measured on the 3x3 conv picks' steady SASS (h100,
 * a100). */
static double conv_unit_index(int box_ndim, int nred, const gs_plan *p, const gs_plan_input *pi) {
    if (nred <= 1 || p->mma) return 0;
    double x = 0;
    if (pi->unit_recompute) x += 4.0 * box_ndim;
    else if (!pi->unit_linear && !pi->unit_sep) x += 3;
    if (pi->copy_mode == GS_COPY_REG && p->stages > 1) x += 1;
    return x;
}

/* Fraction of a conv's reduce tiles that run in its peeled steady loop
 * (plan.peel on several reduce axes, as lower.c's print_steady_loop_window
 * emits it): the blocks whose every copy passes its fast-path check at the
 * lowest and the highest full reduce origins (a window inside the input),
 * times their full tiles less the last stages-1. 0 when a reduce axis but
 * the first does not divide by its tile (the steady loop is not entered). */
static double steady_window_fraction(const gs_op *op, const gs_etir *e, const gs_plan *p) {
    if (!p->peel || p->stages < 2) return 0;
    int first = -1;
    int64_t reach[GS_MAX_AXES] = {0}, nfull = 1, ntile = 1;
    for (int a = 0; a < op->naxes; a++) {
        if (op->axes[a].kind == GS_AXIS_SPATIAL) continue;
        const int64_t T = e->tile[a].block, E = op->axes[a].extent;
        if (first < 0) {
            first = a;
            nfull *= E / T;
        } else {
            if (E % T) return 0;
            nfull *= E / T;
        }
        ntile *= (E + T - 1) / T;
        reach[a] = (E / T - 1) * T; /* the highest full origin */
    }
    if (first < 0 || ntile <= 0) return 0;
    double f = (double)(nfull - (p->stages - 1)) / (double)ntile;
    if (f <= 0) return 0;
    for (int t = 0; t < op->ninputs; t++) {
        const gs_tensor *ts = &op->tensors[t];
        const gs_plan_input *pi = &p->in[t];
        if (!pi->staged) continue;
        for (int j = 0; j < ts->ndim; j++) {
            const gs_affine *x = &ts->idx[j];
            int amax = -1;
            int64_t cmax = 0, lo = x->offset, len = pi->halo[j];
            for (int a = 0; a < op->naxes; a++) {
                if (op->axes[a].kind != GS_AXIS_SPATIAL) {
                    len += x->coeff[a] * reach[a];
                    continue;
                }
                int64_t c = x->coeff[a] < 0 ? -x->coeff[a] : x->coeff[a];
                if (x->coeff[a] < 0) lo += x->coeff[a] * (e->tile[a].block - 1);
                if (c > cmax) cmax = c, amax = a;
            }
            if (amax < 0) {
                f *= in_range_fraction(lo, 0, 1, len, ts->shape[j]);
                continue;
            }
            const int64_t T = e->tile[amax].block, E = op->axes[amax].extent;
            f *= in_range_fraction(lo, x->coeff[amax] * T, (E + T - 1) / T, len, ts->shape[j]);
        }
    }
    return f;
}

/* Fraction of a gemm-like operator's reduce tiles that run in its peeled
 * steady loop (plan.peel on one reduce axis k, as lower.c's
 * print_steady_loop emits it, plain or fragment-pipelined): the blocks whose
 * every copy passes its fast-path check on the dims not along k (the same
 * at every tile), times their full tiles less the last stages-1 (a split's
 * share of them). */
static double steady_gemm_fraction(const gs_op *op, const gs_etir *e, const gs_plan *p) {
    if (!p->peel || p->stages < 2) return 0;
    int k = -1;
    for (int a = 0; a < op->naxes; a++)
        if (op->axes[a].kind != GS_AXIS_SPATIAL) k = a;
    if (k < 0) return 0;
    const int64_t T = e->tile[k].block, E = op->axes[k].extent;
    const double split = p->splitk > 1 ? p->splitk : 1;
    const double ntile = (double)((E + T - 1) / T) / split, nfull = (double)(E / T) / split;
    if (ntile <= 0) return 0;
    double f = (nfull - gs_plan_steady_ahead(p)) / ntile;
    if (f <= 0) return 0;
    for (int t = 0; t < op->ninputs; t++)
        if (p->in[t].staged) f *= fast_copy_fraction(op, e, &p->in[t], t, k);
    return f;
}

/* Prices one reduce tile per warp: the copies of the staged inputs, the
 * loop's own instructions and its barriers. */
static void est_copies(est_ctx *c) {
    const gs_op *op = c->op;
    const gs_plan *p = c->p;
    const gs_model_params *mp = c->mp;
    /* A unit is copy_vec elements; on the fast path one vector load (or
     * cp.async) and its stores, on the edge path a predicated load and store
     * per element. */
    double copy_instr = 0, copy_wave = 0, copy_fixed = 0;
    for (int t = 0; t < op->ninputs; t++) {
        const gs_plan_input *pi = &p->in[t];
        if (!pi->staged) continue;
        double ff = !p->fast_path ? 0 : c->steady ? 1 : fast_copy_fraction_memo(c->memo, op, c->e, pi, t, -1);
        /* (a grouped transposing copy, plan.store_group: copy_vec G-wide
         * stores a group of G units) */
        double stores = pi->copy_mode == GS_COPY_ASYNC ? 0
                        : (double)pi->copy_vec / (pi->store_group > 1 ? pi->store_group : pi->store_vec);
        double fast = mp->copy_unit_fast + stores + conv_unit_index(pi->im2col ? pi->view_ndim : op->tensors[t].ndim, c->nred, p, pi);
        double edge = pi->copy_vec * (mp->copy_elem_edge + 2.0 * op->tensors[t].ndim) + 2.0 * op->tensors[t].ndim;
        double upt = pi->units_per_thread;
        copy_instr += upt * (ff * fast + (1 - ff) * edge) + 6 + 3 * op->tensors[t].ndim;
        copy_fixed += 6 + 3.0 * op->tensors[t].ndim; /* what a steady loop's tile skips */
        /* global loads through L1 (coalesced: copy_vec wavefronts a unit) and
         * the shared stores */
        /* (an mma plan counts a unit's global wavefronts by its bytes: 32
         * lanes of copy_vec elements are copy_vec * bytes / 4 wavefronts of
         * 128 bytes, and none for cp.async, whose data fills shared memory
         * once: its store wavefronts. The FFMA plans, calibrated so, count
         * copy_vec either way, which is the bytes' count for f32) */
        double gwf = !p->mma ? pi->copy_vec
                     : pi->copy_mode == GS_COPY_ASYNC ? 0.0
                                                      : pi->copy_vec * elem_bytes(op, t) / 4.0;
        copy_wave += upt * (gwf * im2col_gather(op, pi, t) + pi->store_wf);
    }
    c->copy_wave = copy_wave;
    c->barriers = p->stages > 1 ? 1 : (p->smem_bytes ? 2 : 0);
    /* several reduce axes: the tile's origins from counters; with a pipeline
     * two counter sets (copied and computed tile), each axis an increment, a
     * compare, a select and its origin, and the full-tile check (measured on
     * the 3x3 conv picks' SASS: about 8 per axis, not 4) */
    double per_axis = c->nred > 1 && !p->mma && p->stages > 1 && p->smem_bytes > 0 ? 8 : 4;
    c->tile_instr = copy_instr + 8 + per_axis * (c->nred > 1 ? c->nred : 0);
    /* a peeled steady loop: its tiles skip each copy's whole fixed cost
     * (copy_fixed: the fast-path check, its branch, the tile base, which is
     * a pointer stepped with the counters) and the full-tile check, 4 a
     * reduce axis. A conv's (several reduce axes) measured on the 3x3 conv
     * picks' steady SASS (h100 nhwc 159 -> 101 non-FFMA a tile, of which
     * this prices 48); a gemm's plain pipeline (one axis; the
     * fragment-pipelined loop stays unpriced) on the a100 gemm 4096^3
     * pick's (168 -> 140, of which this prices 28) */
    if (c->nred > 1 && p->peel)
        c->tile_instr -= (c->steady ? 1.0 : steady_window_fraction(op, c->e, p)) * (4.0 * c->nred + copy_fixed);
    if (c->nred == 1 && p->peel && !p->mma && !p->frag_pipe)
        c->tile_instr -= (c->steady ? 1.0 : steady_gemm_fraction(op, c->e, p)) * (4.0 + copy_fixed);
}

/* Prices the epilogue per warp: the output's stores, the reduce group's
 * combine and split-K's meet. */
static void est_epilogue(est_ctx *c) {
    const gs_op *op = c->op;
    const gs_plan *p = c->p;
    const double acc = c->acc, R = c->R, S = c->S;
    /* vector stores without predicates in interior blocks, predicated
     * scalars elsewhere; each warp store touches the lines and sectors its
     * lanes' addresses fall in (a thread's run T0 apart from its neighbour's:
     * scattered stores cost sectors, not bytes) */
    double epi_fast = p->fast_path ? c->f_inb : 0;
    double sec1 = 0, secv = 0;
    double lw1 = est_gwf(c, op->ninputs, 1, &sec1);
    double lwv = p->out_vec > 1 ? est_gwf(c, op->ninputs, p->out_vec, &secv) : lw1;
    if (p->out_vec <= 1) secv = sec1;
    double rw = op->epi.beta != 0 ? 2 : 1; /* beta reads the output too */
    double epi_instr = acc * (epi_fast * (2.0 + 1.0 / p->out_vec) + (1 - epi_fast) * 8.0);
    /* mma: the accumulators leave in f32 and a 16-bit output converts them
     * two at a time (cvt.rn.f16x2.f32 / bf16x2) */
    if (p->mma && op->dtype_out != GS_DTYPE_F32) epi_instr += acc * 0.5;
    /* the group's combine: a shuffle and an add per accumulator and step */
    if (R > 1 && !p->lanes_wide) epi_instr += acc * 2 * log2(R);
    /* a wide group: shuffles over the warp, a shared store, two barriers and
     * R/32 shared loads and combines per accumulator */
    if (p->lanes_wide) epi_instr += acc * (2 * log2(GS_LANES_WARP) + 1 + 2 * 2 + 2 * R / GS_LANES_WARP);
    /* split-K's meet: every block stores its partials (index math, a store
     * or an atomic); the last of S reads S of them back and combines (1/S of
     * the blocks, on average S loads and adds each) */
    double meet_instr = 0;
    if (S > 1) meet_instr = acc * (6.0 + (p->split_mode == GS_SPLIT_ATOMIC ? 2.0 : 2.0 * S) / S + 4.0) + 20.0;
    epi_instr += meet_instr;
    c->epi_instr = epi_instr;
    c->epi_wave = acc * rw * (epi_fast / p->out_vec * lwv + (1 - epi_fast) * lw1);
    c->epi_sectors = acc * rw * (epi_fast / p->out_vec * secv + (1 - epi_fast) * sec1); /* per warp */
}

/* Prices the core's pipes: the FMA and issue time (t_compute) and the L1 and
 * shared-memory wavefronts (t_smem) of all the blocks an SM runs. */
static void est_core(const est_ctx *c, gs_estimate *o) {
    const gs_hw *hw = c->hw;
    const int64_t warps = c->warps;
    const double iters_fast = c->iters_fast, iters_slow = c->iters_slow, tiles = c->tiles, clk = c->clk;
    /* per block totals (warp instructions, warp FMAs, L1/shared wavefronts) */
    double block_instr = warps * (iters_fast * c->per_k_fast + iters_slow * c->per_k_slow + tiles * c->tile_instr +
                                  c->epi_instr);
    double block_fma = warps * (iters_fast + iters_slow) * c->acc;
    double block_wave = warps * ((iters_fast + iters_slow) * c->lds_wave + iters_fast * c->l1_fast +
                                 iters_slow * c->l1_slow + tiles * c->copy_wave + c->epi_wave);

    /* latency hiding inside the reduce loop: a scheduler's warps cover the
     * fragment-read-to-FMA wait when their work per index is long enough */
    double per_k = iters_fast >= iters_slow ? c->per_k_fast : c->per_k_slow;
    double window = GS_LDS_LATENCY + GS_FMA_LATENCY;
    /* double-buffered fragments (plan.frag_pipe) are read a k-step ahead:
     * the warp's own k-step covers the shared load's latency */
    if (c->p->frag_pipe) window = fmax(GS_LDS_LATENCY - per_k, 0.0) + GS_FMA_LATENCY;
    if (c->ldg_fast + c->ldg_slow > 0) window = fmax(window, GS_LDS_LATENCY + 0.5 * hw->l2_latency_ns * 1e-9 * clk);
    double hide = clampd((c->warps_res / 4.0) * per_k / (per_k + window), 0.05, 1.0);

    if (c->p->mma) {
        /* the tensor pipe: each of the SM's four partitions runs one warp's
         * mma at a time, so with fewer than four resident warps some idle; a
         * warp's fragment loads wait GS_LDS_LATENCY and its first mma's
         * result GS_MMA_LATENCY, covered by its own k-step (tensor_step
         * clocks) and the other warps of its partition */
        double parts = fmin(4.0, fmax(c->warps_res, 1.0));
        double t_tensor = c->blocks_sm * warps * (iters_fast + iters_slow) * c->tensor_k / (parts * clk);
        double t_issue = c->blocks_sm * (block_instr + warps * tiles * c->barriers * 2) / (4.0 * clk);
        double win = GS_LDS_LATENCY + GS_MMA_LATENCY;
        double hide_mma = clampd((c->warps_res / 4.0) * c->tensor_step / (c->tensor_step + win), 0.05, 1.0);
        /* the tensor pipe and the issue slots overlap as the pipes do (a
         * p-norm, not a max): of two rows with the same tensor time, the one
         * that issues fewer instructions (the wider k) is faster */
        double both[2] = {t_tensor, t_issue};
        o->t_compute = pnorm(both, 2, c->mp->pipe_norm) / (hide_mma * GS_MMA_SUSTAIN);
        o->t_smem = c->blocks_sm * block_wave / clk;
        return;
    }
    double fma_rate = hw->fp32_lanes_per_sm / (double)hw->warp_size; /* warp FMAs per clock per SM */
    /* FMAs and every other instruction issue from the same four schedulers,
     * and the FMA pipe takes a warp FMA per clock per 32 lanes: the core is
     * bound by the larger of the two, at the sustained fraction
     * fma_efficiency (dependency stalls, operand bank conflicts) */
    double t_fma = c->blocks_sm * block_fma / (fma_rate * clk);
    double t_issue = c->blocks_sm * (block_instr + warps * tiles * c->barriers * 2) / (4.0 * clk);
    /* Where a warp FFMA holds the FMA pipe for more than one issue slot (64
     * fp32 lanes per SM: a100, v100, t4), the other instructions issue in
     * the slots between, and they overlap as the pipes do (a p-norm, as the
     * tensor pipe's above), not perfectly: of two tiles with the same FFMA
     * time the one whose loop issues fewer other instructions is faster.
     * With one FFMA per issue slot the issue count holds the FFMAs already. */
    if (fma_rate < 4.0) {
        double both[2] = {t_fma, t_issue};
        o->t_compute = pnorm(both, 2, c->mp->pipe_norm) / (hide * c->mp->fma_efficiency);
    } else
        o->t_compute = fmax(t_fma, t_issue) / (hide * c->mp->fma_efficiency);
    o->t_smem = c->blocks_sm * block_wave / clk;
}

/* The operator's input bytes (every input's elements) and output bytes
 * (twice with beta: it reads the output too), once per memo (NULL: each
 * time). */
static void op_bytes(gs_wf_memo *memo, const gs_op *op, double *in, double *out) {
    if (memo && memo->bytes_known) {
        *in = memo->in_bytes;
        *out = memo->out_bytes;
        return;
    }
    *out = elem_bytes(op, op->ninputs) * (double)gs_tensor_elems(gs_op_out(op)) * (op->epi.beta != 0 ? 2 : 1);
    *in = 0;
    for (int t = 0; t < op->ninputs; t++) *in += elem_bytes(op, t) * (double)gs_tensor_elems(&op->tensors[t]);
    if (memo) {
        memo->in_bytes = *in;
        memo->out_bytes = *out;
        memo->bytes_known = 1;
    }
}

/* wave_unique_bytes through memo (NULL: none), keyed by what it reads: the
 * wave's blocks, the raster group and the spatial axes' block tiles (the
 * raster's axes, the extents and the tensors are the operator's). */
static double wave_unique_bytes_memo(gs_wf_memo *memo, const gs_op *op, const gs_etir *e, const gs_plan *p,
                                     double slots) {
    if (!memo) return wave_unique_bytes(op, e, p, slots);
    int64_t kv[2 + GS_MAX_AXES];
    int nk = 0;
    uint64_t sb;
    memcpy(&sb, &slots, sizeof sb);
    kv[nk++] = (int64_t)sb;
    kv[nk++] = p->raster;
    for (int a = 0; a < op->naxes; a++)
        if (op->axes[a].kind == GS_AXIS_SPATIAL) kv[nk++] = e->tile[a].block;
    const uint64_t key = gs_wf_key(kv, nk, 0x7761766500000000ull);
    const unsigned slot = (unsigned)(key >> 40) & (GS_WF_MEMO_WAVES - 1);
    if (memo->wave_key[slot] != key) {
        memo->wave_key[slot] = key;
        memo->wave_val[slot] = wave_unique_bytes(op, e, p, slots);
    }
    return memo->wave_val[slot];
}

/* Prices global traffic: the bytes L2 and DRAM see (inputs, output, split-K's
 * workspace, spills) and their times t_l2 and t_dram. */
static void est_traffic(est_ctx *c, gs_estimate *o) {
    const gs_hw *hw = c->hw;
    const gs_op *op = c->op;
    const gs_etir *e = c->e;
    const gs_plan *p = c->p;
    const double S = c->S, tiles = c->tiles;
    /* L2 sees every block's boxes every tile (unstaged inputs too: L1 keeps
     * the block's working set) and the output. DRAM sees each wave's unique
     * footprint once (rows and columns shared within a wave hit L2), or only
     * the compulsory bytes when all inputs fit in half the L2. */
    double in_bytes, out_bytes;
    op_bytes(c->memo, op, &in_bytes, &out_bytes);
    double out_l2 = fmax(out_bytes, (double)o->blocks / S * c->warps * c->epi_sectors * hw->transaction_bytes);
    /* split-K's workspace: S partial slices written and read back once
     * (ordered), or S atomic adds into one slice and one read (each atomic a
     * read and a write at L2); DRAM sees it only when it does not fit in
     * half the L2 */
    double ws_l2 = 0, ws_dram = 0;
    if (S > 1) {
        double pts = 4.0 * (double)gs_op_out_points(op);
        ws_l2 = p->split_mode == GS_SPLIT_ATOMIC ? pts * (2 * S + 1) : pts * 2 * S;
        double ws = (double)gs_plan_workspace_bytes(op, e, p);
        if (ws > 0.5 * (double)hw->l2_bytes) ws_dram = ws_l2;
    }
    double l2_in = 0;
    {
        int64_t box[GS_MAX_AXES];
        gs_etir_box(op, e, 2, box);
        double be = 0;
        for (int t = 0; t < op->ninputs; t++) be += elem_bytes(op, t) * tile_l2_elems_memo(c->memo, op, e, p, t, box);
        l2_in = (double)o->blocks * tiles * be;
    }
    double l2_bytes =
        l2_in + out_l2 + ws_l2 + 4.0 * (double)o->blocks * (double)c->nt * c->iters_pad * 2.0 * c->spilled * 0.5;
    double dram_in = in_bytes;
    if (in_bytes > 0.5 * (double)hw->l2_bytes) {
        /* (the floor: no wave's footprint, the compulsory bytes at least) */
        double wave = c->floor ? 0 : wave_unique_bytes_memo(c->memo, op, e, p, fmin(c->slots, (double)o->blocks));
        dram_in = fmin(l2_in, fmax(in_bytes, o->waves * wave));
    }
    c->l2_in = l2_in;
    c->dram_in = dram_in;
    o->dram_bytes = dram_in + out_bytes + ws_dram;
    o->t_dram = o->dram_bytes / (hw->dram_gbs * 1e9);
    o->t_l2 = l2_bytes / (hw->l2_gbs * 1e9);
}

/* Prices the reduce-tile latency chain of one block, over the waves
 * (t_latency). */
static void est_latency(const est_ctx *c, gs_estimate *o) {
    const gs_hw *hw = c->hw;
    const gs_op *op = c->op;
    const gs_plan *p = c->p;
    const gs_model_params *mp = c->mp;
    const double tiles = c->tiles, clk = c->clk;
    /* Its copies wait for global memory (an L2 hit, or DRAM for the share
     * that misses); with one stage the block loads, waits, computes and syncs
     * in turn; with s stages s-1 tiles are in flight (a register hop: one),
     * so the wait overlaps the compute of the tiles before. Other resident
     * blocks fill the gaps: the chain is a lower bound on the time, next to
     * the pipes' throughput. */
    double miss = c->l2_in > 0 ? clampd((c->dram_in - 0) / c->l2_in, 0, 1) : 1;
    double l_mem =
        mp->latency_scale * (hw->l2_latency_ns + miss * (hw->dram_latency_ns - hw->l2_latency_ns)) * 1e-9 * clk;
    double per_smsp = ceil(c->warps / 4.0), fma_smsp = hw->fp32_lanes_per_sm / 128.0;
    double tile_warp_instr =
        tiles > 0 ? (c->iters_fast * c->per_k_fast + c->iters_slow * c->per_k_slow) / tiles + c->tile_instr : 0;
    double tile_warp_fma = tiles > 0 ? (c->iters_fast + c->iters_slow) / tiles * c->acc : 0;
    double c_alone = per_smsp * fmax(tile_warp_instr, tile_warp_fma / fma_smsp) / mp->fma_efficiency;
    /* mma: a warp's tile is its k-steps on its partition's tensor pipe */
    if (p->mma)
        c_alone = per_smsp * fmax(tile_warp_instr, tiles > 0 ? (c->iters_fast + c->iters_slow) / tiles * c->tensor_k : 0) /
                  GS_MMA_SUSTAIN;
    /* load rounds a tile's copy waits for: one per batch of a batched copy
     * (each batch's loads wait behind the stores of the one before); the
     * inputs copied in one batch overlap each other */
    double rounds = 0;
    bool single = false;
    for (int t = 0; t < op->ninputs; t++) {
        const gs_plan_input *pi = &p->in[t];
        if (!pi->staged || pi->units_per_thread <= 0) continue;
        int b = pi->copy_batch > 0 ? pi->copy_batch : pi->units_per_thread;
        if (b >= pi->units_per_thread || pi->copy_mode == GS_COPY_ASYNC) single = true;
        else rounds += ceil((double)pi->units_per_thread / b);
    }
    rounds += single;
    if (rounds < 1) rounds = 1;
    double chain;
    if (p->stages <= 1 || p->smem_bytes == 0) chain = rounds * l_mem + c_alone + c->barriers * mp->barrier_cycles;
    else {
        /* a tile's period: the compute, or a load's latency over the tiles
         * in flight (s-1 for cp.async; 1 through registers, whose hop holds
         * one tile), whichever is longest. The latencies vary (a tile waits
         * for the last of its loads, the barrier for the last warp), so the
         * terms combine as a p-norm, not a max: a deeper pipeline still
         * shortens the period when the mean latency is covered, the less
         * the further it is below the compute. The inputs of one copy
         * mechanism are issued together and make one term; register hops
         * and a cp.async ring make two, so a deeper ring shortens the
         * period beside a register hop too. */
        bool any_reg = false, any_async = false;
        for (int t = 0; t < op->ninputs; t++)
            if (p->in[t].staged && p->in[t].units_per_thread > 0) {
                any_reg |= p->in[t].copy_mode == GS_COPY_REG;
                any_async |= p->in[t].copy_mode != GS_COPY_REG;
            }
        double per_tile[3];
        int n = 0;
        per_tile[n++] = c_alone;
        if (any_reg) per_tile[n++] = l_mem;
        if (any_async) per_tile[n++] = l_mem / (p->stages - 1.0);
        chain = pnorm(per_tile, n, mp->latency_norm) + mp->barrier_cycles;
    }
    if (c->nred == 0) chain = l_mem + c_alone;
    /* per block also the first load and the final store */
    double block_lat = (c->nred ? tiles * chain : chain) + 2 * l_mem + c->epi_instr * per_smsp;
    /* split-K: the partials' stores, the fence and the counter's atomic,
     * then the last block's reads of the slices: three more memory trips */
    if (c->S > 1) block_lat += 3 * l_mem;
    o->t_latency = o->waves * block_lat / clk;
}

/* Prices the whole kernel: the pipes overlap, imperfectly when two are close
 * (a p-norm of their times), and so do the throughput and the latency chain;
 * plus the launch. Names the bound. */
static void est_total(const est_ctx *c, gs_estimate *o) {
    o->t_sync = 0;
    o->t_launch = c->hw->launch_overhead_us * 1e-6;
    double pipes[4] = {o->t_compute, o->t_smem, o->t_l2, o->t_dram};
    double thr = pnorm(pipes, 4, c->mp->pipe_norm);
    o->bound = "compute";
    double tmax = o->t_compute;
    if (o->t_dram > tmax) { tmax = o->t_dram; o->bound = "dram"; }
    if (o->t_l2 > tmax) { tmax = o->t_l2; o->bound = "l2"; }
    if (o->t_smem > tmax) { tmax = o->t_smem; o->bound = "smem"; }
    if (o->t_latency > thr) o->bound = "latency";
    double both[2] = {thr, o->t_latency};
    o->time_s = pnorm(both, 2, c->mp->latency_norm) + o->t_launch;
}

/* The steps up to one reduce tile's price (the shape of the launch, the
 * occupancy, the reduce loop, the operands of an index, the copies):
 * what gs_estimate_plan and gs_model_issue_per_math share. */
static void est_tile(est_ctx *c, int regs_override, gs_estimate *o) {
    const gs_plan *p = c->p;
    c->clk = c->hw->clock_mhz * 1e6;
    c->nt = p->threads;
    c->warps = (c->nt + c->hw->warp_size - 1) / c->hw->warp_size;
    o->threads = c->nt;
    o->blocks = gs_etir_blocks(c->op, c->e);
    o->smem_bytes = p->smem_bytes + p->scratch_bytes;
    est_occupancy(c, regs_override, o);
    est_reduce_loop(c);
    if (p->mma && gs_mma_get(p->mma)) est_operands_mma(c);
    else est_operands(c);
    est_copies(c);
}

void gs_estimate_plan(const gs_hw *hw, const gs_op *op, const gs_etir *e, const gs_plan *p, int regs_override,
                      const gs_model_params *mpp, gs_wf_memo *memo, gs_estimate *o) {
    gs_model_params mp;
    if (mpp) mp = *mpp;
    else gs_model_params_default(&mp);
    memset(o, 0, sizeof *o);
    est_ctx c = {.hw = hw, .op = op, .e = e, .p = p, .mp = &mp, .memo = memo};
    est_tile(&c, regs_override, o);
    est_epilogue(&c);
    est_core(&c, o);
    est_traffic(&c, o);
    est_latency(&c, o);
    est_total(&c, o);
}

double gs_model_issue_per_math(const gs_hw *hw, const gs_op *op, const gs_etir *e, const gs_plan *p) {
    gs_model_params mp;
    gs_model_params_default(&mp);
    gs_estimate o;
    memset(&o, 0, sizeof o);
    est_ctx c = {.hw = hw, .op = op, .e = e, .p = p, .mp = &mp, .memo = NULL, .steady = true};
    est_tile(&c, 0, &o);
    const gs_mma_row *r = p->mma ? gs_mma_get(p->mma) : NULL;
    if (!(c.tiles > 0)) return 0.0;
    /* a tile's reduce indices per thread, and its math per index */
    const double k = (c.iters_fast + c.iters_slow) / c.tiles;
    const double math = r ? ((double)p->warp_m / r->m) * ((double)p->warp_n / r->n) / r->k : c.acc;
    if (!(k * math > 0)) return 0.0;
    return (k * c.per_k_fast + c.tile_instr + c.barriers) / (k * math);
}

bool gs_estimate_checked(const gs_hw *hw, const gs_op *op, const gs_etir *e, gs_wf_memo *memo, gs_estimate *o) {
    gs_plan p;
    if (!gs_hw_check_plan(hw, op, e, memo, &p)) return false;
    gs_plan_finish_memo(hw, op, e, memo, &p);
    gs_estimate_plan(hw, op, e, &p, 0, NULL, memo, o);
    return true;
}

void gs_estimate_etir_memo(const gs_hw *hw, const gs_op *op, const gs_etir *e, int regs_override, gs_wf_memo *memo,
                           gs_estimate *o) {
    gs_plan p;
    gs_plan_make_memo(hw, op, e, NULL, memo, &p);
    gs_estimate_plan(hw, op, e, &p, regs_override, NULL, memo, o);
}

void gs_estimate_etir(const gs_hw *hw, const gs_op *op, const gs_etir *e, int regs_override, gs_estimate *o) {
    gs_estimate_etir_memo(hw, op, e, regs_override, NULL, o);
}

/* ---- a floor under the estimate ----------------------------------------------------
 * A lower bound on a state's estimate from its shaped plan: what
 * gs_hw_check_plan leaves (the shape: threads, vectors, copy modes, shared
 * memory, the register bound), before gs_plan_finish_memo chooses the
 * padding by simulating the banks (about a third of a state's price) and
 * the estimate simulates the global accesses (a tenth). The polish
 * (construct/markov.c) passes over a neighbour whose floor is above the
 * best price it has met. It is the estimate's own steps with each number
 * finish and the simulations give at its cheapest:
 *  - no shared-memory wavefronts (read_wf, store_wf) and no global ones
 *    (est_gwf), which only add to t_smem (and the output's sectors, which
 *    only raise its L2 bytes above its size);
 *  - the widest output vector: the fewest epilogue instructions;
 *  - no wave footprint: DRAM reads at least the compulsory bytes (or the
 *    L2's, when fewer);
 *  - every load at an L2 hit's latency (no DRAM share);
 *  - the launch bounds as finish sets them, from the shape's register
 *    bound, shared memory and threads: the occupancy is the estimate's.
 * Each term of the estimate grows with each of these (the pipes' and the
 * latency's p-norms grow with every term), so the floor is under it; the
 * factor 1 - 1e-9 covers the rounding of a p-norm whose largest term
 * changed. The core's pipes come first: when the larger of t_compute and
 * t_smem (plus the launch) is above cut, that is the floor returned. mma
 * plans (whose fragment reads finish lays out): 0. GS_AUDIT_FLOOR
 * (tests/test_construct.c) checks the floor against the price of every
 * state the polish meets. */
double gs_estimate_floor_plan(const gs_hw *hw, const gs_op *op, const gs_etir *e, const gs_plan *shape, double cut) {
    return gs_estimate_floor_plan_memo(hw, op, e, shape, NULL, cut);
}

double gs_estimate_floor_plan_memo(const gs_hw *hw, const gs_op *op, const gs_etir *e, const gs_plan *shape,
                                   gs_wf_memo *memo, double cut) {
    if (shape->mma) return 0;
    gs_plan p = *shape;
    for (int t = 0; t < op->ninputs; t++) p.in[t].read_wf = p.in[t].store_wf = 0;
    p.out_vec = (uint8_t)(16 / gs_dtype_row(op->dtype_out)->bytes);
    int64_t mb = gs_plan_blocks_per_sm(hw, &p, p.regs_bound);
    p.min_blocks = p.opts.min_blocks1 || mb < 1 ? 1 : (int32_t)mb;
    gs_model_params mp;
    gs_model_params_default(&mp);
    gs_estimate o;
    memset(&o, 0, sizeof o);
    est_ctx c = {.hw = hw, .op = op, .e = e, .p = &p, .mp = &mp, .memo = memo, .floor = true};
    c.clk = hw->clock_mhz * 1e6;
    c.nt = p.threads;
    c.warps = (c.nt + hw->warp_size - 1) / hw->warp_size;
    o.blocks = gs_etir_blocks(op, e);
    est_occupancy(&c, 0, &o);
    est_reduce_loop(&c);
    est_operands(&c);
    est_copies(&c);
    est_epilogue(&c);
    est_core(&c, &o);
    /* the largest of the core's pipes is under the estimate already: past
     * cut, it is the floor (the traffic and the latency chain not needed) */
    double core = (fmax(o.t_compute, o.t_smem) + hw->launch_overhead_us * 1e-6) * (1 - 1e-9);
    if (core > cut) return core;
    est_traffic(&c, &o);
    c.l2_in = 1; /* no DRAM share: a load's latency at its least */
    c.dram_in = 0;
    est_latency(&c, &o);
    est_total(&c, &o);
    return o.time_s * (1 - 1e-9);
}
