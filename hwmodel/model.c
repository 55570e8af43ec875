/* model.c — the resource ("memory") check, the paper's benefit formulas
 * (1)-(3), and the analytic latency estimate used to rank candidates.
 *
 * Everything here reads hardware numbers from the profile; nothing branches
 * on an architecture name. */
#include "hwmodel/hw.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* Accumulators per thread we allow: beyond 128 fp32 accumulators plus the
 * fragments and addressing, ptxas starts spilling at the 255-register cap. */
#define GS_MAX_ACC 128
/* How far the register bound sits above the typical ptxas count. */
#define GS_REGS_BOUND_MARGIN 4
/* Blocks of one launch: the grid is 1-D, CUDA's gridDim.x is at most 2^31-1,
 * and the kernel reads its block index as a 32-bit int. */
#define GS_MAX_GRID 2147483647LL

/* ---- resources ----------------------------------------------------------------- */
static int64_t staged_smem_bytes(const gs_op *op, const gs_etir *e) {
    int64_t bytes = 0, dims[GS_MAX_DIMS], pitch;
    for (int t = 0; t < op->ninputs; t++)
        if (e->stage[t]) bytes += 4 * gs_stage_layout(op, e, t, dims, &pitch);
    return bytes;
}

/* Register fragment of input t: its values for one reduce index over the
 * spatial axes it depends on (what the emitted kernel keeps in f<t>[]). */
static int64_t frag_regs(const gs_op *op, const gs_etir *e, int t) {
    int64_t n = 1;
    for (int a = 0; a < op->naxes; a++)
        if (op->axes[a].kind == GS_AXIS_SPATIAL && gs_tensor_uses_axis(&op->tensors[t], a)) n *= e->T[a][1];
    return n;
}

void gs_etir_resources(const gs_op *op, const gs_etir *e, gs_resources *r) {
    r->smem_bytes = staged_smem_bytes(op, e);
    r->threads = gs_etir_threads(op, e);
    /* accumulators + fragments + ~52 for indices, loop counters and pointers
     * (checked against ptxas over the test sweeps: it is an upper bound) */
    int64_t regs = gs_etir_acc_regs(op, e) + 52 + 2 * op->naxes;
    for (int t = 0; t < op->ninputs; t++) regs += frag_regs(op, e, t);
    r->regs_per_thread = (int)(regs > 100000 ? 100000 : regs);
    /* the performance model uses a typical count a little below the bound
     * (ptxas lands 0-16 below it on the test sweeps); the check keeps the
     * bound. Margins 0/4/8/12/16 tried in calibration: 4 kept (rho 0.863,
     * top-1 1.086x; 8 raised rho to 0.868 but sent top-1 to 1.58x). */
    int64_t typical = regs - GS_REGS_BOUND_MARGIN;
    r->regs_expected = (int)(typical > 100000 ? 100000 : typical);
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
        span[a] = op->axes[a].extent + e->T[a][2] - 1;
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

bool gs_hw_check(const gs_hw *hw, const gs_op *op, const gs_etir *e) {
    if (!gs_etir_wellformed(op, e)) return false;
    if (!index_fits_int32(op, e)) return false;
    gs_resources r;
    gs_etir_resources(op, e, &r);
    /* static shared memory: the 48 KiB a block gets without opt-in */
    if (r.smem_bytes > hw->smem_per_block) return false;
    if (e->level == 2) {
        /* block tile must admit some thread tile within both limits */
        int64_t elems = 1;
        for (int a = 0; a < op->naxes; a++)
            if (op->axes[a].kind == GS_AXIS_SPATIAL) elems *= e->T[a][2];
        return elems <= (int64_t)hw->max_threads_per_block * GS_MAX_ACC;
    }
    if (r.threads < 1 || r.threads > hw->max_threads_per_block) return false;
    if (gs_etir_blocks(op, e) > GS_MAX_GRID) return false;
    if (gs_etir_acc_regs(op, e) > GS_MAX_ACC) return false;
    if (r.regs_per_thread > hw->max_regs_per_thread) return false;
    /* one block must fit an SM: registers are allocated per warp */
    int64_t warps = (r.threads + hw->warp_size - 1) / hw->warp_size;
    if ((int64_t)r.regs_per_thread * warps * hw->warp_size > hw->regs_per_sm) return false;
    return true;
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
double gs_benefit_caching(const gs_hw *hw, const gs_op *op, const gs_etir *e, int level) {
    int64_t box[GS_MAX_AXES];
    gs_etir_box(op, e, level, box);
    double S = 4.0 * gs_footprint_total(op, box); /* bytes, fp32 */
    double clk = hw->clock_mhz * 1e6;
    double smem_bw_sm = hw->smem_banks * hw->bank_bytes * clk; /* B/s per SM */
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
    double x = (double)lanes * e->T[axis][1];
    double W = hw->smem_banks;
    double before = ceil(x / (e->V[axis] * W)), after = ceil(x / (v * W));
    return after > 0 ? before / after : 1.0;
}

/* ---- analytic latency estimate ------------------------------------------------------
 * The formulas are written out in hwmodel/MODEL.md. Constants that are not
 * properties of a particular GPU (they describe the emitted code and generic
 * SIMT behaviour) are named here; every GPU-specific number comes from the
 * profile. */

/* Warp instructions per reduce iteration besides FMAs and operand loads:
 * loop counter, predicate, address increments. */
#define GS_K_OVERHEAD_INSTR 3.0
/* Instructions per staged element in the cooperative load: index math, the
 * predicated global load and the shared store. */
#define GS_STAGE_INSTR 8.0
/* Sustained fraction of the FMA pipe in a register-blocked inner loop (operand
 * bank conflicts, dual-issue limits): measured kernels reach 65-80 %; the
 * RTX 3090 sweep fits 0.7 (experiments/calibrate.c, hwmodel/MODEL.md). */
#define GS_FMA_EFFICIENCY 0.7
/* Shared-memory load-to-use latency in cycles and FMA latency in cycles. */
#define GS_LDS_LATENCY 30.0
#define GS_FMA_LATENCY 4.0
/* Sectors per clock the L1 tag stage serves for global loads that scatter
 * over many lines; a coalesced load is limited by lines (128 B/clk) instead.
 * Fitted on the RTX 3090 sweep (1, 1.25, 1.5, 2, 4 tried: 1.25 best). */
#define GS_L1_SECTORS_PER_CLK 1.25
/* Fraction of the other pipes' time that does not overlap the busiest pipe
 * (0.02-0.2 tried on the RTX 3090 sweep: rho 0.859-0.865, top-1 1.086x for
 * 0.05-0.2; 0.1 kept as the middle of that plateau). */
#define GS_PIPE_OVERLAP_LOSS 0.1
/* Widest vector load a thread issues on a contiguous run (128-bit = 4 fp32). */
#define GS_MAX_VEC 4

/* Lane addresses (in elements) of one warp-wide access to input t, for a
 * tensor laid out with strides rs[] per tensor dim. A lane's address is
 * affine in its thread coordinates: addr = sum_a th_a * T0_a * step_a where
 * step_a is how far one unit of axis a moves in memory. Lanes are enumerated
 * as the kernel decomposes its thread index (last spatial axis fastest).
 * Also returns the vector width a thread can use: its contiguous run along
 * the axis with unit step (T0 elements), capped at GS_MAX_VEC. */
static int lane_addresses(const gs_hw *hw, const gs_op *op, const gs_etir *e, int t, const int64_t *rs, int64_t *addr,
                          int *vec) {
    const gs_tensor *ts = &op->tensors[t];
    int64_t step[GS_MAX_AXES], thr[GS_MAX_AXES], th[GS_MAX_AXES];
    int nax = 0, w = 1;
    for (int a = op->naxes - 1; a >= 0; a--) {
        if (op->axes[a].kind != GS_AXIS_SPATIAL) continue;
        /* addresses wrap modulo 2^64 (unsigned) rather than overflow for
         * absurd strides; bank indices (mod a power of two) stay exact */
        uint64_t st = 0;
        for (int j = 0; j < ts->ndim; j++) st += (uint64_t)ts->idx[j].coeff[a] * (uint64_t)rs[j];
        int64_t t0 = e->T[a][1] / e->V[a];
        if (st == 1 && t0 > w) w = (int)(t0 < GS_MAX_VEC ? t0 : GS_MAX_VEC);
        step[nax] = (int64_t)(st * (uint64_t)t0);
        thr[nax] = gs_etir_threads_axis(e, a);
        th[nax] = 0;
        nax++;
    }
    int64_t nt = gs_etir_threads(op, e);
    int lanes = (int)(nt < hw->warp_size ? nt : hw->warp_size);
    if (lanes > 64) lanes = 64;
    for (int l = 0; l < lanes; l++) {
        uint64_t ad = 0;
        for (int i = 0; i < nax; i++) ad += (uint64_t)th[i] * (uint64_t)step[i];
        addr[l] = (int64_t)ad;
        for (int i = 0; i < nax; i++) { /* odometer: the next lane */
            if (++th[i] < thr[i]) break;
            th[i] = 0;
        }
    }
    *vec = w;
    return lanes;
}

static void sort_i64(int64_t *x, int n) {
    for (int i = 1; i < n; i++) {
        int64_t v = x[i];
        int j = i - 1;
        for (; j >= 0 && x[j] > v; j--) x[j + 1] = x[j];
        x[j + 1] = v;
    }
}

/* Shared-memory wavefronts of one warp-wide (vector) fragment load of staged
 * input t. A warp's w-wide access is served in w phases of 32/w lanes; in
 * each phase the cost is the largest number of distinct words in one bank
 * (equal words broadcast). With w = 1 this is the classic conflict degree.
 * Returns wavefronts per load instruction; *vec gets w. */
double smem_conflict_degree(const gs_hw *hw, const gs_op *op, const gs_etir *e, int t) {
    int vec;
    return gs_smem_wavefronts(hw, op, e, t, &vec);
}

double gs_smem_wavefronts(const gs_hw *hw, const gs_op *op, const gs_etir *e, int t, int *vec) {
    int64_t dims[GS_MAX_DIMS], pitch, rs[GS_MAX_DIMS], addr[64];
    const gs_tensor *ts = &op->tensors[t];
    gs_stage_layout(op, e, t, dims, &pitch);
    rs[ts->ndim - 1] = 1;
    for (int j = ts->ndim - 2; j >= 0; j--)
        rs[j] = (int64_t)((uint64_t)rs[j + 1] * (uint64_t)(j + 1 == ts->ndim - 1 ? pitch : dims[j + 1]));
    int w, lanes = lane_addresses(hw, op, e, t, rs, addr, &w);
    /* the odd pitch padding breaks 16-byte alignment of rows: vector loads
     * along the innermost dim still work within a row only when the pitch
     * keeps alignment; model that as: rows of an odd pitch allow no vectors
     * across the outer dims, which the per-lane addresses already capture */
    *vec = w;
    int per_phase = lanes / w > 0 ? lanes / w : 1, banks = hw->smem_banks < 256 ? hw->smem_banks : 256;
    double total = 0;
    for (int p0 = 0; p0 < lanes; p0 += per_phase) {
        int n = 0;
        int64_t words[256];
        for (int l = p0; l < p0 + per_phase && l < lanes; l++)
            for (int k = 0; k < w && n < 256; k++) words[n++] = (int64_t)((uint64_t)addr[l] + (uint64_t)k);
        sort_i64(words, n);
        int count[256] = {0}, worst = 1;
        for (int i = 0; i < n; i++) {
            if (i && words[i] == words[i - 1]) continue;
            int b = (int)(((words[i] % banks) + banks) % banks);
            if (++count[b] > worst) worst = count[b];
        }
        total += worst;
    }
    return total;
}

/* L1 cycles of one warp-wide (vector) global load of unstaged input t: the
 * distinct 32-byte sectors the warp touches over the sectors the L1 serves
 * per clock for global loads (GS_L1_SECTORS_PER_CLK). */
static double global_wavefronts(const gs_hw *hw, const gs_op *op, const gs_etir *e, int t, int *vec) {
    const gs_tensor *ts = &op->tensors[t];
    int64_t rs[GS_MAX_DIMS], addr[64];
    rs[ts->ndim - 1] = 1;
    for (int j = ts->ndim - 2; j >= 0; j--) rs[j] = (int64_t)((uint64_t)rs[j + 1] * (uint64_t)ts->shape[j + 1]);
    int w, lanes = lane_addresses(hw, op, e, t, rs, addr, &w);
    *vec = w;
    int64_t per_sector = hw->transaction_bytes / 4 > 0 ? hw->transaction_bytes / 4 : 8;
    int64_t sec[256], line[256];
    int n = 0;
    for (int l = 0; l < lanes; l++)
        for (int k = 0; k < w && n < 256; k++) {
            uint64_t ak = (uint64_t)addr[l] + (uint64_t)k;
            sec[n] = (int64_t)(ak / (uint64_t)per_sector);
            line[n] = (int64_t)(ak / 32); /* 128-byte lines */
            n++;
        }
    sort_i64(sec, n);
    sort_i64(line, n);
    int distinct = 0, lines = 0;
    for (int i = 0; i < n; i++) {
        distinct += !i || sec[i] != sec[i - 1];
        lines += !i || line[i] != line[i - 1];
    }
    /* one wavefront per 128-byte line, and the tag stage serves at most
     * GS_L1_SECTORS_PER_CLK sectors a clock */
    return fmax(lines, distinct / GS_L1_SECTORS_PER_CLK);
}

static double clampd(double x, double lo, double hi) { return x < lo ? lo : x > hi ? hi : x; }

void gs_estimate_etir(const gs_hw *hw, const gs_op *op, const gs_etir *e, int regs_override, gs_estimate *o) {
    memset(o, 0, sizeof *o);
    gs_resources r;
    gs_etir_resources(op, e, &r);
    r.regs_per_thread = regs_override > 0 ? regs_override : r.regs_expected;
    const double clk = hw->clock_mhz * 1e6;
    const int64_t nt = r.threads;
    const int64_t warps = (nt + hw->warp_size - 1) / hw->warp_size;
    o->threads = nt;
    o->blocks = gs_etir_blocks(op, e);
    o->regs_per_thread = r.regs_per_thread;
    o->smem_bytes = r.smem_bytes;
    /* registers beyond the per-thread cap spill to local memory */
    int regs_alloc = r.regs_per_thread < hw->max_regs_per_thread ? r.regs_per_thread : hw->max_regs_per_thread;
    double spilled = r.regs_per_thread > hw->max_regs_per_thread ? r.regs_per_thread - hw->max_regs_per_thread : 0;

    /* occupancy: blocks per SM limited by threads, registers, smem, blocks */
    int64_t bps = hw->max_blocks_per_sm;
    int64_t by_thr = hw->max_threads_per_sm / (warps * hw->warp_size);
    int64_t by_reg = hw->regs_per_sm / ((int64_t)regs_alloc * warps * hw->warp_size);
    int64_t by_smem = r.smem_bytes ? hw->smem_per_sm / (r.smem_bytes + 1024) : bps; /* 1 KiB reserved per block */
    if (by_thr < bps) bps = by_thr;
    if (by_reg < bps) bps = by_reg;
    if (by_smem < bps) bps = by_smem;
    if (bps < 1) bps = 1;
    o->blocks_per_sm = (int)bps;
    double slots = (double)bps * hw->num_sms;
    /* waves with quantisation: the last partial wave costs a full one */
    o->waves = ceil((double)o->blocks / slots);
    double blocks_per_wave_sm = (double)o->blocks / (o->waves * hw->num_sms);
    double resident = fmin((double)bps, ceil(blocks_per_wave_sm));
    double warps_res = resident * warps;
    o->occupancy = warps_res * hw->warp_size / (double)hw->max_threads_per_sm;

    /* iteration counts: reduce tiles and the padded reduce length */
    double red_tiles = 1, red_pad = 1;
    for (int a = 0; a < op->naxes; a++) {
        if (op->axes[a].kind != GS_AXIS_REDUCE) continue;
        double E = (double)op->axes[a].extent, T = e->T[a][2];
        red_tiles *= ceil(E / T);
        red_pad *= ceil(E / T) * T;
    }
    double acc = (double)gs_etir_acc_regs(op, e);

    /* per reduce iteration of one warp: FMAs, operand loads (vectorised on
     * contiguous runs), and their shared-memory / L1 wavefronts */
    double lds_instr = 0, lds_wave = 0, ldg_instr = 0, l1_wave = 0, stage_elems = 0;
    for (int t = 0; t < op->ninputs; t++) {
        double f = (double)frag_regs(op, e, t);
        int w = 1;
        if (e->stage[t]) {
            double wf = gs_smem_wavefronts(hw, op, e, t, &w);
            lds_instr += f / w;
            lds_wave += f / w * wf;
            int64_t dims[GS_MAX_DIMS], pitch;
            int64_t n = gs_stage_layout(op, e, t, dims, &pitch);
            stage_elems += (double)(n / pitch * dims[op->tensors[t].ndim - 1]);
        } else {
            double wf = global_wavefronts(hw, op, e, t, &w);
            ldg_instr += f / w;
            l1_wave += f / w * wf;
        }
    }
    /* spilled registers: a local load and store per reduce iteration each */
    ldg_instr += 2.0 * spilled;
    l1_wave += 2.0 * spilled;
    double per_k = acc + lds_instr + ldg_instr + GS_K_OVERHEAD_INSTR;
    /* per block: reduce iterations plus staging and the epilogue */
    double stage_instr = red_tiles * ceil(stage_elems / (double)nt) * GS_STAGE_INSTR;
    double block_instr = warps * (red_pad * per_k + stage_instr + acc * 8.0);
    double block_fma = warps * red_pad * acc;
    double block_wave = warps * red_pad * (lds_wave + l1_wave) + red_tiles * ceil(stage_elems / 32.0) * 2.0;
    double blocks_sm = o->waves * resident; /* blocks each SM runs in total */

    /* latency hiding: per reduce iteration a warp waits for its operand
     * loads before its FMA chain. A scheduler (one of four per SM) has
     * warps_res/4 warps; it stays busy when their work per iteration covers
     * the wait: hide = min(1, (warps_res/4) * per_k / (per_k + window)).
     * The wait is the shared-memory latency, or for operands read straight
     * from global memory, the L1 latency plus half an L2 round trip. */
    double window = GS_LDS_LATENCY + GS_FMA_LATENCY;
    if (ldg_instr > 0) window = fmax(window, GS_LDS_LATENCY + 0.5 * hw->l2_latency_ns * 1e-9 * clk);
    double hide = clampd((warps_res / 4.0) * per_k / (per_k + window), 0.05, 1.0);

    double fma_rate = hw->fp32_lanes_per_sm / (double)hw->warp_size; /* warp FMAs per clock per SM */
    double t_fma = blocks_sm * block_fma / (fma_rate * GS_FMA_EFFICIENCY * clk);
    double t_issue = blocks_sm * block_instr / (4.0 * clk);
    o->t_compute = fmax(t_fma, t_issue) / hide;
    o->t_smem = blocks_sm * block_wave / clk;

    /* global traffic: each block loads its staged boxes every reduce tile
     * (L2 traffic); unstaged inputs are read through L1, which keeps the
     * block's working set when it fits, so L2 sees about the same boxes.
     * DRAM sees the compulsory bytes plus the L2 misses of re-reads, which
     * grow when a wave's working set overflows L2. */
    double compulsory = 0, box_elems = 0;
    for (int t = 0; t <= op->ninputs; t++) compulsory += 4.0 * (double)gs_tensor_elems(&op->tensors[t]);
    {
        int64_t box[GS_MAX_AXES];
        gs_etir_box(op, e, 2, box);
        for (int t = 0; t < op->ninputs; t++) box_elems += (double)gs_footprint(&op->tensors[t], box);
    }
    double l2_bytes = 4.0 * (double)o->blocks * red_tiles * box_elems;
    l2_bytes += 4.0 * (double)gs_tensor_elems(gs_op_out(op)) * (op->epi.beta != 0 ? 2 : 1);
    l2_bytes += 4.0 * (double)o->blocks * (double)nt * red_pad * 2.0 * spilled * 0.5; /* spill traffic half misses L1 */
    double wave_ws = slots * 4.0 * box_elems * red_tiles;                    /* bytes a wave touches */
    double miss = clampd(wave_ws / (double)hw->l2_bytes, 0.0, 1.0) * 0.5;
    o->dram_bytes = compulsory + fmax(0.0, l2_bytes - compulsory) * miss;
    o->t_dram = o->dram_bytes / (hw->dram_gbs * 1e9);
    o->t_l2 = l2_bytes / (hw->l2_gbs * 1e9);

    /* synchronisation and exposed latency per reduce tile: two barriers and a
     * global load round trip, hidden by the other resident blocks */
    double per_tile = 2.0 * 40.0 / clk + hw->l2_latency_ns * 1e-9;
    o->t_sync = o->waves * red_tiles * per_tile / fmax(1.0, resident);
    o->t_launch = hw->launch_overhead_us * 1e-6;

    /* the SM's pipes overlap imperfectly: the busiest one bounds the time and
     * a fraction GS_PIPE_OVERLAP_LOSS of the others adds to it */
    double pipes[4] = {o->t_compute, o->t_smem, o->t_l2, o->t_dram};
    double p1 = 0, p2 = 0;
    for (int i = 0; i < 4; i++) {
        if (pipes[i] > p1) { p2 = p1; p1 = pipes[i]; }
        else if (pipes[i] > p2) p2 = pipes[i];
    }
    double tmax = o->t_compute;
    o->bound = "compute";
    if (o->t_dram > tmax) { tmax = o->t_dram; o->bound = "dram"; }
    if (o->t_l2 > tmax) { tmax = o->t_l2; o->bound = "l2"; }
    if (o->t_smem > tmax) { tmax = o->t_smem; o->bound = "smem"; }
    if (o->t_sync > tmax) o->bound = "latency";
    double others = pipes[0] + pipes[1] + pipes[2] + pipes[3] - p1;
    (void)p2;
    o->time_s = p1 + GS_PIPE_OVERLAP_LOSS * others + o->t_sync + o->t_launch;
}
