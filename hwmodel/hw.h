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

/* ---- resource check (the "memory check" of every transition) ---------- */
typedef struct gs_resources {
    int64_t smem_bytes;    /* static shared memory per block */
    int regs_per_thread;   /* upper-bound estimate, used by the memory check */
    int regs_expected;     /* typical count, used by the performance model */
    int64_t threads;
} gs_resources;
void gs_etir_resources(const gs_op *op, const gs_etir *e, gs_resources *r);
/* Level-aware check: at level 2 only shared memory (and that some thread
 * tile could fit the thread limit); at level 1 and done, everything. */
bool gs_hw_check(const gs_hw *hw, const gs_op *op, const gs_etir *e);

/* ---- benefit formulas (paper eq. 1-3) ---------------------------------- */
double gs_benefit_tiling(const gs_op *op, const gs_etir *before, const gs_etir *after,
                         int level, gs_policy policy);
double gs_benefit_caching(const gs_hw *hw, const gs_op *op, const gs_etir *e, int level);
double gs_benefit_vthread(const gs_hw *hw, const gs_op *op, const gs_etir *e, int axis, int v);

/* ---- analytic latency estimate ----------------------------------------- */
typedef struct gs_estimate {
    double time_s;
    double t_compute, t_dram, t_l2, t_smem, t_sync, t_launch;
    double occupancy;      /* active warps / max warps per SM */
    int blocks_per_sm;
    double waves;
    int64_t blocks, threads;
    int regs_per_thread;
    int64_t smem_bytes;
    double dram_bytes;
    const char *bound;     /* "compute", "dram", "l2", "smem", "latency" */
} gs_estimate;
/* Bank-conflict degree of a warp's fragment load of staged input t. */
double smem_conflict_degree(const gs_hw *hw, const gs_op *op, const gs_etir *e, int t);
/* Shared-memory wavefronts of one warp-wide vector fragment load of staged
 * input t; *vec receives the vector width the thread's contiguous run allows. */
double gs_smem_wavefronts(const gs_hw *hw, const gs_op *op, const gs_etir *e, int t, int *vec);
/* regs_override > 0 replaces the register estimate (ptxas figure). */
void gs_estimate_etir(const gs_hw *hw, const gs_op *op, const gs_etir *e,
                      int regs_override, gs_estimate *out);

#endif
