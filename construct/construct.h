/* construct.h — the Markov walk (paper Algorithms 1 and 2), the candidate
 * pool with top-k ranking, and the baseline strategies. No CUDA here. */
#ifndef GS_CONSTRUCT_H
#define GS_CONSTRUCT_H

#include "util/pcg.h"
#include "hwmodel/model/model.h"

#define GS_MAX_TOP 64

struct gs_result {
    gs_op op;                  /* copies: a result stands alone */
    gs_hw hw;
    gs_construct_opts opts;
    int n;                     /* ranked candidates */
    gs_etir cand[GS_MAX_TOP];
    gs_estimate est[GS_MAX_TOP];
    char desc[GS_MAX_TOP][200];
    double construct_s;
    int64_t steps;             /* walk steps taken over all chains */
    int64_t pooled;            /* distinct complete states ranked */
    int64_t evaluated;         /* states estimated */
    int64_t pruned;            /* polish neighbours skipped by their floor (gs_estimate_floor); with several
                                  workers it varies a little from run to run (whether a floor another worker
                                  kept is there yet), the candidates do not */
    bool floor_audit;          /* GS_AUDIT_FLOOR set: the skipped were priced too, and */
    int64_t floor_violations;  /* ... this many floors lay above their prices (0) */
    bool capped;               /* exhaustive: enumeration hit its cap */
    int workers;               /* the most workers that ran at once (the calling thread one; a 1x1 conv: in either form) */
    int64_t prices_cap;        /* the slots of the prices' table at the end (grown before the polish where the walk
                                  filled much of it; a 1x1 conv: the kept form's). With several workers a walk that
                                  fills close to the threshold may grow it in one run and not in another (two workers
                                  pricing one state at once can keep it twice; a full probe run drops a price): the
                                  candidates do not change */
};

/* Whether a construction's helpers (default threads) may start early, after
 * the calling thread's second job, rather than once the work left is worth
 * GS_HELP_AFTER_S: when the machine has a core to spare beside the calling
 * thread (more than half a core idle). others is the cores that other
 * processes keep busy (negative: unknown), online the CPUs online, allowed
 * those this process may run on. */
bool gs_help_early(double others, int online, int allowed);

/* Thread count a level-2 state is completed with for ranking. */
#define GS_COMPLETE_THREADS 256

/* Complete a state for ranking: a level-2 state enters level 1 with the
 * smallest thread tiles reaching <= GS_COMPLETE_THREADS threads; the result
 * has level 0. Returns false if the completed state fails the check. */
/* The construction options' own check (gs_construct's first step): GS_OK, or
 * GS_ERR_INVALID_ARG naming the field out of range; opts NULL is the
 * defaults. The dispatcher runs it at creation, so a bad field fails there
 * and not at its first gs_dispatch. */
gs_status gs_construct_opts_check(gs_ctx *ctx, const gs_construct_opts *opts);
bool gs_complete(const gs_hw *hw, const gs_op *op, const gs_etir *e, gs_etir *out);

/* Whether a user's configuration cfg, parsed into e, passes gs_hw_check on
 * hw: GS_OK, or GS_ERR_INVALID_ARG "config CFG is rejected on HW: why"
 * (gs_hw_check_why). An mma row the profile's arch lacks is also named with
 * the arch it needs, from the row. */
gs_status gs_config_fits(gs_ctx *ctx, const gs_hw *hw, const gs_op *op, const gs_etir *e, const char *cfg);

/* A policy's or strategy's name ("paper", "markov", ...; "?" out of range),
 * and the value a name spells (false when it spells none). */
const char *gs_policy_name(gs_policy p);
const char *gs_strategy_name(gs_strategy s);
bool gs_policy_from_name(const char *name, gs_policy *out);
bool gs_strategy_from_name(const char *name, gs_strategy *out);

/* Benefit of one action under a policy (Algorithm 2's getBenefit), before
 * the memory check and the cache multiplier; 0 when not applicable. */
double gs_action_benefit(const gs_hw *hw, const gs_op *op, const gs_etir *e, gs_action a, gs_policy pol,
                         gs_etir *next);
/* The cache multiplier 3 / (1 + exp(-(ln 5 / 10) (t - 10))) at step t. */
double gs_cache_multiplier(int t);
/* The pool-append probability 1 - 1 / (1 + exp(-0.5 (-ln T - 10))). */
double gs_append_probability(double T);

/* Roller-style tree construction: writes up to cap complete candidates. */
int gs_tree_candidates(const gs_hw *hw, const gs_op *op, gs_etir *out, int cap);

/* Enumerate the actions out of a state: writes up to cap actions. */
int gs_actions_enumerate(const gs_op *op, const gs_etir *e, gs_action *acts, int cap);

/* The aligned configuration space, the one the exhaustive strategy ranks:
 * power-of-two block tiles up to the next power of two of each extent, thread
 * tiles T1 | T2 within the accumulator cap, vthreads V | T1, and every
 * pipeline depth, raster and reduce split; each state passed to fn is
 * complete (level 0) and passes gs_hw_check. fn returns false to stop.
 * Returns the states visited, counting each thread tile that no reduce split
 * makes valid as one; stops (with *stopped true, when given) after fn returns
 * false, once cap > 0 states are visited, or once max_ms > 0 milliseconds
 * have passed (the clock is read as states are looked at, valid or not).
 * Deterministic order. */
typedef bool (*gs_space_fn)(const gs_etir *e, void *user);
int64_t gs_space_enumerate(const gs_hw *hw, const gs_op *op, int64_t cap, double max_ms, gs_space_fn fn, void *user,
                           bool *stopped);

/* One random state of that space (each exponent uniform within its parent's
 * bound, as the random strategy draws): true when it passes gs_hw_check. */
bool gs_space_draw(const gs_hw *hw, const gs_op *op, gs_pcg32 *rng, gs_etir *out);

/* Drive each of n complete states e[i] (level 0, passing gs_hw_check) to
 * a local optimum of the analytic estimate: the steepest descent
 * gs_construct gives its best walk states (each tile, thread tile and
 * vthread count doubled or halved, factors moved between axes, stages,
 * raster, reduce and K splits one step; at a local optimum, each of those
 * with the reduce tile halved too), at most max_moves (<= 32) moves.
 * e[i] gets the best state met and time_s[i] (time_s may be NULL) its
 * predicted time. The n descents share one memo of estimates. Returns the
 * estimates made, -1 when out of memory (e unchanged). Uses no shared
 * state. */
int64_t gs_polish(const gs_hw *hw, const gs_op *op, gs_etir *e, int n, int max_moves, double *time_s);

#endif
