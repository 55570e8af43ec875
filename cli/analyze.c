/* analyze.c — `gensor analyze`: the Markov analysis of the paper's Section
 * IV-D ("Convergence and Validity Analysis") on the real construction graph.
 *
 *   1. Explore the graph from the unscheduled state (gs_etir_init) breadth
 *      first over every applicable action whose benefit is > 0 under the
 *      chosen policy (a benefit of 0 means the move fails the memory check).
 *      Each state's out-edges carry pi(a|i) = benefit / sum of benefits, as in
 *      Algorithm 2. The cache action's weight depends on the walk's step t
 *      (3 / (1 + exp(-(ln5/10)(t - 10)))); a graph has no step, so the analysis
 *      is taken at one fixed t, 0 by default (--step).
 *   2. Terminal states (level 0, a finished schedule) get the payoff
 *      t_best / t_pred(state), in (0, 1], where t_best is the best predicted
 *      time over the terminal states found.
 *   3. Value iteration, eq. (5)-(6): V_{k+1}(i) = max_a pi(a|i) V_k(j), with
 *      terminal values fixed at their payoff and every other state starting
 *      at 0. The values are products of probabilities along a path, so they
 *      are tiny far from the terminals; the stopping test is therefore on the
 *      relative change, max_i |V_{k+1}(i) - V_k(i)| <= 1e-12 V_{k+1}(i) (an
 *      absolute 1e-12 would stop before the values reach the start).
 *   4. The greedy policy argmax_a pi(a|i) V(j) is followed from the start to
 *      a terminal state, and that state is compared with what gs_construct
 *      (default options, same seed and policy) picks.
 */
#include "cli/cli.h"

#include <getopt.h>
#include <gsl/gsl_vector.h>
#include <jansson.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define AN_MAX_ACTS 128
#define AN_DEFAULT_CAP 20000
#define AN_MAX_ITERS 10000
#define AN_TOL 1e-12

static const char analyze_help[] =
    "usage: gensor analyze SPEC [options]\n"
    "\n"
    "The Markov analysis of the construction graph (paper Section IV-D): explore every state\n"
    "reachable from the unscheduled one through actions with a positive benefit, print the\n"
    "transition probabilities out of the start state, run value iteration V(i) = max_a pi(a|i)V(j)\n"
    "with terminal payoff t_best/t_pred, follow the greedy policy to a terminal state and compare\n"
    "it with what `gensor construct` picks.\n"
    "\n"
    "  --hw NAME|FILE       hardware profile: built-in name (gensor hw list) or JSON file [rtx4090]\n"
    "  --policy P           paper | balanced | model (the benefit formulas) [model]\n"
    "  --seed N             seed of the gs_construct run compared against (the analysis itself is\n"
    "                       deterministic) [1]\n"
    "  --step T             walk step t at which the cache multiplier is taken [0]\n"
    "  --cap N              most states explored; edges into states past the cap are dropped [20000]\n"
    "  --format text|json   output format [text]\n";

typedef struct an_edge {
    int32_t to; /* -1: target not stored (past the cap) */
    gs_action act;
    double benefit, prob;
} an_edge;

typedef struct an_graph {
    const gs_op *op;
    gs_etir *st;       /* states in BFS order; st[0] is the start */
    int32_t *eoff, *ecnt;
    bool *expanded;
    double *tpred;     /* predicted time of terminal states, else NAN */
    int32_t n, cap;
    an_edge *edges;
    int64_t ne, ecap;
    int64_t dropped;   /* edges into states past the cap */
    uint64_t *hkey;    /* open addressing on gs_etir_hash | 1 */
    int32_t *hval;
    int64_t hcap;
    bool capped;
    gs_arena mem;      /* the fixed-size arrays above, freed together (edges grow: malloc) */
} an_graph;

static bool an_init(an_graph *g, const gs_op *op, int32_t cap) {
    memset(g, 0, sizeof *g);
    g->op = op;
    g->cap = cap;
    g->hcap = 64;
    while (g->hcap < 2 * (int64_t)cap) g->hcap *= 2;
    gs_arena_init(&g->mem, 0);
    g->st = gs_arena_alloc(&g->mem, (size_t)cap * sizeof *g->st);
    g->eoff = gs_arena_alloc(&g->mem, (size_t)cap * sizeof *g->eoff);
    g->ecnt = gs_arena_alloc(&g->mem, (size_t)cap * sizeof *g->ecnt);
    g->expanded = gs_arena_alloc(&g->mem, (size_t)cap * sizeof *g->expanded);
    g->tpred = gs_arena_alloc(&g->mem, (size_t)cap * sizeof *g->tpred);
    g->hkey = gs_arena_alloc(&g->mem, (size_t)g->hcap * sizeof *g->hkey);
    g->hval = gs_arena_alloc(&g->mem, (size_t)g->hcap * sizeof *g->hval);
    g->ecap = 1024;
    g->edges = malloc((size_t)g->ecap * sizeof *g->edges);
    return g->st && g->eoff && g->ecnt && g->expanded && g->tpred && g->hkey && g->hval && g->edges;
}

static void an_free(an_graph *g) {
    gs_arena_free(&g->mem);
    free(g->edges);
}

/* Index of state e, or -1. With insert, stores it (if under the cap). */
static int32_t an_find(an_graph *g, const gs_etir *e, bool insert) {
    uint64_t h = gs_etir_hash(e) | 1u;
    int64_t i = (int64_t)(h & (uint64_t)(g->hcap - 1));
    while (g->hkey[i]) {
        if (g->hkey[i] == h && !memcmp(&g->st[g->hval[i]], e, sizeof *e)) return g->hval[i];
        i = (i + 1) & (g->hcap - 1);
    }
    if (!insert) return -1;
    if (g->n >= g->cap) {
        g->capped = true;
        return -1;
    }
    g->hkey[i] = h;
    g->hval[i] = g->n;
    g->st[g->n] = *e;
    g->tpred[g->n] = NAN;
    return g->n++;
}

static bool an_push_edge(an_graph *g, an_edge e) {
    if (g->ne == g->ecap) {
        an_edge *ne = realloc(g->edges, (size_t)g->ecap * 2 * sizeof *ne);
        if (!ne) return false;
        g->edges = ne;
        g->ecap *= 2;
    }
    g->edges[g->ne++] = e;
    return true;
}

/* Breadth-first exploration. Returns false on out-of-memory. */
static bool an_explore(an_graph *g, const gs_hw *hw, gs_policy pol, int step) {
    const gs_op *op = g->op;
    gs_etir s0, nexts[AN_MAX_ACTS];
    gs_action acts[AN_MAX_ACTS];
    double w[AN_MAX_ACTS];
    gs_etir_init(op, &s0);
    an_find(g, &s0, true);
    /* the cache weight's annealing factor, taken at one step for the whole graph */
    double cache_mult = gs_cache_multiplier(step);
    for (int32_t i = 0; i < g->n; i++) {
        const gs_etir e = g->st[i];
        g->expanded[i] = true;
        g->eoff[i] = (int32_t)g->ne;
        if (e.level == 0) {
            /* a finished schedule: the payoff's denominator */
            gs_estimate est;
            gs_estimate_etir(hw, op, &e, 0, &est);
            g->tpred[i] = est.time_s;
            continue;
        }
        /* Algorithm 2: benefits, zero for a failed memory check, cache
         * multiplier, normalise */
        int na = gs_actions_enumerate(op, &e, acts, AN_MAX_ACTS);
        double sum = 0;
        for (int a = 0; a < na; a++) {
            w[a] = gs_action_benefit(hw, op, &e, acts[a], pol, &nexts[a]);
            if (acts[a].kind == GS_ACT_CACHE) w[a] *= cache_mult;
            if (!(w[a] > 0) || !isfinite(w[a])) w[a] = 0;
            sum += w[a];
        }
        if (!(sum > 0)) continue; /* a dead end: no legal move */
        for (int a = 0; a < na; a++) {
            if (w[a] <= 0) continue;
            int32_t to = an_find(g, &nexts[a], true);
            if (to < 0) g->dropped++;
            if (!an_push_edge(g, (an_edge){to, acts[a], w[a], w[a] / sum})) return false;
            g->ecnt[i]++;
        }
    }
    return true;
}

typedef struct an_result {
    int32_t terminals, best_term, greedy_term, path_len;
    int32_t *path; /* state indices along the greedy path (path_len + 1 entries) */
    int32_t *path_edge;
    double t_best;
    int iterations;
    bool converged;
    double last_delta; /* max absolute change in the last iteration */
    gsl_vector *V;
    /* expected payoff of the terminal state the chain absorbs into when it
     * rolls pi(a|i) at every state: E(i) = sum_a pi(a|i) E(j) */
    gsl_vector *E;
    int e_iterations;
    bool e_converged;
} an_result;

/* Value iteration (eq. 5-6) on the explored graph. */
static bool an_values(const an_graph *g, an_result *r) {
    r->terminals = 0;
    r->best_term = -1;
    r->t_best = INFINITY;
    for (int32_t i = 0; i < g->n; i++)
        if (g->st[i].level == 0 && g->expanded[i]) {
            r->terminals++;
            if (g->tpred[i] < r->t_best) {
                r->t_best = g->tpred[i];
                r->best_term = i;
            }
        }
    gsl_vector *V = gsl_vector_calloc((size_t)g->n), *W = gsl_vector_calloc((size_t)g->n);
    if (!V || !W) {
        if (V) gsl_vector_free(V);
        if (W) gsl_vector_free(W);
        return false;
    }
    /* terminal payoff t_best / t_pred in (0, 1]; every other state starts at 0 */
    for (int32_t i = 0; i < g->n; i++)
        if (g->st[i].level == 0 && g->expanded[i] && isfinite(g->tpred[i]) && g->tpred[i] > 0)
            gsl_vector_set(V, (size_t)i, r->t_best / g->tpred[i]);
    gsl_vector_memcpy(W, V);
    r->iterations = 0;
    r->converged = false;
    while (r->iterations < AN_MAX_ITERS) {
        double dmax = 0;
        bool moved = false;
        for (int32_t i = 0; i < g->n; i++) {
            if (g->st[i].level == 0) continue;
            double best = 0;
            for (int32_t k = 0; k < g->ecnt[i]; k++) {
                const an_edge *e = &g->edges[g->eoff[i] + k];
                if (e->to < 0) continue; /* unknown target: value 0 */
                double v = e->prob * gsl_vector_get(V, (size_t)e->to);
                if (v > best) best = v;
            }
            double old = gsl_vector_get(V, (size_t)i), d = fabs(best - old);
            if (d > dmax) dmax = d;
            if (d > AN_TOL * best) moved = true;
            gsl_vector_set(W, (size_t)i, best);
        }
        gsl_vector_swap(V, W);
        r->iterations++;
        r->last_delta = dmax;
        if (!moved) {
            r->converged = true;
            break;
        }
    }
    gsl_vector_free(W);
    r->V = V;
    return true;
}

/* For contrast with eq. (5)-(6): the expectation instead of the max,
 * E(i) = sum_a pi(a|i) E(j), terminal E = payoff, edges past the cap count
 * as 0. Gauss-Seidel sweeps until no value moves by more than 1e-12. This is
 * what a chain that rolls the roulette at every state (no step limit, cache
 * weight fixed at the analysed step) ends with on average. */
static bool an_expect(const an_graph *g, an_result *r) {
    gsl_vector *E = gsl_vector_calloc((size_t)g->n);
    if (!E) return false;
    for (int32_t i = 0; i < g->n; i++)
        if (g->st[i].level == 0 && g->expanded[i] && isfinite(g->tpred[i]) && g->tpred[i] > 0)
            gsl_vector_set(E, (size_t)i, r->t_best / g->tpred[i]);
    r->e_iterations = 0;
    r->e_converged = false;
    while (r->e_iterations < AN_MAX_ITERS) {
        double dmax = 0;
        for (int32_t i = 0; i < g->n; i++) {
            if (g->st[i].level == 0) continue;
            double sum = 0;
            for (int32_t k = 0; k < g->ecnt[i]; k++) {
                const an_edge *e = &g->edges[g->eoff[i] + k];
                if (e->to >= 0) sum += e->prob * gsl_vector_get(E, (size_t)e->to);
            }
            double d = fabs(sum - gsl_vector_get(E, (size_t)i));
            if (d > dmax) dmax = d;
            gsl_vector_set(E, (size_t)i, sum);
        }
        r->e_iterations++;
        if (dmax <= AN_TOL) {
            r->e_converged = true;
            break;
        }
    }
    r->E = E;
    return true;
}

/* Follow argmax_a pi(a|i) V(j) from the start. */
static bool an_greedy(const an_graph *g, an_result *r) {
    r->path = malloc(((size_t)g->n + 1) * sizeof *r->path);
    r->path_edge = malloc(((size_t)g->n + 1) * sizeof *r->path_edge);
    if (!r->path || !r->path_edge) return false;
    r->path_len = 0;
    r->greedy_term = -1;
    int32_t i = 0;
    r->path[0] = 0;
    while (g->st[i].level != 0 && r->path_len < g->n) {
        int32_t pick = -1;
        double best = 0;
        for (int32_t k = 0; k < g->ecnt[i]; k++) {
            const an_edge *e = &g->edges[g->eoff[i] + k];
            if (e->to < 0) continue;
            double v = e->prob * gsl_vector_get(r->V, (size_t)e->to);
            if (v > best) {
                best = v;
                pick = g->eoff[i] + k;
            }
        }
        if (pick < 0) return true; /* no terminal reachable from here */
        r->path_edge[r->path_len] = pick;
        i = g->edges[pick].to;
        r->path[++r->path_len] = i;
    }
    if (g->st[i].level == 0) r->greedy_term = i;
    return true;
}

static const char *act_name(gs_action_kind k) {
    switch (k) {
    case GS_ACT_TILE: return "tile";
    case GS_ACT_INVTILE: return "invTile";
    case GS_ACT_VTHREAD: return "setVThread";
    case GS_ACT_CACHE: return "cache";
    default: return "?";
    }
}

static json_t *state_json(const gs_op *op, const gs_etir *e, double t_pred) {
    char d[200], cfg[256];
    gs_etir_format(op, e, d, sizeof d);
    gs_etir_format_config(op, e, cfg, sizeof cfg);
    json_t *j = json_pack("{s:s, s:s, s:i}", "etir", d, "config", cfg, "level", (int)e->level);
    if (j && isfinite(t_pred)) json_object_set_new(j, "predicted_s", json_real(t_pred));
    return j;
}

static json_t *edge_json(const gs_op *op, const an_graph *g, const an_edge *e) {
    char d[200] = "(past the cap)";
    if (e->to >= 0) gs_etir_format(op, &g->st[e->to], d, sizeof d);
    const char *axis = e->act.axis >= 0 ? op->axes[e->act.axis].name : "-";
    json_t *j = json_pack("{s:s, s:s, s:i, s:f, s:f, s:s, s:i}", "action", act_name(e->act.kind), "axis", axis,
                          "value", e->act.value, "benefit", e->benefit, "probability", e->prob, "target", d,
                          "target_level", e->to >= 0 ? (int)g->st[e->to].level : -1);
    return j;
}

typedef struct an_opts {
    const char *hwname, *format, *spec;
    gs_policy pol;
    uint64_t seed;
    long step, cap;
} an_opts;

static const struct option analyze_lo[] = {
    GS_CLI_OPT_HW, GS_CLI_OPT_POLICY, GS_CLI_OPT_SEED, {"step", required_argument, 0, 't'}, {"cap", required_argument, 0, 'c'},
    GS_CLI_OPT_FORMAT, GS_CLI_OPT_HELP, GS_CLI_OPT_END,
};
static const gs_cli_cmd analyze_cmd = {"analyze", analyze_help, analyze_lo, NULL, NULL, NULL};

/* One option (gs_cli_opt_fn). */
static int analyze_opt(int c, void *opts) {
    an_opts *o = opts;
    long v;
    switch (c) {
    case 'w': o->hwname = optarg; break;
    case 'p': return gs_cli_policy_opt("analyze", optarg, &o->pol) ? 2 : -1;
    case 's':
        if (gs_cli_int_opt("analyze", "seed", optarg, 0, LONG_MAX, &v)) return 2;
        o->seed = (uint64_t)v;
        break;
    case 't': return gs_cli_int_opt("analyze", "step", optarg, 0, 1000000, &o->step) ? 2 : -1;
    case 'c': return gs_cli_int_opt("analyze", "cap", optarg, 1, 10000000, &o->cap) ? 2 : -1;
    case 'f': return gs_cli_format_opt("analyze", optarg, false, &o->format) ? 2 : -1;
    }
    return -1;
}

/* The options and the SPEC operand: -1 to go on, else an exit code. */
static int analyze_parse_opts(int argc, char **argv, void *opts) {
    an_opts *o = opts;
    *o = (an_opts){.hwname = "rtx4090", .format = "text", .pol = GS_POLICY_MODEL, .seed = 1, .cap = AN_DEFAULT_CAP};
    int rc = gs_cli_getopt(&analyze_cmd, argc, argv, analyze_opt, o);
    if (rc >= 0) return rc;
    return gs_cli_operand(&analyze_cmd, argc, argv, &o->spec);
}

/* What the two reports compare: the greedy policy's terminal state and
 * gs_construct's pick. */
typedef struct an_cmp {
    double vstart, t_greedy, t_con;
    int32_t gt, c_idx;
    bool agree, same_time;
} an_cmp;

static an_cmp an_compare(an_graph *g, const an_result *r, const gs_result *res) {
    an_cmp c;
    c.vstart = gsl_vector_get(r->V, 0);
    c.gt = r->greedy_term;
    c.t_greedy = c.gt >= 0 ? g->tpred[c.gt] : NAN;
    c.c_idx = an_find(g, &res->cand[0], false);
    c.agree = c.gt >= 0 && !memcmp(&g->st[c.gt], &res->cand[0], sizeof(gs_etir));
    c.t_con = res->est[0].time_s;
    /* same predicted time counts as agreement in value even when the states differ */
    c.same_time = c.gt >= 0 && fabs(c.t_greedy - c.t_con) <= 1e-9 * c.t_con;
    return c;
}

static bool analyze_print_json(const an_opts *o, const gs_op *op, const gs_hw *hw, const an_graph *g,
                               const an_result *r, const gs_result *res, const an_cmp *c) {
    json_t *root = json_pack("{s:s, s:s, s:s, s:I, s:i, s:f}", "op", op->spec, "hw", hw->name, "policy",
                             gs_policy_name(o->pol), "seed", (json_int_t)o->seed, "cache_step", (int)o->step,
                             "cache_multiplier", gs_cache_multiplier((int)o->step));
    json_t *gj = json_pack("{s:i, s:I, s:i, s:i, s:b, s:I}", "states", g->n, "edges", (json_int_t)g->ne, "terminal",
                           r->terminals, "cap", (int)o->cap, "capped", g->capped, "edges_dropped", (json_int_t)g->dropped);
    json_object_set_new(root, "graph", gj);
    json_object_set_new(root, "start", state_json(op, &g->st[0], NAN));
    json_t *tr = json_array();
    for (int32_t k = 0; k < g->ecnt[0]; k++) json_array_append_new(tr, edge_json(op, g, &g->edges[g->eoff[0] + k]));
    json_object_set_new(root, "start_transitions", tr);
    json_object_set_new(root, "value_iteration",
                        json_pack("{s:i, s:b, s:f, s:f, s:s}", "iterations", r->iterations, "converged", r->converged,
                                  "last_max_abs_delta", r->last_delta, "v_start", c->vstart, "criterion",
                                  "max relative change <= 1e-12"));
    json_object_set_new(root, "expected_payoff",
                        json_pack("{s:i, s:b, s:f}", "iterations", r->e_iterations, "converged", r->e_converged,
                                  "e_start", gsl_vector_get(r->E, 0)));
    json_object_set_new(root, "best_terminal", state_json(op, &g->st[r->best_term], r->t_best));
    /* the greedy path, edge by edge */
    json_t *gr = json_object();
    json_object_set_new(gr, "steps", json_integer(r->path_len));
    json_object_set_new(gr, "reached_terminal", json_boolean(c->gt >= 0));
    json_t *path = json_array();
    for (int32_t k = 0; k < r->path_len; k++) json_array_append_new(path, edge_json(op, g, &g->edges[r->path_edge[k]]));
    json_object_set_new(gr, "path", path);
    json_object_set_new(gr, "terminal", state_json(op, &g->st[r->path[r->path_len]], c->t_greedy));
    if (c->gt >= 0) json_object_set_new(gr, "payoff", json_real(r->t_best / c->t_greedy));
    json_object_set_new(root, "greedy", gr);
    json_t *cj = state_json(op, &res->cand[0], c->t_con);
    json_object_set_new(cj, "strategy", json_string("markov"));
    json_object_set_new(cj, "in_graph", json_boolean(c->c_idx >= 0));
    json_object_set_new(root, "construct", cj);
    json_object_set_new(root, "agree", json_boolean(c->agree));
    json_object_set_new(root, "same_predicted_time", json_boolean(c->same_time));
    return gs_cli_put_json(root, JSON_INDENT(2) | JSON_REAL_PRECISION(17));
}

static void analyze_print_text(const an_opts *o, const gs_op *op, const gs_hw *hw, const an_graph *g,
                               const an_result *r, const gs_result *res, const an_cmp *c) {
    char d[200];
    gs_cli_print_op_hw(op, hw);
    printf("analyze   policy %s; cache weight taken at walk step t=%ld (multiplier %.4f)\n", gs_policy_name(o->pol),
           o->step, gs_cache_multiplier((int)o->step));
    printf("graph     %d states, %lld edges, %d terminal (level 0)\n", g->n, (long long)g->ne, r->terminals);
    if (g->capped)
        printf("note      exploration hit the cap of %ld states; %lld edges lead past it and count as value 0\n", o->cap,
               (long long)g->dropped);
    /* the transitions out of the start state */
    gs_etir_format(op, &g->st[0], d, sizeof d);
    printf("start     %s (level %d): %d transitions\n", d, g->st[0].level, g->ecnt[0]);
    printf("  %-10s %-5s %5s %12s %12s  %s\n", "action", "axis", "value", "benefit", "probability", "target");
    for (int32_t k = 0; k < g->ecnt[0]; k++) {
        const an_edge *e = &g->edges[g->eoff[0] + k];
        char td[200] = "(past the cap)", tl[16] = "";
        if (e->to >= 0) {
            gs_etir_format(op, &g->st[e->to], td, sizeof td);
            snprintf(tl, sizeof tl, " (level %d)", g->st[e->to].level);
        }
        char val[16] = "-";
        if (e->act.kind == GS_ACT_VTHREAD) snprintf(val, sizeof val, "%d", e->act.value);
        printf("  %-10s %-5s %5s %12.5g %12.6f  %s%s\n", act_name(e->act.kind),
               e->act.axis >= 0 ? op->axes[e->act.axis].name : "-", val, e->benefit, e->prob, td, tl);
    }
    /* the values, then the best, greedy and constructed states */
    printf("values    %d iterations (%s; last max |dV| %.3g), V(start) = %.6g\n", r->iterations,
           r->converged ? "converged: max relative change <= 1e-12" : "NOT converged within 10000", r->last_delta,
           c->vstart);
    printf("expected  E(start) = %.6g: mean payoff where a chain rolling pi(a|i) at every state ends (%d sweeps%s)\n",
           gsl_vector_get(r->E, 0), r->e_iterations, r->e_converged ? "" : ", NOT converged");
    gs_etir_format(op, &g->st[r->best_term], d, sizeof d);
    printf("best      %-44s predicted %10.4f ms (best terminal in the graph, payoff 1)\n", d, r->t_best * 1e3);
    gs_etir_format(op, &g->st[r->path[r->path_len]], d, sizeof d);
    if (c->gt >= 0)
        printf("greedy    %-44s predicted %10.4f ms (payoff %.4f, %d steps)\n", d, c->t_greedy * 1e3,
               r->t_best / c->t_greedy, r->path_len);
    else printf("greedy    stopped at %s after %d steps: no terminal state reachable\n", d, r->path_len);
    printf("construct %-44s predicted %10.4f ms (markov, policy %s, seed %llu%s)\n", res->desc[0], c->t_con * 1e3,
           gs_policy_name(o->pol), (unsigned long long)o->seed, c->c_idx >= 0 ? "" : "; state not in the explored graph");
    printf("agree     %s\n", c->agree       ? "yes: the greedy policy's terminal state is gs_construct's pick"
                             : c->same_time ? "same predicted time, different states"
                                            : "no");
}

/* The analysis: the graph explored from the start state, its values, the
 * expected payoff and the greedy path (into *g and *r), then what the walk
 * picks with the same seed and policy (*res). */
static gs_status an_analyze(gs_ctx *ctx, const an_opts *o, const gs_op *op, const gs_hw *hw, an_graph *g, an_result *r,
                            gs_result **res) {
    if (!an_init(g, op, (int32_t)o->cap)) return gs_err(ctx, GS_ERR_NOMEM, "out of memory for %ld states", o->cap);
    if (!an_explore(g, hw, o->pol, (int)o->step)) return gs_err(ctx, GS_ERR_NOMEM, "out of memory for the edges");
    if (!an_values(g, r)) return gs_err(ctx, GS_ERR_NOMEM, "out of memory for the values");
    if (r->best_term < 0)
        return gs_err(ctx, GS_ERR_NO_CANDIDATE, "no terminal state of %s on %s within %d explored states", op->spec,
                      hw->name, g->n);
    if (!an_expect(g, r)) return gs_err(ctx, GS_ERR_NOMEM, "out of memory for the values");
    if (!an_greedy(g, r)) return gs_err(ctx, GS_ERR_NOMEM, "out of memory for the greedy path");
    gs_construct_opts co;
    gs_construct_opts_default(&co);
    co.seed = o->seed;
    co.policy = o->pol;
    co.conv_form = GS_FORM_DIRECT; /* compared state by state with the greedy path on op */
    return gs_construct(ctx, op, hw, &co, res);
}

/* Analyse the operator on the profile, then compare and print. */
static int analyze_run(gs_ctx *ctx, const void *opts) {
    const an_opts *o = opts;
    an_graph g;
    an_result r;
    memset(&g, 0, sizeof g);
    memset(&r, 0, sizeof r);
    gs_op *op = NULL;
    gs_hw *hw = NULL;
    gs_result *res = NULL;
    gs_status s = gs_cli_load(ctx, o->spec, o->hwname, &op, &hw);
    if (s == GS_OK) s = an_analyze(ctx, o, op, hw, &g, &r, &res);
    int rc = 0;
    if (s != GS_OK) {
        rc = gs_cli_fail(ctx, s);
    } else {
        an_cmp c = an_compare(&g, &r, res);
        if (!strcmp(o->format, "json")) rc = analyze_print_json(o, op, hw, &g, &r, res, &c) ? 0 : 1;
        else analyze_print_text(o, op, hw, &g, &r, res, &c);
    }
    if (r.V) gsl_vector_free(r.V);
    if (r.E) gsl_vector_free(r.E);
    free(r.path);
    free(r.path_edge);
    an_free(&g);
    gs_result_destroy(res);
    gs_hw_destroy(hw);
    gs_op_destroy(op);
    return rc;
}

const gs_cli_sub gs_cli_analyze = {"analyze", sizeof(an_opts), analyze_parse_opts, analyze_run};
