/* test_pcg.c — PCG32 against the reference generator's published output.
 *
 * The expected values are those printed by O'Neill's pcg32-demo (pcg-c-basic)
 * for pcg32_srandom_r(&rng, 42u, 54u), round 1, and were cross-checked with an
 * independent Python implementation using arbitrary-precision ints (masking
 * to 64 bits by hand), which also produced the bounded() sequences below. */
#include "util/pcg.h"

#include <criterion/criterion.h>
#include <stdint.h>

TestSuite(pcg);

Test(pcg, seed_matches_reference_state) {
    gs_pcg32 r;
    gs_pcg32_seed(&r, 42u, 54u);
    /* inc = 54*2+1; state after pcg32_srandom_r(42, 54). */
    cr_assert_eq(r.inc, 109u);
    cr_assert_eq(r.state, 0x185706b82c2e03f8ULL, "state %#llx", (unsigned long long)r.state);
}

Test(pcg, demo_round1_32bit_values) {
    static const uint32_t expect[6] = {0xa15c02b7u, 0x7b47f409u, 0xba1d3330u,
                                       0x83d2f293u, 0xbfa4784bu, 0xcbed606eu};
    gs_pcg32 r;
    gs_pcg32_seed(&r, 42u, 54u);
    for (int i = 0; i < 6; i++) {
        uint32_t v = gs_pcg32_next(&r);
        cr_assert_eq(v, expect[i], "value %d: got %#x want %#x", i, v, expect[i]);
    }
}

Test(pcg, other_seed_cross_checked) {
    /* From the independent Python implementation, seed (1, 1). */
    static const uint32_t expect[3] = {0xc9828f91u, 0x1592e274u, 0xc0262657u};
    gs_pcg32 r;
    gs_pcg32_seed(&r, 1u, 1u);
    for (int i = 0; i < 3; i++) cr_assert_eq(gs_pcg32_next(&r), expect[i], "value %d", i);
}

Test(pcg, bounded_matches_reference_algorithm) {
    /* bound 6: no rejection in practice (threshold 4). */
    static const uint32_t six[12] = {3, 3, 2, 1, 1, 4, 5, 3, 0, 2, 0, 1};
    gs_pcg32 r;
    gs_pcg32_seed(&r, 42u, 54u);
    for (int i = 0; i < 12; i++) cr_assert_eq(gs_pcg32_bounded(&r, 6u), six[i], "draw %d", i);

    /* bound 2^31+1: threshold 2^31-1, so about half the draws are rejected;
     * 0x7b47f409 (the 2nd raw value) must be skipped. */
    static const uint32_t big[6] = {0x215c02b6u, 0x3a1d332fu, 0x03d2f292u,
                                    0x3fa4784au, 0x4bed606du, 0x3fc6a3acu};
    gs_pcg32_seed(&r, 42u, 54u);
    for (int i = 0; i < 6; i++)
        cr_assert_eq(gs_pcg32_bounded(&r, 0x80000001u), big[i], "draw %d", i);
}

Test(pcg, bounded_in_range_and_deterministic) {
    static const uint32_t bounds[] = {1u, 2u, 3u, 7u, 10u, 1000u, 0x80000001u, 0xffffffffu};
    for (size_t b = 0; b < sizeof bounds / sizeof bounds[0]; b++) {
        gs_pcg32 r1, r2;
        gs_pcg32_seed(&r1, 12345u + b, 7u);
        gs_pcg32_seed(&r2, 12345u + b, 7u);
        for (int i = 0; i < 20000; i++) {
            uint32_t v1 = gs_pcg32_bounded(&r1, bounds[b]);
            uint32_t v2 = gs_pcg32_bounded(&r2, bounds[b]);
            cr_assert_lt(v1, bounds[b], "bound %u gave %u", bounds[b], v1);
            cr_assert_eq(v1, v2, "same seed must give the same sequence");
        }
    }
    gs_pcg32 r;
    gs_pcg32_seed(&r, 1u, 2u);
    cr_assert_eq(gs_pcg32_bounded(&r, 0u), 0u, "bound 0 is defined as 0");
}

Test(pcg, bounded_roughly_uniform) {
    /* 100000 draws over 10 bins: each bin expects 10000, sd ~95; allow 5%. */
    int bins[10] = {0};
    gs_pcg32 r;
    gs_pcg32_seed(&r, 2024u, 3u);
    for (int i = 0; i < 100000; i++) bins[gs_pcg32_bounded(&r, 10u)]++;
    for (int i = 0; i < 10; i++) cr_assert(bins[i] > 9500 && bins[i] < 10500, "bin %d: %d", i, bins[i]);
}

Test(pcg, streams_differ) {
    gs_pcg32 a, b;
    gs_pcg32_seed(&a, 42u, 54u);
    gs_pcg32_seed(&b, 42u, 55u);
    int same = 0;
    for (int i = 0; i < 100; i++) same += gs_pcg32_next(&a) == gs_pcg32_next(&b);
    cr_assert_lt(same, 3, "different streams should not coincide (%d equal)", same);
}

Test(pcg, double_in_unit_interval) {
    gs_pcg32 r;
    gs_pcg32_seed(&r, 42u, 54u);
    /* First double is exactly the first 32-bit value over 2^32. */
    double d0 = gs_pcg32_double(&r);
    cr_assert_eq(d0, 0xa15c02b7u / 4294967296.0);
    double sum = 0.0, lo = 1.0, hi = 0.0;
    for (int i = 0; i < 100000; i++) {
        double d = gs_pcg32_double(&r);
        cr_assert(d >= 0.0 && d < 1.0, "double out of [0,1): %.17g", d);
        sum += d;
        if (d < lo) lo = d;
        if (d > hi) hi = d;
    }
    cr_assert(sum / 100000 > 0.49 && sum / 100000 < 0.51, "mean %g", sum / 100000);
    cr_assert(lo < 0.001 && hi > 0.999, "range [%g, %g]", lo, hi);
    /* The largest 32-bit value still maps below 1. */
    cr_assert_lt(0xffffffffu / 4294967296.0, 1.0);
}
