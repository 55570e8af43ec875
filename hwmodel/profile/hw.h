/* hw.h — hardware profiles: the built-in table (profiles.c), JSON (hw_json.c), validation
 * and derived numbers. Uses ir/ only. */
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
    /* Tensor cores (issue 20): dense FLOP per clock per SM of the mma
     * instructions with f32 accumulation, per input type; 0 where the part
     * has no tensor math for that type. */
    int tc_f16_flops_per_sm;
    int tc_bf16_flops_per_sm;
    int tc_tf32_flops_per_sm;
    double mma_sync_efficiency;   /* fraction of that peak warp-level mma.sync can reach (0, 1] */
};

/* The sm_90 mma_sync_efficiency the built-in h100 carries: an estimate no
 * GPU has checked yet (docs/MODEL.md). gs_hw_describe marks it UNMEASURED. */
#define GS_HW_MMA_SYNC_EFF_UNMEASURED 0.60

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
/* Tensor FLOP per clock per SM for inputs of type in with math m (f16, bf16,
 * or f32 with GS_MATH_TF32); 0 for plain f32 or a type the part lacks. */
int gs_hw_tensor_flops_per_sm(const gs_hw *hw, gs_dtype in, gs_math m);
/* The dense tensor peak in FLOP/s: that rate * SMs * clock (before
 * mma_sync_efficiency); 0 where gs_hw_tensor_flops_per_sm is 0. */
double gs_hw_peak_tensor_flops(const gs_hw *hw, gs_dtype in, gs_math m);

#endif
