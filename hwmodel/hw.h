/* hw.h — hardware profiles, benefit formulas and the analytic estimate.
 * Uses ir/ only. */
#ifndef GS_HW_H
#define GS_HW_H

#include "ir/ir.h"

/* A profile is a datasheet-like description of one GPU. Numbers only: no
 * per-arch branches elsewhere in the code. */
struct gs_hw {
    char name[32];
    char desc[96];
    int sm;                       /* compute capability, major*10+minor */
    int num_sms;
    double clock_mhz;             /* boost SM clock */
    int fp32_lanes_per_sm;        /* FP32 FMA lanes per SM */
    double dram_gbs;              /* DRAM bandwidth, GB/s (1e9 B/s) */
    double dram_latency_ns;       /* load-to-use latency of a DRAM access */
    int64_t l2_bytes;
    double l2_gbs;                /* L2 bandwidth, GB/s */
    double l2_latency_ns;
    int64_t smem_per_sm;          /* bytes of shared memory per SM (max carve-out) */
    int64_t smem_per_block;       /* bytes a block gets without opt-in (48 KiB) */
    int64_t smem_per_block_optin; /* bytes with cuFuncSetAttribute opt-in */
    int smem_banks;               /* 32 */
    int bank_bytes;               /* 4 */
    double smem_latency_ns;
    int64_t regs_per_sm;          /* 32-bit registers per SM */
    int max_regs_per_thread;      /* 255 */
    int max_threads_per_block;    /* 1024 */
    int max_threads_per_sm;
    int max_blocks_per_sm;
    int warp_size;                /* 32 */
    int transaction_bytes;        /* global memory sector, 32 */
    double launch_overhead_us;    /* host launch + tail, per kernel */
};

/* Validate every rule of a profile, each with its own message. */
gs_status gs_hw_validate(gs_ctx *ctx, const gs_hw *hw);
/* Built-in table access (pointer to static storage). */
const gs_hw *gs_hw_builtin(int i);
const gs_hw *gs_hw_find_builtin(const char *name);
/* "h100, a100, ..." (the built-in names) into buf, for error messages. */
void gs_hw_builtin_list(char *buf, size_t n);
/* JSON (jansson) load/save into caller storage. */
gs_status gs_hw_load_json(gs_ctx *ctx, const char *path, gs_hw *out);
gs_status gs_hw_load_json_text(gs_ctx *ctx, const char *text, gs_hw *out);
gs_status gs_hw_save_json(gs_ctx *ctx, const gs_hw *hw, const char *path);
/* Profile name for a queried device: "auto-" + the device name folded to
 * lower-case words ("auto-<fallback>" when nothing is left). */
void gs_hw_auto_name(const char *dev, const char *fallback, char *out, size_t cap);
/* Multi-line human description into a malloc'd string. */
char *gs_hw_describe(const gs_hw *hw);
/* Derived numbers. */
double gs_hw_peak_flops(const gs_hw *hw);   /* 2 * lanes * SMs * clock */
double gs_hw_smem_gbs(const gs_hw *hw);     /* banks*bank_bytes per clock per SM */

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
/* Split-K's own rule (part of gs_hw_check, cheap): no split, or tiles that
 * make at most 2 * num_sms blocks and an ordered workspace within the L2. A
 * split that fails it fails for every larger split of the same tiles. */
bool gs_hw_split_ok(const gs_hw *hw, const gs_op *op, const gs_etir *e);

/* ---- benefit formulas (paper eq. 1-3) ---------------------------------- */
double gs_benefit_tiling(const gs_op *op, const gs_etir *before, const gs_etir *after,
                         int level, gs_policy policy);
double gs_benefit_caching(const gs_hw *hw, const gs_op *op, const gs_etir *e, int level);
double gs_benefit_vthread(const gs_hw *hw, const gs_op *op, const gs_etir *e, int axis, int v);

/* ---- analytic latency estimate -----------------------------------------
 * The estimate prices a kernel plan: what the printers emit. Constants that
 * describe the emitted code and generic SIMT behaviour (not a particular
 * GPU) are the fields of gs_model_params; hwmodel/MODEL.md says how each was
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

#endif
