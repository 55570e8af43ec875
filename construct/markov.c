/* markov.c — graph-based construction: Algorithms 1 and 2 of the Gensor paper,
 * run as several independent chains, with a deduplicated candidate pool ranked
 * by the analytic estimate; plus the exhaustive and random baselines.
 *
 * Algorithm 1 (per chain): start from the unscheduled state, T = t_start.
 *   while T > threshold: pick (action, dim) with Algorithm 2, apply it, append
 *   the new state to the pool with probability 1 - 1/(1 + exp(-0.5(-ln T - 10))),
 *   move there, halve T.
 * Algorithm 2: weight every applicable (action, dim) by its benefit, zero the
 *   ones failing the memory check, multiply cache by 3/(1+exp(-(ln5/10)(t-10))),
 *   normalise, and pick by roulette with PCG32.
 */
#define _GNU_SOURCE /* sched_getaffinity, CPU_COUNT (glibc) */
#include "construct/construct.h"

#include <math.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* Model-policy constants, chosen on the gemm sweep in experiments/ (beta in
 * {2, 4}, cache weight in {0.3, 1}): 4 and 0.3 gave the median and worst
 * ratio to the exhaustive optimum closest to 1 at ~3 ms per construction. */
#define GS_MODEL_SHARPNESS 4.0
#define GS_MODEL_CACHE_WEIGHT 0.3

/* A speedup raised to GS_MODEL_SHARPNESS: two squarings, not pow (4 % of a
 * small operator's construction: the walk weighs every action this way). */
static double sharpen(double r) {
    _Static_assert((int)GS_MODEL_SHARPNESS == 4, "sharpen squares twice");
    double r2 = r * r;
    return r2 * r2;
}

/* Completions a level-2 state is priced by (GS_COMPLETE_THREADS threads,
 * then half as many each try; predicted_hash). */
#ifndef GS_COMPLETE_TRIES
#define GS_COMPLETE_TRIES 2
#endif
/* The most workers a construction runs on (gs_construct_opts.threads). */
#define GS_MAX_THREADS 64
/* With the default threads (0), a construction's helpers start only when
 * the work left in a phase (the walk's chains, the polishes), projected
 * from the mean CPU time of the jobs the calling thread has done alone (at
 * least two: the first chain, on a cold memo, costs 2-4 times the next),
 * is at least this many seconds: on a small operator a second worker costs
 * more than it saves (its memo, the thread, the merge, the states it prices
 * again, and on two cores the calling thread slowed by it). The
 * environment's GS_HELP_AFTER_MS, when set, replaces it (0: the helpers
 * start after the second job; tests/test_construct.c). */
#ifndef GS_HELP_AFTER_S
#define GS_HELP_AFTER_S 3e-3
#endif
/* ... unless the machine has a core to spare (gs_help_early): then they
 * start after the second job, as with GS_HELP_AFTER_MS=0 (on a quiet 2-core
 * machine 0.92x the wall time of the 2-5 ms operators; the 3 ms rule was
 * chosen on a loaded one, where a helper only slows the calling thread).
 * The machine is looked at again after this many seconds. */
#define GS_HELP_LOOK_S 0.25

void gs_construct_opts_default(gs_construct_opts *o) {
    memset(o, 0, sizeof *o);
    o->seed = 1;
    o->top_k = 5;
    o->chains = 8;
    o->t_start = 1.0;
    o->t_threshold = ldexp(1.0, -40); /* 40 halvings per chain */
    o->policy = GS_POLICY_MODEL;
    o->strategy = GS_STRATEGY_MARKOV;
}

double gs_cache_multiplier(int t) { return 3.0 / (1.0 + exp(-(log(5.0) / 10.0) * (t - 10))); }

double gs_append_probability(double T) { return 1.0 - 1.0 / (1.0 + exp(-0.5 * (-log(T) - 10.0))); }

bool gs_complete(const gs_hw *hw, const gs_op *op, const gs_etir *e, gs_etir *out) {
    *out = *e;
    if (e->level == 2) {
        int lim = hw->max_threads_per_block < GS_COMPLETE_THREADS ? hw->max_threads_per_block : GS_COMPLETE_THREADS;
        gs_action c = {GS_ACT_CACHE, -1, 0};
        if (!gs_etir_apply(op, e, c, lim, out)) return false;
    }
    out->level = 0;
    return gs_hw_check(hw, op, out);
}

/* A level-2 state completed with the knobs its tiles ask for: split-K
 * blocks until the grid fills the SMs, and reduce lanes until the block
 * has GS_COMPLETE_THREADS threads, each as far as its row allows. The
 * plain completion gives a long reduce tile one thread and a small grid
 * one block per tile, so the walk priced those tiles as hopeless at level 2
 * and never reached them (rowsum M=1 K=2^24: k:8192 g512 sk16). True when
 * some knob moved (the caller checks the state). */
static bool complete_knobbed(const gs_hw *hw, const gs_op *op, const gs_etir *c, gs_etir *out) {
    *out = *c;
    int s = 1;
    while (gs_etir_tile_blocks(op, out) * s < hw->num_sms && gs_knob_ok(op, out, GS_KNOB_SPLITK, s * 2)) s *= 2;
    gs_knob_set(out, GS_KNOB_SPLITK, s);
    if (s > 1 && !gs_hw_splitk_ok(hw, op, out)) gs_knob_set(out, GS_KNOB_SPLITK, 1);
    int lg = 0;
    while (gs_etir_threads(op, out) * (2 << lg) <= GS_COMPLETE_THREADS && gs_knob_ok(op, out, GS_KNOB_LANES, lg + 1))
        lg++;
    gs_knob_set(out, GS_KNOB_LANES, lg);
    return out->splitk > 1 || lg > 0;
}

int gs_actions_enumerate(const gs_op *op, const gs_etir *e, gs_action *acts, int cap) {
    int n = 0;
    if (e->level == 0) return 0;
    for (int d = 0; d < op->naxes; d++) {
        if (e->level == 1 && op->axes[d].kind != GS_AXIS_SPATIAL) continue;
        if (n + 2 <= cap) {
            acts[n++] = (gs_action){GS_ACT_TILE, d, 0};
            acts[n++] = (gs_action){GS_ACT_INVTILE, d, 0};
        }
        if (e->level == 1)
            for (int v = 1; v <= e->tile[d].thread && n < cap; v *= 2)
                if (v != e->V[d]) acts[n++] = (gs_action){GS_ACT_VTHREAD, d, v};
    }
    /* the knobs, chosen once the thread tiles are being set, each as its
     * row says: every other value (stages, raster), or a step each way (the
     * lanes and split-K: each value costs an estimate per step; six values
     * of the lanes made construction 15 % slower) */
    if (e->level == 1)
        for (int k = 0; k < GS_KNOB_COUNT; k++) {
            const gs_knob *r = &gs_knobs[k];
            int cur = gs_knob_get(e, k), cand[2] = {cur - 1, cur + 1}, nc = 2;
            if (r->moves == GS_KNOB_NOT_WALKED) continue;
            if (r->moves == GS_KNOB_EVERY) {
                /* (the mma row: only its legal values, so a walk whose
                 * operator takes no tensor-core row moves as before) */
                for (int v = r->lo; v <= r->hi && n < cap; v++)
                    if (v != cur && (k != GS_KNOB_MMA || gs_knob_ok(op, e, k, v))) acts[n++] = (gs_action){r->act, -1, v};
                continue;
            }
            if (r->moves == GS_KNOB_DOUBLE_HALF) {
                cand[0] = cur * 2;
                cand[1] = cur / 2;
            }
            for (int i = 0; i < nc && n < cap; i++)
                if (cand[i] != cur && gs_knob_ok(op, e, k, cand[i])) acts[n++] = (gs_action){r->act, -1, cand[i]};
        }
    if (n < cap) acts[n++] = (gs_action){GS_ACT_CACHE, -1, 0};
    return n;
}

/* A state's identity for the memos, the pools and the polish's path: the
 * state's words two at a time folded by a 64x64 -> 128-bit multiply (each
 * pair xored with its own constant and the running key, the product's two
 * halves xored), then a final mix (a sixth of gs_etir_hash's work, which
 * names kernels and so stays as it is). A factor is 0 only when a word
 * equals its constant or the running key: 2^-64 per pair, like any other
 * 64-bit collision. 64-bit equality is taken as identity, as before. */
static uint64_t state_key(const gs_etir *e) {
    _Static_assert(sizeof(gs_etir) % 16 == 0, "state_key reads the state two words at a time");
    const unsigned char *b = (const unsigned char *)e;
    uint64_t h = 0x9e3779b97f4a7c15ull;
    for (size_t i = 0; i < sizeof(gs_etir) / 8; i += 2) {
        uint64_t w[2]; /* (its loads: no copy of the whole state) */
        memcpy(w, b + 8 * i, sizeof w);
#ifdef __SIZEOF_INT128__
        __extension__ unsigned __int128 p =
            (unsigned __int128)(w[0] ^ 0xa0761d6478bd642full) * (w[1] ^ 0xe7037ed1a0b428dbull ^ h);
        h = (uint64_t)p ^ (uint64_t)(p >> 64);
#else /* no 128-bit product: two multiply-xor steps */
        h = (h ^ w[0]) * 0xff51afd7ed558ccdull;
        h = (h ^ (h >> 31) ^ w[1]) * 0xc4ceb9fe1a85ec53ull;
        h ^= h >> 29;
#endif
    }
    h ^= h >> 33;
    h *= 0xff51afd7ed558ccdull;
    h ^= h >> 33;
    return h;
}

/* The floor of a polish neighbour (gs_estimate_floor_plan), kept so that
 * the next moves, which meet most neighbours again, pass over it without
 * its plan (best_neighbour). One table per form, shared by its workers
 * (floor_find, floor_put): each entry a seqlock, its sequence odd while a
 * writer holds it, so a reader never pairs a key with another state's
 * floor. */
typedef struct floor_entry {
    _Atomic uint64_t seq;  /* even: stable; odd: being written; +2 a write */
    _Atomic uint64_t key;  /* the state's key (odd); 0: empty */
    _Atomic uint64_t bits; /* the floor, a double's bits */
} floor_entry;
/* a power of two; where the prices' table grows (memo_grow) each worker's
 * floors grow to FLOOR_SLOTS_BIG: 4096 evicted floors the polish of the
 * largest convs met again (rtx3090 conv2d N=1 C=3 224^2 K=64 7x7 s2: 1.6 %
 * fewer instructions at 8192) */
enum { FLOOR_SLOTS = 4096, FLOOR_SLOTS_BIG = 16384 };

/* The memory check of a walk's transition into a level-2 state (benefit_ex):
 * the chains meet the same block tiles again and again, and the check
 * shapes the state's plan each time; direct-mapped by state_key. */
typedef struct check_entry {
    uint64_t key; /* state_key | 1; 0: empty */
    bool ok;
} check_entry;
enum { CHECK_SLOTS = 2048 }; /* a power of two */

/* The most neighbours a state has (neighbours below). */
enum { POLISH_NB = GS_MAX_AXES * (12 + 3 * GS_MAX_AXES) + 2 * GS_KNOB_COUNT + 4 + 6 * GS_MAX_AXES + 4 };

/* Memo of predicted times by state hash: the walk revisits states often
 * (invTile undoes tile), and an estimate costs far more than a lookup. The
 * prices (key, val) are one table shared by the workers of a form
 * (memo_find, memo_put: lock-free); the other tables are each worker's own. */
typedef struct memo {
    _Atomic uint64_t *key; /* state_key | 1 (odd); 0: empty; MEMO_FILLING: its value being written */
    double *val;           /* written once, before its key is published */
    int64_t cap;   /* power of two */
    gs_wf_memo *wf; /* access-pattern simulations shared by the estimates */
    floor_entry *floors; /* direct-mapped by key (the polish's), shared by the form's workers */
    int64_t nfloors;     /* its slots, a power of two */
    check_entry *checks; /* direct-mapped by key (the walk's level-2 transitions) */
    bool apart; /* the audit (GS_AUDIT_FLOOR): no shared entries (memo_key), completions checked apart */
    /* the polish's neighbours and the escape's compounds, 2 * POLISH_NB states
     * (104 KB), each worker's own: on the stack they took a construction past
     * a 128 KB thread stack (musl's default), which a caller's thread or a
     * helper may have */
    gs_etir *scratch;
} memo;

/* The slots a price's probe run looks at from its home slot. */
enum { MEMO_PROBES = 8 };
/* The prices' table: MEMO_CAP slots, grown to MEMO_CAP_BIG before the
 * polish where the walk filled more than 1/MEMO_GROW_AT of it (memo_grow).
 * The polish prices 2-4 times the walk's states, and at 2^14 the largest
 * convs filled the table to 88 %: 3 526 prices found no free slot in their
 * probe run and were priced again when met again (rtx3090 conv2d N=1 C=3
 * 224^2 K=64 7x7 s2: 5 % of its instructions). 2^15 slots from the start
 * took the small operators 1.04-1.11x the wall time (their zeroing and
 * cache footprint); a walk that fills a fifth is a large operator's. */
enum { MEMO_CAP = 1 << 14, MEMO_CAP_BIG = 1 << 16, MEMO_GROW_AT = 5 };
/* A slot claimed by a worker that is writing its value: even, so never a key. */
#define MEMO_FILLING ((uint64_t)2)
/* The keys are zeroed as plain memory (the arena's), read as atomics: one
 * representation, no lock. */
_Static_assert(ATOMIC_LLONG_LOCK_FREE == 2 && sizeof(_Atomic uint64_t) == sizeof(uint64_t),
               "the price table's keys are lock-free 64-bit atomics");

static bool memo_init(memo *m, gs_arena *ar, int64_t cap) {
    m->cap = cap;
    m->key = gs_arena_alloc(ar, (size_t)cap * sizeof *m->key);
    /* only the keys are zeroed (an empty slot is a 0 key): a value is read
     * behind its key, so the values (3/4 of the 1 MB) are left as they come */
    m->val = gs_arena_alloc_raw(ar, (size_t)cap * sizeof *m->val);
    m->wf = gs_arena_alloc_raw(ar, sizeof *m->wf);
    if (m->wf) gs_wf_memo_init(m->wf); /* its keys: an empty memo */
    m->nfloors = FLOOR_SLOTS;
    m->floors = gs_arena_alloc(ar, FLOOR_SLOTS * sizeof *m->floors);
    m->checks = gs_arena_alloc(ar, CHECK_SLOTS * sizeof *m->checks);
    m->scratch = gs_arena_alloc_raw(ar, 2 * POLISH_NB * sizeof *m->scratch);
    m->apart = false;
    return m->key && m->val && m->wf && m->floors && m->checks && m->scratch;
}

/* m a helper's memo: src's price and floor tables themselves (shared), and
 * copies of its simulations and checks (each worker's own: exact facts of
 * states, so a helper that starts late knows what the calling thread has
 * met), from the arena. Made on the calling thread, which owns src: helpers
 * started before it may run, and read neither src's copies nor m, which
 * reaches its thread through pthread_create. */
static bool memo_clone(memo *m, gs_arena *ar, const memo *src) {
    *m = *src;
    m->wf = gs_arena_alloc_raw(ar, sizeof *m->wf);
    m->checks = gs_arena_alloc_raw(ar, CHECK_SLOTS * sizeof *m->checks);
    m->scratch = gs_arena_alloc_raw(ar, 2 * POLISH_NB * sizeof *m->scratch); /* its own */
    if (!m->wf || !m->checks || !m->scratch) return false;
    *m->wf = *src->wf;
    memcpy(m->checks, src->checks, CHECK_SLOTS * sizeof *m->checks);
    return true;
}

/* The kept floor of key eh (odd): true and *f when its slot holds it. A
 * seqlock's read: the sequence, the key and the floor, the sequence again.
 * A writer's key and floor are release stores after its claim of the
 * sequence, so a reader that loads either (acquire) then loads a sequence
 * past the claim: a write during the read makes it a miss. */
static bool floor_find(const memo *m, uint64_t eh, double *f) {
    floor_entry *fe = &m->floors[(eh >> 7) & (uint64_t)(m->nfloors - 1)];
    const uint64_t s = atomic_load_explicit(&fe->seq, memory_order_acquire);
    if (s & 1 || atomic_load_explicit(&fe->key, memory_order_acquire) != eh) return false;
    const uint64_t b = atomic_load_explicit(&fe->bits, memory_order_acquire);
    if (atomic_load_explicit(&fe->seq, memory_order_relaxed) != s) return false;
    memcpy(f, &b, sizeof *f);
    return true;
}

/* Keep floor f of key eh (odd) in its slot: the sequence claimed by a CAS
 * (nothing kept when another worker holds it: a kept floor only spares a
 * plan), the key and the floor written, the sequence released. */
static void floor_put(memo *m, uint64_t eh, double f) {
    floor_entry *fe = &m->floors[(eh >> 7) & (uint64_t)(m->nfloors - 1)];
    uint64_t s = atomic_load_explicit(&fe->seq, memory_order_relaxed), b;
    if (s & 1 ||
        !atomic_compare_exchange_strong_explicit(&fe->seq, &s, s + 1, memory_order_relaxed, memory_order_relaxed))
        return;
    memcpy(&b, &f, sizeof b);
    atomic_store_explicit(&fe->key, eh, memory_order_release);
    atomic_store_explicit(&fe->bits, b, memory_order_release);
    atomic_store_explicit(&fe->seq, s + 2, memory_order_release);
}

/* The price of key eh in m's table: true and *v its value (the time, or -1
 * for a failed state) when published. A slot another worker is filling
 * reads as a miss: the caller prices the state itself (a price is an exact
 * fact of the state, so who computes it changes no result). The acquire
 * load of the key orders the value's read after the write it publishes. */
static bool memo_find(const memo *m, uint64_t eh, double *v) {
    uint64_t h = eh | 1u;
    int64_t s = (int64_t)(h & (uint64_t)(m->cap - 1));
    for (int probe = 0; probe < MEMO_PROBES; probe++, s = (s + 1) & (m->cap - 1)) {
        uint64_t k = atomic_load_explicit(&m->key[s], memory_order_acquire);
        if (k == h) {
            *v = m->val[s];
            return true;
        }
        if (!k) break;
    }
    return false;
}

/* Put key eh's price v into m's table: the first empty slot of its probe
 * run claimed by a CAS (0 -> MEMO_FILLING), the value written, the key
 * published by a release store. Nothing when the key is there already (a
 * worker priced it at the same time: the same value) or the run is full. */
static void memo_put(memo *m, uint64_t eh, double v) {
    uint64_t h = eh | 1u;
    int64_t s = (int64_t)(h & (uint64_t)(m->cap - 1));
    for (int probe = 0; probe < MEMO_PROBES; probe++, s = (s + 1) & (m->cap - 1)) {
        uint64_t k = atomic_load_explicit(&m->key[s], memory_order_relaxed);
        if (!k && atomic_compare_exchange_strong_explicit(&m->key[s], &k, MEMO_FILLING, memory_order_relaxed,
                                                          memory_order_relaxed)) {
            m->val[s] = v;
            atomic_store_explicit(&m->key[s], h, memory_order_release);
            return;
        }
        if (k == h) return; /* (k: the slot's key, or what a lost CAS found there) */
    }
}

static double predicted_hash(const gs_hw *hw, const gs_op *op, const gs_etir *e, memo *m, bool *ok, uint64_t eh);

/* Thread tile t (a power of two) over the axes of role r, innermost axis
 * (the last) first, each axis taking the largest power of two of what is
 * left that divides its block tile; the other role axes' tiles are 1. False
 * when the block tiles cannot hold t. */
static bool mma_spread(const gs_op *op, const int8_t *role, int r, int64_t t, gs_etir *x) {
    for (int d = op->naxes - 1; d >= 0; d--) {
        if (role[d] != r) continue;
        int64_t f = 1;
        while (f * 2 <= t && x->tile[d].block % (f * 2) == 0) f *= 2;
        x->tile[d].thread = (int32_t)f;
        t /= f;
    }
    return t == 1;
}

/* Whether op's states can take a tensor-core row on hw at all: a row of its
 * types on the arch (gs_mma_pick), a tensor rate for them, and mma roles for
 * every axis (role gets them). gs_mma_pick alone is the types' and the
 * arch's: a half dwconv, pool, gemv or row reduction has a row by it, though
 * no state of it can use one. */
static bool takes_mma(const gs_hw *hw, const gs_op *op, int8_t *role) {
    return gs_mma_pick(hw->sm, op) && gs_hw_tensor_flops_per_sm(hw, (gs_dtype)op->dtype_in, (gs_math)op->math) > 0 &&
           gs_mma_roles(op, role);
}

/* A level-2 state completed for the tensor cores (issue 20): when the
 * profile's arch has an mma row for op's types (gs_mma_pick) and a tensor
 * rate for them, c's tiles (its plain completion) with that row, both inputs
 * staged and the thread tiles of m and n set to each TM, TN in {2, 4, 8, 16}
 * that the row allows (gs_mma_state_ok: a warp of 8 x 4 threads, 8TM x 4TN
 * outputs) with 32 to GS_COMPLETE_THREADS threads; the fastest under the
 * estimate goes to *out. The plain completion keeps FFMA thread tiles, so
 * without this the walk priced every block tile by its FFMA kernel and chose
 * FFMA's small tiles for a half GEMM. A role over several axes (a conv's m
 * is n, p and q) gets its tile innermost axis first (mma_spread): before,
 * a conv had no tensor-core completion at all, and its walk reached the
 * tensor cores only where an FFMA thread tile happened to fit the row. A
 * block whose k tile the picked row does not divide takes the widest row of
 * the same types that does (a conv's c:8 r:1 s:1 the k8 row). False when
 * there is no row or no candidate passes the check. */
static bool complete_mma(const gs_hw *hw, const gs_op *op, const gs_etir *c, memo *m, gs_etir *out, double *t) {
    int8_t role[GS_MAX_AXES];
    if (!takes_mma(hw, op, role)) return false;
    int64_t bm = 1, bn = 1, bk = 1;
    for (int d = 0; d < op->naxes; d++) {
        if (role[d] == GS_MMA_ROLE_M) bm *= c->tile[d].block;
        if (role[d] == GS_MMA_ROLE_N) bn *= c->tile[d].block;
        if (role[d] == GS_MMA_ROLE_K) bk *= c->tile[d].block;
    }
    *t = INFINITY;
    gs_etir x = *c;
    x.level = 0;
    x.lanes_log2 = 0;
    x.staged[0] = x.staged[1] = 1;
    for (int d = 0; d < op->naxes; d++) {
        x.V[d] = 1;
        if (op->axes[d].kind == GS_AXIS_SPATIAL) x.tile[d].thread = 1;
    }
    const int row = gs_mma_pick_dividing(hw->sm, op, bk);
    if (!row) return false;
    x.mma = (uint8_t)row;
    for (int tm = 2; tm <= 16 && tm <= bm; tm *= 2)
        for (int tn = 2; tn <= 16 && tn <= bn; tn *= 2) {
            if (!mma_spread(op, role, GS_MMA_ROLE_M, tm, &x) || !mma_spread(op, role, GS_MMA_ROLE_N, tn, &x)) continue;
            int64_t th = gs_etir_threads(op, &x);
            if (th < 32 || th > GS_COMPLETE_THREADS || !gs_mma_state_ok(op, &x, row)) continue;
            bool ok;
            double tx = predicted_hash(hw, op, &x, m, &ok, m ? state_key(&x) : 0);
            if (ok && tx < *t) {
                *t = tx;
                *out = x;
            }
        }
    return isfinite(*t);
}

/* Predicted time of a (possibly partial) state, for the model policy:
 * INFINITY when its completion fails the check (*ok false, when given). The
 * completion is gs_complete's, checked and estimated with one plan
 * (gs_estimate_checked). The memo keeps a failed completion as -1. */
static double predicted_ok(const gs_hw *hw, const gs_op *op, const gs_etir *e, memo *m, bool *ok);

/* The level-1 state a level-2 state e enters by caching, for the model
 * policy: a block tile is worth its best completion, and GS_COMPLETE_TRIES
 * are priced: the smallest thread tiles reaching GS_COMPLETE_THREADS
 * threads, then half as many threads with twice the work each. One thread
 * count alone priced a block tile at that count's occupancy: 64x256 on h100
 * gemm 4096^3 completed to 256 threads of 8x8 (1 block/SM, 3.80 ms) while
 * its 128 threads of 8x16 run 2 blocks/SM (2.996 ms, the exhaustive
 * optimum), so the walk never tiled there. The walk enters the entry it
 * priced (a level-1 state's price is its own completion's, memoised under
 * its hash). *t gets its price; false when no entry passes the check. */
static bool enter_best(const gs_hw *hw, const gs_op *op, const gs_etir *e, memo *m, gs_etir *out, double *t) {
    int lim = hw->max_threads_per_block < GS_COMPLETE_THREADS ? hw->max_threads_per_block : GS_COMPLETE_THREADS;
    bool any = false;
    *t = INFINITY;
    for (int i = 0; i < GS_COMPLETE_TRIES; i++) {
        gs_etir c;
        gs_action cache = {GS_ACT_CACHE, -1, 0};
        if (!gs_etir_apply(op, e, cache, lim >> i, &c)) continue;
        if (i > 0 && gs_etir_threads(op, &c) > lim >> i) break; /* no smaller thread count */
        bool ok;
        double ti = predicted_ok(hw, op, &c, m, &ok);
        if (ok && (!any || ti < *t)) {
            *t = ti;
            *out = c;
            any = true;
        }
    }
    return any;
}

/* The level-1 state a level-2 state e is worth, for the model policy: its
 * best plain entry (enter_best), or its tensor-core completion (complete_mma,
 * as a level-1 state: the walk goes on to its knobs) where that is faster.
 * *t gets the price, which is e's own (predicted_hash); false when neither
 * passes the check. The walk enters the state that set the price: entering
 * the plain entry of a block tile priced by its tensor-core completion left
 * the chain on FFMA thread tiles, where the mma row is not legal, so a walk
 * found the tensor cores only where a sample happened to pool them (h100's
 * bf16 NCHW 3x3 C=K=256 14^2 b128: FFMA's 0.83 ms at seed 1, mma's 0.29 ms
 * at seed 4). */
static bool enter_priced(const gs_hw *hw, const gs_op *op, const gs_etir *e, memo *m, gs_etir *out, double *t) {
    bool done = enter_best(hw, op, e, m, out, t);
    gs_etir c2 = *e, cm;
    double tm;
    int lim = hw->max_threads_per_block < GS_COMPLETE_THREADS ? hw->max_threads_per_block : GS_COMPLETE_THREADS;
    if ((done || gs_etir_apply(op, e, (gs_action){GS_ACT_CACHE, -1, 0}, lim, &c2)) &&
        complete_mma(hw, op, done ? out : &c2, m, &cm, &tm) && tm < *t) {
        *t = tm;
        *out = cm;
        out->level = 1;
        done = true;
    }
    return done;
}

static double predicted_hash(const gs_hw *hw, const gs_op *op, const gs_etir *e, memo *m, bool *ok, uint64_t eh) {
    if (m) {
        double v;
        if (memo_find(m, eh, &v)) {
            if (ok) *ok = !(v < 0);
            return v < 0 ? INFINITY : v;
        }
    }
    double t = INFINITY;
    bool done = false;
    if (e->level == 2) {
        gs_etir entry;
        done = enter_priced(hw, op, e, m, &entry, &t);
    } else {
        gs_etir c = *e;
        c.level = 0;
        gs_estimate est;
        done = gs_estimate_checked(hw, op, &c, m ? m->wf : NULL, &est);
        if (done) t = est.time_s;
    }
    if (ok) *ok = done;
    if (m) memo_put(m, eh, done ? t : -1);
    return t;
}

/* A state's key in m: a level-1 state is priced as its completion (the
 * same tiles at level 0: predicted_hash), so both share the entry of the
 * level-0 state; the walk's transitions, its pools' completions, the
 * polish's seeds and neighbours and the ranking meet one price. (Apart
 * for the audit, which checks that the sharing changes no result.) */
static uint64_t memo_key(const memo *m, const gs_etir *e) {
    if (e->level != 1 || m->apart) return state_key(e);
    gs_etir c = *e;
    c.level = 0;
    return state_key(&c);
}

static double predicted_ok(const gs_hw *hw, const gs_op *op, const gs_etir *e, memo *m, bool *ok) {
    return predicted_hash(hw, op, e, m, ok, m ? memo_key(m, e) : 0);
}

static double predicted(const gs_hw *hw, const gs_op *op, const gs_etir *e, memo *m) {
    return predicted_ok(hw, op, e, m, NULL);
}

/* cur_ok: whether e's completion passes the check (the model policy's
 * caller knows it from t_cur's prediction). */
static double benefit_ex(const gs_hw *hw, const gs_op *op, const gs_etir *e, gs_action a, gs_policy pol,
                         gs_etir *next, memo *m, double t_cur, bool cur_ok) {
    int lim = hw->max_threads_per_block < GS_COMPLETE_THREADS ? hw->max_threads_per_block : GS_COMPLETE_THREADS;
    if (!gs_etir_apply(op, e, a, lim, next)) return 0;
    double t_entry;
    /* the model policy caches a block tile into the entry it priced */
    if (pol == GS_POLICY_MODEL && a.kind == GS_ACT_CACHE && e->level == 2 && !enter_priced(hw, op, e, m, next, &t_entry))
        return 0;
    if (pol == GS_POLICY_MODEL && !isnan(t_cur) && next->level != 2) {
        /* below level 2 a state and its completion (the same tiles, level 0)
         * pass or fail the memory check together, so the prediction's check
         * is the transition's: caching from level 1 completes the current
         * state itself */
        if (a.kind == GS_ACT_CACHE) return cur_ok ? GS_MODEL_CACHE_WEIGHT : 0;
        bool ok;
        double t1 = predicted_ok(hw, op, next, m, &ok);
        if (!ok) return 0;
        if (!isfinite(t1)) return 1e-3;
        if (!isfinite(t_cur)) return 1.0;
        return sharpen(t_cur / t1);
    }
    /* the memory check: a state over any capacity has probability 0 (its
     * result remembered: a check is a fact of the state) */
    gs_plan plan;
    if (m && !m->apart) {
        uint64_t k = state_key(next) | 1u;
        check_entry *ce = &m->checks[(k >> 7) & (CHECK_SLOTS - 1)];
        if (ce->key != k) *ce = (check_entry){k, gs_hw_check_plan(hw, op, next, m->wf, &plan)};
        if (!ce->ok) return 0;
    } else if (!gs_hw_check_plan(hw, op, next, m ? m->wf : NULL, &plan)) {
        return 0;
    }
    if (pol == GS_POLICY_MODEL) {
        /* Model policy: every benefit is a predicted speedup t(e)/t(e'),
         * raised to GS_MODEL_SHARPNESS to sharpen the roulette. Caching does
         * not change the completed state's prediction (a speedup of 1), so it
         * gets the constant GS_MODEL_CACHE_WEIGHT times the paper's annealing
         * multiplier: rarely taken while tiling still pays, likely later. */
        if (a.kind == GS_ACT_CACHE) return GS_MODEL_CACHE_WEIGHT;
        double t0 = isnan(t_cur) ? predicted(hw, op, e, m) : t_cur, t1 = predicted(hw, op, next, m);
        if (!isfinite(t1)) return 1e-3; /* legal but not yet completable: keep it reachable */
        if (!isfinite(t0)) return 1.0;
        double r = t0 / t1;
        return sharpen(r);
    }
    switch (a.kind) {
    case GS_ACT_STAGES:
    case GS_ACT_RASTER:
    case GS_ACT_LANES:
    case GS_ACT_SPLITK:
    case GS_ACT_MMA: {
        /* The paper has no formula for pipelining, block order or a reduce
         * split (in a block or across blocks): their
         * benefit is the predicted speedup t(e)/t(e') under every policy
         * (unsharpened here, so the paper's formulas still steer tiling). */
        double t0 = predicted(hw, op, e, m), t1 = predicted(hw, op, next, m);
        if (!isfinite(t1)) return 1e-3;
        if (!isfinite(t0)) return 1.0;
        return t0 / t1;
    }
    case GS_ACT_TILE:
    case GS_ACT_INVTILE:
        return gs_benefit_tiling(op, e, next, e->level, pol);
    case GS_ACT_VTHREAD:
        return gs_benefit_vthread(hw, op, e, a.axis, a.value);
    case GS_ACT_CACHE:
        return gs_benefit_caching(hw, op, e, e->level);
    default:
        return 0;
    }
}

double gs_action_benefit(const gs_hw *hw, const gs_op *op, const gs_etir *e, gs_action a, gs_policy pol,
                         gs_etir *next) {
    return benefit_ex(hw, op, e, a, pol, next, NULL, NAN, false);
}

/* ---- candidate pool: dedup by hash, arena storage --------------------------------- */
typedef struct pool {
    gs_etir *items;
    int64_t n, cap;
    uint64_t *keys; /* open addressing; 0 = empty */
    int64_t kcap;
    struct pool *knobbed; /* where complete_knobbed's states of the walk go (NULL: nowhere) */
} pool;

static bool pool_init(pool *p, gs_arena *ar, int64_t cap) {
    p->n = 0;
    p->cap = cap;
    p->knobbed = NULL;
    p->kcap = 64;
    while (p->kcap < 2 * cap) p->kcap *= 2;
    p->items = gs_arena_alloc_raw(ar, (size_t)cap * sizeof *p->items); /* written before read (n) */
    p->keys = gs_arena_alloc(ar, (size_t)p->kcap * sizeof *p->keys);
    return p->items && p->keys;
}

/* Insert a complete state; false if already present or full. */
static bool pool_add(pool *p, const gs_etir *e) {
    uint64_t h = state_key(e) | 1u;
    int64_t i = (int64_t)(h & (uint64_t)(p->kcap - 1));
    while (p->keys[i]) {
        if (p->keys[i] == h) return false; /* 64-bit hash equality taken as identity */
        i = (i + 1) & (p->kcap - 1);
    }
    if (p->n >= p->cap) return false;
    p->keys[i] = h;
    p->items[p->n++] = *e;
    return true;
}

/* m: the model policy's memo (NULL for the other policies), with which a
 * level-2 state also enters the pool completed as enter_best prices it;
 * mm: the walk's memo, for the tensor-core completion (complete_mma). */
static void pool_add_completed(pool *p, const gs_hw *hw, const gs_op *op, const gs_etir *e, memo *m, memo *mm) {
    gs_etir c, k;
    double t;
    if (m && e->level == 2 && enter_best(hw, op, e, m, &c, &t)) {
        c.level = 0;
        pool_add(p, &c);
    }
    if (e->level == 2) { /* the tensor-core completion too (complete_mma) */
        gs_etir c0 = *e;
        int lim = hw->max_threads_per_block < GS_COMPLETE_THREADS ? hw->max_threads_per_block : GS_COMPLETE_THREADS;
        if (gs_etir_apply(op, e, (gs_action){GS_ACT_CACHE, -1, 0}, lim, &c0) && complete_mma(hw, op, &c0, mm, &k, &t))
            pool_add(p, &k);
    }
    /* gs_complete, its check read from the memo: the completion passes the
     * check exactly when it has a price (predicted_hash), which the walk has
     * mostly met already and the ranking needs anyway */
    c = *e;
    bool ok = false;
    if (mm->apart) {
        ok = gs_complete(hw, op, e, &c);
    } else {
        int lim = hw->max_threads_per_block < GS_COMPLETE_THREADS ? hw->max_threads_per_block : GS_COMPLETE_THREADS;
        if (e->level == 2 && !gs_etir_apply(op, e, (gs_action){GS_ACT_CACHE, -1, 0}, lim, &c)) return;
        c.level = 0;
        predicted_ok(hw, op, &c, mm, &ok);
    }
    if (!ok) return;
    pool_add(p, &c);
    /* the knobbed completion's check read from its price too: the ranking
     * and the knobbed seeds price every state of that pool anyway */
    if (p->knobbed && e->level == 2 && complete_knobbed(hw, op, &c, &k) &&
        (mm->apart ? gs_hw_check(hw, op, &k) : (predicted_ok(hw, op, &k, mm, &ok), ok)))
        pool_add(p->knobbed, &k);
}

/* ---- one Markov chain (Algorithm 1 with Algorithm 2 inside) ------------------------- */
#define MAX_ACTS 128

static int64_t run_chain(const gs_hw *hw, const gs_op *op, const gs_construct_opts *o, gs_pcg32 *rng, pool *p,
                         memo *mm) {
    gs_etir e, nexts[MAX_ACTS];
    gs_action acts[MAX_ACTS];
    double w[MAX_ACTS];
    gs_etir_init(op, &e);
    double T = o->t_start;
    int64_t t = 0;
    while (T > o->t_threshold && e.level != 0) {
        /* Algorithm 2: benefits, memory check, cache multiplier, normalise */
        int n = gs_actions_enumerate(op, &e, acts, MAX_ACTS);
        bool cur_ok = false;
        double sum = 0, t_cur = o->policy == GS_POLICY_MODEL ? predicted_ok(hw, op, &e, mm, &cur_ok) : NAN;
        for (int i = 0; i < n; i++) {
            w[i] = benefit_ex(hw, op, &e, acts[i], o->policy, &nexts[i], mm, t_cur, cur_ok);
            if (acts[i].kind == GS_ACT_CACHE) w[i] *= gs_cache_multiplier((int)t);
            if (!(w[i] > 0) || !isfinite(w[i])) w[i] = 0;
            sum += w[i];
        }
        if (sum <= 0) break; /* dead end: no legal move */
        double u = gs_pcg32_double(rng) * sum, c = 0;
        int pick = n - 1;
        for (int i = 0; i < n; i++) {
            c += w[i];
            if (u < c && w[i] > 0) {
                pick = i;
                break;
            }
        }
        while (pick > 0 && w[pick] <= 0) pick--;
        /* Algorithm 1: sample into the pool, move, cool */
        if (gs_pcg32_double(rng) < gs_append_probability(T))
            pool_add_completed(p, hw, op, &nexts[pick], o->policy == GS_POLICY_MODEL ? mm : NULL, mm);
        e = nexts[pick];
        T /= 2;
        t++;
    }
    pool_add_completed(p, hw, op, &e, o->policy == GS_POLICY_MODEL ? mm : NULL, mm); /* Algorithm 1 returns the final e */
    return t;
}

/* ---- ranked top-k -------------------------------------------------------------------- */
/* Insert a complete state into the result's sorted top-k (stable for ties). */
static void rank_insert(gs_result *r, int top_k, const gs_etir *e, const gs_estimate *est) {
    int pos = r->n;
    while (pos > 0 && est->time_s < r->est[pos - 1].time_s) pos--;
    if (pos >= top_k) return;
    int last = r->n < top_k ? r->n : top_k - 1;
    for (int j = last; j > pos; j--) {
        r->est[j] = r->est[j - 1];
        r->cand[j] = r->cand[j - 1];
    }
    r->est[pos] = *est;
    r->cand[pos] = *e;
    if (r->n < top_k) r->n++;
}

/* The user allowed atomic split-K meets: the ranked candidates that split
 * take the flag (their kernels then meet by atomics where the combine is a
 * sum), are priced again and re-ranked. The walk priced the ordered meet,
 * which costs at least as much, so no state it kept is worse for it. */
static void allow_split_atomic(const gs_hw *hw, const gs_op *op, gs_wf_memo *wf, gs_result *r) {
    gs_etir cand[GS_MAX_TOP];
    gs_estimate est[GS_MAX_TOP];
    int n = r->n;
    for (int i = 0; i < n; i++) {
        cand[i] = r->cand[i];
        est[i] = r->est[i];
        if (cand[i].splitk > 1 && op->combine != GS_COMBINE_MAX && op->combine != GS_COMBINE_MIN) { /* no float atomic max/min */
            cand[i].splitk_atomic = 1;
            gs_estimate_etir_memo(hw, op, &cand[i], 0, wf, &est[i]);
        }
    }
    r->n = 0;
    for (int i = 0; i < n; i++) rank_insert(r, n, &cand[i], &est[i]);
}

/* Every aligned state: power-of-two block tiles up to the next power of two
 * of each extent; for each block tile that passes the level-2 check (shared
 * memory, and some thread tile can fit), every thread tile T1 | T2 with
 * acc <= the accumulator cap and every vthread count V | T1, and every
 * pipeline depth, raster and reduce split that passes the check. Each valid
 * state goes to fn; see construct.h. */
/* The time budget of an enumeration: the clock is read every 256 states
 * looked at, valid or not (a space can hold long runs of invalid ones). */
typedef struct space_budget {
    double deadline; /* gs_now_s() past which it stops; 0: none */
    uint32_t looked;
} space_budget;

static bool budget_over(space_budget *b) {
    return b->deadline > 0 && (++b->looked & 255) == 0 && gs_now_s() > b->deadline;
}

/* The knobs' odometer of one tile state, rows nested by space_nest. */
typedef struct space_knobs {
    const gs_hw *hw;
    const gs_op *op;
    int64_t cap;
    gs_space_fn fn;
    void *user;
    space_budget *budget;
    int64_t visited;
    bool base_ok;               /* the state with every knob off passes the check */
    int order[GS_KNOB_COUNT];   /* the enumerated rows, outermost first */
    int n;
} space_knobs;

/* The next stored value of a row in the space: doubling rows double. */
static int knob_next(gs_knob_id k, int v) { return gs_knobs[k].moves == GS_KNOB_DOUBLE_HALF ? v * 2 : v + 1; }

/* Every legal value of the rows order[i..] (each row's legality grows
 * monotone with its value, so the first illegal one ends it; split-K's own
 * resource rule, gs_hw_splitk_ok, too); 0 to go on, 1 when fn or the cap
 * stopped it, 2 when the budget did. Rows are off again on return 0. */
static int space_knob_values(space_knobs *w, gs_etir *e, int i) {
    if (i == w->n) {
        if (budget_over(w->budget)) return 2;
        bool any_on = !w->base_ok;
        for (int k = 0; k < GS_KNOB_COUNT; k++) any_on |= gs_knob_get(e, k) != gs_knobs[k].off;
        if (any_on && !gs_hw_check(w->hw, w->op, e)) return 0;
        w->visited++;
        return !w->fn(e, w->user) || (w->cap > 0 && w->visited >= w->cap) ? 1 : 0;
    }
    int k = w->order[i];
    for (int v = gs_knobs[k].lo; v <= gs_knobs[k].hi; v = knob_next(k, v)) {
        if (!gs_knob_ok(w->op, e, k, v)) {
            if (k == GS_KNOB_MMA) continue; /* the rows' legality is not monotone */
            break;
        }
        gs_knob_set(e, k, v);
        if (k == GS_KNOB_SPLITK && v > 1 && !gs_hw_splitk_ok(w->hw, w->op, e)) break;
        int r = space_knob_values(w, e, i + 1);
        if (r) return r;
    }
    gs_knob_set(e, k, gs_knobs[k].off);
    return 0;
}

int64_t gs_space_enumerate(const gs_hw *hw, const gs_op *op, int64_t cap, double max_ms, gs_space_fn fn, void *user,
                           bool *stopped) {
    space_budget budget = {max_ms > 0 ? gs_now_s() + max_ms * 1e-3 : 0, 0};
    space_knobs w = {hw, op, cap, fn, user, &budget, 0, false, {0}, 0};
    for (int nest = 0; nest < GS_KNOB_COUNT; nest++)
        for (int k = 0; k < GS_KNOB_COUNT; k++)
            if (gs_knobs[k].space_nest == nest) w.order[w.n++] = k;
    int32_t t2max[GS_MAX_AXES];
    for (int d = 0; d < op->naxes; d++) t2max[d] = gs_etir_max_tile(op, d);
    gs_etir e;
    gs_etir_init(op, &e);
    if (stopped) *stopped = false;
    /* outer odometer over block tiles */
    for (;;) {
        if (budget_over(&budget)) goto over;
        e.level = 2;
        for (int d = 0; d < op->naxes; d++) {
            e.tile[d].thread = 1;
            e.V[d] = 1;
        }
        if (gs_hw_check(hw, op, &e)) {
            /* middle odometer over thread tiles; validity does not depend on
             * the vthread split, so invalid thread tiles skip all of theirs.
             * It does depend on the reduce lanes (more threads, fewer copy
             * units each, fewer registers): a thread tile is skipped only
             * when no number of lanes makes it valid. */
            e.level = 0;
            for (;;) {
                if (budget_over(&budget)) goto over;
                for (int d = 0; d < op->naxes; d++) e.V[d] = 1;
                w.base_ok = gs_hw_check(hw, op, &e);
                bool any_ok = w.base_ok;
                for (int lg = 1; !any_ok && gs_knob_ok(op, &e, GS_KNOB_LANES, lg); lg++) {
                    gs_knob_set(&e, GS_KNOB_LANES, lg);
                    any_ok = gs_hw_check(hw, op, &e);
                }
                gs_knob_set(&e, GS_KNOB_LANES, gs_knobs[GS_KNOB_LANES].off);
                if (any_ok) {
                    for (;;) { /* inner odometer over vthreads */
                        /* innermost: the knobs */
                        int r = space_knob_values(&w, &e, 0);
                        if (r == 1) {
                            if (stopped) *stopped = true;
                            return w.visited;
                        }
                        if (r == 2) goto over;
                        int d = op->naxes - 1;
                        for (; d >= 0; d--) {
                            if (op->axes[d].kind != GS_AXIS_SPATIAL) continue;
                            if (e.V[d] <= e.tile[d].thread / 2) { e.V[d] *= 2; break; }
                            e.V[d] = 1;
                        }
                        if (d < 0) break;
                    }
                } else {
                    w.visited++;
                }
                int d = op->naxes - 1;
                for (; d >= 0; d--) {
                    if (op->axes[d].kind != GS_AXIS_SPATIAL) continue;
                    if (e.tile[d].thread <= e.tile[d].block / 2 && gs_etir_acc_regs(op, &e) * 2 <= 128) { e.tile[d].thread *= 2; break; }
                    e.tile[d].thread = 1;
                }
                if (d < 0) break;
            }
        }
        int d = op->naxes - 1;
        for (; d >= 0; d--) {
            if (e.tile[d].block <= t2max[d] / 2) { e.tile[d].block *= 2; break; } /* t2max may be 2^30 */
            e.tile[d].block = 1;
        }
        if (d < 0) break;
    }
    return w.visited;
over:
    if (stopped) *stopped = true;
    return w.visited;
}

/* ---- exhaustive and random baselines ------------------------------------------------ */
#define EXHAUSTIVE_CAP 20000000LL

typedef struct exhaustive_ctx {
    const gs_hw *hw;
    const gs_op *op;
    int top_k;
    gs_wf_memo *wf;
    gs_result *r;
} exhaustive_ctx;

static bool exhaustive_visit(const gs_etir *e, void *user) {
    exhaustive_ctx *x = user;
    gs_estimate est;
    gs_estimate_etir_memo(x->hw, x->op, e, 0, x->wf, &est);
    x->r->evaluated++;
    rank_insert(x->r, x->top_k, e, &est);
    return true;
}

/* The whole space (gs_space_enumerate), estimated as it is met; only the
 * top-k is kept, so memory stays small. At most EXHAUSTIVE_CAP states are
 * visited, within max_ms milliseconds when it is > 0; r->capped says when
 * the cap or the budget cut the enumeration short. */
static void run_exhaustive(const gs_hw *hw, const gs_op *op, int top_k, double max_ms, gs_wf_memo *wf,
                           gs_result *r) {
    exhaustive_ctx x = {hw, op, top_k, wf, r};
    bool stopped = false;
    r->steps = gs_space_enumerate(hw, op, EXHAUSTIVE_CAP, max_ms, exhaustive_visit, &x, &stopped);
    r->capped = stopped;
}

/* One draw from the aligned space: every block-tile, thread-tile and vthread
 * exponent, stage count, raster and reduce split uniform within its parent's
 * bound. True when the state passes the check. */
bool gs_space_draw(const gs_hw *hw, const gs_op *op, gs_pcg32 *rng, gs_etir *out) {
    gs_etir e;
    gs_etir_init(op, &e);
    e.level = 0;
    for (int d = 0; d < op->naxes; d++) {
        int32_t mx = gs_etir_max_tile(op, d);
        int lg = 0;
        while ((1 << lg) < mx) lg++;
        e.tile[d].block = 1 << gs_pcg32_bounded(rng, (uint32_t)lg + 1);
        if (op->axes[d].kind == GS_AXIS_SPATIAL) {
            int l2 = 0;
            while ((1 << l2) < e.tile[d].block) l2++;
            e.tile[d].thread = 1 << gs_pcg32_bounded(rng, (uint32_t)l2 + 1);
            int l1 = 0;
            while ((1 << l1) < e.tile[d].thread) l1++;
            e.V[d] = 1 << gs_pcg32_bounded(rng, (uint32_t)l1 + 1);
        }
    }
    /* each walked knob uniform over its space values, off where illegal
     * (rows that need a reduce axis draw nothing without one) */
    bool reduce = gs_etir_splitk_axis(op) >= 0;
    for (int k = 0; k < GS_KNOB_COUNT; k++) {
        const gs_knob *r = &gs_knobs[k];
        if (r->moves == GS_KNOB_NOT_WALKED || (r->needs_reduce && !reduce)) continue;
        int nv = 0;
        for (int v = r->lo; v <= r->hi; v = knob_next(k, v)) nv++;
        int v = r->lo;
        for (uint32_t i = gs_pcg32_bounded(rng, (uint32_t)nv); i > 0; i--) v = knob_next(k, v);
        gs_knob_set(&e, k, gs_knob_ok(op, &e, k, v) ? v : r->off);
    }
    *out = e;
    return gs_hw_check(hw, op, &e);
}

static void run_random(const gs_hw *hw, const gs_op *op, gs_pcg32 *rng, pool *p, int64_t budget, int64_t *steps) {
    /* the same aligned space, as many draws as the walk's steps */
    for (int64_t i = 0; i < budget; i++) {
        gs_etir e;
        if (gs_space_draw(hw, op, rng, &e)) pool_add(p, &e);
    }
    *steps = budget;
}

/* ---- polish: steepest descent under the estimate ----------------------------------
 * The walk samples a diverse pool; the best pooled states are then driven to
 * a local optimum of the analytic estimate over the complete-state
 * neighbourhood (each tile, thread tile and vthread count doubled or halved,
 * and block+thread tile scaled together so the thread count is kept). This
 * is the fixed point the paper's value iteration argues the walk converges
 * to, reached deterministically instead of by more sampling. */
/* The polish's trade of reduce lanes for split-K blocks (lanes halved, the
 * split doubled, and back), in a second pass from the first pass's optimum
 * (polish below): on. It takes h100's gemm M=128 N=768 K=3072 transB=1 from
 * 1.25x the exhaustive optimum to 1.04x (issue 22 item 7); over the 1463
 * (profile, operator) pairs of make bench-construct 10 picks get better (by
 * up to 20 %) and none worse. 0 turns it off (docs/CONSTRUCTION.md). */
#ifndef GS_POLISH_TRADE
#define GS_POLISH_TRADE 1
#endif

/* The raster group lowered until it is shorter than the grid's rows along
 * the swizzled axis (the check's rule), after a move that shrank them. */
static void clamp_raster(const gs_op *op, gs_etir *x) {
    int rx = -1, seen = 0;
    for (int a = op->naxes - 1; a >= 0 && rx < 0; a--)
        if (op->axes[a].kind == GS_AXIS_SPATIAL && ++seen == 2) rx = a;
    if (rx < 0 || x->tile[rx].block < 1) return;
    int64_t nbx = (op->axes[rx].extent + x->tile[rx].block - 1) / x->tile[rx].block;
    while (x->raster > 0 && (1LL << (x->raster - 1)) >= nbx) x->raster--;
}

/* Whether every axis of e holds 1 <= V <= thread <= block (what
 * push_clamped keeps). */
static bool clamped(const gs_op *op, const gs_etir *e) {
    for (int d = 0; d < op->naxes; d++)
        if (e->V[d] < 1 || e->V[d] > e->tile[d].thread || e->tile[d].thread > e->tile[d].block) return false;
    return true;
}

/* x, a move of a clamped state (clamped(): the polish's states and every
 * state pushed here) on the axes of moved (bit d: axis d) only, into
 * out[*n] with the inner tiles kept inside the outer ones; the other axes
 * hold already. */
static bool push_clamped(gs_etir x, unsigned moved, gs_etir *out, int *n, int cap) {
    for (unsigned m = moved; m; m &= m - 1) {
        const int d = __builtin_ctz(m);
        if (x.tile[d].block < 1 || x.tile[d].thread < 1 || x.V[d] < 1) return false;
        if (x.tile[d].thread > x.tile[d].block) x.tile[d].thread = x.tile[d].block;
        if (x.V[d] > x.tile[d].thread) x.V[d] = x.tile[d].thread;
    }
    /* no gs_etir_wellformed here: the polish prices every neighbour through
     * the check, whose first rule it is, so a malformed one is priced
     * INFINITY (remembered as a failed state) and never taken */
    if (*n >= cap) return false;
    out[(*n)++] = x;
    return true;
}

/* x times 2^k (k may be negative); 0, which no state accepts, past int32
 * (tiles reach 2^30 on extents up to the grammar's 2^31-1). */
static int32_t scale2(int32_t x, int k) {
    int64_t v = k >= 0 ? (int64_t)x << k : (int64_t)x >> -k;
    return v > INT32_MAX ? 0 : (int32_t)v;
}

static int neighbours(const gs_op *op, const gs_etir *e, gs_etir *out, int cap, bool trade) {
    int n = 0;
    /* every axis checked and clamped when e itself is not clamped (a state
     * handed to gs_polish) */
    const unsigned all = clamped(op, e) ? 0 : (1u << op->naxes) - 1;
    /* single-axis moves: (block, thread, vthread) factor exponents */
    /* exponents of two: (block, thread, vthread); +-2 jumps cross the plateaus
     * that thread-count and occupancy steps put in the estimate */
    static const int moves[][3] = {{1, 0, 0},  {-1, 0, 0}, {0, 1, 0},  {0, -1, 0}, {0, 0, 1},  {0, 0, -1},
                                   {1, 1, 0},  {-1, -1, 0}, {2, 0, 0}, {-2, 0, 0}, {0, 2, 0}, {0, -2, 0}};
    enum { NMOVES = (int)(sizeof moves / sizeof moves[0]) };
    for (int d = 0; d < op->naxes; d++) {
        bool sp = op->axes[d].kind == GS_AXIS_SPATIAL;
        for (int m = 0; m < NMOVES; m++) {
            if (!sp && (moves[m][1] || moves[m][2])) continue;
            gs_etir x = *e;
            x.tile[d].block = scale2(x.tile[d].block, moves[m][0]);
            x.tile[d].thread = scale2(x.tile[d].thread, moves[m][1]);
            x.V[d] = scale2(x.V[d], moves[m][2]);
            push_clamped(x, all | 1u << d, out, &n, cap);
        }
    }
    /* the knobs: one step down and one up of each walked row (a stage, a
     * raster group twice or half as tall, twice or half the lanes or the
     * split-K blocks) */
    for (int dir = -1; dir <= 1; dir += 2)
        for (int k = 0; k < GS_KNOB_COUNT; k++) {
            const gs_knob *r = &gs_knobs[k];
            if (r->moves == GS_KNOB_NOT_WALKED) continue;
            int cur = gs_knob_get(e, k);
            int v = r->moves == GS_KNOB_DOUBLE_HALF ? (dir > 0 ? cur * 2 : cur / 2) : cur + dir;
            if (v < r->lo || v > r->hi) continue;
            /* the mma row: the next legal row that way (none for an operator
             * without a tensor-core row: the neighbours are as before) */
            while (k == GS_KNOB_MMA && v >= r->lo && v <= r->hi && !gs_knob_ok(op, e, k, v)) v += dir;
            if (v < r->lo || v > r->hi) continue;
            gs_etir x = *e;
            gs_knob_set(&x, k, v);
            push_clamped(x, all, out, &n, cap);
            /* the row with a stage more or less: a row's fragments and a
             * pipeline's buffers share the registers and shared memory, so
             * either move alone can lose where both win (a100's f16 1x1 NCHW
             * stride-2 C=512 28^2 b128 stopped at mma1 with one stage, 1.19x
             * the same tiles at mma4 with two) */
            if (k == GS_KNOB_MMA)
                for (int sd = -1; sd <= 1; sd += 2) {
                    int st = gs_knob_get(e, GS_KNOB_STAGES) + sd;
                    if (st < gs_knobs[GS_KNOB_STAGES].lo || st > gs_knobs[GS_KNOB_STAGES].hi) continue;
                    gs_etir y = x;
                    gs_knob_set(&y, GS_KNOB_STAGES, st);
                    push_clamped(y, all, out, &n, cap);
                }
            if (k == GS_KNOB_SPLITK) /* split-K's blocks for spatial blocks: the grid and the threads kept */
                for (int d = 0; d < op->naxes; d++) {
                    if (op->axes[d].kind != GS_AXIS_SPATIAL) continue;
                    x = *e;
                    gs_knob_set(&x, k, v);
                    x.tile[d].block = scale2(x.tile[d].block, dir);
                    x.tile[d].thread = scale2(x.tile[d].thread, dir);
                    push_clamped(x, all | 1u << d, out, &n, cap);
                }
            if (k != GS_KNOB_LANES) continue;
            /* lanes for split-K blocks: the reduce's parallelism kept, moved
             * between the block and the grid (the trade pass only) */
            if (trade) {
                int sk = gs_knob_get(e, GS_KNOB_SPLITK), sv = dir > 0 ? sk / 2 : sk * 2;
                if (sv >= gs_knobs[GS_KNOB_SPLITK].lo && sv <= gs_knobs[GS_KNOB_SPLITK].hi && sv != sk) {
                    x = *e;
                    gs_knob_set(&x, k, v);
                    gs_knob_set(&x, GS_KNOB_SPLITK, sv);
                    push_clamped(x, all, out, &n, cap);
                    /* ... with a spatial block tile scaled against the
                     * split (its threads with it): the threads and the grid
                     * kept, the raster group clamped to the new grid. Split-K
                     * takes at most two blocks per SM without it, so a small
                     * block tile reaches the split only this way (v100's gemm
                     * M=128 N=768 K=3072 transB=1 stopped at m:16 k:32 g4,
                     * 1.33x the optimum, whose m:32 g2 sk2 polishes to it) */
                    for (int d = 0; d < op->naxes; d++) {
                        if (op->axes[d].kind != GS_AXIS_SPATIAL) continue;
                        gs_etir y = x;
                        y.tile[d].block = scale2(y.tile[d].block, -dir);
                        clamp_raster(op, &y);
                        push_clamped(y, all | 1u << d, out, &n, cap);
                    }
                }
            }
            /* the lanes and their reduce tile together: each lane's share of
             * the tile (its registers, its loads) kept. Alone, each half of
             * the move can fail the register check or slow the state down,
             * so long reductions (k:8192 g512) were out of the polish's
             * reach from a short tile (k:1024 g32) */
            int ga = gs_etir_lanes_axis(op);
            if (ga >= 0) {
                x = *e;
                gs_knob_set(&x, k, v);
                x.tile[ga].block = scale2(x.tile[ga].block, dir);
                push_clamped(x, all | 1u << ga, out, &n, cap);
            }
            /* lanes for spatial threads: the thread count kept */
            for (int d = 0; d < op->naxes; d++) {
                if (op->axes[d].kind != GS_AXIS_SPATIAL) continue;
                x = *e;
                gs_knob_set(&x, k, v);
                x.tile[d].thread = scale2(x.tile[d].thread, dir);
                push_clamped(x, all | 1u << d, out, &n, cap);
            }
        }
    /* two-axis exchanges: shift a factor of two from one axis to another at
     * the block level or the thread level (keeps the tile's volume) */
    for (int d1 = 0; d1 < op->naxes; d1++)
        for (int d2 = 0; d2 < op->naxes; d2++) {
            if (d1 == d2) continue;
            gs_etir x = *e;
            x.tile[d1].block = scale2(x.tile[d1].block, 1);
            x.tile[d2].block /= 2;
            push_clamped(x, all | 1u << d1 | 1u << d2, out, &n, cap);
            if (op->axes[d1].kind == GS_AXIS_SPATIAL && op->axes[d2].kind == GS_AXIS_SPATIAL) {
                x = *e;
                x.tile[d1].thread = scale2(x.tile[d1].thread, 1);
                x.tile[d2].thread /= 2;
                push_clamped(x, all | 1u << d1 | 1u << d2, out, &n, cap);
                /* ... with the doubled tile in twice the vthreads (the same
                 * per-chunk run: alone, each half of the move can be worse) */
                x.V[d1] = scale2(x.V[d1], 1);
                push_clamped(x, all | 1u << d1 | 1u << d2, out, &n, cap);
            }
        }
    return n;
}

/* What the polishes of a construction did: the neighbours priced (or found
 * in the memo), those skipped by their floor, and with the audit (below)
 * the floors found above a price. */
typedef struct polish_count {
    int64_t evals, pruned, violations;
} polish_count;

/* Whether a neighbour (list index i) whose price is at least f can be
 * passed over: above the move's limit lim, above the best price tp met, or
 * equal to it behind the pick (the list's first least price wins). */
static bool beyond(double f, double lim, double tp, int pick, int i) {
    return f > lim || f > tp || (f == tp && pick >= 0 && i > pick);
}

/* A neighbour's price as predicted_hash gives it (not in the memo: eh its
 * key), in gs_estimate_checked's three steps (the check and its plan's
 * shape, the plan's finish, the estimate) and with the same memo entry;
 * unless the floor of the shaped plan shows it beyond the best: then false,
 * the floor kept in the memo's floors and no price. audit: priced all the
 * same, *cut set, *floor the floor (0 when not computed). */
static bool price_unless_beyond(const gs_hw *hw, const gs_op *op, const gs_etir *e, memo *m, uint64_t eh, double lim,
                                double tp, int pick, int i, bool audit, bool *cut, double *floor, double *t) {
    double v;
    *cut = false;
    *floor = 0;
    if (memo_find(m, eh, &v)) { /* a duplicate neighbour priced just before */
        *t = v < 0 ? INFINITY : v;
        return true;
    }
    gs_etir c = *e;
    c.level = 0;
    gs_plan p;
    bool ok = gs_hw_check_plan(hw, op, &c, m->wf, &p);
    *t = INFINITY;
    if (ok) {
        *floor = gs_estimate_floor_plan_memo(hw, op, &c, &p, m->wf, audit ? INFINITY : tp < lim ? tp : lim);
        *cut = beyond(*floor, lim, tp, pick, i);
        if (*cut && !audit) {
            floor_put(m, eh, *floor);
            return false;
        }
        gs_estimate est;
        gs_plan_finish_memo(hw, op, &c, m->wf, &p);
        gs_estimate_plan(hw, op, &c, &p, 0, NULL, m->wf, &est);
        *t = est.time_s;
    }
    memo_put(m, eh, ok ? *t : -1);
    return true;
}

/* The best neighbour's price tp and index *pick among n (hk: their keys, 0
 * for the visited), as a scan of the list in order would find them (the
 * first of the least prices), pricing fewer: memo hits first, then the rest
 * in order, each passed over when its floor (kept from an earlier move, or
 * its plan's) is beyond the best met. The move's limit lim is tcur within
 * its slack: a neighbour above it is never taken, so passing over it changes
 * no move. audit: price the passed over too and count the floors above
 * their prices. */
static double best_neighbour(const gs_hw *hw, const gs_op *op, const gs_etir *nb, int n, const uint64_t *hk,
                             memo *m, double lim, bool audit, polish_count *pc, int *pick) {
    int wait[POLISH_NB], nw = 0;
    double tp = INFINITY;
    *pick = -1;
    for (int i = 0; i < n; i++) {
        double v;
        if (!hk[i]) continue; /* visited */
        pc->evals++;
        if (!memo_find(m, hk[i], &v)) {
            wait[nw++] = i;
            continue;
        }
        v = v < 0 ? INFINITY : v;
        if (v < tp) {
            tp = v;
            *pick = i;
        }
    }
    for (int k = 0; k < nw; k++) {
        int i = wait[k];
        double t, f = 0, kept;
        const bool has = floor_find(m, hk[i], &kept);
        bool cut = has && beyond(kept, lim, tp, *pick, i);
        if (cut && !audit) {
            pc->pruned++;
            continue;
        }
        if (nb[i].level == 2 || cut) {
            t = predicted_hash(hw, op, &nb[i], m, NULL, hk[i]); /* INFINITY when over a limit */
            if (has) f = kept;
        } else if (!price_unless_beyond(hw, op, &nb[i], m, hk[i], lim, tp, *pick, i, audit, &cut, &f, &t)) {
            pc->pruned++;
            continue;
        }
        pc->pruned += cut;
        if (audit && f > t) pc->violations++;
        if (t < tp || (t == tp && *pick >= 0 && i < *pick)) {
            tp = t;
            *pick = i;
        }
    }
    return tp;
}

/* The polish's escape from a local optimum (on; 0 turns it off): every
 * neighbour composed with the reduce tile halved, on each reduce axis. The
 * reduce tile is the state's resource valve: halving it frees shared memory
 * and the copy's registers, so a bigger spatial tile, a longer thread tile
 * or more split-K blocks that fail the check or lose alone can pay with it.
 * Such pairs lie two moves from the polish's optima, each half worse or
 * over a limit alone (issue 22 item 7): h100's gemm M=16384 N=1024 K=32 stopped at
 * m:64/8 k:16, whose m:128/16 k:8 is 9 % faster (alone, m:128/16 exceeds the
 * registers and k:8 is 8 % slower); v100's gemm M=128 N=768 K=3072 stopped
 * at k:32 g4 sk2, whose k:16 g2 sk4 is 12 % faster. Where the operator has
 * a tensor-core row, every neighbour with the reduce tile doubled too: the
 * row fixes the k step, and a longer k tile takes more copy registers a
 * thread unless the block has more threads (h100's f16 NCHW 3x3 C=K=256 14^2
 * b128 stopped at n:64 c:8, 0.272 ms: c:16 alone exceeds the registers,
 * n:128 alone is 1.5 % slower, both 0.178 ms). Priced only where the pass
 * would stop, so a descent's path is unchanged up to its optimum. */
#ifndef GS_POLISH_ESCAPE
#define GS_POLISH_ESCAPE 1
#endif

/* The best unvisited compound of the escape from the n neighbours nb of a
 * local optimum into *out and its time *t, when it is below lim (tcur less
 * the strict improvement the pass asks of an escape); false when none is.
 * The compounds of each reduce axis in turn go through best_neighbour with
 * the limit min(lim, the best of the axes before), so each is passed over
 * when its floor shows it cannot be the escape taken: the first of the least
 * prices, as a scan pricing each one would find it. cand holds n states. */
static bool escape(const gs_hw *hw, const gs_op *op, const gs_etir *nb, int n, const uint64_t *seen, int nseen,
                   memo *m, double lim, bool audit, polish_count *pc, gs_etir *cand, uint64_t *hk, gs_etir *out,
                   double *t) {
    double tb = INFINITY;
    /* halved, then (where op's states can take a tensor-core row: takes_mma) doubled */
    int8_t role[GS_MAX_AXES];
    const int dirs = takes_mma(hw, op, role) ? 2 : 1;
    for (int d = 0; d < op->naxes; d++)
        for (int dir = 0; dir < dirs; dir++) {
            if (op->axes[d].kind == GS_AXIS_SPATIAL) continue;
            int nx = 0;
            for (int i = 0; i < n; i++) {
                if (!dir && nb[i].tile[d].block < 2) continue;
                gs_etir y = nb[i];
                y.tile[d].block = dir ? scale2(y.tile[d].block, 1) : y.tile[d].block / 2;
                if (!push_clamped(y, 1u << d, cand, &nx, n)) continue; /* nb[i] is clamped */
                uint64_t h = state_key(&cand[nx - 1]);
                bool visited = false;
                for (int j = 0; j < nseen && !visited; j++) visited = seen[j] == h;
                hk[nx - 1] = visited ? 0 : h | 1u;
            }
            int pick;
            double tp = best_neighbour(hw, op, cand, nx, hk, m, tb < lim ? tb : lim, audit, pc, &pick);
            if (pick >= 0 && tp < tb) { /* an earlier axis or direction wins a tie */
                tb = tp;
                *out = cand[pick];
            }
        }
    if (!(tb < lim)) return false;
    *t = tb;
    return true;
}

/* Steepest descent that may also cross plateaus: it moves to the best
 * unvisited neighbour while that is no worse than the current state (within
 * 0.2 %: ties
 * are common where thread counts or occupancy do not change), remembers the
 * best state met, and stops at a strict local optimum or after max_moves
 * (at most 32) moves. With trade, the neighbours include the trade of
 * lanes for split-K blocks, and the pass stops at once unless its first
 * move is a strict improvement. Where it would stop, it first tries the
 * escape (GS_POLISH_ESCAPE), and goes on from the escape's best compound
 * when that is a strict improvement. */
static void polish_pass(const gs_hw *hw, const gs_op *op, gs_etir *e, memo *m, int max_moves, polish_count *pc,
                        bool trade, bool audit) {
    enum { MAXIT = 32, NB = POLISH_NB };
    int maxit = max_moves < MAXIT ? max_moves : MAXIT;
    gs_etir cur = *e, *nb = m->scratch, *cand = m->scratch + NB; /* cand: the escape's compounds */
    uint64_t hk[NB], ck[NB];
    double tcur = predicted(hw, op, &cur, m), tbest = tcur;
    uint64_t seen[MAXIT + 1];
    /* the seen keys' top bytes as bits: a neighbour whose bit is clear was
     * not visited, and only one whose bit is set is looked for in seen
     * (most of a move's 100-250 neighbours are new) */
    uint64_t seen_bits[4] = {0, 0, 0, 0};
#define SEEN_BIT(h_) (seen_bits[(h_) >> 62] >> ((h_) >> 56 & 63) & 1)
#define SEEN_ADD(h_) (seen_bits[(h_) >> 62] |= 1ull << ((h_) >> 56 & 63))
    int nseen = 0;
    seen[nseen++] = state_key(&cur);
    SEEN_ADD(seen[0]);
    for (int iter = 0; iter < maxit; iter++) {
        int n = neighbours(op, &cur, nb, NB, trade), pick;
        for (int i = 0; i < n; i++) {
            uint64_t h = state_key(&nb[i]);
            bool visited = false;
            if (SEEN_BIT(h))
                for (int j = 0; j < nseen && !visited; j++) visited = seen[j] == h;
            hk[i] = visited ? 0 : h | 1u; /* (0: visited; the memo keys h | 1 too) */
        }
        double lim = tcur * (1 + 2e-3);
        double tp = best_neighbour(hw, op, nb, n, hk, m, lim, audit, pc, &pick);
        bool stuck = pick < 0 || !(tp <= lim); /* 0.2 % slack on plateaus */
        if (!stuck && trade && iter == 0 && !(tp < tcur * (1 - 1e-9))) stuck = true;
        gs_etir esc;
        if (stuck) {
            if (!GS_POLISH_ESCAPE ||
                !escape(hw, op, nb, n, seen, nseen, m, tcur * (1 - 1e-9), audit, pc, cand, ck, &esc, &tp))
                break;
        }
        cur = stuck ? esc : nb[pick];
        tcur = tp;
        seen[nseen++] = state_key(&cur);
        SEEN_ADD(seen[nseen - 1]);
        if (tcur < tbest * (1 - 1e-9)) {
            tbest = tcur;
            *e = cur;
        }
    }
#undef SEEN_BIT
#undef SEEN_ADD
}

/* The polish: a pass without the trade, then (GS_POLISH_TRADE) one with
 * it from the local optimum reached. The second pass only ever improves
 * on the first, and costs little when the trade does not pay (the optimum's
 * neighbours are in the memo from the first), whereas the trade among the
 * first pass's moves changed its path and lost elsewhere (rtx3090's gemm
 * M=128 N=768 K=3072 transB=1 went from 1.18x to 1.34x the exhaustive
 * optimum). */
#ifndef GS_POLISH_ROUNDS
#define GS_POLISH_ROUNDS 3
#endif
static void polish(const gs_hw *hw, const gs_op *op, gs_etir *e, memo *m, int max_moves, polish_count *pc, bool audit) {
    polish_pass(hw, op, e, m, max_moves, pc, false, audit);
    /* where the trade moved, both passes again from its optimum (at most
     * GS_POLISH_ROUNDS rounds): a trade pass stops on its wider plateaus
     * (v100's gemm M=128 N=768 K=3072 transB=1 from its m:16 k:32 g4 trap:
     * m:32 k:16 sk4 after one round, 1.12x the optimum, which a second
     * round reaches) */
    for (int r = 0; GS_POLISH_TRADE && r < GS_POLISH_ROUNDS; r++) {
        uint64_t before = state_key(e);
        polish_pass(hw, op, e, m, max_moves, pc, true, audit);
        if (state_key(e) == before || r + 1 == GS_POLISH_ROUNDS) break;
        polish_pass(hw, op, e, m, max_moves, pc, false, audit);
    }
}

/* gs_polish: polish() on its own, the n states sharing one memo (construct.h). */
int64_t gs_polish(const gs_hw *hw, const gs_op *op, gs_etir *e, int n, int max_moves, double *time_s) {
    gs_arena ar;
    gs_arena_init(&ar, 1 << 18);
    memo mm;
    polish_count pc = {0, 0, 0};
    if (!memo_init(&mm, &ar, 1 << 12)) {
        gs_arena_free(&ar);
        return -1;
    }
    for (int i = 0; i < n; i++) {
        polish(hw, op, &e[i], &mm, max_moves, &pc, false);
        if (time_s) time_s[i] = predicted(hw, op, &e[i], &mm);
    }
    gs_arena_free(&ar);
    return pc.evals;
}

/* ---- ranking and the public entry point ------------------------------------------------ */
/* Check the options; o gets them, or the defaults when opts is NULL. */
static gs_status check_opts(gs_ctx *ctx, const gs_construct_opts *opts, gs_construct_opts *o) {
    if (opts) *o = *opts;
    else gs_construct_opts_default(o);
    if (o->top_k < 1 || o->top_k > GS_MAX_TOP)
        return gs_err(ctx, GS_ERR_INVALID_ARG, "top_k must be 1..%d (got %d)", GS_MAX_TOP, o->top_k);
    if (o->chains < 1 || o->chains > 4096) return gs_err(ctx, GS_ERR_INVALID_ARG, "chains must be 1..4096 (got %d)", o->chains);
    if (!(o->t_start > o->t_threshold) || !(o->t_threshold > 0) || !isfinite(o->t_start))
        return gs_err(ctx, GS_ERR_INVALID_ARG, "temperature must satisfy t_start > threshold > 0");
    if ((int)o->policy < 0 || o->policy > GS_POLICY_MODEL) return gs_err(ctx, GS_ERR_INVALID_ARG, "unknown policy %d", (int)o->policy);
    if (!(o->max_ms >= 0) || !isfinite(o->max_ms)) return gs_err(ctx, GS_ERR_INVALID_ARG, "max_ms must be finite and >= 0");
    if ((int)o->conv_form < GS_FORM_DIRECT || o->conv_form > GS_FORM_AUTO)
        return gs_err(ctx, GS_ERR_INVALID_ARG, "unknown conv_form %d", (int)o->conv_form);
    if (o->split_atomic != 0 && o->split_atomic != 1)
        return gs_err(ctx, GS_ERR_INVALID_ARG, "split_atomic must be 0 or 1 (got %d)", o->split_atomic);
    if (o->reserved != 0) return gs_err(ctx, GS_ERR_INVALID_ARG, "reserved must be 0 (got %d)", o->reserved);
    if (o->threads < 0 || o->threads > GS_MAX_THREADS)
        return gs_err(ctx, GS_ERR_INVALID_ARG, "threads must be 0..%d (got %d; 0: the default)", GS_MAX_THREADS, o->threads);
    return GS_OK;
}

gs_status gs_construct_opts_check(gs_ctx *ctx, const gs_construct_opts *opts) {
    gs_construct_opts o;
    return check_opts(ctx, opts, &o);
}

typedef struct crew crew;
static bool walk_on_workers(const gs_hw *hw, const gs_op *op, const gs_construct_opts *o, int64_t steps_per_chain,
                            gs_arena *ar, pool *p, crew *cw, gs_result *r);

/* Fill the pool (or, for the exhaustive strategy, r's ranking directly) with
 * the strategy's states; false for a strategy this build does not have. */
static bool run_strategy(const gs_hw *hw, const gs_op *op, const gs_construct_opts *o, int64_t steps_per_chain,
                         gs_arena *ar, pool *p, memo *mm, crew *cw, gs_result *r) {
    gs_pcg32 rng;
    switch (o->strategy) {
    case GS_STRATEGY_MARKOV:
        if (walk_on_workers(hw, op, o, steps_per_chain, ar, p, cw, r)) return true;
        for (int c = 0; c < o->chains; c++) { /* no memory for the chains' pools: one after another */
            gs_pcg32_seed(&rng, o->seed, (uint64_t)c); /* one stream per chain */
            r->steps += run_chain(hw, op, o, &rng, p, mm); /* p->knobbed gets the knobbed completions */
        }
        return true;
    case GS_STRATEGY_EXHAUSTIVE:
        run_exhaustive(hw, op, o->top_k, o->max_ms, mm->wf, r); /* ranks directly; the pool stays empty */
        r->pooled = r->evaluated;
        return true;
    case GS_STRATEGY_TREE: {
        gs_etir *cands = gs_arena_alloc(ar, 4096 * sizeof *cands);
        int nc = cands ? gs_tree_candidates(hw, op, cands, 4096) : 0;
        for (int i = 0; i < nc; i++) pool_add(p, &cands[i]);
        r->steps = nc;
        return true;
    }
    case GS_STRATEGY_RANDOM:
        gs_pcg32_seed(&rng, o->seed, 0);
        run_random(hw, op, &rng, p, (int64_t)o->chains * steps_per_chain, &r->steps);
        return true;
    default:
        return false;
    }
}

/* Seeds polished among the knobbed completions: each costs a descent (one
 * made construction ~24 % slower in CPU time, three ~57 %; three brought
 * h100's gemm M=128 N=768 K=3072 to 1.33x the exhaustive optimum, one to 1.41x). */
#ifndef GS_KNOBBED_POLISH
#define GS_KNOBBED_POLISH 1
#endif

/* The npol (at most 3) best states of a pool, with distinct tiles, into
 * seeds (the polish's starting points; not for the baselines, which must
 * stand as sampled); their number. */
static int polish_seeds(const gs_hw *hw, const gs_op *op, const pool *p, memo *mm, int npol, gs_etir *seeds) {
    enum { NPOL = 3 };
    int np = npol < NPOL ? npol : NPOL;
    double st[NPOL];
    int ns = 0;
    for (int64_t i = 0; i < p->n; i++) {
        double ti = predicted(hw, op, &p->items[i], mm);
        /* seeds with other tiles: two that differ only in whole-kernel
         * dimensions (stages, raster) polish to the same optimum */
        bool same = false;
        for (int j = 0; j < ns && !same; j++)
            same = !memcmp(seeds[j].tile, p->items[i].tile, sizeof seeds[j].tile) &&
                   !memcmp(seeds[j].V, p->items[i].V, sizeof seeds[j].V);
        if (same) continue;
        int pos = ns;
        while (pos > 0 && ti < st[pos - 1]) pos--;
        if (pos >= np) continue;
        for (int j = (ns < np ? ns : np - 1); j > pos; j--) { seeds[j] = seeds[j - 1]; st[j] = st[j - 1]; }
        seeds[pos] = p->items[i];
        st[pos] = ti;
        if (ns < np) ns++;
    }
    return ns;
}

/* ---- workers: the walk's chains and the polishes on threads ---------------------------
 * The chains, and then the polish seeds, are jobs that up to opts.threads
 * workers (the calling thread is one) take in turn. A job writes only its
 * own slot (a chain its own pools, a polish its own seed), and the workers
 * price states through one shared table of exact predicted times and one of
 * the polish's floors (each with its own simulations and checks, also exact
 * facts of states); the
 * chains' pools are then appended in chain order, as one thread would have
 * added them. So the result depends neither on the number of workers nor on
 * which worker ran which job: only the time does. */
/* The workers of a construction: their memos (the first is the
 * construction's own; the others, sharing its prices and floors, made from
 * the arena on the calling thread when their helpers first start), how many
 * may run, and whether they start only when the work is worth them. */
typedef struct crew {
    memo memos[GS_MAX_THREADS];
    int ready;     /* memos made */
    int max;       /* the most workers (workers_of) */
    bool adaptive; /* threads 0: helpers only for the work worth them */
    double after_s; /* ... the work left, in CPU seconds, that is (GS_HELP_AFTER_S) */
    bool helped;   /* helpers ran in an earlier phase: the next starts them at once */
    int most;      /* the most workers that ran at once */
    gs_arena *ar;
} crew;

typedef struct jobs {
    const gs_hw *hw;
    const gs_op *op;
    const gs_construct_opts *o;
    int n;           /* jobs */
    atomic_int next; /* the first job not yet taken */
    memo *memos;     /* one per worker; the first is the construction's own */
    pool *cp;        /* walk: each chain's pool (its knobbed pool behind ->knobbed) */
    int64_t *steps;  /* walk: each chain's steps */
    gs_etir *seeds;  /* polish: each job's seed, polished in place */
    polish_count *counts; /* polish: each job's neighbours priced and skipped */
    bool audit;      /* polish: price the skipped too, checking their floors */
} jobs;

typedef struct worker {
    jobs *j;
    int id;
} worker;

static void run_job(jobs *j, memo *m, int k) {
    if (j->seeds) {
        polish(j->hw, j->op, &j->seeds[k], m, 32, &j->counts[k], j->audit);
    } else {
        gs_pcg32 rng;
        gs_pcg32_seed(&rng, j->o->seed, (uint64_t)k); /* one stream per chain */
        j->steps[k] = run_chain(j->hw, j->op, j->o, &rng, &j->cp[k], m);
    }
}

static void *work(void *arg) {
    const worker *w = arg;
    jobs *j = w->j;
    for (int k; (k = atomic_fetch_add(&j->next, 1)) < j->n;) run_job(j, &j->memos[w->id], k);
    return NULL;
}

/* The workers of a construction: opts.threads, or when 0 the online CPUs
 * up to 4; at most the jobs there are. */
static int workers_of(const gs_construct_opts *o) {
    int n = o->threads;
    if (n == 0) {
        long cpus = sysconf(_SC_NPROCESSORS_ONLN);
        n = cpus < 1 ? 1 : cpus > 4 ? 4 : (int)cpus;
    }
    return n < 1 ? 1 : n > GS_MAX_THREADS ? GS_MAX_THREADS : n;
}

/* Start the helpers of up to nw workers (the calling thread is the first),
 * making their memos first: a new memo shares the first's prices and starts
 * with copies of its other tables (memo_clone); one kept from an earlier
 * phase is used as it is. The helpers started (fewer when memory for a memo
 * is short or a thread cannot be started). */
static int start_helpers(jobs *j, crew *c, int nw, pthread_t *th, worker *wk) {
    int started = 0;
    for (int i = 1; i < nw; i++) {
        if (i == c->ready) {
            if (!memo_clone(&c->memos[i], c->ar, &c->memos[0])) break;
            c->ready++;
        }
        wk[i] = (worker){j, i};
        if (pthread_create(&th[i], NULL, work, &wk[i]) != 0) break;
        started = i;
    }
    return started;
}

bool gs_help_early(double others, int online, int allowed) {
    /* a core for the calling thread, and more than half of another idle */
    return others >= 0 && online >= 2 && allowed >= 2 && online - others > 1.5;
}

/* The CPUs this process may run on: its affinity set where the system has
 * one, else the online CPUs; 0 when unknown. */
static int cpus_allowed(int online) {
#if defined(__linux__) && defined(CPU_COUNT)
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof set, &set) == 0) return CPU_COUNT(&set);
#endif
    return online;
}

/* The machine's busy CPU seconds so far (Linux /proc/stat: user, nice,
 * system, irq, softirq, steal), or -1 where there is no such file. */
static double machine_busy_s(void) {
    FILE *f = fopen("/proc/stat", "r");
    if (!f) return -1;
    unsigned long long v[8] = {0};
    int n = fscanf(f, "cpu %llu %llu %llu %llu %llu %llu %llu %llu", &v[0], &v[1], &v[2], &v[3], &v[4], &v[5], &v[6], &v[7]);
    fclose(f);
    long hz = sysconf(_SC_CLK_TCK);
    if (n < 4 || hz <= 0) return -1;
    return (double)(v[0] + v[1] + v[2] + v[5] + v[6] + v[7]) / (double)hz;
}

/* This process's CPU seconds so far (all its threads). */
static double process_cpu_s(void) {
    struct timespec ts;
    return clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts) == 0 ? (double)ts.tv_sec + ts.tv_nsec * 1e-9 : 0;
}

/* Whether the helpers may start early now (gs_help_early). The cores the
 * other processes keep busy are the machine's busy time less this
 * process's own over the time since the last look (at least GS_HELP_LOOK_S
 * before a new look): its own threads (helpers, a 1x1 conv's second form)
 * are not counted against it, so starting them does not turn the answer.
 * At a process's first look, or without /proc/stat, the 1-minute load
 * average less one (the calling thread's, counted in it when the process,
 * or the run of processes it belongs to, has been running). Shared by the
 * process's threads under a lock (a look costs about 20 us). */
static bool help_early_now(void) {
    static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
    static bool looked, early;
    static double wall0, busy0, own0;
    double now = gs_now_s();
    pthread_mutex_lock(&lock);
    if (!looked || now - wall0 >= GS_HELP_LOOK_S) {
        const long cpus = sysconf(_SC_NPROCESSORS_ONLN);
        const int online = cpus < 1 ? 0 : cpus > 1 << 20 ? 1 << 20 : (int)cpus;
        double busy = machine_busy_s(), own = process_cpu_s(), others = -1, load[1];
        if (looked && busy >= 0 && busy0 >= 0) {
            others = (busy - busy0 - (own - own0)) / (now - wall0);
            others = others < 0 ? 0 : others;
        } else if (getloadavg(load, 1) == 1) {
            others = load[0] > 1 ? load[0] - 1 : 0;
        }
        early = gs_help_early(others, online, cpus_allowed(online));
        looked = true;
        wall0 = now;
        busy0 = busy;
        own0 = own;
    }
    bool e = early;
    pthread_mutex_unlock(&lock);
    return e;
}

/* The calling thread's CPU time in seconds (the work it has done, which a
 * loaded machine inflates less than the wall clock); 0 where there is none. */
static double thread_cpu_s(void) {
    struct timespec ts;
    return clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts) == 0 ? (double)ts.tv_sec + ts.tv_nsec * 1e-9 : 0;
}

/* Run the jobs on the crew, the calling thread the first. Its helpers start
 * at once unless the crew is adaptive and none has run yet: then the
 * calling thread takes the jobs alone while the work left, projected from
 * the mean CPU time of the jobs it has done (two at least), is under
 * after_s. Each job writes only its own slot and the memos hold exact prices, so which worker runs which job,
 * and how many run, changes only the time. */
static void run_jobs(jobs *j, crew *c) {
    pthread_t th[GS_MAX_THREADS];
    worker wk[GS_MAX_THREADS];
    int started = 0, nw = c->max < j->n ? c->max : j->n;
    bool wait = c->adaptive && !c->helped;
    double t0 = wait ? thread_cpu_s() : 0;
    atomic_store(&j->next, 0);
    j->memos = c->memos;
    for (int done = 0;; done++) {
        if (nw > 1 && !started && (!wait || (done >= 2 && (thread_cpu_s() - t0) / done * (j->n - done) >= c->after_s))) {
            started = start_helpers(j, c, nw, th, wk);
            c->helped |= started > 0;
            if (started + 1 > c->most) c->most = started + 1;
            nw = 1; /* tried */
        }
        int k = atomic_fetch_add(&j->next, 1);
        if (k >= j->n) break;
        run_job(j, &c->memos[0], k);
    }
    for (int i = 1; i <= started; i++) pthread_join(th[i], NULL);
}

/* Between the walk and the polish (no helper runs): where the walk filled
 * more than 1/MEMO_GROW_AT of the prices' table, its prices move to one of
 * MEMO_CAP_BIG slots, which every worker's memo and *mm then share, and
 * the floors (the polish's: empty so far) a table of FLOOR_SLOTS_BIG
 * slots, shared as well. Which table holds a price or a floor changes no result; without
 * the arena's memory the tables stay as they are. The slots filled are counted, and with
 * several workers they may differ by a few from run to run (a state two workers priced at
 * once is kept twice; a price finding its probe run full is dropped), so a walk that fills
 * close to the threshold may grow the table in one run and not in another: the time and
 * gs_result.prices_cap change, the candidates do not. */
static void memo_grow(crew *c, memo *mm) {
    if (mm->cap >= MEMO_CAP_BIG) return;
    int64_t used = 0;
    for (int64_t i = 0; i < mm->cap; i++) used += (atomic_load_explicit(&mm->key[i], memory_order_relaxed) & 1) != 0;
    if (used * MEMO_GROW_AT <= mm->cap) return;
    memo big = *mm;
    big.cap = MEMO_CAP_BIG;
    big.key = gs_arena_alloc(c->ar, (size_t)big.cap * sizeof *big.key);
    big.val = gs_arena_alloc_raw(c->ar, (size_t)big.cap * sizeof *big.val);
    if (!big.key || !big.val) return;
    for (int64_t i = 0; i < mm->cap; i++) {
        uint64_t k = atomic_load_explicit(&mm->key[i], memory_order_relaxed);
        if (k & 1) memo_put(&big, k, mm->val[i]);
    }
    floor_entry *f = gs_arena_alloc(c->ar, FLOOR_SLOTS_BIG * sizeof *f);
    for (int i = 0; i < c->ready; i++) {
        c->memos[i].key = big.key;
        c->memos[i].val = big.val;
        c->memos[i].cap = big.cap;
        if (f) {
            c->memos[i].floors = f;
            c->memos[i].nfloors = FLOOR_SLOTS_BIG;
        }
    }
    *mm = c->memos[0]; /* (the first worker's memo is the construction's) */
}

/* The walk: every chain on the workers, each into its own pools, then the
 * pools appended in chain order to p (and p->knobbed). */
static bool walk_on_workers(const gs_hw *hw, const gs_op *op, const gs_construct_opts *o, int64_t steps_per_chain,
                            gs_arena *ar, pool *p, crew *cw, gs_result *r) {
    int nc = o->chains;
    pool *cp = gs_arena_alloc(ar, (size_t)nc * 2 * sizeof *cp);
    int64_t *steps = gs_arena_alloc(ar, (size_t)nc * sizeof *steps);
    if (!cp || !steps) return false;
    for (int c = 0; c < nc; c++) {
        if (!pool_init(&cp[c], ar, steps_per_chain + 2) || !pool_init(&cp[nc + c], ar, steps_per_chain + 2))
            return false;
        cp[c].knobbed = p->knobbed ? &cp[nc + c] : NULL;
        steps[c] = 0;
    }
    jobs j = {.hw = hw, .op = op, .o = o, .n = nc, .cp = cp, .steps = steps};
    run_jobs(&j, cw);
    for (int c = 0; c < nc; c++) {
        r->steps += steps[c];
        for (int64_t i = 0; i < cp[c].n; i++) pool_add(p, &cp[c].items[i]);
        if (p->knobbed)
            for (int64_t i = 0; i < cp[nc + c].n; i++) pool_add(p->knobbed, &cp[nc + c].items[i]);
    }
    return true;
}

/* The polish: the walk's own best states (at most 3) and the best knobbed
 * completions (GS_KNOBBED_POLISH: their own seeds, so they add optima and
 * take none away) polished on the workers, each local optimum added to the
 * pool its seed came from. */
static void polish_on_workers(const gs_hw *hw, const gs_op *op, const gs_construct_opts *o, pool *p, pool *kp,
                              crew *cw, gs_result *r) {
    gs_etir seeds[6];
    polish_count counts[6] = {{0, 0, 0}};
    int ns = polish_seeds(hw, op, p, &cw->memos[0], 3, seeds);
    int nk = polish_seeds(hw, op, kp, &cw->memos[0], GS_KNOBBED_POLISH, seeds + ns);
    jobs j = {.hw = hw, .op = op, .o = o, .n = ns + nk, .seeds = seeds, .counts = counts, .audit = r->floor_audit};
    run_jobs(&j, cw);
    for (int i = 0; i < ns + nk; i++) {
        pool_add(i < ns ? p : kp, &seeds[i]);
        r->evaluated += counts[i].evals;
        r->pruned += counts[i].pruned;
        r->floor_violations += counts[i].violations;
    }
}

/* Why no candidate came out, as an error. */
static gs_status no_candidate(gs_ctx *ctx, const gs_op *op, const gs_hw *hw, const gs_construct_opts *o) {
    return gs_err(ctx, GS_ERR_NO_CANDIDATE,
                  "the %s strategy (policy %s) found no configuration of %s within %s's limits (shared memory, "
                  "threads, registers, at most 2^31-1 blocks, 32-bit indices)%s",
                  gs_strategy_name(o->strategy), gs_policy_name(o->policy), op->spec, hw->name,
                  o->strategy == GS_STRATEGY_MARKOV && o->policy != GS_POLICY_MODEL ? "; try --policy model" : "");
}

/* Construct one form of an operator (checked arguments); adaptive: the
 * helpers start only for the work worth them (run_jobs). */
static gs_status construct_form(gs_ctx *ctx, const gs_op *op, const gs_hw *hw, const gs_construct_opts *opts,
                                bool adaptive, gs_result **out) {
    const gs_construct_opts o = *opts;
    double t_begin = gs_now_s();
    gs_result *r = calloc(1, sizeof *r);
    if (!r) return gs_err(ctx, GS_ERR_NOMEM, "out of memory allocating a result");
    r->op = *op;
    r->hw = *hw;
    r->opts = o;
    const char *audit = getenv("GS_AUDIT_FLOOR");
    r->floor_audit = audit && *audit && strcmp(audit, "0") != 0;

    /* halvings from t_start to the threshold, in logs so no ratio overflows */
    double halvings = ceil(log2(o.t_start) - log2(o.t_threshold)) + 1;
    int64_t steps_per_chain = !(halvings < 100000) ? 100000 : (int64_t)halvings;
    int64_t cap = o.strategy == GS_STRATEGY_EXHAUSTIVE ? 16 : (int64_t)o.chains * (steps_per_chain + 2);
    /* one block holds the pools, the chains' pools and up to four workers'
     * memos (about 1.1 MB and 1.0 MB each, with their polish scratch): a
     * second block made glibc return the top of its heap to the system at
     * every free and fault it in again at the next construction (13 000 page
     * faults over the 51 operators of the paper suite, against 660) */
    gs_arena ar;
    gs_arena_init(&ar, 6 << 20);
    pool p, kp;
    memo mm;
    /* p takes kp's states too before ranking; the prices' table grows
     * before the polish where the walk filled much of it (memo_grow) */
    const char *oom = !pool_init(&p, &ar, 2 * cap) || !pool_init(&kp, &ar, cap) ? "the candidate pool"
                      : !memo_init(&mm, &ar, MEMO_CAP) ? "the walk's memo" : NULL;
    if (oom) {
        gs_arena_free(&ar);
        free(r);
        return gs_err(ctx, GS_ERR_NOMEM, "out of memory allocating %s", oom);
    }
    if (o.strategy == GS_STRATEGY_MARKOV) p.knobbed = &kp;
    mm.apart = r->floor_audit;
    const char *after = getenv("GS_HELP_AFTER_MS");
    int max = o.strategy == GS_STRATEGY_MARKOV ? workers_of(&o) : 1;
    /* the default threads: a core to spare starts the helpers early */
    crew cw = {.ready = 1, .max = max, .adaptive = adaptive,
               .after_s = after && *after                       ? strtod(after, NULL) * 1e-3
                          : adaptive && max > 1 && help_early_now() ? 0
                                                                    : GS_HELP_AFTER_S,
               .most = 1, .ar = &ar};
    cw.memos[0] = mm;
    if (!run_strategy(hw, op, &o, steps_per_chain, &ar, &p, &mm, &cw, r)) {
        gs_arena_free(&ar);
        free(r);
        return gs_err(ctx, GS_ERR_UNSUPPORTED, "strategy %d is not available in this build", (int)o.strategy);
    }
    if (o.strategy != GS_STRATEGY_EXHAUSTIVE) r->pooled = p.n + kp.n; /* exhaustive set it to the states ranked */
    if (o.strategy == GS_STRATEGY_MARKOV && p.n > 0) {
        memo_grow(&cw, &mm);
        /* the walk's own best states polished as they always were, then the
         * best knobbed completions (their own seeds, so they add optima and
         * take none away), and all of them ranked together */
        polish_on_workers(hw, op, &o, &p, &kp, &cw, r);
        for (int64_t i = 0; i < kp.n; i++) pool_add(&p, &kp.items[i]);
    }
    r->workers = cw.most; /* the walk's and the polish's */
    r->prices_cap = mm.cap;
    /* rank: insertion into a sorted top-k by predicted time (stable for ties),
     * by the memo's times (the walk and the polish priced most of the pool;
     * a state failing the check is priced as it is), then the top-k's full
     * estimates in that order */
    struct { double t; int64_t i; } top[GS_MAX_TOP];
    int ntop = 0;
    for (int64_t i = 0; i < p.n; i++) {
        bool ok;
        double t = predicted_ok(hw, op, &p.items[i], &mm, &ok);
        if (!ok) {
            gs_estimate est;
            gs_estimate_etir_memo(hw, op, &p.items[i], 0, mm.wf, &est);
            t = est.time_s;
        }
        r->evaluated++;
        int pos = ntop;
        while (pos > 0 && t < top[pos - 1].t) pos--;
        if (pos >= o.top_k) continue;
        for (int j = ntop < o.top_k ? ntop : o.top_k - 1; j > pos; j--) top[j] = top[j - 1];
        top[pos].t = t;
        top[pos].i = i;
        if (ntop < o.top_k) ntop++;
    }
    for (int j = 0; j < ntop; j++) {
        gs_estimate est;
        gs_estimate_etir_memo(hw, op, &p.items[top[j].i], 0, mm.wf, &est);
        rank_insert(r, o.top_k, &p.items[top[j].i], &est);
    }
    if (o.split_atomic) allow_split_atomic(hw, op, mm.wf, r); /* before the arena (the memo) goes */
    gs_arena_free(&ar);
    for (int i = 0; i < r->n; i++) gs_etir_format(op, &r->cand[i], r->desc[i], sizeof r->desc[i]);
    r->construct_s = gs_now_s() - t_begin;
    if (r->n == 0) {
        free(r);
        return no_candidate(ctx, op, hw, &o);
    }
    *out = r;
    return GS_OK;
}

/* The second form of a 1x1 conv (its matrix product), on a thread of its own. */
typedef struct form_job {
    const gs_op *op;
    const gs_hw *hw;
    gs_construct_opts o;
    bool adaptive;
    gs_result *r;
    gs_status s;
} form_job;

static void *form_work(void *arg) {
    form_job *f = arg;
    f->s = construct_form(NULL, f->op, f->hw, &f->o, f->adaptive, &f->r);
    return NULL;
}

gs_status gs_construct(gs_ctx *ctx, const gs_op *op, const gs_hw *hw, const gs_construct_opts *opts,
                       gs_result **out) {
    if (!out) return gs_err(ctx, GS_ERR_INVALID_ARG, "NULL out");
    *out = NULL;
    if (!op || !hw) return gs_err(ctx, GS_ERR_INVALID_ARG, "gs_construct: NULL operator or profile");
    gs_construct_opts o;
    gs_status s = check_opts(ctx, opts, &o);
    if (s != GS_OK) return s;
    s = gs_op_validate(ctx, op);
    if (s != GS_OK) return s;
    s = gs_hw_validate(ctx, hw);
    if (s != GS_OK) return s;
    /* a 1x1 conv is also the matrix product it is: construct that form too
     * and keep the faster (each wins somewhere: make bench); with two or
     * more workers the forms are constructed at once, each on half of them */
    gs_op mm;
    bool two = o.conv_form == GS_FORM_AUTO && op->kind == GS_OPK_CONV2D && gs_op_conv1x1_as_matmul(NULL, op, &mm) == GS_OK;
    double t_begin = gs_now_s();
    form_job alt = {&mm, hw, o, o.threads == 0, NULL, GS_ERR_INVALID_ARG};
    pthread_t th;
    bool on_thread = false;
    int nw = workers_of(&o), asked = o.threads;
    if (two && nw > 1) {
        alt.o.threads = nw / 2;
        o.threads = nw - nw / 2;
        on_thread = pthread_create(&th, NULL, form_work, &alt) == 0;
    }
    s = construct_form(ctx, op, hw, &o, asked == 0, out);
    if (two && !on_thread && s == GS_OK) form_work(&alt);
    if (on_thread) pthread_join(th, NULL);
    if (s != GS_OK || !two || alt.s != GS_OK) { /* the nest stands (or failed) alone */
        if (alt.r) gs_result_destroy(alt.r);
        return s;
    }
    gs_result **lose = alt.r->est[0].time_s < (*out)->est[0].time_s ? out : &alt.r;
    double both = on_thread ? gs_now_s() - t_begin : (*out)->construct_s + alt.r->construct_s;
    int most = alt.r->workers > (*out)->workers ? alt.r->workers : (*out)->workers; /* of either form */
    if (lose == out) {
        gs_result_destroy(*out);
        *out = alt.r;
    } else {
        gs_result_destroy(alt.r);
    }
    (*out)->construct_s = both;
    (*out)->workers = most;
    (*out)->opts.threads = asked;
    return GS_OK;
}
