/* result.c — what a construction hands back (the public gs_result API of
 * include/gensor.h): the ranked candidates and their config text, plan and
 * launch; a one-candidate result from a configuration string; and the names
 * of the policies and strategies. */
#include "construct/construct.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- names ------------------------------------------------------------------ */
static const char *const policy_names[] = {
    [GS_POLICY_PAPER] = "paper", [GS_POLICY_BALANCED] = "balanced", [GS_POLICY_MODEL] = "model"};
static const char *const strategy_names[] = {[GS_STRATEGY_MARKOV] = "markov", [GS_STRATEGY_TREE] = "tree",
                                             [GS_STRATEGY_EXHAUSTIVE] = "exhaustive",
                                             [GS_STRATEGY_RANDOM] = "random"};
#define N_POLICIES (int)(sizeof policy_names / sizeof policy_names[0])
#define N_STRATEGIES (int)(sizeof strategy_names / sizeof strategy_names[0])
_Static_assert(sizeof policy_names / sizeof policy_names[0] == GS_POLICY_MODEL + 1, "a name per policy");
_Static_assert(sizeof strategy_names / sizeof strategy_names[0] == GS_STRATEGY_RANDOM + 1, "a name per strategy");

const char *gs_policy_name(gs_policy p) { return (int)p >= 0 && (int)p < N_POLICIES ? policy_names[p] : "?"; }
const char *gs_strategy_name(gs_strategy s) {
    return (int)s >= 0 && (int)s < N_STRATEGIES ? strategy_names[s] : "?";
}

/* Index of name in names[n], or -1. (The messages below list the names in
 * the CLI's help order.) */
static int name_index(const char *const *names, int n, const char *name) {
    for (int i = 0; name && i < n; i++)
        if (!strcmp(names[i], name)) return i;
    return -1;
}

bool gs_policy_from_name(const char *name, gs_policy *out) {
    int i = name_index(policy_names, N_POLICIES, name);
    if (i >= 0) *out = (gs_policy)i;
    return i >= 0;
}

bool gs_strategy_from_name(const char *name, gs_strategy *out) {
    int i = name_index(strategy_names, N_STRATEGIES, name);
    if (i >= 0) *out = (gs_strategy)i;
    return i >= 0;
}

gs_status gs_policy_parse(gs_ctx *ctx, const char *name, gs_policy *out) {
    int i = name_index(policy_names, N_POLICIES, name);
    if (i < 0 || !out)
        return gs_err(ctx, GS_ERR_INVALID_ARG, "unknown policy '%s' (paper, balanced, model)", name ? name : "");
    *out = (gs_policy)i;
    return GS_OK;
}

gs_status gs_strategy_parse(gs_ctx *ctx, const char *name, gs_strategy *out) {
    int i = name_index(strategy_names, N_STRATEGIES, name);
    if (i < 0 || !out)
        return gs_err(ctx, GS_ERR_INVALID_ARG, "unknown strategy '%s' (markov, tree, exhaustive, random)",
                      name ? name : "");
    *out = (gs_strategy)i;
    return GS_OK;
}

/* ---- a result from a configuration ---------------------------------------------- */
gs_status gs_config_fits(gs_ctx *ctx, const gs_hw *hw, const gs_op *op, const gs_etir *e, const char *cfg) {
    const char *why = gs_hw_check_why(hw, op, e);
    if (!why) return GS_OK;
    /* The check tests the row's arch right after the state's form, so a
     * well-formed state whose row the arch lacks fails on that rule: beside
     * the check's words, the row and the arch it needs (a type's, not only a
     * shape's: m16n8k8 takes f16 on sm_75, bf16 from sm_80). */
    const gs_mma_row *r = NULL;
    if (e->mma && gs_etir_wellformed(op, e) && !gs_mma_arch_ok(e->mma, hw->sm)) r = gs_mma_get(e->mma);
    if (r) {
        char upto[32] = "";
        if (r->max_arch) snprintf(upto, sizeof upto, " up to sm_%d", r->max_arch);
        return gs_err(ctx, GS_ERR_INVALID_ARG,
                      "config %s is rejected on %s: %s (mma=%d, %s, needs sm_%d%s; %s is sm_%d)", cfg, hw->name, why,
                      e->mma, r->name, r->min_arch, upto, hw->name, hw->sm);
    }
    return gs_err(ctx, GS_ERR_INVALID_ARG, "config %s is rejected on %s: %s", cfg, hw->name, why);
}

gs_status gs_construct_config(gs_ctx *ctx, const gs_op *op, const gs_hw *hw, const char *cfg, gs_result **out) {
    if (!out) return gs_err(ctx, GS_ERR_INVALID_ARG, "gs_construct_config: out is NULL");
    *out = NULL;
    if (!op || !hw || !cfg) return gs_err(ctx, GS_ERR_INVALID_ARG, "gs_construct_config: NULL argument");
    gs_status s = gs_op_validate(ctx, op);
    if (s == GS_OK) s = gs_hw_validate(ctx, hw);
    if (s != GS_OK) return s;
    gs_result *r = calloc(1, sizeof *r);
    if (!r) return gs_err(ctx, GS_ERR_NOMEM, "out of memory");
    s = gs_etir_parse_config(ctx, op, cfg, &r->cand[0]);
    if (s == GS_OK) s = gs_config_fits(ctx, hw, op, &r->cand[0], cfg);
    if (s != GS_OK) {
        free(r);
        return s;
    }
    r->op = *op;
    r->hw = *hw;
    gs_construct_opts_default(&r->opts);
    r->opts.top_k = 1;
    r->n = 1;
    gs_estimate_etir(hw, op, &r->cand[0], 0, &r->est[0]);
    gs_etir_format(op, &r->cand[0], r->desc[0], sizeof r->desc[0]);
    *out = r;
    return GS_OK;
}

/* ---- reading a result ------------------------------------------------------------- */
void gs_result_destroy(gs_result *r) { free(r); }
int gs_result_count(const gs_result *r) { return r ? r->n : 0; }
double gs_result_predicted_s(const gs_result *r, int i) { return r && i >= 0 && i < r->n ? r->est[i].time_s : -1; }
double gs_result_construct_s(const gs_result *r) { return r ? r->construct_s : -1; }
const char *gs_result_form(const gs_result *r) { return r ? r->op.spec : ""; }
const char *gs_result_describe(const gs_result *r, int i) { return r && i >= 0 && i < r->n ? r->desc[i] : ""; }

static gs_status check_index(gs_ctx *ctx, const gs_result *r, int i, const char *who) {
    if (!r) return gs_err(ctx, GS_ERR_INVALID_ARG, "%s: NULL result", who);
    if (i < 0 || i >= r->n)
        return gs_err(ctx, GS_ERR_INVALID_ARG, "%s: candidate %d out of range (the result holds %d)", who, i, r->n);
    return GS_OK;
}

/* text into buf[n]; "" and GS_ERR_INVALID_ARG when it does not fit. */
static gs_status copy_text(const char *text, char *buf, size_t n) {
    if (!buf || strlen(text) >= n) {
        if (buf && n) buf[0] = '\0';
        return GS_ERR_INVALID_ARG;
    }
    memcpy(buf, text, strlen(text) + 1);
    return GS_OK;
}

gs_status gs_result_config(const gs_result *r, int i, char *buf, size_t n) {
    gs_status s = check_index(NULL, r, i, "gs_result_config");
    if (s != GS_OK) {
        copy_text("", buf, n);
        return s;
    }
    char cfg[512];
    gs_etir_format_config(&r->op, &r->cand[i], cfg, sizeof cfg);
    return copy_text(cfg, buf, n);
}

gs_status gs_result_plan(const gs_result *r, int i, char *buf, size_t n) {
    gs_status s = check_index(NULL, r, i, "gs_result_plan");
    if (s != GS_OK) {
        copy_text("", buf, n);
        return s;
    }
    gs_plan p;
    gs_plan_make(&r->hw, &r->op, &r->cand[i], NULL, &p);
    char text[512];
    gs_plan_format(&r->op, &p, text, sizeof text);
    return copy_text(text, buf, n);
}

gs_status gs_result_launch(const gs_result *r, int i, int64_t *grid, int64_t *block, int64_t *smem_bytes) {
    gs_status s = check_index(NULL, r, i, "gs_result_launch");
    gs_plan p;
    memset(&p, 0, sizeof p);
    /* what the kernel's launch line says: the plan's threads and shared memory */
    if (s == GS_OK) gs_plan_make(&r->hw, &r->op, &r->cand[i], NULL, &p);
    if (grid) *grid = s == GS_OK ? gs_etir_blocks(&r->op, &r->cand[i]) : 0;
    if (block) *block = p.threads;
    if (smem_bytes) *smem_bytes = p.smem_bytes;
    return s;
}

gs_status gs_result_launch_args(const gs_result *r, int i, gs_launch_arg *args, int cap, int *n) {
    if (n) *n = 0;
    gs_status s = check_index(NULL, r, i, "gs_result_launch_args");
    if (s != GS_OK) return s;
    if (!args || !n || cap < 0) return GS_ERR_INVALID_ARG;
    gs_plan p;
    gs_plan_make(&r->hw, &r->op, &r->cand[i], NULL, &p);
    int k = gs_plan_launch_args(&r->op, &r->cand[i], &p, args, cap);
    if (k < 0) return GS_ERR_INVALID_ARG;
    *n = k;
    return GS_OK;
}
