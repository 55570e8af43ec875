/* model.h — the analytic model (model.c; docs/MODEL.md): a state's resources and
 * the resource check, the paper's benefit formulas, and the latency estimate of a plan. */
#ifndef GS_MODEL_H
#define GS_MODEL_H

#include "hwmodel/plan/plan.h"

/* ---- resource check (the "memory check" of every transition) ----------
 * Resources come from the kernel plan (hwmodel/plan.h): shared memory of
 * every stage buffer, and the register bound the plan is sized for. */
typedef struct gs_resources {
    int64_t smem_bytes;    /* shared memory per block (all stage buffers) */
    int regs_per_thread;   /* upper-bound estimate, used by the memory check */
    int regs_expected;     /* typical count, used by the performance model */
    int64_t threads;
} gs_resources;
void gs_etir_resources(const gs_hw *hw, const gs_op *op, const gs_etir *e, gs_resources *r);
/* Level-aware check: at level 2 only shared memory (and that some thread
 * tile could fit the thread limit); at level 1 and done, everything,
 * including the pipeline (stages > 1 needs a staged input and a reduce
 * axis; stages > 2 an asynchronous copy) and the raster (two spatial axes). */
bool gs_hw_check(const gs_hw *hw, const gs_op *op, const gs_etir *e);
/* The same, with the plan it reads (made through memo, which may be NULL):
 * when it returns true, *p holds gs_plan_shape(hw, op, e, NULL) (finish it
 * with gs_plan_finish_memo to get gs_plan_make's plan); when false, *p is
 * unspecified. */
bool gs_hw_check_plan(const gs_hw *hw, const gs_op *op, const gs_etir *e, gs_wf_memo *memo, gs_plan *p);
/* Why e fails gs_hw_check, in words (a static string), or NULL when it
 * passes: for the messages that reject a user's configuration. */
const char *gs_hw_check_why(const gs_hw *hw, const gs_op *op, const gs_etir *e);
/* Split-K's own rule (part of gs_hw_check, cheap): no split, or tiles that
 * make at most 2 * num_sms blocks and an ordered workspace within the L2. A
 * split that fails it fails for every larger split of the same tiles. */
bool gs_hw_splitk_ok(const gs_hw *hw, const gs_op *op, const gs_etir *e);

/* ---- benefit formulas (paper eq. 1-3) ---------------------------------- */
double gs_benefit_tiling(const gs_op *op, const gs_etir *before, const gs_etir *after,
                         int level, gs_policy policy);
double gs_benefit_caching(const gs_hw *hw, const gs_op *op, const gs_etir *e, int level);
double gs_benefit_vthread(const gs_hw *hw, const gs_op *op, const gs_etir *e, int axis, int v);

/* ---- analytic latency estimate -----------------------------------------
 * The estimate prices a kernel plan: what the printers emit. Constants that
 * describe the emitted code and generic SIMT behaviour (not a particular
 * GPU) are the fields of gs_model_params; docs/MODEL.md says how each was
 * fitted. The library always uses gs_model_params_default(); the
 * calibration tool varies them. */
typedef struct gs_model_params {
    double fma_efficiency;   /* sustained FMA-pipe fraction in a register-blocked loop */
    double k_overhead_fast;  /* warp instructions per reduce index, unrolled full tile */
    double k_overhead_bounded; /* the same with runtime bounds (tail tile, predicated plan) */
    double copy_unit_fast;   /* instructions per fast-path copy unit besides its stores */
    double copy_elem_edge;   /* instructions per element on the predicated copy path */
    double unstaged_pred;    /* extra instructions per predicated global operand load */
    double barrier_cycles;   /* cost of one __syncthreads */
    double pipe_norm;        /* k of the p-norm (sum t_i^k)^(1/k) that combines the pipes'
                                times: large k, perfect overlap (the busiest pipe alone) */
    double latency_norm;     /* k of the p-norm that combines throughput and the latency chain */
    double l1_sectors_per_clk; /* L1 tag rate for scattered global loads */
    double latency_scale;    /* global-load latency under load over the profile's idle
                                (pointer-chase) latency */
} gs_model_params;
void gs_model_params_default(gs_model_params *p);

typedef struct gs_estimate {
    double time_s;
    double t_compute, t_dram, t_l2, t_smem, t_sync, t_launch;
    double t_latency;      /* the reduce-tile latency chain (load, barrier, compute) */
    double occupancy;      /* active warps / max warps per SM */
    int blocks_per_sm;
    double waves;
    int64_t blocks, threads;
    int regs_per_thread;
    int64_t smem_bytes;
    double dram_bytes;
    const char *bound;     /* "compute", "dram", "l2", "smem", "latency" */
} gs_estimate;
/* regs_override > 0 replaces the register estimate (ptxas figure). The
 * state is planned with the default plan (gs_plan_make). */
void gs_estimate_etir(const gs_hw *hw, const gs_op *op, const gs_etir *e,
                      int regs_override, gs_estimate *out);


/* The analytic estimate of a plan (hwmodel/model/model.c; docs/MODEL.md): mp NULL for
 * the default constants, regs_override > 0 for ptxas' register count. */
void gs_estimate_plan(const gs_hw *hw, const gs_op *op, const gs_etir *e, const gs_plan *p, int regs_override,
                      const gs_model_params *mp, gs_wf_memo *memo, gs_estimate *out);
/* The check and the estimate of a complete state with one plan: false when
 * e fails gs_hw_check, else true and *out is gs_estimate_etir_memo's (no
 * register override). */
bool gs_estimate_checked(const gs_hw *hw, const gs_op *op, const gs_etir *e, gs_wf_memo *memo, gs_estimate *out);
/* A lower bound on the estimate of e from its shaped plan (gs_hw_check_plan's,
 * before gs_plan_finish_memo): the polish passes over the neighbours it
 * cannot pick by it (model.c says what it leaves out). A partial bound
 * above cut may be returned early. */
double gs_estimate_floor_plan(const gs_hw *hw, const gs_op *op, const gs_etir *e, const gs_plan *shape, double cut);
/* The same floor, its memoisable steps through memo (NULL: none; the value
 * is the same either way). */
double gs_estimate_floor_plan_memo(const gs_hw *hw, const gs_op *op, const gs_etir *e, const gs_plan *shape,
                                   gs_wf_memo *memo, double cut);
/* The instructions the model counts per math instruction of a warp over a
 * steady full reduce tile: its loop's instructions per index (fragment
 * reads, the math, loop overhead) times the tile's indices, plus the tile's
 * copies (each on its fast path, and a peeled loop's savings whole) and loop
 * (tile_instr) and its barriers, over the tile's FFMA (or, on an mma plan,
 * mma.sync) instructions. The estimate itself prices the average tile. The figure `--sass` measures in ptxas' code
 * as the steady state's instructions per FFMA (per HMMA); the diagnostic of
 * docs/MODEL.md's instruction counts. Prices nothing; 0 without math. */
double gs_model_issue_per_math(const gs_hw *hw, const gs_op *op, const gs_etir *e, const gs_plan *p);
/* ---- tensor cores (issue 20; docs/MODEL.md, "The price of an mma plan") ----
 * Clocks one warp-wide mma.sync of m x n x k holds the tensor pipe of its SM
 * partition (an SM has four): 2mnk / (rate / 4) / mma_sync_efficiency, rate
 * being gs_hw_tensor_flops_per_sm for the inputs; where the profile has no
 * tensor rate for them (an emulating OpenCL device), the FFMA rate
 * 2 * fp32_lanes_per_sm, so the plan is priced as the FMAs it stands for. */
double gs_model_mma_clocks(const gs_hw *hw, gs_dtype in, gs_math math, int m, int n, int k);
/* One operand's fragments per instruction tile: ldsm 0 (read register by
 * register: regs loads) or the ldmatrix count (one instruction), and the
 * shared-memory wavefronts of that read (the plan's read_wf); split: 16-bit
 * element reads whose register pairs are not side by side (plan.in[t].
 * frag_pairs unset), two reads and a pack (PRMT) a register. */
typedef struct gs_mma_operand {
    int regs;
    int ldsm;
    double read_wf;
    int split;
} gs_mma_operand;
/* The work of one warp over one instruction k-step of a warp tile warp_m x
 * warp_n: (warp_m/m)(warp_n/n) mma instructions holding the tensor pipe
 * tensor_clk clocks; the fragment loads of A's warp_m/m and B's warp_n/n
 * tiles and their wavefronts, and the address arithmetic of the ldmatrix
 * ones; with TF32 math one cvt.rna per A and B register. */
typedef struct gs_mma_kstep {
    double mma, tensor_clk, loads, wavefronts, cvt;
    double addr; /* the integer instructions of the ldmatrix addresses (model.c, GS_MMA_LDSM_ADDR) */
    double pack; /* split operands' packs: one a register */
} gs_mma_kstep;
void gs_model_mma_kstep(const gs_hw *hw, gs_dtype in, gs_math math, int m, int n, int k, int warp_m, int warp_n,
                        const gs_mma_operand *a, const gs_mma_operand *b, gs_mma_kstep *out);

/* gs_estimate_etir with a memo of simulations (may be NULL). */
void gs_estimate_etir_memo(const gs_hw *hw, const gs_op *op, const gs_etir *e, int regs_override, gs_wf_memo *memo,
                           gs_estimate *out);

#endif
