/* model.c — the resource ("memory") check, the paper's benefit formulas
 * (1)-(3), and the analytic latency estimate used to rank candidates.
 *
 * Everything here reads hardware numbers from the profile; nothing branches
 * on an architecture name. */
#include "hwmodel/hw.h"

#include <math.h>
#include <string.h>

/* Accumulators per thread we allow: beyond 128 fp32 accumulators plus the
 * fragments and addressing, ptxas starts spilling at the 255-register cap. */
#define GS_MAX_ACC 128

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
    /* accumulators + fragments + ~48 for indices, loop counters and pointers
     * (checked against ptxas over the test sweeps: it is an upper bound) */
    int64_t regs = gs_etir_acc_regs(op, e) + 48 + 2 * op->naxes;
    for (int t = 0; t < op->ninputs; t++) regs += frag_regs(op, e, t);
    r->regs_per_thread = (int)(regs > 100000 ? 100000 : regs);
}

bool gs_hw_check(const gs_hw *hw, const gs_op *op, const gs_etir *e) {
    if (!gs_etir_wellformed(op, e)) return false;
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

/* ---- analytic latency estimate ------------------------------------------------------ */

/* Bank-conflict degree of one warp-wide fragment load of staged input t: the
 * largest number of distinct words that fall in one bank (equal words are
 * broadcast). Generic over the affine maps: a lane's word address in the
 * shared-memory layout the lowering uses is affine in its thread coordinates,
 * addr = base + sum_a th_a * T0_a * step_a, where step_a is how far one unit
 * of axis a moves in the staged box. The vthread split enters via T0 = T1/V,
 * the spacing of neighbouring lanes. Lanes are enumerated as the kernel
 * decomposes its thread index (last spatial axis fastest). */
double smem_conflict_degree(const gs_hw *hw, const gs_op *op, const gs_etir *e, int t) {
    int64_t dims[GS_MAX_DIMS], pitch;
    gs_stage_layout(op, e, t, dims, &pitch);
    const gs_tensor *ts = &op->tensors[t];
    /* row strides of the box: innermost dim has the padded pitch above it */
    int64_t rs[GS_MAX_DIMS];
    rs[ts->ndim - 1] = 1;
    for (int j = ts->ndim - 2; j >= 0; j--) rs[j] = rs[j + 1] * (j + 1 == ts->ndim - 1 ? pitch : dims[j + 1]);
    int ax[GS_MAX_AXES], nax = 0;
    int64_t step[GS_MAX_AXES], thr[GS_MAX_AXES], th[GS_MAX_AXES];
    for (int a = op->naxes - 1; a >= 0; a--) {
        if (op->axes[a].kind != GS_AXIS_SPATIAL) continue;
        int64_t st = 0;
        for (int j = 0; j < ts->ndim; j++) st += ts->idx[j].coeff[a] * rs[j];
        ax[nax] = a;
        step[nax] = st * (e->T[a][1] / e->V[a]);
        thr[nax] = gs_etir_threads_axis(e, a);
        th[nax] = 0;
        nax++;
    }
    int64_t nt = gs_etir_threads(op, e);
    int lanes = (int)(nt < hw->warp_size ? nt : hw->warp_size);
    if (lanes > 64) lanes = 64;
    int64_t addr[64];
    for (int l = 0; l < lanes; l++) {
        int64_t ad = 0;
        for (int i = 0; i < nax; i++) ad += th[i] * step[i];
        addr[l] = ad;
        /* odometer: next lane's coordinates */
        for (int i = 0; i < nax; i++) {
            if (++th[i] < thr[i]) break;
            th[i] = 0;
        }
    }
    (void)ax;
    /* dedupe (broadcast), then count words per bank */
    int n = lanes;
    for (int i = 1; i < n; i++) {
        int64_t x = addr[i];
        int j = i - 1;
        for (; j >= 0 && addr[j] > x; j--) addr[j + 1] = addr[j];
        addr[j + 1] = x;
    }
    int count[256] = {0}, worst = 1;
    int banks = hw->smem_banks < 256 ? hw->smem_banks : 256;
    for (int i = 0; i < n; i++) {
        if (i && addr[i] == addr[i - 1]) continue;
        int b = (int)(((addr[i] % banks) + banks) % banks);
        if (++count[b] > worst) worst = count[b];
    }
    return worst;
}
static double clampd(double x, double lo, double hi) { return x < lo ? lo : x > hi ? hi : x; }

void gs_estimate_etir(const gs_hw *hw, const gs_op *op, const gs_etir *e, int regs_override, gs_estimate *o) {
    memset(o, 0, sizeof *o);
    gs_resources r;
    gs_etir_resources(op, e, &r);
    if (regs_override > 0) r.regs_per_thread = regs_override;
    const double clk = hw->clock_mhz * 1e6;
    const int64_t nt = r.threads;
    const int64_t warps = (nt + hw->warp_size - 1) / hw->warp_size;
    o->threads = nt;
    o->blocks = gs_etir_blocks(op, e);
    o->regs_per_thread = r.regs_per_thread;
    o->smem_bytes = r.smem_bytes;

    /* occupancy: blocks per SM limited by threads, registers, smem, blocks */
    int64_t bps = hw->max_blocks_per_sm;
    int64_t by_thr = hw->max_threads_per_sm / (warps * hw->warp_size);
    int64_t by_reg = hw->regs_per_sm / ((int64_t)r.regs_per_thread * warps * hw->warp_size);
    int64_t by_smem = r.smem_bytes ? hw->smem_per_sm / (r.smem_bytes + 1024) : bps;
    if (by_thr < bps) bps = by_thr;
    if (by_reg < bps) bps = by_reg;
    if (by_smem < bps) bps = by_smem;
    if (bps < 1) bps = 1;
    o->blocks_per_sm = (int)bps;
    double slots = (double)bps * hw->num_sms;
    o->waves = ceil((double)o->blocks / slots);
    /* SMs busy in the average wave (a partial last wave leaves SMs idle) */
    double blocks_per_wave_sm = (double)o->blocks / (o->waves * hw->num_sms);
    double resident = fmin((double)bps, ceil(blocks_per_wave_sm));
    o->occupancy = resident * warps * hw->warp_size / (double)hw->max_threads_per_sm;

    /* iteration counts */
    double red_tiles = 1, red_pad = 1, sp_pad = 1;
    for (int a = 0; a < op->naxes; a++) {
        double E = (double)op->axes[a].extent, T = e->T[a][2];
        if (op->axes[a].kind == GS_AXIS_REDUCE) {
            red_tiles *= ceil(E / T);
            red_pad *= ceil(E / T) * T;
        } else {
            sp_pad *= T; /* per block */
        }
    }
    /* instructions per block (warp instructions) */
    double acc = (double)gs_etir_acc_regs(op, e);
    double frag = 0;
    for (int t = 0; t < op->ninputs; t++) frag += (double)frag_regs(op, e, t);
    double kk_per_block = red_pad; /* reduce iterations a thread performs */
    double fma_instr = warps * kk_per_block * acc;
    double lds_instr = warps * kk_per_block * frag;
    /* cooperative-load instructions: each staged element is one global load,
     * one shared store and ~6 index ops, spread over the block's warps */
    double stage_elems = 0;
    for (int t = 0; t < op->ninputs; t++) {
        if (!e->stage[t]) continue;
        int64_t dims[GS_MAX_DIMS], pitch;
        int64_t n = gs_stage_layout(op, e, t, dims, &pitch);
        stage_elems += (double)(n / pitch * dims[op->tensors[t].ndim - 1]);
    }
    double ld_instr = red_tiles * ceil(stage_elems / nt) * warps * 8.0;
    double ovh_instr = warps * kk_per_block * 2.0 + warps * acc * 8.0; /* loop + epilogue */
    double blocks_per_sm_total = o->waves * resident;              /* blocks each SM runs */
    double fma_rate = hw->fp32_lanes_per_sm / (double)hw->warp_size; /* warp FMAs per clock */
    /* issue: 4 schedulers, one warp instruction each per clock; ILP from the
     * accumulators and warps resident hides the 4-cycle FMA latency */
    double warps_res = resident * warps;
    double ilp_eff = clampd(warps_res * fmin(acc, 8.0) / (4.0 * 8.0), 0.05, 1.0);
    double t_fma = blocks_per_sm_total * fma_instr / (fma_rate * clk * ilp_eff);
    double t_issue = blocks_per_sm_total * (fma_instr + lds_instr + ld_instr + ovh_instr) / (4.0 * clk * ilp_eff);
    o->t_compute = fmax(t_fma, t_issue);

    /* shared memory: one 128-byte wavefront per clock per SM; a fragment
     * load of a warp costs its bank-conflict degree, computed exactly from
     * the addresses the warp's lanes touch (see smem_conflict_degree). */
    double lds_wavefronts = 0;
    for (int t = 0; t < op->ninputs; t++)
        if (e->stage[t]) lds_wavefronts += warps * kk_per_block * (double)frag_regs(op, e, t) * smem_conflict_degree(hw, op, e, t);
    double wavefronts = blocks_per_sm_total * (lds_wavefronts + red_tiles * ceil(stage_elems / 32.0));
    o->t_smem = wavefronts / clk;

    /* global traffic: each block loads its staged boxes every reduce tile
     * (L2 traffic); unstaged inputs are read per thread. DRAM sees the
     * compulsory bytes plus the L2 misses of re-reads, which grow when a
     * wave's working set overflows L2. */
    double l2_bytes = 0, compulsory = 0;
    for (int t = 0; t <= op->ninputs; t++) compulsory += 4.0 * (double)gs_tensor_elems(&op->tensors[t]);
    l2_bytes = 4.0 * (double)o->blocks * red_tiles * stage_elems;
    for (int t = 0; t < op->ninputs; t++)
        if (!e->stage[t]) l2_bytes += 4.0 * (double)o->blocks * warps * kk_per_block * (double)frag_regs(op, e, t) *
                                      (double)hw->transaction_bytes / 4.0;
    l2_bytes += 4.0 * (double)gs_tensor_elems(gs_op_out(op)) * (op->epi.beta != 0 ? 2 : 1);
    double wave_ws = (double)slots * 4.0 * stage_elems * red_tiles; /* bytes a wave touches */
    double miss = clampd(wave_ws / (double)hw->l2_bytes, 0.0, 1.0) * 0.5;
    o->dram_bytes = compulsory + fmax(0.0, l2_bytes - compulsory) * miss;
    o->t_dram = o->dram_bytes / (hw->dram_gbs * 1e9);
    o->t_l2 = l2_bytes / (hw->l2_gbs * 1e9);

    /* synchronisation and exposed latency per reduce tile: two barriers and a
     * global load round trip, hidden by other resident blocks */
    double per_tile = 2.0 * 40.0 / clk + hw->l2_latency_ns * 1e-9;
    o->t_sync = o->waves * red_tiles * per_tile / fmax(1.0, resident);
    o->t_launch = hw->launch_overhead_us * 1e-6;

    double tmax = o->t_compute;
    o->bound = "compute";
    if (o->t_dram > tmax) { tmax = o->t_dram; o->bound = "dram"; }
    if (o->t_l2 > tmax) { tmax = o->t_l2; o->bound = "l2"; }
    if (o->t_smem > tmax) { tmax = o->t_smem; o->bound = "smem"; }
    if (o->t_sync > tmax) o->bound = "latency";
    o->time_s = tmax + o->t_sync + o->t_launch;
    (void)sp_pad;
}
