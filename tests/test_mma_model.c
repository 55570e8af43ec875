/* test_mma_model.c — the model's price of tensor-core (mma.sync) plans
 * (hwmodel/model/model.c, docs/MODEL.md "The price of an mma plan"). */
#include "hwmodel/model/model.h"
#include "tests/test_common.h"

#include <criterion/criterion.h>
#include <math.h>
#include <string.h>

TestSuite(mma_model);

/* One m16n8k16 holds a partition's tensor pipe 2*16*8*16 / (rate/4) clocks:
 * 8 on the a100 (2048 FLOP per clock per SM), 4 on the h100 over its 0.60
 * efficiency, 32 on the rtx3090 (512 with f32 accumulate); tf32 m16n8k8 the
 * same as f16 m16n8k16 on each (half the rate, half the k). */
Test(mma_model, clocks_per_instruction) {
    const gs_hw *a100 = gs_hw_find_builtin("a100"), *h100 = gs_hw_find_builtin("h100"),
                *r3090 = gs_hw_find_builtin("rtx3090"), *t4 = gs_hw_find_builtin("t4");
    cr_assert_float_eq(gs_model_mma_clocks(a100, GS_DTYPE_F16, GS_MATH_F32, 16, 8, 16), 8.0, 1e-12);
    cr_assert_float_eq(gs_model_mma_clocks(a100, GS_DTYPE_BF16, GS_MATH_F32, 16, 8, 16), 8.0, 1e-12);
    cr_assert_float_eq(gs_model_mma_clocks(a100, GS_DTYPE_F32, GS_MATH_TF32, 16, 8, 8), 8.0, 1e-12);
    cr_assert_float_eq(gs_model_mma_clocks(h100, GS_DTYPE_F16, GS_MATH_F32, 16, 8, 16), 4.0 / 0.6, 1e-12);
    cr_assert_float_eq(gs_model_mma_clocks(r3090, GS_DTYPE_F16, GS_MATH_F32, 16, 8, 16), 32.0, 1e-12);
    cr_assert_float_eq(gs_model_mma_clocks(t4, GS_DTYPE_F16, GS_MATH_F32, 16, 8, 8), 8.0, 1e-12);
    /* no bf16 tensor math on the t4: priced as the FMAs (2 * 64 lanes per clock) */
    cr_assert_float_eq(gs_model_mma_clocks(t4, GS_DTYPE_BF16, GS_MATH_F32, 16, 8, 16), 2.0 * 16 * 8 * 16 / 32.0,
                       1e-12);
    /* a derived profile's rate and efficiency are what the price reads */
    gs_hw h = *a100;
    h.tc_f16_flops_per_sm = 4096;
    h.mma_sync_efficiency = 0.5;
    cr_assert_float_eq(gs_model_mma_clocks(&h, GS_DTYPE_F16, GS_MATH_F32, 16, 8, 16), 8.0, 1e-12);
}

/* A 64 x 64 warp tile of m16n8k16: 4 x 8 = 32 mma per k-step; A's 4 tiles
 * by ldmatrix.x4 (4 wavefronts each) and B's 8 by .x2 (2 each): 12 loads, 32
 * wavefronts; no conversions. tf32 m16n8k8 read register by register
 * (4 A and 2 B registers a tile) adds one cvt per register. */
Test(mma_model, kstep_work) {
    const gs_hw *a100 = gs_hw_find_builtin("a100");
    gs_mma_operand a = {4, 4, 4.0}, b = {2, 2, 2.0};
    gs_mma_kstep k;
    gs_model_mma_kstep(a100, GS_DTYPE_F16, GS_MATH_F32, 16, 8, 16, 64, 64, &a, &b, &k);
    cr_assert_float_eq(k.mma, 32.0, 1e-12);
    cr_assert_float_eq(k.tensor_clk, 256.0, 1e-12);
    cr_assert_float_eq(k.loads, 12.0, 1e-12);
    cr_assert_float_eq(k.wavefronts, 32.0, 1e-12);
    cr_assert_float_eq(k.cvt, 0.0, 1e-12);
    gs_mma_operand ta = {4, 0, 4.0}, tb = {2, 0, 2.0};
    gs_model_mma_kstep(a100, GS_DTYPE_F32, GS_MATH_TF32, 16, 8, 8, 32, 32, &ta, &tb, &k);
    cr_assert_float_eq(k.mma, 8.0, 1e-12);
    cr_assert_float_eq(k.tensor_clk, 64.0, 1e-12);
    cr_assert_float_eq(k.loads, 2 * 4 + 4 * 2, 1e-12);
    cr_assert_float_eq(k.cvt, 2 * 4 + 4 * 2, 1e-12);
    cr_assert_float_eq(k.wavefronts, 2 * 4.0 + 4 * 2.0, 1e-12);
}
