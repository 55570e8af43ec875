/* opts.c — option parsing and output helpers the subcommands share: integer,
 * policy, strategy and format values, getopt's errors, the operand, the
 * op/hw header lines, JSON printing, echoing user strings and stdout's
 * write errors. */
#include "cli/cli.h"

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

bool gs_cli_parse_long(const char *s, long lo, long hi, long *out) {
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (!*s || *end || errno || v < lo || v > hi) return false;
    *out = v;
    return true;
}

bool gs_cli_parse_double(const char *s, double lo, double hi, double *out) {
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (!*s || *end || errno || !(v >= lo && v <= hi)) return false;
    *out = v;
    return true;
}

int gs_cli_int_opt(const char *cmd, const char *name, const char *s, long lo, long hi, long *out) {
    if (gs_cli_parse_long(s, lo, hi, out)) return 0;
    char msg[160];
    snprintf(msg, sizeof msg, "--%s expects an integer in [%ld, %ld], got '%%s'", name, lo, hi);
    return gs_cli_usage_error(cmd, msg, s);
}

int gs_cli_policy_opt(const char *cmd, const char *arg, gs_policy *out) {
    if (gs_policy_from_name(arg, out)) return 0;
    return gs_cli_usage_error(cmd, "unknown policy '%s' (paper, balanced, model)", arg);
}

int gs_cli_strategy_opt(const char *cmd, const char *arg, gs_strategy *out) {
    if (gs_strategy_from_name(arg, out)) return 0;
    return gs_cli_usage_error(cmd, "unknown strategy '%s' (markov, tree, exhaustive, random)", arg);
}

int gs_cli_format_opt(const char *cmd, const char *arg, bool csv, const char **out) {
    if (!strcmp(arg, "text") || !strcmp(arg, "json") || (csv && !strcmp(arg, "csv"))) {
        *out = arg;
        return 0;
    }
    return gs_cli_usage_error(cmd, csv ? "unknown --format '%s' (text, csv, json)" : "unknown --format '%s' (text, json)",
                              arg);
}

int gs_cli_plan_opt(const char *cmd, const char *arg, gs_cli_plan *out) {
    static const struct {
        const char *name;
        gs_knob_id k[5];
        uint8_t v[5];
        int n;
    } items[] = {
        {"scalar", {GS_KNOB_SCALAR}, {1}, 1},
        {"predicated", {GS_KNOB_PREDICATED}, {1}, 1},
        {"noasync", {GS_KNOB_NO_ASYNC}, {1}, 1},
        {"lb1", {GS_KNOB_LB1}, {1}, 1},
        {"im2col", {GS_KNOB_IM2COL}, {GS_IM2COL_FORCE}, 1},
        {"box", {GS_KNOB_IM2COL}, {GS_IM2COL_OFF}, 1},
        {"v1",
         {GS_KNOB_SCALAR, GS_KNOB_PREDICATED, GS_KNOB_NO_ASYNC, GS_KNOB_LB1, GS_KNOB_IM2COL},
         {1, 1, 1, 1, GS_IM2COL_OFF},
         5},
    };
    const char *p = arg;
    do {
        size_t len = strcspn(p, ",");
        size_t i = 0;
        for (; i < sizeof items / sizeof items[0]; i++)
            if (strlen(items[i].name) == len && !strncmp(items[i].name, p, len)) break;
        if (i == sizeof items / sizeof items[0])
            return gs_cli_usage_error(cmd,
                                      "bad --plan-opts '%s' (a comma list of scalar, predicated, noasync, lb1, "
                                      "im2col, box, v1)",
                                      arg);
        for (int j = 0; j < items[i].n; j++) {
            gs_knob_id k = items[i].k[j];
            if (out->given[k] && out->set[k] != items[i].v[j])
                return gs_cli_usage_error(cmd, "--plan-opts: im2col and box exclude each other (got '%s')", arg);
            out->given[k] = true;
            out->set[k] = items[i].v[j];
        }
        out->any = true;
        p += len;
    } while (*p++ == ',');
    return 0;
}

void gs_cli_plan_apply(const gs_cli_plan *p, gs_etir *e) {
    for (int k = 0; k < GS_KNOB_COUNT; k++)
        if (p->given[k]) gs_knob_set(e, (gs_knob_id)k, p->set[k]);
}

/* Does ARG (an element of argv) spell a long option of LO whose code is CODE
 * (any long option when CODE is 0)? glibc takes unambiguous prefixes. */
static bool names_long(const struct option *lo, const char *arg, int code) {
    if (strncmp(arg, "--", 2)) return false;
    size_t n = strcspn(arg + 2, "=");
    for (; lo->name; lo++)
        if (n && !strncmp(lo->name, arg + 2, n) && (!code || lo->val == code)) return true;
    return !code;
}

int gs_cli_getopt_error(const char *cmd, int c, char **argv, const struct option *lo, const char *unknown_fmt) {
    /* A refused short option: in a cluster (-xy) optind still points at the
     * cluster, so argv[optind-1] is the previous argument; name optopt. A
     * long option (unknown: optopt 0; or given a value it does not take:
     * optopt its code) is argv[optind-1] itself. */
    char shortopt[3] = {'-', (char)optopt, 0};
    const char *arg = argv[optind - 1];
    if (c != ':' && optopt > 0 && optopt < 128 && !names_long(lo, arg, optopt)) arg = shortopt;
    if (c == ':') return gs_cli_usage_error(cmd, "option '%s' needs a value", arg);
    return gs_cli_usage_error(cmd, unknown_fmt ? unknown_fmt : "unknown option '%s'", arg);
}

int gs_cli_getopt(const gs_cli_cmd *cmd, int argc, char **argv, gs_cli_opt_fn one, void *opts) {
    optind = 1; /* a fresh scan: the tests parse several command lines in one process */
    opterr = 0; /* the messages are ours (gs_cli_getopt_error) */
    int c, rc;
    /* leading ':' makes a missing value ':' (not '?', "unknown option") */
    while ((c = getopt_long(argc, argv, ":h", cmd->lo, NULL)) != -1) {
        if (c == 'h') {
            fputs(cmd->help, stdout);
            return 0;
        }
        if (c == ':' || c == '?') return gs_cli_getopt_error(cmd->name, c, argv, cmd->lo, cmd->unknown_fmt);
        if ((rc = one(c, opts)) >= 0) return rc;
    }
    return -1;
}

int gs_cli_operand(const gs_cli_cmd *cmd, int argc, char **argv, const char **out) {
    if (optind >= argc) return gs_cli_usage_error(cmd->name, cmd->missing ? cmd->missing : "missing the operator SPEC%s", "");
    if (optind + 1 < argc)
        return gs_cli_usage_error(cmd->name, cmd->extra ? cmd->extra : "unexpected argument '%s' (quote the SPEC)",
                                  argv[optind + 1]);
    *out = argv[optind];
    return -1;
}

int gs_cli_main(const gs_cli_sub *sub, int argc, char **argv) {
    void *opts = calloc(1, sub->opts_size);
    if (!opts) return 1;
    int rc = sub->parse(argc, argv, opts);
    if (rc < 0) {
        gs_ctx *ctx = gs_ctx_create();
        rc = ctx ? sub->run(ctx, opts) : 1;
        gs_ctx_destroy(ctx);
    }
    free(opts);
    return rc;
}

gs_status gs_cli_load(gs_ctx *ctx, const char *spec, const char *hw, gs_op **op, gs_hw **hwp) {
    gs_status s = gs_op_parse(ctx, spec, op);
    return s == GS_OK ? gs_hw_load(ctx, hw, hwp) : s;
}

void gs_cli_print_op_hw(const gs_op *op, const gs_hw *hw) {
    printf("op        %s\n", op->spec);
    printf("hw        %s (sm_%d, %d SMs, %.1f TFLOP/s fp32, %.0f GB/s)\n", hw->name, hw->sm, hw->num_sms,
           gs_hw_peak_flops(hw) / 1e12, hw->dram_gbs);
}

bool gs_cli_put_json(json_t *root, size_t flags) {
    char *txt = root ? json_dumps(root, flags) : NULL;
    if (txt) puts(txt);
    else fprintf(stderr, "gensor: error: cannot encode the report as JSON (a value is not finite?)\n");
    free(txt);
    json_decref(root);
    return txt != NULL;
}

bool gs_cli_budget_hit(const gs_construct_opts *co, const gs_result *r) {
    return co->max_ms > 0 && r->capped && r->construct_s * 1e3 >= co->max_ms;
}

gs_status gs_cli_cache_open(gs_ctx *ctx, const char *dir, gs_kcache **out) {
    *out = NULL;
    if (!dir) dir = getenv("GS_CACHE_DIR");
    if (!dir || !*dir) return GS_OK; /* no cache: every compile runs, as before */
    return gs_kcache_open(ctx, dir, out);
}

void gs_cli_cache_close(gs_kcache *c) {
    if (!c) return;
    gs_kcache_stats st;
    gs_kcache_stats_get(c, &st);
    if (st.hits + st.misses > 0) {
        char line[4352];
        snprintf(line, sizeof line,
                 "kernel cache %s: %lld hits (%lld from disk), %lld compiled, %lld corrupt entries rebuilt, %lld "
                 "write errors",
                 gs_kcache_dir(c), (long long)st.hits, (long long)st.disk_hits, (long long)st.misses,
                 (long long)st.corrupt, (long long)st.write_errors);
        gs_cli_error_line("gensor: note: ", line);
    }
    gs_kcache_close(c);
}
