/* test_dtype.c — the element-type table and the host conversions, against
 * bit patterns worked out from the IEEE 754 formats, and (where the
 * compiler has _Float16) against the compiler's own binary16 conversion. */
#include "ir/ir.h"
#include "util/pcg.h"

#include <criterion/criterion.h>
#include <float.h>
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

TestSuite(dtype);

static float bitsf(uint32_t u) {
    float x;
    memcpy(&x, &u, 4);
    return x;
}

Test(dtype, table_rows) {
    cr_assert_eq(gs_dtype_bytes(GS_DTYPE_F32), 4);
    cr_assert_eq(gs_dtype_bytes(GS_DTYPE_F16), 2);
    cr_assert_eq(gs_dtype_bytes(GS_DTYPE_BF16), 2);
    cr_assert_eq(gs_dtype_bytes((gs_dtype)7), 0);
    cr_assert_str_eq(gs_dtype_name(GS_DTYPE_BF16), "bf16");
    gs_dtype t;
    cr_assert(gs_dtype_parse("f16", &t) && t == GS_DTYPE_F16);
    cr_assert(!gs_dtype_parse("fp16", &t));
    for (int i = 0; i < GS_DTYPE_COUNT; i++) cr_assert_eq(gs_dtypes[i].acc, GS_DTYPE_F32);
    cr_assert_eq(gs_f16_to_f32((uint16_t)gs_dtypes[GS_DTYPE_F16].neg_inf_bits), -INFINITY);
    cr_assert_eq(gs_bf16_to_f32((uint16_t)gs_dtypes[GS_DTYPE_BF16].neg_inf_bits), -INFINITY);
    cr_assert_eq(gs_f16_to_f32((uint16_t)gs_dtypes[GS_DTYPE_F16].pos_inf_bits), INFINITY);
    cr_assert_eq(gs_bf16_to_f32((uint16_t)gs_dtypes[GS_DTYPE_BF16].pos_inf_bits), INFINITY);
    { /* f32's rows as bits */
        float pinf = INFINITY, ninf = -INFINITY;
        uint32_t pb, nb;
        memcpy(&pb, &pinf, 4);
        memcpy(&nb, &ninf, 4);
        cr_assert_eq(gs_dtypes[GS_DTYPE_F32].pos_inf_bits, pb);
        cr_assert_eq(gs_dtypes[GS_DTYPE_F32].neg_inf_bits, nb);
    }
    cr_assert_eq(gs_dtype_unit_roundoff(GS_DTYPE_F16), ldexp(1, -11));
    cr_assert_eq(gs_dtype_unit_roundoff(GS_DTYPE_BF16), ldexp(1, -8));
}

Test(dtype, f16_known_bits) {
    static const struct { float x; uint16_t h; } c[] = {
        {1.0f, 0x3c00}, {-2.0f, 0xc000}, {0.1f, 0x2e66}, {65504.0f, 0x7bff}, {65519.0f, 0x7bff},
        {65520.0f, 0x7c00},                       /* the tie above the largest finite: to even, inf */
        {1.0f + 0x1p-11f, 0x3c00},                /* tie: to the even 1.0 */
        {1.0f + 0x3p-11f, 0x3c02},                /* tie: to the even 1+2^-9 */
        {1.0f + 0x1p-11f + 0x1p-20f, 0x3c01},     /* above the tie */
        {0x1p-14f, 0x0400}, {0x1p-24f, 0x0001}, {0x1p-25f, 0x0000}, /* smallest subnormal; its half ties to 0 */
        {0x1.8p-25f, 0x0001}, {0x3p-25f, 0x0002}, /* 1.5 ulp ties to even 2 */
        {0x1.ff8p-15f, 0x03ff}, {0x1.ffcp-15f, 0x0400}, /* the largest subnormal; the tie above it carries to a normal */
        {-0.0f, 0x8000}, {1e-30f, 0x0000}, {1e30f, 0x7c00}, {-1e30f, 0xfc00},
    };
    for (size_t i = 0; i < sizeof c / sizeof c[0]; i++)
        cr_expect_eq(gs_f32_to_f16(c[i].x), c[i].h, "%a: got %#06x want %#06x", (double)c[i].x, gs_f32_to_f16(c[i].x),
                     c[i].h);
    cr_assert_eq(gs_f32_to_f16(INFINITY), 0x7c00);
    cr_assert_eq(gs_f32_to_f16(-INFINITY), 0xfc00);
    uint16_t n = gs_f32_to_f16(bitsf(0x7f800001u)); /* a signalling NaN comes back quiet */
    cr_assert((n & 0x7c00) == 0x7c00 && (n & 0x3ff) != 0 && (n & 0x200), "NaN -> %#06x", n);
    cr_assert_eq(gs_f16_to_f32(0x0001), 0x1p-24f);
    cr_assert_eq(gs_f16_to_f32(0x7bff), 65504.0f);
    cr_assert(isnan(gs_f16_to_f32(0x7e00)));
}

Test(dtype, f16_every_pattern_round_trips) {
    for (uint32_t h = 0; h < 65536; h++) {
        float x = gs_f16_to_f32((uint16_t)h);
        uint16_t back = gs_f32_to_f16(x);
        if (isnan(x)) cr_assert((back & 0x7c00) == 0x7c00 && (back & 0x3ff), "%#06x", h);
        else cr_assert_eq(back, h, "%#06x -> %a -> %#06x", h, (double)x, back);
    }
}

#ifdef __FLT16_MAX__
/* the compiler's conversion (F16C or soft-float, both round to nearest even) */
Test(dtype, f16_agrees_with_the_compiler) {
    gs_pcg32 r;
    gs_pcg32_seed(&r, 18, 16);
    for (int i = 0; i < 2000000; i++) {
        uint32_t u = gs_pcg32_next(&r);
        if (i % 2) u = (u & 0x80000000u) | ((u & 0x0fffffffu) + 0x30000000u); /* bias toward binary16's range */
        float x = bitsf(u);
        if (isnan(x)) continue;
        _Float16 c = (_Float16)x;
        uint16_t want;
        memcpy(&want, &c, 2);
        cr_assert_eq(gs_f32_to_f16(x), want, "%a (%#010x): got %#06x want %#06x", (double)x, u, gs_f32_to_f16(x), want);
        cr_assert_eq(gs_f16_to_f32(want), (float)c);
    }
}
#endif

Test(dtype, bf16_known_bits) {
    static const struct { float x; uint16_t h; } c[] = {
        {1.0f, 0x3f80}, {-2.0f, 0xc000}, {3.14159265f, 0x4049}, {1.0f + 0x1p-8f, 0x3f80}, /* tie to even */
        {1.0f + 0x3p-8f, 0x3f82}, {1.0f + 0x1p-8f + 0x1p-20f, 0x3f81}, {FLT_MAX, 0x7f80}, {-0.0f, 0x8000},
        {0x1p-149f, 0x0000}, {0x1p-133f, 0x0001}, /* subnormals: the top bits as they are */
    };
    for (size_t i = 0; i < sizeof c / sizeof c[0]; i++)
        cr_expect_eq(gs_f32_to_bf16(c[i].x), c[i].h, "%a: got %#06x want %#06x", (double)c[i].x,
                     gs_f32_to_bf16(c[i].x), c[i].h);
    cr_assert_eq(gs_f32_to_bf16(bitsf(0x7fc00000u)), 0x7fc0);
    cr_assert_eq(gs_f32_to_bf16(bitsf(0x7f800001u)), 0x7fc0); /* quiet, not rounded into inf */
    cr_assert_eq(gs_f32_to_bf16(bitsf(0xff80ffffu)), 0xffc0);
    cr_assert_eq(gs_f32_to_bf16(-INFINITY), 0xff80);
    for (uint32_t h = 0; h < 65536; h++) {
        float x = gs_bf16_to_f32((uint16_t)h);
        if (!isnan(x)) cr_assert_eq(gs_f32_to_bf16(x), h, "%#06x", h);
    }
}

Test(dtype, pack_round_trip) {
    float x[5] = {1.0f, 0.1f, -3.5f, 65520.0f, 1e-8f}, y[5];
    uint16_t h[5];
    gs_dtype_pack(GS_DTYPE_F16, x, h, 5);
    gs_dtype_unpack(GS_DTYPE_F16, h, y, 5);
    for (int i = 0; i < 5; i++) cr_assert_eq(y[i], gs_dtype_round(GS_DTYPE_F16, x[i]));
    cr_assert_eq(y[1], 0.0999755859375f);
    cr_assert(isinf(y[3]));
    gs_dtype_pack(GS_DTYPE_F32, x, y, 5);
    cr_assert(!memcmp(x, y, sizeof x));
}

/* ---- operators carry types ------------------------------------------------------------- */
static void parse_ok(const char *spec, gs_op *op) {
    gs_ctx *ctx = gs_ctx_create();
    gs_status s = gs_op_parse_into(ctx, spec, op);
    cr_assert_eq(s, GS_OK, "%s: %s", spec, gs_ctx_errmsg(ctx));
    gs_ctx_destroy(ctx);
}

Test(dtype, spec_round_trips_and_keys_differ) {
    static const char *specs[] = {
        "gemm M=5 N=7 K=3 dtype=f16",
        "gemv M=5 N=7 dtype=bf16 out_dtype=f32",
        "conv2d N=1 C=3 H=7 W=7 K=5 R=3 S=3 pad=1 bias=1 relu=1 dtype=bf16",
        "rowmax M=3 K=4 out_dtype=f16",
        "avgpool2d N=1 C=2 H=5 W=5 F=3 pad=1 count_include_pad=0 dtype=f16",
    };
    for (size_t i = 0; i < sizeof specs / sizeof specs[0]; i++) {
        gs_op a, b, ka, kb;
        parse_ok(specs[i], &a);
        parse_ok(a.spec, &b);
        cr_assert_str_eq(a.spec, b.spec);
        cr_assert(!memcmp(&a, &b, sizeof a), "%s does not round-trip", a.spec);
        cr_assert(strstr(a.spec, "dtype="), "%s", a.spec);
        gs_op_key(&a, &ka);
        /* the same operator in f32 has another key: the type is part of every kernel's */
        gs_op f = a;
        f.dtype_in = f.dtype_out = 0;
        gs_op_key(&f, &kb);
        cr_assert(memcmp(&ka, &kb, sizeof ka), "%s: the type is not in the key", a.spec);
    }
    gs_op a;
    parse_ok("rowmax M=3 K=4 out_dtype=f16", &a);
    cr_assert_eq(a.dtype_in, GS_DTYPE_F32);
    cr_assert_eq(a.dtype_out, GS_DTYPE_F16);
    cr_assert_eq(gs_op_buffer_bytes(&a, 0), 12 * 4);
    cr_assert_eq(gs_op_buffer_bytes(&a, 1), 3 * 2);
    /* f32 prints as before: no type in the text */
    parse_ok("gemm M=5 N=7 K=3 dtype=f32 out_dtype=f32", &a);
    cr_assert_str_eq(a.spec, "gemm M=5 N=7 K=3 transA=0 transB=0 alpha=1 beta=0");
    parse_ok("gemm M=5 N=7 K=3 bias=1 dtype=bf16", &a);
    cr_assert_eq(gs_op_buffer_dtype(&a, 3), GS_DTYPE_BF16);
    cr_assert_eq(gs_op_buffer_bytes(&a, 3), 7 * 2);
}

Test(dtype, bad_types_are_refused) {
    static const struct { const char *spec; gs_status want; const char *msg; } c[] = {
        {"gemm M=5 N=7 K=3 dtype=f8", GS_ERR_PARSE, "unknown type 'f8'"},
        {"gemm M=5 N=7 K=3 dtype=", GS_ERR_PARSE, "unknown type ''"},
        {"relu M=3 N=4 dtype=f16 dtype=bf16", GS_ERR_PARSE, "given twice"},
        {"relu M=3 N=4 out_dtype=half", GS_ERR_PARSE, "unknown type 'half'"},
    };
    gs_ctx *ctx = gs_ctx_create();
    for (size_t i = 0; i < sizeof c / sizeof c[0]; i++) {
        gs_op op;
        cr_expect_eq(gs_op_parse_into(ctx, c[i].spec, &op), c[i].want, "%s", c[i].spec);
        cr_expect(strstr(gs_ctx_errmsg(ctx), c[i].msg), "%s: '%s'", c[i].spec, gs_ctx_errmsg(ctx));
    }
    gs_op op;
    parse_ok("relu M=3 N=4", &op);
    cr_assert_eq(gs_op_set_dtype(ctx, &op, (gs_dtype)9, GS_DTYPE_F16), GS_ERR_INVALID_ARG);
    cr_assert_eq(gs_op_set_dtype(ctx, &op, GS_DTYPE_F16, GS_DTYPE_F16), GS_OK);
    cr_assert_eq(gs_op_set_dtype(ctx, &op, GS_DTYPE_BF16, GS_DTYPE_F32), GS_OK);
    cr_assert_str_eq(op.spec, "relu M=3 N=4 dtype=bf16 out_dtype=f32");
    op.dtype_in = 7;
    cr_assert_eq(gs_op_validate(ctx, &op), GS_ERR_INVALID_ARG);
    gs_ctx_destroy(ctx);
}

/* gs_dtype_convert's counts: 0 with NULL buffers is nothing to do; a
 * negative count, a NULL buffer and a count whose bytes pass the address
 * space are refused without touching the buffers. Old code took 2^62 + 1
 * floats: memcpy's size wrapped to 4 bytes and it returned GS_OK (to f16 it
 * ran past the buffers). Between equal 16-bit types the words are kept. */
Test(dtype, convert_refuses_counts_past_memory) {
    gs_ctx *ctx = gs_ctx_create();
    float x[2] = {1.0f, 2.0f}, y[2] = {0};
    uint16_t h[2] = {0x3c00, 0x8001}, g[2] = {0};
    const int64_t huge[] = {((int64_t)1 << 62) + 1, INT64_MAX, PTRDIFF_MAX / 4 + 1};
    for (size_t i = 0; i < sizeof huge / sizeof huge[0]; i++)
        for (int to = 0; to < GS_DTYPE_COUNT; to++) {
            gs_status s = gs_dtype_convert(ctx, GS_DTYPE_F32, x, (gs_dtype)to, y, huge[i]);
            cr_expect(s == GS_ERR_INVALID_ARG && strstr(gs_ctx_errmsg(ctx), "more than a buffer can hold"),
                      "f32 -> %s of %lld: %s '%s'", gs_dtype_name((gs_dtype)to), (long long)huge[i], gs_status_str(s),
                      gs_ctx_errmsg(ctx));
            cr_expect(y[0] == 0.0f && y[1] == 0.0f, "the destination was written");
        }
    cr_expect_eq(gs_dtype_convert(ctx, GS_DTYPE_F16, NULL, GS_DTYPE_BF16, NULL, 0), GS_OK, "%s", gs_ctx_errmsg(ctx));
    cr_expect_eq(gs_dtype_convert(ctx, GS_DTYPE_F16, h, GS_DTYPE_BF16, g, -1), GS_ERR_INVALID_ARG);
    cr_expect_eq(gs_dtype_convert(ctx, GS_DTYPE_F16, h, GS_DTYPE_BF16, NULL, 1), GS_ERR_INVALID_ARG);
    cr_expect_eq(gs_dtype_convert(ctx, GS_DTYPE_F16, h, (gs_dtype)-1, g, 1), GS_ERR_INVALID_ARG);
    cr_assert_eq(gs_dtype_convert(ctx, GS_DTYPE_F16, h, GS_DTYPE_F16, g, 2), GS_OK, "%s", gs_ctx_errmsg(ctx));
    cr_expect(g[0] == 0x3c00 && g[1] == 0x8001, "f16 -> f16: %04x %04x", g[0], g[1]);
    gs_ctx_destroy(ctx);
}

/* ---- the reference and the tolerance -------------------------------------------------- */
#include "kernels/service/service.h"

static uint16_t trunc_f16(float x) { /* a wrong store: truncation toward zero (normal range) */
    uint32_t u;
    memcpy(&u, &x, 4);
    uint32_t e = (u >> 23) & 0xff;
    return (uint16_t)(((u >> 16) & 0x8000u) | ((e - 112) << 10) | ((u >> 13) & 0x3ffu));
}

Test(dtype, rounding_check_catches_truncation) {
    /* a gemv's exact results, rounded by RNE (passes) and by truncation (fails) */
    gs_op op;
    parse_ok("gemv M=4000 N=37 dtype=f16", &op);
    gs_pcg32 r;
    gs_pcg32_seed(&r, 5, 6);
    static float A[4000 * 37], x[37], ref[4000], y[4000], rne[4000], tr[4000];
    gs_pcg32_fill_uniform(&r, A, 4000 * 37);
    gs_pcg32_fill_uniform(&r, x, 37);
    for (int i = 0; i < 4000 * 37; i++) A[i] = gs_dtype_round(GS_DTYPE_F16, A[i]);
    for (int i = 0; i < 37; i++) x[i] = gs_dtype_round(GS_DTYPE_F16, x[i]);
    const float *ins[2] = {A, x};
    gs_ctx *ctx = gs_ctx_create();
    gs_op f = op;
    f.dtype_out = GS_DTYPE_F32;
    cr_assert_eq(gs_op_reference(ctx, &f, ins, NULL, ref), GS_OK);
    cr_assert_eq(gs_op_reference(ctx, &op, ins, NULL, y), GS_OK); /* the rounded reference */
    for (int i = 0; i < 4000; i++) {
        rne[i] = gs_f16_to_f32(gs_f32_to_f16(ref[i]));
        tr[i] = gs_f16_to_f32(trunc_f16(ref[i]));
        cr_assert_eq(y[i], rne[i]);
    }
    double slack = gs_verify_tolerance(&f);
    gs_diff d = {0};
    gs_diff_compute(rne, ref, 4000, &d);
    cr_assert_leq(d.normwise, gs_verify_tolerance(&op));
    gs_diff_round_check(rne, ref, 4000, GS_DTYPE_F16, slack * d.ref_max, &d);
    cr_assert_eq(d.rounding, 0);
    gs_diff_compute(tr, ref, 4000, &d);
    gs_diff_round_check(tr, ref, 4000, GS_DTYPE_F16, slack * d.ref_max, &d);
    cr_assert_gt(d.rounding, 1000, "truncation: %lld of 4000 caught", (long long)d.rounding);
    cr_assert(gs_verify_tolerance(&op) > gs_verify_tolerance(&f));
    cr_assert_eq(gs_verify_tolerance(&f), GS_VERIFY_TOL); /* f32 outputs: as before */
    gs_ctx_destroy(ctx);
}

/* ---- math=tf32 ---------------------------------------------------------------------------- */
Test(dtype, tf32_rounding_bits) {
    static const struct { uint32_t x, want; } c[] = {
        {0x3f800000u, 0x3f800000u}, /* 1 */
        {0x3f801000u, 0x3f802000u}, /* 1 + 2^-11, a tie: away from zero (RNE would give 1) */
        {0xbf801000u, 0xbf802000u}, /* its negative: away from zero too */
        {0x3f800fffu, 0x3f800000u}, /* below the tie */
        {0x3f803000u, 0x3f804000u}, /* 1 + 3*2^-11: a tie, away */
        {0x7f7fffffu, 0x7f800000u}, /* the largest float rounds to inf */
        {0x7f800000u, 0x7f800000u}, {0xff800000u, 0xff800000u}, {0x7fc00001u, 0x7fc00001u}, /* inf, NaN kept */
        {0x00001000u, 0x00002000u}, /* a subnormal tie */
    };
    for (size_t i = 0; i < sizeof c / sizeof c[0]; i++) {
        float y = gs_tf32_round(bitsf(c[i].x));
        uint32_t u;
        memcpy(&u, &y, 4);
        cr_expect_eq(u, c[i].want, "%#010x -> %#010x, want %#010x", c[i].x, u, c[i].want);
    }
}

Test(dtype, tf32_spec_and_refusals) {
    gs_op a, b;
    parse_ok("gemm M=5 N=7 K=3 math=tf32", &a);
    cr_assert_eq(a.math, GS_MATH_TF32);
    cr_assert_str_eq(a.spec, "gemm M=5 N=7 K=3 transA=0 transB=0 alpha=1 beta=0 math=tf32");
    parse_ok(a.spec, &b);
    cr_assert(!memcmp(&a, &b, sizeof a));
    parse_ok("conv2d N=1 C=3 H=5 W=5 K=4 R=3 S=3 math=tf32", &a);
    parse_ok("bgemm B=2 M=5 N=7 K=3 math=tf32", &a);
    parse_ok("gemm M=5 N=7 K=3 math=f32", &a);
    cr_assert_eq(a.math, 0);
    static const char *bad[] = {"gemv M=4 N=4 math=tf32", "gemm M=4 N=4 K=4 math=tf32 dtype=f16",
                                "relu M=4 N=4 math=tf32", "gemm M=4 N=4 K=4 math=tf64", "rowsum M=4 K=4 math=tf32",
                                "gemm M=4 N=4 K=4 math=tf32 out_dtype=bf16"};
    gs_ctx *ctx = gs_ctx_create();
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        cr_expect_eq(gs_op_parse_into(ctx, bad[i], &a), GS_ERR_PARSE, "%s: %s", bad[i], gs_ctx_errmsg(ctx));
    parse_ok("gemm M=5 N=7 K=3 math=tf32", &a);
    cr_assert_eq(gs_op_set_dtype(ctx, &a, GS_DTYPE_F16, GS_DTYPE_F16), GS_ERR_INVALID_ARG);
    cr_assert_eq(gs_op_set_math(ctx, &a, GS_MATH_F32), GS_OK);
    cr_assert_str_eq(a.spec, "gemm M=5 N=7 K=3 transA=0 transB=0 alpha=1 beta=0");
    cr_assert_eq(gs_op_set_math(ctx, &a, (gs_math)5), GS_ERR_INVALID_ARG);
    gs_ctx_destroy(ctx);
}

/* A 16-bit copy's out-of-bounds fill is the combine's identity in the
 * storage bits (the type table's rows): -inf for max, +inf for min, 0 for
 * sums. Read only where a partial tile's bounded loop stops short of it
 * today, so the text is what is checked: a min once filled with 0. */
Test(dtype, raw_copy_fill_is_the_combines_identity) {
    static const struct {
        const char *spec, *fill;
    } c[] = {{"rowmin M=64 K=1000 dtype=f16", ": 0x7c00;"},   {"rowmin M=64 K=1000 dtype=bf16", ": 0x7f80;"},
             {"rowmax M=64 K=1000 dtype=f16", ": 0xfc00;"},   {"rowmax M=64 K=1000 dtype=bf16", ": 0xff80;"},
             {"rowsum M=64 K=1000 dtype=f16", ": 0x0000;"}};
    gs_ctx *ctx = gs_ctx_create();
    for (size_t i = 0; i < sizeof c / sizeof c[0]; i++) {
        gs_op op;
        parse_ok(c[i].spec, &op);
        gs_etir e;
        cr_assert_eq(gs_etir_parse_config(ctx, &op, "bm=4,bk=256,tm=1,vm=1,sx=1", &e), GS_OK, "%s", gs_ctx_errmsg(ctx));
        gs_kernel_src ks;
        cr_assert_eq(gs_lower_emit(ctx, gs_hw_find_builtin("t4"), &op, &e, GS_DIALECT_OPENCL, 0, &ks), GS_OK, "%s",
                     gs_ctx_errmsg(ctx));
        cr_expect(strstr(ks.src, c[i].fill), "%s: no fill '%s'", c[i].spec, c[i].fill);
        gs_kernel_src_free(&ks);
    }
    gs_ctx_destroy(ctx);
}
