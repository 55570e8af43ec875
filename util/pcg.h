/* pcg.h — PCG32 (O'Neill's pcg32_random_r: XSH-RR output, 64-bit LCG state).
 * Written in C from the published algorithm; checked in tests/test_pcg.c
 * against the reference generator's output for its demo seed. */
#ifndef GS_PCG_H
#define GS_PCG_H
#include <stdint.h>

typedef struct gs_pcg32 {
    uint64_t state;
    uint64_t inc; /* always odd */
} gs_pcg32;

/* Seed like pcg32_srandom_r(rng, initstate, initseq). */
void gs_pcg32_seed(gs_pcg32 *rng, uint64_t initstate, uint64_t initseq);
uint32_t gs_pcg32_next(gs_pcg32 *rng);
/* Uniform in [0, bound) without modulo bias (pcg32_boundedrand_r). */
uint32_t gs_pcg32_bounded(gs_pcg32 *rng, uint32_t bound);
/* Uniform double in [0, 1) with 32 random bits. */
double gs_pcg32_double(gs_pcg32 *rng);
/* Fill x[0..n) with floats uniform in [-1, 1) (one draw each, in order):
 * the test data of verification, refinement and the GPU experiments; sums of
 * these keep magnitudes moderate. */
void gs_pcg32_fill_uniform(gs_pcg32 *rng, float *x, int64_t n);
#endif
