/* profiles.c — the built-in hardware profiles, their rules, and the public
 * gs_hw_* entry points that are not about JSON (see hw_json.c for those).
 *
 * As in BLIS's config/ directory, the numbers live here as data and nowhere
 * else: the estimate, the benefit formulas and the memory check read them
 * from struct gs_hw and never branch on an architecture.
 *
 * Where each number comes from (abbreviations used in the table):
 *   [DS]   the product datasheet (H100, A100, V100, T4, Jetson Orin Nano) or
 *          the GeForce product page / Ada and Ampere whitepaper appendix
 *          (RTX 4090, RTX 3090);
 *   [WP]   the architecture whitepaper (Volta, Turing, Ampere GA100, Ampere
 *          GA102, Ada, Hopper);
 *   [CC]   the CUDA C++ Programming Guide, table "Technical Specifications
 *          per Compute Capability" (per-SM limits; identical for every part
 *          of one compute capability);
 *   [DQ]   the values the CUDA sample deviceQuery prints on that part
 *          (cudaDeviceProp: l2CacheSize, sharedMemPerMultiprocessor,
 *          sharedMemPerBlockOptin, ...);
 *   [MB]   published microbenchmarks: Jia et al., "Dissecting the NVIDIA
 *          Volta GPU Architecture via Microbenchmarking" (2018) and
 *          "... Turing T4 ..." (2019); Chips and Cheese's pointer-chase
 *          articles on A100, H100, RTX 3090 and RTX 4090; Luo et al.,
 *          "Benchmarking and Dissecting the Nvidia Hopper GPU Architecture"
 *          (2024). These give latencies in cycles or ns and L2 bandwidths;
 *          the values below are rounded, load-to-use, at the boost clock.
 *   [EST]  our estimate where no single published figure exists; the
 *          reasoning is written next to the number.
 *
 * The tensor-core columns (tc_f16/bf16/tf32_flops_per_sm: dense FLOP per
 * clock per SM with f32 accumulation; mma_sync_efficiency) are the vendor's
 * dense (not 2:4-sparse) TFLOP/s divided by SMs * the clock the vendor
 * quotes them at; each row says which figure. docs/MODEL.md has the table.
 *
 * Fields that are the same on every profile:
 *   smem_per_block 48 KiB       [CC] static shared memory per block without
 *                               the cudaFuncAttributeMaxDynamicSharedMemorySize
 *                               opt-in, on every compute capability >= 3.0;
 *   smem_banks 32, bank_bytes 4 [CC] "Shared Memory" sections for 5.x-9.0;
 *   regs_per_sm 65536           [CC] 64 K 32-bit registers per SM (7.0-9.0);
 *   max_regs_per_thread 255     [CC];
 *   max_threads_per_block 1024  [CC];
 *   warp_size 32                [CC];
 *   transaction_bytes 32        [CC] global accesses are served in 32-byte
 *                               sectors (CUDA Best Practices Guide, "Coalesced
 *                               Access to Global Memory");
 *   launch_overhead_us          [EST] a kernel launch plus the tail of the
 *                               grid costs about 3-5 us seen from the host
 *                               (cudaLaunchKernel microbenchmarks); we use
 *                               more on the edge board's slower ARM host.
 */
#include "hwmodel/profile/hw.h"

#include <assert.h>
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define KiB ((int64_t)1024)
#define MiB (1024 * KiB)

/* Per-block shared memory without opt-in: 48 KiB on every arch we model. */
#define SMEM_PER_BLOCK_DEFAULT (48 * KiB)

/* The table: one row per part, its columns in struct gs_hw order (written
 * out above the rows). The comment above each row gives the source of each
 * of its numbers, in column order; the columns every part shares are cited
 * once, in the file's header comment. */
static const struct gs_hw builtin_profiles[] = {
    /* name, desc,
     *   sm, num_sms, clock_mhz, fp32_lanes_per_sm,
     *   dram_gbs, dram_latency_ns, l2_bytes, l2_gbs, l2_latency_ns,
     *   smem_per_sm, smem_per_block, smem_per_block_optin, smem_banks, bank_bytes, smem_latency_ns,
     *   regs_per_sm, max_regs_per_thread, max_threads_per_block, max_threads_per_sm, max_blocks_per_sm,
     *   warp_size, transaction_bytes, launch_overhead_us,
     *   tc_f16_flops_per_sm, tc_bf16_flops_per_sm, tc_tf32_flops_per_sm, mma_sync_efficiency */

    /* NVIDIA H100 SXM5 80 GB (GH100, Hopper).
     * sm: [CC] compute capability 9.0. num_sms: [DS][WP] 132 SMs on SXM5 (144 on full GH100).
     * clock_mhz: [DQ] max boost clock; matches the [DS] 67 TFLOP/s FP32 = 2*128*132*1.98 GHz.
     * fp32_lanes_per_sm: [WP] 128 FP32 cores per SM. dram_gbs: [DS] 3.35 TB/s HBM3.
     * dram_latency_ns: [MB] pointer chase, ~480 ns (Chips and Cheese H100; Luo et al. ~ 480 cycles class).
     * l2_bytes: [WP] 50 MB L2; [DQ] 52428800 bytes.
     * l2_gbs: [EST] ~2.4x DRAM; [MB] measured L2 read bandwidth on H100 lies around 7-10 TB/s.
     * l2_latency_ns: [MB] ~260 cycles near/far average. smem_per_sm: [CC] 228 KB per SM (9.0).
     * smem_per_block_optin: [CC] 227 KB per block with opt-in. smem_latency_ns: [MB] ~30 cycles at 1.98 GHz.
     * max_threads_per_sm: [CC] 64 resident warps (9.0). max_blocks_per_sm: [CC] 32 resident blocks (9.0).
     * launch_overhead_us: [EST].
     * tc_*: [WP] Hopper whitepaper: each SM's four 4th-generation tensor cores do twice GA100's
     * per-clock work, 1024 dense f16/bf16 FMA = 4096 FLOP per clock per SM (tf32 2048); [DS] 989.4 dense
     * f16/bf16 and 494.7 tf32 TFLOP/s = 4096 (2048) * 132 SMs * 1.83 GHz, the tensor boost clock of
     * the whitepaper's table 3 (below the 1.98 GHz above, so the derived peak here is 1070).
     * mma_sync_efficiency: [EST] UNMEASURED: warp-level mma.sync is thought to reach about 60-65 %
     * of the wgmma peak on Hopper; 0.60 of the 1.98 GHz peak is 642 TFLOP/s = 0.65 of 989.4. */
    {"h100", "NVIDIA H100 SXM5 80GB (GH100 Hopper, HBM3)", 90, 132, 1980.0, 128, 3350.0, 480.0, 50 * MiB, 8000.0,
     180.0, 228 * KiB, SMEM_PER_BLOCK_DEFAULT, 227 * KiB, 32, 4, 16.0, 65536, 255, 1024, 2048, 32, 32, 32, 3.0,
     4096, 4096, 2048, GS_HW_MMA_SYNC_EFF_UNMEASURED},

    /* NVIDIA A100 SXM4 40 GB (GA100, Ampere).
     * sm: [CC] compute capability 8.0. num_sms: [DS][WP] 108 SMs (128 on full GA100).
     * clock_mhz: [DS][WP] 1410 MHz boost; 19.5 TFLOP/s FP32. fp32_lanes_per_sm: [WP] 64 FP32 cores per SM.
     * dram_gbs: [DS] 1555 GB/s HBM2 (40 GB part). dram_latency_ns: [MB] pointer chase, ~500 ns.
     * l2_bytes: [WP] 40 MB L2; [DQ] 41943040 bytes.
     * l2_gbs: [WP] "2.3x V100 L2 read bandwidth" times the 2155 GB/s [MB] measured on V100.
     * l2_latency_ns: [MB] ~200 ns (two L2 partitions: far hits cost more than near ones).
     * smem_per_sm: [CC] 164 KB per SM (8.0); [DQ] 167936. smem_per_block_optin: [CC] 163 KB per block;
     * [DQ] 166912. smem_latency_ns: [MB] ~29 cycles at 1.41 GHz. max_threads_per_sm: [CC] 64 resident
     * warps (8.0). max_blocks_per_sm: [CC] 32 resident blocks (8.0). launch_overhead_us: [EST].
     * tc_*: [WP][DS] 256 dense f16 FMA per clock per tensor core, 4 per SM = 2048 FLOP; 312 f16/bf16 and
     * 156 tf32 TFLOP/s = 2048 (1024) * 108 * 1.41 GHz. mma_sync_efficiency: 1 (mma.sync is the
     * native tensor instruction of sm_80). */
    {"a100", "NVIDIA A100 SXM4 40GB (GA100 Ampere, HBM2)", 80, 108, 1410.0, 64, 1555.0, 500.0, 40 * MiB, 5000.0,
     200.0, 164 * KiB, SMEM_PER_BLOCK_DEFAULT, 163 * KiB, 32, 4, 21.0, 65536, 255, 1024, 2048, 32, 32, 32, 3.5,
     2048, 2048, 1024, 1.0},

    /* NVIDIA GeForce RTX 4090 (AD102, Ada Lovelace).
     * sm: [CC] compute capability 8.9. num_sms: [DS][WP] 128 SMs (16384 CUDA cores / 128).
     * clock_mhz: [DS] 2.52 GHz boost; 82.6 TFLOP/s FP32. fp32_lanes_per_sm: [WP] 128 FP32 cores per SM.
     * dram_gbs: [DS] 21 Gbps GDDR6X x 384 bit = 1008 GB/s. dram_latency_ns: [MB] Chips and Cheese
     * RTX 4090, ~450 ns. l2_bytes: [WP] 72 MB L2 enabled; [DQ] 75497472 bytes.
     * l2_gbs: [MB] ~5 TB/s measured L2 bandwidth (Chips and Cheese), ~5x DRAM.
     * l2_latency_ns: [MB] ~130-150 ns. smem_per_sm: [CC] 100 KB per SM (8.9); [DQ] 102400.
     * smem_per_block_optin: [CC] 99 KB per block; [DQ] 101376. smem_latency_ns: [MB] ~32 cycles at
     * 2.52 GHz. max_threads_per_sm: [CC] 48 resident warps (8.9). max_blocks_per_sm: [CC] 24 resident
     * blocks (8.9). launch_overhead_us: [EST].
     * tc_*: [WP] Ada whitepaper appendix (GeForce RTX 4090): 165.2 dense f16/bf16 TFLOP/s with f32
     * accumulate (330.3 with f16 accumulate) and 82.6 tf32 = 512 (256) * 128 * 2.52 GHz.
     * mma_sync_efficiency: 1 (no faster instruction on sm_89). */
    {"rtx4090", "NVIDIA GeForce RTX 4090 24GB (AD102 Ada, GDDR6X)", 89, 128, 2520.0, 128, 1008.0, 450.0, 72 * MiB,
     5000.0, 140.0, 100 * KiB, SMEM_PER_BLOCK_DEFAULT, 99 * KiB, 32, 4, 13.0, 65536, 255, 1024, 1536, 24, 32, 32, 3.0,
     512, 512, 256, 1.0},

    /* NVIDIA GeForce RTX 3090 (GA102, Ampere).
     * sm: [CC] compute capability 8.6. num_sms: [DS][WP] 82 SMs (10496 CUDA cores / 128).
     * clock_mhz: [DS] 1695 MHz boost; 35.6 TFLOP/s FP32. fp32_lanes_per_sm: [WP] GA102: 128 FP32 lanes
     * per SM. dram_gbs: [DS] 19.5 Gbps GDDR6X x 384 bit = 936 GB/s. dram_latency_ns: [MB] Chips and
     * Cheese RTX 3090, ~450 ns. l2_bytes: [WP] 6 MB L2; [DQ] 6291456 bytes.
     * l2_gbs: [EST] ~2.5x DRAM, the ratio microbenchmarks report for GA10x. l2_latency_ns: [MB]
     * ~150-170 ns. smem_per_sm: [CC] 100 KB per SM (8.6); [DQ] 102400. smem_per_block_optin: [CC] 99 KB
     * per block; [DQ] 101376. smem_latency_ns: [MB] ~29 cycles at 1.695 GHz. max_threads_per_sm: [CC]
     * 48 resident warps (8.6). max_blocks_per_sm: [CC] 16 resident blocks (8.6). launch_overhead_us: [EST].
     * tc_*: [WP] GA102 whitepaper appendix A (GeForce RTX 3090): 71 dense f16/bf16 TFLOP/s with f32
     * accumulate (142 with f16 accumulate), 35.6 tf32 = 512 (256) * 82 * 1.695 GHz.
     * mma_sync_efficiency: 1. */
    {"rtx3090", "NVIDIA GeForce RTX 3090 24GB (GA102 Ampere, GDDR6X)", 86, 82, 1695.0, 128, 936.0, 450.0, 6 * MiB,
     2400.0, 160.0, 100 * KiB, SMEM_PER_BLOCK_DEFAULT, 99 * KiB, 32, 4, 17.0, 65536, 255, 1024, 1536, 16, 32, 32, 3.5,
     512, 512, 256, 1.0},

    /* NVIDIA Jetson Orin Nano 8 GB (GA10B, Ampere, integrated).
     * sm: [CC] compute capability 8.7. num_sms: [DS] 1024 CUDA cores = 8 SMs x 128.
     * clock_mhz: [DS] "GPU max frequency 625 MHz" (original module data sheet; JetPack 6.2 "Super" mode
     * raises it to 1020 MHz). fp32_lanes_per_sm: [WP] GA10x SM: 128 FP32 lanes.
     * dram_gbs: [DS] 128-bit LPDDR5, 68 GB/s. dram_latency_ns: [EST] LPDDR5 behind the SoC fabric is
     * slower than GDDR; top of the 400-600 range. l2_bytes: [DQ] 2097152 bytes on 8-SM Orin parts.
     * l2_gbs: [EST] ~3x DRAM. l2_latency_ns: [EST] ~150 cycles at 625 MHz. smem_per_sm: [CC] 164 KB per
     * SM (8.7); [DQ] 167936. smem_per_block_optin: [CC] 163 KB per block (8.7). smem_latency_ns: [EST]
     * ~29 cycles (as GA10x) at 625 MHz. max_threads_per_sm: [CC] 48 resident warps (8.7); [DQ] 1536.
     * max_blocks_per_sm: [CC] 16 resident blocks (8.7). launch_overhead_us: [EST] slower Cortex-A78AE
     * host.
     * tc_*: [EST] derived: the Orin GPU is a GA10x SM (128 FP32 lanes, 4 third-generation tensor
     * cores). Its INT8 rate is published: [DS] Orin Nano 8GB 40 sparse = 20 dense INT8 TOPS =
     * 4000 ops per clock per SM at 625 MHz on 8 SMs (AGX Orin: 170 sparse TOPS, 16 SMs, 1.3 GHz:
     * 4087), twice GA102's 2048 (RTX 3090: 284 dense TOPS) and equal to GA100's 4096 (624 TOPS). On
     * every Ampere tensor core f16 runs at half the INT8 rate and tf32 at half the f16 rate, so
     * 2048 f16/bf16 and 1024 tf32, without the GeForce-only halving for f32 accumulation. */
    {"orin-nano", "NVIDIA Jetson Orin Nano 8GB (GA10B Ampere iGPU, LPDDR5)", 87, 8, 625.0, 128, 68.0, 600.0, 2 * MiB,
     200.0, 250.0, 164 * KiB, SMEM_PER_BLOCK_DEFAULT, 163 * KiB, 32, 4, 46.0, 65536, 255, 1024, 1536, 16, 32, 32, 5.0,
     2048, 2048, 1024, 1.0},

    /* NVIDIA Tesla V100 SXM2 16/32 GB (GV100, Volta).
     * sm: [CC] compute capability 7.0. num_sms: [DS][WP] 80 SMs (84 on full GV100).
     * clock_mhz: [DS][WP] 1530 MHz boost; 15.7 TFLOP/s FP32. fp32_lanes_per_sm: [WP] 64 FP32 cores per SM.
     * dram_gbs: [DS] 900 GB/s HBM2. dram_latency_ns: [MB] Jia et al. 2018, ~400-450 ns.
     * l2_bytes: [WP] 6144 KB L2; [DQ] 6291456 bytes. l2_gbs: [MB] Jia et al. 2018: 2155 GB/s measured.
     * l2_latency_ns: [MB] Jia et al. 2018: ~193 cycles; rounded up for the boost-clock drop under load.
     * smem_per_sm: [CC] 96 KB per SM (7.0). smem_per_block_optin: [CC] 96 KB per block with opt-in (7.0).
     * smem_latency_ns: [MB] Jia et al. 2018: 19 cycles at 1.53 GHz. max_threads_per_sm: [CC] 64 resident
     * warps (7.0). max_blocks_per_sm: [CC] 32 resident blocks (7.0). launch_overhead_us: [EST].
     * tc_*: [WP] Volta whitepaper: 8 tensor cores per SM, 64 f16 FMA per clock each = 1024 FLOP;
     * [DS] 125 TFLOP/s = 1024 * 80 * 1.53 GHz. No bf16 or tf32 tensor math (0). mma_sync_efficiency: 1
     * (the instruction table has no sm_70 row, so no plan uses it). */
    {"v100", "NVIDIA Tesla V100 SXM2 16/32GB (GV100 Volta, HBM2)", 70, 80, 1530.0, 64, 900.0, 450.0, 6 * MiB, 2155.0,
     150.0, 96 * KiB, SMEM_PER_BLOCK_DEFAULT, 96 * KiB, 32, 4, 13.0, 65536, 255, 1024, 2048, 32, 32, 32, 4.0,
     1024, 0, 0, 1.0},

    /* NVIDIA Tesla T4 16 GB (TU104, Turing).
     * sm: [CC] compute capability 7.5. num_sms: [DS][WP] 2560 CUDA cores = 40 SMs x 64.
     * clock_mhz: [DQ] 1590 MHz max boost; [DS] 8.1 TFLOP/s. fp32_lanes_per_sm: [WP] 64 FP32 cores per
     * Turing SM. dram_gbs: [DS] 320 GB/s GDDR6. dram_latency_ns: [MB] Jia et al. 2019, GDDR6 slower than
     * V100's HBM2. l2_bytes: [WP] 4 MB L2; [DQ] 4194304 bytes. l2_gbs: [EST] ~3.75x DRAM; Jia et al.
     * 2019 measure L2 bandwidth in the 1.0-1.3 TB/s range. l2_latency_ns: [MB] Jia et al. 2019: ~188
     * cycles, plus the clock drop under the 70 W cap. smem_per_sm: [CC] 64 KB per SM (7.5).
     * smem_per_block_optin: [CC] 64 KB per block with opt-in (7.5). smem_latency_ns: [MB] Jia et al.
     * 2019: 19 cycles at 1.59 GHz. max_threads_per_sm: [CC] 32 resident warps (7.5).
     * max_blocks_per_sm: [CC] 16 resident blocks (7.5). launch_overhead_us: [EST].
     * tc_*: [DS] T4 datasheet: 65 TFLOP/s mixed precision (f16 in, f32 accumulate) = 1024 * 40 *
     * 1.59 GHz; [WP] Turing has no bf16 or tf32 tensor math (0). mma_sync_efficiency: 1. */
    {"t4", "NVIDIA Tesla T4 16GB (TU104 Turing, GDDR6, 70 W)", 75, 40, 1590.0, 64, 320.0, 550.0, 4 * MiB, 1200.0,
     160.0, 64 * KiB, SMEM_PER_BLOCK_DEFAULT, 64 * KiB, 32, 4, 12.0, 65536, 255, 1024, 1024, 16, 32, 32, 4.0,
     1024, 0, 0, 1.0},
};

enum { N_BUILTIN = (int)(sizeof builtin_profiles / sizeof builtin_profiles[0]) };
_Static_assert(N_BUILTIN == 7, "the design names exactly seven built-in profiles");

/* Other spellings people type for the same parts. Matching ignores case and
 * treats '_' and ' ' like '-' (see name_eq), so "RTX_3090" works too. */
static const struct {
    const char *alias;
    const char *name;
} builtin_aliases[] = {
    {"h100-sxm", "h100"},        {"h100-sxm5", "h100"},      {"h100-80gb", "h100"},
    {"h100-sxm5-80gb", "h100"},  {"a100-40gb", "a100"},      {"a100-sxm4", "a100"},
    {"a100-sxm4-40gb", "a100"},  {"4090", "rtx4090"},        {"rtx-4090", "rtx4090"},
    {"geforce-rtx-4090", "rtx4090"}, {"3090", "rtx3090"},    {"rtx-3090", "rtx3090"},
    {"geforce-rtx-3090", "rtx3090"}, {"orin", "orin-nano"},  {"orinnano", "orin-nano"},
    {"orin-nano-8gb", "orin-nano"}, {"jetson-orin-nano", "orin-nano"},
    {"jetson-orin-nano-8gb", "orin-nano"}, {"v100-sxm2", "v100"}, {"tesla-v100", "v100"},
    {"tesla-t4", "t4"},
};

/* ---- first-use self check ------------------------------------------------ */

/* The built-ins are data we ship, so a broken one is a bug in this file,
 * not bad input: check them once (assert in debug builds). gs_hw_load also
 * validates every copy it hands out, so release builds still report a
 * clear GS_ERR_HW_INVALID instead of using a bad profile. The flag is atomic
 * because the check may race between threads; running it twice is harmless. */
static atomic_int builtins_checked;

static void check_builtins_once(void) {
    if (atomic_load_explicit(&builtins_checked, memory_order_acquire)) return;
    for (int i = 0; i < N_BUILTIN; i++) {
        gs_status s = gs_hw_validate(NULL, &builtin_profiles[i]);
        assert(s == GS_OK && "built-in hardware profile breaks a rule");
        (void)s;
    }
    atomic_store_explicit(&builtins_checked, 1, memory_order_release);
}

/* ---- table access -------------------------------------------------------- */

const gs_hw *gs_hw_builtin(int i) {
    check_builtins_once();
    if (i < 0 || i >= N_BUILTIN) return NULL;
    return &builtin_profiles[i];
}

int gs_hw_builtin_count(void) { return N_BUILTIN; }

const char *gs_hw_builtin_name(int i) {
    if (i < 0 || i >= N_BUILTIN) return NULL;
    return builtin_profiles[i].name;
}

/* Case-insensitive equality where '-', '_' and ' ' are the same character. */
static int norm_char(unsigned char c) {
    if (c == '_' || c == ' ') return '-';
    return tolower(c);
}

static bool name_eq(const char *a, const char *b) {
    for (; *a && *b; a++, b++)
        if (norm_char((unsigned char)*a) != norm_char((unsigned char)*b)) return false;
    return *a == *b;
}

const gs_hw *gs_hw_find_builtin(const char *name) {
    if (!name || !*name) return NULL;
    check_builtins_once();
    for (int i = 0; i < N_BUILTIN; i++)
        if (name_eq(name, builtin_profiles[i].name)) return &builtin_profiles[i];
    for (size_t i = 0; i < sizeof builtin_aliases / sizeof builtin_aliases[0]; i++)
        if (name_eq(name, builtin_aliases[i].alias))
            return gs_hw_find_builtin(builtin_aliases[i].name);
    return NULL;
}

const char *gs_hw_name(const gs_hw *hw) { return hw ? hw->name : ""; }
int gs_hw_sm(const gs_hw *hw) { return hw ? hw->sm : 0; }
void gs_hw_destroy(gs_hw *hw) { free(hw); }

/* ---- derived numbers ----------------------------------------------------- */

/* Peak FP32 rate: every lane retires one FMA (2 flops) per clock. */
double gs_hw_peak_flops(const gs_hw *hw) {
    return 2.0 * hw->fp32_lanes_per_sm * hw->num_sms * hw->clock_mhz * 1e6;
}

/* Shared-memory bandwidth: each bank delivers bank_bytes per clock per SM,
 * so a conflict-free warp access moves banks * bank_bytes bytes per clock. */
double gs_hw_smem_gbs(const gs_hw *hw) {
    return (double)hw->smem_banks * hw->bank_bytes * hw->clock_mhz * 1e6 * hw->num_sms / 1e9;
}

/* Tensor FLOP per clock per SM for inputs of type in with math m. */
int gs_hw_tensor_flops_per_sm(const gs_hw *hw, gs_dtype in, gs_math m) {
    if (!hw) return 0;
    switch (in) {
    case GS_DTYPE_F16: return hw->tc_f16_flops_per_sm;
    case GS_DTYPE_BF16: return hw->tc_bf16_flops_per_sm;
    case GS_DTYPE_F32: return m == GS_MATH_TF32 ? hw->tc_tf32_flops_per_sm : 0;
    default: return 0;
    }
}

/* Dense tensor peak: the per-SM rate on every SM at the profile's clock. */
double gs_hw_peak_tensor_flops(const gs_hw *hw, gs_dtype in, gs_math m) {
    return (double)gs_hw_tensor_flops_per_sm(hw, in, m) * (hw ? hw->num_sms * hw->clock_mhz * 1e6 : 0.0);
}

/* ---- rules --------------------------------------------------------------- */

/* Each rule has its own message naming the field and the offending value,
 * as BLIS does when a configuration is registered. The first broken rule is
 * reported. ctx may be NULL (the self check). */
/* Each rule is checked in order and the first broken one is reported, with
 * the profile's name and the value. The checks come in four groups. */

/* name and desc: terminated inside their arrays, one line of text. */
static gs_status validate_text(gs_ctx *ctx, const gs_hw *hw) {
    if (!memchr(hw->name, '\0', sizeof hw->name))
        return gs_err(ctx, GS_ERR_HW_INVALID, "name must be shorter than %zu characters",
                      sizeof hw->name);
    if (!hw->name[0]) return gs_err(ctx, GS_ERR_HW_INVALID, "name must not be empty");
    if (!memchr(hw->desc, '\0', sizeof hw->desc))
        return gs_err(ctx, GS_ERR_HW_INVALID,
                      "profile '%s': desc must be shorter than %zu characters", hw->name,
                      sizeof hw->desc);
    /* one-line text: a newline in the name split error lines and tables */
    for (const char *c = hw->name; *c; c++)
        if ((unsigned char)*c < 0x20 || *c == 0x7f)
            return gs_err(ctx, GS_ERR_HW_INVALID, "name must not contain control characters (byte 0x%02x at %d)",
                          (unsigned char)*c, (int)(c - hw->name));
    for (const char *c = hw->desc; *c; c++)
        if ((unsigned char)*c < 0x20 || *c == 0x7f)
            return gs_err(ctx, GS_ERR_HW_INVALID,
                          "profile '%s': desc must not contain control characters (byte 0x%02x at %d)", hw->name,
                          (unsigned char)*c, (int)(c - hw->desc));
    return GS_OK;
}

/* Integer field > 0. */
#define RULE_POS_INT(f)                                                                      \
    if (!(hw->f > 0))                                                                        \
        return gs_err(ctx, GS_ERR_HW_INVALID, "profile '%s': " #f " must be > 0 (got %lld)", \
                      hw->name, (long long)hw->f);
/* Rate field finite and at least GS_HW_MIN_RATE (1e-6 MHz or GB/s): a
 * denormal rate such as 1e-308 passed "> 0" but made every predicted time
 * inf, and the walk's ratios of times NaN (the ranking then broke and the
 * JSON output silently lost its candidates). */
#define GS_HW_MIN_RATE 1e-6
/* Every real field at most 1e9 (MHz, GB/s, ns, us): 1e308 or 1e300 passed
 * "finite" but made derived times and rates inf, and the JSON reports lost
 * their candidates silently. */
#define GS_HW_MAX_REAL 1e9
#define RULE_POS_REAL(f)                                                                 \
    if (!isfinite(hw->f) || !(hw->f >= GS_HW_MIN_RATE) || hw->f > GS_HW_MAX_REAL)       \
        return gs_err(ctx, GS_ERR_HW_INVALID,                                            \
                      "profile '%s': " #f " must be finite and >= 1e-06 and <= 1e+09 (got %g)", hw->name, hw->f);
/* Latency-like field finite and >= 0. */
#define RULE_NONNEG_REAL(f)                                                               \
    if (!isfinite(hw->f) || !(hw->f >= 0) || hw->f > GS_HW_MAX_REAL)                      \
        return gs_err(ctx, GS_ERR_HW_INVALID,                                             \
                      "profile '%s': " #f " must be finite and >= 0 and <= 1e+09 (got %g)", hw->name, hw->f);

/* The compute capability, and the capacities that divide or multiply the
 * whole estimate, shared memory included. */
static gs_status validate_capacities(gs_ctx *ctx, const gs_hw *hw) {
    const char *n = hw->name;
    /* Compute capability: sm_10 .. sm_200 covers every real and future part
     * while catching "8.6" typed as 8 or 860. */
    if (hw->sm < 10 || hw->sm > 200)
        return gs_err(ctx, GS_ERR_HW_INVALID,
                      "profile '%s': sm must be between 10 and 200 (major*10+minor, got %d)",
                      n, hw->sm);

    RULE_POS_INT(num_sms)
    RULE_POS_REAL(clock_mhz)
    RULE_POS_INT(fp32_lanes_per_sm)
    RULE_POS_REAL(dram_gbs)
    RULE_POS_INT(l2_bytes)
    RULE_POS_REAL(l2_gbs)

    /* Shared memory: the default per-block limit, the opt-in limit and the
     * per-SM carve-out must nest: 0 < block <= optin <= SM. */
    RULE_POS_INT(smem_per_block)
    if (hw->smem_per_block > hw->smem_per_block_optin)
        return gs_err(ctx, GS_ERR_HW_INVALID,
                      "profile '%s': smem_per_block (%lld) must be <= smem_per_block_optin "
                      "(%lld)",
                      n, (long long)hw->smem_per_block, (long long)hw->smem_per_block_optin);
    if (hw->smem_per_block_optin > hw->smem_per_sm)
        return gs_err(ctx, GS_ERR_HW_INVALID,
                      "profile '%s': smem_per_block_optin (%lld) must be <= smem_per_sm (%lld)",
                      n, (long long)hw->smem_per_block_optin, (long long)hw->smem_per_sm);
    RULE_POS_INT(smem_banks)
    RULE_POS_INT(bank_bytes)
    /* bounded, so that banks * bank_bytes stays far inside an int (model.c) */
    if (hw->smem_banks > 1024 || hw->bank_bytes > 1024)
        return gs_err(ctx, GS_ERR_HW_INVALID, "profile '%s': smem_banks (%d) and bank_bytes (%d) must be <= 1024", n,
                      hw->smem_banks, hw->bank_bytes);
    return GS_OK;
}

/* The register file and the thread limits, which must nest too. */
static gs_status validate_threads(gs_ctx *ctx, const gs_hw *hw) {
    const char *n = hw->name;
    RULE_POS_INT(regs_per_sm)
    RULE_POS_INT(max_regs_per_thread)
    RULE_POS_INT(warp_size)
    RULE_POS_INT(max_threads_per_block)
    if (hw->max_threads_per_block % hw->warp_size != 0)
        return gs_err(ctx, GS_ERR_HW_INVALID,
                      "profile '%s': max_threads_per_block (%d) must be a multiple of "
                      "warp_size (%d)",
                      n, hw->max_threads_per_block, hw->warp_size);
    if (hw->max_threads_per_sm < hw->max_threads_per_block)
        return gs_err(ctx, GS_ERR_HW_INVALID,
                      "profile '%s': max_threads_per_sm (%d) must be >= max_threads_per_block "
                      "(%d)",
                      n, hw->max_threads_per_sm, hw->max_threads_per_block);
    RULE_POS_INT(max_blocks_per_sm)
    RULE_POS_INT(transaction_bytes)
    return GS_OK;
}

/* Latencies and overheads may be 0 (ignored) but never negative or NaN. */
static gs_status validate_latencies(gs_ctx *ctx, const gs_hw *hw) {
    RULE_NONNEG_REAL(dram_latency_ns)
    RULE_NONNEG_REAL(l2_latency_ns)
    RULE_NONNEG_REAL(smem_latency_ns)
    RULE_NONNEG_REAL(launch_overhead_us)
    return GS_OK;
}

/* Tensor rates: 0 (none) up to GS_HW_MAX_TC_FLOPS per clock per SM (64x
 * H100's, far above any part); the mma.sync efficiency a fraction in (0, 1]. */
#define GS_HW_MAX_TC_FLOPS 262144
#define RULE_TC(f)                                                                            \
    if (hw->f < 0 || hw->f > GS_HW_MAX_TC_FLOPS)                                              \
        return gs_err(ctx, GS_ERR_HW_INVALID,                                                 \
                      "profile '%s': " #f " must be between 0 (no tensor math) and %d FLOP per " \
                      "clock per SM (got %d)",                                                \
                      hw->name, GS_HW_MAX_TC_FLOPS, hw->f);
static gs_status validate_tensor(gs_ctx *ctx, const gs_hw *hw) {
    RULE_TC(tc_f16_flops_per_sm)
    RULE_TC(tc_bf16_flops_per_sm)
    RULE_TC(tc_tf32_flops_per_sm)
    if (!isfinite(hw->mma_sync_efficiency) || !(hw->mma_sync_efficiency > 0) || hw->mma_sync_efficiency > 1)
        return gs_err(ctx, GS_ERR_HW_INVALID,
                      "profile '%s': mma_sync_efficiency must be a fraction in (0, 1] (got %g)", hw->name,
                      hw->mma_sync_efficiency);
    return GS_OK;
}
#undef RULE_TC

#undef RULE_POS_INT
#undef RULE_POS_REAL
#undef RULE_NONNEG_REAL

gs_status gs_hw_validate(gs_ctx *ctx, const gs_hw *hw) {
    if (!hw) return gs_err(ctx, GS_ERR_INVALID_ARG, "hardware profile is NULL");
    gs_status s = validate_text(ctx, hw);
    if (s == GS_OK) s = validate_capacities(ctx, hw);
    if (s == GS_OK) s = validate_threads(ctx, hw);
    if (s == GS_OK) s = validate_latencies(ctx, hw);
    if (s == GS_OK) s = validate_tensor(ctx, hw);
    return s;
}

/* ---- human description ---------------------------------------------------- */

char *gs_hw_describe(const gs_hw *hw) {
    if (!hw) return NULL;
    gs_sb sb;
    gs_sb_init(&sb);
    gs_sb_printf(&sb, "%s: %s\n", hw->name, hw->desc);
    gs_sb_printf(&sb, "  sm                    %d (sm_%d)\n", hw->sm, hw->sm);
    gs_sb_printf(&sb, "  num_sms               %d\n", hw->num_sms);
    gs_sb_printf(&sb, "  clock_mhz             %g MHz\n", hw->clock_mhz);
    gs_sb_printf(&sb, "  fp32_lanes_per_sm     %d lanes\n", hw->fp32_lanes_per_sm);
    gs_sb_printf(&sb, "  dram_gbs              %g GB/s\n", hw->dram_gbs);
    gs_sb_printf(&sb, "  dram_latency_ns       %g ns\n", hw->dram_latency_ns);
    gs_sb_printf(&sb, "  l2_bytes              %lld B (%g MiB)\n", (long long)hw->l2_bytes,
                 (double)hw->l2_bytes / (1024.0 * 1024.0));
    gs_sb_printf(&sb, "  l2_gbs                %g GB/s\n", hw->l2_gbs);
    gs_sb_printf(&sb, "  l2_latency_ns         %g ns\n", hw->l2_latency_ns);
    gs_sb_printf(&sb, "  smem_per_sm           %lld B (%g KiB)\n", (long long)hw->smem_per_sm,
                 (double)hw->smem_per_sm / 1024.0);
    gs_sb_printf(&sb, "  smem_per_block        %lld B (%g KiB)\n",
                 (long long)hw->smem_per_block, (double)hw->smem_per_block / 1024.0);
    gs_sb_printf(&sb, "  smem_per_block_optin  %lld B (%g KiB)\n",
                 (long long)hw->smem_per_block_optin,
                 (double)hw->smem_per_block_optin / 1024.0);
    gs_sb_printf(&sb, "  smem_banks            %d banks\n", hw->smem_banks);
    gs_sb_printf(&sb, "  bank_bytes            %d B\n", hw->bank_bytes);
    gs_sb_printf(&sb, "  smem_latency_ns       %g ns\n", hw->smem_latency_ns);
    gs_sb_printf(&sb, "  regs_per_sm           %lld 32-bit registers\n",
                 (long long)hw->regs_per_sm);
    gs_sb_printf(&sb, "  max_regs_per_thread   %d registers\n", hw->max_regs_per_thread);
    gs_sb_printf(&sb, "  max_threads_per_block %d threads\n", hw->max_threads_per_block);
    gs_sb_printf(&sb, "  max_threads_per_sm    %d threads\n", hw->max_threads_per_sm);
    gs_sb_printf(&sb, "  max_blocks_per_sm     %d blocks\n", hw->max_blocks_per_sm);
    gs_sb_printf(&sb, "  warp_size             %d threads\n", hw->warp_size);
    gs_sb_printf(&sb, "  transaction_bytes     %d B\n", hw->transaction_bytes);
    gs_sb_printf(&sb, "  launch_overhead_us    %g us\n", hw->launch_overhead_us);
    gs_sb_printf(&sb, "  tc_f16_flops_per_sm   %d FLOP/clock (tensor, f32 accumulate)\n", hw->tc_f16_flops_per_sm);
    gs_sb_printf(&sb, "  tc_bf16_flops_per_sm  %d FLOP/clock\n", hw->tc_bf16_flops_per_sm);
    gs_sb_printf(&sb, "  tc_tf32_flops_per_sm  %d FLOP/clock\n", hw->tc_tf32_flops_per_sm);
    gs_sb_printf(&sb, "  mma_sync_efficiency   %g%s\n", hw->mma_sync_efficiency,
                 hw->mma_sync_efficiency == GS_HW_MMA_SYNC_EFF_UNMEASURED
                     ? " (UNMEASURED estimate: mma.sync against the wgmma peak)"
                     : "");
    /* Derived figures, so a reader can sanity-check against the datasheet. */
    gs_sb_printf(&sb, "  peak fp32 (derived)   %.1f GFLOP/s\n", gs_hw_peak_flops(hw) / 1e9);
    gs_sb_printf(&sb, "  smem bw (derived)     %.0f GB/s\n", gs_hw_smem_gbs(hw));
    gs_sb_printf(&sb, "  peak tensor (derived) f16 %.1f, bf16 %.1f, tf32 %.1f TFLOP/s\n",
                 gs_hw_peak_tensor_flops(hw, GS_DTYPE_F16, GS_MATH_F32) / 1e12,
                 gs_hw_peak_tensor_flops(hw, GS_DTYPE_BF16, GS_MATH_F32) / 1e12,
                 gs_hw_peak_tensor_flops(hw, GS_DTYPE_F32, GS_MATH_TF32) / 1e12);
    return gs_sb_take(&sb);
}

/* ---- public load / save ---------------------------------------------------- */

void gs_hw_builtin_list(char *buf, size_t n) {
    size_t len = 0;
    buf[0] = '\0';
    for (int i = 0; i < N_BUILTIN && len < n; i++) {
        int w = snprintf(buf + len, n - len, "%s%s", i ? ", " : "", builtin_profiles[i].name);
        if (w < 0) break;
        len += (size_t)w;
    }
}

static bool ends_with_json(const char *s) {
    size_t n = strlen(s);
    return n >= 5 && (strcmp(s + n - 5, ".json") == 0 || strcmp(s + n - 5, ".JSON") == 0);
}

/* Hand a loaded profile to the caller when s is GS_OK; free it otherwise. */
static gs_status hand_out(gs_hw *hw, gs_status s, gs_hw **out) {
    if (s == GS_OK) *out = hw;
    else free(hw);
    return s;
}

gs_status gs_hw_load(gs_ctx *ctx, const char *name_or_path, gs_hw **out) {
    if (!out) return gs_err(ctx, GS_ERR_INVALID_ARG, "gs_hw_load: out is NULL");
    *out = NULL;
    if (!name_or_path || !*name_or_path)
        return gs_err(ctx, GS_ERR_INVALID_ARG, "gs_hw_load: empty profile name");

    gs_hw *hw = malloc(sizeof *hw);
    if (!hw) return gs_err(ctx, GS_ERR_NOMEM, "out of memory loading a hardware profile");

    /* 1. A built-in name (or alias) wins, even if a file of that name exists
     *    in the working directory: "--hw rtx3090" should not change meaning
     *    depending on where the tool is run. */
    const gs_hw *b = gs_hw_find_builtin(name_or_path);
    if (b) {
        *hw = *b;
        return hand_out(hw, gs_hw_validate(ctx, hw), out);
    }

    /* 2. A path: anything that exists, has a '/', or ends in .json. A path
     *    that does not exist is then reported as an I/O error by the loader. */
    struct stat st;
    if (stat(name_or_path, &st) == 0 || strchr(name_or_path, '/') || ends_with_json(name_or_path))
        return hand_out(hw, gs_hw_load_json(ctx, name_or_path, hw), out);

    /* 3. Neither: say what would have worked. */
    free(hw);
    char names[256];
    gs_hw_builtin_list(names, sizeof names);
    return gs_err(ctx, GS_ERR_HW_UNKNOWN,
                  "unknown hardware profile '%s': not a built-in (%s) and not a JSON file",
                  name_or_path, names);
}

gs_status gs_hw_parse(gs_ctx *ctx, const char *json, gs_hw **out) {
    if (!out) return gs_err(ctx, GS_ERR_INVALID_ARG, "gs_hw_parse: out is NULL");
    *out = NULL;
    if (!json) return gs_err(ctx, GS_ERR_INVALID_ARG, "gs_hw_parse: NULL text");
    gs_hw *hw = malloc(sizeof *hw);
    if (!hw) return gs_err(ctx, GS_ERR_NOMEM, "out of memory parsing a hardware profile");
    return hand_out(hw, gs_hw_load_json_text(ctx, json, hw), out);
}

gs_status gs_hw_save(gs_ctx *ctx, const gs_hw *hw, const char *path) {
    return gs_hw_save_json(ctx, hw, path);
}

/* "auto-" + the device name in lower case with runs of anything but letters
 * and digits turned into one '-' ("(R)" and "(TM)" dropped), cut to fit;
 * "auto-<fallback>" when nothing of the name is left. */
void gs_hw_auto_name(const char *dev, const char *fallback, char *out, size_t cap) {
    size_t n = (size_t)snprintf(out, cap, "auto-");
    if (n >= cap) return;
    bool dash = true; /* "auto-" already ends in one */
    const char *p = dev;
    for (; *p && n + 1 < cap; p++) {
        if (*p == '(') {
            const char *q = strchr(p, ')');
            if (q && q - p <= 3) { /* (R), (TM) */
                p = q;
                continue;
            }
        }
        unsigned char c = (unsigned char)*p;
        if (isalnum(c)) {
            out[n++] = (char)tolower(c);
            dash = false;
        } else if (!dash) {
            out[n++] = '-';
            dash = true;
        }
    }
    /* Cut short: end at the last whole word rather than mid-word. */
    bool more = false;
    for (const char *q = p; *q && !more; q++) more = isalnum((unsigned char)*q) != 0;
    if (more && n > 5 && out[n - 1] != '-') {
        size_t k = n;
        while (k > 5 && out[k - 1] != '-') k--;
        if (k > 6) n = k;
    }
    while (n > 5 && out[n - 1] == '-') n--;
    if (n == 5) n += (size_t)snprintf(out + n, cap - n, "%s", fallback);
    out[n < cap ? n : cap - 1] = '\0';
}
