/* pcg.c — PCG32 random numbers (M. E. O'Neill, "PCG: A Family of Simple Fast
 * Space-Efficient Statistically Good Algorithms for Random Number Generation",
 * 2014), the XSH-RR member with 64-bit state and 32-bit output.
 *
 * Written from the algorithm's description; tests/test_pcg.c checks it
 * against the output of the reference demo (pcg32-demo, seed 42, stream 54)
 * and an independent big-integer implementation.
 *
 * The walk draws every random decision from here, so a seed fully determines
 * a construction: same seed => same kernels, on every platform (only fixed
 * width unsigned arithmetic is used; wrap-around is defined behaviour). */
#include "util/pcg.h"

/* The 64-bit LCG multiplier (Knuth's MMIX constant, used by the reference). */
#define PCG_MULT 6364136223846793005ULL

/* One LCG step: state' = state * a + c (mod 2^64). The increment c selects
 * one of 2^63 streams and must be odd for a full period. */
static inline void pcg_step(gs_pcg32 *rng) { rng->state = rng->state * PCG_MULT + rng->inc; }

/* Seed as pcg32_srandom_r: pick the stream from initseq (shifted up so that
 * the increment is odd), step once from zero, add the start state, step
 * again, so that nearby seeds do not give nearby first outputs. */
void gs_pcg32_seed(gs_pcg32 *rng, uint64_t initstate, uint64_t initseq) {
    rng->state = 0u;
    rng->inc = (initseq << 1u) | 1u;
    pcg_step(rng);
    rng->state += initstate;
    pcg_step(rng);
}

/* Output from the *old* state (so the multiply and the permutation can
 * overlap): XSH = xorshift the high bits down, keep 32 bits; RR = rotate
 * right by the top 5 bits of the state. */
uint32_t gs_pcg32_next(gs_pcg32 *rng) {
    uint64_t old = rng->state;
    pcg_step(rng);
    uint32_t xorshifted = (uint32_t)(((old >> 18u) ^ old) >> 27u);
    uint32_t rot = (uint32_t)(old >> 59u);
    /* (-rot & 31) keeps the left shift in 0..31 even when rot == 0. */
    return (xorshifted >> rot) | (xorshifted << ((0u - rot) & 31u));
}

/* Uniform in [0, bound) as pcg32_boundedrand_r: reject the lowest
 * 2^32 mod bound values so that the remaining range is a whole number of
 * copies of [0, bound), then reduce with %. (0 - bound) % bound computes
 * 2^32 mod bound in 32-bit arithmetic. At most half the draws are rejected
 * (bound just above 2^31), so the expected number of draws is below 2.
 * bound == 0 has no valid answer; we return 0 rather than divide by zero. */
uint32_t gs_pcg32_bounded(gs_pcg32 *rng, uint32_t bound) {
    if (bound == 0u) return 0u;
    uint32_t threshold = (0u - bound) % bound;
    for (;;) {
        uint32_t r = gs_pcg32_next(rng);
        if (r >= threshold) return r % bound;
    }
}

/* 32 random bits scaled by 2^-32: exact in a double, never reaches 1. */
double gs_pcg32_double(gs_pcg32 *rng) {
    return (double)gs_pcg32_next(rng) * (1.0 / 4294967296.0);
}

void gs_pcg32_fill_uniform(gs_pcg32 *rng, float *x, int64_t n) {
    for (int64_t i = 0; i < n; i++) x[i] = (float)(2.0 * gs_pcg32_double(rng) - 1.0);
}
